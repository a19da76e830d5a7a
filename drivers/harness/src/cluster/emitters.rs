//! Emitter consumers (EC-*): one TO CLIENT emitter, [`EMITTER`], in every domain, whose output
//! fields are [`emitter_fields`]. It makes a new delivery every [`EMIT_PERIOD`] while a read
//! waits for one; a delivery has a stable identity, and every attempt of it a new reference.
//!
//! `OpenEmitterRequest` attaches a consumer with a parallel window of [`WINDOW`] unsettled
//! attempts. `ReadEmitterBatchRequest` waits (outside the ordered lane) until the window has
//! room and a delivery is ready. `SettleEmitterBatchRequest` settles the current attempt: `Ack`
//! and `Reject` end the delivery, `Retry` delivers it again after the back-off; a reference that
//! is not current is `StaleReference`, another consumer's `WrongConsumer`, a bad reason
//! `InvalidReason`. An attempt not settled within [`ACK_TIMEOUT`], or whose consumer closed or
//! lost its session, is delivered again under a new reference. `contract_change` alters the
//! contract just before an open.
//!
//! What a client must never do is written to [`SimCluster::misbehaviour`]: a second settlement
//! of one attempt.

use super::ingestors::contract;
use super::*;
use nervix_protocol::arrow::{encode, BatchBuilder};
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType as Scalar};
use std::sync::Arc;
use std::time::Duration;

/// The TO CLIENT emitter every domain holds.
pub const EMITTER: &str = "alerts";
/// How often the emitter has a new delivery for a waiting read.
pub const EMIT_PERIOD: Duration = Duration::from_millis(100);
/// How long an attempt may stay unsettled before it is delivered again.
pub const ACK_TIMEOUT: Duration = Duration::from_millis(1500);
/// Unsettled attempts one consumer may hold.
pub const WINDOW: u64 = 3;

const RETRY_BACKOFF: Duration = Duration::from_millis(50);
const RETRY_MAX_BACKOFF: Duration = Duration::from_millis(400);
const GRANT_BATCHES: u32 = 8;
const GRANT_BYTES: u64 = 1024 * 1024;
const MAX_BATCH_BYTES: u64 = 16 * 1024;
const MAX_BATCH_ROWS: u32 = 16;

/// The output fields of [`EMITTER`]: `id: U64`, `note: String` (nullable).
pub fn emitter_fields() -> Vec<FieldSpec> {
    vec![
        FieldSpec::new("id", FieldType::Scalar(Scalar::U64), false, false),
        FieldSpec::new("note", FieldType::Scalar(Scalar::String), true, false),
    ]
}

/// The rows of delivery `identity`: ids `identity * 100 + i`, one to three of them.
pub fn delivery_ids(identity: u64) -> Vec<u64> {
    (0..1 + identity % 3).map(|i| identity * 100 + i).collect()
}

/// The 16 bytes naming delivery (or attempt) number `n`.
pub fn token(n: u64, tag: u8) -> [u8; 16] {
    let mut t = [tag; 16];
    t[..8].copy_from_slice(&n.to_le_bytes());
    t
}

/// The delivery number a token names.
pub fn token_number(t: &[u8]) -> u64 {
    let mut n = [0u8; 8];
    n.copy_from_slice(&t[..8]);
    u64::from_le_bytes(n)
}

/// One consumer attached on a session, named by its open's request id.
#[derive(Debug, Clone)]
pub(super) struct OpenConsumer {
    emitter: String,
    /// The read waiting for a delivery.
    reading: Option<u64>,
}

#[derive(Debug, Clone)]
struct Ready {
    identity: u64,
    attempts: u32,
    not_before: Timestamp,
}

#[derive(Debug, Clone)]
struct Attempt {
    emitter: String,
    identity: u64,
    attempts: u32,
    conn: ConnId,
    consumer: u64,
    deadline: Timestamp,
}

/// The emitter's deliveries: those ready to go, and the attempts out.
#[derive(Debug, Default)]
pub(super) struct Emitters {
    next_identity: u64,
    next_reference: u64,
    next_emit: BTreeMap<String, Timestamp>,
    ready: BTreeMap<String, VecDeque<Ready>>,
    out: BTreeMap<[u8; 16], Attempt>,
    settle_requests: BTreeSet<[u8; 16]>,
}

fn settled(disposition: EmitterSettlement, message: &str) -> Served {
    Served::new(
        ReplyBodyT::SettleEmitterBatchOutcome(Box::new(SettleEmitterBatchOutcomeT {
            disposition: Some(disposition),
            message: message.into(),
        })),
        format!("SettleEmitterBatchOutcome({disposition:?})"),
    )
}

fn backoff(attempts: u32) -> Duration {
    RETRY_BACKOFF
        .checked_mul(1u32 << attempts.min(16))
        .map_or(RETRY_MAX_BACKOFF, |d| d.min(RETRY_MAX_BACKOFF))
}

impl SimCluster {
    /// `OpenEmitterRequest`: attaches a consumer to [`EMITTER`] when the fields match.
    pub(super) fn open_emitter(
        &mut self,
        conn: ConnId,
        id: u64,
        r: &OpenEmitterRequestT,
    ) -> Served {
        let refused = |refusal: EmitterOpenRefusal| {
            Served::new(
                ReplyBodyT::OpenEmitterOutcome(Box::new(OpenEmitterOutcomeT {
                    disposition: OpenEmitterDispositionT::EmitterRefused(Box::new(
                        EmitterRefusedT {
                            refusal: Some(refusal),
                        },
                    )),
                    message: format!("no consumer: {refusal:?}"),
                })),
                format!("EmitterRefused({refusal:?})"),
            )
        };
        if self.bound(conn).is_some() {
            return refused(EmitterOpenRefusal::InTransaction);
        }
        if !self.config.domains.contains(&r.domain) {
            return refused(EmitterOpenRefusal::DomainNotFound);
        }
        if r.emitter != EMITTER {
            return refused(EmitterOpenRefusal::EmitterNotFound);
        }
        let wire: Vec<RowFieldT> = emitter_fields().iter().map(FieldSpec::to_wire).collect();
        if r.expected_fields != wire {
            return refused(EmitterOpenRefusal::SchemaMismatch);
        }
        if !(1..=1024).contains(&r.max_outstanding_batches)
            || !(1..=32 * 1024 * 1024).contains(&r.max_outstanding_bytes)
        {
            return refused(EmitterOpenRefusal::InvalidLimits);
        }
        if self.sessions[&conn].consumers.len() >= 32 {
            return refused(EmitterOpenRefusal::TooManyConsumers);
        }
        let key = format!("{}/{}", r.domain, r.emitter);
        let mut note = "";
        if self.chance(self.config.faults.contract_change) {
            *self.contracts.entry(key.clone()).or_insert(1) += 1;
            note = " [fault contract_change]";
        }
        let version = *self.contracts.entry(key.clone()).or_insert(1);
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.consumers.insert(
                id,
                OpenConsumer {
                    emitter: key.clone(),
                    reading: None,
                },
            );
        }
        Served::new(
            ReplyBodyT::OpenEmitterOutcome(Box::new(OpenEmitterOutcomeT {
                disposition: OpenEmitterDispositionT::EmitterOpened(Box::new(EmitterOpenedT {
                    domain: r.domain.clone(),
                    emitter: r.emitter.clone(),
                    fields: wire,
                    generation: 1,
                    contract: Box::new(contract(&key, version)),
                    window: ConsumerWindowT::ParallelConsumerWindow(Box::new(
                        ParallelConsumerWindowT { max: WINDOW },
                    )),
                    ack_timeout_nanos: ACK_TIMEOUT.as_nanos() as u64,
                    retry_backoff_nanos: RETRY_BACKOFF.as_nanos() as u64,
                    retry_max_backoff_nanos: RETRY_MAX_BACKOFF.as_nanos() as u64,
                    granted_batches: r.max_outstanding_batches.min(GRANT_BATCHES),
                    granted_bytes: r.max_outstanding_bytes.min(GRANT_BYTES),
                    max_batch_bytes: MAX_BATCH_BYTES,
                    max_batch_rows: MAX_BATCH_ROWS,
                })),
                message: "attached".into(),
            })),
            format!("EmitterOpened(c{id}, contract v{version}){note}"),
        )
    }

    /// `ReadEmitterBatchRequest`: waits for a delivery (see [`SimCluster::run_emitters`]).
    pub(super) fn read_emitter(&mut self, conn: ConnId, id: u64, consumer: u64) -> Served {
        let Some(c) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.consumers.get_mut(&consumer))
        else {
            return consumer_ended_read();
        };
        if let Some(earlier) = c.reading.replace(id) {
            // A second read while one waits: the earlier one ends.
            let body = consumer_ended_read().body;
            self.emit_reply(conn, earlier, body, None, true);
        }
        let mut served = Served::new(ReplyBodyT::ReadEmitterBatchOutcome(Box::default()), "waits");
        served.deferred = true;
        served
    }

    /// `SettleEmitterBatchRequest`.
    pub(super) fn settle_emitter(
        &mut self,
        conn: ConnId,
        r: &SettleEmitterBatchRequestT,
    ) -> Served {
        let Ok(reference) = <[u8; 16]>::try_from(r.reference.as_slice()) else {
            return settled(EmitterSettlement::StaleReference, "not a reference");
        };
        if !self.emitters.settle_requests.insert(reference) {
            self.misbehaviour.push(format!(
                "{conn} c{}: attempt {} settled a second time",
                r.consumer,
                token_number(&reference)
            ));
        }
        if !self.sessions[&conn].consumers.contains_key(&r.consumer) {
            return settled(EmitterSettlement::ConsumerEnded, "no such consumer");
        }
        let Some(a) = self.emitters.out.get(&reference).cloned() else {
            return settled(EmitterSettlement::StaleReference, "not the current attempt");
        };
        if a.conn != conn || a.consumer != r.consumer {
            return settled(
                EmitterSettlement::WrongConsumer,
                "another consumer's attempt",
            );
        }
        let decision = r.decision.unwrap_or(EmitterBatchDecision::Ack);
        let reason_ok = match decision {
            EmitterBatchDecision::Reject => !r.reason.is_empty() && r.reason.len() <= 1024,
            _ => r.reason.is_empty(),
        };
        if !reason_ok {
            return settled(EmitterSettlement::InvalidReason, "bad reason");
        }
        self.emitters.out.remove(&reference);
        if decision == EmitterBatchDecision::Retry {
            let not_before = self.now + backoff(a.attempts);
            self.emitters
                .ready
                .entry(a.emitter)
                .or_default()
                .push_back(Ready {
                    identity: a.identity,
                    attempts: a.attempts,
                    not_before,
                });
        }
        let mut s = settled(EmitterSettlement::Confirmed, "");
        s.summary
            .push_str(&format!(" {decision:?} of delivery {}", a.identity));
        s
    }

    /// `CloseEmitterRequest`: a waiting read ends, attempts out go again to others.
    pub(super) fn close_emitter(&mut self, conn: ConnId, consumer: u64) -> Served {
        let Some(c) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.consumers.remove(&consumer))
        else {
            return Served::new(
                ReplyBodyT::CloseEmitterOutcome(Box::new(CloseEmitterOutcomeT {
                    disposition: Some(EmitterCloseDisposition::NotOpen),
                    message: "no such consumer".into(),
                })),
                "CloseEmitterOutcome(NotOpen)",
            );
        };
        if let Some(read) = c.reading {
            let body = consumer_ended_read().body;
            self.emit_reply(conn, read, body, None, true);
        }
        self.release_attempts(|a| a.conn == conn && a.consumer == consumer);
        Served::new(
            ReplyBodyT::CloseEmitterOutcome(Box::new(CloseEmitterOutcomeT {
                disposition: Some(EmitterCloseDisposition::Closed),
                message: String::new(),
            })),
            "CloseEmitterOutcome(Closed)",
        )
    }

    /// A session ended: its consumers' attempts go again.
    pub(super) fn release_consumers(&mut self, conn: ConnId) {
        self.release_attempts(|a| a.conn == conn);
    }

    fn release_attempts(&mut self, which: impl Fn(&Attempt) -> bool) {
        let now = self.now;
        let gone: Vec<[u8; 16]> = self
            .emitters
            .out
            .iter()
            .filter(|(_, a)| which(a))
            .map(|(r, _)| *r)
            .collect();
        for r in gone {
            if let Some(a) = self.emitters.out.remove(&r) {
                self.emitters
                    .ready
                    .entry(a.emitter)
                    .or_default()
                    .push_back(Ready {
                        identity: a.identity,
                        attempts: a.attempts,
                        not_before: now,
                    });
            }
        }
    }

    /// Redelivers attempts past their acknowledgement timeout, and answers waiting reads.
    pub(super) fn run_emitters(&mut self) {
        let now = self.now;
        let expired: Vec<[u8; 16]> = self
            .emitters
            .out
            .iter()
            .filter(|(_, a)| a.deadline <= now)
            .map(|(r, _)| *r)
            .collect();
        for r in expired {
            if let Some(a) = self.emitters.out.remove(&r) {
                self.log(format!(
                    "attempt {} of delivery {} timed out",
                    token_number(&r),
                    a.identity
                ));
                self.emitters
                    .ready
                    .entry(a.emitter)
                    .or_default()
                    .push_back(Ready {
                        identity: a.identity,
                        attempts: a.attempts,
                        not_before: now,
                    });
            }
        }
        let waiting: Vec<(ConnId, u64, u64, String)> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.open)
            .flat_map(|(conn, s)| {
                s.consumers.iter().filter_map(move |(id, c)| {
                    c.reading.map(|read| (*conn, *id, read, c.emitter.clone()))
                })
            })
            .collect();
        for (conn, consumer, read, key) in waiting {
            if self.unsettled(conn, consumer) >= WINDOW {
                continue;
            }
            let ready = self.emitters.ready.entry(key.clone()).or_default();
            let next = match ready.iter().position(|r| r.not_before <= now) {
                Some(i) => ready.remove(i),
                None => {
                    let due = self.emitters.next_emit.entry(key.clone()).or_insert(now);
                    if *due > now {
                        continue;
                    }
                    *due = now + EMIT_PERIOD;
                    self.emitters.next_identity += 1;
                    Some(Ready {
                        identity: self.emitters.next_identity,
                        attempts: 0,
                        not_before: now,
                    })
                }
            };
            let Some(next) = next else { continue };
            self.deliver_attempt(conn, consumer, read, key, next);
        }
    }

    fn unsettled(&self, conn: ConnId, consumer: u64) -> u64 {
        self.emitters
            .out
            .values()
            .filter(|a| a.conn == conn && a.consumer == consumer)
            .count() as u64
    }

    fn deliver_attempt(
        &mut self,
        conn: ConnId,
        consumer: u64,
        read: u64,
        key: String,
        next: Ready,
    ) {
        self.emitters.next_reference += 1;
        let reference = token(self.emitters.next_reference, 0xa7);
        let ids = delivery_ids(next.identity);
        let notes: Vec<Option<&str>> = ids.iter().map(|i| (i % 2 == 0).then_some("ok")).collect();
        let mut b = BatchBuilder::new(Arc::from(emitter_fields()));
        let batch = b
            .column("id", &ids)
            .and_then(|_| b.nullable_column("note", &notes))
            .and_then(|_| b.finish())
            .and_then(|batch| encode(&batch))
            .expect("the simulated emitter writes valid batches");
        self.emitters.out.insert(
            reference,
            Attempt {
                emitter: key,
                identity: next.identity,
                attempts: next.attempts + 1,
                conn,
                consumer,
                deadline: self.now + ACK_TIMEOUT,
            },
        );
        if let Some(c) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.consumers.get_mut(&consumer))
        {
            c.reading = None;
        }
        let body = ReplyBodyT::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
            disposition: ReadEmitterDispositionT::EmitterBatchReceived(Box::new(
                EmitterBatchReceivedT {
                    identity: token(next.identity, 0x1d).to_vec(),
                    reference: reference.to_vec(),
                    source_relay: "alerts_relay".into(),
                    branch_fingerprint: None,
                    batch,
                    members: ids.len() as u32,
                    execution_now_unix_nanos: self.now.as_nanos() as i64,
                },
            )),
            message: String::new(),
        }));
        let notes = self.emit_reply(conn, read, body, None, true);
        self.log(format!(
            "{conn} c{consumer} req {read} -> delivery {} attempt {} ref {}{notes}",
            next.identity,
            next.attempts + 1,
            self.emitters.next_reference
        ));
    }

    /// When [`SimCluster::run_emitters`] next has something to do.
    pub(super) fn emitters_due(&self) -> Option<Timestamp> {
        let timeouts = self.emitters.out.values().map(|a| a.deadline).min();
        let reads = self
            .sessions
            .iter()
            .filter(|(_, s)| s.open)
            .flat_map(|(conn, s)| {
                s.consumers
                    .iter()
                    .filter(|(_, c)| c.reading.is_some())
                    .map(move |(id, c)| (*conn, *id, c.emitter.clone()))
            })
            .filter(|(conn, id, _)| self.unsettled(*conn, *id) < WINDOW)
            .map(|(_, _, key)| {
                let emit = self
                    .emitters
                    .next_emit
                    .get(&key)
                    .copied()
                    .unwrap_or(self.now);
                let ready = self
                    .emitters
                    .ready
                    .get(&key)
                    .and_then(|r| r.iter().map(|r| r.not_before).min());
                ready.map_or(emit, |r| r.min(emit))
            })
            .min();
        timeouts.into_iter().chain(reads).min()
    }
}

fn consumer_ended_read() -> Served {
    Served::new(
        ReplyBodyT::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
            disposition: ReadEmitterDispositionT::EmitterConsumerEnded(Box::default()),
            message: "the consumer ended".into(),
        })),
        "EmitterConsumerEnded",
    )
}
