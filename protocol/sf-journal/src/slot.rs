//! Names of the files of a slot directory `<sf_dir>/<sender_id>/` (the reference layout).

/// The first segment file of a slot.
pub const SEGMENT_INITIAL: &str = "sf-initial.sfa";
/// The manifest: which segment is the head and which is active (two-record file).
pub const MANIFEST: &str = "sf-manifest.bin";
/// The persisted acknowledgement watermark (two-record file, or the legacy 16-byte form).
pub const ACK_WATERMARK: &str = ".ack-watermark";
/// The persisted symbol dictionary.
pub const SYMBOL_DICT: &str = ".symbol-dict";
/// A trimmed segment kept for reuse ([`Ring::with_recycling`](crate::ring::Ring::with_recycling)):
/// not a segment name, so recovery never reads it; whoever opens the slot removes it.
pub const SPARE: &str = ".sf-spare";
/// The slot lock file, held exclusively for the sender's life.
pub const LOCK: &str = ".lock";
/// The process id of the lock's holder, read to name it when a second sender is refused.
pub const LOCK_PID: &str = ".lock.pid";
/// The sentinel that marks a slot a background drainer found unreplayable.
pub const FAILED: &str = ".failed";
/// The suffix a corrupt manifest is renamed with.
pub const CORRUPT_SUFFIX: &str = ".corrupt";
/// The extension of segment files.
pub const SEGMENT_EXTENSION: &str = ".sfa";

/// The name of the segment file of a generation: `sf-` then the generation as 16 lowercase
/// hexadecimal digits, then `.sfa`.
#[must_use]
pub fn segment_name(generation: u64) -> String {
    format!("sf-{generation:016x}{SEGMENT_EXTENSION}")
}

/// Which segment a file name designates, if it names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SegmentName {
    /// `sf-initial.sfa`.
    Initial,
    /// `sf-<16 hex>.sfa` with its generation.
    Generation(u64),
}

/// Parses a segment file name; anything else (other slot files, a stray name) is `None`.
#[must_use]
pub fn parse_segment_name(name: &str) -> Option<SegmentName> {
    if name == SEGMENT_INITIAL {
        return Some(SegmentName::Initial);
    }
    let hex = name.strip_prefix("sf-")?.strip_suffix(SEGMENT_EXTENSION)?;
    if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16)
        .ok()
        .map(SegmentName::Generation)
}

/// The name a corrupt file is set aside under: `<name>.corrupt`.
#[must_use]
pub fn corrupt_name(name: &str) -> String {
    format!("{name}{CORRUPT_SUFFIX}")
}

/// The slot directory name of the `n`th sender of a pool whose base sender id is `base`.
#[must_use]
pub fn pool_slot(base: &str, n: u32) -> String {
    format!("{base}-ingest-{n}")
}
