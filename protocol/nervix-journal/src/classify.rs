//! What a restarted client finds in its journal, sorted for the application.

use std::time::Duration;

use nervix_protocol::command::ExecutionReference;
use nervix_protocol::time::UnixMillis;

use crate::record::{BatchRecord, CommandRecord, Entry, JournalKey, TransferRecord};

/// The default retry horizon: a recovered command or transfer is repeated only if it was
/// created less than this long ago. The server keeps a reference's record 15 minutes by
/// default, and a client stops repeating well before that (E-4).
pub const DEFAULT_HORIZON: Duration = Duration::from_secs(10 * 60);

/// A command found live in the journal.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RecoveredCommand {
    /// Inside the horizon: repeat it under its reference to learn its outcome.
    Repeatable {
        /// Its journal key (end it once its outcome is handed on).
        key: JournalKey,
        /// The command.
        record: CommandRecord,
    },
    /// Too old to repeat, or made behind an unanswered `BEGIN` and so recorded without the
    /// position it was sent with ([`Entry::HeldCommand`]): its outcome is unknown, and is
    /// reported naming its reference.
    Expired {
        /// Its journal key (end it once reported).
        key: JournalKey,
        /// Its reference.
        reference: ExecutionReference,
        /// When it was created, on the wall clock.
        created_wall: UnixMillis,
    },
}

/// An upload or a restore found live in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveredTransfer {
    /// Inside the horizon: send the whole archive again under the same identity.
    Repeatable {
        /// Its journal key.
        key: JournalKey,
        /// The transfer.
        record: TransferRecord,
    },
    /// Too old to repeat: its outcome is unknown, reported naming its reference.
    Expired {
        /// Its journal key.
        key: JournalKey,
        /// Its reference.
        reference: String,
        /// When it was created, on the wall clock.
        created_wall: UnixMillis,
    },
}

/// A producer batch found live in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveredBatch {
    /// Never handed to the transport: send it.
    Unsent {
        /// Its journal key.
        key: JournalKey,
        /// The batch.
        record: BatchRecord,
    },
    /// Handed to the transport without an outcome: its outcome is unknown and it is never
    /// sent again (P-8).
    UnknownOutcome {
        /// Its journal key.
        key: JournalKey,
        /// The producer's domain.
        domain: String,
        /// The producer's ingestor.
        ingestor: String,
        /// When it was submitted, on the wall clock.
        created_wall: UnixMillis,
    },
}

/// Everything live in a recovered journal, each list in journal order (the order the
/// entries were first put, which is their first FSNs' order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecoveryList {
    /// Commands.
    pub commands: Vec<RecoveredCommand>,
    /// Uploads and restores.
    pub transfers: Vec<RecoveredTransfer>,
    /// Producer batches.
    pub batches: Vec<RecoveredBatch>,
}

impl RecoveryList {
    /// Whether nothing came back.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.transfers.is_empty() && self.batches.is_empty()
    }

    /// How many entries came back.
    #[must_use]
    pub fn len(&self) -> usize {
        self.commands.len() + self.transfers.len() + self.batches.len()
    }
}

/// Whether something created at `created_wall` may still be repeated at `wall_now`: its age
/// is strictly below `horizon`. A creation time in the future counts as age 0.
pub(crate) fn within(created_wall: UnixMillis, wall_now: UnixMillis, horizon: Duration) -> bool {
    let age = Duration::from_millis(wall_now.0.saturating_sub(created_wall.0));
    age < horizon
}

/// Sorts live entries, given in journal order with their handed flag.
pub(crate) fn classify<'a>(
    live: impl IntoIterator<Item = (JournalKey, bool, &'a Entry)>,
    wall_now: UnixMillis,
    horizon: Duration,
) -> RecoveryList {
    let mut list = RecoveryList::default();
    for (key, handed, entry) in live {
        match entry {
            // Its record lacks the position its frames carried: never repeated (E-2).
            Entry::HeldCommand(c) => list.commands.push(RecoveredCommand::Expired {
                key,
                reference: c.reference.clone(),
                created_wall: c.created_wall,
            }),
            Entry::Command(c) => list
                .commands
                .push(if within(c.created_wall, wall_now, horizon) {
                    RecoveredCommand::Repeatable {
                        key,
                        record: c.clone(),
                    }
                } else {
                    RecoveredCommand::Expired {
                        key,
                        reference: c.reference.clone(),
                        created_wall: c.created_wall,
                    }
                }),
            Entry::Transfer(t) => {
                list.transfers
                    .push(if within(t.created_wall, wall_now, horizon) {
                        RecoveredTransfer::Repeatable {
                            key,
                            record: t.clone(),
                        }
                    } else {
                        RecoveredTransfer::Expired {
                            key,
                            reference: t.reference.clone(),
                            created_wall: t.created_wall,
                        }
                    })
            }
            Entry::Batch(b) => list.batches.push(if handed {
                RecoveredBatch::UnknownOutcome {
                    key,
                    domain: b.domain.clone(),
                    ingestor: b.ingestor.clone(),
                    created_wall: b.created_wall,
                }
            } else {
                RecoveredBatch::Unsent {
                    key,
                    record: b.clone(),
                }
            }),
        }
    }
    list
}
