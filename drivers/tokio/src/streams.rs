//! Subscriptions and followed clocks as streams of typed events.
//!
//! The driver task moves each subscription's events from the engine into a bounded channel
//! only while the channel has room, so the engine's own retention budget (S-8) stays the one
//! that decides what is kept: an application that reads slowly sees an `Overflow` gap, never
//! unbounded memory. Reading an event tells the driver there is room again.

use futures_util::Stream;
use nervix_protocol::client::{ClockEvent, SubscriptionEvent, SubscriptionId};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, Notify};

/// Events of one subscription or clock held between the driver and the application.
pub(crate) const STREAM_QUEUE: usize = 32;

/// Events of one subscription held between the driver and the application. A subscription's
/// events can be whole frames of up to the frame limit, so its queue is short: at most two
/// frames (8 MiB) stand outside the engine's retention budget (S-8), which decides what a slow
/// reader loses.
pub(crate) const SUBSCRIPTION_QUEUE: usize = 2;

/// A subscription opened with [`crate::Client::subscribe`]: a stream of its events in order.
///
/// * `Opened` starts a generation (S-2); the `Rows` after it are [`CheckedBatch`] views checked
///   against that generation's schema, read in place in their frames.
/// * `Gap` is an item of its own: rows the application will not see (delivery loss, skipped
///   rows, a lost session, a relay change, the client's own overflow). A lost session is
///   followed by a new `Opened` with the next generation (S-7).
/// * `Ended` is the last item; the stream ends after it.
///
/// Dropping the stream deletes the subscription (S-6): the driver sends its
/// `UnsubscribeRequest` (or, while a transaction is held, as soon as it ends, L-3) and
/// discards whatever still arrives for it. To keep a subscription, keep its stream.
///
/// [`CheckedBatch`]: nervix_protocol::rows::CheckedBatch
#[derive(Debug)]
pub struct Subscription {
    pub(crate) id: SubscriptionId,
    pub(crate) rx: mpsc::Receiver<SubscriptionEvent>,
    pub(crate) pull: Arc<Notify>,
}

impl Subscription {
    /// The engine's name of the subscription.
    pub fn id(&self) -> SubscriptionId {
        self.id
    }

    /// The next event, or `None` once the subscription ended (or the client stopped).
    /// Cancel-safe: an event is taken only when it is returned.
    pub async fn next_event(&mut self) -> Option<SubscriptionEvent> {
        let e = self.rx.recv().await;
        self.pull.notify_one();
        e
    }
}

impl Stream for Subscription {
    type Item = SubscriptionEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let p = self.rx.poll_recv(cx);
        if p.is_ready() {
            self.pull.notify_one();
        }
        p
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.rx.close();
        self.pull.notify_one();
    }
}

/// A domain's clock followed with [`crate::Client::follow_clock`]: a stream of its
/// [`ClockEvent`]s. The engine keeps one unread event of each kind per domain (K-3: a newer
/// tick replaces an unread one), and so does the driver, so a slow reader sees the newest
/// tick, never a backlog. `Ended` is the last item.
///
/// Dropping the stream detaches the clock (K-1).
#[derive(Debug)]
pub struct ClockFollow {
    pub(crate) domain: String,
    pub(crate) rx: mpsc::Receiver<ClockEvent>,
    pub(crate) pull: Arc<Notify>,
}

impl ClockFollow {
    /// The domain whose clock this is.
    pub fn domain(&self) -> &str {
        &self.domain
    }

    /// The next event, or `None` once the clock is followed no more. Cancel-safe.
    pub async fn next_event(&mut self) -> Option<ClockEvent> {
        let e = self.rx.recv().await;
        self.pull.notify_one();
        e
    }
}

impl Stream for ClockFollow {
    type Item = ClockEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let p = self.rx.poll_recv(cx);
        if p.is_ready() {
            self.pull.notify_one();
        }
        p
    }
}

impl Drop for ClockFollow {
    fn drop(&mut self) {
        self.rx.close();
        self.pull.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s_8_a_subscription_holds_at_most_two_frames_outside_the_engine_budget() {
        const {
            assert!(SUBSCRIPTION_QUEUE * nervix_protocol::limits::FRAME_LIMIT <= 8 << 20);
            assert!(SUBSCRIPTION_QUEUE >= 1);
        }
    }
}
