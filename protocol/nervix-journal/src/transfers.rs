//! The policy that keeps a client's uploads and restores in its journal, over any record store.
//!
//! An upload or a restore is a separate call, run outside the engine's command flow, so its
//! record is kept by this policy beside the commands' ([`CommandJournal`](crate::CommandJournal))
//! over the same [`RecordStore`]. The record (the call's reference, its statement or domain and
//! resource, the archive's path, size and BLAKE3 digest, and when the reference was created) is
//! put before the first byte of the first attempt is sent: a refused put refuses the call, and
//! nothing is sent. The record ends once the call's outcome is known and handed to the
//! application; a call that gave up uncertain (some attempt carried the whole archive without
//! learning its outcome) keeps it while its reference is inside the retry validity (E-4), so the
//! whole archive can be sent again under the same identity, now or after a restart.
//!
//! A repeat reuses the live record of its reference: no second record is written. A repeat whose
//! archive no longer has the journaled size or digest is refused, and nothing is sent. After a
//! restart a record past the retry validity is reported unknown, naming its reference, and its
//! record ends once reported; it is never repeated.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use nervix_protocol::command::ExecutionReference;
use nervix_protocol::time::UnixMillis;

use crate::classify::{within, RecoveredTransfer};
use crate::commands::{RecordEnd, RecordStore};
use crate::record::{Entry, JournalKey, TransferKind, TransferRecord};

/// An upload or a restore found in the journal when the client started.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournaledTransfer {
    /// Still inside its retry validity (E-4): send the whole archive again under its identity
    /// to learn its outcome. The record holds everything the repeat needs.
    Repeatable {
        /// The transfer as it was journaled.
        record: TransferRecord,
    },
    /// Too old to repeat (E-4): its outcome is unknown, and it is never repeated.
    Unknown {
        /// The reference (upload identity or restore reference) to ask about out of band.
        reference: String,
        /// When its reference was created (wall clock).
        created_wall: UnixMillis,
    },
}

/// How a journaled transfer's call ended, for its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransferEnd {
    /// Its outcome is known (installed, restored, refused, failed, or certainly without effect)
    /// and was handed to the application.
    Known,
    /// It ended without its outcome after some attempt carried the whole archive: it may have
    /// taken effect.
    Uncertain,
}

/// Why a transfer was not started or repeated under the journal: nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransferRefused<E> {
    /// The store refused the record (full, or broken).
    #[error("the journal refused the transfer's record: {0}")]
    Store(E),
    /// The archive's bytes are not those journaled under this reference: a repeat under the
    /// same identity must carry exactly the same archive.
    #[error("the archive of {reference} changed since it was journaled ({journaled_size} bytes then, {found_size} now{})", if *same_digest { "" } else { ", another digest" })]
    ArchiveChanged {
        /// The transfer's reference.
        reference: String,
        /// The size journaled.
        journaled_size: u64,
        /// The size found now.
        found_size: u64,
        /// Whether the digest found now is the journaled one.
        same_digest: bool,
    },
    /// The transfer's call differs from the journaled one (upload or restore, target, or
    /// statement) under the same reference.
    #[error("the transfer {reference} is not the one journaled under its reference")]
    Conflict {
        /// The reference.
        reference: String,
    },
    /// The reference has no live record to repeat under (never journaled here, already
    /// ended, or reported unknown).
    #[error("the transfer {0} has no live journal record")]
    NotLive(String),
    /// The reference is past its retry validity (E-4): never repeated; its record ended.
    #[error("the transfer {0} is past its retry validity and is not repeated")]
    Expired(String),
}

/// Counts of what a [`TransferJournal`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransferJournalStats {
    /// Transfer records written.
    pub journaled: u64,
    /// Transfer records ended.
    pub ended: u64,
    /// Repeats that reused a live record.
    pub reused: u64,
    /// Transfers refused because their record could not be written.
    pub refused: u64,
    /// Repeats refused because the archive changed or the call differs.
    pub changed: u64,
    /// Ends the store refused: those records come back after a restart.
    pub end_failures: u64,
}

/// A transfer under way with a live record: hand it back to [`TransferJournal::ended`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a journaled transfer's record ends only through `ended`"]
pub struct TransferTicket {
    key: JournalKey,
    reference: String,
}

impl TransferTicket {
    /// The record's key.
    #[must_use]
    pub fn key(&self) -> JournalKey {
        self.key
    }

    /// The transfer's reference.
    #[must_use]
    pub fn reference(&self) -> &str {
        &self.reference
    }
}

/// When a transfer's reference was created: the time of its UUIDv7, or `wall_now` for a
/// reference that is not one (its retry validity then counts from its first journaling).
#[must_use]
pub fn created_wall(reference: &str, wall_now: UnixMillis) -> UnixMillis {
    ExecutionReference::parse(reference)
        .ok()
        .and_then(|r| r.uuid_v7_millis())
        .map_or(wall_now, UnixMillis)
}

/// Which transfer records are live, by reference, and what the journal held at start.
#[derive(Debug)]
pub struct TransferJournal {
    horizon: Duration,
    live: BTreeMap<String, (JournalKey, TransferRecord)>,
    /// The references whose transfer ended uncertain in this process and whose record is
    /// kept for a repeat, until the horizon passes since their creation.
    kept: BTreeSet<String>,
    /// The recovery list, and the keys to end once it reached the application.
    recovery: crate::report::ToReport<Vec<JournaledTransfer>>,
    stats: TransferJournalStats,
}

impl TransferJournal {
    /// The policy over what the journal held at start (`transfers`, classified with the same
    /// `horizon`): the repeatable ones stay live under their references, the expired ones end
    /// once reported.
    #[must_use]
    pub fn new(transfers: Vec<RecoveredTransfer>, horizon: Duration) -> Self {
        let mut live = BTreeMap::new();
        let mut list = Vec::new();
        let mut reported = Vec::new();
        for t in transfers {
            match t {
                RecoveredTransfer::Repeatable { key, record } => {
                    live.insert(record.reference.clone(), (key, record.clone()));
                    list.push(JournaledTransfer::Repeatable { record });
                }
                RecoveredTransfer::Expired {
                    key,
                    reference,
                    created_wall,
                } => {
                    reported.push(key);
                    list.push(JournaledTransfer::Unknown {
                        reference,
                        created_wall,
                    });
                }
            }
        }
        Self {
            horizon,
            live,
            kept: BTreeSet::new(),
            recovery: crate::report::ToReport::new(list, reported),
            stats: TransferJournalStats::default(),
        }
    }

    /// The recovery list, once; later calls get an empty list. The records of the transfers
    /// it reports unknown (too old to repeat) stay until [`TransferJournal::recovery_reported`]:
    /// a crash before the list reaches the application leaves them for the next start.
    pub fn take_recovery(&mut self) -> Vec<JournaledTransfer> {
        self.recovery.take()
    }

    /// The list taken reached the application: the records of the transfers it reports
    /// unknown end (an end the store refuses is counted and given back). Later calls end
    /// nothing.
    pub fn recovery_reported<S: RecordStore>(
        &mut self,
        store: &mut S,
        now_millis: u64,
    ) -> Vec<S::Error> {
        self.recovery.end_counted(
            store,
            now_millis,
            &mut self.stats.ended,
            &mut self.stats.end_failures,
        )
    }

    /// Starts `record`'s transfer: its record is put now, before any byte is sent. A reference
    /// with a live record (a repeat) reuses it, provided the call and archive are the same
    /// ([`TransferRefused::ArchiveChanged`], [`TransferRefused::Conflict`] otherwise). A
    /// refused put is [`TransferRefused::Store`]. Every refusal means: send nothing.
    pub fn begin<S: RecordStore>(
        &mut self,
        store: &mut S,
        record: TransferRecord,
        now_millis: u64,
    ) -> Result<TransferTicket, TransferRefused<S::Error>> {
        // The new transfer's creation is now: what was kept past the horizon before it ends.
        self.expire_kept(store, record.created_wall, now_millis);
        if let Some((key, live)) = self.live.get(&record.reference) {
            let key = *key;
            same_transfer(live, &record.kind, record.size, &record.digest).inspect_err(|_| {
                self.stats.changed += 1;
            })?;
            self.kept.remove(&record.reference);
            self.stats.reused += 1;
            return Ok(TransferTicket {
                key,
                reference: record.reference,
            });
        }
        match store.put(&Entry::Transfer(record.clone()), now_millis) {
            Ok(key) => {
                self.stats.journaled += 1;
                let reference = record.reference.clone();
                self.live.insert(reference.clone(), (key, record));
                Ok(TransferTicket { key, reference })
            }
            Err(e) => {
                self.stats.refused += 1;
                Err(TransferRefused::Store(e))
            }
        }
    }

    /// Repeats the journaled transfer of `reference` (from the recovery list, or one that gave
    /// up uncertain in this process) under its live record, at `wall_now`, whose archive now has
    /// `found_size` bytes hashing to `found_digest`. Refused, with nothing to send, when the
    /// reference has no live record, is past its retry validity (its record then ends: it is
    /// reported by the refusal and never repeated), or its archive changed. The record is
    /// returned with the ticket: the repeat sends it under the same identity.
    pub fn recover<S: RecordStore>(
        &mut self,
        store: &mut S,
        reference: &str,
        found_size: u64,
        found_digest: &[u8; 32],
        wall_now: UnixMillis,
        now_millis: u64,
    ) -> Result<(TransferTicket, TransferRecord), TransferRefused<S::Error>> {
        let Some((key, record)) = self.live.get(reference) else {
            return Err(TransferRefused::NotLive(reference.to_string()));
        };
        let (key, record) = (*key, record.clone());
        if !within(record.created_wall, wall_now, self.horizon) {
            self.live.remove(reference);
            // Reported by the refusal: the record ends (a failed end comes back as unknown
            // after a restart, never as repeatable).
            let _ = self.end_key(store, key, now_millis);
            return Err(TransferRefused::Expired(reference.to_string()));
        }
        same_transfer(&record, &record.kind, found_size, found_digest).inspect_err(|_| {
            self.stats.changed += 1;
        })?;
        self.kept.remove(reference);
        self.stats.reused += 1;
        Ok((
            TransferTicket {
                key,
                reference: reference.to_string(),
            },
            record,
        ))
    }

    /// The transfer of `ticket` ended as `end` at `wall_now`, its outcome (if any) handed to
    /// the application. Its record ends unless the outcome is uncertain and its reference is
    /// still inside the retry validity (E-4): then it is [`RecordEnd::Kept`] for a repeat.
    pub fn ended<S: RecordStore>(
        &mut self,
        store: &mut S,
        ticket: TransferTicket,
        end: TransferEnd,
        wall_now: UnixMillis,
        now_millis: u64,
    ) -> RecordEnd<S::Error> {
        let Some((key, record)) = self.live.get(&ticket.reference) else {
            return RecordEnd::NotJournaled;
        };
        if *key != ticket.key {
            return RecordEnd::NotJournaled;
        }
        if end == TransferEnd::Uncertain && within(record.created_wall, wall_now, self.horizon) {
            self.kept.insert(ticket.reference);
            return RecordEnd::Kept;
        }
        self.kept.remove(&ticket.reference);
        self.live.remove(&ticket.reference);
        self.end_key(store, ticket.key, now_millis).into()
    }

    /// Ends the records kept for uncertain transfers of this process whose horizon passed by
    /// `wall_now` (the application was told each was uncertain, and none can be repeated any
    /// more), so they do not pile up in a long-lived client's journal. A refused end is
    /// counted; its record comes back as unknown after a restart.
    fn expire_kept<S: RecordStore>(
        &mut self,
        store: &mut S,
        wall_now: UnixMillis,
        now_millis: u64,
    ) {
        let expired: Vec<(String, JournalKey)> = self
            .kept
            .iter()
            .filter_map(|r| {
                let (key, record) = self.live.get(r)?;
                (!within(record.created_wall, wall_now, self.horizon)).then(|| (r.clone(), *key))
            })
            .collect();
        for (reference, key) in expired {
            self.kept.remove(&reference);
            self.live.remove(&reference);
            let _ = self.end_key(store, key, now_millis);
        }
    }

    fn end_key<S: RecordStore>(
        &mut self,
        store: &mut S,
        key: JournalKey,
        now_millis: u64,
    ) -> Result<(), S::Error> {
        crate::report::end_counted(
            store,
            key,
            now_millis,
            &mut self.stats.ended,
            &mut self.stats.end_failures,
        )
    }

    /// The live record of `reference`, if any.
    #[must_use]
    pub fn live(&self, reference: &str) -> Option<(JournalKey, &TransferRecord)> {
        self.live.get(reference).map(|(k, r)| (*k, r))
    }

    /// How many transfer records are live.
    #[must_use]
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// What the policy did.
    #[must_use]
    pub fn stats(&self) -> TransferJournalStats {
        self.stats
    }
}

/// Whether a call of `kind` over an archive of `size` bytes hashing to `digest` is the one
/// `live` journaled.
fn same_transfer<E>(
    live: &TransferRecord,
    kind: &TransferKind,
    size: u64,
    digest: &[u8; 32],
) -> Result<(), TransferRefused<E>> {
    if &live.kind != kind {
        return Err(TransferRefused::Conflict {
            reference: live.reference.clone(),
        });
    }
    if live.size != size || &live.digest != digest {
        return Err(TransferRefused::ArchiveChanged {
            reference: live.reference.clone(),
            journaled_size: live.size,
            found_size: size,
            same_digest: &live.digest == digest,
        });
    }
    Ok(())
}
