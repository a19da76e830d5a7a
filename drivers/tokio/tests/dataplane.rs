//! Producers and emitter consumers through the async API, over real sockets on 127.0.0.1
//! against the loopback cluster, on both transports. The scenarios are written once in
//! `nervix-driver-tests`, for both drivers; submissions made concurrently as futures, taken in
//! the order they were made, are this driver's own. Every test is bounded.

use nervix_driver_tests::dataplane::{batch_of, connected, WAIT};
use nervix_driver_tests::{Driver, Tokio, BOTH};
use nervix_harness::cluster::{ingestor_fields, INGESTOR};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_tokio::{BatchOutcome, ProducerSpec};

nervix_driver_tests::dataplane_tests!(tokio);

#[test]
fn p_4_submissions_beyond_the_credit_wait_for_room_and_keep_their_order_over_loopback() {
    let d = Tokio::new();
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    for t in BOTH {
        let client = connected(&d, &lb, t);
        let spec = ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20);
        let producer = d.producer(&client, spec).unwrap();
        assert_eq!(producer.description().granted_batches, 1);
        // Five at once against a credit of one batch: none is refused as full; each waits
        // its turn, they are taken in the order they were made, and each outcome is read as
        // it comes, which is what gives the credit back (P-4).
        let submits = (0..5u64).map(|i| {
            let producer = &producer;
            async move {
                let p = producer.submit(batch_of::<Tokio>(producer, &[i])).await;
                let p = p.unwrap_or_else(|e| panic!("{t:?}: a submission failed: {e}"));
                (p.id(), p.await)
            }
        });
        let done = d.block(async {
            tokio::time::timeout(WAIT, futures_util::future::join_all(submits))
                .await
                .expect("the batches within ten seconds")
        });
        let ids: Vec<_> = done.iter().map(|(id, _)| *id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{t:?}: {ids:?}");
        for (_, o) in done {
            assert_eq!(o.unwrap(), BatchOutcome::Completed);
        }
        d.close(client, true).unwrap();
    }
}
