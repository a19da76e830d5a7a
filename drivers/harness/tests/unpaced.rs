//! The cluster's unpaced rows (`ClusterConfig::unpaced_rows`) and its `wide<N>` relays: batches
//! taken with `pull_rows` continue the row numbers with no gap, hold exactly `batch_rows` rows,
//! and leave no record behind; with the mode off nothing changes.

use nervix_harness::cluster::{relay_schema, wide_columns, wide_row_values};
use nervix_harness::{ClusterConfig, ConnId, Output, SimCluster};
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientMessageRoot, ServerFrame};
use nervix_protocol::rows::OwnedValue;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::time::Duration;

fn cluster(unpaced: bool, batch_rows: u64) -> SimCluster {
    SimCluster::new(ClusterConfig {
        nodes: 1,
        batch_rows,
        row_period: Duration::from_millis(1),
        unpaced_rows: unpaced,
        ..ClusterConfig::default()
    })
}

/// Opens subscription `name` on `relay` over a new stream; the frames that followed the reply.
fn subscribe(c: &mut SimCluster, name: &str, relay: &str) -> (ConnId, Vec<ServerMessageT>) {
    let endpoint = c.endpoints()[0].clone();
    let conn = c.connect(Timestamp::ZERO, &endpoint).expect("a stream");
    while c.poll_output().is_some() {}
    let frame = Encoder::new()
        .encode::<ClientMessageRoot>(&ClientMessageT {
            request_id: 1,
            request: ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
                domain: "tenant".into(),
                statement: format!("CREATE SUBSCRIPTION {name} FROM {relay}"),
                subscription_type: Some(SubscriptionType::Row),
            })),
        })
        .expect("a frame");
    c.receive(Timestamp::ZERO, conn, frame);
    let mut after = Vec::new();
    let mut replied = false;
    while let Some((_, out)) = c.poll_output() {
        if let Output::Frame(f) = out {
            let m = decode(f);
            if let ServerBodyT::Reply(r) = &m.body {
                assert!(
                    matches!(&r.body, ReplyBodyT::SubscribeOutcome(o)
                        if matches!(o.disposition, SubscribeDispositionT::SubscriptionOpened(_))),
                    "{r:?}"
                );
                replied = true;
            } else {
                after.push(m);
            }
        }
    }
    assert!(replied);
    (conn, after)
}

fn decode(f: bytes::Bytes) -> ServerMessageT {
    ServerFrame::check(f)
        .expect("a valid frame")
        .view()
        .unpack()
}

/// The first cell of every row of a `SubscriptionRows` message.
fn row_numbers(m: &ServerMessageT) -> Vec<u64> {
    let ServerBodyT::SubscriptionRows(r) = &m.body else {
        panic!("{m:?}")
    };
    r.batch
        .rows
        .iter()
        .map(|row| match &row.cells[0].value {
            CellValueT::U64Cell(c) => c.value,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn wide_relays_have_as_many_u64_columns_as_their_name_says() {
    assert_eq!(wide_columns("wide1"), Some(1));
    assert_eq!(wide_columns("wide64"), Some(64));
    assert_eq!(wide_columns("wide256"), Some(256));
    for other in ["wide0", "wide257", "wide", "wide01", "orders", "widex"] {
        assert_eq!(wide_columns(other), None, "{other}");
    }
    let schema = relay_schema("wide16", 1);
    assert_eq!(schema.fields.len(), 16);
    assert_eq!(schema.fields[3].name, "c3");
    assert!(schema.branch.is_none());
    let values = wide_row_values(3, 42);
    assert!(matches!(
        values.as_slice(),
        [OwnedValue::U64(42), OwnedValue::U64(1), OwnedValue::U64(2)]
    ));
}

#[test]
fn unpaced_batches_continue_the_row_numbers_without_a_gap() {
    for relay in ["wide1", "wide64", "orders"] {
        let mut c = cluster(true, 7);
        let (conn, first) = subscribe(&mut c, "s", relay);
        assert_eq!(first.len(), 1, "{relay}: one batch follows the opening");
        let mut numbers = row_numbers(&first[0]);
        // Nothing is due on the clock in this mode.
        assert_eq!(c.next_due(), None, "{relay}");
        for _ in 0..50 {
            let frames = c.pull_rows(conn);
            assert_eq!(frames.len(), 1, "{relay}");
            let more = row_numbers(&decode(frames[0].clone()));
            assert_eq!(more.len(), 7, "{relay}: exactly batch_rows rows");
            numbers.extend(more);
        }
        let want: Vec<u64> = (1..=numbers.len() as u64).collect();
        assert_eq!(numbers, want, "{relay}");
    }
}

#[test]
fn unpaced_wide_batches_carry_the_relays_values_and_handle() {
    let mut c = cluster(true, 5);
    let (conn, _) = subscribe(&mut c, "w", "wide16");
    let _ = c.pull_rows(conn);
    let m = decode(c.pull_rows(conn).remove(0));
    let ServerBodyT::SubscriptionRows(r) = &m.body else {
        panic!("{m:?}")
    };
    assert_eq!(r.subscription.name, "w");
    assert_eq!(r.subscription.generation, 1);
    for row in &r.batch.rows {
        assert_eq!(row.cells.len(), 16);
        let n = match &row.cells[0].value {
            CellValueT::U64Cell(v) => v.value,
            other => panic!("{other:?}"),
        };
        let want: Vec<CellT> = wide_row_values(16, n)
            .iter()
            .map(OwnedValue::to_cell)
            .collect();
        assert_eq!(row.cells, want);
    }
}

#[test]
fn unpaced_rows_leave_no_record_per_batch() {
    let mut c = cluster(true, 3);
    let (conn, _) = subscribe(&mut c, "s", "wide1");
    let trace = c.trace().len();
    for _ in 0..1000 {
        assert_eq!(c.pull_rows(conn).len(), 1);
    }
    assert!(c.emitted("s", 1).is_empty());
    assert_eq!(c.trace().len(), trace);
    // Advancing the clock sends nothing either.
    c.advance(Timestamp::from_nanos(10_000_000_000));
    assert!(c.poll_output().is_none());
}

#[test]
fn unpaced_rows_go_to_every_subscription_of_the_stream_only() {
    let mut c = cluster(true, 2);
    let (a, _) = subscribe(&mut c, "one", "wide1");
    let (b, _) = subscribe(&mut c, "two", "wide1");
    assert_eq!(c.pull_rows(a).len(), 1);
    assert_eq!(c.pull_rows(b).len(), 1);
    // A stream without subscriptions, and a closed one, get nothing.
    let endpoint = c.endpoints()[0].clone();
    let idle = c.connect(Timestamp::ZERO, &endpoint).expect("a stream");
    assert!(c.pull_rows(idle).is_empty());
    c.close(Timestamp::ZERO, a, true);
    assert!(c.pull_rows(a).is_empty());
}

#[test]
fn paced_mode_ignores_pulls_and_keeps_its_record() {
    let mut c = cluster(false, 3);
    let (conn, _) = subscribe(&mut c, "s", "wide1");
    assert!(c.pull_rows(conn).is_empty());
    assert_eq!(c.emitted("s", 1).len(), 1);
    assert!(c.next_due().is_some());
    c.advance(Timestamp::from_nanos(1_000_000));
    let mut batches = 0;
    while let Some((_, out)) = c.poll_output() {
        if let Output::Frame(f) = out {
            if matches!(decode(f).body, ServerBodyT::SubscriptionRows(_)) {
                batches += 1;
            }
        }
    }
    assert_eq!(batches, 1);
    assert_eq!(c.emitted("s", 1).len(), 2);
}
