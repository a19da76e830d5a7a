//! Helpers shared by the fuzz targets of `nervix-protocol`.

use bytes::Bytes;
use nervix_protocol::frame::{Frame, Root};
use std::hint::black_box;

/// Reads `data` as a frame of root `R`, and then the same bytes with `R`'s file identifier
/// written over bytes 4..8, so that the fuzzer reaches verification without first having to
/// discover the identifier.
///
/// A refused frame has its violation rendered; an accepted one is walked through every accessor
/// (the line report) and copied out whole (`unpack`). Nothing here may panic.
pub fn read_frame<R: Root>(data: &[u8]) {
    read_once::<R>(data);
    if data.len() >= 8 && data[4..8] != R::IDENTIFIER {
        let mut patched = data.to_vec();
        patched[4..8].copy_from_slice(&R::IDENTIFIER);
        read_once::<R>(&patched);
    }
}

fn read_once<R: Root>(data: &[u8]) {
    match Frame::<R>::check(Bytes::copy_from_slice(data)) {
        Ok(frame) => walk(&frame),
        Err(violation) => {
            black_box(violation.rule());
            black_box(violation.to_string());
        }
    }
}

/// Reads every member of an accepted frame: the report calls every accessor, `unpack` copies
/// every member out.
pub fn walk<R: Root>(frame: &Frame<R>) {
    black_box(frame.report());
    black_box(frame.unpack());
}

/// A cursor over fuzzer input that reads zero past its end.
#[derive(Debug)]
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The next byte, zero past the end.
    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos = self.pos.saturating_add(1);
        b
    }

    /// The next `N` bytes as a little-endian number, zeros past the end.
    pub fn le<const N: usize>(&mut self) -> u64 {
        let mut v = 0u64;
        for i in 0..N.min(8) {
            v |= u64::from(self.byte()) << (8 * i);
        }
        v
    }

    /// Up to `n` next bytes (fewer at the end).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = start.saturating_add(n).min(self.data.len());
        self.pos = end;
        &self.data[start..end]
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(usize::MAX)
    }
}
