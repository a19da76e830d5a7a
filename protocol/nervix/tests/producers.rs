//! Producers through the client, against a scripted server (P-1 to P-8): the open, credit,
//! outcomes and retries, admission, close, loss and restoration, and the batches themselves.

mod support;

use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use nervix_protocol::arrow::{BatchError, ColumnProblem};
use nervix_protocol::client::*;
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType as Scalar};
use nervix_protocol::schema::*;
use std::sync::Arc;
use std::time::Duration;
use support::dataplane::*;
use support::rig::*;

fn drain(r: &mut Rig, p: ProducerId) -> Vec<ProducerEvent> {
    std::iter::from_fn(|| r.c.poll_producer_event(p)).collect()
}

fn lose(r: &mut Rig, sid: SessionId) -> SessionId {
    r.c.handle_closed(r.now, sid);
    r.pump();
    let at = r.c.poll_timeout().expect("a reconnect is due");
    r.now = at;
    r.c.handle_timeout(at);
    r.open()
}

/// A client with one session and a producer opened on it with `g`; returns the session, the
/// producer and its wire identity.
fn opened(g: &Grant) -> (Rig, SessionId, ProducerId, u64) {
    let mut r = Rig::new();
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(sid, producer_opened(wire, g, ProducerAdmission::Open));
    (r, sid, p, wire)
}

fn builder_batch(r: &Rig, p: ProducerId, rows: usize) -> nervix_protocol::arrow::BatchBuilder {
    let mut b = r.c.batch_builder(p).unwrap();
    let ids: Vec<u64> = (0..rows as u64).collect();
    b.column("id", &ids).unwrap();
    let names: Vec<Option<&str>> = (0..rows).map(|i| (i % 2 == 0).then_some("n")).collect();
    b.nullable_column("name", &names).unwrap();
    let secrets: Vec<&str> = vec!["s3cr3t"; rows];
    b.column("secret", &secrets).unwrap();
    b
}

fn submit(r: &mut Rig, p: ProducerId, rows: usize) -> BatchId {
    let b = builder_batch(r, p, rows);
    let id = r.c.submit_built(r.now, p, b).unwrap();
    r.pump();
    id
}

fn submits(r: &Rig, sid: SessionId) -> Vec<(u64, Vec<u8>)> {
    r.sent
        .iter()
        .filter(|(s, _)| *s == sid)
        .filter_map(|(_, m)| match &m.request {
            ClientRequestT::SubmitBatchRequest(b) => Some((m.request_id, b.batch.clone())),
            _ => None,
        })
        .collect()
}

fn outcomes(events: &[ProducerEvent]) -> Vec<(BatchId, BatchOutcome)> {
    events
        .iter()
        .filter_map(|e| match e {
            ProducerEvent::Outcome { batch, outcome } => Some((*batch, outcome.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn p_1_open_names_exact_fields_and_bounded_credit() {
    let mut r = Rig::new();
    let spec = ProducerSpec::new("d1", "orders_in", fields()).with_credit(1024, 32 << 20);
    r.c.open_producer(r.now, spec).unwrap();
    r.open();
    let (_, req) = last_of(&r, ClientRequest::OpenIngestorRequest);
    let ClientRequestT::OpenIngestorRequest(o) = req else {
        unreachable!()
    };
    assert_eq!(
        (o.domain.as_str(), o.ingestor.as_str()),
        ("d1", "orders_in")
    );
    let wire: Vec<(String, bool, bool)> = o
        .expected_fields
        .iter()
        .map(|f| (f.name.clone(), f.nullable, f.sensitive))
        .collect();
    assert_eq!(
        wire,
        vec![
            ("id".to_string(), false, false),
            ("name".to_string(), true, false),
            ("secret".to_string(), false, true)
        ]
    );
    assert_eq!(
        (o.max_outstanding_batches, o.max_outstanding_bytes),
        (1024, 32 << 20)
    );
    // Credit outside 1..=1024 batches and 1..=32 MiB is refused before anything is sent.
    for (b, y) in [(0, 1), (1025, 1), (1, 0), (1, (32 << 20) + 1)] {
        let spec = ProducerSpec::new("d1", "orders_in", fields()).with_credit(b, y);
        assert_eq!(
            r.c.open_producer(r.now, spec),
            Err(ClientError::InvalidCredit)
        );
    }
}

#[test]
fn p_1_both_dispositions_opened_and_refused() {
    let (mut r, _sid, p, _) = opened(&Grant::default());
    let ev = drain(&mut r, p);
    let ProducerEvent::Opened(desc) = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!(
        (desc.generation, desc.granted_batches, desc.max_batch_rows),
        (3, 2, 100)
    );
    assert_eq!(desc.retry_backoff, Duration::from_millis(100));
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Open);

    let q =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "nope", fields()))
            .unwrap();
    r.pump();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    let sid = r.c.session().unwrap();
    r.feed(
        sid,
        producer_refused(wire, ProducerRefusal::IngestorNotFound),
    );
    assert_eq!(
        drain(&mut r, q),
        vec![ProducerEvent::Refused {
            refusal: Some(ProducerRefusal::IngestorNotFound),
            message: "refused".into()
        }]
    );
    assert_eq!(r.c.producer(q).unwrap().state, ProducerState::Refused);
}

#[test]
fn p_1_no_producer_opens_while_a_transaction_is_held() {
    let mut r = holding_transaction();
    assert_eq!(
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields())),
        Err(ClientError::InTransaction)
    );
    r.pump();
    assert!(r
        .sent
        .iter()
        .all(|(_, m)| m.request.client_request_type() != ClientRequest::OpenIngestorRequest));
}

#[test]
fn p_2_frames_after_the_open_reply_find_the_producer() {
    let mut r = Rig::new();
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    // The reply and the admission change that follows it arrive back to back.
    r.c.handle_frame(
        r.now,
        sid,
        producer_opened(wire, &Grant::default(), ProducerAdmission::Open),
    );
    r.c.handle_frame(
        r.now,
        sid,
        admission_changed(wire, ProducerAdmission::Suspended),
    );
    r.pump();
    let ev = drain(&mut r, p);
    assert!(matches!(ev[0], ProducerEvent::Opened(_)));
    assert_eq!(ev[1], ProducerEvent::Admission(Admission::Suspended));
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Suspended);
}

#[test]
fn p_2_frames_about_unfollowed_producers_are_ignored() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    drain(&mut r, p);
    r.feed(
        sid,
        admission_changed(wire + 100, ProducerAdmission::Suspended),
    );
    r.feed(
        sid,
        producer_ended(wire + 100, ProducerEndReason::OwnerLost),
    );
    assert_eq!(r.c.ignored_producer_frames(), 2);
    assert!(drain(&mut r, p).is_empty());
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Open);
    // Nor are they handed to the application as unsolicited frames of another kind.
    assert!(r.c.poll_unsolicited().is_none());
}

#[test]
fn p_3_batches_are_canonical_arrow_ipc_of_the_producers_fields() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    submit(&mut r, p, 3);
    let (_, ipc) = submits(&r, sid).pop().unwrap();
    // Schema, one batch, end-of-stream: read back with arrow-ipc alone.
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(&ipc), None).unwrap();
    let schema = reader.schema();
    assert!(schema.metadata().is_empty());
    assert!(schema.fields().iter().all(|f| f.metadata().is_empty()));
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "name", "secret"]);
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].num_rows(), 3);
    assert!(ipc.ends_with(&[0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]));
    // The same stream decodes through the checked reader of the crate.
    let back = nervix_protocol::arrow::decode(&ipc, &fields(), 3).unwrap();
    assert_eq!(back, batches[0]);
}

#[test]
fn p_3_batches_beyond_the_grants_rows_or_bytes_are_refused_locally() {
    let g = Grant {
        max_batch_rows: 4,
        max_batch_bytes: 2000,
        ..Grant::default()
    };
    let (mut r, sid, p, _) = opened(&g);
    let b = builder_batch(&r, p, 5);
    assert_eq!(
        r.c.submit_built(r.now, p, b),
        Err(SubmitError::Batch(BatchError::TooManyRows {
            rows: 5,
            max: 4
        }))
    );
    // Exactly the row limit goes.
    submit(&mut r, p, 4);
    let mut b = r.c.batch_builder(p).unwrap();
    b.column("id", &[1u64]).unwrap();
    b.nullable_column::<&str>("name", &[None]).unwrap();
    let big = "x".repeat(4000);
    b.column("secret", &[big.as_str()]).unwrap();
    assert!(matches!(
        r.c.submit_built(r.now, p, b),
        Err(SubmitError::Batch(BatchError::TooLarge { max: 2000, .. }))
    ));
    assert_eq!(submits(&r, sid).len(), 1);
}

#[test]
fn p_3_a_users_record_batch_is_checked_column_by_column() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    let schema = nervix_protocol::arrow::arrow_schema(&fields());
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from(vec![1u64, 2])),
        Arc::new(StringArray::from(vec![Some("a"), None])),
        Arc::new(StringArray::from(vec!["x", "y"])),
    ];
    let good = RecordBatch::try_new(schema.clone(), cols.clone()).unwrap();
    r.c.submit(r.now, p, &good).unwrap();
    r.pump();
    assert_eq!(submits(&r, sid).len(), 1);

    // `name` declared non-nullable: refused naming the column.
    let mut f = fields();
    f[1] = FieldSpec::new("name", FieldType::Scalar(Scalar::String), false, false);
    let wrong = nervix_protocol::arrow::arrow_schema(&f);
    let cols2: Vec<ArrayRef> = vec![
        cols[0].clone(),
        Arc::new(StringArray::from(vec!["a", "b"])),
        cols[2].clone(),
    ];
    let bad = RecordBatch::try_new(wrong, cols2).unwrap();
    assert_eq!(
        r.c.submit(r.now, p, &bad),
        Err(SubmitError::Batch(BatchError::Column {
            column: "name".into(),
            problem: ColumnProblem::Nullability { expected: true }
        }))
    );
    // A column of another type.
    let mut f = fields();
    f[0] = FieldSpec::new("id", FieldType::Scalar(Scalar::I64), false, false);
    let cols3: Vec<ArrayRef> = vec![
        Arc::new(arrow_array::Int64Array::from(vec![1i64, 2])),
        cols[1].clone(),
        cols[2].clone(),
    ];
    let bad = RecordBatch::try_new(nervix_protocol::arrow::arrow_schema(&f), cols3).unwrap();
    assert!(matches!(
        r.c.submit(r.now, p, &bad),
        Err(SubmitError::Batch(BatchError::Column { column, problem: ColumnProblem::Type { .. } })) if column == "id"
    ));
    // Field metadata is refused.
    let with_meta = arrow_schema::Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| {
                let f = f.as_ref().clone();
                if f.name() == "secret" {
                    f.with_metadata(std::collections::HashMap::from([(
                        "k".to_string(),
                        "v".to_string(),
                    )]))
                } else {
                    f
                }
            })
            .collect::<Vec<_>>(),
    );
    let bad = RecordBatch::try_new(Arc::new(with_meta), cols).unwrap();
    assert_eq!(
        r.c.submit(r.now, p, &bad),
        Err(SubmitError::Batch(BatchError::Column {
            column: "secret".into(),
            problem: ColumnProblem::Metadata
        }))
    );
    assert_eq!(submits(&r, sid).len(), 1);
}

#[test]
fn p_3_the_typed_builder_checks_type_nullability_and_sensitivity() {
    let (r, _sid, p, _) = opened(&Grant::default());
    let mut b = r.c.batch_builder(p).unwrap();
    assert!(matches!(
        b.column("id", &[1i64]),
        Err(BatchError::Column { column, problem: ColumnProblem::Type { .. } }) if column == "id"
    ));
    assert_eq!(
        b.nullable_column::<&str>("secret", &[None]),
        Err(BatchError::Column {
            column: "secret".into(),
            problem: ColumnProblem::Null
        })
    );
    b.column("id", &[1u64, 2]).unwrap();
    assert!(matches!(
        b.column("secret", &["only one"]),
        Err(BatchError::Column {
            problem: ColumnProblem::Length {
                expected: 2,
                found: 1
            },
            ..
        })
    ));
    // A builder for fields that differ only in sensitivity is refused naming the column.
    let mut f = fields();
    f[2] = FieldSpec::new("secret", FieldType::Scalar(Scalar::String), false, false);
    let mut other = nervix_protocol::arrow::BatchBuilder::new(f.into());
    other.column("id", &[1u64]).unwrap();
    other.nullable_column::<&str>("name", &[None]).unwrap();
    other.column("secret", &["x"]).unwrap();
    let mut r = r;
    assert_eq!(
        r.c.submit_built(r.now, p, other),
        Err(SubmitError::Batch(BatchError::Column {
            column: "secret".into(),
            problem: ColumnProblem::Sensitivity { expected: true }
        }))
    );
}

#[test]
fn p_4_credit_is_held_from_send_until_outcome_and_never_exceeded() {
    let (mut r, sid, p, _) = opened(&Grant::default()); // 2 batches of credit
    let a = submit(&mut r, p, 1);
    let b = submit(&mut r, p, 1);
    let c = submit(&mut r, p, 1);
    let sent = submits(&r, sid);
    assert_eq!(sent.len(), 2, "the third does not fit");
    let info = r.c.producer(p).unwrap();
    assert_eq!(info.credit_batches, 2);
    assert_eq!(
        info.credit_bytes,
        (sent[0].1.len() + sent[1].1.len()) as u64
    );
    assert_eq!(r.c.batch_state(p, c), Some(BatchState::AwaitingCredit));
    assert_eq!(r.c.batch_state(p, a), Some(BatchState::Sent));
    // An outcome arrives: its batch holds its credit until the outcome is read.
    r.feed(sid, batch_completed(sent[0].0));
    assert_eq!(r.c.batch_state(p, a), Some(BatchState::Resolved));
    assert_eq!(submits(&r, sid).len(), 2);
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 2);
    // Reading it returns one batch of credit, and the waiting batch goes at once.
    let mut got: Vec<BatchId> = outcomes(&drain(&mut r, p))
        .into_iter()
        .map(|(b, _)| b)
        .collect();
    assert_eq!(got, vec![a]);
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 1);
    assert!(r.c.poll_timeout().is_some_and(|t| t <= r.now));
    r.advance(Duration::ZERO);
    assert_eq!(submits(&r, sid).len(), 3);
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 2);
    r.feed(sid, batch_completed(sent[1].0));
    let third = submits(&r, sid)[2].0;
    r.feed(sid, batch_completed(third));
    got.extend(outcomes(&drain(&mut r, p)).into_iter().map(|(b, _)| b));
    let info = r.c.producer(p).unwrap();
    assert_eq!((info.credit_batches, info.credit_bytes), (0, 0));
    assert_eq!(got, vec![a, b, c]);
}

#[test]
fn p_4_a_batch_that_does_not_fit_the_granted_bytes_waits() {
    let g = Grant {
        batches: 8,
        ..Grant::default()
    };
    let (mut r, sid, p, _) = opened(&g);
    submit(&mut r, p, 1);
    let one = submits(&r, sid)[0].1.len() as u64;
    // Reopen with room for exactly two such batches in bytes.
    let g = Grant {
        batches: 8,
        bytes: 2 * one + 1,
        max_batch_bytes: one + 1,
        ..Grant::default()
    };
    let (mut r, sid, p, _) = opened(&g);
    for _ in 0..3 {
        submit(&mut r, p, 1);
    }
    assert_eq!(submits(&r, sid).len(), 2);
    assert!(r.c.producer(p).unwrap().credit_bytes <= 2 * one + 1);
}

#[test]
fn p_5_exactly_one_outcome_and_no_completion_before_completed() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    let b = submit(&mut r, p, 1);
    drain(&mut r, p);
    assert!(
        outcomes(&drain(&mut r, p)).is_empty(),
        "sending is not an outcome"
    );
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, batch_completed(rid));
    r.feed(sid, batch_completed(rid)); // a duplicate reply is not a second outcome
    assert_eq!(
        outcomes(&drain(&mut r, p)),
        vec![(b, BatchOutcome::Completed)]
    );
}

#[test]
fn p_5_suspended_and_busy_go_again_after_the_doubling_backoff() {
    let (mut r, sid, p, _) = opened(&Grant::default()); // 100 ms doubling to at most 350 ms
    let b = submit(&mut r, p, 1);
    let mut waits = Vec::new();
    for refusal in [
        SubmissionRefusal::Busy,
        SubmissionRefusal::Suspended,
        SubmissionRefusal::Busy,
        SubmissionRefusal::Busy,
    ] {
        let (rid, _) = *submits(&r, sid).last().unwrap();
        let before = submits(&r, sid).len();
        let at = r.now;
        r.feed(sid, not_admitted(rid, refusal));
        assert_eq!(r.c.batch_state(p, b), Some(BatchState::Retrying));
        assert_eq!(r.c.producer(p).unwrap().credit_batches, 0);
        let due = r.c.poll_timeout().unwrap();
        // Not a moment early.
        r.now = due - Duration::from_nanos(1);
        r.c.handle_timeout(r.now);
        r.pump();
        assert_eq!(submits(&r, sid).len(), before);
        r.advance(Duration::from_nanos(1));
        assert_eq!(submits(&r, sid).len(), before + 1);
        waits.push(due.saturating_since(at));
    }
    assert_eq!(
        waits,
        [100, 200, 350, 350].map(Duration::from_millis).to_vec()
    );
    // Every attempt carried the same bytes.
    let sent = submits(&r, sid);
    assert!(sent.windows(2).all(|w| w[0].1 == w[1].1));
    let (rid, _) = *sent.last().unwrap();
    r.feed(sid, batch_completed(rid));
    assert_eq!(
        outcomes(&drain(&mut r, p)),
        vec![(b, BatchOutcome::Completed)]
    );
}

#[test]
fn p_5_other_refusals_failures_and_unknown_outcomes_are_never_sent_again() {
    let (mut r, sid, p, _) = opened(&Grant {
        batches: 8,
        ..Grant::default()
    });
    let ids: Vec<BatchId> = (0..4).map(|_| submit(&mut r, p, 1)).collect();
    let sent = submits(&r, sid);
    r.feed(sid, not_admitted(sent[0].0, SubmissionRefusal::InvalidData));
    r.feed(
        sid,
        submission(
            sent[1].0,
            SubmissionDispositionT::SubmissionFailed(Box::new(SubmissionFailedT {
                failure: Some(ProcessingFailure::AckTimedOut),
            })),
        ),
    );
    r.feed(
        sid,
        submission(
            sent[2].0,
            SubmissionDispositionT::SubmissionOutcomeUnknown(Box::new(SubmissionOutcomeUnknownT {
                cause: Some(OutcomeUncertainty::OwnerLost),
            })),
        ),
    );
    r.feed(sid, not_admitted(sent[3].0, SubmissionRefusal::Draining));
    r.advance(Duration::from_secs(10));
    assert_eq!(submits(&r, sid).len(), 4);
    let got = outcomes(&drain(&mut r, p));
    assert_eq!(got.len(), 4);
    assert_eq!(got[0].0, ids[0]);
    assert!(matches!(
        got[1].1,
        BatchOutcome::Failed {
            failure: ProcessingFailure::AckTimedOut,
            ..
        }
    ));
    assert!(matches!(
        got[2].1,
        BatchOutcome::OutcomeUnknown {
            cause: OutcomeUncertainty::OwnerLost,
            ..
        }
    ));
}

#[test]
fn p_6_nothing_is_sent_while_suspended_and_outcomes_are_still_read() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let a = submit(&mut r, p, 1);
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    let b = submit(&mut r, p, 1);
    assert_eq!(submits(&r, sid).len(), 1);
    assert_eq!(r.c.batch_state(p, b), Some(BatchState::AwaitingCredit));
    // The admitted batch keeps its credit, and its outcome is read during the suspension.
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 1);
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, batch_completed(rid));
    let got: Vec<BatchId> = outcomes(&drain(&mut r, p))
        .into_iter()
        .map(|(b, _)| b)
        .collect();
    assert_eq!(got, vec![a]);
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 0);
    r.advance(Duration::ZERO);
    assert_eq!(submits(&r, sid).len(), 1);
    // Coalesced changes: only the newest counts.
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    assert_eq!(submits(&r, sid).len(), 2);
}

#[test]
fn p_6_producer_ended_is_the_last_frame_and_outcomes_precede_it() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let a = submit(&mut r, p, 1);
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, batch_completed(rid));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    let b = submit(&mut r, p, 1);
    r.feed(
        sid,
        producer_ended(wire, ProducerEndReason::EndpointChanged),
    );
    let ev = drain(&mut r, p);
    assert_eq!(
        outcomes(&ev),
        vec![(a, BatchOutcome::Completed), (b, BatchOutcome::NotSent)]
    );
    assert!(matches!(
        ev.last(),
        Some(ProducerEvent::Ended {
            reason: ProducerEndReason::EndpointChanged,
            ..
        })
    ));
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Ended);
    // Anything after it is about a producer no longer followed.
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    assert_eq!(r.c.ignored_producer_frames(), 1);
    assert_eq!(
        r.c.submit_built(r.now, p, builder_batch(&r, p, 1)),
        Err(SubmitError::Finished(ProducerState::Ended))
    );
}

#[test]
fn p_6_an_end_before_every_outcome_is_a_protocol_violation() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let a = submit(&mut r, p, 1);
    r.feed(sid, producer_ended(wire, ProducerEndReason::OwnerLost));
    assert!(r.events.iter().any(|e| matches!(
        e,
        ClientEvent::SessionLost { loss: SessionLoss::Violation(v), .. } if v.rule() == "P-6"
    )));
    assert_eq!(
        outcomes(&drain(&mut r, p)),
        vec![(a, BatchOutcome::Unknown)]
    );
}

#[test]
fn p_7_no_cancel_request_is_ever_sent_for_a_batch() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    submit(&mut r, p, 1);
    r.advance(Duration::from_secs(120));
    assert!(!requests(&r, sid).contains(&ClientRequest::CancelRequest));
    assert!(
        r.c.producer(p).unwrap().credit_batches == 1,
        "still out, still holding credit"
    );
}

#[test]
fn p_7_outcomes_stay_retrievable_when_nobody_waits() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    let a = submit(&mut r, p, 1);
    drain(&mut r, p);
    // The application polls other things for a long time; the outcome waits for it.
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, batch_completed(rid));
    r.advance(Duration::from_secs(3600));
    while r.c.poll_event().is_some() {}
    assert_eq!(
        r.c.poll_producer_event(p),
        Some(ProducerEvent::Outcome {
            batch: a,
            outcome: BatchOutcome::Completed
        })
    );
}

#[test]
fn p_8_close_waits_for_outcomes_then_its_reply() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let a = submit(&mut r, p, 1);
    r.c.close_producer(r.now, p).unwrap();
    r.pump();
    let (cid, req) = last_of(&r, ClientRequest::CloseIngestorRequest);
    assert!(matches!(req, ClientRequestT::CloseIngestorRequest(c) if c.producer == wire));
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Closing);
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, batch_completed(rid));
    r.feed(sid, ingestor_closed(cid));
    let ev = drain(&mut r, p);
    assert_eq!(outcomes(&ev), vec![(a, BatchOutcome::Completed)]);
    assert_eq!(ev.last(), Some(&ProducerEvent::Closed));
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Closed);
}

#[test]
fn p_8_a_close_reply_before_every_outcome_is_a_protocol_violation() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    submit(&mut r, p, 1);
    r.c.close_producer(r.now, p).unwrap();
    r.pump();
    let (cid, _) = last_of(&r, ClientRequest::CloseIngestorRequest);
    r.feed(sid, ingestor_closed(cid));
    assert!(r.events.iter().any(|e| matches!(
        e,
        ClientEvent::SessionLost { loss: SessionLoss::Violation(v), .. } if v.rule() == "P-8"
    )));
}

#[test]
fn p_8_loss_reports_unanswered_batches_unknown_and_never_resends_them() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    let a = submit(&mut r, p, 1);
    let b = submit(&mut r, p, 1);
    let c = submit(&mut r, p, 1); // waits for credit, never sent
    let sent_before: Vec<Vec<u8>> = submits(&r, sid).into_iter().map(|(_, x)| x).collect();
    let sid2 = lose(&mut r, sid);
    let ev = drain(&mut r, p);
    assert_eq!(ev[1], ProducerEvent::Interrupted);
    assert_eq!(
        outcomes(&ev),
        vec![(a, BatchOutcome::Unknown), (b, BatchOutcome::Unknown)]
    );
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 0);
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Restoring);
    let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid2,
        producer_opened(wire2, &Grant::default(), ProducerAdmission::Open),
    );
    let ev = drain(&mut r, p);
    assert!(matches!(ev[0], ProducerEvent::Restored(_)));
    // Only the batch never sent goes on the new attachment, under its new identity.
    let sent = submits(&r, sid2);
    assert_eq!(sent.len(), 1);
    assert!(!sent_before.contains(&sent[0].1) || sent_before.iter().all(|x| x == &sent[0].1));
    let ClientRequestT::SubmitBatchRequest(s) = last_of(&r, ClientRequest::SubmitBatchRequest).1
    else {
        unreachable!()
    };
    assert_eq!(s.producer, wire2);
    r.feed(sid2, batch_completed(sent[0].0));
    assert_eq!(
        outcomes(&drain(&mut r, p)),
        vec![(c, BatchOutcome::Completed)]
    );
}

#[test]
fn p_8_restoration_with_another_contract_or_grant_requires_a_reopen() {
    for changed in [
        Grant {
            contract: 8,
            ..Grant::default()
        },
        Grant {
            generation: 4,
            ..Grant::default()
        },
        Grant {
            batches: 3,
            ..Grant::default()
        },
        Grant {
            max_backoff_ms: 400,
            ..Grant::default()
        },
    ] {
        let (mut r, sid, p, _) = opened(&Grant::default());
        let sid2 = lose(&mut r, sid);
        let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
        r.feed(
            sid2,
            producer_opened(wire2, &changed, ProducerAdmission::Open),
        );
        let ev = drain(&mut r, p);
        assert!(
            matches!(
                ev.last(),
                Some(ProducerEvent::ReopenRequired(ReopenReason::Changed(_)))
            ),
            "{ev:?}"
        );
        assert_eq!(
            r.c.producer(p).unwrap().state,
            ProducerState::ReopenRequired
        );
        // The unwanted attachment is released.
        let (_, close) = last_of(&r, ClientRequest::CloseIngestorRequest);
        assert!(matches!(close, ClientRequestT::CloseIngestorRequest(c) if c.producer == wire2));
    }
}

#[test]
fn p_8_temporary_refusals_are_retried_and_close_wins_over_restoration() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid2,
        producer_refused(wire2, ProducerRefusal::EndpointUnavailable),
    );
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Interrupted);
    let opens = |r: &Rig| {
        requests(r, sid2)
            .iter()
            .filter(|k| **k == ClientRequest::OpenIngestorRequest)
            .count()
    };
    assert_eq!(opens(&r), 1);
    r.advance(Duration::from_secs(10));
    assert_eq!(opens(&r), 2);
    // Close while the new open is out: its late success is closed, not restored.
    r.c.close_producer(r.now, p).unwrap();
    r.pump();
    let (wire3, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid2,
        producer_opened(wire3, &Grant::default(), ProducerAdmission::Open),
    );
    let (_, close) = last_of(&r, ClientRequest::CloseIngestorRequest);
    assert!(matches!(close, ClientRequestT::CloseIngestorRequest(c) if c.producer == wire3));
    let ev = drain(&mut r, p);
    assert!(!ev.iter().any(|e| matches!(e, ProducerEvent::Restored(_))));
}

#[test]
fn p_8_a_restoration_rejected_as_a_defect_requires_a_reopen_and_is_not_sent_again() {
    // C-8: a request rejected for a defect of its own would be rejected the same way again.
    for rejection in [
        RequestRejection::InvalidRequest,
        RequestRejection::UnsupportedRequest,
        RequestRejection::UnsupportedValue,
        RequestRejection::DuplicateRequestId,
        RequestRejection::ReplyTooLarge,
    ] {
        let (mut r, sid, p, _) = opened(&Grant::default());
        drain(&mut r, p);
        let sid2 = lose(&mut r, sid);
        drain(&mut r, p);
        let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
        r.feed(sid2, support::rejected(wire2, rejection));
        let ev = drain(&mut r, p);
        assert!(
            matches!(
                ev.as_slice(),
                [ProducerEvent::ReopenRequired(ReopenReason::Refused {
                    refusal: None,
                    ..
                })]
            ),
            "{rejection:?}: {ev:?}"
        );
        assert_eq!(
            r.c.producer(p).unwrap().state,
            ProducerState::ReopenRequired
        );
        let before = requests(&r, sid2).len();
        r.advance(Duration::from_secs(60));
        assert_eq!(
            requests(&r, sid2).len(),
            before,
            "{rejection:?}: never sent again"
        );
    }
    // A busy server is no defect: the restoration waits and goes again.
    let rejection = RequestRejection::ServerBusy;
    let (mut r, sid, p, _) = opened(&Grant::default());
    drain(&mut r, p);
    let sid2 = lose(&mut r, sid);
    drain(&mut r, p);
    let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(sid2, support::rejected(wire2, rejection));
    assert!(
        matches!(
            drain(&mut r, p).as_slice(),
            [ProducerEvent::RestoreRefused { refusal: None, .. }]
        ),
        "{rejection:?}"
    );
    let before = requests(&r, sid2).len();
    r.advance(Duration::from_secs(10));
    assert_eq!(
        requests(&r, sid2).len(),
        before + 1,
        "{rejection:?}: asked again"
    );
}

/// Opens a producer whose open is refused: it finishes at once, its `Refused` event queued.
fn refused_at_once(r: &mut Rig, sid: SessionId) -> ProducerId {
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    r.pump();
    let (wire, _) = last_of(r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_refused(wire, ProducerRefusal::EndpointUnavailable),
    );
    p
}

#[test]
fn finished_producers_are_forgotten_past_the_newest_1024_once_nothing_is_left_to_read() {
    let mut r = Rig::new();
    // One finished and never read: it stays however many finish after it.
    let unread =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_refused(wire, ProducerRefusal::EndpointUnavailable),
    );
    let mut ids = Vec::new();
    for _ in 0..1030 {
        let p = refused_at_once(&mut r, sid);
        assert!(matches!(
            drain(&mut r, p).as_slice(),
            [ProducerEvent::Refused { .. }]
        ));
        ids.push(p);
    }
    // 1,031 finished: the oldest read ones beyond the newest 1,024 are forgotten, the unread
    // one kept.
    for p in &ids[..7] {
        assert!(r.c.producer(*p).is_none(), "{p:?} forgotten");
    }
    for p in &ids[7..] {
        assert_eq!(r.c.producer(*p).unwrap().state, ProducerState::Refused);
    }
    assert_eq!(r.c.producer(unread).unwrap().state, ProducerState::Refused);
    // Once its event is read, it goes in its turn like any other.
    assert_eq!(drain(&mut r, unread).len(), 1);
    let mut newer = Vec::new();
    for _ in 0..1024 {
        let p = refused_at_once(&mut r, sid);
        assert_eq!(drain(&mut r, p).len(), 1);
        newer.push(p);
    }
    assert!(r.c.producer(unread).is_none());
    assert!(ids.iter().all(|p| r.c.producer(*p).is_none()));
    assert!(newer
        .iter()
        .all(|p| r.c.producer(*p).map(|i| i.state) == Some(ProducerState::Refused)));
    // More than 1,024 finished and none read: none is forgotten, and each finish looks at
    // each of them once (it does not go round them for ever).
    let unread: Vec<ProducerId> = (0..1100).map(|_| refused_at_once(&mut r, sid)).collect();
    assert!(unread.iter().all(|p| r.c.producer(*p).is_some()));
    assert!(newer.iter().all(|p| r.c.producer(*p).is_none()));
    // A forgotten producer is an unknown handle.
    assert!(r.c.close_producer(r.now, ids[0]).is_err());
}

#[test]
fn p_8_a_schema_mismatch_on_restoration_requires_a_reopen() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid2,
        producer_refused(wire2, ProducerRefusal::SchemaMismatch),
    );
    let ev = drain(&mut r, p);
    assert!(matches!(
        ev.last(),
        Some(ProducerEvent::ReopenRequired(ReopenReason::Refused {
            refusal: Some(ProducerRefusal::SchemaMismatch),
            ..
        }))
    ));
}

mod machine {
    //! Any sequence of server frames keeps the producer's accounting: credit never negative
    //! or beyond the grant, every batch ends exactly once, nothing resent after a loss.
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Step {
        Submit,
        Answer(usize, u8),
        Admission(bool),
        Time(u16),
        Lose,
        Reopen(bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => Just(Step::Submit),
            4 => (0usize..8, 0u8..6).prop_map(|(i, k)| Step::Answer(i, k)),
            1 => any::<bool>().prop_map(Step::Admission),
            2 => (0u16..500).prop_map(Step::Time),
            1 => Just(Step::Lose),
            1 => any::<bool>().prop_map(Step::Reopen),
        ]
    }

    proptest! {
        #[test]
        fn p_4_any_frames_keep_credit_within_the_grant_and_one_outcome_per_batch(
            steps in proptest::collection::vec(step(), 1..60)
        ) {
            let g = Grant { batches: 3, ..Grant::default() };
            let (mut r, mut sid, p, mut wire) = opened(&g);
            let mut submitted: Vec<BatchId> = vec![];
            let mut answered = std::collections::BTreeSet::new();
            let mut ended: std::collections::BTreeMap<BatchId, usize> = Default::default();
            let mut lost_bytes: Vec<(SessionId, Vec<u8>)> = vec![];
            for s in steps {
                match s {
                    Step::Submit => {
                        if let Ok(b) = r.c.batch_builder(p) {
                            let mut b = b;
                            b.column("id", &[submitted.len() as u64]).unwrap();
                            b.nullable_column::<&str>("name", &[None]).unwrap();
                            b.column("secret", &["s"]).unwrap();
                            if let Ok(id) = r.c.submit_built(r.now, p, b) {
                                submitted.push(id);
                            }
                            r.pump();
                        }
                    }
                    Step::Answer(i, k) => {
                        let out: Vec<(u64, Vec<u8>)> = submits(&r, sid)
                            .into_iter()
                            .filter(|(id, _)| !answered.contains(&(sid, *id)))
                            .collect();
                        if let Some((rid, _)) = out.get(i % out.len().max(1)).cloned() {
                            answered.insert((sid, rid));
                            let f = match k {
                                0 => batch_completed(rid),
                                1 => not_admitted(rid, SubmissionRefusal::Busy),
                                2 => not_admitted(rid, SubmissionRefusal::Suspended),
                                3 => not_admitted(rid, SubmissionRefusal::InvalidData),
                                _ => submission(rid, SubmissionDispositionT::SubmissionFailed(Box::new(SubmissionFailedT { failure: Some(ProcessingFailure::Rejected) }))),
                            };
                            r.feed(sid, f);
                        }
                    }
                    Step::Admission(open) => {
                        let a = if open { ProducerAdmission::Open } else { ProducerAdmission::Suspended };
                        r.feed(sid, admission_changed(wire, a));
                    }
                    Step::Time(ms) => r.advance(Duration::from_millis(u64::from(ms))),
                    Step::Lose => {
                        if r.c.producer(p).unwrap().state.is_final() { continue; }
                        lost_bytes.extend(
                            submits(&r, sid).into_iter()
                                .filter(|(id, _)| !answered.contains(&(sid, *id)))
                                .map(|(_, b)| (sid, b)),
                        );
                        sid = lose(&mut r, sid);
                    }
                    Step::Reopen(same) => {
                        if r.c.producer(p).unwrap().state != ProducerState::Restoring { continue; }
                        let (w, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
                        let grant = if same { g.clone() } else { Grant { contract: 1, ..g.clone() } };
                        r.feed(sid, producer_opened(w, &grant, ProducerAdmission::Open));
                        wire = w;
                    }
                }
                let info = r.c.producer(p).unwrap();
                prop_assert!(info.credit_batches <= g.batches);
                prop_assert!(info.credit_bytes <= g.bytes);
                let out = submits(&r, sid).into_iter().filter(|(id, _)| !answered.contains(&(sid, *id))).count();
                // Unread outcomes hold credit too (P-4).
                prop_assert!(info.credit_batches as usize >= out);
                while let Some(e) = r.c.poll_producer_event(p) {
                    if let ProducerEvent::Outcome { batch, .. } = e {
                        *ended.entry(batch).or_default() += 1;
                    }
                }
                let info = r.c.producer(p).unwrap();
                prop_assert_eq!(info.credit_batches as usize, out);
                // Credit that came back is used at the next drive.
                r.advance(Duration::ZERO);
            }
            prop_assert!(ended.values().all(|n| *n == 1));
            prop_assert!(ended.keys().all(|b| submitted.contains(b)));
            // A batch sent and lost unanswered never travels again: every batch's bytes are
            // distinct here (its id column), so its bytes never reappear after its loss.
            for (lost_on, bytes) in &lost_bytes {
                let again = r.sent.iter().filter(|(s, m)| {
                    s > lost_on
                        && matches!(&m.request, ClientRequestT::SubmitBatchRequest(b) if &b.batch == bytes)
                });
                prop_assert_eq!(again.count(), 0);
            }
        }
    }
}

#[test]
fn p_3_a_batch_beyond_what_one_request_carries_is_refused_locally() {
    // The grant would take 512 KiB, but a SubmitBatchRequest's batch is a vector of at most
    // 262,144 bytes (F-6).
    let (mut r, sid, p, _) = opened(&Grant::default());
    let mut b = r.c.batch_builder(p).unwrap();
    b.column("id", &[1u64]).unwrap();
    b.nullable_column::<&str>("name", &[None]).unwrap();
    let big = "x".repeat(300_000);
    b.column("secret", &[big.as_str()]).unwrap();
    assert!(matches!(
        r.c.submit_built(r.now, p, b),
        Err(SubmitError::Batch(BatchError::TooLarge {
            max: 262_144,
            ..
        }))
    ));
    assert!(submits(&r, sid).is_empty());
}

#[test]
fn p_8_a_close_unanswered_past_its_deadline_replaces_the_session_and_closes() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    std::iter::from_fn(|| r.c.poll_producer_event(p)).for_each(drop);
    r.c.close_producer(r.now, p).unwrap();
    r.pump();
    last_of(&r, ClientRequest::CloseIngestorRequest);
    // The close is never answered: at its deadline the session is given up ...
    r.advance(Duration::from_secs(31));
    assert!(r.closes.iter().any(|(s, _)| *s == sid), "{:?}", r.closes);
    r.c.handle_closed(r.now, sid);
    r.pump();
    // ... and its loss ends the attachment, so the close is complete.
    let events: Vec<ProducerEvent> = std::iter::from_fn(|| r.c.poll_producer_event(p)).collect();
    assert_eq!(events.last(), Some(&ProducerEvent::Closed));
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Closed);
}

#[test]
fn p_8_a_close_while_the_open_is_held_unread_completes_on_its_loss() {
    let mut r = Rig::new();
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.c.close_producer(r.now, p).unwrap();
    r.pump();
    assert!(!r.c.producer(p).unwrap().state.is_final());
    // The open is refused unread and held to go again; then its session is lost. Nothing
    // was ever attached, so the close is complete.
    r.feed(
        sid,
        support::rejected(wire, RequestRejection::TooManyRequestsInFlight),
    );
    r.c.handle_closed(r.now, sid);
    r.pump();
    let events: Vec<ProducerEvent> = std::iter::from_fn(|| r.c.poll_producer_event(p)).collect();
    assert_eq!(events, [ProducerEvent::Closed]);
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Closed);
    assert!(!requests(&r, sid).contains(&ClientRequest::CloseIngestorRequest));
}

/// The frame `encode_request` writes for a batch: what the fast path must equal.
fn submit_frame_of(request_id: u64, producer: u64, batch: &[u8]) -> Vec<u8> {
    nervix_protocol::encode::Encoder::new()
        .encode_request(
            request_id,
            &ClientRequestT::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
                producer,
                batch: batch.to_vec(),
            })),
        )
        .unwrap()
        .to_vec()
}

/// The raw frames of the `SubmitBatchRequest`s sent on `sid`, with their request identity.
fn raw_submits(r: &Rig, sid: SessionId) -> Vec<(u64, bytes::Bytes)> {
    r.raw
        .iter()
        .filter(|(s, _)| *s == sid)
        .filter_map(|(_, f)| {
            let m = support::sent(f);
            matches!(m.request, ClientRequestT::SubmitBatchRequest(_))
                .then(|| (m.request_id, f.clone()))
        })
        .collect()
}

#[test]
fn p_3_a_submit_frame_around_its_batch_is_the_encoded_request() {
    use nervix_protocol::encode::Encoder;
    use nervix_protocol::limits::MAX_VECTOR_ENTRIES;
    let mut enc = Encoder::new();
    let lens = (1..=40).chain([255, 1000, 4093, 200_000, MAX_VECTOR_ENTRIES]);
    for len in lens {
        // No byte of the batch is zero, so a batch byte taken for padding shows.
        let batch: Vec<u8> = (0..len).map(|i| (i % 251 + 1) as u8).collect();
        for (rid, producer) in [(1, 1), (7, 300), (u64::MAX, u64::MAX - 1)] {
            let f = enc.submit_frame(rid, producer, len).unwrap();
            assert_eq!(f.len(len), f.head.len() + len + f.tail);
            let mut got = f.head.to_vec();
            got.extend_from_slice(&batch);
            got.extend(std::iter::repeat_n(0u8, f.tail));
            assert_eq!(got, submit_frame_of(rid, producer, &batch), "len {len}");
        }
    }
    // The same refusals as the encoder's own, for the same reasons.
    let request = |producer, len| {
        ClientRequestT::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
            producer,
            batch: vec![1; len],
        }))
    };
    for (rid, producer, len) in [
        (0, 1, 8),
        (1, 0, 8),
        (1, 1, 0),
        (1, 1, MAX_VECTOR_ENTRIES + 1),
    ] {
        let fast = enc
            .submit_frame(rid, producer, len)
            .map(|f| f.head.to_vec());
        let full = Encoder::new().encode_request(rid, &request(producer, len));
        assert!(fast.is_err(), "{rid} {producer} {len}");
        assert_eq!(fast.unwrap_err(), full.unwrap_err());
    }
}

#[test]
fn p_3_the_sent_frame_is_the_encoded_request_of_the_canonical_stream() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let batch = builder_batch(&r, p, 7).finish().unwrap();
    let ipc = nervix_protocol::arrow::encode(&batch).unwrap();
    let b = submit(&mut r, p, 7);
    let (rid, frame) = raw_submits(&r, sid).pop().unwrap();
    nervix_protocol::frame::ClientFrame::check(frame.clone()).unwrap();
    assert_eq!(frame.to_vec(), submit_frame_of(rid, wire, &ipc));
    // Sent again (not admitted), under a new identity, the frame carries the same stream.
    r.feed(sid, not_admitted(rid, SubmissionRefusal::Busy));
    r.advance(Duration::from_secs(1));
    let (again, frame) = raw_submits(&r, sid).pop().unwrap();
    assert_ne!(again, rid);
    assert_eq!(frame.to_vec(), submit_frame_of(again, wire, &ipc));
    r.feed(sid, batch_completed(again));
    assert_eq!(
        outcomes(&drain(&mut r, p)),
        vec![(b, BatchOutcome::Completed)]
    );
}

#[test]
fn p_3_a_reused_batch_buffer_never_leaks_into_the_next_frame() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let stream = |r: &Rig, rows| {
        nervix_protocol::arrow::encode(&builder_batch(r, p, rows).finish().unwrap()).unwrap()
    };
    // A large batch, then smaller ones written into the same buffer: while the earlier frame
    // is still held, and after every earlier frame is gone.
    let mut held = Vec::new();
    for (rows, keep) in [(90, true), (5, false), (60, false), (1, false), (3, false)] {
        let ipc = stream(&r, rows);
        submit(&mut r, p, rows);
        let (rid, frame) = raw_submits(&r, sid).pop().unwrap();
        assert_eq!(
            frame.to_vec(),
            submit_frame_of(rid, wire, &ipc),
            "{rows} rows"
        );
        let events = {
            r.feed(sid, batch_completed(rid));
            drain(&mut r, p)
        };
        assert_eq!(outcomes(&events).len(), 1);
        if keep {
            held.push((frame.clone(), frame.to_vec()));
        }
        drop(frame);
        r.raw.clear();
        // A frame handed over earlier is never written again.
        for (f, bytes) in &held {
            assert_eq!(&f[..], &bytes[..]);
        }
    }
}

#[test]
fn p_3_the_typed_builder_builds_the_arrays_arrow_builds() {
    use arrow_array::{Array, BinaryArray, UInt32Array};
    use nervix_protocol::arrow::BatchBuilder;
    let f = |n: &str, s, nullable| FieldSpec::new(n, FieldType::Scalar(s), nullable, false);
    let specs: Arc<[FieldSpec]> = vec![
        f("s", Scalar::String, true),
        f("b", Scalar::Bytes, true),
        f("t", Scalar::String, false),
        f("u", Scalar::Bytes, false),
        f("n", Scalar::U32, true),
    ]
    .into();
    // Lengths below, at and around the short-copy bounds of 8 and 16 bytes.
    let words = [
        "",
        "a",
        "ünï",
        "exactly8",
        "nine char",
        "a short label",
        "sixteen bytes!!!",
        "seventeen bytes!!",
        "a longer value\0with a nul",
        "z",
    ];
    type Null = fn(usize) -> bool;
    let patterns: [Null; 4] = [|_| false, |_| true, |i| i % 3 == 0, |i| i % 8 == 7];
    for rows in [1, 7, 8, 9, 17, 64, 100] {
        for null in patterns {
            let text: Vec<&str> = (0..rows).map(|i| words[i % words.len()]).collect();
            let some = |i: usize| !null(i);
            let s: Vec<Option<&str>> = (0..rows).map(|i| some(i).then_some(text[i])).collect();
            let raw: Vec<&[u8]> = text.iter().map(|t| t.as_bytes()).collect();
            let b: Vec<Option<&[u8]>> = (0..rows).map(|i| some(i).then_some(raw[i])).collect();
            let n: Vec<Option<u32>> = (0..rows).map(|i| some(i).then_some(i as u32)).collect();
            let mut bb = BatchBuilder::new(specs.clone());
            bb.nullable_column("s", &s).unwrap();
            bb.nullable_column("b", &b).unwrap();
            bb.column("t", &text).unwrap();
            bb.column("u", &raw).unwrap();
            bb.nullable_column("n", &n).unwrap();
            let batch = bb.finish().unwrap();
            let expected: [ArrayRef; 5] = [
                Arc::new(StringArray::from(s.clone())),
                Arc::new(BinaryArray::from(b.clone())),
                Arc::new(StringArray::from(text.clone())),
                Arc::new(BinaryArray::from(raw.clone())),
                Arc::new(UInt32Array::from(n.clone())),
            ];
            for (i, e) in expected.iter().enumerate() {
                let got = batch.column(i);
                assert_eq!(got.to_data(), e.to_data(), "{rows} rows, column {i}");
                assert_eq!(got.null_count(), e.null_count());
                got.to_data().validate_full().unwrap();
            }
            // And it round-trips through the canonical stream.
            let ipc = nervix_protocol::arrow::encode(&batch).unwrap();
            let back = nervix_protocol::arrow::decode(&ipc, &specs, rows as u32).unwrap();
            assert_eq!(back, batch);
        }
    }
    // A null where the field forbids one is still refused.
    let mut bb = BatchBuilder::new(specs.clone());
    assert_eq!(
        bb.nullable_column("t", &[Some("x"), None]),
        Err(BatchError::Column {
            column: "t".into(),
            problem: ColumnProblem::Null
        })
    );
}

/// `ProducerOpened` for request `request_id` as [`producer_opened`] builds it from `g`, then
/// changed by `change`.
fn producer_opened_with(
    request_id: u64,
    g: &Grant,
    change: impl FnOnce(&mut ProducerOpenedT),
) -> bytes::Bytes {
    let frame = producer_opened(request_id, g, ProducerAdmission::Open);
    let mut m = nervix_protocol::frame::ServerFrame::check(frame)
        .unwrap()
        .unpack();
    let ServerBodyT::Reply(reply) = &mut m.body else {
        unreachable!()
    };
    let ReplyBodyT::OpenIngestorOutcome(o) = &mut reply.body else {
        unreachable!()
    };
    let OpenIngestorDispositionT::ProducerOpened(opened) = &mut o.disposition else {
        unreachable!()
    };
    change(opened);
    support::server(m.body)
}

fn admissions(events: &[ProducerEvent]) -> Vec<Admission> {
    events
        .iter()
        .filter_map(|e| match e {
            ProducerEvent::Admission(a) => Some(*a),
            _ => None,
        })
        .collect()
}

#[test]
fn p_6_unread_admission_changes_are_coalesced_to_the_newest() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    drain(&mut r, p);
    // A server flapping admission 20,000 times leaves one change to read, the newest.
    for i in 0..20_000u32 {
        let a = if i % 2 == 0 {
            ProducerAdmission::Suspended
        } else {
            ProducerAdmission::Open
        };
        r.feed(sid, admission_changed(wire, a));
    }
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    let ev = drain(&mut r, p);
    assert_eq!(ev, vec![ProducerEvent::Admission(Admission::Suspended)]);
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Suspended);
    // A change read is not taken back: the next one is queued anew.
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    assert_eq!(admissions(&drain(&mut r, p)), vec![Admission::Open]);
}

#[test]
fn p_6_the_newest_admission_change_is_read_last() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    drain(&mut r, p);
    let b = submit(&mut r, p, 1);
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    r.feed(sid, batch_completed(rid));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    // The superseded change goes; the newest comes after what arrived before it, so the
    // last change read agrees with the producer's state.
    assert_eq!(
        drain(&mut r, p),
        vec![
            ProducerEvent::Outcome {
                batch: b,
                outcome: BatchOutcome::Completed
            },
            ProducerEvent::Admission(Admission::Open),
        ]
    );
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Open);
}

#[test]
fn p_6_admission_changes_of_one_producer_leave_anothers_alone() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let q =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    r.pump();
    let (wire_q, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_opened(wire_q, &Grant::default(), ProducerAdmission::Open),
    );
    drain(&mut r, p);
    drain(&mut r, q);
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    r.feed(sid, admission_changed(wire_q, ProducerAdmission::Suspended));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    assert_eq!(admissions(&drain(&mut r, q)), vec![Admission::Suspended]);
    assert_eq!(admissions(&drain(&mut r, p)), vec![Admission::Open]);
}

#[test]
fn p_4_unread_outcomes_hold_the_credit_and_reading_one_frees_one() {
    let g = Grant {
        batches: 3,
        ..Grant::default()
    };
    let (mut r, sid, p, _) = opened(&g);
    drain(&mut r, p);
    let mine: Vec<BatchId> = (0..5).map(|_| submit(&mut r, p, 1)).collect();
    let sent = submits(&r, sid);
    assert_eq!(sent.len(), 3);
    // Three outcomes arrive and nobody reads them: they hold the whole grant.
    for (rid, _) in &sent {
        r.feed(sid, batch_completed(*rid));
    }
    r.advance(Duration::from_secs(5));
    assert_eq!(submits(&r, sid).len(), 3);
    let info = r.c.producer(p).unwrap();
    assert_eq!(info.credit_batches, 3);
    let held: u64 = sent.iter().map(|(_, b)| b.len() as u64).sum();
    assert_eq!(info.credit_bytes, held);
    // Reading one frees one, and exactly one more batch goes.
    assert_eq!(
        r.c.poll_producer_event(p),
        Some(ProducerEvent::Outcome {
            batch: mine[0],
            outcome: BatchOutcome::Completed
        })
    );
    let info = r.c.producer(p).unwrap();
    assert_eq!(info.credit_batches, 2);
    assert_eq!(info.credit_bytes, held - sent[0].1.len() as u64);
    assert!(r.c.poll_timeout().is_some_and(|t| t <= r.now));
    r.advance(Duration::ZERO);
    assert_eq!(submits(&r, sid).len(), 4);
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 3);
    // Read through the one producer's queue or the shared one alike.
    assert!(matches!(
        r.c.poll_producer_events(),
        Some((q, ProducerEvent::Outcome { batch, .. })) if q == p && batch == mine[1]
    ));
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 2);
    r.advance(Duration::ZERO);
    assert_eq!(submits(&r, sid).len(), 5);
}

#[test]
fn p_4_an_outcome_handed_on_holds_its_credit_until_released() {
    let g = Grant {
        batches: 2,
        ..Grant::default()
    };
    let (mut r, sid, p, _) = opened(&g);
    drain(&mut r, p);
    let mine: Vec<BatchId> = (0..3).map(|_| submit(&mut r, p, 1)).collect();
    let sent = submits(&r, sid);
    assert_eq!(sent.len(), 2);
    for (rid, _) in &sent {
        r.feed(sid, batch_completed(*rid));
    }
    // A driver takes both outcomes to hand them on: the credit stays held.
    for want in &mine[..2] {
        assert!(matches!(
            r.c.poll_producer_events_held(),
            Some((q, ProducerEvent::Outcome { batch, outcome: BatchOutcome::Completed }))
                if q == p && batch == *want
        ));
    }
    assert_eq!(r.c.poll_producer_events_held(), None);
    r.advance(Duration::from_secs(5));
    assert_eq!(submits(&r, sid).len(), 2, "no credit came back");
    let info = r.c.producer(p).unwrap();
    assert_eq!(info.credit_batches, 2);
    let held: u64 = sent.iter().map(|(_, b)| b.len() as u64).sum();
    assert_eq!(info.credit_bytes, held);
    // A batch whose outcome was not taken holds nothing to release.
    assert!(!r.c.release_outcome(p, mine[2]));
    // The second is read first: its credit, and its alone, comes back; once.
    assert!(r.c.release_outcome(p, mine[1]));
    assert!(!r.c.release_outcome(p, mine[1]));
    let info = r.c.producer(p).unwrap();
    assert_eq!(info.credit_batches, 1);
    assert_eq!(info.credit_bytes, held - sent[1].1.len() as u64);
    assert!(r.c.poll_timeout().is_some_and(|t| t <= r.now));
    r.advance(Duration::ZERO);
    assert_eq!(submits(&r, sid).len(), 3, "the waiting batch went");
    assert!(r.c.release_outcome(p, mine[0]));
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 1);
}

#[test]
fn p_4_outcomes_unknown_after_a_loss_hold_credit_until_read() {
    let (mut r, sid, p, _) = opened(&Grant::default()); // 2 batches
    drain(&mut r, p);
    submit(&mut r, p, 1);
    submit(&mut r, p, 1);
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid2,
        producer_opened(wire2, &Grant::default(), ProducerAdmission::Open),
    );
    let c = submit(&mut r, p, 1);
    // The two unknown outcomes are unread: the new batch waits.
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 2);
    assert!(submits(&r, sid2).is_empty());
    assert_eq!(r.c.batch_state(p, c), Some(BatchState::AwaitingCredit));
    let ev = drain(&mut r, p);
    assert_eq!(
        outcomes(&ev)
            .iter()
            .filter(|(_, o)| *o == BatchOutcome::Unknown)
            .count(),
        2
    );
    r.advance(Duration::ZERO);
    assert_eq!(submits(&r, sid2).len(), 1);
}

#[test]
fn p_4_a_batch_of_exactly_the_remaining_bytes_is_sent_and_one_byte_more_waits() {
    let (mut r, sid, p, _) = opened(&Grant {
        batches: 8,
        ..Grant::default()
    });
    submit(&mut r, p, 1);
    let one = submits(&r, sid)[0].1.len() as u64;
    for (bytes, fits) in [(2 * one, 2), (2 * one - 1, 1)] {
        let g = Grant {
            batches: 8,
            bytes,
            max_batch_bytes: one,
            ..Grant::default()
        };
        let (mut r, sid, p, _) = opened(&g);
        let first = submit(&mut r, p, 1);
        let second = submit(&mut r, p, 1);
        assert_eq!(submits(&r, sid).len(), fits, "granted {bytes} bytes");
        assert_eq!(r.c.batch_state(p, first), Some(BatchState::Sent));
        let expected = if fits == 2 {
            BatchState::Sent
        } else {
            BatchState::AwaitingCredit
        };
        assert_eq!(r.c.batch_state(p, second), Some(expected));
        assert_eq!(r.c.producer(p).unwrap().credit_bytes, fits as u64 * one);
    }
}

#[test]
fn p_4_waiting_batches_of_exactly_one_grant_are_taken_and_one_more_is_full() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    submit(&mut r, p, 1);
    let one = submits(&r, sid)[0].1.len() as u64;
    let g = Grant {
        batches: 3,
        bytes: 2 * one,
        max_batch_bytes: one,
        ..Grant::default()
    };
    // Suspended: nothing goes, so every batch waits. Two fill the granted bytes exactly.
    let (mut r, sid, p, wire) = opened(&g);
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    submit(&mut r, p, 1);
    submit(&mut r, p, 1);
    let b = builder_batch(&r, p, 1);
    assert_eq!(r.c.submit_built(r.now, p, b), Err(SubmitError::Full));
    // Three fill the granted batches exactly when bytes are plenty.
    let g = Grant {
        batches: 3,
        ..Grant::default()
    };
    let (mut r, sid, p, wire) = opened(&g);
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    for _ in 0..3 {
        submit(&mut r, p, 1);
    }
    let b = builder_batch(&r, p, 1);
    assert_eq!(r.c.submit_built(r.now, p, b), Err(SubmitError::Full));
    assert!(submits(&r, sid).is_empty());
}

#[test]
fn p_3_a_batch_of_exactly_max_batch_bytes_is_taken_and_one_byte_more_is_refused() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    submit(&mut r, p, 1);
    let one = submits(&r, sid)[0].1.len() as u64;
    let (mut r, _, p, _) = opened(&Grant {
        max_batch_bytes: one,
        ..Grant::default()
    });
    let b = builder_batch(&r, p, 1);
    assert!(r.c.submit_built(r.now, p, b).is_ok());
    let (r, _, p, _) = opened(&Grant {
        max_batch_bytes: one - 1,
        ..Grant::default()
    });
    let mut r = r;
    let b = builder_batch(&r, p, 1);
    assert!(matches!(
        r.c.submit_built(r.now, p, b),
        Err(SubmitError::Batch(BatchError::TooLarge { .. }))
    ));
}

/// Opens a producer, loses its session, and answers the fresh open with `change` applied to
/// the original description; returns the events after the loss.
fn restored_with(
    change: impl FnOnce(&mut ProducerOpenedT),
) -> (Rig, ProducerId, Vec<ProducerEvent>, u64) {
    let (mut r, sid, p, _) = opened(&Grant::default());
    drain(&mut r, p);
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(sid2, producer_opened_with(wire2, &Grant::default(), change));
    let ev = drain(&mut r, p);
    (r, p, ev, wire2)
}

fn assert_producer_reopen_required(change: impl FnOnce(&mut ProducerOpenedT), what: &str) {
    let (r, p, ev, wire2) = restored_with(change);
    assert!(
        matches!(
            ev.last(),
            Some(ProducerEvent::ReopenRequired(ReopenReason::Changed(_)))
        ),
        "{what}: {ev:?}"
    );
    assert_eq!(
        r.c.producer(p).unwrap().state,
        ProducerState::ReopenRequired,
        "{what}"
    );
    let (_, close) = last_of(&r, ClientRequest::CloseIngestorRequest);
    assert!(
        matches!(close, ClientRequestT::CloseIngestorRequest(c) if c.producer == wire2),
        "{what}"
    );
}

#[test]
fn p_8_an_attachment_differing_only_in_its_own_identity_and_admission_is_restored() {
    let (r, p, ev, _) = restored_with(|o| {
        o.attachment = vec![0xEE; 16];
        o.admission = Some(ProducerAdmission::Suspended);
    });
    assert!(
        matches!(ev.last(), Some(ProducerEvent::Restored(_))),
        "{ev:?}"
    );
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Suspended);
}

#[test]
fn p_8_a_changed_generation_requires_a_reopen() {
    assert_producer_reopen_required(|o| o.generation += 1, "generation");
}

#[test]
fn p_8_a_changed_contract_requires_a_reopen() {
    assert_producer_reopen_required(|o| o.contract.bytes[31] ^= 1, "contract");
}

#[test]
fn p_8_changed_fields_require_a_reopen() {
    assert_producer_reopen_required(|o| o.fields[1].nullable = false, "nullability");
    assert_producer_reopen_required(|o| o.fields[2].sensitive = false, "sensitivity");
    assert_producer_reopen_required(|o| o.fields[0].name = "other".into(), "name");
    assert_producer_reopen_required(
        |o| {
            o.fields.pop();
        },
        "a field fewer",
    );
}

#[test]
fn p_8_a_changed_window_requires_a_reopen() {
    assert_producer_reopen_required(
        |o| {
            o.window = ProducerWindowT::ParallelProducerWindow(Box::new(ParallelProducerWindowT {
                max: 4,
            }))
        },
        "window",
    );
}

#[test]
fn p_8_a_changed_ack_timeout_requires_a_reopen() {
    assert_producer_reopen_required(|o| o.ack_timeout_nanos += 1, "ack timeout");
}

#[test]
fn p_8_a_changed_retry_backoff_requires_a_reopen() {
    assert_producer_reopen_required(|o| o.retry_backoff_nanos += 1, "retry backoff");
}

#[test]
fn p_8_a_changed_retry_max_backoff_requires_a_reopen() {
    assert_producer_reopen_required(|o| o.retry_max_backoff_nanos += 1, "retry max backoff");
}

#[test]
fn p_8_a_changed_granted_batches_requires_a_reopen() {
    assert_producer_reopen_required(|o| o.granted_batches += 1, "granted batches");
}

#[test]
fn p_8_changed_granted_bytes_require_a_reopen() {
    assert_producer_reopen_required(|o| o.granted_bytes += 1, "granted bytes");
}

#[test]
fn p_8_a_changed_max_batch_bytes_requires_a_reopen() {
    assert_producer_reopen_required(|o| o.max_batch_bytes -= 1, "max batch bytes");
}

#[test]
fn p_8_changed_max_batch_rows_require_a_reopen() {
    assert_producer_reopen_required(|o| o.max_batch_rows += 1, "max batch rows");
}

fn violation(r: &Rig) -> Option<&'static str> {
    r.events.iter().find_map(|e| match e {
        ClientEvent::SessionLost {
            loss: SessionLoss::Violation(v),
            ..
        } => Some(v.rule()),
        _ => None,
    })
}

#[test]
fn p_1_an_open_reply_naming_another_domain_or_ingestor_is_a_violation() {
    for (domain, ingestor) in [("d2", "orders_in"), ("d1", "orders_out")] {
        let mut r = Rig::new();
        let p =
            r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
                .unwrap();
        let sid = r.open();
        let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
        r.feed(
            sid,
            producer_opened_with(wire, &Grant::default(), |o| {
                o.domain = domain.into();
                o.ingestor = ingestor.into();
            }),
        );
        assert_eq!(violation(&r), Some("P-1"), "{domain} {ingestor}");
        // The session holding the attachment is closed, and nothing was taken.
        assert!(r.closes.iter().any(|(s, _)| *s == sid));
        let ev = drain(&mut r, p);
        assert!(
            !ev.iter()
                .any(|e| matches!(e, ProducerEvent::Opened(_) | ProducerEvent::Restored(_))),
            "{ev:?}"
        );
        assert!(r.c.batch_builder(p).is_err());
    }
}

/// A restoration refused because the session holds a transaction cannot succeed by waiting
/// (the transaction is the application's own, and the refusal is neither capacity nor owner,
/// P-8): the producer requires a reopen, and a batch that waited for the restoration ends as
/// never sent instead of waiting without a bound (T-8). Found by the transport soak (seed
/// 9100049 over WebSocket): batches submitted behind such a refusal never ended.
#[test]
fn p_8_a_restoration_refused_in_transaction_requires_a_reopen_and_ends_waiting_batches_unsent() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    let schema = nervix_protocol::arrow::arrow_schema(&fields());
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from(vec![1u64])),
        Arc::new(StringArray::from(vec![Some("a")])),
        Arc::new(StringArray::from(vec!["x"])),
    ];
    let batch = RecordBatch::try_new(schema, cols).unwrap();
    let b = r.c.submit(r.now, p, &batch).unwrap();
    r.pump();
    r.feed(
        sid2,
        producer_refused(wire2, ProducerRefusal::InTransaction),
    );
    let ev = drain(&mut r, p);
    assert!(
        ev.iter().any(|e| matches!(
            e,
            ProducerEvent::Outcome { batch, outcome: BatchOutcome::NotSent } if *batch == b
        )),
        "{ev:?}"
    );
    assert!(matches!(
        ev.last(),
        Some(ProducerEvent::ReopenRequired(ReopenReason::Refused {
            refusal: Some(ProducerRefusal::InTransaction),
            ..
        }))
    ));
    assert_eq!(
        r.c.producer(p).unwrap().state,
        ProducerState::ReopenRequired
    );
    // Nothing is tried again on its own.
    let opens = requests(&r, sid2)
        .iter()
        .filter(|k| **k == ClientRequest::OpenIngestorRequest)
        .count();
    r.advance(Duration::from_secs(30));
    assert_eq!(
        requests(&r, sid2)
            .iter()
            .filter(|k| **k == ClientRequest::OpenIngestorRequest)
            .count(),
        opens
    );
}

#[test]
fn p_3_a_batch_submitted_encoded_goes_as_the_same_bytes_under_the_same_bounds() {
    let g = Grant {
        max_batch_rows: 4,
        max_batch_bytes: 2000,
        ..Grant::default()
    };
    let (mut r, sid, p, _) = opened(&g);
    let batch = builder_batch(&r, p, 3).finish().unwrap();
    let ipc = nervix_protocol::arrow::encode(&batch).unwrap();
    r.c.submit(r.now, p, &batch).unwrap();
    r.pump();
    r.c.submit_encoded(r.now, p, 3, &ipc).unwrap();
    r.pump();
    let sent = submits(&r, sid);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].1, ipc, "submit encodes exactly what encode gives");
    assert_eq!(sent[1].1, ipc, "submit_encoded sends the bytes as they are");
    // The row bound holds, inclusive.
    let four = nervix_protocol::arrow::encode(&builder_batch(&r, p, 4).finish().unwrap()).unwrap();
    assert!(r.c.submit_encoded(r.now, p, 4, &four).is_ok());
    let five = nervix_protocol::arrow::encode(&builder_batch(&r, p, 5).finish().unwrap()).unwrap();
    assert_eq!(
        r.c.submit_encoded(r.now, p, 5, &five),
        Err(SubmitError::Batch(BatchError::TooManyRows {
            rows: 5,
            max: 4
        }))
    );
    // And the byte bound.
    assert!(matches!(
        r.c.submit_encoded(r.now, p, 1, &[0u8; 2001]),
        Err(SubmitError::Batch(BatchError::TooLarge { max: 2000, .. }))
    ));
}

#[test]
fn p_3_a_laid_batch_is_checked_like_a_submission_and_becomes_its_frame_without_a_copy() {
    let g = Grant {
        max_batch_rows: 4,
        ..Grant::default()
    };
    let (mut r, sid, p, _) = opened(&g);
    let batch = builder_batch(&r, p, 3).finish().unwrap();
    let ipc = nervix_protocol::arrow::encode(&batch).unwrap();
    let laid = r.c.lay_batch(p, &batch).unwrap();
    assert_eq!(
        (&laid.stream()[..], laid.rows(), laid.stream_len()),
        (&ipc[..], 3, ipc.len())
    );
    let at = laid.stream().as_ptr();
    assert_eq!(
        r.c.batch_stream(p, BatchId(1)),
        None,
        "nothing submitted yet"
    );
    let a = r.c.submit_laid(r.now, p, laid).unwrap();
    r.pump();
    // Nothing else held its bytes: the frame was finished around them where they were laid.
    let framed = r.c.batch_stream(p, a).expect("framed");
    assert_eq!(framed.as_ptr(), at, "the laid buffer is the frame");
    assert_eq!(&framed[..], &ipc[..]);
    // A laid batch whose stream is held elsewhere is copied: the same bytes, another buffer.
    let laid = r.c.lay_batch(p, &batch).unwrap();
    let kept = laid.stream();
    let b = r.c.submit_laid(r.now, p, laid).unwrap();
    r.pump();
    let framed = r.c.batch_stream(p, b).expect("framed");
    assert_ne!(framed.as_ptr(), kept.as_ptr());
    assert_eq!((&framed[..], &kept[..]), (&ipc[..], &ipc[..]));
    let sent = submits(&r, sid);
    assert_eq!(sent.len(), 2);
    assert!(
        sent.iter().all(|(_, s)| s[..] == ipc[..]),
        "sent as encoded"
    );
    // Once its outcome is in, the engine keeps no stream.
    r.feed(sid, batch_completed(sent[0].0));
    assert_eq!(r.c.batch_stream(p, a), None);
    // The row bound, inclusive, when laid.
    assert!(r
        .c
        .lay_batch(p, &builder_batch(&r, p, 4).finish().unwrap())
        .is_ok());
    assert_eq!(
        r.c.lay_batch(p, &builder_batch(&r, p, 5).finish().unwrap())
            .unwrap_err(),
        SubmitError::Batch(BatchError::TooManyRows { rows: 5, max: 4 })
    );
}

#[test]
fn p_3_a_laid_batch_is_held_to_the_byte_bound_inclusive() {
    let (r, _, p, _) = opened(&Grant::default());
    let batch = builder_batch(&r, p, 3).finish().unwrap();
    let len = nervix_protocol::arrow::encode(&batch).unwrap().len() as u64;
    for (max, fits) in [(len, true), (len - 1, false)] {
        let g = Grant {
            max_batch_bytes: max,
            ..Grant::default()
        };
        let (mut r, _, p, _) = opened(&g);
        let got = r.c.lay_batch(p, &batch);
        assert_eq!(got.is_ok(), fits, "{max}: {got:?}");
        if !fits {
            assert!(matches!(
                got,
                Err(SubmitError::Batch(BatchError::TooLarge { bytes, max: m })) if bytes as u64 == len && m == max
            ));
        }
    }
}

#[test]
fn p_4_a_laid_batch_refused_comes_back_whole_and_goes_later() {
    let (mut r, sid, p, _) = opened(&Grant::default()); // 2 batches of credit
    let batch = builder_batch(&r, p, 2).finish().unwrap();
    let ipc = nervix_protocol::arrow::encode(&batch).unwrap();
    for _ in 0..4 {
        let laid = r.c.lay_batch(p, &batch).unwrap();
        r.c.submit_laid(r.now, p, laid).unwrap();
        r.pump();
    }
    // Two out, two waiting for credit: a fifth does not fit, and comes back.
    let laid = r.c.lay_batch(p, &batch).unwrap();
    let at = laid.stream().as_ptr();
    let refused = r.c.submit_laid(r.now, p, laid).unwrap_err();
    assert_eq!(refused.error, SubmitError::Full);
    assert_eq!(refused.batch.stream().as_ptr(), at, "the same batch");
    assert_eq!(refused.batch.rows(), 2);
    // A batch waiting for credit gives a copy of its stream: its buffer is its frame's to be.
    assert_eq!(
        r.c.batch_state(p, BatchId(3)),
        Some(BatchState::AwaitingCredit)
    );
    let waiting = r.c.batch_stream(p, BatchId(3)).expect("held");
    assert_eq!(&waiting[..], &ipc[..]);
    assert_ne!(
        r.c.batch_stream(p, BatchId(3)).unwrap().as_ptr(),
        waiting.as_ptr(),
        "a copy each time"
    );
    assert_eq!(r.c.batch_stream(ProducerId(999), BatchId(3)), None);
    assert_eq!(r.c.batch_stream(p, BatchId(99)), None);
    // Room comes with an outcome read; the refused batch then goes, as laid.
    let sent = submits(&r, sid);
    r.feed(sid, batch_completed(sent[0].0));
    drain(&mut r, p);
    r.advance(Duration::ZERO);
    let e = r.c.submit_laid(r.now, p, refused.batch).unwrap();
    r.pump();
    assert!(r.c.batch_state(p, e).is_some());
    // An unknown producer refuses it too, and gives it back.
    let laid = r.c.lay_batch(p, &batch).unwrap();
    let back = r.c.submit_laid(r.now, ProducerId(999), laid).unwrap_err();
    assert_eq!(back.error, SubmitError::UnknownProducer);
    assert_eq!(&back.batch.stream()[..], &ipc[..]);
}

#[test]
fn p_3_a_batch_laid_for_other_fields_is_refused_naming_the_column_and_comes_back() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    // A second producer, of other fields.
    let other = vec![FieldSpec::new(
        "other",
        FieldType::Scalar(Scalar::U64),
        false,
        false,
    )];
    let q =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "other_in", other.clone()))
            .unwrap();
    r.pump();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_opened_as(
            wire,
            &Grant::default(),
            ProducerAdmission::Open,
            "other_in",
            &other,
        ),
    );
    assert!(r.c.producer(q).unwrap().description.is_some(), "opened");
    let batch = builder_batch(&r, p, 2).finish().unwrap();
    let laid = r.c.lay_batch(p, &batch).unwrap();
    let refused = r.c.submit_laid(r.now, q, laid).unwrap_err();
    assert!(
        matches!(&refused.error, SubmitError::Batch(BatchError::Column { column, .. }) if column == "other"),
        "{:?}",
        refused.error
    );
    assert_eq!(
        &refused.batch.stream()[..],
        &nervix_protocol::arrow::encode(&batch).unwrap()[..]
    );
    assert!(submits(&r, sid).is_empty(), "nothing sent");
    // The producer it was laid for takes it.
    assert!(r.c.submit_laid(r.now, p, refused.batch).is_ok());
    // Its Debug shows no bytes.
    let laid = r.c.lay_batch(p, &batch).unwrap();
    let shown = format!("{laid:?}");
    assert!(
        shown.contains("rows: 2") && !shown.contains("s3cr3t"),
        "{shown}"
    );
}

#[test]
fn p_3_a_laid_batch_is_held_to_the_row_bound_of_the_producer_it_is_submitted_to() {
    let (mut r, sid, p, _) = opened(&Grant {
        max_batch_rows: 5,
        ..Grant::default()
    });
    // A second producer of the same fields whose grant takes at most 3 rows.
    let q =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    r.pump();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    let small = Grant {
        max_batch_rows: 3,
        ..Grant::default()
    };
    r.feed(sid, producer_opened(wire, &small, ProducerAdmission::Open));
    let four =
        r.c.lay_batch(p, &builder_batch(&r, p, 4).finish().unwrap())
            .unwrap();
    let refused = r.c.submit_laid(r.now, q, four).unwrap_err();
    assert_eq!(
        refused.error,
        SubmitError::Batch(BatchError::TooManyRows { rows: 4, max: 3 })
    );
    assert_eq!(refused.batch.rows(), 4, "given back");
    // Exactly at the bound it is taken.
    let three =
        r.c.lay_batch(p, &builder_batch(&r, p, 3).finish().unwrap())
            .unwrap();
    assert!(r.c.submit_laid(r.now, q, three).is_ok());
}

#[test]
fn p_6_a_producer_opened_suspended_sends_nothing_until_its_admission_opens() {
    let mut r = Rig::new();
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_opened(wire, &Grant::default(), ProducerAdmission::Suspended),
    );
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Suspended);
    let b = submit(&mut r, p, 1);
    r.advance(Duration::from_secs(5));
    assert!(submits(&r, sid).is_empty(), "suspended from its open on");
    // Coalesced changes: a repeated Suspended is no toggle, and only the newest counts.
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    r.advance(Duration::from_secs(5));
    assert!(submits(&r, sid).is_empty());
    assert_eq!(r.c.batch_state(p, b), Some(BatchState::AwaitingCredit));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    assert_eq!(submits(&r, sid).len(), 1);
    // A repeated Open is no toggle either: the next batch goes at once.
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    submit(&mut r, p, 1);
    assert_eq!(submits(&r, sid).len(), 2);
}

#[test]
fn p_6_a_batch_out_across_a_suspension_keeps_its_credit_and_is_never_sent_again() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    let a = submit(&mut r, p, 1);
    assert_eq!(submits(&r, sid).len(), 1);
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    r.advance(Duration::from_secs(30));
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 1);
    // The alteration failed and admission opens again: the batch out is neither replayed
    // nor put on a replacement producer.
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    r.advance(Duration::from_secs(30));
    assert_eq!(submits(&r, sid).len(), 1, "no replay");
    assert_eq!(
        requests(&r, sid)
            .iter()
            .filter(|q| **q == ClientRequest::OpenIngestorRequest)
            .count(),
        1,
        "no replacement producer"
    );
    let info = r.c.producer(p).unwrap();
    assert_eq!((info.state, info.credit_batches), (ProducerState::Open, 1));
    assert_eq!(r.c.batch_state(p, a), Some(BatchState::Sent));
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, batch_completed(rid));
    assert_eq!(
        outcomes(&drain(&mut r, p)),
        vec![(a, BatchOutcome::Completed)]
    );
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 0);
}

#[test]
fn p_5_a_batch_to_go_again_waits_for_admission_past_its_backoff() {
    let (mut r, sid, p, wire) = opened(&Grant::default()); // back-off 100 ms
    let b = submit(&mut r, p, 1);
    let (rid, _) = submits(&r, sid)[0];
    r.feed(sid, not_admitted(rid, SubmissionRefusal::Suspended));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    r.advance(Duration::from_secs(10));
    assert_eq!(
        submits(&r, sid).len(),
        1,
        "not while admission is suspended"
    );
    assert_ne!(r.c.batch_state(p, b), Some(BatchState::Sent));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    assert_eq!(submits(&r, sid).len(), 2, "its back-off ran out long ago");
    // Open again before its back-off ends: not a moment early.
    let (rid, _) = submits(&r, sid)[1];
    r.feed(sid, not_admitted(rid, SubmissionRefusal::Busy));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    r.feed(sid, admission_changed(wire, ProducerAdmission::Open));
    assert_eq!(submits(&r, sid).len(), 2);
    r.advance(Duration::from_millis(199));
    assert_eq!(submits(&r, sid).len(), 2);
    r.advance(Duration::from_millis(1));
    assert_eq!(submits(&r, sid).len(), 3);
}

/// The completed CommandOutcome of command `id` (`cmd`), binding transaction `tx` when given.
fn command_completed(id: u64, cmd: &CommandRequestT, tx: Option<&str>) -> bytes::Bytes {
    let o = CommandOutcomeT {
        execution_reference: cmd.execution_reference.clone(),
        origin: Some(OutcomeOrigin::Executed),
        disposition: support::completed(),
        message: String::new(),
        transaction: tx.map(|t| {
            Box::new(TransactionStatusT {
                transaction_id: t.into(),
                domain: "d1".into(),
                state: TransactionStateT::TransactionOpen(Box::default()),
                accepted_operations: 0,
                applied_operations: 0,
            })
        }),
        ..Default::default()
    };
    support::reply(id, ReplyBodyT::CommandOutcome(Box::new(o)))
}

#[test]
fn p_1_a_restoration_due_while_a_transaction_is_held_waits_for_its_end() {
    let (mut r, sid, p, _) = opened(&Grant::default());
    r.c.select_domain(Some("d1")).unwrap();
    drain(&mut r, p);
    let s2 = lose(&mut r, sid);
    let opens = |r: &Rig| {
        requests(r, s2)
            .iter()
            .filter(|q| **q == ClientRequest::OpenIngestorRequest)
            .count()
    };
    assert_eq!(
        opens(&r),
        1,
        "the restoration went first on the new session"
    );
    // Refused for now: it goes again after a back-off...
    let (w, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        s2,
        producer_refused(w, ProducerRefusal::EndpointUnavailable),
    );
    // ...which ends while the application holds a transaction on the session.
    r.exec("BEGIN;");
    let (id, cmd) = r.last_command();
    r.feed(s2, command_completed(id, &cmd, Some("tx-1")));
    assert!(r.c.binding().is_holding());
    r.advance(Duration::from_secs(60));
    assert_eq!(opens(&r), 1, "no open while the transaction is held");
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Interrupted);
    // Once it ends, the restoration goes.
    r.exec("COMMIT;");
    let (id, cmd) = r.last_command();
    r.feed(s2, command_completed(id, &cmd, None));
    assert!(!r.c.binding().is_holding());
    r.advance(Duration::ZERO);
    assert_eq!(opens(&r), 2);
}

#[test]
fn p_2_a_producer_is_known_by_its_opens_identity_alone_and_only_while_followed() {
    let (mut r, sid, p, wire) = opened(&Grant::default());
    drain(&mut r, p);
    submit(&mut r, p, 1);
    let (rid, _) = submits(&r, sid)[0];
    assert_ne!(rid, wire);
    // A frame naming the identity of the producer's batch, not of its open: not about it.
    r.feed(sid, admission_changed(rid, ProducerAdmission::Suspended));
    assert_eq!(r.c.ignored_producer_frames(), 1);
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Open);
    r.feed(sid, batch_completed(rid));
    // Closed: followed no more, so a later frame naming its open's identity is ignored too.
    r.c.close_producer(r.now, p).unwrap();
    r.pump();
    let (cid, _) = last_of(&r, ClientRequest::CloseIngestorRequest);
    assert_ne!(cid, wire);
    r.feed(sid, admission_changed(cid, ProducerAdmission::Suspended));
    assert_eq!(r.c.ignored_producer_frames(), 2);
    r.feed(sid, ingestor_closed(cid));
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Closed);
    drain(&mut r, p);
    r.feed(sid, admission_changed(wire, ProducerAdmission::Suspended));
    r.feed(sid, producer_ended(wire, ProducerEndReason::OwnerLost));
    assert_eq!(r.c.ignored_producer_frames(), 4);
    assert!(drain(&mut r, p).is_empty());
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Closed);
}

#[test]
fn p_8_sessions_lost_again_and_again_leave_few_unread_producer_events_and_count_the_folded() {
    let (mut r, mut sid, p, _) = opened(&Grant::default());
    let rounds = 300u64;
    for _ in 0..rounds {
        let next = lose(&mut r, sid);
        let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
        // Each restoration is refused once before it opens.
        r.feed(next, support::rejected(wire, RequestRejection::ServerBusy));
        r.advance(Duration::from_secs(10));
        let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
        r.feed(
            next,
            producer_opened(wire, &Grant::default(), ProducerAdmission::Open),
        );
        assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Open);
        sid = next;
    }
    let ev = drain(&mut r, p);
    // The first interruption, then what became of the producer after it.
    assert!(
        matches!(
            ev.as_slice(),
            [
                ProducerEvent::Opened(_),
                ProducerEvent::Interrupted,
                ProducerEvent::RestoreRefused { .. },
                ProducerEvent::Restored(_)
            ]
        ),
        "{ev:?}"
    );
    // Three lifecycle events each round, three read: every other one counted folded.
    assert_eq!(r.c.stats().lifecycle_events_folded, 3 * rounds - 3);
    // Read, the next loss is told afresh.
    let next = lose(&mut r, sid);
    assert_eq!(drain(&mut r, p), vec![ProducerEvent::Interrupted]);
    let _ = next;
    assert_eq!(r.c.stats().lifecycle_events_folded, 3 * rounds - 3);
}

#[test]
fn p_8_folding_never_touches_an_outcome() {
    let grant = Grant {
        batches: 32,
        ..Grant::default()
    };
    let (mut r, mut sid, p, _) = opened(&grant);
    let mut sent = Vec::new();
    for _ in 0..20 {
        sent.push(submit(&mut r, p, 1));
        let next = lose(&mut r, sid);
        let (wire, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
        r.feed(next, producer_opened(wire, &grant, ProducerAdmission::Open));
        sid = next;
    }
    let ev = drain(&mut r, p);
    let got: Vec<BatchId> = outcomes(&ev).into_iter().map(|(b, _)| b).collect();
    assert_eq!(got, sent, "every batch's outcome, in order: {ev:?}");
    assert!(outcomes(&ev)
        .iter()
        .all(|(_, o)| *o == BatchOutcome::Unknown));
    // The interruption is read before any outcome it made unknown.
    let first_outcome = ev
        .iter()
        .position(|e| matches!(e, ProducerEvent::Outcome { .. }))
        .unwrap();
    let first_interruption = ev
        .iter()
        .position(|e| *e == ProducerEvent::Interrupted)
        .unwrap();
    assert!(first_interruption < first_outcome, "{ev:?}");
}
