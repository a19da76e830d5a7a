//! Producers and emitter consumers through the async API.
//!
//! A [`Producer`] submits Arrow batches to a client ingestor; each submission hands back a
//! [`PendingBatch`] that resolves to the batch's one outcome (P-3, P-5). A [`Consumer`] reads
//! the deliveries of a TO CLIENT emitter, decoded and checked against its fields (EC-3), and
//! settles them (EC-4). The engine keeps both across sessions (P-8, EC-5); dropping either
//! closes it.
//!
//! A batch holds its share of the producer's credit until its outcome is read (P-4): until
//! its [`PendingBatch`] gave the outcome, or was dropped. Outcomes nobody has read are thus
//! bounded by the grant, and a producer whose outcomes are never read stops sending.
//!
//! Every wait is cancel-safe: dropping a [`PendingBatch`] stops the wait for that outcome
//! only (the batch goes on, and its credit comes back once its outcome is in); dropping [`Consumer::next_delivery`] leaves the read out, and
//! its delivery is handed to the next call; dropping [`Consumer::settle`] stops the wait
//! only (the settlement goes on).

use crate::driver::Request;
use crate::Error;
use nervix_driver_support::dataplane::{Attached, Call, Hand, Taken};
use nervix_driver_support::released::Released;
use nervix_protocol::client::{
    BatchId, BatchOutcome, ConsumerDescription, ConsumerId, Decision, Delivery, DeliveryRef,
    ProducerDescription, ProducerEvent, ProducerId, SettleResult,
};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot, Notify};

/// Deliveries held between the driver and the application. At most one read is out per
/// consumer, so this holds at most the one delivery nobody took yet.
pub(crate) const DELIVERY_QUEUE: usize = 4;

pub use nervix_driver_support::Submission;

/// The shared data plane's channels in this driver: tokio's one-shot channels, a closed
/// channel seen at once as a handle the application dropped.
pub(crate) struct Tokio {
    /// Wakes the driver when an application reads or drops a handle.
    pub pull: Arc<Notify>,
}

/// The application's side of a new producer or consumer: what the driver hands it (a
/// producer's last event, a consumer's deliveries; dropping or closing it tells the driver
/// the handle is gone), and the driver's wake-up.
pub(crate) struct Side<T> {
    pub from_driver: T,
    pub pull: Arc<Notify>,
}

/// Where a submission's batch name and outcome go.
pub(crate) type SubmitReply = oneshot::Sender<Result<Taken<Tokio>, Error>>;

/// The driver's side of a consumer's deliveries: the channel, and the deliveries it had no
/// room for, oldest first.
pub(crate) struct DeliverySink {
    /// Closed when the application dropped its handle: the consumer is then closed.
    tx: mpsc::Sender<Delivery>,
    waiting: VecDeque<Delivery>,
}

impl Hand for Tokio {
    type Error = Error;
    type Once<T> = oneshot::Sender<T>;
    type Awaited<T> = oneshot::Receiver<T>;
    type Waiter = SubmitReply;
    type Ended = oneshot::Sender<ProducerEvent>;
    type Deliveries = DeliverySink;
    type ProducerSide = Side<oneshot::Receiver<ProducerEvent>>;
    type ConsumerSide = Side<mpsc::Receiver<Delivery>>;

    fn producer(&self) -> (oneshot::Sender<ProducerEvent>, Self::ProducerSide) {
        let (tx, ended) = oneshot::channel();
        let pull = self.pull.clone();
        (
            tx,
            Side {
                from_driver: ended,
                pull,
            },
        )
    }

    fn consumer(&self) -> (DeliverySink, Self::ConsumerSide) {
        let (tx, deliveries) = mpsc::channel(DELIVERY_QUEUE);
        let pull = self.pull.clone();
        let waiting = VecDeque::new();
        (
            DeliverySink { tx, waiting },
            Side {
                from_driver: deliveries,
                pull,
            },
        )
    }

    fn once<T>() -> (oneshot::Sender<T>, oneshot::Receiver<T>) {
        oneshot::channel()
    }

    fn give_back<T>(tx: oneshot::Sender<T>, value: T) -> Option<T> {
        tx.send(value).err()
    }

    fn offer(
        waiter: SubmitReply,
        take: impl FnOnce() -> Option<Result<Taken<Self>, Error>>,
    ) -> Option<SubmitReply> {
        // A caller that stopped waiting is never taken (C-10). One that stops just after
        // the batch was taken leaves it going, its outcome unread.
        if waiter.is_closed() {
            return None;
        }
        match take() {
            Some(r) => {
                let _ = waiter.send(r);
                None
            }
            None => Some(waiter),
        }
    }

    fn end(ended: oneshot::Sender<ProducerEvent>, event: ProducerEvent) {
        let _ = ended.send(event);
    }

    fn producer_dropped(ended: &oneshot::Sender<ProducerEvent>) -> bool {
        ended.is_closed()
    }

    fn keep(deliveries: &mut DeliverySink, delivery: Delivery) {
        deliveries.waiting.push_back(delivery);
    }

    fn flush(d: &mut DeliverySink) -> bool {
        while let Some(delivery) = d.waiting.pop_front() {
            match d.tx.try_send(delivery) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(delivery)) => {
                    d.waiting.push_front(delivery);
                    break;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => break,
            }
        }
        d.waiting.is_empty()
    }

    fn consumer_dropped(deliveries: &DeliverySink) -> bool {
        deliveries.tx.is_closed()
    }

    fn open_refused(message: String) -> Error {
        Error::OpenRefused(message)
    }
}

/// A producer opened with [`crate::Client::producer`]; [`Producer::submit`] hands it batches
/// and each [`PendingBatch`] resolves to that batch's one outcome. When the handle is dropped
/// the producer is closed (P-8): a batch the server already has is still answered, one that
/// never left ends as [`BatchOutcome::NotSent`].
#[derive(Debug)]
pub struct Producer {
    pub(crate) attached: Attached<ProducerId, ProducerDescription>,
    /// Where released outcomes are counted, so credit comes back as they are read (P-4).
    pub(crate) released: Arc<Released>,
    pub(crate) requests: mpsc::Sender<Request>,
    pub(crate) pull: Arc<Notify>,
    /// The producer's last event; dropping it tells the driver the handle is gone.
    pub(crate) ended: Option<oneshot::Receiver<ProducerEvent>>,
}

impl Producer {
    /// Submits a batch (P-3). The engine checks and encodes it at once: a batch it refuses
    /// is an [`Error::Submit`] and nothing is queued. An accepted batch then waits for credit
    /// and admission (P-4, P-6), in the order the submissions were made; this future waits
    /// only while unsent batches already fill one grant of credit. Credit returns as
    /// outcomes are read, so a caller that never awaits its [`PendingBatch`]es stops here
    /// once two grants are spent. The future is cancel-safe: dropped while it waits, the
    /// batch was never taken (C-10). Await the returned [`PendingBatch`] for the batch's
    /// one outcome (P-5); admission changes, interruptions and restorations arrive as
    /// [`crate::DriverEvent::Producer`].
    ///
    /// In outbox mode (the client keeps a journal, feature `journal`) it never waits for
    /// credit: it returns once the batch is journaled, and a journal with no room refuses it
    /// (`Error::Journal`, naming whether the wire is publishing or reconnecting). A batch
    /// the journal returned after a restart (an `UnsentBatch`) is submitted again here, under
    /// its own record.
    pub async fn submit(&self, batch: impl Into<Submission>) -> Result<PendingBatch, Error> {
        let (reply, rx) = oneshot::channel();
        self.requests
            .send(Request::Dataplane(Call::Submit {
                producer: self.id(),
                batch: batch.into(),
                waiter: reply,
            }))
            .await
            .map_err(|_| Error::Stopped)?;
        let (batch, outcome) = rx.await.map_err(|_| Error::Stopped)??;
        Ok(PendingBatch {
            producer: self.id(),
            batch,
            outcome,
            released: self.released.clone(),
            pull: self.pull.clone(),
            read: false,
        })
    }

    /// Closes the producer (P-8) and waits for its last event: `Closed`, or `Ended` /
    /// `ReopenRequired` when the server ended it first. Outcomes of batches already out
    /// arrive before it.
    pub async fn close(mut self) -> Result<ProducerEvent, Error> {
        let ended = self.ended.take();
        self.requests
            .send(Request::Dataplane(Call::CloseProducer(self.id())))
            .await
            .map_err(|_| Error::Stopped)?;
        match ended {
            Some(rx) => rx.await.map_err(|_| Error::Stopped),
            None => Err(Error::Stopped),
        }
    }
}

nervix_driver_support::attached!(Producer, ProducerId, ProducerDescription);

impl Drop for Producer {
    fn drop(&mut self) {
        self.ended.take();
        self.pull.notify_one();
    }
}

/// A submitted batch: its name is known at once, and awaiting it gives its one outcome.
/// The batch holds its credit until then (P-4). Dropping it stops the wait only: the batch
/// goes on, its credit comes back once its outcome is in, and the outcome is kept for
/// `Client::unclaimed_batches` (P-7).
#[derive(Debug)]
pub struct PendingBatch {
    producer: ProducerId,
    batch: BatchId,
    outcome: oneshot::Receiver<BatchOutcome>,
    released: Arc<Released>,
    pull: Arc<Notify>,
    /// The outcome was given, and the driver told.
    read: bool,
}

impl PendingBatch {
    /// Tells the driver the outcome was read or given up: its credit comes back (P-4).
    fn release(&mut self) {
        if !std::mem::replace(&mut self.read, true) {
            self.released.push(self.producer, self.batch);
            self.pull.notify_one();
        }
    }
}

impl Drop for PendingBatch {
    fn drop(&mut self) {
        // Closed first: an outcome the driver sends from now on is refused, and the driver
        // gives its credit back itself and keeps the outcome for `unclaimed_batches` (P-7);
        // one sent before and not read is kept here, and its credit released.
        if !self.read {
            let outcome = &mut self.outcome;
            self.released.leave(self.producer, self.batch, || {
                outcome.close();
                outcome.try_recv().ok()
            });
        }
        self.release();
    }
}

impl PendingBatch {
    /// The engine's name of the batch.
    pub fn id(&self) -> BatchId {
        self.batch
    }
}

impl Future for PendingBatch {
    type Output = Result<BatchOutcome, Error>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let r = Pin::new(&mut self.outcome).poll(cx);
        if let Poll::Ready(Ok(_)) = r {
            self.release();
        }
        r.map(|r| r.map_err(|_| Error::Stopped))
    }
}

/// A consumer of a TO CLIENT emitter opened with [`crate::Client::consumer`].
///
/// Dropping it closes the consumer (EC-6); its unsettled references are revoked and their
/// deliveries come again after the emitter's acknowledgement timeout.
#[derive(Debug)]
pub struct Consumer {
    pub(crate) attached: Attached<ConsumerId, ConsumerDescription>,
    pub(crate) requests: mpsc::Sender<Request>,
    pub(crate) rx: mpsc::Receiver<Delivery>,
    pub(crate) pull: Arc<Notify>,
}

impl Consumer {
    /// Asks for the next delivery (EC-2) and waits for it: one output batch, decoded and
    /// checked against the consumer's fields (EC-3). `None` once the consumer is over
    /// (closed, not restorable) or the client stopped. Cancel-safe: the read stays out and
    /// its delivery goes to the next call. After an interruption, the first delivery of the
    /// restored consumer names a later [`DeliveryRef::attachment`](nervix_protocol::client::DeliveryRef)
    /// than those before it: the interruption is surfaced with it even when the observers
    /// lost their `Interrupted` event under load (EC-5).
    pub async fn next_delivery(&mut self) -> Option<Delivery> {
        if let Ok(d) = self.rx.try_recv() {
            self.pull.notify_one();
            return Some(d);
        }
        if self
            .requests
            .send(Request::Dataplane(Call::ReadDelivery(self.id())))
            .await
            .is_err()
        {
            return None;
        }
        let d = self.rx.recv().await;
        self.pull.notify_one();
        d
    }

    /// Settles one delivery attempt (EC-4) and waits for the server's answer: only
    /// [`SettleResult::Confirmed`] confirms it. Refused locally (nothing sent) as an
    /// [`Error::Settle`]. Dropping the wait leaves the settlement going.
    pub async fn settle(
        &self,
        reference: DeliveryRef,
        decision: Decision,
    ) -> Result<SettleResult, Error> {
        let (reply, rx) = oneshot::channel();
        self.requests
            .send(Request::Dataplane(Call::Settle {
                reference,
                decision,
                reply,
            }))
            .await
            .map_err(|_| Error::Stopped)?;
        let result = rx.await.map_err(|_| Error::Stopped)??;
        result.await.map_err(|_| Error::Stopped)
    }

    /// Closes the consumer (EC-6) and waits until it is over; deliveries that arrive
    /// meanwhile are dropped unsettled.
    pub async fn close(mut self) -> Result<(), Error> {
        self.requests
            .send(Request::Dataplane(Call::CloseConsumer(self.id())))
            .await
            .map_err(|_| Error::Stopped)?;
        while self.rx.recv().await.is_some() {}
        Ok(())
    }
}

nervix_driver_support::attached!(Consumer, ConsumerId, ConsumerDescription);

impl Drop for Consumer {
    fn drop(&mut self) {
        self.rx.close();
        self.pull.notify_one();
    }
}
