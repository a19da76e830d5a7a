//! Request/reply round trips through one `Exchange` with no I/O: encode the request, check the
//! reply frame, route it to its waiter and hand out the event.

// A benchmark measures wall time; the sans-IO ban on clocks is for the library itself.
#![allow(clippy::disallowed_methods)]

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nervix_protocol::encode::Encoder;
use nervix_protocol::exchange::{Exchange, ExchangeConfig, ExchangeEvent};
use nervix_protocol::frame::ServerMessageRoot;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn replies(n: u64) -> Vec<Bytes> {
    let mut enc = Encoder::new();
    (1..=n)
        .map(|id| {
            let msg = ServerMessageT {
                body: ServerBodyT::Reply(Box::new(ReplyT {
                    request_id: id,
                    body: ReplyBodyT::DomainList(Box::new(DomainListT { domains: vec![] })),
                })),
            };
            enc.encode::<ServerMessageRoot>(&msg).expect("reply frame")
        })
        .collect()
}

fn round_trips(c: &mut Criterion) {
    let mut g = c.benchmark_group("exchange_round_trip");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(5));
    let request = ClientRequestT::ListDomainsRequest(Box::default());
    g.bench_function("list_domains", |b| {
        b.iter_custom(|iters| {
            let frames = replies(iters);
            let mut x = Exchange::new(ExchangeConfig::default());
            let now = Timestamp::ZERO;
            let start = Instant::now();
            for frame in frames {
                let h = x.request(now, &request, None).expect("request");
                let out = x.poll_transmit().expect("a frame to send");
                black_box(&out);
                x.handle_frame(now, frame);
                match x.poll_event() {
                    Some(ExchangeEvent::Replied { handle, frame }) => {
                        debug_assert_eq!(handle, h);
                        black_box(frame);
                    }
                    other => panic!("{other:?}"),
                }
            }
            start.elapsed()
        })
    });
    g.finish();
}

criterion_group!(benches, round_trips);
criterion_main!(benches);
