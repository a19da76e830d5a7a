//! Which sibling slots are orphans a sender may drain (SF-40, SF-42).

use crate::slot::{parse_segment_name, FAILED};

/// One slot directory under `<sf_dir>`, with the names of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotListing {
    /// The slot directory's name (its sender id).
    pub name: String,
    /// The names of the files inside it.
    pub files: Vec<String>,
}

impl SlotListing {
    /// Whether the slot still holds segment files, hence possibly unacknowledged frames (a
    /// fully acknowledged close leaves only the lock files).
    #[must_use]
    pub fn holds_segments(&self) -> bool {
        self.files.iter().any(|f| parse_segment_name(f).is_some())
    }

    /// Whether a background drainer set the slot aside as unreplayable.
    #[must_use]
    pub fn is_failed(&self) -> bool {
        self.files.iter().any(|f| f == FAILED)
    }
}

/// The sibling slots to drain, in name order: none unless `drain_orphans` is on (opt-in);
/// otherwise every slot but the sender's own that holds segments and is not marked `.failed`.
/// Whether another process holds a candidate's lock is for the driver to find out when it
/// tries to take it.
#[must_use]
pub fn orphan_candidates(
    own_slot: &str,
    slots: &[SlotListing],
    drain_orphans: bool,
) -> Vec<String> {
    if !drain_orphans {
        return Vec::new();
    }
    let mut out: Vec<String> = slots
        .iter()
        .filter(|s| s.name != own_slot && s.holds_segments() && !s.is_failed())
        .map(|s| s.name.clone())
        .collect();
    out.sort();
    out
}
