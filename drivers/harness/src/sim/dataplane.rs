//! The simulation's producers and consumers: the operations that drive them (drawn as
//! [`crate::scenario::dataplane`] draws them, shared with the runs over real transports), and
//! the invariants checked as their frames and events pass and at the end of a run.
//!
//! * Credit is never exceeded: the batches and bytes a producer holds stay within its grant,
//!   and the cluster never sees a batch beyond it.
//! * No batch is sent again while an earlier send of it is unanswered: in particular a batch
//!   out on a session that was lost is never resent (P-8).
//! * Every batch ends with exactly one outcome (which may be `Unknown`).
//! * No delivery attempt is settled twice, no delivery is confirmed acknowledged or rejected
//!   twice, every settlement ends exactly once, and every delivery holds the rows its
//!   identity names.
//! * Nothing reaches the application about a producer or consumer after its final event.

use super::Simulation;
use crate::cluster::{emitter_fields, ingestor_fields, token_number, EMITTER};
use crate::scenario::dataplane::{self as dp, Op};
use bytes::Bytes;
use nervix_protocol::arrow::encode;
use nervix_protocol::client::*;
use nervix_protocol::frame::ServerFrame;
use nervix_protocol::schema::*;
use std::collections::BTreeMap;

/// One batch the application submitted.
#[derive(Debug)]
struct BatchTrack {
    producer: ProducerId,
    /// Outcomes the application saw.
    outcomes: u32,
    /// The send now unanswered: session and request.
    out: Option<(SessionId, u64)>,
}

#[derive(Debug, Default)]
struct ProducerTrack {
    finished: bool,
    grant: Option<(u32, u64)>,
}

#[derive(Debug, Default)]
struct ConsumerTrack {
    finished: bool,
    /// Deliveries read and not yet settled by the application: reference, identity.
    unsettled: Vec<(DeliveryRef, u64)>,
}

/// What the simulation tracks of its producers and consumers.
#[derive(Debug, Default)]
pub(super) struct Dataplane {
    producers: BTreeMap<ProducerId, ProducerTrack>,
    consumers: BTreeMap<ConsumerId, ConsumerTrack>,
    /// Batches by their canonical IPC bytes (each carries unique ids).
    batches: BTreeMap<Vec<u8>, BatchTrack>,
    by_id: BTreeMap<(ProducerId, BatchId), Vec<u8>>,
    /// Submission requests out: (session, request) to the batch.
    requests: BTreeMap<(SessionId, u64), Vec<u8>>,
    /// Settlements: whether each ends the delivery, and how often it ended.
    settles: BTreeMap<SettleHandle, (u64, bool, u32)>,
    confirmed_final: BTreeMap<u64, u32>,
    next_id: u64,
    pub(super) deliveries: u64,
    pub(super) outcomes: BTreeMap<&'static str, u64>,
}

impl Dataplane {
    /// Whether any producer or consumer has not yet reached its final event.
    pub(super) fn active(&self) -> bool {
        self.producers.values().any(|p| !p.finished) || self.consumers.values().any(|c| !c.finished)
    }

    /// Whether submission requests are out on `session`.
    pub(super) fn watches(&self, session: SessionId) -> bool {
        self.requests.keys().any(|(s, _)| *s == session)
    }

    /// The end-of-run checks.
    pub(super) fn check(&self, problems: &mut Vec<String>) {
        for (key, b) in &self.batches {
            if b.outcomes != 1 {
                let id = self.by_id.iter().find(|(_, k)| *k == key).map(|(i, _)| i.1);
                problems.push(format!(
                    "{:?} batch {id:?} ended with {} outcomes",
                    b.producer, b.outcomes
                ));
            }
        }
        for (h, (_, _, n)) in &self.settles {
            if *n != 1 {
                problems.push(format!("settlement {h:?} ended {n} times"));
            }
        }
    }
}

impl Simulation {
    /// One application operation on producers or consumers.
    pub(super) fn operate_dataplane(&mut self, pick: u64) {
        let now = self.now;
        let open_producers: Vec<ProducerId> = self
            .dataplane
            .producers
            .iter()
            .filter(|(_, t)| !t.finished)
            .map(|(id, _)| *id)
            .collect();
        let open_consumers: Vec<ConsumerId> = self
            .dataplane
            .consumers
            .iter()
            .filter(|(_, t)| !t.finished)
            .map(|(id, _)| *id)
            .collect();
        match dp::op(pick, open_producers.len(), open_consumers.len()) {
            Op::OpenProducer => {
                let d = dp::producer(&mut self.rng);
                let spec = ProducerSpec::new("tenant", d.ingestor, ingestor_fields())
                    .with_credit(d.batches, d.bytes);
                match self.client.open_producer(now, spec) {
                    Ok(id) => {
                        self.log(format!(
                            "app open producer {id:?} {} {}/{}",
                            d.ingestor, d.batches, d.bytes
                        ));
                        self.dataplane
                            .producers
                            .insert(id, ProducerTrack::default());
                    }
                    Err(e) => self.log(format!("app open producer refused: {e}")),
                }
            }
            Op::Submit => {
                let p = open_producers[dp::pick(&mut self.rng, open_producers.len())];
                for _ in 0..dp::submissions(&mut self.rng) {
                    self.submit_one(p);
                }
            }
            Op::CloseProducer => {
                let p = open_producers[dp::pick(&mut self.rng, open_producers.len())];
                self.log(format!("app close {p:?}"));
                let _ = self.client.close_producer(now, p);
            }
            Op::OpenConsumer => {
                let spec = ConsumerSpec::new("tenant", EMITTER, emitter_fields())
                    .with_limits(4, 1024 * 1024);
                match self.client.open_consumer(now, spec) {
                    Ok(id) => {
                        self.log(format!("app open consumer {id:?}"));
                        self.dataplane
                            .consumers
                            .insert(id, ConsumerTrack::default());
                    }
                    Err(e) => self.log(format!("app open consumer refused: {e}")),
                }
            }
            Op::Read => {
                let c = open_consumers[dp::pick(&mut self.rng, open_consumers.len())];
                if self.client.read_delivery(now, c).is_ok() {
                    self.log(format!("app read {c:?}"));
                }
            }
            Op::Settle => {
                let c = open_consumers[dp::pick(&mut self.rng, open_consumers.len())];
                let Some(t) = self.dataplane.consumers.get_mut(&c) else {
                    return;
                };
                if t.unsettled.is_empty() {
                    return;
                }
                let i = dp::pick(&mut self.rng, t.unsettled.len());
                let (reference, identity) = t.unsettled.remove(i);
                let (decision, ends) = dp::decision(&mut self.rng);
                match self
                    .client
                    .settle_delivery(now, reference, decision.clone())
                {
                    Ok(h) => {
                        self.log(format!(
                            "app settle {c:?} delivery {identity} {decision:?} as {h:?}"
                        ));
                        self.dataplane.settles.insert(h, (identity, ends, 0));
                    }
                    Err(e) => {
                        self.log(format!("app settle {c:?} delivery {identity} refused: {e}"))
                    }
                }
            }
            Op::CloseConsumer => {
                let c = open_consumers[dp::pick(&mut self.rng, open_consumers.len())];
                self.log(format!("app close {c:?}"));
                let _ = self.client.close_consumer(now, c);
            }
            _ => {}
        }
    }

    /// Submits one batch of unique ids to `p`.
    fn submit_one(&mut self, p: ProducerId) {
        let now = self.now;
        let Ok(mut b) = self.client.batch_builder(p) else {
            return;
        };
        let ids = dp::batch_ids(&mut self.rng, &mut self.dataplane.next_id);
        let names = dp::batch_names(&ids);
        let batch = b
            .column("id", &ids)
            .and_then(|_| b.nullable_column("name", &names))
            .and_then(|_| b.finish());
        let batch = match batch {
            Ok(batch) => batch,
            Err(e) => {
                self.violations
                    .push(format!("a batch of the producer's own fields: {e}"));
                return;
            }
        };
        let key = encode(&batch).unwrap_or_default();
        match self.client.submit(now, p, &batch) {
            Ok(id) => {
                self.log(format!("app submit {p:?} {id:?} ids {ids:?}"));
                self.dataplane.by_id.insert((p, id), key.clone());
                self.dataplane.batches.insert(
                    key,
                    BatchTrack {
                        producer: p,
                        outcomes: 0,
                        out: None,
                    },
                );
            }
            Err(e) => self.log(format!("app submit {p:?} refused: {e}")),
        }
    }

    /// Closes every producer and consumer, at the end of a run.
    pub(super) fn close_dataplane(&mut self) {
        let now = self.now;
        let producers: Vec<ProducerId> = self.dataplane.producers.keys().copied().collect();
        for p in producers {
            let _ = self.client.close_producer(now, p);
        }
        let consumers: Vec<ConsumerId> = self.dataplane.consumers.keys().copied().collect();
        for c in consumers {
            let _ = self.client.close_consumer(now, c);
        }
    }

    /// A client frame is sent on `session`: a batch may not be out already. (A second
    /// settlement of one attempt is caught by the cluster, which sees only the settlements it
    /// admitted: one refused before it was read may be sent again.)
    pub(super) fn on_dataplane_send(&mut self, session: SessionId, msg: &ClientMessageT) {
        let ClientRequestT::SubmitBatchRequest(r) = &msg.request else {
            return;
        };
        let Some(b) = self.dataplane.batches.get_mut(&r.batch) else {
            self.violations
                .push(format!("{session:?} sent a batch nobody submitted"));
            return;
        };
        if let Some((s, rid)) = b.out {
            self.violations.push(format!(
                "{:?} a batch sent again on {session:?} while its send on {s:?} (req {rid}) is unanswered",
                b.producer
            ));
        }
        if b.outcomes > 0 {
            self.violations.push(format!(
                "{:?} a batch sent again after its outcome",
                b.producer
            ));
        }
        b.out = Some((session, msg.request_id));
        self.dataplane
            .requests
            .insert((session, msg.request_id), r.batch.clone());
    }

    /// A server frame reaches the client on `session`: a submission's answer ends its send.
    pub(super) fn on_dataplane_frame(&mut self, session: SessionId, frame: &Bytes) {
        let Ok(f) = ServerFrame::check(frame.clone()) else {
            return;
        };
        let Some(reply) = f.view().body_as_reply() else {
            return;
        };
        if let Some(part) = reply.body_as_transfer_part() {
            // Only the last part ends the reply.
            if part.offset() + part.chunk().len() as u64 != part.total_bytes() {
                return;
            }
        }
        if let Some(key) = self
            .dataplane
            .requests
            .remove(&(session, reply.request_id()))
        {
            if let Some(b) = self.dataplane.batches.get_mut(&key) {
                if b.out == Some((session, reply.request_id())) {
                    b.out = None;
                }
            }
        }
    }

    /// Checks held credit against every producer's grant, after each step.
    pub(super) fn check_credit(&mut self) {
        let ids: Vec<ProducerId> = self.dataplane.producers.keys().copied().collect();
        for id in ids {
            let Some(info) = self.client.producer(id) else {
                continue;
            };
            let Some(grant) = self.dataplane.producers.get(&id).and_then(|t| t.grant) else {
                continue;
            };
            if info.credit_batches > grant.0 || info.credit_bytes > grant.1 {
                self.violations.push(format!(
                    "{id:?} holds {} batches and {} bytes of credit, granted {grant:?}",
                    info.credit_batches, info.credit_bytes
                ));
            }
        }
    }

    /// Checks one producer event as it arrives.
    pub(super) fn on_producer_event(&mut self, id: ProducerId, event: ProducerEvent) {
        let t = self.dataplane.producers.entry(id).or_default();
        if t.finished {
            self.violations
                .push(format!("{id:?} has an event after its end: {event:?}"));
        }
        let line = match &event {
            ProducerEvent::Opened(d) | ProducerEvent::Restored(d) => {
                t.grant = Some((d.granted_batches, d.granted_bytes));
                format!("{event:?}").chars().take(60).collect()
            }
            ProducerEvent::Outcome { batch, outcome } => {
                let kind = dp::outcome_kind(outcome);
                *self.dataplane.outcomes.entry(kind).or_default() += 1;
                match self
                    .dataplane
                    .by_id
                    .get(&(id, *batch))
                    .and_then(|k| self.dataplane.batches.get_mut(k))
                {
                    Some(b) => b.outcomes += 1,
                    None => self
                        .violations
                        .push(format!("{id:?} an outcome for {batch:?}, never submitted")),
                }
                format!("outcome {batch:?} {outcome:?}")
            }
            ProducerEvent::Refused { .. }
            | ProducerEvent::ReopenRequired(_)
            | ProducerEvent::Closed
            | ProducerEvent::Ended { .. } => {
                t.finished = true;
                format!("{event:?}")
            }
            other => format!("{other:?}"),
        };
        self.log(format!("app producer {id:?} {line}"));
    }

    /// Checks one consumer event as it arrives.
    pub(super) fn on_consumer_event(&mut self, id: ConsumerId, event: ConsumerEvent) {
        let mut problems = Vec::new();
        let t = self.dataplane.consumers.entry(id).or_default();
        if t.finished {
            problems.push(format!("{id:?} has an event after its end: {event:?}"));
        }
        let line = match &event {
            ConsumerEvent::Delivery(d) => {
                let (identity, wrong) = dp::check_delivery(d);
                problems.extend(wrong.into_iter().map(|w| format!("{id:?} {w}")));
                t.unsettled.push((d.reference, identity));
                self.dataplane.deliveries += 1;
                format!(
                    "delivery {identity} ref {}",
                    token_number(&d.reference.reference)
                )
            }
            ConsumerEvent::Settled { handle, result, .. } => {
                match self.dataplane.settles.get_mut(handle) {
                    Some((identity, ends, n)) => {
                        *n += 1;
                        if *ends && *result == SettleResult::Confirmed {
                            let c = self.dataplane.confirmed_final.entry(*identity).or_default();
                            *c += 1;
                            if *c > 1 {
                                problems.push(format!(
                                    "delivery {identity} confirmed settled {c} times"
                                ));
                            }
                        }
                    }
                    None => problems.push(format!("{id:?} a settlement nobody asked: {handle:?}")),
                }
                format!("settled {handle:?} {result:?}")
            }
            ConsumerEvent::Interrupted => {
                t.unsettled.clear();
                "interrupted".into()
            }
            ConsumerEvent::Refused { .. }
            | ConsumerEvent::ReopenRequired(_)
            | ConsumerEvent::Closed => {
                t.finished = true;
                t.unsettled.clear();
                format!("{event:?}")
            }
            other => format!("{other:?}").chars().take(60).collect(),
        };
        self.violations.extend(problems);
        self.log(format!("app consumer {id:?} {line}"));
    }
}
