//! Sans-IO CultNet write receipts.
//!
//! * [`frames`]: the codec of `cultnet.hello.v0`, `cultnet.document_put.v0`,
//!   `cultnet.document_delete.v0`, `cultnet.error.v0`, `cultnet.error.v1` and
//!   `cultnet.write_admitted.v0`: MessagePack maps with camelCase keys, closed schemas, repeated
//!   keys refused, canonical (shortest-form) encoding.
//!   An error's `code` is an [`ErrorCode`]: the codes the seed names (`write_not_authorized`,
//!   `message_invalid`, `unowned_schema`, `unsupported_schema_version`, `limit_reached`) decode
//!   to their variants; any other non-empty code is kept verbatim as [`ErrorCode::Other`] and
//!   still refuses the write it names, because the seed's list of codes ends in an ellipsis
//!   (the closed set has members it does not name). An empty code, and `limit_reached` in an
//!   error.v0, are typed violations.
//! * [`framing`]: the direct-pipe framing, a 4-byte big-endian length before each frame, with a
//!   maximum frame size.
//! * [`message_id`]: the write_admitted messageId rule and the blank test, on Unicode 16.0
//!   tables embedded in the crate.
//! * [`hash`]: the content hash of a write.
//! * [`tracker`]: the [`WriteTracker`], which settles every write exactly once as admitted,
//!   refused or unconfirmed.
//!
//! Bytes and times go in, frames and outcomes come out: the crate opens nothing, reads no clock
//! and draws no randomness.

pub mod frames;
pub mod framing;
pub mod hash;
pub mod message_id;
mod msgpack;
pub mod tracker;
mod unicode_tables;

pub use frames::{decode, encode, ErrorCode, Frame};
pub use tracker::{Outcome, WriteHandle, WriteTracker};

/// A frame that cannot be read: a protocol violation of the peer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes end inside a value.
    #[error("the frame ends inside a value")]
    Truncated,
    /// Bytes follow the frame's map.
    #[error("bytes follow the frame's map")]
    TrailingBytes,
    /// The reserved byte 0xc1.
    #[error("the reserved MessagePack byte 0xc1")]
    ReservedByte,
    /// A string is not valid UTF-8 (this includes an encoded lone surrogate).
    #[error("a string is not valid UTF-8")]
    InvalidUtf8,
    /// Maps or arrays nested too deep.
    #[error("values nested too deep")]
    TooDeep,
    /// The frame (or a nested record) is not a map.
    #[error("the frame is not a map")]
    NotAMap,
    /// A map key is not a string.
    #[error("a map key is not a string")]
    KeyNotAString,
    /// A `schemaVersion` this codec does not know.
    #[error("unknown schemaVersion {0:?}")]
    UnknownSchemaVersion(String),
    /// A key the frame's closed schema does not have.
    #[error("unknown key {0:?}")]
    UnknownKey(String),
    /// A key appears twice in one map.
    #[error("key {0:?} appears more than once")]
    DuplicateKey(&'static str),
    /// A required key is missing.
    #[error("required key {0:?} is missing")]
    MissingKey(&'static str),
    /// A key holds a value of the wrong type.
    #[error("key {0:?} has the wrong type")]
    WrongType(&'static str),
    /// A key that must not be empty is.
    #[error("key {0:?} is empty")]
    Empty(&'static str),
    /// A write_admitted messageId without a letter or number, or with a default-ignorable code
    /// point.
    #[error("the write_admitted messageId is not a valid id")]
    InvalidMessageId,
    /// A write_admitted operation other than `put` or `delete`.
    #[error("the operation is neither put nor delete")]
    InvalidOperation,
    /// An error code the frame's version does not have (`limit_reached` in error.v0).
    #[error("code {0:?} does not exist in this error version")]
    CodeNotInVersion(&'static str),
}

/// A frame the application asked for that the codec will not write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A raw value is not exactly one well-formed MessagePack value.
    #[error("the bytes are not exactly one MessagePack value")]
    NotOneValue,
    /// A field that must not be empty is.
    #[error("a required field is empty")]
    EmptyField,
    /// A write_admitted messageId that the id rule refuses.
    #[error("the messageId is not a valid write_admitted id")]
    InvalidMessageId,
    /// `limit_reached` in an error.v0.
    #[error("limit_reached exists only in error.v1")]
    CodeNotInVersion,
}

/// A framing failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    /// A frame longer than the maximum (declared by a peer, or asked for by the application).
    #[error("a frame of {len} bytes exceeds the maximum of {max}")]
    FrameTooLarge {
        /// The frame's length.
        len: u64,
        /// The maximum.
        max: usize,
    },
    /// The stream already failed.
    #[error("the stream already failed")]
    Failed,
}

/// A request the tracker refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrackerError {
    /// The writes in flight already reach the count bound.
    #[error("too many writes in flight")]
    TooManyInFlight,
    /// The writes in flight would exceed the byte bound.
    #[error("too many bytes in flight")]
    TooManyBytesInFlight,
    /// The handle names no write the tracker keeps.
    #[error("no such write")]
    UnknownWrite,
    /// The write was already sent (or settled).
    #[error("the write was already sent")]
    AlreadySent,
    /// A resend whose content differs from the write's (an id is never reused for other
    /// content).
    #[error("a resend must carry the write's content")]
    ContentChanged,
    /// A resend of a write of an earlier session (or after the session ended): a resend across
    /// a reconnect is a new write.
    #[error("the write belongs to an earlier session")]
    OtherSession,
    /// A resend of a write that is not unconfirmed, or that got a late answer.
    #[error("only an unconfirmed write with no late answer may be resent")]
    NotResendable,
    /// A resend on a session whose server did not say it keeps the receipt rules: only a
    /// receipt server answers a resend from its table instead of applying it again.
    #[error("a resend is safe only against a receipt server")]
    NotReceiptServer,
}
