//! Producers and emitter consumers over real sockets on 127.0.0.1 against the loopback
//! cluster: a submitted batch completes, outcomes handed to pending batches hold the credit
//! until read, one withdrawn while it waits for room is never taken, a producer's interruption
//! and restoration reach observers, and a delivery arrives decoded with the rows the cluster
//! emitted and is acknowledged.

use crate::{seeds_of, spoken, Driver, Error, Via, BOTH};
use nervix_driver_support::api::DriverEvent;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::Submission;
use nervix_harness::cluster::{
    delivery_ids, emitter_fields, ingestor_fields, token_number, EMITTER, INGESTOR,
};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::{
    BatchOutcome, ConsumerEvent, ConsumerSpec, Decision, ProducerEvent, ProducerSpec, SettleResult,
};
use std::time::{Duration, Instant};

/// How long an outcome, a delivery or an event may take.
pub const WAIT: Duration = Duration::from_secs(10);

/// A client of `lb` over `via`.
pub fn connected<D: Driver>(d: &D, lb: &Loopback, via: Via) -> D::Client {
    let c = crate::config_of::<D>(
        &seeds_of(lb, via),
        Credentials::new("nervix", "nervix"),
        via,
        Duration::from_secs(10),
        Duration::from_secs(3),
    );
    d.connect(c).unwrap()
}

/// A batch of the ingestor's fields with ids `ids`.
pub fn batch_of<D: Driver>(producer: &D::Producer, ids: &[u64]) -> Submission {
    let mut b = producer.batch_builder();
    b.column("id", ids).unwrap();
    let names: Vec<Option<&str>> = ids.iter().map(|_| Some("n")).collect();
    b.nullable_column("name", &names).unwrap();
    b.into()
}

/// P-5: a batch submitted completes; a batch for other fields is refused locally.
pub fn p_5_batch_completes<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let client = connected(&d, &lb, via);
        let producer = d
            .producer(
                &client,
                ProducerSpec::new("tenant", INGESTOR, ingestor_fields()),
            )
            .unwrap();
        assert_eq!(&producer.description().fields[..], &ingestor_fields()[..]);
        // A batch for other fields is refused locally, naming the column; nothing is sent.
        let mut wrong = producer.batch_builder();
        assert!(wrong.column("id", &[1u64, 2]).is_ok());
        let refused = d.submit_batch(&producer, wrong.into());
        assert!(
            matches!(refused, Err(Error::Submit(_))),
            "{via:?}: a batch without its nullable column given is refused: {refused:?}"
        );
        let mut b = producer.batch_builder();
        b.column("id", &[7u64, 8, 9]).unwrap();
        b.nullable_column("name", &[Some("a"), None, Some("c")])
            .unwrap();
        let mut pending = d.submit_batch(&producer, b.into()).unwrap();
        assert_eq!(
            d.batch_outcome(&mut pending, WAIT).unwrap(),
            BatchOutcome::Completed,
            "{via:?}"
        );
        assert_eq!(
            d.close_producer(producer, WAIT).unwrap(),
            ProducerEvent::Closed,
            "{via:?}"
        );
        d.close(client, true).unwrap();
    }
}

/// P-7: a caller that gives its wait up leaves the outcome retrievable: the wait ends
/// without it, and a later wait on the same handle still gets the batch's one outcome, whether
/// it had arrived meanwhile or not.
pub fn p_7_outcome_retrievable_after_a_given_up_wait<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let client = connected(&d, &lb, via);
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields());
        let producer = d.producer(&client, spec).unwrap();
        let n0 = ingested(&lb);
        let mut a = d
            .submit_batch(&producer, batch_of::<D>(&producer, &[1]))
            .unwrap();
        let mut b = d
            .submit_batch(&producer, batch_of::<D>(&producer, &[2]))
            .unwrap();
        // Given up at once, before either outcome can have come back over the socket.
        for pending in [&mut a, &mut b] {
            assert!(
                matches!(
                    d.batch_outcome(pending, Duration::ZERO),
                    Err(Error::TimedOut)
                ),
                "{via:?}"
            );
        }
        // Both are ingested and their outcomes in while nobody waits for them.
        ingested_settles_at(&lb, n0 + 2, "both batches");
        std::thread::sleep(Duration::from_millis(100));
        for pending in [&mut a, &mut b] {
            assert_eq!(
                d.batch_outcome(pending, WAIT).unwrap(),
                BatchOutcome::Completed,
                "{via:?}"
            );
        }
        d.close(client, true).unwrap();
    }
}

/// P-7: a caller that stops waiting by dropping its handle leaves the outcome retrievable
/// too: an outcome that came after the handle was dropped, and one handed over but never read,
/// are kept for `unclaimed_batches` and handed out once; one read is not kept. A batch of a
/// producer dropped meanwhile is kept as well.
pub fn p_7_dropped_handles_leave_their_outcomes_for_unclaimed_batches<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let client = connected(&d, &lb, via);
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields());
        let producer = d.producer(&client, spec).unwrap();
        let n0 = ingested(&lb);
        let submit = |ids: &[u64]| d.submit_batch(&producer, batch_of::<D>(&producer, ids));
        let (a, b, mut c) = (
            submit(&[11]).unwrap(),
            submit(&[12]).unwrap(),
            submit(&[13]).unwrap(),
        );
        let (ida, idb) = (D::batch_id(&a), D::batch_id(&b));
        // Dropped at once, before its outcome can have come back over the socket.
        drop(a);
        ingested_settles_at(&lb, n0 + 3, "three batches");
        std::thread::sleep(Duration::from_millis(200));
        // Its outcome handed over by now, never read.
        drop(b);
        assert_eq!(
            d.batch_outcome(&mut c, WAIT).unwrap(),
            BatchOutcome::Completed
        );
        let kept = d.unclaimed_batches(&client).unwrap();
        let got: Vec<_> = kept.iter().map(|u| (u.batch, u.outcome.clone())).collect();
        assert_eq!(
            got,
            vec![
                (ida, BatchOutcome::Completed),
                (idb, BatchOutcome::Completed)
            ],
            "{via:?}: the dropped handles' outcomes, oldest first, the read one left out"
        );
        assert!(kept.iter().all(|u| u.producer == kept[0].producer));
        assert!(
            d.unclaimed_batches(&client).unwrap().is_empty(),
            "{via:?}: handed out once"
        );
        // A batch whose handle and producer are both dropped: its outcome is kept too.
        let e = submit(&[14]).unwrap();
        let ide = D::batch_id(&e);
        drop(e);
        drop(producer);
        let end = Instant::now() + WAIT;
        let kept = loop {
            let kept = d.unclaimed_batches(&client).unwrap();
            if !kept.is_empty() || Instant::now() > end {
                break kept;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(kept.len(), 1, "{via:?}: {kept:?}");
        assert_eq!(kept[0].batch, ide);
        assert!(
            matches!(
                kept[0].outcome,
                BatchOutcome::Completed | BatchOutcome::NotSent
            ),
            "{via:?}: {kept:?}"
        );
        let stats = d.stats(&client).unwrap();
        assert_eq!(
            (stats.unclaimed_batches_held, stats.unclaimed_batches_lost),
            (0, 0)
        );
        d.close(client, true).unwrap();
    }
}

/// EC-4: a delivery read arrives decoded (EC-3), is acknowledged and confirmed, and a second
/// decision on it is refused locally.
pub fn ec_4_delivery_acked<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let client = connected(&d, &lb, via);
        let mut consumer = d
            .consumer(
                &client,
                ConsumerSpec::new("tenant", EMITTER, emitter_fields()),
            )
            .unwrap();
        let delivery = d
            .next_delivery(&mut consumer, WAIT)
            .unwrap()
            .expect("the consumer goes on");
        // Decoded (EC-3): the rows are exactly those the cluster emitted for it.
        let ids = delivery
            .batch
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::UInt64Array>()
            .expect("`id` is a U64 column")
            .values()
            .to_vec();
        assert_eq!(
            ids,
            delivery_ids(token_number(&delivery.identity)),
            "{via:?}"
        );
        assert_eq!(
            delivery.batch.num_rows(),
            delivery.members as usize,
            "{via:?}"
        );
        let r = d
            .settle(&mut consumer, delivery.reference, Decision::Ack)
            .unwrap();
        assert_eq!(r, SettleResult::Confirmed, "{via:?}");
        // Settled once: a second decision on the same attempt is refused locally.
        let again = d.settle(&mut consumer, delivery.reference, Decision::Ack);
        assert!(matches!(again, Err(Error::Settle(_))), "{via:?}: {again:?}");
        d.close_consumer(consumer, WAIT).unwrap();
        d.close(client, true).unwrap();
    }
}

/// How many batches the cluster has taken in.
pub fn ingested(lb: &Loopback) -> usize {
    lb.with_cluster(|c| c.ingested().len())
}

/// Waits until the cluster has taken in `n` batches, then a while longer, and checks it took
/// in no more: what the client holds back stays held.
fn ingested_settles_at(lb: &Loopback, n: usize, what: &str) {
    let end = Instant::now() + WAIT;
    while ingested(lb) < n {
        assert!(Instant::now() < end, "{what}: {n} batches in time");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(ingested(lb), n, "{what}: no more batches went");
}

/// P-4: outcomes handed to pending batches hold the credit until read (or given up).
pub fn p_4_outcomes_hold_the_credit<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let client = connected(&d, &lb, via);
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(2, 1 << 20);
        let producer = d.producer(&client, spec).unwrap();
        assert_eq!(producer.description().granted_batches, 2);
        let n0 = ingested(&lb);
        let mut p: Vec<_> = (0..4u64)
            .map(|i| {
                Some(
                    d.submit_batch(&producer, batch_of::<D>(&producer, &[i]))
                        .unwrap(),
                )
            })
            .collect();
        // The first two complete and their outcomes reach their handles unread: they hold
        // the whole grant, so the other two stay unsent.
        ingested_settles_at(&lb, n0 + 2, "the first two");
        // And those two fill the room for batches not yet sent: a fifth waits.
        let fifth = d.submit_batch_timeout(
            &producer,
            batch_of::<D>(&producer, &[4]),
            Duration::from_millis(300),
        );
        assert!(
            matches!(fifth, Err(Error::TimedOut)),
            "{via:?}: the fifth waits for room"
        );
        // Reading the second gives its credit back, and exactly one more batch goes.
        let mut second = p[1].take().unwrap();
        assert_eq!(
            d.batch_outcome(&mut second, WAIT).unwrap(),
            BatchOutcome::Completed
        );
        ingested_settles_at(&lb, n0 + 3, "after one read");
        // Giving the first up unread gives its credit back too.
        drop(p[0].take());
        ingested_settles_at(&lb, n0 + 4, "after one dropped");
        for (i, b) in p.iter_mut().enumerate().skip(2) {
            let mut b = b.take().unwrap();
            assert_eq!(
                d.batch_outcome(&mut b, WAIT).unwrap(),
                BatchOutcome::Completed,
                "{via:?} {i}"
            );
        }
        let mut fifth = d
            .submit_batch(&producer, batch_of::<D>(&producer, &[4]))
            .unwrap();
        assert_eq!(
            d.batch_outcome(&mut fifth, WAIT).unwrap(),
            BatchOutcome::Completed
        );
        assert_eq!(ingested(&lb), n0 + 5);
        // Handles dropped at once, mostly before their outcomes are in: each outcome finds
        // nobody waiting and gives its credit back, so none stalls the producer.
        for i in 0..10u64 {
            drop(
                d.submit_batch(&producer, batch_of::<D>(&producer, &[i]))
                    .unwrap(),
            );
        }
        ingested_settles_at(&lb, n0 + 15, "after ten dropped at once");
        assert!(lb.with_cluster(|c| c.misbehaviour().is_empty()));
        d.close(client, true).unwrap();
    }
}

/// C-10: a submission given up while it waits for room is never taken.
pub fn c_10_withdrawn_never_taken<D: Driver>(via: Via) {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    let d = D::new();
    let client = connected(&d, &lb, via);
    let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20);
    let producer = d.producer(&client, spec).unwrap();
    // The node's frames are lost from now on: no outcome frees the credit.
    lb.drop_replies(0, true);
    let mut first = d
        .submit_batch(&producer, batch_of::<D>(&producer, &[1]))
        .unwrap();
    let mut second = d
        .submit_batch(&producer, batch_of::<D>(&producer, &[2]))
        .unwrap();
    // The third finds one batch out and one waiting: it waits for room and gives up.
    let third = d.submit_batch_timeout(
        &producer,
        batch_of::<D>(&producer, &[3]),
        Duration::from_millis(300),
    );
    assert!(
        matches!(third, Err(Error::TimedOut)),
        "the third waits for room: {third:?}"
    );
    // The session is cut: the first batch's outcome is unknown (P-8), the second goes on the
    // restored producer, and the withdrawn third was never taken.
    lb.drop_replies(0, false);
    lb.cut_streams(0);
    assert_eq!(
        d.batch_outcome(&mut first, WAIT).unwrap(),
        BatchOutcome::Unknown
    );
    assert_eq!(
        d.batch_outcome(&mut second, WAIT).unwrap(),
        BatchOutcome::Completed
    );
    let mut fourth = d
        .submit_batch(&producer, batch_of::<D>(&producer, &[4]))
        .unwrap();
    assert_eq!(
        D::batch_id(&fourth).0,
        D::batch_id(&second).0 + 1,
        "no name was given to the withdrawn submission"
    );
    assert_eq!(
        d.batch_outcome(&mut fourth, WAIT).unwrap(),
        BatchOutcome::Completed
    );
    d.close(client, true).unwrap();
}

/// P-8: a producer's interruption and restoration reach observers.
pub fn p_8_interruption_and_restoration_observed<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let client = connected(&d, &lb, via);
        let mut events = d.events(&client);
        let producer = d
            .producer(
                &client,
                ProducerSpec::new("tenant", INGESTOR, ingestor_fields()),
            )
            .unwrap();
        lb.cut_streams(lb.leader());
        let mut seen = Vec::new();
        while seen.len() < 2 {
            match d.next_driver_event(&mut events, WAIT) {
                Some(DriverEvent::Producer {
                    producer: id,
                    event,
                }) => {
                    assert_eq!(id, producer.id());
                    seen.push(event);
                }
                Some(_) => {}
                None => panic!("{via:?}: no producer event within the wait: {seen:?}"),
            }
        }
        assert_eq!(seen[0], ProducerEvent::Interrupted, "{via:?}: {seen:?}");
        assert!(
            matches!(seen[1], ProducerEvent::Restored(_)),
            "{via:?}: {seen:?}"
        );
        d.close(client, true).unwrap();
    }
}

/// EC-5: a consumer's interruption is surfaced before any batch of its new attachment, to an
/// application that reads deliveries alone as much as to observers. In band, every delivery
/// of the new attachment names a later attachment than the deliveries before the loss (and a
/// reference of the old attachment can no longer be settled); to observers, `Interrupted`
/// comes before `Restored`.
pub fn ec_5_interruption_surfaced_before_the_new_attachments_batches<D: Driver>() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let client = connected(&d, &lb, via);
        let mut events = d.events(&client);
        let mut consumer = d
            .consumer(
                &client,
                ConsumerSpec::new("tenant", EMITTER, emitter_fields()),
            )
            .unwrap();
        let first = d
            .next_delivery(&mut consumer, WAIT)
            .unwrap()
            .expect("the consumer goes on");
        let r = d
            .settle(&mut consumer, first.reference, Decision::Ack)
            .unwrap();
        assert_eq!(r, SettleResult::Confirmed, "{via:?}");
        let old = first.reference.attachment;
        lb.cut_streams(lb.leader());
        // A delivery read ahead before the loss may still come; the first one of the new
        // attachment names it.
        let end = Instant::now() + WAIT;
        let renewed = loop {
            let left = end.saturating_duration_since(Instant::now());
            let next = d
                .next_delivery(&mut consumer, left)
                .unwrap()
                .unwrap_or_else(|| panic!("{via:?}: the consumer ended"));
            if next.reference.attachment != old {
                break next;
            }
            assert!(
                Instant::now() < end,
                "{via:?}: no delivery of a new attachment"
            );
        };
        assert!(
            renewed.reference.attachment > old,
            "{via:?}: {} after {old}",
            renewed.reference.attachment
        );
        let r = d
            .settle(&mut consumer, renewed.reference, Decision::Ack)
            .unwrap();
        assert_eq!(r, SettleResult::Confirmed, "{via:?}");
        // The observers heard it too, in order.
        let mut seen = Vec::new();
        while !seen.iter().any(|e| matches!(e, ConsumerEvent::Restored(_))) {
            let left = end.saturating_duration_since(Instant::now());
            match d.next_driver_event(&mut events, left) {
                Some(DriverEvent::Consumer { event, .. }) => seen.push(event),
                Some(_) => {}
                None => panic!("{via:?}: no restoration reached the observers: {seen:?}"),
            }
        }
        assert_eq!(
            seen.first(),
            Some(&ConsumerEvent::Interrupted),
            "{via:?}: {seen:?}"
        );
        d.close_consumer(consumer, WAIT).unwrap();
        d.close(client, true).unwrap();
    }
}

/// Tests of `tests/dataplane.rs`, for `tokio` or `blocking`.
#[macro_export]
macro_rules! dataplane_tests {
    (tokio) => {
        #[test]
        fn p_5_a_batch_submitted_over_loopback_completes() {
            $crate::run!(Tokio, dataplane::p_5_batch_completes())
        }
        #[test]
        fn p_7_an_outcome_stays_retrievable_after_its_wait_was_given_up_over_loopback() {
            $crate::run!(
                Tokio,
                dataplane::p_7_outcome_retrievable_after_a_given_up_wait()
            )
        }
        #[test]
        fn p_7_a_dropped_batch_handle_leaves_its_outcome_for_unclaimed_batches_over_loopback() {
            $crate::run!(
                Tokio,
                dataplane::p_7_dropped_handles_leave_their_outcomes_for_unclaimed_batches()
            )
        }
        #[test]
        fn ec_4_a_delivery_read_over_loopback_is_acked_and_confirmed() {
            $crate::run!(Tokio, dataplane::ec_4_delivery_acked())
        }
        #[test]
        fn p_4_outcomes_handed_to_pending_batches_hold_the_credit_until_read_over_loopback() {
            $crate::run!(Tokio, dataplane::p_4_outcomes_hold_the_credit())
        }
        #[test]
        fn c_10_a_submission_dropped_while_it_waits_for_room_is_never_taken() {
            $crate::run!(Tokio, dataplane::c_10_withdrawn_never_taken(Via::Grpc))
        }
        #[test]
        fn ec_5_a_consumers_interruption_is_surfaced_before_its_new_attachments_batches_over_loopback(
        ) {
            $crate::run!(
                Tokio,
                dataplane::ec_5_interruption_surfaced_before_the_new_attachments_batches()
            )
        }
        #[test]
        fn p_8_a_producers_interruption_and_restoration_reach_observers_over_loopback() {
            $crate::run!(
                Tokio,
                dataplane::p_8_interruption_and_restoration_observed()
            )
        }
    };
    (blocking) => {
        #[test]
        fn p_8_a_producers_interruption_and_restoration_reach_observers_blocking() {
            $crate::run!(
                Blocking,
                dataplane::p_8_interruption_and_restoration_observed()
            )
        }
        #[test]
        fn ec_5_a_consumers_interruption_is_surfaced_before_its_new_attachments_batches_blocking(
        ) {
            $crate::run!(
                Blocking,
                dataplane::ec_5_interruption_surfaced_before_the_new_attachments_batches()
            )
        }
        #[test]
        fn p_5_a_batch_submitted_over_loopback_completes_blocking() {
            $crate::run!(Blocking, dataplane::p_5_batch_completes())
        }
        #[test]
        fn p_7_an_outcome_stays_retrievable_after_its_wait_was_given_up_blocking() {
            $crate::run!(
                Blocking,
                dataplane::p_7_outcome_retrievable_after_a_given_up_wait()
            )
        }
        #[test]
        fn p_7_a_dropped_batch_handle_leaves_its_outcome_for_unclaimed_batches_blocking() {
            $crate::run!(
                Blocking,
                dataplane::p_7_dropped_handles_leave_their_outcomes_for_unclaimed_batches()
            )
        }
        #[test]
        fn p_4_outcomes_handed_to_pending_batches_hold_the_credit_until_read_blocking() {
            $crate::run!(Blocking, dataplane::p_4_outcomes_hold_the_credit())
        }
        #[test]
        fn ec_4_a_delivery_read_over_loopback_is_acked_and_confirmed_blocking() {
            $crate::run!(Blocking, dataplane::ec_4_delivery_acked())
        }
        #[test]
        fn c_10_a_submission_withdrawn_while_it_waits_for_room_is_never_taken_blocking() {
            $crate::run!(
                Blocking,
                dataplane::c_10_withdrawn_never_taken(Via::Console(WsAuth::Header))
            )
        }
    };
}
