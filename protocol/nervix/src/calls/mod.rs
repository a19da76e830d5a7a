//! The separate calls: a resource upload (U-1 to U-5), the download of a backup's archive
//! and a restore (RS-1 to RS-5, the manual's P-1 to P-5 of Restore Streams).
//!
//! Each call is a sans-IO machine of its own, driven on its own transport stream, never on the
//! session: [`UploadCall`], [`BackupDownload`], [`RestoreCall`]. The archive passes through in
//! pieces: a sending call asks for the next piece ([`Need::Piece`]) and turns it into exactly one
//! frame; the download hands out the bytes of each chunk frame as it checks them. No call holds
//! an archive whole, and every call hashes what passes with BLAKE3 as it passes.
//!
//! Time is an input: every call takes `now` and reports its next deadline with `poll_timeout`.
//! An attempt that ends without its answer leaves the call ready for another attempt, which
//! repeats the whole archive from its first byte under the same identity or reference; a call
//! never makes a new identity.
//!
//! How the [`crate::client::Client`] hands these calls out, and why as typed values the
//! application drives rather than as actions of the client: `UPLOAD RESOURCE` and `RESTORE` give
//! [`crate::client::Routed::Upload`] and [`crate::client::Routed::Restore`], and a completed
//! `BACKUP` carries the summary [`BackupDownload::from_report`] reads. The archive's bytes come
//! from a source only the application holds (a file, any reader), the calls share nothing with
//! the session (no request identities, no restoration order, no in-flight limit), and each runs
//! for as long as its archive takes, so the client's session machinery has nothing to add.

mod attempt;
mod backup;
mod restore;
mod sender;
mod upload;

pub use backup::{BackupDownload, DownloadEnd, DownloadStep};
pub use restore::{
    RestoreCall, RestoreOutcome, RestoreStep, RestoreSummary, RestoredDomainInfo,
    RestoredUsersInfo, StepInfo,
};
pub use sender::ChunkFrame;
pub use upload::{UploadCall, UploadOutcome, UploadSpec, UploadStep};

pub(crate) use restore::canonical as canonical_restore;

use crate::endpoint::Endpoint;
use crate::schema::LeaderRedirect;
use crate::violation::ProtocolViolation;
use std::time::Duration;

/// The chunk size of an upload: 64 KiB (U-1).
pub const UPLOAD_CHUNK: usize = 64 * 1024;

/// The chunk size of a restore: 256 KiB (RS-1).
pub const RESTORE_CHUNK: usize = 256 * 1024;

/// A BLAKE3 digest.
pub type Digest = [u8; 32];

/// How far a separate call has come: the attempt under way and how many of the archive's bytes
/// it has moved. Read with `progress()` on [`UploadCall`], [`BackupDownload`] or [`RestoreCall`]
/// between inputs; it is a few counters, never a copy of the data.
///
/// Every attempt moves the archive from its first byte, so a report whose `attempt` is higher
/// than the last one's is a restart and its `done` starts again from zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Progress {
    /// The attempt under way, counted from 1; 0 before the first starts.
    pub attempt: u32,
    /// Bytes of the archive this attempt has moved: turned into frames by a sending call,
    /// checked and handed out by a download.
    pub done: u64,
    /// The archive's size.
    pub total: u64,
}

impl Progress {
    /// `done` of `total` bytes in attempt `attempt`.
    pub fn new(attempt: u32, done: u64, total: u64) -> Self {
        Self {
            attempt,
            done,
            total,
        }
    }

    /// The share of the archive this attempt has moved, from 0.0 to 1.0.
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        (self.done.min(self.total) as f64) / (self.total as f64)
    }

    /// Whether this attempt has moved the whole archive (the answer may still be to come).
    pub fn is_whole(&self) -> bool {
        self.attempt > 0 && self.done >= self.total
    }
}

/// An archive's exact size and BLAKE3 digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArchiveInfo {
    /// Size in bytes.
    pub total_bytes: u64,
    /// BLAKE3 of exactly those bytes.
    pub digest: Digest,
}

/// The size and BLAKE3 digest of an archive, computed piece by piece as it is read.
#[derive(Debug, Clone, Default)]
pub struct ArchiveDigest {
    hasher: blake3::Hasher,
    len: u64,
}

impl ArchiveDigest {
    /// Nothing read yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the next piece.
    pub fn update(&mut self, piece: &[u8]) {
        self.hasher.update(piece);
        self.len += piece.len() as u64;
    }

    /// Bytes added so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The size and digest of everything added.
    pub fn finish(&self) -> ArchiveInfo {
        ArchiveInfo {
            total_bytes: self.len,
            digest: *self.hasher.finalize().as_bytes(),
        }
    }
}

/// Limits of a call's waits and the size of its chunks. The calls are never bounded by a
/// command's request deadline (A-6, RS-5): each frame and the reply have a wait of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransferConfig {
    /// Bytes per chunk frame: 64 KiB for uploads, 256 KiB for restores by default.
    pub chunk_size: usize,
    /// The longest wait for the next frame: the next piece to send (the previous frame not
    /// yet written), or the next frame of a download. Default 30 s.
    pub frame_timeout: Duration,
    /// The longest wait for the reply once the last frame is sent, or for a download's first
    /// frame. Default 2 minutes.
    pub reply_timeout: Duration,
}

impl TransferConfig {
    /// The defaults of an upload: 64 KiB chunks.
    pub fn upload() -> Self {
        Self {
            chunk_size: UPLOAD_CHUNK,
            frame_timeout: Duration::from_secs(30),
            reply_timeout: Duration::from_secs(120),
        }
    }

    /// The defaults of a restore: 256 KiB chunks.
    pub fn restore() -> Self {
        Self {
            chunk_size: RESTORE_CHUNK,
            ..Self::upload()
        }
    }

    /// The defaults of a download (the chunk size is the server's).
    pub fn download() -> Self {
        Self::upload()
    }

    /// These limits with `chunk_size` bytes per chunk frame.
    pub fn with_chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size;
        self
    }

    /// These limits with other waits.
    pub fn with_timeouts(mut self, frame_timeout: Duration, reply_timeout: Duration) -> Self {
        self.frame_timeout = frame_timeout;
        self.reply_timeout = reply_timeout;
        self
    }
}

/// The leader a redirect names (D-1, D-2); each endpoint only when it is a valid origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// The leader's node name.
    pub node: String,
    /// Its gRPC origin.
    pub grpc_uri: Option<Endpoint>,
    /// Its console origin (for the WebSocket calls, T-3a).
    pub web_console_uri: Option<Endpoint>,
}

impl Leader {
    pub(crate) fn of(redirect: &LeaderRedirect<'_>) -> Option<Self> {
        redirect.leader().map(|l| Leader {
            node: l.node().to_string(),
            grpc_uri: l.grpc_uri().and_then(|u| Endpoint::parse(u).ok()),
            web_console_uri: l.web_console_uri().and_then(|u| Endpoint::parse(u).ok()),
        })
    }
}

/// What a call needs next from its driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Need {
    /// Open a new stream and write the frame of `start` (or `request` for a download).
    Start,
    /// Read the archive's bytes at `offset` (at most `len` of them, at least one) and pass them
    /// in; each piece becomes one chunk frame.
    Piece {
        /// Where in the archive.
        offset: u64,
        /// At most this many bytes.
        len: usize,
    },
    /// Every frame is written: half-close the stream (or, on a console WebSocket, keep the
    /// connection open, T-3a) and wait for the reply.
    Reply,
    /// Read the stream's next frame (a download).
    Frame,
    /// The call has ended; nothing more to do.
    Nothing,
}

/// Why an attempt ended without its answer. The call may be repeated whole.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Interruption {
    /// The transport failed or the stream ended (a WebSocket close 1001 included, T-3a).
    Transport,
    /// A frame or the reply did not come in time, or the attempt's deadline passed.
    Stalled,
    /// The server's frame broke the protocol.
    Violation(CallViolation),
}

/// What a server's frame on a separate call got wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallViolation {
    /// The frame failed its checks.
    #[error(transparent)]
    Frame(#[from] ProtocolViolation),
    /// The reply echoes another request_id than the start carried (U-3, RS-3).
    #[error("the reply names request {found:?}, the start carried {sent}")]
    RequestId {
        /// The start's.
        sent: u64,
        /// The reply's.
        found: Option<u64>,
    },
    /// The reply names another upload identity or execution reference (U-3, RS-3).
    #[error("the reply names {found:?}, the call sent {sent:?}")]
    Identity {
        /// What the call sent.
        sent: String,
        /// What the reply names.
        found: String,
    },
    /// A download frame out of the order of A-2.
    #[error("{found} where the download expects {expected}")]
    Order {
        /// What came.
        found: &'static str,
        /// What may come.
        expected: &'static str,
    },
    /// The archive's announced size or digest is not the summary's.
    #[error("the archive announces {found_bytes} bytes and another digest than the summary's {expected_bytes} bytes")]
    NotTheSummary {
        /// The summary's size.
        expected_bytes: u64,
        /// The announced size.
        found_bytes: u64,
    },
    /// The archive grew past its declared size.
    #[error("the archive grew to {received} bytes, past its {total} bytes")]
    Overgrown {
        /// Bytes received with this chunk.
        received: u64,
        /// The declared size.
        total: u64,
    },
    /// The archive completed short of its size or with another digest.
    #[error("the archive completed with {received} of {total} bytes or another digest")]
    NotVerified {
        /// Bytes received.
        received: u64,
        /// The declared size.
        total: u64,
    },
    /// A disposition a restore never has (it holds no transaction and no preview).
    #[error("a restore answered with {0}")]
    Disposition(&'static str),
}

/// Why the application's use of a call was refused. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// An upload identity or execution reference that is not 1 to 128 bytes of ASCII letters,
    /// digits, `-`, `_` and `.` (U-2, E-1).
    #[error("invalid identity: {0}")]
    Identity(#[from] crate::command::ReferenceError),
    /// A domain, resource or statement that is empty.
    #[error("`{0}` must not be empty")]
    Empty(&'static str),
    /// Not exactly one RESTORE statement (RS-1).
    #[error("a restore carries exactly one RESTORE statement")]
    NotARestore,
    /// An archive of zero bytes, which neither call can carry (U-1, RS-1).
    #[error("an archive of zero bytes cannot be sent")]
    EmptyArchive,
    /// A chunk size of zero, or one that does not fit one frame.
    #[error("chunk size {0} is not between 1 byte and what one frame carries")]
    ChunkSize(usize),
    /// Not what the call needs now (see its `need`).
    #[error("the call needs {needs:?}, not this")]
    OutOfTurn {
        /// What it needs.
        needs: Need,
    },
    /// An empty piece, or one longer than asked for.
    #[error("a piece of {len} bytes where 1 to {max} were asked for")]
    Piece {
        /// The piece's length.
        len: usize,
        /// The most asked for.
        max: usize,
    },
    /// The archive's bytes are not those the call declared or streamed before (U-2, RS-2):
    /// the last frame was withheld, so the attempt carried no complete archive. End the stream
    /// without a half-close.
    #[error("the archive's bytes changed: they no longer hash to what was declared")]
    ArchiveChanged,
    /// The file given as the archive does not hold exactly the call's archive size (U-2,
    /// RS-2): a call streams the whole file, so a file that grew or shrank since the call was
    /// made is not its archive. Refused before anything was sent.
    #[error("the archive is {declared} bytes but the file holds {found}")]
    ArchiveSize {
        /// The call's archive size.
        declared: u64,
        /// The file's size.
        found: u64,
    },
    /// The call ended; its outcome says whether the archive may be sent again.
    #[error("the call has ended")]
    Ended,
    /// The request cannot be written (a send limit, F-6).
    #[error(transparent)]
    Unsendable(#[from] crate::encode::EncodeError),
    /// The command's outcome carries no backup summary: there is no archive to download.
    #[error("the outcome carries no backup summary")]
    NoArchive,
}

/// The resource an `UPLOAD RESOURCE <resource> ...` statement names: the word after
/// `RESOURCE`, unquoted.
pub(crate) fn upload_resource(statement: &str) -> Option<String> {
    let mut words = statement.split_whitespace();
    let (Some(a), Some(b)) = (words.next(), words.next()) else {
        return None;
    };
    if !a.eq_ignore_ascii_case("UPLOAD") || !b.eq_ignore_ascii_case("RESOURCE") {
        return None;
    }
    let name = words.next()?.trim_end_matches(';');
    let name = name
        .strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .unwrap_or(name);
    (!name.is_empty()).then(|| name.to_string())
}
