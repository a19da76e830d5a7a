//! Producers and emitter consumers through the blocking API, over real WebSockets on
//! 127.0.0.1 against the loopback cluster. The scenarios are written once in
//! `nervix-driver-tests`, for both drivers; submissions made from several threads at once are
//! this driver's own. Every test is bounded.

use nervix_blocking::{BatchOutcome, ProducerSpec};
use nervix_driver_tests::dataplane::{batch_of, connected, WAIT};
use nervix_driver_tests::{scenario, Blocking, Via, WsAuth};
use nervix_harness::cluster::{ingestor_fields, INGESTOR};
use nervix_loopback::{Loopback, LoopbackConfig};
use std::sync::Arc;

nervix_driver_tests::dataplane_tests!(blocking);

#[test]
fn p_4_submissions_beyond_the_credit_wait_for_room_and_keep_their_order_blocking() {
    scenario(|| {
        let lb = Loopback::start(LoopbackConfig::default()).unwrap();
        let client = connected(&Blocking, &lb, Via::Console(WsAuth::Header));
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
                    let mut b = p.submit(batch_of::<Blocking>(&p, &[i])).unwrap();
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
            let mut b = producer
                .submit(batch_of::<Blocking>(&producer, &[i]))
                .unwrap();
            assert!(b.id().0 > last, "{} after {last}", b.id().0);
            last = b.id().0;
            assert_eq!(b.wait(WAIT).unwrap(), BatchOutcome::Completed);
        }
        client.close(true).unwrap();
    });
}
