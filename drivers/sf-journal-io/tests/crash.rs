//! Crashes on real files: operations stopped at every boundary, flipped bytes, and what close
//! and checkpoints leave on disk (SF-5, SF-30, SF-36, SF-D8).

mod common;
use common::*;

use sf_journal::ring::{Durability, Ring};
use sf_journal::slot;
use sf_journal::{FileOp, MemDir};
use sf_journal_io::journal::CloseStep;
use sf_journal_io::{FileDir, Journal, JournalError};

/// The operations of appending `n` frames, and after how many of them each frame is complete
/// (its checksum written).
fn appends(n: usize) -> (Vec<FileOp>, Vec<usize>) {
    let mut ring = Ring::new(small().ring);
    let (mut ops, mut done) = (Vec::new(), Vec::new());
    for i in 0..n {
        ops.extend(ring.append(&payload(i), 1_000).unwrap().ops);
        done.push(ops.len());
    }
    (ops, done)
}

#[test]
fn sf_5_a_crash_at_every_write_boundary_on_real_files_keeps_the_completed_frames() {
    let (ops, done) = appends(8);
    let sf = scratch("every-boundary");
    for k in 0..=ops.len() {
        let id = format!("k{k}");
        let mut files = FileDir::create(sf.join(&id)).unwrap();
        files.apply_all(&ops[..k]).unwrap();
        // The file side leaves the bytes the engine's in-memory directory would.
        let mut mem = MemDir::new();
        mem.apply_all(&ops[..k]);
        for name in mem.names() {
            let on_disk = std::fs::read(files.path().join(name)).unwrap();
            assert_eq!(on_disk, mem.get(name).unwrap(), "k={k} {name}");
        }
        drop(files);
        let complete = done.iter().filter(|&&d| d <= k).count();
        let mut j = Journal::open(&sf, &id, small()).unwrap();
        let _ = j.connect(0);
        assert_eq!(drain(&mut j), frames(0, complete), "k={k}");
        // The recovered journal goes on from there, and survives a second crash.
        for i in complete..complete + 2 {
            assert_eq!(j.append(&payload(i), 2_000).unwrap(), i as i64, "k={k}");
        }
        drop(j);
        let mut j = Journal::open(&sf, &id, small()).unwrap();
        let _ = j.connect(0);
        assert_eq!(drain(&mut j), frames(0, complete + 2), "k={k}");
    }
}

#[test]
fn sf_5_a_frame_written_from_the_callers_bytes_matches_the_engines_writes() {
    // Twelve frames over four segments: every file, byte for byte, and the number of
    // positioned writes are those of the engine's own operations.
    let (ops, _) = appends(12);
    let sf = scratch("callers-bytes");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..12 {
        assert_eq!(j.append(&payload(i), 1_000).unwrap(), i as i64);
    }
    let writes = j.dir_stats().unwrap().writes;
    let mut mem = MemDir::new();
    mem.apply_all(&ops);
    assert_eq!(mem.names().filter(|n| n.ends_with(".sfa")).count(), 4);
    for name in mem.names() {
        let on_disk = std::fs::read(sf.join("s").join(name)).unwrap();
        assert_eq!(on_disk, mem.get(name).unwrap(), "{name}");
    }
    let engine_writes = ops
        .iter()
        .filter(|o| matches!(o, FileOp::Write { .. }))
        .count() as u64;
    assert_eq!(writes, engine_writes);
}

/// A small deterministic generator (the seed is the test's input).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *seed >> 33
}

#[test]
fn sf_30_flipped_bytes_on_disk_leave_a_prefix_of_the_frames_or_a_typed_refusal() {
    let sf = scratch("flipped");
    let mut config = small();
    config.ring.segment_bytes = 4096;
    for seed0 in 0..40u64 {
        let mut seed = seed0;
        let id = format!("seed{seed0}");
        let mut j = Journal::open(&sf, &id, config).unwrap();
        for i in 0..12 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        drop(j);
        let seg = sf.join(&id).join(slot::SEGMENT_INITIAL);
        let mut bytes = std::fs::read(&seg).unwrap();
        let used = 24 + 12 * 28;
        // Even seeds flip a byte of the frames; odd ones a byte of the header's magic, version
        // or reserved bytes (the header has no checksum: its base and time are taken as read).
        let at = if seed0 % 2 == 0 {
            24 + (lcg(&mut seed) % (used - 24)) as usize
        } else {
            (lcg(&mut seed) % 8) as usize
        };
        bytes[at] ^= 1 << (lcg(&mut seed) % 8);
        std::fs::write(&seg, &bytes).unwrap();
        match Journal::open(&sf, &id, config) {
            Ok(mut j) => {
                assert!(
                    at >= 24,
                    "seed {seed0}: a flipped header byte at {at} must be refused"
                );
                let _ = j.connect(0);
                let got = drain(&mut j);
                let kept = (at - 24) / 28;
                assert_eq!(got, frames(0, kept), "seed {seed0}: flip at {at}");
            }
            Err(JournalError::Recovery(_)) => assert!(at < 8, "seed {seed0}: flip at {at}"),
            Err(e) => panic!("seed {seed0}: {e}"),
        }
    }
}

#[test]
fn sf_d8_a_drained_close_on_disk_leaves_only_the_lock_files() {
    let sf = scratch("drained-close");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..7 {
        let _ = j
            .append_with_symbols(&[format!("sym{i}")], |_| payload(i), 0)
            .unwrap();
    }
    let _ = j.connect(0);
    let _ = drain(&mut j);
    assert!(matches!(
        j.close(0, 0, 5_000).unwrap(),
        CloseStep::Wait { .. }
    ));
    j.ok(6, Vec::new()).unwrap();
    let CloseStep::Done(c) = j.close(1, 0, 5_000).unwrap() else {
        panic!("drained")
    };
    assert!(c.unacknowledged.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(sf.join("s"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [slot::LOCK, slot::LOCK_PID]);
    // The lock is released: the next sender finds an empty slot.
    let j = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!((j.published_fsn(), j.recovered()), (-1, 0..0));
}

#[test]
fn sf_36_no_sync_reaches_the_disk_by_default() {
    let sf = scratch("no-sync");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..10 {
        let _ = j.append(&payload(i), i as u64 * 1_000).unwrap();
        assert_eq!(j.checkpoint(i as u64 * 1_000_000).unwrap(), 0);
    }
    let stats = j.dir_stats().unwrap();
    assert_eq!((stats.file_syncs, stats.dir_syncs), (0, 0));
    assert!(stats.writes > 0);
}

#[test]
fn sf_36_periodic_checkpoints_sync_every_journal_file_then_the_directory() {
    let sf = scratch("periodic");
    let mut config = small();
    config.durability = Durability::Periodic {
        interval_millis: 100,
    };
    let mut j = Journal::open(&sf, "s", config).unwrap();
    for i in 0..5 {
        let _ = j
            .append_with_symbols(&["a"], |_| payload(i), 1_000)
            .unwrap();
    }
    // The first append starts the clock; nothing is due before the interval has passed.
    assert_eq!(j.checkpoint(1_000).unwrap(), 0);
    assert_eq!(j.checkpoint(1_099).unwrap(), 0);
    assert_eq!(j.dir_stats().unwrap().file_syncs, 0);
    // Two segments, the manifest and the dictionary, then the directory.
    assert_eq!(j.checkpoint(1_100).unwrap(), 5);
    let s = j.dir_stats().unwrap();
    assert_eq!((s.file_syncs, s.dir_syncs), (4, 1));
    assert_eq!(j.checkpoint(1_150).unwrap(), 0);
    assert_eq!(j.checkpoint(1_200).unwrap(), 5);
    assert_eq!(j.dir_stats().unwrap().dir_syncs, 2);
    // Memory mode has nothing to sync.
    let mut m = Journal::memory(config);
    let _ = m.append(b"QWP1", 0).unwrap();
    assert_eq!(m.checkpoint(0).unwrap(), 0);
    assert_eq!(m.checkpoint(10_000).unwrap(), 0);
}

#[test]
fn sf_d8_a_spare_segment_left_by_a_crash_is_removed_by_a_drained_close() {
    // The operations of four frames in segments of three: the fourth opens a second segment.
    let (ops, done) = appends(4);
    let sf = scratch("spare-close");
    let mut files = FileDir::create(sf.join("s")).unwrap();
    // Stop after the second segment's creation and header, before its frame.
    let second = ops
        .iter()
        .position(|op| {
            matches!(op, FileOp::SetLen { file, .. }
                if slot::parse_segment_name(file).is_some() && file != slot::SEGMENT_INITIAL)
        })
        .unwrap();
    files.apply_all(&ops[..second + 2]).unwrap();
    assert!(second + 2 < done[3]);
    drop(files);
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!(j.recovered(), 0..3);
    let _ = j.connect(0);
    assert_eq!(drain(&mut j).len(), 3);
    j.ok(2, Vec::new()).unwrap();
    let CloseStep::Done(c) = j.close(0, 0, 1_000).unwrap() else {
        panic!("drained")
    };
    assert!(c.unacknowledged.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(sf.join("s"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [slot::LOCK, slot::LOCK_PID]);
}

#[test]
fn sf_d8_after_a_crash_at_any_boundary_a_drained_close_leaves_only_the_lock_files() {
    let (ops, _) = appends(8);
    let sf = scratch("every-boundary-close");
    for k in 0..=ops.len() {
        let id = format!("k{k}");
        FileDir::create(sf.join(&id))
            .unwrap()
            .apply_all(&ops[..k])
            .unwrap();
        let mut j = Journal::open(&sf, &id, small()).unwrap();
        let _ = j.append(&payload(99), 0).unwrap();
        let _ = j.connect(0);
        let n = drain(&mut j).len();
        j.ok(n as u64 - 1, Vec::new()).unwrap();
        let CloseStep::Done(c) = j.close(0, 0, 1_000).unwrap() else {
            panic!("k={k}: drained")
        };
        assert!(c.unacknowledged.is_empty(), "k={k}");
        let mut names: Vec<String> = std::fs::read_dir(sf.join(&id))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [slot::LOCK, slot::LOCK_PID], "k={k}");
    }
}

#[test]
fn file_side_a_failed_file_operation_stops_the_journal_until_the_slot_is_opened_again() {
    let sf = scratch("broken");
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..3 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    // The slot directory disappears under the journal: the next segment cannot be created.
    std::fs::remove_dir_all(sf.join("s")).unwrap();
    assert!(matches!(j.append(&payload(3), 0), Err(JournalError::Io(_))));
    assert!(matches!(
        j.append(&payload(4), 0),
        Err(JournalError::Broken)
    ));
    let _ = j.connect(0);
    assert!(matches!(j.next_frame(), Err(JournalError::Broken)));
    assert!(matches!(j.ok(0, Vec::new()), Err(JournalError::Broken)));
    let CloseStep::Done(c) = j.close(0, 0, 1_000).unwrap() else {
        panic!("a broken journal closes at once")
    };
    assert!(!c.unacknowledged.is_empty());
    assert!(matches!(
        j.append(&payload(5), 0),
        Err(JournalError::Closed)
    ));
    // Opened again, the slot is what the disk holds (here: nothing).
    let j = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!(j.published_fsn(), -1);
}

#[test]
fn sf_d8_a_drained_close_removes_set_aside_and_interrupted_rename_leftovers() {
    let sf = scratch("leftovers-close");
    let dir = sf.join("s");
    std::fs::create_dir_all(&dir).unwrap();
    // A manifest of the wrong size: recovery sets it aside as `.corrupt` (SF-D4).
    std::fs::write(dir.join(slot::MANIFEST), b"not a manifest").unwrap();
    // Leftovers of write-then-rename cut short by a crash, and an older set-aside file.
    for name in [
        "sf-manifest.bin.tmp",
        ".ack-watermark.tmp",
        ".ack-watermark.corrupt",
        "sf-0000000000000003.sfa.tmp",
    ] {
        std::fs::write(dir.join(name), b"left over").unwrap();
    }
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    assert!(
        dir.join("sf-manifest.bin.corrupt").exists(),
        "set aside on open"
    );
    for i in 0..5 {
        let _ = j.append(&payload(i), 0).unwrap();
    }
    let _ = j.connect(0);
    let _ = drain(&mut j);
    j.ok(4, Vec::new()).unwrap();
    let CloseStep::Done(c) = j.close(0, 0, 5_000).unwrap() else {
        panic!("drained")
    };
    assert!(c.unacknowledged.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [slot::LOCK, slot::LOCK_PID]);
}

#[test]
fn sf_d8_a_close_with_frames_unacknowledged_keeps_the_set_aside_files() {
    let sf = scratch("leftovers-kept");
    let dir = sf.join("s");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(slot::MANIFEST), b"not a manifest").unwrap();
    let mut j = Journal::open(&sf, "s", small()).unwrap();
    let _ = j.append(&payload(0), 0).unwrap();
    let CloseStep::Done(c) = j.close(0, 0, 0).unwrap() else {
        panic!("skipped")
    };
    assert_eq!(c.unacknowledged, 0..1);
    assert!(
        dir.join("sf-manifest.bin.corrupt").exists(),
        "only a drained close removes it"
    );
}

#[test]
fn sf_30_recovery_on_open_holds_one_segment_at_a_time() {
    let sf = scratch("one-segment-at-a-time");
    {
        let mut j = Journal::open(&sf, "s", small()).unwrap();
        for i in 0..30 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        // Dropped without close: every frame stays for recovery.
    }
    let segments: Vec<u64> = std::fs::read_dir(sf.join("s"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sfa"))
        .map(|e| e.metadata().unwrap().len())
        .collect();
    assert!(segments.len() >= 10, "{} segments", segments.len());
    let j = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!(j.recovered(), 0..30);
    let st = j.dir_stats().unwrap();
    assert_eq!(
        st.recovery_segment_bytes,
        segments.iter().sum::<u64>(),
        "every segment read once"
    );
    assert_eq!(
        st.recovery_peak_bytes,
        *segments.iter().max().unwrap(),
        "never more than one segment held"
    );
    assert_eq!(st.recovery_peak_bytes, 128);
}
