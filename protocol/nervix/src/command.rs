//! Execution references (E-1) and what a command keeps until its outcome is known (E-2).

use crate::rng::Rng;
use crate::time::UnixMillis;
use std::fmt;
use std::sync::Arc;

/// The longest execution reference, in bytes.
pub const MAX_REFERENCE_LEN: usize = 128;

/// The durable identity of one logical command: 1 to 128 bytes of ASCII letters, digits, `-`,
/// `_` and `.` (E-1). Every repetition of the command carries the same reference. The text is
/// shared: a copy (a report of the command's outcome, a command kept for recovery) costs no
/// allocation.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExecutionReference(Arc<str>);

/// Why a string is not an acceptable execution reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// An empty reference.
    #[error("an execution reference is 1 to 128 bytes; this one is empty")]
    Empty,
    /// A reference longer than 128 bytes.
    #[error("an execution reference is 1 to 128 bytes; this one has {len}")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// A byte outside letters, digits, `-`, `_` and `.`.
    #[error("byte {byte:#04x} at {at} is not a letter, digit, '-', '_' or '.'")]
    InvalidByte {
        /// Its position.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// A command that can persist or join a transaction needs a UUIDv7 reference.
    #[error("a command that can persist needs a UUIDv7 reference")]
    NotUuidV7,
    /// The UUIDv7's timestamp is not the client's current time.
    #[error("the reference's UUIDv7 time is {skew_ms} ms away from the current time")]
    NotCurrent {
        /// How far it is from now.
        skew_ms: u64,
    },
}

impl ExecutionReference {
    /// Checks `s` against the alphabet and length of E-1.
    pub fn parse(s: &str) -> Result<Self, ReferenceError> {
        if s.is_empty() {
            return Err(ReferenceError::Empty);
        }
        if s.len() > MAX_REFERENCE_LEN {
            return Err(ReferenceError::TooLong { len: s.len() });
        }
        if let Some((at, &byte)) = s
            .as_bytes()
            .iter()
            .enumerate()
            .find(|(_, b)| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')))
        {
            return Err(ReferenceError::InvalidByte { at, byte });
        }
        Ok(Self(s.into()))
    }

    /// A new UUIDv7 reference whose timestamp is `now` (the client's wall clock) and whose
    /// random bits come from the client's seeded generator.
    pub fn new_v7(now: UnixMillis, rng: &mut Rng) -> Self {
        let mut random = [0u8; 10];
        rng.fill(&mut random);
        let uuid = uuid::Builder::from_unix_timestamp_millis(now.0, &random).into_uuid();
        let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
        Self(Arc::from(&*uuid.hyphenated().encode_lower(&mut text)))
    }

    /// The UUIDv7 timestamp, when the reference is a UUIDv7.
    pub fn uuid_v7_millis(&self) -> Option<u64> {
        let uuid = uuid::Uuid::try_parse(&self.0).ok()?;
        if uuid.get_version_num() != 7 || self.0.len() != 36 {
            return None;
        }
        let b = uuid.as_bytes();
        Some(u64::from_be_bytes([
            0, 0, b[0], b[1], b[2], b[3], b[4], b[5],
        ]))
    }

    /// Checks that a reference chosen by the application may carry a command that can persist
    /// or join a transaction: it is a UUIDv7 whose time is within `tolerance_ms` of `now`.
    pub fn check_persistent(
        &self,
        now: UnixMillis,
        tolerance_ms: u64,
    ) -> Result<(), ReferenceError> {
        let t = self.uuid_v7_millis().ok_or(ReferenceError::NotUuidV7)?;
        let skew_ms = t.abs_diff(now.0);
        if skew_ms > tolerance_ms {
            return Err(ReferenceError::NotCurrent { skew_ms });
        }
        Ok(())
    }

    /// The reference as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ExecutionReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExecutionReference({})", self.0)
    }
}

impl fmt::Display for ExecutionReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
