//! Seeded scenarios shared by the simulation and by runs over real transports.
//!
//! [`draw`] is the simulation's draw of the application's next operation (commands, reads,
//! transactions, cancellations, recoveries, subscriptions, clocks, producers and consumers),
//! so a runner that drives a real driver draws the same kind of sequence from a seed.
//! [`checks`] holds the invariants that do not depend on how frames travel, [`dataplane`] the
//! draws and checks of producers and consumers.
//!
//! For runs over real sockets (the loopback cluster, a real driver), [`Plan`] adds the
//! transport faults to inject at seeded points ([`TransportFault`]), and [`Observed`] records
//! what the application saw and checks it against the cluster's own record of what it applied
//! and sent. Nothing here opens a socket or reads a clock: a runner passes the time of each
//! record in.

pub mod checks;
pub mod dataplane;

use crate::cluster::{Emitted, Faults, SimCluster};
use crate::sim::SimConfig;
use checks::{check_command, result_line, ClockCheck, IssuedCommand, SubscriptionCheck};
use nervix_protocol::client::{ClockEvent, CommandResult, Failure, Gap, SubscriptionEvent};
use nervix_protocol::rng::Rng;
use nervix_protocol::rows::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One drawn operation of the application.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Draw {
    /// A command outside a transaction (or appended, when one is held): its text.
    Command(String),
    /// A read (the domain list).
    Read,
    /// Begin a transaction (drawn only while none is held).
    Begin,
    /// Append to the held transaction: the command's text.
    Append(String),
    /// Commit the held transaction.
    Commit,
    /// Revert the held transaction.
    Revert,
    /// Stop waiting for (cancel or abandon) one outstanding command.
    Cancel,
    /// Repeat an uncertain command under its reference (E-3).
    Recover,
    /// A statement of the console: a domain listing, `USE`, a clock attached or detached, a
    /// subscription created or deleted. `slot` names the subscription (`s{slot}`).
    Statement {
        /// The subscription slot, 0 to 2.
        slot: u64,
        /// The statement.
        text: String,
    },
    /// A producer or consumer operation, drawn further by the runner (0 to 49).
    Dataplane(u64),
    /// Nothing.
    Nothing,
}

/// Draws the application's next operation, the `n`th, from `rng`; `holding` says whether a
/// transaction is held. The draws consumed from `rng` depend only on its state and `holding`,
/// so the same seed and the same answers draw the same sequence.
pub fn draw(rng: &mut Rng, n: u64, holding: bool) -> Draw {
    match rng.below(150) {
        0..=39 => Draw::Command(format!("CREATE RELAY r{n};")),
        40..=54 => Draw::Read,
        55..=74 => {
            if holding {
                match rng.below(6) {
                    0 => Draw::Commit,
                    1 => Draw::Revert,
                    _ => Draw::Append(format!("CREATE RELAY t{n};")),
                }
            } else {
                Draw::Begin
            }
        }
        75..=79 => Draw::Cancel,
        80..=89 => Draw::Recover,
        90..=99 => {
            let slot = rng.below(3);
            let relay = ["orders", "branched_trades", "orders DROPPING"][slot as usize];
            let text = match rng.below(7) {
                0 => "LIST DOMAINS".to_string(),
                1 => "USE tenant".to_string(),
                2 => "ATTACH DOMAIN CLOCK".to_string(),
                3 => "DETACH DOMAIN CLOCK".to_string(),
                4 | 5 => format!("CREATE SUBSCRIPTION s{slot} FROM {relay}"),
                _ => format!("DELETE SUBSCRIPTION s{slot}"),
            };
            Draw::Statement { slot, text }
        }
        k @ 100..=149 => Draw::Dataplane(k - 100),
        _ => Draw::Nothing,
    }
}

/// A fault of the transport, injected into a loopback cluster at a seeded point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportFault {
    /// Kill node `node`: its streams end at once (calls on them are killed mid-call) and it
    /// refuses calls until healed.
    Kill {
        /// The node.
        node: usize,
    },
    /// Cut every stream of node `node` at the transport, without a frame or a close.
    Cut {
        /// The node.
        node: usize,
    },
    /// Make node `node` the leader.
    LeaderChange {
        /// The new leader.
        node: usize,
    },
    /// Node `node` reads what clients send slowly, waiting `delay_ms` before each piece,
    /// until healed.
    SlowReader {
        /// The node.
        node: usize,
        /// The wait before each read, in milliseconds.
        delay_ms: u64,
    },
}

/// The seeded schedule of a run over real transports: operations drawn as the simulation
/// draws them, pauses between them, and transport faults at seeded points.
#[derive(Debug)]
pub struct Plan {
    /// The seed.
    pub seed: u64,
    /// Nodes of the cluster (1 or 3), as the simulation draws them for the seed.
    pub nodes: usize,
    /// The cluster's own faults, as the simulation draws them for the seed.
    pub cluster: Faults,
    /// Operations to perform.
    pub operations: usize,
    rng: Rng,
    faults: Rng,
    data: Rng,
    n: u64,
}

impl Plan {
    /// The plan of `seed`: the simulation's chaotic configuration of the seed (nodes and the
    /// cluster's faults) with `operations` operations.
    pub fn new(seed: u64, operations: usize) -> Self {
        let sim = SimConfig::chaotic(seed);
        Self {
            seed,
            nodes: sim.nodes,
            cluster: sim.cluster,
            operations,
            rng: Rng::new(seed),
            faults: Rng::new(seed ^ 0x7a11_5ca7),
            data: Rng::new(seed ^ 0xda7a_91a4e),
            n: 0,
        }
    }

    /// The next operation (see [`draw`]).
    pub fn next(&mut self, holding: bool) -> Draw {
        self.n += 1;
        draw(&mut self.rng, self.n, holding)
    }

    /// A producer or consumer operation drawn besides the next operation, seven times in
    /// eight: its pick (see [`Draw::Dataplane`]). Drawn from a stream of its own, as are
    /// the details of every producer and consumer operation ([`Plan::dataplane_rng`]), so the
    /// other operations of a seed stay what they were without them.
    pub fn dataplane(&mut self) -> Option<u64> {
        (self.data.below(8) != 0).then(|| self.data.below(50))
    }

    /// The generator of the details of producer and consumer operations (see [`dataplane`]).
    pub fn dataplane_rng(&mut self) -> &mut Rng {
        &mut self.data
    }

    /// An index below `len` (at least 1), to pick among outstanding things.
    pub fn pick(&mut self, len: usize) -> usize {
        self.rng.below(len.max(1) as u64) as usize
    }

    /// How long to wait before the next operation, in milliseconds (0 to 149).
    pub fn pause_ms(&mut self) -> u64 {
        self.rng.below(150)
    }

    /// The transport fault to inject after this operation, if any, and after how many more
    /// operations it is healed (a kill revives the node, a slow reader reads at full speed
    /// again; the others need no healing). About one operation in eight injects one.
    pub fn fault(&mut self, leader: usize) -> Option<(TransportFault, usize)> {
        if self.faults.below(8) != 0 {
            return None;
        }
        let nodes = self.nodes as u64;
        let other = |r: &mut Rng| {
            if nodes > 1 {
                (leader + 1 + r.below(nodes - 1) as usize) % nodes as usize
            } else {
                leader
            }
        };
        let heal = 1 + self.faults.below(3) as usize;
        let fault = match self.faults.below(4) {
            0 => TransportFault::Kill { node: leader },
            1 => TransportFault::Cut { node: leader },
            2 if nodes > 1 => TransportFault::LeaderChange {
                node: other(&mut self.faults),
            },
            2 => TransportFault::Cut { node: leader },
            _ => TransportFault::SlowReader {
                node: leader,
                delay_ms: 5 + self.faults.below(60),
            },
        };
        Some((fault, heal))
    }
}

/// One item the application read from a subscription's generation, in the terms of
/// [`Emitted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Item(Emitted),
    /// The client's retention budget dropped this many rows (S-8).
    Overflow(u64),
}

#[derive(Debug, Default)]
struct CommandTrack {
    query: String,
    issued: IssuedCommand,
    results: Vec<CommandResult>,
    abandoned: bool,
}

#[derive(Debug, Default)]
struct SubscriptionTrack {
    name: String,
    check: SubscriptionCheck,
    /// What it read, by generation.
    generations: BTreeMap<u64, Vec<Seen>>,
}

/// What the application of a run over real transports observed, checked against what the
/// cluster applied and sent. Labels are the runner's own numbers for its commands, reads,
/// subscriptions and clocks.
#[derive(Debug, Default)]
pub struct Observed {
    trace: Vec<String>,
    commands: BTreeMap<u64, CommandTrack>,
    reads: BTreeMap<u64, Vec<String>>,
    subscriptions: BTreeMap<u64, SubscriptionTrack>,
    clocks: BTreeMap<u64, ClockCheck>,
    unclaimed: Vec<CommandResult>,
    faults: BTreeMap<&'static str, u64>,
    gaps: u64,
    problems: Vec<String>,
    dataplane: dataplane::Seen,
}

impl Observed {
    /// Adds a line to the trace, at `ms` milliseconds into the run.
    pub fn log(&mut self, ms: u64, line: impl AsRef<str>) {
        self.trace.push(format!("{ms:>7}ms {}", line.as_ref()));
    }

    /// The trace so far.
    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// The runner injected `fault` into the transport.
    pub fn fault_injected(&mut self, ms: u64, fault: TransportFault) {
        self.log(ms, format!("fault {fault:?}"));
        let kind = match fault {
            TransportFault::Kill { .. } => "kill",
            TransportFault::Cut { .. } => "cut",
            TransportFault::LeaderChange { .. } => "leader change",
            TransportFault::SlowReader { .. } => "slow reader",
        };
        *self.faults.entry(kind).or_default() += 1;
    }

    /// Records something wrong that the runner found itself (a wait that did not end).
    pub fn problem(&mut self, p: impl Into<String>) {
        self.problems.push(p.into());
    }

    /// Command `label` was handed to the client under `reference`.
    pub fn command_issued(
        &mut self,
        ms: u64,
        label: u64,
        query: &str,
        reference: &str,
        append: bool,
    ) {
        self.log(
            ms,
            format!("app execute c{label} {query:?} ref={reference}"),
        );
        self.commands.insert(
            label,
            CommandTrack {
                query: query.to_string(),
                issued: IssuedCommand {
                    reference: Some(reference.to_string()),
                    recovery_of: None,
                    append,
                },
                ..CommandTrack::default()
            },
        );
    }

    /// The application stopped waiting for command `label`: its outcome must come back
    /// through the client's unclaimed outcomes (C-10).
    pub fn command_abandoned(&mut self, ms: u64, label: u64) {
        self.log(ms, format!("app abandons c{label}"));
        if let Some(c) = self.commands.get_mut(&label) {
            c.abandoned = true;
        }
    }

    /// Command `label` ended with `result`.
    pub fn command_ended(&mut self, ms: u64, label: u64, result: CommandResult) {
        self.log(ms, format!("app result c{label} {}", result_line(&result)));
        if let Some(c) = self.commands.get_mut(&label) {
            if c.abandoned {
                self.problems.push(format!(
                    "c{label} was abandoned, yet its wait gave a result"
                ));
            }
            c.results.push(result);
        }
    }

    /// Outcomes the client handed back as unclaimed: each is matched to its abandoned
    /// command by reference.
    pub fn unclaimed(&mut self, ms: u64, results: Vec<CommandResult>) {
        for result in results {
            let reference = result_reference(&result);
            self.log(
                ms,
                format!(
                    "app unclaimed {} ref={}",
                    result_line(&result),
                    reference.as_deref().unwrap_or("?")
                ),
            );
            self.unclaimed.push(result);
        }
    }

    /// The references of abandoned commands whose outcome has not come back yet.
    pub fn missing_unclaimed(&self) -> usize {
        let abandoned = self.commands.values().filter(|c| c.abandoned).count();
        abandoned.saturating_sub(self.unclaimed.len())
    }

    /// Read `label` was sent.
    pub fn read_issued(&mut self, ms: u64, label: u64) {
        self.log(ms, format!("app read q{label}"));
        self.reads.insert(label, Vec::new());
    }

    /// Read `label` ended; `answer` names how.
    pub fn read_ended(&mut self, ms: u64, label: u64, answer: String) {
        self.log(ms, format!("app read result q{label} {answer}"));
        self.reads.entry(label).or_default().push(answer);
    }

    /// Subscription `label` was opened as `name` on `relay`.
    pub fn subscribed(&mut self, ms: u64, label: u64, name: &str, relay: &str) {
        self.log(ms, format!("app subscribe u{label} {name} FROM {relay}"));
        self.subscriptions.insert(
            label,
            SubscriptionTrack {
                name: name.to_string(),
                check: SubscriptionCheck::new(relay),
                generations: BTreeMap::new(),
            },
        );
    }

    /// The application dropped subscription `label`, which deletes it.
    pub fn unsubscribed(&mut self, ms: u64, label: u64) {
        self.log(ms, format!("app drops u{label}"));
        if let Some(t) = self.subscriptions.get_mut(&label) {
            t.check.delete_asked = true;
        }
    }

    /// Subscription `label` gave `event`: checked at once (see [`SubscriptionCheck`]) and
    /// kept, by generation, for [`Observed::check`].
    pub fn subscription_event(&mut self, ms: u64, label: u64, event: &SubscriptionEvent) {
        let mut problems = Vec::new();
        let Some(t) = self.subscriptions.get_mut(&label) else {
            return;
        };
        let id = format!("u{label}");
        let open = t.check.generation;
        let line = t.check.on_event(&id, event, &mut problems);
        let seen = match event {
            SubscriptionEvent::Rows(batch) => {
                let numbers: Vec<u64> = batch
                    .rows()
                    .filter_map(|r| match r.cell(0) {
                        Some(Value::U64(n)) => Some(n),
                        _ => None,
                    })
                    .collect();
                let first = numbers.first().copied().unwrap_or(0);
                if numbers
                    .iter()
                    .enumerate()
                    .any(|(i, n)| *n != first + i as u64)
                {
                    problems.push(format!("{id} a batch of rows out of order: {numbers:?}"));
                }
                Some((
                    batch.generation(),
                    Seen::Item(Emitted::Rows {
                        first,
                        count: batch.len() as u64,
                    }),
                ))
            }
            SubscriptionEvent::Gap(Gap::DeliveryLost { dropped_rows }) => open.map(|g| {
                (
                    g,
                    Seen::Item(Emitted::DeliveryLost {
                        count: *dropped_rows,
                    }),
                )
            }),
            SubscriptionEvent::Gap(Gap::RowsSkipped { skipped_rows, .. }) => open.map(|g| {
                (
                    g,
                    Seen::Item(Emitted::RowsSkipped {
                        count: *skipped_rows,
                    }),
                )
            }),
            SubscriptionEvent::Gap(Gap::Overflow { rows, .. }) => {
                open.map(|g| (g, Seen::Overflow(*rows)))
            }
            _ => None,
        };
        if matches!(event, SubscriptionEvent::Gap(_)) {
            self.gaps += 1;
        }
        if let Some((generation, seen)) = seen {
            t.generations.entry(generation).or_default().push(seen);
        }
        self.problems.extend(problems);
        self.log(ms, format!("app subscription u{label} {line}"));
    }

    /// Clock follow `label` started.
    pub fn clock_followed(&mut self, ms: u64, label: u64) {
        self.log(ms, format!("app follow clock k{label}"));
        self.clocks.insert(label, ClockCheck::default());
    }

    /// Clock follow `label` gave `event`: checked at once (see [`ClockCheck`]).
    pub fn clock_event(&mut self, ms: u64, label: u64, event: &ClockEvent) {
        let mut problems = Vec::new();
        self.clocks
            .entry(label)
            .or_default()
            .on_event(event, &mut problems);
        self.problems.extend(problems);
        self.log(ms, format!("app clock k{label} {event:?}"));
    }

    /// A one-line summary.
    pub fn summary(&self) -> String {
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for r in self.commands.values().flat_map(|c| &c.results) {
            let k = match r {
                CommandResult::Completed(_) => "completed",
                CommandResult::Failed(_) => "failed",
                _ => "uncertain",
            };
            *kinds.entry(k).or_default() += 1;
        }
        let rows: u64 = self.subscriptions.values().map(|t| t.check.rows).sum();
        let abandoned = self.commands.values().filter(|c| c.abandoned).count();
        format!(
            "{} commands {kinds:?}, {abandoned} abandoned; {} reads; {} subscriptions, {rows} rows, {} gaps; {} clocks; faults {:?}",
            self.commands.len(),
            self.reads.len(),
            self.subscriptions.len(),
            self.gaps,
            self.clocks.len(),
            self.faults
        ) + "; " + &self.dataplane_summary()
    }

    /// Checks the run against the cluster's record (the manual's "What A Client Must Not
    /// Promise"): every command ended exactly once (through its wait, or once abandoned
    /// through the unclaimed outcomes) consistently with what the cluster applied under its
    /// reference; the server never saw a reference the application did not issue; every read
    /// ended exactly once; each generation of a subscription read exactly a prefix of what the
    /// cluster sent for it, the rows it dropped or skipped reported as gaps of the same size in
    /// the same place; nothing ended twice; and the producers and consumers (see
    /// [`dataplane`]): one outcome per batch, ingested as its outcome allows, deliveries of
    /// the emitter's rows, settlements confirmed at most once.
    pub fn check(&self, cluster: &SimCluster, server_references: &[String]) -> Result<(), String> {
        let mut problems = self.problems.clone();
        let mut unclaimed: BTreeMap<String, Vec<CommandResult>> = BTreeMap::new();
        let mut unclaimed_failed = 0usize;
        for r in &self.unclaimed {
            match result_reference(r) {
                Some(reference) => unclaimed.entry(reference).or_default().push(r.clone()),
                None => unclaimed_failed += 1,
            }
        }
        let mut abandoned_failed = 0usize;
        for (label, c) in &self.commands {
            let h = format!("c{label} {:?}", c.query);
            let reference = c.issued.reference.clone().unwrap_or_default();
            if c.abandoned {
                let mut results = c.results.clone();
                if let Some(r) = unclaimed.remove(&reference) {
                    results.extend(r);
                } else {
                    // A failure before any outcome names no reference: count it against the
                    // unclaimed failures that name none either.
                    let recorded_completed =
                        cluster.recorded_outcome(&reference).is_some_and(|o| {
                            o.disposition.command_disposition_type()
                                == nervix_protocol::schema::CommandDisposition::CommandCompleted
                        });
                    if recorded_completed {
                        problems.push(format!(
                            "{h} was abandoned after it completed, and its outcome never came back (C-10)"
                        ));
                    } else {
                        abandoned_failed += 1;
                    }
                    continue;
                }
                check_command(&h, &c.issued, &results, cluster, &mut problems);
            } else {
                check_command(&h, &c.issued, &c.results, cluster, &mut problems);
            }
        }
        if abandoned_failed != unclaimed_failed {
            problems.push(format!(
                "{abandoned_failed} abandoned commands had no outcome back, but {unclaimed_failed} unclaimed failures came (C-10)"
            ));
        }
        for (reference, rs) in &unclaimed {
            problems.push(format!(
                "{} unclaimed outcomes under {reference}, which no abandoned command has",
                rs.len()
            ));
        }
        let known: BTreeSet<&str> = self
            .commands
            .values()
            .filter_map(|c| c.issued.reference.as_deref())
            .collect();
        for r in server_references {
            if !known.contains(r.as_str()) {
                problems.push(format!("the server saw an invented reference {r}"));
            }
        }
        for (label, answers) in &self.reads {
            if answers.len() != 1 {
                problems.push(format!("q{label} read ended {} times", answers.len()));
            }
        }
        for (label, t) in &self.subscriptions {
            if t.check.ended > 1 {
                problems.push(format!("u{label} ended {} times", t.check.ended));
            }
            for (generation, seen) in &t.generations {
                check_generation(
                    &format!("u{label} {}#{generation}", t.name),
                    seen,
                    cluster.emitted(&t.name, *generation),
                    &mut problems,
                );
            }
        }
        self.check_dataplane(cluster, &mut problems);
        for m in cluster.misbehaviour() {
            problems.push(format!("the cluster saw: {m}"));
        }
        checks::verdict(&problems)
    }

    /// The report of a failed run: the seed, how to replay it, what broke, and the trace.
    pub fn report(
        &self,
        seed: u64,
        transport: &str,
        problems: &str,
        cluster_trace: &[String],
    ) -> String {
        let mut s = format!(
            "seed {seed} over {transport} broke an invariant (replay: NERVIX_SEED={seed}; real sockets replay the operations and faults, not their timing):\n{problems}\napplication trace:\n"
        );
        for l in &self.trace {
            let _ = writeln!(s, "  {l}");
        }
        let _ = writeln!(s, "cluster trace (last 200 lines):");
        for l in cluster_trace.iter().rev().take(200).rev() {
            let _ = writeln!(s, "  {l}");
        }
        s
    }
}

/// The execution reference a result names, if it names one.
fn result_reference(result: &CommandResult) -> Option<String> {
    match result {
        CommandResult::Completed(r) | CommandResult::Failed(Failure::Outcome(r)) => {
            Some(r.reference().to_string())
        }
        CommandResult::Uncertain { command, .. } => Some(command.reference.to_string()),
        _ => None,
    }
}

/// Checks one generation: what the application read is a prefix of what the cluster sent,
/// item by item; an overflow gap stands for whole items whose rows it counts.
fn check_generation(id: &str, seen: &[Seen], emitted: &[Emitted], problems: &mut Vec<String>) {
    let mut i = 0;
    for (k, s) in seen.iter().enumerate() {
        match s {
            Seen::Overflow(rows) => {
                let mut sum = 0;
                while sum < *rows && i < emitted.len() {
                    sum += emitted[i].rows();
                    i += 1;
                }
                if sum != *rows {
                    problems.push(format!(
                        "{id} item {k}: an overflow of {rows} rows does not cover whole items sent ({emitted:?})"
                    ));
                    return;
                }
            }
            Seen::Item(item) => {
                if emitted.get(i) != Some(item) {
                    problems.push(format!(
                        "{id} item {k} reads {item:?}, the cluster sent {:?} there (all it sent: {emitted:?})",
                        emitted.get(i)
                    ));
                    return;
                }
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(first: u64, count: u64) -> Seen {
        Seen::Item(Emitted::Rows { first, count })
    }

    fn problems(seen: &[Seen], emitted: &[Emitted]) -> Vec<String> {
        let mut p = Vec::new();
        check_generation("u1 s0#1", seen, emitted, &mut p);
        p
    }

    #[test]
    fn s_5_a_generation_reads_a_prefix_of_what_the_cluster_sent_with_gaps_in_place() {
        let sent = [
            Emitted::Rows { first: 1, count: 3 },
            Emitted::RowsSkipped { count: 2 },
            Emitted::Rows { first: 6, count: 1 },
            Emitted::DeliveryLost { count: 2 },
            Emitted::Rows { first: 9, count: 2 },
        ];
        let all = [
            rows(1, 3),
            Seen::Item(Emitted::RowsSkipped { count: 2 }),
            rows(6, 1),
            Seen::Item(Emitted::DeliveryLost { count: 2 }),
            rows(9, 2),
        ];
        assert!(problems(&all, &sent).is_empty());
        // The rest lost with a stream is a prefix, and fine.
        assert!(problems(&all[..2], &sent).is_empty());
        assert!(problems(&[], &sent).is_empty());
        // A batch missing in the middle, without its gap.
        assert!(!problems(&[rows(1, 3), rows(6, 1)], &sent).is_empty());
        // A gap of another size, or a gap where rows were sent.
        let wrong = [rows(1, 3), Seen::Item(Emitted::RowsSkipped { count: 1 })];
        assert!(!problems(&wrong, &sent).is_empty());
        let wrong = [Seen::Item(Emitted::DeliveryLost { count: 3 })];
        assert!(!problems(&wrong, &sent).is_empty());
        // A batch read twice, or more than was sent.
        assert!(!problems(&[rows(1, 3), rows(1, 3)], &sent).is_empty());
        assert!(!problems(&[rows(1, 4)], &sent).is_empty());
        let mut longer = all.to_vec();
        longer.push(rows(11, 1));
        assert!(!problems(&longer, &sent).is_empty());
    }

    #[test]
    fn s_8_an_overflow_gap_stands_for_whole_items_it_counts() {
        let sent = [
            Emitted::Rows { first: 1, count: 3 },
            Emitted::RowsSkipped { count: 2 },
            Emitted::Rows { first: 6, count: 1 },
        ];
        assert!(problems(&[Seen::Overflow(5), rows(6, 1)], &sent).is_empty());
        assert!(!problems(&[Seen::Overflow(4), rows(6, 1)], &sent).is_empty());
        assert!(!problems(&[Seen::Overflow(5), rows(7, 1)], &sent).is_empty());
    }

    #[test]
    fn c_4_an_unended_read_an_invented_reference_and_a_lost_abandoned_outcome_fail_the_check() {
        let cluster = SimCluster::new(crate::cluster::ClusterConfig::default());
        let mut obs = Observed::default();
        obs.read_issued(0, 1);
        let p = obs.check(&cluster, &[]).expect_err("an unended read");
        assert!(p.contains("q1 read ended 0 times"), "{p}");
        obs.read_ended(1, 1, "replied".into());
        assert_eq!(obs.check(&cluster, &[]), Ok(()));
        obs.read_ended(2, 1, "replied".into());
        let p = obs.check(&cluster, &[]).expect_err("a read ended twice");
        assert!(p.contains("q1 read ended 2 times"), "{p}");

        let mut obs = Observed::default();
        obs.command_issued(0, 1, "CREATE RELAY a;", "ref-a", false);
        let p = obs
            .check(&cluster, &["ref-a".into(), "ref-b".into()])
            .expect_err("a command that never ended, and a reference nobody issued");
        assert!(p.contains("ended 0 times"), "{p}");
        assert!(p.contains("invented reference ref-b"), "{p}");
        assert!(!p.contains("invented reference ref-a"), "{p}");

        let mut obs = Observed::default();
        obs.command_issued(0, 1, "CREATE RELAY a;", "ref-a", false);
        obs.command_abandoned(1, 1);
        assert_eq!(obs.missing_unclaimed(), 1);
        let p = obs
            .check(&cluster, &["ref-a".into()])
            .expect_err("an abandoned command whose outcome never came back");
        assert!(p.contains("no outcome back"), "{p}");
    }
}
