//! The ring of segments: FSNs assigned at append (SF-7), the published and acknowledged
//! cursors, the per-connection wire sequence (SF-8, SF-9, SF-19), trim on acknowledgement
//! (SF-13) and back-pressure verdicts naming their case (SF-23, SF-24).

use std::collections::VecDeque;

use crate::ops::FileOp;
use crate::record::{create_record_file, Record, RecordKind};
use crate::recovery::Recovery;
use crate::segment::{FrameWrites, SegmentHeader, FRAME_HEADER_LEN, SEGMENT_HEADER_LEN};
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

#[derive(Debug, Clone)]
struct Seg {
    file: String,
    base: i64,
    /// Offset of each frame's checksum field.
    offsets: Vec<u64>,
    lens: Vec<u32>,
    used: u64,
    capacity: u64,
}

impl Seg {
    fn last_fsn(&self) -> i64 {
        self.base + self.offsets.len() as i64 - 1
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
    /// The next FSN to send on this connection.
    pub next_send: i64,
}

impl Window {
    /// The FSN a server acknowledgement of `wire_seq` stands for; `None` for a catch-up frame.
    #[must_use]
    pub fn fsn_of(&self, wire_seq: u64) -> Option<i64> {
        let n = wire_seq.checked_sub(self.catch_up)?;
        i64::try_from(n).ok().map(|n| self.fsn_at_zero + n)
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
    connection_generation: u64,
    window: Option<Window>,
    replayed_frames: u64,
    sent_high: i64,
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
            connection_generation: 0,
            window: None,
            replayed_frames: 0,
            sent_high: -1,
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
            });
        }
        let names = r
            .segments
            .iter()
            .map(|s| s.file.as_str())
            .chain(r.spares.iter().map(String::as_str));
        for name in names {
            ring.next_generation = ring.next_generation.max(match parse_segment_name(name) {
                Some(SegmentName::Generation(g)) => g + 1,
                _ => 1,
            });
        }
        ring.next_fsn = r.next_fsn;
        ring.acked_fsn = r.acked_fsn;
        ring.sent_high = r.acked_fsn;
        ring.manifest_generation = r.manifest.map_or(0, |m| m.generation);
        ring.connection_generation = r.connection_generation;
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
    pub fn append(&mut self, payload: &[u8], now_millis: u64) -> Result<Appended, AppendError> {
        let need = (FRAME_HEADER_LEN + payload.len()) as u64;
        let room = self
            .config
            .segment_bytes
            .saturating_sub(SEGMENT_HEADER_LEN as u64);
        if need > room || i32::try_from(payload.len()).is_err() {
            return Err(AppendError::FrameTooLarge {
                len: payload.len(),
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
                let since = *self.wait_since.get_or_insert(now_millis);
                let waited = now_millis.saturating_sub(since);
                if waited >= self.config.append_deadline_millis {
                    self.wait_since = None;
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
            ops.extend(self.open_segment(now_millis));
        }
        self.wait_since = None;
        let fsn = self.next_fsn;
        let seg = self.segs.back_mut().expect("a segment is open");
        let writes = FrameWrites::new(&seg.file, seg.used, payload).expect("length checked");
        ops.extend(writes.into_ops());
        seg.offsets.push(seg.used);
        seg.lens.push(payload.len() as u32);
        seg.used += need;
        self.next_fsn += 1;
        Ok(Appended { fsn, ops })
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
        let mut ops = vec![
            FileOp::SetLen {
                file: file.clone(),
                len: self.config.segment_bytes,
            },
            FileOp::Write {
                file: file.clone(),
                offset: 0,
                bytes: header.encode().to_vec(),
            },
        ];
        self.segs.push_back(Seg {
            file,
            base: self.next_fsn,
            offsets: Vec::new(),
            lens: Vec::new(),
            used: SEGMENT_HEADER_LEN as u64,
            capacity: self.config.segment_bytes,
        });
        ops.push(FileOp::SyncDir);
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
        let seg = self
            .segs
            .iter()
            .find(|s| fsn >= s.base && fsn < s.base + s.offsets.len() as i64)?;
        let i = (fsn - seg.base) as usize;
        Some(FrameLocation {
            file: seg.file.clone(),
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
            fsn_at_zero: self.acked_fsn + 1,
            catch_up,
            next_send: self.acked_fsn + 1,
        };
        self.window = Some(w);
        self.link = Link::Publishing;
        w
    }

    /// The connection broke: the window closes.
    pub fn disconnect(&mut self) {
        self.window = None;
    }

    /// The next frame to send on the open connection, in FSN order, including frames appended
    /// since the connection was made; `None` when everything published was sent.
    pub fn next_to_send(&mut self) -> Option<(i64, FrameLocation)> {
        let w = self.window.as_mut()?;
        let fsn = w.next_send;
        if fsn >= self.next_fsn {
            return None;
        }
        w.next_send += 1;
        if fsn <= self.sent_high {
            self.replayed_frames += 1;
        } else {
            self.sent_high = fsn;
        }
        let loc = self.locate(fsn)?;
        Some((fsn, loc))
    }

    /// A server OK for `wire_seq` on the open connection: maps it to an FSN and acknowledges.
    pub fn ok(&mut self, wire_seq: u64) -> Result<Vec<FileOp>, AckError> {
        let w = self.window.ok_or(AckError::NotConnected)?;
        match w.fsn_of(wire_seq) {
            None => Ok(Vec::new()),
            Some(fsn) => self.ack(fsn),
        }
    }

    /// Advances the acknowledged FSN to `fsn` (a lower or equal one changes nothing) and
    /// unlinks every sealed segment whose last FSN is at or below it.
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
        while self.segs.len() > 1 && self.segs[0].last_fsn() <= fsn {
            let s = self.segs.pop_front().expect("two segments");
            ops.push(FileOp::Unlink { file: s.file });
        }
        if !ops.is_empty() {
            ops.push(FileOp::SyncDir);
            ops.extend(self.manifest_ops());
        }
        Ok(ops)
    }
}
