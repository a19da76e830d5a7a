//! The client journal on disk (feature `journal`): the records of `nervix-journal` kept in a
//! slot directory `<dir>/<sender>/` of store-and-forward segment files, held by one client at
//! a time through the slot lock.
//!
//! [`DurableJournal::open`] validates the sender name, creates the slot, takes its lock before
//! reading anything (a second client on the slot is refused naming the holder's process),
//! recovers the slot (a torn tail is cut), carries out the repairs and hands back what came
//! back as a [`RecoveryList`]. What the list names stays live until [`DurableJournal::end`]
//! is called for it. Every call carries out its file operations before it returns; with
//! [`JournalDurability::EveryRecord`] they include the syncs, so a record is on stable storage
//! when its call returns.
//!
//! After a failed file operation the journal's memory and its files may disagree, so every
//! later call is refused with [`JournalError::Broken`]; reopening the slot recovers from the
//! files.
//!
//! ## Orphans
//!
//! With [`JournalConfig::adopt_orphans`] on (it is off by default), opening also adopts the
//! slots that dead clients left beside this one: every sibling slot under `<dir>` that still
//! holds segment files and whose lock can be taken (a slot whose client is alive is skipped).
//! Their live records join the recovery list under keys of their own, so the application
//! finishes their recoveries as it finishes its own; ends are written to the orphan's slot.
//! The orphan's lock is held until its last record ends; then its files are removed (the lock
//! files stay) and the lock is released. A client that dies while holding an orphan
//! leaves it an orphan again, for the next adopter.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use nervix_journal::{ClientJournal, ClientJournalConfig, SyncPolicy, Written};
use nervix_protocol::time::UnixMillis;
use sf_journal::orphan::orphan_candidates;
use sf_journal::recovery::RecoveryError;
use sf_journal::slot::{parse_segment_name, LOCK, LOCK_PID, MANIFEST};
use sf_journal::FileOp;
use sf_journal_io::fsdir::IoError;
use sf_journal_io::orphans::list_slots;
use sf_journal_io::{FileDir, LockError, SlotLock};

pub use nervix_journal::{
    BatchRecord, CommandRecord, DecodeError, Entry, JournalKey, JournalLink, LiveEntry,
    RecoveredBatch, RecoveredCommand, RecoveredTransfer, RecoveryList, TransferKind,
    TransferRecord, DEFAULT_HORIZON,
};

/// When the journal's files are flushed to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum JournalDurability {
    /// Never (the default): a killed process loses nothing, a host crash may.
    #[default]
    None,
    /// Every journal file and the directory at this interval, checked on each call and on
    /// [`DurableJournal::checkpoint`].
    Periodic(Duration),
    /// After every record, before its call returns.
    EveryRecord,
}

/// Where the journal lives and how it behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalConfig {
    /// The directory holding one slot per sender.
    pub dir: PathBuf,
    /// The sender's name: its slot is `<dir>/<sender>/`. One path component.
    pub sender: String,
    /// When the files are synced.
    pub durability: JournalDurability,
    /// The most segment bytes puts may fill; at least two segments are allowed.
    pub capacity_bytes: u64,
    /// The size of each segment file; a record must fit one.
    pub segment_bytes: u64,
    /// How old a recovered command or transfer may be and still be repeated, and how long a
    /// record of an uncertain outcome is kept (E-4); below [`SERVER_RETRY_VALIDITY`], or the
    /// journal refuses to open.
    pub horizon: Duration,
    /// Whether opening adopts the slots dead clients left under `dir` (off by default): their
    /// records join the recovery list, and each slot is emptied once its last record ends.
    pub adopt_orphans: bool,
    /// The most orphan slots one opening adopts (default [`DEFAULT_MAX_ORPHANS`]): each one
    /// holds its open files, its lock and its journal until its last record ends. The slots
    /// past it are left as they are for a later opening, and counted
    /// ([`JournalStats::orphans_deferred`]).
    pub max_orphans: usize,
    /// The most bytes of orphan slots one opening adopts (default
    /// [`DEFAULT_MAX_ORPHAN_BYTES`]): an adopted slot's files are read whole when it is
    /// opened. Sizes are read from the file system before anything is read; the slots past
    /// the bound are deferred as with [`JournalConfig::max_orphans`]. The first orphan is
    /// adopted even when it alone is larger, so every orphan is adopted in time.
    pub max_orphan_bytes: u64,
}

/// The retry validity of a reference on the server by default (E-4): 15 minutes. A journal's
/// horizon stays below it.
pub const SERVER_RETRY_VALIDITY: Duration = Duration::from_secs(15 * 60);

/// The most orphan slots one opening adopts unless configured otherwise.
pub const DEFAULT_MAX_ORPHANS: usize = 16;

/// The most bytes of orphan slots one opening adopts unless configured otherwise: 256 MiB.
pub const DEFAULT_MAX_ORPHAN_BYTES: u64 = 256 << 20;

impl JournalConfig {
    /// The slot `<dir>/<sender>/` with the defaults: no syncs, 64 MiB capacity in 8 MiB
    /// segments (every record the client can journal fits one: a batch or a query of the
    /// largest size a frame carries, under the longest names), a ten-minute horizon, at most [`DEFAULT_MAX_ORPHANS`] orphans adopted per
    /// opening. Without syncs the slot also keeps one trimmed segment for the next segment to
    /// reuse (its pages are written over instead of made anew), so it holds at most one
    /// segment more than the capacity.
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>, sender: impl Into<String>) -> Self {
        let defaults = ClientJournalConfig::default();
        Self {
            dir: dir.into(),
            sender: sender.into(),
            durability: JournalDurability::None,
            capacity_bytes: defaults.capacity_bytes,
            segment_bytes: defaults.segment_bytes,
            horizon: DEFAULT_HORIZON,
            adopt_orphans: false,
            max_orphans: DEFAULT_MAX_ORPHANS,
            max_orphan_bytes: DEFAULT_MAX_ORPHAN_BYTES,
        }
    }

    /// The same configuration, adopting the slots dead clients left under `dir` when opened
    /// (see the module's docs).
    #[must_use]
    pub fn adopting_orphans(mut self) -> Self {
        self.adopt_orphans = true;
        self
    }

    /// The same configuration, adopting at most `n` orphan slots per opening.
    #[must_use]
    pub fn with_max_orphans(mut self, n: usize) -> Self {
        self.max_orphans = n;
        self
    }

    /// The same configuration, adopting at most `bytes` of orphan slots per opening (see
    /// [`JournalConfig::max_orphan_bytes`]).
    #[must_use]
    pub fn with_max_orphan_bytes(mut self, bytes: u64) -> Self {
        self.max_orphan_bytes = bytes;
        self
    }

    fn engine(&self) -> ClientJournalConfig {
        let sync = match self.durability {
            JournalDurability::None => SyncPolicy::None,
            JournalDurability::Periodic(d) => SyncPolicy::Periodic {
                interval_millis: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
            },
            JournalDurability::EveryRecord => SyncPolicy::EveryRecord,
        };
        ClientJournalConfig::new(self.segment_bytes, self.capacity_bytes).with_sync(sync)
    }
}

/// Why the journal refused to open or to take a call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// Another client holds the slot.
    #[error("journal slot {slot} is held by another client (process {})", pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string()))]
    Held {
        /// The slot directory.
        slot: PathBuf,
        /// The holder's process id, if its pid file is readable.
        pid: Option<u32>,
    },
    /// No room for the record until live entries end (SF-23, SF-24).
    #[error("journal full while {}: {needed} bytes needed", match link { JournalLink::Reconnecting => "reconnecting", _ => "publishing" })]
    Full {
        /// The state of the wire when the record was refused.
        link: JournalLink,
        /// The bytes the record needs.
        needed: u64,
    },
    /// A file operation failed.
    #[error("journal I/O: {0}")]
    Io(#[from] IoError),
    /// A frame of the slot passed its checksum but is not a journal record.
    #[error("journal frame {fsn} is not a record: {why}")]
    Corrupt {
        /// Its FSN.
        fsn: i64,
        /// What is wrong with it.
        why: DecodeError,
    },
    /// The sender name is not one path component.
    #[error("journal sender {0:?} is not one path component")]
    InvalidSender(String),
    /// The horizon reaches the server's retry validity (E-4): a command that old may have
    /// had its record reclaimed, so it is no longer repeated safely.
    #[error(
        "journal horizon {horizon:?} is not below the server's retry validity of {validity:?}"
    )]
    InvalidHorizon {
        /// The horizon configured.
        horizon: Duration,
        /// The server's retry validity by default, which it must stay below.
        validity: Duration,
    },
    /// The record does not fit a segment.
    #[error("journal record of {len} bytes; a segment holds at most {max}")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The largest record a segment holds.
        max: usize,
    },
    /// The key is not live (never put, or already ended).
    #[error("journal key {0:?} is not live")]
    UnknownKey(JournalKey),
    /// The slot's segments are not a journal the ring can recover (a gap, an overlap, a bad
    /// header).
    #[error("journal recovery: {0}")]
    Recovery(RecoveryError),
    /// Every key, FSN or segment name is used.
    #[error("journal exhausted its keys, FSNs or segment names")]
    Exhausted,
    /// An earlier file operation failed; reopen the slot.
    #[error("journal broken by an earlier I/O failure")]
    Broken,
}

impl From<nervix_journal::JournalError> for JournalError {
    fn from(e: nervix_journal::JournalError) -> Self {
        use nervix_journal::JournalError as E;
        match e {
            E::Full { link, needed } => Self::Full { link, needed },
            E::TooLarge { len, max } => Self::TooLarge { len, max },
            E::UnknownKey(k) => Self::UnknownKey(k),
            E::Corrupt { fsn, why } => Self::Corrupt { fsn, why },
            E::Recovery(r) => Self::Recovery(r),
            _ => Self::Exhausted,
        }
    }
}

impl From<LockError> for JournalError {
    fn from(e: LockError) -> Self {
        match e {
            LockError::Held { slot, pid } => Self::Held { slot, pid },
            LockError::Io { path, source } => Self::Io(IoError {
                what: "lock",
                file: path,
                source,
            }),
            other => Self::Io(IoError {
                what: "lock",
                file: PathBuf::new(),
                source: std::io::Error::other(other.to_string()),
            }),
        }
    }
}

/// Counts of what the journal did, and what it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalStats {
    /// Entries put.
    pub puts: u64,
    /// Handed marks written.
    pub handed: u64,
    /// Entries ended.
    pub ends: u64,
    /// Live records copied forward so they do not pin old segments.
    pub copies_forward: u64,
    /// Calls refused because the journal was full.
    pub fulls: u64,
    /// Entries live now, the adopted orphans' included.
    pub live: u64,
    /// Bytes of the live entries' records.
    pub live_bytes: u64,
    /// Bytes of live batches the client's own journal and its adopted orphans hold in
    /// memory (see [`nervix_journal::JournalStats::held_batch_bytes`]).
    pub held_batch_bytes: u64,
    /// Segment bytes on disk now.
    pub resident_bytes: u64,
    /// File syncs carried out.
    pub file_syncs: u64,
    /// Directory syncs carried out.
    pub dir_syncs: u64,
    /// Orphan slots adopted when the journal was opened.
    pub orphans_adopted: u64,
    /// Records those orphans held when adopted.
    pub orphan_records: u64,
    /// Adopted orphans whose last record ended (their files but the lock files removed, their lock released).
    pub orphans_finished: u64,
    /// Orphan slots left alone: held by a live client, or not readable as a journal.
    pub orphans_skipped: u64,
    /// Orphan slots not tried because the opening had adopted [`JournalConfig::max_orphans`]
    /// (or [`JournalConfig::max_orphan_bytes`]) already: left as they are, for a later
    /// opening.
    pub orphans_deferred: u64,
}

/// The journal of one client on disk. Dropping it releases the slot (the files stay for the
/// next client on the slot), and every orphan it still holds.
#[derive(Debug)]
pub struct DurableJournal {
    journal: ClientJournal,
    dir: FileDir,
    horizon: Duration,
    durability: JournalDurability,
    broken: bool,
    /// Adopted orphans by index (a finished one leaves `None`, so indexes stay put).
    adopted: Vec<Option<Orphan>>,
    orphans: OrphanCounts,
    // Dropped last: the lock outlives every write.
    _lock: SlotLock,
}

/// An adopted orphan slot: its journal, its files and its lock.
#[derive(Debug)]
struct Orphan {
    journal: ClientJournal,
    dir: FileDir,
    // Dropped last: the lock outlives every write.
    _lock: SlotLock,
}

#[derive(Debug, Clone, Copy, Default)]
struct OrphanCounts {
    adopted: u64,
    records: u64,
    finished: u64,
    skipped: u64,
    deferred: u64,
}

/// The bit that marks a key as an orphan's: bits 40 to 62 name the orphan, bits 0 to 39 its
/// key in the orphan's own journal. The client's own keys never reach it.
const ORPHAN_BIT: u64 = 1 << 63;
const ORPHAN_KEY_BITS: u32 = 40;
const ORPHAN_KEY_MASK: u64 = (1 << ORPHAN_KEY_BITS) - 1;
const MAX_ORPHANS: usize = 1 << (63 - ORPHAN_KEY_BITS);

/// The key the client uses for `key` of orphan `index`, if it can be told apart.
fn orphan_key(index: usize, key: JournalKey) -> Option<JournalKey> {
    (index < MAX_ORPHANS && key.0 <= ORPHAN_KEY_MASK).then_some(JournalKey(
        ORPHAN_BIT | ((index as u64) << ORPHAN_KEY_BITS) | key.0,
    ))
}

/// The orphan index and the orphan's own key of a client key, or `None` for the client's own.
fn split_key(key: JournalKey) -> Option<(usize, JournalKey)> {
    (key.0 & ORPHAN_BIT != 0).then_some((
        ((key.0 & !ORPHAN_BIT) >> ORPHAN_KEY_BITS) as usize,
        JournalKey(key.0 & ORPHAN_KEY_MASK),
    ))
}

/// Renames every key of `list` with `rename`; `None` when some key cannot be renamed.
fn rename_keys(
    list: RecoveryList,
    rename: impl Fn(JournalKey) -> Option<JournalKey>,
) -> Option<RecoveryList> {
    let mut out = RecoveryList::default();
    for c in list.commands {
        out.commands.push(match c {
            RecoveredCommand::Repeatable { key, record } => RecoveredCommand::Repeatable {
                key: rename(key)?,
                record,
            },
            RecoveredCommand::Expired {
                key,
                reference,
                created_wall,
            } => RecoveredCommand::Expired {
                key: rename(key)?,
                reference,
                created_wall,
            },
            _ => return None,
        });
    }
    for t in list.transfers {
        out.transfers.push(match t {
            RecoveredTransfer::Repeatable { key, record } => RecoveredTransfer::Repeatable {
                key: rename(key)?,
                record,
            },
            RecoveredTransfer::Expired {
                key,
                reference,
                created_wall,
            } => RecoveredTransfer::Expired {
                key: rename(key)?,
                reference,
                created_wall,
            },
            _ => return None,
        });
    }
    for b in list.batches {
        out.batches.push(match b {
            RecoveredBatch::Unsent { key, record } => RecoveredBatch::Unsent {
                key: rename(key)?,
                record,
            },
            RecoveredBatch::UnknownOutcome {
                key,
                domain,
                ingestor,
                created_wall,
            } => RecoveredBatch::UnknownOutcome {
                key: rename(key)?,
                domain,
                ingestor,
                created_wall,
            },
            _ => return None,
        });
    }
    Some(out)
}

/// Removes the files of a finished orphan's slot but its lock files: the segments first, then
/// the rest (a slot without segments is no orphan, whatever else a cut removal left).
fn empty_slot(dir: &FileDir) -> Result<(), IoError> {
    let names = dir.names()?;
    let (segments, rest): (Vec<_>, Vec<_>) = names
        .into_iter()
        .filter(|n| n != LOCK && n != LOCK_PID)
        .partition(|n| parse_segment_name(n).is_some());
    for name in segments.iter().chain(&rest) {
        let file = dir.path().join(name);
        std::fs::remove_file(&file).map_err(|source| IoError {
            what: "remove",
            file,
            source,
        })?;
    }
    Ok(())
}

/// Whether `sender` names exactly one ordinary path component.
fn valid_sender(sender: &str) -> bool {
    let mut parts = Path::new(sender).components();
    matches!(parts.next(), Some(Component::Normal(p)) if p == sender)
        && parts.next().is_none()
        && !sender.contains(['/', '\\', '\0'])
}

impl DurableJournal {
    /// Opens the slot `<dir>/<sender>/`: creates it if missing, takes its lock first (a slot
    /// held by a live client is refused with [`JournalError::Held`] naming it), recovers it and
    /// carries out the repairs. The list sorts what came back at `wall_now` with the
    /// configured horizon; everything in it stays live until ended.
    pub fn open(
        config: &JournalConfig,
        wall_now: UnixMillis,
    ) -> Result<(Self, RecoveryList), JournalError> {
        if !valid_sender(&config.sender) {
            return Err(JournalError::InvalidSender(config.sender.clone()));
        }
        if config.horizon >= SERVER_RETRY_VALIDITY {
            return Err(JournalError::InvalidHorizon {
                horizon: config.horizon,
                validity: SERVER_RETRY_VALIDITY,
            });
        }
        let (journal, dir, lock) = Self::open_slot(config, &config.sender)?;
        let mut list = journal.classify(wall_now, config.horizon);
        let mut this = Self {
            journal,
            dir,
            horizon: config.horizon,
            durability: config.durability,
            broken: false,
            adopted: Vec::new(),
            orphans: OrphanCounts::default(),
            _lock: lock,
        };
        if config.adopt_orphans {
            this.adopt(config, wall_now, &mut list);
        }
        Ok((this, list))
    }

    /// Adopts every orphan beside the slot that can be locked and read, adding its records
    /// to `list`. An orphan that cannot be is left as it is, and counted.
    fn adopt(&mut self, config: &JournalConfig, wall_now: UnixMillis, list: &mut RecoveryList) {
        let slots = match list_slots(&config.dir) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "nervix journal: the slots beside this one could not be listed; no orphan adopted");
                return;
            }
        };
        let candidates = orphan_candidates(&config.sender, &slots, true);
        let total = candidates.len();
        let mut bytes = 0u64;
        for (tried, name) in candidates.into_iter().enumerate() {
            let size = slot_bytes(&config.dir.join(&name));
            let over_bytes =
                !self.adopted.is_empty() && bytes.saturating_add(size) > config.max_orphan_bytes;
            if self.adopted.len() >= config.max_orphans || over_bytes {
                let deferred = (total - tried) as u64;
                tracing::info!(
                    adopted = self.adopted.len(),
                    adopted_bytes = bytes,
                    deferred,
                    "nervix journal: the most orphans one opening adopts are adopted; the rest wait for a later opening"
                );
                self.orphans.deferred += deferred;
                break;
            }
            let index = self.adopted.len();
            match Self::open_orphan(config, &name, wall_now, index) {
                Ok((orphan, found)) => {
                    let records = found.len() as u64;
                    tracing::info!(slot = %name, records, "nervix journal: orphan adopted");
                    self.orphans.adopted += 1;
                    self.orphans.records += records;
                    bytes = bytes.saturating_add(size);
                    list.commands.extend(found.commands);
                    list.transfers.extend(found.transfers);
                    list.batches.extend(found.batches);
                    self.adopted.push(Some(orphan));
                    if records == 0 {
                        // Nothing left to finish: empty it now.
                        self.finish_if_done(index);
                    }
                }
                Err(e) => {
                    tracing::info!(slot = %name, error = %e, "nervix journal: orphan left alone");
                    self.orphans.skipped += 1;
                }
            }
        }
    }

    /// The slot `<dir>/<name>/`, created if missing, its lock taken before anything is read
    /// (a slot held by a live client is [`JournalError::Held`]), recovered, and its repairs
    /// carried out.
    fn open_slot(
        config: &JournalConfig,
        name: &str,
    ) -> Result<(ClientJournal, FileDir, SlotLock), JournalError> {
        let slot = config.dir.join(name);
        let mut dir = FileDir::create(&slot)?;
        let lock = SlotLock::acquire(&slot)?;
        let files = dir.read_slot()?;
        let (journal, ops) = ClientJournal::recover(config.engine(), &files)?;
        apply(&mut dir, &ops, JournalCall::Open)?;
        Ok((journal, dir, lock))
    }

    fn open_orphan(
        config: &JournalConfig,
        name: &str,
        wall_now: UnixMillis,
        index: usize,
    ) -> Result<(Orphan, RecoveryList), JournalError> {
        let (journal, dir, lock) = Self::open_slot(config, name)?;
        let found = rename_keys(journal.classify(wall_now, config.horizon), |k| {
            orphan_key(index, k)
        })
        .ok_or(JournalError::Exhausted)?;
        Ok((
            Orphan {
                journal,
                dir,
                _lock: lock,
            },
            found,
        ))
    }

    /// Empties and releases orphan `index` once none of its records is live.
    fn finish_if_done(&mut self, index: usize) {
        let Some(Some(orphan)) = self.adopted.get(index) else {
            return;
        };
        if orphan.journal.live() > 0 {
            return;
        }
        let slot = orphan.dir.path().display().to_string();
        if let Err(e) = empty_slot(&orphan.dir) {
            // Its records all ended: a later adopter finds nothing live in what is left.
            tracing::warn!(slot = %slot, error = %e, "nervix journal: a finished orphan's segments were not all removed");
        }
        tracing::info!(slot = %slot, "nervix journal: orphan finished");
        self.adopted[index] = None;
        self.orphans.finished += 1;
    }

    /// Carries out `step` (a call of kind `call`) on the journal `key` belongs to (the
    /// client's own or an orphan's), with the key that journal knows.
    fn carry_out(
        &mut self,
        key: Option<JournalKey>,
        call: JournalCall<'_>,
        step: impl FnOnce(
            &mut ClientJournal,
            JournalKey,
        ) -> Result<Written, nervix_journal::JournalError>,
    ) -> Result<JournalKey, JournalError> {
        if self.broken {
            return Err(JournalError::Broken);
        }
        let key = key.unwrap_or(JournalKey(0));
        let (journal, dir, inner, orphan) = match split_key(key) {
            None => (&mut self.journal, &mut self.dir, key, None),
            Some((index, inner)) => match self.adopted.get_mut(index) {
                Some(Some(o)) => (&mut o.journal, &mut o.dir, inner, Some(index)),
                _ => return Err(JournalError::UnknownKey(key)),
            },
        };
        let w = step(journal, inner)?;
        let call = match call {
            JournalCall::Put { entry, .. } => JournalCall::Put { key: w.key, entry },
            other => other,
        };
        if let Err(e) = apply(dir, &w.ops, call) {
            self.broken = true;
            return Err(e.into());
        }
        if let Some(index) = orphan {
            self.finish_if_done(index);
            return Ok(key);
        }
        Ok(w.key)
    }

    /// Journals `entry` under a new key; with [`JournalDurability::EveryRecord`] it is synced
    /// before this returns. `now_millis` is the driver's monotonic time in milliseconds.
    pub fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        let call = JournalCall::Put {
            key: JournalKey(0),
            entry,
        };
        self.carry_out(None, call, |j, _| j.put(entry, now_millis))
    }

    /// Marks the entry of `key` as handed to the transport; call it before the send.
    pub fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        #[cfg(feature = "testkit")]
        if !self.broken && testkit::handed_mark_fails(self.dir.path()) {
            // As a failed write would: the journal is broken from now on.
            self.broken = true;
            return Err(JournalError::Io(IoError {
                what: "write",
                file: self.dir.path().to_path_buf(),
                source: std::io::Error::other("a handed mark failed by the test kit"),
            }));
        }
        let call = JournalCall::Handed(key);
        self.carry_out(Some(key), call, |j, k| j.handed(k, now_millis))
            .map(drop)
    }

    /// Ends the entry of `key`: its outcome is known and was handed on. The end of an
    /// adopted orphan's last record empties the orphan's slot and releases it.
    pub fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        let call = JournalCall::End(key);
        self.carry_out(Some(key), call, |j, k| j.end(k, now_millis))
            .map(drop)
    }

    /// Lets go of the bytes of the client's own live batch of `key`, which its record on
    /// disk keeps: see [`ClientJournal::release_batch`]. False for any other key (an adopted
    /// orphan's among them).
    pub fn release_batch(&mut self, key: JournalKey) -> bool {
        split_key(key).is_none() && self.journal.release_batch(key)
    }

    /// Gives a released batch its bytes again: see [`ClientJournal::attach_batch`].
    pub fn attach_batch(&mut self, key: JournalKey, bytes: bytes::Bytes) -> bool {
        split_key(key).is_none() && self.journal.attach_batch(key, bytes)
    }

    /// Carries out the periodic checkpoint if one is due at `now_millis`.
    pub fn checkpoint(&mut self, now_millis: u64) -> Result<(), JournalError> {
        if self.broken {
            return Err(JournalError::Broken);
        }
        let ops = self.journal.poll_checkpoint(now_millis);
        if let Err(e) = apply(&mut self.dir, &ops, JournalCall::Sync) {
            self.broken = true;
            return Err(e.into());
        }
        for o in self.adopted.iter_mut().flatten() {
            let ops = o.journal.poll_checkpoint(now_millis);
            if let Err(e) = apply(&mut o.dir, &ops, JournalCall::Sync) {
                self.broken = true;
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// With [`JournalDurability::Periodic`], flushes the client's own slot to stable storage
    /// now, for a record that no later write or periodic sync of the core may follow soon (a
    /// separate call's, written outside the core). The other durabilities need nothing:
    /// `None` never syncs and `EveryRecord` already did.
    pub fn sync_if_periodic(&mut self) -> Result<(), JournalError> {
        if !matches!(self.durability, JournalDurability::Periodic(_)) {
            return Ok(());
        }
        if self.broken {
            return Err(JournalError::Broken);
        }
        let mut ops: Vec<FileOp> = self
            .journal
            .segment_files()
            .map(|file| FileOp::Sync {
                file: file.to_owned(),
            })
            .collect();
        if self.dir.path().join(MANIFEST).exists() {
            ops.push(FileOp::Sync {
                file: MANIFEST.to_owned(),
            });
        }
        ops.push(FileOp::SyncDir);
        if let Err(e) = apply(&mut self.dir, &ops, JournalCall::Sync) {
            self.broken = true;
            return Err(e.into());
        }
        Ok(())
    }

    /// Tells the journal whether the wire is publishing (`true`) or reconnecting, which a
    /// [`JournalError::Full`] names.
    pub fn set_link(&mut self, publishing: bool) {
        self.journal.set_link(if publishing {
            JournalLink::Publishing
        } else {
            JournalLink::Reconnecting
        });
    }

    /// How many entries are live, the adopted orphans' included.
    #[must_use]
    pub fn live(&self) -> usize {
        self.journal.live()
            + self
                .adopted
                .iter()
                .flatten()
                .map(|o| o.journal.live())
                .sum::<usize>()
    }

    /// The live entry of `key` (the client's own or an adopted orphan's).
    #[must_use]
    pub fn get(&self, key: JournalKey) -> Option<LiveEntry<'_>> {
        match split_key(key) {
            None => self.journal.get(key),
            Some((index, inner)) => self.adopted.get(index)?.as_ref()?.journal.get(inner),
        }
    }

    /// The client's own live entries in the order they were put (not the orphans').
    pub fn live_entries(&self) -> impl Iterator<Item = LiveEntry<'_>> {
        self.journal.live_entries()
    }

    /// The slot directories of the orphans adopted and not yet finished.
    pub fn orphan_slots(&self) -> impl Iterator<Item = &Path> {
        self.adopted.iter().flatten().map(|o| o.dir.path())
    }

    /// The client's own live entries sorted as [`DurableJournal::open`] sorts them, at
    /// `wall_now` (not the orphans').
    #[must_use]
    pub fn classify(&self, wall_now: UnixMillis) -> RecoveryList {
        self.journal.classify(wall_now, self.horizon)
    }

    /// The largest entry record a segment holds.
    #[must_use]
    pub fn max_record_bytes(&self) -> usize {
        self.journal.max_record_bytes()
    }

    /// What the journal did, and holds now.
    #[must_use]
    pub fn stats(&self) -> JournalStats {
        let j = self.journal.stats();
        let d = self.dir.stats();
        JournalStats {
            puts: j.puts,
            handed: j.handed,
            ends: j.ends,
            copies_forward: j.copies_forward,
            fulls: j.fulls,
            live: self.live() as u64,
            live_bytes: j.live_bytes,
            held_batch_bytes: j.held_batch_bytes
                + self
                    .adopted
                    .iter()
                    .flatten()
                    .map(|o| o.journal.stats().held_batch_bytes)
                    .sum::<u64>(),
            resident_bytes: j.resident_bytes,
            file_syncs: d.file_syncs,
            dir_syncs: d.dir_syncs,
            orphans_adopted: self.orphans.adopted,
            orphan_records: self.orphans.records,
            orphans_finished: self.orphans.finished,
            orphans_skipped: self.orphans.skipped,
            orphans_deferred: self.orphans.deferred,
        }
    }

    /// The slot directory.
    #[must_use]
    pub fn slot_dir(&self) -> &Path {
        self.dir.path()
    }
}

/// What a journal call carrying out file operations is (a fault a test plans for feature
/// `testkit` is told). Public for the test kit alone, which names it
/// (`testkit::JournalCall`): hidden from the crate's documented interface.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
#[doc(hidden)]
pub enum JournalCall<'a> {
    /// The slot's repairs, as it is opened.
    Open,
    /// The record of `entry` is written under `key`.
    Put {
        /// The record's key.
        key: JournalKey,
        /// What it records.
        entry: &'a Entry,
    },
    /// The record of this key is marked handed.
    Handed(JournalKey),
    /// The record of this key ends.
    End(JournalKey),
    /// A sync (periodic or asked for).
    Sync,
}

/// Carries out `ops`, the file operations of `call`, in `dir`, in order, stopping at the first
/// failure. With feature `testkit` a crash a test planned for the slot may cut them.
#[inline]
fn apply(dir: &mut FileDir, ops: &[FileOp], call: JournalCall<'_>) -> Result<(), IoError> {
    #[cfg(feature = "testkit")]
    if testkit::crashes_planned() {
        return testkit::apply_planned(dir, ops, &call);
    }
    let _ = call;
    dir.apply_all(ops)
}

/// Faults a test arms (feature `testkit`): never on in a build without it.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod testkit {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    /// Whether any fault is armed: the common case reads this alone.
    static ARMED: AtomicBool = AtomicBool::new(false);
    /// The slots whose next handed mark fails, one entry a fault.
    static HANDED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    /// The next handed mark written to the slot directory `slot` (`<dir>/<sender>`) fails as
    /// a failed write would: the call gets an I/O error and the journal is broken from then
    /// on.
    pub fn fail_next_handed_mark(slot: &Path) {
        let mut h = HANDED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        h.push(slot.to_path_buf());
        ARMED.store(true, Ordering::SeqCst);
    }

    pub use super::JournalCall;

    /// What becomes of one file operation of a slot whose crashes a test planned.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Fate {
        /// Carried out.
        Carry,
        /// The process dies before it: nothing of it is carried out, but a write leaves
        /// its first `torn` bytes (modulo its length) when given (mid-append). The call
        /// fails, and every later one (the journal is broken).
        Die {
            /// How many of a write's bytes reach the file.
            torn: Option<u64>,
        },
        /// Carried out, then the process dies: the call fails, having written this.
        CarryThenDie,
    }

    /// A test's plan of crashes for one slot: asked about each file operation the journal
    /// carries out there. A dead process carries out nothing: once it said `Die` or
    /// `CarryThenDie`, it says `Die` to what follows.
    pub trait CrashPlan: Send {
        /// The fate of `op`, the `index`th of the `count` operations of `call`.
        fn fate(&mut self, call: &JournalCall<'_>, op: &FileOp, index: usize, count: usize)
            -> Fate;
    }

    /// A file operation the plan is asked about.
    pub use sf_journal::FileOp;
    use sf_journal_io::fsdir::IoError;
    use sf_journal_io::FileDir;

    /// Whether any crash plan is set: the common case reads this alone.
    static PLANNED: AtomicBool = AtomicBool::new(false);
    /// The slots with a crash plan.
    #[allow(clippy::type_complexity)]
    static PLANS: Mutex<Vec<(PathBuf, Box<dyn CrashPlan>)>> = Mutex::new(Vec::new());

    /// From now on the journal of the slot directory `slot` (`<dir>/<sender>`) asks `plan`
    /// about each of its file operations (replacing any plan the slot had).
    pub fn plan_crashes(slot: &Path, plan: Box<dyn CrashPlan>) {
        let mut p = PLANS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        p.retain(|(s, _)| s != slot);
        p.push((slot.to_path_buf(), plan));
        PLANNED.store(true, Ordering::SeqCst);
    }

    /// The slot `slot` has no crash plan any more.
    pub fn forget_crashes(slot: &Path) {
        let mut p = PLANS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        p.retain(|(s, _)| s != slot);
        PLANNED.store(!p.is_empty(), Ordering::SeqCst);
    }

    pub(crate) fn crashes_planned() -> bool {
        PLANNED.load(Ordering::Relaxed)
    }

    /// Carries out `ops` of `call` in `dir` as the slot's plan (if any) says.
    pub(crate) fn apply_planned(
        dir: &mut FileDir,
        ops: &[FileOp],
        call: &JournalCall<'_>,
    ) -> Result<(), IoError> {
        let mut plans = PLANS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some((_, plan)) = plans.iter_mut().find(|(s, _)| s == dir.path()) else {
            drop(plans);
            return dir.apply_all(ops);
        };
        let died = |dir: &FileDir| IoError {
            what: "write",
            file: dir.path().to_path_buf(),
            source: std::io::Error::other("the process died here (test kit)"),
        };
        for (index, op) in ops.iter().enumerate() {
            match plan.fate(call, op, index, ops.len()) {
                Fate::Carry => dir.apply(op)?,
                Fate::CarryThenDie => {
                    dir.apply(op)?;
                    return Err(died(dir));
                }
                Fate::Die { torn } => {
                    if let (Some(n), Some(bytes), Some(file)) = (torn, op.written(), op.file()) {
                        let offset = match op {
                            FileOp::Write { offset, .. } | FileOp::WriteParts { offset, .. } => {
                                *offset
                            }
                            _ => 0,
                        };
                        let n = (n % bytes.len().max(1) as u64) as usize;
                        let part = FileOp::Write {
                            file: file.to_owned(),
                            offset,
                            bytes: bytes[..n].to_vec(),
                        };
                        dir.apply(&part)?;
                    }
                    return Err(died(dir));
                }
            }
        }
        Ok(())
    }

    /// Whether a handed mark of the slot `slot` is to fail now (the fault is then used up).
    pub(crate) fn handed_mark_fails(slot: &Path) -> bool {
        if !ARMED.load(Ordering::Relaxed) {
            return false;
        }
        let mut h = HANDED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(i) = h.iter().position(|p| p == slot) else {
            return false;
        };
        h.swap_remove(i);
        ARMED.store(!h.is_empty(), Ordering::SeqCst);
        true
    }
}

/// The bytes of the files of the slot at `path`, from the file system's sizes (nothing read);
/// what cannot be listed counts as nothing.
fn slot_bytes(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len())
                .fold(0u64, u64::saturating_add)
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_orphan_key_names_its_orphan_and_its_own_key_up_to_the_bounds() {
        for (index, key) in [
            (0, 0),
            (1, 7),
            (MAX_ORPHANS - 1, ORPHAN_KEY_MASK),
            (5, ORPHAN_KEY_MASK),
        ] {
            let k = orphan_key(index, JournalKey(key)).expect("within the bounds");
            assert_eq!(split_key(k), Some((index, JournalKey(key))));
        }
        assert_eq!(orphan_key(MAX_ORPHANS, JournalKey(0)), None);
        assert_eq!(orphan_key(0, JournalKey(ORPHAN_KEY_MASK + 1)), None);
        // The client's own keys are its own, up to the orphan bit.
        assert_eq!(split_key(JournalKey(0)), None);
        assert_eq!(split_key(JournalKey(ORPHAN_BIT - 1)), None);
    }
}
