//! A journal in memory mode or SF mode: the same ring, stored in a [`MemDir`] or in a slot
//! directory of files (SF-1).

use std::ops::Range;
use std::path::{Path, PathBuf};

use sf_journal::dict::SymbolDict;
use sf_journal::recovery::RecoveryError;
use sf_journal::ring::{
    AckError, AppendError, CloseVerdict, Durability, FramePlace, Link, OkQueueLimits, Ring,
    RingConfig, Window,
};
use sf_journal::status::{Category, ErrorStatus};
use sf_journal::{FileOp, MemDir};

use crate::fsdir::{FileDir, IoError};
use crate::lock::{LockError, SlotLock};

/// How a journal is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalConfig {
    /// Segment size, cap and append deadline.
    pub ring: RingConfig,
    /// `sf_durability` (SF mode only; memory has nothing to sync).
    pub durability: Durability,
    /// `request_durable_ack=on` with the bounds of its OK queue; `None` trims on OK.
    pub durable_ack: Option<OkQueueLimits>,
}

impl JournalConfig {
    /// Memory mode defaults: 4 MiB segments, a 128 MiB cap, OK-driven trim.
    #[must_use]
    pub fn memory() -> Self {
        Self {
            ring: RingConfig::memory(),
            durability: Durability::None,
            durable_ack: None,
        }
    }

    /// SF mode defaults: 4 MiB segment files, a 10 GiB cap, no sync, OK-driven trim.
    #[must_use]
    pub fn disk() -> Self {
        Self {
            ring: RingConfig::disk(),
            ..Self::memory()
        }
    }
}

/// Why a journal operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The sender id cannot name a slot directory (empty, `.`, `..`, or holding a path
    /// separator or NUL).
    #[error("sender id {0:?} cannot name a slot directory")]
    InvalidSenderId(String),
    /// The slot is held by another sender, or its lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A file operation failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Recovery refused the slot (a bad segment header, a gap, an overlap, a bad dictionary).
    #[error("recovery refused the slot: {0}")]
    Recovery(#[from] RecoveryError),
    /// The ring did not take the frame.
    #[error(transparent)]
    Append(#[from] AppendError),
    /// The server acknowledged what was never sent.
    #[error(transparent)]
    Ack(#[from] AckError),
    /// A frame handed to [`Journal::append`] is not a QWP message (it does not begin `QWP1`,
    /// SF-W9); nothing was stored.
    #[error("a frame must begin with QWP1")]
    NotQwp,
    /// The journal was closed.
    #[error("the journal is closed")]
    Closed,
    /// The server ended the sender with a terminal error status (SF-44): nothing more is
    /// appended. The error is the one the server sent; the frame it refused stays in the
    /// journal (on disk in SF mode, for inspection and the next sender on the slot).
    #[error(
        "the sender stopped on a terminal error from the server: {:?} at wire sequence {}: {:?}",
        .0.status,
        .0.wire_seq,
        .0.message
    )]
    Terminal(TerminalError),
    /// The drain ended the sender on a protocol violation by the server (PROTOCOL_VIOLATION,
    /// terminal and forced, SF-44): nothing more is appended. The violation is named; the
    /// frames not acknowledged stay in the journal.
    #[error("the sender stopped on a protocol violation by the server: {0}")]
    Violation(String),
    /// An earlier file operation failed, so the files may no longer hold what the ring
    /// believes: nothing more is done with them until the slot is opened again (recovery then
    /// reads what they do hold).
    #[error("an earlier file operation failed; open the slot again")]
    Broken,
}

/// An error status the server sent (SF-W7, SF-44): which error, its category, the wire
/// sequence it named, the FSN that sequence stands for and the server's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// The status.
    pub status: ErrorStatus,
    /// What the sender does about it: reconnect and replay, or stop.
    pub category: Category,
    /// The wire sequence it named.
    pub wire_seq: u64,
    /// The FSN it concerns (`None` for a catch-up frame).
    pub fsn: Option<i64>,
    /// The server's message: UTF-8 of at most 1024 bytes, as the status frame carried it.
    pub message: String,
}

/// A terminal error the server sent, kept until it is delivered (SF-28, SF-44): a
/// [`ServerError`] of [`Category::Terminal`].
pub type TerminalError = ServerError;

/// The default `close_flush_timeout_millis`: how long a close waits for every published frame
/// to be acknowledged (SF-26).
pub const DEFAULT_CLOSE_FLUSH_TIMEOUT_MILLIS: i64 = 5_000;

/// How a close ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Closed {
    /// FSNs left unacknowledged: on disk for the next sender on the slot in SF mode, lost in
    /// memory mode (SF-27). Empty when everything was acknowledged.
    pub unacknowledged: Range<i64>,
    /// Whether the wait was skipped (a timeout of 0 or below, SF-28).
    pub skipped: bool,
    /// A terminal error not yet delivered by [`Journal::take_terminal`] or by a refused
    /// append ([`JournalError::Terminal`]).
    pub terminal: Option<TerminalError>,
}

/// One step of closing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[must_use]
pub enum CloseStep {
    /// Keep draining; call again before this time.
    Wait {
        /// When the wait ends.
        deadline_millis: u64,
    },
    /// The journal is closed: the slot lock is released and the storage dropped.
    Done(Closed),
}

/// Counters of a journal since it was opened, and what its bounded queues hold now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalStats {
    /// Frames taken by append.
    pub frames_appended: u64,
    /// Payload bytes taken by append.
    pub bytes_appended: u64,
    /// Appends refused because the ring was full, to be retried after trim (SF-23).
    pub appends_full: u64,
    /// Appends refused for good: the ring stayed full past the append deadline (SF-23, SF-24).
    pub appends_timed_out: u64,
    /// Frames handed to the drain, replays included.
    pub frames_sent: u64,
    /// Payload bytes handed to the drain, replays included.
    pub bytes_sent: u64,
    /// Frames handed out again after a reconnect (SF-21). Frames a restart recovers were
    /// never sent by this journal: they count in `recovered_frames`, and here only once a
    /// reconnect sends them again.
    pub replayed_frames: u64,
    /// Connections opened (successful upgrades).
    pub connections: u64,
    /// Connections lost or ended.
    pub disconnects: u64,
    /// OK statuses taken.
    pub oks: u64,
    /// DURABLE_ACK statuses taken.
    pub durable_acks: u64,
    /// Retriable error statuses (the connection ends and replays).
    pub errors_retriable: u64,
    /// Terminal error statuses.
    pub errors_terminal: u64,
    /// Acknowledgements refused as protocol violations (of what was never sent, out of order,
    /// without a connection).
    pub violations: u64,
    /// OKs the durable-ack queue refused at its bound.
    pub oks_dropped: u64,
    /// OKs waiting in the durable-ack queue now.
    pub pending_oks: u64,
    /// Bytes the ring holds now (its segments).
    pub resident_bytes: u64,
    /// Frames recovery found unacknowledged when the slot was opened.
    pub recovered_frames: u64,
    /// Torn tails recovery cut when the slot was opened.
    pub torn_tails_cut: u64,
    /// Syncs of files and of the directory (`sf_durability=periodic`).
    pub syncs: u64,
}

#[derive(Debug)]
enum Store {
    Memory(MemDir),
    Disk { dir: FileDir, _lock: SlotLock },
}

impl Store {
    fn apply(&mut self, ops: &[FileOp]) -> Result<(), JournalError> {
        match self {
            Store::Memory(m) => {
                m.apply_all(ops);
                Ok(())
            }
            Store::Disk { dir, .. } => Ok(dir.apply_all(ops)?),
        }
    }

    /// Stores a placed frame from the caller's bytes: the length and payload, then the
    /// checksum (SF-5).
    fn write_frame(&mut self, place: &FramePlace<'_>, payload: &[u8]) -> Result<(), JournalError> {
        match self {
            Store::Memory(m) => {
                m.write(
                    place.file,
                    place.offset + 4,
                    &place.payload_len.to_le_bytes(),
                );
                m.write(place.file, place.offset + 8, payload);
                m.write(place.file, place.offset, &place.crc.to_le_bytes());
                Ok(())
            }
            Store::Disk { dir, .. } => Ok(dir.write_frame(place, payload)?),
        }
    }
}

/// A store-and-forward journal: frames appended by the producer, kept until acknowledged, and
/// handed to the drain in FSN order.
///
/// Delivery is at least once (SF-11): a frame sent and not acknowledged before its connection
/// broke is sent again on the next connection, so the server may see it twice.
#[derive(Debug)]
pub struct Journal {
    ring: Ring,
    dict: SymbolDict,
    store: Option<Store>,
    terminal: Option<TerminalError>,
    /// Why the sender stopped (SF-44), delivered or not: appends are refused naming it and a
    /// close no longer waits.
    stopped: Option<Stop>,
    recovered: Range<i64>,
    /// Segment files recovery found holding no frame; the ring never reuses them.
    spares: Vec<String>,
    /// A file operation failed.
    broken: bool,
    stats: JournalStats,
}

/// Counts an append's outcome.
fn count_append<T>(
    stats: &mut JournalStats,
    r: Result<T, AppendError>,
    len: usize,
) -> Result<T, AppendError> {
    match &r {
        Ok(_) => {
            stats.frames_appended += 1;
            stats.bytes_appended += len as u64;
        }
        Err(AppendError::Full { .. }) => stats.appends_full += 1,
        Err(AppendError::DeadlineExceeded { .. }) => stats.appends_timed_out += 1,
        Err(_) => {}
    }
    r
}

/// Why the sender stopped for good (SF-44): the first terminal error status of the server, or
/// a protocol violation the drain ended on.
#[derive(Debug, Clone)]
enum Stop {
    Server(TerminalError),
    Violation(String),
}

/// Whether `id` can name a directory inside `sf_dir` and nothing else.
fn valid_sender_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && !id.contains(['/', '\\', '\0'])
        && !Path::new(id).is_absolute()
}

impl Journal {
    /// A journal in memory: nothing survives the process (SF-3).
    #[must_use]
    pub fn memory(config: JournalConfig) -> Self {
        let mut ring = Ring::new(config.ring);
        if let Some(limits) = config.durable_ack {
            ring = ring.with_durable_ack(limits);
        }
        Self {
            ring,
            dict: SymbolDict::new(),
            store: Some(Store::Memory(MemDir::new())),
            terminal: None,
            stopped: None,
            recovered: 0..0,
            spares: Vec::new(),
            broken: false,
            stats: JournalStats::default(),
        }
    }

    /// The journal of the slot `<sf_dir>/<sender_id>/`: creates the directory if missing,
    /// takes the slot lock first (SF-29), then recovers what the slot holds and carries out
    /// the recovery's repairs before anything is appended.
    pub fn open(
        sf_dir: &Path,
        sender_id: &str,
        config: JournalConfig,
    ) -> Result<Self, JournalError> {
        if !valid_sender_id(sender_id) {
            return Err(JournalError::InvalidSenderId(sender_id.to_owned()));
        }
        Self::open_slot(&sf_dir.join(sender_id), config)
    }

    /// The journal of the slot directory `slot_dir` (an orphan's, for instance); as
    /// [`Journal::open`].
    pub fn open_slot(slot_dir: &Path, config: JournalConfig) -> Result<Self, JournalError> {
        let mut dir = FileDir::create(slot_dir)?;
        let lock = SlotLock::acquire(slot_dir)?;
        let r = dir.recover_slot(0)?.inspect_err(|e| {
            tracing::warn!(slot = %slot_dir.display(), error = %e, "sf slot refused by recovery");
        })?;
        tracing::info!(
            slot = %slot_dir.display(),
            unacknowledged = r.unacked().end - r.unacked().start,
            acked_fsn = r.acked_fsn,
            "sf slot recovered"
        );
        dir.apply_all(&r.ops)?;
        let mut ring = Ring::from_recovery(config.ring, &r).with_durability(config.durability);
        if let Some(limits) = config.durable_ack {
            ring = ring.with_durable_ack(limits);
        }
        let dict = r
            .dict
            .as_ref()
            .map(SymbolDict::from_scan)
            .unwrap_or_default();
        Ok(Self {
            ring,
            dict,
            store: Some(Store::Disk { dir, _lock: lock }),
            terminal: None,
            stopped: None,
            recovered: r.unacked(),
            spares: r.spares.clone(),
            broken: false,
            stats: JournalStats {
                recovered_frames: u64::try_from(r.unacked().end - r.unacked().start).unwrap_or(0),
                torn_tails_cut: r
                    .ops
                    .iter()
                    .filter(|o| matches!(o, FileOp::Zero { .. }))
                    .count() as u64,
                ..JournalStats::default()
            },
        })
    }

    fn store(&mut self) -> Result<&mut Store, JournalError> {
        self.store.as_mut().ok_or(JournalError::Closed)
    }

    fn usable(&self) -> Result<(), JournalError> {
        match (&self.store, self.broken) {
            (None, _) => Err(JournalError::Closed),
            (_, true) => Err(JournalError::Broken),
            _ => Ok(()),
        }
    }

    fn apply(&mut self, ops: &[FileOp]) -> Result<(), JournalError> {
        self.usable()?;
        let r = self.store()?.apply(ops);
        self.broken |= r.is_err();
        r
    }

    /// Whether the journal was closed.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.store.is_none()
    }

    /// Whether this journal keeps its frames in memory only.
    #[must_use]
    pub fn is_memory(&self) -> bool {
        matches!(self.store, Some(Store::Memory(_)))
    }

    /// The slot directory of an SF-mode journal that is still open.
    #[must_use]
    pub fn slot_dir(&self) -> Option<&Path> {
        match &self.store {
            Some(Store::Disk { dir, .. }) => Some(dir.path()),
            _ => None,
        }
    }

    /// The slot directory's counters of writes and syncs (SF mode).
    #[must_use]
    pub fn dir_stats(&self) -> Option<crate::fsdir::DirStats> {
        match &self.store {
            Some(Store::Disk { dir, .. }) => Some(dir.stats()),
            _ => None,
        }
    }

    /// The ring's state (cursors, counters).
    #[must_use]
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// The symbol dictionary (recovered from `.symbol-dict` in SF mode).
    #[must_use]
    pub fn dict(&self) -> &SymbolDict {
        &self.dict
    }

    /// The FSNs recovery found unacknowledged when the journal was opened (empty in memory).
    #[must_use]
    pub fn recovered(&self) -> Range<i64> {
        self.recovered.clone()
    }

    /// The FSN of the last published frame (−1 before any).
    #[must_use]
    pub fn published_fsn(&self) -> i64 {
        self.ring.published_fsn()
    }

    /// The highest acknowledged FSN (−1 before any).
    #[must_use]
    pub fn acked_fsn(&self) -> i64 {
        self.ring.acked_fsn()
    }

    /// Publishes a frame: it is stored and gets its FSN; the call never waits for the wire
    /// (SF-2). A frame must be a QWP message (begin with `QWP1`). A full ring is refused with
    /// [`AppendError::Full`] (retry after trim) and, once the append deadline has passed,
    /// [`AppendError::DeadlineExceeded`]. Once the server ended the sender with a terminal
    /// error, every append is refused with [`JournalError::Terminal`] naming it (SF-44); the
    /// first such refusal delivers it, so a close does not hand it back again.
    pub fn append(&mut self, payload: &[u8], now_millis: u64) -> Result<i64, JournalError> {
        self.usable()?;
        self.not_stopped()?;
        if !sf_journal::status::is_qwp_frame(payload) {
            return Err(JournalError::NotQwp);
        }
        // The frame is written from the caller's bytes: the engine only says where.
        let r = self.ring.append_placed(payload, now_millis);
        let placed = count_append(&mut self.stats, r, payload.len())?;
        let store = self.store.as_mut().ok_or(JournalError::Closed)?;
        let r = store
            .apply(&placed.ops)
            .and_then(|()| store.write_frame(&placed.place, payload));
        self.broken |= r.is_err();
        r?;
        let fsn = placed.fsn;
        self.checkpoint_after_append(now_millis);
        Ok(fsn)
    }

    /// Refuses a producer's call once the server ended the sender with a terminal error
    /// (SF-44): the refusal names the error and delivers it, so a close does not hand it back
    /// again.
    fn not_stopped(&mut self) -> Result<(), JournalError> {
        match &self.stopped {
            Some(Stop::Server(e)) => {
                if self.terminal.as_ref() == Some(e) {
                    self.terminal = None;
                }
                Err(JournalError::Terminal(e.clone()))
            }
            Some(Stop::Violation(why)) => Err(JournalError::Violation(why.clone())),
            None => Ok(()),
        }
    }

    /// The periodic checkpoint is polled on every append too, so it goes on while the wire is
    /// down (SF-36). The frame is already taken: a failed sync leaves the journal broken, and
    /// the next call reports it.
    fn checkpoint_after_append(&mut self, now_millis: u64) {
        if let Err(e) = self.checkpoint(now_millis) {
            tracing::warn!(error = %e, "sf checkpoint after append failed");
        }
    }

    /// The journal's counters, and what its bounded queues hold now.
    #[must_use]
    pub fn stats(&self) -> JournalStats {
        JournalStats {
            replayed_frames: self.ring.replayed_frames(),
            oks_dropped: self.ring.refused_oks(),
            pending_oks: self.ring.pending_oks().count() as u64,
            resident_bytes: self.ring.resident_bytes(),
            ..self.stats
        }
    }

    /// Publishes a frame that uses `symbols`: new ones are written to the dictionary before the
    /// frame (SF-35); `encode` builds the frame from their ids. As with [`Journal::append`],
    /// a frame that is not a QWP message is refused with [`JournalError::NotQwp`] and the
    /// dictionary is left as it was.
    pub fn append_with_symbols<S: AsRef<str>>(
        &mut self,
        symbols: &[S],
        encode: impl FnOnce(&[u32]) -> Vec<u8>,
        now_millis: u64,
    ) -> Result<(i64, Vec<u32>), JournalError> {
        self.usable()?;
        self.not_stopped()?;
        // The frame is built from the ids the symbols would get and checked like any other
        // (SF-W9) before the dictionary takes them: a refused frame assigns no ids.
        let (ids, _) = self.dict.clone().intern(symbols);
        let payload = encode(&ids);
        if !sf_journal::status::is_qwp_frame(&payload) {
            return Err(JournalError::NotQwp);
        }
        let r = self
            .ring
            .append_with_symbols(&mut self.dict, symbols, |_| payload, now_millis);
        let len = r
            .as_ref()
            .ok()
            .and_then(|(_, a)| self.ring.locate(a.fsn))
            .map_or(0, |l| l.len as usize);
        let (ids, a) = count_append(&mut self.stats, r, len)?;
        self.apply(&a.ops)?;
        self.checkpoint_after_append(now_millis);
        Ok((a.fsn, ids))
    }

    /// Tells the ring the state of the wire, for the back-pressure verdicts.
    pub fn set_link(&mut self, link: Link) {
        self.ring.set_link(link);
    }

    /// A successful upgrade: wire sequence 0 is the first unacknowledged frame, after
    /// `catch_up` catch-up frames.
    pub fn connect(&mut self, catch_up: u64) -> Window {
        self.stats.connections += 1;
        self.ring.connect(catch_up)
    }

    /// A catch-up frame went out on the open connection (SF-9): a status naming it is taken
    /// from now on; one naming a catch-up frame not yet sent is a violation.
    pub fn catch_up_sent(&mut self) {
        self.ring.catch_up_sent();
    }

    /// The connection broke. Appends go on within capacity (SF-18).
    pub fn disconnect(&mut self) {
        self.stats.disconnects += 1;
        self.ring.disconnect();
    }

    /// The next frame to send on the open connection, in FSN order, with its bytes.
    pub fn next_frame(&mut self) -> Result<Option<(i64, Vec<u8>)>, JournalError> {
        self.usable()?;
        let Some((fsn, at)) = self.ring.next_to_send_at() else {
            return Ok(None);
        };
        let bytes = match self.store.as_mut().ok_or(JournalError::Closed)? {
            Store::Memory(m) => m
                .get(at.file)
                .and_then(|b| b.get(at.offset as usize..)?.get(..at.len as usize))
                .map(<[u8]>::to_vec)
                .unwrap_or_default(),
            Store::Disk { dir, .. } => {
                let r = dir.read(at.file, at.offset, at.len as usize);
                self.broken |= r.is_err();
                r?
            }
        };
        self.stats.frames_sent += 1;
        self.stats.bytes_sent += bytes.len() as u64;
        Ok(Some((fsn, bytes)))
    }

    fn count_ack<T>(&mut self, r: Result<T, AckError>) -> Result<T, AckError> {
        if let Err(e) = &r {
            if !matches!(e, AckError::OkQueueFull { .. }) {
                self.stats.violations += 1;
            }
        }
        r
    }

    /// A server OK for `wire_seq` with its tables: trims (or queues, in durable-ack mode).
    /// After close (or a failed file operation) it is counted and refused, and moves
    /// nothing: the close already said what was left unacknowledged.
    pub fn ok(&mut self, wire_seq: u64, tables: Vec<(String, i64)>) -> Result<(), JournalError> {
        self.stats.oks += 1;
        self.usable()?;
        let r = self.ring.ok_with_tables(wire_seq, tables);
        let ops = self.count_ack(r)?;
        self.apply(&ops)
    }

    /// A server DURABLE_ACK with its tables; refused as [`Journal::ok`] is after close.
    pub fn durable_ack(&mut self, tables: &[(String, i64)]) -> Result<(), JournalError> {
        self.stats.durable_acks += 1;
        self.usable()?;
        let r = self.ring.durable_ack(tables);
        let ops = self.count_ack(r)?;
        self.apply(&ops)
    }

    /// A server error for `wire_seq`: nothing is trimmed (SF-43), the connection ends. A
    /// terminal error is kept until [`Journal::take_terminal`] or close delivers it. As
    /// [`Journal::reject_error`] without a message.
    pub fn reject(
        &mut self,
        wire_seq: u64,
        status: ErrorStatus,
    ) -> Result<(Option<i64>, Category), JournalError> {
        self.reject_error(wire_seq, status, String::new())
            .map(|e| (e.fsn, e.category))
    }

    /// A server error for `wire_seq` with the server's message: nothing is trimmed (SF-43),
    /// the connection ends. Returns the error with its FSN and category; a terminal one is
    /// also kept, message included, until [`Journal::take_terminal`] or close delivers it.
    /// After close it is refused with [`JournalError::Closed`].
    pub fn reject_error(
        &mut self,
        wire_seq: u64,
        status: ErrorStatus,
        message: String,
    ) -> Result<ServerError, JournalError> {
        // After close nothing is latched: the close already handed back what was.
        if self.is_closed() {
            return Err(JournalError::Closed);
        }
        let r = self.ring.reject(wire_seq, status);
        let (fsn, category) = self.count_ack(r)?;
        let e = ServerError {
            status,
            category,
            wire_seq,
            fsn,
            message,
        };
        if category == Category::Terminal {
            self.stats.errors_terminal += 1;
            if self.terminal.is_none() {
                self.terminal = Some(e.clone());
            }
            if self.stopped.is_none() {
                self.stopped = Some(Stop::Server(e.clone()));
            }
        } else {
            self.stats.errors_retriable += 1;
        }
        Ok(e)
    }

    /// The drain ended on a protocol violation by the server (PROTOCOL_VIOLATION, terminal and
    /// forced, SF-44): the sender stops. From now on appends are refused with
    /// [`JournalError::Violation`] naming `why`, and a close does not wait. A sender already
    /// stopped keeps its first reason.
    pub fn stop_on_violation(&mut self, why: String) {
        if self.stopped.is_none() {
            self.stopped = Some(Stop::Violation(why));
        }
    }

    /// Delivers the terminal error the server sent, if one is waiting. The sender stays
    /// stopped: appends go on being refused naming it.
    pub fn take_terminal(&mut self) -> Option<TerminalError> {
        self.terminal.take()
    }

    /// Carries out the checkpoint due at `now_millis` under `sf_durability=periodic` (syncs of
    /// the journal's files, then of the directory); nothing under the default `none`. Returns
    /// how many syncs were made.
    pub fn checkpoint(&mut self, now_millis: u64) -> Result<usize, JournalError> {
        if !matches!(self.store, Some(Store::Disk { .. })) {
            return Ok(0);
        }
        let ops = self.ring.poll_checkpoint(now_millis);
        self.apply(&ops)?;
        self.stats.syncs += ops.len() as u64;
        Ok(ops.len())
    }

    /// One step of close: `timeout_millis` is `close_flush_timeout_millis` (0 or below skips
    /// the wait), `started_millis` when close began. Once the server ended the sender with a
    /// terminal error the close does not wait: nothing more is sent, so nothing more would be
    /// acknowledged (SF-44). When everything is acknowledged the
    /// journal's files are removed, leaving only the lock files (SF-D8): segments (spares
    /// included), manifest, watermark and dictionary, and also a manifest recovery set aside
    /// as `.corrupt` and the `.tmp` of an interrupted record rewrite. Those are not kept for
    /// inspection: the reference client's drained slot holds the lock files alone, and a
    /// set-aside manifest names segments that are gone once all is acknowledged. On any end
    /// the slot lock is released and a terminal error not yet delivered is handed back (SF-28).
    /// A removal that fails ends the close with its error, the lock released all the same; a
    /// terminal error not yet delivered is then kept for [`Journal::take_terminal`].
    pub fn close(
        &mut self,
        now_millis: u64,
        started_millis: u64,
        timeout_millis: i64,
    ) -> Result<CloseStep, JournalError> {
        if self.store.is_none() {
            return Err(JournalError::Closed);
        }
        if self.broken {
            // Nothing is trusted to the files any more: the lock is released, the frames not
            // acknowledged are whatever recovery finds next time.
            self.store = None;
            return Ok(CloseStep::Done(Closed {
                unacknowledged: self.acked_fsn() + 1..self.published_fsn() + 1,
                skipped: false,
                terminal: self.terminal.take(),
            }));
        }
        let verdict = match self.ring.close(now_millis, started_millis, timeout_millis) {
            // Stopped by a terminal error: nothing more is sent, so nothing more will be
            // acknowledged; the close ends now instead of at its deadline (SF-44).
            CloseVerdict::Wait { .. } if self.stopped.is_some() => CloseVerdict::Unacknowledged {
                fsns: self.acked_fsn() + 1..self.published_fsn() + 1,
                skipped: false,
            },
            v => v,
        };
        let (unacknowledged, skipped) = match verdict {
            CloseVerdict::Wait { deadline_millis } => {
                return Ok(CloseStep::Wait { deadline_millis })
            }
            CloseVerdict::Drained { mut ops } => {
                // Empty segments a crash left (or a spare) go too: the slot keeps only
                // its lock files.
                ops.extend(self.spares.drain(..).map(|file| FileOp::Unlink { file }));
                // So do what recovery set aside (`<name>.corrupt`) and what an interrupted
                // record rewrite left (`<name>.tmp`): once every frame is acknowledged they
                // describe nothing still owed to the server.
                let names = match &self.store {
                    Some(Store::Disk { dir, .. }) => dir.names().map(Some),
                    _ => Ok(None),
                };
                let r = names.map_err(JournalError::from).and_then(|names| {
                    ops.extend(
                        names
                            .into_iter()
                            .flatten()
                            .filter(|n| is_leftover(n))
                            .map(|file| FileOp::Unlink { file }),
                    );
                    self.apply(&ops)
                });
                if let Err(e) = r {
                    // A failed removal ends the close too: the slot lock is released and the
                    // storage dropped (the next open recovers what the files still hold); a
                    // terminal error not yet delivered stays for `take_terminal`.
                    tracing::warn!(error = %e, "sf close failed to remove the acknowledged slot's files");
                    self.store = None;
                    return Err(e);
                }
                let next = self.published_fsn() + 1;
                (next..next, false)
            }
            CloseVerdict::Unacknowledged { fsns, skipped } => {
                tracing::warn!(
                        unacknowledged = fsns.end - fsns.start,
                        first_fsn = fsns.start,
                        skipped,
                        memory = self.is_memory(),
                        "sf close ended with frames unacknowledged (left on disk in SF mode, lost in memory mode)"
                    );
                (fsns, skipped)
            }
            _ => (self.acked_fsn() + 1..self.published_fsn() + 1, false),
        };
        self.store = None;
        Ok(CloseStep::Done(Closed {
            unacknowledged,
            skipped,
            terminal: self.terminal.take(),
        }))
    }
}

/// Whether `name` is a file of the journal set aside by recovery (`<name>.corrupt`) or left
/// by an interrupted write-then-rename (`<name>.tmp`): removed by a drained close (SF-D8).
fn is_leftover(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(sf_journal::slot::CORRUPT_SUFFIX)
        .or_else(|| name.strip_suffix(".tmp"))
    else {
        return false;
    };
    [
        sf_journal::slot::MANIFEST,
        sf_journal::slot::ACK_WATERMARK,
        sf_journal::slot::SYMBOL_DICT,
    ]
    .contains(&stem)
        || sf_journal::slot::parse_segment_name(stem).is_some()
}

/// The path of a sender's slot directory: `<sf_dir>/<sender_id>`.
#[must_use]
pub fn slot_path(sf_dir: &Path, sender_id: &str) -> PathBuf {
    sf_dir.join(sender_id)
}

/// Milliseconds since the Unix epoch (the time the journal's operations are told).
#[must_use]
pub fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Milliseconds since the Unix epoch as read once per process, advanced by a monotonic clock
/// since: never goes back when the wall clock is stepped, so it suits the append deadline
/// (SF-23), and still reads as a time for the segment headers.
#[must_use]
pub fn monotonic_millis() -> u64 {
    static ANCHOR: std::sync::OnceLock<(std::time::Instant, u64)> = std::sync::OnceLock::new();
    let (at, epoch) = *ANCHOR.get_or_init(|| (std::time::Instant::now(), now_millis()));
    let since = u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX);
    epoch.saturating_add(since)
}

/// Publishes a frame into a journal shared with its drain, waiting for trim while the ring is
/// full (SF-23): the append is retried, yielding between attempts with the journal unlocked,
/// until it is taken or the ring's append deadline passes
/// ([`AppendError::DeadlineExceeded`], naming the back-pressure case, SF-24).
pub fn append_waiting(
    journal: &std::sync::Mutex<Journal>,
    payload: &[u8],
) -> Result<i64, JournalError> {
    loop {
        let r = journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .append(payload, monotonic_millis());
        match r {
            Err(JournalError::Append(AppendError::Full { .. })) => std::thread::yield_now(),
            other => return other,
        }
    }
}

/// [`append_waiting`] for a frame that uses symbols ([`Journal::append_with_symbols`]): while
/// the ring is full the append is retried, with the journal unlocked between attempts, until
/// it is taken or the append deadline passes. `encode` may be called once per attempt; a
/// refused attempt leaves the dictionary as it was.
pub fn append_with_symbols_waiting<S: AsRef<str>>(
    journal: &std::sync::Mutex<Journal>,
    symbols: &[S],
    mut encode: impl FnMut(&[u32]) -> Vec<u8>,
) -> Result<(i64, Vec<u32>), JournalError> {
    loop {
        let r = journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .append_with_symbols(symbols, &mut encode, monotonic_millis());
        match r {
            Err(JournalError::Append(AppendError::Full { .. })) => std::thread::yield_now(),
            other => return other,
        }
    }
}

/// Whether a failed open found the slot unreplayable: its dictionary cannot be rebuilt, so the
/// ids its frames hold are backed by nothing (SF-38, SF-39), or a segment carries the last
/// generation, so no segment can follow it.
#[must_use]
pub fn is_unreplayable(e: &JournalError) -> bool {
    matches!(
        e,
        JournalError::Recovery(RecoveryError::Dict(_) | RecoveryError::GenerationExhausted { .. })
    )
}

/// A journal opened by a foreground sender, and where an unreplayable slot was set aside.
#[derive(Debug)]
pub struct Opened {
    /// The journal, on the sender's slot.
    pub journal: Journal,
    /// Where the slot found unreplayable was moved: `<sender_id>.unreplayable-<millis>` beside
    /// it, kept whole for inspection (and marked `.failed` by the first orphan drainer that
    /// tries it).
    pub set_aside: Option<PathBuf>,
}

impl Journal {
    /// [`Journal::open`] for a foreground sender: a slot whose dictionary cannot be rebuilt is
    /// moved aside, never discarded, and the sender starts on a fresh slot of the same name
    /// (SF-38). Every other failure is returned as it is.
    pub fn open_or_set_aside(
        sf_dir: &Path,
        sender_id: &str,
        config: JournalConfig,
    ) -> Result<Opened, JournalError> {
        match Self::open(sf_dir, sender_id, config) {
            Err(e) if is_unreplayable(&e) => {
                let slot_dir = sf_dir.join(sender_id);
                // Moved while its lock is held, so no other sender is using it meanwhile.
                let lock = SlotLock::acquire(&slot_dir)?;
                let aside = sf_dir.join(format!("{sender_id}.unreplayable-{}", now_millis()));
                std::fs::rename(&slot_dir, &aside).map_err(|source| IoError {
                    what: "set aside",
                    file: slot_dir.clone(),
                    source,
                })?;
                drop(lock);
                Ok(Opened {
                    journal: Self::open(sf_dir, sender_id, config)?,
                    set_aside: Some(aside),
                })
            }
            r => r.map(|journal| Opened {
                journal,
                set_aside: None,
            }),
        }
    }
}
