//! The client engine (`gar_client::Client`) driven against the server model in-process: what
//! one sends is handed to the other, no sockets. One test per rule clause, named after its key.

use gar_client::codec::write::Ownership;
use gar_client::codec::{RecordId, ServerError};
use gar_client::{Client, Config, Event, Status, StopReason, Subscribe};
use gar_sim::{sample_config, ConnId, EndCause, Output, PeerClose, Server, ServerConfig};
use serde_json::{json, Value};

struct Pair {
    server: Server,
    client: Client,
    conn: ConnId,
    now: u64,
    closed_with: Option<Option<u16>>,
}

impl Pair {
    fn new(config: ServerConfig, client: Config) -> Self {
        let mut server = Server::new(config);
        let conn = server.connect(0);
        let mut client = Client::new(client);
        client.start(0, (1, 2));
        let mut p = Pair {
            server,
            client,
            conn,
            now: 0,
            closed_with: None,
        };
        p.pump();
        p
    }

    fn ready() -> Self {
        Self::new(sample_config(), Config::default())
    }

    /// Moves messages both ways until neither side has anything to send.
    fn pump(&mut self) {
        loop {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit() {
                self.server.handle_text(self.conn, self.now, &t);
                moved = true;
            }
            while let Some(o) = self.server.poll_transmit(self.conn) {
                moved = true;
                match o {
                    Output::Text(t) => self.client.handle_text(self.now, &t),
                    Output::Close(code) => {
                        self.closed_with = Some(code);
                        self.client.handle_close(code);
                    }
                    _ => {}
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.client.poll_event()).collect()
    }

    fn errors(&mut self) -> Vec<ServerError> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Error(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    /// Client ids of `key` (in `class`) and `topic`.
    fn ids(&mut self, key: &str, class: &str, topic: &str) -> RecordId {
        let key_id = self.client.introduce_key(key, class).expect("key");
        let topic_id = self.client.introduce_topic(topic).expect("topic");
        self.pump();
        RecordId { key_id, topic_id }
    }

    fn publish(&mut self, key: &str, topic: &str, v: Value) {
        let r = self.ids(key, "Underlier", topic);
        self.client.publish(r, &v, 0).expect("publish");
        self.pump();
    }

    fn marker(&mut self, msg_ref: u64) {
        self.client
            .active_ownership(&Ownership {
                msg_ref,
                ..Ownership::default()
            })
            .expect("marker");
        self.pump();
    }

    /// Hands a raw text to the server as if this client sent it.
    fn raw(&mut self, text: &str) {
        self.server.handle_text(self.conn, self.now, text);
        self.pump();
    }
}

fn reason(fw: &Value) -> (&str, &str) {
    let r = fw["reason"].as_object().expect("a reason union");
    let (kind, v) = r.iter().next().expect("one member");
    (kind.as_str(), v.as_str().unwrap_or(""))
}

// ---- G-38: DeleteKeyCommand is client to server only ----

#[test]
fn g_38_delete_key_command_is_answered_by_per_class_teardown_never_echoed() {
    let mut p = Pair::ready();
    p.publish("AAPL", "bid", json!(1));
    p.client
        .subscribe(&Subscribe {
            name: "s".into(),
            streaming: true,
            class_list: vec!["Underlier".into()],
            ..Subscribe::default()
        })
        .expect("subscribe");
    p.pump();
    let server_key = (1..10)
        .find(|id| p.client.server_key(*id).is_some_and(|(n, _)| n == "AAPL"))
        .expect("the subscriber was shown AAPL");
    p.events();
    // A second connection asks for the whole-key deletion.
    let other = p.server.connect(0);
    p.server.handle_text(
        other,
        0,
        &json!({"message_type": "Introduction", "value": {"version": gar_sim::JSON_VERSION,
            "heartbeat_timeout_interval": 4000, "user": "bob"}})
        .to_string(),
    );
    p.server.handle_text(
        other,
        0,
        &json!({"message_type": "KeyUpdate", "value": {"key_id": 5, "name": "AAPL",
            "class_list": ["Underlier"]}})
        .to_string(),
    );
    p.server.handle_text(
        other,
        0,
        &json!({"message_type": "DeleteKeyCommand", "value": {"key_id": 5}}).to_string(),
    );
    let mut to_subscriber = Vec::new();
    while let Some(Output::Text(t)) = p.server.poll_transmit(p.conn) {
        to_subscriber.push(t.clone());
        p.client.handle_text(0, &t);
    }
    assert!(
        to_subscriber
            .iter()
            .all(|t| !t.contains("DeleteKeyCommand")),
        "the server never sends DeleteKeyCommand: {to_subscriber:?}"
    );
    assert!(to_subscriber[0].contains("\"deleted_class\":\"Underlier\""));
    assert!(to_subscriber[1].contains("KeyIdRetired"));
    let ev = p.events();
    assert!(ev.contains(&Event::ClassDeleted {
        key_id: server_key,
        deleted_class: "Underlier".into(),
        remaining: vec![],
    }));
    assert!(p.client.server_key(server_key).is_none());
    assert!(p.server.record("AAPL", "bid").is_none());
    assert!(p.server.classes("AAPL").is_empty());
}

// ---- G-53: failed writes of one message are one recoverable Error, only with msg_ref != 0 ----

#[test]
fn g_53_failed_writes_of_one_message_come_back_as_one_error() {
    let mut p = Pair::ready();
    let bid = p.ids("AAPL", "Underlier", "bid");
    let nope = p.client.introduce_topic("nope").expect("topic");
    let status = p.client.introduce_topic("status").expect("topic");
    p.pump();
    p.marker(9);
    p.events();
    let batch = json!({"message_type": "BatchUpdate", "value": {"keys": [
        {"key_id": bid.key_id, "topics": {
            bid.topic_id.to_string(): 5,
            nope.to_string(): 1,
            status.to_string(): "x"}}]}});
    p.raw(&batch.to_string());
    let errors = p.errors();
    assert_eq!(errors.len(), 1, "one Error for one message: {errors:?}");
    let e = &errors[0];
    assert!(e.recoverable);
    assert_eq!(e.msg_ref, 9);
    assert_eq!(e.failed_writes.len(), 2);
    assert_eq!(
        p.server.record("AAPL", "bid"),
        Some(&json!(5)),
        "the good write landed"
    );
    assert!(p.client.is_running());
}

#[test]
fn g_53_with_msg_ref_zero_a_failed_write_is_only_logged() {
    let mut p = Pair::ready();
    p.publish("AAPL", "nope", json!(1));
    let msg_ref = p.client.echo().expect("echo");
    p.pump();
    let ev = p.events();
    assert!(!ev.iter().any(|e| matches!(e, Event::Error(_))), "{ev:?}");
    assert!(ev.contains(&Event::Echo { msg_ref }));
    assert_eq!(p.server.counters().failed_writes_logged, 1);
}

#[test]
fn g_53_a_failed_write_names_its_ids_names_detail_and_origin() {
    let mut p = Pair::ready();
    p.marker(3);
    let r = p.ids("AAPL", "Underlier", "nope");
    p.client.publish(r, &json!(1), 0).expect("publish");
    p.pump();
    let errors = p.errors();
    let fw = &errors[0].failed_writes[0];
    assert_eq!(reason(fw), ("record_write", "UnknownTopic"));
    assert_eq!(fw["key_id"], r.key_id);
    assert_eq!(fw["topic_id"], r.topic_id);
    assert_eq!(fw["key_name"], "AAPL");
    assert_eq!(fw["topic_name"], "nope");
    assert_eq!(fw["origin"], "gar-sim");
    assert!(fw["detail"].as_str().is_some_and(|d| !d.is_empty()));
}

#[test]
fn g_53_a_failed_write_names_the_ids_it_was_addressed_by() {
    // One topic under two client ids (the relative and the qualified spelling, G-22): a
    // failed write names the id the write used, not the first id the topic was given.
    let mut p = Pair::new(
        sample_config(),
        Config {
            working_namespace: "ns".into(),
            ..Config::default()
        },
    );
    let first = p.ids("AAPL", "Underlier", "bid");
    let topic_id = p.client.introduce_topic("ns::bid").expect("topic");
    assert_ne!(topic_id, first.topic_id);
    p.pump();
    p.marker(3);
    p.events();
    let r = RecordId {
        key_id: first.key_id,
        topic_id,
    };
    p.client.publish(r, &json!("text"), 0).expect("publish");
    p.pump();
    let errors = p.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let fw = &errors[0].failed_writes[0];
    assert_eq!(reason(fw), ("record_write", "InvalidValue"));
    assert_eq!(
        (fw["key_id"].clone(), fw["topic_id"].clone()),
        (json!(r.key_id), json!(topic_id))
    );
}

#[test]
fn g_52_a_marker_holds_until_the_next_one() {
    let mut p = Pair::ready();
    p.publish("AAPL", "bid", json!(1));
    p.marker(3);
    p.events();
    // Two separate messages after one marker: each failure is routed to its msg_ref.
    p.publish("AAPL", "bid", json!("text"));
    p.publish("AAPL", "bid", json!("again"));
    let refs: Vec<u64> = p.errors().iter().map(|e| e.msg_ref).collect();
    assert_eq!(refs, vec![3, 3]);
    // The next marker replaces it: with msg_ref 0 the failure is only logged.
    p.marker(0);
    p.publish("AAPL", "bid", json!("text"));
    assert!(p.errors().is_empty());
    assert_eq!(p.server.counters().failed_writes_logged, 1);
}

// ---- G-54: malformed is exactly the request defects ----

fn failure_for(topic: &str, value: Value) -> Value {
    let mut p = Pair::ready();
    p.publish("AAPL", "bid", json!(1));
    p.marker(4);
    p.events();
    p.publish("AAPL", topic, value);
    let errors = p.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors[0].failed_writes[0].clone()
}

#[test]
fn g_54_invalid_value_is_malformed() {
    let fw = failure_for("bid", json!("text"));
    assert_eq!(reason(&fw), ("record_write", "InvalidValue"));
    assert_eq!(fw["malformed"], true);
}

#[test]
fn g_54_unknown_topic_is_malformed() {
    let fw = failure_for("nope", json!(1));
    assert_eq!(reason(&fw), ("record_write", "UnknownTopic"));
    assert_eq!(fw["malformed"], true);
}

#[test]
fn g_54_topic_not_writable_is_malformed() {
    let fw = failure_for("status", json!("up"));
    assert_eq!(reason(&fw), ("record_write", "TopicNotWritable"));
    assert_eq!(fw["malformed"], true);
}

#[test]
fn g_54_topic_not_in_class_is_state_not_malformed() {
    let fw = failure_for("strike", json!(3));
    assert_eq!(reason(&fw), ("record_write", "TopicNotInClass"));
    assert_eq!(fw["malformed"], false);
}

#[test]
fn g_54_unknown_class_is_a_malformed_key_write() {
    let mut p = Pair::ready();
    p.marker(4);
    p.events();
    p.client.introduce_key("AAPL", "NoSuchClass").expect("key");
    p.pump();
    let errors = p.errors();
    let fw = &errors[0].failed_writes[0];
    assert_eq!(reason(fw), ("key_write", "UnknownClass"));
    assert_eq!(fw["malformed"], true);
}

#[test]
fn g_54_write_denied_by_an_owner_is_not_malformed() {
    let mut p = Pair::ready();
    p.publish("AAPL", "bid", json!(1));
    let owner = p.server.connect(0);
    p.server.handle_text(
        owner,
        0,
        &json!({"message_type": "Introduction", "value": {"version": gar_sim::JSON_VERSION,
            "heartbeat_timeout_interval": 4000, "user": "owner"}})
        .to_string(),
    );
    for t in [
        json!({"message_type": "ActiveOwnership", "value": {"msg_ref": 1, "ownership_action": "Acquire"}}),
        json!({"message_type": "KeyUpdate", "value": {"key_id": 1, "name": "AAPL", "class_list": ["Underlier"]}}),
    ] {
        p.server.handle_text(owner, 0, &t.to_string());
    }
    assert_eq!(p.server.owner("AAPL"), Some(owner));
    p.marker(4);
    p.events();
    p.publish("AAPL", "bid", json!(2));
    let errors = p.errors();
    let fw = &errors[0].failed_writes[0];
    assert_eq!(reason(fw), ("record_write", "WriteDenied"));
    assert_eq!(fw["malformed"], false);
    assert_eq!(p.server.record("AAPL", "bid"), Some(&json!(1)));
}

// ---- G-56: disconnect_on_write_failure ----

fn bail_out() -> Pair {
    Pair::new(
        sample_config(),
        Config {
            disconnect_on_write_failure: true,
            ..Config::default()
        },
    )
}

#[test]
fn g_56_the_first_failed_write_is_a_non_recoverable_error_even_with_msg_ref_0() {
    let mut p = bail_out();
    p.publish("AAPL", "nope", json!(1));
    let ev = p.events();
    let err = ev
        .iter()
        .find_map(|e| match e {
            Event::Error(e) => Some(e.clone()),
            _ => None,
        })
        .expect("the Error reaches the client");
    assert!(!err.recoverable);
    assert_eq!(err.msg_ref, 0);
    assert_eq!(err.failed_writes.len(), 1);
    assert_eq!(p.client.stop_reason(), Some(StopReason::Error));
    assert_eq!(StopReason::Error.exit_code(), 1);
}

#[test]
fn g_56_the_connection_is_closed_after_the_report() {
    let mut p = bail_out();
    p.publish("AAPL", "nope", json!(1));
    assert_eq!(p.closed_with, Some(Some(1000)));
    assert_eq!(p.server.ended(p.conn), Some(&EndCause::WriteFailure));
}

#[test]
fn g_56_earlier_writes_stay_landed() {
    let mut p = bail_out();
    let bid = p.ids("AAPL", "Underlier", "bid");
    let nope = p.client.introduce_topic("nope").expect("topic");
    p.pump();
    let batch = json!({"message_type": "BatchUpdate", "value": {"keys": [
        {"key_id": bid.key_id, "topics": {bid.topic_id.to_string(): 8, nope.to_string(): 1}}]}});
    p.raw(&batch.to_string());
    assert_eq!(p.server.record("AAPL", "bid"), Some(&json!(8)));
    assert_eq!(p.client.stop_reason(), Some(StopReason::Error));
}

#[test]
fn g_56_without_the_option_the_same_failure_is_recoverable() {
    let mut p = Pair::ready();
    p.marker(2);
    p.events();
    p.publish("AAPL", "nope", json!(1));
    let errors = p.errors();
    assert!(errors[0].recoverable);
    assert!(p.client.is_running());
    assert_eq!(p.closed_with, None);
}

// ---- G-59: close codes ----

fn open_server() -> (Server, ConnId) {
    let mut p = Pair::ready();
    p.events();
    (p.server, p.conn)
}

fn answer(code: PeerClose) -> (Vec<Output>, Option<EndCause>) {
    let (mut s, c) = open_server();
    s.handle_close(c, code);
    let out: Vec<Output> = std::iter::from_fn(|| s.poll_transmit(c)).collect();
    (out, s.ended(c).cloned())
}

#[test]
fn g_59_a_close_with_1000_or_1001_is_answered() {
    for code in [1000, 1001] {
        let (out, end) = answer(PeerClose::Code(Some(code)));
        assert_eq!(out, vec![Output::Close(Some(code))]);
        assert_eq!(end, Some(EndCause::ClosedCleanly(Some(code))));
    }
}

#[test]
fn g_59_a_close_without_a_code_is_answered() {
    let (out, _) = answer(PeerClose::Code(None));
    assert_eq!(out, vec![Output::Close(None)]);
    let (out, end) = answer(PeerClose::Code(Some(1005)));
    assert_eq!(out, vec![Output::Close(None)]);
    assert_eq!(end, Some(EndCause::ClosedCleanly(Some(1005))));
}

#[test]
fn g_59_any_other_code_is_an_error_and_not_answered() {
    for code in [1002, 1011, 4000] {
        let (out, end) = answer(PeerClose::Code(Some(code)));
        assert!(out.is_empty(), "{code}: {out:?}");
        assert_eq!(end, Some(EndCause::ClosedWithError(code)));
    }
}

#[test]
fn g_59_a_one_byte_close_body_is_malformed() {
    let (out, end) = answer(PeerClose::Malformed);
    assert!(out.is_empty());
    assert_eq!(end, Some(EndCause::MalformedClose));
}

#[test]
fn g_59_the_client_sees_a_server_close_as_a_disconnect() {
    let mut p = Pair::ready();
    p.server.close_with(p.conn, Some(1001));
    p.pump();
    assert_eq!(p.client.stop_reason(), Some(StopReason::Disconnect));
}

// ---- G-60: what was sent before the close is delivered first ----

#[test]
fn g_60_an_error_before_the_close_is_reported_as_that_error() {
    let mut p = Pair::ready();
    p.events();
    p.server.send_fatal_error(p.conn, "going down");
    p.pump();
    let ev = p.events();
    assert!(matches!(&ev[0], Event::Error(e) if e.message == "going down" && !e.recoverable));
    assert!(matches!(
        ev.last(),
        Some(Event::Stopped {
            reason: StopReason::Error,
            ..
        })
    ));
    assert_eq!(p.closed_with, Some(Some(1000)));
}

#[test]
fn g_60_a_refused_introduction_reaches_the_client_as_its_error() {
    let p = &mut Pair::new(
        ServerConfig {
            version: 1,
            ..sample_config()
        },
        Config {
            user: "alice".into(),
            ..Config::default()
        },
    );
    let ev = p.events();
    assert!(
        matches!(&ev[0], Event::Error(e) if e.message == format!("Unsupported version from alice: {}", gar_client::JSON_VERSION)),
        "{ev:?}"
    );
    assert_eq!(p.client.stop_reason(), Some(StopReason::Error));
    assert!(matches!(
        p.server.ended(p.conn),
        Some(EndCause::VersionRefused(_))
    ));
}

#[test]
fn g_60_the_heartbeat_timeout_error_precedes_the_close() {
    let mut p = Pair::new(
        sample_config(),
        Config {
            heartbeat_timeout_interval: 100,
            ..Config::default()
        },
    );
    p.events();
    // The client stays silent past the ten-interval grace of its first beat.
    p.now = 1_001;
    p.server.handle_timeout(p.now);
    p.pump();
    let ev = p.events();
    assert!(
        matches!(&ev[0], Event::Error(e) if e.message == "Heartbeat timeout"),
        "{ev:?}"
    );
    assert_eq!(p.server.ended(p.conn), Some(&EndCause::HeartbeatTimeout));
}

// ---- client-side teardown and snapshot parts through the engine's own calls ----

#[test]
fn g_37_a_class_the_client_tears_down_leaves_the_other_class_and_its_records() {
    let mut p = Pair::ready();
    let strike = p.ids("ABC", "Option", "strike");
    p.client.publish(strike, &json!(7), 0).expect("publish");
    let bid = p.ids("ABC", "Underlier", "note");
    p.client.publish(bid, &json!("kept"), 0).expect("publish");
    p.pump();
    assert_eq!(p.server.classes("ABC"), ["Option", "Underlier"]);
    p.client
        .delete_class("ABC", "Option")
        .expect("delete class");
    p.pump();
    assert_eq!(p.server.classes("ABC"), ["Underlier"]);
    assert!(
        p.server.record("ABC", "strike").is_none(),
        "the deleted class's topic"
    );
    assert_eq!(p.server.record("ABC", "note"), Some(&json!("kept")));
    assert!(p.errors().is_empty());
}

#[test]
fn g_38_delete_key_through_the_engine_retires_the_key_at_a_subscriber() {
    let mut p = Pair::ready();
    p.publish("AAPL", "bid", json!(1));
    // A second client subscribes and is shown AAPL.
    let watcher = p.server.connect(0);
    let mut w = Client::new(Config::default());
    w.start(0, (3, 4));
    let to_watcher = |p: &mut Pair, w: &mut Client| {
        while let Some(t) = w.poll_transmit() {
            p.server.handle_text(watcher, 0, &t);
        }
        while let Some(Output::Text(t)) = p.server.poll_transmit(watcher) {
            w.handle_text(0, &t);
        }
    };
    to_watcher(&mut p, &mut w);
    w.subscribe(&Subscribe {
        name: "s".into(),
        streaming: true,
        class_list: vec!["Underlier".into()],
        ..Subscribe::default()
    })
    .expect("subscribe");
    to_watcher(&mut p, &mut w);
    let shown = (1..10)
        .find(|id| w.server_key(*id).is_some_and(|(n, _)| n == "AAPL"))
        .expect("the watcher was shown AAPL");
    p.client.delete_key("AAPL").expect("delete key");
    p.pump();
    to_watcher(&mut p, &mut w);
    assert!(w.server_key(shown).is_none(), "retired at the watcher");
    assert!(p.server.classes("AAPL").is_empty());
    assert!(p.server.record("AAPL", "bid").is_none());
}

#[test]
fn g_39_a_snapshot_size_limit_is_continued_by_the_engine_until_finished() {
    let mut p = Pair::ready();
    for k in ["A1", "A2", "A3"] {
        p.publish(k, "bid", json!(1));
    }
    p.events();
    p.client
        .subscribe(&Subscribe {
            name: "parts".into(),
            class_list: vec!["Underlier".into()],
            snapshot_size_limit: Some(1),
            ..Subscribe::default()
        })
        .expect("subscribe");
    p.pump();
    let statuses: Vec<Status> = p
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Status { name, status } if name == "parts" => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses.first(), Some(&Status::ProcessingSnapshot));
    assert_eq!(statuses.last(), Some(&Status::Finished));
    assert!(
        statuses
            .iter()
            .filter(|s| **s == Status::NeedsContinue)
            .count()
            >= 2,
        "{statuses:?}"
    );
}
