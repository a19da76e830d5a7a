//! The harness's seeded rule scenarios run again through the real transports against the
//! loopback cluster on 127.0.0.1, through either driver's API.
//!
//! Each seed draws the simulation's operations ([`nervix_harness::scenario::draw`]: commands,
//! reads, transactions, abandoned waits, subscriptions, clocks, producers and consumers, with
//! a producer or consumer operation drawn besides most operations) with the simulation's
//! cluster faults for that seed, and injects transport faults at seeded points: a node killed
//! while calls are in flight, streams cut, a leader change, a slow reader. Producers are
//! opened with the credit the simulation draws (down to one batch, so submissions wait for
//! room, and are dropped when none comes), batches submitted, and some outcome waits dropped;
//! consumers read deliveries and settle them with Ack, Retry or Reject. What the application
//! saw is checked against the cluster's own record ([`Observed::check`]): every command ends
//! exactly once (an abandoned one through `unclaimed`) consistently with what the cluster
//! applied under its reference, every read ends once, each subscription generation reads
//! exactly a prefix of what the cluster sent with its drops reported as gaps in place; every
//! batch waited for ends with exactly one outcome, the cluster ingested a completed batch
//! exactly once, a batch never sent or not admitted never and any other at most once, and
//! nothing nobody submitted; every delivery holds exactly the rows the emitter wrote for it;
//! every settlement ends once, and no attempt or delivery is confirmed settled twice.
//!
//! CI runs a few seeds; `NERVIX_SEED=n` replays one, `NERVIX_SEEDS` and `NERVIX_SEED_BASE`
//! run more (`just soak-transports`), `NERVIX_TRACE=1` prints every seed's trace. A failure
//! names its seed and prints both traces. Every wait is bounded; only 127.0.0.1 is used.
//!
//! What does not depend on the driver (the plan, the book of what the application holds and
//! observed, faults and the verdict) is [`nervix_loopback::scenario`]; the run here makes the
//! calls through [`Driver`], and [`Seeded`] says how each driver's handles are polled.

use crate::{seeds_of, Blocking, Driver, Error, Tokio, Via};
use futures_util::{FutureExt, StreamExt};
use nervix_driver_support::api::RunResult;
use nervix_driver_support::credentials::Credentials;
use nervix_harness::cluster::{emitter_fields, ingestor_fields, EMITTER};
use nervix_harness::scenario::dataplane::batch_names;
use nervix_harness::scenario::{Draw, Observed, Plan};
use nervix_harness::sim::{assert_seeds, seeds_from_env};
use nervix_loopback::scenario::{
    self, read_answer, Book, Call, DataCall, Handles, CALL, CI_SEEDS, DELIVERY_WAIT, OPEN_WAIT,
    SEED_BOUND, SETTLE, SUBMIT_WAIT, UNCLAIMED,
};
use nervix_loopback::Loopback;
use nervix_protocol::client::{
    BatchOutcome, ClockEvent, CommandResult, ConsumerSpec, ProducerSpec, ReadResult,
    SubscriptionEvent,
};
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::transaction::Binding;
use std::future::Future;
use std::pin::Pin;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// A driver whose handles the book can poll without waiting.
pub trait Seeded:
    Driver
    + Handles<
        Command = <Self as Driver>::Pending,
        Subscription = <Self as Driver>::Subscription,
        Clock = <Self as Driver>::Clock,
        Producer = <Self as Driver>::Producer,
        Batch = <Self as Driver>::Batch,
        Consumer = <Self as Driver>::Consumer,
    >
{
    /// A read issued: the list of domains, or `statement` run as a read.
    fn read(&self, client: &Self::Client, statement: Option<&str>) -> <Self as Handles>::Read;
    /// The session's binding.
    fn binding(&self, client: &Self::Client) -> Result<Binding, Error>;
    /// A producer opened, or an error when no answer came within [`OPEN_WAIT`].
    fn open_producer(
        &self,
        client: &Self::Client,
        spec: ProducerSpec,
    ) -> Result<<Self as Driver>::Producer, Error>;
    /// A consumer opened, or an error when no answer came within [`OPEN_WAIT`].
    fn open_consumer(
        &self,
        client: &Self::Client,
        spec: ConsumerSpec,
    ) -> Result<<Self as Driver>::Consumer, Error>;
    /// Runs `f` where the driver's handles can be polled.
    fn polling<T>(&self, f: impl FnOnce() -> T) -> T;
}

/// A read through `run`, refused when it is not a read.
fn as_read(r: Result<RunResult, Error>) -> Result<ReadResult, Error> {
    match r? {
        RunResult::Read(r) => Ok(r),
        other => Err(Error::Unsupported(format!("{other:?}"))),
    }
}

fn no_answer<T>() -> Result<T, Error> {
    Err(Error::Unsupported(format!(
        "no answer within {OPEN_WAIT:?}"
    )))
}

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The async API's handles, polled once without waiting.
impl Handles for Tokio {
    type Command = nervix_tokio::PendingCommand;
    type Read = Boxed<Result<ReadResult, Error>>;
    type Subscription = nervix_tokio::Subscription;
    type Clock = nervix_tokio::ClockFollow;
    type Producer = nervix_tokio::Producer;
    type Batch = nervix_tokio::PendingBatch;
    type Consumer = nervix_tokio::Consumer;

    fn command(p: &mut Self::Command) -> Option<Result<CommandResult, String>> {
        p.now_or_never().map(|r| r.map_err(|e| e.to_string()))
    }

    fn read(q: &mut Self::Read) -> Option<String> {
        q.as_mut().now_or_never().map(|r| read_answer(&r))
    }

    fn subscription(s: &mut Self::Subscription) -> Option<Option<SubscriptionEvent>> {
        s.next().now_or_never()
    }

    fn clock(k: &mut Self::Clock) -> Option<Option<ClockEvent>> {
        k.next().now_or_never()
    }

    fn batch(b: &mut Self::Batch) -> Option<Result<BatchOutcome, String>> {
        b.now_or_never().map(|r| r.map_err(|e| e.to_string()))
    }
}

impl Seeded for Tokio {
    fn read(&self, client: &nervix_tokio::Client, statement: Option<&str>) -> Self::Read {
        let client = client.clone();
        match statement {
            None => Box::pin(async move {
                client
                    .read(ClientRequestT::ListDomainsRequest(Box::default()), None)
                    .await
            }),
            Some(s) => {
                let s = s.to_string();
                Box::pin(async move { as_read(client.run(&s).await) })
            }
        }
    }

    fn binding(&self, client: &nervix_tokio::Client) -> Result<Binding, Error> {
        self.block(client.binding())
    }

    fn open_producer(
        &self,
        client: &nervix_tokio::Client,
        spec: ProducerSpec,
    ) -> Result<nervix_tokio::Producer, Error> {
        self.block(async {
            tokio::time::timeout(OPEN_WAIT, client.producer(spec))
                .await
                .unwrap_or_else(|_| no_answer())
        })
    }

    fn open_consumer(
        &self,
        client: &nervix_tokio::Client,
        spec: ConsumerSpec,
    ) -> Result<nervix_tokio::Consumer, Error> {
        self.block(async {
            tokio::time::timeout(OPEN_WAIT, client.consumer(spec))
                .await
                .unwrap_or_else(|_| no_answer())
        })
    }

    fn polling<T>(&self, f: impl FnOnce() -> T) -> T {
        let _in = self.runtime().enter();
        f()
    }
}

/// The blocking API's handles. Reads block their caller: each waits on a thread of its own
/// and sends its answer to the receiver the book holds.
impl Handles for Blocking {
    type Command = nervix_blocking::PendingCommand;
    type Read = mpsc::Receiver<String>;
    type Subscription = nervix_blocking::Subscription;
    type Clock = nervix_blocking::ClockFollow;
    type Producer = nervix_blocking::Producer;
    type Batch = nervix_blocking::PendingBatch;
    type Consumer = nervix_blocking::Consumer;

    fn command(p: &mut Self::Command) -> Option<Result<CommandResult, String>> {
        match p.wait_timeout(Duration::ZERO) {
            Ok(r) => Some(Ok(r)),
            Err(Error::TimedOut) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }

    fn read(q: &mut Self::Read) -> Option<String> {
        q.try_recv().ok()
    }

    fn subscription(s: &mut Self::Subscription) -> Option<Option<SubscriptionEvent>> {
        s.next_timeout(Duration::ZERO).ok()
    }

    fn clock(k: &mut Self::Clock) -> Option<Option<ClockEvent>> {
        k.next_timeout(Duration::ZERO).ok()
    }

    fn batch(b: &mut Self::Batch) -> Option<Result<BatchOutcome, String>> {
        match b.wait(Duration::ZERO) {
            Ok(o) => Some(Ok(o)),
            Err(Error::TimedOut) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }
}

impl Seeded for Blocking {
    fn read(&self, client: &nervix_blocking::Client, statement: Option<&str>) -> Self::Read {
        let client = client.clone();
        let (tx, rx) = mpsc::channel();
        let statement = statement.map(str::to_string);
        std::thread::spawn(move || {
            let r = match statement {
                None => client.read(ClientRequestT::ListDomainsRequest(Box::default()), None),
                Some(s) => as_read(client.run(&s)),
            };
            let _ = tx.send(read_answer(&r));
        });
        rx
    }

    fn binding(&self, client: &nervix_blocking::Client) -> Result<Binding, Error> {
        client.binding()
    }

    fn open_producer(
        &self,
        client: &nervix_blocking::Client,
        spec: ProducerSpec,
    ) -> Result<nervix_blocking::Producer, Error> {
        client.producer(spec)
    }

    fn open_consumer(
        &self,
        client: &nervix_blocking::Client,
        spec: ConsumerSpec,
    ) -> Result<nervix_blocking::Consumer, Error> {
        client.consumer(spec)
    }

    fn polling<T>(&self, f: impl FnOnce() -> T) -> T {
        f()
    }
}

/// One run: the driver, its client, and the book of what it holds and what its application
/// observed.
struct Run<'a, D: Seeded> {
    d: &'a D,
    client: D::Client,
    book: Book<D>,
}

impl<D: Seeded> Run<'_, D> {
    fn submit(&mut self, query: &str, append: bool) {
        let label = self.book.next_label();
        let ms = self.book.ms();
        let r = self
            .d
            .submit(&self.client, query)
            .map(|p| (D::reference(&p), p));
        self.book.submitted(ms, label, query, append, r);
    }

    fn read(&mut self, statement: Option<&str>) {
        let label = self.book.next_label();
        let ms = self.book.ms();
        let q = Seeded::read(self.d, &self.client, statement);
        self.book.read_issued(ms, label, q);
    }

    /// Waits `ms` milliseconds, taking what comes meanwhile.
    fn pause(&mut self, ms: u64) {
        let until = Instant::now() + Duration::from_millis(ms);
        loop {
            self.book.poll();
            let now = Instant::now();
            if now >= until {
                break;
            }
            std::thread::sleep((until - now).min(Duration::from_millis(10)));
        }
    }

    fn statement(&mut self, slot: u64, text: &str) {
        let ms = self.book.ms();
        match self.book.statement(ms, slot, text) {
            Some(Call::Read) => self.read(Some(text)),
            Some(Call::Run) => {
                let r = self.d.run(&self.client, text);
                self.book.log(ms, format!("app run {text:?}: {r:?}"));
            }
            Some(Call::FollowClock { label }) => {
                let r = self.d.follow_clock(&self.client, "tenant");
                self.book.clock_followed(ms, label, r);
            }
            Some(Call::Subscribe { label, relay }) => {
                let r = self.d.subscribe(&self.client, text);
                self.book.subscribed(ms, slot, label, &relay, text, r);
            }
            _ => {}
        }
    }

    /// One producer or consumer operation, drawn by the book.
    fn dataplane(&mut self, pick: u64) -> Result<(), String> {
        let Some(call) = self.book.dataplane(pick) else {
            return Ok(());
        };
        match call {
            DataCall::OpenProducer { label, draw } => {
                let spec = ProducerSpec::new("tenant", draw.ingestor, ingestor_fields())
                    .with_credit(draw.batches, draw.bytes);
                let r = self.d.open_producer(&self.client, spec);
                self.book.producer_opened(label, &draw, r);
            }
            DataCall::Submit { producer, batches } => {
                for (label, ids, drop_wait) in batches {
                    let Some(p) = self.book.producers.get(&producer) else {
                        break;
                    };
                    let mut b = p.batch_builder();
                    b.column("id", &ids)
                        .and_then(|_| b.nullable_column("name", &batch_names(&ids)))
                        .map_err(|e| format!("a batch of the producer's own fields: {e}"))?;
                    // Credit full: the submission waits for room, and is dropped after a while.
                    let r = match self.d.submit_batch_timeout(p, b.into(), SUBMIT_WAIT) {
                        Ok(b) => Ok((D::batch_id(&b).0, b)),
                        Err(Error::TimedOut) => {
                            Err(format!("dropped after waiting {SUBMIT_WAIT:?} for room"))
                        }
                        Err(e) => Err(e.to_string()),
                    };
                    self.book
                        .batch_submitted(producer, label, ids, drop_wait, r);
                }
            }
            DataCall::CloseProducer { label } => {
                if let Some(p) = self.book.take_producer(label) {
                    let r = self.d.close_producer(p, OPEN_WAIT);
                    self.book.closed(&format!("p{label}"), r);
                }
            }
            DataCall::OpenConsumer { label } => {
                let spec = ConsumerSpec::new("tenant", EMITTER, emitter_fields())
                    .with_limits(4, 1024 * 1024);
                let r = self.d.open_consumer(&self.client, spec);
                self.book.consumer_opened(label, r);
            }
            DataCall::Read { consumer } => {
                if let Some(c) = self.book.consumer(consumer) {
                    let r = self.d.next_delivery(c, DELIVERY_WAIT);
                    self.book.delivered(consumer, r);
                }
            }
            DataCall::Settle {
                consumer,
                label,
                reference,
                decision,
            } => {
                if let Some(c) = self.book.consumer(consumer) {
                    match self.d.settle(c, reference, decision) {
                        Ok(r) => self.book.settle_ended(label, Ok(r)),
                        Err(e @ Error::Settle(_)) => self.book.settle_refused(label, e),
                        Err(e) => self.book.settle_ended(label, Err(e.to_string())),
                    }
                }
            }
            DataCall::CloseConsumer { label } => {
                if let Some(c) = self.book.take_consumer(label) {
                    let r = self.d.close_consumer(c, OPEN_WAIT);
                    self.book.closed(&format!("e{label}"), r);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn operate(&mut self, i: usize) -> Result<(), String> {
        let holding = self
            .d
            .binding(&self.client)
            .map_err(|e| format!("binding: {e}"))?
            .is_holding();
        match self.book.plan.next(holding) {
            Draw::Command(text) => self.submit(&text, holding),
            Draw::Read => self.read(None),
            Draw::Begin if self.book.commands.is_empty() => self.submit("BEGIN;", false),
            Draw::Append(text) => self.submit(&text, true),
            Draw::Commit => self.submit("COMMIT;", false),
            Draw::Revert => self.submit("REVERT;", false),
            Draw::Cancel => self.book.abandon(),
            Draw::Statement { slot, text } => self.statement(slot, &text),
            Draw::Dataplane(pick) => self.dataplane(pick)?,
            // The run makes no call that repeats an uncertain command.
            _ => {}
        }
        if let Some(pick) = self.book.plan.dataplane() {
            self.dataplane(pick)?;
        }
        let pause = self.book.after_operation(i);
        self.pause(pause);
        Ok(())
    }

    /// After the operations: heals every fault, waits for every command and read to end
    /// (each within its deadline), and for the outcomes of abandoned commands.
    fn settle(&mut self) -> Result<(), String> {
        self.book.heal(None);
        let until = Instant::now() + SETTLE;
        while self.book.pending() && Instant::now() < until {
            self.pause(20);
        }
        self.book.unended();
        self.pause(100);
        let until = Instant::now() + UNCLAIMED;
        loop {
            let got = self
                .d
                .unclaimed(&self.client)
                .map_err(|e| format!("unclaimed: {e}"))?;
            if self.book.unclaimed(got) || Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.book.release();
        Ok(())
    }
}

fn config<D: Driver>(lb: &Loopback, via: Via) -> D::Config {
    let mut c = crate::config_of::<D>(
        &seeds_of(lb, via),
        Credentials::new("nervix", "nervix"),
        via,
        CALL,
        Duration::from_secs(1),
    );
    D::client_config(&mut c).backoff_initial = Duration::from_millis(20);
    D::client_config(&mut c).backoff_max = Duration::from_millis(300);
    c
}

fn run_scenario<D: Seeded>(lb: Arc<Loopback>, plan: Plan, via: Via) -> (Observed, Option<String>) {
    let d = D::new();
    let client = match d.start(config::<D>(&lb, via)) {
        Ok(c) => c,
        Err(e) => return scenario::not_started(e),
    };
    let mut run = Run {
        d: &d,
        client,
        book: Book::new(lb, plan),
    };
    let outcome = d.polling(|| {
        d.select_domain(&run.client, Some("tenant"))
            .map_err(|e| format!("select_domain: {e}"))?;
        for i in 0..run.book.plan.operations {
            run.operate(i)?;
        }
        run.settle()
    });
    let Run { client, book, .. } = run;
    let _ = d.close(client, true);
    book.finish(outcome)
}

/// Runs one seed over `via` on a thread of its own and checks it; the error is the failure
/// report naming the seed.
fn run_seed<D: Seeded>(seed: u64, via: Via, name: &str) -> Result<String, String> {
    let (plan, lb) = scenario::start(seed)?;
    let (tx, rx) = mpsc::channel();
    let serving = lb.clone();
    std::thread::spawn(move || {
        let _ = tx.send(run_scenario::<D>(serving, plan, via));
    });
    let (obs, error) = rx
        .recv_timeout(SEED_BOUND)
        .unwrap_or_else(|_| scenario::overran());
    scenario::verdict(seed, name, &lb, &obs, error)
}

/// C-4: the seeds from the environment (or CI's few) over `via`, each checked, named `name`
/// in the reports.
pub fn c_4_seeded<D: Seeded>(via: Via, name: &str) {
    assert_seeds(seeds_from_env(CI_SEEDS), |seed| {
        let summary = run_seed::<D>(seed, via, name)?;
        eprintln!("seed {seed} over {name}: {summary}");
        Ok(())
    });
}

/// Tests of `tests/scenarios.rs`, for `tokio` or `blocking`.
#[macro_export]
macro_rules! scenarios_tests {
    (tokio) => {
        #[test]
        fn c_4_seeded_scenarios_end_every_request_once_over_real_grpc() {
            $crate::scenarios::c_4_seeded::<$crate::Tokio>($crate::Via::Grpc, "Grpc")
        }
        #[test]
        fn c_4_seeded_scenarios_end_every_request_once_over_real_websocket() {
            $crate::scenarios::c_4_seeded::<$crate::Tokio>(
                $crate::Via::Console($crate::WsAuth::Header),
                "WebSocket(Header)",
            )
        }
    };
    (blocking) => {
        #[test]
        fn c_4_seeded_scenarios_end_every_request_once_over_real_websocket_blocking() {
            $crate::scenarios::c_4_seeded::<$crate::Blocking>(
                $crate::Via::Console($crate::WsAuth::Header),
                "WebSocket (blocking)",
            )
        }
    };
}
