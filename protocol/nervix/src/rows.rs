//! Typed rows of a subscription.
//!
//! The reply that opens a subscription carries its [`RowSchema`]; every later batch is
//! positional against it. [`RowSchema::from_view`] copies that schema out of its frame once and
//! compiles it into a flat form, and [`CheckedBatch::check`] checks a `SubscriptionRows` frame
//! against it before any value can be read: the frame is kept as it is, and every value is
//! read from it without a copy ([`RowView`], [`Value`]). [`CheckedBatch::to_owned_rows`] copies
//! the values out when they must outlive the frame.
//!
//! Nothing is converted while reading: an integer keeps its width and signedness, a
//! DATETIME is signed nanoseconds since the Unix epoch, text is the frame's UTF-8 (NUL
//! included), and bytes are the frame's octets. Null, withheld and present values are distinct
//! variants, and floats keep their exact bits.
//!
//! Which schema a batch is read against is the caller's choice, made by the batch's complete
//! subscription handle (R-1, S-3): [`CheckedBatch::check`] uses exactly the schema it is given.

use crate::frame::ServerFrame;
use crate::schema;
use crate::schema::CellValue;
use crate::violation::{Fault, ProtocolViolation, Site};
use flatbuffers::{ForwardsUOffset, Vector};
use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;

/// Reads the union member of `cell` as the table `T` its tag names.
macro_rules! member {
    ($cell:expr, $t:ident) => {
        // SAFETY: the cell's tag names this table, and the frame was verified, so the union
        // member is a valid table of this type (as the generated `value_as_*` accessors assume).
        unsafe { schema::$t::init_from_table($cell.value()) }
    };
}

/// Field types nest at most this deep (a list of lists of ...); the verifier's nesting limit
/// of 64 tables allows fewer levels than this, so the bound never refuses a checked frame.
const MAX_TYPE_DEPTH: usize = 64;

/// A scalar type of a field.
///
/// Exhaustive on purpose, like [`FieldType`] and [`Value`]: these mirror the closed set of
/// types one schema release declares, and a reader has to handle every one of them. A release
/// that adds a type changes what a conforming reader must do, so it should break every match
/// at compile time rather than fall into a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 64-bit integer.
    U64,
    /// Signed 64-bit integer.
    I64,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// Boolean.
    Bool,
    /// UTF-8 text, NUL allowed.
    String,
    /// Signed nanoseconds since the Unix epoch, UTC.
    Datetime,
    /// Raw octets.
    Bytes,
}

impl ScalarType {
    /// The cell variant a present value of this type is carried in.
    pub fn cell(self) -> CellValue {
        match self {
            ScalarType::U8 => CellValue::U8Cell,
            ScalarType::I8 => CellValue::I8Cell,
            ScalarType::U16 => CellValue::U16Cell,
            ScalarType::I16 => CellValue::I16Cell,
            ScalarType::U32 => CellValue::U32Cell,
            ScalarType::I32 => CellValue::I32Cell,
            ScalarType::U64 => CellValue::U64Cell,
            ScalarType::I64 => CellValue::I64Cell,
            ScalarType::F32 => CellValue::F32Cell,
            ScalarType::F64 => CellValue::F64Cell,
            ScalarType::Bool => CellValue::BoolCell,
            ScalarType::String => CellValue::StringCell,
            ScalarType::Datetime => CellValue::DatetimeCell,
            ScalarType::Bytes => CellValue::BytesCell,
        }
    }

    fn to_wire(self) -> schema::ScalarType {
        match self {
            ScalarType::U8 => schema::ScalarType::U8,
            ScalarType::I8 => schema::ScalarType::I8,
            ScalarType::U16 => schema::ScalarType::U16,
            ScalarType::I16 => schema::ScalarType::I16,
            ScalarType::U32 => schema::ScalarType::U32,
            ScalarType::I32 => schema::ScalarType::I32,
            ScalarType::U64 => schema::ScalarType::U64,
            ScalarType::I64 => schema::ScalarType::I64,
            ScalarType::F32 => schema::ScalarType::F32,
            ScalarType::F64 => schema::ScalarType::F64,
            ScalarType::Bool => schema::ScalarType::Bool,
            ScalarType::String => schema::ScalarType::String,
            ScalarType::Datetime => schema::ScalarType::Datetime,
            ScalarType::Bytes => schema::ScalarType::Bytes,
        }
    }

    fn from_wire(t: schema::ScalarType) -> Option<Self> {
        Some(match t {
            schema::ScalarType::U8 => ScalarType::U8,
            schema::ScalarType::I8 => ScalarType::I8,
            schema::ScalarType::U16 => ScalarType::U16,
            schema::ScalarType::I16 => ScalarType::I16,
            schema::ScalarType::U32 => ScalarType::U32,
            schema::ScalarType::I32 => ScalarType::I32,
            schema::ScalarType::U64 => ScalarType::U64,
            schema::ScalarType::I64 => ScalarType::I64,
            schema::ScalarType::F32 => ScalarType::F32,
            schema::ScalarType::F64 => ScalarType::F64,
            schema::ScalarType::Bool => ScalarType::Bool,
            schema::ScalarType::String => ScalarType::String,
            schema::ScalarType::Datetime => ScalarType::Datetime,
            schema::ScalarType::Bytes => ScalarType::Bytes,
            _ => return None,
        })
    }
}

/// The declared type of a field or of a list's elements. Exhaustive for the reason given on
/// [`ScalarType`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// One scalar value.
    Scalar(ScalarType),
    /// A list of exactly `length` elements.
    FixedList {
        /// The elements' type.
        element: Box<FieldType>,
        /// The element count.
        length: NonZeroU32,
    },
    /// A list of any length.
    List {
        /// The elements' type.
        element: Box<FieldType>,
    },
}

impl FieldType {
    /// The cell variant a present value of this type is carried in.
    pub fn cell(&self) -> CellValue {
        match self {
            FieldType::Scalar(s) => s.cell(),
            FieldType::FixedList { .. } | FieldType::List { .. } => CellValue::ListCell,
        }
    }
}

/// One field of a schema (a row field or a branch key field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    name: String,
    field_type: FieldType,
    nullable: bool,
    sensitive: bool,
}

impl FieldSpec {
    /// A field as the application describes it, for an endpoint it opens (a producer's or a
    /// consumer's exact fields, P-1, EC-1).
    pub fn new(
        name: impl Into<String>,
        field_type: FieldType,
        nullable: bool,
        sensitive: bool,
    ) -> Self {
        Self {
            name: name.into(),
            field_type,
            nullable,
            sensitive,
        }
    }

    /// Copies a field out of a checked frame.
    pub fn from_view(field: schema::RowField<'_>) -> Result<Self, ProtocolViolation> {
        let mut shapes = Vec::new();
        compile_field(field, &mut shapes).map(|(spec, _)| spec)
    }

    /// The field as it travels in a request.
    pub fn to_wire(&self) -> schema::RowFieldT {
        schema::RowFieldT {
            name: self.name.clone(),
            field_type: Box::new(type_to_wire(&self.field_type)),
            nullable: self.nullable,
            sensitive: self.sensitive,
        }
    }

    /// The field's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The field's declared type.
    pub fn field_type(&self) -> &FieldType {
        &self.field_type
    }

    /// Whether the field may hold NullCell.
    pub fn nullable(&self) -> bool {
        self.nullable
    }

    /// Whether the field's value is always withheld (RedactedCell in every row).
    pub fn sensitive(&self) -> bool {
        self.sensitive
    }
}

/// The branch a branched relay declares, with its key fields in key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchSpec {
    name: String,
    key_fields: Vec<FieldSpec>,
}

impl BranchSpec {
    /// The branch's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key fields, in key order; never empty.
    pub fn key_fields(&self) -> &[FieldSpec] {
        &self.key_fields
    }
}

/// The compiled form of one (element) type: the cell variant it takes, and for a list its
/// length and element shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    tag: CellValue,
    /// Required element count of a fixed-length list; 0 for any length.
    fixed: u32,
    /// Index of the element shape in [`RowSchema::shapes`] (lists only).
    element: u32,
}

/// The compiled form of one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    shape: Shape,
    nullable: bool,
    sensitive: bool,
}

/// An owned, compiled copy of a subscription's `RowSchema`.
///
/// The schema arrives once, in the reply that opens the subscription, and batches follow in
/// other frames, so it is copied out of its frame. Compare schemas with `==`: two schemas are
/// equal when every field, type, flag and the branch are.
#[derive(Debug, Clone)]
pub struct RowSchema {
    fields: Vec<FieldSpec>,
    branch: Option<BranchSpec>,
    field_slots: Vec<Slot>,
    key_slots: Vec<Slot>,
    shapes: Vec<Shape>,
}

impl PartialEq for RowSchema {
    fn eq(&self, other: &Self) -> bool {
        self.fields == other.fields && self.branch == other.branch
    }
}

impl Eq for RowSchema {}

impl RowSchema {
    /// Copies and compiles a schema view. The wire layer has checked the view's required
    /// members and marks; a type the schema does not declare, or a nesting deeper than any
    /// checked frame can hold, is still reported as a typed violation rather than a panic.
    pub fn from_view(schema: schema::RowSchema<'_>) -> Result<RowSchema, ProtocolViolation> {
        let mut shapes = Vec::new();
        let mut fields = Vec::with_capacity(schema.fields().len());
        let mut field_slots = Vec::with_capacity(schema.fields().len());
        for f in schema.fields().iter() {
            let (spec, slot) = compile_field(f, &mut shapes)?;
            fields.push(spec);
            field_slots.push(slot);
        }
        let mut key_slots = Vec::new();
        let branch = match schema.branch() {
            None => None,
            Some(b) => {
                let mut key_fields = Vec::with_capacity(b.fields().len());
                for f in b.fields().iter() {
                    let (spec, slot) = compile_field(f, &mut shapes)?;
                    key_fields.push(spec);
                    key_slots.push(slot);
                }
                if key_fields.is_empty() {
                    return Err(ProtocolViolation::field(
                        Site::new("RowBranch", "fields"),
                        Fault::Empty,
                    ));
                }
                Some(BranchSpec {
                    name: b.branch().to_owned(),
                    key_fields,
                })
            }
        };
        Ok(RowSchema {
            fields,
            branch,
            field_slots,
            key_slots,
            shapes,
        })
    }

    /// The fields, in declared order: one cell per field in every row.
    pub fn fields(&self) -> &[FieldSpec] {
        &self.fields
    }

    /// The declared branch with its key fields; present exactly when the relay is branched.
    pub fn branch(&self) -> Option<&BranchSpec> {
        self.branch.as_ref()
    }

    /// The index of the field named `name`, if the schema has one (the first, if several).
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

fn compile_field(
    field: schema::RowField<'_>,
    shapes: &mut Vec<Shape>,
) -> Result<(FieldSpec, Slot), ProtocolViolation> {
    let field_type = compile_type(field.field_type(), 0)?;
    let shape = shape_of(&field_type, shapes);
    Ok((
        FieldSpec {
            name: field.name().to_owned(),
            field_type,
            nullable: field.nullable(),
            sensitive: field.sensitive(),
        },
        Slot {
            shape,
            nullable: field.nullable(),
            sensitive: field.sensitive(),
        },
    ))
}

/// A [`FieldType`] as it travels in a request.
fn type_to_wire(t: &FieldType) -> schema::FieldTypeT {
    let shape = match t {
        FieldType::Scalar(s) => {
            schema::FieldTypeShapeT::ScalarFieldType(Box::new(schema::ScalarFieldTypeT {
                scalar: Some(s.to_wire()),
            }))
        }
        FieldType::FixedList { element, length } => {
            schema::FieldTypeShapeT::FixedListFieldType(Box::new(schema::FixedListFieldTypeT {
                element: Box::new(type_to_wire(element)),
                length: length.get(),
            }))
        }
        FieldType::List { element } => {
            schema::FieldTypeShapeT::ListFieldType(Box::new(schema::ListFieldTypeT {
                element: Box::new(type_to_wire(element)),
            }))
        }
    };
    schema::FieldTypeT { shape }
}

/// Reads a type view into a [`FieldType`].
fn compile_type(t: schema::FieldType<'_>, depth: usize) -> Result<FieldType, ProtocolViolation> {
    if depth >= MAX_TYPE_DEPTH {
        return Err(ProtocolViolation::field(
            Site::new("FieldType", "shape"),
            Fault::TooDeep,
        ));
    }
    if let Some(s) = t.shape_as_scalar_field_type() {
        let site = Site::new("ScalarFieldType", "scalar");
        let raw = s
            .scalar()
            .ok_or_else(|| ProtocolViolation::field(site, Fault::Absent))?;
        let scalar = ScalarType::from_wire(raw).ok_or_else(|| {
            ProtocolViolation::field(
                site,
                Fault::UndeclaredEnum {
                    value: u64::from(raw.0),
                },
            )
        })?;
        return Ok(FieldType::Scalar(scalar));
    }
    if let Some(l) = t.shape_as_fixed_list_field_type() {
        let length = NonZeroU32::new(l.length()).ok_or_else(|| {
            ProtocolViolation::field(Site::new("FixedListFieldType", "length"), Fault::Zero)
        })?;
        let element = compile_type(l.element(), depth + 1)?;
        return Ok(FieldType::FixedList {
            element: Box::new(element),
            length,
        });
    }
    if let Some(l) = t.shape_as_list_field_type() {
        let element = compile_type(l.element(), depth + 1)?;
        return Ok(FieldType::List {
            element: Box::new(element),
        });
    }
    let tag = t.shape_type().0;
    Err(ProtocolViolation::field(
        Site::new("FieldType", "shape"),
        if tag == 0 {
            Fault::NoneUnion
        } else {
            Fault::UndeclaredUnion { tag }
        },
    ))
}

/// The shape of `t`; list element shapes are appended to `shapes` (innermost first).
fn shape_of(t: &FieldType, shapes: &mut Vec<Shape>) -> Shape {
    let (element, fixed) = match t {
        FieldType::Scalar(s) => {
            return Shape {
                tag: s.cell(),
                fixed: 0,
                element: 0,
            }
        }
        FieldType::FixedList { element, length } => (element, length.get()),
        FieldType::List { element } => (element, 0),
    };
    let inner = shape_of(element, shapes);
    // A schema has fewer shapes than its frame has bytes, far below u32::MAX.
    let index = u32::try_from(shapes.len()).unwrap_or(u32::MAX);
    shapes.push(inner);
    Shape {
        tag: CellValue::ListCell,
        fixed,
        element: index,
    }
}

// ---------------------------------------------------------------------------------------------
// Violations
// ---------------------------------------------------------------------------------------------

/// Which part of a batch a cell belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// The row of this index.
    Row(usize),
    /// The batch's branch key.
    BranchKey,
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Row(i) => write!(f, "row {i}"),
            Part::BranchKey => write!(f, "the branch key"),
        }
    }
}

/// Where a faulty cell is: its part, its field, and inside nested lists the element indices
/// from the outermost list inwards (empty for the field's own cell).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CellAt {
    /// The row, or the branch key.
    pub part: Part,
    /// The field's index in the schema (or in the branch's key fields).
    pub field: usize,
    /// Element indices into nested lists, outermost first.
    pub elements: Vec<usize>,
}

impl fmt::Display for CellAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, field {}", self.part, self.field)?;
        for e in &self.elements {
            write!(f, ", element {e}")?;
        }
        Ok(())
    }
}

/// What is wrong with one cell.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum CellFault {
    /// A sensitive field holds something other than RedactedCell.
    #[error("a sensitive field holds {found:?}, not RedactedCell")]
    NotRedacted {
        /// The cell variant found.
        found: CellValue,
    },
    /// A field that is not sensitive holds RedactedCell.
    #[error("a field that is not sensitive holds RedactedCell")]
    Redacted,
    /// A field that is not nullable holds NullCell.
    #[error("a field that is not nullable holds NullCell")]
    Null,
    /// A cell of another variant than its declared type's.
    #[error("holds {found:?}, the declared type takes {expected:?}")]
    WrongType {
        /// The variant the declared type takes.
        expected: CellValue,
        /// The variant found.
        found: CellValue,
    },
    /// A fixed-length list with another number of elements.
    #[error("a fixed-length list of {expected} holds {found} elements")]
    ListLength {
        /// The declared length.
        expected: u32,
        /// The number of elements found.
        found: usize,
    },
    /// A list element is NullCell.
    #[error("a list element is NullCell")]
    NullElement,
    /// A list element is RedactedCell.
    #[error("a list element is RedactedCell")]
    RedactedElement,
}

/// How a batch fails to conform to its schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RowViolation {
    /// The frame handed to the check does not carry SubscriptionRows.
    #[error("a {found} frame is not SubscriptionRows")]
    NotRows {
        /// The body variant found.
        found: &'static str,
    },
    /// A batch of a branched relay without a branch key.
    #[error("a batch of a branched relay carries no branch key")]
    MissingBranchKey,
    /// A batch of an unbranched relay with a branch key.
    #[error("a batch of an unbranched relay carries a branch key")]
    UnexpectedBranchKey,
    /// A row or branch key with another number of cells than the schema has fields.
    #[error("{part} holds {found} cells, the schema declares {expected}")]
    CellCount {
        /// The row or the branch key.
        part: Part,
        /// The number of fields declared.
        expected: usize,
        /// The number of cells found.
        found: usize,
    },
    /// A cell that breaks its field's rules.
    #[error("{at}: {fault}")]
    Cell {
        /// Where the cell is.
        at: CellAt,
        /// What is wrong with it.
        fault: CellFault,
    },
}

impl RowViolation {
    /// The manual's rule the violation breaks: always R-2.
    pub fn rule(&self) -> &'static str {
        "R-2"
    }
}

#[cold]
#[inline(never)]
fn violation(v: RowViolation) -> ProtocolViolation {
    ProtocolViolation::Rows(Box::new(v))
}

/// A fault found inside a list, with the element path built innermost first on the way out.
struct Inner {
    elements: Vec<usize>,
    fault: CellFault,
}

#[cold]
#[inline(never)]
fn element_fault(index: usize, found: CellValue, expected: CellValue) -> Inner {
    let fault = match found {
        CellValue::NullCell => CellFault::NullElement,
        CellValue::RedactedCell => CellFault::RedactedElement,
        _ => CellFault::WrongType { expected, found },
    };
    Inner {
        elements: vec![index],
        fault,
    }
}

#[cold]
#[inline(never)]
fn length_fault(expected: u32, found: usize) -> Inner {
    Inner {
        elements: Vec::new(),
        fault: CellFault::ListLength { expected, found },
    }
}

#[cold]
#[inline(never)]
fn in_element(index: usize, mut inner: Inner) -> Inner {
    inner.elements.push(index);
    inner
}

/// Classifies a field cell whose variant is not simply its type's (or whose field is
/// sensitive): `None` when it conforms (a withheld sensitive value, a null of a nullable field).
#[cold]
#[inline(never)]
fn slot_fault(slot: &Slot, found: CellValue) -> Option<CellFault> {
    if slot.sensitive {
        return (found != CellValue::RedactedCell).then_some(CellFault::NotRedacted { found });
    }
    match found {
        CellValue::RedactedCell => Some(CellFault::Redacted),
        CellValue::NullCell if slot.nullable => None,
        CellValue::NullCell => Some(CellFault::Null),
        _ => Some(CellFault::WrongType {
            expected: slot.shape.tag,
            found,
        }),
    }
}

type Cells<'a> = Vector<'a, ForwardsUOffset<schema::Cell<'a>>>;

/// Checks the elements of a list cell against its shape, recursively.
fn check_list(cell: schema::Cell<'_>, shape: Shape, shapes: &[Shape]) -> Result<(), Inner> {
    let elements = member!(cell, ListCell).elements();
    if shape.fixed != 0 && elements.len() != shape.fixed as usize {
        return Err(length_fault(shape.fixed, elements.len()));
    }
    // Every list shape's element was recorded when the schema was compiled; the fallback
    // (a shape no cell matches) is never taken.
    let element = shapes
        .get(shape.element as usize)
        .copied()
        .unwrap_or(Shape {
            tag: CellValue::NONE,
            fixed: 0,
            element: 0,
        });
    for (j, e) in elements.iter().enumerate() {
        let tag = e.value_type();
        if tag != element.tag {
            return Err(element_fault(j, tag, element.tag));
        }
        if tag == CellValue::ListCell {
            check_list(e, element, shapes).map_err(|inner| in_element(j, inner))?;
        }
    }
    Ok(())
}

/// Checks one row or branch key against its slots.
fn check_cells(
    cells: Cells<'_>,
    slots: &[Slot],
    shapes: &[Shape],
    part: Part,
) -> Result<(), ProtocolViolation> {
    if cells.len() != slots.len() {
        return Err(violation(RowViolation::CellCount {
            part,
            expected: slots.len(),
            found: cells.len(),
        }));
    }
    for (field, (cell, slot)) in cells.iter().zip(slots).enumerate() {
        let tag = cell.value_type();
        if tag == slot.shape.tag && !slot.sensitive {
            if tag == CellValue::ListCell {
                if let Err(inner) = check_list(cell, slot.shape, shapes) {
                    return Err(cell_violation(part, field, inner));
                }
            }
        } else if let Some(fault) = slot_fault(slot, tag) {
            return Err(cell_violation(
                part,
                field,
                Inner {
                    elements: Vec::new(),
                    fault,
                },
            ));
        }
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn cell_violation(part: Part, field: usize, inner: Inner) -> ProtocolViolation {
    let mut elements = inner.elements;
    elements.reverse();
    violation(RowViolation::Cell {
        at: CellAt {
            part,
            field,
            elements,
        },
        fault: inner.fault,
    })
}

/// Checks `batch` against `schema`, walking every cell once and allocating nothing
/// unless it fails.
pub fn check_batch(
    batch: schema::RowBatch<'_>,
    schema: &RowSchema,
) -> Result<(), ProtocolViolation> {
    check_rows(batch, schema, false)
}

/// [`check_batch`]; with `alike` (the frame check found every row like the first: the same
/// cell count, the same variant at each place, no list) only the first row is walked, since
/// a row's verdict depends on nothing else and every row's is therefore the first's.
fn check_rows(
    batch: schema::RowBatch<'_>,
    schema: &RowSchema,
    alike: bool,
) -> Result<(), ProtocolViolation> {
    match (batch.branch_key(), schema.branch.is_some()) {
        (Some(key), true) => check_cells(
            key.cells(),
            &schema.key_slots,
            &schema.shapes,
            Part::BranchKey,
        )?,
        (None, false) => {}
        (None, true) => return Err(violation(RowViolation::MissingBranchKey)),
        (Some(_), false) => return Err(violation(RowViolation::UnexpectedBranchKey)),
    }
    let rows = batch.rows();
    let walked = if alike { rows.len().min(1) } else { rows.len() };
    for (i, row) in rows.iter().take(walked).enumerate() {
        check_cells(
            row.cells(),
            &schema.field_slots,
            &schema.shapes,
            Part::Row(i),
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Checked batches and values
// ---------------------------------------------------------------------------------------------

/// A `SubscriptionRows` frame whose batch was checked against a schema.
///
/// It keeps the frame itself (its `Bytes` keep the bytes alive) and a shared handle on the
/// schema; rows and values are read from the frame without a copy.
#[derive(Debug, Clone)]
pub struct CheckedBatch {
    frame: ServerFrame,
    schema: Arc<RowSchema>,
    /// Where the batch table starts in the frame.
    batch_loc: usize,
}

impl CheckedBatch {
    /// Checks the batch `frame` carries against `schema`.
    ///
    /// Fails with [`ProtocolViolation::Rows`] (rule R-2) if the frame's body is not
    /// `SubscriptionRows`, or if its batch does not conform to `schema`; no value of such a
    /// batch can be read. The schema must be the one of the generation the frame names;
    /// the check uses exactly the schema it is given.
    pub fn check(frame: ServerFrame, schema: Arc<RowSchema>) -> Result<Self, ProtocolViolation> {
        let batch_loc = {
            let view = frame.view();
            let Some(rows) = view.body_as_subscription_rows() else {
                return Err(violation(RowViolation::NotRows {
                    found: view.body_type().variant_name().unwrap_or("undeclared"),
                }));
            };
            let batch = rows.batch();
            check_rows(batch, &schema, frame.rows_alike())?;
            batch._tab.loc()
        };
        Ok(Self {
            frame,
            schema,
            batch_loc,
        })
    }

    fn batch(&self) -> schema::RowBatch<'_> {
        // SAFETY: `batch_loc` is where `check` found this frame's RowBatch table, and the frame
        // passed verification and is immutable, so a RowBatch still starts there.
        unsafe {
            <schema::RowBatch<'_> as flatbuffers::Follow<'_>>::follow(
                self.frame.bytes(),
                self.batch_loc,
            )
        }
    }

    fn handle(&self) -> Option<schema::SubscriptionHandle<'_>> {
        self.frame
            .view()
            .body_as_subscription_rows()
            .map(|r| r.subscription())
    }

    /// The schema the batch was checked against.
    pub fn schema(&self) -> &RowSchema {
        &self.schema
    }

    /// The shared schema the batch was checked against.
    pub fn schema_arc(&self) -> &Arc<RowSchema> {
        &self.schema
    }

    /// The subscription name the frame names.
    pub fn subscription(&self) -> &str {
        self.handle().map_or("", |h| h.name())
    }

    /// The subscription generation the frame names.
    pub fn generation(&self) -> u64 {
        self.handle().map_or(0, |h| h.generation())
    }

    /// The number of rows (at least one in a checked frame).
    pub fn len(&self) -> usize {
        self.batch().rows().len()
    }

    /// Whether the batch holds no rows; never true of a checked frame.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of cells in the rows: rows times fields (list elements not counted).
    pub fn cell_count(&self) -> usize {
        self.len() * self.schema.fields.len()
    }

    /// The rows, in order, read in place.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = RowView<'_>> + '_ {
        let fields = &self.schema.fields[..];
        self.batch()
            .rows()
            .iter()
            .map(move |r| RowView::new(r.cells(), fields))
    }

    /// The row at `i`, if there is one.
    pub fn row(&self, i: usize) -> Option<RowView<'_>> {
        let rows = self.batch().rows();
        (i < rows.len()).then(|| RowView::new(rows.get(i).cells(), &self.schema.fields))
    }

    /// The branch key's cells, one per key field, when the relay is branched.
    pub fn branch_key(&self) -> Option<RowView<'_>> {
        let branch = self.schema.branch.as_ref()?;
        let key = self.batch().branch_key()?;
        Some(RowView::new(key.cells(), &branch.key_fields))
    }

    /// Copies every value out of the frame.
    pub fn to_owned_rows(&self) -> OwnedBatch {
        OwnedBatch {
            subscription: self.subscription().to_owned(),
            generation: self.generation(),
            schema: Arc::clone(&self.schema),
            branch_key: self.branch_key().map(|k| k.to_owned_values()),
            rows: self.rows().map(|r| r.to_owned_values()).collect(),
        }
    }

    /// The frame the batch came in.
    pub fn frame(&self) -> &ServerFrame {
        &self.frame
    }

    /// Gives up the batch, returning its frame.
    pub fn into_frame(self) -> ServerFrame {
        self.frame
    }
}

/// One row (or the branch key) of a checked batch: one value per field, read in place.
#[derive(Clone, Copy)]
pub struct RowView<'a> {
    cells: Cells<'a>,
    fields: &'a [FieldSpec],
}

impl<'a> RowView<'a> {
    fn new(cells: Cells<'a>, fields: &'a [FieldSpec]) -> Self {
        Self { cells, fields }
    }

    /// The number of values: the schema's field count.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether the row holds no values (a schema without fields).
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The fields the values belong to, in order.
    pub fn fields(&self) -> &'a [FieldSpec] {
        self.fields
    }

    /// The value of field `i`, or `None` past the last field.
    pub fn cell(&self, i: usize) -> Option<Value<'a>> {
        (i < self.cells.len()).then(|| Value::of(self.cells.get(i)))
    }

    /// The value of the first field named `name`.
    pub fn get(&self, name: &str) -> Option<Value<'a>> {
        let i = self.fields.iter().position(|f| f.name == name)?;
        self.cell(i)
    }

    /// The values in field order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Value<'a>> + 'a {
        self.cells.iter().map(Value::of)
    }

    /// Copies the values out of the frame.
    pub fn to_owned_values(&self) -> Vec<OwnedValue> {
        self.iter().map(|v| v.to_owned_value()).collect()
    }
}

impl fmt::Debug for RowView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The elements of a list value, read in place. Elements are never null or withheld.
#[derive(Clone, Copy)]
pub struct ListView<'a> {
    elements: Cells<'a>,
}

impl<'a> ListView<'a> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// The element at `i`, or `None` past the last.
    pub fn get(&self, i: usize) -> Option<Value<'a>> {
        (i < self.elements.len()).then(|| Value::of(self.elements.get(i)))
    }

    /// The elements in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Value<'a>> + 'a {
        self.elements.iter().map(Value::of)
    }
}

impl fmt::Debug for ListView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for ListView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

/// A value of a checked batch, borrowed from its frame.
///
/// Null (R-4: no value), withheld (the field is sensitive) and present values are distinct
/// variants. Integers keep their width and signedness and nothing is converted; floats
/// keep their exact bits, the sign of a zero and a NaN's payload, and `==` compares them
/// by bits, so a NaN equals the same NaN and `-0.0` differs from `0.0`.
///
/// Exhaustive on purpose: a reader must handle every kind of value the protocol carries, and
/// a schema release adding one should break every match at compile time (see [`ScalarType`]).
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// No value (a nullable field only).
    Null,
    /// A value withheld from this client (a sensitive field).
    Withheld,
    /// U8.
    U8(u8),
    /// I8.
    I8(i8),
    /// U16.
    U16(u16),
    /// I16.
    I16(i16),
    /// U32.
    U32(u32),
    /// I32.
    I32(i32),
    /// U64.
    U64(u64),
    /// I64.
    I64(i64),
    /// F32, exact bits.
    F32(f32),
    /// F64, exact bits.
    F64(f64),
    /// BOOL.
    Bool(bool),
    /// STRING: UTF-8 that may contain NUL.
    String(&'a str),
    /// BYTES: raw octets, possibly empty or not UTF-8.
    Bytes(&'a [u8]),
    /// DATETIME: signed nanoseconds since the Unix epoch, UTC.
    Datetime(i64),
    /// A fixed or variable list.
    List(ListView<'a>),
}

impl<'a> Value<'a> {
    /// The value a cell of a checked batch holds. Only a checked batch's cells are read, so
    /// every tag is a declared one and every F32/F64 cell carries its value (F-4 `[present]`).
    fn of(cell: schema::Cell<'a>) -> Self {
        match cell.value_type() {
            CellValue::NullCell => Value::Null,
            CellValue::RedactedCell => Value::Withheld,
            CellValue::U8Cell => Value::U8(member!(cell, U8Cell).value()),
            CellValue::I8Cell => Value::I8(member!(cell, I8Cell).value()),
            CellValue::U16Cell => Value::U16(member!(cell, U16Cell).value()),
            CellValue::I16Cell => Value::I16(member!(cell, I16Cell).value()),
            CellValue::U32Cell => Value::U32(member!(cell, U32Cell).value()),
            CellValue::I32Cell => Value::I32(member!(cell, I32Cell).value()),
            CellValue::U64Cell => Value::U64(member!(cell, U64Cell).value()),
            CellValue::I64Cell => Value::I64(member!(cell, I64Cell).value()),
            CellValue::F32Cell => Value::F32(member!(cell, F32Cell).value().unwrap_or(f32::NAN)),
            CellValue::F64Cell => Value::F64(member!(cell, F64Cell).value().unwrap_or(f64::NAN)),
            CellValue::BoolCell => Value::Bool(member!(cell, BoolCell).value()),
            CellValue::StringCell => Value::String(member!(cell, StringCell).value()),
            CellValue::BytesCell => Value::Bytes(member!(cell, BytesCell).value().bytes()),
            CellValue::DatetimeCell => Value::Datetime(member!(cell, DatetimeCell).unix_nanos()),
            CellValue::ListCell => Value::List(ListView {
                elements: member!(cell, ListCell).elements(),
            }),
            // Unreachable: the wire layer refuses undeclared and NONE tags (F-4).
            _ => Value::Null,
        }
    }

    /// Whether this is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this is [`Value::Withheld`].
    pub fn is_withheld(&self) -> bool {
        matches!(self, Value::Withheld)
    }

    /// Copies the value out of its frame.
    pub fn to_owned_value(&self) -> OwnedValue {
        match *self {
            Value::Null => OwnedValue::Null,
            Value::Withheld => OwnedValue::Withheld,
            Value::U8(v) => OwnedValue::U8(v),
            Value::I8(v) => OwnedValue::I8(v),
            Value::U16(v) => OwnedValue::U16(v),
            Value::I16(v) => OwnedValue::I16(v),
            Value::U32(v) => OwnedValue::U32(v),
            Value::I32(v) => OwnedValue::I32(v),
            Value::U64(v) => OwnedValue::U64(v),
            Value::I64(v) => OwnedValue::I64(v),
            Value::F32(v) => OwnedValue::F32(v),
            Value::F64(v) => OwnedValue::F64(v),
            Value::Bool(v) => OwnedValue::Bool(v),
            Value::String(v) => OwnedValue::String(v.to_owned()),
            Value::Bytes(v) => OwnedValue::Bytes(v.to_vec()),
            Value::Datetime(v) => OwnedValue::Datetime(v),
            Value::List(l) => OwnedValue::List(l.iter().map(|v| v.to_owned_value()).collect()),
        }
    }
}

impl PartialEq for Value<'_> {
    fn eq(&self, other: &Self) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) | (Withheld, Withheld) => true,
            (U8(a), U8(b)) => a == b,
            (I8(a), I8(b)) => a == b,
            (U16(a), U16(b)) => a == b,
            (I16(a), I16(b)) => a == b,
            (U32(a), U32(b)) => a == b,
            (I32(a), I32(b)) => a == b,
            (U64(a), U64(b)) => a == b,
            (I64(a), I64(b)) => a == b,
            (F32(a), F32(b)) => a.to_bits() == b.to_bits(),
            (F64(a), F64(b)) => a.to_bits() == b.to_bits(),
            (Bool(a), Bool(b)) => a == b,
            (String(a), String(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (Datetime(a), Datetime(b)) => a == b,
            (List(a), List(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value<'_> {}

impl PartialEq<OwnedValue> for Value<'_> {
    fn eq(&self, other: &OwnedValue) -> bool {
        use OwnedValue as O;
        match (self, other) {
            (Value::List(a), O::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == *y)
            }
            (Value::List(_), _) | (_, O::List(_)) => false,
            (Value::String(a), O::String(b)) => *a == b.as_str(),
            (Value::Bytes(a), O::Bytes(b)) => *a == b.as_slice(),
            _ => self.to_owned_value() == *other,
        }
    }
}

/// A value copied out of its frame: [`Value`] with owned text, bytes and lists. `==` compares
/// floats by their bits, as [`Value`] does.
#[derive(Debug, Clone)]
pub enum OwnedValue {
    /// No value.
    Null,
    /// A withheld value.
    Withheld,
    /// U8.
    U8(u8),
    /// I8.
    I8(i8),
    /// U16.
    U16(u16),
    /// I16.
    I16(i16),
    /// U32.
    U32(u32),
    /// I32.
    I32(i32),
    /// U64.
    U64(u64),
    /// I64.
    I64(i64),
    /// F32, exact bits.
    F32(f32),
    /// F64, exact bits.
    F64(f64),
    /// BOOL.
    Bool(bool),
    /// STRING.
    String(String),
    /// BYTES.
    Bytes(Vec<u8>),
    /// DATETIME: signed nanoseconds since the Unix epoch, UTC.
    Datetime(i64),
    /// A list.
    List(Vec<OwnedValue>),
}

impl PartialEq for OwnedValue {
    fn eq(&self, other: &Self) -> bool {
        use OwnedValue::*;
        match (self, other) {
            (Null, Null) | (Withheld, Withheld) => true,
            (U8(a), U8(b)) => a == b,
            (I8(a), I8(b)) => a == b,
            (U16(a), U16(b)) => a == b,
            (I16(a), I16(b)) => a == b,
            (U32(a), U32(b)) => a == b,
            (I32(a), I32(b)) => a == b,
            (U64(a), U64(b)) => a == b,
            (I64(a), I64(b)) => a == b,
            (F32(a), F32(b)) => a.to_bits() == b.to_bits(),
            (F64(a), F64(b)) => a.to_bits() == b.to_bits(),
            (Bool(a), Bool(b)) => a == b,
            (String(a), String(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (Datetime(a), Datetime(b)) => a == b,
            (List(a), List(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for OwnedValue {}

impl OwnedValue {
    /// The cell that carries this value on the wire (the object API form, for writing).
    pub fn to_cell(&self) -> schema::CellT {
        use schema::CellValueT as C;
        use schema::*;
        let value = match self {
            OwnedValue::Null => C::NullCell(Box::new(NullCellT {})),
            OwnedValue::Withheld => C::RedactedCell(Box::new(RedactedCellT {})),
            OwnedValue::U8(v) => C::U8Cell(Box::new(U8CellT { value: *v })),
            OwnedValue::I8(v) => C::I8Cell(Box::new(I8CellT { value: *v })),
            OwnedValue::U16(v) => C::U16Cell(Box::new(U16CellT { value: *v })),
            OwnedValue::I16(v) => C::I16Cell(Box::new(I16CellT { value: *v })),
            OwnedValue::U32(v) => C::U32Cell(Box::new(U32CellT { value: *v })),
            OwnedValue::I32(v) => C::I32Cell(Box::new(I32CellT { value: *v })),
            OwnedValue::U64(v) => C::U64Cell(Box::new(U64CellT { value: *v })),
            OwnedValue::I64(v) => C::I64Cell(Box::new(I64CellT { value: *v })),
            OwnedValue::F32(v) => C::F32Cell(Box::new(F32CellT { value: Some(*v) })),
            OwnedValue::F64(v) => C::F64Cell(Box::new(F64CellT { value: Some(*v) })),
            OwnedValue::Bool(v) => C::BoolCell(Box::new(BoolCellT { value: *v })),
            OwnedValue::String(v) => C::StringCell(Box::new(StringCellT { value: v.clone() })),
            OwnedValue::Bytes(v) => C::BytesCell(Box::new(BytesCellT { value: v.clone() })),
            OwnedValue::Datetime(v) => C::DatetimeCell(Box::new(DatetimeCellT { unix_nanos: *v })),
            OwnedValue::List(v) => C::ListCell(Box::new(ListCellT {
                elements: v.iter().map(OwnedValue::to_cell).collect(),
            })),
        };
        CellT { value }
    }
}

/// A checked batch copied out of its frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedBatch {
    /// The subscription name the frame named.
    pub subscription: String,
    /// The subscription generation the frame named.
    pub generation: u64,
    /// The schema the batch was checked against.
    pub schema: Arc<RowSchema>,
    /// The branch key's values, one per key field, when the relay is branched.
    pub branch_key: Option<Vec<OwnedValue>>,
    /// The rows, each one value per field.
    pub rows: Vec<Vec<OwnedValue>>,
}
