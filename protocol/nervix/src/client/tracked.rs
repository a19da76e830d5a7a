//! A map of a capability's entries that keeps, beside the entries, the few indexes the client
//! consults on every input: which entries may have something to send or a timer of their own
//! (`pending`), which carry a mark the capability asks about (`marked`), and every entry's
//! standing deadline in time order. Every change to an entry goes through a guard that files
//! the entry again when it is dropped, so a drain looks at what changed, never at everything
//! that is open.
//!
//! With the `testkit` feature, every entry an iteration hands out is counted per thread
//! ([`visited`]), so a test can tell a scan of every open entry from work proportional to
//! what an input changed.

use crate::time::Timestamp;
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::ops::{Deref, DerefMut};

#[cfg(feature = "testkit")]
thread_local! {
    static VISITED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one entry handed out by an iteration (only with the `testkit` feature).
#[inline]
pub(crate) fn visit() {
    #[cfg(feature = "testkit")]
    VISITED.with(|v| v.set(v.get() + 1));
}

/// Entries handed out by iterations over the client's entry maps on this thread so far.
#[cfg(feature = "testkit")]
pub(crate) fn visited() -> u64 {
    VISITED.with(|v| v.get())
}

/// Counts each item an iterator yields.
pub(crate) fn counted<I: Iterator>(it: I) -> impl Iterator<Item = I::Item> {
    it.inspect(|_| visit())
}

/// How an entry is filed.
pub(crate) trait Track {
    /// Whether the entry may be due, may want a session or may hold a timer besides its
    /// deadline: the drains look only at these.
    fn pending(&self) -> bool;
    /// A mark the capability counts (a BEGIN out, an attach by identity).
    fn marked(&self) -> bool {
        false
    }
    /// A deadline that stands whatever the entry's state.
    fn deadline(&self) -> Option<Timestamp> {
        None
    }
}

/// Entries by key, with their indexes.
#[derive(Debug)]
pub(crate) struct Tracked<K, V> {
    entries: BTreeMap<K, V>,
    pending: BTreeSet<K>,
    marked: BTreeSet<K>,
    deadlines: BTreeSet<(Timestamp, K)>,
    /// Entries changed in place through [`Tracked::touch`] and not filed again yet: they are
    /// looked at as if pending until they are.
    touched: BTreeSet<K>,
}

impl<K, V> Default for Tracked<K, V> {
    fn default() -> Self {
        Self {
            entries: BTreeMap::new(),
            pending: BTreeSet::new(),
            marked: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            touched: BTreeSet::new(),
        }
    }
}

#[derive(Clone, Copy)]
struct Filing {
    pending: bool,
    marked: bool,
    deadline: Option<Timestamp>,
}

impl Filing {
    fn of<V: Track>(v: &V) -> Self {
        Self {
            pending: v.pending(),
            marked: v.marked(),
            deadline: v.deadline(),
        }
    }
}

impl<K: Ord + Clone, V: Track> Tracked<K, V> {
    fn file(&mut self, k: &K, old: Option<Filing>, new: Option<Filing>) {
        refile(
            &mut self.pending,
            &mut self.marked,
            &mut self.deadlines,
            k,
            old,
            new,
        );
    }

    pub(crate) fn insert(&mut self, k: K, v: V) -> Option<V> {
        let new = Filing::of(&v);
        let old = self.entries.insert(k.clone(), v);
        self.file(&k, old.as_ref().map(Filing::of), Some(new));
        old
    }

    pub(crate) fn remove<Q>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (k, old) = self.entries.remove_entry(k)?;
        self.touched.remove::<K>(&k);
        self.file(&k, Some(Filing::of(&old)), None);
        Some(old)
    }

    pub(crate) fn get<Q>(&self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.get(k)
    }

    /// The entry, to change: it is filed again when the guard drops.
    pub(crate) fn get_mut<Q>(&mut self, k: &Q) -> Option<EntryMut<'_, K, V>>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (key, entry) = self
            .entries
            .range_mut::<Q, _>((Bound::Included(k), Bound::Included(k)))
            .next()?;
        let was = Filing::of(&*entry);
        Some(EntryMut {
            key,
            entry,
            was,
            pending: &mut self.pending,
            marked: &mut self.marked,
            deadlines: &mut self.deadlines,
        })
    }

    /// The entry, to change in place without a guard: it counts as pending until it is filed
    /// again by the next pass over the pending entries. Its mark and deadline must not change
    /// this way.
    pub(crate) fn touch<Q>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (key, entry) = self
            .entries
            .range_mut::<Q, _>((Bound::Included(k), Bound::Included(k)))
            .next()?;
        if !self.pending.contains::<K>(key) {
            self.touched.insert(key.clone());
        }
        Some(entry)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry, in key order (a scan: counted).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        counted(self.entries.iter())
    }

    /// Every entry (a scan: counted).
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        counted(self.entries.values())
    }

    /// Every key, in order (a scan: counted).
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> {
        counted(self.entries.keys())
    }

    /// Whether no entry is pending or changed in place: the drains have nothing to look at.
    fn idle(&self) -> bool {
        self.pending.is_empty() && self.touched.is_empty()
    }

    /// The pending entries, and those changed in place since they were last filed, in key
    /// order (counted).
    pub(crate) fn pending(&self) -> impl Iterator<Item = (&K, &V)> {
        // Nothing is merged when nothing is pending: the usual case of every drain.
        let keys = (!self.idle()).then(|| self.pending.union(&self.touched));
        counted(
            keys.into_iter()
                .flatten()
                .filter_map(|k| self.entries.get(k).map(|v| (k, v))),
        )
    }

    /// The keys [`Tracked::pending`] hands out, in order (counted).
    pub(crate) fn pending_keys(&self) -> Vec<K> {
        counted(self.pending.union(&self.touched))
            .cloned()
            .collect()
    }

    /// The first marked key from `from` on.
    pub(crate) fn marked_from(&self, from: K) -> Option<K> {
        counted(self.marked.range(from..)).next().cloned()
    }

    /// The first marked key up to and including `to`.
    pub(crate) fn marked_to(&self, to: K) -> Option<K> {
        counted(self.marked.range(..=to)).next().cloned()
    }

    /// Whether any entry is marked.
    pub(crate) fn any_marked(&self) -> bool {
        !self.marked.is_empty()
    }

    /// The earliest standing deadline.
    pub(crate) fn first_deadline(&self) -> Option<Timestamp> {
        self.deadlines.first().map(|(t, _)| *t)
    }

    /// Keys whose deadline is not after `now`, in key order.
    pub(crate) fn expired(&self, now: Timestamp) -> Vec<K> {
        let mut out: Vec<K> = counted(self.deadlines.iter())
            .take_while(|(t, _)| *t <= now)
            .map(|(_, k)| k.clone())
            .collect();
        out.sort();
        out
    }

    /// Changes every pending entry, filing each again.
    pub(crate) fn for_each_pending_mut(&mut self, mut f: impl FnMut(&K, &mut V)) {
        if self.idle() {
            return;
        }
        let keys = self.pending_keys();
        self.touched.clear();
        for k in keys {
            if let Some(mut e) = self.get_mut(&k) {
                f(&k, &mut e);
            }
        }
    }
}

fn refile<K: Ord + Clone>(
    pending: &mut BTreeSet<K>,
    marked: &mut BTreeSet<K>,
    deadlines: &mut BTreeSet<(Timestamp, K)>,
    k: &K,
    old: Option<Filing>,
    new: Option<Filing>,
) {
    // Pending and marked are set from the state now, not from a difference: an entry changed
    // in place since it was last filed may be filed wrongly. Deadlines never change in place.
    let od = old.and_then(|f| f.deadline);
    let (np, nm, nd) = new.map_or((false, false, None), |f| (f.pending, f.marked, f.deadline));
    if np {
        if !pending.contains(k) {
            pending.insert(k.clone());
        }
    } else {
        pending.remove(k);
    }
    if nm {
        if !marked.contains(k) {
            marked.insert(k.clone());
        }
    } else {
        marked.remove(k);
    }
    if od != nd {
        if let Some(t) = od {
            deadlines.remove(&(t, k.clone()));
        }
        if let Some(t) = nd {
            deadlines.insert((t, k.clone()));
        }
    }
}

/// A changing entry; filed again when dropped.
pub(crate) struct EntryMut<'a, K: Ord + Clone, V: Track> {
    key: &'a K,
    entry: &'a mut V,
    was: Filing,
    pending: &'a mut BTreeSet<K>,
    marked: &'a mut BTreeSet<K>,
    deadlines: &'a mut BTreeSet<(Timestamp, K)>,
}

impl<K: Ord + Clone, V: Track> Deref for EntryMut<'_, K, V> {
    type Target = V;
    fn deref(&self) -> &V {
        self.entry
    }
}

impl<K: Ord + Clone, V: Track> DerefMut for EntryMut<'_, K, V> {
    fn deref_mut(&mut self) -> &mut V {
        self.entry
    }
}

impl<K: Ord + Clone, V: Track> Drop for EntryMut<'_, K, V> {
    fn drop(&mut self) {
        let now = Filing::of(&*self.entry);
        refile(
            self.pending,
            self.marked,
            self.deadlines,
            self.key,
            Some(self.was),
            Some(now),
        );
    }
}

impl<K: std::fmt::Debug + Ord + Clone, V: std::fmt::Debug + Track> std::fmt::Debug
    for EntryMut<'_, K, V>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.entry.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[derive(Debug)]
    struct E {
        waiting: bool,
        mark: bool,
        deadline: Option<Timestamp>,
    }

    impl Track for E {
        fn pending(&self) -> bool {
            self.waiting
        }
        fn marked(&self) -> bool {
            self.mark
        }
        fn deadline(&self) -> Option<Timestamp> {
            self.deadline
        }
    }

    fn at(ms: u64) -> Timestamp {
        Timestamp::ZERO + Duration::from_millis(ms)
    }

    fn e(waiting: bool, deadline: u64) -> E {
        E {
            waiting,
            mark: false,
            deadline: Some(at(deadline)),
        }
    }

    fn pending(t: &Tracked<u32, E>) -> Vec<u32> {
        t.pending().map(|(k, _)| *k).collect()
    }

    #[test]
    fn a_guard_files_the_entry_again_as_it_is_when_dropped() {
        let mut t = Tracked::default();
        t.insert(1, e(false, 10));
        t.insert(2, e(true, 10));
        assert_eq!(pending(&t), [2]);
        t.get_mut(&1).unwrap().waiting = true;
        t.get_mut(&2).unwrap().waiting = false;
        assert_eq!(pending(&t), [1]);
        t.get_mut(&1).unwrap().mark = true;
        assert!(t.any_marked());
        t.get_mut(&1).unwrap().mark = false;
        assert!(!t.any_marked());
    }

    #[test]
    fn expired_entries_come_in_key_order_not_deadline_order() {
        let mut t = Tracked::default();
        t.insert(1, e(false, 30));
        t.insert(2, e(false, 20));
        t.insert(3, e(false, 10));
        t.insert(4, e(false, 40));
        assert_eq!(t.expired(at(29)), [2, 3]);
        assert_eq!(t.expired(at(30)), [1, 2, 3]);
        assert_eq!(t.first_deadline(), Some(at(10)));
        t.get_mut(&3).unwrap().deadline = Some(at(50));
        assert_eq!(t.first_deadline(), Some(at(20)));
        t.remove(&2);
        assert_eq!(t.expired(at(30)), [1]);
        assert_eq!(t.first_deadline(), Some(at(30)));
    }

    #[test]
    fn a_map_with_only_an_entry_changed_in_place_is_not_idle() {
        let mut t = Tracked::default();
        t.insert(1, e(false, 10));
        assert_eq!(pending(&t), Vec::<u32>::new());
        let mut seen = vec![];
        t.for_each_pending_mut(|k, _| seen.push(*k));
        assert!(seen.is_empty(), "nothing pending is visited");
        // Nothing is filed as pending; the change in place alone makes it looked at.
        t.touch(&1).unwrap().waiting = true;
        assert_eq!(pending(&t), [1]);
        t.for_each_pending_mut(|k, _| seen.push(*k));
        assert_eq!(seen, [1]);
        assert_eq!(pending(&t), [1], "filed again as pending");
    }

    #[test]
    fn an_entry_changed_in_place_counts_as_pending_until_filed_again() {
        let mut t = Tracked::default();
        t.insert(1, e(false, 10));
        t.insert(2, e(true, 10));
        t.touch(&1).unwrap().waiting = true;
        t.touch(&2).unwrap().waiting = false;
        // Both are looked at: one became pending, one is not known to have stopped.
        assert_eq!(pending(&t), [1, 2]);
        t.for_each_pending_mut(|_, _| {});
        assert_eq!(pending(&t), [1]);
        t.remove(&1);
        assert_eq!(pending(&t), Vec::<u32>::new());
        assert_eq!(t.len(), 1);
    }
}
