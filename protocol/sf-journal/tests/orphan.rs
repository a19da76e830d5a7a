//! Orphan eligibility (SF-40, SF-42).

use sf_journal::orphan::{orphan_candidates, SlotListing};

fn slot(name: &str, files: &[&str]) -> SlotListing {
    SlotListing {
        name: name.into(),
        files: files.iter().map(|f| (*f).to_owned()).collect(),
    }
}

fn slots() -> Vec<SlotListing> {
    vec![
        slot("me", &[".lock", ".lock.pid", "sf-initial.sfa"]),
        slot(
            "dead-b",
            &[
                ".lock",
                ".lock.pid",
                "sf-0000000000000003.sfa",
                ".symbol-dict",
            ],
        ),
        slot("dead-a", &["sf-initial.sfa", "sf-manifest.bin"]),
        slot("drained", &[".lock", ".lock.pid"]),
        slot("broken", &["sf-initial.sfa", ".failed"]),
        slot("stray", &["notes.txt", "sf-initial.sfa.bak"]),
    ]
}

#[test]
fn sf_40_siblings_holding_segments_and_not_failed_are_orphans() {
    assert_eq!(
        orphan_candidates("me", &slots(), true),
        ["dead-a", "dead-b"]
    );
}

#[test]
fn sf_40_the_senders_own_slot_is_never_its_orphan() {
    let c = orphan_candidates("dead-a", &slots(), true);
    assert!(!c.contains(&"dead-a".to_owned()));
    assert!(c.contains(&"me".to_owned()));
}

#[test]
fn sf_42_without_drain_orphans_nothing_is_drained() {
    assert!(orphan_candidates("me", &slots(), false).is_empty());
}
