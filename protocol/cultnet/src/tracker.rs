//! The client's write tracker: every put or delete settles exactly once as admitted, refused or
//! unconfirmed (or `sent`, for a write that opted into send-only), within a result window.
//!
//! Time is an input: every call that can settle a write takes `now` in milliseconds on the
//! caller's monotonic clock. The window of a write runs from its send and is the one the
//! server's hello selects at the moment the tracker judges the write (5000 ms against a
//! receipt-capable server, 500 ms otherwise); a write whose age has reached the window is
//! unconfirmed, so an answer at exactly the window is late.

use std::collections::{BTreeMap, VecDeque};

use crate::frames::{
    Document, DocumentDelete, DocumentPut, ErrorCode, ErrorDetails, Frame, Hello, Operation,
    WriteAdmitted,
};
use crate::hash::{delete_hash, put_hash};
use crate::TrackerError;

/// The result window against a receipt-capable server, in milliseconds.
pub const RECEIPT_RESULT_WINDOW_MS: u64 = 5000;
/// The result window against a server whose hello does not list both receipt frames (or that
/// sent none), in milliseconds.
pub const LEGACY_RESULT_WINDOW_MS: u64 = 500;
/// How long a server may remember a write beyond its session; clients never rely on it.
pub const DEDUPE_RETENTION_MS: u64 = 600_000;

/// Names one write of a tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WriteHandle(u64);

/// How a write wants to be answered. Neither mode is the default (W-46): the type has no
/// `Default`, and every call that registers a write takes one.
///
/// ```compile_fail
/// let _ = cultnet_receipts::tracker::WriteMode::default();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Settled by the server's answer: admitted, refused or unconfirmed.
    Receipt,
    /// The explicit per-call opt-in: settled `sent` by the transport's acknowledgement, never
    /// admitted.
    SendOnly,
}

/// Why a write ended unconfirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnconfirmedReason {
    /// The result window passed with no answer.
    WindowElapsed,
    /// The session ended before an answer (or before the write was sent).
    SessionEnded,
    /// The client's own send of the write failed.
    LocalSendFailed,
}

/// The refusal a server sent for a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The error's code: a named code as its variant, any other kept verbatim (see
    /// [`ErrorCode`]).
    pub code: Option<ErrorCode>,
    /// The error's text.
    pub error: String,
    /// The error's details.
    pub details: Option<ErrorDetails>,
    /// Whether the refusal named no write (error.v0, or error.v1 with nil messageId) and was
    /// attributed because this was the only unanswered write.
    pub attributed_by_count: bool,
}

/// What a write settled as. Settled once; a later answer only records a [`LateAnswer`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// A write_admitted named the write.
    Admitted,
    /// An error named the write (or was attributed to it as the only unanswered write).
    Refused(Refusal),
    /// Nothing settled the write. `server_missed_window` is set when a receipt-capable server let
    /// the window pass.
    Unconfirmed {
        /// Why.
        reason: UnconfirmedReason,
        /// A receipt-capable server let the window pass without answering.
        server_missed_window: bool,
    },
    /// A send-only write was acknowledged by the transport; this is never admission.
    Sent,
}

/// The error form of an outcome, for callers that want `?`: refused and unconfirmed are distinct.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The server refused the write.
    #[error("the write was refused: {}", .0.error)]
    Refused(Refusal),
    /// Nothing confirmed the write; it may or may not have been applied.
    #[error("the write is unconfirmed ({0:?})")]
    Unconfirmed(UnconfirmedReason),
}

/// What a successful write confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Confirmation {
    /// Admitted by the server.
    Admitted,
    /// Acknowledged by the transport only (send-only writes).
    Sent,
}

impl Outcome {
    /// Admitted (or sent, for a send-only write) as `Ok`; refused and unconfirmed as distinct
    /// errors.
    pub fn into_result(self) -> Result<Confirmation, WriteError> {
        match self {
            Outcome::Admitted => Ok(Confirmation::Admitted),
            Outcome::Sent => Ok(Confirmation::Sent),
            Outcome::Refused(r) => Err(WriteError::Refused(r)),
            Outcome::Unconfirmed { reason, .. } => Err(WriteError::Unconfirmed(reason)),
        }
    }
}

/// An answer that arrived after its write settled unconfirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LateAnswer {
    /// A late write_admitted: the write may well be applied; do not blindly resend it.
    AdmittedLate,
    /// A late refusal.
    RefusedLate(Refusal),
}

/// Where a write stands.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteState {
    /// Registered, not yet handed to the transport.
    Registered,
    /// Sent, waiting for its answer.
    InFlight,
    /// Settled.
    Settled {
        /// What it settled as.
        outcome: Outcome,
        /// An answer that came after it settled unconfirmed, if any.
        late: Option<LateAnswer>,
    },
}

/// A write that just settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The write.
    pub handle: WriteHandle,
    /// Its messageId.
    pub message_id: String,
    /// What it settled as.
    pub outcome: Outcome,
}

/// The outcome of a batch: only the set of its members' outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchOutcome {
    /// Every member was admitted.
    Admitted,
    /// At least one member was refused; these are the refused members.
    Refused(Vec<WriteHandle>),
    /// No member was refused but some were not admitted; these are they.
    Unconfirmed(Vec<WriteHandle>),
}

/// The bounds of a tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackerLimits {
    /// Writes registered and not yet settled, at most.
    pub max_in_flight: usize,
    /// Bytes of those writes' frames, at most.
    pub max_in_flight_bytes: usize,
    /// Settled writes whose state is kept (for `state`, batches and late answers), at most; the
    /// oldest is forgotten first and counted.
    pub max_settled_kept: usize,
    /// Bytes of those kept states, at most: their ids, schema ids and record keys, and the text,
    /// code and details' field of the refusals recorded on them (which the server writes, up to
    /// a frame each). Past it the oldest is forgotten first and counted, as for the count.
    pub max_settled_kept_bytes: usize,
    /// Settled writes waiting in [`WriteTracker::poll_settled`], at most; past it the oldest
    /// is dropped and counted (its state stays readable while it is kept). Never fewer than
    /// `max_in_flight + 1` are held, so what one event settles is never dropped before it can be
    /// read.
    pub max_settled_unread: usize,
    /// Bytes of the refusals (text, code, details' field) in those waiting writes, at most; past
    /// it the oldest is dropped and counted, the newest always kept.
    pub max_settled_unread_bytes: usize,
}

impl Default for TrackerLimits {
    fn default() -> Self {
        TrackerLimits {
            max_in_flight: 1024,
            max_in_flight_bytes: 16 << 20,
            max_settled_kept: 4096,
            max_settled_kept_bytes: 8 << 20,
            max_settled_unread: 4096,
            max_settled_unread_bytes: 8 << 20,
        }
    }
}

/// Counters of what the tracker saw and what its bounds dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrackerCounters {
    /// Answers naming an id that is neither in flight nor kept: they settled nothing.
    pub unmatched_answers: u64,
    /// Id-less errors that settled nothing because zero or several writes were unanswered.
    pub unattributed_errors: u64,
    /// write_admitted frames naming an in-flight id whose operation, schemaId or recordKey did
    /// not echo the write: they settled nothing.
    pub mismatched_receipts: u64,
    /// Writes a receipt-capable server let reach the window.
    pub windows_missed_by_receipt_server: u64,
    /// Settled writes forgotten to keep within `max_settled_kept`.
    pub settled_forgotten: u64,
    /// Settled writes dropped unread from `poll_settled`'s queue to keep within its bounds.
    pub settled_unread_dropped: u64,
    /// Late answers that found their write already forgotten.
    pub late_answers_dropped: u64,
    /// Hellos after the session's first: ignored (the first one selects the window).
    pub repeated_hellos: u64,
    /// Answers naming a write they can no longer change, and so ignored: a second answer to a
    /// write settled by an answer, an answer after a late one was recorded, an admission of a
    /// send-only write (never admission), a refusal of a send-only write the transport had
    /// acknowledged.
    pub answers_ignored: u64,
    /// Puts and deletes the server sent: never an answer, they settle nothing.
    pub echoed_writes: u64,
}

/// What the tracker has done and holds now (`WriteTracker::stats`): writes by outcome, late
/// answers recorded, what it holds in flight and kept, and its counters of what it ignored or
/// dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TrackerStats {
    /// Writes registered since the tracker was made.
    pub writes_registered: u64,
    /// Writes settled admitted.
    pub admitted: u64,
    /// Writes settled refused.
    pub refused: u64,
    /// Writes settled unconfirmed.
    pub unconfirmed: u64,
    /// Send-only writes settled sent (never admission).
    pub sent: u64,
    /// Late admissions recorded on writes already settled unconfirmed.
    pub admitted_late: u64,
    /// Late refusals recorded on writes already settled unconfirmed.
    pub refused_late: u64,
    /// Sessions started after the first.
    pub sessions_started: u64,
    /// Writes registered and not yet settled, now.
    pub in_flight: u64,
    /// Their bytes (what counts against `max_in_flight_bytes`), now.
    pub in_flight_bytes: u64,
    /// Settled writes kept for `state` and late answers, now (bounded by `max_settled_kept`).
    pub settled_kept: u64,
    /// Their bytes (what counts against `max_settled_kept_bytes`), now.
    pub settled_kept_bytes: u64,
    /// Settled writes waiting in `poll_settled`, now.
    pub settled_unread: u64,
    /// The bytes of the refusals in them (what counts against `max_settled_unread_bytes`), now.
    pub settled_unread_bytes: u64,
    /// What the tracker ignored or dropped.
    pub counters: TrackerCounters,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerKind {
    Unknown,
    Legacy,
    Receipts,
}

#[derive(Debug)]
struct Entry {
    message_id: String,
    session: u64,
    operation: Operation,
    schema_id: String,
    record_key: String,
    content_hash: [u8; 32],
    mode: WriteMode,
    bytes: usize,
    sent_at: Option<u64>,
    outcome: Option<Outcome>,
    late: Option<LateAnswer>,
    /// The server answered it (a frame named it, or an id-less refusal was pinned on it).
    answered: bool,
    /// Once settled, what keeping its state costs against `max_settled_kept_bytes`.
    kept_bytes: usize,
}

/// Tracks a client's writes on one connection at a time.
#[derive(Debug)]
pub struct WriteTracker {
    limits: TrackerLimits,
    nonce: u64,
    session: u64,
    session_ended: bool,
    server: ServerKind,
    /// Whether the client's sessions open with a receipt hello (W-10); without one every
    /// connection is legacy, whatever the server's hello lists.
    client_hello: bool,
    next_seq: u64,
    next_handle: u64,
    entries: BTreeMap<WriteHandle, Entry>,
    /// messageId -> handle, for every write of the current session still kept.
    by_id: BTreeMap<String, WriteHandle>,
    settled_order: VecDeque<WriteHandle>,
    /// Bytes of the kept settled writes (`Entry::kept_bytes` summed).
    settled_kept_bytes: usize,
    /// Bytes of the refusals in `settled` (the poll queue).
    unread_bytes: usize,
    unsettled: usize,
    unsettled_bytes: usize,
    settled: VecDeque<Settled>,
    counters: TrackerCounters,
    stats: TrackerStats,
}

impl WriteTracker {
    /// A tracker for a first session. `nonce` is a random value from the caller (the engine
    /// draws no randomness); it keeps the ids of different trackers apart.
    #[must_use]
    pub fn new(limits: TrackerLimits, nonce: u64) -> Self {
        WriteTracker {
            limits,
            nonce,
            session: 0,
            session_ended: false,
            server: ServerKind::Unknown,
            client_hello: true,
            next_seq: 0,
            next_handle: 0,
            entries: BTreeMap::new(),
            by_id: BTreeMap::new(),
            settled_order: VecDeque::new(),
            settled_kept_bytes: 0,
            unread_bytes: 0,
            unsettled: 0,
            unsettled_bytes: 0,
            settled: VecDeque::new(),
            counters: TrackerCounters::default(),
            stats: TrackerStats::default(),
        }
    }

    /// The client's sessions send no receipt hello (W-13): the server then answers every
    /// connection the old way (no receipt), so the tracker applies the legacy window whatever
    /// the server's hello lists, and a write the server leaves unanswered is never reported as a
    /// window a receipt server missed (W-40).
    #[must_use]
    pub fn without_receipt_hello(mut self) -> Self {
        self.client_hello = false;
        self
    }

    /// The window the tracker applies now: 5000 ms once the server's hello listed both receipt
    /// frames, 500 ms otherwise.
    #[must_use]
    pub fn result_window_ms(&self) -> u64 {
        if self.server == ServerKind::Receipts {
            RECEIPT_RESULT_WINDOW_MS
        } else {
            LEGACY_RESULT_WINDOW_MS
        }
    }

    /// The counters.
    #[must_use]
    pub fn counters(&self) -> TrackerCounters {
        self.counters
    }

    /// What the tracker has done and holds now.
    #[must_use]
    pub fn stats(&self) -> TrackerStats {
        let n = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
        TrackerStats {
            in_flight: n(self.unsettled),
            in_flight_bytes: n(self.unsettled_bytes),
            settled_kept: n(self.settled_order.len()),
            settled_kept_bytes: n(self.settled_kept_bytes),
            settled_unread: n(self.settled.len()),
            settled_unread_bytes: n(self.unread_bytes),
            counters: self.counters,
            ..self.stats
        }
    }

    /// Writes registered and not yet settled.
    #[must_use]
    pub fn unsettled(&self) -> usize {
        self.unsettled
    }

    fn mint_id(&mut self) -> String {
        let id = format!(
            "w{:016x}-{:x}-{:x}",
            self.nonce, self.session, self.next_seq
        );
        self.next_seq += 1;
        id
    }

    fn register(&mut self, entry: Entry) -> Result<WriteHandle, TrackerError> {
        if self.unsettled >= self.limits.max_in_flight {
            return Err(TrackerError::TooManyInFlight);
        }
        if self.unsettled_bytes + entry.bytes > self.limits.max_in_flight_bytes {
            return Err(TrackerError::TooManyBytesInFlight);
        }
        let handle = WriteHandle(self.next_handle);
        self.next_handle += 1;
        self.unsettled += 1;
        self.unsettled_bytes += entry.bytes;
        self.stats.writes_registered += 1;
        self.by_id.insert(entry.message_id.clone(), handle);
        self.entries.insert(handle, entry);
        Ok(handle)
    }

    fn entry(
        &self,
        message_id: String,
        operation: Operation,
        schema_id: &str,
        record_key: &str,
    ) -> Entry {
        Entry {
            message_id,
            session: self.session,
            operation,
            schema_id: schema_id.to_owned(),
            record_key: record_key.to_owned(),
            content_hash: [0; 32],
            mode: WriteMode::Receipt,
            bytes: 0,
            sent_at: None,
            outcome: None,
            late: None,
            answered: false,
            kept_bytes: 0,
        }
    }

    /// Registers a put of `document` under a freshly minted messageId and returns its handle
    /// and the frame to send.
    pub fn put(
        &mut self,
        document: Document,
        mode: WriteMode,
    ) -> Result<(WriteHandle, Frame), TrackerError> {
        let message_id = self.mint_id();
        let frame = DocumentPut {
            message_id: message_id.clone(),
            document,
        };
        let mut entry = self.entry(
            message_id,
            Operation::Put,
            &frame.document.schema_id,
            &frame.document.record_key,
        );
        entry.bytes = frame_bytes(&frame.message_id, &frame.document);
        entry.content_hash = put_hash(&frame);
        entry.mode = mode;
        let handle = self.register(entry)?;
        Ok((handle, Frame::DocumentPut(frame)))
    }

    /// Registers a delete under a freshly minted messageId and returns its handle and frame.
    pub fn delete(
        &mut self,
        schema_id: &str,
        record_key: &str,
        mode: WriteMode,
    ) -> Result<(WriteHandle, Frame), TrackerError> {
        let message_id = self.mint_id();
        let frame = DocumentDelete {
            message_id: message_id.clone(),
            schema_id: schema_id.to_owned(),
            record_key: record_key.to_owned(),
        };
        let mut entry = self.entry(message_id, Operation::Delete, schema_id, record_key);
        entry.bytes = frame.message_id.len() + schema_id.len() + record_key.len();
        entry.content_hash = delete_hash(&frame);
        entry.mode = mode;
        let handle = self.register(entry)?;
        Ok((handle, Frame::DocumentDelete(frame)))
    }

    /// Resends an unconfirmed put under its original messageId, on the session it was made in.
    /// The caller passes the document again; it must be the same content (the id is never
    /// reused for other content). Refused when the write was answered (in time or late: a write
    /// admitted late must not be resent), or belongs to an earlier session (across a reconnect
    /// a resend is a new write: use [`WriteTracker::put`], and only for a write that is
    /// idempotent by record key). The returned handle settles on its own.
    pub fn resend_put(
        &mut self,
        handle: WriteHandle,
        document: Document,
    ) -> Result<(WriteHandle, Frame), TrackerError> {
        let message_id = self.resendable(handle, Operation::Put)?;
        let frame = DocumentPut {
            message_id,
            document,
        };
        if put_hash(&frame) != self.entries[&handle].content_hash {
            return Err(TrackerError::ContentChanged);
        }
        let mut entry = self.entry(
            frame.message_id.clone(),
            Operation::Put,
            &frame.document.schema_id,
            &frame.document.record_key,
        );
        entry.bytes = frame_bytes(&frame.message_id, &frame.document);
        entry.content_hash = put_hash(&frame);
        entry.mode = self.entries[&handle].mode;
        let h = self.register(entry)?;
        Ok((h, Frame::DocumentPut(frame)))
    }

    /// Resends an unconfirmed delete under its original messageId, on the same terms as
    /// [`WriteTracker::resend_put`].
    pub fn resend_delete(
        &mut self,
        handle: WriteHandle,
    ) -> Result<(WriteHandle, Frame), TrackerError> {
        let message_id = self.resendable(handle, Operation::Delete)?;
        let old = &self.entries[&handle];
        let frame = DocumentDelete {
            message_id: message_id.clone(),
            schema_id: old.schema_id.clone(),
            record_key: old.record_key.clone(),
        };
        let mut entry = self.entry(
            message_id,
            Operation::Delete,
            &frame.schema_id,
            &frame.record_key,
        );
        entry.bytes = old.bytes;
        entry.content_hash = old.content_hash;
        entry.mode = old.mode;
        let h = self.register(entry)?;
        Ok((h, Frame::DocumentDelete(frame)))
    }

    fn resendable(&self, handle: WriteHandle, op: Operation) -> Result<String, TrackerError> {
        let e = self
            .entries
            .get(&handle)
            .ok_or(TrackerError::UnknownWrite)?;
        if e.operation != op {
            return Err(TrackerError::ContentChanged);
        }
        if e.session != self.session || self.session_ended {
            return Err(TrackerError::OtherSession);
        }
        if self.server != ServerKind::Receipts {
            return Err(TrackerError::NotReceiptServer);
        }
        if !matches!(e.outcome, Some(Outcome::Unconfirmed { .. })) || e.late.is_some() {
            return Err(TrackerError::NotResendable);
        }
        // Only the newest attempt under an id may be resent.
        if self.by_id.get(&e.message_id) != Some(&handle) {
            return Err(TrackerError::NotResendable);
        }
        Ok(e.message_id.clone())
    }

    /// The messageId of a write.
    #[must_use]
    pub fn message_id(&self, handle: WriteHandle) -> Option<&str> {
        self.entries.get(&handle).map(|e| e.message_id.as_str())
    }

    /// The operation, schemaId and recordKey of a write.
    #[must_use]
    pub fn target(&self, handle: WriteHandle) -> Option<(Operation, &str, &str)> {
        self.entries
            .get(&handle)
            .map(|e| (e.operation, e.schema_id.as_str(), e.record_key.as_str()))
    }

    /// The content hash of a write (W-20).
    #[must_use]
    pub fn content_hash(&self, handle: WriteHandle) -> Option<[u8; 32]> {
        self.entries.get(&handle).map(|e| e.content_hash)
    }

    /// Where a write stands; `None` once the tracker forgot it (or never knew it).
    #[must_use]
    pub fn state(&self, handle: WriteHandle) -> Option<WriteState> {
        let e = self.entries.get(&handle)?;
        Some(match (&e.outcome, e.sent_at) {
            (Some(o), _) => WriteState::Settled {
                outcome: o.clone(),
                late: e.late.clone(),
            },
            (None, Some(_)) => WriteState::InFlight,
            (None, None) => WriteState::Registered,
        })
    }

    /// The write was handed to the transport at `now`; its window starts. A write registered
    /// after its session ended settles unconfirmed (session_ended) here.
    pub fn on_sent(&mut self, handle: WriteHandle, now: u64) -> Result<(), TrackerError> {
        self.expire(now);
        let ended = self.session_ended;
        let current = self.session;
        let e = self
            .entries
            .get_mut(&handle)
            .ok_or(TrackerError::UnknownWrite)?;
        if e.outcome.is_some() || e.sent_at.is_some() {
            return Err(TrackerError::AlreadySent);
        }
        e.sent_at = Some(now);
        if ended || e.session != current {
            self.settle(
                handle,
                Outcome::Unconfirmed {
                    reason: UnconfirmedReason::SessionEnded,
                    server_missed_window: false,
                },
            );
        }
        Ok(())
    }

    /// The client's own send of the write failed: unconfirmed (local_send_failed), never refused.
    pub fn on_send_failed(&mut self, handle: WriteHandle, now: u64) {
        self.expire(now);
        // `settle` settles once: a write already settled keeps its outcome.
        self.settle(
            handle,
            Outcome::Unconfirmed {
                reason: UnconfirmedReason::LocalSendFailed,
                server_missed_window: false,
            },
        );
    }

    /// The transport acknowledged delivery of the write. Settles a send-only write as `sent`;
    /// means nothing for a receipt write (an ack is not admission).
    pub fn on_transport_ack(&mut self, handle: WriteHandle, now: u64) {
        self.expire(now);
        let send_only = self
            .entries
            .get(&handle)
            .is_some_and(|e| e.mode == WriteMode::SendOnly && e.sent_at.is_some());
        if send_only {
            // Settled once: an ack after a refusal (or a second ack) changes nothing.
            self.settle(handle, Outcome::Sent);
        }
    }

    /// The peer's hello: the session's first selects the result window; a later one is
    /// ignored and counted, so a peer cannot shrink or stretch the window of writes in flight.
    ///
    /// This call reads no time: writes whose age already reached the window in force are not
    /// settled first. A hello that arrived at a clock reading goes through
    /// [`WriteTracker::on_frame`] (or follows [`WriteTracker::on_tick`] at that reading), so a
    /// receipt hello read past a write's legacy window cannot stretch it (W-39).
    pub fn on_hello(&mut self, hello: &Hello) {
        if self.server != ServerKind::Unknown {
            self.counters.repeated_hellos += 1;
            tracing::debug!("cultnet repeated hello from the server: ignored");
            return;
        }
        self.server = if self.client_hello && hello.is_receipt_capable() {
            ServerKind::Receipts
        } else {
            ServerKind::Legacy
        };
    }

    /// A frame from the server at `now`. Writes whose window has been reached settle
    /// unconfirmed first, so an answer at exactly the window is late.
    pub fn on_frame(&mut self, frame: &Frame, now: u64) {
        self.expire(now);
        match frame {
            Frame::Hello(h) => self.on_hello(h),
            Frame::WriteAdmitted(a) => self.on_admitted(a),
            Frame::ErrorV1(e) => {
                let refusal = Refusal {
                    code: e.code.clone(),
                    error: e.error.clone(),
                    details: e.details.clone(),
                    attributed_by_count: false,
                };
                match &e.message_id {
                    Some(id) => self.on_named_refusal(id, refusal),
                    None => self.on_anonymous_refusal(refusal, now),
                }
            }
            Frame::ErrorV0(e) => self.on_anonymous_refusal(
                Refusal {
                    code: e.code.clone(),
                    error: e.error.clone(),
                    details: e.details.clone(),
                    attributed_by_count: false,
                },
                now,
            ),
            // A put or delete echoed back (or any other frame) is never an answer: counted.
            Frame::DocumentPut(_) | Frame::DocumentDelete(_) => {
                self.counters.echoed_writes += 1;
                tracing::debug!("cultnet put or delete from the server: never an answer");
            }
        }
    }

    /// Advances time: writes whose age reached the window settle unconfirmed (window_elapsed).
    pub fn on_tick(&mut self, now: u64) {
        self.expire(now);
    }

    /// The session ended: every write not yet settled is unconfirmed (session_ended), and so is
    /// any write registered from now on when it is sent. Answers can no longer arrive for it.
    pub fn on_session_ended(&mut self, now: u64) {
        self.expire(now);
        self.session_ended = true;
        let open: Vec<WriteHandle> = self
            .entries
            .iter()
            .filter(|(_, e)| e.outcome.is_none() && e.sent_at.is_some())
            .map(|(h, _)| *h)
            .collect();
        for h in open {
            self.settle(
                h,
                Outcome::Unconfirmed {
                    reason: UnconfirmedReason::SessionEnded,
                    server_missed_window: false,
                },
            );
        }
    }

    /// A new session on a new connection: ids are minted afresh, the server's hello is awaited
    /// again, and nothing of the old session can be answered any more. Writes of the old session
    /// still unsent settle unconfirmed when sent.
    pub fn start_session(&mut self, now: u64) {
        if !self.session_ended {
            self.on_session_ended(now);
        }
        self.session += 1;
        self.stats.sessions_started += 1;
        self.session_ended = false;
        self.server = ServerKind::Unknown;
        self.by_id.clear();
    }

    /// The next settled write, oldest first.
    #[must_use]
    pub fn poll_settled(&mut self) -> Option<Settled> {
        let s = self.settled.pop_front()?;
        self.unread_bytes -= outcome_bytes(&s.outcome);
        Some(s)
    }

    /// The outcome of a batch of writes, once every member has settled (`None` before, or when a
    /// member is unknown, or when there is no member: no answer can admit an empty batch). A
    /// refusal anywhere makes the batch refused; otherwise any member not admitted makes it
    /// unconfirmed.
    #[must_use]
    pub fn batch_outcome(&self, members: &[WriteHandle]) -> Option<BatchOutcome> {
        if members.is_empty() {
            return None;
        }
        let mut refused = Vec::new();
        let mut not_admitted = Vec::new();
        for h in members {
            match &self.entries.get(h)?.outcome {
                None => return None,
                Some(Outcome::Admitted) => {}
                Some(Outcome::Refused(_)) => refused.push(*h),
                Some(_) => not_admitted.push(*h),
            }
        }
        Some(if !refused.is_empty() {
            BatchOutcome::Refused(refused)
        } else if !not_admitted.is_empty() {
            BatchOutcome::Unconfirmed(not_admitted)
        } else {
            BatchOutcome::Admitted
        })
    }

    /// Forgets a settled write (its handle no longer has a state).
    pub fn forget(&mut self, handle: WriteHandle) {
        if self
            .entries
            .get(&handle)
            .is_some_and(|e| e.outcome.is_some())
        {
            self.remove(handle);
            self.settled_order.retain(|h| *h != handle);
        }
    }

    fn remove(&mut self, handle: WriteHandle) {
        if let Some(e) = self.entries.remove(&handle) {
            self.settled_kept_bytes -= e.kept_bytes;
            if self.by_id.get(&e.message_id) == Some(&handle) {
                self.by_id.remove(&e.message_id);
            }
        }
    }

    fn expire(&mut self, now: u64) {
        let window = self.result_window_ms();
        let due: Vec<WriteHandle> = self
            .entries
            .iter()
            .filter(|(_, e)| {
                e.outcome.is_none() && e.sent_at.is_some_and(|t| now.saturating_sub(t) >= window)
            })
            .map(|(h, _)| *h)
            .collect();
        let missed = self.server == ServerKind::Receipts;
        for h in due {
            if missed {
                self.counters.windows_missed_by_receipt_server += 1;
                tracing::warn!(
                    handle = ?h,
                    window_ms = window,
                    "cultnet receipt server let a write reach its window: unconfirmed"
                );
            }
            self.settle(
                h,
                Outcome::Unconfirmed {
                    reason: UnconfirmedReason::WindowElapsed,
                    server_missed_window: missed,
                },
            );
        }
    }

    fn settle(&mut self, handle: WriteHandle, outcome: Outcome) {
        let Some(e) = self.entries.get_mut(&handle) else {
            return;
        };
        if e.outcome.is_some() {
            return;
        }
        tracing::debug!(handle = ?handle, message_id = %e.message_id, outcome = ?outcome, "cultnet write settled");
        match &outcome {
            Outcome::Admitted => self.stats.admitted += 1,
            Outcome::Refused(_) => self.stats.refused += 1,
            Outcome::Unconfirmed { .. } => self.stats.unconfirmed += 1,
            Outcome::Sent => self.stats.sent += 1,
        }
        e.kept_bytes =
            e.message_id.len() + e.schema_id.len() + e.record_key.len() + outcome_bytes(&outcome);
        self.settled_kept_bytes += e.kept_bytes;
        e.outcome = Some(outcome.clone());
        self.unsettled -= 1;
        self.unsettled_bytes -= e.bytes;
        self.unread_bytes += outcome_bytes(&outcome);
        self.settled.push_back(Settled {
            handle,
            message_id: e.message_id.clone(),
            outcome,
        });
        let max_unread = self
            .limits
            .max_settled_unread
            .max(self.limits.max_in_flight.saturating_add(1));
        while self.settled.len() > 1
            && (self.settled.len() > max_unread
                || self.unread_bytes > self.limits.max_settled_unread_bytes)
        {
            if let Some(old) = self.settled.pop_front() {
                self.unread_bytes -= outcome_bytes(&old.outcome);
                self.counters.settled_unread_dropped += 1;
            }
        }
        self.settled_order.push_back(handle);
        self.trim_settled();
    }

    /// Forgets the oldest settled writes until the kept ones are within both bounds.
    fn trim_settled(&mut self) {
        while self.settled_order.len() > self.limits.max_settled_kept
            || self.settled_kept_bytes > self.limits.max_settled_kept_bytes
        {
            let Some(old) = self.settled_order.pop_front() else {
                break;
            };
            self.remove(old);
            self.counters.settled_forgotten += 1;
            tracing::debug!(handle = ?old, "cultnet settled write forgotten to stay within the bounds");
        }
    }

    /// The kept write of the current session named by `id` (exact byte equality).
    fn lookup(&self, id: &str) -> Option<WriteHandle> {
        let h = *self.by_id.get(id)?;
        let e = self.entries.get(&h)?;
        (e.session == self.session && e.message_id == id && e.sent_at.is_some()).then_some(h)
    }

    /// Whether `id` is one this tracker minted on the current session for a write it no longer
    /// keeps (forgotten to stay within `max_settled_kept`, or by the caller). Used only to
    /// count an answer that comes too late to be recorded; it settles nothing either way.
    fn minted_and_forgotten(&self, id: &str) -> bool {
        if self.by_id.contains_key(id) {
            return false;
        }
        let prefix = format!("w{:016x}-{:x}-", self.nonce, self.session);
        id.strip_prefix(&prefix)
            .and_then(|seq| {
                u64::from_str_radix(seq, 16)
                    .ok()
                    .filter(|n| format!("{n:x}") == seq)
            })
            .is_some_and(|n| n < self.next_seq)
    }

    /// Counts an answer that named no write in flight.
    fn unmatched(&mut self, id: &str) {
        if self.minted_and_forgotten(id) {
            self.counters.late_answers_dropped += 1;
            tracing::debug!(message_id = %id, "cultnet answer to a forgotten write: dropped");
        } else {
            self.counters.unmatched_answers += 1;
        }
    }

    fn on_admitted(&mut self, a: &WriteAdmitted) {
        let Some(h) = self.lookup(&a.message_id) else {
            self.unmatched(&a.message_id);
            tracing::debug!(message_id = %a.message_id, "cultnet admission names no write in flight: ignored");
            return;
        };
        let e = &self.entries[&h];
        if e.operation != a.operation || e.schema_id != a.schema_id || e.record_key != a.record_key
        {
            self.counters.mismatched_receipts += 1;
            tracing::debug!(message_id = %a.message_id, "cultnet admission does not echo its write: ignored");
            return;
        }
        self.answer(h, Outcome::Admitted, LateAnswer::AdmittedLate);
    }

    fn on_named_refusal(&mut self, id: &str, refusal: Refusal) {
        let Some(h) = self.lookup(id) else {
            self.unmatched(id);
            tracing::debug!(message_id = %id, "cultnet refusal names no write in flight: ignored");
            return;
        };
        self.answer(
            h,
            Outcome::Refused(refusal.clone()),
            LateAnswer::RefusedLate(refusal),
        );
    }

    fn answer(&mut self, h: WriteHandle, outcome: Outcome, late: LateAnswer) {
        let e = self.entries.get_mut(&h).expect("looked up by the caller");
        e.answered = true;
        if e.mode == WriteMode::SendOnly {
            // A send-only write is settled by the transport's ack; an admission never counts.
            if matches!(outcome, Outcome::Refused(_)) && e.outcome.is_none() {
                self.settle(h, outcome);
            } else {
                self.ignored_answer(h);
            }
            return;
        }
        match &e.outcome {
            None => self.settle(h, outcome),
            Some(Outcome::Unconfirmed { .. }) => {
                let e = self.entries.get_mut(&h).expect("looked up above");
                if e.late.is_some() {
                    self.ignored_answer(h);
                } else {
                    let cost = match &late {
                        LateAnswer::AdmittedLate => {
                            self.stats.admitted_late += 1;
                            0
                        }
                        LateAnswer::RefusedLate(r) => {
                            self.stats.refused_late += 1;
                            refusal_bytes(r)
                        }
                    };
                    e.late = Some(late);
                    e.kept_bytes += cost;
                    self.settled_kept_bytes += cost;
                    self.trim_settled();
                }
            }
            // Settled once: a second answer changes nothing (counted).
            Some(_) => self.ignored_answer(h),
        }
    }

    /// Counts an answer that names a write it can no longer change.
    fn ignored_answer(&mut self, h: WriteHandle) {
        self.counters.answers_ignored += 1;
        tracing::debug!(handle = ?h, "cultnet answer to a write it can no longer change: ignored");
    }

    fn on_anonymous_refusal(&mut self, mut refusal: Refusal, now: u64) {
        let session = self.session;
        let window = self.result_window_ms();
        // Unanswered: sent on this session, named by no answer yet and within its window:
        // still open, or settled `sent` by the transport's ack (a send-only write, which a
        // refusal may still be about). Only an open write can be refused, and only when it is
        // the one unanswered write.
        let mut unanswered = self
            .entries
            .iter()
            .filter(|(_, e)| {
                e.session == session
                    && !e.answered
                    && e.sent_at.is_some_and(|t| now.saturating_sub(t) < window)
                    && matches!(e.outcome, None | Some(Outcome::Sent))
            })
            .map(|(h, e)| (*h, e.outcome.is_none()));
        match (unanswered.next(), unanswered.next()) {
            (Some((only, true)), None) => {
                refusal.attributed_by_count = true;
                if let Some(e) = self.entries.get_mut(&only) {
                    e.answered = true;
                }
                self.settle(only, Outcome::Refused(refusal));
            }
            _ => {
                self.counters.unattributed_errors += 1;
                tracing::debug!(
                    "cultnet error without an id and not one open write unanswered: settles nothing"
                );
            }
        }
    }
}

/// The bytes of an outcome's refusal, if it is one.
fn outcome_bytes(o: &Outcome) -> usize {
    match o {
        Outcome::Refused(r) => refusal_bytes(r),
        _ => 0,
    }
}

/// The bytes of a refusal's parts the server chose: its text, code and details' field.
fn refusal_bytes(r: &Refusal) -> usize {
    r.error.len()
        + r.code.as_ref().map_or(0, |c| c.as_str().len())
        + r.details
            .as_ref()
            .and_then(|d| d.field.as_ref())
            .map_or(0, String::len)
}

fn frame_bytes(message_id: &str, d: &Document) -> usize {
    message_id.len()
        + d.schema_id.len()
        + d.record_key.len()
        + d.stored_at.len()
        + d.payload.as_bytes().len()
        + d.source_runtime_id.as_ref().map_or(0, String::len)
        + d.source_agent_id.as_ref().map_or(0, String::len)
        + d.source_role.as_ref().map_or(0, String::len)
        + d.tags
            .as_ref()
            .map_or(0, |t| t.iter().map(String::len).sum::<usize>())
}
