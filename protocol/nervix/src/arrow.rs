//! Arrow IPC batches of producers and emitter consumers (P-3, EC-3).
//!
//! A field of an endpoint has one Arrow form, the same for both directions:
//!
//! | Nervix type | Arrow type |
//! |---|---|
//! | `U8` ... `I64` | `UInt8` ... `Int64` of the same width and signedness |
//! | `F32`, `F64` | `Float32`, `Float64` |
//! | `Bool` | `Boolean` |
//! | `String` | `Utf8` |
//! | `Bytes` | `Binary` |
//! | `Datetime` | `Timestamp(Nanosecond, "UTC")`: signed nanoseconds since the Unix epoch |
//! | fixed list of `n` | `FixedSizeList(n)` of a non-nullable element named `item` |
//! | list | `List` (32-bit offsets) of a non-nullable element named `item` |
//!
//! The Arrow field has the field's name and nullability and no metadata; sensitivity is not
//! expressed in Arrow, it is part of the endpoint's description the batch is checked against.
//! A list never holds a null element.
//!
//! A batch travels as one canonical Arrow IPC stream ([`encode`]): the schema message, exactly
//! one record batch and the end-of-stream marker, uncompressed, without dictionaries or
//! extension types, and without metadata. [`decode`] reads a delivery back and checks it is
//! exactly that, against the endpoint's fields.
//!
//! Two ways to make a batch: [`BatchBuilder`] takes typed values column by column and checks
//! each against the field it is for; [`check_record_batch`] checks an application's own
//! [`RecordBatch`] and names the first column that does not match.

use crate::rows::{FieldSpec, FieldType, ScalarType};
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, FixedSizeListArray, ListArray, PrimitiveArray,
    RecordBatch, StringArray, TimestampNanosecondArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef, TimeUnit};
use std::fmt;
use std::io::Cursor;
use std::sync::Arc;

/// The time zone a `Datetime` field's Arrow timestamp names.
pub const DATETIME_ZONE: &str = "UTC";

/// The name of a list's element field.
pub const LIST_ITEM: &str = "item";

/// The end-of-stream marker that closes every canonical stream.
const END_OF_STREAM: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];

/// The Arrow type of a Nervix type.
pub fn arrow_type(t: &FieldType) -> DataType {
    match t {
        FieldType::Scalar(s) => scalar_type(*s),
        FieldType::FixedList { element, length } => DataType::FixedSizeList(
            item_field(element),
            i32::try_from(length.get()).unwrap_or(i32::MAX),
        ),
        FieldType::List { element } => DataType::List(item_field(element)),
    }
}

fn item_field(element: &FieldType) -> FieldRef {
    Arc::new(Field::new(LIST_ITEM, arrow_type(element), false))
}

fn scalar_type(s: ScalarType) -> DataType {
    match s {
        ScalarType::U8 => DataType::UInt8,
        ScalarType::I8 => DataType::Int8,
        ScalarType::U16 => DataType::UInt16,
        ScalarType::I16 => DataType::Int16,
        ScalarType::U32 => DataType::UInt32,
        ScalarType::I32 => DataType::Int32,
        ScalarType::U64 => DataType::UInt64,
        ScalarType::I64 => DataType::Int64,
        ScalarType::F32 => DataType::Float32,
        ScalarType::F64 => DataType::Float64,
        ScalarType::Bool => DataType::Boolean,
        ScalarType::String => DataType::Utf8,
        ScalarType::Datetime => {
            DataType::Timestamp(TimeUnit::Nanosecond, Some(DATETIME_ZONE.into()))
        }
        ScalarType::Bytes => DataType::Binary,
    }
}

/// The Arrow field of an endpoint's field.
pub fn arrow_field(spec: &FieldSpec) -> Field {
    Field::new(spec.name(), arrow_type(spec.field_type()), spec.nullable())
}

/// The Arrow schema of an endpoint's fields, in order, without metadata.
pub fn arrow_schema(fields: &[FieldSpec]) -> SchemaRef {
    Arc::new(Schema::new(
        fields.iter().map(arrow_field).collect::<Vec<_>>(),
    ))
}

/// What is wrong with one column.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColumnProblem {
    /// The endpoint has this field and the batch does not.
    Missing,
    /// The batch has a column the endpoint does not.
    Extra,
    /// The column has another name at this position.
    Name {
        /// The name found.
        found: String,
    },
    /// The column's Arrow type is not the field's.
    Type {
        /// The Arrow type the field has.
        expected: String,
        /// The Arrow type found.
        found: String,
    },
    /// The column's nullability is not the field's.
    Nullability {
        /// Whether the field is nullable.
        expected: bool,
    },
    /// The column's sensitivity is not the field's.
    Sensitivity {
        /// Whether the field is sensitive.
        expected: bool,
    },
    /// The column carries field metadata.
    Metadata,
    /// A null in a field that is not nullable, or a null list element.
    Null,
    /// The column has another row count than the batch's first column.
    Length {
        /// The rows of the batch.
        expected: usize,
        /// The rows of this column.
        found: usize,
    },
    /// The column was given values twice, or given none.
    NotSetOnce,
    /// The typed builder does not build this field's type; give a `RecordBatch` instead.
    Unsupported,
}

impl fmt::Display for ColumnProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => write!(f, "is missing"),
            Self::Extra => write!(f, "is not a field of the endpoint"),
            Self::Name { found } => write!(f, "is named `{found}` at its position"),
            Self::Type { expected, found } => write!(f, "is {found}, not {expected}"),
            Self::Nullability { expected: true } => write!(f, "must be nullable"),
            Self::Nullability { expected: false } => write!(f, "must not be nullable"),
            Self::Sensitivity { expected: true } => write!(f, "is sensitive"),
            Self::Sensitivity { expected: false } => write!(f, "is not sensitive"),
            Self::Metadata => write!(f, "carries field metadata"),
            Self::Null => write!(f, "holds a null it may not hold"),
            Self::Length { expected, found } => write!(f, "has {found} rows, not {expected}"),
            Self::NotSetOnce => write!(f, "must be given its values exactly once"),
            Self::Unsupported => write!(f, "has a type the typed builder does not build"),
        }
    }
}

/// Why a batch is refused locally. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// A column does not match the endpoint's field.
    #[error("column `{column}` {problem}")]
    Column {
        /// The column (the field's name, or the batch's name for an extra column).
        column: String,
        /// What is wrong.
        problem: ColumnProblem,
    },
    /// The batch's schema carries metadata.
    #[error("the batch's schema carries metadata")]
    SchemaMetadata,
    /// More rows than the grant's `max_batch_rows` (P-3).
    #[error("{rows} rows exceed the producer's {max} rows per batch")]
    TooManyRows {
        /// The batch's rows.
        rows: usize,
        /// The most allowed.
        max: u64,
    },
    /// More IPC bytes than the grant's `max_batch_bytes`, or than one frame carries (P-3, F-6).
    #[error("{bytes} IPC bytes exceed the {max} bytes one batch may hold")]
    TooLarge {
        /// The batch's IPC bytes.
        bytes: usize,
        /// The most allowed.
        max: u64,
    },
    /// Arrow could not write the batch.
    #[error("the batch could not be written as Arrow IPC: {0}")]
    Ipc(String),
}

impl BatchError {
    fn column(column: &str, problem: ColumnProblem) -> Self {
        Self::Column {
            column: column.to_string(),
            problem,
        }
    }
}

/// Checks an application's batch against an endpoint's fields: names, order, Arrow types,
/// nullability, no metadata, no null where none may be. The first column that does not match
/// is named.
pub fn check_record_batch(fields: &[FieldSpec], batch: &RecordBatch) -> Result<(), BatchError> {
    let schema = batch.schema();
    if !schema.metadata().is_empty() {
        return Err(BatchError::SchemaMetadata);
    }
    check_fields(fields, schema.fields())?;
    for (spec, column) in fields.iter().zip(batch.columns()) {
        check_nulls(spec.name(), spec.nullable(), column.as_ref())?;
    }
    Ok(())
}

fn check_fields(fields: &[FieldSpec], found: &arrow_schema::Fields) -> Result<(), BatchError> {
    for (i, spec) in fields.iter().enumerate() {
        let Some(f) = found.get(i) else {
            return Err(BatchError::column(spec.name(), ColumnProblem::Missing));
        };
        if f.name() != spec.name() {
            return Err(BatchError::column(
                spec.name(),
                ColumnProblem::Name {
                    found: f.name().clone(),
                },
            ));
        }
        let expected = arrow_type(spec.field_type());
        if f.data_type() != &expected {
            return Err(BatchError::column(
                spec.name(),
                ColumnProblem::Type {
                    expected: expected.to_string(),
                    found: f.data_type().to_string(),
                },
            ));
        }
        if f.is_nullable() != spec.nullable() {
            return Err(BatchError::column(
                spec.name(),
                ColumnProblem::Nullability {
                    expected: spec.nullable(),
                },
            ));
        }
        if !f.metadata().is_empty() {
            return Err(BatchError::column(spec.name(), ColumnProblem::Metadata));
        }
    }
    if let Some(extra) = found.get(fields.len()) {
        return Err(BatchError::column(extra.name(), ColumnProblem::Extra));
    }
    Ok(())
}

/// A column holds no null where its field forbids one, and no list holds a null element.
fn check_nulls(name: &str, nullable: bool, column: &dyn Array) -> Result<(), BatchError> {
    if !nullable && column.logical_null_count() > 0 {
        return Err(BatchError::column(name, ColumnProblem::Null));
    }
    let values = match column.data_type() {
        DataType::List(_) => column
            .as_any()
            .downcast_ref::<ListArray>()
            .map(|l| l.values().clone()),
        DataType::FixedSizeList(..) => column
            .as_any()
            .downcast_ref::<FixedSizeListArray>()
            .map(|l| l.values().clone()),
        _ => None,
    };
    match values {
        Some(v) => check_nulls(name, false, v.as_ref()),
        None => Ok(()),
    }
}

/// Writes `batch` as one canonical Arrow IPC stream: schema, the batch, end-of-stream.
pub fn encode(batch: &RecordBatch) -> Result<Vec<u8>, BatchError> {
    let schema = batch.schema();
    let mut out = Vec::with_capacity(ipc_size_hint(batch));
    let mut w = StreamWriter::try_new(&mut out, &schema).map_err(ipc)?;
    w.write(batch).map_err(ipc)?;
    w.finish().map_err(ipc)?;
    drop(w);
    Ok(out)
}

/// Writes `batch` as one canonical Arrow IPC stream (the bytes [`encode`] returns) at the end
/// of `out`, and returns the stream's length. On an error `out` is left as it was.
pub fn encode_into(batch: &RecordBatch, out: &mut bytes::BytesMut) -> Result<usize, BatchError> {
    let start = out.len();
    out.reserve(ipc_size_hint(batch));
    let written = (|| {
        let mut w = StreamWriter::try_new(bytes::BufMut::writer(&mut *out), &batch.schema())?;
        w.write(batch)?;
        w.finish()
    })();
    match written {
        Ok(()) => Ok(out.len() - start),
        Err(e) => {
            out.truncate(start);
            Err(ipc(e))
        }
    }
}

pub(crate) fn ipc_size_hint(batch: &RecordBatch) -> usize {
    batch.get_array_memory_size().saturating_add(1024)
}

fn ipc(e: arrow_schema::ArrowError) -> BatchError {
    BatchError::Ipc(e.to_string())
}

/// Why a delivered Arrow IPC stream is not the one its consumer opened (EC-3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryFault {
    /// Arrow could not read the stream.
    #[error("not an Arrow IPC stream: {0}")]
    Ipc(String),
    /// The stream's schema is not the consumer's fields.
    #[error("the stream's schema does not match: {0}")]
    Schema(BatchError),
    /// Zero or several record batches.
    #[error("the stream holds {0} record batches, not one")]
    NotOneBatch(usize),
    /// The stream does not end with the end-of-stream marker, or has bytes after it.
    #[error("the stream does not end with its end-of-stream marker")]
    NoEnd,
    /// The row count is not the delivery's members.
    #[error("the batch holds {rows} rows, the delivery says {members}")]
    Members {
        /// Rows in the batch.
        rows: usize,
        /// The delivery's members.
        members: u32,
    },
}

/// Reads one delivery: exactly the schema of `fields`, exactly one record batch, the
/// end-of-stream marker and nothing after it, no null where none may be, and `members` rows.
pub fn decode(
    bytes: &[u8],
    fields: &[FieldSpec],
    members: u32,
) -> Result<RecordBatch, DeliveryFault> {
    let batch = decode_stream(bytes, fields)?;
    if batch.num_rows() != members as usize {
        return Err(DeliveryFault::Members {
            rows: batch.num_rows(),
            members,
        });
    }
    Ok(batch)
}

/// Reads one Arrow IPC stream of `fields` with any number of rows, with every check of
/// [`decode`] but the row count: a producer batch kept as bytes (a client journal's outbox)
/// is read back this way before it is submitted again.
pub fn decode_stream(bytes: &[u8], fields: &[FieldSpec]) -> Result<RecordBatch, DeliveryFault> {
    let fault = |e: arrow_schema::ArrowError| DeliveryFault::Ipc(e.to_string());
    if !bytes.ends_with(&END_OF_STREAM) {
        return Err(DeliveryFault::NoEnd);
    }
    check_framing(bytes, fields)?;
    let mut reader = StreamReader::try_new(Cursor::new(bytes), None).map_err(fault)?;
    let schema = reader.schema();
    if !schema.metadata().is_empty() {
        return Err(DeliveryFault::Schema(BatchError::SchemaMetadata));
    }
    check_fields(fields, schema.fields()).map_err(DeliveryFault::Schema)?;
    let batch = match reader.next() {
        Some(b) => b.map_err(fault)?,
        None => return Err(DeliveryFault::NotOneBatch(0)),
    };
    let mut more = 0;
    for b in reader.by_ref() {
        b.map_err(fault)?;
        more += 1;
    }
    if more > 0 {
        return Err(DeliveryFault::NotOneBatch(1 + more));
    }
    let read = usize::try_from(reader.get_ref().position()).unwrap_or(usize::MAX);
    if read != bytes.len() {
        return Err(DeliveryFault::NoEnd);
    }
    for (spec, column) in fields.iter().zip(batch.columns()) {
        check_nulls(spec.name(), spec.nullable(), column.as_ref())
            .map_err(DeliveryFault::Schema)?;
    }
    Ok(batch)
}

/// Walks a delivery's messages as the stream reader will, before it reads them: each is a
/// continuation marker, a positive metadata length, a verified `Message` and its whole body,
/// up to the end-of-stream marker. Every buffer of a record or dictionary batch lies inside its
/// message's body at an offset aligned to 8 bytes (as the format requires), an offsets buffer
/// of `fields` holds whole 32-bit values, no length exceeds
/// `u32::MAX`, and no batch is compressed: the reader slices a buffer without checking it
/// against the body, views it as typed values without checking its alignment or length, and multiplies
/// lengths without checking for overflow; each would panic on a hostile server's metadata.
fn check_framing(bytes: &[u8], fields: &[FieldSpec]) -> Result<(), DeliveryFault> {
    let mut offsets = Vec::new();
    for f in fields {
        offset_buffers(f.field_type(), &mut offsets);
    }
    let bad = |what: &str| Err(DeliveryFault::Ipc(format!("malformed IPC framing: {what}")));
    let word =
        |at: usize| -> Option<[u8; 4]> { bytes.get(at..at.checked_add(4)?)?.try_into().ok() };
    let mut at = 0usize;
    loop {
        if word(at) != Some([0xFF; 4]) {
            return bad("a message without its continuation marker");
        }
        let Some(len) = word(at + 4).map(i32::from_le_bytes) else {
            return bad("a cut metadata length");
        };
        at += 8;
        if len == 0 {
            return Ok(());
        }
        let Some(meta) = usize::try_from(len)
            .ok()
            .and_then(|len| bytes.get(at..at.checked_add(len)?))
        else {
            return bad("metadata beyond the stream");
        };
        let message = match arrow_ipc::root_as_message(meta) {
            Ok(m) => m,
            Err(e) => return Err(DeliveryFault::Ipc(e.to_string())),
        };
        at += meta.len();
        let Some(body) = usize::try_from(message.bodyLength())
            .ok()
            .filter(|len| at.checked_add(*len).is_some_and(|end| end <= bytes.len()))
        else {
            return bad("a body beyond the stream");
        };
        let batch = message
            .header_as_record_batch()
            .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()));
        if let Some(batch) = batch {
            if batch.compression().is_some() {
                return bad("a compressed batch");
            }
            // Rows and every column's length within what a delivery's members (a u32) can
            // be, so the reader's length arithmetic (a fixed list's length times its size)
            // cannot overflow, and a null count within its column.
            let rows = u64::from(u32::MAX);
            let lengths_fit = batch.nodes().iter().flatten().all(|n| {
                u64::try_from(n.length()).is_ok_and(|len| len <= rows)
                    && (0..=n.length()).contains(&n.null_count())
            });
            if !lengths_fit || !u64::try_from(batch.length()).is_ok_and(|len| len <= rows) {
                return bad("a length beyond what a delivery holds");
            }
            for (i, b) in batch.buffers().iter().flatten().enumerate() {
                // The reader views an offsets buffer whole as 32-bit values.
                if offsets.get(i).copied().unwrap_or(false) && b.length() % 4 != 0 {
                    return bad("an offsets buffer of a length not a multiple of 4");
                }
                let inside = u64::try_from(b.offset())
                    .ok()
                    .zip(u64::try_from(b.length()).ok())
                    .and_then(|(offset, length)| offset.checked_add(length))
                    .is_some_and(|end| end <= body as u64);
                if !inside {
                    return bad("a buffer outside its message's body");
                }
                if b.offset() % 8 != 0 {
                    return bad("a buffer not aligned to 8 bytes");
                }
            }
        }
        at += body;
    }
}

/// For each Arrow buffer of a column of type `t`, in the order a record batch lists them,
/// whether it holds 32-bit offsets.
fn offset_buffers(t: &FieldType, out: &mut Vec<bool>) {
    out.push(false); // validity
    match t {
        FieldType::Scalar(ScalarType::String | ScalarType::Bytes) => out.extend([true, false]),
        FieldType::Scalar(_) => out.push(false),
        FieldType::FixedList { element, .. } => offset_buffers(element, out),
        FieldType::List { element } => {
            out.push(true);
            offset_buffers(element, out);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The typed builder
// ---------------------------------------------------------------------------------------------

/// A `Datetime` value: signed nanoseconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Datetime(pub i64);

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values fill a column of one scalar type.
pub trait ColumnValue: sealed::Sealed + Sized {
    /// The scalar type this Rust type fills.
    const SCALAR: ScalarType;
    /// An Arrow array of `values`, with `nulls` where given.
    #[doc(hidden)]
    fn array(values: &[Self], nulls: Option<NullBuffer>) -> ArrayRef;
    /// A placeholder for a null slot.
    #[doc(hidden)]
    fn null_slot() -> Self;
    /// The bytes of variable-width values, which 32-bit offsets must address.
    #[doc(hidden)]
    fn heap_len(_values: &[Self]) -> usize {
        0
    }
    /// The bytes of the variable-width values that are not null.
    #[doc(hidden)]
    fn nullable_heap_len(_values: &[Option<Self>]) -> usize {
        0
    }
    /// An Arrow array of `values` where `nulls` (built from them) marks the `None`s; `heap`
    /// is their [`ColumnValue::nullable_heap_len`].
    #[doc(hidden)]
    fn nullable_array(values: &[Option<Self>], nulls: Option<NullBuffer>, _heap: usize) -> ArrayRef
    where
        Self: Copy,
    {
        let dense: Vec<Self> = values
            .iter()
            .map(|v| v.unwrap_or_else(Self::null_slot))
            .collect();
        Self::array(&dense, nulls)
    }
}

/// The validity of `values` (`None` is null), or none when no value is null.
fn validity<T>(values: &[Option<T>]) -> Option<NullBuffer> {
    if values.iter().all(Option::is_some) {
        return None;
    }
    let mut bits = vec![0u8; values.len().div_ceil(8)];
    for (byte, chunk) in bits.iter_mut().zip(values.chunks(8)) {
        *byte = chunk
            .iter()
            .enumerate()
            .fold(0u8, |b, (j, v)| b | (u8::from(v.is_some()) << j));
    }
    let bits = BooleanBuffer::new(Buffer::from_vec(bits), 0, values.len());
    Some(NullBuffer::new(bits))
}

/// Copies `v` into `data` at `at`. Short values, the common case of a text column, are copied
/// with two fixed-size writes instead of a call to copy a slice of unknown length.
#[inline]
fn copy_at(data: &mut [u8], at: usize, v: &[u8]) {
    let n = v.len();
    if (8..=16).contains(&n) {
        data[at..at + 8].copy_from_slice(&v[..8]);
        data[at + n - 8..at + n].copy_from_slice(&v[n - 8..]);
    } else {
        data[at..at + n].copy_from_slice(v);
    }
}

/// The offsets and bytes of variable-width values, a `None` as an empty value; `bytes` is
/// their total length, which the caller checked fits 32-bit offsets.
fn packed<'a>(
    values: impl ExactSizeIterator<Item = Option<&'a [u8]>>,
    bytes: usize,
) -> (OffsetBuffer<i32>, Buffer) {
    let mut offsets = vec![0i32; values.len() + 1];
    let mut data = vec![0u8; bytes];
    let mut at = 0;
    for (end, v) in offsets[1..].iter_mut().zip(values) {
        if let Some(v) = v {
            copy_at(&mut data, at, v);
            at += v.len();
        }
        *end = i32::try_from(at).unwrap_or(i32::MAX);
    }
    data.truncate(at);
    // SAFETY: the offsets start at 0 and each is the bytes written after one more value, so
    // they never decrease (what `OffsetBuffer::new` would check again); the caller checked the
    // data fits 32-bit offsets.
    let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) };
    (offsets, Buffer::from_vec(data))
}

/// The most bytes (or list elements) one column's 32-bit offsets address.
const OFFSET_LIMIT: usize = i32::MAX as usize;

fn within_offsets(name: &str, len: usize) -> Result<(), BatchError> {
    if len > OFFSET_LIMIT {
        return Err(BatchError::Column {
            column: name.to_string(),
            problem: ColumnProblem::Length {
                expected: OFFSET_LIMIT,
                found: len,
            },
        });
    }
    Ok(())
}

macro_rules! primitive_value {
    ($t:ty, $arrow:ty, $scalar:ident) => {
        impl sealed::Sealed for $t {}
        impl ColumnValue for $t {
            const SCALAR: ScalarType = ScalarType::$scalar;
            fn array(values: &[Self], nulls: Option<NullBuffer>) -> ArrayRef {
                Arc::new(PrimitiveArray::<$arrow>::new(
                    ScalarBuffer::from(values.to_vec()),
                    nulls,
                ))
            }
            fn null_slot() -> Self {
                <$t>::default()
            }
        }
    };
}

primitive_value!(u8, UInt8Type, U8);
primitive_value!(i8, Int8Type, I8);
primitive_value!(u16, UInt16Type, U16);
primitive_value!(i16, Int16Type, I16);
primitive_value!(u32, UInt32Type, U32);
primitive_value!(i32, Int32Type, I32);
primitive_value!(u64, UInt64Type, U64);
primitive_value!(i64, Int64Type, I64);
primitive_value!(f32, Float32Type, F32);
primitive_value!(f64, Float64Type, F64);

impl sealed::Sealed for bool {}
impl ColumnValue for bool {
    const SCALAR: ScalarType = ScalarType::Bool;
    fn array(values: &[Self], nulls: Option<NullBuffer>) -> ArrayRef {
        Arc::new(BooleanArray::new(values.iter().copied().collect(), nulls))
    }
    fn null_slot() -> Self {
        false
    }
}

impl sealed::Sealed for Datetime {}
impl ColumnValue for Datetime {
    const SCALAR: ScalarType = ScalarType::Datetime;
    fn array(values: &[Self], nulls: Option<NullBuffer>) -> ArrayRef {
        let v: Vec<i64> = values.iter().map(|d| d.0).collect();
        Arc::new(
            TimestampNanosecondArray::new(ScalarBuffer::from(v), nulls)
                .with_timezone(DATETIME_ZONE),
        )
    }
    fn null_slot() -> Self {
        Datetime(0)
    }
}

impl sealed::Sealed for &str {}
impl ColumnValue for &str {
    const SCALAR: ScalarType = ScalarType::String;
    fn array(values: &[Self], nulls: Option<NullBuffer>) -> ArrayRef {
        let bytes = Self::heap_len(values);
        let (offsets, data) = packed(values.iter().map(|s| Some(s.as_bytes())), bytes);
        // SAFETY: the bytes are whole `&str`s one after another, and every offset is at the
        // end of one of them, so each value is valid UTF-8 (what `new` would check again).
        Arc::new(unsafe { StringArray::new_unchecked(offsets, data, nulls) })
    }
    fn nullable_heap_len(values: &[Option<Self>]) -> usize {
        values
            .iter()
            .flatten()
            .map(|v| v.len())
            .fold(0, usize::saturating_add)
    }
    fn nullable_array(values: &[Option<Self>], nulls: Option<NullBuffer>, heap: usize) -> ArrayRef {
        let (offsets, data) = packed(values.iter().map(|s| s.map(str::as_bytes)), heap);
        // SAFETY: as in `array`: whole `&str`s, a null being an empty one.
        Arc::new(unsafe { StringArray::new_unchecked(offsets, data, nulls) })
    }
    fn null_slot() -> Self {
        ""
    }
    fn heap_len(values: &[Self]) -> usize {
        values
            .iter()
            .map(|v| v.len())
            .fold(0, usize::saturating_add)
    }
}

impl sealed::Sealed for &[u8] {}
impl ColumnValue for &[u8] {
    const SCALAR: ScalarType = ScalarType::Bytes;
    fn array(values: &[Self], nulls: Option<NullBuffer>) -> ArrayRef {
        let bytes = Self::heap_len(values);
        let (offsets, data) = packed(values.iter().map(|s| Some(*s)), bytes);
        Arc::new(BinaryArray::new(offsets, data, nulls))
    }
    fn nullable_heap_len(values: &[Option<Self>]) -> usize {
        values
            .iter()
            .flatten()
            .map(|v| v.len())
            .fold(0, usize::saturating_add)
    }
    fn nullable_array(values: &[Option<Self>], nulls: Option<NullBuffer>, heap: usize) -> ArrayRef {
        let (offsets, data) = packed(values.iter().copied(), heap);
        Arc::new(BinaryArray::new(offsets, data, nulls))
    }
    fn null_slot() -> Self {
        &[]
    }
    fn heap_len(values: &[Self]) -> usize {
        values
            .iter()
            .map(|v| v.len())
            .fold(0, usize::saturating_add)
    }
}

/// Builds one batch for an endpoint's fields, column by column, from typed values.
///
/// Every column is given its values exactly once, by name: [`BatchBuilder::column`] for a
/// scalar field, [`BatchBuilder::nullable_column`] for a nullable one (`None` is null),
/// [`BatchBuilder::list_column`] for a list of scalars (a fixed list takes lists of exactly its
/// length). Each call is checked against the field it names: its type, nullability, and the
/// row count of the columns before it. Lists of lists and other shapes are given as an
/// application's [`RecordBatch`] instead.
#[derive(Debug, Clone)]
pub struct BatchBuilder {
    fields: Arc<[FieldSpec]>,
    schema: SchemaRef,
    columns: Vec<Option<ArrayRef>>,
    rows: Option<usize>,
}

impl BatchBuilder {
    /// A builder for these fields (a producer's description).
    pub fn new(fields: Arc<[FieldSpec]>) -> Self {
        let schema = arrow_schema(&fields);
        let columns = vec![None; fields.len()];
        Self {
            fields,
            schema,
            columns,
            rows: None,
        }
    }

    /// The fields the builder builds.
    pub fn fields(&self) -> &[FieldSpec] {
        &self.fields
    }

    /// The rows given so far (those of the first column given).
    pub fn rows(&self) -> usize {
        self.rows.unwrap_or(0)
    }

    fn slot(&self, name: &str, scalar: ScalarType, list: bool) -> Result<usize, BatchError> {
        let Some(i) = self.fields.iter().position(|f| f.name() == name) else {
            return Err(BatchError::column(name, ColumnProblem::Extra));
        };
        let spec = &self.fields[i];
        if self.columns[i].is_some() {
            return Err(BatchError::column(name, ColumnProblem::NotSetOnce));
        }
        let found = match (list, spec.field_type()) {
            (false, FieldType::Scalar(s)) => Some(*s),
            (true, FieldType::List { element } | FieldType::FixedList { element, .. }) => {
                match element.as_ref() {
                    FieldType::Scalar(s) => Some(*s),
                    _ => return Err(BatchError::column(name, ColumnProblem::Unsupported)),
                }
            }
            _ => None,
        };
        if found != Some(scalar) {
            let given = if list {
                FieldType::List {
                    element: Box::new(FieldType::Scalar(scalar)),
                }
            } else {
                FieldType::Scalar(scalar)
            };
            return Err(BatchError::column(
                name,
                ColumnProblem::Type {
                    expected: arrow_type(spec.field_type()).to_string(),
                    found: arrow_type(&given).to_string(),
                },
            ));
        }
        Ok(i)
    }

    fn put(&mut self, i: usize, array: ArrayRef) -> Result<(), BatchError> {
        let len = array.len();
        if let Some(rows) = self.rows {
            if rows != len {
                return Err(BatchError::column(
                    self.fields[i].name(),
                    ColumnProblem::Length {
                        expected: rows,
                        found: len,
                    },
                ));
            }
        }
        self.rows = Some(len);
        self.columns[i] = Some(array);
        Ok(())
    }

    /// Gives the values of the non-nullable or nullable scalar column `name`, none null.
    pub fn column<T: ColumnValue>(&mut self, name: &str, values: &[T]) -> Result<(), BatchError> {
        let i = self.slot(name, T::SCALAR, false)?;
        within_offsets(name, T::heap_len(values))?;
        self.put(i, T::array(values, None))
    }

    /// Gives the values of the nullable scalar column `name`; `None` is null.
    pub fn nullable_column<T: ColumnValue + Copy>(
        &mut self,
        name: &str,
        values: &[Option<T>],
    ) -> Result<(), BatchError> {
        let i = self.slot(name, T::SCALAR, false)?;
        let heap = T::nullable_heap_len(values);
        within_offsets(name, heap)?;
        let nulls = validity(values);
        if nulls.is_some() && !self.fields[i].nullable() {
            return Err(BatchError::column(name, ColumnProblem::Null));
        }
        self.put(i, T::nullable_array(values, nulls, heap))
    }

    /// Gives the lists of the list column `name`, one per row; `None` is a null row of a
    /// nullable column. Elements are never null. A fixed list takes lists of exactly its
    /// length.
    pub fn list_column<T: ColumnValue + Copy>(
        &mut self,
        name: &str,
        lists: &[Option<&[T]>],
    ) -> Result<(), BatchError> {
        let i = self.slot(name, T::SCALAR, true)?;
        let spec = &self.fields[i];
        let any_null = lists.iter().any(Option::is_none);
        if any_null && !spec.nullable() {
            return Err(BatchError::column(name, ColumnProblem::Null));
        }
        let nulls = any_null.then(|| NullBuffer::from_iter(lists.iter().map(Option::is_some)));
        let item = Arc::new(Field::new(LIST_ITEM, scalar_type(T::SCALAR), false));
        let array: ArrayRef = match spec.field_type() {
            FieldType::FixedList { length, .. } => {
                let n = length.get() as usize;
                let mut flat = Vec::with_capacity(lists.len() * n);
                for l in lists {
                    match l {
                        Some(l) if l.len() == n => flat.extend_from_slice(l),
                        Some(l) => {
                            return Err(BatchError::column(
                                name,
                                ColumnProblem::Length {
                                    expected: n,
                                    found: l.len(),
                                },
                            ))
                        }
                        None => flat.extend(std::iter::repeat_n(T::null_slot(), n)),
                    }
                }
                within_offsets(name, T::heap_len(&flat))?;
                let values = T::array(&flat, None);
                let size = i32::try_from(n).unwrap_or(i32::MAX);
                Arc::new(
                    FixedSizeListArray::try_new(item, size, values, nulls)
                        .map_err(|e| BatchError::Ipc(e.to_string()))?,
                )
            }
            _ => {
                let elements = lists.iter().flatten().map(|l| l.len());
                within_offsets(name, elements.fold(0, usize::saturating_add))?;
                let elements = lists.iter().flatten().map(|l| T::heap_len(l));
                within_offsets(name, elements.fold(0, usize::saturating_add))?;
                let offsets = OffsetBuffer::<i32>::from_lengths(
                    lists.iter().map(|l| l.map_or(0, <[T]>::len)),
                );
                let mut flat = Vec::with_capacity(offsets.last().unsigned_abs() as usize);
                for l in lists.iter().flatten() {
                    flat.extend_from_slice(l);
                }
                let values = T::array(&flat, None);
                Arc::new(
                    ListArray::try_new(item, offsets, values, nulls)
                        .map_err(|e| BatchError::Ipc(e.to_string()))?,
                )
            }
        };
        self.put(i, array)
    }

    /// The batch, once every column has been given.
    pub fn finish(self) -> Result<RecordBatch, BatchError> {
        let mut columns = Vec::with_capacity(self.columns.len());
        for (spec, c) in self.fields.iter().zip(self.columns) {
            match c {
                Some(c) => columns.push(c),
                None => return Err(BatchError::column(spec.name(), ColumnProblem::NotSetOnce)),
            }
        }
        RecordBatch::try_new(self.schema, columns).map_err(|e| BatchError::Ipc(e.to_string()))
    }
}
