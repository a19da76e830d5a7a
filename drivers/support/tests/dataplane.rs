//! The shared data plane against a real engine and a scripted server, through a fake hand:
//! submission order while waiting for room (P-4), withdrawn submissions never taken (C-10),
//! outcomes nobody waits for giving their credit back at once (P-4), dropped producers and
//! consumers closed once (P-8, EC-6), deliveries kept until the reader has room (EC-2), and
//! settlement results handed to their waiters (EC-4).

use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use bytes::Bytes;
use nervix_driver_support::dataplane::{Call, Dataplane, Hand, Taken};
use nervix_protocol::client::{
    Action, BatchId, BatchOutcome, Client, ClientConfig, ClientError, ConsumerEvent, ConsumerId,
    ConsumerSpec, Decision, Delivery, ProducerEvent, ProducerId, ProducerSpec, SessionId,
    SettleError, SettleResult, SubmitError,
};
use nervix_protocol::encode::Encoder;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::{ClientFrame, ServerMessageRoot};
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType};
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::{mpsc, Arc};

/// A hand whose waiters, producer ends and deliveries the test looks into.
struct Fake;

/// A submission's waiter: whether its caller left, and the answer it got.
#[derive(Default)]
struct Waiter {
    left: Cell<bool>,
    answer: RefCell<Option<Result<Taken<Fake>, Refusal>>>,
}

impl Waiter {
    fn batch(&self) -> Option<BatchId> {
        match &*self.answer.borrow() {
            Some(Ok((id, _))) => Some(*id),
            _ => None,
        }
    }
}

/// A producer's end: its last event, and whether the application dropped it.
struct End {
    tx: mpsc::SyncSender<ProducerEvent>,
    dropped: Rc<Cell<bool>>,
}

/// A consumer's deliveries: those kept for its reader, and the reader.
#[derive(Default)]
struct Deliveries {
    kept: VecDeque<Delivery>,
    reader: Rc<Reader>,
}

/// A consumer's reader: what it was handed, how many more it takes, whether it was dropped.
#[derive(Default)]
struct Reader {
    handed: RefCell<Vec<Delivery>>,
    room: Cell<usize>,
    dropped: Cell<bool>,
}

impl Hand for Fake {
    type Error = Refusal;
    type Once<T> = mpsc::SyncSender<T>;
    type Awaited<T> = mpsc::Receiver<T>;
    type Waiter = Rc<Waiter>;
    type Ended = End;
    type Deliveries = Deliveries;
    type ProducerSide = (mpsc::Receiver<ProducerEvent>, Rc<Cell<bool>>);
    type ConsumerSide = Rc<Reader>;

    fn producer(&self) -> (End, Self::ProducerSide) {
        let (tx, ended) = mpsc::sync_channel(1);
        let dropped = Rc::new(Cell::new(false));
        let end = End {
            tx,
            dropped: dropped.clone(),
        };
        (end, (ended, dropped))
    }
    fn consumer(&self) -> (Deliveries, Rc<Reader>) {
        let d = Deliveries::default();
        let reader = d.reader.clone();
        (d, reader)
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
        waiter: Rc<Waiter>,
        take: impl FnOnce() -> Option<Result<Taken<Self>, Refusal>>,
    ) -> Option<Rc<Waiter>> {
        if waiter.left.get() {
            return None;
        }
        match take() {
            Some(r) => {
                *waiter.answer.borrow_mut() = Some(r);
                None
            }
            None => Some(waiter),
        }
    }
    fn end(ended: End, event: ProducerEvent) {
        let _ = ended.tx.try_send(event);
    }
    fn producer_dropped(ended: &End) -> bool {
        ended.dropped.get()
    }
    fn keep(deliveries: &mut Deliveries, delivery: Delivery) {
        deliveries.kept.push_back(delivery);
    }
    fn flush(d: &mut Deliveries) -> bool {
        while d.reader.room.get() > 0 {
            let Some(delivery) = d.kept.pop_front() else {
                break;
            };
            d.reader.room.set(d.reader.room.get() - 1);
            d.reader.handed.borrow_mut().push(delivery);
        }
        d.kept.is_empty()
    }
    fn consumer_dropped(deliveries: &Deliveries) -> bool {
        deliveries.reader.dropped.get()
    }
    fn open_refused(message: String) -> Refusal {
        Refusal(message)
    }
}

/// Why the fake refused: what the core handed it, by name.
#[derive(Debug, PartialEq)]
struct Refusal(String);

impl From<SubmitError> for Refusal {
    fn from(e: SubmitError) -> Self {
        Refusal(format!("{e:?}"))
    }
}

impl From<SettleError> for Refusal {
    fn from(e: SettleError) -> Self {
        Refusal(format!("{e:?}"))
    }
}

impl From<ClientError> for Refusal {
    fn from(e: ClientError) -> Self {
        Refusal(format!("{e:?}"))
    }
}

fn fields() -> Vec<FieldSpec> {
    vec![
        FieldSpec::new("id", FieldType::Scalar(ScalarType::U64), false, false),
        FieldSpec::new("name", FieldType::Scalar(ScalarType::String), true, false),
    ]
}

fn batch() -> RecordBatch {
    let ids: ArrayRef = Arc::new(UInt64Array::from(vec![1u64]));
    let names: ArrayRef = Arc::new(StringArray::from(vec![Some("n")]));
    RecordBatch::try_from_iter_with_nullable(vec![("id", ids, false), ("name", names, true)])
        .unwrap()
}

fn server(body: ServerBodyT) -> Bytes {
    Encoder::new()
        .encode::<ServerMessageRoot>(&ServerMessageT { body })
        .unwrap()
}

fn reply(request_id: u64, body: ReplyBodyT) -> Bytes {
    server(ServerBodyT::Reply(Box::new(ReplyT { request_id, body })))
}

/// The server's opening of a producer with `batches` batches of credit.
fn producer_opened(request_id: u64, batches: u32, admission: ProducerAdmission) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
            disposition: OpenIngestorDispositionT::ProducerOpened(Box::new(ProducerOpenedT {
                domain: "d1".into(),
                ingestor: "orders_in".into(),
                fields: fields().iter().map(FieldSpec::to_wire).collect(),
                generation: 1,
                contract: Box::new(FingerprintT { bytes: vec![7; 32] }),
                attachment: vec![request_id as u8; 16],
                window: ProducerWindowT::SequentialProducerWindow(Box::default()),
                ack_timeout_nanos: 5_000_000_000,
                retry_backoff_nanos: 100_000_000,
                retry_max_backoff_nanos: 350_000_000,
                granted_batches: batches,
                granted_bytes: 1 << 20,
                max_batch_bytes: 1 << 19,
                max_batch_rows: 100,
                admission: Some(admission),
            })),
            message: "opened".into(),
        })),
    )
}

/// The server's opening of an emitter consumer with a window of one.
fn emitter_opened(request_id: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::OpenEmitterOutcome(Box::new(OpenEmitterOutcomeT {
            disposition: OpenEmitterDispositionT::EmitterOpened(Box::new(EmitterOpenedT {
                domain: "d1".into(),
                emitter: "alerts".into(),
                fields: fields().iter().map(FieldSpec::to_wire).collect(),
                generation: 1,
                contract: Box::new(FingerprintT { bytes: vec![7; 32] }),
                window: ConsumerWindowT::SequentialConsumerWindow(Box::default()),
                ack_timeout_nanos: 5_000_000_000,
                retry_backoff_nanos: 100_000_000,
                retry_max_backoff_nanos: 350_000_000,
                granted_batches: 1,
                granted_bytes: 1 << 20,
                max_batch_bytes: 1 << 19,
                max_batch_rows: 100,
            })),
            message: "opened".into(),
        })),
    )
}

/// The server's answer to a read: one batch, named by `reference`.
fn delivered(request_id: u64, reference: u8) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
            disposition: ReadEmitterDispositionT::EmitterBatchReceived(Box::new(
                EmitterBatchReceivedT {
                    identity: vec![reference; 16],
                    reference: vec![reference; 16],
                    source_relay: "alerts_relay".into(),
                    branch_fingerprint: Some(vec![9; 32]),
                    batch: nervix_protocol::arrow::encode(&batch()).unwrap(),
                    members: 1,
                    execution_now_unix_nanos: 0,
                },
            )),
            message: String::new(),
        })),
    )
}

fn batch_completed(request_id: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::SubmissionOutcome(Box::new(SubmissionOutcomeT {
            disposition: SubmissionDispositionT::SubmissionCompleted(Box::default()),
            message: String::new(),
        })),
    )
}

/// An engine on one session, the data plane beside it, and what the engine sent.
struct Rig {
    engine: Client,
    dp: Dataplane<Fake>,
    now: Timestamp,
    session: Option<SessionId>,
    sent: Vec<ClientMessageT>,
    told: Vec<ProducerEvent>,
    told_consumers: Vec<ConsumerEvent>,
}

impl Rig {
    fn new() -> Self {
        let seed = Endpoint::parse("https://seed-1:7443/").unwrap();
        Rig {
            engine: Client::new(ClientConfig::new(vec![seed], 7)),
            dp: Dataplane::new(Fake),
            now: Timestamp::ZERO,
            session: None,
            sent: Vec::new(),
            told: Vec::new(),
            told_consumers: Vec::new(),
        }
    }

    /// Performs the engine's actions and routes the data plane, until nothing moves.
    fn pump(&mut self) {
        loop {
            let mut any = false;
            while let Some(a) = self.engine.poll_action() {
                any = true;
                match a {
                    Action::Connect { session, .. } => {
                        self.session = Some(session);
                        self.engine.handle_connected(self.now, session);
                    }
                    Action::Send { frame, .. } => {
                        self.sent.push(ClientFrame::check(frame).unwrap().unpack());
                    }
                    _ => {}
                }
            }
            while self.engine.poll_event().is_some() {}
            let (told, told_consumers) = (&mut self.told, &mut self.told_consumers);
            any |= self.dp.route(
                &mut self.engine,
                self.now,
                |_, e| told.push(e),
                |_, e| told_consumers.push(e),
            );
            if !any {
                return;
            }
        }
    }

    fn feed(&mut self, frame: Bytes) {
        let sid = self.session.expect("a session");
        self.engine.handle_frame(self.now, sid, frame);
        self.pump();
    }

    /// Request ids of what was sent, of one kind.
    fn sent_of(&self, kind: ClientRequest) -> Vec<u64> {
        self.sent
            .iter()
            .filter(|m| m.request.client_request_type() == kind)
            .map(|m| m.request_id)
            .collect()
    }

    /// Opens a producer with `batches` batches of credit.
    fn producer(&mut self, batches: u32) -> (ProducerId, Rc<Cell<bool>>) {
        self.producer_with(batches, ProducerAdmission::Open)
    }

    /// Opens a producer with `batches` batches of credit, admitted as `admission` says.
    fn producer_with(
        &mut self,
        batches: u32,
        admission: ProducerAdmission,
    ) -> (ProducerId, Rc<Cell<bool>>) {
        let spec = ProducerSpec::new("d1", "orders_in", fields());
        let new = self
            .dp
            .open_producer(&mut self.engine, self.now, spec)
            .unwrap();
        let (id, opened, dropped) = (new.id, new.opened, new.side.1);
        self.pump();
        let open = *self
            .sent_of(ClientRequest::OpenIngestorRequest)
            .last()
            .unwrap();
        self.feed(producer_opened(open, batches, admission));
        assert!(opened.try_recv().unwrap().is_ok(), "the open is answered");
        (id, dropped)
    }

    fn submit(&mut self, p: ProducerId) -> Rc<Waiter> {
        let w = Rc::new(Waiter::default());
        self.dp
            .submit(&mut self.engine, self.now, p, batch().into(), w.clone());
        self.pump();
        w
    }

    /// Opens a consumer and answers its open.
    fn consumer(&mut self) -> (ConsumerId, Rc<Reader>) {
        let spec = ConsumerSpec::new("d1", "alerts", fields());
        let new = self
            .dp
            .open_consumer(&mut self.engine, self.now, spec)
            .unwrap();
        self.pump();
        let open = *self
            .sent_of(ClientRequest::OpenEmitterRequest)
            .last()
            .unwrap();
        self.feed(emitter_opened(open));
        assert!(
            new.opened.try_recv().unwrap().is_ok(),
            "the open is answered"
        );
        (new.id, new.side)
    }

    /// Asks for a delivery and answers the read with one named by `reference`.
    fn deliver(&mut self, c: ConsumerId, reference: u8) {
        self.dp
            .call(&mut self.engine, self.now, Call::ReadDelivery(c), None);
        self.pump();
        let read = *self
            .sent_of(ClientRequest::ReadEmitterBatchRequest)
            .last()
            .unwrap();
        self.feed(delivered(read, reference));
    }

    /// Completes the `n`th batch sent (from 0).
    fn complete(&mut self, n: usize) {
        let id = self.sent_of(ClientRequest::SubmitBatchRequest)[n];
        self.feed(batch_completed(id));
    }

    /// The application read the outcome of the batch `w` was answered with.
    fn read(&mut self, p: ProducerId, w: &Waiter) -> BatchOutcome {
        let answer = w.answer.borrow_mut().take().unwrap().unwrap();
        let outcome = answer.1.try_recv().unwrap();
        self.dp.released().push(p, answer.0);
        self.pump();
        outcome
    }

    fn credit(&self, p: ProducerId) -> u32 {
        self.engine.producer(p).unwrap().credit_batches
    }
}

#[test]
fn p_4_submissions_waiting_for_room_are_taken_in_the_order_they_were_made() {
    let mut r = Rig::new();
    let (p, _) = r.producer(1);
    // One batch sent, one waiting for credit: the unsent ones fill a grant.
    let a = r.submit(p);
    let b = r.submit(p);
    assert!(a.batch().is_some() && b.batch().is_some());
    let c = r.submit(p);
    let d = r.submit(p);
    let e = r.submit(p);
    assert!(c.batch().is_none() && d.batch().is_none() && e.batch().is_none());
    // A's outcome read: B goes, and one waiting submission fits, the oldest.
    r.complete(0);
    assert_eq!(r.read(p, &a), BatchOutcome::Completed);
    assert_eq!(r.sent_of(ClientRequest::SubmitBatchRequest).len(), 2);
    assert!(c.batch().is_some(), "the oldest waiting is taken first");
    assert!(d.batch().is_none() && e.batch().is_none());
    r.complete(1);
    r.read(p, &b);
    assert!(d.batch().is_some() && e.batch().is_none());
    // Taken in the order they were made.
    assert!(b.batch() < c.batch() && c.batch() < d.batch());
}

#[test]
fn p_4_a_submission_made_while_others_wait_waits_behind_them() {
    let mut r = Rig::new();
    let (p, _) = r.producer(1);
    let a = r.submit(p);
    let _b = r.submit(p);
    let c = r.submit(p);
    // A's outcome read and released, but not yet routed: the engine has room, and a new
    // submission arrives before the waiting one is offered again.
    r.complete(0);
    let answer = a.answer.borrow_mut().take().unwrap().unwrap();
    r.dp.released().push(p, answer.0);
    let late = Rc::new(Waiter::default());
    r.dp.submit(&mut r.engine, r.now, p, batch().into(), late.clone());
    assert!(late.batch().is_none(), "it waits behind the one before it");
    r.pump();
    assert!(c.batch().is_some());
    assert!(late.batch().is_none());
}

#[test]
fn c_10_a_waiting_submission_whose_caller_left_is_never_taken() {
    let mut r = Rig::new();
    let (p, _) = r.producer(1);
    let a = r.submit(p);
    let _b = r.submit(p);
    let c = r.submit(p);
    let d = r.submit(p);
    c.left.set(true);
    r.complete(0);
    r.read(p, &a);
    assert!(c.answer.borrow().is_none(), "never taken, never answered");
    assert!(d.batch().is_some(), "the next one takes its place");
    // The engine holds B (sent) and D (waiting for credit): C is nowhere.
    assert_eq!(r.engine.producer(p).unwrap().unresolved, 2);
}

#[test]
fn c_10_a_submission_whose_caller_left_before_it_was_offered_is_never_taken() {
    let mut r = Rig::new();
    let (p, _) = r.producer(1);
    let w = Rc::new(Waiter::default());
    w.left.set(true);
    r.dp.submit(&mut r.engine, r.now, p, batch().into(), w.clone());
    r.pump();
    assert!(w.answer.borrow().is_none());
    assert_eq!(r.engine.producer(p).unwrap().unresolved, 0);
}

#[test]
fn p_4_an_outcome_nobody_waits_for_gives_its_credit_back_at_once() {
    let mut r = Rig::new();
    let (p, _) = r.producer(2);
    let a = r.submit(p);
    let b = r.submit(p);
    assert_eq!(r.credit(p), 2);
    // A's handle is gone: its outcome, once in, is released without being read.
    drop(a.answer.borrow_mut().take());
    r.complete(0);
    assert_eq!(r.credit(p), 1, "A's credit came back at once");
    // B's outcome is held until read.
    r.complete(1);
    assert_eq!(
        r.credit(p),
        1,
        "B's credit is held until its outcome is read"
    );
    assert_eq!(r.read(p, &b), BatchOutcome::Completed);
    assert_eq!(r.credit(p), 0);
}

#[test]
fn p_8_a_dropped_producer_is_closed_once() {
    let mut r = Rig::new();
    let (_, dropped) = r.producer(1);
    dropped.set(true);
    r.pump();
    r.pump();
    assert_eq!(r.sent_of(ClientRequest::CloseIngestorRequest).len(), 1);
    // Closed at the application's word first: the drop asks nothing more.
    let (q, dropped) = r.producer(1);
    r.dp.close_producer(&mut r.engine, r.now, q);
    r.pump();
    dropped.set(true);
    r.pump();
    assert_eq!(r.sent_of(ClientRequest::CloseIngestorRequest).len(), 2);
}

#[test]
fn p_8_waiting_submissions_of_a_producer_that_ends_are_refused() {
    let mut r = Rig::new();
    let (p, _) = r.producer(1);
    let _a = r.submit(p);
    let _b = r.submit(p);
    let c = r.submit(p);
    r.dp.close_producer(&mut r.engine, r.now, p);
    r.pump();
    let close = *r
        .sent_of(ClientRequest::CloseIngestorRequest)
        .last()
        .unwrap();
    r.feed(reply(
        close,
        ReplyBodyT::CloseIngestorOutcome(Box::new(CloseIngestorOutcomeT {
            disposition: CloseIngestorDispositionT::ProducerClosed(Box::default()),
            message: String::new(),
        })),
    ));
    assert!(
        matches!(&*c.answer.borrow(), Some(Err(Refusal(e))) if e.starts_with("Finished(")),
        "{:?}",
        c.answer.borrow().as_ref().map(|r| r.as_ref().err())
    );
    assert!(r.told.iter().any(|e| matches!(e, ProducerEvent::Closed)));
}

#[test]
fn t_5_an_open_while_the_driver_is_stopped_is_refused_and_nothing_is_opened() {
    let mut r = Rig::new();
    let (reply, answer) = mpsc::sync_channel(1);
    let spec = ProducerSpec::new("d1", "orders_in", fields());
    let call = Call::OpenProducer { spec, reply };
    let parked = Refusal("parked".into());
    r.dp.call(&mut r.engine, r.now, call, Some(parked));
    r.pump();
    assert_eq!(
        answer.try_recv().unwrap().err(),
        Some(Refusal("parked".into()))
    );
    assert!(r.sent_of(ClientRequest::OpenIngestorRequest).is_empty());
    assert!(r.engine.poll_producer_events_held().is_none());
    // Not stopped: the same call opens it.
    let (reply, answer) = mpsc::sync_channel(1);
    let spec = ProducerSpec::new("d1", "orders_in", fields());
    r.dp.call(
        &mut r.engine,
        r.now,
        Call::OpenProducer { spec, reply },
        None,
    );
    r.pump();
    let new = answer.try_recv().unwrap().unwrap();
    assert!(r.engine.producer(new.id).is_some());
    assert_eq!(r.sent_of(ClientRequest::OpenIngestorRequest).len(), 1);
}

#[test]
fn ec_2_a_delivery_is_kept_until_the_reader_has_room() {
    let mut r = Rig::new();
    let (c, reader) = r.consumer();
    r.deliver(c, 1);
    assert!(reader.handed.borrow().is_empty(), "no room: kept");
    reader.room.set(1);
    r.pump();
    assert_eq!(reader.handed.borrow().len(), 1);
    assert_eq!(reader.handed.borrow()[0].identity, [1; 16]);
}

#[test]
fn ec_4_a_settlement_result_reaches_its_waiter() {
    let mut r = Rig::new();
    let (c, reader) = r.consumer();
    reader.room.set(1);
    r.deliver(c, 2);
    let reference = reader.handed.borrow()[0].reference;
    let (tx, answer) = mpsc::sync_channel(1);
    let call = Call::Settle {
        reference,
        decision: Decision::Ack,
        reply: tx,
    };
    r.dp.call(&mut r.engine, r.now, call, None);
    r.pump();
    let result = answer.try_recv().unwrap().unwrap();
    let settle = *r
        .sent_of(ClientRequest::SettleEmitterBatchRequest)
        .last()
        .unwrap();
    r.feed(reply(
        settle,
        ReplyBodyT::SettleEmitterBatchOutcome(Box::new(SettleEmitterBatchOutcomeT {
            disposition: Some(EmitterSettlement::Confirmed),
            message: String::new(),
        })),
    ));
    assert_eq!(result.try_recv(), Ok(SettleResult::Confirmed));
    // Settled once: a second settlement of the attempt is refused locally.
    let (tx, answer) = mpsc::sync_channel(1);
    let call = Call::Settle {
        reference,
        decision: Decision::Ack,
        reply: tx,
    };
    r.dp.call(&mut r.engine, r.now, call, None);
    let refused = answer.try_recv().unwrap();
    assert!(refused.is_err(), "settled already: refused, nothing sent");
}

#[test]
fn ec_6_a_dropped_consumer_is_closed_once_and_goes() {
    let mut r = Rig::new();
    let (_, reader) = r.consumer();
    reader.dropped.set(true);
    r.pump();
    r.pump();
    assert_eq!(r.sent_of(ClientRequest::CloseEmitterRequest).len(), 1);
    assert_eq!(
        Rc::strong_count(&reader),
        2,
        "followed until its close is answered"
    );
    let close = *r
        .sent_of(ClientRequest::CloseEmitterRequest)
        .last()
        .unwrap();
    r.feed(reply(
        close,
        ReplyBodyT::CloseEmitterOutcome(Box::new(CloseEmitterOutcomeT {
            disposition: Some(EmitterCloseDisposition::Closed),
            message: String::new(),
        })),
    ));
    assert_eq!(Rc::strong_count(&reader), 1, "the data plane let it go");
    assert_eq!(r.sent_of(ClientRequest::CloseEmitterRequest).len(), 1);
    let closed = ConsumerEvent::Closed;
    assert!(r.told_consumers.contains(&closed), "{:?}", r.told_consumers);
}

#[test]
fn ec_6_a_closed_consumer_goes_once_its_kept_deliveries_are_handed_on() {
    let mut r = Rig::new();
    let (c, reader) = r.consumer();
    r.deliver(c, 3);
    r.dp.call(&mut r.engine, r.now, Call::CloseConsumer(c), None);
    r.pump();
    let close = *r
        .sent_of(ClientRequest::CloseEmitterRequest)
        .last()
        .unwrap();
    r.feed(reply(
        close,
        ReplyBodyT::CloseEmitterOutcome(Box::new(CloseEmitterOutcomeT {
            disposition: Some(EmitterCloseDisposition::Closed),
            message: String::new(),
        })),
    ));
    assert_eq!(
        Rc::strong_count(&reader),
        2,
        "a delivery is still kept for it"
    );
    reader.room.set(1);
    r.pump();
    assert_eq!(reader.handed.borrow().len(), 1);
    assert_eq!(Rc::strong_count(&reader), 1, "over and handed on: gone");
    assert_eq!(r.sent_of(ClientRequest::CloseEmitterRequest).len(), 1);
}

#[test]
fn p_6_submissions_waiting_for_room_are_offered_again_when_the_engine_timer_fired() {
    let mut r = Rig::new();
    let (p, _) = r.producer_with(1, ProducerAdmission::Suspended);
    // Suspended: nothing is sent, and the unsent batch fills the grant.
    let a = r.submit(p);
    let b = r.submit(p);
    assert!(a.batch().is_some() && b.batch().is_none());
    // The server names the producer by its open's request.
    let wire = *r
        .sent_of(ClientRequest::OpenIngestorRequest)
        .last()
        .unwrap();
    r.feed(server(ServerBodyT::ProducerAdmissionChanged(Box::new(
        ProducerAdmissionChangedT {
            producer: wire,
            admission: Some(ProducerAdmission::Open),
        },
    ))));
    assert!(
        b.batch().is_none(),
        "no room yet: the engine sends at its timer"
    );
    // The engine's timer fires: A goes, and B takes its place.
    r.engine.handle_timeout(r.now);
    r.dp.timer_fired();
    r.pump();
    assert_eq!(r.sent_of(ClientRequest::SubmitBatchRequest).len(), 1);
    assert!(b.batch().is_some());
}

#[test]
fn p_4_a_released_outcome_asks_the_engine_for_what_waited_for_its_credit() {
    let mut r = Rig::new();
    let (p, _) = r.producer(1);
    let a = r.submit(p);
    let _b = r.submit(p);
    r.complete(0);
    let answer = a.answer.borrow_mut().take().unwrap().unwrap();
    assert_eq!(answer.1.try_recv(), Ok(BatchOutcome::Completed));
    r.dp.released().push(p, answer.0);
    // Nothing waits in the data plane: the engine's own waiting batch goes, and the driver
    // is told to perform what the engine now asks.
    let asked = r.dp.route(&mut r.engine, r.now, |_, _| {}, |_, _| {});
    assert!(asked);
    r.pump();
    assert_eq!(r.sent_of(ClientRequest::SubmitBatchRequest).len(), 2);
}

#[test]
fn p_1_a_refused_open_is_answered_with_the_server_s_words() {
    let mut r = Rig::new();
    let spec = ProducerSpec::new("d1", "orders_in", fields());
    let new = r.dp.open_producer(&mut r.engine, r.now, spec).unwrap();
    r.pump();
    let open = *r
        .sent_of(ClientRequest::OpenIngestorRequest)
        .last()
        .unwrap();
    r.feed(reply(
        open,
        ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
            disposition: OpenIngestorDispositionT::ProducerRefused(Box::new(ProducerRefusedT {
                refusal: Some(ProducerRefusal::IngestorNotFound),
            })),
            message: "no such ingestor".into(),
        })),
    ));
    let answer = new.opened.try_recv().unwrap();
    assert_eq!(answer.err(), Some(Refusal("no such ingestor".into())));
}

#[test]
fn p_8_submissions_waiting_for_room_are_offered_again_once_the_producer_is_restored() {
    let mut r = Rig::new();
    let (p, _) = r.producer(1);
    let a = r.submit(p);
    let _b = r.submit(p);
    let c = r.submit(p);
    assert!(c.batch().is_none());
    // The session is lost: B, never sent, still fills the grant while the producer restores.
    let sid = r.session.unwrap();
    r.engine.handle_closed(r.now, sid);
    r.pump();
    // A's outcome is unknown (P-8); read, its credit comes back.
    assert_eq!(r.read(p, &a), BatchOutcome::Unknown);
    assert!(c.batch().is_none());
    let at = r.engine.poll_timeout().expect("a reconnect is due");
    r.now = at;
    r.engine.handle_timeout(at);
    r.pump();
    let open = *r
        .sent_of(ClientRequest::OpenIngestorRequest)
        .last()
        .unwrap();
    r.feed(producer_opened(open, 1, ProducerAdmission::Open));
    assert!(r
        .told
        .iter()
        .any(|e| matches!(e, ProducerEvent::Restored(_))));
    // Restored: B goes on the new attachment, and C takes its place.
    assert!(c.batch().is_some());
}
