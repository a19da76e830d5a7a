//! Subscriptions and followed clocks through the blocking API, over the loopback cluster's
//! WebSocket console on 127.0.0.1: rows read back exactly as the cluster wrote them, a leader
//! change is a gap and a new generation, clocks tick and come back, and dropping an iterator
//! deletes or detaches what it followed. Every wait is bounded.

use nervix_blocking::{
    Client, ClockEvent, ClockFollow, Config, Credentials, Error, Gap, Subscription,
    SubscriptionEvent,
};
use nervix_harness::cluster::row_values;
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::rows::Value;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(5);

fn server() -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 3,
        ..LoopbackConfig::default()
    })
    .unwrap()
}

fn connected(lb: &Loopback) -> Client {
    let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
    let mut c = Config::new(&seeds, Credentials::new("nervix", "nervix"))
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    c.client.backoff_initial = Duration::from_millis(20);
    c.client.backoff_max = Duration::from_millis(400);
    let c = Client::connect(c).unwrap();
    c.select_domain(Some("tenant")).unwrap();
    c
}

fn next(s: &mut Subscription) -> SubscriptionEvent {
    s.next_timeout(WAIT)
        .expect("an event within its bound")
        .expect("the subscription goes on")
}

fn next_clock(k: &mut ClockFollow) -> ClockEvent {
    k.next_timeout(WAIT)
        .expect("a clock event within its bound")
        .expect("the clock is still followed")
}

/// Checks every row of a batch against what the cluster wrote, numbered on from `from` in
/// `generation`; returns the next number.
fn check_rows(e: &SubscriptionEvent, generation: u64, from: u64) -> u64 {
    let SubscriptionEvent::Rows(batch) = e else {
        panic!("rows expected, got {e:?}");
    };
    assert_eq!(batch.generation(), generation);
    assert!(!batch.is_empty());
    let mut n_next = from;
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

fn opened(e: SubscriptionEvent) -> u64 {
    match e {
        SubscriptionEvent::Opened { generation, .. } => generation,
        other => panic!("an opening expected, got {other:?}"),
    }
}

#[test]
fn s_7_rows_read_back_exactly_and_a_leader_change_gives_a_gap_and_a_new_generation_blocking() {
    let lb = server();
    let c = connected(&lb);
    let mut s = c.subscribe("CREATE SUBSCRIPTION live FROM orders").unwrap();
    let first = opened(next(&mut s));
    let mut n = 1;
    for _ in 0..3 {
        n = check_rows(&next(&mut s), first, n);
    }
    lb.set_leader(1);
    let mut more = 0;
    let gap = loop {
        match next(&mut s) {
            SubscriptionEvent::Rows(b) => {
                assert_eq!(b.generation(), first);
                more += 1;
                assert!(more < 10, "the gap came");
            }
            SubscriptionEvent::Gap(g) => break g,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(gap, Gap::SessionLost);
    let second = opened(next(&mut s));
    assert!(second > first, "a new generation");
    let n = check_rows(&next(&mut s), second, 1);
    check_rows(&next(&mut s), second, n);
}

#[test]
fn s_6_dropping_the_iterator_deletes_the_subscription_blocking() {
    let lb = server();
    let c = connected(&lb);
    let mut s = c.subscribe("CREATE SUBSCRIPTION gone FROM orders").unwrap();
    opened(next(&mut s));
    drop(s);
    let end = Instant::now() + WAIT;
    while !lb.trace().iter().any(|l| l.contains("UnsubscribeRequest")) {
        assert!(Instant::now() < end, "the deletion reached the server");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The name is free again once the deletion is done.
    let mut again = loop {
        match c.subscribe("CREATE SUBSCRIPTION gone FROM orders") {
            Ok(s) => break s,
            Err(Error::Refused(_)) if Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("{e:?}"),
        }
    };
    opened(next(&mut again));
}

#[test]
fn s_8_a_reader_that_stops_reading_gets_every_row_in_order_once_it_reads_on_blocking() {
    // A batch every 5 ms, far more than the iterator's queue holds while nobody reads.
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        rows: (Duration::from_millis(5), 3),
        ..LoopbackConfig::default()
    })
    .unwrap();
    let c = connected(&lb);
    let mut s = c.subscribe("CREATE SUBSCRIPTION slow FROM orders").unwrap();
    let g = opened(next(&mut s));
    std::thread::sleep(Duration::from_millis(1000));
    // Then nothing more reaches the client: only the reader's reads can move the rest, which
    // the engine kept, out to the iterator.
    lb.drop_replies(0, true);
    let mut n = 1;
    for _ in 0..100 {
        n = check_rows(&next(&mut s), g, n);
    }
}

#[test]
fn k_1_a_followed_clock_ticks_and_is_attached_again_after_a_leader_change_blocking() {
    let lb = server();
    let c = connected(&lb);
    let mut k = c.follow_clock("tenant").unwrap();
    assert_eq!(k.domain(), "tenant");
    assert!(matches!(next_clock(&mut k), ClockEvent::Attached { .. }));
    let mut last = 0;
    for _ in 0..2 {
        match next_clock(&mut k) {
            ClockEvent::Ticked { tick, .. } => {
                assert!(tick.tick_id.get() > last, "ticks move forward");
                last = tick.tick_id.get();
            }
            other => panic!("{other:?}"),
        }
    }
    lb.set_leader(2);
    let mut interrupted = false;
    loop {
        match next_clock(&mut k) {
            ClockEvent::Ticked { .. } if !interrupted => {}
            ClockEvent::Interrupted { .. } => interrupted = true,
            ClockEvent::Attached { .. } | ClockEvent::AlreadyAttached { .. } if interrupted => {
                break
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(next_clock(&mut k), ClockEvent::Ticked { .. }));
    drop(k);
    let end = Instant::now() + WAIT;
    while !lb
        .trace()
        .iter()
        .any(|l| l.contains("DetachDomainClockRequest"))
    {
        assert!(
            Instant::now() < end,
            "dropping the iterator detached the clock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
