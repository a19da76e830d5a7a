//! The protocol's size limits (manual F-3, F-6, F-7, F-9).

/// The largest frame a transport message may carry, sent or received: 4 MiB.
pub const FRAME_LIMIT: usize = 4 * 1024 * 1024;

/// The smallest frame that can be valid: a root offset and a file identifier.
pub const MIN_FRAME: usize = 8;

/// The largest reply that transfer parts may join into: 64 MiB.
pub const TRANSFER_LIMIT: usize = 64 * 1024 * 1024;

/// The longest string a client may send: 64 MiB.
pub const MAX_STRING_BYTES: usize = 64 * 1024 * 1024;

/// The most entries a vector may hold when sent (F-6). Not a receive rule: a received vector
/// (a transfer chunk, a bytes cell, a batch body) is bounded only by verification and the
/// frame limit (F-3).
pub const MAX_VECTOR_ENTRIES: usize = 262_144;

/// The deepest nesting of tables a frame may have, sent or received.
pub const MAX_DEPTH: usize = 64;

/// Below this size a frame kept out of a larger receive buffer is copied out of it (F-9), so a
/// retained frame never pins the whole buffer.
pub const COMPACT_BELOW: usize = 64 * 1024;

/// Verifier options for a received frame of `len` bytes: nesting 64, at most `len / 4` tables,
/// and an apparent size of at most `8 * len` (F-3).
pub fn verifier_options(len: usize) -> flatbuffers::VerifierOptions {
    flatbuffers::VerifierOptions {
        max_depth: MAX_DEPTH,
        max_tables: len / 4,
        max_apparent_size: len.saturating_mul(8),
        ignore_missing_null_terminator: false,
    }
}
