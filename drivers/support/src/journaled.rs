//! Commands that survive the client's own crash (feature `journal`): the driver core writes
//! each command's record (reference, exact query, domain, expected position and preview,
//! creation time) to the client's journal before any frame of the command can reach a
//! transport, and ends the record once the command's outcome is known and handed to the
//! application (or kept among the unclaimed outcomes).
//!
//! The record is written in the engine's gate ([`Engine::execute_gated`]): the engine has
//! checked the command and built it exactly as every attempt will send it (E-2), and has not
//! taken it yet. When the record cannot be written (the journal is full, or a write failed)
//! the command is refused with [`JournalRefusal`] and nothing was taken or sent.
//!
//! A command that ends uncertain keeps its record: it can still be recovered, by this process
//! with the client's `recover`, or after a crash from the [`Recovery`] the next client on the
//! same slot hands out. A command whose reference is past its retry validity (E-4) is never
//! repeated: after a restart it is reported as [`JournaledCommand::Unknown`] naming its
//! reference, and its record ends once reported.

use crate::journal::{DurableJournal, JournalConfig, JournalError};
use nervix_journal::{CommandRecord, Entry, JournalKey, RecoveredCommand, RecoveryList};
use nervix_protocol::client::{
    Client as Engine, CommandHandle, CommandResult, Gated, RetainedCommand, Routed, UncertainCause,
};
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why the journal refused a call: nothing of it was taken or sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JournalRefusal {
    /// Another client holds the journal's slot.
    #[error("the journal slot {slot} is held by another client (process {})", pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string()))]
    Held {
        /// The slot directory.
        slot: PathBuf,
        /// The holder's process id, when it could be read.
        pid: Option<u32>,
    },
    /// The journal has no room for the record (SF-23, SF-24): records end as outcomes
    /// arrive, so room comes back while the wire is publishing; while it is reconnecting it
    /// comes back only once a session carries the commands again.
    #[error("the journal is full while the wire is {}", if *publishing { "publishing" } else { "reconnecting" })]
    Full {
        /// Whether a session was open when the record was refused.
        publishing: bool,
    },
    /// The journal could not be opened, read or written.
    #[error("the journal failed: {0}")]
    Failed(String),
}

impl From<JournalError> for JournalRefusal {
    fn from(e: JournalError) -> Self {
        match e {
            JournalError::Held { slot, pid } => JournalRefusal::Held { slot, pid },
            JournalError::Full { link, .. } => JournalRefusal::Full {
                publishing: link == crate::journal::JournalLink::Publishing,
            },
            other => JournalRefusal::Failed(other.to_string()),
        }
    }
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

/// What the journal held when the client started, in the order it was written.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Recovery {
    /// The commands.
    pub commands: Vec<JournaledCommand>,
}

impl Recovery {
    /// Whether nothing came back.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}

/// A client's journal, opened and read, before its driver starts.
pub struct Opened {
    journal: DurableJournal,
    list: RecoveryList,
    wall_now: UnixMillis,
    /// The interval of periodic syncs, when the journal has them.
    periodic: Option<std::time::Duration>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("slot", &self.journal.slot_dir())
            .field("recovered", &self.list.len())
            .finish()
    }
}

/// The wall clock's time now, which the recovery list's ages count from.
fn wall_now() -> UnixMillis {
    UnixMillis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    )
}

/// Opens the journal `config` names, if any: takes its slot's lock (a second client on the
/// slot is refused naming the holder), recovers what the slot holds and classifies it.
pub fn open_for_client(
    config: Option<&JournalConfig>,
) -> Result<Option<Opened>, crate::api::Error> {
    let Some(config) = config else {
        return Ok(None);
    };
    let wall_now = wall_now();
    let (journal, list) =
        DurableJournal::open(config, wall_now).map_err(|e| crate::api::Error::Journal(e.into()))?;
    tracing::info!(
        slot = %journal.slot_dir().display(),
        recovered = list.len(),
        "nervix journal opened"
    );
    let periodic = match config.durability {
        crate::journal::JournalDurability::Periodic(every) => Some(every),
        _ => None,
    };
    Ok(Some(Opened {
        journal,
        list,
        wall_now,
        periodic,
    }))
}

/// What the journal did, for the client's stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournaledStats {
    /// Command records written.
    pub commands_journaled: u64,
    /// Command records ended.
    pub commands_ended: u64,
    /// Calls refused because a record could not be written.
    pub refused: u64,
    /// Ends that could not be written: their records come back after a restart, and are
    /// recovered again under the same reference (which never runs a command twice).
    pub end_failures: u64,
    /// Records live now.
    pub live: u64,
}

/// The journal and which record each command of the engine has.
pub(crate) struct Journaled {
    journal: DurableJournal,
    by_handle: BTreeMap<CommandHandle, JournalKey>,
    /// Live command records by reference: uncertain commands, and the ones recovery found.
    by_reference: BTreeMap<String, JournalKey>,
    /// The recovery list, until the application takes it.
    recovery: Option<(Recovery, Vec<JournalKey>)>,
    stats: JournaledStats,
    /// The interval of periodic syncs, when the journal has them.
    periodic: Option<std::time::Duration>,
    /// When the next periodic sync is due: set by the first write after a sync, so an idle
    /// journal has no deadline and a written record is synced within one interval even when
    /// nothing else happens.
    sync_due: Option<Timestamp>,
}

/// Milliseconds of the engine's monotonic time, the journal's clock.
fn millis(now: Timestamp) -> u64 {
    now.as_nanos() / 1_000_000
}

impl Journaled {
    /// The journal opened at `wall_now`, with what it held at `now`.
    pub(crate) fn new(opened: Opened, now: Timestamp) -> Self {
        let Opened {
            journal,
            list,
            wall_now,
            periodic,
        } = opened;
        let mut journal = journal;
        // No session is open yet: a full journal waits for the wire to come up.
        journal.set_link(false);
        let mut by_reference = BTreeMap::new();
        let mut recovery = Recovery::default();
        let mut reported = Vec::new();
        for c in list.commands {
            match c {
                RecoveredCommand::Repeatable { key, record } => {
                    // Its monotonic creation is now minus its age, so the engine's own retry
                    // horizon (E-4) counts from the reference's creation.
                    let age = wall_now.0.saturating_sub(record.created_wall.0);
                    let created = Timestamp::from_nanos(
                        now.as_nanos().saturating_sub(age.saturating_mul(1_000_000)),
                    );
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
                _ => {}
            }
        }
        Self {
            journal,
            by_handle: BTreeMap::new(),
            by_reference,
            recovery: Some((recovery, reported)),
            stats: JournaledStats::default(),
            periodic,
            sync_due: None,
        }
    }

    /// When the journal next needs the core's attention: its periodic sync.
    pub(crate) fn deadline(&self) -> Option<Timestamp> {
        self.sync_due
    }

    /// Carries out the periodic sync when it is due at `now`.
    pub(crate) fn tick(&mut self, now: Timestamp) {
        if self.sync_due.is_some_and(|due| due <= now) {
            self.sync_due = None;
            if let Err(e) = self.journal.checkpoint(millis(now)) {
                tracing::warn!(error = %e, "nervix journal: a periodic sync failed");
            }
        }
    }

    /// Something was written at `now`: a periodic sync is due within one interval.
    fn wrote(&mut self, now: Timestamp) {
        if let (Some(every), None) = (self.periodic, self.sync_due) {
            self.sync_due = Some(now + every);
        }
    }

    /// The recovery list, once: records of commands too old to repeat end now that they are
    /// reported. Later calls get an empty list.
    pub(crate) fn take_recovery(&mut self, now: Timestamp) -> Recovery {
        let Some((list, reported)) = self.recovery.take() else {
            return Recovery::default();
        };
        for key in reported {
            self.end(key, now);
        }
        list
    }

    /// Whether a session is open, for the wire state a full journal reports.
    pub(crate) fn set_publishing(&mut self, publishing: bool) {
        self.journal.set_link(publishing);
    }

    /// The record of `c`: the live one of its reference, or a new one.
    fn record(
        journal: &mut DurableJournal,
        by_reference: &BTreeMap<String, JournalKey>,
        stats: &mut JournaledStats,
        c: &RetainedCommand,
        wall: UnixMillis,
        now: Timestamp,
    ) -> Result<JournalKey, JournalRefusal> {
        if let Some(key) = by_reference.get(&c.reference.to_string()) {
            return Ok(*key);
        }
        let entry = Entry::Command(CommandRecord::from_retained(c, wall));
        match journal.put(&entry, millis(now)) {
            Ok(key) => {
                stats.commands_journaled += 1;
                Ok(key)
            }
            Err(e) => {
                stats.refused += 1;
                Err(e.into())
            }
        }
    }

    /// Executes `query` with its record written first.
    pub(crate) fn execute(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
    ) -> Result<CommandHandle, crate::api::Error> {
        let mut key = None;
        let (journal, by_reference, stats) =
            (&mut self.journal, &self.by_reference, &mut self.stats);
        let h = engine
            .execute_gated(now, wall, query, None, None, |c| {
                key = Some(Self::record(journal, by_reference, stats, c, wall, now)?);
                Ok(())
            })
            .map_err(refused)?;
        self.bind(h, key, engine);
        self.wrote(now);
        Ok(h)
    }

    /// Runs `query` the way it travels; a command has its record written first.
    pub(crate) fn run(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
    ) -> Result<Routed, crate::api::Error> {
        let mut key = None;
        let (journal, by_reference, stats) =
            (&mut self.journal, &self.by_reference, &mut self.stats);
        let routed = engine
            .run_gated(now, wall, query, |c| {
                key = Some(Self::record(journal, by_reference, stats, c, wall, now)?);
                Ok(())
            })
            .map_err(refused)?;
        if let Routed::Command(h) = routed {
            self.bind(h, key, engine);
            self.wrote(now);
        }
        Ok(routed)
    }

    /// Repeats `command` under its live record, or a new one when it has none.
    pub(crate) fn recover(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        wall: UnixMillis,
        command: &RetainedCommand,
    ) -> Result<CommandHandle, crate::api::Error> {
        let mut key = None;
        let (journal, by_reference, stats) =
            (&mut self.journal, &self.by_reference, &mut self.stats);
        let h = engine
            .recover_gated(now, command, None, |c| {
                key = Some(Self::record(journal, by_reference, stats, c, wall, now)?);
                Ok(())
            })
            .map_err(refused)?;
        self.bind(h, key, engine);
        self.wrote(now);
        Ok(h)
    }

    fn bind(&mut self, h: CommandHandle, key: Option<JournalKey>, engine: &Engine) {
        if let Some(key) = key {
            self.by_handle.insert(h, key);
            if let Some(r) = engine.reference_of(h) {
                self.by_reference.insert(r.to_string(), key);
            }
        }
    }

    /// Command `h` ended with `result`, which is now handed to the application or kept
    /// among the unclaimed outcomes. Its record ends unless the outcome is still unknown and
    /// the command can still be recovered.
    pub(crate) fn ended(&mut self, h: CommandHandle, result: &CommandResult, now: Timestamp) {
        let Some(key) = self.by_handle.remove(&h) else {
            return;
        };
        let keep = match result {
            CommandResult::Uncertain { cause, .. } => !matches!(
                cause,
                UncertainCause::ReferenceExpired | UncertainCause::RetryHorizon
            ),
            _ => false,
        };
        if keep {
            return;
        }
        self.by_reference.retain(|_, k| *k != key);
        self.end(key, now);
    }

    fn end(&mut self, key: JournalKey, now: Timestamp) {
        self.wrote(now);
        match self.journal.end(key, millis(now)) {
            Ok(()) => self.stats.commands_ended += 1,
            Err(e) => {
                self.stats.end_failures += 1;
                tracing::warn!(error = %e, "nervix journal: a record's end was not written; it is recovered again after a restart");
            }
        }
    }

    /// What the journal did.
    pub(crate) fn stats(&self) -> JournaledStats {
        JournaledStats {
            live: self.journal.live() as u64,
            ..self.stats
        }
    }
}

/// A gated call's refusal as the application's error.
fn refused(e: Gated<JournalRefusal>) -> crate::api::Error {
    match e {
        Gated::Client(e) => crate::api::Error::Refused(e),
        Gated::Gate(j) => crate::api::Error::Journal(j),
        // `Gated` may grow; nothing else refuses a call today.
        _ => crate::api::Error::Journal(JournalRefusal::Failed("refused".into())),
    }
}
