//! Value generators for property tests and structured fuzzing (feature `testkit`).
//!
//! [`Gen`] turns a byte string into values: the same bytes always give the same value, so a
//! proptest case or a fuzzer input reproduces exactly. Generated values obey every constraint
//! mark of the schema, so they encode, and what they encode must read back bit for bit. Scalars
//! favour the values careless readers break on: extremes, -0.0, subnormals, NaN payloads,
//! infinities, text with NUL and multi-byte characters.

extern crate alloc;

/// A deterministic source of values drawn from a byte string.
#[derive(Debug)]
pub struct Gen<'a> {
    data: &'a [u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
    budget: usize,
}

/// A value that [`Gen`] can produce.
pub trait Generate: Sized {
    /// Draws one value.
    fn generate(g: &mut Gen<'_>) -> Self;
}

const TEXT: &[char] = &[
    'a', 'Z', '0', ' ', '\0', 'ü', '€', '🦀', '\u{7f}', '"', '\n', 'é',
];

impl<'a> Gen<'a> {
    /// A generator over `data`; past its end every draw reads zero bytes.
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            depth: 0,
            max_depth: 8,
            budget: 96,
        }
    }

    /// Draws a whole value.
    pub fn value<T: Generate>(&mut self) -> T {
        T::generate(self)
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn raw<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        for b in &mut a {
            *b = self.byte();
        }
        a
    }

    /// An index below `n` (which must not be zero).
    pub fn index(&mut self, n: usize) -> usize {
        self.byte() as usize % n
    }

    /// A coin flip.
    pub fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// A length between `min` and `max`; `min` once the depth limit or element budget is hit.
    pub fn len(&mut self, min: u64, max: u64) -> usize {
        let (min, max) = (min as usize, max as usize);
        if self.at_depth_limit() || self.budget == 0 {
            return min;
        }
        let n = min + self.byte() as usize % (max - min + 1);
        self.budget = self.budget.saturating_sub(n);
        n
    }

    /// Whether nesting is as deep as this generator goes for optional parts.
    pub fn at_depth_limit(&self) -> bool {
        self.depth >= self.max_depth
    }

    /// Draws a value one table deeper.
    pub fn nested<T: Generate>(&mut self) -> T {
        self.depth += 1;
        let v = T::generate(self);
        self.depth -= 1;
        v
    }

    /// A string of up to five characters drawn from a set with NUL and multi-byte ones.
    pub fn string(&mut self) -> alloc::string::String {
        let n = self.byte() % 6;
        (0..n).map(|_| TEXT[self.index(TEXT.len())]).collect()
    }
}

macro_rules! ints {
    ($($t:ident),*) => {$(
        #[allow(missing_docs)]
        impl<'a> Gen<'a> {
            pub fn $t(&mut self) -> $t {
                match self.byte() % 8 {
                    0 => 0,
                    1 => $t::MAX,
                    2 => $t::MIN,
                    3 => 1,
                    _ => $t::from_le_bytes(self.raw()),
                }
            }
        }
    )*};
}
ints!(u8, i8, u16, i16, u32, i32, u64, i64);

#[allow(missing_docs)]
impl<'a> Gen<'a> {
    pub fn f32(&mut self) -> f32 {
        f32::from_bits(match self.byte() % 10 {
            0 => 0x8000_0000,
            1 => 0x0000_0001,
            2 => 0x7f7f_ffff,
            3 => 0x7fc0_0001,
            4 => 0x7f80_0000,
            5 => 0xff80_0000,
            6 => 0xffbf_ffff,
            _ => u32::from_le_bytes(self.raw()),
        })
    }

    pub fn f64(&mut self) -> f64 {
        f64::from_bits(match self.byte() % 10 {
            0 => 0x8000_0000_0000_0000,
            1 => 0x0000_0000_0000_0001,
            2 => 0x7fef_ffff_ffff_ffff,
            3 => 0x7ff8_0000_0000_0001,
            4 => 0x7ff0_0000_0000_0000,
            5 => 0xfff0_0000_0000_0000,
            6 => 0x7ff0_0000_0000_0001,
            _ => u64::from_le_bytes(self.raw()),
        })
    }
}

#[allow(clippy::all, missing_docs, unused_variables)]
mod generated {
    use super::{Gen, Generate};
    use crate::schema::*;
    extern crate alloc;
    include!("generated/generators.rs");
}

/// Entries of the client's capability maps (commands, reads, subscriptions, clocks,
/// producers, consumers) that iterations on this thread have handed out so far. A drain that
/// looks only at what an input changed leaves it nearly still however much is open; a scan
/// of every open entry moves it by their number.
pub fn visited() -> u64 {
    crate::client::visited()
}
