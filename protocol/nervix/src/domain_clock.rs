//! A domain's clock as the serving node reports it, its ticks, and the projection a paced clock
//! defines between UTC and logical time (K-4).
//!
//! A paced clock follows the committed mapping
//!
//! ```text
//! logical = logical_origin + floor(max(0, utc - utc_anchor) * time_rate)
//! ```
//!
//! [`PacedClock::logical_at`] computes it exactly: the rate is a finite positive double, that
//! is an integer mantissa times a power of two, so the product is taken in 128-bit integers and
//! shifted, with no rounding anywhere but the one floor the mapping names. A rate of exactly 1.0
//! gives `logical_origin + (utc - utc_anchor)` to the nanosecond. Results beyond the signed
//! 64-bit range saturate at `i64::MAX` (the mapping never goes below `logical_origin`).
//!
//! The inverse projections, [`PacedClock::utc_at`] and [`PacedClock::wait_until`], are defined
//! from `logical_at` itself (the earliest instant it reaches a logical time), so a wait they
//! compute never ends before the logical time it waits for.

use crate::schema;
use crate::violation::{Fault, ProtocolViolation, Site};
use std::num::NonZeroU64;
use std::ops::RangeInclusive;
use std::time::Duration;

/// A domain's clock as installed on the serving node.
#[derive(Debug, Clone, PartialEq)]
pub struct DomainClock {
    /// STARTs committed so far: the clock's generation, zero before the domain's first START.
    pub generation: u64,
    /// What the generation's clock is doing.
    pub state: ClockState,
}

impl DomainClock {
    /// Reads an observation. The wire layer has checked it; a paced state that still breaks
    /// the schema's marks is a typed violation, never a panic.
    pub fn from_view(view: schema::DomainClockObservation<'_>) -> Result<Self, ProtocolViolation> {
        let state = match view.state_type() {
            schema::DomainClockObservedState::StoppedDomainClock => ClockState::Stopped,
            schema::DomainClockObservedState::UninstalledDomainClock => ClockState::Uninstalled,
            schema::DomainClockObservedState::UnpacedDomainClock => ClockState::Unpaced,
            schema::DomainClockObservedState::PacedDomainClock => {
                match view.state_as_paced_domain_clock() {
                    Some(p) => ClockState::Paced(PacedClock::from_view(p)?),
                    None => {
                        return Err(ProtocolViolation::field(
                            Site::new("DomainClockObservation", "state"),
                            Fault::Absent,
                        ))
                    }
                }
            }
            other => {
                return Err(ProtocolViolation::field(
                    Site::new("DomainClockObservation", "state"),
                    if other.0 == 0 {
                        Fault::NoneUnion
                    } else {
                        Fault::UndeclaredUnion { tag: other.0 }
                    },
                ))
            }
        };
        Ok(Self {
            generation: view.generation(),
            state,
        })
    }

    /// The paced clock, when the generation's clock is paced.
    pub fn paced(&self) -> Option<&PacedClock> {
        match &self.state {
            ClockState::Paced(p) => Some(p),
            _ => None,
        }
    }
}

/// What a generation's clock is doing.
///
/// Exhaustive on purpose: this mirrors the closed set of states one schema release declares,
/// and pacing code must decide for each of them; a release that adds a state should break
/// every match at compile time rather than fall into a wildcard arm.
#[derive(Debug, Clone, PartialEq)]
pub enum ClockState {
    /// No domain work runs.
    Stopped,
    /// Paced and running, but the serving node has no committed mapping or no clock
    /// authority yet.
    Uninstalled,
    /// Follows real UTC.
    Unpaced,
    /// Follows the committed mapping.
    Paced(PacedClock),
}

/// A time rate that is not a positive finite number.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("time rate {0} is not a positive finite number")]
pub struct InvalidTimeRate(pub f64);

/// A paced clock: its tick period, admission skew, and the committed mapping from UTC to
/// logical time. Fields are read through methods so that the rate is always positive and
/// finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacedClock {
    period_nanos: NonZeroU64,
    skew_nanos: u64,
    logical_origin_unix_nanos: i64,
    utc_anchor_unix_nanos: i64,
    time_rate: f64,
}

impl PacedClock {
    /// A paced clock; `time_rate` must be positive and finite.
    pub fn new(
        period_nanos: NonZeroU64,
        skew_nanos: u64,
        logical_origin_unix_nanos: i64,
        utc_anchor_unix_nanos: i64,
        time_rate: f64,
    ) -> Result<Self, InvalidTimeRate> {
        if !(time_rate.is_finite() && time_rate > 0.0) {
            return Err(InvalidTimeRate(time_rate));
        }
        Ok(Self {
            period_nanos,
            skew_nanos,
            logical_origin_unix_nanos,
            utc_anchor_unix_nanos,
            time_rate,
        })
    }

    /// Reads a paced state: a zero period, or an absent or non-positive-finite rate, is a typed
    /// violation (the wire layer refuses both before this is reached).
    pub fn from_view(view: schema::PacedDomainClock<'_>) -> Result<Self, ProtocolViolation> {
        let period = NonZeroU64::new(view.period_nanos()).ok_or_else(|| {
            ProtocolViolation::field(Site::new("PacedDomainClock", "period_nanos"), Fault::Zero)
        })?;
        let site = Site::new("PacedDomainClock", "time_rate");
        let rate = view
            .time_rate()
            .ok_or_else(|| ProtocolViolation::field(site, Fault::Absent))?;
        Self::new(
            period,
            view.skew_nanos(),
            view.logical_origin_unix_nanos(),
            view.utc_anchor_unix_nanos(),
            rate,
        )
        .map_err(|_| ProtocolViolation::field(site, Fault::NotPositiveFinite))
    }

    /// The tick period in nanoseconds.
    pub fn period_nanos(&self) -> NonZeroU64 {
        self.period_nanos
    }

    /// The admission tolerance either side of a tick centre, inclusive, in nanoseconds.
    pub fn skew_nanos(&self) -> u64 {
        self.skew_nanos
    }

    /// The logical time at which the generation began (signed Unix nanoseconds).
    pub fn logical_origin_unix_nanos(&self) -> i64 {
        self.logical_origin_unix_nanos
    }

    /// The UTC time at which the generation was established (signed Unix nanoseconds).
    pub fn utc_anchor_unix_nanos(&self) -> i64 {
        self.utc_anchor_unix_nanos
    }

    /// Logical seconds per UTC second: positive and finite.
    pub fn time_rate(&self) -> f64 {
        self.time_rate
    }

    /// The logical time at UTC instant `utc_unix_nanos`:
    /// `logical_origin + floor(max(0, utc - utc_anchor) * time_rate)`, computed exactly.
    ///
    /// Saturates at `i64::MAX` when the exact result is larger; it is never below
    /// `logical_origin`. Non-decreasing in `utc`.
    pub fn logical_at(&self, utc_unix_nanos: i64) -> i64 {
        let elapsed = i128::from(utc_unix_nanos) - i128::from(self.utc_anchor_unix_nanos);
        if elapsed <= 0 {
            return self.logical_origin_unix_nanos;
        }
        // 0 < elapsed < 2^64, mantissa < 2^53: the product is below 2^117.
        let (mantissa, exponent) = dyadic(self.time_rate);
        let product = elapsed.unsigned_abs() * u128::from(mantissa);
        let advance = if exponent >= 0 {
            let shift = exponent.unsigned_abs();
            if shift > product.leading_zeros() {
                u128::MAX
            } else {
                product << shift
            }
        } else {
            let shift = exponent.unsigned_abs();
            if shift >= 128 {
                0
            } else {
                product >> shift
            }
        };
        // origin <= i64::MAX, so the room is in 0..2^64.
        let room =
            (i128::from(i64::MAX) - i128::from(self.logical_origin_unix_nanos)).unsigned_abs();
        if advance >= room {
            i64::MAX
        } else {
            // advance < room < 2^64, and origin + advance <= i64::MAX.
            let sum = i128::from(self.logical_origin_unix_nanos) + advance as i128;
            i64::try_from(sum).unwrap_or(i64::MAX)
        }
    }

    /// The earliest UTC instant at which [`logical_at`](Self::logical_at) reaches
    /// `logical_unix_nanos`, or `None` when no signed 64-bit instant does.
    ///
    /// A logical time at or before `logical_origin` is reached at every instant, so the
    /// earliest one is `i64::MIN`. Otherwise the answer is after `utc_anchor`, and one
    /// nanosecond earlier `logical_at` is still below the logical time.
    pub fn utc_at(&self, logical_unix_nanos: i64) -> Option<i64> {
        if logical_unix_nanos <= self.logical_origin_unix_nanos {
            return Some(i64::MIN);
        }
        if self.logical_at(i64::MAX) < logical_unix_nanos {
            return None;
        }
        // logical_at(lo) < target <= logical_at(hi); logical_at is non-decreasing.
        let mut lo = i128::from(self.utc_anchor_unix_nanos);
        let mut hi = i128::from(i64::MAX);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            // lo < mid < hi <= i64::MAX and mid > anchor >= i64::MIN: in range.
            let mid_utc = i64::try_from(mid).unwrap_or(i64::MAX);
            if self.logical_at(mid_utc) >= logical_unix_nanos {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        i64::try_from(hi).ok()
    }

    /// How long to wait from UTC `now_unix_nanos` until logical time `logical_unix_nanos`:
    /// zero when it is already reached, `None` when no signed 64-bit instant reaches it.
    /// Waiting exactly the returned duration never arrives early.
    pub fn wait_until(&self, now_unix_nanos: i64, logical_unix_nanos: i64) -> Option<Duration> {
        let at = self.utc_at(logical_unix_nanos)?;
        if at <= now_unix_nanos {
            return Some(Duration::ZERO);
        }
        // at > now, so the difference is positive and below 2^64.
        let nanos = (i128::from(at) - i128::from(now_unix_nanos)).unsigned_abs();
        Some(Duration::from_nanos(
            u64::try_from(nanos).unwrap_or(u64::MAX),
        ))
    }

    /// The logical times admitted for the tick centred at `tick_centre_logical`: the centre
    /// plus and minus the skew, both ends included, saturating at the signed 64-bit bounds.
    pub fn admission_window(&self, tick_centre_logical: i64) -> RangeInclusive<i64> {
        let centre = i128::from(tick_centre_logical);
        let skew = i128::from(self.skew_nanos);
        let clamp = |v: i128| {
            i64::try_from(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX))).unwrap_or(0)
        };
        clamp(centre - skew)..=clamp(centre + skew)
    }
}

/// A positive finite double as `mantissa * 2^exponent`, exactly (mantissa below 2^53).
fn dyadic(rate: f64) -> (u64, i32) {
    const FRACTION: u64 = (1 << 52) - 1;
    let bits = rate.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & FRACTION;
    if biased == 0 {
        // Subnormal: no implicit leading one, the smallest exponent.
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    }
}

/// The newest accepted tick of a paced generation (K-4): generation and id are nonzero
/// unsigned 64-bit integers, the three times signed 64-bit Unix nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tick {
    /// The generation the tick belongs to.
    pub generation: NonZeroU64,
    /// The tick's number within its generation.
    pub tick_id: NonZeroU64,
    /// The logical time of the tick's boundary.
    pub logical_boundary_unix_nanos: i64,
    /// The clock authority's UTC observation.
    pub authority_utc_unix_nanos: i64,
    /// The serving node's logical reading, which anchors the tick when the client's UTC
    /// differs from the cluster's.
    pub serving_logical_unix_nanos: i64,
}

impl Tick {
    /// Reads a tick. A zero generation or tick id is a typed violation (the wire layer
    /// refuses both before this is reached).
    pub fn from_view(view: schema::DomainClockTicked<'_>) -> Result<Self, ProtocolViolation> {
        let nonzero = |value: u64, field: &'static str| {
            NonZeroU64::new(value).ok_or_else(|| {
                ProtocolViolation::field(Site::new("DomainClockTicked", field), Fault::Zero)
            })
        };
        Ok(Self {
            generation: nonzero(view.generation(), "generation")?,
            tick_id: nonzero(view.tick_id(), "tick_id")?,
            logical_boundary_unix_nanos: view.logical_boundary_unix_nanos(),
            authority_utc_unix_nanos: view.authority_utc_unix_nanos(),
            serving_logical_unix_nanos: view.serving_logical_unix_nanos(),
        })
    }
}
