//! Durable-ack mode, the write-ahead dictionary and close (SF-14, SF-15, SF-26 to SF-28,
//! SF-34, SF-35, SF-D8).

mod common;
use common::*;

use sf_journal::dict::{scan_dict, SymbolDict};
use sf_journal::recovery::recover;
use sf_journal::ring::{AckError, CloseVerdict, Durability, OkQueueLimits, Ring, RingConfig};
use sf_journal::{slot, FileOp, MemDir};

fn cfg() -> RingConfig {
    RingConfig {
        segment_bytes: 64,
        max_total_bytes: 1 << 20,
        append_deadline_millis: 1_000,
    }
}

const P: &[u8; 12] = b"QWP1-payload";

fn t(name: &str, txn: i64) -> (String, i64) {
    (name.to_owned(), txn)
}

fn durable_ring(n: usize, dir: &mut MemDir) -> Ring {
    durable_ring_with(cfg(), n, dir)
}

fn durable_ring_with(config: RingConfig, n: usize, dir: &mut MemDir) -> Ring {
    let mut ring = Ring::new(config).with_durable_ack(OkQueueLimits::default());
    for _ in 0..n {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    ring
}

fn segment_unlinks(ops: &[FileOp]) -> usize {
    ops.iter()
        .filter(|op| matches!(op, FileOp::Unlink { file } if file.ends_with(".sfa")))
        .count()
}

#[test]
fn sf_14_in_durable_ack_mode_an_ok_trims_nothing_and_queues_with_its_tables() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(6, &mut dir);
    let ops = ring.ok_with_tables(3, vec![t("trades", 10)]).unwrap();
    assert!(ops.is_empty());
    assert_eq!(ring.acked_fsn(), -1);
    assert_eq!(ring.segment_files().count(), 3);
    let q: Vec<_> = ring.pending_oks().collect();
    assert_eq!(q.len(), 1);
    assert_eq!((q[0].fsn, q[0].wire_seq), (3, 3));
    assert_eq!(q[0].tables, [t("trades", 10)]);
}

#[test]
fn sf_14_an_ok_not_after_the_last_queued_one_is_refused() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(6, &mut dir);
    let _ = ring.ok_with_tables(3, vec![]).unwrap();
    assert_eq!(
        ring.ok_with_tables(3, vec![]),
        Err(AckError::OkOutOfOrder {
            wire_seq: 3,
            last: 3
        })
    );
    assert!(matches!(
        ring.ok_with_tables(2, vec![]),
        Err(AckError::OkOutOfOrder { .. })
    ));
    assert!(matches!(
        ring.ok_with_tables(6, vec![]),
        Err(AckError::BeyondPublished { .. })
    ));
}

#[test]
fn sf_14_the_ok_queue_is_bounded_in_count_and_bytes_and_refusals_are_counted() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits {
        max_entries: 2,
        max_bytes: 1_000,
    });
    for _ in 0..6 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    // No more frames go out than the queue holds OKs for, so the count bound is never hit.
    let mut sent = 0;
    while ring.next_to_send().is_some() {
        sent += 1;
    }
    assert_eq!(sent, 2);
    let _ = ring.ok_with_tables(0, vec![]).unwrap();
    let _ = ring.ok_with_tables(1, vec![]).unwrap();
    assert_eq!(ring.pending_oks().count(), 2);
    assert!(matches!(
        ring.ok_with_tables(2, vec![]),
        Err(AckError::NotSent { .. })
    ));
    assert_eq!(ring.refused_oks(), 0);

    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits {
        max_entries: 100,
        max_bytes: 16 + 5 + 8,
    });
    for _ in 0..3 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    // Exactly at the byte bound: taken.
    let _ = ring.ok_with_tables(0, vec![t("abcde", 1)]).unwrap();
    // Neither beside it nor merged into it (16 + 13 + 11 bytes) does another table fit.
    assert!(matches!(
        ring.ok_with_tables(1, vec![t("fgh", 1)]),
        Err(AckError::OkQueueFull { bytes: 29, .. })
    ));
    assert_eq!(ring.refused_oks(), 1);
}

#[test]
fn sf_15_a_durable_ack_pops_every_fully_covered_head_entry_in_order() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(6, &mut dir);
    let _ = ring.ok_with_tables(1, vec![t("a", 5), t("b", 7)]).unwrap();
    let _ = ring.ok_with_tables(3, vec![t("a", 6)]).unwrap();
    let _ = ring.ok_with_tables(5, vec![t("b", 8)]).unwrap();
    // b not durable yet: the head blocks, even though the second entry is covered.
    assert!(ring.durable_ack(&[t("a", 6)]).unwrap().is_empty());
    assert_eq!(ring.acked_fsn(), -1);
    // b at 6 is one short of 7.
    let _ = ring.durable_ack(&[t("b", 6)]).unwrap();
    assert_eq!(ring.acked_fsn(), -1);
    // b at exactly 7 covers the head; a at 6 (remembered) covers the second; b 7 < 8 stops.
    let ops = ring.durable_ack(&[t("b", 7)]).unwrap();
    assert_eq!(ring.acked_fsn(), 3);
    assert_eq!(
        segment_unlinks(&ops),
        2,
        "the sealed segments [0,1] and [2,3]"
    );
    assert_eq!(ring.pending_oks().count(), 1);
    let _ = ring.durable_ack(&[t("b", 9)]).unwrap();
    assert_eq!(ring.acked_fsn(), 5);
    assert_eq!(ring.pending_oks().count(), 0);
}

#[test]
fn sf_15_a_durable_ack_advances_to_the_fsn_of_the_covered_ok_after_catch_up_frames() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits::default());
    for _ in 0..6 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    // Two catch-up frames take wire sequences 0 and 1: FSN 0 goes at 2, FSN 1 at 3.
    let _ = ring.connect(2);
    ring.catch_up_sent();
    ring.catch_up_sent();
    while ring.next_to_send().is_some() {}
    // The OK of a catch-up frame queues nothing.
    let _ = ring.ok_with_tables(1, vec![]).unwrap();
    assert_eq!(ring.pending_oks().count(), 0);
    let _ = ring.ok_with_tables(3, vec![t("a", 1)]).unwrap();
    let _ = ring.ok_with_tables(5, vec![t("a", 2)]).unwrap();
    let q: Vec<_> = ring.pending_oks().map(|e| (e.fsn, e.wire_seq)).collect();
    assert_eq!(q, [(1, 3), (3, 5)]);
    // The covered entry's FSN, not its wire sequence, becomes the acknowledged FSN.
    let _ = ring.durable_ack(&[t("a", 1)]).unwrap();
    assert_eq!(ring.acked_fsn(), 1);
    let _ = ring.durable_ack(&[t("a", 2)]).unwrap();
    assert_eq!(ring.acked_fsn(), 3);
}

#[test]
fn sf_15_an_entry_without_tables_pops_with_the_next_durable_ack() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(3, &mut dir);
    let _ = ring.ok_with_tables(0, vec![]).unwrap();
    let _ = ring.ok_with_tables(1, vec![t("x", 1)]).unwrap();
    let _ = ring.durable_ack(&[]).unwrap();
    assert_eq!(ring.acked_fsn(), 0);
}

#[test]
fn sf_34_durable_acks_persist_the_watermark_and_recovery_resends_only_the_rest() {
    let big = RingConfig {
        segment_bytes: 256,
        ..cfg()
    };
    let mut dir = MemDir::new();
    let mut ring = durable_ring_with(big, 3, &mut dir);
    let _ = ring.ok_with_tables(0, vec![t("a", 1)]).unwrap();
    dir.apply_all(&ring.durable_ack(&[t("a", 1)]).unwrap());
    let _ = ring.ok_with_tables(1, vec![t("a", 2)]).unwrap();
    dir.apply_all(&ring.durable_ack(&[t("a", 2)]).unwrap());
    // All three frames share one segment, so nothing was unlinked: only the watermark knows.
    let r = recover(&slot_files(&dir), 0).unwrap();
    assert_eq!(r.lowest_fsn(), Some(0));
    assert_eq!(r.acked_fsn, 1);
    assert_eq!(r.unacked(), 2..3);
    // The recovered ring goes on writing the watermark with newer generations.
    let mut ring = Ring::from_recovery(big, &r).with_durable_ack(OkQueueLimits::default());
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok_with_tables(0, vec![]).unwrap();
    dir.apply_all(&ring.durable_ack(&[]).unwrap());
    assert_eq!(recover(&slot_files(&dir), 0).unwrap().acked_fsn, 2);
}

#[test]
fn sf_35_new_symbols_are_written_before_the_frame_that_uses_them() {
    let mut ring = Ring::new(cfg());
    let mut dict = SymbolDict::new();
    let (ids, a) = ring
        .append_with_symbols(&mut dict, &["eu", "us"], |_| P.to_vec(), 0)
        .unwrap();
    assert_eq!(ids, [0, 1]);
    let first_segment_write = a
        .ops
        .iter()
        .position(|op| op.file().is_some_and(|f| f.ends_with(".sfa")))
        .unwrap();
    let last_dict_write = a
        .ops
        .iter()
        .rposition(|op| op.file() == Some(slot::SYMBOL_DICT))
        .unwrap();
    assert!(last_dict_write < first_segment_write);
    // Known symbols write nothing to the dictionary.
    let (ids, b) = ring
        .append_with_symbols(&mut dict, &["us"], |_| P.to_vec(), 0)
        .unwrap();
    assert_eq!(ids, [1]);
    assert!(b.ops.iter().all(|op| op.file() != Some(slot::SYMBOL_DICT)));
}

#[test]
fn sf_35_a_crash_after_the_dictionary_write_leaves_harmless_unused_entries() {
    let mut ring = Ring::new(cfg());
    let mut dict = SymbolDict::new();
    let mut dir = MemDir::new();
    let (_, a) = ring
        .append_with_symbols(&mut dict, &["eu"], |_| P.to_vec(), 0)
        .unwrap();
    dir.apply_all(&a.ops);
    let (_, b) = ring
        .append_with_symbols(&mut dict, &["jp"], |_| P.to_vec(), 0)
        .unwrap();
    // Crash: the dictionary chunk landed, the frame did not.
    let upto = b
        .ops
        .iter()
        .position(|op| op.file().is_some_and(|f| f.ends_with(".sfa")))
        .unwrap();
    dir.apply_all(&b.ops[..upto]);
    let r = recover(&slot_files(&dir), 0).unwrap();
    assert_eq!(r.next_fsn, 1);
    assert_eq!(r.dict.unwrap().symbols, ["eu", "jp"]);
}

#[test]
fn sf_35_a_refused_append_assigns_no_ids() {
    let mut ring = Ring::new(RingConfig {
        max_total_bytes: 64,
        ..cfg()
    });
    let mut dict = SymbolDict::new();
    for _ in 0..2 {
        let _ = ring.append(P, 0).unwrap();
    }
    assert!(ring
        .append_with_symbols(&mut dict, &["eu"], |_| P.to_vec(), 0)
        .is_err());
    assert_eq!(dict.id("eu"), None);
    let (ids, ops) = dict.intern(&["eu"]);
    assert_eq!(ids, [0]);
    let mut d = MemDir::new();
    d.apply_all(&ops);
    assert_eq!(
        scan_dict(d.get(slot::SYMBOL_DICT).unwrap())
            .unwrap()
            .symbols,
        ["eu"]
    );
}

#[test]
fn sf_26_close_waits_until_everything_published_is_acknowledged_or_the_deadline() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg());
    for _ in 0..3 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    assert_eq!(
        ring.close(1_000, 1_000, 5_000),
        CloseVerdict::Wait {
            deadline_millis: 6_000
        }
    );
    let _ = ring.ok(1).unwrap();
    assert_eq!(
        ring.close(5_999, 1_000, 5_000),
        CloseVerdict::Wait {
            deadline_millis: 6_000
        }
    );
    assert_eq!(
        ring.close(6_000, 1_000, 5_000),
        CloseVerdict::Unacknowledged {
            fsns: 2..3,
            skipped: false
        }
    );
    let _ = ring.ok(2).unwrap();
    assert!(matches!(
        ring.close(6_000, 1_000, 5_000),
        CloseVerdict::Drained { .. }
    ));
}

#[test]
fn sf_27_a_timed_out_close_leaves_the_unacknowledged_tail_on_disk_for_the_next_sender() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg());
    for _ in 0..5 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    dir.apply_all(&ring.ok(1).unwrap());
    let v = ring.close(10_000, 0, 5_000);
    assert_eq!(
        v,
        CloseVerdict::Unacknowledged {
            fsns: 2..5,
            skipped: false
        }
    );
    let r = recover(&slot_files(&dir), 0).unwrap();
    assert_eq!(r.unacked(), 2..5);
}

#[test]
fn sf_28_a_timeout_of_0_or_minus_1_skips_the_wait() {
    let mut ring = Ring::new(cfg());
    let _ = ring.append(P, 0).unwrap();
    for timeout in [0, -1] {
        assert_eq!(
            ring.close(0, 0, timeout),
            CloseVerdict::Unacknowledged {
                fsns: 0..1,
                skipped: true
            }
        );
    }
}

#[test]
fn sf_d8_a_fully_acknowledged_close_leaves_only_the_lock_files() {
    let mut dir = MemDir::new();
    dir.put(slot::LOCK, Vec::new());
    dir.put(slot::LOCK_PID, b"4242".to_vec());
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits::default());
    let mut dict = SymbolDict::new();
    for i in 0..5 {
        let (_, a) = ring
            .append_with_symbols(&mut dict, &[format!("s{i}")], |_| P.to_vec(), 0)
            .unwrap();
        dir.apply_all(&a.ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok_with_tables(4, vec![t("a", 1)]).unwrap();
    dir.apply_all(&ring.durable_ack(&[t("a", 1)]).unwrap());
    let CloseVerdict::Drained { ops } = ring.close(0, 0, 5_000) else {
        panic!("drained")
    };
    dir.apply_all(&ops);
    assert_eq!(dir.names().collect::<Vec<_>>(), [".lock", ".lock.pid"]);
}

fn syncs(ops: &[FileOp]) -> usize {
    ops.iter()
        .filter(|op| matches!(op, FileOp::Sync { .. } | FileOp::SyncDir))
        .count()
}

#[test]
fn sf_36_no_sync_is_asked_for_by_default() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits::default());
    let mut dict = SymbolDict::new();
    let mut all = Vec::new();
    for i in 0..9 {
        let (_, a) = ring
            .append_with_symbols(&mut dict, &[format!("s{i}")], |_| P.to_vec(), 0)
            .unwrap();
        all.extend(a.ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok_with_tables(7, vec![]).unwrap();
    all.extend(ring.durable_ack(&[]).unwrap());
    assert!(all.iter().any(|op| matches!(op, FileOp::Unlink { .. })));
    for now in [0, 10_000, 1 << 40] {
        all.extend(ring.poll_checkpoint(now));
    }
    dir.apply_all(&all);
    let r = recover(&slot_files(&dir), 0).unwrap();
    all.extend(r.ops);
    if let CloseVerdict::Drained { ops } = ring.close(0, 0, 0) {
        all.extend(ops);
    }
    assert_eq!(syncs(&all), 0);
}

#[test]
fn sf_36_periodic_durability_checkpoints_every_journal_file_then_the_directory() {
    let mut ring = Ring::new(cfg())
        .with_durable_ack(OkQueueLimits::default())
        .with_durability(Durability::Periodic {
            interval_millis: 1_000,
        });
    let mut dict = SymbolDict::new();
    for i in 0..3 {
        let _ = ring
            .append_with_symbols(&mut dict, &[format!("s{i}")], |_| P.to_vec(), 0)
            .unwrap();
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok_with_tables(0, vec![]).unwrap();
    let _ = ring.durable_ack(&[]).unwrap();
    assert!(
        ring.poll_checkpoint(5_000).is_empty(),
        "the first poll starts the clock"
    );
    assert!(ring.poll_checkpoint(5_999).is_empty());
    let ops = ring.poll_checkpoint(6_000);
    let mut synced: Vec<&str> = ops.iter().filter_map(FileOp::file).collect();
    synced.sort_unstable();
    assert_eq!(
        synced,
        [
            ".ack-watermark",
            ".symbol-dict",
            "sf-0000000000000001.sfa",
            "sf-initial.sfa",
            "sf-manifest.bin"
        ]
    );
    assert_eq!(ops.last(), Some(&FileOp::SyncDir));
    assert!(ring.poll_checkpoint(6_999).is_empty());
    assert!(!ring.poll_checkpoint(7_000).is_empty());
}

#[test]
fn sf_17_a_ping_is_due_when_idle_for_the_interval_with_confirmations_pending() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(3, &mut dir);
    // Nothing pending: no ping, however long the idle.
    assert!(!ring.keepalive_due(1_000_000, 0, 200));
    let _ = ring.ok_with_tables(0, vec![t("a", 1)]).unwrap();
    assert!(!ring.keepalive_due(1_199, 1_000, 200));
    assert!(ring.keepalive_due(1_200, 1_000, 200));
    // Confirmed: nothing pending again.
    let _ = ring.durable_ack(&[t("a", 1)]).unwrap();
    assert!(!ring.keepalive_due(5_000, 1_000, 200));
    // Not in durable-ack mode: never.
    let mut plain = Ring::new(cfg());
    let _ = plain.append(P, 0).unwrap();
    let _ = plain.connect(0);
    while plain.next_to_send().is_some() {}
    let _ = plain.ok(0).unwrap();
    assert!(!plain.keepalive_due(5_000, 0, 200));
    // Disconnected: no ping to send.
    let _ = ring.ok_with_tables(1, vec![t("a", 2)]).unwrap();
    ring.disconnect();
    assert!(!ring.keepalive_due(5_000, 1_000, 200));
}

#[test]
fn sf_17_the_next_ping_is_due_an_interval_after_the_last_send() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(3, &mut dir);
    // Nothing waits for durability: no PING comes due, however long a driver waits.
    assert_eq!(ring.keepalive_in(1_000, 1_000, 200), None);
    let _ = ring.ok_with_tables(0, vec![t("a", 1)]).unwrap();
    assert_eq!(ring.keepalive_in(1_000, 1_000, 200), Some(200));
    assert_eq!(ring.keepalive_in(1_150, 1_000, 200), Some(50));
    assert_eq!(ring.keepalive_in(1_200, 1_000, 200), Some(0));
    assert_eq!(ring.keepalive_in(9_000, 1_000, 200), Some(0));
    assert_eq!(ring.keepalive_in(9_000, 1_000, 0), None);
    ring.disconnect();
    assert_eq!(ring.keepalive_in(9_000, 1_000, 200), None);
}

#[test]
fn sf_17_an_interval_of_0_disables_the_ping() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(3, &mut dir);
    let _ = ring.ok_with_tables(0, vec![t("a", 1)]).unwrap();
    assert!(ring.keepalive_due(1_200, 1_000, 200));
    // `durable_ack_keepalive_interval_millis=0` turns the idle PING off, as in the reference
    // client; it is not a PING at every look.
    assert!(!ring.keepalive_due(1_200, 1_000, 0));
    assert!(!ring.keepalive_due(1_000_000, 0, 0));
}

#[test]
fn sf_14_after_a_reconnect_the_replayed_frames_are_acknowledged_again() {
    let mut dir = MemDir::new();
    let mut ring = durable_ring(4, &mut dir);
    let _ = ring.ok_with_tables(0, vec![t("a", 1)]).unwrap();
    let _ = ring.ok_with_tables(2, vec![t("a", 3)]).unwrap();
    // The wire drops before any durable acknowledgement: the waiting OKs go with it.
    ring.disconnect();
    assert_eq!(ring.pending_oks().count(), 0);
    let w = ring.connect(0);
    assert_eq!(w.fsn_at_zero, 0);
    let replayed: Vec<i64> = std::iter::from_fn(|| ring.next_to_send().map(|(f, _)| f)).collect();
    assert_eq!(replayed, [0, 1, 2, 3]);
    // The server acknowledges the replay from wire sequence 0 again.
    let _ = ring.ok_with_tables(1, vec![t("a", 2)]).unwrap();
    let _ = ring.ok_with_tables(3, vec![t("a", 4)]).unwrap();
    let q: Vec<_> = ring.pending_oks().map(|e| (e.fsn, e.wire_seq)).collect();
    assert_eq!(q, [(1, 1), (3, 3)]);
    let _ = ring.durable_ack(&[t("a", 2)]).unwrap();
    assert_eq!(ring.acked_fsn(), 1);
    let _ = ring.durable_ack(&[t("a", 4)]).unwrap();
    assert_eq!(ring.acked_fsn(), 3);
    assert_eq!(ring.pending_oks().count(), 0);
}

#[test]
fn sf_14_an_ok_for_a_frame_not_yet_sent_is_refused_and_queues_nothing() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits::default());
    for _ in 0..3 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    let _ = ring.next_to_send();
    assert_eq!(
        ring.ok_with_tables(1, vec![]),
        Err(AckError::NotSent {
            wire_seq: 1,
            next_wire_seq: 1
        })
    );
    assert_eq!(ring.pending_oks().count(), 0);
    assert!(ring.ok_with_tables(0, vec![]).is_ok());
}

#[test]
fn sf_15_a_durable_ack_outside_durable_ack_mode_is_a_violation() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg());
    for _ in 0..2 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    assert!(!ring.durable_ack_mode());
    assert_eq!(
        ring.durable_ack(&[t("a", 1)]),
        Err(AckError::DurableAckNotRequested)
    );
    assert_eq!(ring.acked_fsn(), -1);
    assert!(durable_ring(1, &mut MemDir::new()).durable_ack_mode());
}

#[test]
fn sf_14_no_more_frames_go_out_than_the_ok_queue_can_hold() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits {
        max_entries: 3,
        max_bytes: 1 << 20,
    });
    for _ in 0..8 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    let sent = |ring: &mut Ring| {
        let mut v = Vec::new();
        while let Some((fsn, _)) = ring.next_to_send() {
            v.push(fsn);
        }
        v
    };
    assert_eq!(
        sent(&mut ring),
        [0, 1, 2],
        "exactly the bound, not one more"
    );
    for seq in 0..3 {
        let _ = ring
            .ok_with_tables(seq, vec![t("a", seq as i64 + 1)])
            .unwrap();
    }
    assert!(sent(&mut ring).is_empty(), "OKs alone free no room");
    // A durable ack of the first two frees two places.
    let _ = ring.durable_ack(&[t("a", 2)]).unwrap();
    assert_eq!(ring.acked_fsn(), 1);
    assert_eq!(sent(&mut ring), [3, 4]);
    let _ = ring.durable_ack(&[t("a", 3)]).unwrap();
    assert_eq!(sent(&mut ring), [5]);
    assert_eq!(ring.refused_oks(), 0);

    // Outside durable-ack mode nothing is held.
    let mut ring = Ring::new(cfg());
    for _ in 0..8 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    assert_eq!(sent(&mut ring).len(), 8);
}

#[test]
fn sf_14_an_ok_past_the_byte_bound_merges_into_the_newest_entry() {
    let mut dir = MemDir::new();
    // Room for two entries of one table "a" (25 bytes each), not three.
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits {
        max_entries: 100,
        max_bytes: 50,
    });
    for _ in 0..5 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    for seq in 0..5 {
        let _ = ring
            .ok_with_tables(seq, vec![t("a", seq as i64 + 1)])
            .unwrap();
    }
    let q: Vec<(i64, Vec<(String, i64)>)> = ring
        .pending_oks()
        .map(|e| (e.fsn, e.tables.clone()))
        .collect();
    assert_eq!(q, [(0, vec![t("a", 1)]), (4, vec![t("a", 5)])]);
    assert_eq!(ring.refused_oks(), 0);
    // The merged entry pops only at the higher seqTxn: nothing is acknowledged early.
    let _ = ring.durable_ack(&[t("a", 4)]).unwrap();
    assert_eq!(ring.acked_fsn(), 0);
    let _ = ring.durable_ack(&[t("a", 5)]).unwrap();
    assert_eq!(ring.acked_fsn(), 4);

    // A merged entry keeps every table of both, each at its higher seqTxn.
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits {
        max_entries: 100,
        max_bytes: 60,
    });
    for _ in 0..3 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok_with_tables(0, vec![t("a", 1)]).unwrap();
    let _ = ring.ok_with_tables(1, vec![t("b", 2)]).unwrap();
    let _ = ring.ok_with_tables(2, vec![t("a", 3)]).unwrap();
    let q: Vec<(i64, Vec<(String, i64)>)> = ring
        .pending_oks()
        .map(|e| (e.fsn, e.tables.clone()))
        .collect();
    assert_eq!(q, [(0, vec![t("a", 1)]), (2, vec![t("b", 2), t("a", 3)])]);
    let _ = ring.durable_ack(&[t("a", 3)]).unwrap();
    assert_eq!(ring.acked_fsn(), 0, "b is not durable yet");
    let _ = ring.durable_ack(&[t("b", 2)]).unwrap();
    assert_eq!(ring.acked_fsn(), 2);
}

#[test]
fn sf_14_a_merged_entry_names_the_newest_ok_and_counts_its_grown_bytes() {
    let mut dir = MemDir::new();
    let mut ring = Ring::new(cfg()).with_durable_ack(OkQueueLimits {
        max_entries: 100,
        max_bytes: 60,
    });
    for _ in 0..4 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    // 25 + 25 bytes queued; the third OK joins the second: [b, a] costs 16 + 9 + 9 = 34.
    let _ = ring.ok_with_tables(0, vec![t("a", 1)]).unwrap();
    let _ = ring.ok_with_tables(1, vec![t("b", 2)]).unwrap();
    let _ = ring.ok_with_tables(2, vec![t("a", 3)]).unwrap();
    let q: Vec<(i64, u64)> = ring.pending_oks().map(|e| (e.fsn, e.wire_seq)).collect();
    assert_eq!(
        q,
        [(0, 0), (2, 2)],
        "the merged entry stands for the newest OK"
    );
    // The merged entry is the last OK queued: the same OK again is out of order after it.
    assert!(matches!(
        ring.ok_with_tables(2, vec![t("a", 3)]),
        Err(AckError::OkOutOfOrder {
            wire_seq: 2,
            last: 2
        })
    ));
    // The queue now holds 25 + 34 = 59 bytes: a fourth OK fits neither beside (59 + 30) nor
    // merged (59 - 34 + 48), and the refusal reports the grown size.
    assert!(matches!(
        ring.ok_with_tables(3, vec![t("cdefgh", 4)]),
        Err(AckError::OkQueueFull {
            entries: 2,
            bytes: 59
        })
    ));
    assert_eq!(ring.refused_oks(), 1);
}

#[test]
// The engine's own cost is what is measured: the test reads a clock, the engine does not.
#[allow(clippy::disallowed_methods)]
fn sf_15_a_durable_ack_naming_many_tables_over_a_long_queue_is_applied_at_once() {
    let n = 30_000;
    let mut dir = MemDir::new();
    let big = RingConfig {
        segment_bytes: 1 << 20,
        ..cfg()
    };
    let mut ring = durable_ring_with(big, n, &mut dir);
    for i in 0..n {
        let _ = ring
            .ok_with_tables(i as u64, vec![t(&format!("table-{i}"), 2)])
            .unwrap();
    }
    // Every table named and durable but the head's: nothing pops, and the watermarks of
    // all the others are kept for their entries. Checking each against the whole queue took
    // seconds (the product of the two); it takes the sum.
    let ack: Vec<(String, i64)> = (0..n)
        .map(|i| t(&format!("table-{i}"), if i == 0 { 1 } else { 2 }))
        .collect();
    let started = std::time::Instant::now();
    let _ = ring.durable_ack(&ack).unwrap();
    let took = started.elapsed();
    assert_eq!(ring.acked_fsn(), -1);
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
    // The head's table becomes durable: every entry pops on the watermarks kept.
    let _ = ring.durable_ack(&[t("table-0", 2)]).unwrap();
    assert_eq!(ring.acked_fsn(), n as i64 - 1);
    assert_eq!(ring.pending_oks().count(), 0);
}

#[test]
// The engine's own cost is what is measured: the test reads a clock, the engine does not.
#[allow(clippy::disallowed_methods)]
fn sf_14_an_ok_merged_into_the_newest_entry_at_the_byte_bound_costs_the_sum_of_their_tables() {
    // The OK queue's byte bound holds one OK of 40,000 tables: the next OK, naming the same
    // tables at a higher seqTxn, joins the newest entry. Looking each of its tables up in the
    // entry's list one by one took the product of the two (seconds); it takes their sum.
    let n = 40_000;
    let mut dir = MemDir::new();
    let big = RingConfig {
        segment_bytes: 1 << 20,
        ..cfg()
    };
    let mut ring = Ring::new(big).with_durable_ack(OkQueueLimits {
        max_entries: 65_536,
        max_bytes: 1 << 20,
    });
    for _ in 0..2 {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let tables = |txn: i64| -> Vec<(String, i64)> {
        (0..n).map(|i| t(&format!("table-{i}"), txn)).collect()
    };
    let _ = ring.ok_with_tables(0, tables(1)).unwrap();
    let started = std::time::Instant::now();
    let _ = ring.ok_with_tables(1, tables(2)).unwrap();
    let took = started.elapsed();
    let queued: Vec<_> = ring.pending_oks().collect();
    assert_eq!(queued.len(), 1, "merged into the newest entry");
    assert_eq!((queued[0].fsn, queued[0].wire_seq), (1, 1));
    assert_eq!(queued[0].tables.len(), n, "each table once");
    assert!(queued[0].tables.iter().all(|(_, txn)| *txn == 2));
    assert_eq!(ring.refused_oks(), 0);
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
}
