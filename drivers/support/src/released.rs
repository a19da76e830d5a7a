//! Outcomes the application read or gave up, on their way back to the driver (P-4).
//!
//! A driver takes each batch outcome from the engine with
//! `Client::poll_producer_events_held` and hands it to the batch's handle; the batch's credit
//! stays held until the handle says it was read, or was dropped unread. A handle does so
//! through [`Released`], which never blocks and cannot fail, from any thread, in a
//! destructor too; the driver takes what it holds at its next drain and passes each to
//! `Client::release_outcome`. It holds at most one entry per outstanding batch handle.

use nervix_protocol::client::{BatchId, ProducerId};
use std::sync::{Mutex, PoisonError};

/// Batches whose outcomes the application read or gave up, not yet told to the engine.
#[derive(Debug, Default)]
pub struct Released {
    list: Mutex<Vec<(ProducerId, BatchId)>>,
}

impl Released {
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
