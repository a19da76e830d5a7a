//! Orphan slots drained by a second sender over their own connections (SF-40 to SF-42).

mod common;
use common::*;

use std::time::{Duration, Instant};

use sf_journal::slot;
use sf_journal_io::drain::DrainConfig;
use sf_journal_io::loopback::{LoopbackServer, ServerConfig};
use sf_journal_io::orphans::{drain_orphans, OrphanOutcome};
use sf_journal_io::Journal;

/// Entry point of the helper process (a no-op in a normal run).
#[test]
fn helper_process_entry() {
    child_main();
}

/// A slot a dead sender left, holding frames `from..to` (as FSNs 0 onwards).
fn orphan(sf: &std::path::Path, name: &str, from: usize, to: usize) {
    let mut j = Journal::open(sf, name, small()).unwrap();
    for i in from..to {
        let _ = j.append(&payload(i), 0).unwrap();
    }
}

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn messages(s: &LoopbackServer) -> Vec<Vec<Vec<u8>>> {
    let mut m: Vec<_> = s.connections().iter().map(|c| c.messages()).collect();
    m.sort();
    m
}

fn run(sf: &std::path::Path, s: &LoopbackServer, on: bool, max: usize) -> Vec<OrphanOutcome> {
    drain_orphans(
        sf,
        "me",
        on,
        max,
        small(),
        &DrainConfig::new(s.addr()),
        Instant::now() + Duration::from_secs(20),
    )
    .unwrap()
}

#[test]
fn sf_41_each_orphan_is_recovered_and_drained_over_its_own_connection() {
    let sf = scratch("orphans");
    orphan(&sf, "dead-a", 0, 4);
    orphan(&sf, "dead-b", 100, 107);
    orphan(&sf, "dead-c", 200, 202);
    // A torn tail in one orphan: recovery cuts it, the drain sends only the whole frames.
    let seg = sf.join("dead-c").join(slot::SEGMENT_INITIAL);
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[24 + 28 + 10] ^= 0xff;
    std::fs::write(&seg, bytes).unwrap();
    let _me = Journal::open(&sf, "me", small()).unwrap();
    let s = LoopbackServer::start(ServerConfig::default()).unwrap();
    let out = run(&sf, &s, true, 2);
    let mut drained: Vec<(String, i64, i64)> = out
        .iter()
        .map(|o| match o {
            OrphanOutcome::Drained { slot, frames, .. } => (slot.clone(), frames.start, frames.end),
            other => panic!("expected drained, got {other:?}"),
        })
        .collect();
    drained.sort();
    assert_eq!(
        drained,
        [
            ("dead-a".to_owned(), 0, 4),
            ("dead-b".to_owned(), 0, 7),
            ("dead-c".to_owned(), 0, 1)
        ]
    );
    let want = |r: std::ops::Range<usize>| r.map(payload).collect::<Vec<_>>();
    let mut expected = vec![want(0..4), want(100..107), want(200..201)];
    expected.sort();
    assert_eq!(messages(&s), expected, "one connection per orphan");
    assert!(s.max_concurrent() <= 2, "at most two drainers at once");
    for o in ["dead-a", "dead-b", "dead-c"] {
        assert_eq!(names(&sf.join(o)), [slot::LOCK, slot::LOCK_PID], "{o}");
    }
    // Drained slots are orphans no more.
    assert!(run(&sf, &s, true, 2).is_empty());
}

#[test]
fn sf_41_at_most_max_drainers_run_at_once() {
    let sf = scratch("orphans-one-at-a-time");
    for i in 0..4 {
        orphan(&sf, &format!("dead-{i}"), 0, 30);
    }
    let s = LoopbackServer::start(ServerConfig::default()).unwrap();
    let out = run(&sf, &s, true, 1);
    assert_eq!(out.len(), 4);
    assert_eq!(s.connections().len(), 4);
    assert_eq!(s.max_concurrent(), 1);
}

#[test]
fn sf_41_an_orphan_held_by_a_live_process_is_skipped() {
    let sf = scratch("orphan-held");
    orphan(&sf, "dead", 0, 3);
    let mut child = spawn_holder("helper_process_entry", &sf.join("alive"), 5);
    let s = LoopbackServer::start(ServerConfig::default()).unwrap();
    let out = run(&sf, &s, true, 1);
    let _ = child.kill();
    let _ = child.wait();
    let mut seen = Vec::new();
    for o in &out {
        match o {
            OrphanOutcome::Skipped { slot, pid } => {
                assert_eq!((slot.as_str(), *pid), ("alive", Some(child.id())));
                seen.push("skipped");
            }
            OrphanOutcome::Drained { slot, .. } => {
                assert_eq!(slot, "dead");
                seen.push("drained");
            }
            other => panic!("{other:?}"),
        }
    }
    seen.sort();
    assert_eq!(seen, ["drained", "skipped"]);
    assert_eq!(
        s.connections().len(),
        1,
        "no connection for the skipped slot"
    );
    // Its holder gone, the slot is drained on the next pass.
    let out = run(&sf, &s, true, 1);
    assert!(
        matches!(&out[..], [OrphanOutcome::Drained { slot, frames, .. }] if slot == "alive" && *frames == (0..5))
    );
}

#[test]
fn sf_42_without_drain_orphans_the_dead_senders_data_stays_on_disk() {
    let sf = scratch("orphan-off");
    orphan(&sf, "dead", 0, 3);
    let s = LoopbackServer::start(ServerConfig::default()).unwrap();
    assert!(run(&sf, &s, false, 4).is_empty());
    assert!(s.connections().is_empty());
    let mut j = Journal::open(&sf, "dead", small()).unwrap();
    assert_eq!(j.recovered(), 0..3);
    let _ = j.connect(0);
    assert_eq!(drain(&mut j), frames(0, 3));
}

#[test]
fn sf_40_a_failed_slot_and_the_senders_own_slot_are_not_drained() {
    let sf = scratch("orphan-failed");
    orphan(&sf, "dead", 0, 2);
    orphan(&sf, "bad", 0, 2);
    std::fs::write(sf.join("bad").join(slot::FAILED), b"").unwrap();
    orphan(&sf, "me", 0, 2);
    let s = LoopbackServer::start(ServerConfig::default()).unwrap();
    let out = run(&sf, &s, true, 4);
    assert!(matches!(&out[..], [OrphanOutcome::Drained { slot, .. }] if slot == "dead"));
    assert!(names(&sf.join("bad")).contains(&"sf-initial.sfa".to_owned()));
    assert!(names(&sf.join("me")).contains(&"sf-initial.sfa".to_owned()));
}

/// A slot whose frames use symbols and whose dictionary header is then destroyed.
fn unreplayable(sf: &std::path::Path, name: &str) -> Vec<u8> {
    let mut j = Journal::open(sf, name, small()).unwrap();
    for i in 0..4 {
        let _ = j
            .append_with_symbols(&[format!("s{i}")], |_| payload(i), 0)
            .unwrap();
    }
    drop(j);
    let dict = sf.join(name).join(slot::SYMBOL_DICT);
    let mut bytes = std::fs::read(&dict).unwrap();
    bytes[..4].copy_from_slice(b"JUNK");
    std::fs::write(&dict, bytes).unwrap();
    std::fs::read(sf.join(name).join(slot::SEGMENT_INITIAL)).unwrap()
}

#[test]
fn sf_38_a_foreground_sender_sets_an_unreplayable_slot_aside_and_starts_fresh() {
    let sf = scratch("unreplayable-foreground");
    let segment = unreplayable(&sf, "s");
    assert!(sf_journal_io::journal::is_unreplayable(
        &Journal::open(&sf, "s", small()).unwrap_err()
    ));
    let opened = Journal::open_or_set_aside(&sf, "s", small()).unwrap();
    let mut j = opened.journal;
    assert_eq!(
        (j.published_fsn(), j.recovered()),
        (-1, 0..0),
        "a fresh slot"
    );
    assert_eq!(j.append(&payload(0), 0).unwrap(), 0);
    let aside = opened.set_aside.expect("set aside");
    assert_eq!(aside.parent(), Some(sf.as_path()));
    assert!(aside
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("s.unreplayable-"));
    // Nothing is discarded: the segment is there, byte for byte, with the broken dictionary.
    assert_eq!(
        std::fs::read(aside.join(slot::SEGMENT_INITIAL)).unwrap(),
        segment
    );
    assert!(aside.join(slot::SYMBOL_DICT).is_file());
    // A healthy slot is opened as it is.
    let healthy = Journal::open_or_set_aside(&sf, "t", small()).unwrap();
    assert_eq!(healthy.set_aside, None);
}

#[test]
fn sf_38_a_background_drainer_marks_an_unreplayable_orphan_failed() {
    let sf = scratch("unreplayable-background");
    let segment = unreplayable(&sf, "dead");
    let s = LoopbackServer::start(ServerConfig::default()).unwrap();
    let out = run(&sf, &s, true, 1);
    assert!(
        matches!(&out[..], [OrphanOutcome::Failed { slot, .. }] if slot == "dead"),
        "{out:?}"
    );
    assert!(s.connections().is_empty(), "nothing is sent");
    assert!(sf.join("dead").join(slot::FAILED).is_file());
    assert_eq!(
        std::fs::read(sf.join("dead").join(slot::SEGMENT_INITIAL)).unwrap(),
        segment
    );
    // Later scans skip it.
    assert!(run(&sf, &s, true, 1).is_empty());
}

#[test]
fn sf_38_a_slot_holding_a_last_generation_segment_is_set_aside() {
    let sf = scratch("last-generation");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let _ = j.append(&payload(0), 0).unwrap();
    drop(j);
    let hostile = sf.join("s").join(slot::segment_name(u64::MAX));
    std::fs::write(&hostile, vec![0u8; 128]).unwrap();
    assert!(sf_journal_io::journal::is_unreplayable(
        &Journal::open(&sf, "s", small()).unwrap_err()
    ));
    let opened = Journal::open_or_set_aside(&sf, "s", small()).unwrap();
    assert_eq!(opened.journal.published_fsn(), -1, "a fresh slot");
    let aside = opened.set_aside.expect("set aside");
    assert!(aside.join(slot::segment_name(u64::MAX)).is_file());
    assert!(aside.join(slot::SEGMENT_INITIAL).is_file());
}

#[test]
fn sf_38_a_dictionary_corrupt_before_a_valid_chunk_sets_the_slot_aside_uncut() {
    let sf = scratch("dict-mid-corrupt");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..3 {
        let _ = j
            .append_with_symbols(&[format!("s{i}")], |_| payload(i), 0)
            .unwrap();
    }
    drop(j);
    let dict = sf.join("s").join(slot::SYMBOL_DICT);
    let mut bytes = std::fs::read(&dict).unwrap();
    // The first chunk (after the 8-byte header) loses a bit of its entries.
    bytes[8 + 3] ^= 0x01;
    std::fs::write(&dict, &bytes).unwrap();
    assert!(sf_journal_io::journal::is_unreplayable(
        &Journal::open(&sf, "s", small()).unwrap_err()
    ));
    let opened = Journal::open_or_set_aside(&sf, "s", small()).unwrap();
    assert_eq!(opened.journal.published_fsn(), -1, "a fresh slot");
    let aside = opened.set_aside.expect("set aside");
    assert_eq!(std::fs::read(aside.join(slot::SYMBOL_DICT)).unwrap(), bytes);
}
