//! The rule ledger: `vectors/rules.tsv` maps rule keys to the tests that exercise them.
//!
//! * Every key of a section this crate implements is listed, with at least one test.
//! * Every listed key is one of an engine's: the Nervix manual's (`vectors/rule-keys.tsv`), the
//!   store-and-forward journal's (`vectors/sf-rule-keys.tsv`), CultNet write receipts'
//!   (`vectors/cultnet-receipt-rule-keys.tsv`) or GAR's (`vectors/gar-rule-keys.tsv`), each a copy
//!   of the spec's rules file. An engine whose issue is done has every key listed; one still being
//!   built has only the keys it already implements listed, each with real tests.
//! * Every listed test is a real test function: a `fn` under `#[test]`, or a `fn` inside a
//!   `proptest!` block. Any other `fn` of the same name does not count, nor does an attribute
//!   or a block inside a comment or a string literal.
//! * When the spec's rules files are beside the checkout, each copy in `vectors/` equals its file.

use nervix_conformance::workspace_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The spec sections whose rules are implemented, so every one of their keys must be listed.
const IMPLEMENTED_SECTIONS: &[&str] = &[
    "frames",
    "requests",
    "choices",
    "routing",
    "commands",
    "redirect",
    "transactions",
    "subscriptions",
    "rows",
    "clocks",
    "producers",
    "emitters",
    "uploads",
    "restores",
    "backups",
    "transports",
];

/// How much of an engine's rules the ledger must cover.
#[derive(Clone, Copy)]
enum Cover {
    /// Every key of these sections (the Nervix manual's `section` column).
    Sections(&'static [&'static str]),
    /// Only the keys listed so far: the engine is still being built.
    Listed,
}

/// One engine's rules: the copy in `vectors/`, the spec file it copies, and the column holding
/// each key's section.
struct Engine {
    copy: &'static str,
    spec: &'static str,
    section_column: usize,
    cover: Cover,
}

const ENGINES: &[Engine] = &[
    Engine {
        copy: "rule-keys.tsv",
        spec: "nervix-rules.tsv",
        section_column: 2,
        cover: Cover::Sections(IMPLEMENTED_SECTIONS),
    },
    Engine {
        copy: "sf-rule-keys.tsv",
        spec: "sf-rules.tsv",
        section_column: 1,
        cover: Cover::Listed,
    },
    Engine {
        copy: "cultnet-receipt-rule-keys.tsv",
        spec: "cultnet-receipt-rules.tsv",
        section_column: 1,
        cover: Cover::Listed,
    },
    Engine {
        copy: "gar-rule-keys.tsv",
        spec: "gar-rules.tsv",
        section_column: 1,
        cover: Cover::Listed,
    },
];

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

fn ident_at(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Skips whitespace, line comments and attributes (`#[...]`, brackets balanced).
fn skip_trivia(mut s: &str) -> &str {
    loop {
        let t = s.trim_start();
        if t.starts_with("//") {
            s = t.find('\n').map_or("", |i| &t[i + 1..]);
        } else if t.starts_with("#[") {
            let mut depth = 0usize;
            let mut end = t.len();
            for (i, c) in t.char_indices().skip(1) {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            s = &t[end..];
        } else {
            return t;
        }
    }
}

/// The name of the function declared at the start of `s` (after trivia), if one is.
fn fn_name(s: &str) -> Option<String> {
    let s = skip_trivia(s);
    let s = s.strip_prefix("pub ").unwrap_or(s).trim_start();
    let s = s.strip_prefix("async ").unwrap_or(s).trim_start();
    let name = ident_at(s.strip_prefix("fn ")?.trim_start());
    (!name.is_empty()).then_some(name)
}

/// The body of the brace block that opens at or after the start of `s`.
fn block(s: &str) -> &str {
    let Some(open) = s.find('{') else { return "" };
    let mut depth = 0usize;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &s[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    &s[open + 1..]
}

/// `src` with every comment (line and block, nested) and every string and character literal
/// (raw and byte forms included) blanked to spaces, newlines kept, so that only code is left
/// to scan. Lifetimes stay code.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut j, mut depth) = (i + 2, 1usize);
                while j < b.len() && depth > 0 {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'"' => {
                // A raw string when `r`, after any `#`s, starts a token (`br` included).
                let hashes = b[..i].iter().rev().take_while(|&&c| c == b'#').count();
                let r = i.checked_sub(hashes + 1);
                let raw = r.is_some_and(|r| {
                    b[r] == b'r'
                        && match r.checked_sub(1).map(|p| b[p]) {
                            None => true,
                            Some(b'b') => r < 2 || !ident(b[r - 2]),
                            Some(c) => !ident(c),
                        }
                });
                let mut j = i + 1;
                if raw {
                    let mut close = vec![b'"'];
                    close.resize(hashes + 1, b'#');
                    j = b[j..]
                        .windows(close.len())
                        .position(|w| w == close.as_slice())
                        .map_or(b.len(), |n| j + n + close.len());
                } else {
                    while j < b.len() && b[j] != b'"' {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    j = (j + 1).min(b.len());
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'\'' => {
                // A character literal: an escape, or one character, then a quote. Anything
                // else is a lifetime or a label.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[(i + 3).min(b.len())..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|n| i + 3 + n + 1)
                } else {
                    let width = src[i + 1..].chars().next().map_or(0, char::len_utf8);
                    (width > 0 && b.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
                };
                match end {
                    Some(end) => {
                        blank(&mut out, i, end);
                        i = end;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| unreachable!("only whole characters are blanked"))
}

/// The test functions `src` declares: each `fn` under `#[test]`, and each `fn` inside a
/// `proptest!` block. Comments and literals declare nothing.
fn test_fns(src: &str) -> BTreeSet<String> {
    let src = &code_only(src);
    let mut names = BTreeSet::new();
    for (i, _) in src.match_indices("#[test]") {
        if let Some(name) = fn_name(&src[i + "#[test]".len()..]) {
            names.insert(name);
        }
    }
    // An async test under `#[tokio::test]` or `#[tokio::test(...)]`: its attribute is skipped
    // as trivia from its `#`.
    for (i, _) in src.match_indices("#[tokio::test") {
        if let Some(name) = fn_name(&src[i..]) {
            names.insert(name);
        }
    }
    for (i, _) in src.match_indices("proptest! {") {
        let body = block(&src[i..]);
        for (j, _) in body.match_indices("fn ") {
            let boundary =
                j == 0 || !body[..j].ends_with(|c: char| c.is_alphanumeric() || c == '_');
            if boundary {
                let name = ident_at(&body[j + 3..]);
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        }
    }
    names
}

fn workspace_tests() -> BTreeSet<String> {
    let mut sources = Vec::new();
    for dir in ["protocol", "drivers", "tests", "fuzz"] {
        rust_sources(&workspace_root().join(dir), &mut sources);
    }
    sources.iter().flat_map(|s| test_fns(s)).collect()
}

/// Key to section, from a rules file in the spec's format (the key first, the section in
/// column `section_column`).
fn key_sections(text: &str, section_column: usize) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert!(
                cols.len() > section_column,
                "a rules line without a section: {l:?}"
            );
            (
                cols[0].trim().to_string(),
                cols[section_column].trim().to_string(),
            )
        })
        .collect()
}

fn spec_copy(engine: &Engine) -> BTreeMap<String, String> {
    let path = workspace_root().join("vectors").join(engine.copy);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    key_sections(&text, engine.section_column)
}

/// How a key that no test of this workspace can reach is listed: this, then why.
const UNTESTABLE: &str = "untestable:";

/// Key to the tests `rules.tsv` lists for it.
fn ledger(tsv: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for line in tsv
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut cols = line.split('\t');
        let key = cols.next().unwrap_or_default().trim().to_string();
        let rest: Vec<&str> = cols.collect();
        // A key no test here can reach is listed with its reason instead of tests.
        let tests: Vec<String> = match rest.first() {
            Some(first) if first.trim_start().starts_with(UNTESTABLE) => {
                vec![rest.join("\t").trim().to_string()]
            }
            _ => rest
                .iter()
                .flat_map(|c| c.split(','))
                .map(|t| t.trim().to_string())
                .collect(),
        };
        assert!(
            out.insert(key.clone(), tests).is_none(),
            "rules.tsv lists {key} twice"
        );
    }
    out
}

/// Every problem of `ledger` against the engines' keys (each with what must be covered) and
/// the tests that exist.
fn ledger_problems(
    ledger: &BTreeMap<String, Vec<String>>,
    engines: &[(BTreeMap<String, String>, Cover)],
    tests: &BTreeSet<String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut keys = BTreeMap::new();
    for (engine_keys, cover) in engines {
        for (key, section) in engine_keys {
            let required = match cover {
                Cover::Sections(sections) => sections.contains(&section.as_str()),
                Cover::Listed => false,
            };
            if required && !ledger.contains_key(key) {
                problems.push(format!(
                    "{key} ({section}) is implemented but lists no test"
                ));
            }
            if keys.insert(key.clone(), section.clone()).is_some() {
                problems.push(format!("{key} is a key of two engines"));
            }
        }
    }
    for (key, listed) in ledger {
        if !keys.contains_key(key) {
            problems.push(format!("{key} is not a rule key of any engine"));
        }
        if let [only] = listed.as_slice() {
            if let Some(why) = only.strip_prefix(UNTESTABLE) {
                // The reason must say something.
                if why.split_whitespace().count() < 4 {
                    problems.push(format!("{key} is untestable without a reason"));
                }
                continue;
            }
        }
        if listed.is_empty() || listed.iter().any(|t| t.is_empty()) {
            problems.push(format!("{key} has an empty test name"));
        }
        for t in listed.iter().filter(|t| !t.is_empty()) {
            if !tests.contains(t) {
                problems.push(format!("{key}: {t} is not a test function"));
            }
        }
    }
    problems
}

#[test]
fn rules_tsv_lists_every_implemented_key_with_real_tests() {
    let tsv = std::fs::read_to_string(workspace_root().join("vectors/rules.tsv")).unwrap();
    let ledger = ledger(&tsv);
    let engines: Vec<_> = ENGINES.iter().map(|e| (spec_copy(e), e.cover)).collect();
    for s in IMPLEMENTED_SECTIONS {
        assert!(
            engines[0].0.values().any(|k| k == s),
            "no key of the Nervix spec has section {s:?}"
        );
    }
    let problems = ledger_problems(&ledger, &engines, &workspace_tests());
    assert!(problems.is_empty(), "rules.tsv:\n{}", problems.join("\n"));
}

#[test]
fn rules_spec_copy_equals_the_spec_beside_the_checkout() {
    // The spec lives beside the checkout where it is shared (CI has it); a checkout on its own
    // has only the copies.
    for engine in ENGINES {
        let beside = workspace_root()
            .join("..")
            .join("shared")
            .join("spec")
            .join(engine.spec);
        let Ok(spec) = std::fs::read_to_string(&beside) else {
            eprintln!("no {} beside the checkout; comparing nothing", engine.spec);
            continue;
        };
        assert_eq!(
            spec_copy(engine),
            key_sections(&spec, engine.section_column),
            "vectors/{} differs from the spec's keys and sections",
            engine.copy
        );
    }
}

#[test]
fn rules_check_notices_a_missing_test_and_a_fn_that_is_not_a_test() {
    // Sample sources are built at run time, so this file does not itself declare them.
    let attr = format!("#[{}]", "test");
    let src = format!(
        "{attr}\nfn f_1_real() {{}}\n\
         {attr}\n/// doc\n#[should_panic]\npub fn f_1_real_too() {{}}\n\
         fn f_1_helper() {{}}\n\
         // {attr} in a comment names no function\n\
         {p}! {{\n    #![proptest_config(x)]\n    {attr}\n    fn f_1_property(x in 0..1u8) {{ let _ = x; }}\n}}\n\
         #[{t}(flavor = \"multi_thread\")]\nasync fn f_1_async() {{}}\n\
         #[{t}]\npub async fn f_1_async_too() {{}}\n\
         async fn f_1_async_helper() {{}}\n",
        p = "proptest",
        t = "tokio::test"
    );
    let tests = test_fns(&src);
    assert_eq!(
        tests,
        [
            "f_1_async",
            "f_1_async_too",
            "f_1_property",
            "f_1_real",
            "f_1_real_too"
        ]
        .map(String::from)
        .into()
    );

    // An attribute or a proptest block in a comment or a string literal declares nothing;
    // a quote in a character literal, a lifetime or a `//` inside a string hides nothing.
    let q = '"';
    let src = format!(
        "// {attr}\nfn f_1_under_a_line_comment() {{}}\n\
         /* {attr} */\nfn f_1_under_a_block_comment() {{}}\n\
         /* outer /* inner */ {attr} */\nfn f_1_under_a_nested_block_comment() {{}}\n\
         /*\n{attr}\nfn f_1_inside_a_block_comment() {{}}\n*/\n\
         const S: &str = {q}{attr} fn f_1_in_a_string() {{}}{q};\n\
         const E: &str = {q}an escaped \\{q} quote {attr} fn f_1_after_an_escape() {{}}{q};\n\
         const R: &str = r#{q}{attr} a {q} fn f_1_in_a_raw_string() {{}}{q}#;\n\
         const B: &[u8] = br{q}{attr} fn f_1_in_a_raw_byte_string() {{}}{q};\n\
         const P: &str = {q}{p}! {{ fn f_1_in_a_string_block(x in 0..1u8) {{}} }}{q};\n\
         {p}! {{\n    // fn f_1_commented_property(x in 0..1u8) {{}}\n    \
         /* fn f_1_block_commented_property(x in 0..1u8) {{}} */\n}}\n\
         const C: char = '{q}';\n{attr}\nfn f_1_after_a_quote_char() {{}}\n\
         const D: char = '\\'';\n{attr}\nfn f_1_after_an_escaped_char() {{}}\n\
         fn helper<'a>(x: &'a str) -> &'a str {{ x }}\n{attr}\nfn f_1_after_a_lifetime() {{}}\n\
         const U: &str = {q}https://example.invalid/{q}; {attr} fn f_1_after_a_url() {{}}\n",
        p = "proptest"
    );
    assert_eq!(
        test_fns(&src),
        [
            "f_1_after_a_lifetime",
            "f_1_after_a_quote_char",
            "f_1_after_a_url",
            "f_1_after_an_escaped_char",
        ]
        .map(String::from)
        .into()
    );

    let keys: BTreeMap<String, String> = [
        ("F-1", "frames"),
        ("F-2", "frames"),
        ("PX-1", "unimplemented"),
    ]
    .map(|(k, s)| (k.to_string(), s.to_string()))
    .into();
    let partial: BTreeMap<String, String> = [("W-1", "frames"), ("W-2", "frames")]
        .map(|(k, s)| (k.to_string(), s.to_string()))
        .into();
    let engines = [
        (keys, Cover::Sections(&["frames"])),
        (partial, Cover::Listed),
    ];
    let good = ledger("F-1\tf_1_real,f_1_property\nF-2\tf_1_real_too\nW-2\tf_1_real\n");
    assert!(ledger_problems(&good, &engines, &tests).is_empty());

    // A helper that is no test, a name nobody wrote, an implemented key left out, a key the
    // manual does not have: each is a problem.
    // A key listed as untestable needs a reason of a few words, and needs no test.
    let why = ledger("F-1\tf_1_real\nF-2\tf_1_real\nW-1\tuntestable: the rule binds another client, not this one\n");
    assert!(ledger_problems(&why, &engines, &tests).is_empty());
    let no_why = ledger("F-1\tf_1_real\nF-2\tf_1_real\nW-1\tuntestable: no\n");
    assert_eq!(
        ledger_problems(&no_why, &engines, &tests),
        ["W-1 is untestable without a reason"]
    );

    let bad = ledger("F-1\tf_1_helper,f_0_nobody_wrote\nZ-9\tf_1_real\nW-1\tf_0_nobody\n");
    let problems = ledger_problems(&bad, &engines, &tests);
    assert_eq!(
        problems,
        [
            "F-2 (frames) is implemented but lists no test",
            "F-1: f_1_helper is not a test function",
            "F-1: f_0_nobody_wrote is not a test function",
            "W-1: f_0_nobody is not a test function",
            "Z-9 is not a rule key of any engine",
        ]
    );
}
