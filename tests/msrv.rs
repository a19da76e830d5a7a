//! The declared `rust-version` is honest: no package in the lock file asks for a newer Rust.
//!
//! Each check reads `cargo metadata` of one workspace (this one, and the separate fuzz
//! workspace) with every feature on, so the resolve holds every package its `Cargo.lock` holds:
//! the normal, build and dev dependencies of every member, for every platform. Dev dependencies
//! count because `just test` is part of what the workspace promises to build on its declared
//! Rust; a package only a test needs is still one a contributor must compile. The check fails
//! naming each package whose `rust-version` exceeds the lowest one the members declare.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `cargo metadata` of the workspace of `manifest`, offline when every package is already
/// downloaded. A checkout whose build fetched only the host's packages lacks the manifests of
/// other platforms' dependencies; then the second try fetches them.
fn metadata(manifest: &Path) -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(root()).args([
            "metadata",
            "--format-version",
            "1",
            "--all-features",
            "--locked",
            "--manifest-path",
        ]);
        cmd.arg(manifest);
        if offline {
            cmd.arg("--offline");
        }
        cmd.output().expect("cargo metadata runs")
    };
    let mut out = run(true);
    if !out.status.success() {
        out = run(false);
    }
    assert!(
        out.status.success(),
        "cargo metadata --manifest-path {} failed: {}",
        manifest.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// A `rust-version` as (major, minor, patch); a missing part is 0.
fn parse(version: &str) -> (u64, u64, u64) {
    let mut parts = version.split('.').map(|p| {
        p.parse::<u64>()
            .unwrap_or_else(|_| panic!("rust-version {version:?} is not numeric"))
    });
    let major = parts.next().expect("a major version");
    (major, parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// Compares two `rust-version` values (`1.88` equals `1.88.0`).
fn compare(a: &str, b: &str) -> Ordering {
    parse(a).cmp(&parse(b))
}

/// The lowest `rust-version` the members of `meta` declare, and every package of its resolve
/// (members excluded) whose `rust-version` is higher, as `name version (rust-version)`.
fn declared_and_offenders(meta: &Value) -> (String, Vec<String>) {
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .expect("workspace_members")
        .iter()
        .map(|id| id.as_str().expect("a package id"))
        .collect();
    let resolved: BTreeSet<&str> = meta["resolve"]["nodes"]
        .as_array()
        .expect("a resolve")
        .iter()
        .map(|node| node["id"].as_str().expect("a package id"))
        .collect();
    let packages = meta["packages"].as_array().expect("packages");
    let mut declared: Option<String> = None;
    for package in packages {
        let id = package["id"].as_str().expect("a package id");
        if !members.contains(id) {
            continue;
        }
        let version = package["rust_version"].as_str().unwrap_or_else(|| {
            panic!(
                "workspace member {} declares no rust-version",
                package["name"]
            )
        });
        if declared
            .as_deref()
            .is_none_or(|d| compare(version, d) == Ordering::Less)
        {
            declared = Some(version.to_owned());
        }
    }
    let declared = declared.expect("the workspace has members");
    let mut offenders = Vec::new();
    for package in packages {
        let id = package["id"].as_str().expect("a package id");
        if members.contains(id) || !resolved.contains(id) {
            continue;
        }
        if let Some(needs) = package["rust_version"].as_str() {
            if compare(needs, &declared) == Ordering::Greater {
                offenders.push(format!(
                    "{} {} (rust-version {needs})",
                    package["name"].as_str().expect("a name"),
                    package["version"].as_str().expect("a version"),
                ));
            }
        }
    }
    (declared, offenders)
}

fn check(manifest: &Path) {
    let meta = metadata(manifest);
    let (declared, offenders) = declared_and_offenders(&meta);
    assert!(
        offenders.is_empty(),
        "{} declares rust-version {declared}, but these dependencies need a newer Rust: {}",
        manifest.display(),
        offenders.join(", ")
    );
}

#[test]
fn the_workspace_rust_version_covers_every_locked_dependency() {
    check(&root().join("Cargo.toml"));
}

#[test]
fn the_fuzz_workspace_rust_version_covers_every_locked_dependency() {
    check(&root().join("fuzz").join("Cargo.toml"));
}

#[test]
fn a_dependency_newer_than_the_declared_rust_version_is_named() {
    let meta = serde_json::json!({
        "workspace_members": ["member"],
        "resolve": { "nodes": [{ "id": "member" }, { "id": "old" }, { "id": "new" }, { "id": "none" }] },
        "packages": [
            { "id": "member", "name": "member", "version": "0.1.0", "rust_version": "1.88" },
            { "id": "old", "name": "old", "version": "1.0.0", "rust_version": "1.88.0" },
            { "id": "new", "name": "new", "version": "2.0.0", "rust_version": "1.88.1" },
            { "id": "none", "name": "none", "version": "3.0.0", "rust_version": null },
            { "id": "unresolved", "name": "unresolved", "version": "4.0.0", "rust_version": "1.99" }
        ]
    });
    let (declared, offenders) = declared_and_offenders(&meta);
    assert_eq!(declared, "1.88");
    assert_eq!(offenders, ["new 2.0.0 (rust-version 1.88.1)"]);
}
