//! Issue 19 item 4: the simulated client process crashes and restarts on the same journal.
//!
//! A client process is an engine, the journal's command policy ([`CommandJournal`], the very
//! code the drivers run) over an in-memory store, and the application that submits commands;
//! in most runs it also has a producer in outbox mode ([`BatchOutbox`] over the same store, as
//! the driver core keeps it: a batch's record is written before its submission is answered,
//! it waits for the engine's room behind the batches journaled before it, its handed mark is
//! written before its frame reaches the transport, its record ends after its outcome is told).
//! Only the store's bytes (a [`MemDir`]) survive the process. Seeded schedules crash it at a
//! file operation of the journal (before a command's frame is sent, in the middle of an append
//! with part of the write on "disk", while an outcome's record ends) or at a moment of virtual
//! time (frames in flight, outcomes unanswered). A new process recovers the store, builds the
//! list, repeats every repeatable command under its reference and reports the ones too old to
//! repeat. The cluster's records then decide:
//!
//! * every command the application submitted was applied at most once;
//! * its outcome reached the application exactly once, before or after a crash, with one
//!   exception: the outcome is handed over before its record's end is written (as the driver
//!   core does), so a crash between the two tells it again after the restart, as `Recovered`
//!   under the same reference (or unknown past the retry horizon), once per such crash; the
//!   other order would lose it. A command whose record was being written when the process died
//!   was never sent: it may instead be absent from the list and never applied, and is counted
//!   as never sent;
//! * every record live at the crash comes back in the list, except the one being appended when
//!   the process died (the torn tail); a batch's comes back handed if its mark was written
//!   (reported of unknown outcome, its record ended once the report was told), unsent
//!   otherwise (submitted again under its record, once);
//! * no batch was ingested twice, and none went to the transport in two lives of the
//!   process; a batch never sent was never ingested; every batch whose outcome the application
//!   got as completed was ingested exactly once; one told only not sent, not admitted or
//!   rejected was never ingested; one of unknown outcome (P-8: handed before a crash, or lost
//!   with its session) was ingested at most once;
//! * every batch whose submission was answered was told an outcome exactly once, but once
//!   more for each crash after it was told and before its record's end was sealed (unknown
//!   when it was handed); a batch whose record was torn by the crash was never answered, never
//!   sent and never ingested;
//! * at every send of a batch, its record is marked handed.
//!
//! `NERVIX_CRASH_SEEDS=n` runs n seeds (CI runs a modest count), `NERVIX_CRASH_SEED=n` replays
//! one, `NERVIX_TRACE=1` prints the failing seed's trace.

use arrow_array::RecordBatch;
use bytes::Bytes;
use nervix_harness::cluster::{
    ingestor_fields, ClusterConfig, ConnId, Faults, Output, SimCluster, INGESTOR,
};
use nervix_journal::{
    kept_since, BatchOutbox, BatchRecord, ClientJournal, ClientJournalConfig, CommandJournal,
    Entry, HandedStore, JournalError, JournalKey, JournaledBatch, JournaledCommand, RecordStore,
    RecoveredBatch, RecoveredCommand, UnsentBatch, DEFAULT_HORIZON,
};
use nervix_protocol::arrow::{decode_stream, encode};
use nervix_protocol::client::{
    Action, BatchId, BatchState, Client, ClientConfig, ClientEvent, CommandHandle, CommandResult,
    Gated, ProducerEvent, ProducerId, ProducerSpec, RetainedCommand, SessionId, SubmitError,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::ClientFrame;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::time::{Timestamp, UnixMillis};
use sf_journal::recovery::SlotFiles;
use sf_journal::slot::{self, parse_segment_name};
use sf_journal::{FileOp, MemDir};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

const WALL_BASE: u64 = 1_767_225_600_000;

/// Where the next crash falls.
#[derive(Debug, Clone, Copy)]
enum CrashAt {
    /// Before the journal's file operation of this number (counted over the run); `torn`
    /// writes that many bytes of it first when it is a write (mid-append). With `after`, the
    /// process dies just after that operation instead, before the call returns: after a
    /// record's last write and before the command's frame is sent.
    FileOp {
        op: u64,
        torn: Option<u64>,
        after: bool,
    },
    /// At this step of the application's schedule.
    Step(usize),
    /// In a call of this kind, after `skip` such calls went whole.
    In { call: Call, cut: Cut, skip: u64 },
}

/// What survives the process: the slot's bytes, and the test's own bookkeeping.
#[derive(Debug, Default)]
struct Slot {
    dir: MemDir,
    /// File operations carried out so far (over every process).
    applied: u64,
    crash: Option<CrashAt>,
    dead: bool,
    /// The key whose put was under way when the process died.
    cut_put: Option<JournalKey>,
    /// The key whose end was under way when the process died.
    cut_end: Option<JournalKey>,
    /// Queries whose record was being put when a process died.
    cut_queries: BTreeSet<String>,
    /// Every command record ever put: its reference and query (the test's ledger).
    journaled: BTreeMap<String, String>,
    /// The key whose handed mark was under way when the process died.
    cut_handed: Option<JournalKey>,
    /// Every batch record ever put: its key and the batch's bytes (the newest put of a key
    /// wins: a key whose record was torn may be given again).
    batch_records: BTreeMap<JournalKey, Vec<u8>>,
    /// Batches (by bytes) whose record was being put when a process died.
    cut_batches: BTreeSet<Vec<u8>>,
    /// The call the process died in, and whether it died after the call's last write.
    died_in: Option<(Call, bool)>,
    /// A crash in the next call of this kind (after `crash_in_skip` of them went whole).
    crash_in: Option<(Call, Cut)>,
    crash_in_skip: u64,
}

/// Where a scripted crash cuts a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// In its first write, with this many bytes of it written (mid-append).
    Torn(u64),
    /// Just after its last write, before the call returns.
    After,
}

/// A call of the journal's store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    PutCommand,
    PutBatch,
    Handed,
    End,
}

/// The journal over the in-memory slot; file operations stop where the crash falls.
#[derive(Debug)]
struct MemStore {
    journal: ClientJournal,
    slot: Slot,
}

impl MemStore {
    /// Carries out `ops` until the crash point, if it falls among them.
    fn carry(&mut self, ops: &[FileOp]) -> bool {
        for op in ops {
            if self.slot.dead {
                return false;
            }
            if let Some(CrashAt::FileOp {
                op: at,
                torn,
                after: false,
            }) = self.slot.crash
            {
                if at == self.slot.applied {
                    // A write, whole or in parts, cut at any byte.
                    if let (Some(n), Some(bytes), FileOp::Write { file, offset, .. })
                    | (Some(n), Some(bytes), FileOp::WriteParts { file, offset, .. }) =
                        (torn, op.written(), op)
                    {
                        let n = (n as usize) % bytes.len().max(1);
                        self.slot.dir.write(file, *offset, &bytes[..n]);
                    }
                    self.slot.dead = true;
                    return false;
                }
            }
            self.slot.dir.apply(op);
            self.slot.applied += 1;
            if let Some(CrashAt::FileOp {
                op: at,
                after: true,
                ..
            }) = self.slot.crash
            {
                if at + 1 == self.slot.applied {
                    self.slot.dead = true;
                    // The call's own operations are all carried out; what follows is not.
                    return op_is_last(op, ops);
                }
            }
        }
        true
    }
}

impl MemStore {
    /// Carries out the operations of one call; false when the process died before they
    /// were all done. The call the process died in is noted.
    fn call(&mut self, call: Call, ops: &[FileOp]) -> bool {
        if let Some((c, cut)) = self.slot.crash_in {
            if c == call && !ops.is_empty() && self.slot.crash_in_skip > 0 {
                self.slot.crash_in_skip -= 1;
            } else if c == call && !ops.is_empty() {
                self.slot.crash_in = None;
                let at = self.slot.applied;
                self.slot.crash = Some(match cut {
                    Cut::Torn(n) => CrashAt::FileOp {
                        op: at,
                        torn: Some(n),
                        after: false,
                    },
                    Cut::After => CrashAt::FileOp {
                        op: at + ops.len() as u64 - 1,
                        torn: None,
                        after: true,
                    },
                });
            }
        }
        let done = self.carry(ops);
        if self.slot.dead && self.slot.died_in.is_none() {
            self.slot.died_in = Some((call, done));
        }
        done
    }

    /// A dead process calls nothing: a call after the crash point (in the same step of the
    /// model) is refused and leaves the journal as the crash left it.
    fn alive(&self) -> Result<(), JournalError> {
        if self.slot.dead {
            Err(JournalError::Exhausted)
        } else {
            Ok(())
        }
    }
}

impl RecordStore for MemStore {
    type Error = JournalError;

    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        self.alive()?;
        let w = self.journal.put(entry, now_millis)?;
        let call = match entry {
            Entry::Command(c) => {
                self.slot
                    .journaled
                    .insert(c.reference.to_string(), c.query.clone());
                Call::PutCommand
            }
            Entry::Batch(b) => {
                self.slot.batch_records.insert(w.key, b.batch.to_vec());
                Call::PutBatch
            }
            _ => Call::PutCommand,
        };
        if !self.call(call, &w.ops) {
            self.slot.cut_put = Some(w.key);
            match entry {
                Entry::Command(c) => {
                    self.slot.cut_queries.insert(c.query.clone());
                }
                Entry::Batch(b) => {
                    self.slot.cut_batches.insert(b.batch.to_vec());
                }
                _ => {}
            }
        }
        Ok(w.key)
    }

    fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        self.alive()?;
        let w = self.journal.end(key, now_millis)?;
        if !self.call(Call::End, &w.ops) {
            self.slot.cut_end = Some(key);
        }
        Ok(())
    }

    fn set_link(&mut self, publishing: bool) {
        self.journal.set_link(if publishing {
            nervix_journal::JournalLink::Publishing
        } else {
            nervix_journal::JournalLink::Reconnecting
        });
    }

    fn live(&self) -> usize {
        self.journal.live()
    }
}

impl HandedStore for MemStore {
    fn handed(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        self.alive()?;
        let w = self.journal.handed(key, now_millis)?;
        if !self.call(Call::Handed, &w.ops) {
            self.slot.cut_handed = Some(key);
        }
        Ok(())
    }
}

/// Whether `op` is the last of `ops` (so the call it belongs to wrote everything).
fn op_is_last(op: &FileOp, ops: &[FileOp]) -> bool {
    ops.last().is_some_and(|l| std::ptr::eq(l, op))
}

/// Small segments, so appends open segments, copy records forward and trim; a `tight`
/// journal fills under a backlog of batches, so submissions and marks are refused.
fn journal_config(tight: bool) -> ClientJournalConfig {
    ClientJournalConfig::new(2048, if tight { 6 * 1024 } else { 32 * 1024 })
}

fn slot_files(dir: &MemDir) -> SlotFiles {
    let mut files = SlotFiles::default();
    for name in dir.names() {
        let bytes = dir.get(name).map(<[u8]>::to_vec).unwrap_or_default();
        if parse_segment_name(name).is_some() {
            files.segments.push((name.to_owned(), bytes));
        } else if name == slot::MANIFEST {
            files.manifest = Some(bytes);
        } else if name == slot::ACK_WATERMARK {
            files.ack_watermark = Some(bytes);
        } else if name == slot::SYMBOL_DICT {
            files.symbol_dict = Some(bytes);
        }
    }
    files
}

/// Milliseconds of virtual time, the journal's clock.
fn millis(now: Timestamp) -> u64 {
    now.as_nanos() / 1_000_000
}

/// The producer of `p` and its fields, while it is open (described and not finishing).
fn open_fields(p: &Process) -> Option<(ProducerId, Vec<nervix_protocol::rows::FieldSpec>)> {
    let id = p.producer?;
    let info = p.engine.producer(id)?;
    if info.state.is_final() || info.state == nervix_protocol::client::ProducerState::Closing {
        return None;
    }
    Some((id, info.description?.fields.to_vec()))
}

/// One life of the client process.
struct Process {
    engine: Client,
    core: CommandJournal<MemStore>,
    conns: BTreeMap<SessionId, ConnId>,
    /// Which application command each engine handle carries (by query).
    handles: BTreeMap<CommandHandle, String>,
    /// Producer batches in outbox mode over the same store, as the driver core keeps them.
    outbox: BatchOutbox,
    /// The application's producer, while it is not finished.
    producer: Option<ProducerId>,
    /// Journaled batches the engine had no room for yet, in submission order: key, number,
    /// batch.
    waiting: VecDeque<(JournalKey, u64, RecordBatch)>,
    /// Which batch (by number) each batch of the engine is.
    taken: BTreeMap<(ProducerId, BatchId), u64>,
    /// The record of each batch (by number) in this life.
    keys: BTreeMap<u64, JournalKey>,
    /// Batches the journal gave back unsent, to submit again once a producer is open.
    resubmit: VecDeque<UnsentBatch>,
}

impl Process {
    /// Whether some batch has not ended yet: journaled and waiting, taken and unanswered, or
    /// given back and not submitted again.
    fn batches_open(&self) -> bool {
        self.outbox.in_flight() > 0 || !self.waiting.is_empty() || !self.resubmit.is_empty()
    }
}

/// What the application knows of one of its producer batches (it survives the process).
#[derive(Debug, Default, Clone)]
struct AppBatch {
    /// Its submission was answered (accepted, journaled): the application holds a handle.
    accepted: bool,
    /// What it was told: the submission's refusal, outcomes, unknown after a restart.
    reports: Vec<String>,
    /// The lives of the process in which its frame went to the transport.
    sent_in: BTreeSet<u64>,
}

#[derive(Debug, Clone)]
enum Delivery {
    Connected(SessionId),
    Refused(SessionId),
    ToServer(SessionId, Bytes),
    ToClient(SessionId, Bytes),
    Closed(SessionId),
}

/// What the application knows of one of its commands (it survives the process: it is what
/// the application was told, which the checks read).
#[derive(Debug, Default, Clone)]
struct AppCommand {
    /// Definitive outcomes reported: completed, failed, refused, or unknown for good.
    reports: Vec<String>,
}

struct World {
    seed: u64,
    now: Timestamp,
    rng: Rng,
    cluster: SimCluster,
    queue: BTreeMap<(Timestamp, u64), Delivery>,
    seq: u64,
    tails: BTreeMap<(SessionId, bool), Timestamp>,
    process: Option<Process>,
    /// The slot while no process runs.
    slot: Option<Slot>,
    life: u64,
    commands: BTreeMap<String, AppCommand>,
    /// Every (reference, query) a command frame carried.
    sent: BTreeSet<(String, String)>,
    trace: Vec<String>,
    problems: Vec<String>,
    crashes: Vec<CrashAt>,
    /// The keys live in the dead process's journal when it crashed.
    live_at_crash: BTreeSet<JournalKey>,
    /// No faults, and a test arms the crashes.
    scripted: bool,
    /// Uncertain commands the application repeats once their record's fate is settled.
    pending_recovery: Vec<RetainedCommand>,
    /// Commands whose outcome the application was told just before the process died, while
    /// their record was ending.
    told_then_died: BTreeMap<String, usize>,
    /// The process has a producer in outbox mode.
    producing: bool,
    /// The application's batches by number (each carries its number as its one `id`).
    batches: BTreeMap<u64, AppBatch>,
    /// Batch numbers by their IPC bytes.
    batch_by_bytes: BTreeMap<Vec<u8>, u64>,
    next_batch: u64,
    /// Whether each batch record live at the crash was marked handed.
    handed_at_crash: BTreeMap<JournalKey, bool>,
    /// Batches whose outcome the application was told just before the process died, while
    /// their record was ending (or whose unknown outcome it was told after a restart, when
    /// the process died while its record ended).
    batch_told_then_died: BTreeMap<u64, usize>,
    /// A scripted crash for the next process, in its first call of this kind.
    next_crash_in: Option<(Call, Cut)>,
    /// The slot's journal is small enough to fill.
    tight: bool,
    stats: Stats,
}

/// What the runs did, summed over seeds.
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    crashes: u64,
    mid_append: u64,
    file_op_crashes: u64,
    never_sent: u64,
    recovered_after_restart: u64,
    unknown_after_restart: u64,
    applied: u64,
    reported: u64,
    /// Crashes just after a journal write, before the call returned.
    after_a_write: u64,
    /// Outcomes told, then told again (`Recovered`) after a crash while their record ended.
    told_again: u64,
    /// Batches submitted (answered), batches completed, batches ingested.
    batches: u64,
    completed: u64,
    ingested: u64,
    /// Batches reported of unknown outcome after a restart; given back unsent and submitted
    /// again.
    batches_unknown_after_restart: u64,
    batches_resubmitted: u64,
    /// Crashes in a batch record's put: mid-append (torn), after its last write before the
    /// submission was answered.
    batch_put_torn: u64,
    batch_put_after: u64,
    /// Crashes in a handed mark: torn (the batch counts unsent), after its last write before
    /// the frame reached the transport.
    handed_torn: u64,
    handed_after: u64,
    /// Crashes in a record's end: torn (before it was sealed), after it was sealed.
    end_torn: u64,
    end_after: u64,
    /// Crashes with a batch journaled and not yet marked handed (between the put and the mark).
    unhanded_at_crash: u64,
    /// Batches whose outcome was told again after a crash while their record ended.
    batches_told_again: u64,
    /// Handed marks the journal refused (the sessions were dropped, nothing sent).
    marks_refused: u64,
    /// Submissions the journal refused (full: nothing queued).
    batches_refused: u64,
}

impl World {
    fn new(seed: u64) -> Self {
        Self::with(seed, false)
    }

    /// A run of `seed`; a `scripted` one has no faults, no crash planned and no restart
    /// delay past a second (its test arms crashes itself).
    fn with(seed: u64, scripted: bool) -> Self {
        let mut rng = Rng::new(seed ^ 0xc2a5_11ed);
        let p = |rng: &mut Rng, max: f64| {
            if rng.chance(0.6) {
                max * (rng.below(1000) as f64 / 1000.0)
            } else {
                0.0
            }
        };
        let faults = if scripted {
            Faults::default()
        } else {
            Faults {
                outcome_unknown: p(&mut rng, 0.15),
                session_ending: p(&mut rng, 0.03),
                too_many_in_flight: p(&mut rng, 0.03),
                ..Faults::default()
            }
        };
        // Producer batches too, in most runs, with the producers' own faults.
        let producing = !scripted && rng.chance(0.8);
        let tight = producing && rng.chance(0.2);
        let faults = if producing {
            Faults {
                batch_unknown: p(&mut rng, 0.1),
                batch_failed: p(&mut rng, 0.05),
                batch_busy: p(&mut rng, 0.1),
                lost_outcome: p(&mut rng, 0.05),
                cut_mid_batch: p(&mut rng, 0.05),
                admission_change: p(&mut rng, 0.1),
                producer_ended: p(&mut rng, 0.05),
                draining: p(&mut rng, 0.02),
                ..faults
            }
        } else {
            faults
        };
        let cluster = SimCluster::new(ClusterConfig {
            nodes: 1,
            seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 7,
            faults,
            ..ClusterConfig::default()
        });
        let mut crashes = Vec::new();
        for _ in 0..if scripted { 0 } else { rng.below(3) + 1 } {
            crashes.push(if producing && rng.chance(0.3) {
                // Aimed at the batches' calls: a record's put, a handed mark, an end.
                let call = [Call::PutBatch, Call::Handed, Call::End][rng.below(3) as usize];
                let cut = if rng.chance(0.5) {
                    Cut::After
                } else {
                    Cut::Torn(rng.below(1 << 20))
                };
                CrashAt::In {
                    call,
                    cut,
                    skip: rng.below(12),
                }
            } else if rng.chance(0.6) {
                {
                    let after = rng.chance(0.3);
                    CrashAt::FileOp {
                        op: rng.below(90),
                        torn: (!after && rng.chance(0.5)).then(|| rng.below(1 << 20)),
                        after,
                    }
                }
            } else {
                CrashAt::Step(rng.below(40) as usize)
            });
        }
        let mut w = Self {
            seed,
            now: Timestamp::ZERO,
            rng,
            cluster,
            queue: BTreeMap::new(),
            seq: 0,
            tails: BTreeMap::new(),
            process: None,
            slot: Some(Slot::default()),
            life: 0,
            commands: BTreeMap::new(),
            sent: BTreeSet::new(),
            trace: Vec::new(),
            problems: Vec::new(),
            crashes,
            live_at_crash: BTreeSet::new(),
            scripted,
            pending_recovery: Vec::new(),
            told_then_died: BTreeMap::new(),
            producing,
            batches: BTreeMap::new(),
            batch_by_bytes: BTreeMap::new(),
            next_batch: 0,
            handed_at_crash: BTreeMap::new(),
            batch_told_then_died: BTreeMap::new(),
            next_crash_in: None,
            tight,
            stats: Stats::default(),
        };
        w.start();
        w
    }

    fn wall(&self) -> UnixMillis {
        UnixMillis(WALL_BASE + self.now.as_nanos() / 1_000_000)
    }

    fn log(&mut self, line: String) {
        let ms = self.now.as_nanos() / 1_000_000;
        self.trace.push(format!("{ms:>8}ms {line}"));
    }

    fn dead(&self) -> bool {
        self.process
            .as_ref()
            .is_some_and(|p| p.core.store().slot.dead)
    }

    /// Starts a process on the slot: recovers it, builds the list, recovers every repeatable
    /// command and reports the rest.
    fn start(&mut self) {
        let mut slot = self.slot.take().unwrap_or_default();
        slot.dead = false;
        slot.crash = None;
        slot.crash_in = self.next_crash_in.take();
        slot.crash_in_skip = 0;
        if let Some(next) = self.crashes.first().copied() {
            slot.crash = match next {
                CrashAt::FileOp { op, torn, after } => Some(CrashAt::FileOp {
                    op: slot.applied + op,
                    torn,
                    after,
                }),
                CrashAt::In { call, cut, skip } => {
                    slot.crash_in = Some((call, cut));
                    slot.crash_in_skip = skip;
                    None
                }
                step => Some(step),
            };
        }
        let (journal, ops) =
            ClientJournal::recover(journal_config(self.tight), &slot_files(&slot.dir))
                .unwrap_or_else(|e| panic!("seed {}: the slot does not recover: {e}", self.seed));
        slot.dir.apply_all(&ops);
        let wall_now = self.wall();
        let list = journal.classify(wall_now, DEFAULT_HORIZON);
        // Nothing journaled is silently dropped: what was live at the crash comes back, but
        // the record being appended when the process died; nothing ended comes back, but the
        // record being ended.
        if self.life > 0 {
            let mut back: BTreeSet<JournalKey> = list
                .commands
                .iter()
                .map(|c| match c {
                    RecoveredCommand::Repeatable { key, .. }
                    | RecoveredCommand::Expired { key, .. } => *key,
                    _ => JournalKey(u64::MAX),
                })
                .collect();
            // A batch comes back as it stood: handed if its mark was written (a mark torn
            // by the crash leaves it unsent), unsent otherwise.
            let handed_at_crash = std::mem::take(&mut self.handed_at_crash);
            for b in &list.batches {
                let (key, handed) = match b {
                    RecoveredBatch::Unsent { key, .. } => (*key, false),
                    RecoveredBatch::UnknownOutcome { key, .. } => (*key, true),
                    _ => continue,
                };
                back.insert(key);
                if let Some(&was) = handed_at_crash.get(&key) {
                    if was != handed && slot.cut_handed != Some(key) {
                        self.problems.push(format!(
                            "batch record {key:?} was {} at the crash and came back {}",
                            if was { "handed" } else { "unhanded" },
                            if handed { "handed" } else { "unsent" }
                        ));
                    }
                }
            }
            let expected = std::mem::take(&mut self.live_at_crash);
            for k in &expected {
                if !back.contains(k) && slot.cut_put != Some(*k) {
                    self.problems.push(format!(
                        "record {k:?} was live at the crash and did not come back"
                    ));
                }
            }
            for k in &back {
                if !expected.contains(k) && slot.cut_end != Some(*k) {
                    self.problems
                        .push(format!("record {k:?} had ended and came back"));
                }
            }
        }
        slot.cut_put = None;
        slot.cut_end = None;
        slot.cut_handed = None;
        slot.died_in = None;
        let ledger = slot.journaled.clone();
        // Which batch each record of unknown outcome is, in journal order (the test's
        // ledger: the list names only the producer and the time).
        let unknown: Vec<Option<u64>> = list
            .batches
            .iter()
            .filter_map(|b| match b {
                RecoveredBatch::UnknownOutcome { key, .. } => Some(
                    slot.batch_records
                        .get(key)
                        .and_then(|bytes| self.batch_by_bytes.get(bytes))
                        .copied(),
                ),
                _ => None,
            })
            .collect();
        let mut list = list;
        let batches = std::mem::take(&mut list.batches);
        let seeds: Vec<Endpoint> = self
            .cluster
            .endpoints()
            .iter()
            .filter_map(|e| Endpoint::parse(e).ok())
            .collect();
        let engine = Client::new(ClientConfig::new(
            seeds,
            self.seed ^ 0x00c1_1e47 ^ self.life.wrapping_mul(0x1000_0001),
        ));
        let store = MemStore { journal, slot };
        let core = CommandJournal::new(store, list, wall_now, self.now);
        self.process = Some(Process {
            engine,
            core,
            conns: BTreeMap::new(),
            handles: BTreeMap::new(),
            outbox: BatchOutbox::new(batches),
            producer: None,
            waiting: VecDeque::new(),
            taken: BTreeMap::new(),
            keys: BTreeMap::new(),
            resubmit: VecDeque::new(),
        });
        self.life += 1;
        self.log(format!("process {} starts", self.life));
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return;
        };
        // As the driver core does: the list (commands, then batches) is handed to the
        // application, then the records of what it reports unknown end.
        let recovery = p.core.take_recovery();
        let batches = p.outbox.take_recovery();
        let mut reports = Vec::new();
        let mut repeat = Vec::new();
        for c in recovery.commands {
            match c {
                JournaledCommand::Repeatable { command, .. } => repeat.push(command),
                JournaledCommand::Unknown { reference, .. } => reports.push(reference),
                _ => {}
            }
        }
        let mut told_queries = Vec::new();
        for reference in reports {
            let query = ledger.get(&reference).cloned().unwrap_or_default();
            self.stats.unknown_after_restart += 1;
            self.report(&query, format!("Unknown ref={reference}"));
            told_queries.push(query);
        }
        let mut told_batches = Vec::new();
        let mut unknown = unknown.into_iter();
        for b in batches {
            match b {
                JournaledBatch::UnknownOutcome { .. } => match unknown.next().flatten() {
                    Some(n) => {
                        self.stats.batches_unknown_after_restart += 1;
                        self.report_batch(n, "Unknown after a restart".into());
                        told_batches.push(n);
                    }
                    None => self
                        .problems
                        .push("a batch of unknown outcome the test never submitted".into()),
                },
                JournaledBatch::Unsent(u) => {
                    if let Some(p) = self.process.as_mut() {
                        p.resubmit.push_back(u);
                    }
                }
                _ => {}
            }
        }
        // Told: the records of what was reported unknown end now.
        if let Some(p) = self.process.as_mut() {
            let _ = p.core.recovery_reported(now);
            let _ = p.outbox.recovery_reported(p.core.store_mut(), millis(now));
        }
        if self.dead() {
            // Told, and the process died before those ends were all written: they are told
            // again after the next start.
            for q in told_queries {
                *self.told_then_died.entry(q).or_default() += 1;
            }
            for n in told_batches {
                *self.batch_told_then_died.entry(n).or_default() += 1;
            }
            return self.crash();
        }
        for command in repeat {
            self.stats.recovered_after_restart += 1;
            self.recover(&command);
            if self.dead() {
                return self.crash();
            }
        }
        self.tend_producer();
    }

    fn report_batch(&mut self, n: u64, what: String) {
        self.log(format!("app batch {n} {what}"));
        self.batches.entry(n).or_default().reports.push(what);
    }

    /// Opens the application's producer when it has none, and submits again the batches
    /// the journal gave back unsent once it is open.
    fn tend_producer(&mut self) {
        if !self.producing {
            return;
        }
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return;
        };
        if p.producer.is_none() {
            let spec =
                ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(2, 64 * 1024);
            match p.engine.open_producer(now, spec) {
                Ok(id) => {
                    p.producer = Some(id);
                    self.log(format!("app open producer {id:?}"));
                }
                Err(e) => self.log(format!("app open producer refused: {e}")),
            }
        }
        self.resubmit_all();
    }

    /// Submits again, reusing its record, every batch the journal gave back unsent.
    fn resubmit_all(&mut self) {
        loop {
            let Some(p) = self.process.as_mut() else {
                return;
            };
            let Some((pid, fields)) = open_fields(p) else {
                return;
            };
            let Some(u) = p.resubmit.pop_front() else {
                return;
            };
            let key = u.key();
            if !p.outbox.reuse(key) {
                self.problems.push(format!(
                    "the record {key:?} of an unsent batch is not reusable"
                ));
                continue;
            }
            let Some(&n) = self.batch_by_bytes.get(u.batch.as_ref()) else {
                self.problems
                    .push("an unsent batch the test never submitted".into());
                continue;
            };
            let batch = match decode_stream(&u.batch, &fields) {
                Ok(b) => b,
                Err(e) => {
                    p.outbox.give_back(key);
                    self.problems
                        .push(format!("batch {n} given back unsent does not read: {e}"));
                    continue;
                }
            };
            p.keys.insert(n, key);
            self.stats.batches_resubmitted += 1;
            self.log(format!("app submit again batch {n} under {key:?}"));
            if !self.offer(pid, key, n, batch, Some(u)) {
                return;
            }
        }
    }

    /// A new batch of the application: its record first (the submission is answered once
    /// it is written), then the engine takes it or it waits for room.
    fn submit_batch(&mut self) {
        let (now, wall) = (self.now, self.wall());
        let Some(p) = self.process.as_mut() else {
            return;
        };
        let Some((pid, _)) = open_fields(p) else {
            return;
        };
        let Ok(mut b) = p.engine.batch_builder(pid) else {
            return;
        };
        self.next_batch += 1;
        let n = self.next_batch;
        let batch = b
            .column("id", &[n])
            .and_then(|_| b.nullable_column("name", &[Some("b")]))
            .and_then(|_| b.finish());
        let Some(bytes) = batch.as_ref().ok().and_then(|b| encode(b).ok()) else {
            self.problems.push(format!("batch {n} does not build"));
            return;
        };
        let Ok(batch) = batch else {
            return;
        };
        self.batch_by_bytes.insert(bytes.clone(), n);
        self.batches.entry(n).or_default();
        let record = BatchRecord {
            domain: "tenant".into(),
            ingestor: INGESTOR.into(),
            batch: bytes.into(),
            created_wall: wall,
        };
        let r = p.outbox.put(p.core.store_mut(), record, millis(now));
        if p.core.store().slot.dead {
            // The process died inside the submission: it was never answered.
            return;
        }
        match r {
            Ok(key) => {
                p.keys.insert(n, key);
                self.stats.batches += 1;
                if let Some(a) = self.batches.get_mut(&n) {
                    a.accepted = true;
                }
                self.log(format!("app submit batch {n} under {key:?}"));
                self.offer(pid, key, n, batch, None);
            }
            Err(e) => {
                self.stats.batches_refused += 1;
                self.report_batch(n, format!("refused by the journal {e}"));
            }
        }
    }

    /// A journaled batch goes to the engine, or waits behind those waiting for room (as the
    /// driver core's outbox does). False when it could not go (a batch given back unsent is
    /// kept to go again).
    fn offer(
        &mut self,
        pid: ProducerId,
        key: JournalKey,
        n: u64,
        batch: RecordBatch,
        reused: Option<UnsentBatch>,
    ) -> bool {
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return false;
        };
        if p.waiting.is_empty() {
            match p.engine.submit(now, pid, &batch) {
                Ok(id) => {
                    p.outbox.taken(key, pid, id);
                    p.taken.insert((pid, id), n);
                    return true;
                }
                Err(SubmitError::Full) => {}
                Err(e) => {
                    match reused {
                        Some(u) => {
                            p.outbox.give_back(key);
                            p.resubmit.push_front(u);
                        }
                        None => {
                            self.report_batch(n, format!("refused {e}"));
                            self.drop_record(key, n);
                        }
                    }
                    return false;
                }
            }
        }
        p.waiting.push_back((key, n, batch));
        true
    }

    /// The record of a batch the engine never took ends (after the application was told).
    fn drop_record(&mut self, key: JournalKey, n: u64) {
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return;
        };
        let _ = p.outbox.dropped(p.core.store_mut(), key, millis(now));
        if p.core.store().slot.dead {
            *self.batch_told_then_died.entry(n).or_default() += 1;
        }
    }

    /// Hands the batches waiting for room to the engine in order, while it takes them; one
    /// it refuses for good ends unsent.
    fn retry_waiting(&mut self) {
        loop {
            let now = self.now;
            let Some(p) = self.process.as_mut() else {
                return;
            };
            let Some(pid) = p.producer else {
                return;
            };
            let Some((key, n, batch)) = p.waiting.pop_front() else {
                return;
            };
            match p.engine.submit(now, pid, &batch) {
                Ok(id) => {
                    p.outbox.taken(key, pid, id);
                    p.taken.insert((pid, id), n);
                }
                Err(SubmitError::Full) => {
                    p.waiting.push_front((key, n, batch));
                    return;
                }
                Err(_) => {
                    self.report_batch(n, "NotSent".into());
                    self.drop_record(key, n);
                    if self.dead() {
                        return;
                    }
                }
            }
        }
    }

    /// A producer event: an outcome is told to the application, then its record ends (as
    /// the driver core does); a producer that finished leaves its waiting batches unsent.
    fn on_producer_event(&mut self, pid: ProducerId, e: ProducerEvent) {
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return;
        };
        match e {
            ProducerEvent::Outcome { batch, outcome } => {
                let Some(n) = p.taken.remove(&(pid, batch)) else {
                    self.problems
                        .push(format!("an outcome of {pid:?} {batch:?} never taken"));
                    return;
                };
                let what = format!("{outcome:?}");
                let kind = what
                    .split([' ', '{', '('])
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                self.report_batch(n, kind);
                let Some(p) = self.process.as_mut() else {
                    return;
                };
                let _ = p
                    .outbox
                    .outcome(p.core.store_mut(), pid, batch, millis(now));
                if p.core.store().slot.dead {
                    *self.batch_told_then_died.entry(n).or_default() += 1;
                }
            }
            ProducerEvent::Refused { .. }
            | ProducerEvent::ReopenRequired(_)
            | ProducerEvent::Closed
            | ProducerEvent::Ended { .. } => {
                let ours = p.producer == Some(pid);
                let waiting = if ours {
                    p.producer = None;
                    std::mem::take(&mut p.waiting)
                } else {
                    VecDeque::new()
                };
                self.log(format!("app producer {pid:?} {e:?}"));
                {
                    for (key, n, _) in waiting {
                        self.report_batch(n, "NotSent".into());
                        self.drop_record(key, n);
                        if self.dead() {
                            return;
                        }
                    }
                }
            }
            other => {
                let open = matches!(other, ProducerEvent::Opened(_) | ProducerEvent::Restored(_));
                let line: String = format!("{other:?}").chars().take(60).collect();
                self.log(format!("app producer {pid:?} {line}"));
                if open {
                    // Batches given back unsent go again once a producer is open.
                    self.resubmit_all();
                }
            }
        }
    }

    fn report(&mut self, query: &str, what: String) {
        self.log(format!("app outcome {query:?} {what}"));
        self.commands
            .entry(query.to_owned())
            .or_default()
            .reports
            .push(what);
    }

    /// Repeats `command` under its record.
    fn recover(&mut self, command: &RetainedCommand) {
        let (now, wall) = (self.now, self.wall());
        let Some(p) = self.process.as_mut() else {
            return;
        };
        let r = p.core.recover(&mut p.engine, now, wall, command);
        if p.core.store().slot.dead {
            return;
        }
        match r {
            Ok(h) => {
                p.handles.insert(h, command.query.clone());
                self.log(format!(
                    "app recover {:?} ref={}",
                    command.query, command.reference
                ));
            }
            Err(e) => {
                let q = command.query.clone();
                self.report(&q, format!("recover refused {e:?}"));
            }
        }
    }

    fn execute(&mut self, query: String) {
        let (now, wall) = (self.now, self.wall());
        self.commands.entry(query.clone()).or_default();
        let Some(p) = self.process.as_mut() else {
            return;
        };
        let r = p.core.execute(&mut p.engine, now, wall, &query);
        if p.core.store().slot.dead {
            // The process died inside the call: the application never got a handle.
            return;
        }
        match r {
            Ok(h) => {
                let reference = p.engine.reference_of(h).map(|r| r.to_string());
                p.handles.insert(h, query.clone());
                self.log(format!(
                    "app execute {query:?} ref={}",
                    reference.as_deref().unwrap_or("?")
                ));
            }
            Err(Gated::Gate(e)) => self.report(&query, format!("refused by the journal {e}")),
            Err(e) => self.report(&query, format!("refused {e:?}")),
        }
    }

    /// The process dies: its engine, sessions and memory go; the slot's bytes stay.
    fn crash(&mut self) {
        let Some(mut p) = self.process.take() else {
            return;
        };
        let at = if self.crashes.is_empty() {
            CrashAt::Step(usize::MAX)
        } else {
            self.crashes.remove(0)
        };
        self.stats.crashes += 1;
        if let CrashAt::FileOp { torn, after, .. } = at {
            self.stats.file_op_crashes += 1;
            if torn.is_some() {
                self.stats.mid_append += 1;
            }
            if after {
                self.stats.after_a_write += 1;
            }
        }
        if let CrashAt::In { cut, .. } = at {
            self.stats.file_op_crashes += 1;
            match cut {
                Cut::Torn(_) => self.stats.mid_append += 1,
                Cut::After => self.stats.after_a_write += 1,
            }
        }
        self.live_at_crash = p
            .core
            .store()
            .journal
            .live_entries()
            .map(|e| e.key)
            .collect();
        self.handed_at_crash = p
            .core
            .store()
            .journal
            .live_entries()
            .filter(|e| matches!(e.entry, Entry::Batch(_)))
            .map(|e| (e.key, e.handed))
            .collect();
        if p.outbox.unhanded() || !p.waiting.is_empty() {
            self.stats.unhanded_at_crash += 1;
        }
        match p.core.store().slot.died_in {
            Some((Call::PutBatch, false)) => self.stats.batch_put_torn += 1,
            Some((Call::PutBatch, true)) => self.stats.batch_put_after += 1,
            Some((Call::Handed, false)) => self.stats.handed_torn += 1,
            Some((Call::Handed, true)) => self.stats.handed_after += 1,
            Some((Call::End, false)) => self.stats.end_torn += 1,
            Some((Call::End, true)) => self.stats.end_after += 1,
            _ => {}
        }
        self.pending_recovery.clear();
        let slot = std::mem::take(&mut p.core.store_mut().slot);
        self.log(format!("process {} crashes at {at:?}", self.life));
        let now = self.now;
        for conn in p.conns.values() {
            self.cluster.close(now, *conn, false);
        }
        self.queue.clear();
        self.tails.clear();
        self.drain_cluster();
        self.slot = Some(slot);
    }

    fn schedule(&mut self, stream: Option<(SessionId, bool)>, d: Delivery) {
        let delay = Duration::from_micros(200 + self.rng.below(20_000));
        let mut at = self.now + delay;
        if let Some(key) = stream {
            if let Some(&tail) = self.tails.get(&key) {
                at = at.max(tail);
            }
            self.tails.insert(key, at);
        }
        self.seq += 1;
        self.queue.insert((at, self.seq), d);
    }

    fn drain_cluster(&mut self) {
        while let Some((conn, out)) = self.cluster.poll_output() {
            let Some(sid) = self
                .process
                .as_ref()
                .and_then(|p| p.conns.iter().find(|(_, c)| **c == conn).map(|(s, _)| *s))
            else {
                continue;
            };
            match out {
                Output::Frame(f) => self.schedule(Some((sid, false)), Delivery::ToClient(sid, f)),
                Output::Close => self.schedule(Some((sid, false)), Delivery::Closed(sid)),
            }
        }
    }

    /// Carries out the engine's actions and hands its events to the application. Stops where
    /// the process dies.
    fn pump(&mut self) {
        loop {
            if self.dead() {
                return self.crash();
            }
            // Batches waiting for room go when the engine has room; then, before any frame
            // reaches the transport, every batch the engine put on the wire is marked handed
            // (as the driver core's drain does).
            self.retry_waiting();
            if self.dead() {
                return self.crash();
            }
            let now = self.now;
            let Some(p) = self.process.as_mut() else {
                return;
            };
            if p.outbox.unhanded() {
                let engine = &p.engine;
                let r = p
                    .outbox
                    .before_send(p.core.store_mut(), millis(now), |pid, b| {
                        engine.batch_state(pid, b) == Some(BatchState::Sent)
                    });
                if p.core.store().slot.dead {
                    return self.crash();
                }
                if let Err(e) = r {
                    // A mark not written keeps every frame the engine holds from the
                    // transport: the sessions are dropped uncleanly (their batches end of
                    // unknown outcome and are never sent again).
                    self.stats.marks_refused += 1;
                    let conns = std::mem::take(&mut p.conns);
                    self.log(format!("a handed mark was refused ({e}): sessions dropped"));
                    for (sid, conn) in conns {
                        self.cluster.close(now, conn, false);
                        self.schedule(None, Delivery::Refused(sid));
                    }
                    self.drain_cluster();
                    continue;
                }
            }
            if let Some(a) = p.engine.poll_action() {
                match a {
                    Action::Connect { session, endpoint } => {
                        match self.cluster.connect(now, endpoint.as_str()) {
                            Ok(conn) => {
                                p.conns.insert(session, conn);
                                self.schedule(Some((session, false)), Delivery::Connected(session));
                            }
                            Err(_) => self.schedule(None, Delivery::Refused(session)),
                        }
                    }
                    Action::Send { session, frame } => {
                        if let Ok(f) = ClientFrame::check(frame.clone()) {
                            match &f.unpack().request {
                                ClientRequestT::CommandRequest(c) => {
                                    self.sent
                                        .insert((c.execution_reference.clone(), c.query.clone()));
                                }
                                ClientRequestT::SubmitBatchRequest(r)
                                    if p.conns.contains_key(&session) =>
                                {
                                    // P-8: its record says handed before its frame goes.
                                    let n = self.batch_by_bytes.get(&r.batch).copied();
                                    let key = n.and_then(|n| p.keys.get(&n)).copied();
                                    let handed = key.and_then(|k| {
                                        p.core
                                            .store()
                                            .journal
                                            .live_entries()
                                            .find(|e| e.key == k)
                                            .map(|e| e.handed)
                                    });
                                    if handed != Some(true) {
                                        self.problems.push(format!(
                                            "batch {n:?} ({key:?}) sent without its handed mark ({handed:?})"
                                        ));
                                    }
                                    if let Some(n) = n {
                                        self.batches
                                            .entry(n)
                                            .or_default()
                                            .sent_in
                                            .insert(self.life);
                                    }
                                }
                                _ => {}
                            }
                        }
                        self.schedule(Some((session, true)), Delivery::ToServer(session, frame));
                    }
                    Action::Close { session, clean } => {
                        if let Some(conn) = p.conns.remove(&session) {
                            self.cluster.close(now, conn, clean);
                            self.drain_cluster();
                        }
                    }
                    _ => {}
                }
                continue;
            }
            if let Some(e) = p.engine.poll_event() {
                if let ClientEvent::Command { handle, result } = e {
                    self.on_result(handle, result);
                }
                continue;
            }
            if let Some((pid, e)) = p.engine.poll_producer_events() {
                self.on_producer_event(pid, e);
                continue;
            }
            return;
        }
    }

    /// A command's result: the application is told, then its record ends (or stays), as the
    /// driver core does. An uncertain result the application can recover, it recovers.
    fn on_result(&mut self, handle: CommandHandle, result: CommandResult) {
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return;
        };
        let query = p.handles.remove(&handle).unwrap_or_default();
        let kept = kept_since(&result);
        let keep = kept.is_some();
        match result {
            CommandResult::Completed(r) => {
                self.report(&query, format!("Completed {:?}", r.origin()))
            }
            CommandResult::Failed(f) => self.report(&query, format!("Failed {f:?}")),
            CommandResult::Uncertain { command, cause } => {
                if keep {
                    self.log(format!("app uncertain {query:?} {cause:?}, recovers"));
                    self.pending_recovery.push(command);
                } else {
                    self.report(&query, format!("Uncertain {cause:?}"));
                }
            }
            _ => self.report(&query, "?".into()),
        }
        let Some(p) = self.process.as_mut() else {
            return;
        };
        let _ = p.core.ended_as(handle, kept, now);
        if p.core.store().slot.dead && !keep {
            // Told, and the process died before the record's end was all written.
            *self.told_then_died.entry(query).or_default() += 1;
        }
        if !p.core.store().slot.dead {
            for command in std::mem::take(&mut self.pending_recovery) {
                self.recover(&command);
                if self.dead() {
                    break;
                }
            }
        }
    }

    fn deliver(&mut self, d: Delivery) {
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return;
        };
        match d {
            Delivery::Connected(sid) => p.engine.handle_connected(now, sid),
            Delivery::Refused(sid) => p.engine.handle_closed(now, sid),
            Delivery::Closed(sid) => {
                if p.conns.remove(&sid).is_some() {
                    p.engine.handle_closed(now, sid);
                }
            }
            Delivery::ToClient(sid, f) => {
                if p.conns.contains_key(&sid) {
                    p.engine.handle_frame(now, sid, f);
                }
            }
            Delivery::ToServer(sid, f) => {
                if let Some(&conn) = p.conns.get(&sid) {
                    self.cluster.receive(now, conn, f);
                    self.drain_cluster();
                }
            }
        }
        self.pump();
    }

    /// Advances virtual time by `d`, delivering and timing out what falls in it.
    fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        for _ in 0..100_000 {
            self.pump();
            let next_delivery = self.queue.keys().next().map(|k| k.0);
            let next_timeout = self.process.as_ref().and_then(|p| p.engine.poll_timeout());
            let next_cluster = self.cluster.next_due().map(|t| t.max(self.now));
            let next = [next_delivery, next_timeout, next_cluster]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    let now = self.now;
                    if next_delivery == Some(t) {
                        if let Some((_, d)) = self.queue.pop_first() {
                            self.deliver(d);
                        }
                    } else {
                        if next_timeout == Some(t) {
                            if let Some(p) = self.process.as_mut() {
                                p.engine.handle_timeout(now);
                            }
                        }
                        self.cluster.advance(now);
                        self.drain_cluster();
                    }
                }
                _ => break,
            }
        }
        self.now = self.now.max(end);
        let now = self.now;
        if let Some(p) = self.process.as_mut() {
            p.engine.handle_timeout(now);
        }
        self.cluster.advance(now);
        self.drain_cluster();
        self.pump();
    }

    /// The application's schedule, crashes and restarts, then everything settles.
    fn run(&mut self) {
        let steps = 40;
        for step in 0..steps {
            if self.process.is_none() {
                self.restart();
            }
            if let Some(CrashAt::Step(at)) = self.crashes.first() {
                if *at == step {
                    self.crash();
                    self.restart();
                }
            }
            if self.rng.chance(0.7) && self.process.is_some() {
                let query = format!("CREATE RELAY c{step};");
                self.execute(query);
                self.pump();
            }
            if self.producing && self.process.is_some() {
                self.tend_producer();
                self.pump();
                if self.rng.chance(0.6) {
                    for _ in 0..1 + self.rng.below(4) {
                        self.submit_batch();
                        self.pump();
                    }
                }
            }
            let quantum = Duration::from_millis(self.rng.below(150));
            self.run_for(quantum);
        }
        for _ in 0..4000 {
            if self.process.is_none() {
                self.restart();
            }
            self.tend_producer();
            self.pump();
            let busy = self
                .process
                .as_ref()
                .is_some_and(|p| p.engine.outstanding_commands() > 0 || p.batches_open());
            if !busy && self.process.is_some() {
                break;
            }
            self.run_for(Duration::from_secs(1));
        }
    }

    /// A new process after some time down (now and then past the retry horizon).
    fn restart(&mut self) {
        let down = if !self.scripted && self.rng.chance(0.1) {
            DEFAULT_HORIZON + Duration::from_secs(60)
        } else {
            Duration::from_millis(self.rng.below(3000))
        };
        let now = self.now + down;
        self.now = now;
        self.cluster.advance(now);
        self.drain_cluster();
        self.start();
        self.pump();
    }

    /// The checks against the cluster's records.
    fn check(&mut self) -> Result<(), String> {
        let mut problems = std::mem::take(&mut self.problems);
        self.check_batches(&mut problems);
        if self
            .process
            .as_ref()
            .is_some_and(|p| p.engine.outstanding_commands() > 0)
        {
            problems.push("commands still outstanding at the end".into());
        }
        let trace = self.cluster.trace().to_vec();
        let cut = self
            .process
            .as_ref()
            .map(|p| p.core.store().slot.cut_queries.clone())
            .or_else(|| self.slot.as_ref().map(|s| s.cut_queries.clone()))
            .unwrap_or_default();
        for (query, app) in &self.commands {
            let references: BTreeSet<&String> = self
                .sent
                .iter()
                .filter(|(_, q)| q == query)
                .map(|(r, _)| r)
                .collect();
            // Applied at most once: one reference at most has a record, and it was executed
            // (not recovered) at most once.
            let recorded: Vec<&&String> = references
                .iter()
                .filter(|r| self.cluster.recorded_outcome(r).is_some())
                .collect();
            if recorded.len() > 1 {
                problems.push(format!(
                    "{query:?} applied under {} references",
                    recorded.len()
                ));
            }
            for r in &references {
                let needle = format!("ref={r} ");
                let executed = trace
                    .iter()
                    .filter(|l| l.contains(&needle) && l.contains("-> CommandCompleted(Executed)"))
                    .count();
                if executed > 1 {
                    problems.push(format!("{query:?} ref={r} executed {executed} times"));
                }
            }
            self.stats.applied += recorded.len() as u64;
            // Told, then the process died before the record's end was sealed: told again
            // after the restart (once per such crash), as recovered or unknown.
            let told = self.told_then_died.get(query).copied().unwrap_or(0);
            let again = app.reports.len() >= 2
                && app.reports.len() <= 1 + told
                && (app.reports[0].starts_with("Completed")
                    || app.reports[0].starts_with("Unknown"))
                && app.reports[1..].iter().all(|r| {
                    r.starts_with("Completed Some(Recovered)") || r.starts_with("Unknown")
                });
            match app.reports.len() {
                1 => self.stats.reported += 1,
                0 if references.is_empty() && cut.contains(query) => self.stats.never_sent += 1,
                _ if again => self.stats.told_again += 1,
                n => problems.push(format!(
                    "{query:?} reported {n} times: {:?} (sent under {references:?}, recorded {})",
                    app.reports,
                    recorded.len()
                )),
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        let trace = if std::env::var_os("NERVIX_TRACE").is_some() {
            let mut t = self.trace.clone();
            t.extend(self.cluster.trace().iter().map(|l| format!("cluster {l}")));
            t.join("\n")
        } else {
            "(NERVIX_TRACE=1 prints the trace)".into()
        };
        Err(format!(
            "seed {} (replay: NERVIX_CRASH_SEED={}):\n  {}\n{trace}",
            self.seed,
            self.seed,
            problems.join("\n  ")
        ))
    }
}

impl World {
    /// The batches' checks against the cluster's record of what it ingested (P-8):
    ///
    /// * no batch was ingested twice, and none went to the transport in two lives of the
    ///   process (a batch handed before a crash is never sent again);
    /// * a batch never handed to the transport was never ingested;
    /// * every batch whose outcome the application got as completed was ingested exactly
    ///   once; one told only that it was not sent, not admitted or rejected was not ingested;
    ///   one of unknown outcome (lost with its session, or handed before a crash) was
    ///   ingested at most once;
    /// * every batch whose submission was answered was told an outcome (or unknown) exactly
    ///   once, but for a crash while its record ended, after the application was told: the
    ///   record comes back and the batch is told again after the restart (unknown if it was
    ///   handed, its new outcome if it was given back unsent), once per such crash. A batch
    ///   whose record was being written when the process died was never answered: it is
    ///   told nothing and never ingested, or its record was whole and it went as any other.
    fn check_batches(&mut self, problems: &mut Vec<String>) {
        if self.process.as_ref().is_some_and(Process::batches_open) {
            problems.push("batches still open at the end".into());
        }
        let mut ingested: BTreeMap<u64, usize> = BTreeMap::new();
        for ids in self.cluster.ingested() {
            for id in ids {
                *ingested.entry(*id).or_default() += 1;
            }
        }
        let cut = self
            .process
            .as_ref()
            .map(|p| p.core.store().slot.cut_batches.clone())
            .or_else(|| self.slot.as_ref().map(|s| s.cut_batches.clone()))
            .unwrap_or_default();
        let bytes_of: BTreeMap<u64, &Vec<u8>> =
            self.batch_by_bytes.iter().map(|(b, n)| (*n, b)).collect();
        for (n, app) in &self.batches {
            let times = ingested.get(n).copied().unwrap_or(0);
            self.stats.ingested += times as u64;
            if times > 1 {
                problems.push(format!("batch {n} ingested {times} times"));
            }
            if app.sent_in.len() > 1 {
                problems.push(format!(
                    "batch {n} went to the transport in lives {:?}",
                    app.sent_in
                ));
            }
            if app.sent_in.is_empty() && times > 0 {
                problems.push(format!("batch {n} ingested, never sent"));
            }
            let completed = app.reports.iter().any(|r| r == "Completed");
            if completed {
                self.stats.completed += 1;
                if times != 1 {
                    problems.push(format!("batch {n} completed, ingested {times} times"));
                }
            }
            let none = ["NotSent", "NotAdmitted", "Rejected", "refused"];
            if !app.reports.is_empty()
                && app
                    .reports
                    .iter()
                    .all(|r| none.iter().any(|w| r.starts_with(w)))
                && times > 0
            {
                problems.push(format!(
                    "batch {n} told {:?}, ingested {times} times",
                    app.reports
                ));
            }
            let told = self.batch_told_then_died.get(n).copied().unwrap_or(0);
            let never_answered = !app.accepted
                && app.reports.is_empty()
                && bytes_of.get(n).is_some_and(|b| cut.contains(*b));
            match app.reports.len() {
                1 => {}
                0 if never_answered => {
                    if times > 0 || !app.sent_in.is_empty() {
                        problems.push(format!("batch {n}, never answered, went out"));
                    }
                }
                r if r >= 2 && r <= 1 + told => self.stats.batches_told_again += 1,
                r => problems.push(format!(
                    "batch {n} (accepted {}) told {r} times: {:?} (ingested {times}, sent in {:?})",
                    app.accepted, app.reports, app.sent_in
                )),
            }
        }
    }
}

fn seeds(default: u64) -> std::ops::Range<u64> {
    let var = |n: &str| {
        std::env::var(n)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    if let Some(s) = var("NERVIX_CRASH_SEED") {
        return s..s + 1;
    }
    let base = var("NERVIX_SEED_BASE").unwrap_or(0);
    base..base + var("NERVIX_CRASH_SEEDS").unwrap_or(default)
}

fn run(seed: u64) -> (Result<(), String>, Stats) {
    let mut w = World::new(seed);
    w.run();
    let r = w.check();
    (r, w.stats)
}

#[test]
fn client_crash_every_command_applied_at_most_once_and_every_batch_ingested_at_most_once() {
    let started = std::time::Instant::now();
    let mut total = Stats::default();
    let mut failures = Vec::new();
    let range = seeds(200);
    let count = range.end - range.start;
    for seed in range {
        let (r, s) = run(seed);
        if let Err(e) = r {
            failures.push(e);
        }
        total.crashes += s.crashes;
        total.file_op_crashes += s.file_op_crashes;
        total.mid_append += s.mid_append;
        total.never_sent += s.never_sent;
        total.recovered_after_restart += s.recovered_after_restart;
        total.unknown_after_restart += s.unknown_after_restart;
        total.applied += s.applied;
        total.reported += s.reported;
        total.told_again += s.told_again;
        total.after_a_write += s.after_a_write;
        total.batches += s.batches;
        total.completed += s.completed;
        total.ingested += s.ingested;
        total.batches_unknown_after_restart += s.batches_unknown_after_restart;
        total.batches_resubmitted += s.batches_resubmitted;
        total.batch_put_torn += s.batch_put_torn;
        total.batch_put_after += s.batch_put_after;
        total.handed_torn += s.handed_torn;
        total.handed_after += s.handed_after;
        total.end_torn += s.end_torn;
        total.end_after += s.end_after;
        total.unhanded_at_crash += s.unhanded_at_crash;
        total.batches_told_again += s.batches_told_again;
        total.marks_refused += s.marks_refused;
        total.batches_refused += s.batches_refused;
    }
    eprintln!("{count} seeds in {:?}: {total:?}", started.elapsed());
    assert!(
        failures.is_empty(),
        "{} seeds failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    if count >= 100 {
        assert!(total.crashes > count, "crashes happen: {total:?}");
        assert!(
            total.mid_append > 0 && total.file_op_crashes > 0,
            "{total:?}"
        );
        assert!(total.recovered_after_restart > 0, "{total:?}");
        assert!(total.after_a_write > 0, "{total:?}");
        assert!(total.unknown_after_restart > 0, "{total:?}");
        // The batches' crash points: mid-append of a record and after its last write, between
        // the put and the mark, between the mark and the send, either side of an end.
        assert!(
            total.batch_put_torn > 0 && total.batch_put_after > 0,
            "{total:?}"
        );
        assert!(total.unhanded_at_crash > 0, "{total:?}");
        assert!(total.handed_after > 0 && total.handed_torn > 0, "{total:?}");
        assert!(total.end_torn > 0 && total.end_after > 0, "{total:?}");
        assert!(total.batches_unknown_after_restart > 0, "{total:?}");
        assert!(total.batches_resubmitted > 0, "{total:?}");
        assert!(total.completed > total.batches / 2, "{total:?}");
    }
}

impl World {
    /// Arms a crash in the running process, `op` file operations from now.
    fn arm(&mut self, op: u64, torn: Option<u64>, after: bool) {
        let Some(p) = self.process.as_mut() else {
            panic!("no process to crash");
        };
        let slot = &mut p.core.store_mut().slot;
        let at = CrashAt::FileOp {
            op: slot.applied + op,
            torn,
            after,
        };
        slot.crash = Some(at);
        self.crashes = vec![at];
    }

    /// Runs until every command has ended, restarting a crashed process.
    fn settle(&mut self) {
        for _ in 0..60 {
            if self.process.is_none() {
                self.restart();
            }
            self.tend_producer();
            self.pump();
            self.run_for(Duration::from_millis(500));
        }
    }

    fn reports(&self, query: &str) -> Vec<String> {
        self.commands
            .get(query)
            .map(|c| c.reports.clone())
            .unwrap_or_default()
    }

    fn applied(&self, query: &str) -> usize {
        self.sent
            .iter()
            .filter(|(r, q)| q == query && self.cluster.recorded_outcome(r).is_some())
            .count()
    }
}

const FIRST: &str = "CREATE RELAY first;";
const SECOND: &str = "CREATE RELAY second;";

/// One command executed and settled in a calm scripted run, the slot's first segment open.
fn one_command_done() -> World {
    let mut w = World::with(3, true);
    w.execute(FIRST.into());
    w.settle();
    assert_eq!(w.reports(FIRST), ["Completed Some(Executed)"]);
    w
}

#[test]
fn client_crash_after_a_record_is_written_and_before_its_send_the_command_is_recovered_once() {
    let mut w = one_command_done();
    // A record is two writes (the frame, then the checksum that seals it): die once the
    // second is done, before the engine's frame goes out.
    w.arm(1, None, true);
    w.execute(SECOND.into());
    w.pump();
    assert!(w.process.is_none(), "the process died in the gate");
    assert!(w.sent.iter().all(|(_, q)| q != SECOND), "nothing was sent");
    w.settle();
    assert_eq!(w.stats.recovered_after_restart, 1);
    // The cluster never saw it: the repeat under its reference executes it, once.
    assert_eq!(w.reports(SECOND), ["Completed Some(Executed)"]);
    assert_eq!(w.applied(SECOND), 1);
    assert!(w.check().is_ok(), "{:?}", w.check());
}

#[test]
fn client_crash_mid_append_the_torn_record_is_cut_and_its_command_never_sent() {
    let mut w = one_command_done();
    // Dies in the middle of the record's write: some of its bytes reach the slot.
    w.arm(0, Some(7), false);
    w.execute(SECOND.into());
    w.pump();
    assert!(w.process.is_none(), "the process died mid-append");
    w.settle();
    assert_eq!(w.stats.recovered_after_restart, 0, "the torn record is cut");
    assert!(w.reports(SECOND).is_empty());
    assert_eq!(w.applied(SECOND), 0);
    assert!(w.check().is_ok(), "{:?}", w.check());
    assert_eq!(w.stats.never_sent, 1);
}

/// The regression of the order of hand-over and end: the driver core ended a record before
/// handing its outcome over, so a process that died once the end was written lost an outcome
/// the application was never given. Told first, the outcome is never lost.
#[test]
fn client_crash_after_an_outcome_record_ends_the_outcome_was_told_once() {
    let mut w = World::with(3, true);
    w.execute(FIRST.into());
    w.pump();
    // The next file operations are the record's end, once the outcome arrives: its frame,
    // then the checksum that seals it. Die just after the seal.
    w.arm(1, None, true);
    w.settle();
    assert_eq!(w.stats.crashes, 1);
    assert_eq!(w.stats.recovered_after_restart, 0, "the record had ended");
    assert_eq!(w.reports(FIRST), ["Completed Some(Executed)"]);
    assert_eq!(w.applied(FIRST), 1);
    assert!(w.check().is_ok(), "{:?}", w.check());
}

#[test]
fn client_crash_before_an_outcome_record_ends_the_outcome_is_told_again_as_recovered() {
    let mut w = World::with(3, true);
    w.execute(FIRST.into());
    w.pump();
    // Die before the end is sealed (its frame written, not its checksum): the application
    // was told, the record comes back.
    w.arm(1, None, false);
    w.settle();
    assert_eq!(w.stats.crashes, 1);
    assert_eq!(w.stats.recovered_after_restart, 1);
    assert_eq!(
        w.reports(FIRST),
        ["Completed Some(Executed)", "Completed Some(Recovered)"]
    );
    assert_eq!(w.applied(FIRST), 1, "told twice, applied once");
    assert!(w.check().is_ok(), "{:?}", w.check());
}

/// A scripted run whose producer is open (outbox mode), nothing journaled yet.
fn producing() -> World {
    let mut w = World::with(3, true);
    w.producing = true;
    w.tend_producer();
    w.pump();
    w.run_for(Duration::from_millis(300));
    let p = w.process.as_ref().expect("a process");
    assert!(open_fields(p).is_some(), "the producer is open");
    w
}

impl World {
    /// A crash in the running process's next call of kind `call`.
    fn arm_in(&mut self, call: Call, cut: Cut) {
        let Some(p) = self.process.as_mut() else {
            panic!("no process to crash");
        };
        p.core.store_mut().slot.crash_in = Some((call, cut));
    }

    fn batch(&self, n: u64) -> AppBatch {
        self.batches.get(&n).cloned().unwrap_or_default()
    }

    fn ingested(&self, n: u64) -> usize {
        self.cluster
            .ingested()
            .iter()
            .filter(|ids| ids.contains(&n))
            .count()
    }

    /// Whether batch `n`'s record is live and marked handed in the running process.
    fn handed(&self, n: u64) -> Option<bool> {
        let p = self.process.as_ref()?;
        let key = p.keys.get(&n)?;
        p.core
            .store()
            .journal
            .live_entries()
            .find(|e| e.key == *key)
            .map(|e| e.handed)
    }

    fn assert_checks(&mut self) {
        if let Err(e) = self.check() {
            panic!("{e}");
        }
    }
}

#[test]
fn p_8_client_crash_between_the_handed_mark_and_the_send_the_batch_is_unknown_and_never_sent() {
    let mut w = producing();
    // Dies just after the mark's last write, before the frame reaches the transport.
    w.arm_in(Call::Handed, Cut::After);
    w.submit_batch();
    assert!(w.batch(1).accepted, "answered once journaled");
    assert_eq!(w.handed(1), Some(false), "not marked before the send");
    w.pump();
    assert!(w.process.is_none(), "the process died at the mark");
    assert!(w.batch(1).sent_in.is_empty(), "its frame never went");
    w.settle();
    // Counted as sent: reported unknown, never sent, never ingested.
    assert_eq!(w.batch(1).reports, ["Unknown after a restart"]);
    assert!(
        w.batch(1).sent_in.is_empty(),
        "never sent after the restart"
    );
    assert_eq!(w.ingested(1), 0);
    assert_eq!(w.stats.batches_resubmitted, 0);
    w.assert_checks();
}

#[test]
fn p_8_client_crash_between_the_put_and_the_handed_mark_the_batch_goes_again_once() {
    let mut w = producing();
    w.submit_batch();
    assert!(w.batch(1).accepted);
    // The engine took it and holds its frame; no mark yet (it is written just before the
    // send). The process dies here.
    assert_eq!(w.handed(1), Some(false));
    w.crash();
    w.settle();
    // Given back unsent, submitted again under its record, ingested once.
    assert_eq!(w.stats.batches_resubmitted, 1);
    assert_eq!(w.batch(1).reports, ["Completed"]);
    assert_eq!(w.batch(1).sent_in, BTreeSet::from([2]));
    assert_eq!(w.ingested(1), 1);
    w.assert_checks();
}

#[test]
fn p_8_client_crash_after_a_batch_record_is_written_and_before_its_submission_is_answered_it_goes_once(
) {
    let mut w = producing();
    // Dies once the record's last write is done, inside the submission.
    w.arm_in(Call::PutBatch, Cut::After);
    w.submit_batch();
    w.pump();
    assert!(w.process.is_none(), "the process died in the put");
    assert!(!w.batch(1).accepted, "never answered");
    w.settle();
    // The whole record came back unsent: it goes once.
    assert_eq!(w.stats.batches_resubmitted, 1);
    assert_eq!(w.batch(1).reports, ["Completed"]);
    assert_eq!(w.ingested(1), 1);
    w.assert_checks();
}

#[test]
fn p_8_client_crash_mid_append_of_a_batch_record_the_torn_record_is_cut_and_the_batch_never_sent() {
    let mut w = producing();
    // Dies in the record's first write, some of its bytes on the slot.
    w.arm_in(Call::PutBatch, Cut::Torn(7));
    w.submit_batch();
    w.pump();
    assert!(w.process.is_none(), "the process died mid-append");
    w.settle();
    assert_eq!(w.stats.batches_resubmitted, 0, "the torn record is cut");
    assert_eq!(w.stats.batches_unknown_after_restart, 0);
    assert!(w.batch(1).reports.is_empty(), "never answered, never told");
    assert!(w.batch(1).sent_in.is_empty());
    assert_eq!(w.ingested(1), 0);
    w.assert_checks();
}

#[test]
fn p_8_client_crash_before_a_batch_outcomes_end_is_sealed_the_batch_is_told_again_as_unknown() {
    let mut w = producing();
    w.submit_batch();
    w.pump();
    assert_eq!(w.handed(1), Some(true), "marked, then sent");
    // The outcome is told, then its record's end is torn.
    w.arm_in(Call::End, Cut::Torn(5));
    w.settle();
    assert_eq!(w.stats.crashes, 1);
    assert_eq!(
        w.batch(1).reports,
        ["Completed", "Unknown after a restart"],
        "told, then told again as unknown: handed, it is never sent again"
    );
    assert_eq!(w.batch(1).sent_in, BTreeSet::from([1]));
    assert_eq!(w.ingested(1), 1, "told twice, ingested once");
    w.assert_checks();
}

#[test]
fn p_8_client_crash_after_a_batch_outcomes_end_the_outcome_was_told_once() {
    let mut w = producing();
    w.submit_batch();
    w.pump();
    w.arm_in(Call::End, Cut::After);
    w.settle();
    assert_eq!(w.stats.crashes, 1);
    assert_eq!(
        w.stats.batches_unknown_after_restart, 0,
        "the record had ended"
    );
    assert_eq!(w.batch(1).reports, ["Completed"]);
    assert_eq!(w.ingested(1), 1);
    w.assert_checks();
}

/// The regression of the order of report and end at a restart: the records of batches of
/// unknown outcome ended as the recovery list was taken, before the application was told,
/// so a process that died once such an end was written lost the batch's report (seed 47).
#[test]
fn p_8_client_crash_as_a_restart_ends_an_unknown_batchs_record_it_was_told_first() {
    let mut w = producing();
    w.submit_batch();
    w.pump();
    assert_eq!(w.handed(1), Some(true));
    // The next process dies once the record of what it reports unknown has ended.
    w.next_crash_in = Some((Call::End, Cut::After));
    w.crash();
    w.settle();
    assert_eq!(w.stats.crashes, 2);
    assert_eq!(w.batch(1).reports, ["Unknown after a restart"]);
    assert_eq!(w.ingested(1), 0);
    w.assert_checks();
}

/// The same for a command too old to repeat (E-4).
#[test]
fn e_4_client_crash_as_a_restart_ends_an_expired_commands_record_it_was_told_first() {
    let mut w = World::with(3, true);
    w.execute(FIRST.into());
    w.pump();
    w.next_crash_in = Some((Call::End, Cut::After));
    w.crash();
    // Down past the retry horizon: it is reported unknown, never repeated.
    w.now = w.now + DEFAULT_HORIZON + Duration::from_secs(60);
    w.settle();
    assert_eq!(w.stats.crashes, 2);
    assert_eq!(w.reports(FIRST).len(), 1, "{:?}", w.reports(FIRST));
    assert!(w.reports(FIRST)[0].starts_with("Unknown"));
    assert_eq!(w.applied(FIRST), 0);
    w.assert_checks();
}
