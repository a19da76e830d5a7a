//! What a user of one engine compiles: the Nervix crates depend on no other engine of the
//! workspace and on none of the crates only the other engines need (JSON, MessagePack, the
//! journal's checksums), and no engine depends on a driver's runtime.
//!
//! Each check reads `cargo tree` of one package with every feature on (normal dependencies
//! only: what a user of the package compiles, not what its tests or benchmarks use) and names
//! every crate that crossed a fence. One allowance: `nervix-driver-support` with its `journal`
//! feature (off by default) compiles the client journal, `nervix-journal`, over the
//! store-and-forward ring and its CRC32C; without that feature it compiles none of them.

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

/// Which features of a package a listing turns on.
#[derive(Clone, Copy)]
enum Features<'a> {
    /// Every feature.
    All,
    /// The default features and these.
    With(&'a [&'a str]),
}

/// The names of every package `package` compiles for its users with every feature on, itself
/// excluded.
fn normal_deps(package: &str) -> BTreeSet<String> {
    deps_with(package, Features::All)
}

/// The names of every package `package` compiles for its users with `features`, itself
/// excluded.
fn deps_with(package: &str, features: Features<'_>) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root()).args(["tree", "--offline"]);
    match features {
        Features::All => {
            cmd.arg("--all-features");
        }
        Features::With(list) if !list.is_empty() => {
            cmd.args(["--features", &list.join(",")]);
        }
        Features::With(_) => {}
    }
    let out = cmd
        .args([
            "-e", "normal", "--prefix", "none", "--format", "{p}", "-p", package,
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

/// What the client journal (issue 19) brings: the store-and-forward ring and its file side,
/// with the ring's CRC32C. Only `nervix-driver-support` with its `journal` feature may
/// compile them, and `nervix-journal` itself.
const JOURNAL_ALLOWANCE: &[&str] = &["crc32c", "sf-journal", "sf-journal-io", "nervix-journal"];

/// The features of `nervix-driver-support`, `nervix-tokio` and `nervix-blocking` that are not
/// the journal's (none yet): they are listed with these, so the journal's allowance is never
/// taken for granted.
const SUPPORT_FEATURES_BUT_JOURNAL: &[&str] = &[];

#[test]
fn a_nervix_driver_compiles_no_other_engine_and_none_of_their_crates() {
    let mut banned: Vec<String> = OTHER_ENGINES_ONLY.iter().map(|s| s.to_string()).collect();
    banned.extend(other_engines());
    banned.push("nervix-journal".into());
    // Each with every feature but `journal`, the opt-in the next test fences.
    for package in ["nervix-tokio", "nervix-blocking", "nervix-driver-support"] {
        let deps = deps_with(package, Features::With(SUPPORT_FEATURES_BUT_JOURNAL));
        assert!(
            deps.contains("nervix-protocol"),
            "{package}: the listing must hold the engine it drives ({deps:?})"
        );
        let bad = crossed(&deps, &banned);
        assert!(bad.is_empty(), "{package} compiles {bad:?}");
    }
}

#[test]
fn only_the_journal_feature_of_the_driver_support_compiles_the_journal_crates() {
    let mut banned: Vec<String> = OTHER_ENGINES_ONLY.iter().map(|s| s.to_string()).collect();
    banned.extend(other_engines());
    banned.retain(|b| !JOURNAL_ALLOWANCE.contains(&b.as_str()));
    // The drivers' own `journal` features turn on the driver support's.
    for package in ["nervix-driver-support", "nervix-tokio", "nervix-blocking"] {
        let deps = deps_with(package, Features::With(&["journal"]));
        for needed in ["nervix-journal", "sf-journal-io", "crc32c"] {
            assert!(
                deps.contains(needed),
                "the journal feature of {package} brings {needed}: {deps:?}"
            );
        }
        let bad = crossed(&deps, &banned);
        assert!(bad.is_empty(), "{package}/journal compiles {bad:?}");
    }
    // The engine itself: the ring and its checksum, none of the other engines' crates.
    let deps = normal_deps("nervix-journal");
    assert!(
        deps.contains("sf-journal") && deps.contains("nervix-protocol"),
        "{deps:?}"
    );
    let bad = crossed(&deps, &banned);
    assert!(bad.is_empty(), "nervix-journal compiles {bad:?}");
    // Without the feature, none of it.
    let deps = deps_with("nervix-driver-support", Features::With(&[]));
    let journal: Vec<String> = JOURNAL_ALLOWANCE.iter().map(|s| s.to_string()).collect();
    let bad = crossed(&deps, &journal);
    assert!(
        bad.is_empty(),
        "nervix-driver-support by default compiles {bad:?}"
    );
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
