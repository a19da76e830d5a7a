//! Recovery over the bytes of a slot (SF-5, SF-7, SF-30 to SF-34, SF-37, SF-D4, SF-D5).

mod common;
use common::*;

use sf_journal::record::{
    decode_watermark, encode_legacy_watermark, Record, RecordKind, Watermark,
};
use sf_journal::recovery::{recover, RecoveryError, SlotFiles};
use sf_journal::ring::{Ring, RingConfig};
use sf_journal::segment::{
    encode_frame, scan_segment, SegmentError, SegmentHeader, SEGMENT_HEADER_LEN,
};
use sf_journal::{slot, FileOp, MemDir};

fn small() -> RingConfig {
    RingConfig {
        segment_bytes: 128,
        max_total_bytes: 1 << 20,
        append_deadline_millis: 100,
    }
}

/// A ring with `n` frames appended, and the directory it wrote.
fn written(n: usize) -> (Ring, MemDir) {
    let mut ring = Ring::new(small());
    let mut dir = MemDir::new();
    for i in 0..n {
        let a = ring.append(&payload(i), 1_000).unwrap();
        assert_eq!(a.fsn, i as i64);
        dir.apply_all(&a.ops);
    }
    (ring, dir)
}

/// The payloads a recovery finds, in FSN order, with their FSNs.
fn recovered_frames(dir: &MemDir) -> Vec<(i64, Vec<u8>)> {
    let files = slot_files(dir);
    let r = recover(&files, 0).unwrap();
    let mut out = Vec::new();
    for s in &r.segments {
        let bytes = dir.get(&s.file).unwrap();
        for (i, f) in s.scan.frames.iter().enumerate() {
            out.push((f.fsn, s.scan.payload(bytes, i).to_vec()));
        }
    }
    out
}

fn segment(base: i64, payloads: &[&[u8]], len: usize) -> Vec<u8> {
    let mut b = SegmentHeader {
        base_seq: base,
        created_micros: 1,
    }
    .encode()
    .to_vec();
    for p in payloads {
        b.extend(encode_frame(p).unwrap());
    }
    b.resize(len, 0);
    b
}

#[test]
fn sf_30_every_segment_is_walked_and_all_frames_survive_a_clean_stop() {
    let (ring, dir) = written(20);
    assert!(ring.segment_files().count() > 2, "several segments");
    let frames = recovered_frames(&dir);
    assert_eq!(frames.len(), 20);
    for (i, (fsn, p)) in frames.iter().enumerate() {
        assert_eq!(*fsn, i as i64);
        assert_eq!(p, &payload(i));
    }
}

#[test]
fn sf_30_a_torn_tail_is_cut() {
    let (ring, mut dir) = written(3);
    let file = ring.segment_files().last().unwrap().to_owned();
    let scan = scan_segment(dir.get(&file).unwrap()).unwrap();
    let end = scan.append_offset as usize;
    // A frame body written without its checksum, then a crash.
    let body = encode_frame(b"lost").unwrap();
    dir.get_mut(&file).unwrap()[end + 4..end + body.len()].copy_from_slice(&body[4..]);
    let r = recover(&slot_files(&dir), 0).unwrap();
    assert_eq!(r.next_fsn, 3);
    assert!(r.segments.last().unwrap().scan.is_torn());
    assert!(r.ops.contains(&FileOp::Zero {
        file: file.clone(),
        offset: end as u64,
        len: body.len() as u64,
    }));
    dir.apply_all(&r.ops);
    let again = scan_segment(dir.get(&file).unwrap()).unwrap();
    assert!(!again.is_torn());
    assert_eq!(again.frames.len(), scan.frames.len());
    let r2 = recover(&slot_files(&dir), 0).unwrap();
    assert!(
        r2.ops.is_empty(),
        "a cut tail needs no second cut: {:?}",
        r2.ops
    );
}

#[test]
fn sf_30_frames_after_the_first_bad_one_are_discarded() {
    let mut b = segment(10, &[b"a", b"b", b"c"], 64);
    b[24 + 9 + 8] ^= 1; // the payload of the second frame
    let files = SlotFiles {
        segments: vec![("sf-initial.sfa".into(), b)],
        ..SlotFiles::default()
    };
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.segments[0].scan.frames.len(), 1);
    assert_eq!(r.next_fsn, 11);
}

#[test]
fn sf_30_a_segment_with_a_bad_header_refuses_recovery() {
    let mut b = segment(0, &[b"a"], 64);
    b[4] = 9;
    let files = SlotFiles {
        segments: vec![("sf-initial.sfa".into(), b)],
        ..SlotFiles::default()
    };
    assert_eq!(
        recover(&files, 0),
        Err(RecoveryError::Segment {
            file: "sf-initial.sfa".into(),
            error: SegmentError::BadVersion { found: 9 }
        })
    );
}

#[test]
fn sf_30_a_sized_segment_never_given_its_header_is_a_spare() {
    let files = SlotFiles {
        segments: vec![
            ("sf-initial.sfa".into(), segment(0, &[b"a"], 64)),
            (slot::segment_name(1), vec![0; 64]),
        ],
        ..SlotFiles::default()
    };
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.spares, [slot::segment_name(1)]);
    assert_eq!(r.next_fsn, 1);
}

#[test]
fn sf_30_a_segment_whose_header_write_was_cut_is_a_spare() {
    let header = SegmentHeader {
        base_seq: 1,
        created_micros: 7,
    }
    .encode();
    // Cut inside the magic or the version: the file holds that prefix, then zeros.
    for cut in 1..5 {
        let mut torn = vec![0u8; 64];
        torn[..cut].copy_from_slice(&header[..cut]);
        let files = SlotFiles {
            segments: vec![
                ("sf-initial.sfa".into(), segment(0, &[b"a"], 64)),
                (slot::segment_name(1), torn),
            ],
            ..SlotFiles::default()
        };
        let r = recover(&files, 0).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert_eq!(r.spares, [slot::segment_name(1)], "cut at {cut}");
        assert_eq!(r.next_fsn, 1);
    }
    // A wrong magic, or bytes after a cut one, still refuse recovery.
    let mut bad = vec![0u8; 64];
    bad[..3].copy_from_slice(b"SFX");
    let mut later = vec![0u8; 64];
    later[..2].copy_from_slice(&header[..2]);
    later[40] = 1;
    for file in [bad, later] {
        let files = SlotFiles {
            segments: vec![(slot::segment_name(1), file)],
            ..SlotFiles::default()
        };
        assert!(matches!(
            recover(&files, 0),
            Err(RecoveryError::Segment { .. })
        ));
    }
}

fn two(a: (i64, usize), b: (i64, usize)) -> SlotFiles {
    let frames = |n: usize| vec![&b"f"[..]; n];
    SlotFiles {
        segments: vec![
            (slot::segment_name(2), segment(b.0, &frames(b.1), 128)),
            (slot::segment_name(1), segment(a.0, &frames(a.1), 128)),
        ],
        ..SlotFiles::default()
    }
}

#[test]
fn sf_31_adjacent_segments_must_be_contiguous_and_are_ordered_by_base_seq() {
    let r = recover(&two((5, 3), (8, 2)), 0).unwrap();
    let bases: Vec<i64> = r.segments.iter().map(|s| s.scan.header.base_seq).collect();
    assert_eq!(bases, [5, 8]);
    assert_eq!(r.next_fsn, 10);
    assert_eq!(r.unacked(), 5..10);
}

#[test]
fn sf_31_a_gap_is_fatal() {
    assert_eq!(
        recover(&two((5, 3), (9, 2)), 0),
        Err(RecoveryError::Gap {
            prev: slot::segment_name(1),
            next: slot::segment_name(2),
            expected: 8,
            found: 9
        })
    );
}

#[test]
fn sf_31_an_overlap_is_fatal() {
    assert!(matches!(
        recover(&two((5, 3), (7, 2)), 0),
        Err(RecoveryError::Overlap {
            expected: 8,
            found: 7,
            ..
        })
    ));
}

#[test]
fn sf_31_empty_spare_segments_are_left_out_of_the_gap_check() {
    let mut files = two((5, 3), (8, 2));
    // The reference's pre-allocated spare: base 0, no frame.
    files
        .segments
        .push((slot::segment_name(3), segment(0, &[], 128)));
    // And an empty one far ahead.
    files
        .segments
        .push((slot::segment_name(4), segment(100, &[], 128)));
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.segments.len(), 2);
    assert_eq!(r.spares.len(), 2);
    assert_eq!(r.next_fsn, 10);
    assert_eq!(r.acked_fsn, 4);
}

fn watermark_file(fsn: i64) -> Vec<u8> {
    let mut dir = MemDir::new();
    let r = Record {
        kind: RecordKind::AckWatermark,
        generation: 3,
        first: fsn,
        second: 0,
    };
    dir.apply_all(&sf_journal::record::create_record_file("w", &r));
    dir.get("w").unwrap().to_vec()
}

#[test]
fn sf_32_without_a_watermark_the_ack_is_the_lowest_surviving_fsn_minus_one() {
    let r = recover(&two((5, 3), (8, 2)), 0).unwrap();
    assert_eq!(r.watermark, None);
    assert_eq!(r.acked_fsn, 4);
    assert_eq!(r.lowest_fsn(), Some(5));
}

#[test]
fn sf_32_a_watermark_above_the_disk_seed_wins() {
    let mut files = two((5, 3), (8, 2));
    files.ack_watermark = Some(watermark_file(6));
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.acked_fsn, 6);
    assert_eq!(r.unacked(), 7..10);
}

#[test]
fn sf_32_a_watermark_below_the_disk_seed_is_clamped_up() {
    let mut files = two((5, 3), (8, 2));
    files.ack_watermark = Some(watermark_file(2));
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.acked_fsn, 4);
    // Equal to the disk seed: either way 4.
    files.ack_watermark = Some(watermark_file(4));
    assert_eq!(recover(&files, 0).unwrap().acked_fsn, 4);
}

#[test]
fn sf_32_a_watermark_past_every_frame_keeps_fsns_monotonic() {
    let mut files = two((5, 3), (8, 2));
    files.ack_watermark = Some(watermark_file(20));
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.acked_fsn, 20);
    assert_eq!(r.next_fsn, 21);
    assert!(r.unacked().is_empty());
    // Every segment is acknowledged: recovery unlinks them and the ring resumes at 21.
    assert!(r.segments.is_empty());
    let mut dir = MemDir::new();
    for (name, bytes) in &files.segments {
        dir.put(name, bytes.clone());
    }
    dir.put(slot::ACK_WATERMARK, watermark_file(20));
    dir.apply_all(&r.ops);
    assert_eq!(dir.names().filter(|n| n.ends_with(".sfa")).count(), 0);
    let mut ring = Ring::from_recovery(small(), &r);
    let a = ring.append(b"next", 0).unwrap();
    assert_eq!(a.fsn, 21);
    dir.apply_all(&a.ops);
    let again = recover(&slot_files(&dir), 0).unwrap();
    assert_eq!((again.acked_fsn, again.next_fsn), (20, 22));
}

#[test]
fn sf_32_segments_wholly_below_the_watermark_are_trimmed_the_rest_kept() {
    let mut files = two((5, 3), (8, 2));
    // FSN 7 ends the first segment exactly: it goes; the second stays whole.
    files.ack_watermark = Some(watermark_file(7));
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.segments.len(), 1);
    assert_eq!(r.segments[0].file, slot::segment_name(2));
    assert!(r.ops.contains(&FileOp::Unlink {
        file: slot::segment_name(1)
    }));
    // One short of the end: both stay.
    files.ack_watermark = Some(watermark_file(6));
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.segments.len(), 2);
    assert!(r.ops.is_empty());
}

#[test]
fn sf_33_recovery_bumps_the_connection_generation_and_the_first_connect_replays_from_disk() {
    let (_, dir) = written(6);
    let r = recover(&slot_files(&dir), 4).unwrap();
    assert_eq!(r.connection_generation, 5);
    let mut ring = Ring::from_recovery(small(), &r);
    assert_eq!(ring.connection_generation(), 5);
    let w = ring.connect(0);
    assert!(w.generation > 5);
    assert_eq!(w.fsn_at_zero, 0);
    let mut sent = Vec::new();
    while let Some((fsn, loc)) = ring.next_to_send() {
        let b = dir.get(&loc.file).unwrap();
        sent.push((fsn, b[loc.offset as usize..][..loc.len as usize].to_vec()));
    }
    let want: Vec<(i64, Vec<u8>)> = (0..6).map(|i| (i as i64, payload(i))).collect();
    assert_eq!(sent, want);
}

#[test]
fn sf_34_the_watermark_is_optional_and_a_bad_one_is_ignored() {
    let mut files = two((5, 3), (8, 2));
    let mut bad = watermark_file(7);
    bad[3] ^= 0xff;
    bad[4096 + 3] ^= 0xff;
    files.ack_watermark = Some(bad);
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.watermark, None);
    assert_eq!(r.acked_fsn, 4, "the lowest segment is sent again whole");
}

#[test]
fn sf_34_without_a_watermark_the_whole_lowest_segment_is_sent_again_then_the_rest() {
    // No file at all, an empty one, and one whose both records fail their check: each is a
    // slot without a watermark, so the first connect replays from the lowest segment's base.
    let mut corrupt = watermark_file(6);
    corrupt[60] ^= 1;
    corrupt[4096 + 60] ^= 1;
    for wm in [None, Some(Vec::new()), Some(corrupt)] {
        let mut files = two((5, 3), (8, 2));
        files.ack_watermark = wm.clone();
        let r = recover(&files, 0).unwrap();
        assert_eq!(r.watermark, None, "{wm:?}");
        assert!(r.segments.len() == 2, "nothing is trimmed");
        let mut ring = Ring::from_recovery(small(), &r);
        let w = ring.connect(0);
        assert_eq!(w.fsn_at_zero, 5);
        let mut sent = Vec::new();
        while let Some((fsn, loc)) = ring.next_to_send() {
            sent.push((fsn, loc.file));
        }
        let want: Vec<(i64, String)> = (5..10)
            .map(|f| (f, slot::segment_name(if f < 8 { 1 } else { 2 })))
            .collect();
        assert_eq!(sent, want, "{wm:?}");
    }
    // With a valid watermark inside the lowest segment, only its unacknowledged tail goes.
    let mut files = two((5, 3), (8, 2));
    files.ack_watermark = Some(watermark_file(6));
    let mut ring = Ring::from_recovery(small(), &recover(&files, 0).unwrap());
    let _ = ring.connect(0);
    let fsns: Vec<i64> = std::iter::from_fn(|| ring.next_to_send().map(|(f, _)| f)).collect();
    assert_eq!(fsns, [7, 8, 9]);
}

#[test]
fn sf_34_a_legacy_16_byte_watermark_is_read_and_rewritten_in_the_8_kib_form() {
    let mut files = two((5, 3), (8, 2));
    files.ack_watermark = Some(encode_legacy_watermark(6).to_vec());
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.watermark, Some(Watermark::Legacy { fsn: 6 }));
    assert_eq!(r.acked_fsn, 6);
    let mut dir = MemDir::new();
    dir.put(slot::ACK_WATERMARK, encode_legacy_watermark(6).to_vec());
    dir.apply_all(&r.ops);
    let now = dir.get(slot::ACK_WATERMARK).unwrap();
    assert_eq!(now.len(), 8192);
    assert!(matches!(decode_watermark(now), Ok(Watermark::Current(w)) if w.first == 6));
}

#[test]
fn sf_34_a_legacy_watermark_at_fsn_0_is_read_and_rewritten_and_a_negative_one_is_not() {
    let mut files = two((0, 3), (3, 2));
    files.ack_watermark = Some(encode_legacy_watermark(0).to_vec());
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.watermark, Some(Watermark::Legacy { fsn: 0 }));
    assert_eq!((r.acked_fsn, r.unacked()), (0, 1..5));
    let mut dir = MemDir::new();
    dir.put(slot::ACK_WATERMARK, encode_legacy_watermark(0).to_vec());
    dir.apply_all(&r.ops);
    let now = dir.get(slot::ACK_WATERMARK).unwrap();
    assert_eq!(now.len(), 8192);
    assert!(matches!(decode_watermark(now), Ok(Watermark::Current(w)) if w.first == 0));
    // A legacy file naming FSN -1 is no watermark: the lowest segment goes again whole.
    let mut neg = encode_legacy_watermark(0);
    neg[8..16].copy_from_slice(&(-1i64).to_le_bytes());
    files.ack_watermark = Some(neg.to_vec());
    let r = recover(&files, 0).unwrap();
    assert_eq!((r.watermark, r.acked_fsn), (None, -1));
}

#[test]
fn sf_d4_a_manifest_of_the_wrong_size_is_renamed_corrupt_and_recovery_goes_on() {
    let mut files = two((5, 3), (8, 2));
    files.manifest = Some(vec![0; 100]);
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.manifest, None);
    assert_eq!(
        r.ops,
        [FileOp::Rename {
            from: "sf-manifest.bin".into(),
            to: "sf-manifest.bin.corrupt".into()
        }]
    );
    assert_eq!(r.next_fsn, 10);
}

#[test]
fn sf_d4_a_manifest_with_no_valid_record_is_renamed_corrupt() {
    let mut files = two((5, 3), (8, 2));
    files.manifest = Some(vec![0; 8192]);
    let r = recover(&files, 0).unwrap();
    assert!(r
        .ops
        .iter()
        .any(|op| matches!(op, FileOp::Rename { to, .. } if to == "sf-manifest.bin.corrupt")));
}

#[test]
fn sf_d4_a_valid_manifest_is_kept_and_its_active_base_bounds_the_next_fsn() {
    let (ring, dir) = written(12);
    let r = recover(&slot_files(&dir), 0).unwrap();
    let m = r.manifest.expect("the ring keeps a manifest");
    assert_eq!(m.first, 0);
    assert!(r.ops.is_empty());
    let active = ring.segment_files().last().unwrap().to_owned();
    let active_base = scan_segment(dir.get(&active).unwrap())
        .unwrap()
        .header
        .base_seq;
    assert_eq!(m.second, active_base);
    // Every frame trimmed and the segments gone: the manifest still says where FSNs resume.
    let mut files = slot_files(&dir);
    files.segments.clear();
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.next_fsn, active_base);
}

#[test]
fn sf_37_a_torn_trailing_dictionary_chunk_is_dropped_and_the_file_truncated() {
    let files = SlotFiles {
        symbol_dict: Some(hex(TWO_CHUNK_TORN)),
        ..SlotFiles::default()
    };
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.dict.as_ref().unwrap().symbols, ["one"]);
    assert_eq!(
        r.ops,
        [FileOp::SetLen {
            file: ".symbol-dict".into(),
            len: 18
        }]
    );
    let clean = SlotFiles {
        symbol_dict: Some(hex(TWO_CHUNK)),
        ..SlotFiles::default()
    };
    let r = recover(&clean, 0).unwrap();
    assert_eq!(r.dict.unwrap().symbols.len(), 3);
    assert!(r.ops.is_empty());
}

#[test]
fn sf_7_fsns_survive_a_restart_and_continue_from_the_last_frame() {
    let (_, mut dir) = written(9);
    let r = recover(&slot_files(&dir), 0).unwrap();
    dir.apply_all(&r.ops);
    let mut ring = Ring::from_recovery(small(), &r);
    for i in 9..15 {
        let a = ring.append(&payload(i), 2_000).unwrap();
        assert_eq!(a.fsn, i as i64);
        dir.apply_all(&a.ops);
    }
    let frames = recovered_frames(&dir);
    assert_eq!(frames.len(), 15);
    for (i, (fsn, p)) in frames.iter().enumerate() {
        assert_eq!((*fsn, p), (i as i64, &payload(i)));
    }
}

#[test]
fn sf_30_extreme_base_sequences_and_watermarks_do_not_overflow() {
    let mut files = SlotFiles {
        segments: vec![(
            "sf-initial.sfa".into(),
            segment(i64::MAX, &[b"a", b"b"], 64),
        )],
        ..SlotFiles::default()
    };
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.acked_fsn, i64::MAX - 1);
    files.ack_watermark = Some(watermark_file(i64::MAX));
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.acked_fsn, i64::MAX);
    assert!(r.unacked().is_empty());
    let mut ring = Ring::from_recovery(small(), &r);
    let _ = ring.connect(0);
    assert!(ring.next_to_send().is_none());
    assert_eq!(
        ring.append(b"x", 0),
        Err(sf_journal::ring::AppendError::FsnExhausted)
    );
}

#[test]
fn sf_37_a_dictionary_cut_inside_its_header_holds_no_entry_and_is_removed() {
    use sf_journal::dict::{dict_header, SymbolDict, DICT_HEADER_LEN};
    for cut in 0..DICT_HEADER_LEN {
        let (_, mut dir) = written(2);
        // The process died after creating the file and before its header was whole.
        dir.put(slot::SYMBOL_DICT, dict_header()[..cut].to_vec());
        let r = recover(&slot_files(&dir), 0).unwrap();
        assert_eq!(r.dict, None, "cut at {cut}");
        assert!(r.ops.contains(&FileOp::Unlink {
            file: slot::SYMBOL_DICT.to_owned()
        }));
        assert_eq!(r.unacked(), 0..2, "the frames are all there");
        dir.apply_all(&r.ops);
        // The next new symbol writes the header again, then its chunk.
        let mut ring = Ring::from_recovery(small(), &r);
        let mut dict = SymbolDict::new();
        let (ids, a) = ring
            .append_with_symbols(&mut dict, &["eu"], |_| payload(2), 1_000)
            .unwrap();
        assert_eq!(ids, [0]);
        dir.apply_all(&a.ops);
        let again = recover(&slot_files(&dir), 0).unwrap();
        assert_eq!(again.dict.unwrap().symbols, ["eu"]);
    }
    // A short file that is not a prefix of the header is still refused.
    let (_, mut dir) = written(1);
    dir.put(slot::SYMBOL_DICT, b"SYDX".to_vec());
    assert!(matches!(
        recover(&slot_files(&dir), 0),
        Err(RecoveryError::Dict(_))
    ));
}

#[test]
fn sf_31_a_segment_named_with_the_last_generation_is_refused() {
    let last = slot::segment_name(u64::MAX);
    assert_eq!(last, "sf-ffffffffffffffff.sfa");
    // As a spare (all zero) and as a segment holding frames: both refused, nothing wraps.
    for bytes in [vec![0; 128], segment(1, &[b"QWP1b"], 128)] {
        let files = SlotFiles {
            segments: vec![
                ("sf-initial.sfa".into(), segment(0, &[b"QWP1a"], 128)),
                (last.clone(), bytes),
            ],
            ..SlotFiles::default()
        };
        assert_eq!(
            recover(&files, 0).map(|_| ()),
            Err(RecoveryError::GenerationExhausted { file: last.clone() })
        );
    }
}

#[test]
fn sf_31_a_ring_whose_next_generation_is_the_last_opens_no_segment() {
    let files = SlotFiles {
        segments: vec![
            ("sf-initial.sfa".into(), segment(0, &[b"QWP1a"], 128)),
            (slot::segment_name(u64::MAX - 1), vec![0; 128]),
        ],
        ..SlotFiles::default()
    };
    let r = recover(&files, 0).unwrap();
    let mut ring = Ring::from_recovery(small(), &r);
    let mut dir = MemDir::new();
    dir.apply_all(&r.ops);
    let mut refused = None;
    for i in 0..20 {
        match ring.append(&payload(i), 0) {
            Ok(a) => {
                assert!(a.ops.iter().all(|op| !matches!(op,
                    FileOp::SetLen { file, .. } if file == &slot::segment_name(u64::MAX))));
                dir.apply_all(&a.ops);
            }
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    assert_eq!(
        refused,
        Some(sf_journal::ring::AppendError::GenerationsExhausted)
    );
}

#[test]
fn sf_38_a_corrupt_dictionary_chunk_followed_by_a_valid_one_refuses_without_a_cut() {
    use sf_journal::dict::{dict_header, encode_chunk, DictError};
    let mut d = dict_header().to_vec();
    d.extend(encode_chunk(&["one"]));
    let second = d.len();
    d.extend(encode_chunk(&["two"]));
    d.extend(encode_chunk(&["three"]));
    // One bit of the second chunk's entries flips.
    d[second + 3] ^= 0x01;
    let files = SlotFiles {
        segments: vec![("sf-initial.sfa".into(), segment(0, &[b"QWP1a"], 128))],
        symbol_dict: Some(d.clone()),
        ..SlotFiles::default()
    };
    assert_eq!(
        recover(&files, 0).map(|r| r.ops),
        Err(RecoveryError::Dict(DictError::CorruptChunk {
            offset: second as u64
        }))
    );
    // The same damage in the last chunk is a torn tail: cut, as before.
    let mut d = dict_header().to_vec();
    d.extend(encode_chunk(&["one"]));
    let last = d.len();
    d.extend(encode_chunk(&["two"]));
    d[last + 3] ^= 0x01;
    let files = SlotFiles {
        segments: vec![("sf-initial.sfa".into(), segment(0, &[b"QWP1a"], 128))],
        symbol_dict: Some(d),
        ..SlotFiles::default()
    };
    let r = recover(&files, 0).unwrap();
    assert_eq!(r.dict.unwrap().symbols, ["one"]);
}

#[test]
fn sf_30_a_recoverer_fed_one_segment_at_a_time_concludes_what_recover_does() {
    use sf_journal::recovery::Recoverer;
    let (ring, mut dir) = written(20);
    // A torn tail on the last segment, and a watermark and manifest to read at the end.
    let file = ring.segment_files().last().unwrap().to_owned();
    let end = scan_segment(dir.get(&file).unwrap()).unwrap().append_offset as usize;
    let body = encode_frame(b"lost").unwrap();
    dir.get_mut(&file).unwrap()[end + 4..end + body.len()].copy_from_slice(&body[4..]);
    let mut files = slot_files(&dir);
    files.ack_watermark = Some(watermark_file(4));
    files.manifest = Some(vec![1, 2, 3]);
    let whole = recover(&files, 3).unwrap();
    let mut r = Recoverer::new();
    for (name, bytes) in &files.segments {
        r.segment(name, bytes).unwrap();
    }
    let fed = r
        .finish(
            files.manifest.as_deref(),
            files.ack_watermark.as_deref(),
            files.symbol_dict.as_deref(),
            3,
        )
        .unwrap();
    assert_eq!(fed, whole);
    assert!(fed.ops.iter().any(|o| matches!(o, FileOp::Zero { .. })));
    assert_eq!(fed.acked_fsn, 4);

    // A refused segment is refused as it is fed.
    let mut r = Recoverer::new();
    assert!(matches!(
        r.segment("sf-0000000000000001.sfa", &[9u8; 64]),
        Err(RecoveryError::Segment { .. })
    ));
}

/// A ring whose first segment filled and whose second (the manifest's active segment) was just
/// opened: its first frame is cleared, as if the process died before writing it, and a byte
/// of the first segment's second frame is flipped, so that segment ends after one frame.
/// With `keep_active_frame` the active segment's frame is left whole instead.
fn cut_before_the_active_segment(keep_active_frame: bool) -> (MemDir, String, String, i64) {
    let mut ring = Ring::new(small());
    let mut dir = MemDir::new();
    let mut i = 0;
    while ring.segment_files().count() < 2 {
        dir.apply_all(&ring.append(&payload(i), 1_000).unwrap().ops);
        i += 1;
    }
    let files: Vec<String> = ring.segment_files().map(str::to_owned).collect();
    let (first, active) = (files[0].clone(), files[1].clone());
    let active_base = ring.published_fsn();
    assert!(
        active_base >= 2,
        "the first segment holds two frames at least"
    );
    let scan = scan_segment(dir.get(&first).unwrap()).unwrap();
    let mut bytes = dir.get(&first).unwrap().to_vec();
    bytes[scan.frames[1].payload_offset() as usize] ^= 0xff;
    dir.put(&first, bytes);
    if !keep_active_frame {
        let mut bytes = dir.get(&active).unwrap().to_vec();
        bytes[SEGMENT_HEADER_LEN..].fill(0);
        dir.put(&active, bytes);
    }
    (dir, first, active, active_base)
}

#[test]
fn sf_31_a_gap_before_the_manifests_empty_active_segment_is_fatal() {
    // The frames after the flipped one are gone, and the manifest says FSNs went on to the
    // active segment's base: FSNs 1 to active_base - 1 were published and are on no disk.
    // That is the gap the check refuses when the active segment holds a frame; with the
    // active segment empty it must be refused just the same, never replayed with a hole.
    for keep_active_frame in [true, false] {
        let (dir, first, active, active_base) = cut_before_the_active_segment(keep_active_frame);
        let files = slot_files(&dir);
        assert!(files.manifest.is_some());
        let want_next = if keep_active_frame {
            active.clone()
        } else {
            slot::MANIFEST.to_owned()
        };
        assert_eq!(
            recover(&files, 0),
            Err(RecoveryError::Gap {
                prev: first.clone(),
                next: want_next,
                expected: 1,
                found: active_base
            }),
            "active frame kept: {keep_active_frame}"
        );
    }
}

#[test]
fn sf_31_a_manifest_past_the_frames_on_disk_is_no_gap_once_acknowledged() {
    // The same slot with a watermark at or past the last FSN the manifest implies: every
    // frame the gap lost was acknowledged, so nothing is owed and recovery goes on.
    let (dir, _, _, active_base) = cut_before_the_active_segment(false);
    let mut files = slot_files(&dir);
    files.ack_watermark = Some(watermark_file(active_base - 1));
    let r = recover(&files, 0).unwrap();
    assert_eq!((r.acked_fsn, r.next_fsn), (active_base - 1, active_base));
    assert!(r.unacked().is_empty());
    assert!(r.segments.is_empty());
    // One short of it, FSN active_base - 1 is owed and on no disk: refused.
    files.ack_watermark = Some(watermark_file(active_base - 2));
    assert!(matches!(
        recover(&files, 0),
        Err(RecoveryError::Gap { found, .. }) if found == active_base
    ));
}

#[test]
fn sf_19_frames_lost_below_the_manifests_active_base_refuse_the_slot_rather_than_leave_fsns_the_wire_skips(
) {
    // A host crash kept the manifest naming the newest segment and that segment's header,
    // but lost its frames and the last frame of the segment before it (their pages never
    // reached the disk). Resuming at the manifest's active base would leave FSNs without
    // frames among those to replay, which the wire skips while `fsn = fsnAtZero + wireSeq`
    // counts them; resuming past the last frame on disk would hand the lost frames' FSNs to
    // new frames and lose them without a word. The slot is refused as the gap it is (SF-31).
    let (ring, mut dir) = written(12);
    let files: Vec<String> = ring.segment_files().map(str::to_owned).collect();
    assert!(files.len() >= 3, "{files:?}");
    let (prev, last) = (&files[files.len() - 2], &files[files.len() - 1]);
    dir.get_mut(last).unwrap()[SEGMENT_HEADER_LEN..].fill(0);
    let scan = scan_segment(dir.get(prev).unwrap()).unwrap();
    let lost = *scan.frames.last().unwrap();
    dir.get_mut(prev).unwrap()[lost.offset as usize..].fill(0);
    match recover(&slot_files(&dir), 0) {
        Err(RecoveryError::Gap {
            prev: p,
            next,
            expected,
            found,
        }) => {
            assert_eq!(&p, prev);
            assert_eq!(next, slot::MANIFEST);
            assert_eq!(expected, lost.fsn, "the first FSN lost");
            assert!(found > expected, "{found}");
        }
        other => panic!("recovered past lost frames: {other:?}"),
    }
}
