//! The committed wire code of `nervix-protocol` (`protocol/nervix/src/generated/`) against its
//! generator: regenerated from `schema/` into a scratch directory with flatc 25.12.19 (FLATC or
//! PATH), every file must be byte for byte the committed one. flatc is required: a missing or
//! wrong flatc fails the test with instructions rather than skipping it.

#![allow(clippy::disallowed_methods)]

use nervix_conformance::workspace_root;
use nervix_schema_gen as schema_gen;

#[test]
fn committed_generated_code_matches_the_schema() {
    let root = workspace_root();
    let committed = root.join("protocol/nervix/src/generated");
    let base = std::env::temp_dir().join(format!("nervix-generated-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let fresh = base.join("out");
    schema_gen::generate(
        &schema_gen::flatc_from_env(),
        &root.join("schema"),
        &fresh,
        &base.join("flatc"),
    );

    let mut differing = Vec::new();
    for name in schema_gen::GENERATED_FILES {
        let want = std::fs::read(fresh.join(name)).expect("read a regenerated file");
        match std::fs::read(committed.join(name)) {
            Ok(have) if have == want => {}
            Ok(_) => differing.push(format!("{name} differs")),
            Err(e) => differing.push(format!("{name} is missing ({e})")),
        }
    }
    let mut stray = Vec::new();
    for entry in std::fs::read_dir(&committed).expect("read the committed directory") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy().into_owned();
        if !schema_gen::GENERATED_FILES.contains(&name.as_str()) {
            stray.push(name);
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    assert!(
        differing.is_empty() && stray.is_empty(),
        "protocol/nervix/src/generated is out of step with schema/ and its generator: {}; \
         stray files {stray:?}. Run `just regen` and review the diff.",
        differing.join(", ")
    );
}
