//! Recovery of a slot after a crash (SF-30 to SF-34, SF-37), as a pure function over the bytes
//! of the slot's files. The driver takes the slot lock first (SF-29), reads the files, calls
//! [`recover`], and carries out the returned operations before appending.

use crate::dict::{dict_header, scan_dict, DictError, DictScan, DICT_HEADER_LEN};
use crate::ops::FileOp;
use crate::record::{
    create_record_file, decode_record_file, decode_watermark, Record, RecordKind, Watermark,
};
use crate::segment::{
    scan_segment, SegmentError, SegmentScan, SEGMENT_HEADER_LEN, SEGMENT_MAGIC, SEGMENT_VERSION,
};
use crate::slot::{self, parse_segment_name, SegmentName};

/// The files of a slot directory as read by the driver.
#[derive(Debug, Clone, Default)]
pub struct SlotFiles {
    /// Every segment file (`sf-initial.sfa`, `sf-<16 hex>.sfa`) with its bytes.
    pub segments: Vec<(String, Vec<u8>)>,
    /// `sf-manifest.bin`, if present.
    pub manifest: Option<Vec<u8>>,
    /// `.ack-watermark`, if present.
    pub ack_watermark: Option<Vec<u8>>,
    /// `.symbol-dict`, if present.
    pub symbol_dict: Option<Vec<u8>>,
}

/// One segment holding at least one valid frame after recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredSegment {
    /// Its file name.
    pub file: String,
    /// Its length on disk (pre-sized).
    pub file_len: u64,
    /// What the forward walk found.
    pub scan: SegmentScan,
}

/// Why recovery refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecoveryError {
    /// A segment's header is invalid (and not an all-zero header of a file never initialised).
    #[error("segment {file}: {error}")]
    Segment {
        /// The file.
        file: String,
        /// What is wrong with it.
        error: SegmentError,
    },
    /// Frames are missing between two segments: `prev.baseSeq + prev.frameCount < next.baseSeq`.
    #[error("gap between {prev} (ends before FSN {expected}) and {next} (starts at FSN {found})")]
    Gap {
        /// The earlier segment.
        prev: String,
        /// The later segment.
        next: String,
        /// The FSN the later segment should start at.
        expected: i64,
        /// The FSN it starts at.
        found: i64,
    },
    /// Two segments claim the same FSNs: `prev.baseSeq + prev.frameCount > next.baseSeq`.
    #[error(
        "overlap between {prev} (ends before FSN {expected}) and {next} (starts at FSN {found})"
    )]
    Overlap {
        /// The earlier segment.
        prev: String,
        /// The later segment.
        next: String,
        /// The FSN the later segment should start at.
        expected: i64,
        /// The FSN it starts at.
        found: i64,
    },
    /// A segment file is named with the last generation (`sf-ffffffffffffffff.sfa`): no
    /// later generation exists to name the next segment, and this code never creates that
    /// name, so the slot is unreplayable.
    #[error("segment {file} carries the last generation; no segment can follow it")]
    GenerationExhausted {
        /// The file.
        file: String,
    },
    /// The dictionary's header is invalid, so no prefix of it can be trusted.
    #[error("symbol dictionary: {0}")]
    Dict(DictError),
}

/// What recovery concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Segments holding frames not all acknowledged, ordered by base sequence, contiguous.
    /// Segments wholly at or below the acknowledged FSN are unlinked by [`Recovery::ops`].
    pub segments: Vec<RecoveredSegment>,
    /// Segment files holding no frame (pre-allocated spares, or never initialised): left out
    /// of the gap check, reusable.
    pub spares: Vec<String>,
    /// The acknowledged FSN the ring starts from: the higher of the lowest surviving FSN − 1
    /// and the persisted watermark (SF-32).
    pub acked_fsn: i64,
    /// The FSN the next appended frame gets: past the last frame on disk, or with no frame
    /// left, past what the manifest's active base and the watermark name.
    pub next_fsn: i64,
    /// The manifest's winning record, if one was valid.
    pub manifest: Option<Record>,
    /// The persisted watermark, if one was valid.
    pub watermark: Option<Watermark>,
    /// The dictionary's valid prefix, if the file exists.
    pub dict: Option<DictScan>,
    /// The connection generation after the bump (SF-33): one past the one given.
    pub connection_generation: u64,
    /// What the driver must do before appending: cut torn tails, truncate the dictionary, set a
    /// corrupt manifest aside, rewrite a legacy watermark, unlink wholly acknowledged segments.
    pub ops: Vec<FileOp>,
}

impl Recovery {
    /// The lowest FSN still on disk, if any frame survives.
    #[must_use]
    pub fn lowest_fsn(&self) -> Option<i64> {
        self.segments.first().map(|s| s.scan.header.base_seq)
    }

    /// The FSNs to replay on the first connection: from `acked_fsn + 1` to `next_fsn − 1`.
    #[must_use]
    pub fn unacked(&self) -> std::ops::Range<i64> {
        self.acked_fsn.saturating_add(1)..self.next_fsn
    }
}

/// Recovers a slot from the bytes of its files. `connection_generation` is the generation the
/// previous owner of this state had (0 for a fresh process). The same as feeding a
/// [`Recoverer`] each segment in turn.
pub fn recover(files: &SlotFiles, connection_generation: u64) -> Result<Recovery, RecoveryError> {
    let mut r = Recoverer::new();
    for (file, bytes) in &files.segments {
        r.segment(file, bytes)?;
    }
    r.finish(
        files.manifest.as_deref(),
        files.ack_watermark.as_deref(),
        files.symbol_dict.as_deref(),
        connection_generation,
    )
}

/// Recovery fed one segment file at a time, so a driver needs to hold only one segment's
/// bytes at once: each is scanned (torn tail found, frames located) and only what the scan
/// found is kept. [`Recoverer::finish`] then checks the segments' order and reads the small
/// files. Gives what [`recover`] gives for the same files.
#[derive(Debug, Default)]
pub struct Recoverer {
    ops: Vec<FileOp>,
    segments: Vec<RecoveredSegment>,
    spares: Vec<String>,
}

impl Recoverer {
    /// A recovery that has seen no segment yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the bytes of one segment file (`sf-initial.sfa` or `sf-<16 hex>.sfa`).
    pub fn segment(&mut self, file: &str, bytes: &[u8]) -> Result<(), RecoveryError> {
        let (ops, segments, spares) = (&mut self.ops, &mut self.segments, &mut self.spares);
        if parse_segment_name(file) == Some(SegmentName::Generation(u64::MAX)) {
            tracing::warn!(file = %file, "sf recovery refuses a segment of the last generation");
            return Err(RecoveryError::GenerationExhausted {
                file: file.to_owned(),
            });
        }
        let scan = match scan_segment(bytes) {
            Ok(scan) => scan,
            Err(_)
                if bytes.len() >= SEGMENT_HEADER_LEN
                    && bytes[..SEGMENT_HEADER_LEN].iter().all(|&b| b == 0) =>
            {
                // Sized but never given a header: a crash between creation and header write.
                spares.push(file.to_owned());
                return Ok(());
            }
            Err(_) if torn_header_only(bytes) => {
                // The header's write was cut before its magic and version were whole, and
                // nothing follows it: a crash during the header write. Nothing was appended.
                tracing::warn!(file = %file, "sf recovery sets aside a segment whose header write was cut");
                spares.push(file.to_owned());
                return Ok(());
            }
            Err(error) => {
                return Err(RecoveryError::Segment {
                    file: file.to_owned(),
                    error,
                })
            }
        };
        if scan.dirty_end > scan.append_offset {
            if scan.is_torn() {
                tracing::warn!(
                    file = %file,
                    offset = scan.append_offset,
                    len = scan.dirty_end - scan.append_offset,
                    "sf recovery cuts a torn tail"
                );
            } else {
                // Past a clean end: old frames of a reused segment.
                tracing::debug!(
                    file = %file,
                    offset = scan.append_offset,
                    len = scan.dirty_end - scan.append_offset,
                    "sf recovery clears old bytes past the last frame"
                );
            }
            ops.push(FileOp::Zero {
                file: file.to_owned(),
                offset: scan.append_offset,
                len: scan.dirty_end - scan.append_offset,
            });
        }
        if scan.frames.is_empty() {
            spares.push(file.to_owned());
        } else {
            segments.push(RecoveredSegment {
                file: file.to_owned(),
                file_len: bytes.len() as u64,
                scan,
            });
        }
        Ok(())
    }

    /// Ends recovery with the manifest, watermark and dictionary files, if present.
    pub fn finish(
        self,
        manifest: Option<&[u8]>,
        ack_watermark: Option<&[u8]>,
        symbol_dict: Option<&[u8]>,
        connection_generation: u64,
    ) -> Result<Recovery, RecoveryError> {
        let Self {
            mut ops,
            mut segments,
            spares,
        } = self;
        finish(
            &mut ops,
            &mut segments,
            spares,
            manifest,
            ack_watermark,
            symbol_dict,
            connection_generation,
        )
    }
}

fn finish(
    ops: &mut Vec<FileOp>,
    segments: &mut Vec<RecoveredSegment>,
    spares: Vec<String>,
    manifest: Option<&[u8]>,
    ack_watermark: Option<&[u8]>,
    symbol_dict: Option<&[u8]>,
    connection_generation: u64,
) -> Result<Recovery, RecoveryError> {
    segments.sort_by_key(|s| s.scan.header.base_seq);
    for pair in segments.windows(2) {
        let (prev, next) = (&pair[0], &pair[1]);
        let expected = prev.scan.next_fsn();
        let found = next.scan.header.base_seq;
        if found != expected {
            let (prev, next) = (prev.file.clone(), next.file.clone());
            tracing::warn!(%prev, %next, expected, found, "sf recovery refuses the slot: segments not contiguous");
            return Err(if found > expected {
                RecoveryError::Gap {
                    prev,
                    next,
                    expected,
                    found,
                }
            } else {
                RecoveryError::Overlap {
                    prev,
                    next,
                    expected,
                    found,
                }
            });
        }
    }

    let manifest = match manifest {
        None => None,
        Some(bytes) => match decode_record_file(RecordKind::Manifest, bytes) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!(error = %e, "sf recovery sets a corrupt manifest aside");
                ops.push(FileOp::Rename {
                    from: slot::MANIFEST.to_owned(),
                    to: slot::corrupt_name(slot::MANIFEST),
                });
                None
            }
        },
    };
    let watermark = ack_watermark.and_then(|b| decode_watermark(b).ok());
    if let Some(Watermark::Legacy { fsn }) = watermark {
        let record = Record {
            kind: RecordKind::AckWatermark,
            generation: 1,
            first: fsn,
            second: 0,
        };
        ops.extend(create_record_file(slot::ACK_WATERMARK, &record));
    }

    let dict = match symbol_dict {
        None => None,
        // Cut inside its header: the process died between creating the file and writing the
        // header. The header goes before any chunk and a chunk before any frame using it, so
        // the file holds no entry a frame could need: it is removed, and the next new symbol
        // starts it again.
        Some(bytes) if bytes.len() < DICT_HEADER_LEN && dict_header().starts_with(bytes) => {
            tracing::warn!(
                len = bytes.len(),
                "sf recovery removes a dictionary cut inside its header"
            );
            ops.push(FileOp::Unlink {
                file: slot::SYMBOL_DICT.to_owned(),
            });
            None
        }
        Some(bytes) => {
            let scan = scan_dict(bytes).map_err(RecoveryError::Dict)?;
            if scan.dropped_bytes > 0 {
                tracing::warn!(
                    dropped_bytes = scan.dropped_bytes,
                    "sf recovery drops a torn dictionary chunk"
                );
                ops.push(FileOp::SetLen {
                    file: slot::SYMBOL_DICT.to_owned(),
                    len: scan.valid_len,
                });
            }
            Some(scan)
        }
    };

    let on_disk_next = segments.last().map(|s| s.scan.next_fsn());
    let mut next_fsn = on_disk_next.unwrap_or(0);
    // The manifest says where FSNs resume only when no frame is left on disk. Past the last
    // frame on disk, its active base names FSNs whose frames were lost (their pages never
    // reached the disk): resuming there would leave FSNs without frames among those to
    // replay, which the wire would skip while its sequence, `fsn = fsnAtZero + wireSeq`,
    // counts them, so every later frame would be acknowledged as the one before it. The lost
    // frames' FSNs go to the next frames instead, as those of a lost newest segment do.
    if let (Some(m), None) = (&manifest, on_disk_next) {
        next_fsn = next_fsn.max(m.second);
    }
    let wm = watermark.map(|w| w.fsn());
    if let Some(w) = wm {
        next_fsn = next_fsn.max(w.saturating_add(1));
    }
    let on_disk_acked = segments
        .first()
        .map_or(next_fsn - 1, |s| s.scan.header.base_seq - 1);
    let acked_fsn = wm.map_or(on_disk_acked, |w| w.max(on_disk_acked));
    // Segments the watermark shows wholly acknowledged are trimmed now: the ring then starts
    // at the first unacknowledged frame, and FSNs stay those of the files.
    let keep = segments
        .iter()
        .position(|s| s.scan.next_fsn() - 1 > acked_fsn)
        .unwrap_or(segments.len());
    for s in segments.drain(..keep) {
        ops.push(FileOp::Unlink { file: s.file });
    }

    tracing::info!(
        segments = segments.len(),
        spares = spares.len(),
        acked_fsn,
        next_fsn,
        repairs = ops.len(),
        generation = connection_generation + 1,
        "sf recovery done"
    );
    Ok(Recovery {
        segments: std::mem::take(segments),
        spares,
        acked_fsn,
        next_fsn,
        manifest,
        watermark,
        dict,
        connection_generation: connection_generation + 1,
        ops: std::mem::take(ops),
    })
}

/// Whether a segment file holds only the start of a header whose write was cut inside its
/// magic or version: a prefix of those five bytes, then zeros to the end of the file.
fn torn_header_only(bytes: &[u8]) -> bool {
    let mut head = [0u8; 5];
    head[..4].copy_from_slice(&SEGMENT_MAGIC.to_le_bytes());
    head[4] = SEGMENT_VERSION;
    let written = bytes.iter().take(5).take_while(|&&b| b != 0).count();
    written < head.len()
        && bytes.len() >= SEGMENT_HEADER_LEN
        && bytes[..written] == head[..written]
        && bytes[written..].iter().all(|&b| b == 0)
}
