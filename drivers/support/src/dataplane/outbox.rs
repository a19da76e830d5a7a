//! Outbox mode (feature `journal`): producer batches journaled before their submission is
//! answered.
//!
//! When the client keeps a journal, a submission is answered as soon as its batch's record
//! is written (SF-2: the producer never waits for the wire); the batch's outcome still comes
//! to its handle later. A batch the engine has no room for yet waits here, journaled and
//! answered, and is handed to the engine in submission order as room comes (P-4). It is named
//! by the outbox (a name with the top bit set) until then, and keeps that name. A record that
//! cannot be written refuses the submission (SF-23, SF-24) and nothing is queued, so the
//! outbox is bounded in count and bytes by the journal's capacity.
//!
//! The data plane tells the core, in order, which batch of the engine each record became and
//! which ended ([`Note`]); the core tells the journal, and has every batch the engine put on
//! the wire marked handed before any frame reaches a transport.

use super::{Dataplane, Hand, Taken};
use crate::journaled::{JournalRefusal, Journaled};
use crate::released::Released;
use crate::Submission;
use nervix_journal::JournalKey;
use nervix_protocol::client::{
    BatchId, BatchOutcome, Client as Engine, LaidBatch, LaidRefusal, ProducerId, ProducerState,
    SubmitError,
};
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::collections::{BTreeMap, BTreeSet};

/// The top bit of a batch name given by the outbox (the engine's names never reach it).
const OUTBOX_NAME: u64 = 1 << 63;

/// A journaled batch waiting for the engine to take it.
pub(crate) struct Outboxed<H: Hand> {
    key: JournalKey,
    /// The batch as journaled: its canonical IPC stream and its rows.
    batch: Encoded,
    outcome: H::Once<BatchOutcome>,
    name: BatchId,
}

/// A journaled batch on its way to the engine, encoded once: laid out by the engine as its
/// first frame will carry it (a new submission), or the stream a journal returned after a
/// restart.
#[derive(Debug)]
pub(crate) enum Encoded {
    /// Laid by the engine ([`Engine::lay_batch`]): framed without a copy when nothing else
    /// holds its bytes.
    Laid(LaidBatch),
    /// A recovered batch's canonical IPC stream and its rows, copied into its frame.
    Stream { rows: usize, ipc: bytes::Bytes },
}

impl Encoded {
    /// Hands the batch to the engine; one it refuses comes back with the reason (moved
    /// straight back into the outbox or dropped: not worth a box).
    #[allow(clippy::result_large_err)]
    fn submit(
        self,
        engine: &mut Engine,
        now: Timestamp,
        producer: ProducerId,
    ) -> Result<BatchId, (SubmitError, Self)> {
        match self {
            Encoded::Laid(b) => engine.submit_laid(now, producer, b).map_err(|r| {
                let LaidRefusal { error, batch, .. } = *r;
                (error, Encoded::Laid(batch))
            }),
            Encoded::Stream { rows, ipc } => engine
                .submit_encoded(now, producer, rows, &ipc)
                .map_err(|e| (e, Encoded::Stream { rows, ipc })),
        }
    }

    /// The stream, shared.
    fn stream(&self) -> bytes::Bytes {
        match self {
            Encoded::Laid(b) => b.stream(),
            Encoded::Stream { ipc, .. } => ipc.clone(),
        }
    }
}

/// What the journal is to learn from the data plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Note {
    /// The engine took the batch of record `key`.
    Taken {
        key: JournalKey,
        producer: ProducerId,
        batch: BatchId,
    },
    /// The batch of record `key` ended before the engine took it.
    Dropped { key: JournalKey },
    /// The engine's batch has its outcome, handed on.
    Outcome {
        producer: ProducerId,
        batch: BatchId,
    },
}

/// The outbox's names and notes.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    on: bool,
    next_name: u64,
    /// Names of batches waiting for the engine.
    waiting: BTreeSet<(ProducerId, BatchId)>,
    /// Names whose handles let go before the engine took their batches.
    let_go: BTreeSet<(ProducerId, BatchId)>,
    /// The engine's name of each batch it took from the outbox, until its handle lets go.
    aliases: BTreeMap<(ProducerId, BatchId), BatchId>,
    notes: Vec<Note>,
}

impl Outbox {
    fn name(&mut self, producer: ProducerId) -> BatchId {
        self.next_name += 1;
        let name = BatchId(OUTBOX_NAME | self.next_name);
        self.waiting.insert((producer, name));
        name
    }

    /// The engine's name of a batch whose handle let go: `None` when the engine does not
    /// hold it (not taken yet: its outcome finds nobody, and its credit comes back at once).
    pub(super) fn released(&mut self, producer: ProducerId, batch: BatchId) -> Option<BatchId> {
        if batch.0 & OUTBOX_NAME == 0 {
            return Some(batch);
        }
        if let Some(b) = self.aliases.remove(&(producer, batch)) {
            return Some(b);
        }
        if self.waiting.contains(&(producer, batch)) {
            self.let_go.insert((producer, batch));
        }
        None
    }

    fn took(&mut self, producer: ProducerId, name: BatchId, batch: BatchId) {
        self.waiting.remove(&(producer, name));
        if !self.let_go.remove(&(producer, name)) {
            self.aliases.insert((producer, name), batch);
        }
    }

    /// The outcome of the engine's `batch` found nobody: the name it was given, if any, is
    /// let go (its handle, if it ever had one, is gone).
    pub(super) fn forget(&mut self, producer: ProducerId, batch: BatchId) {
        if !self.aliases.is_empty() {
            self.aliases
                .retain(|(p, _), b| !(*p == producer && *b == batch));
        }
    }

    /// A batch of the engine has its outcome.
    pub(super) fn outcome(&mut self, producer: ProducerId, batch: BatchId) {
        if self.on {
            self.notes.push(Note::Outcome { producer, batch });
        }
    }

    /// A journaled batch of `producer` the engine never took ends unsent, and its record
    /// with it.
    pub(super) fn never_sent<H: Hand>(
        &mut self,
        released: &Released,
        producer: ProducerId,
        o: Outboxed<H>,
    ) {
        self.waiting.remove(&(producer, o.name));
        self.let_go.remove(&(producer, o.name));
        self.notes.push(Note::Dropped { key: o.key });
        // One whose handle was dropped is kept for the application (P-7).
        let tx = o.outcome;
        released.deliver(producer, o.name, BatchOutcome::NotSent, |v| {
            H::give_back(tx, v)
        });
    }

    /// The name the application knows the engine's `batch` of `producer` by: the outbox's
    /// name while an alias holds it, else the engine's own.
    pub(super) fn name_of(&self, producer: ProducerId, batch: BatchId) -> BatchId {
        self.aliases
            .iter()
            .find(|((p, _), b)| *p == producer && **b == batch)
            .map_or(batch, |((_, name), _)| *name)
    }
}

impl<H: Hand> Dataplane<H> {
    /// Outbox mode from now on: the client keeps a journal.
    pub(crate) fn outbox_on(&mut self) {
        self.outbox.on = true;
    }

    /// What the journal is to learn, in order, since the last call.
    pub(crate) fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.outbox.notes)
    }
}

impl<H: Hand<Error = crate::api::Error>> Dataplane<H> {
    /// Outbox mode's submit: the batch's record is written (or reused, for a batch the
    /// journal returned), then the batch goes to the engine, or waits here for room; the
    /// submission is answered at once either way. Unless its caller left first (C-10): then
    /// nothing is written or taken.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn submit_outboxed(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        wall: UnixMillis,
        producer: ProducerId,
        batch: Submission,
        waiter: H::Waiter,
        journal: &mut Journaled,
    ) {
        H::offer(waiter, || {
            Some(self.journal_one(engine, now, wall, producer, batch, journal))
        });
    }

    fn journal_one(
        &mut self,
        engine: &mut Engine,
        now: Timestamp,
        wall: UnixMillis,
        producer: ProducerId,
        submission: Submission,
        journal: &mut Journaled,
    ) -> Result<Taken<H>, crate::api::Error> {
        let Some(sink) = self.producers.get_mut(&producer) else {
            return Err(SubmitError::UnknownProducer.into());
        };
        let info = engine
            .producer(producer)
            .ok_or(SubmitError::UnknownProducer)?;
        if info.state.is_final() || info.state == ProducerState::Closing || sink.closing {
            return Err(SubmitError::Finished(info.state).into());
        }
        let desc = info.description.ok_or(SubmitError::NotOpened)?;
        let (batch, key, reused) = match submission {
            Submission::Journaled(u) => {
                if (u.domain.as_str(), u.ingestor.as_str())
                    != (sink.names.0.as_str(), sink.names.1.as_str())
                {
                    return Err(JournalRefusal::Resubmit(format!(
                        "it belongs to {}.{}, not to this producer's {}.{}",
                        u.domain, u.ingestor, sink.names.0, sink.names.1
                    ))
                    .into());
                }
                let key = u.key();
                if !journal.reuse_batch(key) {
                    return Err(
                        JournalRefusal::Resubmit("it was submitted again already".into()).into(),
                    );
                }
                // Read back with the producer's fields: a batch of other fields is refused
                // here, not by the server.
                match nervix_protocol::arrow::decode_stream(&u.batch, &desc.fields) {
                    Ok(b) => (
                        Encoded::Stream {
                            rows: b.num_rows(),
                            ipc: u.batch,
                        },
                        key,
                        true,
                    ),
                    Err(e) => {
                        journal.give_back_batch(key);
                        return Err(JournalRefusal::Resubmit(e.to_string()).into());
                    }
                }
            }
            other => {
                let b = other.into_batch().map_err(SubmitError::from)?;
                // Refused before anything is written: the fields (P-3), the grant's rows and
                // bytes. Laid by the engine, so its buffer can become the frame.
                let laid = engine.lay_batch(producer, &b)?;
                let key =
                    journal.put_batch(&sink.names.0, &sink.names.1, laid.stream(), now, wall)?;
                (Encoded::Laid(laid), key, false)
            }
        };
        let (tx, rx) = H::once();
        let mut batch = batch;
        if sink.outboxed.is_empty() {
            // The engine takes the batch while the journal lets go of its bytes: it owns the
            // laid buffer alone and frames the batch in it. The journal then shares the
            // stream again: a slice of the frame, a copy while the batch waits in the engine
            // for credit, or the batch refused.
            let laid_at = batch.stream().as_ptr();
            let r = journal.released_while(key, !reused, || {
                match batch.submit(engine, now, producer) {
                    Ok(id) => {
                        let s = engine.batch_stream(producer, id);
                        let back = s.map(|s| {
                            let in_place = s.as_ptr() == laid_at;
                            (s, in_place)
                        });
                        (Ok(id), back)
                    }
                    Err((e, back)) => {
                        let s = back.stream();
                        (Err((e, back)), Some((s, false)))
                    }
                }
            });
            match r {
                Ok(id) => {
                    journal.batch_taken(key, producer, id);
                    sink.outcomes.insert(id, (tx, id));
                    return Ok((id, rx));
                }
                Err((SubmitError::Full, back)) => batch = back,
                Err((e, _)) => {
                    if reused {
                        journal.give_back_batch(key);
                    } else {
                        journal.batch_dropped(key, now);
                    }
                    return Err(e.into());
                }
            }
        }
        let name = self.outbox.name(producer);
        if let Some(sink) = self.producers.get_mut(&producer) {
            sink.outboxed.push_back(Outboxed {
                key,
                batch,
                outcome: tx,
                name,
            });
        }
        Ok((name, rx))
    }
}

impl<H: Hand> Dataplane<H> {
    /// Hands journaled batches waiting for room to the engine in order, while it takes them;
    /// true when any went in. One the engine refuses for good (its producer closing) ends
    /// unsent.
    pub(super) fn retry_outboxed(&mut self, engine: &mut Engine, now: Timestamp) -> bool {
        let mut asked = false;
        let ids: Vec<ProducerId> = self
            .producers
            .iter()
            .filter(|(_, s)| !s.outboxed.is_empty())
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            while let Some(sink) = self.producers.get_mut(&id) {
                let Some(o) = sink.outboxed.pop_front() else {
                    break;
                };
                let Outboxed {
                    key,
                    batch,
                    outcome,
                    name,
                } = o;
                match batch.submit(engine, now, id) {
                    Ok(b) => {
                        self.outbox.notes.push(Note::Taken {
                            key,
                            producer: id,
                            batch: b,
                        });
                        self.outbox.took(id, name, b);
                        sink.outcomes.insert(b, (outcome, name));
                        asked = true;
                    }
                    Err((e, batch)) => {
                        let o = Outboxed {
                            key,
                            batch,
                            outcome,
                            name,
                        };
                        if e == SubmitError::Full {
                            sink.outboxed.push_front(o);
                            break;
                        }
                        self.outbox.never_sent(&self.released, id, o);
                    }
                }
            }
        }
        asked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: ProducerId = ProducerId(1);

    #[test]
    fn p_4_an_engine_name_passes_through_the_outbox_unchanged() {
        let mut o = Outbox::default();
        assert_eq!(o.released(P, BatchId(7)), Some(BatchId(7)));
    }

    #[test]
    fn p_4_an_outbox_name_gives_back_the_engines_batch_once() {
        let mut o = Outbox::default();
        let name = o.name(P);
        assert_ne!(name.0 & OUTBOX_NAME, 0);
        o.took(P, name, BatchId(3));
        assert_eq!(o.released(P, name), Some(BatchId(3)));
        assert_eq!(o.released(P, name), None, "released once");
        assert!(o.aliases.is_empty() && o.waiting.is_empty());
    }

    #[test]
    fn p_4_a_name_let_go_before_the_engine_took_its_batch_keeps_nothing() {
        let mut o = Outbox::default();
        let name = o.name(P);
        assert_eq!(o.released(P, name), None);
        o.took(P, name, BatchId(3));
        // The batch's outcome finds nobody and its credit comes back then.
        assert!(o.aliases.is_empty() && o.let_go.is_empty() && o.waiting.is_empty());
    }

    #[test]
    fn p_4_an_outcome_nobody_takes_forgets_its_name() {
        let mut o = Outbox::default();
        let a = o.name(P);
        let b = o.name(P);
        o.took(P, a, BatchId(3));
        o.took(P, b, BatchId(4));
        o.forget(P, BatchId(3));
        o.forget(ProducerId(2), BatchId(4));
        assert_eq!(o.released(P, a), None);
        assert_eq!(
            o.released(P, b),
            Some(BatchId(4)),
            "another batch's name stays"
        );
    }

    #[test]
    fn p_8_outcomes_are_noted_only_in_outbox_mode() {
        let mut o = Outbox::default();
        o.outcome(P, BatchId(1));
        assert!(o.notes.is_empty());
        o.on = true;
        o.outcome(P, BatchId(1));
        assert_eq!(
            o.notes,
            vec![Note::Outcome {
                producer: P,
                batch: BatchId(1)
            }]
        );
    }
}
