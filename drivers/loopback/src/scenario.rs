//! The part of a seeded scenario over real transports that no driver owns: the loopback a
//! seed's [`Plan`] asks for, the book of what the application holds and observed, the
//! transport faults injected and healed at seeded points, and the verdict on a run.
//!
//! A driver's scenario test keeps only the calls into its own API: it submits, reads,
//! subscribes and follows clocks, and tells the [`Book`] through [`Handles`] how to see,
//! without waiting, whether a handle it holds has something. The same seed then draws the same
//! operations and faults, and the run is checked against the same invariants
//! ([`Observed::check`]), whatever the driver and runtime.

use crate::{Loopback, LoopbackConfig};
use nervix_harness::scenario::{Observed, Plan, TransportFault};
use nervix_protocol::client::{ClockEvent, CommandResult, ReadResult, SubscriptionEvent};
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

    /// The command's result when it has one: `Err` when its wait ended without one.
    fn command(c: &mut Self::Command) -> Option<Result<CommandResult, String>>;
    /// The read's answer (see [`read_answer`]) when it has one.
    fn read(q: &mut Self::Read) -> Option<String>;
    /// The subscription's next event when one is ready: `Some(None)` when it ended.
    fn subscription(s: &mut Self::Subscription) -> Option<Option<SubscriptionEvent>>;
    /// The clock's next event when one is ready: `Some(None)` when it ended.
    fn clock(k: &mut Self::Clock) -> Option<Option<ClockEvent>>;
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

    /// Whether a command or a read has not ended yet.
    pub fn pending(&self) -> bool {
        !self.commands.is_empty() || !self.reads.is_empty()
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
    }

    /// Records what `unclaimed` handed out; true once no abandoned command's outcome is
    /// missing.
    pub fn unclaimed(&mut self, got: Vec<CommandResult>) -> bool {
        let ms = self.ms();
        self.obs.unclaimed(ms, got);
        self.obs.missing_unclaimed() == 0
    }

    /// Lets every subscription and the clock go.
    pub fn release(&mut self) {
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
