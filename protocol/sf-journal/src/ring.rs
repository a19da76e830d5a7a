//! The ring of segments: FSNs assigned at append (SF-7), the published and acknowledged
//! cursors, the per-connection wire sequence (SF-8, SF-9, SF-19), trim on acknowledgement
//! (SF-13) and back-pressure verdicts naming their case (SF-23, SF-24).

use std::collections::{BTreeMap, VecDeque};

use crate::dict::SymbolDict;
use crate::ops::FileOp;
use crate::record::{create_record_file, Record, RecordKind};
use crate::recovery::Recovery;
use crate::segment::{
    frame_crc, frame_crc_parts, FrameWrites, SegmentHeader, FRAME_HEADER_LEN, SEGMENT_HEADER_LEN,
    TAIL_PROBE_LEN,
};
use crate::slot::{self, parse_segment_name, SegmentName};

/// Default segment file size (`sf_max_segment_bytes`).
pub const DEFAULT_SEGMENT_BYTES: u64 = 4 << 20;
/// Default cap of memory mode.
pub const DEFAULT_MEMORY_CAP: u64 = 128 << 20;
/// Default cap of SF (disk) mode.
pub const DEFAULT_DISK_CAP: u64 = 10 << 30;

/// Sizes and limits of a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Size of every segment file, header included.
    pub segment_bytes: u64,
    /// `sf_max_total_bytes`: the most segment bytes resident at once.
    pub max_total_bytes: u64,
    /// `sf_append_deadline_millis`: how long an append may wait for trim before failing.
    pub append_deadline_millis: u64,
}

impl RingConfig {
    /// Memory mode defaults: 4 MiB segments, 128 MiB cap, 30 s append deadline.
    #[must_use]
    pub fn memory() -> Self {
        Self {
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            max_total_bytes: DEFAULT_MEMORY_CAP,
            append_deadline_millis: 30_000,
        }
    }

    /// SF mode defaults: 4 MiB segments, 10 GiB cap, 30 s append deadline.
    #[must_use]
    pub fn disk() -> Self {
        Self {
            max_total_bytes: DEFAULT_DISK_CAP,
            ..Self::memory()
        }
    }
}

/// `sf_durability`: whether the journal is ever flushed to stable storage (SF-36).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// No sync at all (the default): the page cache survives a killed process, not a host
    /// crash.
    #[default]
    None,
    /// A checkpoint (every journal file synced, then the directory) at this interval.
    Periodic {
        /// Milliseconds between checkpoints.
        interval_millis: u64,
    },
}

/// The state of the wire, as the I/O side reports it; back-pressure verdicts name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Link {
    /// Connected and draining (or not yet started).
    Publishing,
    /// In the reconnect loop.
    Reconnecting {
        /// Reconnect attempts made so far in this outage.
        attempts: u32,
        /// When the outage began, milliseconds since the Unix epoch.
        outage_start_millis: u64,
    },
}

/// Which of the two back-pressure cases stopped an append (SF-24).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackPressure {
    /// The server acknowledges, but more slowly than the producer appends.
    WhilePublishing,
    /// The I/O side is reconnecting and the ring is filling.
    WhileReconnecting {
        /// Reconnect attempts made so far.
        attempts: u32,
        /// When the outage began, milliseconds since the Unix epoch.
        outage_start_millis: u64,
    },
}

/// Why an append was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// The ring is full; retry after trim, before the deadline (the caller spins with yield).
    #[error("ring full, waiting for acknowledgements ({case:?}); retry before {deadline_millis}")]
    Full {
        /// Which case applies.
        case: BackPressure,
        /// When the wait ends with [`AppendError::DeadlineExceeded`].
        deadline_millis: u64,
    },
    /// The ring stayed full for the whole append deadline (SF-23).
    #[error("ring full for {waited_millis} ms: {case:?}")]
    DeadlineExceeded {
        /// Which case applies.
        case: BackPressure,
        /// How long the append waited.
        waited_millis: u64,
    },
    /// Every FSN is used (only a slot whose files claim FSNs near `i64::MAX` gets here).
    #[error("no FSN left to assign")]
    FsnExhausted,
    /// Every segment generation is used: no name is left for a new segment.
    #[error("no segment generation left to name a new segment")]
    GenerationsExhausted,
    /// The frame cannot fit in an empty segment.
    #[error("frame of {len} bytes does not fit a segment of {segment_bytes} bytes")]
    FrameTooLarge {
        /// The payload length.
        len: usize,
        /// The configured segment size.
        segment_bytes: u64,
    },
}

/// Why an acknowledgement is refused: the server named what was never sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AckError {
    /// An acknowledgement beyond the last published FSN.
    #[error("acknowledgement of FSN {fsn} beyond published FSN {published}")]
    BeyondPublished {
        /// The FSN acknowledged.
        fsn: i64,
        /// The last published FSN.
        published: i64,
    },
    /// An acknowledgement with no connection window open.
    #[error("acknowledgement without a connection")]
    NotConnected,
    /// Durable-ack mode: an OK whose wire sequence is not above the last queued one.
    #[error("OK for wire sequence {wire_seq} after {last}")]
    OkOutOfOrder {
        /// The wire sequence of the refused OK.
        wire_seq: u64,
        /// The last queued one.
        last: u64,
    },
    /// An OK or error for a wire sequence not yet sent on this connection: nothing is
    /// acknowledged or trimmed by it.
    #[error("status for wire sequence {wire_seq}, not sent yet (next is {next_wire_seq})")]
    NotSent {
        /// The wire sequence the server named.
        wire_seq: u64,
        /// The wire sequence the next frame sent on this connection will carry.
        next_wire_seq: u64,
    },
    /// An error for a frame already acknowledged: an acknowledgement covers every wire
    /// sequence up to its own, so the server contradicts itself. The frame may be trimmed
    /// already, so neither a replay nor keeping it in the journal can be promised: the error
    /// is refused (SF-43).
    #[error(
        "error for wire sequence {wire_seq} (FSN {fsn}), already acknowledged up to FSN {acked}"
    )]
    AlreadyAcknowledged {
        /// The wire sequence the server named.
        wire_seq: u64,
        /// The FSN it stands for.
        fsn: i64,
        /// The acknowledged FSN.
        acked: i64,
    },
    /// A durable acknowledgement while durable-ack mode is off: the server sent what was not
    /// asked for.
    #[error("durable acknowledgement without durable-ack mode")]
    DurableAckNotRequested,
    /// Durable-ack mode: the OK queue is at its count or byte bound and the OK does not fit
    /// merged into the newest entry either; the OK is refused.
    #[error("OK queue full ({entries} entries, {bytes} bytes)")]
    OkQueueFull {
        /// Entries queued.
        entries: usize,
        /// Bytes queued.
        bytes: usize,
    },
}

/// Bounds of the durable-ack OK queue, which the server fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OkQueueLimits {
    /// Most entries queued. It also bounds the frames a connection has out unacknowledged:
    /// [`Ring::next_to_send`] holds the next frame while this many are, so OKs alone never
    /// overflow the queue.
    pub max_entries: usize,
    /// Most bytes queued: per entry 16, plus per table its name's length and 8.
    pub max_bytes: usize,
}

impl Default for OkQueueLimits {
    fn default() -> Self {
        Self {
            max_entries: 65_536,
            max_bytes: 16 << 20,
        }
    }
}

/// One OK waiting for its tables to become durable (SF-14).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingOk {
    /// The FSN the OK acknowledges.
    pub fsn: i64,
    /// The wire sequence it carried.
    pub wire_seq: u64,
    /// Each table the batch touched, with its seqTxn.
    pub tables: Vec<(String, i64)>,
}

impl PendingOk {
    fn bytes(&self) -> usize {
        16 + self.tables.iter().map(|(t, _)| t.len() + 8).sum::<usize>()
    }
}

#[derive(Debug, Clone, Default)]
struct Durable {
    limits: OkQueueLimits,
    queue: VecDeque<PendingOk>,
    bytes: usize,
    durable: BTreeMap<String, i64>,
    refused: u64,
}

/// What closing the ring calls for (SF-26 to SF-28, SF-D8).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[must_use]
pub enum CloseVerdict {
    /// Everything published is acknowledged: remove the slot's journal files, leaving only
    /// the lock files.
    Drained {
        /// The unlinks: segments, manifest, watermark, dictionary.
        ops: Vec<FileOp>,
    },
    /// Keep waiting for acknowledgements, until the given time.
    Wait {
        /// When the wait ends.
        deadline_millis: u64,
    },
    /// The wait ended (or was skipped) with frames unacknowledged: in SF mode they stay on
    /// disk for the next sender on the slot; in memory mode they are lost.
    Unacknowledged {
        /// The FSNs not acknowledged.
        fsns: std::ops::Range<i64>,
        /// Whether the wait was skipped (a timeout of 0 or below).
        skipped: bool,
    },
}

/// A frame taken into the ring.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Appended {
    /// Its FSN.
    pub fsn: i64,
    /// The writes that store it, in order (segment creation first when one is needed).
    pub ops: Vec<FileOp>,
}

/// A frame taken into the ring by [`Ring::append_placed`], its bytes still to be written by
/// the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Placed<'a> {
    /// Its FSN.
    pub fsn: i64,
    /// Operations to carry out before the frame's writes (a new segment and the manifest
    /// naming it); empty while the frame fits the open segment.
    pub ops: Vec<FileOp>,
    /// Where the frame goes and what its header holds.
    pub place: FramePlace<'a>,
}

/// Where an appended frame goes in its segment, and its header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramePlace<'a> {
    /// The segment file.
    pub file: &'a str,
    /// Offset of the frame's checksum field; the length field follows it, then the payload.
    pub offset: u64,
    /// The payload length, as the frame's length field holds it.
    pub payload_len: i32,
    /// The frame's CRC32C (over the length field and the payload).
    pub crc: u32,
    /// Zero bytes the length-and-payload write carries after the payload: in a segment
    /// reused with old frames still in it ([`Ring::with_recycling`]), the
    /// [`TAIL_PROBE_LEN`] bytes after the frame (fewer at the
    /// segment's end), so a walk of the segment stops there and never reads an old frame as
    /// the next one; 0 in a fresh segment, whose bytes past the frame are zero already.
    pub clear_after: usize,
}

impl FramePlace<'_> {
    /// The two writes storing `payload` (the payload this place was made for) here, as owned
    /// operations: the length and payload first, the checksum last.
    #[must_use]
    pub fn writes(&self, payload: &[u8]) -> FrameWrites {
        FrameWrites::with_crc(
            self.file,
            self.offset,
            self.payload_len,
            self.crc,
            payload,
            self.clear_after,
        )
    }

    /// [`FramePlace::writes`] from the payload this place was made for in parts
    /// ([`Ring::append_placed_parts`]): `head`, holding four free bytes and then the payload's
    /// first part, and the `rest`, written from the bytes they share with their owner.
    #[must_use]
    pub fn writes_parts(
        &self,
        head: Vec<u8>,
        rest: impl IntoIterator<Item = bytes::Bytes>,
    ) -> FrameWrites {
        FrameWrites::with_crc_parts(
            self.file,
            self.offset,
            self.payload_len,
            self.crc,
            head,
            rest,
            self.clear_after,
        )
    }

    /// [`FramePlace::writes`] from a buffer holding four free bytes and then the payload this
    /// place was made for: the length field goes into the free bytes and the buffer becomes
    /// the first write without a copy.
    #[must_use]
    pub fn writes_framed(&self, framed: Vec<u8>) -> FrameWrites {
        FrameWrites::with_crc_framed(
            self.file,
            self.offset,
            self.payload_len,
            self.crc,
            framed,
            self.clear_after,
        )
    }
}

/// Where a frame lies: the file and the range of its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameLocation {
    /// The segment file.
    pub file: String,
    /// Offset of the payload.
    pub offset: u64,
    /// Length of the payload.
    pub len: u32,
}

/// Where a frame lies, the file named by a borrow of the ring's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameAt<'a> {
    /// The segment file.
    pub file: &'a str,
    /// Offset of the payload.
    pub offset: u64,
    /// Length of the payload.
    pub len: u32,
}

impl FrameAt<'_> {
    /// The same location owning its file name.
    #[must_use]
    pub fn to_location(&self) -> FrameLocation {
        FrameLocation {
            file: self.file.to_owned(),
            offset: self.offset,
            len: self.len,
        }
    }
}

#[derive(Debug, Clone)]
struct Seg {
    file: String,
    base: i64,
    /// Offset of each frame's checksum field.
    offsets: Vec<u64>,
    lens: Vec<u32>,
    used: u64,
    capacity: u64,
    /// Reused from a trimmed segment: old frames may lie past `used`.
    stale: bool,
}

impl Seg {
    fn last_fsn(&self) -> i64 {
        self.base.saturating_add(self.offsets.len() as i64) - 1
    }
}

/// The per-connection window mapping wire sequences to FSNs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The connection generation this window belongs to.
    pub generation: u64,
    /// `ackedFsn + 1` when the connection was made.
    pub fsn_at_zero: i64,
    /// How many catch-up frames the connection sends before the journal's frames.
    pub catch_up: u64,
    /// How many of them went out so far ([`Ring::catch_up_sent`]); all of them once a journal
    /// frame went out, as they go first.
    pub catch_up_sent: u64,
    /// The next FSN to send on this connection.
    pub next_send: i64,
}

impl Window {
    /// The FSN a server acknowledgement of `wire_seq` stands for; `None` for a catch-up frame.
    /// A wire sequence too large for any FSN saturates at `i64::MAX` (never published).
    #[must_use]
    pub fn fsn_of(&self, wire_seq: u64) -> Option<i64> {
        let n = wire_seq.checked_sub(self.catch_up)?;
        Some(
            self.fsn_at_zero
                .saturating_add(i64::try_from(n).unwrap_or(i64::MAX)),
        )
    }

    /// The wire sequence the next frame sent on this connection carries: a catch-up frame's
    /// while some are still to go, then a journal frame's.
    #[must_use]
    pub fn next_wire_seq(&self) -> u64 {
        let sent = u64::try_from(self.next_send.saturating_sub(self.fsn_at_zero)).unwrap_or(0);
        self.catch_up_sent.saturating_add(sent)
    }

    /// Refuses a status naming a frame this connection has not sent yet: a journal frame not
    /// handed out, or a catch-up frame not counted by [`Ring::catch_up_sent`].
    fn check_sent(&self, wire_seq: u64, fsn: Option<i64>) -> Result<(), AckError> {
        let sent = match fsn {
            Some(f) => f < self.next_send,
            None => wire_seq < self.catch_up_sent,
        };
        if sent {
            return Ok(());
        }
        Err(AckError::NotSent {
            wire_seq,
            next_wire_seq: self.next_wire_seq(),
        })
    }
}

/// The ring: segments, cursors, wire window, back-pressure.
#[derive(Debug, Clone)]
pub struct Ring {
    config: RingConfig,
    segs: VecDeque<Seg>,
    next_fsn: i64,
    acked_fsn: i64,
    next_generation: u64,
    manifest_generation: i64,
    link: Link,
    wait_since: Option<u64>,
    last_refusal: Option<u64>,
    connection_generation: u64,
    window: Option<Window>,
    replayed_frames: u64,
    sent_high: i64,
    durable: Option<Durable>,
    watermark_generation: i64,
    durability: Durability,
    last_checkpoint_millis: Option<u64>,
    dict_in_use: bool,
    /// Whether trimmed segments are kept for reuse ([`Ring::with_recycling`]).
    recycle: bool,
    /// Whether a trimmed segment is kept, as [`slot::SPARE`], for the next segment to reuse.
    spare: bool,
}

impl Ring {
    /// An empty ring whose first frame gets FSN 0.
    #[must_use]
    pub fn new(config: RingConfig) -> Self {
        Self {
            config,
            segs: VecDeque::new(),
            next_fsn: 0,
            acked_fsn: -1,
            next_generation: 0,
            manifest_generation: 0,
            link: Link::Publishing,
            wait_since: None,
            last_refusal: None,
            connection_generation: 0,
            window: None,
            replayed_frames: 0,
            sent_high: -1,
            durable: None,
            watermark_generation: 0,
            durability: Durability::None,
            last_checkpoint_millis: None,
            dict_in_use: false,
            recycle: false,
            spare: false,
        }
    }

    /// The ring a recovery found: its segments, cursors and bumped connection generation. The
    /// recovery's operations must be carried out before any operation of this ring.
    #[must_use]
    pub fn from_recovery(config: RingConfig, r: &Recovery) -> Self {
        let mut ring = Self::new(config);
        for s in &r.segments {
            ring.segs.push_back(Seg {
                file: s.file.clone(),
                base: s.scan.header.base_seq,
                offsets: s.scan.frames.iter().map(|f| f.offset).collect(),
                lens: s.scan.frames.iter().map(|f| f.payload_len).collect(),
                used: s.scan.append_offset,
                capacity: s.file_len,
                // Recovery zeroes whatever lies past the last frame before this ring writes.
                stale: false,
            });
        }
        let names = r
            .segments
            .iter()
            .map(|s| s.file.as_str())
            .chain(r.spares.iter().map(String::as_str));
        for name in names {
            ring.next_generation = ring.next_generation.max(match parse_segment_name(name) {
                Some(SegmentName::Generation(g)) => g.saturating_add(1),
                _ => 1,
            });
        }
        // FSNs resume past the last frame on disk only where the watermark or the manifest
        // says so; then the last segment cannot take the next frame at its own numbering.
        if let Some(last) = ring.segs.back_mut() {
            if last.base.saturating_add(last.offsets.len() as i64) != r.next_fsn {
                last.capacity = last.used;
            }
        }
        ring.next_fsn = r.next_fsn;
        ring.acked_fsn = r.acked_fsn;
        ring.sent_high = r.acked_fsn;
        ring.manifest_generation = r.manifest.map_or(0, |m| m.generation);
        ring.connection_generation = r.connection_generation;
        ring.dict_in_use = r.dict.is_some();
        ring.watermark_generation = match r.watermark {
            Some(crate::record::Watermark::Current(w)) => w.generation,
            // A legacy file is rewritten by the recovery's operations with generation 1.
            Some(_) => 1,
            None => 0,
        };
        ring
    }

    /// The FSN of the last published frame (−1 before any).
    #[must_use]
    pub fn published_fsn(&self) -> i64 {
        self.next_fsn - 1
    }

    /// The highest acknowledged FSN (−1 before any).
    #[must_use]
    pub fn acked_fsn(&self) -> i64 {
        self.acked_fsn
    }

    /// Segment bytes resident now.
    #[must_use]
    pub fn resident_bytes(&self) -> u64 {
        self.segs.iter().map(|s| s.capacity).sum()
    }

    /// The segment files in FSN order.
    pub fn segment_files(&self) -> impl Iterator<Item = &str> {
        self.segs.iter().map(|s| s.file.as_str())
    }

    /// The connection generation: bumped by recovery and by every connection.
    #[must_use]
    pub fn connection_generation(&self) -> u64 {
        self.connection_generation
    }

    /// Frames sent again after a reconnect (SF-21).
    #[must_use]
    pub fn replayed_frames(&self) -> u64 {
        self.replayed_frames
    }

    /// Tells the ring the state of the wire (for back-pressure verdicts).
    pub fn set_link(&mut self, link: Link) {
        self.link = link;
    }

    fn case(&self) -> BackPressure {
        match self.link {
            Link::Publishing => BackPressure::WhilePublishing,
            Link::Reconnecting {
                attempts,
                outage_start_millis,
            } => BackPressure::WhileReconnecting {
                attempts,
                outage_start_millis,
            },
        }
    }

    /// Takes a frame: assigns the next FSN and returns the writes storing it. When a new segment
    /// is needed and the cap is reached, the append is refused with [`AppendError::Full`] until
    /// `append_deadline_millis` after the first refusal, then [`AppendError::DeadlineExceeded`].
    /// A wait ends when an append is taken, when it times out, when no retry comes within the
    /// deadline of the last refusal, or when `now_millis` goes back; then the next refusal
    /// starts a new wait. `now_millis` should come from a clock that does not go back.
    pub fn append(&mut self, payload: &[u8], now_millis: u64) -> Result<Appended, AppendError> {
        let Placed {
            fsn,
            mut ops,
            place,
        } = self.append_placed(payload, now_millis)?;
        ops.extend(place.writes(payload).into_ops());
        Ok(Appended { fsn, ops })
    }

    /// [`Ring::append`] without copying the payload into the returned writes: the caller
    /// carries out [`Placed::ops`] (a segment being opened, usually none), then stores the
    /// frame itself at [`Placed::place`] from its own bytes, in the order
    /// [`FramePlace::writes`] gives (the length and payload, then the checksum: SF-5).
    pub fn append_placed(
        &mut self,
        payload: &[u8],
        now_millis: u64,
    ) -> Result<Placed<'_>, AppendError> {
        self.place(payload.len(), now_millis, |len| frame_crc(len, payload))
    }

    /// [`Ring::append_placed`] of the payload that is `parts` one after another; the caller
    /// stores it with [`FramePlace::writes_parts`] (or the same bytes by any other way).
    pub fn append_placed_parts(
        &mut self,
        parts: &[&[u8]],
        now_millis: u64,
    ) -> Result<Placed<'_>, AppendError> {
        let len = parts.iter().map(|p| p.len()).sum();
        self.place(len, now_millis, |l| frame_crc_parts(l, parts))
    }

    /// Places a frame of a `payload_len`-byte payload whose checksum `crc` gives (from the
    /// length field's value), once it is known to fit.
    fn place(
        &mut self,
        payload_len: usize,
        now_millis: u64,
        crc: impl FnOnce(i32) -> u32,
    ) -> Result<Placed<'_>, AppendError> {
        if self.next_fsn == i64::MAX {
            return Err(AppendError::FsnExhausted);
        }
        let need = (FRAME_HEADER_LEN + payload_len) as u64;
        let room = self
            .config
            .segment_bytes
            .saturating_sub(SEGMENT_HEADER_LEN as u64);
        if need > room || i32::try_from(payload_len).is_err() {
            return Err(AppendError::FrameTooLarge {
                len: payload_len,
                segment_bytes: self.config.segment_bytes,
            });
        }
        let fits = self
            .segs
            .back()
            .is_some_and(|s| s.used + need <= s.capacity);
        let mut ops = Vec::new();
        if !fits {
            if self.resident_bytes() + self.config.segment_bytes > self.config.max_total_bytes {
                // A refusal not retried within the deadline, or a clock that went back, ends
                // the wait it belonged to: this append starts a new one.
                let deadline = self.config.append_deadline_millis;
                if self
                    .last_refusal
                    .is_some_and(|last| now_millis < last || now_millis - last > deadline)
                {
                    self.wait_since = None;
                }
                self.last_refusal = Some(now_millis);
                if self.wait_since.is_none() {
                    tracing::debug!(
                        case = ?self.case(),
                        resident_bytes = self.resident_bytes(),
                        "sf ring full: append waits for acknowledgements"
                    );
                }
                let since = *self.wait_since.get_or_insert(now_millis);
                let waited = now_millis.saturating_sub(since);
                if waited >= self.config.append_deadline_millis {
                    self.wait_since = None;
                    self.last_refusal = None;
                    tracing::warn!(
                        case = ?self.case(),
                        waited_millis = waited,
                        "sf append refused: the ring stayed full past the append deadline"
                    );
                    return Err(AppendError::DeadlineExceeded {
                        case: self.case(),
                        waited_millis: waited,
                    });
                }
                return Err(AppendError::Full {
                    case: self.case(),
                    deadline_millis: since + self.config.append_deadline_millis,
                });
            }
            if self.next_generation == u64::MAX {
                return Err(AppendError::GenerationsExhausted);
            }
            ops.extend(self.open_segment(now_millis));
        }
        self.wait_since = None;
        self.last_refusal = None;
        let fsn = self.next_fsn;
        let seg = self.segs.back_mut().expect("a segment is open");
        let offset = seg.used;
        seg.offsets.push(offset);
        seg.lens.push(payload_len as u32);
        seg.used += need;
        let clear_after = if seg.stale {
            (seg.capacity - seg.used).min(TAIL_PROBE_LEN as u64) as usize
        } else {
            0
        };
        self.next_fsn += 1;
        let len_field = i32::try_from(payload_len).expect("length checked");
        Ok(Placed {
            fsn,
            ops,
            place: FramePlace {
                file: &seg.file,
                offset,
                payload_len: len_field,
                crc: crc(len_field),
                clear_after,
            },
        })
    }

    fn open_segment(&mut self, now_millis: u64) -> Vec<FileOp> {
        let file = if self.next_generation == 0 {
            slot::SEGMENT_INITIAL.to_owned()
        } else {
            slot::segment_name(self.next_generation)
        };
        self.next_generation += 1;
        let header = SegmentHeader {
            base_seq: self.next_fsn,
            created_micros: now_millis.saturating_mul(1000),
        };
        let mut ops = Vec::with_capacity(5);
        let stale = std::mem::take(&mut self.spare);
        if stale {
            // Made a segment under the spare's own name, then renamed whole: a segment name
            // never holds a cut header over old frames. The first frame's checksum and length
            // are cleared first, as every later frame's are by the append before it
            // (`FramePlace::clear_after`). The sizing after the rename changes nothing, or
            // makes the segment anew if the spare was removed meanwhile.
            ops.push(FileOp::Zero {
                file: slot::SPARE.to_owned(),
                offset: SEGMENT_HEADER_LEN as u64,
                // A segment holds a frame header past its own at least: no append fits one
                // smaller, so none is ever opened.
                len: FRAME_HEADER_LEN as u64,
            });
            ops.push(FileOp::Write {
                file: slot::SPARE.to_owned(),
                offset: 0,
                bytes: header.encode().to_vec(),
            });
            ops.push(FileOp::Rename {
                from: slot::SPARE.to_owned(),
                to: file.clone(),
            });
            ops.push(FileOp::SetLen {
                file: file.clone(),
                len: self.config.segment_bytes,
            });
        } else {
            ops.push(FileOp::SetLen {
                file: file.clone(),
                len: self.config.segment_bytes,
            });
            ops.push(FileOp::Write {
                file: file.clone(),
                offset: 0,
                bytes: header.encode().to_vec(),
            });
        }
        self.segs.push_back(Seg {
            file,
            base: self.next_fsn,
            offsets: Vec::new(),
            lens: Vec::new(),
            used: SEGMENT_HEADER_LEN as u64,
            capacity: self.config.segment_bytes,
            stale,
        });
        ops.extend(self.manifest_ops());
        ops
    }

    fn manifest_ops(&mut self) -> Vec<FileOp> {
        self.manifest_generation += 1;
        let record = Record {
            kind: RecordKind::Manifest,
            generation: self.manifest_generation,
            first: self.segs.front().map_or(0, |s| s.base),
            second: self.segs.back().map_or(0, |s| s.base),
        };
        if self.manifest_generation == 1 {
            create_record_file(slot::MANIFEST, &record)
        } else {
            vec![record.write(slot::MANIFEST)]
        }
    }

    /// Where the frame of `fsn` lies, if it is still in the ring.
    #[must_use]
    pub fn locate(&self, fsn: i64) -> Option<FrameLocation> {
        self.locate_at(fsn).map(|at| at.to_location())
    }

    /// [`Ring::locate`] naming the file by a borrow of the ring's own name.
    #[must_use]
    pub fn locate_at(&self, fsn: i64) -> Option<FrameAt<'_>> {
        let seg = self
            .segs
            .iter()
            .find(|s| fsn >= s.base && fsn < s.base.saturating_add(s.offsets.len() as i64))?;
        let i = (fsn - seg.base) as usize;
        Some(FrameAt {
            file: &seg.file,
            offset: seg.offsets[i] + FRAME_HEADER_LEN as u64,
            len: seg.lens[i],
        })
    }

    /// A successful upgrade: a fresh window with wire sequence 0 at `ackedFsn + 1` after
    /// `catch_up` catch-up frames; the read cursor rewinds to the first unacknowledged frame.
    pub fn connect(&mut self, catch_up: u64) -> Window {
        self.connection_generation += 1;
        let w = Window {
            generation: self.connection_generation,
            fsn_at_zero: self.acked_fsn.saturating_add(1),
            catch_up,
            catch_up_sent: 0,
            next_send: self.acked_fsn.saturating_add(1),
        };
        self.window = Some(w);
        self.link = Link::Publishing;
        self.reset_pending_oks();
        w
    }

    /// A catch-up frame went out on the open connection (SF-9): its wire sequence may now be
    /// acknowledged or refused. Those past the count the connection was made with are not
    /// counted.
    pub fn catch_up_sent(&mut self) {
        if let Some(w) = self.window.as_mut() {
            w.catch_up_sent = w.catch_up_sent.saturating_add(1).min(w.catch_up);
        }
    }

    /// The connection broke: the window closes. In durable-ack mode the OKs still waiting
    /// for durability are dropped: their frames are not acknowledged, so the next connection
    /// replays them and the server acknowledges them again.
    pub fn disconnect(&mut self) {
        self.window = None;
        self.reset_pending_oks();
    }

    fn reset_pending_oks(&mut self) {
        if let Some(d) = self.durable.as_mut() {
            d.queue.clear();
            d.bytes = 0;
            d.durable.clear();
        }
    }

    /// The next frame to send on the open connection, in FSN order, including frames appended
    /// since the connection was made; `None` when everything published was sent.
    pub fn next_to_send(&mut self) -> Option<(i64, FrameLocation)> {
        self.next_to_send_at()
            .map(|(fsn, at)| (fsn, at.to_location()))
    }

    /// [`Ring::next_to_send`] naming the file by a borrow of the ring's own name.
    pub fn next_to_send_at(&mut self) -> Option<(i64, FrameAt<'_>)> {
        let w = self.window.as_mut()?;
        let fsn = w.next_send;
        if fsn >= self.next_fsn {
            return None;
        }
        // Durable-ack mode: each frame sent and not yet acknowledged may queue one OK, so no
        // more go out than the OK queue holds; the rest wait for a durable acknowledgement
        // (an OK refused for want of room would end the connection for nothing).
        if let Some(d) = &self.durable {
            let outstanding = fsn.saturating_sub(self.acked_fsn).saturating_sub(1);
            if outstanding >= i64::try_from(d.limits.max_entries).unwrap_or(i64::MAX) {
                return None;
            }
        }
        w.next_send += 1;
        // Catch-up frames go first: once a journal frame is out, so are they all.
        w.catch_up_sent = w.catch_up;
        if fsn <= self.sent_high {
            self.replayed_frames += 1;
        } else {
            self.sent_high = fsn;
        }
        let at = self.locate_at(fsn)?;
        Some((fsn, at))
    }

    /// A server error for `wire_seq` (SF-43): the frame is never acknowledged or trimmed by
    /// it. Returns the FSN it concerns (`None` for a catch-up frame) and what to do: a
    /// retriable error ends the connection and the next one replays from the first
    /// unacknowledged frame; a terminal one ends the sender with the frame still journalled.
    /// An error for a frame already acknowledged (and maybe trimmed) can promise neither, so
    /// it is refused with [`AckError::AlreadyAcknowledged`].
    pub fn reject(
        &mut self,
        wire_seq: u64,
        status: crate::status::ErrorStatus,
    ) -> Result<(Option<i64>, crate::status::Category), AckError> {
        let w = self.window.ok_or(AckError::NotConnected)?;
        let fsn = w.fsn_of(wire_seq);
        if let Some(fsn) = fsn.filter(|&f| f > self.published_fsn()) {
            return Err(AckError::BeyondPublished {
                fsn,
                published: self.published_fsn(),
            });
        }
        w.check_sent(wire_seq, fsn)?;
        if let Some(fsn) = fsn.filter(|&f| f <= self.acked_fsn) {
            return Err(AckError::AlreadyAcknowledged {
                wire_seq,
                fsn,
                acked: self.acked_fsn,
            });
        }
        self.window = None;
        self.reset_pending_oks();
        Ok((fsn, status.category()))
    }

    /// Durable-ack mode (`request_durable_ack=on`): OKs no longer trim; they queue until a
    /// durable acknowledgement covers their tables.
    #[must_use]
    pub fn with_durable_ack(mut self, limits: OkQueueLimits) -> Self {
        self.durable = Some(Durable {
            limits,
            ..Durable::default()
        });
        self
    }

    /// A server OK for `wire_seq` on the open connection. Default mode: maps it to an FSN and
    /// acknowledges. Durable-ack mode: queues it with its tables and trims nothing. An OK of a
    /// catch-up frame maps to no FSN and does nothing.
    pub fn ok(&mut self, wire_seq: u64) -> Result<Vec<FileOp>, AckError> {
        self.ok_with_tables(wire_seq, Vec::new())
    }

    /// [`Ring::ok`] with the per-table seqTxn the OK carried.
    pub fn ok_with_tables(
        &mut self,
        wire_seq: u64,
        tables: Vec<(String, i64)>,
    ) -> Result<Vec<FileOp>, AckError> {
        let w = self.window.ok_or(AckError::NotConnected)?;
        let Some(fsn) = w.fsn_of(wire_seq) else {
            w.check_sent(wire_seq, None)?;
            return Ok(Vec::new());
        };
        if fsn > self.published_fsn() {
            return Err(AckError::BeyondPublished {
                fsn,
                published: self.published_fsn(),
            });
        }
        w.check_sent(wire_seq, Some(fsn))?;
        let Some(d) = self.durable.as_mut() else {
            return self.ack(fsn);
        };
        if fsn <= self.acked_fsn {
            return Ok(Vec::new());
        }
        if let Some(last) = d.queue.back().filter(|l| l.fsn >= fsn) {
            return Err(AckError::OkOutOfOrder {
                wire_seq,
                last: last.wire_seq,
            });
        }
        let entry = PendingOk {
            fsn,
            wire_seq,
            tables,
        };
        let bytes = entry.bytes();
        if d.queue.len() >= d.limits.max_entries || d.bytes + bytes > d.limits.max_bytes {
            // Past a bound the OK joins the newest entry when the two fit together: the
            // entry then stands for both and pops only once every table of both is durable
            // at the higher seqTxn, so nothing is acknowledged early and nothing is lost.
            if let Some(last) = d.queue.back_mut() {
                let mut merged = last.clone();
                // Each table is looked up by name once: the cost is the sum of the two lists,
                // not their product (both hold what the server chose to name).
                let mut at: BTreeMap<String, usize> = merged
                    .tables
                    .iter()
                    .enumerate()
                    .map(|(i, (n, _))| (n.clone(), i))
                    .collect();
                for (t, txn) in entry.tables {
                    match at.get(&t) {
                        Some(&i) => merged.tables[i].1 = merged.tables[i].1.max(txn),
                        None => {
                            at.insert(t.clone(), merged.tables.len());
                            merged.tables.push((t, txn));
                        }
                    }
                }
                merged.fsn = fsn;
                merged.wire_seq = wire_seq;
                let grown = d.bytes - last.bytes() + merged.bytes();
                if grown <= d.limits.max_bytes {
                    *last = merged;
                    d.bytes = grown;
                    tracing::debug!(
                        wire_seq,
                        "sf OK queue at its bound: OK merged into the newest"
                    );
                    return Ok(Vec::new());
                }
            }
            d.refused += 1;
            tracing::warn!(
                entries = d.queue.len(),
                bytes = d.bytes,
                refused = d.refused,
                "sf OK queue full: OK refused"
            );
            return Err(AckError::OkQueueFull {
                entries: d.queue.len(),
                bytes: d.bytes,
            });
        }
        d.bytes += bytes;
        d.queue.push_back(entry);
        Ok(Vec::new())
    }

    /// A `STATUS_DURABLE_ACK` naming tables and their durable seqTxn (SF-15): every head entry
    /// of the OK queue whose tables are all covered pops, and the acknowledged FSN advances to
    /// the last popped. Watermarks of tables no queued entry names are not kept.
    /// Outside durable-ack mode it is refused with [`AckError::DurableAckNotRequested`].
    pub fn durable_ack(&mut self, tables: &[(String, i64)]) -> Result<Vec<FileOp>, AckError> {
        let Some(d) = self.durable.as_mut() else {
            return Err(AckError::DurableAckNotRequested);
        };
        for (t, txn) in tables {
            let e = d.durable.entry(t.clone()).or_insert(*txn);
            *e = (*e).max(*txn);
        }
        let mut upto = None;
        while let Some(head) = d.queue.front() {
            let covered = head
                .tables
                .iter()
                .all(|(t, txn)| d.durable.get(t).is_some_and(|v| v >= txn));
            if !covered {
                break;
            }
            let head = d.queue.pop_front().expect("a head");
            d.bytes -= head.bytes();
            upto = Some(head.fsn);
        }
        // The names still queued, gathered once: a durable ack naming many tables over a long
        // queue costs the sum of the two, not their product.
        let named: std::collections::BTreeSet<&str> = d
            .queue
            .iter()
            .flat_map(|e| e.tables.iter().map(|(n, _)| n.as_str()))
            .collect();
        d.durable.retain(|t, _| named.contains(t.as_str()));
        match upto {
            Some(fsn) => self.ack(fsn),
            None => Ok(Vec::new()),
        }
    }

    /// Whether to send a WebSocket PING now (SF-17): only in durable-ack mode, with OKs
    /// waiting for durable acknowledgement, once `interval_millis`
    /// (`durable_ack_keepalive_interval_millis`) has passed since the last frame or PING sent.
    /// An interval of 0 turns the PING off, as the reference client reads it.
    #[must_use]
    pub fn keepalive_due(
        &self,
        now_millis: u64,
        last_sent_millis: u64,
        interval_millis: u64,
    ) -> bool {
        self.keepalive_in(now_millis, last_sent_millis, interval_millis) == Some(0)
    }

    /// How many milliseconds until a PING is due (SF-17): `Some(0)` when
    /// [`Ring::keepalive_due`] holds, `None` when none comes due as things stand (not in
    /// durable-ack mode, no OK waiting, no connection, or an interval of 0). A driver waiting
    /// for the server ends its wait by then, so the PINGs keep their interval however long
    /// it would wait otherwise.
    #[must_use]
    pub fn keepalive_in(
        &self,
        now_millis: u64,
        last_sent_millis: u64,
        interval_millis: u64,
    ) -> Option<u64> {
        let pending = self.durable.as_ref().is_some_and(|d| !d.queue.is_empty());
        if interval_millis == 0 || !pending || self.window.is_none() {
            return None;
        }
        Some(interval_millis.saturating_sub(now_millis.saturating_sub(last_sent_millis)))
    }

    /// Whether the ring is in durable-ack mode ([`Ring::with_durable_ack`]).
    #[must_use]
    pub fn durable_ack_mode(&self) -> bool {
        self.durable.is_some()
    }

    /// The OKs waiting in durable-ack mode, oldest first.
    pub fn pending_oks(&self) -> impl Iterator<Item = &PendingOk> {
        self.durable.iter().flat_map(|d| d.queue.iter())
    }

    /// OKs refused because the queue was at its bound.
    #[must_use]
    pub fn refused_oks(&self) -> u64 {
        self.durable.as_ref().map_or(0, |d| d.refused)
    }

    /// Appends a frame that uses `symbols`: new symbols get ids and their dictionary chunk is
    /// written before the frame (SF-35), so a crash can leave entries no frame uses, never a
    /// frame using ids the dictionary lacks. `encode` builds the frame from the ids of
    /// `symbols`, in their order. A refused append leaves the dictionary as it was.
    pub fn append_with_symbols<S: AsRef<str>>(
        &mut self,
        dict: &mut SymbolDict,
        symbols: &[S],
        encode: impl FnOnce(&[u32]) -> Vec<u8>,
        now_millis: u64,
    ) -> Result<(Vec<u32>, Appended), AppendError> {
        let probe = dict.clone();
        let (ids, mut ops) = dict.intern(symbols);
        let payload = encode(&ids);
        match self.append(&payload, now_millis) {
            Ok(a) => {
                self.dict_in_use |= !ops.is_empty();
                ops.extend(a.ops);
                Ok((ids, Appended { fsn: a.fsn, ops }))
            }
            Err(e) => {
                *dict = probe;
                Err(e)
            }
        }
    }

    /// Sets `sf_durability`.
    #[must_use]
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Keeps one trimmed segment for the next one instead of unlinking it: the trim renames
    /// it to [`slot::SPARE`], which is not a segment name, and the next segment is that file,
    /// its header written and the checksum and length of its first frame cleared under the
    /// spare's name, then renamed to the segment's. Its pages are written over in place
    /// instead of allocated anew (and the trimmed ones freed), and its old frames are not
    /// erased: each append into the reused file carries [`TAIL_PROBE_LEN`] zero bytes after
    /// its payload in its first write ([`FramePlace::clear_after`]), so the walk of the
    /// segment stops after the last frame written, on zeros, as in a fresh segment, and never
    /// reads an old frame as a new one. A crash inside an append finds the frame's checksum
    /// zero, as in a fresh segment; recovery clears the old bytes past the last frame. A file
    /// under a segment name always has a whole header; whoever opens the slot removes a spare
    /// a crash left. A slot holds one spare at most beside its segments.
    ///
    /// For a ring whose files are never synced (a crash of the process, not of the host):
    /// with syncs, the cleared bytes would have to reach stable storage before the rename
    /// does. The store-and-forward client unlinks trimmed segments (SF-13) and does not use
    /// this. The rename is followed by the sizing a new segment gets, which changes nothing on
    /// the file renamed, and makes the segment anew if the spare was removed meanwhile.
    #[must_use]
    pub fn with_recycling(mut self) -> Self {
        self.recycle = true;
        self
    }

    /// The trimmed segment file kept for the next segment, if any.
    #[must_use]
    pub fn spare(&self) -> Option<&str> {
        self.spare.then_some(slot::SPARE)
    }

    /// The checkpoint due at `now_millis`, if any: with [`Durability::Periodic`], once the
    /// interval has passed since the last checkpoint (the first call starts the clock), a sync
    /// of every journal file the ring keeps, then of the directory. With [`Durability::None`],
    /// never anything.
    pub fn poll_checkpoint(&mut self, now_millis: u64) -> Vec<FileOp> {
        let Durability::Periodic { interval_millis } = self.durability else {
            return Vec::new();
        };
        let last = *self.last_checkpoint_millis.get_or_insert(now_millis);
        if now_millis.saturating_sub(last) < interval_millis {
            return Vec::new();
        }
        self.last_checkpoint_millis = Some(now_millis);
        let mut files: Vec<String> = self.segs.iter().map(|s| s.file.clone()).collect();
        if self.manifest_generation > 0 {
            files.push(slot::MANIFEST.to_owned());
        }
        if self.watermark_generation > 0 {
            files.push(slot::ACK_WATERMARK.to_owned());
        }
        if self.dict_in_use {
            files.push(slot::SYMBOL_DICT.to_owned());
        }
        let mut ops: Vec<FileOp> = files
            .into_iter()
            .map(|file| FileOp::Sync { file })
            .collect();
        ops.push(FileOp::SyncDir);
        ops
    }

    /// Closing: `timeout_millis` is `close_flush_timeout_millis` (0 or below skips the wait),
    /// `started_millis` when close began.
    pub fn close(
        &mut self,
        now_millis: u64,
        started_millis: u64,
        timeout_millis: i64,
    ) -> CloseVerdict {
        if self.acked_fsn >= self.published_fsn() {
            let mut ops: Vec<FileOp> = self
                .segs
                .drain(..)
                .map(|s| s.file)
                .chain(std::mem::take(&mut self.spare).then(|| slot::SPARE.to_owned()))
                .map(|file| FileOp::Unlink { file })
                .collect();
            for file in [slot::MANIFEST, slot::ACK_WATERMARK, slot::SYMBOL_DICT] {
                ops.push(FileOp::Unlink {
                    file: file.to_owned(),
                });
            }
            return CloseVerdict::Drained { ops };
        }
        let fsns = self.acked_fsn.saturating_add(1)..self.next_fsn;
        let Ok(timeout) = u64::try_from(timeout_millis) else {
            return CloseVerdict::Unacknowledged {
                fsns,
                skipped: true,
            };
        };
        if timeout == 0 {
            return CloseVerdict::Unacknowledged {
                fsns,
                skipped: true,
            };
        }
        let deadline_millis = started_millis.saturating_add(timeout);
        if now_millis >= deadline_millis {
            CloseVerdict::Unacknowledged {
                fsns,
                skipped: false,
            }
        } else {
            CloseVerdict::Wait { deadline_millis }
        }
    }

    /// Advances the acknowledged FSN to `fsn` (a lower or equal one changes nothing) and
    /// unlinks every sealed segment whose last FSN is at or below it. In durable-ack mode the
    /// new FSN is also written to `.ack-watermark`, before the unlinks.
    pub fn ack(&mut self, fsn: i64) -> Result<Vec<FileOp>, AckError> {
        if fsn > self.published_fsn() {
            return Err(AckError::BeyondPublished {
                fsn,
                published: self.published_fsn(),
            });
        }
        if fsn <= self.acked_fsn {
            return Ok(Vec::new());
        }
        self.acked_fsn = fsn;
        let mut ops = Vec::new();
        if self.durable.is_some() {
            self.watermark_generation += 1;
            let record = Record {
                kind: RecordKind::AckWatermark,
                generation: self.watermark_generation,
                first: fsn,
                second: 0,
            };
            if self.watermark_generation == 1 {
                ops.extend(create_record_file(slot::ACK_WATERMARK, &record));
            } else {
                ops.push(record.write(slot::ACK_WATERMARK));
            }
        }
        let mut recycled = false;
        while self.segs.len() > 1 && self.segs[0].last_fsn() <= fsn {
            let s = self.segs.pop_front().expect("two segments");
            if self.recycle && !self.spare && s.capacity == self.config.segment_bytes {
                // Out of the segment names in one rename: recovery never reads it again.
                ops.push(FileOp::Rename {
                    from: s.file,
                    to: slot::SPARE.to_owned(),
                });
                self.spare = true;
                recycled = true;
            } else {
                ops.push(FileOp::Unlink { file: s.file });
            }
        }
        if recycled
            || ops
                .iter()
                .any(|op| matches!(op, FileOp::Unlink { file } if file.ends_with(".sfa")))
        {
            ops.extend(self.manifest_ops());
        }
        Ok(ops)
    }
}
