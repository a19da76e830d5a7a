//! The four files the Java reference client wrote, read as their README says (SF-D9), and the
//! segment writer reproducing the two-frame file byte for byte.

mod common;
use common::*;

use sf_journal::dict::{dict_header, encode_chunk, scan_dict};
use sf_journal::segment::{scan_segment, FrameWrites, ScanEnd, SegmentHeader};
use sf_journal::{FileOp, MemDir};

#[test]
fn sf_d9_two_frame_segment_reads_two_frames_fsn_42_and_43_append_offset_50() {
    let bytes = hex(TWO_FRAME);
    assert_eq!(bytes.len(), 64);
    let scan = scan_segment(&bytes).unwrap();
    assert_eq!(scan.header.base_seq, 42);
    assert_eq!(scan.header.created_micros, 1_234_567_890_123);
    assert_eq!(scan.frames.len(), 2);
    assert_eq!(scan.frames[0].fsn, 42);
    assert_eq!(scan.frames[1].fsn, 43);
    assert_eq!(scan.payload(&bytes, 0), b"one");
    assert_eq!(scan.payload(&bytes, 1), b"two-two");
    assert_eq!(scan.append_offset, 50);
    assert_eq!(scan.torn_tail_bytes, 0);
    assert!(!scan.is_torn());
    assert_eq!(scan.next_fsn(), 44);
}

#[test]
fn sf_d9_torn_two_frame_segment_keeps_one_frame_append_35_torn_29() {
    let bytes = hex(TWO_FRAME_TORN);
    let scan = scan_segment(&bytes).unwrap();
    assert_eq!(scan.frames.len(), 1);
    assert_eq!(scan.payload(&bytes, 0), b"one");
    assert_eq!(scan.append_offset, 35);
    assert_eq!(scan.torn_tail_bytes, 29);
    assert_eq!(scan.end, ScanEnd::ChecksumMismatch);
}

#[test]
fn sf_d9_writer_reproduces_the_java_two_frame_segment_byte_for_byte() {
    let header = SegmentHeader {
        base_seq: 42,
        created_micros: 1_234_567_890_123,
    };
    let mut dir = MemDir::new();
    dir.apply(&FileOp::SetLen {
        file: "s".into(),
        len: 64,
    });
    dir.apply(&FileOp::Write {
        file: "s".into(),
        offset: 0,
        bytes: header.encode().to_vec(),
    });
    let mut at = 24u64;
    for p in [&b"one"[..], b"two-two"] {
        dir.apply_all(&FrameWrites::new("s", at, p).unwrap().into_ops());
        at += 8 + p.len() as u64;
    }
    assert_eq!(dir.get("s").unwrap(), hex(TWO_FRAME).as_slice());
}

#[test]
fn sf_d9_two_chunk_dictionary_reads_one_two_three() {
    let bytes = hex(TWO_CHUNK);
    assert_eq!(bytes.len(), 34);
    let scan = scan_dict(&bytes).unwrap();
    assert_eq!(scan.symbols, ["one", "two", "three"]);
    assert_eq!(scan.chunks.len(), 2);
    assert_eq!((scan.chunks[0].first_id, scan.chunks[0].count), (0, 1));
    assert_eq!((scan.chunks[1].first_id, scan.chunks[1].count), (1, 2));
    assert_eq!(scan.valid_len, 34);
    assert_eq!(scan.dropped_bytes, 0);
}

#[test]
fn sf_d9_torn_two_chunk_dictionary_keeps_one_and_truncates_to_18() {
    let bytes = hex(TWO_CHUNK_TORN);
    let scan = scan_dict(&bytes).unwrap();
    assert_eq!(scan.symbols, ["one"]);
    assert_eq!(scan.valid_len, 18);
    assert_eq!(scan.dropped_bytes, 16);
}

#[test]
fn sf_d9_dictionary_writer_reproduces_the_java_two_chunk_file() {
    let mut out = dict_header().to_vec();
    out.extend(encode_chunk(&["one"]));
    out.extend(encode_chunk(&["two", "three"]));
    assert_eq!(out, hex(TWO_CHUNK));
}

#[test]
fn sf_d9_crc32c_check_value_and_fixture_frame_0() {
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    let bytes = hex(TWO_FRAME);
    let stored = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
    assert_eq!(crc32c::crc32c(&bytes[28..35]), stored);
}
