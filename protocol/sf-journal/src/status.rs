//! Server status frames of the QWP WebSocket acknowledgement protocol (SF-W4 to SF-W7), and
//! the error categories (SF-44). The body of client frames stays opaque; only what the server
//! sends back is read here. Every malformed frame is a typed [`StatusError`], never a panic.

use crate::segment::u32_at;

/// Largest inbound frame accepted (SF-W8).
pub const MAX_INBOUND_FRAME: usize = 256 << 20;
/// Longest error message accepted, in bytes.
pub const MAX_ERROR_MESSAGE: usize = 1024;

/// Status byte of an OK.
pub const STATUS_OK: u8 = 0x00;
/// Status byte of a durable acknowledgement.
pub const STATUS_DURABLE_ACK: u8 = 0x02;
/// Status byte of a schema mismatch.
pub const STATUS_SCHEMA_MISMATCH: u8 = 0x03;
/// Status byte of a parse error.
pub const STATUS_PARSE_ERROR: u8 = 0x05;
/// Status byte of an internal error.
pub const STATUS_INTERNAL_ERROR: u8 = 0x06;
/// Status byte of a security error.
pub const STATUS_SECURITY_ERROR: u8 = 0x08;
/// Status byte of a write error.
pub const STATUS_WRITE_ERROR: u8 = 0x09;
/// Status byte of a server that does not take writes.
pub const STATUS_NOT_WRITABLE: u8 = 0x0C;

/// The error statuses a server may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorStatus {
    /// The frame's schema does not match the table.
    SchemaMismatch,
    /// The payload is malformed.
    ParseError,
    /// An unexpected failure on the server.
    InternalError,
    /// Authentication or authorisation failed.
    SecurityError,
    /// A write failed (for example a temporary storage problem).
    WriteError,
    /// This server does not take writes now (for example a replica).
    NotWritable,
}

/// What the sender does after an error (SF-44).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Category {
    /// Reconnect and replay.
    Retriable,
    /// Stop the sender; in SF mode the rejected bytes stay in the journal.
    Terminal,
}

impl ErrorStatus {
    /// The status byte.
    #[must_use]
    pub fn byte(self) -> u8 {
        match self {
            ErrorStatus::SchemaMismatch => STATUS_SCHEMA_MISMATCH,
            ErrorStatus::ParseError => STATUS_PARSE_ERROR,
            ErrorStatus::InternalError => STATUS_INTERNAL_ERROR,
            ErrorStatus::SecurityError => STATUS_SECURITY_ERROR,
            ErrorStatus::WriteError => STATUS_WRITE_ERROR,
            ErrorStatus::NotWritable => STATUS_NOT_WRITABLE,
        }
    }

    fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            STATUS_SCHEMA_MISMATCH => ErrorStatus::SchemaMismatch,
            STATUS_PARSE_ERROR => ErrorStatus::ParseError,
            STATUS_INTERNAL_ERROR => ErrorStatus::InternalError,
            STATUS_SECURITY_ERROR => ErrorStatus::SecurityError,
            STATUS_WRITE_ERROR => ErrorStatus::WriteError,
            STATUS_NOT_WRITABLE => ErrorStatus::NotWritable,
            _ => return None,
        })
    }

    /// The default category: schema mismatch, parse and security errors end the sender; write
    /// and internal errors are retried. The rules name no category for `NOT_WRITABLE`; it is
    /// retried here, as a server that takes no writes now may take them after a reconnect.
    #[must_use]
    pub fn category(self) -> Category {
        match self {
            ErrorStatus::SchemaMismatch | ErrorStatus::ParseError | ErrorStatus::SecurityError => {
                Category::Terminal
            }
            ErrorStatus::InternalError | ErrorStatus::WriteError | ErrorStatus::NotWritable => {
                Category::Retriable
            }
        }
    }
}

/// A server status frame.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// `[0x00][u64 wireSeq][u16 n]` then n table entries.
    Ok {
        /// The highest wire sequence acknowledged.
        wire_seq: u64,
        /// Each table with its seqTxn.
        tables: Vec<(String, i64)>,
    },
    /// `[0x02][u16 n]` then n table entries.
    DurableAck {
        /// Each table with its durable seqTxn.
        tables: Vec<(String, i64)>,
    },
    /// `[status][u64 wireSeq][u16 len][message]`.
    Error {
        /// Which error.
        status: ErrorStatus,
        /// The wire sequence it concerns.
        wire_seq: u64,
        /// The server's message.
        message: String,
    },
}

/// Why a server frame is a protocol violation (terminal, SF-44).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatusError {
    /// An empty frame.
    #[error("empty status frame")]
    Empty,
    /// Larger than [`MAX_INBOUND_FRAME`].
    #[error("status frame of {len} bytes exceeds the inbound cap")]
    TooLarge {
        /// The frame's length.
        len: usize,
    },
    /// A status byte no server sends.
    #[error("unknown status {0:#04x}")]
    UnknownStatus(u8),
    /// The frame ends inside a field.
    #[error("status frame truncated")]
    Truncated,
    /// Bytes after the last field.
    #[error("{0} bytes after the end of the status frame")]
    TrailingBytes(usize),
    /// A table entry with an empty name.
    #[error("empty table name")]
    EmptyTableName,
    /// A table name or message that is not UTF-8.
    #[error("text is not UTF-8")]
    NotUtf8,
    /// An error message longer than [`MAX_ERROR_MESSAGE`].
    #[error("error message of {0} bytes exceeds 1024")]
    MessageTooLong(usize),
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], StatusError> {
        let end = self.at.checked_add(n).ok_or(StatusError::Truncated)?;
        let s = self.b.get(self.at..end).ok_or(StatusError::Truncated)?;
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, StatusError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("two bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, StatusError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("eight bytes"),
        ))
    }
    fn text(&mut self, n: usize) -> Result<String, StatusError> {
        let b = self.take(n)?;
        std::str::from_utf8(b)
            .map(str::to_owned)
            .map_err(|_| StatusError::NotUtf8)
    }
    fn tables(&mut self) -> Result<Vec<(String, i64)>, StatusError> {
        let n = self.u16()?;
        let mut out = Vec::new();
        for _ in 0..n {
            let len = usize::from(self.u16()?);
            if len == 0 {
                return Err(StatusError::EmptyTableName);
            }
            let name = self.text(len)?;
            let txn = self.u64()? as i64;
            out.push((name, txn));
        }
        Ok(out)
    }
    fn end(&self) -> Result<(), StatusError> {
        match self.b.len() - self.at {
            0 => Ok(()),
            n => Err(StatusError::TrailingBytes(n)),
        }
    }
}

/// Reads one binary frame from the server.
pub fn decode_status(frame: &[u8]) -> Result<Status, StatusError> {
    if frame.len() > MAX_INBOUND_FRAME {
        return Err(StatusError::TooLarge { len: frame.len() });
    }
    let (&first, _) = frame.split_first().ok_or(StatusError::Empty)?;
    let mut r = Reader { b: frame, at: 1 };
    let status = match first {
        STATUS_OK => {
            let wire_seq = r.u64()?;
            let tables = r.tables()?;
            Status::Ok { wire_seq, tables }
        }
        STATUS_DURABLE_ACK => Status::DurableAck {
            tables: r.tables()?,
        },
        b => {
            let status = ErrorStatus::from_byte(b).ok_or(StatusError::UnknownStatus(b))?;
            let wire_seq = r.u64()?;
            let len = usize::from(r.u16()?);
            if len > MAX_ERROR_MESSAGE {
                return Err(StatusError::MessageTooLong(len));
            }
            Status::Error {
                status,
                wire_seq,
                message: r.text(len)?,
            }
        }
    };
    r.end()?;
    Ok(status)
}

fn put_tables(out: &mut Vec<u8>, tables: &[(String, i64)]) {
    out.extend_from_slice(&(tables.len() as u16).to_le_bytes());
    for (name, txn) in tables {
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&txn.to_le_bytes());
    }
}

/// Writes a status frame (what a server sends; for test servers). Names longer than 65535
/// bytes, more than 65535 tables or messages longer than 1024 bytes are cut to fit.
#[must_use]
pub fn encode_status(status: &Status) -> Vec<u8> {
    let fit = |t: &[(String, i64)]| -> Vec<(String, i64)> {
        t.iter()
            .take(usize::from(u16::MAX))
            .map(|(n, x)| (cut(n, usize::from(u16::MAX)), *x))
            .collect()
    };
    let mut out = Vec::new();
    match status {
        Status::Ok { wire_seq, tables } => {
            out.push(STATUS_OK);
            out.extend_from_slice(&wire_seq.to_le_bytes());
            put_tables(&mut out, &fit(tables));
        }
        Status::DurableAck { tables } => {
            out.push(STATUS_DURABLE_ACK);
            put_tables(&mut out, &fit(tables));
        }
        Status::Error {
            status,
            wire_seq,
            message,
        } => {
            out.push(status.byte());
            out.extend_from_slice(&wire_seq.to_le_bytes());
            let m = cut(message, MAX_ERROR_MESSAGE);
            out.extend_from_slice(&(m.len() as u16).to_le_bytes());
            out.extend_from_slice(m.as_bytes());
        }
    }
    out
}

/// `s` cut to at most `max` bytes on a character boundary.
fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// Whether a client frame begins with the QWP magic `QWP1` (SF-W9); its body stays opaque.
#[must_use]
pub fn is_qwp_frame(frame: &[u8]) -> bool {
    frame.len() >= 4 && u32_at(frame, 0) == u32::from_le_bytes(*b"QWP1")
}
