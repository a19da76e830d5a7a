//! Producers in outbox mode over real sockets (issue 19): with a journal, a submission returns
//! once its batch is journaled, whatever the credit or the session, and the batch goes later;
//! a client killed with SIGKILL leaves batches handed to the transport (reported of unknown
//! outcome after the restart, never sent again) and batches never handed (returned with their
//! bytes, submitted again once); a full journal refuses a batch naming the wire state.
//!
//! The client process is this test binary run again: the parent runs the `outbox_child`
//! test of the same binary (ignored otherwise) with [`CHILD`] set.

use crate::child::{self, Head};
use crate::dataplane::{batch_of, ingested, WAIT};
use crate::{config_of, scratch, seeds_of, Driver, Error, Via};
use nervix_driver_support::api::DriverEvent;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::journal::JournalConfig;
use nervix_driver_support::journaled::{JournalRefusal, JournaledBatch};
use nervix_driver_support::Submission;
use nervix_harness::cluster::{ingestor_fields, INGESTOR};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::{BatchOutcome, ProducerSpec};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The variable that makes the `outbox_child` test the client process.
pub const CHILD: &str = "NERVIX_OUTBOX_CHILD";

/// The sender name of every slot here.
const SENDER: &str = "producer-a";

/// The batches the child submits: one id each, from here on.
const FIRST_ID: u64 = 9_000;

/// How many batches the child submits.
const CHILD_BATCHES: u64 = 4;

fn creds() -> Credentials {
    Credentials::new("nervix", "nervix")
}

/// A client of `seeds` over `via`, trusting `cert`, journaling in `dir` (small segments when
/// `small`).
fn journaled<D: Driver>(
    seeds: &[String],
    via: Via,
    cert: Option<&Path>,
    dir: &Path,
    small: bool,
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
    let mut j = JournalConfig::new(dir.to_path_buf(), SENDER.to_string());
    if small {
        j.segment_bytes = 4096;
        j.capacity_bytes = 8192;
    }
    D::with_journal(c, j)
}

/// Where a scenario keeps its journal and the cluster's certificate.
struct Place {
    dir: PathBuf,
    cert: Option<PathBuf>,
    seeds: Vec<String>,
}

fn place<D: Driver>(lb: &Loopback, via: Via, name: &str) -> Place {
    let dir = scratch::<D>(&format!("outbox-{name}-{via:?}"));
    let cert = lb.certificate_der().map(|der| {
        let path = dir.join("root.der");
        std::fs::write(&path, der).unwrap();
        path
    });
    Place {
        dir: dir.join("journal"),
        cert,
        seeds: seeds_of(lb, via),
    }
}

/// How many times the cluster took in the batch of `id`.
fn times_ingested(lb: &Loopback, id: u64) -> usize {
    lb.with_cluster(|c| c.ingested().iter().filter(|b| b[..] == [id]).count())
}

/// Waits (at most [`WAIT`]) until the cluster took in the batch of `id`.
fn ingested_once(lb: &Loopback, id: u64) {
    let end = Instant::now() + WAIT;
    while times_ingested(lb, id) == 0 {
        assert!(Instant::now() < end, "batch {id} was not ingested in time");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn spec() -> ProducerSpec {
    ProducerSpec::new("tenant", INGESTOR, ingestor_fields()).with_credit(1, 1 << 20)
}

/// SF-2, P-4, P-8: with a journal, submissions return at once while no credit is left (the
/// only batch out has no outcome), and go in order once credit comes back; each is ingested
/// once and every record ends at its outcome.
pub fn submit_returns_without_credit<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    let p = place::<D>(&lb, via, "no-credit");
    let d = D::new();
    let client = d
        .connect(journaled::<D>(
            &p.seeds,
            via,
            p.cert.as_deref(),
            &p.dir,
            false,
        ))
        .unwrap();
    let producer = d.producer(&client, spec()).unwrap();
    // The node's frames are lost from now on: the first batch's outcome never comes, and it
    // keeps the only credit.
    lb.drop_replies(0, true);
    let ids: Vec<u64> = (100..106).collect();
    let mut pending = Vec::new();
    let started = Instant::now();
    for id in &ids {
        // Without a journal the third would wait for room (one out, one waiting).
        let b = d
            .submit_batch_timeout(
                &producer,
                batch_of::<D>(&producer, &[*id]),
                Duration::from_millis(500),
            )
            .unwrap_or_else(|e| panic!("{via:?}: batch {id} returns once journaled: {e:?}"));
        pending.push(b);
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    ingested_once(&lb, ids[0]);
    std::thread::sleep(Duration::from_millis(200));
    for id in &ids[1..] {
        assert_eq!(times_ingested(&lb, *id), 0, "batch {id} waits for credit");
    }
    let stats = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(stats.batches_journaled, ids.len() as u64);
    assert_eq!(
        stats.batches_handed, 1,
        "only the batch on the wire is marked handed"
    );
    assert_eq!(stats.live, ids.len() as u64);
    // The first was framed at once in the buffer it was laid and journaled from, with no
    // copy; the second waits for credit inside the engine, the others in the outbox.
    assert_eq!(stats.batches_framed_in_place, 1, "{via:?}");
    // The journal holds every live batch's bytes again (shared, not copied).
    let one =
        nervix_protocol::arrow::encode(&batch_of::<D>(&producer, &[ids[0]]).into_batch().unwrap())
            .unwrap()
            .len() as u64;
    assert_eq!(stats.batch_bytes_held, one * ids.len() as u64, "{via:?}");
    // The session is cut: the first batch's outcome is unknown (P-8) and it is never sent
    // again; the others go on the restored producer, in order.
    lb.drop_replies(0, false);
    lb.cut_streams(0);
    let mut outcomes = Vec::new();
    for b in &mut pending {
        outcomes.push(d.batch_outcome(b, WAIT).unwrap());
    }
    assert_eq!(outcomes[0], BatchOutcome::Unknown, "{via:?}");
    for (o, id) in outcomes[1..].iter().zip(&ids[1..]) {
        assert_eq!(*o, BatchOutcome::Completed, "{via:?}: batch {id}");
    }
    for id in &ids {
        assert_eq!(times_ingested(&lb, *id), 1, "batch {id} ingested once");
    }
    let stats = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(stats.batches_handed, ids.len() as u64);
    assert_eq!(stats.batches_ended, ids.len() as u64);
    assert_eq!(stats.live, 0, "every record ended at its outcome");
    assert_eq!(
        stats.batches_framed_in_place, 1,
        "{via:?}: the others were copied into their frames"
    );
    assert_eq!(stats.batch_bytes_held, 0, "nothing live");
    d.close(client, true).unwrap();
    lb.stop();
}

/// The client process: opens a producer with one batch of credit on a node whose replies
/// are lost, submits `CHILD_BATCHES` batches (the first goes out, the others wait for its
/// credit), prints `SUBMITTED` after each and waits to be killed.
pub fn child<D: Driver>() {
    let (head, _) = Head::from_env(CHILD, "the outbox tests' client process");
    let Head {
        via,
        dir,
        cert,
        seeds,
    } = head;
    let d = D::new();
    let client = d
        .start(journaled::<D>(&seeds, via, cert.as_deref(), &dir, false))
        .unwrap();
    let producer = d.producer(&client, spec()).unwrap();
    // The parent makes the node's replies lost, then says go.
    println!("OPENED");
    child::told_to_go();
    let _pending = child::submit_batches(
        &d,
        &producer,
        FIRST_ID..FIRST_ID + CHILD_BATCHES,
        "SUBMITTED",
    );
    println!("ALL SUBMITTED");
    child::until_killed("the outbox tests' client process");
}

/// Issue 19, items 1, 2 and 5 (P-8): a client killed with SIGKILL while one batch was out
/// without an outcome and three waited for credit. Its successor on the slot gets the first
/// as of unknown outcome (never sent again, ingested once before the crash) and the other
/// three unsent, with their bytes; submitted again through a producer of the same ingestor
/// each is ingested exactly once, and a second submission of one is refused.
pub fn recovered_after_sigkill<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    let p = place::<D>(&lb, via, "sigkill");
    let test = if D::NAME == "blocking" {
        "outbox_child_blocking"
    } else {
        "outbox_child"
    };
    let head = Head {
        via,
        dir: p.dir.clone(),
        cert: p.cert.clone(),
        seeds: p.seeds.clone(),
    };
    let mut child = child::spawn(
        &child::this_binary(),
        &child::test_args(test),
        CHILD,
        head.encode(&[]),
        true,
    );
    let mut stdin = child.stdin.take().unwrap();
    let lines = std::mem::replace(&mut child.lines, std::sync::mpsc::channel().1);
    let mut lines = lines.iter();
    // Once its producer is open, the node's replies are lost: the first batch goes out and
    // its outcome never comes.
    assert!(
        lines.by_ref().any(|l| l.ends_with("OPENED")),
        "the child opened its producer"
    );
    lb.drop_replies(0, true);
    writeln!(stdin, "go").unwrap();
    let mut submitted = 0;
    for line in lines {
        if line.ends_with("ALL SUBMITTED") {
            break;
        }
        if line.contains("SUBMITTED ") {
            submitted += 1;
        }
    }
    assert_eq!(submitted, CHILD_BATCHES, "the child submitted every batch");
    // The first batch is out (ingested, its outcome lost); the others wait for its credit.
    ingested_once(&lb, FIRST_ID);
    std::thread::sleep(Duration::from_millis(200));
    child.kill();
    lb.drop_replies(0, false);
    let all: Vec<u64> = (FIRST_ID..FIRST_ID + CHILD_BATCHES).collect();
    for id in &all[1..] {
        assert_eq!(times_ingested(&lb, *id), 0, "batch {id} never went");
    }

    let d = D::new();
    let config = journaled::<D>(&p.seeds, via, p.cert.as_deref(), &p.dir, false);
    let successor = d.start(config.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();
    assert_eq!(list.batches.len(), all.len(), "{:?}", list.batches);
    match &list.batches[0] {
        JournaledBatch::UnknownOutcome {
            domain, ingestor, ..
        } => {
            assert_eq!(domain, "tenant");
            assert_eq!(ingestor, INGESTOR);
        }
        other => panic!("the batch handed before the crash: {other:?}"),
    }
    let unsent: Vec<_> = list.batches[1..]
        .iter()
        .map(|b| match b {
            JournaledBatch::Unsent(u) => u.clone(),
            other => panic!("never handed: {other:?}"),
        })
        .collect();
    let producer = d.producer(&successor, spec()).unwrap();
    let mut pending = Vec::new();
    for u in &unsent {
        pending.push(
            d.submit_batch(&producer, Submission::from(u.clone()))
                .unwrap(),
        );
    }
    // A second submission of a recovered batch is refused: it is ingested at most once.
    match d.submit_batch(&producer, Submission::from(unsent[0].clone())) {
        Err(Error::Journal(JournalRefusal::Resubmit(_))) => {}
        other => panic!("a second submission of a recovered batch: {other:?}"),
    }
    for b in &mut pending {
        assert_eq!(d.batch_outcome(b, WAIT).unwrap(), BatchOutcome::Completed);
    }
    std::thread::sleep(Duration::from_millis(200));
    for id in &all {
        assert_eq!(
            times_ingested(&lb, *id),
            1,
            "batch {id} ingested exactly once"
        );
    }
    let stats = d.stats(&successor).unwrap().journal.unwrap();
    assert_eq!(
        stats.batches_journaled, 0,
        "the recovered records were reused"
    );
    assert_eq!(stats.live, 0, "every record ended");
    assert!(
        d.recovery(&successor).unwrap().is_empty(),
        "the list is handed out once"
    );
    d.close(successor, true).unwrap();
    let third = d.start(config).unwrap();
    assert!(
        d.recovery(&third).unwrap().is_empty(),
        "nothing comes back twice"
    );
    d.close(third, true).unwrap();
    let n = ingested(&lb);
    assert_eq!(n, all.len(), "nothing else was ingested");
    lb.stop();
}

/// Issue 19, item 1 (P-8): the handed mark of a batch the engine put on the wire cannot be
/// written (the journal's write fails at that moment). No frame of the batch reaches the
/// cluster: every session is dropped uncleanly before its frame goes, and the batch ends of
/// unknown outcome, reported once. The journal is broken from then on: a later submission is
/// refused at once with a typed error (the producer is not left waiting) and nothing of it is
/// sent. The batch's record still says it was never handed, which is true: a client started
/// on the slot afterwards gets it back unsent, and submitted again it is ingested once.
pub fn unwritten_handed_mark_sends_nothing<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    let p = place::<D>(&lb, via, "unmarked");
    let d = D::new();
    let config = journaled::<D>(&p.seeds, via, p.cert.as_deref(), &p.dir, false);
    let client = d.connect(config.clone()).unwrap();
    let producer = d.producer(&client, spec()).unwrap();
    // Before the fault the producer works: its batch is marked, sent and completed.
    let mut first = d
        .submit_batch(&producer, batch_of::<D>(&producer, &[200]))
        .unwrap();
    assert_eq!(
        d.batch_outcome(&mut first, WAIT).unwrap(),
        BatchOutcome::Completed
    );
    drop(first);
    let journal = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(journal.batches_handed, 1);
    let mut events = d.events(&client);
    // The next handed mark of this slot fails as a failed write would.
    nervix_driver_support::journal::testkit::fail_next_handed_mark(&p.dir.join(SENDER));
    let mut lost = d
        .submit_batch(&producer, batch_of::<D>(&producer, &[201]))
        .expect("the batch is journaled before its mark is asked for");
    assert_eq!(
        d.batch_outcome(&mut lost, WAIT).unwrap(),
        BatchOutcome::Unknown,
        "{via:?}: a batch put on the wire whose session was dropped (P-8)"
    );
    if D::NAME == "blocking" {
        // Its outcome came once: nothing more comes for it.
        assert!(
            d.batch_outcome(&mut lost, Duration::from_millis(300))
                .is_err(),
            "an outcome comes once"
        );
    }
    drop(lost);
    // The loss is told: the session carrying the batch was dropped. The report goes to the
    // observers on its own path, so it may follow the batch's outcome by a moment.
    let end = Instant::now() + WAIT;
    let mut told = Vec::new();
    while !told
        .iter()
        .any(|e| matches!(e, DriverEvent::SessionLost { .. }))
    {
        let left = end.saturating_duration_since(Instant::now());
        match d.next_driver_event(&mut events, left) {
            Some(e) => told.push(e),
            None => panic!("{via:?}: the dropped session is reported: {told:?}"),
        }
    }
    let journal = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(journal.batches_handed, 1, "the mark was not written");
    // A later batch is refused at once, typed, and never sent: the journal is broken.
    let started = Instant::now();
    match d.submit_batch_timeout(
        &producer,
        batch_of::<D>(&producer, &[202]),
        Duration::from_secs(5),
    ) {
        Err(Error::Journal(JournalRefusal::Failed(_))) => {}
        other => panic!("{via:?}: a batch after the journal broke: {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "refused at once, not left waiting"
    );
    assert_eq!(
        d.stats(&client).unwrap().journal.unwrap().batches_refused,
        journal.batches_refused + 1
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(times_ingested(&lb, 201), 0, "{via:?}: no frame of it went");
    assert_eq!(
        times_ingested(&lb, 202),
        0,
        "the refused batch was not sent"
    );
    assert_eq!(ingested(&lb), 1, "only the batch before the fault");
    drop(producer);
    let _ = d.close(client, false);

    // The record says never handed, and it never was: it comes back unsent, once.
    let successor = d.start(config.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();
    let [JournaledBatch::Unsent(unsent)] = &list.batches[..] else {
        panic!(
            "{via:?}: the batch whose mark failed, alone: {:?}",
            list.batches
        )
    };
    let producer = d.producer(&successor, spec()).unwrap();
    let mut again = d
        .submit_batch(&producer, Submission::from(unsent.clone()))
        .unwrap();
    assert_eq!(
        d.batch_outcome(&mut again, WAIT).unwrap(),
        BatchOutcome::Completed
    );
    drop(again);
    assert_eq!(
        times_ingested(&lb, 201),
        1,
        "ingested once, after the restart"
    );
    assert_eq!(times_ingested(&lb, 202), 0);
    let stats = d.stats(&successor).unwrap().journal.unwrap();
    assert_eq!(
        stats.batches_journaled, 0,
        "the recovered record was reused"
    );
    assert_eq!(stats.live, 0, "every record ended");
    drop(producer);
    d.close(successor, false).unwrap();
    let third = d.start(config).unwrap();
    assert!(
        d.recovery(&third).unwrap().is_empty(),
        "nothing comes back twice"
    );
    d.close(third, false).unwrap();
    assert_eq!(ingested(&lb), 2, "nothing else was ingested");
    lb.stop();
}

/// Submits batches of ten rows until the journal refuses one; gives the refusal and the
/// first id of the refused batch.
fn fill<D: Driver>(d: &D, producer: &D::Producer, from: u64) -> (Error, u64, Vec<D::Batch>) {
    let mut kept = Vec::new();
    for i in 0..500u64 {
        let first = from + i * 10;
        let ids: Vec<u64> = (first..first + 10).collect();
        match d.submit_batch_timeout(
            producer,
            batch_of::<D>(producer, &ids),
            Duration::from_millis(500),
        ) {
            Ok(b) => kept.push(b),
            Err(e) => return (e, first, kept),
        }
    }
    panic!("the journal never filled");
}

/// SF-23, SF-24: a full journal refuses a batch with a typed error naming the wire state
/// (publishing while a session is open and outcomes do not come back, reconnecting while no
/// session is open), and the refused batch is never sent.
pub fn full_journal_refuses<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    let d = D::new();
    let p = place::<D>(&lb, via, "full-publishing");
    let client = d
        .connect(journaled::<D>(
            &p.seeds,
            via,
            p.cert.as_deref(),
            &p.dir,
            true,
        ))
        .unwrap();
    let producer = d.producer(&client, spec()).unwrap();
    lb.drop_replies(0, true);
    let (e, refused, kept) = fill(&d, &producer, 1_000);
    assert!(
        matches!(e, Error::Journal(JournalRefusal::Full { publishing: true })),
        "{via:?}: {e:?}"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(times_ingested(&lb, refused), 0);
    assert!(
        lb.with_cluster(|c| c.ingested().iter().all(|b| b[0] != refused)),
        "the refused batch was not sent"
    );
    drop(kept);
    let _ = d.close(client, false);
    lb.drop_replies(0, false);

    let p = place::<D>(&lb, via, "full-reconnecting");
    let mut config = journaled::<D>(&p.seeds, via, p.cert.as_deref(), &p.dir, true);
    // Reconnects wait long enough for the journal to fill in between.
    D::client_config(&mut config).backoff_initial = Duration::from_secs(3);
    D::client_config(&mut config).backoff_max = Duration::from_secs(3);
    let client = d.connect(config).unwrap();
    let mut events = d.events(&client);
    let producer = d.producer(&client, spec()).unwrap();
    // The only node is down: nothing drains the journal until a session is back. Once the
    // session is lost and no new one opened for a while, the client is reconnecting.
    lb.kill(0);
    let end = Instant::now() + WAIT;
    let mut lost = false;
    loop {
        assert!(Instant::now() < end, "{via:?}: the session was not lost");
        match d.next_driver_event(&mut events, Duration::from_millis(300)) {
            Some(DriverEvent::SessionLost { .. }) => lost = true,
            Some(DriverEvent::SessionOpened { .. }) => lost = false,
            Some(_) => {}
            None if lost => break,
            None => {}
        }
    }
    let (e, refused, kept) = fill(&d, &producer, 50_000);
    assert!(
        matches!(
            e,
            Error::Journal(JournalRefusal::Full { publishing: false })
        ),
        "{via:?}: {e:?}"
    );
    assert!(lb.with_cluster(|c| c.ingested().iter().all(|b| b[0] != refused)));
    drop(kept);
    let _ = d.close(client, false);
    lb.stop();
}

/// P-7 in outbox mode: handles dropped at once, of batches that went straight to the engine
/// and of batches that waited in the outbox first, leave their outcomes for
/// `unclaimed_batches` under the names the handles had.
pub fn dropped_handles_leave_outcomes_under_their_names<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let lb = Loopback::start(LoopbackConfig::default()).unwrap();
    let p = place::<D>(&lb, via, "unclaimed");
    let d = D::new();
    let config = journaled::<D>(&p.seeds, via, p.cert.as_deref(), &p.dir, false);
    let client = d.connect(config).unwrap();
    let producer = d.producer(&client, spec()).unwrap();
    let ids: Vec<u64> = (300..305).collect();
    let mut names = Vec::new();
    for id in &ids {
        let b = d
            .submit_batch(&producer, batch_of::<D>(&producer, &[*id]))
            .unwrap();
        names.push(D::batch_id(&b));
    }
    for id in &ids {
        ingested_once(&lb, *id);
    }
    let end = Instant::now() + WAIT;
    let mut kept = Vec::new();
    while kept.len() < ids.len() && Instant::now() < end {
        kept.extend(d.unclaimed_batches(&client).unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut got: Vec<_> = kept.iter().map(|u| u.batch).collect();
    got.sort();
    let mut want = names.clone();
    want.sort();
    assert_eq!(
        got, want,
        "{via:?}: every dropped handle's outcome, under its name"
    );
    assert!(
        kept.iter().all(|u| u.outcome == BatchOutcome::Completed),
        "{via:?}: {kept:?}"
    );
    let _ = d.close(client, false);
    lb.stop();
}

/// The outbox scenarios' tests for one driver (part of `journal_tests!`).
#[macro_export]
macro_rules! outbox_tests {
    (tokio) => {
        #[test]
        #[ignore = "the client process of the outbox tests, run by them"]
        fn outbox_child() {
            $crate::outbox::child::<$crate::Tokio>()
        }
        #[test]
        fn sf_2_an_outbox_submission_returns_once_journaled_without_credit_and_goes_later() {
            $crate::run!(Tokio, outbox::submit_returns_without_credit(Via::Grpc))
        }
        #[test]
        fn p_8_batches_journaled_before_a_sigkill_are_unknown_if_handed_and_resent_once_if_not(
        ) {
            $crate::run!(Tokio, outbox::recovered_after_sigkill(Via::Grpc))
        }
        #[test]
        fn p_8_a_batch_whose_handed_mark_cannot_be_written_is_never_sent_and_ends_unknown() {
            $crate::run!(Tokio, outbox::unwritten_handed_mark_sends_nothing(Via::Grpc))
        }
        #[test]
        fn p_7_dropped_journaled_batch_handles_leave_their_outcomes_under_their_names() {
            $crate::run!(
                Tokio,
                outbox::dropped_handles_leave_outcomes_under_their_names(Via::Grpc)
            )
        }
        #[test]
        fn sf_24_a_full_journal_refuses_a_batch_naming_the_wire_state() {
            $crate::run!(Tokio, outbox::full_journal_refuses(Via::Grpc))
        }
    };
    (blocking) => {
        #[test]
        #[ignore = "the client process of the outbox tests, run by them"]
        fn outbox_child_blocking() {
            $crate::outbox::child::<$crate::Blocking>()
        }
        #[test]
        fn sf_2_an_outbox_submission_returns_once_journaled_without_credit_and_goes_later_blocking(
        ) {
            $crate::run!(
                Blocking,
                outbox::submit_returns_without_credit(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn p_8_batches_journaled_before_a_sigkill_are_unknown_if_handed_and_resent_once_if_not_blocking(
        ) {
            $crate::run!(
                Blocking,
                outbox::recovered_after_sigkill(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn p_8_a_batch_whose_handed_mark_cannot_be_written_is_never_sent_and_ends_unknown_blocking(
        ) {
            $crate::run!(
                Blocking,
                outbox::unwritten_handed_mark_sends_nothing(Via::Console(WsAuth::Header))
            )
        }
        #[test]
        fn p_7_dropped_journaled_batch_handles_leave_their_outcomes_under_their_names_blocking(
        ) {
            $crate::run!(
                Blocking,
                outbox::dropped_handles_leave_outcomes_under_their_names(Via::Console(
                    WsAuth::Header
                ))
            )
        }
        #[test]
        fn sf_24_a_full_journal_refuses_a_batch_naming_the_wire_state_blocking() {
            $crate::run!(
                Blocking,
                outbox::full_journal_refuses(Via::Console(WsAuth::Header))
            )
        }
    };
}
