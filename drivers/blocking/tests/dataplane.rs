//! Producers and emitter consumers through the blocking API, over real WebSockets on
//! 127.0.0.1 against the loopback cluster: a submitted batch completes, submissions beyond
//! the credit wait for room in order, one withdrawn while it waits is never taken, a
//! producer's interruption and restoration reach observers, and a delivery arrives decoded
//! with the rows the cluster emitted and is acknowledged. Every test is bounded.

use nervix_blocking::{
    BatchOutcome, Client, Config, ConsumerSpec, Credentials, Decision, DriverEvent, Error,
    Producer, ProducerEvent, ProducerSpec, SettleResult, Submission, WsAuth,
};
use nervix_harness::cluster::{
    delivery_ids, emitter_fields, ingestor_fields, token_number, EMITTER, INGESTOR,
};
use nervix_loopback::{Loopback, LoopbackConfig};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

/// Runs `f` on a thread of its own; the test fails when it has not ended within a minute.
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    nervix_loopback::bounded(Duration::from_secs(60), f)
}

fn connected(lb: &Loopback) -> Client {
    let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
    let c = Config::new(&seeds, Credentials::new("nervix", "nervix"))
        .unwrap()
        .with_auth(WsAuth::Header)
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    Client::connect(c).unwrap()
}

fn started() -> Arc<Loopback> {
    Arc::new(Loopback::start(LoopbackConfig::default()).unwrap())
}

/// A batch of the ingestor's fields with ids `ids`.
fn batch_of(producer: &Producer, ids: &[u64]) -> Submission {
    let mut b = producer.batch_builder();
    b.column("id", ids).unwrap();
    let names: Vec<Option<&str>> = ids.iter().map(|_| Some("n")).collect();
    b.nullable_column("name", &names).unwrap();
    b.into()
}

#[test]
fn p_5_a_batch_submitted_over_loopback_completes_blocking() {
    let lb = started();
    bounded(move || {
        let client = connected(&lb);
        let producer = client
            .producer(ProducerSpec::new("tenant", INGESTOR, ingestor_fields()))
            .unwrap();
        assert_eq!(&producer.description().fields[..], &ingestor_fields()[..]);
        // A batch for other fields is refused locally, naming the column; nothing is sent.
        let mut wrong = producer.batch_builder();
        assert!(wrong.column("id", &[1u64, 2]).is_ok());
        let refused = producer.submit(wrong);
        assert!(matches!(refused, Err(Error::Submit(_))), "{refused:?}");

        let mut pending = producer.submit(batch_of(&producer, &[7, 8, 9])).unwrap();
        assert_eq!(pending.wait(WAIT).unwrap(), BatchOutcome::Completed);
        assert_eq!(producer.close(WAIT).unwrap(), ProducerEvent::Closed);
        client.close(true).unwrap();
    });
}

#[test]
fn p_4_submissions_beyond_the_credit_wait_for_room_and_keep_their_order_blocking() {
    let lb = started();
    bounded(move || {
        let client = connected(&lb);
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20);
        let producer = Arc::new(client.producer(spec).unwrap());
        assert_eq!(producer.description().granted_batches, 1);
        // Five submissions from five threads against a credit of one batch: none is refused
        // as full, each is taken once there is room, and each thread reads its outcome,
        // which is what gives the credit back (P-4).
        let threads: Vec<_> = (0..5u64)
            .map(|i| {
                let p = producer.clone();
                std::thread::spawn(move || {
                    let mut b = p.submit(batch_of(&p, &[i])).unwrap();
                    (b.id().0, b.wait(WAIT))
                })
            })
            .collect();
        let mut done: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        done.sort_by_key(|d| d.0);
        let ids: Vec<u64> = done.iter().map(|d| d.0).collect();
        assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
        for (_, o) in done {
            assert_eq!(o.unwrap(), BatchOutcome::Completed);
        }
        // In the order they were made: one thread, one after another, reading as it goes.
        let mut last = 0;
        for i in 0..4u64 {
            let mut b = producer.submit(batch_of(&producer, &[i])).unwrap();
            assert!(b.id().0 > last, "{} after {last}", b.id().0);
            last = b.id().0;
            assert_eq!(b.wait(WAIT).unwrap(), BatchOutcome::Completed);
        }
        client.close(true).unwrap();
    });
}

/// How many batches the cluster has taken in.
fn ingested(lb: &Loopback) -> usize {
    lb.with_cluster(|c| c.ingested().len())
}

/// Waits until the cluster has taken in `n` batches, then a while longer, and checks it took
/// in no more: what the client holds back stays held.
fn ingested_settles_at(lb: &Loopback, n: usize, what: &str) {
    let end = std::time::Instant::now() + WAIT;
    while ingested(lb) < n {
        assert!(
            std::time::Instant::now() < end,
            "{what}: {n} batches in time"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(ingested(lb), n, "{what}: no more batches went");
}

#[test]
fn p_4_outcomes_handed_to_pending_batches_hold_the_credit_until_read_blocking() {
    let lb = started();
    bounded(move || {
        let client = connected(&lb);
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(2, 1 << 20);
        let producer = client.producer(spec).unwrap();
        assert_eq!(producer.description().granted_batches, 2);
        let n0 = ingested(&lb);
        let mut p: Vec<_> = (0..4u64)
            .map(|i| Some(producer.submit(batch_of(&producer, &[i])).unwrap()))
            .collect();
        // The first two complete and their outcomes reach their handles unread: they hold
        // the whole grant, so the other two stay unsent.
        ingested_settles_at(&lb, n0 + 2, "the first two");
        // And those two fill the room for batches not yet sent: a fifth waits.
        let fifth = producer.submit_timeout(batch_of(&producer, &[4]), Duration::from_millis(300));
        assert!(
            matches!(fifth, Err(Error::TimedOut)),
            "the fifth waits for room"
        );
        // Reading the second gives its credit back, and exactly one more batch goes.
        let mut second = p[1].take().unwrap();
        assert_eq!(second.wait(WAIT).unwrap(), BatchOutcome::Completed);
        ingested_settles_at(&lb, n0 + 3, "after one read");
        // Giving the first up unread gives its credit back too.
        drop(p[0].take());
        ingested_settles_at(&lb, n0 + 4, "after one dropped");
        for b in p.iter_mut().skip(2) {
            assert_eq!(
                b.take().unwrap().wait(WAIT).unwrap(),
                BatchOutcome::Completed
            );
        }
        let mut fifth = producer.submit(batch_of(&producer, &[4])).unwrap();
        assert_eq!(fifth.wait(WAIT).unwrap(), BatchOutcome::Completed);
        assert_eq!(ingested(&lb), n0 + 5);
        // Handles dropped at once, mostly before their outcomes are in: each outcome finds
        // nobody waiting and gives its credit back, so none stalls the producer.
        for i in 0..10u64 {
            drop(producer.submit(batch_of(&producer, &[i])).unwrap());
        }
        ingested_settles_at(&lb, n0 + 15, "after ten dropped at once");
        assert!(lb.with_cluster(|c| c.misbehaviour().is_empty()));
        client.close(true).unwrap();
    });
}

#[test]
fn c_10_a_submission_withdrawn_while_it_waits_for_room_is_never_taken_blocking() {
    let lb = started();
    bounded(move || {
        let client = connected(&lb);
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20);
        let producer = client.producer(spec).unwrap();
        // The node's frames are lost from now on: no outcome frees the credit.
        lb.drop_replies(0, true);
        let mut first = producer.submit(batch_of(&producer, &[1])).unwrap();
        let mut second = producer.submit(batch_of(&producer, &[2])).unwrap();
        // The third finds one batch out and one waiting: it waits for room and gives up.
        let third = producer.submit_timeout(batch_of(&producer, &[3]), Duration::from_millis(300));
        assert!(matches!(third, Err(Error::TimedOut)), "{third:?}");
        // The session is cut: the first batch's outcome is unknown (P-8), the second goes on
        // the restored producer, and the withdrawn third was never taken.
        lb.drop_replies(0, false);
        lb.cut_streams(0);
        assert_eq!(first.wait(WAIT).unwrap(), BatchOutcome::Unknown);
        assert_eq!(second.wait(WAIT).unwrap(), BatchOutcome::Completed);
        let mut fourth = producer.submit(batch_of(&producer, &[4])).unwrap();
        assert_eq!(
            fourth.id().0,
            second.id().0 + 1,
            "no name was given to the withdrawn submission"
        );
        assert_eq!(fourth.wait(WAIT).unwrap(), BatchOutcome::Completed);
        client.close(true).unwrap();
    });
}

#[test]
fn p_8_a_producers_interruption_and_restoration_reach_observers_blocking() {
    let lb = started();
    bounded(move || {
        let client = connected(&lb);
        let events = client.events().unwrap();
        let producer = client
            .producer(ProducerSpec::new("tenant", INGESTOR, ingestor_fields()))
            .unwrap();
        lb.cut_streams(lb.leader());
        let mut seen = Vec::new();
        while seen.len() < 2 {
            match events.next_timeout(WAIT) {
                Some(DriverEvent::Producer {
                    producer: id,
                    event,
                }) => {
                    assert_eq!(id, producer.id());
                    seen.push(event);
                }
                Some(_) => {}
                None => panic!("no producer event within the wait: {seen:?}"),
            }
        }
        assert_eq!(seen[0], ProducerEvent::Interrupted, "{seen:?}");
        assert!(matches!(seen[1], ProducerEvent::Restored(_)), "{seen:?}");
        client.close(true).unwrap();
    });
}

#[test]
fn ec_4_a_delivery_read_over_loopback_is_acked_and_confirmed_blocking() {
    let lb = started();
    bounded(move || {
        let client = connected(&lb);
        let mut consumer = client
            .consumer(ConsumerSpec::new("tenant", EMITTER, emitter_fields()))
            .unwrap();
        let d = consumer
            .next_delivery(WAIT)
            .unwrap()
            .expect("the consumer goes on");
        // Decoded (EC-3): the rows are exactly those the cluster emitted for it.
        let ids = d
            .batch
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::UInt64Array>()
            .expect("`id` is a U64 column")
            .values()
            .to_vec();
        assert_eq!(ids, delivery_ids(token_number(&d.identity)));
        assert_eq!(d.batch.num_rows(), d.members as usize);
        let r = consumer.settle(d.reference, Decision::Ack).unwrap();
        assert_eq!(r, SettleResult::Confirmed);
        // Settled once: a second decision on the same attempt is refused locally.
        let again = consumer.settle(d.reference, Decision::Ack);
        assert!(matches!(again, Err(Error::Settle(_))), "{again:?}");
        consumer.close(WAIT).unwrap();
        client.close(true).unwrap();
    });
}
