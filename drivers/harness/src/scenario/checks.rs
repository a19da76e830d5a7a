//! What an application may see, checked event by event: the pieces of the simulation's
//! invariants that do not depend on how frames travel, so a run over real sockets checks what
//! its application observed exactly as [`crate::sim::Simulation`] does.

use crate::cluster::{branch_key_values, is_branched, row_values, SimCluster};
use nervix_protocol::client::{
    ClockEvent, CommandResult, Failure, Gap, SubscriptionEnd, SubscriptionEvent,
};
use nervix_protocol::domain_clock::ClockState;
use nervix_protocol::rows::Value;
use nervix_protocol::schema::CommandDisposition;
use std::fmt::Debug;

/// What the application has seen of one subscription, checked as each event arrives.
#[derive(Debug, Default, Clone)]
pub struct SubscriptionCheck {
    /// The relay it reads.
    pub relay: String,
    /// The generation its rows are read against now; none before an opening and between
    /// generations.
    pub generation: Option<u64>,
    /// How many times it ended.
    pub ended: u32,
    /// Whether the application asked to delete it.
    pub delete_asked: bool,
    /// Rows read.
    pub rows: u64,
    /// One short line per event.
    pub events: Vec<String>,
}

impl SubscriptionCheck {
    /// A subscription of `relay`.
    pub fn new(relay: impl Into<String>) -> Self {
        Self {
            relay: relay.into(),
            ..Self::default()
        }
    }

    /// Checks one event against what a reader may show (S-3, S-4, R-1 to R-5): rows only
    /// within an open generation, read against that generation's schema, every value exactly
    /// what the cluster wrote; nothing after the end. Returns the event's short line; what is
    /// wrong goes to `problems`, naming `id`.
    pub fn on_event(
        &mut self,
        id: &dyn Debug,
        event: &SubscriptionEvent,
        problems: &mut Vec<String>,
    ) -> String {
        let t = self;
        if t.ended > 0 {
            problems.push(format!("{id:?} has an event after its end: {event:?}"));
        }
        let line = match event {
            SubscriptionEvent::Opened { generation, .. } => {
                t.generation = Some(*generation);
                format!("open#{generation}")
            }
            SubscriptionEvent::Rows(batch) => {
                if t.generation != Some(batch.generation()) {
                    problems.push(format!(
                        "{id:?} rows of generation {} read while {:?} is open",
                        batch.generation(),
                        t.generation
                    ));
                }
                for row in batch.rows() {
                    let (Some(Value::U64(n)), Some(Value::U64(g)), Some(Value::U64(v))) =
                        (row.cell(0), row.cell(1), row.cell(2))
                    else {
                        problems.push(format!("{id:?} a row without its number: {row:?}"));
                        continue;
                    };
                    let expected = row_values(v, g, n);
                    let got: Vec<Value<'_>> = row.iter().collect();
                    if got.len() != expected.len() || got.iter().zip(&expected).any(|(a, b)| a != b)
                    {
                        problems.push(format!(
                            "{id:?} row {n} reads {got:?}, written {expected:?}"
                        ));
                    }
                }
                if is_branched(&t.relay) {
                    let first = batch.row(0).and_then(|r| r.cell(0));
                    let key: Option<Vec<Value<'_>>> =
                        batch.branch_key().map(|k| k.iter().collect());
                    match (first, key) {
                        (Some(Value::U64(n)), Some(key)) => {
                            let expected = branch_key_values(n);
                            if key.len() != expected.len()
                                || key.iter().zip(&expected).any(|(a, b)| a != b)
                            {
                                problems.push(format!("{id:?} branch key reads {key:?}"));
                            }
                        }
                        _ => problems.push(format!("{id:?} a branched batch without its key")),
                    }
                } else if batch.branch_key().is_some() {
                    problems.push(format!("{id:?} an unbranched batch with a key"));
                }
                t.rows += batch.len() as u64;
                format!("rows{}", batch.len())
            }
            SubscriptionEvent::Gap(g) => {
                if matches!(g, Gap::SessionLost | Gap::RelayChanged { .. }) {
                    t.generation = None;
                }
                format!("gap {g:?}")
            }
            SubscriptionEvent::Refused { .. } => "refused".into(),
            SubscriptionEvent::Ended(e) => {
                t.ended += 1;
                if *e == SubscriptionEnd::Deleted && !t.delete_asked {
                    problems.push(format!("{id:?} deleted though nobody asked"));
                }
                format!("end {e:?}")
            }
            _ => "other".into(),
        };
        t.events.push(line.clone());
        line
    }
}

/// What the application has seen of one followed clock.
#[derive(Debug, Default, Clone)]
pub struct ClockCheck {
    generation: Option<u64>,
    paced: bool,
    last_tick: Option<(u64, u64)>,
    ended: bool,
}

impl ClockCheck {
    /// Checks one clock event (K-2, K-3, K-5): ticks only of the clock's current paced
    /// generation, advancing within it; nothing after the end.
    pub fn on_event(&mut self, event: &ClockEvent, problems: &mut Vec<String>) {
        let t = self;
        let domain = event.domain().to_string();
        if t.ended {
            problems.push(format!(
                "clock {domain} has an event after its end: {event:?}"
            ));
        }
        match event {
            ClockEvent::Attached { clock, .. } | ClockEvent::Changed { clock, .. } => {
                let paced = matches!(clock.state, ClockState::Paced(_));
                if !paced || t.generation != Some(clock.generation) {
                    t.last_tick = None;
                }
                t.generation = Some(clock.generation);
                t.paced = paced;
            }
            ClockEvent::AlreadyAttached { .. } | ClockEvent::Interrupted { .. } => {
                t.last_tick = None
            }
            ClockEvent::Ticked { tick, .. } => {
                let (g, id) = (tick.generation.get(), tick.tick_id.get());
                if !t.paced || t.generation != Some(g) {
                    problems.push(format!(
                        "clock {domain} tick of generation {g} while {:?} (paced {}) stands",
                        t.generation, t.paced
                    ));
                }
                if t.last_tick.is_some_and(|(lg, lid)| lg == g && lid >= id) {
                    problems.push(format!(
                        "clock {domain} tick {id} does not advance past {:?}",
                        t.last_tick
                    ));
                }
                t.last_tick = Some((g, id));
            }
            ClockEvent::Ended { .. } => t.ended = true,
            _ => {}
        }
    }
}

/// What the application issued for one command.
#[derive(Debug, Default, Clone)]
pub struct IssuedCommand {
    /// Its execution reference.
    pub reference: Option<String>,
    /// The reference of the uncertain command it repeats, if it is a recovery.
    pub recovery_of: Option<String>,
    /// Whether it was appended to a held transaction.
    pub append: bool,
}

/// Checks how one command ended against what the cluster applied (E-3, D-4, C-4): it ended
/// exactly once; completed only with its own completed outcome that the cluster recorded
/// under its own reference; failed only when the cluster recorded no completion; uncertain
/// only under its own reference; an append reported accepted carries its admission.
pub fn check_command(
    h: &dyn Debug,
    issued: &IssuedCommand,
    results: &[CommandResult],
    cluster: &SimCluster,
    problems: &mut Vec<String>,
) {
    if results.len() != 1 {
        problems.push(format!("{h:?} ended {} times", results.len()));
        return;
    }
    let Some(reference) = &issued.reference else {
        return;
    };
    if let Some(original) = &issued.recovery_of {
        if original != reference {
            problems.push(format!("{h:?} recovered under a new reference"));
        }
    }
    let recorded = cluster.recorded_outcome(reference);
    let recorded_completed = recorded.is_some_and(|o| {
        o.disposition.command_disposition_type() == CommandDisposition::CommandCompleted
    });
    match &results[0] {
        CommandResult::Completed(report) => {
            if report.reference().as_str() != reference
                || report.outcome().execution_reference() != reference
            {
                problems.push(format!("{h:?} completed by another command's outcome"));
            }
            if !recorded_completed {
                problems.push(format!(
                    "{h:?} reported completed, the cluster recorded {recorded:?}"
                ));
            }
            if issued.append
                && report.outcome().transaction_admission().is_none()
                && report.statements().is_empty()
                && recorded.is_some_and(|o| o.transaction_admission.is_some())
            {
                problems.push(format!(
                    "{h:?} append reported accepted without its admission"
                ));
            }
        }
        CommandResult::Failed(f) if recorded_completed => {
            problems.push(format!(
                "{h:?} reported failed ({}), but it completed",
                short(f)
            ));
        }
        CommandResult::Uncertain { command, .. } if command.reference.as_str() != reference => {
            problems.push(format!("{h:?} uncertain under another reference"));
        }
        _ => {}
    }
}

/// A failure in a few words.
pub fn short(f: &Failure) -> String {
    match f {
        Failure::Outcome(r) => format!(
            "Outcome({})",
            r.outcome().disposition_type().variant_name().unwrap_or("?")
        ),
        other => format!("{other:?}"),
    }
}

/// One line naming how a command ended.
pub fn result_line(result: &CommandResult) -> String {
    match result {
        CommandResult::Completed(r) => format!("Completed {:?}", r.origin()),
        CommandResult::Failed(f) => format!("Failed {}", short(f)),
        CommandResult::Uncertain { cause, .. } => format!("Uncertain {cause:?}"),
        _ => "?".into(),
    }
}

/// The verdict on a run: `Ok` when nothing broke, else the first 20 problems, one indented
/// line each.
pub(crate) fn verdict(problems: &[String]) -> Result<(), String> {
    if problems.is_empty() {
        return Ok(());
    }
    let mut s = String::new();
    for p in problems.iter().take(20) {
        s.push_str("  ");
        s.push_str(p);
        s.push('\n');
    }
    Err(s)
}
