//! Checked reading of the frames the `decode` and `rows` benches use, a fixed number of times,
//! for counting instructions (`valgrind --tool=callgrind`), which unlike time does not depend on
//! what else the machine is doing.
//!
//! `check_cost SHAPE MODE N`: SHAPE is `mixed` (the `decode` bench's ~1 MiB RowBatch of mixed
//! cells, a branch key and lists) or `1`, `16`, `64` (the `rows` bench's columns); MODE is
//! `bare` (the flatbuffers verifier alone), `frame` (`Frame::check`) or `rows` (`Frame::check`
//! then `CheckedBatch::check`, the `rows` bench's `checked`). Run it with N = 0 and N = k and
//! subtract to leave out building the frame.

use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ServerFrame, ServerMessageRoot};
use nervix_protocol::limits::verifier_options;
use nervix_protocol::rows::{self, CheckedBatch, OwnedValue};
use nervix_protocol::schema::*;
use std::hint::black_box;
use std::sync::Arc;

const TARGET_BYTES: usize = 1024 * 1024;

const TYPES: [ScalarType; 12] = [
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

fn cell(value: CellValueT) -> CellT {
    CellT { value }
}

/// A row of the `decode` bench: nine cells of mixed variants, the last a list of three.
fn mixed_row(i: u64) -> RowT {
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

fn typed_value(t: ScalarType, i: u64) -> OwnedValue {
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

/// A message of `rows` rows: the `decode` bench's when `columns` is 0, else the `rows` bench's.
fn message(columns: usize, rows: u64) -> ServerMessageT {
    let branch_key = (columns == 0).then(|| {
        Box::new(BranchKeyT {
            cells: vec![
                cell(CellValueT::StringCell(Box::new(StringCellT {
                    value: "eu-west".to_owned(),
                }))),
                cell(CellValueT::U32Cell(Box::new(U32CellT { value: 7 }))),
            ],
        })
    });
    let row = |i: u64| {
        if columns == 0 {
            mixed_row(i)
        } else {
            RowT {
                cells: (0..columns)
                    .map(|c| typed_value(TYPES[c % TYPES.len()], i).to_cell())
                    .collect(),
            }
        }
    };
    ServerMessageT {
        body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: Box::new(SubscriptionHandleT {
                name: if columns == 0 { "prices" } else { "bench" }.to_owned(),
                generation: 1,
            }),
            batch: Box::new(RowBatchT {
                branch_key,
                rows: (0..rows).map(row).collect(),
            }),
        })),
    }
}

fn frame(columns: usize) -> bytes::Bytes {
    let mut enc = Encoder::new();
    let probe_rows = 64;
    let probe = enc
        .encode::<ServerMessageRoot>(&message(columns, probe_rows))
        .expect("probe frame encodes");
    let rows = (TARGET_BYTES as f64 / (probe.len() as f64 / probe_rows as f64)).floor() as u64;
    enc.encode::<ServerMessageRoot>(&message(columns, rows))
        .expect("frame encodes")
}

fn compiled(columns: usize) -> Arc<rows::RowSchema> {
    let schema = RowSchemaT {
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
    };
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let root = schema.pack(&mut fbb);
    fbb.finish(root, None);
    let view = flatbuffers::root::<RowSchema>(fbb.finished_data()).expect("schema verifies");
    Arc::new(rows::RowSchema::from_view(view).expect("schema compiles"))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "mixed".to_owned());
    let mode = args.next().unwrap_or_else(|| "frame".to_owned());
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let columns = match shape.as_str() {
        "mixed" => 0,
        other => other.parse().expect("SHAPE is mixed, 1, 16 or 64"),
    };
    let bytes = frame(columns);
    let schema = (columns > 0).then(|| compiled(columns));
    for _ in 0..n {
        let ok = match mode.as_str() {
            "bare" => flatbuffers::root_with_opts::<ServerMessage<'_>>(
                &verifier_options(bytes.len()),
                black_box(&bytes[..]),
            )
            .is_ok(),
            "frame" => ServerFrame::check(black_box(bytes.clone())).is_ok(),
            "rows" => {
                let f = ServerFrame::check(black_box(bytes.clone())).expect("frame checks");
                let schema = schema.as_ref().expect("rows needs a column count");
                CheckedBatch::check(f, Arc::clone(schema)).is_ok()
            }
            other => panic!("unknown mode {other}"),
        };
        assert!(black_box(ok));
    }
}
