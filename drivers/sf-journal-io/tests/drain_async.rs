//! The tokio drain against the loopback QWP server: the key cases of the blocking drain's
//! tests (SF-W1 to SF-W4, SF-W8, SF-16 to SF-21, SF-43, SF-44), each named after its key with
//! `_tokio`, and the catch-up frames both drains send before replaying a slot with a
//! dictionary (SF-9). A case both drains share is a scenario of `common/scenarios.rs`, run here
//! on a tokio runtime of its own; the cases left here are the tokio drain's alone.
#![cfg(feature = "tokio")]

mod common;
use common::*;
#[path = "common/drain.rs"]
mod drain_common;
use drain_common::*;
#[path = "common/scenarios.rs"]
mod scenarios;
use scenarios::{ClosedBeside, Drained, Drains, Until};

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sf_journal_io::drain::{CatchUp, DrainConfig, DrainError, DrainReport};
use sf_journal_io::drain_async::AsyncDrain;
use sf_journal_io::journal::Closed;
use sf_journal_io::loopback::{Conn, LoopbackServer, ServerConfig};
use sf_journal_io::{Journal, JournalError};

/// The tokio drain, for the shared scenarios: each call runs to its end on this runtime.
struct Tokio(tokio::runtime::Runtime);

impl Tokio {
    fn new() -> Self {
        Tokio(
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
        )
    }
}

impl Drains for Tokio {
    fn drain(&self, c: DrainConfig, j: &Mutex<Journal>, by: Instant, until: &Until) -> Drained {
        self.0.block_on(AsyncDrain::new(c).run(j, by, until))
    }

    fn close(&self, j: &Mutex<Journal>, timeout_millis: i64) -> Result<Closed, JournalError> {
        let close = sf_journal_io::drain_async::close(j, timeout_millis);
        self.0.block_on(close)
    }

    fn close_beside(&self, s: &LoopbackServer, j: &Mutex<Journal>, ms: i64) -> ClosedBeside {
        let drain = AsyncDrain::new(DrainConfig::new(s.addr()));
        let started = Instant::now();
        let (drained, (c, took)) = self.0.block_on(async {
            tokio::join!(
                drain.run(j, started + Duration::from_secs(20), |_| false),
                async {
                    let c = sf_journal_io::drain_async::close(j, ms).await.unwrap();
                    (c, started.elapsed())
                }
            )
        });
        (c, took, drained)
    }
}

async fn run(
    s: &LoopbackServer,
    j: &Mutex<Journal>,
    tweak: impl FnOnce(&mut DrainConfig),
) -> Result<DrainReport, DrainError> {
    let mut c = DrainConfig::new(s.addr());
    tweak(&mut c);
    AsyncDrain::new(c)
        .run(j, Instant::now() + Duration::from_secs(20), |_| true)
        .await
}

#[test]
fn sf_w1_the_drain_upgrades_on_the_write_path_with_the_qwp_headers_tokio() {
    scenarios::sf_w1_the_drain_upgrades_on_the_write_path_with_the_qwp_headers(&Tokio::new());
}

#[test]
fn sf_w2_a_server_version_of_0_or_above_1_is_refused_and_an_absent_one_is_1_tokio() {
    scenarios::sf_w2_a_server_version_of_0_or_above_1_is_refused_and_an_absent_one_is_1(
        &Tokio::new(),
    );
}

#[test]
fn sf_w3_auth_and_role_refusals_end_the_drain_and_other_statuses_are_retried_tokio() {
    scenarios::sf_w3_auth_and_role_refusals_end_the_drain_and_other_statuses_are_retried(
        &Tokio::new(),
    );
}

#[test]
fn sf_w4_a_malformed_status_frame_is_a_protocol_violation_and_trims_nothing_tokio() {
    scenarios::sf_w4_a_malformed_status_frame_is_a_protocol_violation_and_trims_nothing(
        &Tokio::new(),
    );
}

#[test]
fn sf_w8_a_server_message_over_the_inbound_cap_is_a_violation_tokio() {
    scenarios::sf_w8_a_server_message_over_the_inbound_cap_is_a_violation(&Tokio::new());
}

#[test]
fn sf_w8_client_frames_are_whole_masked_binary_and_the_close_payload_is_empty_or_coded_tokio() {
    scenarios::sf_w8_client_frames_are_whole_masked_binary_and_the_close_payload_is_empty_or_coded(
        &Tokio::new(),
    );
}

#[test]
fn sf_16_a_server_that_does_not_echo_durable_ack_is_refused_tokio() {
    scenarios::sf_16_a_server_that_does_not_echo_durable_ack_is_refused(&Tokio::new());
}

#[test]
fn sf_17_pings_go_out_while_idle_with_durable_confirmations_pending_tokio() {
    scenarios::sf_17_pings_go_out_while_idle_with_durable_confirmations_pending(&Tokio::new());
}

#[test]
fn sf_18_connections_dropped_mid_stream_are_replayed_in_fsn_order_after_back_off_tokio() {
    scenarios::sf_18_connections_dropped_mid_stream_are_replayed_in_fsn_order_after_back_off(
        &Tokio::new(),
    );
}

#[test]
fn sf_18_the_back_off_doubles_over_consecutive_failed_attempts_tokio() {
    scenarios::sf_18_the_back_off_doubles_over_consecutive_failed_attempts(&Tokio::new());
}

#[tokio::test]
async fn sf_18_every_wait_ends_by_the_deadline_tokio() {
    // Nothing listens: every attempt fails, and the drain gives up at its deadline.
    let addr = nobody();
    let j = filled(1);
    let started = Instant::now();
    let r = AsyncDrain::new(DrainConfig::new(addr))
        .run(&j, Instant::now() + Duration::from_millis(300), |_| true)
        .await;
    assert!(
        matches!(
            r,
            Err(DrainError::TimedOut {
                acked: -1,
                published: 0
            })
        ),
        "{r:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    // A server that never acknowledges: the drain ends at its deadline too.
    let s = LoopbackServer::start(ServerConfig {
        ack_one_in: 0,
        idle_ack: Duration::from_secs(60),
        ..ServerConfig::default()
    })
    .unwrap();
    let started = Instant::now();
    let r = AsyncDrain::new(DrainConfig::new(s.addr()))
        .run(&j, Instant::now() + Duration::from_millis(300), |_| true)
        .await;
    assert!(matches!(r, Err(DrainError::TimedOut { .. })), "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn sf_19_a_reconnect_rewinds_to_the_first_unacknowledged_frame_on_the_wire_tokio() {
    scenarios::sf_19_a_reconnect_rewinds_to_the_first_unacknowledged_frame_on_the_wire(
        &Tokio::new(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sf_20_frames_appended_during_replay_are_sent_tokio() {
    let s = server(vec![Conn::DropAfter(3)]);
    let j = Arc::new(filled(5));
    let producer = {
        let j = Arc::clone(&j);
        std::thread::spawn(move || {
            for i in 5..40 {
                assert_eq!(j.lock().unwrap().append(&payload(i), 0).unwrap(), i as i64);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    // The drain runs as a task of its own (its future is Send).
    let drain = AsyncDrain::new(DrainConfig::new(s.addr()));
    let shared = Arc::clone(&j);
    let r = tokio::spawn(async move {
        drain
            .run(&shared, Instant::now() + Duration::from_secs(20), |j| {
                j.published_fsn() == 39
            })
            .await
    })
    .await
    .unwrap()
    .unwrap();
    producer.join().unwrap();
    assert!(r.connections >= 2);
    assert_eq!(j.lock().unwrap().acked_fsn(), 39);
    let last = s.connections().last().unwrap().messages();
    assert!(bytes(0, 40).ends_with(&last));
}

#[test]
fn sf_21_the_replayed_frames_counter_counts_frames_sent_again_tokio() {
    scenarios::sf_21_the_replayed_frames_counter_counts_frames_sent_again(&Tokio::new());
}

#[test]
fn sf_43_a_retriable_error_replays_the_rejected_frame_and_a_terminal_one_keeps_it_tokio() {
    scenarios::sf_43_a_retriable_error_replays_the_rejected_frame_and_a_terminal_one_keeps_it(
        &Tokio::new(),
    );
}

#[test]
fn sf_44_each_error_status_on_the_wire_ends_the_drain_or_is_retried_tokio() {
    scenarios::sf_44_each_error_status_on_the_wire_ends_the_drain_or_is_retried(&Tokio::new());
}

// SF-9: catch-up frames before replay.

fn s_addr() -> std::net::SocketAddr {
    "127.0.0.1:1".parse().unwrap()
}

#[tokio::test]
async fn sf_9_our_drain_sends_the_catch_up_frames_before_replaying_a_slot_with_a_dictionary_tokio()
{
    let s = server(vec![Conn::DropAfter(4)]);
    let j = slot_with_symbols("catch-up-tokio", 8);
    let r = run(&s, &j, with_catch_up).await.unwrap();
    assert_eq!(j.lock().unwrap().acked_fsn(), 7);
    let conns = s.connections();
    assert_eq!(conns.len(), 2);
    assert_eq!(r.catch_up_frames, 2, "one per connection");
    // Each connection: the catch-up frame first, then the journal's frames from the first
    // unacknowledged one, in FSN order; the acknowledgement of the catch-up frame's wire
    // sequence stands for no frame.
    let first = conns[0].messages();
    assert_eq!(first[0], dict_frame());
    assert_eq!(&first[1..], bytes(0, first.len() - 1).as_slice());
    let acked_first = last_ok(&conns[0]).map_or(-1, |w| w as i64 - 1);
    let second = conns[1].messages();
    assert_eq!(second[0], dict_frame());
    let from = (acked_first + 1) as usize;
    assert_eq!(&second[1..], bytes(from, 8).as_slice());
}

#[tokio::test]
async fn sf_9_without_a_dictionary_or_an_encoder_no_catch_up_frame_is_sent_tokio() {
    // No encoder (the default): nothing is sent first, dictionary or not.
    assert!(DrainConfig::new(s_addr()).catch_up.is_none());
    let s = server(vec![]);
    let j = slot_with_symbols("catch-up-none", 2);
    let r = run(&s, &j, |_| {}).await.unwrap();
    assert_eq!(r.catch_up_frames, 0);
    assert_eq!(s.connections()[0].messages(), bytes(0, 2));
    // No dictionary: nothing to catch up on.
    let s = server(vec![]);
    let r = run(&s, &filled(3), with_catch_up).await.unwrap();
    assert_eq!(r.catch_up_frames, 0);
    assert_eq!(s.connections()[0].messages(), bytes(0, 3));
    // A catch-up frame that is not a QWP message is never sent.
    let s = server(vec![]);
    let j = slot_with_symbols("catch-up-not-qwp", 2);
    let r = run(&s, &j, |c| {
        c.catch_up = Some(CatchUp::new(|_| vec![b"dict".to_vec()]))
    })
    .await;
    assert!(matches!(r, Err(DrainError::CatchUpNotQwp)), "{r:?}");
    assert!(s.connections()[0].messages().is_empty());
}

#[test]
fn sf_14_a_connection_dropped_with_oks_awaiting_durability_is_replayed_and_drains_tokio() {
    scenarios::sf_14_a_connection_dropped_with_oks_awaiting_durability_is_replayed_and_drains(
        &Tokio::new(),
    );
}

#[test]
fn sf_18_a_steady_producer_cannot_hold_the_drain_past_its_deadline_tokio() {
    scenarios::sf_18_a_steady_producer_cannot_hold_the_drain_past_its_deadline(&Tokio::new());
}

#[test]
fn sf_16_a_drain_whose_request_and_journal_disagree_on_durable_ack_is_refused_tokio() {
    scenarios::sf_16_a_drain_whose_request_and_journal_disagree_on_durable_ack_is_refused(
        &Tokio::new(),
    );
}

#[test]
fn sf_36_periodic_checkpoints_go_on_while_the_wire_is_down_tokio() {
    scenarios::sf_36_periodic_checkpoints_go_on_while_the_wire_is_down(&Tokio::new());
}

#[test]
fn sf_44_an_error_status_keeps_its_message_wire_seq_and_category_tokio() {
    scenarios::sf_44_an_error_status_keeps_its_message_wire_seq_and_category(&Tokio::new());
}

#[test]
fn sf_44_the_error_handler_is_called_for_each_error_status_tokio() {
    scenarios::sf_44_the_error_handler_is_called_for_each_error_status(&Tokio::new());
}

#[test]
fn sf_44_the_error_inbox_is_bounded_drops_the_oldest_and_counts_the_drops_tokio() {
    scenarios::sf_44_the_error_inbox_is_bounded_drops_the_oldest_and_counts_the_drops(&Tokio::new());
}

#[test]
fn sf_w7_an_error_message_over_1024_bytes_or_not_utf8_is_a_typed_violation_tokio() {
    scenarios::sf_w7_an_error_message_over_1024_bytes_or_not_utf8_is_a_typed_violation(
        &Tokio::new(),
    );
}

#[test]
fn sf_26_a_close_waits_for_the_running_drain_and_returns_once_all_is_acknowledged_tokio() {
    scenarios::sf_26_a_close_waits_for_the_running_drain_and_returns_once_all_is_acknowledged(
        &Tokio::new(),
    );
}

#[test]
fn sf_27_a_close_times_out_at_its_bound_and_leaves_the_tail_for_the_next_sender_tokio() {
    scenarios::sf_27_a_close_times_out_at_its_bound_and_leaves_the_tail_for_the_next_sender(
        &Tokio::new(),
    );
}

#[test]
fn sf_28_a_close_of_0_or_minus_1_skips_the_wait_and_releases_the_lock_tokio() {
    scenarios::sf_28_a_close_of_0_or_minus_1_skips_the_wait_and_releases_the_lock(&Tokio::new());
}

#[test]
fn sf_28_a_close_reports_a_latched_terminal_error_not_yet_delivered_tokio() {
    scenarios::sf_28_a_close_reports_a_latched_terminal_error_not_yet_delivered(&Tokio::new());
}

#[test]
fn sf_w2_a_frame_over_the_servers_max_batch_size_is_refused_naming_its_fsn_tokio() {
    scenarios::sf_w2_a_frame_over_the_servers_max_batch_size_is_refused_naming_its_fsn(
        &Tokio::new(),
    );
}

#[test]
fn sf_w2_a_catch_up_frame_over_the_servers_max_batch_size_is_refused_tokio() {
    scenarios::sf_w2_a_catch_up_frame_over_the_servers_max_batch_size_is_refused(&Tokio::new());
}

#[test]
fn sf_43_an_error_for_a_frame_already_acknowledged_is_a_violation_and_trims_nothing_more_tokio() {
    scenarios::sf_43_an_error_for_a_frame_already_acknowledged_is_a_violation_and_trims_nothing_more(&Tokio::new());
}

#[test]
fn sf_44_a_websocket_protocol_error_from_the_server_is_a_terminal_violation_tokio() {
    scenarios::sf_44_a_websocket_protocol_error_from_the_server_is_a_terminal_violation(
        &Tokio::new(),
    );
}

#[test]
fn sf_18_a_close_from_the_server_is_a_break_that_is_retried_tokio() {
    scenarios::sf_18_a_close_from_the_server_is_a_break_that_is_retried(&Tokio::new());
}

#[test]
fn sf_18_a_poll_interval_of_0_neither_spins_nor_stalls_the_drain_tokio() {
    scenarios::sf_18_a_poll_interval_of_0_neither_spins_nor_stalls_the_drain(&Tokio::new());
}

#[test]
fn sf_18_a_connection_that_breaks_before_any_progress_keeps_the_back_off_growing_tokio() {
    scenarios::sf_18_a_connection_that_breaks_before_any_progress_keeps_the_back_off_growing(
        &Tokio::new(),
    );
}

#[test]
fn sf_17_a_keepalive_interval_of_0_sends_no_ping_tokio() {
    scenarios::sf_17_a_keepalive_interval_of_0_sends_no_ping(&Tokio::new());
}

#[test]
fn sf_17_pings_keep_their_interval_when_the_poll_is_longer_tokio() {
    scenarios::sf_17_pings_keep_their_interval_when_the_poll_is_longer(&Tokio::new());
}

#[test]
fn sf_2_appends_return_at_once_while_the_drain_is_stuck_in_a_send_tokio() {
    scenarios::sf_2_appends_return_at_once_while_the_drain_is_stuck_in_a_send(&Tokio::new());
}

#[test]
fn sf_18_a_stalled_send_and_its_close_end_by_the_connect_timeout_and_reconnect_tokio() {
    scenarios::sf_18_a_stalled_send_and_its_close_end_by_the_connect_timeout_and_reconnect(
        &Tokio::new(),
    );
}

#[test]
fn sf_14_a_durable_drain_sends_no_more_than_its_ok_queue_holds_and_drains_tokio() {
    scenarios::sf_14_a_durable_drain_sends_no_more_than_its_ok_queue_holds_and_drains(&Tokio::new());
}

#[test]
fn sf_18_an_upgrade_answered_a_byte_at_a_time_ends_by_the_connect_timeout_tokio() {
    scenarios::sf_18_an_upgrade_answered_a_byte_at_a_time_ends_by_the_connect_timeout(&Tokio::new());
}

#[test]
fn sf_44_a_close_refusing_what_the_client_sends_is_a_terminal_violation_tokio() {
    scenarios::sf_44_a_close_refusing_what_the_client_sends_is_a_terminal_violation(&Tokio::new());
}

#[test]
fn sf_14_a_durable_drain_past_the_ok_queue_byte_bound_merges_and_drains_tokio() {
    scenarios::sf_14_a_durable_drain_past_the_ok_queue_byte_bound_merges_and_drains(&Tokio::new());
}

#[test]
fn sf_13_every_status_already_arrived_is_read_so_a_long_backlog_never_stalls_tokio() {
    scenarios::sf_13_every_status_already_arrived_is_read_so_a_long_backlog_never_stalls(
        &Tokio::new(),
    );
}

#[test]
fn sf_9_catch_up_frames_go_out_in_bursts_with_the_statuses_read_between_tokio() {
    scenarios::sf_9_catch_up_frames_go_out_in_bursts_with_the_statuses_read_between(&Tokio::new());
}

#[test]
fn sf_9_an_ok_for_a_catch_up_frame_not_yet_sent_is_a_violation_tokio() {
    scenarios::sf_9_an_ok_for_a_catch_up_frame_not_yet_sent_is_a_violation(&Tokio::new());
}

#[test]
fn sf_18_a_status_trickled_a_byte_at_a_time_ends_by_the_deadline_and_is_read_whole_tokio() {
    scenarios::sf_18_a_status_trickled_a_byte_at_a_time_ends_by_the_deadline_and_is_read_whole(
        &Tokio::new(),
    );
}

#[test]
fn sf_18_a_send_to_a_server_reading_slowly_ends_by_the_connect_timeout_and_reconnects_tokio() {
    scenarios::sf_18_a_send_to_a_server_reading_slowly_ends_by_the_connect_timeout_and_reconnects(
        &Tokio::new(),
    );
}

#[test]
fn sf_44_after_a_terminal_error_appends_are_refused_and_close_ends_at_once_tokio() {
    scenarios::sf_44_after_a_terminal_error_appends_are_refused_and_close_ends_at_once(
        &Tokio::new(),
    );
}

#[test]
fn sf_24_a_full_journal_while_the_drain_reconnects_names_its_attempts_and_outage_start_tokio() {
    scenarios::sf_24_a_full_journal_while_the_drain_reconnects_names_its_attempts_and_outage_start(
        &Tokio::new(),
    );
}

#[test]
fn sf_44_after_a_protocol_violation_appends_are_refused_and_close_ends_at_once_tokio() {
    scenarios::sf_44_after_a_protocol_violation_appends_are_refused_and_close_ends_at_once(
        &Tokio::new(),
    );
}
