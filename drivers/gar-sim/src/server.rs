//! The GAR server model: every connection's text messages in, every connection's text
//! messages and closes out, time as an input (milliseconds).
//!
//! One store (keys with their classes and owners, records with their stamps) is shared by all
//! connections; each connection has its own id spaces both ways, its own subscriptions, its own
//! heartbeat clocks and its own bounded outbox. Every client write is applied synchronously, so an
//! `EchoResponse` is answered as soon as the request is read: every earlier write has landed.
//!
//! The wire shapes the client reads are those of `gar_client::codec`; the failed-write objects
//! inside an `Error` are this model's own shape:
//! `{"reason": {"record_write"|"key_write": <reason>}, "key_id", "topic_id", "key_name",
//! "topic_name", "class_name", "malformed", "detail", "origin"}`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use gar_client::codec::{to_text, write, RecordId};
use serde_json::{Map, Value};

use crate::filter::Filter;

/// The JSON protocol version this model speaks (that of the reference client 4.27.0).
pub const JSON_VERSION: u64 = 650_712;

/// The type a topic's values must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopicType {
    /// Any JSON value.
    Any,
    /// A number.
    Number,
    /// A string.
    Text,
    /// A boolean.
    Bool,
}

/// One topic of the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicDef {
    /// The topic name.
    pub name: String,
    /// What its values must be.
    pub ty: TopicType,
    /// What a missing record reads as (a compare-exchange test must name it); None: null.
    pub default: Option<Value>,
    /// Whether clients may write it.
    pub writable: bool,
}

impl TopicDef {
    /// A writable topic of any value, without default.
    #[must_use]
    pub fn any(name: &str) -> Self {
        TopicDef {
            name: name.to_owned(),
            ty: TopicType::Any,
            default: None,
            writable: true,
        }
    }
}

/// One class of the schema: the topics its keys may hold.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDef {
    /// The class name.
    pub name: String,
    /// The topic names.
    pub topics: Vec<String>,
}

/// The server's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The protocol version; a client introducing another one is refused.
    pub version: u64,
    /// The server's own heartbeat timeout (ms): it beats every half of it.
    pub heartbeat_timeout_interval: u64,
    /// The user name the server introduces itself with.
    pub user: String,
    /// The name failed writes report as their origin.
    pub origin: String,
    /// The topics.
    pub topics: Vec<TopicDef>,
    /// The classes.
    pub classes: Vec<ClassDef>,
    /// The largest inbound message (bytes); a larger one is fatal to the connection.
    pub max_message_bytes: usize,
    /// Messages queued for one connection at most; beyond it the connection is dropped.
    pub max_outbox_count: usize,
    /// Bytes queued for one connection at most; beyond it the connection is dropped.
    pub max_outbox_bytes: usize,
    /// Keys in the store at most; a write creating one more fails (`KeyLimit`).
    pub max_keys: usize,
    /// Records in the store at most; a write creating one more fails (`RecordLimit`).
    pub max_records: usize,
    /// Subscriptions per connection at most; one more is refused.
    pub max_subscriptions: usize,
    /// Ids one connection may introduce (topics plus keys) at most; beyond it is fatal.
    pub max_client_ids: usize,
    /// Inbound messages recorded per connection at most; the rest are counted.
    pub max_recorded: usize,
    /// Bytes of inbound messages recorded per connection at most; a message that would pass
    /// it is not recorded (counted in `recorded_dropped`).
    pub max_recorded_bytes: usize,
    /// Whether the server sends heartbeats (false: a fault, the client never hears one).
    pub send_heartbeats: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            version: JSON_VERSION,
            heartbeat_timeout_interval: 4_000,
            user: "gar-sim".to_owned(),
            origin: "gar-sim".to_owned(),
            topics: Vec::new(),
            classes: Vec::new(),
            max_message_bytes: 1 << 20,
            max_outbox_count: 4_096,
            max_outbox_bytes: 8 << 20,
            max_keys: 10_000,
            max_records: 100_000,
            max_subscriptions: 64,
            max_client_ids: 20_000,
            max_recorded: 10_000,
            max_recorded_bytes: 64 << 20,
            send_heartbeats: true,
        }
    }
}

/// A connection of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u64);

/// What the model sends on one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Output {
    /// One text message.
    Text(String),
    /// A close frame (code None: a close without a code); nothing follows it.
    Close(Option<u16>),
}

/// The close frame a peer sent, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeerClose {
    /// A close frame with this code, or none (an empty body, code 1005).
    Code(Option<u16>),
    /// A close frame whose body is one byte: malformed.
    Malformed,
    /// The socket closed or broke without a close frame.
    Dropped,
}

/// Why the model ended a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndCause {
    /// The client sent Logoff.
    Logoff,
    /// The client closed with 1000, 1001 or no code, and was answered.
    ClosedCleanly(Option<u16>),
    /// The client closed with another code: reported, not answered.
    ClosedWithError(u16),
    /// The client's close frame was malformed.
    MalformedClose,
    /// The socket went away.
    Dropped,
    /// The client's version was refused.
    VersionRefused(u64),
    /// The client sent no heartbeat in time.
    HeartbeatTimeout,
    /// The client broke the protocol (the text says how).
    Violation(String),
    /// A failed write on a connection introduced with `disconnect_on_write_failure`.
    WriteFailure,
    /// The outbox went over its bounds.
    Overflow,
    /// The server logged the connection off.
    ServerLogoff,
    /// A fault: the server closed with a code.
    FaultClose(Option<u16>),
    /// A fault: a non-recoverable Error.
    FaultError,
}

/// Counts of what the model refused or dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Connections dropped because their outbox went over its bounds.
    pub outbox_overflows: u64,
    /// Inbound messages not recorded because the record of one connection was full.
    pub recorded_dropped: u64,
    /// Failed writes only logged (msg_ref 0, no `disconnect_on_write_failure`).
    pub failed_writes_logged: u64,
    /// Inbound messages of a type the model does not know.
    pub unknown_messages: u64,
}

#[derive(Debug, Clone)]
struct StoredRecord {
    value: Value,
    tick_time: u64,
}

#[derive(Debug, Clone, Default)]
struct Key {
    classes: BTreeSet<String>,
    owner: Option<ConnId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubPhase {
    Paused,
    Streaming,
}

#[derive(Debug, Clone)]
struct Sub {
    streaming: bool,
    classes: Vec<String>,
    key_filter: Option<Filter>,
    topic_filter: Option<Filter>,
    exclude_key_filter: Option<Filter>,
    exclude_topic_filter: Option<Filter>,
    key_names: Vec<String>,
    topic_names: Vec<String>,
    include_tick_time: bool,
    limit: usize,
    pending: VecDeque<String>,
    phase: SubPhase,
}

#[derive(Debug, Clone, Default)]
struct Marker {
    msg_ref: u64,
    action: String,
    skip_checks: bool,
    require_existing: bool,
}

#[derive(Debug, Default)]
struct Conn {
    introduced: bool,
    silent: bool,
    deaf: bool,
    closing: bool,
    ended: Option<EndCause>,
    name: String,
    disconnect_on_write_failure: bool,
    client_interval: u64,
    client_deadline: u64,
    next_beat: u64,
    /// The working namespace of the client's introduction: a topic name qualified with it
    /// names the same topic as its relative spelling (G-22).
    namespace: String,
    client_topics: BTreeMap<u64, String>,
    client_keys: BTreeMap<u64, String>,
    srv_topics: BTreeMap<String, u64>,
    srv_keys: BTreeMap<String, (u64, BTreeSet<String>)>,
    next_topic: u64,
    next_key: u64,
    subs: BTreeMap<String, Sub>,
    marker: Marker,
    outbox: VecDeque<Output>,
    outbox_bytes: usize,
    recorded: Vec<String>,
    recorded_at: Vec<u64>,
    /// Bytes of `recorded`.
    recorded_bytes: usize,
}

/// The GAR server model.
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    keys: BTreeMap<String, Key>,
    records: BTreeMap<(String, String), StoredRecord>,
    conns: BTreeMap<ConnId, Conn>,
    next_conn: u64,
    counters: Counters,
    now: u64,
}

fn envelope(message_type: &str, value: Map<String, Value>) -> String {
    let mut m = Map::new();
    m.insert("message_type".into(), message_type.into());
    m.insert("value".into(), Value::Object(value));
    to_text(&Value::Object(m))
}

fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Equality of record values: numbers by value (`1` equals `1.0`), everything else as JSON.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.to_string() == y.to_string()
                || matches!((x.to_string().parse::<f64>(), y.to_string().parse::<f64>()), (Ok(p), Ok(q)) if p == q)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn opt_filter(m: &Map<String, Value>, k: &str) -> Option<Filter> {
    m.get(k).and_then(Value::as_str).map(Filter::new)
}

/// A failed write, before it is written out.
#[derive(Debug, Clone)]
struct Failure {
    record: bool,
    reason: &'static str,
    key_id: u64,
    topic_id: u64,
    key_name: String,
    topic_name: String,
    class_name: String,
    detail: String,
}

impl Failure {
    fn malformed(&self) -> bool {
        if self.record {
            matches!(
                self.reason,
                "InvalidValue" | "UnknownTopic" | "TopicNotWritable"
            )
        } else {
            self.reason == "UnknownClass"
        }
    }
}

/// The client ids a message addressed: `key_id` and `topic_id` (0 when absent).
fn id_pair(key: Option<&Value>, topic: Option<&Value>) -> (u64, u64) {
    (
        key.and_then(Value::as_u64).unwrap_or(0),
        topic.and_then(Value::as_u64).unwrap_or(0),
    )
}

/// The client ids of a `record_id` member.
fn record_ids(v: Option<&Value>) -> (u64, u64) {
    match v {
        Some(Value::Object(r)) => id_pair(r.get("key_id"), r.get("topic_id")),
        _ => (0, 0),
    }
}

/// A protocol violation of the client: fatal to its connection.
struct Fatal(String);

impl Server {
    /// A server with an empty store.
    #[must_use]
    pub fn new(config: ServerConfig) -> Self {
        Server {
            config,
            keys: BTreeMap::new(),
            records: BTreeMap::new(),
            conns: BTreeMap::new(),
            next_conn: 1,
            counters: Counters::default(),
            now: 0,
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// What the bounds dropped.
    #[must_use]
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// A new connection (after a successful upgrade) at `now`.
    pub fn connect(&mut self, now: u64) -> ConnId {
        self.now = self.now.max(now);
        let id = ConnId(self.next_conn);
        self.next_conn += 1;
        let conn = Conn {
            next_topic: 1,
            next_key: 1,
            ..Conn::default()
        };
        self.conns.insert(id, conn);
        id
    }

    /// The next message or close due on `conn`.
    #[must_use]
    pub fn poll_transmit(&mut self, conn: ConnId) -> Option<Output> {
        let c = self.conns.get_mut(&conn)?;
        let out = c.outbox.pop_front()?;
        if let Output::Text(t) = &out {
            c.outbox_bytes -= t.len();
        }
        Some(out)
    }

    /// When [`Server::handle_timeout`] is next due (ms).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        self.conns
            .values()
            .filter(|c| c.introduced && !c.closing)
            .flat_map(|c| {
                let beat = (!c.silent && self.config.send_heartbeats).then_some(c.next_beat);
                let watch = (c.client_interval > 0).then_some(c.client_deadline);
                beat.into_iter().chain(watch)
            })
            .min()
    }

    /// Heartbeats due, and clients whose heartbeats stopped.
    pub fn handle_timeout(&mut self, now: u64) {
        self.now = self.now.max(now);
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            let Some(c) = self.conns.get_mut(&id) else {
                continue;
            };
            if !c.introduced || c.closing {
                continue;
            }
            if c.client_interval > 0 && now >= c.client_deadline {
                self.fatal_error(id, "Heartbeat timeout", EndCause::HeartbeatTimeout);
                continue;
            }
            if !c.silent && self.config.send_heartbeats && now >= c.next_beat {
                let interval = (self.config.heartbeat_timeout_interval / 2).max(1);
                // Fixed rate from the previous instant; a backlog collapses into one beat.
                c.next_beat += interval;
                if c.next_beat <= now {
                    c.next_beat = now + interval;
                }
                self.send(id, write::heartbeat(now));
            }
        }
    }

    /// The client's close frame, or the socket going away.
    pub fn handle_close(&mut self, conn: ConnId, close: PeerClose) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.closing {
            return;
        }
        match close {
            PeerClose::Code(code @ (None | Some(1000 | 1001 | 1005))) => {
                let answer = if code == Some(1005) { None } else { code };
                self.end(conn, EndCause::ClosedCleanly(code), Some(answer));
            }
            PeerClose::Code(Some(other)) => self.end(conn, EndCause::ClosedWithError(other), None),
            PeerClose::Malformed => self.end(conn, EndCause::MalformedClose, None),
            PeerClose::Dropped => self.end(conn, EndCause::Dropped, None),
        }
    }

    /// A binary message: the binary layouts are not spoken here, so it is fatal.
    pub fn handle_binary(&mut self, conn: ConnId, now: u64) {
        self.now = self.now.max(now);
        self.fatal_error(
            conn,
            "Binary messages are not supported",
            EndCause::Violation("binary message".into()),
        );
    }

    /// One text message from `conn` at `now`.
    pub fn handle_text(&mut self, conn: ConnId, now: u64, text: &str) {
        self.now = self.now.max(now);
        let (max_recorded, max_recorded_bytes) =
            (self.config.max_recorded, self.config.max_recorded_bytes);
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.closing {
            return;
        }
        if c.recorded.len() < max_recorded
            && c.recorded_bytes.saturating_add(text.len()) <= max_recorded_bytes
        {
            c.recorded_bytes += text.len();
            c.recorded.push(text.to_owned());
            c.recorded_at.push(now);
        } else {
            self.counters.recorded_dropped += 1;
        }
        if text.len() > self.config.max_message_bytes {
            let msg = format!("Message of {} bytes is too large", text.len());
            return self.fatal_error(conn, &msg, EndCause::Violation(msg.clone()));
        }
        if let Err(Fatal(msg)) = self.dispatch(conn, now, text) {
            self.fatal_error(conn, &msg, EndCause::Violation(msg.clone()));
        }
    }

    fn dispatch(&mut self, conn: ConnId, now: u64, text: &str) -> Result<(), Fatal> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| Fatal(format!("Undecodable message: {e}")))?;
        let Value::Object(mut top) = v else {
            return Err(Fatal("Message is not an object".into()));
        };
        let Some(Value::String(mt)) = top.remove("message_type") else {
            return Err(Fatal("Message has no message_type".into()));
        };
        let m = match top.remove("value") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let introduced = self.conns.get(&conn).is_some_and(|c| c.introduced);
        if !introduced && mt != "Introduction" {
            return Err(Fatal(format!("{mt} before Introduction")));
        }
        if introduced && mt == "Introduction" {
            return Err(Fatal("A second Introduction".into()));
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            // Only a Heartbeat proves the client alive.
            if c.client_interval > 0 && mt == "Heartbeat" && !c.deaf {
                c.client_deadline = now + c.client_interval;
            }
        }
        let mut failures = Vec::new();
        match mt.as_str() {
            "Introduction" => self.introduction(conn, now, &m),
            "Heartbeat" | "EchoResponse" | "ActiveSubscription" => {}
            "Logoff" => self.end(conn, EndCause::Logoff, Some(Some(1000))),
            "TopicIntroduction" => self.topic_introduction(conn, &m)?,
            "KeyUpdate" => self.key_update(conn, &m, &mut failures)?,
            "JSONRecordUpdate" => {
                let (k, t) = self.record_id(conn, m.get("record_id"))?;
                let ids = record_ids(m.get("record_id"));
                let value = m.get("value").cloned().unwrap_or(Value::Null);
                let tick = m.get("tick_time").and_then(Value::as_u64).unwrap_or(0);
                self.write_record(conn, ids, &k, &t, value, tick, &mut failures);
            }
            "DeleteRecord" => {
                let (k, t) = self.resolve(conn, m.get("key_id"), m.get("topic_id"))?;
                let ids = id_pair(m.get("key_id"), m.get("topic_id"));
                let tick = m.get("tick_time").and_then(Value::as_u64).unwrap_or(0);
                self.write_record(conn, ids, &k, &t, Value::Null, tick, &mut failures);
            }
            "BatchUpdate" => self.batch(conn, &m, &mut failures)?,
            "DeleteKeyCommand" => {
                let id = m.get("key_id").and_then(Value::as_u64).unwrap_or(0);
                let k = self.client_key(conn, id)?;
                self.delete_key(conn, &k, &mut failures);
            }
            "Subscribe" => self.subscribe(conn, &m),
            "SubscribeContinue" => {
                let name = m.get("name").and_then(Value::as_str).unwrap_or("");
                self.continue_snapshot(conn, name);
            }
            "Unsubscribe" => {
                let name = m.get("name").and_then(Value::as_str).unwrap_or("");
                let removed = self
                    .conns
                    .get_mut(&conn)
                    .and_then(|c| c.subs.remove(name))
                    .is_some();
                if removed {
                    self.status(conn, name, "Finished");
                }
            }
            "SetNagleInterval" => {}
            "EchoRequest" => {
                let r = m.get("msg_ref").and_then(Value::as_u64).unwrap_or(0);
                self.send(conn, write::echo_response(r));
            }
            "ActiveOwnership" => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.marker = Marker {
                        msg_ref: m.get("msg_ref").and_then(Value::as_u64).unwrap_or(0),
                        action: m
                            .get("ownership_action")
                            .and_then(Value::as_str)
                            .unwrap_or("None")
                            .to_owned(),
                        skip_checks: m
                            .get("skip_ownership_checks")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                        require_existing: m
                            .get("require_existing")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                    };
                }
            }
            "JSONCompareExchange" => self.compare_exchange(conn, &m)?,
            _ => self.counters.unknown_messages += 1,
        }
        self.report_failures(conn, failures);
        Ok(())
    }

    fn introduction(&mut self, conn: ConnId, now: u64, m: &Map<String, Value>) {
        let version = m.get("version").and_then(Value::as_u64).unwrap_or(0);
        let user = m
            .get("user")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if version != self.config.version {
            let msg = format!("Unsupported version from {user}: {version}");
            return self.fatal_error(conn, &msg, EndCause::VersionRefused(version));
        }
        let application = m.get("application").and_then(Value::as_str).unwrap_or("");
        let uuid = match m.get("uuid") {
            Some(Value::Object(u)) => format!(
                "{:016x}{:016x}",
                u.get("high").and_then(Value::as_u64).unwrap_or(0),
                u.get("low").and_then(Value::as_u64).unwrap_or(0)
            ),
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let interval = m
            .get("heartbeat_timeout_interval")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let own = self.config.heartbeat_timeout_interval;
        let config_user = self.config.user.clone();
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.introduced = true;
        c.name = format!("{application} {user} {uuid}");
        c.namespace = m
            .get("working_namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        c.disconnect_on_write_failure = m
            .get("disconnect_on_write_failure")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        c.client_interval = interval;
        // The first heartbeat gets ten intervals of grace.
        c.client_deadline = now + interval.saturating_mul(10);
        c.next_beat = now + (own / 2).max(1);
        let intro = envelope(
            "Introduction",
            obj([
                ("version", self.config.version.into()),
                ("heartbeat_timeout_interval", own.into()),
                ("user", config_user.into()),
            ]),
        );
        self.send(conn, intro);
    }

    fn topic_introduction(&mut self, conn: ConnId, m: &Map<String, Value>) -> Result<(), Fatal> {
        let id = m.get("topic_id").and_then(Value::as_u64).unwrap_or(0);
        let name = m.get("name").and_then(Value::as_str).unwrap_or("");
        if id == 0 || name.is_empty() {
            return Err(Fatal(
                "TopicIntroduction needs a topic_id and a name".into(),
            ));
        }
        let max = self.config.max_client_ids;
        let c = self.conns.get_mut(&conn).ok_or(Fatal(String::new()))?;
        if c.client_topics.len() + c.client_keys.len() >= max && !c.client_topics.contains_key(&id)
        {
            return Err(Fatal("Too many ids introduced".into()));
        }
        // The qualified spelling of a topic of the working namespace is that topic: every id a
        // client introduces for it addresses it.
        let resolved = name
            .strip_prefix(c.namespace.as_str())
            .and_then(|rest| rest.strip_prefix("::"))
            .filter(|rest| !c.namespace.is_empty() && !rest.is_empty())
            .unwrap_or(name);
        c.client_topics.insert(id, resolved.to_owned());
        Ok(())
    }

    fn key_update(
        &mut self,
        conn: ConnId,
        m: &Map<String, Value>,
        failures: &mut Vec<Failure>,
    ) -> Result<(), Fatal> {
        let id = m.get("key_id").and_then(Value::as_u64).unwrap_or(0);
        if id == 0 {
            return Err(Fatal("KeyUpdate with key_id 0".into()));
        }
        let known = self
            .conns
            .get(&conn)
            .and_then(|c| c.client_keys.get(&id).cloned());
        let name = match (m.get("name").and_then(Value::as_str), known) {
            (Some(n), Some(k)) if n != k => {
                return Err(Fatal(format!("Key id {id} names {k}, not {n}")))
            }
            (Some(n), _) => n.to_owned(),
            (None, Some(k)) => k,
            (None, None) => return Err(Fatal(format!("Key id {id} was not introduced"))),
        };
        let classes = strings(m.get("class_list"));
        if let Some(deleted) = m.get("deleted_class").and_then(Value::as_str) {
            self.delete_class(conn, &name, deleted, &classes, failures);
            return Ok(());
        }
        let max = self.config.max_client_ids;
        let c = self.conns.get_mut(&conn).ok_or(Fatal(String::new()))?;
        if !c.client_keys.contains_key(&id) && c.client_topics.len() + c.client_keys.len() >= max {
            return Err(Fatal("Too many ids introduced".into()));
        }
        c.client_keys.insert(id, name.clone());
        for class in classes {
            self.add_class(conn, id, &name, &class, failures);
        }
        Ok(())
    }

    fn marker(&self, conn: ConnId) -> Marker {
        self.conns
            .get(&conn)
            .map(|c| c.marker.clone())
            .unwrap_or_default()
    }

    fn add_class(
        &mut self,
        conn: ConnId,
        key_id: u64,
        name: &str,
        class: &str,
        failures: &mut Vec<Failure>,
    ) {
        let fail = |reason: &'static str, detail: String| Failure {
            record: false,
            reason,
            key_id,
            topic_id: 0,
            key_name: name.to_owned(),
            topic_name: String::new(),
            class_name: class.to_owned(),
            detail,
        };
        if !self.config.classes.iter().any(|c| c.name == class) {
            return failures.push(fail("UnknownClass", format!("no class {class}")));
        }
        let marker = self.marker(conn);
        let exists = self.keys.contains_key(name);
        if !exists && marker.require_existing {
            return failures.push(fail("KeyNotFound", format!("no key {name}")));
        }
        if !exists && self.keys.len() >= self.config.max_keys {
            return failures.push(fail("KeyLimit", "the store is full".into()));
        }
        let key = self.keys.entry(name.to_owned()).or_default();
        if key.classes.contains(class) && !matches!(marker.action.as_str(), "Acquire" | "Release") {
            // Introducing a key in a class it already has changes nothing: not a write.
            return;
        }
        if let Some(owner) = key.owner {
            if owner != conn && !marker.skip_checks {
                return failures.push(fail("WriteDenied", format!("{name} is owned")));
            }
        }
        Self::apply_ownership(key, conn, &marker);
        let added = key.classes.insert(class.to_owned());
        if added {
            self.announce_key(name);
        }
    }

    fn apply_ownership(key: &mut Key, conn: ConnId, marker: &Marker) {
        match marker.action.as_str() {
            "Acquire" => key.owner = Some(conn),
            "Release" if key.owner == Some(conn) || marker.skip_checks => key.owner = None,
            _ => {}
        }
    }

    /// After a key gained a class: streaming subscribers that now match are shown the key.
    fn announce_key(&mut self, name: &str) {
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            let shown = self
                .conns
                .get(&id)
                .is_some_and(|c| c.srv_keys.contains_key(name));
            let wants = self.streaming_subs_for(id, name, None);
            if shown || wants {
                self.introduce_key_to(id, name);
            }
        }
    }

    fn key_classes(&self, name: &str) -> BTreeSet<String> {
        self.keys
            .get(name)
            .map(|k| k.classes.clone())
            .unwrap_or_default()
    }

    /// Sends `KeyUpdate` to `conn` when the key is new to it or gained classes; its id.
    fn introduce_key_to(&mut self, conn: ConnId, name: &str) -> u64 {
        let classes = self.key_classes(name);
        let Some(c) = self.conns.get_mut(&conn) else {
            return 0;
        };
        let (id, fresh) = match c.srv_keys.get(name) {
            Some((id, shown)) if *shown == classes => return *id,
            Some((id, _)) => (*id, false),
            None => {
                let id = c.next_key;
                c.next_key += 1;
                (id, true)
            }
        };
        let _ = fresh;
        c.srv_keys.insert(name.to_owned(), (id, classes.clone()));
        let list: Vec<String> = classes.into_iter().collect();
        self.send(conn, write::key_update(id, name, &list));
        id
    }

    fn introduce_topic_to(&mut self, conn: ConnId, topic: &str) -> u64 {
        let Some(c) = self.conns.get_mut(&conn) else {
            return 0;
        };
        if let Some(id) = c.srv_topics.get(topic) {
            return *id;
        }
        let id = c.next_topic;
        c.next_topic += 1;
        c.srv_topics.insert(topic.to_owned(), id);
        self.send(conn, write::topic_introduction(id, topic));
        id
    }

    fn client_key(&self, conn: ConnId, id: u64) -> Result<String, Fatal> {
        self.conns
            .get(&conn)
            .and_then(|c| c.client_keys.get(&id).cloned())
            .ok_or_else(|| Fatal(format!("Unknown key id {id}")))
    }

    fn client_topic(&self, conn: ConnId, id: u64) -> Result<String, Fatal> {
        self.conns
            .get(&conn)
            .and_then(|c| c.client_topics.get(&id).cloned())
            .ok_or_else(|| Fatal(format!("Unknown topic id {id}")))
    }

    fn resolve(
        &self,
        conn: ConnId,
        key: Option<&Value>,
        topic: Option<&Value>,
    ) -> Result<(String, String), Fatal> {
        let k = key.and_then(Value::as_u64).unwrap_or(0);
        let t = topic.and_then(Value::as_u64).unwrap_or(0);
        Ok((self.client_key(conn, k)?, self.client_topic(conn, t)?))
    }

    fn record_id(&self, conn: ConnId, v: Option<&Value>) -> Result<(String, String), Fatal> {
        let Some(Value::Object(r)) = v else {
            return Err(Fatal("record_id missing".into()));
        };
        self.resolve(conn, r.get("key_id"), r.get("topic_id"))
    }

    fn topic_def(&self, topic: &str) -> Option<&TopicDef> {
        self.config.topics.iter().find(|t| t.name == topic)
    }

    /// Why a write of `value` to (`key`, `topic`) by `conn` fails, if it does. `deleting`:
    /// the write removes the record.
    fn check_write(
        &self,
        conn: ConnId,
        key: &str,
        topic: &str,
        value: &Value,
        marker: &Marker,
    ) -> Option<(&'static str, String)> {
        let Some(def) = self.topic_def(topic) else {
            return Some(("UnknownTopic", format!("no topic {topic}")));
        };
        if !def.writable {
            return Some(("TopicNotWritable", format!("{topic} is not writable")));
        }
        let ok_type = match def.ty {
            TopicType::Any => true,
            TopicType::Number => value.is_number() || value.is_null(),
            TopicType::Text => value.is_string() || value.is_null(),
            TopicType::Bool => value.is_boolean() || value.is_null(),
        };
        if !ok_type {
            return Some(("InvalidValue", format!("{value} does not fit {topic}")));
        }
        let Some(k) = self.keys.get(key) else {
            return Some(("KeyNotFound", format!("no key {key}")));
        };
        let in_class = self
            .config
            .classes
            .iter()
            .filter(|c| k.classes.contains(&c.name))
            .any(|c| c.topics.iter().any(|t| t == topic));
        if !in_class {
            return Some((
                "TopicNotInClass",
                format!("{topic} is in no class of {key}"),
            ));
        }
        if let Some(owner) = k.owner {
            if owner != conn && !marker.skip_checks {
                let reason = if value.is_null() {
                    "DeleteDenied"
                } else {
                    "WriteDenied"
                };
                return Some((reason, format!("{key} is owned by another client")));
            }
        }
        if !value.is_null()
            && !self
                .records
                .contains_key(&(key.to_owned(), topic.to_owned()))
            && self.records.len() >= self.config.max_records
        {
            return Some(("RecordLimit", "the store is full".into()));
        }
        None
    }

    /// Lands a write addressed by the client ids `ids` (which a failure names: one topic may
    /// have several ids, G-22), or adds its failure to `failures`.
    #[allow(clippy::too_many_arguments)]
    fn write_record(
        &mut self,
        conn: ConnId,
        ids: (u64, u64),
        key: &str,
        topic: &str,
        value: Value,
        tick: u64,
        failures: &mut Vec<Failure>,
    ) {
        let marker = self.marker(conn);
        if let Some((reason, detail)) = self.check_write(conn, key, topic, &value, &marker) {
            let (key_id, topic_id) = ids;
            return failures.push(Failure {
                record: true,
                reason,
                key_id,
                topic_id,
                key_name: key.to_owned(),
                topic_name: topic.to_owned(),
                class_name: String::new(),
                detail,
            });
        }
        if let Some(k) = self.keys.get_mut(key) {
            Self::apply_ownership(k, conn, &marker);
        }
        let stamp = if tick == 0 {
            self.now.saturating_mul(1_000_000)
        } else {
            tick
        };
        self.store(key, topic, value, stamp);
    }

    fn client_ids(&self, conn: ConnId, key: &str, topic: &str) -> (u64, u64) {
        let Some(c) = self.conns.get(&conn) else {
            return (0, 0);
        };
        let k = c
            .client_keys
            .iter()
            .find(|(_, n)| *n == key)
            .map_or(0, |(i, _)| *i);
        let t = c
            .client_topics
            .iter()
            .find(|(_, n)| *n == topic)
            .map_or(0, |(i, _)| *i);
        (k, t)
    }

    /// Lands a write (null deletes) and streams it to every subscriber it concerns.
    fn store(&mut self, key: &str, topic: &str, value: Value, stamp: u64) {
        let rk = (key.to_owned(), topic.to_owned());
        let existed = self.records.contains_key(&rk);
        if value.is_null() {
            self.records.remove(&rk);
            if !existed {
                return;
            }
        } else {
            self.records.insert(
                rk,
                StoredRecord {
                    value: value.clone(),
                    tick_time: stamp,
                },
            );
        }
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            if !self.streaming_subs_for(id, key, Some(topic)) {
                continue;
            }
            let tick_flag = self.conns.get(&id).is_some_and(|c| {
                c.subs
                    .values()
                    .any(|s| s.include_tick_time && self.sub_matches(s, key, Some(topic)))
            });
            let k = self.introduce_key_to(id, key);
            let t = self.introduce_topic_to(id, topic);
            let rid = RecordId {
                key_id: k,
                topic_id: t,
            };
            let text = if value.is_null() {
                write::delete_record(rid, stamp)
            } else {
                write::record_update(rid, &value, if tick_flag { stamp } else { 0 })
            };
            self.send(id, text);
        }
    }

    fn sub_matches(&self, s: &Sub, key: &str, topic: Option<&str>) -> bool {
        let classes = self.key_classes(key);
        if classes.is_empty() {
            return false;
        }
        let class_ok = s.classes.is_empty() || s.classes.iter().any(|c| classes.contains(c));
        let key_ok = (s.key_names.is_empty() || s.key_names.iter().any(|k| k == key))
            && s.key_filter.as_ref().is_none_or(|f| f.matches(key))
            && !s
                .exclude_key_filter
                .as_ref()
                .is_some_and(|f| f.matches(key));
        let topic_ok = topic.is_none_or(|t| {
            (s.topic_names.is_empty() || s.topic_names.iter().any(|n| n == t))
                && s.topic_filter.as_ref().is_none_or(|f| f.matches(t))
                && !s
                    .exclude_topic_filter
                    .as_ref()
                    .is_some_and(|f| f.matches(t))
        });
        class_ok && key_ok && topic_ok
    }

    fn streaming_subs_for(&self, conn: ConnId, key: &str, topic: Option<&str>) -> bool {
        self.conns.get(&conn).is_some_and(|c| {
            !c.closing
                && c.subs.values().any(|s| {
                    s.streaming && s.phase == SubPhase::Streaming && self.sub_matches(s, key, topic)
                })
        })
    }

    fn batch(
        &mut self,
        conn: ConnId,
        m: &Map<String, Value>,
        failures: &mut Vec<Failure>,
    ) -> Result<(), Fatal> {
        let default_class = m.get("default_class").and_then(Value::as_str);
        let Some(Value::Array(keys)) = m.get("keys") else {
            return Err(Fatal("BatchUpdate without keys".into()));
        };
        for k in keys {
            let Value::Object(km) = k else {
                return Err(Fatal("BatchUpdate key is not an object".into()));
            };
            let id = km.get("key_id").and_then(Value::as_u64).unwrap_or(0);
            if let Some(name) = km.get("name").and_then(Value::as_str) {
                let mut classes = strings(km.get("class"));
                classes.extend(strings(km.get("classes")));
                if classes.is_empty() {
                    classes.extend(default_class.map(str::to_owned));
                }
                let mut intro = Map::new();
                intro.insert("key_id".into(), id.into());
                intro.insert("name".into(), name.into());
                intro.insert("class_list".into(), classes.into());
                self.key_update(conn, &intro, failures)?;
            }
            let key = self.client_key(conn, id)?;
            if let Some(Value::Object(topics)) = km.get("topics") {
                for (tid, value) in topics {
                    let tid: u64 = tid
                        .parse()
                        .map_err(|_| Fatal(format!("Bad topic member {tid}")))?;
                    let topic = self.client_topic(conn, tid)?;
                    self.write_record(conn, (id, tid), &key, &topic, value.clone(), 0, failures);
                }
            }
        }
        Ok(())
    }

    fn delete_class(
        &mut self,
        conn: ConnId,
        key: &str,
        class: &str,
        keep: &[String],
        failures: &mut Vec<Failure>,
    ) {
        let Some(k) = self.keys.get(key) else {
            return;
        };
        if let Some(denied) = self.delete_denied(conn, key, class) {
            return failures.push(denied);
        }
        let mut remaining = k.classes.clone();
        remaining.remove(class);
        for c in keep {
            if self.config.classes.iter().any(|d| &d.name == c) {
                remaining.insert(c.clone());
            }
        }
        self.teardown(key, &[class.to_owned()], &remaining);
    }

    fn delete_key(&mut self, conn: ConnId, key: &str, failures: &mut Vec<Failure>) {
        let Some(k) = self.keys.get(key) else {
            return;
        };
        if let Some(denied) = self.delete_denied(conn, key, "") {
            return failures.push(denied);
        }
        let classes: Vec<String> = k.classes.iter().cloned().collect();
        self.teardown(key, &classes, &BTreeSet::new());
    }

    /// The failure that refuses `conn` a delete of `key` (one class, or the whole key when
    /// `class` is empty): the key is owned by another connection and the marker does not skip
    /// the ownership checks. None when the delete may go on (or there is no such key).
    fn delete_denied(&self, conn: ConnId, key: &str, class: &str) -> Option<Failure> {
        let owner = self.keys.get(key)?.owner?;
        if owner == conn || self.marker(conn).skip_checks {
            return None;
        }
        let (key_id, _) = self.client_ids(conn, key, "");
        Some(Failure {
            record: false,
            reason: "DeleteDenied",
            key_id,
            topic_id: 0,
            key_name: key.to_owned(),
            topic_name: String::new(),
            class_name: class.to_owned(),
            detail: format!("{key} is owned by another client"),
        })
    }

    /// Removes `deleted` classes from `key` leaving `remaining`: records on topics no remaining
    /// class covers go, every connection shown the key gets one `KeyUpdate` per deleted class,
    /// and a key left with no class is deleted and its id retired.
    fn teardown(&mut self, key: &str, deleted: &[String], remaining: &BTreeSet<String>) {
        let kept_topics: BTreeSet<String> = self
            .config
            .classes
            .iter()
            .filter(|c| remaining.contains(&c.name))
            .flat_map(|c| c.topics.iter().cloned())
            .collect();
        let gone: Vec<(String, String)> = self
            .records
            .keys()
            .filter(|(k, t)| k == key && !kept_topics.contains(t))
            .cloned()
            .collect();
        for rk in &gone {
            self.records.remove(rk);
        }
        if remaining.is_empty() {
            self.keys.remove(key);
        } else if let Some(k) = self.keys.get_mut(key) {
            k.classes = remaining.clone();
        }
        let list: Vec<String> = remaining.iter().cloned().collect();
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            let Some(c) = self.conns.get_mut(&id) else {
                continue;
            };
            let shown = c.srv_keys.get(key).cloned();
            // When the key is gone, a client's own ids for it are dead: it must introduce the key
            // again. The mapping stays, so a write already in flight under it fails as a write
            // (the key is gone) instead of breaking the id map.
            let dead: Vec<u64> = if remaining.is_empty() {
                c.client_keys
                    .iter()
                    .filter(|(_, n)| n.as_str() == key)
                    .map(|(i, _)| *i)
                    .collect()
            } else {
                Vec::new()
            };
            if let Some((kid, classes)) = shown {
                for class in deleted.iter().filter(|d| classes.contains(*d)) {
                    let mut m = obj([
                        ("key_id", kid.into()),
                        ("name", key.into()),
                        ("class_list", list.clone().into()),
                    ]);
                    m.insert("deleted_class".into(), class.clone().into());
                    self.send(id, envelope("KeyUpdate", m));
                }
                if remaining.is_empty() {
                    if let Some(c) = self.conns.get_mut(&id) {
                        c.srv_keys.remove(key);
                    }
                    self.send(id, envelope("KeyIdRetired", obj([("key_id", kid.into())])));
                } else if let Some(c) = self.conns.get_mut(&id) {
                    c.srv_keys.insert(key.to_owned(), (kid, remaining.clone()));
                }
            }
            for cid in dead {
                self.send(
                    id,
                    envelope(
                        "ClientIntroducedKeyInvalidated",
                        obj([("client_introduced_key_id", cid.into())]),
                    ),
                );
            }
        }
    }

    fn compare_exchange(&mut self, conn: ConnId, m: &Map<String, Value>) -> Result<(), Fatal> {
        let (key, topic) = self.record_id(conn, m.get("record_id"))?;
        let msg_ref = m.get("msg_ref").and_then(Value::as_u64).unwrap_or(0);
        let test = m.get("test").cloned().unwrap_or(Value::Null);
        let value = m.get("value").cloned().unwrap_or(Value::Null);
        let rk = (key.clone(), topic.clone());
        let current = self
            .records
            .get(&rk)
            .map(|r| r.value.clone())
            .or_else(|| self.topic_def(&topic).and_then(|d| d.default.clone()))
            .unwrap_or(Value::Null);
        let marker = self.marker(conn);
        let denied = self
            .keys
            .get(&key)
            .and_then(|k| k.owner)
            .is_some_and(|o| o != conn)
            && !marker.skip_checks;
        let reason = if denied {
            Some(if value.is_null() {
                "DeleteDenied"
            } else {
                "WriteDenied"
            })
        } else if !same(&current, &test) {
            Some("CompareMismatch")
        } else {
            None
        };
        let mut out = obj([
            ("msg_ref", msg_ref.into()),
            ("success", reason.is_none().into()),
        ]);
        if let Some(r) = reason {
            out.insert("value".into(), current);
            out.insert("reason".into(), r.into());
            self.send(conn, envelope("JSONCompareExchangeResult", out));
            return Ok(());
        }
        // A compare may create the key's record only under a class that covers the topic.
        let mut failures = Vec::new();
        let ids = record_ids(m.get("record_id"));
        self.write_record(conn, ids, &key, &topic, value, 0, &mut failures);
        if let Some(f) = failures.first() {
            out.insert("success".into(), false.into());
            out.insert("value".into(), Value::Null);
            out.insert("reason".into(), f.reason.into());
            self.send(conn, envelope("JSONCompareExchangeResult", out));
            return Ok(());
        }
        self.send(conn, envelope("JSONCompareExchangeResult", out));
        Ok(())
    }

    fn subscribe(&mut self, conn: ConnId, m: &Map<String, Value>) {
        let name = m
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut classes = strings(m.get("class_list"));
        classes.extend(strings(m.get("class_name")));
        let unknown = classes
            .iter()
            .find(|c| !self.config.classes.iter().any(|d| &d.name == *c))
            .cloned();
        let max = self.config.max_subscriptions;
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let refusal = if name.is_empty() {
            Some("a subscription needs a name".to_owned())
        } else if c.subs.contains_key(&name) {
            Some(format!("subscription {name} is already active"))
        } else if c.subs.len() >= max {
            Some(format!("subscription {name}: too many subscriptions"))
        } else {
            unknown.map(|u| format!("subscription {name}: unknown class {u}"))
        };
        if let Some(text) = refusal {
            self.error(conn, &text, true, Vec::new(), 0);
            return self.status(conn, &name, "Finished");
        }
        let sub = Sub {
            streaming: m.get("subscription_mode").and_then(Value::as_str) == Some("Streaming"),
            classes,
            key_filter: opt_filter(m, "key_filter"),
            topic_filter: opt_filter(m, "topic_filter"),
            exclude_key_filter: opt_filter(m, "exclude_key_filter"),
            exclude_topic_filter: opt_filter(m, "exclude_topic_filter"),
            key_names: strings(m.get("key_name")),
            topic_names: strings(m.get("topic_name")),
            include_tick_time: m
                .get("include_tick_time")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            limit: m
                .get("snapshot_size_limit")
                .and_then(Value::as_u64)
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            pending: VecDeque::new(),
            phase: SubPhase::Paused,
        };
        let keys: VecDeque<String> = self
            .keys
            .keys()
            .filter(|k| self.sub_matches(&sub, k, None))
            .cloned()
            .collect();
        let topics: Vec<String> = self
            .config
            .topics
            .iter()
            .map(|t| t.name.clone())
            .filter(|t| {
                self.config
                    .classes
                    .iter()
                    .filter(|c| sub.classes.is_empty() || sub.classes.contains(&c.name))
                    .any(|c| c.topics.contains(t))
                    && (sub.topic_names.is_empty() || sub.topic_names.contains(t))
                    && sub.topic_filter.as_ref().is_none_or(|f| f.matches(t))
                    && !sub
                        .exclude_topic_filter
                        .as_ref()
                        .is_some_and(|f| f.matches(t))
            })
            .collect();
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.subs.insert(
            name.clone(),
            Sub {
                pending: keys,
                ..sub
            },
        );
        self.status(conn, &name, "ProcessingSnapshot");
        for t in topics {
            self.introduce_topic_to(conn, &t);
        }
        self.continue_snapshot(conn, &name);
    }

    /// Sends the next part of a snapshot: up to the limit's keys, then `NeedsContinue`, or the
    /// rest and the final status.
    fn continue_snapshot(&mut self, conn: ConnId, name: &str) {
        let Some(sub) = self
            .conns
            .get(&conn)
            .and_then(|c| c.subs.get(name))
            .cloned()
        else {
            return;
        };
        if sub.phase != SubPhase::Paused {
            return;
        }
        let take = if sub.limit == 0 {
            sub.pending.len()
        } else {
            sub.limit.min(sub.pending.len())
        };
        let mut pending = sub.pending.clone();
        let chunk: Vec<String> = pending.drain(..take).collect();
        let mut entries = Vec::new();
        for key in &chunk {
            let classes = self.key_classes(key);
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            let mut e = Map::new();
            let id = match c.srv_keys.get(key) {
                Some((id, shown)) if *shown == classes => *id,
                Some((id, _)) => {
                    let id = *id;
                    e.insert("name".into(), key.clone().into());
                    e.insert(
                        "classes".into(),
                        classes.iter().cloned().collect::<Vec<_>>().into(),
                    );
                    id
                }
                None => {
                    let id = c.next_key;
                    c.next_key += 1;
                    e.insert("name".into(), key.clone().into());
                    e.insert(
                        "classes".into(),
                        classes.iter().cloned().collect::<Vec<_>>().into(),
                    );
                    id
                }
            };
            c.srv_keys.insert(key.clone(), (id, classes));
            e.insert("key_id".into(), id.into());
            let mut topics = Map::new();
            let mut ticks = Map::new();
            let recs: Vec<(String, StoredRecord)> = self
                .records
                .range((key.clone(), String::new())..)
                .take_while(|((k, _), _)| k == key)
                .filter(|((_, t), _)| self.sub_matches(&sub, key, Some(t)))
                .map(|((_, t), r)| (t.clone(), r.clone()))
                .collect();
            for (t, r) in recs {
                let tid = self.introduce_topic_to(conn, &t);
                topics.insert(tid.to_string(), r.value);
                ticks.insert(tid.to_string(), r.tick_time.into());
            }
            e.insert("topics".into(), Value::Object(topics));
            if sub.include_tick_time {
                e.insert("tick_times".into(), Value::Object(ticks));
            }
            entries.push(Value::Object(e));
        }
        if !entries.is_empty() {
            self.send(
                conn,
                envelope("BatchUpdate", obj([("keys", Value::Array(entries))])),
            );
        }
        let more = !pending.is_empty();
        let Some(s) = self.conns.get_mut(&conn).and_then(|c| c.subs.get_mut(name)) else {
            return;
        };
        s.pending = pending;
        if more {
            return self.status(conn, name, "NeedsContinue");
        }
        if sub.streaming {
            s.phase = SubPhase::Streaming;
            self.status(conn, name, "Streaming");
        } else {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.subs.remove(name);
            }
            self.status(conn, name, "Finished");
        }
    }

    fn status(&mut self, conn: ConnId, name: &str, status: &str) {
        self.send(
            conn,
            envelope(
                "SubscriptionStatus",
                obj([("name", name.into()), ("status", status.into())]),
            ),
        );
    }

    fn error(
        &mut self,
        conn: ConnId,
        message: &str,
        recoverable: bool,
        failed: Vec<Value>,
        msg_ref: u64,
    ) {
        let mut m = obj([
            ("message", message.into()),
            ("recoverable", recoverable.into()),
        ]);
        if !failed.is_empty() {
            m.insert("failed_writes".into(), Value::Array(failed));
        }
        if msg_ref != 0 {
            m.insert("msg_ref".into(), msg_ref.into());
        }
        self.send(conn, envelope("Error", m));
    }

    fn report_failures(&mut self, conn: ConnId, failures: Vec<Failure>) {
        if failures.is_empty() {
            return;
        }
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let msg_ref = c.marker.msg_ref;
        let bail = c.disconnect_on_write_failure;
        if msg_ref == 0 && !bail {
            self.counters.failed_writes_logged += failures.len() as u64;
            return;
        }
        let origin = self.config.origin.clone();
        let text = failures
            .iter()
            .map(|f| {
                format!(
                    "{} key '{}' topic '{}' from '{}': {}",
                    f.reason, f.key_name, f.topic_name, origin, f.detail
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let list: Vec<Value> = failures
            .iter()
            .map(|f| {
                let union = if f.record {
                    "record_write"
                } else {
                    "key_write"
                };
                Value::Object(obj([
                    ("reason", Value::Object(obj([(union, f.reason.into())]))),
                    ("key_id", f.key_id.into()),
                    ("topic_id", f.topic_id.into()),
                    ("key_name", f.key_name.clone().into()),
                    ("topic_name", f.topic_name.clone().into()),
                    ("class_name", f.class_name.clone().into()),
                    ("malformed", f.malformed().into()),
                    ("detail", f.detail.clone().into()),
                    ("origin", origin.clone().into()),
                ]))
            })
            .collect();
        self.error(conn, &text, !bail, list, msg_ref);
        if bail {
            self.end(conn, EndCause::WriteFailure, Some(Some(1000)));
        }
    }

    fn send(&mut self, conn: ConnId, text: String) {
        let (max_n, max_b) = (self.config.max_outbox_count, self.config.max_outbox_bytes);
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.closing || c.silent {
            return;
        }
        if c.outbox.len() >= max_n || c.outbox_bytes + text.len() > max_b {
            self.counters.outbox_overflows += 1;
            // A client that cannot keep up is dropped rather than buffered without end.
            c.outbox.clear();
            c.outbox_bytes = 0;
            c.closing = true;
            c.subs.clear();
            c.ended = Some(EndCause::Overflow);
            c.outbox.push_back(Output::Close(Some(1008)));
            return;
        }
        c.outbox_bytes += text.len();
        c.outbox.push_back(Output::Text(text));
    }

    /// Ends `conn`: the close (if `answer` is Some) is queued after everything already queued.
    fn end(&mut self, conn: ConnId, cause: EndCause, answer: Option<Option<u16>>) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.closing {
            return;
        }
        c.closing = true;
        c.subs.clear();
        c.ended = Some(cause);
        if let Some(code) = answer {
            c.outbox.push_back(Output::Close(code));
        }
        self.release_owned(conn);
    }

    fn release_owned(&mut self, conn: ConnId) {
        for k in self.keys.values_mut() {
            if k.owner == Some(conn) {
                k.owner = None;
            }
        }
    }

    fn fatal_error(&mut self, conn: ConnId, message: &str, cause: EndCause) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        // An Error a silent server would not send is still not sent; the close is.
        c.silent = false;
        self.error(conn, message, false, Vec::new(), 0);
        self.end(conn, cause, Some(Some(1000)));
    }

    // ---- Faults and server-side actions ----

    /// Fault: the server stops sending anything on `conn` (heartbeats included) and keeps reading.
    pub fn silence(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.silent = true;
        }
    }

    /// Fault: the client's heartbeats on `conn` are read but no longer count, so the server's
    /// own timeout ends the connection with `Error "Heartbeat timeout"`.
    pub fn ignore_heartbeats(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.deaf = true;
        }
    }

    /// Fault: a text message that is not JSON.
    pub fn send_undecodable(&mut self, conn: ConnId) {
        self.send(
            conn,
            "{\"message_type\": \"Heartbeat\", \"value\": {".to_owned(),
        );
    }

    /// Fault: an `Error` without its `recoverable` member, and no close after it.
    pub fn send_error_without_recoverable(&mut self, conn: ConnId, message: &str) {
        self.send(conn, envelope("Error", obj([("message", message.into())])));
    }

    /// Fault: a non-recoverable Error, then a close.
    pub fn send_fatal_error(&mut self, conn: ConnId, message: &str) {
        self.fatal_error(conn, message, EndCause::FaultError);
    }

    /// Fault: a close with `code` (None: no code), nothing before it.
    pub fn close_with(&mut self, conn: ConnId, code: Option<u16>) {
        self.end(conn, EndCause::FaultClose(code), Some(code));
    }

    /// The server logs `conn` off: `Logoff`, then a close.
    pub fn logoff(&mut self, conn: ConnId) {
        self.send(conn, write::logoff());
        self.end(conn, EndCause::ServerLogoff, Some(Some(1000)));
    }

    /// A proxy-style `UpstreamLost` status for the subscription `name` of `conn`.
    pub fn upstream_lost(&mut self, conn: ConnId, name: &str) {
        self.status(conn, name, "UpstreamLost");
    }

    /// A record written by the server itself (as if by another writer), streamed like any write.
    ///
    /// # Errors
    /// The failure reason when the write cannot land (unknown topic, no such key, ...).
    pub fn write(&mut self, key: &str, topic: &str, value: Value) -> Result<(), &'static str> {
        let marker = Marker {
            skip_checks: true,
            ..Marker::default()
        };
        if let Some((reason, _)) = self.check_write(ConnId(0), key, topic, &value, &marker) {
            return Err(reason);
        }
        let stamp = self.now.saturating_mul(1_000_000);
        self.store(key, topic, value, stamp);
        Ok(())
    }

    /// Creates `key` in `class` (server side), shown to streaming subscribers that match.
    ///
    /// # Errors
    /// `UnknownClass` or `KeyLimit`.
    pub fn create_key(&mut self, key: &str, class: &str) -> Result<(), &'static str> {
        if !self.config.classes.iter().any(|c| c.name == class) {
            return Err("UnknownClass");
        }
        if !self.keys.contains_key(key) && self.keys.len() >= self.config.max_keys {
            return Err("KeyLimit");
        }
        let added = self
            .keys
            .entry(key.to_owned())
            .or_default()
            .classes
            .insert(class.to_owned());
        if added {
            self.announce_key(key);
        }
        Ok(())
    }

    /// Deletes `key` whole (server side): per-class teardown, then `KeyIdRetired`.
    pub fn remove_key(&mut self, key: &str) {
        let classes: Vec<String> = self
            .keys
            .get(key)
            .map(|k| k.classes.iter().cloned().collect())
            .unwrap_or_default();
        if !classes.is_empty() {
            self.teardown(key, &classes, &BTreeSet::new());
        }
    }

    // ---- Inspection ----

    /// The stored value of a record.
    #[must_use]
    pub fn record(&self, key: &str, topic: &str) -> Option<&Value> {
        self.records
            .get(&(key.to_owned(), topic.to_owned()))
            .map(|r| &r.value)
    }

    /// The classes of a key (empty when it does not exist).
    #[must_use]
    pub fn classes(&self, key: &str) -> Vec<String> {
        self.key_classes(key).into_iter().collect()
    }

    /// The connection owning `key`, if any.
    #[must_use]
    pub fn owner(&self, key: &str) -> Option<ConnId> {
        self.keys.get(key).and_then(|k| k.owner)
    }

    /// Every text message `conn` sent, in order (up to [`ServerConfig::max_recorded`]).
    #[must_use]
    pub fn received(&self, conn: ConnId) -> &[String] {
        self.conns.get(&conn).map_or(&[], |c| c.recorded.as_slice())
    }

    /// When each message of [`Server::received`] arrived (ms), in the same order.
    #[must_use]
    pub fn received_at(&self, conn: ConnId) -> &[u64] {
        self.conns
            .get(&conn)
            .map_or(&[], |c| c.recorded_at.as_slice())
    }

    /// How the model ended `conn`, once it did.
    #[must_use]
    pub fn ended(&self, conn: ConnId) -> Option<&EndCause> {
        self.conns.get(&conn).and_then(|c| c.ended.as_ref())
    }

    /// The client's name, `"<application> <user> <uuid>"`, once introduced.
    #[must_use]
    pub fn client_name(&self, conn: ConnId) -> Option<&str> {
        self.conns
            .get(&conn)
            .filter(|c| c.introduced)
            .map(|c| c.name.as_str())
    }

    /// Whether `conn` is introduced and not ending.
    #[must_use]
    pub fn is_open(&self, conn: ConnId) -> bool {
        self.conns
            .get(&conn)
            .is_some_and(|c| c.introduced && !c.closing)
    }

    /// The connections of the model, open or ended.
    #[must_use]
    pub fn connections(&self) -> Vec<ConnId> {
        self.conns.keys().copied().collect()
    }

    /// Forgets an ended connection (its record of frames goes too).
    pub fn forget(&mut self, conn: ConnId) {
        if self.conns.get(&conn).is_some_and(|c| c.closing) {
            self.conns.remove(&conn);
        }
    }

    /// Forgets the oldest ended connections until at most `keep` ended ones remain.
    pub fn prune_ended(&mut self, keep: usize) {
        let ended: Vec<ConnId> = self
            .conns
            .iter()
            .filter(|(_, c)| c.closing)
            .map(|(id, _)| *id)
            .collect();
        for id in ended.iter().take(ended.len().saturating_sub(keep)) {
            self.conns.remove(id);
        }
    }
}
