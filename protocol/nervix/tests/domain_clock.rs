//! K-4: the integer types of a domain clock and its ticks, and the projection of a paced clock.

use nervix_protocol::domain_clock::{ClockState, DomainClock, InvalidTimeRate, PacedClock, Tick};
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ServerFrame, ServerMessageRoot};
use nervix_protocol::schema::*;
use nervix_protocol::violation::{Fault, ProtocolViolation, Site};
use proptest::prelude::*;
use std::num::NonZeroU64;
use std::time::Duration;

fn frame(body: ServerBodyT) -> ServerFrame {
    let bytes = Encoder::new()
        .encode::<ServerMessageRoot>(&ServerMessageT { body })
        .expect("the frame obeys the schema");
    ServerFrame::check(bytes).expect("the frame checks")
}

fn observed(clock: DomainClockObservationT) -> ServerFrame {
    frame(ServerBodyT::DomainClockObserved(Box::new(
        DomainClockObservedT {
            domain: "d".to_owned(),
            clock: Box::new(clock),
        },
    )))
}

fn read_observed(f: &ServerFrame) -> Result<DomainClock, ProtocolViolation> {
    let view = f.view();
    let observed = view
        .body_as_domain_clock_observed()
        .expect("a DomainClockObserved frame");
    DomainClock::from_view(observed.clock())
}

fn paced_t(
    period: u64,
    skew: u64,
    origin: i64,
    anchor: i64,
    rate: Option<f64>,
) -> PacedDomainClockT {
    PacedDomainClockT {
        period_nanos: period,
        skew_nanos: skew,
        logical_origin_unix_nanos: origin,
        utc_anchor_unix_nanos: anchor,
        time_rate: rate,
    }
}

/// The bytes of a bare `PacedDomainClock` table: verified by the flatbuffers verifier but not by
/// the protocol's semantic checks, to reach `from_view` with values a frame never carries.
fn bare_paced(t: &PacedDomainClockT) -> Vec<u8> {
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let root = t.pack(&mut fbb);
    fbb.finish(root, None);
    fbb.finished_data().to_vec()
}

fn bare_tick(t: &DomainClockTickedT) -> Vec<u8> {
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let root = t.pack(&mut fbb);
    fbb.finish(root, None);
    fbb.finished_data().to_vec()
}

fn clock(origin: i64, anchor: i64, rate: f64) -> PacedClock {
    PacedClock::new(NonZeroU64::MIN, 0, origin, anchor, rate).expect("a valid rate")
}

fn field(table: &'static str, name: &'static str, fault: Fault) -> ProtocolViolation {
    ProtocolViolation::Field {
        site: Site::new(table, name),
        fault,
    }
}

#[test]
fn k_4_tick_reads_nonzero_unsigned_ids_and_signed_times() {
    let cases = [
        (1, 1, i64::MIN, i64::MAX, 0),
        (u64::MAX, u64::MAX, i64::MAX, i64::MIN, -1),
        (1 << 63, (1 << 53) + 1, -1, 0, i64::MIN),
    ];
    for (generation, tick_id, boundary, authority, serving) in cases {
        let f = frame(ServerBodyT::DomainClockTicked(Box::new(
            DomainClockTickedT {
                domain: "d".to_owned(),
                generation,
                tick_id,
                logical_boundary_unix_nanos: boundary,
                authority_utc_unix_nanos: authority,
                serving_logical_unix_nanos: serving,
            },
        )));
        let view = f.view();
        let tick = Tick::from_view(view.body_as_domain_clock_ticked().expect("a tick"))
            .expect("a valid tick");
        assert_eq!(tick.generation.get(), generation);
        assert_eq!(tick.tick_id.get(), tick_id);
        assert_eq!(tick.logical_boundary_unix_nanos, boundary);
        assert_eq!(tick.authority_utc_unix_nanos, authority);
        assert_eq!(tick.serving_logical_unix_nanos, serving);
    }
}

#[test]
fn k_4_a_tick_with_zero_generation_or_id_is_a_typed_violation() {
    let tick = |generation, tick_id| DomainClockTickedT {
        domain: "d".to_owned(),
        generation,
        tick_id,
        logical_boundary_unix_nanos: 5,
        authority_utc_unix_nanos: 6,
        serving_logical_unix_nanos: 7,
    };
    let bytes = bare_tick(&tick(0, 1));
    let view = flatbuffers::root::<DomainClockTicked>(&bytes).expect("verifies");
    assert_eq!(
        Tick::from_view(view),
        Err(field("DomainClockTicked", "generation", Fault::Zero))
    );
    let bytes = bare_tick(&tick(1, 0));
    let view = flatbuffers::root::<DomainClockTicked>(&bytes).expect("verifies");
    assert_eq!(
        Tick::from_view(view),
        Err(field("DomainClockTicked", "tick_id", Fault::Zero))
    );
    let bytes = bare_tick(&tick(2, 3));
    let view = flatbuffers::root::<DomainClockTicked>(&bytes).expect("verifies");
    let t = Tick::from_view(view).expect("nonzero ids read");
    assert_eq!((t.generation.get(), t.tick_id.get()), (2, 3));
}

#[test]
fn k_4_clock_generation_is_unsigned_and_zero_before_the_first_start() {
    let states = [
        (
            DomainClockObservedStateT::StoppedDomainClock(Box::new(StoppedDomainClockT {})),
            ClockState::Stopped,
        ),
        (
            DomainClockObservedStateT::UninstalledDomainClock(Box::new(UninstalledDomainClockT {})),
            ClockState::Uninstalled,
        ),
        (
            DomainClockObservedStateT::UnpacedDomainClock(Box::new(UnpacedDomainClockT {})),
            ClockState::Unpaced,
        ),
    ];
    for generation in [0, 1, u64::MAX] {
        for (state, expected) in states.clone() {
            let f = observed(DomainClockObservationT { generation, state });
            let clock = read_observed(&f).expect("a valid clock");
            assert_eq!(clock.generation, generation);
            assert_eq!(clock.state, expected);
            assert!(clock.paced().is_none());
        }
    }
}

#[test]
fn k_4_paced_clock_reads_unsigned_period_and_skew_and_signed_times() {
    let cases = [
        (1, 0, i64::MIN, i64::MAX, f64::MIN_POSITIVE / 4.0),
        (u64::MAX, u64::MAX, i64::MAX, i64::MIN, f64::MAX),
        (1_000_000, 500, -1, 1, 1.0),
    ];
    for (period, skew, origin, anchor, rate) in cases {
        let f = observed(DomainClockObservationT {
            generation: 3,
            state: DomainClockObservedStateT::PacedDomainClock(Box::new(paced_t(
                period,
                skew,
                origin,
                anchor,
                Some(rate),
            ))),
        });
        let clock = read_observed(&f).expect("a valid clock");
        assert_eq!(clock.generation, 3);
        let p = clock.paced().expect("paced");
        assert_eq!(p.period_nanos().get(), period);
        assert_eq!(p.skew_nanos(), skew);
        assert_eq!(p.logical_origin_unix_nanos(), origin);
        assert_eq!(p.utc_anchor_unix_nanos(), anchor);
        assert_eq!(p.time_rate().to_bits(), rate.to_bits());
    }
}

#[test]
fn k_4_zero_period_and_absent_or_non_positive_finite_rates_are_typed_violations() {
    let read = |t: PacedDomainClockT| {
        let bytes = bare_paced(&t);
        let view = flatbuffers::root::<PacedDomainClock>(&bytes).expect("verifies");
        PacedClock::from_view(view)
    };
    assert_eq!(
        read(paced_t(0, 0, 0, 0, Some(1.0))),
        Err(field("PacedDomainClock", "period_nanos", Fault::Zero))
    );
    assert_eq!(
        read(paced_t(1, 0, 0, 0, None)),
        Err(field("PacedDomainClock", "time_rate", Fault::Absent))
    );
    for rate in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(
            read(paced_t(1, 0, 0, 0, Some(rate))),
            Err(field(
                "PacedDomainClock",
                "time_rate",
                Fault::NotPositiveFinite
            )),
            "rate {rate}"
        );
        let refused = PacedClock::new(NonZeroU64::MIN, 0, 0, 0, rate).expect_err("refused");
        assert_eq!(refused.0.to_bits(), rate.to_bits());
    }
    assert!(read(paced_t(1, 0, 0, 0, Some(f64::from_bits(1)))).is_ok());
    assert_eq!(
        PacedClock::new(NonZeroU64::MIN, 0, 0, 0, 2.0).map(|c| c.time_rate()),
        Ok::<f64, InvalidTimeRate>(2.0)
    );
}

#[test]
fn k_4_logical_time_before_and_at_the_anchor_is_the_origin() {
    let c = clock(-5, 1_000, 3.0);
    for utc in [i64::MIN, -1, 0, 999, 1_000] {
        assert_eq!(c.logical_at(utc), -5, "utc {utc}");
    }
    assert_eq!(c.logical_at(1_001), -2);
}

#[test]
fn k_4_rate_one_is_exact_integer_arithmetic_where_floats_drift() {
    // 2^62 + 1 nanoseconds after the anchor: a double cannot hold the odd nanosecond.
    let c = clock(7, -(1 << 61), 1.0);
    let utc = (1 << 61) + 1;
    let elapsed = i128::from(utc) + (1 << 61);
    assert_eq!(i128::from(c.logical_at(utc)), 7 + elapsed);
    assert_ne!(
        ((elapsed as f64) * 1.0) as i128,
        elapsed,
        "a float would drift here"
    );
    let c = clock(i64::MIN, i64::MIN, 1.0);
    assert_eq!(
        c.logical_at(i64::MAX),
        i64::MAX,
        "MIN + (2^64 - 1) is exactly MAX"
    );
    assert_eq!(c.logical_at(i64::MAX - 1), i64::MAX - 1);
    assert_eq!(c.logical_at(0), 0);
}

#[test]
fn k_4_fractional_rates_floor_the_exact_product() {
    let half = clock(0, 0, 0.5);
    assert_eq!(half.logical_at(1), 0);
    assert_eq!(half.logical_at(2), 1);
    assert_eq!(half.logical_at(3), 1);
    let three_halves = clock(10, 0, 1.5);
    assert_eq!(three_halves.logical_at(3), 14, "10 + floor(4.5)");
    // 0.1 is slightly above one tenth as a double: 10 ns give exactly 1, not 0.
    let tenth = clock(0, 0, 0.1);
    assert_eq!(tenth.logical_at(10), 1);
    assert_eq!(tenth.logical_at(9), 0);
    // 0.3 as a double is slightly below three tenths: 10 ns give floor(2.99...) = 2, while
    // the float product 10.0 * 0.3 rounds up to 3.0.
    let three_tenths = clock(0, 0, 0.3);
    assert_eq!(10.0 * 0.3_f64, 3.0);
    assert_eq!(three_tenths.logical_at(10), 2);
    // 3 * (2^55 + 1): the float product would lose the low bits.
    let triple = clock(0, 0, 3.0);
    assert_eq!(triple.logical_at((1 << 55) + 1), 3 * ((1 << 55) + 1));
}

#[test]
fn k_4_projection_saturates_at_the_signed_bounds_and_never_panics() {
    let huge = clock(0, i64::MIN, f64::MAX);
    assert_eq!(huge.logical_at(i64::MAX), i64::MAX);
    assert_eq!(huge.logical_at(i64::MIN + 1), i64::MAX);
    assert_eq!(huge.logical_at(i64::MIN), 0);
    let double = clock(i64::MIN, i64::MIN, 2.0);
    assert_eq!(
        double.logical_at(-1),
        i64::MAX - 1,
        "MIN + 2 * (2^63 - 1) fits"
    );
    assert_eq!(double.logical_at(0), i64::MAX, "MIN + 2 * 2^63 saturates");
    assert_eq!(double.logical_at(i64::MAX), i64::MAX);
    let tiny = clock(i64::MAX, i64::MIN, f64::from_bits(1));
    assert_eq!(tiny.logical_at(i64::MAX), i64::MAX);
    let tiny = clock(-3, i64::MIN, f64::from_bits(1));
    assert_eq!(
        tiny.logical_at(i64::MAX),
        -3,
        "2^64 * 2^-1074 floors to zero"
    );
    let top = clock(i64::MAX, 0, 1.0);
    assert_eq!(top.logical_at(i64::MAX), i64::MAX);
    assert_eq!(top.utc_at(i64::MAX), Some(i64::MIN));
}

#[test]
fn k_4_utc_at_is_the_earliest_instant_reaching_a_logical_time() {
    let one = clock(100, 1_000, 1.0);
    assert_eq!(one.utc_at(150), Some(1_050));
    assert_eq!(one.utc_at(101), Some(1_001));
    assert_eq!(
        one.utc_at(100),
        Some(i64::MIN),
        "the origin holds at every instant"
    );
    assert_eq!(one.utc_at(i64::MIN), Some(i64::MIN));
    let half = clock(0, 0, 0.5);
    assert_eq!(half.utc_at(1), Some(2));
    assert_eq!(half.utc_at(2), Some(4));
    let double = clock(0, 0, 2.0);
    assert_eq!(double.utc_at(1), Some(1));
    assert_eq!(double.utc_at(2), Some(1));
    assert_eq!(double.utc_at(3), Some(2));
    let slow = clock(0, 0, 1e-300);
    assert_eq!(slow.utc_at(1), None, "no signed 64-bit instant reaches it");
    assert_eq!(slow.utc_at(0), Some(i64::MIN));
    let edge = clock(i64::MIN, i64::MIN, 1.0);
    assert_eq!(edge.utc_at(i64::MAX), Some(i64::MAX));
}

#[test]
fn k_4_wait_until_never_arrives_early_and_is_zero_once_reached() {
    let half = clock(0, 1_000, 0.5);
    assert_eq!(half.wait_until(1_000, 1), Some(Duration::from_nanos(2)));
    assert_eq!(half.wait_until(1_001, 1), Some(Duration::from_nanos(1)));
    assert_eq!(half.wait_until(1_002, 1), Some(Duration::ZERO));
    assert_eq!(half.wait_until(i64::MAX, 1), Some(Duration::ZERO));
    assert_eq!(half.wait_until(0, -4), Some(Duration::ZERO));
    let span = clock(0, i64::MIN, 1.0);
    assert_eq!(
        span.wait_until(i64::MIN, i64::MAX),
        Some(Duration::from_nanos(i64::MAX as u64)),
        "logical MAX is reached at utc -1"
    );
    let span = clock(i64::MIN, i64::MIN, 1.0);
    assert_eq!(
        span.wait_until(i64::MIN, i64::MAX),
        Some(Duration::from_nanos(u64::MAX)),
        "the widest wait, 2^64 - 1 ns, is representable"
    );
    let slow = clock(0, 0, 1e-300);
    assert_eq!(slow.wait_until(0, 1), None);
}

#[test]
fn k_4_admission_window_is_centre_plus_minus_skew_inclusive_and_saturating() {
    let with_skew = |skew| PacedClock::new(NonZeroU64::MIN, skew, 0, 0, 1.0).expect("valid");
    assert_eq!(with_skew(5).admission_window(100), 95..=105);
    assert_eq!(with_skew(0).admission_window(-7), -7..=-7);
    assert!(with_skew(5).admission_window(100).contains(&95));
    assert!(!with_skew(5).admission_window(100).contains(&106));
    assert_eq!(
        with_skew(10).admission_window(i64::MIN + 3),
        i64::MIN..=i64::MIN + 13
    );
    assert_eq!(
        with_skew(10).admission_window(i64::MAX - 3),
        i64::MAX - 13..=i64::MAX
    );
    assert_eq!(with_skew(u64::MAX).admission_window(0), i64::MIN..=i64::MAX);
}

/// The mapping computed the slow way: the rate decomposed by repeated doubling and halving of
/// the double itself, the product scaled one bit at a time.
fn reference(origin: i64, anchor: i64, rate: f64, utc: i64) -> i64 {
    let elapsed = i128::from(utc) - i128::from(anchor);
    if elapsed <= 0 {
        return origin;
    }
    let mut r = rate;
    let mut exponent: i32 = 0;
    while r.fract() != 0.0 {
        r *= 2.0;
        exponent -= 1;
    }
    while r >= 9_007_199_254_740_992.0 {
        r /= 2.0;
        exponent += 1;
    }
    let mantissa = r as u128;
    let room = (i128::from(i64::MAX) - i128::from(origin)) as u128;
    let mut v = elapsed as u128 * mantissa;
    if exponent >= 0 {
        for _ in 0..exponent {
            if v > room {
                return i64::MAX;
            }
            v *= 2;
        }
    } else {
        for _ in 0..-exponent {
            v /= 2;
        }
    }
    if v > room {
        i64::MAX
    } else {
        (i128::from(origin) + v as i128) as i64
    }
}

fn rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        // Every positive finite double, subnormals and the largest included.
        (1u64..0x7ff0_0000_0000_0000).prop_map(f64::from_bits),
        // Subnormals, and the range where a product overflows 64 bits.
        (1u64..(1 << 52)).prop_map(f64::from_bits),
        1e10..1e30f64,
        1e-6..1e6f64,
        0.5..2.0f64,
        Just(1.0),
    ]
}

fn instant() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        -1_000_000i64..1_000_000,
        Just(i64::MIN),
        Just(i64::MAX),
        (1i64 << 60)..(1i64 << 61),
    ]
}

proptest! {
    #[test]
    fn k_4_logical_at_matches_a_slow_exact_reference(
        origin in instant(), anchor in instant(), rate in rate(), utc in instant()
    ) {
        let c = clock(origin, anchor, rate);
        prop_assert_eq!(c.logical_at(utc), reference(origin, anchor, rate, utc));
    }

    #[test]
    fn k_4_logical_at_never_decreases_as_utc_grows(
        origin in instant(), anchor in instant(), rate in rate(), a in instant(), b in instant()
    ) {
        let c = clock(origin, anchor, rate);
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(c.logical_at(lo) <= c.logical_at(hi));
        prop_assert!(c.logical_at(lo) >= origin);
    }

    #[test]
    fn k_4_rate_one_equals_plain_integer_arithmetic(
        origin in instant(), anchor in instant(), utc in instant()
    ) {
        let c = clock(origin, anchor, 1.0);
        let exact = i128::from(origin) + (i128::from(utc) - i128::from(anchor)).max(0);
        let expected = exact.min(i128::from(i64::MAX)) as i64;
        prop_assert_eq!(c.logical_at(utc), expected);
    }

    #[test]
    fn k_4_utc_at_is_the_least_instant_whose_logical_time_reaches_the_target(
        origin in instant(), anchor in instant(), rate in rate(), target in instant(),
        offset in 0i64..1_000
    ) {
        let c = clock(origin, anchor, rate);
        // Aim near the origin too, where most of the interesting targets are.
        let target = if target % 2 == 0 { origin.saturating_add(offset) } else { target };
        match c.utc_at(target) {
            Some(at) => {
                prop_assert!(c.logical_at(at) >= target);
                if at == i64::MIN {
                    prop_assert!(target <= origin);
                } else {
                    prop_assert!(at > anchor);
                    prop_assert!(c.logical_at(at - 1) < target);
                }
            }
            None => prop_assert!(c.logical_at(i64::MAX) < target),
        }
    }

    #[test]
    fn k_4_waiting_the_returned_duration_never_arrives_early(
        origin in instant(), anchor in instant(), rate in rate(), now in instant(),
        ahead in 0i64..1_000_000
    ) {
        let c = clock(origin, anchor, rate);
        let target = c.logical_at(now).saturating_add(ahead);
        match c.wait_until(now, target) {
            Some(wait) => {
                let arrival = i128::from(now) + wait.as_nanos() as i128;
                prop_assert!(arrival <= i128::from(i64::MAX));
                let arrival = arrival as i64;
                prop_assert!(c.logical_at(arrival) >= target);
                if wait > Duration::ZERO {
                    prop_assert!(c.logical_at(arrival - 1) < target, "not the shortest wait");
                }
            }
            None => prop_assert!(c.logical_at(i64::MAX) < target),
        }
    }
}
