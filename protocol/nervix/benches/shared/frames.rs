//! The `SubscriptionRows` frames of about 1 MiB that the `decode` and `rows` benches measure and
//! the `check_cost` example counts instructions on, built in one place so that all three read
//! the very same bytes. Included with `#[path = ...] mod frames;`.

#![allow(dead_code)]

use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::ServerMessageRoot;
use nervix_protocol::rows::{self, OwnedValue};
use nervix_protocol::schema::*;
use std::sync::Arc;

/// The frame size a batch is grown to.
pub const TARGET_BYTES: usize = 1024 * 1024;

/// The column types of the `rows` frames, cycled: integers of every width, floats, text,
/// bytes, time, booleans.
pub const TYPES: [ScalarType; 12] = [
    ScalarType::U64,
    ScalarType::I64,
    ScalarType::F64,
    ScalarType::Bool,
    ScalarType::String,
    ScalarType::Datetime,
    ScalarType::U32,
    ScalarType::I16,
    ScalarType::F32,
    ScalarType::Bytes,
    ScalarType::U8,
    ScalarType::I32,
];

/// A cell holding `value`.
pub fn cell(value: CellValueT) -> CellT {
    CellT { value }
}

/// A row of the `decode` frame: nine cells of mixed variants, the last a list of three.
pub fn mixed_row(i: u64) -> RowT {
    let n = i as i64;
    let list = (0..3)
        .map(|k| {
            cell(CellValueT::I32Cell(Box::new(I32CellT {
                value: (n as i32).wrapping_mul(3).wrapping_add(k),
            })))
        })
        .collect();
    RowT {
        cells: vec![
            cell(CellValueT::U64Cell(Box::new(U64CellT {
                value: i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            }))),
            cell(CellValueT::I64Cell(Box::new(I64CellT { value: -n * 7919 }))),
            cell(CellValueT::F64Cell(Box::new(F64CellT {
                value: Some(n as f64 * 0.25 - 1.0),
            }))),
            cell(CellValueT::BoolCell(Box::new(BoolCellT {
                value: i.is_multiple_of(3),
            }))),
            cell(CellValueT::StringCell(Box::new(StringCellT {
                value: format!("row-{i:012}"),
            }))),
            cell(CellValueT::DatetimeCell(Box::new(DatetimeCellT {
                unix_nanos: 1_700_000_000_000_000_000 + n * 1_000_000,
            }))),
            cell(CellValueT::NullCell(Box::new(NullCellT {}))),
            cell(CellValueT::RedactedCell(Box::new(RedactedCellT {}))),
            cell(CellValueT::ListCell(Box::new(ListCellT { elements: list }))),
        ],
    }
}

/// The value of type `t` in row `i` of a `rows` frame.
pub fn typed_value(t: ScalarType, i: u64) -> OwnedValue {
    let n = i as i64;
    match t {
        ScalarType::U64 => OwnedValue::U64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        ScalarType::I64 => OwnedValue::I64(-n * 7919),
        ScalarType::F64 => OwnedValue::F64(n as f64 * 0.25),
        ScalarType::Bool => OwnedValue::Bool(i.is_multiple_of(3)),
        ScalarType::String => OwnedValue::String(format!("r{i:06}")),
        ScalarType::Datetime => OwnedValue::Datetime(1_700_000_000_000_000_000 + n),
        ScalarType::U32 => OwnedValue::U32(i as u32),
        ScalarType::I16 => OwnedValue::I16(-(i as i16)),
        ScalarType::F32 => OwnedValue::F32(i as f32 * 0.5),
        ScalarType::Bytes => OwnedValue::Bytes(vec![i as u8; 4]),
        ScalarType::U8 => OwnedValue::U8(i as u8),
        _ => OwnedValue::I32(-(i as i32)),
    }
}

/// The `decode` message of `rows` mixed rows, with a branch key, on subscription `prices`.
pub fn mixed_message(rows: u64) -> ServerMessageT {
    let branch_key = BranchKeyT {
        cells: vec![
            cell(CellValueT::StringCell(Box::new(StringCellT {
                value: "eu-west".to_owned(),
            }))),
            cell(CellValueT::U32Cell(Box::new(U32CellT { value: 7 }))),
        ],
    };
    ServerMessageT {
        body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: Box::new(SubscriptionHandleT {
                name: "prices".to_owned(),
                generation: 1,
            }),
            batch: Box::new(RowBatchT {
                branch_key: Some(Box::new(branch_key)),
                rows: (0..rows).map(mixed_row).collect(),
            }),
        })),
    }
}

/// The `rows` message of `rows` rows of `columns` typed columns, on subscription `bench`.
pub fn typed_message(columns: usize, rows: u64) -> ServerMessageT {
    ServerMessageT {
        body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: Box::new(SubscriptionHandleT {
                name: "bench".to_owned(),
                generation: 1,
            }),
            batch: Box::new(RowBatchT {
                branch_key: None,
                rows: (0..rows)
                    .map(|i| RowT {
                        cells: (0..columns)
                            .map(|c| typed_value(TYPES[c % TYPES.len()], i).to_cell())
                            .collect(),
                    })
                    .collect(),
            }),
        })),
    }
}

/// Encodes a frame of about [`TARGET_BYTES`]: measures a batch of 64 rows built by `message`,
/// scales the row count. Returns the frame and its row count.
pub fn sized_frame(message: impl Fn(u64) -> ServerMessageT) -> (bytes::Bytes, u64) {
    let mut enc = Encoder::new();
    let probe_rows = 64;
    let probe = enc
        .encode::<ServerMessageRoot>(&message(probe_rows))
        .expect("probe frame encodes");
    let per_row = probe.len() as f64 / probe_rows as f64;
    let rows = (TARGET_BYTES as f64 / per_row).floor() as u64;
    let bytes = enc
        .encode::<ServerMessageRoot>(&message(rows))
        .expect("bench frame encodes");
    (bytes, rows)
}

/// The `decode` frame: mixed rows with a branch key.
pub fn mixed_frame() -> bytes::Bytes {
    sized_frame(mixed_message).0
}

/// The `rows` frame of `columns` typed columns, and its row count.
pub fn typed_frame(columns: usize) -> (bytes::Bytes, u64) {
    sized_frame(|rows| typed_message(columns, rows))
}

/// The schema of the `rows` frame of `columns` columns: no field nullable or sensitive.
pub fn schema(columns: usize) -> RowSchemaT {
    RowSchemaT {
        fields: (0..columns)
            .map(|c| RowFieldT {
                name: format!("c{c}"),
                field_type: Box::new(FieldTypeT {
                    shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
                        scalar: Some(TYPES[c % TYPES.len()]),
                    })),
                }),
                nullable: false,
                sensitive: false,
            })
            .collect(),
        branch: None,
    }
}

/// The compiled schema of the `rows` frame, taken from a bare `RowSchema` buffer.
pub fn compiled(columns: usize) -> Arc<rows::RowSchema> {
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let root = schema(columns).pack(&mut fbb);
    fbb.finish(root, None);
    let view = flatbuffers::root::<RowSchema>(fbb.finished_data()).expect("schema verifies");
    Arc::new(rows::RowSchema::from_view(view).expect("schema compiles"))
}
