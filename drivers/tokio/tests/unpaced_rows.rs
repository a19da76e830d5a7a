//! The loopback cluster's unpaced rows (`LoopbackConfig::unpaced_rows`) through a subscription
//! stream, over the console and over gRPC: every row arrives once, in order, with no gap,
//! however fast the server sends. Not timing tests: they count and compare row numbers.

use futures_util::StreamExt;
use nervix_loopback::{bounded, Loopback, LoopbackConfig};
use nervix_protocol::rows::Value;
use nervix_tokio::{Client, Config, Credentials, SubscriptionEvent, Transport, WsAuth};
use std::time::Duration;

/// How one run reads: rows in all, rows of one batch, columns of the relay, and the
/// subscription budget of the client (S-8).
struct Shape {
    rows: u64,
    batch: u64,
    columns: usize,
    budget: usize,
}

/// Rows read per transport: many more than one batch, few enough that the engine's own
/// retention budget (16 MiB) could hold them all, so a gap would be the server's or the
/// driver's fault, not an overflow.
const ALL_HELD: Shape = Shape {
    rows: 20_000,
    batch: 100,
    columns: 16,
    budget: 16 << 20,
};

/// Many batches of 64 columns (about 900 KiB each) against the smallest budget the engine
/// allows, one frame of the frame limit (four of these batches), and a reader that only
/// reads: the driver may check a frame into the engine only as fast as the reader takes them,
/// so nothing overflows. A driver that took in every frame it had at once (up to 64 in a
/// turn) while the stream held two would overflow the budget here.
const KEEPS_UP: Shape = Shape {
    rows: 120 * 512,
    batch: 512,
    columns: 64,
    budget: 4 << 20,
};

fn rows_in_order(transport: Transport, shape: Shape) {
    let Shape {
        rows,
        batch: size,
        columns,
        budget,
    } = shape;
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        rows: (Duration::from_secs(3600), size),
        unpaced_rows: true,
        ..LoopbackConfig::default()
    })
    .expect("the loopback cluster");
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let mut config =
        Config::new(&seeds, Credentials::new("nervix", "nervix"), transport).expect("a config");
    config.client.subscription_bytes = budget;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let client = Client::connect(config).await.expect("a session");
        client
            .select_domain(Some("tenant"))
            .await
            .expect("a domain");
        let mut s = client
            .subscribe(&format!("CREATE SUBSCRIPTION fast FROM wide{columns}"))
            .await
            .expect("a subscription");
        let mut next = 1u64;
        let mut short = 0u64;
        while next <= rows {
            match s.next().await.expect("the subscription goes on") {
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
                        let last = row.cell(columns - 1);
                        assert!(
                            matches!(last, Some(Value::U64(n)) if n == columns as u64 - 1),
                            "row {next}: {last:?}"
                        );
                        next += 1;
                    }
                }
                SubscriptionEvent::Opened { .. } => assert_eq!(next, 1, "a second opening"),
                // An `Overflow` gap among them: the driver let the budget drop rows.
                other => panic!("after row {}: {other:?}", next - 1),
            }
        }
        // Only the first batch, sent with the opening, draws its size (1 to `size` rows);
        // every batch taken unpaced holds exactly `size`.
        assert!(short <= 1, "{short} batches of other sizes");
        // A call of the application is answered while the rows go on arriving.
        client.stats().await.expect("stats");
        drop(s);
        let _ = client.close(false).await;
    });
    // Nothing is recorded per batch in this mode.
    assert!(lb.with_cluster(|c| c.emitted("fast", 1).is_empty()));
}

#[test]
fn unpaced_rows_arrive_in_order_without_gaps_over_websocket() {
    bounded(Duration::from_secs(120), || {
        rows_in_order(Transport::WebSocket(WsAuth::Header), ALL_HELD)
    });
}

#[test]
fn unpaced_rows_arrive_in_order_without_gaps_over_grpc() {
    bounded(Duration::from_secs(120), || {
        rows_in_order(Transport::Grpc, ALL_HELD)
    });
}

#[test]
fn a_reader_that_keeps_up_loses_nothing_to_the_smallest_budget_over_websocket() {
    bounded(Duration::from_secs(180), || {
        rows_in_order(Transport::WebSocket(WsAuth::Header), KEEPS_UP)
    });
}

#[test]
fn a_reader_that_keeps_up_loses_nothing_to_the_smallest_budget_over_grpc() {
    bounded(Duration::from_secs(180), || {
        rows_in_order(Transport::Grpc, KEEPS_UP)
    });
}
