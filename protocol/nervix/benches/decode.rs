//! Cost of checked reading against bare FlatBuffers verification, on one `ServerMessage` of
//! about 1 MiB carrying `SubscriptionRows` with a branch key and rows of mixed cells.
//!
//! * `bare_verify`: the flatbuffers verifier alone, with the protocol's verifier options.
//! * `checked`: [`check_slice`], i.e. size and identifier checks, the same verification, and
//!   the schema's semantic rules.
//! * `checked_and_walk_cells`: `checked`, then reading the value type of every cell (list
//!   elements and branch key cells included), to show what reading costs on top.

#![allow(missing_docs)]

#[path = "shared/frames.rs"]
mod frames;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use nervix_protocol::frame::{check_slice, ServerMessageRoot};
use nervix_protocol::limits::{verifier_options, FRAME_LIMIT};
use nervix_protocol::schema::{Cell, ServerMessage};
use std::hint::black_box;
use std::time::Duration;

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
    let bytes = frames::mixed_frame();
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
