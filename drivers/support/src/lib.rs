//! # nervix-driver-support
//!
//! What every Nervix driver shares around the sans-IO engine, with the standard library and
//! rustls alone (no async runtime): each driver keeps only its runtime, its sockets and how
//! it waits; the decisions and the types both drivers' APIs share are here.
//!
//! * [`api`]: what both drivers' public APIs give alike: [`api::Error`],
//!   [`api::DriverEvent`] and [`api::RunResult`], re-exported by each driver.
//! * [`ArchiveWriter`]: a downloaded backup archive is written to a temporary file beside the
//!   name the user asked for, readable by its owner only, flushed to disk, and renamed into
//!   place only when the download's verdict is [`DownloadEnd::Verified`]. A failed, cut or
//!   abandoned download, or a process killed mid-way, leaves nothing under the final name.
//! * [`ArchiveSource`]: an archive read in the pieces a sending call asks for, never whole in
//!   memory, and [`ArchiveSource::info`], its size and BLAKE3 digest in one streaming pass;
//!   [`ArchiveSource::piece_bytes`] reads each piece into a buffer a call's `chunk_parts`
//!   passes on without copying.
//! * [`credentials`]: Basic credentials, how a WebSocket presents them, and console URLs.
//! * [`clocks`]: the followed clock a clock event goes to, and the one unread event of
//!   each kind a clock keeps while its reader is behind (K-3).
//! * [`config`]: the checks every driver's configuration makes (seeds, credentials, TLS
//!   roots) and [`config::ConfigError`], which says which failed.
//! * [`dial`]: what opening a connection decides alike in every driver: an endpoint's host
//!   and port ([`dial::target`]), and from `sansio-kit` the resolver, the addresses in the
//!   order of the answer, and TLS verified against the endpoint's own host name (T-2).
//! * [`resolve`]: `sansio-kit`'s resolver a driver looks host names up with (the system's by
//!   default), and why a connection could not be opened.
//! * [`call_end`]: what a separate call's transport ending without an answer means (T-5,
//!   T-6, T-3): ended, or repeated after a growing pause.
//! * [`attempts`]: the retry loop of a separate call without its sleeping: where each
//!   attempt goes, what its end means, the pause before the next, and what a call that ran
//!   out of attempts reports; the deadlines of its waits (T-2, T-8, U-4, A-5, RS-4).
//! * [`transfer`]: the separate calls' error written once for both drivers
//!   ([`transfer_error!`]), where they go ([`transfer::CallSetup`]), and their retry loop as a
//!   plan a driver asks what comes next ([`transfer::CallPlan`]): an attempt, a pause, or the
//!   end (U-4, A-5, RS-4, T-2, T-5, T-6).
//! * [`session`]: what a session's transport and its driver say to each other ([`session::End`],
//!   [`session::Event`], [`session::Out`]) and what a console's closes and refusals mean (T-3,
//!   T-5).
//! * [`unclaimed`]: the bounded store of command outcomes whose callers stopped waiting
//!   (C-10), shared by a driver and its pending commands, bounded in count and bytes, with
//!   what the bounds drop counted: `sansio-kit`'s store with the Nervix weights, uncertain
//!   outcomes the precious ones.
//! * [`driver_core`]: the driver core both drivers run their loop around ([`driver_core::Core`]):
//!   the application's calls, the commands and reads in flight, the sessions' events and the
//!   frames their transports have no room for yet, parking after a refusal (T-5, T-6, T-3),
//!   subscription and clock streams, and the unclaimed outcomes (C-10); generic over how a
//!   driver hands results back, starts sessions and feeds streams ([`driver_core::Seam`]).
//! * [`dataplane`]: producers and emitter consumers between the engine and the
//!   application's handles, written once for every driver and generic over its channels
//!   ([`dataplane::Hand`]): outcomes held until read (P-4), submissions waiting for room in
//!   the order they were made, withdrawn ones never taken (C-10), dropped handles closed.
//! * [`released`]: batch outcomes the application read or gave up, on their way back to the
//!   driver, whose credit is held until then (P-4).
//! * `journal` (feature `journal`): the client journal on disk, a slot directory
//!   `<dir>/<sender>/` held by one client at a time, in which commands, uploads, restores and
//!   producer batches are kept until their outcome is handed on, and recovered after a restart.
//!   With feature `testkit` (the driver tests' alone), `journal::testkit` lets a test fail a
//!   journal write at a chosen moment; it does nothing until a test arms it.
//! * `transfer_journal` (feature `journal`): the client's journal shared with its separate
//!   calls, so an upload or a restore is journaled before its first byte is sent, ended at its
//!   outcome, and repeated after a restart under the same identity.
//! * [`exports`]: the names both drivers' crate roots re-export alike, listed once.
//! * [`observe`]: `sansio-kit`'s observer queues bounded in count and bytes; what an
//!   observer does not read in time is dropped for it alone, counted, and reported in its
//!   place.
//!
//! Everything here that knows no Nervix (name lookups, dialling, TLS, WebSocket and gRPC
//! transports, back-off, observer queues, the store of unclaimed outcomes) is written once in
//! `sansio-kit`, which the drivers of other engines share; this crate adds the Nervix
//! decisions on top and re-exports the moved modules under their old names.

pub mod api;
pub mod attempts;
pub mod call_end;
pub mod clocks;
pub mod config;
pub mod credentials;
pub mod dataplane;
pub mod dial;
pub mod driver_core;
pub mod exports;
pub mod host_time;
#[cfg(feature = "journal")]
pub mod journal;
#[cfg(feature = "journal")]
pub mod journaled;
pub mod progress_line;
pub mod released;
#[cfg(feature = "journal")]
pub mod transfer_journal;
pub use sansio_kit::resolve;
pub mod session;
pub mod transfer;

use arrow_array::RecordBatch;
use nervix_protocol::arrow::{BatchBuilder, BatchError};

/// What a producer's `submit` takes, in every driver: an application's own batch, checked
/// against the producer's fields, or one made with the producer's batch builder.
#[derive(Debug)]
#[non_exhaustive]
pub enum Submission {
    /// An application's batch; the first column that does not match is named.
    Batch(RecordBatch),
    /// A batch built for the producer's fields.
    Built(BatchBuilder),
    /// A batch the client's journal returned after a restart, never handed to the transport
    /// (feature `journal`): it is submitted again under its own record, through a producer of
    /// its domain and ingestor, at most once.
    #[cfg(feature = "journal")]
    Journaled(crate::journaled::UnsentBatch),
}

impl Submission {
    /// The batch to hand to the engine: a builder is finished here (checked against the
    /// fields it was made for), so a batch that must wait for room can be kept and offered
    /// again.
    pub fn into_batch(self) -> Result<RecordBatch, BatchError> {
        match self {
            Self::Batch(b) => Ok(b),
            Self::Built(b) => b.finish(),
            // A client with a journal reads it back with its producer's fields; one without
            // cannot take it.
            #[cfg(feature = "journal")]
            Self::Journaled(_) => Err(BatchError::Ipc(
                "a batch a journal returned is submitted again only by a client that keeps a journal"
                    .into(),
            )),
        }
    }
}

impl From<RecordBatch> for Submission {
    fn from(b: RecordBatch) -> Self {
        Self::Batch(b)
    }
}

#[cfg(feature = "journal")]
impl From<crate::journaled::UnsentBatch> for Submission {
    fn from(b: crate::journaled::UnsentBatch) -> Self {
        Self::Journaled(b)
    }
}

impl From<BatchBuilder> for Submission {
    fn from(b: BatchBuilder) -> Self {
        Self::Built(b)
    }
}
pub use sansio_kit::observe;
pub mod unclaimed;

use bytes::{Bytes, BytesMut};
use nervix_protocol::calls::{ArchiveDigest, ArchiveInfo, CallError, DownloadEnd};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporary files of one process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Why an archive was not put in place.
#[derive(Debug)]
pub enum CommitError {
    /// The download's verdict is not Verified: the temporary file was removed.
    NotVerified,
    /// The bytes written are not the verified size: the temporary file was removed.
    SizeMismatch {
        /// Bytes written.
        written: u64,
        /// The verified size.
        expected: u64,
    },
    /// Writing, flushing or renaming failed: the temporary file was removed.
    Io(io::Error),
}

impl std::error::Error for CommitError {}

impl std::fmt::Display for CommitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotVerified => write!(f, "the archive was not verified"),
            Self::SizeMismatch { written, expected } => {
                write!(f, "{written} bytes written where {expected} were verified")
            }
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for CommitError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// A backup archive being written: bytes go to a temporary file in the target's directory and
/// reach the target's name only through [`ArchiveWriter::commit`] with a verified verdict.
/// Dropping the writer without a commit removes the temporary file.
#[derive(Debug)]
pub struct ArchiveWriter {
    target: PathBuf,
    temp: PathBuf,
    file: Option<File>,
    written: u64,
}

impl ArchiveWriter {
    /// Starts writing the archive meant for `target`. The temporary file is created new in
    /// the same directory (so the final rename stays on one file system), hidden, and readable
    /// and writable by its owner only.
    pub fn create(target: &Path) -> io::Result<Self> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".partial-{}-{n}", std::process::id()));
        let temp = dir.join(temp_name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&temp)?;
        Ok(Self {
            target: target.to_path_buf(),
            temp,
            file: Some(file),
            written: 0,
        })
    }

    /// The temporary file's path.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends the next bytes the download handed out.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("the writer has ended"))?;
        file.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Forgets everything written, for a download that starts again from its first byte
    ///
    pub fn restart(&mut self) -> io::Result<()> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("the writer has ended"))?;
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        self.written = 0;
        Ok(())
    }

    /// Puts the archive under its final name when `verdict` is Verified and exactly the
    /// verified size was written: the file is flushed to disk, renamed over the target, and
    /// the directory flushed. Any other verdict, or a failure on the way, removes the
    /// temporary file and leaves the target untouched.
    pub fn commit(mut self, verdict: &DownloadEnd) -> Result<PathBuf, CommitError> {
        let DownloadEnd::Verified(info) = verdict else {
            return Err(CommitError::NotVerified);
        };
        if self.written != info.total_bytes {
            return Err(CommitError::SizeMismatch {
                written: self.written,
                expected: info.total_bytes,
            });
        }
        let file = self.file.take().ok_or(CommitError::NotVerified)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&self.temp, &self.target)?;
        // The rename is durable once the directory is flushed too.
        #[cfg(unix)]
        if let Some(dir) = self.target.parent().filter(|p| !p.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        // Committed: nothing to remove on drop.
        self.temp = PathBuf::new();
        Ok(self.target.clone())
    }

    /// Abandons the archive: the temporary file is removed.
    pub fn discard(self) {}
}

impl Drop for ArchiveWriter {
    fn drop(&mut self) {
        self.file.take();
        if !self.temp.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// An archive read from a file or any seekable reader in the pieces a sending call asks for.
#[derive(Debug)]
pub struct ArchiveSource<R> {
    reader: R,
    at: u64,
    buf: Vec<u8>,
    arena: BytesMut,
}

impl ArchiveSource<File> {
    /// The archive in the file at `path`.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(Self::new(File::open(path)?))
    }
}

impl<R: Read + Seek> ArchiveSource<R> {
    /// The archive `reader` holds, from its start.
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            at: 0,
            buf: Vec::new(),
            arena: BytesMut::new(),
        }
    }

    /// The archive's size and BLAKE3 digest, read once in pieces of 1 MiB; the reader is left
    /// at the start again.
    pub fn info(&mut self) -> io::Result<ArchiveInfo> {
        self.reader.seek(SeekFrom::Start(0))?;
        self.at = 0;
        let mut d = ArchiveDigest::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = self.reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            d.update(&buf[..n]);
        }
        self.reader.seek(SeekFrom::Start(0))?;
        Ok(d.finish())
    }

    /// Checks that the reader holds exactly `declared` bytes, the size of the archive its call
    /// declared: a call streams the whole file, so a file that grew or shrank since the call was
    /// made is refused before anything is sent ([`CallError::ArchiveSize`], U-2, RS-2). The
    /// reader is left where it was.
    pub fn check_size<E: From<io::Error> + From<CallError>>(
        &mut self,
        declared: u64,
    ) -> Result<(), E> {
        let found = self.reader.seek(SeekFrom::End(0))?;
        self.reader.seek(SeekFrom::Start(self.at))?;
        if found != declared {
            return Err(CallError::ArchiveSize { declared, found }.into());
        }
        Ok(())
    }

    /// Up to `len` bytes at `offset` (at least one unless the archive ends there): the piece a
    /// call's `Need::Piece { offset, len }` asks for. A repeat from offset 0 seeks back.
    pub fn piece(&mut self, offset: u64, len: usize) -> io::Result<&[u8]> {
        self.seek_to(offset)?;
        self.buf.resize(len, 0);
        let filled = fill(&mut self.reader, &mut self.buf)?;
        self.at += filled as u64;
        Ok(&self.buf[..filled])
    }

    /// As [`ArchiveSource::piece`], the piece read into a [`Bytes`] of its own, for a call's
    /// `chunk_parts`: the bytes go from the reader to the transport without another copy. The
    /// memory is reused once every earlier piece was let go.
    pub fn piece_bytes(&mut self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.seek_to(offset)?;
        self.arena.clear();
        self.arena.reserve(len);
        self.arena.resize(len, 0);
        let filled = fill(&mut self.reader, &mut self.arena)?;
        self.arena.truncate(filled);
        self.at += filled as u64;
        Ok(self.arena.split().freeze())
    }

    fn seek_to(&mut self, offset: u64) -> io::Result<()> {
        if offset != self.at {
            self.reader.seek(SeekFrom::Start(offset))?;
            self.at = offset;
        }
        Ok(())
    }
}

/// Reads into all of `buf` unless the reader ends first; returns the bytes read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = reader.read(&mut buf[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}
