//! A small MessagePack reader and writer.
//!
//! The reader walks a byte slice one value at a time, so the frame decoders see every key of a
//! map in wire order, duplicates included. The writer always picks the shortest form of each
//! value, which is what msgpack-python writes for the same value.

use crate::DecodeError;

/// Maps and arrays nested deeper than this are refused.
pub(crate) const MAX_DEPTH: usize = 32;

/// The header of one MessagePack value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Head {
    Nil,
    Bool(bool),
    Uint(u64),
    Int(i64),
    Float32,
    Float64,
    Str(usize),
    Bin(usize),
    Array(usize),
    Map(usize),
    Ext(usize),
}

/// A cursor over the bytes of one frame.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn is_at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    pub(crate) fn slice(&self, from: usize, to: usize) -> &'a [u8] {
        &self.buf[from..to]
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated)?;
        if end > self.buf.len() {
            return Err(DecodeError::Truncated);
        }
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn len(&mut self, n: usize) -> Result<usize, DecodeError> {
        let v = self.be(n)?;
        usize::try_from(v).map_err(|_| DecodeError::Truncated)
    }

    /// Reads the header of the next value (a string's or binary's bytes stay unread).
    pub(crate) fn head(&mut self) -> Result<Head, DecodeError> {
        let b = self.byte()?;
        Ok(match b {
            0x00..=0x7f => Head::Uint(u64::from(b)),
            0x80..=0x8f => Head::Map(usize::from(b & 0x0f)),
            0x90..=0x9f => Head::Array(usize::from(b & 0x0f)),
            0xa0..=0xbf => Head::Str(usize::from(b & 0x1f)),
            0xc0 => Head::Nil,
            0xc1 => return Err(DecodeError::ReservedByte),
            0xc2 => Head::Bool(false),
            0xc3 => Head::Bool(true),
            0xc4 => Head::Bin(self.len(1)?),
            0xc5 => Head::Bin(self.len(2)?),
            0xc6 => Head::Bin(self.len(4)?),
            0xc7 => Head::Ext(self.len(1)?.saturating_add(1)),
            0xc8 => Head::Ext(self.len(2)?.saturating_add(1)),
            0xc9 => Head::Ext(self.len(4)?.saturating_add(1)),
            0xca => {
                self.take(4)?;
                Head::Float32
            }
            0xcb => {
                self.take(8)?;
                Head::Float64
            }
            0xcc => Head::Uint(self.be(1)?),
            0xcd => Head::Uint(self.be(2)?),
            0xce => Head::Uint(self.be(4)?),
            0xcf => Head::Uint(self.be(8)?),
            // The casts reinterpret the two's complement bits of a signed field of that width.
            0xd0 => Head::Int(i64::from(self.be(1)? as u8 as i8)),
            0xd1 => Head::Int(i64::from(self.be(2)? as u16 as i16)),
            0xd2 => Head::Int(i64::from(self.be(4)? as u32 as i32)),
            0xd3 => Head::Int(self.be(8)? as i64),
            0xd4 => Head::Ext(2),
            0xd5 => Head::Ext(3),
            0xd6 => Head::Ext(5),
            0xd7 => Head::Ext(9),
            0xd8 => Head::Ext(17),
            0xd9 => Head::Str(self.len(1)?),
            0xda => Head::Str(self.len(2)?),
            0xdb => Head::Str(self.len(4)?),
            0xdc => Head::Array(self.len(2)?),
            0xdd => Head::Array(self.len(4)?),
            0xde => Head::Map(self.len(2)?),
            0xdf => Head::Map(self.len(4)?),
            0xe0..=0xff => Head::Int(i64::from(b as i8)),
        })
    }

    /// The UTF-8 text of a string whose header was just read.
    pub(crate) fn str_body(&mut self, len: usize) -> Result<&'a str, DecodeError> {
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidUtf8)
    }

    /// Skips the body of a value whose header was just read, and every value inside it.
    pub(crate) fn skip_body(&mut self, head: Head, depth: usize) -> Result<(), DecodeError> {
        match head {
            Head::Str(n) | Head::Bin(n) | Head::Ext(n) => {
                self.take(n)?;
            }
            Head::Array(n) => {
                let depth = Self::deeper(depth)?;
                for _ in 0..n {
                    self.skip_value(depth)?;
                }
            }
            Head::Map(n) => {
                let depth = Self::deeper(depth)?;
                for _ in 0..n {
                    self.skip_value(depth)?;
                    self.skip_value(depth)?;
                }
            }
            Head::Nil
            | Head::Bool(_)
            | Head::Uint(_)
            | Head::Int(_)
            | Head::Float32
            | Head::Float64 => {}
        }
        Ok(())
    }

    /// Skips one whole value.
    pub(crate) fn skip_value(&mut self, depth: usize) -> Result<(), DecodeError> {
        let head = self.head()?;
        self.skip_body(head, depth)
    }

    pub(crate) fn deeper(depth: usize) -> Result<usize, DecodeError> {
        if depth >= MAX_DEPTH {
            Err(DecodeError::TooDeep)
        } else {
            Ok(depth + 1)
        }
    }
}

/// Checks that `bytes` hold exactly one well-formed MessagePack value.
pub(crate) fn is_one_value(bytes: &[u8]) -> bool {
    let mut r = Reader::new(bytes);
    r.skip_value(0).is_ok() && r.is_at_end()
}

/// Appends values in their shortest MessagePack forms.
pub(crate) struct Writer {
    pub(crate) out: Vec<u8>,
}

impl Writer {
    pub(crate) fn new() -> Self {
        Writer { out: Vec::new() }
    }

    fn sized(&mut self, len: usize, fix: Option<(u8, usize)>, markers: [u8; 3]) {
        match fix {
            Some((base, max)) if len <= max => self.out.push(base | len as u8),
            _ => {
                if let (Some(m8), Ok(v)) =
                    ((markers[0] != 0).then_some(markers[0]), u8::try_from(len))
                {
                    self.out.push(m8);
                    self.out.push(v);
                } else if let Ok(v) = u16::try_from(len) {
                    self.out.push(markers[1]);
                    self.out.extend_from_slice(&v.to_be_bytes());
                } else {
                    // Callers keep every length within 32 bits (frames are far smaller).
                    self.out.push(markers[2]);
                    self.out.extend_from_slice(&(len as u32).to_be_bytes());
                }
            }
        }
    }

    pub(crate) fn nil(&mut self) {
        self.out.push(0xc0);
    }

    pub(crate) fn bool(&mut self, v: bool) {
        self.out.push(if v { 0xc3 } else { 0xc2 });
    }

    pub(crate) fn str(&mut self, s: &str) {
        self.sized(s.len(), Some((0xa0, 31)), [0xd9, 0xda, 0xdb]);
        self.out.extend_from_slice(s.as_bytes());
    }

    pub(crate) fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.nil(),
        }
    }

    pub(crate) fn bin(&mut self, b: &[u8]) {
        self.sized(b.len(), None, [0xc4, 0xc5, 0xc6]);
        self.out.extend_from_slice(b);
    }

    pub(crate) fn array(&mut self, len: usize) {
        self.sized(len, Some((0x90, 15)), [0, 0xdc, 0xdd]);
    }

    pub(crate) fn map(&mut self, len: usize) {
        self.sized(len, Some((0x80, 15)), [0, 0xde, 0xdf]);
    }

    pub(crate) fn raw(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
}
