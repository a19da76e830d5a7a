//! Producers and consumers in seeded scenarios: the draws the simulation makes for them and
//! the checks that do not depend on how frames travel, shared by the simulation and by runs
//! over real transports.
//!
//! [`op`] turns the simulation's dataplane pick (see [`super::Draw::Dataplane`]) into an
//! operation; [`producer`], [`submissions`], [`batch_ids`] and [`decision`] draw its details
//! from the seed's generator in a fixed order, so the same seed draws the same operations.

use super::Observed;
use crate::cluster::{delivery_ids, token_number, SimCluster, INGESTOR};
use arrow_array::{Array, UInt64Array};
use nervix_protocol::client::{BatchOutcome, Decision, Delivery, SettleResult};
use nervix_protocol::rng::Rng;
use std::collections::BTreeMap;

/// One producer or consumer operation of the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Op {
    /// Open a producer (drawn while fewer than two are open); see [`producer`].
    OpenProducer,
    /// Submit [`submissions`] batches to one open producer.
    Submit,
    /// Close one open producer.
    CloseProducer,
    /// Open a consumer of the emitter (drawn while fewer than two are open).
    OpenConsumer,
    /// Read a delivery from one open consumer.
    Read,
    /// Settle one delivery read and not settled yet; see [`decision`].
    Settle,
    /// Close one open consumer.
    CloseConsumer,
    /// Nothing.
    Nothing,
}

/// The operation of dataplane pick `pick` (0 to 49) with `producers` producers and
/// `consumers` consumers open. Draws nothing.
pub fn op(pick: u64, producers: usize, consumers: usize) -> Op {
    match pick {
        0..=4 if producers < 2 => Op::OpenProducer,
        5..=24 if producers > 0 => Op::Submit,
        25 if producers > 0 => Op::CloseProducer,
        26..=29 if consumers < 2 => Op::OpenConsumer,
        30..=38 if consumers > 0 => Op::Read,
        39..=48 if consumers > 0 => Op::Settle,
        49 if consumers > 0 => Op::CloseConsumer,
        _ => Op::Nothing,
    }
}

/// One of `len` open things (at least one), drawn.
pub fn pick(rng: &mut Rng, len: usize) -> usize {
    rng.below(len.max(1) as u64) as usize
}

/// A producer to open: its ingestor (one in ten names one that does not exist) and the
/// credit it asks for, 1 to 8 batches and 16 KiB to 512 KiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerDraw {
    /// The ingestor.
    pub ingestor: &'static str,
    /// Batches of credit asked for.
    pub batches: u32,
    /// Bytes of credit asked for.
    pub bytes: u64,
}

/// Draws a producer to open.
pub fn producer(rng: &mut Rng) -> ProducerDraw {
    let ingestor = if rng.chance(0.1) { "nope" } else { INGESTOR };
    let batches = 1 + rng.below(8) as u32;
    let bytes = 16 * 1024 * (1 + rng.below(32));
    ProducerDraw {
        ingestor,
        batches,
        bytes,
    }
}

/// How many batches one submit operation hands over, 1 to 3.
pub fn submissions(rng: &mut Rng) -> u64 {
    1 + rng.below(3)
}

/// The ids of one batch, 1 to 5 rows, each unique in the run: taken from `next_id`.
pub fn batch_ids(rng: &mut Rng, next_id: &mut u64) -> Vec<u64> {
    let rows = 1 + rng.below(5);
    (0..rows)
        .map(|_| {
            *next_id += 1;
            *next_id
        })
        .collect()
}

/// The `name` column of a batch of `ids` (null for every third id).
pub fn batch_names(ids: &[u64]) -> Vec<Option<&'static str>> {
    ids.iter().map(|i| (i % 3 != 0).then_some("ünï")).collect()
}

/// A settlement decision, and whether it ends the delivery: Ack 7 in 10, Retry 2 in 10,
/// Reject 1 in 10.
pub fn decision(rng: &mut Rng) -> (Decision, bool) {
    match rng.below(10) {
        0..=6 => (Decision::Ack, true),
        7..=8 => (Decision::Retry, false),
        _ => (Decision::Reject("not wanted here".into()), true),
    }
}

/// A short name of an outcome's kind, for summaries.
pub fn outcome_kind(outcome: &BatchOutcome) -> &'static str {
    match outcome {
        BatchOutcome::Completed => "completed",
        BatchOutcome::NotAdmitted { .. } => "not admitted",
        BatchOutcome::Failed { .. } => "failed",
        BatchOutcome::OutcomeUnknown { .. } => "outcome unknown",
        BatchOutcome::Unknown => "unknown",
        BatchOutcome::Rejected { .. } => "rejected",
        BatchOutcome::NotSent => "not sent",
        _ => "other",
    }
}

/// How often the cluster may have ingested a batch that ended with `outcome`: a completed
/// batch exactly once, one never admitted or never sent not at all, any other at most once.
pub fn ingestions_allowed(outcome: &BatchOutcome) -> std::ops::RangeInclusive<usize> {
    match outcome {
        BatchOutcome::Completed => 1..=1,
        BatchOutcome::NotAdmitted { .. } | BatchOutcome::NotSent => 0..=0,
        _ => 0..=1,
    }
}

/// Checks that a delivery holds exactly the rows the emitter wrote for its identity (EC-3),
/// and as many as it says: the identity's number, and what is wrong (nothing when it holds).
pub fn check_delivery(d: &Delivery) -> (u64, Vec<String>) {
    let identity = token_number(&d.identity);
    let mut problems = Vec::new();
    let ids = d
        .batch
        .column(0)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .map(|a| a.values().to_vec());
    if ids.as_deref() != Some(delivery_ids(identity).as_slice()) {
        problems.push(format!(
            "delivery {identity} holds {ids:?}, written {:?}",
            delivery_ids(identity)
        ));
    }
    if d.batch.column(1).len() != d.members as usize {
        problems.push(format!("delivery {identity} members differ"));
    }
    (identity, problems)
}

/// One batch the application of a run over real transports submitted.
#[derive(Debug)]
struct BatchSeen {
    producer: u64,
    ids: Vec<u64>,
    outcomes: Vec<BatchOutcome>,
    /// The application stopped waiting for its outcome.
    dropped: bool,
}

/// One settlement the application of a run over real transports asked for.
#[derive(Debug)]
struct SettleSeen {
    identity: u64,
    attempt: u64,
    ends: bool,
    results: Vec<Result<SettleResult, String>>,
}

/// What the application of a run over real transports saw of its producers and consumers.
#[derive(Debug, Default)]
pub(super) struct Seen {
    producers: u64,
    consumers: u64,
    batches: BTreeMap<u64, BatchSeen>,
    /// The engine's name of each batch, by producer: the label it was handed out for.
    names: BTreeMap<(u64, u64), u64>,
    deliveries: u64,
    settles: BTreeMap<u64, SettleSeen>,
}

impl Observed {
    /// Producer `label` was opened as `d` drew it, or refused.
    pub fn producer_opened(
        &mut self,
        ms: u64,
        label: u64,
        d: &ProducerDraw,
        r: Result<(), String>,
    ) {
        match r {
            Ok(()) => {
                self.dataplane.producers += 1;
                self.log(
                    ms,
                    format!(
                        "app open producer p{label} {} {}/{}",
                        d.ingestor, d.batches, d.bytes
                    ),
                );
            }
            Err(e) => self.log(
                ms,
                format!("app open producer p{label} {} refused: {e}", d.ingestor),
            ),
        }
    }

    /// Consumer `label` was opened, or refused.
    pub fn consumer_opened(&mut self, ms: u64, label: u64, r: Result<(), String>) {
        match r {
            Ok(()) => {
                self.dataplane.consumers += 1;
                self.log(ms, format!("app open consumer e{label}"));
            }
            Err(e) => self.log(ms, format!("app open consumer e{label} refused: {e}")),
        }
    }

    /// Batch `label` of `ids` was handed to producer `producer` and named `batch` by the
    /// engine; no two batches of one producer may share a name.
    pub fn batch_submitted(
        &mut self,
        ms: u64,
        producer: u64,
        label: u64,
        batch: u64,
        ids: Vec<u64>,
    ) {
        self.log(
            ms,
            format!("app submit b{label} to p{producer} as {batch} ids {ids:?}"),
        );
        if let Some(other) = self.dataplane.names.insert((producer, batch), label) {
            self.problems.push(format!(
                "b{label} of p{producer} was named {batch}, the name of b{other}"
            ));
        }
        self.dataplane.batches.insert(
            label,
            BatchSeen {
                producer,
                ids,
                outcomes: Vec::new(),
                dropped: false,
            },
        );
    }

    /// The application stopped waiting for the outcome of batch `label`.
    pub fn batch_dropped(&mut self, ms: u64, label: u64) {
        self.log(ms, format!("app drops the wait for b{label}"));
        if let Some(b) = self.dataplane.batches.get_mut(&label) {
            b.dropped = true;
        }
    }

    /// Batch `label`'s wait ended with `outcome`.
    pub fn batch_ended(&mut self, ms: u64, label: u64, outcome: BatchOutcome) {
        self.log(ms, format!("app b{label} -> {outcome:?}"));
        match self.dataplane.batches.get_mut(&label) {
            Some(b) => b.outcomes.push(outcome),
            None => self
                .problems
                .push(format!("an outcome for b{label}, never submitted")),
        }
    }

    /// Consumer `consumer` read delivery `d`: checks its rows and returns its identity.
    pub fn delivered(&mut self, ms: u64, consumer: u64, d: &Delivery) -> u64 {
        let (identity, wrong) = check_delivery(d);
        self.problems
            .extend(wrong.into_iter().map(|w| format!("e{consumer} {w}")));
        self.dataplane.deliveries += 1;
        self.log(
            ms,
            format!(
                "app e{consumer} delivery {identity} attempt {}",
                token_number(&d.reference.reference)
            ),
        );
        identity
    }

    /// Settlement `label` of delivery `identity`'s attempt `attempt` was asked with
    /// `decision`; `ends` tells whether the decision ends the delivery.
    pub fn settle_issued(
        &mut self,
        ms: u64,
        label: u64,
        identity: u64,
        attempt: u64,
        decision: &Decision,
        ends: bool,
    ) {
        self.log(
            ms,
            format!("app settle d{label} delivery {identity} attempt {attempt} {decision:?}"),
        );
        self.dataplane.settles.insert(
            label,
            SettleSeen {
                identity,
                attempt,
                ends,
                results: Vec::new(),
            },
        );
    }

    /// Settlement `label`'s wait ended: the server's answer, or why there was none.
    pub fn settle_ended(&mut self, ms: u64, label: u64, result: Result<SettleResult, String>) {
        self.log(ms, format!("app d{label} -> {result:?}"));
        if let Some(s) = self.dataplane.settles.get_mut(&label) {
            s.results.push(result);
        }
    }

    /// Settlement `label` was refused before anything was sent (a reference the engine no
    /// longer holds, say): it has no answer to wait for.
    pub fn settle_refused(&mut self, ms: u64, label: u64, why: &str) {
        self.log(ms, format!("app d{label} refused: {why}"));
        self.dataplane.settles.remove(&label);
    }

    /// A one-line summary of the producers and consumers.
    pub fn dataplane_summary(&self) -> String {
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for o in self.dataplane.batches.values().flat_map(|b| &b.outcomes) {
            *kinds.entry(outcome_kind(o)).or_default() += 1;
        }
        let dropped = self
            .dataplane
            .batches
            .values()
            .filter(|b| b.dropped)
            .count();
        let confirmed = self
            .dataplane
            .settles
            .values()
            .flat_map(|s| &s.results)
            .filter(|r| matches!(r, Ok(SettleResult::Confirmed)))
            .count();
        format!(
            "{} producers, {} batches {kinds:?}, {dropped} waits dropped; {} consumers, {} deliveries, {} settlements, {confirmed} confirmed",
            self.dataplane.producers,
            self.dataplane.batches.len(),
            self.dataplane.consumers,
            self.dataplane.deliveries,
            self.dataplane.settles.len(),
        )
    }

    /// The checks of producers and consumers against the cluster's record: every batch
    /// waited for ended with exactly one outcome (one whose wait was dropped with at most
    /// one); the cluster ingested each batch as often as its outcome allows (a completed one
    /// exactly once, see [`ingestions_allowed`]) and nothing nobody submitted; every
    /// settlement waited for ended once; no delivery attempt was confirmed settled twice, and
    /// no delivery was confirmed acknowledged or rejected twice.
    pub(super) fn check_dataplane(&self, cluster: &SimCluster, problems: &mut Vec<String>) {
        let mut ingested: BTreeMap<u64, (Vec<u64>, usize)> = BTreeMap::new();
        for ids in cluster.ingested() {
            let Some(first) = ids.first() else {
                problems.push("the cluster ingested an empty batch".into());
                continue;
            };
            let e = ingested.entry(*first).or_insert_with(|| (ids.clone(), 0));
            e.1 += 1;
            if e.0 != *ids {
                problems.push(format!(
                    "the cluster ingested {ids:?} and {:?}, which share an id",
                    e.0
                ));
            }
        }
        for (label, b) in &self.dataplane.batches {
            let h = format!("b{label} of p{}", b.producer);
            if b.outcomes.len() > 1 || (b.outcomes.is_empty() && !b.dropped) {
                problems.push(format!(
                    "{h} ended with {} outcomes: {:?}",
                    b.outcomes.len(),
                    b.outcomes
                ));
            }
            let times = match b.ids.first().and_then(|f| ingested.remove(f)) {
                Some((ids, n)) if ids == b.ids => n,
                Some((ids, n)) => {
                    problems.push(format!("{h} of ids {:?} was ingested as {ids:?}", b.ids));
                    n
                }
                None => 0,
            };
            let allowed = b.outcomes.first().map_or(0..=1, ingestions_allowed);
            if !allowed.contains(&times) {
                problems.push(format!(
                    "{h} ended {:?} but the cluster ingested it {times} times",
                    b.outcomes.first()
                ));
            }
        }
        for (ids, n) in ingested.values() {
            problems.push(format!(
                "the cluster ingested {ids:?} {n} times, which no batch submitted holds"
            ));
        }
        let mut per_attempt: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut per_delivery: BTreeMap<u64, u32> = BTreeMap::new();
        for (label, s) in &self.dataplane.settles {
            if s.results.len() != 1 {
                problems.push(format!("d{label} ended {} times", s.results.len()));
            }
            for r in &s.results {
                match r {
                    Ok(SettleResult::Confirmed) => {
                        *per_attempt.entry((s.identity, s.attempt)).or_default() += 1;
                        if s.ends {
                            *per_delivery.entry(s.identity).or_default() += 1;
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        problems.push(format!("d{label}'s wait ended without an answer: {e}"))
                    }
                }
            }
        }
        for ((identity, attempt), n) in per_attempt {
            if n > 1 {
                problems.push(format!(
                    "delivery {identity} attempt {attempt} was confirmed settled {n} times"
                ));
            }
        }
        for (identity, n) in per_delivery {
            if n > 1 {
                problems.push(format!(
                    "delivery {identity} was confirmed acknowledged or rejected {n} times"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;

    fn cluster(ingested: &[&[u64]]) -> SimCluster {
        let mut c = SimCluster::new(ClusterConfig::default());
        for ids in ingested {
            c.record_ingested(ids.to_vec());
        }
        c
    }

    fn problems(obs: &Observed, ingested: &[&[u64]]) -> String {
        obs.check(&cluster(ingested), &[]).err().unwrap_or_default()
    }

    #[test]
    fn p_5_a_batch_ends_once_and_the_cluster_ingested_it_as_its_outcome_allows() {
        let mut obs = Observed::default();
        obs.batch_submitted(0, 1, 2, 1, vec![1, 2]);
        let p = problems(&obs, &[&[1, 2]]);
        assert!(p.contains("b2 of p1 ended with 0 outcomes"), "{p}");
        obs.batch_ended(1, 2, BatchOutcome::Completed);
        assert_eq!(problems(&obs, &[&[1, 2]]), "");
        // Completed but never ingested, ingested twice, or ingested with other rows.
        let p = problems(&obs, &[]);
        assert!(p.contains("ingested it 0 times"), "{p}");
        let p = problems(&obs, &[&[1, 2], &[1, 2]]);
        assert!(p.contains("ingested it 2 times"), "{p}");
        let p = problems(&obs, &[&[1, 3]]);
        assert!(p.contains("was ingested as [1, 3]"), "{p}");
        // A batch nobody submitted (one dropped while it waited for room, say).
        let p = problems(&obs, &[&[1, 2], &[7]]);
        assert!(p.contains("ingested [7] 1 times, which no batch"), "{p}");
        // A second outcome.
        obs.batch_ended(2, 2, BatchOutcome::Unknown);
        let p = problems(&obs, &[&[1, 2]]);
        assert!(p.contains("ended with 2 outcomes"), "{p}");

        // An outcome for a batch never submitted.
        let mut obs = Observed::default();
        obs.batch_ended(0, 9, BatchOutcome::Completed);
        let p = problems(&obs, &[]);
        assert!(p.contains("an outcome for b9, never submitted"), "{p}");

        // Never sent: never ingested. Unknown: at most once. A dropped wait: at most once.
        let mut obs = Observed::default();
        obs.batch_submitted(0, 1, 3, 1, vec![5]);
        obs.batch_ended(1, 3, BatchOutcome::NotSent);
        assert_eq!(problems(&obs, &[]), "");
        let p = problems(&obs, &[&[5]]);
        assert!(p.contains("ingested it 1 times"), "{p}");
        let mut obs = Observed::default();
        obs.batch_submitted(0, 1, 4, 1, vec![6]);
        obs.batch_ended(1, 4, BatchOutcome::Unknown);
        assert_eq!(problems(&obs, &[]), "");
        assert_eq!(problems(&obs, &[&[6]]), "");
        assert!(problems(&obs, &[&[6], &[6]]).contains("ingested it 2 times"));
        let mut obs = Observed::default();
        obs.batch_submitted(0, 1, 5, 1, vec![8]);
        obs.batch_dropped(0, 5);
        assert_eq!(problems(&obs, &[]), "");
        assert_eq!(problems(&obs, &[&[8]]), "");
        assert!(problems(&obs, &[&[8], &[8]]).contains("ingested it 2 times"));

        // Two batches of one producer under one name.
        let mut obs = Observed::default();
        obs.batch_submitted(0, 1, 6, 4, vec![10]);
        obs.batch_submitted(0, 1, 7, 4, vec![11]);
        obs.batch_ended(1, 6, BatchOutcome::NotSent);
        obs.batch_ended(1, 7, BatchOutcome::NotSent);
        let p = problems(&obs, &[]);
        assert!(p.contains("b7 of p1 was named 4, the name of b6"), "{p}");
    }

    #[test]
    fn ec_4_a_settlement_ends_once_and_is_confirmed_at_most_once_per_attempt_and_delivery() {
        let mut obs = Observed::default();
        obs.settle_issued(0, 1, 5, 10, &Decision::Ack, true);
        let p = problems(&obs, &[]);
        assert!(p.contains("d1 ended 0 times"), "{p}");
        obs.settle_ended(1, 1, Ok(SettleResult::Confirmed));
        assert_eq!(problems(&obs, &[]), "");
        // A retry confirmed on an earlier attempt does not end the delivery.
        obs.settle_issued(2, 2, 5, 9, &Decision::Retry, false);
        obs.settle_ended(3, 2, Ok(SettleResult::Confirmed));
        assert_eq!(problems(&obs, &[]), "");
        // A second final confirmation of the same delivery, on a later attempt.
        obs.settle_issued(4, 3, 5, 11, &Decision::Reject("no".into()), true);
        obs.settle_ended(5, 3, Ok(SettleResult::Confirmed));
        let p = problems(&obs, &[]);
        assert!(
            p.contains("delivery 5 was confirmed acknowledged or rejected 2 times"),
            "{p}"
        );

        // One attempt confirmed twice.
        let mut obs = Observed::default();
        obs.settle_issued(0, 1, 6, 12, &Decision::Retry, false);
        obs.settle_ended(1, 1, Ok(SettleResult::Confirmed));
        obs.settle_issued(2, 2, 6, 12, &Decision::Retry, false);
        obs.settle_ended(3, 2, Ok(SettleResult::Confirmed));
        let p = problems(&obs, &[]);
        assert!(
            p.contains("delivery 6 attempt 12 was confirmed settled 2 times"),
            "{p}"
        );

        // A wait that ended without an answer, and one answered twice; a local refusal
        // has nothing to wait for.
        let mut obs = Observed::default();
        obs.settle_issued(0, 1, 7, 13, &Decision::Ack, true);
        obs.settle_ended(1, 1, Err("stopped".into()));
        obs.settle_issued(0, 2, 8, 14, &Decision::Ack, true);
        obs.settle_ended(1, 2, Ok(SettleResult::Confirmed));
        obs.settle_ended(2, 2, Ok(SettleResult::Confirmed));
        obs.settle_issued(0, 3, 9, 15, &Decision::Ack, true);
        obs.settle_refused(1, 3, "not held");
        let p = problems(&obs, &[]);
        assert!(
            p.contains("d1's wait ended without an answer: stopped"),
            "{p}"
        );
        assert!(p.contains("d2 ended 2 times"), "{p}");
        assert!(!p.contains("d3"), "{p}");
    }
}
