//! The direct-pipe framing: each frame is a 4-byte big-endian length, then that many bytes.

use crate::FramingError;

/// The default largest frame body, in bytes.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 1 << 20;

/// Prefixes `body` with its length, refusing a body above `max_frame_bytes`.
pub fn encode_frame(body: &[u8], max_frame_bytes: usize) -> Result<Vec<u8>, FramingError> {
    if body.len() > max_frame_bytes || u32::try_from(body.len()).is_err() {
        return Err(FramingError::FrameTooLarge {
            len: body.len() as u64,
            max: max_frame_bytes,
        });
    }
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
    Ok(out)
}

/// Splits a byte stream into frame bodies. It buffers at most one frame (its 4-byte prefix and
/// up to `max_frame_bytes` of body): bytes beyond that are left to the caller, who pushes them
/// again after taking the frames out.
#[derive(Debug)]
pub struct FrameDecoder {
    max_frame_bytes: usize,
    buf: Vec<u8>,
    failed: bool,
}

impl FrameDecoder {
    /// A decoder refusing any frame whose body is longer than `max_frame_bytes`.
    #[must_use]
    pub fn new(max_frame_bytes: usize) -> Self {
        FrameDecoder {
            max_frame_bytes,
            buf: Vec::new(),
            failed: false,
        }
    }

    /// Bytes currently buffered.
    #[must_use]
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The length the pending prefix declares, once all four bytes are in.
    fn declared(&self) -> Option<usize> {
        let p: [u8; 4] = self.buf.get(..4)?.try_into().ok()?;
        Some(u32::from_be_bytes(p) as usize)
    }

    /// Takes as many bytes of `input` as the current frame needs and returns how many it took,
    /// or the frame's body once it is complete. Call repeatedly on the rest of the input. A
    /// prefix declaring more than the maximum is an error and ends the stream.
    pub fn push(&mut self, input: &[u8]) -> Result<(usize, Option<Vec<u8>>), FramingError> {
        if self.failed {
            return Err(FramingError::Failed);
        }
        let mut taken = 0;
        if self.buf.len() < 4 {
            let n = (4 - self.buf.len()).min(input.len());
            self.buf.extend_from_slice(&input[..n]);
            taken += n;
        }
        let Some(len) = self.declared() else {
            return Ok((taken, None));
        };
        if len > self.max_frame_bytes {
            self.failed = true;
            self.buf.clear();
            return Err(FramingError::FrameTooLarge {
                len: len as u64,
                max: self.max_frame_bytes,
            });
        }
        let want = 4 + len - self.buf.len();
        let n = want.min(input.len() - taken);
        self.buf.extend_from_slice(&input[taken..taken + n]);
        taken += n;
        if self.buf.len() == 4 + len {
            let body = self.buf.split_off(4);
            self.buf.clear();
            return Ok((taken, Some(body)));
        }
        Ok((taken, None))
    }
}
