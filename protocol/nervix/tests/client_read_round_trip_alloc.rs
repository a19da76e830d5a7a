//! What one read's round trip through the client costs in heap allocations: `read`, its frame
//! taken, its reply handed in, every poll drained. As `client_round_trip_alloc` for commands:
//! a counting global allocator sees only what the test's own thread allocates while the client
//! works, so building the scripted server's reply is left out. The count is pinned: a change
//! that adds an allocation to the path every read takes fails here.

mod support;

use nervix_protocol::client::*;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use support::{answer, domains, sent};

#[path = "support/counting.rs"]
mod counting;

use counting::allocations_during;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// One read's round trip; the allocations the client made for it, counting the reply the
/// application is handed (and drops) as part of it.
fn round_trip(c: &mut Client, sid: SessionId) -> usize {
    let now = Timestamp::ZERO;
    let request = ClientRequestT::ListDomainsRequest(Box::default());
    let ((h, frame), out) = allocations_during(|| {
        let h = c.read(now, request, None).unwrap();
        let frame = c.poll_action();
        let _ = c.poll_timeout();
        (h, frame)
    });
    let Some(Action::Send { frame, .. }) = frame else {
        panic!("the read did not go out: {frame:?}");
    };
    let m = sent(&frame);
    drop(frame);
    let reply = domains(m.request_id);
    let (done, back) = allocations_during(|| {
        answer(
            c,
            now,
            sid,
            reply,
            |e| matches!(e, ClientEvent::Read { handle, result: ReadResult::Replied(_) } if *handle == h),
        )
    });
    assert!(done, "the read was answered");
    out + back
}

#[test]
fn a_read_round_trip_allocates_a_pinned_number_of_times() {
    let (mut c, sid) = support::with_commands_out(1);
    for _ in 0..8 {
        round_trip(&mut c, sid);
    }
    let counts: Vec<usize> = (0..64).map(|_| round_trip(&mut c, sid)).collect();
    let least = *counts.iter().min().unwrap();
    let most = *counts.iter().max().unwrap();
    assert_eq!(least, PINNED, "allocations of one read: {counts:?}");
    // The output arena is cut once per 64 KiB of frames: now and then a read pays for it.
    assert!(most <= PINNED + 1, "allocations of one read: {counts:?}");
}

/// Allocations of one read's round trip, at their fewest: the reply frame copied out of its
/// receive buffer (F-9). The request is checked without building its frame, and its frame
/// is written into the encoder's arena.
const PINNED: usize = 1;
