//! Emitter consumers (EC-1 to EC-6): opening a TO CLIENT emitter, reading its output batches
//! without holding up anything else on the session, settling each delivery attempt by explicit
//! decision, and keeping the consumer across sessions while its endpoint stays the same.
//!
//! A consumer is known to the application by a [`ConsumerId`]; each attachment lives on one
//! session and is named on the wire by the request identity of its open (EC-1). Deliveries
//! come from [`Client::poll_consumer_event`] after [`Client::read_delivery`] asks for one. A
//! read is a request of its own with no deadline: other requests and frames go on around it
//! (EC-2), and a read whose caller stopped waiting stays out, its delivery queued for the next
//! caller rather than sent for again. Each delivery's Arrow IPC stream is decoded into a
//! [`RecordBatch`] checked against the consumer's fields and its members (EC-3); a stream that
//! is not is a protocol violation.
//!
//! A delivery is settled only through the attachment that delivered it, once, with
//! [`Decision::Ack`], [`Decision::Retry`] or [`Decision::Reject`] (EC-4). A settlement whose
//! answer is lost is [`SettleResult::Uncertain`]: the decision may have been applied. Closing
//! the consumer, losing its session, or the end of its attachment revokes every unsettled
//! reference (EC-6): a revoked reference is refused locally and never sent to a replacement.
//!
//! # What a consumer does not promise
//!
//! Reading, decoding or dropping a delivery does not acknowledge it. A retry or a timeout
//! delivers the same identity and bytes again under a new reference (EC-5): effects must be
//! keyed by [`Delivery::identity`]. There is no durable cursor.

use super::events::{EventQueue, Lifecycle, LifecycleEvent};
use super::tracked::{Track, Tracked};
use super::{Client, ClientError, Purpose, SessionId};
use crate::arrow;
use crate::exchange::Interruption;
use crate::frame::ServerFrame;
use crate::rows::{FieldSpec, FieldType, ScalarType};
use crate::schema::*;
use crate::time::Timestamp;
use crate::violation::ProtocolViolation;
use arrow_array::{Array, BinaryArray, RecordBatch, StringArray};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// The most bytes a rejection's reason may hold (EC-4).
pub const MAX_REASON_BYTES: usize = 1024;

/// A consumer the application opened; it names the consumer across attachments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConsumerId(pub u64);

/// A settlement the application asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SettleHandle(pub u64);

/// What the application asks for when it opens a consumer (EC-1).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConsumerSpec {
    /// The domain.
    pub domain: String,
    /// The TO CLIENT emitter.
    pub emitter: String,
    /// The exact ordered output fields, with nullability and sensitivity.
    pub fields: Vec<FieldSpec>,
    /// Credit in batches: 1 to 1,024.
    pub max_outstanding_batches: u32,
    /// Credit in bytes: 1 to 32 MiB, and at least one largest delivery.
    pub max_outstanding_bytes: u64,
}

impl ConsumerSpec {
    /// A consumer of `emitter` in `domain` with `fields`, asking for 16 batches and 8 MiB.
    pub fn new(domain: &str, emitter: &str, fields: Vec<FieldSpec>) -> Self {
        Self {
            domain: domain.to_string(),
            emitter: emitter.to_string(),
            fields,
            max_outstanding_batches: 16,
            max_outstanding_bytes: 8 << 20,
        }
    }

    /// The same, with these limits.
    pub fn with_limits(mut self, batches: u32, bytes: u64) -> Self {
        self.max_outstanding_batches = batches;
        self.max_outstanding_bytes = bytes;
        self
    }
}

/// The consumer window of the emitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConsumerWindowKind {
    /// One delivery at a time.
    Sequential,
    /// Up to this many deliveries unsettled at once.
    Parallel(u64),
}

/// A consumer's attachment as the server described it in `EmitterOpened`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConsumerDescription {
    /// The domain.
    pub domain: String,
    /// The emitter.
    pub emitter: String,
    /// The output fields.
    pub fields: Arc<[FieldSpec]>,
    /// STARTs committed when the consumer attached.
    pub generation: u64,
    /// The endpoint contract's fingerprint.
    pub contract: Vec<u8>,
    /// The window.
    pub window: ConsumerWindowKind,
    /// The emitter's ACK TIMEOUT.
    pub ack_timeout: Duration,
    /// The first redelivery delay.
    pub retry_backoff: Duration,
    /// The largest redelivery delay.
    pub retry_max_backoff: Duration,
    /// Granted credit in batches.
    pub granted_batches: u32,
    /// Granted credit in bytes.
    pub granted_bytes: u64,
    /// The largest delivery in bytes.
    pub max_batch_bytes: u64,
    /// The most rows in one delivery.
    pub max_batch_rows: u32,
}

impl ConsumerDescription {
    fn from_view(o: EmitterOpened<'_>) -> Result<Self, ProtocolViolation> {
        let fields = o
            .fields()
            .iter()
            .map(FieldSpec::from_view)
            .collect::<Result<Vec<_>, _>>()?;
        let window = match o.window_as_parallel_consumer_window() {
            Some(p) => ConsumerWindowKind::Parallel(p.max()),
            None => ConsumerWindowKind::Sequential,
        };
        Ok(Self {
            domain: o.domain().to_string(),
            emitter: o.emitter().to_string(),
            fields: fields.into(),
            generation: o.generation(),
            contract: o.contract().bytes().bytes().to_vec(),
            window,
            ack_timeout: Duration::from_nanos(o.ack_timeout_nanos()),
            retry_backoff: Duration::from_nanos(o.retry_backoff_nanos()),
            retry_max_backoff: Duration::from_nanos(o.retry_max_backoff_nanos()),
            granted_batches: o.granted_batches(),
            granted_bytes: o.granted_bytes(),
            max_batch_bytes: o.max_batch_bytes(),
            max_batch_rows: o.max_batch_rows(),
        })
    }

    /// Whether a new attachment may stand for this one (EC-5): the same START generation,
    /// endpoint contract, fields, window, timeouts, grant and batch limits.
    pub fn restorable_by(&self, new: &ConsumerDescription) -> bool {
        self == new
    }

    /// How many deliveries may be unsettled at once.
    pub fn window_size(&self) -> u64 {
        match self.window {
            ConsumerWindowKind::Sequential => 1,
            ConsumerWindowKind::Parallel(n) => n.max(1),
        }
    }
}

/// Names one delivery attempt: its reference, through the consumer and attachment that
/// delivered it (EC-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeliveryRef {
    /// The consumer.
    pub consumer: ConsumerId,
    /// The attachment that delivered it (a count of the consumer's attachments). A new
    /// attachment opens only after an interruption, so a delivery naming a later attachment
    /// than the one before it tells an application that reads deliveries alone that the
    /// consumer was interrupted in between, before it processes the batch (EC-5); the
    /// [`ConsumerEvent::Interrupted`] that precedes it says the same to whoever reads events.
    pub attachment: u64,
    /// The attempt's reference.
    pub reference: [u8; 16],
}

/// One delivered output batch (EC-3).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Delivery {
    /// The same for every attempt of this delivery: key effects by it (EC-5).
    pub identity: [u8; 16],
    /// This attempt, to settle it with.
    pub reference: DeliveryRef,
    /// The relay the batch came from (metadata, not a field).
    pub source_relay: String,
    /// The opaque branch fingerprint of branched output (metadata, not a field).
    pub branch_fingerprint: Option<[u8; 32]>,
    /// The batch, checked against the consumer's fields.
    pub batch: RecordBatch,
    /// The batch's rows.
    pub members: u32,
    /// The execution's time when it was emitted, signed Unix nanoseconds.
    pub execution_now_unix_nanos: i64,
}

/// How a delivery is settled (EC-4).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Processed.
    Ack,
    /// Deliver it again later.
    Retry,
    /// Never deliver it again; the reason is non-empty, at most 1,024 bytes, and holds no
    /// sensitive value.
    Reject(String),
}

/// How a settlement ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SettleResult {
    /// The server applied it. Only this confirms an ACK (EC-4).
    Confirmed,
    /// The reference is not the delivery's current attempt.
    StaleReference {
        /// The server's words.
        message: String,
    },
    /// The reference belongs to another consumer.
    WrongConsumer {
        /// The server's words.
        message: String,
    },
    /// The reason was refused.
    InvalidReason {
        /// The server's words.
        message: String,
    },
    /// The attachment ended.
    ConsumerEnded {
        /// The server's words.
        message: String,
    },
    /// The request was rejected before it was read; nothing was applied.
    Rejected {
        /// The server's words.
        message: String,
    },
    /// The answer was lost with its session, or said nothing of the decision (a reply with no
    /// disposition): the decision may or may not have been applied (EC-6).
    Uncertain,
}

/// Why a settlement was refused locally. Nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SettleError {
    /// No such consumer.
    #[error("no such consumer")]
    UnknownConsumer,
    /// The reference was revoked (close, session loss, the attachment's end), or belongs to
    /// another attachment than the current one (EC-6).
    #[error("the delivery's reference was revoked")]
    Revoked,
    /// The reference was already settled, or its settlement is out.
    #[error("the delivery was already settled")]
    AlreadySettled,
    /// The rejection's reason breaks EC-4.
    #[error("the rejection's reason {0}")]
    Reason(&'static str),
}

/// Why a consumer needs an explicit new open (EC-5).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConsumerReopenReason {
    /// The new attachment's generation, contract, fields, window, timeouts, grant or limits
    /// differ; it was closed again.
    Changed(Box<ConsumerDescription>),
    /// The new open was refused for a reason no wait cures.
    Refused {
        /// Why.
        refusal: Option<EmitterOpenRefusal>,
        /// The server's words.
        message: String,
    },
    /// The granted bytes do not hold one largest delivery (EC-1); it was closed again.
    CreditTooSmall(Box<ConsumerDescription>),
    /// A read was rejected for a defect in the request (C-8: `InvalidRequest`,
    /// `UnsupportedRequest`, `UnsupportedValue`, `DuplicateRequestId`, `ReplyTooLarge`, or no
    /// reason). The read of this attachment cannot change, so it is never sent again; the
    /// attachment was closed.
    ReadRejected {
        /// Why, when the server said.
        rejection: Option<RequestRejection>,
        /// The server's words.
        message: String,
    },
}

/// Something the application learns about one consumer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConsumerEvent {
    /// The first open was answered (EC-1).
    Opened(Arc<ConsumerDescription>),
    /// The first open was refused.
    Refused {
        /// Why, when the server gave an open refusal.
        refusal: Option<EmitterOpenRefusal>,
        /// The server's words.
        message: String,
    },
    /// A delivery (EC-3).
    Delivery(Box<Delivery>),
    /// A settlement ended (EC-4).
    Settled {
        /// The settlement.
        handle: SettleHandle,
        /// The attempt it settled.
        reference: DeliveryRef,
        /// How.
        result: SettleResult,
    },
    /// The attachment is gone (session lost, or the read said it ended): unsettled references
    /// are revoked, and a fresh open follows (EC-5, EC-6). While one is unread, a later one
    /// folds into it, with the `Restored` and `RestoreRefused` that came between (deliveries
    /// and other events stay); see
    /// [`ClientStats::lifecycle_events_folded`](super::ClientStats).
    Interrupted,
    /// A new attachment matching the original is open (EC-5).
    Restored(Arc<ConsumerDescription>),
    /// A new open was refused for now; it goes again after a growing wait.
    RestoreRefused {
        /// Why.
        refusal: Option<EmitterOpenRefusal>,
        /// The server's words.
        message: String,
    },
    /// The consumer cannot be restored; nothing follows.
    ReopenRequired(ConsumerReopenReason),
    /// The consumer closed; nothing follows (EC-6).
    Closed,
}

impl LifecycleEvent for ConsumerEvent {
    fn lifecycle(&self) -> Option<Lifecycle> {
        match self {
            Self::Interrupted => Some(Lifecycle::Interrupted),
            Self::Restored(_) => Some(Lifecycle::Restored),
            Self::RestoreRefused { .. } => Some(Lifecycle::RestoreRefused),
            _ => None,
        }
    }
}

/// Where a consumer stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConsumerState {
    /// The first open is out, or waits for a session.
    Opening,
    /// Attached.
    Open,
    /// The close is out.
    Closing,
    /// Closed.
    Closed,
    /// The attachment is gone; a fresh open follows.
    Interrupted,
    /// A fresh open is out.
    Restoring,
    /// The application must open a new consumer.
    ReopenRequired,
    /// The first open was refused.
    Refused,
}

impl ConsumerState {
    /// Whether nothing more happens to the consumer.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Closed | Self::ReopenRequired | Self::Refused)
    }
}

/// A consumer as [`Client::consumer`] reports it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConsumerInfo {
    /// Where it stands.
    pub state: ConsumerState,
    /// The original attachment's description, once opened.
    pub description: Option<Arc<ConsumerDescription>>,
    /// Deliveries of the current attachment not yet settled.
    pub unsettled: usize,
    /// Whether a read is out.
    pub reading: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Waiting,
    Backoff(Timestamp),
    Opening(SessionId),
    Open(SessionId),
    Closing(SessionId),
    Done(ConsumerState),
}

#[derive(Debug)]
struct Unsettled {
    settling: Option<SettleHandle>,
    /// Values of sensitive fields a rejection's reason must not hold.
    sensitive: Vec<String>,
}

#[derive(Debug)]
struct Settle {
    reference: DeliveryRef,
    decision: Decision,
    session: Option<SessionId>,
    seq: u64,
}

impl Track for Entry {
    /// Waiting to be opened or backing off, a refusal's wait running, or open with a
    /// settlement to send, a close asked for, or a read wanted and none out.
    fn pending(&self) -> bool {
        matches!(self.phase, Phase::Waiting | Phase::Backoff(_))
            || self.read_at.is_some()
            || matches!(self.phase, Phase::Open(_))
                && (!self.settles.is_empty() || self.close || self.want && self.reading.is_none())
    }
}

#[derive(Debug)]
struct Entry {
    seq: u64,
    spec: ConsumerSpec,
    phase: Phase,
    desc: Option<Arc<ConsumerDescription>>,
    wire: Option<u64>,
    /// Attachments so far; names the current one in [`DeliveryRef::attachment`].
    attachment: u64,
    close: bool,
    refusals: u32,
    /// The application asked for a delivery it has not been given yet.
    want: bool,
    reading: Option<SessionId>,
    read_seq: u64,
    /// Reads refused in a row as `ServerBusy` (the exponent of the wait before the next).
    busy: u32,
    /// After a `ServerBusy` refusal, the next read waits until then (C-8).
    read_at: Option<Timestamp>,
    unsettled: BTreeMap<[u8; 16], Unsettled>,
    settles: BTreeMap<SettleHandle, Settle>,
}

impl Entry {
    fn state(&self) -> ConsumerState {
        match self.phase {
            Phase::Done(s) => s,
            Phase::Closing(_) => ConsumerState::Closing,
            _ if self.close => ConsumerState::Closing,
            Phase::Waiting | Phase::Backoff(_) if self.desc.is_some() => ConsumerState::Interrupted,
            Phase::Waiting | Phase::Backoff(_) => ConsumerState::Opening,
            Phase::Opening(_) if self.desc.is_some() => ConsumerState::Restoring,
            Phase::Opening(_) => ConsumerState::Opening,
            Phase::Open(_) => ConsumerState::Open,
        }
    }

    fn session(&self) -> Option<SessionId> {
        match self.phase {
            Phase::Opening(s) | Phase::Open(s) | Phase::Closing(s) => Some(s),
            _ => None,
        }
    }
}

/// The consumers of the client.
#[derive(Debug, Default)]
pub(crate) struct Consumers {
    entries: Tracked<ConsumerId, Entry>,
    events: EventQueue<ConsumerId, ConsumerEvent>,
    next_id: u64,
    next_settle: u64,
    /// Attachments to close whose replies nobody reads (EC-6), by session.
    releases: Vec<(SessionId, u64)>,
    /// Finished consumers, oldest first: their entries stay for [`Client::consumer`] until
    /// [`super::producers::FINISHED_KEPT`] newer ones finished.
    finished: VecDeque<ConsumerId>,
}

fn open_request(spec: &ConsumerSpec) -> ClientRequestT {
    ClientRequestT::OpenEmitterRequest(Box::new(OpenEmitterRequestT {
        domain: spec.domain.clone(),
        emitter: spec.emitter.clone(),
        expected_fields: spec.fields.iter().map(FieldSpec::to_wire).collect(),
        max_outstanding_batches: spec.max_outstanding_batches,
        max_outstanding_bytes: spec.max_outstanding_bytes,
    }))
}

fn close_request(wire: u64) -> ClientRequestT {
    ClientRequestT::CloseEmitterRequest(Box::new(CloseEmitterRequestT { consumer: wire }))
}

fn read_request(wire: u64) -> ClientRequestT {
    ClientRequestT::ReadEmitterBatchRequest(Box::new(ReadEmitterBatchRequestT { consumer: wire }))
}

fn settle_request(wire: u64, reference: &[u8; 16], decision: &Decision) -> ClientRequestT {
    let (decision, reason) = match decision {
        Decision::Ack => (EmitterBatchDecision::Ack, String::new()),
        Decision::Retry => (EmitterBatchDecision::Retry, String::new()),
        Decision::Reject(r) => (EmitterBatchDecision::Reject, r.clone()),
    };
    ClientRequestT::SettleEmitterBatchRequest(Box::new(SettleEmitterBatchRequestT {
        consumer: wire,
        reference: reference.to_vec(),
        decision: Some(decision),
        reason,
    }))
}

fn temporary(refusal: Option<EmitterOpenRefusal>) -> bool {
    matches!(
        refusal,
        None | Some(
            EmitterOpenRefusal::EndpointUnavailable
                | EmitterOpenRefusal::TooManyConsumers
                | EmitterOpenRefusal::SessionCapacityExhausted
                | EmitterOpenRefusal::NodeCapacityExhausted
                | EmitterOpenRefusal::InTransaction
        )
    )
}

enum OpenReply {
    Opened(Box<ConsumerDescription>),
    /// Refused; `defect` when rejected for a defect in the request (C-8), which is never sent
    /// again unchanged, so a restoration requires a reopen instead of waiting.
    Refused {
        refusal: Option<EmitterOpenRefusal>,
        message: String,
        defect: bool,
    },
}

impl OpenReply {
    fn refused(refusal: Option<EmitterOpenRefusal>, message: String) -> Self {
        Self::Refused {
            refusal,
            message,
            defect: false,
        }
    }
}

fn reply_name(reply: &Reply<'_>) -> String {
    match reply.body_as_request_rejected() {
        Some(r) => r.message().to_string(),
        None => reply
            .body_type()
            .variant_name()
            .unwrap_or("an undeclared reply")
            .to_string(),
    }
}

fn read_open(frame: &ServerFrame) -> Result<OpenReply, ProtocolViolation> {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return Ok(OpenReply::refused(None, String::new()));
    };
    if let Some(o) = reply.body_as_open_emitter_outcome() {
        if let Some(p) = o.disposition_as_emitter_opened() {
            return Ok(OpenReply::Opened(Box::new(ConsumerDescription::from_view(
                p,
            )?)));
        }
        let refusal = o.disposition_as_emitter_refused().and_then(|r| r.refusal());
        return Ok(OpenReply::refused(refusal, o.message().to_string()));
    }
    Ok(OpenReply::Refused {
        refusal: None,
        message: reply_name(&reply),
        defect: reply
            .body_as_request_rejected()
            .is_some_and(|r| super::rejected_for_a_defect(&r)),
    })
}

fn read_settle(frame: &ServerFrame) -> SettleResult {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return SettleResult::Uncertain;
    };
    let Some(o) = reply.body_as_settle_emitter_batch_outcome() else {
        return SettleResult::Rejected {
            message: reply_name(&reply),
        };
    };
    let message = o.message().to_string();
    match o.disposition() {
        Some(EmitterSettlement::Confirmed) => SettleResult::Confirmed,
        Some(EmitterSettlement::StaleReference) => SettleResult::StaleReference { message },
        Some(EmitterSettlement::WrongConsumer) => SettleResult::WrongConsumer { message },
        Some(EmitterSettlement::InvalidReason) => SettleResult::InvalidReason { message },
        Some(EmitterSettlement::ConsumerEnded) => SettleResult::ConsumerEnded { message },
        // No disposition (the schema allows it), or one this client does not know: the reply
        // says nothing of the decision, which may or may not have been applied.
        _ => SettleResult::Uncertain,
    }
}

fn bytes16(
    v: flatbuffers::Vector<'_, u8>,
    site: &'static str,
) -> Result<[u8; 16], ProtocolViolation> {
    v.bytes().try_into().map_err(|_| {
        ProtocolViolation::field(
            crate::violation::Site::new("EmitterBatchReceived", site),
            crate::violation::Fault::Length {
                expected: 16,
                found: v.len(),
            },
        )
    })
}

/// The values of an integer (or DATETIME) column written out in decimal, as a reason would
/// name them.
fn decimal_values<T>(column: &dyn Array) -> impl Iterator<Item = String> + '_
where
    T: arrow_array::ArrowPrimitiveType,
    T::Native: ToString,
{
    column
        .as_any()
        .downcast_ref::<arrow_array::PrimitiveArray<T>>()
        .into_iter()
        .flat_map(|a| a.iter().flatten().map(|v| v.to_string()))
}

/// Values of the delivery's sensitive columns that a rejection's reason must not repeat: text,
/// bytes that are text, and integers and DATETIME nanoseconds written out in decimal (short
/// values are too common to tell apart from ordinary words).
fn sensitive_values(fields: &[FieldSpec], batch: &RecordBatch) -> Vec<String> {
    use arrow_array::types::*;
    let mut out = Vec::new();
    for (spec, column) in fields.iter().zip(batch.columns()) {
        if !spec.sensitive() {
            continue;
        }
        match spec.field_type() {
            FieldType::Scalar(ScalarType::String) => {
                if let Some(a) = column.as_any().downcast_ref::<StringArray>() {
                    out.extend(
                        a.iter()
                            .flatten()
                            .filter(|v| v.len() >= 4)
                            .map(String::from),
                    );
                }
            }
            FieldType::Scalar(ScalarType::Bytes) => {
                if let Some(a) = column.as_any().downcast_ref::<BinaryArray>() {
                    out.extend(
                        a.iter()
                            .flatten()
                            .filter(|v| v.len() >= 4)
                            .filter_map(|v| std::str::from_utf8(v).ok())
                            .map(String::from),
                    );
                }
            }
            FieldType::Scalar(scalar) => {
                let column: &dyn Array = column.as_ref();
                let numbers: Vec<String> = match scalar {
                    ScalarType::U8 => decimal_values::<UInt8Type>(column).collect(),
                    ScalarType::I8 => decimal_values::<Int8Type>(column).collect(),
                    ScalarType::U16 => decimal_values::<UInt16Type>(column).collect(),
                    ScalarType::I16 => decimal_values::<Int16Type>(column).collect(),
                    ScalarType::U32 => decimal_values::<UInt32Type>(column).collect(),
                    ScalarType::I32 => decimal_values::<Int32Type>(column).collect(),
                    ScalarType::U64 => decimal_values::<UInt64Type>(column).collect(),
                    ScalarType::I64 => decimal_values::<Int64Type>(column).collect(),
                    ScalarType::Datetime => {
                        decimal_values::<TimestampNanosecondType>(column).collect()
                    }
                    _ => Vec::new(),
                };
                out.extend(numbers.into_iter().filter(|v| v.len() >= 4));
            }
            _ => {}
        }
    }
    out
}

impl Consumers {
    /// Lifecycle events folded while unread (see the events module).
    pub(crate) fn folded_events(&self) -> u64 {
        self.events.folded()
    }

    fn push(&mut self, id: ConsumerId, event: ConsumerEvent) {
        self.events.push(id, event);
    }

    pub(crate) fn poll(&mut self, id: ConsumerId) -> Option<ConsumerEvent> {
        self.events.poll(id)
    }

    pub(crate) fn poll_any(&mut self) -> Option<(ConsumerId, ConsumerEvent)> {
        self.events.pop_front()
    }

    /// Revokes every unsettled reference of `id` (EC-6): settlements out are uncertain, those
    /// not yet sent are never sent.
    fn revoke(&mut self, id: ConsumerId) {
        let Some(e) = self.entries.touch(&id) else {
            return;
        };
        e.unsettled.clear();
        e.reading = None;
        let settles = std::mem::take(&mut e.settles);
        for (handle, s) in settles {
            let result = if s.session.is_some() {
                SettleResult::Uncertain
            } else {
                SettleResult::ConsumerEnded {
                    message: "revoked before it was sent".into(),
                }
            };
            self.push(
                id,
                ConsumerEvent::Settled {
                    handle,
                    reference: s.reference,
                    result,
                },
            );
        }
    }

    fn finish(&mut self, id: ConsumerId, state: ConsumerState, event: ConsumerEvent) {
        self.revoke(id);
        if let Some(e) = self.entries.touch(&id) {
            if !matches!(e.phase, Phase::Done(_)) {
                self.finished.push_back(id);
            }
            e.phase = Phase::Done(state);
            e.wire = None;
            e.want = false;
        }
        self.push(id, event);
        self.forget_finished();
    }

    /// Forgets the oldest finished consumers beyond [`super::producers::FINISHED_KEPT`] whose
    /// events were all read and that hold nothing unsettled; one with something left waits its
    /// turn again.
    fn forget_finished(&mut self) {
        let mut turns = self.finished.len();
        while self.finished.len() > super::producers::FINISHED_KEPT && turns > 0 {
            turns -= 1;
            let Some(id) = self.finished.pop_front() else {
                break;
            };
            let done = self.entries.get(&id).is_none_or(|e| {
                matches!(e.phase, Phase::Done(_)) && e.unsettled.is_empty() && e.settles.is_empty()
            });
            if done && !self.events.holds(id) {
                self.entries.remove(&id);
            } else {
                self.finished.push_back(id);
            }
        }
    }

    pub(crate) fn due(
        &self,
        now: Timestamp,
        session: SessionId,
        fresh_ok: bool,
        out: &mut Vec<(u64, Purpose)>,
    ) {
        for (s, wire) in &self.releases {
            if *s == session {
                out.push((0, Purpose::ConsumerRelease(*wire)));
            }
        }
        for (id, e) in self.entries.pending() {
            match e.phase {
                Phase::Waiting if fresh_ok || e.desc.is_some() => {
                    out.push((e.seq, Purpose::ConsumerOpen(*id)))
                }
                Phase::Backoff(t) if t <= now && (fresh_ok || e.desc.is_some()) => {
                    out.push((e.seq, Purpose::ConsumerOpen(*id)))
                }
                Phase::Open(s) if s == session => {
                    for (h, st) in &e.settles {
                        if st.session.is_none() {
                            out.push((st.seq, Purpose::ConsumerSettle(*id, *h)));
                        }
                    }
                    if e.close {
                        out.push((e.seq, Purpose::ConsumerClose(*id)));
                    } else if e.want && e.reading.is_none() && e.read_at.is_none_or(|t| t <= now) {
                        out.push((e.read_seq, Purpose::ConsumerRead(*id)));
                    }
                }
                _ => {}
            }
        }
    }

    pub(crate) fn due_opens(
        &self,
        now: Timestamp,
        session: SessionId,
        fresh_ok: bool,
        out: &mut Vec<(u64, Purpose)>,
    ) {
        let mut all = Vec::new();
        self.due(now, session, fresh_ok, &mut all);
        out.extend(
            all.into_iter()
                .filter(|(_, p)| matches!(p, Purpose::ConsumerOpen(_))),
        );
    }

    pub(crate) fn wants_session(&self) -> bool {
        self.entries
            .pending()
            .any(|(_, e)| matches!(e.phase, Phase::Waiting | Phase::Backoff(_)) && !e.close)
    }

    pub(crate) fn timers(&self) -> impl Iterator<Item = Timestamp> + '_ {
        self.entries.pending().filter_map(|(_, e)| match e.phase {
            Phase::Backoff(t) => Some(t),
            // Set only by a ServerBusy refusal, while the read is wanted and none is out,
            // and cleared once its time has passed.
            Phase::Open(_) => e.read_at,
            _ => None,
        })
    }

    pub(crate) fn settle_backoffs(&mut self, now: Timestamp) {
        self.entries.for_each_pending_mut(|_, e| {
            if matches!(e.phase, Phase::Backoff(t) if t <= now) {
                e.phase = Phase::Waiting;
            }
            if e.read_at.is_some_and(|t| t <= now) {
                e.read_at = None;
            }
        });
    }

    /// `session` ended: its attachments end, their references are revoked, and each consumer
    /// is interrupted until a fresh open (EC-5, EC-6).
    pub(crate) fn lost(&mut self, session: SessionId) {
        self.releases.retain(|(s, _)| *s != session);
        let ids: Vec<ConsumerId> = self.entries.keys().copied().collect();
        for id in ids {
            let Some(e) = self.entries.touch(&id) else {
                continue;
            };
            if e.session() != Some(session) {
                if matches!(e.phase, Phase::Backoff(_)) {
                    e.phase = Phase::Waiting;
                }
                continue;
            }
            if e.close || matches!(e.phase, Phase::Closing(_)) {
                self.finish(id, ConsumerState::Closed, ConsumerEvent::Closed);
                continue;
            }
            let was_open = matches!(e.phase, Phase::Open(_));
            e.phase = Phase::Waiting;
            e.wire = None;
            e.refusals = 0;
            e.busy = 0;
            e.read_at = None;
            self.revoke(id);
            if was_open {
                self.push(id, ConsumerEvent::Interrupted);
            }
        }
    }

    pub(crate) fn info(&self, id: ConsumerId) -> Option<ConsumerInfo> {
        self.entries.get(&id).map(|e| ConsumerInfo {
            state: e.state(),
            description: e.desc.clone(),
            unsettled: e.unsettled.len(),
            reading: e.reading.is_some(),
        })
    }
}

impl Client {
    /// Opens an emitter consumer (EC-1): an `OpenEmitterRequest` naming the domain, the
    /// emitter, the exact ordered fields and nonzero limits. Refused while a transaction is
    /// held. Its events come from [`Client::poll_consumer_event`].
    pub fn open_consumer(
        &mut self,
        now: Timestamp,
        spec: ConsumerSpec,
    ) -> Result<ConsumerId, ClientError> {
        self.check_name("domain", &spec.domain)?;
        self.check_name("emitter", &spec.emitter)?;
        self.outside_transaction()?;
        if spec.fields.is_empty() {
            return Err(ClientError::InvalidName {
                what: "fields",
                why: "a consumer has at least one field",
            });
        }
        if !(1..=super::MAX_CREDIT_BATCHES).contains(&spec.max_outstanding_batches)
            || !(1..=super::MAX_CREDIT_BYTES).contains(&spec.max_outstanding_bytes)
        {
            return Err(ClientError::InvalidCredit);
        }
        self.check_sendable(&open_request(&spec))?;
        let seq = self.seq();
        self.consumers.next_id += 1;
        let id = ConsumerId(self.consumers.next_id);
        self.consumers.entries.insert(
            id,
            Entry {
                seq,
                spec,
                phase: Phase::Waiting,
                desc: None,
                wire: None,
                attachment: 0,
                close: false,
                refusals: 0,
                want: false,
                reading: None,
                read_seq: 0,
                busy: 0,
                read_at: None,
                unsettled: BTreeMap::new(),
                settles: BTreeMap::new(),
            },
        );
        self.drive(now);
        Ok(id)
    }

    /// Asks for the consumer's next delivery (EC-2). At most one read is out per consumer: a
    /// read already out, whose caller may have stopped waiting, is kept and its delivery goes
    /// to this caller instead. The delivery arrives as [`ConsumerEvent::Delivery`].
    pub fn read_delivery(
        &mut self,
        now: Timestamp,
        consumer: ConsumerId,
    ) -> Result<(), ClientError> {
        let seq = self.seq();
        let e = self
            .consumers
            .entries
            .touch(&consumer)
            .ok_or(ClientError::UnknownHandle)?;
        if e.state().is_final() || e.close {
            return Err(ClientError::UnknownHandle);
        }
        if !e.want {
            e.want = true;
            e.read_seq = seq;
        }
        self.drive(now);
        Ok(())
    }

    /// Settles one delivery attempt (EC-4) through the attachment that delivered it. Refused
    /// locally for a revoked reference, one already settled, or a rejection whose reason is
    /// empty, longer than 1,024 bytes, or repeats a sensitive value of the delivery.
    pub fn settle_delivery(
        &mut self,
        now: Timestamp,
        reference: DeliveryRef,
        decision: Decision,
    ) -> Result<SettleHandle, SettleError> {
        let e = self
            .consumers
            .entries
            .touch(&reference.consumer)
            .ok_or(SettleError::UnknownConsumer)?;
        if reference.attachment != e.attachment || !matches!(e.phase, Phase::Open(_)) || e.close {
            return Err(SettleError::Revoked);
        }
        let Some(u) = e.unsettled.get_mut(&reference.reference) else {
            return Err(SettleError::Revoked);
        };
        if u.settling.is_some() {
            return Err(SettleError::AlreadySettled);
        }
        if let Decision::Reject(reason) = &decision {
            if reason.is_empty() {
                return Err(SettleError::Reason("is empty"));
            }
            if reason.len() > MAX_REASON_BYTES {
                return Err(SettleError::Reason("is longer than 1,024 bytes"));
            }
            if u.sensitive.iter().any(|v| reason.contains(v.as_str())) {
                return Err(SettleError::Reason("repeats a sensitive value"));
            }
        }
        self.consumers.next_settle += 1;
        let handle = SettleHandle(self.consumers.next_settle);
        u.settling = Some(handle);
        self.next_seq += 1;
        let seq = self.next_seq;
        if let Some(e) = self.consumers.entries.touch(&reference.consumer) {
            e.settles.insert(
                handle,
                Settle {
                    reference,
                    decision,
                    session: None,
                    seq,
                },
            );
        }
        self.drive(now);
        Ok(handle)
    }

    /// Closes a consumer (EC-6) with `CloseEmitterRequest`; unsettled references are revoked.
    /// One whose open or restoration is out is closed as soon as that open is answered (the
    /// close fences the late restoration).
    pub fn close_consumer(
        &mut self,
        now: Timestamp,
        consumer: ConsumerId,
    ) -> Result<(), ClientError> {
        let e = self
            .consumers
            .entries
            .touch(&consumer)
            .ok_or(ClientError::UnknownHandle)?;
        if e.close || e.state().is_final() {
            return Ok(());
        }
        e.close = true;
        e.want = false;
        let phase = e.phase;
        // Settlements not yet sent go before the close; the rest are revoked by it.
        if matches!(phase, Phase::Waiting | Phase::Backoff(_)) {
            self.consumers
                .finish(consumer, ConsumerState::Closed, ConsumerEvent::Closed);
        }
        self.drive(now);
        Ok(())
    }

    /// A consumer as it stands. A finished one stays known until 1,024 newer consumers finished
    /// after it and its events were all read; then it is forgotten (`None`), so a client that
    /// opens and closes consumers for ever holds a bounded number of them.
    pub fn consumer(&self, consumer: ConsumerId) -> Option<ConsumerInfo> {
        self.consumers.info(consumer)
    }

    /// The next event of one consumer.
    #[must_use]
    pub fn poll_consumer_event(&mut self, consumer: ConsumerId) -> Option<ConsumerEvent> {
        self.consumers.poll(consumer)
    }

    /// The next event of any consumer.
    #[must_use]
    pub fn poll_consumer_events(&mut self) -> Option<(ConsumerId, ConsumerEvent)> {
        self.consumers.poll_any()
    }

    pub(super) fn send_consumer(&mut self, now: Timestamp, p: Purpose) {
        let deadline = now + self.config.call_timeout;
        match p {
            Purpose::ConsumerOpen(id) => {
                let Some(e) = self.consumers.entries.get(&id) else {
                    return;
                };
                if !matches!(e.phase, Phase::Waiting | Phase::Backoff(_)) || e.close {
                    return;
                }
                let request = open_request(&e.spec);
                if let Ok((session, _)) = self.send(now, p, &request, deadline) {
                    if let Some(e) = self.consumers.entries.touch(&id) {
                        e.phase = Phase::Opening(session);
                    }
                }
            }
            Purpose::ConsumerRead(id) => {
                let Some(e) = self.consumers.entries.get(&id) else {
                    return;
                };
                let (Phase::Open(_), Some(wire), true, None) = (e.phase, e.wire, e.want, e.reading)
                else {
                    return;
                };
                if let Ok((session, _)) = self.send_undated(now, p, &read_request(wire)) {
                    if let Some(e) = self.consumers.entries.touch(&id) {
                        e.reading = Some(session);
                    }
                }
            }
            Purpose::ConsumerSettle(id, h) => {
                let Some(e) = self.consumers.entries.get(&id) else {
                    return;
                };
                let (Phase::Open(_), Some(wire)) = (e.phase, e.wire) else {
                    return;
                };
                let Some(st) = e.settles.get(&h).filter(|s| s.session.is_none()) else {
                    return;
                };
                let request = settle_request(wire, &st.reference.reference, &st.decision);
                if let Ok((session, _)) = self.send(now, p, &request, deadline) {
                    if let Some(st) = self
                        .consumers
                        .entries
                        .touch(&id)
                        .and_then(|e| e.settles.get_mut(&h))
                    {
                        st.session = Some(session);
                    }
                }
            }
            Purpose::ConsumerClose(id) => {
                let Some(e) = self.consumers.entries.get(&id) else {
                    return;
                };
                let (Phase::Open(_), Some(wire)) = (e.phase, e.wire) else {
                    return;
                };
                if let Ok((session, _)) = self.send(now, p, &close_request(wire), deadline) {
                    if let Some(e) = self.consumers.entries.touch(&id) {
                        e.phase = Phase::Closing(session);
                    }
                }
            }
            Purpose::ConsumerRelease(wire) => {
                if let Ok((session, _)) = self.send(now, p, &close_request(wire), deadline) {
                    self.consumers.releases.retain(|r| *r != (session, wire));
                }
            }
            _ => {}
        }
    }

    pub(super) fn on_consumer_reply(
        &mut self,
        now: Timestamp,
        session: SessionId,
        p: Purpose,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        match p {
            Purpose::ConsumerOpen(id) => self.on_consumer_open(now, session, id, frame),
            Purpose::ConsumerRead(id) => self.on_read(now, session, id, frame),
            Purpose::ConsumerSettle(id, h) => {
                let result = read_settle(frame);
                let Some(e) = self.consumers.entries.touch(&id) else {
                    return Ok(());
                };
                let Some(st) = e.settles.remove(&h) else {
                    return Ok(());
                };
                e.unsettled.remove(&st.reference.reference);
                self.consumers.push(
                    id,
                    ConsumerEvent::Settled {
                        handle: h,
                        reference: st.reference,
                        result,
                    },
                );
                Ok(())
            }
            Purpose::ConsumerClose(id) => {
                if self
                    .consumers
                    .entries
                    .get(&id)
                    .is_some_and(|e| e.phase == Phase::Closing(session))
                {
                    self.consumers
                        .finish(id, ConsumerState::Closed, ConsumerEvent::Closed);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn on_consumer_open(
        &mut self,
        now: Timestamp,
        session: SessionId,
        id: ConsumerId,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        let reply = read_open(frame)?;
        let wire = frame.view().body_as_reply().map_or(0, |r| r.request_id());
        let Some(e) = self.consumers.entries.touch(&id) else {
            return Ok(());
        };
        if e.phase != Phase::Opening(session) {
            return Ok(());
        }
        match reply {
            OpenReply::Opened(desc) => {
                if desc.domain != e.spec.domain || desc.emitter != e.spec.emitter {
                    // EC-1: the reply opens something this client did not ask for; it is not
                    // taken, and the session (with the attachment it holds) is ended (F-8).
                    return Err(ProtocolViolation::Endpoint {
                        rule: "EC-1",
                        what: format!(
                            "an open of emitter `{}` in `{}` was answered for `{}` in `{}`",
                            e.spec.emitter, e.spec.domain, desc.emitter, desc.domain
                        ),
                    });
                }
                if e.close {
                    // EC-6: the close fences the late open; its attachment is released.
                    self.consumers
                        .finish(id, ConsumerState::Closed, ConsumerEvent::Closed);
                    self.consumers.releases.push((session, wire));
                    return Ok(());
                }
                if desc.max_batch_bytes > desc.granted_bytes
                    || desc.max_batch_bytes > e.spec.max_outstanding_bytes
                {
                    // EC-1: the credit must hold one largest delivery.
                    self.consumers.finish(
                        id,
                        ConsumerState::ReopenRequired,
                        ConsumerEvent::ReopenRequired(ConsumerReopenReason::CreditTooSmall(desc)),
                    );
                    self.consumers.releases.push((session, wire));
                    return Ok(());
                }
                match e.desc.clone() {
                    None => {
                        let desc: Arc<ConsumerDescription> = Arc::from(desc);
                        e.desc = Some(desc.clone());
                        e.attachment += 1;
                        e.wire = Some(wire);
                        e.phase = Phase::Open(session);
                        e.refusals = 0;
                        self.consumers.push(id, ConsumerEvent::Opened(desc));
                    }
                    Some(old) if old.restorable_by(&desc) => {
                        e.attachment += 1;
                        e.wire = Some(wire);
                        e.phase = Phase::Open(session);
                        e.refusals = 0;
                        self.consumers
                            .push(id, ConsumerEvent::Restored(Arc::from(desc)));
                    }
                    Some(_) => {
                        self.consumers.finish(
                            id,
                            ConsumerState::ReopenRequired,
                            ConsumerEvent::ReopenRequired(ConsumerReopenReason::Changed(desc)),
                        );
                        self.consumers.releases.push((session, wire));
                    }
                }
            }
            OpenReply::Refused {
                refusal,
                message,
                defect,
            } => {
                if e.close {
                    self.consumers
                        .finish(id, ConsumerState::Closed, ConsumerEvent::Closed);
                } else if e.desc.is_none() {
                    self.consumers.finish(
                        id,
                        ConsumerState::Refused,
                        ConsumerEvent::Refused { refusal, message },
                    );
                } else if temporary(refusal) && !defect {
                    e.refusals = e.refusals.saturating_add(1);
                    let attempt = e.refusals - 1;
                    self.consumers
                        .push(id, ConsumerEvent::RestoreRefused { refusal, message });
                    let at = now + self.backoff(attempt);
                    if let Some(e) = self.consumers.entries.touch(&id) {
                        e.phase = Phase::Backoff(at);
                    }
                } else {
                    // Refused for good, or for a defect (C-8) the same open would meet again:
                    // the application opens a new consumer if it still wants one.
                    self.consumers.finish(
                        id,
                        ConsumerState::ReopenRequired,
                        ConsumerEvent::ReopenRequired(ConsumerReopenReason::Refused {
                            refusal,
                            message,
                        }),
                    );
                }
            }
        }
        Ok(())
    }

    fn on_read(
        &mut self,
        now: Timestamp,
        session: SessionId,
        id: ConsumerId,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        let Some(e) = self.consumers.entries.touch(&id) else {
            return Ok(());
        };
        if e.reading != Some(session) {
            return Ok(());
        }
        e.reading = None;
        let view = frame.view();
        let Some(reply) = view.body_as_reply() else {
            return Ok(());
        };
        let Some(o) = reply.body_as_read_emitter_batch_outcome() else {
            let rejection = reply.body_as_request_rejected().and_then(|r| r.rejection());
            if rejection == Some(RequestRejection::ServerBusy) {
                // C-8: the server has no room for the read now; it goes again after a wait
                // that grows with each refusal in a row.
                let attempt = e.busy;
                e.busy = e.busy.saturating_add(1);
                let at = now + self.backoff(attempt);
                if let Some(e) = self.consumers.entries.touch(&id) {
                    e.read_at = Some(at);
                }
                return Ok(());
            }
            if e.close || e.phase != Phase::Open(session) {
                // The close, or the attachment's own end, settles what follows.
                return Ok(());
            }
            // C-8: a defect in the request. A read of this attachment is always the same
            // request, so it is never sent again; the application learns why, and the
            // attachment is released.
            let wire = e.wire;
            let message = reply_name(&reply);
            self.consumers.finish(
                id,
                ConsumerState::ReopenRequired,
                ConsumerEvent::ReopenRequired(ConsumerReopenReason::ReadRejected {
                    rejection,
                    message,
                }),
            );
            if let Some(wire) = wire {
                self.consumers.releases.push((session, wire));
            }
            return Ok(());
        };
        e.busy = 0;
        if o.disposition_as_emitter_consumer_ended().is_some() {
            // EC-3: the attachment is gone; whether the endpoint moved or changed is checked
            // by a fresh open against the pinned description.
            if e.close || !matches!(e.phase, Phase::Open(_)) {
                return Ok(());
            }
            e.phase = Phase::Waiting;
            e.wire = None;
            self.consumers.revoke(id);
            self.consumers.push(id, ConsumerEvent::Interrupted);
            return Ok(());
        }
        let Some(b) = o.disposition_as_emitter_batch_received() else {
            return Ok(());
        };
        let identity = bytes16(b.identity(), "identity")?;
        let reference = bytes16(b.reference(), "reference")?;
        let branch_fingerprint = match b.branch_fingerprint() {
            None => None,
            Some(f) => Some(<[u8; 32]>::try_from(f.bytes()).map_err(|_| {
                ProtocolViolation::field(
                    crate::violation::Site::new("EmitterBatchReceived", "branch_fingerprint"),
                    crate::violation::Fault::Length {
                        expected: 32,
                        found: f.len(),
                    },
                )
            })?),
        };
        let Some(desc) = e.desc.clone() else {
            return Ok(());
        };
        let batch = arrow::decode(b.batch().bytes(), &desc.fields, b.members()).map_err(|f| {
            ProtocolViolation::Endpoint {
                rule: "EC-3",
                what: f.to_string(),
            }
        })?;
        // EC-4: every attempt has a reference of its own; one still unsettled (or whose
        // settlement is out) named again would make a settlement ambiguous.
        if e.unsettled.contains_key(&reference) {
            return Err(ProtocolViolation::Endpoint {
                rule: "EC-4",
                what: "a delivery names the reference of an attempt not yet settled".into(),
            });
        }
        let sensitive = sensitive_values(&desc.fields, &batch);
        e.unsettled.insert(
            reference,
            Unsettled {
                settling: None,
                sensitive,
            },
        );
        e.want = false;
        let delivery = Delivery {
            identity,
            reference: DeliveryRef {
                consumer: id,
                attachment: e.attachment,
                reference,
            },
            source_relay: b.source_relay().to_string(),
            branch_fingerprint,
            batch,
            members: b.members(),
            execution_now_unix_nanos: b.execution_now_unix_nanos(),
        };
        self.consumers
            .push(id, ConsumerEvent::Delivery(Box::new(delivery)));
        Ok(())
    }

    pub(super) fn on_consumer_interrupted(
        &mut self,
        p: &Purpose,
        cause: &Interruption,
        sent: bool,
    ) {
        let not_admitted = !sent
            || matches!(
                cause,
                Interruption::NotAdmitted | Interruption::IdentitiesExhausted
            );
        match *p {
            Purpose::ConsumerOpen(id) => {
                if let Some(e) = self.consumers.entries.touch(&id) {
                    if matches!(e.phase, Phase::Opening(_)) && not_admitted {
                        e.phase = Phase::Waiting;
                        if e.close {
                            // Closed while its open was out, and the open never arrived:
                            // nothing is attached, so the close is complete.
                            self.consumers
                                .finish(id, ConsumerState::Closed, ConsumerEvent::Closed);
                        }
                    }
                }
                if matches!(
                    cause,
                    Interruption::DeadlineExceeded | Interruption::Abandoned
                ) {
                    self.retire.get_or_insert(super::Retire::Wedged);
                }
            }
            Purpose::ConsumerRead(id) => {
                if let Some(e) = self.consumers.entries.touch(&id) {
                    e.reading = None;
                }
            }
            Purpose::ConsumerSettle(id, h) => {
                let Some(e) = self.consumers.entries.touch(&id) else {
                    return;
                };
                if not_admitted {
                    if let Some(st) = e.settles.get_mut(&h) {
                        st.session = None;
                    }
                    return;
                }
                // EC-6: a settlement whose answer is lost is uncertain.
                if let Some(st) = e.settles.remove(&h) {
                    e.unsettled.remove(&st.reference.reference);
                    self.consumers.push(
                        id,
                        ConsumerEvent::Settled {
                            handle: h,
                            reference: st.reference,
                            result: SettleResult::Uncertain,
                        },
                    );
                }
            }
            Purpose::ConsumerClose(id) => {
                if let Some(e) = self.consumers.entries.touch(&id) {
                    if matches!(e.phase, Phase::Closing(_)) && not_admitted {
                        if let Some(s) = e.session() {
                            e.phase = Phase::Open(s);
                        }
                    }
                }
                // A close left unanswered past its deadline: the session is not carrying
                // what it is given, so it is replaced, and its loss completes the close.
                if sent
                    && matches!(
                        cause,
                        Interruption::DeadlineExceeded | Interruption::Abandoned
                    )
                {
                    self.retire.get_or_insert(super::Retire::Wedged);
                }
            }
            _ => {}
        }
    }
}
