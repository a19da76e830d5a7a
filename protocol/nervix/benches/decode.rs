//! Cost of checked reading against bare FlatBuffers verification, on one `ServerMessage` of
//! about 1 MiB carrying `SubscriptionRows` with a branch key and rows of mixed cells.
//!
//! * `bare_verify`: the flatbuffers verifier alone, with the protocol's verifier options.
//! * `checked`: [`check_slice`], i.e. size and identifier checks, the same verification, and
//!   the schema's semantic rules.
//! * `checked_and_walk_cells`: `checked`, then reading the value type of every cell (list
//!   elements and branch key cells included), to show what reading costs on top.

#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{check_slice, ServerMessageRoot};
use nervix_protocol::limits::{verifier_options, FRAME_LIMIT};
use nervix_protocol::schema::*;
use std::hint::black_box;
use std::time::Duration;

/// The frame size the batch is grown to.
const TARGET_BYTES: usize = 1024 * 1024;

fn cell(value: CellValueT) -> CellT {
    CellT { value }
}

fn row(i: u64) -> RowT {
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

fn message(rows: u64) -> ServerMessageT {
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
                rows: (0..rows).map(row).collect(),
            }),
        })),
    }
}

/// Encodes a frame of about [`TARGET_BYTES`]: measures a small batch, scales the row count.
fn frame() -> bytes::Bytes {
    let mut enc = Encoder::new();
    let probe_rows = 64;
    let probe = enc
        .encode::<ServerMessageRoot>(&message(probe_rows))
        .expect("probe frame encodes");
    let per_row = probe.len() as f64 / probe_rows as f64;
    let rows = (TARGET_BYTES as f64 / per_row).floor() as u64;
    enc.encode::<ServerMessageRoot>(&message(rows))
        .expect("bench frame encodes")
}

fn walk_cells(cells: flatbuffers::Vector<'_, flatbuffers::ForwardsUOffset<Cell<'_>>>) -> u64 {
    let mut sum = 0u64;
    for c in cells.iter() {
        let t = c.value_type();
        sum = sum.wrapping_add(u64::from(t.0));
        if let Some(list) = c.value_as_list_cell() {
            sum = sum.wrapping_add(walk_cells(list.elements()));
        }
    }
    sum
}

fn walk(message: &ServerMessage<'_>) -> u64 {
    let Some(rows) = message.body_as_subscription_rows() else {
        return 0;
    };
    let batch = rows.batch();
    let mut sum = batch.branch_key().map_or(0, |k| walk_cells(k.cells()));
    for r in batch.rows().iter() {
        sum = sum.wrapping_add(walk_cells(r.cells()));
    }
    sum
}

fn decode(c: &mut Criterion) {
    let bytes = frame();
    let len = bytes.len();
    {
        // Sanity: every variant accepts the frame, and the walk sees every cell.
        let view = check_slice::<ServerMessageRoot>(&bytes, FRAME_LIMIT).expect("frame checks");
        assert!(walk(&view) > 0);
    }

    let mut group = c.benchmark_group("decode_1mib_rowbatch");
    group.throughput(Throughput::Bytes(len as u64));
    // Each iteration takes milliseconds: flat sampling keeps the run inside its time budget.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(50);
    group.warm_up_time(Duration::from_secs(2));
    group.measurement_time(Duration::from_secs(5));

    group.bench_function("bare_verify", |b| {
        b.iter(|| {
            let view = flatbuffers::root_with_opts::<ServerMessage<'_>>(
                &verifier_options(len),
                black_box(&bytes[..]),
            );
            black_box(view.is_ok())
        })
    });
    group.bench_function("checked", |b| {
        b.iter(|| {
            let view = check_slice::<ServerMessageRoot>(black_box(&bytes[..]), FRAME_LIMIT);
            black_box(view.is_ok())
        })
    });
    group.bench_function("checked_and_walk_cells", |b| {
        b.iter(|| {
            let sum = match check_slice::<ServerMessageRoot>(black_box(&bytes[..]), FRAME_LIMIT) {
                Ok(view) => walk(&view),
                Err(_) => 0,
            };
            black_box(sum)
        })
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
