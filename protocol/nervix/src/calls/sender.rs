//! The sending half shared by uploads and restores: the archive in pieces, each piece one
//! chunk frame, the whole hashed as it passes, and the last frame withheld when the bytes are
//! not those declared.

use super::{CallError, Digest, Need};
use crate::limits::{FRAME_LIMIT, MAX_VECTOR_ENTRIES};
use bytes::{Bytes, BytesMut};

/// Which chunk table a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkRoot {
    /// `UploadMessage { part: UploadChunk }`, NXUM.
    Upload,
    /// `RestoreMessage { part: RestoreChunk }`, NXRM.
    Restore,
}

/// Bytes of a chunk frame before its payload.
pub(crate) const HEADER: usize = 48;

/// The largest chunk one frame carries: the frame limit less the header, and no more entries
/// than a sent vector may have (F-6).
pub(crate) const MAX_CHUNK: usize = if FRAME_LIMIT - HEADER < MAX_VECTOR_ENTRIES {
    FRAME_LIMIT - HEADER
} else {
    MAX_VECTOR_ENTRIES
};

/// The fixed start of a chunk frame, laid out by hand so that the payload is written once:
///
/// ```text
///  0  u32  root table at 16          4  file identifier
///  8  vtable of the root: size 8, table 12, part_type at +8, part at +4
/// 16  root table: soffset 8 (vtable at 8), part at 20+16=36, part_type 2 (the chunk), padding
/// 28  vtable of the chunk: size 6, table 8, bytes at +4, padding
/// 36  chunk table: soffset 8 (vtable at 28), bytes at 40+4=44
/// 44  u32 length of the bytes, then the bytes
/// ```
///
/// Both roots have one member, the union `part`, whose chunk variant is the second (2).
fn header(root: ChunkRoot, len: u32) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0..4].copy_from_slice(&16u32.to_le_bytes());
    h[4..8].copy_from_slice(match root {
        ChunkRoot::Upload => b"NXUM",
        ChunkRoot::Restore => b"NXRM",
    });
    for (at, v) in [(8, 8u16), (10, 12), (12, 8), (14, 4)] {
        h[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    h[16..20].copy_from_slice(&8i32.to_le_bytes());
    h[20..24].copy_from_slice(&16u32.to_le_bytes());
    h[24] = 2;
    for (at, v) in [(28, 6u16), (30, 8), (32, 4)] {
        h[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    h[36..40].copy_from_slice(&8i32.to_le_bytes());
    h[40..44].copy_from_slice(&4u32.to_le_bytes());
    h[44..48].copy_from_slice(&len.to_le_bytes());
    h
}

/// One attempt's progress through the archive.
#[derive(Debug, Clone)]
pub(crate) struct Sender {
    root: ChunkRoot,
    total: u64,
    chunk: usize,
    sent: u64,
    hasher: blake3::Hasher,
    arena: BytesMut,
}

impl Sender {
    pub(crate) fn new(root: ChunkRoot, total: u64, chunk: usize) -> Result<Self, CallError> {
        if total == 0 {
            return Err(CallError::EmptyArchive);
        }
        if chunk == 0 || chunk > MAX_CHUNK {
            return Err(CallError::ChunkSize(chunk));
        }
        Ok(Self {
            root,
            total,
            chunk,
            sent: 0,
            hasher: blake3::Hasher::new(),
            arena: BytesMut::new(),
        })
    }

    /// Back to the first byte, for a new attempt.
    pub(crate) fn restart(&mut self) {
        self.sent = 0;
        self.hasher.reset();
    }

    pub(crate) fn sent(&self) -> u64 {
        self.sent
    }

    /// The next piece this attempt wants.
    pub(crate) fn need(&self) -> Need {
        Need::Piece {
            offset: self.sent,
            len: self.want(),
        }
    }

    fn want(&self) -> usize {
        usize::try_from(self.total - self.sent).map_or(self.chunk, |r| r.min(self.chunk))
    }

    /// Takes `piece` into the attempt: checked against what was asked for and hashed. With the
    /// piece that completes the archive, the digest of the whole attempt is checked against
    /// `expected` first, and on a difference the piece is not taken. Returns the digest the
    /// attempt streamed with the last piece.
    fn take(
        &mut self,
        piece: &[u8],
        expected: Option<&Digest>,
    ) -> Result<Option<Digest>, CallError> {
        let max = self.want();
        if piece.is_empty() || piece.len() > max {
            return Err(CallError::Piece {
                len: piece.len(),
                max,
            });
        }
        self.hasher.update(piece);
        let last = self.sent + piece.len() as u64 == self.total;
        let digest = if last {
            let d = *self.hasher.finalize().as_bytes();
            if expected.is_some_and(|e| *e != d) {
                // Withheld: this attempt never carries a complete archive of other bytes.
                self.hasher.reset();
                self.sent = 0;
                return Err(CallError::ArchiveChanged);
            }
            Some(d)
        } else {
            None
        };
        self.sent += piece.len() as u64;
        Ok(digest)
    }

    /// The chunk frame of `piece`, in one buffer (the piece copied once, after its header).
    pub(crate) fn chunk(
        &mut self,
        piece: &[u8],
        expected: Option<&Digest>,
    ) -> Result<(Bytes, Option<Digest>), CallError> {
        let digest = self.take(piece, expected)?;
        // `piece.len()` is at most MAX_CHUNK, well inside u32.
        let len = piece.len() as u32;
        let size = HEADER + piece.len();
        // Reuses the arena's memory once every frame cut from it was let go.
        self.arena.reserve(size.max(HEADER + self.chunk));
        self.arena.extend_from_slice(&header(self.root, len));
        self.arena.extend_from_slice(piece);
        Ok((self.arena.split().freeze(), digest))
    }

    /// The chunk frame of `piece` in two parts, the piece itself kept as it is (never copied).
    pub(crate) fn chunk_parts(
        &mut self,
        piece: Bytes,
        expected: Option<&Digest>,
    ) -> Result<(ChunkFrame, Option<Digest>), CallError> {
        let digest = self.take(&piece, expected)?;
        let header = header(self.root, piece.len() as u32);
        Ok((
            ChunkFrame {
                header,
                payload: piece,
            },
            digest,
        ))
    }
}

/// One chunk frame in two parts: its fixed start, then the archive's piece as the caller gave
/// it. Written one after the other (a vectored write, or two writes within one message), they
/// are exactly the frame [`crate::calls::UploadCall::chunk`] would have made of the same piece,
/// without copying the piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkFrame {
    header: [u8; HEADER],
    payload: Bytes,
}

impl ChunkFrame {
    /// The frame's start, before the piece.
    pub fn header(&self) -> &[u8] {
        &self.header
    }

    /// The piece, as given.
    pub fn payload(&self) -> &Bytes {
        &self.payload
    }

    /// The frame's size: the header and the piece.
    pub fn len(&self) -> usize {
        HEADER + self.payload.len()
    }

    /// Never: a chunk frame always has its header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The whole frame in one buffer (a copy).
    pub fn to_bytes(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(self.len());
        b.extend_from_slice(&self.header);
        b.extend_from_slice(&self.payload);
        b.freeze()
    }
}
