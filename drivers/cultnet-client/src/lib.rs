//! The CultNet write-receipt client over real sockets.
//!
//! The carrier is the direct-pipe framing of `cultnet-receipts` (a 4-byte big-endian length, then a
//! MessagePack frame) over TCP, or TLS through `sansio-kit`. Every put and delete goes through the
//! engine's [`WriteTracker`](cultnet_receipts::tracker::WriteTracker), which settles it exactly once as admitted, refused or unconfirmed.
//! The driver owns time: it reads a [`Clock`] and hands the reading to the tracker as `now`.
//!
//! * [`blocking`]: the blocking client. Every wait has a deadline: the connect deadline, the write
//!   deadline, and the result window of the write being waited for.
//! * `tokio` (feature `tokio`): the async client, of the same shape.
//! * [`loopback`]: a receipt server on 127.0.0.1 running the `cultnet-sim` server model on threads,
//!   with faults (silence, late answers, a legacy server with no hello, a dropped connection).
//!
//! Neither receipts nor send-only is the default (W-46): `put`, `delete` and `batch` take a
//! [`WriteMode`] at every call, and [`WriteMode`] has no `Default`, so the type system makes the
//! caller choose. [`WriteMode::Receipt`] waits for the server's answer; [`WriteMode::SendOnly`] is
//! the explicit opt-in of one call: such a write settles [`Outcome::Sent`] once the stream took its
//! frame (the write and flush completed, which is all the acknowledgement a TCP or TLS stream
//! gives the application; it does not prove the server read the frame), and is never admitted.
//! The throwing-style calls (`put_admitted`, `delete_admitted`, `batch_admitted`) ask for
//! admission by their name, so they are receipt writes.
//!
//! The seed's RUDP channels are not modelled here: a stream carrier is reliable and ordered, and
//! the loopback server hands every frame to the model as such.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cultnet_receipts::tracker::TrackerLimits;
pub use cultnet_receipts::tracker::{
    BatchOutcome, Confirmation, LateAnswer, Outcome, Refusal, UnconfirmedReason, WriteError,
    WriteHandle, WriteMode, WriteState,
};
use cultnet_receipts::{DecodeError, EncodeError, FramingError, TrackerError};
pub use sansio_kit::dial::Target;
pub use sansio_kit::resolve::{ConnectError, Resolver};

pub mod blocking;
pub mod loopback;
mod session;
#[cfg(feature = "tokio")]
pub mod tokio;

/// A monotonic clock in milliseconds: the only source of time the client has.
pub trait Clock: Send + Sync {
    /// Milliseconds since some fixed point; never goes back.
    fn now_ms(&self) -> u64;
}

/// The process's monotonic clock, counted from the moment this value was made.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    start: Instant,
}

impl MonotonicClock {
    /// A clock reading zero now.
    #[must_use]
    pub fn new() -> Self {
        MonotonicClock {
            start: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// How a client connects and what it bounds.
#[derive(Clone)]
pub struct ClientConfig {
    /// How long opening the connection (lookup, TCP, TLS handshake, our hello) may take.
    pub connect_timeout: Duration,
    /// How long writing one frame (or a batch's frames) may take.
    pub write_timeout: Duration,
    /// The largest frame accepted or sent, in bytes.
    pub max_frame_bytes: usize,
    /// The tracker's bounds on writes in flight and settled writes kept.
    pub limits: TrackerLimits,
    /// The runtime id the client's hello carries.
    pub runtime_id: String,
    /// A random value keeping this client's messageIds apart from other clients' (the tracker
    /// draws no randomness of its own). Each connection folds the process's connection count
    /// into it, so connecting again with the same configuration mints new ids.
    pub nonce: u64,
    /// Whether the client sends a receipt hello. Without it the server treats the connection as
    /// legacy (no receipts), which a client only wants for tests; the client then applies the
    /// legacy result window whatever the server's hello lists, and reports no missed window.
    pub send_hello: bool,
    /// The resolver host names are looked up with.
    pub resolver: Resolver,
    /// The TLS configuration for a TLS target (a TLS target without one is refused).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The clock the client reads.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("connect_timeout", &self.connect_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("max_frame_bytes", &self.max_frame_bytes)
            .field("limits", &self.limits)
            .field("runtime_id", &self.runtime_id)
            .field("nonce", &self.nonce)
            .field("send_hello", &self.send_hello)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientConfig {
    /// Defaults: 10 s to connect, 10 s per write, the framing's default frame cap, the tracker's
    /// default bounds, a receipt hello, the system resolver, no TLS, the process's clock.
    #[must_use]
    pub fn new(runtime_id: impl Into<String>, nonce: u64) -> Self {
        ClientConfig {
            connect_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            max_frame_bytes: cultnet_receipts::framing::DEFAULT_MAX_FRAME_BYTES,
            limits: TrackerLimits::default(),
            runtime_id: runtime_id.into(),
            nonce,
            send_hello: true,
            resolver: Resolver::system(),
            tls: None,
            clock: Arc::new(MonotonicClock::new()),
        }
    }
}

/// Why a client call failed before the write could settle, or why the client is unusable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection could not be opened.
    #[error("could not connect: {0}")]
    Connect(#[from] ConnectError),
    /// The tracker refused the request (bounds, unknown write, ...).
    #[error("the tracker refused the request: {0}")]
    Tracker(#[from] TrackerError),
    /// A frame of ours could not be encoded (an application error).
    #[error("the frame could not be encoded: {0}")]
    Encode(#[from] EncodeError),
    /// A frame of ours exceeds the frame cap (an application error).
    #[error("the frame is too large: {0}")]
    Framing(#[from] FramingError),
    /// The connection's session has ended; connect again (a new session).
    #[error("the session has ended")]
    SessionEnded,
    /// A batch of no members (an application error): no answer could ever admit it, so it is
    /// refused at the call and nothing is sent.
    #[error("a batch needs at least one member")]
    EmptyBatch,
}

/// A protocol violation of the peer: it ends the session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The length prefix declared a frame above the cap.
    Framing(FramingError),
    /// A frame did not decode (counted; it settles nothing).
    Decode(DecodeError),
}

/// Counters of the transport.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransportCounters {
    /// Frames received that did not decode; each settled nothing.
    pub undecodable_frames: u64,
    /// Frames received that are not answers (writes, a repeated hello); each settled nothing.
    pub ignored_frames: u64,
    /// Hellos received from the server.
    pub hellos: u64,
    /// Frames received whole (each counted once, whatever it was).
    pub frames_in: u64,
    /// Their bytes, length prefixes included.
    pub bytes_in: u64,
    /// Frames the stream took whole (written and flushed).
    pub frames_out: u64,
    /// Their bytes, length prefixes included.
    pub bytes_out: u64,
}

/// What a client has done and holds now: its transport's counters and its tracker's statistics
/// (writes by outcome, late answers, what is in flight and kept, what was ignored or dropped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Frames and bytes each way, and what the transport ignored.
    pub transport: TransportCounters,
    /// The write tracker's statistics.
    pub tracker: cultnet_receipts::tracker::TrackerStats,
}

/// A write that settled, as the caller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The write's handle (its state records a late answer).
    pub handle: WriteHandle,
    /// The write's messageId.
    pub message_id: String,
    /// What it settled as.
    pub outcome: Outcome,
}

/// A batch that settled: the batch's outcome is only the set of its members'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchWritten {
    /// Admitted when every member was, refused when any was, unconfirmed otherwise.
    pub outcome: BatchOutcome,
    /// Every member in the order given.
    pub members: Vec<Written>,
}

/// One member of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchWrite {
    /// A put of a document.
    Put(cultnet_receipts::frames::Document),
    /// A delete of a record.
    Delete {
        /// The schema.
        schema_id: String,
        /// The record.
        record_key: String,
    },
}

/// The throwing-style failure of a write: refused and unconfirmed are distinct, and a client
/// failure is a third kind. Only an admitted write returns `Ok`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteFailure {
    /// The server refused the write.
    #[error("the write was refused: {}", .refusal.error)]
    Refused {
        /// The write.
        handle: WriteHandle,
        /// The refusal.
        refusal: Refusal,
    },
    /// Nothing confirmed the write: it may or may not have been applied. Consult the handle's
    /// state (a late answer is recorded there) before resending.
    #[error("the write is unconfirmed ({reason:?})")]
    Unconfirmed {
        /// The write.
        handle: WriteHandle,
        /// Why.
        reason: UnconfirmedReason,
    },
    /// A send-only write came back `sent`; the throwing API only returns for admitted.
    #[error("the write was only sent, never admitted")]
    OnlySent {
        /// The write.
        handle: WriteHandle,
    },
    /// The client could not make the write.
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// The throwing-style failure of a batch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BatchFailure {
    /// These members were refused (the others may be admitted: nothing is rolled back).
    #[error("{} member(s) of the batch were refused", .refused.len())]
    Refused {
        /// The refused members.
        refused: Vec<WriteHandle>,
        /// Every member.
        members: Vec<Written>,
    },
    /// No member was refused, but these were not confirmed.
    #[error("{} member(s) of the batch are unconfirmed", .unconfirmed.len())]
    Unconfirmed {
        /// The unconfirmed members.
        unconfirmed: Vec<WriteHandle>,
        /// Every member.
        members: Vec<Written>,
    },
    /// The client could not make the batch.
    #[error(transparent)]
    Client(#[from] ClientError),
}

impl Written {
    /// Admitted as `Ok`; refused, unconfirmed and sent as distinct failures.
    pub fn into_admitted(self) -> Result<WriteHandle, WriteFailure> {
        let handle = self.handle;
        match self.outcome {
            Outcome::Admitted => Ok(handle),
            Outcome::Refused(refusal) => Err(WriteFailure::Refused { handle, refusal }),
            Outcome::Unconfirmed { reason, .. } => {
                Err(WriteFailure::Unconfirmed { handle, reason })
            }
            _ => Err(WriteFailure::OnlySent { handle }),
        }
    }
}

impl BatchWritten {
    /// Every member admitted as `Ok`; otherwise the refused or unconfirmed members.
    pub fn into_admitted(self) -> Result<Vec<WriteHandle>, BatchFailure> {
        match self.outcome {
            BatchOutcome::Admitted => Ok(self.members.iter().map(|m| m.handle).collect()),
            BatchOutcome::Refused(refused) => Err(BatchFailure::Refused {
                refused,
                members: self.members,
            }),
            BatchOutcome::Unconfirmed(unconfirmed) => Err(BatchFailure::Unconfirmed {
                unconfirmed,
                members: self.members,
            }),
            _ => Err(BatchFailure::Unconfirmed {
                unconfirmed: self.members.iter().map(|m| m.handle).collect(),
                members: self.members,
            }),
        }
    }
}
