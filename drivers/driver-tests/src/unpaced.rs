//! The loopback cluster's unpaced rows (`LoopbackConfig::unpaced_rows`) through a
//! subscription, over the console and over gRPC where the driver speaks it: every row arrives
//! once, in order, with no gap, however fast the server sends, and a reader that keeps up
//! loses nothing to the smallest budget the engine allows (S-8). Not timing tests: they count
//! and compare row numbers.

use crate::{seeds_of, Driver, Via};
use nervix_driver_support::credentials::Credentials;
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::SubscriptionEvent;
use nervix_protocol::rows::Value;
use std::time::Duration;

/// How long one event of the subscription may take.
const WAIT: Duration = Duration::from_secs(30);

/// How one run reads: rows in all, rows of one batch, columns of the relay, and the
/// subscription budget of the client (S-8).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Rows read in all.
    pub rows: u64,
    /// Rows of one batch.
    pub batch: u64,
    /// Columns of the `wide<N>` relay.
    pub columns: usize,
    /// The client's subscription budget in bytes.
    pub budget: usize,
}

/// Many more rows than one batch, few enough that the engine's own retention budget
/// (16 MiB) could hold them all, so a gap would be the server's or the driver's fault, not an
/// overflow.
pub const ALL_HELD: Shape = Shape {
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
pub const KEEPS_UP: Shape = Shape {
    rows: 120 * 512,
    batch: 512,
    columns: 64,
    budget: 4 << 20,
};

/// Reads `shape.rows` unpaced rows through one subscription over `via` and checks each
/// row's first column (its number, from 1 on) and last column (the column's index), that at
/// most the first batch (sent with the opening) has another size, that a call of the
/// application is answered while rows go on arriving, and that the cluster recorded nothing
/// per batch.
pub fn rows_in_order<D: Driver>(via: Via, shape: Shape) {
    let Shape {
        rows,
        batch: size,
        columns,
        budget,
    } = shape;
    let lb = Loopback::start(LoopbackConfig::unpaced(size)).expect("the loopback cluster");
    let seeds = seeds_of(&lb, via);
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let mut config =
        D::config(&seeds, Credentials::new("nervix", "nervix"), via).expect("a config");
    D::client_config(&mut config).subscription_bytes = budget;
    // The tokio driver on a current-thread runtime: its driver task runs only while the
    // reader waits, so a driver that took in every frame it had at once would overflow.
    let d = D::on_one_thread();
    let client = d.connect(config).expect("a session");
    d.select_domain(&client, Some("tenant")).expect("a domain");
    let mut s = d
        .subscribe(
            &client,
            &format!("CREATE SUBSCRIPTION fast FROM wide{columns}"),
        )
        .expect("a subscription");
    let mut next = 1u64;
    let mut short = 0u64;
    while next <= rows {
        match d
            .next_event(&mut s, WAIT)
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
    // Only the first batch, sent with the opening, draws its size (1 to `size` rows); every
    // batch taken unpaced holds exactly `size`.
    assert!(short <= 1, "{short} batches of other sizes");
    // A call of the application is answered while the rows go on arriving: it waits behind a
    // bounded number of bytes of frames, not behind the inbox's whole count of them.
    d.stats(&client).expect("stats");
    drop(s);
    let _ = d.close(client, false);
    // Nothing is recorded per batch in this mode.
    assert!(lb.with_cluster(|c| c.emitted("fast", 1).is_empty()));
}

/// Tests of `tests/unpaced_rows.rs`, for `tokio` or `blocking`: the rows that all fit the
/// engine's budget within two minutes, the smallest budget within three.
#[macro_export]
macro_rules! unpaced_tests {
    (tokio) => {
        #[test]
        fn unpaced_rows_arrive_in_order_without_gaps_over_websocket() {
            $crate::unpaced_tests!(@run 120, Tokio, Via::Console(WsAuth::Header), ALL_HELD)
        }
        #[test]
        fn unpaced_rows_arrive_in_order_without_gaps_over_grpc() {
            $crate::unpaced_tests!(@run 120, Tokio, Via::Grpc, ALL_HELD)
        }
        #[test]
        fn a_reader_that_keeps_up_loses_nothing_to_the_smallest_budget_over_websocket() {
            $crate::unpaced_tests!(@run 180, Tokio, Via::Console(WsAuth::Header), KEEPS_UP)
        }
        #[test]
        fn a_reader_that_keeps_up_loses_nothing_to_the_smallest_budget_over_grpc() {
            $crate::unpaced_tests!(@run 180, Tokio, Via::Grpc, KEEPS_UP)
        }
    };
    (blocking) => {
        #[test]
        fn unpaced_rows_arrive_in_order_without_gaps_blocking() {
            $crate::unpaced_tests!(@run 120, Blocking, Via::Console(WsAuth::Header), ALL_HELD)
        }
        /// Batches of 64 columns (about 900 KiB each) against one frame of the frame limit,
        /// the smallest budget the engine allows (four of these batches), and a reader that
        /// only reads.
        #[test]
        fn a_reader_that_keeps_up_loses_nothing_to_the_smallest_budget_blocking() {
            $crate::unpaced_tests!(@run 180, Blocking, Via::Console(WsAuth::Header), KEEPS_UP)
        }
    };
    (@run $secs:literal, $d:ident, $via:expr, $shape:ident) => {{
        #[allow(unused_imports)]
        use $crate::{Via, WsAuth};
        $crate::bounded(::std::time::Duration::from_secs($secs), || {
            $crate::unpaced::rows_in_order::<$crate::$d>($via, $crate::unpaced::$shape)
        })
    }};
}
