//! What one command's round trip through the client costs in heap allocations: `execute`, its
//! frame taken, its outcome handed in, every poll drained. A counting global allocator sees
//! every allocation of this test binary; only those the test's own thread makes while the
//! client works are counted, so building the scripted server's reply is left out. The count
//! is pinned: a change that adds an allocation to the path every request takes fails here.

mod support;

use nervix_protocol::client::*;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use support::rig::WALL;
use support::{answer, completed, outcome, sent};

#[path = "support/counting.rs"]
mod counting;

use counting::allocations_during;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

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
        answer(
            c,
            now,
            sid,
            reply,
            |e| matches!(e, ClientEvent::Command { handle, result: CommandResult::Completed(_) } if *handle == h),
        )
    });
    assert!(done, "the command completed");
    out + back
}

/// The allocations of each of `trips` round trips after a few that warm the client's queues.
fn per_trip(others: usize, trips: usize) -> Vec<usize> {
    let (mut c, sid) = support::with_commands_out(others);
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
