//! Producers (P-1 to P-8): opening one on a client ingestor, submitting Arrow IPC batches
//! within its credit, reading exactly one outcome per batch, and keeping the producer across
//! sessions while its endpoint stays the same.
//!
//! A producer is known to the application by a [`ProducerId`] that outlives its attachments;
//! each attachment lives on one session and is named on the wire by the request identity of its
//! open (P-2). A batch is known by a [`BatchId`]. What the application learns comes from
//! [`Client::poll_producer_event`] (one producer) or [`Client::poll_producer_events`] (all):
//! every batch ends with exactly one [`ProducerEvent::Outcome`], kept in the queue until it is
//! read, whether or not anyone is waiting for it (P-7); until then the batch holds its credit
//! (P-4), so outcomes nobody reads are bounded by the grant. Admission changes not yet read
//! are coalesced: a newer one replaces the older and is queued last (P-6).
//!
//! # The producer
//!
//! [`ProducerState`] follows the manual's producer machine: `Opening` until the open is
//! answered (`Refused` ends it); `Open` and `Suspended` as admission changes; `Closing` until
//! every outcome and then the close's reply have arrived (`Closed`); `Ended` after the server's
//! `ProducerEnded`; `Interrupted` when its session is lost; `Restoring` while a fresh open is
//! out on a new session, which becomes `Open` again only when the new attachment's START
//! generation, contract, fields, policy and grant equal the original description, and
//! `ReopenRequired` otherwise (P-8).
//!
//! # A batch
//!
//! [`BatchState`] follows the manual's batch machine: `AwaitingCredit` until it fits the
//! credit (P-4); `Sent` from the moment its frame is handed to the session until its outcome
//! is read, holding one granted batch and its IPC bytes of the granted bytes; `Retrying` after
//! `NotAdmitted` with `Suspended` or `Busy`, until the ingestor's back-off (which starts at
//! `retry_backoff` and doubles up to `retry_max_backoff`) has passed and admission is open
//! (P-5); then the final outcome, or [`BatchOutcome::Unknown`] when its session was lost
//! before its outcome arrived. A batch of unknown outcome is never sent again (P-8), and no
//! `CancelRequest` is ever sent for a batch (P-7).
//!
//! # What a producer does not promise
//!
//! A submitted batch is not delivered exactly once; a batch whose outcome is unknown or failed
//! may have had effects. A producer does not survive its session: a new attachment is opened,
//! and batches that were out are reported unknown, never replayed.

use super::events::{EventQueue, Lifecycle, LifecycleEvent};
use super::tracked::{Track, Tracked};
use super::{Client, Purpose, SessionId};
use crate::arrow::{self, BatchBuilder, BatchError, ColumnProblem};
use crate::encode::SubmitFrame;
use crate::exchange::Interruption;
use crate::frame::ServerFrame;
use crate::limits::{FRAME_LIMIT, MAX_VECTOR_ENTRIES};
use crate::rows::FieldSpec;
use crate::schema::*;
use crate::time::Timestamp;
use crate::violation::ProtocolViolation;
use arrow_array::RecordBatch;
use bytes::{BufMut, Bytes, BytesMut};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// The most credit one producer may ask for, in batches (P-1).
pub const MAX_CREDIT_BATCHES: u32 = 1024;
/// The most credit one producer may ask for, in IPC bytes (P-1).
pub const MAX_CREDIT_BYTES: u64 = 32 * 1024 * 1024;
/// Room a `SubmitBatchRequest` frame needs beside its batch; a batch larger than the frame
/// limit less this never travels (F-6).
pub const SUBMIT_OVERHEAD: usize = 1024;

/// A producer the application opened; it names the producer across sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProducerId(pub u64);

/// A batch the application submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BatchId(pub u64);

/// What the application asks for when it opens a producer (P-1).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProducerSpec {
    /// The domain.
    pub domain: String,
    /// The client ingestor.
    pub ingestor: String,
    /// The exact fields of every batch, in order, with nullability and sensitivity.
    pub fields: Vec<FieldSpec>,
    /// Credit asked for, in batches: 1 to 1,024.
    pub max_outstanding_batches: u32,
    /// Credit asked for, in IPC bytes: 1 to 32 MiB.
    pub max_outstanding_bytes: u64,
}

impl ProducerSpec {
    /// A producer of `ingestor` in `domain` for batches of `fields`, asking for 16 batches and
    /// 8 MiB of credit.
    pub fn new(domain: &str, ingestor: &str, fields: Vec<FieldSpec>) -> Self {
        Self {
            domain: domain.to_string(),
            ingestor: ingestor.to_string(),
            fields,
            max_outstanding_batches: 16,
            max_outstanding_bytes: 8 << 20,
        }
    }

    /// The same, asking for this credit.
    pub fn with_credit(mut self, batches: u32, bytes: u64) -> Self {
        self.max_outstanding_batches = batches;
        self.max_outstanding_bytes = bytes;
        self
    }
}

/// Whether the ingestor takes batches now (P-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admission {
    /// Batches are taken.
    Open,
    /// Batches are refused for now; none is sent until it opens.
    Suspended,
}

/// The acknowledgement window of the ingestor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProducerWindowKind {
    /// All producers of the ingestor share one window.
    Sequential,
    /// A parallel window of this size.
    Parallel(u64),
}

/// A producer's attachment as the server described it in `ProducerOpened`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProducerDescription {
    /// The domain.
    pub domain: String,
    /// The ingestor.
    pub ingestor: String,
    /// The ingestor's input fields: every batch has exactly these.
    pub fields: Arc<[FieldSpec]>,
    /// STARTs committed when the producer attached.
    pub generation: u64,
    /// The endpoint contract's fingerprint.
    pub contract: Vec<u8>,
    /// The attachment on the executing node (differs between attachments).
    pub attachment: Vec<u8>,
    /// The acknowledgement window.
    pub window: ProducerWindowKind,
    /// The ingestor's ACK TIMEOUT.
    pub ack_timeout: Duration,
    /// The first retry delay after `Suspended` or `Busy`.
    pub retry_backoff: Duration,
    /// The largest retry delay.
    pub retry_max_backoff: Duration,
    /// Granted credit in batches.
    pub granted_batches: u32,
    /// Granted credit in bytes.
    pub granted_bytes: u64,
    /// The largest batch in IPC bytes.
    pub max_batch_bytes: u64,
    /// The most rows in one batch.
    pub max_batch_rows: u32,
    /// Admission when the attachment opened (differs between attachments).
    pub admission: Admission,
}

impl ProducerDescription {
    fn from_view(o: ProducerOpened<'_>) -> Result<Self, ProtocolViolation> {
        let fields = o
            .fields()
            .iter()
            .map(FieldSpec::from_view)
            .collect::<Result<Vec<_>, _>>()?;
        let window = match o.window_as_parallel_producer_window() {
            Some(p) => ProducerWindowKind::Parallel(p.max()),
            None => ProducerWindowKind::Sequential,
        };
        Ok(Self {
            domain: o.domain().to_string(),
            ingestor: o.ingestor().to_string(),
            fields: fields.into(),
            generation: o.generation(),
            contract: o.contract().bytes().bytes().to_vec(),
            attachment: o.attachment().bytes().to_vec(),
            window,
            ack_timeout: Duration::from_nanos(o.ack_timeout_nanos()),
            retry_backoff: Duration::from_nanos(o.retry_backoff_nanos()),
            retry_max_backoff: Duration::from_nanos(o.retry_max_backoff_nanos()),
            granted_batches: o.granted_batches(),
            granted_bytes: o.granted_bytes(),
            max_batch_bytes: o.max_batch_bytes(),
            max_batch_rows: o.max_batch_rows(),
            admission: admission(o.admission()),
        })
    }

    /// Whether a new attachment may stand for this one (P-8): the same START generation,
    /// endpoint contract, fields, policy (window and timings) and grant.
    pub fn restorable_by(&self, new: &ProducerDescription) -> bool {
        self.generation == new.generation
            && self.contract == new.contract
            && self.fields == new.fields
            && self.window == new.window
            && self.ack_timeout == new.ack_timeout
            && self.retry_backoff == new.retry_backoff
            && self.retry_max_backoff == new.retry_max_backoff
            && self.granted_batches == new.granted_batches
            && self.granted_bytes == new.granted_bytes
            && self.max_batch_bytes == new.max_batch_bytes
            && self.max_batch_rows == new.max_batch_rows
    }

    /// The largest batch this attachment takes: its `max_batch_bytes`, no more than its
    /// granted bytes, and no more than one request carries (a frame of 4 MiB, a vector of
    /// 262,144 entries, F-6).
    pub fn batch_byte_limit(&self) -> u64 {
        self.max_batch_bytes
            .min(self.granted_bytes)
            .min((FRAME_LIMIT - SUBMIT_OVERHEAD) as u64)
            .min(MAX_VECTOR_ENTRIES as u64)
    }

    /// Whether a batch of `rows` rows is within this attachment's `max_batch_rows` (P-3).
    fn check_rows(&self, rows: usize) -> Result<(), BatchError> {
        if rows as u64 > u64::from(self.max_batch_rows) {
            return Err(BatchError::TooManyRows {
                rows,
                max: u64::from(self.max_batch_rows),
            });
        }
        Ok(())
    }

    /// Whether a stream of `len` bytes is within [`ProducerDescription::batch_byte_limit`]
    /// (P-3).
    fn check_bytes(&self, len: usize) -> Result<(), BatchError> {
        let max = self.batch_byte_limit();
        if len as u64 > max {
            return Err(BatchError::TooLarge { bytes: len, max });
        }
        Ok(())
    }

    /// The `retry`-th retry delay (0 for the first): `retry_backoff` doubled per retry, at
    /// most `retry_max_backoff` (P-5).
    pub fn retry_delay(&self, retry: u32) -> Duration {
        let first = self.retry_backoff;
        let max = self.retry_max_backoff.max(first);
        first
            .checked_mul(1u32.checked_shl(retry).unwrap_or(u32::MAX))
            .map_or(max, |d| d.min(max))
    }
}

fn admission(a: Option<ProducerAdmission>) -> Admission {
    if a == Some(ProducerAdmission::Suspended) {
        Admission::Suspended
    } else {
        Admission::Open
    }
}

/// Where a producer stands: the manual's producer machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProducerState {
    /// The first open is out, or waits for a session.
    Opening,
    /// Attached; batches are taken.
    Open,
    /// Attached; the newest admission change says Suspended.
    Suspended,
    /// The close is out; outcomes and then its reply follow.
    Closing,
    /// Closed; nothing follows.
    Closed,
    /// The server ended it (`ProducerEnded`); nothing follows.
    Ended,
    /// Its session was lost; a fresh open goes on the next session.
    Interrupted,
    /// A fresh open is out on a new session.
    Restoring,
    /// The new attachment does not match the original, or the endpoint is gone: the
    /// application opens a new producer if it still wants one.
    ReopenRequired,
    /// The first open was refused.
    Refused,
}

impl ProducerState {
    /// Whether nothing more happens to the producer.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Self::Closed | Self::Ended | Self::ReopenRequired | Self::Refused
        )
    }
}

/// Where a batch stands: the manual's batch machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchState {
    /// Waiting for credit, admission or an attachment; never sent, or not admitted and
    /// waiting to go again.
    AwaitingCredit,
    /// Out on the session; holds its credit until its outcome is read.
    Sent,
    /// Not admitted (`Suspended` or `Busy`); goes again after the ingestor's back-off.
    Retrying,
    /// Its outcome was read; see [`ProducerEvent::Outcome`].
    Resolved,
}

/// How a batch ended. Exactly one per batch (P-5).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BatchOutcome {
    /// Its acknowledgement resolved successfully.
    Completed,
    /// None of its rows entered the graph; the refusal says why.
    NotAdmitted {
        /// Why.
        refusal: SubmissionRefusal,
        /// The server's words.
        message: String,
    },
    /// Admitted, then its acknowledgement failed; some effects may have happened.
    Failed {
        /// Why.
        failure: ProcessingFailure,
        /// The server's words.
        message: String,
    },
    /// The server cannot know whether it was processed.
    OutcomeUnknown {
        /// Why.
        cause: OutcomeUncertainty,
        /// The server's words.
        message: String,
    },
    /// Its session was lost after it was sent and before its outcome arrived: it may or may
    /// not have been admitted and processed. It is never sent again (P-8).
    Unknown,
    /// The request was rejected before it was read (`RequestRejected`); nothing of it ran.
    Rejected {
        /// The server's words.
        message: String,
    },
    /// It was never sent: the producer closed, ended or needs reopening first.
    NotSent,
}

/// Why a producer needs an explicit new open (P-8).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ReopenReason {
    /// The new attachment's generation, contract, fields, policy or grant differ; it was
    /// closed again.
    Changed(Box<ProducerDescription>),
    /// The new open was refused for a reason no wait cures.
    Refused {
        /// Why.
        refusal: Option<ProducerRefusal>,
        /// The server's words.
        message: String,
    },
}

/// Something the application learns about one producer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProducerEvent {
    /// The first open was answered: the producer is attached (P-1).
    Opened(Arc<ProducerDescription>),
    /// The first open was refused; nothing stays attached (P-1).
    Refused {
        /// Why, when the server gave an open refusal.
        refusal: Option<ProducerRefusal>,
        /// The server's words.
        message: String,
    },
    /// Admission changed (P-6). Changes are coalesced by the server.
    Admission(Admission),
    /// A batch ended (P-5, P-8).
    Outcome {
        /// The batch.
        batch: BatchId,
        /// How.
        outcome: BatchOutcome,
    },
    /// The session holding the attachment was lost; every batch out on it is reported
    /// [`BatchOutcome::Unknown`] (P-8). While one is unread, a later one folds into it, with
    /// the `Restored` and `RestoreRefused` that came between (outcomes and other events
    /// stay); see [`ClientStats::lifecycle_events_folded`](super::ClientStats).
    Interrupted,
    /// A new attachment matching the original is open (P-8).
    Restored(Arc<ProducerDescription>),
    /// A new open was refused for now; it goes again after a growing wait.
    RestoreRefused {
        /// Why.
        refusal: Option<ProducerRefusal>,
        /// The server's words.
        message: String,
    },
    /// The producer cannot be restored (P-8); nothing follows.
    ReopenRequired(ReopenReason),
    /// The producer closed (P-8); nothing follows.
    Closed,
    /// The server ended the producer (P-6); nothing follows.
    Ended {
        /// Why.
        reason: ProducerEndReason,
        /// The server's words.
        message: String,
    },
}

impl LifecycleEvent for ProducerEvent {
    fn lifecycle(&self) -> Option<Lifecycle> {
        match self {
            Self::Interrupted => Some(Lifecycle::Interrupted),
            Self::Restored(_) => Some(Lifecycle::Restored),
            Self::RestoreRefused { .. } => Some(Lifecycle::RestoreRefused),
            _ => None,
        }
    }
}

/// A producer as [`Client::producer`] reports it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProducerInfo {
    /// Where it stands.
    pub state: ProducerState,
    /// Admission of the current attachment.
    pub admission: Admission,
    /// The original attachment's description, once opened.
    pub description: Option<Arc<ProducerDescription>>,
    /// Batches holding credit now: sent and unanswered, or answered with an outcome the
    /// application has not read yet (P-4).
    pub credit_batches: u32,
    /// IPC bytes those batches hold.
    pub credit_bytes: u64,
    /// Batches not yet resolved.
    pub unresolved: usize,
}

/// Why a batch was not taken. Nothing was queued.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SubmitError {
    /// No such producer.
    #[error("no such producer")]
    UnknownProducer,
    /// The producer has no attachment yet: batches are built for its description.
    #[error("the producer has not opened yet")]
    NotOpened,
    /// The producer is closing or has ended.
    #[error("the producer is {0:?}")]
    Finished(ProducerState),
    /// The batches waiting to be sent already fill one grant of credit.
    #[error("batches waiting to be sent fill the producer's credit")]
    Full,
    /// The batch does not fit the producer (P-3).
    #[error(transparent)]
    Batch(#[from] BatchError),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Needs an open on the next session.
    Waiting,
    /// Waits after a temporary refusal.
    Backoff(Timestamp),
    Opening(SessionId),
    Open(SessionId),
    Closing(SessionId),
    Done(ProducerState),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    /// Never sent, or sent and not admitted: waits for credit and admission.
    Waiting,
    Sent(SessionId),
    /// Not admitted; goes again at this time.
    Retrying(Timestamp),
}

/// Room kept after a batch's stream for the padding its frame ends with (below 8 bytes).
const TAIL_ROOM: usize = 8;

/// A batch's canonical Arrow IPC stream, kept until its outcome.
#[derive(Debug)]
enum Stream {
    /// Never sent: `room` zero bytes, the stream's `len` bytes, then [`TAIL_ROOM`] zero bytes,
    /// so that the first frame that carries it is finished around it in place.
    Laid {
        buf: BytesMut,
        room: usize,
        len: usize,
    },
    /// The stream alone (a slice of the frame that carried it last).
    Sent(Bytes),
}

impl Stream {
    fn len(&self) -> usize {
        match self {
            Self::Laid { len, .. } => *len,
            Self::Sent(b) => b.len(),
        }
    }

    /// The frame `f` around the stream. The first time, the frame is finished in the stream's
    /// own buffer when its head fits the room left for it exactly; otherwise (a later attempt,
    /// or a head of another length) the stream is copied into a new frame. Either way the
    /// stream is then kept as a slice of that frame.
    fn frame(&mut self, f: SubmitFrame<'_>) -> Bytes {
        let len = self.len();
        let in_place =
            matches!(self, Self::Laid { room, .. } if *room == f.head.len()) && f.tail <= TAIL_ROOM;
        let (frame, at) = match std::mem::replace(self, Self::Sent(Bytes::new())) {
            Self::Laid { mut buf, room, len } if in_place => {
                buf[..room].copy_from_slice(f.head);
                // The room after the stream was written as zeros: the tail is its start.
                buf.truncate(room + len + f.tail);
                (buf.freeze(), room)
            }
            old => {
                let stream = match &old {
                    Self::Laid { buf, room, len } => &buf[*room..*room + *len],
                    Self::Sent(b) => &b[..],
                };
                let mut out = BytesMut::with_capacity(f.len(len));
                out.extend_from_slice(f.head);
                out.extend_from_slice(stream);
                out.put_bytes(0, f.tail);
                (out.freeze(), f.head.len())
            }
        };
        *self = Self::Sent(frame.slice(at..at + len));
        frame
    }
}

/// A batch encoded for one producer by [`Client::lay_batch`] and not yet submitted: its
/// canonical Arrow IPC stream in the layout the engine finishes a batch's first frame around
/// (room for the frame's head before the stream, room for its padding after). Handed to
/// [`Client::submit_laid`] while nothing else shares its bytes, it becomes the frame without
/// a copy; while [`LaidBatch::stream`]'s slices are held elsewhere, the engine copies it.
/// Its `Debug` shows its rows and length only.
pub struct LaidBatch {
    buf: Bytes,
    room: usize,
    len: usize,
    rows: usize,
    /// The description it was laid for: another producer takes it only with the same fields.
    desc: Arc<ProducerDescription>,
}

impl std::fmt::Debug for LaidBatch {
    /// Its rows and length, not its bytes (columns may be sensitive).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaidBatch")
            .field("rows", &self.rows)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl LaidBatch {
    /// The canonical Arrow IPC stream, exactly the bytes [`arrow::encode`] writes for the
    /// batch: a slice sharing the laid buffer.
    #[must_use]
    pub fn stream(&self) -> Bytes {
        self.buf.slice(self.room..self.room + self.len)
    }

    /// Its rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The stream's length in bytes.
    #[must_use]
    pub fn stream_len(&self) -> usize {
        self.len
    }

    /// The laid buffer to keep as the batch's stream: its own when nothing else shares it,
    /// else a copy in the same layout.
    fn into_buf(self) -> BytesMut {
        match self.buf.try_into_mut() {
            Ok(buf) => buf,
            Err(shared) => BytesMut::from(&shared[..]),
        }
    }
}

/// Lays a batch's stream out in `buf` as [`Stream::Laid`] keeps it: `room` zero bytes, the
/// stream `lay` writes at the end of the buffer (returning its length), then [`TAIL_ROOM`]
/// zero bytes. `len_hint` is the stream's length when it is known, so the buffer is made
/// once at its size (0: `lay` reserves for itself). On an error `buf` holds the room only.
fn lay_out(
    buf: &mut BytesMut,
    room: usize,
    len_hint: usize,
    lay: impl FnOnce(&mut BytesMut) -> Result<usize, BatchError>,
) -> Result<usize, BatchError> {
    if len_hint > 0 {
        buf.reserve(room + len_hint + TAIL_ROOM);
    }
    buf.put_bytes(0, room);
    let len = lay(buf)?;
    buf.put_bytes(0, TAIL_ROOM);
    Ok(len)
}

/// Where the buffer of a batch being admitted is: taken once it is admitted.
trait Laid {
    /// The laid buffer, given the engine's spare one.
    fn take(self, spare: &mut BytesMut) -> BytesMut;
}

/// The engine's spare buffer holds it.
struct Spare;

impl Laid for Spare {
    fn take(self, spare: &mut BytesMut) -> BytesMut {
        spare.split()
    }
}

impl Laid for LaidBatch {
    fn take(self, _: &mut BytesMut) -> BytesMut {
        self.into_buf()
    }
}

/// A [`LaidBatch`] the engine did not take, given back with the reason.
#[derive(Debug)]
#[non_exhaustive]
pub struct LaidRefusal {
    /// Why it was not taken ([`SubmitError::Full`]: the caller may keep it for later).
    pub error: SubmitError,
    /// The batch, as it was handed in.
    pub batch: LaidBatch,
}

#[derive(Debug)]
struct Pending {
    seq: u64,
    ipc: Stream,
    slot: Slot,
    /// Retries so far (the back-off's exponent).
    retries: u32,
    /// The outcome of its last attempt, when it was not admitted.
    last: Option<BatchOutcome>,
}

impl Track for Entry {
    /// Waiting to be opened or backing off, closing while open, or holding batches.
    fn pending(&self) -> bool {
        match self.phase {
            Phase::Waiting | Phase::Backoff(_) => true,
            Phase::Open(_) if self.close => true,
            _ => !self.batches.is_empty(),
        }
    }
}

#[derive(Debug)]
struct Entry {
    seq: u64,
    spec: ProducerSpec,
    phase: Phase,
    admission: Admission,
    /// The original attachment's description.
    desc: Option<Arc<ProducerDescription>>,
    /// The wire identity of the current attachment (the request identity of its open).
    wire: Option<u64>,
    close: bool,
    refusals: u32,
    batches: BTreeMap<BatchId, Pending>,
    credit_batches: u32,
    credit_bytes: u64,
}

impl Entry {
    fn state(&self) -> ProducerState {
        match self.phase {
            Phase::Done(s) => s,
            Phase::Closing(_) => ProducerState::Closing,
            _ if self.close => ProducerState::Closing,
            Phase::Waiting | Phase::Backoff(_) if self.desc.is_some() => ProducerState::Interrupted,
            Phase::Waiting | Phase::Backoff(_) => ProducerState::Opening,
            Phase::Opening(_) if self.desc.is_some() => ProducerState::Restoring,
            Phase::Opening(_) => ProducerState::Opening,
            Phase::Open(_) if self.admission == Admission::Suspended => ProducerState::Suspended,
            Phase::Open(_) => ProducerState::Open,
        }
    }

    fn session(&self) -> Option<SessionId> {
        match self.phase {
            Phase::Opening(s) | Phase::Open(s) | Phase::Closing(s) => Some(s),
            _ => None,
        }
    }

    fn take_credit(&mut self, bytes: u64) {
        self.credit_batches += 1;
        self.credit_bytes += bytes;
    }

    fn return_credit(&mut self, bytes: u64) {
        self.credit_batches = self.credit_batches.saturating_sub(1);
        self.credit_bytes = self.credit_bytes.saturating_sub(bytes);
    }
}

/// The producers of the client.
#[derive(Debug, Default)]
pub(crate) struct Producers {
    entries: Tracked<ProducerId, Entry>,
    /// Attachments followed, by session and wire identity (P-2).
    wires: BTreeMap<(SessionId, u64), ProducerId>,
    events: EventQueue<ProducerId, ProducerEvent>,
    /// Outcomes queued and not yet read whose batches hold credit until they are (P-4): the
    /// IPC bytes each holds.
    held: BTreeMap<(ProducerId, BatchId), u64>,
    /// The time of the newest drive.
    last_now: Option<Timestamp>,
    /// Credit came back as an outcome was read while batches wait for it: a drive is due
    /// (the time of the newest drive, so it fires at once), and only one.
    kick: Option<Timestamp>,
    next_id: u64,
    next_batch: u64,
    ignored: u64,
    /// Attachments to close whose replies nobody reads (a changed restoration, a late open
    /// after a close), by session.
    releases: Vec<(SessionId, u64)>,
    /// The buffer the next batch is written into. Batches are split off its front, so one
    /// allocation serves batch after batch once the frames cut from it are dropped.
    spare: BytesMut,
    /// The length of a `SubmitBatchRequest` frame's head for a stream of a multiple of 8
    /// bytes (which every canonical stream is), once known.
    head_room: Option<usize>,
    /// Finished producers, oldest first: their entries stay for [`Client::producer`] until
    /// [`FINISHED_KEPT`] newer ones finished, so a client that opens and closes producers for
    /// ever holds a bounded number of them.
    finished: VecDeque<ProducerId>,
}

/// How many finished producers (and, in the consumers' module, consumers) stay queryable: a
/// finished one is forgotten once this many newer ones finished and nothing of it is left to
/// read.
pub(crate) const FINISHED_KEPT: usize = 1024;

fn open_request(spec: &ProducerSpec) -> ClientRequestT {
    ClientRequestT::OpenIngestorRequest(Box::new(OpenIngestorRequestT {
        domain: spec.domain.clone(),
        ingestor: spec.ingestor.clone(),
        expected_fields: spec.fields.iter().map(FieldSpec::to_wire).collect(),
        max_outstanding_batches: spec.max_outstanding_batches,
        max_outstanding_bytes: spec.max_outstanding_bytes,
    }))
}

fn close_request(wire: u64) -> ClientRequestT {
    ClientRequestT::CloseIngestorRequest(Box::new(CloseIngestorRequestT { producer: wire }))
}

impl Producers {
    /// The head room a batch's stream is written after (see [`Stream::Laid`]).
    fn head_room(&mut self) -> usize {
        *self.head_room.get_or_insert_with(|| {
            crate::encode::Encoder::new()
                .submit_frame(1, 1, 8)
                .map_or(0, |f| f.head.len())
        })
    }
}

fn endpoint_violation(rule: &'static str, what: String) -> ProtocolViolation {
    ProtocolViolation::Endpoint { rule, what }
}

/// Refusals a wait may cure (P-8): capacity, the owner, an endpoint still catching up.
/// `InTransaction` is none of these: the transaction is the application's own and may be held
/// for as long as it likes, so a restoration refused for it requires a reopen rather than
/// waiting (and holding the batches submitted behind it) without a bound.
fn temporary(refusal: Option<ProducerRefusal>) -> bool {
    matches!(
        refusal,
        None | Some(
            ProducerRefusal::EndpointUnavailable
                | ProducerRefusal::TooManyProducers
                | ProducerRefusal::SessionCapacityExhausted
                | ProducerRefusal::NodeCapacityExhausted
        )
    )
}

/// What an open's reply said.
enum OpenReply {
    Opened(Box<ProducerDescription>),
    /// Refused; `defect` when rejected for a defect in the request (C-8), which is never sent
    /// again unchanged, so a restoration requires a reopen instead of waiting.
    Refused {
        refusal: Option<ProducerRefusal>,
        message: String,
        defect: bool,
    },
}

impl OpenReply {
    fn refused(refusal: Option<ProducerRefusal>, message: String) -> Self {
        Self::Refused {
            refusal,
            message,
            defect: false,
        }
    }
}

fn read_open(frame: &ServerFrame) -> Result<OpenReply, ProtocolViolation> {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return Ok(OpenReply::refused(None, String::new()));
    };
    if let Some(o) = reply.body_as_open_ingestor_outcome() {
        if let Some(p) = o.disposition_as_producer_opened() {
            return Ok(OpenReply::Opened(Box::new(ProducerDescription::from_view(
                p,
            )?)));
        }
        let refusal = o
            .disposition_as_producer_refused()
            .and_then(|r| r.refusal());
        return Ok(OpenReply::refused(refusal, o.message().to_string()));
    }
    let message = match reply.body_as_request_rejected() {
        Some(r) => {
            if super::rejected_for_a_defect(&r) {
                return Ok(OpenReply::Refused {
                    refusal: None,
                    message: r.message().to_string(),
                    defect: true,
                });
            }
            r.message().to_string()
        }
        None => reply
            .body_type()
            .variant_name()
            .unwrap_or("an undeclared reply")
            .to_string(),
    };
    Ok(OpenReply::refused(None, message))
}

fn read_outcome(frame: &ServerFrame) -> BatchOutcome {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return BatchOutcome::Rejected {
            message: String::new(),
        };
    };
    let Some(o) = reply.body_as_submission_outcome() else {
        let message = match reply.body_as_request_rejected() {
            Some(r) => r.message().to_string(),
            None => reply
                .body_type()
                .variant_name()
                .unwrap_or("an undeclared reply")
                .to_string(),
        };
        return BatchOutcome::Rejected { message };
    };
    let message = o.message().to_string();
    if o.disposition_as_submission_completed().is_some() {
        BatchOutcome::Completed
    } else if let Some(n) = o.disposition_as_submission_not_admitted() {
        BatchOutcome::NotAdmitted {
            refusal: n.refusal().unwrap_or_default(),
            message,
        }
    } else if let Some(f) = o.disposition_as_submission_failed() {
        BatchOutcome::Failed {
            failure: f.failure().unwrap_or_default(),
            message,
        }
    } else if let Some(u) = o.disposition_as_submission_outcome_unknown() {
        BatchOutcome::OutcomeUnknown {
            cause: u.cause().unwrap_or_default(),
            message,
        }
    } else {
        BatchOutcome::Rejected { message }
    }
}

/// Whether the outcome allows the batch to go again (P-5).
fn retryable(o: &BatchOutcome) -> bool {
    matches!(
        o,
        BatchOutcome::NotAdmitted {
            refusal: SubmissionRefusal::Suspended | SubmissionRefusal::Busy,
            ..
        }
    )
}

impl Producers {
    /// Lifecycle events folded while unread (see the events module).
    pub(crate) fn folded_events(&self) -> u64 {
        self.events.folded()
    }

    fn push(&mut self, id: ProducerId, event: ProducerEvent) {
        self.events.push(id, event);
    }

    pub(crate) fn poll(&mut self, id: ProducerId) -> Option<ProducerEvent> {
        let event = self.events.poll(id)?;
        self.read(id, &event);
        Some(event)
    }

    pub(crate) fn poll_any(&mut self) -> Option<(ProducerId, ProducerEvent)> {
        let (id, event) = self.events.pop_front()?;
        self.read(id, &event);
        Some((id, event))
    }

    /// The next event of any producer, an outcome among them keeping its credit until
    /// [`Producers::release`] (P-4).
    pub(crate) fn poll_any_held(&mut self) -> Option<(ProducerId, ProducerEvent)> {
        self.events.pop_front()
    }

    /// The application read `event` of `id`: an outcome's credit comes back (P-4).
    fn read(&mut self, id: ProducerId, event: &ProducerEvent) {
        if let ProducerEvent::Outcome { batch, .. } = event {
            self.release(id, *batch);
        }
    }

    /// The outcome of `batch` was read: the credit it held comes back (P-4), and batches
    /// waiting for it go at the next drive. False when it held none (already released, or
    /// its outcome not handed out yet).
    pub(crate) fn release(&mut self, id: ProducerId, batch: BatchId) -> bool {
        let Some(len) = self.held.remove(&(id, batch)) else {
            return false;
        };
        let Some(e) = self.entries.touch(&id) else {
            return true;
        };
        e.return_credit(len);
        if e.batches.values().any(|b| !matches!(b.slot, Slot::Sent(_))) {
            self.kick = self.last_now;
        }
        true
    }

    /// Ends every unresolved batch of `id` that is not out: never sent (`NotSent`), or not
    /// admitted and waiting to go again (its last outcome).
    fn drop_unsent(&mut self, id: ProducerId) {
        let Some(e) = self.entries.touch(&id) else {
            return;
        };
        let unsent: Vec<BatchId> = e
            .batches
            .iter()
            .filter(|(_, b)| !matches!(b.slot, Slot::Sent(_)))
            .map(|(b, _)| *b)
            .collect();
        let mut out = Vec::new();
        for b in unsent {
            if let Some(p) = e.batches.remove(&b) {
                out.push((b, p.last.unwrap_or(BatchOutcome::NotSent)));
            }
        }
        for (batch, outcome) in out {
            self.push(id, ProducerEvent::Outcome { batch, outcome });
        }
    }

    /// Ends every batch of `id` out on a lost session as of unknown outcome (P-8); its credit
    /// is held until that outcome is read (P-4).
    fn unknown_sent(&mut self, id: ProducerId) {
        let Some(e) = self.entries.touch(&id) else {
            return;
        };
        let sent: Vec<BatchId> = e
            .batches
            .iter()
            .filter(|(_, b)| matches!(b.slot, Slot::Sent(_)))
            .map(|(b, _)| *b)
            .collect();
        for b in &sent {
            if let Some(p) = e.batches.remove(b) {
                self.held.insert((id, *b), p.ipc.len() as u64);
            }
        }
        for batch in sent {
            self.push(
                id,
                ProducerEvent::Outcome {
                    batch,
                    outcome: BatchOutcome::Unknown,
                },
            );
        }
    }

    fn finish(&mut self, id: ProducerId, state: ProducerState, event: ProducerEvent) {
        self.unknown_sent(id);
        self.drop_unsent(id);
        if let Some(e) = self.entries.touch(&id) {
            if !matches!(e.phase, Phase::Done(_)) {
                self.finished.push_back(id);
            }
            e.phase = Phase::Done(state);
            e.wire = None;
        }
        self.wires.retain(|_, p| *p != id);
        self.push(id, event);
        self.forget_finished();
    }

    /// Forgets the oldest finished producers beyond [`FINISHED_KEPT`] whose events were all
    /// read and whose batches all ended; one with something left waits its turn again.
    fn forget_finished(&mut self) {
        let mut turns = self.finished.len();
        while self.finished.len() > FINISHED_KEPT && turns > 0 {
            turns -= 1;
            let Some(id) = self.finished.pop_front() else {
                break;
            };
            let done = self
                .entries
                .get(&id)
                .is_none_or(|e| matches!(e.phase, Phase::Done(_)) && e.batches.is_empty());
            let unread = self.events.holds(id)
                || self
                    .held
                    .range((id, BatchId(0))..=(id, BatchId(u64::MAX)))
                    .next()
                    .is_some();
            if done && !unread {
                self.entries.remove(&id);
            } else {
                self.finished.push_back(id);
            }
        }
    }

    /// Opens due on `session` (restorations first of all the producer state, D-5), closes, and
    /// batches that fit the credit now, in the order they were made.
    pub(crate) fn due(
        &self,
        now: Timestamp,
        session: SessionId,
        fresh_ok: bool,
        out: &mut Vec<(u64, Purpose)>,
    ) {
        for (s, wire) in &self.releases {
            if *s == session {
                out.push((0, Purpose::ProducerRelease(*wire)));
            }
        }
        for (id, e) in self.entries.pending() {
            match e.phase {
                Phase::Waiting if fresh_ok || e.desc.is_some() => {
                    out.push((e.seq, Purpose::ProducerOpen(*id)))
                }
                Phase::Backoff(t) if t <= now && (fresh_ok || e.desc.is_some()) => {
                    out.push((e.seq, Purpose::ProducerOpen(*id)))
                }
                Phase::Open(s) if s == session && e.close => {
                    // Close waits for nothing: outcomes of batches out precede its reply.
                    out.push((e.seq, Purpose::ProducerClose(*id)));
                }
                Phase::Open(s) if s == session && e.admission == Admission::Open => {
                    let Some(desc) = &e.desc else { continue };
                    let (mut batches, mut bytes) = (e.credit_batches, e.credit_bytes);
                    for (b, p) in &e.batches {
                        let ready = match p.slot {
                            Slot::Waiting => true,
                            Slot::Retrying(t) => t <= now,
                            Slot::Sent(_) => false,
                        };
                        if !ready {
                            continue;
                        }
                        let len = p.ipc.len() as u64;
                        // P-4: never send what does not fit; later batches wait behind it.
                        if batches >= desc.granted_batches || bytes + len > desc.granted_bytes {
                            break;
                        }
                        batches += 1;
                        bytes += len;
                        out.push((p.seq, Purpose::ProducerSubmit(*id, *b)));
                    }
                }
                _ => {}
            }
        }
    }

    /// Opens due on a new session, for the restoration order (D-5).
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
                .filter(|(_, p)| matches!(p, Purpose::ProducerOpen(_))),
        );
    }

    pub(crate) fn wants_session(&self) -> bool {
        self.entries.pending().any(|(_, e)| {
            matches!(e.phase, Phase::Waiting | Phase::Backoff(_)) && !e.close
                || matches!(e.phase, Phase::Open(_) | Phase::Closing(_))
                    && e.batches.values().any(|b| matches!(b.slot, Slot::Sent(_)))
        })
    }

    pub(crate) fn timers(&self) -> impl Iterator<Item = Timestamp> + '_ {
        self.kick
            .into_iter()
            .chain(self.entries.pending().flat_map(|(_, e)| {
                let open = matches!(e.phase, Phase::Open(_)) && e.admission == Admission::Open;
                let backoff = match e.phase {
                    Phase::Backoff(t) => Some(t),
                    _ => None,
                };
                backoff.into_iter().chain(
                    e.batches
                        .values()
                        .filter_map(move |b| match b.slot {
                            Slot::Retrying(t) if open => Some(t),
                            _ => None,
                        })
                        .min(),
                )
            }))
    }

    pub(crate) fn settle_backoffs(&mut self, now: Timestamp) {
        self.last_now = Some(now);
        self.kick = None;
        self.entries.for_each_pending_mut(|_, e| {
            if matches!(e.phase, Phase::Backoff(t) if t <= now) {
                e.phase = Phase::Waiting;
            }
            for b in e.batches.values_mut() {
                if matches!(b.slot, Slot::Retrying(t) if t <= now) {
                    b.slot = Slot::Waiting;
                }
            }
        });
    }

    /// Unsolicited producer frames (P-2, P-6). Returns `Ok(false)` for frames of other kinds.
    pub(crate) fn on_frame(
        &mut self,
        session: SessionId,
        frame: &ServerFrame,
    ) -> Result<bool, ProtocolViolation> {
        let view = frame.view();
        if let Some(a) = view.body_as_producer_admission_changed() {
            let Some(&id) = self.wires.get(&(session, a.producer())) else {
                // P-2: a producer this client does not follow.
                self.ignored += 1;
                return Ok(true);
            };
            let admission = admission(a.admission());
            if let Some(e) = self.entries.touch(&id) {
                e.admission = admission;
            }
            // P-6: changes are coalesced. An unread change of this producer is superseded by
            // this one, which goes last, so the newest change read is the producer's own.
            self.events
                .retain(|(p, e)| *p != id || !matches!(e, ProducerEvent::Admission(_)));
            self.push(id, ProducerEvent::Admission(admission));
            return Ok(true);
        }
        if let Some(end) = view.body_as_producer_ended() {
            let Some(&id) = self.wires.get(&(session, end.producer())) else {
                self.ignored += 1;
                return Ok(true);
            };
            let out = self.entries.get(&id).map_or(0, |e| {
                e.batches
                    .values()
                    .filter(|b| b.slot == Slot::Sent(session))
                    .count()
            });
            if out > 0 {
                // P-6: every batch has its outcome before the producer's end.
                return Err(endpoint_violation(
                    "P-6",
                    format!(
                        "ProducerEnded for producer {} with {out} batches unanswered",
                        end.producer()
                    ),
                ));
            }
            let reason = end.reason().unwrap_or_default();
            let message = end.message().to_string();
            self.wires.remove(&(session, end.producer()));
            if let Some(e) = self.entries.touch(&id) {
                e.wire = None;
            }
            let closing = self.entries.get(&id).is_some_and(|e| e.close);
            if closing {
                self.finish(id, ProducerState::Closed, ProducerEvent::Closed);
            } else {
                self.finish(
                    id,
                    ProducerState::Ended,
                    ProducerEvent::Ended { reason, message },
                );
            }
            return Ok(true);
        }
        Ok(false)
    }

    /// `session` ended (P-8): batches out on it are of unknown outcome, and the producer is
    /// interrupted until a new attachment opens, unless it was closing.
    pub(crate) fn lost(&mut self, session: SessionId) {
        self.wires.retain(|(s, _), _| *s != session);
        self.releases.retain(|(s, _)| *s != session);
        let ids: Vec<ProducerId> = self.entries.keys().copied().collect();
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
            e.wire = None;
            let was_open = matches!(e.phase, Phase::Open(_));
            if e.close || matches!(e.phase, Phase::Closing(_)) {
                // Losing the session ends the attachment: the close is complete.
                self.finish(id, ProducerState::Closed, ProducerEvent::Closed);
                continue;
            }
            e.phase = Phase::Waiting;
            e.admission = Admission::Open;
            e.refusals = 0;
            if was_open {
                self.push(id, ProducerEvent::Interrupted);
            }
            self.unknown_sent(id);
        }
    }

    pub(crate) fn info(&self, id: ProducerId) -> Option<ProducerInfo> {
        self.entries.get(&id).map(|e| ProducerInfo {
            state: e.state(),
            admission: e.admission,
            description: e.desc.clone(),
            credit_batches: e.credit_batches,
            credit_bytes: e.credit_bytes,
            unresolved: e.batches.len(),
        })
    }

    pub(crate) fn batch_state(&self, id: ProducerId, batch: BatchId) -> Option<BatchState> {
        let e = self.entries.get(&id)?;
        Some(match e.batches.get(&batch).map(|b| b.slot) {
            Some(Slot::Waiting) => BatchState::AwaitingCredit,
            Some(Slot::Sent(_)) => BatchState::Sent,
            Some(Slot::Retrying(_)) => BatchState::Retrying,
            None if batch.0 <= self.next_batch => BatchState::Resolved,
            None => return None,
        })
    }
}

impl Client {
    /// Opens a producer (P-1): an `OpenIngestorRequest` naming the domain, the ingestor, the
    /// exact fields and the credit asked for, now or on the next session. It is followed from
    /// its open on (P-2); its events come from [`Client::poll_producer_event`]. Refused while a
    /// transaction is held.
    pub fn open_producer(
        &mut self,
        now: Timestamp,
        spec: ProducerSpec,
    ) -> Result<ProducerId, super::ClientError> {
        self.check_name("domain", &spec.domain)?;
        self.check_name("ingestor", &spec.ingestor)?;
        self.outside_transaction()?;
        if spec.fields.is_empty() {
            return Err(super::ClientError::InvalidName {
                what: "fields",
                why: "a producer has at least one field",
            });
        }
        if !(1..=MAX_CREDIT_BATCHES).contains(&spec.max_outstanding_batches)
            || !(1..=MAX_CREDIT_BYTES).contains(&spec.max_outstanding_bytes)
        {
            return Err(super::ClientError::InvalidCredit);
        }
        self.check_sendable(&open_request(&spec))?;
        let seq = self.seq();
        self.producers.next_id += 1;
        let id = ProducerId(self.producers.next_id);
        self.producers.entries.insert(
            id,
            Entry {
                seq,
                spec,
                phase: Phase::Waiting,
                admission: Admission::Open,
                desc: None,
                wire: None,
                close: false,
                refusals: 0,
                batches: BTreeMap::new(),
                credit_batches: 0,
                credit_bytes: 0,
            },
        );
        self.drive(now);
        Ok(id)
    }

    /// A typed builder for batches of `producer`'s fields (its description once opened).
    pub fn batch_builder(&self, producer: ProducerId) -> Result<BatchBuilder, SubmitError> {
        let e = self
            .producers
            .entries
            .get(&producer)
            .ok_or(SubmitError::UnknownProducer)?;
        let desc = e.desc.as_ref().ok_or(SubmitError::NotOpened)?;
        Ok(BatchBuilder::new(desc.fields.clone()))
    }

    /// Submits the application's own batch (P-3). It is checked against the producer's
    /// fields (the first column that does not match is named), encoded as one canonical Arrow
    /// IPC stream, and checked against the grant's rows and bytes; then it waits for credit
    /// and admission (P-4, P-6) and ends with exactly one [`ProducerEvent::Outcome`].
    pub fn submit(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
        batch: &RecordBatch,
    ) -> Result<BatchId, SubmitError> {
        let desc = self.submittable(producer)?;
        arrow::check_record_batch(&desc.fields, batch)?;
        self.submit_checked(now, producer, &desc, batch)
    }

    /// Submits a batch built with [`Client::batch_builder`]. A builder made for other fields
    /// (another producer, or a description with another sensitivity) is refused naming the
    /// column.
    pub fn submit_built(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
        builder: BatchBuilder,
    ) -> Result<BatchId, SubmitError> {
        let desc = self.submittable(producer)?;
        same_fields(&desc.fields, builder.fields())?;
        let batch = builder.finish()?;
        self.submit_checked(now, producer, &desc, &batch)
    }

    /// Submits a batch of `rows` rows already encoded by [`arrow::encode`] from a batch that
    /// was checked against the producer's fields (a client's journal keeps exactly those
    /// bytes): they go into the frame as they are, so the batch is not encoded a second time.
    /// The row and byte bounds and everything after are as for [`Client::submit`]. Bytes that
    /// are not such a stream are the caller's error: the server refuses the batch.
    pub fn submit_encoded(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
        rows: usize,
        ipc: &[u8],
    ) -> Result<BatchId, SubmitError> {
        let desc = self.submittable(producer)?;
        self.submit_lay(now, producer, &desc, rows, ipc.len(), |out| {
            out.extend_from_slice(ipc);
            Ok(ipc.len())
        })
    }

    fn submittable(&self, producer: ProducerId) -> Result<Arc<ProducerDescription>, SubmitError> {
        let e = self
            .producers
            .entries
            .get(&producer)
            .ok_or(SubmitError::UnknownProducer)?;
        let state = e.state();
        if state.is_final() || e.close {
            return Err(SubmitError::Finished(state));
        }
        e.desc.clone().ok_or(SubmitError::NotOpened)
    }

    fn submit_checked(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
        desc: &ProducerDescription,
        batch: &RecordBatch,
    ) -> Result<BatchId, SubmitError> {
        self.submit_lay(now, producer, desc, batch.num_rows(), 0, |out| {
            arrow::encode_into(batch, out)
        })
    }

    /// Submits a batch of `rows` rows whose IPC stream `lay` writes at the end of the buffer
    /// it is given (returning the stream's length, or leaving the buffer as it was on an
    /// error); `len_hint` is the stream's length when it is known, so the buffer is made once
    /// at its size (0: `lay` reserves for itself).
    fn submit_lay(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
        desc: &ProducerDescription,
        rows: usize,
        len_hint: usize,
        lay: impl FnOnce(&mut bytes::BytesMut) -> Result<usize, BatchError>,
    ) -> Result<BatchId, SubmitError> {
        desc.check_rows(rows)?;
        let room = self.producers.head_room();
        let spare = &mut self.producers.spare;
        spare.clear();
        let len = match lay_out(spare, room, len_hint, lay) {
            Ok(len) => len,
            Err(e) => {
                spare.clear();
                return Err(e.into());
            }
        };
        self.admit(now, producer, desc, room, len, Spare)
            .map_err(|(e, _)| {
                self.producers.spare.clear();
                e
            })
    }

    /// Encodes the application's batch for `producer` as [`Client::submit`] would, checked
    /// the same way (its fields, P-3, then the grant's rows and bytes), without submitting
    /// it: the caller can keep the stream ([`LaidBatch::stream`], e.g. in a journal) and then
    /// hand the batch to [`Client::submit_laid`], which takes the same buffer as the frame.
    pub fn lay_batch(
        &mut self,
        producer: ProducerId,
        batch: &RecordBatch,
    ) -> Result<LaidBatch, SubmitError> {
        let desc = self.submittable(producer)?;
        arrow::check_record_batch(&desc.fields, batch)?;
        let rows = batch.num_rows();
        desc.check_rows(rows)?;
        let room = self.producers.head_room();
        let mut buf = BytesMut::new();
        let len = lay_out(&mut buf, room, arrow::ipc_size_hint(batch), |out| {
            arrow::encode_into(batch, out)
        })?;
        desc.check_bytes(len)?;
        Ok(LaidBatch {
            buf: buf.freeze(),
            room,
            len,
            rows,
            desc,
        })
    }

    /// Submits a batch laid by [`Client::lay_batch`]: one laid for another description is
    /// taken only if its fields are the same (else refused naming the column, as
    /// [`Client::submit_built`] does), the row and byte bounds are checked again (the grant
    /// may have changed since), and everything after is as for [`Client::submit`]. When
    /// nothing else shares its bytes, its buffer becomes the batch's first frame as it is,
    /// without a copy. A refused batch comes back with the reason.
    pub fn submit_laid(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
        batch: LaidBatch,
    ) -> Result<BatchId, Box<LaidRefusal>> {
        let refused = |error: SubmitError, batch| Err(Box::new(LaidRefusal { error, batch }));
        let desc = match self.submittable(producer) {
            Ok(d) => d,
            Err(e) => return refused(e, batch),
        };
        if !Arc::ptr_eq(&desc, &batch.desc) {
            if let Err(e) = same_fields(&desc.fields, &batch.desc.fields) {
                return refused(e.into(), batch);
            }
        }
        if let Err(e) = desc.check_rows(batch.rows) {
            return refused(e.into(), batch);
        }
        let (room, len) = (batch.room, batch.len);
        match self.admit(now, producer, &desc, room, len, batch) {
            Ok(id) => Ok(id),
            Err((error, batch)) => Err(Box::new(LaidRefusal { error, batch })),
        }
    }

    /// Admits a laid stream of `len` bytes behind `room` bytes, from `laid`: the byte bound,
    /// then one grant of credit. The buffer is taken only once admitted; a refusal gives
    /// `laid` back.
    fn admit<L: Laid>(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
        desc: &ProducerDescription,
        room: usize,
        len: usize,
        laid: L,
    ) -> Result<BatchId, (SubmitError, L)> {
        if let Err(e) = desc.check_bytes(len) {
            return Err((e.into(), laid));
        }
        let seq = self.seq();
        let Some(e) = self.producers.entries.touch(&producer) else {
            return Err((SubmitError::UnknownProducer, laid));
        };
        // Batches not yet out are bounded by one grant of credit.
        let (waiting, waiting_bytes) = e
            .batches
            .values()
            .filter(|b| !matches!(b.slot, Slot::Sent(_)))
            .fold((0u64, 0u64), |(n, b), p| (n + 1, b + p.ipc.len() as u64));
        if waiting >= u64::from(desc.granted_batches)
            || waiting_bytes + len as u64 > desc.granted_bytes
        {
            return Err((SubmitError::Full, laid));
        }
        self.producers.next_batch += 1;
        let id = BatchId(self.producers.next_batch);
        let buf = laid.take(&mut self.producers.spare);
        e.batches.insert(
            id,
            Pending {
                seq,
                ipc: Stream::Laid { buf, room, len },
                slot: Slot::Waiting,
                retries: 0,
                last: None,
            },
        );
        self.drive(now);
        Ok(id)
    }

    /// Closes a producer (P-8) with `CloseIngestorRequest`. Outcomes of batches already out
    /// arrive before its reply; batches not yet sent end as [`BatchOutcome::NotSent`]. A
    /// producer with no attachment now closes at once; one whose open (or restoration) is out
    /// is closed as soon as that open is answered (close wins over a restoration).
    pub fn close_producer(
        &mut self,
        now: Timestamp,
        producer: ProducerId,
    ) -> Result<(), super::ClientError> {
        let e = self
            .producers
            .entries
            .touch(&producer)
            .ok_or(super::ClientError::UnknownHandle)?;
        if e.close || e.state().is_final() {
            return Ok(());
        }
        e.close = true;
        let phase = e.phase;
        self.producers.drop_unsent(producer);
        if matches!(phase, Phase::Waiting | Phase::Backoff(_)) {
            self.producers
                .finish(producer, ProducerState::Closed, ProducerEvent::Closed);
        }
        self.drive(now);
        Ok(())
    }

    /// A producer as it stands. A finished one stays known until 1,024 newer producers finished
    /// after it and its events were all read; then it is forgotten (`None`), so a client that
    /// opens and closes producers for ever holds a bounded number of them.
    pub fn producer(&self, producer: ProducerId) -> Option<ProducerInfo> {
        self.producers.info(producer)
    }

    /// Where a batch stands; `Resolved` once its outcome was queued.
    pub fn batch_state(&self, producer: ProducerId, batch: BatchId) -> Option<BatchState> {
        self.producers.batch_state(producer, batch)
    }

    /// The stream of a batch the engine holds, until its outcome: once framed, a slice of
    /// the frame that carried it last, shared, not copied; before, a copy (its buffer is to
    /// become its first frame, finished in place). `None` for a batch not held.
    #[must_use]
    pub fn batch_stream(&self, producer: ProducerId, batch: BatchId) -> Option<Bytes> {
        let pending = self.producers.entries.get(&producer)?.batches.get(&batch)?;
        match &pending.ipc {
            Stream::Sent(b) => Some(b.clone()),
            Stream::Laid { buf, room, len } => {
                Some(Bytes::copy_from_slice(buf.get(*room..*room + *len)?))
            }
        }
    }

    /// The next event of one producer. Reading a batch's outcome returns the credit the batch
    /// held (P-4); batches waiting for it go at the next [`Client::handle_timeout`], which
    /// [`Client::poll_timeout`] then asks for at once.
    #[must_use]
    pub fn poll_producer_event(&mut self, producer: ProducerId) -> Option<ProducerEvent> {
        self.producers.poll(producer)
    }

    /// The next event of any producer; an outcome read here returns its credit as
    /// [`Client::poll_producer_event`] does.
    #[must_use]
    pub fn poll_producer_events(&mut self) -> Option<(ProducerId, ProducerEvent)> {
        self.producers.poll_any()
    }

    /// The next event of any producer for a driver that hands outcomes on to be read later:
    /// an [`ProducerEvent::Outcome`] taken here keeps the credit its batch holds until
    /// [`Client::release_outcome`] says the application read it or gave it up (P-4), so
    /// outcomes handed on and not yet read stay bounded by the grant.
    #[must_use]
    pub fn poll_producer_events_held(&mut self) -> Option<(ProducerId, ProducerEvent)> {
        self.producers.poll_any_held()
    }

    /// The application read (or gave up) the outcome of `batch` taken with
    /// [`Client::poll_producer_events_held`]: the credit it held comes back (P-4) and
    /// batches waiting for it go at the next [`Client::handle_timeout`], which
    /// [`Client::poll_timeout`] then asks for at once. False when the batch held no credit:
    /// released already, or its outcome not yet taken. Calling it twice is harmless.
    pub fn release_outcome(&mut self, producer: ProducerId, batch: BatchId) -> bool {
        self.producers.release(producer, batch)
    }

    /// Producer frames ignored: about a producer this client does not follow (P-2).
    pub fn ignored_producer_frames(&self) -> u64 {
        self.producers.ignored
    }

    pub(super) fn send_producer(&mut self, now: Timestamp, p: Purpose) {
        match p {
            Purpose::ProducerOpen(id) => {
                let Some(e) = self.producers.entries.get(&id) else {
                    return;
                };
                if !matches!(e.phase, Phase::Waiting | Phase::Backoff(_)) || e.close {
                    return;
                }
                let request = open_request(&e.spec);
                let deadline = now + self.config.call_timeout;
                if let Ok((session, _)) = self.send(now, p, &request, deadline) {
                    if let Some(e) = self.producers.entries.touch(&id) {
                        e.phase = Phase::Opening(session);
                    }
                }
            }
            Purpose::ProducerClose(id) => {
                let Some(e) = self.producers.entries.get(&id) else {
                    return;
                };
                let (Phase::Open(_), Some(wire)) = (e.phase, e.wire) else {
                    return;
                };
                let deadline = now + self.config.call_timeout;
                if let Ok((session, _)) = self.send(now, p, &close_request(wire), deadline) {
                    if let Some(e) = self.producers.entries.touch(&id) {
                        e.phase = Phase::Closing(session);
                    }
                }
            }
            Purpose::ProducerSubmit(id, b) => {
                let Some(e) = self.producers.entries.get(&id) else {
                    return;
                };
                let (Phase::Open(_), Some(wire), Some(desc)) = (e.phase, e.wire, &e.desc) else {
                    return;
                };
                let Some(pending) = e.batches.get(&b) else {
                    return;
                };
                let len = pending.ipc.len() as u64;
                // P-4, checked again at the moment of sending.
                if e.credit_batches >= desc.granted_batches
                    || e.credit_bytes + len > desc.granted_bytes
                    || e.admission != Admission::Open
                    || matches!(pending.slot, Slot::Sent(_))
                {
                    return;
                }
                // The frame is finished around the stream where it was written (P-3).
                let mut stream = match self
                    .producers
                    .entries
                    .touch(&id)
                    .and_then(|e| e.batches.get_mut(&b))
                {
                    Some(pending) => {
                        std::mem::replace(&mut pending.ipc, Stream::Sent(Bytes::new()))
                    }
                    None => return,
                };
                let stream_len = stream.len();
                let sent =
                    self.send_framed(now, p, ClientRequest::SubmitBatchRequest, |enc, id| {
                        let f = enc.submit_frame(id, wire, stream_len)?;
                        Ok(stream.frame(f))
                    });
                if let Some(pending) = self
                    .producers
                    .entries
                    .touch(&id)
                    .and_then(|e| e.batches.get_mut(&b))
                {
                    pending.ipc = stream;
                }
                // No deadline: a batch holds its credit until its outcome or its session's
                // end, and no CancelRequest is ever sent for it (P-7).
                match sent {
                    Ok((session, _)) => {
                        if let Some(e) = self.producers.entries.touch(&id) {
                            e.take_credit(len);
                            if let Some(pending) = e.batches.get_mut(&b) {
                                pending.slot = Slot::Sent(session);
                            }
                        }
                    }
                    Err(Some(error)) => {
                        // It can never travel; nothing of it was sent.
                        if let Some(e) = self.producers.entries.touch(&id) {
                            e.batches.remove(&b);
                        }
                        self.producers.push(
                            id,
                            ProducerEvent::Outcome {
                                batch: b,
                                outcome: BatchOutcome::Rejected {
                                    message: error.to_string(),
                                },
                            },
                        );
                    }
                    Err(None) => {}
                }
            }
            Purpose::ProducerRelease(wire) => {
                let deadline = now + self.config.call_timeout;
                if let Ok((session, _)) = self.send(now, p, &close_request(wire), deadline) {
                    self.producers.releases.retain(|r| *r != (session, wire));
                }
            }
            _ => {}
        }
    }

    pub(super) fn on_producer_reply(
        &mut self,
        now: Timestamp,
        session: SessionId,
        p: Purpose,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        match p {
            Purpose::ProducerOpen(id) => self.on_producer_open(now, session, id, frame),
            Purpose::ProducerSubmit(id, b) => {
                self.on_submission(now, session, id, b, frame);
                Ok(())
            }
            Purpose::ProducerClose(id) => {
                let Some(e) = self.producers.entries.get(&id) else {
                    return Ok(());
                };
                if e.phase != Phase::Closing(session) {
                    return Ok(());
                }
                let out = e
                    .batches
                    .values()
                    .filter(|b| b.slot == Slot::Sent(session))
                    .count();
                if out > 0 {
                    // P-8: every batch's outcome precedes the close's reply.
                    return Err(endpoint_violation(
                        "P-8",
                        format!("the close was answered with {out} batches unanswered"),
                    ));
                }
                self.producers
                    .finish(id, ProducerState::Closed, ProducerEvent::Closed);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn on_producer_open(
        &mut self,
        now: Timestamp,
        session: SessionId,
        id: ProducerId,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        let reply = read_open(frame)?;
        let wire = frame.view().body_as_reply().map_or(0, |r| r.request_id());
        let Some(e) = self.producers.entries.touch(&id) else {
            return Ok(());
        };
        if e.phase != Phase::Opening(session) {
            return Ok(());
        }
        if let OpenReply::Opened(desc) = &reply {
            if desc.domain != e.spec.domain || desc.ingestor != e.spec.ingestor {
                // P-1: the reply opens something this client did not ask for; it is not taken,
                // and the session (with the attachment it holds) is ended (F-8).
                return Err(endpoint_violation(
                    "P-1",
                    format!(
                        "an open of ingestor `{}` in `{}` was answered for `{}` in `{}`",
                        e.spec.ingestor, e.spec.domain, desc.ingestor, desc.domain
                    ),
                ));
            }
        }
        match reply {
            OpenReply::Opened(_) if e.close => {
                // P-8: close wins over the restoration; the late attachment is released.
                self.producers
                    .finish(id, ProducerState::Closed, ProducerEvent::Closed);
                self.producers.releases.push((session, wire));
            }
            OpenReply::Opened(desc) => {
                // P-2: followed before anything else is read.
                self.producers.wires.insert((session, wire), id);
                e.wire = Some(wire);
                e.phase = Phase::Open(session);
                e.admission = desc.admission;
                e.refusals = 0;
                match e.desc.clone() {
                    None => {
                        let desc: Arc<ProducerDescription> = Arc::from(desc);
                        e.desc = Some(desc.clone());
                        self.producers.push(id, ProducerEvent::Opened(desc));
                    }
                    Some(old) if old.restorable_by(&desc) => {
                        self.producers
                            .push(id, ProducerEvent::Restored(Arc::from(desc)));
                    }
                    Some(_) => {
                        // P-8: a changed endpoint needs an explicit new producer; the new
                        // attachment is released.
                        self.producers.wires.remove(&(session, wire));
                        self.producers.finish(
                            id,
                            ProducerState::ReopenRequired,
                            ProducerEvent::ReopenRequired(ReopenReason::Changed(desc)),
                        );
                        self.producers.releases.push((session, wire));
                    }
                }
            }
            OpenReply::Refused {
                refusal,
                message,
                defect,
            } => {
                if e.close {
                    self.producers
                        .finish(id, ProducerState::Closed, ProducerEvent::Closed);
                } else if e.desc.is_none() {
                    self.producers.finish(
                        id,
                        ProducerState::Refused,
                        ProducerEvent::Refused { refusal, message },
                    );
                } else if temporary(refusal) && !defect {
                    e.refusals = e.refusals.saturating_add(1);
                    let attempt = e.refusals - 1;
                    self.producers
                        .push(id, ProducerEvent::RestoreRefused { refusal, message });
                    let at = now + self.backoff(attempt);
                    if let Some(e) = self.producers.entries.touch(&id) {
                        e.phase = Phase::Backoff(at);
                    }
                } else {
                    self.producers.finish(
                        id,
                        ProducerState::ReopenRequired,
                        ProducerEvent::ReopenRequired(ReopenReason::Refused { refusal, message }),
                    );
                }
            }
        }
        Ok(())
    }

    fn on_submission(
        &mut self,
        now: Timestamp,
        session: SessionId,
        id: ProducerId,
        b: BatchId,
        frame: &ServerFrame,
    ) {
        let outcome = read_outcome(frame);
        let Some(e) = self.producers.entries.touch(&id) else {
            return;
        };
        let Some(pending) = e.batches.get_mut(&b) else {
            return;
        };
        if pending.slot != Slot::Sent(session) {
            return;
        }
        let len = pending.ipc.len() as u64;
        let closing = e.close || matches!(e.phase, Phase::Closing(_));
        let open = matches!(e.phase, Phase::Open(_));
        if retryable(&outcome) && open && !closing {
            // P-5: again after the ingestor's back-off, while admission is open.
            let delay = e
                .desc
                .as_ref()
                .map_or(Duration::ZERO, |d| d.retry_delay(pending.retries));
            pending.retries = pending.retries.saturating_add(1);
            pending.slot = Slot::Retrying(now + delay);
            pending.last = Some(outcome);
            e.return_credit(len);
            return;
        }
        e.batches.remove(&b);
        // P-4: its credit is held until its outcome is read.
        self.producers.held.insert((id, b), len);
        self.producers
            .push(id, ProducerEvent::Outcome { batch: b, outcome });
    }

    pub(super) fn on_producer_interrupted(
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
            Purpose::ProducerOpen(id) => {
                if let Some(e) = self.producers.entries.touch(&id) {
                    if matches!(e.phase, Phase::Opening(_)) && not_admitted {
                        e.phase = Phase::Waiting;
                        if e.close {
                            // Closed while its open was out, and the open never arrived:
                            // nothing is attached, so the close is complete.
                            self.producers
                                .finish(id, ProducerState::Closed, ProducerEvent::Closed);
                        }
                    }
                }
                if matches!(
                    cause,
                    Interruption::DeadlineExceeded | Interruption::Abandoned
                ) {
                    // An open left unanswered: the session is not carrying it.
                    self.retire.get_or_insert(super::Retire::Wedged);
                }
            }
            Purpose::ProducerSubmit(id, b) => {
                let Some(e) = self.producers.entries.touch(&id) else {
                    return;
                };
                let Some(pending) = e.batches.get_mut(&b) else {
                    return;
                };
                if !matches!(pending.slot, Slot::Sent(_)) {
                    return;
                }
                let len = pending.ipc.len() as u64;
                if not_admitted {
                    // Its frame never reached the ingestor: it waits to go again.
                    pending.slot = Slot::Waiting;
                    e.return_credit(len);
                }
                // Otherwise the session's loss reports it unknown (P-8).
            }
            Purpose::ProducerClose(id) => {
                if let Some(e) = self.producers.entries.touch(&id) {
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

/// A builder's fields equal the producer's, sensitivity included; the first that differs is
/// named.
fn same_fields(expected: &[FieldSpec], found: &[FieldSpec]) -> Result<(), BatchError> {
    for (i, spec) in expected.iter().enumerate() {
        let Some(f) = found.get(i) else {
            return Err(BatchError::Column {
                column: spec.name().to_string(),
                problem: ColumnProblem::Missing,
            });
        };
        let problem = if f.name() != spec.name() {
            Some(ColumnProblem::Name {
                found: f.name().to_string(),
            })
        } else if f.field_type() != spec.field_type() {
            Some(ColumnProblem::Type {
                expected: arrow::arrow_type(spec.field_type()).to_string(),
                found: arrow::arrow_type(f.field_type()).to_string(),
            })
        } else if f.nullable() != spec.nullable() {
            Some(ColumnProblem::Nullability {
                expected: spec.nullable(),
            })
        } else if f.sensitive() != spec.sensitive() {
            Some(ColumnProblem::Sensitivity {
                expected: spec.sensitive(),
            })
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(BatchError::Column {
                column: spec.name().to_string(),
                problem,
            });
        }
    }
    if let Some(extra) = found.get(expected.len()) {
        return Err(BatchError::Column {
            column: extra.name().to_string(),
            problem: ColumnProblem::Extra,
        });
    }
    Ok(())
}

#[cfg(test)]
mod stream_tests {
    use super::*;
    use crate::encode::Encoder;

    fn expected(rid: u64, wire: u64, ipc: &[u8]) -> Vec<u8> {
        let request = ClientRequestT::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
            producer: wire,
            batch: ipc.to_vec(),
        }));
        Encoder::new()
            .encode_request(rid, &request)
            .unwrap()
            .to_vec()
    }

    fn laid(room: usize, ipc: &[u8]) -> Stream {
        let mut buf = BytesMut::new();
        // Stale bytes where the head and the tail go: they must all be written over.
        buf.put_bytes(0xAA, room);
        buf.extend_from_slice(ipc);
        buf.put_bytes(0, TAIL_ROOM);
        Stream::Laid {
            buf,
            room,
            len: ipc.len(),
        }
    }

    #[test]
    fn p_3_a_laid_stream_is_framed_in_place_and_then_copied() {
        let mut enc = Encoder::new();
        let mut producers = Producers::default();
        let room = producers.head_room();
        for len in [8, 16, 1024, 4096] {
            let ipc: Vec<u8> = (0..len).map(|i| (i % 13 + 1) as u8).collect();
            let mut s = laid(room, &ipc);
            let Stream::Laid { buf, .. } = &s else {
                unreachable!()
            };
            let at = buf.as_ptr();
            let frame = s.frame(enc.submit_frame(9, 4, len).unwrap());
            // The first frame is the stream's own buffer, finished around it.
            assert_eq!(frame.as_ptr(), at, "{len}");
            assert_eq!(frame.to_vec(), expected(9, 4, &ipc));
            assert!(matches!(&s, Stream::Sent(b) if b[..] == ipc[..]));
            // A later frame is a copy, under its own identities.
            let again = s.frame(enc.submit_frame(10, 5, len).unwrap());
            assert_ne!(again.as_ptr(), frame.as_ptr());
            assert_eq!(again.to_vec(), expected(10, 5, &ipc));
            assert_eq!(frame.to_vec(), expected(9, 4, &ipc));
        }
        // A head that does not fit the room (a length not a multiple of 8) is copied.
        for len in [1, 7, 13] {
            let ipc: Vec<u8> = (0..len).map(|i| (i % 13 + 1) as u8).collect();
            let mut s = laid(room, &ipc);
            let frame = s.frame(enc.submit_frame(3, 2, len).unwrap());
            assert_eq!(frame.to_vec(), expected(3, 2, &ipc), "{len}");
            assert!(matches!(&s, Stream::Sent(b) if b[..] == ipc[..]));
        }
    }
}
