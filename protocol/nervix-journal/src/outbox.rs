//! The policy that keeps a client's producer batches in its journal: the outbox (SF-2, P-8).
//!
//! In outbox mode a submission returns once its batch is journaled; the batch is sent when
//! credit allows. The policy follows each batch from its record to its end:
//!
//! * [`BatchOutbox::put`] writes the batch's record (its producer's domain and ingestor, its
//!   Arrow IPC bytes, its submission time). A store that refuses it (full: SF-23, SF-24)
//!   refuses the submission, and nothing is queued.
//! * [`BatchOutbox::taken`] says which batch of the engine the record is.
//! * [`BatchOutbox::before_send`] writes the `handed` mark of every batch the engine put on
//!   the wire, before its frame is handed to the transport: a crash between the two counts
//!   the batch as sent, so it is never sent again after a restart (P-8).
//! * [`BatchOutbox::outcome`] ends the record at the batch's outcome, whatever it is (an
//!   [`Unknown`](nervix_protocol::client::BatchOutcome::Unknown) one after a lost session
//!   among them: it is reported, and never sent again).
//!
//! After a restart, [`BatchOutbox::new`] sorts the batches the journal held: a batch handed
//! without an outcome is reported of unknown outcome ([`JournaledBatch::UnknownOutcome`],
//! [`BatchOutbox::take_recovery`]) and its record ends once the report was handed on
//! ([`BatchOutbox::recovery_reported`]: a crash before that leaves it, to be reported after
//! the next start, never lost); a batch never handed is
//! returned with its bytes ([`JournaledBatch::Unsent`]) for the application to submit again,
//! and that submission reuses its record ([`BatchOutbox::reuse`]), once.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use nervix_protocol::client::{BatchId, ProducerId};
use nervix_protocol::time::UnixMillis;

use crate::classify::RecoveredBatch;
use crate::commands::{RecordEnd, RecordStore};
use crate::record::{BatchRecord, Entry, JournalKey};

/// A record store that also marks records as handed to the transport.
pub trait HandedStore: RecordStore {
    /// Marks the record of `key` as handed to the transport, before the send.
    fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<(), Self::Error>;
}

/// A batch found in the journal when the client started, never handed to the transport:
/// submit it again through a producer of the same domain and ingestor, which reuses its
/// record (at most once).
#[derive(Clone, PartialEq, Eq)]
pub struct UnsentBatch {
    key: JournalKey,
    /// The producer's domain.
    pub domain: String,
    /// The producer's ingestor.
    pub ingestor: String,
    /// The batch as it was submitted: one Arrow IPC stream.
    pub batch: Bytes,
    /// When it was submitted, on the wall clock.
    pub created_wall: UnixMillis,
}

impl std::fmt::Debug for UnsentBatch {
    /// Its key, producer, time and the length of its bytes (not the bytes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnsentBatch")
            .field("key", &self.key)
            .field("domain", &self.domain)
            .field("ingestor", &self.ingestor)
            .field("bytes", &self.batch.len())
            .field("created_wall", &self.created_wall)
            .finish()
    }
}

impl UnsentBatch {
    /// Its journal key.
    #[must_use]
    pub fn key(&self) -> JournalKey {
        self.key
    }
}

/// A producer batch found in the journal when the client started.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournaledBatch {
    /// Never handed to the transport: submit it again (its record is reused).
    Unsent(UnsentBatch),
    /// Handed to the transport without an outcome: it may or may not have been ingested, and
    /// it is never sent again (P-8). Its record ended when it was reported.
    UnknownOutcome {
        /// The producer's domain.
        domain: String,
        /// The producer's ingestor.
        ingestor: String,
        /// When it was submitted, on the wall clock.
        created_wall: UnixMillis,
    },
}

/// Counts of what a [`BatchOutbox`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutboxStats {
    /// Batch records written.
    pub journaled: u64,
    /// Recovered records reused by a submission.
    pub reused: u64,
    /// Handed marks written.
    pub handed: u64,
    /// Batch records ended.
    pub ended: u64,
    /// Submissions refused because the record could not be written.
    pub refused: u64,
    /// Marks or ends the store refused.
    pub write_failures: u64,
    /// Batches reported of unknown outcome after a restart.
    pub unknown_reported: u64,
}

/// Which record each batch of the engine has, and what a restart found.
#[derive(Debug, Default)]
pub struct BatchOutbox {
    /// Taken by the engine and not handed to the transport yet.
    unhanded: BTreeMap<(ProducerId, BatchId), JournalKey>,
    /// Handed to the transport, waiting for an outcome.
    handed: BTreeMap<(ProducerId, BatchId), JournalKey>,
    /// Recovered batches never handed, not submitted again yet.
    reusable: BTreeSet<JournalKey>,
    /// The recovery list, and the keys to end once it was handed on.
    recovery: crate::report::ToReport<Vec<JournaledBatch>>,
    stats: OutboxStats,
}

impl BatchOutbox {
    /// The outbox of a journal that held `batches` when it was read (in journal order).
    #[must_use]
    pub fn new(batches: Vec<RecoveredBatch>) -> Self {
        let mut list = Vec::new();
        let mut reported = Vec::new();
        let mut reusable = BTreeSet::new();
        for b in batches {
            match b {
                RecoveredBatch::Unsent { key, record } => {
                    reusable.insert(key);
                    list.push(JournaledBatch::Unsent(UnsentBatch {
                        key,
                        domain: record.domain,
                        ingestor: record.ingestor,
                        batch: record.batch,
                        created_wall: record.created_wall,
                    }));
                }
                RecoveredBatch::UnknownOutcome {
                    key,
                    domain,
                    ingestor,
                    created_wall,
                } => {
                    reported.push(key);
                    list.push(JournaledBatch::UnknownOutcome {
                        domain,
                        ingestor,
                        created_wall,
                    });
                }
            }
        }
        Self {
            reusable,
            recovery: crate::report::ToReport::new(list, reported),
            ..Self::default()
        }
    }

    /// The recovery list, once; later calls get an empty list. The records of batches of
    /// unknown outcome stay until [`BatchOutbox::recovery_reported`] says the list was
    /// handed on: a crash before that leaves them, to be reported after the next start
    /// (ended first, an unknown outcome the application was never told would be lost).
    pub fn take_recovery(&mut self) -> Vec<JournaledBatch> {
        let list = self.recovery.take();
        self.stats.unknown_reported += self.recovery.waiting() as u64;
        list
    }

    /// The list taken was handed on: the records of the batches it reports of unknown
    /// outcome end (an end the store refuses is counted and given back). Later calls end
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
            &mut self.stats.write_failures,
        )
    }

    /// Writes the record of a new batch: refused (and counted) when the store refuses it,
    /// and then nothing is to be queued.
    pub fn put<S: RecordStore>(
        &mut self,
        store: &mut S,
        record: BatchRecord,
        now_millis: u64,
    ) -> Result<JournalKey, S::Error> {
        match store.put(&Entry::Batch(record), now_millis) {
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

    /// A submission of a recovered batch reuses its record: true once per recovered batch
    /// never handed; false for any other key (one reused already, or never recovered).
    pub fn reuse(&mut self, key: JournalKey) -> bool {
        let fresh = self.reusable.remove(&key);
        if fresh {
            self.stats.reused += 1;
        }
        fresh
    }

    /// A reused record whose submission was refused before the engine took it: it can be
    /// submitted again.
    pub fn give_back(&mut self, key: JournalKey) {
        self.reusable.insert(key);
    }

    /// The engine took the batch of record `key` as `batch` of `producer`.
    pub fn taken(&mut self, key: JournalKey, producer: ProducerId, batch: BatchId) {
        self.unhanded.insert((producer, batch), key);
    }

    /// Whether some batch the engine took is not handed yet.
    #[must_use]
    pub fn unhanded(&self) -> bool {
        !self.unhanded.is_empty()
    }

    /// Batches the engine took and has not handed on, or handed and not answered.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.unhanded.len() + self.handed.len()
    }

    /// Call before any frame of the engine is handed to a transport: every batch taken and
    /// not marked yet that `sent` says is out on the wire gets its `handed` mark, in batch
    /// order. A refused mark stops there and is returned: the caller must not hand that
    /// batch's frame on (the batch's record says it was never sent).
    pub fn before_send<S: HandedStore>(
        &mut self,
        store: &mut S,
        now_millis: u64,
        mut sent: impl FnMut(ProducerId, BatchId) -> bool,
    ) -> Result<usize, S::Error> {
        let out: Vec<(ProducerId, BatchId)> = self
            .unhanded
            .keys()
            .copied()
            .filter(|(p, b)| sent(*p, *b))
            .collect();
        let mut marked = 0;
        for pb in out {
            let Some(&key) = self.unhanded.get(&pb) else {
                continue;
            };
            if let Err(e) = store.handed(key, now_millis) {
                self.stats.write_failures += 1;
                return Err(e);
            }
            self.unhanded.remove(&pb);
            self.handed.insert(pb, key);
            self.stats.handed += 1;
            marked += 1;
        }
        Ok(marked)
    }

    /// `batch` of `producer` has its outcome, now handed on: its record ends.
    pub fn outcome<S: RecordStore>(
        &mut self,
        store: &mut S,
        producer: ProducerId,
        batch: BatchId,
        now_millis: u64,
    ) -> RecordEnd<S::Error> {
        let key = match self.handed.remove(&(producer, batch)) {
            Some(k) => k,
            None => match self.unhanded.remove(&(producer, batch)) {
                Some(k) => k,
                None => return RecordEnd::NotJournaled,
            },
        };
        self.end(store, key, now_millis).into()
    }

    /// A batch whose record `key` was written, never taken by the engine, ended (its
    /// submission refused, or its producer gone): its record ends.
    pub fn dropped<S: RecordStore>(
        &mut self,
        store: &mut S,
        key: JournalKey,
        now_millis: u64,
    ) -> Result<(), S::Error> {
        self.reusable.remove(&key);
        self.end(store, key, now_millis)
    }

    fn end<S: RecordStore>(
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
            &mut self.stats.write_failures,
        )
    }

    /// What the outbox did.
    #[must_use]
    pub fn stats(&self) -> OutboxStats {
        self.stats
    }
}
