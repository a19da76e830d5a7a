//! Uploads and restores in the client's journal over real sockets (issue 19): each is journaled
//! before its first byte is sent and ended at its outcome; one outstanding when its client
//! process is killed with SIGKILL comes back in the successor's recovery list and is repeated
//! under the same identity, which the cluster answers from its record (applied once); an
//! archive changed since is refused and nothing sent; one past its retry validity is reported
//! unknown once and never repeated; a full journal refuses the call and nothing is sent.
//!
//! The client process is this test binary run again: the parent runs the
//! `journal_transfer_child` test of the same binary (ignored otherwise) with [`CHILD`] set.

use crate::child::{self, Head, Running};
use crate::journal::{cluster, creds, journaled, suffix, SENDER};
use crate::{config_of, scratch, seeds_of, Driver, Via};
use nervix_driver_support::journal::{JournalConfig, TransferKind, TransferRecord};
use nervix_driver_support::journaled::{JournalRefusal, JournaledTransfer};
use nervix_driver_support::transfer_journal::TransferRefused;
use nervix_loopback::{CallFaults, Loopback, RESTORE_PATH, RESTORE_WS_PATH, UPLOAD_PATH};
use nervix_protocol::calls::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::schema::OutcomeOrigin;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The variable that makes the `journal_transfer_child` test the client process.
pub const CHILD: &str = "NERVIX_JOURNAL_TRANSFER_CHILD";

/// The restore statement of every restore here.
pub(crate) const STATEMENT: &str = "RESTORE DOMAIN tenant AS tenant_copy";

pub(crate) fn restore_path(via: Via) -> &'static str {
    match via {
        Via::Grpc => RESTORE_PATH,
        Via::Console(_) => RESTORE_WS_PATH,
    }
}

/// A cluster, its backup archive downloaded to a file, and a scratch directory with the
/// trusted certificate in it.
pub(crate) struct Setup {
    pub(crate) lb: Loopback,
    pub(crate) dir: PathBuf,
    pub(crate) cert: Option<PathBuf>,
    pub(crate) seeds: Vec<String>,
    pub(crate) archive: PathBuf,
}

impl Setup {
    pub(crate) fn new<D: Driver>(via: Via, name: &str) -> Self {
        let lb = cluster();
        let dir = scratch::<D>(&format!("journal-transfer-{name}-{via:?}"));
        let cert = lb.certificate_der().map(|der| {
            let path = dir.join("root.der");
            std::fs::write(&path, der).unwrap();
            path
        });
        let seeds = seeds_of(&lb, via);
        let d = D::new();
        let mut plain = config_of::<D>(
            &seeds,
            creds(),
            via,
            Duration::from_secs(10),
            Duration::from_secs(3),
        );
        if let Some(cert) = &cert {
            plain = D::with_root(plain, std::fs::read(cert).unwrap());
        }
        let report = crate::backed_up(&d, &plain);
        let t = d.transfers(&plain).unwrap();
        let archive = d.backup(&t, &report, &dir.join("tenant.nxb")).unwrap();
        Self {
            lb,
            dir,
            cert,
            seeds,
            archive,
        }
    }

    pub(crate) fn journal(&self) -> JournalConfig {
        JournalConfig::new(self.dir.join("journal"), SENDER.to_string())
    }

    pub(crate) fn config<D: Driver>(&self, via: Via, journal: JournalConfig) -> D::Config {
        journaled::<D>(&self.seeds, via, self.cert.as_deref(), journal)
    }

    /// Every reply of an upload or a restore is lost after it took effect.
    pub(crate) fn lose_replies(&self, on: bool) {
        let mut faults = CallFaults::default();
        if on {
            faults.lost_reply = 1.0;
        }
        self.lb.set_call_faults(faults);
    }
}

/// A restore of `archive` under `reference`.
pub(crate) fn restore_of(reference: &str, archive: &Path) -> RestoreCall {
    RestoreCall::new(
        ExecutionReference::parse(reference).unwrap(),
        STATEMENT,
        crate::info_of(archive),
        TransferConfig::restore(),
    )
    .unwrap()
}

/// An upload of a 40,000-byte file in `dir` as `model` of `tenant` under `identity`.
pub(crate) fn upload_of(dir: &Path, identity: &str) -> (UploadCall, PathBuf) {
    let bytes: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 253) as u8).collect();
    let file = dir.join(format!("{identity}.bin"));
    std::fs::write(&file, &bytes).unwrap();
    let spec = UploadSpec {
        domain: "tenant".into(),
        resource: "model".into(),
        identity: identity.into(),
    };
    let call = UploadCall::new(spec, bytes.len() as u64, TransferConfig::upload()).unwrap();
    (call, file)
}

/// The restores the cluster applied (not answered from its record) under `reference`.
pub(crate) fn restores_applied(lb: &Loopback, reference: &str) -> usize {
    lb.with_cluster(|c| c.received_whole(reference).len())
}

/// Issue 19, item 1 (U-2, RS-2): a journaled client's upload (gRPC) and restore are each
/// journaled before they are sent and their records end at their outcome: nothing stays live.
pub fn journaled_and_ended_at_outcome<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(via, "ended");
    let d = D::new();
    let config = s.config::<D>(via, s.journal());
    let client = d.start(config.clone()).unwrap();
    let t = d.journaled_transfers(&config, &client).unwrap();
    let mut call = restore_of("restore-journaled-1", &s.archive);
    match d.restore(&t, &mut call, &s.archive).unwrap() {
        RestoreOutcome::Completed { origin, .. } => assert_eq!(origin, OutcomeOrigin::Executed),
        other => panic!("{other:?}"),
    }
    let mut expected = 1;
    let (mut up, file) = upload_of(&s.dir, "upload-journaled-1");
    if let Some(r) = d.upload(&t, &mut up, &file) {
        assert!(
            matches!(r.unwrap(), UploadOutcome::Installed { version: 1, .. }),
            "installed"
        );
        expected += 1;
    }
    let j = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(j.transfers_journaled, expected, "each was journaled");
    assert_eq!(j.transfers_ended, expected, "each ended at its outcome");
    assert_eq!(j.transfers_live, 0);
    assert_eq!(j.live, 0);
    d.close(client, false).unwrap();
    // Nothing comes back.
    let successor = d.start(config).unwrap();
    assert!(d.recovery(&successor).unwrap().is_empty());
    // A client that closed keeps no journal for the calls made with it: refused, not sent.
    let calls = s.lb.calls_to(restore_path(via)).len();
    let kept = d.recovery(&successor).unwrap();
    assert!(kept.is_empty());
    d.close(successor, false).unwrap();
    let mut late = restore_of("restore-journaled-2", &s.archive);
    let err = d.restore(&t, &mut late, &s.archive).unwrap_err();
    assert!(
        matches!(
            D::journal_error(&err),
            Some(TransferRefused::Store(JournalRefusal::Failed(_)))
        ),
        "{err:?}"
    );
    assert_eq!(
        s.lb.calls_to(restore_path(via)).len(),
        calls,
        "nothing sent"
    );
    s.lb.stop();
}

/// Issue 19, item 1: calls made from a configuration that keeps a journal but never given the
/// client's journal (`Transfers::journaled`) would send uploads and restores unjournaled: each
/// is refused with a typed error, and nothing is sent.
pub fn calls_without_the_clients_journal_are_refused<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(via, "unjournaled");
    let d = D::new();
    let config = s.config::<D>(via, s.journal());
    let client = d.start(config.clone()).unwrap();
    let t = d.transfers(&config).unwrap();
    let restores = s.lb.calls_to(restore_path(via)).len();
    let mut call = restore_of("restore-unjournaled-1", &s.archive);
    let err = d.restore(&t, &mut call, &s.archive).unwrap_err();
    assert!(
        matches!(
            D::journal_error(&err),
            Some(TransferRefused::Store(JournalRefusal::NotJournaled))
        ),
        "{err:?}"
    );
    assert_eq!(
        s.lb.calls_to(restore_path(via)).len(),
        restores,
        "nothing sent"
    );
    let (mut up, file) = upload_of(&s.dir, "upload-unjournaled-1");
    if let Some(r) = d.upload(&t, &mut up, &file) {
        let err = r.unwrap_err();
        assert!(
            matches!(
                D::journal_error(&err),
                Some(TransferRefused::Store(JournalRefusal::NotJournaled))
            ),
            "{err:?}"
        );
    }
    let j = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(j.transfers_journaled, 0);
    // Given the client's journal, the same calls go.
    let t = d.journaled_transfers(&config, &client).unwrap();
    let mut call = restore_of("restore-unjournaled-2", &s.archive);
    assert!(d.restore(&t, &mut call, &s.archive).is_ok());
    assert_eq!(
        d.stats(&client)
            .unwrap()
            .journal
            .unwrap()
            .transfers_journaled,
        1
    );
    d.close(client, false).unwrap();
    s.lb.stop();
}

/// What the transfer child is told: the common head (its `dir` holds the journal), then the
/// archive and the restore's reference.
fn encode(via: Via, s: &Setup, reference: &str) -> String {
    let head = Head {
        via,
        dir: s.dir.clone(),
        cert: s.cert.clone(),
        seeds: s.seeds.clone(),
    };
    head.encode(&[s.archive.display().to_string(), reference.to_string()])
}

/// The client process: an upload (when the driver has them) and a restore, journaled, their
/// replies lost; it prints each reference before its call and waits to be killed.
pub fn child<D: Driver>() {
    let (head, rest) = Head::from_env(CHILD, "the journal transfer tests' client process");
    let Head {
        via,
        dir,
        cert,
        seeds,
    } = head;
    let archive = PathBuf::from(&rest[0]);
    let reference = rest[1].clone();
    let d = D::new();
    let config = journaled::<D>(
        &seeds,
        via,
        cert.as_deref(),
        JournalConfig::new(dir.join("journal"), SENDER.to_string()),
    );
    let client = d.start(config.clone()).unwrap();
    let t = d.journaled_transfers(&config, &client).unwrap();
    let (mut up, file) = upload_of(&dir, &format!("{reference}-upload"));
    println!("UPLOAD {}", up.identity());
    let _ = d.upload(&t, &mut up, &file);
    println!("RESTORE {reference}");
    let mut call = restore_of(&reference, &archive);
    let _ = d.restore(&t, &mut call, &archive);
    println!("GAVE UP");
    child::until_killed("the journal transfer tests' client process");
}

fn spawn<D: Driver>(spec: String) -> Running {
    let test = format!("journal_transfer_child{}", suffix::<D>());
    child::spawn(
        &child::this_binary(),
        &child::test_args(&test),
        CHILD,
        spec,
        false,
    )
}

/// Issue 19, items 1, 2 and 5 (U-5, RS-5, E-3): a client process killed with an upload and a
/// restore outstanding (their archives received whole by the cluster, their replies lost);
/// its successor lists both, repeats each whole under the same identity and its live record,
/// and the cluster answers from its record: each applied once.
pub fn outstanding_at_sigkill_recovered_once<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(via, "sigkill");
    let d = D::new();
    let reference = "restore-crash-1";
    // The node goes down at once after the restore arrived, so no repeat can learn the
    // outcome before the kill.
    let upload = killed_with_transfers_out::<D>(via, &s, reference, true);
    let config = s.config::<D>(via, s.journal());
    let successor = d.start(config.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();
    assert!(list.commands.is_empty());
    let records = repeatable_in_order(&list.transfers, upload.as_deref(), reference);
    let t = d.journaled_transfers(&config, &successor).unwrap();
    for r in &records {
        match &r.kind {
            TransferKind::Restore { statement } => {
                assert_eq!(statement, STATEMENT);
                assert_eq!(r.archive, s.archive.display().to_string());
                assert_eq!(
                    (r.size, r.digest),
                    {
                        let i = crate::info_of(&s.archive);
                        (i.total_bytes, i.digest)
                    },
                    "the archive's size and digest"
                );
                match d.recover_restore(&t, r).unwrap() {
                    RestoreOutcome::Completed { origin, .. } => {
                        assert_eq!(
                            origin,
                            OutcomeOrigin::Recovered,
                            "from the cluster's record"
                        )
                    }
                    other => panic!("{other:?}"),
                }
            }
            TransferKind::Upload { domain, resource } => {
                assert_eq!((domain.as_str(), resource.as_str()), ("tenant", "model"));
                match d
                    .recover_upload(&t, r)
                    .expect("a driver that uploads")
                    .unwrap()
                {
                    UploadOutcome::Installed {
                        version, origin, ..
                    } => {
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
            other => panic!("{other:?}"),
        }
    }
    let j = d.stats(&successor).unwrap().journal.unwrap();
    assert_eq!(j.transfers_journaled, 0, "no second record");
    assert_eq!(j.transfers_reused, records.len() as u64);
    assert_eq!(j.transfers_live, 0, "each ended at its outcome");
    assert_eq!(j.live, 0);
    d.close(successor, false).unwrap();
    let third = d.start(config).unwrap();
    assert!(
        d.recovery(&third).unwrap().is_empty(),
        "nothing comes back twice"
    );
    d.close(third, false).unwrap();
    s.lb.stop();
}

/// The records of `listed`, each repeatable (inside its retry validity): the upload's, when
/// one was received whole, then the restore of `reference`, in the order written.
fn repeatable_in_order(
    listed: &[JournaledTransfer],
    upload: Option<&str>,
    reference: &str,
) -> Vec<TransferRecord> {
    let records: Vec<TransferRecord> = listed
        .iter()
        .map(|t| match t {
            JournaledTransfer::Repeatable { record } => record.clone(),
            other => panic!("inside its retry validity: {other:?}"),
        })
        .collect();
    let refs: Vec<&str> = records.iter().map(|r| r.reference.as_str()).collect();
    let mut expected: Vec<&str> = upload.into_iter().collect();
    expected.push(reference);
    assert_eq!(
        refs, expected,
        "every outstanding transfer, in the order written"
    );
    records
}

/// Starts the transfer child with `reference` and kills it once the restore was received
/// whole (and the upload before it, when the driver makes one), their replies lost; with
/// `node_down` the node goes down first and comes back after the kill. Gives the upload's
/// identity when one was received whole.
fn killed_with_transfers_out<D: Driver>(
    via: Via,
    s: &Setup,
    reference: &str,
    node_down: bool,
) -> Option<String> {
    s.lose_replies(true);
    let mut child = spawn::<D>(encode(via, s, reference));
    let rx = &child.lines;
    let end = Instant::now() + Duration::from_secs(30);
    let mut upload = None;
    let mut restore_started = false;
    while !restore_started {
        let line = rx
            .recv_timeout(end.saturating_duration_since(Instant::now()))
            .expect("the child reports its calls");
        if let Some((_, r)) = line.split_once("UPLOAD ") {
            upload = Some(r.to_string());
        }
        restore_started |= line.ends_with(&format!("RESTORE {reference}"));
    }
    while restores_applied(&s.lb, reference) == 0 {
        assert!(Instant::now() < end, "the restore never arrived whole");
        std::thread::sleep(Duration::from_millis(2));
    }
    if node_down {
        s.lb.kill(0);
    }
    child.kill();
    if node_down {
        s.lb.revive(0);
    }
    s.lose_replies(false);
    upload.filter(|u| restores_applied(&s.lb, u) > 0)
}

/// Issue 19, item 2 (U-2, RS-2), over real sockets: a client process killed with an upload
/// (when the driver makes them) and a restore outstanding, whose archives' bytes then change
/// at the same size before its successor starts. The successor lists both; repeating either
/// is refused with a typed error naming its reference and the sizes (the digest differs),
/// and nothing of it is sent, however often it is asked. Each record stays until the call
/// ends: with the bytes put back, each is repeated once under its identity and answered from
/// the cluster's record (installed once, restored once), and then nothing comes back.
pub fn changed_after_sigkill_refused<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(via, "changed-sigkill");
    let reference = "restore-changed-crash-1";
    let upload = killed_with_transfers_out::<D>(via, &s, reference, false);
    if D::NAME == "tokio" {
        assert!(upload.is_some(), "the tokio driver uploads");
    }
    // Between the crash and the successor, each archive changes at the same size.
    let upload_file = upload.as_ref().map(|u| s.dir.join(format!("{u}.bin")));
    let mut originals = vec![(s.archive.clone(), std::fs::read(&s.archive).unwrap())];
    if let Some(f) = &upload_file {
        originals.push((f.clone(), std::fs::read(f).unwrap()));
    }
    for (path, bytes) in &originals {
        let mut changed = bytes.clone();
        let last = changed.len() - 1;
        changed[last] ^= 0x5a;
        std::fs::write(path, &changed).unwrap();
    }
    let d = D::new();
    let config = s.config::<D>(via, s.journal());
    let successor = d.start(config.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();
    let records = repeatable_in_order(&list.transfers, upload.as_deref(), reference);
    let t = d.journaled_transfers(&config, &successor).unwrap();
    let sent = |s: &Setup| {
        (
            s.lb.calls_to(restore_path(via)).len(),
            s.lb.calls_to(UPLOAD_PATH).len(),
        )
    };
    let before = sent(&s);
    let whole: Vec<usize> = records
        .iter()
        .map(|r| restores_applied(&s.lb, &r.reference))
        .collect();
    let refused_before = d
        .stats(&successor)
        .unwrap()
        .journal
        .unwrap()
        .transfers_refused;
    for _ in 0..2 {
        for r in &records {
            let err = match &r.kind {
                TransferKind::Upload { .. } => d
                    .recover_upload(&t, r)
                    .expect("a driver that uploads")
                    .unwrap_err(),
                _ => d.recover_restore(&t, r).unwrap_err(),
            };
            match D::journal_error(&err) {
                Some(TransferRefused::ArchiveChanged {
                    reference: named,
                    journaled_size,
                    found_size,
                    same_digest,
                }) => {
                    assert_eq!(named, &r.reference);
                    assert_eq!(journaled_size, found_size, "the same size");
                    assert_eq!(*journaled_size, r.size);
                    assert!(!same_digest, "the bytes differ");
                }
                other => panic!("{}: {other:?} ({err:?})", r.reference),
            }
        }
    }
    assert_eq!(sent(&s), before, "nothing of either was sent");
    let j = d.stats(&successor).unwrap().journal.unwrap();
    assert_eq!(
        j.transfers_refused,
        refused_before + 2 * records.len() as u64,
        "each refusal counted"
    );
    assert_eq!(j.transfers_live, records.len() as u64, "the records stay");
    // The bytes put back, each call ends once, from the cluster's record.
    for (path, bytes) in &originals {
        std::fs::write(path, bytes).unwrap();
    }
    for r in &records {
        match &r.kind {
            TransferKind::Upload { .. } => {
                match d.recover_upload(&t, r).expect("a driver that uploads") {
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
            _ => match d.recover_restore(&t, r) {
                Ok(RestoreOutcome::Completed { origin, .. }) => {
                    assert_eq!(origin, OutcomeOrigin::Recovered)
                }
                other => panic!("{other:?}"),
            },
        }
    }
    for (r, w) in records.iter().zip(&whole) {
        assert_eq!(
            restores_applied(&s.lb, &r.reference),
            w + 1,
            "{}: sent whole once, after the bytes were put back",
            r.reference
        );
    }
    let j = d.stats(&successor).unwrap().journal.unwrap();
    assert_eq!(j.transfers_live, 0, "each ended at its outcome");
    assert_eq!(j.transfers_journaled, 0, "no second record");
    d.close(successor, false).unwrap();
    let third = d.start(config).unwrap();
    assert!(
        d.recovery(&third).unwrap().is_empty(),
        "nothing comes back twice"
    );
    d.close(third, false).unwrap();
    s.lb.stop();
}

/// Runs a restore under `reference` whose replies are all lost: it gives up uncertain, and
/// its record stays. Returns the client, still open.
fn uncertain_restore<D: Driver>(
    d: &D,
    s: &Setup,
    config: &D::Config,
    reference: &str,
) -> D::Client {
    let client = d.start(config.clone()).unwrap();
    let t = d.journaled_transfers(config, &client).unwrap();
    // The first attempt takes effect and its reply is lost; then the node goes down, so
    // every repeat fails to connect and the call gives up uncertain.
    s.lose_replies(true);
    let mut call = restore_of(reference, &s.archive);
    let err = std::thread::scope(|scope| {
        let watch = scope.spawn(|| {
            let end = Instant::now() + Duration::from_secs(20);
            while restores_applied(&s.lb, reference) == 0 && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(2));
            }
            s.lb.kill(0);
        });
        let err = d.restore(&t, &mut call, &s.archive).unwrap_err();
        watch.join().unwrap();
        err
    });
    assert!(call.is_uncertain(), "{err:?}");
    s.lose_replies(false);
    s.lb.revive(0);
    let j = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(j.transfers_live, 1, "an uncertain restore keeps its record");
    client
}

/// Issue 19, item 2 (RS-2, U-2): a journaled restore whose archive changed since (its size, or
/// its bytes at the same size) is refused with a typed error and nothing is sent; its record
/// stays, and with the archive put back it recovers under the same reference.
pub fn changed_archive_refused<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(via, "changed");
    let d = D::new();
    let config = s.config::<D>(via, s.journal());
    let reference = "restore-changed-1";
    let client = uncertain_restore(&d, &s, &config, reference);
    d.close(client, false).unwrap();
    let original = std::fs::read(&s.archive).unwrap();
    let successor = d.start(config.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();
    let [JournaledTransfer::Repeatable { record }] = &list.transfers[..] else {
        panic!("{list:?}")
    };
    let t = d.journaled_transfers(&config, &successor).unwrap();
    let sent = s.lb.calls_to(restore_path(via)).len();
    let mut grown = original.clone();
    grown.push(0);
    let mut flipped = original.clone();
    flipped[0] ^= 0xff;
    for (bytes, same_size) in [(grown, false), (flipped, true)] {
        std::fs::write(&s.archive, &bytes).unwrap();
        let err = d.recover_restore(&t, record).unwrap_err();
        match D::journal_error(&err) {
            Some(TransferRefused::ArchiveChanged {
                reference: r,
                journaled_size,
                found_size,
                same_digest,
            }) => {
                assert_eq!(r, reference);
                assert_eq!(journaled_size == found_size, same_size);
                assert!(!same_digest);
            }
            other => panic!("{other:?} ({err:?})"),
        }
        assert_eq!(s.lb.calls_to(restore_path(via)).len(), sent, "nothing sent");
    }
    std::fs::write(&s.archive, &original).unwrap();
    match d.recover_restore(&t, record).unwrap() {
        RestoreOutcome::Completed { origin, .. } => assert_eq!(origin, OutcomeOrigin::Recovered),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        d.stats(&successor).unwrap().journal.unwrap().transfers_live,
        0
    );
    d.close(successor, false).unwrap();
    s.lb.stop();
}

/// Issue 19, item 2 (E-4): a journaled restore past its retry validity is reported unknown,
/// naming its reference, once; it is never repeated, and its record ends once reported.
pub fn past_validity_reported_unknown<D: Driver>(via: Via) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(via, "expired");
    let d = D::new();
    let config = s.config::<D>(via, s.journal());
    let reference = "restore-expired-1";
    let client = uncertain_restore(&d, &s, &config, reference);
    d.close(client, false).unwrap();
    let sent = s.lb.calls_to(restore_path(via)).len();
    let mut j = s.journal();
    j.horizon = Duration::ZERO;
    let expired = s.config::<D>(via, j);
    let successor = d.start(expired.clone()).unwrap();
    let list = d.recovery(&successor).unwrap();
    let [JournaledTransfer::Unknown {
        reference: unknown, ..
    }] = &list.transfers[..]
    else {
        panic!("{list:?}")
    };
    assert_eq!(unknown, reference);
    assert!(d.recovery(&successor).unwrap().is_empty(), "reported once");
    // Never repeated: the record is gone, so a repeat is refused and nothing is sent.
    let t = d.journaled_transfers(&expired, &successor).unwrap();
    let record = TransferRecord {
        kind: TransferKind::Restore {
            statement: STATEMENT.into(),
        },
        reference: reference.into(),
        archive: s.archive.display().to_string(),
        size: 0,
        digest: [0; 32],
        created_wall: nervix_protocol::time::UnixMillis(0),
    };
    let err = d.recover_restore(&t, &record).unwrap_err();
    assert!(
        matches!(D::journal_error(&err), Some(TransferRefused::NotLive(_))),
        "{err:?}"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        s.lb.calls_to(restore_path(via)).len(),
        sent,
        "never repeated"
    );
    d.close(successor, false).unwrap();
    let third = d.start(config).unwrap();
    assert!(d.recovery(&third).unwrap().is_empty(), "its record ended");
    d.close(third, false).unwrap();
    s.lb.stop();
}

/// Issue 19, item 1 (SF-23): a journal with no room refuses an upload (gRPC) and a restore
/// with the typed error naming the wire state, and nothing of either is sent.
pub fn full_journal_refuses_transfers<D: Driver>(via: Via) {
    full_journal_refuses_transfers_as::<D>(via, true);
}

/// Issue 19, item 1 (SF-24): with no session (the only node down) the journal fills with
/// commands waiting for one, and an upload and a restore are refused naming the wire as
/// reconnecting, before any attempt.
pub fn full_journal_refuses_transfers_while_reconnecting<D: Driver>(via: Via) {
    full_journal_refuses_transfers_as::<D>(via, false);
}

/// A journal filled by commands whose outcomes do not come back, over an open session
/// (`publishing`) or with the only node down: an upload and a restore are refused naming the
/// wire's state, before any attempt, and nothing is sent.
fn full_journal_refuses_transfers_as<D: Driver>(via: Via, publishing: bool) {
    if !D::speaks(via) {
        return;
    }
    let s = Setup::new::<D>(
        via,
        if publishing {
            "full"
        } else {
            "full-reconnecting"
        },
    );
    let d = D::new();
    let mut j = s.journal();
    j.segment_bytes = 4096;
    j.capacity_bytes = 8192;
    let config = s.config::<D>(via, j);
    let client = if publishing {
        // A session is open and no command's outcome comes back.
        let client = d.connect(config.clone()).unwrap();
        d.select_domain(&client, Some("tenant")).unwrap();
        s.lb.drop_replies(0, true);
        client
    } else {
        s.lb.kill(0);
        let client = d.start(config.clone()).unwrap();
        d.select_domain(&client, Some("tenant")).unwrap();
        client
    };
    let mut pending = Vec::new();
    for i in 0..2000 {
        match d.submit(&client, &format!("CREATE RELAY filler_{i};")) {
            Ok(p) => pending.push(p),
            Err(_) => break,
        }
    }
    let full = |err: &D::TransferError| {
        matches!(
            D::journal_error(err),
            Some(TransferRefused::Store(JournalRefusal::Full { publishing: p })) if *p == publishing
        )
    };
    let t = d.journaled_transfers(&config, &client).unwrap();
    let mut call = restore_of("restore-full-1", &s.archive);
    let err = d.restore(&t, &mut call, &s.archive).unwrap_err();
    assert!(full(&err), "{err:?}");
    assert_eq!(call.attempts(), 0, "refused before any attempt");
    assert!(s.lb.calls_to(restore_path(via)).is_empty(), "nothing sent");
    let (mut up, file) = upload_of(&s.dir, "upload-full-1");
    if let Some(r) = d.upload(&t, &mut up, &file) {
        let err = r.unwrap_err();
        assert!(full(&err), "{err:?}");
        assert_eq!(up.attempts(), 0, "refused before any attempt");
        assert!(s.lb.calls_to(UPLOAD_PATH).is_empty(), "nothing sent");
    }
    let stats = d.stats(&client).unwrap().journal.unwrap();
    assert_eq!(stats.transfers_journaled, 0);
    assert!(stats.transfers_refused >= 1);
    drop(pending);
    let _ = d.close(client, false);
    s.lb.stop();
}
