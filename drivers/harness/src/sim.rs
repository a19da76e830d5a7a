//! Deterministic simulation: a [`Client`] talks to a [`SimCluster`] over a simulated network,
//! driven by a virtual clock and one seed.
//!
//! Everything that varies (the application's operations, network delays, cut streams, lost and
//! duplicated frames, leader changes, and the cluster's own faults) is drawn from generators
//! seeded by [`SimConfig::seed`], so a run is replayed exactly by its seed and the same seed
//! gives the same [`Simulation::trace`] twice. Streams keep frame order, as HTTP/2 and
//! WebSocket streams do.
//!
//! After a run, [`Simulation::check`] verifies what a client must never promise: every request
//! ends exactly once; a command reported completed has a completed outcome recorded under its
//! own reference; a command reported failed has none; every command keeps one reference for its
//! whole life, through recovery; no reference is ever invented. Producers and consumers are
//! checked as their frames and events pass (see `sim/dataplane.rs`): credit is never exceeded,
//! no batch is sent again while an earlier send of it is unanswered (so none is resent after
//! its session was lost), every batch ends with exactly one outcome (perhaps `Unknown`), and no
//! delivery attempt is settled twice.

use crate::cluster::{ClusterConfig, ConnId, Faults, Output, SimCluster};
use crate::scenario::checks::{
    check_command, result_line, ClockCheck, IssuedCommand, SubscriptionCheck,
};
use crate::scenario::{draw, Draw};
use bytes::Bytes;
use nervix_protocol::client::*;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::ClientFrame;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::*;
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

mod dataplane;

/// Faults of the simulated network, as probabilities per event.
#[derive(Debug, Clone, Default)]
pub struct NetFaults {
    /// A frame in transit is followed by the stream being cut.
    pub cut: f64,
    /// A server frame is lost in transit (the stream goes on).
    pub lose: f64,
    /// A server frame arrives twice.
    pub duplicate: f64,
    /// The leader changes at a step.
    pub leader_change: f64,
    /// The most a frame is delayed, on top of its stream's order.
    pub max_delay: Duration,
}

/// One simulation run.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The seed everything is drawn from.
    pub seed: u64,
    /// Nodes in the cluster (1 or 3).
    pub nodes: usize,
    /// The cluster's faults.
    pub cluster: Faults,
    /// The network's faults.
    pub net: NetFaults,
    /// Application operations to perform.
    pub operations: usize,
}

impl SimConfig {
    /// A run with every kind of fault at a moderate rate, the fault mix drawn from the seed.
    pub fn chaotic(seed: u64) -> Self {
        let mut r = Rng::new(seed ^ 0x5eed_f417);
        let mut p = |max: f64| {
            if r.chance(0.7) {
                max * (r.below(1000) as f64 / 1000.0)
            } else {
                0.0
            }
        };
        let cluster = Faults {
            too_many_in_flight: p(0.05),
            server_busy: p(0.1),
            outcome_unknown: p(0.1),
            redirect_without_endpoint: p(0.3),
            violation: p(0.01),
            session_ending: p(0.02),
            transfer_parts: p(0.2),
            detach_binding: p(0.05),
            delivery_lost: p(0.2),
            rows_skipped: p(0.05),
            relay_changed: p(0.03),
            relay_removed: p(0.005),
            clock_change: p(0.05),
            clock_removed: p(0.005),
            cut_mid_batch: p(0.02),
            lost_outcome: p(0.02),
            contract_change: p(0.05),
            admission_change: p(0.1),
            producer_ended: p(0.03),
            batch_busy: p(0.1),
            draining: p(0.01),
            batch_failed: p(0.05),
            batch_unknown: p(0.05),
        };
        let net = NetFaults {
            cut: p(0.01),
            lose: p(0.005),
            duplicate: p(0.02),
            leader_change: p(0.02),
            max_delay: Duration::from_millis(r.below(40)),
        };
        let nodes = if r.chance(0.5) { 3 } else { 1 };
        Self {
            seed,
            nodes,
            cluster,
            net,
            operations: 60,
        }
    }

    /// A run without faults.
    pub fn calm(seed: u64) -> Self {
        Self {
            seed,
            nodes: 3,
            cluster: Faults::default(),
            net: NetFaults::default(),
            operations: 20,
        }
    }
}

#[derive(Debug, Clone)]
enum Delivery {
    Connected(SessionId),
    Refused(SessionId),
    ToServer(SessionId, Bytes),
    ToClient(SessionId, Bytes),
    ClosedToClient(SessionId),
}

/// A client, a cluster and the network between them.
#[derive(Debug)]
pub struct Simulation {
    config: SimConfig,
    now: Timestamp,
    rng: Rng,
    client: Client,
    cluster: SimCluster,
    conns: BTreeMap<SessionId, ConnId>,
    queue: BTreeMap<(Timestamp, u64), Delivery>,
    seq: u64,
    stream_tail: BTreeMap<(SessionId, bool), Timestamp>,
    trace: Vec<String>,
    commands: BTreeMap<CommandHandle, IssuedCommand>,
    command_results: BTreeMap<CommandHandle, Vec<CommandResult>>,
    reads: BTreeSet<ReadHandle>,
    read_results: BTreeMap<ReadHandle, usize>,
    /// How each read ended: its reply's body and disposition, or how it ended without one.
    read_answers: BTreeMap<ReadHandle, String>,
    sent_references: BTreeSet<String>,
    recovered: BTreeSet<CommandHandle>,
    violations: Vec<String>,
    counter: u64,
    subscriptions: BTreeMap<SubscriptionId, SubscriptionCheck>,
    clocks: BTreeMap<String, ClockCheck>,
    clock_events: Vec<String>,
    dataplane: dataplane::Dataplane,
}

const WALL_BASE: u64 = 1_767_225_600_000;

impl Simulation {
    /// A simulation of `config`.
    pub fn new(config: SimConfig) -> Self {
        let cluster = SimCluster::new(ClusterConfig {
            nodes: config.nodes,
            seed: config.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 1,
            faults: config.cluster.clone(),
            part_size: 64 * 1024,
            ..ClusterConfig::default()
        });
        let seeds: Vec<Endpoint> = cluster
            .endpoints()
            .iter()
            .filter_map(|e| Endpoint::parse(e).ok())
            .collect();
        let client = Client::new(ClientConfig::new(seeds, config.seed ^ 0x00c1_1e47));
        Self {
            rng: Rng::new(config.seed),
            config,
            now: Timestamp::ZERO,
            client,
            cluster,
            conns: BTreeMap::new(),
            queue: BTreeMap::new(),
            seq: 0,
            stream_tail: BTreeMap::new(),
            trace: Vec::new(),
            commands: BTreeMap::new(),
            command_results: BTreeMap::new(),
            reads: BTreeSet::new(),
            read_results: BTreeMap::new(),
            read_answers: BTreeMap::new(),
            sent_references: BTreeSet::new(),
            recovered: BTreeSet::new(),
            violations: Vec::new(),
            counter: 0,
            subscriptions: BTreeMap::new(),
            clocks: BTreeMap::new(),
            clock_events: Vec::new(),
            dataplane: dataplane::Dataplane::default(),
        }
    }

    /// The client under test.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// The cluster.
    pub fn cluster(&self) -> &SimCluster {
        &self.cluster
    }

    /// The cluster, to serve the separate calls (uploads, downloads, restores) an application
    /// drives itself; see [`crate::transfers`].
    pub fn cluster_mut(&mut self) -> &mut SimCluster {
        &mut self.cluster
    }

    /// The last result the application saw for command `h`, if it ended.
    pub fn command_result(&self, h: CommandHandle) -> Option<&CommandResult> {
        self.command_results.get(&h).and_then(|r| r.last())
    }

    /// The virtual time.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// What happened, one line per event: the client's side, then the cluster's trace.
    pub fn trace(&self) -> Vec<String> {
        let mut t = self.trace.clone();
        t.extend(self.cluster.trace().iter().map(|l| format!("cluster {l}")));
        t
    }

    fn wall(&self) -> UnixMillis {
        UnixMillis(WALL_BASE + self.now.as_nanos() / 1_000_000)
    }

    fn log(&mut self, line: String) {
        let ms = self.now.as_nanos() / 1_000_000;
        self.trace.push(format!("{ms:>8}ms {line}"));
    }

    fn schedule(&mut self, stream: Option<(SessionId, bool)>, delay: Duration, d: Delivery) {
        let mut at = self.now + delay;
        if let Some(key) = stream {
            // Streams keep order: never before the frame ahead of it.
            if let Some(&tail) = self.stream_tail.get(&key) {
                at = at.max(tail);
            }
            self.stream_tail.insert(key, at);
        }
        self.seq += 1;
        self.queue.insert((at, self.seq), d);
    }

    fn delay(&mut self) -> Duration {
        let max = self.config.net.max_delay.as_nanos() as u64;
        Duration::from_nanos(200_000 + self.rng.below(max + 1))
    }

    /// Executes a command as the application would, remembering what it issued.
    pub fn execute(&mut self, query: &str, append: bool) -> Option<CommandHandle> {
        let now = self.now;
        let wall = self.wall();
        match self.client.execute(now, wall, query) {
            Ok(h) => {
                let reference = self.client.reference_of(h).map(|r| r.to_string());
                self.log(format!(
                    "app execute {h:?} {query:?} ref={}",
                    reference.as_deref().unwrap_or("?")
                ));
                self.commands.insert(
                    h,
                    IssuedCommand {
                        reference,
                        recovery_of: None,
                        append,
                    },
                );
                Some(h)
            }
            Err(e) => {
                self.log(format!("app execute {query:?} refused: {e}"));
                None
            }
        }
    }

    /// Sends a read as the application would.
    pub fn read(&mut self) -> Option<ReadHandle> {
        let now = self.now;
        let h = self
            .client
            .read(
                now,
                ClientRequestT::ListDomainsRequest(Box::default()),
                None,
            )
            .ok()?;
        self.log(format!("app read {h:?}"));
        self.reads.insert(h);
        Some(h)
    }

    /// How a read ended: `Body/Disposition` of its reply (for example
    /// `SubscribeOutcome/SubscriptionOpened`), or how it ended without one.
    pub fn read_answer(&self, h: ReadHandle) -> Option<&str> {
        self.read_answers.get(&h).map(String::as_str)
    }

    /// Runs an NSPL statement the way the client routes it (L-2): a command, a request of its
    /// own, or a local selection.
    pub fn statement(&mut self, text: &str) -> Option<Routed> {
        let now = self.now;
        let wall = self.wall();
        let routed = match self.client.run(now, wall, text) {
            Ok(r) => r,
            Err(e) => {
                self.log(format!("app run {text:?} refused: {e}"));
                return None;
            }
        };
        self.log(format!("app run {text:?} as {routed:?}"));
        match &routed {
            Routed::Command(h) => {
                let reference = self.client.reference_of(*h).map(|r| r.to_string());
                self.commands.insert(
                    *h,
                    IssuedCommand {
                        reference,
                        recovery_of: None,
                        append: false,
                    },
                );
            }
            Routed::Request(h) => {
                self.reads.insert(*h);
            }
            Routed::Subscribed(id) => {
                let relay = text
                    .split_whitespace()
                    .skip_while(|w| !w.eq_ignore_ascii_case("FROM"))
                    .nth(1)
                    .unwrap_or_default()
                    .to_string();
                self.subscriptions
                    .insert(*id, SubscriptionCheck::new(relay));
            }
            Routed::Unsubscribing(id) => {
                if let Some(t) = self.subscriptions.get_mut(id) {
                    t.delete_asked = true;
                }
            }
            Routed::ClockFollowed(d) => {
                self.clocks.insert(d.clone(), ClockCheck::default());
            }
            _ => {}
        }
        Some(routed)
    }

    fn operate(&mut self) {
        self.counter += 1;
        let n = self.counter;
        let holding = self.client.binding().is_holding();
        match draw(&mut self.rng, n, holding) {
            Draw::Command(text) => {
                self.execute(&text, holding);
            }
            Draw::Read => {
                self.read();
            }
            Draw::Commit => {
                self.execute("COMMIT;", false);
            }
            Draw::Revert => {
                self.execute("REVERT;", false);
            }
            Draw::Append(text) => {
                self.execute(&text, true);
            }
            Draw::Begin => {
                if self.client.outstanding_commands() == 0 {
                    let _ = self.client.select_domain(Some("tenant"));
                    self.execute("BEGIN;", false);
                }
            }
            Draw::Cancel => {
                let outstanding: Vec<CommandHandle> = self
                    .commands
                    .keys()
                    .copied()
                    .filter(|h| !self.command_results.contains_key(h))
                    .collect();
                if !outstanding.is_empty() {
                    let h = outstanding[self.rng.below(outstanding.len() as u64) as usize];
                    let now = self.now;
                    if self.client.cancel(now, h).is_ok() {
                        self.log(format!("app cancel {h:?}"));
                    }
                }
            }
            Draw::Recover => {
                // E-3: repeat an uncertain command under its reference.
                let candidate = self
                    .command_results
                    .iter()
                    .find_map(|(h, rs)| match rs.first() {
                        Some(CommandResult::Uncertain { command, .. })
                            if !self.recovered.contains(h) =>
                        {
                            Some((*h, command.clone()))
                        }
                        _ => None,
                    });
                if let Some((h, command)) = candidate {
                    self.recovered.insert(h);
                    let now = self.now;
                    if let Ok(nh) = self.client.recover(now, &command, None) {
                        self.log(format!(
                            "app recover {h:?} as {nh:?} ref={}",
                            command.reference
                        ));
                        let append = self.commands.get(&h).is_some_and(|i| i.append);
                        self.commands.insert(
                            nh,
                            IssuedCommand {
                                reference: Some(command.reference.to_string()),
                                recovery_of: Some(command.reference.to_string()),
                                append,
                            },
                        );
                    }
                }
            }
            Draw::Statement { text, .. } => {
                let _ = self.statement(&text);
            }
            Draw::Dataplane(k) => self.operate_dataplane(k),
            Draw::Nothing => {}
        }
        if self.config.net.leader_change > 0.0 && self.rng.chance(self.config.net.leader_change) {
            let nodes = self.config.nodes;
            if nodes > 1 {
                let next =
                    (self.cluster.leader() + 1 + self.rng.below(nodes as u64 - 1) as usize) % nodes;
                self.log(format!("net leader change to node {next}"));
                let now = self.now;
                self.cluster.set_leader(now, next);
                self.drain_cluster();
            }
        }
    }

    /// Makes node `index` the leader now (its sessions elsewhere end with a redirect).
    pub fn change_leader(&mut self, index: usize) {
        self.log(format!("net leader change to node {index}"));
        let now = self.now;
        self.cluster.set_leader(now, index);
        self.drain_cluster();
        self.pump_client();
    }

    /// The client-side lines of the trace (application, client and network), without the
    /// cluster's own.
    pub fn client_trace(&self) -> &[String] {
        &self.trace
    }

    /// Runs the configured operations, then lets every request end.
    pub fn run(&mut self) {
        for _ in 0..self.config.operations {
            self.operate();
            self.pump_client();
            let quantum = Duration::from_millis(self.rng.below(200));
            self.run_for(quantum);
        }
        // Let everything settle: every call ends within its deadline, and every producer and
        // consumer closes.
        self.close_dataplane();
        self.pump_client();
        let limit = self.now + Duration::from_secs(3600);
        while (self.client.outstanding_commands() > 0
            || self.client.outstanding_reads() > 0
            || self.dataplane.active())
            && self.now < limit
        {
            self.run_for(Duration::from_secs(1));
        }
    }

    /// Advances the virtual clock by `d`, delivering and timing out whatever falls in it.
    pub fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        let mut steps = 0u32;
        loop {
            steps += 1;
            if steps > 200_000 {
                // A timer that fires without doing anything would spin here forever.
                self.violations.push(format!(
                    "no progress at {:?}: a timeout that does nothing",
                    self.now
                ));
                self.now = end;
                break;
            }
            self.pump_client();
            let next_delivery = self.queue.keys().next().map(|k| k.0);
            let next_timeout = self.client.poll_timeout();
            // The cluster's own sends (rows, clock ticks) are due no earlier than now.
            let next_cluster = self.cluster.next_due().map(|t| t.max(self.now));
            let next = [next_delivery, next_timeout, next_cluster]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    if next_delivery == Some(t) {
                        let key = *self.queue.keys().next().unwrap_or(&(t, 0));
                        if let Some(d) = self.queue.remove(&key) {
                            self.deliver(d);
                        }
                    } else {
                        let now = self.now;
                        if next_timeout == Some(t) {
                            self.client.handle_timeout(now);
                        }
                        self.cluster.advance(now);
                        self.drain_cluster();
                    }
                }
                _ => {
                    self.now = end;
                    let now = self.now;
                    self.client.handle_timeout(now);
                    self.cluster.advance(now);
                    self.drain_cluster();
                    self.pump_client();
                    break;
                }
            }
        }
    }

    fn deliver(&mut self, d: Delivery) {
        let now = self.now;
        match d {
            Delivery::Connected(sid) => {
                self.log(format!("net {sid:?} connected"));
                self.client.handle_connected(now, sid);
            }
            Delivery::Refused(sid) => {
                self.log(format!("net {sid:?} refused"));
                self.client.handle_closed(now, sid);
            }
            Delivery::ClosedToClient(sid) => {
                if self.conns.remove(&sid).is_some() {
                    self.log(format!("net {sid:?} closed"));
                    self.client.handle_closed(now, sid);
                }
            }
            Delivery::ToClient(sid, frame) => {
                if self.conns.contains_key(&sid) {
                    if self.dataplane.watches(sid) {
                        self.on_dataplane_frame(sid, &frame);
                    }
                    self.client.handle_frame(now, sid, frame);
                }
            }
            Delivery::ToServer(sid, frame) => {
                let Some(&conn) = self.conns.get(&sid) else {
                    return;
                };
                self.cluster.receive(now, conn, frame);
                self.drain_cluster();
                if self.rng.chance(self.config.net.cut) {
                    self.cut(sid);
                }
            }
        }
        self.pump_client();
    }

    fn cut(&mut self, sid: SessionId) {
        if let Some(&conn) = self.conns.get(&sid) {
            self.log(format!("net cut {sid:?}"));
            let now = self.now;
            self.cluster.close(now, conn, false);
            self.drain_cluster();
            let delay = self.delay();
            self.schedule(Some((sid, false)), delay, Delivery::ClosedToClient(sid));
        }
    }

    fn drain_cluster(&mut self) {
        while let Some((conn, out)) = self.cluster.poll_output() {
            let Some(sid) = self
                .conns
                .iter()
                .find(|(_, c)| **c == conn)
                .map(|(s, _)| *s)
            else {
                continue;
            };
            let delay = self.delay();
            match out {
                Output::Frame(frame) => {
                    if self.rng.chance(self.config.net.lose) {
                        self.log(format!("net lost a frame to {sid:?}"));
                        continue;
                    }
                    let twice = self.rng.chance(self.config.net.duplicate);
                    self.schedule(
                        Some((sid, false)),
                        delay,
                        Delivery::ToClient(sid, frame.clone()),
                    );
                    if twice {
                        self.log(format!("net duplicated a frame to {sid:?}"));
                        self.schedule(Some((sid, false)), delay, Delivery::ToClient(sid, frame));
                    }
                }
                Output::Close => {
                    self.schedule(Some((sid, false)), delay, Delivery::ClosedToClient(sid))
                }
            }
        }
    }

    fn pump_client(&mut self) {
        while let Some(a) = self.client.poll_action() {
            let now = self.now;
            match a {
                Action::Connect { session, endpoint } => {
                    let delay = self.delay();
                    match self.cluster.connect(now, endpoint.as_str()) {
                        Ok(conn) => {
                            self.log(format!("client connect {session:?} {endpoint} -> {conn}"));
                            self.conns.insert(session, conn);
                            self.schedule(
                                Some((session, false)),
                                delay,
                                Delivery::Connected(session),
                            );
                        }
                        Err(e) => {
                            self.log(format!(
                                "client connect {session:?} {endpoint} refused: {e}"
                            ));
                            self.schedule(None, delay, Delivery::Refused(session));
                        }
                    }
                }
                Action::Send { session, frame } => {
                    if let Ok(f) = ClientFrame::check(frame.clone()) {
                        let msg = f.unpack();
                        if let ClientRequestT::CommandRequest(c) = &msg.request {
                            self.sent_references.insert(c.execution_reference.clone());
                        }
                        self.on_dataplane_send(session, &msg);
                        self.log(format!(
                            "client send {session:?} req {} {}",
                            msg.request_id,
                            msg.request
                                .client_request_type()
                                .variant_name()
                                .unwrap_or("?")
                        ));
                    } else {
                        self.violations
                            .push("the client sent a frame its own reader refuses".into());
                    }
                    let delay = self.delay();
                    self.schedule(
                        Some((session, true)),
                        delay,
                        Delivery::ToServer(session, frame),
                    );
                }
                Action::Close { session, clean } => {
                    self.log(format!("client close {session:?} clean={clean}"));
                    if let Some(conn) = self.conns.remove(&session) {
                        self.cluster.close(now, conn, clean);
                        self.drain_cluster();
                    }
                }
                _ => {}
            }
        }
        while let Some(e) = self.client.poll_event() {
            match e {
                ClientEvent::Command { handle, result } => {
                    let line = result_line(&result);
                    self.log(format!("app result {handle:?} {line}"));
                    self.command_results.entry(handle).or_default().push(result);
                }
                ClientEvent::Read { handle, result } => {
                    let answer = match &result {
                        ReadResult::Replied(f) => reply_summary(f),
                        other => format!("{other:?}"),
                    };
                    self.log(format!("app read result {handle:?} {answer}"));
                    *self.read_results.entry(handle).or_default() += 1;
                    self.read_answers.insert(handle, answer);
                }
                ClientEvent::SessionLost { session, .. } => {
                    self.log(format!("client lost {session:?}"))
                }
                ClientEvent::Transaction(b) => {
                    self.log(format!("client transaction {}", binding_name(&b)))
                }
                _ => {}
            }
        }
        while self.client.poll_unsolicited().is_some() {}
        while let Some((id, event)) = self.client.poll_subscriptions() {
            self.on_subscription_event(id, event);
        }
        while let Some(event) = self.client.poll_clock_event() {
            self.on_clock_event(event);
        }
        while let Some((id, event)) = self.client.poll_producer_events() {
            self.on_producer_event(id, event);
        }
        while let Some((id, event)) = self.client.poll_consumer_events() {
            self.on_consumer_event(id, event);
        }
        self.check_credit();
    }

    /// Checks one subscription event as it arrives (see [`SubscriptionCheck::on_event`]).
    fn on_subscription_event(&mut self, id: SubscriptionId, event: SubscriptionEvent) {
        let mut problems = Vec::new();
        let t = self.subscriptions.entry(id).or_default();
        let line = t.on_event(&id, &event, &mut problems);
        self.violations.extend(problems);
        self.log(format!("app subscription {id:?} {line}"));
    }

    /// Checks one clock event as it arrives (see [`ClockCheck::on_event`]).
    fn on_clock_event(&mut self, event: ClockEvent) {
        let mut problems = Vec::new();
        let line = format!("{event:?}");
        let domain = event.domain().to_string();
        self.clocks
            .entry(domain)
            .or_default()
            .on_event(&event, &mut problems);
        self.violations.extend(problems);
        self.clock_events.push(line.clone());
        self.log(format!("app clock {line}"));
    }

    /// What the application saw of a subscription, one short line per event.
    pub fn subscription_events(&self, id: SubscriptionId) -> Vec<String> {
        self.subscriptions
            .get(&id)
            .map_or_else(Vec::new, |t| t.events.clone())
    }

    /// Every clock event the application saw, in order.
    pub fn clock_events(&self) -> &[String] {
        &self.clock_events
    }

    /// Checks the invariants of the manual's "What A Client Must Not Promise" over the run.
    pub fn check(&self) -> Result<(), String> {
        let mut problems = self.violations.clone();
        for (h, issued) in &self.commands {
            let results = self
                .command_results
                .get(h)
                .map_or(&[][..], |v| v.as_slice());
            check_command(h, issued, results, &self.cluster, &mut problems);
        }
        let known: BTreeSet<&String> = self
            .commands
            .values()
            .filter_map(|i| i.reference.as_ref())
            .collect();
        for r in &self.sent_references {
            if !known.contains(r) {
                problems.push(format!(
                    "a command was sent under an invented reference {r}"
                ));
            }
        }
        for h in &self.reads {
            let n = self.read_results.get(h).copied().unwrap_or(0);
            if n != 1 {
                problems.push(format!("{h:?} read ended {n} times"));
            }
        }
        for (id, t) in &self.subscriptions {
            if t.ended > 1 {
                problems.push(format!("{id:?} ended {} times", t.ended));
            }
        }
        self.dataplane.check(&mut problems);
        if self.dataplane.active() {
            problems.push("a producer or consumer never reached its end".into());
        }
        for m in self.cluster.misbehaviour() {
            problems.push(format!("the cluster saw: {m}"));
        }
        crate::scenario::checks::verdict(&problems)
    }

    /// How many batches ended with each kind of outcome (`completed`, `unknown`, ...).
    pub fn batch_outcomes(&self) -> &BTreeMap<&'static str, u64> {
        &self.dataplane.outcomes
    }

    /// How many deliveries consumers received.
    pub fn deliveries(&self) -> u64 {
        self.dataplane.deliveries
    }

    /// A one-line summary of the run's results.
    pub fn summary(&self) -> String {
        let mut completed = 0;
        let mut failed = 0;
        let mut uncertain = 0;
        for r in self.command_results.values().flatten() {
            match r {
                CommandResult::Completed(_) => completed += 1,
                CommandResult::Failed(_) => failed += 1,
                _ => uncertain += 1,
            }
        }
        let rows: u64 = self.subscriptions.values().map(|t| t.rows).sum();
        let ticks = self
            .clock_events
            .iter()
            .filter(|l| l.starts_with("Ticked"))
            .count();
        format!(
            "{} commands: {completed} completed, {failed} failed, {uncertain} uncertain; {} reads; {} subscriptions, {rows} rows; {ticks} clock ticks; batch outcomes {:?}; {} deliveries; {} trace lines",
            self.commands.len(),
            self.reads.len(),
            self.subscriptions.len(),
            self.dataplane.outcomes,
            self.dataplane.deliveries,
            self.trace.len() + self.cluster.trace().len()
        )
    }
}

fn binding_name(b: &nervix_protocol::transaction::Binding) -> String {
    use nervix_protocol::transaction::Binding as B;
    match b {
        B::Unbound => "unbound".into(),
        B::Bound(h) => format!("bound {} at {}", h.id, h.position),
        B::Detached(h) => format!("detached {}", h.id),
        B::TakenOver { id } => format!("taken over {id}"),
        B::Finished { id, ending } => format!("finished {id} {ending:?}"),
        _ => "?".into(),
    }
}

/// Runs one seed: the run, then the invariants. The error names the seed.
pub fn run_seed(config: SimConfig) -> Result<Simulation, String> {
    let seed = config.seed;
    let mut sim = Simulation::new(config);
    sim.run();
    sim.check().map_err(|p| {
        let trace = if std::env::var_os("NERVIX_TRACE").is_some() {
            sim.trace().join("\n")
        } else {
            "(set NERVIX_TRACE=1 to print the trace)".to_string()
        };
        format!("seed {seed} broke an invariant (replay: NERVIX_SEED={seed}):\n{p}{trace}")
    })?;
    Ok(sim)
}

/// The seeds a simulation test runs, from the values of the environment variables
/// `NERVIX_SEED` (`seed`), `NERVIX_SEEDS` (`count`) and `NERVIX_SEED_BASE` (`base`).
///
/// `NERVIX_SEED=n` is the one seed `n`, whatever the others say: it replays a seed named in a
/// failure, which is always its absolute number. Otherwise the seeds are `base .. base + count`,
/// with `base` 0 and `count` `default_count` when unset, so a soak from a new base runs seeds no
/// earlier run has. A value that is not a number, or a range that passes `u64::MAX`, is an
/// error naming the variable.
pub fn seed_selection(
    seed: Option<&str>,
    count: Option<&str>,
    base: Option<&str>,
    default_count: u64,
) -> Result<std::ops::Range<u64>, String> {
    let number = |name: &str, value: &str| {
        value
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("{name}={value:?} is not a seed number"))
    };
    if let Some(s) = seed {
        let n = number("NERVIX_SEED", s)?;
        let end = n
            .checked_add(1)
            .ok_or_else(|| format!("NERVIX_SEED={n} is past the last seed this runner can name"))?;
        return Ok(n..end);
    }
    let count = count.map_or(Ok(default_count), |c| number("NERVIX_SEEDS", c))?;
    let base = base.map_or(Ok(0), |b| number("NERVIX_SEED_BASE", b))?;
    let end = base.checked_add(count).ok_or_else(|| {
        format!("NERVIX_SEED_BASE={base} with NERVIX_SEEDS={count} runs past u64::MAX")
    })?;
    Ok(base..end)
}

/// The seeds a seeded test runs, as [`seed_selection`] reads them from the environment
/// variables `NERVIX_SEED`, `NERVIX_SEEDS` and `NERVIX_SEED_BASE`, `default_count` seeds from 0
/// when none is set.
///
/// # Panics
///
/// When a variable is not a seed number or the range passes `u64::MAX`, naming the variable.
pub fn seeds_from_env(default_count: u64) -> std::ops::Range<u64> {
    let var = |name: &str| std::env::var(name).ok();
    seed_selection(
        var("NERVIX_SEED").as_deref(),
        var("NERVIX_SEEDS").as_deref(),
        var("NERVIX_SEED_BASE").as_deref(),
        default_count,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `run` for every seed of `seeds`, all of them even after a failure.
///
/// # Panics
///
/// When any seed failed, with how many and every failure report `run` returned.
pub fn assert_seeds(seeds: std::ops::Range<u64>, mut run: impl FnMut(u64) -> Result<(), String>) {
    let failures: Vec<String> = seeds.filter_map(|seed| run(seed).err()).collect();
    assert!(
        failures.is_empty(),
        "{} seeds failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `Body/Disposition` of a reply frame, naming the union variants it carries.
fn reply_summary(f: &nervix_protocol::frame::ServerFrame) -> String {
    let view = f.view();
    let Some(reply) = view.body_as_reply() else {
        return "not a reply".into();
    };
    let body = reply.body_type().variant_name().unwrap_or("?");
    let disposition = if let Some(o) = reply.body_as_subscribe_outcome() {
        o.disposition_type().variant_name()
    } else if let Some(o) = reply.body_as_unsubscribe_outcome() {
        o.disposition_type().variant_name()
    } else if let Some(o) = reply.body_as_domain_clock_attach_outcome() {
        o.disposition_type().variant_name()
    } else if let Some(o) = reply.body_as_domain_clock_detach_outcome() {
        o.disposition_type().variant_name()
    } else if let Some(r) = reply.body_as_request_rejected() {
        r.rejection().and_then(|r| r.variant_name())
    } else {
        None
    };
    match disposition {
        Some(d) => format!("{body}/{d}"),
        None => body.to_string(),
    }
}
