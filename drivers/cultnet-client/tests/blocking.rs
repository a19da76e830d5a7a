//! The blocking client against the loopback receipt server over real sockets on 127.0.0.1.

use std::time::{Duration, Instant};

use cultnet_client::blocking::Client;
use cultnet_client::loopback::{LoopbackOptions, LoopbackServer};
use cultnet_client::WriteMode;
use cultnet_client::{
    BatchFailure, BatchOutcome, BatchWrite, ClientConfig, LateAnswer, Outcome, UnconfirmedReason,
    WriteFailure, WriteState,
};
use cultnet_receipts::frames::{Document, RawValue};
use cultnet_sim::server::{Faults, ServerConfig, CODE_WRITE_NOT_AUTHORIZED};

const PAYLOAD: &[u8] = &[0x81, 0xa1, b'n', 0x07];

fn doc(schema: &str, key: &str) -> Document {
    peers::document(schema, key, PAYLOAD)
}

fn connect(server: &LoopbackServer, nonce: u64) -> Client {
    let mut config = ClientConfig::new("loopback-test", nonce);
    config.connect_timeout = Duration::from_secs(5);
    config.write_timeout = Duration::from_secs(5);
    Client::connect(&server.target(), config).expect("connects")
}

fn legacy_without_hello() -> LoopbackServer {
    LoopbackServer::start(LoopbackOptions {
        config: ServerConfig {
            receipts: false,
            ..ServerConfig::default()
        },
        send_hello: false,
        ..LoopbackOptions::default()
    })
    .expect("server starts")
}

fn receipt_server() -> LoopbackServer {
    LoopbackServer::start(LoopbackOptions::default()).expect("server starts")
}

fn deny(server: &LoopbackServer, schema: &str) {
    let actor = server.actor().to_owned();
    server.with_model(|s, _| s.deny(&actor, schema));
}

fn stored(server: &LoopbackServer, schema: &str, key: &str) -> Option<Vec<u8>> {
    server.with_model(|s, _| s.read(schema, key).map(<[u8]>::to_vec))
}

/// A first admitted write, so the client has read the server's hello before a fault is set.
fn admitted_first(server: &LoopbackServer, client: &mut Client) {
    let w = client
        .put(doc("s.warm", "k0"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
    assert_eq!(client.result_window_ms(), 5000);
    let _ = server;
}

#[test]
fn w_34_a_put_admitted_over_tcp_is_admitted_and_stored() {
    let server = receipt_server();
    let mut client = connect(&server, 1);
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
    assert!(w.message_id.starts_with('w'));
    assert_eq!(stored(&server, "s.one", "k1").as_deref(), Some(PAYLOAD));
    assert_eq!(client.result_window_ms(), 5000);
    assert_eq!(client.counters().hellos, 1);
}

#[test]
fn w_34_a_delete_admitted_over_tcp_is_admitted_and_removes_the_record() {
    let server = receipt_server();
    let mut client = connect(&server, 2);
    assert_eq!(
        client
            .put(doc("s.one", "k1"), WriteMode::Receipt)
            .expect("put")
            .outcome,
        Outcome::Admitted
    );
    let w = client
        .delete("s.one", "k1", WriteMode::Receipt)
        .expect("delete");
    assert_eq!(w.outcome, Outcome::Admitted);
    assert_eq!(stored(&server, "s.one", "k1"), None);
}

#[test]
fn w_35_a_refusal_over_tcp_names_the_write_and_carries_its_code() {
    let server = receipt_server();
    deny(&server, "s.locked");
    let mut client = connect(&server, 3);
    let w = client
        .put(doc("s.locked", "k1"), WriteMode::Receipt)
        .expect("put");
    let Outcome::Refused(r) = w.outcome else {
        panic!("refused expected, got {:?}", w.outcome);
    };
    assert_eq!(r.code.as_deref(), Some(CODE_WRITE_NOT_AUTHORIZED));
    assert!(!r.attributed_by_count, "error.v1 names the write by its id");
    assert_eq!(stored(&server, "s.locked", "k1"), None);
    // The next write on the same connection is unaffected.
    assert_eq!(
        client
            .put(doc("s.open", "k1"), WriteMode::Receipt)
            .expect("put")
            .outcome,
        Outcome::Admitted
    );
}

#[test]
fn w_24_a_write_past_the_servers_table_over_tcp_is_refused_limit_reached_and_the_session_goes_on() {
    let server = LoopbackServer::start(LoopbackOptions {
        config: ServerConfig {
            max_entries_per_session: 2,
            ..ServerConfig::default()
        },
        ..LoopbackOptions::default()
    })
    .expect("server starts");
    let mut client = connect(&server, 24);
    for key in ["k1", "k2"] {
        let w = client
            .put(doc("s.open", key), WriteMode::Receipt)
            .expect("put");
        assert_eq!(w.outcome, Outcome::Admitted);
    }
    for key in ["k3", "k4"] {
        let w = client
            .put(doc("s.open", key), WriteMode::Receipt)
            .expect("put");
        let Outcome::Refused(r) = w.outcome else {
            panic!("refused expected, got {:?}", w.outcome);
        };
        assert_eq!(r.code.as_deref(), Some("limit_reached"));
        assert_eq!(r.details, None);
        assert!(!r.attributed_by_count, "the refusal names the write");
        assert_eq!(stored(&server, "s.open", key), None);
    }
    assert!(!client.session_ended());
    assert_eq!(client.violation(), None);
}

#[test]
fn w_36_silence_over_tcp_is_unconfirmed_at_the_receipt_window() {
    let server = receipt_server();
    let mut client = connect(&server, 4);
    admitted_first(&server, &mut client);
    server.with_model(|s, _| {
        s.set_faults(Faults {
            silent: true,
            ..Faults::default()
        });
    });
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    let took = t0.elapsed();
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: true,
        }
    );
    assert!(
        took >= Duration::from_millis(5000),
        "settled early: {took:?}"
    );
    assert!(took < Duration::from_millis(6500), "settled late: {took:?}");
    // Unconfirmed is not lost: the silent server did apply it.
    assert_eq!(stored(&server, "s.one", "k1").as_deref(), Some(PAYLOAD));
    assert_eq!(
        client.tracker_counters().windows_missed_by_receipt_server,
        1
    );
}

#[test]
fn w_36_a_dropped_connection_over_tcp_is_unconfirmed_session_ended() {
    let server = LoopbackServer::start(LoopbackOptions {
        drop_on_write: true,
        ..LoopbackOptions::default()
    })
    .expect("server starts");
    let mut client = connect(&server, 5);
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::SessionEnded,
            server_missed_window: false,
        }
    );
    assert!(t0.elapsed() < Duration::from_millis(4000));
    assert!(client.session_ended());
    // A write made after the session ended settles session_ended when sent, without waiting.
    let t1 = Instant::now();
    let w2 = client
        .delete("s.one", "k1", WriteMode::Receipt)
        .expect("delete");
    assert_eq!(
        w2.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::SessionEnded,
            server_missed_window: false,
        }
    );
    assert!(t1.elapsed() < Duration::from_millis(100));
    assert_ne!(w.message_id, w2.message_id);
}

#[test]
fn w_37_the_throwing_api_over_tcp_returns_only_for_admitted() {
    let server = receipt_server();
    deny(&server, "s.locked");
    let mut client = connect(&server, 6);
    let h = client.put_admitted(doc("s.open", "k1")).expect("admitted");
    assert!(matches!(
        client.state(h),
        Some(WriteState::Settled {
            outcome: Outcome::Admitted,
            late: None
        })
    ));
    match client.delete_admitted("s.locked", "k1") {
        Err(WriteFailure::Refused { refusal, .. }) => {
            assert_eq!(refusal.code.as_deref(), Some(CODE_WRITE_NOT_AUTHORIZED));
        }
        other => panic!("refused expected, got {other:?}"),
    }
}

#[test]
fn w_37_the_throwing_api_over_tcp_has_a_distinct_unconfirmed_error() {
    let server = legacy_without_hello();
    let mut client = connect(&server, 7);
    match client.put_admitted(doc("s.one", "k1")) {
        Err(WriteFailure::Unconfirmed { reason, .. }) => {
            assert_eq!(reason, UnconfirmedReason::WindowElapsed);
        }
        other => panic!("unconfirmed expected, got {other:?}"),
    }
}

#[test]
fn w_39_a_legacy_server_without_a_hello_over_tcp_gets_the_500_ms_window() {
    let server = legacy_without_hello();
    let mut client = connect(&server, 8);
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    let took = t0.elapsed();
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: false,
        }
    );
    assert!(
        took >= Duration::from_millis(500),
        "settled early: {took:?}"
    );
    assert!(took < Duration::from_millis(2000), "settled late: {took:?}");
    assert_eq!(client.result_window_ms(), 500);
    assert_eq!(client.counters().hellos, 0);
    // The legacy server applied it silently: unconfirmed is not refused.
    assert_eq!(stored(&server, "s.one", "k1").as_deref(), Some(PAYLOAD));
}

#[test]
fn w_39_a_legacy_hello_over_tcp_keeps_the_500_ms_window() {
    let server = LoopbackServer::start(LoopbackOptions {
        config: ServerConfig {
            receipts: false,
            ..ServerConfig::default()
        },
        ..LoopbackOptions::default()
    })
    .expect("server starts");
    let mut client = connect(&server, 9);
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert!(matches!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            ..
        }
    ));
    assert!(t0.elapsed() < Duration::from_millis(2000));
    assert_eq!(client.counters().hellos, 1);
    assert_eq!(client.result_window_ms(), 500);
}

#[test]
fn w_41_a_late_admission_over_tcp_is_recorded_on_the_handle() {
    let server = receipt_server();
    let mut client = connect(&server, 10);
    admitted_first(&server, &mut client);
    server.with_model(|s, _| {
        s.set_faults(Faults {
            answer_delay_ms: 5400,
            ..Faults::default()
        });
    });
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: true,
        }
    );
    assert!(matches!(
        client.state(w.handle),
        Some(WriteState::Settled { late: None, .. })
    ));
    client.pump_for(Duration::from_millis(1500));
    match client.state(w.handle) {
        Some(WriteState::Settled { outcome, late }) => {
            // What the caller was told does not change; the late answer is recorded.
            assert_eq!(outcome, w.outcome);
            assert_eq!(late, Some(LateAnswer::AdmittedLate));
        }
        other => panic!("settled expected, got {other:?}"),
    }
}

#[test]
fn w_43_a_legacy_refusal_over_tcp_refuses_the_only_unanswered_write() {
    let server = legacy_without_hello();
    deny(&server, "s.locked");
    let mut client = connect(&server, 11);
    let w = client
        .put(doc("s.locked", "k1"), WriteMode::Receipt)
        .expect("put");
    let Outcome::Refused(r) = w.outcome else {
        panic!("refused expected, got {:?}", w.outcome);
    };
    assert!(r.attributed_by_count, "error.v0 names no write");
    assert_eq!(r.code.as_deref(), Some(CODE_WRITE_NOT_AUTHORIZED));
}

#[test]
fn w_43_a_legacy_refusal_over_tcp_settles_nothing_with_two_unanswered() {
    let server = legacy_without_hello();
    deny(&server, "s.locked");
    let mut client = connect(&server, 12);
    let b = client
        .batch(
            vec![
                BatchWrite::Put(doc("s.locked", "k1")),
                BatchWrite::Put(doc("s.open", "k2")),
            ],
            WriteMode::Receipt,
        )
        .expect("batch");
    for m in &b.members {
        assert!(
            matches!(
                m.outcome,
                Outcome::Unconfirmed {
                    reason: UnconfirmedReason::WindowElapsed,
                    ..
                }
            ),
            "{m:?}"
        );
    }
    assert_eq!(client.tracker_counters().unattributed_errors, 1);
}

#[test]
fn w_45_a_batch_over_tcp_settles_member_by_member() {
    let server = receipt_server();
    deny(&server, "s.locked");
    let mut client = connect(&server, 13);
    let b = client
        .batch(
            vec![
                BatchWrite::Put(doc("s.open", "k1")),
                BatchWrite::Put(doc("s.locked", "k2")),
                BatchWrite::Delete {
                    schema_id: "s.open".to_owned(),
                    record_key: "k9".to_owned(),
                },
            ],
            WriteMode::Receipt,
        )
        .expect("batch");
    assert_eq!(b.members.len(), 3);
    assert_eq!(b.members[0].outcome, Outcome::Admitted);
    assert!(matches!(b.members[1].outcome, Outcome::Refused(_)));
    assert_eq!(b.members[2].outcome, Outcome::Admitted);
    assert_eq!(b.outcome, BatchOutcome::Refused(vec![b.members[1].handle]));
    let mut ids: Vec<&str> = b.members.iter().map(|m| m.message_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each member has its own messageId");
    // Nothing is rolled back: the admitted member is stored.
    assert_eq!(stored(&server, "s.open", "k1").as_deref(), Some(PAYLOAD));
}

#[test]
fn w_45_an_all_admitted_batch_over_tcp_is_admitted() {
    let server = receipt_server();
    let mut client = connect(&server, 14);
    let handles = client
        .batch_admitted(vec![
            BatchWrite::Put(doc("s.open", "k1")),
            BatchWrite::Put(doc("s.open", "k2")),
        ])
        .expect("admitted");
    assert_eq!(handles.len(), 2);
}

#[test]
fn w_45_a_batch_over_tcp_with_a_refused_member_throws_naming_it() {
    let server = receipt_server();
    deny(&server, "s.locked");
    let mut client = connect(&server, 15);
    match client.batch_admitted(vec![
        BatchWrite::Put(doc("s.open", "k1")),
        BatchWrite::Put(doc("s.locked", "k2")),
    ]) {
        Err(BatchFailure::Refused { refused, members }) => {
            assert_eq!(refused, vec![members[1].handle]);
            assert_eq!(members[0].outcome, Outcome::Admitted);
        }
        other => panic!("refused expected, got {other:?}"),
    }
}

#[test]
fn a_closed_port_is_a_connect_error_within_the_deadline() {
    let port = {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        l.local_addr().expect("addr").port()
    };
    let config = peers::scripted_config("loopback-test", 16);
    let t0 = Instant::now();
    let r = Client::connect(&peers::local(port), config);
    assert!(matches!(r, Err(cultnet_client::ClientError::Connect(_))));
    assert!(t0.elapsed() < Duration::from_secs(3));
}

#[test]
fn w_36_a_write_past_its_deadline_over_tcp_is_unconfirmed_local_send_failed() {
    // A peer that accepts and never reads: the socket buffers fill and the write deadline passes.
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // It holds the connection until the test is done (at most 20 s), so only the write deadline
    // can end the batch within the bound below, however loaded the machine.
    let (done, hold) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let (s, _) = listener.accept().expect("accept");
        let _ = hold.recv_timeout(Duration::from_secs(20));
        drop(s);
    });
    let mut config = peers::scripted_config("loopback-test", 17);
    config.write_timeout = Duration::from_millis(300);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let mut big = vec![0xc6];
    big.extend_from_slice(&(900_000u32).to_be_bytes());
    big.resize(5 + 900_000, 0x5a);
    let members = (0..16)
        .map(|i| {
            let mut d = doc("s.big", &format!("k{i}"));
            d.payload = RawValue::new(big.clone()).expect("one value");
            BatchWrite::Put(d)
        })
        .collect();
    let t0 = Instant::now();
    let b = client.batch(members, WriteMode::Receipt).expect("batch");
    // Encoding 14 MB takes a while on a loaded machine; the holder would keep a batch without
    // a write deadline waiting 20 s.
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    for m in &b.members {
        assert_eq!(
            m.outcome,
            Outcome::Unconfirmed {
                reason: UnconfirmedReason::LocalSendFailed,
                server_missed_window: false,
            }
        );
    }
    assert!(matches!(b.outcome, BatchOutcome::Unconfirmed(ref u) if u.len() == 16));
    assert!(client.session_ended());
    let _ = done.send(());
    holder.join().expect("holder");
}

#[test]
fn w_42_an_unconfirmed_put_resent_over_tcp_under_its_id_is_admitted_once() {
    let server = receipt_server();
    let mut client = connect(&server, 18);
    admitted_first(&server, &mut client);
    server.with_model(|s, _| {
        s.set_faults(Faults {
            silent: true,
            ..Faults::default()
        });
    });
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert!(matches!(w.outcome, Outcome::Unconfirmed { .. }));
    let applied = server.with_model(|s, _| {
        s.set_faults(Faults::default());
        s.counters().applied
    });
    // Other content under the same id is refused by the client itself.
    assert!(client.resend_put(w.handle, doc("s.one", "other")).is_err());
    let r = client
        .resend_put(w.handle, doc("s.one", "k1"))
        .expect("resend");
    assert_eq!(r.outcome, Outcome::Admitted);
    assert_eq!(r.message_id, w.message_id);
    assert_eq!(server.with_model(|s, _| s.counters().applied), applied);
    assert_eq!(server.with_model(|s, _| s.counters().replayed), 1);
    // An admitted write is not resent.
    assert!(client.resend_put(r.handle, doc("s.one", "k1")).is_err());
}

#[test]
fn w_34_a_duplicate_key_receipt_over_tcp_admits_nothing() {
    let server = receipt_server();
    let mut client = connect(&server, 19);
    admitted_first(&server, &mut client);
    server.with_model(|s, _| {
        s.set_faults(Faults {
            duplicate_key_receipts: true,
            ..Faults::default()
        });
    });
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: true,
        }
    );
    assert_eq!(client.counters().undecodable_frames, 1);
    assert!(matches!(
        client.violation(),
        Some(cultnet_client::Violation::Decode(_))
    ));
    assert!(
        !client.session_ended(),
        "a malformed frame settles nothing and ends nothing"
    );
}

#[test]
fn a_length_prefix_above_the_cap_from_the_server_ends_the_session() {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let peer = std::thread::spawn(move || {
        use std::io::Write;
        let (mut s, _) = listener.accept().expect("accept");
        s.write_all(&[0xff, 0xff, 0xff, 0xff]).expect("write");
        std::thread::sleep(Duration::from_secs(2));
    });
    let config = peers::scripted_config("loopback-test", 20);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::SessionEnded,
            server_missed_window: false,
        }
    );
    assert!(t0.elapsed() < Duration::from_millis(400));
    assert!(matches!(
        client.violation(),
        Some(cultnet_client::Violation::Framing(_))
    ));
    peer.join().expect("peer");
}

#[test]
fn a_length_prefix_above_the_cap_ends_the_session_and_closes_the_connection() {
    let (port, peer) = peers::oversized_prefix_peer();
    let config = peers::scripted_config("loopback-test", 21);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert!(matches!(w.outcome, Outcome::Unconfirmed { .. }));
    assert!(client.session_ended());
    // The client is still alive: the peer sees the connection closed all the same.
    assert!(peer.join().expect("peer"), "the connection was closed");
    drop(client);
}

#[test]
fn w_40_a_silent_receipt_server_over_tcp_is_unconfirmed_and_counted_but_a_legacy_one_is_not() {
    let server = receipt_server();
    let mut client = connect(&server, 23);
    admitted_first(&server, &mut client);
    server.with_model(|s, _| {
        s.set_faults(Faults {
            silent: true,
            ..Faults::default()
        });
    });
    let w = client
        .delete("s.one", "k1", WriteMode::Receipt)
        .expect("delete");
    assert!(matches!(
        w.outcome,
        Outcome::Unconfirmed {
            server_missed_window: true,
            ..
        }
    ));
    assert_eq!(
        client.tracker_counters().windows_missed_by_receipt_server,
        1
    );
    // A legacy server's silence is its normal answer to an admitted write: not counted.
    let legacy = legacy_without_hello();
    let mut old = connect(&legacy, 24);
    let w = old
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert!(matches!(
        w.outcome,
        Outcome::Unconfirmed {
            server_missed_window: false,
            ..
        }
    ));
    assert_eq!(old.tracker_counters().windows_missed_by_receipt_server, 0);
}

#[test]
fn w_13_a_client_that_sends_no_hello_over_tcp_gets_the_legacy_answers() {
    let server = receipt_server();
    deny(&server, "s.locked");
    let mut config = ClientConfig::new("loopback-test", 31);
    config.connect_timeout = Duration::from_secs(5);
    config.send_hello = false;
    let mut client = Client::connect(&server.target(), config).expect("connects");
    // The server's refusal comes as error.v0, which names no write: it is attributed only
    // because this is the one unanswered write.
    let w = client
        .put(doc("s.locked", "k1"), WriteMode::Receipt)
        .expect("put");
    let Outcome::Refused(r) = w.outcome else {
        panic!("refused expected, got {:?}", w.outcome);
    };
    assert!(r.attributed_by_count, "a legacy refusal carries no id");
    assert_eq!(r.code.as_deref(), Some(CODE_WRITE_NOT_AUTHORIZED));
    assert!(server.with_model(|s, _| {
        s.remembered(cultnet_sim::server::ConnId(0)) == Some((0, 0))
            && !s.is_receipt_connection(cultnet_sim::server::ConnId(0))
    }));
}

#[test]
fn w_46_every_client_write_call_takes_its_mode() {
    // Neither receipts nor send-only is the default: put, delete and batch take the mode at
    // every call (these coercions compile only so), and the mode has no `Default`.
    let _put: fn(
        &mut Client,
        Document,
        WriteMode,
    ) -> Result<cultnet_client::Written, cultnet_client::ClientError> = Client::put;
    let _delete: fn(
        &mut Client,
        &str,
        &str,
        WriteMode,
    ) -> Result<cultnet_client::Written, cultnet_client::ClientError> = Client::delete;
    let _batch: fn(
        &mut Client,
        Vec<BatchWrite>,
        WriteMode,
    ) -> Result<cultnet_client::BatchWritten, cultnet_client::ClientError> = Client::batch;
    // The same put to the same server settles by what its call chose.
    let server = receipt_server();
    let mut client = connect(&server, 4646);
    let r = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(r.outcome, Outcome::Admitted);
    let s = client
        .put(doc("s.one", "k2"), WriteMode::SendOnly)
        .expect("put");
    assert_eq!(s.outcome, Outcome::Sent);
}

#[test]
fn w_46_a_send_only_put_over_tcp_is_sent_at_once_and_never_admitted() {
    let server = receipt_server();
    let mut client = connect(&server, 41);
    admitted_first(&server, &mut client);
    // Silence: a receipt write would wait its whole window; a send-only one does not wait.
    server.with_model(|s, _| {
        s.set_faults(Faults {
            answer_delay_ms: 300,
            ..Faults::default()
        });
    });
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::SendOnly)
        .expect("put");
    assert_eq!(w.outcome, Outcome::Sent);
    assert!(
        t0.elapsed() < Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
    // The server's receipt comes later and changes nothing: sent is never admitted.
    client.pump_for(Duration::from_millis(600));
    assert_eq!(
        client.state(w.handle),
        Some(WriteState::Settled {
            outcome: Outcome::Sent,
            late: None,
        })
    );
    assert_eq!(stored(&server, "s.one", "k1"), Some(PAYLOAD.to_vec()));
    // The throwing style returns only for admitted.
    assert!(matches!(
        w.into_admitted(),
        Err(WriteFailure::OnlySent { .. })
    ));
    // Receipts stay the default of the next call.
    assert_eq!(
        client
            .put(doc("s.one", "k2"), WriteMode::Receipt)
            .expect("put")
            .outcome,
        Outcome::Admitted
    );
}

#[test]
fn w_46_a_send_only_delete_and_batch_over_tcp_are_sent_and_the_batch_is_not_admitted() {
    let server = legacy_without_hello();
    let mut client = connect(&server, 42);
    let t0 = Instant::now();
    let w = client
        .delete("s.one", "k1", WriteMode::SendOnly)
        .expect("delete");
    assert_eq!(w.outcome, Outcome::Sent);
    let b = client
        .batch(
            vec![
                BatchWrite::Put(doc("s.one", "a")),
                BatchWrite::Put(doc("s.one", "b")),
            ],
            WriteMode::SendOnly,
        )
        .expect("batch");
    // No 500 ms legacy window was waited for.
    assert!(
        t0.elapsed() < Duration::from_millis(400),
        "{:?}",
        t0.elapsed()
    );
    assert!(b.members.iter().all(|m| m.outcome == Outcome::Sent));
    let handles: Vec<_> = b.members.iter().map(|m| m.handle).collect();
    assert_eq!(b.outcome, BatchOutcome::Unconfirmed(handles));
    // The legacy server applied them all the same.
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(stored(&server, "s.one", "a"), Some(PAYLOAD.to_vec()));
    assert_eq!(stored(&server, "s.one", "b"), Some(PAYLOAD.to_vec()));
}

use peers::{read_frame, write_frame};

#[test]
fn w_44_answers_over_tcp_naming_ids_not_in_flight_settle_nothing() {
    let (port, peer) = peers::strangers_peer();
    let config = peers::scripted_config("loopback-test", 43);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    peers::assert_only_its_own_id_settled(&w.outcome, client.tracker_counters().unmatched_answers);
    peer.join().expect("peer");
}

#[test]
fn w_7_a_put_whose_id_fails_the_rule_over_tcp_is_refused_and_not_stored() {
    use cultnet_receipts::frames::{DocumentPut, ErrorV1, Hello, ERROR_V1, WRITE_ADMITTED_V0};
    use cultnet_receipts::Frame;
    let server = receipt_server();
    let mut s = std::net::TcpStream::connect(server.addr()).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(3)))
        .expect("timeout");
    assert!(matches!(read_frame(&mut s), Frame::Hello(_)));
    write_frame(
        &mut s,
        &Frame::Hello(Hello {
            runtime_id: "raw".to_owned(),
            runtime_kind: "client".to_owned(),
            supported_message_versions: Some(vec![
                WRITE_ADMITTED_V0.to_owned(),
                ERROR_V1.to_owned(),
            ]),
            ..Hello::default()
        }),
    );
    for (id, key) in [("-", "a"), (" ", "b"), ("a\u{200B}", "c")] {
        write_frame(
            &mut s,
            &Frame::DocumentPut(DocumentPut {
                message_id: id.to_owned(),
                document: doc("s.one", key),
            }),
        );
        let got = read_frame(&mut s);
        assert!(
            matches!(&got, Frame::ErrorV1(ErrorV1 { message_id: Some(m), code: Some(c), .. })
                if m == id && c.as_str() == "message_invalid"),
            "{got:?}"
        );
        assert_eq!(stored(&server, "s.one", key), None);
    }
}

mod peers;

#[test]
fn the_connect_deadline_bounds_the_whole_hello_write_against_a_trickle_reader() {
    let (port, peer) = peers::trickle_peer();
    let mut config = ClientConfig::new("x".repeat(16 << 20), 73);
    config.max_frame_bytes = 32 << 20;
    config.connect_timeout = Duration::from_millis(1000);
    let t0 = Instant::now();
    let got = Client::connect(&peers::local(port), config);
    // A 16 MB hello at 640 kB/s would take over 20 s; the connect deadline ends it after 1 s.
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
    peer.join().expect("peer");
}

#[test]
fn w_36_the_write_deadline_bounds_the_whole_write_against_a_trickle_reader() {
    let (port, peer) = peers::trickle_peer();
    let mut config = peers::scripted_config("loopback-test", 71);
    config.write_timeout = Duration::from_millis(1000);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let members = peers::big_batch();
    let t0 = Instant::now();
    let b = client.batch(members, WriteMode::Receipt).expect("batch");
    // Writing 14 MB at 640 kB/s would take over 15 s; the deadline ends it after 1 s (plus
    // the encoding, slow on a loaded machine).
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
    assert!(client.session_ended());
    drop(client);
    peer.join().expect("peer");
}

#[test]
fn w_39_the_window_runs_from_the_end_of_the_write() {
    // The peer reads nothing for 5.5 s, longer than the receipt window, so the write of the
    // batch blocks that long; it then admits every member at once. Timed from before the
    // write, every window would have run out by the time the write returned.
    let (port, peer) = peers::stalling_peer(Duration::from_millis(5500), 16);
    let mut config = peers::scripted_config("loopback-test", 72);
    config.write_timeout = Duration::from_secs(30);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let members = peers::big_batch();
    let b = client.batch(members, WriteMode::Receipt).expect("batch");
    assert_eq!(b.outcome, BatchOutcome::Admitted, "{:?}", b.members);
    peer.join().expect("peer");
}

#[test]
fn w_38_two_connects_with_one_config_mint_disjoint_ids() {
    let server = receipt_server();
    let mut config = ClientConfig::new("loopback-test", 38);
    config.connect_timeout = Duration::from_secs(5);
    let mut ids = std::collections::BTreeSet::new();
    for _ in 0..2 {
        let mut client = Client::connect(&server.target(), config.clone()).expect("connects");
        for i in 0..3 {
            let w = client
                .put(doc("s.one", &format!("k{i}")), WriteMode::Receipt)
                .expect("put");
            assert_eq!(w.outcome, Outcome::Admitted);
            assert!(
                ids.insert(w.message_id.clone()),
                "{} minted again",
                w.message_id
            );
        }
        client.close();
    }
    assert_eq!(ids.len(), 6);
}

#[test]
fn w_45_a_batch_larger_than_the_settled_bound_still_reports_every_member() {
    let server = receipt_server();
    for kept in [0, 2] {
        let mut config = ClientConfig::new("loopback-test", 45);
        config.connect_timeout = Duration::from_secs(5);
        config.limits.max_settled_kept = kept;
        let mut client = Client::connect(&server.target(), config).expect("connects");
        let members = (0..5)
            .map(|i| BatchWrite::Put(doc("s.one", &format!("m{i}"))))
            .collect();
        let b = client.batch(members, WriteMode::Receipt).expect("batch");
        assert_eq!(b.outcome, BatchOutcome::Admitted);
        assert_eq!(b.members.len(), 5);
        assert!(b.members.iter().all(|m| m.outcome == Outcome::Admitted));
        let w = client
            .put(doc("s.one", "single"), WriteMode::Receipt)
            .expect("put");
        assert_eq!(w.outcome, Outcome::Admitted);
        assert!(w.message_id.starts_with('w'));
    }
}

#[test]
fn loopback_reader_threads_of_closed_connections_are_reaped() {
    let server = receipt_server();
    for i in 0..5 {
        let mut c = connect(&server, 900 + i);
        c.close();
        drop(c);
        std::thread::sleep(Duration::from_millis(100));
    }
    let _live = connect(&server, 999);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        server.reader_threads() <= 2,
        "{} reader threads kept",
        server.reader_threads()
    );
}

#[test]
fn loopback_a_peer_that_does_not_read_never_stalls_the_model() {
    use cultnet_receipts::frames::DocumentPut;
    use cultnet_receipts::Frame;
    let server = receipt_server();
    let mut s = std::net::TcpStream::connect(server.addr()).expect("connects");
    write_frame(&mut s, &peers::receipt_hello());
    // Forty puts whose 400 kB record keys come back in their receipts: 16 MB of answers the
    // peer never reads, more than the socket buffers hold, so the server's writes block.
    let key = "k".repeat(400_000);
    let writer = std::thread::spawn(move || {
        for i in 0..40 {
            let mut d = doc("s.big", &format!("{i}{key}"));
            d.payload = RawValue::new(vec![0x01]).expect("one value");
            let f = Frame::DocumentPut(DocumentPut {
                message_id: format!("w{i}"),
                document: d,
            });
            let body = cultnet_receipts::encode(&f).expect("encodes");
            use std::io::Write;
            if s.write_all(&(body.len() as u32).to_be_bytes()).is_err()
                || s.write_all(&body).is_err()
            {
                break;
            }
        }
        std::thread::sleep(Duration::from_secs(4));
        drop(s);
    });
    std::thread::sleep(Duration::from_millis(1500));
    let mut worst = Duration::ZERO;
    for _ in 0..20 {
        let t0 = Instant::now();
        server.with_model(|m, _| m.budget_used());
        worst = worst.max(t0.elapsed());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        worst < Duration::from_millis(300),
        "the model was held {worst:?}"
    );
    writer.join().expect("writer");
}

#[test]
fn stats_count_frames_and_bytes_each_way_and_writes_by_outcome() {
    let server = receipt_server();
    let mut client = connect(&server, 61);
    let hello = client.stats().transport;
    // The client's hello went out at connect.
    assert_eq!(hello.frames_out, 1);
    assert!(hello.bytes_out > 4);
    assert_eq!(
        client
            .put(doc("s.st", "k1"), WriteMode::Receipt)
            .expect("put")
            .outcome,
        Outcome::Admitted
    );
    deny(&server, "s.no");
    assert!(matches!(
        client
            .put(doc("s.no", "k2"), WriteMode::Receipt)
            .expect("put")
            .outcome,
        Outcome::Refused(_)
    ));
    let s = client.stats();
    assert_eq!(s.transport.frames_out, 3);
    assert!(s.transport.bytes_out > hello.bytes_out + 2 * 4);
    // The server's hello, an admission and a refusal.
    assert_eq!(s.transport.frames_in, 3);
    assert_eq!(s.transport.hellos, 1);
    assert!(s.transport.bytes_in > 3 * 4);
    assert_eq!((s.tracker.admitted, s.tracker.refused), (1, 1));
    assert_eq!(s.tracker.writes_registered, 2);
    assert_eq!((s.tracker.in_flight, s.tracker.in_flight_bytes), (0, 0));
    assert_eq!(s.transport, client.counters());
}

#[test]
fn w_36_a_frame_trickled_byte_by_byte_over_tcp_cannot_stretch_the_result_window() {
    // Each socket read brings a byte every 5 ms, well within the read's own wait: only a wait
    // that looks at the clock between reads settles the put at the 500 ms window, not when
    // the 4 s trickle ends.
    let (port, peer) = peers::trickling_frame_peer();
    let config = peers::scripted_config("loopback-test", 74);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    let took = t0.elapsed();
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: false,
        }
    );
    assert!(took < Duration::from_millis(1500), "settled late: {took:?}");
    client.close();
    drop(client);
    peer.join().expect("peer");
}

#[test]
fn w_47_a_receipt_with_an_unknown_key_or_version_over_tcp_settles_nothing() {
    let (port, peer) = peers::new_frames_peer();
    let config = peers::scripted_config("loopback-test", 47);
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    peers::assert_new_frames_settled_nothing(
        &w.outcome,
        client.counters().undecodable_frames,
        client.violation(),
        client.session_ended(),
    );
    peer.join().expect("peer");
}

#[test]
fn w_13_without_a_client_hello_a_silent_admission_over_tcp_is_unconfirmed_at_500_ms_and_no_window_is_missed(
) {
    // A receipt server: its hello lists both frames, but the client declared nothing, so the
    // connection is legacy and the server owes no receipt.
    let server = receipt_server();
    let mut config = ClientConfig::new("loopback-test", 113);
    config.connect_timeout = Duration::from_secs(5);
    config.send_hello = false;
    let mut client = Client::connect(&server.target(), config).expect("connects");
    let t0 = Instant::now();
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
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
    assert_eq!(stored(&server, "s.one", "k1"), Some(PAYLOAD.to_vec()));
}

#[test]
fn w_45_a_batch_of_no_members_is_an_application_error_and_sends_nothing() {
    let server = receipt_server();
    let mut client = connect(&server, 145);
    admitted_first(&server, &mut client);
    let out = client.counters().frames_out;
    for mode in [WriteMode::Receipt, WriteMode::SendOnly] {
        let got = client.batch(Vec::new(), mode);
        assert!(
            matches!(got, Err(cultnet_client::ClientError::EmptyBatch)),
            "{got:?}"
        );
    }
    assert!(matches!(
        client.batch_admitted(Vec::new()),
        Err(cultnet_client::BatchFailure::Client(
            cultnet_client::ClientError::EmptyBatch
        ))
    ));
    assert_eq!(client.counters().frames_out, out, "nothing was sent");
    // The client goes on.
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
}

#[test]
fn w_42_without_a_client_hello_over_tcp_a_resend_is_refused_so_the_legacy_connection_never_applies_it_twice(
) {
    let server = receipt_server();
    let mut config = ClientConfig::new("loopback-test", 142);
    config.connect_timeout = Duration::from_secs(5);
    config.send_hello = false;
    let mut client = Client::connect(&server.target(), config).expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert!(matches!(w.outcome, Outcome::Unconfirmed { .. }));
    let again = client.resend_put(w.handle, doc("s.one", "k1"));
    assert!(
        matches!(
            again,
            Err(cultnet_client::ClientError::Tracker(
                cultnet_receipts::TrackerError::NotReceiptServer
            ))
        ),
        "{again:?}"
    );
    assert_eq!(server.with_model(|s, _| s.counters().applied), 1);
}

#[test]
fn w_35_a_refusal_over_tcp_carries_its_code_details_and_text() {
    let server = receipt_server();
    let mut client = connect(&server, 135);
    let w = client
        .put(doc("s.one", " "), WriteMode::Receipt)
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
    assert_eq!(stored(&server, "s.one", " "), None);
}

#[test]
fn w_39_a_receipt_hello_read_past_the_legacy_window_does_not_stretch_it() {
    // The put is sent at 0 with no server hello yet: the legacy window applies. The server's
    // receipt hello and the admission are read at 600: the put's age reached 500 first, so it
    // is unconfirmed and the admission is recorded late.
    let clock = std::sync::Arc::new(peers::ManualClock::default());
    let (port, peer) = peers::late_hello_peer(clock.clone(), 600);
    let mut config = peers::scripted_config("loopback-test", 39);
    config.clock = clock;
    let mut client = Client::connect(&peers::local(port), config).expect("connects");
    let w = client
        .put(doc("s.one", "k1"), WriteMode::Receipt)
        .expect("put");
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: UnconfirmedReason::WindowElapsed,
            server_missed_window: false,
        }
    );
    // The peer closes after its frames, which ends the pump once they are read.
    client.pump_for(Duration::from_secs(10));
    assert_eq!(
        client.state(w.handle),
        Some(WriteState::Settled {
            outcome: w.outcome.clone(),
            late: Some(LateAnswer::AdmittedLate),
        })
    );
    assert_eq!(client.result_window_ms(), 5000);
    client.close();
    peer.join().expect("peer");
}
