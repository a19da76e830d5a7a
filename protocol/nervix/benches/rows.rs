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

#[path = "shared/frames.rs"]
mod frames;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use frames::{compiled, typed_frame};
use nervix_protocol::frame::ServerFrame;
use nervix_protocol::limits::verifier_options;
use nervix_protocol::rows::{self, CheckedBatch, Value};
use nervix_protocol::schema::ServerMessage;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

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
        let (bytes, rows) = typed_frame(columns);
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
