//! Producer batches in outbox mode (feature `journal`): the records the data plane asks for,
//! over the client's durable journal.
//!
//! The data plane writes a batch's record before it answers the submission (a refused record
//! refuses the submission, and nothing is queued), and tells the core which batch of the
//! engine each record became, and which ended. Before any frame of the engine is handed to a
//! transport, the core has every batch the engine put on the wire marked handed
//! ([`Journaled::before_send`]), so a crash between the mark and the send counts the batch as
//! sent (P-8).

use super::{end_failed, millis, Journaled};
use crate::journal::{DurableJournal, JournalError};
use nervix_journal::{BatchRecord, HandedStore, JournalKey, RecordEnd};
use nervix_protocol::client::{BatchId, BatchState, Client as Engine, ProducerId};
use nervix_protocol::time::{Timestamp, UnixMillis};

pub use nervix_journal::{JournaledBatch, UnsentBatch};

/// Handed marks go to the durable journal.
impl HandedStore for DurableJournal {
    fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        DurableJournal::handed(self, key, now_millis)
    }
}

/// Handed marks go to the journal the core shares with the separate calls.
impl HandedStore for crate::transfer_journal::SharedJournal {
    fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        self.with_journal(now_millis, |j, now| j.handed(key, now))
    }
}

impl Journaled {
    /// Writes the record of a new batch of the producer of `domain` and `ingestor`; a
    /// refusal is the submission's error, and nothing is queued.
    pub(crate) fn put_batch(
        &mut self,
        domain: &str,
        ingestor: &str,
        batch: bytes::Bytes,
        now: Timestamp,
        wall: UnixMillis,
    ) -> Result<JournalKey, crate::api::Error> {
        let record = BatchRecord {
            domain: domain.to_owned(),
            ingestor: ingestor.to_owned(),
            batch,
            created_wall: wall,
        };
        let key = self
            .outbox
            .put(self.core.store_mut(), record, millis(now))
            .map_err(|e| crate::api::Error::Journal(e.into()))?;
        self.wrote(now);
        Ok(key)
    }

    /// Runs `take` (the engine taking the new batch of record `key`) with the journal's
    /// copy of the batch's bytes let go, so that the taker owns the buffer alone and frames
    /// the batch in it; then the journal shares the bytes `take` gives back (the stream as the
    /// engine holds it, or the batch it refused), so its record can be copied forward as any
    /// other. The flag says the engine framed the batch in the buffer it was laid in
    /// (counted). With `release` false (a recovered batch, whose bytes the journal keeps),
    /// `take` just runs.
    pub(crate) fn released_while<T>(
        &mut self,
        key: JournalKey,
        release: bool,
        take: impl FnOnce() -> (T, Option<(bytes::Bytes, bool)>),
    ) -> T {
        let released = release && self.core.store_mut().release_batch(key);
        let (out, back) = take();
        if released {
            if let Some((bytes, in_place)) = back {
                let attached = self.core.store_mut().attach_batch(key, bytes);
                self.framed_in_place += u64::from(attached && in_place);
            }
        }
        out
    }

    /// A recovered batch is submitted again under its record `key`: true once per recovered
    /// batch never handed.
    pub(crate) fn reuse_batch(&mut self, key: JournalKey) -> bool {
        self.outbox.reuse(key)
    }

    /// A reused record whose submission was refused before the engine took it: it can be
    /// submitted again.
    pub(crate) fn give_back_batch(&mut self, key: JournalKey) {
        self.outbox.give_back(key);
    }

    /// The engine took the batch of record `key` as `batch` of `producer`.
    pub(crate) fn batch_taken(&mut self, key: JournalKey, producer: ProducerId, batch: BatchId) {
        self.outbox.taken(key, producer, batch);
    }

    /// The batch of record `key` ended before the engine took it: its record ends.
    pub(crate) fn batch_dropped(&mut self, key: JournalKey, now: Timestamp) {
        let r = self.outbox.dropped(self.core.store_mut(), key, millis(now));
        self.wrote(now);
        if let Err(e) = r {
            end_failed(&e);
        }
    }

    /// `batch` of `producer` has its outcome, handed on: its record ends.
    pub(crate) fn batch_outcome(&mut self, producer: ProducerId, batch: BatchId, now: Timestamp) {
        let end = self
            .outbox
            .outcome(self.core.store_mut(), producer, batch, millis(now));
        if end.wrote() {
            self.wrote(now);
        }
        if let RecordEnd::Failed(e) = end {
            end_failed(&e);
        }
    }

    /// Before any frame of `engine` is handed to a transport: every batch the engine put on
    /// the wire gets its handed mark. False when a mark could not be written: the caller must
    /// not hand on the frames the engine holds.
    pub(crate) fn before_send(&mut self, engine: &Engine, now: Timestamp) -> bool {
        if !self.outbox.unhanded() {
            return true;
        }
        let r = self
            .outbox
            .before_send(self.core.store_mut(), millis(now), |p, b| {
                engine.batch_state(p, b) == Some(BatchState::Sent)
            });
        match r {
            Ok(0) => true,
            Ok(_) => {
                self.wrote(now);
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "nervix journal: a batch's handed mark was not written; its frame is not sent");
                false
            }
        }
    }
}
