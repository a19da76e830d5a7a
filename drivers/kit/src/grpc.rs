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
///
/// [`MessageReader::push_bytes`] takes a chunk without copying it where it can: the whole
/// messages that lie in it are handed out as slices of it ([`Bytes::slice`] semantics, no
/// copy), and only bytes of a message that straddles chunks are copied into the reader's
/// buffer. Such a slice keeps the chunk's buffer alive while it is kept; a reader that retains
/// messages copies the small ones out first (F-9).
#[derive(Debug)]
pub struct MessageReader {
    /// Bytes of messages copied out of their chunks: always read before `chunk`.
    buf: BytesMut,
    /// The unread rest of a chunk given to `push_bytes`; only ever non-empty while `buf` holds
    /// nothing or whole messages only, so that `buf` then `chunk` is the stream's order.
    chunk: Bytes,
    limit: usize,
    /// Messages handed out as slices of a pushed chunk, without a copy.
    sliced: u64,
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
            chunk: Bytes::new(),
            limit,
            sliced: 0,
        }
    }

    /// The largest message this reader takes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Adds bytes read from the stream, copying them.
    pub fn push(&mut self, chunk: &[u8]) {
        self.spill();
        self.buf.extend_from_slice(chunk);
    }

    /// Adds a chunk read from the stream, copying only what it must: the bytes that complete
    /// a message begun in an earlier chunk. The rest is kept as it is, and every message that
    /// lies whole in it is handed out by [`MessageReader::next_message`] as a slice of it.
    pub fn push_bytes(&mut self, mut chunk: Bytes) {
        self.spill();
        while !chunk.is_empty() {
            let need = self.to_boundary();
            if need == 0 {
                break;
            }
            let n = need.min(chunk.len());
            self.buf.extend_from_slice(&chunk[..n]);
            chunk.advance(n);
        }
        self.chunk = chunk;
    }

    /// The bytes `buf` lacks to end at a message boundary (0: it does); a prefix it cannot
    /// read (compressed, too large) asks for everything, as `push` would have copied it.
    fn to_boundary(&self) -> usize {
        let mut at = 0;
        while at < self.buf.len() {
            let rest = &self.buf[at..];
            match prefix(rest, self.limit) {
                Ok(Some(len)) if rest.len() >= 5 + len => at += 5 + len,
                Ok(Some(len)) => return 5 + len - rest.len(),
                Ok(None) => return 5 - rest.len(),
                Err(_) => return usize::MAX,
            }
        }
        0
    }

    /// Moves the unread rest of a pushed chunk into the buffer, after what it holds.
    fn spill(&mut self) {
        if !self.chunk.is_empty() {
            self.buf.extend_from_slice(&self.chunk);
            self.chunk = Bytes::new();
        }
    }

    /// The next whole message, if one is buffered.
    pub fn next_message(&mut self) -> Result<Option<Bytes>, MessageError> {
        if self.buf.is_empty() && !self.chunk.is_empty() {
            match prefix(&self.chunk, self.limit)? {
                Some(len) if self.chunk.len() >= 5 + len => {
                    self.chunk.advance(5);
                    self.sliced += 1;
                    return Ok(Some(self.chunk.split_to(len)));
                }
                // The chunk ends inside a message: its rest waits in the buffer for the next.
                _ => self.spill(),
            }
        }
        let Some(len) = prefix(&self.buf, self.limit)? else {
            return Ok(None);
        };
        if self.buf.len() < 5 + len {
            return Ok(None);
        }
        self.buf.advance(5);
        Ok(Some(self.buf.split_to(len).freeze()))
    }

    /// How many bytes are buffered that make no whole message yet: a stream that ends with
    /// any ended inside a message.
    pub fn partial(&self) -> usize {
        self.buf.len() + self.chunk.len()
    }

    /// How many messages were handed out as slices of a chunk given to
    /// [`MessageReader::push_bytes`], with no copy.
    pub fn sliced(&self) -> u64 {
        self.sliced
    }
}

/// The length a message's prefix at the start of `b` declares; `None` while fewer than its 5
/// bytes are there. A compressed message, or one declared above `limit`, is refused.
fn prefix(b: &[u8], limit: usize) -> Result<Option<usize>, MessageError> {
    if b.len() < 5 {
        return Ok(None);
    }
    if b[0] != 0 {
        return Err(MessageError::Compressed);
    }
    let len = u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize;
    if len > limit {
        return Err(MessageError::TooLarge(len));
    }
    Ok(Some(len))
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

    /// Every message, the end state (`partial`) or the error of reading `stream` cut into
    /// chunks at `cuts`, pushed with `push_bytes` or copied with `push`.
    /// Reads `stream` cut at `cuts`, pushed by copy or as chunks, reading the messages out
    /// after every `hold` pushes (and at the end): the messages, how the stream ended (the
    /// bytes left, or the error), the slices handed out, and `partial()` after each push.
    fn read_cut(
        stream: &[u8],
        cuts: &[usize],
        by_bytes: bool,
        limit: usize,
        hold: usize,
    ) -> (Vec<Bytes>, Result<usize, MessageError>, u64, Vec<usize>) {
        let mut r = MessageReader::with_limit(limit);
        let mut got = Vec::new();
        let mut partials = Vec::new();
        let mut at = 0;
        let ends: Vec<usize> = cuts.iter().copied().chain([stream.len()]).collect();
        for (i, &end) in ends.iter().enumerate() {
            let chunk = &stream[at..end.max(at)];
            at = end.max(at);
            if by_bytes {
                r.push_bytes(Bytes::copy_from_slice(chunk));
            } else {
                r.push(chunk);
            }
            partials.push(r.partial());
            if (i + 1) % hold != 0 && i + 1 < ends.len() {
                continue;
            }
            loop {
                match r.next_message() {
                    Ok(Some(m)) => got.push(m),
                    Ok(None) => break,
                    Err(e) => return (got, Err(e), r.sliced(), partials),
                }
            }
        }
        (got, Ok(r.partial()), r.sliced(), partials)
    }

    #[test]
    fn a_chunk_taken_whole_gives_the_same_messages_as_its_copy_however_the_stream_is_cut() {
        let mut stream = Vec::new();
        let mut spans = Vec::new();
        for (i, n) in [3usize, 0, 10, 1, 7, 0, 12, 2].iter().enumerate() {
            let at = stream.len();
            stream.extend_from_slice(&grpc_message(&vec![i as u8 + 1; *n]));
            spans.push((at, stream.len()));
        }
        // A stream that ends inside a message, and one with a bad prefix after good messages.
        let mut cut_short = stream.clone();
        cut_short.extend_from_slice(&grpc_message(b"abcdef")[..8]);
        let mut compressed = stream.clone();
        compressed.extend_from_slice(&[1, 0, 0, 0, 1, 9]);
        let mut too_large = stream.clone();
        too_large.extend_from_slice(&grpc_message(&[5; 13]));
        for s in [&stream, &cut_short, &compressed, &too_large] {
            // Every single cut, every pair of cuts, and chunks of every fixed size.
            let mut cuttings: Vec<Vec<usize>> = vec![vec![]];
            for a in 0..=s.len() {
                cuttings.push(vec![a]);
                for b in a..=s.len() {
                    cuttings.push(vec![a, b]);
                }
            }
            for size in 1..=s.len() {
                cuttings.push((size..s.len()).step_by(size).collect());
            }
            // Read out after every push, or after two or three pushes: a chunk pushed on one
            // not read yet has that one's messages put before it.
            for hold in 1..=3 {
                for cuts in &cuttings {
                    let copied = read_cut(s, cuts, false, 12, hold);
                    let taken = read_cut(s, cuts, true, 12, hold);
                    assert_eq!(
                        (&taken.0, &taken.1, &taken.3),
                        (&copied.0, &copied.1, &copied.3),
                        "cuts {cuts:?}, read every {hold}"
                    );
                    assert_eq!(copied.2, 0, "push copies every message");
                    // Read after every push, a message that no cut splits is a slice, and
                    // only those: a straddling one is completed exactly, never past its end.
                    if hold == 1 && std::ptr::eq(s, &stream) {
                        let whole = spans
                            .iter()
                            .filter(|(a, b)| !cuts.iter().any(|c| a < c && c < b))
                            .count();
                        assert_eq!(taken.2, whole as u64, "cuts {cuts:?}");
                    }
                }
            }
        }
        let whole = read_cut(&stream, &[], true, 12, 1);
        assert_eq!(whole.0.len(), 8);
        assert_eq!(whole.1, Ok(0));
    }

    #[test]
    fn messages_whole_in_a_pushed_chunk_are_slices_of_it_and_a_straddling_one_is_copied() {
        let mut stream = grpc_message(b"first").to_vec();
        stream.extend_from_slice(&grpc_message(b"second"));
        stream.extend_from_slice(&grpc_message(b"straddles"));
        stream.extend_from_slice(&grpc_message(b"after"));
        let cut = 10 + 11 + 7;
        let one = Bytes::copy_from_slice(&stream[..cut]);
        let two = Bytes::copy_from_slice(&stream[cut..]);
        let within = |m: &Bytes, c: &Bytes| {
            let (p, q) = (m.as_ptr() as usize, c.as_ptr() as usize);
            p >= q && p + m.len() <= q + c.len()
        };
        let mut r = MessageReader::default();
        r.push_bytes(one.clone());
        let first = r.next_message().unwrap().unwrap();
        let second = r.next_message().unwrap().unwrap();
        assert_eq!((&first[..], &second[..]), (&b"first"[..], &b"second"[..]));
        assert!(within(&first, &one) && within(&second, &one));
        assert_eq!(r.sliced(), 2);
        assert_eq!(r.next_message(), Ok(None));
        assert_eq!(r.partial(), 7);
        r.push_bytes(two.clone());
        let straddles = r.next_message().unwrap().unwrap();
        assert_eq!(&straddles[..], b"straddles");
        assert!(!within(&straddles, &one) && !within(&straddles, &two));
        let after = r.next_message().unwrap().unwrap();
        assert_eq!(&after[..], b"after");
        assert!(
            within(&after, &two),
            "the rest of a chunk after a straddling message"
        );
        assert_eq!(r.sliced(), 3);
        assert_eq!((r.next_message(), r.partial()), (Ok(None), 0));
        // Bytes copied with `push` before a chunk are read before it.
        let mut r = MessageReader::default();
        r.push(&stream[..3]);
        r.push_bytes(Bytes::copy_from_slice(&stream[3..cut]));
        let mut all: Vec<Bytes> = std::iter::from_fn(|| r.next_message().unwrap()).collect();
        assert_eq!(r.sliced(), 1, "only `second` lay whole in the pushed chunk");
        // The unread rest of a pushed chunk goes before bytes copied after it.
        r.push(&stream[cut..]);
        all.extend(std::iter::from_fn(|| r.next_message().unwrap()));
        assert_eq!(all, [&b"first"[..], b"second", b"straddles", b"after"]);
        assert_eq!(r.sliced(), 1);
    }
}
