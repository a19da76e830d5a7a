//! Issue 19 item 4: the simulated client process crashes and restarts on the same journal.
//!
//! A client process is the driver core both drivers run ([`Core`]: the engine, the journal's
//! command policy and producer outbox, the ordering of every record, mark, send and hand-over
//! between them), over the client's journal on a slot of real files, and the application that
//! submits commands and, in most runs, producer batches in outbox mode. The core reads virtual
//! time ([`Core::with_clock`]); its sessions are connections to a [`SimCluster`] (the sim
//! seam), and what it hands over goes to the application model. Only the slot's files survive
//! the process (a killed process keeps what the page cache holds, so the files are the slot as
//! the next process finds it).
//!
//! Seeded schedules crash the process at a file operation of the journal (the test kit's crash
//! plan: before a command's frame is sent, in the middle of an append with part of the write
//! in the file, just after a call's last write before the call returns, while a record ends)
//! or at a moment of virtual time (frames in flight, outcomes unanswered); a new process may
//! itself die while it opens the slot, among the repairs the opening makes (a torn tail cut,
//! the manifest written again; a write of them torn), and the one after it must find in the
//! slot exactly what the dead one found. A dead process
//! sends nothing and hands nothing over: the seam checks. A new process opens the slot, hands
//! the recovery list to the application, repeats every repeatable command under its reference
//! and reports the ones too old to repeat, and submits again the batches never handed. The
//! cluster's records then decide:
//!
//! * every command the application submitted was applied at most once;
//! * its outcome reached the application exactly once, before or after a crash, with one
//!   exception: the core hands an outcome over before its record's end is written, so a crash
//!   between the two tells it again after the restart, as `Recovered` under the same reference
//!   (or unknown past the retry horizon), once per such crash; the other order would lose it.
//!   A command whose call the process died in was never answered: it may instead be absent
//!   from the list and never applied, and is counted as never sent;
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
//!   when it was handed); a batch whose submission the process died in was never answered: it
//!   is told nothing and never sent unless its record was whole;
//! * at every send of a batch, its record is marked handed.
//!
//! `NERVIX_CRASH_SEEDS=n` runs n seeds (CI runs a modest count), `NERVIX_CRASH_SEED=n` replays
//! one, `NERVIX_TRACE=1` prints the failing seed's trace.

use arrow_array::{Array, UInt64Array};
use bytes::Bytes;
use nervix_driver_support::api::{DriverEvent, Error};
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::dataplane::{Call as DataCall, Hand, NewProducer, Taken};
use nervix_driver_support::driver_core::{
    Connect, Core, Given, Request, Seam, StreamSink, ENGINE_TIME_BEFORE_START,
};
use nervix_driver_support::host_time::HostClock;
use nervix_driver_support::journal::testkit::{
    forget_crashes, plan_crashes, CrashPlan, Fate, FileOp, JournalCall,
};
use nervix_driver_support::journal::JournalConfig;
use nervix_driver_support::journaled::{
    JournalRefusal, JournaledBatch, JournaledCommand, UnsentBatch,
};
use nervix_driver_support::observe::Hub;
use nervix_driver_support::released::Released;
use nervix_driver_support::session::{End, Event, Out};
use nervix_driver_support::unclaimed::Unclaimed;
use nervix_driver_support::Submission;
use nervix_harness::cluster::{
    ingestor_fields, ClusterConfig, ConnId, Faults, Output, SimCluster, INGESTOR,
};
use nervix_journal::{
    kept_since, ClientJournal, ClientJournalConfig, Entry, JournalKey, RecoveredBatch,
    RecoveredCommand, DEFAULT_HORIZON,
};
use nervix_protocol::arrow::{decode_stream, BatchBuilder};
use nervix_protocol::client::{
    BatchId, BatchOutcome, ClientConfig, CommandResult, Delivery as ConsumerDelivery,
    ProducerDescription, ProducerEvent, ProducerId, ProducerSpec, RetainedCommand, SessionId,
    SubscriptionId,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::ClientFrame;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::time::{Timestamp, UnixMillis};
use sf_journal::recovery::SlotFiles;
use sf_journal::slot::{self, parse_segment_name};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
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

/// Where a scripted crash cuts a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// In its first write, with this many bytes of it written (mid-append).
    Torn(u64),
    /// Just after its last write, before the call returns.
    After,
}

/// A call of the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    PutCommand,
    PutBatch,
    Handed,
    End,
}

/// What a record is, in the test's ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Record {
    Command { reference: String, query: String },
    Batch(u64),
    Other,
}

/// What survives the process: the test's ledger of the slot and the crash plan. The journal's
/// test kit asks the plan about each file operation (see [`Plan`]), so the ledger follows
/// every call the core makes of its journal.
#[derive(Debug, Default)]
struct Slot {
    /// File operations of record calls carried out so far (over every process).
    applied: u64,
    /// A crash at a file operation (its absolute number).
    crash: Option<CrashAt>,
    dead: bool,
    /// The key whose put was under way when the process died.
    cut_put: Option<JournalKey>,
    /// The key whose end was under way when the process died.
    cut_end: Option<JournalKey>,
    /// The key whose handed mark was under way when the process died.
    cut_handed: Option<JournalKey>,
    /// Queries whose call a process died in (its record torn, or never answered).
    cut_queries: BTreeSet<String>,
    /// Batches (by number) whose submission a process died in.
    cut_batches: BTreeSet<u64>,
    /// Every command record ever put: its reference and query.
    journaled: BTreeMap<String, String>,
    /// The wall time each journaled reference was made at.
    created: BTreeMap<String, UnixMillis>,
    /// What each key records (the newest put of a key wins: a key whose record was torn may
    /// be given again).
    records: BTreeMap<JournalKey, Record>,
    /// Keys the journal holds live: put, not yet ending.
    live: BTreeSet<JournalKey>,
    /// Keys whose handed mark was written whole.
    handed: BTreeSet<JournalKey>,
    /// The call under way: its kind and key.
    current: Option<(Call, JournalKey)>,
    /// The call the process died in, and whether it died after the call's last write.
    died_in: Option<(Call, bool)>,
    /// A crash in the next call of this kind (after `crash_in_skip` of them went whole).
    crash_in: Option<(Call, Cut)>,
    crash_in_skip: u64,
    /// A crash while the slot is opened: before the repair operation of this index (counted
    /// in the opening), a write of it torn after this many bytes when given.
    open_crash: Option<(u64, Option<u64>)>,
    /// Repair operations carried out in the opening under way.
    open_ops: u64,
    /// Whether the opening died in a write, torn.
    open_torn: bool,
    /// Deaths in a write with part of its bytes (not none, not all) in the file.
    torn_partial: u64,
}

impl Slot {
    /// The newest key recording `what`.
    fn key_of(&self, what: impl Fn(&Record) -> bool) -> Option<JournalKey> {
        self.records
            .iter()
            .rev()
            .find(|(_, r)| what(r))
            .map(|(k, _)| *k)
    }

    /// What the journal holds as the process dies: the live keys, and for each live batch
    /// whether its handed mark was written.
    fn at_crash(&self) -> (BTreeSet<JournalKey>, BTreeMap<JournalKey, bool>) {
        let handed = self
            .live
            .iter()
            .filter(|k| matches!(self.records.get(k), Some(Record::Batch(_))))
            .map(|k| (*k, self.handed.contains(k)))
            .collect();
        (self.live.clone(), handed)
    }

    /// Whether the record of `key` had not finished ending when the process died.
    fn not_ended(&self, key: JournalKey) -> bool {
        self.live.contains(&key) || self.cut_end == Some(key)
    }
}

/// The number a batch carries as its one `id`.
fn number_of(ipc: &[u8]) -> Option<u64> {
    let b = decode_stream(ipc, &ingestor_fields()).ok()?;
    let ids = b.column(0).as_any().downcast_ref::<UInt64Array>()?;
    (!ids.is_empty()).then(|| ids.value(0))
}

/// The slot's crash plan: the test's side of the journal's test kit.
struct Plan(Arc<Mutex<Slot>>);

impl CrashPlan for Plan {
    fn fate(&mut self, call: &JournalCall<'_>, op: &FileOp, index: usize, count: usize) -> Fate {
        let mut s = lock(&self.0);
        if s.dead {
            tally("after death: a file operation refused".into());
            return Fate::Die { torn: None };
        }
        let (kind, key) = match call {
            JournalCall::Put { key, entry } => match entry {
                Entry::Batch(_) => (Call::PutBatch, *key),
                _ => (Call::PutCommand, *key),
            },
            JournalCall::Handed(key) => (Call::Handed, *key),
            JournalCall::End(key) => (Call::End, *key),
            // The slot's repairs as it opens (a torn tail cut, the manifest written again):
            // carried out, or the process dies among them when the schedule says so.
            JournalCall::Open => {
                if let Some((at, torn)) = s.open_crash {
                    if at == s.open_ops {
                        s.open_crash = None;
                        s.dead = true;
                        s.open_torn = torn.is_some() && op.written().is_some();
                        return Fate::Die { torn };
                    }
                }
                s.open_ops += 1;
                return Fate::Carry;
            }
            // Syncs: carried out, not counted.
            _ => return Fate::Carry,
        };
        if index == 0 {
            // A call begins: the ledger follows the journal's memory.
            match call {
                JournalCall::Put { key, entry } => {
                    let record = match entry {
                        Entry::Command(c) => {
                            let reference = c.reference.to_string();
                            s.journaled.insert(reference.clone(), c.query.clone());
                            s.created.insert(reference.clone(), c.created_wall);
                            Record::Command {
                                reference,
                                query: c.query.clone(),
                            }
                        }
                        Entry::Batch(b) => number_of(&b.batch).map_or(Record::Other, Record::Batch),
                        _ => Record::Other,
                    };
                    s.records.insert(*key, record);
                    s.live.insert(*key);
                    s.handed.remove(key);
                }
                JournalCall::End(key) => {
                    s.live.remove(key);
                }
                _ => {}
            }
            s.current = Some((kind, key));
            if let Some((c, cut)) = s.crash_in {
                if c == kind && s.crash_in_skip > 0 {
                    s.crash_in_skip -= 1;
                } else if c == kind {
                    s.crash_in = None;
                    let at = s.applied;
                    s.crash = Some(match cut {
                        Cut::Torn(n) => CrashAt::FileOp {
                            op: at,
                            torn: Some(n),
                            after: false,
                        },
                        Cut::After => CrashAt::FileOp {
                            op: at + count as u64 - 1,
                            torn: None,
                            after: true,
                        },
                    });
                }
            }
        }
        let fate = match s.crash {
            Some(CrashAt::FileOp { op, torn, after }) if op == s.applied => {
                if after {
                    Fate::CarryThenDie
                } else {
                    Fate::Die { torn }
                }
            }
            _ => Fate::Carry,
        };
        let last = index + 1 == count;
        match fate {
            Fate::Carry => {
                s.applied += 1;
                if last && kind == Call::Handed {
                    s.handed.insert(key);
                }
            }
            _ => {
                let what = match fate {
                    Fate::Die { torn: None } => format!("die before op {index}/{count}"),
                    Fate::Die { torn: Some(n) } => match op.written() {
                        Some(b) if n % b.len().max(1) as u64 > 0 => {
                            s.torn_partial += 1;
                            format!("torn partial bytes at op {index}/{count}")
                        }
                        Some(_) => format!("torn zero bytes at op {index}/{count}"),
                        None => format!("torn asked at a non-write op {index}/{count}"),
                    },
                    _ => format!(
                        "carried then die {}",
                        if last {
                            "after last op"
                        } else {
                            "after a middle op"
                        }
                    ),
                };
                tally(format!(
                    "{kind:?}: {what} ({})",
                    if op.written().is_some() {
                        "write"
                    } else {
                        "other op"
                    }
                ));
                let whole = fate == Fate::CarryThenDie && last;
                if fate == Fate::CarryThenDie {
                    s.applied += 1;
                    if whole && kind == Call::Handed {
                        s.handed.insert(key);
                    }
                }
                s.dead = true;
                s.died_in = Some((kind, whole));
                if !whole {
                    match kind {
                        Call::PutCommand | Call::PutBatch => {
                            s.cut_put = Some(key);
                            match s.records.get(&key).cloned() {
                                Some(Record::Command { query, .. }) => {
                                    s.cut_queries.insert(query);
                                }
                                Some(Record::Batch(n)) => {
                                    s.cut_batches.insert(n);
                                }
                                _ => {}
                            }
                        }
                        Call::Handed => s.cut_handed = Some(key),
                        Call::End => s.cut_end = Some(key),
                    }
                }
            }
        }
        fate
    }
}

/// Review tally (temporary): where each death fell, summed over the run's seeds.
static TALLY: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

fn tally(what: String) {
    *TALLY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(what)
        .or_default() += 1;
}

fn lock(slot: &Arc<Mutex<Slot>>) -> MutexGuard<'_, Slot> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

thread_local! {
    /// The slot of the process running on this thread: the seam asks it whether the process
    /// is alive.
    static PROCESS: RefCell<Option<Arc<Mutex<Slot>>>> = const { RefCell::new(None) };
}

/// Whether the process running on this thread is alive: a dead one sends and hands nothing.
fn alive() -> bool {
    PROCESS.with(|p| p.borrow().as_ref().is_some_and(|s| !lock(s).dead))
}

/// What the application holds to read one answer.
type Answer<T> = Rc<RefCell<Option<T>>>;

/// The sim's channels: an answer is kept for the application to read, unless the process is
/// dead.
struct SimHand;

impl Hand for SimHand {
    type Error = Error;
    type Once<T> = Answer<T>;
    type Awaited<T> = Answer<T>;
    type Waiter = Answer<Result<Taken<SimHand>, Error>>;
    type Ended = Answer<ProducerEvent>;
    type Deliveries = ();
    type ProducerSide = Answer<ProducerEvent>;
    type ConsumerSide = ();

    fn producer(&self) -> (Answer<ProducerEvent>, Answer<ProducerEvent>) {
        Self::once()
    }
    fn consumer(&self) -> ((), ()) {
        ((), ())
    }
    fn once<T>() -> (Answer<T>, Answer<T>) {
        let a = Rc::new(RefCell::new(None));
        (a.clone(), a)
    }
    fn give_back<T>(tx: Answer<T>, value: T) -> Option<T> {
        if !alive() {
            tally("after death: a hand-over withheld".into());
            return Some(value);
        }
        *tx.borrow_mut() = Some(value);
        None
    }
    fn offer(
        waiter: Self::Waiter,
        take: impl FnOnce() -> Option<Result<Taken<Self>, Error>>,
    ) -> Option<Self::Waiter> {
        if !alive() {
            return None;
        }
        match take() {
            None => Some(waiter),
            Some(r) => {
                Self::give(waiter, r);
                None
            }
        }
    }
    fn end(ended: Answer<ProducerEvent>, event: ProducerEvent) {
        Self::give(ended, event);
    }
    fn producer_dropped(_: &Answer<ProducerEvent>) -> bool {
        false
    }
    fn keep(_: &mut (), _: ConsumerDelivery) {}
    fn flush(_: &mut ()) -> bool {
        true
    }
    fn consumer_dropped(_: &()) -> bool {
        true
    }
    fn open_refused(message: String) -> Error {
        Error::OpenRefused(message)
    }
}

/// What the core asked of the network, for the world to carry out in order.
#[derive(Debug)]
enum WireOut {
    Connect(SessionId, Endpoint),
    Frame(SessionId, Bytes),
    Close(SessionId),
    /// The core let the session go without a clean close.
    Dropped(SessionId),
}

type Wire = Rc<RefCell<VecDeque<WireOut>>>;

/// One session's transport: the world's network.
struct SimSession {
    sid: SessionId,
    wire: Wire,
}

impl Drop for SimSession {
    fn drop(&mut self) {
        if alive() {
            self.wire.borrow_mut().push_back(WireOut::Dropped(self.sid));
        }
    }
}

/// The sim seam: sessions are connections to the simulated cluster, outcomes go to the
/// application model; a dead process sends nothing and hands nothing over.
struct Sim {
    wire: Wire,
}

/// No streams in this simulation.
struct NoStream;

impl<T> StreamSink<T> for NoStream {
    fn dropped(&self) -> bool {
        true
    }
    fn give(&mut self, _: T) -> Given<T> {
        Given::Gone
    }
}

impl Seam for Sim {
    type Hand = SimHand;
    type Result = Answer<CommandResult>;
    type Waiting = Answer<CommandResult>;
    type Session = SimSession;
    type Subscription = ();
    type ClockFollow = ();
    type Sink<T> = NoStream;
    const ENDS_OF_DROPPED_SESSIONS: bool = false;

    fn command() -> (Answer<CommandResult>, Answer<CommandResult>) {
        SimHand::once()
    }
    fn hand_over(waiting: Answer<CommandResult>, result: CommandResult) -> Option<CommandResult> {
        SimHand::give(waiting, result);
        None
    }
    fn connect(&self, to: Connect) -> Option<SimSession> {
        if !alive() {
            return None;
        }
        let sid = to.session;
        self.wire
            .borrow_mut()
            .push_back(WireOut::Connect(sid, to.endpoint));
        Some(SimSession {
            sid,
            wire: self.wire.clone(),
        })
    }
    fn send(session: &SimSession, out: Out) -> Given<Out> {
        if !alive() {
            tally("after death: a send withheld".into());
            return Given::Gone;
        }
        let o = match out {
            Out::Frame(f) => WireOut::Frame(session.sid, f),
            Out::Close => WireOut::Close(session.sid),
        };
        session.wire.borrow_mut().push_back(o);
        Given::Taken
    }
    fn subscription(&self, _: SubscriptionId) -> (NoStream, ()) {
        (NoStream, ())
    }
    fn clock(&self, _: String) -> (NoStream, ()) {
        (NoStream, ())
    }
}

/// Virtual time, read by the core: the world's time since its start, and the wall clock.
#[derive(Clone, Default)]
struct SimClock(Arc<AtomicU64>, Arc<AtomicU64>);

impl SimClock {
    fn set(&self, now: Timestamp) {
        self.0.store(now.as_nanos(), Ordering::SeqCst);
    }
    /// A new process: its monotonic clock starts now.
    fn new_life(&self, now: Timestamp) {
        self.1.store(now.as_nanos(), Ordering::SeqCst);
    }
    /// The world's time of an instant on the engine's time of the running process.
    fn world_time(&self, t: Timestamp) -> Timestamp {
        Timestamp::from_nanos(
            t.as_nanos()
                .saturating_sub(ENGINE_TIME_BEFORE_START.as_nanos() as u64)
                + self.1.load(Ordering::SeqCst),
        )
    }
}

impl HostClock for SimClock {
    fn elapsed(&self) -> Duration {
        Duration::from_nanos(
            self.0
                .load(Ordering::SeqCst)
                .saturating_sub(self.1.load(Ordering::SeqCst)),
        )
    }
    fn wall(&self) -> UnixMillis {
        UnixMillis(WALL_BASE + self.0.load(Ordering::SeqCst) / 1_000_000)
    }
}

/// Small segments, so appends open segments, copy records forward and trim; a `tight`
/// journal fills under a backlog of batches, so submissions and marks are refused.
fn capacity(tight: bool) -> u64 {
    if tight {
        6 * 1024
    } else {
        32 * 1024
    }
}

const SEGMENT: u64 = 2048;
const SENDER: &str = "client";

/// The slot's files as the next process reads them.
fn slot_files(dir: &Path) -> SlotFiles {
    let mut files = SlotFiles::default();
    let mut names: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for (name, path) in names {
        let read = || std::fs::read(&path).unwrap_or_default();
        if parse_segment_name(&name).is_some() {
            files.segments.push((name.clone(), read()));
        } else if name == slot::MANIFEST {
            files.manifest = Some(read());
        } else if name == slot::ACK_WATERMARK {
            files.ack_watermark = Some(read());
        } else if name == slot::SYMBOL_DICT {
            files.symbol_dict = Some(read());
        }
    }
    files
}

/// The application's producer in one life.
struct AppProducer {
    id: ProducerId,
    opened: Answer<Result<Arc<ProducerDescription>, Error>>,
    ended: Answer<ProducerEvent>,
    released: Arc<Released>,
}

impl AppProducer {
    /// Its fields, while it is open (its open answered, its end not).
    fn open_fields(&self) -> Option<Arc<[nervix_protocol::rows::FieldSpec]>> {
        if self.ended.borrow().is_some() {
            return None;
        }
        match &*self.opened.borrow() {
            Some(Ok(d)) => Some(d.fields.clone()),
            _ => None,
        }
    }
}

/// What the application was told in this life whose record ends after the telling.
#[derive(Debug, Clone)]
enum Told {
    Command { query: String, reference: String },
    Batch(u64),
}

/// One life of the client process: the driver core, and what the application holds.
struct Process {
    core: Core<Sim>,
    wire: Wire,
    conns: BTreeMap<SessionId, ConnId>,
    /// Commands accepted and not ended yet: query, reference, where the result comes.
    commands: Vec<(String, String, Answer<CommandResult>)>,
    /// The application's producer, while it is not finished.
    producer: Option<AppProducer>,
    /// Batches answered and waiting for their outcome: number, producer, name, outcome.
    outcomes: Vec<(u64, ProducerId, BatchId, Answer<BatchOutcome>)>,
    /// Batches the journal gave back unsent, to submit again once a producer is open.
    resubmit: VecDeque<UnsentBatch>,
    /// Uncertain commands the application recovers.
    pending_recovery: Vec<RetainedCommand>,
    /// What the application was told in this life (its record may still be ending).
    told: Vec<Told>,
}

impl Process {
    /// Whether some batch has not ended yet: answered without an outcome, or given back and
    /// not submitted again.
    fn batches_open(&self) -> bool {
        !self.outcomes.is_empty() || !self.resubmit.is_empty()
    }

    /// Whether some command has not ended yet.
    fn commands_open(&self) -> bool {
        !self.commands.is_empty() || !self.pending_recovery.is_empty()
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
    /// The server closed the connection.
    Closed(SessionId),
    /// The connection the client closed cleanly has ended.
    Finished(SessionId),
}

/// What the application knows of one of its commands (it survives the process: it is what
/// the application was told, which the checks read).
#[derive(Debug, Default, Clone)]
struct AppCommand {
    /// Definitive outcomes reported: completed, failed, refused, or unknown for good.
    reports: Vec<String>,
}

/// The root of a run's slot, removed when the run ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(seed: u64) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "nervix-client-crash-{}-{seed}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("a temporary directory");
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        forget_crashes(&self.0.join(SENDER));
        let _ = std::fs::remove_dir_all(&self.0);
    }
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
    /// The slot's ledger and crash plan (it survives the process).
    slot: Arc<Mutex<Slot>>,
    /// The slot's files, and the journal's configuration over them.
    dir: TempDir,
    config: JournalConfig,
    clock: SimClock,
    life: u64,
    commands: BTreeMap<String, AppCommand>,
    /// Every (reference, query) a command frame carried.
    sent: BTreeSet<(String, String)>,
    /// The latest wall time a command frame of each reference went to the transport.
    last_sent: BTreeMap<String, UnixMillis>,
    trace: Vec<String>,
    problems: Vec<String>,
    crashes: Vec<CrashAt>,
    /// The keys live in the dead process's journal when it crashed.
    live_at_crash: BTreeSet<JournalKey>,
    /// No faults, and a test arms the crashes.
    scripted: bool,
    /// Commands whose outcome the application was told before the process died, while
    /// their record was ending.
    told_then_died: BTreeMap<String, usize>,
    /// The process has a producer in outbox mode.
    producing: bool,
    /// The application's batches by number (each carries its number as its one `id`).
    batches: BTreeMap<u64, AppBatch>,
    next_batch: u64,
    /// Whether each batch record live at the crash was marked handed.
    handed_at_crash: BTreeMap<JournalKey, bool>,
    /// Batches whose outcome the application was told before the process died, while their
    /// record was ending (or whose unknown outcome it was told after a restart, when the
    /// process died before its record ended).
    batch_told_then_died: BTreeMap<u64, usize>,
    /// A scripted crash for the next process, in its first call of this kind.
    next_crash_in: Option<(Call, Cut)>,
    /// The slot's journal is small enough to fill.
    tight: bool,
    /// The application holds the uncertain commands it was told instead of recovering them
    /// at once (a test's choice).
    hold_recoveries: bool,
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
    /// Sessions the core let go without a clean close (among them those dropped because a
    /// handed mark could not be written).
    sessions_dropped: u64,
    /// Submissions the journal refused (full: nothing queued).
    batches_refused: u64,
    /// Openings of the slot with repairs to make, and processes that died among them
    /// (torn when in a write).
    openings_repaired: u64,
    open_crashes: u64,
    open_torn: u64,
    /// Frames on their way to the server when the process died, which reached it.
    in_flight_at_crash: u64,
    /// Deaths in a write with part of its bytes in the file (`mid_append` counts the crashes
    /// planned so, some of which fall on an operation that writes nothing).
    torn_partial: u64,
    /// Executions the cluster's trace shows (the check of a reference executed twice reads
    /// the trace: it must see the executions there are).
    executed_seen: u64,
}

impl Stats {
    fn add(&mut self, s: &Stats) {
        self.openings_repaired += s.openings_repaired;
        self.open_crashes += s.open_crashes;
        self.open_torn += s.open_torn;
        self.crashes += s.crashes;
        self.mid_append += s.mid_append;
        self.file_op_crashes += s.file_op_crashes;
        self.never_sent += s.never_sent;
        self.recovered_after_restart += s.recovered_after_restart;
        self.unknown_after_restart += s.unknown_after_restart;
        self.applied += s.applied;
        self.reported += s.reported;
        self.after_a_write += s.after_a_write;
        self.told_again += s.told_again;
        self.batches += s.batches;
        self.completed += s.completed;
        self.ingested += s.ingested;
        self.batches_unknown_after_restart += s.batches_unknown_after_restart;
        self.batches_resubmitted += s.batches_resubmitted;
        self.batch_put_torn += s.batch_put_torn;
        self.batch_put_after += s.batch_put_after;
        self.handed_torn += s.handed_torn;
        self.handed_after += s.handed_after;
        self.end_torn += s.end_torn;
        self.end_after += s.end_after;
        self.unhanded_at_crash += s.unhanded_at_crash;
        self.batches_told_again += s.batches_told_again;
        self.sessions_dropped += s.sessions_dropped;
        self.batches_refused += s.batches_refused;
        self.in_flight_at_crash += s.in_flight_at_crash;
        self.executed_seen += s.executed_seen;
        self.torn_partial += s.torn_partial;
    }
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
                let after = rng.chance(0.3);
                CrashAt::FileOp {
                    op: rng.below(90),
                    torn: (!after && rng.chance(0.5)).then(|| rng.below(1 << 20)),
                    after,
                }
            } else {
                CrashAt::Step(rng.below(40) as usize)
            });
        }
        let dir = TempDir::new(seed);
        let mut config = JournalConfig::new(&dir.0, SENDER);
        config.segment_bytes = SEGMENT;
        config.capacity_bytes = capacity(tight);
        let slot = Arc::new(Mutex::new(Slot::default()));
        plan_crashes(&dir.0.join(SENDER), Box::new(Plan(slot.clone())));
        let mut w = Self {
            seed,
            now: Timestamp::ZERO,
            rng,
            cluster,
            queue: BTreeMap::new(),
            seq: 0,
            tails: BTreeMap::new(),
            process: None,
            slot,
            dir,
            config,
            clock: SimClock::default(),
            life: 0,
            commands: BTreeMap::new(),
            sent: BTreeSet::new(),
            last_sent: BTreeMap::new(),
            trace: Vec::new(),
            problems: Vec::new(),
            crashes,
            live_at_crash: BTreeSet::new(),
            scripted,
            told_then_died: BTreeMap::new(),
            producing,
            batches: BTreeMap::new(),
            next_batch: 0,
            handed_at_crash: BTreeMap::new(),
            batch_told_then_died: BTreeMap::new(),
            next_crash_in: None,
            tight,
            hold_recoveries: false,
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

    fn slot(&self) -> MutexGuard<'_, Slot> {
        lock(&self.slot)
    }

    fn dead(&self) -> bool {
        self.process.is_some() && self.slot().dead
    }

    /// The core reads the world's time, and the seam this world's process.
    fn tick(&self) {
        self.clock.set(self.now);
        PROCESS.with(|p| *p.borrow_mut() = Some(self.slot.clone()));
    }

    /// Hands one call of the application to the core (not drained: see [`World::pump`]).
    fn request(&mut self, r: Request<Sim>) {
        self.tick();
        if let Some(p) = self.process.as_mut() {
            let _ = p.core.request(r);
        }
    }

    /// Starts a process on the slot: opens the journal, hands the recovery list to the
    /// application, which reports what is unknown, recovers every repeatable command and
    /// submits again every batch never handed.
    fn start(&mut self) {
        self.tick();
        {
            let next_crash_in = self.next_crash_in.take();
            let first = self.crashes.first().copied();
            let mut s = self.slot();
            s.dead = false;
            s.crash = None;
            s.crash_in = next_crash_in;
            s.crash_in_skip = 0;
            match first {
                Some(CrashAt::FileOp { op, torn, after }) => {
                    s.crash = Some(CrashAt::FileOp {
                        op: s.applied + op,
                        torn,
                        after,
                    });
                }
                Some(CrashAt::In { call, cut, skip }) => {
                    s.crash_in = Some((call, cut));
                    s.crash_in_skip = skip;
                }
                _ => {}
            }
        }
        let wall_now = self.wall();
        // The slot as the new process reads it (the journal's own recovery): what came back,
        // under which keys.
        let engine = ClientJournalConfig::new(SEGMENT, capacity(self.tight));
        let files = slot_files(&self.dir.0.join(SENDER));
        let list = match ClientJournal::recover(engine, &files) {
            Ok((journal, _)) => journal.classify(wall_now, DEFAULT_HORIZON),
            Err(e) => panic!("seed {}: the slot does not recover: {e}", self.seed),
        };
        if self.life > 0 {
            self.check_came_back(&list);
        }
        // Which batch each record of unknown outcome is, in journal order (the list names
        // only the producer and the time).
        let unknown: Vec<Option<u64>> = {
            let s = self.slot();
            list.batches
                .iter()
                .filter_map(|b| match b {
                    RecoveredBatch::UnknownOutcome { key, .. } => Some(match s.records.get(key) {
                        Some(Record::Batch(n)) => Some(*n),
                        _ => None,
                    }),
                    _ => None,
                })
                .collect()
        };
        {
            // The journal holds what came back: live, and handed as it came back.
            let mut s = self.slot();
            s.live.clear();
            s.handed.clear();
            for c in &list.commands {
                if let RecoveredCommand::Repeatable { key, .. }
                | RecoveredCommand::Expired { key, .. } = c
                {
                    s.live.insert(*key);
                }
            }
            for b in &list.batches {
                match b {
                    RecoveredBatch::Unsent { key, .. } => {
                        s.live.insert(*key);
                    }
                    RecoveredBatch::UnknownOutcome { key, .. } => {
                        s.live.insert(*key);
                        s.handed.insert(*key);
                    }
                    _ => {}
                }
            }
            s.cut_put = None;
            s.cut_end = None;
            s.cut_handed = None;
            s.died_in = None;
            s.current = None;
        }
        // Now and then the process dies while the slot is opened, among its repairs: the next
        // process must find in the slot what this one found.
        {
            let mut draw = Rng::new(
                self.seed
                    ^ 0x0be1_5ca7
                    ^ self.life.wrapping_mul(0x9e37)
                    ^ (self.stats.open_crashes << 40),
            );
            let again = self.stats.open_crashes < 8;
            let mut s = self.slot();
            s.open_ops = 0;
            s.open_torn = false;
            s.open_crash = (!self.scripted && again && draw.chance(0.5))
                .then(|| (draw.below(4), draw.chance(0.5).then(|| draw.next_u64())));
        }
        let opened = nervix_driver_support::journaled::open_at(Some(&self.config), wall_now);
        let (repairs, died, torn) = {
            let mut s = self.slot();
            s.open_crash = None;
            (s.open_ops, std::mem::take(&mut s.dead), s.open_torn)
        };
        if repairs > 0 || died {
            self.stats.openings_repaired += 1;
        }
        if died {
            // It died opening the slot: nothing of it ran. Another process starts.
            assert!(
                opened.is_err(),
                "seed {}: a dead opening succeeded",
                self.seed
            );
            self.stats.open_crashes += 1;
            self.stats.open_torn += u64::from(torn);
            // What it found is what the next process must find.
            (self.live_at_crash, self.handed_at_crash) = self.slot().at_crash();
            self.log(format!(
                "process dies opening the slot after {repairs} repairs"
            ));
            return self.start();
        }
        let opened = match opened {
            Ok(Some(o)) => o,
            Ok(None) => unreachable!("a journal is configured"),
            Err(e) => panic!("seed {}: the journal does not open: {e}", self.seed),
        };
        let seeds: Vec<Endpoint> = self
            .cluster
            .endpoints()
            .iter()
            .filter_map(|e| Endpoint::parse(e).ok())
            .collect();
        let wire: Wire = Rc::default();
        self.clock.new_life(self.now);
        let mut core = Core::new(
            Sim { wire: wire.clone() },
            SimHand,
            ClientConfig::new(
                seeds,
                self.seed ^ 0x00c1_1e47 ^ self.life.wrapping_mul(0x1000_0001),
            ),
            Credentials::new("app", "secret"),
            Hub::<DriverEvent>::default(),
            Unclaimed::default(),
        )
        .with_clock(Box::new(self.clock.clone()));
        core.set_journal(Some(opened));
        self.process = Some(Process {
            core,
            wire,
            conns: BTreeMap::new(),
            commands: Vec::new(),
            producer: None,
            outcomes: Vec::new(),
            resubmit: VecDeque::new(),
            pending_recovery: Vec::new(),
            told: Vec::new(),
        });
        self.life += 1;
        self.log(format!("process {} starts", self.life));
        // The list is handed to the application, which tells what is unknown; then the
        // records of what it reported end (the driver's call sends `RecoveryRead` once the
        // list reached its caller).
        let (tx, rx) = SimHand::once();
        self.request(Request::Recovery(tx));
        let Some(Ok(recovery)) = rx.take() else {
            return self
                .problems
                .push("the recovery list was not handed over".into());
        };
        let mut repeat = Vec::new();
        for c in recovery.commands {
            match c {
                JournaledCommand::Repeatable { command, .. } => repeat.push(command),
                JournaledCommand::Unknown { reference, .. } => {
                    let query = self
                        .slot()
                        .journaled
                        .get(&reference)
                        .cloned()
                        .unwrap_or_default();
                    self.stats.unknown_after_restart += 1;
                    self.report(&query, format!("Unknown ref={reference}"));
                    self.told(Told::Command { query, reference });
                }
                _ => {}
            }
        }
        let mut unknown = unknown.into_iter();
        for b in recovery.batches {
            match b {
                JournaledBatch::UnknownOutcome { .. } => match unknown.next().flatten() {
                    Some(n) => {
                        self.stats.batches_unknown_after_restart += 1;
                        self.report_batch(n, "Unknown after a restart".into());
                        self.told(Told::Batch(n));
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
        self.request(Request::RecoveryRead);
        if self.dead() {
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

    /// Nothing journaled is silently dropped: what was live at the crash comes back, but
    /// the record being appended when the process died; nothing ended comes back, but the
    /// record being ended; a batch comes back as it stood: handed if its mark was written (a
    /// mark cut by the crash may leave it unsent), unsent otherwise.
    fn check_came_back(&mut self, list: &nervix_journal::RecoveryList) {
        let (cut_put, cut_end, cut_handed) = {
            let s = self.slot();
            (s.cut_put, s.cut_end, s.cut_handed)
        };
        let mut back: BTreeSet<JournalKey> = list
            .commands
            .iter()
            .filter_map(|c| match c {
                RecoveredCommand::Repeatable { key, .. }
                | RecoveredCommand::Expired { key, .. } => Some(*key),
                _ => None,
            })
            .collect();
        let handed_at_crash = std::mem::take(&mut self.handed_at_crash);
        for b in &list.batches {
            let (key, handed) = match b {
                RecoveredBatch::Unsent { key, .. } => (*key, false),
                RecoveredBatch::UnknownOutcome { key, .. } => (*key, true),
                _ => continue,
            };
            back.insert(key);
            if let Some(&was) = handed_at_crash.get(&key) {
                if was != handed && cut_handed != Some(key) {
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
            if !back.contains(k) && cut_put != Some(*k) {
                self.problems.push(format!(
                    "record {k:?} was live at the crash and did not come back"
                ));
            }
        }
        for k in &back {
            if !expected.contains(k) && cut_end != Some(*k) {
                self.problems
                    .push(format!("record {k:?} had ended and came back"));
            }
        }
    }

    fn told(&mut self, t: Told) {
        if let Some(p) = self.process.as_mut() {
            p.told.push(t);
        }
    }

    fn report_batch(&mut self, n: u64, what: String) {
        self.log(format!("app batch {n} {what}"));
        self.batches.entry(n).or_default().reports.push(what);
    }

    fn report(&mut self, query: &str, what: String) {
        self.log(format!("app outcome {query:?} {what}"));
        self.commands
            .entry(query.to_owned())
            .or_default()
            .reports
            .push(what);
    }

    /// Opens the application's producer when it has none, and submits again the batches
    /// the journal gave back unsent once it is open.
    fn tend_producer(&mut self) {
        if !self.producing || self.dead() {
            return;
        }
        let Some(p) = self.process.as_mut() else {
            return;
        };
        if p.producer.is_none() {
            let spec =
                ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(2, 64 * 1024);
            let (tx, rx) = SimHand::once();
            self.request(Request::Dataplane(DataCall::OpenProducer {
                spec,
                reply: tx,
            }));
            match rx.take() {
                Some(Ok(NewProducer {
                    id,
                    opened,
                    released,
                    side,
                })) => {
                    if let Some(p) = self.process.as_mut() {
                        p.producer = Some(AppProducer {
                            id,
                            opened,
                            ended: side,
                            released,
                        });
                    }
                    self.log(format!("app open producer {id:?}"));
                }
                Some(Err(e)) => self.log(format!("app open producer refused: {e}")),
                None => {}
            }
        }
        self.resubmit_all();
    }

    /// The open producer's name and fields.
    fn open_producer(&self) -> Option<(ProducerId, Arc<[nervix_protocol::rows::FieldSpec]>)> {
        let p = self.process.as_ref()?.producer.as_ref()?;
        Some((p.id, p.open_fields()?))
    }

    /// Submits again, reusing its record, every batch the journal gave back unsent; true when
    /// the core took any.
    fn resubmit_all(&mut self) -> bool {
        let mut took = false;
        loop {
            if self.dead() {
                return took;
            }
            let Some((pid, _)) = self.open_producer() else {
                return took;
            };
            let Some(u) = self.process.as_mut().and_then(|p| p.resubmit.pop_front()) else {
                return took;
            };
            let Some(n) = number_of(&u.batch) else {
                self.problems
                    .push("an unsent batch the test never submitted".into());
                continue;
            };
            let key = u.key();
            let (tx, rx) = SimHand::once();
            self.request(Request::Dataplane(DataCall::Submit {
                producer: pid,
                batch: Submission::Journaled(u.clone()),
                waiter: tx,
            }));
            match rx.take() {
                Some(Ok((name, outcome))) => {
                    took = true;
                    self.stats.batches_resubmitted += 1;
                    self.log(format!("app submit again batch {n} under {key:?}"));
                    if let Some(p) = self.process.as_mut() {
                        p.outcomes.push((n, pid, name, outcome));
                    }
                }
                Some(Err(Error::Journal(JournalRefusal::Resubmit(why)))) => {
                    self.problems
                        .push(format!("batch {n} given back unsent is refused: {why}"));
                }
                Some(Err(e)) => {
                    // Not taken (the producer is not open now): it goes again later.
                    self.log(format!("app submit again batch {n} refused: {e}"));
                    if let Some(p) = self.process.as_mut() {
                        p.resubmit.push_front(u);
                    }
                    return took;
                }
                None => return true,
            }
        }
    }

    /// A new batch of the application: the core writes its record, answers, then the engine
    /// takes it or it waits for room.
    fn submit_batch(&mut self) {
        let Some((pid, fields)) = self.open_producer() else {
            return;
        };
        self.next_batch += 1;
        let n = self.next_batch;
        let mut b = BatchBuilder::new(fields);
        let batch = b
            .column("id", &[n])
            .and_then(|_| b.nullable_column("name", &[Some("b")]))
            .and_then(|_| b.finish());
        let Ok(batch) = batch else {
            self.problems.push(format!("batch {n} does not build"));
            return;
        };
        self.batches.entry(n).or_default();
        let (tx, rx) = SimHand::once();
        self.request(Request::Dataplane(DataCall::Submit {
            producer: pid,
            batch: Submission::Batch(batch),
            waiter: tx,
        }));
        match rx.take() {
            Some(Ok((name, outcome))) => {
                self.stats.batches += 1;
                if let Some(a) = self.batches.get_mut(&n) {
                    a.accepted = true;
                }
                self.log(format!("app submit batch {n} as {name:?}"));
                if let Some(p) = self.process.as_mut() {
                    p.outcomes.push((n, pid, name, outcome));
                }
            }
            Some(Err(Error::Journal(e))) => {
                self.stats.batches_refused += 1;
                self.report_batch(n, format!("refused by the journal {e}"));
            }
            Some(Err(e)) => self.report_batch(n, format!("refused {e}")),
            // The process died inside the submission: it was never answered.
            None => {
                self.slot().cut_batches.insert(n);
            }
        }
    }

    /// Repeats `command` under its record.
    fn recover(&mut self, command: &RetainedCommand) {
        let (tx, rx) = SimHand::once();
        self.request(Request::Recover {
            command: Box::new(command.clone()),
            reply: tx,
        });
        let query = command.query.clone();
        match rx.take() {
            Some(Ok(accepted)) => {
                self.log(format!("app recover {query:?} ref={}", command.reference));
                if let Some(p) = self.process.as_mut() {
                    p.commands
                        .push((query, accepted.reference.clone(), accepted.result.clone()));
                }
            }
            Some(Err(e)) => self.report(&query, format!("recover refused {e:?}")),
            None => {}
        }
    }

    fn execute(&mut self, query: String) {
        self.commands.entry(query.clone()).or_default();
        if self.process.is_none() {
            return;
        }
        let (tx, rx) = SimHand::once();
        self.request(Request::Execute {
            query: query.clone(),
            reply: tx,
        });
        match rx.take() {
            Some(Ok(accepted)) => {
                self.log(format!("app execute {query:?} ref={}", accepted.reference));
                if let Some(p) = self.process.as_mut() {
                    p.commands
                        .push((query, accepted.reference.clone(), accepted.result.clone()));
                }
            }
            Some(Err(Error::Journal(e))) => {
                self.report(&query, format!("refused by the journal {e}"))
            }
            Some(Err(e)) => self.report(&query, format!("refused {e:?}")),
            // The process died inside the call: the application never got an answer.
            None => {
                self.slot().cut_queries.insert(query);
            }
        }
    }

    /// The application reads what the core handed over: command results, batch outcomes
    /// (their credit goes back, P-4), its producer's end. Uncertain commands it can recover
    /// it recovers, and batches given back unsent go again once a producer is open, unless
    /// the process is dead (`reading_only`). True when it asked the core for something.
    fn harvest(&mut self, reading_only: bool) -> bool {
        let Some(p) = self.process.as_mut() else {
            return false;
        };
        let mut results = Vec::new();
        p.commands.retain(
            |(query, reference, answer)| match answer.borrow_mut().take() {
                Some(r) => {
                    results.push((query.clone(), reference.clone(), r));
                    false
                }
                None => true,
            },
        );
        let mut outcomes = Vec::new();
        p.outcomes
            .retain(|(n, pid, name, answer)| match answer.borrow_mut().take() {
                Some(o) => {
                    outcomes.push((*n, *pid, *name, o));
                    false
                }
                None => true,
            });
        let mut ended = None;
        if let Some(prod) = p.producer.as_ref() {
            if let Some(e) = prod.ended.borrow().clone() {
                ended = Some(format!("{e:?}"));
            } else if let Some(Err(e)) = &*prod.opened.borrow() {
                ended = Some(format!("open refused: {e}"));
            }
        }
        if ended.is_some() {
            p.producer = None;
        }
        let released = p.producer.as_ref().map(|prod| prod.released.clone());
        for (query, reference, result) in results {
            self.on_result(query, reference, result);
        }
        for (n, pid, name, outcome) in outcomes {
            let what = format!("{outcome:?}");
            let kind = what
                .split([' ', '{', '('])
                .next()
                .unwrap_or_default()
                .to_owned();
            self.report_batch(n, kind);
            self.told(Told::Batch(n));
            // Read: its credit goes back at the next drain (P-4).
            if let Some(r) = &released {
                r.push(pid, name);
            }
        }
        if let Some(e) = ended {
            let line: String = e.chars().take(60).collect();
            self.log(format!("app producer ended {line}"));
        }
        if reading_only || self.dead() {
            return false;
        }
        let mut asked = false;
        let pending = self
            .process
            .as_mut()
            .filter(|_| !self.hold_recoveries)
            .map(|p| std::mem::take(&mut p.pending_recovery))
            .unwrap_or_default();
        for command in pending {
            asked = true;
            self.recover(&command);
            if self.dead() {
                return true;
            }
        }
        let resubmit = self.open_producer().is_some()
            && self
                .process
                .as_ref()
                .is_some_and(|p| !p.resubmit.is_empty());
        if resubmit {
            asked |= self.resubmit_all();
        }
        asked
    }

    /// A command's result as the application takes it. An uncertain result it can recover,
    /// it recovers.
    fn on_result(&mut self, query: String, reference: String, result: CommandResult) {
        let keep = kept_since(&result).is_some();
        match result {
            CommandResult::Completed(r) => {
                self.report(&query, format!("Completed {:?}", r.origin()))
            }
            CommandResult::Failed(f) => self.report(&query, format!("Failed {f:?}")),
            CommandResult::Uncertain { command, cause } => {
                if keep {
                    self.log(format!("app uncertain {query:?} {cause:?}, recovers"));
                    if let Some(p) = self.process.as_mut() {
                        p.pending_recovery.push(command);
                    }
                    return;
                }
                self.report(&query, format!("Uncertain {cause:?}"));
            }
            _ => self.report(&query, "?".into()),
        }
        self.told(Told::Command { query, reference });
    }

    /// The process dies: its core, sessions and memory go; the slot's files stay. What the
    /// core handed over before it died, the application holds.
    fn crash(&mut self) {
        if self.process.is_none() {
            return;
        }
        self.slot().dead = true;
        self.harvest(true);
        let Some(p) = self.process.take() else {
            return;
        };
        let at = if self.crashes.is_empty() {
            CrashAt::Step(usize::MAX)
        } else {
            self.crashes.remove(0)
        };
        self.stats.crashes += 1;
        if let CrashAt::Step(_) = at {
            let to_server = self
                .queue
                .values()
                .filter(|d| matches!(d, Delivery::ToServer(..)))
                .count();
            let to_client = self
                .queue
                .values()
                .filter(|d| matches!(d, Delivery::ToClient(..)))
                .count();
            let waiting = p.commands.len() + p.outcomes.len();
            tally(format!(
                "step crash: frames to server in flight {}, to client {}, outcomes unanswered {}",
                to_server > 0,
                to_client > 0,
                waiting > 0
            ));
            if to_server > 0 && waiting > 0 {
                tally("step crash with frames in flight and outcomes unanswered".into());
            }
        }
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
        let (told_commands, told_batches) = {
            let slot = self.slot.clone();
            let s = lock(&slot);
            (self.live_at_crash, self.handed_at_crash) = s.at_crash();
            if self.handed_at_crash.values().any(|h| !h) {
                self.stats.unhanded_at_crash += 1;
            }
            match s.died_in {
                Some((Call::PutBatch, false)) => self.stats.batch_put_torn += 1,
                Some((Call::PutBatch, true)) => self.stats.batch_put_after += 1,
                Some((Call::Handed, false)) => self.stats.handed_torn += 1,
                Some((Call::Handed, true)) => self.stats.handed_after += 1,
                Some((Call::End, false)) => self.stats.end_torn += 1,
                Some((Call::End, true)) => self.stats.end_after += 1,
                _ => {}
            }
            // Told, and the process died before the record's end was written: told again
            // after the restart.
            let mut commands = Vec::new();
            let mut batches = Vec::new();
            for t in &p.told {
                match t {
                    Told::Command { query, reference } => {
                        let key = s.key_of(
                            |r| matches!(r, Record::Command { reference: x, .. } if x == reference),
                        );
                        if key.is_some_and(|k| s.not_ended(k)) {
                            commands.push(query.clone());
                        }
                    }
                    Told::Batch(n) => {
                        let key = s.key_of(|r| *r == Record::Batch(*n));
                        if key.is_some_and(|k| s.not_ended(k)) {
                            batches.push(*n);
                        }
                    }
                }
            }
            (commands, batches)
        };
        for q in told_commands {
            *self.told_then_died.entry(q).or_default() += 1;
        }
        for n in told_batches {
            *self.batch_told_then_died.entry(n).or_default() += 1;
        }
        self.log(format!("process {} crashes at {at:?}", self.life));
        let now = self.now;
        let conn_of = p.conns.clone();
        let conns: Vec<ConnId> = p.conns.values().copied().collect();
        drop(p);
        // Frames the process gave its transport before it died are on the wire: in half the
        // crashes they reach the server before the connection's end does (the other half,
        // the connection is cut first and they are lost).
        let arrive = self.rng.chance(0.5);
        for d in std::mem::take(&mut self.queue).into_values() {
            if let Delivery::ToServer(sid, f) = d {
                if let Some(&conn) = conn_of.get(&sid).filter(|_| arrive) {
                    self.stats.in_flight_at_crash += 1;
                    self.cluster.receive(now, conn, f);
                }
            }
        }
        for conn in conns {
            self.cluster.close(now, conn, false);
        }
        self.queue.clear();
        self.tails.clear();
        self.drain_cluster();
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

    /// Carries out what the core asked of the network, in order: connections, frames (each
    /// checked: a command frame's reference, a batch's handed mark), closes.
    fn flush_wire(&mut self) {
        let now = self.now;
        loop {
            let Some(p) = self.process.as_mut() else {
                return;
            };
            let Some(o) = p.wire.borrow_mut().pop_front() else {
                return;
            };
            match o {
                WireOut::Connect(sid, endpoint) => {
                    match self.cluster.connect(now, endpoint.as_str()) {
                        Ok(conn) => {
                            p.conns.insert(sid, conn);
                            self.schedule(Some((sid, false)), Delivery::Connected(sid));
                        }
                        Err(_) => self.schedule(None, Delivery::Refused(sid)),
                    }
                }
                WireOut::Frame(sid, frame) => {
                    let open = p.conns.contains_key(&sid);
                    if let Ok(f) = ClientFrame::check(frame.clone()) {
                        match &f.unpack().request {
                            ClientRequestT::CommandRequest(c) => {
                                self.sent
                                    .insert((c.execution_reference.clone(), c.query.clone()));
                                let wall = UnixMillis(WALL_BASE + now.as_nanos() / 1_000_000);
                                let last = self
                                    .last_sent
                                    .entry(c.execution_reference.clone())
                                    .or_insert(wall);
                                *last = (*last).max(wall);
                            }
                            ClientRequestT::SubmitBatchRequest(r) if open => {
                                // P-8: its record says handed before its frame goes.
                                let n = number_of(&r.batch);
                                let (key, handed) = {
                                    let s = self.slot();
                                    let key = n.and_then(|n| s.key_of(|r| *r == Record::Batch(n)));
                                    let handed =
                                        key.map(|k| s.live.contains(&k) && s.handed.contains(&k));
                                    (key, handed)
                                };
                                if handed != Some(true) {
                                    self.problems.push(format!(
                                        "batch {n:?} ({key:?}) sent without its handed mark ({handed:?})"
                                    ));
                                }
                                if let Some(n) = n {
                                    let life = self.life;
                                    self.batches.entry(n).or_default().sent_in.insert(life);
                                }
                            }
                            _ => {}
                        }
                    }
                    self.schedule(Some((sid, true)), Delivery::ToServer(sid, frame));
                }
                WireOut::Close(sid) => {
                    if let Some(conn) = p.conns.remove(&sid) {
                        self.cluster.close(now, conn, true);
                        self.schedule(Some((sid, true)), Delivery::Finished(sid));
                        self.drain_cluster();
                    }
                }
                WireOut::Dropped(sid) => {
                    if let Some(conn) = p.conns.remove(&sid) {
                        self.stats.sessions_dropped += 1;
                        self.cluster.close(now, conn, false);
                        self.drain_cluster();
                    }
                }
            }
        }
    }

    /// The core performs the engine's actions and hands out its events (a drain), the
    /// network takes what it was given, the application reads what it was handed; again
    /// while the application asks for more. Stops where the process dies.
    fn pump(&mut self) {
        for _ in 0..10_000 {
            if self.dead() {
                return self.crash();
            }
            if self.process.is_none() {
                return;
            }
            self.tick();
            if let Some(p) = self.process.as_mut() {
                p.core.drain();
            }
            self.flush_wire();
            if self.dead() {
                return self.crash();
            }
            if !self.harvest(false) {
                return;
            }
        }
        self.problems.push("the application never settles".into());
    }

    fn deliver(&mut self, d: Delivery) {
        self.tick();
        let Some(p) = self.process.as_mut() else {
            return;
        };
        match d {
            Delivery::Connected(sid) => {
                if p.conns.contains_key(&sid) {
                    p.core.event(sid, Event::Connected);
                }
            }
            Delivery::Refused(sid) => p
                .core
                .event(sid, Event::Ended(End::Transport("refused".into()))),
            Delivery::Closed(sid) => {
                if p.conns.remove(&sid).is_some() {
                    p.core.event(
                        sid,
                        Event::Ended(End::Transport("closed by the server".into())),
                    );
                }
            }
            Delivery::Finished(sid) => p.core.event(sid, Event::Ended(End::Finished)),
            Delivery::ToClient(sid, f) => {
                if p.conns.contains_key(&sid) {
                    p.core.event(sid, Event::Frame(f));
                }
            }
            Delivery::ToServer(sid, f) => {
                if let Some(&conn) = p.conns.get(&sid) {
                    let now = self.now;
                    self.cluster.receive(now, conn, f);
                    self.drain_cluster();
                }
            }
        }
        self.pump();
    }

    /// The core's deadline passed.
    fn timeout(&mut self) {
        self.tick();
        if let Some(p) = self.process.as_mut() {
            p.core.timeout();
        }
        self.pump();
    }

    /// Advances virtual time by `d`, delivering and timing out what falls in it.
    fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        for _ in 0..100_000 {
            self.pump();
            let next_delivery = self.queue.keys().next().map(|k| k.0);
            let next_timeout = self
                .process
                .as_ref()
                .and_then(|p| p.core.deadline_time())
                .map(|t| self.clock.world_time(t).max(self.now));
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
                            self.timeout();
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
        self.timeout();
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
                .is_some_and(|p| p.commands_open() || p.batches_open());
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
        if self.process.as_ref().is_some_and(Process::commands_open) {
            problems.push("commands still outstanding at the end".into());
        }
        let trace = self.cluster.trace().to_vec();
        let cut = self.slot().cut_queries.clone();
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
                self.stats.executed_seen += executed as u64;
                if executed > 1 {
                    problems.push(format!("{query:?} ref={r} executed {executed} times"));
                }
            }
            self.stats.applied += recorded.len() as u64;
            // The outcome told agrees with the cluster's record: a command told completed
            // was applied under one of its references.
            if app.reports.iter().any(|r| r.starts_with("Completed")) && recorded.is_empty() {
                problems.push(format!(
                    "{query:?} told {:?}, and the cluster has no record of it",
                    app.reports
                ));
            }
            // E-4: no frame of a journaled command goes out once its reference is as old as
            // the journal's horizon (the server may have forgotten it: a repeat could apply
            // it twice), however many restarts came between.
            for r in &references {
                let created = self.slot().created.get(*r).copied();
                if let (Some(created), Some(at)) = (created, self.last_sent.get(*r)) {
                    let horizon = self.config.horizon.as_millis() as u64;
                    if at.0 >= created.0 + horizon {
                        problems.push(format!(
                            "{query:?} ref={r} sent {} ms after its creation, past the horizon",
                            at.0 - created.0
                        ));
                    }
                }
            }
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
        let cut = self.slot().cut_batches.clone();
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
            let never_answered = !app.accepted && app.reports.is_empty() && cut.contains(n);
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
    let torn_partial = w.slot().torn_partial;
    w.stats.torn_partial = torn_partial;
    if std::env::var_os("NERVIX_CRASH_DIGEST").is_some() {
        let mut h = blake3::Hasher::new();
        for l in w.trace.iter().chain(w.cluster.trace()) {
            h.update(l.as_bytes());
            h.update(b"\n");
        }
        eprintln!(
            "seed {seed} lines {} digest {}",
            w.trace.len(),
            h.finalize()
        );
    }
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
        total.add(&s);
    }
    eprintln!("{count} seeds in {:?}: {total:?}", started.elapsed());
    for (k, v) in TALLY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
    {
        eprintln!("tally {v:>6} {k}");
    }
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
        // Processes that died opening the slot, among its repairs, a write of them torn.
        assert!(total.open_crashes > 0 && total.open_torn > 0, "{total:?}");
        assert!(total.completed > total.batches / 2, "{total:?}");
        assert!(total.in_flight_at_crash > 0, "{total:?}");
        assert!(total.executed_seen > total.applied / 2, "{total:?}");
        assert!(total.torn_partial > 0, "{total:?}");
    }
}

impl World {
    /// Arms a crash in the running process, `op` file operations from now.
    fn arm(&mut self, op: u64, torn: Option<u64>, after: bool) {
        assert!(self.process.is_some(), "no process to crash");
        let mut s = self.slot();
        let at = CrashAt::FileOp {
            op: s.applied + op,
            torn,
            after,
        };
        s.crash = Some(at);
        drop(s);
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
    assert!(w.open_producer().is_some(), "the producer is open");
    w
}

impl World {
    /// A crash in the running process's next call of kind `call`.
    fn arm_in(&mut self, call: Call, cut: Cut) {
        assert!(self.process.is_some(), "no process to crash");
        let mut s = self.slot();
        s.crash_in = Some((call, cut));
        s.crash_in_skip = 0;
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
        self.process.as_ref()?;
        let s = self.slot();
        let key = s.key_of(|r| *r == Record::Batch(n))?;
        s.live.contains(&key).then(|| s.handed.contains(&key))
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

/// E-4 across a restart: a command journaled and never sent is repeated by the next process
/// under its reference, whose age the journal kept; the repeat stops once the reference is as
/// old as the horizon, counted from its creation before the crash, not from the restart. The
/// process dies before the send, comes back 30 s short of the horizon, and finds the cluster
/// down until 60 s past it: the command is told uncertain (retry horizon) and no frame of it
/// goes out past the horizon. (Caught mutant: the recovered command's creation taken as the
/// restart, its age dropped; the seeded runs let it live, their restarts coming back within
/// seconds or past the horizon.)
#[test]
fn e_4_client_crash_a_command_repeated_after_a_restart_stops_at_its_references_horizon() {
    let mut w = one_command_done();
    // Die once SECOND's record is sealed, before its frame goes out.
    w.arm(1, None, true);
    w.execute(SECOND.into());
    w.pump();
    assert!(w.process.is_none(), "the process died in the gate");
    let created = w
        .slot()
        .created
        .values()
        .max()
        .copied()
        .expect("SECOND's record");
    // Down until 30 s before the horizon; the cluster is unreachable meanwhile.
    w.cluster.set_down(0, true);
    let horizon = w.config.horizon;
    w.now = Timestamp::from_nanos((created.0 - WALL_BASE) * 1_000_000) + horizon
        - Duration::from_secs(30);
    w.start();
    w.pump();
    assert_eq!(
        w.stats.recovered_after_restart, 1,
        "repeated under its record"
    );
    // The cluster comes back 90 s after the restart: 60 s past the reference's horizon,
    // well within a horizon counted from the restart.
    for _ in 0..90 {
        w.run_for(Duration::from_secs(1));
    }
    w.cluster.set_down(0, false);
    w.settle();
    w.assert_checks();
    let reports = w.reports(SECOND);
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(
        reports[0].starts_with("Uncertain") || reports[0].starts_with("Unknown"),
        "{reports:?}"
    );
    assert_eq!(w.applied(SECOND), 0, "never reached the cluster");
}

/// E-4, the record kept for an uncertain command: the application was told the command is
/// uncertain and holds it to recover later; the process dies before it does. The record,
/// kept until the reference's validity passes, comes back, and the next process repeats
/// the command under its reference: it is applied once and its outcome told once. (Caught
/// mutant: the record of an uncertain command ended at once, as any other's; the seeded
/// runs let it live, their application recovering an uncertain command within the same
/// step.)
#[test]
fn e_4_client_crash_an_uncertain_command_held_by_the_application_comes_back_after_a_crash() {
    let mut w = one_command_done();
    w.hold_recoveries = true;
    w.cluster.set_down(0, true);
    w.execute(SECOND.into());
    w.pump();
    // The command's deadline passes with the cluster down: uncertain, held.
    for _ in 0..60 {
        w.run_for(Duration::from_secs(1));
    }
    let held = w.process.as_ref().map_or(0, |p| p.pending_recovery.len());
    assert_eq!(held, 1, "told uncertain and held: {:?}", w.reports(SECOND));
    w.crash();
    w.hold_recoveries = false;
    w.cluster.set_down(0, false);
    w.settle();
    w.assert_checks();
    assert_eq!(w.stats.recovered_after_restart, 1, "its record came back");
    assert_eq!(w.reports(SECOND), ["Completed Some(Executed)"]);
    assert_eq!(w.applied(SECOND), 1);
}
