//! The two-record files (SF-D4, SF-D5): the manifest `sf-manifest.bin` and the acknowledgement
//! watermark `.ack-watermark`. Each is 8 KiB holding two 64-byte records, at offsets 0 and
//! 4096; a record goes to slot `generation & 1`, so a torn write can only spoil the older
//! copy. The valid record with the higher generation wins.
//!
//! The seed describes a 16-byte watermark file; the reference client writes this 8 KiB form
//! and only reads the 16-byte one as a legacy layout, which this crate follows.

use crate::ops::FileOp;
use crate::segment::{i64_at, u32_at};

/// Length of a two-record file.
pub const RECORD_FILE_LEN: usize = 8192;
/// Length of one record.
pub const RECORD_LEN: usize = 64;
/// Distance between the two record slots.
pub const RECORD_STRIDE: usize = 4096;
/// Offset of the record checksum (over bytes `0..60`).
pub const RECORD_CRC_AT: usize = 60;
/// The record version.
pub const RECORD_VERSION: u32 = 1;
/// `SFM1` read as a little-endian `u32`.
pub const MANIFEST_MAGIC: u32 = 0x314D_4653;
/// `AKW1` read as a little-endian `u32`.
pub const WATERMARK_MAGIC: u32 = 0x3157_4B41;
/// Length of the legacy watermark file.
pub const LEGACY_WATERMARK_LEN: usize = 16;

/// Which two-record file a record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// The manifest: `first` is the head segment's base, `second` the active segment's base.
    Manifest,
    /// The acknowledgement watermark: `first` is the acknowledged FSN (at least −1), `second` 0.
    AckWatermark,
}

impl RecordKind {
    /// The record magic of this kind.
    #[must_use]
    pub fn magic(self) -> u32 {
        match self {
            RecordKind::Manifest => MANIFEST_MAGIC,
            RecordKind::AckWatermark => WATERMARK_MAGIC,
        }
    }
}

/// One record of a two-record file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Which file it belongs to.
    pub kind: RecordKind,
    /// Its generation, above 0; each write uses the next one.
    pub generation: i64,
    /// Manifest: head base. Watermark: acknowledged FSN.
    pub first: i64,
    /// Manifest: active base. Watermark: 0.
    pub second: i64,
}

impl Record {
    /// The 64 record bytes: magic, version, generation, the two values, zero padding, and the
    /// CRC32C of bytes `0..60` at 60.
    #[must_use]
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        b[0..4].copy_from_slice(&self.kind.magic().to_le_bytes());
        b[4..8].copy_from_slice(&RECORD_VERSION.to_le_bytes());
        b[8..16].copy_from_slice(&self.generation.to_le_bytes());
        b[16..24].copy_from_slice(&self.first.to_le_bytes());
        b[24..32].copy_from_slice(&self.second.to_le_bytes());
        let crc = crc32c::crc32c(&b[..RECORD_CRC_AT]);
        b[RECORD_CRC_AT..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// The slot this record is written to: `generation & 1`.
    #[must_use]
    pub fn slot(&self) -> usize {
        (self.generation & 1) as usize
    }

    /// The positioned write that stores this record in `file` (already sized to 8 KiB).
    #[must_use]
    pub fn write(&self, file: &str) -> FileOp {
        FileOp::Write {
            file: file.to_owned(),
            offset: (self.slot() * RECORD_STRIDE) as u64,
            bytes: self.encode().to_vec(),
        }
    }

    /// Reads the record of `kind` in slot `slot` of a file; `None` if it is not valid: wrong
    /// magic, version, checksum, a generation not above 0 or not of that slot, or values out
    /// of range for the kind.
    #[must_use]
    pub fn decode(kind: RecordKind, file: &[u8], slot: usize) -> Option<Self> {
        let at = slot * RECORD_STRIDE;
        let b = file.get(at..at + RECORD_LEN)?;
        if u32_at(b, 0) != kind.magic() || u32_at(b, 4) != RECORD_VERSION {
            return None;
        }
        if crc32c::crc32c(&b[..RECORD_CRC_AT]) != u32_at(b, RECORD_CRC_AT) {
            return None;
        }
        let r = Self {
            kind,
            generation: i64_at(b, 8),
            first: i64_at(b, 16),
            second: i64_at(b, 24),
        };
        let in_range = match kind {
            RecordKind::Manifest => r.first >= 0 && r.second >= 0,
            RecordKind::AckWatermark => r.first >= -1 && r.second == 0,
        };
        (r.generation > 0 && r.slot() == slot && in_range).then_some(r)
    }
}

/// Why a two-record file gives no record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordFileError {
    /// The file is not 8 KiB (nor, for the watermark, the legacy 16 bytes).
    #[error("two-record file of {len} bytes is not 8192 bytes")]
    WrongSize {
        /// The file's length.
        len: usize,
    },
    /// Neither slot holds a valid record.
    #[error("neither record of the file is valid")]
    NoValidRecord,
}

/// The winning record of a two-record file: the valid one with the higher generation.
pub fn decode_record_file(kind: RecordKind, file: &[u8]) -> Result<Record, RecordFileError> {
    if file.len() != RECORD_FILE_LEN {
        return Err(RecordFileError::WrongSize { len: file.len() });
    }
    let a = Record::decode(kind, file, 0);
    let b = Record::decode(kind, file, 1);
    match (a, b) {
        (Some(a), Some(b)) => Ok(if b.generation > a.generation { b } else { a }),
        (Some(r), None) | (None, Some(r)) => Ok(r),
        (None, None) => Err(RecordFileError::NoValidRecord),
    }
}

/// A watermark as read from `.ack-watermark`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Watermark {
    /// The 8 KiB two-record form.
    Current(Record),
    /// The legacy 16-byte form: `AKW1`, `u32 0`, `i64 fsn` (at least 0).
    Legacy {
        /// The acknowledged FSN.
        fsn: i64,
    },
}

impl Watermark {
    /// The acknowledged FSN it holds.
    #[must_use]
    pub fn fsn(&self) -> i64 {
        match self {
            Watermark::Current(r) => r.first,
            Watermark::Legacy { fsn } => *fsn,
        }
    }
}

/// Reads `.ack-watermark` in either form.
pub fn decode_watermark(file: &[u8]) -> Result<Watermark, RecordFileError> {
    if file.len() == LEGACY_WATERMARK_LEN {
        let fsn = i64_at(file, 8);
        return if u32_at(file, 0) == WATERMARK_MAGIC && u32_at(file, 4) == 0 && fsn >= 0 {
            Ok(Watermark::Legacy { fsn })
        } else {
            Err(RecordFileError::NoValidRecord)
        };
    }
    decode_record_file(RecordKind::AckWatermark, file).map(Watermark::Current)
}

/// The legacy 16-byte watermark bytes (for reading tests and migrations).
#[must_use]
pub fn encode_legacy_watermark(fsn: i64) -> [u8; LEGACY_WATERMARK_LEN] {
    let mut b = [0u8; LEGACY_WATERMARK_LEN];
    b[0..4].copy_from_slice(&WATERMARK_MAGIC.to_le_bytes());
    b[8..16].copy_from_slice(&fsn.to_le_bytes());
    b
}

/// The operations that create a fresh two-record file holding `record` alone: it is built
/// under `<file>.tmp` (any leftover of that name removed first), then renamed over `file`, so a crash leaves the old file or the new.
#[must_use]
pub fn create_record_file(file: &str, record: &Record) -> Vec<FileOp> {
    let tmp = format!("{file}.tmp");
    vec![
        FileOp::Unlink { file: tmp.clone() },
        FileOp::SetLen {
            file: tmp.clone(),
            len: RECORD_FILE_LEN as u64,
        },
        record.write(&tmp),
        FileOp::Rename {
            from: tmp,
            to: file.to_owned(),
        },
    ]
}
