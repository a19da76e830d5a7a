//! The client's cost per input does not grow with what is open (issue 17, item 1). Not a
//! timing test: the `testkit` feature counts every entry of the client's capability maps
//! that an iteration hands out, and one round trip (or one batch of rows) must visit exactly
//! as many with thousands of other calls (or subscriptions) open as with one. A scan of every
//! open entry reintroduced anywhere in the drains moves the count by their number.

mod support;

use nervix_protocol::client::*;
use nervix_protocol::schema::*;
use nervix_protocol::testkit::visited;
use nervix_protocol::time::Timestamp;
use support::rig::WALL;
use support::streams::{opened, rows, two_fields};
use support::{completed, outcome, sent};

/// Entries visited by one command's round trip (execute, its frame out, its outcome in,
/// every poll drained) on a client with `others` commands out and unanswered.
fn round_trip_visits(others: usize) -> u64 {
    let (mut c, sid) = support::with_commands_out(others);
    let now = Timestamp::ZERO;
    assert_eq!(c.outstanding_commands(), others);
    let before = visited();
    let h = c.execute(now, WALL, "INSERT INTO t VALUES (-1)").unwrap();
    let frames = support::drain_sent(&mut c);
    let _ = c.poll_timeout();
    let m = sent(&frames[0]);
    let ClientRequestT::CommandRequest(req) = &m.request else {
        panic!("not a command: {m:?}");
    };
    let reply = outcome(m.request_id, &req.execution_reference, completed());
    c.handle_frame(now, sid, reply);
    let mut done = false;
    while let Some(a) = c.poll_action() {
        assert!(!matches!(a, Action::Close { .. }));
    }
    while let Some(e) = c.poll_event() {
        done |= matches!(e, ClientEvent::Command { handle, result: CommandResult::Completed(_) } if handle == h);
    }
    let _ = c.poll_timeout();
    c.handle_timeout(now);
    let _ = c.poll_timeout();
    let cost = visited() - before;
    assert!(done, "the command completed");
    assert_eq!(c.outstanding_commands(), others);
    cost
}

#[test]
fn one_round_trip_costs_the_same_with_one_or_ten_thousand_other_calls_open() {
    let one = round_trip_visits(1);
    let many = round_trip_visits(10_000);
    println!("entries visited by one round trip: {one} with 1 other call open, {many} with 10,000");
    assert!(one > 0, "the round trip's own command is visited");
    assert_eq!(one, many, "a drain scans the open calls");
}

/// Entries visited when one command's deadline passes while its attempt is out (the client
/// stops waiting for it, C-10) on a client with `others` other commands out and unanswered.
fn abandon_visits(others: usize) -> u64 {
    let (mut c, sid) = support::with_commands_out(others);
    let now = Timestamp::ZERO;
    let wait = std::time::Duration::from_secs(1);
    let h = c
        .execute_with(now, WALL, "INSERT INTO t VALUES (-1)", None, Some(wait))
        .unwrap();
    assert_eq!(support::drain_sent(&mut c).len(), 1, "its attempt is out");
    // The session is heard from after the command went out, so it is not taken for a silent
    // one (T-8) and replaced, which would visit every call out on it.
    c.read(
        now,
        ClientRequestT::ListDomainsRequest(Box::default()),
        None,
    )
    .unwrap();
    let read = sent(
        support::drain_sent(&mut c)
            .last()
            .expect("the read went out"),
    );
    c.handle_frame(now, sid, support::domains(read.request_id));
    support::drain_sent(&mut c);
    let before = visited();
    c.handle_timeout(now + wait);
    let mut ended = false;
    while c.poll_action().is_some() {}
    while let Some(e) = c.poll_event() {
        ended |= matches!(e, ClientEvent::Command { handle, .. } if handle == h);
    }
    let cost = visited() - before;
    assert!(ended, "the command ended at its deadline");
    assert_eq!(c.outstanding_commands(), others);
    cost
}

#[test]
fn one_abandoned_call_costs_the_same_with_one_or_ten_thousand_other_calls_open() {
    // Nothing searches the session's requests for the one to stop waiting for: the call knows
    // its attempt (here already ended by the request's own deadline, the same as the call's).
    let one = abandon_visits(1);
    let many = abandon_visits(10_000);
    assert_eq!(one, many, "abandoning a call scans the calls out");
}

/// The counter the two tests above compare counts a real scan: losing the session must look
/// at every command out on it (each becomes uncertain or is sent again), so the count grows
/// by at least their number. Without this, a counter that counts nothing would make the
/// equalities above hold trivially.
#[test]
fn the_visit_counter_sees_a_scan_of_every_open_call() {
    let others = 500;
    let (mut c, sid) = support::with_commands_out(others);
    let now = Timestamp::ZERO;
    let before = visited();
    c.handle_closed(now, sid);
    support::drain_sent(&mut c);
    let cost = visited() - before;
    assert!(
        cost >= others as u64,
        "losing the session visited {cost} entries with {others} commands out"
    );
}

/// Entries visited by one batch of rows to one subscription (the frame in, its event read,
/// every poll drained) on a client with `others` other subscriptions open.
fn row_batch_visits(others: usize) -> u64 {
    let (mut c, sid) = support::ready_client(64);
    let now = Timestamp::ZERO;
    let mut target = None;
    for i in 0..=others {
        let name = format!("s{i}");
        let id = c
            .subscribe(
                now,
                "d1",
                &format!("CREATE SUBSCRIPTION {name} AS SELECT * FROM orders"),
            )
            .unwrap();
        let frames = support::drain_sent(&mut c);
        let m = sent(frames.last().expect("the subscribe went out"));
        c.handle_frame(now, sid, opened(m.request_id, &name, 1, two_fields()));
        support::drain_sent(&mut c);
        while c.poll_subscription(id).is_some() {}
        target = Some((id, name));
    }
    let (id, name) = target.unwrap();
    assert_eq!(c.live_subscriptions(), others + 1);
    let frame = rows(&name, 1, 0, 4);
    let before = visited();
    c.handle_frame(now, sid, frame);
    support::drain_sent(&mut c);
    let mut batches = 0;
    while let Some((from, ev)) = c.poll_subscriptions() {
        assert_eq!(from, id);
        batches += usize::from(matches!(ev, SubscriptionEvent::Rows(_)));
    }
    let _ = c.poll_timeout();
    let cost = visited() - before;
    assert_eq!(batches, 1);
    cost
}

#[test]
fn one_row_batch_costs_the_same_with_one_or_a_thousand_other_subscriptions_open() {
    let one = row_batch_visits(1);
    let many = row_batch_visits(1_000);
    println!("entries visited by one batch of rows: {one} with 1 other subscription open, {many} with 1,000");
    assert!(one > 0, "the batch's own subscription is visited");
    assert_eq!(one, many, "a drain scans the open subscriptions");
}

/// `poll_subscriptions` takes the subscriptions holding events round a ring from where it last
/// took one, through the index of marked entries: once it has served a later subscription, an
/// earlier one that gets rows afterwards is found by wrapping round, not missed.
#[test]
fn poll_subscriptions_wraps_round_to_an_earlier_subscription() {
    let (mut c, sid) = support::ready_client(64);
    let now = Timestamp::ZERO;
    let mut subs = vec![];
    for name in ["early", "late"] {
        let id = c
            .subscribe(
                now,
                "d1",
                &format!("CREATE SUBSCRIPTION {name} AS SELECT * FROM orders"),
            )
            .unwrap();
        let frames = support::drain_sent(&mut c);
        let m = sent(frames.last().expect("the subscribe went out"));
        c.handle_frame(now, sid, opened(m.request_id, name, 1, two_fields()));
        support::drain_sent(&mut c);
        while c.poll_subscription(id).is_some() {}
        subs.push(id);
    }
    let rows_of = |c: &mut Client| {
        let mut got = vec![];
        while let Some((from, ev)) = c.poll_subscriptions() {
            if matches!(ev, SubscriptionEvent::Rows(_)) {
                got.push(from);
            }
        }
        got
    };
    c.handle_frame(now, sid, rows("late", 1, 0, 4));
    support::drain_sent(&mut c);
    assert_eq!(rows_of(&mut c), vec![subs[1]]);
    c.handle_frame(now, sid, rows("early", 1, 0, 4));
    support::drain_sent(&mut c);
    assert_eq!(
        rows_of(&mut c),
        vec![subs[0]],
        "the earlier subscription's rows are found"
    );
}
