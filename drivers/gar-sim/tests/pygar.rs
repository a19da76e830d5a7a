//! The reference Python client (`pygar-client` 4.27.0) against the loopback server: the scripted
//! session `tests/pygar/session.py` and each way a session ends, every run bounded in time.
//!
//! These tests FAIL when `python3` or the package is missing; CI installs it with
//! `python3 -m pip install pygar-client==4.27.0`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gar_client::codec::write::{Ownership, OwnershipAction};
use gar_client::codec::{float_value, RecordId};
use gar_client::{Client, Config, Subscribe};
use gar_sim::{
    sample_config, ConnId, EndCause, Loopback, LoopbackOptions, Output, Server, ServerConfig,
};
use serde_json::{json, Value};

const PIP: &str = "python3 -m pip install pygar-client==4.27.0";
const RUN_LIMIT: Duration = Duration::from_secs(40);

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/pygar/session.py")
}

/// Fails (never skips) when the reference client cannot be run.
fn require_pygar() {
    let out = Command::new("python3")
        .args([
            "-c",
            "import gar, importlib.metadata as m; print(m.version('pygar-client'))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("python3 cannot be run ({e}); install it, then: {PIP}"));
    assert!(
        out.status.success(),
        "pygar-client is not importable; install it with: {PIP}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_eq!(
        version, "4.27.0",
        "the pinned reference client is needed: {PIP}"
    );
}

fn server(config: ServerConfig, token: Option<&str>) -> Loopback {
    Loopback::start(LoopbackOptions {
        config,
        token: token.map(str::to_owned),
        ..LoopbackOptions::default()
    })
    .expect("the loopback server binds 127.0.0.1")
}

/// Runs the script in `mode` against `url`; `on_ready` runs when it prints READY. Returns the
/// JSON lines it printed.
fn run(url: &str, mode: &str, on_ready: impl FnOnce()) -> Vec<Value> {
    require_pygar();
    let mut child = Command::new("python3")
        .arg(script())
        .args([url, mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + RUN_LIMIT;
    let mut on_ready = Some(on_ready);
    let mut lines = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l == "READY" => {
                if let Some(f) = on_ready.take() {
                    f();
                }
            }
            Ok(l) => {
                lines.push(serde_json::from_str::<Value>(&l).unwrap_or_else(|e| {
                    panic!("script printed a line that is not JSON ({e}): {l}")
                }))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the pygar run `{mode}` exceeded {RUN_LIMIT:?}; lines so far: {lines:#?}");
            }
        }
    }
    let _ = reader.join();
    let status = child.wait().expect("the script ends");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    assert!(
        status.success(),
        "session.py {mode} failed: {status}\n{err}"
    );
    for l in &lines {
        assert_ne!(
            l["step"], "timeout",
            "a wait of the script timed out: {l}\n{err}"
        );
    }
    lines
}

fn step<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {lines:#?}"))
}

fn stopped<'a>(lines: &'a [Value], label: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["step"] == "stopped" && l["label"] == label)
        .unwrap_or_else(|| panic!("no stop of {label} in {lines:#?}"))
}

fn frames(srv: &Loopback, conn: ConnId) -> Vec<Value> {
    srv.with_server(|s| {
        s.received(conn)
            .iter()
            .map(|t| serde_json::from_str(t).expect("the server recorded JSON"))
            .collect()
    })
}

fn of_type<'a>(frames: &'a [Value], mt: &str) -> Vec<&'a Value> {
    frames.iter().filter(|f| f["message_type"] == mt).collect()
}

fn ended(srv: &Loopback, conn: ConnId) -> Option<EndCause> {
    // The model ends a connection before the socket goes; allow the reader a moment.
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let e = srv.with_server(|s| s.ended(conn).cloned());
        if e.is_some() || Instant::now() > until {
            return e;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn pygar_scripted_session_against_the_loopback_server() {
    let srv = server(sample_config(), None);
    let lines = run(&srv.url(), "session", || {});

    let intro = step(&lines, "introduction");
    assert_eq!(intro["version"], 650_712);
    assert_eq!(intro["user"], "gar-sim");
    assert_eq!(step(&lines, "echo")["ok"], true);

    let snap = step(&lines, "snapshot");
    assert_eq!(snap["statuses"], json!(["ProcessingSnapshot", "Finished"]));
    assert_eq!(
        snap["records"],
        json!({"AAPL": {"bid": "1.5", "name": "Apple"}, "ABC": {"bid": 7}}),
        "the key filter ^A keeps AAPL and ABC, and 1.5 keeps its digits (Decimal)"
    );

    let parts = step(&lines, "parts");
    assert_eq!(
        parts["statuses"],
        json!([
            "ProcessingSnapshot",
            "NeedsContinue",
            "NeedsContinue",
            "Finished"
        ])
    );
    assert_eq!(parts["records"].as_object().map(|m| m.len()), Some(3));

    let refused = step(&lines, "refused");
    assert_eq!(refused["statuses"], json!(["Finished"]));
    assert_eq!(refused["errors"][0]["recoverable"], true);

    let live = step(&lines, "streaming");
    assert_eq!(live["statuses"], json!(["ProcessingSnapshot", "Streaming"]));
    assert_eq!(live["records"], json!([["AAPL", "ask", "2.5"]]));

    let teardown = step(&lines, "teardown");
    assert_eq!(
        teardown["deleted"],
        json!([["ABC", "Option", ["Underlier"]], ["ABC", "Underlier", []]]),
        "a class removed leaves the rest; a whole-key delete removes each class shown"
    );

    let cx = |n: &str| step(&lines, n)["result"].clone();
    assert_eq!(cx("cx_create_if_absent")["success"], true);
    let r = cx("cx_null_test_on_present");
    assert_eq!(
        (
            r["success"].clone(),
            r["reason"].clone(),
            r["value"].clone()
        ),
        (json!(false), json!("CompareMismatch"), json!("x"))
    );
    let r = cx("cx_mismatch");
    assert_eq!(
        (r["success"].clone(), r["value"].clone()),
        (json!(false), json!("x"))
    );
    assert_eq!(cx("cx_compare_and_delete")["success"], true);
    assert_eq!(cx("cx_deleted_reads_null")["success"], true);
    assert_eq!(cx("cx_default_matches_missing")["success"], true);
    let r = cx("cx_missing_is_not_zero");
    assert_eq!(
        (r["success"].clone(), r["reason"].clone()),
        (json!(false), json!("CompareMismatch"))
    );
    let msg_refs: Vec<u64> = [
        "cx_create_if_absent",
        "cx_null_test_on_present",
        "cx_mismatch",
        "cx_compare_and_delete",
        "cx_deleted_reads_null",
        "cx_default_matches_missing",
        "cx_missing_is_not_zero",
    ]
    .iter()
    .map(|n| cx(n)["msg_ref"].as_u64().expect("a msg_ref"))
    .collect();
    assert!(msg_refs.windows(2).all(|w| w[0] < w[1]), "{msg_refs:?}");

    let own = step(&lines, "ownership");
    assert_eq!(
        own["write_errors"],
        json!([{"key_name": "MSFT", "topic_name": "bid", "malformed": false, "msg_ref": 12,
                "reason": {"record_write": "WriteDenied"}}])
    );
    let r = step(&lines, "cx_write_denied")["result"].clone();
    assert_eq!(
        (
            r["success"].clone(),
            r["reason"].clone(),
            r["value"].clone()
        ),
        (json!(false), json!("WriteDenied"), json!(3))
    );

    let fw = step(&lines, "failed_writes");
    assert_eq!(fw["running"], true, "recoverable failures keep the session");
    let got: Vec<(Value, Value)> = fw["write_errors"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| (e["reason"]["record_write"].clone(), e["malformed"].clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (json!("UnknownTopic"), json!(true)),
            (json!("InvalidValue"), json!(true)),
            (json!("TopicNotInClass"), json!(false)),
            (json!("TopicNotWritable"), json!(true)),
        ]
    );

    let bail = stopped(&lines, "disconnect_on_write_failure");
    assert_eq!(
        (bail["reason"].clone(), bail["exit_code"].clone()),
        (json!("error"), json!(1))
    );
    assert_eq!(bail["errors"][0]["recoverable"], false);

    let end = stopped(&lines, "logoff");
    assert_eq!(end["reason"], "stop");
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["callbacks"], 1);

    // What the server recorded: connection 1 is the session, 2 the other writer, 3 the bail-out.
    let conns = srv.connections();
    assert_eq!(conns.len(), 3);
    let f = frames(&srv, conns[0]);
    let first = srv.with_server(|s| s.received(conns[0])[0].clone());
    assert!(
        first.starts_with('{'),
        "a JSON client's first byte is an open brace"
    );
    assert_eq!(f[0]["message_type"], "Introduction");
    assert_eq!(f[0]["value"]["version"], 650_712);
    assert_eq!(f[0]["value"]["application"], "pygar-session");
    assert_eq!(f.last().expect("frames")["message_type"], "Logoff");
    assert_eq!(of_type(&f, "SubscribeContinue").len(), 2);
    let cxs = of_type(&f, "JSONCompareExchange");
    assert_eq!(cxs.len(), 7);
    assert!(
        cxs[0]["value"]["test"].is_null(),
        "test null is sent as null"
    );
    assert!(
        cxs[3]["value"]["value"].is_null(),
        "value null is sent as null"
    );
    let marks = of_type(&f, "ActiveOwnership");
    assert_eq!(marks[0]["value"]["msg_ref"], 11);
    assert_eq!(marks[0]["value"]["ownership_action"], "Acquire");
    assert_eq!(ended(&srv, conns[0]), Some(EndCause::Logoff));
    assert_eq!(ended(&srv, conns[2]), Some(EndCause::WriteFailure));
    let f3 = frames(&srv, conns[2]);
    assert_eq!(f3[0]["value"]["disconnect_on_write_failure"], true);

    // pygar asks for the whole-key delete with DeleteKeyCommand under its own id of ABC.
    let abc = f
        .iter()
        .find(|x| x["message_type"] == "KeyUpdate" && x["value"]["name"] == "ABC")
        .expect("ABC introduced")["value"]["key_id"]
        .clone();
    let deletes = of_type(&f, "DeleteKeyCommand");
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0]["value"]["key_id"], abc);
    differential(&f);

    srv.with_server(|s| {
        assert_eq!(s.record("AAPL", "lock"), Some(&json!(true)));
        assert_eq!(s.record("AAPL", "note"), Some(&json!("w")));
        assert_eq!(
            s.record("MSFT", "bid").map(|v| v.to_string()),
            Some("3".into())
        );
        assert_eq!(
            s.owner("MSFT"),
            None,
            "a logoff releases what the connection owned"
        );
    });
}

/// Runs one ending: READY, then `fault` on the newest connection; returns the stop line.
fn ending(srv: &Loopback, mode: &str, fault: impl FnOnce(&mut gar_sim::Server, ConnId)) -> Value {
    let lines = run(&srv.url(), mode, || {
        let conn = *srv.connections().last().expect("a connection");
        srv.with_server(|s| fault(s, conn));
    });
    stopped(&lines, mode).clone()
}

fn fast_beats() -> ServerConfig {
    ServerConfig {
        heartbeat_timeout_interval: 400,
        ..sample_config()
    }
}

fn reason_and_code(v: &Value) -> (String, i64) {
    (
        v["reason"].as_str().unwrap_or("").to_owned(),
        v["exit_code"].as_i64().unwrap_or(-1),
    )
}

#[test]
fn pygar_stop_reason_stop() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "stop", |_, _| {});
    assert_eq!(reason_and_code(&v), ("stop".into(), 0));
    assert_eq!(v["callbacks"], 1);
}

#[test]
fn pygar_stop_reason_server_logoff() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "server_logoff", |s, c| s.logoff(c));
    assert_eq!(reason_and_code(&v), ("server_logoff".into(), 0));
    assert_eq!(v["server_logoff"], true);
    assert_eq!(v["callbacks"], 1);
}

#[test]
fn pygar_stop_reason_disconnect() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "disconnect", |s, c| s.close_with(c, Some(1000)));
    assert_eq!(reason_and_code(&v), ("disconnect".into(), 0));
    assert_eq!(v["server_logoff"], false);
}

#[test]
fn pygar_stop_reason_for_each_server_close_code() {
    for code in [None, Some(1001), Some(1011), Some(4000)] {
        let srv = server(fast_beats(), None);
        let v = ending(&srv, "disconnect", |s, c| s.close_with(c, code));
        assert_eq!(
            reason_and_code(&v),
            ("disconnect".into(), 0),
            "close code {code:?}"
        );
        assert_eq!(v["callbacks"], 1);
    }
}

#[test]
fn pygar_stop_reason_for_a_refused_version() {
    let srv = server(
        ServerConfig {
            version: 1,
            ..fast_beats()
        },
        None,
    );
    let lines = run(&srv.url(), "version_refused", || {});
    let v = stopped(&lines, "version_refused");
    assert_eq!(reason_and_code(v), ("error".into(), 1));
    assert_eq!(
        v["errors"][0]["message"],
        "Unsupported version from 650712".replace("from ", &format!("from {}: ", user_of(&srv)))
    );
}

/// The user name the first connection introduced itself with.
fn user_of(srv: &Loopback) -> String {
    let c = srv.connections()[0];
    frames(srv, c)[0]["value"]["user"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn pygar_stop_reason_upstream_lost() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "upstream_lost", |s, c| s.upstream_lost(c, "live"));
    assert_eq!(reason_and_code(&v), ("upstream_lost".into(), 1));
    assert_eq!(v["callbacks"], 1);
}

#[test]
fn pygar_stop_reason_heartbeat_timeout() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "heartbeat_timeout", |s, c| s.silence(c));
    assert_eq!(reason_and_code(&v), ("heartbeat_timeout".into(), 1));
    assert_eq!(v["callbacks"], 1);
    // pygar beat at about half its 400 ms interval while it ran (bounds loose for a busy host).
    let conn = srv.connections()[0];
    let times: Vec<u64> = srv.with_server(|s| {
        s.received(conn)
            .iter()
            .zip(s.received_at(conn))
            .filter(|(t, _)| t.contains("\"Heartbeat\""))
            .map(|(_, at)| *at)
            .collect()
    });
    assert!(times.len() >= 2, "pygar sent {} heartbeats", times.len());
    for gap in times.windows(2).map(|w| w[1] - w[0]) {
        assert!(
            (100..400).contains(&gap),
            "a heartbeat gap of {gap} ms: {times:?}"
        );
    }
}

#[test]
fn pygar_stop_reason_error() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "error", |s, c| s.send_fatal_error(c, "injected"));
    assert_eq!(reason_and_code(&v), ("error".into(), 1));
    assert_eq!(
        v["errors"][0]["message"], "injected",
        "the Error before the close is reported"
    );
}

#[test]
fn g_55_pygar_stops_on_an_error_without_its_recoverable_flag() {
    // The engine reads a missing `recoverable` as false; the reference client does the same.
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "error", |s, c| {
        s.send_error_without_recoverable(c, "no flag");
    });
    assert_eq!(reason_and_code(&v), ("error".into(), 1), "{v}");
    assert_eq!(v["alive"], false);
}

#[test]
fn pygar_stop_reason_for_undecodable_text() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "undecodable", |s, c| s.send_undecodable(c));
    // The reference client's documented deviation: reason error, yet exit code 0.
    assert_eq!(reason_and_code(&v), ("error".into(), 0));
}

#[test]
fn pygar_stop_reason_connect_failed() {
    // A refused port is just a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let lines = run(
        &format!("ws://127.0.0.1:{port}/gar"),
        "connect_failed",
        || {},
    );
    let v = stopped(&lines, "connect_failed");
    assert_eq!(reason_and_code(v), ("connect_failed".into(), 0));
}

#[test]
fn pygar_stop_reason_unauthorized() {
    let srv = server(fast_beats(), Some("secret"));
    let lines = run(&srv.url(), "unauthorized", || {});
    let v = stopped(&lines, "unauthorized");
    assert_eq!(reason_and_code(v), ("unauthorized".into(), 0));
    assert_eq!(srv.refused(), vec![401]);
    assert!(
        srv.connections().is_empty(),
        "a refused upgrade never reaches the model"
    );
}

// ---- The same session through the Rust engine: the frames the server gets, compared ----

/// The session of `session.py`, step by step, through `gar_client::Client` against the model
/// in-process; returns what the server received.
fn engine_session() -> Vec<Value> {
    let mut server = Server::new(sample_config());
    let conn = server.connect(0);
    let mut c = Client::new(Config {
        application: "pygar-session".into(),
        ..Config::default()
    });
    c.start(0, (1, 2));
    let pump = |c: &mut Client, server: &mut Server| loop {
        let mut moved = false;
        while let Some(t) = c.poll_transmit() {
            server.handle_text(conn, 0, &t);
            moved = true;
        }
        while let Some(o) = server.poll_transmit(conn) {
            moved = true;
            match o {
                Output::Text(t) => c.handle_text(0, &t),
                Output::Close(code) => c.handle_close(code),
                _ => {}
            }
        }
        while c.poll_event().is_some() {}
        if !moved {
            break;
        }
    };
    pump(&mut c, &mut server);
    let publish = |c: &mut Client, key: &str, topic: &str, v: Value| {
        let key_id = c.introduce_key(key, "Underlier").expect("key");
        let topic_id = c.introduce_topic(topic).expect("topic");
        c.publish(RecordId { key_id, topic_id }, &v, 0)
            .expect("publish");
    };
    publish(&mut c, "AAPL", "bid", float_value(1.5));
    publish(&mut c, "AAPL", "name", json!("Apple"));
    publish(&mut c, "ABC", "bid", json!(7));
    publish(&mut c, "MSFT", "bid", json!(2));
    c.echo().expect("echo");
    pump(&mut c, &mut server);
    let sub = |name: &str, streaming: bool, class: &str, key_filter: Option<&str>| Subscribe {
        name: name.into(),
        streaming,
        class_list: vec![class.into()],
        key_filter: key_filter.map(str::to_owned),
        ..Subscribe::default()
    };
    c.subscribe(&sub("snap", false, "Underlier", Some("^A")))
        .expect("sub");
    pump(&mut c, &mut server);
    c.subscribe(&Subscribe {
        snapshot_size_limit: Some(1),
        ..sub("parts", false, "Underlier", None)
    })
    .expect("sub");
    pump(&mut c, &mut server);
    c.subscribe(&sub("refused", false, "NoSuchClass", None))
        .expect("sub");
    pump(&mut c, &mut server);
    c.subscribe(&sub("live", true, "Underlier", None))
        .expect("sub");
    pump(&mut c, &mut server);
    publish(&mut c, "AAPL", "ask", float_value(2.5));
    c.echo().expect("echo");
    pump(&mut c, &mut server);
    let key_id = c.introduce_key("ABC", "Option").expect("key");
    let topic_id = c.introduce_topic("strike").expect("topic");
    c.publish(RecordId { key_id, topic_id }, &json!(1), 0)
        .expect("publish");
    c.echo().expect("echo");
    pump(&mut c, &mut server);
    c.delete_class("ABC", "Option").expect("delete class");
    c.delete_key("ABC").expect("delete key");
    c.echo().expect("echo");
    pump(&mut c, &mut server);
    let cx = |c: &mut Client, key: &str, topic: &str, test: Value, value: Value| {
        let key_id = c.introduce_key(key, "Underlier").expect("key");
        let topic_id = c.introduce_topic(topic).expect("topic");
        c.compare_exchange(RecordId { key_id, topic_id }, &test, &value)
            .expect("cx");
    };
    cx(&mut c, "AAPL", "note", Value::Null, json!("x"));
    cx(&mut c, "AAPL", "note", Value::Null, json!("y"));
    cx(&mut c, "AAPL", "note", json!("z"), json!("y"));
    cx(&mut c, "AAPL", "note", json!("x"), Value::Null);
    cx(&mut c, "AAPL", "note", Value::Null, json!("w"));
    cx(&mut c, "AAPL", "lock", json!(false), json!(true));
    cx(&mut c, "MSFT", "ask", json!(0), json!(1));
    pump(&mut c, &mut server);
    let marker = |msg_ref: u64, action: OwnershipAction| Ownership {
        msg_ref,
        ownership_action: action,
        ..Ownership::default()
    };
    c.active_ownership(&marker(11, OwnershipAction::Acquire))
        .expect("marker");
    publish(&mut c, "MSFT", "bid", json!(3));
    c.echo().expect("echo");
    pump(&mut c, &mut server);
    c.active_ownership(&marker(21, OwnershipAction::None))
        .expect("marker");
    publish(&mut c, "AAPL", "nope", json!(1));
    publish(&mut c, "AAPL", "bid", json!("not a number"));
    publish(&mut c, "AAPL", "strike", json!(9));
    publish(&mut c, "AAPL", "status", json!("up"));
    c.echo().expect("echo");
    pump(&mut c, &mut server);
    c.logoff();
    pump(&mut c, &mut server);
    server
        .received(conn)
        .iter()
        .map(|t| serde_json::from_str(t).expect("JSON"))
        .collect()
}

/// A frame with what belongs to one connection taken out: the identity in the Introduction
/// (uuid, pid, user, application, working namespace) and the msg_ref of echoes and compares
/// (pygar's echo msg_ref is the application's choice and its compares count on their own;
/// the engine allocates one sequence for both).
fn comparable(f: &Value) -> Value {
    let mut f = f.clone();
    let mt = f["message_type"].as_str().unwrap_or("").to_owned();
    if let Some(v) = f.get_mut("value").and_then(Value::as_object_mut) {
        match mt.as_str() {
            "Introduction" => {
                for k in ["uuid", "pid", "user", "application", "working_namespace"] {
                    v.remove(k);
                }
            }
            "EchoRequest" | "JSONCompareExchange" => {
                v.remove("msg_ref");
            }
            // The engine writes a zero key and topic id and nagle interval; pygar leaves the
            // members out. Both mean "none"; the difference is reported, not hidden elsewhere.
            "Subscribe" => {
                for k in ["key_id", "topic_id", "nagle_interval"] {
                    if v.get(k) == Some(&json!(0)) {
                        v.remove(k);
                    }
                }
            }
            _ => {}
        }
    }
    f
}

fn differential(pygar: &[Value]) {
    compare_frames("engine", &engine_session(), pygar);
}

/// Compares what the server received from one of our clients (`who`) with what it received from
/// pygar, frame by frame, heartbeats left out (their number depends on the run's timing).
fn compare_frames(who: &str, ours: &[Value], pygar: &[Value]) {
    let part = |f: &&Value| f["message_type"] != "Heartbeat";
    let ours: Vec<Value> = ours.iter().filter(part).map(comparable).collect();
    let theirs: Vec<Value> = pygar.iter().filter(part).map(comparable).collect();
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "frame {i} differs: {who} left, pygar right");
    }
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{who} {ours:#?}\npygar {theirs:#?}"
    );
}

// ---- The same session through each DRIVER over real sockets, compared ----

use gar_driver::Error as DriverError;

/// What the scripted session asks of a driver, whichever flavour (blocking or tokio).
trait Drive {
    fn next_event(&self, limit: Duration) -> Result<Option<gar_driver::Event>, DriverError>;
    fn subscribe(&self, s: &Subscribe) -> Result<(), DriverError>;
    fn publish_by_name(
        &self,
        key: &str,
        class: &str,
        topic: &str,
        v: &Value,
    ) -> Result<RecordId, DriverError>;
    fn introduce_key(&self, key: &str, class: &str) -> Result<u64, DriverError>;
    fn introduce_topic(&self, topic: &str) -> Result<u64, DriverError>;
    fn compare_exchange(
        &self,
        r: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, DriverError>;
    fn delete_class(&self, key: &str, class: &str) -> Result<(), DriverError>;
    fn delete_key(&self, key: &str) -> Result<(), DriverError>;
    fn active_ownership(&self, o: &Ownership) -> Result<(), DriverError>;
    fn echo_barrier(&self) -> Result<(), DriverError>;
    fn logoff(&self);
}

impl Drive for gar_driver::blocking::Client {
    fn next_event(&self, limit: Duration) -> Result<Option<gar_driver::Event>, DriverError> {
        gar_driver::blocking::Client::next_event(self, limit)
    }
    fn subscribe(&self, s: &Subscribe) -> Result<(), DriverError> {
        gar_driver::blocking::Client::subscribe(self, s)
    }
    fn publish_by_name(
        &self,
        key: &str,
        class: &str,
        topic: &str,
        v: &Value,
    ) -> Result<RecordId, DriverError> {
        gar_driver::blocking::Client::publish_by_name(self, key, class, topic, v)
    }
    fn introduce_key(&self, key: &str, class: &str) -> Result<u64, DriverError> {
        gar_driver::blocking::Client::introduce_key(self, key, class)
    }
    fn introduce_topic(&self, topic: &str) -> Result<u64, DriverError> {
        gar_driver::blocking::Client::introduce_topic(self, topic)
    }
    fn compare_exchange(
        &self,
        r: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, DriverError> {
        gar_driver::blocking::Client::compare_exchange(self, r, test, value)
    }
    fn delete_class(&self, key: &str, class: &str) -> Result<(), DriverError> {
        gar_driver::blocking::Client::delete_class(self, key, class)
    }
    fn delete_key(&self, key: &str) -> Result<(), DriverError> {
        gar_driver::blocking::Client::delete_key(self, key)
    }
    fn active_ownership(&self, o: &Ownership) -> Result<(), DriverError> {
        gar_driver::blocking::Client::active_ownership(self, o)
    }
    fn echo_barrier(&self) -> Result<(), DriverError> {
        gar_driver::blocking::Client::echo_barrier(self)
    }
    fn logoff(&self) {
        gar_driver::blocking::Client::logoff(self);
    }
}

/// The tokio client on a runtime of its own, each call run to its end.
struct OnTokio {
    c: gar_driver::tokio::Client,
    rt: tokio::runtime::Runtime,
}

impl Drive for OnTokio {
    fn next_event(&self, limit: Duration) -> Result<Option<gar_driver::Event>, DriverError> {
        self.rt.block_on(self.c.next_event_within(limit))
    }
    fn subscribe(&self, s: &Subscribe) -> Result<(), DriverError> {
        self.rt.block_on(self.c.subscribe(s))
    }
    fn publish_by_name(
        &self,
        key: &str,
        class: &str,
        topic: &str,
        v: &Value,
    ) -> Result<RecordId, DriverError> {
        self.rt
            .block_on(self.c.publish_by_name(key, class, topic, v))
    }
    fn introduce_key(&self, key: &str, class: &str) -> Result<u64, DriverError> {
        self.rt.block_on(self.c.introduce_key(key, class))
    }
    fn introduce_topic(&self, topic: &str) -> Result<u64, DriverError> {
        self.rt.block_on(self.c.introduce_topic(topic))
    }
    fn compare_exchange(
        &self,
        r: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, DriverError> {
        self.rt.block_on(self.c.compare_exchange(r, test, value))
    }
    fn delete_class(&self, key: &str, class: &str) -> Result<(), DriverError> {
        self.rt.block_on(self.c.delete_class(key, class))
    }
    fn delete_key(&self, key: &str) -> Result<(), DriverError> {
        self.rt.block_on(self.c.delete_key(key))
    }
    fn active_ownership(&self, o: &Ownership) -> Result<(), DriverError> {
        self.rt.block_on(self.c.active_ownership(o))
    }
    fn echo_barrier(&self) -> Result<(), DriverError> {
        self.rt.block_on(self.c.echo_barrier())
    }
    fn logoff(&self) {
        self.rt.block_on(self.c.logoff());
    }
}

/// The next event of `c` that `want` accepts (others are passed over), within a bounded wait.
fn wait_event(
    c: &impl Drive,
    what: &str,
    mut want: impl FnMut(&gar_driver::Event) -> bool,
) -> gar_driver::Event {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match c.next_event(left) {
            Ok(Some(e)) if want(&e) => return e,
            Ok(Some(gar_driver::Event::Stopped { reason, violation })) => {
                panic!("the session stopped ({reason:?}, {violation:?}) waiting for {what}")
            }
            Ok(Some(_)) => {}
            Ok(None) => panic!("the session ended waiting for {what}"),
            Err(e) => panic!("{e} waiting for {what}"),
        }
    }
}

/// The driver configuration of the differential: the application name pygar's session uses.
fn driver_config(srv: &Loopback) -> gar_driver::Config {
    let mut cfg = gar_driver::Config::new(srv.url());
    cfg.engine.application = "pygar-session".into();
    cfg.connect_timeout = Duration::from_secs(5);
    cfg.call_timeout = Duration::from_secs(10);
    cfg
}

/// The session of `session.py` (the steps of connection 1) through a connected driver,
/// waiting where the script waits (echo barriers, Finished, the refusal, Streaming, each
/// compare result); returns what the server received on that connection.
fn driver_session(srv: &Loopback, c: &impl Drive) -> Vec<Value> {
    use gar_driver::{Event, Status};
    wait_event(c, "the introduction", |e| {
        matches!(e, Event::Introduced { .. })
    });
    let publish = |key: &str, topic: &str, v: Value| {
        c.publish_by_name(key, "Underlier", topic, &v)
            .expect("publish");
    };
    publish("AAPL", "bid", float_value(1.5));
    publish("AAPL", "name", json!("Apple"));
    publish("ABC", "bid", json!(7));
    publish("MSFT", "bid", json!(2));
    c.echo_barrier().expect("echo");
    let sub = |name: &str, streaming: bool, class: &str, key_filter: Option<&str>| Subscribe {
        name: name.into(),
        streaming,
        class_list: vec![class.into()],
        key_filter: key_filter.map(str::to_owned),
        ..Subscribe::default()
    };
    let finished = |name: &'static str| move |e: &Event| matches!(e, Event::Status { name: n, status: Status::Finished } if n == name);
    c.subscribe(&sub("snap", false, "Underlier", Some("^A")))
        .expect("sub");
    wait_event(c, "snap finished", finished("snap"));
    c.subscribe(&Subscribe {
        snapshot_size_limit: Some(1),
        ..sub("parts", false, "Underlier", None)
    })
    .expect("sub");
    wait_event(c, "parts finished", finished("parts"));
    c.subscribe(&sub("refused", false, "NoSuchClass", None))
        .expect("sub");
    wait_event(
        c,
        "refused",
        |e| matches!(e, Event::Refused { name } if name == "refused"),
    );
    c.subscribe(&sub("live", true, "Underlier", None))
        .expect("sub");
    wait_event(
        c,
        "live streaming",
        |e| matches!(e, Event::Status { name, status: Status::Streaming } if name == "live"),
    );
    publish("AAPL", "ask", float_value(2.5));
    c.echo_barrier().expect("echo");
    c.publish_by_name("ABC", "Option", "strike", &json!(1))
        .expect("publish");
    c.echo_barrier().expect("echo");
    c.delete_class("ABC", "Option").expect("delete class");
    c.delete_key("ABC").expect("delete key");
    c.echo_barrier().expect("echo");
    let cx = |key: &str, topic: &str, test: Value, value: Value| {
        let record_id = RecordId {
            key_id: c.introduce_key(key, "Underlier").expect("key"),
            topic_id: c.introduce_topic(topic).expect("topic"),
        };
        let msg_ref = c.compare_exchange(record_id, &test, &value).expect("cx");
        wait_event(
            c,
            "a compare result",
            |e| matches!(e, Event::Compare(r) if r.msg_ref == msg_ref),
        );
    };
    cx("AAPL", "note", Value::Null, json!("x"));
    cx("AAPL", "note", Value::Null, json!("y"));
    cx("AAPL", "note", json!("z"), json!("y"));
    cx("AAPL", "note", json!("x"), Value::Null);
    cx("AAPL", "note", Value::Null, json!("w"));
    cx("AAPL", "lock", json!(false), json!(true));
    cx("MSFT", "ask", json!(0), json!(1));
    let marker = |msg_ref: u64, action: OwnershipAction| Ownership {
        msg_ref,
        ownership_action: action,
        ..Ownership::default()
    };
    c.active_ownership(&marker(11, OwnershipAction::Acquire))
        .expect("marker");
    publish("MSFT", "bid", json!(3));
    c.echo_barrier().expect("echo");
    c.active_ownership(&marker(21, OwnershipAction::None))
        .expect("marker");
    publish("AAPL", "nope", json!(1));
    publish("AAPL", "bid", json!("not a number"));
    publish("AAPL", "strike", json!(9));
    publish("AAPL", "status", json!("up"));
    c.echo_barrier().expect("echo");
    c.logoff();
    let conn = srv.connections()[0];
    assert_eq!(ended(srv, conn), Some(EndCause::Logoff));
    frames(srv, conn)
}

/// pygar's frames of the scripted session, from a loopback server of its own.
fn pygar_session_frames() -> Vec<Value> {
    let srv = server(sample_config(), None);
    let lines = run(&srv.url(), "session", || {});
    assert_eq!(stopped(&lines, "logoff")["reason"], "stop");
    frames(&srv, srv.connections()[0])
}

#[test]
fn pygar_and_both_drivers_send_the_same_frames() {
    let pygar = pygar_session_frames();

    let srv = server(sample_config(), None);
    let c = gar_driver::blocking::Client::connect(driver_config(&srv))
        .expect("the blocking driver connects to the loopback server");
    compare_frames("blocking driver", &driver_session(&srv, &c), &pygar);

    let srv = server(sample_config(), None);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let c = rt
        .block_on(gar_driver::tokio::Client::connect(driver_config(&srv)))
        .expect("the tokio driver connects to the loopback server");
    let tokio_client = OnTokio { c, rt };
    compare_frames("tokio driver", &driver_session(&srv, &tokio_client), &pygar);
}

#[test]
fn pygar_gives_the_first_server_heartbeat_ten_intervals() {
    let srv = server(
        ServerConfig {
            heartbeat_timeout_interval: 400,
            send_heartbeats: false,
            ..sample_config()
        },
        None,
    );
    let lines = run(&srv.url(), "first_beat_grace", || {});
    let grace = step(&lines, "grace");
    let ms = grace["ms"].as_u64().expect("a duration");
    // Ten intervals of 400 ms; one interval would have ended it near 400 ms.
    assert!(
        (3_600..9_000).contains(&ms),
        "pygar waited {ms} ms for the first beat"
    );
    let v = stopped(&lines, "first_beat_grace");
    assert_eq!(reason_and_code(v), ("heartbeat_timeout".into(), 1));
}

#[test]
fn pygar_reports_the_servers_heartbeat_timeout_error() {
    let srv = server(fast_beats(), None);
    let v = ending(&srv, "server_heartbeat_timeout", |s, c| {
        s.ignore_heartbeats(c)
    });
    assert_eq!(reason_and_code(&v), ("error".into(), 1));
    assert_eq!(v["errors"][0]["message"], "Heartbeat timeout");
    let conn = srv.connections()[0];
    assert_eq!(ended(&srv, conn), Some(EndCause::HeartbeatTimeout));
}
