//! Helpers shared by the test files (included with `mod common;`).
#![allow(dead_code)]

/// Decodes a fixture's hex text (line breaks ignored).
pub fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// The Java two-frame segment.
pub const TWO_FRAME: &str = include_str!("../../../../vectors/qwp-ws-sfa/java-two-frame.sfa.hex");
/// The same segment with a byte of the second payload flipped.
pub const TWO_FRAME_TORN: &str =
    include_str!("../../../../vectors/qwp-ws-sfa/java-two-frame-torn-tail.sfa.hex");
/// The Java two-chunk dictionary.
pub const TWO_CHUNK: &str =
    include_str!("../../../../vectors/qwp-ws-sfa/java-two-chunk.symbol-dict.hex");
/// The same dictionary with a byte of the second chunk flipped.
pub const TWO_CHUNK_TORN: &str =
    include_str!("../../../../vectors/qwp-ws-sfa/java-two-chunk-torn-tail.symbol-dict.hex");

use sf_journal::recovery::SlotFiles;
use sf_journal::slot::{self, parse_segment_name};
use sf_journal::MemDir;

/// The slot files a driver would read from `dir`.
pub fn slot_files(dir: &MemDir) -> SlotFiles {
    let mut files = SlotFiles::default();
    for name in dir.names() {
        let bytes = dir.get(name).unwrap().to_vec();
        if parse_segment_name(name).is_some() {
            files.segments.push((name.to_owned(), bytes));
        } else if name == slot::MANIFEST {
            files.manifest = Some(bytes);
        } else if name == slot::ACK_WATERMARK {
            files.ack_watermark = Some(bytes);
        } else if name == slot::SYMBOL_DICT {
            files.symbol_dict = Some(bytes);
        }
    }
    files
}

/// The payload of frame `i` in the tests: distinct, of varying length.
pub fn payload(i: usize) -> Vec<u8> {
    let mut p = format!("QWP1 frame {i} ").into_bytes();
    p.resize(p.len() + (i * 7) % 23, b'a' + (i % 26) as u8);
    p
}
