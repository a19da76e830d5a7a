//! The client journal over a ring held in memory: what it keeps, what it frees, and what a
//! restart finds.

mod common;

use std::time::Duration;

use common::{
    batch, command, entry, live_set, reopen, segment_count, slot_files, syncs, transfer, LiveSet,
};
use nervix_journal::{
    decode_record, encode_record, ClientJournal, ClientJournalConfig, DecodeError, Entry,
    JournalError, JournalKey, JournalLink, Record, RecoveredBatch, RecoveredCommand,
    RecoveredTransfer, SyncPolicy, DEFAULT_CAPACITY_BYTES, DEFAULT_HORIZON, DEFAULT_SEGMENT_BYTES,
};
use nervix_protocol::time::{Timestamp, UnixMillis};
use proptest::prelude::*;
use sf_journal::ring::{Ring, RingConfig};
use sf_journal::segment::FRAME_HEADER_LEN;
use sf_journal::slot::SPARE;
use sf_journal::{FileOp, MemDir};

fn small() -> ClientJournalConfig {
    ClientJournalConfig::new(1024, 4096)
}

/// A journal whose every operation is carried out on a memory slot.
struct Slot {
    j: ClientJournal,
    dir: MemDir,
    config: ClientJournalConfig,
}

impl Slot {
    fn new(config: ClientJournalConfig) -> Self {
        Self {
            j: ClientJournal::new(config),
            dir: MemDir::new(),
            config,
        }
    }

    fn put(&mut self, e: &Entry) -> JournalKey {
        let w = self.j.put(e, 0).expect("the put is taken");
        self.dir.apply_all(&w.ops);
        w.key
    }

    fn handed(&mut self, key: JournalKey) {
        let w = self.j.handed(key, 0).expect("the mark is taken");
        self.dir.apply_all(&w.ops);
    }

    fn end(&mut self, key: JournalKey) {
        let w = self.j.end(key, 0).expect("the end is taken");
        self.dir.apply_all(&w.ops);
    }

    /// Drops the journal (a crash: nothing more is written) and recovers from the files.
    fn restart(&mut self) {
        self.j = reopen(&mut self.dir, self.config);
    }
}

#[test]
fn put_handed_and_end_survive_a_restart() {
    let mut s = Slot::new(ClientJournalConfig::default());
    let c = s.put(&Entry::Command(command(1, 10)));
    let t = s.put(&Entry::Transfer(transfer(2, 20)));
    let b = s.put(&Entry::Batch(batch(3, 100, 30)));
    let b2 = s.put(&Entry::Batch(batch(4, 50, 40)));
    s.handed(b);
    s.end(t);
    let before = live_set(&s.j);
    s.restart();
    assert_eq!(live_set(&s.j), before);
    assert_eq!(s.j.live(), 3);
    assert!(s.j.get(b).expect("live").handed);
    assert!(!s.j.get(b2).expect("live").handed);
    assert!(!s.j.get(c).expect("live").handed);
    assert!(s.j.get(t).is_none());
    assert!(s.j.next_key() > b2, "keys go on past every recovered key");
}

#[test]
fn ending_everything_leaves_an_empty_list_after_a_restart() {
    let mut s = Slot::new(small());
    let keys: Vec<_> = (0..30).map(|n| s.put(&entry(n, 40))).collect();
    for k in keys {
        s.end(k);
    }
    s.restart();
    assert_eq!(s.j.live(), 0);
    assert!(s.j.classify(UnixMillis(0), DEFAULT_HORIZON).is_empty());
    assert!(s.j.next_key() >= JournalKey(30));
}

#[test]
fn handed_and_end_of_an_unknown_key_are_refused() {
    let mut s = Slot::new(small());
    assert_eq!(
        s.j.handed(JournalKey(5), 0),
        Err(JournalError::UnknownKey(JournalKey(5)))
    );
    let k = s.put(&entry(0, 10));
    s.end(k);
    assert_eq!(s.j.end(k, 0), Err(JournalError::UnknownKey(k)));
    assert_eq!(s.j.handed(k, 0), Err(JournalError::UnknownKey(k)));
}

#[test]
fn a_record_larger_than_a_segment_is_refused_and_changes_nothing() {
    let mut s = Slot::new(small());
    let max = s.j.max_record_bytes();
    let e = Entry::Batch(batch(1, 2000, 0));
    match s.j.put(&e, 0) {
        Err(JournalError::TooLarge { len, max: m }) => {
            assert!(len > m);
            assert_eq!(m, max);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert_eq!(s.j.live(), 0);
    assert_eq!(s.j.next_key(), JournalKey(0));
    assert_eq!(s.j.stats().puts, 0);
}

#[test]
fn a_record_of_exactly_the_largest_size_fits() {
    let mut s = Slot::new(small());
    let max = s.j.max_record_bytes();
    // The batch's own framing: version, kind, key, handed, tag, two strings, length, time.
    let overhead = encode_record(&Record::Put {
        key: JournalKey(0),
        handed: false,
        entry: Entry::Batch(batch(1, 0, 0)),
    })
    .expect("encodes")
    .len();
    let e = Entry::Batch(batch(1, max - overhead, 0));
    let k = s.put(&e);
    s.restart();
    assert_eq!(s.j.get(k).expect("live").entry, &e);
    let e = Entry::Batch(batch(1, max - overhead + 1, 0));
    assert!(matches!(s.j.put(&e, 0), Err(JournalError::TooLarge { .. })));
    // A command's record too, encoded in one buffer: exactly the largest fits, one byte more
    // is refused naming its length.
    let with_query = |len: usize| {
        let mut c = command(1, 0);
        c.query = "q".repeat(len);
        Entry::Command(c)
    };
    let overhead = encode_record(&Record::Put {
        key: JournalKey(0),
        handed: false,
        entry: with_query(0),
    })
    .expect("encodes")
    .len();
    let e = with_query(max - overhead);
    let k = s.put(&e);
    s.restart();
    assert_eq!(s.j.get(k).expect("live").entry, &e);
    assert_eq!(
        s.j.put(&with_query(max - overhead + 1), 0).map(|w| w.key),
        Err(JournalError::TooLarge { len: max + 1, max })
    );
}

#[test]
fn the_default_segment_holds_the_largest_record_a_client_ever_journals() {
    use nervix_protocol::client::SUBMIT_OVERHEAD;
    use nervix_protocol::limits::FRAME_LIMIT;
    let mut s = Slot::new(ClientJournalConfig::default());
    // The largest batch a producer submits, under the longest names an open request carries
    // (both go in one frame).
    let names = FRAME_LIMIT - SUBMIT_OVERHEAD;
    let mut b = batch(1, FRAME_LIMIT - SUBMIT_OVERHEAD, 0);
    b.domain = "d".repeat(names / 2);
    b.ingestor = "i".repeat(names - names / 2);
    let big_batch = Entry::Batch(b);
    // A command whose query alone is a whole frame.
    let mut c = command(2, 0);
    c.query = "q".repeat(FRAME_LIMIT);
    let big_command = Entry::Command(c);
    let kb = s.put(&big_batch);
    let kc = s.put(&big_command);
    s.restart();
    assert_eq!(s.j.get(kb).expect("live").entry, &big_batch);
    assert_eq!(s.j.get(kc).expect("live").entry, &big_command);
}

#[test]
fn the_default_journal_takes_puts_into_sixty_four_mib_of_segments_and_no_more() {
    let mut s = Slot::new(ClientJournalConfig::default());
    assert_eq!(DEFAULT_CAPACITY_BYTES, 8 * DEFAULT_SEGMENT_BYTES);
    // Seven records of a little over 1 MiB fill an 8 MiB segment; eight segments are 64 MiB.
    let e = Entry::Batch(batch(1, 1 << 20, 0));
    let mut taken = 0;
    let err = loop {
        match s.j.put(&e, 0) {
            Ok(w) => {
                s.dir.apply_all(&w.ops);
                taken += 1;
            }
            Err(err) => break err,
        }
    };
    assert!(matches!(err, JournalError::Full { .. }), "{err:?}");
    assert_eq!(taken, 7 * 8);
    assert_eq!(s.j.stats().resident_bytes, DEFAULT_CAPACITY_BYTES);
}

#[test]
fn a_full_journal_names_the_link_and_a_refused_put_changes_nothing() {
    let mut s = Slot::new(small());
    let e = Entry::Batch(batch(1, 300, 0));
    let mut keys = Vec::new();
    let err = loop {
        match s.j.put(&e, 0) {
            Ok(w) => {
                s.dir.apply_all(&w.ops);
                keys.push(w.key);
                assert!(keys.len() < 100, "the journal never filled");
            }
            Err(err) => break err,
        }
    };
    let frame = encode_record(&Record::Put {
        key: s.j.next_key(),
        handed: false,
        entry: e.clone(),
    })
    .expect("encodes")
    .len()
        + FRAME_HEADER_LEN;
    assert_eq!(
        err,
        JournalError::Full {
            link: JournalLink::Publishing,
            needed: frame as u64,
        }
    );
    // A command's record of the same size, encoded in one buffer, is refused the same way.
    let mut c = command(2, 0);
    let short = encode_record(&Record::Put {
        key: s.j.next_key(),
        handed: false,
        entry: Entry::Command(c.clone()),
    })
    .expect("encodes")
    .len();
    c.query
        .push_str(&"q".repeat(frame - FRAME_HEADER_LEN - short));
    assert_eq!(
        s.j.put(&Entry::Command(c), 0).map(|w| w.key),
        Err(JournalError::Full {
            link: JournalLink::Publishing,
            needed: frame as u64,
        })
    );
    let live = live_set(&s.j);
    let next = s.j.next_key();
    s.j.set_link(JournalLink::Reconnecting);
    assert!(matches!(
        s.j.put(&e, 0),
        Err(JournalError::Full {
            link: JournalLink::Reconnecting,
            ..
        })
    ));
    assert_eq!(live_set(&s.j), live);
    assert_eq!(s.j.next_key(), next);
    assert_eq!(s.j.stats().fulls, 3);
    assert!(s.j.resident_bytes() <= 4096);
    // A full journal still ends what it holds, and then takes puts again.
    for k in keys {
        s.end(k);
    }
    s.put(&e);
    s.restart();
    assert_eq!(s.j.live(), 1);
}

#[test]
fn a_long_lived_record_outlives_ten_thousand_short_lived_ones_in_a_small_ring() {
    let mut s = Slot::new(small());
    let long = Entry::Command(command(99, 5));
    let kept = s.put(&long);
    let mut peak = 0;
    for n in 0..10_000u64 {
        let w =
            s.j.put(&entry(n, 60), 0)
                .unwrap_or_else(|e| panic!("put {n}: {e}"));
        s.dir.apply_all(&w.ops);
        let w = s.j.end(w.key, 0).unwrap_or_else(|e| panic!("end {n}: {e}"));
        s.dir.apply_all(&w.ops);
        peak = peak.max(s.j.resident_bytes());
        assert_eq!(segment_count(&s.dir), s.j.segment_files().count());
        assert_eq!(
            s.dir.get(SPARE).is_some(),
            s.j.spare_file().is_some(),
            "the spare is the ring's"
        );
    }
    assert!(s.j.stats().copies_forward > 0, "{:?}", s.j.stats());
    assert!(peak <= 4096 + 2 * 1024, "peak {peak}");
    assert_eq!(s.j.stats().fulls, 0);
    s.restart();
    assert_eq!(s.j.live(), 1);
    assert_eq!(s.j.get(kept).expect("live").entry, &long);
}

#[test]
fn a_handed_record_copied_forward_stays_handed() {
    let mut s = Slot::new(small());
    let b = s.put(&Entry::Batch(batch(7, 50, 0)));
    s.handed(b);
    for n in 0..500u64 {
        let k = s.put(&entry(n, 60));
        s.end(k);
    }
    assert!(s.j.stats().copies_forward > 0);
    s.restart();
    assert!(s.j.get(b).expect("live").handed);
    assert!(matches!(
        s.j.classify(UnixMillis(0), DEFAULT_HORIZON).batches[..],
        [RecoveredBatch::UnknownOutcome { key, .. }] if key == b
    ));
}

#[test]
fn a_batchs_record_is_written_from_the_batchs_own_bytes_and_reads_back_as_its_encoding() {
    let mut j = ClientJournal::new(small());
    let record = batch(7, 300, 42);
    let shared = record.batch.clone();
    let w = j.put(&Entry::Batch(record.clone()), 0).expect("room");
    let body = w
        .ops
        .iter()
        .find(|op| matches!(op, FileOp::WriteParts { .. }))
        .expect("the record's body in parts");
    let FileOp::WriteParts { parts, .. } = body else {
        unreachable!()
    };
    // The batch part is the batch's own bytes, not a copy.
    assert!(
        parts
            .iter()
            .any(|p| p.as_ptr() == shared.as_ptr() && p.len() == shared.len()),
        "{:?}",
        parts.iter().map(|p| p.len()).collect::<Vec<_>>()
    );
    // Its bytes are the length, then the record's one-buffer encoding.
    let encoded = encode_record(&Record::Put {
        key: w.key,
        handed: false,
        entry: Entry::Batch(record.clone()),
    })
    .expect("encodes");
    let written = body.written().expect("a write");
    assert_eq!(written[..4], (encoded.len() as i32).to_le_bytes());
    assert_eq!(written[4..4 + encoded.len()], encoded[..]);
    assert!(written[4 + encoded.len()..].iter().all(|&b| b == 0));
    // Carried out and read back after a restart: the same entry.
    let mut dir = MemDir::new();
    dir.apply_all(&w.ops);
    let j2 = reopen(&mut dir, small());
    assert_eq!(
        j2.get(w.key).map(|l| l.entry.clone()),
        Some(Entry::Batch(record))
    );
}

#[test]
fn trim_frees_the_segments_of_ended_records() {
    let mut s = Slot::new(ClientJournalConfig::new(1024, 1 << 20));
    let keys: Vec<_> = (0..200).map(|n| s.put(&entry(n, 60))).collect();
    let filled = s.j.resident_bytes();
    assert!(filled > 10 * 1024, "{filled}");
    // Ending from the newest keeps the oldest live: nothing is freed.
    let (old, newer) = keys.split_at(1);
    for k in newer.iter().rev() {
        s.end(*k);
    }
    assert!(
        s.j.resident_bytes() >= filled,
        "nothing is freed while the oldest lives"
    );
    assert!(segment_count(&s.dir) > 1);
    s.end(old[0]);
    assert_eq!(s.j.resident_bytes(), 1024, "one segment stays open");
    // Beside it, one trimmed segment kept for the next, under a name that is not a
    // segment's: recovery leaves it out.
    assert_eq!(segment_count(&s.dir), 1);
    assert_eq!(s.j.spare_file(), Some(SPARE));
    assert_eq!(s.dir.get(SPARE).map(<[u8]>::len), Some(1024));
}

/// A slot without syncs whose 40 puts filled segments, all ended but the last: its first
/// segments are trimmed and one kept as the spare, named here.
fn with_a_spare() -> (Slot, String) {
    let mut s = Slot::new(ClientJournalConfig::new(1024, 1 << 20));
    let keys: Vec<_> = (0..40).map(|n| s.put(&entry(n, 60))).collect();
    for k in &keys[..39] {
        s.end(*k);
    }
    let spare = s.j.spare_file().expect("a spare").to_owned();
    (s, spare)
}

#[test]
fn without_syncs_the_next_segment_is_the_trimmed_one_renamed_and_recovery_sees_the_same_records() {
    let (mut s, spare) = with_a_spare();
    let before: Vec<String> = s.dir.names().map(str::to_owned).collect();
    // Puts until a segment opens: it is the spare, renamed.
    let mut opened = None;
    for n in 40..80 {
        let w = s.j.put(&entry(n, 60), 0).expect("room");
        let renamed = w
            .ops
            .iter()
            .any(|op| matches!(op, FileOp::Rename { from, .. } if *from == spare));
        s.dir.apply_all(&w.ops);
        if renamed {
            opened = Some(n);
            break;
        }
    }
    assert!(opened.is_some(), "a segment opened from the spare");
    assert!(s.dir.get(&spare).is_none());
    assert!(
        s.dir.names().count() <= before.len(),
        "no file more than before"
    );
    let live = live_set(&s.j);
    s.restart();
    assert_eq!(live_set(&s.j), live);
    assert_eq!(s.j.live(), 1 + 40usize.min(opened.unwrap() as usize - 39));
}

#[test]
fn with_syncs_trimmed_segments_are_unlinked_not_kept() {
    for sync in [
        SyncPolicy::EveryRecord,
        SyncPolicy::Periodic {
            interval_millis: 10,
        },
    ] {
        let mut s = Slot::new(ClientJournalConfig::new(1024, 1 << 20).with_sync(sync));
        let keys: Vec<_> = (0..40).map(|n| s.put(&entry(n, 60))).collect();
        for k in &keys {
            s.end(*k);
        }
        assert_eq!(s.j.spare_file(), None, "{sync:?}");
        assert!(s.dir.get(SPARE).is_none(), "{sync:?}");
        assert_eq!(
            segment_count(&s.dir),
            s.j.segment_files().count(),
            "{sync:?}"
        );
    }
}

#[test]
fn a_spare_left_by_a_crash_is_removed_when_the_slot_opens() {
    let (mut s, spare) = with_a_spare();
    s.restart();
    assert!(
        s.dir.get(&spare).is_none(),
        "the spare is gone after the restart"
    );
    assert_eq!(s.j.live(), 1);
    assert_eq!(segment_count(&s.dir), s.j.segment_files().count());
}

#[test]
fn trim_keeps_the_segment_whose_last_frame_is_still_live() {
    let mut s = Slot::new(ClientJournalConfig::new(1024, 1 << 20));
    let x = s.put(&Entry::Batch(batch(1, 10, 0)));
    // A batch that fills the rest of the first segment, so it is that segment's last frame.
    let used =
        s.j.locate(0)
            .map(|at| at.offset + u64::from(at.len))
            .expect("x");
    let overhead = encode_record(&Record::Put {
        key: JournalKey(1),
        handed: false,
        entry: Entry::Batch(batch(2, 0, 0)),
    })
    .expect("encodes")
    .len() as u64;
    let fill = 1024 - used - FRAME_HEADER_LEN as u64 - overhead;
    let a_entry = Entry::Batch(batch(2, fill as usize, 0));
    let w = s.j.put(&a_entry, 0).expect("taken");
    s.dir.apply_all(&w.ops);
    let first = s.j.segment_files().next().expect("a segment").to_owned();
    assert_eq!(s.j.locate(w.fsn).expect("a").file, first);
    let a = w.key;
    let b = s.put(&Entry::Batch(batch(3, 10, 0)));
    assert_ne!(s.j.locate(2).expect("b").file, first, "b opened a segment");
    // Ending the first frame trims to just below the live one: its segment stays.
    s.end(x);
    assert_eq!(s.j.segment_files().next(), Some(first.as_str()));
    s.restart();
    assert_eq!(s.j.get(a).expect("live").entry, &a_entry);
    assert!(s.j.get(b).is_some());
}

#[test]
fn an_end_or_handed_whose_put_was_trimmed_is_ignored_on_recovery() {
    let config = small();
    let mut ring = Ring::new(RingConfig {
        segment_bytes: 1024,
        max_total_bytes: 8192,
        append_deadline_millis: 0,
    });
    let mut dir = MemDir::new();
    for r in [
        Record::End { key: JournalKey(7) },
        Record::Handed { key: JournalKey(9) },
        Record::Put {
            key: JournalKey(3),
            handed: false,
            entry: entry(3, 10),
        },
    ] {
        let a = ring
            .append(&encode_record(&r).expect("encodes"), 0)
            .expect("appended");
        dir.apply_all(&a.ops);
    }
    let j = reopen(&mut dir, config);
    assert_eq!(j.live(), 1);
    assert!(j.get(JournalKey(3)).is_some());
    assert_eq!(j.next_key(), JournalKey(10));
}

#[test]
fn a_frame_that_passes_its_crc_but_is_no_record_is_a_typed_error_naming_its_fsn() {
    let mut ring = Ring::new(RingConfig {
        segment_bytes: 1024,
        max_total_bytes: 8192,
        append_deadline_millis: 0,
    });
    let mut dir = MemDir::new();
    let good = encode_record(&Record::End { key: JournalKey(1) }).expect("encodes");
    for payload in [&good[..], &[1, 9, 0, 0, 0, 0, 0, 0, 0, 0][..]] {
        let a = ring.append(payload, 0).expect("appended");
        dir.apply_all(&a.ops);
    }
    match ClientJournal::recover(small(), &slot_files(&dir)) {
        Err(JournalError::Corrupt { fsn, why }) => {
            assert_eq!(fsn, 1);
            assert_eq!(why, DecodeError::Kind(9));
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn the_last_frame_torn_is_absent_and_everything_before_it_is_present() {
    for cut in 0..40 {
        let mut s = Slot::new(small());
        let a = s.put(&entry(1, 30));
        let before = live_set(&s.j);
        let w = s.j.put(&entry(2, 30), 0).expect("taken");
        let at = s.j.locate(w.fsn).expect("located");
        s.dir.apply_all(&w.ops);
        // Tear the frame: keep `cut` bytes of it and put other bytes in place of the rest
        // (a write cut short over stale bytes). The checksum is written last, so a cut inside
        // the first four bytes leaves the body written and the checksum wrong.
        let start = at.offset - FRAME_HEADER_LEN as u64;
        let len = u64::from(at.len) + FRAME_HEADER_LEN as u64;
        let keep = (cut as u64 * len / 40).min(len - 1);
        let (from, to) = if keep < 4 {
            (start, start + 4)
        } else {
            (start + keep, start + len)
        };
        let bytes = s.dir.get_mut(&at.file).expect("the segment");
        for b in &mut bytes[from as usize..to as usize] {
            *b = !*b;
        }
        s.restart();
        assert_eq!(live_set(&s.j), before, "cut {cut}");
        assert!(s.j.get(a).is_some());
    }
}

#[test]
fn every_record_policy_syncs_what_each_call_wrote() {
    let mut s = Slot::new(small().with_sync(SyncPolicy::EveryRecord));
    let w = s.j.put(&entry(1, 20), 0).expect("taken");
    let at = s.j.locate(w.fsn).expect("located");
    assert!(syncs(&w.ops, &at.file), "{:?}", w.ops);
    assert!(
        w.ops.contains(&FileOp::SyncDir),
        "a new segment syncs the directory"
    );
    let last_write = w
        .ops
        .iter()
        .rposition(|op| matches!(op, FileOp::Write { .. } | FileOp::WriteParts { .. }))
        .expect("writes");
    let first_sync = w
        .ops
        .iter()
        .position(|op| matches!(op, FileOp::Sync { .. }))
        .expect("syncs");
    assert!(first_sync > last_write, "syncs come after the writes");
    s.dir.apply_all(&w.ops);
    let w = s.j.handed(w.key, 0).expect("taken");
    assert!(syncs(&w.ops, &at.file));
    let w = s.j.end(w.key, 0).expect("taken");
    assert!(syncs(&w.ops, &at.file));
    // Without the policy, nothing is synced.
    let mut s = Slot::new(small());
    let w = s.j.put(&entry(1, 20), 0).expect("taken");
    assert!(!w
        .ops
        .iter()
        .any(|op| matches!(op, FileOp::Sync { .. } | FileOp::SyncDir)));
}

#[test]
fn every_record_policy_syncs_copies_forward_before_the_trim_removes_their_originals() {
    let mut s = Slot::new(small().with_sync(SyncPolicy::EveryRecord));
    s.put(&Entry::Command(command(1, 0)));
    let mut checked = 0;
    for n in 0..400 {
        let put = s.j.put(&entry(n, 60), 0).expect("taken");
        s.dir.apply_all(&put.ops);
        let end = s.j.end(put.key, 0).expect("taken");
        s.dir.apply_all(&end.ops);
        for ops in [&put.ops, &end.ops] {
            let Some(unlink) = ops.iter().position(|o| matches!(o, FileOp::Unlink { .. })) else {
                continue;
            };
            let removed: Vec<&str> = ops
                .iter()
                .filter_map(|o| match o {
                    FileOp::Unlink { file } => Some(file.as_str()),
                    _ => None,
                })
                .collect();
            for (i, op) in ops[..unlink].iter().enumerate() {
                if let FileOp::Write { file, .. } | FileOp::WriteParts { file, .. } = op {
                    if removed.contains(&file.as_str()) {
                        continue;
                    }
                    assert!(
                        ops[i..unlink]
                            .iter()
                            .any(|o| matches!(o, FileOp::Sync { file: f } if f == file)),
                        "write to {file} not synced before the unlink: {ops:?}"
                    );
                }
            }
            assert!(
                ops[unlink..].contains(&FileOp::SyncDir),
                "the unlink is synced"
            );
            checked += 1;
        }
    }
    assert!(checked > 0 && s.j.stats().copies_forward > 0);
    s.restart();
    assert_eq!(s.j.live(), 1);
}

#[test]
fn periodic_policy_checkpoints_at_its_interval() {
    let mut j = ClientJournal::new(small().with_sync(SyncPolicy::Periodic {
        interval_millis: 100,
    }));
    let w = j.put(&entry(1, 20), 1_000).expect("taken");
    assert!(!w.ops.iter().any(|op| matches!(op, FileOp::Sync { .. })));
    assert!(j.poll_checkpoint(1_099).is_empty());
    let ops = j.poll_checkpoint(1_100);
    assert!(ops.contains(&FileOp::SyncDir), "{ops:?}");
}

fn at_horizon(created: u64, now: u64) -> (RecoveredCommand, RecoveredTransfer) {
    let mut s = Slot::new(small());
    s.put(&Entry::Command(command(1, created)));
    s.put(&Entry::Transfer(transfer(2, created)));
    s.restart();
    let list = s.j.classify(UnixMillis(now), Duration::from_secs(600));
    (list.commands[0].clone(), list.transfers[0].clone())
}

#[test]
fn a_command_one_millisecond_inside_the_horizon_is_repeatable() {
    let (c, t) = at_horizon(1_000, 1_000 + 600_000 - 1);
    assert!(matches!(c, RecoveredCommand::Repeatable { .. }), "{c:?}");
    assert!(matches!(t, RecoveredTransfer::Repeatable { .. }), "{t:?}");
}

#[test]
fn a_command_exactly_at_the_horizon_is_expired_naming_its_reference() {
    let (c, t) = at_horizon(1_000, 1_000 + 600_000);
    match c {
        RecoveredCommand::Expired {
            reference,
            created_wall,
            ..
        } => {
            assert_eq!(reference, command(1, 0).reference);
            assert_eq!(created_wall, UnixMillis(1_000));
        }
        other => panic!("expected Expired, got {other:?}"),
    }
    assert!(
        matches!(&t, RecoveredTransfer::Expired { reference, .. } if reference == "up-2"),
        "{t:?}"
    );
}

#[test]
fn a_creation_time_in_the_future_counts_as_age_zero() {
    let (c, t) = at_horizon(5_000_000, 1_000);
    assert!(matches!(c, RecoveredCommand::Repeatable { .. }));
    assert!(matches!(t, RecoveredTransfer::Repeatable { .. }));
}

#[test]
fn the_default_horizon_is_ten_minutes() {
    assert_eq!(DEFAULT_HORIZON, Duration::from_secs(600));
}

#[test]
fn batches_are_unsent_unless_handed_and_handed_ones_are_of_unknown_outcome() {
    let mut s = Slot::new(small());
    let a = s.put(&Entry::Batch(batch(1, 10, 7)));
    let b = s.put(&Entry::Batch(batch(2, 10, 8)));
    s.handed(b);
    s.restart();
    let list = s.j.classify(UnixMillis(0), DEFAULT_HORIZON);
    assert_eq!(
        list.batches,
        vec![
            RecoveredBatch::Unsent {
                key: a,
                record: batch(1, 10, 7)
            },
            RecoveredBatch::UnknownOutcome {
                key: b,
                domain: "dom2".into(),
                ingestor: "ing2".into(),
                created_wall: UnixMillis(8),
            },
        ]
    );
}

#[test]
fn the_recovery_list_is_in_the_order_entries_were_put_even_after_copies_forward() {
    let mut s = Slot::new(small());
    let mut kept = Vec::new();
    for n in 0..3u64 {
        kept.push(s.put(&Entry::Batch(batch(n, 20, n))));
        kept.push(s.put(&Entry::Command(command(n, n))));
        for m in 0..100 {
            let k = s.put(&entry(1000 + m, 50));
            s.end(k);
        }
    }
    // Hand the first batch late, so its newest record is the latest of all.
    s.handed(kept[0]);
    assert!(s.j.stats().copies_forward > 0);
    s.restart();
    let list = s.j.classify(UnixMillis(0), DEFAULT_HORIZON);
    let batches: Vec<_> = list
        .batches
        .iter()
        .map(|b| match b {
            RecoveredBatch::Unsent { key, .. } | RecoveredBatch::UnknownOutcome { key, .. } => *key,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(batches, vec![kept[0], kept[2], kept[4]]);
    let commands: Vec<_> =
        list.commands
            .iter()
            .map(|c| match c {
                RecoveredCommand::Repeatable { key, .. }
                | RecoveredCommand::Expired { key, .. } => *key,
                _ => unreachable!(),
            })
            .collect();
    assert_eq!(commands, vec![kept[1], kept[3], kept[5]]);
}

#[test]
fn a_retained_command_round_trips_through_its_record() {
    let c = command(6, 42);
    let retained = c.to_retained(Timestamp::from_nanos(77));
    assert_eq!(retained.created, Timestamp::from_nanos(77));
    assert_eq!(
        nervix_journal::CommandRecord::from_retained(&retained, UnixMillis(42)),
        c
    );
}

/// A command record recovered after a restart.
fn restarted_command(c: nervix_journal::CommandRecord) -> nervix_journal::CommandRecord {
    let mut s = Slot::new(small());
    // Something before and after it, and enough churn that it is copied forward.
    let before = s.put(&entry(5, 30));
    let k = s.put(&Entry::Command(c));
    for n in 0..300 {
        let x = s.put(&entry(n, 50));
        s.end(x);
    }
    s.end(before);
    assert!(s.j.stats().copies_forward > 0);
    s.restart();
    match s.j.get(k).expect("live").entry {
        Entry::Command(c) => c.clone(),
        other => panic!("not a command: {other:?}"),
    }
}

#[test]
fn e_2_the_journal_keeps_the_reference_unchanged_across_a_restart() {
    let c = command(8, 1);
    assert_eq!(restarted_command(c.clone()).reference, c.reference);
}

#[test]
fn e_2_the_journal_keeps_the_exact_query_text_across_a_restart() {
    let mut c = command(8, 1);
    c.query = "SELECT 'a\u{0}b', \"x\"\n  -- comment ü\r\n".into();
    assert_eq!(restarted_command(c.clone()).query, c.query);
    c.query = String::new();
    assert_eq!(restarted_command(c.clone()).query, "");
}

#[test]
fn e_2_the_journal_keeps_the_domain_across_a_restart() {
    let mut c = command(8, 1);
    c.domain = Some("sales.eu".into());
    assert_eq!(restarted_command(c.clone()).domain, c.domain);
    c.domain = Some(String::new());
    assert_eq!(restarted_command(c.clone()).domain, Some(String::new()));
    c.domain = None;
    assert_eq!(restarted_command(c.clone()).domain, None);
}

#[test]
fn e_2_the_journal_keeps_the_expected_position_across_a_restart() {
    let mut c = command(8, 1);
    for p in [Some(0), Some(u64::MAX), Some(12345), None] {
        c.position = p;
        assert_eq!(restarted_command(c.clone()).position, p);
    }
}

#[test]
fn e_2_the_journal_keeps_the_expected_preview_across_a_restart() {
    let mut c = command(8, 1);
    assert!(c.preview.is_some());
    assert_eq!(restarted_command(c.clone()).preview, c.preview);
    if let Some(p) = c.preview.as_mut() {
        p.planning_basis.bytes.clear();
        p.transaction_id.clear();
    }
    assert_eq!(restarted_command(c.clone()).preview, c.preview);
    c.preview = None;
    assert_eq!(restarted_command(c.clone()).preview, None);
}

#[test]
fn every_entry_round_trips_through_the_codec() {
    for n in 0..12 {
        for handed in [false, true] {
            let r = Record::Put {
                key: JournalKey(n * 1_000_003),
                handed,
                entry: entry(n, n as usize * 3),
            };
            let bytes = encode_record(&r).expect("encodes");
            assert_eq!(decode_record(&bytes), Ok(r));
        }
    }
    // A command held behind a BEGIN keeps its kind: it is never repeated after a restart.
    for n in [0, 3, 6] {
        let Entry::Command(c) = entry(n, 0) else {
            unreachable!("a command")
        };
        let r = Record::Put {
            key: JournalKey(n),
            handed: false,
            entry: Entry::HeldCommand(c),
        };
        assert_eq!(decode_record(&encode_record(&r).expect("encodes")), Ok(r));
    }
    for r in [
        Record::Handed {
            key: JournalKey(u64::MAX),
        },
        Record::End { key: JournalKey(0) },
    ] {
        assert_eq!(decode_record(&encode_record(&r).expect("encodes")), Ok(r));
    }
}

#[test]
fn decoding_names_what_is_wrong() {
    let good = encode_record(&Record::Put {
        key: JournalKey(1),
        handed: true,
        entry: entry(0, 0),
    })
    .expect("encodes");
    assert_eq!(
        decode_record(&[]),
        Err(DecodeError::Truncated { at: 0, need: 1 })
    );
    let mut v = good.clone();
    v[0] = 2;
    assert_eq!(decode_record(&v), Err(DecodeError::Version(2)));
    let mut v = good.clone();
    v[10] = 2;
    assert_eq!(
        decode_record(&v),
        Err(DecodeError::Flag { at: 10, byte: 2 })
    );
    let mut v = good.clone();
    v[11] = 9;
    assert_eq!(decode_record(&v), Err(DecodeError::EntryTag(9)));
    let mut v = good.clone();
    v.push(0);
    assert_eq!(
        decode_record(&v),
        Err(DecodeError::Trailing {
            at: good.len(),
            len: 1
        })
    );
    for cut in 0..good.len() {
        assert!(
            matches!(
                decode_record(&good[..cut]),
                Err(DecodeError::Truncated { .. })
            ),
            "cut {cut}"
        );
    }
    // A reference outside E-1's alphabet is refused.
    let mut v = good.clone();
    v[16] = b' ';
    assert!(matches!(decode_record(&v), Err(DecodeError::Reference(_))));
}

#[derive(Debug, Clone)]
enum Op {
    Put(u64, usize),
    Handed(usize),
    End(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u64>(), 0usize..400).prop_map(|(n, len)| Op::Put(n, len)),
        1 => any::<usize>().prop_map(Op::Handed),
        2 => any::<usize>().prop_map(Op::End),
    ]
}

/// Runs one operation on the journal and the model; the operations it asks for, and the
/// place of its own record's checksum among them (None when refused).
fn run(j: &mut ClientJournal, model: &mut LiveSet, op: &Op) -> (Vec<FileOp>, Option<usize>) {
    let keys: Vec<JournalKey> = model.keys().copied().collect();
    let pick = |i: usize| (!keys.is_empty()).then(|| keys[i % keys.len()]);
    let result = match op {
        Op::Put(n, len) => {
            let e = entry(*n, *len);
            let r = j.put(&e, 0);
            if let Ok(w) = &r {
                model.insert(w.key, (false, e));
            }
            r
        }
        Op::Handed(i) => {
            let Some(k) = pick(*i) else {
                return (Vec::new(), None);
            };
            let r = j.handed(k, 0);
            if r.is_ok() {
                model.get_mut(&k).expect("live").0 = true;
            }
            r
        }
        Op::End(i) => {
            let Some(k) = pick(*i) else {
                return (Vec::new(), None);
            };
            let r = j.end(k, 0);
            if r.is_ok() {
                model.remove(&k);
            }
            r
        }
    };
    match result {
        Ok(w) => {
            let at = j.locate(w.fsn).expect("the new record is in the ring");
            let start = at.offset - FRAME_HEADER_LEN as u64;
            let sum = w.ops.iter().position(|o| {
                matches!(o, FileOp::Write { file, offset, bytes } if *file == at.file && *offset == start && bytes.len() == 4)
            });
            (w.ops, sum)
        }
        Err(JournalError::Full { .. }) => (Vec::new(), None),
        Err(e) => panic!("unexpected refusal: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After any sequence, a crash anywhere inside the last call's writes (a frame write cut
    /// at any byte) recovers the live set as it was before that call, or after it once its
    /// record's checksum was written.
    #[test]
    fn recovery_equals_the_live_set_after_any_sequence_and_any_crash(
        ops in proptest::collection::vec(op(), 1..120),
        cut in any::<prop::sample::Index>(),
        keep in any::<prop::sample::Index>(),
        torn in any::<bool>(),
    ) {
        let config = ClientJournalConfig::new(1024, 4096);
        let mut j = ClientJournal::new(config);
        let mut dir = MemDir::new();
        let mut model = LiveSet::new();
        let (last, head) = ops.split_last().expect("one at least");
        for op in head {
            let (file_ops, _) = run(&mut j, &mut model, op);
            dir.apply_all(&file_ops);
            prop_assert_eq!(&live_set(&j), &model);
        }
        let before = model.clone();
        let (file_ops, sum) = run(&mut j, &mut model, last);
        let after = model.clone();
        let c = if torn { cut.index(file_ops.len() + 1) } else { file_ops.len() };
        dir.apply_all(&file_ops[..c]);
        match file_ops.get(c) {
            Some(FileOp::Write { file, offset, bytes })
                if *offset != 0 && sf_journal::slot::parse_segment_name(file).is_some() =>
            {
                let k = keep.index(bytes.len());
                dir.write(file, *offset, &bytes[..k]);
            }
            // A batch's record written in parts, cut at any byte.
            Some(op @ FileOp::WriteParts { file, offset, .. })
                if *offset != 0 && sf_journal::slot::parse_segment_name(file).is_some() =>
            {
                let bytes = op.written().expect("a write");
                let k = keep.index(bytes.len());
                dir.write(file, *offset, &bytes[..k]);
            }
            // A trimmed segment zeroed for reuse, cut at any byte after its header.
            Some(FileOp::Zero { file, offset, len }) if *offset != 0 => {
                let k = keep.index(usize::try_from(*len).expect("small"));
                dir.write(file, *offset, &vec![0; k]);
            }
            _ => {}
        }
        // A checksum cut short is still whole when the bytes it did not write already held
        // what it would have written (a zeroed slot and a checksum ending in zero bytes): the
        // record on disk is then the whole record, and recovery rightly keeps it.
        let sum_whole = sum.is_some_and(|s| s < c)
            || sum.filter(|s| *s == c).is_some_and(|s| match &file_ops[s] {
                FileOp::Write { file, offset, bytes } => dir.get(file).is_some_and(|d| {
                    let at = usize::try_from(*offset).expect("small");
                    d.get(at..at + bytes.len()) == Some(&bytes[..])
                }),
                _ => false,
            });
        let expected = if sum_whole { after } else { before };
        let j2 = reopen(&mut dir, config);
        prop_assert_eq!(&live_set(&j2), &expected);
        prop_assert!(expected.keys().all(|k| *k < j2.next_key()));
        // The recovered journal goes on working, and a second restart finds the same.
        let mut j2 = j2;
        let w = j2.put(&entry(1, 10), 0);
        if let Ok(w) = w {
            dir.apply_all(&w.ops);
        }
        let j3 = reopen(&mut dir, config);
        prop_assert_eq!(live_set(&j3), live_set(&j2));
    }

    /// Any bytes: a record or a typed error, never a panic.
    #[test]
    fn decoding_any_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_record(&bytes);
    }

    /// A valid record with bytes flipped or cut: a record or a typed error, never a panic.
    #[test]
    fn decoding_a_damaged_record_never_panics(
        n in any::<u64>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = encode_record(&Record::Put { key: JournalKey(n), handed: n.is_multiple_of(2), entry: entry(n, (n % 50) as usize) }).expect("encodes");
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] ^= b;
        }
        let c = cut.index(bytes.len() + 1);
        let _ = decode_record(&bytes[..c]);
    }

    /// Frames of random bytes that pass their CRC: recovery is a journal or a typed error.
    #[test]
    fn recovering_frames_of_random_bytes_never_panics(
        frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..60), 1..8),
    ) {
        let mut ring = Ring::new(RingConfig { segment_bytes: 1024, max_total_bytes: 1 << 20, append_deadline_millis: 0 });
        let mut dir = MemDir::new();
        for f in &frames {
            let a = ring.append(f, 0).expect("appended");
            dir.apply_all(&a.ops);
        }
        match ClientJournal::recover(small(), &slot_files(&dir)) {
            Ok(_) | Err(JournalError::Corrupt { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected {e}"),
        }
    }
}

/// A slot holding a released batch `b` behind `n` short-lived records put and ended after it.
fn released_behind(n: u64) -> (Slot, JournalKey, Entry) {
    let mut s = Slot::new(small());
    let e = Entry::Batch(batch(7, 50, 3));
    let b = s.put(&e);
    assert!(s.j.release_batch(b));
    for i in 0..n {
        let k = s.put(&entry(i * 3, 60));
        s.end(k);
    }
    (s, b, e)
}

#[test]
fn p_8_a_released_batch_keeps_its_record_whole_and_lets_go_of_its_bytes() {
    let mut s = Slot::new(small());
    let e = Entry::Batch(batch(7, 50, 3));
    let Entry::Batch(record) = &e else {
        unreachable!()
    };
    let b = s.put(&e);
    let c = s.put(&Entry::Command(command(1, 2)));
    // Only a live batch holding its bytes is released, once.
    assert!(!s.j.release_batch(c), "a command");
    assert!(!s.j.release_batch(JournalKey(99)), "no such key");
    assert!(s.j.release_batch(b));
    assert!(!s.j.release_batch(b), "released already");
    let live = s.j.get(b).expect("still live");
    assert!(live.released);
    assert!(matches!(live.entry, Entry::Batch(r) if r.batch.is_empty()));
    assert!(!s.j.get(c).expect("live").released);
    // The record on disk is whole: a restart finds the batch with its bytes.
    s.restart();
    let back = s.j.get(b).expect("recovered");
    assert!(!back.released);
    assert_eq!(back.entry, &e);
    assert!(matches!(
        &s.j.classify(UnixMillis(0), DEFAULT_HORIZON).batches[..],
        [RecoveredBatch::Unsent { key, record: r }] if *key == b && r == record
    ));
}

#[test]
fn p_8_a_released_batch_is_attached_only_to_bytes_of_its_length() {
    let mut s = Slot::new(small());
    let e = Entry::Batch(batch(7, 50, 3));
    let Entry::Batch(record) = &e else {
        unreachable!()
    };
    let b = s.put(&e);
    assert!(
        !s.j.attach_batch(b, record.batch.clone()),
        "not released: nothing to attach"
    );
    assert!(s.j.release_batch(b));
    assert!(!s.j.attach_batch(b, record.batch.slice(1..)), "shorter");
    let mut longer = record.batch.to_vec();
    longer.push(0);
    assert!(!s.j.attach_batch(b, longer.into()), "longer");
    assert!(s.j.get(b).expect("live").released);
    assert!(!s.j.attach_batch(JournalKey(99), record.batch.clone()));
    assert!(s.j.attach_batch(b, record.batch.clone()));
    let live = s.j.get(b).expect("live");
    assert!(!live.released);
    assert_eq!(live.entry, &e);
    assert!(
        !s.j.attach_batch(b, record.batch.clone()),
        "attached already"
    );
    // An ended batch is neither released nor attached.
    s.end(b);
    assert!(!s.j.release_batch(b));
}

#[test]
fn p_8_a_released_batch_pins_its_segment_until_attached_then_is_copied_forward_whole() {
    let (mut s, b, e) = released_behind(20);
    assert!(
        s.j.resident_bytes() > 4096 / 2,
        "past half: copies would be due"
    );
    assert_eq!(
        s.j.stats().copies_forward,
        0,
        "a released batch is not copied"
    );
    let first = s.j.segment_files().next().map(str::to_owned);
    assert_eq!(
        s.j.locate(s.j.get(b).expect("live").fsn).map(|l| l.file),
        first,
        "it still pins the oldest segment"
    );
    let Entry::Batch(record) = &e else {
        unreachable!()
    };
    assert!(s.j.attach_batch(b, record.batch.clone()));
    for i in 0..40u64 {
        let k = s.put(&entry(i * 3, 60));
        s.end(k);
    }
    assert!(s.j.stats().copies_forward > 0, "{:?}", s.j.stats());
    assert_ne!(
        s.j.locate(s.j.get(b).expect("live").fsn).map(|l| l.file),
        first,
        "moved on"
    );
    s.restart();
    assert_eq!(s.j.get(b).expect("recovered").entry, &e);
}

#[test]
fn p_8_a_released_batch_never_copied_forward_fills_the_journal_and_its_end_frees_it() {
    let (mut s, b, _) = released_behind(0);
    // Commands come and go behind it; the ring cannot move it, so it fills up and refuses.
    let mut refused = false;
    for i in 0..400u64 {
        match s.j.put(&entry(i * 3, 60), 0) {
            Ok(w) => {
                s.dir.apply_all(&w.ops);
                let w = s.j.end(w.key, 0).expect("end");
                s.dir.apply_all(&w.ops);
            }
            Err(JournalError::Full { .. }) => {
                refused = true;
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(refused, "its segment stays, so the ring fills");
    assert_eq!(s.j.stats().copies_forward, 0);
    // Its end frees everything behind it.
    s.end(b);
    let w = s.j.put(&entry(0, 60), 0).expect("room again");
    s.dir.apply_all(&w.ops);
}
