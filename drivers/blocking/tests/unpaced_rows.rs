//! The loopback cluster's unpaced rows (`LoopbackConfig::unpaced_rows`) through a
//! subscription iterator over the console: every row arrives once, in order, with no gap,
//! however fast the server sends, and a reader that keeps up loses nothing to the smallest
//! budget the engine allows (S-8). Not timing tests: they count and compare row numbers.

use nervix_blocking::{Client, Config, Credentials, SubscriptionEvent};
use nervix_loopback::{bounded, Loopback, LoopbackConfig};
use nervix_protocol::rows::Value;
use std::time::Duration;

fn rows_in_order(rows: u64, size: u64, columns: usize, budget: usize) {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        rows: (Duration::from_secs(3600), size),
        unpaced_rows: true,
        ..LoopbackConfig::default()
    })
    .expect("the loopback cluster");
    let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
    let mut config = Config::new(&seeds, Credentials::new("nervix", "nervix")).expect("a config");
    config.client.subscription_bytes = budget;
    let client = Client::connect(config).expect("a session");
    client.select_domain(Some("tenant")).expect("a domain");
    let mut s = client
        .subscribe(&format!("CREATE SUBSCRIPTION fast FROM wide{columns}"))
        .expect("a subscription");
    let mut next = 1u64;
    let mut short = 0u64;
    while next <= rows {
        match s
            .next_timeout(Duration::from_secs(30))
            .expect("in time")
            .expect("the subscription goes on")
        {
            SubscriptionEvent::Rows(batch) => {
                if batch.len() as u64 != size {
                    short += 1;
                }
                for row in batch.rows() {
                    let first = row.cell(0);
                    assert!(
                        matches!(first, Some(Value::U64(n)) if n == next),
                        "row {next}: {first:?}"
                    );
                    next += 1;
                }
            }
            SubscriptionEvent::Opened { .. } => assert_eq!(next, 1, "a second opening"),
            // An `Overflow` gap among them: the driver let the budget drop rows.
            other => panic!("after row {}: {other:?}", next - 1),
        }
    }
    assert!(short <= 1, "{short} batches of other sizes");
    // A call of the application is answered while the rows go on arriving: it waits behind
    // a bounded number of bytes of frames, not behind the inbox's whole count of them.
    client.stats().expect("stats");
    drop(s);
    let _ = client.close(false);
}

#[test]
fn unpaced_rows_arrive_in_order_without_gaps_blocking() {
    bounded(Duration::from_secs(120), || {
        rows_in_order(20_000, 100, 16, 16 << 20)
    });
}

/// Batches of 64 columns (about 900 KiB each) against one frame of the frame limit, the
/// smallest budget the engine allows (four of these batches), and a reader that only reads.
#[test]
fn a_reader_that_keeps_up_loses_nothing_to_the_smallest_budget_blocking() {
    bounded(Duration::from_secs(180), || {
        rows_in_order(120 * 512, 512, 64, 4 << 20)
    });
}
