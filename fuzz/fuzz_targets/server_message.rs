//! Arbitrary bytes as a `ServerMessage` frame (NXSM): checked reading refuses or accepts without
//! panicking, and an accepted frame is read through every accessor and copied out whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_fuzz::read_frame;
use nervix_protocol::frame::ServerMessageRoot;

fuzz_target!(|data: &[u8]| read_frame::<ServerMessageRoot>(data));
