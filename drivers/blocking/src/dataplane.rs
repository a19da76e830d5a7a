//! Producers and emitter consumers through the blocking API.
//!
//! A [`Producer`] submits Arrow batches to a client ingestor; each submission hands back a
//! [`PendingBatch`] whose [`PendingBatch::wait`] gives the batch's one outcome (P-3, P-5). A
//! [`Consumer`] reads the deliveries of a TO CLIENT emitter, decoded and checked against its
//! fields (EC-3), and settles them (EC-4). The engine keeps both across sessions (P-8, EC-5);
//! dropping either closes it.
//!
//! Every wait has a bound of its own or a `_timeout` form (T-8). A submission that waits for
//! room and gives up was never taken; a delivery read that gives up stays out, and its
//! delivery goes to the next read (EC-2); a settlement whose wait gives up goes on.

use crate::driver::{Inbox, Request};
use crate::streams::{Flags, Reader, Sink};
use crate::Error;
use nervix_driver_support::dataplane::{Attached, Call, Hand};
use nervix_driver_support::driver_core::Outlet;
use nervix_driver_support::released::Released;
use nervix_protocol::client::{
    BatchId, BatchOutcome, ConsumerDescription, ConsumerId, Decision, Delivery, DeliveryRef,
    ProducerDescription, ProducerEvent, ProducerId, SettleResult,
};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub use nervix_driver_support::Submission;

/// A taken submission: the batch's name, and where its outcome comes.
pub(crate) type Taken = nervix_driver_support::dataplane::Taken<Blocking>;

/// The shared data plane's channels in this driver: bounded std channels, whose senders
/// cannot see a reader go, so a handle the application dropped says so in its [`Flags`].
pub(crate) struct Blocking {
    /// Where readers tell the driver they made room or dropped a handle.
    pub inbox: mpsc::SyncSender<Inbox>,
}

/// The application's side of a new producer: its last event, and the flags its handle sets
/// when dropped.
pub(crate) struct ProducerSide {
    pub ended: mpsc::Receiver<ProducerEvent>,
    pub flags: Arc<Flags>,
}

/// Where a producer's last event goes, and the flags its handle sets when dropped.
pub(crate) struct ProducerEnd {
    pub tx: mpsc::SyncSender<ProducerEvent>,
    pub flags: Arc<Flags>,
}

impl Hand for Blocking {
    type Error = Error;
    type Once<T> = mpsc::SyncSender<T>;
    type Awaited<T> = mpsc::Receiver<T>;
    type Waiter = Arc<Handoff>;
    type Ended = ProducerEnd;
    type Deliveries = Outlet<Sink<Delivery>, Delivery>;
    type ProducerSide = ProducerSide;
    type ConsumerSide = Reader<Delivery>;

    fn producer(&self) -> (ProducerEnd, ProducerSide) {
        let (tx, ended) = mpsc::sync_channel(1);
        let flags = Arc::new(Flags::default());
        let end = ProducerEnd {
            tx,
            flags: flags.clone(),
        };
        (end, ProducerSide { ended, flags })
    }

    fn consumer(&self) -> (Self::Deliveries, Reader<Delivery>) {
        let (sink, reader) = crate::streams::pair(&self.inbox, crate::streams::STREAM_QUEUE);
        (Outlet::new(sink), reader)
    }

    fn once<T>() -> (mpsc::SyncSender<T>, mpsc::Receiver<T>) {
        mpsc::sync_channel(1)
    }

    fn give_back<T>(tx: mpsc::SyncSender<T>, value: T) -> Option<T> {
        match tx.try_send(value) {
            Ok(()) => None,
            Err(mpsc::TrySendError::Full(v) | mpsc::TrySendError::Disconnected(v)) => Some(v),
        }
    }

    fn offer(
        waiter: Arc<Handoff>,
        take: impl FnOnce() -> Option<Result<Taken, Error>>,
    ) -> Option<Arc<Handoff>> {
        // Taken only under the hand-off's lock, and never once withdrawn (C-10).
        (!waiter.offer(take)).then_some(waiter)
    }

    fn end(ended: ProducerEnd, event: ProducerEvent) {
        let _ = ended.tx.try_send(event);
    }

    fn producer_dropped(ended: &ProducerEnd) -> bool {
        ended.flags.dropped.load(Ordering::Acquire)
    }

    fn keep(deliveries: &mut Self::Deliveries, delivery: Delivery) {
        deliveries.keep(delivery);
    }

    fn flush(deliveries: &mut Self::Deliveries) -> bool {
        deliveries.flush()
    }

    fn consumer_dropped(deliveries: &Self::Deliveries) -> bool {
        deliveries.sink().dropped()
    }

    fn open_refused(message: String) -> Error {
        Error::OpenRefused(message)
    }
}

/// Where a submission stands between the application and the driver. The driver hands a
/// batch to the engine only under this lock and only while it is `Waiting`; an application
/// that gives up marks it `Withdrawn` under the same lock, so a submission is either taken
/// and answered, or withdrawn and never taken (C-10).
#[derive(Debug)]
enum Slot {
    Waiting,
    Withdrawn,
    Done(Result<Taken, Error>),
}

/// One submission's hand-off.
#[derive(Debug)]
pub(crate) struct Handoff {
    slot: Mutex<Slot>,
    ready: Condvar,
}

impl Handoff {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            slot: Mutex::new(Slot::Waiting),
            ready: Condvar::new(),
        })
    }

    /// Runs `take` and keeps its answer, unless the application withdrew; `None` from `take`
    /// means no room yet (the submission keeps waiting). True once the submission is over
    /// (answered or withdrawn).
    pub(crate) fn offer(&self, take: impl FnOnce() -> Option<Result<Taken, Error>>) -> bool {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        match *slot {
            Slot::Waiting => match take() {
                Some(r) => {
                    *slot = Slot::Done(r);
                    self.ready.notify_all();
                    true
                }
                None => false,
            },
            _ => true,
        }
    }

    /// Waits until the submission is answered, at most `timeout`; on timeout it is withdrawn
    /// (never taken) and [`Error::TimedOut`] is given.
    fn wait(&self, timeout: Option<Duration>) -> Result<Taken, Error> {
        let end = timeout.map(|t| Instant::now() + t);
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match &*slot {
                Slot::Waiting => {}
                Slot::Withdrawn => return Err(Error::Stopped),
                Slot::Done(_) => {
                    // Taken out once; the slot stays closed to the driver.
                    if let Slot::Done(r) = std::mem::replace(&mut *slot, Slot::Withdrawn) {
                        return r;
                    }
                }
            }
            slot = match end {
                None => self.ready.wait(slot).unwrap_or_else(|e| e.into_inner()),
                Some(end) => {
                    let Some(left) = end.checked_duration_since(Instant::now()) else {
                        *slot = Slot::Withdrawn;
                        return Err(Error::TimedOut);
                    };
                    self.ready
                        .wait_timeout(slot, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }
}

/// A producer opened with [`crate::Client::producer`]. Threads may share it (in an `Arc`)
/// and submit at once; their submissions are taken in the order they reach the driver.
///
/// Dropping it closes the producer (P-8): batches already out still get their outcomes from
/// the server, batches not yet sent end as [`BatchOutcome::NotSent`].
#[derive(Debug)]
pub struct Producer {
    pub(crate) attached: Attached<ProducerId, ProducerDescription>,
    pub(crate) inbox: mpsc::SyncSender<Inbox>,
    /// The producer's last event (behind a lock, so threads can share the producer).
    pub(crate) ended: Mutex<mpsc::Receiver<ProducerEvent>>,
    /// Tells the driver the handle is gone.
    pub(crate) flags: Arc<Flags>,
    /// Where its batch handles say their outcomes were read (P-4).
    pub(crate) released: Arc<Released>,
}

impl Producer {
    /// Hands a batch to the engine (P-3): it is checked and encoded, then waits for credit
    /// and admission (P-4, P-6). When the batches not yet sent already fill one grant of
    /// credit, this call waits until an outcome makes room, submissions being taken in the
    /// order they were made. Credit comes back only as outcomes are read: a caller that
    /// submits without waiting on its [`PendingBatch`]es waits here once two grants are
    /// taken (use [`Producer::submit_timeout`] to bound it). A batch refused locally is an
    /// [`Error::Submit`] and nothing was queued; otherwise wait on the [`PendingBatch`] for
    /// its one outcome (P-5).
    ///
    /// In outbox mode (the client keeps a journal, feature `journal`) it never waits for
    /// credit: it returns once the batch is journaled, and a journal with no room refuses it
    /// (`Error::Journal`, naming whether the wire is publishing or reconnecting). A batch
    /// the journal returned after a restart (an `UnsentBatch`) is submitted again here, under
    /// its own record.
    pub fn submit(&self, batch: impl Into<Submission>) -> Result<PendingBatch, Error> {
        self.submit_within(batch.into(), None)
    }

    /// [`Producer::submit`], waiting for room at most `timeout`: on [`Error::TimedOut`] the
    /// batch was never taken.
    pub fn submit_timeout(
        &self,
        batch: impl Into<Submission>,
        timeout: Duration,
    ) -> Result<PendingBatch, Error> {
        self.submit_within(batch.into(), Some(timeout))
    }

    fn submit_within(
        &self,
        batch: Submission,
        timeout: Option<Duration>,
    ) -> Result<PendingBatch, Error> {
        let handoff = Handoff::new();
        self.inbox
            .send(Inbox::App(Request::Dataplane(Call::Submit {
                producer: self.id(),
                batch,
                waiter: handoff.clone(),
            })))
            .map_err(|_| Error::Stopped)?;
        let (batch, outcome) = handoff.wait(timeout)?;
        Ok(PendingBatch {
            producer: self.id(),
            batch,
            outcome,
            released: self.released.clone(),
            inbox: self.inbox.clone(),
            read: false,
        })
    }

    /// Closes the producer (P-8) and waits for its last event, at most `timeout`: `Closed`,
    /// or `Ended` / `ReopenRequired` when the server ended it first. Outcomes of batches
    /// already out arrive before it.
    pub fn close(self, timeout: Duration) -> Result<ProducerEvent, Error> {
        self.inbox
            .send(Inbox::App(Request::Dataplane(Call::CloseProducer(
                self.id(),
            ))))
            .map_err(|_| Error::Stopped)?;
        let ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        match ended.recv_timeout(timeout) {
            Ok(e) => Ok(e),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Stopped),
        }
    }
}

nervix_driver_support::attached!(Producer, ProducerId, ProducerDescription);

impl Drop for Producer {
    fn drop(&mut self) {
        self.flags.dropped.store(true, Ordering::Release);
        let _ = self.inbox.try_send(Inbox::Pull);
    }
}

/// A submitted batch: its name is known at once, and [`PendingBatch::wait`] gives its one
/// outcome. The batch holds its share of the producer's credit until then (P-4), so
/// outcomes nobody read are bounded by the grant. Dropping it stops the wait only: the batch
/// goes on, its credit comes back once its outcome is in, and the outcome is kept for
/// `Client::unclaimed_batches` (P-7).
#[derive(Debug)]
pub struct PendingBatch {
    producer: ProducerId,
    batch: BatchId,
    outcome: mpsc::Receiver<BatchOutcome>,
    released: Arc<Released>,
    inbox: mpsc::SyncSender<Inbox>,
    /// The outcome was given, and the driver told.
    read: bool,
}

impl PendingBatch {
    /// Tells the driver the outcome was read or given up: its credit comes back (P-4).
    fn release(&mut self) {
        if !std::mem::replace(&mut self.read, true) {
            self.released.push(self.producer, self.batch);
            // A full inbox wakes the driver anyway, and it looks at every drain.
            let _ = self.inbox.try_send(Inbox::Pull);
        }
    }
}

impl Drop for PendingBatch {
    fn drop(&mut self) {
        // The receiver goes first, under the hand-over's lock: an outcome the driver sends
        // from now on is refused, and the driver gives its credit back itself and keeps the
        // outcome for `unclaimed_batches` (P-7); one sent before and not read is kept here,
        // and its credit released.
        let outcome = std::mem::replace(&mut self.outcome, mpsc::sync_channel(0).1);
        if self.read {
            drop(outcome);
        } else {
            self.released.leave(self.producer, self.batch, move || {
                let sent = outcome.try_recv().ok();
                drop(outcome);
                sent
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

    /// Waits at most `timeout` for the batch's outcome. After [`Error::TimedOut`] it can be
    /// waited for again.
    pub fn wait(&mut self, timeout: Duration) -> Result<BatchOutcome, Error> {
        match self.outcome.recv_timeout(timeout) {
            Ok(o) => {
                self.release();
                Ok(o)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Stopped),
        }
    }
}

/// A consumer of a TO CLIENT emitter opened with [`crate::Client::consumer`].
///
/// Dropping it closes the consumer (EC-6); its unsettled references are revoked and their
/// deliveries come again after the emitter's acknowledgement timeout.
#[derive(Debug)]
pub struct Consumer {
    pub(crate) attached: Attached<ConsumerId, ConsumerDescription>,
    pub(crate) inbox: mpsc::SyncSender<Inbox>,
    pub(crate) reader: Reader<Delivery>,
    /// Whether a read is out with no delivery handed over for it yet.
    pub(crate) asked: bool,
    /// The longest a settlement's answer is waited for.
    pub(crate) settle_bound: Duration,
}

nervix_driver_support::attached!(Consumer, ConsumerId, ConsumerDescription);

impl Consumer {
    /// Asks for the next delivery (EC-2) and waits for it at most `timeout`: one output
    /// batch, decoded and checked against the consumer's fields (EC-3). `Ok(None)` once the
    /// consumer is over (closed, not restorable) or the client stopped. After
    /// [`Error::TimedOut`] the read stays out and its delivery goes to the next call. After
    /// an interruption, the first delivery of the restored consumer names a later
    /// [`DeliveryRef::attachment`](nervix_protocol::client::DeliveryRef) than those before it:
    /// the interruption is surfaced with it even when the observers lost their `Interrupted`
    /// event under load (EC-5).
    pub fn next_delivery(&mut self, timeout: Duration) -> Result<Option<Delivery>, Error> {
        if !self.asked {
            if self
                .inbox
                .send(Inbox::App(Request::Dataplane(Call::ReadDelivery(
                    self.id(),
                ))))
                .is_err()
            {
                return Ok(None);
            }
            self.asked = true;
        }
        let d = self.reader.next_timeout(timeout)?;
        self.asked = false;
        Ok(d)
    }

    /// Settles one delivery attempt (EC-4) and waits for the server's answer: only
    /// [`SettleResult::Confirmed`] confirms it. Refused locally (nothing sent) as an
    /// [`Error::Settle`]. When the wait gives up the settlement goes on.
    pub fn settle(
        &self,
        reference: DeliveryRef,
        decision: Decision,
    ) -> Result<SettleResult, Error> {
        let (reply, rx) = mpsc::sync_channel(1);
        self.inbox
            .send(Inbox::App(Request::Dataplane(Call::Settle {
                reference,
                decision,
                reply,
            })))
            .map_err(|_| Error::Stopped)?;
        let answer = rx.recv().map_err(|_| Error::Stopped)??;
        match answer.recv_timeout(self.settle_bound) {
            Ok(r) => Ok(r),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Stopped),
        }
    }

    /// Closes the consumer (EC-6) and waits at most `timeout` until it is over; deliveries
    /// that arrive meanwhile are dropped unsettled.
    pub fn close(mut self, timeout: Duration) -> Result<(), Error> {
        self.inbox
            .send(Inbox::App(Request::Dataplane(Call::CloseConsumer(
                self.id(),
            ))))
            .map_err(|_| Error::Stopped)?;
        let end = Instant::now() + timeout;
        loop {
            let left = end
                .checked_duration_since(Instant::now())
                .ok_or(Error::TimedOut)?;
            if self.reader.next_timeout(left)?.is_none() {
                return Ok(());
            }
        }
    }
}
