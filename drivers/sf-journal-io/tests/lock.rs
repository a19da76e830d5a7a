//! The slot lock against a real second process (SF-29, SF-D7), and a real killed process whose
//! slot the next sender recovers (SF-3).

mod common;
use common::*;

use sf_journal::slot;
use sf_journal_io::lock::{holder_pid, LockError, SlotLock};
use sf_journal_io::{Journal, JournalError};

/// Entry point of the helper process (a no-op in a normal run).
#[test]
fn helper_process_entry() {
    child_main();
}

const ENTRY: &str = "helper_process_entry";

fn pid_file(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join(slot::LOCK_PID)).unwrap()
}

#[test]
fn sf_29_a_second_sender_in_another_process_is_refused_naming_its_pid() {
    let sf = scratch("second-sender");
    let slot_dir = sf.join("sender");
    let mut child = spawn_holder(ENTRY, &slot_dir, 2);
    let refused = Journal::open(&sf, "sender", small());
    let _ = child.kill();
    let _ = child.wait();
    match refused {
        Err(JournalError::Lock(LockError::Held { slot, pid })) => {
            assert_eq!(pid, Some(child.id()));
            assert_eq!(slot, slot_dir);
            let msg = LockError::Held { slot, pid }.to_string();
            assert!(msg.contains(&child.id().to_string()), "{msg}");
        }
        other => panic!("expected the slot to be held, got {other:?}"),
    }
}

#[test]
fn sf_29_a_dead_holders_lock_is_taken_over() {
    let sf = scratch("dead-holder");
    let slot_dir = sf.join("sender");
    let mut child = spawn_holder(ENTRY, &slot_dir, 0);
    assert_eq!(holder_pid(&slot_dir), Some(child.id()));
    child.kill().unwrap();
    let _ = child.wait().unwrap();
    // The stale `.lock.pid` still names the dead process; the lock itself is free.
    assert_eq!(holder_pid(&slot_dir), Some(child.id()));
    let j = Journal::open(&sf, "sender", small()).unwrap();
    assert_eq!(pid_file(&slot_dir), std::process::id().to_string());
    drop(j);
}

#[test]
fn sf_29_a_refused_sender_reads_and_repairs_nothing() {
    let sf = scratch("refused-repairs-nothing");
    let slot_dir = sf.join("sender");
    let mut holder = Journal::open(&sf, "sender", small()).unwrap();
    let _ = holder.append(&payload(0), 0).unwrap();
    // A corrupt manifest the second sender's recovery would set aside if it ran.
    std::fs::write(slot_dir.join(slot::MANIFEST), b"not a manifest").unwrap();
    let before = std::fs::read(slot_dir.join(slot::SEGMENT_INITIAL)).unwrap();
    let refused = Journal::open(&sf, "sender", small());
    assert!(matches!(
        refused,
        Err(JournalError::Lock(LockError::Held { pid: Some(p), .. })) if p == std::process::id()
    ));
    assert_eq!(
        std::fs::read(slot_dir.join(slot::MANIFEST)).unwrap(),
        b"not a manifest"
    );
    assert!(!slot_dir.join(slot::corrupt_name(slot::MANIFEST)).exists());
    assert_eq!(
        std::fs::read(slot_dir.join(slot::SEGMENT_INITIAL)).unwrap(),
        before
    );
    drop(holder);
}

#[test]
fn sf_d7_the_lock_is_exclusive_for_the_holders_life_and_lock_pid_names_it() {
    let sf = scratch("lock-life");
    let slot_dir = sf.join("sender");
    std::fs::create_dir_all(&slot_dir).unwrap();
    let lock = SlotLock::acquire(&slot_dir).unwrap();
    assert!(slot_dir.join(slot::LOCK).is_file());
    assert_eq!(pid_file(&slot_dir), std::process::id().to_string());
    // The lock is per open file: even this process cannot take it twice.
    for _ in 0..3 {
        match SlotLock::acquire(&slot_dir) {
            Err(LockError::Held { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected held, got {other:?}"),
        }
    }
    drop(lock);
    let again = SlotLock::acquire(&slot_dir).unwrap();
    assert_eq!(again.slot(), slot_dir.as_path());
}

#[test]
fn sf_d7_a_journal_holds_the_slot_lock_until_it_is_dropped() {
    let sf = scratch("journal-life");
    let j = Journal::open(&sf, "sender", small()).unwrap();
    assert!(matches!(
        Journal::open(&sf, "sender", small()),
        Err(JournalError::Lock(LockError::Held { .. }))
    ));
    // Another slot of the same directory is free.
    let other = Journal::open(&sf, "sender-ingest-1", small()).unwrap();
    drop(j);
    let _again = Journal::open(&sf, "sender", small()).unwrap();
    drop(other);
}

#[test]
fn sf_d7_an_unreadable_lock_pid_is_named_as_unknown() {
    let sf = scratch("unknown-pid");
    let slot_dir = sf.join("sender");
    std::fs::create_dir_all(&slot_dir).unwrap();
    let lock = SlotLock::acquire(&slot_dir).unwrap();
    std::fs::write(slot_dir.join(slot::LOCK_PID), b"garbage").unwrap();
    match SlotLock::acquire(&slot_dir) {
        Err(e @ LockError::Held { pid: None, .. }) => {
            assert!(e.to_string().contains("unknown"), "{e}")
        }
        other => panic!("expected held by an unknown process, got {other:?}"),
    }
    drop(lock);
}

#[test]
fn sf_3_a_killed_senders_frames_are_recovered_by_the_next_sender() {
    let sf = scratch("killed-sender");
    let slot_dir = sf.join("sender");
    let mut child = spawn_holder(ENTRY, &slot_dir, 10);
    child.kill().unwrap();
    let _ = child.wait().unwrap();
    let mut j = Journal::open(&sf, "sender", small()).unwrap();
    assert_eq!(j.recovered(), 0..10);
    assert_eq!(j.published_fsn(), 9);
    let _ = j.connect(0);
    assert_eq!(drain(&mut j), frames(0, 10));
    assert_eq!(j.append(&payload(10), 0).unwrap(), 10);
}
