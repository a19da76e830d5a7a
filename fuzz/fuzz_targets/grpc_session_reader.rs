//! The tokio driver's gRPC session reader under hostile bytes: the input is a response body
//! cut into chunks as the network might deliver it, and the status its trailers carry. Every
//! message the reader takes out goes into a live client, as the driver hands it.
//!
//! Asserted: nothing panics; every message handed on is within the frame limit and the
//! messages with their prefixes never add up to more than the body; a body with bytes left
//! over ends as a transport failure whatever its status; and the client, told the session
//! ended, settles every command by its deadline.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_fuzz::Input;
use nervix_protocol::limits::FRAME_LIMIT;
use nervix_tokio::{read_grpc_body, End};

#[path = "session_common.rs"]
mod session_common;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let status = match input.byte() {
        0..=127 => Some(0),
        b => Some(u32::from(b % 20)).filter(|_| b < 250),
    };
    let chunking = usize::from(input.byte()) + 1;
    let body = input.rest();
    let mut session = session_common::Session::open();
    let mut handed = 0usize;
    let end = read_grpc_body(body.chunks(chunking), status, |m| {
        assert!(m.len() <= FRAME_LIMIT, "a message above the frame limit");
        handed += 5 + m.len();
        session.frame(m);
        true
    });
    assert!(handed <= body.len(), "more read than the body held");
    if handed < body.len() && !matches!(end, End::OversizedFrame) {
        assert!(
            matches!(end, End::Transport(_)),
            "{} bytes left over ended as {end:?}",
            body.len() - handed
        );
    }
    session.close();
});
