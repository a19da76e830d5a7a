//! The harness's seeded rule scenarios run again through a real transport: the blocking API
//! over the WebSocket console (its only transport) against the loopback cluster on 127.0.0.1.
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
//! observed, faults and the verdict) is [`nervix_loopback::scenario`]; this file holds the
//! calls into the blocking API.

use nervix_blocking::{
    Client, ClockFollow, Config, Consumer, ConsumerSpec, Credentials, Error, PendingBatch,
    PendingCommand, Producer, ProducerSpec, RunResult, Subscription, WsAuth,
};
use nervix_harness::cluster::{emitter_fields, ingestor_fields, EMITTER};
use nervix_harness::scenario::dataplane::batch_names;
use nervix_harness::scenario::{Draw, Observed, Plan};
use nervix_harness::sim::{assert_seeds, seeds_from_env};
use nervix_loopback::scenario::{
    self, read_answer, Book, Call, DataCall, Handles, CALL, CI_SEEDS, DELIVERY_WAIT, OPEN_WAIT,
    SEED_BOUND, SETTLE, SUBMIT_WAIT, UNCLAIMED,
};
use nervix_loopback::Loopback;
use nervix_protocol::client::{BatchOutcome, ClockEvent, CommandResult, SubscriptionEvent};
use nervix_protocol::schema::ClientRequestT;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The transport, as runs and reports name it.
const TRANSPORT: &str = "WebSocket (blocking)";

/// The blocking API's handles. Reads block their caller: each waits on a thread of its own
/// and sends its answer to the receiver the book holds.
struct Blocking;

impl Handles for Blocking {
    type Command = PendingCommand;
    type Read = mpsc::Receiver<String>;
    type Subscription = Subscription;
    type Clock = ClockFollow;
    type Producer = Producer;
    type Batch = PendingBatch;
    type Consumer = Consumer;

    fn command(p: &mut PendingCommand) -> Option<Result<CommandResult, String>> {
        match p.wait_timeout(Duration::ZERO) {
            Ok(r) => Some(Ok(r)),
            Err(Error::TimedOut) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }

    fn read(q: &mut mpsc::Receiver<String>) -> Option<String> {
        q.try_recv().ok()
    }

    fn subscription(s: &mut Subscription) -> Option<Option<SubscriptionEvent>> {
        s.next_timeout(Duration::ZERO).ok()
    }

    fn clock(k: &mut ClockFollow) -> Option<Option<ClockEvent>> {
        k.next_timeout(Duration::ZERO).ok()
    }

    fn batch(b: &mut PendingBatch) -> Option<Result<BatchOutcome, String>> {
        match b.wait(Duration::ZERO) {
            Ok(o) => Some(Ok(o)),
            Err(Error::TimedOut) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }
}

/// One run: the client, and the book of what it holds and what its application observed.
struct Run {
    client: Client,
    book: Book<Blocking>,
}

impl Run {
    fn submit(&mut self, query: &str, append: bool) {
        let label = self.book.next_label();
        let ms = self.book.ms();
        let r = self
            .client
            .submit(query)
            .map(|p| (p.reference().to_string(), p));
        self.book.submitted(ms, label, query, append, r);
    }

    fn read(&mut self, statement: Option<&str>) {
        let label = self.book.next_label();
        let client = self.client.clone();
        let (tx, rx) = mpsc::channel();
        let statement = statement.map(str::to_string);
        let ms = self.book.ms();
        self.book.read_issued(ms, label, rx);
        std::thread::spawn(move || {
            let r = match statement {
                None => client.read(ClientRequestT::ListDomainsRequest(Box::default()), None),
                Some(s) => match client.run(&s) {
                    Ok(RunResult::Read(r)) => Ok(r),
                    Ok(other) => Err(Error::Unsupported(format!("{other:?}"))),
                    Err(e) => Err(e),
                },
            };
            let _ = tx.send(read_answer(&r));
        });
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
                let r = self.client.run(text);
                self.book.log(ms, format!("app run {text:?}: {r:?}"));
            }
            Some(Call::FollowClock { label }) => {
                let r = self.client.follow_clock("tenant");
                self.book.clock_followed(ms, label, r);
            }
            Some(Call::Subscribe { label, relay }) => {
                let r = self.client.subscribe(text);
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
                let r = self.client.producer(spec);
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
                    let r = p
                        .submit_timeout(b, SUBMIT_WAIT)
                        .map(|b| (b.id().0, b))
                        .map_err(|e| e.to_string());
                    self.book
                        .batch_submitted(producer, label, ids, drop_wait, r);
                }
            }
            DataCall::CloseProducer { label } => {
                if let Some(p) = self.book.take_producer(label) {
                    let r = p.close(OPEN_WAIT);
                    self.book.closed(&format!("p{label}"), r);
                }
            }
            DataCall::OpenConsumer { label } => {
                let spec = ConsumerSpec::new("tenant", EMITTER, emitter_fields())
                    .with_limits(4, 1024 * 1024);
                let r = self.client.consumer(spec);
                self.book.consumer_opened(label, r);
            }
            DataCall::Read { consumer } => {
                if let Some(c) = self.book.consumer(consumer) {
                    let r = c.next_delivery(DELIVERY_WAIT);
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
                    match c.settle(reference, decision) {
                        Ok(r) => self.book.settle_ended(label, Ok(r)),
                        Err(e @ Error::Settle(_)) => self.book.settle_refused(label, e),
                        Err(e) => self.book.settle_ended(label, Err(e.to_string())),
                    }
                }
            }
            DataCall::CloseConsumer { label } => {
                if let Some(c) = self.book.take_consumer(label) {
                    let r = c.close(OPEN_WAIT);
                    self.book.closed(&format!("e{label}"), r);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn operate(&mut self, i: usize) -> Result<(), String> {
        let holding = self
            .client
            .binding()
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
            // The blocking API has no call that repeats an uncertain command.
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
                .client
                .unclaimed()
                .map_err(|e| format!("unclaimed: {e}"))?;
            if self.book.unclaimed(got) || Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.book.release();
        let _ = self.client.clone().close(true);
        Ok(())
    }
}

fn config(lb: &Loopback) -> Config {
    let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
    let mut c = Config::new(&seeds, Credentials::new("nervix", "nervix"))
        .expect("loopback endpoints are valid")
        .with_timeouts(CALL, Duration::from_secs(1));
    c.auth = WsAuth::Header;
    c.client.backoff_initial = Duration::from_millis(20);
    c.client.backoff_max = Duration::from_millis(300);
    c
}

fn run_scenario(lb: Arc<Loopback>, plan: Plan) -> (Observed, Option<String>) {
    let client = match Client::start(config(&lb)) {
        Ok(c) => c,
        Err(e) => return scenario::not_started(e),
    };
    let mut run = Run {
        client,
        book: Book::new(lb, plan),
    };
    let outcome = (|| {
        run.client
            .select_domain(Some("tenant"))
            .map_err(|e| format!("select_domain: {e}"))?;
        for i in 0..run.book.plan.operations {
            run.operate(i)?;
        }
        run.settle()
    })();
    run.book.finish(outcome)
}

/// Runs one seed and checks it; the error is the failure report.
fn run_seed(seed: u64) -> Result<String, String> {
    let (plan, lb) = scenario::start(seed)?;
    let (tx, rx) = mpsc::channel();
    let serving = lb.clone();
    std::thread::spawn(move || {
        let _ = tx.send(run_scenario(serving, plan));
    });
    let (obs, error) = rx
        .recv_timeout(SEED_BOUND)
        .unwrap_or_else(|_| scenario::overran());
    scenario::verdict(seed, TRANSPORT, &lb, &obs, error)
}

#[test]
fn c_4_seeded_scenarios_end_every_request_once_over_real_websocket_blocking() {
    assert_seeds(seeds_from_env(CI_SEEDS), |seed| {
        let summary = run_seed(seed)?;
        eprintln!("seed {seed} over {TRANSPORT}: {summary}");
        Ok(())
    });
}
