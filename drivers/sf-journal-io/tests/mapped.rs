//! Segment files written through a memory mapping (unix): the bytes on disk are those of
//! positioned writes, the mapping follows a recycled segment through its renames, and what
//! lies outside a mapping is written through the file.
#![cfg(target_os = "linux")]

mod common;
use common::*;

use sf_journal::slot::{self, SPARE};
use sf_journal::FileOp;
use sf_journal_io::FileDir;

fn set_len(file: &str, len: u64) -> FileOp {
    FileOp::SetLen {
        file: file.to_owned(),
        len,
    }
}

fn write(file: &str, offset: u64, bytes: &[u8]) -> FileOp {
    FileOp::Write {
        file: file.to_owned(),
        offset,
        bytes: bytes.to_vec(),
    }
}

fn rename(from: &str, to: &str) -> FileOp {
    FileOp::Rename {
        from: from.to_owned(),
        to: to.to_owned(),
    }
}

#[test]
fn a_sized_segment_is_mapped_and_its_writes_are_copies_into_the_page_cache() {
    let dir = scratch("mapped-sized");
    let mut files = FileDir::create(&dir).unwrap();
    let seg = slot::segment_name(1);
    files.apply(&set_len(&seg, 4096)).unwrap();
    files.apply(&set_len(slot::MANIFEST, 8192)).unwrap();
    assert!(files.is_mapped(&seg));
    assert!(!files.is_mapped(slot::MANIFEST), "only segments");
    files.apply(&write(&seg, 100, b"frame")).unwrap();
    files
        .apply(&FileOp::Zero {
            file: seg.clone(),
            offset: 102,
            len: 2,
        })
        .unwrap();
    files.apply(&write(slot::MANIFEST, 0, b"m")).unwrap();
    let s = files.stats();
    assert_eq!((s.writes, s.mapped_writes), (3, 2));
    // Another reader sees the bytes at once, with the file's length unchanged.
    let on_disk = std::fs::read(dir.join(&seg)).unwrap();
    assert_eq!(on_disk.len(), 4096);
    assert_eq!(&on_disk[98..106], b"\0\0fr\0\0e\0");
    files.apply(&FileOp::Sync { file: seg.clone() }).unwrap();
    assert_eq!(files.stats().file_syncs, 1);
}

#[test]
fn a_mapping_follows_a_recycled_segment_through_its_renames_and_ends_with_its_unlink() {
    let dir = scratch("mapped-renamed");
    let mut files = FileDir::create(&dir).unwrap();
    let (a, b) = (slot::segment_name(1), slot::segment_name(2));
    files.apply(&set_len(&a, 4096)).unwrap();
    files.apply(&write(&a, 0, b"old header")).unwrap();
    files.apply(&rename(&a, SPARE)).unwrap();
    assert!(!files.is_mapped(&a));
    assert!(files.is_mapped(SPARE));
    files.apply(&write(SPARE, 0, b"new")).unwrap();
    files.apply(&rename(SPARE, &b)).unwrap();
    // Sized as it is: the same mapping, not a new one.
    files.apply(&set_len(&b, 4096)).unwrap();
    assert!(files.is_mapped(&b));
    assert_eq!(files.stats().maps_made, 1);
    files.apply(&write(&b, 10, b"frame")).unwrap();
    assert_eq!(files.stats().mapped_writes, 3);
    assert!(!dir.join(&a).exists() && !dir.join(SPARE).exists());
    let on_disk = std::fs::read(dir.join(&b)).unwrap();
    assert_eq!(&on_disk[..15], b"new headerframe");
    files.apply(&FileOp::Unlink { file: b.clone() }).unwrap();
    assert!(!files.is_mapped(&b));
    assert!(!dir.join(&b).exists());
}

#[test]
fn a_write_outside_the_mapping_goes_through_the_file_and_extends_it() {
    let dir = scratch("mapped-outside");
    let mut files = FileDir::create(&dir).unwrap();
    let seg = slot::segment_name(1);
    files.apply(&set_len(&seg, 4096)).unwrap();
    // Ends exactly at the mapping's end: mapped; one byte further: through the file.
    files.apply(&write(&seg, 4090, b"abcdef")).unwrap();
    assert_eq!(files.stats().mapped_writes, 1);
    files.apply(&write(&seg, 4091, b"BCDEFG")).unwrap();
    assert_eq!(files.stats().mapped_writes, 1);
    assert_eq!(files.stats().writes, 2);
    let on_disk = std::fs::read(dir.join(&seg)).unwrap();
    assert_eq!(on_disk.len(), 4097);
    assert_eq!(&on_disk[4090..], b"aBCDEFG");
}

#[test]
fn a_segment_sized_anew_is_mapped_at_its_new_length() {
    let dir = scratch("mapped-resized");
    let mut files = FileDir::create(&dir).unwrap();
    let seg = slot::segment_name(1);
    files.apply(&set_len(&seg, 4096)).unwrap();
    files.apply(&write(&seg, 0, b"kept")).unwrap();
    files.apply(&set_len(&seg, 8192)).unwrap();
    files.apply(&write(&seg, 6000, b"far")).unwrap();
    assert_eq!(files.stats().mapped_writes, 2);
    assert_eq!(files.stats().maps_made, 2);
    let on_disk = std::fs::read(dir.join(&seg)).unwrap();
    assert_eq!(on_disk.len(), 8192);
    assert_eq!(&on_disk[..4], b"kept");
    assert_eq!(&on_disk[6000..6003], b"far");
}

#[test]
fn a_mapped_file_removed_behind_the_journals_back_fails_its_rename() {
    let dir = scratch("mapped-removed");
    let mut files = FileDir::create(&dir).unwrap();
    let (a, b) = (slot::segment_name(1), slot::segment_name(2));
    files.apply(&set_len(&a, 4096)).unwrap();
    files.apply(&rename(&a, SPARE)).unwrap();
    std::fs::remove_file(dir.join(SPARE)).unwrap();
    // The header written through the mapping went with the file: not a silent success.
    files.apply(&write(SPARE, 0, b"header")).unwrap();
    let e = files.apply(&rename(SPARE, &b)).unwrap_err();
    assert_eq!(e.what, "rename");
    assert!(!files.is_mapped(SPARE) && !files.is_mapped(&b));
    // A file not mapped: a rename of nothing is nothing, as before.
    files.apply(&rename(SPARE, &b)).unwrap();
}

#[test]
fn a_rename_that_fails_for_another_reason_than_a_missing_file_is_an_error() {
    let dir = scratch("mapped-rename-error");
    let mut files = FileDir::create(&dir).unwrap();
    let seg = slot::segment_name(1);
    files.apply(&set_len(&seg, 4096)).unwrap();
    // A directory where the new name goes: the rename is refused.
    std::fs::create_dir(dir.join(SPARE)).unwrap();
    std::fs::write(dir.join(SPARE).join("x"), b"x").unwrap();
    let e = files.apply(&rename(&seg, SPARE)).unwrap_err();
    assert_eq!(e.what, "rename");
    // Not mapped either: the same.
    std::fs::write(dir.join("plain"), b"p").unwrap();
    assert!(files.apply(&rename("plain", SPARE)).is_err());
}

/// The mappings of this process that name `path`.
#[cfg(target_os = "linux")]
fn mappings_of(path: &std::path::Path) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let name = path.to_string_lossy();
    maps.lines().filter(|l| l.contains(name.as_ref())).count()
}

#[cfg(target_os = "linux")]
#[test]
fn a_mapping_is_released_when_its_file_is_unlinked_or_the_directory_dropped() {
    let dir = scratch("mapped-released");
    let mut files = FileDir::create(&dir).unwrap();
    let (a, b) = (slot::segment_name(1), slot::segment_name(2));
    files.apply(&set_len(&a, 4096)).unwrap();
    files.apply(&set_len(&b, 4096)).unwrap();
    assert_eq!(mappings_of(&dir.join(&a)), 1);
    files.apply(&FileOp::Unlink { file: a.clone() }).unwrap();
    assert_eq!(mappings_of(&dir.join(&a)), 0);
    assert_eq!(mappings_of(&dir.join(&b)), 1);
    drop(files);
    assert_eq!(mappings_of(&dir.join(&b)), 0);
}

#[test]
fn a_write_in_parts_is_copied_part_by_part_into_the_mapping_or_joined_through_the_file() {
    let dir = scratch("mapped-parts");
    let mut files = FileDir::create(&dir).unwrap();
    let seg = slot::segment_name(1);
    files.apply(&set_len(&seg, 4096)).unwrap();
    let parts = |a: &'static [u8], b: &'static [u8], c: &'static [u8]| {
        vec![
            bytes::Bytes::from_static(a),
            bytes::Bytes::from_static(b),
            bytes::Bytes::from_static(c),
        ]
    };
    files
        .apply(&FileOp::WriteParts {
            file: seg.clone(),
            offset: 100,
            parts: parts(b"ab", b"", b"cde"),
        })
        .unwrap();
    assert_eq!((files.stats().writes, files.stats().mapped_writes), (1, 1));
    // Ending one byte past the mapping: joined, one write through the file.
    files
        .apply(&FileOp::WriteParts {
            file: seg.clone(),
            offset: 4090,
            parts: parts(b"fgh", b"ij", b"kl"),
        })
        .unwrap();
    assert_eq!((files.stats().writes, files.stats().mapped_writes), (2, 1));
    let on_disk = std::fs::read(dir.join(&seg)).unwrap();
    assert_eq!(&on_disk[99..106], b"\0abcde\0");
    assert_eq!(on_disk.len(), 4097);
    assert_eq!(&on_disk[4090..], b"fghijkl");
}

#[test]
fn sf_28_every_end_of_close_unmaps_the_segments_while_the_journal_lives() {
    use sf_journal_io::journal::CloseStep;
    use sf_journal_io::Journal;
    // (now, timeout): skipped with 0 and -1, timed out at its deadline, drained (all acked).
    for (case, now, timeout, ack) in [
        ("skipped 0", 0, 0, false),
        ("skipped -1", 0, -1, false),
        ("timed out", 50, 50, false),
        ("drained", 0, 5_000, true),
    ] {
        let sf = scratch("close-unmaps");
        let slot_dir = sf.join("s");
        let mut j = Journal::open(&sf, "s", small()).unwrap();
        for i in 0..6 {
            let _ = j.append(&payload(i), 0).unwrap();
        }
        assert!(j.ring().segment_files().count() > 1, "{case}");
        assert!(
            mappings_of(&slot_dir) > 1,
            "{case}: the segments are mapped"
        );
        if ack {
            let _ = j.connect(0);
            let _ = drain(&mut j);
            j.ok(5, Vec::new()).unwrap();
        }
        let step = j.close(now, 0, timeout).unwrap();
        assert!(matches!(step, CloseStep::Done(_)), "{case}: {step:?}");
        // The closed journal still exists: its segments are unmapped all the same, as the
        // lock is released.
        assert_eq!(mappings_of(&slot_dir), 0, "{case}");
        drop(Journal::open(&sf, "s", small()).unwrap());
        drop(j);
    }
}
