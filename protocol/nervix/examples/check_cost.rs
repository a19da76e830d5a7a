//! Checked reading of the frames the `decode` and `rows` benches use, a fixed number of times,
//! for counting instructions (`valgrind --tool=callgrind`), which unlike time does not depend on
//! what else the machine is doing.
//!
//! `check_cost SHAPE MODE N`: SHAPE is `mixed` (the `decode` bench's ~1 MiB RowBatch of mixed
//! cells, a branch key and lists) or `1`, `16`, `64` (the `rows` bench's columns); MODE is
//! `bare` (the flatbuffers verifier alone), `frame` (`Frame::check`) or `rows` (`Frame::check`
//! then `CheckedBatch::check`, the `rows` bench's `checked`). Run it with N = 0 and N = k and
//! subtract to leave out building the frame.

#[path = "../benches/shared/frames.rs"]
mod frames;

use nervix_protocol::frame::ServerFrame;
use nervix_protocol::limits::verifier_options;
use nervix_protocol::rows::CheckedBatch;
use nervix_protocol::schema::ServerMessage;
use std::hint::black_box;
use std::sync::Arc;

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "mixed".to_owned());
    let mode = args.next().unwrap_or_else(|| "frame".to_owned());
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let columns = match shape.as_str() {
        "mixed" => 0,
        other => other.parse().expect("SHAPE is mixed, 1, 16 or 64"),
    };
    let bytes = if columns == 0 {
        frames::mixed_frame()
    } else {
        frames::typed_frame(columns).0
    };
    let schema = (columns > 0).then(|| frames::compiled(columns));
    for _ in 0..n {
        let ok = match mode.as_str() {
            "bare" => flatbuffers::root_with_opts::<ServerMessage<'_>>(
                &verifier_options(bytes.len()),
                black_box(&bytes[..]),
            )
            .is_ok(),
            "frame" => ServerFrame::check(black_box(bytes.clone())).is_ok(),
            "rows" => {
                let f = ServerFrame::check(black_box(bytes.clone())).expect("frame checks");
                let schema = schema.as_ref().expect("rows needs a column count");
                CheckedBatch::check(f, Arc::clone(schema)).is_ok()
            }
            other => panic!("unknown mode {other}"),
        };
        assert!(black_box(ok));
    }
}
