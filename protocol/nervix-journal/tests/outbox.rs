//! The outbox's policy over a journal held in memory: a batch's record from its put to its
//! end, its handed mark before the send, and what a restart finds (SF-2, SF-23, SF-24, P-8).

mod common;

use std::time::Duration;

use common::{batch, command, reopen};
use nervix_journal::{
    BatchOutbox, BatchRecord, ClientJournal, ClientJournalConfig, CommandJournal, Entry,
    HandedStore, JournalError, JournalKey, JournalLink, JournaledBatch, JournaledCommand,
    RecordEnd, RecordStore,
};
use nervix_protocol::client::{BatchId, ProducerId};
use nervix_protocol::time::Timestamp;
use nervix_protocol::time::UnixMillis;
use sf_journal::MemDir;

/// A journal whose every operation is carried out on a memory slot, as a record store; its
/// handed marks can be made to fail.
struct Slot {
    j: ClientJournal,
    dir: MemDir,
    config: ClientJournalConfig,
    refuse_marks: bool,
}

impl Slot {
    fn new(config: ClientJournalConfig) -> Self {
        Self {
            j: ClientJournal::new(config),
            dir: MemDir::new(),
            config,
            refuse_marks: false,
        }
    }

    /// A crash and a restart: the journal is recovered from the files, and its batches
    /// sorted into a new outbox.
    fn restart(&mut self) -> BatchOutbox {
        self.j = reopen(&mut self.dir, self.config);
        let list = self.j.classify(UnixMillis(0), Duration::from_secs(600));
        BatchOutbox::new(list.batches)
    }

    fn live(&self) -> Vec<(JournalKey, bool)> {
        self.j.live_entries().map(|e| (e.key, e.handed)).collect()
    }
}

impl RecordStore for Slot {
    type Error = JournalError;

    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        let w = self.j.put(entry, now_millis)?;
        self.dir.apply_all(&w.ops);
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

impl HandedStore for Slot {
    fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        if self.refuse_marks {
            return Err(JournalError::Exhausted);
        }
        let w = self.j.handed(key, now_millis)?;
        self.dir.apply_all(&w.ops);
        Ok(())
    }
}

fn roomy() -> ClientJournalConfig {
    ClientJournalConfig::new(64 << 10, 1 << 20)
}

const P: ProducerId = ProducerId(1);
const Q: ProducerId = ProducerId(2);

fn b(n: u64) -> BatchId {
    BatchId(n)
}

#[test]
fn sf_2_a_batch_is_journaled_unhanded_and_stays_so_while_the_engine_holds_it() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 100, 5), 0).unwrap();
    o.taken(key, P, b(1));
    assert_eq!(s.live(), vec![(key, false)]);
    // Nothing on the wire yet: nothing is marked.
    assert_eq!(o.before_send(&mut s, 0, |_, _| false).unwrap(), 0);
    assert_eq!(s.live(), vec![(key, false)]);
    assert!(o.unhanded());
    assert_eq!(o.stats().journaled, 1);
}

#[test]
fn p_8_a_batch_on_the_wire_is_marked_handed_before_its_send() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let k1 = o.put(&mut s, batch(1, 100, 5), 0).unwrap();
    let k2 = o.put(&mut s, batch(2, 100, 5), 0).unwrap();
    o.taken(k1, P, b(1));
    o.taken(k2, P, b(2));
    // Only the batch the engine put on the wire is marked, not every batch it holds.
    assert_eq!(
        o.before_send(&mut s, 0, |p, x| p == P && x == b(2))
            .unwrap(),
        1
    );
    assert_eq!(s.live(), vec![(k1, false), (k2, true)]);
    // Marked once: a later call does not mark it again.
    assert_eq!(o.before_send(&mut s, 0, |_, _| true).unwrap(), 1);
    assert_eq!(s.live(), vec![(k1, true), (k2, true)]);
    assert_eq!(o.stats().handed, 2);
    assert!(!o.unhanded());
}

#[test]
fn p_8_a_batch_handed_before_a_crash_is_reported_unknown_and_never_sent_again() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 100, 77), 0).unwrap();
    o.taken(key, P, b(1));
    o.before_send(&mut s, 0, |_, _| true).unwrap();
    // The crash comes between the mark and the send: the batch counts as sent.
    let mut o = s.restart();
    let list = o.take_recovery();
    // Its record ends once the report was handed on.
    assert!(o.recovery_reported(&mut s, 0).is_empty());
    assert_eq!(
        list,
        vec![JournaledBatch::UnknownOutcome {
            domain: "dom1".into(),
            ingestor: "ing1".into(),
            created_wall: UnixMillis(77),
        }]
    );
    // Its record ended once reported: nothing is left to send, now or after the next restart.
    assert!(s.live().is_empty());
    assert_eq!(o.stats().unknown_reported, 1);
    let mut o = s.restart();
    assert!(o.take_recovery().is_empty());
}

#[test]
fn p_8_unknown_outcomes_are_reported_once() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    o.taken(key, P, b(1));
    o.before_send(&mut s, 0, |_, _| true).unwrap();
    let mut o = s.restart();
    assert_eq!(o.take_recovery().len(), 1);
    assert!(o.recovery_reported(&mut s, 0).is_empty());
    let ends = s.j.stats().ends;
    assert!(o.take_recovery().is_empty());
    assert!(o.recovery_reported(&mut s, 0).is_empty());
    assert_eq!(s.j.stats().ends, ends, "nothing is ended twice");
    assert_eq!(o.stats().unknown_reported, 1);
}

#[test]
fn p_8_a_batch_never_handed_comes_back_unsent_with_its_bytes() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let record = batch(3, 300, 42);
    let key = o.put(&mut s, record.clone(), 0).unwrap();
    o.taken(key, P, b(1));
    let mut o = s.restart();
    let list = o.take_recovery();
    assert!(o.recovery_reported(&mut s, 0).is_empty());
    let [JournaledBatch::Unsent(u)] = list.as_slice() else {
        panic!("one unsent batch, got {list:?}");
    };
    assert_eq!(u.key(), key);
    assert_eq!(
        (&u.domain, &u.ingestor, &u.batch, u.created_wall),
        (
            &record.domain,
            &record.ingestor,
            &record.batch,
            record.created_wall
        )
    );
    // It stays live until it is submitted again and has an outcome.
    assert_eq!(s.live(), vec![(key, false)]);
}

#[test]
fn p_8_handed_and_unsent_batches_are_sorted_apart_in_journal_order() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let keys: Vec<JournalKey> = (0..4)
        .map(|n| o.put(&mut s, batch(n, 20, n), 0).unwrap())
        .collect();
    for (i, k) in keys.iter().enumerate() {
        o.taken(*k, P, b(i as u64));
    }
    o.before_send(&mut s, 0, |_, x| x.0 % 2 == 1).unwrap();
    let mut o = s.restart();
    let list = o.take_recovery();
    assert!(o.recovery_reported(&mut s, 0).is_empty());
    let kinds: Vec<&str> = list
        .iter()
        .map(|x| match x {
            JournaledBatch::Unsent(_) => "unsent",
            JournaledBatch::UnknownOutcome { .. } => "unknown",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["unsent", "unknown", "unsent", "unknown"]);
    assert_eq!(s.live(), vec![(keys[0], false), (keys[2], false)]);
}

#[test]
fn p_8_an_outcome_ends_the_record_handed_or_not() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let k1 = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    let k2 = o.put(&mut s, batch(2, 10, 1), 0).unwrap();
    assert_eq!(o.in_flight(), 0, "journaled, not yet taken");
    o.taken(k1, P, b(1));
    assert_eq!(o.in_flight(), 1);
    o.taken(k2, P, b(2));
    assert_eq!(o.in_flight(), 2);
    o.before_send(&mut s, 0, |_, x| x == b(1)).unwrap();
    assert_eq!(o.in_flight(), 2, "one handed, one not: both in flight");
    // A completed (handed) batch and one that ended unsent (its producer closed).
    assert_eq!(o.outcome(&mut s, P, b(1), 0), RecordEnd::Ended);
    assert_eq!(o.in_flight(), 1);
    assert_eq!(o.outcome(&mut s, P, b(2), 0), RecordEnd::Ended);
    assert!(s.live().is_empty());
    // An outcome told twice, or of a batch without a record, ends nothing.
    assert_eq!(o.outcome(&mut s, P, b(1), 0), RecordEnd::NotJournaled);
    assert_eq!(o.in_flight(), 0);
    let mut o = s.restart();
    assert!(o.take_recovery().is_empty());
}

#[test]
fn p_8_an_outcome_ends_only_its_own_producers_batch() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let kp = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    let kq = o.put(&mut s, batch(2, 10, 1), 0).unwrap();
    // Two producers' batches with the same engine number.
    o.taken(kp, P, b(7));
    o.taken(kq, Q, b(7));
    o.before_send(&mut s, 0, |_, _| true).unwrap();
    assert_eq!(o.outcome(&mut s, Q, b(7), 0), RecordEnd::Ended);
    assert_eq!(s.live(), vec![(kp, true)]);
}

#[test]
fn p_8_a_recovered_unsent_batch_reuses_its_record_once() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    o.taken(key, P, b(1));
    let mut o = s.restart();
    let _ = o.take_recovery();
    let puts = s.j.stats().puts;
    assert!(o.reuse(key), "the recovered record is reused");
    assert!(!o.reuse(key), "a second submission of it is refused");
    // A submission refused before the engine took it gives the record back.
    o.give_back(key);
    assert!(o.reuse(key));
    assert!(!o.reuse(JournalKey(key.0 + 100)), "a key never recovered");
    assert_eq!(s.j.stats().puts, puts, "no second record is written");
    // Submitted again: the engine takes it, sends it, and its outcome ends its record.
    o.taken(key, ProducerId(9), b(1));
    o.before_send(&mut s, 0, |_, _| true).unwrap();
    assert_eq!(o.outcome(&mut s, ProducerId(9), b(1), 0), RecordEnd::Ended);
    assert!(s.live().is_empty());
    assert_eq!(o.stats().reused, 2);
}

#[test]
fn p_8_a_batch_dropped_before_the_engine_took_it_ends_its_record() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    o.dropped(&mut s, key, 0).unwrap();
    assert!(s.live().is_empty());
    assert_eq!(o.stats().ended, 1);
}

#[test]
fn p_8_a_refused_handed_mark_leaves_the_batch_unsent() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    o.taken(key, P, b(1));
    s.refuse_marks = true;
    assert!(o.before_send(&mut s, 0, |_, _| true).is_err());
    // Still unhanded: the caller keeps its frame from the transport, and a restart finds
    // it unsent.
    assert!(o.unhanded());
    assert_eq!(s.live(), vec![(key, false)]);
    assert_eq!(o.stats().write_failures, 1);
    assert_eq!(o.stats().handed, 0);
}

fn fill(s: &mut Slot, o: &mut BatchOutbox) -> JournalError {
    for n in 0..10_000 {
        match o.put(s, batch(n, 900, n), 0) {
            Ok(_) => {}
            Err(e) => return e,
        }
    }
    panic!("the journal never filled");
}

#[test]
fn sf_23_a_full_journal_refuses_a_batch_and_keeps_nothing_of_it() {
    let mut s = Slot::new(ClientJournalConfig::new(1024, 4096));
    let mut o = BatchOutbox::default();
    let e = fill(&mut s, &mut o);
    assert!(matches!(e, JournalError::Full { .. }), "{e:?}");
    let live = s.live();
    let puts = s.j.stats().puts;
    assert!(o.put(&mut s, batch(1, 900, 1), 0).is_err());
    assert_eq!(s.live(), live, "a refused batch is not live");
    assert_eq!(s.j.stats().puts, puts);
    assert_eq!(o.stats().refused, 2);
    // An outcome makes room again.
    o.dropped(&mut s, live[0].0, 0).unwrap();
    o.dropped(&mut s, live[1].0, 0).unwrap();
    assert!(o.put(&mut s, batch(1, 900, 1), 0).is_ok());
}

#[test]
fn sf_24_a_full_journal_names_publishing_while_a_session_is_open() {
    let mut s = Slot::new(ClientJournalConfig::new(1024, 4096));
    let mut o = BatchOutbox::default();
    s.set_link(true);
    assert!(matches!(
        fill(&mut s, &mut o),
        JournalError::Full {
            link: JournalLink::Publishing,
            ..
        }
    ));
}

#[test]
fn sf_24_a_full_journal_names_reconnecting_while_no_session_is_open() {
    let mut s = Slot::new(ClientJournalConfig::new(1024, 4096));
    let mut o = BatchOutbox::default();
    s.set_link(false);
    assert!(matches!(
        fill(&mut s, &mut o),
        JournalError::Full {
            link: JournalLink::Reconnecting,
            ..
        }
    ));
}

#[test]
fn p_8_a_batch_record_keeps_domain_ingestor_bytes_and_time() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let record = BatchRecord {
        domain: "tenant".into(),
        ingestor: "orders".into(),
        batch: vec![1, 2, 3, 255, 0].into(),
        created_wall: UnixMillis(1_700_000_000_123),
    };
    o.put(&mut s, record.clone(), 0).unwrap();
    let mut o = s.restart();
    let list = o.take_recovery();
    let [JournaledBatch::Unsent(u)] = list.as_slice() else {
        panic!("{list:?}");
    };
    assert_eq!(u.domain, record.domain);
    assert_eq!(u.ingestor, record.ingestor);
    assert_eq!(u.batch, record.batch);
    assert_eq!(u.created_wall, record.created_wall);
}

/// The regression of the order of report and end at a restart: the records of batches of
/// unknown outcome ended as the list was taken, before the application was told, so a
/// process that died between the two lost an unknown outcome nobody had reported.
#[test]
fn p_8_an_unknown_batch_stays_journaled_until_its_report_was_handed_on() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    o.taken(key, P, b(1));
    o.before_send(&mut s, 0, |_, _| true).unwrap();
    let mut o = s.restart();
    assert_eq!(o.take_recovery().len(), 1);
    // Not handed on yet: a crash now leaves the record, and the next start reports it.
    assert_eq!(s.live(), vec![(key, true)]);
    let mut o = s.restart();
    let list = o.take_recovery();
    assert!(matches!(
        list.as_slice(),
        [JournaledBatch::UnknownOutcome { .. }]
    ));
    assert_eq!(s.live(), vec![(key, true)]);
    // Handed on: it ends, once.
    assert!(o.recovery_reported(&mut s, 0).is_empty());
    assert!(s.live().is_empty());
    let ends = s.j.stats().ends;
    assert!(o.recovery_reported(&mut s, 0).is_empty());
    assert_eq!(s.j.stats().ends, ends);
    let mut o = s.restart();
    assert!(o.take_recovery().is_empty());
}

/// The same order for commands too old to repeat (E-4): reported, then ended, so a crash
/// between the two reports them again instead of losing them.
/// A command journaled, the journal reopened and read an hour later: past the horizon, too
/// old to repeat; its key.
fn too_old_to_repeat() -> (CommandJournal<Slot>, JournalKey) {
    let mut s = Slot::new(roomy());
    let key = s.put(&Entry::Command(command(1, 5)), 0).unwrap();
    s.j = reopen(&mut s.dir, s.config);
    let wall = UnixMillis(5 + 3_600_000);
    let list = s.j.classify(wall, Duration::from_secs(600));
    (CommandJournal::new(s, list, wall, Timestamp::ZERO), key)
}

#[test]
fn e_4_a_command_too_old_to_repeat_stays_journaled_until_its_report_was_handed_on() {
    let (mut core, key) = too_old_to_repeat();
    let r = core.take_recovery();
    assert!(matches!(
        r.commands.as_slice(),
        [JournaledCommand::Unknown { reference, .. }] if reference == "ref-1"
    ));
    assert_eq!(
        core.store().live(),
        vec![(key, false)],
        "not ended before it is told"
    );
    assert!(core.recovery_reported(Timestamp::ZERO).is_empty());
    assert!(core.store().live().is_empty());
    assert_eq!(core.stats().ended, 1);
    assert!(core.recovery_reported(Timestamp::ZERO).is_empty());
    assert_eq!(core.stats().ended, 1, "ended once");
    assert!(core.take_recovery().is_empty(), "taken once");
}

#[test]
fn e_4_a_command_too_old_to_repeat_whose_list_was_never_handed_on_stays_for_the_next_start() {
    let (mut core, key) = too_old_to_repeat();
    assert_eq!(core.take_recovery().commands.len(), 1);
    // Its call was given up; a later call's empty list is handed on.
    assert!(core.take_recovery().is_empty(), "taken once");
    assert!(core.recovery_reported(Timestamp::ZERO).is_empty());
    assert_eq!(
        core.store().live(),
        vec![(key, false)],
        "left for the next start"
    );
    assert_eq!(core.stats().ended, 0);
}

/// A command journaled at wall time 5 and read back `age_ms` later, inside a horizon of a
/// day, by an engine whose time is `now`.
fn recovered_at(age_ms: u64, now: Timestamp) -> (CommandJournal<Slot>, JournalKey) {
    let mut s = Slot::new(roomy());
    let key = s.put(&Entry::Command(command(1, 5)), 0).unwrap();
    s.j = reopen(&mut s.dir, s.config);
    let wall = UnixMillis(5 + age_ms);
    let list = s.j.classify(wall, Duration::from_secs(24 * 3600));
    (CommandJournal::new(s, list, wall, now), key)
}

#[test]
fn e_4_a_repeatable_command_is_created_its_age_before_the_engines_now() {
    let now = Timestamp::from_nanos(3_600_000_000_000);
    let (mut core, _) = recovered_at(90_000, now);
    let r = core.take_recovery();
    let [JournaledCommand::Repeatable { command, .. }] = r.commands.as_slice() else {
        panic!("{:?}", r.commands)
    };
    assert_eq!(
        command.created,
        Timestamp::from_nanos(3_600_000_000_000 - 90_000_000_000)
    );
    // Exactly as old as the engine's time reaches back: created at its start.
    let (mut core, _) = recovered_at(3_600_000, now);
    let r = core.take_recovery();
    let [JournaledCommand::Repeatable { command, .. }] = r.commands.as_slice() else {
        panic!("{:?}", r.commands)
    };
    assert_eq!(command.created, Timestamp::ZERO);
}

/// The regression of a command whose age the engine's time could not hold: its creation was
/// put at the engine's start, so its retry validity counted from the restart and it could be
/// repeated past it.
#[test]
fn e_4_a_command_older_than_the_engines_time_is_reported_unknown_and_ended_once_told() {
    let (mut core, key) = recovered_at(90_000, Timestamp::from_nanos(89_999_999_999));
    let r = core.take_recovery();
    assert!(matches!(
        r.commands.as_slice(),
        [JournaledCommand::Unknown { reference, created_wall }]
            if reference == "ref-1" && *created_wall == UnixMillis(5)
    ));
    assert_eq!(core.store().live(), vec![(key, false)]);
    assert!(core.recovery_reported(Timestamp::ZERO).is_empty());
    assert!(core.store().live().is_empty(), "ended once told");
}

#[test]
fn p_8_an_end_the_store_refuses_is_counted_and_given_back() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    let key = o.put(&mut s, batch(1, 10, 1), 0).unwrap();
    o.taken(key, P, b(1));
    o.before_send(&mut s, 0, |_, _| true).unwrap();
    // The record is gone under the outbox's feet: its end is refused.
    s.end(key, 0).unwrap();
    assert!(matches!(
        o.outcome(&mut s, P, b(1), 0),
        RecordEnd::Failed(JournalError::UnknownKey(k)) if k == key
    ));
    assert_eq!(o.stats().write_failures, 1);
    assert_eq!(o.stats().ended, 0);
}

#[test]
fn an_unsent_batch_shows_the_length_of_its_bytes_not_the_bytes() {
    let mut s = Slot::new(roomy());
    let mut o = BatchOutbox::default();
    o.put(&mut s, batch(7, 300, 1), 0).unwrap();
    let mut o = s.restart();
    let list = o.take_recovery();
    let [JournaledBatch::Unsent(u)] = &list[..] else {
        panic!("{list:?}")
    };
    let shown = format!("{u:?}");
    assert!(shown.starts_with("UnsentBatch"), "{shown}");
    assert!(shown.contains("bytes: 300"), "{shown}");
    assert!(shown.contains("ingestor: \"ing7\""), "{shown}");
    assert!(
        shown.len() < 200,
        "the bytes themselves are not shown: {shown}"
    );
}

/// A command policy over an empty slot that keeps an uncertain command's record for a
/// minute, an engine, and a command executed at `t0` through both.
fn executed_at(
    t0: Timestamp,
) -> (
    CommandJournal<Slot>,
    nervix_protocol::client::Client,
    nervix_protocol::client::CommandHandle,
) {
    let s = Slot::new(roomy());
    let mut core = CommandJournal::new(
        s,
        nervix_journal::RecoveryList::default(),
        UnixMillis(0),
        Timestamp::ZERO,
    )
    .with_validity(Duration::from_secs(60));
    let seed = nervix_protocol::endpoint::Endpoint::parse("https://seed-1:7443/").unwrap();
    let mut engine = nervix_protocol::client::Client::new(
        nervix_protocol::client::ClientConfig::new(vec![seed], 7),
    );
    let h = core
        .execute(
            &mut engine,
            t0,
            UnixMillis(1_000),
            "INSERT INTO t VALUES (1)",
        )
        .unwrap();
    assert_eq!(core.store().live().len(), 1, "journaled before it went");
    (core, engine, h)
}

#[test]
fn e_4_a_record_kept_for_an_uncertain_command_ends_once_its_validity_passed() {
    let t0 = Timestamp::from_nanos(5_000_000_000);
    let (mut core, engine, h) = executed_at(t0);
    let reference = engine.reference_of(h).unwrap().to_string();
    assert_eq!(core.next_expiry(), None);
    // Uncertain: kept, until a minute after its reference's creation (not after its end).
    let created = Timestamp::from_nanos(4_000_000_000);
    assert!(matches!(
        core.ended_as(h, Some(created), t0),
        RecordEnd::Kept
    ));
    let until = created + Duration::from_secs(60);
    assert_eq!(core.next_expiry(), Some(until));
    assert!(core.key_of(&reference).is_some());
    let (ended, failures) = core.expire(Timestamp::from_nanos(until.as_nanos() - 1));
    assert_eq!(
        (ended, failures.len()),
        (0, 0),
        "not before its validity passed"
    );
    assert_eq!(core.store().live().len(), 1);
    let (ended, failures) = core.expire(until);
    assert_eq!((ended, failures.len()), (1, 0), "at its validity's end");
    assert!(core.store().live().is_empty());
    assert_eq!(core.next_expiry(), None);
    assert_eq!(core.key_of(&reference), None, "no record to repeat under");
    assert_eq!(core.stats().ended, 1);
    assert_eq!(core.expire(until + Duration::from_secs(60)).0, 0, "once");
}

#[test]
fn e_4_kept_records_end_in_the_order_their_validity_passes_and_a_repeated_one_is_not_ended() {
    let t0 = Timestamp::from_nanos(5_000_000_000);
    let (mut core, mut engine, first) = executed_at(t0);
    let second = core
        .execute(
            &mut engine,
            t0,
            UnixMillis(1_000),
            "INSERT INTO t VALUES (2)",
        )
        .unwrap();
    let third = core
        .execute(
            &mut engine,
            t0,
            UnixMillis(1_000),
            "INSERT INTO t VALUES (3)",
        )
        .unwrap();
    let retained = nervix_protocol::client::RetainedCommand {
        reference: engine.reference_of(third).unwrap().clone(),
        query: "INSERT INTO t VALUES (3)".into(),
        domain: None,
        position: None,
        preview: None,
        created: t0,
    };
    let at = |s: u64| Timestamp::from_nanos(s * 1_000_000_000);
    assert!(matches!(
        core.ended_as(second, Some(at(2)), t0),
        RecordEnd::Kept
    ));
    assert!(matches!(
        core.ended_as(first, Some(at(1)), t0),
        RecordEnd::Kept
    ));
    assert!(matches!(
        core.ended_as(third, Some(at(3)), t0),
        RecordEnd::Kept
    ));
    assert_eq!(core.next_expiry(), Some(at(61)), "the earliest first");
    // The third is repeated under its record: no longer kept, it waits for its new end.
    core.recover(&mut engine, t0, UnixMillis(1_000), &retained)
        .unwrap();
    assert_eq!(core.expire(at(61)).0, 1);
    assert_eq!(core.store().live().len(), 2);
    assert_eq!(core.next_expiry(), Some(at(62)));
    assert_eq!(core.expire(at(100)).0, 1);
    assert_eq!(
        core.store().live().len(),
        1,
        "the repeated one's record stays"
    );
    assert_eq!(core.next_expiry(), None);
}

#[test]
fn e_4_only_an_uncertain_command_that_may_still_be_repeated_keeps_its_record_from_its_creation() {
    use nervix_journal::kept_since;
    use nervix_protocol::client::{CommandResult, RetainedCommand, UncertainCause};
    let created = Timestamp::from_nanos(42);
    let uncertain = |cause| CommandResult::Uncertain {
        command: RetainedCommand {
            reference: nervix_protocol::command::ExecutionReference::parse(
                "0190a3d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
            )
            .unwrap(),
            query: "INSERT INTO t VALUES (1)".into(),
            domain: None,
            position: None,
            preview: None,
            created,
        },
        cause,
    };
    assert_eq!(
        kept_since(&uncertain(UncertainCause::Deadline)),
        Some(created)
    );
    assert_eq!(kept_since(&uncertain(UncertainCause::RetryHorizon)), None);
    assert_eq!(
        kept_since(&uncertain(UncertainCause::ReferenceExpired)),
        None
    );
}

/// The regression of a command made while a BEGIN was unanswered: its record was
/// written when it was made, with no position, while the frame it waits to send carries the
/// position the BEGIN's status gives. After a crash it came back repeatable without the
/// position, so a repetition would have been another command (outside the transaction), not
/// the one that may have run (E-2, E-3). It is reported unknown, naming its reference, and is
/// never repeated; the BEGIN itself, and a command made before it, still are.
#[test]
fn e_2_a_command_made_behind_an_unanswered_begin_is_reported_unknown_after_a_restart() {
    let mut core = CommandJournal::new(
        Slot::new(roomy()),
        nervix_journal::RecoveryList::default(),
        UnixMillis(0),
        Timestamp::ZERO,
    );
    let seed = nervix_protocol::endpoint::Endpoint::parse("https://seed-1:7443/").unwrap();
    let mut engine = nervix_protocol::client::Client::new(
        nervix_protocol::client::ClientConfig::new(vec![seed], 7),
    );
    engine.select_domain(Some("d1")).unwrap();
    let (t, wall) = (Timestamp::from_nanos(1_000_000_000), UnixMillis(1_000));
    let before = core
        .execute(&mut engine, t, wall, "INSERT INTO t VALUES (0)")
        .unwrap();
    let begin = core.execute(&mut engine, t, wall, "BEGIN;").unwrap();
    let held = core
        .execute(&mut engine, t, wall, "INSERT INTO t VALUES (1)")
        .unwrap();
    let reference = |h| engine.reference_of(h).unwrap().to_string();
    let (before, begin, held) = (reference(before), reference(begin), reference(held));
    assert_eq!(
        core.store().live().len(),
        3,
        "each journaled before it went"
    );
    // A crash, and a restart a second later.
    let mut s = Slot::new(roomy());
    std::mem::swap(&mut s, core.store_mut());
    s.j = reopen(&mut s.dir, s.config);
    let wall = UnixMillis(2_000);
    let list = s.j.classify(wall, Duration::from_secs(600));
    let mut core = CommandJournal::new(s, list, wall, Timestamp::from_nanos(60_000_000_000));
    let r = core.take_recovery();
    let repeatable: Vec<_> = r
        .commands
        .iter()
        .filter_map(|c| match c {
            JournaledCommand::Repeatable { command, .. } => Some(command.reference.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(repeatable, vec![before, begin], "{:?}", r.commands);
    assert!(
        r.commands.iter().any(|c| matches!(
            c,
            JournaledCommand::Unknown { reference, created_wall }
                if *reference == held && *created_wall == UnixMillis(1_000)
        )),
        "{:?}",
        r.commands
    );
}
