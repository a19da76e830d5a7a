//! `vectors/rules.tsv` maps rule keys to the tests that exercise them. Every listed test must
//! exist as a `fn` in the workspace's Rust sources, and every key must be one of the manual's.

use nervix_conformance::workspace_root;
use std::collections::BTreeSet;
use std::path::Path;

fn rust_sources(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_sources(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
}

fn defined_fns() -> BTreeSet<String> {
    let mut sources = Vec::new();
    for dir in ["protocol", "drivers", "tests", "fuzz"] {
        rust_sources(&workspace_root().join(dir), &mut sources);
    }
    let mut names = BTreeSet::new();
    for src in &sources {
        for (i, _) in src.match_indices("fn ") {
            let rest = &src[i + 3..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

fn manual_keys() -> BTreeSet<String> {
    let text = std::fs::read_to_string(workspace_root().join("vectors/rule-keys.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn rules_tsv_lists_only_existing_tests_for_known_keys() {
    let tsv = std::fs::read_to_string(workspace_root().join("vectors/rules.tsv")).unwrap();
    let fns = defined_fns();
    let keys = manual_keys();
    let mut missing = Vec::new();
    let mut listed = 0;
    for line in tsv
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut cols = line.split('\t');
        let key = cols.next().unwrap_or_default();
        assert!(
            keys.contains(key),
            "rules.tsv names {key:?}, which is not a rule key"
        );
        let tests: Vec<&str> = cols.flat_map(|c| c.split(',')).map(str::trim).collect();
        assert!(
            !tests.is_empty() && tests.iter().all(|t| !t.is_empty()),
            "{key} lists no test"
        );
        for t in tests {
            listed += 1;
            if !fns.contains(t) {
                missing.push(format!("{key}: {t}"));
            }
        }
    }
    assert!(listed > 0, "rules.tsv lists no tests");
    assert!(
        missing.is_empty(),
        "rules.tsv lists tests that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn rules_tsv_check_notices_a_missing_test() {
    let fns = defined_fns();
    assert!(fns.contains("rules_tsv_lists_only_existing_tests_for_known_keys"));
    assert!(!fns.contains("f_0_a_test_nobody_wrote"));
}
