//! The harness's seeded rule scenarios run again through the real transports: the async API
//! over gRPC and over the WebSocket console against the loopback cluster on 127.0.0.1.
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
//! run more (`just soak-transports`). A failure names its seed and prints both traces. Every
//! wait is bounded; only 127.0.0.1 is used.
//!
//! What does not depend on the driver (the plan, the book of what the application holds and
//! observed, faults and the verdict) is [`nervix_loopback::scenario`]; this file holds the
//! calls into the async API.

use futures_util::{FutureExt, StreamExt};
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
use nervix_tokio::{
    Client, ClockFollow, Config, Consumer, ConsumerSpec, Credentials, Error, PendingBatch,
    PendingCommand, Producer, ProducerSpec, ReadResult, RunResult, Subscription, Transport, WsAuth,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest any single call of the API may take to answer.
const QUICK: Duration = Duration::from_secs(5);

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The async API's handles, polled once without waiting.
struct Async;

impl Handles for Async {
    type Command = PendingCommand;
    type Read = Boxed<Result<ReadResult, Error>>;
    type Subscription = Subscription;
    type Clock = ClockFollow;
    type Producer = Producer;
    type Batch = PendingBatch;
    type Consumer = Consumer;

    fn command(p: &mut PendingCommand) -> Option<Result<CommandResult, String>> {
        p.now_or_never().map(|r| r.map_err(|e| e.to_string()))
    }

    fn read(q: &mut Self::Read) -> Option<String> {
        q.as_mut().now_or_never().map(|r| read_answer(&r))
    }

    fn subscription(s: &mut Subscription) -> Option<Option<SubscriptionEvent>> {
        s.next().now_or_never()
    }

    fn clock(k: &mut ClockFollow) -> Option<Option<ClockEvent>> {
        k.next().now_or_never()
    }

    fn batch(b: &mut PendingBatch) -> Option<Result<BatchOutcome, String>> {
        b.now_or_never().map(|r| r.map_err(|e| e.to_string()))
    }
}

/// One run: the client, and the book of what it holds and what its application observed.
struct Run {
    client: Client,
    book: Book<Async>,
}

async fn quick<T>(what: &str, f: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(QUICK, f)
        .await
        .map_err(|_| format!("{what} did not answer within {QUICK:?}"))
}

impl Run {
    async fn submit(&mut self, query: &str, append: bool) -> Result<(), String> {
        let label = self.book.next_label();
        let r = quick("submit", self.client.submit(query))
            .await?
            .map(|p| (p.reference().to_string(), p));
        let ms = self.book.ms();
        self.book.submitted(ms, label, query, append, r);
        Ok(())
    }

    fn read(&mut self, statement: Option<&str>) {
        let label = self.book.next_label();
        let client = self.client.clone();
        let fut: Boxed<Result<ReadResult, Error>> = match statement {
            None => Box::pin(async move {
                client
                    .read(ClientRequestT::ListDomainsRequest(Box::default()), None)
                    .await
            }),
            Some(s) => {
                let s = s.to_string();
                Box::pin(async move {
                    match client.run(&s).await? {
                        RunResult::Read(r) => Ok(r),
                        other => Err(Error::Unsupported(format!("{other:?}"))),
                    }
                })
            }
        };
        let ms = self.book.ms();
        self.book.read_issued(ms, label, fut);
    }

    /// Waits `ms` milliseconds, taking what comes meanwhile.
    async fn pause(&mut self, ms: u64) {
        let until = Instant::now() + Duration::from_millis(ms);
        loop {
            self.book.poll();
            let now = Instant::now();
            if now >= until {
                break;
            }
            tokio::time::sleep((until - now).min(Duration::from_millis(10))).await;
        }
    }

    async fn statement(&mut self, slot: u64, text: &str) -> Result<(), String> {
        let ms = self.book.ms();
        match self.book.statement(ms, slot, text) {
            Some(Call::Read) => self.read(Some(text)),
            Some(Call::Run) => {
                let r = quick("run", self.client.run(text)).await?;
                self.book.log(ms, format!("app run {text:?}: {r:?}"));
            }
            Some(Call::FollowClock { label }) => {
                let r = quick("follow_clock", self.client.follow_clock("tenant")).await?;
                self.book.clock_followed(ms, label, r);
            }
            Some(Call::Subscribe { label, relay }) => {
                let r = quick("subscribe", self.client.subscribe(text)).await?;
                self.book.subscribed(ms, slot, label, &relay, text, r);
            }
            _ => {}
        }
        Ok(())
    }

    /// One producer or consumer operation, drawn by the book.
    async fn dataplane(&mut self, pick: u64) -> Result<(), String> {
        let Some(call) = self.book.dataplane(pick) else {
            return Ok(());
        };
        match call {
            DataCall::OpenProducer { label, draw } => {
                let spec = ProducerSpec::new("tenant", draw.ingestor, ingestor_fields())
                    .with_credit(draw.batches, draw.bytes);
                let r = tokio::time::timeout(OPEN_WAIT, self.client.producer(spec))
                    .await
                    .unwrap_or_else(|_| {
                        Err(Error::Unsupported(format!(
                            "no answer within {OPEN_WAIT:?}"
                        )))
                    });
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
                    let r = match tokio::time::timeout(SUBMIT_WAIT, p.submit(b)).await {
                        Ok(r) => r.map(|b| (b.id().0, b)).map_err(|e| e.to_string()),
                        Err(_) => Err(format!("dropped after waiting {SUBMIT_WAIT:?} for room")),
                    };
                    self.book
                        .batch_submitted(producer, label, ids, drop_wait, r);
                }
            }
            DataCall::CloseProducer { label } => {
                if let Some(p) = self.book.take_producer(label) {
                    let r = tokio::time::timeout(OPEN_WAIT, p.close()).await;
                    self.book.closed(&format!("p{label}"), r);
                }
            }
            DataCall::OpenConsumer { label } => {
                let spec = ConsumerSpec::new("tenant", EMITTER, emitter_fields())
                    .with_limits(4, 1024 * 1024);
                let r = tokio::time::timeout(OPEN_WAIT, self.client.consumer(spec))
                    .await
                    .unwrap_or_else(|_| {
                        Err(Error::Unsupported(format!(
                            "no answer within {OPEN_WAIT:?}"
                        )))
                    });
                self.book.consumer_opened(label, r);
            }
            DataCall::Read { consumer } => {
                if let Some(c) = self.book.consumer(consumer) {
                    let r = tokio::time::timeout(DELIVERY_WAIT, c.next_delivery())
                        .await
                        .map_err(|_| format!("nothing within {DELIVERY_WAIT:?}"));
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
                    match tokio::time::timeout(QUICK, c.settle(reference, decision)).await {
                        Ok(Ok(r)) => self.book.settle_ended(label, Ok(r)),
                        Ok(Err(e @ Error::Settle(_))) => self.book.settle_refused(label, e),
                        Ok(Err(e)) => self.book.settle_ended(label, Err(e.to_string())),
                        Err(_) => self
                            .book
                            .settle_ended(label, Err(format!("no answer within {QUICK:?}"))),
                    }
                }
            }
            DataCall::CloseConsumer { label } => {
                if let Some(c) = self.book.take_consumer(label) {
                    let r = tokio::time::timeout(OPEN_WAIT, c.close()).await;
                    self.book.closed(&format!("e{label}"), r);
                }
            }
            _ => {}
        }
        Ok(())
    }

    async fn operate(&mut self, i: usize) -> Result<(), String> {
        let holding = quick("binding", self.client.binding())
            .await?
            .map_err(|e| format!("binding: {e}"))?
            .is_holding();
        match self.book.plan.next(holding) {
            Draw::Command(text) => self.submit(&text, holding).await?,
            Draw::Read => self.read(None),
            Draw::Begin if self.book.commands.is_empty() => self.submit("BEGIN;", false).await?,
            Draw::Append(text) => self.submit(&text, true).await?,
            Draw::Commit => self.submit("COMMIT;", false).await?,
            Draw::Revert => self.submit("REVERT;", false).await?,
            Draw::Cancel => self.book.abandon(),
            Draw::Statement { slot, text } => self.statement(slot, &text).await?,
            Draw::Dataplane(pick) => self.dataplane(pick).await?,
            // The async API has no call that repeats an uncertain command.
            _ => {}
        }
        if let Some(pick) = self.book.plan.dataplane() {
            self.dataplane(pick).await?;
        }
        let pause = self.book.after_operation(i);
        self.pause(pause).await;
        Ok(())
    }

    /// After the operations: heals every fault, waits for every command and read to end
    /// (each within its deadline), and for the outcomes of abandoned commands.
    async fn settle(&mut self) -> Result<(), String> {
        self.book.heal(None);
        let until = Instant::now() + SETTLE;
        while self.book.pending() && Instant::now() < until {
            self.pause(20).await;
        }
        self.book.unended();
        self.pause(100).await;
        let until = Instant::now() + UNCLAIMED;
        loop {
            let got = quick("unclaimed", self.client.unclaimed())
                .await?
                .map_err(|e| format!("unclaimed: {e}"))?;
            if self.book.unclaimed(got) || Instant::now() >= until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.book.release();
        let _ = quick("close", self.client.clone().close(true)).await;
        Ok(())
    }
}

fn config(lb: &Loopback, transport: Transport) -> Config {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let mut c = Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)
        .expect("loopback endpoints are valid")
        .with_timeouts(CALL, Duration::from_secs(1));
    c.client.backoff_initial = Duration::from_millis(20);
    c.client.backoff_max = Duration::from_millis(300);
    c
}

async fn run_scenario(
    lb: Arc<Loopback>,
    plan: Plan,
    transport: Transport,
) -> (Observed, Option<String>) {
    let client = match Client::start(config(&lb, transport)) {
        Ok(c) => c,
        Err(e) => return scenario::not_started(e),
    };
    let mut run = Run {
        client,
        book: Book::new(lb, plan),
    };
    let outcome = async {
        quick("select_domain", run.client.select_domain(Some("tenant")))
            .await?
            .map_err(|e| format!("select_domain: {e}"))?;
        for i in 0..run.book.plan.operations {
            run.operate(i).await?;
        }
        run.settle().await
    }
    .await;
    run.book.finish(outcome)
}

/// Runs one seed over `transport` and checks it; the error is the failure report.
fn run_seed(seed: u64, transport: Transport) -> Result<String, String> {
    let (plan, lb) = scenario::start(seed)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let name = format!("{transport:?}");
    let serving = lb.clone();
    let result = rt.block_on(async {
        tokio::time::timeout(SEED_BOUND, run_scenario(serving, plan, transport)).await
    });
    drop(rt);
    let (obs, error) = result.unwrap_or_else(|_| scenario::overran());
    scenario::verdict(seed, &name, &lb, &obs, error)
}

fn run_all(transport: Transport) {
    assert_seeds(seeds_from_env(CI_SEEDS), |seed| {
        let summary = run_seed(seed, transport)?;
        eprintln!("seed {seed} over {transport:?}: {summary}");
        Ok(())
    });
}

#[test]
fn c_4_seeded_scenarios_end_every_request_once_over_real_grpc() {
    run_all(Transport::Grpc);
}

#[test]
fn c_4_seeded_scenarios_end_every_request_once_over_real_websocket() {
    run_all(Transport::WebSocket(WsAuth::Header));
}
