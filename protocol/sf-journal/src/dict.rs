//! The symbol dictionary `.symbol-dict` (SF-D6): `SYD1`, version 1, three zero bytes, then one
//! chunk per frame that brought new symbols:
//! `[varint count][varint bytes][entries: (varint len, UTF-8)...][u32 crc32c]`, the checksum
//! covering both varints and the entries. Ids are dense from 0 in file order.
//!
//! Frames on disk hold symbol ids, not strings (SF-39): the seed also says frames carry the
//! whole dictionary from id 0, but the reference client and its captured files delta-encode,
//! so this dictionary is needed to replay them.

use std::collections::BTreeMap;

use crate::ops::FileOp;
use crate::segment::u32_at;

/// `SYD1` read as a little-endian `u32`.
pub const DICT_MAGIC: u32 = 0x3144_5953;
/// The dictionary version.
pub const DICT_VERSION: u8 = 1;
/// Length of the dictionary header.
pub const DICT_HEADER_LEN: usize = 8;

/// The 8 header bytes of a dictionary file.
#[must_use]
pub fn dict_header() -> [u8; DICT_HEADER_LEN] {
    let mut b = [0u8; DICT_HEADER_LEN];
    b[0..4].copy_from_slice(&DICT_MAGIC.to_le_bytes());
    b[4] = DICT_VERSION;
    b
}

/// Why a dictionary file's header is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DictError {
    /// Fewer bytes than a header.
    #[error("dictionary of {len} bytes is shorter than its 8-byte header")]
    Short {
        /// The file's length.
        len: usize,
    },
    /// Wrong magic, version or non-zero reserved bytes.
    #[error("dictionary header is not SYD1 version 1")]
    BadHeader,
    /// A chunk inside the file is corrupt and a valid chunk follows it: not a torn tail, so
    /// cutting there would lose the symbols after it (SF-38).
    #[error("dictionary chunk at offset {offset} is corrupt and a valid chunk follows it")]
    CorruptChunk {
        /// Offset of the corrupt chunk.
        offset: u64,
    },
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `*pos`, at most 10 bytes, advancing `*pos`.
fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let byte = *b.get(*pos)?;
        *pos += 1;
        let bits = u64::from(byte & 0x7f);
        if i == 9 && bits > 1 {
            return None;
        }
        v |= bits << (7 * i);
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// One chunk's bytes for `symbols`.
#[must_use]
pub fn encode_chunk<S: AsRef<str>>(symbols: &[S]) -> Vec<u8> {
    let mut entries = Vec::new();
    for s in symbols {
        put_varint(&mut entries, s.as_ref().len() as u64);
        entries.extend_from_slice(s.as_ref().as_bytes());
    }
    let mut out = Vec::with_capacity(entries.len() + 12);
    put_varint(&mut out, symbols.len() as u64);
    put_varint(&mut out, entries.len() as u64);
    out.extend_from_slice(&entries);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Where one valid chunk lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSpan {
    /// Offset of the chunk's first byte.
    pub offset: u64,
    /// Length of the chunk, checksum included.
    pub len: u64,
    /// The id of its first symbol.
    pub first_id: u32,
    /// How many symbols it adds.
    pub count: u32,
}

/// What a read of the dictionary found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictScan {
    /// The symbols of the valid chunks; a symbol's id is its index.
    pub symbols: Vec<String>,
    /// The valid chunks in order.
    pub chunks: Vec<ChunkSpan>,
    /// Length of the valid prefix: the header and the valid chunks.
    pub valid_len: u64,
    /// Bytes after the valid prefix (a torn trailing chunk), dropped by truncation.
    pub dropped_bytes: u64,
}

/// Where the chunk at `start` ends by its own length varints, if they read and the chunk
/// lies wholly inside `b` (its checksum is not checked).
fn declared_end(b: &[u8], start: usize) -> Option<usize> {
    let mut pos = start;
    let _count = get_varint(b, &mut pos)?;
    let nbytes = usize::try_from(get_varint(b, &mut pos)?).ok()?;
    let end = pos.checked_add(nbytes)?.checked_add(4)?;
    (end <= b.len()).then_some(end)
}

/// Parses one chunk at `pos`; `None` if it is torn or corrupt.
fn parse_chunk(b: &[u8], start: usize) -> Option<(Vec<String>, usize)> {
    let mut pos = start;
    let count = get_varint(b, &mut pos)?;
    let nbytes = usize::try_from(get_varint(b, &mut pos)?).ok()?;
    let entries_at = pos;
    let entries_end = entries_at.checked_add(nbytes)?;
    let crc_end = entries_end.checked_add(4)?;
    if crc_end > b.len() {
        return None;
    }
    if crc32c::crc32c(&b[start..entries_end]) != u32_at(b, entries_end) {
        return None;
    }
    let mut symbols = Vec::new();
    let entries = &b[..entries_end];
    for _ in 0..count {
        let len = usize::try_from(get_varint(entries, &mut pos)?).ok()?;
        let end = pos.checked_add(len)?;
        let s = std::str::from_utf8(entries.get(pos..end)?).ok()?;
        symbols.push(s.to_owned());
        pos = end;
    }
    (pos == entries_end).then_some((symbols, crc_end))
}

/// Checks the header, then reads chunks forward; the first chunk whose checksum, varints,
/// lengths or UTF-8 are wrong ends the valid prefix, and the rest is dropped (SF-37). When a
/// valid chunk follows the bad one where its lengths say it ends, the damage is inside the
/// file, not a torn tail: [`DictError::CorruptChunk`], and nothing is cut (SF-38).
pub fn scan_dict(bytes: &[u8]) -> Result<DictScan, DictError> {
    if bytes.len() < DICT_HEADER_LEN {
        return Err(DictError::Short { len: bytes.len() });
    }
    if bytes[..DICT_HEADER_LEN] != dict_header() {
        return Err(DictError::BadHeader);
    }
    let mut symbols = Vec::new();
    let mut chunks = Vec::new();
    let mut pos = DICT_HEADER_LEN;
    while pos < bytes.len() {
        let Some((new, end)) = parse_chunk(bytes, pos) else {
            if let Some(next) = declared_end(bytes, pos).filter(|&n| n < bytes.len()) {
                if parse_chunk(bytes, next).is_some() {
                    return Err(DictError::CorruptChunk { offset: pos as u64 });
                }
            }
            break;
        };
        chunks.push(ChunkSpan {
            offset: pos as u64,
            len: (end - pos) as u64,
            first_id: symbols.len() as u32,
            count: new.len() as u32,
        });
        symbols.extend(new);
        pos = end;
    }
    Ok(DictScan {
        symbols,
        chunks,
        valid_len: pos as u64,
        dropped_bytes: (bytes.len() - pos) as u64,
    })
}

/// The symbol dictionary of a slot: assigns dense ids and says what to append to the file.
#[derive(Debug, Clone, Default)]
pub struct SymbolDict {
    symbols: Vec<String>,
    ids: BTreeMap<String, u32>,
    file_len: u64,
}

impl SymbolDict {
    /// An empty dictionary whose file does not exist yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The dictionary recovered from a scan (its file truncated to the valid prefix).
    #[must_use]
    pub fn from_scan(scan: &DictScan) -> Self {
        let mut d = Self::new();
        for s in &scan.symbols {
            let id = d.symbols.len() as u32;
            d.ids.entry(s.clone()).or_insert(id);
            d.symbols.push(s.clone());
        }
        d.file_len = scan.valid_len;
        d
    }

    /// The symbols by id.
    #[must_use]
    pub fn symbols(&self) -> &[String] {
        &self.symbols
    }

    /// The id of a known symbol.
    #[must_use]
    pub fn id(&self, symbol: &str) -> Option<u32> {
        self.ids.get(symbol).copied()
    }

    /// Assigns ids to `symbols` (known ones keep theirs) and returns them with the writes that
    /// append one chunk of the new ones (the header first when the file is new). The writes
    /// must reach the file before the frame using these ids is published (SF-35).
    pub fn intern<S: AsRef<str>>(&mut self, symbols: &[S]) -> (Vec<u32>, Vec<FileOp>) {
        let mut ids = Vec::with_capacity(symbols.len());
        let mut fresh: Vec<&str> = Vec::new();
        for s in symbols {
            let s = s.as_ref();
            if let Some(id) = self.id(s) {
                ids.push(id);
            } else {
                let id = self.symbols.len() as u32;
                self.ids.insert(s.to_owned(), id);
                self.symbols.push(s.to_owned());
                fresh.push(s);
                ids.push(id);
            }
        }
        let mut ops = Vec::new();
        if !fresh.is_empty() {
            if self.file_len == 0 {
                ops.push(FileOp::Write {
                    file: crate::slot::SYMBOL_DICT.to_owned(),
                    offset: 0,
                    bytes: dict_header().to_vec(),
                });
                self.file_len = DICT_HEADER_LEN as u64;
            }
            let chunk = encode_chunk(&fresh);
            ops.push(FileOp::Write {
                file: crate::slot::SYMBOL_DICT.to_owned(),
                offset: self.file_len,
                bytes: chunk.clone(),
            });
            self.file_len += chunk.len() as u64;
        }
        (ids, ops)
    }
}
