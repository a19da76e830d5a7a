//! What one command's round trip through the client costs in heap allocations: `execute`, its
//! frame taken, its outcome handed in, every poll drained. A counting global allocator sees
//! every allocation of this test binary; only those the test's own thread makes while the
//! client works are counted, so building the scripted server's reply is left out. The count
//! is pinned: a change that adds an allocation to the path every request takes fails here.

mod support;

use bytes::Bytes;
use nervix_protocol::client::*;
use nervix_protocol::exchange::ExchangeConfig;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell as StdCell;
use support::rig::{ep, WALL};
use support::{completed, outcome, sent};

/// Counts allocations made by the thread that armed it, and passes everything to the system.
struct Counting;

thread_local! {
    static ARMED: StdCell<bool> = const { StdCell::new(false) };
    static ALLOCATIONS: StdCell<usize> = const { StdCell::new(0) };
}

fn count() {
    // `try_with`: the thread-locals may be gone while a thread is torn down.
    if ARMED.try_with(StdCell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only an
// atomic and a const-initialised thread-local, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns how many allocations this thread made meanwhile.
fn allocations_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(StdCell::get);
    ARMED.with(|a| a.set(true));
    let out = f();
    ARMED.with(|a| a.set(false));
    (out, ALLOCATIONS.with(StdCell::get) - before)
}

/// Takes every action and event; returns the frames sent.
fn drain(c: &mut Client) -> Vec<Bytes> {
    let mut frames = vec![];
    while let Some(a) = c.poll_action() {
        if let Action::Send { frame, .. } = a {
            frames.push(frame);
        }
    }
    while c.poll_event().is_some() {}
    frames
}

/// A client whose session carries `room` requests at once, opened and ready.
fn ready_client(room: usize) -> (Client, SessionId) {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    config.exchange = ExchangeConfig::default().with_max_in_flight(room);
    let mut c = Client::new(config);
    c.select_domain(Some("d1")).unwrap();
    c.read(
        Timestamp::ZERO,
        ClientRequestT::ListDomainsRequest(Box::default()),
        None,
    )
    .unwrap();
    let sid = loop {
        match c.poll_action() {
            Some(Action::Connect { session, .. }) => break session,
            Some(_) => {}
            None => panic!("no connect asked for"),
        }
    };
    c.handle_connected(Timestamp::ZERO, sid);
    let frames = drain(&mut c);
    let read = sent(frames.last().expect("the read went out"));
    c.handle_frame(Timestamp::ZERO, sid, support::domains(read.request_id));
    drain(&mut c);
    assert!(c.is_ready());
    (c, sid)
}

/// One round trip; returns the allocations the client made for it, counting the outcome
/// the application is handed (and drops) as part of it.
fn round_trip(c: &mut Client, sid: SessionId) -> usize {
    let now = Timestamp::ZERO;
    let ((h, frame), out) = allocations_during(|| {
        let h = c.execute(now, WALL, "INSERT INTO t VALUES (-1)").unwrap();
        let frame = c.poll_action();
        let _ = c.poll_timeout();
        (h, frame)
    });
    let Some(Action::Send { frame, .. }) = frame else {
        panic!("the command did not go out: {frame:?}");
    };
    let m = sent(&frame);
    drop(frame);
    let ClientRequestT::CommandRequest(req) = &m.request else {
        panic!("not a command: {m:?}");
    };
    let reply = outcome(m.request_id, &req.execution_reference, completed());
    let (done, back) = allocations_during(|| {
        c.handle_frame(now, sid, reply);
        while let Some(a) = c.poll_action() {
            assert!(!matches!(a, Action::Close { .. }), "the session is kept");
        }
        let mut done = false;
        while let Some(e) = c.poll_event() {
            done |= matches!(
                e,
                ClientEvent::Command { handle, result: CommandResult::Completed(_) } if handle == h
            );
        }
        let _ = c.poll_timeout();
        done
    });
    assert!(done, "the command completed");
    out + back
}

/// The allocations of each of `trips` round trips after a few that warm the client's queues.
fn per_trip(others: usize, trips: usize) -> Vec<usize> {
    let (mut c, sid) = ready_client(others + 16);
    for i in 0..others {
        c.execute(
            Timestamp::ZERO,
            WALL,
            &format!("INSERT INTO t VALUES ({i})"),
        )
        .unwrap();
        drain(&mut c);
    }
    for _ in 0..8 {
        round_trip(&mut c, sid);
    }
    (0..trips).map(|_| round_trip(&mut c, sid)).collect()
}

#[test]
fn a_command_round_trip_allocates_a_pinned_number_of_times() {
    let counts = per_trip(1, 64);
    println!("allocations per round trip: {counts:?}");
    let most = *counts.iter().max().unwrap();
    let least = *counts.iter().min().unwrap();
    assert_eq!(least, PINNED, "allocations of one round trip: {counts:?}");
    // The output arena is cut once per 64 KiB of frames: now and then a trip pays for it.
    assert!(
        most <= PINNED + 1,
        "allocations of one round trip: {counts:?}"
    );
}

#[test]
fn the_count_does_not_grow_with_the_calls_open() {
    let few = per_trip(1, 16);
    let many = per_trip(1_000, 16);
    assert_eq!(
        few.iter().min(),
        many.iter().min(),
        "allocations per round trip with 1 and 1,000 other calls open: {few:?} {many:?}"
    );
}

/// Allocations of one round trip, at their fewest: the command's query and domain, which it
/// keeps to repeat them exactly (E-2), its new reference's text (which its outcome's report
/// shares), and the reply frame copied out of its receive buffer (F-9). Nothing else: the
/// statement is classified in place, every attempt's frame is written from the kept command
/// into the encoder's arena, and the client's list of due calls is reused.
const PINNED: usize = 4;
