//! The client's journal over real sockets (issue 19): a client process journals its commands,
//! is killed with SIGKILL while the server has applied them and their replies are lost, and
//! its successor on the same slot recovers each outcome from the server's record, never
//! applying a command twice.
//!
//! The client process is a program run again with [`CHILD`] set ([`ChildProgram`]): in the
//! tests, this test binary running only its `journal_child` test (ignored otherwise); in the
//! tokio driver's example session (`just run`), the example itself, whose `main` runs
//! [`child`] first when [`CHILD`] is set. The parent reads what the child submitted from its
//! standard output. [`sigkill_story`] tells what happens as it goes ([`Told`]), so the
//! example prints the same crash and recovery the tests check.

use crate::child::{self, Head, Running};
use crate::{config_of, scratch, seeds_of, Driver, Error, Via};
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::journal::JournalConfig;
use nervix_driver_support::journaled::{JournalRefusal, JournaledCommand, Recovery};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::{CommandReport, CommandResult, RetainedCommand};
use nervix_protocol::schema::OutcomeOrigin;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The variable that makes the `journal_child` test the client process.
pub const CHILD: &str = "NERVIX_JOURNAL_CHILD";

const USER: &str = "journal-user";
const PASSWORD: &str = "journal-password";

/// The sender name of every slot here.
pub(crate) const SENDER: &str = "client-a";

pub(crate) fn creds() -> Credentials {
    Credentials::new(USER, PASSWORD)
}

pub(crate) fn cluster() -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 1,
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap()
}

/// What the child is told: the common head (its `dir` is the journal's directory), then the
/// number of commands, and whether the commands end a transaction (`tx`) or stand alone (`-`).
struct Spec {
    head: Head,
    commands: usize,
    /// The child begins a transaction, runs one statement in it, waits for the file
    /// [`GO`] in the journal's directory, and then submits `COMMIT;` as its one command.
    transaction: bool,
    /// The child waits for [`GO`], then submits `BEGIN;` and, while it is unanswered, one
    /// statement that waits behind it for its position.
    held: bool,
}

/// The file the parent creates in the journal directory when a transaction child may commit.
const GO: &str = "go";

impl Spec {
    fn encode(&self) -> String {
        let tx = if self.transaction {
            "tx"
        } else if self.held {
            "held"
        } else {
            "-"
        };
        self.head
            .encode(&[self.commands.to_string(), tx.to_string()])
    }

    fn from_env() -> Spec {
        let (head, rest) = Head::from_env(CHILD, "the journal tests' client process");
        Spec {
            head,
            commands: rest[0].parse().unwrap(),
            transaction: rest[1] == "tx",
            held: rest[1] == "held",
        }
    }
}

/// The configuration of a client of `seeds` over `via`, trusting `cert`, journaling in `dir`.
pub(crate) fn journaled<D: Driver>(
    seeds: &[String],
    via: Via,
    cert: Option<&Path>,
    journal: JournalConfig,
) -> D::Config {
    let mut c = config_of::<D>(
        seeds,
        creds(),
        via,
        Duration::from_secs(10),
        Duration::from_secs(3),
    );
    D::client_config(&mut c).backoff_initial = Duration::from_millis(20);
    D::client_config(&mut c).backoff_max = Duration::from_millis(200);
    if let Some(cert) = cert {
        c = D::with_root(c, std::fs::read(cert).unwrap());
    }
    D::with_journal(c, journal)
}

/// The configuration of a client on `spec`'s slot, reached over `via`, with its journal's
/// configuration changed by `tune`.
fn slot_config<D: Driver>(
    spec: &Spec,
    via: Via,
    tune: impl FnOnce(&mut JournalConfig),
) -> D::Config {
    let mut j = JournalConfig::new(spec.head.dir.clone(), SENDER.to_string());
    tune(&mut j);
    journaled::<D>(&spec.head.seeds, via, spec.head.cert.as_deref(), j)
}

/// The client process: submits the commands the spec asks for, prints each reference as it
/// is accepted, and waits to be killed (at most a minute).
pub fn child<D: Driver>() {
    let spec = Spec::from_env();
    let d = D::new();
    let config = slot_config::<D>(&spec, spec.head.via, |_| {});
    let client = d.start(config).unwrap();
    d.select_domain(&client, Some("tenant")).unwrap();
    if spec.transaction {
        let tx = d.transaction(&client).unwrap().expect("BEGIN completed");
        let r = d.tx_execute(&tx, "CREATE RELAY in_transaction;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        println!("IN TRANSACTION");
        wait_for_go(&spec);
        let p = d.submit(&client, "COMMIT;").unwrap();
        println!("SUBMITTED {}", D::reference(&p));
        println!("ALL SUBMITTED");
        child::until_killed("the journal tests' client process");
    }
    if spec.held {
        // A session is open before the parent lets the replies be lost.
        let p = d.submit(&client, "SHOW DOMAINS;").unwrap();
        assert!(matches!(d.wait(p).unwrap(), CommandResult::Completed(_)));
        println!("READY");
        wait_for_go(&spec);
        let begin = d.submit(&client, "BEGIN;").unwrap();
        let held = d
            .submit(&client, "CREATE RELAY held_behind_begin;")
            .unwrap();
        println!("SUBMITTED {}", D::reference(&begin));
        println!("SUBMITTED {}", D::reference(&held));
        println!("ALL SUBMITTED");
        child::until_killed("the journal tests' client process");
    }
    let _pending = child::submit_commands(&d, &client, spec.commands, "journaled");
    println!("ALL SUBMITTED");
    child::until_killed("the journal tests' client process");
}

/// Waits, bounded, for the parent's [`GO`] file.
fn wait_for_go(spec: &Spec) {
    let go = spec.head.dir.join(GO);
    let end = Instant::now() + Duration::from_secs(30);
    while !go.exists() {
        assert!(Instant::now() < end, "the parent never said go");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How the client process is started: a program run with these arguments and [`CHILD`] set,
/// which runs [`child`] for the same driver.
#[derive(Debug, Clone)]
pub struct ChildProgram {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

impl ChildProgram {
    /// This program again, without arguments: its `main` runs [`child`] first when [`CHILD`]
    /// is set.
    pub fn this_program() -> Self {
        Self {
            program: std::env::current_exe().expect("the running program's path"),
            args: Vec::new(),
        }
    }

    /// This test binary again, running only the `journal_child` test of driver `D`.
    fn test_of<D: Driver>() -> Self {
        Self {
            program: child::this_binary(),
            args: child::test_args(&format!("journal_child{}", suffix::<D>())),
        }
    }
}

/// The child process running `spec`, and the lines it prints, in order.
fn spawn(program: &ChildProgram, spec: &Spec) -> (Running, mpsc::Receiver<String>) {
    let mut running = child::spawn(&program.program, &program.args, CHILD, spec.encode(), false);
    let lines = std::mem::replace(&mut running.lines, mpsc::channel().1);
    (running, lines)
}

/// The names of the blocking driver's tests end in `_blocking`.
pub(crate) fn suffix<D: Driver>() -> &'static str {
    if D::NAME == "blocking" {
        "_blocking"
    } else {
        ""
    }
}

/// The `n` references the child printed, within 30 s.
pub(crate) fn submitted(rx: &mpsc::Receiver<String>, n: usize) -> Vec<String> {
    let end = Instant::now() + Duration::from_secs(30);
    let mut refs = Vec::new();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("the client process printed {} of {n}", refs.len()));
        // The test harness may have printed the test's name on the same line.
        if line.ends_with("ALL SUBMITTED") {
            assert_eq!(refs.len(), n);
            return refs;
        }
        if let Some((_, r)) = line.split_once("SUBMITTED ") {
            refs.push(r.to_string());
        }
    }
}

/// Waits (at most 20 s) until the cluster recorded every one of `refs`.
pub(crate) fn recorded_all(lb: &Loopback, refs: &[String]) {
    let end = Instant::now() + Duration::from_secs(20);
    while !refs.iter().all(|r| lb.recorded(r).is_some()) {
        assert!(Instant::now() < end, "the cluster did not apply them all");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How many times the cluster applied the command of `reference` (an `Executed` outcome,
/// not one answered from its record).
pub(crate) fn applied(lb: &Loopback, reference: &str) -> usize {
    let needle = format!("ref={reference} ");
    lb.trace()
        .iter()
        .filter(|l| l.contains(&needle) && l.contains("(Executed)"))
        .count()
}

/// Recovers every command of a successor's recovery `list` on `client`, in the order listed:
/// each inside its retry validity and completed with the outcome recorded when it ran.
/// `check` looks at each command and its report. Gives the commands' references, in order.
pub(crate) fn recover_listed<D: Driver>(
    d: &D,
    client: &D::Client,
    list: &Recovery,
    mut check: impl FnMut(&RetainedCommand, &CommandReport),
) -> Vec<String> {
    let mut listed = Vec::new();
    for c in &list.commands {
        let JournaledCommand::Repeatable { command, .. } = c else {
            panic!("inside its retry validity: {c:?}")
        };
        listed.push(command.reference.to_string());
        match d.recover(client, command).unwrap() {
            CommandResult::Completed(report) => {
                check(command, &report);
                assert_eq!(
                    report.origin(),
                    Some(OutcomeOrigin::Recovered),
                    "the outcome recorded when it ran"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    listed
}

/// How many requests the cluster saw for `reference`.
fn requests(lb: &Loopback, reference: &str) -> usize {
    let needle = format!("ref={reference} ");
    lb.trace().iter().filter(|l| l.contains(&needle)).count()
}

fn spec_for<D: Driver>(lb: &Loopback, via: Via, name: &str, commands: usize) -> Spec {
    let dir = scratch::<D>(&format!("journal-{name}-{via:?}"));
    let cert = lb.certificate_der().map(|der| {
        let path = dir.join("root.der");
        std::fs::write(&path, der).unwrap();
        path
    });
    Spec {
        head: Head {
            via,
            dir: dir.join("journal"),
            cert,
            seeds: seeds_of(lb, via),
        },
        commands,
        transaction: false,
        held: false,
    }
}

/// Starts the child of `program`, waits for its commands to be applied with their replies
/// lost, and kills it with SIGKILL. Returns the references it submitted.
fn crashed(
    program: &ChildProgram,
    lb: &Loopback,
    spec: &Spec,
    tell: &mut dyn FnMut(Told<'_>),
    held: impl FnOnce(u32, &mut dyn FnMut(Told<'_>)),
) -> Vec<String> {
    lb.drop_replies(0, true);
    let (mut child, rx) = spawn(program, spec);
    let pid = child.child.id();
    tell(Told::Started {
        pid,
        slot: &spec.head.dir.join(SENDER),
    });
    let refs = submitted(&rx, spec.commands);
    recorded_all(lb, &refs);
    for r in &refs {
        tell(Told::Journaled { reference: r });
    }
    held(pid, tell);
    child.kill();
    tell(Told::Killed { pid });
    lb.drop_replies(0, false);
    refs
}

/// What [`sigkill_story`] tells as it goes, in this order.
#[derive(Debug)]
#[non_exhaustive]
pub enum Told<'a> {
    /// The client process started on its slot, journaling every command before it sends it.
    Started {
        /// The process.
        pid: u32,
        /// Its slot directory.
        slot: &'a Path,
    },
    /// A command the client process journaled and sent; the cluster applied it and holds its
    /// reply back, so the process never learns the outcome.
    Journaled {
        /// The command's execution reference.
        reference: &'a str,
    },
    /// A second client started on the held slot was refused, naming the holder.
    Refused {
        /// The process the refusal named.
        holder: Option<u32>,
    },
    /// The client process was killed with SIGKILL, its commands' outcomes unknown to it.
    Killed {
        /// The process.
        pid: u32,
    },
    /// What the successor on the same slot found in the journal.
    Listed(&'a Recovery),
    /// A listed command repeated under its reference, and the result it ended with.
    Recovered {
        /// The command's execution reference.
        reference: &'a str,
        /// Its result.
        result: &'a CommandResult,
    },
    /// How many times the cluster applied a command in all.
    Applied {
        /// The command's execution reference.
        reference: &'a str,
        /// Times applied (an `Executed` outcome, not one answered from the record).
        times: usize,
    },
}

/// Issue 19, items 1, 2 and 5: commands journaled before they were sent survive a SIGKILL of
/// the client; the next client on the slot lists them in order and recovers each outcome
/// from the server's record (`Recovered`), and no command is applied twice. While the killed
/// client lived, a second client on its slot was refused naming it.
pub fn recovered_after_sigkill<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let mut told = Vec::new();
    sigkill_story::<D>(via, &ChildProgram::test_of::<D>(), 3, &mut |t| {
        told.push(match t {
            Told::Started { .. } => "started",
            Told::Journaled { .. } => "journaled",
            Told::Refused { .. } => "refused",
            Told::Killed { .. } => "killed",
            Told::Listed(_) => "listed",
            Told::Recovered { .. } => "recovered",
            Told::Applied { .. } => "applied",
        })
    });
    // The story is told as it happens: the example session prints it in this order.
    let mut expected = vec!["started"];
    expected.extend(["journaled"; 3]);
    expected.extend(["refused", "killed", "listed"]);
    expected.extend(["recovered"; 3]);
    expected.extend(["applied"; 3]);
    assert_eq!(told, expected);
}

/// The story of [`recovered_after_sigkill`] with `commands` commands, the client process
/// started as `program` says, each step told to `tell` as it happens; panics where a check
/// fails. Its cluster (one node, on 127.0.0.1) and its scratch directory are its own.
pub fn sigkill_story<D: Driver>(
    via: Via,
    program: &ChildProgram,
    commands: usize,
    tell: &mut dyn FnMut(Told<'_>),
) {
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "sigkill", commands);
    let d = D::new();
    let config = |horizon: Option<Duration>| {
        slot_config::<D>(&spec, via, |j| {
            if let Some(h) = horizon {
                j.horizon = h;
            }
        })
    };
    let refs = crashed(program, &lb, &spec, tell, |pid, tell| {
        match d.start(config(None)) {
            Err(Error::Journal(JournalRefusal::Held { pid: holder, slot })) => {
                assert_eq!(holder, Some(pid), "the refusal names the holder");
                assert!(slot.ends_with(SENDER));
                tell(Told::Refused { holder });
            }
            Err(e) => panic!("a second client on a held slot: {e:?}"),
            Ok(_) => panic!("a second client on a held slot was started"),
        }
    });
    for r in &refs {
        assert_eq!(applied(&lb, r), 1, "{r} applied once before the crash");
    }
    let successor = d.start(config(None)).unwrap();
    let list = d.recovery(&successor).unwrap();
    tell(Told::Listed(&list));
    let listed: Vec<String> = list
        .commands
        .iter()
        .map(|c| match c {
            JournaledCommand::Repeatable { command, .. } => command.reference.to_string(),
            other => panic!("inside its retry validity: {other:?}"),
        })
        .collect();
    assert_eq!(listed, refs, "every command, in the order it was written");
    for c in &list.commands {
        let JournaledCommand::Repeatable { command, .. } = c else {
            unreachable!()
        };
        assert_eq!(command.domain.as_deref(), Some("tenant"));
        assert!(command.query.starts_with("CREATE RELAY journaled_"));
        let result = d.recover(&successor, command).unwrap();
        tell(Told::Recovered {
            reference: &command.reference.to_string(),
            result: &result,
        });
        match result {
            CommandResult::Completed(report) => {
                assert_eq!(report.reference(), &command.reference);
                assert_eq!(
                    report.origin(),
                    Some(OutcomeOrigin::Recovered),
                    "the outcome recorded when it ran"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    for r in &refs {
        let times = applied(&lb, r);
        tell(Told::Applied {
            reference: r,
            times,
        });
        assert_eq!(times, 1, "{r} never applied twice");
    }
    assert!(
        d.recovery(&successor).unwrap().is_empty(),
        "the list is handed out once"
    );
    let stats = d.stats(&successor).unwrap();
    let journal = stats.journal.expect("the client keeps a journal");
    assert_eq!(journal.live, 0, "every recovered outcome ended its record");
    d.close(successor, false).unwrap();
    let third = d.start(config(None)).unwrap();
    assert!(
        d.recovery(&third).unwrap().is_empty(),
        "nothing comes back twice"
    );
    d.close(third, false).unwrap();
    lb.stop();
    if let Some(scratch) = spec.head.dir.parent() {
        let _ = std::fs::remove_dir_all(scratch);
    }
}

/// The value of `key=` in the cluster's trace line of the command of `reference`.
fn traced(lb: &Loopback, reference: &str, key: &str) -> Option<String> {
    let needle = format!("ref={reference} ");
    let line = lb
        .trace()
        .into_iter()
        .find(|l| l.contains(&needle) && l.contains("COMMAND"))?;
    let at = line.find(&format!(" {key}="))? + key.len() + 2;
    Some(line[at..].split(' ').next()?.to_string())
}

/// Issue 19, item 5, a transaction (E-2, E-3, X-4): a client killed after its `COMMIT` reached
/// the cluster, whose reply never came back, leaves the commit journaled with the position and
/// preview it carried. The successor lists it alone (the `BEGIN` and the statement ended at
/// their outcomes), repeats it exactly, and gets the commit's recorded outcome: the
/// transaction is committed once.
pub fn transaction_commit_recovered_after_sigkill<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let mut spec = spec_for::<D>(&lb, via, "transaction", 1);
    spec.transaction = true;
    let (child, rx) = spawn(&ChildProgram::test_of::<D>(), &spec);
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let line = rx
            .recv_timeout(end.saturating_duration_since(Instant::now()))
            .expect("the child began its transaction");
        if line.ends_with("IN TRANSACTION") {
            break;
        }
    }
    lb.drop_replies(0, true);
    std::fs::write(spec.head.dir.join(GO), b"").unwrap();
    let refs = submitted(&rx, 1);
    recorded_all(&lb, &refs);
    drop(child); // SIGKILL, and waited for
    lb.drop_replies(0, false);
    let commit = &refs[0];
    assert_eq!(applied(&lb, commit), 1, "committed before the crash");
    let position = traced(&lb, commit, "pos");
    let preview = traced(&lb, commit, "preview");
    assert!(
        position.is_some() || preview.is_some(),
        "a commit carries its transaction's position or preview"
    );
    let d = D::new();
    let config = slot_config::<D>(&spec, via, |_| {});
    let successor = d.start(config).unwrap();
    let list = d.recovery(&successor).unwrap();
    let [JournaledCommand::Repeatable { command, .. }] = &list.commands[..] else {
        panic!("the commit alone: {list:?}")
    };
    assert_eq!(command.reference.to_string(), *commit);
    assert_eq!(command.query, "COMMIT;");
    assert_eq!(command.domain.as_deref(), Some("tenant"));
    assert_eq!(command.position.map(|p| p.to_string()), position);
    assert_eq!(
        command
            .preview
            .as_ref()
            .map(|p| format!("{}@{}", p.transaction_id, p.position)),
        preview
    );
    match d.recover(&successor, command).unwrap() {
        CommandResult::Completed(report) => {
            assert_eq!(report.origin(), Some(OutcomeOrigin::Recovered));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(applied(&lb, commit), 1, "the commit never ran twice");
    assert_eq!(d.stats(&successor).unwrap().journal.unwrap().live, 0);
    d.close(successor, false).unwrap();
    lb.stop();
}

/// E-2 with X-2 over a driver: a client killed while a `BEGIN` was unanswered and a statement
/// made after it waited behind it. That statement's record was written before its position
/// was known, so it is not the command its frames carry: the successor lists it as of unknown
/// outcome, naming its reference, and never as a command to repeat; the `BEGIN` is
/// repeatable as sent. Before the fix the statement came back repeatable with no position,
/// and a repetition would have run it outside the transaction.
pub fn held_behind_begin_reported_unknown_after_sigkill<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let mut spec = spec_for::<D>(&lb, via, "held", 2);
    spec.held = true;
    let (child, rx) = spawn(&ChildProgram::test_of::<D>(), &spec);
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let line = rx
            .recv_timeout(end.saturating_duration_since(Instant::now()))
            .expect("the child opened its session");
        if line.ends_with("READY") {
            break;
        }
    }
    lb.drop_replies(0, true);
    std::fs::write(spec.head.dir.join(GO), b"").unwrap();
    let refs = submitted(&rx, 2);
    drop(child); // SIGKILL, and waited for
    lb.drop_replies(0, false);
    let (begin, held) = (&refs[0], &refs[1]);
    assert_eq!(
        requests(&lb, held),
        0,
        "it waited, unsent, behind the BEGIN"
    );
    let d = D::new();
    let config = slot_config::<D>(&spec, via, |_| {});
    let successor = d.start(config).unwrap();
    let list = d.recovery(&successor).unwrap();
    let repeatable: Vec<_> = list
        .commands
        .iter()
        .filter_map(|c| match c {
            JournaledCommand::Repeatable { command, .. } => Some(command.reference.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(repeatable, std::slice::from_ref(begin), "{list:?}");
    let unknown: Vec<_> = list
        .commands
        .iter()
        .filter_map(|c| match c {
            JournaledCommand::Unknown { reference, .. } => Some(reference.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(unknown, std::slice::from_ref(held), "{list:?}");
    d.close(successor, false).unwrap();
    lb.stop();
}

/// A client process killed with two commands out, and the configuration of a successor on its
/// slot for which both are past their retry validity (a horizon of zero); their references.
fn expired<D: Driver>(lb: &Loopback, via: Via, name: &str) -> (Vec<String>, D::Config) {
    let spec = spec_for::<D>(lb, via, name, 2);
    let refs = crashed(
        &ChildProgram::test_of::<D>(),
        lb,
        &spec,
        &mut |_| {},
        |_, _| {},
    );
    let config = slot_config::<D>(&spec, via, |j| {
        j.horizon = Duration::ZERO;
    });
    (refs, config)
}

/// The references of a recovery list's commands, every one of them reported unknown.
fn unknown_references(list: &nervix_driver_support::journaled::Recovery) -> Vec<String> {
    list.commands
        .iter()
        .map(|c| match c {
            JournaledCommand::Unknown { reference, .. } => reference.clone(),
            other => panic!("past its retry validity: {other:?}"),
        })
        .collect()
}

/// Issue 19, item 2 (E-4): a journaled command past its retry validity is reported unknown,
/// naming its reference, and never repeated; once reported its record ends.
pub fn past_validity_reported_unknown<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let d = D::new();
    let (refs, config) = expired::<D>(&lb, via, "expired");
    let successor = d.start(config.clone()).unwrap();
    let seen: Vec<usize> = refs.iter().map(|r| requests(&lb, r)).collect();
    let unknown = unknown_references(&d.recovery(&successor).unwrap());
    assert_eq!(unknown, refs);
    // Nothing is repeated: the cluster saw no further request of either.
    std::thread::sleep(Duration::from_millis(200));
    let after: Vec<usize> = refs.iter().map(|r| requests(&lb, r)).collect();
    assert_eq!(seen, after);
    d.close(successor, false).unwrap();
    let third = d.start(config).unwrap();
    assert!(
        d.recovery(&third).unwrap().is_empty(),
        "reported once, then ended"
    );
    d.close(third, false).unwrap();
    lb.stop();
}

/// Issue 19, item 2 (E-4): a command recovered after a restart keeps its age. Its reference
/// was created before the crash; once that is longer ago than the engine's retry validity,
/// `recover` ends it uncertain (`RetryHorizon`) and never repeats it, however soon after the
/// restart it is asked, even when the journal's own horizon still lists it as repeatable.
pub fn recovered_command_keeps_its_age<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "aged", 1);
    let refs = crashed(
        &ChildProgram::test_of::<D>(),
        &lb,
        &spec,
        &mut |_| {},
        |_, _| {},
    );
    let validity = Duration::from_millis(800);
    // The reference is older than the validity before the successor starts.
    std::thread::sleep(validity + Duration::from_millis(400));
    let mut config = slot_config::<D>(&spec, via, |_| {});
    D::client_config(&mut config).retry_horizon = validity;
    let d = D::new();
    let successor = d.start(config).unwrap();
    let list = d.recovery(&successor).unwrap();
    assert_eq!(list.commands.len(), 1);
    let JournaledCommand::Repeatable { command, .. } = &list.commands[0] else {
        panic!(
            "the journal's horizon lists it as repeatable: {:?}",
            list.commands[0]
        );
    };
    assert_eq!(command.reference.to_string(), refs[0]);
    let seen = requests(&lb, &refs[0]);
    match d.recover(&successor, command).unwrap() {
        CommandResult::Uncertain { cause, .. } => assert_eq!(
            cause,
            nervix_protocol::client::UncertainCause::RetryHorizon,
            "past its retry validity, counted from its reference's creation"
        ),
        other => panic!("repeated past its retry validity: {other:?}"),
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(requests(&lb, &refs[0]), seen, "never sent again");
    d.close(successor, false).unwrap();
    lb.stop();
}

/// Issue 19, item 2 (E-4): a command whose record was written a minute before the client
/// starts (well inside the horizon) keeps that age on the engine's time, which reaches back
/// far enough for any age a horizon allows: it is listed repeatable, created a minute before
/// the start, not reported unknown.
pub fn a_command_a_minute_old_at_the_start_is_repeatable_with_its_age<D: Driver>(via: Via) {
    use nervix_driver_support::journal::{CommandRecord, DurableJournal, Entry};
    use nervix_protocol::time::UnixMillis;
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "a-minute-old", 0);
    let journal = JournalConfig::new(spec.head.dir.clone(), SENDER.to_string());
    let now_wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let reference =
        nervix_protocol::command::ExecutionReference::parse("0190a5e0-0000-7000-8000-00000000aa01")
            .unwrap();
    let record = CommandRecord {
        reference: reference.clone(),
        query: "CREATE RELAY a_minute_old;".into(),
        domain: Some("tenant".into()),
        position: None,
        preview: None,
        created_wall: UnixMillis(now_wall - 60_000),
    };
    {
        let (mut j, _) = DurableJournal::open(&journal, UnixMillis(now_wall)).unwrap();
        j.put(&Entry::Command(record), 0).unwrap();
    }
    let d = D::new();
    let started = Instant::now();
    let client = d.start(slot_config::<D>(&spec, via, |_| {})).unwrap();
    let list = d.recovery(&client).unwrap();
    let [JournaledCommand::Repeatable { command, .. }] = &list.commands[..] else {
        panic!("a minute old, inside the horizon: {list:?}")
    };
    assert_eq!(command.reference, reference);
    // Its creation lies a minute before the engine's time at the start, within the time the
    // start took.
    let created = Duration::from_nanos(command.created.as_nanos());
    let at_start = nervix_driver_support::driver_core::ENGINE_TIME_BEFORE_START;
    let took = started.elapsed() + Duration::from_secs(1);
    let a_minute_after = created + Duration::from_secs(60);
    assert!(
        a_minute_after + took >= at_start && a_minute_after <= at_start + took,
        "created at {created:?}, the engine's time began at {at_start:?}"
    );
    d.close(client, false).unwrap();
    lb.stop();
}

/// Issue 19, item 2: what a recovery list reports unknown ends only once the list reached
/// the application. A call given up before it returned takes the list from this life of the
/// client (a later call gets none) but leaves its records, so the next start reports them
/// again; once read, they end. `answered`: the driver had put its answer in the call's
/// channel before the call was given up (the regression: its records ended, though nobody
/// ever read the list).
pub fn an_abandoned_recovery_list_leaves_its_records<D: Driver>(via: Via, answered: bool) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let (refs, config) = expired::<D>(&lb, via, if answered { "answered" } else { "abandoned" });
    let d = D::on_one_thread();
    let successor = d.start(config.clone()).unwrap();
    assert!(
        d.recovery_abandoned(&successor, answered),
        "this driver cannot give a call up"
    );
    assert!(
        d.recovery(&successor).unwrap().is_empty(),
        "the list went to the call given up"
    );
    assert_eq!(
        d.stats(&successor).unwrap().journal.unwrap().live,
        refs.len() as u64,
        "nobody read the list: its records stay"
    );
    d.close(successor, false).unwrap();
    let third = d.start(config.clone()).unwrap();
    let unknown = unknown_references(&d.recovery(&third).unwrap());
    assert_eq!(unknown, refs, "reported again after the restart");
    d.close(third, false).unwrap();
    let fourth = d.start(config).unwrap();
    assert!(
        d.recovery(&fourth).unwrap().is_empty(),
        "read once, then ended"
    );
    d.close(fourth, false).unwrap();
    lb.stop();
}

/// Issue 19, item 1 (SF-23, SF-24): a journal with no room refuses the command with a typed
/// error saying the wire is reconnecting, and nothing is sent.
pub fn full_journal_refuses<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "full", 0);
    let d = D::new();
    let config = slot_config::<D>(&spec, via, |j| {
        j.segment_bytes = 4096;
        j.capacity_bytes = 8192;
    });
    // The only node is down: every command waits for a session, its record kept.
    lb.kill(0);
    let client = d.start(config).unwrap();
    d.select_domain(&client, Some("tenant")).unwrap();
    let mut refused = None;
    for i in 0..2000 {
        match d.submit(&client, &format!("CREATE RELAY filler_{i};")) {
            Ok(_) => {}
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    match refused {
        Some(Error::Journal(JournalRefusal::Full { publishing })) => {
            assert!(!publishing, "no session was open: the wire is reconnecting")
        }
        other => panic!("a full journal: {other:?}"),
    }
    assert!(
        lb.trace().iter().all(|l| !l.contains("COMMAND")),
        "nothing was sent"
    );
    let _ = d.close(client, false);

    // With a session open and no outcome coming back, the journal fills while the wire is
    // publishing; the refused command is not sent.
    lb.revive(0);
    let spec = spec_for::<D>(&lb, via, "full-publishing", 0);
    let config = slot_config::<D>(&spec, via, |j| {
        j.segment_bytes = 4096;
        j.capacity_bytes = 8192;
    });
    let client = d.connect(config).unwrap();
    d.select_domain(&client, Some("tenant")).unwrap();
    lb.drop_replies(0, true);
    let mut refused = None;
    let mut sent = Vec::new();
    for i in 0..2000 {
        match d.submit(&client, &format!("CREATE RELAY busy_{i};")) {
            Ok(p) => sent.push(p),
            Err(e) => {
                refused = Some((i, e));
                break;
            }
        }
    }
    let Some((i, e)) = refused else {
        panic!("the journal never filled")
    };
    assert!(
        matches!(e, Error::Journal(JournalRefusal::Full { publishing: true })),
        "{e:?}"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        lb.trace()
            .iter()
            .all(|l| !l.contains(&format!("\"CREATE RELAY busy_{i};\""))),
        "the refused command was not sent"
    );
    drop(sent);
    let _ = d.close(client, false);
    lb.stop();
}

/// Issue 19, item 1: a command whose caller stopped waiting has its outcome kept among the
/// unclaimed ones (C-10), and its record ends then, as when the outcome reaches its caller.
pub fn an_unclaimed_outcome_ends_its_record<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "unclaimed", 0);
    let d = D::new();
    let config = slot_config::<D>(&spec, via, |_| {});
    let client = d.start(config).unwrap();
    d.select_domain(&client, Some("tenant")).unwrap();
    let pending = d.submit(&client, "CREATE RELAY unclaimed_one;").unwrap();
    drop(pending);
    let deadline = Instant::now() + Duration::from_secs(10);
    let unclaimed = loop {
        let u = d.unclaimed(&client).unwrap();
        if !u.is_empty() {
            break u;
        }
        assert!(Instant::now() < deadline, "the outcome never came");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        matches!(unclaimed.as_slice(), [CommandResult::Completed(_)]),
        "{unclaimed:?}"
    );
    let stats = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(stats.commands_journaled, 1);
    assert_eq!(
        stats.commands_ended, 1,
        "kept among the unclaimed: its record ends"
    );
    assert_eq!(stats.live, 0);
    d.close(client, false).unwrap();
    lb.stop();
}

/// Issue 19, item 1 (E-4): the record kept for an uncertain command ends by itself once the
/// journal's horizon passed since its reference's creation (the application was told the
/// outcome is uncertain, naming the reference, and the command can no longer be repeated),
/// so uncertain outcomes do not pile up in a long-lived client's journal until it is full.
pub fn uncertain_record_ends_after_the_horizon<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "kept-expires", 0);
    let d = D::new();
    let mut config = slot_config::<D>(&spec, via, |j| {
        j.horizon = Duration::from_millis(1_500);
    });
    D::client_config(&mut config).call_timeout = Duration::from_millis(300);
    let client = d.start(config).unwrap();
    d.select_domain(&client, Some("tenant")).unwrap();
    lb.drop_replies(0, true);
    let started = Instant::now();
    assert!(matches!(
        d.execute(&client, "CREATE RELAY kept_then_expired;")
            .unwrap(),
        CommandResult::Uncertain { .. }
    ));
    lb.drop_replies(0, false);
    assert_eq!(d.stats(&client).unwrap().journal.unwrap().live, 1, "kept");
    // Nothing else happens on the client: its own deadline ends the record.
    let deadline = started + Duration::from_secs(10);
    while d.stats(&client).unwrap().journal.unwrap().live > 0 {
        assert!(Instant::now() < deadline, "the kept record never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        started.elapsed() >= Duration::from_millis(1_500),
        "not before the horizon passed"
    );
    let stats = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(stats.commands_ended, 1);
    d.close(client, false).unwrap();
    lb.stop();
}

/// Issue 19, item 1 (E-3): a command whose outcome became uncertain in this process keeps
/// its record, and repeating it reuses that record; a completed one leaves nothing. After a
/// clean close and a restart the uncertain command alone comes back, and recovers once.
pub fn uncertain_kept_completed_ended<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "uncertain", 0);
    let d = D::new();
    let mut config = slot_config::<D>(&spec, via, |_| {});
    D::client_config(&mut config).call_timeout = Duration::from_millis(400);
    let client = d.start(config.clone()).unwrap();
    d.select_domain(&client, Some("tenant")).unwrap();
    assert!(d.recovery(&client).unwrap().is_empty(), "a new slot");
    lb.drop_replies(0, true);
    let uncertain = match d.execute(&client, "CREATE RELAY kept_uncertain;").unwrap() {
        CommandResult::Uncertain { command, .. } => command,
        other => panic!("replies are dropped: {other:?}"),
    };
    lb.drop_replies(0, false);
    let completed = d.execute(&client, "CREATE RELAY done_at_once;").unwrap();
    assert!(
        matches!(completed, CommandResult::Completed(_)),
        "{completed:?}"
    );
    let stats = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(stats.commands_journaled, 2);
    assert_eq!(stats.live, 1, "the uncertain command's record alone");
    // Repeated in this process, under the record it already has; a completed repetition
    // ends it.
    lb.drop_replies(0, true);
    assert!(matches!(
        d.recover(&client, &uncertain).unwrap(),
        CommandResult::Uncertain { .. }
    ));
    lb.drop_replies(0, false);
    let stats = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(stats.commands_journaled, 2, "no second record");
    assert_eq!(stats.live, 1);
    d.close(client, false).unwrap();
    let successor = d.start(config.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();
    let [JournaledCommand::Repeatable { command, .. }] = &list.commands[..] else {
        panic!("the uncertain command alone: {list:?}")
    };
    assert_eq!(command.reference, uncertain.reference);
    assert_eq!(command.query, uncertain.query);
    assert_eq!(command.domain, uncertain.domain);
    assert_eq!(command.position, uncertain.position);
    assert_eq!(command.preview, uncertain.preview);
    match d.recover(&successor, command).unwrap() {
        CommandResult::Completed(report) => {
            assert_eq!(report.origin(), Some(OutcomeOrigin::Recovered))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(applied(&lb, &uncertain.reference.to_string()), 1);
    assert_eq!(d.stats(&successor).unwrap().journal.unwrap().live, 0);
    d.close(successor, false).unwrap();
    lb.stop();
}

/// Issue 19, item 3: a client killed mid-command leaves its slot an orphan. A client of
/// another name that does not adopt orphans sees nothing of it; one that does lists the dead
/// client's commands and recovers each once from the server's record. The orphan's slot is
/// then emptied and released: its own name opens again, with nothing to recover.
pub fn orphan_adopted_after_sigkill<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = cluster();
    let spec = spec_for::<D>(&lb, via, "orphan", 2);
    let d = D::new();
    let config = |sender: &str, adopt: bool| {
        let mut j = JournalConfig::new(spec.head.dir.clone(), sender.to_string());
        if adopt {
            j = j.adopting_orphans();
        }
        journaled::<D>(&spec.head.seeds, via, spec.head.cert.as_deref(), j)
    };
    let refs = crashed(
        &ChildProgram::test_of::<D>(),
        &lb,
        &spec,
        &mut |_| {},
        |_, _| {},
    );
    let stranger = d.start(config("stranger", false)).unwrap();
    assert!(
        d.recovery(&stranger).unwrap().is_empty(),
        "orphans are adopted only when asked"
    );
    d.close(stranger, false).unwrap();
    let heir = d.start(config("heir", true)).unwrap();
    let list = d.recovery(&heir).unwrap();
    let listed = recover_listed(&d, &heir, &list, |_, _| {});
    assert_eq!(listed, refs, "the dead client's commands, in order");
    for r in &refs {
        assert_eq!(applied(&lb, r), 1, "{r} applied once");
    }
    let journal = d.stats(&heir).unwrap().journal.expect("a journal");
    assert_eq!(journal.live, 0, "every adopted record ended");
    // The dead client's slot is free again and empty.
    let reborn = d.start(config(SENDER, false)).unwrap();
    assert!(d.recovery(&reborn).unwrap().is_empty());
    d.close(reborn, false).unwrap();
    d.close(heir, false).unwrap();
    lb.stop();
}

/// The journal scenarios' tests for one driver.
#[macro_export]
macro_rules! journal_tests {
    (tokio) => {
        #[test]
        #[ignore = "the client process of the journal tests, run by them"]
        fn journal_child() {
            $crate::journal::child::<$crate::Tokio>()
        }
        #[test]
        fn e_3_commands_journaled_before_a_sigkill_are_recovered_once_over_grpc() {
            $crate::run!(Tokio, journal::recovered_after_sigkill(Via::Grpc))
        }
        #[test]
        fn e_3_commands_journaled_before_a_sigkill_are_recovered_once_over_the_console() {
            $crate::run!(
                Tokio,
                journal::recovered_after_sigkill(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn e_4_a_journaled_command_past_its_validity_is_reported_unknown_and_never_repeated() {
            $crate::run!(Tokio, journal::past_validity_reported_unknown(Via::Grpc))
        }
        #[test]
        fn a_full_journal_refuses_a_command_naming_the_wire_state_and_sends_nothing() {
            $crate::run!(Tokio, journal::full_journal_refuses(Via::Grpc))
        }
        #[test]
        fn e_4_a_command_a_minute_old_at_the_start_is_repeatable_with_its_age() {
            $crate::run!(
                Tokio,
                journal::a_command_a_minute_old_at_the_start_is_repeatable_with_its_age(
                    Via::Grpc
                )
            )
        }
        #[test]
        fn e_4_a_recovered_command_keeps_its_age_and_is_not_repeated_past_its_retry_validity() {
            $crate::run!(Tokio, journal::recovered_command_keeps_its_age(Via::Grpc))
        }
        #[test]
        fn e_4_a_recovery_list_given_up_before_its_answer_leaves_its_records_for_the_next_start() {
            $crate::run!(
                Tokio,
                journal::an_abandoned_recovery_list_leaves_its_records(Via::Grpc, false)
            )
        }
        #[test]
        fn e_4_a_recovery_list_answered_but_given_up_before_it_returned_leaves_its_records() {
            $crate::run!(
                Tokio,
                journal::an_abandoned_recovery_list_leaves_its_records(Via::Grpc, true)
            )
        }
        #[test]
        fn e_3_an_uncertain_command_keeps_its_record_and_a_completed_one_ends_it() {
            $crate::run!(Tokio, journal::uncertain_kept_completed_ended(Via::Grpc))
        }
        #[test]
        fn c_10_an_unclaimed_outcome_of_a_journaled_command_ends_its_record() {
            $crate::run!(Tokio, journal::an_unclaimed_outcome_ends_its_record(Via::Grpc))
        }
        #[test]
        fn e_4_the_record_kept_for_an_uncertain_command_ends_once_the_horizon_passed() {
            $crate::run!(
                Tokio,
                journal::uncertain_record_ends_after_the_horizon(Via::Grpc)
            )
        }
        #[test]
        fn e_3_a_commit_journaled_before_a_sigkill_is_recovered_once_with_its_position_and_preview(
        ) {
            $crate::run!(
                Tokio,
                journal::transaction_commit_recovered_after_sigkill(Via::Grpc)
            )
        }
        #[test]
        fn e_2_a_command_held_behind_a_begin_at_a_sigkill_is_reported_unknown_never_repeated() {
            $crate::run!(
                Tokio,
                journal::held_behind_begin_reported_unknown_after_sigkill(Via::Grpc)
            )
        }
        #[test]
        fn e_3_an_orphan_slot_of_a_killed_client_is_adopted_and_its_commands_recovered_once() {
            $crate::run!(Tokio, journal::orphan_adopted_after_sigkill(Via::Grpc))
        }
        #[test]
        #[ignore = "the client process of the journal transfer tests, run by them"]
        fn journal_transfer_child() {
            $crate::journal_transfers::child::<$crate::Tokio>()
        }
        #[test]
        fn u_2_an_upload_and_a_restore_are_journaled_before_sending_and_ended_at_their_outcome() {
            $crate::run!(
                Tokio,
                journal_transfers::journaled_and_ended_at_outcome(Via::Grpc)
            )
        }
        #[test]
        fn u_5_an_upload_and_a_restore_outstanding_at_a_sigkill_are_recovered_once() {
            $crate::run!(
                Tokio,
                journal_transfers::outstanding_at_sigkill_recovered_once(Via::Grpc)
            )
        }
        #[test]
        fn rs_2_a_journaled_restore_whose_archive_changed_is_refused_and_nothing_sent() {
            $crate::run!(Tokio, journal_transfers::changed_archive_refused(Via::Grpc))
        }
        #[test]
        fn u_2_an_upload_whose_archive_changed_after_a_sigkill_is_refused_and_nothing_sent() {
            $crate::run!(
                Tokio,
                journal_transfers::changed_after_sigkill_refused(Via::Grpc)
            )
        }
        #[test]
        fn u_2_calls_not_given_the_clients_journal_are_refused_and_send_nothing() {
            $crate::run!(
                Tokio,
                journal_transfers::calls_without_the_clients_journal_are_refused(Via::Grpc)
            )
        }
        #[test]
        fn e_4_a_journaled_restore_past_its_validity_is_reported_unknown_and_never_repeated() {
            $crate::run!(
                Tokio,
                journal_transfers::past_validity_reported_unknown(Via::Grpc)
            )
        }
        #[test]
        fn sf_23_a_full_journal_refuses_an_upload_and_a_restore_and_sends_nothing() {
            $crate::run!(
                Tokio,
                journal_transfers::full_journal_refuses_transfers(Via::Grpc)
            )
        }
        #[test]
        fn sf_24_a_full_journal_refuses_an_upload_and_a_restore_naming_the_wire_reconnecting() {
            $crate::run!(
                Tokio,
                journal_transfers::full_journal_refuses_transfers_while_reconnecting(Via::Grpc)
            )
        }
        $crate::outbox_tests!(tokio);
        $crate::journal_mixed_tests!(tokio);
    };
    (blocking) => {
        #[test]
        #[ignore = "the client process of the journal tests, run by them"]
        fn journal_child_blocking() {
            $crate::journal::child::<$crate::Blocking>()
        }
        #[test]
        fn e_3_commands_journaled_before_a_sigkill_are_recovered_once_blocking() {
            $crate::run!(
                Blocking,
                journal::recovered_after_sigkill(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn e_4_a_journaled_command_past_its_validity_is_reported_unknown_and_never_repeated_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal::past_validity_reported_unknown(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn e_4_a_command_a_minute_old_at_the_start_is_repeatable_with_its_age_blocking() {
            $crate::run!(
                Blocking,
                journal::a_command_a_minute_old_at_the_start_is_repeatable_with_its_age(
                    Via::Console(WsAuth::Header)
                )
            )
        }
        #[test]
        fn e_4_a_recovered_command_keeps_its_age_and_is_not_repeated_past_its_retry_validity_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal::recovered_command_keeps_its_age(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn a_full_journal_refuses_a_command_naming_the_wire_state_and_sends_nothing_blocking() {
            $crate::run!(
                Blocking,
                journal::full_journal_refuses(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn e_3_an_uncertain_command_keeps_its_record_and_a_completed_one_ends_it_blocking() {
            $crate::run!(
                Blocking,
                journal::uncertain_kept_completed_ended(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn c_10_an_unclaimed_outcome_of_a_journaled_command_ends_its_record_blocking() {
            $crate::run!(
                Blocking,
                journal::an_unclaimed_outcome_ends_its_record(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn e_4_the_record_kept_for_an_uncertain_command_ends_once_the_horizon_passed_blocking() {
            $crate::run!(
                Blocking,
                journal::uncertain_record_ends_after_the_horizon(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn e_3_a_commit_journaled_before_a_sigkill_is_recovered_once_with_its_position_and_preview_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal::transaction_commit_recovered_after_sigkill(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn e_2_a_command_held_behind_a_begin_at_a_sigkill_is_reported_unknown_never_repeated_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal::held_behind_begin_reported_unknown_after_sigkill(Via::Console(
                    WsAuth::Header
                ))
            )
        }
        #[test]
        fn e_3_an_orphan_slot_of_a_killed_client_is_adopted_and_its_commands_recovered_once_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal::orphan_adopted_after_sigkill(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        #[ignore = "the client process of the journal transfer tests, run by them"]
        fn journal_transfer_child_blocking() {
            $crate::journal_transfers::child::<$crate::Blocking>()
        }
        #[test]
        fn rs_2_a_restore_is_journaled_before_sending_and_ended_at_its_outcome_blocking() {
            $crate::run!(
                Blocking,
                journal_transfers::journaled_and_ended_at_outcome(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn rs_5_a_restore_outstanding_at_a_sigkill_is_recovered_once_blocking() {
            $crate::run!(
                Blocking,
                journal_transfers::outstanding_at_sigkill_recovered_once(Via::Console(
                    WsAuth::Header
                ))
            )
        }
        #[test]
        fn rs_2_a_journaled_restore_whose_archive_changed_is_refused_and_nothing_sent_blocking() {
            $crate::run!(
                Blocking,
                journal_transfers::changed_archive_refused(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn rs_2_a_restore_whose_archive_changed_after_a_sigkill_is_refused_and_nothing_sent_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal_transfers::changed_after_sigkill_refused(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn rs_2_calls_not_given_the_clients_journal_are_refused_and_send_nothing_blocking() {
            $crate::run!(
                Blocking,
                journal_transfers::calls_without_the_clients_journal_are_refused(Via::Console(
                    WsAuth::Header
                ))
            )
        }
        #[test]
        fn e_4_a_journaled_restore_past_its_validity_is_reported_unknown_and_never_repeated_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal_transfers::past_validity_reported_unknown(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn sf_23_a_full_journal_refuses_a_restore_and_sends_nothing_blocking() {
            $crate::run!(
                Blocking,
                journal_transfers::full_journal_refuses_transfers(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn sf_24_a_full_journal_refuses_a_restore_naming_the_wire_reconnecting_blocking() {
            $crate::run!(
                Blocking,
                journal_transfers::full_journal_refuses_transfers_while_reconnecting(Via::Console(
                    WsAuth::Header
                ))
            )
        }
        $crate::outbox_tests!(blocking);
        $crate::journal_mixed_tests!(blocking);
    };
}
