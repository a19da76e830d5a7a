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
