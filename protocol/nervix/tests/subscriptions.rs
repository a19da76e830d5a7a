//! Subscriptions through the client, against a scripted server (S-1 to S-9): opening, routing
//! by complete handle, ends and generations, gaps, deletion, reopening across sessions, and
//! bounded retention.

mod support;

use nervix_protocol::client::*;
use nervix_protocol::schema::*;
use std::time::Duration;
use support::rig::*;
use support::streams::*;
use support::*;

/// Every event the subscription has now.
fn drain(r: &mut Rig, id: SubscriptionId) -> Vec<SubscriptionEvent> {
    std::iter::from_fn(|| r.c.poll_subscription(id)).collect()
}

/// The ids of the rows of every batch among `events`, and `|` where anything else stood.
fn shape(events: &[SubscriptionEvent]) -> String {
    events
        .iter()
        .map(|e| match e {
            SubscriptionEvent::Opened { generation, .. } => format!("open#{generation}"),
            SubscriptionEvent::Rows(b) => format!("rows{}", b.len()),
            SubscriptionEvent::Gap(g) => format!("gap:{g:?}"),
            SubscriptionEvent::Refused { .. } => "refused".into(),
            SubscriptionEvent::Ended(e) => format!("end:{e:?}"),
            _ => "other".into(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

const STATEMENT: &str = "CREATE SUBSCRIPTION live AS SELECT * FROM orders";

/// A subscription `live` opened as generation 1 on a fresh session.
fn opened_sub() -> (Rig, SessionId, SubscriptionId) {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 1, two_fields()));
    let events = drain(&mut r, id);
    assert_eq!(shape(&events), "open#1");
    (r, sid, id)
}

fn lose(r: &mut Rig, sid: SessionId) -> SessionId {
    r.c.handle_closed(r.now, sid);
    r.pump();
    let at = r.c.poll_timeout().expect("a reconnect is due");
    r.now = at;
    r.c.handle_timeout(at);
    r.open()
}

#[test]
fn s_1_subscribe_carries_one_statement_the_domain_and_row_explicitly() {
    let mut r = Rig::new();
    r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    r.open();
    let (_, req) = last_of(&r, ClientRequest::SubscribeRequest);
    let ClientRequestT::SubscribeRequest(s) = req else {
        panic!()
    };
    assert_eq!(
        (s.domain.as_str(), s.statement.as_str(), s.subscription_type),
        ("d1", STATEMENT, Some(SubscriptionType::Row))
    );
    // Exactly one CREATE SUBSCRIPTION statement, nothing else.
    for bad in [
        "SHOW RELAYS",
        "CREATE SUBSCRIPTION a AS SELECT 1; CREATE SUBSCRIPTION b AS SELECT 2",
    ] {
        assert!(
            matches!(
                r.c.subscribe(r.now, "d1", bad).unwrap_err(),
                ClientError::Statement(_)
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        r.c.subscribe(r.now, "", STATEMENT).unwrap_err(),
        ClientError::InvalidName { .. }
    ));
}

#[test]
fn s_2_rows_right_behind_the_opening_reply_are_read_against_its_schema() {
    let mut r = Rig::new();
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    // The reply and the first batch arrive back to back, before the application looks.
    r.feed(sid, opened(rid, "live", 1, two_fields()));
    r.feed(sid, rows("live", 1, 100, 3));
    let events = drain(&mut r, id);
    assert_eq!(shape(&events), "open#1 rows3");
    let SubscriptionEvent::Opened { schema, name, .. } = &events[0] else {
        panic!()
    };
    let SubscriptionEvent::Rows(batch) = &events[1] else {
        panic!()
    };
    assert_eq!(name, "live");
    assert!(
        std::ptr::eq(&**schema, batch.schema()),
        "read against the generation's own schema"
    );
}

#[test]
fn r_2_a_batch_that_does_not_conform_ends_the_session_and_exposes_nothing() {
    let (mut r, sid, id) = opened_sub();
    // One cell where the schema has two fields.
    r.feed(
        sid,
        rows_of(
            "live",
            1,
            vec![RowT {
                cells: vec![u64_cell(1)],
            }],
        ),
    );
    assert!(
        r.closes.contains(&(sid, false)),
        "F-8: the stream is closed"
    );
    assert!(r.events.iter().any(|e| matches!(
        e,
        ClientEvent::SessionLost {
            loss: SessionLoss::Violation(_),
            ..
        }
    )));
    let events = drain(&mut r, id);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, SubscriptionEvent::Rows(_))),
        "no row of the batch is exposed: {}",
        shape(&events)
    );
    assert_eq!(shape(&events), "gap:SessionLost");
}

#[test]
fn s_3_frames_are_routed_by_name_and_generation_and_unknown_handles_ignored() {
    let (mut r, sid, id) = opened_sub();
    r.feed(sid, rows("live", 2, 1, 1)); // another generation
    r.feed(sid, rows("other", 1, 1, 1)); // a handle never held
    r.feed(sid, delivery_lost("other", 1, 5));
    r.feed(sid, ended("live", 7, SubscriptionEndReason::RelayRemoved));
    assert_eq!(r.c.ignored_subscription_frames(), 4);
    assert_eq!(r.c.stats().subscription_frames_ignored, 4);
    assert!(drain(&mut r, id).is_empty());
    r.feed(sid, rows("live", 1, 1, 2));
    assert_eq!(shape(&drain(&mut r, id)), "rows2");
    assert_eq!(
        r.c.subscription(id).unwrap().state,
        SubscriptionState::Open { generation: 1 }
    );
}

#[test]
fn s_3_a_late_end_of_an_earlier_generation_does_not_end_the_newer_one() {
    let (mut r, sid, id) = opened_sub();
    // Deleted, and the name used again at once (S-6).
    r.c.delete_subscription(r.now, id).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::UnsubscribeRequest);
    r.feed(sid, deleted(rid, "live", 1));
    assert_eq!(
        shape(&drain(&mut r, id)),
        "end:Deleted",
        "deleted, and nothing about generation 1 follows"
    );
    let again = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 2, two_fields()));
    // Generation 1's end arrives after generation 2's opening.
    r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayRemoved));
    r.feed(sid, rows("live", 2, 1, 1));
    assert_eq!(shape(&drain(&mut r, again)), "open#2 rows1");
    assert_eq!(
        r.c.subscription(again).unwrap().state,
        SubscriptionState::Open { generation: 2 }
    );
}

#[test]
fn s_4_an_end_is_the_last_frame_and_an_ended_generation_is_never_opened_again() {
    let (mut r, sid, id) = opened_sub();
    r.feed(sid, rows("live", 1, 1, 1));
    r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayRemoved));
    r.feed(sid, rows("live", 1, 2, 1));
    assert_eq!(
        shape(&drain(&mut r, id)),
        "rows1 end:RelayRemoved { message: \"ended\" }"
    );
    assert_eq!(r.c.live_subscriptions(), 0);
    assert!(r.c.subscription(id).is_none(), "drained and gone");
    // A later session does not open it again.
    r.exec("SHOW RELAYS;");
    let s2 = lose(&mut r, sid);
    assert!(!requests(&r, s2).contains(&ClientRequest::SubscribeRequest));
}

#[test]
fn s_4_after_relay_changed_the_subscription_is_opened_again_under_the_new_definition() {
    let (mut r, sid, id) = opened_sub();
    r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayChanged));
    // Subscribed again at once, as a new generation.
    let (rid, req) = last_of(&r, ClientRequest::SubscribeRequest);
    assert!(matches!(req, ClientRequestT::SubscribeRequest(s) if s.statement == STATEMENT));
    // Rows of the ended generation are not read against any schema.
    r.feed(sid, rows("live", 1, 1, 1));
    let mut changed = two_fields();
    changed
        .fields
        .push(field("note", ScalarType::String, true, false));
    r.feed(sid, opened(rid, "live", 2, changed));
    r.feed(
        sid,
        rows_of(
            "live",
            2,
            vec![RowT {
                cells: vec![
                    u64_cell(1),
                    null_cell(),
                    CellT {
                        value: CellValueT::StringCell(Box::new(StringCellT { value: "x".into() })),
                    },
                ],
            }],
        ),
    );
    let events = drain(&mut r, id);
    assert_eq!(
        shape(&events),
        "gap:RelayChanged { message: \"ended\" } open#2 rows1"
    );
    let SubscriptionEvent::Opened { schema, .. } = &events[1] else {
        panic!()
    };
    assert_eq!(schema.fields().len(), 3, "the new definition's schema");
}

#[test]
fn s_4_an_end_completes_a_deletion_underway() {
    let (mut r, sid, id) = opened_sub();
    r.c.delete_subscription(r.now, id).unwrap();
    r.pump();
    let (rid, _) = last_of(&r, ClientRequest::UnsubscribeRequest);
    r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayRemoved));
    assert_eq!(shape(&drain(&mut r, id)), "end:Deleted");
    // The late answer changes nothing.
    r.feed(sid, deleted(rid, "live", 1));
    assert!(drain(&mut r, id).is_empty());
    assert!(r.c.subscribe(r.now, "d1", STATEMENT).is_ok(), "name free");
}

#[test]
fn s_5_delivery_loss_and_skipped_rows_are_gaps_with_their_counts() {
    let (mut r, sid, id) = opened_sub();
    r.feed(sid, rows("live", 1, 1, 2));
    r.feed(sid, delivery_lost("live", 1, 17));
    r.feed(sid, rows("live", 1, 20, 1));
    r.feed(sid, rows_skipped("live", 1, 4));
    r.feed(sid, rows("live", 1, 25, 1));
    let events = drain(&mut r, id);
    assert_eq!(events.len(), 5);
    assert!(matches!(
        events[1],
        SubscriptionEvent::Gap(Gap::DeliveryLost { dropped_rows: 17 })
    ));
    assert!(matches!(
        &events[3],
        SubscriptionEvent::Gap(Gap::RowsSkipped {
            cause: RowsSkippedCause::DomainTimeUnavailable,
            skipped_rows: 4,
            ..
        })
    ));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, SubscriptionEvent::Rows(_)))
            .count(),
        3,
        "the rows on either side stay separate batches"
    );
}

#[test]
fn s_6_once_deleted_the_name_is_free_at_once_and_not_before() {
    let (mut r, sid, id) = opened_sub();
    r.c.unsubscribe(r.now, "live").unwrap();
    r.pump();
    let (rid, req) = last_of(&r, ClientRequest::UnsubscribeRequest);
    assert!(matches!(req, ClientRequestT::UnsubscribeRequest(u) if u.subscription == "live"));
    assert_eq!(
        r.c.subscribe(r.now, "d1", STATEMENT).unwrap_err(),
        ClientError::NameInUse {
            name: "live".into()
        }
    );
    r.feed(sid, deleted(rid, "live", 1));
    r.feed(sid, rows("live", 1, 1, 1));
    assert_eq!(shape(&drain(&mut r, id)), "end:Deleted");
    assert!(r.c.subscribe(r.now, "d1", STATEMENT).is_ok());
}

#[test]
fn s_7_a_kept_subscription_opens_again_as_a_new_generation_with_the_gap_reported() {
    let (mut r, sid, id) = opened_sub();
    r.feed(sid, rows("live", 1, 1, 1));
    // Nothing else to do: the subscription alone asks for a new session.
    let s2 = lose(&mut r, sid);
    assert_eq!(requests(&r, s2), vec![ClientRequest::SubscribeRequest]);
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(s2, opened(rid, "live", 2, two_fields()));
    // A late frame of the old generation is not read.
    r.feed(s2, rows("live", 1, 9, 1));
    r.feed(s2, rows("live", 2, 10, 1));
    assert_eq!(
        shape(&drain(&mut r, id)),
        "rows1 gap:SessionLost open#2 rows1"
    );
}

#[test]
fn s_7_deleted_while_its_opening_is_out_it_is_unsubscribed_when_the_reply_opens_it() {
    let mut r = Rig::new();
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.c.delete_subscription(r.now, id).unwrap();
    r.pump();
    assert!(!requests(&r, sid).contains(&ClientRequest::UnsubscribeRequest));
    assert!(matches!(
        r.c.subscribe(r.now, "d1", STATEMENT).unwrap_err(),
        ClientError::NameInUse { .. }
    ));
    r.feed(sid, opened(rid, "live", 1, two_fields()));
    r.feed(sid, rows("live", 1, 1, 1));
    let (uid, req) = last_of(&r, ClientRequest::UnsubscribeRequest);
    assert!(matches!(req, ClientRequestT::UnsubscribeRequest(u) if u.subscription == "live"));
    assert!(
        r.c.subscribe(r.now, "d1", STATEMENT).is_err(),
        "the name waits for the unsubscribe"
    );
    r.feed(sid, deleted(uid, "live", 1));
    assert_eq!(shape(&drain(&mut r, id)), "end:Deleted", "nothing opened");
    assert!(r.c.subscribe(r.now, "d1", STATEMENT).is_ok());
}

#[test]
fn s_7_a_refused_reopening_is_reported_and_sent_again_after_growing_waits() {
    let (mut r, sid, id) = opened_sub();
    let s2 = lose(&mut r, sid);
    let _ = drain(&mut r, id);
    let mut sent_at = vec![r.now];
    for _ in 0..4 {
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(s2, subscribe_failed(rid, "relay busy"));
        assert_eq!(shape(&drain(&mut r, id)), "refused");
        let before = requests(&r, s2).len();
        let at = r.c.poll_timeout().expect("the reopening is due again");
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
        assert_eq!(
            requests(&r, s2).len(),
            before + 1,
            "sent again on that session"
        );
        sent_at.push(at);
    }
    let waits: Vec<u64> = sent_at
        .windows(2)
        .map(|w| w[1].as_nanos() - w[0].as_nanos())
        .collect();
    for w in waits.windows(2) {
        assert!(w[1] > w[0], "waits grow: {waits:?}");
    }
    waits_double_from_the_first_backoff(&waits);
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(s2, opened(rid, "live", 2, two_fields()));
    assert_eq!(shape(&drain(&mut r, id)), "open#2");
}

#[test]
fn s_7_a_first_opening_refused_ends_the_subscription() {
    let mut r = Rig::new();
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, subscribe_failed(rid, "no relay orders"));
    assert_eq!(
        shape(&drain(&mut r, id)),
        "end:Refused { message: \"no relay orders\" }"
    );
    assert_eq!(r.c.live_subscriptions(), 0);
}

#[test]
fn s_7_a_deletion_no_session_holds_completes_without_a_request() {
    let (mut r, sid, id) = opened_sub();
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.c.delete_subscription(r.now, id).unwrap();
    assert_eq!(shape(&drain(&mut r, id)), "gap:SessionLost end:Deleted");
    r.exec("SHOW RELAYS;");
    let at = r.c.poll_timeout().unwrap();
    r.now = at;
    r.c.handle_timeout(at);
    let s2 = r.open();
    assert_eq!(requests(&r, s2), vec![ClientRequest::CommandRequest]);
}

#[test]
fn s_7_a_deletion_whose_session_ends_unanswered_is_complete() {
    let (mut r, sid, id) = opened_sub();
    r.c.delete_subscription(r.now, id).unwrap();
    r.pump();
    assert!(requests(&r, sid).contains(&ClientRequest::UnsubscribeRequest));
    r.c.handle_closed(r.now, sid);
    r.pump();
    assert_eq!(shape(&drain(&mut r, id)), "end:Deleted");
    assert_eq!(r.c.poll_timeout(), None, "no session is wanted for it");
}

#[test]
fn s_7_a_reopening_left_unanswered_is_reported_and_the_session_replaced() {
    let (mut r, sid, id) = opened_sub();
    let s2 = lose(&mut r, sid);
    let _ = drain(&mut r, id);
    r.advance(Duration::from_secs(31));
    assert_eq!(shape(&drain(&mut r, id)), "refused");
    assert!(r.closes.iter().any(|(s, _)| *s == s2), "{:?}", r.closes);
    let at = r.c.poll_timeout().unwrap();
    r.now = at;
    r.c.handle_timeout(at);
    let s3 = r.open();
    assert_eq!(requests(&r, s3), vec![ClientRequest::SubscribeRequest]);
}

#[test]
fn s_8_retention_is_bounded_in_total_and_losses_are_one_gap_in_place() {
    // Every batch here is the same size: a budget of the opening, three batches and a little.
    let per = rows("live", 1, 0, 10).len();
    let open = opened(1, "live", 1, two_fields()).len();
    let budget = open + 3 * per + 10;
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscriptions_total_bytes = budget;
    let mut r = Rig::with(cfg);
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 1, two_fields()));
    for i in 0..6 {
        r.feed(sid, rows("live", 1, i * 10, 10));
        assert!(r.c.subscription_bytes() <= budget);
    }
    assert_eq!(r.c.subscription_bytes(), open + 3 * per);
    let s = r.c.stats();
    assert_eq!(s.subscription_events_dropped, 3);
    assert_eq!(s.subscription_held_bytes, open + 3 * per);
    // A gap that does not fit either is merged into the loss, with its rows.
    r.feed(sid, delivery_lost("live", 1, 5));
    assert_eq!(r.c.stats().subscription_events_dropped, 4);
    // The application reads one batch, making room for the next.
    assert_eq!(shape(&[r.c.poll_subscription(id).unwrap()]), "open#1");
    assert_eq!(shape(&[r.c.poll_subscription(id).unwrap()]), "rows10");
    r.feed(sid, rows("live", 1, 999, 10));
    assert_eq!(
        shape(&drain(&mut r, id)),
        "rows10 rows10 gap:Overflow { batches: 3, rows: 35, events: 0 } rows10"
    );
    assert_eq!(r.c.subscription_bytes(), 0);
    assert_eq!(r.c.subscription(id).unwrap().retained_bytes, 0);
}

#[test]
fn s_8_retention_is_bounded_per_subscription() {
    let per = rows("live", 1, 0, 10).len();
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscriptions_total_bytes = 64 << 20;
    cfg.subscription_bytes = 4 << 20;
    let mut r = Rig::with(cfg);
    let a = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let b =
        r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION other AS SELECT 1")
            .unwrap();
    let sid = r.open();
    let ids: Vec<u64> = r.sent.iter().map(|(_, m)| m.request_id).collect();
    r.feed(sid, opened(ids[0], "live", 1, two_fields()));
    r.feed(sid, opened(ids[1], "other", 1, two_fields()));
    let open = opened(1, "live", 1, two_fields()).len();
    let fit = ((4 << 20) - open) / per;
    for i in 0..fit as u64 + 5 {
        r.feed(sid, rows("live", 1, i * 10, 10));
    }
    r.feed(sid, rows("other", 1, 0, 10));
    let info = r.c.subscription(a).unwrap();
    assert!(info.retained_bytes <= 4 << 20);
    assert_eq!(
        info.retained_bytes,
        open + fit * per,
        "full to its own budget"
    );
    assert_eq!(
        shape(&drain(&mut r, b)),
        "open#1 rows10",
        "another subscription is not held back by a full one"
    );
    let events = drain(&mut r, a);
    assert_eq!(events.len(), 1 + fit + 1);
    assert!(matches!(
        events.last(),
        Some(SubscriptionEvent::Gap(Gap::Overflow {
            batches: 5,
            rows: 50,
            events: 0
        }))
    ));
}

#[test]
fn s_8_one_subscription_keeps_at_least_a_frame_of_the_frame_limit() {
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscription_bytes = 1024;
    let mut r = Rig::with(cfg);
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    let mut schema = two_fields();
    schema
        .fields
        .push(field("blob", ScalarType::String, false, false));
    r.feed(sid, opened(rid, "live", 1, schema));
    let big = rows_of(
        "live",
        1,
        vec![RowT {
            cells: vec![
                u64_cell(1),
                null_cell(),
                CellT {
                    value: CellValueT::StringCell(Box::new(StringCellT {
                        value: "x".repeat(4 * 1024 * 1024 - 4096),
                    })),
                },
            ],
        }],
    );
    assert!(big.len() > 4 * 1024 * 1024 - 8192);
    r.feed(sid, big);
    assert_eq!(shape(&drain(&mut r, id)), "open#1 rows1");
}

#[test]
fn s_9_a_full_subscription_never_holds_back_other_frames() {
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscriptions_total_bytes = 1024;
    let mut r = Rig::with(cfg);
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let h = r.exec("SHOW RELAYS;");
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 1, two_fields()));
    for i in 0..50 {
        r.feed(sid, rows("live", 1, i * 10, 10));
    }
    // The budget is full and nobody reads; the command's reply is still read.
    let (cid, cmd) = r.last_command();
    r.feed(sid, outcome(cid, &cmd.execution_reference, completed()));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    assert!(r.c.subscription_bytes() <= 1024);
    let events = drain(&mut r, id);
    assert!(matches!(
        events.last(),
        Some(SubscriptionEvent::Gap(Gap::Overflow { .. }))
    ));
}

#[test]
fn l_3_subscription_calls_wait_while_a_transaction_is_held() {
    let (mut r, sid, id) = opened_sub();
    // A deletion asked for before BEGIN goes before it.
    r.c.delete_subscription(r.now, id).unwrap();
    let begin = r.exec("BEGIN;");
    let order = requests(&r, sid);
    assert_eq!(
        &order[order.len() - 2..],
        &[
            ClientRequest::UnsubscribeRequest,
            ClientRequest::CommandRequest
        ]
    );
    let _ = begin;
    // While the transaction is held, calls are refused at once.
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    r.exec("BEGIN;");
    let sid = r.open();
    bind_transaction(&mut r, sid);
    assert!(r.c.binding().is_holding());
    assert_eq!(
        r.c.subscribe(r.now, "d1", STATEMENT).unwrap_err(),
        ClientError::InTransaction
    );
    assert_eq!(
        r.c.unsubscribe(r.now, "live").unwrap_err(),
        ClientError::InTransaction
    );
}

/// One thing the server does to the subscription `live` in the property below.
#[derive(Debug, Clone)]
enum Step {
    /// Rows of a generation (1 to 4; the client has opened at most some of them).
    Rows(u64),
    /// Delivery loss reported for a generation.
    Lost(u64),
    /// The end of a generation, changed or removed.
    Ended(u64, bool),
    /// The answer to the newest subscribe out, opening the next generation.
    Open,
    /// The session is lost (and a new one opened).
    Lose,
    /// The application deletes the subscription.
    Delete,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (1u64..5).prop_map(Step::Rows),
        1 => (1u64..5).prop_map(Step::Lost),
        1 => ((1u64..5), any::<bool>()).prop_map(|(g, c)| Step::Ended(g, c)),
        2 => Just(Step::Open),
        1 => Just(Step::Lose),
        1 => Just(Step::Delete),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::default())]

    /// Whatever the server sends, in whatever order, a batch reaches the application only
    /// while its own generation is the open one (S-3, R-1), and nothing follows the end.
    #[test]
    fn s_3_no_frame_of_one_generation_is_applied_to_another(steps in proptest::collection::vec(step(), 1..40)) {
        let mut r = Rig::new();
        let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
        let mut sid = r.open();
        let mut next_generation = 1;
        for s in steps {
            match s {
                Step::Rows(g) => r.feed(sid, rows("live", g, 1, 1)),
                Step::Lost(g) => r.feed(sid, delivery_lost("live", g, 3)),
                Step::Ended(g, changed) => {
                    let reason = if changed {
                        SubscriptionEndReason::RelayChanged
                    } else {
                        SubscriptionEndReason::RelayRemoved
                    };
                    r.feed(sid, ended("live", g, reason));
                }
                Step::Open => {
                    let out = r
                        .sent
                        .iter()
                        .rev()
                        .find(|(s, m)| *s == sid && m.request.client_request_type() == ClientRequest::SubscribeRequest)
                        .map(|(_, m)| m.request_id);
                    if let Some(rid) = out {
                        r.feed(sid, opened(rid, "live", next_generation, two_fields()));
                        next_generation += 1;
                    }
                }
                Step::Delete => {
                    let _ = r.c.delete_subscription(r.now, id);
                    r.pump();
                }
                Step::Lose => {
                    r.c.handle_closed(r.now, sid);
                    r.pump();
                    if let Some(at) = r.c.poll_timeout() {
                        r.now = at;
                        r.c.handle_timeout(at);
                        r.pump();
                    }
                    if r.connects.last().is_some_and(|(s, _)| *s != sid) {
                        sid = r.open();
                    }
                }
            }
        }
        let mut open: Option<u64> = None;
        let mut ended = false;
        for e in drain(&mut r, id) {
            proptest::prop_assert!(!ended, "an event after the end: {e:?}");
            match e {
                SubscriptionEvent::Opened { generation, .. } => open = Some(generation),
                SubscriptionEvent::Rows(b) => {
                    proptest::prop_assert_eq!(Some(b.generation()), open);
                }
                SubscriptionEvent::Gap(Gap::DeliveryLost { .. }) => {
                    proptest::prop_assert!(open.is_some(), "a gap of no open generation");
                }
                SubscriptionEvent::Gap(Gap::SessionLost | Gap::RelayChanged { .. }) => open = None,
                SubscriptionEvent::Ended(_) => ended = true,
                _ => {}
            }
        }
    }
}

#[test]
fn s_8_a_batch_that_exactly_fills_the_budget_is_kept_and_one_byte_less_is_not() {
    let per = rows("live", 1, 0, 10).len();
    let open = opened(1, "live", 1, two_fields()).len();
    for (budget, kept) in [(open + 3 * per, 3), (open + 3 * per - 1, 2)] {
        let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
        cfg.subscriptions_total_bytes = budget;
        let mut r = Rig::with(cfg);
        let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
        let sid = r.open();
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(sid, opened(rid, "live", 1, two_fields()));
        for i in 0..3 {
            r.feed(sid, rows("live", 1, i * 10, 10));
        }
        assert_eq!(
            r.c.subscription_bytes(),
            open + kept * per,
            "budget {budget}"
        );
        let rows_kept = drain(&mut r, id)
            .iter()
            .filter(|e| matches!(e, SubscriptionEvent::Rows(_)))
            .count();
        assert_eq!(rows_kept, kept, "budget {budget}");
    }
}

/// Subscribe requests sent so far.
fn subscribes(r: &Rig) -> usize {
    r.sent
        .iter()
        .filter(|(_, m)| m.request.client_request_type() == ClientRequest::SubscribeRequest)
        .count()
}

/// A schema of many long-named fields, so every opening is a large event.
fn wide_schema() -> RowSchemaT {
    let mut schema = two_fields();
    for i in 0..200 {
        schema.fields.push(field(
            &format!("column_with_a_long_descriptive_name_{i:04}"),
            ScalarType::String,
            true,
            false,
        ));
    }
    schema
}

#[test]
fn s_7_a_reopening_refused_busy_is_reported_and_sent_again_after_growing_waits() {
    let (mut r, sid, id) = opened_sub();
    let s2 = lose(&mut r, sid);
    assert_eq!(shape(&drain(&mut r, id)), "gap:SessionLost");
    let mut sent_at = vec![r.now];
    for _ in 0..4 {
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(s2, rejected(rid, RequestRejection::ServerBusy));
        let events = drain(&mut r, id);
        assert_eq!(shape(&events), "refused", "every refusal is reported");
        assert!(matches!(&events[0], SubscriptionEvent::Refused { message } if message == "no"));
        let before = subscribes(&r);
        let at = r.c.poll_timeout().expect("the reopening is due again");
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
        assert_eq!(subscribes(&r), before + 1, "sent again");
        assert_eq!(r.last().0, s2, "on that session");
        sent_at.push(at);
    }
    let waits: Vec<u64> = sent_at
        .windows(2)
        .map(|w| w[1].as_nanos() - w[0].as_nanos())
        .collect();
    for w in waits.windows(2) {
        assert!(w[1] > w[0], "waits grow: {waits:?}");
    }
    waits_double_from_the_first_backoff(&waits);
}

/// The k-th wait after a refusal is the client's back-off of attempt k: between half and all
/// of the first back-off (50 ms) doubled k times, so the first refusal waits at most 50 ms.
fn waits_double_from_the_first_backoff(waits: &[u64]) {
    let first = Duration::from_millis(50).as_nanos() as u64;
    for (k, w) in waits.iter().enumerate() {
        let full = first << k;
        assert!(
            (full / 2..=full).contains(w),
            "wait {k} is {w} ns, not within [{}, {full}]: {waits:?}",
            full / 2
        );
    }
}

#[test]
fn s_7_a_first_opening_refused_busy_is_reported_and_sent_again() {
    let mut r = Rig::new();
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, rejected(rid, RequestRejection::ServerBusy));
    assert_eq!(shape(&drain(&mut r, id)), "refused");
    assert_eq!(
        r.c.subscription(id).unwrap().state,
        SubscriptionState::Waiting
    );
    let at = r.c.poll_timeout().unwrap();
    assert!(
        at > r.now && at <= r.now + Duration::from_millis(50),
        "the first wait is the first back-off step"
    );
    r.now = at;
    r.c.handle_timeout(at);
    r.pump();
    assert_eq!(subscribes(&r), 2);
}

#[test]
fn s_8_a_server_cycling_open_and_relay_changed_stays_within_the_budget_and_is_spaced() {
    let open = opened(1, "live", 1, wide_schema()).len();
    assert!(open > 10_000, "{open}");
    // Room for two openings and their gaps, far less than the cycles below would queue.
    let budget = 2 * open + 1024;
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscriptions_total_bytes = budget;
    cfg.backoff_max = Duration::from_secs(3600);
    let mut r = Rig::with(cfg);
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let mut sent_at = vec![];
    let cycles = 12;
    for g in 1..=cycles {
        sent_at.push(r.now);
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(sid, opened(rid, "live", g, wide_schema()));
        r.feed(sid, ended("live", g, SubscriptionEndReason::RelayChanged));
        assert!(
            r.c.subscription_bytes() <= budget,
            "cycle {g}: {} queued against {budget}",
            r.c.subscription_bytes()
        );
        assert_eq!(
            r.c.subscription(id).unwrap().retained_bytes,
            r.c.subscription_bytes()
        );
        let before = subscribes(&r);
        if g == 1 {
            assert_eq!(before, 2, "the first relay change reopens at once");
            continue;
        }
        assert_eq!(before, g as usize, "cycle {g}: a repeated reopening waits");
        let at = r.c.poll_timeout().expect("the reopening is due later");
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
        assert_eq!(subscribes(&r), before + 1, "cycle {g}");
    }
    let waits: Vec<u64> = sent_at
        .windows(2)
        .map(|w| w[1].as_nanos() - w[0].as_nanos())
        .collect();
    assert_eq!(waits[0], 0, "{waits:?}");
    assert!(
        waits[1] <= Duration::from_millis(50).as_nanos() as u64,
        "the first wait is the first back-off step: {waits:?}"
    );
    for w in waits.windows(2) {
        assert!(w[1] > w[0], "waits grow: {waits:?}");
    }
    // Only what the application needs: the newest opening, then its end.
    assert_eq!(
        shape(&drain(&mut r, id)),
        format!("open#{cycles} gap:RelayChanged {{ message: \"ended\" }}")
    );
    assert_eq!(r.c.subscription_bytes(), 0);
}

/// Waits, if need be, for the opening sent after subscribe request number `before`; says
/// whether it went at once.
fn reopened(r: &mut Rig, before: usize) -> bool {
    if subscribes(r) > before {
        return true;
    }
    let at = r.c.poll_timeout().expect("the reopening is due later");
    r.now = at;
    r.c.handle_timeout(at);
    r.pump();
    assert_eq!(subscribes(r), before + 1);
    false
}

#[test]
fn s_8_a_generation_that_delivers_resets_the_reopening_wait() {
    let (mut r, sid, id) = opened_sub();
    let mut at_once = vec![];
    for g in 1..=4 {
        let before = subscribes(&r);
        r.feed(sid, ended("live", g, SubscriptionEndReason::RelayChanged));
        at_once.push(reopened(&mut r, before));
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(sid, opened(rid, "live", g + 1, two_fields()));
    }
    assert_eq!(at_once, [true, false, false, false]);
    // This generation delivers a batch: the next relay change reopens at once.
    r.feed(sid, rows("live", 5, 1, 1));
    let before = subscribes(&r);
    r.feed(sid, ended("live", 5, SubscriptionEndReason::RelayChanged));
    assert!(reopened(&mut r, before), "reopened at once");
    // A delivery loss is no delivery: the next one waits again.
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 6, two_fields()));
    r.feed(sid, delivery_lost("live", 6, 3));
    let before = subscribes(&r);
    r.feed(sid, ended("live", 6, SubscriptionEndReason::RelayChanged));
    assert!(!reopened(&mut r, before), "waits");
    let _ = drain(&mut r, id);
}

#[test]
fn s_8_superseded_openings_with_no_rows_are_coalesced_in_true_order() {
    // Nothing is read until the end.
    let mut r = Rig::new();
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let s = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(s, opened(rid, "live", 1, two_fields()));
    r.feed(s, rows("live", 1, 1, 1));
    for g in 1..=3 {
        let before = subscribes(&r);
        r.feed(s, ended("live", g, SubscriptionEndReason::RelayChanged));
        reopened(&mut r, before);
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(s, opened(rid, "live", g + 1, two_fields()));
    }
    r.feed(s, rows("live", 4, 1, 2));
    // Generation 1 delivered a batch and stays; 2 and 3 delivered nothing and are gone.
    assert_eq!(
        shape(&drain(&mut r, id)),
        "open#1 rows1 gap:RelayChanged { message: \"ended\" } open#4 rows2"
    );
    assert_eq!(
        r.c.subscription(id).unwrap().state,
        SubscriptionState::Open { generation: 4 }
    );
}

#[test]
fn s_8_an_event_the_budget_cannot_hold_is_reported_as_an_overflow() {
    let per = rows("live", 1, 0, 10).len();
    let open = opened(1, "live", 1, two_fields()).len();
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscriptions_total_bytes = open + per;
    let mut r = Rig::with(cfg);
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 1, two_fields()));
    r.feed(sid, rows("live", 1, 0, 10));
    assert_eq!(r.c.subscription_bytes(), open + per, "full");
    // The relay changes and the subscription opens again: neither fits.
    r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayChanged));
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 2, two_fields()));
    assert!(r.c.subscription_bytes() <= open + per);
    // Neither the relay change nor the new opening is lost silently: both are counted.
    assert_eq!(
        shape(&drain(&mut r, id)),
        "open#1 rows10 gap:Overflow { batches: 0, rows: 0, events: 2 }"
    );
    // The state still says where it stands, and the next batch is read.
    assert_eq!(
        r.c.subscription(id).unwrap().state,
        SubscriptionState::Open { generation: 2 }
    );
    r.feed(sid, rows("live", 2, 0, 1));
    assert_eq!(shape(&drain(&mut r, id)), "rows1");
}

#[test]
fn s_8_a_batch_that_exactly_fills_one_subscriptions_budget_is_kept_and_one_byte_less_is_not() {
    let per = rows("live", 1, 0, 10).len();
    let open = opened(1, "live", 1, two_fields()).len();
    // Enough batches to pass the 4 MiB floor of a subscription's budget.
    let k = (4 << 20) / per + 1;
    let exact = open + k * per;
    for (budget, kept) in [(exact, k), (exact - 1, k - 1)] {
        let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
        cfg.subscription_bytes = budget;
        cfg.subscriptions_total_bytes = 64 << 20;
        let mut r = Rig::with(cfg);
        let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
        let sid = r.open();
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(sid, opened(rid, "live", 1, two_fields()));
        for i in 0..k as u64 {
            r.feed(sid, rows("live", 1, i * 10, 10));
        }
        let info = r.c.subscription(id).unwrap();
        assert_eq!(info.retained_bytes, open + kept * per, "budget {budget}");
        let events = drain(&mut r, id);
        let batches = events
            .iter()
            .filter(|e| matches!(e, SubscriptionEvent::Rows(_)))
            .count();
        assert_eq!(batches, kept, "budget {budget}");
        let overflow = events.iter().any(|e| {
            matches!(
                e,
                SubscriptionEvent::Gap(Gap::Overflow {
                    batches: 1,
                    rows: 10,
                    events: 0
                })
            )
        });
        assert_eq!(overflow, kept < k, "what is dropped is reported: {budget}");
    }
}

#[test]
fn s_6_a_second_deletion_while_one_is_out_is_refused_at_the_call() {
    let (mut r, sid, id) = opened_sub();
    r.c.delete_subscription(r.now, id).unwrap();
    r.pump();
    let sent = r.sent.len();
    assert_eq!(
        r.c.delete_subscription(r.now, id).unwrap_err(),
        ClientError::DeletionInProgress
    );
    assert_eq!(
        r.c.unsubscribe(r.now, "live").unwrap_err(),
        ClientError::DeletionInProgress
    );
    r.pump();
    assert_eq!(r.sent.len(), sent, "nothing more was sent");
    let (rid, _) = last_of(&r, ClientRequest::UnsubscribeRequest);
    r.feed(sid, deleted(rid, "live", 1));
    assert_eq!(shape(&drain(&mut r, id)), "end:Deleted");
    assert_eq!(
        r.c.delete_subscription(r.now, id).unwrap_err(),
        ClientError::UnknownHandle,
        "once ended, the handle is gone"
    );
}

/// A `SubscriptionEnded` of `live` with its own words.
fn ended_saying(generation: u64, reason: SubscriptionEndReason, message: &str) -> bytes::Bytes {
    server(ServerBodyT::SubscriptionEnded(Box::new(
        SubscriptionEndedT {
            subscription: handle("live", generation),
            reason: Some(reason),
            message: message.into(),
        },
    )))
}

#[test]
fn s_8_an_event_is_charged_its_words_as_well() {
    // The same events with words 100 bytes longer retain 100 bytes more.
    let mut retained = vec![];
    for words in ["x".repeat(100), "x".repeat(200)] {
        let (mut r, sid, id) = opened_sub();
        let start = r.c.subscription_bytes();
        r.feed(
            sid,
            ended_saying(1, SubscriptionEndReason::RelayChanged, &words),
        );
        let changed = r.c.subscription_bytes() - start;
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(
            sid,
            reply(
                rid,
                ReplyBodyT::RequestRejected(Box::new(RequestRejectedT {
                    rejection: Some(RequestRejection::ServerBusy),
                    field: None,
                    message: words.clone(),
                })),
            ),
        );
        let refused = r.c.subscription_bytes() - start - changed;
        let at = r.c.poll_timeout().unwrap();
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(sid, opened(rid, "live", 2, two_fields()));
        let before_end = r.c.subscription_bytes();
        r.feed(
            sid,
            ended_saying(2, SubscriptionEndReason::RelayRemoved, &words),
        );
        let end = r.c.subscription_bytes() - before_end;
        assert_eq!(
            shape(&drain(&mut r, id)),
            format!(
                "gap:RelayChanged {{ message: {words:?} }} refused open#2 end:RelayRemoved {{ message: {words:?} }}"
            )
        );
        assert_eq!(r.c.subscription_bytes(), 0);
        retained.push([changed, refused, end]);
    }
    for k in 0..3 {
        assert_eq!(retained[1][k] - retained[0][k], 100, "{retained:?}");
    }
}

#[test]
fn s_8_a_refusal_is_charged_alike_whatever_its_cause() {
    let words = "the reopening was left unanswered";
    let mut charged = vec![];
    for cause in 0..3 {
        let (mut r, sid, id) = opened_sub();
        let s2 = lose(&mut r, sid);
        let _ = drain(&mut r, id);
        assert_eq!(r.c.subscription_bytes(), 0);
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        match cause {
            0 => r.feed(
                s2,
                reply(
                    rid,
                    ReplyBodyT::RequestRejected(Box::new(RequestRejectedT {
                        rejection: Some(RequestRejection::ServerBusy),
                        field: None,
                        message: words.into(),
                    })),
                ),
            ),
            1 => r.feed(s2, subscribe_failed(rid, words)),
            _ => r.advance(Duration::from_secs(31)),
        }
        charged.push(r.c.subscription_bytes());
        let events = drain(&mut r, id);
        assert_eq!(shape(&events), "refused", "cause {cause}");
        assert!(matches!(&events[0], SubscriptionEvent::Refused { message } if message == words));
    }
    assert!(charged[0] > words.len(), "{charged:?}");
    assert_eq!(charged[0], charged[1], "{charged:?}");
    assert_eq!(charged[0], charged[2], "{charged:?}");
}

#[test]
fn s_8_an_opening_too_large_to_keep_leaves_the_one_it_would_replace_and_is_counted() {
    let open = opened(1, "live", 1, two_fields()).len();
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscriptions_total_bytes = open + 1000;
    let mut r = Rig::with(cfg);
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 1, two_fields()));
    // The relay changes before anything was read, and the new opening cannot be kept even in
    // the room the unread one it would replace leaves.
    r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayChanged));
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    let wide = opened(rid, "live", 2, wide_schema());
    assert!(wide.len() > open + 1000);
    r.feed(sid, wide);
    assert!(r.c.subscription_bytes() <= open + 1000);
    // The older opening is not replaced by nothing, and the one dropped is counted.
    assert_eq!(
        shape(&drain(&mut r, id)),
        "open#1 gap:RelayChanged { message: \"ended\" } gap:Overflow { batches: 0, rows: 0, events: 1 }"
    );
    assert_eq!(
        r.c.subscription(id).unwrap().state,
        SubscriptionState::Open { generation: 2 }
    );
}

#[test]
fn s_8_a_newer_opening_fits_in_the_room_the_one_it_replaces_leaves_in_its_own_budget() {
    // Openings of about 2.5 MiB each against a subscription's floor of one 4 MiB frame: the
    // second fits only in the room the first, which it replaces, leaves behind.
    let big = |tag: &str| {
        let mut s = two_fields();
        s.fields.push(field(
            &format!("{tag}{}", "n".repeat(5 << 19)),
            ScalarType::U64,
            false,
            false,
        ));
        s
    };
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.subscription_bytes = 0;
    cfg.subscriptions_total_bytes = 64 << 20;
    let mut r = Rig::with(cfg);
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let sid = r.open();
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    let first = opened(rid, "live", 1, big("a"));
    assert!(first.len() > 5 << 19 && 2 * first.len() > 4 << 20);
    r.feed(sid, first);
    r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayChanged));
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, opened(rid, "live", 2, big("b")));
    assert_eq!(
        shape(&drain(&mut r, id)),
        "gap:RelayChanged { message: \"ended\" } open#2"
    );
}

/// One subscription's end takes away its own routes and nobody else's: the other keeps its
/// rows, and what still names the ended one is ignored (S-3).
#[test]
fn s_3_an_end_removes_the_ended_subscriptions_routes_alone() {
    for server_end in [true, false] {
        let (mut r, sid, id) = opened_sub();
        let other =
            r.c.subscribe(
                r.now,
                "d1",
                "CREATE SUBSCRIPTION more AS SELECT * FROM orders",
            )
            .unwrap();
        r.pump();
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(sid, opened(rid, "more", 1, two_fields()));
        assert_eq!(shape(&drain(&mut r, other)), "open#1");
        if server_end {
            r.feed(sid, ended("live", 1, SubscriptionEndReason::RelayRemoved));
        } else {
            r.c.delete_subscription(r.now, id).unwrap();
            r.pump();
            let (rid, _) = last_of(&r, ClientRequest::UnsubscribeRequest);
            r.feed(sid, deleted(rid, "live", 1));
        }
        assert!(shape(&drain(&mut r, id)).starts_with("end:"));
        let ignored = r.c.ignored_subscription_frames();
        r.feed(sid, rows("more", 1, 1, 2));
        r.feed(sid, rows("live", 1, 1, 1));
        assert_eq!(
            shape(&drain(&mut r, other)),
            "rows2",
            "server end: {server_end}"
        );
        assert!(drain(&mut r, id).is_empty());
        assert_eq!(r.c.ignored_subscription_frames(), ignored + 1);
    }
}

/// The reopening on each new session is left unanswered while that session answers everything
/// else (so the reconnect back-off alone never grows). Each time is a refusal (S-7), and the
/// wait before the next reopening grows with each, rather than the client asking again at the
/// fixed rate of its call deadline.
#[test]
fn s_7_reopenings_left_unanswered_in_a_row_are_sent_again_after_growing_waits() {
    let (mut r, sid, id) = opened_sub();
    r.c.handle_closed(r.now, sid);
    r.pump();
    let _ = drain(&mut r, id);
    let waits = unanswered_openings(&mut r, id, vec![sid]);
    for w in waits.windows(2) {
        assert!(w[1] > w[0], "waits grow: {waits:?}");
    }
}

/// Five sessions in a row each carry everything but the opening of `id`, which each leaves
/// unanswered past the call deadline: each time a refusal is reported and the session given
/// up. Gives the waits between giving a session up and sending the opening on the next.
fn unanswered_openings(
    r: &mut Rig,
    id: SubscriptionId,
    mut opened_ones: Vec<SessionId>,
) -> Vec<u64> {
    // When each opening went out, and when the session it went out on was given up.
    let mut sent_at = Vec::new();
    let mut given_up_at = Vec::new();
    for _ in 0..5 {
        // Time passes until the client opens a session and sends the opening on it.
        let mut session = None;
        for _ in 0..100 {
            r.pump();
            let newest = r.connects.last().map(|(s, _)| *s);
            if let Some(s) = newest.filter(|s| !opened_ones.contains(s)) {
                opened_ones.push(s);
                r.c.handle_connected(r.now, s);
                r.pump();
            }
            let current =
                r.c.session()
                    .filter(|s| requests(r, *s).contains(&ClientRequest::SubscribeRequest));
            if current.is_some() {
                session = current;
                break;
            }
            let at = r.c.poll_timeout().expect("the opening is still wanted");
            r.now = at;
            r.c.handle_timeout(at);
        }
        let s = session.expect("the opening went out on a new session");
        sent_at.push(r.now);
        // The session answers a read: it carries other requests.
        let h = r.c.read(r.now, list_domains(), None).unwrap();
        r.pump();
        let (rid, _) = last_of(r, ClientRequest::ListDomainsRequest);
        r.feed(s, domains(rid));
        assert!(read_result(r, h).is_some());
        // The opening is left unanswered past the call deadline: a refusal.
        r.advance(Duration::from_secs(31));
        assert_eq!(shape(&drain(r, id)), "refused");
        assert!(
            r.closes.iter().any(|(c, _)| *c == s),
            "the session is given up"
        );
        given_up_at.push(r.now);
        r.c.handle_closed(r.now, s);
        r.pump();
        let _ = drain(r, id);
    }
    given_up_at
        .iter()
        .zip(sent_at.iter().skip(1))
        .map(|(g, s)| s.as_nanos() - g.as_nanos())
        .collect()
}

/// A first opening left unanswered is a refusal like a reopening's: it is reported, and the
/// next session sends it after a wait that grows with each, not at the fixed rate of the call
/// deadline (S-7; every retry backs off).
#[test]
fn s_7_first_openings_left_unanswered_in_a_row_are_reported_and_sent_again_after_growing_waits() {
    let mut r = Rig::new();
    let id = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    let waits = unanswered_openings(&mut r, id, vec![]);
    for w in waits.windows(2) {
        assert!(w[1] > w[0], "waits grow: {waits:?}");
    }
    assert_eq!(
        r.c.subscription(id).unwrap().state,
        SubscriptionState::Waiting
    );
}

/// The current session refused to open the subscription again: no session holds it, so its
/// deletion completes at once without an `UnsubscribeRequest`, and its name is free (S-7).
#[test]
fn s_7_a_deletion_after_a_refused_reopening_completes_without_a_request_and_frees_the_name() {
    let (mut r, sid, id) = opened_sub();
    let s2 = lose(&mut r, sid);
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(s2, subscribe_failed(rid, "relay busy"));
    assert_eq!(shape(&drain(&mut r, id)), "gap:SessionLost refused");
    let before = requests(&r, s2).len();
    r.c.delete_subscription(r.now, id).unwrap();
    r.pump();
    assert_eq!(shape(&drain(&mut r, id)), "end:Deleted");
    assert_eq!(r.c.live_subscriptions(), 0);
    // Nothing was sent for it, not even once the refusal's wait is over.
    if let Some(at) = r.c.poll_timeout() {
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
    }
    assert_eq!(requests(&r, s2).len(), before, "{:?}", requests(&r, s2));
    // The name is released: the same statement opens a new subscription at once.
    let again = r.c.subscribe(r.now, "d1", STATEMENT).unwrap();
    r.pump();
    assert_eq!(
        requests(&r, s2)[before..],
        [ClientRequest::SubscribeRequest]
    );
    assert_ne!(again, id);
}

/// The session that held the subscription ended: its deletion completes without a request and
/// the name is free at once (S-7), as it is when the deletion was out and its session ended
/// before the answer.
#[test]
fn s_7_a_deletion_completed_without_an_answer_releases_the_name() {
    // Deleted after the session ended.
    let (mut r, sid, id) = opened_sub();
    r.c.handle_closed(r.now, sid);
    r.pump();
    assert!(matches!(
        r.c.subscribe(r.now, "d1", STATEMENT).unwrap_err(),
        ClientError::NameInUse { .. }
    ));
    r.c.delete_subscription(r.now, id).unwrap();
    assert_eq!(shape(&drain(&mut r, id)), "gap:SessionLost end:Deleted");
    assert!(r.c.subscribe(r.now, "d1", STATEMENT).is_ok(), "name free");
    // Deleted, and the session ended before the answer.
    let (mut r, sid, id) = opened_sub();
    r.c.delete_subscription(r.now, id).unwrap();
    r.pump();
    assert!(requests(&r, sid).contains(&ClientRequest::UnsubscribeRequest));
    assert!(matches!(
        r.c.subscribe(r.now, "d1", STATEMENT).unwrap_err(),
        ClientError::NameInUse { .. }
    ));
    r.c.handle_closed(r.now, sid);
    r.pump();
    assert_eq!(shape(&drain(&mut r, id)), "end:Deleted");
    assert!(r.c.subscribe(r.now, "d1", STATEMENT).is_ok(), "name free");
}

/// A gap names its generation like a batch does: delivery loss or skipped rows of a generation
/// the client does not hold open (an older one, or one not yet opened) are ignored and never
/// reported as a gap of the open one (S-3).
#[test]
fn s_3_a_gap_of_another_generation_is_not_applied_to_the_open_one() {
    let (mut r, sid, id) = opened_sub();
    r.feed(sid, delivery_lost("live", 2, 5));
    r.feed(sid, rows_skipped("live", 2, 4));
    assert_eq!(r.c.ignored_subscription_frames(), 2);
    assert!(drain(&mut r, id).is_empty());
    // Reopened on a new session as generation 2: gaps of generation 1 are not applied to it.
    let s2 = lose(&mut r, sid);
    let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(s2, opened(rid, "live", 2, two_fields()));
    assert_eq!(shape(&drain(&mut r, id)), "gap:SessionLost open#2");
    r.feed(s2, delivery_lost("live", 1, 5));
    r.feed(s2, rows_skipped("live", 1, 4));
    assert_eq!(r.c.ignored_subscription_frames(), 4);
    assert!(drain(&mut r, id).is_empty());
    // Its own generation's gaps are reported.
    r.feed(s2, delivery_lost("live", 2, 5));
    r.feed(s2, rows_skipped("live", 2, 4));
    assert_eq!(r.c.ignored_subscription_frames(), 4);
    assert_eq!(drain(&mut r, id).len(), 2);
}

/// The name a statement gives is read whole, quoted or not, so a deletion in flight holds
/// exactly that name until its unsubscribe is answered (S-7) and no other name is taken for it:
/// a quoted name is held like a bare one, and `a-b` is neither `a` nor free while `a-b` opens.
#[test]
fn s_7_the_name_held_for_a_deletion_in_flight_is_the_whole_name_the_statement_gives() {
    let mut r = Rig::new();
    let quoted =
        r.c.subscribe(
            r.now,
            "d1",
            "CREATE SUBSCRIPTION \"live\" AS SELECT * FROM orders",
        )
        .unwrap();
    let sid = r.open();
    r.c.delete_subscription(r.now, quoted).unwrap();
    r.pump();
    for again in [
        "CREATE SUBSCRIPTION \"live\" AS SELECT * FROM orders",
        "CREATE SUBSCRIPTION live AS SELECT * FROM orders",
    ] {
        assert_eq!(
            r.c.subscribe(r.now, "d1", again).unwrap_err(),
            ClientError::NameInUse {
                name: "live".into()
            },
            "{again}"
        );
    }
    let _ = sid;
    // A name with a dash is the whole word: it does not stand for `a`, and is held itself.
    let a =
        r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION a FROM orders")
            .unwrap();
    let ab =
        r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION a-b FROM orders")
            .expect("a-b is not a");
    assert_ne!(a, ab);
    assert_eq!(
        r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION a-b FROM prices")
            .unwrap_err(),
        ClientError::NameInUse { name: "a-b".into() }
    );
}

/// A reopening rejected for a defect in the request (C-8: InvalidRequest, UnsupportedRequest,
/// UnsupportedValue, DuplicateRequestId, ReplyTooLarge) is never sent again unchanged: the
/// refusal ends the subscription, reported, instead of going again after a wait (S-7). A busy
/// server's refusal still goes again.
#[test]
fn s_7_a_reopening_rejected_as_a_defect_ends_the_subscription_and_is_not_sent_again() {
    for rejection in [
        RequestRejection::InvalidRequest,
        RequestRejection::UnsupportedRequest,
        RequestRejection::UnsupportedValue,
        RequestRejection::DuplicateRequestId,
        RequestRejection::ReplyTooLarge,
    ] {
        let (mut r, sid, id) = opened_sub();
        let s2 = lose(&mut r, sid);
        let _ = drain(&mut r, id);
        let (rid, _) = last_of(&r, ClientRequest::SubscribeRequest);
        r.feed(s2, rejected(rid, rejection));
        let events = drain(&mut r, id);
        assert!(
            matches!(
                events.as_slice(),
                [SubscriptionEvent::Ended(SubscriptionEnd::Refused { .. })]
            ),
            "{rejection:?}: {}",
            shape(&events)
        );
        assert_eq!(r.c.live_subscriptions(), 0);
        let before = requests(&r, s2).len();
        r.advance(Duration::from_secs(60));
        assert_eq!(
            requests(&r, s2).len(),
            before,
            "{rejection:?}: never sent again"
        );
        // The name is free again.
        assert!(r.c.subscribe(r.now, "d1", STATEMENT).is_ok());
    }
}
