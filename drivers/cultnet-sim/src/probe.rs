//! A forgiving look into a frame the codec refused, to find what a refusal must name.
//!
//! The codec refuses a write frame as a whole; a server still has to answer it with the write's
//! id when the id can be read (W-17), and has to tell a missing `document` or `schemaId` from
//! any other defect (W-27). This reader walks the top-level map (and a put's `document` map)
//! without judging anything else.

/// What could be read from a frame the codec refused.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Probe {
    /// The `schemaVersion`, when it is a string and appears once.
    pub schema_version: Option<String>,
    /// The `messageId`, when it is a non-empty string and the key appears exactly once.
    pub message_id: Option<String>,
    /// How many `messageId` keys the top-level map has.
    pub message_id_keys: usize,
    /// A put's `document` is missing or nil.
    pub document_missing: bool,
    /// The write's `schemaId` (in a put's document, or at the top of a delete) is missing or nil.
    pub schema_id_missing: bool,
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

enum Value<'a> {
    Nil,
    Str(&'a [u8]),
    Map(usize),
    Other,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn be(&mut self, n: usize) -> Option<usize> {
        let v = self
            .take(n)?
            .iter()
            .fold(0u64, |a, b| (a << 8) | u64::from(*b));
        usize::try_from(v).ok()
    }

    /// Reads one value's head; strings are read whole, other containers and scalars are skipped
    /// except a map, whose entries stay to be read.
    fn value(&mut self, depth: usize) -> Option<Value<'a>> {
        if depth > 32 {
            return None;
        }
        let b = *self.take(1)?.first()?;
        let skip = |c: &mut Self, n: usize| c.take(n).map(|_| Value::Other);
        match b {
            0x00..=0x7f | 0xe0..=0xff | 0xc2 | 0xc3 => Some(Value::Other),
            0xc0 => Some(Value::Nil),
            0x80..=0x8f => Some(Value::Map(usize::from(b & 0x0f))),
            0xde => Some(Value::Map(self.be(2)?)),
            0xdf => Some(Value::Map(self.be(4)?)),
            0x90..=0x9f => self.skip_items(usize::from(b & 0x0f), depth),
            0xdc => {
                let n = self.be(2)?;
                self.skip_items(n, depth)
            }
            0xdd => {
                let n = self.be(4)?;
                self.skip_items(n, depth)
            }
            0xa0..=0xbf => self.take(usize::from(b & 0x1f)).map(Value::Str),
            0xd9 => {
                let n = self.be(1)?;
                self.take(n).map(Value::Str)
            }
            0xda => {
                let n = self.be(2)?;
                self.take(n).map(Value::Str)
            }
            0xdb => {
                let n = self.be(4)?;
                self.take(n).map(Value::Str)
            }
            0xc4 => {
                let n = self.be(1)?;
                skip(self, n)
            }
            0xc5 => {
                let n = self.be(2)?;
                skip(self, n)
            }
            0xc6 => {
                let n = self.be(4)?;
                skip(self, n)
            }
            0xc7 => {
                let n = self.be(1)?;
                skip(self, n + 1)
            }
            0xc8 => {
                let n = self.be(2)?;
                skip(self, n + 1)
            }
            0xc9 => {
                let n = self.be(4)?;
                skip(self, n.checked_add(1)?)
            }
            0xca => skip(self, 4),
            0xcb => skip(self, 8),
            0xcc | 0xd0 => skip(self, 1),
            0xcd | 0xd1 => skip(self, 2),
            0xce | 0xd2 => skip(self, 4),
            0xcf | 0xd3 => skip(self, 8),
            0xd4 => skip(self, 2),
            0xd5 => skip(self, 3),
            0xd6 => skip(self, 5),
            0xd7 => skip(self, 9),
            0xd8 => skip(self, 17),
            0xc1 => None,
        }
    }

    fn skip_items(&mut self, n: usize, depth: usize) -> Option<Value<'a>> {
        for _ in 0..n {
            self.skip(depth + 1)?;
        }
        Some(Value::Other)
    }

    fn skip(&mut self, depth: usize) -> Option<()> {
        if let Value::Map(n) = self.value(depth)? {
            for _ in 0..n {
                self.skip(depth + 1)?;
                self.skip(depth + 1)?;
            }
        }
        Some(())
    }
}

/// Looks for `schemaId` in a put's document map; `None` when the map does not read.
fn document_has_schema_id(c: &mut Cursor<'_>, n: usize) -> Option<bool> {
    let mut found = false;
    for _ in 0..n {
        let key = match c.value(2)? {
            Value::Str(k) => k,
            _ => return None,
        };
        if key == b"schemaId" {
            match c.value(2)? {
                Value::Nil => {}
                Value::Map(m) => {
                    for _ in 0..m {
                        c.skip(3)?;
                        c.skip(3)?;
                    }
                    found = true;
                }
                _ => found = true,
            }
        } else {
            c.skip(2)?;
        }
    }
    Some(found)
}

/// Reads what it can of a frame. Stops quietly at the first byte it cannot follow; whatever was
/// read before stays.
#[must_use]
pub fn probe(bytes: &[u8]) -> Probe {
    let mut p = Probe::default();
    let mut c = Cursor { buf: bytes, pos: 0 };
    let Some(Value::Map(n)) = c.value(0) else {
        return p;
    };
    let mut versions = 0;
    let mut id: Option<String> = None;
    let mut document: Option<bool> = None; // Some(true): present, not nil.
    let mut doc_schema_id = false;
    let mut top_schema_id = false;
    let mut complete = true;
    for _ in 0..n {
        let Some(Value::Str(key)) = c.value(1) else {
            complete = false;
            break;
        };
        let key = key.to_vec();
        let Some(v) = c.value(1) else {
            complete = false;
            break;
        };
        // Every map but a put's document is skipped whole.
        if let (false, Value::Map(m)) = (key.as_slice() == b"document", &v) {
            if skip_entries(&mut c, *m).is_none() {
                complete = false;
                break;
            }
        }
        match (key.as_slice(), v) {
            (b"schemaVersion", Value::Str(s)) => {
                versions += 1;
                p.schema_version = std::str::from_utf8(s).ok().map(str::to_owned);
            }
            (b"messageId", v) => {
                p.message_id_keys += 1;
                id = match v {
                    Value::Str(s) => std::str::from_utf8(s)
                        .ok()
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                    _ => None,
                };
            }
            (b"document", Value::Nil) => document = Some(false),
            (b"document", Value::Map(m)) => {
                document = Some(true);
                match document_has_schema_id(&mut c, m) {
                    Some(f) => doc_schema_id = f,
                    None => {
                        complete = false;
                        break;
                    }
                }
            }
            (b"document", _) => document = Some(true),
            (b"schemaId", Value::Nil) => {}
            (b"schemaId", _) => top_schema_id = true,
            _ => {}
        }
    }
    if versions != 1 {
        p.schema_version = None;
    }
    if p.message_id_keys == 1 {
        p.message_id = id;
    }
    if complete {
        match p.schema_version.as_deref() {
            Some(cultnet_receipts::frames::DOCUMENT_PUT_V0) => {
                p.document_missing = document != Some(true);
                p.schema_id_missing = document == Some(true) && !doc_schema_id;
            }
            Some(cultnet_receipts::frames::DOCUMENT_DELETE_V0) => {
                p.schema_id_missing = !top_schema_id;
            }
            _ => {}
        }
    }
    p
}

fn skip_entries(c: &mut Cursor<'_>, m: usize) -> Option<()> {
    for _ in 0..m {
        c.skip(2)?;
        c.skip(2)?;
    }
    Some(())
}
