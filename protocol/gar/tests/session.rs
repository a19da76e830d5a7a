//! Behaviour of the GAR client engine, one test per rule clause (named after the rule key).

use gar_client::codec::{self, float_value, value_as_f64};
use gar_client::{
    CallError, Client, Config, Event, Inbound, Limits, RecordId, Status, StopReason, Subscribe,
    Violation, JSON_VERSION, UPGRADE_SUBPROTOCOL,
};
use serde_json::{json, Value};

const IV: u64 = 4000;

fn config() -> Config {
    Config {
        heartbeat_timeout_interval: IV,
        user: "alice".into(),
        application: "app".into(),
        pid: 42,
        working_namespace: "ns".into(),
        ..Config::default()
    }
}

/// The test configuration with `limits`.
fn config_with(limits: Limits) -> Config {
    Config { limits, ..config() }
}

fn started(c: Config) -> Client {
    let mut cl = Client::new(c);
    cl.start(0, (7, 9));
    cl
}

fn sent(c: &mut Client) -> Vec<Value> {
    std::iter::from_fn(|| c.poll_transmit())
        .map(|t| serde_json::from_str(&t).unwrap())
        .collect()
}

fn events(c: &mut Client) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

fn msg(mt: &str, v: Value) -> String {
    json!({"message_type": mt, "value": v}).to_string()
}

/// Hands the client a server message of type `mt` with value `v` at `now`.
trait Receive {
    fn receive(&mut self, now: u64, mt: &str, v: Value);
}

impl Receive for Client {
    fn receive(&mut self, now: u64, mt: &str, v: Value) {
        self.handle_text(now, &msg(mt, v));
    }
}

fn server_intro(version: u64, interval: u64) -> String {
    msg(
        "Introduction",
        json!({"version": version, "heartbeat_timeout_interval": interval, "user": "srv"}),
    )
}

/// A client started with `c` that has had the server's introduction (advertising `interval`).
fn introduced(c: Config, interval: u64) -> Client {
    let mut cl = started(c);
    cl.handle_text(1, &server_intro(JSON_VERSION, interval));
    cl
}

/// A client past both introductions with its queues drained.
fn ready() -> Client {
    let mut c = introduced(config(), IV);
    sent(&mut c);
    events(&mut c);
    c
}

fn topic(c: &mut Client, id: u64, name: &str) {
    topic_at(c, 1, id, name);
}

fn topic_at(c: &mut Client, now: u64, id: u64, name: &str) {
    c.receive(
        now,
        "TopicIntroduction",
        json!({"topic_id": id, "name": name}),
    );
}

fn key(c: &mut Client, id: u64, name: &str, classes: &[&str]) {
    c.receive(
        1,
        "KeyUpdate",
        json!({"key_id": id, "name": name, "class_list": classes}),
    );
}

fn rid(key_id: u64, topic_id: u64) -> RecordId {
    RecordId { key_id, topic_id }
}

/// Introduces this client's topic `t` and key `k` (class `A`): the record both name.
fn own_record(c: &mut Client) -> RecordId {
    let t = c.introduce_topic("t").unwrap();
    let k = c.introduce_key("k", "A").unwrap();
    rid(k, t)
}

fn update(c: &mut Client, k: u64, t: u64, value: Value) {
    c.receive(
        1,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": k, "topic_id": t}, "value": value}),
    );
}

/// A ready client that has had the server's topic 3 (`t`) and key 5 (`name`, class `A`).
fn with_key(name: &str) -> Client {
    let mut c = ready();
    topic(&mut c, 3, "t");
    key(&mut c, 5, name, &["A"]);
    c
}

fn with_record() -> Client {
    let mut c = ready();
    topic(&mut c, 3, "price");
    key(&mut c, 5, "k1", &["A"]);
    update(&mut c, 5, 3, json!(10));
    events(&mut c);
    c
}

/// Checks that the client is still running just before `t` and stops for heartbeat timeout at
/// `t`.
fn times_out_at(c: &mut Client, t: u64) {
    c.handle_timeout(t - 1);
    assert!(c.is_running(), "still alive at {}", t - 1);
    c.handle_timeout(t);
    assert_eq!(c.stop_reason(), Some(StopReason::HeartbeatTimeout));
}

/// An ownership marker that acquires, all else default.
fn acquiring() -> gar_client::codec::write::Ownership {
    use gar_client::codec::write::{Ownership, OwnershipAction};
    Ownership {
        ownership_action: OwnershipAction::Acquire,
        ..Ownership::default()
    }
}

fn stopped_with(c: &mut Client) -> Vec<(StopReason, Option<Violation>)> {
    events(c)
        .into_iter()
        .filter_map(|e| match e {
            Event::Stopped { reason, violation } => Some((reason, violation)),
            _ => None,
        })
        .collect()
}

#[test]
fn g_1_the_upgrade_requests_subprotocol_gar_protocol() {
    assert_eq!(UPGRADE_SUBPROTOCOL, "gar-protocol");
}

#[test]
fn g_2_every_outbound_message_is_exactly_one_json_object() {
    let mut c = ready();
    c.introduce_topic("t").unwrap();
    c.echo().unwrap();
    let texts: Vec<String> = std::iter::from_fn(|| c.poll_transmit()).collect();
    assert_eq!(texts.len(), 2);
    for t in texts {
        assert!(serde_json::from_str::<Value>(&t).unwrap().is_object());
    }
}

#[test]
fn g_2_two_objects_in_one_message_are_a_violation() {
    let mut c = ready();
    let one = msg("Heartbeat", json!({"u_milliseconds": 1}));
    c.handle_text(2, &format!("{one}{one}"));
    let stops = stopped_with(&mut c);
    assert!(matches!(
        stops.as_slice(),
        [(StopReason::Error, Some(Violation::NotJson(_)))]
    ));
}

#[test]
fn g_3_messages_are_message_type_and_value() {
    let mut c = ready();
    c.echo().unwrap();
    let m = &sent(&mut c)[0];
    assert_eq!(m["message_type"], "EchoRequest");
    assert_eq!(m["value"], json!({"msg_ref": 1}));
    assert_eq!(m.as_object().unwrap().len(), 2);
}

#[test]
fn g_3_logoff_may_omit_value() {
    let got = codec::decode(r#"{"message_type":"Logoff"}"#, &Limits::default()).unwrap();
    assert_eq!(got, Inbound::Logoff);
    let written: Value = serde_json::from_str(&codec::write::logoff()).unwrap();
    assert_eq!(written, json!({"message_type": "Logoff"}));
}

#[test]
fn g_4_the_first_byte_sent_is_an_open_brace() {
    let mut c = started(config());
    let first = c.poll_transmit().unwrap();
    assert_eq!(first.as_bytes()[0], b'{');
}

#[test]
fn g_5_a_binary_message_is_refused_not_guessed() {
    let mut c = ready();
    c.handle_binary(2, &[1, 0, 0, 0]);
    assert_eq!(
        stopped_with(&mut c),
        vec![(StopReason::Error, Some(Violation::Binary))]
    );
}

#[test]
fn g_6_the_introduction_is_the_first_message() {
    let mut c = started(config());
    c.introduce_topic("t").unwrap();
    c.echo().unwrap();
    let all = sent(&mut c);
    assert_eq!(all[0]["message_type"], "Introduction");
    assert!(all[1..].iter().all(|m| m["message_type"] != "Introduction"));
}

#[test]
fn g_7_the_introduction_carries_every_field() {
    let mut c = Client::new(Config {
        unique_key_and_record_updates: true,
        disconnect_on_write_failure: true,
        ..config()
    });
    c.start(0, (11, 22));
    let m = &sent(&mut c)[0];
    assert_eq!(
        m["value"],
        json!({
            "version": 650712, "heartbeat_timeout_interval": 4000, "user": "alice",
            "application": "app", "pid": 42, "uuid": {"low": 11, "high": 22},
            "working_namespace": "ns", "unique_key_and_record_updates": true,
            "disconnect_on_write_failure": true
        })
    );
}

#[test]
fn g_7_each_field_follows_its_config_and_false_flags_are_sent() {
    assert_eq!(JSON_VERSION, 650_712);
    for (unique, disconnect) in [(false, false), (true, false), (false, true)] {
        let mut c = Client::new(Config {
            heartbeat_timeout_interval: 1234,
            user: "bob".into(),
            application: "tool".into(),
            pid: 7,
            working_namespace: "other::ns".into(),
            unique_key_and_record_updates: unique,
            disconnect_on_write_failure: disconnect,
            ..Config::default()
        });
        c.start(0, (u64::MAX, 0));
        let m = &sent(&mut c)[0];
        assert_eq!(m["message_type"], "Introduction");
        assert_eq!(
            m["value"],
            json!({
                "version": 650712, "heartbeat_timeout_interval": 1234, "user": "bob",
                "application": "tool", "pid": 7, "uuid": {"low": u64::MAX, "high": 0},
                "working_namespace": "other::ns", "unique_key_and_record_updates": unique,
                "disconnect_on_write_failure": disconnect
            }),
            "{unique} {disconnect}"
        );
    }
}

#[test]
fn g_8_a_different_version_is_a_non_recoverable_error() {
    let mut c = started(config());
    c.handle_text(1, &server_intro(JSON_VERSION + 1, IV));
    let ev = events(&mut c);
    match &ev[0] {
        Event::Error(e) => {
            assert_eq!(
                e.message,
                format!("Unsupported version from srv: {}", JSON_VERSION + 1)
            );
            assert!(!e.recoverable);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ev[1],
        Event::Stopped {
            reason: StopReason::Error,
            ..
        }
    ));
    assert_eq!(c.stop_reason().unwrap().exit_code(), 1);
}

#[test]
fn g_8_a_lower_or_far_version_is_refused_as_well_as_a_higher_one() {
    for version in [JSON_VERSION - 1, 0, 1, u64::MAX] {
        let mut c = started(config());
        c.handle_text(1, &server_intro(version, IV));
        let ev = events(&mut c);
        assert_eq!(ev.len(), 2, "{version}: {ev:?}");
        match &ev[0] {
            Event::Error(e) => {
                assert_eq!(
                    e.message,
                    format!("Unsupported version from srv: {version}")
                );
                assert!(!e.recoverable, "{version}");
            }
            other => panic!("{version}: {other:?}"),
        }
        assert_eq!(c.stop_reason(), Some(StopReason::Error), "{version}");
        assert!(!c.is_running());
    }
    // The same version is no refusal.
    let mut c = started(config());
    c.handle_text(1, &server_intro(JSON_VERSION, IV));
    assert!(c.is_running());
    assert!(!events(&mut c)
        .iter()
        .any(|e| matches!(e, Event::Error(_) | Event::Stopped { .. })));
}

#[test]
fn g_9_each_start_introduces_the_uuid_it_was_given() {
    let mut c = Client::new(config());
    c.start(0, (1, 2));
    let a = sent(&mut c)[0]["value"]["uuid"].clone();
    c.logoff();
    c.start(0, (3, 4));
    let b = sent(&mut c)[0]["value"]["uuid"].clone();
    assert_eq!(a, json!({"low": 1, "high": 2}));
    assert_eq!(b, json!({"low": 3, "high": 4}));
}

#[test]
fn g_10_a_received_introduction_drops_server_maps_and_records() {
    let mut c = with_record();
    c.handle_text(2, &server_intro(JSON_VERSION, IV));
    assert!(c.server_topic(3).is_none());
    assert!(c.server_key(5).is_none());
    assert!(c.record(rid(5, 3)).is_none());
    assert!(c.is_running());
}

fn beats(c: &mut Client) -> Vec<u64> {
    sent(c)
        .iter()
        .filter(|m| m["message_type"] == "Heartbeat")
        .map(|m| m["value"]["u_milliseconds"].as_u64().unwrap())
        .collect()
}

/// Keeps the server side alive so that only the send cadence is under test.
fn alive(c: &mut Client, now: u64) {
    c.receive(now, "Heartbeat", json!({"u_milliseconds": now}));
}

#[test]
fn g_12_heartbeats_go_out_every_half_timeout() {
    let mut c = ready();
    assert_eq!(c.poll_timeout(), Some(IV / 2));
    c.handle_timeout(IV / 2 - 1);
    assert!(beats(&mut c).is_empty());
    c.handle_timeout(IV / 2);
    alive(&mut c, IV / 2);
    c.handle_timeout(IV);
    assert_eq!(beats(&mut c), vec![IV / 2, IV]);
}

#[test]
fn g_13_the_cadence_is_anchored_to_the_previous_schedule() {
    let mut c = ready();
    c.handle_timeout(2500);
    assert_eq!(beats(&mut c), vec![2500]);
    assert_eq!(c.poll_timeout(), Some(4000));
}

#[test]
fn g_13_a_backlog_does_not_replay() {
    let mut c = ready();
    c.handle_timeout(2000);
    alive(&mut c, 9000);
    c.handle_timeout(9000);
    assert_eq!(beats(&mut c), vec![2000, 9000]);
    assert_eq!(c.poll_timeout(), Some(11000));
    c.handle_timeout(10999);
    assert!(beats(&mut c).is_empty());
}

#[test]
fn g_14_the_first_server_heartbeat_gets_ten_intervals() {
    let mut c = ready();
    let mut t = 0;
    while t < 10 * IV - 1 {
        t = c.poll_timeout().unwrap().min(10 * IV - 1);
        c.handle_timeout(t);
    }
    assert!(c.is_running());
    c.handle_timeout(10 * IV);
    assert_eq!(c.stop_reason(), Some(StopReason::HeartbeatTimeout));
}

#[test]
fn g_15_liveness_is_the_larger_of_both_intervals() {
    let mut c = introduced(config(), 6000);
    alive(&mut c, 100);
    times_out_at(&mut c, 6100);
    assert_eq!(StopReason::HeartbeatTimeout.exit_code(), 1);
}

#[test]
fn g_15_own_interval_wins_when_larger() {
    let mut c = introduced(config(), 1000);
    alive(&mut c, 100);
    times_out_at(&mut c, 4100);
}

#[test]
fn g_16_any_message_refreshes_liveness_when_asked() {
    let mut c = introduced(
        Config {
            any_message_is_alive: true,
            ..config()
        },
        IV,
    );
    alive(&mut c, 100);
    topic(&mut c, 3, "x");
    topic_at(&mut c, 3000, 4, "y");
    times_out_at(&mut c, 7000);
}

#[test]
fn g_16_without_the_option_only_heartbeats_count() {
    let mut c = ready();
    alive(&mut c, 100);
    topic_at(&mut c, 3000, 4, "y");
    c.handle_timeout(4100);
    assert_eq!(c.stop_reason(), Some(StopReason::HeartbeatTimeout));
}

#[test]
fn g_17_the_servers_heartbeat_timeout_error_is_reported_not_a_bare_disconnect() {
    let mut c = ready();
    c.receive(
        2,
        "Error",
        json!({"message": "Heartbeat timeout", "recoverable": false}),
    );
    c.handle_close(Some(1000));
    let ev = events(&mut c);
    assert!(matches!(&ev[0], Event::Error(e) if e.message == "Heartbeat timeout"));
    assert!(matches!(
        ev[1],
        Event::Stopped {
            reason: StopReason::Error,
            ..
        }
    ));
    assert_eq!(ev.len(), 2);
}

#[test]
fn g_18_a_write_needs_introduced_ids() {
    let mut c = ready();
    assert_eq!(
        c.publish(rid(1, 1), &json!(1), 0),
        Err(CallError::UnknownId(1))
    );
    assert!(sent(&mut c).is_empty());
}

#[test]
fn g_18_introductions_precede_the_record() {
    let mut c = ready();
    let t = c.introduce_topic("price").unwrap();
    let k = c.introduce_key("k1", "A").unwrap();
    c.publish(rid(k, t), &json!(1), 0).unwrap();
    let all = sent(&mut c);
    assert_eq!(
        all[0],
        json!({"message_type": "TopicIntroduction", "value": {"topic_id": 1, "name": "price"}})
    );
    assert_eq!(
        all[1],
        json!({"message_type": "KeyUpdate", "value": {"key_id": 1, "name": "k1", "class_list": ["A"]}})
    );
    assert_eq!(all[2]["message_type"], "JSONRecordUpdate");
}

#[test]
fn g_19_client_counters_start_at_one() {
    let mut c = ready();
    assert_eq!(c.introduce_topic("a").unwrap(), 1);
    assert_eq!(c.introduce_topic("b").unwrap(), 2);
    assert_eq!(c.introduce_key("k", "A").unwrap(), 1);
    assert_eq!(c.echo().unwrap(), 1);
}

#[test]
fn g_19_id_zero_from_the_server_is_a_violation() {
    for text in [
        msg("TopicIntroduction", json!({"topic_id": 0, "name": "x"})),
        msg(
            "KeyUpdate",
            json!({"key_id": 0, "name": "x", "class_list": []}),
        ),
        msg(
            "JSONRecordUpdate",
            json!({"record_id": {"key_id": 0, "topic_id": 3}, "value": 1}),
        ),
    ] {
        let mut c = ready();
        c.handle_text(2, &text);
        let stops = stopped_with(&mut c);
        assert!(
            matches!(
                stops.as_slice(),
                [(StopReason::Error, Some(Violation::ZeroId { .. }))]
            ),
            "{text}"
        );
    }
}

#[test]
fn g_20_server_and_client_id_spaces_are_kept_apart() {
    let mut c = ready();
    topic(&mut c, 1, "server_name");
    key(&mut c, 1, "server_key", &["A"]);
    assert_eq!(c.introduce_topic("client_name").unwrap(), 1);
    assert_eq!(c.server_topic(1), Some("server_name"));
    // Server id 1 is not a client id: the client has no key introduced yet.
    assert_eq!(
        c.publish(rid(1, 1), &json!(1), 0),
        Err(CallError::UnknownId(1))
    );
}

#[test]
fn g_20_ids_the_client_assigned_are_not_server_ids() {
    // A record from the server under ids only the client introduced: the maps are out of step.
    let mut c = ready();
    let own = own_record(&mut c);
    sent(&mut c);
    update(&mut c, own.key_id, own.topic_id, json!(1));
    assert!(matches!(
        stopped_with(&mut c).as_slice(),
        [(StopReason::Error, Some(Violation::UnknownId { .. }))]
    ));
    assert!(c.record(own).is_none());
}

#[test]
fn g_20_the_same_names_under_both_id_spaces_stay_apart() {
    let mut c = ready();
    let own = own_record(&mut c);
    sent(&mut c);
    // The server names the same topic and key under its own ids.
    topic(&mut c, 9, "t");
    key(&mut c, 8, "k", &["A"]);
    update(&mut c, 8, 9, json!(5));
    // The client's ids are unchanged and not re-introduced; the server's are not the client's.
    assert_eq!(c.introduce_topic("t").unwrap(), own.topic_id);
    assert_eq!(c.introduce_key("k", "A").unwrap(), own.key_id);
    assert!(sent(&mut c).is_empty());
    assert_eq!(
        c.publish(rid(8, 9), &json!(1), 0),
        Err(CallError::UnknownId(8))
    );
    c.publish(own, &json!(6), 0).unwrap();
    let out = sent(&mut c);
    assert_eq!(
        out[0]["value"]["record_id"],
        json!({"key_id": own.key_id, "topic_id": own.topic_id})
    );
    // The server's record is cached under the server's ids only.
    assert_eq!(c.record(rid(8, 9)).unwrap().value, Some(json!(5)));
    assert!(c.record(own).is_none());
    assert!(c.server_topic(own.topic_id).is_none());
}

#[test]
fn g_22_each_id_of_a_topic_publishes_and_receives_under_itself() {
    let mut c = ready();
    let relative = c.introduce_topic("x").unwrap();
    let qualified = c.introduce_topic("ns::x").unwrap();
    let k = c.introduce_key("k", "A").unwrap();
    // Asking again for either spelling names the id it already has: nothing is re-introduced.
    assert_eq!(c.introduce_topic("x").unwrap(), relative);
    assert_eq!(c.introduce_topic("ns::x").unwrap(), qualified);
    let intros = sent(&mut c);
    assert_eq!(
        intros
            .iter()
            .filter(|m| m["message_type"] == "TopicIntroduction")
            .count(),
        2
    );
    for (id, v) in [(relative, 1), (qualified, 2)] {
        c.publish(rid(k, id), &json!(v), 0).unwrap();
        let out = sent(&mut c);
        assert_eq!(
            out[0]["value"]["record_id"],
            json!({"key_id": k, "topic_id": id})
        );
    }
    // From the server, a record under each of its ids for the topic reaches the application
    // under that id.
    topic(&mut c, 3, "A::x");
    topic(&mut c, 4, "ns::A::x");
    key(&mut c, 5, "k", &["A"]);
    events(&mut c);
    update(&mut c, 5, 3, json!(1));
    update(&mut c, 5, 4, json!(2));
    let got: Vec<RecordId> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            Event::Record { record_id, .. } => Some(record_id),
            _ => None,
        })
        .collect();
    assert_eq!(got, [rid(5, 3), rid(5, 4)]);
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(1)));
    assert!(c.is_running());
}

#[test]
fn g_21_a_known_key_in_a_new_class_sends_an_additive_key_update() {
    let mut c = ready();
    let k = c.introduce_key("k", "A").unwrap();
    assert_eq!(c.introduce_key("k", "B").unwrap(), k);
    assert_eq!(c.introduce_key("k", "A").unwrap(), k);
    let all = sent(&mut c);
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[1]["value"],
        json!({"key_id": k, "name": "k", "class_list": ["B"]})
    );
}

#[test]
fn g_21_a_server_key_update_adds_classes() {
    let mut c = ready();
    key(&mut c, 5, "k", &["A"]);
    key(&mut c, 5, "k", &["B"]);
    let classes: Vec<&String> = c.server_key(5).unwrap().1.iter().collect();
    assert_eq!(classes, ["A", "B"]);
}

#[test]
fn g_22_one_topic_under_several_ids_is_addressable_by_each() {
    let mut c = ready();
    topic(&mut c, 3, "A::x");
    topic(&mut c, 4, "ns::A::x");
    key(&mut c, 5, "k", &["A"]);
    update(&mut c, 5, 3, json!(1));
    update(&mut c, 5, 4, json!(2));
    assert!(c.is_running());
    assert_eq!(c.record(rid(5, 4)).unwrap().value, Some(json!(2)));
    let mut d = ready();
    assert_ne!(
        d.introduce_topic("x").unwrap(),
        d.introduce_topic("ns::x").unwrap()
    );
}

#[test]
fn g_23_key_id_retired_drops_the_mapping_and_its_records_silently() {
    let mut c = with_record();
    topic(&mut c, 4, "size");
    key(&mut c, 6, "k2", &["A"]);
    update(&mut c, 5, 4, json!(11));
    update(&mut c, 6, 3, json!(12));
    events(&mut c);
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    assert!(c.server_key(5).is_none());
    assert!(c.record(rid(5, 3)).is_none());
    assert!(c.record(rid(5, 4)).is_none());
    // Another key's records stay, and the held counts are only theirs.
    assert_eq!(c.record(rid(6, 3)).unwrap().value, Some(json!(12)));
    assert_eq!(c.stats().records_held, 1);
    assert_eq!(c.stats().record_bytes_held, 2);
    // Bookkeeping, not a data teardown: no event.
    assert!(events(&mut c).is_empty());
    assert!(c.is_running());
}

#[test]
fn g_23_a_reused_key_id_shows_no_old_records() {
    let mut c = with_record();
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "A", "class_list": []}),
    );
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    key(&mut c, 5, "other", &["A"]);
    assert!(c.record(rid(5, 3)).is_none());
    assert_eq!(c.stats().records_held, 0);
    assert_eq!(c.stats().record_bytes_held, 0);
}

#[test]
fn g_36_a_whole_key_delete_drops_the_keys_records() {
    let mut c = with_record();
    key(&mut c, 6, "k2", &["A"]);
    update(&mut c, 6, 3, json!(7));
    events(&mut c);
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "A", "class_list": []}),
    );
    assert!(c.record(rid(5, 3)).is_none());
    assert_eq!(c.record(rid(6, 3)).unwrap().value, Some(json!(7)));
    assert_eq!(c.stats().records_held, 1);
    assert_eq!(c.stats().record_bytes_held, 1);
    // The key id itself stays mapped until it is retired.
    assert!(c.server_key(5).is_some());
}

#[test]
fn g_24_an_invalidated_client_key_must_be_introduced_again() {
    let mut c = ready();
    let t = c.introduce_topic("t").unwrap();
    let k = c.introduce_key("k", "A").unwrap();
    sent(&mut c);
    c.receive(
        2,
        "ClientIntroducedKeyInvalidated",
        json!({"client_introduced_key_id": k}),
    );
    assert_eq!(events(&mut c), vec![Event::KeyInvalidated { key_id: k }]);
    assert_eq!(
        c.publish(rid(k, t), &json!(1), 0),
        Err(CallError::UnknownId(k))
    );
    let k2 = c.introduce_key("k", "A").unwrap();
    assert_ne!(k2, k);
    assert_eq!(sent(&mut c)[0]["message_type"], "KeyUpdate");
    c.publish(rid(k2, t), &json!(1), 0).unwrap();
}

#[test]
fn g_25_a_record_under_an_unmapped_key_is_fatal() {
    let mut c = ready();
    topic(&mut c, 3, "t");
    update(&mut c, 9, 3, json!(1));
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::UnknownId { kind: "key", id: 9 })
        )]
    );
}

#[test]
fn g_25_a_record_under_an_unmapped_topic_is_fatal() {
    let mut c = ready();
    key(&mut c, 5, "k", &["A"]);
    update(&mut c, 5, 8, json!(1));
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::UnknownId {
                kind: "topic",
                id: 8
            })
        )]
    );
}

#[test]
fn g_25_a_record_under_a_retired_key_is_fatal() {
    let mut c = with_record();
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    update(&mut c, 5, 3, json!(1));
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
}

#[test]
fn g_25_a_framing_error_is_fatal() {
    for text in [
        "not json",
        "[1,2]",
        r#"{"value":{}}"#,
        r#"{"message_type":"Heartbeat","value":{"u_milliseconds":"x"}}"#,
    ] {
        let mut c = ready();
        c.handle_text(2, text);
        assert_eq!(c.stop_reason(), Some(StopReason::Error), "{text}");
    }
}

#[test]
fn g_26_a_record_update_is_cached_with_its_tick_time() {
    let mut c = with_key("k");
    c.receive(
        2,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 5, "topic_id": 3}, "value": "v", "tick_time": 77}),
    );
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!((r.value.clone(), r.tick_time), (Some(json!("v")), 77));
    assert_eq!(
        events(&mut c),
        vec![Event::Record {
            record_id: rid(5, 3),
            value: Some(json!("v"))
        }]
    );
}

#[test]
fn g_26_publish_writes_a_json_record_update() {
    let mut c = ready();
    let id = own_record(&mut c);
    sent(&mut c);
    c.publish(id, &json!(0.3), 0).unwrap();
    assert_eq!(
        sent(&mut c)[0],
        json!({"message_type": "JSONRecordUpdate", "value": {"record_id": {"key_id": 1, "topic_id": 1}, "value": 0.3}})
    );
}

#[test]
fn g_27_a_null_value_deletes_the_record() {
    let mut c = with_record();
    update(&mut c, 5, 3, Value::Null);
    assert!(c.record(rid(5, 3)).is_none());
    assert_eq!(
        events(&mut c),
        vec![Event::Record {
            record_id: rid(5, 3),
            value: None
        }]
    );
}

#[test]
fn g_27_zero_is_a_value_not_a_delete() {
    let mut c = with_record();
    update(&mut c, 5, 3, json!(0));
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(0)));
    let text = codec::write::record_update(rid(1, 1), &json!(0), 0);
    assert!(text.contains(r#""value":0"#));
}

#[test]
fn g_28_infinities_are_written_as_1e999() {
    assert_eq!(codec::to_text(&float_value(f64::INFINITY)), "1e999");
    assert_eq!(codec::to_text(&float_value(f64::NEG_INFINITY)), "-1e999");
    assert_eq!(codec::to_text(&float_value(1.5)), "1.5");
    assert_eq!(codec::to_text(&float_value(2.5e-300)), "2.5e-300");
    let text = codec::write::record_update(rid(1, 1), &float_value(f64::INFINITY), 0);
    assert!(text.contains(r#""value":1e999"#), "{text}");
}

#[test]
fn g_28_nan_is_written_as_null() {
    assert_eq!(float_value(f64::NAN), Value::Null);
}

#[test]
fn g_28_readers_accept_1e999() {
    let mut c = with_key("k");
    c.handle_text(2, r#"{"message_type":"JSONRecordUpdate","value":{"record_id":{"key_id":5,"topic_id":3},"value":-1e999}}"#);
    let v = c.record(rid(5, 3)).unwrap().value.clone().unwrap();
    assert_eq!(value_as_f64(&v), Some(f64::NEG_INFINITY));
    let pos: Value = serde_json::from_str("1e999").unwrap();
    assert_eq!(value_as_f64(&pos), Some(f64::INFINITY));
}

#[test]
fn g_28_readers_accept_the_infinity_words_in_any_case() {
    assert_eq!(value_as_f64(&json!("infinity")), Some(f64::INFINITY));
    assert_eq!(value_as_f64(&json!("INFINITY")), Some(f64::INFINITY));
    assert_eq!(value_as_f64(&json!("-Infinity")), Some(f64::NEG_INFINITY));
    assert_eq!(value_as_f64(&json!("nope")), None);
}

#[test]
fn g_29_numbers_keep_their_digits() {
    let mut c = with_key("k");
    c.handle_text(2, r#"{"message_type":"JSONRecordUpdate","value":{"record_id":{"key_id":5,"topic_id":3},"value":0.100000000000000000000000001}}"#);
    let v = c.record(rid(5, 3)).unwrap().value.clone().unwrap();
    assert_eq!(v.to_string(), "0.100000000000000000000000001");
    let big: Value = serde_json::from_str("123456789012345678901234567890").unwrap();
    assert!(
        codec::write::record_update(rid(1, 1), &big, 0).contains("123456789012345678901234567890")
    );
}

#[test]
fn g_30_a_zero_tick_time_is_left_for_the_server_to_stamp() {
    let m: Value =
        serde_json::from_str(&codec::write::record_update(rid(1, 1), &json!(1), 0)).unwrap();
    assert!(m["value"].get("tick_time").is_none());
}

#[test]
fn g_30_an_origin_stamp_is_sent() {
    let m: Value =
        serde_json::from_str(&codec::write::record_update(rid(1, 1), &json!(1), 99)).unwrap();
    assert_eq!(m["value"]["tick_time"], 99);
}

#[test]
fn g_31_a_record_tick_updates_only_the_stamp() {
    let mut c = with_record();
    c.receive(
        2,
        "RecordTick",
        json!({"record_id": {"key_id": 5, "topic_id": 3}, "tick_time": 123}),
    );
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!((r.value.clone(), r.tick_time), (Some(json!(10)), 123));
    assert!(events(&mut c).is_empty());
}

#[test]
fn g_31_a_tick_keeps_a_diagnostic_and_invents_no_value() {
    let mut c = with_record();
    diag(&mut c);
    events(&mut c);
    c.receive(
        3,
        "RecordTick",
        json!({"record_id": {"key_id": 5, "topic_id": 3}, "tick_time": 77}),
    );
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!((r.value.clone(), r.tick_time), (None, 77));
    assert_eq!(r.diagnostic.as_ref().unwrap().reason, "InputMissing");
    // A tick for a record the client holds no value of gives it none, and tells nobody.
    topic(&mut c, 4, "other");
    c.receive(
        4,
        "RecordTick",
        json!({"record_id": {"key_id": 5, "topic_id": 4}, "tick_time": 78}),
    );
    assert!(c
        .record(rid(5, 4))
        .is_none_or(|r| r.value.is_none() && r.diagnostic.is_none()));
    // A later tick moves the stamp again, on a record whose value came back.
    update(&mut c, 5, 3, json!(11));
    events(&mut c);
    c.receive(
        5,
        "RecordTick",
        json!({"record_id": {"key_id": 5, "topic_id": 3}, "tick_time": 79}),
    );
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!((r.value.clone(), r.tick_time), (Some(json!(11)), 79));
    assert!(events(&mut c).is_empty());
    assert!(c.is_running());
}

fn diag(c: &mut Client) {
    c.receive(
        2,
        "RecordDiagnostic",
        json!({"record_id": {"key_id": 5, "topic_id": 3},
                   "diagnostic": {"reason": "InputMissing", "missing_inputs": [], "text": ""}}),
    );
}

#[test]
fn g_32_a_diagnostic_replaces_the_value() {
    let mut c = with_record();
    c.receive(
        2,
        "DeleteRecord",
        json!({"key_id": 5, "topic_id": 3, "tick_time": 0}),
    );
    diag(&mut c);
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!(r.value, None);
    assert_eq!(r.diagnostic.as_ref().unwrap().reason, "InputMissing");
}

#[test]
fn g_32_a_later_value_supersedes_the_diagnostic() {
    let mut c = with_record();
    diag(&mut c);
    update(&mut c, 5, 3, json!(4));
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!(
        (r.value.clone(), r.diagnostic.clone()),
        (Some(json!(4)), None)
    );
}

#[test]
fn g_33_delete_record_removes_value_and_diagnostic() {
    let mut c = with_record();
    c.receive(
        2,
        "DeleteRecord",
        json!({"key_id": 5, "topic_id": 3, "tick_time": 1}),
    );
    assert!(c.record(rid(5, 3)).is_none());
    diag(&mut c);
    c.receive(
        2,
        "DeleteRecord",
        json!({"key_id": 5, "topic_id": 3, "tick_time": 1}),
    );
    assert!(c.record(rid(5, 3)).is_none());
}

#[test]
fn g_34_a_batch_introduces_named_keys_with_their_classes() {
    let mut c = ready();
    for t in [20, 21, 22] {
        topic(&mut c, t, &format!("t{t}"));
    }
    c.receive(2, "BatchUpdate", json!({"default_class": "A", "keys": [
                {"key_id": 1, "name": "key1", "topics": {"20": 10}},
                {"key_id": 2, "name": "key2", "class": "B", "topics": {"21": 20}},
                {"key_id": 3, "name": "key3", "classes": ["A", "B", "C"], "topics": {"20": 30, "21": 31, "22": 32}}
            ]}));
    assert!(c.is_running());
    let classes = |c: &Client, k| {
        c.server_key(k)
            .unwrap()
            .1
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(c.server_key(1).unwrap().0, "key1");
    assert_eq!(classes(&c, 1), ["A"]);
    assert_eq!(classes(&c, 2), ["B"]);
    assert_eq!(classes(&c, 3), ["A", "B", "C"]);
    assert_eq!(c.record(rid(3, 22)).unwrap().value, Some(json!(32)));
    assert_eq!(c.record(rid(2, 21)).unwrap().value, Some(json!(20)));
}

#[test]
fn g_34_a_batch_for_known_keys_omits_names_and_carries_tick_times() {
    let mut c = with_record();
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 5, "topics": {"3": 11}, "tick_times": {"3": 500}}]}),
    );
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!((r.value.clone(), r.tick_time), (Some(json!(11)), 500));
    assert_eq!(c.server_key(5).unwrap().0, "k1");
}

#[test]
fn g_34_a_batch_record_under_an_unknown_key_is_fatal() {
    let mut c = ready();
    topic(&mut c, 3, "t");
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 8, "topics": {"3": 1}}]}),
    );
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
}

#[test]
fn g_36_teardown_is_per_class_then_key_id_retired() {
    let mut c = ready();
    key(&mut c, 5, "k", &["A", "B"]);
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "A", "class_list": ["B"]}),
    );
    assert_eq!(c.server_key(5).unwrap().1.iter().collect::<Vec<_>>(), ["B"]);
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "B", "class_list": []}),
    );
    assert!(c.server_key(5).unwrap().1.is_empty());
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    assert!(c.server_key(5).is_none());
}

#[test]
fn g_37_a_downgrade_keeps_the_bases_and_their_records() {
    let mut c = ready();
    topic(&mut c, 3, "t");
    key(&mut c, 5, "k", &["Base", "Derived"]);
    update(&mut c, 5, 3, json!(1));
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "Derived", "class_list": ["Base"]}),
    );
    assert_eq!(
        c.server_key(5).unwrap().1.iter().collect::<Vec<_>>(),
        ["Base"]
    );
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(1)));
}

#[test]
fn g_37_a_downgrades_remaining_classes_count_in_the_id_name_bytes() {
    let mut c = name_bytes_bound(6);
    key(&mut c, 5, "kk", &["AB"]);
    events(&mut c);
    // The remaining list is the key's class set: it is held, so it is bounded as an
    // additive update is. Two bytes more fit exactly; one more does not.
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "AB", "class_list": ["CD", "EF"]}),
    );
    assert!(c.is_running());
    assert_eq!(c.stats().id_name_bytes_held, 6);
    c.receive(
        3,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "CD", "class_list": ["EF", "GHI"]}),
    );
    id_map_full(&mut c, "key", 5, "max_id_name_bytes", 6);
    assert_eq!(c.stats().id_name_bytes_held, 6);
}

#[test]
fn g_39_subscribe_leaves_null_members_out() {
    let s = Subscribe {
        name: "S1".into(),
        class_list: vec!["Underlier".into()],
        ..Subscribe::default()
    };
    let m: Value = serde_json::from_str(&codec::write::subscribe(&s)).unwrap();
    assert_eq!(
        m,
        json!({"message_type": "Subscribe", "value": {
            "subscription_mode": "Snapshot", "nagle_interval": 0, "name": "S1",
            "key_id": 0, "topic_id": 0, "class_list": ["Underlier"]}})
    );
}

#[test]
fn g_39_subscribe_carries_mode_and_filters() {
    let s = Subscribe {
        name: "S2".into(),
        streaming: true,
        key_filter: Some("^a".into()),
        exclude_topic_filter: Some("x".into()),
        ..Subscribe::default()
    };
    let m: Value = serde_json::from_str(&codec::write::subscribe(&s)).unwrap();
    assert_eq!(m["value"]["subscription_mode"], "Streaming");
    assert_eq!(m["value"]["key_filter"], "^a");
    assert_eq!(m["value"]["exclude_topic_filter"], "x");
    assert!(m["value"].get("topic_filter").is_none());
}

fn status(c: &mut Client, name: &str, s: &str) {
    c.receive(2, "SubscriptionStatus", json!({"name": name, "status": s}));
}

fn sub(streaming: bool) -> Subscribe {
    Subscribe {
        name: "S".into(),
        streaming,
        class_list: vec!["A".into()],
        ..Subscribe::default()
    }
}

#[test]
fn g_40_status_runs_processing_then_streaming() {
    let mut c = ready();
    c.subscribe(&sub(true)).unwrap();
    status(&mut c, "S", "ProcessingSnapshot");
    status(&mut c, "S", "Streaming");
    let st: Vec<Status> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            Event::Status { status, .. } => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(st, [Status::ProcessingSnapshot, Status::Streaming]);
}

#[test]
fn g_40_needs_continue_is_answered_with_subscribe_continue() {
    let mut c = ready();
    c.subscribe(&sub(false)).unwrap();
    sent(&mut c);
    status(&mut c, "S", "ProcessingSnapshot");
    status(&mut c, "S", "NeedsContinue");
    assert_eq!(
        sent(&mut c),
        vec![json!({"message_type": "SubscribeContinue", "value": {"name": "S"}})]
    );
    status(&mut c, "S", "Finished");
    assert!(events(&mut c).contains(&Event::Status {
        name: "S".into(),
        status: Status::Finished
    }));
}

#[test]
fn g_41_finished_without_processing_snapshot_is_a_refusal() {
    let mut c = ready();
    c.subscribe(&sub(true)).unwrap();
    c.receive(
        2,
        "Error",
        json!({"message": "bad subscription S", "recoverable": true}),
    );
    status(&mut c, "S", "Finished");
    let ev = events(&mut c);
    assert!(matches!(&ev[0], Event::Error(e) if e.recoverable));
    assert_eq!(ev[1], Event::Refused { name: "S".into() });
    assert!(c.is_running());
    // The name is free again.
    c.subscribe(&sub(true)).unwrap();
}

#[test]
fn g_41_a_refusal_is_judged_per_subscription() {
    let mut c = ready();
    let named = |name: &str| Subscribe {
        name: name.into(),
        ..sub(false)
    };
    c.subscribe(&named("S")).unwrap();
    c.subscribe(&named("T")).unwrap();
    events(&mut c);
    // S has begun its snapshot; T has not: T's Finished is a refusal, S's is an end.
    status(&mut c, "S", "ProcessingSnapshot");
    c.receive(
        2,
        "Error",
        json!({"message": "subscription T: unknown class A", "recoverable": true}),
    );
    status(&mut c, "T", "Finished");
    status(&mut c, "S", "Finished");
    let ev = events(&mut c);
    assert!(
        matches!(&ev[0], Event::Status { name, status: Status::ProcessingSnapshot } if name == "S")
    );
    assert!(matches!(&ev[1], Event::Error(e) if e.recoverable && e.message.contains('T')));
    assert_eq!(ev[2], Event::Refused { name: "T".into() });
    assert!(matches!(&ev[3], Event::Status { name, status: Status::Finished } if name == "S"));
    assert_eq!(ev.len(), 4, "{ev:?}");
    assert!(c.is_running());
    // Both names are free again.
    c.subscribe(&named("S")).unwrap();
    c.subscribe(&named("T")).unwrap();
}

#[test]
fn g_42_a_snapshot_subscription_is_not_unsubscribed_before_finished() {
    let mut c = ready();
    c.subscribe(&sub(false)).unwrap();
    sent(&mut c);
    status(&mut c, "S", "ProcessingSnapshot");
    assert_eq!(c.unsubscribe("S"), Err(CallError::NotFinished("S".into())));
    assert!(sent(&mut c).is_empty());
}

#[test]
fn g_43_streaming_is_signalled_to_the_application() {
    let mut c = ready();
    c.subscribe(&sub(true)).unwrap();
    status(&mut c, "S", "ProcessingSnapshot");
    events(&mut c);
    status(&mut c, "S", "Streaming");
    assert_eq!(
        events(&mut c),
        vec![Event::Status {
            name: "S".into(),
            status: Status::Streaming
        }]
    );
}

#[test]
fn g_46_flags_pass_through_unchanged() {
    let s = Subscribe {
        include_tick_time: Some(true),
        include_diagnostics: Some(false),
        assume_cached_subscriptions_cover: Some(true),
        ..sub(true)
    };
    let m: Value = serde_json::from_str(&codec::write::subscribe(&s)).unwrap();
    assert_eq!(m["value"]["include_tick_time"], true);
    assert_eq!(m["value"]["include_diagnostics"], false);
    assert_eq!(m["value"]["assume_cached_subscriptions_cover"], true);
}

#[test]
fn g_47_unsubscribe_and_set_nagle_interval() {
    let mut c = ready();
    c.subscribe(&sub(true)).unwrap();
    sent(&mut c);
    c.unsubscribe("S").unwrap();
    c.set_nagle_interval("S", 50).unwrap();
    assert_eq!(
        sent(&mut c),
        vec![
            json!({"message_type": "Unsubscribe", "value": {"name": "S"}}),
            json!({"message_type": "SetNagleInterval", "value": {"name": "S", "nagle_interval": 50}}),
        ]
    );
}

#[test]
fn g_48_an_echo_response_carries_the_request_msg_ref() {
    let mut c = ready();
    let a = c.echo().unwrap();
    let b = c.echo().unwrap();
    assert!(b > a);
    c.receive(2, "EchoResponse", json!({"msg_ref": b}));
    assert_eq!(events(&mut c), vec![Event::Echo { msg_ref: b }]);
}

#[test]
fn g_48_a_server_echo_request_is_answered() {
    let mut c = ready();
    c.receive(2, "EchoRequest", json!({"msg_ref": 9}));
    assert_eq!(
        sent(&mut c),
        vec![json!({"message_type": "EchoResponse", "value": {"msg_ref": 9}})]
    );
}

#[test]
fn g_49_compare_exchange_carries_an_inline_monotonic_msg_ref() {
    let mut c = ready();
    let t = c.introduce_topic("t").unwrap();
    let k = c.introduce_key("k", "A").unwrap();
    sent(&mut c);
    let a = c.compare_exchange(rid(k, t), &json!(1), &json!(2)).unwrap();
    let e = c.echo().unwrap();
    let b = c.compare_exchange(rid(k, t), &json!(2), &json!(3)).unwrap();
    assert!(a < e && e < b);
    let all = sent(&mut c);
    assert_eq!(
        all[0],
        json!({"message_type": "JSONCompareExchange", "value": {
            "record_id": {"key_id": k, "topic_id": t}, "msg_ref": a, "test": 1, "value": 2}})
    );
}

#[test]
fn g_49_the_result_is_correlated_and_complete() {
    let mut c = ready();
    let id = own_record(&mut c);
    let r = c.compare_exchange(id, &json!(1), &json!(2)).unwrap();
    c.receive(
        2,
        "JSONCompareExchangeResult",
        json!({"msg_ref": r, "success": false, "value": 7, "reason": "CompareMismatch"}),
    );
    match &events(&mut c)[0] {
        Event::Compare(res) => {
            assert_eq!((res.msg_ref, res.success), (r, false));
            assert_eq!(res.value, Some(json!(7)));
            assert_eq!(res.reason.as_deref(), Some("CompareMismatch"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn g_50_null_test_and_null_value_are_sent_as_null() {
    let text = codec::write::compare_exchange(rid(1, 1), 1, &Value::Null, &Value::Null);
    let m: Value = serde_json::from_str(&text).unwrap();
    assert!(m["value"]["test"].is_null() && m["value"].get("test").is_some());
    assert!(m["value"]["value"].is_null() && m["value"].get("value").is_some());
}

#[test]
fn g_55_a_recoverable_error_continues() {
    let mut c = ready();
    c.receive(2, "Error", json!({"message": "x", "recoverable": true}));
    assert!(c.is_running());
}

#[test]
fn g_55_a_non_recoverable_error_stops_with_exit_code_1() {
    let mut c = ready();
    c.receive(2, "Error", json!({"message": "x", "recoverable": false}));
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
    assert_eq!(StopReason::Error.exit_code(), 1);
}

#[test]
fn g_55_an_error_without_its_recoverable_flag_stops_as_the_reference_client_does() {
    let mut c = ready();
    c.receive(2, "Error", json!({"message": "no flag"}));
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
    match &events(&mut c)[..] {
        [Event::Error(e), Event::Stopped { .. }] => {
            assert_eq!((e.message.as_str(), e.recoverable), ("no flag", false));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn g_57_the_whole_error_reaches_the_application() {
    let mut c = ready();
    let fw = json!([{"reason": {"record_write": "UnknownTopic"}, "malformed": true}]);
    c.receive(
        2,
        "Error",
        json!({"message": "m", "recoverable": true, "failed_writes": fw, "msg_ref": 3}),
    );
    match &events(&mut c)[0] {
        Event::Error(e) => {
            assert_eq!(
                (e.message.as_str(), e.recoverable, e.msg_ref),
                ("m", true, 3)
            );
            assert_eq!(Value::Array(e.failed_writes.clone()), fw);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn g_58_logoff_is_sent_and_the_session_stops() {
    let mut c = ready();
    c.logoff();
    assert_eq!(sent(&mut c), vec![json!({"message_type": "Logoff"})]);
    assert_eq!(c.stop_reason(), Some(StopReason::Stop));
    assert!(!c.server_logoff());
}

#[test]
fn g_61_a_server_logoff_stops_and_sets_the_flag() {
    let mut c = ready();
    c.handle_text(2, r#"{"message_type":"Logoff"}"#);
    assert_eq!(c.stop_reason(), Some(StopReason::ServerLogoff));
    assert!(c.server_logoff());
}

#[test]
fn g_62_a_close_stops_with_disconnect_and_nothing_reconnects() {
    let mut c = ready();
    c.handle_close(None);
    assert_eq!(c.stop_reason(), Some(StopReason::Disconnect));
    assert_eq!(c.poll_timeout(), None);
    c.handle_timeout(1_000_000);
    assert!(c.poll_transmit().is_none());
    assert_eq!(c.echo(), Err(CallError::NotRunning));
}

#[test]
fn g_62_exit_codes_follow_the_stop_reason() {
    let codes: Vec<i32> = [
        StopReason::Stop,
        StopReason::ServerLogoff,
        StopReason::Disconnect,
        StopReason::HeartbeatTimeout,
        StopReason::Error,
        StopReason::UpstreamLost,
    ]
    .iter()
    .map(|r| r.exit_code())
    .collect();
    assert_eq!(codes, [0, 0, 0, 1, 1, 1]);
}

#[test]
fn g_63_stopped_fires_exactly_once() {
    let mut c = ready();
    c.receive(2, "Error", json!({"message": "x", "recoverable": false}));
    c.handle_text(3, r#"{"message_type":"Logoff"}"#);
    c.handle_close(Some(1006));
    c.handle_timeout(1_000_000);
    c.logoff();
    assert_eq!(stopped_with(&mut c), vec![(StopReason::Error, None)]);
}

#[test]
fn g_64_start_again_begins_from_a_fresh_state() {
    let mut c = with_record();
    c.introduce_topic("t").unwrap();
    c.subscribe(&sub(true)).unwrap();
    c.echo().unwrap();
    c.handle_close(None);
    c.start(50, (1, 1));
    let first = sent(&mut c);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["message_type"], "Introduction");
    assert!(events(&mut c).is_empty());
    assert!(c.record(rid(5, 3)).is_none());
    assert!(c.server_key(5).is_none() && c.server_topic(3).is_none());
    assert_eq!(c.introduce_topic("other").unwrap(), 1);
    assert_eq!(c.echo().unwrap(), 1);
    c.subscribe(&sub(true)).unwrap();
    assert_eq!(c.stop_reason(), None);
    assert_eq!(c.poll_timeout(), Some(50 + IV / 2));
}

#[test]
fn g_64_start_again_clears_client_ids_pending_replies_and_the_stop_and_keeps_the_config() {
    let mut c = with_record();
    let own = own_record(&mut c);
    let k2 = c.introduce_key("k2", "A").unwrap();
    let echo = c.echo().unwrap();
    let compare = c
        .compare_exchange(rid(k2, own.topic_id), &Value::Null, &json!(1))
        .unwrap();
    c.handle_text(2, r#"{"message_type":"Logoff"}"#);
    assert!(c.server_logoff());
    c.start(50, (3, 4));
    assert_eq!(c.stop_reason(), None);
    assert!(
        !c.server_logoff(),
        "the old session's logoff flag is cleared"
    );
    // The configuration (who this client is) is kept; the uuid is the new one.
    let intro = sent(&mut c);
    assert_eq!(intro.len(), 1);
    let v = &intro[0]["value"];
    assert_eq!(
        (
            &v["user"],
            &v["application"],
            &v["pid"],
            &v["working_namespace"]
        ),
        (&json!("alice"), &json!("app"), &json!(42), &json!("ns"))
    );
    assert_eq!(v["uuid"], json!({"low": 3, "high": 4}));
    c.handle_text(51, &server_intro(JSON_VERSION, IV));
    sent(&mut c);
    events(&mut c);
    // The client-assigned key map begins again: the old key 2 names nothing now.
    assert_eq!(c.introduce_key("fresh", "A").unwrap(), 1);
    assert_eq!(
        c.compare_exchange(rid(k2, own.topic_id), &Value::Null, &json!(1)),
        Err(CallError::UnknownId(k2))
    );
    // Replies to the old session's echo and compare are not answers on this one.
    let before = c.counters().unsolicited_replies;
    c.receive(52, "EchoResponse", json!({"msg_ref": echo}));
    c.receive(
        52,
        "JSONCompareExchangeResult",
        json!({"msg_ref": compare, "success": true}),
    );
    assert!(events(&mut c).is_empty());
    assert_eq!(c.counters().unsolicited_replies, before + 2);
    assert!(c.is_running());
}

#[test]
fn bounds_an_oversized_message_is_a_violation() {
    let mut c = started(config_with(Limits {
        max_message_bytes: 64,
        ..Limits::default()
    }));
    c.receive(
        1,
        "Error",
        json!({"message": "x".repeat(100), "recoverable": true}),
    );
    assert!(matches!(
        stopped_with(&mut c).as_slice(),
        [(StopReason::Error, Some(Violation::TooLarge { .. }))]
    ));
}

#[test]
fn bounds_a_full_event_queue_counts_its_drops_but_keeps_the_stop() {
    let mut c = introduced(
        config_with(Limits {
            max_event_count: 2,
            ..Limits::default()
        }),
        IV,
    );
    for _ in 1..=4 {
        c.receive(2, "Error", json!({"message": "m", "recoverable": true}));
    }
    assert_eq!(c.counters().events_dropped, 3);
    c.handle_close(None);
    let ev = events(&mut c);
    assert_eq!(ev.len(), 3);
    assert!(matches!(ev[2], Event::Stopped { .. }));
}

#[test]
fn bounds_a_full_transmit_queue_is_a_typed_error() {
    let mut c = started(config_with(Limits {
        max_transmit_count: 2,
        ..Limits::default()
    }));
    c.echo().unwrap();
    assert_eq!(c.echo(), Err(CallError::QueueFull));
    let _ = c.poll_transmit();
    c.echo().unwrap();
}

#[test]
fn bounds_the_transmit_byte_bound_is_a_typed_error() {
    let mut c = started(config_with(Limits {
        max_transmit_bytes: 400,
        ..Limits::default()
    }));
    let intro = c.poll_transmit().unwrap();
    assert!(intro.len() < 400);
    let mut n = 0;
    while c.echo().is_ok() {
        n += 1;
    }
    assert!(n > 0 && n < 400 / 40 + 1);
    assert_eq!(c.echo(), Err(CallError::QueueFull));
}

#[test]
fn bounds_the_record_cache_counts_what_it_drops() {
    let mut c = introduced(
        config_with(Limits {
            max_records: 1,
            ..Limits::default()
        }),
        IV,
    );
    topic(&mut c, 3, "t");
    key(&mut c, 5, "k", &["A"]);
    key(&mut c, 6, "j", &["A"]);
    update(&mut c, 5, 3, json!(1));
    update(&mut c, 6, 3, json!(2));
    update(&mut c, 5, 3, json!(3));
    assert_eq!(c.counters().records_dropped, 1);
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(3)));
    assert!(c.record(rid(6, 3)).is_none());
}

#[test]
fn bounds_the_batch_key_count() {
    let limits = Limits {
        max_batch_keys: 1,
        ..Limits::default()
    };
    let text = msg(
        "BatchUpdate",
        json!({"keys": [{"key_id": 1}, {"key_id": 2}]}),
    );
    assert_eq!(
        codec::decode(&text, &limits),
        Err(Violation::BatchTooLarge(2))
    );
}

#[test]
fn an_unknown_message_type_is_skipped_and_counted() {
    let mut c = ready();
    c.receive(2, "SomethingNew", json!({"a": 1}));
    assert!(c.is_running());
    assert_eq!(c.counters().unknown_messages, 1);
}

#[test]
fn g_45_upstream_lost_without_a_handler_stops_the_session() {
    let mut c = ready();
    c.subscribe(&sub(true)).unwrap();
    status(&mut c, "S", "ProcessingSnapshot");
    status(&mut c, "S", "UpstreamLost");
    assert_eq!(c.stop_reason(), Some(StopReason::UpstreamLost));
    assert_eq!(StopReason::UpstreamLost.exit_code(), 1);
}

#[test]
fn g_45_upstream_lost_with_a_handler_is_an_event() {
    let mut c = introduced(
        Config {
            handles_upstream_lost: true,
            ..config()
        },
        IV,
    );
    c.subscribe(&sub(true)).unwrap();
    status(&mut c, "S", "UpstreamLost");
    assert!(c.is_running());
    assert!(events(&mut c).contains(&Event::Status {
        name: "S".into(),
        status: Status::UpstreamLost
    }));
}

#[test]
fn g_52_active_ownership_carries_every_field_and_precedes_the_writes() {
    use gar_client::codec::write::{Ownership, OwnershipAction};
    let mut c = ready();
    let id = own_record(&mut c);
    sent(&mut c);
    c.active_ownership(&Ownership {
        msg_ref: 3,
        ownership_action: OwnershipAction::Acquire,
        skip_ownership_checks: true,
        require_existing: true,
        client_key_id: 9,
        client_key_name: Some("app alice u".into()),
    })
    .unwrap();
    c.publish(id, &json!(1), 0).unwrap();
    let all = sent(&mut c);
    assert_eq!(
        all[0],
        json!({"message_type": "ActiveOwnership", "value": {
            "msg_ref": 3, "ownership_action": "Acquire", "skip_ownership_checks": true,
            "require_existing": true, "client_key_id": 9, "client_key_name": "app alice u"}})
    );
    assert_eq!(all[1]["message_type"], "JSONRecordUpdate");
}

#[test]
fn g_52_the_default_marker_omits_the_client_key_name() {
    let text = codec::write::active_ownership(&Default::default());
    let m: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        m["value"],
        json!({"msg_ref": 0, "ownership_action": "None", "skip_ownership_checks": false,
               "require_existing": false, "client_key_id": 0})
    );
}

#[test]
fn g_62_connect_failures_have_their_own_stop_reasons() {
    let mut c = started(config());
    c.handle_connect_failed(false);
    assert_eq!(c.stop_reason(), Some(StopReason::ConnectFailed));
    c.start(0, (1, 2));
    c.handle_connect_failed(true);
    assert_eq!(c.stop_reason(), Some(StopReason::Unauthorized));
    assert_eq!(StopReason::Unauthorized.exit_code(), 0);
}

#[test]
fn g_14_the_grace_uses_the_larger_advertised_interval() {
    let mut c = introduced(config(), 6000);
    times_out_at(&mut c, 60_000);
}

#[test]
fn g_14_after_the_first_beat_the_grace_is_over() {
    let mut c = ready();
    alive(&mut c, 10);
    c.handle_timeout(IV + 10);
    assert_eq!(c.stop_reason(), Some(StopReason::HeartbeatTimeout));
}

#[test]
fn g_44_active_subscription_tags_the_messages_that_follow() {
    let mut c = with_key("k");
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    update(&mut c, 5, 3, json!(1));
    let ev = events(&mut c);
    assert_eq!(
        ev[0],
        Event::Group {
            subscription_group: 7
        }
    );
    assert!(matches!(ev[1], Event::Record { .. }));
}

#[test]
fn g_44_key_lifecycle_reaches_the_global_observer() {
    let mut c = ready();
    key(&mut c, 5, "k", &["Base", "Derived"]);
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "Derived", "class_list": ["Base"]}),
    );
    assert!(events(&mut c).contains(&Event::ClassDeleted {
        key_id: 5,
        deleted_class: "Derived".into(),
        remaining: vec!["Base".into()],
    }));
}

#[test]
fn g_51_a_plain_compare_sends_no_ownership_marker() {
    let mut c = ready();
    let id = own_record(&mut c);
    sent(&mut c);
    c.compare_exchange(id, &Value::Null, &json!(1)).unwrap();
    c.compare_exchange_owned(&Default::default(), id, &Value::Null, &json!(1))
        .unwrap();
    let all = sent(&mut c);
    assert_eq!(all.len(), 2);
    assert!(all
        .iter()
        .all(|m| m["message_type"] == "JSONCompareExchange"));
}

#[test]
fn g_51_a_marker_with_only_an_error_route_or_require_existing_conveys_no_ownership() {
    use gar_client::codec::write::Ownership;
    let mut c = ready();
    let id = own_record(&mut c);
    sent(&mut c);
    // msg_ref and require_existing are set, but no action, no skipped checks, no owner key:
    // the compare carries its own msg_ref, so it goes alone.
    let o = Ownership {
        msg_ref: 9,
        require_existing: true,
        ..Ownership::default()
    };
    let r = c
        .compare_exchange_owned(&o, id, &Value::Null, &json!(1))
        .unwrap();
    let all = sent(&mut c);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["message_type"], "JSONCompareExchange");
    assert_eq!(all[0]["value"]["msg_ref"], json!(r));
}

#[test]
fn g_51_a_marker_that_conveys_ownership_precedes_the_compare() {
    use gar_client::codec::write::Ownership;
    let mut c = ready();
    let id = own_record(&mut c);
    sent(&mut c);
    for o in [
        acquiring(),
        Ownership {
            skip_ownership_checks: true,
            ..Ownership::default()
        },
        Ownership {
            client_key_id: 4,
            ..Ownership::default()
        },
    ] {
        c.compare_exchange_owned(&o, id, &Value::Null, &json!(1))
            .unwrap();
        let all = sent(&mut c);
        assert_eq!(all.len(), 2, "{o:?}");
        assert_eq!(all[0]["message_type"], "ActiveOwnership");
        assert_eq!(all[1]["message_type"], "JSONCompareExchange");
    }
}

#[test]
fn g_6_calls_before_start_are_refused() {
    let mut c = Client::new(config());
    assert_eq!(c.introduce_topic("t"), Err(CallError::NotRunning));
    assert_eq!(c.echo(), Err(CallError::NotRunning));
    assert!(c.poll_transmit().is_none());
}

#[test]
fn g_10_a_received_introduction_keeps_the_client_id_space() {
    let mut c = ready();
    let t = c.introduce_topic("t").unwrap();
    let k = c.introduce_key("k", "A").unwrap();
    c.handle_text(2, &server_intro(JSON_VERSION, IV));
    c.publish(rid(k, t), &json!(1), 0).unwrap();
    assert_eq!(c.introduce_topic("t").unwrap(), t);
}

#[test]
fn g_28_readers_accept_the_bare_infinity_words() {
    let limits = Limits::default();
    let text = r#"{"message_type":"JSONRecordUpdate","value":{"record_id":{"key_id":5,"topic_id":3},"value":[Infinity,-INFINITY,"infinity \" -Infinity"]}}"#;
    match codec::decode(text, &limits).unwrap() {
        Inbound::RecordUpdate { value, .. } => {
            assert_eq!(value_as_f64(&value[0]), Some(f64::INFINITY));
            assert_eq!(value_as_f64(&value[1]), Some(f64::NEG_INFINITY));
            assert_eq!(value[2], json!("infinity \" -Infinity"));
        }
        other => panic!("{other:?}"),
    }
    assert!(codec::decode(r#"{"message_type":"X","value":{"a":infinityx}}"#, &limits).is_err());
}

// ---- client-side key teardown: delete a class, delete a key (G-36, G-37, G-38) ----

#[test]
fn g_36_the_client_tears_down_one_class_naming_the_key_and_the_class() {
    let mut c = ready();
    let id = c.introduce_key("AAPL", "Underlier").unwrap();
    assert_eq!(c.introduce_key("AAPL", "Option").unwrap(), id);
    sent(&mut c);
    c.delete_class("AAPL", "Option").unwrap();
    let out = sent(&mut c);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["message_type"], "KeyUpdate");
    assert_eq!(
        out[0]["value"],
        json!({"key_id": id, "name": "AAPL", "deleted_class": "Option"})
    );
    // The last class: the key keeps its id.
    c.delete_class("AAPL", "Underlier").unwrap();
    let out = sent(&mut c);
    assert_eq!(
        out[0]["value"],
        json!({"key_id": id, "name": "AAPL", "deleted_class": "Underlier"})
    );
}

#[test]
fn g_36_a_class_not_introduced_is_refused_before_sending() {
    let mut c = ready();
    c.introduce_key("AAPL", "Underlier").unwrap();
    sent(&mut c);
    assert_eq!(
        c.delete_class("AAPL", "Option"),
        Err(CallError::UnknownKey("AAPL".into()))
    );
    assert_eq!(
        c.delete_class("MSFT", "Underlier"),
        Err(CallError::UnknownKey("MSFT".into()))
    );
    // A class already torn down is not torn down twice.
    c.delete_class("AAPL", "Underlier").unwrap();
    sent(&mut c);
    assert_eq!(
        c.delete_class("AAPL", "Underlier"),
        Err(CallError::UnknownKey("AAPL".into()))
    );
    assert!(sent(&mut c).is_empty());
}

#[test]
fn g_38_delete_key_sends_delete_key_command_under_the_client_id() {
    let mut c = ready();
    c.introduce_key("ZZ", "Underlier").unwrap();
    let id = c.introduce_key("AAPL", "Underlier").unwrap();
    sent(&mut c);
    c.delete_key("AAPL").unwrap();
    assert_eq!(
        sent(&mut c),
        vec![json!({"message_type": "DeleteKeyCommand", "value": {"key_id": id}})]
    );
    assert_eq!(
        c.delete_key("MSFT"),
        Err(CallError::UnknownKey("MSFT".into()))
    );
    assert!(sent(&mut c).is_empty());
}

#[test]
fn g_38_a_delete_key_command_from_the_server_is_not_acted_on() {
    let mut c = ready();
    key(&mut c, 3, "AAPL", &["Underlier"]);
    events(&mut c);
    c.receive(5, "DeleteKeyCommand", json!({"key_id": 3}));
    assert!(c.is_running());
    assert!(
        c.server_key(3).is_some(),
        "only teardown messages drop a key"
    );
}

#[test]
fn g_39_subscribe_carries_the_snapshot_size_limit_only_when_set() {
    let mut c = ready();
    c.subscribe(&Subscribe {
        name: "a".into(),
        class_list: vec!["U".into()],
        snapshot_size_limit: Some(25),
        ..Subscribe::default()
    })
    .unwrap();
    c.subscribe(&Subscribe {
        name: "b".into(),
        class_list: vec!["U".into()],
        ..Subscribe::default()
    })
    .unwrap();
    let out = sent(&mut c);
    assert_eq!(out[0]["value"]["snapshot_size_limit"], 25);
    assert!(out[1]["value"].get("snapshot_size_limit").is_none());
}

#[test]
fn g_35_the_client_asks_only_for_the_key_major_density_it_reads() {
    let mut c = ready();
    for d in ["TopicMajor", "RecordMajor", "keymajor"] {
        assert_eq!(
            c.subscribe(&Subscribe {
                name: d.into(),
                density: Some(d.into()),
                ..Subscribe::default()
            }),
            Err(CallError::UnsupportedDensity(d.into()))
        );
    }
    assert!(
        sent(&mut c).is_empty(),
        "a refused shape is never asked for"
    );
    c.subscribe(&Subscribe {
        name: "km".into(),
        density: Some("KeyMajor".into()),
        ..Subscribe::default()
    })
    .unwrap();
    c.subscribe(&Subscribe {
        name: "default".into(),
        ..Subscribe::default()
    })
    .unwrap();
    let out = sent(&mut c);
    assert_eq!(out[0]["value"]["density"], "KeyMajor");
    assert!(
        out[1]["value"].get("density").is_none(),
        "left out: KeyMajor"
    );
}

#[test]
fn g_35_a_key_major_batch_is_read_into_records() {
    let mut c = ready();
    c.subscribe(&Subscribe {
        name: "s".into(),
        class_list: vec!["U".into()],
        ..Subscribe::default()
    })
    .unwrap();
    topic(&mut c, 4, "bid");
    c.receive(
        2,
        "BatchUpdate",
        json!({"default_class": "U", "keys": [
            {"key_id": 9, "name": "AAPL", "topics": {"4": 1.5}},
            {"key_id": 10, "name": "MSFT", "topics": {"4": 2}}
        ]}),
    );
    assert!(c.is_running());
    assert_eq!(
        c.record(rid(9, 4)).and_then(|r| r.value.clone()),
        Some(json!(1.5))
    );
    assert_eq!(
        c.record(rid(10, 4)).and_then(|r| r.value.clone()),
        Some(json!(2))
    );
}

#[test]
fn g_15_an_absurd_server_interval_stops_with_a_violation() {
    let mut c = started(config());
    c.handle_text(6, &server_intro(JSON_VERSION, u64::MAX));
    c.receive(7, "Heartbeat", json!({"u_milliseconds": 1}));
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
    assert_eq!(
        events(&mut c).last(),
        Some(&Event::Stopped {
            reason: StopReason::Error,
            violation: Some(Violation::HeartbeatInterval(u64::MAX)),
        })
    );
    // The bound itself is allowed; one above it is not.
    let max = Limits::default().max_server_heartbeat_interval;
    assert!(introduced(config(), max).is_running());
    let c = introduced(config(), max + 1);
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
}

#[test]
fn g_15_timers_saturate_at_the_end_of_the_clock() {
    let mut c = Client::new(Config {
        heartbeat_timeout_interval: u64::MAX,
        any_message_is_alive: true,
        ..config()
    });
    c.start(u64::MAX - 10, (1, 2));
    assert_eq!(c.poll_timeout(), Some(u64::MAX));
    c.handle_text(u64::MAX - 5, &server_intro(JSON_VERSION, IV));
    c.receive(u64::MAX - 4, "Heartbeat", json!({"u_milliseconds": 1}));
    times_out_at(&mut c, u64::MAX);
}

#[test]
fn g_14_any_message_does_not_cut_the_first_beat_grace_short() {
    let mut c = introduced(
        Config {
            heartbeat_timeout_interval: 400,
            any_message_is_alive: true,
            ..config()
        },
        400,
    );
    topic(&mut c, 3, "t");
    topic_at(&mut c, 100, 4, "u");
    times_out_at(&mut c, 4000);
}

#[test]
fn g_16_a_late_message_in_the_grace_extends_it() {
    let mut c = introduced(
        Config {
            heartbeat_timeout_interval: 400,
            any_message_is_alive: true,
            ..config()
        },
        400,
    );
    topic_at(&mut c, 3900, 4, "u");
    times_out_at(&mut c, 4300);
}

/// A ready client whose application share of the outbound queue (two messages) is full.
fn crowded(reserve: usize) -> Client {
    let mut c = introduced(
        config_with(Limits {
            max_transmit_count: 2,
            reserved_reply_count: reserve,
            ..Limits::default()
        }),
        IV,
    );
    sent(&mut c);
    events(&mut c);
    c.subscribe(&sub(false)).unwrap();
    c.echo().unwrap();
    assert_eq!(c.echo(), Err(CallError::QueueFull));
    c
}

fn types(v: &[Value]) -> Vec<&str> {
    v.iter()
        .map(|m| m["message_type"].as_str().unwrap())
        .collect()
}

#[test]
fn g_40_needs_continue_is_answered_when_the_application_filled_the_queue() {
    let mut c = crowded(4);
    status(&mut c, "S", "ProcessingSnapshot");
    status(&mut c, "S", "NeedsContinue");
    let out = sent(&mut c);
    assert_eq!(
        types(&out),
        ["Subscribe", "EchoRequest", "SubscribeContinue"]
    );
    assert!(c.is_running());
    assert_eq!(c.stats().replies_dropped, 0);
}

#[test]
fn g_48_a_server_echo_request_is_answered_when_the_application_filled_the_queue() {
    let mut c = crowded(4);
    c.receive(2, "EchoRequest", json!({"msg_ref": 9}));
    let out = sent(&mut c);
    assert_eq!(
        out[2],
        json!({"message_type": "EchoResponse", "value": {"msg_ref": 9}})
    );
    assert!(c.is_running());
}

#[test]
fn g_12_a_heartbeat_goes_out_when_the_application_filled_the_queue() {
    let mut c = crowded(4);
    c.handle_timeout(IV / 2);
    let out = sent(&mut c);
    assert_eq!(types(&out), ["Subscribe", "EchoRequest", "Heartbeat"]);
    assert_eq!(c.stats().heartbeats_sent, 1);
}

#[test]
fn g_12_the_application_cannot_use_the_reply_reserve() {
    let mut c = crowded(4);
    c.receive(2, "EchoRequest", json!({"msg_ref": 9}));
    // Replies in the reserve leave the application's share as full as it was.
    assert_eq!(c.echo(), Err(CallError::QueueFull));
    assert_eq!(
        c.introduce_topic("t"),
        Err(CallError::QueueFull),
        "the application's share is two messages"
    );
}

#[test]
fn g_48_a_reply_that_finds_no_room_stops_the_session_counted() {
    let mut c = crowded(2);
    c.receive(2, "EchoRequest", json!({"msg_ref": 7}));
    c.receive(2, "EchoRequest", json!({"msg_ref": 8}));
    assert!(c.is_running());
    c.receive(2, "EchoRequest", json!({"msg_ref": 9}));
    assert_eq!(c.stats().replies_dropped, 1);
    assert_eq!(
        stopped_with(&mut c),
        vec![(StopReason::Error, Some(Violation::RepliesBlocked))]
    );
    // What was queued before stays in order; the reply that did not fit is not there.
    let out = sent(&mut c);
    assert_eq!(
        types(&out),
        ["Subscribe", "EchoRequest", "EchoResponse", "EchoResponse"]
    );
}

#[test]
fn g_48_the_reply_reserve_is_bounded_in_bytes_inclusively_and_a_reply_past_it_is_counted() {
    // The bytes of one EchoResponse, as this client writes it.
    let mut probe = introduced(config_with(Limits::default()), IV);
    sent(&mut probe);
    probe.receive(2, "EchoRequest", json!({"msg_ref": 7}));
    let one = probe.poll_transmit().unwrap().len();
    // No application share at all, and a reserve of exactly two replies' bytes (the count
    // bounds are far away): two fit, the third is dropped, counted, and stops the session.
    let mut c = introduced(
        config_with(Limits {
            max_transmit_bytes: 0,
            reserved_reply_bytes: 2 * one,
            ..Limits::default()
        }),
        IV,
    );
    sent(&mut c);
    events(&mut c);
    assert_eq!(c.echo(), Err(CallError::QueueFull));
    c.receive(2, "EchoRequest", json!({"msg_ref": 7}));
    c.receive(2, "EchoRequest", json!({"msg_ref": 8}));
    assert!(c.is_running());
    assert_eq!(c.stats().transmit_bytes_held, 2 * one as u64);
    assert_eq!(c.stats().replies_dropped, 0);
    c.receive(2, "EchoRequest", json!({"msg_ref": 9}));
    assert_eq!(c.stats().replies_dropped, 1);
    assert_eq!(
        stopped_with(&mut c),
        vec![(StopReason::Error, Some(Violation::RepliesBlocked))]
    );
    assert_eq!(types(&sent(&mut c)), ["EchoResponse", "EchoResponse"]);
}

#[test]
fn bounds_the_event_byte_bound_is_inclusive_and_each_drop_is_counted() {
    // The bytes one event of a record update weighs, as the engine counts them.
    let weigh = |limits: Limits| {
        let mut c = limited(limits);
        topic(&mut c, 3, "t");
        key(&mut c, 5, "k", &["A"]);
        events(&mut c);
        c
    };
    let mut probe = weigh(Limits::default());
    update(&mut probe, 5, 3, json!("abc"));
    let one = probe.stats().event_bytes_held;
    assert!(one > 0);
    for (bound, held, dropped) in [(2 * one, 2, 1), (2 * one - 1, 1, 2)] {
        let mut c = weigh(Limits {
            max_event_bytes: usize::try_from(bound).unwrap(),
            ..Limits::default()
        });
        for _ in 0..3 {
            update(&mut c, 5, 3, json!("abc"));
        }
        let s = c.stats();
        assert_eq!(
            (s.events_held, s.events_dropped),
            (held, dropped),
            "{bound}"
        );
        assert_eq!(s.event_bytes_held, held * one);
    }
    // And the count bound, with bytes to spare: the third event is dropped, counted.
    let mut c = weigh(Limits {
        max_event_count: 2,
        ..Limits::default()
    });
    for _ in 0..3 {
        update(&mut c, 5, 3, json!("abc"));
    }
    let s = c.stats();
    assert_eq!((s.events_held, s.events_dropped), (2, 1));
}

#[test]
fn bounds_the_record_cache_byte_bound_is_inclusive_and_each_drop_is_counted() {
    let mut c = limited(Limits {
        max_record_bytes: 10,
        ..Limits::default()
    });
    topic(&mut c, 3, "t");
    key(&mut c, 5, "k", &["A"]);
    key(&mut c, 6, "j", &["A"]);
    // A value of exactly ten bytes (its JSON text) fills the bound and is cached.
    update(&mut c, 5, 3, json!("12345678"));
    assert_eq!(c.stats().record_bytes_held, 10);
    assert_eq!(c.stats().records_dropped, 0);
    // One byte more anywhere is not cached: counted, and the event still goes out.
    update(&mut c, 6, 3, json!(1));
    assert!(c.record(rid(6, 3)).is_none());
    assert_eq!(c.stats().records_dropped, 1);
    let ev = events(&mut c);
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::Record { record_id, value: Some(_) } if *record_id == rid(6, 3)
    )));
    assert_eq!(
        (c.stats().records_held, c.stats().record_bytes_held),
        (1, 10)
    );
}

fn limited(limits: Limits) -> Client {
    let mut c = introduced(config_with(limits), IV);
    sent(&mut c);
    events(&mut c);
    c
}

#[test]
fn bounds_the_event_queue_is_bounded_in_bytes() {
    let mut c = limited(Limits {
        max_event_bytes: 300_000,
        ..Limits::default()
    });
    topic(&mut c, 3, "t");
    key(&mut c, 5, "k", &["A"]);
    let big = "x".repeat(100_000);
    for _ in 0..5 {
        update(&mut c, 5, 3, json!(big));
    }
    let s = c.stats();
    assert_eq!(s.events_held, 2);
    assert_eq!(s.events_dropped, 3);
    assert!(s.event_bytes_held > 200_000 && s.event_bytes_held <= 300_000);
    // The stop event is kept even past the bound; taking the events frees their bytes.
    c.handle_close(None);
    let ev = events(&mut c);
    assert_eq!(ev.len(), 3);
    assert!(matches!(ev[2], Event::Stopped { .. }));
    assert_eq!(c.stats().event_bytes_held, 0);
}

#[test]
fn g_32_a_diagnostic_counts_in_the_record_bytes() {
    let mut c = limited(Limits {
        max_record_bytes: 150_000,
        ..Limits::default()
    });
    topic(&mut c, 3, "t");
    key(&mut c, 5, "k", &["A"]);
    key(&mut c, 6, "k2", &["A"]);
    let diag = |k: u64| {
        msg(
            "RecordDiagnostic",
            json!({"record_id": {"key_id": k, "topic_id": 3},
                   "diagnostic": {"reason": "ComputeError", "missing_inputs": [], "text": "x".repeat(100_000)}}),
        )
    };
    c.handle_text(2, &diag(5));
    let held = c.stats().record_bytes_held;
    assert!(held >= 100_000, "{held}");
    // A second one does not fit the byte bound: counted, not cached.
    c.handle_text(2, &diag(6));
    assert!(c.record(rid(6, 3)).is_none());
    assert_eq!(c.stats().records_dropped, 1);
    // A value replacing the diagnostic gives its bytes back.
    update(&mut c, 5, 3, json!(1));
    assert_eq!(c.stats().record_bytes_held, 1);
}

#[test]
fn g_21_a_keys_classes_are_bounded_in_total() {
    let mut c = limited(Limits {
        max_classes_per_key: 4,
        ..Limits::default()
    });
    key(&mut c, 5, "k", &["A", "B", "C"]);
    key(&mut c, 5, "k", &["C", "D", "E", "F"]);
    assert_eq!(
        c.server_key(5).unwrap().1.iter().collect::<Vec<_>>(),
        ["A", "B", "C", "D"]
    );
    assert_eq!(c.stats().classes_dropped, 2);
    assert_eq!(c.counters().classes_dropped, 2);
    assert!(c.is_running());
}

/// A client past both introductions whose server id maps hold `n` ids.
fn ids_bound(n: usize) -> Client {
    limited(Limits {
        max_ids: n,
        ..Limits::default()
    })
}

/// A client past both introductions whose server id maps hold `n` bytes of names.
fn name_bytes_bound(n: usize) -> Client {
    limited(Limits {
        max_id_name_bytes: n,
        ..Limits::default()
    })
}

/// The one stop of a session that overflowed its id maps, and what it left mapped.
fn id_map_full(c: &mut Client, kind: &'static str, id: u64, bound: &'static str, limit: usize) {
    assert_eq!(
        stopped_with(c),
        vec![(
            StopReason::Error,
            Some(Violation::IdMapFull {
                kind,
                id,
                bound,
                limit
            })
        )]
    );
    assert!(!c.is_running());
    let s = c.stats();
    assert_eq!((s.ids_dropped, s.violations), (1, 1));
    assert_eq!(c.counters().ids_dropped, 1);
}

#[test]
fn bounds_id_map_names_are_bounded_in_bytes() {
    let mut c = name_bytes_bound(10);
    topic(&mut c, 3, "abcd");
    key(&mut c, 5, "kk", &["AB"]);
    assert_eq!(c.stats().id_name_bytes_held, 8);
    // The same topic introduced again takes no more bytes; two bytes more fit exactly.
    topic(&mut c, 3, "abcd");
    assert_eq!(c.stats().id_name_bytes_held, 8);
    topic(&mut c, 6, "ab");
    assert_eq!(c.server_topic(6), Some("ab"));
    assert_eq!(c.stats().id_name_bytes_held, 10);
    // Retiring the key gives its bytes back.
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    assert_eq!(c.stats().id_name_bytes_held, 6);
    topic(&mut c, 4, "xyzw");
    assert_eq!(c.server_topic(4), Some("xyzw"));
    assert_eq!(c.stats().id_name_bytes_held, 10);
    assert!(c.is_running());
    assert_eq!(c.stats().ids_dropped, 0);
}

#[test]
fn g_25_a_topic_past_the_id_count_bound_ends_the_session() {
    let mut c = ids_bound(2);
    topic(&mut c, 3, "a");
    key(&mut c, 5, "k", &["C"]);
    events(&mut c);
    // Full: the same topic again and the known key again still read.
    topic(&mut c, 3, "a");
    key(&mut c, 5, "k", &["D"]);
    assert!(c.is_running());
    assert_eq!(c.stats().ids_dropped, 0);
    topic(&mut c, 4, "b");
    id_map_full(&mut c, "topic", 4, "max_ids", 2);
    assert!(c.server_topic(4).is_none());
}

#[test]
fn g_25_a_key_past_the_id_count_bound_ends_the_session() {
    let mut c = ids_bound(2);
    topic(&mut c, 3, "a");
    topic(&mut c, 4, "b");
    events(&mut c);
    key(&mut c, 5, "k", &["C"]);
    id_map_full(&mut c, "key", 5, "max_ids", 2);
    assert!(c.server_key(5).is_none());
}

#[test]
fn g_25_a_batch_key_past_the_id_count_bound_ends_the_session() {
    let mut c = ids_bound(2);
    topic(&mut c, 3, "a");
    key(&mut c, 5, "k", &["C"]);
    events(&mut c);
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [
            {"key_id": 5, "topics": {"3": 1}},
            {"key_id": 6, "name": "k6", "class": "C", "topics": {"3": 2}}
        ]}),
    );
    // The known key's record was read; the key past the bound stopped the session before its
    // record could be read under an id that is not mapped.
    assert_eq!(
        c.poll_event(),
        Some(Event::Record {
            record_id: rid(5, 3),
            value: Some(json!(1))
        })
    );
    assert_eq!(c.stats().events_held, 1);
    id_map_full(&mut c, "key", 6, "max_ids", 2);
}

#[test]
fn g_25_a_topic_past_the_id_name_bytes_ends_the_session() {
    let mut c = name_bytes_bound(6);
    topic(&mut c, 3, "abcd");
    events(&mut c);
    topic(&mut c, 4, "xyz");
    id_map_full(&mut c, "topic", 4, "max_id_name_bytes", 6);
    assert!(c.server_topic(4).is_none());
    assert_eq!(c.stats().id_name_bytes_held, 4);
}

#[test]
fn g_25_a_key_past_the_id_name_bytes_ends_the_session() {
    let mut c = name_bytes_bound(6);
    topic(&mut c, 3, "abcd");
    events(&mut c);
    key(&mut c, 5, "k", &["CD"]);
    id_map_full(&mut c, "key", 5, "max_id_name_bytes", 6);
    assert!(c.server_key(5).is_none());
}

#[test]
fn g_25_a_known_keys_class_past_the_id_name_bytes_ends_the_session() {
    let mut c = name_bytes_bound(6);
    key(&mut c, 5, "kk", &["AB"]);
    events(&mut c);
    // Two bytes more fit exactly; the next class does not.
    key(&mut c, 5, "kk", &["CD"]);
    assert!(c.is_running());
    key(&mut c, 5, "kk", &["E"]);
    id_map_full(&mut c, "key", 5, "max_id_name_bytes", 6);
    assert_eq!(c.server_key(5).unwrap().1.len(), 2);
}

#[test]
fn g_63_start_on_a_running_session_stops_it_first() {
    let mut c = ready();
    topic(&mut c, 3, "t");
    c.receive(2, "Error", json!({"message": "m", "recoverable": true}));
    c.start(10, (3, 4));
    assert_eq!(
        events(&mut c),
        vec![Event::Stopped {
            reason: StopReason::Stop,
            violation: None
        }]
    );
    let s = c.stats();
    assert_eq!((s.sessions_started, s.sessions_stopped), (2, 1));
    assert!(c.is_running());
    assert_eq!(c.stop_reason(), None);
    // The new session is fresh and ends with exactly one stop of its own.
    assert!(c.server_topic(3).is_none());
    c.handle_close(None);
    assert_eq!(stopped_with(&mut c), vec![(StopReason::Disconnect, None)]);
    assert_eq!(c.stats().sessions_stopped, 2);
}

#[test]
fn g_25_a_known_key_id_under_another_name_is_fatal() {
    let mut c = ready();
    key(&mut c, 5, "a", &["A"]);
    // The same name again (a new class) is fine.
    key(&mut c, 5, "a", &["B"]);
    assert!(c.is_running());
    key(&mut c, 5, "zzz", &["A"]);
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::NameMismatch {
                id: 5,
                known: "a".into(),
                got: "zzz".into()
            })
        )]
    );
    assert_eq!(c.server_key(5).unwrap().0, "a");
}

#[test]
fn g_25_a_named_batch_key_under_another_name_is_fatal() {
    let mut c = with_key("a");
    c.receive(
        2,
        "BatchUpdate",
        json!({"default_class": "A", "keys": [{"key_id": 5, "name": "b", "topics": {"3": 1}}]}),
    );
    assert!(matches!(
        stopped_with(&mut c)[..],
        [(
            StopReason::Error,
            Some(Violation::NameMismatch { id: 5, .. })
        )]
    ));
    assert!(c.record(rid(5, 3)).is_none());
}

#[test]
fn g_25_a_retired_key_id_may_come_back_under_another_name() {
    let mut c = ready();
    key(&mut c, 5, "a", &["A"]);
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    key(&mut c, 5, "b", &["A"]);
    assert!(c.is_running());
    assert_eq!(c.server_key(5).unwrap().0, "b");
}

#[test]
fn g_12_a_heartbeat_carries_the_wall_clock_it_was_given() {
    let mut c = ready();
    c.handle_timeout_at(IV / 2, 1_745_425_692_890);
    assert_eq!(
        sent(&mut c),
        vec![
            json!({"message_type": "Heartbeat", "value": {"u_milliseconds": 1_745_425_692_890_u64}})
        ]
    );
    // The timers keep to the monotonic clock: the next beat is due half an interval later.
    assert_eq!(c.poll_timeout(), Some(IV));
}

#[test]
fn g_51_a_refused_owned_compare_queues_no_lone_marker() {
    let o = acquiring();
    // Room for one message but not two: nothing goes.
    let mut c = limited(Limits {
        max_transmit_count: 3,
        ..Limits::default()
    });
    let id = own_record(&mut c);
    assert_eq!(
        c.compare_exchange_owned(&o, id, &Value::Null, &json!(1)),
        Err(CallError::QueueFull)
    );
    assert_eq!(c.stats().transmit_held, 2);
    // Once there is room, the msg_ref the refused call would have had is used.
    sent(&mut c);
    let r = c
        .compare_exchange_owned(&o, id, &Value::Null, &json!(1))
        .unwrap();
    assert_eq!(r, 1);
    assert_eq!(
        types(&sent(&mut c)),
        ["ActiveOwnership", "JSONCompareExchange"]
    );
}

#[test]
fn g_52_a_refused_owned_compare_queues_no_lone_marker_at_the_byte_bound() {
    let o = acquiring();
    let mut c = limited(Limits {
        max_transmit_bytes: 400,
        ..Limits::default()
    });
    let id = own_record(&mut c);
    sent(&mut c);
    // The marker alone fits; the marker and a big compare do not.
    assert_eq!(
        c.compare_exchange_owned(&o, id, &Value::Null, &json!("x".repeat(300))),
        Err(CallError::QueueFull)
    );
    assert_eq!(c.stats().transmit_held, 0);
}

#[test]
fn g_32_a_diagnostic_is_an_event_and_keeps_the_stamp() {
    let mut c = with_key("k");
    c.receive(
        2,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 5, "topic_id": 3}, "value": 10, "tick_time": 777}),
    );
    events(&mut c);
    diag(&mut c);
    let ev = events(&mut c);
    assert_eq!(ev.len(), 1);
    match &ev[0] {
        Event::Diagnostic {
            record_id,
            diagnostic,
        } => {
            assert_eq!(*record_id, rid(5, 3));
            assert_eq!(diagnostic.reason, "InputMissing");
        }
        e => panic!("{e:?}"),
    }
    let r = c.record(rid(5, 3)).unwrap();
    assert_eq!((r.value.clone(), r.tick_time), (None, 777));
}

#[test]
fn g_49_a_result_without_its_msg_ref_or_success_is_a_violation() {
    for (value, member) in [
        (json!({"success": true}), "msg_ref"),
        (json!({"msg_ref": null, "success": true}), "msg_ref"),
        (json!({"msg_ref": "1", "success": true}), "msg_ref"),
        (json!({"msg_ref": 1}), "success"),
    ] {
        let mut c = ready();
        let id = own_record(&mut c);
        c.compare_exchange(id, &json!(1), &json!(2)).unwrap();
        c.receive(2, "JSONCompareExchangeResult", value.clone());
        assert_eq!(
            stopped_with(&mut c),
            vec![(
                StopReason::Error,
                Some(Violation::BadMember {
                    message_type: "JSONCompareExchangeResult",
                    member
                })
            )],
            "{value}"
        );
    }
}

#[test]
fn g_49_a_result_for_no_pending_compare_is_ignored_and_counted() {
    let mut c = ready();
    let id = own_record(&mut c);
    let result = |r: u64| {
        msg(
            "JSONCompareExchangeResult",
            json!({"msg_ref": r, "success": true}),
        )
    };
    c.handle_text(2, &result(999));
    let r = c.compare_exchange(id, &json!(1), &json!(2)).unwrap();
    c.handle_text(2, &result(r));
    // The same answer twice: the second is not a reply to anything.
    c.handle_text(2, &result(r));
    let compares: Vec<u64> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            Event::Compare(x) => Some(x.msg_ref),
            _ => None,
        })
        .collect();
    assert_eq!(compares, vec![r]);
    assert_eq!(c.stats().unsolicited_replies, 2);
    assert!(c.is_running());
}

#[test]
fn g_43_streaming_for_a_snapshot_subscription_is_ignored_and_counted() {
    let mut c = ready();
    c.subscribe(&sub(false)).unwrap();
    status(&mut c, "S", "ProcessingSnapshot");
    events(&mut c);
    status(&mut c, "S", "Streaming");
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().out_of_phase, 1);
    // Still a snapshot: it cannot be unsubscribed before Finished.
    assert_eq!(c.unsubscribe("S"), Err(CallError::NotFinished("S".into())));
    status(&mut c, "S", "Finished");
    assert_eq!(
        events(&mut c),
        vec![Event::Status {
            name: "S".into(),
            status: Status::Finished
        }]
    );
    // A streaming subscription still streams.
    c.subscribe(&Subscribe {
        name: "L".into(),
        streaming: true,
        ..Subscribe::default()
    })
    .unwrap();
    status(&mut c, "L", "ProcessingSnapshot");
    status(&mut c, "L", "Streaming");
    assert_eq!(events(&mut c).len(), 2);
    assert_eq!(c.stats().out_of_phase, 1);
}

/// How long one batch of `n` topics, each with its stamp, takes to read.
#[allow(
    clippy::disallowed_methods,
    reason = "the test measures the engine's cost; the engine itself takes no clock"
)]
fn batch_of(n: u64) {
    let mut c = limited(Limits::default());
    for t in 1..=n {
        topic(&mut c, t, "t");
    }
    key(&mut c, 5, "k", &["A"]);
    let topics: serde_json::Map<String, Value> =
        (1..=n).map(|t| (t.to_string(), json!(t))).collect();
    let ticks: serde_json::Map<String, Value> =
        (1..=n).map(|t| (t.to_string(), json!(t + 1000))).collect();
    let batch = msg(
        "BatchUpdate",
        json!({"keys": [{"key_id": 5, "topics": topics, "tick_times": ticks}]}),
    );
    c.handle_text(2, &batch);
    assert!(c.is_running());
    for t in [1, 9, 10, 777, n] {
        assert_eq!(c.record(rid(5, t)).unwrap().tick_time, t + 1000);
    }
}

#[test]
fn g_34_batch_tick_times_are_matched_per_topic_in_a_large_batch() {
    // Each stamp is matched to its own topic whatever the batch's size. (How the cost grows with
    // the topics of one key is a matter for a benchmark, not a timed test.)
    batch_of(60_000);
}

#[test]
fn g_25_a_known_topic_id_under_another_name_is_fatal() {
    let mut c = ready();
    topic(&mut c, 3, "A::x");
    events(&mut c);
    topic(&mut c, 3, "A::y");
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::TopicNameMismatch {
                id: 3,
                known: "A::x".into(),
                got: "A::y".into()
            })
        )]
    );
    // The mapping was not renamed on the way out.
    assert_eq!(c.server_topic(3), Some("A::x"));
}

#[test]
fn g_25_a_known_topic_id_under_its_own_name_again_changes_nothing() {
    let mut c = ready();
    topic(&mut c, 3, "price");
    topic(&mut c, 3, "price");
    assert!(c.is_running());
    assert_eq!(c.server_topic(3), Some("price"));
    // The name is held once, not counted twice against the name bound.
    assert_eq!(c.stats().id_name_bytes_held, 5);
}

#[test]
fn g_25_a_topic_id_may_name_another_topic_after_a_new_server_introduction() {
    let mut c = ready();
    topic(&mut c, 3, "a");
    c.handle_text(2, &server_intro(JSON_VERSION, IV));
    topic(&mut c, 3, "b");
    assert!(c.is_running());
    assert_eq!(c.server_topic(3), Some("b"));
}

#[test]
fn g_25_a_teardown_for_an_unknown_key_id_is_fatal_and_no_event() {
    let mut c = ready();
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 9, "name": "k", "deleted_class": "A", "class_list": []}),
    );
    let ev = events(&mut c);
    assert!(
        !ev.iter().any(|e| matches!(e, Event::ClassDeleted { .. })),
        "{ev:?}"
    );
    assert_eq!(
        ev,
        vec![Event::Stopped {
            reason: StopReason::Error,
            violation: Some(Violation::UnknownId { kind: "key", id: 9 })
        }]
    );
    assert!(c.server_key(9).is_none());
}

#[test]
fn g_25_a_teardown_after_key_id_retired_is_fatal() {
    let mut c = ready();
    key(&mut c, 5, "k", &["A"]);
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    events(&mut c);
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "A", "class_list": []}),
    );
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::UnknownId { kind: "key", id: 5 })
        )]
    );
}

#[test]
fn g_25_a_nameless_key_update_for_an_unknown_key_id_is_fatal() {
    let mut c = ready();
    topic(&mut c, 3, "t");
    c.receive(2, "KeyUpdate", json!({"key_id": 5, "class_list": ["A"]}));
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::UnknownId { kind: "key", id: 5 })
        )]
    );
    // No nameless key was mapped, so nothing could be read under it.
    assert!(c.server_key(5).is_none());
}

#[test]
fn g_21_a_nameless_key_update_for_a_known_key_adds_classes() {
    let mut c = ready();
    key(&mut c, 5, "k", &["A"]);
    c.receive(2, "KeyUpdate", json!({"key_id": 5, "class_list": ["B"]}));
    assert!(c.is_running());
    let (name, classes) = c.server_key(5).unwrap();
    assert_eq!(name, "k");
    assert_eq!(classes.iter().collect::<Vec<_>>(), ["A", "B"]);
}

#[test]
fn g_25_a_key_introduced_with_an_empty_name_cannot_be_renamed() {
    let mut c = ready();
    key(&mut c, 5, "", &["A"]);
    key(&mut c, 5, "k", &["A"]);
    assert!(matches!(
        stopped_with(&mut c)[..],
        [(
            StopReason::Error,
            Some(Violation::NameMismatch { id: 5, .. })
        )]
    ));
}

#[test]
fn g_24_an_invalidation_of_a_client_key_id_not_held_is_ignored_and_counted() {
    let mut c = ready();
    let k = c.introduce_key("k", "A").unwrap();
    sent(&mut c);
    let invalidate = |c: &mut Client, id: u64| {
        c.receive(
            2,
            "ClientIntroducedKeyInvalidated",
            json!({"client_introduced_key_id": id}),
        );
    };
    // Never given by this client.
    invalidate(&mut c, 77);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.counters().unknown_ids_ignored, 1);
    // Given, invalidated once (an event), then again (nothing more).
    invalidate(&mut c, k);
    assert_eq!(events(&mut c), vec![Event::KeyInvalidated { key_id: k }]);
    invalidate(&mut c, k);
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().unknown_ids_ignored, 2);
    assert!(c.is_running());
}

#[test]
fn g_23_key_id_retired_for_an_id_not_mapped_is_ignored_and_counted() {
    let mut c = with_record();
    c.receive(2, "KeyIdRetired", json!({"key_id": 6}));
    assert!(events(&mut c).is_empty());
    assert!(c.is_running());
    assert_eq!(c.counters().unknown_ids_ignored, 1);
    // The mapped key and its record are untouched.
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(10)));
    c.receive(2, "KeyIdRetired", json!({"key_id": 5}));
    assert_eq!(c.counters().unknown_ids_ignored, 1);
}

#[test]
fn g_6_session_messages_before_the_servers_introduction_are_a_violation() {
    for (text, mt) in [
        (
            msg("TopicIntroduction", json!({"topic_id": 3, "name": "t"})),
            "TopicIntroduction",
        ),
        (
            msg(
                "KeyUpdate",
                json!({"key_id": 5, "name": "k", "class_list": ["A"]}),
            ),
            "KeyUpdate",
        ),
        (
            msg(
                "SubscriptionStatus",
                json!({"name": "S1", "status": "Streaming"}),
            ),
            "SubscriptionStatus",
        ),
        (msg("EchoResponse", json!({"msg_ref": 1})), "EchoResponse"),
        (msg("EchoRequest", json!({"msg_ref": 1})), "EchoRequest"),
    ] {
        let mut c = started(config());
        sent(&mut c);
        c.handle_text(1, &text);
        assert_eq!(
            stopped_with(&mut c),
            vec![(StopReason::Error, Some(Violation::BeforeIntroduction(mt)))],
            "{text}"
        );
        // Nothing was answered on the way out.
        assert!(sent(&mut c).is_empty(), "{text}");
    }
}

#[test]
fn g_6_a_heartbeat_or_an_error_may_come_before_the_servers_introduction() {
    let mut c = started(config());
    c.receive(1, "Heartbeat", json!({"u_milliseconds": 5}));
    assert!(c.is_running());
    c.receive(
        1,
        "Error",
        json!({"message": "Unsupported version from alice: 650712", "recoverable": false}),
    );
    let ev = events(&mut c);
    assert!(matches!(&ev[0], Event::Error(e) if e.message.starts_with("Unsupported version")));
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
    let mut d = started(config());
    d.receive(1, "Logoff", json!({}));
    assert_eq!(d.stop_reason(), Some(StopReason::ServerLogoff));
}

#[test]
fn g_40_a_status_for_an_unknown_subscription_is_ignored_and_counted() {
    let mut c = ready();
    status(&mut c, "ghost", "ProcessingSnapshot");
    status(&mut c, "ghost", "Finished");
    assert!(events(&mut c).is_empty());
    assert_eq!(c.counters().out_of_phase, 2);
    // A subscription that finished is forgotten: a late status for it is out of phase too.
    c.subscribe(&sub(false)).unwrap();
    let name = sub(false).name;
    status(&mut c, &name, "ProcessingSnapshot");
    status(&mut c, &name, "Finished");
    assert_eq!(events(&mut c).len(), 2);
    status(&mut c, &name, "Finished");
    assert!(events(&mut c).is_empty());
    assert_eq!(c.stats().out_of_phase, 3);
    assert!(c.is_running());
}

#[test]
fn g_47_set_nagle_interval_for_no_active_subscription_is_refused_before_sending() {
    let mut c = ready();
    assert_eq!(
        c.set_nagle_interval("S", 50),
        Err(CallError::UnknownSubscription("S".into()))
    );
    assert!(sent(&mut c).is_empty());
    // Once the subscription finished, it is gone: the call is refused again.
    c.subscribe(&sub(false)).unwrap();
    c.set_nagle_interval("S", 50).unwrap();
    status(&mut c, "S", "ProcessingSnapshot");
    status(&mut c, "S", "Finished");
    sent(&mut c);
    assert_eq!(
        c.set_nagle_interval("S", 60),
        Err(CallError::UnknownSubscription("S".into()))
    );
    assert!(sent(&mut c).is_empty());
}

#[test]
fn g_40_needs_continue_out_of_phase_is_not_answered() {
    let mut c = ready();
    c.subscribe(&sub(false)).unwrap();
    sent(&mut c);
    // Before ProcessingSnapshot: the snapshot has not begun, there is nothing to continue.
    status(&mut c, "S", "NeedsContinue");
    assert!(sent(&mut c).is_empty());
    assert!(events(&mut c).is_empty());
    assert_eq!(c.counters().out_of_phase, 1);
    // In phase it is answered.
    status(&mut c, "S", "ProcessingSnapshot");
    status(&mut c, "S", "NeedsContinue");
    assert_eq!(types(&sent(&mut c)), ["SubscribeContinue"]);
    // A streaming subscription past its snapshot has nothing to continue either.
    let mut d = ready();
    d.subscribe(&sub(true)).unwrap();
    status(&mut d, "S", "ProcessingSnapshot");
    status(&mut d, "S", "Streaming");
    sent(&mut d);
    events(&mut d);
    status(&mut d, "S", "NeedsContinue");
    assert!(sent(&mut d).is_empty());
    assert!(events(&mut d).is_empty());
    assert_eq!(d.counters().out_of_phase, 1);
}

#[test]
fn g_40_streaming_before_processing_snapshot_is_out_of_phase() {
    let mut c = ready();
    c.subscribe(&sub(true)).unwrap();
    status(&mut c, "S", "Streaming");
    assert!(events(&mut c).is_empty());
    assert_eq!(c.counters().out_of_phase, 1);
    // The subscription never began: a Finished now is still the refusal of G-41.
    status(&mut c, "S", "Finished");
    assert_eq!(events(&mut c), vec![Event::Refused { name: "S".into() }]);
}

#[test]
fn g_40_a_second_processing_snapshot_is_out_of_phase() {
    let mut c = ready();
    c.subscribe(&sub(true)).unwrap();
    status(&mut c, "S", "ProcessingSnapshot");
    status(&mut c, "S", "Streaming");
    events(&mut c);
    status(&mut c, "S", "ProcessingSnapshot");
    assert!(events(&mut c).is_empty());
    assert_eq!(c.counters().out_of_phase, 1);
    // Still streaming: a repeated Streaming is out of phase too, and it may be unsubscribed.
    status(&mut c, "S", "Streaming");
    assert_eq!(c.counters().out_of_phase, 2);
    c.unsubscribe("S").unwrap();
    status(&mut c, "S", "Finished");
    assert_eq!(
        events(&mut c),
        vec![Event::Status {
            name: "S".into(),
            status: Status::Finished
        }]
    );
}

#[test]
fn bounds_answers_awaited_are_bounded_and_refused_past_the_bound() {
    use gar_client::codec::write::{Ownership, OwnershipAction};
    let mut c = limited(Limits {
        max_pending_replies: 2,
        ..Limits::default()
    });
    let id = own_record(&mut c);
    let e = c.echo().unwrap();
    let x = c.compare_exchange(id, &json!(1), &json!(2)).unwrap();
    sent(&mut c);
    // Echoes and compares share the bound, and a refused call queues nothing.
    assert_eq!(c.echo(), Err(CallError::TooManyPending));
    assert_eq!(
        c.compare_exchange(id, &json!(1), &json!(2)),
        Err(CallError::TooManyPending)
    );
    let owned = Ownership {
        msg_ref: 5,
        ownership_action: OwnershipAction::Acquire,
        ..Ownership::default()
    };
    assert_eq!(
        c.compare_exchange_owned(&owned, id, &json!(1), &json!(2)),
        Err(CallError::TooManyPending)
    );
    assert!(sent(&mut c).is_empty());
    // An answer makes room again.
    c.receive(2, "EchoResponse", json!({"msg_ref": e}));
    c.compare_exchange_owned(&owned, id, &json!(1), &json!(2))
        .unwrap();
    c.receive(
        2,
        "JSONCompareExchangeResult",
        json!({"msg_ref": x, "success": true}),
    );
    c.echo().unwrap();
    assert_eq!(c.echo(), Err(CallError::TooManyPending));
    assert!(c.is_running());
}

#[test]
fn g_34_a_nameless_batch_key_adds_the_classes_it_names() {
    let mut c = with_key("k");
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 5, "class": "B", "topics": {"3": 1}}]}),
    );
    assert!(c.is_running());
    let (name, classes) = c.server_key(5).unwrap();
    assert_eq!(name, "k");
    assert_eq!(classes.iter().collect::<Vec<_>>(), ["A", "B"]);
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(1)));
    // A nameless key the server never introduced is refused, records or not.
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 6, "classes": ["A"]}]}),
    );
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::UnknownId { kind: "key", id: 6 })
        )]
    );
}

/// The three per-subscription flags G-46 names, as the `Subscribe` message spells them.
const SUB_FLAGS: [&str; 3] = [
    "include_tick_time",
    "include_diagnostics",
    "assume_cached_subscriptions_cover",
];

/// Subscription `S` (streaming or not) with only `flag` set to `v`.
fn sub_with_flag(streaming: bool, flag: &str, v: Option<bool>) -> Subscribe {
    let mut s = sub(streaming);
    match flag {
        "include_tick_time" => s.include_tick_time = v,
        "include_diagnostics" => s.include_diagnostics = v,
        "assume_cached_subscriptions_cover" => s.assume_cached_subscriptions_cover = v,
        other => panic!("no flag {other}"),
    }
    s
}

/// The `value` of the one message a ready client queues for subscribing `s`.
fn subscribe_value(s: &Subscribe) -> Value {
    let mut c = ready();
    c.subscribe(s).unwrap();
    let out = sent(&mut c);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["message_type"], "Subscribe");
    out[0]["value"].clone()
}

#[test]
fn g_46_each_subscription_flag_goes_out_alone_with_the_value_asked() {
    // Each flag on its own, both values, both modes: a flag written under another flag's name,
    // or always true, or dropped for one mode, shows here.
    for streaming in [true, false] {
        for flag in SUB_FLAGS {
            for v in [true, false] {
                let m = subscribe_value(&sub_with_flag(streaming, flag, Some(v)));
                assert_eq!(m[flag], json!(v), "{flag}={v} streaming={streaming}");
                for other in SUB_FLAGS.iter().filter(|o| **o != flag) {
                    assert!(
                        m.get(*other).is_none(),
                        "{other} sent when only {flag} was set"
                    );
                }
            }
        }
    }
}

#[test]
fn g_46_a_flag_left_unset_is_left_out_for_the_server_default() {
    let m = subscribe_value(&sub(true));
    for flag in SUB_FLAGS {
        assert!(m.get(flag).is_none(), "{flag} sent though unset");
    }
}

#[test]
fn g_46_unique_key_and_record_updates_goes_out_in_the_introduction_as_configured() {
    for v in [true, false] {
        for other in [true, false] {
            let mut c = started(Config {
                unique_key_and_record_updates: v,
                disconnect_on_write_failure: other,
                ..config()
            });
            let intro = &sent(&mut c)[0];
            assert_eq!(intro["message_type"], "Introduction");
            assert_eq!(intro["value"]["unique_key_and_record_updates"], json!(v));
            assert_eq!(intro["value"]["disconnect_on_write_failure"], json!(other));
        }
    }
}

#[test]
fn g_46_group_tags_still_reach_the_application_under_unique_updates() {
    // The option makes the tags unreliable, not absent: they pass through as they come.
    let mut c = introduced(
        Config {
            unique_key_and_record_updates: true,
            ..config()
        },
        IV,
    );
    events(&mut c);
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 3}));
    assert_eq!(
        events(&mut c),
        vec![Event::Group {
            subscription_group: 3
        }]
    );
}

/// A ready client that introduced topics `a`, `b` (client ids 1, 2) and key `k` (client id 1).
fn own_ids() -> Client {
    let mut c = ready();
    assert_eq!(c.introduce_topic("a").unwrap(), 1);
    assert_eq!(c.introduce_topic("b").unwrap(), 2);
    assert_eq!(c.introduce_key("k", "A").unwrap(), 1);
    sent(&mut c);
    c
}

/// Every call that writes a record, tried on `r`; each result in order.
fn every_write(c: &mut Client, r: RecordId) -> Vec<Result<(), CallError>> {
    vec![
        c.publish(r, &json!(1), 0),
        c.delete_record(r, 0),
        c.compare_exchange(r, &Value::Null, &json!(1)).map(drop),
        c.compare_exchange_owned(&acquiring(), r, &Value::Null, &json!(1))
            .map(drop),
    ]
}

#[test]
fn g_18_a_write_under_an_introduced_key_needs_its_topic_introduced_too() {
    let mut c = own_ids();
    // Key 1 is introduced; topic 3 is not.
    for got in every_write(&mut c, rid(1, 3)) {
        assert_eq!(got, Err(CallError::UnknownId(3)));
    }
    assert!(sent(&mut c).is_empty());
}

#[test]
fn g_18_a_write_under_an_introduced_topic_needs_its_key_introduced_too() {
    let mut c = own_ids();
    // Topic 2 is introduced; key 2 is not (a key id checked against the topic ids would pass).
    for got in every_write(&mut c, rid(2, 2)) {
        assert_eq!(got, Err(CallError::UnknownId(2)));
    }
    assert!(sent(&mut c).is_empty());
    // Both introduced: every write goes.
    for got in every_write(&mut c, rid(1, 2)) {
        assert_eq!(got, Ok(()));
    }
    assert_eq!(sent(&mut c).len(), 5);
}

/// Each kind of server message that names a record, at `r`.
fn record_messages(r: RecordId) -> Vec<(&'static str, Value)> {
    let id = json!({"key_id": r.key_id, "topic_id": r.topic_id});
    vec![
        ("JSONRecordUpdate", json!({"record_id": id, "value": 1})),
        (
            "DeleteRecord",
            json!({"key_id": r.key_id, "topic_id": r.topic_id, "tick_time": 0}),
        ),
        ("RecordTick", json!({"record_id": id, "tick_time": 5})),
        (
            "RecordDiagnostic",
            json!({"record_id": id, "diagnostic": {"reason": "InputMissing"}}),
        ),
        (
            "BatchUpdate",
            json!({"keys": [{"key_id": r.key_id, "topics": {r.topic_id.to_string(): 1}}]}),
        ),
    ]
}

#[test]
fn g_18_every_server_record_message_needs_its_key_introduced() {
    for (mt, v) in record_messages(rid(6, 3)) {
        // Topic 3 and key 5 are introduced; key 6 is not.
        let mut c = with_key("k");
        c.receive(2, mt, v);
        assert_eq!(
            stopped_with(&mut c),
            vec![(
                StopReason::Error,
                Some(Violation::UnknownId { kind: "key", id: 6 })
            )],
            "{mt}"
        );
        assert!(c.record(rid(6, 3)).is_none(), "{mt}");
    }
}

#[test]
fn g_18_every_server_record_message_needs_its_topic_introduced() {
    for (mt, v) in record_messages(rid(5, 4)) {
        // Key 5 and topic 3 are introduced; topic 4 is not.
        let mut c = with_key("k");
        c.receive(2, mt, v);
        assert_eq!(
            stopped_with(&mut c),
            vec![(
                StopReason::Error,
                Some(Violation::UnknownId {
                    kind: "topic",
                    id: 4
                })
            )],
            "{mt}"
        );
        assert!(c.record(rid(5, 4)).is_none(), "{mt}");
    }
}

#[test]
fn g_18_a_batch_may_introduce_the_key_its_records_name_but_not_the_topic() {
    let mut c = ready();
    topic(&mut c, 3, "t");
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 6, "name": "k6", "class": "A", "topics": {"3": 1}}]}),
    );
    assert!(c.is_running());
    assert_eq!(c.record(rid(6, 3)).unwrap().value, Some(json!(1)));
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 7, "name": "k7", "class": "A", "topics": {"4": 1}}]}),
    );
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::UnknownId {
                kind: "topic",
                id: 4
            })
        )]
    );
}

#[test]
fn g_17_the_error_that_ends_the_session_is_kept_when_the_event_queue_is_full() {
    // The application has not read its events: the queue is full of recoverable Errors. The
    // server's heartbeat timeout Error ends the session; it must still be reported ahead of the
    // stop, or the application sees a stop for an Error it cannot read.
    let mut c = introduced(
        config_with(Limits {
            max_event_count: 2,
            ..Limits::default()
        }),
        IV,
    );
    events(&mut c);
    for _ in 0..3 {
        c.receive(2, "Error", json!({"message": "m", "recoverable": true}));
    }
    assert_eq!(c.counters().events_dropped, 1);
    c.receive(
        3,
        "Error",
        json!({"message": "Heartbeat timeout", "recoverable": false}),
    );
    c.handle_close(Some(1000));
    let ev = events(&mut c);
    let n = ev.len();
    assert!(
        matches!(&ev[n - 2], Event::Error(e) if e.message == "Heartbeat timeout" && !e.recoverable),
        "{ev:?}"
    );
    assert_eq!(
        ev[n - 1],
        Event::Stopped {
            reason: StopReason::Error,
            violation: None
        }
    );
    assert_eq!(c.counters().events_dropped, 1);
}

#[test]
fn g_57_a_fatal_error_with_failed_writes_reaches_the_application_whole() {
    // A connection introduced with disconnect_on_write_failure gets its failed writes as a
    // non-recoverable Error, msg_ref 0 included: every field arrives as sent.
    let mut c = ready();
    let fw = json!([
        {"reason": {"record_write": "UnknownTopic"}, "malformed": true, "key_id": 1},
        {"reason": {"key_write": "UnknownClass"}, "malformed": true, "key_id": 0}
    ]);
    c.receive(
        2,
        "Error",
        json!({"message": "KeyNotFound key 'x'", "recoverable": false, "failed_writes": fw, "msg_ref": 0}),
    );
    let ev = events(&mut c);
    let Event::Error(e) = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!(
        *e,
        gar_client::ServerError {
            message: "KeyNotFound key 'x'".into(),
            recoverable: false,
            failed_writes: fw.as_array().unwrap().clone(),
            msg_ref: 0,
        }
    );
    assert_eq!(
        e.write_errors(),
        Some((fw.as_array().unwrap().as_slice(), "KeyNotFound key 'x'", 0))
    );
    assert_eq!(ev.len(), 2);
    assert_eq!(c.stop_reason(), Some(StopReason::Error));
}

#[test]
fn g_57_the_write_errors_view_is_failed_writes_message_and_msg_ref() {
    let mut c = ready();
    let fw = json!([{"reason": {"record_write": "TopicNotInClass"}, "malformed": false}]);
    c.receive(
        2,
        "Error",
        json!({"message": "m", "recoverable": true, "failed_writes": fw, "msg_ref": 7}),
    );
    // An Error without failed writes has no write-errors view.
    c.receive(
        2,
        "Error",
        json!({"message": "other", "recoverable": true, "msg_ref": 8}),
    );
    let ev = events(&mut c);
    let errors: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Error(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2);
    assert_eq!(
        errors[0].write_errors(),
        Some((fw.as_array().unwrap().as_slice(), "m", 7))
    );
    assert_eq!(errors[1].write_errors(), None);
    assert_eq!((errors[1].msg_ref, errors[1].recoverable), (8, true));
    assert!(c.is_running());
}

#[test]
fn g_13_a_backlog_ending_exactly_on_a_scheduled_instant_does_not_replay_it() {
    let mut c = ready();
    c.handle_timeout(2000);
    alive(&mut c, 6000);
    // Due at 4000 and at 6000: the tick at 6000 sends one beat, and the beat it stands for
    // (6000) is not left due at 6000 to go out again.
    c.handle_timeout(6000);
    assert_eq!(beats(&mut c), vec![2000, 6000]);
    assert_eq!(c.poll_timeout(), Some(8000));
    c.handle_timeout(6000);
    c.handle_timeout(7999);
    assert!(beats(&mut c).is_empty());
    // The cadence goes on from the snapped instant.
    alive(&mut c, 8000);
    c.handle_timeout(8000);
    assert_eq!(beats(&mut c), vec![8000]);
    assert_eq!(c.poll_timeout(), Some(10000));
}

#[test]
fn g_13_a_late_tick_within_one_interval_keeps_the_schedule() {
    // Late by less than an interval: no backlog to collapse, so the next beat stays on the
    // fixed-rate schedule (a snap to one interval past now would drift it).
    let mut c = ready();
    c.handle_timeout(2000);
    assert_eq!(beats(&mut c), vec![2000]);
    alive(&mut c, 3999);
    c.handle_timeout(3999);
    assert!(beats(&mut c).is_empty());
    c.handle_timeout(5999);
    assert_eq!(beats(&mut c), vec![5999]);
    assert_eq!(c.poll_timeout(), Some(6000));
}

#[test]
fn g_4_a_new_sessions_first_byte_is_an_open_brace_whatever_the_old_one_left_queued() {
    let mut c = ready();
    c.introduce_topic("t").unwrap();
    c.echo().unwrap();
    c.start(10, (8, 9));
    let first = c.poll_transmit().unwrap();
    assert_eq!(first.as_bytes()[0], b'{');
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["message_type"], "Introduction");
    // Nothing of the old session follows it.
    assert!(c.poll_transmit().is_none());
}

#[test]
fn g_44_each_tag_holds_until_the_next_one_in_message_order() {
    // Every tag is passed on where it came, a repeated group included, so the application
    // attributes each following message to the last tag before it.
    let mut c = with_key("k");
    key(&mut c, 6, "j", &["A"]);
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    update(&mut c, 5, 3, json!(1));
    update(&mut c, 6, 3, json!(2));
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 8}));
    update(&mut c, 5, 3, json!(3));
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 8}));
    update(&mut c, 6, 3, json!(4));
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    let got: Vec<String> = events(&mut c)
        .into_iter()
        .map(|e| match e {
            Event::Group { subscription_group } => format!("g{subscription_group}"),
            Event::Record {
                record_id,
                value: Some(v),
            } => format!("{}={v}", record_id.key_id),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(got, ["g7", "5=1", "6=2", "g8", "5=3", "g8", "6=4", "g7"]);
}

#[test]
fn g_44_key_lifecycle_reaches_the_application_with_or_without_a_tag() {
    // Without any tag, and under a tag: the whole-key teardown and a client key's
    // invalidation are events of the connection, whatever subscription is tagged.
    for tagged in [false, true] {
        let mut c = ready();
        key(&mut c, 5, "k", &["A"]);
        let k = c.introduce_key("mine", "A").unwrap();
        events(&mut c);
        if tagged {
            c.receive(2, "ActiveSubscription", json!({"subscription_group": 9}));
        }
        c.receive(
            2,
            "KeyUpdate",
            json!({"key_id": 5, "deleted_class": "A", "class_list": []}),
        );
        c.receive(
            2,
            "ClientIntroducedKeyInvalidated",
            json!({"client_introduced_key_id": k}),
        );
        let mut want = vec![];
        if tagged {
            want.push(Event::Group {
                subscription_group: 9,
            });
        }
        want.push(Event::ClassDeleted {
            key_id: 5,
            deleted_class: "A".into(),
            remaining: vec![],
        });
        want.push(Event::KeyInvalidated { key_id: k });
        assert_eq!(events(&mut c), want, "tagged={tagged}");
    }
}

#[test]
fn g_44_a_tag_the_full_event_queue_dropped_still_precedes_what_follows_it() {
    // The application reads slowly and the queue (two events) is full when the tag of group 7
    // comes. A record that follows it and is kept must not read as group 6's.
    let mut c = introduced(
        config_with(Limits {
            max_event_count: 2,
            ..Limits::default()
        }),
        IV,
    );
    topic(&mut c, 3, "t");
    key(&mut c, 5, "k", &["A"]);
    events(&mut c);
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 6}));
    update(&mut c, 5, 3, json!(1));
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    let mut got = vec![c.poll_event().unwrap()];
    update(&mut c, 5, 3, json!(2));
    got.push(c.poll_event().unwrap());
    update(&mut c, 5, 3, json!(3));
    got.extend(events(&mut c));
    let record = |v: i64| Event::Record {
        record_id: rid(5, 3),
        value: Some(json!(v)),
    };
    let group = |g: u64| Event::Group {
        subscription_group: g,
    };
    // Record 2 found no room for itself and the tag before it: dropped, counted.
    assert_eq!(got, vec![group(6), record(1), group(7), record(3)]);
    assert_eq!(c.counters().events_dropped, 2);
}

#[test]
fn g_44_a_dropped_tag_a_newer_tag_replaces_is_not_passed_on() {
    // The tag of group 7 is dropped (the queue of two is full); the tag of group 8 comes
    // before any other event is kept: 8 alone is passed on, then what follows it.
    let mut c = introduced(
        config_with(Limits {
            max_event_count: 2,
            ..Limits::default()
        }),
        IV,
    );
    topic(&mut c, 3, "t");
    key(&mut c, 5, "k", &["A"]);
    events(&mut c);
    update(&mut c, 5, 3, json!(1));
    update(&mut c, 5, 3, json!(2));
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    assert_eq!(events(&mut c).len(), 2);
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 8}));
    update(&mut c, 5, 3, json!(3));
    assert_eq!(
        events(&mut c),
        vec![
            Event::Group {
                subscription_group: 8
            },
            Event::Record {
                record_id: rid(5, 3),
                value: Some(json!(3)),
            },
        ]
    );
}

#[test]
fn g_44_a_dropped_tag_and_the_event_after_it_are_kept_together_within_the_byte_bound() {
    // The bytes one group tag and one record of value 1 hold in the queue.
    let sizes = {
        let mut c = introduced(config_with(Limits::default()), IV);
        topic(&mut c, 3, "t");
        key(&mut c, 5, "k", &["A"]);
        events(&mut c);
        c.receive(2, "ActiveSubscription", json!({"subscription_group": 1}));
        let tag = c.stats().event_bytes_held;
        update(&mut c, 5, 3, json!(1));
        let record = c.stats().event_bytes_held - tag;
        update(&mut c, 5, 3, json!(""));
        (tag, record, c.stats().event_bytes_held - tag - record)
    };
    let (tag, record, empty_text) = sizes;
    assert!(tag > 0 && record > tag && empty_text >= tag, "{sizes:?}");
    let bound = |max_event_bytes: u64| {
        let mut c = introduced(
            config_with(Limits {
                max_event_count: 3,
                max_event_bytes: max_event_bytes as usize,
                ..Limits::default()
            }),
            IV,
        );
        topic(&mut c, 3, "t");
        key(&mut c, 5, "k", &["A"]);
        events(&mut c);
        c
    };
    let record_of = |v: i64| Event::Record {
        record_id: rid(5, 3),
        value: Some(json!(v)),
    };
    let group = |g: u64| Event::Group {
        subscription_group: g,
    };
    // Room for exactly a tag and a record: a tag dropped behind a long record goes out with
    // the next record once the queue is empty.
    let mut c = bound(tag + record);
    // A record of text that fills the bound alone.
    let fill = (tag + record - empty_text) as usize;
    update(&mut c, 5, 3, json!("x".repeat(fill)));
    assert_eq!(c.stats().event_bytes_held, tag + record);
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    assert_eq!(events(&mut c).len(), 1);
    update(&mut c, 5, 3, json!(1));
    assert_eq!(events(&mut c), vec![group(7), record_of(1)]);
    // One byte short of two records and a tag: with a record held, the tag and the next
    // record do not fit together, so neither is kept, and the tag waits for the next one.
    let mut c = bound(2 * record + tag - 1);
    update(&mut c, 5, 3, json!(1));
    update(&mut c, 5, 3, json!(2));
    c.receive(2, "ActiveSubscription", json!({"subscription_group": 7}));
    assert_eq!(c.poll_event(), Some(record_of(1)));
    update(&mut c, 5, 3, json!(3));
    assert_eq!(c.counters().events_dropped, 2);
    assert_eq!(c.poll_event(), Some(record_of(2)));
    update(&mut c, 5, 3, json!(4));
    assert_eq!(events(&mut c), vec![group(7), record_of(4)]);
}

#[test]
fn g_3_every_outbound_message_is_message_type_and_an_object_value() {
    use gar_client::codec::write;
    let r = rid(1, 2);
    let texts = vec![
        write::introduction(&write::Introduction {
            version: JSON_VERSION,
            heartbeat_timeout_interval: IV,
            user: "u".into(),
            application: "a".into(),
            pid: 1,
            uuid_low: 2,
            uuid_high: 3,
            working_namespace: "ns".into(),
            unique_key_and_record_updates: false,
            disconnect_on_write_failure: false,
        }),
        write::heartbeat(5),
        write::topic_introduction(1, "t"),
        write::key_update(1, "k", &["A".to_string()]),
        write::record_update(r, &json!(1), 0),
        write::record_update(r, &json!(1), 9),
        write::delete_record(r, 0),
        write::subscribe(&sub(true)),
        write::active_ownership(&acquiring()),
        write::delete_class(1, "k", "A"),
        write::delete_key_command(1),
        write::subscribe_continue("S"),
        write::unsubscribe("S"),
        write::set_nagle_interval("S", 5),
        write::echo_request(1),
        write::echo_response(1),
        write::compare_exchange(r, 1, &Value::Null, &json!(2)),
    ];
    for t in texts {
        assert!(t.starts_with('{'), "{t}");
        let v: Value = serde_json::from_str(&t).unwrap();
        let m = v.as_object().unwrap();
        let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["message_type", "value"], "{t}");
        assert!(m["message_type"].is_string(), "{t}");
        assert!(m["value"].is_object(), "{t}");
    }
    // Logoff alone goes without a value.
    let v: Value = serde_json::from_str(&write::logoff()).unwrap();
    assert_eq!(v, json!({"message_type": "Logoff"}));
}

#[test]
fn g_3_an_inbound_envelope_needs_a_string_message_type_and_an_object_value() {
    let l = Limits::default();
    // Logoff with its value left out, null or empty: all read.
    for t in [
        r#"{"message_type":"Logoff"}"#,
        r#"{"message_type":"Logoff","value":null}"#,
        r#"{"message_type":"Logoff","value":{}}"#,
    ] {
        assert_eq!(codec::decode(t, &l), Ok(Inbound::Logoff), "{t}");
    }
    assert_eq!(
        codec::decode(r#"{"value":{}}"#, &l),
        Err(Violation::NoMessageType)
    );
    assert_eq!(
        codec::decode(r#"{"message_type":7,"value":{}}"#, &l),
        Err(Violation::NoMessageType)
    );
    for t in [
        r#"{"message_type":"Heartbeat","value":[1]}"#,
        r#"{"message_type":"Heartbeat","value":"x"}"#,
        r#"{"message_type":"Logoff","value":1}"#,
    ] {
        assert_eq!(
            codec::decode(t, &l),
            Err(Violation::BadMember {
                message_type: "envelope",
                member: "value"
            }),
            "{t}"
        );
    }
    // A message other than Logoff that leaves its value out lacks its members.
    assert_eq!(
        codec::decode(r#"{"message_type":"Heartbeat"}"#, &l),
        Err(Violation::BadMember {
            message_type: "Heartbeat",
            member: "u_milliseconds"
        })
    );
    // Through the engine, a bad envelope ends the session as a violation.
    let mut c = ready();
    c.handle_text(2, r#"{"message_type":"Heartbeat","value":[1]}"#);
    assert!(matches!(
        stopped_with(&mut c).as_slice(),
        [(StopReason::Error, Some(Violation::BadMember { .. }))]
    ));
}

#[test]
fn g_24_every_call_under_an_invalidated_key_is_refused_and_only_that_key_dies() {
    let mut c = ready();
    // The server's key 1 (and a record under it) share the number of the client's key 1.
    topic(&mut c, 3, "st");
    key(&mut c, 1, "server_key", &["A"]);
    update(&mut c, 1, 3, json!(5));
    let t = c.introduce_topic("t").unwrap();
    let k = c.introduce_key("k", "A").unwrap();
    let other = c.introduce_key("other", "A").unwrap();
    assert_eq!(k, 1);
    sent(&mut c);
    events(&mut c);
    c.receive(
        2,
        "ClientIntroducedKeyInvalidated",
        json!({"client_introduced_key_id": k}),
    );
    assert_eq!(events(&mut c), vec![Event::KeyInvalidated { key_id: k }]);
    // Every call that names the dead id, or the key by name, is refused; nothing is sent.
    for got in every_write(&mut c, rid(k, t)) {
        assert_eq!(got, Err(CallError::UnknownId(k)));
    }
    assert_eq!(
        c.delete_class("k", "A"),
        Err(CallError::UnknownKey("k".into()))
    );
    assert_eq!(c.delete_key("k"), Err(CallError::UnknownKey("k".into())));
    assert!(sent(&mut c).is_empty());
    // The other key, the topic and the server's own key 1 are untouched.
    assert_eq!(c.introduce_key("other", "A").unwrap(), other);
    assert!(sent(&mut c).is_empty());
    c.publish(rid(other, t), &json!(1), 0).unwrap();
    assert_eq!(c.server_key(1).map(|(n, _)| n), Some("server_key"));
    assert_eq!(c.record(rid(1, 3)).unwrap().value, Some(json!(5)));
    // Re-introduced, the key has a new id that was never used, and the old stays dead.
    sent(&mut c);
    let again = c.introduce_key("k", "A").unwrap();
    assert!(again != k && again != other);
    assert_eq!(
        sent(&mut c),
        vec![
            json!({"message_type": "KeyUpdate", "value": {"key_id": again, "name": "k", "class_list": ["A"]}})
        ]
    );
    assert_eq!(
        c.publish(rid(k, t), &json!(1), 0),
        Err(CallError::UnknownId(k))
    );
    c.publish(rid(again, t), &json!(1), 0).unwrap();
}

#[test]
fn g_35_a_refused_density_leaves_the_name_free_and_nothing_registered() {
    let mut c = ready();
    let ask = |d: Option<&str>| Subscribe {
        name: "S".into(),
        density: d.map(str::to_string),
        ..sub(true)
    };
    assert_eq!(
        c.subscribe(&ask(Some("RecordMajor"))),
        Err(CallError::UnsupportedDensity("RecordMajor".into()))
    );
    // No subscription S exists: a status for it is not applied, and unsubscribing is refused.
    assert_eq!(
        c.unsubscribe("S"),
        Err(CallError::UnknownSubscription("S".into()))
    );
    // The name is free for the shape this reader reads.
    c.subscribe(&ask(Some("KeyMajor"))).unwrap();
    let out = sent(&mut c);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["value"]["density"], "KeyMajor");
}

fn lagging() -> Config {
    Config {
        any_message_is_alive: true,
        ..config()
    }
}

#[test]
fn g_16_every_kind_of_message_refreshes_liveness_when_asked() {
    let kinds: Vec<(&str, Value)> = vec![
        ("TopicIntroduction", json!({"topic_id": 4, "name": "y"})),
        ("ActiveSubscription", json!({"subscription_group": 2})),
        ("Error", json!({"message": "m", "recoverable": true})),
        ("EchoRequest", json!({"msg_ref": 3})),
        (
            "SubscriptionStatus",
            json!({"name": "none", "status": "Streaming"}),
        ),
        ("SomeFutureMessage", json!({})),
    ];
    for (mt, v) in kinds {
        let mut c = introduced(lagging(), IV);
        alive(&mut c, 100);
        c.receive(3000, mt, v);
        assert!(c.is_running(), "{mt}");
        times_out_at(&mut c, 3000 + IV);
    }
}

#[test]
fn g_16_a_refresh_lasts_the_larger_of_both_intervals() {
    let mut c = introduced(lagging(), 6000);
    alive(&mut c, 100);
    topic_at(&mut c, 3000, 4, "y");
    times_out_at(&mut c, 9000);
}

#[test]
fn g_16_an_early_message_does_not_cut_the_first_beat_grace_short() {
    // No heartbeat yet: the grace of ten intervals stands; a message at 100 would refresh to
    // 100 + IV, which is earlier, so it changes nothing.
    let mut c = introduced(lagging(), IV);
    topic_at(&mut c, 100, 4, "y");
    c.handle_timeout(100 + IV);
    assert!(c.is_running());
    times_out_at(&mut c, 10 * IV);
}

#[test]
fn g_10_a_received_introduction_frees_what_the_old_id_space_held_in_every_bound() {
    // Bounds just large enough for one topic, one key and one record of ten bytes.
    let mut c = limited(Limits {
        max_ids: 2,
        max_id_name_bytes: 8,
        max_records: 1,
        max_record_bytes: 10,
        ..Limits::default()
    });
    for round in 0..3 {
        topic(&mut c, 3, "tt");
        key(&mut c, 5, "kk", &["A"]);
        update(&mut c, 5, 3, json!("12345678"));
        let s = c.stats();
        assert_eq!(
            (s.id_name_bytes_held, s.records_held, s.record_bytes_held),
            (5, 1, 10),
            "round {round}"
        );
        assert_eq!((s.ids_dropped, s.records_dropped), (0, 0), "round {round}");
        c.handle_text(2, &server_intro(JSON_VERSION, IV));
        let s = c.stats();
        assert_eq!(
            (s.id_name_bytes_held, s.records_held, s.record_bytes_held),
            (0, 0, 0),
            "round {round}"
        );
    }
    assert!(c.is_running());
    // The old ids are gone, not hidden: a record under them is a violation.
    topic(&mut c, 3, "tt");
    update(&mut c, 5, 3, json!(1));
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::UnknownId { kind: "key", id: 5 })
        )]
    );
}

#[test]
fn g_10_a_received_introduction_does_not_restart_the_client_counters() {
    let mut c = ready();
    let t = c.introduce_topic("t").unwrap();
    let k = c.introduce_key("k", "A").unwrap();
    let e = c.echo().unwrap();
    sent(&mut c);
    c.handle_text(2, &server_intro(JSON_VERSION, IV));
    // New client ids and msg_refs go on from where they were: none is given twice.
    assert_eq!(c.introduce_topic("t2").unwrap(), t + 1);
    assert_eq!(c.introduce_key("k2", "A").unwrap(), k + 1);
    assert_eq!(c.echo().unwrap(), e + 1);
    assert_eq!(c.introduce_key("k", "A").unwrap(), k);
    let out = sent(&mut c);
    assert_eq!(
        types(&out),
        ["TopicIntroduction", "KeyUpdate", "EchoRequest"]
    );
}

#[test]
fn g_43_streaming_is_signalled_once_per_subscription_between_snapshot_and_live_data() {
    let mut c = with_key("k");
    for name in ["S", "T"] {
        c.subscribe(&Subscribe {
            name: name.into(),
            ..sub(true)
        })
        .unwrap();
        status(&mut c, name, "ProcessingSnapshot");
    }
    events(&mut c);
    update(&mut c, 5, 3, json!(1));
    status(&mut c, "S", "Streaming");
    update(&mut c, 5, 3, json!(2));
    // A second Streaming for S is out of phase: readiness is signalled once.
    status(&mut c, "S", "Streaming");
    status(&mut c, "T", "Streaming");
    let streaming = |n: &str| Event::Status {
        name: n.into(),
        status: Status::Streaming,
    };
    let record = |v: i64| Event::Record {
        record_id: rid(5, 3),
        value: Some(json!(v)),
    };
    assert_eq!(
        events(&mut c),
        vec![record(1), streaming("S"), record(2), streaming("T")]
    );
    assert_eq!(c.stats().out_of_phase, 1);
}

#[test]
fn g_29_digits_survive_batches_nesting_events_and_the_way_back_out() {
    // Trailing zeros, an exponent, a negative zero and an integer past 64 bits, nested in a
    // batch value: the cache, the event and a write of the value read all keep the text.
    let nested =
        r#"{"a":[1.50,2.50e-7,-0.0,123456789012345678901234567890],"b":0.30000000000000000001}"#;
    let mut c = with_key("k");
    c.handle_text(
        2,
        &format!(
            r#"{{"message_type":"BatchUpdate","value":{{"keys":[{{"key_id":5,"topics":{{"3":{nested}}}}}]}}}}"#
        ),
    );
    assert!(c.is_running());
    let cached = c.record(rid(5, 3)).unwrap().value.clone().unwrap();
    assert_eq!(codec::to_text(&cached), nested);
    let ev = events(&mut c);
    let Some(Event::Record {
        value: Some(seen), ..
    }) = ev.last()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(codec::to_text(seen), nested);
    let own = own_record(&mut c);
    sent(&mut c);
    c.publish(own, seen, 0).unwrap();
    let out = c.poll_transmit().unwrap();
    assert!(out.contains(nested), "{out}");
}

#[test]
fn g_42_a_snapshot_subscription_is_not_unsubscribed_in_any_phase_before_finished() {
    let mut c = ready();
    c.subscribe(&sub(false)).unwrap();
    sent(&mut c);
    let refused = |c: &mut Client| {
        assert_eq!(c.unsubscribe("S"), Err(CallError::NotFinished("S".into())));
        assert!(sent(c).is_empty());
    };
    // Sent, not yet begun.
    refused(&mut c);
    status(&mut c, "S", "ProcessingSnapshot");
    refused(&mut c);
    // Paused at its size limit (the engine answers SubscribeContinue, nothing else).
    status(&mut c, "S", "NeedsContinue");
    assert_eq!(types(&sent(&mut c)), ["SubscribeContinue"]);
    refused(&mut c);
    // Finished: the subscription is over, there is nothing left to unsubscribe.
    status(&mut c, "S", "Finished");
    assert_eq!(
        c.unsubscribe("S"),
        Err(CallError::UnknownSubscription("S".into()))
    );
    assert!(sent(&mut c).is_empty());
    // A streaming subscription may be unsubscribed in any phase.
    c.subscribe(&sub(true)).unwrap();
    sent(&mut c);
    c.unsubscribe("S").unwrap();
    assert_eq!(types(&sent(&mut c)), ["Unsubscribe"]);
}

#[test]
fn g_33_delete_record_removes_that_record_only_and_says_so() {
    // Key 5 has topics 3 and 4; key 6 has topic 3. Deleting (5, 3) leaves the other two.
    let mut c = with_record();
    topic(&mut c, 4, "size");
    key(&mut c, 6, "k2", &["A"]);
    update(&mut c, 5, 4, json!(7));
    update(&mut c, 6, 3, json!(8));
    events(&mut c);
    let held = c.stats().record_bytes_held;
    // The stamp may be left out.
    c.receive(2, "DeleteRecord", json!({"key_id": 5, "topic_id": 3}));
    assert!(c.record(rid(5, 3)).is_none());
    assert_eq!(c.record(rid(5, 4)).unwrap().value, Some(json!(7)));
    assert_eq!(c.record(rid(6, 3)).unwrap().value, Some(json!(8)));
    assert_eq!(c.stats().record_bytes_held, held - 2);
    assert_eq!(
        events(&mut c),
        vec![Event::Record {
            record_id: rid(5, 3),
            value: None
        }]
    );
    // A diagnostic goes the same way, with its bytes.
    diag(&mut c);
    events(&mut c);
    assert!(c.record(rid(5, 3)).unwrap().diagnostic.is_some());
    c.receive(
        2,
        "DeleteRecord",
        json!({"key_id": 5, "topic_id": 3, "tick_time": 9}),
    );
    assert!(c.record(rid(5, 3)).is_none());
    assert_eq!(c.stats().record_bytes_held, held - 2);
    assert_eq!(c.stats().records_held, 2);
    assert!(c.is_running());
}

#[test]
fn g_33_the_client_writes_delete_record_with_key_topic_and_stamp() {
    let mut c = ready();
    let own = own_record(&mut c);
    sent(&mut c);
    c.delete_record(own, 77).unwrap();
    assert_eq!(
        sent(&mut c),
        vec![json!({"message_type": "DeleteRecord", "value": {
            "key_id": own.key_id, "topic_id": own.topic_id, "tick_time": 77}})]
    );
}

#[test]
fn g_18_a_batch_entry_for_a_key_never_introduced_is_refused_even_without_records() {
    // A nameless entry is only for a key already introduced; one for an unknown id, with no
    // classes nor records, still names a key the maps do not hold. (One with stamps and no
    // values is malformed whatever its key: G-34.)
    for entry in [
        json!({"key_id": 6}),
        json!({"key_id": 6, "topics": {}}),
        json!({"key_id": 6, "tick_times": {}}),
    ] {
        let mut c = with_key("k");
        c.receive(2, "BatchUpdate", json!({"keys": [entry.clone()]}));
        assert_eq!(
            stopped_with(&mut c),
            vec![(
                StopReason::Error,
                Some(Violation::UnknownId { kind: "key", id: 6 })
            )],
            "{entry}"
        );
    }
    // The same entry for a known key is fine.
    let mut c = with_key("k");
    c.receive(2, "BatchUpdate", json!({"keys": [{"key_id": 5}]}));
    assert!(c.is_running());
}

// ---- review of G-19, G-23, G-27 clause by clause ----

#[test]
fn g_19_id_zero_is_a_violation_in_every_id_member() {
    // Every member that carries a key or topic id refuses 0, not only the three introductions
    // and the record update: a zero in any of them is a typed violation, never applied.
    let rec = |k: u64, t: u64| json!({"key_id": k, "topic_id": t});
    let diagnostic = json!({"reason": "InputMissing", "missing_inputs": [], "text": ""});
    for (mt, v) in [
        (
            "JSONRecordUpdate",
            json!({"record_id": rec(5, 0), "value": 1}),
        ),
        ("DeleteRecord", json!({"key_id": 0, "topic_id": 3})),
        ("DeleteRecord", json!({"key_id": 5, "topic_id": 0})),
        (
            "RecordTick",
            json!({"record_id": rec(0, 3), "tick_time": 1}),
        ),
        (
            "RecordTick",
            json!({"record_id": rec(5, 0), "tick_time": 1}),
        ),
        (
            "RecordDiagnostic",
            json!({"record_id": rec(0, 3), "diagnostic": diagnostic}),
        ),
        (
            "RecordDiagnostic",
            json!({"record_id": rec(5, 0), "diagnostic": diagnostic}),
        ),
        ("KeyIdRetired", json!({"key_id": 0})),
        (
            "KeyUpdate",
            json!({"key_id": 0, "deleted_class": "A", "class_list": []}),
        ),
        (
            "ClientIntroducedKeyInvalidated",
            json!({"client_introduced_key_id": 0}),
        ),
        (
            "BatchUpdate",
            json!({"keys": [{"key_id": 0, "name": "z", "topics": {"3": 1}}]}),
        ),
        (
            "BatchUpdate",
            json!({"keys": [{"key_id": 5, "topics": {"0": 1}}]}),
        ),
        (
            "BatchUpdate",
            json!({"keys": [{"key_id": 5, "topics": {"3": 1}, "tick_times": {"0": 9}}]}),
        ),
    ] {
        let mut c = with_record();
        c.receive(2, mt, v.clone());
        let stops = stopped_with(&mut c);
        assert!(
            matches!(
                stops.as_slice(),
                [(StopReason::Error, Some(Violation::ZeroId { .. }))]
            ),
            "{mt} {v}: {stops:?}"
        );
        // Nothing of it was applied: the record under the good ids is as it was.
        assert_eq!(
            c.record(rid(5, 3)).unwrap().value,
            Some(json!(10)),
            "{mt} {v}"
        );
    }
}

#[test]
fn g_19_client_counters_start_at_one_on_every_connection() {
    // Ids are per connection: a new start() counts from 1 again, whatever the last session used.
    let mut c = ready();
    for n in 0..3 {
        c.introduce_topic(&format!("t{n}")).unwrap();
        c.introduce_key(&format!("k{n}"), "A").unwrap();
        c.echo().unwrap();
    }
    c.start(10, (8, 9));
    c.handle_text(11, &server_intro(JSON_VERSION, IV));
    sent(&mut c);
    assert_eq!(c.introduce_topic("t2").unwrap(), 1);
    assert_eq!(c.introduce_key("k2", "A").unwrap(), 1);
    assert_eq!(c.echo().unwrap(), 1);
    let out = sent(&mut c);
    assert_eq!(out[0]["value"]["topic_id"], 1);
    assert_eq!(out[1]["value"]["key_id"], 1);
    assert_eq!(out[2]["value"]["msg_ref"], 1);
}

#[test]
fn g_23_key_id_retired_drops_only_that_server_key_mapping() {
    // The server retires its key id 1, which is also the id this client gave its own key: only
    // the server's mapping goes. The client's key, the server's topics and other keys stay.
    let mut c = with_record();
    let own = own_record(&mut c);
    assert_eq!(own.key_id, 1);
    key(&mut c, 1, "server_one", &["A"]);
    update(&mut c, 1, 3, json!(7));
    sent(&mut c);
    events(&mut c);
    c.receive(2, "KeyIdRetired", json!({"key_id": 1}));
    assert!(c.is_running());
    assert!(c.server_key(1).is_none());
    assert!(c.record(rid(1, 3)).is_none());
    assert_eq!(c.server_key(5).unwrap().0, "k1");
    assert_eq!(c.server_topic(3), Some("price"));
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(10)));
    // No event: not a data teardown, and the client's own key is not invalidated.
    assert!(events(&mut c).is_empty());
    c.publish(own, &json!(3), 0).unwrap();
    assert_eq!(sent(&mut c)[0]["message_type"], "JSONRecordUpdate");
}

#[test]
fn g_27_a_null_in_a_batch_deletes_the_record() {
    // Null means absent in a batch topic as in a record update: the record goes, with the event.
    let mut c = with_record();
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 5, "topics": {"3": null}}]}),
    );
    assert!(c.is_running());
    assert!(c.record(rid(5, 3)).is_none());
    assert_eq!(c.stats().records_held, 0);
    assert_eq!(
        events(&mut c),
        vec![Event::Record {
            record_id: rid(5, 3),
            value: None
        }]
    );
    // A zero in a batch is a value.
    c.receive(
        3,
        "BatchUpdate",
        json!({"keys": [{"key_id": 5, "topics": {"3": 0}}]}),
    );
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(0)));
}

#[test]
fn g_15_a_beat_before_the_introduction_is_judged_by_the_larger_interval() {
    // A server heartbeat may come before its introduction (G-6). The introduction that then
    // advertises a larger interval makes liveness that larger interval, counted from that beat:
    // the client must not time out on its own smaller interval while the server keeps its cadence.
    let mut c = started(Config {
        heartbeat_timeout_interval: 1000,
        ..config()
    });
    alive(&mut c, 10);
    c.handle_text(20, &server_intro(JSON_VERSION, 5000));
    assert!(c.is_running());
    times_out_at(&mut c, 5010);
}

#[test]
fn g_36_a_teardowns_remaining_classes_past_the_id_name_bytes_end_the_session() {
    // The remaining class list of a teardown becomes the key's classes: it counts against the
    // id-name byte bound like an additive update does, and past it the session ends.
    let mut c = name_bytes_bound(6);
    key(&mut c, 5, "kk", &["AB", "CD"]);
    events(&mut c);
    // The remaining list replaces the classes: 2 + 4 bytes fit exactly.
    c.receive(
        2,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "AB", "class_list": ["CD", "EF"]}),
    );
    assert!(c.is_running());
    assert_eq!(c.stats().id_name_bytes_held, 6);
    events(&mut c);
    c.receive(
        3,
        "KeyUpdate",
        json!({"key_id": 5, "deleted_class": "CD", "class_list": ["EF", "GHI"]}),
    );
    id_map_full(&mut c, "key", 5, "max_id_name_bytes", 6);
    assert!(c.stats().id_name_bytes_held <= 6);
}

#[test]
fn g_27_a_null_write_is_sent_as_a_null_value() {
    // The client's delete by value: the member is written as `null`, never left out nor turned
    // into a zero; a NaN float goes out the same way (G-28), and a zero stays `0`.
    let mut c = ready();
    let own = own_record(&mut c);
    sent(&mut c);
    c.publish(own, &Value::Null, 0).unwrap();
    c.publish(own, &float_value(f64::NAN), 0).unwrap();
    c.publish(own, &json!(0), 0).unwrap();
    let texts: Vec<String> = std::iter::from_fn(|| c.poll_transmit()).collect();
    assert_eq!(texts.len(), 3);
    for t in &texts[..2] {
        assert!(t.contains(r#""value":null"#), "{t}");
    }
    assert!(texts[2].contains(r#""value":0"#), "{}", texts[2]);
    let m: Value = serde_json::from_str(&texts[0]).unwrap();
    assert_eq!(m["message_type"], "JSONRecordUpdate");
    assert_eq!(
        m["value"]["record_id"],
        json!({"key_id": own.key_id, "topic_id": own.topic_id})
    );
}

#[test]
fn g_14_the_grace_uses_the_own_interval_when_larger() {
    // The grace is ten liveness intervals, and liveness is the larger of both: a server that
    // advertises less than the client's own interval does not shorten the first-beat grace.
    let mut c = introduced(config(), 1000);
    times_out_at(&mut c, 10 * IV);
}

#[test]
fn g_26_a_record_update_without_its_value_is_a_violation() {
    // `value` is a required member of a JSONRecordUpdate (only `tick_time` is optional): its
    // absence is malformed input, a typed violation, not a delete of the cached record. An
    // explicit null is the delete (G-27).
    let mut c = with_record();
    c.receive(
        2,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 5, "topic_id": 3}, "tick_time": 9}),
    );
    assert_eq!(
        stopped_with(&mut c),
        vec![(
            StopReason::Error,
            Some(Violation::BadMember {
                message_type: "JSONRecordUpdate",
                member: "value"
            })
        )]
    );
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(10)));
}

#[test]
fn g_34_a_batch_stamp_for_a_topic_the_entry_carries_no_value_of_is_a_violation() {
    // The stamps name the same topics as the values beside them: a stamp for another topic,
    // introduced or not, stamps nothing and is malformed, never silently dropped.
    for stamps in [json!({"4": 500}), json!({"3": 500, "9": 600})] {
        let mut c = with_record();
        topic(&mut c, 4, "other");
        events(&mut c);
        c.receive(
            2,
            "BatchUpdate",
            json!({"keys": [{"key_id": 5, "topics": {"3": 11}, "tick_times": stamps.clone()}]}),
        );
        assert_eq!(
            stopped_with(&mut c),
            vec![(
                StopReason::Error,
                Some(Violation::BadMember {
                    message_type: "BatchUpdate",
                    member: "tick_times"
                })
            )],
            "{stamps}"
        );
    }
    // Stamps for a subset of the values are well formed: the others take none.
    let mut c = with_record();
    c.receive(
        2,
        "BatchUpdate",
        json!({"keys": [{"key_id": 5, "topics": {"3": 11}, "tick_times": {}}]}),
    );
    assert!(c.is_running());
    assert_eq!(c.record(rid(5, 3)).unwrap().value, Some(json!(11)));
}
