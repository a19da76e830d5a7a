//! The on-disk codecs, clause by clause (SF-4, SF-D1 to SF-D7).

mod common;
use common::*;

use sf_journal::dict::{encode_chunk, scan_dict, DictError, SymbolDict, DICT_HEADER_LEN};
use sf_journal::record::{
    decode_record_file, decode_watermark, encode_legacy_watermark, Record, RecordFileError,
    RecordKind, Watermark, RECORD_FILE_LEN, RECORD_STRIDE,
};
use sf_journal::segment::{
    encode_frame, frame_crc, scan_segment, ScanEnd, SegmentError, SegmentHeader,
    SEGMENT_FLAG_MANIFEST_REQUIRED,
};
use sf_journal::slot::{self, parse_segment_name, segment_name, SegmentName};
use sf_journal::{FileOp, MemDir};

fn segment(base: i64, payloads: &[&[u8]], len: usize) -> Vec<u8> {
    let mut b = SegmentHeader {
        base_seq: base,
        created_micros: 7,
    }
    .encode()
    .to_vec();
    for p in payloads {
        b.extend(encode_frame(p).unwrap());
    }
    assert!(b.len() <= len);
    b.resize(len, 0);
    b
}

#[test]
fn sf_4_a_frame_is_its_length_and_crc32c_around_opaque_bytes() {
    let payload = [0u8, 0xff, b'Q', b'W', b'P', b'1'];
    let f = encode_frame(&payload).unwrap();
    assert_eq!(f.len(), 8 + payload.len());
    assert_eq!(i32::from_le_bytes(f[4..8].try_into().unwrap()), 6);
    assert_eq!(&f[8..], &payload);
    let crc = u32::from_le_bytes(f[0..4].try_into().unwrap());
    assert_eq!(crc, crc32c::crc32c(&f[4..]));
}

#[test]
fn sf_d1_header_is_24_bytes_sf01_version_1_base_and_micros() {
    let h = SegmentHeader {
        base_seq: 42,
        created_micros: 1_234_567_890_123,
    };
    let b = h.encode();
    assert_eq!(&b[..24], &hex(TWO_FRAME)[..24]);
    assert_eq!(SegmentHeader::decode(&b), Ok(h));
}

#[test]
fn sf_d1_the_manifest_required_flag_the_questdb_client_sets_is_accepted() {
    let h = SegmentHeader {
        base_seq: 9,
        created_micros: 1_700_000_000_000_000,
    };
    let mut b = h.encode();
    assert_eq!(
        b[5], 0,
        "our writer leaves the flags byte 0, as the Java fixture has it"
    );
    b[5] = SEGMENT_FLAG_MANIFEST_REQUIRED;
    assert_eq!(SegmentHeader::decode(&b), Ok(h));
    // The frames of a flagged segment are read as any other's.
    let mut file = b.to_vec();
    file.extend_from_slice(&encode_frame(b"QWP1 x").unwrap());
    file.resize(128, 0);
    let scan = scan_segment(&file).unwrap();
    assert_eq!(scan.header, h);
    assert_eq!(scan.frames.len(), 1);
}

#[test]
fn sf_d1_bad_magic_version_reserved_or_negative_base_are_refused() {
    let good = SegmentHeader {
        base_seq: 1,
        created_micros: 0,
    }
    .encode();
    let mut b = good;
    b[0] ^= 1;
    assert!(matches!(
        SegmentHeader::decode(&b),
        Err(SegmentError::BadMagic { .. })
    ));
    let mut b = good;
    b[4] = 2;
    assert_eq!(
        SegmentHeader::decode(&b),
        Err(SegmentError::BadVersion { found: 2 })
    );
    for (i, v) in [(5, 0x02), (5, 0x80), (5, 0x03), (6, 1), (7, 1), (7, 0x80)] {
        let mut b = good;
        b[i] = v;
        assert_eq!(
            SegmentHeader::decode(&b),
            Err(SegmentError::ReservedNotZero),
            "byte {i} = {v:#x}"
        );
    }
    let mut b = good;
    b[8..16].copy_from_slice(&(-1i64).to_le_bytes());
    assert_eq!(
        SegmentHeader::decode(&b),
        Err(SegmentError::NegativeBaseSeq { found: -1 })
    );
    assert_eq!(
        SegmentHeader::decode(&good[..23]),
        Err(SegmentError::Short { len: 23 })
    );
    let mut b = good;
    b[8..16].copy_from_slice(&0i64.to_le_bytes());
    assert_eq!(SegmentHeader::decode(&b).unwrap().base_seq, 0);
}

#[test]
fn sf_d2_the_crc_covers_the_length_too() {
    let mut b = segment(0, &[b"abcd", b"efgh"], 64);
    // Change the first frame's length from 4 to 3 without touching its checksum: the payload
    // bytes it would then cover are all present, only the checksum can tell.
    b[28] = 3;
    let scan = scan_segment(&b).unwrap();
    assert_eq!(scan.frames.len(), 0);
    assert_eq!(scan.end, ScanEnd::ChecksumMismatch);
    assert_ne!(frame_crc(3, b"abc"), frame_crc(4, b"abc"));
}

#[test]
fn sf_d2_a_negative_length_ends_the_scan() {
    let mut b = segment(0, &[b"ab", b"cd"], 64);
    let second = 24 + 10;
    b[second + 4..second + 8].copy_from_slice(&(-2i32).to_le_bytes());
    let scan = scan_segment(&b).unwrap();
    assert_eq!(scan.frames.len(), 1);
    assert_eq!(scan.end, ScanEnd::NegativeLength);
    assert!(scan.is_torn());
}

#[test]
fn sf_d2_a_length_past_the_end_of_file_ends_the_scan() {
    let mut b = segment(0, &[b"ab", b"cd"], 44);
    let second = 24 + 10;
    // The second frame ends exactly at the file's end (44): it is valid.
    assert_eq!(scan_segment(&b).unwrap().frames.len(), 2);
    b[second + 4..second + 8].copy_from_slice(&3i32.to_le_bytes());
    let scan = scan_segment(&b).unwrap();
    assert_eq!(scan.frames.len(), 1);
    assert_eq!(scan.end, ScanEnd::Overrun);
}

#[test]
fn sf_d2_a_non_zero_byte_in_the_eight_after_the_last_frame_is_a_torn_tail() {
    for at in 0..8 {
        let mut b = segment(5, &[b"xy"], 64);
        b[34 + at] = 9;
        let scan = scan_segment(&b).unwrap();
        assert_eq!(scan.frames.len(), 1, "byte {at}");
        assert_eq!(scan.torn_tail_bytes, 64 - 34, "byte {at}");
    }
}

#[test]
fn sf_d2_an_all_zero_tail_is_clean_and_bytes_beyond_the_probe_do_not_tear_it() {
    let b = segment(5, &[b"xy"], 64);
    let scan = scan_segment(&b).unwrap();
    assert_eq!(scan.torn_tail_bytes, 0);
    assert_eq!(scan.dirty_end, 34);
    let mut b = b;
    b[34 + 8] = 1;
    let scan = scan_segment(&b).unwrap();
    assert_eq!(scan.torn_tail_bytes, 0);
    assert_eq!(scan.dirty_end, 43);
    // A file ending right after the last frame is clean too.
    let exact = segment(5, &[b"xy"], 34);
    assert_eq!(scan_segment(&exact).unwrap().torn_tail_bytes, 0);
    assert_eq!(scan_segment(&exact).unwrap().end, ScanEnd::EndOfFile);
}

#[test]
fn sf_d2_an_empty_payload_is_a_valid_frame() {
    let b = segment(0, &[b"", b"z"], 64);
    let scan = scan_segment(&b).unwrap();
    assert_eq!(scan.frames.len(), 2);
    assert_eq!(scan.payload(&b, 0), b"");
    assert_eq!(scan.payload(&b, 1), b"z");
}

#[test]
fn sf_d3_segment_names_are_sf_initial_and_sf_16_hex_generation() {
    assert_eq!(slot::SEGMENT_INITIAL, "sf-initial.sfa");
    assert_eq!(segment_name(1), "sf-0000000000000001.sfa");
    assert_eq!(segment_name(0xabc), "sf-0000000000000abc.sfa");
    assert_eq!(
        parse_segment_name("sf-initial.sfa"),
        Some(SegmentName::Initial)
    );
    assert_eq!(
        parse_segment_name("sf-0000000000000abc.sfa"),
        Some(SegmentName::Generation(0xabc))
    );
    for bad in [
        "sf-abc.sfa",
        "sf-000000000000000g.sfa",
        "sf-0000000000000001.sfb",
        ".lock",
    ] {
        assert_eq!(parse_segment_name(bad), None, "{bad}");
    }
}

fn record(kind: RecordKind, generation: i64, first: i64, second: i64) -> Record {
    Record {
        kind,
        generation,
        first,
        second,
    }
}

fn record_file(records: &[Record]) -> Vec<u8> {
    let mut dir = MemDir::new();
    dir.apply(&FileOp::SetLen {
        file: "f".into(),
        len: RECORD_FILE_LEN as u64,
    });
    for r in records {
        dir.apply(&r.write("f"));
    }
    dir.get("f").unwrap().to_vec()
}

#[test]
fn sf_d4_a_record_is_64_bytes_with_its_crc32c_at_60_in_slot_generation_and_1() {
    let r = record(RecordKind::Manifest, 3, 10, 20);
    let b = r.encode();
    assert_eq!(&b[0..4], b"SFM1");
    assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 1);
    assert_eq!(i64::from_le_bytes(b[8..16].try_into().unwrap()), 3);
    assert!(b[32..60].iter().all(|&x| x == 0));
    assert_eq!(
        u32::from_le_bytes(b[60..64].try_into().unwrap()),
        crc32c::crc32c(&b[..60])
    );
    let f = record_file(&[r]);
    assert_eq!(&f[RECORD_STRIDE..RECORD_STRIDE + 64], &b);
    assert!(f[..64].iter().all(|&x| x == 0));
    assert_eq!(decode_record_file(RecordKind::Manifest, &f), Ok(r));
    let w = record(RecordKind::AckWatermark, 2, 5, 0);
    assert_eq!(&w.encode()[0..4], b"AKW1");
    assert_eq!(w.slot(), 0);
}

#[test]
fn sf_d4_the_valid_record_with_the_higher_generation_wins() {
    let a = record(RecordKind::Manifest, 4, 1, 1);
    let b = record(RecordKind::Manifest, 5, 2, 2);
    assert_eq!(
        decode_record_file(RecordKind::Manifest, &record_file(&[a, b])),
        Ok(b)
    );
    assert_eq!(
        decode_record_file(RecordKind::Manifest, &record_file(&[b, a])),
        Ok(b)
    );
    // The newer one torn: the older one stands.
    let mut f = record_file(&[a, b]);
    f[RECORD_STRIDE + 20] ^= 0x40;
    assert_eq!(decode_record_file(RecordKind::Manifest, &f), Ok(a));
}

#[test]
fn sf_d4_a_record_in_the_wrong_slot_magic_or_range_is_invalid() {
    // Generation 2 belongs in slot 0; copied into slot 1 it is not valid there.
    let r = record(RecordKind::Manifest, 2, 0, 0);
    let mut f = vec![0u8; RECORD_FILE_LEN];
    f[RECORD_STRIDE..RECORD_STRIDE + 64].copy_from_slice(&r.encode());
    assert_eq!(
        decode_record_file(RecordKind::Manifest, &f),
        Err(RecordFileError::NoValidRecord)
    );
    // A manifest record is not a watermark.
    let f = record_file(&[r]);
    assert_eq!(
        decode_record_file(RecordKind::AckWatermark, &f),
        Err(RecordFileError::NoValidRecord)
    );
    // Generation 0 is not valid.
    let f = record_file(&[record(RecordKind::Manifest, 0, 0, 0)]);
    assert!(decode_record_file(RecordKind::Manifest, &f).is_err());
    // A watermark may say −1, not −2, and its second value is 0.
    let f = record_file(&[record(RecordKind::AckWatermark, 1, -1, 0)]);
    assert_eq!(decode_watermark(&f).unwrap().fsn(), -1);
    let f = record_file(&[record(RecordKind::AckWatermark, 1, -2, 0)]);
    assert!(decode_watermark(&f).is_err());
    let f = record_file(&[record(RecordKind::AckWatermark, 1, 3, 1)]);
    assert!(decode_watermark(&f).is_err());
}

#[test]
fn sf_d4_a_file_that_is_not_8_kib_is_refused() {
    let r = record(RecordKind::Manifest, 1, 0, 0);
    let mut f = record_file(&[r]);
    f.push(0);
    assert_eq!(
        decode_record_file(RecordKind::Manifest, &f),
        Err(RecordFileError::WrongSize { len: 8193 })
    );
    f.truncate(8191);
    assert!(decode_record_file(RecordKind::Manifest, &f).is_err());
}

#[test]
fn sf_d5_the_legacy_16_byte_watermark_is_read() {
    let b = encode_legacy_watermark(77);
    assert_eq!(&b[0..4], b"AKW1");
    assert_eq!(decode_watermark(&b), Ok(Watermark::Legacy { fsn: 77 }));
    let mut neg = b;
    neg[8..16].copy_from_slice(&(-1i64).to_le_bytes());
    assert!(decode_watermark(&neg).is_err());
    let mut ver = b;
    ver[4] = 1;
    assert!(decode_watermark(&ver).is_err());
}

#[test]
fn sf_d6_chunks_round_trip_with_ids_dense_from_0_in_file_order() {
    let mut d = SymbolDict::new();
    let (ids, mut ops) = d.intern(&["a", "bb"]);
    assert_eq!(ids, [0, 1]);
    let (ids, more) = d.intern(&["bb", "ccc", "a", "dddd"]);
    assert_eq!(ids, [1, 2, 0, 3]);
    ops.extend(more);
    let (ids, none) = d.intern(&["dddd"]);
    assert_eq!(ids, [3]);
    assert!(none.is_empty(), "known symbols write nothing");
    let mut dir = MemDir::new();
    dir.apply_all(&ops);
    let bytes = dir.get(slot::SYMBOL_DICT).unwrap();
    assert_eq!(&bytes[..4], b"SYD1");
    let scan = scan_dict(bytes).unwrap();
    assert_eq!(scan.symbols, ["a", "bb", "ccc", "dddd"]);
    assert_eq!(scan.chunks.len(), 2, "one chunk per call with new symbols");
    assert_eq!(SymbolDict::from_scan(&scan).id("ccc"), Some(2));
}

#[test]
fn sf_d6_a_multi_byte_varint_and_utf8_symbols_round_trip() {
    let long = "é".repeat(100);
    let mut b = sf_journal::dict::dict_header().to_vec();
    let chunk = encode_chunk(&[long.as_str(), "x"]);
    assert_eq!(
        chunk[1],
        0x80 | ((204u32 & 0x7f) as u8),
        "2+200+1+1 entry bytes need two varint bytes"
    );
    b.extend(chunk);
    assert_eq!(scan_dict(&b).unwrap().symbols, [long.as_str(), "x"]);
}

#[test]
fn sf_d6_a_bad_header_is_refused() {
    let mut b = hex(TWO_CHUNK);
    b[4] = 2;
    assert_eq!(scan_dict(&b), Err(DictError::BadHeader));
    let mut b = hex(TWO_CHUNK);
    b[7] = 1;
    assert_eq!(scan_dict(&b), Err(DictError::BadHeader));
    assert_eq!(scan_dict(&b[..7]), Err(DictError::Short { len: 7 }));
    assert_eq!(
        scan_dict(&hex(TWO_CHUNK)[..DICT_HEADER_LEN])
            .unwrap()
            .symbols
            .len(),
        0
    );
}

#[test]
fn sf_d7_slot_lock_names_and_pool_slots() {
    assert_eq!(slot::LOCK, ".lock");
    assert_eq!(slot::LOCK_PID, ".lock.pid");
    assert_eq!(slot::pool_slot("orders", 3), "orders-ingest-3");
    assert_eq!(
        slot::corrupt_name(slot::MANIFEST),
        "sf-manifest.bin.corrupt"
    );
    assert_eq!(slot::ACK_WATERMARK, ".ack-watermark");
    assert_eq!(slot::SYMBOL_DICT, ".symbol-dict");
}
