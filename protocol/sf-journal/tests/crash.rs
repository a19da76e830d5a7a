//! Crashes at every write boundary and flipped bytes anywhere (SF-5, SF-30).

mod common;
use common::*;

use proptest::prelude::*;
use sf_journal::recovery::recover;
use sf_journal::ring::{Ring, RingConfig};
use sf_journal::{FileOp, MemDir};

fn small() -> RingConfig {
    RingConfig {
        segment_bytes: 160,
        max_total_bytes: 1 << 20,
        append_deadline_millis: 100,
    }
}

/// Every operation of `n` appends, each tagged with the index of the append it belongs to.
fn append_ops(n: usize) -> Vec<(usize, FileOp)> {
    let mut ring = Ring::new(small());
    let mut ops = Vec::new();
    for i in 0..n {
        for op in ring.append(&payload(i), 1_000).unwrap().ops {
            ops.push((i, op));
        }
    }
    ops
}

/// The payloads recovery finds, in FSN order (FSNs checked to be 0, 1, 2, ...).
fn recovered(dir: &MemDir) -> Vec<Vec<u8>> {
    let r = recover(&slot_files(dir), 0).expect("recovery accepts every crash state");
    let mut out = Vec::new();
    for s in &r.segments {
        let bytes = dir.get(&s.file).unwrap();
        for (i, f) in s.scan.frames.iter().enumerate() {
            assert_eq!(f.fsn, out.len() as i64);
            out.push(s.scan.payload(bytes, i).to_vec());
        }
    }
    assert_eq!(r.next_fsn, out.len() as i64);
    out
}

#[test]
fn sf_5_the_frame_body_is_written_before_its_checksum() {
    let ops = append_ops(1);
    let frame_ops: Vec<&FileOp> = ops
        .iter()
        .map(|(_, op)| op)
        .filter(|op| matches!(op, FileOp::Write { file, .. } if file.ends_with(".sfa")))
        .skip(1) // the header
        .collect();
    let [FileOp::Write {
        offset: body_at, ..
    }, FileOp::Write {
        offset: crc_at,
        bytes,
        ..
    }] = frame_ops.as_slice()
    else {
        panic!("two frame writes: {frame_ops:?}");
    };
    assert_eq!(*body_at, crc_at + 4);
    assert_eq!(bytes.len(), 4);
}

#[test]
fn sf_5_a_crash_at_every_write_boundary_keeps_exactly_the_completed_frames() {
    let n = 12;
    let ops = append_ops(n);
    for cut in 0..=ops.len() {
        let mut dir = MemDir::new();
        dir.apply_all(ops[..cut].iter().map(|(_, op)| op));
        // Frames whose checksum write (the last op of their append) was carried out.
        let complete = (0..n)
            .filter(|&i| {
                let last = ops.iter().rposition(|(j, _)| *j == i).unwrap();
                last < cut
            })
            .count();
        let got = recovered(&dir);
        let want: Vec<Vec<u8>> = (0..complete).map(payload).collect();
        assert_eq!(got, want, "crash after {cut} of {} operations", ops.len());
    }
}

#[test]
fn sf_5_a_crash_between_payload_and_checksum_is_a_torn_tail_that_is_cut() {
    let ops = append_ops(3);
    // Stop right after the third frame's body write (its last op is the checksum).
    let last = ops.len() - 1;
    let mut dir = MemDir::new();
    dir.apply_all(ops[..last].iter().map(|(_, op)| op));
    let r = recover(&slot_files(&dir), 0).unwrap();
    assert_eq!(r.next_fsn, 2);
    assert!(r.segments.last().unwrap().scan.is_torn());
    dir.apply_all(&r.ops);
    // After the cut, the next sender appends FSN 2 again at the same place.
    let mut ring = Ring::from_recovery(small(), &r);
    let a = ring.append(b"replacement", 2_000).unwrap();
    assert_eq!(a.fsn, 2);
    dir.apply_all(&a.ops);
    let got = recovered(&dir);
    assert_eq!(got, [payload(0), payload(1), b"replacement".to_vec()]);
}

#[test]
fn sf_5_a_torn_partial_body_write_is_discarded() {
    let ops = append_ops(2);
    let (_, body) = &ops[ops.len() - 2];
    let FileOp::Write {
        file,
        offset,
        bytes,
    } = body
    else {
        panic!("a body write")
    };
    for keep in 1..bytes.len() {
        let mut dir = MemDir::new();
        dir.apply_all(ops[..ops.len() - 2].iter().map(|(_, op)| op));
        dir.apply(&FileOp::Write {
            file: file.clone(),
            offset: *offset,
            bytes: bytes[..keep].to_vec(),
        });
        assert_eq!(recovered(&dir), [payload(0)], "{keep} body bytes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Flipping any bits of any byte of any segment never panics recovery and never invents a
    /// frame: outside the headers, what survives is the appended frames with their FSNs, in
    /// order, up to the damage (a header hit may refuse recovery with a typed error).
    #[test]
    fn sf_30_flipped_bytes_leave_a_prefix_of_the_appended_frames(
        n in 1usize..14,
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        mask in 1u8..=255,
        last_cut in any::<bool>(),
    ) {
        let ops = append_ops(n);
        let mut dir = MemDir::new();
        // With `last_cut`, the process died before the last frame's writes (the body and its
        // checksum), after whatever that append did first: a segment it opened holds no frame.
        let cut = if last_cut { 2 } else { 0 };
        dir.apply_all(ops[..ops.len() - cut].iter().map(|(_, op)| op));
        let segs: Vec<String> = dir.names().filter(|f| f.ends_with(".sfa")).map(str::to_owned).collect();
        let file = pick.get(&segs).clone();
        let bytes = dir.get_mut(&file).unwrap();
        let i = at.index(bytes.len());
        bytes[i] ^= mask;
        match recover(&slot_files(&dir), 0) {
            Err(_) => prop_assert!(i < 24 || segs.len() > 1, "only a header or a break between segments refuses"),
            // A flipped base sequence renumbers the frames; nothing more to check there.
            Ok(_) if i < 24 => {}
            Ok(r) => {
                let mut got = Vec::new();
                for s in &r.segments {
                    let b = dir.get(&s.file).unwrap();
                    for (k, f) in s.scan.frames.iter().enumerate() {
                        got.push((f.fsn, s.scan.payload(b, k).to_vec()));
                    }
                }
                let lowest = got.first().map_or(0, |g| g.0);
                for (k, (fsn, p)) in got.iter().enumerate() {
                    prop_assert_eq!(*fsn, lowest + k as i64);
                    prop_assert_eq!(p, &payload(*fsn as usize));
                }
                prop_assert!(got.len() <= n);
                // Every FSN left to replay is a frame on disk: no hole is replayed (SF-31).
                let on_disk: Vec<i64> = got.iter().map(|g| g.0).collect();
                for fsn in r.unacked() {
                    prop_assert!(on_disk.contains(&fsn), "FSN {} to replay is on no disk", fsn);
                }
            }
        }
    }

    /// Arbitrary bytes as a segment, a dictionary, a manifest or a watermark: recovery
    /// answers, never panics.
    #[test]
    fn sf_30_arbitrary_bytes_never_panic_recovery(
        seg in prop::collection::vec(any::<u8>(), 0..200),
        dict in prop::collection::vec(any::<u8>(), 0..64),
        wm in prop::collection::vec(any::<u8>(), 0..32),
    ) {
        let mut files = sf_journal::recovery::SlotFiles::default();
        let mut seg = seg;
        if seg.len() >= 8 {
            seg[..8].copy_from_slice(&[0x53, 0x46, 0x30, 0x31, 1, 0, 0, 0]);
        }
        files.segments.push(("sf-initial.sfa".into(), seg));
        let mut d = dict;
        if d.len() >= 8 {
            d[..8].copy_from_slice(&[0x53, 0x59, 0x44, 0x31, 1, 0, 0, 0]);
        }
        files.symbol_dict = Some(d);
        files.ack_watermark = Some(wm.clone());
        files.manifest = Some(wm);
        let _ = recover(&files, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Frames naming symbols, appended with the dictionary written ahead, then a crash after
    /// any operation: every frame recovery finds uses only ids the recovered dictionary has.
    #[test]
    fn sf_35_no_crash_leaves_a_frame_using_ids_the_dictionary_lacks(
        batches in prop::collection::vec(prop::collection::vec(0u8..12, 0..4), 1..10),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut ring = Ring::new(small());
        let mut dict = sf_journal::dict::SymbolDict::new();
        let mut ops = Vec::new();
        for names in &batches {
            let names: Vec<String> = names.iter().map(|n| format!("sym{n}")).collect();
            // The payload carries the ids it uses, as a QWP frame would.
            let (want, _) = dict.clone().intern(&names);
            let encode = |ids: &[u32]| ids.iter().map(|&i| i as u8).collect();
            let (got, a) = ring.append_with_symbols(&mut dict, &names, encode, 0).unwrap();
            prop_assert_eq!(got, want);
            ops.extend(a.ops);
        }
        let cut = cut.index(ops.len() + 1);
        let mut dir = MemDir::new();
        dir.apply_all(&ops[..cut]);
        let r = recover(&slot_files(&dir), 0).unwrap();
        let known = r.dict.as_ref().map_or(0, |d| d.symbols.len());
        for s in &r.segments {
            let b = dir.get(&s.file).unwrap();
            for k in 0..s.scan.frames.len() {
                for &id in s.scan.payload(b, k) {
                    prop_assert!((id as usize) < known, "id {} of {} known", id, known);
                }
            }
        }
    }

    /// A dictionary cut anywhere keeps exactly the chunks wholly before the cut.
    #[test]
    fn sf_37_a_dictionary_cut_anywhere_keeps_the_whole_chunks_before_the_cut(
        chunks in prop::collection::vec(prop::collection::vec("[a-z]{0,6}", 1..4), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = sf_journal::dict::dict_header().to_vec();
        let mut ends = Vec::new();
        let mut all = Vec::new();
        for c in &chunks {
            bytes.extend(sf_journal::dict::encode_chunk(c));
            all.push(c.clone());
            ends.push(bytes.len());
        }
        let cut = 8 + cut.index(bytes.len() - 8 + 1);
        let scan = sf_journal::dict::scan_dict(&bytes[..cut]).unwrap();
        let whole = ends.iter().filter(|&&e| e <= cut).count();
        let want: Vec<String> = all[..whole].concat();
        prop_assert_eq!(scan.symbols, want);
        prop_assert_eq!(scan.valid_len as usize, if whole == 0 { 8 } else { ends[whole - 1] });
    }
}
