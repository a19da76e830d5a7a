//! Frames of producers and emitter consumers, as a scripted server sends them, and the fields
//! the tests open them with.

use super::{reply, server};
use bytes::Bytes;
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType as Scalar};
use nervix_protocol::schema::*;

/// The fields of the tests' endpoints: `id: U64`, `name: String (nullable)`,
/// `secret: String (sensitive)`.
pub fn fields() -> Vec<FieldSpec> {
    vec![
        FieldSpec::new("id", FieldType::Scalar(Scalar::U64), false, false),
        FieldSpec::new("name", FieldType::Scalar(Scalar::String), true, false),
        FieldSpec::new("secret", FieldType::Scalar(Scalar::String), false, true),
    ]
}

/// The grant and policy a producer or consumer is opened with.
#[derive(Clone)]
pub struct Grant {
    pub generation: u64,
    pub contract: u8,
    pub batches: u32,
    pub bytes: u64,
    pub max_batch_bytes: u64,
    pub max_batch_rows: u32,
    pub backoff_ms: u64,
    pub max_backoff_ms: u64,
    pub window: u64,
}

impl Default for Grant {
    fn default() -> Self {
        Grant {
            generation: 3,
            contract: 7,
            batches: 2,
            bytes: 1 << 20,
            max_batch_bytes: 1 << 19,
            max_batch_rows: 100,
            backoff_ms: 100,
            max_backoff_ms: 350,
            window: 1,
        }
    }
}

pub fn producer_opened(request_id: u64, g: &Grant, admission: ProducerAdmission) -> Bytes {
    producer_opened_as(request_id, g, admission, "orders_in", &fields())
}

/// [`producer_opened`] for the producer of `ingestor` in `d1` with `fields`.
pub fn producer_opened_as(
    request_id: u64,
    g: &Grant,
    admission: ProducerAdmission,
    ingestor: &str,
    fields: &[FieldSpec],
) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
            disposition: OpenIngestorDispositionT::ProducerOpened(Box::new(ProducerOpenedT {
                domain: "d1".into(),
                ingestor: ingestor.into(),
                fields: fields.iter().map(FieldSpec::to_wire).collect(),
                generation: g.generation,
                contract: Box::new(FingerprintT {
                    bytes: vec![g.contract; 32],
                }),
                attachment: vec![request_id as u8; 16],
                window: ProducerWindowT::SequentialProducerWindow(Box::default()),
                ack_timeout_nanos: 5_000_000_000,
                retry_backoff_nanos: g.backoff_ms * 1_000_000,
                retry_max_backoff_nanos: g.max_backoff_ms * 1_000_000,
                granted_batches: g.batches,
                granted_bytes: g.bytes,
                max_batch_bytes: g.max_batch_bytes,
                max_batch_rows: g.max_batch_rows,
                admission: Some(admission),
            })),
            message: "opened".into(),
        })),
    )
}

pub fn producer_refused(request_id: u64, refusal: ProducerRefusal) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
            disposition: OpenIngestorDispositionT::ProducerRefused(Box::new(ProducerRefusedT {
                refusal: Some(refusal),
            })),
            message: "refused".into(),
        })),
    )
}

pub fn submission(request_id: u64, disposition: SubmissionDispositionT) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::SubmissionOutcome(Box::new(SubmissionOutcomeT {
            disposition,
            message: String::new(),
        })),
    )
}

pub fn batch_completed(request_id: u64) -> Bytes {
    submission(
        request_id,
        SubmissionDispositionT::SubmissionCompleted(Box::default()),
    )
}

pub fn not_admitted(request_id: u64, refusal: SubmissionRefusal) -> Bytes {
    submission(
        request_id,
        SubmissionDispositionT::SubmissionNotAdmitted(Box::new(SubmissionNotAdmittedT {
            refusal: Some(refusal),
        })),
    )
}

pub fn admission_changed(producer: u64, admission: ProducerAdmission) -> Bytes {
    server(ServerBodyT::ProducerAdmissionChanged(Box::new(
        ProducerAdmissionChangedT {
            producer,
            admission: Some(admission),
        },
    )))
}

pub fn producer_ended(producer: u64, reason: ProducerEndReason) -> Bytes {
    server(ServerBodyT::ProducerEnded(Box::new(ProducerEndedT {
        producer,
        reason: Some(reason),
        message: "ended".into(),
    })))
}

pub fn ingestor_closed(request_id: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::CloseIngestorOutcome(Box::new(CloseIngestorOutcomeT {
            disposition: CloseIngestorDispositionT::ProducerClosed(Box::default()),
            message: String::new(),
        })),
    )
}

pub fn emitter_opened(request_id: u64, g: &Grant) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::OpenEmitterOutcome(Box::new(OpenEmitterOutcomeT {
            disposition: OpenEmitterDispositionT::EmitterOpened(Box::new(EmitterOpenedT {
                domain: "d1".into(),
                emitter: "alerts".into(),
                fields: fields().iter().map(FieldSpec::to_wire).collect(),
                generation: g.generation,
                contract: Box::new(FingerprintT {
                    bytes: vec![g.contract; 32],
                }),
                window: if g.window > 1 {
                    ConsumerWindowT::ParallelConsumerWindow(Box::new(ParallelConsumerWindowT {
                        max: g.window,
                    }))
                } else {
                    ConsumerWindowT::SequentialConsumerWindow(Box::default())
                },
                ack_timeout_nanos: 5_000_000_000,
                retry_backoff_nanos: g.backoff_ms * 1_000_000,
                retry_max_backoff_nanos: g.max_backoff_ms * 1_000_000,
                granted_batches: g.batches,
                granted_bytes: g.bytes,
                max_batch_bytes: g.max_batch_bytes,
                max_batch_rows: g.max_batch_rows,
            })),
            message: "opened".into(),
        })),
    )
}

pub fn emitter_refused(request_id: u64, refusal: EmitterOpenRefusal) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::OpenEmitterOutcome(Box::new(OpenEmitterOutcomeT {
            disposition: OpenEmitterDispositionT::EmitterRefused(Box::new(EmitterRefusedT {
                refusal: Some(refusal),
            })),
            message: "refused".into(),
        })),
    )
}

pub fn delivered(
    request_id: u64,
    identity: u8,
    reference: u8,
    ipc: Vec<u8>,
    members: u32,
) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
            disposition: ReadEmitterDispositionT::EmitterBatchReceived(Box::new(
                EmitterBatchReceivedT {
                    identity: vec![identity; 16],
                    reference: vec![reference; 16],
                    source_relay: "alerts_relay".into(),
                    branch_fingerprint: Some(vec![9; 32]),
                    batch: ipc,
                    members,
                    execution_now_unix_nanos: -5,
                },
            )),
            message: String::new(),
        })),
    )
}

pub fn consumer_ended(request_id: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
            disposition: ReadEmitterDispositionT::EmitterConsumerEnded(Box::default()),
            message: String::new(),
        })),
    )
}

pub fn settled(request_id: u64, s: EmitterSettlement) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::SettleEmitterBatchOutcome(Box::new(SettleEmitterBatchOutcomeT {
            disposition: Some(s),
            message: String::new(),
        })),
    )
}

pub fn emitter_closed(request_id: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::CloseEmitterOutcome(Box::new(CloseEmitterOutcomeT {
            disposition: Some(EmitterCloseDisposition::Closed),
            message: String::new(),
        })),
    )
}

/// A client whose session holds a transaction begun with `BEGIN;`.
pub fn holding_transaction() -> super::rig::Rig {
    let mut r = super::rig::Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    r.exec("BEGIN;");
    let sid = r.open();
    let (cid, cmd) = r.last_command();
    let mut o = CommandOutcomeT {
        execution_reference: cmd.execution_reference.clone(),
        origin: Some(OutcomeOrigin::Executed),
        disposition: super::completed(),
        message: String::new(),
        ..Default::default()
    };
    o.transaction = Some(Box::new(TransactionStatusT {
        transaction_id: "tx-1".into(),
        domain: "d1".into(),
        state: TransactionStateT::TransactionOpen(Box::default()),
        accepted_operations: 0,
        applied_operations: 0,
    }));
    r.feed(sid, reply(cid, ReplyBodyT::CommandOutcome(Box::new(o))));
    assert!(r.c.binding().is_holding());
    r
}
