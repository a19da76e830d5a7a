//! The policy that keeps a client's commands in its journal, over any record store.
//!
//! A command's record is put in the engine's gate (the engine has checked the command and
//! built it exactly as every attempt sends it, E-2, and has not taken it yet), so a refused
//! record means nothing was taken or sent. The record ends once the command's result is
//! known and handed on; an uncertain result keeps it, unless the reference is past its retry
//! validity (E-4), so the command can still be recovered after a crash. A repeat of a command
//! whose reference has a live record reuses that record.
//!
//! The same code serves the drivers (a store on files) and the simulation (a store in
//! memory): the store only puts, ends and counts records.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use nervix_protocol::client::{
    Client, CommandHandle, CommandResult, GateNote, Gated, RetainedCommand, Routed, UncertainCause,
};
use nervix_protocol::time::{Timestamp, UnixMillis};

use crate::classify::{RecoveredCommand, RecoveryList};
use crate::record::{CommandRecord, Entry, JournalKey};
use crate::transfers::JournaledTransfer;

/// Where a [`CommandJournal`] keeps its records.
pub trait RecordStore {
    /// Why the store refused a put or an end.
    type Error;

    /// Writes `entry` under a new key, at `now_millis` of the journal's clock.
    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, Self::Error>;

    /// Ends the record of `key`.
    fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), Self::Error>;

    /// Tells the store whether a session is open (a full store's error names it).
    fn set_link(&mut self, publishing: bool);

    /// Records live now.
    fn live(&self) -> usize;
}

/// A command found in the journal when the client started.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum JournaledCommand {
    /// Still inside its retry validity (E-4): hand it to the client's `recover` to learn its
    /// outcome. It is repeated exactly (E-2) under its reference and ends with its recorded
    /// outcome (a `Recovered` origin) or a definitive failure.
    Repeatable {
        /// The command as it was sent; its `created` is now minus its age.
        command: RetainedCommand,
        /// When its reference was created (wall clock).
        created_wall: UnixMillis,
    },
    /// Too old to repeat (E-4): its outcome is unknown, and it is not repeated.
    Unknown {
        /// The reference to ask about out of band.
        reference: String,
        /// When its reference was created (wall clock).
        created_wall: UnixMillis,
    },
}

/// What the journal held when the client started, each list in the order it was written:
/// the commands, and the uploads and restores (filled by the
/// [`TransferJournal`](crate::TransferJournal) beside this policy).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CommandRecovery {
    /// The commands.
    pub commands: Vec<JournaledCommand>,
    /// The uploads and restores.
    pub transfers: Vec<JournaledTransfer>,
    /// The producer batches (outbox mode), in the order they were written: those never
    /// handed to the transport, to be submitted again, and those of unknown outcome (P-8).
    pub batches: Vec<crate::outbox::JournaledBatch>,
}

impl CommandRecovery {
    /// Whether nothing came back.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.transfers.is_empty() && self.batches.is_empty()
    }
}

/// Counts of what a [`CommandJournal`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandJournalStats {
    /// Command records written.
    pub journaled: u64,
    /// Command records ended.
    pub ended: u64,
    /// Calls refused because a record could not be written.
    pub refused: u64,
    /// Ends the store refused: those records come back after a restart.
    pub end_failures: u64,
}

/// What became of a command's record when its result arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
#[non_exhaustive]
pub enum RecordEnd<E> {
    /// The command had no record.
    NotJournaled,
    /// The outcome is still unknown and the command can be recovered: the record stays.
    Kept,
    /// The record ended.
    Ended,
    /// The end could not be written (the record comes back after a restart).
    Failed(E),
}

/// An end the store carried out, or the error it refused it with.
impl<E> From<Result<(), E>> for RecordEnd<E> {
    fn from(r: Result<(), E>) -> Self {
        match r {
            Ok(()) => RecordEnd::Ended,
            Err(e) => RecordEnd::Failed(e),
        }
    }
}

impl<E> RecordEnd<E> {
    /// Whether something was written to the store (or tried).
    #[must_use]
    pub fn wrote(&self) -> bool {
        matches!(self, RecordEnd::Ended | RecordEnd::Failed(_))
    }
}

/// A store and which record each command of the engine has.
#[derive(Debug)]
pub struct CommandJournal<S: RecordStore> {
    store: S,
    by_handle: BTreeMap<CommandHandle, JournalKey>,
    /// Live records by reference: uncertain commands, and the ones recovery found.
    by_reference: BTreeMap<String, JournalKey>,
    /// The recovery list, and the keys to end once it was handed on.
    recovery: crate::report::ToReport<CommandRecovery>,
    stats: CommandJournalStats,
    /// How long after its reference's creation an uncertain command's record is kept.
    validity: Duration,
    /// The records kept for uncertain commands, by when they end (engine time), and the
    /// same by key.
    kept: BTreeSet<(Timestamp, JournalKey)>,
    kept_until: BTreeMap<JournalKey, Timestamp>,
}

impl<S: RecordStore> CommandJournal<S> {
    /// The policy over `store`, which held `list` when it was read at wall time `wall_now`;
    /// `now` is the engine's monotonic time. A repeatable command's monotonic creation is
    /// `now` minus its age, so the engine's own retry horizon counts from its reference's
    /// creation; one older than `now` itself (the engine's time does not reach back to its
    /// creation) is reported unknown like an expired one. No session is open yet.
    pub fn new(mut store: S, list: RecoveryList, wall_now: UnixMillis, now: Timestamp) -> Self {
        store.set_link(false);
        let mut by_reference = BTreeMap::new();
        let mut recovery = CommandRecovery::default();
        let mut reported = Vec::new();
        for c in list.commands {
            match c {
                RecoveredCommand::Repeatable { key, record } => {
                    let age = wall_now.0.saturating_sub(record.created_wall.0);
                    let Some(created) = age
                        .checked_mul(1_000_000)
                        .and_then(|age| now.as_nanos().checked_sub(age))
                        .map(Timestamp::from_nanos)
                    else {
                        // Older than the engine's time reaches back: its age cannot be kept,
                        // so it cannot be repeated safely (E-4).
                        reported.push(key);
                        recovery.commands.push(JournaledCommand::Unknown {
                            reference: record.reference.to_string(),
                            created_wall: record.created_wall,
                        });
                        continue;
                    };
                    by_reference.insert(record.reference.to_string(), key);
                    recovery.commands.push(JournaledCommand::Repeatable {
                        command: record.to_retained(created),
                        created_wall: record.created_wall,
                    });
                }
                RecoveredCommand::Expired {
                    key,
                    reference,
                    created_wall,
                } => {
                    reported.push(key);
                    recovery.commands.push(JournaledCommand::Unknown {
                        reference: reference.to_string(),
                        created_wall,
                    });
                }
            }
        }
        Self {
            store,
            by_handle: BTreeMap::new(),
            by_reference,
            recovery: crate::report::ToReport::new(recovery, reported),
            stats: CommandJournalStats::default(),
            validity: crate::DEFAULT_HORIZON,
            kept: BTreeSet::new(),
            kept_until: BTreeMap::new(),
        }
    }

    /// The same policy, keeping an uncertain command's record until `validity` after its
    /// reference's creation (default [`crate::DEFAULT_HORIZON`]): the horizon a restart
    /// classifies by, past which the command is never repeated (E-4).
    #[must_use]
    pub fn with_validity(mut self, validity: Duration) -> Self {
        self.validity = validity;
        self
    }

    /// When the next kept record ends, if any ([`CommandJournal::expire`]).
    #[must_use]
    pub fn next_expiry(&self) -> Option<Timestamp> {
        self.kept.first().map(|(t, _)| *t)
    }

    /// Ends the records kept for uncertain commands whose validity passed by `now`: the
    /// application was told the outcome was uncertain, naming the reference, and the command
    /// can no longer be repeated, so nothing is lost. Returns how many ended, and the ends
    /// the store refused (counted, given back).
    pub fn expire(&mut self, now: Timestamp) -> (u64, Vec<S::Error>) {
        let mut failures = Vec::new();
        let before = self.stats.ended;
        while let Some(&(until, key)) = self.kept.first() {
            if until > now {
                break;
            }
            self.kept.pop_first();
            self.kept_until.remove(&key);
            self.by_reference.retain(|_, k| *k != key);
            if let Err(e) = self.end(key, now) {
                failures.push(e);
            }
        }
        (self.stats.ended - before, failures)
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The store, mutably (for what the policy does not do: syncs, checkpoints).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// The recovery list, once; later calls get an empty list. The records of commands too
    /// old to repeat stay until [`CommandJournal::recovery_reported`] says the list was
    /// handed on: a crash before that leaves them, to be reported after the next start
    /// (ended first, an unknown outcome the application was never told would be lost).
    pub fn take_recovery(&mut self) -> CommandRecovery {
        self.recovery.take()
    }

    /// The list taken was handed on: the records of the commands it reports unknown end (an
    /// end the store refuses is counted and given back). Later calls end nothing.
    pub fn recovery_reported(&mut self, now: Timestamp) -> Vec<S::Error> {
        self.recovery.end_counted(
            &mut self.store,
            millis(now),
            &mut self.stats.ended,
            &mut self.stats.end_failures,
        )
    }

    /// Whether a session is open, for the wire state a full store reports.
    pub fn set_publishing(&mut self, publishing: bool) {
        self.store.set_link(publishing);
    }

    /// The record of `c`: the live one of its reference, or a new one. A command that waits
    /// behind an unanswered `BEGIN` for its position (`note`) is recorded as held, so it is
    /// never repeated from a record without that position (E-2).
    fn record(
        &mut self,
        c: &RetainedCommand,
        note: GateNote,
        wall: UnixMillis,
        now: Timestamp,
    ) -> Result<JournalKey, S::Error> {
        if let Some(key) = self.by_reference.get(&c.reference.to_string()) {
            return Ok(*key);
        }
        let record = CommandRecord::from_retained(c, wall);
        let entry = if note.awaits_position {
            Entry::HeldCommand(record)
        } else {
            Entry::Command(record)
        };
        match self.store.put(&entry, millis(now)) {
            Ok(key) => {
                self.stats.journaled += 1;
                Ok(key)
            }
            Err(e) => {
                self.stats.refused += 1;
                Err(e)
            }
        }
    }

    /// The engine's gate for one command: writes its record (or finds the live one under its
    /// reference) and leaves the record's key in `key`.
    fn gate<'a>(
        &'a mut self,
        key: &'a mut Option<JournalKey>,
        wall: UnixMillis,
        now: Timestamp,
    ) -> impl FnOnce(&RetainedCommand, GateNote) -> Result<(), S::Error> + 'a {
        move |c, note| {
            *key = Some(self.record(c, note, wall, now)?);
            Ok(())
        }
    }

    /// Executes `query` on `engine` with its record written first.
    pub fn execute(
        &mut self,
        engine: &mut Client,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
    ) -> Result<CommandHandle, Gated<S::Error>> {
        let mut key = None;
        let h =
            engine.execute_gated(now, wall, query, None, None, self.gate(&mut key, wall, now))?;
        self.bind(h, key, engine);
        Ok(h)
    }

    /// Runs `query` on `engine` the way it travels; a command has its record written first.
    pub fn run(
        &mut self,
        engine: &mut Client,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
    ) -> Result<Routed, Gated<S::Error>> {
        let mut key = None;
        let routed = engine.run_gated(now, wall, query, self.gate(&mut key, wall, now))?;
        if let Routed::Command(h) = routed {
            self.bind(h, key, engine);
        }
        Ok(routed)
    }

    /// Repeats `command` on `engine` under its live record, or a new one when it has none.
    pub fn recover(
        &mut self,
        engine: &mut Client,
        now: Timestamp,
        wall: UnixMillis,
        command: &RetainedCommand,
    ) -> Result<CommandHandle, Gated<S::Error>> {
        let mut key = None;
        let h = engine.recover_gated(now, command, None, self.gate(&mut key, wall, now))?;
        self.bind(h, key, engine);
        Ok(h)
    }

    fn bind(&mut self, h: CommandHandle, key: Option<JournalKey>, engine: &Client) {
        if let Some(key) = key {
            // Repeated: kept again, or ended, at its new end.
            if let Some(until) = self.kept_until.remove(&key) {
                self.kept.remove(&(until, key));
            }
            self.by_handle.insert(h, key);
            if let Some(r) = engine.reference_of(h) {
                self.by_reference.insert(r.to_string(), key);
            }
        }
    }

    /// Command `h` ended with `result`, which is now handed to the application or kept
    /// among the unclaimed outcomes. Its record ends unless the outcome is still unknown and
    /// the command can still be recovered; then it is kept until its validity passes
    /// ([`CommandJournal::expire`]).
    pub fn ended(
        &mut self,
        h: CommandHandle,
        result: &CommandResult,
        now: Timestamp,
    ) -> RecordEnd<S::Error> {
        self.ended_as(h, kept_since(result), now)
    }

    /// Command `h` ended, its result now handed on; `kept` is its reference's creation when
    /// its record stays ([`kept_since`] of the result): until the policy's validity after
    /// it. For a caller that hands the result over before ending its record, and so no
    /// longer holds it.
    pub fn ended_as(
        &mut self,
        h: CommandHandle,
        kept: Option<Timestamp>,
        now: Timestamp,
    ) -> RecordEnd<S::Error> {
        let Some(key) = self.by_handle.remove(&h) else {
            return RecordEnd::NotJournaled;
        };
        if let Some(created) = kept {
            let until = created + self.validity;
            self.kept.insert((until, key));
            self.kept_until.insert(key, until);
            return RecordEnd::Kept;
        }
        self.by_reference.retain(|_, k| *k != key);
        self.end(key, now).into()
    }

    fn end(&mut self, key: JournalKey, now: Timestamp) -> Result<(), S::Error> {
        crate::report::end_counted(
            &mut self.store,
            key,
            millis(now),
            &mut self.stats.ended,
            &mut self.stats.end_failures,
        )
    }

    /// The record live for `reference`, if any.
    #[must_use]
    pub fn key_of(&self, reference: &str) -> Option<JournalKey> {
        self.by_reference.get(reference).copied()
    }

    /// What the policy did.
    #[must_use]
    pub fn stats(&self) -> CommandJournalStats {
        self.stats
    }
}

/// Whether a command that ended with `result` keeps its record: its outcome is unknown and
/// its reference can still be recovered.
#[must_use]
pub fn keeps(result: &CommandResult) -> bool {
    match result {
        CommandResult::Uncertain { cause, .. } => !matches!(
            cause,
            UncertainCause::ReferenceExpired | UncertainCause::RetryHorizon
        ),
        _ => false,
    }
}

/// The creation of the command that ended with `result` when it keeps its record
/// ([`keeps`]), on the engine's time.
#[must_use]
pub fn kept_since(result: &CommandResult) -> Option<Timestamp> {
    match result {
        CommandResult::Uncertain { command, .. } if keeps(result) => Some(command.created),
        _ => None,
    }
}

/// Milliseconds of the engine's monotonic time, the journal's clock.
fn millis(now: Timestamp) -> u64 {
    now.as_nanos() / 1_000_000
}
