//! SplitMix64, the seeded generator of the simulations: a 64-bit counter stepped by a fixed
//! odd constant, each step's value scrambled by [`mix`]. A run is fully determined by its
//! seed, so a seed that found a fault replays it; the generator is not for secrets.
//!
//! ```
//! use sansio_kit::rng::SplitMix64;
//!
//! let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
//! assert_eq!(a.next_u64(), b.next_u64()); // one seed, one sequence
//! assert!(a.below(10) < 10);
//! assert!(!a.chance(0) && a.chance(100));
//! ```

/// The step added to the counter before each draw (the odd constant nearest 2^64 divided by
/// the golden ratio).
pub const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The output function: scrambles a counter value into 64 bits that look random.
#[must_use]
pub const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A SplitMix64 generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }

    /// A number in `0..n` by remainder (0 when `n` is 0). The remainder leans very slightly
    /// towards small numbers when `n` does not divide 2^64; the simulations do not care, and
    /// their recorded runs depend on this exact draw.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent` / 100 (always from 100 on, never at 0).
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A uniform draw in `[0, 1)` from the top 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_of_seed_zero_is_the_published_one() {
        // The first outputs of SplitMix64 from seed 0, as the algorithm defines them.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn below_stays_under_its_bound_and_zero_gives_zero() {
        let mut r = SplitMix64::new(3);
        for n in 1..200 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.below(1), 0);
    }

    #[test]
    fn below_is_the_remainder_of_the_next_draw() {
        let (mut a, mut b) = (SplitMix64::new(11), SplitMix64::new(11));
        assert_eq!(a.below(1000), b.next_u64() % 1000);
    }

    #[test]
    fn chance_follows_its_percent() {
        let mut r = SplitMix64::new(5);
        assert!((0..500).all(|_| !r.chance(0)));
        assert!((0..500).all(|_| r.chance(100)));
        let hits = (0..10_000).filter(|_| r.chance(30)).count();
        assert!((2_700..3_300).contains(&hits), "{hits}");
        let (mut a, mut b) = (SplitMix64::new(9), SplitMix64::new(9));
        assert_eq!(a.chance(42), b.below(100) < 42);
    }

    #[test]
    fn unit_is_the_top_53_bits_in_zero_to_one() {
        let (mut a, mut b) = (SplitMix64::new(8), SplitMix64::new(8));
        let u = a.unit();
        assert_eq!(u, (b.next_u64() >> 11) as f64 / (1u64 << 53) as f64);
        let mut r = SplitMix64::new(1);
        assert!((0..1000).map(|_| r.unit()).all(|u| (0.0..1.0).contains(&u)));
    }
}
