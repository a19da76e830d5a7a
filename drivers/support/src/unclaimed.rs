//! Outcomes kept for callers that stopped waiting (C-10).
//!
//! A driver and every pending command it handed out share one [`Unclaimed`] store: a wait
//! dropped after its outcome arrived, but before it was read, puts the outcome here itself,
//! and the driver puts here the outcomes of commands whose waits were dropped earlier. The
//! application takes them all through its `unclaimed` call.
//!
//! The store is bounded in count ([`UNCLAIMED`]) and in bytes ([`UNCLAIMED_BYTES`]). When a
//! new outcome does not fit, settled outcomes (`Completed`, `Failed`) go first, oldest first:
//! an `Uncertain` outcome carries the only copy of the command `recover` repeats, so one is
//! evicted only when nothing but uncertain outcomes is kept. Every eviction is counted
//! (`lost`, [`Unclaimed::lost_uncertain`]); nothing goes silently.

use nervix_protocol::client::{BatchId, BatchOutcome, CommandResult, Failure, ProducerId};
use std::ops::Deref;

pub use sansio_kit::unclaimed::{Gate, Keep, UNCLAIMED, UNCLAIMED_BYTES};

/// What keeping `r` costs, in bytes: the frame an outcome came in, or the text a failure or
/// an uncertain command carries, plus a fixed overhead for the rest.
pub fn weight(r: &CommandResult) -> usize {
    const FIXED: usize = 128;
    FIXED
        + match r {
            CommandResult::Completed(rep) => rep.frame().len(),
            CommandResult::Failed(Failure::Outcome(rep)) => rep.frame().len(),
            CommandResult::Failed(Failure::Rejected { message, .. }) => message.len(),
            CommandResult::Failed(_) => 0,
            CommandResult::Uncertain { command, .. } => {
                command.query.len() + command.domain.as_ref().map_or(0, String::len)
            }
            // Anything a later version adds is counted at its fixed overhead.
            #[allow(unreachable_patterns)]
            _ => 0,
        }
}

/// How command outcomes are kept: weighed by [`weight`]; an `Uncertain` outcome is the
/// precious one, carrying the only copy of the command `recover` repeats.
#[derive(Debug, Clone, Copy, Default)]
pub struct Commands;

impl Keep<CommandResult> for Commands {
    fn weight(r: &CommandResult) -> usize {
        weight(r)
    }
    fn precious(r: &CommandResult) -> bool {
        matches!(r, CommandResult::Uncertain { .. })
    }
}

/// Outcomes kept for callers that stopped waiting, bounded to [`UNCLAIMED`] outcomes and
/// [`UNCLAIMED_BYTES`] bytes; clones share one store. `sansio-kit`'s store (its `keep`,
/// `take`, `len`, `bytes`, `lost` through `Deref`) with the Nervix policy [`Commands`].
#[derive(Debug, Clone, Default)]
pub struct Unclaimed(sansio_kit::unclaimed::Unclaimed<CommandResult, Commands>);

impl Deref for Unclaimed {
    type Target = sansio_kit::unclaimed::Unclaimed<CommandResult, Commands>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Unclaimed {
    /// How many of the evicted outcomes were uncertain: their commands can no longer be
    /// recovered from this store.
    pub fn lost_uncertain(&self) -> u64 {
        self.0.lost_precious()
    }
}

/// The outcome of a batch whose handle was dropped before it read it (P-7): which batch of
/// which producer, and its one outcome.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UnclaimedBatch {
    /// The producer that submitted it.
    pub producer: ProducerId,
    /// The engine's name of the batch (its handle's `id()`).
    pub batch: BatchId,
    /// Its one outcome.
    pub outcome: BatchOutcome,
}

impl UnclaimedBatch {
    /// The outcome of `batch` of `producer`.
    pub fn new(producer: ProducerId, batch: BatchId, outcome: BatchOutcome) -> Self {
        Self {
            producer,
            batch,
            outcome,
        }
    }
}

/// How batch outcomes are kept: a fixed overhead plus the server's words; an outcome that
/// leaves the batch's fate open (`Unknown`, `OutcomeUnknown`) is the precious one, since
/// nothing else tells the application to look at the graph.
#[derive(Debug, Clone, Copy, Default)]
pub struct Batches;

impl Keep<UnclaimedBatch> for Batches {
    fn weight(b: &UnclaimedBatch) -> usize {
        const FIXED: usize = 64;
        FIXED
            + match &b.outcome {
                BatchOutcome::NotAdmitted { message, .. }
                | BatchOutcome::Failed { message, .. }
                | BatchOutcome::OutcomeUnknown { message, .. }
                | BatchOutcome::Rejected { message } => message.len(),
                _ => 0,
            }
    }
    fn precious(b: &UnclaimedBatch) -> bool {
        matches!(
            b.outcome,
            BatchOutcome::Unknown | BatchOutcome::OutcomeUnknown { .. }
        )
    }
}

/// Batch outcomes kept for handles dropped before they read them (P-7), bounded to
/// [`UNCLAIMED`] outcomes and [`UNCLAIMED_BYTES`] bytes, apart from the commands' store; clones
/// share one store.
pub type UnclaimedBatches = sansio_kit::unclaimed::Unclaimed<UnclaimedBatch, Batches>;

#[cfg(test)]
mod tests {
    use super::*;
    use nervix_protocol::client::{RetainedCommand, UncertainCause};
    use nervix_protocol::time::Timestamp;

    fn uncertain(query: &str) -> CommandResult {
        CommandResult::Uncertain {
            command: RetainedCommand {
                reference: nervix_protocol::command::ExecutionReference::parse(
                    "0190a3d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
                )
                .expect("a UUIDv7"),
                query: query.to_string(),
                domain: None,
                position: None,
                preview: None,
                created: Timestamp::from_nanos(0),
            },
            cause: UncertainCause::Deadline,
        }
    }

    fn failed(message: &str) -> CommandResult {
        CommandResult::Failed(Failure::Rejected {
            rejection: nervix_protocol::schema::RequestRejection::InvalidRequest,
            message: message.to_string(),
        })
    }

    fn query_of(r: &CommandResult) -> &str {
        match r {
            CommandResult::Uncertain { command, .. } => &command.query,
            CommandResult::Failed(Failure::Rejected { message, .. }) => message,
            _ => "",
        }
    }

    #[test]
    fn c_10_a_full_store_counts_every_eviction() {
        let u = Unclaimed::default();
        for i in 0..UNCLAIMED + 5 {
            u.keep(failed(&i.to_string()));
        }
        assert_eq!(u.len(), UNCLAIMED);
        assert_eq!(u.lost(), 5);
        assert_eq!(u.lost_uncertain(), 0);
        let kept = u.take();
        assert_eq!(query_of(&kept[0]), "5", "the oldest go first");
        assert_eq!(query_of(kept.last().unwrap()), (UNCLAIMED + 4).to_string());
        assert_eq!(u.bytes(), 0);
        assert!(u.is_empty());
    }

    #[test]
    fn c_10_an_uncertain_outcome_outlives_settled_ones() {
        let u = Unclaimed::default();
        u.keep(uncertain("first"));
        for i in 0..UNCLAIMED + 10 {
            u.keep(failed(&i.to_string()));
        }
        assert_eq!(u.lost(), 11);
        assert_eq!(u.lost_uncertain(), 0);
        let kept = u.take();
        assert_eq!(kept.len(), UNCLAIMED);
        assert_eq!(query_of(&kept[0]), "first", "kept, in its place");
        assert_eq!(query_of(&kept[1]), "11");
    }

    #[test]
    fn c_10_only_uncertain_outcomes_evict_the_oldest_and_count_it() {
        let u = Unclaimed::default();
        for i in 0..UNCLAIMED + 1 {
            u.keep(uncertain(&i.to_string()));
        }
        assert_eq!(u.lost(), 1);
        assert_eq!(u.lost_uncertain(), 1);
        assert_eq!(query_of(&u.take()[0]), "1");
    }

    #[test]
    fn c_10_the_store_is_bounded_in_bytes() {
        let u = Unclaimed::default();
        let big = "x".repeat(1 << 20);
        for _ in 0..40 {
            u.keep(uncertain(&big));
        }
        assert!(u.bytes() <= UNCLAIMED_BYTES, "{} bytes kept", u.bytes());
        let fit = UNCLAIMED_BYTES / weight(&uncertain(&big));
        assert_eq!(u.len(), fit);
        assert_eq!(u.lost(), (40 - fit) as u64);
        assert_eq!(u.lost_uncertain(), (40 - fit) as u64);
        // Exactly full is not over the bound.
        let u = Unclaimed::default();
        let w = weight(&failed(""));
        u.keep(failed(""));
        assert!(!u.is_empty());
        let exact = "y".repeat(UNCLAIMED_BYTES - 2 * w);
        u.keep(failed(&exact));
        assert_eq!(u.bytes(), UNCLAIMED_BYTES);
        assert_eq!(u.lost(), 0);
        assert_eq!(u.len(), 2);
        u.keep(failed(""));
        assert_eq!(u.lost(), 1);
        assert_eq!(u.bytes(), UNCLAIMED_BYTES);
    }

    #[test]
    fn c_10_an_outcome_heavier_than_the_whole_bound_is_counted_and_evicts_nothing() {
        let u = Unclaimed::default();
        u.keep(uncertain("kept"));
        u.keep(failed("kept too"));
        // One byte over the bound alone: refused, counted, and nothing else is evicted.
        let over = "z".repeat(UNCLAIMED_BYTES + 1 - weight(&failed("")));
        assert_eq!(weight(&failed(&over)), UNCLAIMED_BYTES + 1);
        u.keep(failed(&over));
        assert_eq!(u.len(), 2);
        assert_eq!(u.lost(), 1);
        assert_eq!(u.lost_uncertain(), 0);
        assert!(u.bytes() <= UNCLAIMED_BYTES);
        // Exactly the bound alone is kept, evicting the others.
        let exact = "z".repeat(UNCLAIMED_BYTES - weight(&failed("")));
        u.keep(failed(&exact));
        assert_eq!(u.len(), 1);
        assert_eq!(u.bytes(), UNCLAIMED_BYTES);
        assert_eq!(u.lost(), 3);
        assert_eq!(u.lost_uncertain(), 1);
        // An uncertain outcome over the bound is counted as an uncertain loss too.
        u.keep(uncertain(&"q".repeat(UNCLAIMED_BYTES)));
        assert_eq!(u.len(), 1);
        assert_eq!(u.lost(), 4);
        assert_eq!(u.lost_uncertain(), 2);
    }

    #[test]
    fn c_10_an_uncertain_command_weighs_its_query_and_its_domain() {
        let mut r = uncertain("abc");
        let bare = weight(&r);
        if let CommandResult::Uncertain { command, .. } = &mut r {
            command.domain = Some("domain".into());
        }
        assert_eq!(weight(&r), bare + 6);
        assert_eq!(weight(&failed("four")), weight(&failed("")) + 4);
    }

    #[test]
    fn c_10_an_outcome_delivered_as_its_waiter_leaves_is_never_lost() {
        // Delivered first: the waiter's leave reads it.
        let g = Gate::default();
        let mut slot = None;
        assert_eq!(
            g.deliver(1, |r| {
                slot = Some(r);
                None
            }),
            None
        );
        assert_eq!(g.leave(|| slot.take()), Some(1));
        // Left first: the outcome comes back, and `send` is never called.
        let g = Gate::default();
        assert_eq!(g.leave(|| None::<u8>), None);
        assert_eq!(
            g.deliver(2, |_| panic!("sent after the waiter left")),
            Some(2)
        );
        // A send that fails gives the outcome back too.
        assert_eq!(Gate::default().deliver(3, Some), Some(3));
    }

    #[test]
    fn p_7_a_batch_outcome_weighs_a_fixed_overhead_and_the_servers_words_and_uncertain_ones_are_precious(
    ) {
        use nervix_protocol::client::{BatchId, BatchOutcome, ProducerId};
        let of = |o: BatchOutcome| UnclaimedBatch::new(ProducerId(1), BatchId(1), o);
        let words = "ten bytes!".to_string();
        assert_eq!(Batches::weight(&of(BatchOutcome::Completed)), 64);
        assert_eq!(Batches::weight(&of(BatchOutcome::NotSent)), 64);
        assert_eq!(
            Batches::weight(&of(BatchOutcome::Rejected {
                message: words.clone()
            })),
            74
        );
        let unknown = of(BatchOutcome::Unknown);
        assert!(Batches::precious(&unknown) && !Batches::precious(&of(BatchOutcome::Completed)));
        assert!(!Batches::precious(&of(BatchOutcome::Rejected {
            message: words
        })));
    }
}
