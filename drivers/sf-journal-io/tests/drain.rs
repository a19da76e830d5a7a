//! The blocking drain against the loopback QWP server (SF-W1, SF-W3, SF-W8, SF-W9, SF-16,
//! SF-18 to SF-21, SF-43, SF-44). A case the tokio drain shares is a scenario of
//! `common/scenarios.rs`, run here on the blocking drain.

mod common;
use common::*;
#[path = "common/drain.rs"]
mod drain_common;
use drain_common::*;
#[path = "common/scenarios.rs"]
mod scenarios;
use scenarios::{ClosedBeside, Drained, Drains, Until};

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sf_journal::status::ErrorStatus;
use sf_journal_io::drain::{Drain, DrainConfig, DrainError, DrainReport};
use sf_journal_io::journal::Closed;
use sf_journal_io::loopback::{Conn, LoopbackServer, ServerConfig};
use sf_journal_io::{Journal, JournalConfig, JournalError};

/// The blocking drain, for the shared scenarios.
struct Blocking;

impl Drains for Blocking {
    fn drain(&self, c: DrainConfig, j: &Mutex<Journal>, by: Instant, until: &Until) -> Drained {
        Drain::new(c).run(j, by, until)
    }

    fn close(&self, j: &Mutex<Journal>, timeout_millis: i64) -> Result<Closed, JournalError> {
        sf_journal_io::drain::close(j, timeout_millis)
    }

    fn close_beside(&self, s: &LoopbackServer, j: &Mutex<Journal>, ms: i64) -> ClosedBeside {
        std::thread::scope(|scope| {
            let d = scope.spawn(|| {
                let by = Instant::now() + Duration::from_secs(20);
                Drain::new(DrainConfig::new(s.addr())).run(j, by, |_| false)
            });
            let started = Instant::now();
            let c = sf_journal_io::drain::close(j, ms).unwrap();
            let took = started.elapsed();
            (c, took, d.join().unwrap())
        })
    }
}

/// Drains `j` to `s` with the blocking drain, its configuration as `tweak` changes it.
fn run(
    s: &LoopbackServer,
    j: &Mutex<Journal>,
    tweak: impl FnOnce(&mut DrainConfig),
) -> Result<DrainReport, DrainError> {
    Blocking.run(s, j, tweak)
}

#[test]
fn sf_w1_the_drain_upgrades_on_the_write_path_with_the_qwp_headers() {
    scenarios::sf_w1_the_drain_upgrades_on_the_write_path_with_the_qwp_headers(&Blocking);
}

#[test]
fn sf_w3_auth_and_role_refusals_end_the_drain_and_other_statuses_are_retried() {
    scenarios::sf_w3_auth_and_role_refusals_end_the_drain_and_other_statuses_are_retried(&Blocking);
}

#[test]
fn sf_16_a_server_that_does_not_echo_durable_ack_is_refused() {
    scenarios::sf_16_a_server_that_does_not_echo_durable_ack_is_refused(&Blocking);
}

#[test]
fn sf_w8_client_frames_are_whole_masked_binary_and_the_close_payload_is_empty_or_coded() {
    scenarios::sf_w8_client_frames_are_whole_masked_binary_and_the_close_payload_is_empty_or_coded(
        &Blocking,
    );
}

#[test]
fn sf_w8_a_server_message_over_the_inbound_cap_is_a_violation() {
    scenarios::sf_w8_a_server_message_over_the_inbound_cap_is_a_violation(&Blocking);
}

#[test]
fn sf_w9_every_frame_on_the_wire_begins_qwp1_and_others_are_refused_at_append() {
    let mut journal = Journal::memory(small());
    for bad in [&b""[..], b"QWP", b"QWP2 x", b"qwp1 x", b"xQWP1"] {
        assert!(
            matches!(journal.append(bad, 0), Err(JournalError::NotQwp)),
            "{bad:?}"
        );
    }
    assert_eq!(journal.published_fsn(), -1, "nothing was stored");

    let s = server(vec![]);
    let j = filled(5);
    let _ = run(&s, &j, |_| {}).unwrap();
    let m = s.connections()[0].messages();
    assert_eq!(m.len(), 5);
    assert!(m.iter().all(|f| f.starts_with(b"QWP1")));
}

#[test]
fn sf_18_connections_dropped_mid_stream_are_replayed_in_fsn_order_after_back_off() {
    scenarios::sf_18_connections_dropped_mid_stream_are_replayed_in_fsn_order_after_back_off(
        &Blocking,
    );
}

#[test]
fn sf_19_a_reconnect_rewinds_to_the_first_unacknowledged_frame_on_the_wire() {
    scenarios::sf_19_a_reconnect_rewinds_to_the_first_unacknowledged_frame_on_the_wire(&Blocking);
}

#[test]
fn sf_20_frames_appended_during_replay_are_sent() {
    let s = server(vec![Conn::DropAfter(3)]);
    let j = filled(5);
    std::thread::scope(|scope| {
        let producer = scope.spawn(|| {
            for i in 5..40 {
                let fsn = j.lock().unwrap().append(&payload(i), 0).unwrap();
                assert_eq!(fsn, i as i64);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let r = Drain::new(DrainConfig::new(s.addr()))
            .run(&j, Instant::now() + Duration::from_secs(20), |j| {
                j.published_fsn() == 39
            })
            .unwrap();
        producer.join().unwrap();
        assert!(r.connections >= 2);
    });
    assert_eq!(j.lock().unwrap().acked_fsn(), 39);
    let last = s.connections().last().unwrap().messages();
    let all: Vec<Vec<u8>> = frames(0, 40).into_iter().map(|f| f.1).collect();
    assert!(
        all.ends_with(&last),
        "the last connection sends a tail in FSN order"
    );
}

#[test]
fn sf_21_the_replayed_frames_counter_counts_frames_sent_again() {
    scenarios::sf_21_the_replayed_frames_counter_counts_frames_sent_again(&Blocking);
}

#[test]
fn sf_43_a_retriable_error_replays_the_rejected_frame_and_a_terminal_one_keeps_it() {
    scenarios::sf_43_a_retriable_error_replays_the_rejected_frame_and_a_terminal_one_keeps_it(
        &Blocking,
    );
}

#[test]
fn sf_w10_the_drain_sends_no_client_id_unless_configured() {
    let s = server(vec![]);
    let _ = run(&s, &filled(1), |_| {}).unwrap();
    assert_eq!(s.connections()[0].header("X-QWP-Client-Id"), None);
    assert_eq!(JournalConfig::disk().ring.segment_bytes, 4 << 20);
}

#[test]
fn sf_17_pings_go_out_while_idle_with_durable_confirmations_pending() {
    scenarios::sf_17_pings_go_out_while_idle_with_durable_confirmations_pending(&Blocking);
}

#[test]
fn sf_w2_a_server_version_of_0_or_above_1_is_refused_and_an_absent_one_is_1() {
    scenarios::sf_w2_a_server_version_of_0_or_above_1_is_refused_and_an_absent_one_is_1(&Blocking);
}

#[test]
fn sf_w4_a_malformed_status_frame_is_a_protocol_violation_and_trims_nothing() {
    scenarios::sf_w4_a_malformed_status_frame_is_a_protocol_violation_and_trims_nothing(&Blocking);
}

#[test]
fn sf_44_each_error_status_on_the_wire_ends_the_drain_or_is_retried() {
    scenarios::sf_44_each_error_status_on_the_wire_ends_the_drain_or_is_retried(&Blocking);
}

#[test]
fn sf_18_the_back_off_doubles_over_consecutive_failed_attempts() {
    scenarios::sf_18_the_back_off_doubles_over_consecutive_failed_attempts(&Blocking);
}

#[test]
fn sf_23_a_full_ring_waits_for_trim_while_the_drain_runs() {
    use sf_journal_io::journal::append_waiting;
    // Two segments of three frames: the producer must wait for acknowledgements to go on.
    let mut jc = small();
    jc.ring.max_total_bytes = 256;
    jc.ring.append_deadline_millis = 10_000;
    let j = Mutex::new(Journal::memory(jc));
    let s = server(vec![]);
    std::thread::scope(|scope| {
        let producer = scope.spawn(|| {
            for i in 0..40 {
                assert_eq!(append_waiting(&j, &payload(i)).unwrap(), i as i64);
            }
        });
        let _ = Drain::new(DrainConfig::new(s.addr()))
            .run(&j, Instant::now() + Duration::from_secs(20), |j| {
                j.published_fsn() == 39
            })
            .unwrap();
        producer.join().unwrap();
    });
    let sent: Vec<Vec<u8>> = s.connections()[0].messages();
    assert_eq!(
        sent,
        frames(0, 40).into_iter().map(|f| f.1).collect::<Vec<_>>()
    );
}

#[test]
fn sf_23_without_trim_the_wait_ends_at_the_deadline_with_a_typed_error() {
    use sf_journal::ring::{AppendError, BackPressure};
    use sf_journal_io::journal::append_waiting;
    let mut jc = small();
    jc.ring.max_total_bytes = 128;
    jc.ring.append_deadline_millis = 60;
    let j = Mutex::new(Journal::memory(jc));
    for i in 0..3 {
        let _ = append_waiting(&j, &payload(i)).unwrap();
    }
    let started = Instant::now();
    match append_waiting(&j, &payload(3)) {
        Err(JournalError::Append(AppendError::DeadlineExceeded {
            case,
            waited_millis,
        })) => {
            assert_eq!(case, BackPressure::WhilePublishing);
            assert!(waited_millis >= 60);
        }
        other => panic!("expected the deadline, got {other:?}"),
    }
    // Whole milliseconds of the wall clock: at least 59 ms of real time.
    assert!(started.elapsed() >= Duration::from_millis(59));
    assert_eq!(j.lock().unwrap().published_fsn(), 2);
}

#[test]
fn sf_36_a_draining_journal_takes_its_periodic_checkpoints_and_none_by_default() {
    use sf_journal::ring::Durability;
    for (durability, synced) in [
        (Durability::Periodic { interval_millis: 5 }, true),
        (Durability::None, false),
    ] {
        let mut jc = small();
        jc.durability = durability;
        let mut journal = Journal::open(&scratch("drain-checkpoints"), "s", jc).unwrap();
        for i in 0..3 {
            let _ = journal.append(&payload(i), 0).unwrap();
        }
        let j = Mutex::new(journal);
        let s = LoopbackServer::start(ServerConfig {
            idle_ack: Duration::from_millis(60),
            ack_one_in: 0,
            ..ServerConfig::default()
        })
        .unwrap();
        // Only idle acknowledgements, after 60 ms: the drain runs long enough for checkpoints.
        let _ = run(&s, &j, |_| {}).unwrap();
        let stats = j.lock().unwrap().dir_stats().unwrap();
        assert_eq!(stats.dir_syncs > 0, synced, "{durability:?}: {stats:?}");
        assert_eq!(stats.file_syncs > 0, synced, "{durability:?}: {stats:?}");
    }
}

#[test]
fn sf_9_our_blocking_drain_sends_the_catch_up_frames_before_replaying_a_slot_with_a_dictionary() {
    let s = server(vec![]);
    let j = slot_with_symbols("catch-up-blocking", 5);
    let mut c = DrainConfig::new(s.addr());
    with_catch_up(&mut c);
    let r = Drain::new(c)
        .run(&j, Instant::now() + Duration::from_secs(20), |_| true)
        .unwrap();
    assert_eq!(r.catch_up_frames, 1);
    let m = s.connections()[0].messages();
    assert_eq!(m[0], dict_frame());
    assert_eq!(&m[1..], bytes(0, 5).as_slice());
    // The server acknowledged wire sequences 0..=5: the catch-up frame and five frames, so
    // the last FSN is acknowledged and nothing beyond it was claimed.
    assert_eq!(last_ok(&s.connections()[0]), Some(5));
    assert_eq!(j.lock().unwrap().acked_fsn(), 4);
}

#[test]
fn sf_14_a_connection_dropped_with_oks_awaiting_durability_is_replayed_and_drains() {
    scenarios::sf_14_a_connection_dropped_with_oks_awaiting_durability_is_replayed_and_drains(
        &Blocking,
    );
}

#[test]
fn sf_18_a_steady_producer_cannot_hold_the_drain_past_its_deadline() {
    scenarios::sf_18_a_steady_producer_cannot_hold_the_drain_past_its_deadline(&Blocking);
}

#[test]
fn sf_16_a_drain_whose_request_and_journal_disagree_on_durable_ack_is_refused() {
    scenarios::sf_16_a_drain_whose_request_and_journal_disagree_on_durable_ack_is_refused(
        &Blocking,
    );
}

#[test]
fn sf_w9_a_frame_built_with_symbols_is_refused_at_append_unless_it_begins_qwp1() {
    let mut journal = Journal::memory(small());
    // A frame built with symbols is checked at append too, and its symbols get no ids.
    assert!(matches!(
        journal.append_with_symbols(&["a"], |_| b"JSON{}".to_vec(), 0),
        Err(JournalError::NotQwp)
    ));
    assert_eq!(journal.published_fsn(), -1, "nothing was stored");
    assert!(journal.dict().symbols().is_empty(), "no id was assigned");
    let (fsn, ids) = journal
        .append_with_symbols(&["b"], |_| payload(0), 0)
        .unwrap();
    assert_eq!((fsn, ids), (0, vec![0]));
    assert_eq!(journal.dict().symbols(), ["b"]);
}

#[test]
fn sf_23_the_file_side_clock_of_the_append_deadline_never_goes_back() {
    let first = sf_journal_io::journal::monotonic_millis();
    let wall = sf_journal_io::journal::now_millis();
    assert!(first.abs_diff(wall) < 5_000, "{first} vs {wall}");
    let mut last = first;
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(40) {
        let now = sf_journal_io::journal::monotonic_millis();
        assert!(now >= last);
        last = now;
    }
    assert!(last >= first + 30);
}

#[test]
fn sf_36_periodic_checkpoints_go_on_while_the_wire_is_down() {
    scenarios::sf_36_periodic_checkpoints_go_on_while_the_wire_is_down(&Blocking);
}

#[test]
fn sf_36_periodic_checkpoints_are_polled_on_append_without_a_drain() {
    let j = periodic_journal("checkpoints-append");
    let mut j = j.into_inner().unwrap();
    let before = j.dir_stats().unwrap();
    // The first append started the clock at 0; one 10 ms later is due.
    let _ = j.append(&payload(5), 9).unwrap();
    assert_eq!(j.dir_stats().unwrap().dir_syncs, before.dir_syncs);
    let _ = j.append(&payload(6), 10).unwrap();
    let after = j.dir_stats().unwrap();
    assert_eq!(after.dir_syncs, before.dir_syncs + 1, "{after:?}");
    assert!(after.file_syncs > before.file_syncs);
    let _ = j.append_with_symbols(&["a"], |_| payload(7), 20).unwrap();
    assert_eq!(j.dir_stats().unwrap().dir_syncs, before.dir_syncs + 2);
}

#[test]
fn sf_44_an_error_status_keeps_its_message_wire_seq_and_category() {
    scenarios::sf_44_an_error_status_keeps_its_message_wire_seq_and_category(&Blocking);
}

#[test]
fn sf_44_the_error_handler_is_called_for_each_error_status() {
    scenarios::sf_44_the_error_handler_is_called_for_each_error_status(&Blocking);
}

#[test]
fn sf_44_the_error_inbox_is_bounded_drops_the_oldest_and_counts_the_drops() {
    scenarios::sf_44_the_error_inbox_is_bounded_drops_the_oldest_and_counts_the_drops(&Blocking);
}

#[test]
fn sf_w7_an_error_message_over_1024_bytes_or_not_utf8_is_a_typed_violation() {
    scenarios::sf_w7_an_error_message_over_1024_bytes_or_not_utf8_is_a_typed_violation(&Blocking);
}

#[test]
fn sf_44_the_error_inbox_drops_the_oldest_at_its_byte_bound() {
    use sf_journal::status::Category;
    use sf_journal_io::drain::{ErrorInbox, InboxLimits, ERROR_OVERHEAD};
    use sf_journal_io::journal::ServerError;
    let e = |wire_seq: u64, len: usize| ServerError {
        status: ErrorStatus::WriteError,
        category: Category::Retriable,
        wire_seq,
        fsn: Some(wire_seq as i64),
        message: "m".repeat(len),
    };
    // Room for exactly two errors of 100-byte messages.
    let inbox = ErrorInbox::new(InboxLimits {
        max_errors: 100,
        max_bytes: 2 * (100 + ERROR_OVERHEAD),
    });
    assert_eq!(inbox.push(e(0, 100)), 0);
    assert_eq!(
        inbox.push(e(1, 100)),
        0,
        "at the bound exactly, both are kept"
    );
    assert_eq!(inbox.bytes(), 2 * (100 + ERROR_OVERHEAD));
    assert_eq!(inbox.push(e(2, 1)), 1, "one byte over: the oldest goes");
    assert_eq!(inbox.push(e(3, 150)), 1);
    assert_eq!(inbox.dropped(), 2);
    assert_eq!(inbox.bytes(), 1 + 150 + 2 * ERROR_OVERHEAD);
    let kept: Vec<_> = inbox.take_all().iter().map(|e| e.wire_seq).collect();
    assert_eq!(kept, vec![2, 3]);
    // An error bigger than the whole bound is not kept either, and is counted.
    let tiny = ErrorInbox::new(InboxLimits {
        max_errors: 4,
        max_bytes: ERROR_OVERHEAD,
    });
    assert_eq!(tiny.push(e(0, 1)), 1);
    assert!(tiny.is_empty());
    assert_eq!((tiny.dropped(), tiny.bytes()), (1, 0));
}

#[test]
fn sf_44_an_error_larger_than_the_inbox_byte_bound_drops_only_itself() {
    use sf_journal::status::Category;
    use sf_journal_io::drain::{ErrorInbox, InboxLimits, ERROR_OVERHEAD};
    use sf_journal_io::journal::ServerError;
    let e = |wire_seq: u64, len: usize| ServerError {
        status: ErrorStatus::WriteError,
        category: Category::Retriable,
        wire_seq,
        fsn: Some(wire_seq as i64),
        message: "m".repeat(len),
    };
    let inbox = ErrorInbox::new(InboxLimits {
        max_errors: 10,
        max_bytes: 100 + ERROR_OVERHEAD,
    });
    assert_eq!(inbox.push(e(0, 30)), 0);
    assert_eq!(inbox.push(e(1, 30)), 0);
    // One byte more than the whole bound: it cannot be kept, and the older errors, which
    // fit, are not dropped for it.
    assert_eq!(inbox.push(e(2, 101)), 1);
    assert_eq!(inbox.dropped(), 1);
    assert_eq!(inbox.bytes(), 60 + 2 * ERROR_OVERHEAD);
    // Exactly the whole bound: the older ones go to make room, and it is kept.
    assert_eq!(inbox.push(e(3, 100)), 2);
    assert_eq!(inbox.dropped(), 3);
    let kept: Vec<_> = inbox.take_all().iter().map(|e| e.wire_seq).collect();
    assert_eq!(kept, vec![3]);
}

#[test]
fn sf_26_a_close_waits_for_the_running_drain_and_returns_once_all_is_acknowledged() {
    scenarios::sf_26_a_close_waits_for_the_running_drain_and_returns_once_all_is_acknowledged(
        &Blocking,
    );
}

#[test]
fn sf_27_a_close_times_out_at_its_bound_and_leaves_the_tail_for_the_next_sender() {
    scenarios::sf_27_a_close_times_out_at_its_bound_and_leaves_the_tail_for_the_next_sender(
        &Blocking,
    );
}

#[test]
fn sf_28_a_close_of_0_or_minus_1_skips_the_wait_and_releases_the_lock() {
    scenarios::sf_28_a_close_of_0_or_minus_1_skips_the_wait_and_releases_the_lock(&Blocking);
}

#[test]
fn sf_28_a_close_reports_a_latched_terminal_error_not_yet_delivered() {
    scenarios::sf_28_a_close_reports_a_latched_terminal_error_not_yet_delivered(&Blocking);
}

#[test]
fn sf_w2_a_frame_over_the_servers_max_batch_size_is_refused_naming_its_fsn() {
    scenarios::sf_w2_a_frame_over_the_servers_max_batch_size_is_refused_naming_its_fsn(&Blocking);
}

#[test]
fn sf_w2_a_catch_up_frame_over_the_servers_max_batch_size_is_refused() {
    scenarios::sf_w2_a_catch_up_frame_over_the_servers_max_batch_size_is_refused(&Blocking);
}

#[test]
fn sf_43_an_error_for_a_frame_already_acknowledged_is_a_violation_and_trims_nothing_more() {
    scenarios::sf_43_an_error_for_a_frame_already_acknowledged_is_a_violation_and_trims_nothing_more(&Blocking);
}

#[test]
fn sf_44_a_websocket_protocol_error_from_the_server_is_a_terminal_violation() {
    scenarios::sf_44_a_websocket_protocol_error_from_the_server_is_a_terminal_violation(&Blocking);
}

#[test]
fn sf_18_a_close_from_the_server_is_a_break_that_is_retried() {
    scenarios::sf_18_a_close_from_the_server_is_a_break_that_is_retried(&Blocking);
}

#[test]
fn sf_18_a_poll_interval_of_0_neither_spins_nor_stalls_the_drain() {
    scenarios::sf_18_a_poll_interval_of_0_neither_spins_nor_stalls_the_drain(&Blocking);
}

#[test]
fn sf_18_a_connection_that_breaks_before_any_progress_keeps_the_back_off_growing() {
    scenarios::sf_18_a_connection_that_breaks_before_any_progress_keeps_the_back_off_growing(
        &Blocking,
    );
}

#[test]
fn sf_17_a_keepalive_interval_of_0_sends_no_ping() {
    scenarios::sf_17_a_keepalive_interval_of_0_sends_no_ping(&Blocking);
}

#[test]
fn sf_17_pings_keep_their_interval_when_the_poll_is_longer() {
    scenarios::sf_17_pings_keep_their_interval_when_the_poll_is_longer(&Blocking);
}

#[test]
fn sf_2_appends_return_at_once_while_the_drain_is_stuck_in_a_send() {
    scenarios::sf_2_appends_return_at_once_while_the_drain_is_stuck_in_a_send(&Blocking);
}

#[test]
fn sf_18_a_stalled_send_and_its_close_end_by_the_connect_timeout_and_reconnect() {
    scenarios::sf_18_a_stalled_send_and_its_close_end_by_the_connect_timeout_and_reconnect(
        &Blocking,
    );
}

#[test]
fn sf_14_a_durable_drain_sends_no_more_than_its_ok_queue_holds_and_drains() {
    scenarios::sf_14_a_durable_drain_sends_no_more_than_its_ok_queue_holds_and_drains(&Blocking);
}

#[test]
fn sf_18_an_upgrade_answered_a_byte_at_a_time_ends_by_the_connect_timeout() {
    scenarios::sf_18_an_upgrade_answered_a_byte_at_a_time_ends_by_the_connect_timeout(&Blocking);
}

/// A QWP frame naming the ids it was built from.
fn with_ids(ids: &[u32]) -> Vec<u8> {
    format!("QWP1 a frame using ids {ids:?}").into_bytes()
}

#[test]
fn sf_23_a_frame_with_symbols_waits_for_trim_like_any_other() {
    use sf_journal_io::journal::append_with_symbols_waiting;
    // Two segments of three frames: the producer must wait for acknowledgements to go on.
    let mut jc = small();
    jc.ring.max_total_bytes = 256;
    jc.ring.append_deadline_millis = 10_000;
    let j = Mutex::new(Journal::memory(jc));
    let s = server(vec![]);
    std::thread::scope(|scope| {
        let producer = scope.spawn(|| {
            for i in 0..30 {
                let sym = [format!("s{}", i % 4)];
                let (fsn, ids) = append_with_symbols_waiting(&j, &sym, with_ids).unwrap();
                assert_eq!((fsn, ids), (i as i64, vec![(i % 4) as u32]));
            }
        });
        let _ = Drain::new(DrainConfig::new(s.addr()))
            .run(&j, Instant::now() + Duration::from_secs(20), |j| {
                j.published_fsn() == 29
            })
            .unwrap();
        producer.join().unwrap();
    });
    assert_eq!(j.lock().unwrap().dict().symbols(), ["s0", "s1", "s2", "s3"]);
    let sent = s.connections()[0].messages();
    assert_eq!(sent.len(), 30);
    assert_eq!(sent[5], with_ids(&[1]));
}

#[test]
fn sf_23_a_frame_with_symbols_waits_until_the_deadline_then_fails_leaving_the_dictionary() {
    use sf_journal::ring::{AppendError, BackPressure};
    use sf_journal_io::journal::append_with_symbols_waiting;
    let mut jc = small();
    jc.ring.max_total_bytes = 128;
    jc.ring.append_deadline_millis = 60;
    let j = Mutex::new(Journal::memory(jc));
    for i in 0..3 {
        let _ = sf_journal_io::journal::append_waiting(&j, &payload(i)).unwrap();
    }
    let started = Instant::now();
    match append_with_symbols_waiting(&j, &["b"], with_ids) {
        Err(JournalError::Append(AppendError::DeadlineExceeded { case, .. })) => {
            assert_eq!(case, BackPressure::WhilePublishing);
        }
        other => panic!("expected the deadline, got {other:?}"),
    }
    assert!(started.elapsed() >= Duration::from_millis(59));
    assert_eq!(j.lock().unwrap().published_fsn(), 2);
    assert!(j.lock().unwrap().dict().symbols().is_empty());
}

#[test]
fn sf_44_a_close_refusing_what_the_client_sends_is_a_terminal_violation() {
    scenarios::sf_44_a_close_refusing_what_the_client_sends_is_a_terminal_violation(&Blocking);
}

#[test]
fn sf_14_a_durable_drain_past_the_ok_queue_byte_bound_merges_and_drains() {
    scenarios::sf_14_a_durable_drain_past_the_ok_queue_byte_bound_merges_and_drains(&Blocking);
}

#[test]
fn sf_13_every_status_already_arrived_is_read_so_a_long_backlog_never_stalls() {
    scenarios::sf_13_every_status_already_arrived_is_read_so_a_long_backlog_never_stalls(&Blocking);
}

#[test]
fn sf_9_catch_up_frames_go_out_in_bursts_with_the_statuses_read_between() {
    scenarios::sf_9_catch_up_frames_go_out_in_bursts_with_the_statuses_read_between(&Blocking);
}

#[test]
fn sf_9_an_ok_for_a_catch_up_frame_not_yet_sent_is_a_violation() {
    scenarios::sf_9_an_ok_for_a_catch_up_frame_not_yet_sent_is_a_violation(&Blocking);
}

#[test]
fn sf_18_a_status_trickled_a_byte_at_a_time_ends_by_the_deadline_and_is_read_whole() {
    scenarios::sf_18_a_status_trickled_a_byte_at_a_time_ends_by_the_deadline_and_is_read_whole(
        &Blocking,
    );
}

#[test]
fn sf_18_a_send_to_a_server_reading_slowly_ends_by_the_connect_timeout_and_reconnects() {
    scenarios::sf_18_a_send_to_a_server_reading_slowly_ends_by_the_connect_timeout_and_reconnects(
        &Blocking,
    );
}

#[test]
fn sf_44_after_a_terminal_error_appends_are_refused_and_close_ends_at_once() {
    scenarios::sf_44_after_a_terminal_error_appends_are_refused_and_close_ends_at_once(&Blocking);
}

#[test]
fn sf_24_a_full_journal_while_the_drain_reconnects_names_its_attempts_and_outage_start() {
    scenarios::sf_24_a_full_journal_while_the_drain_reconnects_names_its_attempts_and_outage_start(
        &Blocking,
    );
}

#[test]
fn sf_44_after_a_protocol_violation_appends_are_refused_and_close_ends_at_once() {
    scenarios::sf_44_after_a_protocol_violation_appends_are_refused_and_close_ends_at_once(
        &Blocking,
    );
}
