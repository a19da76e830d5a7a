//! Outcomes the application read or gave up, on their way back to the driver (P-4).
//!
//! A driver takes each batch outcome from the engine with
//! `Client::poll_producer_events_held` and hands it to the batch's handle; the batch's credit
//! stays held until the handle says it was read, or was dropped unread. A handle does so
//! through [`Released`], which never blocks and cannot fail, from any thread, in a
//! destructor too; the driver takes what it holds at its next drain and passes each to
//! `Client::release_outcome`. It holds at most one entry per outstanding batch handle.

use crate::unclaimed::{UnclaimedBatch, UnclaimedBatches};
use nervix_protocol::client::{BatchId, BatchOutcome, ProducerId};
use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

/// Batches whose outcomes the application read or gave up, not yet told to the engine; and
/// the outcomes of batches whose handles were dropped before they read them, kept for
/// [`Released::unclaimed`] (P-7: a caller that stops waiting leaves the outcome
/// retrievable).
#[derive(Debug, Default)]
pub struct Released {
    list: Mutex<Vec<(ProducerId, BatchId)>>,
    /// Handles dropped before their outcome was handed over. The hand-over of an outcome and
    /// a handle leaving take this lock, so an outcome handed over as its handle leaves is
    /// either read by the leaving handle or kept by the driver, never lost between them.
    left: Mutex<BTreeSet<(ProducerId, BatchId)>>,
    unclaimed: UnclaimedBatches,
}

impl Released {
    /// Hands the outcome of `batch` of `producer` over with `send`, which gives it back when
    /// nobody takes it; one whose handle left, or that `send` gives back, is kept for
    /// [`Released::unclaimed`]. True when it was handed over.
    pub fn deliver(
        &self,
        producer: ProducerId,
        batch: BatchId,
        outcome: BatchOutcome,
        send: impl FnOnce(BatchOutcome) -> Option<BatchOutcome>,
    ) -> bool {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let back = if left.remove(&(producer, batch)) {
            Some(outcome)
        } else {
            send(outcome)
        };
        match back {
            Some(outcome) => {
                self.unclaimed
                    .keep(UnclaimedBatch::new(producer, batch, outcome));
                false
            }
            None => true,
        }
    }

    /// Keeps the outcome of `batch` of `producer`, whose handle is gone, for
    /// [`Released::unclaimed`].
    pub fn keep(&self, producer: ProducerId, batch: BatchId, outcome: BatchOutcome) {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        left.remove(&(producer, batch));
        self.unclaimed
            .keep(UnclaimedBatch::new(producer, batch, outcome));
    }

    /// The handle of `batch` of `producer` leaves without having read its outcome: `take`
    /// reads what was handed over before (kept for [`Released::unclaimed`]); when nothing
    /// was, the outcome is kept when it is handed over.
    pub fn leave(
        &self,
        producer: ProducerId,
        batch: BatchId,
        take: impl FnOnce() -> Option<BatchOutcome>,
    ) {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        match take() {
            Some(outcome) => self
                .unclaimed
                .keep(UnclaimedBatch::new(producer, batch, outcome)),
            None => {
                left.insert((producer, batch));
            }
        }
    }

    /// The outcomes of batches whose handles were dropped before they read them, bounded as
    /// its type says; each eviction is counted.
    pub fn unclaimed(&self) -> &UnclaimedBatches {
        &self.unclaimed
    }

    /// The outcome of `batch` of `producer` was read or given up.
    pub fn push(&self, producer: ProducerId, batch: BatchId) {
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((producer, batch));
    }

    /// Everything pushed since the last call, oldest first.
    pub fn take(&self) -> Vec<(ProducerId, BatchId)> {
        std::mem::take(&mut *self.list.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(r: &Released) -> Vec<(u64, BatchOutcome)> {
        r.unclaimed()
            .take()
            .into_iter()
            .map(|u| (u.batch.0, u.outcome))
            .collect()
    }

    #[test]
    fn p_7_an_outcome_and_its_handle_leaving_meet_under_one_lock_in_either_order() {
        let r = Released::default();
        let p = ProducerId(1);
        // Handed over, then the handle leaves unread: the handle keeps it.
        assert!(r.deliver(p, BatchId(1), BatchOutcome::Completed, |_| None));
        r.leave(p, BatchId(1), || Some(BatchOutcome::Completed));
        // The handle leaves first: the outcome is kept when it comes, never sent.
        r.leave(p, BatchId(2), || None);
        let handed = r.deliver(p, BatchId(2), BatchOutcome::Unknown, |_| {
            panic!("sent to a handle that left")
        });
        assert!(!handed);
        // Refused by a channel nobody reads: kept.
        assert!(!r.deliver(p, BatchId(3), BatchOutcome::NotSent, Some));
        assert_eq!(
            batches(&r),
            vec![
                (1, BatchOutcome::Completed),
                (2, BatchOutcome::Unknown),
                (3, BatchOutcome::NotSent)
            ]
        );
        // A handle that left is forgotten once its outcome came: the same name later (another
        // producer's batch) is sent as usual.
        assert!(r.deliver(p, BatchId(2), BatchOutcome::Completed, |_| None));
        // One kept straight away (its producer gone) also ends a leaving handle's wait.
        r.leave(p, BatchId(4), || None);
        r.keep(p, BatchId(4), BatchOutcome::Completed);
        assert!(r.deliver(p, BatchId(4), BatchOutcome::Completed, |_| None));
        assert_eq!(batches(&r), vec![(4, BatchOutcome::Completed)]);
        assert!(batches(&r).is_empty());
    }

    #[test]
    fn p_7_kept_batch_outcomes_are_bounded_and_evictions_counted_uncertain_ones_last() {
        let r = Released::default();
        let p = ProducerId(1);
        r.keep(p, BatchId(0), BatchOutcome::Unknown);
        for b in 1..=crate::unclaimed::UNCLAIMED as u64 {
            r.keep(p, BatchId(b), BatchOutcome::Completed);
        }
        assert_eq!(r.unclaimed().len(), crate::unclaimed::UNCLAIMED);
        assert_eq!(
            (r.unclaimed().lost(), r.unclaimed().lost_precious()),
            (1, 0)
        );
        let kept = batches(&r);
        assert_eq!(
            kept[0],
            (0, BatchOutcome::Unknown),
            "the uncertain one stays"
        );
        assert_eq!(kept[1].0, 2, "the oldest settled one went");
    }

    #[test]
    fn p_4_released_outcomes_are_taken_once_in_order() {
        let r = Released::default();
        assert!(r.take().is_empty());
        r.push(ProducerId(1), BatchId(2));
        r.push(ProducerId(1), BatchId(1));
        assert_eq!(
            r.take(),
            vec![(ProducerId(1), BatchId(2)), (ProducerId(1), BatchId(1))]
        );
        assert!(r.take().is_empty());
    }
}
