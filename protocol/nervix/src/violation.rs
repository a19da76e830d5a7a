//! Protocol violations: typed descriptions of what a received frame got wrong.
//!
//! Every check of a received frame reports one of these, never a panic. A session that meets one
//! stops reading, ends every waiting request as interrupted, and treats every command among them
//! as uncertain (F-8); that handling lives with the session, this module names the fault.

use crate::rows::RowViolation;
use flatbuffers::InvalidFlatbuffer;
use std::fmt;

/// A member of the schema, by table and field name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Site {
    /// The table (or struct) that declares the member.
    pub table: &'static str,
    /// The member.
    pub field: &'static str,
}

impl Site {
    /// The member `field` of `table`.
    pub const fn new(table: &'static str, field: &'static str) -> Self {
        Self { table, field }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.table, self.field)
    }
}

/// What is wrong with one member's value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// An optional scalar (`= null`) the schema requires is absent.
    Absent,
    /// A number the schema requires to be non-zero is zero.
    Zero,
    /// A collection the schema requires to be non-empty is empty.
    Empty,
    /// A vector of fixed length has another length.
    Length {
        /// The required length.
        expected: u64,
        /// The length found.
        found: usize,
    },
    /// A number outside its allowed range.
    OutOfRange {
        /// The value found.
        value: u64,
        /// The smallest allowed value.
        min: u64,
        /// The largest allowed value.
        max: u64,
    },
    /// A number out of order with a sibling member (for example an end before its start).
    Order {
        /// The sibling member.
        other: &'static str,
        /// "at least" or "at most" the sibling.
        must_be: &'static str,
    },
    /// A float that must be finite and positive is not.
    NotPositiveFinite,
    /// An enum value the schema does not declare.
    UndeclaredEnum {
        /// The raw value.
        value: u64,
    },
    /// A union discriminant of NONE where a variant is required.
    NoneUnion,
    /// A union discriminant the schema does not declare.
    UndeclaredUnion {
        /// The raw discriminant.
        tag: u8,
    },
    /// A vector to be sent that is longer than the send limit of 262,144 entries.
    TooManyEntries {
        /// The length found.
        len: usize,
    },
    /// A string longer than the protocol's 64 MiB.
    StringTooLong {
        /// The length in bytes.
        len: usize,
    },
    /// Tables nested deeper than the protocol's 64 levels.
    TooDeep,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Absent => write!(f, "required value is absent"),
            Fault::Zero => write!(f, "value must not be zero"),
            Fault::Empty => write!(f, "collection must not be empty"),
            Fault::Length { expected, found } => {
                write!(f, "must hold exactly {expected} entries, holds {found}")
            }
            Fault::OutOfRange { value, min, max } => {
                write!(f, "value {value} is outside {min}..={max}")
            }
            Fault::Order { other, must_be } => write!(f, "must be {must_be} `{other}`"),
            Fault::NotPositiveFinite => write!(f, "must be finite and positive"),
            Fault::UndeclaredEnum { value } => write!(f, "undeclared enum value {value}"),
            Fault::NoneUnion => write!(f, "union discriminant is NONE"),
            Fault::UndeclaredUnion { tag } => write!(f, "undeclared union discriminant {tag}"),
            Fault::TooManyEntries { len } => write!(f, "{len} entries exceed the vector limit"),
            Fault::StringTooLong { len } => write!(f, "{len} bytes exceed the string limit"),
            Fault::TooDeep => write!(f, "tables nest deeper than the limit"),
        }
    }
}

/// Why reassembling transfer parts failed (F-7).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TransferViolation {
    /// A part names another request while one reply is being assembled.
    #[error("a transfer part names request {found} while request {assembling} is being assembled")]
    OtherIdentity {
        /// The request being assembled.
        assembling: u64,
        /// The request the part names.
        found: u64,
    },
    /// A part names another total than the first part did.
    #[error("a transfer part names total {found}, the first named {expected}")]
    TotalChanged {
        /// The first part's total.
        expected: u64,
        /// This part's total.
        found: u64,
    },
    /// The first part announces more than the transfer limit.
    #[error("the first transfer part announces {total} bytes, above the limit of {limit}")]
    TotalTooLarge {
        /// The announced total.
        total: u64,
        /// The transfer limit.
        limit: u64,
    },
    /// A part's offset is not the number of bytes received so far.
    #[error("a transfer part starts at {found}, {expected} bytes were received")]
    OffsetMismatch {
        /// Bytes received so far.
        expected: u64,
        /// The offset the part names.
        found: u64,
    },
    /// A part with an empty chunk.
    #[error("a transfer part carries an empty chunk")]
    EmptyChunk,
    /// A part names request identity 0, which no request has (C-1).
    #[error("a transfer part names request identity 0")]
    ZeroIdentity,
    /// A part runs past the announced total.
    #[error("a transfer part ends at {end}, past the announced total of {total}")]
    Overrun {
        /// The announced total.
        total: u64,
        /// Where the part ends.
        end: u64,
    },
    /// The joined bytes are not a valid frame.
    #[error("the joined transfer is not a valid frame: {0}")]
    Joined(Box<ProtocolViolation>),
    /// The joined frame holds something other than a Reply.
    #[error("the joined transfer holds {found}, not a Reply")]
    JoinedNotReply {
        /// The body variant found.
        found: &'static str,
    },
    /// The joined Reply answers another request.
    #[error("the joined transfer answers request {found}, not {expected}")]
    JoinedOtherRequest {
        /// The request whose parts were joined.
        expected: u64,
        /// The request the joined Reply names.
        found: u64,
    },
    /// The joined Reply is itself a transfer part.
    #[error("the joined transfer is itself a transfer part")]
    JoinedIsTransferPart,
    /// A whole reply arrived for the request whose parts are being joined: the request is
    /// answered by the joined reply alone (C-4).
    #[error("a whole reply to request {request_id} arrived while its parts were being joined")]
    WholeReplyDuringTransfer {
        /// The request being assembled.
        request_id: u64,
    },
}

/// A received frame broke the protocol. Typed, so a session can act on it and a test can
/// assert exactly which rule was broken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// The frame is larger than the limit (4 MiB, or 64 MiB for a joined transfer).
    #[error("{root} frame of {len} bytes exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The root expected.
        root: &'static str,
        /// The frame's length.
        len: usize,
        /// The limit that applied.
        limit: usize,
    },
    /// The frame is shorter than 8 bytes.
    #[error("{root} frame of {len} bytes is shorter than 8 bytes")]
    FrameTooShort {
        /// The root expected.
        root: &'static str,
        /// The frame's length.
        len: usize,
    },
    /// The frame carries another file identifier.
    #[error(
        "{root} frame carries identifier \"{}\", not \"{}\"",
        found.escape_ascii(),
        expected.escape_ascii()
    )]
    WrongIdentifier {
        /// The root expected.
        root: &'static str,
        /// The identifier expected.
        expected: [u8; 4],
        /// The four bytes found.
        found: [u8; 4],
    },
    /// FlatBuffers verification failed: a bad offset, misalignment, a missing required field,
    /// invalid UTF-8, or the nesting, table or apparent-size limit.
    #[error("{root} frame failed verification: {}", error.to_string().trim_end())]
    Malformed {
        /// The root expected.
        root: &'static str,
        /// What the verifier found.
        error: InvalidFlatbuffer,
    },
    /// A member's value breaks a rule of the schema.
    #[error("{site}: {fault}")]
    Field {
        /// The member.
        site: Site,
        /// What is wrong with it.
        fault: Fault,
    },
    /// Transfer parts could not be reassembled into a reply.
    #[error("{0}")]
    Transfer(#[from] TransferViolation),
    /// A reply whose kind does not answer the request its identity names.
    #[error("request {request_id} ({request}) was answered with {reply}")]
    UnexpectedReply {
        /// The request identity.
        request_id: u64,
        /// The request's kind.
        request: &'static str,
        /// The reply body's kind.
        reply: &'static str,
    },
    /// A command outcome that names another execution reference than its request's (E-5).
    #[error("request {request_id} sent reference {sent:?}, its outcome names {found:?}")]
    ReferenceMismatch {
        /// The request identity.
        request_id: u64,
        /// The reference the request carried.
        sent: String,
        /// The reference the outcome named.
        found: String,
    },
    /// A command outcome with more statement outcomes than its command has statements: it
    /// cannot be reported one outcome per statement (E-7).
    #[error("a command of {statements} statement(s) was answered with {found} statement outcomes")]
    StatementCount {
        /// The statements the command has.
        statements: usize,
        /// The statement outcomes its outcome carries.
        found: usize,
    },
    /// A batch of rows that does not conform to its subscription's schema.
    #[error("row batch does not conform to its schema: {0}")]
    Rows(Box<RowViolation>),
    /// A producer or consumer frame that breaks its endpoint's rules: an outcome after the
    /// producer's end, a delivery that is not its consumer's schema (P-6, P-8, EC-3).
    #[error("{rule}: {what}")]
    Endpoint {
        /// The manual's rule.
        rule: &'static str,
        /// What the frame did.
        what: String,
    },
}

impl From<RowViolation> for ProtocolViolation {
    #[cold]
    fn from(v: RowViolation) -> Self {
        Self::Rows(Box::new(v))
    }
}

impl ProtocolViolation {
    /// A semantic violation of one member.
    #[cold]
    pub fn field(site: Site, fault: Fault) -> Self {
        Self::Field { site, fault }
    }

    /// The manual's rule the violation breaks.
    pub fn rule(&self) -> &'static str {
        match self {
            Self::FrameTooLarge { .. }
            | Self::FrameTooShort { .. }
            | Self::WrongIdentifier { .. } => "F-3",
            Self::Malformed { error, .. } => match error {
                InvalidFlatbuffer::MissingRequiredField { .. }
                | InvalidFlatbuffer::InconsistentUnion { .. } => "F-4",
                _ => "F-3",
            },
            Self::Field { .. } => "F-4",
            Self::Transfer(_) => "F-7",
            Self::UnexpectedReply { .. } => "C-3",
            Self::ReferenceMismatch { .. } => "E-5",
            Self::StatementCount { .. } => "E-7",
            Self::Rows(v) => v.rule(),
            Self::Endpoint { rule, .. } => rule,
        }
    }
}
