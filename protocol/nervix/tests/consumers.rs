//! Emitter consumers through the client, against a scripted server (EC-1 to EC-6), and the
//! D-5 restoration order with producers and consumers.

mod support;

use nervix_protocol::arrow::BatchBuilder;
use nervix_protocol::client::*;
use nervix_protocol::schema::*;
use std::time::Duration;
use support::dataplane::*;
use support::rig::*;
use support::streams::paced;

fn drain(r: &mut Rig, c: ConsumerId) -> Vec<ConsumerEvent> {
    std::iter::from_fn(|| r.c.poll_consumer_event(c)).collect()
}

fn lose(r: &mut Rig, sid: SessionId) -> SessionId {
    r.c.handle_closed(r.now, sid);
    r.pump();
    let at = r.c.poll_timeout().expect("a reconnect is due");
    r.now = at;
    r.c.handle_timeout(at);
    r.open()
}

fn opened(g: &Grant) -> (Rig, SessionId, ConsumerId, u64) {
    let mut r = Rig::new();
    let c =
        r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid, emitter_opened(wire, g));
    (r, sid, c, wire)
}

fn ipc(rows: usize, secret: &str) -> Vec<u8> {
    let mut b = BatchBuilder::new(fields().into());
    let ids: Vec<u64> = (0..rows as u64).collect();
    b.column("id", &ids).unwrap();
    b.nullable_column::<&str>("name", &vec![None; rows])
        .unwrap();
    b.column("secret", &vec![secret; rows]).unwrap();
    nervix_protocol::arrow::encode(&b.finish().unwrap()).unwrap()
}

/// Asks for a delivery and answers the read with `identity`/`reference`; returns it.
fn deliver(r: &mut Rig, sid: SessionId, c: ConsumerId, identity: u8, reference: u8) -> Delivery {
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(
        sid,
        delivered(rid, identity, reference, ipc(2, "hunter22"), 2),
    );
    drain(r, c)
        .into_iter()
        .find_map(|e| match e {
            ConsumerEvent::Delivery(d) => Some(*d),
            _ => None,
        })
        .expect("a delivery")
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
fn ec_1_open_names_exact_ordered_fields_and_nonzero_limits() {
    let mut r = Rig::new();
    r.c.open_consumer(
        r.now,
        ConsumerSpec::new("d1", "alerts", fields()).with_limits(4, 1 << 20),
    )
    .unwrap();
    r.open();
    let (_, req) = last_of(&r, ClientRequest::OpenEmitterRequest);
    let ClientRequestT::OpenEmitterRequest(o) = req else {
        unreachable!()
    };
    assert_eq!(o.emitter, "alerts");
    let names: Vec<&str> = o.expected_fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "secret"]);
    assert!(o.expected_fields[2].sensitive && o.expected_fields[1].nullable);
    assert_eq!(
        (o.max_outstanding_batches, o.max_outstanding_bytes),
        (4, 1 << 20)
    );
    for (b, y) in [(0, 1), (1, 0), (1025, 1)] {
        let spec = ConsumerSpec::new("d1", "alerts", fields()).with_limits(b, y);
        assert_eq!(
            r.c.open_consumer(r.now, spec),
            Err(ClientError::InvalidCredit)
        );
    }
}

#[test]
fn ec_1_an_open_in_a_transaction_is_refused_and_credit_must_hold_one_batch() {
    let mut r = holding_transaction();
    assert_eq!(
        r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields())),
        Err(ClientError::InTransaction)
    );
    // Granted bytes that cannot hold the largest delivery make the consumer unusable.
    let g = Grant {
        bytes: 1000,
        max_batch_bytes: 2000,
        ..Grant::default()
    };
    let (mut r, _sid, c, wire) = opened(&g);
    let ev = drain(&mut r, c);
    assert!(matches!(
        ev.last(),
        Some(ConsumerEvent::ReopenRequired(
            ConsumerReopenReason::CreditTooSmall(_)
        ))
    ));
    let (_, close) = last_of(&r, ClientRequest::CloseEmitterRequest);
    assert!(matches!(close, ClientRequestT::CloseEmitterRequest(x) if x.consumer == wire));
}

#[test]
fn ec_1_refused_opens_are_reported() {
    let mut r = Rig::new();
    let c =
        r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(
        sid,
        emitter_refused(wire, EmitterOpenRefusal::NotClientEmitter),
    );
    assert_eq!(
        drain(&mut r, c),
        vec![ConsumerEvent::Refused {
            refusal: Some(EmitterOpenRefusal::NotClientEmitter),
            message: "refused".into()
        }]
    );
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Refused);
}

#[test]
fn ec_2_a_pending_read_blocks_no_other_reply() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (read, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    // A command goes and is answered while the read waits.
    let h = r.c.read(r.now, support::list_domains(), None).unwrap();
    r.pump();
    let (lid, _) = last_of(&r, ClientRequest::ListDomainsRequest);
    assert!(lid > read);
    r.feed(sid, support::domains(lid));
    assert!(read_result(&r, h).is_some());
    assert!(r.c.consumer(c).unwrap().reading);
    // The read has no deadline of its own.
    r.advance(Duration::from_secs(600));
    assert!(r.c.consumer(c).unwrap().reading);
}

#[test]
fn ec_2_a_read_whose_caller_left_is_handed_to_the_next_read() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    // The first caller stops waiting; the next asks again: no second read goes.
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let reads = requests(&r, sid)
        .into_iter()
        .filter(|k| *k == ClientRequest::ReadEmitterBatchRequest)
        .count();
    assert_eq!(reads, 1);
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, delivered(rid, 1, 2, ipc(2, "zz"), 2));
    let ev = drain(&mut r, c);
    assert_eq!(ev.len(), 1);
    assert!(matches!(&ev[0], ConsumerEvent::Delivery(d) if d.reference.reference == [2; 16]));
}

#[test]
fn ec_3_a_delivery_is_decoded_and_checked_against_the_fields() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    assert_eq!(d.batch.num_rows(), 2);
    assert_eq!(
        d.batch.num_columns(),
        3,
        "relay and fingerprint are not fields"
    );
    assert_eq!(d.source_relay, "alerts_relay");
    assert_eq!(d.branch_fingerprint, Some([9; 32]));
    assert_eq!((d.identity, d.members), ([1; 16], 2));
}

#[test]
fn ec_3_members_or_schema_that_do_not_match_are_violations() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, delivered(rid, 1, 2, ipc(2, "x"), 3));
    assert_eq!(violation(&r), Some("EC-3"));

    let (mut r, sid, c, _) = opened(&Grant::default());
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    let mut other = fields();
    other.swap(0, 1);
    let mut b = BatchBuilder::new(other.into());
    b.column("id", &[1u64]).unwrap();
    b.nullable_column::<&str>("name", &[None]).unwrap();
    b.column("secret", &["s"]).unwrap();
    let wrong = nervix_protocol::arrow::encode(&b.finish().unwrap()).unwrap();
    r.feed(sid, delivered(rid, 1, 2, wrong, 1));
    assert_eq!(violation(&r), Some("EC-3"));
}

#[test]
fn ec_3_an_ended_read_interrupts_and_reopens_against_the_pinned_contract() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, consumer_ended(rid));
    assert_eq!(drain(&mut r, c), vec![ConsumerEvent::Interrupted]);
    assert_eq!(
        r.c.settle_delivery(r.now, d.reference, Decision::Ack),
        Err(SettleError::Revoked)
    );
    // A fresh open on the current session; a changed contract needs a new consumer.
    let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    let changed = Grant {
        contract: 9,
        ..Grant::default()
    };
    r.feed(sid, emitter_opened(wire2, &changed));
    assert!(matches!(
        drain(&mut r, c).last(),
        Some(ConsumerEvent::ReopenRequired(
            ConsumerReopenReason::Changed(_)
        ))
    ));
}

#[test]
fn ec_4_settle_only_the_current_attempt_with_bounded_reasons() {
    let (mut r, sid, c, wire) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    for (reason, why) in [
        (String::new(), "is empty"),
        ("x".repeat(1025), "is longer than 1,024 bytes"),
        (
            "bad value hunter22 seen".to_string(),
            "repeats a sensitive value",
        ),
    ] {
        assert_eq!(
            r.c.settle_delivery(r.now, d.reference, Decision::Reject(reason)),
            Err(SettleError::Reason(why))
        );
    }
    let h =
        r.c.settle_delivery(r.now, d.reference, Decision::Reject("y".repeat(1024)))
            .unwrap();
    r.pump();
    let (sid_req, req) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    let ClientRequestT::SettleEmitterBatchRequest(s) = req else {
        unreachable!()
    };
    assert_eq!((s.consumer, s.reference.clone()), (wire, vec![2; 16]));
    assert_eq!(s.decision, Some(EmitterBatchDecision::Reject));
    // Once out, the same attempt is not settled again.
    assert_eq!(
        r.c.settle_delivery(r.now, d.reference, Decision::Ack),
        Err(SettleError::AlreadySettled)
    );
    r.feed(sid, settled(sid_req, EmitterSettlement::Confirmed));
    assert_eq!(
        drain(&mut r, c),
        vec![ConsumerEvent::Settled {
            handle: h,
            reference: d.reference,
            result: SettleResult::Confirmed
        }]
    );
}

#[test]
fn ec_4_an_ack_is_confirmed_only_by_confirmed() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    r.c.settle_delivery(r.now, d.reference, Decision::Ack)
        .unwrap();
    r.pump();
    assert!(drain(&mut r, c).is_empty(), "sending is not a confirmation");
    let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    r.feed(sid, settled(sr, EmitterSettlement::StaleReference));
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::Settled {
            result: SettleResult::StaleReference { .. },
            ..
        }]
    ));
}

#[test]
fn ec_5_redelivery_carries_the_same_identity_under_a_new_reference() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let first = deliver(&mut r, sid, c, 1, 2);
    r.c.settle_delivery(r.now, first.reference, Decision::Retry)
        .unwrap();
    r.pump();
    let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    r.feed(sid, settled(sr, EmitterSettlement::Confirmed));
    drain(&mut r, c);
    let again = deliver(&mut r, sid, c, 1, 3);
    assert_eq!(again.identity, first.identity);
    assert_ne!(again.reference, first.reference);
    assert_eq!(again.batch, first.batch);
    // The old reference settles nothing.
    assert_eq!(
        r.c.settle_delivery(r.now, first.reference, Decision::Ack),
        Err(SettleError::Revoked)
    );
}

#[test]
fn ec_5_reopen_after_loss_only_when_everything_matches_and_interrupted_comes_first() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Restoring);
    r.feed(sid2, emitter_opened(wire2, &Grant::default()));
    // The read that was wanted goes again on the new attachment.
    let (rid, req) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    assert!(matches!(req, ClientRequestT::ReadEmitterBatchRequest(x) if x.consumer == wire2));
    r.feed(sid2, delivered(rid, 5, 6, ipc(1, "q"), 1));
    let ev = drain(&mut r, c);
    assert_eq!(ev[0], ConsumerEvent::Interrupted);
    assert!(matches!(ev[1], ConsumerEvent::Restored(_)));
    assert!(matches!(ev[2], ConsumerEvent::Delivery(_)));

    for changed in [
        Grant {
            window: 4,
            ..Grant::default()
        },
        Grant {
            backoff_ms: 50,
            ..Grant::default()
        },
        Grant {
            max_batch_rows: 10,
            ..Grant::default()
        },
    ] {
        let (mut r, sid, c, _) = opened(&Grant::default());
        let sid2 = lose(&mut r, sid);
        let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
        r.feed(sid2, emitter_opened(wire2, &changed));
        assert_eq!(
            r.c.consumer(c).unwrap().state,
            ConsumerState::ReopenRequired
        );
    }
}

#[test]
fn ec_6_close_and_loss_revoke_references_and_a_lost_answer_is_uncertain() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    let h =
        r.c.settle_delivery(r.now, d.reference, Decision::Ack)
            .unwrap();
    r.pump();
    let sid2 = lose(&mut r, sid);
    let ev = drain(&mut r, c);
    assert_eq!(
        ev[0],
        ConsumerEvent::Settled {
            handle: h,
            reference: d.reference,
            result: SettleResult::Uncertain
        }
    );
    // The reference is never sent to the replacement attachment.
    let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid2, emitter_opened(wire2, &Grant::default()));
    assert_eq!(
        r.c.settle_delivery(r.now, d.reference, Decision::Ack),
        Err(SettleError::Revoked)
    );
    assert!(!requests(&r, sid2).contains(&ClientRequest::SettleEmitterBatchRequest));
    // Close releases the attachment and revokes what it delivered.
    let d2 = deliver(&mut r, sid2, c, 7, 8);
    r.c.close_consumer(r.now, c).unwrap();
    r.pump();
    let (cr, req) = last_of(&r, ClientRequest::CloseEmitterRequest);
    assert!(matches!(req, ClientRequestT::CloseEmitterRequest(x) if x.consumer == wire2));
    r.feed(sid2, emitter_closed(cr));
    assert_eq!(drain(&mut r, c).last(), Some(&ConsumerEvent::Closed));
    assert_eq!(
        r.c.settle_delivery(r.now, d2.reference, Decision::Ack),
        Err(SettleError::Revoked)
    );
}

#[test]
fn ec_6_closing_fences_a_late_restoration() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.c.close_consumer(r.now, c).unwrap();
    r.pump();
    r.feed(sid2, emitter_opened(wire2, &Grant::default()));
    let (_, req) = last_of(&r, ClientRequest::CloseEmitterRequest);
    assert!(matches!(req, ClientRequestT::CloseEmitterRequest(x) if x.consumer == wire2));
    let ev = drain(&mut r, c);
    assert!(!ev.iter().any(|e| matches!(e, ConsumerEvent::Restored(_))));
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Closed);
}

#[test]
fn ec_6_producers_and_consumers_share_one_session() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    r.pump();
    let (pw, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_opened(pw, &Grant::default(), ProducerAdmission::Open),
    );
    let mut b = r.c.batch_builder(p).unwrap();
    b.column("id", &[1u64]).unwrap();
    b.nullable_column::<&str>("name", &[None]).unwrap();
    b.column("secret", &["s"]).unwrap();
    r.c.submit_built(r.now, p, b).unwrap();
    r.pump();
    // The batch waits for its outcome while a delivery is read and acknowledged.
    let d = deliver(&mut r, sid, c, 1, 2);
    r.c.settle_delivery(r.now, d.reference, Decision::Ack)
        .unwrap();
    r.pump();
    let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    r.feed(sid, settled(sr, EmitterSettlement::Confirmed));
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 1);
    let (br, _) = last_of(&r, ClientRequest::SubmitBatchRequest);
    r.feed(sid, batch_completed(br));
    // P-4: the credit is held until the outcome is read.
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 1);
    let read: Vec<ProducerEvent> = std::iter::from_fn(|| r.c.poll_producer_event(p)).collect();
    assert!(read.iter().any(|e| matches!(
        e,
        ProducerEvent::Outcome {
            outcome: BatchOutcome::Completed,
            ..
        }
    )));
    assert_eq!(r.c.producer(p).unwrap().credit_batches, 0);
}

#[test]
fn d_5_restoration_order_clocks_then_producers_then_consumers() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let c =
        r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields()))
            .unwrap();
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    r.c.follow_clock(r.now, "d1").unwrap();
    let sid = r.open();
    let (ow, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_opened(ow, &Grant::default(), ProducerAdmission::Open),
    );
    let (cw, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid, emitter_opened(cw, &Grant::default()));
    let (kw, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, support::streams::clock_attached(kw, "d1", paced(1)));
    let sid2 = lose(&mut r, sid);
    let order: Vec<ClientRequest> = requests(&r, sid2);
    assert_eq!(
        order,
        vec![
            ClientRequest::AttachDomainClockRequest,
            ClientRequest::OpenIngestorRequest,
            ClientRequest::OpenEmitterRequest,
        ]
    );
    assert_eq!(r.c.producer(p).unwrap().state, ProducerState::Restoring);
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Restoring);
    let pe: Vec<ProducerEvent> = std::iter::from_fn(|| r.c.poll_producer_event(p)).collect();
    assert_eq!(pe.last(), Some(&ProducerEvent::Interrupted));
    assert_eq!(drain(&mut r, c).last(), Some(&ConsumerEvent::Interrupted));
}

#[test]
fn ec_6_a_close_unanswered_past_its_deadline_replaces_the_session_and_closes() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    r.c.close_consumer(r.now, c).unwrap();
    r.pump();
    last_of(&r, ClientRequest::CloseEmitterRequest);
    // The close is never answered: at its deadline the session is given up ...
    r.advance(Duration::from_secs(31));
    assert!(r.closes.iter().any(|(s, _)| *s == sid), "{:?}", r.closes);
    r.c.handle_closed(r.now, sid);
    r.pump();
    // ... and its loss ends the attachment, so the close is complete.
    assert_eq!(drain(&mut r, c).last(), Some(&ConsumerEvent::Closed));
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Closed);
}

#[test]
fn ec_4_a_delivery_naming_an_unsettled_reference_again_is_a_protocol_violation() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    r.c.settle_delivery(r.now, d.reference, Decision::Ack)
        .unwrap();
    r.pump();
    // Another attempt under the same reference while its settlement is out.
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, delivered(rid, 3, 2, ipc(2, "hunter22"), 2));
    assert_eq!(violation(&r), Some("EC-4"));
    let settles = r
        .sent
        .iter()
        .filter(|(_, m)| matches!(m.request, ClientRequestT::SettleEmitterBatchRequest(_)))
        .count();
    assert_eq!(settles, 1, "the reference is never settled twice");
}

mod property {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[derive(Debug, Clone)]
    enum Step {
        Read,
        Deliver(u8, u8, u8),
        Settle(usize, u8),
        AnswerSettle(usize, u8),
        Time(u16),
        Lose,
        Reopen(bool),
        Close,
        AnswerClose,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => Just(Step::Read),
            3 => (0u8..4, 0u8..6, 0u8..5).prop_map(|(i, r, k)| Step::Deliver(i, r, k)),
            3 => (0usize..8, 0u8..4).prop_map(|(i, d)| Step::Settle(i, d)),
            3 => (0usize..4, 0u8..6).prop_map(|(i, k)| Step::AnswerSettle(i, k)),
            2 => (0u16..2000).prop_map(Step::Time),
            1 => Just(Step::Lose),
            1 => any::<bool>().prop_map(Step::Reopen),
            1 => Just(Step::Close),
            1 => Just(Step::AnswerClose),
        ]
    }

    /// What the scripted server saw of the consumer: requests out per session, and the
    /// references each session delivered.
    #[derive(Default)]
    struct Server {
        seen: usize,
        reads: BTreeMap<SessionId, Vec<u64>>,
        settles: BTreeMap<SessionId, Vec<u64>>,
        closes: BTreeMap<SessionId, Vec<u64>>,
        /// Attempts delivered and not yet settled, by session and reference.
        delivered: BTreeSet<(SessionId, Vec<u8>)>,
        close_sent: bool,
    }

    /// Follows the client to its next session: a session it gave up on is closed by the
    /// driver, and a connection it asks for is accepted.
    fn follow(r: &mut Rig, sid: SessionId, accepted: &mut usize) -> SessionId {
        if r.closes.iter().any(|(s, _)| *s == sid) {
            r.c.handle_closed(r.now, sid);
            r.pump();
        }
        if let Some(at) = r.c.poll_timeout().filter(|_| r.connects.len() == *accepted) {
            if at <= r.now {
                r.c.handle_timeout(r.now);
                r.pump();
            }
        }
        if r.connects.len() > *accepted {
            *accepted = r.connects.len();
            return r.open();
        }
        sid
    }

    proptest! {
        #[test]
        fn ec_2_any_frames_keep_one_read_out_settle_only_current_attempts_and_nothing_after_close(
            steps in proptest::collection::vec(step(), 1..60)
        ) {
            let g = Grant { window: 2, ..Grant::default() };
            let (mut r, mut sid, c, mut wire) = opened(&g);
            let mut server = Server::default();
            let mut deliveries: Vec<DeliveryRef> = vec![];
            let mut finished = false;
            let mut accepted = r.connects.len();
            for s in steps {
                match s {
                    Step::Read => {
                        let _ = r.c.read_delivery(r.now, c);
                        r.pump();
                    }
                    Step::Deliver(identity, reference, kind) => {
                        let Some(rid) = server.reads.get_mut(&sid).and_then(|v| (!v.is_empty()).then(|| v.remove(0))) else {
                            continue;
                        };
                        if kind == 4 {
                            r.feed(sid, consumer_ended(rid));
                        } else {
                            server.delivered.insert((sid, vec![reference; 16]));
                            r.feed(sid, delivered(rid, identity, reference, ipc(2, "hunter22"), 2));
                        }
                    }
                    Step::Settle(i, d) => {
                        let Some(d_ref) = deliveries.get(i % deliveries.len().max(1)).copied() else {
                            continue;
                        };
                        let decision = match d {
                            0 | 1 => Decision::Ack,
                            2 => Decision::Retry,
                            _ => Decision::Reject("not wanted".into()),
                        };
                        let _ = r.c.settle_delivery(r.now, d_ref, decision);
                        r.pump();
                    }
                    Step::AnswerSettle(i, k) => {
                        let out = server.settles.entry(sid).or_default();
                        if out.is_empty() {
                            continue;
                        }
                        let rid = out.remove(i % out.len());
                        let result = [
                            EmitterSettlement::Confirmed,
                            EmitterSettlement::Confirmed,
                            EmitterSettlement::StaleReference,
                            EmitterSettlement::WrongConsumer,
                            EmitterSettlement::InvalidReason,
                            EmitterSettlement::ConsumerEnded,
                        ][k as usize];
                        r.feed(sid, settled(rid, result));
                    }
                    Step::Time(ms) => r.advance(Duration::from_millis(u64::from(ms))),
                    Step::Lose => {
                        if r.c.consumer(c).unwrap().state.is_final() {
                            continue;
                        }
                        r.c.handle_closed(r.now, sid);
                        r.pump();
                        if let Some(at) = r.c.poll_timeout() {
                            r.advance(at.saturating_since(r.now));
                        }
                    }
                    Step::Reopen(same) => {
                        if r.c.consumer(c).unwrap().state != ConsumerState::Restoring {
                            continue;
                        }
                        let (w, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
                        let grant = if same { g.clone() } else { Grant { contract: 1, ..g.clone() } };
                        r.feed(sid, emitter_opened(w, &grant));
                        wire = w;
                    }
                    Step::Close => {
                        let _ = r.c.close_consumer(r.now, c);
                        r.pump();
                    }
                    Step::AnswerClose => {
                        if let Some(rid) = server.closes.get_mut(&sid).and_then(|v| v.pop()) {
                            r.feed(sid, emitter_closed(rid));
                        }
                    }
                }
                sid = follow(&mut r, sid, &mut accepted);
                // What the client sent since the last step.
                for (s, m) in r.sent[server.seen..].iter() {
                    let about_consumer = matches!(
                        &m.request,
                        ClientRequestT::ReadEmitterBatchRequest(_)
                            | ClientRequestT::SettleEmitterBatchRequest(_)
                            | ClientRequestT::CloseEmitterRequest(_)
                            | ClientRequestT::OpenEmitterRequest(_)
                    );
                    prop_assert!(!(finished && about_consumer), "a request after the end: {:?}", m);
                    match &m.request {
                        ClientRequestT::ReadEmitterBatchRequest(x) => {
                            prop_assert!(!server.close_sent, "a read after the close");
                            prop_assert_eq!(x.consumer, wire);
                            server.reads.entry(*s).or_default().push(m.request_id);
                        }
                        ClientRequestT::SettleEmitterBatchRequest(x) => {
                            prop_assert!(!server.close_sent, "a settlement after the close");
                            prop_assert_eq!(x.consumer, wire);
                            // Only an attempt this session delivered and not yet settled:
                            // each delivery is settled at most once.
                            prop_assert!(
                                server.delivered.remove(&(*s, x.reference.clone())),
                                "a settlement of an attempt not delivered here, or settled already"
                            );
                            server.settles.entry(*s).or_default().push(m.request_id);
                        }
                        ClientRequestT::CloseEmitterRequest(_) => {
                            server.close_sent = true;
                            server.closes.entry(*s).or_default().push(m.request_id);
                        }
                        _ => {}
                    }
                }
                server.seen = r.sent.len();
                // At most one read out on the session carrying the consumer.
                prop_assert!(server.reads.get(&sid).map_or(0, Vec::len) <= 1);
                while let Some(e) = r.c.poll_consumer_event(c) {
                    prop_assert!(!finished, "an event after the end: {:?}", e);
                    match e {
                        ConsumerEvent::Delivery(d) => deliveries.push(d.reference),
                        ConsumerEvent::Closed
                        | ConsumerEvent::ReopenRequired(_)
                        | ConsumerEvent::Refused { .. } => finished = true,
                        _ => {}
                    }
                }
            }
        }
    }
}

#[test]
fn ec_6_a_close_while_the_open_is_held_unread_completes_on_its_loss() {
    let mut r = Rig::new();
    let c =
        r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.c.close_consumer(r.now, c).unwrap();
    r.pump();
    assert!(!r.c.consumer(c).unwrap().state.is_final());
    // The open is refused unread and held to go again; then its session is lost. Nothing
    // was ever attached, so the close is complete.
    r.feed(
        sid,
        support::rejected(wire, RequestRejection::TooManyRequestsInFlight),
    );
    r.c.handle_closed(r.now, sid);
    r.pump();
    assert_eq!(drain(&mut r, c), [ConsumerEvent::Closed]);
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Closed);
    assert!(!requests(&r, sid).contains(&ClientRequest::CloseEmitterRequest));
}

/// `EmitterOpened` for request `request_id` as [`emitter_opened`] builds it from `g`, then
/// changed by `change`.
fn emitter_opened_with(
    request_id: u64,
    g: &Grant,
    change: impl FnOnce(&mut EmitterOpenedT),
) -> bytes::Bytes {
    let frame = emitter_opened(request_id, g);
    let mut m = nervix_protocol::frame::ServerFrame::check(frame)
        .unwrap()
        .unpack();
    let ServerBodyT::Reply(reply) = &mut m.body else {
        unreachable!()
    };
    let ReplyBodyT::OpenEmitterOutcome(o) = &mut reply.body else {
        unreachable!()
    };
    let OpenEmitterDispositionT::EmitterOpened(opened) = &mut o.disposition else {
        unreachable!()
    };
    change(opened);
    support::server(m.body)
}

#[test]
fn ec_1_credit_of_exactly_one_largest_delivery_is_enough() {
    // Granted bytes equal to the largest delivery, asked for exactly: usable.
    let g = Grant {
        bytes: 1 << 20,
        max_batch_bytes: 1 << 20,
        ..Grant::default()
    };
    let mut r = Rig::new();
    let c =
        r.c.open_consumer(
            r.now,
            ConsumerSpec::new("d1", "alerts", fields()).with_limits(4, 1 << 20),
        )
        .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid, emitter_opened(wire, &g));
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::Opened(_)]
    ));
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Open);
    // One byte less granted: unusable.
    let g = Grant {
        bytes: (1 << 20) - 1,
        max_batch_bytes: 1 << 20,
        ..Grant::default()
    };
    let (mut r, _, c, _) = opened(&g);
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::ReopenRequired(
            ConsumerReopenReason::CreditTooSmall(_)
        )]
    ));
}

#[test]
fn ec_1_credit_asked_for_must_hold_one_largest_delivery() {
    // The server grants more than asked, but the bytes asked for are one short of the
    // largest delivery: unusable.
    let g = Grant {
        bytes: 2 << 20,
        max_batch_bytes: 1 << 20,
        ..Grant::default()
    };
    let mut r = Rig::new();
    let c =
        r.c.open_consumer(
            r.now,
            ConsumerSpec::new("d1", "alerts", fields()).with_limits(4, (1 << 20) - 1),
        )
        .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid, emitter_opened(wire, &g));
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::ReopenRequired(
            ConsumerReopenReason::CreditTooSmall(_)
        )]
    ));
}

/// Opens a consumer, loses its session, and answers the fresh open with `change` applied to
/// the original description; returns the events after the loss.
fn restored_with(
    change: impl FnOnce(&mut EmitterOpenedT),
) -> (Rig, ConsumerId, Vec<ConsumerEvent>, u64) {
    let g = Grant {
        window: 4,
        ..Grant::default()
    };
    let (mut r, sid, c, _) = opened(&g);
    drain(&mut r, c);
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid2, emitter_opened_with(wire2, &g, change));
    let ev = drain(&mut r, c);
    (r, c, ev, wire2)
}

fn assert_consumer_reopen_required(change: impl FnOnce(&mut EmitterOpenedT), what: &str) {
    let (r, c, ev, wire2) = restored_with(change);
    assert!(
        matches!(
            ev.last(),
            Some(ConsumerEvent::ReopenRequired(
                ConsumerReopenReason::Changed(_)
            ))
        ),
        "{what}: {ev:?}"
    );
    assert_eq!(
        r.c.consumer(c).unwrap().state,
        ConsumerState::ReopenRequired,
        "{what}"
    );
    let (_, close) = last_of(&r, ClientRequest::CloseEmitterRequest);
    assert!(
        matches!(close, ClientRequestT::CloseEmitterRequest(x) if x.consumer == wire2),
        "{what}"
    );
}

#[test]
fn ec_5_an_unchanged_attachment_is_restored() {
    let (r, c, ev, _) = restored_with(|_| {});
    assert!(
        matches!(ev.last(), Some(ConsumerEvent::Restored(_))),
        "{ev:?}"
    );
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Open);
}

#[test]
fn ec_5_a_changed_generation_requires_a_reopen() {
    assert_consumer_reopen_required(|o| o.generation += 1, "generation");
}

#[test]
fn ec_5_a_changed_contract_requires_a_reopen() {
    assert_consumer_reopen_required(|o| o.contract.bytes[31] ^= 1, "contract");
}

#[test]
fn ec_5_changed_fields_require_a_reopen() {
    assert_consumer_reopen_required(|o| o.fields[1].nullable = false, "nullability");
    assert_consumer_reopen_required(|o| o.fields[2].sensitive = false, "sensitivity");
    assert_consumer_reopen_required(|o| o.fields[0].name = "other".into(), "name");
    assert_consumer_reopen_required(
        |o| {
            o.fields.pop();
        },
        "a field fewer",
    );
}

#[test]
fn ec_5_a_changed_window_requires_a_reopen() {
    assert_consumer_reopen_required(
        |o| {
            o.window = ConsumerWindowT::ParallelConsumerWindow(Box::new(ParallelConsumerWindowT {
                max: 5,
            }))
        },
        "window size",
    );
    assert_consumer_reopen_required(
        |o| o.window = ConsumerWindowT::SequentialConsumerWindow(Box::default()),
        "window kind",
    );
}

#[test]
fn ec_5_a_changed_ack_timeout_requires_a_reopen() {
    assert_consumer_reopen_required(|o| o.ack_timeout_nanos += 1, "ack timeout");
}

#[test]
fn ec_5_a_changed_retry_backoff_requires_a_reopen() {
    assert_consumer_reopen_required(|o| o.retry_backoff_nanos += 1, "retry backoff");
}

#[test]
fn ec_5_a_changed_retry_max_backoff_requires_a_reopen() {
    assert_consumer_reopen_required(|o| o.retry_max_backoff_nanos += 1, "retry max backoff");
}

#[test]
fn ec_5_a_changed_granted_batches_requires_a_reopen() {
    assert_consumer_reopen_required(|o| o.granted_batches += 1, "granted batches");
}

#[test]
fn ec_5_changed_granted_bytes_require_a_reopen() {
    assert_consumer_reopen_required(|o| o.granted_bytes += 1, "granted bytes");
}

#[test]
fn ec_5_a_changed_max_batch_bytes_requires_a_reopen() {
    assert_consumer_reopen_required(|o| o.max_batch_bytes -= 1, "max batch bytes");
}

#[test]
fn ec_5_changed_max_batch_rows_require_a_reopen() {
    assert_consumer_reopen_required(|o| o.max_batch_rows += 1, "max batch rows");
}

#[test]
fn ec_1_an_open_reply_naming_another_domain_or_emitter_is_a_violation() {
    for (domain, emitter) in [("d2", "alerts"), ("d1", "alarms")] {
        let mut r = Rig::new();
        let c =
            r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields()))
                .unwrap();
        let sid = r.open();
        let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
        r.feed(
            sid,
            emitter_opened_with(wire, &Grant::default(), |o| {
                o.domain = domain.into();
                o.emitter = emitter.into();
            }),
        );
        assert_eq!(violation(&r), Some("EC-1"), "{domain} {emitter}");
        // The session holding the attachment is closed, and nothing was taken.
        assert!(r.closes.iter().any(|(s, _)| *s == sid));
        let ev = drain(&mut r, c);
        assert!(
            !ev.iter()
                .any(|e| matches!(e, ConsumerEvent::Opened(_) | ConsumerEvent::Restored(_))),
            "{ev:?}"
        );
        assert_ne!(r.c.consumer(c).unwrap().state, ConsumerState::Open);
    }
}

#[test]
fn ec_4_a_settle_reply_without_a_disposition_is_uncertain() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    let h =
        r.c.settle_delivery(r.now, d.reference, Decision::Ack)
            .unwrap();
    r.pump();
    let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    r.feed(
        sid,
        support::reply(
            sr,
            ReplyBodyT::SettleEmitterBatchOutcome(Box::new(SettleEmitterBatchOutcomeT {
                disposition: None,
                message: "said nothing".into(),
            })),
        ),
    );
    assert_eq!(
        drain(&mut r, c),
        vec![ConsumerEvent::Settled {
            handle: h,
            reference: d.reference,
            result: SettleResult::Uncertain
        }]
    );
    // ConsumerEnded itself is still reported as such.
    let d = deliver(&mut r, sid, c, 3, 4);
    r.c.settle_delivery(r.now, d.reference, Decision::Ack)
        .unwrap();
    r.pump();
    let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    r.feed(sid, settled(sr, EmitterSettlement::ConsumerEnded));
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::Settled {
            result: SettleResult::ConsumerEnded { .. },
            ..
        }]
    ));
}

fn reads(r: &Rig, sid: SessionId) -> usize {
    requests(r, sid)
        .into_iter()
        .filter(|k| *k == ClientRequest::ReadEmitterBatchRequest)
        .count()
}

#[test]
fn c_8_an_emitter_read_rejected_as_a_defect_is_reported_and_never_sent_again() {
    for rejection in [
        RequestRejection::InvalidRequest,
        RequestRejection::UnsupportedRequest,
        RequestRejection::UnsupportedValue,
        RequestRejection::DuplicateRequestId,
        RequestRejection::ReplyTooLarge,
    ] {
        let (mut r, sid, c, wire) = opened(&Grant::default());
        drain(&mut r, c);
        r.c.read_delivery(r.now, c).unwrap();
        r.pump();
        let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
        r.feed(sid, support::rejected(rid, rejection));
        // Reported to the application, with the reason.
        let ev = drain(&mut r, c);
        assert!(
            matches!(
                ev.as_slice(),
                [ConsumerEvent::ReopenRequired(ConsumerReopenReason::ReadRejected {
                    rejection: Some(x),
                    ..
                })] if *x == rejection
            ),
            "{rejection:?}: {ev:?}"
        );
        assert_eq!(
            r.c.consumer(c).unwrap().state,
            ConsumerState::ReopenRequired
        );
        // The attachment is released, and the read never goes again, however long.
        let (_, close) = last_of(&r, ClientRequest::CloseEmitterRequest);
        assert!(matches!(close, ClientRequestT::CloseEmitterRequest(x) if x.consumer == wire));
        r.advance(Duration::from_secs(60));
        assert_eq!(reads(&r, sid), 1, "{rejection:?}");
        assert!(r.c.read_delivery(r.now, c).is_err());
    }
}

#[test]
fn c_8_an_emitter_read_refused_as_server_busy_goes_again_after_growing_waits() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let mut waits = vec![];
    for n in 1..=3 {
        let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
        r.feed(sid, support::rejected(rid, RequestRejection::ServerBusy));
        // Not at once: after a wait.
        assert_eq!(reads(&r, sid), n);
        let at = r.c.poll_timeout().expect("a wait before the next read");
        assert!(at > r.now);
        let wait = at.saturating_since(r.now);
        waits.push(wait);
        r.advance(wait - Duration::from_nanos(1));
        assert_eq!(reads(&r, sid), n, "not before its wait");
        r.advance(Duration::from_nanos(1));
        assert_eq!(reads(&r, sid), n + 1);
        // The wait that passed asks for no timer any more.
        assert!(r.c.poll_timeout().is_none_or(|t| t > r.now));
    }
    assert!(
        waits[0] <= waits[1] && waits[1] <= waits[2] && waits[0] < waits[2],
        "{waits:?}"
    );
    // Nothing reached the application but the delivery that follows; the waits start over.
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, delivered(rid, 1, 2, ipc(2, "zz"), 2));
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::Delivery(_)]
    ));
    // No read goes that nobody asked for.
    r.advance(Duration::from_secs(5));
    assert_eq!(reads(&r, sid), 4);
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, support::rejected(rid, RequestRejection::ServerBusy));
    let at = r.c.poll_timeout().expect("a wait");
    let wait = at.saturating_since(r.now);
    assert!(wait <= Duration::from_millis(50), "{wait:?}");
}

#[test]
fn ec_1_the_window_holds_the_parallel_windows_size_and_at_least_one() {
    for (window, size) in [(None, 1), (Some(1), 1), (Some(4), 4), (Some(0), 1)] {
        let mut r = Rig::new();
        let c =
            r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields()))
                .unwrap();
        let sid = r.open();
        let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
        r.feed(
            sid,
            emitter_opened_with(wire, &Grant::default(), |o| {
                o.window =
                    match window {
                        None => ConsumerWindowT::SequentialConsumerWindow(Box::default()),
                        Some(max) => ConsumerWindowT::ParallelConsumerWindow(Box::new(
                            ParallelConsumerWindowT { max },
                        )),
                    }
            }),
        );
        let desc = r.c.consumer(c).unwrap().description.expect("opened");
        assert_eq!(desc.window_size(), size, "{window:?}");
    }
}

#[test]
fn ec_4_each_settle_disposition_is_reported_as_itself() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    for (i, (disposition, expected)) in [
        (EmitterSettlement::Confirmed, "Confirmed"),
        (EmitterSettlement::StaleReference, "StaleReference"),
        (EmitterSettlement::WrongConsumer, "WrongConsumer"),
        (EmitterSettlement::InvalidReason, "InvalidReason"),
        (EmitterSettlement::ConsumerEnded, "ConsumerEnded"),
    ]
    .into_iter()
    .enumerate()
    {
        let d = deliver(&mut r, sid, c, i as u8 + 1, i as u8 + 1);
        r.c.settle_delivery(r.now, d.reference, Decision::Ack)
            .unwrap();
        r.pump();
        let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
        r.feed(sid, settled(sr, disposition));
        let ev = drain(&mut r, c);
        let [ConsumerEvent::Settled { result, .. }] = ev.as_slice() else {
            panic!("{ev:?}")
        };
        let name = format!("{result:?}");
        assert!(name.starts_with(expected), "{disposition:?}: {name}");
    }
}

/// A reference is settled only through the attachment that delivered it (EC-6): after a
/// restoration, the old attachment's reference is refused locally even when the new attachment
/// delivered an attempt under the same reference bytes, and the new one settles through the
/// new attachment's consumer identity.
#[test]
fn ec_6_a_reference_of_an_earlier_attachment_is_refused_even_with_the_same_bytes() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let old = deliver(&mut r, sid, c, 1, 2);
    let sid2 = lose(&mut r, sid);
    let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid2, emitter_opened(wire2, &Grant::default()));
    drain(&mut r, c);
    let new = deliver(&mut r, sid2, c, 1, 2);
    assert_eq!(new.reference.reference, old.reference.reference);
    assert_ne!(new.reference, old.reference);
    assert_eq!(
        r.c.settle_delivery(r.now, old.reference, Decision::Ack),
        Err(SettleError::Revoked)
    );
    r.pump();
    assert!(!requests(&r, sid2).contains(&ClientRequest::SettleEmitterBatchRequest));
    r.c.settle_delivery(r.now, new.reference, Decision::Ack)
        .unwrap();
    r.pump();
    let (_, req) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    assert!(
        matches!(&req, ClientRequestT::SettleEmitterBatchRequest(x) if x.consumer == wire2 && x.reference == [2u8; 16]),
        "{req:?}"
    );
    assert_eq!(
        requests(&r, sid2)
            .iter()
            .filter(|k| **k == ClientRequest::SettleEmitterBatchRequest)
            .count(),
        1
    );
}

/// Losing the forwarding stream (a read answered `Ended`) revokes the attachment's unresolved
/// references (EC-6): a settlement already out is reported uncertain, an unsettled reference is
/// refused locally, and nothing of the old attachment goes to its replacement.
#[test]
fn ec_6_losing_the_forwarding_stream_revokes_references_and_a_settlement_out_is_uncertain() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let a = deliver(&mut r, sid, c, 1, 2);
    let b = deliver(&mut r, sid, c, 3, 4);
    // Ask for the next read first, so the settlements queue behind it.
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    let ha =
        r.c.settle_delivery(r.now, a.reference, Decision::Ack)
            .unwrap();
    r.pump();
    let settles_sent = requests(&r, sid)
        .iter()
        .filter(|k| **k == ClientRequest::SettleEmitterBatchRequest)
        .count();
    assert_eq!(settles_sent, 1);
    // The forwarding stream is lost.
    r.feed(sid, consumer_ended(rid));
    let ev = drain(&mut r, c);
    assert!(ev.contains(&ConsumerEvent::Interrupted), "{ev:?}");
    for d in [&a, &b] {
        assert_eq!(
            r.c.settle_delivery(r.now, d.reference, Decision::Ack),
            Err(SettleError::Revoked)
        );
    }
    assert!(
        ev.iter().any(|e| matches!(e,
            ConsumerEvent::Settled { handle, result: SettleResult::Uncertain, .. } if *handle == ha)),
        "the settlement out is uncertain: {ev:?}"
    );
    // The replacement attachment opens on the same session; nothing of the old goes to it.
    let (wire2, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid, emitter_opened(wire2, &Grant::default()));
    r.pump();
    assert_eq!(
        requests(&r, sid)
            .iter()
            .filter(|k| **k == ClientRequest::SettleEmitterBatchRequest)
            .count(),
        settles_sent
    );
}

/// The open names every field in the order the application gave, not sorted, each with its own
/// type, nullability and sensitivity (EC-1).
#[test]
fn ec_1_the_open_carries_each_field_in_the_given_order_with_its_own_attributes() {
    use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType as S};
    let given = vec![
        FieldSpec::new("zeta", FieldType::Scalar(S::I64), true, false),
        FieldSpec::new("alpha", FieldType::Scalar(S::Bytes), false, true),
        FieldSpec::new("mid", FieldType::Scalar(S::F64), false, false),
        FieldSpec::new("beta", FieldType::Scalar(S::String), true, true),
    ];
    let mut r = Rig::new();
    r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", given.clone()))
        .unwrap();
    r.open();
    let (_, req) = last_of(&r, ClientRequest::OpenEmitterRequest);
    let ClientRequestT::OpenEmitterRequest(o) = req else {
        unreachable!()
    };
    let sent: Vec<(String, bool, bool, String)> = o
        .expected_fields
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                f.nullable,
                f.sensitive,
                format!("{:?}", f.field_type),
            )
        })
        .collect();
    let scalar = |s: ScalarType| {
        format!(
            "{:?}",
            FieldTypeT {
                shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
                    scalar: Some(s)
                }))
            }
        )
    };
    assert_eq!(
        sent,
        vec![
            ("zeta".into(), true, false, scalar(ScalarType::I64)),
            ("alpha".into(), false, true, scalar(ScalarType::Bytes)),
            ("mid".into(), false, false, scalar(ScalarType::F64)),
            ("beta".into(), true, true, scalar(ScalarType::String)),
        ]
    );
    assert_eq!((o.domain.as_str(), o.emitter.as_str()), ("d1", "alerts"));
}

/// The credit asked for is 1 to 1,024 batches and 1 to 32 MiB: both ends are accepted and
/// one past either is refused at the call (EC-1).
#[test]
fn ec_1_credit_of_1024_batches_and_32_mib_is_asked_for_and_one_more_is_refused() {
    let mut r = Rig::new();
    for (b, y) in [(1, 1), (1024, 32 << 20)] {
        let spec = ConsumerSpec::new("d1", "alerts", fields()).with_limits(b, y);
        assert!(r.c.open_consumer(r.now, spec).is_ok(), "{b} {y}");
    }
    for (b, y) in [(1025, 32 << 20), (1024, (32 << 20) + 1), (0, 1), (1, 0)] {
        let spec = ConsumerSpec::new("d1", "alerts", fields()).with_limits(b, y);
        assert_eq!(
            r.c.open_consumer(r.now, spec),
            Err(ClientError::InvalidCredit),
            "{b} {y}"
        );
    }
}

/// While a read waits with no delivery (EC-2), everything else on the session goes on: a
/// settlement is sent and its reply applied, a producer's outcome is read, a domain clock frame
/// is applied, and a command's reply completes it. The read stays out, unanswered and never
/// taken as an acknowledgement.
#[test]
fn ec_2_a_pending_read_holds_back_no_settlement_outcome_clock_frame_or_command_reply() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    r.c.follow_clock(r.now, "d1").unwrap();
    r.pump();
    let (kw, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(sid, support::streams::clock_attached(kw, "d1", paced(1)));
    let p =
        r.c.open_producer(r.now, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
    r.pump();
    let (pw, _) = last_of(&r, ClientRequest::OpenIngestorRequest);
    r.feed(
        sid,
        producer_opened(pw, &Grant::default(), ProducerAdmission::Open),
    );
    let d = deliver(&mut r, sid, c, 1, 2);
    // The next read goes out and is left waiting.
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (read, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    // A settlement of the earlier delivery goes and its answer is applied.
    let h =
        r.c.settle_delivery(r.now, d.reference, Decision::Ack)
            .unwrap();
    r.pump();
    let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    assert!(sr > read);
    r.feed(sid, settled(sr, EmitterSettlement::Confirmed));
    assert_eq!(
        drain(&mut r, c),
        vec![ConsumerEvent::Settled {
            handle: h,
            reference: d.reference,
            result: SettleResult::Confirmed
        }]
    );
    // A producer batch's outcome is read.
    let mut b = r.c.batch_builder(p).unwrap();
    b.column("id", &[1u64]).unwrap();
    b.nullable_column::<&str>("name", &[None]).unwrap();
    b.column("secret", &["s"]).unwrap();
    r.c.submit_built(r.now, p, b).unwrap();
    r.pump();
    let (br, _) = last_of(&r, ClientRequest::SubmitBatchRequest);
    r.feed(sid, batch_completed(br));
    let outcomes: Vec<ProducerEvent> = std::iter::from_fn(|| r.c.poll_producer_event(p)).collect();
    assert!(outcomes.iter().any(|e| matches!(
        e,
        ProducerEvent::Outcome {
            outcome: BatchOutcome::Completed,
            ..
        }
    )));
    // A domain clock frame is applied.
    r.feed(sid, support::streams::clock_observed("d1", paced(2)));
    assert_eq!(
        r.c.clock("d1").and_then(|k| k.clock).map(|k| k.generation),
        Some(2)
    );
    // A command's reply completes it.
    let q = r.c.read(r.now, support::list_domains(), None).unwrap();
    r.pump();
    let (lid, _) = last_of(&r, ClientRequest::ListDomainsRequest);
    r.feed(sid, support::domains(lid));
    assert!(read_result(&r, q).is_some());
    // The read is still out, and nothing was delivered or acknowledged by it.
    assert!(r.c.consumer(c).unwrap().reading);
    assert!(drain(&mut r, c).is_empty());
    assert_eq!(
        requests(&r, sid)
            .iter()
            .filter(|k| **k == ClientRequest::ReadEmitterBatchRequest)
            .count(),
        2
    );
}

/// A rejection's reason is bounded in UTF-8 bytes, not characters, and goes as written; each
/// decision goes as itself (EC-4).
#[test]
fn ec_4_a_reason_is_bounded_in_bytes_and_each_decision_goes_as_itself() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    // 600 characters, 1,200 bytes.
    assert_eq!(
        r.c.settle_delivery(r.now, d.reference, Decision::Reject("é".repeat(600))),
        Err(SettleError::Reason("is longer than 1,024 bytes"))
    );
    let exactly = "é".repeat(512);
    r.c.settle_delivery(r.now, d.reference, Decision::Reject(exactly.clone()))
        .unwrap();
    r.pump();
    let (sr, req) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    assert!(
        matches!(&req, ClientRequestT::SettleEmitterBatchRequest(s)
            if s.reason == exactly && s.decision == Some(EmitterBatchDecision::Reject)),
        "{req:?}"
    );
    r.feed(sid, settled(sr, EmitterSettlement::Confirmed));
    for (i, (decision, wire)) in [
        (Decision::Ack, EmitterBatchDecision::Ack),
        (Decision::Retry, EmitterBatchDecision::Retry),
    ]
    .into_iter()
    .enumerate()
    {
        let d = deliver(&mut r, sid, c, 10 + i as u8, 10 + i as u8);
        r.c.settle_delivery(r.now, d.reference, decision).unwrap();
        r.pump();
        let (sr, req) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
        assert!(
            matches!(&req, ClientRequestT::SettleEmitterBatchRequest(s)
                if s.decision == Some(wire) && s.reason.is_empty() && s.reference == vec![10 + i as u8; 16]),
            "{req:?}"
        );
        r.feed(sid, settled(sr, EmitterSettlement::Confirmed));
    }
}

/// A rejection's reason must not hold a sensitive value of the delivery (EC-4), whatever the
/// sensitive field's type: a sensitive number written out in the reason is refused like a
/// sensitive text, and the same number in a field that is not sensitive is not.
#[test]
fn ec_4_a_reason_repeating_a_sensitive_number_is_refused() {
    use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType as S};
    let fields = vec![
        FieldSpec::new("id", FieldType::Scalar(S::U64), false, false),
        FieldSpec::new("account", FieldType::Scalar(S::I64), false, true),
        FieldSpec::new("seen", FieldType::Scalar(S::Datetime), false, true),
    ];
    let mut r = Rig::new();
    let c =
        r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields.clone()))
            .unwrap();
    let sid = r.open();
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    let wire_fields: Vec<RowFieldT> = fields.iter().map(FieldSpec::to_wire).collect();
    r.feed(
        sid,
        emitter_opened_with(wire, &Grant::default(), |o| o.fields = wire_fields),
    );
    drain(&mut r, c);
    let mut b = BatchBuilder::new(fields.into());
    b.column("id", &[55_501_234u64]).unwrap();
    b.column("account", &[-98_765_432i64]).unwrap();
    b.column(
        "seen",
        &[nervix_protocol::arrow::Datetime(1_700_000_000_123_456_789)],
    )
    .unwrap();
    let stream = nervix_protocol::arrow::encode(&b.finish().unwrap()).unwrap();
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, delivered(rid, 1, 2, stream, 1));
    let d = drain(&mut r, c)
        .into_iter()
        .find_map(|e| match e {
            ConsumerEvent::Delivery(d) => Some(*d),
            _ => None,
        })
        .expect("a delivery");
    for reason in ["account -98765432 is closed", "seen at 1700000000123456789"] {
        assert_eq!(
            r.c.settle_delivery(r.now, d.reference, Decision::Reject(reason.into())),
            Err(SettleError::Reason("repeats a sensitive value")),
            "{reason}"
        );
    }
    r.c.settle_delivery(
        r.now,
        d.reference,
        Decision::Reject("row 55501234 failed".into()),
    )
    .expect("a value of a field that is not sensitive may be named");
}

/// A delivery is one Arrow IPC stream of exactly the opened fields and exactly one batch whose
/// rows are the delivery's members (EC-3): fewer members than rows, more members than rows, no
/// batch, two batches, a column more (the relay written as a field) and a column less are each
/// refused; the same stream with the right members is read.
#[test]
fn ec_3_members_are_checked_both_ways_and_one_batch_of_exactly_the_fields_is_read() {
    use arrow_ipc::writer::StreamWriter;
    use nervix_protocol::arrow::{decode, DeliveryFault};
    use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType as S};
    let stream = ipc(2, "abcd");
    assert_eq!(decode(&stream, &fields(), 2).unwrap().num_rows(), 2);
    for members in [1, 3] {
        assert!(
            matches!(
                decode(&stream, &fields(), members),
                Err(DeliveryFault::Members { rows: 2, .. })
            ),
            "{members}"
        );
    }
    // No batch, and two batches.
    let batch = decode(&stream, &fields(), 2).unwrap();
    let write = |n: usize| {
        let mut out = Vec::new();
        let mut w = StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
        for _ in 0..n {
            w.write(&batch).unwrap();
        }
        w.finish().unwrap();
        drop(w);
        out
    };
    assert!(matches!(
        decode(&write(0), &fields(), 0),
        Err(DeliveryFault::NotOneBatch(0))
    ));
    assert!(matches!(
        decode(&write(2), &fields(), 4),
        Err(DeliveryFault::NotOneBatch(2))
    ));
    assert_eq!(decode(&write(1), &fields(), 2).unwrap(), batch);
    // A column more, and a column less.
    let mut more = fields();
    more.push(FieldSpec::new(
        "source_relay",
        FieldType::Scalar(S::String),
        false,
        false,
    ));
    let mut b = BatchBuilder::new(more.into());
    b.column("id", &[1u64]).unwrap();
    b.nullable_column::<&str>("name", &[None]).unwrap();
    b.column("secret", &["s"]).unwrap();
    b.column("source_relay", &["alerts_relay"]).unwrap();
    let extra = nervix_protocol::arrow::encode(&b.finish().unwrap()).unwrap();
    assert!(
        matches!(decode(&extra, &fields(), 1), Err(DeliveryFault::Schema(_))),
        "the relay is metadata, never a field"
    );
    let less: Vec<FieldSpec> = fields().into_iter().take(2).collect();
    let mut b = BatchBuilder::new(less.into());
    b.column("id", &[1u64]).unwrap();
    b.nullable_column::<&str>("name", &[None]).unwrap();
    let missing = nervix_protocol::arrow::encode(&b.finish().unwrap()).unwrap();
    assert!(matches!(
        decode(&missing, &fields(), 1),
        Err(DeliveryFault::Schema(_))
    ));
    // Through the client, fewer members than rows is a violation too.
    let (mut r, sid, c, _) = opened(&Grant::default());
    r.c.read_delivery(r.now, c).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::ReadEmitterBatchRequest);
    r.feed(sid, delivered(rid, 1, 2, ipc(2, "x"), 1));
    assert_eq!(violation(&r), Some("EC-3"));
}

/// A restoration refused as `EndpointUnavailable` (the serving node still catching up) is
/// reported and sent again on that session after a wait that grows with each refusal and
/// stays within the client's largest back-off; a refusal no wait cures (the emitter removed)
/// needs a new consumer, and nothing more is sent (EC-5).
#[test]
fn ec_5_an_unavailable_endpoint_is_retried_with_growing_bounded_waits_and_a_removed_one_is_not() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let sid2 = lose(&mut r, sid);
    drain(&mut r, c);
    let opens = |r: &Rig| {
        requests(r, sid2)
            .iter()
            .filter(|k| **k == ClientRequest::OpenEmitterRequest)
            .count()
    };
    let mut waits = Vec::new();
    for n in 1..=10 {
        let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
        r.feed(
            sid2,
            emitter_refused(wire, EmitterOpenRefusal::EndpointUnavailable),
        );
        assert_eq!(
            drain(&mut r, c),
            vec![ConsumerEvent::RestoreRefused {
                refusal: Some(EmitterOpenRefusal::EndpointUnavailable),
                message: "refused".into()
            }]
        );
        assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Interrupted);
        let refused_at = r.now;
        let at = r.c.poll_timeout().expect("the restoration goes again");
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
        assert_eq!(opens(&r), n + 1, "sent again on that session");
        waits.push(at.saturating_since(refused_at));
    }
    // Each wait is drawn from [full / 2, full], full doubling from 50 ms up to 5 s.
    for (k, w) in waits.iter().enumerate() {
        let full = Duration::from_millis(50)
            .saturating_mul(1 << k)
            .min(Duration::from_secs(5));
        assert!(
            (full / 2..=full).contains(w),
            "wait {k} is {w:?}, not within [{:?}, {full:?}]: {waits:?}",
            full / 2
        );
    }
    // The emitter is removed: no wait cures that.
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(
        sid2,
        emitter_refused(wire, EmitterOpenRefusal::EmitterNotFound),
    );
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::ReopenRequired(
            ConsumerReopenReason::Refused {
                refusal: Some(EmitterOpenRefusal::EmitterNotFound),
                ..
            }
        )]
    ));
    assert_eq!(
        r.c.consumer(c).unwrap().state,
        ConsumerState::ReopenRequired
    );
    let before = opens(&r);
    r.advance(Duration::from_secs(60));
    assert_eq!(opens(&r), before, "never sent again");
}

/// The close revokes the references it leaves unresolved (EC-6): a settlement still out when
/// the close is answered ends once, as uncertain (its decision may or may not have been
/// applied), `Closed` is the last event, and the settlement's late reply changes nothing.
#[test]
fn ec_6_a_settlement_out_when_the_close_is_answered_ends_once_as_uncertain_before_closed() {
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let d = deliver(&mut r, sid, c, 1, 2);
    let h =
        r.c.settle_delivery(r.now, d.reference, Decision::Ack)
            .unwrap();
    r.pump();
    let (sr, _) = last_of(&r, ClientRequest::SettleEmitterBatchRequest);
    r.c.close_consumer(r.now, c).unwrap();
    r.pump();
    let (cr, _) = last_of(&r, ClientRequest::CloseEmitterRequest);
    // The close is answered first, then the settlement.
    r.feed(sid, emitter_closed(cr));
    r.feed(sid, settled(sr, EmitterSettlement::Confirmed));
    assert_eq!(
        drain(&mut r, c),
        vec![
            ConsumerEvent::Settled {
                handle: h,
                reference: d.reference,
                result: SettleResult::Uncertain
            },
            ConsumerEvent::Closed
        ]
    );
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Closed);
}

/// Closing a consumer whose restoration was refused for now, or whose restoration is out when
/// its session ends, fences it (EC-6): the consumer is closed at once, and no open goes out for
/// it again.
#[test]
fn ec_6_closing_fences_a_restoration_waiting_after_a_refusal_or_lost_with_its_session() {
    // Waiting after a refusal.
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let sid2 = lose(&mut r, sid);
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(
        sid2,
        emitter_refused(wire, EmitterOpenRefusal::EndpointUnavailable),
    );
    let opens = |r: &Rig, s| {
        requests(r, s)
            .iter()
            .filter(|k| **k == ClientRequest::OpenEmitterRequest)
            .count()
    };
    let before = opens(&r, sid2);
    r.c.close_consumer(r.now, c).unwrap();
    r.pump();
    assert_eq!(drain(&mut r, c).last(), Some(&ConsumerEvent::Closed));
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Closed);
    r.advance(Duration::from_secs(30));
    assert_eq!(opens(&r, sid2), before, "no restoration after the close");
    assert!(!requests(&r, sid2).contains(&ClientRequest::CloseEmitterRequest));
    // Out when its session ends.
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let sid2 = lose(&mut r, sid);
    r.c.close_consumer(r.now, c).unwrap();
    r.pump();
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Closing);
    r.c.handle_closed(r.now, sid2);
    r.pump();
    assert_eq!(drain(&mut r, c).last(), Some(&ConsumerEvent::Closed));
    assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Closed);
    // Nothing wants a session for it any more.
    assert_eq!(r.c.poll_timeout(), None);
    let connects = r.connects.len();
    r.advance(Duration::from_secs(30));
    assert_eq!(r.connects.len(), connects);
}

/// A restoration rejected for a defect in the request (C-8) is never sent again unchanged: the
/// consumer needs a new open, reported (EC-5). A restoration rejected as `ServerBusy` waits and
/// goes again.
#[test]
fn finished_consumers_are_forgotten_past_the_newest_1024_once_nothing_is_left_to_read() {
    let mut r = Rig::new();
    let open = |r: &mut Rig| {
        r.c.open_consumer(r.now, ConsumerSpec::new("d1", "alerts", fields()))
            .unwrap()
    };
    // One finished and never read: it stays however many finish after it.
    let unread = open(&mut r);
    let sid = r.open();
    let refuse = |r: &mut Rig| {
        let (wire, _) = last_of(r, ClientRequest::OpenEmitterRequest);
        r.feed(
            sid,
            emitter_refused(wire, EmitterOpenRefusal::EndpointUnavailable),
        );
    };
    refuse(&mut r);
    let finish = |r: &mut Rig| {
        let c = open(r);
        r.pump();
        refuse(r);
        assert!(matches!(
            drain(r, c).as_slice(),
            [ConsumerEvent::Refused { .. }]
        ));
        c
    };
    let ids: Vec<ConsumerId> = (0..1030).map(|_| finish(&mut r)).collect();
    // 1,031 finished: the oldest read ones beyond the newest 1,024 are forgotten, the unread
    // one kept.
    assert!(ids[..7].iter().all(|c| r.c.consumer(*c).is_none()));
    assert!(ids[7..]
        .iter()
        .all(|c| r.c.consumer(*c).map(|i| i.state) == Some(ConsumerState::Refused)));
    assert!(r.c.consumer(unread).is_some());
    // Once its event is read, it goes in its turn like any other.
    assert_eq!(drain(&mut r, unread).len(), 1);
    let newer: Vec<ConsumerId> = (0..1024).map(|_| finish(&mut r)).collect();
    assert!(r.c.consumer(unread).is_none());
    assert!(ids.iter().all(|c| r.c.consumer(*c).is_none()));
    assert!(newer.iter().all(|c| r.c.consumer(*c).is_some()));
    // More than 1,024 finished and none read: none is forgotten, and each finish looks at
    // each of them once (it does not go round them for ever).
    let unread: Vec<ConsumerId> = (0..1100)
        .map(|_| {
            let c = open(&mut r);
            r.pump();
            refuse(&mut r);
            c
        })
        .collect();
    assert!(unread.iter().all(|c| r.c.consumer(*c).is_some()));
    assert!(newer.iter().all(|c| r.c.consumer(*c).is_none()));
}

#[test]
fn ec_5_a_restoration_rejected_as_a_defect_is_not_sent_again() {
    for rejection in [
        RequestRejection::InvalidRequest,
        RequestRejection::UnsupportedRequest,
        RequestRejection::UnsupportedValue,
        RequestRejection::DuplicateRequestId,
        RequestRejection::ReplyTooLarge,
    ] {
        let (mut r, sid, c, _) = opened(&Grant::default());
        drain(&mut r, c);
        let sid2 = lose(&mut r, sid);
        drain(&mut r, c);
        let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
        r.feed(sid2, support::rejected(wire, rejection));
        let ev = drain(&mut r, c);
        assert!(
            matches!(
                ev.as_slice(),
                [ConsumerEvent::ReopenRequired(
                    ConsumerReopenReason::Refused { .. }
                )]
            ),
            "{rejection:?}: {ev:?}"
        );
        let before = requests(&r, sid2).len();
        r.advance(Duration::from_secs(60));
        assert_eq!(
            requests(&r, sid2).len(),
            before,
            "{rejection:?}: never sent again"
        );
    }
    let (mut r, sid, c, _) = opened(&Grant::default());
    drain(&mut r, c);
    let sid2 = lose(&mut r, sid);
    drain(&mut r, c);
    let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
    r.feed(sid2, support::rejected(wire, RequestRejection::ServerBusy));
    assert!(matches!(
        drain(&mut r, c).as_slice(),
        [ConsumerEvent::RestoreRefused { .. }]
    ));
    let before = requests(&r, sid2).len();
    r.advance(Duration::from_secs(6));
    assert_eq!(
        requests(&r, sid2).len(),
        before + 1,
        "a busy server is asked again"
    );
}

/// A server dropping the session again and again cannot pile up unread consumer events: the
/// second interruption folds into the first with what came between, the newest refusal of an
/// interruption replaces the older, and what is folded is counted (EC-5).
#[test]
fn ec_5_sessions_lost_again_and_again_leave_few_unread_consumer_events_and_count_the_folded() {
    let (mut r, mut sid, c, _) = opened(&Grant::default());
    let rounds = 300u64;
    for _ in 0..rounds {
        let next = lose(&mut r, sid);
        for _ in 0..2 {
            let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
            r.feed(
                next,
                emitter_refused(wire, EmitterOpenRefusal::EndpointUnavailable),
            );
            let at = r.c.poll_timeout().expect("the restoration goes again");
            r.now = at;
            r.c.handle_timeout(at);
            r.pump();
        }
        let (wire, _) = last_of(&r, ClientRequest::OpenEmitterRequest);
        r.feed(next, emitter_opened(wire, &Grant::default()));
        assert_eq!(r.c.consumer(c).unwrap().state, ConsumerState::Open);
        sid = next;
    }
    let ev = drain(&mut r, c);
    assert!(
        matches!(
            ev.as_slice(),
            [
                ConsumerEvent::Opened(_),
                ConsumerEvent::Interrupted,
                ConsumerEvent::RestoreRefused { .. },
                ConsumerEvent::Restored(_)
            ]
        ),
        "{ev:?}"
    );
    // Four lifecycle events each round (one interruption, two refusals, one restoration),
    // three read.
    assert_eq!(r.c.stats().lifecycle_events_folded, 4 * rounds - 3);
    let _ = lose(&mut r, sid);
    assert_eq!(drain(&mut r, c), vec![ConsumerEvent::Interrupted]);
}
