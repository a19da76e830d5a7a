//! The segment file codec (SF-D1, SF-D2): a 24-byte header, then frames
//! `[u32 crc32c][i32 payloadLen][payload]`, little-endian, the checksum covering
//! `payloadLen || payload`.

use crate::ops::FileOp;

/// `SF01` read as a little-endian `u32`.
pub const SEGMENT_MAGIC: u32 = 0x3130_4653;
/// The only segment version.
pub const SEGMENT_VERSION: u8 = 1;
/// Length of the segment header.
pub const SEGMENT_HEADER_LEN: usize = 24;
/// Length of a frame's checksum and length fields.
pub const FRAME_HEADER_LEN: usize = 8;
/// Bit 0 of the header's flags byte (offset 5): the segment is one of a ring kept with a
/// manifest. The questdb 6.0.0 client sets it on every segment it writes (the Java fixture
/// leaves the byte 0); it does not change how the frames are read, so the reader accepts it.
/// Any other flag bit is refused as reserved.
pub const SEGMENT_FLAG_MANIFEST_REQUIRED: u8 = 0x01;
/// How many bytes after the last good frame decide between a clean and a torn tail.
pub const TAIL_PROBE_LEN: usize = 8;
/// The zero bytes a frame's body write may carry after its payload.
static ZEROS: [u8; TAIL_PROBE_LEN] = [0; TAIL_PROBE_LEN];

/// The header of a segment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The FSN of the segment's first frame (never negative).
    pub base_seq: i64,
    /// When the segment was created, in microseconds since the Unix epoch (an input).
    pub created_micros: u64,
}

/// Why a segment header is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SegmentError {
    /// Fewer bytes than a header.
    #[error("segment of {len} bytes is shorter than its 24-byte header")]
    Short {
        /// The file's length.
        len: usize,
    },
    /// The magic is not `SF01`.
    #[error("segment magic {found:#010x} is not SF01")]
    BadMagic {
        /// The magic read.
        found: u32,
    },
    /// The version is not 1.
    #[error("segment version {found} is not 1")]
    BadVersion {
        /// The version read.
        found: u8,
    },
    /// A reserved header byte, or a flag bit other than the manifest-required one, is set.
    #[error("segment header reserved bytes are not zero")]
    ReservedNotZero,
    /// The base sequence is negative.
    #[error("segment baseSeq {found} is negative")]
    NegativeBaseSeq {
        /// The base sequence read.
        found: i64,
    },
}

impl SegmentHeader {
    /// The 24 header bytes.
    #[must_use]
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN] {
        let mut b = [0u8; SEGMENT_HEADER_LEN];
        b[0..4].copy_from_slice(&SEGMENT_MAGIC.to_le_bytes());
        b[4] = SEGMENT_VERSION;
        b[8..16].copy_from_slice(&self.base_seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.created_micros.to_le_bytes());
        b
    }

    /// Reads and checks a header from the start of a segment file.
    pub fn decode(bytes: &[u8]) -> Result<Self, SegmentError> {
        if bytes.len() < SEGMENT_HEADER_LEN {
            return Err(SegmentError::Short { len: bytes.len() });
        }
        let magic = u32_at(bytes, 0);
        if magic != SEGMENT_MAGIC {
            return Err(SegmentError::BadMagic { found: magic });
        }
        if bytes[4] != SEGMENT_VERSION {
            return Err(SegmentError::BadVersion { found: bytes[4] });
        }
        if bytes[5] & !SEGMENT_FLAG_MANIFEST_REQUIRED != 0 || bytes[6..8].iter().any(|&b| b != 0) {
            return Err(SegmentError::ReservedNotZero);
        }
        let base_seq = i64_at(bytes, 8);
        if base_seq < 0 {
            return Err(SegmentError::NegativeBaseSeq { found: base_seq });
        }
        Ok(Self {
            base_seq,
            created_micros: u64_at(bytes, 16),
        })
    }
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

pub(crate) fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

pub(crate) fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}

/// The CRC32C of a frame: over its little-endian `i32` length, then its payload.
#[must_use]
pub fn frame_crc(payload_len: i32, payload: &[u8]) -> u32 {
    frame_crc_parts(payload_len, &[payload])
}

/// [`frame_crc`] of the payload that is `parts` one after another.
#[must_use]
pub fn frame_crc_parts(payload_len: i32, parts: &[&[u8]]) -> u32 {
    parts
        .iter()
        .fold(crc32c::crc32c(&payload_len.to_le_bytes()), |crc, p| {
            crc32c::crc32c_append(crc, p)
        })
}

/// The whole encoded frame (checksum, length, payload), or `None` if the payload is longer
/// than an `i32` can say.
#[must_use]
pub fn encode_frame(payload: &[u8]) -> Option<Vec<u8>> {
    let len = i32::try_from(payload.len()).ok()?;
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN + payload.len());
    out.extend_from_slice(&frame_crc(len, payload).to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(payload);
    Some(out)
}

/// The two writes of one frame append, in the order they must reach the file: the length and
/// payload first, the checksum last (SF-5). A crash between them leaves a frame whose checksum
/// does not match, which recovery cuts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameWrites {
    /// `[i32 payloadLen][payload]` at the frame's offset + 4.
    pub body: FileOp,
    /// `[u32 crc32c]` at the frame's offset.
    pub checksum: FileOp,
}

impl FrameWrites {
    /// The frame's writes of `payload` into `file` at `offset`; `None` if the payload is too long.
    #[must_use]
    pub fn new(file: &str, offset: u64, payload: &[u8]) -> Option<Self> {
        let len = i32::try_from(payload.len()).ok()?;
        Some(Self::with_crc(
            file,
            offset,
            len,
            frame_crc(len, payload),
            payload,
            0,
        ))
    }

    /// The writes when the length and checksum of `payload` are already known; the body
    /// write carries `clear_after` zero bytes after the payload.
    pub(crate) fn with_crc(
        file: &str,
        offset: u64,
        len: i32,
        crc: u32,
        payload: &[u8],
        clear_after: usize,
    ) -> Self {
        let mut body = Vec::with_capacity(4 + payload.len() + clear_after);
        body.extend_from_slice(&[0; 4]);
        body.extend_from_slice(payload);
        Self::with_crc_framed(file, offset, len, crc, body, clear_after)
    }

    /// The writes when the length and checksum are known and `body` already holds the payload
    /// behind four free bytes: the length goes into those, `clear_after` zero bytes go after
    /// the payload, and `body` becomes the first write as it is.
    pub(crate) fn with_crc_framed(
        file: &str,
        offset: u64,
        len: i32,
        crc: u32,
        mut body: Vec<u8>,
        clear_after: usize,
    ) -> Self {
        debug_assert_eq!(
            body.len(),
            4 + len as usize,
            "four free bytes, then the payload"
        );
        if let Some(room) = body.get_mut(..4) {
            room.copy_from_slice(&len.to_le_bytes());
        }
        body.resize(body.len() + clear_after, 0);
        Self {
            body: FileOp::Write {
                file: file.to_owned(),
                offset: offset + 4,
                bytes: body,
            },
            checksum: FileOp::Write {
                file: file.to_owned(),
                offset,
                bytes: crc.to_le_bytes().to_vec(),
            },
        }
    }

    /// The writes when the length and checksum are known and the payload is `parts`, the
    /// first of which holds four free bytes in front: the length goes into those, and the
    /// body write takes the parts as they are, then `clear_after` zero bytes.
    pub(crate) fn with_crc_parts(
        file: &str,
        offset: u64,
        len: i32,
        crc: u32,
        mut head: Vec<u8>,
        rest: impl IntoIterator<Item = bytes::Bytes>,
        clear_after: usize,
    ) -> Self {
        if let Some(room) = head.get_mut(..4) {
            room.copy_from_slice(&len.to_le_bytes());
        }
        let mut parts = vec![bytes::Bytes::from(head)];
        parts.extend(rest.into_iter().filter(|p| !p.is_empty()));
        if clear_after > 0 {
            parts.push(bytes::Bytes::from_static(
                &ZEROS[..clear_after.min(ZEROS.len())],
            ));
        }
        debug_assert_eq!(
            parts.iter().map(bytes::Bytes::len).sum::<usize>(),
            4 + len as usize + clear_after,
            "four free bytes, then the payload"
        );
        Self {
            body: FileOp::WriteParts {
                file: file.to_owned(),
                offset: offset + 4,
                parts,
            },
            checksum: FileOp::Write {
                file: file.to_owned(),
                offset,
                bytes: crc.to_le_bytes().to_vec(),
            },
        }
    }

    /// Both writes, body first.
    #[must_use]
    pub fn into_ops(self) -> [FileOp; 2] {
        [self.body, self.checksum]
    }
}

/// Where one valid frame lies in its segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpan {
    /// The frame's FSN: the segment's base plus its index.
    pub fsn: i64,
    /// Offset of the frame's checksum field.
    pub offset: u64,
    /// Length of the payload.
    pub payload_len: u32,
}

impl FrameSpan {
    /// Offset of the payload's first byte.
    #[must_use]
    pub fn payload_offset(&self) -> u64 {
        self.offset + FRAME_HEADER_LEN as u64
    }

    /// Offset just past the frame.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.payload_offset() + u64::from(self.payload_len)
    }
}

/// Why the forward walk of a segment stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScanEnd {
    /// Fewer than a frame header's bytes remain.
    EndOfFile,
    /// The length field is negative.
    NegativeLength,
    /// The length runs past the end of the file.
    Overrun,
    /// The checksum does not match (an all-zero region stops here too).
    ChecksumMismatch,
}

/// What a forward walk of a segment found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentScan {
    /// The checked header.
    pub header: SegmentHeader,
    /// Every valid frame, in order.
    pub frames: Vec<FrameSpan>,
    /// Where the next frame goes: just past the last valid frame.
    pub append_offset: u64,
    /// Why the walk stopped.
    pub end: ScanEnd,
    /// Bytes from the append offset to the end of the file when the tail is torn (a non-zero
    /// byte among the [`TAIL_PROBE_LEN`] bytes after the last good frame); 0 for a clean tail.
    pub torn_tail_bytes: u64,
    /// Offset just past the last non-zero byte at or after the append offset: zeroing
    /// `append_offset..dirty_end` cuts the torn tail.
    pub dirty_end: u64,
}

impl SegmentScan {
    /// How many valid frames the segment holds.
    #[must_use]
    pub fn frame_count(&self) -> i64 {
        self.frames.len() as i64
    }

    /// The FSN the next frame appended to this segment gets.
    #[must_use]
    pub fn next_fsn(&self) -> i64 {
        self.header.base_seq.saturating_add(self.frame_count())
    }

    /// Whether the tail after the last good frame is torn.
    #[must_use]
    pub fn is_torn(&self) -> bool {
        self.torn_tail_bytes > 0
    }

    /// The payload of the `i`th valid frame, taken from the bytes that were scanned.
    #[must_use]
    pub fn payload<'a>(&self, bytes: &'a [u8], i: usize) -> &'a [u8] {
        let f = &self.frames[i];
        &bytes[f.payload_offset() as usize..f.end() as usize]
    }
}

/// Checks the header, then walks the frames forward checking each checksum; the first frame
/// with a negative length, an overrun or a checksum mismatch ends the valid data (SF-30).
pub fn scan_segment(bytes: &[u8]) -> Result<SegmentScan, SegmentError> {
    let header = SegmentHeader::decode(bytes)?;
    let mut frames = Vec::new();
    let mut pos = SEGMENT_HEADER_LEN;
    let end = loop {
        if bytes.len() - pos < FRAME_HEADER_LEN {
            break ScanEnd::EndOfFile;
        }
        let crc = u32_at(bytes, pos);
        let len = i32_at(bytes, pos + 4);
        let Ok(plen) = usize::try_from(len) else {
            break ScanEnd::NegativeLength;
        };
        let body_end = pos + FRAME_HEADER_LEN;
        if bytes.len() - body_end < plen {
            break ScanEnd::Overrun;
        }
        let payload = &bytes[body_end..body_end + plen];
        if frame_crc(len, payload) != crc {
            break ScanEnd::ChecksumMismatch;
        }
        frames.push(FrameSpan {
            fsn: header.base_seq.saturating_add(frames.len() as i64),
            offset: pos as u64,
            payload_len: plen as u32,
        });
        pos = body_end + plen;
    };
    let probe_end = bytes.len().min(pos + TAIL_PROBE_LEN);
    let torn = bytes[pos..probe_end].iter().any(|&b| b != 0);
    let dirty_end = bytes[pos..]
        .iter()
        .rposition(|&b| b != 0)
        .map_or(pos, |i| pos + i + 1);
    Ok(SegmentScan {
        header,
        frames,
        append_offset: pos as u64,
        end,
        torn_tail_bytes: if torn { (bytes.len() - pos) as u64 } else { 0 },
        dirty_end: dirty_end as u64,
    })
}
