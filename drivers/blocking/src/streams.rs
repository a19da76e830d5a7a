//! Subscriptions and followed clocks as blocking iterators of typed events.
//!
//! The driver thread moves a subscription's events out of the engine only while the
//! application's queue has room, so the engine's retention budget (S-8) decides what a slow
//! reader loses. A reader that takes an event from a full queue tells the driver there is room.

use crate::driver::Inbox;
use crate::Error;
use nervix_driver_support::driver_core::{Given, StreamSink};
use nervix_protocol::client::{ClockEvent, SubscriptionEvent, SubscriptionId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Events of one subscription or clock held between the driver and the application.
pub(crate) const STREAM_QUEUE: usize = 32;

/// Events of one subscription held between the driver and the application: with the one
/// event the driver may hold back when the queue is full, at most two frames of up to the
/// frame limit (8 MiB) stand outside the engine's retention budget (S-8).
pub(crate) const SUBSCRIPTION_QUEUE: usize = 1;

/// What the reader and the driver share about one stream.
#[derive(Debug, Default)]
pub(crate) struct Flags {
    /// The driver found the queue full and waits to be told there is room.
    pub blocked: AtomicBool,
    /// The reader dropped the stream.
    pub dropped: AtomicBool,
}

/// The reader's side of one stream.
#[derive(Debug)]
pub(crate) struct Reader<T> {
    rx: mpsc::Receiver<T>,
    flags: Arc<Flags>,
    inbox: mpsc::SyncSender<Inbox>,
}

impl<T> Reader<T> {
    fn took(&self) {
        if self.flags.blocked.swap(false, Ordering::AcqRel) {
            let _ = self.inbox.try_send(Inbox::Pull);
        }
    }

    pub(crate) fn next(&mut self) -> Option<T> {
        let e = self.rx.recv().ok();
        self.took();
        e
    }

    pub(crate) fn next_timeout(&mut self, timeout: Duration) -> Result<Option<T>, Error> {
        let e = match self.rx.recv_timeout(timeout) {
            Ok(e) => Some(e),
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
        };
        self.took();
        Ok(e)
    }
}

impl<T> Drop for Reader<T> {
    fn drop(&mut self) {
        self.flags.dropped.store(true, Ordering::Release);
        let _ = self.inbox.try_send(Inbox::Pull);
    }
}

/// A subscription opened with [`crate::Client::subscribe`]: an iterator of its events in
/// order. `Opened` starts a generation (S-2); the `Rows` after it are
/// [`CheckedBatch`](nervix_protocol::rows::CheckedBatch) views checked against that
/// generation's schema; a `Gap` is an item of its own, and a lost session is
/// followed by a new `Opened` (S-7); `Ended` is the last item.
///
/// [`Iterator::next`] blocks until the next event, which may be long on a quiet relay; use
/// [`Subscription::next_timeout`] to bound the wait (T-8). Dropping the subscription deletes
/// it (S-6; while a transaction is held, as soon as it ends).
#[derive(Debug)]
pub struct Subscription {
    id: SubscriptionId,
    reader: Reader<SubscriptionEvent>,
}

impl Subscription {
    /// The engine's name of the subscription.
    pub fn id(&self) -> SubscriptionId {
        self.id
    }

    /// The next event within `timeout`: `Ok(None)` once the subscription ended,
    /// [`Error::TimedOut`] when nothing came in time.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<SubscriptionEvent>, Error> {
        self.reader.next_timeout(timeout)
    }
}

impl Iterator for Subscription {
    type Item = SubscriptionEvent;
    fn next(&mut self) -> Option<SubscriptionEvent> {
        self.reader.next()
    }
}

/// A domain's clock followed with [`crate::Client::follow_clock`]: an iterator of its
/// [`ClockEvent`]s, one unread event of each kind kept (K-3), `Ended` last. Dropping it
/// detaches the clock (K-1).
#[derive(Debug)]
pub struct ClockFollow {
    domain: String,
    reader: Reader<ClockEvent>,
}

impl ClockFollow {
    /// The domain whose clock this is.
    pub fn domain(&self) -> &str {
        &self.domain
    }

    /// The next event within `timeout`: `Ok(None)` once the clock is followed no more,
    /// [`Error::TimedOut`] when nothing came in time.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<ClockEvent>, Error> {
        self.reader.next_timeout(timeout)
    }
}

impl Iterator for ClockFollow {
    type Item = ClockEvent;
    fn next(&mut self) -> Option<ClockEvent> {
        self.reader.next()
    }
}

/// The driver's side of a stream: the queue, and the shared flags.
#[derive(Debug)]
pub(crate) struct Sink<T> {
    tx: mpsc::SyncSender<T>,
    pub flags: Arc<Flags>,
}

impl<T> Sink<T> {
    /// Whether the reader dropped the stream.
    pub fn dropped(&self) -> bool {
        self.flags.dropped.load(Ordering::Acquire)
    }
}

impl<T> StreamSink<T> for Sink<T> {
    fn dropped(&self) -> bool {
        Sink::dropped(self)
    }

    fn give(&mut self, event: T) -> Given<T> {
        match self.tx.try_send(event) {
            Ok(()) => Given::Taken,
            Err(mpsc::TrySendError::Full(e)) => {
                self.flags.blocked.store(true, Ordering::Release);
                // The reader may have made room in between.
                match self.tx.try_send(e) {
                    Ok(()) => Given::Taken,
                    Err(mpsc::TrySendError::Full(e) | mpsc::TrySendError::Disconnected(e)) => {
                        Given::Full(e)
                    }
                }
            }
            Err(mpsc::TrySendError::Disconnected(_)) => Given::Gone,
        }
    }
}

pub(crate) fn pair<T>(inbox: &mpsc::SyncSender<Inbox>, capacity: usize) -> (Sink<T>, Reader<T>) {
    let (tx, rx) = mpsc::sync_channel(capacity);
    let flags = Arc::new(Flags::default());
    (
        Sink {
            tx,
            flags: flags.clone(),
        },
        Reader {
            rx,
            flags,
            inbox: inbox.clone(),
        },
    )
}

pub(crate) fn subscription(
    id: SubscriptionId,
    inbox: &mpsc::SyncSender<Inbox>,
) -> (Sink<SubscriptionEvent>, Subscription) {
    let (sink, reader) = pair(inbox, SUBSCRIPTION_QUEUE);
    (sink, Subscription { id, reader })
}

pub(crate) fn clock(
    domain: String,
    inbox: &mpsc::SyncSender<Inbox>,
) -> (Sink<ClockEvent>, ClockFollow) {
    let (sink, reader) = pair(inbox, STREAM_QUEUE);
    (sink, ClockFollow { domain, reader })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s_8_a_subscription_holds_at_most_two_frames_outside_the_engine_budget_blocking() {
        // The queue, and the one event the driver holds back when it is full.
        const {
            assert!((SUBSCRIPTION_QUEUE + 1) * nervix_protocol::limits::FRAME_LIMIT <= 8 << 20);
            assert!(SUBSCRIPTION_QUEUE >= 1);
        }
    }
}
