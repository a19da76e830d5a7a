//! The CultNet frames this crate reads and writes, with closed schemas.
//!
//! Every frame is a MessagePack map with camelCase keys whose `schemaVersion` names the frame.
//! Decoding refuses an unknown `schemaVersion`, an unknown key, a repeated key (at any depth of
//! the maps this codec reads), a missing required key and a value of the wrong type. Encoding
//! writes the shortest MessagePack forms with the keys in the order of each struct's fields.

use crate::message_id::is_valid_admitted_message_id;
use crate::msgpack::{is_one_value, Head, Reader, Writer};
use crate::{DecodeError, EncodeError};

/// `schemaVersion` of the hello frame.
pub const HELLO_V0: &str = "cultnet.hello.v0";
/// `schemaVersion` of a document put.
pub const DOCUMENT_PUT_V0: &str = "cultnet.document_put.v0";
/// `schemaVersion` of a document delete.
pub const DOCUMENT_DELETE_V0: &str = "cultnet.document_delete.v0";
/// `schemaVersion` of the id-less error.
pub const ERROR_V0: &str = "cultnet.error.v0";
/// `schemaVersion` of the error that names the request it answers.
pub const ERROR_V1: &str = "cultnet.error.v1";
/// `schemaVersion` of the admission receipt.
pub const WRITE_ADMITTED_V0: &str = "cultnet.write_admitted.v0";

/// The error code only `cultnet.error.v1` may carry.
pub const CODE_LIMIT_REACHED: &str = "limit_reached";
/// The error code of a write that does not read or names nothing.
pub const CODE_MESSAGE_INVALID: &str = "message_invalid";
/// The error code of a write the actor may not make.
pub const CODE_WRITE_NOT_AUTHORIZED: &str = "write_not_authorized";
/// The error code of a write to a schema no server owns.
pub const CODE_UNOWNED_SCHEMA: &str = "unowned_schema";
/// The error code of a write in a schema version the server does not take.
pub const CODE_UNSUPPORTED_SCHEMA_VERSION: &str = "unsupported_schema_version";

/// The `code` of an error frame (W-9).
///
/// The rule makes the code set of `cultnet.error.v1` that of `cultnet.error.v0` plus
/// `limit_reached`, a closed set whose authority is the error.v1 schema. The seed names only part
/// of v0's set (`write_not_authorized`, `message_invalid`, `unowned_schema`,
/// `unsupported_schema_version`, then "shard authority errors, ..."), and those named codes are the
/// variants here. This crate reads the rule so:
///
/// * a named code decodes to its variant, and encodes back to the same text;
/// * any other non-empty code is a member of the closed set that the seed does not name (the
///   ellipsis says such members exist): it is kept verbatim as [`ErrorCode::Other`], never
///   refused, because refusing it would drop a real refusal and leave the write unconfirmed where
///   the client rules (W-35, W-43) make it refused. An `Other` never holds a named code;
/// * what the rule itself excludes stays a typed violation: an empty code
///   ([`DecodeError::Empty`]) and `limit_reached` in an error.v0
///   ([`DecodeError::CodeNotInVersion`]).
///
/// The closed schema of W-9 (no extra keys) is kept by the frame decoders, not here.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `write_not_authorized`.
    WriteNotAuthorized,
    /// `message_invalid`.
    MessageInvalid,
    /// `unowned_schema`.
    UnownedSchema,
    /// `unsupported_schema_version`.
    UnsupportedSchemaVersion,
    /// `limit_reached` (error.v1 only).
    LimitReached,
    /// A code of the closed set that the seed does not name, kept verbatim.
    Other(OtherCode),
}

/// The text of an [`ErrorCode::Other`]: never one of the named codes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OtherCode(String);

impl OtherCode {
    /// The code's text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl ErrorCode {
    /// The code for `text`: its variant when it is a named code, else [`ErrorCode::Other`]. An
    /// empty text gives an `Other` that the encoder refuses and the decoder never yields.
    #[must_use]
    pub fn from_text(text: &str) -> ErrorCode {
        match text {
            CODE_WRITE_NOT_AUTHORIZED => ErrorCode::WriteNotAuthorized,
            CODE_MESSAGE_INVALID => ErrorCode::MessageInvalid,
            CODE_UNOWNED_SCHEMA => ErrorCode::UnownedSchema,
            CODE_UNSUPPORTED_SCHEMA_VERSION => ErrorCode::UnsupportedSchemaVersion,
            CODE_LIMIT_REACHED => ErrorCode::LimitReached,
            other => ErrorCode::Other(OtherCode(other.to_owned())),
        }
    }

    /// The wire text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::WriteNotAuthorized => CODE_WRITE_NOT_AUTHORIZED,
            ErrorCode::MessageInvalid => CODE_MESSAGE_INVALID,
            ErrorCode::UnownedSchema => CODE_UNOWNED_SCHEMA,
            ErrorCode::UnsupportedSchemaVersion => CODE_UNSUPPORTED_SCHEMA_VERSION,
            ErrorCode::LimitReached => CODE_LIMIT_REACHED,
            ErrorCode::Other(o) => o.as_str(),
        }
    }

    /// Whether the code is one the seed names (not [`ErrorCode::Other`]).
    #[must_use]
    pub fn is_named(&self) -> bool {
        !matches!(self, ErrorCode::Other(_))
    }
}

impl From<&str> for ErrorCode {
    fn from(text: &str) -> Self {
        ErrorCode::from_text(text)
    }
}

impl std::ops::Deref for ErrorCode {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A decoded or to-be-encoded CultNet frame.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame {
    /// `cultnet.hello.v0`.
    Hello(Hello),
    /// `cultnet.document_put.v0`.
    DocumentPut(DocumentPut),
    /// `cultnet.document_delete.v0`.
    DocumentDelete(DocumentDelete),
    /// `cultnet.error.v0`: an error naming no request.
    ErrorV0(ErrorV0),
    /// `cultnet.error.v1`: an error naming the request it answers (or nil).
    ErrorV1(ErrorV1),
    /// `cultnet.write_admitted.v0`: a put or delete was admitted.
    WriteAdmitted(WriteAdmitted),
}

/// A well-formed MessagePack value kept as its encoded bytes (written back verbatim).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawValue(Vec<u8>);

impl RawValue {
    /// Wraps `bytes` when they hold exactly one well-formed MessagePack value.
    pub fn new(bytes: Vec<u8>) -> Result<Self, EncodeError> {
        if is_one_value(&bytes) {
            Ok(RawValue(bytes))
        } else {
            Err(EncodeError::NotOneValue)
        }
    }

    /// The encoded value.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// `cultnet.hello.v0`: who a peer is and which frames it speaks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// `runtimeId` (required, non-empty).
    pub runtime_id: String,
    /// `runtimeKind` (required, non-empty).
    pub runtime_kind: String,
    /// `agentId`.
    pub agent_id: Option<String>,
    /// `role`.
    pub role: Option<String>,
    /// `displayName`.
    pub display_name: Option<String>,
    /// `supportedDocumentTypes`.
    pub supported_document_types: Option<Vec<String>>,
    /// `supportedMutationContracts`, kept as the encoded array.
    pub supported_mutation_contracts: Option<RawValue>,
    /// `supportedMessageVersions`: the list that opts a connection into receipts.
    pub supported_message_versions: Option<Vec<String>>,
    /// `transportProfiles`, kept as the encoded array.
    pub transport_profiles: Option<RawValue>,
    /// `supportsSchemaCatalog`.
    pub supports_schema_catalog: Option<bool>,
}

impl Hello {
    /// Whether this hello lists both `cultnet.write_admitted.v0` and `cultnet.error.v1`, which
    /// makes its sender receipt-capable (W-10).
    #[must_use]
    pub fn is_receipt_capable(&self) -> bool {
        self.supported_message_versions.as_ref().is_some_and(|v| {
            v.iter().any(|s| s == WRITE_ADMITTED_V0) && v.iter().any(|s| s == ERROR_V1)
        })
    }
}

/// The operation of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// A document put.
    Put,
    /// A document delete.
    Delete,
}

impl Operation {
    /// The wire word: `put` or `delete`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Put => "put",
            Operation::Delete => "delete",
        }
    }
}

/// The document record a put carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// `schemaId` (required).
    pub schema_id: String,
    /// `recordKey` (required).
    pub record_key: String,
    /// `storedAt` (required).
    pub stored_at: String,
    /// `payload`: the document's MessagePack value, kept encoded (required).
    pub payload: RawValue,
    /// `sourceRuntimeId`.
    pub source_runtime_id: Option<String>,
    /// `sourceAgentId`.
    pub source_agent_id: Option<String>,
    /// `sourceRole`.
    pub source_role: Option<String>,
    /// `tags`.
    pub tags: Option<Vec<String>>,
}

/// `cultnet.document_put.v0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentPut {
    /// `messageId` (required, non-empty).
    pub message_id: String,
    /// `document`.
    pub document: Document,
}

/// `cultnet.document_delete.v0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentDelete {
    /// `messageId` (required, non-empty).
    pub message_id: String,
    /// `schemaId`.
    pub schema_id: String,
    /// `recordKey`.
    pub record_key: String,
}

/// The `details` of an error frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ErrorDetails {
    /// `field`: the field the error is about, or nil.
    pub field: Option<String>,
}

/// `cultnet.error.v0`: `{schemaVersion, error}` plus an optional code and details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorV0 {
    /// `error`: the error's text.
    pub error: String,
    /// `code`; never `limit_reached` in v0.
    pub code: Option<ErrorCode>,
    /// `details`.
    pub details: Option<ErrorDetails>,
}

/// `cultnet.error.v1`: error.v0 plus a required `messageId` (string or nil).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorV1 {
    /// `messageId`: the id of the request the error answers; nil when none could be read.
    pub message_id: Option<String>,
    /// `error`: the error's text.
    pub error: String,
    /// `code`.
    pub code: Option<ErrorCode>,
    /// `details`.
    pub details: Option<ErrorDetails>,
}

/// `cultnet.write_admitted.v0`: every key present, none nil.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteAdmitted {
    /// `messageId`: the admitted write's id, byte for byte.
    pub message_id: String,
    /// `operation`.
    pub operation: Operation,
    /// `schemaId`.
    pub schema_id: String,
    /// `recordKey`.
    pub record_key: String,
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// Reads the keys of one map, refusing a key outside `allowed` and a repeated key.
struct MapKeys {
    seen: Vec<&'static str>,
}

impl MapKeys {
    fn new() -> Self {
        MapKeys { seen: Vec::new() }
    }

    fn key<'a>(
        &mut self,
        r: &mut Reader<'a>,
        allowed: &[&'static str],
    ) -> Result<&'static str, DecodeError> {
        let Head::Str(n) = r.head()? else {
            return Err(DecodeError::KeyNotAString);
        };
        let text = r.str_body(n)?;
        let Some(known) = allowed.iter().copied().find(|k| *k == text) else {
            return Err(DecodeError::UnknownKey(text.to_owned()));
        };
        if self.seen.contains(&known) {
            return Err(DecodeError::DuplicateKey(known));
        }
        self.seen.push(known);
        Ok(known)
    }
}

fn map_len(r: &mut Reader<'_>) -> Result<usize, DecodeError> {
    match r.head()? {
        Head::Map(n) => Ok(n),
        _ => Err(DecodeError::NotAMap),
    }
}

fn string(r: &mut Reader<'_>, key: &'static str) -> Result<String, DecodeError> {
    match r.head()? {
        Head::Str(n) => Ok(r.str_body(n)?.to_owned()),
        _ => Err(DecodeError::WrongType(key)),
    }
}

fn nonempty(r: &mut Reader<'_>, key: &'static str) -> Result<String, DecodeError> {
    let s = string(r, key)?;
    if s.is_empty() {
        return Err(DecodeError::Empty(key));
    }
    Ok(s)
}

/// A string or nil (nil reads as absent).
fn opt_string(r: &mut Reader<'_>, key: &'static str) -> Result<Option<String>, DecodeError> {
    match r.head()? {
        Head::Nil => Ok(None),
        Head::Str(n) => Ok(Some(r.str_body(n)?.to_owned())),
        _ => Err(DecodeError::WrongType(key)),
    }
}

fn opt_strings(r: &mut Reader<'_>, key: &'static str) -> Result<Option<Vec<String>>, DecodeError> {
    match r.head()? {
        Head::Nil => Ok(None),
        Head::Array(n) => {
            let mut v = Vec::with_capacity(n.min(64));
            for _ in 0..n {
                v.push(string(r, key)?);
            }
            Ok(Some(v))
        }
        _ => Err(DecodeError::WrongType(key)),
    }
}

fn raw(r: &mut Reader<'_>, depth: usize) -> Result<RawValue, DecodeError> {
    let start = r.position();
    r.skip_value(depth)?;
    Ok(RawValue(r.slice(start, r.position()).to_vec()))
}

fn opt_raw_array(
    r: &mut Reader<'_>,
    key: &'static str,
    depth: usize,
) -> Result<Option<RawValue>, DecodeError> {
    let start = r.position();
    match r.head()? {
        Head::Nil => Ok(None),
        h @ Head::Array(_) => {
            r.skip_body(h, depth)?;
            Ok(Some(RawValue(r.slice(start, r.position()).to_vec())))
        }
        _ => Err(DecodeError::WrongType(key)),
    }
}

fn code(r: &mut Reader<'_>) -> Result<Option<ErrorCode>, DecodeError> {
    match opt_string(r, "code")? {
        Some(c) if c.is_empty() => Err(DecodeError::Empty("code")),
        c => Ok(c.as_deref().map(ErrorCode::from_text)),
    }
}

fn details(r: &mut Reader<'_>) -> Result<Option<ErrorDetails>, DecodeError> {
    match r.head()? {
        Head::Nil => Ok(None),
        Head::Map(n) => {
            let mut keys = MapKeys::new();
            let mut d = ErrorDetails::default();
            for _ in 0..n {
                keys.key(r, &["field"])?;
                d.field = opt_string(r, "field")?;
            }
            Ok(Some(d))
        }
        _ => Err(DecodeError::WrongType("details")),
    }
}

fn required<T>(v: Option<T>, key: &'static str) -> Result<T, DecodeError> {
    v.ok_or(DecodeError::MissingKey(key))
}

/// Decodes one frame (the bytes inside the length prefix).
pub fn decode(bytes: &[u8]) -> Result<Frame, DecodeError> {
    // First pass: find `schemaVersion` (the key may come anywhere in the map).
    let mut r = Reader::new(bytes);
    let n = map_len(&mut r)?;
    let mut version: Option<String> = None;
    for _ in 0..n {
        let Head::Str(k) = r.head()? else {
            return Err(DecodeError::KeyNotAString);
        };
        let key = r.str_body(k)?;
        if key == "schemaVersion" {
            if version.is_some() {
                return Err(DecodeError::DuplicateKey("schemaVersion"));
            }
            version = Some(string(&mut r, "schemaVersion")?);
        } else {
            r.skip_value(1)?;
        }
    }
    if !r.is_at_end() {
        return Err(DecodeError::TrailingBytes);
    }
    let version = required(version, "schemaVersion")?;
    let mut r = Reader::new(bytes);
    let n = map_len(&mut r)?;
    let frame = match version.as_str() {
        HELLO_V0 => Frame::Hello(hello(&mut r, n)?),
        DOCUMENT_PUT_V0 => Frame::DocumentPut(put(&mut r, n)?),
        DOCUMENT_DELETE_V0 => Frame::DocumentDelete(delete(&mut r, n)?),
        ERROR_V0 => Frame::ErrorV0(error_v0(&mut r, n)?),
        ERROR_V1 => Frame::ErrorV1(error_v1(&mut r, n)?),
        WRITE_ADMITTED_V0 => Frame::WriteAdmitted(admitted(&mut r, n)?),
        _ => return Err(DecodeError::UnknownSchemaVersion(version)),
    };
    Ok(frame)
}

fn hello(r: &mut Reader<'_>, n: usize) -> Result<Hello, DecodeError> {
    const KEYS: &[&str] = &[
        "schemaVersion",
        "runtimeId",
        "runtimeKind",
        "agentId",
        "role",
        "displayName",
        "supportedDocumentTypes",
        "supportedMutationContracts",
        "supportedMessageVersions",
        "transportProfiles",
        "supportsSchemaCatalog",
    ];
    let mut keys = MapKeys::new();
    let mut h = Hello::default();
    let (mut id, mut kind) = (None, None);
    for _ in 0..n {
        match keys.key(r, KEYS)? {
            "runtimeId" => id = Some(nonempty(r, "runtimeId")?),
            "runtimeKind" => kind = Some(nonempty(r, "runtimeKind")?),
            "agentId" => h.agent_id = opt_string(r, "agentId")?,
            "role" => h.role = opt_string(r, "role")?,
            "displayName" => h.display_name = opt_string(r, "displayName")?,
            "supportedDocumentTypes" => {
                h.supported_document_types = opt_strings(r, "supportedDocumentTypes")?;
            }
            "supportedMutationContracts" => {
                h.supported_mutation_contracts = opt_raw_array(r, "supportedMutationContracts", 1)?;
            }
            "supportedMessageVersions" => {
                h.supported_message_versions = opt_strings(r, "supportedMessageVersions")?;
            }
            "transportProfiles" => h.transport_profiles = opt_raw_array(r, "transportProfiles", 1)?,
            "supportsSchemaCatalog" => {
                h.supports_schema_catalog = match r.head()? {
                    Head::Nil => None,
                    Head::Bool(b) => Some(b),
                    _ => return Err(DecodeError::WrongType("supportsSchemaCatalog")),
                };
            }
            _ => {
                r.skip_value(1)?;
            }
        }
    }
    h.runtime_id = required(id, "runtimeId")?;
    h.runtime_kind = required(kind, "runtimeKind")?;
    Ok(h)
}

fn document(r: &mut Reader<'_>) -> Result<Document, DecodeError> {
    const KEYS: &[&str] = &[
        "schemaId",
        "recordKey",
        "storedAt",
        "payload",
        "sourceRuntimeId",
        "sourceAgentId",
        "sourceRole",
        "tags",
    ];
    let n = match r.head()? {
        Head::Map(n) => n,
        _ => return Err(DecodeError::WrongType("document")),
    };
    let mut keys = MapKeys::new();
    let (mut schema_id, mut record_key, mut stored_at, mut payload) = (None, None, None, None);
    let (mut runtime, mut agent, mut role, mut tags) = (None, None, None, None);
    for _ in 0..n {
        match keys.key(r, KEYS)? {
            "schemaId" => schema_id = Some(string(r, "schemaId")?),
            "recordKey" => record_key = Some(string(r, "recordKey")?),
            "storedAt" => stored_at = Some(string(r, "storedAt")?),
            "payload" => payload = Some(raw(r, 2)?),
            "sourceRuntimeId" => runtime = opt_string(r, "sourceRuntimeId")?,
            "sourceAgentId" => agent = opt_string(r, "sourceAgentId")?,
            "sourceRole" => role = opt_string(r, "sourceRole")?,
            _ => tags = opt_strings(r, "tags")?,
        }
    }
    Ok(Document {
        schema_id: required(schema_id, "schemaId")?,
        record_key: required(record_key, "recordKey")?,
        stored_at: required(stored_at, "storedAt")?,
        payload: required(payload, "payload")?,
        source_runtime_id: runtime,
        source_agent_id: agent,
        source_role: role,
        tags,
    })
}

fn put(r: &mut Reader<'_>, n: usize) -> Result<DocumentPut, DecodeError> {
    let mut keys = MapKeys::new();
    let (mut id, mut doc) = (None, None);
    for _ in 0..n {
        match keys.key(r, &["schemaVersion", "messageId", "document"])? {
            "messageId" => id = Some(nonempty(r, "messageId")?),
            "document" => doc = Some(document(r)?),
            _ => r.skip_value(1)?,
        }
    }
    Ok(DocumentPut {
        message_id: required(id, "messageId")?,
        document: required(doc, "document")?,
    })
}

fn delete(r: &mut Reader<'_>, n: usize) -> Result<DocumentDelete, DecodeError> {
    let mut keys = MapKeys::new();
    let (mut id, mut schema_id, mut record_key) = (None, None, None);
    for _ in 0..n {
        match keys.key(r, &["schemaVersion", "messageId", "schemaId", "recordKey"])? {
            "messageId" => id = Some(nonempty(r, "messageId")?),
            "schemaId" => schema_id = Some(string(r, "schemaId")?),
            "recordKey" => record_key = Some(string(r, "recordKey")?),
            _ => r.skip_value(1)?,
        }
    }
    Ok(DocumentDelete {
        message_id: required(id, "messageId")?,
        schema_id: required(schema_id, "schemaId")?,
        record_key: required(record_key, "recordKey")?,
    })
}

fn error_v0(r: &mut Reader<'_>, n: usize) -> Result<ErrorV0, DecodeError> {
    let mut keys = MapKeys::new();
    let (mut error, mut code_v, mut details_v) = (None, None, None);
    for _ in 0..n {
        match keys.key(r, &["schemaVersion", "error", "code", "details"])? {
            "error" => error = Some(string(r, "error")?),
            "code" => code_v = code(r)?,
            "details" => details_v = details(r)?,
            _ => r.skip_value(1)?,
        }
    }
    if code_v == Some(ErrorCode::LimitReached) {
        return Err(DecodeError::CodeNotInVersion(CODE_LIMIT_REACHED));
    }
    Ok(ErrorV0 {
        error: required(error, "error")?,
        code: code_v,
        details: details_v,
    })
}

fn error_v1(r: &mut Reader<'_>, n: usize) -> Result<ErrorV1, DecodeError> {
    let mut keys = MapKeys::new();
    let (mut id, mut error, mut code_v, mut details_v) = (None, None, None, None);
    for _ in 0..n {
        match keys.key(
            r,
            &["schemaVersion", "messageId", "error", "code", "details"],
        )? {
            "messageId" => {
                // A string or nil; an empty string names no request and is refused, as the
                // encoder refuses to write one.
                let m = opt_string(r, "messageId")?;
                if m.as_deref() == Some("") {
                    return Err(DecodeError::Empty("messageId"));
                }
                id = Some(m);
            }
            "error" => error = Some(string(r, "error")?),
            "code" => code_v = code(r)?,
            "details" => details_v = details(r)?,
            _ => r.skip_value(1)?,
        }
    }
    Ok(ErrorV1 {
        message_id: required(id, "messageId")?,
        error: required(error, "error")?,
        code: code_v,
        details: details_v,
    })
}

fn admitted(r: &mut Reader<'_>, n: usize) -> Result<WriteAdmitted, DecodeError> {
    let mut keys = MapKeys::new();
    let (mut id, mut op, mut schema_id, mut record_key) = (None, None, None, None);
    for _ in 0..n {
        match keys.key(
            r,
            &[
                "schemaVersion",
                "messageId",
                "operation",
                "schemaId",
                "recordKey",
            ],
        )? {
            "messageId" => {
                let v = string(r, "messageId")?;
                if !is_valid_admitted_message_id(&v) {
                    return Err(DecodeError::InvalidMessageId);
                }
                id = Some(v);
            }
            "operation" => {
                op = Some(match string(r, "operation")?.as_str() {
                    "put" => Operation::Put,
                    "delete" => Operation::Delete,
                    _ => return Err(DecodeError::InvalidOperation),
                });
            }
            "schemaId" => schema_id = Some(string(r, "schemaId")?),
            "recordKey" => record_key = Some(string(r, "recordKey")?),
            _ => r.skip_value(1)?,
        }
    }
    Ok(WriteAdmitted {
        message_id: required(id, "messageId")?,
        operation: required(op, "operation")?,
        schema_id: required(schema_id, "schemaId")?,
        record_key: required(record_key, "recordKey")?,
    })
}

// ---------------------------------------------------------------------------------------------
// Encoding

fn opt_count<T>(o: &Option<T>) -> usize {
    usize::from(o.is_some())
}

fn write_strings(w: &mut Writer, v: &[String]) {
    w.array(v.len());
    for s in v {
        w.str(s);
    }
}

fn write_details(w: &mut Writer, d: &Option<ErrorDetails>) {
    match d {
        None => w.nil(),
        Some(d) => {
            w.map(1);
            w.str("field");
            w.opt_str(d.field.as_deref());
        }
    }
}

/// Encodes a frame in its canonical form: the shortest MessagePack forms, keys in the order of
/// the struct's fields, absent optional keys left out (error.v1 and write_admitted write every
/// key). Application input that the decoder would refuse is a typed error.
pub fn encode(frame: &Frame) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer::new();
    match frame {
        Frame::Hello(h) => {
            if h.runtime_id.is_empty() || h.runtime_kind.is_empty() {
                return Err(EncodeError::EmptyField);
            }
            let n = 3
                + opt_count(&h.agent_id)
                + opt_count(&h.role)
                + opt_count(&h.display_name)
                + opt_count(&h.supported_document_types)
                + opt_count(&h.supported_mutation_contracts)
                + opt_count(&h.supported_message_versions)
                + opt_count(&h.transport_profiles)
                + opt_count(&h.supports_schema_catalog);
            w.map(n);
            w.str("schemaVersion");
            w.str(HELLO_V0);
            w.str("runtimeId");
            w.str(&h.runtime_id);
            w.str("runtimeKind");
            w.str(&h.runtime_kind);
            let strs: [(&str, &Option<String>); 3] = [
                ("agentId", &h.agent_id),
                ("role", &h.role),
                ("displayName", &h.display_name),
            ];
            for (k, v) in strs {
                if let Some(v) = v {
                    w.str(k);
                    w.str(v);
                }
            }
            if let Some(v) = &h.supported_document_types {
                w.str("supportedDocumentTypes");
                write_strings(&mut w, v);
            }
            if let Some(v) = &h.supported_mutation_contracts {
                w.str("supportedMutationContracts");
                w.raw(v.as_bytes());
            }
            if let Some(v) = &h.supported_message_versions {
                w.str("supportedMessageVersions");
                write_strings(&mut w, v);
            }
            if let Some(v) = &h.transport_profiles {
                w.str("transportProfiles");
                w.raw(v.as_bytes());
            }
            if let Some(v) = h.supports_schema_catalog {
                w.str("supportsSchemaCatalog");
                w.bool(v);
            }
        }
        Frame::DocumentPut(p) => {
            if p.message_id.is_empty() {
                return Err(EncodeError::EmptyField);
            }
            let d = &p.document;
            w.map(3);
            w.str("schemaVersion");
            w.str(DOCUMENT_PUT_V0);
            w.str("messageId");
            w.str(&p.message_id);
            w.str("document");
            w.map(
                4 + opt_count(&d.source_runtime_id)
                    + opt_count(&d.source_agent_id)
                    + opt_count(&d.source_role)
                    + opt_count(&d.tags),
            );
            w.str("schemaId");
            w.str(&d.schema_id);
            w.str("recordKey");
            w.str(&d.record_key);
            w.str("storedAt");
            w.str(&d.stored_at);
            w.str("payload");
            w.raw(d.payload.as_bytes());
            let strs: [(&str, &Option<String>); 3] = [
                ("sourceRuntimeId", &d.source_runtime_id),
                ("sourceAgentId", &d.source_agent_id),
                ("sourceRole", &d.source_role),
            ];
            for (k, v) in strs {
                if let Some(v) = v {
                    w.str(k);
                    w.str(v);
                }
            }
            if let Some(t) = &d.tags {
                w.str("tags");
                write_strings(&mut w, t);
            }
        }
        Frame::DocumentDelete(d) => {
            if d.message_id.is_empty() {
                return Err(EncodeError::EmptyField);
            }
            w.map(4);
            w.str("schemaVersion");
            w.str(DOCUMENT_DELETE_V0);
            w.str("messageId");
            w.str(&d.message_id);
            w.str("schemaId");
            w.str(&d.schema_id);
            w.str("recordKey");
            w.str(&d.record_key);
        }
        Frame::ErrorV0(e) => {
            if e.code.as_deref() == Some(CODE_LIMIT_REACHED) {
                return Err(EncodeError::CodeNotInVersion);
            }
            if e.code.as_deref() == Some("") {
                return Err(EncodeError::EmptyField);
            }
            w.map(2 + opt_count(&e.code) + opt_count(&e.details));
            w.str("schemaVersion");
            w.str(ERROR_V0);
            w.str("error");
            w.str(&e.error);
            if let Some(c) = &e.code {
                w.str("code");
                w.str(c.as_str());
            }
            if e.details.is_some() {
                w.str("details");
                write_details(&mut w, &e.details);
            }
        }
        Frame::ErrorV1(e) => {
            if e.code.as_deref() == Some("") || e.message_id.as_deref() == Some("") {
                return Err(EncodeError::EmptyField);
            }
            w.map(5);
            w.str("schemaVersion");
            w.str(ERROR_V1);
            w.str("messageId");
            w.opt_str(e.message_id.as_deref());
            w.str("error");
            w.str(&e.error);
            w.str("code");
            w.opt_str(e.code.as_ref().map(ErrorCode::as_str));
            w.str("details");
            write_details(&mut w, &e.details);
        }
        Frame::WriteAdmitted(a) => {
            if !is_valid_admitted_message_id(&a.message_id) {
                return Err(EncodeError::InvalidMessageId);
            }
            w.map(5);
            w.str("schemaVersion");
            w.str(WRITE_ADMITTED_V0);
            w.str("messageId");
            w.str(&a.message_id);
            w.str("operation");
            w.str(a.operation.as_str());
            w.str("schemaId");
            w.str(&a.schema_id);
            w.str("recordKey");
            w.str(&a.record_key);
        }
    }
    Ok(w.out)
}
