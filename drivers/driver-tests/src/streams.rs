//! Subscriptions and followed clocks over real sockets on 127.0.0.1 against the loopback
//! cluster: rows read back exactly as the cluster wrote them, a leader change is a gap and a
//! new generation, clocks tick and are attached again, and dropping what follows them deletes
//! the subscription or detaches the clock. Every wait is bounded.

use crate::{config_of, seeds_of, Driver, Error, Via};
use nervix_driver_support::credentials::Credentials;
use nervix_harness::cluster::row_values;
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::{ClockEvent, Gap, SubscriptionEvent};
use nervix_protocol::rows::Value;
use std::time::{Duration, Instant};

/// How long an event may take.
pub const WAIT: Duration = Duration::from_secs(5);

fn server() -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 3,
        ..LoopbackConfig::default()
    })
    .unwrap()
}

/// A client of `lb` over `via`, reconnecting quickly, in the domain `tenant`.
pub fn connected<D: Driver>(d: &D, lb: &Loopback, via: Via) -> D::Client {
    let mut c = config_of::<D>(
        &seeds_of(lb, via),
        Credentials::new("nervix", "nervix"),
        via,
        Duration::from_secs(10),
        Duration::from_secs(3),
    );
    D::client_config(&mut c).backoff_initial = Duration::from_millis(20);
    D::client_config(&mut c).backoff_max = Duration::from_millis(400);
    let c = d.connect(c).unwrap();
    d.select_domain(&c, Some("tenant")).unwrap();
    c
}

fn next<D: Driver>(d: &D, s: &mut D::Subscription) -> SubscriptionEvent {
    d.next_event(s, WAIT)
        .expect("an event within its bound")
        .expect("the subscription goes on")
}

fn next_clock<D: Driver>(d: &D, k: &mut D::Clock) -> ClockEvent {
    d.next_clock(k, WAIT)
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

/// Waits until the loopback's trace has a line holding `what`.
fn traced(lb: &Loopback, what: &str) {
    let end = Instant::now() + WAIT;
    while !lb.trace().iter().any(|l| l.contains(what)) {
        assert!(Instant::now() < end, "{what} reached the server");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `attempt` again every 20 ms while it is refused, for at most [`WAIT`].
fn again<T>(mut attempt: impl FnMut() -> Result<T, Error>) -> T {
    let end = Instant::now() + WAIT;
    loop {
        match attempt() {
            Ok(s) => break s,
            Err(Error::Refused(_)) if Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}

/// A driver, a cluster of three nodes, a client of it over `via`, and the subscription `live`
/// opened, with the generation it opened in.
fn live<D: Driver>(via: Via) -> (D, Loopback, D::Client, D::Subscription, u64) {
    let d = D::new();
    let lb = server();
    let c = connected(&d, &lb, via);
    let mut s = d
        .subscribe(&c, "CREATE SUBSCRIPTION live FROM orders")
        .unwrap();
    let generation = opened(next(&d, &mut s));
    (d, lb, c, s, generation)
}

/// S-1: over every way the driver speaks, rows arrive and read back exactly.
pub fn s_1_rows_read_back<D: Driver>() {
    for via in crate::spoken::<D>(&crate::BOTH) {
        let (d, _lb, _c, mut s, generation) = live::<D>(via);
        let mut n = 1;
        for _ in 0..4 {
            n = check_rows(&next(&d, &mut s), generation, n);
        }
        assert!(n > 4, "{via:?}: batches of rows flowed on a timer");
    }
}

/// S-7: after `before` batches read back exactly, a leader change gives a gap and a new
/// generation whose rows are numbered from 1 again.
pub fn s_7_gap_and_new_generation<D: Driver>(before: usize) {
    for via in crate::spoken::<D>(&crate::BOTH) {
        let (d, lb, _c, mut s, first) = live::<D>(via);
        let mut n = 1;
        for _ in 0..before {
            n = check_rows(&next(&d, &mut s), first, n);
        }
        lb.set_leader(1);
        // Rows already on their way may come first; then the gap, then the new generation.
        let mut more = 0;
        let gap = loop {
            match next(&d, &mut s) {
                SubscriptionEvent::Rows(b) => {
                    assert_eq!(b.generation(), first);
                    more += 1;
                    assert!(more < 10, "{via:?}: the gap came");
                }
                SubscriptionEvent::Gap(g) => break g,
                other => panic!("{via:?}: {other:?}"),
            }
        };
        assert_eq!(gap, Gap::SessionLost, "{via:?}");
        let second = opened(next(&d, &mut s));
        assert!(second > first, "{via:?}: a new generation");
        let n = check_rows(&next(&d, &mut s), second, 1);
        check_rows(&next(&d, &mut s), second, n);
    }
}

/// S-6: dropping what reads a subscription deletes it; its name is free again after.
pub fn s_6_dropping_deletes<D: Driver>(via: Via) {
    let d = D::new();
    let lb = server();
    let c = connected(&d, &lb, via);
    let mut s = d
        .subscribe(&c, "CREATE SUBSCRIPTION gone FROM orders")
        .unwrap();
    opened(next(&d, &mut s));
    drop(s);
    traced(&lb, "UnsubscribeRequest");
    let mut again = again(|| d.subscribe(&c, "CREATE SUBSCRIPTION gone FROM orders"));
    opened(next(&d, &mut again));
}

/// S-8: a reader that stops reading gets every row in order once it reads on.
pub fn s_8_slow_reader_gets_every_row<D: Driver>(via: Via) {
    let d = D::new();
    // A batch every 5 ms, far more than the reader's queue holds while nobody reads.
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        rows: (Duration::from_millis(5), 3),
        ..LoopbackConfig::default()
    })
    .unwrap();
    let c = connected(&d, &lb, via);
    let mut s = d
        .subscribe(&c, "CREATE SUBSCRIPTION slow FROM orders")
        .unwrap();
    let g = opened(next(&d, &mut s));
    std::thread::sleep(Duration::from_millis(1000));
    // Then nothing more reaches the client: only the reader's reads can move the rest, which
    // the engine kept, out to the reader.
    lb.drop_replies(0, true);
    let mut n = 1;
    for _ in 0..100 {
        n = check_rows(&next(&d, &mut s), g, n);
    }
}

/// K-1: a followed clock ticks, is attached again after a leader change, and dropping what
/// follows it detaches it.
pub fn k_1_clock_ticks_and_is_attached_again<D: Driver>() {
    for via in crate::spoken::<D>(&crate::BOTH) {
        let d = D::new();
        let lb = server();
        let c = connected(&d, &lb, via);
        let mut k = d.follow_clock(&c, "tenant").unwrap();
        assert_eq!(D::clock_domain(&k), "tenant");
        assert!(
            matches!(next_clock(&d, &mut k), ClockEvent::Attached { .. }),
            "{via:?}"
        );
        let mut last = 0;
        for _ in 0..2 {
            match next_clock(&d, &mut k) {
                ClockEvent::Ticked { tick, .. } => {
                    assert!(tick.tick_id.get() > last, "ticks move forward");
                    last = tick.tick_id.get();
                }
                other => panic!("{via:?}: {other:?}"),
            }
        }
        lb.set_leader(2);
        let mut interrupted = false;
        loop {
            match next_clock(&d, &mut k) {
                ClockEvent::Ticked { .. } if !interrupted => {}
                ClockEvent::Interrupted { .. } => interrupted = true,
                ClockEvent::Attached { .. } | ClockEvent::AlreadyAttached { .. } if interrupted => {
                    break
                }
                other => panic!("{via:?}: {other:?}"),
            }
        }
        assert!(
            matches!(next_clock(&d, &mut k), ClockEvent::Ticked { .. }),
            "{via:?}: ticks again on the new session"
        );
        drop(k);
        traced(&lb, "DetachDomainClockRequest");
    }
}

/// K-1: dropping what follows a clock detaches it; it is followed again after.
pub fn k_1_dropping_detaches<D: Driver>(via: Via) {
    let d = D::new();
    let lb = server();
    let c = connected(&d, &lb, via);
    let mut k = d.follow_clock(&c, "tenant").unwrap();
    assert!(matches!(
        next_clock(&d, &mut k),
        ClockEvent::Attached { .. }
    ));
    drop(k);
    traced(&lb, "DetachDomainClockRequest");
    let mut again = again(|| d.follow_clock(&c, "tenant"));
    assert!(matches!(
        next_clock(&d, &mut again),
        ClockEvent::Attached { .. }
    ));
}

/// Tests of `tests/streams.rs`, for `tokio` or `blocking`.
#[macro_export]
macro_rules! streams_tests {
    (tokio) => {
        #[test]
        fn s_1_rows_arrive_over_real_sockets_and_read_back_exactly() {
            $crate::run!(Tokio, streams::s_1_rows_read_back())
        }
        #[test]
        fn s_7_a_leader_change_gives_a_gap_and_a_new_generation_over_real_sockets() {
            $crate::run!(Tokio, streams::s_7_gap_and_new_generation(1))
        }
        #[test]
        fn s_6_dropping_the_stream_deletes_the_subscription_over_real_sockets() {
            $crate::run!(Tokio, streams::s_6_dropping_deletes(Via::Grpc))
        }
        #[test]
        fn k_1_a_followed_clock_ticks_over_real_sockets_and_is_attached_again_after_a_leader_change(
        ) {
            $crate::run!(Tokio, streams::k_1_clock_ticks_and_is_attached_again())
        }
        #[test]
        fn k_1_dropping_a_clock_stream_detaches_the_clock_over_real_sockets() {
            $crate::run!(
                Tokio,
                streams::k_1_dropping_detaches(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn s_8_a_reader_that_stops_reading_gets_every_row_in_order_once_it_reads_on() {
            $crate::run!(Tokio, streams::s_8_slow_reader_gets_every_row(Via::Grpc))
        }
    };
    (blocking) => {
        #[test]
        fn s_8_a_reader_that_stops_reading_gets_every_row_in_order_once_it_reads_on_blocking() {
            $crate::run!(
                Blocking,
                streams::s_8_slow_reader_gets_every_row(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn s_7_rows_read_back_exactly_and_a_leader_change_gives_a_gap_and_a_new_generation_blocking(
        ) {
            $crate::run!(Blocking, streams::s_7_gap_and_new_generation(3))
        }
        #[test]
        fn s_6_dropping_the_iterator_deletes_the_subscription_blocking() {
            $crate::run!(
                Blocking,
                streams::s_6_dropping_deletes(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn k_1_a_followed_clock_ticks_and_is_attached_again_after_a_leader_change_blocking() {
            $crate::run!(Blocking, streams::k_1_clock_ticks_and_is_attached_again())
        }
        #[test]
        fn k_1_dropping_a_clock_stream_detaches_the_clock_blocking() {
            $crate::run!(
                Blocking,
                streams::k_1_dropping_detaches(Via::Console(WsAuth::Header))
            )
        }
    };
}
