//! What the client holds per idle thing it keeps open (issue 17, item 5): a command out and
//! unanswered, an open subscription with nothing unread, an open producer with no batch, and
//! an open consumer waiting for a delivery. A counting allocator (this binary's own) measures
//! the bytes the client holds after opening many of each, less what it held before; each must
//! stay under 2 KiB beyond the application's own text (query, statement, names).

mod support;

use nervix_protocol::client::*;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use support::dataplane::{emitter_opened, fields, producer_opened, Grant};
use support::rig::WALL;
use support::sent;
use support::streams::{opened, two_fields};

struct Counting;

thread_local! {
    /// Bytes allocated and not yet freed by this thread.
    static LIVE: Cell<i64> = const { Cell::new(0) };
}

fn count(delta: i64) {
    let _ = LIVE.try_with(|l| l.set(l.get() + delta));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as i64));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> i64 {
    LIVE.with(|l| l.get())
}

const NOW: Timestamp = Timestamp::ZERO;
/// How many of each thing are opened: enough that the maps' growth is spread thin.
const MANY: usize = 1_000;
const LIMIT: i64 = 2 * 1024;

/// Bytes held per thing once `MANY` are open through `open`, less `own` bytes of the
/// application's text each carries.
fn per_entry(own: usize, mut open: impl FnMut(&mut Client, SessionId, usize)) -> i64 {
    let (mut c, sid) = support::ready_client(4 * MANY);
    // One first, so the one-time state (schemas seen, caches) is not charged to the many.
    open(&mut c, sid, 0);
    let before = live();
    for i in 1..=MANY {
        open(&mut c, sid, i);
    }
    let held = live() - before;
    let per = held / MANY as i64 - own as i64;
    drop(c);
    per
}

#[test]
fn bytes_held_per_idle_command_subscription_producer_and_consumer_stay_under_2_kib() {
    let query = "INSERT INTO t VALUES (1)";
    let command = per_entry(2 * query.len(), |c, _, _| {
        c.execute(NOW, WALL, query).unwrap();
        support::drain_sent(c);
    });
    let statement = |i: usize| format!("CREATE SUBSCRIPTION s{i:05} AS SELECT * FROM orders");
    let subscription = per_entry(statement(0).len() + 6, |c, sid, i| {
        let name = format!("s{i:05}");
        let id = c.subscribe(NOW, "d1", &statement(i)).unwrap();
        let m = sent(
            support::drain_sent(c)
                .last()
                .expect("the subscribe went out"),
        );
        c.handle_frame(NOW, sid, opened(m.request_id, &name, 1, two_fields()));
        support::drain_sent(c);
        while c.poll_subscription(id).is_some() {}
    });
    let producer = per_entry(0, |c, sid, _| {
        c.open_producer(NOW, ProducerSpec::new("d1", "orders_in", fields()))
            .unwrap();
        let m = sent(support::drain_sent(c).last().expect("the open went out"));
        c.handle_frame(
            NOW,
            sid,
            producer_opened(m.request_id, &Grant::default(), ProducerAdmission::Open),
        );
        support::drain_sent(c);
        while c.poll_producer_events().is_some() {}
    });
    let consumer = per_entry(0, |c, sid, _| {
        c.open_consumer(NOW, ConsumerSpec::new("d1", "alerts", fields()))
            .unwrap();
        let m = sent(support::drain_sent(c).last().expect("the open went out"));
        c.handle_frame(NOW, sid, emitter_opened(m.request_id, &Grant::default()));
        support::drain_sent(c);
        while c.poll_consumer_events().is_some() {}
    });
    println!(
        "bytes held per idle entry: command {command}, subscription {subscription}, \
         producer {producer}, consumer {consumer}"
    );
    for (what, bytes) in [
        ("command", command),
        ("subscription", subscription),
        ("producer", producer),
        ("consumer", consumer),
    ] {
        assert!(bytes > 0, "{what}: nothing held?");
        assert!(bytes < LIMIT, "an idle {what} holds {bytes} bytes");
    }
}
