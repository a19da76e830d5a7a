//! The policy that keeps uploads and restores in the journal: a record put before anything is
//! sent, ended at the outcome, kept while uncertain inside the retry validity, reused by a
//! repeat, refused when the archive changed, and sorted after a restart.

mod common;

use std::time::Duration;

use common::{reopen, transfer};
use nervix_journal::{
    created_wall, ClientJournal, ClientJournalConfig, Entry, JournalError, JournalKey, JournalLink,
    JournaledTransfer, RecordEnd, RecordStore, TransferEnd, TransferJournal, TransferKind,
    TransferRecord, TransferRefused,
};
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::rng::Rng;
use nervix_protocol::time::UnixMillis;
use sf_journal::MemDir;

const HORIZON: Duration = Duration::from_secs(600);
const H: u64 = 600_000;

/// A journal on a memory slot, every operation carried out, counting puts.
struct Store {
    j: ClientJournal,
    dir: MemDir,
    config: ClientJournalConfig,
    puts: usize,
}

impl Store {
    fn new(config: ClientJournalConfig) -> Self {
        Self {
            j: ClientJournal::new(config),
            dir: MemDir::new(),
            config,
            puts: 0,
        }
    }

    /// A crash and a restart: the journal is read back from its files, and the transfers
    /// found are handed to a new policy, sorted at `wall_now`.
    fn restart(&mut self, wall_now: u64, horizon: Duration) -> TransferJournal {
        self.j = reopen(&mut self.dir, self.config);
        let list = self.j.classify(UnixMillis(wall_now), horizon);
        TransferJournal::new(list.transfers, horizon)
    }

    fn transfers_live(&self) -> Vec<TransferRecord> {
        self.j
            .live_entries()
            .filter_map(|e| match e.entry {
                Entry::Transfer(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }
}

impl RecordStore for Store {
    type Error = JournalError;

    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        let w = self.j.put(entry, now_millis)?;
        self.dir.apply_all(&w.ops);
        self.puts += 1;
        Ok(w.key)
    }

    fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        let w = self.j.end(key, now_millis)?;
        self.dir.apply_all(&w.ops);
        Ok(())
    }

    fn set_link(&mut self, publishing: bool) {
        self.j.set_link(if publishing {
            JournalLink::Publishing
        } else {
            JournalLink::Reconnecting
        });
    }

    fn live(&self) -> usize {
        self.j.live()
    }
}

/// The recovery list, taken and reported at once (as a driver does once the list reached the
/// application): the expired transfers' records end then.
fn taken<S: RecordStore>(
    t: &mut TransferJournal,
    s: &mut S,
) -> (Vec<JournaledTransfer>, Vec<S::Error>) {
    let list = t.take_recovery();
    let failures = t.recovery_reported(s, 0);
    (list, failures)
}

fn store() -> Store {
    Store::new(ClientJournalConfig::new(4096, 16384))
}

fn fresh() -> TransferJournal {
    TransferJournal::new(Vec::new(), HORIZON)
}

/// An upload (even `n`) or a restore (odd `n`) created at `created`.
fn record(n: u64, created: u64) -> TransferRecord {
    transfer(n, created)
}

#[test]
fn u_2_an_upload_is_journaled_before_it_is_sent_with_everything_a_repeat_needs() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    assert!(matches!(r.kind, TransferKind::Upload { .. }));
    let ticket = t.begin(&mut s, r.clone(), 0).unwrap();
    assert_eq!(ticket.reference(), "up-2");
    assert_eq!(
        s.transfers_live(),
        vec![r.clone()],
        "the record is written at begin"
    );
    // It survives a crash whole: kind, domain, resource, reference, path, size, digest, time.
    let mut t = s.restart(1_000, HORIZON);
    let (list, _) = taken(&mut t, &mut s);
    assert_eq!(list, vec![JournaledTransfer::Repeatable { record: r }]);
}

#[test]
fn rs_2_a_restore_is_journaled_with_its_reference_statement_and_archive() {
    let mut s = store();
    let mut t = fresh();
    let r = record(3, 1_000);
    assert!(matches!(r.kind, TransferKind::Restore { .. }));
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut t = s.restart(1_000, HORIZON);
    let (list, _) = taken(&mut t, &mut s);
    assert_eq!(list, vec![JournaledTransfer::Repeatable { record: r }]);
}

#[test]
fn a_transfer_whose_outcome_is_known_ends_its_record() {
    let mut s = store();
    let mut t = fresh();
    let ticket = t.begin(&mut s, record(2, 1_000), 0).unwrap();
    let end = t.ended(&mut s, ticket, TransferEnd::Known, UnixMillis(1_000), 0);
    assert_eq!(end, RecordEnd::Ended);
    assert_eq!(s.live(), 0);
    assert_eq!(t.live_count(), 0);
    let mut t = s.restart(1_000, HORIZON);
    assert!(taken(&mut t, &mut s).0.is_empty());
}

#[test]
fn u_5_an_uncertain_transfer_keeps_its_record_inside_the_retry_validity() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    let ticket = t.begin(&mut s, r.clone(), 0).unwrap();
    // One millisecond inside the horizon: kept.
    let end = t.ended(
        &mut s,
        ticket,
        TransferEnd::Uncertain,
        UnixMillis(1_000 + H - 1),
        0,
    );
    assert_eq!(end, RecordEnd::Kept);
    assert_eq!(s.transfers_live(), vec![r.clone()]);
    let mut t = s.restart(1_000, HORIZON);
    assert_eq!(
        taken(&mut t, &mut s).0,
        vec![JournaledTransfer::Repeatable { record: r }]
    );
}

#[test]
fn e_4_an_uncertain_transfer_at_its_retry_validity_ends_its_record() {
    let mut s = store();
    let mut t = fresh();
    let ticket = t.begin(&mut s, record(3, 1_000), 0).unwrap();
    // Exactly at the horizon: never repeated, so nothing is kept.
    let end = t.ended(
        &mut s,
        ticket,
        TransferEnd::Uncertain,
        UnixMillis(1_000 + H),
        0,
    );
    assert_eq!(end, RecordEnd::Ended);
    assert_eq!(s.live(), 0);
}

#[test]
fn e_4_a_kept_uncertain_transfer_ends_when_a_transfer_begins_past_its_horizon() {
    let mut s = store();
    let mut t = fresh();
    let kept = t.begin(&mut s, record(2, 1_000), 0).unwrap();
    assert_eq!(
        t.ended(&mut s, kept, TransferEnd::Uncertain, UnixMillis(1_000), 0),
        RecordEnd::Kept
    );
    // A transfer created one millisecond inside the first one's horizon leaves it kept.
    let second = t.begin(&mut s, record(3, 1_000 + H - 1), 0).unwrap();
    assert_eq!(t.live_count(), 2);
    // One created at its horizon ends it: nothing of it can be repeated any more.
    let third = t.begin(&mut s, record(4, 1_000 + H), 0).unwrap();
    assert_eq!(t.live_count(), 2);
    assert_eq!(t.stats().ended, 1);
    assert_eq!(
        s.transfers_live(),
        vec![record(3, 1_000 + H - 1), record(4, 1_000 + H)]
    );
    // The two in flight are never ended by a later one, however late.
    let _fourth = t.begin(&mut s, record(5, 1_000 + 10 * H), 0).unwrap();
    assert_eq!(t.live_count(), 3);
    assert_eq!(t.stats().ended, 1);
    drop((second, third));
}

#[test]
fn e_4_a_kept_transfer_repeated_is_not_ended_while_its_repeat_runs() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    let first = t.begin(&mut s, r.clone(), 0).unwrap();
    assert_eq!(
        t.ended(&mut s, first, TransferEnd::Uncertain, UnixMillis(1_000), 0),
        RecordEnd::Kept
    );
    let again = t.begin(&mut s, r.clone(), 0).unwrap();
    // Running again: a transfer begun past its horizon leaves it to its own end.
    let _other = t.begin(&mut s, record(3, 1_000 + 2 * H), 0).unwrap();
    assert_eq!(t.stats().ended, 0);
    assert_eq!(t.live_count(), 2);
    assert_eq!(
        t.ended(
            &mut s,
            again,
            TransferEnd::Uncertain,
            UnixMillis(1_000 + 2 * H),
            0
        ),
        RecordEnd::Ended,
        "past its horizon at its end: not kept"
    );
}

#[test]
fn u_5_a_repeat_in_the_same_process_reuses_the_live_record() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    let first = t.begin(&mut s, r.clone(), 0).unwrap();
    let key = first.key();
    assert_eq!(
        t.ended(&mut s, first, TransferEnd::Uncertain, UnixMillis(1_000), 0),
        RecordEnd::Kept
    );
    let again = t.begin(&mut s, r.clone(), 0).unwrap();
    assert_eq!(again.key(), key, "the same record");
    assert_eq!(s.puts, 1, "no second record");
    assert_eq!(t.stats().journaled, 1);
    assert_eq!(t.stats().reused, 1);
    assert_eq!(
        t.ended(&mut s, again, TransferEnd::Known, UnixMillis(2_000), 0),
        RecordEnd::Ended
    );
    assert_eq!(s.live(), 0);
}

#[test]
fn u_2_a_repeat_whose_archive_size_changed_is_refused_and_keeps_the_record() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut grown = r.clone();
    grown.size += 1;
    match t.begin(&mut s, grown, 0) {
        Err(TransferRefused::ArchiveChanged {
            reference,
            journaled_size,
            found_size,
            same_digest,
        }) => {
            assert_eq!(reference, r.reference);
            assert_eq!((journaled_size, found_size), (r.size, r.size + 1));
            assert!(same_digest);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.puts, 1);
    assert_eq!(s.transfers_live(), vec![r]);
    assert_eq!(t.stats().changed, 1);
}

#[test]
fn u_2_a_repeat_whose_archive_digest_changed_at_the_same_size_is_refused() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut other = r.clone();
    other.digest[31] ^= 1;
    assert!(matches!(
        t.begin(&mut s, other, 0),
        Err(TransferRefused::ArchiveChanged {
            same_digest: false,
            ..
        })
    ));
    assert_eq!(s.puts, 1);
}

#[test]
fn rs_2_another_call_under_a_live_reference_is_a_conflict() {
    let mut s = store();
    let mut t = fresh();
    let r = record(3, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut other = r.clone();
    other.kind = TransferKind::Restore {
        statement: "RESTORE DOMAIN other".into(),
    };
    assert!(matches!(
        t.begin(&mut s, other, 0),
        Err(TransferRefused::Conflict { .. })
    ));
    assert_eq!(s.puts, 1);
}

#[test]
fn u_5_a_recovered_upload_repeats_under_its_live_record_and_ends_at_its_outcome() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    // A crash: the transfer never ended.
    let mut t = s.restart(2_000, HORIZON);
    let (list, _) = taken(&mut t, &mut s);
    let [JournaledTransfer::Repeatable { record: found }] = &list[..] else {
        panic!("{list:?}")
    };
    let (ticket, again) = t
        .recover(
            &mut s,
            &found.reference,
            found.size,
            &found.digest,
            UnixMillis(2_000),
            0,
        )
        .unwrap();
    assert_eq!(again, r, "the same identity, archive and target");
    assert_eq!(t.stats().reused, 1, "one repeat under the live record");
    assert_eq!(t.stats().changed, 0);
    assert_eq!(
        s.puts, 1,
        "the live record is reused after the restart: no second put"
    );
    assert_eq!(
        t.ended(&mut s, ticket, TransferEnd::Known, UnixMillis(2_000), 0),
        RecordEnd::Ended
    );
    let mut t = s.restart(2_000, HORIZON);
    assert!(taken(&mut t, &mut s).0.is_empty(), "ended for good");
}

#[test]
fn rs_5_a_recovered_restore_whose_archive_changed_is_refused_and_stays_recoverable() {
    let mut s = store();
    let mut t = fresh();
    let r = record(3, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut t = s.restart(2_000, HORIZON);
    let _ = taken(&mut t, &mut s);
    let mut digest = r.digest;
    digest[0] ^= 0xff;
    assert!(matches!(
        t.recover(&mut s, &r.reference, r.size, &digest, UnixMillis(2_000), 0),
        Err(TransferRefused::ArchiveChanged { .. })
    ));
    assert!(matches!(
        t.recover(
            &mut s,
            &r.reference,
            r.size - 1,
            &r.digest,
            UnixMillis(2_000),
            0
        ),
        Err(TransferRefused::ArchiveChanged { .. })
    ));
    assert_eq!(t.stats().changed, 2, "each refused repeat is counted");
    assert_eq!(t.stats().reused, 0);
    assert_eq!(
        t.live(&r.reference).map(|(_, live)| live.clone()),
        Some(r.clone()),
        "still live, as it was journaled"
    );
    // The archive put back: the repeat goes ahead under the same record.
    let (ticket, _) = t
        .recover(
            &mut s,
            &r.reference,
            r.size,
            &r.digest,
            UnixMillis(2_000),
            0,
        )
        .unwrap();
    assert_eq!(ticket.reference(), r.reference);
    assert_eq!(s.transfers_live(), vec![r]);
}

#[test]
fn e_4_a_journaled_transfer_past_its_validity_is_reported_unknown_once_and_its_record_ends() {
    let mut s = store();
    let mut t = fresh();
    let r = record(2, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut t = s.restart(1_000 + H, HORIZON);
    let (list, failures) = taken(&mut t, &mut s);
    assert!(failures.is_empty());
    assert_eq!(
        list,
        vec![JournaledTransfer::Unknown {
            reference: r.reference.clone(),
            created_wall: UnixMillis(1_000),
        }]
    );
    assert!(taken(&mut t, &mut s).0.is_empty(), "reported once");
    assert!(matches!(
        t.recover(
            &mut s,
            &r.reference,
            r.size,
            &r.digest,
            UnixMillis(1_000),
            0
        ),
        Err(TransferRefused::NotLive(_))
    ));
    assert_eq!(s.live(), 0, "its record ended once reported");
    let mut t = s.restart(1_000, HORIZON);
    assert!(taken(&mut t, &mut s).0.is_empty());
}

#[test]
fn e_4_a_repeatable_transfer_that_expires_before_its_repeat_is_refused_and_ends() {
    let mut s = store();
    let mut t = fresh();
    let r = record(3, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut t = s.restart(1_000, HORIZON);
    let _ = taken(&mut t, &mut s);
    assert!(matches!(
        t.recover(
            &mut s,
            &r.reference,
            r.size,
            &r.digest,
            UnixMillis(1_000 + H),
            0
        ),
        Err(TransferRefused::Expired(_))
    ));
    assert_eq!(s.live(), 0);
    assert!(matches!(
        t.recover(
            &mut s,
            &r.reference,
            r.size,
            &r.digest,
            UnixMillis(1_000),
            0
        ),
        Err(TransferRefused::NotLive(_))
    ));
}

#[test]
fn a_full_journal_refuses_the_transfer_naming_the_link_and_writes_nothing() {
    let mut s = Store::new(ClientJournalConfig::new(1024, 2048));
    let mut t = fresh();
    s.set_link(true);
    let mut refused = None;
    for n in 0..100 {
        let mut r = record(2 * n, 1_000);
        r.archive = "x".repeat(200);
        match t.begin(&mut s, r, 0) {
            Ok(_) => {}
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let live = s.live();
    match refused {
        Some(TransferRefused::Store(JournalError::Full { link, .. })) => {
            assert_eq!(link, JournalLink::Publishing)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.stats().refused, 1);
    assert_eq!(t.live_count(), live, "the refused transfer has no record");
    s.set_link(false);
    let mut r = record(1000, 1_000);
    r.archive = "x".repeat(200);
    assert!(matches!(
        t.begin(&mut s, r, 0),
        Err(TransferRefused::Store(JournalError::Full {
            link: JournalLink::Reconnecting,
            ..
        }))
    ));
}

#[test]
fn an_end_of_a_ticket_without_a_live_record_writes_nothing() {
    let mut s = store();
    let mut t = fresh();
    let ticket = t.begin(&mut s, record(2, 1_000), 0).unwrap();
    let copy = ticket.clone();
    assert_eq!(
        t.ended(&mut s, ticket, TransferEnd::Known, UnixMillis(1_000), 0),
        RecordEnd::Ended
    );
    assert_eq!(
        t.ended(&mut s, copy, TransferEnd::Known, UnixMillis(1_000), 0),
        RecordEnd::NotJournaled
    );
    assert_eq!(t.stats().ended, 1);
}

#[test]
fn e_4_a_transfers_validity_counts_from_its_uuid_v7_reference() {
    let mut rng = Rng::new(7);
    let r = ExecutionReference::new_v7(UnixMillis(1_234_567), &mut rng);
    assert_eq!(
        created_wall(r.as_str(), UnixMillis(9_999_999)),
        UnixMillis(1_234_567)
    );
    assert_eq!(
        created_wall("restore-1", UnixMillis(9_999_999)),
        UnixMillis(9_999_999),
        "a reference without a time counts from now"
    );
}

#[test]
fn e_4_an_expired_transfer_stays_journaled_until_its_report_was_handed_on() {
    let mut s = store();
    let mut t = fresh();
    let r = record(3, 1_000);
    let _ = t.begin(&mut s, r.clone(), 0).unwrap();
    let mut t = s.restart(1_000 + H, HORIZON);
    let list = t.take_recovery();
    assert_eq!(list.len(), 1);
    assert_eq!(s.live(), 1, "not ended before the application was told");
    // A crash now (the list never reached the application) finds it again.
    let mut again = s.restart(1_000 + H, HORIZON);
    assert_eq!(again.take_recovery(), list);
    assert!(t.recovery_reported(&mut s, 0).is_empty());
    assert_eq!(s.live(), 0, "ended once reported");
    assert!(t.recovery_reported(&mut s, 0).is_empty(), "nothing twice");
}
