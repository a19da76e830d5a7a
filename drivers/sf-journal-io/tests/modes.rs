//! Memory mode and SF mode over the same engine (SF-1 to SF-3, SF-6, SF-11, SF-18, SF-28,
//! SF-39, SF-W10).

mod common;
use common::*;

use sf_journal::ring::{AppendError, BackPressure, Link, DEFAULT_DISK_CAP, DEFAULT_MEMORY_CAP};
use sf_journal::slot;
use sf_journal::status::{Category, ErrorStatus};
use sf_journal::upgrade::UpgradeRequest;
use sf_journal_io::journal::{CloseStep, Closed};
use sf_journal_io::{Journal, JournalConfig, JournalError};

#[test]
fn sf_1_memory_mode_has_a_128_mib_cap_and_keeps_no_files() {
    let c = JournalConfig::memory();
    assert_eq!(c.ring.max_total_bytes, 128 << 20);
    assert_eq!(c.ring.max_total_bytes, DEFAULT_MEMORY_CAP);
    let mut j = Journal::memory(c);
    assert!(j.is_memory());
    assert_eq!(j.slot_dir(), None);
    assert_eq!(j.append(b"QWP1 x", 0).unwrap(), 0);
}

#[test]
fn sf_1_sf_mode_has_a_10_gib_cap_and_writes_under_sf_dir_sender_id() {
    let c = JournalConfig::disk();
    assert_eq!(c.ring.max_total_bytes, 10 << 30);
    assert_eq!(c.ring.max_total_bytes, DEFAULT_DISK_CAP);
    let sf = scratch("sf-mode-layout");
    let mut j = Journal::open(&sf, "orders", c).unwrap();
    assert!(!j.is_memory());
    assert_eq!(j.slot_dir(), Some(sf.join("orders").as_path()));
    let _ = j.append(b"QWP1 x", 0).unwrap();
    for f in [
        slot::LOCK,
        slot::LOCK_PID,
        slot::SEGMENT_INITIAL,
        slot::MANIFEST,
    ] {
        assert!(sf.join("orders").join(f).is_file(), "{f}");
    }
    let top: Vec<_> = std::fs::read_dir(&sf)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(top, ["orders"], "nothing is written outside the slot");
}

#[test]
fn sf_1_the_two_modes_differ_in_their_cap_alone() {
    // Same segments, append deadline (the retry budget of a full ring), sync and trim: only
    // where unacknowledged data lives, and so the cap, differs.
    let (mem, disk) = (JournalConfig::memory(), JournalConfig::disk());
    assert_ne!(mem.ring.max_total_bytes, disk.ring.max_total_bytes);
    let mut same = disk;
    same.ring.max_total_bytes = mem.ring.max_total_bytes;
    assert_eq!(same, mem);
    assert_eq!(mem.ring.append_deadline_millis, 30_000);
}

#[test]
fn sf_1_a_sender_id_that_is_not_one_directory_name_is_a_typed_error() {
    let sf = scratch("bad-sender-id");
    for id in ["", ".", "..", "a/b", "../x", "a\\b", "nul\0", "/abs"] {
        match Journal::open(&sf, id, small()) {
            Err(JournalError::InvalidSenderId(got)) => assert_eq!(got, id),
            other => panic!("{id:?}: expected a typed error, got {other:?}"),
        }
    }
    assert_eq!(std::fs::read_dir(&sf).unwrap().count(), 0);
    assert!(Journal::open(&sf, ".hidden-but-fine", small()).is_ok());
}

/// One script of appends, sends, acknowledgements and reconnects; returns what it saw.
fn script(j: &mut Journal) -> Vec<String> {
    let mut log = Vec::new();
    for i in 0..7 {
        log.push(format!("append {}", j.append(&payload(i), 0).unwrap()));
    }
    let _ = j.connect(0);
    for (fsn, bytes) in drain(j) {
        log.push(format!("send {fsn} {}", String::from_utf8(bytes).unwrap()));
    }
    j.ok(3, Vec::new()).unwrap();
    log.push(format!("acked {}", j.acked_fsn()));
    j.disconnect();
    for i in 7..9 {
        log.push(format!("append {}", j.append(&payload(i), 0).unwrap()));
    }
    let _ = j.connect(1);
    for (fsn, bytes) in drain(j) {
        log.push(format!("send {fsn} {}", String::from_utf8(bytes).unwrap()));
    }
    j.ok(4, Vec::new()).unwrap();
    log.push(format!(
        "acked {} replayed {} resident {}",
        j.acked_fsn(),
        j.ring().replayed_frames(),
        j.ring().resident_bytes()
    ));
    log
}

#[test]
fn sf_1_both_modes_behave_the_same_on_the_wire() {
    let mut mem = Journal::memory(small());
    let sf = scratch("same-behaviour");
    let mut disk = Journal::open(&sf, "s", small()).unwrap();
    let a = script(&mut mem);
    let b = script(&mut disk);
    assert_eq!(a, b);
    // The script acknowledged through FSN 7 (one catch-up frame, then wire seq 4 stands for
    // FSN 4 + 4 - 1); of three segments of three frames only the last is left.
    assert_eq!(a.last().unwrap(), "acked 7 replayed 3 resident 128");
}

#[test]
fn sf_2_append_returns_the_fsn_without_any_connection() {
    for mut j in [
        Journal::memory(small()),
        Journal::open(&scratch("no-connection"), "s", small()).unwrap(),
    ] {
        for i in 0..20 {
            assert_eq!(j.append(&payload(i), 0).unwrap(), i as i64);
        }
        assert_eq!(j.published_fsn(), 19);
        assert_eq!(j.acked_fsn(), -1);
        assert_eq!(
            j.next_frame().unwrap(),
            None,
            "nothing is sent without a connection"
        );
        let _ = j.connect(0);
        assert_eq!(drain(&mut j), frames(0, 20));
    }
}

#[test]
fn sf_3_memory_mode_loses_unacknowledged_frames_with_the_process() {
    let mut j = Journal::memory(small());
    for i in 0..5 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    drop(j);
    let mut next = Journal::memory(small());
    assert_eq!(next.published_fsn(), -1);
    assert_eq!(next.recovered(), 0..0);
    let _ = next.connect(0);
    assert!(drain(&mut next).is_empty());
}

#[test]
fn sf_3_sf_mode_recovers_unacknowledged_frames_after_a_drop_without_close() {
    let sf = scratch("drop-without-close");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..10 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    let _ = j.connect(0);
    let _ = drain(&mut j);
    // Acknowledges FSN 4: the first segment (FSNs 0..3) is trimmed, the second (3..6) is not.
    j.ok(4, Vec::new()).unwrap();
    drop(j);
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!(
        j.recovered(),
        3..10,
        "the lowest surviving segment is sent again whole"
    );
    assert_eq!(j.acked_fsn(), 2);
    let _ = j.connect(0);
    assert_eq!(drain(&mut j), frames(3, 10));
    assert_eq!(j.append(&payload(10), 0).unwrap(), 10);
}

#[test]
fn sf_6_frames_are_replayable_on_any_later_connection_and_after_a_restart() {
    let sf = scratch("replayable");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..8 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    for _ in 0..3 {
        let _ = j.connect(0);
        assert_eq!(drain(&mut j), frames(0, 8));
        j.disconnect();
    }
    drop(j);
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let _ = j.connect(2);
    assert_eq!(drain(&mut j), frames(0, 8));
}

#[test]
fn sf_21_frames_recovered_after_a_restart_count_as_recovered_not_replayed() {
    let sf = scratch("replayed-after-restart");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..4 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    let _ = j.connect(0);
    assert_eq!(drain(&mut j), frames(0, 4));
    drop(j);
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let _ = j.connect(0);
    assert_eq!(drain(&mut j), frames(0, 4));
    // This process never sent them before: recovered, not replayed.
    assert_eq!(j.stats().recovered_frames, 4);
    assert_eq!(j.stats().replayed_frames, 0);
    // Sent again after a reconnect of this process, they are replayed.
    j.disconnect();
    let _ = j.connect(0);
    assert_eq!(drain(&mut j), frames(0, 4));
    assert_eq!(j.stats().replayed_frames, 4);
}

#[test]
fn sf_11_a_frame_sent_but_unacknowledged_is_sent_again_after_a_disconnect() {
    for mut j in [
        Journal::memory(small()),
        Journal::open(&scratch("at-least-once"), "s", small()).unwrap(),
    ] {
        for i in 0..6 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        let _ = j.connect(0);
        assert_eq!(drain(&mut j), frames(0, 6));
        j.ok(1, Vec::new()).unwrap();
        j.disconnect();
        let _ = j.connect(0);
        // FSNs 2 to 5 reached the server once already; they go again, 0 and 1 do not.
        assert_eq!(drain(&mut j), frames(2, 6));
        assert_eq!(j.ring().replayed_frames(), 4);
    }
}

#[test]
fn sf_18_appends_go_on_while_the_wire_is_down_and_are_sent_after_reconnect() {
    let sf = scratch("wire-down");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..3 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    let _ = j.connect(0);
    let _ = drain(&mut j);
    j.disconnect();
    j.set_link(Link::Reconnecting {
        attempts: 2,
        outage_start_millis: 1_000,
    });
    for i in 3..9 {
        assert_eq!(j.append(&payload(i), 5).unwrap(), i as i64);
    }
    assert_eq!(j.next_frame().unwrap(), None);
    let _ = j.connect(0);
    assert_eq!(drain(&mut j), frames(0, 9));
}

#[test]
fn sf_18_beyond_capacity_the_producer_is_told_it_is_the_reconnect() {
    let mut c = small();
    c.ring.max_total_bytes = 256;
    let mut j = Journal::open(&scratch("wire-down-full"), "s", c).unwrap();
    for i in 0..6 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    j.set_link(Link::Reconnecting {
        attempts: 3,
        outage_start_millis: 77,
    });
    match j.append(&payload(6), 10) {
        Err(JournalError::Append(AppendError::Full { case, .. })) => assert_eq!(
            case,
            BackPressure::WhileReconnecting {
                attempts: 3,
                outage_start_millis: 77
            }
        ),
        other => panic!("expected a full ring, got {other:?}"),
    }
    assert_eq!(j.published_fsn(), 5);
}

fn closed(step: CloseStep) -> Closed {
    match step {
        CloseStep::Done(c) => c,
        other => panic!("expected the close to end, got {other:?}"),
    }
}

#[test]
fn sf_28_a_skipped_close_releases_the_lock_and_leaves_the_tail() {
    for timeout in [0, -1] {
        let sf = scratch("skipped-close");
        let mut j = Journal::open(&sf, "s", small()).unwrap();
        for i in 0..4 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        let c = closed(j.close(0, 0, timeout).unwrap());
        assert_eq!(c.unacknowledged, 0..4);
        assert!(c.skipped);
        assert_eq!(c.terminal, None);
        assert!(matches!(j.append(b"x", 0), Err(JournalError::Closed)));
        // The lock is released while the closed journal still exists.
        let mut next = Journal::open(&sf, "s", small()).unwrap();
        let _ = next.connect(0);
        assert_eq!(drain(&mut next), frames(0, 4));
        drop(j);
    }
}

#[test]
fn sf_28_a_close_hands_back_a_terminal_error_not_yet_delivered() {
    let sf = scratch("latched");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let _ = j.append(&payload(0), 0).unwrap();
    let _ = j.connect(0);
    let _ = drain(&mut j);
    let (fsn, cat) = j.reject(0, ErrorStatus::SchemaMismatch).unwrap();
    assert_eq!((fsn, cat), (Some(0), Category::Terminal));
    let c = closed(j.close(0, 0, 0).unwrap());
    let t = c.terminal.expect("the undelivered error comes back");
    assert_eq!(
        (t.status, t.wire_seq, t.fsn),
        (ErrorStatus::SchemaMismatch, 0, Some(0))
    );

    // Once delivered it is not handed back again; a retriable error is never latched.
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let _ = j.connect(0);
    let _ = drain(&mut j);
    let _ = j.reject(0, ErrorStatus::ParseError).unwrap();
    assert!(j.take_terminal().is_some());
    let _ = j.connect(0);
    let _ = drain(&mut j);
    assert_eq!(
        j.reject(0, ErrorStatus::WriteError).unwrap().1,
        Category::Retriable
    );
    assert_eq!(closed(j.close(0, 0, -1).unwrap()).terminal, None);
}

#[test]
fn sf_28_a_close_waits_until_its_deadline_then_ends_with_the_tail() {
    let mut j = Journal::memory(small());
    let _ = j.append(&payload(0), 0).unwrap();
    assert_eq!(
        j.close(10, 10, 5_000).unwrap(),
        CloseStep::Wait {
            deadline_millis: 5_010
        }
    );
    assert_eq!(
        j.close(5_009, 10, 5_000).unwrap(),
        CloseStep::Wait {
            deadline_millis: 5_010
        }
    );
    let c = closed(j.close(5_010, 10, 5_000).unwrap());
    assert_eq!((c.unacknowledged, c.skipped), (0..1, false));
}

#[test]
fn sf_39_the_recovered_dictionary_resolves_the_ids_of_replayed_frames() {
    let sf = scratch("dictionary");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let rows: [&[&str]; 4] = [&["eur", "usd"], &["usd", "gbp"], &["jpy"], &["eur", "jpy"]];
    // A frame holds only ids (delta-encoded against the dictionary), never the symbols.
    let encode = |ids: &[u32]| {
        let mut p = b"QWP1".to_vec();
        for id in ids {
            p.extend_from_slice(&id.to_le_bytes());
        }
        p
    };
    for row in rows {
        let _ = j.append_with_symbols(row, encode, 0).unwrap();
    }
    drop(j);
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!(j.dict().symbols(), ["eur", "usd", "gbp", "jpy"]);
    let _ = j.connect(0);
    let sent = drain(&mut j);
    assert_eq!(sent.len(), rows.len());
    for ((_, frame), row) in sent.iter().zip(rows) {
        let ids = frame[4..]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()) as usize);
        let names: Vec<&str> = ids.map(|id| j.dict().symbols()[id].as_str()).collect();
        assert_eq!(names, row);
    }
    // Ids stay dense after the restart.
    let (_, ids) = j.append_with_symbols(&["chf", "eur"], encode, 0).unwrap();
    assert_eq!(ids, [4, 0]);
}

#[test]
fn sf_w10_segment_files_are_4_mib_and_no_client_id_is_sent_unless_configured() {
    let sf = scratch("defaults");
    let mut j = Journal::open(&sf, "s", JournalConfig::disk()).unwrap();
    let _ = j.append(b"QWP1", 0).unwrap();
    let len = std::fs::metadata(sf.join("s").join(slot::SEGMENT_INITIAL))
        .unwrap()
        .len();
    assert_eq!(len, 4 << 20);
    let named = |r: &UpgradeRequest| {
        r.headers()
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("X-QWP-Client-Id"))
    };
    assert!(!named(&UpgradeRequest::default()));
    assert!(named(&UpgradeRequest {
        client_id: Some("c1".into()),
        ..UpgradeRequest::default()
    }));
}

#[test]
fn sf_27_a_timed_out_close_leaves_the_tail_on_disk_and_memory_loses_it() {
    let sf = scratch("timed-out-close");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let mut m = Journal::memory(small());
    for i in 0..5 {
        let _ = j.append(&payload(i), 0).unwrap();
        let _ = m.append(&payload(i), 0).unwrap();
    }
    for x in [&mut j, &mut m] {
        let _ = x.connect(0);
        let _ = drain(x);
        x.ok(1, Vec::new()).unwrap();
        assert!(matches!(
            x.close(100, 100, 50).unwrap(),
            CloseStep::Wait { .. }
        ));
        let c = closed(x.close(150, 100, 50).unwrap());
        assert_eq!((c.unacknowledged, c.skipped), (2..5, false));
    }
    // SF mode: the next sender on the slot finds the tail (the whole lowest segment).
    let mut next = Journal::open(&sf, "s", small()).unwrap();
    let _ = next.connect(0);
    assert_eq!(drain(&mut next), frames(0, 5));
    // Memory mode: the storage is gone with the close.
    assert!(matches!(m.next_frame(), Err(JournalError::Closed)));
}

#[test]
fn sf_27_a_status_arriving_after_close_moves_nothing_and_is_refused_as_closed() {
    for mut j in [
        Journal::memory(small()),
        Journal::open(&scratch("status-after-close"), "s", small()).unwrap(),
    ] {
        for i in 0..3 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        let _ = j.connect(0);
        assert_eq!(drain(&mut j).len(), 3);
        let c = closed(j.close(0, 0, 0).unwrap());
        assert_eq!(c.unacknowledged, 0..3);
        // The server acknowledges, refuses and confirms only now: the close said 0..3 were
        // not acknowledged, and that stays so.
        assert!(matches!(j.ok(2, Vec::new()), Err(JournalError::Closed)));
        assert!(matches!(
            j.reject_error(1, ErrorStatus::SchemaMismatch, "late".into()),
            Err(JournalError::Closed)
        ));
        assert!(matches!(
            j.durable_ack(&[("trades".into(), 1)]),
            Err(JournalError::Closed)
        ));
        assert_eq!(j.acked_fsn(), -1);
        assert_eq!(j.take_terminal(), None);
        let s = j.stats();
        assert_eq!((s.oks, s.durable_acks), (1, 1), "each counted as taken");
        assert_eq!((s.errors_terminal, s.violations), (0, 0));
    }
}

#[test]
fn sf_28_a_close_whose_file_removals_fail_still_releases_the_lock_and_keeps_the_terminal() {
    // Everything is acknowledged, so the close removes the journal's files; one removal fails
    // (`.symbol-dict` is a directory here). The close reports the failure, and still ends:
    // the slot lock is released, and the terminal error not yet delivered is still handed
    // over (by the journal, which the failed close leaves closed).
    for timeout in [0, 5_000] {
        let sf = scratch("close-removal-fails");
        let slot_dir = sf.join("s");
        let mut j = Journal::open(&sf, "s", small()).unwrap();
        for i in 0..2 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        // A terminal error is latched for FSN 1, then a later connection has both acknowledged.
        let _ = j.connect(0);
        let _ = drain(&mut j);
        let _ = j.reject(1, ErrorStatus::SchemaMismatch).unwrap();
        let _ = j.connect(0);
        let _ = drain(&mut j);
        j.ok(1, Vec::new()).unwrap();
        std::fs::create_dir(slot_dir.join(slot::SYMBOL_DICT)).unwrap();
        std::fs::write(slot_dir.join(slot::SYMBOL_DICT).join("x"), b"x").unwrap();
        let r = j.close(0, 0, timeout);
        assert!(matches!(r, Err(JournalError::Io(_))), "{timeout}: {r:?}");
        assert!(
            sf_journal_io::SlotLock::acquire(&slot_dir).is_ok(),
            "{timeout}: the lock is released"
        );
        assert!(j.is_closed(), "{timeout}");
        assert!(matches!(j.close(0, 0, timeout), Err(JournalError::Closed)));
        let t = j
            .take_terminal()
            .expect("the terminal error is still handed over");
        assert_eq!((t.status, t.fsn), (ErrorStatus::SchemaMismatch, Some(1)));
        drop(j);
    }
}

/// A journal in `mode` (memory or SF) holding FSNs 0 and 1, both sent, FSN 0 refused by the
/// server with SCHEMA_MISMATCH (terminal).
fn stopped_by_schema_mismatch(mode: &str) -> Journal {
    let mut j = if mode == "memory" {
        Journal::memory(small())
    } else {
        Journal::open(&scratch("stopped"), "s", small()).unwrap()
    };
    for i in 0..2 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    let _ = j.connect(0);
    let _ = drain(&mut j);
    let e = j
        .reject_error(0, ErrorStatus::SchemaMismatch, "no such column".into())
        .unwrap();
    assert_eq!(e.category, Category::Terminal);
    j
}

fn is_the_schema_mismatch(r: &Result<i64, JournalError>) -> bool {
    matches!(r, Err(JournalError::Terminal(e))
        if (e.status, e.wire_seq, e.fsn, e.message.as_str())
            == (ErrorStatus::SchemaMismatch, 0, Some(0), "no such column"))
}

#[test]
fn sf_44_after_a_terminal_error_the_next_append_is_refused_naming_it() {
    for mode in ["memory", "disk"] {
        // Not yet delivered: the producer's append delivers it, so the close does not again.
        let mut j = stopped_by_schema_mismatch(mode);
        let r = j.append(&payload(2), 0);
        assert!(is_the_schema_mismatch(&r), "{mode}: {r:?}");
        assert_eq!(j.published_fsn(), 1, "{mode}: nothing taken after the stop");
        let r = j.append(&payload(2), 0);
        assert!(is_the_schema_mismatch(&r), "{mode}: still stopped: {r:?}");
        let r = j
            .append_with_symbols(&["a"], |_| payload(2), 0)
            .map(|(f, _)| f);
        assert!(is_the_schema_mismatch(&r), "{mode}: {r:?}");
        assert!(
            j.dict().symbols().is_empty(),
            "{mode}: a refused frame assigns no ids"
        );
        assert_eq!(closed(j.close(0, 0, 0).unwrap()).terminal, None, "{mode}");

        // Delivered by the drain first: the sender stays stopped all the same.
        let mut j = stopped_by_schema_mismatch(mode);
        assert!(j.take_terminal().is_some());
        let r = j.append(&payload(2), 0);
        assert!(is_the_schema_mismatch(&r), "{mode}: {r:?}");
        assert_eq!(j.published_fsn(), 1, "{mode}");
    }
}

#[test]
fn sf_44_a_close_after_a_terminal_error_ends_at_once_with_it() {
    for mode in ["memory", "disk"] {
        // Not yet delivered: the close hands it back without waiting for its deadline.
        let mut j = stopped_by_schema_mismatch(mode);
        let c = closed(j.close(10, 10, 5_000).unwrap());
        assert_eq!((c.unacknowledged, c.skipped), (0..2, false), "{mode}");
        let t = c.terminal.expect("the undelivered terminal error");
        assert_eq!((t.status, t.fsn), (ErrorStatus::SchemaMismatch, Some(0)));

        // Already delivered (by the drain): the close still ends at once, with nothing to hand.
        let mut j = stopped_by_schema_mismatch(mode);
        assert!(j.take_terminal().is_some());
        let c = closed(j.close(10, 10, 5_000).unwrap());
        assert_eq!((c.unacknowledged, c.terminal), (0..2, None), "{mode}");
    }
}

#[test]
fn sf_44_a_later_terminal_error_is_still_handed_back_and_the_first_still_names_the_stop() {
    for mode in ["memory", "disk"] {
        let mut j = stopped_by_schema_mismatch(mode);
        assert!(j.take_terminal().is_some());
        // A drain run again meets another terminal error: not yet delivered, so the close
        // hands it back; the appends go on naming the error the sender stopped on.
        let _ = j.connect(0);
        let _ = drain(&mut j);
        let _ = j.reject(0, ErrorStatus::ParseError).unwrap();
        let r = j.append(&payload(2), 0);
        assert!(is_the_schema_mismatch(&r), "{mode}: {r:?}");
        let c = closed(j.close(0, 0, 5_000).unwrap());
        assert_eq!(
            c.terminal.map(|t| t.status),
            Some(ErrorStatus::ParseError),
            "{mode}"
        );
    }
}
