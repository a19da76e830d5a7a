//! Outcomes kept for callers that stopped waiting.
//!
//! A driver and every pending request it handed out share one [`Unclaimed`] store: a wait
//! dropped after its outcome arrived, but before it was read, puts the outcome here itself,
//! and the driver puts here the outcomes of requests whose waits were dropped earlier. The
//! application takes them all when it asks.
//!
//! The store is bounded in count ([`UNCLAIMED`]) and in bytes ([`UNCLAIMED_BYTES`]), as the
//! engine's [`Keep`] policy weighs each outcome. When a new outcome does not fit, ordinary
//! outcomes go first, oldest first: an outcome the policy calls *precious* (one that carries
//! the only copy of what a later recovery needs) is evicted only when nothing but precious
//! outcomes is kept. Every eviction is counted ([`Unclaimed::lost`],
//! [`Unclaimed::lost_precious`]); nothing goes silently.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// The most outcomes kept for callers that stopped waiting.
pub const UNCLAIMED: usize = 1024;

/// The most bytes (as [`Keep::weight`] counts them) kept for callers that stopped waiting.
pub const UNCLAIMED_BYTES: usize = 16 << 20;

/// How an engine's outcomes are kept: what each costs, and which must outlive the others.
pub trait Keep<T> {
    /// What keeping `outcome` costs, in bytes.
    fn weight(outcome: &T) -> usize;
    /// Whether `outcome` is evicted only when nothing but such outcomes is kept.
    fn precious(outcome: &T) -> bool;
}

struct Store<T> {
    kept: VecDeque<(T, usize)>,
    bytes: usize,
    lost: u64,
    lost_precious: u64,
}

impl<T> Default for Store<T> {
    fn default() -> Self {
        Self {
            kept: VecDeque::new(),
            bytes: 0,
            lost: 0,
            lost_precious: 0,
        }
    }
}

impl<T> Store<T> {
    /// Evicts one kept outcome, an ordinary one first (oldest first), else the oldest; false
    /// when nothing is kept.
    fn evict<P: Keep<T>>(&mut self) -> bool {
        let at = self
            .kept
            .iter()
            .position(|(r, _)| !P::precious(r))
            .unwrap_or(0);
        let Some((r, w)) = self.kept.remove(at) else {
            return false;
        };
        self.bytes -= w;
        self.lost += 1;
        if P::precious(&r) {
            self.lost_precious += 1;
        }
        true
    }
}

/// Outcomes `T` kept for callers that stopped waiting, weighed by the policy `P`, bounded to
/// [`UNCLAIMED`] outcomes and [`UNCLAIMED_BYTES`] bytes; clones share one store.
pub struct Unclaimed<T, P> {
    store: Arc<Mutex<Store<T>>>,
    policy: PhantomData<fn() -> P>,
}

impl<T, P> Clone for Unclaimed<T, P> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            policy: PhantomData,
        }
    }
}

impl<T, P> Default for Unclaimed<T, P> {
    fn default() -> Self {
        Self {
            store: Arc::default(),
            policy: PhantomData,
        }
    }
}

impl<T, P> fmt::Debug for Unclaimed<T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.store();
        f.debug_struct("Unclaimed")
            .field("kept", &s.kept.len())
            .field("bytes", &s.bytes)
            .field("lost", &s.lost)
            .field("lost_precious", &s.lost_precious)
            .finish()
    }
}

impl<T, P> Unclaimed<T, P> {
    fn store(&self) -> std::sync::MutexGuard<'_, Store<T>> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands every kept outcome out, oldest first.
    pub fn take(&self) -> Vec<T> {
        let mut s = self.store();
        s.bytes = 0;
        s.kept.drain(..).map(|(r, _)| r).collect()
    }

    /// How many outcomes are kept now.
    pub fn len(&self) -> usize {
        self.store().kept.len()
    }

    /// Whether nothing is kept now.
    pub fn is_empty(&self) -> bool {
        self.store().kept.is_empty()
    }

    /// The bytes kept now, as [`Keep::weight`] counts them.
    pub fn bytes(&self) -> usize {
        self.store().bytes
    }

    /// How many outcomes the bounds evicted since the store was made, precious ones
    /// included.
    pub fn lost(&self) -> u64 {
        self.store().lost
    }

    /// How many of the evicted outcomes were precious.
    pub fn lost_precious(&self) -> u64 {
        self.store().lost_precious
    }
}

impl<T, P: Keep<T>> Unclaimed<T, P> {
    /// Keeps `r`. When it does not fit, kept outcomes are evicted (ordinary ones before
    /// precious ones, oldest first) and counted until it does. An outcome heavier than the
    /// whole byte bound is not kept, and is counted as lost without evicting anything.
    pub fn keep(&self, r: T) {
        let w = P::weight(&r);
        let mut s = self.store();
        if w > UNCLAIMED_BYTES {
            s.lost += 1;
            if P::precious(&r) {
                s.lost_precious += 1;
            }
            tracing::warn!(
                bytes = w,
                "unclaimed outcome larger than the whole store: dropped"
            );
            return;
        }
        let lost = s.lost;
        while (s.kept.len() >= UNCLAIMED || s.bytes + w > UNCLAIMED_BYTES) && s.evict::<P>() {}
        if s.lost > lost {
            tracing::warn!(
                evicted = s.lost - lost,
                held = s.kept.len(),
                held_bytes = s.bytes,
                "unclaimed outcomes evicted to make room"
            );
        }
        s.bytes += w;
        s.kept.push_back((r, w));
    }
}

/// Orders the hand-over of one outcome to its waiter against the waiter leaving, for a
/// channel that cannot be closed from its receiving end: the driver delivers through
/// [`Gate::deliver`] and the waiter leaves through [`Gate::leave`], under one lock, so an
/// outcome delivered as the waiter leaves is either read by [`Gate::leave`]'s `take` or
/// handed back to the driver, never lost between them.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<Mutex<bool>>);

impl Gate {
    /// Hands `r` on with `send`, unless the waiter left: then, or when `send` gives it
    /// back, `r` comes back.
    pub fn deliver<T>(&self, r: T, send: impl FnOnce(T) -> Option<T>) -> Option<T> {
        let left = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if *left {
            return Some(r);
        }
        send(r)
    }

    /// Marks the waiter gone, and reads with `take` what was delivered before.
    pub fn leave<T>(&self, take: impl FnOnce() -> Option<T>) -> Option<T> {
        let mut left = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *left = true;
        take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal-like outcome: an acknowledged entry, or one whose fate is unknown and whose
    /// payload is the only copy a resend needs.
    #[derive(Debug, Clone, PartialEq)]
    enum Receipt {
        Acked(u64),
        Unknown(Vec<u8>),
    }

    struct Receipts;

    impl Keep<Receipt> for Receipts {
        fn weight(r: &Receipt) -> usize {
            16 + match r {
                Receipt::Acked(_) => 0,
                Receipt::Unknown(p) => p.len(),
            }
        }
        fn precious(r: &Receipt) -> bool {
            matches!(r, Receipt::Unknown(_))
        }
    }

    type Store = Unclaimed<Receipt, Receipts>;

    #[test]
    fn a_store_of_another_engines_outcomes_keeps_precious_ones_past_ordinary_ones() {
        let u = Store::default();
        u.keep(Receipt::Unknown(b"only copy".to_vec()));
        for i in 0..UNCLAIMED as u64 + 3 {
            u.keep(Receipt::Acked(i));
        }
        assert_eq!(u.len(), UNCLAIMED);
        assert_eq!((u.lost(), u.lost_precious()), (4, 0));
        let kept = u.take();
        assert_eq!(kept[0], Receipt::Unknown(b"only copy".to_vec()));
        assert_eq!(kept[1], Receipt::Acked(4), "the oldest ordinary ones went");
        assert!(u.is_empty());
        assert_eq!(u.bytes(), 0);
    }

    #[test]
    fn a_store_of_another_engines_outcomes_is_bounded_in_bytes_by_its_weight() {
        let u = Store::default();
        let big = vec![0; 1 << 20];
        for _ in 0..20 {
            u.keep(Receipt::Unknown(big.clone()));
        }
        let fit = UNCLAIMED_BYTES / Receipts::weight(&Receipt::Unknown(big.clone()));
        assert_eq!(u.len(), fit);
        assert!(u.bytes() <= UNCLAIMED_BYTES);
        assert_eq!(u.lost_precious(), (20 - fit) as u64);
        // Heavier than the whole bound: counted, nothing evicted.
        u.keep(Receipt::Unknown(vec![0; UNCLAIMED_BYTES]));
        assert_eq!(u.len(), fit);
        assert_eq!(u.lost_precious(), (21 - fit) as u64);
        let shared = u.clone();
        shared.keep(Receipt::Acked(1));
        assert_eq!(u.len(), fit + 1, "a clone shares the store");
        assert_eq!(u.lost(), (21 - fit) as u64);
        assert!(format!("{u:?}").starts_with("Unclaimed { kept: "));
    }

    #[test]
    fn an_outcome_delivered_through_a_gate_as_its_waiter_leaves_is_never_lost() {
        let g = Gate::default();
        let mut slot = None;
        assert_eq!(
            g.deliver("r", |r| {
                slot = Some(r);
                None
            }),
            None
        );
        assert_eq!(g.leave(|| slot.take()), Some("r"));
        let g = Gate::default();
        assert_eq!(g.leave(|| None::<u8>), None);
        assert_eq!(
            g.deliver(2, |_| panic!("sent after the waiter left")),
            Some(2)
        );
    }
}
