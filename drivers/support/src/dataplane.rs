//! The data plane every driver shares: producers and emitter consumers between the engine and
//! the application's handles.
//!
//! A driver keeps one [`Dataplane`] beside its engine. It hands the application's producer and
//! consumer calls to it as [`Call`]s ([`Dataplane::call`]), tells it when the engine's timer
//! fired ([`Dataplane::timer_fired`]), and calls [`Dataplane::route`] at every drain: producer
//! and consumer events go to their handles, outcomes the application read or gave up give their
//! credit back (P-4), submissions waiting for room are offered again in the order they were
//! made, and what the application dropped is closed (P-8, EC-6). The handles themselves read
//! their name and attachment through [`Attached`].
//!
//! What differs between drivers is behind [`Hand`]: how one answer is handed back and read,
//! how a submission waiting for room is answered or seen to be withdrawn (C-10), how a
//! producer's last event is given and its handle's drop seen, and how deliveries are queued
//! for a consumer's reader. Events for observers are given to the closures `route` takes.

use crate::released::Released;
use crate::Submission;
use arrow_array::RecordBatch;
use nervix_protocol::arrow::BatchBuilder;
use nervix_protocol::client::{
    BatchId, BatchOutcome, Client as Engine, ClientError, ConsumerDescription, ConsumerEvent,
    ConsumerId, ConsumerSpec, Decision, Delivery, DeliveryRef, ProducerDescription, ProducerEvent,
    ProducerId, ProducerSpec, SettleError, SettleHandle, SettleResult, SubmitError,
};
use nervix_protocol::time::Timestamp;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

#[cfg(feature = "journal")]
mod outbox;
#[cfg(feature = "journal")]
pub(crate) use outbox::Note;

/// What differs between drivers in the data plane: their channels, and how they see that the
/// application dropped a handle.
pub trait Hand {
    /// The driver's error, as the application sees it: it carries what the engine refused
    /// locally (nothing was sent or queued).
    type Error: From<ClientError> + From<SubmitError> + From<SettleError>;
    /// The sending side of one answer (an open's, a batch outcome, a settlement's result).
    type Once<T>;
    /// Where that answer is read.
    type Awaited<T>;
    /// Where a submission's answer goes while the driver holds it, waiting for room.
    type Waiter;
    /// Where a producer's last event goes; it also tells whether the application dropped
    /// the producer.
    type Ended;
    /// Where a consumer's deliveries go, in order; it also tells whether the application
    /// dropped the consumer.
    type Deliveries;
    /// What the application's handle of a new producer holds besides its open's answer:
    /// where its last event comes, and how its drop is told.
    type ProducerSide;
    /// What the application's handle of a new consumer holds besides its open's answer:
    /// where its deliveries come, and how its drop is told.
    type ConsumerSide;

    /// A new producer's last-event channel: the driver's side and the application's.
    fn producer(&self) -> (Self::Ended, Self::ProducerSide);
    /// A new consumer's deliveries: the driver's side and the application's.
    fn consumer(&self) -> (Self::Deliveries, Self::ConsumerSide);

    /// A new one-answer channel.
    fn once<T>() -> (Self::Once<T>, Self::Awaited<T>);
    /// Hands `value` over; false when nobody reads it any more.
    fn give<T>(tx: Self::Once<T>, value: T) -> bool {
        Self::give_back(tx, value).is_none()
    }
    /// Hands `value` over; it comes back when nobody reads it any more.
    fn give_back<T>(tx: Self::Once<T>, value: T) -> Option<T>;
    /// Runs `take`, unless the submission's caller left (then it is never taken, C-10), and
    /// hands the answer over. `take` gives `None` when there is no room yet: the waiter comes
    /// back, to be offered again later.
    fn offer(
        waiter: Self::Waiter,
        take: impl FnOnce() -> Option<Result<Taken<Self>, Self::Error>>,
    ) -> Option<Self::Waiter>;
    /// Hands the producer's last event over.
    fn end(ended: Self::Ended, event: ProducerEvent);
    /// Whether the application dropped the producer.
    fn producer_dropped(ended: &Self::Ended) -> bool;
    /// Keeps a delivery for the reader, after those kept before.
    fn keep(deliveries: &mut Self::Deliveries, delivery: Delivery);
    /// Hands kept deliveries to the reader while it has room; true when none is left.
    fn flush(deliveries: &mut Self::Deliveries) -> bool;
    /// Whether the application dropped the consumer.
    fn consumer_dropped(deliveries: &Self::Deliveries) -> bool;
    /// The error of an open the server refused, or of a producer or consumer that ended
    /// before its open was answered; the server's words.
    fn open_refused(message: String) -> Self::Error;
}

/// A producer the engine took, for the application's handle.
pub struct NewProducer<H: Hand> {
    /// The engine's name of the producer.
    pub id: ProducerId,
    /// Where its open's answer comes.
    pub opened: Opened<H, ProducerDescription>,
    /// Where its batch handles say their outcomes were read (P-4).
    pub released: Arc<Released>,
    /// Where its last event comes, and how its drop is told.
    pub side: H::ProducerSide,
}

/// A consumer the engine took, for the application's handle.
pub struct NewConsumer<H: Hand> {
    /// The engine's name of the consumer.
    pub id: ConsumerId,
    /// Where its open's answer comes.
    pub opened: Opened<H, ConsumerDescription>,
    /// Where its deliveries come, and how its drop is told.
    pub side: H::ConsumerSide,
}

/// A data-plane call of the application, as a driver's request carries it to
/// [`Dataplane::call`].
#[non_exhaustive]
pub enum Call<H: Hand> {
    /// Opens a producer of a client ingestor (P-1); the new producer, or why not, goes to
    /// `reply`.
    OpenProducer {
        /// What to open.
        spec: ProducerSpec,
        /// Where the answer goes.
        reply: H::Once<Result<NewProducer<H>, H::Error>>,
    },
    /// Opens a consumer of a TO CLIENT emitter (EC-1); the new consumer, or why not, goes to
    /// `reply`.
    OpenConsumer {
        /// What to open.
        spec: ConsumerSpec,
        /// Where the answer goes.
        reply: H::Once<Result<NewConsumer<H>, H::Error>>,
    },
    /// Hands a batch to a producer (P-3); the batch's name and where its outcome comes go to
    /// `waiter`, once there is room (P-4).
    Submit {
        /// The producer.
        producer: ProducerId,
        /// The batch.
        batch: Submission,
        /// Where the answer goes.
        waiter: H::Waiter,
    },
    /// Closes a producer (P-8).
    CloseProducer(ProducerId),
    /// Asks for a consumer's next delivery (EC-2).
    ReadDelivery(ConsumerId),
    /// Settles a delivery attempt (EC-4): where the server's answer comes goes to `reply`.
    Settle {
        /// The attempt.
        reference: DeliveryRef,
        /// Ack, Retry or Reject.
        decision: Decision,
        /// Where the answer goes.
        reply: H::Once<Result<H::Awaited<SettleResult>, H::Error>>,
    },
    /// Closes a consumer (EC-6).
    CloseConsumer(ConsumerId),
}

/// What a producer's or consumer's handle knows of it in every driver: the engine's name of
/// it (`I`) and the attachment the server granted (`D`). A driver's `Producer` and
/// `Consumer` dereference to it.
#[derive(Debug, Clone)]
pub struct Attached<I, D> {
    id: I,
    description: Arc<D>,
}

impl<I: Copy, D> Attached<I, D> {
    /// The name and the attachment.
    pub fn new(id: I, description: Arc<D>) -> Self {
        Self { id, description }
    }

    /// The engine's name of the producer or consumer.
    pub fn id(&self) -> I {
        self.id
    }

    /// The attachment the server granted: fields, credit or window, limits (P-1, EC-1).
    pub fn description(&self) -> &Arc<D> {
        &self.description
    }
}

impl Attached<ProducerId, ProducerDescription> {
    /// A typed builder for batches of the producer's fields.
    pub fn batch_builder(&self) -> BatchBuilder {
        BatchBuilder::new(self.description.fields.clone())
    }
}

/// Makes a driver's producer or consumer handle dereference to the [`Attached`] it holds in
/// its field `attached`, so its name, attachment (and a producer's batch builder) are read
/// the same way in every driver: `attached!(Producer, ProducerId, ProducerDescription)`.
#[macro_export]
macro_rules! attached {
    ($handle:ty, $id:ty, $description:ty) => {
        impl ::std::ops::Deref for $handle {
            type Target = $crate::dataplane::Attached<$id, $description>;
            /// Its name and its attachment.
            fn deref(&self) -> &Self::Target {
                &self.attached
            }
        }
    };
}

/// A taken submission: the batch's name, and where its one outcome comes.
pub type Taken<H> = (BatchId, <H as Hand>::Awaited<BatchOutcome>);

/// Where an open's answer goes.
type Opening<H, T> = <H as Hand>::Once<Result<Arc<T>, <H as Hand>::Error>>;

/// Where an open's answer comes.
pub type Opened<H, T> = <H as Hand>::Awaited<Result<Arc<T>, <H as Hand>::Error>>;

struct ProducerSink<H: Hand> {
    /// The producer's domain and ingestor, which its journaled batches name.
    #[cfg_attr(not(feature = "journal"), allow(dead_code))]
    names: (String, String),
    opened: Option<Opening<H, ProducerDescription>>,
    ended: H::Ended,
    /// By the engine's name: where each outcome goes, and the name the application knows
    /// the batch by (the engine's own, or the outbox's for a batch that waited there).
    outcomes: BTreeMap<BatchId, (H::Once<BatchOutcome>, BatchId)>,
    /// Submissions waiting for room among the batches not yet sent (the engine said
    /// `Full`), in the order they were made. Each is handed to the engine once an outcome
    /// makes room; one whose caller left is dropped, never taken.
    blocked: VecDeque<(RecordBatch, H::Waiter)>,
    /// Outbox mode: batches journaled and answered, waiting for the engine to take them, in
    /// the order they were submitted.
    #[cfg(feature = "journal")]
    outboxed: VecDeque<outbox::Outboxed<H>>,
    closing: bool,
}

struct ConsumerSink<H: Hand> {
    opened: Option<Opening<H, ConsumerDescription>>,
    deliveries: H::Deliveries,
    closing: bool,
    /// Nothing more comes: the deliveries go once those kept are handed on.
    over: bool,
}

/// Where producer and consumer events go, for one engine.
pub struct Dataplane<H: Hand> {
    hand: H,
    producers: BTreeMap<ProducerId, ProducerSink<H>>,
    consumers: BTreeMap<ConsumerId, ConsumerSink<H>>,
    settles: BTreeMap<SettleHandle, H::Once<SettleResult>>,
    /// Outcomes the application read or gave up: their credit goes back to the engine (P-4).
    released: Arc<Released>,
    /// The engine may have sent waiting batches: submissions waiting for room are offered
    /// again.
    retry: bool,
    /// Outbox mode (feature `journal`): its names, and what the journal is to learn.
    #[cfg(feature = "journal")]
    outbox: outbox::Outbox,
}

impl<H: Hand> Dataplane<H> {
    /// The data plane of a driver whose channels `hand` makes.
    pub fn new(hand: H) -> Self {
        Self {
            hand,
            producers: BTreeMap::new(),
            consumers: BTreeMap::new(),
            settles: BTreeMap::new(),
            released: Arc::default(),
            retry: false,
            #[cfg(feature = "journal")]
            outbox: outbox::Outbox::default(),
        }
    }

    /// Where batch handles say their outcomes were read or given up (P-4).
    pub fn released(&self) -> &Arc<Released> {
        &self.released
    }

    /// The engine's timer fired: batches it sent may make room for waiting submissions.
    pub fn timer_fired(&mut self) {
        self.retry = true;
    }

    /// Opens a producer: the engine takes it, and the data plane follows it.
    pub fn open_producer(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        spec: ProducerSpec,
    ) -> Result<NewProducer<H>, H::Error> {
        let names = (spec.domain.clone(), spec.ingestor.clone());
        let id = engine.open_producer(now, spec)?;
        let (tx, opened) = H::once();
        let (ended, side) = self.hand.producer();
        self.producers.insert(
            id,
            ProducerSink {
                names,
                opened: Some(tx),
                ended,
                outcomes: BTreeMap::new(),
                blocked: VecDeque::new(),
                #[cfg(feature = "journal")]
                outboxed: VecDeque::new(),
                closing: false,
            },
        );
        Ok(NewProducer {
            id,
            opened,
            released: self.released.clone(),
            side,
        })
    }

    /// Opens a consumer: the engine takes it, and the data plane follows it.
    pub fn open_consumer(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        spec: ConsumerSpec,
    ) -> Result<NewConsumer<H>, H::Error> {
        let id = engine.open_consumer(now, spec)?;
        let (tx, opened) = H::once();
        let (deliveries, side) = self.hand.consumer();
        self.consumers.insert(
            id,
            ConsumerSink {
                opened: Some(tx),
                deliveries,
                closing: false,
                over: false,
            },
        );
        Ok(NewConsumer { id, opened, side })
    }

    /// Performs one data-plane call of the application. An open is refused with `stopped`
    /// when it is given: the driver sends nothing any more.
    pub fn call(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        call: Call<H>,
        stopped: Option<H::Error>,
    ) {
        match call {
            Call::OpenProducer { spec, reply } => {
                let r = match stopped {
                    Some(e) => Err(e),
                    None => self.open_producer(engine, now, spec),
                };
                H::give(reply, r);
            }
            Call::OpenConsumer { spec, reply } => {
                let r = match stopped {
                    Some(e) => Err(e),
                    None => self.open_consumer(engine, now, spec),
                };
                H::give(reply, r);
            }
            Call::Submit {
                producer,
                batch,
                waiter,
            } => self.submit(engine, now, producer, batch, waiter),
            Call::CloseProducer(id) => self.close_producer(engine, now, id),
            Call::ReadDelivery(id) => {
                // A consumer that is over refuses; its deliveries end and the reader sees it.
                let _ = engine.read_delivery(now, id);
            }
            Call::Settle {
                reference,
                decision,
                reply,
            } => {
                let r = self
                    .settle(engine, now, reference, decision)
                    .map_err(H::Error::from);
                H::give(reply, r);
            }
            Call::CloseConsumer(id) => self.close_consumer(engine, now, id),
        }
    }

    /// Hands a batch to the engine and answers `waiter`. When the batches not yet sent leave
    /// no room for it, or submissions made before it wait already, it waits in turn (P-4
    /// keeps submission order).
    pub fn submit(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        producer: ProducerId,
        batch: Submission,
        waiter: H::Waiter,
    ) {
        // A builder is finished here, so a batch that must wait for room is kept.
        let batch = match batch.into_batch() {
            Ok(b) => b,
            Err(e) => {
                H::offer(waiter, || Some(Err(SubmitError::from(e).into())));
                return;
            }
        };
        if let Some(s) = self.producers.get_mut(&producer) {
            if !s.blocked.is_empty() {
                s.blocked.push_back((batch, waiter));
                return;
            }
        }
        if let Some(back) = offer::<H>(engine, &mut self.producers, now, producer, &batch, waiter) {
            if let Some(s) = self.producers.get_mut(&producer) {
                s.blocked.push_back((batch, back));
            }
        }
    }

    /// Closes a producer at the application's word (P-8).
    pub fn close_producer(&mut self, engine: &mut Engine, now: Timestamp, id: ProducerId) {
        if let Some(s) = self.producers.get_mut(&id) {
            s.closing = true;
        }
        let _ = engine.close_producer(now, id);
    }

    /// Settles a delivery attempt (EC-4); the server's answer comes where the result says.
    pub fn settle(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        reference: DeliveryRef,
        decision: Decision,
    ) -> Result<H::Awaited<SettleResult>, SettleError> {
        let h = engine.settle_delivery(now, reference, decision)?;
        let (tx, rx) = H::once();
        self.settles.insert(h, tx);
        Ok(rx)
    }

    /// Closes a consumer at the application's word (EC-6).
    pub fn close_consumer(&mut self, engine: &mut Engine, now: Timestamp, id: ConsumerId) {
        if let Some(s) = self.consumers.get_mut(&id) {
            s.closing = true;
        }
        let _ = engine.close_consumer(now, id);
    }

    /// Hands producer and consumer events to their handles, gives back the credit of
    /// outcomes read or given up, offers waiting submissions again, and closes what the
    /// application dropped. Producer events for observers (admission, interruption,
    /// restoration, end: P-6, P-8) go to `producer_told`, consumer ones (interruption,
    /// restoration, end: EC-5) to `consumer_told`. True when it asked the engine for something
    /// (which may have actions).
    pub fn route(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        mut producer_told: impl FnMut(ProducerId, ProducerEvent),
        mut consumer_told: impl FnMut(ConsumerId, ConsumerEvent),
    ) -> bool {
        let (mut asked, room) = self.release(engine, now);
        if self.route_producers(engine, room, &mut producer_told) {
            asked |= self.retry_blocked(engine, now);
            #[cfg(feature = "journal")]
            {
                asked |= self.retry_outboxed(engine, now);
            }
        }
        for (id, sink) in &mut self.producers {
            if !sink.closing && H::producer_dropped(&sink.ended) {
                // Dropped by the application: closed (P-8).
                sink.closing = true;
                let _ = engine.close_producer(now, *id);
                asked = true;
            }
        }
        self.route_consumers(engine, &mut consumer_told);
        self.consumers.retain(|id, sink| {
            if H::consumer_dropped(&sink.deliveries) {
                if !sink.closing && !sink.over {
                    // Dropped by the application: closed (EC-6).
                    sink.closing = true;
                    let _ = engine.close_consumer(now, *id);
                    asked = true;
                }
                return !sink.over;
            }
            let flushed = H::flush(&mut sink.deliveries);
            // Over and everything handed on: dropping the deliveries ends the reader's queue.
            !(sink.over && flushed)
        });
        asked
    }

    /// Gives the engine back the credit of outcomes read or given up (P-4). Gives whether it
    /// asked the engine for something, and whether room may have come.
    fn release(&mut self, engine: &mut Engine, now: Timestamp) -> (bool, bool) {
        let room = std::mem::take(&mut self.retry);
        let mut freed = false;
        for (id, batch) in self.released.take() {
            // Outbox mode: a batch answered before the engine took it is named by the outbox.
            #[cfg(feature = "journal")]
            let Some(batch) = self.outbox.released(id, batch) else {
                continue;
            };
            freed |= engine.release_outcome(id, batch);
        }
        if freed {
            // Batches waiting for that credit go now, making room for waiting submissions.
            engine.handle_timeout(now);
        }
        (freed, room || freed)
    }

    /// Hands producer events to their handles; gives whether room may have come (`room`
    /// says whether it had come before).
    fn route_producers(
        &mut self,
        engine: &mut Engine,
        mut room: bool,
        tell: &mut impl FnMut(ProducerId, ProducerEvent),
    ) -> bool {
        while let Some((id, e)) = engine.poll_producer_events_held() {
            // Outbox mode: the batch's record ends at its outcome.
            #[cfg(feature = "journal")]
            if let ProducerEvent::Outcome { batch, .. } = &e {
                self.outbox.outcome(id, *batch);
            }
            let Some(sink) = self.producers.get_mut(&id) else {
                // Nobody can read it: its credit comes back at once, and the outcome is kept
                // for the application to take (P-7).
                if let ProducerEvent::Outcome { batch, outcome } = e {
                    engine.release_outcome(id, batch);
                    #[cfg(feature = "journal")]
                    let batch = self.outbox.name_of(id, batch);
                    self.released.keep(id, batch, outcome);
                }
                continue;
            };
            match e {
                ProducerEvent::Opened(d) => {
                    if let Some(tx) = sink.opened.take() {
                        H::give(tx, Ok(d));
                    }
                }
                ProducerEvent::Outcome { batch, outcome } => {
                    // Held until its handle reads it or is dropped (P-4); one nobody waits
                    // for any more gives its credit back at once.
                    // One whose handle was dropped is kept for the application (P-7).
                    let (tx, name) = match sink.outcomes.remove(&batch) {
                        Some((tx, name)) => (Some(tx), name),
                        None => (None, batch),
                    };
                    let handed = self.released.deliver(id, name, outcome, |o| match tx {
                        Some(tx) => H::give_back(tx, o),
                        None => Some(o),
                    });
                    if !handed {
                        engine.release_outcome(id, batch);
                        // Outbox mode: nobody holds the batch's name any more.
                        #[cfg(feature = "journal")]
                        self.outbox.forget(id, batch);
                    }
                    room = true;
                }
                ProducerEvent::Refused { .. }
                | ProducerEvent::ReopenRequired(_)
                | ProducerEvent::Closed
                | ProducerEvent::Ended { .. } => {
                    if let Some(sink) = self.producers.remove(&id) {
                        if let Some(tx) = sink.opened {
                            H::give(tx, Err(H::open_refused(refusal(&e))));
                        }
                        // Waiting submissions were never taken: they end refused.
                        let state = engine.producer(id).map(|p| p.state);
                        for (_, waiter) in sink.blocked {
                            H::offer(waiter, || {
                                let e = match state {
                                    Some(st) => SubmitError::Finished(st),
                                    None => SubmitError::UnknownProducer,
                                };
                                Some(Err(e.into()))
                            });
                        }
                        // Journaled batches the engine never took were never sent.
                        #[cfg(feature = "journal")]
                        for o in sink.outboxed {
                            self.outbox.never_sent(&self.released, id, o);
                        }
                        tell(id, e.clone());
                        H::end(sink.ended, e);
                    }
                }
                // Admission, interruption and restoration: for observers (P-6, P-8).
                e => {
                    room |= matches!(e, ProducerEvent::Restored(_));
                    tell(id, e);
                }
            }
        }
        room
    }

    /// Hands waiting submissions to the engine in order, while there is room; true when any
    /// went in. One whose caller left was never taken and is dropped (C-10).
    fn retry_blocked(&mut self, engine: &mut Engine, now: Timestamp) -> bool {
        let mut asked = false;
        let ids: Vec<ProducerId> = self
            .producers
            .iter()
            .filter(|(_, s)| !s.blocked.is_empty())
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            while let Some(sink) = self.producers.get_mut(&id) {
                let Some((batch, waiter)) = sink.blocked.pop_front() else {
                    break;
                };
                match offer::<H>(engine, &mut self.producers, now, id, &batch, waiter) {
                    Some(back) => {
                        if let Some(sink) = self.producers.get_mut(&id) {
                            sink.blocked.push_front((batch, back));
                        }
                        break;
                    }
                    None => asked = true,
                }
            }
        }
        asked
    }

    /// Hands consumer events and settlement results to their handles.
    fn route_consumers(
        &mut self,
        engine: &mut Engine,
        tell: &mut impl FnMut(ConsumerId, ConsumerEvent),
    ) {
        while let Some((id, e)) = engine.poll_consumer_events() {
            if let ConsumerEvent::Settled { handle, result, .. } = e {
                if let Some(tx) = self.settles.remove(&handle) {
                    H::give(tx, result);
                }
                continue;
            }
            let Some(sink) = self.consumers.get_mut(&id) else {
                continue;
            };
            match e {
                ConsumerEvent::Opened(d) => {
                    if let Some(tx) = sink.opened.take() {
                        H::give(tx, Ok(d));
                    }
                }
                ConsumerEvent::Delivery(d) => H::keep(&mut sink.deliveries, *d),
                ConsumerEvent::Refused { ref message, .. } => {
                    if let Some(tx) = sink.opened.take() {
                        H::give(tx, Err(H::open_refused(message.clone())));
                    }
                    sink.over = true;
                }
                ConsumerEvent::ReopenRequired(_) | ConsumerEvent::Closed => {
                    if let Some(tx) = sink.opened.take() {
                        H::give(tx, Err(H::open_refused(format!("{e:?}"))));
                    }
                    tell(id, e);
                    sink.over = true;
                }
                // Interruption and restoration: for observers (EC-5).
                e => tell(id, e),
            }
        }
    }
}

/// Offers `batch` to the engine for `producer` through `waiter`; gives the waiter back when
/// the batches not yet sent leave no room for it (the engine's `Full`), so it can wait.
fn offer<H: Hand>(
    engine: &mut Engine,
    producers: &mut BTreeMap<ProducerId, ProducerSink<H>>,
    now: Timestamp,
    producer: ProducerId,
    batch: &RecordBatch,
    waiter: H::Waiter,
) -> Option<H::Waiter> {
    H::offer(waiter, || match engine.submit(now, producer, batch) {
        Err(SubmitError::Full) => None,
        r => Some(r.map_err(H::Error::from).map(|id| {
            let (tx, rx) = H::once();
            if let Some(s) = producers.get_mut(&producer) {
                s.outcomes.insert(id, (tx, id));
            }
            (id, rx)
        })),
    })
}

/// What a producer's refusal or end says.
fn refusal(e: &ProducerEvent) -> String {
    match e {
        ProducerEvent::Refused { message, .. } => message.clone(),
        other => format!("{other:?}"),
    }
}
