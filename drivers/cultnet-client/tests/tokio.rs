//! The async client against the loopback receipt server over real sockets on 127.0.0.1.
#![cfg(feature = "tokio")]

use std::time::{Duration, Instant};

use cultnet_client::loopback::{LoopbackOptions, LoopbackServer};
use cultnet_client::tokio::Client;
use cultnet_client::WriteMode;
use cultnet_client::{
    BatchOutcome, BatchWrite, ClientConfig, LateAnswer, Outcome, UnconfirmedReason, WriteFailure,
    WriteState,
};
use cultnet_receipts::frames::Document;
use cultnet_sim::server::{Faults, ServerConfig, CODE_WRITE_NOT_AUTHORIZED};

const PAYLOAD: &[u8] = &[0x92, 0x01, 0x02];

fn doc(schema: &str, key: &str) -> Document {
    peers::document(schema, key, PAYLOAD)
}

async fn connect(server: &LoopbackServer, nonce: u64) -> Client {
    let mut config = ClientConfig::new("loopback-async-test", nonce);
    config.connect_timeout = Duration::from_secs(5);
    config.write_timeout = Duration::from_secs(5);
    Client::connect(&server.target(), config)
        .await
        .expect("connects")
}

/// Waits, off the runtime's threads, for a scripted peer's thread to end; returns its result.
async fn joined<T: Send + 'static>(peer: std::thread::JoinHandle<T>) -> T {
    tokio::task::spawn_blocking(move || peer.join().expect("peer"))
        .await
        .expect("joined")
}

fn deny(server: &LoopbackServer, schema: &str) {
    let actor = server.actor().to_owned();
    server.with_model(|s, _| s.deny(&actor, schema));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_34_an_async_put_and_delete_over_tcp_are_admitted() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut client = connect(&server, 1).await;
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
    assert_eq!(
        server.with_model(|s, _| s.read("s.one", "k1").map(<[u8]>::to_vec)),
        Some(PAYLOAD.to_vec())
    );
    let d = client
        .delete("s.one", "k1", WriteMode::Receipt)
        .await
        .expect("delete");
    assert_eq!(d.outcome, Outcome::Admitted);
    assert_eq!(client.result_window_ms(), 5000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_37_the_async_throwing_api_over_tcp_has_distinct_refused_and_unconfirmed_errors() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    deny(&server, "s.locked");
    let mut client = connect(&server, 2).await;
    client
        .put_admitted(doc("s.open", "k1"))
        .await
        .expect("admitted");
    match client.put_admitted(doc("s.locked", "k1")).await {
        Err(WriteFailure::Refused { refusal, .. }) => {
            assert_eq!(refusal.code.as_deref(), Some(CODE_WRITE_NOT_AUTHORIZED));
            assert!(!refusal.attributed_by_count);
        }
        other => panic!("refused expected, got {other:?}"),
    }
    server.with_model(|s, _| {
        s.set_faults(Faults {
            silent: true,
            ..Faults::default()
        });
    });
    let t0 = Instant::now();
    match client.delete_admitted("s.open", "k1").await {
        Err(WriteFailure::Unconfirmed { reason, .. }) => {
            assert_eq!(reason, UnconfirmedReason::WindowElapsed);
        }
        other => panic!("unconfirmed expected, got {other:?}"),
    }
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(5000),
        "settled early: {took:?}"
    );
    assert!(took < Duration::from_millis(6500), "settled late: {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_36_an_async_dropped_connection_over_tcp_is_unconfirmed_session_ended() {
    let server = LoopbackServer::start(LoopbackOptions {
        drop_on_write: true,
        ..LoopbackOptions::default()
    })
    .expect("server");
    let mut client = connect(&server, 3).await;
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::SessionEnded,
            server_missed_window: false,
        }
    );
    assert!(client.session_ended());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_39_an_async_client_of_a_legacy_server_without_a_hello_waits_500_ms() {
    let server = LoopbackServer::start(LoopbackOptions {
        config: ServerConfig {
            receipts: false,
            ..ServerConfig::default()
        },
        send_hello: false,
        ..LoopbackOptions::default()
    })
    .expect("server");
    deny(&server, "s.locked");
    let mut client = connect(&server, 4).await;
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    let took = t0.elapsed();
    assert!(matches!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: false,
        }
    ));
    assert!(took >= Duration::from_millis(500) && took < Duration::from_millis(2000));
    let r = client
        .put(doc("s.locked", "k2"), WriteMode::Receipt)
        .await
        .expect("put");
    assert!(matches!(r.outcome, Outcome::Refused(ref x) if x.attributed_by_count));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_41_an_async_late_admission_over_tcp_is_recorded_on_the_handle() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut client = connect(&server, 5).await;
    client
        .put_admitted(doc("s.warm", "k0"))
        .await
        .expect("admitted");
    server.with_model(|s, _| {
        s.set_faults(Faults {
            answer_delay_ms: 5400,
            ..Faults::default()
        });
    });
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    assert!(matches!(w.outcome, Outcome::Unconfirmed { .. }));
    client.pump_for(Duration::from_millis(1500)).await;
    assert!(matches!(
        client.state(w.handle),
        Some(WriteState::Settled {
            late: Some(LateAnswer::AdmittedLate),
            ..
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_45_an_async_batch_over_tcp_settles_member_by_member() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    deny(&server, "s.locked");
    let mut client = connect(&server, 6).await;
    let b = client
        .batch(
            vec![
                BatchWrite::Put(doc("s.locked", "k1")),
                BatchWrite::Put(doc("s.open", "k2")),
            ],
            WriteMode::Receipt,
        )
        .await
        .expect("batch");
    assert!(matches!(b.members[0].outcome, Outcome::Refused(_)));
    assert_eq!(b.members[1].outcome, Outcome::Admitted);
    assert_eq!(b.outcome, BatchOutcome::Refused(vec![b.members[0].handle]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_resend_of_an_unconfirmed_delete_is_admitted_under_its_id() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut client = connect(&server, 7).await;
    client
        .put_admitted(doc("s.one", "k1"))
        .await
        .expect("admitted");
    server.with_model(|s, _| {
        s.set_faults(Faults {
            silent: true,
            ..Faults::default()
        });
    });
    let w = client
        .delete("s.one", "k1", WriteMode::Receipt)
        .await
        .expect("delete");
    assert!(matches!(w.outcome, Outcome::Unconfirmed { .. }));
    server.with_model(|s, _| s.set_faults(Faults::default()));
    let r = client.resend_delete(w.handle).await.expect("resend");
    assert_eq!(r.outcome, Outcome::Admitted);
    assert_eq!(r.message_id, w.message_id);
    assert_eq!(server.with_model(|s, _| s.counters().replayed), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_46_an_async_send_only_put_delete_and_batch_over_tcp_are_sent_never_admitted() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut client = connect(&server, 51).await;
    // Receipts are the default: the first put waits for its admission.
    let w = client
        .put(doc("s.one", "k0"), WriteMode::Receipt)
        .await
        .expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
    server.with_model(|s, _| {
        s.set_faults(Faults {
            answer_delay_ms: 300,
            ..Faults::default()
        });
    });
    let t0 = Instant::now();
    let p = client
        .put(doc("s.one", "k1"), WriteMode::SendOnly)
        .await
        .expect("put");
    let d = client
        .delete("s.one", "k0", WriteMode::SendOnly)
        .await
        .expect("delete");
    let b = client
        .batch(
            vec![BatchWrite::Put(doc("s.one", "k2"))],
            WriteMode::SendOnly,
        )
        .await
        .expect("batch");
    assert!(
        t0.elapsed() < Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(p.outcome, Outcome::Sent);
    assert_eq!(d.outcome, Outcome::Sent);
    assert_eq!(b.members[0].outcome, Outcome::Sent);
    assert_eq!(
        b.outcome,
        BatchOutcome::Unconfirmed(vec![b.members[0].handle])
    );
    // The receipts arrive later and change nothing.
    client.pump_for(Duration::from_millis(600)).await;
    for h in [p.handle, d.handle, b.members[0].handle] {
        assert_eq!(
            client.state(h),
            Some(WriteState::Settled {
                outcome: Outcome::Sent,
                late: None,
            })
        );
    }
    assert_eq!(
        server.with_model(|s, _| s.read("s.one", "k2").map(<[u8]>::to_vec)),
        Some(PAYLOAD.to_vec())
    );
}

mod peers;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_44_async_answers_over_tcp_naming_ids_not_in_flight_settle_nothing() {
    let (port, peer) = peers::strangers_peer();
    let config = peers::scripted_config("loopback-async-test", 44);
    let mut client = Client::connect(&peers::local(port), config)
        .await
        .expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    peers::assert_only_its_own_id_settled(&w.outcome, client.tracker_counters().unmatched_answers);
    joined(peer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_connect_deadline_bounds_the_whole_hello_write_against_a_trickle_reader() {
    let (port, peer) = peers::trickle_peer();
    let mut config = ClientConfig::new("x".repeat(16 << 20), 74);
    config.max_frame_bytes = 32 << 20;
    config.connect_timeout = Duration::from_millis(1000);
    let t0 = Instant::now();
    let got = Client::connect(&peers::local(port), config).await;
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    assert!(
        matches!(
            got,
            Err(cultnet_client::ClientError::Connect(
                cultnet_client::ConnectError::TimedOut
            ))
        ),
        "{got:?}"
    );
    joined(peer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_length_prefix_above_the_cap_ends_the_session_and_closes_the_connection() {
    let (port, peer) = peers::oversized_prefix_peer();
    let config = peers::scripted_config("loopback-async-test", 22);
    let mut client = Client::connect(&peers::local(port), config)
        .await
        .expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    assert!(matches!(w.outcome, Outcome::Unconfirmed { .. }));
    assert!(client.session_ended());
    assert!(matches!(
        client.violation(),
        Some(cultnet_client::Violation::Framing(_))
    ));
    // The client is still alive: the peer sees the connection closed all the same.
    let closed = joined(peer).await;
    assert!(closed, "the connection was closed");
    drop(client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_39_an_async_window_runs_from_the_end_of_the_write() {
    let (port, peer) = peers::stalling_peer(Duration::from_millis(5500), 16);
    let mut config = peers::scripted_config("loopback-async-test", 72);
    config.write_timeout = Duration::from_secs(30);
    let mut client = Client::connect(&peers::local(port), config)
        .await
        .expect("connects");
    let members = peers::big_batch();
    let b = client
        .batch(members, WriteMode::Receipt)
        .await
        .expect("batch");
    assert_eq!(b.outcome, BatchOutcome::Admitted, "{:?}", b.members);
    joined(peer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_36_an_async_write_deadline_bounds_the_whole_write_against_a_trickle_reader() {
    let (port, peer) = peers::trickle_peer();
    let mut config = peers::scripted_config("loopback-async-test", 71);
    config.write_timeout = Duration::from_millis(1000);
    let mut client = Client::connect(&peers::local(port), config)
        .await
        .expect("connects");
    let members = peers::big_batch();
    let t0 = Instant::now();
    let b = client
        .batch(members, WriteMode::Receipt)
        .await
        .expect("batch");
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    for m in &b.members {
        assert_eq!(
            m.outcome,
            Outcome::Unconfirmed {
                reason: UnconfirmedReason::LocalSendFailed,
                server_missed_window: false,
            }
        );
    }
    drop(client);
    joined(peer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_33_a_call_cancelled_mid_write_settles_its_writes_and_ends_the_session() {
    // The peer reads nothing for 3 s, so the batch is still being written when it is dropped.
    let (port, peer) = peers::stalling_peer(Duration::from_secs(3), 0);
    let mut config = peers::scripted_config("loopback-async-test", 33);
    config.write_timeout = Duration::from_secs(30);
    let mut client = Client::connect(&peers::local(port), config)
        .await
        .expect("connects");
    let members: Vec<BatchWrite> = peers::big_batch();
    let cancelled = tokio::time::timeout(
        Duration::from_millis(300),
        client.batch(members, WriteMode::Receipt),
    )
    .await;
    assert!(cancelled.is_err(), "the batch was still writing");
    assert_eq!(client.unsettled(), 0, "no write stays registered");
    assert!(
        client.session_ended(),
        "the half-written stream is not used again"
    );
    // A later call writes nothing on the broken stream: it settles session_ended.
    let w = client
        .put(doc("s.one", "after"), WriteMode::Receipt)
        .await
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::SessionEnded,
            server_missed_window: false,
        }
    );
    assert_eq!(client.unsettled(), 0);
    joined(peer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_count_async_frames_and_bytes_each_way_and_writes_by_outcome() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut client = connect(&server, 62).await;
    assert_eq!(client.stats().transport.frames_out, 1);
    let w = client
        .put(doc("s.st", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
    deny(&server, "s.no");
    let r = client
        .put(doc("s.no", "k2"), WriteMode::Receipt)
        .await
        .expect("put");
    assert!(matches!(r.outcome, Outcome::Refused(_)));
    let s = client.stats();
    assert_eq!((s.transport.frames_out, s.transport.frames_in), (3, 3));
    assert!(s.transport.bytes_out > 3 * 4 && s.transport.bytes_in > 3 * 4);
    assert_eq!((s.tracker.admitted, s.tracker.refused), (1, 1));
    assert_eq!(s.tracker.in_flight, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_47_an_async_receipt_with_an_unknown_key_or_version_over_tcp_settles_nothing() {
    let (port, peer) = peers::new_frames_peer();
    let config = peers::scripted_config("loopback-async-test", 47);
    let mut client = Client::connect(&peers::local(port), config)
        .await
        .expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    peers::assert_new_frames_settled_nothing(
        &w.outcome,
        client.counters().undecodable_frames,
        client.violation(),
        client.session_ended(),
    );
    joined(peer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_13_async_without_a_client_hello_a_silent_admission_is_unconfirmed_at_500_ms_and_no_window_is_missed(
) {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut config = ClientConfig::new("loopback-async-test", 113);
    config.connect_timeout = Duration::from_secs(5);
    config.send_hello = false;
    let mut client = Client::connect(&server.target(), config)
        .await
        .expect("connects");
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    let took = t0.elapsed();
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: false,
        }
    );
    assert!(took < Duration::from_millis(3000), "{took:?}");
    assert_eq!(client.result_window_ms(), 500);
    assert_eq!(
        client.tracker_counters().windows_missed_by_receipt_server,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_45_an_async_batch_of_no_members_is_an_application_error_and_sends_nothing() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut client = connect(&server, 145).await;
    let out = client.counters().frames_out;
    for mode in [WriteMode::Receipt, WriteMode::SendOnly] {
        let got = client.batch(Vec::new(), mode).await;
        assert!(
            matches!(got, Err(cultnet_client::ClientError::EmptyBatch)),
            "{got:?}"
        );
    }
    assert!(matches!(
        client.batch_admitted(Vec::new()).await,
        Err(cultnet_client::BatchFailure::Client(
            cultnet_client::ClientError::EmptyBatch
        ))
    ));
    assert_eq!(client.counters().frames_out, out, "nothing was sent");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_35_an_async_refusal_over_tcp_carries_its_code_details_and_text() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let mut client = connect(&server, 135).await;
    let w = client
        .put(doc("s.one", " "), WriteMode::Receipt)
        .await
        .expect("put");
    let Outcome::Refused(r) = w.outcome else {
        panic!("refused expected, got {:?}", w.outcome);
    };
    assert_eq!(r.code.as_deref(), Some("message_invalid"));
    assert_eq!(
        r.details.as_ref().and_then(|d| d.field.as_deref()),
        Some("message")
    );
    assert_eq!(r.error, "message_invalid: the message could not be read");
    assert!(!r.attributed_by_count, "named by its id");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_43_an_async_legacy_refusal_over_tcp_refuses_only_a_lone_unanswered_write() {
    let server = LoopbackServer::start(LoopbackOptions {
        config: ServerConfig {
            receipts: false,
            ..ServerConfig::default()
        },
        send_hello: false,
        ..LoopbackOptions::default()
    })
    .expect("server");
    deny(&server, "s.locked");
    let mut client = connect(&server, 143).await;
    let w = client
        .put(doc("s.locked", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    let Outcome::Refused(r) = w.outcome else {
        panic!("refused expected, got {:?}", w.outcome);
    };
    assert!(r.attributed_by_count, "error.v0 names no write");
    assert_eq!(r.code.as_deref(), Some(CODE_WRITE_NOT_AUTHORIZED));
    // With two unanswered writes the same refusal settles neither.
    let b = client
        .batch(
            vec![
                BatchWrite::Put(doc("s.locked", "k2")),
                BatchWrite::Put(doc("s.open", "k3")),
            ],
            WriteMode::Receipt,
        )
        .await
        .expect("batch");
    for m in &b.members {
        assert!(
            matches!(
                m.outcome,
                Outcome::Unconfirmed {
                    reason: UnconfirmedReason::WindowElapsed,
                    server_missed_window: false,
                }
            ),
            "{m:?}"
        );
    }
    assert_eq!(client.tracker_counters().unattributed_errors, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_39_async_a_receipt_hello_read_past_the_legacy_window_does_not_stretch_it() {
    // As for the blocking client: the hello and the admission are read at 600, past the legacy
    // window of the put sent at 0 before any server hello.
    let clock = std::sync::Arc::new(peers::ManualClock::default());
    let (port, peer) = peers::late_hello_peer(clock.clone(), 600);
    let mut config = peers::scripted_config("loopback-async-test", 39);
    config.clock = clock;
    let mut client = Client::connect(&peers::local(port), config)
        .await
        .expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .await
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: false,
        }
    );
    client.pump_for(Duration::from_secs(10)).await;
    assert_eq!(
        client.state(w.handle),
        Some(WriteState::Settled {
            outcome: w.outcome.clone(),
            late: Some(LateAnswer::AdmittedLate),
        })
    );
    assert_eq!(client.result_window_ms(), 5000);
    client.close().await;
    joined(peer).await;
}
