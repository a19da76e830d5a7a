//! What every policy does with what a restart found: the application is told first, and only
//! then do the records of what it was told as unknown end (ended first, an unknown outcome the
//! application was never told would be lost to a crash between the two). Also the counted end
//! of a record, which every policy writes the same way.

use crate::record::JournalKey;
use crate::RecordStore;

/// The recovery list of one policy until it is taken, then the keys of its entries reported
/// unknown until the list was handed on.
#[derive(Debug)]
pub(crate) struct ToReport<T> {
    list: Option<(T, Vec<JournalKey>)>,
    reported: Vec<JournalKey>,
}

/// Nothing to report.
impl<T> Default for ToReport<T> {
    fn default() -> Self {
        Self {
            list: None,
            reported: Vec::new(),
        }
    }
}

impl<T: Default> ToReport<T> {
    /// `list`, whose entries of `keys` end once it was handed on.
    pub(crate) fn new(list: T, keys: Vec<JournalKey>) -> Self {
        Self {
            list: Some((list, keys)),
            reported: Vec::new(),
        }
    }

    /// The list, once (later calls get an empty one); its keys wait for [`ToReport::ends`].
    /// A later call's empty list puts aside the keys of a list taken before and never handed
    /// on (its call was given up): those records stay, and the next start reports them again.
    pub(crate) fn take(&mut self) -> T {
        let Some((list, keys)) = self.list.take() else {
            self.reported.clear();
            return T::default();
        };
        self.reported = keys;
        list
    }

    /// How many records wait for the taken list to be handed on.
    pub(crate) fn waiting(&self) -> usize {
        self.reported.len()
    }

    /// The taken list was handed on: `end` ends each waiting record; the ends it refused
    /// are given back. Later calls end nothing.
    pub(crate) fn ends<E>(&mut self, mut end: impl FnMut(JournalKey) -> Result<(), E>) -> Vec<E> {
        std::mem::take(&mut self.reported)
            .into_iter()
            .filter_map(|key| end(key).err())
            .collect()
    }

    /// [`ToReport::ends`] through [`end_counted`]: each waiting record ends in `store`,
    /// counted in `ended`, or, refused, in `failures` and given back.
    pub(crate) fn end_counted<S: RecordStore + ?Sized>(
        &mut self,
        store: &mut S,
        now_millis: u64,
        ended: &mut u64,
        failures: &mut u64,
    ) -> Vec<S::Error> {
        self.ends(|key| end_counted(store, key, now_millis, ended, failures))
    }
}

/// Ends the record of `key` in `store`, counting the end in `ended` or the refusal in
/// `failures`.
pub(crate) fn end_counted<S: RecordStore + ?Sized>(
    store: &mut S,
    key: JournalKey,
    now_millis: u64,
    ended: &mut u64,
    failures: &mut u64,
) -> Result<(), S::Error> {
    let r = store.end(key, now_millis);
    match r {
        Ok(()) => *ended += 1,
        Err(_) => *failures += 1,
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_wait_for_the_list_to_be_handed_on_and_end_once() {
        let mut r = ToReport::new(vec!["a"], vec![JournalKey(1), JournalKey(2)]);
        assert_eq!(r.waiting(), 0, "nothing waits before the list is taken");
        assert!(r.ends(|_| Err::<(), ()>(())).is_empty());
        assert_eq!(r.take(), vec!["a"]);
        assert_eq!(r.waiting(), 2);
        let mut ended = Vec::new();
        let failures = r.ends(|k| {
            ended.push(k);
            if k == JournalKey(2) {
                Err(k)
            } else {
                Ok(())
            }
        });
        assert_eq!(ended, vec![JournalKey(1), JournalKey(2)], "in order");
        assert_eq!(failures, vec![JournalKey(2)]);
        assert!(r.ends(|_| Err::<(), ()>(())).is_empty(), "nothing twice");
        assert!(r.take().is_empty(), "once");
    }

    #[test]
    fn a_list_never_handed_on_leaves_its_keys_when_a_later_empty_list_is() {
        let mut r = ToReport::new(vec!["a"], vec![JournalKey(1), JournalKey(2)]);
        assert_eq!(r.take(), vec!["a"]);
        // Its call was given up: no ends. A later call gets an empty list, handed on.
        assert!(r.take().is_empty(), "once");
        assert_eq!(r.waiting(), 0);
        assert!(
            r.ends(Err::<(), _>).is_empty(),
            "the first list's records are not ended"
        );
    }
}
