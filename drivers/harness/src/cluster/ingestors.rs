//! Producers (P-*): one client ingestor, [`INGESTOR`], in every domain, whose input fields are
//! [`ingestor_fields`]. `OpenIngestorRequest` attaches a producer with credit of at most
//! [`GRANT_BATCHES`] batches and [`GRANT_BYTES`] bytes; `SubmitBatchRequest` checks the batch
//! (Arrow IPC, one record batch of the ingestor's schema, within the limits) and admits it while
//! credit and admission allow; its `SubmissionOutcome` follows [`BATCH_LATENCY`] later and
//! releases the credit; `CloseIngestorRequest` answers every admitted batch, then closes.
//!
//! Every [`PRODUCER_PERIOD`] a suspended producer opens again, and under faults an open one is
//! suspended (`admission_change`) or ended (`producer_ended`, after every admitted batch got an
//! outcome). Other faults: `batch_busy` refuses a batch with `Busy`, `draining` with `Draining`
//! (which ends the producer), `batch_failed` and `batch_unknown` replace a completion with a
//! failure or an unknown outcome, `lost_outcome` cuts the session instead of sending an outcome,
//! `cut_mid_batch` admits a batch and cuts the session before answering, and `contract_change`
//! alters the endpoint contract just before an open (so a restoration sees another contract).
//!
//! What a client must never do is written to [`SimCluster::misbehaviour`]: a batch beyond its
//! granted credit.

use super::*;
use arrow_array::{Array, UInt64Array};
use arrow_ipc::reader::StreamReader;
use nervix_protocol::arrow::arrow_schema;
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType as Scalar};
use std::io::Cursor;
use std::time::Duration;

/// The client ingestor every domain holds.
pub const INGESTOR: &str = "orders_in";
/// How long an admitted batch waits for its outcome.
pub const BATCH_LATENCY: Duration = Duration::from_millis(30);
/// How often a producer's admission may change, or the producer end.
pub const PRODUCER_PERIOD: Duration = Duration::from_millis(400);
/// The most credit in batches a producer is granted.
pub const GRANT_BATCHES: u32 = 4;
/// The most credit in bytes a producer is granted.
pub const GRANT_BYTES: u64 = 256 * 1024;
/// The largest batch in IPC bytes.
pub const MAX_BATCH_BYTES: u64 = 64 * 1024;
/// The most rows in one batch.
pub const MAX_BATCH_ROWS: u32 = 64;

/// The first retry delay after `Suspended` or `Busy`.
const RETRY_BACKOFF: Duration = Duration::from_millis(50);
/// The largest retry delay.
const RETRY_MAX_BACKOFF: Duration = Duration::from_millis(400);
/// The ingestor's ACK TIMEOUT.
const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// The input fields of [`INGESTOR`]: `id: U64`, `name: String` (nullable).
pub fn ingestor_fields() -> Vec<FieldSpec> {
    vec![
        FieldSpec::new("id", FieldType::Scalar(Scalar::U64), false, false),
        FieldSpec::new("name", FieldType::Scalar(Scalar::String), true, false),
    ]
}

/// The fingerprint of an endpoint contract at `version`.
pub(super) fn contract(endpoint: &str, version: u64) -> FingerprintT {
    let mut bytes = Vec::with_capacity(32);
    let mut seed = version;
    for b in endpoint.bytes() {
        seed = mix(seed ^ u64::from(b));
    }
    for i in 0..4u64 {
        bytes.extend_from_slice(&mix(seed.wrapping_add(i)).to_le_bytes());
    }
    FingerprintT { bytes }
}

/// One producer attached on a session, named by its open's request id.
#[derive(Debug, Clone)]
pub(super) struct OpenProducer {
    granted_batches: u32,
    granted_bytes: u64,
    max_batch_bytes: u64,
    held_batches: u32,
    held_bytes: u64,
    admission: ProducerAdmission,
    /// Admitted batches waiting for their outcome, in admission order.
    pending: VecDeque<Admitted>,
    next_event: Timestamp,
}

#[derive(Debug, Clone)]
struct Admitted {
    request: u64,
    bytes: u64,
    /// The batch's `id` column.
    ids: Vec<u64>,
    due: Timestamp,
}

fn submission(disposition: SubmissionDispositionT, message: &str) -> ReplyBodyT {
    ReplyBodyT::SubmissionOutcome(Box::new(SubmissionOutcomeT {
        disposition,
        message: message.to_string(),
    }))
}

fn not_admitted(refusal: SubmissionRefusal) -> Served {
    Served::new(
        submission(
            SubmissionDispositionT::SubmissionNotAdmitted(Box::new(SubmissionNotAdmittedT {
                refusal: Some(refusal),
            })),
            "the batch was not admitted",
        ),
        format!("SubmissionNotAdmitted({refusal:?})"),
    )
}

fn open_refused(refusal: ProducerRefusal) -> Served {
    Served::new(
        ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
            disposition: OpenIngestorDispositionT::ProducerRefused(Box::new(ProducerRefusedT {
                refusal: Some(refusal),
            })),
            message: format!("no producer: {refusal:?}"),
        })),
        format!("ProducerRefused({refusal:?})"),
    )
}

/// Checks one batch as the ingestor reads it: its `id` column, or why none of its rows enter.
fn check_batch(
    bytes: &[u8],
    fields: &[FieldSpec],
    max_bytes: u64,
) -> Result<Vec<u64>, SubmissionRefusal> {
    if bytes.len() as u64 > max_bytes {
        return Err(SubmissionRefusal::BatchTooLarge);
    }
    let reader = StreamReader::try_new(Cursor::new(bytes), None)
        .map_err(|_| SubmissionRefusal::MalformedBatch)?;
    if reader.schema().fields() != arrow_schema(fields).fields()
        || !reader.schema().metadata().is_empty()
    {
        return Err(SubmissionRefusal::SchemaMismatch);
    }
    let mut batches = 0;
    let mut ids = Vec::new();
    for b in reader {
        let b = b.map_err(|_| SubmissionRefusal::InvalidData)?;
        batches += 1;
        ids = b
            .column(0)
            .as_any()
            .downcast_ref::<UInt64Array>()
            .map(|a| a.values().to_vec())
            .unwrap_or_default();
    }
    if batches != 1 {
        return Err(SubmissionRefusal::NotOneBatch);
    }
    if ids.len() > MAX_BATCH_ROWS as usize {
        return Err(SubmissionRefusal::TooManyRows);
    }
    Ok(ids)
}

impl SimCluster {
    /// `OpenIngestorRequest`: attaches a producer to [`INGESTOR`] when the fields match.
    pub(super) fn open_ingestor(
        &mut self,
        conn: ConnId,
        id: u64,
        r: &OpenIngestorRequestT,
    ) -> Served {
        if self.bound(conn).is_some() {
            return open_refused(ProducerRefusal::InTransaction);
        }
        if !self.config.domains.contains(&r.domain) {
            return open_refused(ProducerRefusal::DomainNotFound);
        }
        if r.ingestor != INGESTOR {
            return open_refused(ProducerRefusal::IngestorNotFound);
        }
        let wire: Vec<RowFieldT> = ingestor_fields().iter().map(FieldSpec::to_wire).collect();
        if r.expected_fields != wire {
            return open_refused(ProducerRefusal::SchemaMismatch);
        }
        if !(1..=1024).contains(&r.max_outstanding_batches)
            || !(1..=32 * 1024 * 1024).contains(&r.max_outstanding_bytes)
        {
            return open_refused(ProducerRefusal::InvalidLimits);
        }
        if self.sessions[&conn].producers.len() >= 32 {
            return open_refused(ProducerRefusal::TooManyProducers);
        }
        let key = format!("{}/{}", r.domain, r.ingestor);
        let mut note = "";
        if self.chance(self.config.faults.contract_change) {
            *self.contracts.entry(key.clone()).or_insert(1) += 1;
            note = " [fault contract_change]";
        }
        let version = *self.contracts.entry(key.clone()).or_insert(1);
        let granted_batches = r.max_outstanding_batches.min(GRANT_BATCHES);
        let granted_bytes = r.max_outstanding_bytes.min(GRANT_BYTES);
        let max_batch_bytes = MAX_BATCH_BYTES.min(granted_bytes);
        let producer = OpenProducer {
            granted_batches,
            granted_bytes,
            max_batch_bytes,
            held_batches: 0,
            held_bytes: 0,
            admission: ProducerAdmission::Open,
            pending: VecDeque::new(),
            next_event: self.now + PRODUCER_PERIOD,
        };
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.producers.insert(id, producer);
        }
        let mut attachment = id.to_le_bytes().to_vec();
        attachment.extend_from_slice(&conn.0.to_le_bytes());
        Served::new(
            ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
                disposition: OpenIngestorDispositionT::ProducerOpened(Box::new(ProducerOpenedT {
                    domain: r.domain.clone(),
                    ingestor: r.ingestor.clone(),
                    fields: wire,
                    generation: 1,
                    contract: Box::new(contract(&key, version)),
                    attachment,
                    window: ProducerWindowT::SequentialProducerWindow(Box::default()),
                    ack_timeout_nanos: ACK_TIMEOUT.as_nanos() as u64,
                    retry_backoff_nanos: RETRY_BACKOFF.as_nanos() as u64,
                    retry_max_backoff_nanos: RETRY_MAX_BACKOFF.as_nanos() as u64,
                    granted_batches,
                    granted_bytes,
                    max_batch_bytes,
                    max_batch_rows: MAX_BATCH_ROWS,
                    admission: Some(ProducerAdmission::Open),
                })),
                message: "attached".into(),
            })),
            format!("ProducerOpened(p{id}, contract v{version}, {granted_batches}/{granted_bytes}){note}"),
        )
    }

    /// `SubmitBatchRequest`: refuses the batch at once, or admits it (its outcome follows
    /// later, see [`SimCluster::run_producers`]).
    pub(super) fn submit_batch(
        &mut self,
        conn: ConnId,
        id: u64,
        r: &SubmitBatchRequestT,
    ) -> Served {
        let now = self.now;
        let faults = self.config.faults.clone();
        let Some(p) = self.sessions[&conn].producers.get(&r.producer).cloned() else {
            return not_admitted(SubmissionRefusal::ProducerEnded);
        };
        let len = r.batch.len() as u64;
        if p.held_batches + 1 > p.granted_batches || p.held_bytes + len > p.granted_bytes {
            self.misbehaviour.push(format!(
                "{conn} p{} req {id}: a batch of {len} bytes beyond credit ({}/{} batches, {}/{} bytes held)",
                r.producer, p.held_batches, p.granted_batches, p.held_bytes, p.granted_bytes
            ));
            let mut served = not_admitted(SubmissionRefusal::CreditExceeded);
            served.after = self.end_producer(conn, r.producer, ProducerEndReason::ProtocolViolated);
            return served;
        }
        if p.admission == ProducerAdmission::Suspended {
            return not_admitted(SubmissionRefusal::Suspended);
        }
        if self.chance(faults.batch_busy) {
            let mut served = not_admitted(SubmissionRefusal::Busy);
            served.summary.push_str(" [fault batch_busy]");
            return served;
        }
        if self.chance(faults.draining) {
            let mut served = not_admitted(SubmissionRefusal::Draining);
            served.summary.push_str(" [fault draining]");
            served.after = self.end_producer(conn, r.producer, ProducerEndReason::Relocated);
            return served;
        }
        let ids = match check_batch(&r.batch, &ingestor_fields(), p.max_batch_bytes) {
            Ok(ids) => ids,
            Err(refusal) => return not_admitted(refusal),
        };
        let cut = self.chance(faults.cut_mid_batch);
        if let Some(p) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.producers.get_mut(&r.producer))
        {
            p.held_batches += 1;
            p.held_bytes += len;
            p.pending.push_back(Admitted {
                request: id,
                bytes: len,
                ids,
                due: now + BATCH_LATENCY,
            });
        }
        let mut served = Served::new(
            ReplyBodyT::SubmissionOutcome(Box::default()),
            format!("admitted into p{}", r.producer),
        );
        if cut {
            served
                .summary
                .push_str("; session cut [fault cut_mid_batch]");
            served.cut = true;
        } else {
            served.deferred = true;
        }
        served
    }

    /// `CloseIngestorRequest`: every admitted batch is ingested and answered `Completed`, then
    /// the producer closes.
    pub(super) fn close_ingestor(&mut self, conn: ConnId, producer: u64) -> Served {
        let Some(p) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.producers.remove(&producer))
        else {
            return Served::new(
                ReplyBodyT::CloseIngestorOutcome(Box::new(CloseIngestorOutcomeT {
                    disposition: CloseIngestorDispositionT::ProducerNotOpen(Box::default()),
                    message: "no such producer".into(),
                })),
                "ProducerNotOpen",
            );
        };
        let n = p.pending.len();
        for a in p.pending {
            // A batch answered `Completed` entered the ingestor: record it as the outcomes due
            // in `run_producers` are, or the checker sees a completion nothing ingested.
            self.ingested.push(a.ids);
            let body = submission(
                SubmissionDispositionT::SubmissionCompleted(Box::default()),
                "",
            );
            self.emit_reply(conn, a.request, body, None, true);
        }
        Served::new(
            ReplyBodyT::CloseIngestorOutcome(Box::new(CloseIngestorOutcomeT {
                disposition: CloseIngestorDispositionT::ProducerClosed(Box::default()),
                message: String::new(),
            })),
            format!("ProducerClosed(p{producer}) after {n} outcome(s)"),
        )
    }

    /// Ends a producer: its admitted batches are answered `OutcomeUnknown` `Interrupted`
    /// at once; returns the `ProducerEnded` that follows them.
    fn end_producer(
        &mut self,
        conn: ConnId,
        producer: u64,
        reason: ProducerEndReason,
    ) -> Vec<ServerMessageT> {
        let Some(p) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.producers.remove(&producer))
        else {
            return Vec::new();
        };
        for a in p.pending {
            let body = submission(
                SubmissionDispositionT::SubmissionOutcomeUnknown(Box::new(
                    SubmissionOutcomeUnknownT {
                        cause: Some(OutcomeUncertainty::Interrupted),
                    },
                )),
                "the producer ended with the acknowledgement unresolved",
            );
            self.emit_reply(conn, a.request, body, None, true);
        }
        vec![ServerMessageT {
            body: ServerBodyT::ProducerEnded(Box::new(ProducerEndedT {
                producer,
                reason: Some(reason),
                message: format!("{reason:?}"),
            })),
        }]
    }

    /// Sends the outcomes due by now, and runs each producer's periodic admission changes and
    /// ends.
    pub(super) fn run_producers(&mut self) {
        let now = self.now;
        let faults = self.config.faults.clone();
        let keys: Vec<(ConnId, u64)> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.open)
            .flat_map(|(c, s)| s.producers.keys().map(move |p| (*c, *p)))
            .collect();
        for (conn, producer) in keys {
            loop {
                if !self.is_open(conn) {
                    break;
                }
                let Some(p) = self
                    .sessions
                    .get_mut(&conn)
                    .and_then(|s| s.producers.get_mut(&producer))
                else {
                    break;
                };
                let Some(a) = p.pending.front().filter(|a| a.due <= now).cloned() else {
                    break;
                };
                p.pending.pop_front();
                p.held_batches -= 1;
                p.held_bytes -= a.bytes;
                if self.chance(faults.lost_outcome) {
                    self.log(format!(
                        "{conn} p{producer} req {} outcome lost: session cut [fault lost_outcome]",
                        a.request
                    ));
                    self.push(conn, Output::Close);
                    self.drop_session(conn, false);
                    break;
                }
                let (disposition, what) = if self.chance(faults.batch_failed) {
                    let failure = if self.rng.next_u64().is_multiple_of(2) {
                        ProcessingFailure::AckTimedOut
                    } else {
                        ProcessingFailure::Rejected
                    };
                    (
                        SubmissionDispositionT::SubmissionFailed(Box::new(SubmissionFailedT {
                            failure: Some(failure),
                        })),
                        format!("SubmissionFailed({failure:?}) [fault batch_failed]"),
                    )
                } else if self.chance(faults.batch_unknown) {
                    let cause = if self.rng.next_u64().is_multiple_of(2) {
                        OutcomeUncertainty::Interrupted
                    } else {
                        OutcomeUncertainty::OwnerLost
                    };
                    (
                        SubmissionDispositionT::SubmissionOutcomeUnknown(Box::new(
                            SubmissionOutcomeUnknownT { cause: Some(cause) },
                        )),
                        format!("SubmissionOutcomeUnknown({cause:?}) [fault batch_unknown]"),
                    )
                } else {
                    self.ingested.push(a.ids.clone());
                    (
                        SubmissionDispositionT::SubmissionCompleted(Box::default()),
                        "SubmissionCompleted".to_string(),
                    )
                };
                let notes =
                    self.emit_reply(conn, a.request, submission(disposition, ""), None, true);
                self.log(format!(
                    "{conn} p{producer} req {} -> {what}{notes}",
                    a.request
                ));
            }
            let Some(p) = self
                .sessions
                .get_mut(&conn)
                .filter(|s| s.open)
                .and_then(|s| s.producers.get_mut(&producer))
            else {
                continue;
            };
            if p.next_event > now {
                continue;
            }
            p.next_event = now + PRODUCER_PERIOD;
            let suspended = p.admission == ProducerAdmission::Suspended;
            if !suspended && self.chance(faults.producer_ended) {
                let reason = [
                    ProducerEndReason::EndpointChanged,
                    ProducerEndReason::DomainStopped,
                    ProducerEndReason::Relocated,
                    ProducerEndReason::OwnerLost,
                    ProducerEndReason::ShuttingDown,
                ][(self.rng.next_u64() % 5) as usize];
                self.log(format!(
                    "{conn} p{producer} ProducerEnded({reason:?}) [fault producer_ended]"
                ));
                for m in self.end_producer(conn, producer, reason) {
                    self.push_unsolicited(conn, m);
                }
                continue;
            }
            let next = if suspended {
                Some(ProducerAdmission::Open)
            } else if self.chance(faults.admission_change) {
                Some(ProducerAdmission::Suspended)
            } else {
                None
            };
            if let Some(admission) = next {
                if let Some(p) = self
                    .sessions
                    .get_mut(&conn)
                    .and_then(|s| s.producers.get_mut(&producer))
                {
                    p.admission = admission;
                }
                self.log(format!(
                    "{conn} p{producer} ProducerAdmissionChanged({admission:?})"
                ));
                self.push_unsolicited(
                    conn,
                    ServerMessageT {
                        body: ServerBodyT::ProducerAdmissionChanged(Box::new(
                            ProducerAdmissionChangedT {
                                producer,
                                admission: Some(admission),
                            },
                        )),
                    },
                );
            }
        }
    }

    /// When [`SimCluster::run_producers`] next has something to do.
    pub(super) fn producers_due(&self) -> Option<Timestamp> {
        let faults = &self.config.faults;
        let periodic = faults.producer_ended > 0.0 || faults.admission_change > 0.0;
        self.sessions
            .values()
            .filter(|s| s.open)
            .flat_map(|s| s.producers.values())
            .flat_map(|p| {
                let event = (periodic || p.admission == ProducerAdmission::Suspended)
                    .then_some(p.next_event);
                p.pending.front().map(|a| a.due).into_iter().chain(event)
            })
            .min()
    }
}
