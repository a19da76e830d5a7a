//! The server model on its own: raw client messages in, what it sends checked as JSON.

use gar_sim::{sample_config, ConnId, Counters, EndCause, Output, Server, ServerConfig};
use serde_json::{json, Value};

fn msg(mt: &str, v: Value) -> String {
    json!({"message_type": mt, "value": v}).to_string()
}

/// Hands the server one message from connection `c` at time 0.
fn send(s: &mut Server, c: ConnId, mt: &str, v: Value) {
    s.handle_text(c, 0, &msg(mt, v));
}

fn intro(interval: u64) -> String {
    msg(
        "Introduction",
        json!({"version": gar_sim::JSON_VERSION, "heartbeat_timeout_interval": interval,
               "user": "u", "application": "a", "uuid": {"low": 1, "high": 2}}),
    )
}

fn out(s: &mut Server, c: ConnId) -> Vec<Output> {
    std::iter::from_fn(|| s.poll_transmit(c)).collect()
}

fn texts(s: &mut Server, c: ConnId) -> Vec<Value> {
    out(s, c)
        .into_iter()
        .filter_map(|o| match o {
            Output::Text(t) => Some(serde_json::from_str(&t).expect("JSON")),
            _ => None,
        })
        .collect()
}

/// The first failed write of the one message the server sent `c`, an `Error`.
fn first_failure(s: &mut Server, c: ConnId) -> Value {
    let v = texts(s, c);
    assert_eq!(types(&v), ["Error"], "{v:?}");
    v[0]["value"]["failed_writes"][0].clone()
}

fn types(v: &[Value]) -> Vec<String> {
    v.iter()
        .map(|m| m["message_type"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn open(s: &mut Server) -> ConnId {
    let c = s.connect(0);
    s.handle_text(c, 0, &intro(1000));
    out(s, c);
    c
}

/// Introduces key `key` (class Underlier) as id `kid` and topic `topic` as id `tid`, then writes.
fn write(s: &mut Server, c: ConnId, (kid, key): (u64, &str), (tid, topic): (u64, &str), v: Value) {
    send(
        s,
        c,
        "KeyUpdate",
        json!({"key_id": kid, "name": key, "class_list": ["Underlier"]}),
    );
    send(
        s,
        c,
        "TopicIntroduction",
        json!({"topic_id": tid, "name": topic}),
    );
    send(
        s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": kid, "topic_id": tid}, "value": v}),
    );
}

fn subscribe(s: &mut Server, c: ConnId, v: Value) -> Vec<Value> {
    send(s, c, "Subscribe", v);
    texts(s, c)
}

fn statuses(v: &[Value]) -> Vec<String> {
    v.iter()
        .filter(|m| m["message_type"] == "SubscriptionStatus")
        .map(|m| m["value"]["status"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn the_server_introduces_itself_after_the_client() {
    let mut s = Server::new(sample_config());
    let c = s.connect(0);
    s.handle_text(c, 0, &intro(1000));
    let v = texts(&mut s, c);
    assert_eq!(types(&v), ["Introduction"]);
    assert_eq!(v[0]["value"]["version"], gar_sim::JSON_VERSION);
    assert_eq!(v[0]["value"]["heartbeat_timeout_interval"], 4000);
    assert_eq!(
        s.client_name(c),
        Some("a u 00000000000000020000000000000001")
    );
}

#[test]
fn a_message_before_the_introduction_is_fatal() {
    let mut s = Server::new(sample_config());
    let c = s.connect(0);
    send(&mut s, c, "Heartbeat", json!({"u_milliseconds": 1}));
    let o = out(&mut s, c);
    assert!(matches!(&o[0], Output::Text(t) if t.contains("\"recoverable\":false")));
    assert_eq!(o[1], Output::Close(Some(1000)));
    assert!(matches!(s.ended(c), Some(EndCause::Violation(_))));
}

#[test]
fn another_version_is_refused_with_its_text() {
    let mut s = Server::new(sample_config());
    let c = s.connect(0);
    send(
        &mut s,
        c,
        "Introduction",
        json!({"version": 5, "heartbeat_timeout_interval": 1000, "user": "bob"}),
    );
    let v = texts(&mut s, c);
    assert_eq!(v[0]["value"]["message"], "Unsupported version from bob: 5");
    assert_eq!(s.ended(c), Some(&EndCause::VersionRefused(5)));
}

#[test]
fn g_8_the_test_server_refuses_a_higher_version_and_takes_its_own() {
    let own = sample_config().version;
    for (version, refused) in [(own + 1, true), (u64::MAX, true), (own, false)] {
        let mut s = Server::new(sample_config());
        let c = s.connect(0);
        send(
            &mut s,
            c,
            "Introduction",
            json!({"version": version, "heartbeat_timeout_interval": 1000, "user": "bob"}),
        );
        let v = texts(&mut s, c);
        if refused {
            assert_eq!(
                (
                    &v[0]["message_type"],
                    &v[0]["value"]["message"],
                    &v[0]["value"]["recoverable"]
                ),
                (
                    &json!("Error"),
                    &json!(format!("Unsupported version from bob: {version}")),
                    &json!(false)
                )
            );
            assert_eq!(s.ended(c), Some(&EndCause::VersionRefused(version)));
        } else {
            assert_eq!(v[0]["message_type"], "Introduction");
            assert_eq!(s.ended(c), None);
        }
    }
}

#[test]
fn heartbeats_go_out_every_half_interval_without_replaying_a_backlog() {
    let mut s = Server::new(sample_config());
    let c = s.connect(0);
    s.handle_text(c, 0, &intro(1_000_000));
    out(&mut s, c);
    assert_eq!(s.poll_timeout(), Some(2000));
    s.handle_timeout(1999);
    assert!(out(&mut s, c).is_empty());
    s.handle_timeout(2000);
    assert_eq!(types(&texts(&mut s, c)), ["Heartbeat"]);
    // Anchored to the schedule, not to when the timer ran.
    s.handle_timeout(4100);
    assert_eq!(types(&texts(&mut s, c)), ["Heartbeat"]);
    assert_eq!(s.poll_timeout(), Some(6000));
    // Far behind: one beat, the next one interval past now.
    s.handle_timeout(20_000);
    assert_eq!(texts(&mut s, c).len(), 1);
    assert_eq!(s.poll_timeout(), Some(22_000));
}

#[test]
fn the_first_client_heartbeat_gets_ten_intervals() {
    let mut s = Server::new(ServerConfig {
        heartbeat_timeout_interval: 1_000_000,
        ..sample_config()
    });
    let c = s.connect(0);
    s.handle_text(c, 0, &intro(100));
    out(&mut s, c);
    s.handle_timeout(999);
    assert!(s.is_open(c));
    s.handle_timeout(1000);
    assert_eq!(s.ended(c), Some(&EndCause::HeartbeatTimeout));
}

#[test]
fn after_a_heartbeat_the_client_has_one_interval() {
    let mut s = Server::new(ServerConfig {
        heartbeat_timeout_interval: 1_000_000,
        ..sample_config()
    });
    let c = s.connect(0);
    s.handle_text(c, 0, &intro(100));
    s.handle_text(c, 500, &msg("Heartbeat", json!({"u_milliseconds": 1})));
    s.handle_timeout(599);
    assert!(s.is_open(c));
    // Other messages do not count as heartbeats.
    s.handle_text(c, 550, &msg("EchoRequest", json!({"msg_ref": 1})));
    s.handle_timeout(600);
    assert_eq!(s.ended(c), Some(&EndCause::HeartbeatTimeout));
    let v = texts(&mut s, c);
    assert_eq!(
        v.last().expect("an error")["value"]["message"],
        "Heartbeat timeout"
    );
}

#[test]
fn a_silent_server_sends_no_heartbeat() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    s.silence(c);
    s.handle_timeout(5_000);
    assert!(out(&mut s, c).is_empty());
}

#[test]
fn a_snapshot_introduces_topics_and_keys_then_finishes() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "AAPL"), (1, "bid"), json!(1.5));
    out(&mut s, c);
    let v = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Snapshot", "class_list": ["Underlier"]}),
    );
    assert_eq!(statuses(&v), ["ProcessingSnapshot", "Finished"]);
    let topics: Vec<&Value> = v
        .iter()
        .filter(|m| m["message_type"] == "TopicIntroduction")
        .collect();
    let bid = topics
        .iter()
        .find(|t| t["value"]["name"] == "bid")
        .expect("bid introduced")["value"]["topic_id"]
        .clone();
    let batch = v
        .iter()
        .find(|m| m["message_type"] == "BatchUpdate")
        .expect("a batch");
    let k = &batch["value"]["keys"][0];
    assert_eq!(k["name"], "AAPL");
    assert_eq!(k["classes"], json!(["Underlier"]));
    assert_eq!(k["topics"][bid.to_string()].to_string(), "1.5");
    assert!(k.get("tick_times").is_none(), "no stamps unless asked");
}

#[test]
fn g_20_the_test_server_keeps_the_clients_ids_apart_from_its_own() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    // The client's topic 1 is ask and 2 is bid.
    write(&mut s, c, (1, "AAPL"), (1, "ask"), json!(1.5));
    write(&mut s, c, (1, "AAPL"), (2, "bid"), json!(2.5));
    out(&mut s, c);
    let v = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Snapshot", "class_list": ["Underlier"]}),
    );
    let server_id = |name: &str| {
        v.iter()
            .find(|m| m["message_type"] == "TopicIntroduction" && m["value"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} introduced"))["value"]["topic_id"]
            .as_u64()
            .unwrap()
    };
    let (ask, bid) = (server_id("ask"), server_id("bid"));
    assert_ne!(
        (ask, bid),
        (1, 2),
        "the server numbers its own topics: {v:?}"
    );
    let k = &v
        .iter()
        .find(|m| m["message_type"] == "BatchUpdate")
        .expect("a batch")["value"]["keys"][0];
    assert_eq!(k["topics"][ask.to_string()], json!(1.5));
    assert_eq!(k["topics"][bid.to_string()], json!(2.5));
    // The client's own ids still name what the client introduced, whatever the server's mean.
    send(
        &mut s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 1}, "value": 3.5}),
    );
    assert_eq!(s.record("AAPL", "ask"), Some(&json!(3.5)));
    assert_eq!(s.record("AAPL", "bid"), Some(&json!(2.5)));
}

#[test]
fn a_known_key_is_not_named_again_in_a_later_batch() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "AAPL"), (1, "bid"), json!(1));
    let _ = subscribe(
        &mut s,
        c,
        json!({"name": "a", "subscription_mode": "Snapshot"}),
    );
    let v = subscribe(
        &mut s,
        c,
        json!({"name": "b", "subscription_mode": "Snapshot", "include_tick_time": true}),
    );
    let batch = v
        .iter()
        .find(|m| m["message_type"] == "BatchUpdate")
        .expect("a batch");
    let k = &batch["value"]["keys"][0];
    assert!(k.get("name").is_none());
    assert!(k["tick_times"].as_object().is_some_and(|m| m.len() == 1));
}

#[test]
fn key_and_topic_filters_and_exclusions_apply() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "AAPL"), (1, "bid"), json!(1));
    write(&mut s, c, (2, "ABC"), (2, "ask"), json!(2));
    write(&mut s, c, (3, "MSFT"), (1, "bid"), json!(3));
    let v = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Snapshot", "key_filter": "^A",
               "exclude_key_filter": "C$", "topic_filter": "bid"}),
    );
    let batch = v
        .iter()
        .find(|m| m["message_type"] == "BatchUpdate")
        .expect("a batch");
    let keys = batch["value"]["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["name"], "AAPL");
}

#[test]
fn a_snapshot_size_limit_pauses_until_subscribe_continue() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    for (i, k) in ["A", "B", "C"].iter().enumerate() {
        write(&mut s, c, (i as u64 + 1, k), (1, "bid"), json!(i));
    }
    let v = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Streaming", "snapshot_size_limit": 2}),
    );
    assert_eq!(statuses(&v), ["ProcessingSnapshot", "NeedsContinue"]);
    let first = v
        .iter()
        .find(|m| m["message_type"] == "BatchUpdate")
        .expect("a batch");
    assert_eq!(first["value"]["keys"].as_array().map(Vec::len), Some(2));
    // A write during the pause is not streamed yet.
    write(&mut s, c, (1, "A"), (1, "bid"), json!(9));
    assert!(!types(&texts(&mut s, c)).contains(&"JSONRecordUpdate".to_owned()));
    send(&mut s, c, "SubscribeContinue", json!({"name": "s"}));
    let v = texts(&mut s, c);
    assert_eq!(statuses(&v), ["Streaming"]);
    assert_eq!(v[0]["value"]["keys"].as_array().map(Vec::len), Some(1));
}

#[test]
fn a_streaming_subscription_gets_live_writes_with_introductions_first() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    let w = open(&mut s);
    let _ = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Streaming", "class_list": ["Underlier"], "include_tick_time": true}),
    );
    s.handle_timeout(3);
    out(&mut s, c);
    write(&mut s, w, (7, "NEW"), (7, "ask"), json!(4));
    let v = texts(&mut s, c);
    assert_eq!(types(&v), ["KeyUpdate", "JSONRecordUpdate"]);
    let k = v[0]["value"]["key_id"].clone();
    assert_eq!(v[1]["value"]["record_id"]["key_id"], k);
    assert!(v[1]["value"]["tick_time"].as_u64().is_some_and(|t| t > 0));
    // Deleting streams a DeleteRecord; deleting what is missing streams nothing.
    send(
        &mut s,
        w,
        "DeleteRecord",
        json!({"key_id": 7, "topic_id": 7}),
    );
    assert_eq!(types(&texts(&mut s, c)), ["DeleteRecord"]);
    send(
        &mut s,
        w,
        "DeleteRecord",
        json!({"key_id": 7, "topic_id": 7}),
    );
    assert!(texts(&mut s, c).is_empty());
}

#[test]
fn a_refused_subscription_is_an_error_then_finished_only() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    let v = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Snapshot", "class_list": ["Nope"]}),
    );
    assert_eq!(types(&v), ["Error", "SubscriptionStatus"]);
    assert_eq!(v[0]["value"]["recoverable"], true);
    assert_eq!(statuses(&v), ["Finished"]);
    assert!(s.is_open(c));
    let _ = subscribe(
        &mut s,
        c,
        json!({"name": "t", "subscription_mode": "Streaming"}),
    );
    let v = subscribe(
        &mut s,
        c,
        json!({"name": "t", "subscription_mode": "Streaming"}),
    );
    assert_eq!(statuses(&v), ["Finished"], "a duplicate name is refused");
}

#[test]
fn g_41_every_refused_subscribe_is_a_recoverable_error_naming_it_then_finished_alone() {
    let mut s = Server::new(ServerConfig {
        max_subscriptions: 2,
        ..sample_config()
    });
    let c = open(&mut s);
    let w = open(&mut s);
    let t = json!({"name": "t", "subscription_mode": "Streaming", "class_list": ["Underlier"]});
    assert_eq!(
        statuses(&subscribe(&mut s, c, t.clone()))[0],
        "ProcessingSnapshot"
    );
    s.handle_timeout(3);
    out(&mut s, c);
    let refusals = [
        (
            "u",
            json!({"name": "u", "subscription_mode": "Snapshot", "class_list": ["Nope"]}),
            "unknown class",
        ),
        ("t", t, "already active"),
    ];
    let check = |s: &mut Server, name: &str, v: Value, why: &str| {
        let got = subscribe(s, c, v);
        assert_eq!(
            types(&got),
            ["Error", "SubscriptionStatus"],
            "{name}: {got:?}"
        );
        assert_eq!(got[0]["value"]["recoverable"], true, "{name}");
        let text = got[0]["value"]["message"].as_str().unwrap_or("");
        assert!(text.contains(name) && text.contains(why), "{name}: {text}");
        assert_eq!(
            got[1]["value"],
            json!({"name": name, "status": "Finished"}),
            "{name}"
        );
        assert!(s.is_open(c), "{name}");
    };
    for (name, v, why) in refusals {
        check(&mut s, name, v, why);
    }
    let _ = subscribe(
        &mut s,
        c,
        json!({"name": "v", "subscription_mode": "Streaming", "class_list": ["Option"]}),
    );
    check(
        &mut s,
        "x",
        json!({"name": "x", "subscription_mode": "Streaming"}),
        "too many",
    );
    // The refused duplicate left the first t streaming.
    s.handle_timeout(6);
    out(&mut s, c);
    write(&mut s, w, (7, "NEW"), (7, "ask"), json!(4));
    assert!(types(&texts(&mut s, c)).contains(&"JSONRecordUpdate".to_owned()));
}

#[test]
fn unsubscribe_finishes_a_streaming_subscription() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    let _ = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Streaming"}),
    );
    send(&mut s, c, "Unsubscribe", json!({"name": "s"}));
    assert_eq!(statuses(&texts(&mut s, c)), ["Finished"]);
    let w = open(&mut s);
    write(&mut s, w, (1, "A"), (1, "bid"), json!(1));
    assert!(texts(&mut s, c).is_empty());
}

fn cx(s: &mut Server, c: ConnId, r: u64, test: Value, value: Value) -> Value {
    send(
        s,
        c,
        "JSONCompareExchange",
        json!({"record_id": {"key_id": 1, "topic_id": 2}, "msg_ref": r, "test": test, "value": value}),
    );
    texts(s, c).pop().expect("a result")["value"].clone()
}

#[test]
fn compare_exchange_null_rules() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "A"), (1, "bid"), json!(1));
    send(
        &mut s,
        c,
        "TopicIntroduction",
        json!({"topic_id": 2, "name": "ask"}),
    );
    out(&mut s, c);
    // A missing record on a plain topic is not 0.
    let r = cx(&mut s, c, 1, json!(0), json!(5));
    assert_eq!(
        (
            r["success"].clone(),
            r["reason"].clone(),
            r["value"].clone()
        ),
        (json!(false), json!("CompareMismatch"), Value::Null)
    );
    // Null matches missing: create if absent.
    let r = cx(&mut s, c, 2, Value::Null, json!(5));
    assert_eq!(
        (r["msg_ref"].clone(), r["success"].clone()),
        (json!(2), json!(true))
    );
    assert!(r.get("reason").is_none());
    // Numbers compare by value.
    let r = cx(&mut s, c, 3, json!(5.0), json!(6));
    assert_eq!(r["success"], true);
    // A null value deletes.
    let r = cx(&mut s, c, 4, json!(6), Value::Null);
    assert_eq!(r["success"], true);
    assert_eq!(s.record("A", "ask"), None);
}

#[test]
fn a_default_annotated_topic_reads_missing_as_its_default() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "A"), (1, "bid"), json!(1));
    send(
        &mut s,
        c,
        "TopicIntroduction",
        json!({"topic_id": 2, "name": "lock"}),
    );
    out(&mut s, c);
    let r = cx(&mut s, c, 1, Value::Null, json!(true));
    assert_eq!(
        r["success"], false,
        "missing reads as the default false, not null"
    );
    let r = cx(&mut s, c, 2, json!(false), json!(true));
    assert_eq!(r["success"], true);
    assert_eq!(s.record("A", "lock"), Some(&json!(true)));
}

/// A compare-exchange on key 1 and topic `tid`; the result's value object.
fn cx_on(s: &mut Server, c: ConnId, tid: u64, r: u64, test: Value, value: Value) -> Value {
    send(
        s,
        c,
        "JSONCompareExchange",
        json!({"record_id": {"key_id": 1, "topic_id": tid}, "msg_ref": r, "test": test, "value": value}),
    );
    texts(s, c).pop().expect("a result")["value"].clone()
}

fn outcome_of(r: &Value) -> (Value, Value, Value) {
    (
        r["success"].clone(),
        r.get("reason").cloned().unwrap_or(Value::Null),
        r.get("value").cloned().unwrap_or(Value::Null),
    )
}

#[test]
fn g_50_a_null_value_deletes_so_the_record_reads_missing_again_on_both_kinds_of_topic() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "A"), (1, "bid"), json!(1));
    for (tid, name) in [(2, "ask"), (3, "lock")] {
        send(
            &mut s,
            c,
            "TopicIntroduction",
            json!({"topic_id": tid, "name": name}),
        );
    }
    out(&mut s, c);
    let ok = (json!(true), Value::Null, Value::Null);
    let mismatch = |v: Value| (json!(false), json!("CompareMismatch"), v);
    // A plain numeric topic: create if absent, then compare-and-delete, which only one of two
    // readers who saw 7 wins; the record is gone, not stored as 0, and null matches it again.
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 2, 1, Value::Null, json!(7))),
        ok
    );
    assert_eq!(s.record("A", "ask"), Some(&json!(7)));
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 2, 2, json!(7), Value::Null)),
        ok
    );
    assert_eq!(s.record("A", "ask"), None);
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 2, 3, json!(7), Value::Null)),
        mismatch(Value::Null)
    );
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 2, 4, json!(0), json!(1))),
        mismatch(Value::Null)
    );
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 2, 5, Value::Null, json!(8))),
        ok
    );
    // A default-annotated topic: a deleted record reads as the default again, not as null.
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 3, 6, json!(false), json!(true))),
        ok
    );
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 3, 7, json!(true), Value::Null)),
        ok
    );
    assert_eq!(s.record("A", "lock"), None);
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 3, 8, Value::Null, json!(true))),
        mismatch(json!(false))
    );
    assert_eq!(
        outcome_of(&cx_on(&mut s, c, 3, 9, json!(false), json!(true))),
        ok
    );
}

#[test]
fn g_22_the_test_server_takes_the_relative_and_the_qualified_spelling_as_one_topic() {
    let mut s = Server::new(sample_config());
    let c = s.connect(0);
    s.handle_text(
        c,
        0,
        &msg(
            "Introduction",
            json!({"version": gar_sim::JSON_VERSION, "heartbeat_timeout_interval": 1000,
                   "user": "u", "application": "a", "uuid": {"low": 1, "high": 2},
                   "working_namespace": "ns"}),
        ),
    );
    out(&mut s, c);
    write(&mut s, c, (1, "A"), (1, "bid"), json!(1));
    send(
        &mut s,
        c,
        "TopicIntroduction",
        json!({"topic_id": 2, "name": "ns::bid"}),
    );
    assert_eq!(s.counters().failed_writes_logged, 0, "no failure");
    assert_eq!(s.record("A", "bid"), Some(&json!(1)));
    // A write under either id is a write of the one topic.
    send(
        &mut s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 2}, "value": 2}),
    );
    assert_eq!(s.counters().failed_writes_logged, 0, "no failure");
    assert_eq!(s.record("A", "bid"), Some(&json!(2)));
    let r = cx_on(&mut s, c, 2, 1, json!(2), json!(3));
    assert_eq!(r["success"], true);
    send(
        &mut s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 1}, "value": 4}),
    );
    assert_eq!(s.record("A", "bid"), Some(&json!(4)));
    // Another namespace's spelling is another topic, unknown here.
    send(
        &mut s,
        c,
        "TopicIntroduction",
        json!({"topic_id": 3, "name": "other::bid"}),
    );
    send(
        &mut s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 3}, "value": 5}),
    );
    assert_eq!(s.counters().failed_writes_logged, 1, "a failed write");
    assert_eq!(s.record("A", "bid"), Some(&json!(4)));
}

#[test]
fn ownership_is_acquired_denies_others_and_is_released() {
    let mut s = Server::new(sample_config());
    let a = open(&mut s);
    let b = open(&mut s);
    send(
        &mut s,
        a,
        "ActiveOwnership",
        json!({"msg_ref": 0, "ownership_action": "Acquire"}),
    );
    write(&mut s, a, (1, "K"), (1, "bid"), json!(1));
    assert_eq!(s.owner("K"), Some(a));
    send(&mut s, b, "ActiveOwnership", json!({"msg_ref": 5}));
    write(&mut s, b, (1, "K"), (1, "bid"), json!(2));
    assert_eq!(s.record("K", "bid"), Some(&json!(1)));
    assert_eq!(
        first_failure(&mut s, b)["reason"]["record_write"],
        "WriteDenied"
    );
    // Skipping the checks writes anyway.
    send(
        &mut s,
        b,
        "ActiveOwnership",
        json!({"msg_ref": 5, "skip_ownership_checks": true}),
    );
    send(
        &mut s,
        b,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 1}, "value": 3}),
    );
    assert_eq!(s.record("K", "bid"), Some(&json!(3)));
    // Release by the owner.
    send(
        &mut s,
        a,
        "ActiveOwnership",
        json!({"msg_ref": 0, "ownership_action": "Release"}),
    );
    send(
        &mut s,
        a,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 1}, "value": 4}),
    );
    assert_eq!(s.owner("K"), None);
}

#[test]
fn require_existing_refuses_to_create_a_key() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    send(
        &mut s,
        c,
        "ActiveOwnership",
        json!({"msg_ref": 1, "require_existing": true}),
    );
    send(
        &mut s,
        c,
        "KeyUpdate",
        json!({"key_id": 1, "name": "K", "class_list": ["Underlier"]}),
    );
    assert!(s.classes("K").is_empty());
    assert_eq!(
        first_failure(&mut s, c)["reason"]["key_write"],
        "KeyNotFound"
    );
}

#[test]
fn an_unmapped_id_is_fatal() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    send(
        &mut s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 9, "topic_id": 9}, "value": 1}),
    );
    assert!(matches!(s.ended(c), Some(EndCause::Violation(_))));
}

#[test]
fn a_name_that_contradicts_a_key_id_is_fatal() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "A"), (1, "bid"), json!(1));
    send(
        &mut s,
        c,
        "KeyUpdate",
        json!({"key_id": 1, "name": "B", "class_list": ["Underlier"]}),
    );
    assert!(matches!(s.ended(c), Some(EndCause::Violation(_))));
}

#[test]
fn a_downgrade_keeps_the_bases_and_their_records() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "K"), (1, "bid"), json!(1));
    send(
        &mut s,
        c,
        "KeyUpdate",
        json!({"key_id": 1, "name": "K", "class_list": ["Option"]}),
    );
    send(
        &mut s,
        c,
        "TopicIntroduction",
        json!({"topic_id": 2, "name": "name"}),
    );
    send(
        &mut s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 2}, "value": "n"}),
    );
    let _ = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Streaming"}),
    );
    send(
        &mut s,
        c,
        "KeyUpdate",
        json!({"key_id": 1, "name": "K", "deleted_class": "Underlier", "class_list": ["Option"]}),
    );
    assert_eq!(s.classes("K"), ["Option"]);
    assert_eq!(s.record("K", "bid"), Some(&json!(1)), "Option covers bid");
    assert_eq!(s.record("K", "name"), None, "only Underlier covered name");
    let v = texts(&mut s, c);
    assert_eq!(types(&v), ["KeyUpdate"]);
    assert_eq!(v[0]["value"]["deleted_class"], "Underlier");
    assert_eq!(v[0]["value"]["class_list"], json!(["Option"]));
}

#[test]
fn a_whole_key_delete_is_per_class_then_retired() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    write(&mut s, c, (1, "K"), (1, "bid"), json!(1));
    send(
        &mut s,
        c,
        "KeyUpdate",
        json!({"key_id": 1, "name": "K", "class_list": ["Option"]}),
    );
    let _ = subscribe(
        &mut s,
        c,
        json!({"name": "s", "subscription_mode": "Streaming"}),
    );
    s.remove_key("K");
    let v = texts(&mut s, c);
    assert_eq!(
        types(&v),
        [
            "KeyUpdate",
            "KeyUpdate",
            "KeyIdRetired",
            "ClientIntroducedKeyInvalidated"
        ]
    );
    assert!(v[..2].iter().all(|m| m["value"]["class_list"] == json!([])));
    assert_eq!(
        v[3]["value"]["client_introduced_key_id"], 1,
        "the writer's own id is dead"
    );
    // A write still under the dead id fails as a write; the connection stays.
    send(
        &mut s,
        c,
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 1, "topic_id": 1}, "value": 2}),
    );
    assert!(s.is_open(c));
    assert!(s.record("K", "bid").is_none());
    assert!(s.record("K", "bid").is_none());
}

#[test]
fn echo_is_answered_with_its_msg_ref() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    send(&mut s, c, "EchoRequest", json!({"msg_ref": 77}));
    let v = texts(&mut s, c);
    assert_eq!(
        v[0],
        json!({"message_type": "EchoResponse", "value": {"msg_ref": 77}})
    );
}

#[test]
fn logoff_is_answered_with_a_close_and_releases_ownership() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    send(
        &mut s,
        c,
        "ActiveOwnership",
        json!({"ownership_action": "Acquire"}),
    );
    write(&mut s, c, (1, "K"), (1, "bid"), json!(1));
    out(&mut s, c);
    s.handle_text(c, 0, &json!({"message_type": "Logoff"}).to_string());
    assert_eq!(out(&mut s, c), [Output::Close(Some(1000))]);
    assert_eq!(s.ended(c), Some(&EndCause::Logoff));
    assert_eq!(s.owner("K"), None);
}

#[test]
fn g_58_a_close_without_logoff_is_accepted_as_a_clean_end() {
    use gar_sim::PeerClose;
    for (close, cause, answer) in [
        (
            PeerClose::Code(Some(1000)),
            EndCause::ClosedCleanly(Some(1000)),
            vec![Output::Close(Some(1000))],
        ),
        (
            PeerClose::Code(None),
            EndCause::ClosedCleanly(None),
            vec![Output::Close(None)],
        ),
        (PeerClose::Dropped, EndCause::Dropped, vec![]),
    ] {
        let mut s = Server::new(sample_config());
        let c = open(&mut s);
        send(
            &mut s,
            c,
            "ActiveOwnership",
            json!({"ownership_action": "Acquire"}),
        );
        write(&mut s, c, (1, "K"), (1, "bid"), json!(1));
        out(&mut s, c);
        s.handle_close(c, close);
        // No Error and no Logoff is owed: the close is answered (when it was a close frame)
        // and the session ends as it would on a Logoff, its ownership released.
        assert_eq!(out(&mut s, c), answer, "{close:?}");
        assert_eq!(s.ended(c), Some(&cause));
        assert_eq!(s.owner("K"), None, "{close:?}");
        let d = open(&mut s);
        write(&mut s, d, (1, "K"), (1, "bid"), json!(2));
        assert_eq!(s.record("K", "bid"), Some(&json!(2)), "{close:?}");
        assert!(texts(&mut s, d)
            .iter()
            .all(|m| m["message_type"] != "Error"));
    }
}

#[test]
fn server_logoff_sends_logoff_then_closes() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    s.logoff(c);
    let o = out(&mut s, c);
    assert!(matches!(&o[0], Output::Text(t) if t.contains("Logoff")));
    assert_eq!(o[1], Output::Close(Some(1000)));
}

#[test]
fn undecodable_text_from_the_client_is_fatal_and_the_fault_sends_some() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    s.send_undecodable(c);
    assert!(
        matches!(&out(&mut s, c)[0], Output::Text(t) if serde_json::from_str::<Value>(t).is_err())
    );
    s.handle_text(c, 0, "{not json");
    assert!(matches!(s.ended(c), Some(EndCause::Violation(_))));
}

#[test]
fn a_full_outbox_drops_the_connection_and_counts_it() {
    let mut s = Server::new(ServerConfig {
        max_outbox_count: 3,
        ..sample_config()
    });
    let c = open(&mut s);
    for r in 0..5 {
        send(&mut s, c, "EchoRequest", json!({"msg_ref": r}));
    }
    assert_eq!(s.counters().outbox_overflows, 1);
    assert_eq!(s.ended(c), Some(&EndCause::Overflow));
    assert_eq!(out(&mut s, c), [Output::Close(Some(1008))]);
}

#[test]
fn the_outbox_bound_counts_bytes_too() {
    // The introduction (about 105 bytes) fits; each echo answer is 52 bytes.
    let mut s = Server::new(ServerConfig {
        max_outbox_bytes: 150,
        ..sample_config()
    });
    let c = open(&mut s);
    send(&mut s, c, "EchoRequest", json!({"msg_ref": 1}));
    send(&mut s, c, "EchoRequest", json!({"msg_ref": 2}));
    assert!(s.is_open(c), "{:?}", s.ended(c));
    send(&mut s, c, "EchoRequest", json!({"msg_ref": 3}));
    assert_eq!(s.ended(c), Some(&EndCause::Overflow));
}

#[test]
fn the_record_of_received_frames_is_bounded_and_counted() {
    let mut s = Server::new(ServerConfig {
        max_recorded: 2,
        ..sample_config()
    });
    let c = open(&mut s);
    send(&mut s, c, "Heartbeat", json!({"u_milliseconds": 1}));
    send(&mut s, c, "Heartbeat", json!({"u_milliseconds": 2}));
    assert_eq!(s.received(c).len(), 2);
    assert_eq!(
        s.counters(),
        Counters {
            recorded_dropped: 1,
            ..Counters::default()
        }
    );
}

#[test]
fn the_record_of_received_frames_is_bounded_in_bytes_and_counted() {
    let beat = msg("Heartbeat", json!({"u_milliseconds": 1}));
    let mut s = Server::new(ServerConfig {
        max_recorded_bytes: intro(1000).len() + 2 * beat.len() + 1,
        ..sample_config()
    });
    let c = open(&mut s);
    for _ in 0..3 {
        s.handle_text(c, 0, &beat);
    }
    // The introduction and two beats fit in the byte bound, the third beat does not, though
    // the count bound is far.
    assert_eq!(s.received(c).len(), 3);
    assert_eq!(s.received_at(c).len(), 3);
    assert_eq!(s.counters().recorded_dropped, 1);
    // A message over what is left is not recorded even when a smaller one would be.
    let mut s = Server::new(ServerConfig {
        max_recorded_bytes: 1_000,
        ..sample_config()
    });
    let c = open(&mut s);
    let big = msg(
        "Heartbeat",
        json!({"u_milliseconds": 1, "pad": "x".repeat(2_000)}),
    );
    s.handle_text(c, 0, &big);
    assert_eq!(s.received(c).len(), 1, "only the introduction");
    s.handle_text(c, 0, &beat);
    assert_eq!(s.received(c).len(), 2);
}

#[test]
fn a_store_at_its_key_limit_fails_the_write_instead_of_growing() {
    let mut s = Server::new(ServerConfig {
        max_keys: 1,
        ..sample_config()
    });
    let c = open(&mut s);
    send(&mut s, c, "ActiveOwnership", json!({"msg_ref": 1}));
    write(&mut s, c, (1, "A"), (1, "bid"), json!(1));
    out(&mut s, c);
    send(
        &mut s,
        c,
        "KeyUpdate",
        json!({"key_id": 2, "name": "B", "class_list": ["Underlier"]}),
    );
    assert!(s.classes("B").is_empty());
    assert_eq!(first_failure(&mut s, c)["reason"]["key_write"], "KeyLimit");
}

#[test]
fn a_binary_message_is_fatal() {
    let mut s = Server::new(sample_config());
    let c = open(&mut s);
    s.handle_binary(c, 0);
    assert!(matches!(s.ended(c), Some(EndCause::Violation(_))));
}

#[test]
fn pruning_forgets_the_oldest_ended_connections_only() {
    let mut s = Server::new(sample_config());
    let a = open(&mut s);
    let b = open(&mut s);
    let live = open(&mut s);
    let d = open(&mut s);
    for c in [a, b, d] {
        s.handle_text(c, 0, &json!({"message_type": "Logoff"}).to_string());
    }
    s.prune_ended(2);
    assert_eq!(s.connections(), vec![b, live, d]);
}

#[test]
fn a_server_without_heartbeats_sends_none() {
    let mut s = Server::new(ServerConfig {
        send_heartbeats: false,
        ..sample_config()
    });
    let c = s.connect(0);
    s.handle_text(c, 0, &intro(1_000_000));
    out(&mut s, c);
    s.handle_timeout(100_000);
    assert!(out(&mut s, c).is_empty());
    assert_eq!(
        s.poll_timeout(),
        Some(10_000_000),
        "only the watch on the client is due"
    );
}

#[test]
fn ignored_heartbeats_end_the_connection_by_the_server_timeout() {
    let mut s = Server::new(ServerConfig {
        heartbeat_timeout_interval: 1_000_000,
        ..sample_config()
    });
    let c = s.connect(0);
    s.handle_text(c, 0, &intro(100));
    s.ignore_heartbeats(c);
    s.handle_text(c, 900, &msg("Heartbeat", json!({"u_milliseconds": 1})));
    s.handle_timeout(1000);
    assert_eq!(s.ended(c), Some(&EndCause::HeartbeatTimeout));
}

#[test]
fn deletes_of_an_owned_key_are_denied_to_others_naming_the_class() {
    let mut s = Server::new(sample_config());
    let a = open(&mut s);
    let b = open(&mut s);
    send(
        &mut s,
        a,
        "ActiveOwnership",
        json!({"msg_ref": 0, "ownership_action": "Acquire"}),
    );
    write(&mut s, a, (1, "K"), (1, "bid"), json!(1));
    write(&mut s, a, (2, "L"), (1, "bid"), json!(2));
    out(&mut s, a);
    send(&mut s, b, "ActiveOwnership", json!({"msg_ref": 5}));
    let denied = |s: &mut Server, text: &str| {
        s.handle_text(b, 0, text);
        first_failure(s, b)
    };
    // One class of another's key: denied, the class named.
    let f = denied(
        &mut s,
        &msg(
            "KeyUpdate",
            json!({"key_id": 1, "name": "K", "deleted_class": "Underlier", "class_list": []}),
        ),
    );
    assert_eq!(f["reason"]["key_write"], "DeleteDenied");
    assert_eq!(
        (f["key_name"].as_str(), f["class_name"].as_str()),
        (Some("K"), Some("Underlier"))
    );
    // The whole key: denied, no class named.
    send(
        &mut s,
        b,
        "KeyUpdate",
        json!({"key_id": 2, "name": "K", "class_list": []}),
    );
    let f = denied(&mut s, &msg("DeleteKeyCommand", json!({"key_id": 2})));
    assert_eq!(f["reason"]["key_write"], "DeleteDenied");
    assert_eq!(
        (f["key_id"].as_u64(), f["class_name"].as_str()),
        (Some(2), Some(""))
    );
    assert_eq!(s.classes("K"), ["Underlier"]);
    // Skipping the checks deletes another's key.
    send(
        &mut s,
        b,
        "ActiveOwnership",
        json!({"msg_ref": 6, "skip_ownership_checks": true}),
    );
    send(
        &mut s,
        b,
        "KeyUpdate",
        json!({"key_id": 3, "name": "L", "class_list": []}),
    );
    send(&mut s, b, "DeleteKeyCommand", json!({"key_id": 3}));
    assert!(s.classes("L").is_empty());
    assert_eq!(s.record("L", "bid"), None);
    // The owner deletes its own key's class.
    send(
        &mut s,
        a,
        "KeyUpdate",
        json!({"key_id": 1, "name": "K", "deleted_class": "Underlier", "class_list": []}),
    );
    assert!(s.classes("K").is_empty());
    assert_eq!(s.record("K", "bid"), None);
}
