//! The separate calls against the simulated cluster: uploads with versions, backups downloaded
//! once, restores with step reports, and the calls' faults. Invariants: no partial or unverified
//! archive is ever accepted; an upload or restore is repeated only whole and only under its
//! identity.

use nervix_harness::cluster::{CallFaults, ClusterConfig, Output, SimCluster};
use nervix_harness::transfers::*;
use nervix_protocol::calls::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::ServerFrame;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;

const NOW: Timestamp = Timestamp::from_nanos(1_000_000_000);

fn cluster(seed: u64) -> (SimCluster, String) {
    let c = SimCluster::new(ClusterConfig {
        seed,
        ..ClusterConfig::default()
    });
    let leader = c.endpoints()[0].clone();
    (c, leader)
}

/// Runs BACKUP `query` under `reference` on a session to the leader; the archive's reference
/// and size and digest from the summary.
fn backup(c: &mut SimCluster, leader: &str, query: &str, reference: &str) -> ArchiveInfo {
    let conn = c.connect(NOW, leader).unwrap();
    let frame = Encoder::new()
        .encode_request(
            1,
            &ClientRequestT::CommandRequest(Box::new(CommandRequestT {
                query: query.into(),
                domain: None,
                execution_reference: reference.into(),
                expected_transaction_position: None,
                expected_preview: None,
            })),
        )
        .unwrap();
    c.receive(NOW, conn, frame);
    while let Some((_, out)) = c.poll_output() {
        let Output::Frame(f) = out else { continue };
        let m = ServerFrame::check(f).unwrap().unpack();
        if let ServerBodyT::Reply(r) = m.body {
            if let ReplyBodyT::CommandOutcome(o) = r.body {
                let s = o.backup.expect("a backup summary");
                let mut digest = [0; 32];
                digest.copy_from_slice(&s.digest.bytes);
                return ArchiveInfo {
                    total_bytes: s.total_bytes,
                    digest,
                };
            }
        }
    }
    panic!("no outcome")
}

fn upload_call(identity: &str, resource: &str, len: usize) -> UploadCall {
    UploadCall::new(
        UploadSpec {
            domain: "tenant".into(),
            resource: resource.into(),
            identity: identity.into(),
        },
        len as u64,
        TransferConfig::upload().with_chunk_size(1000),
    )
    .unwrap()
}

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0; len];
    Rng::new(seed).fill(&mut v);
    v
}

#[test]
fn uploads_install_versions_and_a_repeat_recovers_the_same_version() {
    let (mut c, leader) = cluster(1);
    let a = bytes(3500, 1);
    let mut call = upload_call("up-a", "model", a.len());
    let step = upload(&mut c, NOW, &leader, &mut call, &a, 1);
    assert!(matches!(
        step,
        UploadStep::Ended(UploadOutcome::Installed {
            version: 1,
            origin: OutcomeOrigin::Executed,
            ..
        })
    ));
    let b = bytes(10, 2);
    let mut call = upload_call("up-b", "model", b.len());
    assert!(matches!(
        upload(&mut c, NOW, &leader, &mut call, &b, 1),
        UploadStep::Ended(UploadOutcome::Installed { version: 2, .. })
    ));
    // The same identity and bytes again: the recorded version.
    let mut again = upload_call("up-a", "model", a.len());
    assert!(matches!(
        upload(&mut c, NOW, &leader, &mut again, &a, 1),
        UploadStep::Ended(UploadOutcome::Installed {
            version: 1,
            origin: OutcomeOrigin::Recovered,
            ..
        })
    ));
    // The same identity with other bytes: InstallationFailed naming the assigned version.
    let mut other = upload_call("up-a", "model", b.len());
    assert!(matches!(
        upload(&mut c, NOW, &leader, &mut other, &b, 1),
        UploadStep::Ended(UploadOutcome::InstallationFailed {
            assigned_version: Some(1),
            ..
        })
    ));
    assert_eq!(c.resource_versions("tenant", "model"), 2);
    // An undeclared resource admits nothing.
    let mut bad = upload_call("up-c", "undeclared-x", 5);
    assert!(matches!(
        upload(&mut c, NOW, &leader, &mut bad, &[1; 5], 1),
        UploadStep::Ended(UploadOutcome::Refused {
            failure: UploadFailure::ResourceNotDeclared,
            ..
        })
    ));
}

#[test]
fn an_upload_to_a_follower_is_redirected_and_streamed_again_whole() {
    let (mut c, _) = cluster(2);
    let follower = c.endpoints()[1].clone();
    let a = bytes(2500, 3);
    let mut call = upload_call("up-r", "model", a.len());
    let step = upload(&mut c, NOW, &follower, &mut call, &a, 2);
    assert!(matches!(
        step,
        UploadStep::Ended(UploadOutcome::Installed { .. })
    ));
    assert_eq!(call.attempts(), 2);
    assert_eq!(c.received_whole("up-r"), [&a[..]]);
}

#[test]
fn a_backup_archive_downloads_once_verified_then_is_not_retained() {
    let (mut c, leader) = cluster(3);
    let info = backup(&mut c, &leader, "BACKUP DOMAIN tenant", "ref-b1");
    let mut d = BackupDownload::new(
        ExecutionReference::parse("ref-b1").unwrap(),
        info,
        TransferConfig::download(),
    )
    .unwrap();
    let (archive, step) = download(&mut c, NOW, &leader, &mut d, 1);
    assert_eq!(step, DownloadStep::Ended(DownloadEnd::Verified(info)));
    let archive = archive.unwrap();
    assert_eq!(archive, c.archive_bytes("ref-b1").unwrap());
    assert!(!c.archive_retained("ref-b1"));
    // A second download of the same archive: NotRetained, final, not a backup failure.
    let mut d2 = BackupDownload::new(
        ExecutionReference::parse("ref-b1").unwrap(),
        info,
        TransferConfig::download(),
    )
    .unwrap();
    let (none, step) = download(&mut c, NOW, &leader, &mut d2, 3);
    assert!(none.is_none());
    assert!(matches!(
        step,
        DownloadStep::Ended(DownloadEnd::Unavailable {
            failure: BackupDownloadFailure::NotRetained,
            ..
        })
    ));
}

fn restore_call(reference: &str, statement: &str, info: ArchiveInfo) -> RestoreCall {
    RestoreCall::new(
        ExecutionReference::parse(reference).unwrap(),
        statement,
        info,
        TransferConfig::restore().with_chunk_size(700),
    )
    .unwrap()
}

#[test]
fn restores_report_every_step_in_dry_run_and_apply() {
    let (mut c, leader) = cluster(4);
    let info = backup(&mut c, &leader, "BACKUP", "ref-all");
    let archive = c.archive_bytes("ref-all").unwrap();
    let mut dry = restore_call("ref-r1", "RESTORE DRY RUN", info);
    let RestoreStep::Ended(RestoreOutcome::Completed {
        summary: Some(s), ..
    }) = restore(&mut c, NOW, &leader, &mut dry, &archive, 1)
    else {
        panic!()
    };
    assert_eq!(s.mode, RestoreMode::DryRun);
    assert!(s.users.is_some());
    assert_eq!(s.steps[0].kind, RestoreStepKind::Users);
    assert!(s
        .steps
        .iter()
        .all(|x| x.outcome == RestoreStepOutcome::Planned));
    assert_eq!(s.steps.len(), 1 + 3 * s.domains.len());
    let mut apply = restore_call("ref-r2", "RESTORE DOMAIN tenant AS tenant_copy", info);
    let RestoreStep::Ended(RestoreOutcome::Completed {
        summary: Some(s), ..
    }) = restore(&mut c, NOW, &leader, &mut apply, &archive, 1)
    else {
        panic!()
    };
    assert_eq!(s.mode, RestoreMode::Apply);
    assert_eq!(s.domains[0].domain, "tenant_copy");
    let kinds: Vec<_> = s.steps.iter().map(|x| (x.kind, x.outcome)).collect();
    assert_eq!(
        kinds,
        [
            (RestoreStepKind::CreateDomain, RestoreStepOutcome::Applied),
            (
                RestoreStepKind::ImportResources,
                RestoreStepOutcome::Applied
            ),
            (RestoreStepKind::ApplyModels, RestoreStepOutcome::Applied)
        ]
    );
    assert!(c.config().domains.iter().any(|d| d == "tenant_copy"));
    // A failed step leaves the steps before it applied and the later ones not attempted.
    c.set_call_faults(CallFaults {
        step_failed: 1.0,
        ..CallFaults::default()
    });
    let mut failing = restore_call("ref-r3", "RESTORE", info);
    let RestoreStep::Ended(RestoreOutcome::Failed {
        summary: Some(s), ..
    }) = restore(&mut c, NOW, &leader, &mut failing, &archive, 1)
    else {
        panic!()
    };
    let (at, _) = s.failed_step().unwrap();
    assert!(s.steps[..at]
        .iter()
        .all(|x| x.outcome == RestoreStepOutcome::Applied));
    assert!(s.steps[at + 1..]
        .iter()
        .all(|x| x.outcome == RestoreStepOutcome::NotAttempted));
}

/// Seeds with every call fault at 20%: whatever happens, no archive is accepted unverified,
/// and every whole archive the cluster received under an identity is that identity's bytes.
#[test]
fn under_faults_no_partial_archive_and_only_whole_repeats_under_the_identity() {
    let seeds: u64 = std::env::var("NERVIX_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let mut verified = 0;
    let mut installed = 0;
    let mut restored = 0;
    for seed in 0..seeds {
        let (mut c, leader) = cluster(seed);
        let mut rng = Rng::new(seed);
        // Uploads.
        let len = 1 + rng.below(5000) as usize;
        let a = bytes(len, seed);
        let identity = format!("up-{seed}");
        let mut call = upload_call(&identity, "model", len);
        c.set_call_faults(CallFaults::all(0.2));
        let step = upload(&mut c, NOW, &leader, &mut call, &a, 12);
        for whole in c.received_whole(&identity) {
            assert_eq!(whole, &a[..], "seed {seed}: a repeat carried other bytes");
        }
        if let UploadStep::Ended(UploadOutcome::Installed { version, .. }) = step {
            assert_eq!(version, 1, "seed {seed}: one identity, one version");
            installed += 1;
        }
        assert!(c.resource_versions("tenant", "model") <= 1, "seed {seed}");
        // A backup and its download, with faults.
        c.set_call_faults(CallFaults::default());
        let reference = format!("ref-{seed}");
        let info = backup(&mut c, &leader, "BACKUP", &reference);
        c.set_call_faults(CallFaults::all(0.2));
        let mut d = BackupDownload::new(
            ExecutionReference::parse(&reference).unwrap(),
            info,
            TransferConfig::download(),
        )
        .unwrap();
        let (archive, step) = download(&mut c, NOW, &leader, &mut d, 12);
        let truth = c.archive_bytes(&reference).unwrap();
        match (&archive, &step) {
            (Some(got), DownloadStep::Ended(DownloadEnd::Verified(i))) => {
                assert_eq!(got, &truth, "seed {seed}: verified bytes are the archive");
                assert_eq!(*i, info);
                verified += 1;
            }
            (None, _) => assert!(!d.is_verified(), "seed {seed}"),
            other => panic!("seed {seed}: {other:?}"),
        }
        // A restore of the true archive, with faults.
        let rref = format!("restore-{seed}");
        let mut r = restore_call(&rref, "RESTORE DRY RUN", info);
        let step = restore(&mut c, NOW, &leader, &mut r, &truth, 12);
        for whole in c.received_whole(&rref) {
            assert_eq!(
                whole,
                &truth[..],
                "seed {seed}: a restore repeat carried other bytes"
            );
        }
        if matches!(step, RestoreStep::Ended(RestoreOutcome::Completed { .. })) {
            restored += 1;
        }
    }
    // Faults at 20% still let most calls through within their attempts.
    assert!(
        verified > seeds / 2,
        "{verified} of {seeds} downloads verified"
    );
    assert!(
        installed > seeds / 2,
        "{installed} of {seeds} uploads installed"
    );
    assert!(
        restored > seeds / 2,
        "{restored} of {seeds} restores completed"
    );
}
