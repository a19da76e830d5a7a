//! The JSON codec: every GAR message a JSON client sends or reads, as
//! `{"message_type": <name>, "value": {...}}` in one WebSocket text message.

use serde_json::{Map, Number, Value};

use crate::Limits;

/// Why a message from the network could not be read. Never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// The text is longer than [`Limits::max_message_bytes`].
    #[error("message of {len} bytes exceeds the limit of {limit}")]
    TooLarge {
        /// Bytes received.
        len: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The text is not one JSON object.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    /// The envelope lacks a string `message_type`.
    #[error("missing message_type")]
    NoMessageType,
    /// A required member is missing or has the wrong type.
    #[error("{message_type}: member `{member}` missing or mistyped")]
    BadMember {
        /// The message being read.
        message_type: &'static str,
        /// The member that failed.
        member: &'static str,
    },
    /// A `topic_id` or `key_id` of 0, which the protocol makes invalid.
    #[error("{message_type}: id 0 in `{member}`")]
    ZeroId {
        /// The message being read.
        message_type: &'static str,
        /// The member that carried 0.
        member: &'static str,
    },
    /// A batch has more keys than [`Limits::max_batch_keys`].
    #[error("batch of {0} keys exceeds the limit")]
    BatchTooLarge(usize),
    /// A record, a key's class teardown, or a key update without the key's name names an id
    /// the server never introduced (or retired): the id maps are out of step.
    #[error("a message names {kind} id {id}, which was not introduced")]
    UnknownId {
        /// `key` or `topic`.
        kind: &'static str,
        /// The id.
        id: u64,
    },
    /// A binary WebSocket message: the binary layouts are not public, so they are never guessed.
    #[error("binary messages are not supported")]
    Binary,
    /// The server closed with a code other than 1000, 1001 or none (1005): an error close.
    #[error("the server closed the connection with code {0}")]
    CloseCode(u16),
    /// A message above the size limit, refused by the transport before it was read whole.
    #[error("a message above the size limit, refused unread")]
    Oversized,
    /// A close frame whose body is one byte: a close code takes two.
    #[error("a malformed close frame (1-byte body)")]
    MalformedClose,
    /// The server advertised a heartbeat timeout interval (ms) above
    /// [`Limits::max_server_heartbeat_interval`].
    #[error("the server's heartbeat interval of {0} ms exceeds the limit")]
    HeartbeatInterval(u64),
    /// The WebSocket layer broke its own rules (a text message that is not UTF-8, a reserved
    /// opcode, a masked or fragmented control frame, ...); the text says which.
    #[error("a WebSocket protocol error from the server: {0}")]
    Framing(String),
    /// A reply the protocol requires (a heartbeat, `SubscribeContinue`, the answer to an
    /// `EchoRequest`) found no room in the outbound queue even within its reserve
    /// ([`Limits::reserved_reply_count`]): the server asks faster than the connection sends.
    #[error("the outbound queue is full even for the protocol's own replies")]
    RepliesBlocked,
    /// A known server key id came with another name than the one it was introduced with.
    #[error("key id {id} is `{known}` but came as `{got}`")]
    NameMismatch {
        /// The key id.
        id: u64,
        /// The name it was introduced with.
        known: String,
        /// The name it came with now.
        got: String,
    },
    /// A known server topic id was introduced again under another name. One topic may have
    /// several ids (one per spelling), but one id never names two topics.
    #[error("topic id {id} is `{known}` but was introduced again as `{got}`")]
    TopicNameMismatch {
        /// The topic id.
        id: u64,
        /// The name it was introduced with.
        known: String,
        /// The name it came with now.
        got: String,
    },
    /// A message other than `Introduction`, `Heartbeat`, `Error` or `Logoff` came before the
    /// server's `Introduction`: the server's session has not begun, so nothing in it can be
    /// read (and the `Introduction` would wipe it).
    #[error("{0} before the server's Introduction")]
    BeforeIntroduction(&'static str),
    /// The server introduced a topic or key id, or named more classes for a known key, than
    /// the server id maps may hold ([`Limits::max_ids`] ids, [`Limits::max_id_name_bytes`]
    /// bytes of names). Dropping it would leave a later message naming that id unreadable,
    /// so the session ends here instead.
    #[error("server {kind} id {id} does not fit the id maps: `{bound}` of {limit} reached")]
    IdMapFull {
        /// `key` or `topic`.
        kind: &'static str,
        /// The id being introduced or updated.
        id: u64,
        /// The bound that was reached: `max_ids` or `max_id_name_bytes`.
        bound: &'static str,
        /// That bound's configured value.
        limit: usize,
    },
}

/// A record's address: the key and topic ids of the sender's id space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordId {
    /// The key id (never 0).
    pub key_id: u64,
    /// The topic id (never 0).
    pub topic_id: u64,
}

/// A derived record's reason for having no value.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// `InputMissing`, `KeyCastMissed`, `Suppressed`, `ComputeError` or `InputError`.
    pub reason: String,
    /// The absent or erroring inputs, as sent.
    pub missing_inputs: Vec<Value>,
    /// The error text.
    pub text: String,
}

/// One key of a key-major batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchKey {
    /// The key id.
    pub key_id: u64,
    /// The key name: present when the batch introduces the key.
    pub name: Option<String>,
    /// The classes named for this key (`class` or `classes`); empty means the default class.
    pub classes: Vec<String>,
    /// The records, topic id to value (a null value deletes).
    pub topics: Vec<(u64, Value)>,
    /// Tick times, topic id to nanoseconds.
    pub tick_times: Vec<(u64, u64)>,
}

/// A subscription's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// The snapshot started.
    ProcessingSnapshot,
    /// The snapshot hit its size limit: send `SubscribeContinue`.
    NeedsContinue,
    /// The snapshot is done; live updates follow.
    Streaming,
    /// The subscription is over (snapshot done, unsubscribed, or refused).
    Finished,
    /// The proxy serving the subscription lost its upstream.
    UpstreamLost,
}

/// The result of a compare-exchange.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareResult {
    /// The correlation id of the request.
    pub msg_ref: u64,
    /// True only when the value was applied.
    pub success: bool,
    /// The record's current value on a failure.
    pub value: Option<Value>,
    /// `CompareMismatch`, `WriteDenied` or `DeleteDenied` on a failure.
    pub reason: Option<String>,
}

/// The server's `Error` message, whole.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerError {
    /// The text.
    pub message: String,
    /// Whether the connection survives.
    pub recoverable: bool,
    /// The failed writes of one client message, as sent.
    pub failed_writes: Vec<Value>,
    /// The correlation id, 0 when absent.
    pub msg_ref: u64,
}

impl ServerError {
    /// The write-errors view of this Error: `(failed_writes, message, msg_ref)`, the three
    /// things a write-errors handler is given; None when it reports no failed write. The
    /// Error itself stays whole (its `recoverable` flag says whether the session goes on).
    #[must_use]
    pub fn write_errors(&self) -> Option<(&[Value], &str, u64)> {
        (!self.failed_writes.is_empty()).then_some((
            self.failed_writes.as_slice(),
            self.message.as_str(),
            self.msg_ref,
        ))
    }
}

/// A message read from the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Inbound {
    /// The server's introduction.
    Introduction {
        /// Its protocol version.
        version: u64,
        /// Its heartbeat timeout in milliseconds.
        heartbeat_timeout_interval: u64,
        /// Its user name.
        user: String,
    },
    /// A heartbeat.
    Heartbeat {
        /// The sender's stamp.
        u_milliseconds: u64,
    },
    /// An error.
    Error(ServerError),
    /// The server logs off.
    Logoff,
    /// A topic id introduced.
    TopicIntroduction {
        /// The server's topic id.
        topic_id: u64,
        /// The topic name.
        name: String,
    },
    /// A key introduced, extended, or torn down per class.
    KeyUpdate {
        /// The server's key id.
        key_id: u64,
        /// The key name, when sent.
        name: Option<String>,
        /// The classes (the remaining ones after a `deleted_class`).
        class_list: Vec<String>,
        /// The class deleted, for a teardown.
        deleted_class: Option<String>,
    },
    /// The server's key id is gone (not a data teardown).
    KeyIdRetired {
        /// The retired id.
        key_id: u64,
    },
    /// A client-assigned key id is dead.
    ClientIntroducedKeyInvalidated {
        /// The client's id.
        client_introduced_key_id: u64,
    },
    /// One record.
    RecordUpdate {
        /// The address.
        record_id: RecordId,
        /// The value; null deletes.
        value: Value,
        /// The stamp, when sent.
        tick_time: Option<u64>,
    },
    /// A record deleted.
    DeleteRecord {
        /// The address.
        record_id: RecordId,
        /// The stamp.
        tick_time: u64,
    },
    /// Only the stamp of a record advanced.
    RecordTick {
        /// The address.
        record_id: RecordId,
        /// The stamp.
        tick_time: u64,
    },
    /// A diagnostic replaces a record's value.
    RecordDiagnostic {
        /// The address.
        record_id: RecordId,
        /// The diagnostic.
        diagnostic: Diagnostic,
    },
    /// A key-major batch.
    BatchUpdate {
        /// The class of keys that name none.
        default_class: Option<String>,
        /// The keys.
        keys: Vec<BatchKey>,
    },
    /// A subscription's status.
    SubscriptionStatus {
        /// The subscription name.
        name: String,
        /// Its status.
        status: Status,
    },
    /// Tags the following messages with a subscription group.
    ActiveSubscription {
        /// The group.
        subscription_group: u64,
    },
    /// The answer to an echo.
    EchoResponse {
        /// The correlation id.
        msg_ref: u64,
    },
    /// The server asks for an echo.
    EchoRequest {
        /// The correlation id.
        msg_ref: u64,
    },
    /// A compare-exchange result.
    CompareExchangeResult(CompareResult),
    /// A message type this client does not know; a new type does not change the protocol version,
    /// so it is skipped rather than refused.
    Other {
        /// Its `message_type`.
        message_type: String,
    },
}

/// A subscription request. `None` members are left out of the JSON.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Subscribe {
    /// The subscription name.
    pub name: String,
    /// Streaming when true, snapshot otherwise.
    pub streaming: bool,
    /// The classes.
    pub class_list: Vec<String>,
    /// Nagle interval (ms).
    pub nagle_interval: u64,
    /// Key id filter (0 = none).
    pub key_id: u64,
    /// Topic id filter (0 = none).
    pub topic_id: u64,
    /// Key name filter (regex).
    pub key_filter: Option<String>,
    /// Topic name filter.
    pub topic_filter: Option<String>,
    /// Key exclusion filter.
    pub exclude_key_filter: Option<String>,
    /// Topic exclusion filter.
    pub exclude_topic_filter: Option<String>,
    /// Receive tick times.
    pub include_tick_time: Option<bool>,
    /// Receive null-class diagnostics.
    pub include_diagnostics: Option<bool>,
    /// Assert the proxy's cache covers this subscription.
    pub assume_cached_subscriptions_cover: Option<bool>,
    /// Output density; the engine reads `KeyMajor` (the default when left out) and refuses to
    /// ask for `TopicMajor` or `RecordMajor`.
    pub density: Option<String>,
    /// Records per part of the snapshot: at this many the server pauses with `NeedsContinue`
    /// (the engine answers `SubscribeContinue`). `None` leaves it out: no limit.
    pub snapshot_size_limit: Option<u64>,
}

fn envelope(message_type: &str, value: Option<Map<String, Value>>) -> String {
    let mut m = Map::new();
    m.insert("message_type".into(), Value::String(message_type.into()));
    if let Some(v) = value {
        m.insert("value".into(), Value::Object(v));
    }
    to_text(&Value::Object(m))
}

/// Writes a JSON value as GAR text. Numbers keep their digits; an exponent is written without a
/// `+` sign, so the infinities read as `1e999` / `-1e999` exactly as the protocol spells them.
#[must_use]
pub fn to_text(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &mut out);
    out
}

fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Number(n) => out.push_str(&n.to_string().replace("e+", "e").replace("E+", "E")),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_value(x, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn obj(pairs: Vec<(&str, Value)>) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn record_id_value(r: RecordId) -> Value {
    Value::Object(obj(vec![
        ("key_id", r.key_id.into()),
        ("topic_id", r.topic_id.into()),
    ]))
}

/// A float as a GAR JSON value: the infinities become numbers that [`to_text`] (and so every
/// outbound message) writes as `1e999` / `-1e999`, NaN becomes `null`, other values keep the
/// shortest round-trip digits.
#[must_use]
pub fn float_value(x: f64) -> Value {
    let text = if x.is_nan() {
        return Value::Null;
    } else if x == f64::INFINITY {
        "1e999".to_string()
    } else if x == f64::NEG_INFINITY {
        "-1e999".to_string()
    } else {
        format!("{x:?}")
    };
    serde_json::from_str::<Number>(&text).map_or(Value::Null, Value::Number)
}

/// Reads a number as a float, accepting the overflow spelling `1e999` and the words
/// `infinity` / `-infinity` (any case, as strings) for the infinities; null reads as NaN.
#[must_use]
pub fn value_as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Null => Some(f64::NAN),
        Value::Number(n) => n.to_string().parse::<f64>().ok(),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "infinity" | "+infinity" | "inf" => Some(f64::INFINITY),
            "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Outbound messages: each function returns the text of one WebSocket message.
pub mod write {
    use super::*;

    /// The introduction fields a client sends.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Introduction {
        /// JSON_VERSION.
        pub version: u64,
        /// Own heartbeat timeout (ms).
        pub heartbeat_timeout_interval: u64,
        /// User name.
        pub user: String,
        /// Application name.
        pub application: String,
        /// Process id.
        pub pid: u64,
        /// Per-connection uuid, low half.
        pub uuid_low: u64,
        /// Per-connection uuid, high half.
        pub uuid_high: u64,
        /// Working namespace.
        pub working_namespace: String,
        /// One update per record across subscriptions.
        pub unique_key_and_record_updates: bool,
        /// Close on the first failed write.
        pub disconnect_on_write_failure: bool,
    }

    /// `Introduction`.
    #[must_use]
    pub fn introduction(i: &Introduction) -> String {
        let uuid = Value::Object(obj(vec![
            ("low", i.uuid_low.into()),
            ("high", i.uuid_high.into()),
        ]));
        envelope(
            "Introduction",
            Some(obj(vec![
                ("version", i.version.into()),
                (
                    "heartbeat_timeout_interval",
                    i.heartbeat_timeout_interval.into(),
                ),
                ("user", i.user.clone().into()),
                ("application", i.application.clone().into()),
                ("pid", i.pid.into()),
                ("uuid", uuid),
                ("working_namespace", i.working_namespace.clone().into()),
                (
                    "unique_key_and_record_updates",
                    i.unique_key_and_record_updates.into(),
                ),
                (
                    "disconnect_on_write_failure",
                    i.disconnect_on_write_failure.into(),
                ),
            ])),
        )
    }

    /// `Heartbeat {u_milliseconds}`.
    #[must_use]
    pub fn heartbeat(u_milliseconds: u64) -> String {
        envelope(
            "Heartbeat",
            Some(obj(vec![("u_milliseconds", u_milliseconds.into())])),
        )
    }

    /// `Logoff` (no value).
    #[must_use]
    pub fn logoff() -> String {
        envelope("Logoff", None)
    }

    /// `TopicIntroduction {topic_id, name}`.
    #[must_use]
    pub fn topic_introduction(topic_id: u64, name: &str) -> String {
        envelope(
            "TopicIntroduction",
            Some(obj(vec![
                ("topic_id", topic_id.into()),
                ("name", name.into()),
            ])),
        )
    }

    /// `KeyUpdate {key_id, name, class_list}`.
    #[must_use]
    pub fn key_update(key_id: u64, name: &str, class_list: &[String]) -> String {
        envelope(
            "KeyUpdate",
            Some(obj(vec![
                ("key_id", key_id.into()),
                ("name", name.into()),
                ("class_list", class_list.to_vec().into()),
            ])),
        )
    }

    /// `JSONRecordUpdate {record_id, value, tick_time?}`; tick time 0 is left out.
    #[must_use]
    pub fn record_update(record_id: RecordId, value: &Value, tick_time: u64) -> String {
        let mut m = obj(vec![
            ("record_id", record_id_value(record_id)),
            ("value", value.clone()),
        ]);
        if tick_time != 0 {
            m.insert("tick_time".into(), tick_time.into());
        }
        envelope("JSONRecordUpdate", Some(m))
    }

    /// `DeleteRecord {key_id, topic_id, tick_time}`.
    #[must_use]
    pub fn delete_record(record_id: RecordId, tick_time: u64) -> String {
        envelope(
            "DeleteRecord",
            Some(obj(vec![
                ("key_id", record_id.key_id.into()),
                ("topic_id", record_id.topic_id.into()),
                ("tick_time", tick_time.into()),
            ])),
        )
    }

    /// `Subscribe {...}`, null members left out.
    #[must_use]
    pub fn subscribe(s: &Subscribe) -> String {
        let mode = if s.streaming { "Streaming" } else { "Snapshot" };
        let mut m = obj(vec![
            ("subscription_mode", mode.into()),
            ("nagle_interval", s.nagle_interval.into()),
            ("name", s.name.clone().into()),
            ("key_id", s.key_id.into()),
            ("topic_id", s.topic_id.into()),
            ("class_list", s.class_list.clone().into()),
        ]);
        let opt_s = [
            ("key_filter", &s.key_filter),
            ("topic_filter", &s.topic_filter),
            ("exclude_key_filter", &s.exclude_key_filter),
            ("exclude_topic_filter", &s.exclude_topic_filter),
            ("density", &s.density),
        ];
        for (k, v) in opt_s {
            if let Some(v) = v {
                m.insert(k.into(), v.clone().into());
            }
        }
        let opt_b = [
            ("include_tick_time", s.include_tick_time),
            ("include_diagnostics", s.include_diagnostics),
            (
                "assume_cached_subscriptions_cover",
                s.assume_cached_subscriptions_cover,
            ),
        ];
        for (k, v) in opt_b {
            if let Some(v) = v {
                m.insert(k.into(), v.into());
            }
        }
        if let Some(limit) = s.snapshot_size_limit {
            m.insert("snapshot_size_limit".into(), limit.into());
        }
        envelope("Subscribe", Some(m))
    }

    /// The ownership action of an `ActiveOwnership` marker.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum OwnershipAction {
        /// No change of owner.
        #[default]
        None,
        /// Take ownership.
        Acquire,
        /// Give ownership up.
        Release,
    }

    /// The fields of an `ActiveOwnership` marker.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    pub struct Ownership {
        /// Where recoverable errors of the following writes go; 0: logged by the server only.
        pub msg_ref: u64,
        /// The action.
        pub ownership_action: OwnershipAction,
        /// Ignore the current owner.
        pub skip_ownership_checks: bool,
        /// Write only to keys that exist.
        pub require_existing: bool,
        /// The remote `g::Client` key id of the owner; 0: this connection.
        pub client_key_id: u64,
        /// Introduces the `g::Client` key bound to `client_key_id`.
        pub client_key_name: Option<String>,
    }

    /// `ActiveOwnership {...}`; `client_key_name` is left out when absent.
    #[must_use]
    pub fn active_ownership(o: &Ownership) -> String {
        let action = match o.ownership_action {
            OwnershipAction::None => "None",
            OwnershipAction::Acquire => "Acquire",
            OwnershipAction::Release => "Release",
        };
        let mut m = obj(vec![
            ("msg_ref", o.msg_ref.into()),
            ("ownership_action", action.into()),
            ("skip_ownership_checks", o.skip_ownership_checks.into()),
            ("require_existing", o.require_existing.into()),
            ("client_key_id", o.client_key_id.into()),
        ]);
        if let Some(n) = &o.client_key_name {
            m.insert("client_key_name".into(), n.clone().into());
        }
        envelope("ActiveOwnership", Some(m))
    }

    /// `KeyUpdate {key_id, name, deleted_class}`: the client tears one class down from a key it
    /// introduced. The request names the key and the class only (as the reference client writes
    /// it); the remaining classes are the server's to say in its teardown message.
    #[must_use]
    pub fn delete_class(key_id: u64, name: &str, deleted_class: &str) -> String {
        envelope(
            "KeyUpdate",
            Some(obj(vec![
                ("key_id", key_id.into()),
                ("name", name.into()),
                ("deleted_class", deleted_class.into()),
            ])),
        )
    }

    /// `DeleteKeyCommand {key_id}`: asks the server to delete the whole key (client to server
    /// only; the server answers subscribers with per-class teardown, G-36, G-38).
    #[must_use]
    pub fn delete_key_command(key_id: u64) -> String {
        envelope(
            "DeleteKeyCommand",
            Some(obj(vec![("key_id", key_id.into())])),
        )
    }

    /// `SubscribeContinue {name}`.
    #[must_use]
    pub fn subscribe_continue(name: &str) -> String {
        envelope("SubscribeContinue", Some(obj(vec![("name", name.into())])))
    }

    /// `Unsubscribe {name}`.
    #[must_use]
    pub fn unsubscribe(name: &str) -> String {
        envelope("Unsubscribe", Some(obj(vec![("name", name.into())])))
    }

    /// `SetNagleInterval {name, nagle_interval}`.
    #[must_use]
    pub fn set_nagle_interval(name: &str, nagle_interval: u64) -> String {
        envelope(
            "SetNagleInterval",
            Some(obj(vec![
                ("name", name.into()),
                ("nagle_interval", nagle_interval.into()),
            ])),
        )
    }

    /// `EchoRequest {msg_ref}`.
    #[must_use]
    pub fn echo_request(msg_ref: u64) -> String {
        envelope("EchoRequest", Some(obj(vec![("msg_ref", msg_ref.into())])))
    }

    /// `EchoResponse {msg_ref}`.
    #[must_use]
    pub fn echo_response(msg_ref: u64) -> String {
        envelope("EchoResponse", Some(obj(vec![("msg_ref", msg_ref.into())])))
    }

    /// `JSONCompareExchange {record_id, msg_ref, test, value}`; null test matches a missing
    /// record, null value deletes.
    #[must_use]
    pub fn compare_exchange(
        record_id: RecordId,
        msg_ref: u64,
        test: &Value,
        value: &Value,
    ) -> String {
        envelope(
            "JSONCompareExchange",
            Some(obj(vec![
                ("record_id", record_id_value(record_id)),
                ("msg_ref", msg_ref.into()),
                ("test", test.clone()),
                ("value", value.clone()),
            ])),
        )
    }
}

/// Reads one text message from the server.
///
/// # Errors
/// A [`Violation`] for anything that is not a well-formed GAR JSON message within the limits.
pub fn decode(text: &str, limits: &Limits) -> Result<Inbound, Violation> {
    if text.len() > limits.max_message_bytes {
        return Err(Violation::TooLarge {
            len: text.len(),
            limit: limits.max_message_bytes,
        });
    }
    let spelled = infinity_words_as_numbers(text);
    let v: Value = serde_json::from_str(spelled.as_deref().unwrap_or(text))
        .map_err(|e| Violation::NotJson(e.to_string()))?;
    let Value::Object(mut top) = v else {
        return Err(Violation::NotJson("not an object".into()));
    };
    let Some(Value::String(mt)) = top.remove("message_type") else {
        return Err(Violation::NoMessageType);
    };
    let value = match top.remove("value") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(Violation::BadMember {
                message_type: "envelope",
                member: "value",
            })
        }
    };
    let r = Reader { mt: "", m: &value };
    Ok(match mt.as_str() {
        "Introduction" => {
            let r = r.named("Introduction");
            Inbound::Introduction {
                version: r.u64("version")?,
                heartbeat_timeout_interval: r.u64("heartbeat_timeout_interval")?,
                user: r.opt_str("user")?.unwrap_or_default(),
            }
        }
        "Heartbeat" => Inbound::Heartbeat {
            u_milliseconds: r.named("Heartbeat").u64("u_milliseconds")?,
        },
        "Error" => {
            let r = r.named("Error");
            Inbound::Error(ServerError {
                message: r.opt_str("message")?.unwrap_or_default(),
                recoverable: r.opt_bool("recoverable")?.unwrap_or(false),
                failed_writes: r.opt_array("failed_writes")?,
                msg_ref: r.opt_u64("msg_ref")?.unwrap_or(0),
            })
        }
        "Logoff" => Inbound::Logoff,
        "TopicIntroduction" => {
            let r = r.named("TopicIntroduction");
            Inbound::TopicIntroduction {
                topic_id: r.id("topic_id")?,
                name: r.str("name")?,
            }
        }
        "KeyUpdate" => {
            let r = r.named("KeyUpdate");
            Inbound::KeyUpdate {
                key_id: r.id("key_id")?,
                name: r.opt_str("name")?,
                class_list: r.strings("class_list", limits)?,
                deleted_class: r.opt_str("deleted_class")?,
            }
        }
        "KeyIdRetired" => Inbound::KeyIdRetired {
            key_id: r.named("KeyIdRetired").id("key_id")?,
        },
        "ClientIntroducedKeyInvalidated" => Inbound::ClientIntroducedKeyInvalidated {
            client_introduced_key_id: r
                .named("ClientIntroducedKeyInvalidated")
                .id("client_introduced_key_id")?,
        },
        "JSONRecordUpdate" => {
            let r = r.named("JSONRecordUpdate");
            Inbound::RecordUpdate {
                record_id: r.record_id("record_id")?,
                // `value` is required: an explicit null deletes, an absent one is malformed.
                value: r.m.get("value").cloned().ok_or_else(|| r.bad("value"))?,
                tick_time: r.opt_u64("tick_time")?,
            }
        }
        "DeleteRecord" => {
            let r = r.named("DeleteRecord");
            Inbound::DeleteRecord {
                record_id: RecordId {
                    key_id: r.id("key_id")?,
                    topic_id: r.id("topic_id")?,
                },
                tick_time: r.opt_u64("tick_time")?.unwrap_or(0),
            }
        }
        "RecordTick" => {
            let r = r.named("RecordTick");
            Inbound::RecordTick {
                record_id: r.record_id("record_id")?,
                tick_time: r.u64("tick_time")?,
            }
        }
        "RecordDiagnostic" => {
            let r = r.named("RecordDiagnostic");
            let Some(Value::Object(d)) = r.m.get("diagnostic") else {
                return Err(r.bad("diagnostic"));
            };
            let dr = Reader {
                mt: "RecordDiagnostic",
                m: d,
            };
            Inbound::RecordDiagnostic {
                record_id: r.record_id("record_id")?,
                diagnostic: Diagnostic {
                    reason: dr.str("reason")?,
                    missing_inputs: dr.opt_array("missing_inputs")?,
                    text: dr.opt_str("text")?.unwrap_or_default(),
                },
            }
        }
        "BatchUpdate" => decode_batch(r.named("BatchUpdate"), limits)?,
        "SubscriptionStatus" => {
            let r = r.named("SubscriptionStatus");
            let status = match r.str("status")?.as_str() {
                "ProcessingSnapshot" => Status::ProcessingSnapshot,
                "NeedsContinue" => Status::NeedsContinue,
                "Streaming" => Status::Streaming,
                "Finished" => Status::Finished,
                "UpstreamLost" => Status::UpstreamLost,
                _ => return Err(r.bad("status")),
            };
            Inbound::SubscriptionStatus {
                name: r.str("name")?,
                status,
            }
        }
        "ActiveSubscription" => Inbound::ActiveSubscription {
            subscription_group: r.named("ActiveSubscription").u64("subscription_group")?,
        },
        "EchoResponse" => Inbound::EchoResponse {
            msg_ref: r.named("EchoResponse").u64("msg_ref")?,
        },
        "EchoRequest" => Inbound::EchoRequest {
            msg_ref: r.named("EchoRequest").u64("msg_ref")?,
        },
        "JSONCompareExchangeResult" => {
            let r = r.named("JSONCompareExchangeResult");
            Inbound::CompareExchangeResult(CompareResult {
                msg_ref: r.u64("msg_ref")?,
                success: r.opt_bool("success")?.ok_or_else(|| r.bad("success"))?,
                value: r.m.get("value").cloned(),
                reason: r.opt_str("reason")?,
            })
        }
        _ => Inbound::Other { message_type: mt },
    })
}

fn decode_batch(r: Reader<'_>, limits: &Limits) -> Result<Inbound, Violation> {
    let default_class = r.opt_str("default_class")?;
    let Some(Value::Array(keys)) = r.m.get("keys") else {
        return Err(r.bad("keys"));
    };
    if keys.len() > limits.max_batch_keys {
        return Err(Violation::BatchTooLarge(keys.len()));
    }
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        let Value::Object(km) = k else {
            return Err(r.bad("keys"));
        };
        let kr = Reader { mt: r.mt, m: km };
        let mut classes = Vec::new();
        if let Some(c) = kr.opt_str("class")? {
            classes.push(c);
        }
        if km.contains_key("classes") {
            classes.extend(kr.strings("classes", limits)?);
        }
        let mut topics = Vec::new();
        match km.get("topics") {
            None | Some(Value::Null) => {}
            Some(Value::Object(t)) => {
                for (id, v) in t {
                    topics.push((topic_member(id, r.mt)?, v.clone()));
                }
            }
            Some(_) => return Err(r.bad("topics")),
        }
        let mut tick_times = Vec::new();
        match km.get("tick_times") {
            None | Some(Value::Null) => {}
            Some(Value::Object(t)) => {
                for (id, v) in t {
                    let stamp = v.as_u64().ok_or_else(|| r.bad("tick_times"))?;
                    tick_times.push((topic_member(id, r.mt)?, stamp));
                }
            }
            Some(_) => return Err(r.bad("tick_times")),
        }
        // The stamps name the same topics as the values beside them: a stamp for a topic the
        // entry carries no value of stamps nothing and is malformed, not ignored.
        if !tick_times.is_empty() {
            let named: std::collections::BTreeSet<u64> = topics.iter().map(|(t, _)| *t).collect();
            if tick_times.iter().any(|(t, _)| !named.contains(t)) {
                return Err(r.bad("tick_times"));
            }
        }
        out.push(BatchKey {
            key_id: kr.id("key_id")?,
            name: kr.opt_str("name")?,
            classes,
            topics,
            tick_times,
        });
    }
    Ok(Inbound::BatchUpdate {
        default_class,
        keys: out,
    })
}

/// The bare words `infinity` / `-infinity` (any case) outside strings, rewritten to the overflow
/// spelling `1e999` / `-1e999`; None when the text has none.
fn infinity_words_as_numbers(text: &str) -> Option<String> {
    const WORD: &[u8] = b"infinity";
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let (mut i, mut copied, mut in_str, mut esc) = (0, 0, false, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        let word_end = i + WORD.len();
        let starts_word = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if starts_word
            && word_end <= b.len()
            && b[i..word_end].eq_ignore_ascii_case(WORD)
            && (word_end == b.len() || !b[word_end].is_ascii_alphanumeric())
        {
            let o = out.get_or_insert_with(String::new);
            o.push_str(&text[copied..i]);
            o.push_str("1e999");
            i = word_end;
            copied = i;
            continue;
        }
        i += 1;
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

fn topic_member(id: &str, mt: &'static str) -> Result<u64, Violation> {
    match id.parse::<u64>() {
        Ok(0) => Err(Violation::ZeroId {
            message_type: mt,
            member: "topics",
        }),
        Ok(n) => Ok(n),
        Err(_) => Err(Violation::BadMember {
            message_type: mt,
            member: "topics",
        }),
    }
}

#[derive(Clone, Copy)]
struct Reader<'a> {
    mt: &'static str,
    m: &'a Map<String, Value>,
}

impl<'a> Reader<'a> {
    fn named(self, mt: &'static str) -> Self {
        Reader { mt, m: self.m }
    }
    fn bad(&self, member: &'static str) -> Violation {
        Violation::BadMember {
            message_type: self.mt,
            member,
        }
    }
    fn opt_u64(&self, k: &'static str) -> Result<Option<u64>, Violation> {
        match self.m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| self.bad(k)),
        }
    }
    fn u64(&self, k: &'static str) -> Result<u64, Violation> {
        self.opt_u64(k)?.ok_or_else(|| self.bad(k))
    }
    fn id(&self, k: &'static str) -> Result<u64, Violation> {
        match self.u64(k)? {
            0 => Err(Violation::ZeroId {
                message_type: self.mt,
                member: k,
            }),
            n => Ok(n),
        }
    }
    fn opt_str(&self, k: &'static str) -> Result<Option<String>, Violation> {
        match self.m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.bad(k)),
        }
    }
    fn str(&self, k: &'static str) -> Result<String, Violation> {
        self.opt_str(k)?.ok_or_else(|| self.bad(k))
    }
    fn opt_bool(&self, k: &'static str) -> Result<Option<bool>, Violation> {
        match self.m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.bad(k)),
        }
    }
    fn opt_array(&self, k: &'static str) -> Result<Vec<Value>, Violation> {
        match self.m.get(k) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(_) => Err(self.bad(k)),
        }
    }
    fn strings(&self, k: &'static str, limits: &Limits) -> Result<Vec<String>, Violation> {
        let a = self.opt_array(k)?;
        if a.len() > limits.max_classes_per_key {
            return Err(self.bad(k));
        }
        a.into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                _ => Err(self.bad(k)),
            })
            .collect()
    }
    fn record_id(&self, k: &'static str) -> Result<RecordId, Violation> {
        let Some(Value::Object(m)) = self.m.get(k) else {
            return Err(self.bad(k));
        };
        let r = Reader { mt: self.mt, m };
        Ok(RecordId {
            key_id: r.id("key_id")?,
            topic_id: r.id("topic_id")?,
        })
    }
}
