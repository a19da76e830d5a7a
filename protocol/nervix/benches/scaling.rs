//! How the client's cost per input grows with what is open (issue 17, item 1): one command's
//! round trip with 1, 100, 1,000 and 10,000 other commands out and unanswered, and one batch
//! of rows to one subscription with 1, 100 and 1,000 other subscriptions open. Building the
//! scripted server's reply is left out of the time; everything the client does is in it.

// A benchmark measures wall time; the sans-IO ban on clocks is for the library itself.
#![allow(clippy::disallowed_methods)]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nervix_protocol::client::*;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::hint::black_box;
use std::time::{Duration, Instant};
use support::rig::WALL;
use support::streams::{opened, rows, two_fields};
use support::{completed, outcome, sent};

const NOW: Timestamp = Timestamp::ZERO;

fn round_trip(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling_round_trip");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(4));
    for others in [1usize, 100, 1_000, 10_000] {
        let (mut client, sid) = support::with_commands_out(others);
        g.bench_with_input(BenchmarkId::from_parameter(others), &others, |b, _| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let h = client
                        .execute(NOW, WALL, "INSERT INTO t VALUES (-1)")
                        .unwrap();
                    let frame = client.poll_action();
                    let _ = client.poll_timeout();
                    spent += start.elapsed();
                    // The scripted server's side, not timed.
                    let Some(Action::Send { frame, .. }) = frame else {
                        panic!("the command did not go out");
                    };
                    let m = sent(&frame);
                    let ClientRequestT::CommandRequest(req) = &m.request else {
                        panic!("not a command");
                    };
                    let reply = outcome(m.request_id, &req.execution_reference, completed());
                    let start = Instant::now();
                    client.handle_frame(NOW, sid, reply);
                    while let Some(a) = client.poll_action() {
                        black_box(a);
                    }
                    let mut done = false;
                    while let Some(e) = client.poll_event() {
                        done |= matches!(e, ClientEvent::Command { handle, .. } if handle == h);
                    }
                    let _ = client.poll_timeout();
                    spent += start.elapsed();
                    assert!(done);
                }
                spent
            })
        });
    }
    g.finish();
}

fn row_batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling_row_batch");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(4));
    for others in [1usize, 100, 1_000] {
        let (mut client, sid) = support::ready_client(64);
        let mut target = None;
        for i in 0..=others {
            let name = format!("s{i}");
            let id = client
                .subscribe(
                    NOW,
                    "d1",
                    &format!("CREATE SUBSCRIPTION {name} AS SELECT * FROM orders"),
                )
                .unwrap();
            let frames = support::drain_sent(&mut client);
            let m = sent(frames.last().expect("the subscribe went out"));
            client.handle_frame(NOW, sid, opened(m.request_id, &name, 1, two_fields()));
            support::drain_sent(&mut client);
            while client.poll_subscription(id).is_some() {}
            target = Some(name);
        }
        let frame = rows(&target.unwrap(), 1, 0, 16);
        g.bench_with_input(BenchmarkId::from_parameter(others), &others, |b, _| {
            b.iter(|| {
                client.handle_frame(NOW, sid, frame.clone());
                while let Some(a) = client.poll_action() {
                    black_box(a);
                }
                let ev = client.poll_subscriptions().expect("the batch");
                black_box(ev);
                let _ = client.poll_timeout();
            })
        });
    }
    g.finish();
}

criterion_group!(benches, round_trip, row_batch);
criterion_main!(benches);
