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
//!
//! The journal is shared with the client's separate calls ([`crate::transfer_journal`]): the
//! uploads and restores it held at start are listed in the same [`Recovery`], beside the
//! commands.
//!
//! Producer batches are journaled too, in outbox mode: see the `batches` module (a
//! submission returns once its batch's record is written, the record is marked handed before
//! the batch's frame reaches a transport, and ends at its outcome; after a restart
//! `Recovery::batches` lists the batches a crash left, P-8).

use crate::journal::{DurableJournal, JournalConfig, JournalError};

use nervix_journal::{CommandJournal, Entry, JournalKey, RecordEnd, RecordStore, RecoveryList};
use nervix_protocol::client::{Client as Engine, CommandHandle, Gated, RetainedCommand, Routed};
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::path::PathBuf;

mod batches;

pub use batches::{JournaledBatch, UnsentBatch};

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
    /// These separate calls were made from a configuration that keeps a journal, but were
    /// never given the journal of a client (`Transfers::journaled`): the upload or restore
    /// would go out unjournaled, so it is refused and nothing is sent.
    #[error("these calls were made for a client with a journal but not given its journal (Transfers::journaled)")]
    NotJournaled,
    /// A batch the journal returned after a restart cannot be submitted again here: another
    /// producer's domain or ingestor, submitted again already, or its bytes do not read as a
    /// batch of the producer's fields. Nothing was queued.
    #[error("the journaled batch cannot be submitted again: {0}")]
    Resubmit(String),
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

pub use nervix_journal::{CommandRecovery as Recovery, JournaledCommand, JournaledTransfer};

/// A client's journal, opened and read, before its driver starts.
pub struct Opened {
    journal: crate::transfer_journal::SharedJournal,
    list: RecoveryList,
    wall_now: UnixMillis,
    /// The interval of periodic syncs, when the journal has them.
    periodic: Option<std::time::Duration>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("recovered", &self.list.len())
            .finish()
    }
}

impl Opened {
    /// Where the client's separate calls keep their records (uploads and restores): this
    /// journal, for as long as the client that opened it keeps it.
    #[must_use]
    pub fn transfers(&self) -> crate::transfer_journal::TransferJournalHandle {
        self.journal.handle()
    }

    /// The client's separate calls (uploads and restores) read the time from `clock`, the
    /// clock the core runs on, so the records of both count on one time.
    pub(crate) fn set_clock(&self, clock: std::sync::Arc<dyn crate::host_time::HostClock>) {
        self.journal.set_clock(clock);
    }
}

/// [`open_for_client`], and the handle the client's separate calls keep their records
/// through (`None` without a journal).
#[allow(clippy::type_complexity)]
pub fn open_with_transfers(
    config: Option<&JournalConfig>,
) -> Result<
    (
        Option<Opened>,
        Option<crate::transfer_journal::TransferJournalHandle>,
    ),
    crate::api::Error,
> {
    let opened = open_for_client(config)?;
    let transfers = opened.as_ref().map(Opened::transfers);
    Ok((opened, transfers))
}

/// Opens the journal `config` names, if any: takes its slot's lock (a second client on the
/// slot is refused naming the holder), recovers what the slot holds and classifies it.
pub fn open_for_client(
    config: Option<&JournalConfig>,
) -> Result<Option<Opened>, crate::api::Error> {
    open_at(config, crate::host_time::system_wall())
}

/// [`open_for_client`] with the wall clock read as `wall_now` (a simulation's virtual
/// time): the recovery list's ages count from it.
pub fn open_at(
    config: Option<&JournalConfig>,
    wall_now: UnixMillis,
) -> Result<Option<Opened>, crate::api::Error> {
    let Some(config) = config else {
        return Ok(None);
    };
    let (journal, mut list) =
        DurableJournal::open(config, wall_now).map_err(|e| crate::api::Error::Journal(e.into()))?;
    tracing::info!(
        slot = %journal.slot_dir().display(),
        recovered = list.len(),
        "nervix journal opened"
    );
    let transfers = std::mem::take(&mut list.transfers);
    let journal = crate::transfer_journal::SharedJournal::new(journal, transfers, config.horizon);
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
    /// Upload and restore records written.
    pub transfers_journaled: u64,
    /// Upload and restore records ended.
    pub transfers_ended: u64,
    /// Repeats of uploads and restores that reused a live record.
    pub transfers_reused: u64,
    /// Uploads and restores refused because their record could not be written, or because
    /// their archive changed since it was journaled.
    pub transfers_refused: u64,
    /// Upload and restore records live now.
    pub transfers_live: u64,
    /// Producer batch records written (outbox mode).
    pub batches_journaled: u64,
    /// Producer batches marked handed to the transport before their send.
    pub batches_handed: u64,
    /// Producer batch records ended (at the batch's outcome, or once reported unknown after
    /// a restart).
    pub batches_ended: u64,
    /// Submissions refused because the batch's record could not be written.
    pub batches_refused: u64,
    /// New batches the engine framed at once in the buffer they were encoded in and
    /// journaled from, with no copy (the journal lets go of their bytes while the engine
    /// takes them, and shares them again from the frame). A batch the engine holds waiting
    /// for credit is copied into the journal's live set instead, and one waiting in the
    /// outbox keeps its bytes shared with it: both are copied into their frame later.
    pub batches_framed_in_place: u64,
    /// Bytes of live batches the journal holds in memory, shared with their frames or with
    /// the batches waiting to be sent, not copies (a batch's bytes are let go only while the
    /// engine takes it).
    pub batch_bytes_held: u64,
}

/// Records go to the durable journal.
impl RecordStore for DurableJournal {
    type Error = JournalError;

    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        DurableJournal::put(self, entry, now_millis)
    }

    fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        DurableJournal::end(self, key, now_millis)
    }

    fn set_link(&mut self, publishing: bool) {
        DurableJournal::set_link(self, publishing);
    }

    fn live(&self) -> usize {
        DurableJournal::live(self)
    }
}

/// The journal's policy over the durable journal, and its periodic syncs.
pub(crate) struct Journaled {
    core: CommandJournal<crate::transfer_journal::SharedJournal>,
    /// The producer batches of the outbox.
    outbox: nervix_journal::BatchOutbox,
    /// The interval of periodic syncs, when the journal has them.
    periodic: Option<std::time::Duration>,
    /// When the next periodic sync is due: set by the first write after a sync, so an idle
    /// journal has no deadline and a written record is synced within one interval even when
    /// nothing else happens.
    sync_due: Option<Timestamp>,
    /// New batches the engine framed in the buffer they were laid and journaled from.
    framed_in_place: u64,
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
            mut list,
            wall_now,
            periodic,
        } = opened;
        let batches = std::mem::take(&mut list.batches);
        let validity = journal.horizon();
        Self {
            core: CommandJournal::new(journal, list, wall_now, now).with_validity(validity),
            outbox: nervix_journal::BatchOutbox::new(batches),
            periodic,
            sync_due: None,
            framed_in_place: 0,
        }
    }

    /// When the journal next needs the core's attention: its periodic sync, or the end of a
    /// record kept for an uncertain command.
    pub(crate) fn deadline(&self) -> Option<Timestamp> {
        match (self.sync_due, self.core.next_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Ends the records kept for uncertain commands whose validity passed, and carries out
    /// the periodic sync when it is due at `now`.
    pub(crate) fn tick(&mut self, now: Timestamp) {
        let (ended, failures) = self.core.expire(now);
        if ended > 0 || !failures.is_empty() {
            self.wrote(now);
        }
        for e in &failures {
            end_failed(e);
        }
        if self.sync_due.is_some_and(|due| due <= now) {
            self.sync_due = None;
            if let Err(e) = self.core.store().checkpoint(millis(now)) {
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

    /// The recovery list, once; later calls get an empty list. What it reports unknown
    /// (commands and transfers too old to repeat, batches handed without an outcome) stays
    /// journaled until
    /// [`Journaled::recovery_reported`]: a crash before the list reaches the application
    /// leaves it for the next start.
    pub(crate) fn take_recovery(&mut self) -> Recovery {
        let mut list = self.core.take_recovery();
        list.batches = self.outbox.take_recovery();
        list.transfers = self.core.store().take_transfers();
        list
    }

    /// The list taken reached the application: the records of what it reports unknown end.
    pub(crate) fn recovery_reported(&mut self, now: Timestamp) {
        let before = self.core.stats();
        let failures = self.core.recovery_reported(now);
        let ended_before = self.outbox.stats().ended;
        let transfers_ended_before = self.core.store().transfer_stats().0.ended;
        let batch_failures = self
            .outbox
            .recovery_reported(self.core.store_mut(), millis(now));
        let transfer_failures = self.core.store().transfers_reported(millis(now));
        let after = self.core.stats();
        // Anything ended, or tried: a periodic sync is due.
        if self.outbox.stats().ended != ended_before
            || self.core.store().transfer_stats().0.ended != transfers_ended_before
            || (after.ended, after.end_failures) != (before.ended, before.end_failures)
            || !batch_failures.is_empty()
            || !transfer_failures.is_empty()
        {
            self.wrote(now);
        }
        for e in batch_failures
            .iter()
            .chain(&failures)
            .chain(&transfer_failures)
        {
            end_failed(e);
        }
    }

    /// Whether a session is open, for the wire state a full journal reports.
    pub(crate) fn set_publishing(&mut self, publishing: bool) {
        self.core.set_publishing(publishing);
    }

    /// Executes `query` with its record written first.
    pub(crate) fn execute(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
    ) -> Result<CommandHandle, crate::api::Error> {
        let h = self
            .core
            .execute(engine, now, wall, query)
            .map_err(refused)?;
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
        let routed = self.core.run(engine, now, wall, query).map_err(refused)?;
        if let Routed::Command(_) = routed {
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
        let h = self
            .core
            .recover(engine, now, wall, command)
            .map_err(refused)?;
        self.wrote(now);
        Ok(h)
    }

    /// Command `h` ended, and its result was handed to the application or kept among the
    /// unclaimed outcomes. Its record ends unless `keep` gives its reference's creation
    /// ([`nervix_journal::kept_since`] of the result: the outcome is still unknown and the
    /// command can still be recovered); then it is kept until the horizon passes since then.
    pub(crate) fn ended(&mut self, h: CommandHandle, keep: Option<Timestamp>, now: Timestamp) {
        let end = self.core.ended_as(h, keep, now);
        if end.wrote() {
            self.wrote(now);
        }
        if let RecordEnd::Failed(e) = end {
            end_failed(&e);
        }
    }

    /// What the journal did.
    pub(crate) fn stats(&self) -> JournaledStats {
        let s = self.core.stats();
        let (t, transfers_live) = self.core.store().transfer_stats();
        let b = self.outbox.stats();
        JournaledStats {
            commands_journaled: s.journaled,
            commands_ended: s.ended,
            refused: s.refused,
            end_failures: s.end_failures + t.end_failures,
            live: self.core.store().live() as u64,
            transfers_journaled: t.journaled,
            transfers_ended: t.ended,
            transfers_reused: t.reused,
            transfers_refused: t.refused + t.changed,
            transfers_live: transfers_live as u64,
            batches_journaled: b.journaled,
            batches_handed: b.handed,
            batches_ended: b.ended,
            batches_refused: b.refused,
            batches_framed_in_place: self.framed_in_place,
            batch_bytes_held: self.core.store().held_batch_bytes(),
        }
    }
}

fn end_failed(e: &JournalError) {
    tracing::warn!(error = %e, "nervix journal: a record's end was not written; it is recovered again after a restart");
}

/// A gated call's refusal as the application's error.
fn refused(e: Gated<JournalError>) -> crate::api::Error {
    match e {
        Gated::Client(e) => crate::api::Error::Refused(e),
        Gated::Gate(j) => crate::api::Error::Journal(j.into()),
        // `Gated` may grow; nothing else refuses a call today.
        _ => crate::api::Error::Journal(JournalRefusal::Failed("refused".into())),
    }
}
