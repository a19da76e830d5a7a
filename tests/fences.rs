//! What a user of one engine compiles: the Nervix crates depend on no other engine of the
//! workspace and on none of the crates only the other engines need (JSON, MessagePack, the
//! journal's checksums), and no engine depends on a driver's runtime.
//!
//! Each check reads `cargo tree` of one package with every feature on (normal dependencies
//! only: what a user of the package compiles, not what its tests or benchmarks use) and names
//! every crate that crossed a fence.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Crates only the other engines need (store-and-forward journal, CultNet receipts, GAR).
const OTHER_ENGINES_ONLY: &[&str] = &["serde_json", "rmp", "rmpv", "rmp-serde", "crc32c"];

/// What a sans-IO engine must never compile: a runtime, sockets or TLS.
const IO_CRATES: &[&str] = &[
    "tokio",
    "mio",
    "socket2",
    "h2",
    "hyper",
    "tungstenite",
    "tokio-tungstenite",
    "rustls",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the conformance crate sits one level below the workspace root")
        .to_path_buf()
}

/// The names of every package `package` compiles for its users, itself excluded.
fn normal_deps(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args([
            "tree",
            "--offline",
            "--all-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "-p",
            package,
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("cargo tree prints UTF-8");
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_owned)
        .collect()
}

/// The package names of the workspace's crates under `folder` (`protocol` or `drivers`).
fn workspace_packages(folder: &str) -> Vec<String> {
    let mut names = Vec::new();
    let dir = root().join(folder);
    for entry in std::fs::read_dir(&dir).expect("the folder exists") {
        let manifest = entry.expect("a readable entry").path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let name = text
            .lines()
            .find_map(|l| {
                let l = l.trim();
                let rest = l.strip_prefix("name")?.trim_start().strip_prefix('=')?;
                Some(rest.trim().trim_matches('"').to_owned())
            })
            .expect("every manifest names its package");
        names.push(name);
    }
    names.sort();
    names
}

fn crossed(deps: &BTreeSet<String>, banned: &[String]) -> Vec<String> {
    banned
        .iter()
        .filter(|b| deps.contains(b.as_str()))
        .cloned()
        .collect()
}

/// The packages of the other engines: every crate under `protocol/` and `drivers/` whose
/// name does not say it is Nervix's or shared by every engine.
fn other_engines() -> Vec<String> {
    let mut v = workspace_packages("protocol");
    v.extend(workspace_packages("drivers"));
    v.retain(|n| !n.starts_with("nervix-") && !n.starts_with("sansio-"));
    v
}

#[test]
fn a_nervix_driver_compiles_no_other_engine_and_none_of_their_crates() {
    let mut banned: Vec<String> = OTHER_ENGINES_ONLY.iter().map(|s| s.to_string()).collect();
    banned.extend(other_engines());
    for package in ["nervix-tokio", "nervix-blocking", "nervix-driver-support"] {
        let deps = normal_deps(package);
        assert!(
            deps.contains("nervix-protocol"),
            "{package}: the listing must hold the engine it drives ({deps:?})"
        );
        let bad = crossed(&deps, &banned);
        assert!(bad.is_empty(), "{package} compiles {bad:?}");
    }
}

#[test]
fn a_sans_io_engine_compiles_no_runtime_sockets_or_tls() {
    let banned: Vec<String> = IO_CRATES.iter().map(|s| s.to_string()).collect();
    for package in workspace_packages("protocol") {
        let deps = normal_deps(&package);
        let bad = crossed(&deps, &banned);
        assert!(bad.is_empty(), "{package} compiles {bad:?}");
    }
}

#[test]
fn the_blocking_driver_compiles_no_async_runtime() {
    let deps = normal_deps("nervix-blocking");
    assert!(deps.contains("tungstenite"), "{deps:?}");
    let bad = crossed(
        &deps,
        &["tokio".into(), "tokio-tungstenite".into(), "h2".into()],
    );
    assert!(bad.is_empty(), "nervix-blocking compiles {bad:?}");
}

#[test]
fn the_shared_driver_crates_know_no_engine_but_their_own() {
    for package in workspace_packages("drivers") {
        if !package.starts_with("sansio-") {
            continue;
        }
        let deps = normal_deps(&package);
        let bad: Vec<_> = deps
            .iter()
            .filter(|d| d.starts_with("nervix-"))
            .cloned()
            .collect();
        assert!(bad.is_empty(), "{package} knows an engine: {bad:?}");
    }
}
