//! A sans-IO GAR client engine: text messages and clock ticks in, text messages and events out.
//!
//! The driver opens the WebSocket with [`UPGRADE_SUBPROTOCOL`], hands every text message to
//! [`Client::handle_text`], every binary one to [`Client::handle_binary`], the close to
//! [`Client::handle_close`], and calls [`Client::handle_timeout`] at [`Client::poll_timeout`].
//! It sends what [`Client::poll_transmit`] yields, in order, each as one text message.

pub mod codec;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub use codec::{
    BatchKey, CompareResult, Diagnostic, Inbound, RecordId, ServerError, Status, Subscribe,
    Violation,
};
use serde_json::Value;

/// The WebSocket subprotocol the upgrade must request.
pub const UPGRADE_SUBPROTOCOL: &str = "gar-protocol";

/// The JSON protocol version this client speaks.
pub const JSON_VERSION: u64 = 650_712;

/// Size bounds on what a peer can make this client hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest text message accepted.
    pub max_message_bytes: usize,
    /// Most keys in one batch.
    pub max_batch_keys: usize,
    /// Most classes named for one key, in one message and in total.
    pub max_classes_per_key: usize,
    /// Most outbound messages waiting.
    pub max_transmit_count: usize,
    /// Most outbound bytes waiting.
    pub max_transmit_bytes: usize,
    /// Most events waiting. The events that end a session (its [`Event::Stopped`], and the
    /// non-recoverable [`Event::Error`] that caused it) are kept beyond this bound.
    pub max_event_count: usize,
    /// Most bytes of events waiting (each event's size plus the values and text it carries);
    /// the events that end a session are kept beyond it, as beyond the count.
    pub max_event_bytes: usize,
    /// Most server topic ids plus key ids mapped; one more ends the session with
    /// [`Violation::IdMapFull`].
    pub max_ids: usize,
    /// Most bytes of names in the server id maps (topic names, key names, class names); more
    /// ends the session with [`Violation::IdMapFull`].
    pub max_id_name_bytes: usize,
    /// Most cached records.
    pub max_records: usize,
    /// Most bytes of cached record values.
    pub max_record_bytes: usize,
    /// Messages the protocol's own replies (heartbeats, `SubscribeContinue`, the answer to a
    /// server `EchoRequest`, `Logoff`) may queue beyond [`Limits::max_transmit_count`]: the
    /// application's calls cannot use this reserve, so they cannot crowd the replies out.
    pub reserved_reply_count: usize,
    /// Bytes the protocol's own replies may queue beyond [`Limits::max_transmit_bytes`].
    pub reserved_reply_bytes: usize,
    /// Longest heartbeat timeout interval (ms) a server may advertise; a larger one is
    /// refused with [`Violation::HeartbeatInterval`], since it would switch liveness off.
    pub max_server_heartbeat_interval: u64,
    /// Most echoes and compare-exchanges waiting for their answer at once. A server that
    /// keeps the session alive but never answers would otherwise make this set grow with every
    /// call; past it the calls are refused with [`CallError::TooManyPending`].
    pub max_pending_replies: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 16 << 20,
            max_batch_keys: 100_000,
            max_classes_per_key: 256,
            max_transmit_count: 10_000,
            max_transmit_bytes: 64 << 20,
            max_event_count: 100_000,
            max_event_bytes: 256 << 20,
            max_ids: 1_000_000,
            max_id_name_bytes: 64 << 20,
            max_records: 1_000_000,
            max_record_bytes: 256 << 20,
            reserved_reply_count: 64,
            reserved_reply_bytes: 64 << 10,
            max_server_heartbeat_interval: 24 * 60 * 60 * 1000,
            max_pending_replies: 100_000,
        }
    }
}

/// What the client says about itself, and its options.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Own heartbeat timeout (ms); beats go out every half of it.
    pub heartbeat_timeout_interval: u64,
    /// User name.
    pub user: String,
    /// Application name.
    pub application: String,
    /// Process id.
    pub pid: u64,
    /// Working namespace.
    pub working_namespace: String,
    /// One update per record across subscriptions.
    pub unique_key_and_record_updates: bool,
    /// Ask the server to close on the first failed write.
    pub disconnect_on_write_failure: bool,
    /// Any received message refreshes liveness, not only a Heartbeat.
    pub any_message_is_alive: bool,
    /// The application handles `UpstreamLost` statuses; without this they stop the session.
    pub handles_upstream_lost: bool,
    /// Size bounds.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            heartbeat_timeout_interval: 4000,
            user: String::new(),
            application: String::new(),
            pid: 0,
            working_namespace: String::new(),
            unique_key_and_record_updates: false,
            disconnect_on_write_failure: false,
            any_message_is_alive: false,
            handles_upstream_lost: false,
            limits: Limits::default(),
        }
    }
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The application's own logoff.
    Stop,
    /// The server's `Logoff`.
    ServerLogoff,
    /// The connection closed or broke.
    Disconnect,
    /// No server heartbeat within the liveness interval.
    HeartbeatTimeout,
    /// A non-recoverable Error, or a protocol violation.
    Error,
    /// An `UpstreamLost` status while the application does not handle it.
    UpstreamLost,
    /// The connection could not be made.
    ConnectFailed,
    /// The upgrade was refused with 401: do not retry.
    Unauthorized,
}

impl StopReason {
    /// The exit code the reference client reports for this reason.
    #[must_use]
    pub fn exit_code(self) -> i32 {
        match self {
            StopReason::HeartbeatTimeout | StopReason::Error | StopReason::UpstreamLost => 1,
            _ => 0,
        }
    }
}

/// What the application learns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The server's introduction was accepted.
    Introduced {
        /// The server's user name.
        user: String,
    },
    /// The server's Error, whole (recoverable flag, failed writes and msg_ref included);
    /// [`ServerError::write_errors`] is its write-errors view.
    Error(ServerError),
    /// A subscription changed status.
    Status {
        /// The subscription.
        name: String,
        /// The new status.
        status: Status,
    },
    /// A subscription was refused (`Finished` without `ProcessingSnapshot`).
    Refused {
        /// The subscription.
        name: String,
    },
    /// A record value changed (None: deleted).
    Record {
        /// Server-id address.
        record_id: RecordId,
        /// The value, None when deleted.
        value: Option<Value>,
    },
    /// A diagnostic replaced a record's value (the value is gone; the record keeps its
    /// last stamp).
    Diagnostic {
        /// Server-id address.
        record_id: RecordId,
        /// Why the value is missing.
        diagnostic: Diagnostic,
    },
    /// An echo came back.
    Echo {
        /// The correlation id.
        msg_ref: u64,
    },
    /// A compare-exchange result.
    Compare(CompareResult),
    /// The following messages belong to this subscription group (unreliable when
    /// `unique_key_and_record_updates` is on). A tag the event bounds dropped is passed on
    /// ahead of the next event kept, so no kept event reads as an earlier group's.
    Group {
        /// The group.
        subscription_group: u64,
    },
    /// A key lost a class; `remaining` is what the key keeps (empty on a whole-key delete,
    /// the retained bases on a downgrade). Sent for every key, whatever the group. On a whole-key
    /// delete the key's cached records are dropped with no [`Event::Record`] of their own.
    ClassDeleted {
        /// Server key id.
        key_id: u64,
        /// The class removed.
        deleted_class: String,
        /// The classes left.
        remaining: Vec<String>,
    },
    /// A client-assigned key id was invalidated by the server.
    KeyInvalidated {
        /// The client's key id.
        key_id: u64,
    },
    /// The session ended; sent exactly once.
    Stopped {
        /// Why.
        reason: StopReason,
        /// The violation, when one caused it.
        violation: Option<Violation>,
    },
}

/// A mistake in an application call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The session is not running.
    #[error("the session is not running")]
    NotRunning,
    /// The outbound queue is full in count or bytes.
    #[error("the outbound queue is full")]
    QueueFull,
    /// [`Limits::max_pending_replies`] echoes and compare-exchanges already wait for their
    /// answer.
    #[error("too many echoes and compare-exchanges wait for their answer")]
    TooManyPending,
    /// The id was never introduced by this client, or was invalidated.
    #[error("unknown client id {0}")]
    UnknownId(u64),
    /// This client never introduced that key name (or not in that class).
    #[error("key {0} was not introduced by this client in that class")]
    UnknownKey(String),
    /// A subscription asked for a density this reader does not read: it reads `KeyMajor`
    /// (the default) only.
    #[error("density {0} is not read by this client (KeyMajor only)")]
    UnsupportedDensity(String),
    /// A subscription of that name is already active.
    #[error("subscription {0} already active")]
    DuplicateSubscription(String),
    /// The subscription must reach `Finished` before it may be unsubscribed.
    #[error("subscription {0} is a snapshot still running")]
    NotFinished(String),
    /// No subscription of that name.
    #[error("unknown subscription {0}")]
    UnknownSubscription(String),
}

/// Declares [`Counters`], [`Stats`] and the private `Traffic` from one list of fields, so each
/// count is named and documented once. In `Stats`, `traffic { .. }` stands for the counts of
/// sessions and messages (kept in `Traffic` while the client runs) and `..Counters` for every
/// field of [`Counters`], at that place.
macro_rules! counts {
    (
        $(#[$counters_attr:meta])*
        pub struct Counters {
            $( $(#[$drop_doc:meta])* pub $drop:ident: u64, )*
        }
        $(#[$stats_attr:meta])*
        pub struct Stats {
            traffic { $( $(#[$traffic_doc:meta])* $traffic:ident, )* }
            ..Counters,
            $( $(#[$held_doc:meta])* pub $held:ident: u64, )*
        }
    ) => {
        $(#[$counters_attr])*
        pub struct Counters {
            $( $(#[$drop_doc])* pub $drop: u64, )*
        }

        $(#[$stats_attr])*
        pub struct Stats {
            $( $(#[$traffic_doc])* pub $traffic: u64, )*
            $( $(#[$drop_doc])* pub $drop: u64, )*
            $( $(#[$held_doc])* pub $held: u64, )*
        }

        #[derive(Debug, Clone, Copy, Default)]
        struct Traffic {
            $( $traffic: u64, )*
        }

        impl Stats {
            /// Statistics of `traffic` and `drops`, with nothing held.
            fn of(traffic: Traffic, drops: Counters) -> Self {
                Self {
                    $( $traffic: traffic.$traffic, )*
                    $( $drop: drops.$drop, )*
                    ..Self::default()
                }
            }
        }
    };
}

counts! {
    /// Counts of what the bounds dropped and what was skipped.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Counters {
        /// Events dropped because the event queue was full.
        pub events_dropped: u64,
        /// Records not cached because the cache was full.
        pub records_dropped: u64,
        /// Id introductions (or a known key's new classes) the server id maps had no room for;
        /// each ends its session with [`Violation::IdMapFull`].
        pub ids_dropped: u64,
        /// Messages of unknown type skipped.
        pub unknown_messages: u64,
        /// Replies ignored because this session never asked for them (an `EchoResponse` or a
        /// compare-exchange result for a msg_ref it did not issue, or already saw answered).
        pub unsolicited_replies: u64,
        /// Protocol replies that found no room even in their reserve (the session stops on the
        /// first, with [`Violation::RepliesBlocked`]; a `Logoff` is only counted).
        pub replies_dropped: u64,
        /// Classes not added to a server key because it already held
        /// [`Limits::max_classes_per_key`].
        pub classes_dropped: u64,
        /// Subscription statuses ignored because they do not fit the subscription: out of the
        /// order `ProcessingSnapshot`, `NeedsContinue`, `Streaming` (streaming subscriptions only),
        /// or for a subscription this session does not have.
        pub out_of_phase: u64,
        /// Id-lifecycle messages ignored because they name an id this session does not hold (a
        /// `KeyIdRetired` for a server key id not mapped, a `ClientIntroducedKeyInvalidated` for a
        /// client key id not introduced or already invalidated): there is nothing to drop.
        pub unknown_ids_ignored: u64,
        /// Messages (text or binary) the server sent after the session had stopped (while
        /// the driver closes the connection): there is no session left to apply them to.
        pub late_messages: u64,
    }

    /// What a client has done since it was made (every session counted), and what its bounded
    /// queues hold now: the engine's statistics.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Stats {
        traffic {
            /// Sessions begun with [`Client::start`].
            sessions_started,
            /// Sessions ended, whatever the reason.
            sessions_stopped,
            /// Text messages handed to [`Client::handle_text`] while a session ran.
            messages_in,
            /// Bytes of those messages.
            bytes_in,
            /// Messages taken with [`Client::poll_transmit`].
            messages_out,
            /// Bytes of those messages.
            bytes_out,
            /// Heartbeats queued for the server.
            heartbeats_sent,
            /// Heartbeats received from the server.
            heartbeats_received,
            /// Sessions ended by a protocol violation of the peer.
            violations,
            /// Errors the server sent (recoverable or not).
            server_errors,
        }
        ..Counters,
        /// Messages waiting to be sent now.
        pub transmit_held: u64,
        /// Bytes of those messages.
        pub transmit_bytes_held: u64,
        /// Events waiting to be polled now.
        pub events_held: u64,
        /// Bytes of those events (as [`Limits::max_event_bytes`] counts them).
        pub event_bytes_held: u64,
        /// Bytes of names in the server id maps now.
        pub id_name_bytes_held: u64,
        /// Records cached now.
        pub records_held: u64,
        /// Bytes of the cached record values now.
        pub record_bytes_held: u64,
    }
}

/// A cached record.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// The value (None while a diagnostic stands in for it, or after a tick only).
    pub value: Option<Value>,
    /// The last stamp (ns), 0 when never sent.
    pub tick_time: u64,
    /// The diagnostic that replaced the value.
    pub diagnostic: Option<Diagnostic>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubState {
    Sent,
    Processing,
    Streaming,
}

#[derive(Debug, Clone)]
struct Sub {
    streaming: bool,
    state: SubState,
}

/// The state that one `start()` creates and the next one throws away.
#[derive(Debug, Default)]
struct Session {
    server_topics: BTreeMap<u64, String>,
    server_keys: BTreeMap<u64, (String, BTreeSet<String>)>,
    /// Bytes of the names in `server_topics` and `server_keys`.
    id_name_bytes: usize,
    client_topics: BTreeMap<String, u64>,
    client_topic_names: BTreeMap<u64, String>,
    client_keys: BTreeMap<String, (u64, BTreeSet<String>)>,
    client_key_names: BTreeMap<u64, String>,
    next_topic_id: u64,
    next_key_id: u64,
    next_msg_ref: u64,
    records: BTreeMap<RecordId, Record>,
    record_bytes: usize,
    subs: BTreeMap<String, Sub>,
    introduced: bool,
    server_interval: u64,
    next_beat: u64,
    alive_deadline: u64,
    started_at: u64,
    beat_seen: bool,
    echo_answered: u64,
    /// Echo requests sent and not answered yet (the application's own calls fill it).
    echoes_pending: BTreeSet<u64>,
    /// Compare-exchanges sent and not answered yet (the application's own calls fill it).
    compares_pending: BTreeSet<u64>,
    /// The last group tag, when the event bounds dropped it and no event was kept since.
    lost_group: Option<u64>,
}

/// The GAR client engine.
#[derive(Debug)]
pub struct Client {
    config: Config,
    s: Session,
    running: bool,
    stop: Option<StopReason>,
    server_logoff: bool,
    transmit: VecDeque<String>,
    transmit_bytes: usize,
    events: VecDeque<(Event, usize)>,
    event_bytes: usize,
    counters: Counters,
    traffic: Traffic,
}

fn value_bytes(v: &Value) -> usize {
    v.to_string().len()
}

fn diagnostic_bytes(d: &Diagnostic) -> usize {
    d.reason.len() + d.text.len() + d.missing_inputs.iter().map(value_bytes).sum::<usize>()
}

/// What a cached record counts against [`Limits::max_record_bytes`]: its value and diagnostic.
fn record_bytes(r: &Record) -> usize {
    r.value.as_ref().map_or(0, value_bytes) + r.diagnostic.as_ref().map_or(0, diagnostic_bytes)
}

/// What a key's entry in the id map counts against [`Limits::max_id_name_bytes`].
fn key_entry_bytes(name: &str, classes: &BTreeSet<String>) -> usize {
    name.len() + classes.iter().map(String::len).sum::<usize>()
}

/// What a waiting event counts against [`Limits::max_event_bytes`]: its own size plus the
/// values and text it carries.
fn event_bytes(e: &Event) -> usize {
    let carried = match e {
        Event::Introduced { user } => user.len(),
        Event::Error(x) => x.message.len() + x.failed_writes.iter().map(value_bytes).sum::<usize>(),
        Event::Status { name, .. } | Event::Refused { name } => name.len(),
        Event::Record { value, .. } => value.as_ref().map_or(0, value_bytes),
        Event::Diagnostic { diagnostic, .. } => diagnostic_bytes(diagnostic),
        Event::Compare(r) => {
            r.value.as_ref().map_or(0, value_bytes) + r.reason.as_ref().map_or(0, String::len)
        }
        Event::ClassDeleted {
            deleted_class,
            remaining,
            ..
        } => deleted_class.len() + remaining.iter().map(String::len).sum::<usize>(),
        Event::Echo { .. }
        | Event::Group { .. }
        | Event::KeyInvalidated { .. }
        | Event::Stopped { .. } => 0,
    };
    std::mem::size_of::<Event>() + carried
}

/// The message type of a message that belongs to the server's session, which may only come
/// after its `Introduction`; None for those that may come first (`Introduction`, `Heartbeat`,
/// an `Error` such as a version refusal, `Logoff`, and types this client does not know).
fn session_message(m: &Inbound) -> Option<&'static str> {
    Some(match m {
        Inbound::Introduction { .. }
        | Inbound::Heartbeat { .. }
        | Inbound::Error(_)
        | Inbound::Logoff
        | Inbound::Other { .. } => return None,
        Inbound::TopicIntroduction { .. } => "TopicIntroduction",
        Inbound::KeyUpdate { .. } => "KeyUpdate",
        Inbound::KeyIdRetired { .. } => "KeyIdRetired",
        Inbound::ClientIntroducedKeyInvalidated { .. } => "ClientIntroducedKeyInvalidated",
        Inbound::RecordUpdate { .. } => "JSONRecordUpdate",
        Inbound::DeleteRecord { .. } => "DeleteRecord",
        Inbound::RecordTick { .. } => "RecordTick",
        Inbound::RecordDiagnostic { .. } => "RecordDiagnostic",
        Inbound::BatchUpdate { .. } => "BatchUpdate",
        Inbound::SubscriptionStatus { .. } => "SubscriptionStatus",
        Inbound::ActiveSubscription { .. } => "ActiveSubscription",
        Inbound::EchoResponse { .. } => "EchoResponse",
        Inbound::EchoRequest { .. } => "EchoRequest",
        Inbound::CompareExchangeResult(_) => "JSONCompareExchangeResult",
    })
}

impl Client {
    /// A stopped client; [`Client::start`] begins a session.
    #[must_use]
    pub fn new(config: Config) -> Self {
        Client {
            config,
            s: Session::default(),
            running: false,
            stop: None,
            server_logoff: false,
            transmit: VecDeque::new(),
            transmit_bytes: 0,
            events: VecDeque::new(),
            event_bytes: 0,
            counters: Counters::default(),
            traffic: Traffic::default(),
        }
    }

    /// Begins a session on a fresh connection: all state of any earlier session is dropped, and
    /// the Introduction is queued as the first message. `uuid` is this connection's identity
    /// (fresh per start); `now` is milliseconds.
    ///
    /// A session still running is ended first with reason `stop`: its [`Event::Stopped`] is
    /// the one event of it kept, and comes before anything of the new session.
    pub fn start(&mut self, now: u64, uuid: (u64, u64)) {
        let old_stop = if self.running {
            self.stopped(StopReason::Stop, None);
            self.events.pop_back()
        } else {
            None
        };
        self.s = Session {
            next_topic_id: 1,
            next_key_id: 1,
            next_msg_ref: 1,
            ..Session::default()
        };
        self.transmit.clear();
        self.transmit_bytes = 0;
        self.events.clear();
        self.event_bytes = 0;
        if let Some((e, bytes)) = old_stop {
            self.event_bytes = bytes;
            self.events.push_back((e, bytes));
        }
        self.running = true;
        self.traffic.sessions_started += 1;
        self.stop = None;
        self.server_logoff = false;
        let iv = self.config.heartbeat_timeout_interval;
        self.s.started_at = now;
        // Timer arithmetic saturates: an absurd interval or clock never wraps nor panics.
        self.s.next_beat = now.saturating_add(iv / 2);
        self.s.alive_deadline = now.saturating_add(iv.saturating_mul(10));
        let c = &self.config;
        let text = codec::write::introduction(&codec::write::Introduction {
            version: JSON_VERSION,
            heartbeat_timeout_interval: iv,
            user: c.user.clone(),
            application: c.application.clone(),
            pid: c.pid,
            uuid_low: uuid.0,
            uuid_high: uuid.1,
            working_namespace: c.working_namespace.clone(),
            unique_key_and_record_updates: c.unique_key_and_record_updates,
            disconnect_on_write_failure: c.disconnect_on_write_failure,
        });
        self.transmit_bytes += text.len();
        self.transmit.push_back(text);
    }

    /// The next text message to send.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<String> {
        let t = self.transmit.pop_front()?;
        self.transmit_bytes -= t.len();
        self.traffic.messages_out += 1;
        self.traffic.bytes_out += t.len() as u64;
        Some(t)
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        let (e, bytes) = self.events.pop_front()?;
        self.event_bytes -= bytes;
        Some(e)
    }

    /// When [`Client::handle_timeout`] must next be called (ms), None when stopped.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        self.running
            .then(|| self.s.next_beat.min(self.s.alive_deadline))
    }

    /// Drop counters.
    #[must_use]
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The statistics: traffic and sessions since this client was made, what the bounds
    /// dropped, and what the bounded queues hold now.
    #[must_use]
    pub fn stats(&self) -> Stats {
        Stats {
            transmit_held: self.transmit.len() as u64,
            transmit_bytes_held: self.transmit_bytes as u64,
            events_held: self.events.len() as u64,
            event_bytes_held: self.event_bytes as u64,
            id_name_bytes_held: self.s.id_name_bytes as u64,
            records_held: self.s.records.len() as u64,
            record_bytes_held: self.s.record_bytes as u64,
            ..Stats::of(self.traffic, self.counters)
        }
    }

    /// Whether the echo `msg_ref` of this session has been answered: echoes are answered in
    /// order, so every echo up to the highest answered one is.
    #[must_use]
    pub fn echo_answered(&self, msg_ref: u64) -> bool {
        msg_ref != 0 && msg_ref <= self.s.echo_answered
    }

    /// Why the last session stopped, if it did.
    #[must_use]
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Whether the last session ended by the server's `Logoff`.
    #[must_use]
    pub fn server_logoff(&self) -> bool {
        self.server_logoff
    }

    /// Whether a session is running.
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The cached record at a server-id address.
    #[must_use]
    pub fn record(&self, record_id: RecordId) -> Option<&Record> {
        self.s.records.get(&record_id)
    }

    /// The name of a server topic id.
    #[must_use]
    pub fn server_topic(&self, topic_id: u64) -> Option<&str> {
        self.s.server_topics.get(&topic_id).map(String::as_str)
    }

    /// The name and classes of a server key id.
    #[must_use]
    pub fn server_key(&self, key_id: u64) -> Option<(&str, &BTreeSet<String>)> {
        self.s
            .server_keys
            .get(&key_id)
            .map(|(n, c)| (n.as_str(), c))
    }

    fn emit(&mut self, e: Event) {
        let bytes = event_bytes(&e);
        // A group tag the bounds dropped goes ahead of the next event kept, so that event is
        // not read as the earlier group's (G-44); both fit or neither is kept.
        let tag = match e {
            Event::Group { .. } => None,
            _ => self.s.lost_group.map(|g| {
                let t = Event::Group {
                    subscription_group: g,
                };
                let b = event_bytes(&t);
                (t, b)
            }),
        };
        let (count, total) = match &tag {
            Some((_, b)) => (2, bytes + b),
            None => (1, bytes),
        };
        let l = &self.config.limits;
        if self.events.len() + count > l.max_event_count
            || self.event_bytes + total > l.max_event_bytes
        {
            if self.counters.events_dropped == 0 {
                tracing::warn!(
                    held = self.events.len(),
                    "gar event queue full: events dropped (counted)"
                );
            }
            self.counters.events_dropped += 1;
            if let Event::Group { subscription_group } = e {
                self.s.lost_group = Some(subscription_group);
            }
            return;
        }
        self.s.lost_group = None;
        for (e, bytes) in tag.into_iter().chain([(e, bytes)]) {
            self.event_bytes += bytes;
            self.events.push_back((e, bytes));
        }
    }

    fn stopped(&mut self, reason: StopReason, violation: Option<Violation>) {
        if !self.running {
            return;
        }
        self.running = false;
        self.stop = Some(reason);
        self.traffic.sessions_stopped += 1;
        if violation.is_some() {
            self.traffic.violations += 1;
        }
        match &violation {
            Some(v) => {
                tracing::warn!(?reason, violation = %v, "gar session stopped by a protocol violation")
            }
            None => tracing::info!(?reason, "gar session stopped"),
        }
        // The stop event is never dropped: it is the one event every session ends with.
        self.emit_final(Event::Stopped { reason, violation });
    }

    /// Queues one of the events that end a session (the stop, and the non-recoverable Error
    /// just before it) beyond the event bounds: at most two per session, never dropped.
    fn emit_final(&mut self, e: Event) {
        let bytes = event_bytes(&e);
        self.event_bytes += bytes;
        self.events.push_back((e, bytes));
    }

    /// Queues one of the protocol's own replies, which may use the reserve beyond the
    /// application's share of the queue. Returns false (counted) when even the reserve is full.
    fn queue_reply(&mut self, text: String) -> bool {
        if !self.running {
            return false;
        }
        let l = &self.config.limits;
        if self.transmit.len() >= l.max_transmit_count.saturating_add(l.reserved_reply_count)
            || self.transmit_bytes + text.len()
                > l.max_transmit_bytes.saturating_add(l.reserved_reply_bytes)
        {
            self.counters.replies_dropped += 1;
            return false;
        }
        self.transmit_bytes += text.len();
        self.transmit.push_back(text);
        true
    }

    /// Queues a reply the protocol requires; when it cannot be queued the session cannot keep
    /// to the protocol any more, so it stops with [`Violation::RepliesBlocked`] (counted).
    fn reply(&mut self, text: String) {
        if !self.queue_reply(text) && self.running {
            tracing::warn!("gar outbound queue full even for protocol replies: session stopped");
            self.stopped(StopReason::Error, Some(Violation::RepliesBlocked));
        }
    }

    fn send(&mut self, text: String) -> Result<(), CallError> {
        if !self.running {
            return Err(CallError::NotRunning);
        }
        let l = &self.config.limits;
        if self.transmit.len() >= l.max_transmit_count
            || self.transmit_bytes + text.len() > l.max_transmit_bytes
        {
            return Err(CallError::QueueFull);
        }
        self.transmit_bytes += text.len();
        self.transmit.push_back(text);
        Ok(())
    }

    /// Clock tick without a wall clock: as [`Client::handle_timeout_at`] with `now` standing in
    /// for the wall clock (for simulations; a driver on a real clock uses
    /// [`Client::handle_timeout_at`], since the server reads `u_milliseconds` as epoch time).
    pub fn handle_timeout(&mut self, now: u64) {
        self.handle_timeout_at(now, now);
    }

    /// Clock tick: sends due heartbeats, and stops on a missed server heartbeat. `now` is the
    /// monotonic clock every timer runs on; `epoch_ms` is the wall clock (milliseconds since
    /// 1970, UTC) that a heartbeat carries as its `u_milliseconds` (G-12).
    pub fn handle_timeout_at(&mut self, now: u64, epoch_ms: u64) {
        if !self.running {
            return;
        }
        if now >= self.s.alive_deadline {
            self.stopped(StopReason::HeartbeatTimeout, None);
            return;
        }
        if now >= self.s.next_beat {
            let period = (self.config.heartbeat_timeout_interval / 2).max(1);
            // A heartbeat uses the reply reserve; when even that is full the session stops
            // (counted) rather than skip a beat unseen.
            self.reply(codec::write::heartbeat(epoch_ms));
            if !self.running {
                return;
            }
            self.traffic.heartbeats_sent += 1;
            self.s.next_beat = self.s.next_beat.saturating_add(period);
            if self.s.next_beat <= now {
                self.s.next_beat = now.saturating_add(period);
            }
        }
    }

    /// A binary message: refused, the binary layouts are not guessed. After the session
    /// stopped it is only counted in `late_messages`.
    pub fn handle_binary(&mut self, _now: u64, _bytes: &[u8]) {
        if !self.running {
            self.late();
            return;
        }
        self.stopped(StopReason::Error, Some(Violation::Binary));
    }

    /// A message that came after the session stopped: not applied, counted.
    fn late(&mut self) {
        self.counters.late_messages += 1;
        tracing::debug!("gar message after the session stopped: not applied (counted)");
    }

    /// The driver could not connect; `unauthorized` when the upgrade got 401.
    pub fn handle_connect_failed(&mut self, unauthorized: bool) {
        let reason = if unauthorized {
            StopReason::Unauthorized
        } else {
            StopReason::ConnectFailed
        };
        self.stopped(reason, None);
    }

    /// The connection closed (`code` None when the close frame had none, or there was no close
    /// frame). 1000, 1001 and no code (1005 included) are an orderly close: `disconnect`. Any
    /// other code is an error close: `error`, with [`Violation::CloseCode`].
    pub fn handle_close(&mut self, code: Option<u16>) {
        match code {
            None | Some(1000 | 1001 | 1005) => self.stopped(StopReason::Disconnect, None),
            Some(c) => self.stopped(StopReason::Error, Some(Violation::CloseCode(c))),
        }
    }

    /// The server broke the WebSocket framing (the driver's transport says how, in `detail`):
    /// `error`, with [`Violation::Framing`].
    pub fn handle_framing_error(&mut self, detail: String) {
        self.stopped(StopReason::Error, Some(Violation::Framing(detail)));
    }

    /// The driver's own connection task or thread died (a bug of the driver, not of the peer):
    /// the session ends with `error` and no violation, so no caller waits for it forever.
    pub fn handle_driver_failure(&mut self) {
        self.stopped(StopReason::Error, None);
    }

    /// The transport refused a message above its size limit without reading it whole: `error`,
    /// with [`Violation::Oversized`].
    pub fn handle_oversized(&mut self) {
        self.stopped(StopReason::Error, Some(Violation::Oversized));
    }

    /// The server sent a close frame with a 1-byte body, which no close code fits: `error`, with
    /// [`Violation::MalformedClose`].
    pub fn handle_malformed_close(&mut self) {
        self.stopped(StopReason::Error, Some(Violation::MalformedClose));
    }

    fn liveness(&self) -> u64 {
        self.config
            .heartbeat_timeout_interval
            .max(self.s.server_interval)
    }

    /// One text message from the server. After the session stopped it is not applied, only
    /// counted in `late_messages`.
    pub fn handle_text(&mut self, now: u64, text: &str) {
        if !self.running {
            self.late();
            return;
        }
        self.traffic.messages_in += 1;
        self.traffic.bytes_in += text.len() as u64;
        let msg = match codec::decode(text, &self.config.limits) {
            Ok(m) => m,
            Err(v) => return self.stopped(StopReason::Error, Some(v)),
        };
        if self.config.any_message_is_alive && self.s.introduced {
            let refreshed = now.saturating_add(self.liveness());
            // Before the first heartbeat the ten-interval grace stands: a message may only
            // push the deadline later, never pull it in.
            self.s.alive_deadline = if self.s.beat_seen {
                refreshed
            } else {
                self.s.alive_deadline.max(refreshed)
            };
        }
        if let Err(v) = self.apply(now, msg) {
            self.stopped(StopReason::Error, Some(v));
        }
    }

    fn apply(&mut self, now: u64, msg: Inbound) -> Result<(), Violation> {
        if !self.s.introduced {
            if let Some(mt) = session_message(&msg) {
                return Err(Violation::BeforeIntroduction(mt));
            }
        }
        match msg {
            Inbound::Introduction {
                version,
                heartbeat_timeout_interval,
                user,
            } => {
                if version != JSON_VERSION {
                    let e = ServerError {
                        message: format!("Unsupported version from {user}: {version}"),
                        recoverable: false,
                        failed_writes: Vec::new(),
                        msg_ref: 0,
                    };
                    self.emit_final(Event::Error(e));
                    self.stopped(StopReason::Error, None);
                    return Ok(());
                }
                if heartbeat_timeout_interval > self.config.limits.max_server_heartbeat_interval {
                    return Err(Violation::HeartbeatInterval(heartbeat_timeout_interval));
                }
                // A new introduction starts the server's id space over.
                self.s.server_topics.clear();
                self.s.server_keys.clear();
                self.s.id_name_bytes = 0;
                self.s.records.clear();
                self.s.record_bytes = 0;
                self.s.server_interval = heartbeat_timeout_interval;
                self.s.introduced = true;
                if !self.s.beat_seen {
                    // The first-beat grace is ten liveness intervals from the start.
                    self.s.alive_deadline = self
                        .s
                        .started_at
                        .saturating_add(self.liveness().saturating_mul(10));
                }
                self.emit(Event::Introduced { user });
            }
            Inbound::Heartbeat { .. } => {
                self.traffic.heartbeats_received += 1;
                self.s.beat_seen = true;
                self.s.alive_deadline = now.saturating_add(self.liveness());
            }
            Inbound::Error(e) => {
                self.traffic.server_errors += 1;
                if e.recoverable {
                    self.emit(Event::Error(e));
                } else {
                    // The Error that ends the session says why it ended: like the stop, it is
                    // kept beyond the event bounds (one per session), so a full queue cannot
                    // turn it into a stop without its cause (G-17).
                    self.emit_final(Event::Error(e));
                    self.stopped(StopReason::Error, None);
                }
            }
            Inbound::Logoff => {
                self.server_logoff = true;
                self.stopped(StopReason::ServerLogoff, None);
            }
            Inbound::TopicIntroduction { topic_id, name } => {
                // One id never names two topics: a known id under another name means the id
                // maps are out of step (G-25). The same name again changes nothing.
                if let Some(known) = self.s.server_topics.get(&topic_id) {
                    if *known != name {
                        return Err(Violation::TopicNameMismatch {
                            id: topic_id,
                            known: known.clone(),
                            got: name,
                        });
                    }
                    return Ok(());
                }
                let bytes = self.s.id_name_bytes + name.len();
                self.room_for_id("topic", topic_id, true, bytes)?;
                self.s.id_name_bytes = bytes;
                self.s.server_topics.insert(topic_id, name);
            }
            Inbound::KeyUpdate {
                key_id,
                name,
                class_list,
                deleted_class,
            } => self.key_update(key_id, name, class_list, deleted_class)?,
            Inbound::KeyIdRetired { key_id } => {
                // The mapping goes, and with it what was cached under the id: no event (this is
                // bookkeeping, not a data teardown), but a later key under a reused id must not
                // show the old key's records.
                if let Some((n, classes)) = self.s.server_keys.remove(&key_id) {
                    self.s.id_name_bytes -= key_entry_bytes(&n, &classes);
                } else {
                    // Nothing mapped under it: nothing to drop. Counted, not passed on.
                    self.counters.unknown_ids_ignored += 1;
                    tracing::debug!(key_id, "gar KeyIdRetired for a key id not mapped: ignored");
                }
                self.drop_key_records(key_id);
            }
            Inbound::ClientIntroducedKeyInvalidated {
                client_introduced_key_id: id,
            } => {
                if let Some(name) = self.s.client_key_names.remove(&id) {
                    self.s.client_keys.remove(&name);
                    self.emit(Event::KeyInvalidated { key_id: id });
                } else {
                    // An id this client never gave, or one already invalidated: no key of this
                    // session is affected, so no event names it. Counted.
                    self.counters.unknown_ids_ignored += 1;
                    tracing::debug!(
                        key_id = id,
                        "gar invalidation of a client key id not held: ignored"
                    );
                }
            }
            Inbound::RecordUpdate {
                record_id,
                value,
                tick_time,
            } => {
                self.check_ids(record_id)?;
                self.set_record(record_id, value, tick_time);
            }
            Inbound::DeleteRecord { record_id, .. } => {
                self.check_ids(record_id)?;
                self.remove_record(record_id);
                self.emit(Event::Record {
                    record_id,
                    value: None,
                });
            }
            Inbound::RecordTick {
                record_id,
                tick_time,
            } => {
                self.check_ids(record_id)?;
                if let Some(r) = self.s.records.get_mut(&record_id) {
                    r.tick_time = tick_time;
                }
            }
            Inbound::RecordDiagnostic {
                record_id,
                diagnostic,
            } => {
                self.check_ids(record_id)?;
                let tick_time = self.s.records.get(&record_id).map_or(0, |r| r.tick_time);
                self.remove_record(record_id);
                let bytes = diagnostic_bytes(&diagnostic);
                if self.room_for(bytes) {
                    self.s.record_bytes += bytes;
                    self.s.records.insert(
                        record_id,
                        Record {
                            value: None,
                            tick_time,
                            diagnostic: Some(diagnostic.clone()),
                        },
                    );
                } else {
                    self.counters.records_dropped += 1;
                    tracing::debug!("gar record cache full: a record was not cached (counted)");
                }
                self.emit(Event::Diagnostic {
                    record_id,
                    diagnostic,
                });
            }
            Inbound::BatchUpdate {
                default_class,
                keys,
            } => {
                for k in keys {
                    if let Some(name) = k.name.clone() {
                        let classes = if k.classes.is_empty() {
                            default_class.iter().cloned().collect()
                        } else {
                            k.classes.clone()
                        };
                        self.key_update(k.key_id, Some(name), classes, None)?;
                    } else if !k.classes.is_empty() {
                        // A known key may come without its name; classes it names are added
                        // (an unknown one without its name is refused by key_update).
                        self.key_update(k.key_id, None, k.classes.clone(), None)?;
                    } else if !self.s.server_keys.contains_key(&k.key_id) {
                        // A nameless entry is only for a key already introduced, whether it
                        // carries records or not (G-18).
                        return Err(Violation::UnknownId {
                            kind: "key",
                            id: k.key_id,
                        });
                    }
                    // One lookup table per key, so matching stamps to topics is not a scan
                    // of the stamps per topic (the first stamp of a topic wins, as before).
                    let mut ticks: BTreeMap<u64, u64> = BTreeMap::new();
                    for (t, stamp) in &k.tick_times {
                        ticks.entry(*t).or_insert(*stamp);
                    }
                    for (topic_id, value) in k.topics {
                        let record_id = RecordId {
                            key_id: k.key_id,
                            topic_id,
                        };
                        self.check_ids(record_id)?;
                        let tick = ticks.get(&topic_id).copied();
                        self.set_record(record_id, value, tick);
                    }
                }
            }
            Inbound::SubscriptionStatus { name, status } => self.status(name, status),
            Inbound::ActiveSubscription { subscription_group } => {
                self.emit(Event::Group { subscription_group });
            }
            Inbound::EchoResponse { msg_ref } => {
                if self.s.echoes_pending.contains(&msg_ref) {
                    // Echoes are answered in order: this one answers every earlier one too.
                    self.s.echoes_pending = self.s.echoes_pending.split_off(&(msg_ref + 1));
                    self.s.echo_answered = self.s.echo_answered.max(msg_ref);
                    self.emit(Event::Echo { msg_ref });
                } else {
                    // Not a reply to anything this session asked: it must not mark later echoes
                    // answered. Ignored and counted.
                    self.counters.unsolicited_replies += 1;
                    tracing::debug!(msg_ref, "gar echo response for no pending echo: ignored");
                }
            }
            Inbound::EchoRequest { msg_ref } => {
                self.reply(codec::write::echo_response(msg_ref));
            }
            Inbound::CompareExchangeResult(r) => {
                if self.s.compares_pending.remove(&r.msg_ref) {
                    self.emit(Event::Compare(r));
                } else {
                    // A result for no compare of this session (or one already answered): it is
                    // not applied nor passed on; ignored and counted.
                    self.counters.unsolicited_replies += 1;
                    tracing::debug!(
                        msg_ref = r.msg_ref,
                        "gar compare result for no pending compare: ignored"
                    );
                }
            }
            Inbound::Other { .. } => self.counters.unknown_messages += 1,
        }
        Ok(())
    }

    fn check_ids(&self, r: RecordId) -> Result<(), Violation> {
        if !self.s.server_keys.contains_key(&r.key_id) {
            return Err(Violation::UnknownId {
                kind: "key",
                id: r.key_id,
            });
        }
        if !self.s.server_topics.contains_key(&r.topic_id) {
            return Err(Violation::UnknownId {
                kind: "topic",
                id: r.topic_id,
            });
        }
        Ok(())
    }

    fn key_update(
        &mut self,
        key_id: u64,
        name: Option<String>,
        class_list: Vec<String>,
        deleted_class: Option<String>,
    ) -> Result<(), Violation> {
        // A known id under another name: the id maps are out of step (G-25).
        if let (Some((known, _)), Some(n)) = (self.s.server_keys.get(&key_id), name.as_ref()) {
            if known != n {
                return Err(Violation::NameMismatch {
                    id: key_id,
                    known: known.clone(),
                    got: n.clone(),
                });
            }
        }
        // An id not mapped may only come with its name, as an introduction: a teardown or a
        // nameless class update for it names a key this session does not know (G-18, G-25).
        if !self.s.server_keys.contains_key(&key_id) && (deleted_class.is_some() || name.is_none())
        {
            return Err(Violation::UnknownId {
                kind: "key",
                id: key_id,
            });
        }
        if let Some(deleted_class) = deleted_class {
            // Per-class teardown: the remaining list is the key's class set; a downgrade keeps
            // the listed bases and their records.
            // The remaining list is held as the key's classes, so its names count against
            // the id-map byte bound as an additive update's do (checked before it is kept).
            if let Some((n, classes)) = self.s.server_keys.get(&key_id) {
                let remaining: BTreeSet<String> = class_list.iter().cloned().collect();
                let bytes = self.s.id_name_bytes - key_entry_bytes(n, classes)
                    + key_entry_bytes(n, &remaining);
                self.room_for_id("key", key_id, false, bytes)?;
                self.s.id_name_bytes = bytes;
                if let Some((_, classes)) = self.s.server_keys.get_mut(&key_id) {
                    *classes = remaining;
                }
            }
            if class_list.is_empty() {
                // The key's last class went: a whole-key delete, its records go with it.
                self.drop_key_records(key_id);
            }
            self.emit(Event::ClassDeleted {
                key_id,
                deleted_class,
                remaining: class_list,
            });
            return Ok(());
        }
        let existing = self.s.server_keys.get(&key_id);
        let new_id = existing.is_none();
        self.room_for_id("key", key_id, new_id, 0)?;
        let existing = self.s.server_keys.get(&key_id);
        let (old_name, mut classes) = existing.cloned().unwrap_or_default();
        let before = existing.map_or(0, |(n, c)| key_entry_bytes(n, c));
        let name = name.unwrap_or(old_name);
        for class in class_list {
            if classes.contains(&class) {
                continue;
            }
            if classes.len() >= self.config.limits.max_classes_per_key {
                self.counters.classes_dropped += 1;
                tracing::debug!("gar key holds the most classes: a class was dropped (counted)");
                continue;
            }
            classes.insert(class);
        }
        let bytes = self.s.id_name_bytes - before + key_entry_bytes(&name, &classes);
        self.room_for_id("key", key_id, false, bytes)?;
        self.s.id_name_bytes = bytes;
        self.s.server_keys.insert(key_id, (name, classes));
        Ok(())
    }

    /// Whether the server id maps can take an id (`new_id`: one more entry) and hold `bytes`
    /// of names in all. An id the maps cannot take is not dropped: a later message naming it
    /// could not be read, so the overflow itself is the violation (counted in `ids_dropped`).
    fn room_for_id(
        &mut self,
        kind: &'static str,
        id: u64,
        new_id: bool,
        bytes: usize,
    ) -> Result<(), Violation> {
        let l = &self.config.limits;
        let full = if new_id && self.s.server_topics.len() + self.s.server_keys.len() >= l.max_ids {
            Some(("max_ids", l.max_ids))
        } else if bytes > l.max_id_name_bytes {
            Some(("max_id_name_bytes", l.max_id_name_bytes))
        } else {
            None
        };
        let Some((bound, limit)) = full else {
            return Ok(());
        };
        self.counters.ids_dropped += 1;
        Err(Violation::IdMapFull {
            kind,
            id,
            bound,
            limit,
        })
    }

    fn room_for(&self, bytes: usize) -> bool {
        let l = &self.config.limits;
        self.s.records.len() < l.max_records && self.s.record_bytes + bytes <= l.max_record_bytes
    }

    fn remove_record(&mut self, id: RecordId) {
        if let Some(r) = self.s.records.remove(&id) {
            self.s.record_bytes -= record_bytes(&r);
        }
    }

    /// Drops every cached record of one server key id (and the bytes they held).
    fn drop_key_records(&mut self, key_id: u64) {
        let ids: Vec<RecordId> = self
            .s
            .records
            .range(
                RecordId {
                    key_id,
                    topic_id: 0,
                }..=RecordId {
                    key_id,
                    topic_id: u64::MAX,
                },
            )
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.remove_record(id);
        }
    }

    fn set_record(&mut self, record_id: RecordId, value: Value, tick: Option<u64>) {
        let old_tick = self.s.records.get(&record_id).map_or(0, |r| r.tick_time);
        self.remove_record(record_id);
        if value.is_null() {
            // A null value deletes the record.
            self.emit(Event::Record {
                record_id,
                value: None,
            });
            return;
        }
        let bytes = value_bytes(&value);
        if self.room_for(bytes) {
            self.s.record_bytes += bytes;
            self.s.records.insert(
                record_id,
                Record {
                    value: Some(value.clone()),
                    tick_time: tick.unwrap_or(old_tick),
                    diagnostic: None,
                },
            );
        } else {
            self.counters.records_dropped += 1;
            tracing::debug!("gar record cache full: a record was not cached (counted)");
        }
        self.emit(Event::Record {
            record_id,
            value: Some(value),
        });
    }

    fn status(&mut self, name: String, status: Status) {
        if status == Status::UpstreamLost && !self.config.handles_upstream_lost {
            self.emit(Event::Status { name, status });
            self.stopped(StopReason::UpstreamLost, None);
            return;
        }
        let Some(sub) = self.s.subs.get_mut(&name) else {
            // A status for no subscription of this session (never made, or already Finished):
            // nothing to apply it to. Counted, not passed on.
            self.counters.out_of_phase += 1;
            tracing::debug!(
                name,
                ?status,
                "gar status for an unknown subscription: ignored"
            );
            return;
        };
        // The status order is ProcessingSnapshot, data, NeedsContinue (answered) while the
        // snapshot runs, then Streaming (a streaming subscription) or Finished (G-40). A status
        // out of that order is not applied (no state change, no reply) nor passed on: counted.
        let in_phase = match status {
            Status::ProcessingSnapshot => sub.state == SubState::Sent,
            Status::NeedsContinue => sub.state == SubState::Processing,
            Status::Streaming => sub.streaming && sub.state == SubState::Processing,
            Status::Finished | Status::UpstreamLost => true,
        };
        if !in_phase {
            self.counters.out_of_phase += 1;
            tracing::debug!(
                name,
                ?status,
                state = ?sub.state,
                streaming = sub.streaming,
                "gar subscription status out of phase: ignored"
            );
            return;
        }
        match status {
            Status::ProcessingSnapshot => sub.state = SubState::Processing,
            Status::NeedsContinue => {
                self.reply(codec::write::subscribe_continue(&name));
                if !self.running {
                    return;
                }
            }
            Status::Streaming => sub.state = SubState::Streaming,
            Status::UpstreamLost => {}
            Status::Finished => {
                let refused = sub.state == SubState::Sent;
                self.s.subs.remove(&name);
                if refused {
                    self.emit(Event::Refused { name });
                    return;
                }
            }
        }
        self.emit(Event::Status { name, status });
    }

    /// Introduces a topic name under a new client id (or returns the id it already has).
    ///
    /// # Errors
    /// [`CallError`] when not running or the queue is full.
    pub fn introduce_topic(&mut self, name: &str) -> Result<u64, CallError> {
        if let Some(id) = self.s.client_topics.get(name) {
            return Ok(*id);
        }
        let id = self.s.next_topic_id;
        self.send(codec::write::topic_introduction(id, name))?;
        self.s.next_topic_id += 1;
        self.s.client_topics.insert(name.to_string(), id);
        self.s.client_topic_names.insert(id, name.to_string());
        Ok(id)
    }

    /// Introduces a key in a class under a client id; a known key in a new class sends an
    /// additive `KeyUpdate` under the same id.
    ///
    /// # Errors
    /// [`CallError`] when not running or the queue is full.
    pub fn introduce_key(&mut self, name: &str, class: &str) -> Result<u64, CallError> {
        if let Some((id, classes)) = self.s.client_keys.get(name) {
            if classes.contains(class) {
                return Ok(*id);
            }
            let id = *id;
            self.send(codec::write::key_update(id, name, &[class.to_string()]))?;
            if let Some((_, classes)) = self.s.client_keys.get_mut(name) {
                classes.insert(class.to_string());
            }
            return Ok(id);
        }
        let id = self.s.next_key_id;
        self.send(codec::write::key_update(id, name, &[class.to_string()]))?;
        self.s.next_key_id += 1;
        self.s
            .client_keys
            .insert(name.to_string(), (id, BTreeSet::from([class.to_string()])));
        self.s.client_key_names.insert(id, name.to_string());
        Ok(id)
    }

    /// Tears one class down from a key this client introduced (`KeyUpdate` naming the key and
    /// its `deleted_class`). The key keeps its id; its remaining
    /// classes (a downgrade) keep their records (G-36, G-37).
    ///
    /// # Errors
    /// [`CallError::UnknownKey`] when this client never introduced `key` in `class`;
    /// [`CallError::NotRunning`] or [`CallError::QueueFull`] as for every call.
    pub fn delete_class(&mut self, key: &str, class: &str) -> Result<(), CallError> {
        let Some((id, classes)) = self.s.client_keys.get(key) else {
            return Err(CallError::UnknownKey(key.to_string()));
        };
        if !classes.contains(class) {
            return Err(CallError::UnknownKey(key.to_string()));
        }
        let id = *id;
        self.send(codec::write::delete_class(id, key, class))?;
        if let Some((_, classes)) = self.s.client_keys.get_mut(key) {
            classes.remove(class);
        }
        Ok(())
    }

    /// Asks the server to delete a whole key this client introduced (`DeleteKeyCommand`,
    /// G-38). The id stays introduced until the server retires it.
    ///
    /// # Errors
    /// [`CallError::UnknownKey`] when this client never introduced `key`;
    /// [`CallError::NotRunning`] or [`CallError::QueueFull`] as for every call.
    pub fn delete_key(&mut self, key: &str) -> Result<(), CallError> {
        let Some((id, _)) = self.s.client_keys.get(key) else {
            return Err(CallError::UnknownKey(key.to_string()));
        };
        let id = *id;
        self.send(codec::write::delete_key_command(id))
    }

    fn check_client_ids(&self, r: RecordId) -> Result<(), CallError> {
        if !self.s.client_key_names.contains_key(&r.key_id) {
            return Err(CallError::UnknownId(r.key_id));
        }
        if !self.s.client_topic_names.contains_key(&r.topic_id) {
            return Err(CallError::UnknownId(r.topic_id));
        }
        Ok(())
    }

    /// Writes a record under client ids (a null value deletes it). `tick_time` 0 lets the
    /// server stamp it.
    ///
    /// # Errors
    /// [`CallError::UnknownId`] for an id this client has not introduced.
    pub fn publish(
        &mut self,
        record_id: RecordId,
        value: &Value,
        tick_time: u64,
    ) -> Result<(), CallError> {
        self.check_client_ids(record_id)?;
        self.send(codec::write::record_update(record_id, value, tick_time))
    }

    /// Deletes a record under client ids.
    ///
    /// # Errors
    /// [`CallError::UnknownId`] for an id this client has not introduced.
    pub fn delete_record(&mut self, record_id: RecordId, tick_time: u64) -> Result<(), CallError> {
        self.check_client_ids(record_id)?;
        self.send(codec::write::delete_record(record_id, tick_time))
    }

    /// Subscribes.
    ///
    /// # Errors
    /// [`CallError::DuplicateSubscription`] when the name is active.
    pub fn subscribe(&mut self, s: &Subscribe) -> Result<(), CallError> {
        if self.s.subs.contains_key(&s.name) {
            return Err(CallError::DuplicateSubscription(s.name.clone()));
        }
        // This reader reads key-major batches only, so it asks for no other shape (G-35).
        if let Some(d) = s.density.as_deref().filter(|d| *d != "KeyMajor") {
            return Err(CallError::UnsupportedDensity(d.to_string()));
        }
        self.send(codec::write::subscribe(s))?;
        self.s.subs.insert(
            s.name.clone(),
            Sub {
                streaming: s.streaming,
                state: SubState::Sent,
            },
        );
        Ok(())
    }

    /// Unsubscribes; a snapshot subscription must reach `Finished` first.
    ///
    /// # Errors
    /// [`CallError::NotFinished`] for a running snapshot subscription.
    pub fn unsubscribe(&mut self, name: &str) -> Result<(), CallError> {
        let Some(sub) = self.s.subs.get(name) else {
            return Err(CallError::UnknownSubscription(name.to_string()));
        };
        if !sub.streaming {
            return Err(CallError::NotFinished(name.to_string()));
        }
        self.send(codec::write::unsubscribe(name))
    }

    /// Changes a subscription's nagle interval.
    ///
    /// # Errors
    /// [`CallError::UnknownSubscription`] when no subscription of that name is active;
    /// [`CallError::NotRunning`] or [`CallError::QueueFull`] as for every call.
    pub fn set_nagle_interval(&mut self, name: &str, nagle_interval: u64) -> Result<(), CallError> {
        if !self.running {
            return Err(CallError::NotRunning);
        }
        if !self.s.subs.contains_key(name) {
            return Err(CallError::UnknownSubscription(name.to_string()));
        }
        self.send(codec::write::set_nagle_interval(name, nagle_interval))
    }

    /// Whether one more echo or compare-exchange may wait for its answer.
    fn room_for_pending(&self) -> Result<(), CallError> {
        if !self.running {
            return Err(CallError::NotRunning);
        }
        let waiting = self.s.echoes_pending.len() + self.s.compares_pending.len();
        if waiting >= self.config.limits.max_pending_replies {
            return Err(CallError::TooManyPending);
        }
        Ok(())
    }

    fn next_ref(&mut self) -> u64 {
        let r = self.s.next_msg_ref;
        self.s.next_msg_ref += 1;
        r
    }

    /// Sends an echo barrier; returns its msg_ref.
    ///
    /// # Errors
    /// [`CallError`] when not running or the queue is full;
    /// [`CallError::TooManyPending`] when [`Limits::max_pending_replies`] answers are awaited.
    pub fn echo(&mut self) -> Result<u64, CallError> {
        self.room_for_pending()?;
        let r = self.s.next_msg_ref;
        self.send(codec::write::echo_request(r))?;
        self.next_ref();
        self.s.echoes_pending.insert(r);
        Ok(r)
    }

    /// Sends a compare-exchange under client ids; returns its msg_ref.
    ///
    /// # Errors
    /// [`CallError::UnknownId`] for an id this client has not introduced;
    /// [`CallError::TooManyPending`] when [`Limits::max_pending_replies`] answers are awaited.
    pub fn compare_exchange(
        &mut self,
        record_id: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, CallError> {
        self.check_client_ids(record_id)?;
        self.room_for_pending()?;
        let r = self.s.next_msg_ref;
        self.send(codec::write::compare_exchange(record_id, r, test, value))?;
        self.next_ref();
        self.s.compares_pending.insert(r);
        Ok(r)
    }

    /// Sends an `ActiveOwnership` marker; it governs the writes that follow until the next one.
    ///
    /// # Errors
    /// [`CallError`] when not running or the queue is full.
    pub fn active_ownership(&mut self, o: &codec::write::Ownership) -> Result<(), CallError> {
        self.send(codec::write::active_ownership(o))
    }

    /// A compare-exchange under an ownership marker: the marker goes first only when it conveys
    /// ownership (an action, skipped checks or an owner key); otherwise the compare goes alone.
    ///
    /// # Errors
    /// [`CallError::UnknownId`] for an id this client has not introduced.
    pub fn compare_exchange_owned(
        &mut self,
        ownership: &codec::write::Ownership,
        record_id: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, CallError> {
        self.check_client_ids(record_id)?;
        let conveys = ownership.ownership_action != codec::write::OwnershipAction::None
            || ownership.skip_ownership_checks
            || ownership.client_key_id != 0;
        if !conveys {
            return self.compare_exchange(record_id, test, value);
        }
        self.room_for_pending()?;
        // Both go or neither: a marker queued alone would govern whatever the application
        // writes next.
        let marker = codec::write::active_ownership(ownership);
        let r = self.s.next_msg_ref;
        let compare = codec::write::compare_exchange(record_id, r, test, value);
        if !self.running {
            return Err(CallError::NotRunning);
        }
        let l = &self.config.limits;
        if self.transmit.len() + 2 > l.max_transmit_count
            || self.transmit_bytes + marker.len() + compare.len() > l.max_transmit_bytes
        {
            return Err(CallError::QueueFull);
        }
        self.send(marker)?;
        self.send(compare)?;
        self.next_ref();
        self.s.compares_pending.insert(r);
        Ok(r)
    }

    /// Sends `Logoff` and ends the session with reason `stop`.
    pub fn logoff(&mut self) {
        // The Logoff uses the reply reserve; the session stops whether it fits or not (a
        // Logoff that did not fit is counted in `replies_dropped`).
        let _ = self.queue_reply(codec::write::logoff());
        self.stopped(StopReason::Stop, None);
    }
}
