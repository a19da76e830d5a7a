//! Rewrites `nervix-protocol`'s committed wire code from `schema/` (`just regen`): run it after
//! changing the schema and review the diff before committing it. The output directory defaults to
//! `protocol/nervix/src/generated`; flatc 25.12.19 is taken from FLATC or PATH.

use nervix_schema_gen as schema_gen;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("protocol/nervix/src/generated"));
    let scratch = std::env::temp_dir().join(format!("nervix-regen-{}", std::process::id()));
    schema_gen::generate(
        &schema_gen::flatc_from_env(),
        &root.join("schema"),
        &out,
        &scratch,
    );
    // The scratch directory only held flatc's raw output.
    let _ = std::fs::remove_dir_all(&scratch);
    for f in schema_gen::GENERATED_FILES {
        println!("{}", out.join(f).display());
    }
}
