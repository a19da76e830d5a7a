//! The client journal on disk: a slot of real files in a temporary directory.

#![cfg(feature = "journal")]

use std::path::PathBuf;
use std::time::Duration;

use nervix_driver_support::journal::{
    BatchRecord, CommandRecord, DurableJournal, Entry, JournalConfig, JournalDurability,
    JournalError, JournalLink, RecoveredBatch, RecoveredCommand, RecoveredTransfer, TransferKind,
    TransferRecord,
};
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::time::UnixMillis;

/// A directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!(
            "nervix-journal-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("a temporary directory");
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn command(n: u64, created: u64) -> CommandRecord {
    CommandRecord {
        reference: ExecutionReference::parse(&format!("0190a1b2-0000-7000-8000-00000000000{n}"))
            .expect("a reference"),
        query: format!("INSERT INTO t VALUES ({n})"),
        domain: Some("d".into()),
        position: Some(n),
        preview: None,
        created_wall: UnixMillis(created),
    }
}

fn batch(n: u8, len: usize) -> BatchRecord {
    BatchRecord {
        domain: "d".into(),
        ingestor: format!("ing{n}"),
        batch: vec![n; len].into(),
        created_wall: UnixMillis(5),
    }
}

const NOW: UnixMillis = UnixMillis(1_000_000);

#[test]
fn a_record_put_survives_a_drop_without_close_and_a_reopen() {
    let tmp = TempDir::new("reopen");
    let config = JournalConfig::new(&tmp.0, "client-a");
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("opens");
    assert!(list.is_empty());
    assert_eq!(j.slot_dir(), tmp.0.join("client-a"));
    let c = command(1, NOW.0 - 1_000);
    let key = j.put(&Entry::Command(c.clone()), 0).expect("put");
    let t = TransferRecord {
        kind: TransferKind::Upload {
            domain: "d".into(),
            resource: "r".into(),
        },
        reference: "up-1".into(),
        archive: "/tmp/a.tar".into(),
        size: 9,
        digest: [3; 32],
        created_wall: UnixMillis(NOW.0 - 2_000),
    };
    let tk = j.put(&Entry::Transfer(t.clone()), 0).expect("put");
    assert_eq!(j.live(), 2);
    drop(j);
    let (j, list) = DurableJournal::open(&config, NOW).expect("reopens");
    assert_eq!(
        list.commands,
        vec![RecoveredCommand::Repeatable { key, record: c }]
    );
    assert_eq!(
        list.transfers,
        vec![nervix_driver_support::journal::RecoveredTransfer::Repeatable { key: tk, record: t }]
    );
    assert_eq!(j.live(), 2, "what came back stays live until ended");
}

#[test]
fn a_default_journal_on_disk_takes_the_largest_batch_a_producer_submits() {
    use nervix_protocol::client::SUBMIT_OVERHEAD;
    use nervix_protocol::limits::FRAME_LIMIT;
    let tmp = TempDir::new("largest");
    let config = JournalConfig::new(&tmp.0, "client-a");
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    let b = batch(7, FRAME_LIMIT - SUBMIT_OVERHEAD);
    let key = j
        .put(&Entry::Batch(b.clone()), 0)
        .expect("the largest batch is journaled");
    drop(j);
    let (_, list) = DurableJournal::open(&config, NOW).expect("reopens");
    assert_eq!(
        list.batches,
        vec![RecoveredBatch::Unsent { key, record: b }]
    );
}

#[test]
fn a_second_open_of_a_held_slot_is_refused_naming_this_process() {
    let tmp = TempDir::new("held");
    let config = JournalConfig::new(&tmp.0, "client-b");
    let (first, _) = DurableJournal::open(&config, NOW).expect("opens");
    match DurableJournal::open(&config, NOW) {
        Err(JournalError::Held { slot, pid }) => {
            assert_eq!(slot, tmp.0.join("client-b"));
            assert_eq!(pid, Some(std::process::id()));
        }
        other => panic!("expected Held, got {other:?}"),
    }
    // Another sender's slot in the same directory is its own.
    let other = JournalConfig::new(&tmp.0, "client-c");
    assert!(DurableJournal::open(&other, NOW).is_ok());
    drop(first);
    assert!(
        DurableJournal::open(&config, NOW).is_ok(),
        "released on drop"
    );
}

#[test]
fn a_sender_that_is_not_one_path_component_is_refused() {
    let tmp = TempDir::new("sender");
    for bad in ["", ".", "..", "a/b", "/abs", "a\\b", "a\0b"] {
        let config = JournalConfig::new(&tmp.0, bad);
        assert!(
            matches!(DurableJournal::open(&config, NOW), Err(JournalError::InvalidSender(s)) if s == bad),
            "{bad:?}"
        );
    }
}

#[test]
fn e_4_a_horizon_that_reaches_the_servers_retry_validity_is_refused_and_nothing_is_opened() {
    use nervix_driver_support::journal::SERVER_RETRY_VALIDITY;
    let tmp = TempDir::new("horizon");
    let mut config = JournalConfig::new(&tmp.0, "client-a");
    config.horizon = SERVER_RETRY_VALIDITY;
    assert!(matches!(
        DurableJournal::open(&config, NOW),
        Err(JournalError::InvalidHorizon { horizon, validity })
            if horizon == SERVER_RETRY_VALIDITY && validity == SERVER_RETRY_VALIDITY
    ));
    assert!(!tmp.0.join("client-a").exists(), "nothing opened");
    // Just below it is taken.
    config.horizon = SERVER_RETRY_VALIDITY - Duration::from_millis(1);
    assert!(DurableJournal::open(&config, NOW).is_ok());
}

#[test]
fn every_record_durability_syncs_before_each_call_returns() {
    let tmp = TempDir::new("sync");
    let mut config = JournalConfig::new(&tmp.0, "s");
    config.durability = JournalDurability::EveryRecord;
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    let mut syncs = j.stats().file_syncs;
    let k = j.put(&Entry::Batch(batch(1, 10)), 0).expect("put");
    assert!(j.stats().file_syncs > syncs, "{:?}", j.stats());
    assert!(j.stats().dir_syncs > 0, "a new segment syncs the directory");
    syncs = j.stats().file_syncs;
    j.handed(k, 0).expect("handed");
    assert!(j.stats().file_syncs > syncs);
    syncs = j.stats().file_syncs;
    j.end(k, 0).expect("end");
    assert!(j.stats().file_syncs > syncs);
    // Without it, nothing is synced.
    let (mut j, _) = DurableJournal::open(&JournalConfig::new(&tmp.0, "n"), NOW).expect("opens");
    j.put(&Entry::Batch(batch(1, 10)), 0).expect("put");
    assert_eq!((j.stats().file_syncs, j.stats().dir_syncs), (0, 0));
}

#[test]
fn periodic_durability_syncs_at_its_interval() {
    let tmp = TempDir::new("periodic");
    let mut config = JournalConfig::new(&tmp.0, "p");
    config.durability = JournalDurability::Periodic(Duration::from_millis(100));
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    j.put(&Entry::Batch(batch(1, 10)), 1_000).expect("put");
    j.checkpoint(1_050).expect("checkpoint");
    assert_eq!(j.stats().file_syncs, 0);
    j.checkpoint(1_100).expect("checkpoint");
    assert!(j.stats().file_syncs > 0);
}

#[test]
fn a_full_journal_names_the_link_state_set_by_the_driver() {
    let tmp = TempDir::new("full");
    let mut config = JournalConfig::new(&tmp.0, "f");
    config.segment_bytes = 4096;
    config.capacity_bytes = 16384;
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    let e = Entry::Batch(batch(2, 1000));
    let mut n = 0;
    let err = loop {
        match j.put(&e, 0) {
            Ok(_) => n += 1,
            Err(err) => break err,
        }
        assert!(n < 1000, "never full");
    };
    assert!(
        matches!(err, JournalError::Full { link: JournalLink::Publishing, needed } if needed > 1000),
        "{err:?}"
    );
    j.set_link(false);
    assert!(matches!(
        j.put(&e, 0),
        Err(JournalError::Full {
            link: JournalLink::Reconnecting,
            ..
        })
    ));
    j.set_link(true);
    assert!(matches!(
        j.put(&e, 0),
        Err(JournalError::Full {
            link: JournalLink::Publishing,
            ..
        })
    ));
    assert_eq!(j.stats().fulls, 3);
    assert_eq!(j.live(), n);
}

#[test]
fn ending_everything_then_reopening_gives_an_empty_list() {
    let tmp = TempDir::new("empty");
    let mut config = JournalConfig::new(&tmp.0, "e");
    config.segment_bytes = 4096;
    config.capacity_bytes = 16384;
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    let mut keys = Vec::new();
    for n in 0..50u8 {
        keys.push(j.put(&Entry::Batch(batch(n, 200)), 0).expect("put"));
        if n % 3 == 0 {
            let k = keys.remove(0);
            j.end(k, 0).expect("end");
        }
    }
    for k in keys {
        j.end(k, 0).expect("end");
    }
    assert_eq!(j.live(), 0);
    assert!(j.stats().resident_bytes <= 4096, "{:?}", j.stats());
    drop(j);
    let (j, list) = DurableJournal::open(&config, NOW).expect("reopens");
    assert!(list.is_empty(), "{list:?}");
    assert_eq!(j.live(), 0);
}

#[test]
fn recovered_entries_stay_live_until_ended_and_batches_keep_their_handed_mark() {
    let tmp = TempDir::new("classify");
    let mut config = JournalConfig::new(&tmp.0, "c");
    config.horizon = Duration::from_secs(60);
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    let old = j
        .put(&Entry::Command(command(2, NOW.0 - 60_000)), 0)
        .expect("put");
    let sent = j.put(&Entry::Batch(batch(1, 10)), 0).expect("put");
    let unsent = j.put(&Entry::Batch(batch(2, 10)), 0).expect("put");
    j.handed(sent, 0).expect("handed");
    drop(j);
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("reopens");
    assert!(matches!(
        &list.commands[..],
        [RecoveredCommand::Expired { key, reference, .. }] if *key == old && *reference == command(2, 0).reference
    ));
    assert!(matches!(
        &list.batches[..],
        [RecoveredBatch::UnknownOutcome { key: a, .. }, RecoveredBatch::Unsent { key: b, .. }] if *a == sent && *b == unsent
    ));
    j.end(old, 0).expect("end");
    j.end(sent, 0).expect("end");
    drop(j);
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("reopens");
    assert_eq!(list.len(), 1);
    assert!(j.get(unsent).is_some());
    assert!(matches!(
        j.end(old, 0),
        Err(JournalError::UnknownKey(k)) if k == old
    ));
}

#[test]
fn a_torn_tail_on_disk_loses_only_the_last_record_and_the_slot_goes_on() {
    let tmp = TempDir::new("torn");
    let config = JournalConfig::new(&tmp.0, "t");
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    let a = j.put(&Entry::Batch(batch(1, 40)), 0).expect("put");
    let b = j.put(&Entry::Batch(batch(2, 40)), 0).expect("put");
    let slot = j.slot_dir().to_path_buf();
    drop(j);
    // The last frame's bytes changed after its checksum was written: a write cut short.
    let segment = std::fs::read_dir(&slot)
        .expect("the slot")
        .map(|e| e.expect("an entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "sfa"))
        .expect("a segment file");
    let mut bytes = std::fs::read(&segment).expect("readable");
    let last = bytes.iter().rposition(|&b| b != 0).expect("frames");
    bytes[last] ^= 0xff;
    std::fs::write(&segment, &bytes).expect("writable");
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("reopens");
    assert!(
        matches!(&list.batches[..], [RecoveredBatch::Unsent { key, .. }] if *key == a),
        "{list:?}"
    );
    assert!(j.get(b).is_none());
    // The cut tail is reused: a record put now is found by the next open.
    let c = j.put(&Entry::Batch(batch(3, 40)), 0).expect("put");
    drop(j);
    let (j, list) = DurableJournal::open(&config, NOW).expect("reopens");
    assert_eq!(list.batches.len(), 2);
    assert!(j.get(a).is_some() && j.get(c).is_some());
}

/// The files in `slot` but its lock files.
fn segments_in(slot: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(slot)
        .expect("the slot")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| !n.starts_with('.'))
        .collect();
    out.sort();
    out
}

/// A dead client's slot `name` under `dir` holding a repeatable command, an expired one and
/// an unsent batch (the client dropped its journal without ending them, as a killed process).
fn dead_client(dir: &std::path::Path, name: &str) -> (CommandRecord, CommandRecord, BatchRecord) {
    let config = JournalConfig::new(dir, name);
    let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
    let (fresh, old, b) = (command(1, NOW.0 - 1_000), command(2, 1), batch(7, 10));
    let ended = j.put(&Entry::Command(command(3, NOW.0)), 0).expect("put");
    j.put(&Entry::Command(fresh.clone()), 0).expect("put");
    j.put(&Entry::Command(old.clone()), 0).expect("put");
    j.put(&Entry::Batch(b.clone()), 0).expect("put");
    j.end(ended, 0).expect("end");
    (fresh, old, b)
}

#[test]
fn orphans_are_not_adopted_unless_asked() {
    let tmp = TempDir::new("orphan-off");
    dead_client(&tmp.0, "dead");
    let (j, list) = DurableJournal::open(&JournalConfig::new(&tmp.0, "heir"), NOW).expect("opens");
    assert!(list.is_empty(), "{list:?}");
    assert_eq!(j.stats().orphans_adopted, 0);
    // The orphan's slot is untouched and still its own client's to open.
    let (_, again) = DurableJournal::open(&JournalConfig::new(&tmp.0, "dead"), NOW).expect("opens");
    assert_eq!(again.len(), 3);
}

#[test]
fn an_adopted_orphan_joins_the_recovery_list_and_is_emptied_once_its_last_record_ends() {
    let tmp = TempDir::new("orphan-adopt");
    let (fresh, old, b) = dead_client(&tmp.0, "dead");
    let config = JournalConfig::new(&tmp.0, "heir").adopting_orphans();
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("opens");
    let [RecoveredCommand::Repeatable { key: k1, record }, RecoveredCommand::Expired {
        key: k2, reference, ..
    }] = &list.commands[..]
    else {
        panic!("{list:?}")
    };
    assert_eq!(*record, fresh);
    assert_eq!(*reference, old.reference);
    let [RecoveredBatch::Unsent {
        key: k3,
        record: rb,
    }] = &list.batches[..]
    else {
        panic!("{list:?}")
    };
    assert_eq!(*rb, b);
    let stats = j.stats();
    assert_eq!(
        (
            stats.orphans_adopted,
            stats.orphan_records,
            stats.orphans_skipped
        ),
        (1, 3, 0)
    );
    assert_eq!(j.live(), 3);
    assert!(j.get(*k1).is_some());
    let orphan = tmp.0.join("dead");
    assert_eq!(j.orphan_slots().collect::<Vec<_>>(), vec![orphan.as_path()]);

    // The heir's own records go to its own slot, under keys that are not the orphan's.
    let own = j.put(&Entry::Command(command(4, NOW.0)), 0).expect("put");
    assert!(![*k1, *k2, *k3].contains(&own));
    assert_eq!(j.live(), 4);

    // While the orphan is held its own client cannot take it back.
    assert!(matches!(
        DurableJournal::open(&JournalConfig::new(&tmp.0, "dead"), NOW),
        Err(JournalError::Held { .. })
    ));
    j.handed(*k3, 0).expect("handed in the orphan's slot");
    j.end(*k2, 0).expect("end");
    j.end(*k1, 0).expect("end");
    assert!(!segments_in(&orphan).is_empty(), "one record is still live");
    assert_eq!(j.stats().orphans_finished, 0);
    j.end(*k3, 0).expect("end");
    assert_eq!(j.stats().orphans_finished, 1);
    assert_eq!(j.orphan_slots().count(), 0);
    assert!(
        segments_in(&orphan).is_empty(),
        "{:?}",
        segments_in(&orphan)
    );
    assert!(
        orphan.join(".lock").exists(),
        "the lock files stay, as a drained slot keeps them"
    );
    assert!(matches!(j.end(*k3, 0), Err(JournalError::UnknownKey(k)) if k == *k3));
    assert_eq!(j.live(), 1, "the heir's own record");

    // Released: the dead client's name opens again, with nothing in it.
    let (_, again) = DurableJournal::open(&JournalConfig::new(&tmp.0, "dead"), NOW).expect("opens");
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn one_opening_adopts_at_most_its_bound_of_orphan_bytes_and_the_first_orphan_always() {
    let tmp = TempDir::new("orphan-bytes");
    for name in ["dead-a", "dead-b", "dead-c"] {
        dead_client(&tmp.0, name);
    }
    let size = |name: &str| -> u64 {
        std::fs::read_dir(tmp.0.join(name))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap())
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
            .sum()
    };
    let (a, b) = (size("dead-a"), size("dead-b"));
    assert!(a > 1 << 20, "a segment's size at least: {a}");
    // Room for two slots exactly: two adopted, the third deferred, untouched.
    let config = JournalConfig::new(&tmp.0, "heir")
        .adopting_orphans()
        .with_max_orphan_bytes(a + b);
    let (j, list) = DurableJournal::open(&config, NOW).expect("opens");
    assert_eq!(list.len(), 6, "{list:?}");
    assert_eq!(
        (j.stats().orphans_adopted, j.stats().orphans_deferred),
        (2, 1)
    );
    drop(j);
    // One byte less: the second is deferred too.
    let (j, list) =
        DurableJournal::open(&config.clone().with_max_orphan_bytes(a + b - 1), NOW).expect("opens");
    assert_eq!(list.len(), 3, "{list:?}");
    assert_eq!(
        (j.stats().orphans_adopted, j.stats().orphans_deferred),
        (1, 2)
    );
    drop(j);
    // A bound below one slot still adopts the first, so every orphan is adopted in time.
    let (j, list) = DurableJournal::open(&config.with_max_orphan_bytes(1), NOW).expect("opens");
    assert_eq!(list.len(), 3, "{list:?}");
    assert_eq!(
        (j.stats().orphans_adopted, j.stats().orphans_deferred),
        (1, 2)
    );
}

#[test]
fn one_opening_adopts_at_most_its_bound_of_orphans_and_leaves_the_rest_for_a_later_one() {
    let tmp = TempDir::new("orphan-bound");
    for name in ["dead-a", "dead-b", "dead-c"] {
        dead_client(&tmp.0, name);
    }
    let config = JournalConfig::new(&tmp.0, "heir")
        .adopting_orphans()
        .with_max_orphans(2);
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("opens");
    // Two slots adopted (in name order), the third counted and not touched.
    assert_eq!(list.len(), 6, "{list:?}");
    let stats = j.stats();
    assert_eq!(
        (
            stats.orphans_adopted,
            stats.orphans_deferred,
            stats.orphans_skipped
        ),
        (2, 1, 0)
    );
    let held: Vec<_> = j.orphan_slots().map(std::path::Path::to_path_buf).collect();
    assert_eq!(held, [tmp.0.join("dead-a"), tmp.0.join("dead-b")]);
    // The deferred slot is still its own client's: not locked, all its records there.
    let (dead_c, again) =
        DurableJournal::open(&JournalConfig::new(&tmp.0, "dead-c"), NOW).expect("not held");
    assert_eq!(again.len(), 3);
    drop(dead_c);
    // Once the adopted ones are finished, the next opening takes the one left.
    let keys: Vec<_> =
        list.commands
            .iter()
            .map(|c| match c {
                RecoveredCommand::Repeatable { key, .. }
                | RecoveredCommand::Expired { key, .. } => *key,
                other => panic!("{other:?}"),
            })
            .chain(list.batches.iter().map(|b| match b {
                RecoveredBatch::Unsent { key, .. } => *key,
                other => panic!("{other:?}"),
            }))
            .collect();
    for k in keys {
        j.end(k, 0).expect("end");
    }
    assert_eq!(j.stats().orphans_finished, 2);
    drop(j);
    let (j, list) = DurableJournal::open(&config, NOW).expect("opens");
    assert_eq!(list.len(), 3, "{list:?}");
    assert_eq!(
        (j.stats().orphans_adopted, j.stats().orphans_deferred),
        (1, 0)
    );
    // A bound of zero adopts nothing and defers every candidate.
    drop(j);
    let (j, list) = DurableJournal::open(&config.clone().with_max_orphans(0), NOW).expect("opens");
    assert!(list.is_empty(), "{list:?}");
    assert_eq!(
        (j.stats().orphans_adopted, j.stats().orphans_deferred),
        (0, 1)
    );
}

#[test]
fn an_orphan_whose_client_is_alive_is_left_alone() {
    let tmp = TempDir::new("orphan-held");
    dead_client(&tmp.0, "dead");
    let (mut alive, _) =
        DurableJournal::open(&JournalConfig::new(&tmp.0, "alive"), NOW).expect("opens");
    alive
        .put(&Entry::Command(command(5, NOW.0)), 0)
        .expect("put");
    let config = JournalConfig::new(&tmp.0, "heir").adopting_orphans();
    let (j, list) = DurableJournal::open(&config, NOW).expect("opens");
    assert_eq!(list.len(), 3, "only the dead client's records: {list:?}");
    let stats = j.stats();
    assert_eq!((stats.orphans_adopted, stats.orphans_skipped), (1, 1));
    assert_eq!(alive.live(), 1);
}

#[test]
fn an_heir_that_dies_leaves_its_orphan_to_the_next_heir_with_what_it_had_not_ended() {
    let tmp = TempDir::new("orphan-chain");
    let (fresh, _, _) = dead_client(&tmp.0, "dead");
    let config = JournalConfig::new(&tmp.0, "heir").adopting_orphans();
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("opens");
    let k1 = match &list.commands[0] {
        RecoveredCommand::Repeatable { key, .. } => *key,
        other => panic!("{other:?}"),
    };
    let k2 = match &list.commands[1] {
        RecoveredCommand::Expired { key, .. } => *key,
        other => panic!("{other:?}"),
    };
    j.end(k2, 0).expect("end");
    j.put(&Entry::Command(command(6, NOW.0)), 0)
        .expect("the heir's own");
    drop(j); // the heir dies
    let config = JournalConfig::new(&tmp.0, "second").adopting_orphans();
    let (j, list) = DurableJournal::open(&config, NOW).expect("opens");
    let records: Vec<_> = list
        .commands
        .iter()
        .map(|c| match c {
            RecoveredCommand::Repeatable { record, .. } => record.reference.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        records,
        vec![fresh.reference.clone(), command(6, 0).reference],
        "the dead client's fresh command and the heir's own, not the ended one"
    );
    assert_eq!(list.batches.len(), 1);
    assert_eq!(j.stats().orphans_adopted, 2);
    let _ = k1;
}

#[test]
fn an_orphan_with_nothing_live_is_emptied_at_once() {
    let tmp = TempDir::new("orphan-empty");
    {
        let config = JournalConfig::new(&tmp.0, "done");
        let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
        let k = j.put(&Entry::Command(command(1, NOW.0)), 0).expect("put");
        j.end(k, 0).expect("end");
    }
    assert!(!segments_in(&tmp.0.join("done")).is_empty());
    let config = JournalConfig::new(&tmp.0, "heir").adopting_orphans();
    let (j, list) = DurableJournal::open(&config, NOW).expect("opens");
    assert!(list.is_empty());
    let stats = j.stats();
    assert_eq!((stats.orphans_adopted, stats.orphans_finished), (1, 1));
    assert!(segments_in(&tmp.0.join("done")).is_empty());
    assert!(DurableJournal::open(&JournalConfig::new(&tmp.0, "done"), NOW).is_ok());
}

#[test]
fn an_unscheduled_sync_flushes_the_slot_with_periodic_durability_alone() {
    let tmp = TempDir::new("sync-now");
    for (durability, synced) in [
        (JournalDurability::None, false),
        (JournalDurability::Periodic(Duration::from_secs(3600)), true),
    ] {
        let mut config = JournalConfig::new(&tmp.0, format!("s{synced}"));
        config.durability = durability;
        let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
        j.put(&Entry::Command(command(1, NOW.0)), 0).expect("put");
        let before = j.stats();
        j.sync_if_periodic().expect("syncs");
        let after = j.stats();
        assert_eq!(
            after.file_syncs > before.file_syncs,
            synced,
            "{durability:?}"
        );
        assert_eq!(after.dir_syncs > before.dir_syncs, synced, "{durability:?}");
    }
}

#[test]
fn an_adopted_orphans_transfers_and_batches_come_back_sorted_as_its_own_client_would_find_them() {
    let tmp = TempDir::new("orphan-kinds");
    let mut config = JournalConfig::new(&tmp.0, "dead");
    config.horizon = Duration::from_secs(60);
    let transfer = |reference: &str, created: u64| TransferRecord {
        kind: TransferKind::Restore {
            statement: "RESTORE".into(),
        },
        reference: reference.into(),
        archive: "/a.tar".into(),
        size: 3,
        digest: [9; 32],
        created_wall: UnixMillis(created),
    };
    let (fresh, old) = (transfer("fresh", NOW.0 - 1_000), transfer("old", 1));
    let (sent, unsent) = (batch(1, 10), batch(2, 10));
    {
        let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
        j.put(&Entry::Transfer(fresh.clone()), 0).expect("put");
        j.put(&Entry::Transfer(old.clone()), 0).expect("put");
        let k = j.put(&Entry::Batch(sent.clone()), 0).expect("put");
        j.handed(k, 0).expect("handed");
        j.put(&Entry::Batch(unsent.clone()), 0).expect("put");
    }
    let mut heir = JournalConfig::new(&tmp.0, "heir").adopting_orphans();
    heir.horizon = config.horizon;
    let (mut j, list) = DurableJournal::open(&heir, NOW).expect("opens");
    let keys: Vec<_> = match &list.transfers[..] {
        [RecoveredTransfer::Repeatable { key: a, record }, RecoveredTransfer::Expired {
            key: b, reference, ..
        }] => {
            assert_eq!(*record, fresh);
            assert_eq!(*reference, old.reference);
            vec![*a, *b]
        }
        other => panic!("{other:?}"),
    };
    let keys: Vec<_> = match &list.batches[..] {
        [RecoveredBatch::UnknownOutcome {
            key: a, ingestor, ..
        }, RecoveredBatch::Unsent { key: b, record }] => {
            assert_eq!(*ingestor, sent.ingestor);
            assert_eq!(*record, unsent);
            keys.into_iter().chain([*a, *b]).collect()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(j.stats().orphan_records, 4);
    for k in keys {
        j.end(k, 0).expect("each ends in the orphan's slot");
    }
    assert_eq!(j.stats().orphans_finished, 1);
}

#[test]
fn p_8_the_clients_own_batch_is_released_and_attached_and_an_orphans_never() {
    let tmp = TempDir::new("release");
    let (_, _, orphan_batch) = dead_client(&tmp.0, "dead");
    let config = JournalConfig::new(&tmp.0, "heir").adopting_orphans();
    let (mut j, list) = DurableJournal::open(&config, NOW).expect("opens");
    let [RecoveredBatch::Unsent { key: adopted, .. }] = &list.batches[..] else {
        panic!("{list:?}")
    };
    let b = batch(4, 300);
    let own = j.put(&Entry::Batch(b.clone()), 0).expect("put");
    let c = j.put(&Entry::Command(command(5, NOW.0)), 0).expect("put");
    // An orphan's batch and a command are never released.
    assert!(!j.release_batch(*adopted));
    assert!(!j.attach_batch(*adopted, orphan_batch.batch.clone()));
    assert!(!j.release_batch(c));
    assert!(
        !j.get(*adopted).expect("live").released,
        "the orphan keeps its bytes"
    );
    // The client's own: released once, then attached to bytes of its length only.
    assert!(j.release_batch(own));
    assert!(j.get(own).expect("live").released);
    assert!(matches!(j.get(own).expect("live").entry, Entry::Batch(r) if r.batch.is_empty()));
    assert!(!j.attach_batch(own, b.batch.slice(1..)));
    assert!(j.get(own).expect("live").released);
    assert!(j.attach_batch(own, b.batch.clone()));
    let live = j.get(own).expect("live");
    assert!(!live.released);
    assert_eq!(live.entry, &Entry::Batch(b.clone()));
    // Its record on disk was whole all along.
    drop(j);
    let (_, list) =
        DurableJournal::open(&JournalConfig::new(&tmp.0, "heir"), NOW).expect("reopens");
    assert!(list.batches.iter().any(
        |r| matches!(r, RecoveredBatch::Unsent { key, record } if *key == own && *record == b)
    ));
}

/// A crash plan (feature `testkit`) that kills the process at one file operation of the
/// slot, and notes every call it was asked about.
#[cfg(feature = "testkit")]
mod crash_plan {
    use super::*;
    use nervix_driver_support::journal::testkit::{
        forget_crashes, plan_crashes, CrashPlan, Fate, FileOp, JournalCall,
    };
    use nervix_driver_support::journal::JournalKey;
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Seen {
        /// Each operation asked about: its call (kind and key) and its index of the count.
        ops: Vec<(String, usize, usize)>,
        dead: bool,
    }

    /// Dies at operation `at` (counted from the plan's start) with `fate`.
    struct Plan {
        at: usize,
        fate: Fate,
        seen: Arc<Mutex<Seen>>,
    }

    impl CrashPlan for Plan {
        fn fate(&mut self, call: &JournalCall<'_>, _: &FileOp, i: usize, n: usize) -> Fate {
            let mut seen = self.seen.lock().unwrap();
            if seen.dead {
                return Fate::Die { torn: None };
            }
            let what = match call {
                JournalCall::Put { key, .. } => format!("put {}", key.0),
                JournalCall::Handed(k) => format!("handed {}", k.0),
                JournalCall::End(k) => format!("end {}", k.0),
                _ => "other".into(),
            };
            seen.ops.push((what, i, n));
            if seen.ops.len() - 1 == self.at {
                seen.dead = true;
                return self.fate;
            }
            Fate::Carry
        }
    }

    fn plan(slot: &std::path::Path, at: usize, fate: Fate) -> Arc<Mutex<Seen>> {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let plan = Plan {
            at,
            fate,
            seen: seen.clone(),
        };
        plan_crashes(slot, Box::new(plan));
        seen
    }

    fn keys(list: &nervix_driver_support::journal::RecoveryList) -> Vec<JournalKey> {
        list.commands
            .iter()
            .filter_map(|c| match c {
                RecoveredCommand::Repeatable { key, .. }
                | RecoveredCommand::Expired { key, .. } => Some(*key),
                _ => None,
            })
            .collect()
    }

    /// Killed in the middle of a record's first write (mid-append): the call fails, part of
    /// the write is on the slot, nothing more is written, and the reopened slot cuts the torn
    /// record while the records before it come back.
    #[test]
    fn a_crash_mid_append_tears_the_record_and_the_reopened_slot_cuts_it() {
        let tmp = TempDir::new("crash-torn");
        let config = JournalConfig::new(&tmp.0, "c");
        let slot = tmp.0.join("c");
        let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
        let first = j.put(&Entry::Command(command(1, NOW.0)), 0).unwrap();
        // The segments' bytes, to see what the torn write left.
        let segments = || -> Vec<u8> {
            let mut names: Vec<_> = std::fs::read_dir(&slot)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "sfa"))
                .collect();
            names.sort();
            names
                .iter()
                .flat_map(|p| std::fs::read(p).unwrap())
                .collect()
        };
        let before = segments();
        let seen = plan(&slot, 0, Fate::Die { torn: Some(9) });
        let r = j.put(&Entry::Command(command(2, NOW.0)), 1);
        assert!(matches!(r, Err(JournalError::Io(_))), "{r:?}");
        let after = segments();
        let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        assert!(
            before.len() == after.len() && (1..=9).contains(&changed),
            "part of the write, at most its first 9 bytes, is in the file: {changed} changed"
        );
        let asked = seen.lock().unwrap().ops.clone();
        assert_eq!(asked.len(), 1, "the first write was the crash: {asked:?}");
        assert!(asked[0].0.starts_with("put "), "{asked:?}");
        // A dead process writes nothing more.
        assert!(matches!(j.end(first, 2), Err(JournalError::Broken)));
        drop(j);
        forget_crashes(&slot);
        let (_, list) = DurableJournal::open(&config, NOW).expect("reopens");
        assert_eq!(
            keys(&list),
            [first],
            "the torn record is cut, the first one is back"
        );
    }

    /// Killed just after a call's last write, before it returns: the call fails, yet the
    /// record is whole on the slot and comes back.
    #[test]
    fn a_crash_after_a_records_last_write_leaves_it_whole() {
        let tmp = TempDir::new("crash-after");
        let config = JournalConfig::new(&tmp.0, "c");
        let slot = tmp.0.join("c");
        let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
        let _first = j.put(&Entry::Command(command(1, NOW.0)), 0).unwrap();
        // Learn how many operations a put is, then die after the last one of the next.
        let seen = plan(&slot, usize::MAX, Fate::Carry);
        let second = j.put(&Entry::Command(command(2, NOW.0)), 1).unwrap();
        let n = seen.lock().unwrap().ops.len();
        assert!(n >= 2, "a record is at least its frame and its seal");
        let asked = seen.lock().unwrap().ops.clone();
        assert_eq!(
            asked[0],
            (format!("put {}", second.0), 0, n),
            "told the key"
        );
        let seen = plan(&slot, n - 1, Fate::CarryThenDie);
        let r = j.put(&Entry::Command(command(3, NOW.0)), 2);
        assert!(r.is_err(), "the process died before the call returned");
        assert_eq!(seen.lock().unwrap().ops.len(), n);
        drop(j);
        forget_crashes(&slot);
        let (_, list) = DurableJournal::open(&config, NOW).expect("reopens");
        assert_eq!(keys(&list).len(), 3, "the third record is whole: {list:?}");
    }

    /// Ends and handed marks tell the plan their key; a crash before an end's seal leaves
    /// the record live, one after it leaves it ended.
    #[test]
    fn an_end_cut_before_its_seal_leaves_the_record_and_after_it_ends_it() {
        for (fate, back) in [
            (Fate::Die { torn: None }, true),
            (Fate::CarryThenDie, false),
        ] {
            let tmp = TempDir::new(if back {
                "crash-end-torn"
            } else {
                "crash-end-after"
            });
            let config = JournalConfig::new(&tmp.0, "c");
            let slot = tmp.0.join("c");
            let (mut j, _) = DurableJournal::open(&config, NOW).expect("opens");
            let b = j.put(&Entry::Batch(batch(1, 10)), 0).unwrap();
            let seen = plan(&slot, usize::MAX, Fate::Carry);
            j.handed(b, 1).unwrap();
            let marks = seen.lock().unwrap().ops.clone();
            assert!(!marks.is_empty());
            assert!(marks
                .iter()
                .all(|(w, _, _)| *w == format!("handed {}", b.0)));
            // An end is one small frame as a mark is, as many operations: cut at its last
            // one (the checksum that seals it).
            let n = marks.len();
            let seen = plan(&slot, n - 1, fate);
            assert!(j.end(b, 2).is_err());
            assert!(seen
                .lock()
                .unwrap()
                .ops
                .iter()
                .all(|(w, _, _)| *w == format!("end {}", b.0)));
            drop(j);
            forget_crashes(&slot);
            let (_, list) = DurableJournal::open(&config, NOW).expect("reopens");
            let live = list
                .batches
                .iter()
                .any(|x| matches!(x, RecoveredBatch::UnknownOutcome { key, .. } if *key == b));
            assert_eq!(live, back, "{fate:?}: {list:?}");
        }
    }
}
