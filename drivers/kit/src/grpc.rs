//! gRPC message framing: one message behind its 5-byte prefix (a compression flag, then the
//! length as a big-endian `u32`), and a reader that splits messages out of a byte stream,
//! refusing one above its limit before reading it and any compressed one.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// gRPC's usual receive limit, 4 MiB: the limit of [`MessageReader::default`].
pub const DEFAULT_LIMIT: usize = 4 * 1024 * 1024;

/// One payload as one gRPC message: uncompressed, behind the 5-byte length prefix.
pub fn grpc_message(payload: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(payload.len() + 5);
    b.put_u8(0);
    b.put_u32(payload.len() as u32);
    b.put_slice(payload);
    b.freeze()
}

/// Splits gRPC messages out of a byte stream, refusing one declared above its limit before
/// reading it, and any compressed one.
#[derive(Debug)]
pub struct MessageReader {
    buf: BytesMut,
    limit: usize,
}

impl Default for MessageReader {
    /// A reader with the [`DEFAULT_LIMIT`].
    fn default() -> Self {
        Self::with_limit(DEFAULT_LIMIT)
    }
}

/// Why a gRPC message stream cannot be read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageError {
    /// A message declared above the reader's limit, with its declared length.
    TooLarge(usize),
    /// A compressed message (none is sent or accepted).
    Compressed,
}

impl std::fmt::Display for MessageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge(n) => write!(f, "a message of {n} bytes, above the limit"),
            Self::Compressed => f.write_str("a compressed message"),
        }
    }
}

impl std::error::Error for MessageError {}

impl MessageReader {
    /// A reader refusing messages declared above `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            buf: BytesMut::new(),
            limit,
        }
    }

    /// The largest message this reader takes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Adds bytes read from the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The next whole message, if one is buffered.
    pub fn next_message(&mut self) -> Result<Option<Bytes>, MessageError> {
        if self.buf.len() < 5 {
            return Ok(None);
        }
        if self.buf[0] != 0 {
            return Err(MessageError::Compressed);
        }
        let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]) as usize;
        if len > self.limit {
            return Err(MessageError::TooLarge(len));
        }
        if self.buf.len() < 5 + len {
            return Ok(None);
        }
        self.buf.advance(5);
        Ok(Some(self.buf.split_to(len).freeze()))
    }

    /// How many bytes are buffered that make no whole message yet: a stream that ends with
    /// any ended inside a message.
    pub fn partial(&self) -> usize {
        self.buf.len()
    }
}

/// The `grpc-status` of a header block, if it carries one.
#[cfg(feature = "tokio")]
pub fn status_of(headers: &http::HeaderMap) -> Option<u32> {
    headers
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grpc_reader_splits_messages_across_chunks_and_refuses_one_above_its_own_limit() {
        let mut stream = grpc_message(b"one").to_vec();
        stream.extend_from_slice(&grpc_message(b""));
        stream.extend_from_slice(&grpc_message(&[7; 10]));
        assert_eq!(&stream[..5], &[0, 0, 0, 0, 3]);
        let mut r = MessageReader::with_limit(10);
        let mut got = Vec::new();
        for chunk in stream.chunks(2) {
            r.push(chunk);
            while let Some(m) = r.next_message().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, [&b"one"[..], b"", &[7; 10]]);
        assert_eq!(r.partial(), 0);
        let mut small = MessageReader::with_limit(9);
        small.push(&grpc_message(&[7; 10]));
        assert_eq!(small.next_message(), Err(MessageError::TooLarge(10)));
        let mut z = MessageReader::default();
        assert_eq!(z.limit(), DEFAULT_LIMIT);
        z.push(&[1, 0, 0, 0, 0]);
        assert_eq!(z.next_message(), Err(MessageError::Compressed));
        let mut cut = MessageReader::default();
        cut.push(&grpc_message(b"abc")[..6]);
        assert_eq!((cut.next_message(), cut.partial()), (Ok(None), 6));
        assert_eq!(MessageError::Compressed.to_string(), "a compressed message");
    }
}
