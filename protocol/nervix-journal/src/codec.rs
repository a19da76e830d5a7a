//! The bytes of one journal record, the payload of one ring frame.
//!
//! Every record starts with a version byte (1), a kind byte and the key (8 bytes, little
//! endian). A `Put` goes on with a handed flag, an entry tag and the entry's fields. Strings
//! and byte strings are a 4-byte little-endian length and the bytes; an optional field is a
//! byte 0 (absent) or 1 followed by the value; numbers are 8 bytes little endian. A record must
//! be consumed exactly: bytes left over are an error, as is a length running past the end.

use bytes::Bytes;
use nervix_protocol::command::{ExecutionReference, ReferenceError};
use nervix_protocol::schema::{FingerprintT, TransactionPreviewIdentityT};
use nervix_protocol::time::UnixMillis;

use crate::record::{BatchRecord, CommandRecord, Entry, JournalKey, TransferKind, TransferRecord};

const VERSION: u8 = 1;
const KIND_PUT: u8 = 1;
const KIND_HANDED: u8 = 2;
const KIND_END: u8 = 3;
const ENTRY_COMMAND: u8 = 1;
const ENTRY_TRANSFER: u8 = 2;
const ENTRY_BATCH: u8 = 3;
const ENTRY_HELD_COMMAND: u8 = 4;
const TRANSFER_UPLOAD: u8 = 1;
const TRANSFER_RESTORE: u8 = 2;

/// One record of the journal's log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Record {
    /// An entry kept under `key`; a later `Put` of the same key replaces it (a copy forward).
    Put {
        /// The key.
        key: JournalKey,
        /// Whether the entry was already handed to the transport when this copy was written.
        handed: bool,
        /// The entry.
        entry: Entry,
    },
    /// The entry of `key` was handed to the transport.
    Handed {
        /// The key.
        key: JournalKey,
    },
    /// The entry of `key` is done with and no longer live.
    End {
        /// The key.
        key: JournalKey,
    },
}

impl Record {
    /// The key the record names.
    #[must_use]
    pub fn key(&self) -> JournalKey {
        match self {
            Record::Put { key, .. } | Record::Handed { key } | Record::End { key } => *key,
        }
    }
}

/// Why the payload of a frame (which passed its CRC) is not a journal record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The record ends before a field it announces.
    #[error("record cut at byte {at}: {need} more bytes announced")]
    Truncated {
        /// Where the field starts.
        at: usize,
        /// How many bytes it needs.
        need: usize,
    },
    /// Bytes follow the last field.
    #[error("{len} bytes left over after the record, at byte {at}")]
    Trailing {
        /// Where they start.
        at: usize,
        /// How many there are.
        len: usize,
    },
    /// A record version this code does not know.
    #[error("record version {0} is not known")]
    Version(u8),
    /// A record kind this code does not know.
    #[error("record kind {0} is not known")]
    Kind(u8),
    /// An entry tag this code does not know.
    #[error("entry tag {0} is not known")]
    EntryTag(u8),
    /// A transfer kind this code does not know.
    #[error("transfer kind {0} is not known")]
    TransferKind(u8),
    /// A flag or presence byte that is neither 0 nor 1.
    #[error("byte {byte} at {at} is not a flag (0 or 1)")]
    Flag {
        /// Where it is.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// A text field that is not UTF-8.
    #[error("text at byte {at} is not UTF-8")]
    Utf8 {
        /// Where the text starts.
        at: usize,
    },
    /// A command's reference that is not an execution reference.
    #[error("command reference: {0}")]
    Reference(ReferenceError),
}

/// The bytes of `record`; `None` when a field is longer than a length prefix can say
/// (4 GiB).
#[must_use]
pub fn encode_record(record: &Record) -> Option<Vec<u8>> {
    let mut w = Writer(Vec::with_capacity(record_len_hint(record)));
    record_into(&mut w, record)?;
    Some(w.0)
}

/// Bytes left free at the front of a [`framed`] record: the frame's length field goes there,
/// so the buffer becomes the frame's body write as it is.
pub(crate) const FRAME_ROOM: usize = 4;

/// Bytes of room left after a [`framed`] record: a segment reused with old frames in it has
/// its frame's body write carry that many zero bytes after the payload
/// ([`FramePlace::clear_after`](sf_journal::ring::FramePlace::clear_after)), in the same
/// allocation.
pub(crate) const TAIL_ROOM: usize = sf_journal::segment::TAIL_PROBE_LEN;

/// [`encode_record`] behind [`FRAME_ROOM`] free bytes, in one allocation of about the
/// record's size (and [`TAIL_ROOM`]).
pub(crate) fn framed(record: &Record) -> Option<Vec<u8>> {
    let mut w = Writer(Vec::with_capacity(
        FRAME_ROOM + record_len_hint(record) + TAIL_ROOM,
    ));
    w.0.resize(FRAME_ROOM, 0);
    record_into(&mut w, record)?;
    Some(w.0)
}

/// [`framed`] of a `Put` record, from a borrowed entry.
pub(crate) fn framed_put(key: JournalKey, handed: bool, entry: &Entry) -> Option<Vec<u8>> {
    let mut w = Writer(Vec::with_capacity(
        FRAME_ROOM + put_len_hint(entry) + TAIL_ROOM,
    ));
    w.0.resize(FRAME_ROOM, 0);
    put_into(&mut w, key, handed, entry)?;
    Some(w.0)
}

/// A `Put` record of a batch in three parts, so its batch is written from the bytes it shares
/// with the batch's owner instead of a copy: the record up to the batch's length prefix
/// behind [`FRAME_ROOM`] free bytes, the batch, and the record's last field. Their
/// concatenation after the free bytes is the record [`framed_put`] encodes.
pub(crate) struct BatchParts {
    /// [`FRAME_ROOM`] free bytes, then the record up to and with the batch's length prefix.
    pub head: Vec<u8>,
    /// The batch.
    pub batch: Bytes,
    /// The record after the batch.
    pub tail: [u8; 8],
}

impl BatchParts {
    /// The record's length.
    pub fn len(&self) -> usize {
        self.head.len() - FRAME_ROOM + self.batch.len() + self.tail.len()
    }
}

/// [`framed_put`] of a batch, in parts; `None` for another entry or a field too long.
pub(crate) fn put_batch_parts(key: JournalKey, handed: bool, entry: &Entry) -> Option<BatchParts> {
    let Entry::Batch(b) = entry else {
        return None;
    };
    let mut w = Writer(Vec::with_capacity(
        FRAME_ROOM + FIXED_HINT + b.domain.len() + b.ingestor.len(),
    ));
    w.0.resize(FRAME_ROOM, 0);
    w.u8(VERSION);
    w.u8(KIND_PUT);
    w.u64(key.0);
    w.u8(u8::from(handed));
    w.u8(ENTRY_BATCH);
    w.str(&b.domain)?;
    w.str(&b.ingestor)?;
    let len = u32::try_from(b.batch.len()).ok()?;
    w.0.extend_from_slice(&len.to_le_bytes());
    Some(BatchParts {
        head: w.0,
        batch: b.batch.clone(),
        tail: b.created_wall.0.to_le_bytes(),
    })
}

fn record_into(w: &mut Writer, record: &Record) -> Option<()> {
    match record {
        Record::Put { key, handed, entry } => return put_into(w, *key, *handed, entry),
        Record::Handed { key } => {
            w.u8(VERSION);
            w.u8(KIND_HANDED);
            w.u64(key.0);
        }
        Record::End { key } => {
            w.u8(VERSION);
            w.u8(KIND_END);
            w.u64(key.0);
        }
    }
    Some(())
}

fn put_into(w: &mut Writer, key: JournalKey, handed: bool, entry: &Entry) -> Option<()> {
    w.u8(VERSION);
    w.u8(KIND_PUT);
    w.u64(key.0);
    w.u8(u8::from(handed));
    entry_into(w, entry)
}

/// At least the bytes of a record's fixed fields and tags (a command's, the most, are 39).
const FIXED_HINT: usize = 64;

fn record_len_hint(record: &Record) -> usize {
    match record {
        Record::Put { entry, .. } => put_len_hint(entry),
        Record::Handed { .. } | Record::End { .. } => FIXED_HINT,
    }
}

/// About the length of a `Put` record of `entry` and never less, so the buffer it is encoded
/// into is allocated once: its fixed fields, and each variable field with its length prefix.
fn put_len_hint(entry: &Entry) -> usize {
    let var = |b: &[u8]| 4 + b.len();
    FIXED_HINT
        + match entry {
            Entry::Command(c) | Entry::HeldCommand(c) => {
                var(c.reference.as_str().as_bytes())
                    + var(c.query.as_bytes())
                    + c.domain.as_deref().map_or(0, |d| var(d.as_bytes()))
                    + c.preview.as_ref().map_or(0, |p| {
                        var(p.transaction_id.as_bytes()) + var(&p.planning_basis.bytes)
                    })
            }
            Entry::Transfer(t) => {
                let kind = match &t.kind {
                    TransferKind::Upload { domain, resource } => {
                        var(domain.as_bytes()) + var(resource.as_bytes())
                    }
                    TransferKind::Restore { statement } => var(statement.as_bytes()),
                };
                kind + var(t.reference.as_bytes()) + var(t.archive.as_bytes()) + t.digest.len()
            }
            Entry::Batch(b) => {
                var(b.domain.as_bytes()) + var(b.ingestor.as_bytes()) + var(&b.batch)
            }
        }
}

fn entry_into(w: &mut Writer, entry: &Entry) -> Option<()> {
    match entry {
        Entry::Command(c) | Entry::HeldCommand(c) => {
            w.u8(if matches!(entry, Entry::HeldCommand(_)) {
                ENTRY_HELD_COMMAND
            } else {
                ENTRY_COMMAND
            });
            w.str(c.reference.as_str())?;
            w.str(&c.query)?;
            w.opt(c.domain.as_ref(), |w, d| w.str(d))?;
            w.opt(c.position.as_ref(), |w, p| {
                w.u64(*p);
                Some(())
            })?;
            w.opt(c.preview.as_ref(), |w, p| {
                w.str(&p.transaction_id)?;
                w.u64(p.position);
                w.bytes(&p.planning_basis.bytes)
            })?;
            w.u64(c.created_wall.0);
        }
        Entry::Transfer(t) => {
            w.u8(ENTRY_TRANSFER);
            match &t.kind {
                TransferKind::Upload { domain, resource } => {
                    w.u8(TRANSFER_UPLOAD);
                    w.str(domain)?;
                    w.str(resource)?;
                }
                TransferKind::Restore { statement } => {
                    w.u8(TRANSFER_RESTORE);
                    w.str(statement)?;
                }
            }
            w.str(&t.reference)?;
            w.str(&t.archive)?;
            w.u64(t.size);
            w.0.extend_from_slice(&t.digest);
            w.u64(t.created_wall.0);
        }
        Entry::Batch(b) => {
            w.u8(ENTRY_BATCH);
            w.str(&b.domain)?;
            w.str(&b.ingestor)?;
            w.bytes(&b.batch)?;
            w.u64(b.created_wall.0);
        }
    }
    Some(())
}

/// Reads one record from a frame's payload.
pub fn decode_record(bytes: &[u8]) -> Result<Record, DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    let version = r.u8()?;
    if version != VERSION {
        return Err(DecodeError::Version(version));
    }
    let kind = r.u8()?;
    let key = JournalKey(r.u64()?);
    let record = match kind {
        KIND_PUT => {
            let handed = r.flag()?;
            let entry = r.entry()?;
            Record::Put { key, handed, entry }
        }
        KIND_HANDED => Record::Handed { key },
        KIND_END => Record::End { key },
        other => return Err(DecodeError::Kind(other)),
    };
    if r.at != bytes.len() {
        return Err(DecodeError::Trailing {
            at: r.at,
            len: bytes.len() - r.at,
        });
    }
    Ok(record)
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, b: u8) {
        self.0.push(b);
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, b: &[u8]) -> Option<()> {
        let len = u32::try_from(b.len()).ok()?;
        self.0.extend_from_slice(&len.to_le_bytes());
        self.0.extend_from_slice(b);
        Some(())
    }

    fn str(&mut self, s: &str) -> Option<()> {
        self.bytes(s.as_bytes())
    }

    fn opt<T>(&mut self, v: Option<&T>, f: impl FnOnce(&mut Self, &T) -> Option<()>) -> Option<()> {
        match v {
            None => {
                self.u8(0);
                Some(())
            }
            Some(v) => {
                self.u8(1);
                f(self, v)
            }
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let rest = &self.bytes[self.at..];
        if rest.len() < n {
            return Err(DecodeError::Truncated {
                at: self.at,
                need: n,
            });
        }
        self.at += n;
        Ok(&rest[..n])
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }

    fn flag(&mut self) -> Result<bool, DecodeError> {
        let at = self.at;
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            byte => Err(DecodeError::Flag { at, byte }),
        }
    }

    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let mut len = [0u8; 4];
        len.copy_from_slice(self.take(4)?);
        let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
        self.take(len)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let at = self.at;
        let b = self.bytes()?;
        std::str::from_utf8(b)
            .map(str::to_owned)
            .map_err(|_| DecodeError::Utf8 { at })
    }

    fn opt<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        if self.flag()? {
            f(self).map(Some)
        } else {
            Ok(None)
        }
    }

    fn entry(&mut self) -> Result<Entry, DecodeError> {
        match self.u8()? {
            tag @ (ENTRY_COMMAND | ENTRY_HELD_COMMAND) => {
                let reference =
                    ExecutionReference::parse(&self.string()?).map_err(DecodeError::Reference)?;
                let query = self.string()?;
                let domain = self.opt(Self::string)?;
                let position = self.opt(Self::u64)?;
                let preview = self.opt(|r| {
                    let transaction_id = r.string()?;
                    let position = r.u64()?;
                    let bytes = r.bytes()?.to_vec();
                    Ok(TransactionPreviewIdentityT {
                        transaction_id,
                        position,
                        planning_basis: Box::new(FingerprintT { bytes }),
                    })
                })?;
                let created_wall = UnixMillis(self.u64()?);
                let record = CommandRecord {
                    reference,
                    query,
                    domain,
                    position,
                    preview,
                    created_wall,
                };
                Ok(if tag == ENTRY_HELD_COMMAND {
                    Entry::HeldCommand(record)
                } else {
                    Entry::Command(record)
                })
            }
            ENTRY_TRANSFER => {
                let kind = match self.u8()? {
                    TRANSFER_UPLOAD => TransferKind::Upload {
                        domain: self.string()?,
                        resource: self.string()?,
                    },
                    TRANSFER_RESTORE => TransferKind::Restore {
                        statement: self.string()?,
                    },
                    other => return Err(DecodeError::TransferKind(other)),
                };
                let reference = self.string()?;
                let archive = self.string()?;
                let size = self.u64()?;
                let mut digest = [0u8; 32];
                digest.copy_from_slice(self.take(32)?);
                let created_wall = UnixMillis(self.u64()?);
                Ok(Entry::Transfer(TransferRecord {
                    kind,
                    reference,
                    archive,
                    size,
                    digest,
                    created_wall,
                }))
            }
            ENTRY_BATCH => Ok(Entry::Batch(BatchRecord {
                domain: self.string()?,
                ingestor: self.string()?,
                batch: Bytes::copy_from_slice(self.bytes()?),
                created_wall: UnixMillis(self.u64()?),
            })),
            other => Err(DecodeError::EntryTag(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries whose every variable field is long, so a hint that leaves one out, or
    /// multiplies where it adds, is off by far more than its slack.
    fn long_entries() -> Vec<Entry> {
        let text = |c: char| c.to_string().repeat(1000);
        let preview = TransactionPreviewIdentityT {
            transaction_id: text('t'),
            position: 7,
            planning_basis: Box::new(FingerprintT {
                bytes: vec![3; 1000],
            }),
        };
        let command = |domain: Option<String>, preview: Option<TransactionPreviewIdentityT>| {
            Entry::Command(CommandRecord {
                reference: ExecutionReference::parse(&"r".repeat(128)).expect("a reference"),
                query: text('q'),
                domain,
                position: Some(9),
                preview,
                created_wall: UnixMillis(1),
            })
        };
        let transfer = |kind| {
            Entry::Transfer(TransferRecord {
                kind,
                reference: text('f'),
                archive: text('a'),
                size: 5,
                digest: [1; 32],
                created_wall: UnixMillis(2),
            })
        };
        vec![
            command(Some(text('d')), Some(preview)),
            command(None, None),
            match command(Some(text('d')), None) {
                Entry::Command(c) => Entry::HeldCommand(c),
                other => other,
            },
            transfer(TransferKind::Upload {
                domain: text('d'),
                resource: text('s'),
            }),
            transfer(TransferKind::Restore {
                statement: text('s'),
            }),
            Entry::Batch(BatchRecord {
                domain: text('d'),
                ingestor: text('i'),
                batch: Bytes::from(vec![5; 70_000]),
                created_wall: UnixMillis(3),
            }),
        ]
    }

    /// A record's buffer is allocated once, at the hint's size with room for a frame's
    /// cleared tail, and the hint is at most its fixed slack above what is written.
    fn allocated_once(framed: &[u8], capacity: usize, hint: usize) {
        assert_eq!(
            capacity,
            FRAME_ROOM + hint + TAIL_ROOM,
            "grown past its hint"
        );
        assert!(framed.len() + TAIL_ROOM <= capacity);
        assert!(
            capacity - framed.len() - TAIL_ROOM <= FIXED_HINT,
            "{} over",
            capacity - framed.len()
        );
    }

    #[test]
    fn every_record_is_encoded_into_one_allocation_of_about_its_size() {
        for (n, entry) in long_entries().into_iter().enumerate() {
            let f = framed_put(JournalKey(n as u64), true, &entry).expect("encodes");
            allocated_once(&f, f.capacity(), put_len_hint(&entry));
            let unframed = encode_record(&Record::Put {
                key: JournalKey(n as u64),
                handed: true,
                entry,
            })
            .expect("encodes");
            assert_eq!(&f[FRAME_ROOM..], &unframed[..]);
        }
        for record in [
            Record::Handed { key: JournalKey(1) },
            Record::End { key: JournalKey(2) },
        ] {
            let f = framed(&record).expect("encodes");
            allocated_once(&f, f.capacity(), record_len_hint(&record));
            assert_eq!(
                f[..FRAME_ROOM],
                [0; FRAME_ROOM],
                "room for the length, left free"
            );
            assert_eq!(
                &f[FRAME_ROOM..],
                &encode_record(&record).expect("encodes")[..]
            );
        }
    }
}
