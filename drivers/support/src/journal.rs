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

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use nervix_journal::{ClientJournal, ClientJournalConfig, SyncPolicy, Written};
use nervix_protocol::time::UnixMillis;
use sf_journal::recovery::RecoveryError;
use sf_journal_io::fsdir::IoError;
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
    /// How old a recovered command or transfer may be and still be repeated (E-4).
    pub horizon: Duration,
}

impl JournalConfig {
    /// The slot `<dir>/<sender>/` with the defaults: no syncs, 64 MiB capacity in 1 MiB
    /// segments, a ten-minute horizon.
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
        }
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
    /// Entries live now.
    pub live: u64,
    /// Bytes of the live entries' records.
    pub live_bytes: u64,
    /// Segment bytes on disk now.
    pub resident_bytes: u64,
    /// File syncs carried out.
    pub file_syncs: u64,
    /// Directory syncs carried out.
    pub dir_syncs: u64,
}

/// The journal of one client on disk. Dropping it releases the slot (the files stay for the
/// next client on the slot).
#[derive(Debug)]
pub struct DurableJournal {
    journal: ClientJournal,
    dir: FileDir,
    horizon: Duration,
    broken: bool,
    // Dropped last: the lock outlives every write.
    _lock: SlotLock,
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
        let slot = config.dir.join(&config.sender);
        let mut dir = FileDir::create(&slot)?;
        let lock = SlotLock::acquire(&slot)?;
        let files = dir.read_slot()?;
        let (journal, ops) = ClientJournal::recover(config.engine(), &files)?;
        dir.apply_all(&ops)?;
        let list = journal.classify(wall_now, config.horizon);
        Ok((
            Self {
                journal,
                dir,
                horizon: config.horizon,
                broken: false,
                _lock: lock,
            },
            list,
        ))
    }

    fn carry_out(
        &mut self,
        step: impl FnOnce(&mut ClientJournal) -> Result<Written, nervix_journal::JournalError>,
    ) -> Result<JournalKey, JournalError> {
        if self.broken {
            return Err(JournalError::Broken);
        }
        let w = step(&mut self.journal)?;
        if let Err(e) = self.dir.apply_all(&w.ops) {
            self.broken = true;
            return Err(e.into());
        }
        Ok(w.key)
    }

    /// Journals `entry` under a new key; with [`JournalDurability::EveryRecord`] it is synced
    /// before this returns. `now_millis` is the driver's monotonic time in milliseconds.
    pub fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        self.carry_out(|j| j.put(entry, now_millis))
    }

    /// Marks the entry of `key` as handed to the transport; call it before the send.
    pub fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        self.carry_out(|j| j.handed(key, now_millis)).map(drop)
    }

    /// Ends the entry of `key`: its outcome is known and was handed on.
    pub fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        self.carry_out(|j| j.end(key, now_millis)).map(drop)
    }

    /// Carries out the periodic checkpoint if one is due at `now_millis`.
    pub fn checkpoint(&mut self, now_millis: u64) -> Result<(), JournalError> {
        if self.broken {
            return Err(JournalError::Broken);
        }
        let ops = self.journal.poll_checkpoint(now_millis);
        if let Err(e) = self.dir.apply_all(&ops) {
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

    /// How many entries are live.
    #[must_use]
    pub fn live(&self) -> usize {
        self.journal.live()
    }

    /// The live entry of `key`.
    #[must_use]
    pub fn get(&self, key: JournalKey) -> Option<LiveEntry<'_>> {
        self.journal.get(key)
    }

    /// The live entries in the order they were put.
    pub fn live_entries(&self) -> impl Iterator<Item = LiveEntry<'_>> {
        self.journal.live_entries()
    }

    /// The live entries sorted as [`DurableJournal::open`] sorts them, at `wall_now`.
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
            live: j.live,
            live_bytes: j.live_bytes,
            resident_bytes: j.resident_bytes,
            file_syncs: d.file_syncs,
            dir_syncs: d.dir_syncs,
        }
    }

    /// The slot directory.
    #[must_use]
    pub fn slot_dir(&self) -> &Path {
        self.dir.path()
    }
}
