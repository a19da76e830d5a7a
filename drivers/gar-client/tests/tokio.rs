//! The tokio client over real sockets against a scripted GAR server.

mod common;

use std::time::{Duration, Instant};

use common::{
    config, play_subscription, refused_port_url, rename_topic, renamed_topic, s1, serve,
    teardown_unknown_key, unknown_key, Answer, IV,
};
use gar_driver::tokio::Client;
use gar_driver::{Error, Event, RecordId, Status, StopReason, Violation};
use serde_json::json;

const NO_LOOK: Duration = Duration::ZERO;

/// Every event until the stream ends (bounded).
async fn all_events(c: &Client) -> Vec<Event> {
    use futures_util::StreamExt;
    tokio::time::timeout(Duration::from_secs(10), c.events().collect())
        .await
        .expect("the session ends")
}

fn stops(ev: &[Event]) -> Vec<(StopReason, Option<Violation>)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Stopped { reason, violation } => Some((*reason, violation.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn g_1_the_upgrade_offers_gar_protocol_at_the_path_with_the_token() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.close(Some(1000));
    });
    let mut cfg = config(&format!("{}?x=1", server.url));
    cfg.token = Some("s3cr+t/1".into());
    let c = Client::connect(cfg).await.unwrap();
    let _ = all_events(&c).await;
    let r = server.report();
    assert_eq!(r.upgrade.path_and_query, "/gar?x=1&token=s3cr%2Bt%2F1");
    assert_eq!(r.upgrade.protocols.as_deref(), Some("gar-protocol"));
}

#[tokio::test]
async fn g_6_the_introduction_is_the_first_message_on_the_socket() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.close(Some(1000));
    });
    let mut cfg = config(&server.url);
    cfg.uuid = Some((11, 22));
    let c = Client::connect(cfg).await.unwrap();
    let _ = all_events(&c).await;
    let r = server.report();
    assert!(r.first_text.unwrap().starts_with('{'));
    let intro = &r.seen[0];
    assert_eq!(intro["message_type"], "Introduction");
    assert_eq!(intro["value"]["heartbeat_timeout_interval"], IV);
    assert_eq!(intro["value"]["user"], "jonh");
    assert_eq!(intro["value"]["uuid"], json!({"low": 11, "high": 22}));
}

#[tokio::test]
async fn g_12_heartbeats_go_out_on_the_clock() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.listen_for(Duration::from_millis(IV * 2 + IV / 4));
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let _ = all_events(&c).await;
    let r = server.report();
    let beats = r
        .seen
        .iter()
        .filter(|v| v["message_type"] == "Heartbeat")
        .count();
    // One beat every IV/2 over 2.25 IV: four, give or take the scheduler.
    // A loaded machine may stall the clock past a beat (the engine then snaps forward), so the
    // floor is two; the ceiling catches a driver that beats more often than its clock says.
    assert!((2..=5).contains(&beats), "{beats} heartbeats");
    assert!(c.stats().heartbeats_sent >= 2);
}

#[tokio::test]
async fn g_15_a_server_trickling_one_message_stops_with_heartbeat_timeout() {
    // As the blocking twin: a message trickled a byte every 5 ms for 4 s cannot hold the read
    // past the liveness timer (200 ms).
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.recv_type("Introduction");
        p.introduce(200);
        p.beat();
        p.trickle(60_000, Duration::from_millis(5), Duration::from_secs(4));
    });
    let mut cfg = config(&server.url);
    cfg.engine.heartbeat_timeout_interval = 200;
    let started = Instant::now();
    let c = Client::connect(cfg).await.unwrap();
    let ev = all_events(&c).await;
    let took = started.elapsed();
    assert_eq!(stops(&ev), vec![(StopReason::HeartbeatTimeout, None)]);
    assert!(took < Duration::from_millis(1800), "{took:?}");
    drop(c);
    drop(server);
}

#[tokio::test]
async fn g_15_silence_stops_with_heartbeat_timeout() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.recv_type("Introduction");
        p.introduce(200);
        p.beat();
        // Silence from here on: no heartbeat reaches the client.
        p.listen_for(Duration::from_secs(4));
    });
    let mut cfg = config(&server.url);
    cfg.engine.heartbeat_timeout_interval = 200;
    let started = Instant::now();
    let c = Client::connect(cfg).await.unwrap();
    let ev = all_events(&c).await;
    let took = started.elapsed();
    assert_eq!(stops(&ev), vec![(StopReason::HeartbeatTimeout, None)]);
    assert_eq!(c.stop_reason().map(StopReason::exit_code), Some(1));
    // The liveness interval, not the first-beat grace of ten intervals.
    // The first-beat grace would be 2 s; a margin for a loaded machine below it.
    assert!(took < Duration::from_millis(1800), "{took:?}");
    assert!(took >= Duration::from_millis(200), "{took:?}");
    drop(server);
}

#[tokio::test]
async fn g_26_a_subscriptions_records_arrive_as_events() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        play_subscription(p);
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    c.subscribe(&s1()).await.unwrap();
    let mut got = Vec::new();
    while let Some(e) = c.next_event().await {
        let streaming = matches!(
            &e,
            Event::Status {
                status: Status::Streaming,
                ..
            }
        );
        got.push(e);
        if streaming {
            break;
        }
    }
    let id = RecordId {
        key_id: 7,
        topic_id: 18,
    };
    assert!(matches!(&got[0], Event::Introduced { user } if user == "jserver"));
    assert!(
        matches!(&got[1], Event::Status { name, status: Status::ProcessingSnapshot } if name == "S1")
    );
    assert!(
        matches!(&got[2], Event::Record { record_id, value: Some(v) } if *record_id == id && v.as_f64() == Some(101.25))
    );
    assert_eq!(got.len(), 4);
    let rec = c.record(id).unwrap();
    assert_eq!(rec.tick_time, 5);
    assert_eq!(c.server_topic(18).as_deref(), Some("top_bid_price"));
    assert_eq!(c.server_key(7).as_deref(), Some("AAPL"));
    c.logoff().await;
    assert!(c.is_closed());
    assert_eq!(c.stop_reason(), Some(StopReason::Stop));
    server.report();
}

#[tokio::test]
async fn g_48_the_echo_barrier_resolves_when_its_answer_arrives() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        let w = p.recv_type("JSONRecordUpdate");
        assert_eq!(w["value"], 3);
        let e = p.recv_type("EchoRequest");
        // An answer to an older echo does not release the barrier.
        p.send("EchoResponse", json!({"msg_ref": 0}));
        std::thread::sleep(Duration::from_millis(200));
        p.send("EchoResponse", json!({"msg_ref": e["msg_ref"]}));
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    c.publish_by_name("k", "C", "t", &json!(3)).await.unwrap();
    let t0 = Instant::now();
    c.echo_barrier().await.unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(200),
        "{:?}",
        t0.elapsed()
    );
    let ev = all_events_until_echo(&c).await;
    assert!(ev.iter().any(|e| matches!(e, Event::Echo { msg_ref: 1 })));
    c.logoff().await;
    server.report();
}

async fn all_events_until_echo(c: &Client) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(Some(e)) = c.next_event_within(Duration::from_secs(2)).await {
        let echo = matches!(e, Event::Echo { msg_ref } if msg_ref != 0);
        out.push(e);
        if echo {
            break;
        }
    }
    out
}

#[tokio::test]
async fn g_48_the_echo_barrier_fails_when_the_session_ends_first() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("EchoRequest");
        p.close(Some(1001));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    assert_eq!(
        c.echo_barrier().await,
        Err(Error::Stopped(Some(StopReason::Disconnect)))
    );
    server.report();
}

#[tokio::test]
async fn g_49_a_compare_exchange_answer_arrives_as_an_event() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        let cx = p.recv_type("JSONCompareExchange");
        assert_eq!(cx["test"], json!(null));
        assert_eq!(cx["value"], json!(7));
        p.send(
            "JSONCompareExchangeResult",
            json!({"msg_ref": cx["msg_ref"], "success": false, "value": 5, "reason": "CompareMismatch"}),
        );
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let id = c.publish_by_name("k", "C", "t", &json!(5)).await.unwrap();
    let msg_ref = c
        .compare_exchange(id, &json!(null), &json!(7))
        .await
        .unwrap();
    let mut result = None;
    while let Some(e) = c.next_event().await {
        if let Event::Compare(r) = e {
            result = Some(r);
            break;
        }
    }
    let r = result.unwrap();
    assert_eq!(r.msg_ref, msg_ref);
    assert!(!r.success);
    assert_eq!(r.value, Some(json!(5)));
    assert_eq!(r.reason.as_deref(), Some("CompareMismatch"));
    c.logoff().await;
    server.report();
}

#[tokio::test]
async fn g_61_a_server_logoff_is_one_stop_event_with_its_reason() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send_text(r#"{"message_type": "Logoff"}"#);
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    assert_eq!(stops(&ev), vec![(StopReason::ServerLogoff, None)]);
    assert!(matches!(ev.last(), Some(Event::Stopped { .. })));
    assert!(c.server_logoff());
    assert_eq!(c.next_event().await, None);
    assert!(matches!(
        c.echo().await,
        Err(Error::Stopped(Some(StopReason::ServerLogoff)))
    ));
    server.report();
}

#[tokio::test]
async fn g_63_messages_after_the_logoff_are_counted_not_lost() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Logoff");
        p.send("Error", json!({"message": "late", "recoverable": false}));
        p.beat();
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    // The server's Introduction is read while the session runs; what comes after the
    // Logoff does not find one.
    assert!(matches!(
        c.next_event().await,
        Some(Event::Introduced { .. })
    ));
    c.logoff().await;
    assert!(c.is_closed());
    let ev = all_events(&c).await;
    assert_eq!(stops(&ev), vec![(StopReason::Stop, None)]);
    assert!(!ev.iter().any(|e| matches!(e, Event::Error(_))), "{ev:?}");
    assert_eq!(c.stats().late_messages, 2);
    server.report();
}

async fn closed_with(code: Option<u16>) -> (Vec<Event>, Option<StopReason>) {
    let server = serve(Answer::Accept, NO_LOOK, move |p| {
        p.handshake();
        p.close(code);
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    server.report();
    (ev, c.stop_reason())
}

#[tokio::test]
async fn g_59_a_close_with_1000_1001_or_no_code_is_answered() {
    for code in [Some(1000), Some(1001), None] {
        let server = serve(Answer::Accept, NO_LOOK, move |p| {
            p.handshake();
            assert!(p.close_answered(code), "{code:?}: the close is answered");
        });
        let c = Client::connect(config(&server.url)).await.unwrap();
        let _ = all_events(&c).await;
        server.report();
    }
}

#[tokio::test]
async fn g_59_close_1000_1001_and_no_code_end_as_a_disconnect() {
    for code in [Some(1000), Some(1001), None] {
        let (ev, reason) = closed_with(code).await;
        assert_eq!(stops(&ev), vec![(StopReason::Disconnect, None)], "{code:?}");
        assert_eq!(reason.map(StopReason::exit_code), Some(0));
    }
}

#[tokio::test]
async fn g_59_another_close_code_ends_as_an_error() {
    let (ev, reason) = closed_with(Some(4001)).await;
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(Violation::CloseCode(4001)))]
    );
    assert_eq!(reason.map(StopReason::exit_code), Some(1));
}

#[tokio::test]
async fn g_59_a_one_byte_close_body_from_the_server_is_malformed() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.raw(&[0x88, 0x01, 0x03]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(Violation::MalformedClose))]
    );
    server.report();
}

#[tokio::test]
async fn g_60_an_error_before_the_close_is_reported_as_that_error() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send(
            "Error",
            json!({"message": "Heartbeat timeout", "recoverable": false}),
        );
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    let n = ev.len();
    assert!(
        matches!(&ev[n - 2], Event::Error(e) if e.message == "Heartbeat timeout" && !e.recoverable)
    );
    assert_eq!(stops(&ev), vec![(StopReason::Error, None)]);
    server.report();
}

#[tokio::test]
async fn g_60_an_error_before_a_dropped_connection_is_reported_as_that_error() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send(
            "Error",
            json!({"message": "Unsupported version from jserver: 1", "recoverable": false}),
        );
        // The script ends: the socket closes with no close frame.
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    server.report();
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::Error(e) if e.message.starts_with("Unsupported"))));
    assert_eq!(stops(&ev), vec![(StopReason::Error, None)]);
}

#[tokio::test]
async fn g_11_a_401_at_the_upgrade_is_unauthorized() {
    let server = serve(Answer::Unauthorized, NO_LOOK, |_| {});
    let mut cfg = config(&server.url);
    cfg.token = Some("wrong-token".into());
    let e = Client::connect(cfg).await.unwrap_err();
    assert_eq!(e.reason, StopReason::Unauthorized);
    assert!(!e.to_string().contains("wrong-token"));
    assert!(server
        .report()
        .upgrade
        .path_and_query
        .ends_with("token=wrong-token"));
}

#[tokio::test]
async fn g_62_a_refused_port_is_connect_failed() {
    let mut cfg = config(&refused_port_url());
    cfg.token = Some("tok-refused".into());
    let e = Client::connect(cfg).await.unwrap_err();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    assert!(!e.detail.contains("tok-refused"));
}

#[tokio::test]
async fn g_62_the_client_does_not_reconnect_after_a_close() {
    let server = serve(Answer::Accept, Duration::from_millis(600), |p| {
        p.handshake();
        p.close(Some(1001));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    assert_eq!(stops(&ev).len(), 1);
    assert_eq!(server.report().later_connections, 0);
}

#[tokio::test]
async fn g_5_a_binary_message_from_the_server_is_refused() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.send_binary(&[1, 2, 3]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(Violation::Binary))]
    );
    server.report();
}

#[tokio::test]
async fn stats_of_a_session_are_read_through_the_driver() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.beat();
        let e = p.recv_type("EchoRequest");
        p.send("EchoResponse", json!({"msg_ref": e["msg_ref"]}));
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    c.echo_barrier().await.unwrap();
    c.logoff().await;
    let s = c.stats();
    assert_eq!((s.sessions_started, s.sessions_stopped), (1, 1));
    assert_eq!(s.messages_in, 3);
    assert!(s.bytes_in > 0 && s.bytes_out > 0);
    assert_eq!(s.heartbeats_received, 1);
    // Introduction, echo, logoff at least.
    assert!(s.messages_out >= 3);
    assert_eq!(s.transmit_held, 0);
    server.report();
}

#[tokio::test]
async fn g_62_an_upgrade_that_never_answers_is_connect_failed_by_the_deadline() {
    let (_listener, url) = common::silent_listener();
    let mut cfg = config(&url);
    cfg.connect_timeout = Duration::from_millis(300);
    let t0 = Instant::now();
    let e = Client::connect(cfg).await.unwrap_err();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

#[tokio::test]
async fn a_peer_reading_a_trickle_cannot_stretch_the_write_deadline() {
    // As the blocking twin: 32 KiB taken every 50 ms cannot stretch a 500 ms write deadline
    // over a message of 32 MiB.
    let server = common::trickle_reader(
        32 * 1024,
        Duration::from_millis(50),
        Duration::from_secs(30),
    );
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_millis(500);
    cfg.call_timeout = Duration::from_secs(60);
    cfg.engine.limits.max_transmit_bytes = 64 << 20;
    let c = Client::connect(cfg).await.unwrap();
    let big = json!("x".repeat(32 << 20));
    let t0 = Instant::now();
    let outcome = c.publish_by_name("k", "C", "t", &big).await;
    let took = t0.elapsed();
    assert_eq!(outcome, Err(Error::Stopped(Some(StopReason::Disconnect))));
    assert!(took < Duration::from_secs(10), "{took:?}");
    drop(c);
    drop(server);
}

#[tokio::test]
async fn g_62_an_upgrade_answer_trickled_line_by_line_is_connect_failed_by_the_deadline() {
    // As the blocking twin: a header line every 100 ms cannot stretch a connect deadline of
    // 500 ms.
    let (server, url) =
        common::trickling_upgrade(Duration::from_millis(100), Duration::from_secs(5));
    let mut cfg = config(&url);
    cfg.connect_timeout = Duration::from_millis(500);
    let t0 = Instant::now();
    let e = Client::connect(cfg).await.unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    assert!(took < Duration::from_millis(2000), "{took:?}");
    tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_write_past_its_deadline_ends_the_session() {
    // The reader stalls for 8 s and a call may wait 6 s: only the write deadline of 300 ms can
    // end the session within 5 s (a loaded machine takes seconds to fill the socket's buffers).
    let server = common::stalled_reader(Duration::from_secs(8));
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_millis(300);
    cfg.call_timeout = Duration::from_secs(6);
    let c = Client::connect(cfg).await.unwrap();
    let big = json!("x".repeat(256 * 1024));
    let t0 = Instant::now();
    let mut outcome = Ok(RecordId {
        key_id: 0,
        topic_id: 0,
    });
    for _ in 0..400 {
        outcome = c.publish_by_name("k", "C", "t", &big).await;
        if outcome.is_err() {
            break;
        }
    }
    assert_eq!(outcome, Err(Error::Stopped(Some(StopReason::Disconnect))));
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert!(c.is_closed());
    server.report();
}

#[tokio::test]
async fn an_unanswered_echo_barrier_times_out_at_the_call_deadline() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("EchoRequest");
        p.recv_type("Logoff");
    });
    let mut cfg = config(&server.url);
    cfg.call_timeout = Duration::from_millis(300);
    let c = Client::connect(cfg).await.unwrap();
    assert_eq!(c.echo_barrier().await, Err(Error::TimedOut));
    c.logoff().await;
    server.report();
}

#[tokio::test]
async fn g_9_each_connection_introduces_a_fresh_uuid() {
    let mut uuids = Vec::new();
    for _ in 0..2 {
        let server = serve(Answer::Accept, NO_LOOK, |p| {
            p.handshake();
            p.close(Some(1000));
        });
        let c = Client::connect(config(&server.url)).await.unwrap();
        let _ = all_events(&c).await;
        let uuid = server.report().seen[0]["value"]["uuid"].clone();
        assert!(uuid["low"].is_u64() && uuid["high"].is_u64(), "{uuid}");
        uuids.push(uuid);
    }
    assert_ne!(uuids[0], uuids[1]);
}

#[tokio::test]
async fn g_4_the_first_byte_on_the_socket_is_an_open_brace() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let _ = all_events(&c).await;
    let first = server.report().first_text.unwrap();
    assert_eq!(first.as_bytes()[0], b'{');
}

#[tokio::test]
async fn writes_that_wait_for_the_socket_all_arrive_in_order() {
    let server = common::slow_reader(Duration::from_millis(600));
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_secs(4);
    let c = Client::connect(cfg).await.unwrap();
    for n in 0..40 {
        c.publish_by_name("k", "C", "t", &common::big(n))
            .await
            .unwrap();
    }
    c.echo_barrier().await.unwrap();
    c.logoff().await;
    let got = common::published(&server.report());
    assert_eq!(got, (0..40).collect::<Vec<_>>());
}

#[test]
fn both_clients_can_be_shared_between_tasks_and_threads() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<Client>();
    shared::<gar_driver::blocking::Client>();
    shared::<gar_driver::Config>();
}

#[tokio::test]
async fn g_15_an_absurd_server_interval_stops_the_session() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.recv_type("Introduction");
        p.introduce(u64::MAX);
        p.beat();
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
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

#[tokio::test]
async fn g_25_a_text_message_that_is_not_utf8_is_a_framing_violation() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.raw(&[0x81, 0x02, 0xff, 0xfe]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    let s = stops(&ev);
    assert_eq!(s.len(), 1, "{ev:?}");
    assert_eq!(s[0].0, StopReason::Error);
    assert!(matches!(s[0].1, Some(Violation::Framing(_))), "{s:?}");
    server.report();
}

#[tokio::test]
async fn g_25_a_reserved_opcode_is_a_framing_violation() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.raw(&[0x83, 0x00]);
        p.drain(Duration::from_secs(2));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    let s = stops(&ev);
    assert_eq!(s.len(), 1, "{ev:?}");
    assert_eq!(s[0].0, StopReason::Error);
    assert!(matches!(s[0].1, Some(Violation::Framing(_))), "{s:?}");
    server.report();
}

#[tokio::test]
async fn g_12_heartbeats_carry_epoch_milliseconds() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Heartbeat");
        p.close(Some(1000));
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    let _ = all_events(&c).await;
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

#[tokio::test]
async fn g_25_a_topic_id_introduced_again_under_another_name_stops_the_session_tokio() {
    let server = serve(Answer::Accept, NO_LOOK, rename_topic);
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
    assert_eq!(
        stops(&ev),
        vec![(StopReason::Error, Some(renamed_topic()))],
        "{ev:?}"
    );
    assert_eq!(c.stats().violations, 1);
    server.report();
}

#[tokio::test]
async fn g_25_a_teardown_for_an_unknown_key_id_stops_the_session_tokio() {
    let server = serve(Answer::Accept, NO_LOOK, teardown_unknown_key);
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
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

#[tokio::test]
async fn g_17_the_heartbeat_timeout_error_reaches_a_client_whose_write_stalled() {
    // The server reads nothing for 3 s while the client publishes, so the client's write
    // stalls; then it sends `Error "Heartbeat timeout"` and closes with the client's bytes
    // unread, which fails that write. The Error came before the close: it must be reported.
    let server = common::times_out_a_stalled_writer(Duration::from_secs(3));
    let mut cfg = config(&server.url);
    cfg.write_timeout = Duration::from_secs(20);
    cfg.call_timeout = Duration::from_secs(20);
    let c = Client::connect(cfg).await.unwrap();
    for n in 0..400 {
        if c.publish_by_name("k", "C", "t", &common::big(n))
            .await
            .is_err()
        {
            break;
        }
    }
    let ev = all_events(&c).await;
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

#[tokio::test]
async fn g_57_the_whole_error_and_its_write_errors_reach_the_application() {
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
    let c = Client::connect(config(&server.url)).await.unwrap();
    let ev = all_events(&c).await;
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

#[tokio::test]
async fn g_35_a_density_the_reader_does_not_read_is_refused_before_sending() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        p.recv_type("Logoff");
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    for d in ["TopicMajor", "RecordMajor"] {
        let s = gar_driver::Subscribe {
            density: Some(d.into()),
            ..s1()
        };
        assert_eq!(
            c.subscribe(&s).await,
            Err(Error::Call(gar_driver::CallError::UnsupportedDensity(
                d.into()
            )))
        );
    }
    c.logoff().await;
    let r = server.report();
    assert!(
        !r.seen.iter().any(|m| m["message_type"] == "Subscribe"),
        "{:?}",
        r.seen
    );
}

#[tokio::test]
async fn g_42_a_snapshot_subscription_is_not_unsubscribed_before_finished_over_a_socket() {
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
    let c = Client::connect(config(&server.url)).await.unwrap();
    let snapshot = gar_driver::Subscribe {
        streaming: false,
        ..s1()
    };
    c.subscribe(&snapshot).await.unwrap();
    let refused = Err(Error::Call(gar_driver::CallError::NotFinished("S1".into())));
    assert_eq!(c.unsubscribe("S1").await, refused);
    c.echo_barrier().await.unwrap();
    assert_eq!(c.unsubscribe("S1").await, refused);
    c.logoff().await;
    let r = server.report();
    assert!(
        !r.seen.iter().any(|m| m["message_type"] == "Unsubscribe"),
        "{:?}",
        r.seen
    );
}

#[tokio::test]
async fn g_40_needs_continue_is_answered_over_the_socket() {
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
    let c = Client::connect(config(&server.url)).await.unwrap();
    c.subscribe(&s1()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match c.next_event_within(left).await {
            Ok(Some(Event::Status {
                status: Status::Streaming,
                ..
            })) => break,
            Ok(Some(_)) => {}
            other => panic!("no Streaming status: {other:?}"),
        }
    }
    c.logoff().await;
    server.report();
}

#[tokio::test]
async fn g_45_upstream_lost_without_a_handler_stops_the_session_over_the_socket() {
    let server = serve(Answer::Accept, NO_LOOK, |p| {
        p.handshake();
        play_subscription(p);
        p.send(
            "SubscriptionStatus",
            json!({"name": "S1", "status": "UpstreamLost"}),
        );
        while p.recv().is_some() {}
    });
    let c = Client::connect(config(&server.url)).await.unwrap();
    c.subscribe(&s1()).await.unwrap();
    let ev = all_events(&c).await;
    assert!(ev.contains(&Event::Status {
        name: "S1".into(),
        status: Status::UpstreamLost
    }));
    assert_eq!(stops(&ev), vec![(StopReason::UpstreamLost, None)]);
    assert_eq!(c.stop_reason().map(StopReason::exit_code), Some(1));
    assert!(c.is_closed());
    server.report();
}
