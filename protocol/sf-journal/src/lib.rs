//! A sans-IO store-and-forward journal, byte-compatible with the on-disk layouts of the
//! reference QuestDB client: frames handed in by a producer are kept in fixed-size segments
//! until the server acknowledges them, and recovered after a crash.
//!
//! Nothing here touches a file, a clock or a socket. The engine is told what was read and
//! answers with [`FileOp`]s (positioned writes, syncs, renames, unlinks) for its driver to carry
//! out; times are arguments.
//!
//! * [`segment`]: the segment codec (header, frames with their CRC32C), and the forward scan
//!   that finds the valid frames and the torn tail.
//! * [`record`]: the manifest and acknowledgement-watermark files, 8 KiB with two records.
//! * [`dict`]: the symbol dictionary file.
//! * [`slot`]: the names of a slot directory's files.
//! * [`recovery`]: recovery of a slot from the bytes of its files.
//! * [`ring`]: FSNs, the published and acknowledged cursors, the wire window, trim,
//!   back-pressure, the durable-ack OK queue and close.
//! * [`orphan`]: which sibling slots may be drained.
//! * [`status`]: the server's status frames and the error categories.
//! * [`upgrade`]: the WebSocket upgrade's request headers and response checks.
//!
//! Where the seed describing this substrate and the reference client disagree, this crate
//! follows the reference client:
//!
//! * the acknowledgement watermark is an 8 KiB file of two records, not 16 bytes; the 16-byte
//!   form is read as a legacy layout and rewritten (SF-34, SF-D4, SF-D5);
//! * frames hold symbol ids and are delta-encoded, so `.symbol-dict` is needed to replay them
//!   (SF-39);
//! * the reference pre-allocates an empty spare segment (base sequence 0): segments without
//!   frames are left out of the gap check (SF-31); the manifest's active base still is
//!   checked against the last frame on disk, so a frame lost before an empty active segment
//!   is the same fatal gap as one lost before a segment holding frames;
//! * the reference sends symbol catch-up frames first on each connection, at wire sequences
//!   `0..k`, so `fsn = fsnAtZero + wireSeq − k` and acknowledgements of catch-up frames map to
//!   no FSN ([`ring::Window`], SF-9);
//! * header byte 5 of a segment is a flags byte, not a reserved zero: the questdb 6.0.0
//!   client sets its bit 0 (manifest required) on every segment, so the reader accepts that
//!   bit; this crate writes the byte 0, as the Java fixture has it (SF-D1).
//!
//! Segment generations are written as 16 lowercase hexadecimal digits; either case is read.

pub mod dict;
pub mod ops;
pub mod orphan;
pub mod record;
pub mod recovery;
pub mod ring;
pub mod segment;
pub mod slot;
pub mod status;
pub mod upgrade;

pub use ops::{FileOp, MemDir};
