//! The receipt server model: sans-IO, frames and time in, frames out.
//!
//! It keeps the server rules of the write-receipt spec (W-15 to W-32): one answer per write on a
//! receipt connection, sent only after the write is committed; the write's id on every refusal;
//! dedupe by (actor, messageId) keeping only digests, for the session and, when configured, for
//! the actor up to the retention W-26 allows after it; the per-session table and refusal-set
//! limits and a server-wide budget; the required and blank-field rules with their fixed texts;
//! the reliable-channel rule; and a legacy mode for connections without a receipt hello (no
//! receipts, `cultnet.error.v0`). Faults (silence, late answers, dropped connections,
//! duplicate-key receipts) are switches of the model.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use cultnet_receipts::frames::{
    DocumentDelete, DocumentPut, ErrorDetails, ErrorV0, ErrorV1, Hello, Operation, WriteAdmitted,
    CODE_LIMIT_REACHED, CODE_MESSAGE_INVALID, DOCUMENT_DELETE_V0, DOCUMENT_PUT_V0, ERROR_V0,
    ERROR_V1, WRITE_ADMITTED_V0,
};
use cultnet_receipts::hash::{delete_hash, put_hash};
use cultnet_receipts::message_id::{is_blank, is_valid_admitted_message_id};
use cultnet_receipts::tracker::DEDUPE_RETENTION_MS;
use cultnet_receipts::{decode, encode, DecodeError, Frame};
use sha2::{Digest, Sha256};

use crate::probe::probe;

/// Fixed text: an id longer than [`MAX_MESSAGE_ID_BYTES`].
pub const TEXT_ID_TOO_LONG: &str = "message_invalid: messageId exceeds 256 bytes";
/// Fixed text: a put without a document.
pub const TEXT_DOCUMENT_REQUIRED: &str = "message_invalid: document is required";
/// Fixed text: a write without a schemaId.
pub const TEXT_SCHEMA_ID_REQUIRED: &str = "message_invalid: schemaId is required";
/// Fixed text: a frame that does not read, or a write that names nothing.
pub const TEXT_UNREADABLE: &str = "message_invalid: the message could not be read";
/// Fixed text: a write on a channel that is not reliable and unsequenced.
pub const TEXT_CHANNEL: &str = "message_invalid: receipt sessions require the reliable channel";
/// Fixed text: a new write past the session's (or the server's) remembered-write bound.
pub const TEXT_LIMIT_REACHED: &str = "limit_reached: the session's remembered-write limit is full";
/// This model's text for an id reused for other content (the spec fixes no text for it).
pub const TEXT_ID_REUSED: &str = "message_invalid: messageId was already used for other content";
/// This model's text for a write the actor may not make.
pub const TEXT_NOT_AUTHORIZED: &str = "write_not_authorized: the actor may not write this schema";
/// The error code of a write the actor may not make.
pub const CODE_WRITE_NOT_AUTHORIZED: &str = "write_not_authorized";

/// The longest messageId a write may carry, in bytes of UTF-8.
pub const MAX_MESSAGE_ID_BYTES: usize = 256;
/// Remembered writes per session, at most.
pub const MAX_ENTRIES_PER_SESSION: usize = 1024;
/// Remembered limit refusals per session, at most (outside the entry budget).
pub const MAX_REFUSALS_PER_SESSION: usize = 1024;
/// The reference server-wide budget of remembered entries, in bytes.
pub const DEFAULT_SERVER_BUDGET_BYTES: usize = 32 << 20;
/// What one remembered entry costs against the server-wide budget: two SHA-256 digests and the
/// answer.
pub const ENTRY_BYTES: usize = std::mem::size_of::<([u8; 32], Remembered)>();

/// Names one connection (one session) of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u64);

/// The channel a frame arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// Reliable and ordered.
    ReliableOrdered,
    /// Reliable and unordered.
    ReliableUnordered,
    /// Sequenced: superseded packets are dropped, so a write on it can vanish.
    Sequenced,
}

/// The bounds and behaviour of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Whether the server implements receipts (and says so in its hello); a legacy server
    /// answers every connection the old way.
    pub receipts: bool,
    /// Remembered writes per session.
    pub max_entries_per_session: usize,
    /// Remembered limit refusals per session.
    pub max_refusals_per_session: usize,
    /// Server-wide budget of remembered entries in bytes (`None`: no server-wide budget).
    pub server_budget_bytes: Option<usize>,
    /// How long after its arrival an admitted write is committed (0: at once).
    pub commit_delay_ms: u64,
    /// Accepted writes waiting for their commit, at most; past it the oldest commits at once
    /// (earlier than its delay, never later), which keeps the queue bounded without dropping a
    /// write.
    pub max_pending_commits: usize,
    /// Bytes of the accepted writes waiting for their commit (their frames' payloads, ids,
    /// schema ids and record keys), at most; past it the oldest commit at once, as for the
    /// count.
    pub max_pending_commit_bytes: usize,
    /// Frames waiting to be sent, at most; beyond it answers are dropped and counted.
    pub max_outbox: usize,
    /// Bytes of the frames waiting to be sent, at most (an admission echoes the write's schema
    /// id and record key, which the client chose); beyond it answers are dropped and counted.
    pub max_outbox_bytes: usize,
    /// Commit records kept for [`Server::poll_commit`], at most; beyond it they are dropped and
    /// counted.
    pub max_commit_log: usize,
    /// How long an actor's remembered writes outlive the session they were made in, in
    /// milliseconds (W-26 allows up to [`DEDUPE_RETENTION_MS`]; a longer value is cut to it).
    /// 0, the default: they are forgotten when the session ends. A client never relies on it.
    /// A later session of the actor answers a retained id from them only while it can remember
    /// the id itself (below its table's cap and its refusal set not overflowed); otherwise the
    /// id is a new write of that session.
    pub retention_ms: u64,
    /// Retained writes across all actors, at most; past it the oldest is forgotten first and
    /// counted. Retained writes also stay charged to the server-wide budget until forgotten.
    pub max_retained: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            receipts: true,
            max_entries_per_session: MAX_ENTRIES_PER_SESSION,
            max_refusals_per_session: MAX_REFUSALS_PER_SESSION,
            server_budget_bytes: Some(DEFAULT_SERVER_BUDGET_BYTES),
            commit_delay_ms: 0,
            max_pending_commits: 1 << 16,
            max_pending_commit_bytes: 64 << 20,
            max_outbox: 1 << 16,
            max_outbox_bytes: 64 << 20,
            max_commit_log: 1 << 16,
            retention_ms: 0,
            max_retained: 1 << 16,
        }
    }
}

/// Faults a test switches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Faults {
    /// Answers are computed and then never sent.
    pub silent: bool,
    /// Answers are held this long before they can be polled.
    pub answer_delay_ms: u64,
    /// Each write_admitted is sent with its messageId key written twice (a malformed frame).
    pub duplicate_key_receipts: bool,
}

/// A frame for one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The connection.
    pub conn: ConnId,
    /// The frame's bytes (inside the length prefix).
    pub bytes: Vec<u8>,
}

/// A write the server committed (visible to readers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The connection the write came on.
    pub conn: ConnId,
    /// Its messageId.
    pub message_id: String,
    /// Its content hash.
    pub content_hash: [u8; 32],
}

/// Counters of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerCounters {
    /// Writes applied to the store.
    pub applied: u64,
    /// Answers replayed from the table (or the refusal set).
    pub replayed: u64,
    /// Answers dropped by the silence fault.
    pub silenced: u64,
    /// Answers dropped because the outbox was full.
    pub outbox_dropped: u64,
    /// Answers dropped because their connection was gone.
    pub answers_for_gone_connections: u64,
    /// Commit records dropped because nobody polled them.
    pub commit_log_dropped: u64,
    /// Limit refusals that could not be remembered (the refusal set was full).
    pub limit_refusals_not_remembered: u64,
    /// Writes committed before their delay because the commit queue was full.
    pub early_commits: u64,
    /// Hellos that came after a write (they change nothing).
    pub late_hellos: u64,
    /// Frames from a client that are not requests (errors, receipts): ignored.
    pub ignored_frames: u64,
    /// Writes of an ended session answered from the actor's retained writes.
    pub retained_replays: u64,
    /// Retained writes forgotten before their retention ran out, to stay within `max_retained`.
    pub retained_dropped: u64,
    /// Answers that would not encode: dropped and counted, never a panic.
    pub unencodable_answers: u64,
}

/// A refusal, as one of a fixed set (so a remembered answer has a fixed size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `message_invalid`, field `messageId`: longer than 256 bytes.
    IdTooLong,
    /// `message_invalid`, field `messageId`: the id was used for other content.
    IdReused,
    /// `message_invalid`, field `document`.
    DocumentRequired,
    /// `message_invalid`, field `schemaId`.
    SchemaIdRequired,
    /// `message_invalid`, field `message`: does not read, or names nothing.
    Unreadable,
    /// `message_invalid`, field `channel`.
    Channel,
    /// `limit_reached`, details nil.
    LimitReached,
    /// `write_not_authorized`, details nil.
    NotAuthorized,
}

impl Refusal {
    /// The frame carrying this refusal: to a receipt connection an error.v1 naming `id` (nil
    /// when there is none or it is empty: an empty id names nothing), to a legacy one an
    /// error.v0 with the same code, text and details.
    #[must_use]
    pub fn frame(self, receipts: bool, id: Option<&str>) -> Frame {
        let (code, text, field) = self.parts();
        let details = field.map(|f| ErrorDetails {
            field: Some(f.to_owned()),
        });
        if receipts {
            Frame::ErrorV1(ErrorV1 {
                message_id: id.filter(|i| !i.is_empty()).map(str::to_owned),
                error: text.to_owned(),
                code: Some(code.into()),
                details,
            })
        } else {
            Frame::ErrorV0(ErrorV0 {
                error: text.to_owned(),
                code: Some(code.into()),
                details,
            })
        }
    }

    /// The code, the fixed text and the details' field.
    #[must_use]
    pub fn parts(self) -> (&'static str, &'static str, Option<&'static str>) {
        match self {
            Refusal::IdTooLong => (CODE_MESSAGE_INVALID, TEXT_ID_TOO_LONG, Some("messageId")),
            Refusal::IdReused => (CODE_MESSAGE_INVALID, TEXT_ID_REUSED, Some("messageId")),
            Refusal::DocumentRequired => (
                CODE_MESSAGE_INVALID,
                TEXT_DOCUMENT_REQUIRED,
                Some("document"),
            ),
            Refusal::SchemaIdRequired => (
                CODE_MESSAGE_INVALID,
                TEXT_SCHEMA_ID_REQUIRED,
                Some("schemaId"),
            ),
            Refusal::Unreadable => (CODE_MESSAGE_INVALID, TEXT_UNREADABLE, Some("message")),
            Refusal::Channel => (CODE_MESSAGE_INVALID, TEXT_CHANNEL, Some("channel")),
            Refusal::LimitReached => (CODE_LIMIT_REACHED, TEXT_LIMIT_REACHED, None),
            Refusal::NotAuthorized => (CODE_WRITE_NOT_AUTHORIZED, TEXT_NOT_AUTHORIZED, None),
        }
    }
}

/// The answer a remembered write got (or will get, once committed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Accepted, not yet committed; `waiting` resends wait for the commit with it.
    Pending {
        /// Resends waiting.
        waiting: u32,
    },
    /// Committed and admitted.
    Admitted,
    /// Refused.
    Refused(Refusal),
}

/// One remembered write: the digest of its content hash and its answer (the key is the digest
/// of its messageId).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remembered {
    /// SHA-256 of the write's content hash.
    pub content_digest: [u8; 32],
    /// The answer.
    pub answer: Answer,
}

#[derive(Debug)]
struct Conn {
    actor: String,
    receipts: bool,
    saw_write: bool,
    table: BTreeMap<[u8; 32], Remembered>,
    /// Limit refusals: id digest -> content digest.
    refusals: BTreeMap<[u8; 32], [u8; 32]>,
    /// The refusal set overflowed: every id not seen is refused for the rest of the session.
    closed: bool,
}

#[derive(Debug, Clone)]
enum Write {
    Put(DocumentPut),
    Delete(DocumentDelete),
}

impl Write {
    /// What the write costs while it waits for its commit.
    fn bytes(&self) -> usize {
        match self {
            Write::Put(p) => {
                p.message_id.len()
                    + p.document.schema_id.len()
                    + p.document.record_key.len()
                    + p.document.stored_at.len()
                    + p.document.payload.as_bytes().len()
                    + p.document.source_runtime_id.as_ref().map_or(0, String::len)
                    + p.document.source_agent_id.as_ref().map_or(0, String::len)
                    + p.document.source_role.as_ref().map_or(0, String::len)
                    + p.document
                        .tags
                        .as_ref()
                        .map_or(0, |t| t.iter().map(String::len).sum())
            }
            Write::Delete(d) => d.message_id.len() + d.schema_id.len() + d.record_key.len(),
        }
    }

    fn id(&self) -> &str {
        match self {
            Write::Put(p) => &p.message_id,
            Write::Delete(d) => &d.message_id,
        }
    }

    fn hash(&self) -> [u8; 32] {
        match self {
            Write::Put(p) => put_hash(p),
            Write::Delete(d) => delete_hash(d),
        }
    }

    fn target(&self) -> (Operation, &str, &str) {
        match self {
            Write::Put(p) => (
                Operation::Put,
                &p.document.schema_id,
                &p.document.record_key,
            ),
            Write::Delete(d) => (Operation::Delete, &d.schema_id, &d.record_key),
        }
    }
}

#[derive(Debug)]
struct PendingCommit {
    due: u64,
    conn: ConnId,
    actor: String,
    id_digest: [u8; 32],
    write: Write,
}

/// The receipt server model.
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    faults: Faults,
    next_conn: u64,
    conns: BTreeMap<ConnId, Conn>,
    store: BTreeMap<(String, String), Vec<u8>>,
    denied: BTreeSet<(String, String)>,
    budget_used: usize,
    /// The latest time the server was given.
    clock: u64,
    /// Remembered writes of ended sessions: (actor, id digest) -> the entry and when it expires.
    retained: BTreeMap<(String, [u8; 32]), (Remembered, u64)>,
    /// The retained keys in the order they expire (a key retained again has a later record; an
    /// older record of it is skipped).
    retained_order: VecDeque<(u64, String, [u8; 32])>,
    pending: VecDeque<PendingCommit>,
    /// Bytes of `pending` (`Write::bytes` summed).
    pending_bytes: usize,
    outbox: VecDeque<(u64, Outgoing)>,
    /// Bytes of the frames in `outbox`.
    outbox_bytes: usize,
    commits: VecDeque<Commit>,
    counters: ServerCounters,
}

fn sha(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

impl Server {
    /// A server with no connections and an empty store.
    #[must_use]
    pub fn new(config: ServerConfig) -> Self {
        Server {
            config,
            faults: Faults::default(),
            next_conn: 0,
            conns: BTreeMap::new(),
            store: BTreeMap::new(),
            denied: BTreeSet::new(),
            budget_used: 0,
            clock: 0,
            retained: BTreeMap::new(),
            retained_order: VecDeque::new(),
            pending: VecDeque::new(),
            pending_bytes: 0,
            outbox: VecDeque::new(),
            outbox_bytes: 0,
            commits: VecDeque::new(),
            counters: ServerCounters::default(),
        }
    }

    /// Whether the server keeps the receipt rules (and lists both receipt frames in its hello).
    #[must_use]
    pub fn implements_receipts(&self) -> bool {
        self.config.receipts
    }

    /// Switches faults on or off.
    pub fn set_faults(&mut self, faults: Faults) {
        self.faults = faults;
    }

    /// The faults in force.
    #[must_use]
    pub fn faults(&self) -> Faults {
        self.faults
    }

    /// The counters.
    #[must_use]
    pub fn counters(&self) -> ServerCounters {
        self.counters
    }

    /// Forbids `actor` to write `schema_id` (refused `write_not_authorized`).
    pub fn deny(&mut self, actor: &str, schema_id: &str) {
        self.denied.insert((actor.to_owned(), schema_id.to_owned()));
    }

    /// What a reader sees under a schemaId and recordKey: the committed payload.
    #[must_use]
    pub fn read(&self, schema_id: &str, record_key: &str) -> Option<&[u8]> {
        self.store
            .get(&(schema_id.to_owned(), record_key.to_owned()))
            .map(Vec::as_slice)
    }

    /// Bytes of the server-wide budget in use.
    #[must_use]
    pub fn budget_used(&self) -> usize {
        self.budget_used
    }

    /// Writes remembered on a connection (table entries, limit refusals).
    #[must_use]
    pub fn remembered(&self, conn: ConnId) -> Option<(usize, usize)> {
        self.conns
            .get(&conn)
            .map(|c| (c.table.len(), c.refusals.len()))
    }

    /// The remembered entries of a connection: each is an id digest and fixed-size digests and
    /// answer, nothing else.
    #[must_use]
    pub fn table(&self, conn: ConnId) -> Vec<([u8; 32], Remembered)> {
        self.conns.get(&conn).map_or_else(Vec::new, |c| {
            c.table.iter().map(|(k, v)| (*k, *v)).collect()
        })
    }

    /// A connection from `actor`, the identity its transport authenticated (never a name a
    /// hello or a frame claims). The server's hello is queued for it at `now`.
    pub fn connect(&mut self, actor: &str, now: u64) -> ConnId {
        self.on_tick(now);
        let id = ConnId(self.next_conn);
        self.next_conn += 1;
        self.conns.insert(
            id,
            Conn {
                actor: actor.to_owned(),
                receipts: false,
                saw_write: false,
                table: BTreeMap::new(),
                refusals: BTreeMap::new(),
                closed: false,
            },
        );
        let versions = if self.config.receipts {
            vec![
                DOCUMENT_PUT_V0.to_owned(),
                DOCUMENT_DELETE_V0.to_owned(),
                ERROR_V0.to_owned(),
                ERROR_V1.to_owned(),
                WRITE_ADMITTED_V0.to_owned(),
            ]
        } else {
            vec![
                DOCUMENT_PUT_V0.to_owned(),
                DOCUMENT_DELETE_V0.to_owned(),
                ERROR_V0.to_owned(),
            ]
        };
        let hello = Hello {
            runtime_id: "receipt-server".to_owned(),
            runtime_kind: "server".to_owned(),
            supported_message_versions: Some(versions),
            ..Hello::default()
        };
        let bytes = encode(&Frame::Hello(hello)).expect("the server's hello encodes");
        self.push_out(now, Outgoing { conn: id, bytes });
        id
    }

    /// Whether a connection is receipt-capable.
    #[must_use]
    pub fn is_receipt_connection(&self, conn: ConnId) -> bool {
        self.conns.get(&conn).is_some_and(|c| c.receipts)
    }

    /// The connection dropped: its session ends, and answers not yet sent are lost. Its
    /// remembered writes are forgotten (and their budget freed), unless the server retains them
    /// for the actor (`retention_ms`): then its answered writes and limit refusals stay for that
    /// long, counted from the latest time the server was given. Writes already accepted still
    /// commit (and, retained, are remembered as admitted when they do).
    pub fn drop_connection(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        self.budget_used -= c.table.len() * ENTRY_BYTES;
        self.outbox.retain(|(_, o)| o.conn != conn);
        self.outbox_bytes = self.outbox.iter().map(|(_, o)| o.bytes.len()).sum();
        if self.retention() == 0 {
            return;
        }
        for (digest, r) in c.table {
            if !matches!(r.answer, Answer::Pending { .. }) {
                self.retain(&c.actor, digest, r);
            }
        }
        for (digest, content_digest) in c.refusals {
            self.retain(
                &c.actor,
                digest,
                Remembered {
                    content_digest,
                    answer: Answer::Refused(Refusal::LimitReached),
                },
            );
        }
    }

    fn retention(&self) -> u64 {
        self.config.retention_ms.min(DEDUPE_RETENTION_MS)
    }

    /// Keeps an ended session's entry for its actor until the retention runs out.
    fn retain(&mut self, actor: &str, digest: [u8; 32], entry: Remembered) {
        if self.config.max_retained == 0 {
            self.counters.retained_dropped += 1;
            return;
        }
        while self.retained.len() >= self.config.max_retained {
            let Some((expires, a, d)) = self.retained_order.pop_front() else {
                break;
            };
            if self.forget_retained(&a, d, expires) {
                self.counters.retained_dropped += 1;
            }
        }
        let expires = self.clock.saturating_add(self.retention());
        let key = (actor.to_owned(), digest);
        if self.retained.insert(key, (entry, expires)).is_none() {
            self.budget_used += ENTRY_BYTES;
        }
        self.retained_order
            .push_back((expires, actor.to_owned(), digest));
    }

    /// Forgets a retained entry if its record is the current one; whether it did.
    fn forget_retained(&mut self, actor: &str, digest: [u8; 32], expires: u64) -> bool {
        let key = (actor.to_owned(), digest);
        if self.retained.get(&key).is_some_and(|(_, e)| *e == expires) {
            self.retained.remove(&key);
            self.budget_used -= ENTRY_BYTES;
            true
        } else {
            false
        }
    }

    /// Writes retained for actors of ended sessions.
    #[must_use]
    pub fn retained(&self) -> usize {
        self.retained.len()
    }

    /// Advances time: commits writes whose commit is due (then answers them).
    pub fn on_tick(&mut self, now: u64) {
        self.clock = self.clock.max(now);
        while self
            .retained_order
            .front()
            .is_some_and(|(expires, _, _)| *expires <= now)
        {
            let (expires, actor, digest) = self.retained_order.pop_front().expect("checked above");
            self.forget_retained(&actor, digest, expires);
        }
        while self.pending.front().is_some_and(|p| p.due <= now) {
            let p = self.pending.pop_front().expect("checked above");
            self.pending_bytes -= p.write.bytes();
            self.commit(p, now);
        }
    }

    /// The next frame due at `now`.
    pub fn poll_output(&mut self, now: u64) -> Option<Outgoing> {
        self.on_tick(now);
        if self.outbox.front().is_some_and(|(due, _)| *due <= now) {
            let (_, o) = self.outbox.pop_front()?;
            self.outbox_bytes -= o.bytes.len();
            Some(o)
        } else {
            None
        }
    }

    /// The next commit record, oldest first.
    pub fn poll_commit(&mut self) -> Option<Commit> {
        self.commits.pop_front()
    }

    /// A frame from a connection, on a channel, at `now`.
    pub fn on_frame(&mut self, conn: ConnId, channel: Channel, bytes: &[u8], now: u64) {
        self.on_tick(now);
        if !self.conns.contains_key(&conn) {
            return;
        }
        match decode(bytes) {
            Ok(Frame::Hello(h)) => {
                let receipts = self.config.receipts;
                let c = self.conns.get_mut(&conn).expect("checked above");
                if c.saw_write {
                    self.counters.late_hellos += 1;
                } else {
                    c.receipts = receipts && h.is_receipt_capable();
                }
            }
            Ok(Frame::DocumentPut(p)) => self.on_write(conn, channel, Write::Put(p), now),
            Ok(Frame::DocumentDelete(d)) => self.on_write(conn, channel, Write::Delete(d), now),
            Ok(_) => self.counters.ignored_frames += 1,
            Err(e) => self.on_unreadable(conn, channel, bytes, &e, now),
        }
    }

    fn on_unreadable(
        &mut self,
        conn: ConnId,
        channel: Channel,
        bytes: &[u8],
        error: &DecodeError,
        now: u64,
    ) {
        let receipts = self.conns[&conn].receipts;
        let u = unreadable(bytes, error, receipts, channel);
        if u.is_write {
            self.conns
                .get_mut(&conn)
                .expect("checked by the caller")
                .saw_write = true;
        }
        self.answer(conn, u.id.as_deref(), Err(u.refusal), None, now);
    }

    fn names_nothing(write: &Write) -> bool {
        match write {
            Write::Delete(d) => delete_names_nothing(d),
            Write::Put(p) => put_names_nothing(p),
        }
    }

    fn on_write(&mut self, conn: ConnId, channel: Channel, write: Write, now: u64) {
        let c = self.conns.get_mut(&conn).expect("checked by the caller");
        c.saw_write = true;
        if !c.receipts {
            // The old behaviour: no table, no receipt; refusals as error.v0.
            let verdict = if Self::names_nothing(&write) {
                Err(Refusal::Unreadable)
            } else if self
                .denied
                .contains(&(c.actor.clone(), write.target().1.to_owned()))
            {
                Err(Refusal::NotAuthorized)
            } else {
                Ok(())
            };
            match verdict {
                Err(r) => self.answer(conn, Some(write.id()), Err(r), None, now),
                Ok(()) => self.accept(conn, [0; 32], write, now),
            }
            return;
        }
        let id = write.id().to_owned();
        if id.len() > MAX_MESSAGE_ID_BYTES {
            self.answer(conn, Some(&id), Err(Refusal::IdTooLong), None, now);
            return;
        }
        if channel == Channel::Sequenced {
            self.answer(conn, Some(&id), Err(Refusal::Channel), None, now);
            return;
        }
        if !is_valid_admitted_message_id(&id) {
            // No write_admitted could ever name this id, so the write is refused like one whose
            // id is empty or ill-typed, before it is remembered or applied (W-7); the refusal
            // still carries the id, which error.v1 allows.
            self.answer(conn, Some(&id), Err(Refusal::Unreadable), None, now);
            return;
        }
        if Self::names_nothing(&write) {
            // Refused exactly as a frame that does not read (W-27): the same answer whatever
            // the table holds, at its cap included, and nothing remembered or charged, so a
            // resend is refused afresh, identically.
            self.answer(conn, Some(&id), Err(Refusal::Unreadable), None, now);
            return;
        }
        let id_digest = sha(id.as_bytes());
        let content_digest = sha(&write.hash());
        let target = write.target();
        let target = (target.0, target.1.to_owned(), target.2.to_owned());
        if let Some(r) = c.table.get_mut(&id_digest) {
            self.counters.replayed += 1;
            if r.content_digest != content_digest {
                self.answer(conn, Some(&id), Err(Refusal::IdReused), None, now);
                return;
            }
            match &mut r.answer {
                Answer::Pending { waiting } => *waiting += 1,
                Answer::Admitted => {
                    self.answer(conn, Some(&id), Ok(()), Some(&target), now);
                }
                Answer::Refused(x) => {
                    let x = *x;
                    self.answer(conn, Some(&id), Err(x), None, now);
                }
            }
            return;
        }
        if let Some(d) = c.refusals.get(&id_digest) {
            self.counters.replayed += 1;
            let r = if *d == content_digest {
                Refusal::LimitReached
            } else {
                Refusal::IdReused
            };
            self.answer(conn, Some(&id), Err(r), None, now);
            return;
        }
        // Only a session that can remember the id for the rest of its life answers it from
        // retention: at its table's cap, or past its refusal set, a retained id is a new write of
        // this session and is refused below, so its answer never changes mid-session (an
        // answer replayed without a slot would be forgotten when the retention runs out).
        let can_remember = !c.closed && c.table.len() < self.config.max_entries_per_session;
        let retained = if can_remember {
            self.retained.get(&(c.actor.clone(), id_digest)).copied()
        } else {
            None
        };
        if let Some(hit) = retained {
            // A write the actor made on an ended session, still retained: answered as its own
            // session would have answered it, and remembered by this session from now on, so it
            // cannot expire mid-session: neither its answer, nor the refusal of other content
            // under its id.
            self.counters.retained_replays += 1;
            let (entry, expires) = hit;
            c.table.insert(id_digest, entry);
            let actor = c.actor.clone();
            // The charge moves from the retained entry to the session's.
            self.budget_used += ENTRY_BYTES;
            self.forget_retained(&actor, id_digest, expires);
            if entry.content_digest != content_digest {
                self.answer(conn, Some(&id), Err(Refusal::IdReused), None, now);
                return;
            }
            // Only answered writes are retained (a pending one is retained at its commit).
            match entry.answer {
                Answer::Refused(r) => self.answer(conn, Some(&id), Err(r), None, now),
                Answer::Admitted => self.answer(conn, Some(&id), Ok(()), Some(&target), now),
                Answer::Pending { .. } => {}
            }
            return;
        }
        let over_budget = self
            .config
            .server_budget_bytes
            .is_some_and(|b| self.budget_used + ENTRY_BYTES > b);
        if c.closed || c.table.len() >= self.config.max_entries_per_session || over_budget {
            if !c.closed && c.refusals.len() < self.config.max_refusals_per_session {
                c.refusals.insert(id_digest, content_digest);
            } else {
                c.closed = true;
                self.counters.limit_refusals_not_remembered += 1;
            }
            self.answer(conn, Some(&id), Err(Refusal::LimitReached), None, now);
            return;
        }
        let verdict = if self.denied.contains(&(c.actor.clone(), target.1.clone())) {
            Err(Refusal::NotAuthorized)
        } else {
            Ok(())
        };
        let answer = match verdict {
            Err(r) => Answer::Refused(r),
            Ok(()) => Answer::Pending { waiting: 0 },
        };
        c.table.insert(
            id_digest,
            Remembered {
                content_digest,
                answer,
            },
        );
        self.budget_used += ENTRY_BYTES;
        match verdict {
            Err(r) => self.answer(conn, Some(&id), Err(r), None, now),
            Ok(()) => self.accept(conn, id_digest, write, now),
        }
    }

    fn accept(&mut self, conn: ConnId, id_digest: [u8; 32], write: Write, now: u64) {
        let actor = self
            .conns
            .get(&conn)
            .map_or_else(String::new, |c| c.actor.clone());
        let p = PendingCommit {
            due: now + self.config.commit_delay_ms,
            conn,
            actor,
            id_digest,
            write,
        };
        if self.config.commit_delay_ms == 0 {
            self.commit(p, now);
        } else {
            let cost = p.write.bytes();
            while self.pending.len() >= self.config.max_pending_commits
                || (!self.pending.is_empty()
                    && self.pending_bytes + cost > self.config.max_pending_commit_bytes)
            {
                let Some(old) = self.pending.pop_front() else {
                    break;
                };
                self.pending_bytes -= old.write.bytes();
                self.counters.early_commits += 1;
                self.commit(old, now);
            }
            self.pending_bytes += cost;
            self.pending.push_back(p);
        }
    }

    /// Applies a write to the store (visible to readers from here on), then answers it.
    fn commit(&mut self, p: PendingCommit, now: u64) {
        let (op, schema, key) = p.write.target();
        let target = (op, schema.to_owned(), key.to_owned());
        match &p.write {
            Write::Put(w) => {
                self.store.insert(
                    (target.1.clone(), target.2.clone()),
                    w.document.payload.as_bytes().to_vec(),
                );
            }
            Write::Delete(_) => {
                self.store.remove(&(target.1.clone(), target.2.clone()));
            }
        }
        self.counters.applied += 1;
        if self.commits.len() >= self.config.max_commit_log {
            self.commits.pop_front();
            self.counters.commit_log_dropped += 1;
        }
        self.commits.push_back(Commit {
            conn: p.conn,
            message_id: p.write.id().to_owned(),
            content_hash: p.write.hash(),
        });
        let Some(c) = self.conns.get_mut(&p.conn) else {
            self.counters.answers_for_gone_connections += 1;
            if self.retention() > 0 && p.id_digest != [0; 32] {
                let content_digest = sha(&p.write.hash());
                self.retain(
                    &p.actor,
                    p.id_digest,
                    Remembered {
                        content_digest,
                        answer: Answer::Admitted,
                    },
                );
            }
            return;
        };
        let mut times = 1;
        if let Some(r) = c.table.get_mut(&p.id_digest) {
            if let Answer::Pending { waiting } = r.answer {
                times += waiting;
            }
            r.answer = Answer::Admitted;
        }
        for _ in 0..times {
            self.answer(p.conn, Some(p.write.id()), Ok(()), Some(&target), now);
        }
    }

    /// Queues the answer to a write: a receipt or error.v1 on a receipt connection; nothing or
    /// error.v0 on a legacy one.
    fn answer(
        &mut self,
        conn: ConnId,
        id: Option<&str>,
        verdict: Result<(), Refusal>,
        target: Option<&(Operation, String, String)>,
        now: u64,
    ) {
        let Some(c) = self.conns.get(&conn) else {
            self.counters.answers_for_gone_connections += 1;
            return;
        };
        let frame = match (verdict, c.receipts) {
            (Ok(()), false) => return,
            (Ok(()), true) => {
                let (op, schema, key) = target.expect("an admission names its target");
                let id = id.expect("an admission names its write");
                if self.faults.duplicate_key_receipts {
                    match duplicate_id_receipt(id, *op, schema, key) {
                        Some(bytes) => self.push_out(now, Outgoing { conn, bytes }),
                        None => self.counters.unencodable_answers += 1,
                    }
                    return;
                }
                Frame::WriteAdmitted(WriteAdmitted {
                    message_id: id.to_owned(),
                    operation: *op,
                    schema_id: schema.clone(),
                    record_key: key.clone(),
                })
            }
            (Err(r), receipts) => r.frame(receipts, id),
        };
        match encode(&frame) {
            Ok(bytes) => self.push_out(now, Outgoing { conn, bytes }),
            Err(_) => self.counters.unencodable_answers += 1,
        }
    }

    fn push_out(&mut self, now: u64, out: Outgoing) {
        if self.faults.silent {
            self.counters.silenced += 1;
            return;
        }
        if self.outbox.len() >= self.config.max_outbox
            || self.outbox_bytes + out.bytes.len() > self.config.max_outbox_bytes
        {
            self.counters.outbox_dropped += 1;
            return;
        }
        self.outbox_bytes += out.bytes.len();
        // Due times never go backwards, so the outbox stays in send order.
        let due =
            (now + self.faults.answer_delay_ms).max(self.outbox.back().map_or(0, |(d, _)| *d));
        self.outbox.push_back((due, out));
    }
}

/// A delete that names nothing (W-27): a blank schemaId or recordKey.
pub(crate) fn delete_names_nothing(d: &DocumentDelete) -> bool {
    is_blank(&d.schema_id) || is_blank(&d.record_key)
}

/// A put that names nothing (W-27): a blank schemaId, recordKey or storedAt, a payload of zero
/// bytes, a present but blank source id or role, or a blank tag.
pub(crate) fn put_names_nothing(p: &DocumentPut) -> bool {
    let d = &p.document;
    let blank_opt = |s: &Option<String>| s.as_deref().is_some_and(is_blank);
    is_blank(&d.schema_id)
        || is_blank(&d.record_key)
        || is_blank(&d.stored_at)
        // A payload of zero bytes: an empty bin, whatever width its length has.
        || matches!(
            d.payload.as_bytes(),
            [0xc4, 0] | [0xc5, 0, 0] | [0xc6, 0, 0, 0, 0]
        )
        || blank_opt(&d.source_runtime_id)
        || blank_opt(&d.source_agent_id)
        || blank_opt(&d.source_role)
        || d.tags
            .as_ref()
            .is_some_and(|t| t.iter().any(|s| is_blank(s)))
}

/// A write_admitted whose messageId key appears twice (the duplicate-key fault); `None` when
/// the receipt would not encode.
fn duplicate_id_receipt(id: &str, op: Operation, schema: &str, key: &str) -> Option<Vec<u8>> {
    let mut bytes = encode(&Frame::WriteAdmitted(WriteAdmitted {
        message_id: id.to_owned(),
        operation: op,
        schema_id: schema.to_owned(),
        record_key: key.to_owned(),
    }))
    .ok()?;
    // A fixmap of five entries becomes one of six; the extra entry repeats the id.
    bytes[0] = 0x86;
    bytes.extend(str_bytes("messageId"));
    bytes.extend(str_bytes(id));
    Some(bytes)
}

/// A MessagePack string.
#[must_use]
pub fn str_bytes(s: &str) -> Vec<u8> {
    let n = s.len();
    let mut v = Vec::with_capacity(n + 5);
    if n < 32 {
        v.push(0xa0 | n as u8);
    } else if n < 256 {
        v.extend([0xd9, n as u8]);
    } else if n < 65536 {
        v.push(0xda);
        v.extend((n as u16).to_be_bytes());
    } else {
        v.push(0xdb);
        v.extend((n as u32).to_be_bytes());
    }
    v.extend(s.as_bytes());
    v
}

/// How a server answers a frame it cannot decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreadable {
    /// The frame names a put or a delete: a hello after it is late.
    pub is_write: bool,
    /// The id the refusal names: none when the messageId key is repeated (the id it carries is
    /// trusted for nothing, naming the refusal included) or cannot be read.
    pub id: Option<String>,
    /// The refusal.
    pub refusal: Refusal,
}

/// The answer to `bytes`, which did not decode with `error`, on a receipt connection or not,
/// arriving on `channel`: every frame that cannot be read is refused once (W-15, W-17).
pub(crate) fn unreadable(
    bytes: &[u8],
    error: &DecodeError,
    receipts: bool,
    channel: Channel,
) -> Unreadable {
    let p = probe(bytes);
    let is_write = matches!(
        p.schema_version.as_deref(),
        Some(DOCUMENT_PUT_V0 | DOCUMENT_DELETE_V0)
    );
    // A repeat of a key other than messageId leaves the one messageId readable, and the
    // refusal names it.
    let id = if p.message_id_keys == 1 && !matches!(error, DecodeError::DuplicateKey("messageId")) {
        p.message_id
    } else {
        None
    };
    let refusal = if receipts && channel == Channel::Sequenced && is_write {
        Refusal::Channel
    } else if receipts && id.as_ref().is_some_and(|i| i.len() > MAX_MESSAGE_ID_BYTES) {
        Refusal::IdTooLong
    } else if is_write && p.document_missing {
        Refusal::DocumentRequired
    } else if is_write && p.schema_id_missing {
        Refusal::SchemaIdRequired
    } else {
        Refusal::Unreadable
    };
    Unreadable {
        is_write,
        id,
        refusal,
    }
}
