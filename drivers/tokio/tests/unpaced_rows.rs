//! The loopback cluster's unpaced rows (`LoopbackConfig::unpaced_rows`) through a subscription
//! stream, over the console (the mode serves WebSocket only): every row arrives once, in order, with no gap, however
//! fast the server sends. Not a timing test: it counts and compares row numbers.

use futures_util::StreamExt;
use nervix_loopback::{bounded, Loopback, LoopbackConfig};
use nervix_protocol::rows::Value;
use nervix_tokio::{Client, Config, Credentials, SubscriptionEvent, Transport, WsAuth};
use std::time::Duration;

/// Rows read per transport: many more than one batch, few enough that the engine's own
/// retention budget (16 MiB) could hold them all, so a gap would be the server's or the
/// driver's fault, not an overflow.
const ROWS: u64 = 20_000;
const BATCH: u64 = 100;
const COLUMNS: usize = 16;

fn rows_in_order(transport: Transport) {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        rows: (Duration::from_secs(3600), BATCH),
        unpaced_rows: true,
        ..LoopbackConfig::default()
    })
    .expect("the loopback cluster");
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let config =
        Config::new(&seeds, Credentials::new("nervix", "nervix"), transport).expect("a config");
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
            .subscribe(&format!("CREATE SUBSCRIPTION fast FROM wide{COLUMNS}"))
            .await
            .expect("a subscription");
        let mut next = 1u64;
        let mut short = 0u64;
        while next <= ROWS {
            match s.next().await.expect("the subscription goes on") {
                SubscriptionEvent::Rows(batch) => {
                    if batch.len() as u64 != BATCH {
                        short += 1;
                    }
                    for row in batch.rows() {
                        let first = row.cell(0);
                        assert!(
                            matches!(first, Some(Value::U64(n)) if n == next),
                            "row {next}: {first:?}"
                        );
                        let last = row.cell(COLUMNS - 1);
                        assert!(
                            matches!(last, Some(Value::U64(n)) if n == COLUMNS as u64 - 1),
                            "row {next}: {last:?}"
                        );
                        next += 1;
                    }
                }
                SubscriptionEvent::Opened { .. } => assert_eq!(next, 1, "a second opening"),
                other => panic!("after row {}: {other:?}", next - 1),
            }
        }
        // Only the first batch, sent with the opening, draws its size (1 to BATCH rows); every
        // batch taken unpaced holds exactly BATCH.
        assert!(short <= 1, "{short} batches of other sizes");
        drop(s);
        let _ = client.close(false).await;
    });
    // Nothing is recorded per batch in this mode.
    assert!(lb.with_cluster(|c| c.emitted("fast", 1).is_empty()));
}

#[test]
fn unpaced_rows_arrive_in_order_without_gaps_over_websocket() {
    bounded(Duration::from_secs(120), || {
        rows_in_order(Transport::WebSocket(WsAuth::Header))
    });
}
