//! The client journal over a store-and-forward ring: puts, handed marks and ends, trim,
//! copy-forward, and recovery from the slot's bytes.

use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::Duration;

use nervix_protocol::time::UnixMillis;
use sf_journal::recovery::{recover, RecoveryError, SlotFiles};
use sf_journal::ring::{AppendError, Durability, FrameLocation, Ring, RingConfig};
use sf_journal::segment::{FRAME_HEADER_LEN, SEGMENT_HEADER_LEN};
use sf_journal::FileOp;

use crate::classify::{classify, RecoveryList};
use crate::codec::{
    decode_record, framed, framed_put, put_batch_parts, BatchParts, DecodeError, Record, FRAME_ROOM,
};
use crate::record::{Entry, JournalKey};

/// When the journal's files are flushed to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncPolicy {
    /// Never: the page cache survives a killed process, not a host crash.
    #[default]
    None,
    /// A checkpoint (every journal file, then the directory) at this interval, as the
    /// store-and-forward ring's periodic durability does.
    Periodic {
        /// Milliseconds between checkpoints.
        interval_millis: u64,
    },
    /// Every call's writes are followed by syncs of the files it wrote (and of the directory
    /// when it created or removed a file): a record is durable when its call returns.
    EveryRecord,
}

/// The state of the wire, for the full journal's error (SF-23, SF-24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum JournalLink {
    /// Connected (or not yet started): the server answers more slowly than the application
    /// submits.
    #[default]
    Publishing,
    /// Reconnecting: nothing drains the journal until a session is back.
    Reconnecting,
}

/// Sizes and policies of a client journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientJournalConfig {
    /// Size of every segment file, header included; a record must fit one.
    pub segment_bytes: u64,
    /// The most segment bytes puts may fill (at least two segments are allowed). Handed marks,
    /// ends and copies forward may use two segments more, so a full journal can still end
    /// what it holds.
    pub capacity_bytes: u64,
    /// When the files are synced.
    pub sync: SyncPolicy,
    /// The most live records one call copies forward.
    pub copy_forward_per_call: usize,
}

impl ClientJournalConfig {
    /// Segments of `segment_bytes`, at most `capacity_bytes` of them for puts, no syncs, eight
    /// copies forward per call.
    #[must_use]
    pub fn new(segment_bytes: u64, capacity_bytes: u64) -> Self {
        Self {
            segment_bytes,
            capacity_bytes,
            sync: SyncPolicy::None,
            copy_forward_per_call: 8,
        }
    }

    /// The same configuration with `sync`.
    #[must_use]
    pub fn with_sync(mut self, sync: SyncPolicy) -> Self {
        self.sync = sync;
        self
    }

    fn limit(&self) -> u64 {
        self.capacity_bytes
            .max(self.segment_bytes.saturating_mul(2))
    }

    fn ring(&self) -> RingConfig {
        RingConfig {
            segment_bytes: self.segment_bytes,
            max_total_bytes: self
                .limit()
                .saturating_add(self.segment_bytes.saturating_mul(2)),
            append_deadline_millis: 0,
        }
    }

    /// Without syncs, the ring reuses a trimmed segment's file for the next segment
    /// ([`Ring::with_recycling`]): its pages are written over instead of allocated anew.
    fn recycling(&self, ring: Ring) -> Ring {
        if self.sync == SyncPolicy::None {
            ring.with_recycling()
        } else {
            ring
        }
    }

    fn durability(&self) -> Durability {
        match self.sync {
            SyncPolicy::Periodic { interval_millis } => Durability::Periodic { interval_millis },
            _ => Durability::None,
        }
    }
}

/// The default size of a segment: two frames of the largest size. A record holds at most
/// one frame's worth of a request (a command's query, a transfer's statement, a batch) and
/// names that themselves fit one frame, so every record the client can journal fits one
/// segment; a segment rolls over once every many batches of a usual size, not every few.
pub const DEFAULT_SEGMENT_BYTES: u64 = 2 * nervix_protocol::limits::FRAME_LIMIT as u64;

/// The default bytes of segments puts may fill.
pub const DEFAULT_CAPACITY_BYTES: u64 = 64 << 20;

impl Default for ClientJournalConfig {
    /// Segments of [`DEFAULT_SEGMENT_BYTES`] (8 MiB), [`DEFAULT_CAPACITY_BYTES`] (64 MiB) for
    /// puts.
    fn default() -> Self {
        Self::new(DEFAULT_SEGMENT_BYTES, DEFAULT_CAPACITY_BYTES)
    }
}

/// Why the journal refused a call or a recovery.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// No room for the record until live entries end.
    #[error("journal full ({link:?}): {needed} bytes needed")]
    Full {
        /// The state of the wire when it was refused.
        link: JournalLink,
        /// The bytes the record needs (its frame).
        needed: u64,
    },
    /// The record does not fit a segment.
    #[error("record of {len} bytes; a segment holds at most {max}")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The largest record a segment holds.
        max: usize,
    },
    /// A key the journal does not hold live (never put, or already ended).
    #[error("journal key {0:?} is not live")]
    UnknownKey(JournalKey),
    /// A frame passed its checksum but is not a journal record.
    #[error("journal frame {fsn} is not a record: {why}")]
    Corrupt {
        /// Its FSN.
        fsn: i64,
        /// What is wrong with it.
        why: DecodeError,
    },
    /// The ring's recovery refused the slot.
    #[error("journal recovery: {0}")]
    Recovery(RecoveryError),
    /// Every key, FSN or segment name is used.
    #[error("journal exhausted its keys, FSNs or segment names")]
    Exhausted,
}

/// What a call wrote: the key, the FSN of its record, and the operations to carry out in
/// order (its record, then any copies forward and trim, then syncs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Written {
    /// The key the call concerned.
    pub key: JournalKey,
    /// The FSN of the call's own record.
    pub fsn: i64,
    /// What the driver carries out, in order.
    pub ops: Vec<FileOp>,
}

/// Counts of what a journal did, and what it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalStats {
    /// Entries put.
    pub puts: u64,
    /// Handed marks written.
    pub handed: u64,
    /// Entries ended.
    pub ends: u64,
    /// Live records copied forward.
    pub copies_forward: u64,
    /// Calls refused because the journal was full.
    pub fulls: u64,
    /// Entries live now.
    pub live: u64,
    /// Bytes of the live entries' newest records.
    pub live_bytes: u64,
    /// Bytes of live batches the live set holds in memory (shared with their frames or the
    /// batches waiting to be sent, not copies): the batches' whole length, except while one
    /// is released to the engine ([`ClientJournal::release_batch`]).
    pub held_batch_bytes: u64,
    /// Segment bytes resident now.
    pub resident_bytes: u64,
}

/// One live entry, as [`ClientJournal::live_entries`] gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveEntry<'a> {
    /// Its key.
    pub key: JournalKey,
    /// The FSN of its newest `Put`.
    pub fsn: i64,
    /// Whether it was handed to the transport.
    pub handed: bool,
    /// The entry. A batch released by [`ClientJournal::release_batch`] and not attached
    /// again shows no bytes here (its record on disk has them all).
    pub entry: &'a Entry,
    /// Whether it is such a released batch.
    pub released: bool,
}

#[derive(Debug, Clone)]
struct Live {
    fsn: i64,
    handed: bool,
    entry: Entry,
    bytes: u64,
    /// A batch whose bytes the live set let go ([`ClientJournal::release_batch`]): the
    /// length of the bytes it must be given back ([`ClientJournal::attach_batch`]) before
    /// its record can be copied forward.
    released: Option<usize>,
}

/// The journal of one client: a log of records in a store-and-forward ring, the live set it
/// describes, and the file operations that keep the two in step.
#[derive(Debug, Clone)]
pub struct ClientJournal {
    config: ClientJournalConfig,
    ring: Ring,
    live: BTreeMap<JournalKey, Live>,
    by_fsn: BTreeMap<i64, JournalKey>,
    next_key: u64,
    link: JournalLink,
    stats: JournalStats,
}

/// A record ready to append: encoded whole behind [`FRAME_ROOM`] free bytes, or a batch's in
/// parts.
enum Framed {
    Whole(Vec<u8>),
    Parts(BatchParts),
}

impl Framed {
    /// The record's length.
    fn len(&self) -> usize {
        match self {
            Framed::Whole(f) => f.len() - FRAME_ROOM,
            Framed::Parts(p) => p.len(),
        }
    }
}

impl ClientJournal {
    /// An empty journal (a slot without files).
    #[must_use]
    pub fn new(config: ClientJournalConfig) -> Self {
        Self::with_ring(
            config,
            config.recycling(Ring::new(config.ring()).with_durability(config.durability())),
        )
    }

    fn with_ring(config: ClientJournalConfig, ring: Ring) -> Self {
        Self {
            config,
            ring,
            live: BTreeMap::new(),
            by_fsn: BTreeMap::new(),
            next_key: 0,
            link: JournalLink::Publishing,
            stats: JournalStats::default(),
        }
    }

    /// Recovers the journal from the bytes of its slot's files: the ring's recovery (torn
    /// tail cut, segments checked), then every record replayed in FSN order: the newest `Put`
    /// of a key wins, `Handed` marks it, `End` removes it, and a `Handed` or `End` of a key
    /// with no `Put` (trimmed) is ignored. The operations returned (repairs, then trim) must be
    /// carried out before any of a later call.
    pub fn recover(
        config: ClientJournalConfig,
        files: &SlotFiles,
    ) -> Result<(Self, Vec<FileOp>), JournalError> {
        let r = recover(files, 0).map_err(JournalError::Recovery)?;
        let mut j = Self::with_ring(
            config,
            config.recycling(
                Ring::from_recovery(config.ring(), &r).with_durability(config.durability()),
            ),
        );
        let mut max_key = None;
        for seg in &r.segments {
            let Some((_, bytes)) = files.segments.iter().find(|(name, _)| *name == seg.file) else {
                continue;
            };
            for (i, span) in seg.scan.frames.iter().enumerate() {
                let payload = seg.scan.payload(bytes, i);
                let record = decode_record(payload)
                    .map_err(|why| JournalError::Corrupt { fsn: span.fsn, why })?;
                let key = record.key();
                max_key = max_key.max(Some(key.0));
                match record {
                    Record::Put { handed, entry, .. } => {
                        j.insert(key, span.fsn, handed, entry, u64::from(span.payload_len));
                    }
                    Record::Handed { .. } => {
                        if let Some(l) = j.live.get_mut(&key) {
                            l.handed = true;
                        }
                    }
                    Record::End { .. } => j.remove(key),
                }
            }
        }
        j.next_key = max_key.map_or(0, |k| k.saturating_add(1));
        let mut ops = r.ops.clone();
        // Empty segments, and a trimmed segment kept for reuse (missing most times: its
        // removal is then nothing), go: the ring that opens the slot keeps no spare.
        ops.extend(
            r.spares
                .iter()
                .cloned()
                .chain([sf_journal::slot::SPARE.to_owned()])
                .map(|file| FileOp::Unlink { file }),
        );
        ops.extend(j.trim());
        Ok((j, ops))
    }

    fn insert(&mut self, key: JournalKey, fsn: i64, handed: bool, entry: Entry, bytes: u64) {
        if let Some(old) = self.live.insert(
            key,
            Live {
                fsn,
                handed,
                entry,
                bytes,
                released: None,
            },
        ) {
            self.by_fsn.remove(&old.fsn);
        }
        self.by_fsn.insert(fsn, key);
    }

    fn remove(&mut self, key: JournalKey) {
        if let Some(old) = self.live.remove(&key) {
            self.by_fsn.remove(&old.fsn);
        }
    }

    /// The largest record a segment holds.
    #[must_use]
    pub fn max_record_bytes(&self) -> usize {
        let room = self
            .config
            .segment_bytes
            .saturating_sub((SEGMENT_HEADER_LEN + FRAME_HEADER_LEN) as u64);
        usize::try_from(room)
            .unwrap_or(usize::MAX)
            .min(i32::MAX as usize)
    }

    /// Tells the journal the state of the wire, which a full journal's error names.
    pub fn set_link(&mut self, link: JournalLink) {
        self.link = link;
    }

    /// Journals `entry` under a new key. Refused with [`JournalError::Full`] when a new
    /// segment is needed and the capacity is used, and with [`JournalError::TooLarge`] when
    /// the record cannot fit a segment; a refused put changes nothing.
    pub fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<Written, JournalError> {
        if self.next_key == u64::MAX {
            return Err(JournalError::Exhausted);
        }
        let key = JournalKey(self.next_key);
        let max = self.max_record_bytes();
        // A batch is written from its own bytes; anything else is encoded into one buffer.
        let record = match put_batch_parts(key, false, entry) {
            Some(parts) => Framed::Parts(parts),
            None => Framed::Whole(framed_put(key, false, entry).ok_or(JournalError::TooLarge {
                len: usize::MAX,
                max,
            })?),
        };
        let len = record.len();
        if len > max {
            return Err(JournalError::TooLarge { len, max });
        }
        if self.needs_segment(len)
            && self
                .ring
                .resident_bytes()
                .saturating_add(self.config.segment_bytes)
                > self.config.limit()
        {
            return Err(self.full(len));
        }
        let (fsn, mut ops) = match record {
            Framed::Whole(framed) => self.append(framed, now_millis)?,
            Framed::Parts(parts) => self.append_parts(parts, now_millis)?,
        };
        self.next_key += 1;
        self.insert(key, fsn, false, entry.clone(), len as u64);
        self.stats.puts += 1;
        self.finish(&mut ops, now_millis);
        Ok(Written { key, fsn, ops })
    }

    /// Marks the entry of `key` as handed to the transport. Written before the send, so a
    /// crash between the two counts the entry as sent (P-8).
    pub fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<Written, JournalError> {
        if !self.live.contains_key(&key) {
            return Err(JournalError::UnknownKey(key));
        }
        let payload = framed(&Record::Handed { key }).ok_or(JournalError::Exhausted)?;
        let (fsn, mut ops) = self.append(payload, now_millis)?;
        if let Some(l) = self.live.get_mut(&key) {
            l.handed = true;
        }
        self.stats.handed += 1;
        self.finish(&mut ops, now_millis);
        Ok(Written { key, fsn, ops })
    }

    /// Lets go of the bytes of the live batch of `key` (its record keeps them): whoever sends
    /// the batch can then own them alone, e.g. to frame it without a copy. Until
    /// [`ClientJournal::attach_batch`] gives them back, the record is not copied forward, so
    /// its segment stays. False (nothing changed) for a key that is not a live batch with its
    /// bytes.
    pub fn release_batch(&mut self, key: JournalKey) -> bool {
        match self.live.get_mut(&key) {
            Some(Live {
                entry: Entry::Batch(b),
                released: released @ None,
                ..
            }) => {
                *released = Some(b.batch.len());
                b.batch = Bytes::new();
                true
            }
            _ => false,
        }
    }

    /// Gives the live set the bytes of a released batch again (the same bytes: a slice of
    /// the frame that carries them, say). False (nothing changed) for a key that is not a
    /// released batch, or bytes of another length than the batch's.
    pub fn attach_batch(&mut self, key: JournalKey, bytes: Bytes) -> bool {
        match self.live.get_mut(&key) {
            Some(Live {
                entry: Entry::Batch(b),
                released: released @ Some(_),
                ..
            }) if *released == Some(bytes.len()) => {
                *released = None;
                b.batch = bytes;
                true
            }
            _ => false,
        }
    }

    /// Ends the entry of `key`: it is no longer live, and the ring is trimmed past it when
    /// nothing older is live.
    pub fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<Written, JournalError> {
        if !self.live.contains_key(&key) {
            return Err(JournalError::UnknownKey(key));
        }
        let payload = framed(&Record::End { key }).ok_or(JournalError::Exhausted)?;
        let (fsn, mut ops) = self.append(payload, now_millis)?;
        self.remove(key);
        self.stats.ends += 1;
        self.finish(&mut ops, now_millis);
        Ok(Written { key, fsn, ops })
    }

    /// The periodic checkpoint due at `now_millis`, if [`SyncPolicy::Periodic`] is set.
    #[must_use]
    pub fn poll_checkpoint(&mut self, now_millis: u64) -> Vec<FileOp> {
        self.ring.poll_checkpoint(now_millis)
    }

    fn full(&mut self, payload_len: usize) -> JournalError {
        self.stats.fulls += 1;
        JournalError::Full {
            link: self.link,
            needed: (payload_len + FRAME_HEADER_LEN) as u64,
        }
    }

    /// Appends a record encoded behind [`FRAME_ROOM`] free bytes: its buffer becomes the
    /// frame's body write as it is.
    fn append(
        &mut self,
        framed: Vec<u8>,
        now_millis: u64,
    ) -> Result<(i64, Vec<FileOp>), JournalError> {
        let payload = framed.get(FRAME_ROOM..).unwrap_or_default();
        match self.ring.append_placed(payload, now_millis) {
            Ok(p) => {
                let mut ops = p.ops;
                ops.extend(p.place.writes_framed(framed).into_ops());
                Ok((p.fsn, ops))
            }
            Err(e) => {
                let len = payload.len();
                Err(self.refused(e, len))
            }
        }
    }

    /// Appends a batch's record written in parts, the batch from its own bytes.
    fn append_parts(
        &mut self,
        parts: BatchParts,
        now_millis: u64,
    ) -> Result<(i64, Vec<FileOp>), JournalError> {
        let BatchParts { head, batch, tail } = parts;
        let pieces: [&[u8]; 3] = [&head[FRAME_ROOM..], &batch, &tail];
        match self.ring.append_placed_parts(&pieces, now_millis) {
            Ok(p) => {
                let mut ops = p.ops;
                ops.extend(
                    p.place
                        .writes_parts(head, [batch, Bytes::copy_from_slice(&tail)])
                        .into_ops(),
                );
                Ok((p.fsn, ops))
            }
            Err(e) => Err(self.refused(e, pieces.iter().map(|p| p.len()).sum())),
        }
    }

    /// The journal's error for a ring that refused a record of `len` bytes.
    fn refused(&mut self, e: AppendError, len: usize) -> JournalError {
        match e {
            AppendError::Full { .. } | AppendError::DeadlineExceeded { .. } => self.full(len),
            AppendError::FrameTooLarge { len, .. } => JournalError::TooLarge {
                len,
                max: self.max_record_bytes(),
            },
            _ => JournalError::Exhausted,
        }
    }

    /// Whether a record of `len` bytes needs a new segment: it does not fit behind the last
    /// frame of the open segment.
    fn needs_segment(&self, len: usize) -> bool {
        let published = self.ring.published_fsn();
        match self.ring.locate_at(published) {
            Some(at) if Some(at.file) == self.ring.segment_files().last() => {
                let end = at.offset + u64::from(at.len);
                end + (FRAME_HEADER_LEN + len) as u64 > self.config.segment_bytes
            }
            _ => true,
        }
    }

    /// After a call's own record: copies forward, trim, and the syncs the policy asks for.
    /// With [`SyncPolicy::EveryRecord`] the record and its copies are synced before the trim
    /// removes the segments the copies replace, and the trim's own changes are synced after.
    fn finish(&mut self, ops: &mut Vec<FileOp>, now_millis: u64) {
        let copies = self.copy_forward(now_millis);
        ops.extend(copies);
        let trim = self.trim();
        if self.config.sync == SyncPolicy::EveryRecord {
            let syncs = self.syncs(ops, now_millis);
            ops.extend(syncs);
            if !trim.is_empty() {
                let syncs = self.syncs(&trim, now_millis);
                ops.extend(trim);
                ops.extend(syncs);
            }
        } else {
            ops.extend(trim);
            let syncs = self.syncs(ops, now_millis);
            ops.extend(syncs);
        }
    }

    /// Copies forward the live records that pin the oldest segment while the ring is past
    /// half its capacity (at most `copy_forward_per_call`).
    fn copy_forward(&mut self, now_millis: u64) -> Vec<FileOp> {
        let mut ops = Vec::new();
        let mut copies = 0;
        while copies < self.config.copy_forward_per_call
            && self.ring.resident_bytes() > self.config.limit() / 2
        {
            let Some((&fsn, &key)) = self.by_fsn.first_key_value() else {
                break;
            };
            let first = self.ring.segment_files().next();
            if first.is_none() || first == self.ring.segment_files().last() {
                break;
            }
            if self.ring.locate_at(fsn).map(|at| at.file) != first {
                break;
            }
            // A released batch's bytes are elsewhere until they are attached again: its
            // segment stays until then (or until the batch ends).
            let Some(live) = self.live.get(&key).filter(|l| l.released.is_none()) else {
                break;
            };
            let Some(payload) = framed_put(key, live.handed, &live.entry) else {
                break;
            };
            let Ok(a) = self.ring.append_placed(&payload[FRAME_ROOM..], now_millis) else {
                break;
            };
            let moved = a.fsn;
            ops.extend(a.ops);
            ops.extend(a.place.writes_framed(payload).into_ops());
            self.by_fsn.remove(&fsn);
            self.by_fsn.insert(moved, key);
            if let Some(l) = self.live.get_mut(&key) {
                l.fsn = moved;
            }
            copies += 1;
            self.stats.copies_forward += 1;
        }
        ops
    }

    /// Moves the ring's trim point to just below the oldest record a live key needs.
    fn trim(&mut self) -> Vec<FileOp> {
        let target = self
            .by_fsn
            .first_key_value()
            .map_or(self.ring.published_fsn(), |(&fsn, _)| fsn - 1);
        if target > self.ring.acked_fsn() {
            self.ring.ack(target).unwrap_or_default()
        } else {
            Vec::new()
        }
    }

    fn syncs(&mut self, ops: &[FileOp], now_millis: u64) -> Vec<FileOp> {
        match self.config.sync {
            SyncPolicy::None => Vec::new(),
            SyncPolicy::Periodic { .. } => self.ring.poll_checkpoint(now_millis),
            SyncPolicy::EveryRecord => {
                let mut files: Vec<&str> = Vec::new();
                let mut dir = false;
                for op in ops {
                    match op {
                        FileOp::SetLen { file, .. }
                        | FileOp::Write { file, .. }
                        | FileOp::WriteParts { file, .. }
                        | FileOp::Zero { file, .. } => {
                            dir |= matches!(op, FileOp::SetLen { .. });
                            if !files.contains(&file.as_str()) {
                                files.push(file);
                            }
                        }
                        FileOp::Unlink { file } => {
                            dir = true;
                            files.retain(|f| f != file);
                        }
                        FileOp::Rename { .. } => dir = true,
                        _ => {}
                    }
                }
                let mut out: Vec<FileOp> = files
                    .into_iter()
                    .map(|f| FileOp::Sync { file: f.to_owned() })
                    .collect();
                if dir {
                    out.push(FileOp::SyncDir);
                }
                out
            }
        }
    }

    /// How many entries are live.
    #[must_use]
    pub fn live(&self) -> usize {
        self.live.len()
    }

    /// The live entry of `key`.
    #[must_use]
    pub fn get(&self, key: JournalKey) -> Option<LiveEntry<'_>> {
        self.live.get(&key).map(|l| LiveEntry {
            key,
            fsn: l.fsn,
            handed: l.handed,
            entry: &l.entry,
            released: l.released.is_some(),
        })
    }

    /// The live entries in the order they were put (key order: the order of their first
    /// FSNs, which copies forward do not change).
    pub fn live_entries(&self) -> impl Iterator<Item = LiveEntry<'_>> {
        self.live.iter().map(|(&key, l)| LiveEntry {
            key,
            fsn: l.fsn,
            handed: l.handed,
            entry: &l.entry,
            released: l.released.is_some(),
        })
    }

    /// Where the frame of `fsn` lies, while the ring holds it.
    #[must_use]
    pub fn locate(&self, fsn: i64) -> Option<FrameLocation> {
        self.ring.locate(fsn)
    }

    /// The key the next put gets.
    #[must_use]
    pub fn next_key(&self) -> JournalKey {
        JournalKey(self.next_key)
    }

    /// Sorts the live entries for the application after a restart: commands and transfers
    /// created less than `horizon` before `wall_now` may be repeated, older ones are expired
    /// (E-4); batches handed to the transport are of unknown outcome, the others unsent (P-8).
    /// Each list is in journal order: the order the entries were first put. Nothing is ended
    /// here: the caller ends each entry once it has handed its result on. A journal read from
    /// its files has no released batch; one released in this process
    /// ([`ClientJournal::release_batch`]) is listed without its bytes.
    #[must_use]
    pub fn classify(&self, wall_now: UnixMillis, horizon: Duration) -> RecoveryList {
        classify(
            self.live_entries().map(|e| (e.key, e.handed, e.entry)),
            wall_now,
            horizon,
        )
    }

    /// Segment bytes resident now.
    #[must_use]
    pub fn resident_bytes(&self) -> u64 {
        self.ring.resident_bytes()
    }

    /// The segment files the ring holds, in FSN order.
    pub fn segment_files(&self) -> impl Iterator<Item = &str> {
        self.ring.segment_files()
    }

    /// The trimmed segment file kept for the next segment (without syncs only: see
    /// [`Ring::with_recycling`]); not one of [`ClientJournal::segment_files`].
    #[must_use]
    pub fn spare_file(&self) -> Option<&str> {
        self.ring.spare()
    }

    /// What the journal did, and holds now.
    #[must_use]
    pub fn stats(&self) -> JournalStats {
        JournalStats {
            live: self.live.len() as u64,
            live_bytes: self.live.values().map(|l| l.bytes).sum(),
            held_batch_bytes: self
                .live
                .values()
                .map(|l| match &l.entry {
                    Entry::Batch(b) => b.batch.len() as u64,
                    _ => 0,
                })
                .sum(),
            resident_bytes: self.ring.resident_bytes(),
            ..self.stats
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &ClientJournalConfig {
        &self.config
    }
}
