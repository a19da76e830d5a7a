//! Uploads and restores that survive the client's own crash (feature `journal`).
//!
//! The separate calls run outside the driver core, so the client's journal is shared: the core's
//! command policy and the calls' transfer policy ([`TransferJournal`]) keep their records in the
//! same [`DurableJournal`], behind one lock. The core owns the journal; a
//! driver's `Transfers` reach it through a [`TransferJournalHandle`] that does not keep it open,
//! so the slot is released when the client closes, whatever handles are left.
//!
//! A call's record (its reference, statement or domain and resource, the archive's path, size
//! and BLAKE3 digest, and when its reference was created) is written before the first byte of
//! its first attempt is sent: a journal that refuses it (full: the error says whether the wire
//! is publishing or reconnecting; broken; or closed with its client) refuses the call and
//! nothing is sent. The record ends once the call's outcome is known and handed to the
//! application. A call that ends uncertain (some attempt carried the whole archive and no
//! outcome came) keeps it while its reference is inside the retry validity (E-4): it comes back
//! in the next client's recovery list, and the application repeats it through the driver's
//! `Transfers::recover_*`, the whole archive again under the same identity and under the same
//! record (U-5, RS-5). An archive whose size or digest changed since is refused and nothing is
//! sent (U-2, RS-2).

use crate::host_time::{HostClock, SystemClock};
use crate::journal::{DurableJournal, JournalError};
use crate::journaled::JournalRefusal;
use nervix_journal::{
    created_wall, Entry, JournalKey, JournaledTransfer, RecordEnd, RecordStore, RecoveredTransfer,
    TransferEnd, TransferJournal, TransferJournalStats, TransferKind, TransferRecord,
    TransferTicket,
};
use nervix_protocol::calls::{ArchiveInfo, RestoreCall, UploadCall};
use nervix_protocol::time::UnixMillis;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

pub use nervix_journal::TransferRefused;

/// Why a transfer was not journaled or repeated: nothing of it was sent.
pub type TransferJournalError = TransferRefused<JournalRefusal>;

/// The journal and the transfer policy, behind the lock.
#[derive(Debug)]
pub(crate) struct Shared {
    journal: DurableJournal,
    transfers: TransferJournal,
    /// Where the calls read the time: the host's clocks until the core that keeps the
    /// journal gives it its own clock.
    clock: Clock,
    /// The latest time handed to the journal: its clock never goes back, whoever writes.
    last_millis: u64,
    /// How long a record of an uncertain outcome is kept after its reference's creation.
    horizon: Duration,
}

/// The clock the separate calls read.
struct Clock(Arc<dyn HostClock>);

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

impl Shared {
    /// `given` as the journal's clock, never before an earlier call's time.
    fn millis(&mut self, given: u64) -> u64 {
        self.last_millis = self.last_millis.max(given);
        self.last_millis
    }

    /// The journal's clock now, for a call.
    fn now_millis(&mut self) -> u64 {
        // On the engine's time, which begins before the driver starts.
        let since = crate::driver_core::ENGINE_TIME_BEFORE_START + self.clock.0.elapsed();
        let given = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
        self.millis(given)
    }
}

/// The client's journal, shared by the core's command policy and the separate calls.
#[derive(Debug, Clone)]
pub(crate) struct SharedJournal(Arc<Mutex<Shared>>);

impl SharedJournal {
    /// `journal`, which held `transfers` when it was opened (sorted with `horizon`).
    pub(crate) fn new(
        journal: DurableJournal,
        transfers: Vec<RecoveredTransfer>,
        horizon: Duration,
    ) -> Self {
        Self(Arc::new(Mutex::new(Shared {
            journal,
            transfers: TransferJournal::new(transfers, horizon),
            clock: Clock(Arc::new(SystemClock::since(Instant::now()))),
            last_millis: 0,
            horizon,
        })))
    }

    /// How long a record of an uncertain outcome is kept after its reference's creation
    /// (the journal's configured horizon).
    pub(crate) fn horizon(&self) -> Duration {
        self.lock().horizon
    }

    /// From now on the separate calls read the time from `clock` (the core's, when it runs
    /// on a clock of its own).
    pub(crate) fn set_clock(&self, clock: Arc<dyn HostClock>) {
        self.lock().clock = Clock(clock);
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic while the lock was held left the journal as its last call left it: every
        // call carries out its file operations before it returns, or marks the journal broken.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Calls `f` with the journal and `now_millis` on the shared clock (which never recedes).
    pub(crate) fn with_journal<T>(
        &self,
        now_millis: u64,
        f: impl FnOnce(&mut DurableJournal, u64) -> T,
    ) -> T {
        let mut s = self.lock();
        let now = s.millis(now_millis);
        f(&mut s.journal, now)
    }

    /// Lets go of the bytes of a live batch (see [`DurableJournal::release_batch`]).
    pub(crate) fn release_batch(&self, key: JournalKey) -> bool {
        self.lock().journal.release_batch(key)
    }

    /// Gives a released batch its bytes again (see [`DurableJournal::attach_batch`]).
    pub(crate) fn attach_batch(&self, key: JournalKey, bytes: bytes::Bytes) -> bool {
        self.lock().journal.attach_batch(key, bytes)
    }

    /// Bytes of live batches the journal holds in memory.
    pub(crate) fn held_batch_bytes(&self) -> u64 {
        self.lock().journal.stats().held_batch_bytes
    }

    /// The handle a driver's separate calls keep their records through.
    pub(crate) fn handle(&self) -> TransferJournalHandle {
        TransferJournalHandle(Arc::downgrade(&self.0))
    }

    /// Carries out the periodic checkpoint if one is due at `now_millis`.
    pub(crate) fn checkpoint(&self, now_millis: u64) -> Result<(), JournalError> {
        let mut s = self.lock();
        let now = s.millis(now_millis);
        s.journal.checkpoint(now)
    }

    /// The transfers the journal held at start, once; the records of the expired ones stay
    /// until [`SharedJournal::transfers_reported`].
    pub(crate) fn take_transfers(&self) -> Vec<JournaledTransfer> {
        self.lock().transfers.take_recovery()
    }

    /// The transfers taken reached the application: the expired ones' records end; the ends
    /// the journal refused are returned.
    pub(crate) fn transfers_reported(&self, now_millis: u64) -> Vec<JournalError> {
        let mut s = self.lock();
        let now = s.millis(now_millis);
        let Shared {
            journal, transfers, ..
        } = &mut *s;
        transfers.recovery_reported(&mut Store(journal), now)
    }

    /// What the transfer policy did, and how many transfer records are live.
    pub(crate) fn transfer_stats(&self) -> (TransferJournalStats, usize) {
        let s = self.lock();
        (s.transfers.stats(), s.transfers.live_count())
    }
}

/// The durable journal as the transfer policy's store.
struct Store<'a>(&'a mut DurableJournal);

impl RecordStore for Store<'_> {
    type Error = JournalError;

    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        self.0.put(entry, now_millis)
    }

    fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        self.0.end(key, now_millis)
    }

    fn set_link(&mut self, publishing: bool) {
        self.0.set_link(publishing);
    }

    fn live(&self) -> usize {
        self.0.live()
    }
}

/// The command policy's store: the shared journal, on the same never-receding clock.
impl RecordStore for SharedJournal {
    type Error = JournalError;

    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        self.with_journal(now_millis, |j, now| j.put(entry, now))
    }

    fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        self.with_journal(now_millis, |j, now| j.end(key, now))
    }

    fn set_link(&mut self, publishing: bool) {
        self.lock().journal.set_link(publishing);
    }

    fn live(&self) -> usize {
        self.lock().journal.live()
    }
}

/// A separate call under way with a live journal record: hand it back to
/// [`TransferJournalHandle::end`] when the call ends.
#[derive(Debug)]
#[must_use = "a journaled call's record ends only through `end`"]
pub struct JournaledCall {
    ticket: TransferTicket,
    created_wall: UnixMillis,
}

impl JournaledCall {
    /// The call's reference (upload identity or restore reference).
    #[must_use]
    pub fn reference(&self) -> &str {
        self.ticket.reference()
    }

    /// When the reference was created, on the wall clock.
    #[must_use]
    pub fn created_wall(&self) -> UnixMillis {
        self.created_wall
    }
}

/// Where a driver's separate calls keep their records: the journal of the client they were
/// made with. It does not keep the journal open: once that client closed, a call is refused
/// ([`JournalRefusal::Failed`]) and an end is left for the next client's recovery.
#[derive(Debug, Clone)]
pub struct TransferJournalHandle(Weak<Mutex<Shared>>);

impl TransferJournalHandle {
    fn with<T>(
        &self,
        f: impl FnOnce(
            &mut TransferJournal,
            &mut Store<'_>,
            u64,
            UnixMillis,
        ) -> Result<T, TransferRefused<JournalError>>,
    ) -> Result<T, TransferJournalError> {
        let Some(shared) = self.0.upgrade() else {
            return Err(TransferRefused::Store(JournalRefusal::Failed(
                "the client that kept the journal has closed".into(),
            )));
        };
        let mut s = shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = s.now_millis();
        let wall = s.clock.0.wall();
        let Shared {
            journal, transfers, ..
        } = &mut *s;
        f(transfers, &mut Store(journal), now, wall).map_err(refusal)
    }

    fn begin(
        &self,
        kind: TransferKind,
        reference: &str,
        archive: &Path,
        info: ArchiveInfo,
    ) -> Result<JournaledCall, TransferJournalError> {
        let (ticket, created) = self.with(|t, store, now, wall| {
            let created = created_wall(reference, wall);
            let record = TransferRecord {
                kind,
                reference: reference.to_string(),
                archive: archive.to_string_lossy().into_owned(),
                size: info.total_bytes,
                digest: info.digest,
                created_wall: created,
            };
            let ticket = t.begin(store, record, now)?;
            // Nothing of the core may follow this record soon: with periodic durability it
            // is synced now, not at the core's next write. A failed sync breaks the journal
            // (every later call is refused); the record itself is written.
            if let Err(e) = store.0.sync_if_periodic() {
                tracing::warn!(error = %e, "nervix journal: a transfer record was not synced");
            }
            Ok((ticket, created))
        })?;
        tracing::debug!(reference, "nervix journal: transfer journaled");
        Ok(JournaledCall {
            ticket,
            created_wall: created,
        })
    }

    /// Journals `call`, an upload of the archive at `archive` whose exact size and digest are
    /// `info`, before its first byte is sent. A repeat of an identity with a live record reuses
    /// it (its archive must be the same).
    pub fn begin_upload(
        &self,
        call: &UploadCall,
        archive: &Path,
        info: ArchiveInfo,
    ) -> Result<JournaledCall, TransferJournalError> {
        let spec = call.spec();
        let kind = TransferKind::Upload {
            domain: spec.domain.clone(),
            resource: spec.resource.clone(),
        };
        self.begin(kind, call.identity(), archive, info)
    }

    /// Journals `call`, a restore of the archive at `archive`, before its first byte is sent.
    /// A repeat of a reference with a live record reuses it (its archive must be the same).
    pub fn begin_restore(
        &self,
        call: &RestoreCall,
        archive: &Path,
    ) -> Result<JournaledCall, TransferJournalError> {
        let kind = TransferKind::Restore {
            statement: call.statement().to_string(),
        };
        let reference = call.reference().to_string();
        self.begin(kind, &reference, archive, call.archive())
    }

    /// Repeats the journaled transfer `record` (from the recovery list), whose archive now has
    /// the size and digest `found`, under its live record. Refused with nothing sent when its
    /// record is not live, its reference is past its retry validity (the record then ends), or
    /// its archive changed.
    pub fn recover(
        &self,
        record: &TransferRecord,
        found: ArchiveInfo,
    ) -> Result<JournaledCall, TransferJournalError> {
        let (ticket, live) = self.with(|t, store, now, wall| {
            t.recover(
                store,
                &record.reference,
                found.total_bytes,
                &found.digest,
                wall,
                now,
            )
        })?;
        if live.kind != record.kind {
            // The application named a reference whose live record is another call: nothing
            // is sent, and the live record stays for its own repeat.
            return Err(TransferRefused::Conflict {
                reference: record.reference.clone(),
            });
        }
        Ok(JournaledCall {
            ticket,
            created_wall: live.created_wall,
        })
    }

    /// The call ended, its outcome (if any) handed to the application: its record ends,
    /// unless `uncertain` (some attempt carried the whole archive without learning the outcome)
    /// and its reference is still inside the retry validity. An end that cannot be written is
    /// logged; the record then comes back after a restart and is repeated under the same
    /// identity, which never applies it twice.
    pub fn end(&self, call: JournaledCall, uncertain: bool) {
        let end = if uncertain {
            TransferEnd::Uncertain
        } else {
            TransferEnd::Known
        };
        let reference = call.reference().to_string();
        let Some(shared) = self.0.upgrade() else {
            tracing::warn!(
                reference,
                "nervix journal: the client closed before the transfer ended; it is recovered after a restart"
            );
            return;
        };
        let mut s = shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = s.now_millis();
        let wall = s.clock.0.wall();
        let Shared {
            journal, transfers, ..
        } = &mut *s;
        match transfers.ended(&mut Store(journal), call.ticket, end, wall, now) {
            RecordEnd::Failed(e) => tracing::warn!(
                reference,
                error = %e,
                "nervix journal: a transfer record's end was not written; it is recovered again after a restart"
            ),
            RecordEnd::Kept => {
                tracing::debug!(reference, "nervix journal: uncertain transfer kept")
            }
            _ => {}
        }
    }
}

/// The `journaled` builder of a driver's `Transfers` (feature `journal`), written once for
/// both drivers: `$client` is the driver's client type and `$doc` the builder's
/// documentation. The type needs a field `journal` of `Option<TransferJournalHandle>`, and the
/// client a field `transfer_journal` of the same type.
#[macro_export]
macro_rules! transfers_journaled {
    ($client:ty, $doc:literal) => {
        #[doc = $doc]
        #[must_use]
        pub fn journaled(mut self, client: &$client) -> Self {
            self.journal = client.transfer_journal.clone();
            self
        }

        /// Refuses a call that would go out unjournaled although the configuration keeps
        /// a journal (these calls were never given a client's journal).
        fn unjournaled_refused(&self) -> Result<(), TransferError> {
            if self.journal_configured && self.journal.is_none() {
                return Err($crate::transfer_journal::TransferJournalError::Store(
                    $crate::journaled::JournalRefusal::NotJournaled,
                )
                .into());
            }
            Ok(())
        }
    };
}

/// A journaled restore made ready to be repeated: the call under the recorded reference and
/// statement, the archive opened again, and the live record it goes under.
#[derive(Debug)]
#[non_exhaustive]
pub struct RestoreRepeat {
    /// The journal the record ends in.
    pub journal: TransferJournalHandle,
    /// The live record, for [`TransferJournalHandle::end`] at the outcome.
    pub journaled: JournaledCall,
    /// The restore under its recorded reference and statement.
    pub call: RestoreCall,
    /// The archive, from its first byte.
    pub source: crate::ArchiveSource<std::fs::File>,
}

impl RestoreRepeat {
    /// The repeat ended with `r`: its record ends, unless it gave up uncertain (an attempt
    /// carried the whole archive without learning the outcome) inside its retry validity.
    pub fn end<T, E>(self, r: Result<T, E>) -> Result<T, E> {
        self.journal
            .end(self.journaled, r.is_err() && self.call.is_uncertain());
        r
    }
}

/// Makes the journaled restore `record` (from the recovery list) ready to be repeated under
/// its live record, for either driver. Refused with nothing sent when these calls keep no
/// journal or the record has none live, when it is no restore, when its archive's size or
/// digest changed since it was journaled, or when it is past its retry validity (its record
/// then ends).
pub fn restore_repeat<E>(
    journal: Option<&TransferJournalHandle>,
    record: &TransferRecord,
) -> Result<RestoreRepeat, E>
where
    E: From<TransferJournalError> + From<std::io::Error> + From<crate::transfer::CallError>,
{
    let Some(journal) = journal else {
        return Err(TransferRefused::NotLive(record.reference.clone()).into());
    };
    let TransferKind::Restore { statement } = &record.kind else {
        return Err(TransferRefused::Conflict {
            reference: record.reference.clone(),
        }
        .into());
    };
    let mut source = crate::ArchiveSource::open(Path::new(&record.archive))?;
    let info = source.info()?;
    let journaled = journal.recover(record, info)?;
    let call = nervix_protocol::command::ExecutionReference::parse(&record.reference)
        .map_err(crate::transfer::CallError::from)
        .and_then(|r| {
            RestoreCall::new(
                r,
                statement,
                info,
                nervix_protocol::calls::TransferConfig::restore(),
            )
        });
    match call {
        Ok(call) => Ok(RestoreRepeat {
            journal: journal.clone(),
            journaled,
            call,
            source,
        }),
        Err(e) => {
            journal.end(journaled, false);
            Err(e.into())
        }
    }
}

/// The policy's refusal, the store's error as the application's.
fn refusal(e: TransferRefused<JournalError>) -> TransferJournalError {
    match e {
        TransferRefused::Store(e) => TransferRefused::Store(e.into()),
        TransferRefused::ArchiveChanged {
            reference,
            journaled_size,
            found_size,
            same_digest,
        } => TransferRefused::ArchiveChanged {
            reference,
            journaled_size,
            found_size,
            same_digest,
        },
        TransferRefused::Conflict { reference } => TransferRefused::Conflict { reference },
        TransferRefused::NotLive(r) => TransferRefused::NotLive(r),
        TransferRefused::Expired(r) => TransferRefused::Expired(r),
        // `TransferRefused` may grow; nothing else refuses a transfer today.
        _ => TransferRefused::Store(JournalRefusal::Failed("refused".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_time::system_wall;
    use crate::journal::{JournalConfig, JournalDurability};

    /// A clock a test sets: elapsed time and wall time.
    #[derive(Clone)]
    struct Virtual(Arc<Mutex<(Duration, u64)>>);

    impl HostClock for Virtual {
        fn elapsed(&self) -> Duration {
            self.0.lock().unwrap().0
        }
        fn wall(&self) -> UnixMillis {
            UnixMillis(self.0.lock().unwrap().1)
        }
    }

    /// Given the core's clock, the separate calls read their time there: a record's creation
    /// (for a reference that carries none) is the clock's wall time, and a recovery's age
    /// counts on it, so a record is repeatable until the clock, not the host, passes its
    /// horizon.
    #[test]
    fn e_4_a_transfer_record_counts_its_age_on_the_clock_it_is_given() {
        let dir =
            std::env::temp_dir().join(format!("nervix-transfer-clock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = JournalConfig::new(&dir, "t");
        let (journal, _) = DurableJournal::open(&config, system_wall()).expect("opens");
        let shared = SharedJournal::new(journal, Vec::new(), config.horizon);
        // 2026-01-01, long before the host's clock: a host-read age would be months.
        let created = 1_767_225_600_000;
        let clock = Virtual(Arc::new(Mutex::new((Duration::from_secs(5), created))));
        shared.set_clock(Arc::new(clock.clone()));
        // The journal's monotonic time is the engine's time on that clock, and never goes
        // back.
        let engine_ms = |secs: u64| {
            (crate::driver_core::ENGINE_TIME_BEFORE_START + Duration::from_secs(secs)).as_millis()
                as u64
        };
        assert_eq!(shared.lock().now_millis(), engine_ms(5));
        clock.0.lock().unwrap().0 = Duration::from_secs(3);
        assert_eq!(shared.lock().now_millis(), engine_ms(5));
        clock.0.lock().unwrap().0 = Duration::from_secs(7);
        assert_eq!(shared.lock().now_millis(), engine_ms(7));
        let kind = TransferKind::Restore {
            statement: "RESTORE".into(),
        };
        let info = ArchiveInfo {
            total_bytes: 3,
            digest: [1; 32],
        };
        let handle = shared.handle();
        let call = handle
            .begin(kind.clone(), "restore-clock", Path::new("a.tar"), info)
            .expect("journaled");
        assert_eq!(call.created_wall(), UnixMillis(created));
        handle.end(call, true);
        let record = TransferRecord {
            kind,
            reference: "restore-clock".into(),
            archive: "a.tar".into(),
            size: 3,
            digest: [1; 32],
            created_wall: UnixMillis(created),
        };
        // A minute on: inside the horizon, repeated under its record.
        clock.0.lock().unwrap().1 = created + 60_000;
        let again = handle.recover(&record, info).expect("repeatable");
        handle.end(again, true);
        // Past the horizon on the clock: refused, and its record ends.
        let past = config.horizon.as_millis() as u64 + 60_000;
        clock.0.lock().unwrap().1 = created + past;
        assert!(
            matches!(
                handle.recover(&record, info),
                Err(TransferRefused::Expired(_))
            ),
            "expired on the clock it was given"
        );
        // A call whose outcome is known ends its record at once: nothing to repeat.
        let known = handle
            .begin(
                record.kind.clone(),
                "restore-known",
                Path::new("a.tar"),
                info,
            )
            .expect("journaled");
        handle.end(known, false);
        let record = TransferRecord {
            reference: "restore-known".into(),
            created_wall: UnixMillis(created + past),
            ..record
        };
        assert!(
            matches!(
                handle.recover(&record, info),
                Err(TransferRefused::NotLive(_))
            ),
            "ended"
        );
        drop(shared);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_transfer_record_is_synced_at_once_with_periodic_durability() {
        let dir = std::env::temp_dir().join(format!("nervix-transfer-sync-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut config = JournalConfig::new(&dir, "t");
        config.durability = JournalDurability::Periodic(Duration::from_secs(3600));
        let (journal, _) = DurableJournal::open(&config, system_wall()).expect("opens");
        let shared = SharedJournal::new(journal, Vec::new(), config.horizon);
        let syncs = |s: &SharedJournal| s.lock().journal.stats().file_syncs;
        let before = syncs(&shared);
        let call = shared
            .handle()
            .begin(
                TransferKind::Restore {
                    statement: "RESTORE".into(),
                },
                "0190a1b2-0000-7000-8000-000000000001",
                Path::new("archive.tar"),
                ArchiveInfo {
                    total_bytes: 3,
                    digest: [1; 32],
                },
            )
            .expect("journaled");
        assert!(syncs(&shared) > before, "synced before the call goes on");
        shared.handle().end(call, false);
        drop(shared);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
