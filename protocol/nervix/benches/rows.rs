//! Cost of reading typed rows: `SubscriptionRows` frames of about 1 MiB whose rows have 1, 16
//! or 64 columns of mixed scalar types, measured in cells per second.
//!
//! * `bare_verify`: the flatbuffers verifier alone, with the protocol's verifier options.
//! * `checked`: [`Frame::check`] (size, identifier, verification, the schema's semantic rules)
//!   and then [`CheckedBatch::check`] against the subscription's schema.
//! * `batch_check_only`: [`CheckedBatch::check`] alone, on a frame checked once before: what
//!   the R-2 check adds on top of the wire layer. These frames' rows are alike (same variants
//!   in every row, no list), which the frame check notes, so only the first row is walked.
//! * `batch_check_every_row`: [`rows::check_batch`], the R-2 walk over every row, as for a
//!   batch whose rows differ (nulls here and there, lists).
//! * `checked_and_read`: `checked`, then reading every value of every row in place.
//!
//! Rows per second are cells per second divided by the column count.

#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ServerFrame, ServerMessageRoot};
use nervix_protocol::limits::verifier_options;
use nervix_protocol::rows::{self, CheckedBatch, OwnedValue, Value};
use nervix_protocol::schema::*;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const TARGET_BYTES: usize = 1024 * 1024;

/// The column types, cycled: integers of every width, floats, text, bytes, time, booleans.
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

fn schema(columns: usize) -> RowSchemaT {
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

fn value(t: ScalarType, i: u64) -> OwnedValue {
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

fn message(columns: usize, rows: u64) -> ServerMessageT {
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
                            .map(|c| value(TYPES[c % TYPES.len()], i).to_cell())
                            .collect(),
                    })
                    .collect(),
            }),
        })),
    }
}

/// A frame of about [`TARGET_BYTES`], and its row count.
fn frame(columns: usize) -> (bytes::Bytes, u64) {
    let mut enc = Encoder::new();
    let probe_rows = 64;
    let probe = enc
        .encode::<ServerMessageRoot>(&message(columns, probe_rows))
        .expect("probe frame encodes");
    let rows = (TARGET_BYTES as f64 / (probe.len() as f64 / probe_rows as f64)).floor() as u64;
    let bytes = enc
        .encode::<ServerMessageRoot>(&message(columns, rows))
        .expect("bench frame encodes");
    (bytes, rows)
}

/// The compiled schema, taken from a bare `RowSchema` buffer.
fn compiled(columns: usize) -> Arc<rows::RowSchema> {
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let root = schema(columns).pack(&mut fbb);
    fbb.finish(root, None);
    let view = flatbuffers::root::<RowSchema>(fbb.finished_data()).expect("schema verifies");
    Arc::new(rows::RowSchema::from_view(view).expect("schema compiles"))
}

fn read_all(batch: &CheckedBatch) -> u64 {
    let mut sum = 0u64;
    for row in batch.rows() {
        for v in row.iter() {
            sum = sum.wrapping_add(match v {
                Value::U8(x) => u64::from(x),
                Value::I16(x) => x as u64,
                Value::U32(x) => u64::from(x),
                Value::I32(x) => x as u64,
                Value::U64(x) => x,
                Value::I64(x) | Value::Datetime(x) => x as u64,
                Value::F32(x) => u64::from(x.to_bits()),
                Value::F64(x) => x.to_bits(),
                Value::Bool(x) => u64::from(x),
                Value::String(s) => s.len() as u64,
                Value::Bytes(b) => b.len() as u64,
                _ => 1,
            });
        }
    }
    sum
}

fn bench_rows(c: &mut Criterion) {
    for columns in [1usize, 16, 64] {
        let (bytes, rows) = frame(columns);
        let schema = compiled(columns);
        let cells = rows * columns as u64;
        {
            let f = ServerFrame::check(bytes.clone()).expect("frame checks");
            let b = CheckedBatch::check(f, Arc::clone(&schema)).expect("batch conforms");
            assert_eq!(b.cell_count() as u64, cells);
            assert!(read_all(&b) > 0);
        }
        eprintln!(
            "{columns} columns: {rows} rows, {cells} cells, {} bytes",
            bytes.len()
        );

        let mut group = c.benchmark_group(format!("rows_{columns}_columns"));
        group.throughput(Throughput::Elements(cells));
        group.sampling_mode(SamplingMode::Flat);
        group.sample_size(30);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));

        group.bench_function("bare_verify", |b| {
            b.iter(|| {
                let view = flatbuffers::root_with_opts::<ServerMessage<'_>>(
                    &verifier_options(bytes.len()),
                    black_box(&bytes[..]),
                );
                black_box(view.is_ok())
            })
        });
        group.bench_function("checked", |b| {
            b.iter(|| {
                let f = ServerFrame::check(black_box(bytes.clone())).expect("frame checks");
                let batch = CheckedBatch::check(f, Arc::clone(&schema));
                black_box(batch.is_ok())
            })
        });
        // The R-2 check alone, on a frame that passed the wire checks once before.
        let checked_frame = ServerFrame::check(bytes.clone()).expect("frame checks");
        group.bench_function("batch_check_only", |b| {
            b.iter(|| {
                let batch =
                    CheckedBatch::check(black_box(checked_frame.clone()), Arc::clone(&schema));
                black_box(batch.is_ok())
            })
        });
        group.bench_function("batch_check_every_row", |b| {
            b.iter(|| {
                let view = checked_frame.view();
                let batch = view.body_as_subscription_rows().expect("rows").batch();
                black_box(rows::check_batch(black_box(batch), &schema).is_ok())
            })
        });
        group.bench_function("checked_and_read", |b| {
            b.iter(|| {
                let f = ServerFrame::check(black_box(bytes.clone())).expect("frame checks");
                let batch = CheckedBatch::check(f, Arc::clone(&schema)).expect("conforms");
                black_box(read_all(&batch))
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench_rows);
criterion_main!(benches);
