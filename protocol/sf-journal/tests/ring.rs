//! The ring: FSNs, wire windows, trim and back-pressure (SF-7 to SF-13, SF-19 to SF-21, SF-23,
//! SF-24).

mod common;
use common::*;

use sf_journal::ring::{AckError, AppendError, BackPressure, Link, Ring, RingConfig};
use sf_journal::slot::SPARE;
use sf_journal::{FileOp, MemDir};

/// Segments of 64 bytes: 24 of header, so two frames of 12-byte payloads (20 bytes each) fit.
fn tiny(max_segments: u64) -> RingConfig {
    RingConfig {
        segment_bytes: 64,
        max_total_bytes: 64 * max_segments,
        append_deadline_millis: 1_000,
    }
}

const P: &[u8; 12] = b"QWP1-payload";

fn fill(ring: &mut Ring, dir: &mut MemDir, n: usize) {
    for _ in 0..n {
        dir.apply_all(&ring.append(P, 0).unwrap().ops);
    }
}

fn unlinked(ops: &[FileOp]) -> Vec<String> {
    ops.iter()
        .filter_map(|op| match op {
            FileOp::Unlink { file } => Some(file.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn sf_7_fsns_are_assigned_at_append_in_order_from_0() {
    let mut ring = Ring::new(tiny(100));
    assert_eq!(ring.published_fsn(), -1);
    for i in 0..10 {
        assert_eq!(ring.append(P, 0).unwrap().fsn, i);
        assert_eq!(ring.published_fsn(), i);
    }
}

#[test]
fn sf_7_fsns_keep_counting_across_reconnects() {
    let mut ring = Ring::new(tiny(100));
    let _ = ring.append(P, 0).unwrap();
    let _ = ring.connect(0);
    ring.disconnect();
    let _ = ring.connect(0);
    assert_eq!(ring.append(P, 0).unwrap().fsn, 1);
}

#[test]
fn sf_8_the_wire_sequence_restarts_at_0_on_every_connection() {
    let mut ring = Ring::new(tiny(100));
    for _ in 0..4 {
        let _ = ring.append(P, 0).unwrap();
    }
    let w1 = ring.connect(0);
    while ring.next_to_send().is_some() {}
    assert_eq!(w1.fsn_of(0), Some(0));
    let _ = ring.ok(1).unwrap();
    ring.disconnect();
    let w2 = ring.connect(0);
    while ring.next_to_send().is_some() {}
    assert_ne!(w1.generation, w2.generation);
    // Wire sequence 0 of the new connection is the first unacknowledged frame.
    assert_eq!(w2.fsn_of(0), Some(2));
}

#[test]
fn sf_8_an_ok_counts_from_its_own_connections_zero_and_a_wire_sequence_is_never_a_dedupe_key() {
    let mut ring = Ring::new(tiny(100));
    for _ in 0..6 {
        let _ = ring.append(P, 0).unwrap();
    }
    let _ = ring.connect(0);
    let first: Vec<i64> = std::iter::from_fn(|| ring.next_to_send().map(|(f, _)| f)).collect();
    assert_eq!(first, [0, 1, 2, 3, 4, 5]);
    let _ = ring.ok(1).unwrap();
    assert_eq!(ring.acked_fsn(), 1);
    ring.disconnect();
    // The second connection sends the frames it never had acknowledged, from wire sequence 0;
    // OKs of sequences the first connection already used acknowledge this connection's frames.
    let w2 = ring.connect(0);
    let second: Vec<i64> = std::iter::from_fn(|| ring.next_to_send().map(|(f, _)| f)).collect();
    assert_eq!(second, [2, 3, 4, 5]);
    assert_eq!((w2.fsn_of(0), w2.fsn_of(3)), (Some(2), Some(5)));
    let _ = ring.ok(0).unwrap();
    assert_eq!(ring.acked_fsn(), 2);
    let _ = ring.ok(1).unwrap();
    assert_eq!(ring.acked_fsn(), 3);
    ring.disconnect();
    // Frames sent but not acknowledged go again on the third connection, under new sequences.
    let w3 = ring.connect(0);
    let third: Vec<i64> = std::iter::from_fn(|| ring.next_to_send().map(|(f, _)| f)).collect();
    assert_eq!(third, [4, 5]);
    assert_eq!(w3.fsn_of(0), Some(4));
    let _ = ring.ok(1).unwrap();
    assert_eq!(ring.acked_fsn(), 5);
}

#[test]
fn sf_9_fsn_is_fsn_at_zero_plus_wire_seq_less_the_catch_up_frames() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 6);
    let _ = ring.ack(1).unwrap();
    let w = ring.connect(3);
    while ring.next_to_send().is_some() {}
    assert_eq!(w.fsn_at_zero, 2);
    assert_eq!(w.fsn_of(0), None);
    assert_eq!(w.fsn_of(2), None);
    assert_eq!(w.fsn_of(3), Some(2));
    assert_eq!(w.fsn_of(5), Some(4));
    // An OK of a catch-up frame acknowledges nothing.
    assert!(ring.ok(2).unwrap().is_empty());
    assert_eq!(ring.acked_fsn(), 1);
    let _ = ring.ok(4).unwrap();
    assert_eq!(ring.acked_fsn(), 3);
}

#[test]
fn sf_10_frames_go_out_in_strict_fsn_order() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    for i in 0..7 {
        let mut p = payload(i);
        p.truncate(12);
        dir.apply_all(&ring.append(&p, 0).unwrap().ops);
    }
    let _ = ring.connect(0);
    let mut fsns = Vec::new();
    while let Some((fsn, loc)) = ring.next_to_send() {
        let b = &dir.get(&loc.file).unwrap()[loc.offset as usize..][..loc.len as usize];
        let mut want = payload(fsn as usize);
        want.truncate(12);
        assert_eq!(b, want.as_slice());
        fsns.push(fsn);
    }
    assert_eq!(fsns, (0..7).collect::<Vec<_>>());
}

#[test]
fn sf_12_frames_are_held_until_acknowledged() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 6);
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    // Sent is not acknowledged: every segment stays.
    assert_eq!(ring.segment_files().count(), 3);
    assert_eq!(ring.acked_fsn(), -1);
    assert!(ring.locate(0).is_some());
}

#[test]
fn sf_13_an_ok_trims_sealed_segments_whose_last_fsn_is_at_or_below_the_ack() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 6); // segments [0,1] [2,3] [4,5]
    let files: Vec<String> = ring.segment_files().map(str::to_owned).collect();
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    // Up to FSN 0: the first segment still holds FSN 1.
    assert!(unlinked(&ring.ok(0).unwrap()).is_empty());
    // Up to FSN 1 exactly: the first segment goes.
    let ops = ring.ok(1).unwrap();
    assert_eq!(unlinked(&ops), [files[0].clone()]);
    dir.apply_all(&ops);
    assert!(dir.get(&files[0]).is_none());
    assert_eq!(ring.locate(1), None);
    // Everything acknowledged: the active segment is kept.
    let ops = ring.ok(5).unwrap();
    assert_eq!(unlinked(&ops), [files[1].clone()]);
    assert_eq!(
        ring.segment_files().collect::<Vec<_>>(),
        [files[2].as_str()]
    );
    assert_eq!(ring.acked_fsn(), 5);
}

#[test]
fn sf_13_an_older_ok_does_not_move_the_ack_back() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok(2).unwrap();
    assert!(ring.ok(1).unwrap().is_empty());
    assert_eq!(ring.acked_fsn(), 2);
}

#[test]
fn sf_13_an_ok_beyond_the_published_fsn_is_refused() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 2);
    assert_eq!(ring.ok(0), Err(AckError::NotConnected));
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    assert!(ring.ok(1).is_ok());
    assert_eq!(
        ring.ok(2),
        Err(AckError::BeyondPublished {
            fsn: 2,
            published: 1
        })
    );
    assert_eq!(ring.acked_fsn(), 1);
    // A wire sequence past any FSN is refused, not an overflow.
    assert!(matches!(
        ring.ok(u64::MAX),
        Err(AckError::BeyondPublished { fsn: i64::MAX, .. })
    ));
    assert!(matches!(
        ring.ok(i64::MAX as u64),
        Err(AckError::BeyondPublished { .. })
    ));
}

#[test]
fn sf_19_a_reconnect_rewinds_to_the_first_unacknowledged_frame() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 5);
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok(1).unwrap();
    ring.disconnect();
    let w = ring.connect(0);
    assert_eq!(w.fsn_at_zero, 2);
    let again: Vec<i64> = std::iter::from_fn(|| ring.next_to_send().map(|(f, _)| f)).collect();
    assert_eq!(again, [2, 3, 4]);
}

#[test]
fn sf_20_frames_appended_during_replay_are_picked_up() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 2);
    let _ = ring.connect(0);
    assert_eq!(ring.next_to_send().map(|s| s.0), Some(0));
    assert_eq!(ring.next_to_send().map(|s| s.0), Some(1));
    assert_eq!(ring.next_to_send(), None);
    fill(&mut ring, &mut dir, 1);
    assert_eq!(ring.next_to_send().map(|s| s.0), Some(2));
}

#[test]
fn sf_21_frames_sent_again_after_a_reconnect_are_counted() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    let _ = ring.connect(0);
    let _ = ring.next_to_send();
    let _ = ring.next_to_send();
    let _ = ring.next_to_send();
    assert_eq!(ring.replayed_frames(), 0);
    let _ = ring.ok(0).unwrap();
    ring.disconnect();
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    // FSNs 1 and 2 went out twice; FSN 3 once.
    assert_eq!(ring.replayed_frames(), 2);
}

#[test]
fn sf_23_a_full_ring_refuses_until_the_deadline_then_fails() {
    let mut ring = Ring::new(tiny(2));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    assert_eq!(ring.resident_bytes(), 128);
    let first = ring.append(P, 5_000).unwrap_err();
    assert!(matches!(
        first,
        AppendError::Full {
            deadline_millis: 6_000,
            ..
        }
    ));
    // One millisecond before the deadline: still waiting.
    assert!(matches!(
        ring.append(P, 5_999),
        Err(AppendError::Full { .. })
    ));
    // At the deadline: the typed failure.
    assert_eq!(
        ring.append(P, 6_000),
        Err(AppendError::DeadlineExceeded {
            case: BackPressure::WhilePublishing,
            waited_millis: 1_000
        })
    );
    assert_eq!(ring.published_fsn(), 3, "a refused frame gets no FSN");
}

#[test]
fn sf_23_trim_frees_room_and_the_wait_ends() {
    let mut ring = Ring::new(tiny(2));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    assert!(ring.append(P, 5_000).is_err());
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    dir.apply_all(&ring.ok(1).unwrap());
    let a = ring.append(P, 5_500).unwrap();
    assert_eq!(a.fsn, 4);
    // A later full ring starts a new wait from its own first refusal.
    dir.apply_all(&a.ops);
    fill(&mut ring, &mut dir, 1);
    assert!(matches!(
        ring.append(P, 9_000),
        Err(AppendError::Full {
            deadline_millis: 10_000,
            ..
        })
    ));
}

#[test]
fn sf_23_a_frame_larger_than_a_segment_is_a_typed_error() {
    let mut ring = Ring::new(tiny(2));
    // 64 − 24 − 8 = 32 payload bytes fit exactly.
    assert!(ring.append(&[1; 32], 0).is_ok());
    assert_eq!(
        ring.append(&[1; 33], 0),
        Err(AppendError::FrameTooLarge {
            len: 33,
            segment_bytes: 64
        })
    );
}

#[test]
fn sf_24_the_verdict_names_back_pressure_while_publishing() {
    let mut ring = Ring::new(tiny(1));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 2);
    assert!(matches!(
        ring.append(P, 0),
        Err(AppendError::Full {
            case: BackPressure::WhilePublishing,
            ..
        })
    ));
}

#[test]
fn sf_24_the_verdict_names_reconnecting_with_attempts_and_outage_start() {
    let mut ring = Ring::new(tiny(1));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 2);
    ring.set_link(Link::Reconnecting {
        attempts: 7,
        outage_start_millis: 123,
    });
    let want = BackPressure::WhileReconnecting {
        attempts: 7,
        outage_start_millis: 123,
    };
    assert!(matches!(ring.append(P, 0), Err(AppendError::Full { case, .. }) if case == want));
    assert!(
        matches!(ring.append(P, 1_000), Err(AppendError::DeadlineExceeded { case, .. }) if case == want)
    );
    // A successful upgrade ends the outage.
    let _ = ring.connect(0);
    assert!(matches!(
        ring.append(P, 2_000),
        Err(AppendError::Full {
            case: BackPressure::WhilePublishing,
            ..
        })
    ));
}

#[test]
fn sf_d3_the_ring_names_its_segments_initial_then_by_generation_and_pre_sizes_them() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 5);
    let files: Vec<&str> = ring.segment_files().collect();
    assert_eq!(
        files,
        [
            "sf-initial.sfa",
            "sf-0000000000000001.sfa",
            "sf-0000000000000002.sfa"
        ]
    );
    for f in files {
        assert_eq!(dir.get(f).unwrap().len(), 64);
    }
}

#[test]
fn memory_and_disk_defaults_differ_only_in_the_cap() {
    let m = RingConfig::memory();
    let d = RingConfig::disk();
    assert_eq!(m.max_total_bytes, 128 << 20);
    assert_eq!(d.max_total_bytes, 10 << 30);
    assert_eq!(m.segment_bytes, d.segment_bytes);
    assert_eq!(m.segment_bytes, 4 << 20);
}

#[test]
fn sf_43_a_rejected_frame_is_not_trimmed_and_a_retriable_error_replays_it() {
    use sf_journal::status::{Category, ErrorStatus};
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let _ = ring.ok(1).unwrap();
    let (fsn, category) = ring.reject(2, ErrorStatus::WriteError).unwrap();
    assert_eq!((fsn, category), (Some(2), Category::Retriable));
    assert_eq!(ring.acked_fsn(), 1);
    assert!(ring.locate(2).is_some());
    // The connection is over; the next one sends FSN 2 again.
    assert_eq!(ring.next_to_send(), None);
    let _ = ring.connect(0);
    assert_eq!(ring.next_to_send().map(|s| s.0), Some(2));
}

#[test]
fn sf_43_a_terminal_error_leaves_the_frame_in_the_journal() {
    use sf_journal::status::{Category, ErrorStatus};
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 3);
    let _ = ring.connect(1);
    while ring.next_to_send().is_some() {}
    // A rejected catch-up frame concerns no FSN.
    assert_eq!(
        ring.reject(0, ErrorStatus::ParseError).unwrap(),
        (None, Category::Terminal)
    );
    let _ = ring.connect(0);
    while ring.next_to_send().is_some() {}
    let (fsn, category) = ring.reject(1, ErrorStatus::SchemaMismatch).unwrap();
    assert_eq!((fsn, category), (Some(1), Category::Terminal));
    assert_eq!(ring.acked_fsn(), -1);
    assert_eq!(ring.segment_files().count(), 2);
    assert!(matches!(
        ring.reject(0, ErrorStatus::WriteError),
        Err(AckError::NotConnected)
    ));
}

#[test]
fn sf_13_an_ok_for_a_frame_not_yet_sent_on_this_connection_is_refused_and_trims_nothing() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 6);
    let _ = ring.connect(2);
    let _ = ring.next_to_send();
    let _ = ring.next_to_send();
    // Catch-up 0 and 1, then FSN 0 and 1 sent as wire sequences 2 and 3.
    assert_eq!(
        ring.ok(4),
        Err(AckError::NotSent {
            wire_seq: 4,
            next_wire_seq: 4
        })
    );
    assert_eq!(ring.acked_fsn(), -1);
    assert_eq!(ring.segment_files().count(), 3);
    let _ = ring.ok(3).unwrap();
    assert_eq!(ring.acked_fsn(), 1);
    // Frames sent later can be acknowledged once they are out.
    let _ = ring.next_to_send();
    assert!(matches!(ring.ok(5), Err(AckError::NotSent { .. })));
    let _ = ring.ok(4).unwrap();
    assert_eq!(ring.acked_fsn(), 2);
}

#[test]
fn sf_9_a_status_for_a_catch_up_frame_not_yet_sent_is_refused_and_keeps_the_connection() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 2);
    let _ = ring.connect(3);
    // Before any catch-up frame went out, none can be acknowledged or refused.
    assert_eq!(
        ring.ok(0),
        Err(AckError::NotSent {
            wire_seq: 0,
            next_wire_seq: 0
        })
    );
    ring.catch_up_sent();
    // Catch-up 0 is out; 1 and 2 are not.
    assert!(ring.ok(0).unwrap().is_empty());
    assert_eq!(
        ring.ok(2),
        Err(AckError::NotSent {
            wire_seq: 2,
            next_wire_seq: 1
        })
    );
    assert_eq!(
        ring.reject(1, sf_journal::status::ErrorStatus::WriteError),
        Err(AckError::NotSent {
            wire_seq: 1,
            next_wire_seq: 1
        })
    );
    // The window is still open: the rest go out and are acknowledged in their turn.
    ring.catch_up_sent();
    ring.catch_up_sent();
    assert!(ring.ok(2).unwrap().is_empty());
    let _ = ring.next_to_send();
    let _ = ring.ok(3).unwrap();
    assert_eq!(ring.acked_fsn(), 0);
    // More catch-up frames than the connection announced are not counted.
    ring.catch_up_sent();
    assert!(matches!(ring.ok(4), Err(AckError::NotSent { .. })));
}

#[test]
fn sf_9_a_journal_frame_sent_means_every_catch_up_frame_went_before_it() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 2);
    let _ = ring.connect(2);
    let _ = ring.next_to_send();
    // Catch-up frames go first: once a journal frame is out, so are they.
    assert!(ring.ok(1).unwrap().is_empty());
    let _ = ring.ok(2).unwrap();
    assert_eq!(ring.acked_fsn(), 0);
}

#[test]
fn sf_43_an_error_for_a_frame_not_yet_sent_is_refused_and_keeps_the_connection() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 3);
    let _ = ring.connect(0);
    let _ = ring.next_to_send();
    assert!(matches!(
        ring.reject(1, sf_journal::status::ErrorStatus::WriteError),
        Err(AckError::NotSent {
            wire_seq: 1,
            next_wire_seq: 1
        })
    ));
    assert_eq!(ring.acked_fsn(), -1);
    // The window is still open: the frame actually sent can be acknowledged.
    let _ = ring.ok(0).unwrap();
    assert_eq!(ring.acked_fsn(), 0);
}

#[test]
fn sf_43_an_error_for_a_frame_already_acknowledged_is_refused_and_trims_nothing_more() {
    use sf_journal::status::ErrorStatus;
    // An OK acknowledges every wire sequence up to its own: once FSN 3 is acknowledged (and
    // its segments trimmed), an error naming FSN 1 contradicts it. Taken as a retriable error
    // it would promise a replay of FSN 1, which is gone; taken as a terminal one it would say
    // FSN 1 stays in the journal. Either way the rejected batch would be dropped silently: it
    // is refused as a protocol violation instead, naming the acknowledged FSN.
    for status in [ErrorStatus::WriteError, ErrorStatus::SchemaMismatch] {
        let mut ring = Ring::new(tiny(100));
        let mut dir = MemDir::new();
        fill(&mut ring, &mut dir, 6);
        let _ = ring.connect(0);
        while ring.next_to_send().is_some() {}
        dir.apply_all(&ring.ok(3).unwrap());
        assert_eq!(ring.locate(1), None, "FSN 1 is trimmed with its segment");
        for wire_seq in [1, 3] {
            assert_eq!(
                ring.reject(wire_seq, status),
                Err(AckError::AlreadyAcknowledged {
                    wire_seq,
                    fsn: wire_seq as i64,
                    acked: 3
                }),
                "{status:?} for wire sequence {wire_seq}"
            );
        }
        assert_eq!(ring.acked_fsn(), 3);
        // The first FSN not acknowledged is still refused or acknowledged in its turn.
        let (fsn, _) = ring.reject(4, status).unwrap();
        assert_eq!(fsn, Some(4));
        assert!(ring.locate(4).is_some());
    }
}

#[test]
fn sf_23_a_refusal_not_retried_within_the_deadline_starts_a_new_wait() {
    let mut ring = Ring::new(tiny(2));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    // Refused at 5 000; the producer gives up and comes back an hour later.
    assert!(matches!(
        ring.append(P, 5_000),
        Err(AppendError::Full { .. })
    ));
    assert_eq!(
        ring.append(P, 3_605_000),
        Err(AppendError::Full {
            case: BackPressure::WhilePublishing,
            deadline_millis: 3_606_000
        })
    );
    // Retried within the deadline of the last refusal: still the same wait.
    assert!(matches!(
        ring.append(P, 3_605_900),
        Err(AppendError::Full { .. })
    ));
    assert_eq!(
        ring.append(P, 3_606_000),
        Err(AppendError::DeadlineExceeded {
            case: BackPressure::WhilePublishing,
            waited_millis: 1_000
        })
    );
    // A gap under the deadline keeps the wait; a gap over it ends the wait.
    let mut ring = Ring::new(tiny(2));
    fill(&mut ring, &mut dir, 4);
    assert!(ring.append(P, 0).is_err());
    assert!(matches!(
        ring.append(P, 999),
        Err(AppendError::Full {
            deadline_millis: 1_000,
            ..
        })
    ));
    assert!(matches!(
        ring.append(P, 2_000),
        Err(AppendError::Full {
            deadline_millis: 3_000,
            ..
        })
    ));
}

#[test]
fn sf_23_a_clock_that_goes_back_restarts_the_wait_instead_of_stalling_it() {
    let mut ring = Ring::new(tiny(2));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    assert!(ring.append(P, 10_000).is_err());
    // The clock steps back 5 s: a new wait starts at the new reading.
    assert_eq!(
        ring.append(P, 5_000),
        Err(AppendError::Full {
            case: BackPressure::WhilePublishing,
            deadline_millis: 6_000
        })
    );
    // And it ends after the deadline on the new clock, not 5 s later.
    assert!(matches!(
        ring.append(P, 5_600),
        Err(AppendError::Full { .. })
    ));
    assert!(matches!(
        ring.append(P, 6_000),
        Err(AppendError::DeadlineExceeded {
            waited_millis: 1_000,
            ..
        })
    ));
}

/// The ring trimmed by an ack of everything up to `fsn`, its last frame, on a new connection
/// that sent them all.
fn ack_all(ring: &mut Ring, fsn: i64) -> Vec<FileOp> {
    assert_eq!(ring.published_fsn(), fsn);
    let _ = ring.connect(0);
    let mut sent = 0;
    while ring.next_to_send().is_some() {
        sent += 1;
    }
    ring.ok(sent - 1).unwrap()
}

#[test]
fn a_recycling_ring_renames_its_first_trimmed_segment_out_of_the_segment_names_and_unlinks_the_next_ones(
) {
    let mut ring = Ring::new(tiny(100)).with_recycling();
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 6); // segments [0,1] [2,3] [4,5]
    let files: Vec<String> = ring.segment_files().map(str::to_owned).collect();
    let old = dir.get(&files[0]).expect("the first segment").to_vec();
    let ops = ack_all(&mut ring, 5);
    // The first is renamed to the spare as it is, in one operation, and nothing is written to
    // it; the second is unlinked: one spare at most.
    assert!(
        matches!(&ops[0], FileOp::Rename { from, to } if *from == files[0] && to == SPARE),
        "{ops:?}"
    );
    assert!(
        !ops.iter().any(
            |op| matches!(op, FileOp::Write { .. } | FileOp::Zero { .. })
                && op.file() != Some(sf_journal::slot::MANIFEST)
        ),
        "{ops:?}"
    );
    assert_eq!(unlinked(&ops), [files[1].clone()]);
    assert_eq!(ring.spare(), Some(SPARE));
    // The manifest names the new first segment (written after the rename).
    assert!(
        ops.iter()
            .skip(1)
            .any(|op| op.file() == Some(sf_journal::slot::MANIFEST)),
        "{ops:?}"
    );
    dir.apply_all(&ops);
    assert_eq!(dir.get(SPARE), Some(&old[..]));
    assert!(dir.get(&files[0]).is_none());
    assert!(dir.get(&files[1]).is_none());
    assert_eq!(
        ring.segment_files().collect::<Vec<_>>(),
        [files[2].as_str()]
    );
    // Recovery reads no spare.
    let r = sf_journal::recovery::recover(&slot_files(&dir), 0).expect("recovers");
    assert_eq!(r.segments.len(), 1);
    assert_eq!(r.next_fsn, 6);
}

/// A ring whose first segment is a spare after frames 0 to 3, and the segment frame 4 opens
/// by renaming it, with the operations of that append: the old frame 1 lies just past the
/// new frame 4.
fn reused(dir: &mut MemDir) -> (Ring, Vec<FileOp>) {
    let mut ring = Ring::new(tiny(100)).with_recycling();
    fill(&mut ring, dir, 4); // segments [0,1] [2,3]
    dir.apply_all(&ack_all(&mut ring, 3));
    let a = ring.append(P, 0).unwrap();
    (ring, a.ops)
}

#[test]
fn an_append_into_a_reused_segment_clears_the_bytes_after_its_frame_in_its_first_write() {
    let mut dir = MemDir::new();
    let (ring, ops) = reused(&mut dir);
    let new = ring.segment_files().last().unwrap().to_owned();
    // The length and payload, then eight zero bytes over the old frame's checksum and length,
    // all in the write before the checksum.
    let body = ops
        .iter()
        .position(|op| matches!(op, FileOp::Write { file, offset: 28, .. } if *file == new))
        .expect("the body write");
    let sum = ops
        .iter()
        .position(|op| matches!(op, FileOp::Write { file, offset: 24, .. } if *file == new))
        .expect("the checksum write");
    assert!(body < sum, "{ops:?}");
    let FileOp::Write { bytes, .. } = &ops[body] else {
        unreachable!()
    };
    assert_eq!(bytes.len(), 4 + P.len() + 8);
    assert_eq!(bytes[..4], (P.len() as i32).to_le_bytes());
    assert_eq!(&bytes[4..4 + P.len()], P);
    assert_eq!(bytes[4 + P.len()..], [0u8; 8]);
    // A segment never reused clears nothing.
    let mut fresh = Ring::new(tiny(100)).with_recycling();
    let a = fresh.append(P, 0).unwrap();
    assert!(
        a.ops.iter().any(
            |op| matches!(op, FileOp::Write { offset: 28, bytes, .. } if bytes.len() == 4 + P.len())
        ),
        "{:?}",
        a.ops
    );
}

#[test]
fn a_reused_segment_recovers_its_new_frames_and_never_the_old_ones_past_them() {
    let mut dir = MemDir::new();
    let (ring, ops) = reused(&mut dir);
    let new = ring.segment_files().last().unwrap().to_owned();
    dir.apply_all(&ops);
    // The old frame 1 is still whole at 44, past the new frame 4.
    let bytes = dir.get(&new).expect("the segment").to_vec();
    assert_eq!(&bytes[52..64], P);
    let r = sf_journal::recovery::recover(&slot_files(&dir), 0).expect("recovers");
    let last = r.segments.last().expect("a segment");
    assert_eq!(last.file, new);
    assert_eq!(
        last.scan.frames.iter().map(|f| f.fsn).collect::<Vec<_>>(),
        [4]
    );
    assert_eq!(r.next_fsn, 5);
    // The old bytes past the last frame are cleared before the ring writes again.
    assert!(
        r.ops
            .iter()
            .any(|op| matches!(op, FileOp::Zero { file, offset: 44, len: 20 } if *file == new)),
        "{:?}",
        r.ops
    );
}

#[test]
fn a_crash_inside_the_first_append_into_a_reused_segment_recovers_no_frame_of_it() {
    let mut base = MemDir::new();
    let (_, ops) = reused(&mut base);
    let body = ops
        .iter()
        .rposition(|op| matches!(op, FileOp::Write { offset: 28, .. }))
        .expect("the body write");
    let FileOp::Write {
        file,
        offset,
        bytes,
    } = &ops[body]
    else {
        unreachable!()
    };
    // Cut anywhere in the body write, or after it and before the checksum.
    for keep in 0..=bytes.len() {
        let mut dir = base.clone();
        dir.apply_all(&ops[..body]);
        dir.write(file, *offset, &bytes[..keep]);
        let r = sf_journal::recovery::recover(&slot_files(&dir), 0).expect("recovers");
        assert_eq!(r.next_fsn, 4, "cut at {keep}");
        assert!(r.segments.iter().all(|s| s.file != *file), "cut at {keep}");
    }
}

#[test]
fn the_bytes_cleared_after_a_frame_stop_at_the_segments_end() {
    let mut dir = MemDir::new();
    let (mut ring, ops) = reused(&mut dir);
    dir.apply_all(&ops);
    let new = ring.segment_files().last().unwrap().to_owned();
    // Frame 4 ends at 44; a 9-byte payload ends 3 bytes before the end, 12 bytes at it.
    let a = ring.append(&[7; 9], 0).unwrap();
    let body = |ops: &[FileOp]| {
        ops.iter()
            .find_map(|op| match op {
                FileOp::Write {
                    file,
                    offset,
                    bytes,
                } if *file == new && *offset == 48 => Some(bytes.len()),
                _ => None,
            })
            .expect("the body write")
    };
    assert_eq!(body(&a.ops), 4 + 9 + 3);
    dir.apply_all(&a.ops);
    assert_eq!(dir.get(&new).map(<[u8]>::len), Some(64));
    let r = sf_journal::recovery::recover(&slot_files(&dir), 0).expect("recovers");
    assert_eq!(r.next_fsn, 6);
    assert!(
        r.ops.iter().all(|op| op.file() != Some(new.as_str())),
        "{:?}",
        r.ops
    );

    let mut dir = MemDir::new();
    let (mut ring, ops) = reused(&mut dir);
    dir.apply_all(&ops);
    let a = ring.append(P, 0).unwrap();
    assert_eq!(body(&a.ops), 4 + P.len());
}

#[test]
fn a_recycling_ring_opens_its_next_segment_by_renaming_the_spare() {
    let mut ring = Ring::new(tiny(100)).with_recycling();
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4); // segments [0,1] [2,3]
    dir.apply_all(&ack_all(&mut ring, 3));
    assert_eq!(ring.spare(), Some(SPARE));
    // [2,3] is full: the next frame opens a segment from the spare: the first frame's
    // checksum and length cleared and the header written under the spare's name, then the
    // rename, then the sizing.
    let a = ring.append(P, 0).unwrap();
    let new = ring.segment_files().last().unwrap().to_owned();
    assert!(
        matches!(&a.ops[..4], [
            FileOp::Zero { file: z, offset: 24, len: 8 },
            FileOp::Write { file: h, offset: 0, bytes },
            FileOp::Rename { from, to },
            FileOp::SetLen { file: l, len: 64 },
        ] if z == SPARE && h == SPARE && bytes.len() == 24 && from == SPARE && *to == new && *l == new),
        "{:?}",
        a.ops
    );
    assert_eq!(ring.spare(), None);
    dir.apply_all(&a.ops);
    assert!(dir.get(SPARE).is_none());
    assert_eq!(dir.get(&new).map(<[u8]>::len), Some(64));
    // A crash at any step before the rename leaves the segments as they were.
    for cut in 0..3 {
        let mut before = MemDir::new();
        let mut ring = Ring::new(tiny(100)).with_recycling();
        fill(&mut ring, &mut before, 4);
        before.apply_all(&ack_all(&mut ring, 3));
        let a = ring.append(P, 0).unwrap();
        before.apply_all(&a.ops[..cut]);
        let r = sf_journal::recovery::recover(&slot_files(&before), 0).expect("recovers");
        assert_eq!(r.next_fsn, 4, "cut at {cut}");
        assert_eq!(r.segments.len(), 1, "cut at {cut}");
    }
    // A spare removed meanwhile: the segment is made anew at its size.
    let mut gone = MemDir::new();
    let mut ring2 = Ring::new(tiny(100)).with_recycling();
    fill(&mut ring2, &mut gone, 4);
    gone.apply_all(&ack_all(&mut ring2, 3));
    gone.apply_all(&[FileOp::Unlink {
        file: SPARE.to_owned(),
    }]);
    let b = ring2.append(P, 0).unwrap();
    gone.apply_all(&b.ops);
    let made = ring2.segment_files().last().unwrap().to_owned();
    assert_eq!(gone.get(&made).map(<[u8]>::len), Some(64));
    let r = sf_journal::recovery::recover(&slot_files(&gone), 0).expect("recovers");
    assert_eq!(r.next_fsn, 5);
    // The next trim makes a spare again.
    let files: Vec<String> = ring.segment_files().map(str::to_owned).collect();
    let _ = ring.append(P, 0).unwrap();
    let _ = ring.append(P, 0).unwrap(); // segments [2,3] [4,5] [6]
    let ops = ack_all(&mut ring, 6);
    assert!(
        ops.iter().any(
            |op| matches!(op, FileOp::Rename { from, to } if *from == files[0] && to == SPARE)
        ),
        "{ops:?}"
    );
    assert_eq!(ring.spare(), Some(SPARE));
}

#[test]
fn a_ring_that_does_not_recycle_unlinks_every_trimmed_segment_and_sizes_each_new_one() {
    let mut ring = Ring::new(tiny(100));
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    let ops = ack_all(&mut ring, 3);
    assert!(
        !ops.iter().any(|op| matches!(op, FileOp::Zero { .. })),
        "{ops:?}"
    );
    assert_eq!(unlinked(&ops).len(), 1);
    assert_eq!(ring.spare(), None);
    let a = ring.append(P, 0).unwrap();
    assert!(
        matches!(&a.ops[0], FileOp::SetLen { len: 64, .. }),
        "{:?}",
        a.ops
    );
}

#[test]
fn closing_a_drained_recycling_ring_unlinks_its_spare_too() {
    let mut ring = Ring::new(tiny(100)).with_recycling();
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4);
    dir.apply_all(&ack_all(&mut ring, 3));
    let spare = ring.spare().expect("a spare").to_owned();
    let sf_journal::ring::CloseVerdict::Drained { ops } = ring.close(0, 0, 0) else {
        panic!("everything was acknowledged");
    };
    assert!(unlinked(&ops).contains(&spare), "{ops:?}");
    dir.apply_all(&ops);
    assert_eq!(
        dir.names().count(),
        0,
        "{:?}",
        dir.names().collect::<Vec<_>>()
    );
}

#[test]
fn a_recycling_ring_that_trims_one_segment_and_unlinks_none_still_names_the_new_first_in_its_manifest(
) {
    let mut ring = Ring::new(tiny(100)).with_recycling();
    let mut dir = MemDir::new();
    fill(&mut ring, &mut dir, 4); // segments [0,1] [2,3]
    let second = ring.segment_files().nth(1).unwrap().to_owned();
    let ops = ack_all(&mut ring, 3);
    assert!(unlinked(&ops).is_empty(), "{ops:?}");
    assert!(
        ops.iter()
            .any(|op| op.file() == Some(sf_journal::slot::MANIFEST)),
        "{ops:?}"
    );
    dir.apply_all(&ops);
    // A restart finds the second segment first, and the spare left out.
    let r = sf_journal::recovery::recover(&slot_files(&dir), 0).expect("recovers");
    assert_eq!(
        r.segments
            .iter()
            .map(|s| s.file.as_str())
            .collect::<Vec<_>>(),
        [second.as_str()]
    );
    assert!(r.spares.is_empty(), "{:?}", r.spares);
    assert!(dir.get(SPARE).is_some());
}

#[test]
fn a_frame_placed_from_parts_is_written_as_the_same_bytes_as_its_payload_joined() {
    // Fresh segments and a reused one (its appends clear the bytes after them), with parts
    // of every shape: an empty one among them, one byte, several.
    let payloads: [&[&[u8]]; 4] = [
        &[b"head", b"", b"-the-batch-", b"tail"],
        &[b"x"],
        &[b"", b"only"],
        &[b"QWP1", b"-payl", b"oad"],
    ];
    let run = |by_parts: bool| {
        let mut ring = Ring::new(tiny(100)).with_recycling();
        let mut dir = MemDir::new();
        fill(&mut ring, &mut dir, 4);
        dir.apply_all(&ack_all(&mut ring, 3)); // the next segment reuses the first
        let mut bodies = Vec::new();
        for parts in payloads.iter().cycle().take(6) {
            let joined: Vec<u8> = parts.concat();
            let ops = if by_parts {
                let (head, rest) = parts.split_first().expect("a part");
                let mut first = vec![0; 4];
                first.extend_from_slice(head);
                let p = ring.append_placed_parts(parts, 0).unwrap();
                let mut ops = p.ops;
                let writes = p
                    .place
                    .writes_parts(first, rest.iter().map(|r| bytes::Bytes::copy_from_slice(r)));
                // No empty part is handed on.
                let FileOp::WriteParts { parts: written, .. } = &writes.body else {
                    panic!("the body in parts")
                };
                assert!(written.iter().all(|p| !p.is_empty()), "{written:?}");
                ops.extend(writes.into_ops());
                ops
            } else {
                ring.append(&joined, 0).unwrap().ops
            };
            bodies.extend(ops.iter().filter_map(|op| {
                op.written()
                    .map(|b| (op.file().map(str::to_owned), b.into_owned()))
            }));
            dir.apply_all(&ops);
        }
        (dir, bodies)
    };
    let (joined_dir, joined_writes) = run(false);
    let (parts_dir, parts_writes) = run(true);
    assert_eq!(parts_writes, joined_writes);
    for name in joined_dir.names() {
        assert_eq!(parts_dir.get(name), joined_dir.get(name), "{name}");
    }
    let r = sf_journal::recovery::recover(&slot_files(&parts_dir), 0).expect("recovers");
    assert_eq!(r.next_fsn, 10);
}

#[test]
fn a_write_in_parts_is_the_write_of_its_parts_joined() {
    let parts = FileOp::WriteParts {
        file: "f".into(),
        offset: 3,
        parts: vec![
            bytes::Bytes::from_static(b"ab"),
            bytes::Bytes::from_static(b""),
            bytes::Bytes::from_static(b"cde"),
        ],
    };
    let whole = FileOp::Write {
        file: "f".into(),
        offset: 3,
        bytes: b"abcde".to_vec(),
    };
    assert_eq!(parts.written().as_deref(), Some(&b"abcde"[..]));
    assert_eq!(whole.written().as_deref(), Some(&b"abcde"[..]));
    assert_eq!(FileOp::SyncDir.written(), None);
    let (mut a, mut b) = (MemDir::new(), MemDir::new());
    a.apply(&parts);
    b.apply(&whole);
    assert_eq!(a.get("f"), Some(&b"\0\0\0abcde"[..]));
    assert_eq!(a, b);
}
