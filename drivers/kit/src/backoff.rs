//! The growing pause between attempts: a first pause, doubling with each failure, up to a
//! longest one. Only the schedule; what counts as a failure is the engine's driver's call.

use std::time::Duration;

/// A pause that doubles with each failed attempt, from `first` up to `longest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    first: Duration,
    longest: Duration,
}

impl Backoff {
    /// A schedule starting at `first` and never above `longest` (nor below `first`, should
    /// `longest` be the shorter).
    pub const fn new(first: Duration, longest: Duration) -> Self {
        Self { first, longest }
    }

    /// The pause after the `failed`-th failed attempt (1 for the first; 0 is taken as 1):
    /// `first`, doubling with each failure, at most `longest`.
    pub fn pause(&self, failed: u32) -> Duration {
        let longest = self.longest.max(self.first);
        // Past 31 doublings the factor no longer fits; the pause has reached `longest` by
        // then from any first pause of a nanosecond or more.
        1u32.checked_shl(failed.saturating_sub(1))
            .map_or(longest, |factor| {
                self.first.saturating_mul(factor).min(longest)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backoff_doubles_from_its_first_pause_up_to_its_longest() {
        let b = Backoff::new(Duration::from_millis(250), Duration::from_secs(2));
        let pauses: Vec<u128> = (0..=6).map(|n| b.pause(n).as_millis()).collect();
        assert_eq!(pauses, [250, 250, 500, 1000, 2000, 2000, 2000]);
        assert_eq!(b.pause(u32::MAX), Duration::from_secs(2));
        let huge = Backoff::new(Duration::from_secs(u64::MAX / 2), Duration::MAX);
        assert_eq!(huge.pause(40), Duration::MAX, "saturates, never overflows");
        let odd = Backoff::new(Duration::from_secs(3), Duration::from_secs(1));
        assert_eq!(odd.pause(5), Duration::from_secs(3));
    }

    #[test]
    fn sf_18_a_back_off_from_a_tiny_first_pause_still_reaches_its_longest() {
        // 1 ms doubled 16 times is 65.5 s: the schedule goes on doubling to its longest.
        let b = Backoff::new(Duration::from_millis(1), Duration::from_secs(120));
        assert_eq!(b.pause(17), Duration::from_millis(65_536));
        assert_eq!(b.pause(18), Duration::from_secs(120));
        let ns = Backoff::new(Duration::from_nanos(1), Duration::from_secs(2));
        assert_eq!(ns.pause(31), Duration::from_nanos(1 << 30));
        assert_eq!(ns.pause(32), Duration::from_secs(2));
        assert_eq!(
            ns.pause(33),
            Duration::from_secs(2),
            "past the shift: the longest"
        );
    }
}
