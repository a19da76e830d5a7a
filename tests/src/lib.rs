//! Shared pieces of the conformance tests: the workspace layout and the corpus builders.

use std::path::PathBuf;

pub mod corpus;
pub mod coverage;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}
