//! Issue 19 item 4: the simulated client process crashes and restarts on the same journal.
//!
//! A client process is an engine, the journal's command policy ([`CommandJournal`], the very
//! code the drivers run) over an in-memory store, and the application that submits commands.
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
//!   the process died (the torn tail).
//!
//! `NERVIX_CRASH_SEEDS=n` runs n seeds (CI runs a modest count), `NERVIX_CRASH_SEED=n` replays
//! one, `NERVIX_TRACE=1` prints the failing seed's trace.

use bytes::Bytes;
use nervix_harness::cluster::{ClusterConfig, ConnId, Faults, Output, SimCluster};
use nervix_journal::{
    keeps, ClientJournal, ClientJournalConfig, CommandJournal, Entry, JournalError, JournalKey,
    JournaledCommand, RecordStore, RecoveredCommand, DEFAULT_HORIZON,
};
use nervix_protocol::client::{
    Action, Client, ClientConfig, ClientEvent, CommandHandle, CommandResult, Gated,
    RetainedCommand, SessionId,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::ClientFrame;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::time::{Timestamp, UnixMillis};
use sf_journal::recovery::SlotFiles;
use sf_journal::slot::{self, parse_segment_name};
use sf_journal::{FileOp, MemDir};
use std::collections::{BTreeMap, BTreeSet};
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
                    if let (
                        Some(n),
                        FileOp::Write {
                            file,
                            offset,
                            bytes,
                        },
                    ) = (torn, op)
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

impl RecordStore for MemStore {
    type Error = JournalError;

    fn put(&mut self, entry: &Entry, now_millis: u64) -> Result<JournalKey, JournalError> {
        let w = self.journal.put(entry, now_millis)?;
        if let Entry::Command(c) = entry {
            self.slot
                .journaled
                .insert(c.reference.to_string(), c.query.clone());
        }
        if !self.carry(&w.ops) {
            self.slot.cut_put = Some(w.key);
            if let Entry::Command(c) = entry {
                self.slot.cut_queries.insert(c.query.clone());
            }
        }
        Ok(w.key)
    }

    fn end(&mut self, key: JournalKey, now_millis: u64) -> Result<(), JournalError> {
        let w = self.journal.end(key, now_millis)?;
        if !self.carry(&w.ops) {
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

/// Whether `op` is the last of `ops` (so the call it belongs to wrote everything).
fn op_is_last(op: &FileOp, ops: &[FileOp]) -> bool {
    ops.last().is_some_and(|l| std::ptr::eq(l, op))
}

fn journal_config() -> ClientJournalConfig {
    // Small segments, so appends open segments, copy records forward and trim.
    ClientJournalConfig::new(2048, 32 * 1024)
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

/// One life of the client process.
struct Process {
    engine: Client,
    core: CommandJournal<MemStore>,
    conns: BTreeMap<SessionId, ConnId>,
    /// Which application command each engine handle carries (by query).
    handles: BTreeMap<CommandHandle, String>,
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
        let cluster = SimCluster::new(ClusterConfig {
            nodes: 1,
            seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 7,
            faults,
            ..ClusterConfig::default()
        });
        let mut crashes = Vec::new();
        for _ in 0..if scripted { 0 } else { rng.below(3) + 1 } {
            crashes.push(if rng.chance(0.6) {
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
        if let Some(next) = self.crashes.first().copied() {
            slot.crash = Some(match next {
                CrashAt::FileOp { op, torn, after } => CrashAt::FileOp {
                    op: slot.applied + op,
                    torn,
                    after,
                },
                step => step,
            });
        }
        let (journal, ops) = ClientJournal::recover(journal_config(), &slot_files(&slot.dir))
            .unwrap_or_else(|e| panic!("seed {}: the slot does not recover: {e}", self.seed));
        slot.dir.apply_all(&ops);
        let wall_now = self.wall();
        let list = journal.classify(wall_now, DEFAULT_HORIZON);
        // Nothing journaled is silently dropped: what was live at the crash comes back, but
        // the record being appended when the process died; nothing ended comes back, but the
        // record being ended.
        if self.life > 0 {
            let back: BTreeSet<JournalKey> = list
                .commands
                .iter()
                .map(|c| match c {
                    RecoveredCommand::Repeatable { key, .. }
                    | RecoveredCommand::Expired { key, .. } => *key,
                    _ => JournalKey(u64::MAX),
                })
                .collect();
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
        let ledger = slot.journaled.clone();
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
        });
        self.life += 1;
        self.log(format!("process {} starts", self.life));
        let now = self.now;
        let Some(p) = self.process.as_mut() else {
            return;
        };
        let (recovery, _) = p.core.take_recovery(now);
        let mut reports = Vec::new();
        let mut repeat = Vec::new();
        for c in recovery.commands {
            match c {
                JournaledCommand::Repeatable { command, .. } => repeat.push(command),
                JournaledCommand::Unknown { reference, .. } => reports.push(reference),
                _ => {}
            }
        }
        if self.dead() {
            return self.crash();
        }
        for reference in reports {
            let query = ledger.get(&reference).cloned().unwrap_or_default();
            self.stats.unknown_after_restart += 1;
            self.report(&query, format!("Unknown ref={reference}"));
        }
        for command in repeat {
            self.stats.recovered_after_restart += 1;
            self.recover(&command);
            if self.dead() {
                return self.crash();
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
        self.live_at_crash = p
            .core
            .store()
            .journal
            .live_entries()
            .map(|e| e.key)
            .collect();
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
            let now = self.now;
            let Some(p) = self.process.as_mut() else {
                return;
            };
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
                            if let ClientRequestT::CommandRequest(c) = &f.unpack().request {
                                self.sent
                                    .insert((c.execution_reference.clone(), c.query.clone()));
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
        let keep = keeps(&result);
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
        let _ = p.core.ended_as(handle, keep, now);
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
            let quantum = Duration::from_millis(self.rng.below(150));
            self.run_for(quantum);
        }
        for _ in 0..4000 {
            if self.process.is_none() {
                self.restart();
            }
            let busy = self
                .process
                .as_ref()
                .is_some_and(|p| p.engine.outstanding_commands() > 0);
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
                && app.reports[0].starts_with("Completed")
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
fn client_crash_every_command_applied_at_most_once_and_reported_once() {
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
