//! Producers and emitter consumers through the async API, over real sockets on 127.0.0.1
//! against the loopback cluster, on both transports: a submitted batch completes, a delivery
//! arrives decoded with the rows the cluster emitted, and an ACK is confirmed. Every test is
//! bounded.

use nervix_harness::cluster::{
    delivery_ids, emitter_fields, ingestor_fields, token_number, EMITTER, INGESTOR,
};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_tokio::{
    BatchOutcome, Client, Config, ConsumerSpec, Credentials, Decision, DriverEvent, Error,
    ProducerEvent, ProducerSpec, SettleResult, Transport, WsAuth,
};
use std::future::Future;
use std::time::Duration;

const TRANSPORTS: [Transport; 2] = [Transport::Grpc, Transport::WebSocket(WsAuth::Header)];

fn block<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test ends within its bound")
}

async fn connected(lb: &Loopback, transport: Transport) -> Client {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let c = Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    Client::connect(c).await.unwrap()
}

async fn within<F: Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .unwrap_or_else(|_| panic!("{what} within ten seconds"))
}

#[test]
fn p_5_a_batch_submitted_over_loopback_completes() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    block(async {
        for t in TRANSPORTS {
            let client = connected(&lb, t).await;
            let producer = within(
                "the open",
                client.producer(ProducerSpec::new("tenant", INGESTOR, ingestor_fields())),
            )
            .await
            .unwrap();
            assert_eq!(&producer.description().fields[..], &ingestor_fields()[..]);

            // A batch for other fields is refused locally, naming the column; nothing is sent.
            let mut wrong = producer.batch_builder();
            assert!(wrong.column("id", &[1u64, 2]).is_ok());
            let refused = producer.submit(wrong).await;
            assert!(
                matches!(refused, Err(Error::Submit(_))),
                "{t:?}: a batch without its nullable column given is refused: {refused:?}"
            );

            let mut b = producer.batch_builder();
            b.column("id", &[7u64, 8, 9]).unwrap();
            b.nullable_column("name", &[Some("a"), None, Some("c")])
                .unwrap();
            let pending = producer.submit(b).await.unwrap();
            let outcome = within("the outcome", pending).await.unwrap();
            assert_eq!(outcome, BatchOutcome::Completed, "{t:?}");

            let last = within("the close", producer.close()).await.unwrap();
            assert_eq!(last, ProducerEvent::Closed, "{t:?}");
            client.close(true).await.unwrap();
        }
    });
}

#[test]
fn ec_4_a_delivery_read_over_loopback_is_acked_and_confirmed() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    block(async {
        for t in TRANSPORTS {
            let client = connected(&lb, t).await;
            let mut consumer = within(
                "the open",
                client.consumer(ConsumerSpec::new("tenant", EMITTER, emitter_fields())),
            )
            .await
            .unwrap();

            let d = within("a delivery", consumer.next_delivery())
                .await
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
            assert_eq!(ids, delivery_ids(token_number(&d.identity)), "{t:?}");
            assert_eq!(d.batch.num_rows(), d.members as usize, "{t:?}");

            let r = within(
                "the settlement",
                consumer.settle(d.reference, Decision::Ack),
            )
            .await
            .unwrap();
            assert_eq!(r, SettleResult::Confirmed, "{t:?}");
            // Settled once: a second decision on the same attempt is refused locally.
            let again = consumer.settle(d.reference, Decision::Ack).await;
            assert!(matches!(again, Err(Error::Settle(_))), "{t:?}: {again:?}");

            within("the close", consumer.close()).await.unwrap();
            client.close(true).await.unwrap();
        }
    });
}

/// A batch of the ingestor's fields with ids `ids`.
fn batch_of(producer: &nervix_tokio::Producer, ids: &[u64]) -> nervix_tokio::Submission {
    let mut b = producer.batch_builder();
    b.column("id", ids).unwrap();
    let names: Vec<Option<&str>> = ids.iter().map(|_| Some("n")).collect();
    b.nullable_column("name", &names).unwrap();
    b.into()
}

#[test]
fn p_4_submissions_beyond_the_credit_wait_for_room_and_keep_their_order_over_loopback() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    block(async {
        for t in TRANSPORTS {
            let client = connected(&lb, t).await;
            let spec =
                ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20);
            let producer = within("the open", client.producer(spec)).await.unwrap();
            assert_eq!(producer.description().granted_batches, 1);
            // Five at once against a credit of one batch: none is refused as full; each
            // waits its turn, they are taken in the order they were made, and each outcome
            // is read as it comes, which is what gives the credit back (P-4).
            let submits = (0..5u64).map(|i| {
                let producer = &producer;
                async move {
                    let p = producer.submit(batch_of(producer, &[i])).await;
                    let p = p.unwrap_or_else(|e| panic!("{t:?}: a submission failed: {e}"));
                    (p.id(), p.await)
                }
            });
            let done = within("the batches", futures_util::future::join_all(submits)).await;
            let ids: Vec<_> = done.iter().map(|(id, _)| *id).collect();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{t:?}: {ids:?}");
            for (_, o) in done {
                assert_eq!(o.unwrap(), BatchOutcome::Completed);
            }
            client.close(true).await.unwrap();
        }
    });
}

/// How many batches the cluster has taken in.
fn ingested(lb: &Loopback) -> usize {
    lb.with_cluster(|c| c.ingested().len())
}

/// Waits until the cluster has taken in `n` batches, then a while longer, and checks it took
/// in no more: what the client holds back stays held.
async fn ingested_settles_at(lb: &Loopback, n: usize, what: &str) {
    within(what, async {
        while ingested(lb) < n {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ingested(lb), n, "{what}: no more batches went");
}

#[test]
fn p_4_outcomes_handed_to_pending_batches_hold_the_credit_until_read_over_loopback() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    block(async {
        for t in TRANSPORTS {
            let client = connected(&lb, t).await;
            let spec =
                ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(2, 1 << 20);
            let producer = within("the open", client.producer(spec)).await.unwrap();
            assert_eq!(producer.description().granted_batches, 2);
            let n0 = ingested(&lb);
            let mut p: Vec<_> = Vec::new();
            for i in 0..4u64 {
                p.push(Some(
                    within("a submission", producer.submit(batch_of(&producer, &[i])))
                        .await
                        .unwrap(),
                ));
            }
            // The first two complete and their outcomes reach their handles unread: they
            // hold the whole grant, so the other two stay unsent.
            ingested_settles_at(&lb, n0 + 2, "the first two").await;
            // And those two fill the room for batches not yet sent: a fifth waits.
            let fifth = tokio::time::timeout(
                Duration::from_millis(300),
                producer.submit(batch_of(&producer, &[4])),
            )
            .await;
            assert!(fifth.is_err(), "{t:?}: the fifth waits for room");
            // Reading the second gives its credit back, and exactly one more batch goes.
            let second = p[1].take().unwrap();
            assert_eq!(
                within("the second", second).await.unwrap(),
                BatchOutcome::Completed
            );
            ingested_settles_at(&lb, n0 + 3, "after one read").await;
            // Giving the first up unread gives its credit back too.
            drop(p[0].take());
            ingested_settles_at(&lb, n0 + 4, "after one dropped").await;
            for (i, b) in p.iter_mut().enumerate().skip(2) {
                let b = b.take().unwrap();
                assert_eq!(
                    within("a later one", b).await.unwrap(),
                    BatchOutcome::Completed,
                    "{t:?} {i}"
                );
            }
            let fifth = within("the fifth", producer.submit(batch_of(&producer, &[4])))
                .await
                .unwrap();
            assert_eq!(
                within("its outcome", fifth).await.unwrap(),
                BatchOutcome::Completed
            );
            assert_eq!(ingested(&lb), n0 + 5);
            // Handles dropped at once, mostly before their outcomes are in: each outcome
            // finds nobody waiting and gives its credit back, so none stalls the producer.
            for i in 0..10u64 {
                drop(
                    within("a submission", producer.submit(batch_of(&producer, &[i])))
                        .await
                        .unwrap(),
                );
            }
            ingested_settles_at(&lb, n0 + 15, "after ten dropped at once").await;
            assert!(lb.with_cluster(|c| c.misbehaviour().is_empty()));
            client.close(true).await.unwrap();
        }
    });
}

#[test]
fn c_10_a_submission_dropped_while_it_waits_for_room_is_never_taken() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    block(async {
        let client = connected(&lb, Transport::Grpc).await;
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20);
        let producer = within("the open", client.producer(spec)).await.unwrap();
        // The node's frames are lost from now on: no outcome frees the credit.
        lb.drop_replies(0, true);
        let first = producer.submit(batch_of(&producer, &[1])).await.unwrap();
        let second = producer.submit(batch_of(&producer, &[2])).await.unwrap();
        // The third finds one batch out and one waiting: it waits for room, and is dropped.
        let third = tokio::time::timeout(
            Duration::from_millis(300),
            producer.submit(batch_of(&producer, &[3])),
        )
        .await;
        assert!(third.is_err(), "the third waits for room: {third:?}");
        // The session is cut: the first batch's outcome is unknown (P-8), the second goes on
        // the restored producer, and the dropped third was never taken.
        lb.drop_replies(0, false);
        lb.cut_streams(0);
        assert_eq!(
            within("the first", first).await.unwrap(),
            BatchOutcome::Unknown
        );
        let second_id = second.id();
        assert_eq!(
            within("the second", second).await.unwrap(),
            BatchOutcome::Completed
        );
        let fourth = producer.submit(batch_of(&producer, &[4])).await.unwrap();
        assert_eq!(
            fourth.id().0,
            second_id.0 + 1,
            "no name was given to the dropped submission"
        );
        assert_eq!(
            within("the fourth", fourth).await.unwrap(),
            BatchOutcome::Completed
        );
        client.close(true).await.unwrap();
    });
}

#[test]
fn p_8_a_producers_interruption_and_restoration_reach_observers_over_loopback() {
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    block(async {
        for t in TRANSPORTS {
            let client = connected(&lb, t).await;
            let mut events = client.events();
            let producer = within(
                "the open",
                client.producer(ProducerSpec::new("tenant", INGESTOR, ingestor_fields())),
            )
            .await
            .unwrap();
            lb.cut_streams(lb.leader());
            let mut seen = Vec::new();
            while seen.len() < 2 {
                match within("a producer event", events.recv()).await {
                    Ok(DriverEvent::Producer {
                        producer: id,
                        event,
                    }) => {
                        assert_eq!(id, producer.id());
                        seen.push(event);
                    }
                    Ok(_) => {}
                    Err(e) => panic!("{t:?}: {e}"),
                }
            }
            assert_eq!(seen[0], ProducerEvent::Interrupted, "{t:?}: {seen:?}");
            assert!(
                matches!(seen[1], ProducerEvent::Restored(_)),
                "{t:?}: {seen:?}"
            );
            client.close(true).await.unwrap();
        }
    });
}
