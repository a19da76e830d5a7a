//! The engine's reading of a close (G-59), its echo high-water mark (G-48) and its
//! statistics (issue 22).

use gar_client::{Client, Config, Event, Limits, StopReason, Violation, JSON_VERSION};
use serde_json::{json, Value};

const IV: u64 = 4000;

fn msg(mt: &str, v: Value) -> String {
    json!({"message_type": mt, "value": v}).to_string()
}

fn ready(limits: Limits) -> Client {
    let mut c = Client::new(Config {
        heartbeat_timeout_interval: IV,
        limits,
        ..Config::default()
    });
    c.start(0, (1, 2));
    c.handle_text(
        1,
        &msg(
            "Introduction",
            json!({"version": JSON_VERSION, "heartbeat_timeout_interval": IV, "user": "srv"}),
        ),
    );
    c
}

fn stop_of(c: &mut Client) -> Vec<(StopReason, Option<Violation>)> {
    std::iter::from_fn(|| c.poll_event())
        .filter_map(|e| match e {
            Event::Stopped { reason, violation } => Some((reason, violation)),
            _ => None,
        })
        .collect()
}

#[test]
fn g_59_an_orderly_close_code_is_a_disconnect() {
    for code in [None, Some(1000), Some(1001), Some(1005)] {
        let mut c = ready(Limits::default());
        c.handle_close(code);
        assert_eq!(
            stop_of(&mut c),
            vec![(StopReason::Disconnect, None)],
            "{code:?}"
        );
        assert_eq!(StopReason::Disconnect.exit_code(), 0);
    }
}

#[test]
fn g_59_any_other_close_code_is_an_error() {
    for code in [999, 1002, 1006, 1011, 4000] {
        let mut c = ready(Limits::default());
        c.handle_close(Some(code));
        assert_eq!(
            stop_of(&mut c),
            vec![(StopReason::Error, Some(Violation::CloseCode(code)))]
        );
        assert_eq!(c.stop_reason().map(StopReason::exit_code), Some(1));
    }
}

#[test]
fn g_59_a_one_byte_close_body_is_malformed() {
    let mut c = ready(Limits::default());
    c.handle_malformed_close();
    c.handle_close(Some(1000));
    assert_eq!(
        stop_of(&mut c),
        vec![(StopReason::Error, Some(Violation::MalformedClose))]
    );
}

#[test]
fn g_48_an_echo_is_answered_once_its_response_or_a_later_one_arrived() {
    let mut c = ready(Limits::default());
    let a = c.echo().unwrap();
    let b = c.echo().unwrap();
    assert!(!c.echo_answered(a) && !c.echo_answered(b));
    assert!(!c.echo_answered(0));
    c.handle_text(2, &msg("EchoResponse", json!({"msg_ref": a})));
    assert!(c.echo_answered(a) && !c.echo_answered(b));
    c.handle_text(3, &msg("EchoResponse", json!({"msg_ref": b})));
    assert!(c.echo_answered(b));
    // A new session answers nothing of the old one's.
    c.start(10, (3, 4));
    assert!(!c.echo_answered(a));
}

#[test]
fn g_63_messages_after_the_stop_are_not_applied_and_are_counted() {
    let mut c = ready(Limits::default());
    c.logoff();
    let in_before = c.stats().messages_in;
    // An Error, a record naming nothing known, a binary message: none may act on the stopped
    // session, and none vanishes uncounted.
    c.handle_text(
        2,
        &msg("Error", json!({"message": "late", "recoverable": false})),
    );
    c.handle_text(
        2,
        &msg(
            "JSONRecordUpdate",
            json!({"record_id": {"key_id": 9, "topic_id": 9}, "value": 1}),
        ),
    );
    c.handle_binary(2, &[1, 2, 3]);
    let ev: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
    assert_eq!(
        ev.last(),
        Some(&Event::Stopped {
            reason: StopReason::Stop,
            violation: None
        })
    );
    assert!(!ev.iter().any(|e| matches!(e, Event::Error(_))), "{ev:?}");
    assert_eq!(c.counters().late_messages, 3);
    let s = c.stats();
    assert_eq!(s.late_messages, 3);
    assert_eq!((s.messages_in, s.violations), (in_before, 0));
    assert_eq!(c.stop_reason(), Some(StopReason::Stop));
}

#[test]
fn stats_read_every_counter_nonzero() {
    let limits = Limits {
        max_event_count: 3,
        max_records: 1,
        max_ids: 3,
        ..Limits::default()
    };
    let mut c = ready(limits);
    c.handle_text(2, &msg("Heartbeat", json!({"u_milliseconds": 2})));
    c.handle_timeout(IV / 2);
    c.handle_text(
        3,
        &msg("Error", json!({"message": "m", "recoverable": true})),
    );
    c.handle_text(3, &msg("NoSuchThing", json!({})));
    c.handle_text(3, &msg("EchoResponse", json!({"msg_ref": 77})));
    for (id, name) in [(1, "a"), (2, "b")] {
        c.handle_text(
            3,
            &msg("TopicIntroduction", json!({"topic_id": id, "name": name})),
        );
    }
    c.handle_text(
        3,
        &msg(
            "KeyUpdate",
            json!({"key_id": 1, "name": "k", "class_list": ["C"]}),
        ),
    );
    for t in [1, 2] {
        c.handle_text(
            3,
            &msg(
                "JSONRecordUpdate",
                json!({"record_id": {"key_id": 1, "topic_id": t}, "value": 5}),
            ),
        );
    }
    c.echo().unwrap();
    let before = c.stats();
    assert!(before.transmit_held > 0 && before.transmit_bytes_held > 0);
    assert!(before.events_held > 0);
    assert!(before.records_held > 0 && before.record_bytes_held > 0);
    while c.poll_transmit().is_some() {}
    // A fourth id does not fit the id maps: counted, and the session's one violation.
    c.handle_text(
        4,
        &msg(
            "KeyUpdate",
            json!({"key_id": 2, "name": "k2", "class_list": ["C"]}),
        ),
    );
    let s = c.stats();
    let every = [
        ("sessions_started", s.sessions_started),
        ("sessions_stopped", s.sessions_stopped),
        ("messages_in", s.messages_in),
        ("bytes_in", s.bytes_in),
        ("messages_out", s.messages_out),
        ("bytes_out", s.bytes_out),
        ("heartbeats_sent", s.heartbeats_sent),
        ("heartbeats_received", s.heartbeats_received),
        ("violations", s.violations),
        ("server_errors", s.server_errors),
        ("events_dropped", s.events_dropped),
        ("records_dropped", s.records_dropped),
        ("ids_dropped", s.ids_dropped),
        ("unknown_messages", s.unknown_messages),
        ("unsolicited_replies", s.unsolicited_replies),
        ("events_held", s.events_held),
        ("records_held", s.records_held),
        ("record_bytes_held", s.record_bytes_held),
    ];
    for (name, v) in every {
        assert!(v > 0, "{name} is zero: {s:?}");
    }
    assert_eq!((s.transmit_held, s.transmit_bytes_held), (0, 0));
    assert_eq!(s.messages_in, 11);
    assert_eq!(
        (s.sessions_started, s.sessions_stopped, s.violations),
        (1, 1, 1)
    );
    assert_eq!((s.heartbeats_sent, s.heartbeats_received), (1, 1));
    assert_eq!(s.messages_out, before.transmit_held);
    assert_eq!(s.bytes_out, before.transmit_bytes_held);
    assert_eq!(s.records_held, 1);
    assert_eq!(s.record_bytes_held, 1);
    // The counters that counters() reports are the same numbers.
    let k = c.counters();
    assert_eq!(
        (
            k.events_dropped,
            k.records_dropped,
            k.ids_dropped,
            k.unknown_messages,
            k.unsolicited_replies
        ),
        (
            s.events_dropped,
            s.records_dropped,
            s.ids_dropped,
            s.unknown_messages,
            s.unsolicited_replies
        )
    );
}

#[test]
fn g_48_an_unsolicited_echo_response_answers_nothing() {
    let mut c = ready(Limits::default());
    c.handle_text(2, &msg("EchoResponse", json!({"msg_ref": u64::MAX})));
    let a = c.echo().unwrap();
    assert!(!c.echo_answered(a));
    // A response for a msg_ref issued to a compare-exchange is not an echo's either.
    assert_eq!(c.stats().unsolicited_replies, 1);
    c.handle_text(3, &msg("EchoResponse", json!({"msg_ref": a + 1})));
    assert!(!c.echo_answered(a));
    c.handle_text(4, &msg("EchoResponse", json!({"msg_ref": a})));
    assert!(c.echo_answered(a));
    // The same answer twice is unsolicited the second time.
    c.handle_text(5, &msg("EchoResponse", json!({"msg_ref": a})));
    assert_eq!(c.stats().unsolicited_replies, 3);
    assert_eq!(c.counters().unsolicited_replies, 3);
    let echoes: Vec<Event> = std::iter::from_fn(|| c.poll_event())
        .filter(|e| matches!(e, Event::Echo { .. }))
        .collect();
    assert_eq!(echoes, vec![Event::Echo { msg_ref: a }]);
    assert!(c.is_running());
}
