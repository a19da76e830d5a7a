//! The blocking driver's console session reader under hostile bytes: the input is what a
//! console server sent after the upgrade, read with the live session's limits and meaning of
//! each message. Every binary message goes into a live client, as the driver hands it.
//!
//! Asserted: nothing panics; every message handed on is within the frame limit and the
//! messages never add up to more than the bytes read; and the client, told the session
//! ended, settles every command by its deadline.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_blocking::read_console;
use nervix_protocol::limits::FRAME_LIMIT;

#[path = "session_common.rs"]
mod session_common;

fuzz_target!(|data: &[u8]| {
    let mut session = session_common::Session::open();
    let mut handed = 0usize;
    let end = read_console(data, |m| {
        assert!(m.len() <= FRAME_LIMIT, "a message above the frame limit");
        handed += m.len();
        session.frame(m);
        true
    });
    std::hint::black_box(end);
    assert!(
        handed <= data.len(),
        "more read than the connection carried"
    );
    session.close();
});
