//! The blocking client over real sockets against a scripted GAR server.

mod common;

use std::time::{Duration, Instant};

use common::{
    config, play_subscription, refused_port_url, rename_topic, renamed_topic, s1, serve,
    teardown_unknown_key, unknown_key, Answer, IV,
};
use gar_driver::blocking::Client;
use gar_driver::{Error, Event, RecordId, Status, StopReason, Violation};
use serde_json::json;

const NO_LOOK: Duration = Duration::ZERO;
const WAIT: Duration = Duration::from_secs(5);

fn all_events(c: &Client) -> Vec<Event> {
    c.events(WAIT).collect()
}

fn stops(ev: &[Event]) -> Vec<(StopReason, Option<Violation>)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Stopped { reason, violation } => Some((*reason, violation.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn g_1_blocking_upgrade_offers_gar_protocol_at_the_path_with_the_token() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.close(Some(1000));
    });
    let mut cfg = config(&server.url);
    cfg.token = Some("a b&c".into());
    let c = Client::connect(cfg).unwrap();
    let _ = all_events(&c);
    let r = server.report();
    assert_eq!(r.upgrade.path_and_query, "/gar?token=a%20b%26c");
    assert_eq!(r.upgrade.protocols.as_deref(), Some("gar-protocol"));
    assert!(r
        .first_text
        .unwrap()
        .starts_with(r#"{"message_type":"Introduction""#));
}

#[test]
fn g_12_blocking_heartbeats_go_out_on_the_clock() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.listen_for(Duration::from_millis(IV * 2 + IV / 4));
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let _ = all_events(&c);
    let r = server.report();
    let beats = r
        .seen
        .iter()
        .filter(|v| v["message_type"] == "Heartbeat")
        .count();
    // A loaded machine may stall the clock past a beat (the engine then snaps forward), so the
    // floor is two; the ceiling catches a driver that beats more often than its clock says.
    assert!((2..=5).contains(&beats), "{beats} heartbeats");
}

#[test]
fn g_15_blocking_silence_stops_with_heartbeat_timeout() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.recv_type("Introduction");
        p.introduce(200);
        p.beat();
        p.listen_for(Duration::from_secs(4));
    });
    let mut cfg = config(&server.url);
    cfg.engine.heartbeat_timeout_interval = 200;
    let started = Instant::now();
    let c = Client::connect(cfg).unwrap();
    let ev = all_events(&c);
    let took = started.elapsed();
    assert_eq!(stops(&ev), vec![(StopReason::HeartbeatTimeout, None)]);
    // The first-beat grace would be 2 s; a margin for a loaded machine below it.
    assert!(took < Duration::from_millis(1800), "{took:?}");
    assert!(took >= Duration::from_millis(200), "{took:?}");
    drop(server);
}

#[test]
fn g_15_blocking_a_server_trickling_one_message_stops_with_heartbeat_timeout() {
    // The server beats once, then trickles a message a byte every 5 ms for 4 s: every socket
    // read of the client brings a byte, so only a read bounded as a whole lets the liveness
    // timer (200 ms) end the session long before the trickle does.
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.recv_type("Introduction");
        p.introduce(200);
        p.beat();
        p.trickle(60_000, Duration::from_millis(5), Duration::from_secs(4));
    });
    let mut cfg = config(&server.url);
    cfg.engine.heartbeat_timeout_interval = 200;
    let started = Instant::now();
    let c = Client::connect(cfg).unwrap();
    let ev = all_events(&c);
    let took = started.elapsed();
    assert_eq!(stops(&ev), vec![(StopReason::HeartbeatTimeout, None)]);
    assert!(took < Duration::from_millis(1800), "{took:?}");
    drop(c);
    drop(server);
}

#[test]
fn g_26_blocking_subscription_records_arrive_as_events() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        play_subscription(p);
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).unwrap();
    c.subscribe(&s1()).unwrap();
    let got: Vec<Event> = c
        .events(WAIT)
        .take_while(|e| {
            !matches!(
                e,
                Event::Status {
                    status: Status::Streaming,
                    ..
                }
            )
        })
        .collect();
    let id = RecordId {
        key_id: 7,
        topic_id: 18,
    };
    assert!(matches!(
        &got[1],
        Event::Status {
            status: Status::ProcessingSnapshot,
            ..
        }
    ));
    assert!(matches!(&got[2], Event::Record { record_id, value: Some(_) } if *record_id == id));
    assert_eq!(got.len(), 3);
    assert_eq!(c.record(id).unwrap().value.unwrap().to_string(), "101.25");
    c.logoff();
    assert!(c.is_closed());
    server.report();
}

#[test]
fn g_48_blocking_echo_barrier_resolves_when_its_answer_arrives() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("JSONRecordUpdate");
        let e = p.recv_type("EchoRequest");
        std::thread::sleep(Duration::from_millis(200));
        p.send("EchoResponse", json!({"msg_ref": e["msg_ref"]}));
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).unwrap();
    c.publish_by_name("k", "C", "t", &json!(3)).unwrap();
    let t0 = Instant::now();
    c.echo_barrier().unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(200));
    c.logoff();
    let r = server.report();
    assert_eq!(
        r.seen
            .iter()
            .map(|v| v["message_type"].as_str().unwrap())
            .filter(|t| *t != "Heartbeat")
            .collect::<Vec<_>>(),
        [
            "Introduction",
            "KeyUpdate",
            "TopicIntroduction",
            "JSONRecordUpdate",
            "EchoRequest",
            "Logoff"
        ]
    );
}

#[test]
fn g_49_blocking_compare_exchange_answer_arrives_as_an_event() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        let cx = p.recv_type("JSONCompareExchange");
        p.send(
            "JSONCompareExchangeResult",
            json!({"msg_ref": cx["msg_ref"], "success": true}),
        );
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let id = c.publish_by_name("k", "C", "t", &json!(5)).unwrap();
    let msg_ref = c.compare_exchange(id, &json!(5), &json!(6)).unwrap();
    let r = c
        .events(WAIT)
        .find_map(|e| match e {
            Event::Compare(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!((r.msg_ref, r.success), (msg_ref, true));
    c.logoff();
    server.report();
}

#[test]
fn g_61_blocking_server_logoff_is_one_stop_event_with_its_reason() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send_text(r#"{"message_type": "Logoff"}"#);
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    assert_eq!(stops(&ev), vec![(StopReason::ServerLogoff, None)]);
    assert!(c.server_logoff());
    assert_eq!(c.next_event(WAIT), Ok(None));
    assert_eq!(
        c.echo(),
        Err(Error::Stopped(Some(StopReason::ServerLogoff)))
    );
    server.report();
}

#[test]
fn g_63_blocking_messages_after_the_logoff_are_counted_not_lost() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Logoff");
        p.send("Error", json!({"message": "late", "recoverable": false}));
        p.beat();
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    // The server's Introduction is read while the session runs; what comes after the
    // Logoff does not find one.
    assert!(matches!(
        c.next_event(WAIT),
        Ok(Some(Event::Introduced { .. }))
    ));
    c.logoff();
    assert!(c.is_closed());
    let ev = all_events(&c);
    assert_eq!(stops(&ev), vec![(StopReason::Stop, None)]);
    assert!(!ev.iter().any(|e| matches!(e, Event::Error(_))), "{ev:?}");
    assert_eq!(c.stats().late_messages, 2);
    server.report();
}

fn closed_with(code: Option<u16>) -> Vec<Event> {
    let server = serve(Answer::Accept, NO_LOOK, move |p| {
        p.handshake();
        p.close(code);
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    server.report();
    ev
}

#[test]
fn g_59_blocking_close_codes_judged() {
    for code in [Some(1000), Some(1001), None] {
        assert_eq!(
            stops(&closed_with(code)),
            vec![(StopReason::Disconnect, None)],
            "{code:?}"
        );
    }
    assert_eq!(
        stops(&closed_with(Some(1011))),
        vec![(StopReason::Error, Some(Violation::CloseCode(1011)))]
    );
}

#[test]
fn g_59_blocking_a_close_with_1000_1001_or_no_code_is_answered() {
    for code in [Some(1000), Some(1001), None] {
        let server = serve(Answer::Accept, NO_LOOK, move |p| {
            p.handshake();
            assert!(p.close_answered(code), "{code:?}: the close is answered");
        });
        let c = Client::connect(config(&server.url)).unwrap();
        let _ = all_events(&c);
        server.report();
    }
}

#[test]
fn g_59_blocking_one_byte_close_body_is_malformed() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.raw(&[0x88, 0x01, 0x03]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(Violation::MalformedClose))]
    );
    server.report();
}

#[test]
fn g_60_blocking_error_before_the_close_is_reported_as_that_error() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send(
            "Error",
            json!({"message": "Heartbeat timeout", "recoverable": false}),
        );
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    let n = ev.len();
    assert!(matches!(&ev[n - 2], Event::Error(e) if e.message == "Heartbeat timeout"));
    assert_eq!(stops(&ev), vec![(StopReason::Error, None)]);
    server.report();
}

#[test]
fn g_11_blocking_401_at_the_upgrade_is_unauthorized() {
    let server = serve(Answer::Unauthorized, NO_LOOK, |_| {});
    let mut cfg = config(&server.url);
    cfg.token = Some("bad-token".into());
    let e = Client::connect(cfg).unwrap_err();
    assert_eq!(e.reason, StopReason::Unauthorized);
    server.report();
}

#[test]
fn g_62_blocking_refused_port_is_connect_failed_and_nothing_reconnects() {
    let e = Client::connect(config(&refused_port_url())).unwrap_err();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    let server = serve(Answer::Accept, Duration::from_millis(600), |p| {
        p.handshake();
        p.close(None);
    });
    let c = Client::connect(config(&server.url)).unwrap();
    assert_eq!(stops(&all_events(&c)).len(), 1);
    assert_eq!(server.report().later_connections, 0);
}

#[test]
fn stats_of_a_blocking_session_are_read_through_the_driver() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.beat();
        let e = p.recv_type("EchoRequest");
        p.send("EchoResponse", json!({"msg_ref": e["msg_ref"]}));
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).unwrap();
    c.echo_barrier().unwrap();
    c.logoff();
    let s = c.stats();
    assert_eq!((s.sessions_started, s.sessions_stopped), (1, 1));
    assert_eq!(s.messages_in, 3);
    assert_eq!(s.heartbeats_received, 1);
    assert!(s.messages_out >= 3 && s.bytes_out > 0);
    server.report();
}

#[test]
fn g_62_blocking_upgrade_that_never_answers_is_connect_failed_by_the_deadline() {
    let (_listener, url) = common::silent_listener();
    let mut cfg = config(&url);
    cfg.connect_timeout = Duration::from_millis(300);
    let t0 = Instant::now();
    let e = Client::connect(cfg).unwrap_err();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

#[test]
fn g_62_blocking_an_upgrade_answer_trickled_line_by_line_is_connect_failed_by_the_deadline() {
    // A header line every 100 ms for 5 s: every read of the upgrade's answer brings bytes, so
    // only a deadline on the whole upgrade ends it by the connect deadline of 500 ms.
    let (server, url) =
        common::trickling_upgrade(Duration::from_millis(100), Duration::from_secs(5));
    let mut cfg = config(&url);
    cfg.connect_timeout = Duration::from_millis(500);
    let t0 = Instant::now();
    let e = Client::connect(cfg).unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    assert!(took < Duration::from_millis(2000), "{took:?}");
    server.join().unwrap();
}

#[test]
fn blocking_write_past_its_deadline_ends_the_session() {
    // The reader stalls for 8 s and a call may wait 6 s: only the write deadline of 300 ms can
    // end the session within 5 s (a loaded machine takes seconds to fill the socket's buffers).
    let server = common::stalled_reader(Duration::from_secs(8));
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_millis(300);
    cfg.call_timeout = Duration::from_secs(6);
    let c = Client::connect(cfg).unwrap();
    let big = json!("x".repeat(256 * 1024));
    let t0 = Instant::now();
    let outcome = (0..400)
        .map(|_| c.publish_by_name("k", "C", "t", &big))
        .find(Result::is_err)
        .unwrap();
    assert_eq!(outcome, Err(Error::Stopped(Some(StopReason::Disconnect))));
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    server.report();
}

#[test]
fn blocking_a_peer_reading_a_trickle_cannot_stretch_the_write_deadline() {
    // The peer takes 32 KiB every 50 ms for 30 s: each socket write moves a little before its
    // own timeout, so only a deadline on the whole write ends the session by its 500 ms. One
    // message of 32 MiB is far more than the socket buffers hold (a few MiB) and would take
    // the peer's whole 30 s at that pace; the bound of 10 s leaves room for a loaded machine
    // to encode the message before its write starts.
    let server = common::trickle_reader(
        32 * 1024,
        Duration::from_millis(50),
        Duration::from_secs(30),
    );
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_millis(500);
    cfg.call_timeout = Duration::from_secs(60);
    cfg.engine.limits.max_transmit_bytes = 64 << 20;
    let c = Client::connect(cfg).unwrap();
    let big = json!("x".repeat(32 << 20));
    let t0 = Instant::now();
    let outcome = c.publish_by_name("k", "C", "t", &big);
    let took = t0.elapsed();
    assert_eq!(outcome, Err(Error::Stopped(Some(StopReason::Disconnect))));
    assert!(took < Duration::from_secs(10), "{took:?}");
    drop(c);
    drop(server);
}

#[test]
fn blocking_writes_that_wait_for_the_socket_all_arrive_in_order() {
    let server = common::slow_reader(Duration::from_millis(600));
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_secs(4);
    let c = Client::connect(cfg).unwrap();
    for n in 0..40 {
        c.publish_by_name("k", "C", "t", &common::big(n)).unwrap();
    }
    c.echo_barrier().unwrap();
    c.logoff();
    let got = common::published(&server.report());
    assert_eq!(got, (0..40).collect::<Vec<_>>());
}

#[test]
fn g_15_blocking_absurd_server_interval_stops_the_session() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.recv_type("Introduction");
        p.introduce(u64::MAX);
        p.beat();
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    assert_eq!(
        stops(&ev),
        vec![(
            StopReason::Error,
            Some(Violation::HeartbeatInterval(u64::MAX))
        )]
    );
    assert!(c.is_closed());
    server.report();
}

#[test]
fn g_25_blocking_a_text_message_that_is_not_utf8_is_a_framing_violation() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.raw(&[0x81, 0x02, 0xff, 0xfe]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    let s = stops(&ev);
    assert_eq!(s.len(), 1, "{ev:?}");
    assert_eq!(s[0].0, StopReason::Error);
    assert!(matches!(s[0].1, Some(Violation::Framing(_))), "{s:?}");
    server.report();
}

#[test]
fn g_25_blocking_a_reserved_opcode_is_a_framing_violation() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.raw(&[0x83, 0x00]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    let s = stops(&ev);
    assert_eq!(s.len(), 1, "{ev:?}");
    assert_eq!(s[0].0, StopReason::Error);
    assert!(matches!(s[0].1, Some(Violation::Framing(_))), "{s:?}");
    server.report();
}

#[test]
fn g_12_blocking_heartbeats_carry_epoch_milliseconds() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Heartbeat");
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let _ = all_events(&c);
    let r = server.report();
    let beat = r
        .seen
        .iter()
        .find(|v| v["message_type"] == "Heartbeat")
        .expect("a heartbeat");
    let sent = beat["value"]["u_milliseconds"].as_u64().unwrap();
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(sent <= wall && wall - sent < 60_000, "{sent} vs {wall}");
}

#[test]
fn g_4_blocking_the_first_byte_on_the_socket_is_an_open_brace() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let _ = all_events(&c);
    let first = server.report().first_text.unwrap();
    assert_eq!(first.as_bytes()[0], b'{');
}

#[test]
fn g_5_blocking_a_binary_message_from_the_server_is_refused() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send_binary(&[1, 2, 3]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(Violation::Binary))]
    );
    server.report();
}

#[test]
fn g_6_blocking_the_introduction_is_the_first_message_on_the_socket() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.close(Some(1000));
    });
    let mut cfg = config(&server.url);
    cfg.uuid = Some((11, 22));
    let c = Client::connect(cfg).unwrap();
    let _ = all_events(&c);
    let r = server.report();
    assert!(r.first_text.unwrap().starts_with('{'));
    let intro = &r.seen[0];
    assert_eq!(intro["message_type"], "Introduction");
    assert_eq!(intro["value"]["heartbeat_timeout_interval"], IV);
    assert_eq!(intro["value"]["user"], "jonh");
    assert_eq!(intro["value"]["uuid"], json!({"low": 11, "high": 22}));
}

#[test]
fn g_9_blocking_each_connection_introduces_a_fresh_uuid() {
    let mut uuids = Vec::new();
    for _ in 0..2 {
        let server = serve(Answer::Accept, NO_LOOK, |p| {
            p.handshake();
            p.close(Some(1000));
        });
        let c = Client::connect(config(&server.url)).unwrap();
        let _ = all_events(&c);
        let uuid = server.report().seen[0]["value"]["uuid"].clone();
        assert!(uuid["low"].is_u64() && uuid["high"].is_u64(), "{uuid}");
        uuids.push(uuid);
    }
    assert_ne!(uuids[0], uuids[1]);
}

#[test]
fn g_48_blocking_echo_barrier_fails_when_the_session_ends_first() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("EchoRequest");
        p.close(Some(1001));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    assert_eq!(
        c.echo_barrier(),
        Err(Error::Stopped(Some(StopReason::Disconnect)))
    );
    server.report();
}

#[test]
fn blocking_unanswered_echo_barrier_times_out_at_the_call_deadline() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("EchoRequest");
        p.recv_type("Logoff");
    });
    let mut cfg = config(&server.url);
    cfg.call_timeout = Duration::from_millis(300);
    let c = Client::connect(cfg).unwrap();
    let t0 = Instant::now();
    assert_eq!(c.echo_barrier(), Err(Error::TimedOut));
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    c.logoff();
    server.report();
}

#[test]
fn g_60_blocking_error_before_a_dropped_connection_is_reported_as_that_error() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send(
            "Error",
            json!({"message": "Unsupported version from jserver: 1", "recoverable": false}),
        );
        // The script ends: the socket closes with no close frame.
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    server.report();
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::Error(e) if e.message.starts_with("Unsupported"))));
    assert_eq!(stops(&ev), vec![(StopReason::Error, None)]);
}

#[test]
fn g_25_a_topic_id_introduced_again_under_another_name_stops_the_session_blocking() {
    let server = serve(Answer::Accept, NO_LOOK, rename_topic);
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(renamed_topic()))],
        "{ev:?}"
    );
    assert_eq!(c.stats().violations, 1);
    server.report();
}

#[test]
fn g_25_a_teardown_for_an_unknown_key_id_stops_the_session_blocking() {
    let server = serve(Answer::Accept, NO_LOOK, teardown_unknown_key);
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    assert!(
        !ev.iter().any(|e| matches!(e, Event::ClassDeleted { .. })),
        "{ev:?}"
    );
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(unknown_key()))],
        "{ev:?}"
    );
    assert_eq!(c.stats().violations, 1);
    server.report();
}

#[test]
fn g_17_blocking_the_heartbeat_timeout_error_reaches_a_client_whose_write_stalled() {
    // As the tokio test: the Error the server sent before closing on a stalled writer is
    // reported, not lost behind the failed write.
    let server = common::times_out_a_stalled_writer(Duration::from_secs(3));
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_secs(20);
    cfg.call_timeout = Duration::from_secs(20);
    let c = Client::connect(cfg).unwrap();
    for n in 0..400 {
        if c.publish_by_name("k", "C", "t", &common::big(n)).is_err() {
            break;
        }
    }
    let ev = all_events(&c);
    assert!(
        ev.iter().any(
            |e| matches!(e, Event::Error(e) if e.message == "Heartbeat timeout" && !e.recoverable)
        ),
        "{:?}",
        stops(&ev)
    );
    assert_eq!(stops(&ev), vec![(StopReason::Error, None)]);
    server.report();
}

#[test]
fn g_57_blocking_the_whole_error_and_its_write_errors_reach_the_application() {
    let fw = json!([{"reason": {"record_write": "UnknownTopic"}, "malformed": true}]);
    let sent = fw.clone();
    let server = serve(Answer::Accept, NO_LOOK, move |p| {
        p.handshake();
        p.send(
            "Error",
            json!({"message": "UnknownTopic", "recoverable": true, "failed_writes": sent, "msg_ref": 4}),
        );
        p.send_text(r#"{"message_type": "Logoff"}"#);
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let ev = all_events(&c);
    let errors: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Error(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{ev:?}");
    let e = errors[0];
    assert_eq!(
        (e.message.as_str(), e.recoverable, e.msg_ref),
        ("UnknownTopic", true, 4)
    );
    assert_eq!(
        e.write_errors(),
        Some((fw.as_array().unwrap().as_slice(), "UnknownTopic", 4))
    );
    // Recoverable: the session went on to the server's Logoff.
    assert_eq!(stops(&ev), vec![(StopReason::ServerLogoff, None)]);
    server.report();
}

#[test]
fn g_35_blocking_a_density_the_reader_does_not_read_is_refused_before_sending() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).unwrap();
    for d in ["TopicMajor", "RecordMajor"] {
        let s = gar_driver::Subscribe {
            density: Some(d.into()),
            ..s1()
        };
        assert_eq!(
            c.subscribe(&s),
            Err(Error::Call(gar_driver::CallError::UnsupportedDensity(
                d.into()
            )))
        );
    }
    c.logoff();
    let r = server.report();
    assert!(
        !r.seen.iter().any(|m| m["message_type"] == "Subscribe"),
        "{:?}",
        r.seen
    );
}

#[test]
fn g_42_blocking_a_snapshot_subscription_is_not_unsubscribed_before_finished() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Subscribe");
        p.send(
            "SubscriptionStatus",
            json!({"name": "S1", "status": "ProcessingSnapshot"}),
        );
        p.recv_type("EchoRequest");
        p.send("EchoResponse", json!({"msg_ref": 1}));
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).unwrap();
    let snapshot = gar_driver::Subscribe {
        streaming: false,
        ..s1()
    };
    c.subscribe(&snapshot).unwrap();
    // Before and after ProcessingSnapshot (the echo orders the status before the second try).
    let refused = Err(Error::Call(gar_driver::CallError::NotFinished("S1".into())));
    assert_eq!(c.unsubscribe("S1"), refused);
    c.echo_barrier().unwrap();
    assert_eq!(c.unsubscribe("S1"), refused);
    c.logoff();
    let r = server.report();
    assert!(
        !r.seen.iter().any(|m| m["message_type"] == "Unsubscribe"),
        "{:?}",
        r.seen
    );
}

#[test]
fn g_40_blocking_needs_continue_is_answered_over_the_socket() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Subscribe");
        p.send(
            "SubscriptionStatus",
            json!({"name": "S1", "status": "ProcessingSnapshot"}),
        );
        p.send(
            "SubscriptionStatus",
            json!({"name": "S1", "status": "NeedsContinue"}),
        );
        // The snapshot goes on only once the client asked for it.
        assert_eq!(p.recv_type("SubscribeContinue"), json!({"name": "S1"}));
        p.send(
            "SubscriptionStatus",
            json!({"name": "S1", "status": "Streaming"}),
        );
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).unwrap();
    c.subscribe(&s1()).unwrap();
    let streaming = c.events(Duration::from_secs(10)).any(|e| {
        matches!(
            e,
            Event::Status {
                status: Status::Streaming,
                ..
            }
        )
    });
    assert!(streaming, "no Streaming status");
    c.logoff();
    server.report();
}

#[test]
fn g_45_blocking_upstream_lost_without_a_handler_stops_the_session_over_the_socket() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        play_subscription(p);
        p.send(
            "SubscriptionStatus",
            json!({"name": "S1", "status": "UpstreamLost"}),
        );
        while p.recv().is_some() {}
    });
    let c = Client::connect(config(&server.url)).unwrap();
    c.subscribe(&s1()).unwrap();
    let ev = all_events(&c);
    assert!(ev.contains(&Event::Status {
        name: "S1".into(),
        status: Status::UpstreamLost
    }));
    assert_eq!(stops(&ev), vec![(StopReason::UpstreamLost, None)]);
    assert_eq!(c.stop_reason().map(StopReason::exit_code), Some(1));
    assert!(c.is_closed());
    server.report();
}
