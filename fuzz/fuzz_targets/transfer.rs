//! Transfer reassembly: the input is read as a sequence of transfer parts (request id, total,
//! offset, chunk) fed to one `TransferAssembler`. The first byte picks how:
//!
//! * parts spelled out one by one, each member either consistent with the assembly so far or
//!   drawn from the input (another identity, a changed or huge total, a wrong offset, an empty
//!   or overrunning chunk);
//! * a schema-valid `Reply` drawn by the testkit generators, encoded, optionally corrupted in
//!   one byte, and split into parts of input-chosen sizes;
//! * the rest of the input taken as the joined frame and split into equal parts.
//!
//! Totals are kept under 1 MiB except for deliberately huge ones (which the assembler must
//! refuse or can never complete), and synthesised chunks under 4 KiB, so memory stays bounded.
//! Nothing may panic; a completed reply is read through every accessor.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_fuzz::{walk, Input};
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::ServerMessageRoot;
use nervix_protocol::limits::TRANSFER_LIMIT;
use nervix_protocol::schema::{ReplyT, ServerBodyT, ServerMessageT};
use nervix_protocol::testkit::Gen;
use nervix_protocol::{TransferAssembler, TransferProgress};
use std::hint::black_box;

/// Totals drawn from the input are reduced below this.
const SMALL_TOTAL: u64 = 1 << 20;
/// The largest chunk synthesised rather than taken from the input.
const MAX_FILL: u64 = 4096;
/// The most parts one input feeds.
const MAX_PARTS: usize = 1024;

/// One assembler and what the parts fed so far announced.
#[derive(Default)]
struct Feeder {
    assembler: TransferAssembler,
    request_id: u64,
    total: u64,
    received: u64,
}

impl Feeder {
    fn feed(&mut self, request_id: u64, total: u64, offset: u64, chunk: &[u8]) {
        let result = self.assembler.accept_raw(request_id, total, offset, chunk);
        black_box(self.assembler.assembling());
        match result {
            Ok(TransferProgress::Pending { received, total }) => {
                self.request_id = request_id;
                self.total = total;
                self.received = received;
            }
            Ok(TransferProgress::Complete(frame)) => {
                walk(&frame);
                self.received = 0;
            }
            Ok(other) => {
                black_box(other);
            }
            Err(violation) => {
                black_box(violation.to_string());
                self.received = 0;
            }
        }
    }

    /// Feeds `frame` as parts of consecutive sizes from `sizes` (the rest in one last part).
    fn split(&mut self, request_id: u64, frame: &[u8], mut sizes: impl FnMut() -> usize) {
        let total = frame.len() as u64;
        let mut offset = 0;
        let mut parts = 0;
        while offset < frame.len() {
            parts += 1;
            let n = if parts < MAX_PARTS {
                sizes().max(1)
            } else {
                usize::MAX
            };
            let end = offset.saturating_add(n).min(frame.len());
            self.feed(request_id, total, offset as u64, &frame[offset..end]);
            offset = end;
        }
    }
}

fn parts(input: &mut Input<'_>, f: &mut Feeder) {
    let mut fill = Vec::new();
    for _ in 0..MAX_PARTS {
        if input.is_empty() {
            return;
        }
        let op = input.byte();
        if op == 0xff {
            f.assembler.reset();
            f.received = 0;
            continue;
        }
        let chunk: &[u8] = match op >> 6 {
            0 => {
                let n = usize::from(input.byte());
                input.take(n)
            }
            1 => {
                let n = input.le::<2>() as usize;
                input.take(n)
            }
            2 => {
                let n = (input.le::<2>() % (MAX_FILL + 1)) as usize;
                let b = input.byte();
                fill.clear();
                fill.resize(n, b);
                &fill
            }
            _ => {
                if input.byte() & 1 == 0 {
                    &[]
                } else {
                    input.take(1)
                }
            }
        };
        let request_id = match op & 3 {
            0 => f.request_id,
            1 => 1,
            2 => 2,
            _ => input.le::<8>(),
        };
        let total = match (op >> 2) & 3 {
            0 => f.total,
            1 => input.le::<3>() % SMALL_TOTAL,
            2 => f.received.saturating_add(chunk.len() as u64),
            _ => match input.byte() % 4 {
                0 => TRANSFER_LIMIT as u64,
                1 => TRANSFER_LIMIT as u64 + 1,
                2 => u64::MAX,
                _ => input.le::<8>(),
            },
        };
        let offset = match (op >> 4) & 3 {
            0 | 1 => f.received,
            2 => f
                .received
                .wrapping_add(i64::from(input.byte() as i8) as u64),
            _ => input.le::<8>(),
        };
        f.feed(request_id, total, offset, chunk);
    }
}

fn generated_reply(input: &mut Input<'_>, f: &mut Feeder) {
    let seed_len = usize::from(input.byte());
    let seed = input.take(seed_len);
    let reply: ReplyT = Gen::new(seed).value();
    let request_id = match input.byte() % 4 {
        0 => reply.request_id.wrapping_add(1),
        _ => reply.request_id,
    };
    let message = ServerMessageT {
        body: ServerBodyT::Reply(Box::new(reply)),
    };
    let Ok(frame) = Encoder::new().encode_with_limit::<ServerMessageRoot>(&message, TRANSFER_LIMIT)
    else {
        return;
    };
    let mut frame = frame.to_vec();
    let at = input.le::<2>() as usize;
    let flip = input.byte();
    if let Some(b) = frame.get_mut(at) {
        *b ^= flip;
    }
    f.split(request_id, &frame, || usize::from(input.byte()) + 1);
}

fn raw_frame(input: &mut Input<'_>, f: &mut Feeder) {
    let request_id = u64::from(input.byte());
    let size = usize::from(input.byte()) + 1;
    let frame = input.rest();
    f.split(request_id, frame, || size);
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut feeder = Feeder::default();
    match input.byte() % 3 {
        0 => parts(&mut input, &mut feeder),
        1 => generated_reply(&mut input, &mut feeder),
        _ => raw_frame(&mut input, &mut feeder),
    }
});
