//! Subscriptions and followed clocks through the async API, over real sockets on 127.0.0.1
//! against the loopback cluster: rows arrive and read back exactly as the cluster wrote them,
//! a leader change is a gap and a new generation, clocks tick and are attached again, and
//! dropping a stream deletes or detaches what it followed. Every test is bounded.

use futures_util::StreamExt;
use nervix_harness::cluster::row_values;
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::rows::Value;
use nervix_tokio::{
    Client, ClockEvent, ClockFollow, Config, Credentials, Gap, Subscription, SubscriptionEvent,
    Transport, WsAuth,
};
use std::future::Future;
use std::time::Duration;

const TRANSPORTS: [Transport; 2] = [Transport::Grpc, Transport::WebSocket(WsAuth::Header)];

fn block<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test ends within its bound")
}

fn server() -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 3,
        ..LoopbackConfig::default()
    })
    .unwrap()
}

async fn connected(lb: &Loopback, transport: Transport) -> Client {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let mut c = Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    c.client.backoff_initial = Duration::from_millis(20);
    c.client.backoff_max = Duration::from_millis(400);
    let c = Client::connect(c).await.unwrap();
    c.select_domain(Some("tenant")).await.unwrap();
    c
}

/// The next event within five seconds.
async fn next(s: &mut Subscription) -> SubscriptionEvent {
    tokio::time::timeout(Duration::from_secs(5), s.next())
        .await
        .expect("an event within five seconds")
        .expect("the subscription goes on")
}

async fn next_clock(s: &mut ClockFollow) -> ClockEvent {
    tokio::time::timeout(Duration::from_secs(5), s.next())
        .await
        .expect("a clock event within five seconds")
        .expect("the clock is still followed")
}

/// Checks every row of a batch against what the cluster wrote for it, and that rows are
/// numbered on from `expect_next` in generation `generation`; returns the next number.
fn check_rows(e: &SubscriptionEvent, generation: u64, expect_next: u64) -> u64 {
    let SubscriptionEvent::Rows(batch) = e else {
        panic!("rows expected, got {e:?}");
    };
    assert_eq!(batch.generation(), generation);
    assert!(!batch.is_empty());
    let mut n_next = expect_next;
    for row in batch.rows() {
        let (Some(Value::U64(n)), Some(Value::U64(g)), Some(Value::U64(v))) =
            (row.cell(0), row.cell(1), row.cell(2))
        else {
            panic!("a row without its number: {row:?}");
        };
        assert_eq!((n, g), (n_next, generation), "rows in order, none missing");
        let written = row_values(v, g, n);
        let read: Vec<Value<'_>> = row.iter().collect();
        assert_eq!(read.len(), written.len());
        for (i, (a, b)) in read.iter().zip(&written).enumerate() {
            assert!(a == b, "row {n} field {i} reads {a:?}, written {b:?}");
        }
        n_next += 1;
    }
    n_next
}

#[test]
fn s_1_rows_arrive_over_real_sockets_and_read_back_exactly() {
    for transport in TRANSPORTS {
        let lb = server();
        block(async {
            let c = connected(&lb, transport).await;
            let mut s = c
                .subscribe("CREATE SUBSCRIPTION live FROM orders")
                .await
                .unwrap();
            let generation = match next(&mut s).await {
                SubscriptionEvent::Opened { generation, .. } => generation,
                other => panic!("{transport:?}: {other:?}"),
            };
            let mut n = 1;
            for _ in 0..4 {
                n = check_rows(&next(&mut s).await, generation, n);
            }
            assert!(n > 4, "{transport:?}: batches of rows flowed on a timer");
        });
    }
}

#[test]
fn s_7_a_leader_change_gives_a_gap_and_a_new_generation_over_real_sockets() {
    for transport in TRANSPORTS {
        let lb = server();
        block(async {
            let c = connected(&lb, transport).await;
            let mut s = c
                .subscribe("CREATE SUBSCRIPTION live FROM orders")
                .await
                .unwrap();
            let first = match next(&mut s).await {
                SubscriptionEvent::Opened { generation, .. } => generation,
                other => panic!("{other:?}"),
            };
            check_rows(&next(&mut s).await, first, 1);
            lb.set_leader(1);
            // Rows already on their way may come first; then the gap, then the new generation.
            let mut n = 0;
            let gap = loop {
                match next(&mut s).await {
                    SubscriptionEvent::Rows(b) => {
                        assert_eq!(b.generation(), first);
                        n += 1;
                        assert!(n < 10, "{transport:?}: the gap came");
                    }
                    SubscriptionEvent::Gap(g) => break g,
                    other => panic!("{transport:?}: {other:?}"),
                }
            };
            assert_eq!(gap, Gap::SessionLost, "{transport:?}");
            let second = match next(&mut s).await {
                SubscriptionEvent::Opened { generation, .. } => generation,
                other => panic!("{transport:?}: {other:?}"),
            };
            assert!(second > first, "{transport:?}: a new generation");
            // The new generation's rows are numbered from 1 again, and read back exactly.
            let n = check_rows(&next(&mut s).await, second, 1);
            check_rows(&next(&mut s).await, second, n);
        });
    }
}

#[test]
fn s_6_dropping_the_stream_deletes_the_subscription_over_real_sockets() {
    let lb = server();
    block(async {
        let c = connected(&lb, Transport::Grpc).await;
        let mut s = c
            .subscribe("CREATE SUBSCRIPTION gone FROM orders")
            .await
            .unwrap();
        assert!(matches!(
            next(&mut s).await,
            SubscriptionEvent::Opened { .. }
        ));
        drop(s);
        let unsubscribed =
            |lb: &Loopback| lb.trace().iter().any(|l| l.contains("UnsubscribeRequest"));
        let mut waited = 0;
        while !unsubscribed(&lb) {
            tokio::time::sleep(Duration::from_millis(20)).await;
            waited += 1;
            assert!(waited < 250, "the deletion reached the server");
        }
        // The name is free again once the deletion is done.
        let mut again = loop {
            match c.subscribe("CREATE SUBSCRIPTION gone FROM orders").await {
                Ok(s) => break s,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        assert!(matches!(
            next(&mut again).await,
            SubscriptionEvent::Opened { .. }
        ));
    });
}

#[test]
fn k_1_a_followed_clock_ticks_over_real_sockets_and_is_attached_again_after_a_leader_change() {
    for transport in TRANSPORTS {
        let lb = server();
        block(async {
            let c = connected(&lb, transport).await;
            let mut k = c.follow_clock("tenant").await.unwrap();
            assert_eq!(k.domain(), "tenant");
            assert!(
                matches!(next_clock(&mut k).await, ClockEvent::Attached { .. }),
                "{transport:?}"
            );
            let mut last = 0;
            for _ in 0..2 {
                match next_clock(&mut k).await {
                    ClockEvent::Ticked { tick, .. } => {
                        assert!(tick.tick_id.get() > last, "ticks move forward");
                        last = tick.tick_id.get();
                    }
                    other => panic!("{transport:?}: {other:?}"),
                }
            }
            lb.set_leader(2);
            let mut interrupted = false;
            loop {
                match next_clock(&mut k).await {
                    ClockEvent::Ticked { .. } if !interrupted => {}
                    ClockEvent::Interrupted { .. } => interrupted = true,
                    ClockEvent::Attached { .. } | ClockEvent::AlreadyAttached { .. }
                        if interrupted =>
                    {
                        break
                    }
                    other => panic!("{transport:?}: {other:?}"),
                }
            }
            assert!(
                matches!(next_clock(&mut k).await, ClockEvent::Ticked { .. }),
                "{transport:?}: ticks again on the new session"
            );
        });
    }
}

#[test]
fn k_1_dropping_a_clock_stream_detaches_the_clock_over_real_sockets() {
    let lb = server();
    block(async {
        let c = connected(&lb, Transport::WebSocket(WsAuth::Header)).await;
        let mut k = c.follow_clock("tenant").await.unwrap();
        assert!(matches!(
            next_clock(&mut k).await,
            ClockEvent::Attached { .. }
        ));
        drop(k);
        let mut waited = 0;
        while !lb
            .trace()
            .iter()
            .any(|l| l.contains("DetachDomainClockRequest"))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
            waited += 1;
            assert!(waited < 250, "the detach reached the server");
        }
        // Followed again once the detach is done.
        let mut again = loop {
            match c.follow_clock("tenant").await {
                Ok(k) => break k,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        assert!(matches!(
            next_clock(&mut again).await,
            ClockEvent::Attached { .. }
        ));
    });
}

#[test]
fn s_8_a_reader_that_stops_reading_gets_every_row_in_order_once_it_reads_on() {
    // A batch every 5 ms, far more than the stream's queue holds while nobody reads.
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        rows: (Duration::from_millis(5), 3),
        ..LoopbackConfig::default()
    })
    .unwrap();
    block(async {
        let c = connected(&lb, Transport::Grpc).await;
        let mut s = c
            .subscribe("CREATE SUBSCRIPTION slow FROM orders")
            .await
            .unwrap();
        let g = match next(&mut s).await {
            SubscriptionEvent::Opened { generation, .. } => generation,
            other => panic!("{other:?}"),
        };
        tokio::time::sleep(Duration::from_millis(1000)).await;
        // Then nothing more reaches the client: only the reader's reads can move the rest,
        // which the engine kept, out to the stream.
        lb.drop_replies(0, true);
        let mut n = 1;
        for _ in 0..100 {
            n = check_rows(&next(&mut s).await, g, n);
        }
    });
}
