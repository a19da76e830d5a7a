//! The part of a seeded scenario over real transports that no driver owns: the loopback a
//! seed's [`Plan`] asks for, the book of what the application holds and observed, the
//! transport faults injected and healed at seeded points, and the verdict on a run.
//!
//! A driver's scenario test keeps only the calls into its own API: it submits, reads,
//! subscribes, follows clocks, opens producers and consumers ([`DataCall`]), and tells the [`Book`] through [`Handles`] how to see,
//! without waiting, whether a handle it holds has something. The same seed then draws the same
//! operations and faults, and the run is checked against the same invariants
//! ([`Observed::check`]), whatever the driver and runtime.

use crate::{Loopback, LoopbackConfig};
use nervix_harness::cluster::token_number;
use nervix_harness::scenario::dataplane::{self as dp, Op, ProducerDraw};
use nervix_harness::scenario::{Observed, Plan, TransportFault};
use nervix_protocol::client::{
    BatchOutcome, ClockEvent, CommandResult, Decision, Delivery, DeliveryRef, ReadResult,
    SettleResult, SubscriptionEvent,
};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Seeds a CI run takes (per transport).
pub const CI_SEEDS: u64 = 3;
/// Operations per seed.
pub const OPERATIONS: usize = 30;
/// The call deadline the client is configured with.
pub const CALL: Duration = Duration::from_secs(2);
/// The longest one seed may take.
pub const SEED_BOUND: Duration = Duration::from_secs(40);

/// How long a run waits after its operations for every command and read to end: four call
/// deadlines and two seconds.
pub const SETTLE: Duration = Duration::from_secs(4 * CALL.as_secs() + 2);
/// How long a run then waits for the outcomes of abandoned commands to come to `unclaimed`:
/// two call deadlines and two seconds.
pub const UNCLAIMED: Duration = Duration::from_secs(2 * CALL.as_secs() + 2);

/// The plan of `seed` and the loopback it asks for: its nodes and cluster faults, with rows
/// emitted every 60 ms, three at a time.
pub fn start(seed: u64) -> Result<(Plan, Arc<Loopback>), String> {
    let plan = Plan::new(seed, OPERATIONS);
    let lb = Loopback::start(LoopbackConfig {
        nodes: plan.nodes,
        seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 1,
        faults: plan.cluster.clone(),
        rows: (Duration::from_millis(60), 3),
        ..LoopbackConfig::default()
    })
    .map_err(|e| format!("seed {seed}: the loopback did not start: {e}"))?;
    Ok((plan, Arc::new(lb)))
}

/// The verdict on the run of `seed` over `transport`: what the application observed (`obs`)
/// and the error that ended the run early, if any, checked against the cluster's record.
/// `Ok` is the run's summary, `Err` the failure report with both traces. With `NERVIX_TRACE`
/// set, the application's trace is printed either way.
pub fn verdict(
    seed: u64,
    transport: &str,
    lb: &Loopback,
    obs: &Observed,
    error: Option<String>,
) -> Result<String, String> {
    if std::env::var_os("NERVIX_TRACE").is_some() {
        eprintln!(
            "seed {seed} over {transport}:\n  {}",
            obs.trace().join("\n  ")
        );
    }
    let references = lb.stats().references;
    let checked = lb.with_cluster(|c| obs.check(c, &references));
    let problems = match (error, checked) {
        (None, Ok(())) => return Ok(obs.summary()),
        (Some(e), Ok(())) => format!("  {e}\n"),
        (None, Err(p)) => p,
        (Some(e), Err(p)) => format!("  {e}\n{p}"),
    };
    Err(obs.report(seed, transport, &problems, &lb.trace()))
}

/// The result of a run that did not end within [`SEED_BOUND`].
pub fn overran() -> (Observed, Option<String>) {
    (
        Observed::default(),
        Some(format!("the run did not end within {SEED_BOUND:?}")),
    )
}

/// The result of a run whose client did not start.
pub fn not_started(e: impl Display) -> (Observed, Option<String>) {
    (
        Observed::default(),
        Some(format!("the client did not start: {e}")),
    )
}

/// The handles a driver's API gives out, and how to see without waiting whether each has
/// something.
pub trait Handles {
    /// A command's pending result.
    type Command;
    /// A read in flight.
    type Read;
    /// An open subscription.
    type Subscription;
    /// A followed domain clock.
    type Clock;
    /// An open producer.
    type Producer;
    /// A submitted batch's pending outcome.
    type Batch;
    /// An open consumer.
    type Consumer;

    /// The command's result when it has one: `Err` when its wait ended without one.
    fn command(c: &mut Self::Command) -> Option<Result<CommandResult, String>>;
    /// The read's answer (see [`read_answer`]) when it has one.
    fn read(q: &mut Self::Read) -> Option<String>;
    /// The subscription's next event when one is ready: `Some(None)` when it ended.
    fn subscription(s: &mut Self::Subscription) -> Option<Option<SubscriptionEvent>>;
    /// The clock's next event when one is ready: `Some(None)` when it ended.
    fn clock(k: &mut Self::Clock) -> Option<Option<ClockEvent>>;
    /// The batch's outcome when it has one: `Err` when its wait ended without one.
    fn batch(b: &mut Self::Batch) -> Option<Result<BatchOutcome, String>>;
}

/// How long a run waits for a submission to be taken (when the producer's credit is full)
/// before it drops the submission, which then must never be taken (C-10).
pub const SUBMIT_WAIT: Duration = Duration::from_millis(1500);
/// How long a run waits for a producer's or consumer's open to be answered, or for its
/// close, before it drops the wait (which closes it). An open made while a BEGIN is
/// unanswered waits for the transaction to end, and one made while the only node is down
/// waits for it to come back: neither can come while the run waits.
pub const OPEN_WAIT: Duration = CALL;
/// How long one drawn read of a delivery waits before it gives up.
pub const DELIVERY_WAIT: Duration = Duration::from_millis(300);

/// The deliveries a consumer read and did not settle yet: each attempt's reference and the
/// delivery's identity.
pub type Unsettled = Vec<(DeliveryRef, u64)>;

/// What a producer or consumer operation the plan drew asks of the driver's API.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DataCall {
    /// Open a producer of `draw.ingestor` with its credit under `label`, then
    /// [`Book::producer_opened`].
    OpenProducer {
        /// The label it is traced under.
        label: u64,
        /// The ingestor and the credit asked for.
        draw: ProducerDraw,
    },
    /// Submit each batch of `batches` to producer `producer` (within [`SUBMIT_WAIT`]), then
    /// [`Book::batch_submitted`].
    Submit {
        /// The producer's label.
        producer: u64,
        /// Each batch: its label, its ids (the `name` column is [`dp::batch_names`]), and
        /// whether the application drops the wait for its outcome once it is submitted.
        batches: Vec<(u64, Vec<u64>, bool)>,
    },
    /// Close producer `label`, taken with [`Book::take_producer`].
    CloseProducer {
        /// The producer's label.
        label: u64,
    },
    /// Open a consumer of the emitter under `label`, then [`Book::consumer_opened`].
    OpenConsumer {
        /// The label it is traced under.
        label: u64,
    },
    /// Read one delivery of consumer `consumer` (within [`DELIVERY_WAIT`]), then
    /// [`Book::delivered`].
    Read {
        /// The consumer's label.
        consumer: u64,
    },
    /// Settle `reference` of consumer `consumer` with `decision` under `label`, then
    /// [`Book::settle_ended`].
    Settle {
        /// The consumer's label.
        consumer: u64,
        /// The settlement's label.
        label: u64,
        /// The delivery attempt.
        reference: DeliveryRef,
        /// The decision.
        decision: Decision,
    },
    /// Close consumer `label`, taken with [`Book::take_consumer`].
    CloseConsumer {
        /// The consumer's label.
        label: u64,
    },
}

/// How a read's answer is written in the trace: `replied`, another result, or the error.
pub fn read_answer(r: &Result<ReadResult, impl Display>) -> String {
    match r {
        Ok(ReadResult::Replied(_)) => "replied".into(),
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("error: {e}"),
    }
}

/// What a statement the plan drew asks of the driver's API, once the [`Book`] has done what
/// needs no call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Call {
    /// Run the statement as a read (`LIST DOMAINS`).
    Read,
    /// Run the statement and log what came back (`USE tenant`).
    Run,
    /// Follow the clock of domain `tenant` under `label`.
    FollowClock {
        /// The label the clock is traced under.
        label: u64,
    },
    /// Subscribe with the statement under `label`; it reads `relay`.
    Subscribe {
        /// The label the subscription is traced under.
        label: u64,
        /// The relay it reads.
        relay: String,
    },
}

/// One run: what its application holds, what it observed, and the transport faults to heal.
pub struct Book<H: Handles> {
    /// The loopback the run goes to.
    pub lb: Arc<Loopback>,
    /// The seed's plan.
    pub plan: Plan,
    /// What the application observed.
    pub obs: Observed,
    start: Instant,
    label: u64,
    /// Commands waited for, by label.
    pub commands: BTreeMap<u64, H::Command>,
    /// Reads in flight, by label.
    pub reads: BTreeMap<u64, H::Read>,
    /// Open subscriptions by the plan's slot, with their labels.
    pub subscriptions: BTreeMap<u64, (u64, H::Subscription)>,
    /// The followed clock, with its label.
    pub clock: Option<(u64, H::Clock)>,
    /// Open producers, by label.
    pub producers: BTreeMap<u64, H::Producer>,
    /// Pending batch outcomes waited for, by label.
    pub batches: BTreeMap<u64, H::Batch>,
    /// Open consumers by label, each with the deliveries read and not settled yet
    /// (reference, identity).
    pub consumers: BTreeMap<u64, (H::Consumer, Unsettled)>,
    next_id: u64,
    heals: Vec<(usize, TransportFault)>,
}

impl<H: Handles> Book<H> {
    /// A run of `plan` against `lb`, starting now.
    pub fn new(lb: Arc<Loopback>, plan: Plan) -> Self {
        Self {
            lb,
            plan,
            obs: Observed::default(),
            start: Instant::now(),
            label: 0,
            commands: BTreeMap::new(),
            reads: BTreeMap::new(),
            subscriptions: BTreeMap::new(),
            clock: None,
            producers: BTreeMap::new(),
            batches: BTreeMap::new(),
            consumers: BTreeMap::new(),
            next_id: 0,
            heals: Vec::new(),
        }
    }

    /// Milliseconds since the run started.
    pub fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// The next label.
    pub fn next_label(&mut self) -> u64 {
        self.label += 1;
        self.label
    }

    /// Logs a line of the application's trace.
    pub fn log(&mut self, ms: u64, line: impl AsRef<str>) {
        self.obs.log(ms, line);
    }

    /// Records what submitting `query` under `label` gave: the command's reference and its
    /// pending result, or the refusal. `append` tells whether it joins a transaction.
    pub fn submitted(
        &mut self,
        ms: u64,
        label: u64,
        query: &str,
        append: bool,
        r: Result<(String, H::Command), impl Display>,
    ) {
        match r {
            Ok((reference, p)) => {
                self.obs
                    .command_issued(ms, label, query, &reference, append);
                self.commands.insert(label, p);
            }
            Err(e) => self
                .obs
                .log(ms, format!("app execute {query:?} refused: {e}")),
        }
    }

    /// Records the read `q` issued under `label`.
    pub fn read_issued(&mut self, ms: u64, label: u64, q: H::Read) {
        self.obs.read_issued(ms, label);
        self.reads.insert(label, q);
    }

    /// Takes every result, event and answer that is ready now, without waiting.
    pub fn poll(&mut self) {
        let ms = self.ms();
        let mut done = Vec::new();
        for (l, p) in self.commands.iter_mut() {
            match H::command(p) {
                Some(Ok(r)) => {
                    self.obs.command_ended(ms, *l, r);
                    done.push(*l);
                }
                Some(Err(e)) => {
                    self.obs
                        .problem(format!("c{l}'s wait ended without a result: {e}"));
                    done.push(*l);
                }
                None => {}
            }
        }
        for l in done {
            self.commands.remove(&l);
        }
        let mut done = Vec::new();
        for (l, q) in self.reads.iter_mut() {
            if let Some(answer) = H::read(q) {
                self.obs.read_ended(ms, *l, answer);
                done.push(*l);
            }
        }
        for l in done {
            self.reads.remove(&l);
        }
        let mut ended = Vec::new();
        for (slot, (label, s)) in self.subscriptions.iter_mut() {
            while let Some(e) = H::subscription(s) {
                match e {
                    Some(e) => self.obs.subscription_event(ms, *label, &e),
                    None => {
                        ended.push(*slot);
                        break;
                    }
                }
            }
        }
        for slot in ended {
            self.subscriptions.remove(&slot);
        }
        let mut done = Vec::new();
        for (l, b) in self.batches.iter_mut() {
            match H::batch(b) {
                Some(Ok(o)) => {
                    self.obs.batch_ended(ms, *l, o);
                    done.push(*l);
                }
                Some(Err(e)) => {
                    self.obs
                        .problem(format!("b{l}'s wait ended without an outcome: {e}"));
                    done.push(*l);
                }
                None => {}
            }
        }
        for l in done {
            self.batches.remove(&l);
        }
        if let Some((label, k)) = &mut self.clock {
            while let Some(e) = H::clock(k) {
                match e {
                    Some(e) => self.obs.clock_event(ms, *label, &e),
                    None => {
                        self.clock = None;
                        break;
                    }
                }
            }
        }
    }

    /// Does what the statement `text` of the plan's `slot` needs no call for (dropping a
    /// clock or a subscription), and tells what it asks of the API otherwise: nothing when
    /// the clock is already followed or the slot's subscription is already open.
    pub fn statement(&mut self, ms: u64, slot: u64, text: &str) -> Option<Call> {
        if text == "LIST DOMAINS" {
            Some(Call::Read)
        } else if text == "USE tenant" {
            Some(Call::Run)
        } else if text == "ATTACH DOMAIN CLOCK" {
            self.clock.is_none().then(|| Call::FollowClock {
                label: self.next_label(),
            })
        } else if text == "DETACH DOMAIN CLOCK" {
            if let Some((label, k)) = self.clock.take() {
                self.obs.log(ms, format!("app drops clock k{label}"));
                drop(k);
            }
            None
        } else if let Some(rest) = text.strip_prefix("CREATE SUBSCRIPTION ") {
            if self.subscriptions.contains_key(&slot) {
                return None;
            }
            let relay = rest
                .split_whitespace()
                .nth(2)
                .unwrap_or_default()
                .to_string();
            Some(Call::Subscribe {
                label: self.next_label(),
                relay,
            })
        } else {
            if let Some((label, s)) = self.subscriptions.remove(&slot) {
                self.obs.unsubscribed(ms, label);
                drop(s);
            }
            None
        }
    }

    /// Records what following the clock under `label` gave.
    pub fn clock_followed(&mut self, ms: u64, label: u64, r: Result<H::Clock, impl Display>) {
        match r {
            Ok(k) => {
                self.obs.clock_followed(ms, label);
                self.clock = Some((label, k));
            }
            Err(e) => self.obs.log(ms, format!("app follow clock refused: {e}")),
        }
    }

    /// Records what subscribing with `text` for the plan's `slot` under `label` gave.
    pub fn subscribed(
        &mut self,
        ms: u64,
        slot: u64,
        label: u64,
        relay: &str,
        text: &str,
        r: Result<H::Subscription, impl Display>,
    ) {
        match r {
            Ok(s) => {
                self.obs.subscribed(ms, label, &format!("s{slot}"), relay);
                self.subscriptions.insert(slot, (label, s));
            }
            Err(e) => self
                .obs
                .log(ms, format!("app subscribe {text:?} refused: {e}")),
        }
    }

    /// C-10: the application stops waiting for one command the plan picks, whether or not
    /// its outcome already arrived; the outcome must come back through `unclaimed`. Nothing
    /// when no command is waited for.
    pub fn abandon(&mut self) {
        if self.commands.is_empty() {
            return;
        }
        let k = self.plan.pick(self.commands.len());
        let label = *self
            .commands
            .keys()
            .nth(k)
            .expect("picked below the length");
        if let Some(p) = self.commands.remove(&label) {
            let ms = self.ms();
            self.obs.command_abandoned(ms, label);
            drop(p);
        }
    }

    /// After operation `i`: injects the transport fault the plan draws, if any, heals the
    /// faults due, and returns the pause the plan draws next, in milliseconds.
    pub fn after_operation(&mut self, i: usize) -> u64 {
        if let Some((fault, after)) = self.plan.fault(self.lb.leader()) {
            let ms = self.ms();
            self.obs.fault_injected(ms, fault);
            self.lb.inject_transport_fault(fault);
            self.heals.push((i + after, fault));
        }
        self.heal(Some(i));
        self.plan.pause_ms()
    }

    /// Heals the faults due after operation `i`, or all of them.
    pub fn heal(&mut self, i: Option<usize>) {
        let (due, keep): (Vec<_>, Vec<_>) = self
            .heals
            .drain(..)
            .partition(|(at, _)| i.is_none_or(|i| *at <= i));
        self.heals = keep;
        for (_, fault) in due {
            let ms = self.ms();
            self.obs.log(ms, format!("heal {fault:?}"));
            self.lb.heal_transport_fault(fault);
        }
    }

    /// Whether a command, a read or a batch waited for has not ended yet.
    pub fn pending(&self) -> bool {
        !self.commands.is_empty() || !self.reads.is_empty() || !self.batches.is_empty()
    }

    /// Reports every command and read that has not ended as a problem.
    pub fn unended(&mut self) {
        for l in self.commands.keys() {
            self.obs
                .problem(format!("c{l} did not end within its deadline"));
        }
        for l in self.reads.keys() {
            self.obs
                .problem(format!("q{l} did not end within its deadline"));
        }
        for l in self.batches.keys() {
            self.obs
                .problem(format!("b{l} had no outcome within its deadlines"));
        }
    }

    /// Records what `unclaimed` handed out; true once no abandoned command's outcome is
    /// missing.
    pub fn unclaimed(&mut self, got: Vec<CommandResult>) -> bool {
        let ms = self.ms();
        self.obs.unclaimed(ms, got);
        self.obs.missing_unclaimed() == 0
    }

    /// Draws the details of producer or consumer operation `pick` (see
    /// [`nervix_harness::scenario::Draw::Dataplane`]) and tells what it asks of the API:
    /// nothing when the operation needs no call or has nothing to work on.
    pub fn dataplane(&mut self, pick: u64) -> Option<DataCall> {
        let ms = self.ms();
        let producers: Vec<u64> = self.producers.keys().copied().collect();
        let consumers: Vec<u64> = self.consumers.keys().copied().collect();
        let call = match dp::op(pick, producers.len(), consumers.len()) {
            Op::OpenProducer => DataCall::OpenProducer {
                label: self.next_label(),
                draw: dp::producer(self.plan.dataplane_rng()),
            },
            Op::Submit => {
                let producer = producers[dp::pick(self.plan.dataplane_rng(), producers.len())];
                let n = dp::submissions(self.plan.dataplane_rng());
                let batches = (0..n)
                    .map(|_| {
                        let label = self.next_label();
                        let ids = dp::batch_ids(self.plan.dataplane_rng(), &mut self.next_id);
                        (label, ids, self.plan.dataplane_rng().below(5) == 0)
                    })
                    .collect();
                DataCall::Submit { producer, batches }
            }
            Op::CloseProducer => DataCall::CloseProducer {
                label: producers[dp::pick(self.plan.dataplane_rng(), producers.len())],
            },
            Op::OpenConsumer => DataCall::OpenConsumer {
                label: self.next_label(),
            },
            Op::Read => DataCall::Read {
                consumer: consumers[dp::pick(self.plan.dataplane_rng(), consumers.len())],
            },
            Op::Settle => {
                let consumer = consumers[dp::pick(self.plan.dataplane_rng(), consumers.len())];
                let unsettled = self.consumers.get(&consumer).map_or(0, |c| c.1.len());
                if unsettled == 0 {
                    return None;
                }
                let i = dp::pick(self.plan.dataplane_rng(), unsettled);
                let (decision, ends) = dp::decision(self.plan.dataplane_rng());
                let label = self.next_label();
                let (reference, identity) = self
                    .consumers
                    .get_mut(&consumer)
                    .expect("the consumer is open")
                    .1
                    .remove(i);
                self.obs.settle_issued(
                    ms,
                    label,
                    identity,
                    token_number(&reference.reference),
                    &decision,
                    ends,
                );
                DataCall::Settle {
                    consumer,
                    label,
                    reference,
                    decision,
                }
            }
            Op::CloseConsumer => DataCall::CloseConsumer {
                label: consumers[dp::pick(self.plan.dataplane_rng(), consumers.len())],
            },
            _ => return None,
        };
        Some(call)
    }

    /// Records what opening producer `label` as `draw` asked gave.
    pub fn producer_opened(
        &mut self,
        label: u64,
        draw: &ProducerDraw,
        r: Result<H::Producer, impl Display>,
    ) {
        let ms = self.ms();
        match r {
            Ok(p) => {
                self.obs.producer_opened(ms, label, draw, Ok(()));
                self.producers.insert(label, p);
            }
            Err(e) => self
                .obs
                .producer_opened(ms, label, draw, Err(e.to_string())),
        }
    }

    /// Records what submitting batch `label` of `ids` to producer `producer` gave: the
    /// engine's name of the batch and its pending outcome, or the refusal (a submission
    /// dropped while it waited for room among them: it must never be taken). With `drop_wait`
    /// the application stops waiting for the outcome at once.
    pub fn batch_submitted(
        &mut self,
        producer: u64,
        label: u64,
        ids: Vec<u64>,
        drop_wait: bool,
        r: Result<(u64, H::Batch), impl Display>,
    ) {
        let ms = self.ms();
        match r {
            Ok((name, b)) => {
                self.obs.batch_submitted(ms, producer, label, name, ids);
                if drop_wait {
                    self.obs.batch_dropped(ms, label);
                    drop(b);
                } else {
                    self.batches.insert(label, b);
                }
            }
            Err(e) => self.obs.log(
                ms,
                format!("app submit b{label} to p{producer} ids {ids:?} not taken: {e}"),
            ),
        }
    }

    /// Takes producer `label` out of the book, to close it.
    pub fn take_producer(&mut self, label: u64) -> Option<H::Producer> {
        let ms = self.ms();
        self.obs.log(ms, format!("app close p{label}"));
        self.producers.remove(&label)
    }

    /// Logs how closing a producer or consumer (`p{label}`, `e{label}`) ended.
    pub fn closed(&mut self, handle: &str, how: impl std::fmt::Debug) {
        let ms = self.ms();
        self.obs.log(ms, format!("app {handle} closed: {how:?}"));
    }

    /// Records what opening consumer `label` gave.
    pub fn consumer_opened(&mut self, label: u64, r: Result<H::Consumer, impl Display>) {
        let ms = self.ms();
        match r {
            Ok(c) => {
                self.obs.consumer_opened(ms, label, Ok(()));
                self.consumers.insert(label, (c, Vec::new()));
            }
            Err(e) => self.obs.consumer_opened(ms, label, Err(e.to_string())),
        }
    }

    /// The open consumer `label`, to read from or settle with.
    pub fn consumer(&mut self, label: u64) -> Option<&mut H::Consumer> {
        self.consumers.get_mut(&label).map(|c| &mut c.0)
    }

    /// Records what reading a delivery of consumer `consumer` gave: a delivery (checked, and
    /// kept to be settled), nothing within the wait, or the consumer's end.
    pub fn delivered(&mut self, consumer: u64, r: Result<Option<Delivery>, impl Display>) {
        let ms = self.ms();
        match r {
            Ok(Some(d)) => {
                let identity = self.obs.delivered(ms, consumer, &d);
                if let Some(c) = self.consumers.get_mut(&consumer) {
                    c.1.push((d.reference, identity));
                }
            }
            Ok(None) => {
                self.obs.log(ms, format!("app e{consumer} is over"));
                self.consumers.remove(&consumer);
            }
            Err(e) => self.obs.log(ms, format!("app e{consumer} read: {e}")),
        }
    }

    /// Records how settlement `label` ended: the server's answer, a local refusal, or a
    /// wait that ended without either.
    pub fn settle_ended(&mut self, label: u64, r: Result<SettleResult, String>) {
        let ms = self.ms();
        self.obs.settle_ended(ms, label, r);
    }

    /// Records that settlement `label` was refused before anything was sent.
    pub fn settle_refused(&mut self, label: u64, why: impl Display) {
        let ms = self.ms();
        self.obs.settle_refused(ms, label, &why.to_string());
    }

    /// Takes consumer `label` out of the book, to close it.
    pub fn take_consumer(&mut self, label: u64) -> Option<H::Consumer> {
        let ms = self.ms();
        self.obs.log(ms, format!("app close e{label}"));
        self.consumers.remove(&label).map(|c| c.0)
    }

    /// Lets every subscription and the clock go.
    pub fn release(&mut self) {
        self.batches.clear();
        self.producers.clear();
        self.consumers.clear();
        self.subscriptions.clear();
        self.clock = None;
    }

    /// Ends the run: heals every fault left and hands out what the application observed,
    /// with the error that ended the run early, if any.
    pub fn finish(mut self, outcome: Result<(), String>) -> (Observed, Option<String>) {
        self.heal(None);
        (self.obs, outcome.err())
    }
}
