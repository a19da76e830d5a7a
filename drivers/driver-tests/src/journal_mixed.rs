//! One client process with everything the journal keeps in flight at once (issue 19, items 2,
//! 3 and 5): commands whose replies are lost, a transaction whose `COMMIT` reached the cluster
//! and whose reply never came, producer batches (one handed to the transport, its outcome
//! lost, the others waiting for its credit) and an upload (a restore for a driver without
//! uploads) received whole by the cluster, its reply lost. The process is killed with SIGKILL;
//! a successor on the same slot, or a client of another name adopting the dead one's slot as
//! an orphan, finishes everything, and the cluster's records say each thing took effect once.
//!
//! The client process is this test binary run again: the parent runs the `journal_mixed_child`
//! test of the same binary (ignored otherwise) with [`CHILD`] set, and tells it on its
//! standard input when to go on to the next part of the workload.

use crate::child::{self, Head};
use crate::dataplane::{batch_of, ingested, WAIT};
use crate::journal::{applied, journaled, recorded_all, recover_listed, suffix, SENDER};
use crate::journal_transfers::{restore_of, restores_applied, upload_of, Setup, STATEMENT};
use crate::{completed, Driver, Via};
use nervix_driver_support::journal::{JournalConfig, TransferKind};
use nervix_driver_support::journaled::{JournaledBatch, JournaledCommand, JournaledTransfer};
use nervix_driver_support::Submission;
use nervix_harness::cluster::{ingestor_fields, INGESTOR};
use nervix_loopback::Loopback;
use nervix_protocol::calls::{RestoreOutcome, UploadOutcome};
use nervix_protocol::client::{BatchOutcome, CommandResult, ProducerSpec};
use nervix_protocol::schema::OutcomeOrigin;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The variable that makes the `journal_mixed_child` test the client process.
pub const CHILD: &str = "NERVIX_JOURNAL_MIXED_CHILD";

/// How many commands the child leaves without an outcome.
const COMMANDS: usize = 3;

/// The batches the child submits: one id each, from here on.
const FIRST_BATCH: u64 = 7_000;

/// The batch the child sees completed before the crash.
const DONE_BATCH: u64 = 6_999;

/// How many batches the child submits.
const BATCHES: u64 = 4;

/// The batch the child sees completed while the others are in flight (by a second producer,
/// with credit of its own).
const MID_BATCH: u64 = 6_998;

/// The identity of the child's upload.
const UPLOAD: &str = "mixed-upload";

/// The reference of the child's restore (a driver without uploads).
const RESTORE: &str = "restore-mixed-1";

/// The longest the parent waits for any one step of the child.
const STEP: Duration = Duration::from_secs(20);

fn spec() -> ProducerSpec {
    ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20)
}

/// How many times the cluster took in the batch of `id`.
fn times_ingested(lb: &Loopback, id: u64) -> usize {
    lb.with_cluster(|c| c.ingested().iter().filter(|b| b[..] == [id]).count())
}

/// The client process: one client with a journal on the journal tests' slot. Told to go each time,
/// it submits the commands and the batches (the parent has made the cluster's replies lost), then
/// (replies flow again) runs a command and a batch of a second producer to their outcomes while
/// all of those are still in flight, begins a transaction and runs a statement in it, then submits the `COMMIT`
/// (replies lost again) and makes the upload, or the restore when the driver has no uploads (the
/// calls' replies lost too). It prints what it submitted as it goes and waits to be killed.
pub fn child<D: Driver>() {
    let (head, rest) = Head::from_env(CHILD, "the mixed journal test's client process");
    let archive = PathBuf::from(&rest[0]);
    let d = D::new();
    let config = journaled::<D>(
        &head.seeds,
        head.via,
        head.cert.as_deref(),
        JournalConfig::new(head.dir.join("journal"), SENDER.to_string()),
    );
    let client = d.connect(config.clone()).unwrap();
    d.select_domain(&client, Some("tenant")).unwrap();
    let producer = d.producer(&client, spec()).unwrap();
    // Opened now: a producer cannot be opened inside the transaction.
    let second = d.producer(&client, spec()).unwrap();
    let t = d.journaled_transfers(&config, &client).unwrap();
    // A command and a batch whose outcomes come back before the crash: reported now, their
    // records end, and nothing of them may come back after it.
    completed_now(&d, &client, &producer, "DONE", "mixed_done", DONE_BATCH);
    println!("OPENED");
    child::told_to_go();
    let pending = child::submit_commands(&d, &client, COMMANDS, "mixed");
    let batches = child::submit_batches(&d, &producer, FIRST_BATCH..FIRST_BATCH + BATCHES, "BATCH");
    println!("PHASE ONE");
    child::told_to_go();
    // Outcomes read while the commands and batches above are in flight: their records end
    // now, beside the live ones, and nothing of them may come back after the crash.
    completed_now(&d, &client, &second, "MID", "mixed_mid", MID_BATCH);
    let tx = d.transaction(&client).unwrap().expect("BEGIN completed");
    let r = d
        .tx_execute(&tx, "CREATE RELAY mixed_in_transaction;")
        .unwrap();
    assert!(completed(&r), "{r:?}");
    println!("IN TRANSACTION");
    child::told_to_go();
    let commit = d.submit(&client, "COMMIT;").unwrap();
    println!("COMMIT {}", D::reference(&commit));
    let (mut up, file) = upload_of(&head.dir, UPLOAD);
    println!("UPLOAD {UPLOAD}");
    if d.upload(&t, &mut up, &file).is_none() {
        println!("RESTORE {RESTORE}");
        let mut call = restore_of(RESTORE, &archive);
        let _ = d.restore(&t, &mut call, &archive);
    }
    println!("GAVE UP");
    // All it left in flight stays so until it is killed.
    let _in_flight = (pending, batches, commit, tx, second);
    child::until_killed("the mixed journal test's client process");
}

/// Runs a command creating `relay` to its outcome and a batch of `id` on `producer` to its
/// outcome, both completed, and prints `{label} COMMAND <reference>` and `{label} BATCH <id>`.
fn completed_now<D: Driver>(
    d: &D,
    client: &D::Client,
    producer: &D::Producer,
    label: &str,
    relay: &str,
    id: u64,
) {
    match d
        .execute(client, &format!("CREATE RELAY {relay};"))
        .unwrap()
    {
        CommandResult::Completed(report) => println!("{label} COMMAND {}", report.reference()),
        other => panic!("{other:?}"),
    }
    let mut b = d
        .submit_batch(producer, batch_of::<D>(producer, &[id]))
        .unwrap();
    assert_eq!(
        d.batch_outcome(&mut b, WAIT).unwrap(),
        BatchOutcome::Completed
    );
    println!("{label} BATCH {id}");
}

/// The next line the child prints that contains `what`, within [`STEP`].
fn line_with(lines: &mpsc::Receiver<String>, what: &str) -> String {
    let end = Instant::now() + STEP;
    loop {
        let line = lines
            .recv_timeout(end.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("the child never printed {what}"));
        if line.contains(what) {
            return line;
        }
    }
}

/// What follows `key ` in `line`.
fn after(line: &str, key: &str) -> String {
    line.split_once(&format!("{key} "))
        .map(|(_, v)| v.to_string())
        .unwrap_or_else(|| panic!("{line:?} has no {key}"))
}

/// Waits (at most [`STEP`]) until `done` holds.
fn until(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + STEP;
    while !done() {
        assert!(Instant::now() < end, "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Issue 19, item 5 (E-3, P-8, U-5, RS-5): one client with commands, a transaction's commit,
/// an upload (a restore in a driver without uploads) and producer batches all in flight on
/// one journal is killed with SIGKILL. Its successor on the same slot lists every one of
/// them, nothing else and nothing twice; against the cluster's records, every command (the
/// commit among them) was applied once and its outcome recovered once, the batch handed
/// before the crash is reported unknown and never sent again, the others are ingested once,
/// and the upload or restore is applied once. The commands and batches whose outcomes the
/// child read before the workload and while it was in flight are not listed, and took
/// effect once.
pub fn mixed_workload_recovered_after_sigkill<D: Driver>(via: Via) {
    mixed::<D>(via, false);
}

/// Issue 19, item 3 (E-3, P-8, U-5, RS-5): the same workload, its client killed, finished by
/// a client of another name adopting the dead client's slot as an orphan: the batches never
/// handed are sent once, the handed one is reported unknown and never sent again, the
/// commands and the upload (or restore) are recovered once. The dead client's slot is then
/// emptied and released.
pub fn mixed_workload_adopted_as_an_orphan<D: Driver>(via: Via) {
    mixed::<D>(via, true);
}

/// What the child journaled and left without an outcome when it was killed.
struct Left {
    /// The reference of the command whose outcome the child read before the crash.
    done: String,
    /// The reference of the command whose outcome the child read while the others were in
    /// flight.
    mid: String,
    /// The references of its commands, then of its commit.
    commands: Vec<String>,
    /// The upload's identity or the restore's reference.
    transfer: String,
    /// Whether it is an upload.
    upload: bool,
}

/// Runs the child against the cluster of `s` and kills it mid-workload.
fn crashed<D: Driver>(s: &Setup, via: Via) -> Left {
    let head = Head {
        via,
        dir: s.dir.clone(),
        cert: s.cert.clone(),
        seeds: s.seeds.clone(),
    };
    let test = format!("journal_mixed_child{}", suffix::<D>());
    let mut child = child::spawn(
        &child::this_binary(),
        &child::test_args(&test),
        CHILD,
        head.encode(&[s.archive.display().to_string()]),
        true,
    );
    let mut stdin = child.stdin.take().unwrap();
    let lines = std::mem::replace(&mut child.lines, mpsc::channel().1);
    let done = after(&line_with(&lines, "DONE COMMAND "), "DONE COMMAND");
    line_with(&lines, "DONE BATCH ");
    line_with(&lines, "OPENED");
    assert_eq!(times_ingested(&s.lb, DONE_BATCH), 1);
    // Commands and batches reach the cluster; their replies are lost.
    s.lb.drop_replies(0, true);
    writeln!(stdin, "go").unwrap();
    let mut commands = Vec::new();
    let mut batches = Vec::new();
    loop {
        let line = line_with(&lines, "");
        if line.ends_with("PHASE ONE") {
            break;
        }
        if line.contains("SUBMITTED ") {
            commands.push(after(&line, "SUBMITTED"));
        } else if line.contains("BATCH ") {
            batches.push(after(&line, "BATCH").parse::<u64>().unwrap());
        }
    }
    assert_eq!(
        commands.len(),
        COMMANDS,
        "the child submitted every command"
    );
    let all: Vec<u64> = (FIRST_BATCH..FIRST_BATCH + BATCHES).collect();
    assert_eq!(batches, all, "the child submitted every batch");
    recorded_all(&s.lb, &commands);
    // The first batch is out (ingested, its outcome lost); the others wait for its credit.
    until("the first batch was not ingested in time", || {
        times_ingested(&s.lb, FIRST_BATCH) > 0
    });
    // Replies flow again for the transaction's BEGIN and its statement.
    s.lb.drop_replies(0, false);
    writeln!(stdin, "go").unwrap();
    let mid = after(&line_with(&lines, "MID COMMAND "), "MID COMMAND");
    line_with(&lines, "MID BATCH ");
    assert_eq!(times_ingested(&s.lb, MID_BATCH), 1);
    line_with(&lines, "IN TRANSACTION");
    // The commit and the separate call reach the cluster; their replies are lost.
    s.lb.drop_replies(0, true);
    s.lose_replies(true);
    writeln!(stdin, "go").unwrap();
    let commit = after(&line_with(&lines, "COMMIT "), "COMMIT");
    recorded_all(&s.lb, std::slice::from_ref(&commit));
    commands.push(commit);
    // The upload is named first; a driver without uploads then names its restore.
    let mut transfer = after(&line_with(&lines, "UPLOAD "), "UPLOAD");
    let mut upload = true;
    until("the upload or the restore never arrived whole", || {
        while let Ok(line) = lines.try_recv() {
            if line.contains("RESTORE ") {
                transfer = after(&line, "RESTORE");
                upload = false;
            }
        }
        restores_applied(&s.lb, &transfer) > 0
    });
    child.kill();
    s.lb.drop_replies(0, false);
    s.lose_replies(false);
    for id in &all[1..] {
        assert_eq!(times_ingested(&s.lb, *id), 0, "batch {id} never went");
    }
    for r in &commands {
        assert_eq!(applied(&s.lb, r), 1, "{r} applied once before the crash");
    }
    Left {
        done,
        mid,
        commands,
        transfer,
        upload,
    }
}

fn mixed<D: Driver>(via: Via, adopt: bool) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(via, if adopt { "mixed-orphan" } else { "mixed" });
    let left = crashed::<D>(&s, via);
    let d = D::new();
    let config = |sender: &str, adopt: bool| {
        let mut j = JournalConfig::new(s.dir.join("journal"), sender.to_string());
        if adopt {
            j = j.adopting_orphans();
        }
        s.config::<D>(via, j)
    };
    let config = if adopt {
        config("heir", true)
    } else {
        config(SENDER, false)
    };
    let successor = d.start(config.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();

    // Every command, the commit last, in the order written; nothing else (the BEGIN and the
    // statement in the transaction ended at their outcomes).
    let listed = recover_listed(&d, &successor, &list, |command, report| {
        assert_eq!(command.domain.as_deref(), Some("tenant"));
        assert_eq!(report.reference(), &command.reference);
    });
    assert_eq!(
        listed, left.commands,
        "every command journaled, once, in order"
    );
    assert!(
        !listed.contains(&left.done),
        "an outcome read before the crash is not reported again"
    );
    assert!(
        !listed.contains(&left.mid),
        "an outcome read while the others were in flight is not reported again"
    );
    assert_eq!(
        list.commands.last().map(command_query),
        Some("COMMIT;".into())
    );

    // The batch handed before the crash is unknown; the others come back unsent, with their
    // bytes, and are submitted again once.
    assert_eq!(list.batches.len(), BATCHES as usize, "{:?}", list.batches);
    assert!(
        matches!(&list.batches[0], JournaledBatch::UnknownOutcome { .. }),
        "the batch handed before the crash: {:?}",
        list.batches[0]
    );
    let producer = d.producer(&successor, spec()).unwrap();
    let mut pending = Vec::new();
    for b in &list.batches[1..] {
        let JournaledBatch::Unsent(u) = b else {
            panic!("never handed: {b:?}")
        };
        pending.push(
            d.submit_batch(&producer, Submission::from(u.clone()))
                .unwrap(),
        );
    }
    for b in &mut pending {
        assert_eq!(d.batch_outcome(b, WAIT).unwrap(), BatchOutcome::Completed);
    }
    drop(pending);

    // The upload (or restore), repeated whole under its identity, answered from the record.
    let [JournaledTransfer::Repeatable { record }] = &list.transfers[..] else {
        panic!("the one outstanding transfer: {:?}", list.transfers)
    };
    assert_eq!(record.reference, left.transfer);
    let t = d.journaled_transfers(&config, &successor).unwrap();
    let whole = restores_applied(&s.lb, &left.transfer);
    match &record.kind {
        TransferKind::Upload { domain, resource } => {
            assert!(left.upload);
            assert_eq!((domain.as_str(), resource.as_str()), ("tenant", "model"));
            match d.recover_upload(&t, record).expect("a driver that uploads") {
                Ok(UploadOutcome::Installed {
                    version, origin, ..
                }) => {
                    assert_eq!(version, 1);
                    assert_eq!(origin, OutcomeOrigin::Recovered);
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(
                s.lb.with_cluster(|c| c.resource_versions("tenant", "model")),
                1,
                "installed once"
            );
        }
        TransferKind::Restore { statement } => {
            assert!(!left.upload);
            assert_eq!(statement, STATEMENT);
            match d.recover_restore(&t, record) {
                Ok(RestoreOutcome::Completed { origin, .. }) => {
                    assert_eq!(origin, OutcomeOrigin::Recovered)
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        restores_applied(&s.lb, &left.transfer),
        whole + 1,
        "the recovery sent the archive whole once more, and only once"
    );

    // Against the cluster's records: each command applied once, each batch ingested once,
    // nothing else ingested.
    for r in &left.commands {
        assert_eq!(applied(&s.lb, r), 1, "{r} never applied twice");
    }
    std::thread::sleep(Duration::from_millis(200));
    for id in FIRST_BATCH..FIRST_BATCH + BATCHES {
        assert_eq!(
            times_ingested(&s.lb, id),
            1,
            "batch {id} ingested exactly once"
        );
    }
    for (batch, command, when) in [
        (DONE_BATCH, &left.done, "before the crash"),
        (MID_BATCH, &left.mid, "while the others were in flight"),
    ] {
        assert_eq!(times_ingested(&s.lb, batch), 1, "the batch done {when}");
        assert_eq!(applied(&s.lb, command), 1, "the command done {when}");
    }
    assert_eq!(
        ingested(&s.lb),
        BATCHES as usize + 2,
        "nothing else was ingested"
    );
    let stats = d.stats(&successor).unwrap().journal.unwrap();
    assert_eq!(stats.live, 0, "every record ended");
    assert_eq!(
        stats.batches_journaled, 0,
        "the recovered batches were reused"
    );
    assert_eq!(
        stats.transfers_journaled, 0,
        "the transfer's record was reused"
    );
    assert!(
        d.recovery(&successor).unwrap().is_empty(),
        "the list is handed out once"
    );
    drop(producer);
    d.close(successor, false).unwrap();
    let third = d.start(config).unwrap();
    assert!(
        d.recovery(&third).unwrap().is_empty(),
        "nothing comes back twice"
    );
    d.close(third, false).unwrap();
    if adopt {
        // The dead client's slot is free again and empty.
        let reborn = d.start(s.config::<D>(via, s.journal())).unwrap();
        assert!(d.recovery(&reborn).unwrap().is_empty());
        d.close(reborn, false).unwrap();
    }
    s.lb.stop();
}

/// The query of a listed command.
fn command_query(c: &JournaledCommand) -> String {
    match c {
        JournaledCommand::Repeatable { command, .. } => command.query.clone(),
        other => format!("{other:?}"),
    }
}

/// The mixed workload's tests for one driver (part of `journal_tests!`).
#[macro_export]
macro_rules! journal_mixed_tests {
    (tokio) => {
        #[test]
        #[ignore = "the client process of the mixed journal tests, run by them"]
        fn journal_mixed_child() {
            $crate::journal_mixed::child::<$crate::Tokio>()
        }
        #[test]
        fn e_3_a_mixed_workload_killed_with_sigkill_is_recovered_once_against_the_clusters_records(
        ) {
            $crate::run!(
                Tokio,
                journal_mixed::mixed_workload_recovered_after_sigkill(Via::Grpc)
            )
        }
        #[test]
        fn e_3_an_orphan_slot_with_batches_and_an_upload_is_adopted_and_finished_once() {
            $crate::run!(
                Tokio,
                journal_mixed::mixed_workload_adopted_as_an_orphan(Via::Grpc)
            )
        }
    };
    (blocking) => {
        #[test]
        #[ignore = "the client process of the mixed journal tests, run by them"]
        fn journal_mixed_child_blocking() {
            $crate::journal_mixed::child::<$crate::Blocking>()
        }
        #[test]
        fn e_3_a_mixed_workload_killed_with_sigkill_is_recovered_once_against_the_clusters_records_blocking(
        ) {
            $crate::run!(
                Blocking,
                journal_mixed::mixed_workload_recovered_after_sigkill(Via::Console(
                    WsAuth::Header
                ))
            )
        }
        #[test]
        fn e_3_an_orphan_slot_with_batches_and_a_restore_is_adopted_and_finished_once_blocking() {
            $crate::run!(
                Blocking,
                journal_mixed::mixed_workload_adopted_as_an_orphan(Via::Console(WsAuth::Header))
            )
        }
    };
}
