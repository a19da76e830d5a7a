//! Arbitrary bytes as a `UploadReply` frame (NXUR): checked reading refuses or accepts without
//! panicking, and an accepted frame is read through every accessor and copied out whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_fuzz::read_frame;
use nervix_protocol::frame::UploadReplyRoot;

fuzz_target!(|data: &[u8]| read_frame::<UploadReplyRoot>(data));
