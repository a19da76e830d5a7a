//! The time the driver core reads: how long since it started (monotonic) and the wall clock.
//!
//! A driver's core reads both through a [`HostClock`]: the drivers use [`SystemClock`], the
//! host's own clocks, which [`Core::new`](crate::driver_core::Core::new) sets; a simulation
//! sets a clock of its own ([`Core::with_clock`](crate::driver_core::Core::with_clock)) so
//! that the core runs on virtual time, and a run of a seed is the same every time.

use nervix_protocol::time::UnixMillis;
use std::time::{Duration, Instant};

/// Where the driver core reads the time (and the separate calls, through the core's journal).
pub trait HostClock: Send + Sync {
    /// How long since the clock's origin; never goes back.
    fn elapsed(&self) -> Duration;
    /// The wall clock's time now, which a command's reference is made from.
    fn wall(&self) -> UnixMillis;
}

/// The host's clocks: the monotonic clock since `origin`, and the system's wall clock.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// The host's clocks, elapsed time counted from `origin`.
    #[must_use]
    pub fn since(origin: Instant) -> Self {
        Self { origin }
    }
}

impl HostClock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }

    fn wall(&self) -> UnixMillis {
        system_wall()
    }
}

/// The system's wall clock now, in milliseconds since the Unix epoch (0 before it).
#[must_use]
pub fn system_wall() -> UnixMillis {
    UnixMillis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_clock_counts_from_its_origin_and_reads_the_wall_clock() {
        let origin = Instant::now();
        let c = SystemClock::since(origin);
        let a = c.elapsed();
        let b = c.elapsed();
        assert!(b >= a, "monotonic");
        assert!(origin.elapsed() >= b);
        let before = system_wall();
        let w = c.wall();
        assert!(w >= before && w <= system_wall());
        // After 2025-01-01: the epoch is read, not zero.
        assert!(w.0 > 1_735_689_600_000);
    }
}
