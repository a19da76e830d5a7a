//! The queue of producer or consumer events waiting for the application.
//!
//! Most events are bounded by what the application itself asked for: an outcome per batch it
//! submitted, a delivery per unit of credit it granted, one opening and one end per producer
//! or consumer. Three are not: a server that drops the session again and again makes every
//! attached producer and consumer `Interrupted`, then `Restored` or `RestoreRefused`, once per
//! drop. An application that stops reading would let those grow without end, so the queue
//! folds them while they are unread and counts what it folds:
//!
//! - a second `Interrupted` of the same owner, while the first is unread, is folded into the
//!   first, together with the `Restored` and `RestoreRefused` that came between them: the
//!   application still reads that the owner was interrupted, and what became of it after;
//! - a `RestoreRefused` folds the unread `RestoreRefused` of the same interruption into
//!   itself: the newest refusal says why the owner is still waiting.
//!
//! So each owner holds at most five unread lifecycle events whatever the peer does, and a
//! `Restored` is always read after the `Interrupted` it answers. Folding never touches an
//! outcome, a delivery, an admission or an end.

use std::collections::{BTreeMap, VecDeque};

/// The events a peer can repeat without the application asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// The session holding the attachment was lost.
    Interrupted,
    /// A new attachment opened.
    Restored,
    /// A new open was refused for now.
    RestoreRefused,
}

/// An event that may be one of the [`Lifecycle`] kinds.
pub(crate) trait LifecycleEvent {
    /// Which lifecycle kind the event is, if it is one.
    fn lifecycle(&self) -> Option<Lifecycle>;
}

/// Events in the order they happened, each with its owner.
#[derive(Debug)]
pub(crate) struct EventQueue<I, E> {
    events: VecDeque<(I, E)>,
    /// Unread lifecycle events by owner: an owner with none is never scanned on a push.
    lifecycle: BTreeMap<I, u32>,
    /// Lifecycle events folded into others since the queue was made.
    folded: u64,
}

impl<I, E> Default for EventQueue<I, E> {
    fn default() -> Self {
        Self {
            events: VecDeque::new(),
            lifecycle: BTreeMap::new(),
            folded: 0,
        }
    }
}

impl<I: Ord + Copy, E: LifecycleEvent> EventQueue<I, E> {
    /// Queues `event` of `id`, folding it as the module says.
    pub(crate) fn push(&mut self, id: I, event: E) {
        let Some(kind) = event.lifecycle() else {
            self.events.push_back((id, event));
            return;
        };
        if self.lifecycle.get(&id).is_some_and(|n| *n > 0) && self.fold(id, kind) {
            self.folded += 1;
            return;
        }
        *self.lifecycle.entry(id).or_default() += 1;
        self.events.push_back((id, event));
    }

    /// Folds the unread events of `id` that a new `kind` replaces; whether the new event is
    /// folded too.
    fn fold(&mut self, id: I, kind: Lifecycle) -> bool {
        let of = |e: &(I, E), k: Lifecycle| e.0 == id && e.1.lifecycle() == Some(k);
        match kind {
            Lifecycle::Restored => false,
            Lifecycle::Interrupted => {
                let Some(first) = self
                    .events
                    .iter()
                    .position(|e| of(e, Lifecycle::Interrupted))
                else {
                    return false;
                };
                self.remove_after(first, |e| {
                    of(e, Lifecycle::Restored) || of(e, Lifecycle::RestoreRefused)
                });
                true
            }
            Lifecycle::RestoreRefused => {
                let from = self
                    .events
                    .iter()
                    .rposition(|e| of(e, Lifecycle::Interrupted))
                    .map_or(0, |i| i + 1);
                self.remove_after(from, |e| of(e, Lifecycle::RestoreRefused));
                false
            }
        }
    }

    /// Removes, from index `from` on, the events `which` picks, counting them folded.
    fn remove_after(&mut self, from: usize, which: impl Fn(&(I, E)) -> bool) {
        let mut i = from;
        while i < self.events.len() {
            if which(&self.events[i]) {
                let gone = self.events.remove(i);
                if let Some(gone) = gone {
                    self.read(&gone);
                    self.folded += 1;
                }
            } else {
                i += 1;
            }
        }
    }

    /// Accounts for an event leaving the queue.
    fn read(&mut self, (id, event): &(I, E)) {
        if event.lifecycle().is_some() {
            self.one_less(*id);
        }
    }

    /// One unread lifecycle event of `id` fewer.
    fn one_less(&mut self, id: I) {
        if let Some(n) = self.lifecycle.get_mut(&id) {
            *n -= 1;
            if *n == 0 {
                self.lifecycle.remove(&id);
            }
        }
    }

    /// The oldest event of `id`.
    pub(crate) fn poll(&mut self, id: I) -> Option<E> {
        let i = self.events.iter().position(|(o, _)| *o == id)?;
        let gone = self.events.remove(i)?;
        self.read(&gone);
        Some(gone.1)
    }

    /// The oldest event of any owner.
    pub(crate) fn pop_front(&mut self) -> Option<(I, E)> {
        let gone = self.events.pop_front()?;
        self.read(&gone);
        Some(gone)
    }

    /// Whether `id` has an event unread.
    pub(crate) fn holds(&self, id: I) -> bool {
        self.events.iter().any(|(o, _)| *o == id)
    }

    /// Keeps only the events `keep` keeps.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&(I, E)) -> bool) {
        let mut gone = Vec::new();
        self.events.retain(|e| {
            let k = keep(e);
            if !k && e.1.lifecycle().is_some() {
                gone.push(e.0);
            }
            k
        });
        for id in gone {
            self.one_less(id);
        }
    }

    /// Lifecycle events folded into others so far.
    pub(crate) fn folded(&self) -> u64 {
        self.folded
    }

    /// Events waiting.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.events.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum Ev {
        I,
        R(u32),
        Rr(u32),
        Outcome(u32),
    }

    impl LifecycleEvent for Ev {
        fn lifecycle(&self) -> Option<Lifecycle> {
            match self {
                Ev::I => Some(Lifecycle::Interrupted),
                Ev::R(_) => Some(Lifecycle::Restored),
                Ev::Rr(_) => Some(Lifecycle::RestoreRefused),
                Ev::Outcome(_) => None,
            }
        }
    }

    fn drain(q: &mut EventQueue<u8, Ev>) -> Vec<(u8, Ev)> {
        std::iter::from_fn(|| q.pop_front()).collect()
    }

    #[test]
    fn a_second_interruption_folds_into_the_first_with_what_came_between() {
        let mut q = EventQueue::default();
        q.push(1, Ev::I);
        q.push(1, Ev::Outcome(7));
        q.push(1, Ev::Rr(1));
        q.push(2, Ev::I);
        q.push(1, Ev::R(1));
        q.push(1, Ev::I);
        q.push(1, Ev::Outcome(8));
        assert_eq!(q.folded(), 3);
        assert_eq!(
            drain(&mut q),
            vec![
                (1, Ev::I),
                (1, Ev::Outcome(7)),
                (2, Ev::I),
                (1, Ev::Outcome(8))
            ]
        );
        // Read, the owner's lifecycle starts afresh.
        q.push(1, Ev::R(2));
        q.push(1, Ev::I);
        assert_eq!(drain(&mut q), vec![(1, Ev::R(2)), (1, Ev::I)]);
        assert_eq!(q.folded(), 3);
    }

    #[test]
    fn the_newest_refusal_of_an_interruption_replaces_the_older() {
        let mut q = EventQueue::default();
        q.push(1, Ev::Rr(0));
        q.push(1, Ev::R(0));
        q.push(1, Ev::I);
        q.push(1, Ev::Rr(1));
        q.push(2, Ev::Rr(9));
        q.push(1, Ev::Rr(2));
        q.push(1, Ev::Rr(3));
        assert_eq!(q.folded(), 2);
        assert_eq!(
            drain(&mut q),
            vec![
                (1, Ev::Rr(0)),
                (1, Ev::R(0)),
                (1, Ev::I),
                (2, Ev::Rr(9)),
                (1, Ev::Rr(3))
            ]
        );
    }

    #[test]
    fn a_peer_dropping_sessions_without_end_leaves_at_most_five_unread_per_owner() {
        let mut q = EventQueue::default();
        q.push(1, Ev::Rr(0));
        q.push(1, Ev::R(0));
        for n in 1..10_000 {
            q.push(1, Ev::I);
            q.push(1, Ev::Rr(n));
            q.push(1, Ev::Rr(n + 1));
            q.push(1, Ev::R(n));
        }
        assert!(q.len() <= 5, "{}", q.len());
        let left = drain(&mut q);
        assert_eq!(
            left,
            vec![
                (1, Ev::Rr(0)),
                (1, Ev::R(0)),
                (1, Ev::I),
                (1, Ev::Rr(10_000)),
                (1, Ev::R(9_999))
            ]
        );
        // Every event pushed is either read or counted folded.
        assert_eq!(q.folded() + left.len() as u64, 2 + 4 * 9_999);
        assert!(q.lifecycle.is_empty());
    }

    #[test]
    fn polling_one_owner_and_retaining_keep_the_unread_counts() {
        let mut q = EventQueue::default();
        q.push(1, Ev::I);
        q.push(2, Ev::I);
        assert_eq!(q.poll(2), Some(Ev::I));
        // Owner 2 has nothing unread: its next interruption is queued, not folded.
        q.push(2, Ev::I);
        assert_eq!(q.folded(), 0);
        assert!(q.holds(1) && q.holds(2));
        q.retain(|(o, _)| *o != 1);
        assert!(!q.holds(1));
        assert!(q.holds(2));
        q.push(1, Ev::I);
        assert_eq!(q.folded(), 0);
        // What retain kept is still counted unread: owner 2's next interruption folds.
        q.push(2, Ev::I);
        assert_eq!(q.folded(), 1);
        assert_eq!(drain(&mut q), vec![(2, Ev::I), (1, Ev::I)]);
        assert!(q.lifecycle.is_empty());
    }
}
