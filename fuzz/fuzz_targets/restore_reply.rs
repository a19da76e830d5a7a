//! Arbitrary bytes as a `RestoreReply` frame (NXRR): checked reading refuses or accepts without
//! panicking, and an accepted frame is read through every accessor and copied out whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_fuzz::read_frame;
use nervix_protocol::frame::RestoreReplyRoot;

fuzz_target!(|data: &[u8]| read_frame::<RestoreReplyRoot>(data));
