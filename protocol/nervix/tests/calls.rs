//! The separate calls as machines: resource uploads (U-1 to U-5), backup downloads (A-1 to
//! ) and restores (RS-1 to RS-5), against frames a scripted server builds.

mod support;

use bytes::Bytes;
use nervix_protocol::calls::*;
use nervix_protocol::client::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::encode::encode;
use nervix_protocol::frame::*;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use proptest::prelude::*;
use std::time::Duration;
use support::rig::*;
use support::*;

const T0: Timestamp = Timestamp::ZERO;
const FAR: Timestamp = Timestamp::from_nanos(u64::MAX);

fn archive(len: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; len];
    Rng::new(seed).fill(&mut v);
    v
}

fn info(bytes: &[u8]) -> ArchiveInfo {
    let mut d = ArchiveDigest::new();
    d.update(bytes);
    d.finish()
}

fn spec(identity: &str) -> UploadSpec {
    UploadSpec {
        domain: "tenant".into(),
        resource: "bundle".into(),
        identity: identity.into(),
    }
}

fn upload_part(frame: &Bytes) -> UploadPartT {
    UploadFrame::check(frame.clone())
        .expect("a valid upload frame")
        .unpack()
        .part
}

fn restore_part(frame: &Bytes) -> RestorePartT {
    RestoreFrame::check(frame.clone())
        .expect("a valid restore frame")
        .unpack()
        .part
}

/// Streams `bytes` through an upload attempt already started, in pieces of at most `piece`,
/// returning the chunk frames' payloads.
fn stream_upload(call: &mut UploadCall, bytes: &[u8], piece: usize) -> Vec<Vec<u8>> {
    let mut out = vec![];
    while let Need::Piece { offset, len } = call.need() {
        let at = offset as usize;
        let n = len.min(piece);
        let frame = call.chunk(T0, &bytes[at..at + n]).unwrap();
        match upload_part(&frame) {
            UploadPartT::UploadChunk(c) => out.push(c.bytes),
            other => panic!("{other:?}"),
        }
    }
    out
}

fn stream_restore(call: &mut RestoreCall, bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![];
    while let Need::Piece { offset, len } = call.need() {
        let at = offset as usize;
        let frame = call.chunk(T0, &bytes[at..at + len]).unwrap();
        match restore_part(&frame) {
            RestorePartT::RestoreChunk(c) => out.push(c.bytes),
            other => panic!("{other:?}"),
        }
    }
    out
}

fn upload_reply(request_id: Option<u64>, disposition: UploadDispositionT) -> Bytes {
    encode::<UploadReplyRoot>(&UploadReplyT {
        request_id,
        disposition,
        message: "m".into(),
        diagnostics: vec![],
    })
    .unwrap()
}

fn installed(identity: &str, version: u64) -> UploadDispositionT {
    UploadDispositionT::ResourceInstalled(Box::new(ResourceInstalledT {
        upload_identity: identity.into(),
        version,
        origin: Some(OutcomeOrigin::Executed),
    }))
}

fn upload_failed(failure: UploadFailure, assigned: Option<u64>) -> UploadDispositionT {
    UploadDispositionT::UploadFailed(Box::new(UploadFailedT {
        upload_identity: Some("up-1".into()),
        failure: Some(failure),
        assigned_version: assigned,
    }))
}

fn leader(uri: Option<&str>) -> LeaderRedirectT {
    LeaderRedirectT {
        leader: uri.map(|u| {
            Box::new(LeaderEndpointsT {
                node: "node-2".into(),
                grpc_uri: Some(u.into()),
                web_console_uri: Some(u.into()),
            })
        }),
    }
}

fn new_upload(len: usize) -> (UploadCall, Vec<u8>) {
    let bytes = archive(len, len as u64);
    let call = UploadCall::new(spec("up-1"), len as u64, TransferConfig::upload()).unwrap();
    (call, bytes)
}

/// A started, fully streamed upload awaiting its reply.
fn streamed_upload(len: usize) -> (UploadCall, Vec<u8>) {
    let (mut call, bytes) = new_upload(len);
    call.start(T0, FAR).unwrap();
    stream_upload(&mut call, &bytes, usize::MAX);
    assert_eq!(call.need(), Need::Reply);
    (call, bytes)
}

// ----- U-1 ----------------------------------------------------------------------------------

#[test]
fn u_1_start_then_64k_chunks_summing_to_total_then_the_reply() {
    let len = 3 * UPLOAD_CHUNK + 17;
    let (mut call, bytes) = new_upload(len);
    assert_eq!(call.need(), Need::Start);
    let start = call.start(T0, FAR).unwrap();
    let UploadPartT::UploadStart(s) = upload_part(&start) else {
        panic!()
    };
    assert_ne!(s.request_id, 0);
    assert_eq!(
        (
            s.domain.as_str(),
            s.resource.as_str(),
            s.upload_identity.as_str(),
            s.total_bytes
        ),
        ("tenant", "bundle", "up-1", len as u64)
    );
    let chunks = stream_upload(&mut call, &bytes, usize::MAX);
    let sizes: Vec<usize> = chunks.iter().map(Vec::len).collect();
    assert_eq!(sizes, [UPLOAD_CHUNK, UPLOAD_CHUNK, UPLOAD_CHUNK, 17]);
    assert_eq!(chunks.concat(), bytes);
    // Every frame is written: the driver half-closes and waits for the reply.
    assert_eq!(call.need(), Need::Reply);
    assert!(matches!(
        call.chunk(T0, &[1]),
        Err(CallError::OutOfTurn { .. })
    ));
}

#[test]
fn u_1_an_empty_archive_cannot_be_uploaded() {
    assert_eq!(
        UploadCall::new(spec("up-1"), 0, TransferConfig::upload()).unwrap_err(),
        CallError::EmptyArchive
    );
}

#[test]
fn u_1_pieces_are_never_empty_nor_longer_than_asked() {
    let (mut call, bytes) = new_upload(UPLOAD_CHUNK + 5);
    call.start(T0, FAR).unwrap();
    assert!(matches!(
        call.chunk(T0, &[]),
        Err(CallError::Piece { len: 0, .. })
    ));
    let too_long = vec![0u8; UPLOAD_CHUNK + 1];
    assert!(matches!(
        call.chunk(T0, &too_long),
        Err(CallError::Piece { max, .. }) if max == UPLOAD_CHUNK
    ));
    // A short piece is fine: the next piece starts where it ended.
    call.chunk(T0, &bytes[..10]).unwrap();
    assert_eq!(
        call.need(),
        Need::Piece {
            offset: 10,
            len: UPLOAD_CHUNK - 5
        }
    );
    call.chunk(T0, &bytes[10..UPLOAD_CHUNK]).unwrap();
    // The last piece is at most what is left: a longer one is refused.
    assert_eq!(
        call.need(),
        Need::Piece {
            offset: UPLOAD_CHUNK as u64,
            len: 5
        }
    );
    assert!(matches!(
        call.chunk(T0, &[0u8; 6]),
        Err(CallError::Piece { len: 6, max: 5 })
    ));
}

#[test]
fn u_1_no_chunk_is_sent_before_the_start() {
    let (mut call, bytes) = new_upload(10);
    assert_eq!(
        call.chunk(T0, &bytes).unwrap_err(),
        CallError::OutOfTurn { needs: Need::Start }
    );
}

// ----- U-2 ----------------------------------------------------------------------------------

#[test]
fn u_2_identity_is_1_to_128_letters_digits_dash_underscore_dot() {
    for bad in ["", "a b", "ä", &"x".repeat(129), "a/b"] {
        assert!(matches!(
            UploadCall::new(spec(bad), 1, TransferConfig::upload()),
            Err(CallError::Identity(_))
        ));
    }
    for good in ["a", "A-z_0.9", &"x".repeat(128)] {
        UploadCall::new(spec(good), 1, TransferConfig::upload()).unwrap();
    }
}

#[test]
fn u_2_routed_upload_gets_a_uuid_v7_identity_per_logical_upload() {
    let mut r = Rig::new();
    r.c.select_domain(Some("tenant")).unwrap();
    let Routed::Upload(a) =
        r.c.run(r.now, WALL, "UPLOAD RESOURCE model FROM 'a'")
            .unwrap()
    else {
        panic!()
    };
    let Routed::Upload(b) =
        r.c.run(r.now, WALL, "UPLOAD RESOURCE model FROM 'a'")
            .unwrap()
    else {
        panic!()
    };
    let ra = ExecutionReference::parse(&a.identity).unwrap();
    assert_eq!(ra.uuid_v7_millis(), Some(WALL.0));
    assert_ne!(a.identity, b.identity);
    assert_eq!(
        (a.domain.as_str(), a.resource.as_str()),
        ("tenant", "model")
    );
    // Without a selected domain there is nothing to upload into.
    let mut fresh = Rig::new();
    assert_eq!(
        fresh
            .c
            .run(fresh.now, WALL, "UPLOAD RESOURCE model")
            .unwrap_err(),
        ClientError::NoDomainSelected
    );
}

#[test]
fn u_2_every_attempt_sends_the_same_identity_and_bytes() {
    let (mut call, bytes) = new_upload(2 * UPLOAD_CHUNK + 1);
    let mut seen = vec![];
    for _ in 0..3 {
        let start = call.start(T0, FAR).unwrap();
        let UploadPartT::UploadStart(s) = upload_part(&start) else {
            panic!()
        };
        let chunks = stream_upload(&mut call, &bytes, 1000 + seen.len());
        seen.push((s.upload_identity, s.total_bytes, chunks.concat()));
        assert!(matches!(
            call.on_closed(T0),
            UploadStep::Interrupted {
                uncertain: true,
                ..
            }
        ));
    }
    assert!(seen
        .iter()
        .all(|x| *x == ("up-1".to_string(), bytes.len() as u64, bytes.clone())));
    assert_eq!(call.attempts(), 3);
}

#[test]
fn u_2_changed_bytes_on_a_repeat_withhold_the_last_frame() {
    let (mut call, bytes) = streamed_upload(UPLOAD_CHUNK + 3);
    call.on_closed(T0);
    call.start(T0, FAR).unwrap();
    let mut other = bytes.clone();
    *other.last_mut().unwrap() ^= 1;
    call.chunk(T0, &other[..UPLOAD_CHUNK]).unwrap();
    assert_eq!(
        call.chunk(T0, &other[UPLOAD_CHUNK..]).unwrap_err(),
        CallError::ArchiveChanged
    );
    // The attempt is over; the same identity and the original bytes go again.
    assert_eq!(call.need(), Need::Start);
    call.start(T0, FAR).unwrap();
    assert_eq!(stream_upload(&mut call, &bytes, usize::MAX).concat(), bytes);
}

#[test]
fn u_2_an_expected_digest_withholds_the_first_attempts_last_frame_when_the_bytes_differ() {
    // A journal computed the archive's digest before the first byte went out; the file
    // changed while the first attempt streamed it.
    let bytes = archive(UPLOAD_CHUNK + 3, 9);
    let mut call =
        UploadCall::new(spec("up-1"), bytes.len() as u64, TransferConfig::upload()).unwrap();
    call.expect_digest(info(&bytes).digest).unwrap();
    call.start(T0, FAR).unwrap();
    let mut other = bytes.clone();
    other[0] ^= 1;
    call.chunk(T0, &other[..UPLOAD_CHUNK]).unwrap();
    assert_eq!(
        call.chunk(T0, &other[UPLOAD_CHUNK..]).unwrap_err(),
        CallError::ArchiveChanged
    );
    assert!(!call.is_uncertain(), "no attempt carried a whole archive");
    // The journaled bytes go whole.
    call.start(T0, FAR).unwrap();
    assert_eq!(stream_upload(&mut call, &bytes, usize::MAX).concat(), bytes);
    assert_eq!(call.need(), Need::Reply);
    // A digest other than the one a complete attempt streamed is refused.
    assert_eq!(
        call.expect_digest(info(&other).digest).unwrap_err(),
        CallError::ArchiveChanged
    );
    call.expect_digest(info(&bytes).digest).unwrap();
}

// ----- U-3 ----------------------------------------------------------------------------------

#[test]
fn u_3_a_reply_naming_another_request_id_is_a_violation() {
    for id in [None, Some(0), Some(2)] {
        let (mut call, _) = streamed_upload(10);
        let step = call.on_reply(T0, upload_reply(id, installed("up-1", 4)));
        assert!(
            matches!(
                step,
                UploadStep::Interrupted {
                    cause: Interruption::Violation(CallViolation::RequestId { sent: 1, .. }),
                    uncertain: true
                }
            ),
            "{id:?}: {step:?}"
        );
    }
}

#[test]
fn u_3_installed_naming_another_identity_is_a_violation() {
    let (mut call, _) = streamed_upload(10);
    let step = call.on_reply(T0, upload_reply(Some(1), installed("up-2", 4)));
    assert!(matches!(
        step,
        UploadStep::Interrupted {
            cause: Interruption::Violation(CallViolation::Identity { .. }),
            ..
        }
    ));
    // A frame that is not a reply frame is a violation too, never a panic.
    let (mut call, _) = streamed_upload(10);
    let step = call.on_reply(T0, Bytes::from_static(b"garbage!garbage!"));
    assert!(matches!(
        step,
        UploadStep::Interrupted {
            cause: Interruption::Violation(CallViolation::Frame(_)),
            ..
        }
    ));
}

#[test]
fn u_3_a_repeat_is_answered_only_under_its_own_starts_request_id() {
    let (mut call, bytes) = streamed_upload(10);
    call.on_closed(T0);
    call.start(T0, FAR).unwrap();
    stream_upload(&mut call, &bytes, usize::MAX);
    assert_eq!(call.request_id(), 2);
    // The first attempt's request_id answers nothing now.
    let step = call.on_reply(T0, upload_reply(Some(1), installed("up-1", 4)));
    assert!(
        matches!(
            step,
            UploadStep::Interrupted {
                cause: Interruption::Violation(CallViolation::RequestId {
                    sent: 2,
                    found: Some(1)
                }),
                uncertain: true
            }
        ),
        "{step:?}"
    );
    // The next attempt is answered under its own.
    call.start(T0, FAR).unwrap();
    stream_upload(&mut call, &bytes, usize::MAX);
    let step = call.on_reply(T0, upload_reply(Some(3), installed("up-1", 4)));
    assert!(
        matches!(
            step,
            UploadStep::Ended(UploadOutcome::Installed { version: 4, .. })
        ),
        "{step:?}"
    );
}

// ----- U-4 ----------------------------------------------------------------------------------

#[test]
fn u_4_installed_reports_the_version_and_ends_the_call() {
    let (mut call, _) = streamed_upload(10);
    let step = call.on_reply(T0, upload_reply(Some(1), installed("up-1", 7)));
    assert!(matches!(
        step,
        UploadStep::Ended(UploadOutcome::Installed {
            version: 7,
            origin: OutcomeOrigin::Executed,
            ..
        })
    ));
    assert_eq!(call.need(), Need::Nothing);
    assert_eq!(call.start(T0, FAR).unwrap_err(), CallError::Ended);
}

#[test]
fn u_4_refusals_admitted_nothing_and_the_stream_is_not_sent_again() {
    for f in [
        UploadFailure::InvalidStream,
        UploadFailure::ResourceNotDeclared,
        UploadFailure::SizeMismatch,
        UploadFailure::QuotaExceeded,
    ] {
        let (mut call, _) = streamed_upload(10);
        let step = call.on_reply(T0, upload_reply(Some(1), upload_failed(f, None)));
        assert_eq!(
            step,
            UploadStep::Ended(UploadOutcome::Refused {
                failure: f,
                uncertain: false,
                message: "m".into()
            })
        );
        assert_eq!(call.start(T0, FAR).unwrap_err(), CallError::Ended);
    }
}

#[test]
fn u_4_a_refusal_after_an_attempt_that_carried_the_whole_archive_stays_uncertain() {
    for f in [UploadFailure::SizeMismatch, UploadFailure::QuotaExceeded] {
        // The first attempt carried the whole archive and lost its reply: it may have
        // installed it. The repeat's stream is refused: that says nothing of the first.
        let (mut call, bytes) = streamed_upload(10);
        call.on_closed(T0);
        call.start(T0, FAR).unwrap();
        stream_upload(&mut call, &bytes, usize::MAX);
        let step = call.on_reply(T0, upload_reply(Some(2), upload_failed(f, None)));
        assert_eq!(
            step,
            UploadStep::Ended(UploadOutcome::Refused {
                failure: f,
                uncertain: true,
                message: "m".into()
            })
        );
        // A first attempt cut before its last chunk installed nothing: its repeat's refusal
        // is the outcome.
        let (mut call, bytes) = new_upload(2 * UPLOAD_CHUNK);
        call.start(T0, FAR).unwrap();
        call.chunk(T0, &bytes[..UPLOAD_CHUNK]).unwrap();
        call.on_closed(T0);
        call.start(T0, FAR).unwrap();
        stream_upload(&mut call, &bytes, usize::MAX);
        let step = call.on_reply(T0, upload_reply(Some(2), upload_failed(f, None)));
        assert!(
            matches!(
                step,
                UploadStep::Ended(UploadOutcome::Refused {
                    uncertain: false,
                    ..
                })
            ),
            "{step:?}"
        );
    }
}

#[test]
fn u_4_installation_failed_carries_the_assigned_version_when_there_is_one() {
    for assigned in [None, Some(3)] {
        let (mut call, _) = streamed_upload(10);
        let step = call.on_reply(
            T0,
            upload_reply(
                Some(1),
                upload_failed(UploadFailure::InstallationFailed, assigned),
            ),
        );
        assert_eq!(
            step,
            UploadStep::Ended(UploadOutcome::InstallationFailed {
                assigned_version: assigned,
                message: "m".into()
            })
        );
    }
}

#[test]
fn u_4_an_early_refusal_ends_the_attempt_before_the_last_chunk() {
    let (mut call, bytes) = new_upload(3 * UPLOAD_CHUNK);
    call.start(T0, FAR).unwrap();
    call.chunk(T0, &bytes[..UPLOAD_CHUNK]).unwrap();
    let step = call.on_reply(
        T0,
        upload_reply(
            Some(1),
            upload_failed(UploadFailure::ResourceNotDeclared, None),
        ),
    );
    assert!(matches!(
        step,
        UploadStep::Ended(UploadOutcome::Refused { .. })
    ));
    assert_eq!(call.need(), Need::Nothing);
}

#[test]
fn u_4_a_redirect_streams_the_whole_archive_again_under_the_same_identity() {
    let (mut call, bytes) = streamed_upload(UPLOAD_CHUNK + 1);
    let step = call.on_reply(
        T0,
        upload_reply(
            Some(1),
            UploadDispositionT::LeaderRedirect(Box::new(leader(Some("https://node-2:7443/")))),
        ),
    );
    let UploadStep::Redirect(Some(l)) = step else {
        panic!("{step:?}")
    };
    assert_eq!(l.grpc_uri.unwrap().as_str(), "https://node-2:7443/");
    assert_eq!(call.need(), Need::Start);
    let UploadPartT::UploadStart(s) = upload_part(&call.start(T0, FAR).unwrap()) else {
        panic!()
    };
    assert_eq!((s.upload_identity.as_str(), s.request_id), ("up-1", 2));
    assert_eq!(
        call.need(),
        Need::Piece {
            offset: 0,
            len: UPLOAD_CHUNK
        }
    );
    assert_eq!(stream_upload(&mut call, &bytes, usize::MAX).concat(), bytes);
    // A redirect naming no leader: back off, then the same again.
    let step = call.on_reply(
        T0,
        upload_reply(
            Some(2),
            UploadDispositionT::LeaderRedirect(Box::new(leader(None))),
        ),
    );
    assert_eq!(step, UploadStep::Redirect(None));
}

// ----- U-5 ----------------------------------------------------------------------------------

#[test]
fn u_5_a_transport_failure_after_the_whole_archive_is_uncertain_and_repeated_whole() {
    let (mut call, bytes) = streamed_upload(2 * UPLOAD_CHUNK);
    assert!(!call.is_uncertain());
    let step = call.on_closed(T0);
    assert_eq!(
        step,
        UploadStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: true
        }
    );
    assert!(call.is_uncertain());
    let UploadPartT::UploadStart(s) = upload_part(&call.start(T0, FAR).unwrap()) else {
        panic!()
    };
    assert_eq!(s.upload_identity, "up-1");
    assert_eq!(stream_upload(&mut call, &bytes, usize::MAX).concat(), bytes);
    // Given up, it names the identity to repeat under and stays uncertain.
    assert_eq!(
        call.abandon(),
        UploadOutcome::Abandoned {
            identity: "up-1".into(),
            uncertain: true
        }
    );
}

#[test]
fn u_5_a_cut_before_the_last_chunk_installed_nothing() {
    let (mut call, bytes) = new_upload(2 * UPLOAD_CHUNK);
    call.start(T0, FAR).unwrap();
    call.chunk(T0, &bytes[..UPLOAD_CHUNK]).unwrap();
    assert_eq!(
        call.on_closed(T0),
        UploadStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: false
        }
    );
    assert_eq!(
        call.abandon(),
        UploadOutcome::Abandoned {
            identity: "up-1".into(),
            uncertain: false
        }
    );
}

#[test]
fn u_5_the_attempt_deadline_and_the_reply_wait_end_the_attempt_as_uncertain() {
    let cfg =
        TransferConfig::upload().with_timeouts(Duration::from_secs(5), Duration::from_secs(9));
    let bytes = archive(10, 1);
    // The attempt's own deadline comes first.
    let mut call = UploadCall::new(spec("up-1"), 10, cfg).unwrap();
    let deadline = T0 + Duration::from_secs(3);
    call.start(T0, deadline).unwrap();
    call.chunk(T0, &bytes).unwrap();
    assert_eq!(call.poll_timeout(), Some(deadline));
    assert_eq!(
        call.handle_timeout(deadline - Duration::from_nanos(1)),
        UploadStep::Continue
    );
    assert_eq!(
        call.handle_timeout(deadline),
        UploadStep::Interrupted {
            cause: Interruption::Stalled,
            uncertain: true
        }
    );
    // Without one, the reply wait bounds it.
    call.start(T0, FAR).unwrap();
    call.chunk(T0, &bytes).unwrap();
    assert_eq!(call.poll_timeout(), Some(T0 + Duration::from_secs(9)));
    // And a piece not asked for in time ends a stalled stream.
    let mut call = UploadCall::new(spec("up-1"), 10, cfg).unwrap();
    call.start(T0, FAR).unwrap();
    assert_eq!(call.poll_timeout(), Some(T0 + Duration::from_secs(5)));
    assert_eq!(
        call.handle_timeout(T0 + Duration::from_secs(5)),
        UploadStep::Interrupted {
            cause: Interruption::Stalled,
            uncertain: false
        }
    );
}

// ----- BACKUP on the session ---------------------------------------------

fn summary(info: ArchiveInfo) -> BackupArchiveSummaryT {
    BackupArchiveSummaryT {
        total_bytes: info.total_bytes,
        digest: Box::new(FingerprintT {
            bytes: info.digest.to_vec(),
        }),
        captured_at: 1,
        retained_until: 2,
        resources: Some(BackupResources::Included),
        users: None,
        domains: vec![],
    }
}

fn backup_outcome(
    reference: &str,
    disposition: CommandDispositionT,
    backup: Option<BackupArchiveSummaryT>,
) -> CommandOutcomeT {
    CommandOutcomeT {
        execution_reference: reference.into(),
        origin: Some(OutcomeOrigin::Executed),
        disposition,
        message: String::new(),
        backup: backup.map(Box::new),
        ..Default::default()
    }
}

fn completed() -> CommandDispositionT {
    CommandDispositionT::CommandCompleted(Box::default())
}

/// Runs BACKUP on a rig and answers it with `outcome`, returning the command's result.
fn run_backup(
    outcome: impl FnOnce(&str) -> CommandOutcomeT,
) -> (Rig, CommandResult, CommandRequestT) {
    let mut r = Rig::new();
    let Routed::Command(h) = r.c.run(r.now, WALL, "BACKUP DOMAIN tenant").unwrap() else {
        panic!()
    };
    let sid = r.open();
    let (id, cmd) = r.last_command();
    let o = outcome(&cmd.execution_reference);
    r.feed(sid, reply(id, ReplyBodyT::CommandOutcome(Box::new(o))));
    let result = r.result(h).expect("ended");
    (r, result, cmd)
}

#[test]
fn a_1_the_download_needs_a_completed_outcome_carrying_a_summary() {
    let bytes = archive(100, 9);
    let i = info(&bytes);
    let (_, result, cmd) = run_backup(|rf| backup_outcome(rf, completed(), Some(summary(i))));
    assert_eq!(cmd.query, "BACKUP DOMAIN tenant");
    let CommandResult::Completed(report) = result else {
        panic!("{result:?}")
    };
    let d = BackupDownload::from_report(&report, TransferConfig::download()).unwrap();
    assert_eq!(d.reference().as_str(), cmd.execution_reference);
    assert_eq!(d.expected(), i);
    // Completed without a summary: there is no archive to download.
    let (_, result, _) = run_backup(|rf| backup_outcome(rf, completed(), None));
    let CommandResult::Completed(report) = result else {
        panic!()
    };
    assert_eq!(
        BackupDownload::from_report(&report, TransferConfig::download()).unwrap_err(),
        CallError::NoArchive
    );
    // A failed BACKUP has none either, even if its outcome carried one.
    let (_, result, _) = run_backup(|rf| {
        backup_outcome(
            rf,
            CommandDispositionT::RequestFailed(Box::default()),
            Some(summary(i)),
        )
    });
    let CommandResult::Failed(Failure::Outcome(report)) = result else {
        panic!("{result:?}")
    };
    assert_eq!(
        BackupDownload::from_report(&report, TransferConfig::download()).unwrap_err(),
        CallError::NoArchive
    );
}

#[test]
fn a_1_backup_goes_on_its_own_under_a_uuid_v7_reference() {
    let mut r = Rig::new();
    assert!(r.c.run(r.now, WALL, "BACKUP; SHOW RELAYS").is_err());
    r.c.run(r.now, WALL, "BACKUP").unwrap();
    r.open();
    let (_, cmd) = r.last_command();
    assert_eq!(cmd.query, "BACKUP");
    assert_eq!(
        ExecutionReference::parse(&cmd.execution_reference)
            .unwrap()
            .uuid_v7_millis(),
        Some(WALL.0)
    );
}

#[test]
fn a_7_backup_waits_its_own_bounded_wait_not_the_call_deadline() {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    assert_eq!(config.backup_wait, Duration::from_secs(600));
    config.call_timeout = Duration::from_secs(1);
    config.backup_wait = Duration::from_secs(120);
    let mut r = Rig::with(config);
    let Routed::Command(h) = r.c.run(r.now, WALL, "BACKUP").unwrap() else {
        panic!()
    };
    r.open();
    // Far past the call deadline, still waiting.
    r.advance(Duration::from_secs(119));
    assert!(r.result(h).is_none());
    r.advance(Duration::from_secs(1));
    let Some(CommandResult::Uncertain { command, cause }) = r.result(h) else {
        panic!("{:?}", r.result(h))
    };
    // Ended without a terminal outcome: uncertain under its reference, never cancelled.
    assert_eq!(cause, UncertainCause::Deadline);
    assert_eq!(command.query, "BACKUP");
    // The wait is one millisecond to 24 hours, however the BACKUP is sent.
    for bad in [Duration::ZERO, Duration::from_secs(24 * 3600 + 1)] {
        let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
        config.backup_wait = bad;
        let mut r = Rig::with(config);
        assert_eq!(
            r.c.run(r.now, WALL, "BACKUP").unwrap_err(),
            ClientError::BackupWait(bad)
        );
        assert_eq!(
            r.c.execute(r.now, WALL, "BACKUP").unwrap_err(),
            ClientError::BackupWait(bad)
        );
    }
    // The edges themselves are accepted.
    for good in [Duration::from_millis(1), Duration::from_secs(24 * 3600)] {
        let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
        config.backup_wait = good;
        let mut r = Rig::with(config);
        assert!(r.c.run(r.now, WALL, "BACKUP").is_ok(), "{good:?}");
    }
}

#[test]
fn a_7_redirects_and_reconnects_share_one_deadline_and_reference() {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    config.backup_wait = Duration::from_secs(60);
    let mut r = Rig::with(config);
    let Routed::Command(h) = r.c.run(r.now, WALL, "BACKUP").unwrap() else {
        panic!()
    };
    let sid = r.open();
    let (id, first) = r.last_command();
    r.advance(Duration::from_secs(40));
    let redirect = backup_outcome(
        &first.execution_reference,
        CommandDispositionT::LeaderRedirect(Box::new(leader(Some("https://node-2:7443/")))),
        None,
    );
    r.feed(
        sid,
        reply(id, ReplyBodyT::CommandOutcome(Box::new(redirect))),
    );
    let sid2 = r.open();
    assert_ne!(sid, sid2);
    let (_, again) = r.last_command();
    assert_eq!(again.execution_reference, first.execution_reference);
    // The wait started before the redirect: 20 more seconds, not another 60.
    r.advance(Duration::from_secs(20));
    assert!(matches!(
        r.result(h),
        Some(CommandResult::Uncertain {
            cause: UncertainCause::Deadline,
            ..
        })
    ));
}

#[test]
fn a_7_the_deadline_a_driver_bounds_its_wait_by_is_the_backups_own() {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    config.call_timeout = Duration::from_secs(1);
    config.backup_wait = Duration::from_secs(120);
    let mut r = Rig::with(config);
    r.advance(Duration::from_secs(3));
    let backup = r.c.execute(r.now, WALL, "BACKUP").unwrap();
    let other = r.c.execute(r.now, WALL, "SHOW DOMAINS;").unwrap();
    let own =
        r.c.execute_with(r.now, WALL, "BACKUP", None, Some(Duration::from_secs(9)))
            .unwrap();
    assert_eq!(
        r.c.command_deadline(backup),
        Some(r.now + Duration::from_secs(120))
    );
    assert_eq!(
        r.c.command_deadline(other),
        Some(r.now + Duration::from_secs(1))
    );
    assert_eq!(
        r.c.command_deadline(own),
        Some(r.now + Duration::from_secs(9))
    );
    // It does not move with the attempts: a session lost and another opened keep it.
    let s1 = r.open();
    r.c.handle_closed(r.now, s1);
    r.advance(Duration::from_secs(6));
    r.open();
    assert_eq!(
        r.c.command_deadline(backup),
        Some(Timestamp::ZERO + Duration::from_secs(123))
    );
    // An ended command has none.
    assert!(r.result(other).is_some());
    assert_eq!(r.c.command_deadline(other), None);
}

#[test]
fn a_7_a_domains_quiesce_timeout_is_not_the_commands_wait() {
    // A quiesce timeout shorter than the wait, and one longer: neither is the wait, and
    // each reaches the server unchanged in the statement.
    for q in [
        "BACKUP DOMAIN tenant WITHOUT RESOURCES QUIESCE TIMEOUT 3s",
        "BACKUP DOMAIN tenant WITHOUT RESOURCES QUIESCE TIMEOUT 600s",
    ] {
        let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
        config.backup_wait = Duration::from_secs(60);
        let mut r = Rig::with(config);
        let Routed::Command(h) = r.c.run(r.now, WALL, q).unwrap() else {
            panic!()
        };
        r.open();
        let (_, sent) = r.last_command();
        assert_eq!(sent.query, q, "the quiesce timeout goes to the server");
        r.advance(Duration::from_secs(60) - Duration::from_nanos(1));
        assert!(r.result(h).is_none(), "{q}: waiting the command's wait");
        r.advance(Duration::from_nanos(1));
        assert!(
            matches!(
                r.result(h),
                Some(CommandResult::Uncertain {
                    cause: UncertainCause::Deadline,
                    ..
                })
            ),
            "{q}: {:?}",
            r.result(h)
        );
    }
}

#[test]
fn a_7_a_reconnect_and_a_redirect_share_the_wait_which_ends_uncertain_naming_the_reference() {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    config.backup_wait = Duration::from_secs(60);
    let mut r = Rig::with(config);
    let Routed::Command(h) = r.c.run(r.now, WALL, "BACKUP").unwrap() else {
        panic!()
    };
    let s1 = r.open();
    let (_, first) = r.last_command();
    // The session is lost ten seconds in: the next one repeats the BACKUP unchanged.
    r.advance(Duration::from_secs(10));
    r.c.handle_closed(r.now, s1);
    r.pump();
    let at = r.c.poll_timeout().expect("a reconnect is due");
    r.advance(at.saturating_since(r.now));
    let s2 = r.open();
    assert_ne!(s1, s2);
    let (id, again) = r.last_command();
    assert_eq!(again, first, "same reference, same statement");
    // Then a redirect, twenty seconds later.
    r.advance(Duration::from_secs(30) - r.now.saturating_since(Timestamp::ZERO));
    let redirect = backup_outcome(
        &first.execution_reference,
        CommandDispositionT::LeaderRedirect(Box::new(leader(Some("https://node-2:7443/")))),
        None,
    );
    r.feed(
        s2,
        reply(id, ReplyBodyT::CommandOutcome(Box::new(redirect))),
    );
    let s3 = r.open();
    let (_, third) = r.last_command();
    assert_eq!(third, first);
    // One wait across all three attempts: sixty seconds from the call, not from either.
    let end = Timestamp::ZERO + Duration::from_secs(60);
    r.advance(end.saturating_since(r.now) - Duration::from_nanos(1));
    assert!(r.result(h).is_none(), "still inside the one wait");
    r.advance(Duration::from_nanos(1));
    let Some(CommandResult::Uncertain { command, cause }) = r.result(h) else {
        panic!("{:?}", r.result(h))
    };
    // Uncertain under the reference every attempt carried; nothing says it was cancelled.
    assert_eq!(cause, UncertainCause::Deadline);
    assert_eq!(command.reference.as_str(), first.execution_reference);
    assert_eq!(r.results(h), 1);
    // Nor is anything done that would cancel it: the wait is abandoned, no CancelRequest.
    r.advance(Duration::from_secs(1));
    assert!(
        !r.sent
            .iter()
            .any(|(_, m)| matches!(m.request, ClientRequestT::CancelRequest(_))),
        "a wait's end cancels nothing"
    );
    let _ = s3;
}

#[test]
fn a_8_recovery_repeats_the_backup_with_its_original_statement_and_reference() {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    config.backup_wait = Duration::from_secs(5);
    let mut r = Rig::with(config);
    let q = "BACKUP DOMAIN tenant WITHOUT RESOURCES QUIESCE TIMEOUT 3s";
    let Routed::Command(h) = r.c.run(r.now, WALL, q).unwrap() else {
        panic!()
    };
    let sid = r.open();
    let (_, first) = r.last_command();
    r.c.handle_closed(r.now, sid);
    r.advance(Duration::from_secs(5));
    let Some(CommandResult::Uncertain { command, .. }) = r.result(h) else {
        panic!("{:?}", r.result(h))
    };
    let h2 = r.c.recover(r.now, &command, None).unwrap();
    r.pump();
    r.open();
    let (_, again) = r.last_command();
    assert_eq!(
        (again.query.as_str(), again.execution_reference.as_str()),
        (q, first.execution_reference.as_str())
    );
    assert_ne!(h, h2);
}

#[test]
fn a_8_recovery_keeps_the_original_selected_domain() {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    config.backup_wait = Duration::from_secs(5);
    let mut r = Rig::with(config);
    r.c.select_domain(Some("tenant")).unwrap();
    let q = "BACKUP WITHOUT RESOURCES QUIESCE TIMEOUT 3s";
    let Routed::Command(h) = r.c.run(r.now, WALL, q).unwrap() else {
        panic!()
    };
    let sid = r.open();
    let (_, first) = r.last_command();
    assert_eq!(first.domain.as_deref(), Some("tenant"));
    r.c.handle_closed(r.now, sid);
    r.advance(Duration::from_secs(5));
    let Some(CommandResult::Uncertain { command, .. }) = r.result(h) else {
        panic!("{:?}", r.result(h))
    };
    assert_eq!(command.domain.as_deref(), Some("tenant"));
    // The application has since moved to another domain, or to none: the recovery still
    // names the domain the backup was made in, and repeats everything else unchanged.
    for now_selected in [Some("other"), None] {
        r.c.select_domain(now_selected).unwrap();
        r.c.recover(r.now, &command, None).unwrap();
        r.pump();
        if !r.c.is_ready() {
            assert_ne!(r.open(), sid);
        }
        let (_, again) = r.last_command();
        assert_eq!(again, first, "with {now_selected:?} selected");
        assert_eq!(r.c.selected_domain(), now_selected);
    }
}

#[test]
fn a_8_an_explicit_renewed_wait_runs_from_the_recovery() {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    config.backup_wait = Duration::from_secs(5);
    let mut r = Rig::with(config);
    let Routed::Command(h) = r.c.run(r.now, WALL, "BACKUP").unwrap() else {
        panic!()
    };
    let sid = r.open();
    r.c.handle_closed(r.now, sid);
    r.advance(Duration::from_secs(5));
    let Some(CommandResult::Uncertain { command, .. }) = r.result(h) else {
        panic!("{:?}", r.result(h))
    };
    // Recovered later, with a renewed wait of its own: it runs from the recovery.
    r.advance(Duration::from_secs(30));
    let h2 =
        r.c.recover(r.now, &command, Some(Duration::from_secs(20)))
            .unwrap();
    r.pump();
    r.open();
    r.advance(Duration::from_secs(20) - Duration::from_nanos(1));
    assert!(
        r.result(h2).is_none(),
        "still waiting inside its renewed wait"
    );
    r.advance(Duration::from_nanos(1));
    assert!(matches!(
        r.result(h2),
        Some(CommandResult::Uncertain {
            cause: UncertainCause::Deadline,
            ..
        })
    ));
}

#[test]
fn a_8_a_recovery_met_by_a_conflict_or_an_expiry_ends_under_its_reference_and_no_fresh_one_goes() {
    for (disposition, want) in [
        (
            CommandDispositionT::ExecutionReferenceExpired(Box::default()),
            UncertainCause::ReferenceExpired,
        ),
        (
            CommandDispositionT::ExecutionReferenceConflict(Box::new(
                ExecutionReferenceConflictT {
                    conflict: Some(ExecutionReferenceConflictKind::Content),
                },
            )),
            UncertainCause::Inconclusive,
        ),
    ] {
        let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
        config.backup_wait = Duration::from_secs(5);
        let mut r = Rig::with(config);
        let Routed::Command(h) = r.c.run(r.now, WALL, "BACKUP DOMAIN tenant").unwrap() else {
            panic!()
        };
        let sid = r.open();
        let (_, first) = r.last_command();
        r.c.handle_closed(r.now, sid);
        r.advance(Duration::from_secs(5));
        let Some(CommandResult::Uncertain { command, .. }) = r.result(h) else {
            panic!("{:?}", r.result(h))
        };
        let h2 = r.c.recover(r.now, &command, None).unwrap();
        r.pump();
        let s2 = r.open();
        let (id, again) = r.last_command();
        assert_eq!(again, first, "the recovery repeats the backup unchanged");
        r.feed(
            s2,
            reply(
                id,
                ReplyBodyT::CommandOutcome(Box::new(CommandOutcomeT {
                    execution_reference: again.execution_reference.clone(),
                    origin: Some(OutcomeOrigin::Executed),
                    disposition: disposition.clone(),
                    message: String::new(),
                    ..Default::default()
                })),
            ),
        );
        // Respected: reported as such, naming the original reference...
        match r.result(h2) {
            Some(CommandResult::Uncertain {
                command: kept,
                cause,
            }) => {
                assert_eq!(cause, want, "{disposition:?}");
                assert_eq!(kept.reference.as_str(), first.execution_reference);
            }
            other => panic!("{disposition:?}: {other:?}"),
        }
        // ...and never issued again under a fresh reference.
        let sent = r.sent.len();
        r.advance(Duration::from_secs(60));
        assert!(
            r.sent[sent..]
                .iter()
                .all(|(_, m)| m.request.client_request_type() != ClientRequest::CommandRequest),
            "{disposition:?}"
        );
    }
}

#[test]
fn a_7_a_recovered_backup_without_a_wait_of_its_own_waits_the_backup_wait() {
    // Any other command recovered without a wait keeps the call deadline.
    for (query, wait) in [("BACKUP", 30), ("CREATE RELAY c;", 1)] {
        let wait = Duration::from_secs(wait);
        let mut config = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
        config.call_timeout = Duration::from_secs(1);
        config.backup_wait = Duration::from_secs(30);
        let mut r = Rig::with(config);
        // Executed rather than run: the same wait.
        let h = r.c.execute(r.now, WALL, query).unwrap();
        let sid = r.open();
        r.c.handle_closed(r.now, sid);
        r.advance(wait - Duration::from_nanos(1));
        assert!(
            r.result(h).is_none(),
            "{query}: the first attempt inside its wait"
        );
        r.advance(Duration::from_nanos(1));
        let Some(CommandResult::Uncertain { command, .. }) = r.result(h) else {
            panic!("{query}: {:?}", r.result(h))
        };
        let h2 = r.c.recover(r.now, &command, None).unwrap();
        r.pump();
        r.open();
        r.advance(wait - Duration::from_nanos(1));
        assert!(r.result(h2).is_none(), "{query}: still inside its wait");
        r.advance(Duration::from_nanos(1));
        assert!(
            matches!(
                r.result(h2),
                Some(CommandResult::Uncertain {
                    cause: UncertainCause::Deadline,
                    ..
                })
            ),
            "{query}"
        );
    }
}

// ----- the download -------------------------------------------------

fn dl(part: BackupDownloadPartT) -> Bytes {
    encode::<BackupDownloadMessageRoot>(&BackupDownloadMessageT { part }).unwrap()
}

fn dl_start(total: u64, digest: [u8; 32]) -> Bytes {
    dl(BackupDownloadPartT::BackupArchiveStart(Box::new(
        BackupArchiveStartT {
            total_bytes: total,
            digest: Box::new(FingerprintT {
                bytes: digest.to_vec(),
            }),
        },
    )))
}

fn dl_chunk(bytes: &[u8]) -> Bytes {
    dl(BackupDownloadPartT::BackupArchiveChunk(Box::new(
        BackupArchiveChunkT {
            bytes: bytes.to_vec(),
        },
    )))
}

fn dl_complete() -> Bytes {
    dl(BackupDownloadPartT::BackupArchiveComplete(Box::default()))
}

fn dl_failed(failure: BackupDownloadFailure) -> Bytes {
    dl(BackupDownloadPartT::BackupDownloadFailed(Box::new(
        BackupDownloadFailedT {
            failure: Some(failure),
            message: "gone".into(),
        },
    )))
}

fn download_of(bytes: &[u8]) -> BackupDownload {
    BackupDownload::new(
        ExecutionReference::parse("backup-1").unwrap(),
        info(bytes),
        TransferConfig::download(),
    )
    .unwrap()
}

/// Feeds the whole stream and returns the bytes handed out and the last step.
fn feed_download(d: &mut BackupDownload, frames: &[Bytes]) -> (Vec<u8>, DownloadStep) {
    let mut out = vec![];
    let mut last = DownloadStep::Continue;
    for f in frames {
        last = d.on_frame(T0, f.clone());
        match &last {
            DownloadStep::Bytes(b) => out.extend_from_slice(b),
            DownloadStep::Interrupted { .. } | DownloadStep::Ended(_) => break,
            _ => {}
        }
    }
    (out, last)
}

fn good_stream(bytes: &[u8], piece: usize) -> Vec<Bytes> {
    let i = info(bytes);
    let mut v = vec![dl_start(i.total_bytes, i.digest)];
    v.extend(bytes.chunks(piece).map(dl_chunk));
    v.push(dl_complete());
    v
}

#[test]
fn a_2_one_request_naming_the_backup_reference() {
    let bytes = archive(10, 1);
    let mut d = download_of(&bytes);
    assert_eq!(d.need(), Need::Start);
    let req = d.start(T0).unwrap();
    let q = BackupDownloadRequestFrame::check(req).unwrap().unpack();
    assert_eq!(q.execution_reference, "backup-1");
    assert_eq!(d.need(), Need::Frame);
    // One request per call: no second request while the first is out.
    assert!(matches!(d.start(T0), Err(CallError::OutOfTurn { .. })));
}

#[test]
fn a_2_a_verified_archive_arrives_as_start_chunks_complete() {
    let bytes = archive(1000, 2);
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let frames = good_stream(&bytes, 300);
    assert_eq!(d.on_frame(T0, frames[0].clone()), DownloadStep::Started);
    let (out, last) = feed_download(&mut d, &frames[1..]);
    assert_eq!(out, bytes);
    assert_eq!(
        last,
        DownloadStep::Ended(DownloadEnd::Verified(info(&bytes)))
    );
    assert!(d.is_verified());
    assert_eq!(d.need(), Need::Nothing);
}

#[test]
fn a_2_any_other_order_is_a_violation() {
    let bytes = archive(10, 3);
    let i = info(&bytes);
    let orders: Vec<Vec<Bytes>> = vec![
        vec![dl_chunk(&bytes)],
        vec![dl_complete()],
        vec![dl_start(10, i.digest), dl_start(10, i.digest)],
        vec![
            dl_start(10, i.digest),
            dl(BackupDownloadPartT::LeaderRedirect(Box::new(leader(None)))),
        ],
    ];
    for frames in orders {
        let mut d = download_of(&bytes);
        d.start(T0).unwrap();
        let (_, last) = feed_download(&mut d, &frames);
        assert!(
            matches!(
                last,
                DownloadStep::Interrupted {
                    cause: Interruption::Violation(CallViolation::Order { .. }),
                    retained: false
                }
            ),
            "{last:?}"
        );
        assert!(!d.is_verified());
        assert_eq!(d.need(), Need::Start);
    }
}

#[test]
fn a_3_the_start_must_announce_the_summary_size_and_digest() {
    let bytes = archive(10, 4);
    let i = info(&bytes);
    let mut other = i.digest;
    other[31] ^= 1;
    for start in [
        dl_start(11, i.digest),
        dl_start(9, i.digest),
        dl_start(10, other),
    ] {
        let mut d = download_of(&bytes);
        d.start(T0).unwrap();
        assert!(matches!(
            d.on_frame(T0, start),
            DownloadStep::Interrupted {
                cause: Interruption::Violation(CallViolation::NotTheSummary { .. }),
                ..
            }
        ));
    }
}

#[test]
fn a_3_an_archive_growing_past_its_size_is_refused_at_once() {
    let bytes = archive(10, 5);
    let i = info(&bytes);
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let frames = [
        dl_start(10, i.digest),
        dl_chunk(&bytes[..6]),
        dl_chunk(&[0; 5]),
    ];
    let (out, last) = feed_download(&mut d, &frames);
    // The overgrown chunk is never handed out.
    assert_eq!(out, &bytes[..6]);
    assert!(matches!(
        last,
        DownloadStep::Interrupted {
            cause: Interruption::Violation(CallViolation::Overgrown {
                received: 11,
                total: 10
            }),
            ..
        }
    ));
}

#[test]
fn a_3_accepted_only_after_complete_with_exact_size_and_digest() {
    let bytes = archive(10, 6);
    let i = info(&bytes);
    // Short.
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let (_, last) = feed_download(
        &mut d,
        &[dl_start(10, i.digest), dl_chunk(&bytes[..9]), dl_complete()],
    );
    assert!(matches!(
        last,
        DownloadStep::Interrupted {
            cause: Interruption::Violation(CallViolation::NotVerified {
                received: 9,
                total: 10
            }),
            ..
        }
    ));
    // Same size, one byte changed.
    let mut bad = bytes.clone();
    bad[4] ^= 0x80;
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let (_, last) = feed_download(
        &mut d,
        &[dl_start(10, i.digest), dl_chunk(&bad), dl_complete()],
    );
    assert!(matches!(
        last,
        DownloadStep::Interrupted {
            cause: Interruption::Violation(CallViolation::NotVerified { .. }),
            ..
        }
    ));
    // Every byte, but no Complete: never verified.
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let (_, last) = feed_download(&mut d, &[dl_start(10, i.digest), dl_chunk(&bytes)]);
    assert!(matches!(last, DownloadStep::Bytes(_)));
    assert!(!d.is_verified());
    assert!(matches!(d.on_closed(T0), DownloadStep::Interrupted { .. }));
    assert!(!d.is_verified());
}

#[test]
fn a_5_expired_not_owner_not_retained_invalid_are_final_and_not_a_backup_failure() {
    for f in [
        BackupDownloadFailure::Expired,
        BackupDownloadFailure::NotOwner,
        BackupDownloadFailure::NotRetained,
        BackupDownloadFailure::InvalidRequest,
    ] {
        let bytes = archive(10, 7);
        // As the whole answer.
        let mut d = download_of(&bytes);
        d.start(T0).unwrap();
        let (_, last) = feed_download(&mut d, &[dl_failed(f)]);
        assert_eq!(
            last,
            DownloadStep::Ended(DownloadEnd::Unavailable {
                failure: f,
                message: "gone".into()
            })
        );
        assert_eq!(d.need(), Need::Nothing);
        assert_eq!(d.start(T0).unwrap_err(), CallError::Ended);
    }
}

#[test]
fn a_2_a_failure_after_the_start_is_a_violation_and_the_archive_may_be_downloaded_again() {
    let bytes = archive(10, 7);
    let i = info(&bytes);
    for f in [
        BackupDownloadFailure::Expired,
        BackupDownloadFailure::NotOwner,
        BackupDownloadFailure::NotRetained,
        BackupDownloadFailure::InvalidRequest,
        BackupDownloadFailure::ReadFailed,
    ] {
        // Right after the start, and after some of the archive's bytes.
        for frames in [
            vec![dl_start(10, i.digest), dl_failed(f)],
            vec![dl_start(10, i.digest), dl_chunk(&bytes[..4]), dl_failed(f)],
        ] {
            let mut d = download_of(&bytes);
            d.start(T0).unwrap();
            let (_, last) = feed_download(&mut d, &frames);
            assert_eq!(
                last,
                DownloadStep::Interrupted {
                    cause: Interruption::Violation(CallViolation::Order {
                        found: "BackupDownloadFailed",
                        expected: "BackupArchiveChunk or BackupArchiveComplete",
                    }),
                    retained: false,
                },
                "{f:?} after {} frame(s)",
                frames.len() - 1
            );
            assert!(!d.is_verified());
            assert_eq!(d.received(), 0, "the attempt's bytes are discarded");
            // the attempt ended before BackupArchiveComplete; the archive may be
            // downloaded again from its first byte.
            assert_eq!(d.need(), Need::Start);
            d.start(T0).unwrap();
            let (out, last) = feed_download(&mut d, &good_stream(&bytes, 3));
            assert_eq!(out, bytes);
            assert_eq!(last, DownloadStep::Ended(DownloadEnd::Verified(i)));
            assert_eq!(d.attempts(), 2);
        }
    }
}

#[test]
fn a_5_read_failed_leaves_the_archive_retained_for_another_download() {
    let bytes = archive(10, 8);
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let (_, last) = feed_download(&mut d, &[dl_failed(BackupDownloadFailure::ReadFailed)]);
    assert!(matches!(
        last,
        DownloadStep::Interrupted { retained: true, .. }
    ));
    d.start(T0).unwrap();
    let (out, last) = feed_download(&mut d, &good_stream(&bytes, 4));
    assert_eq!(out, bytes);
    assert!(matches!(
        last,
        DownloadStep::Ended(DownloadEnd::Verified(_))
    ));
}

#[test]
fn a_5_a_redirect_downloads_again_from_the_leader() {
    let bytes = archive(10, 9);
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let step = d.on_frame(
        T0,
        dl(BackupDownloadPartT::LeaderRedirect(Box::new(leader(Some(
            "https://node-3:7443/",
        ))))),
    );
    let DownloadStep::Redirect(Some(l)) = step else {
        panic!("{step:?}")
    };
    assert_eq!(l.web_console_uri.unwrap().as_str(), "https://node-3:7443/");
    assert_eq!(d.need(), Need::Start);
    d.start(T0).unwrap();
    assert_eq!(d.attempts(), 2);
}

#[test]
fn a_6_a_cut_download_starts_again_from_the_first_byte() {
    let bytes = archive(1000, 10);
    let mut d = download_of(&bytes);
    d.start(T0).unwrap();
    let frames = good_stream(&bytes, 100);
    feed_download(&mut d, &frames[..5]);
    assert_eq!(d.received(), 400);
    assert_eq!(
        d.on_closed(T0),
        DownloadStep::Interrupted {
            cause: Interruption::Transport,
            retained: false
        }
    );
    assert_eq!(d.received(), 0);
    d.start(T0).unwrap();
    // The second attempt's bytes alone make the archive: nothing of the first is kept.
    let (out, last) = feed_download(&mut d, &frames);
    assert_eq!(out, bytes);
    assert!(matches!(
        last,
        DownloadStep::Ended(DownloadEnd::Verified(_))
    ));
}

#[test]
fn a_6_each_frame_has_its_own_wait_and_no_overall_deadline() {
    let bytes = archive(100, 11);
    let cfg =
        TransferConfig::download().with_timeouts(Duration::from_secs(2), Duration::from_secs(7));
    let mut d =
        BackupDownload::new(ExecutionReference::parse("b").unwrap(), info(&bytes), cfg).unwrap();
    d.start(T0).unwrap();
    // The first frame: the reply wait.
    assert_eq!(d.poll_timeout(), Some(T0 + Duration::from_secs(7)));
    let frames = good_stream(&bytes, 1);
    let mut now = T0;
    // A hundred frames a second apart: far longer in total than any one wait.
    for f in &frames {
        now = now + Duration::from_secs(1);
        assert_eq!(d.handle_timeout(now), DownloadStep::Continue);
        d.on_frame(now, f.clone());
        if !d.is_verified() {
            assert_eq!(d.poll_timeout(), Some(now + Duration::from_secs(2)));
        }
    }
    assert!(d.is_verified());
    // A stall ends the attempt.
    let mut d =
        BackupDownload::new(ExecutionReference::parse("b").unwrap(), info(&bytes), cfg).unwrap();
    d.start(T0).unwrap();
    d.on_frame(T0, frames[0].clone());
    assert_eq!(
        d.handle_timeout(T0 + Duration::from_secs(2)),
        DownloadStep::Interrupted {
            cause: Interruption::Stalled,
            retained: false
        }
    );
}

// ----- RS-1 to RS-5 -------------------------------------------------------------------------

fn restore_reply(request_id: Option<u64>, disposition: RestoreDispositionT) -> Bytes {
    encode::<RestoreReplyRoot>(&RestoreReplyT {
        request_id,
        disposition,
    })
    .unwrap()
}

fn restore_outcome(reference: &str, disposition: CommandDispositionT) -> RestoreDispositionT {
    RestoreDispositionT::CommandOutcome(Box::new(CommandOutcomeT {
        execution_reference: reference.into(),
        origin: Some(OutcomeOrigin::Executed),
        disposition,
        message: "restored".into(),
        restore: Some(Box::new(report(
            RestoreMode::Apply,
            &[RestoreStepOutcome::Applied; 4],
        ))),
        ..Default::default()
    }))
}

fn report(mode: RestoreMode, outcomes: &[RestoreStepOutcome; 4]) -> RestoreReportT {
    let kinds = [
        RestoreStepKind::Users,
        RestoreStepKind::CreateDomain,
        RestoreStepKind::ImportResources,
        RestoreStepKind::ApplyModels,
    ];
    RestoreReportT {
        mode: Some(mode),
        total_bytes: 10,
        digest: Box::new(FingerprintT { bytes: vec![7; 32] }),
        captured_at: -5,
        users: Some(Box::new(RestoredUsersT {
            created: 1,
            skipped: 2,
            replaced: 3,
        })),
        domains: vec![RestoredDomainT {
            source: "tenant".into(),
            domain: "tenant2".into(),
            resource_versions: 4,
            models: 5,
            planned_models: None,
        }],
        steps: kinds
            .iter()
            .zip(outcomes)
            .map(|(k, o)| RestoreStepReportT {
                kind: Some(*k),
                domain: (*k != RestoreStepKind::Users).then(|| "tenant2".to_string()),
                outcome: Some(*o),
            })
            .collect(),
    }
}

fn upload_failure(f: RestoreUploadFailure) -> RestoreDispositionT {
    RestoreDispositionT::RestoreUploadFailed(Box::new(RestoreUploadFailedT {
        failure: Some(f),
        message: "no".into(),
    }))
}

const REF: &str = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

fn new_restore(len: usize) -> (RestoreCall, Vec<u8>) {
    let bytes = archive(len, 100 + len as u64);
    let call = RestoreCall::new(
        ExecutionReference::parse(REF).unwrap(),
        "  RESTORE DOMAIN tenant AS tenant2;  ",
        info(&bytes),
        TransferConfig::restore(),
    )
    .unwrap();
    (call, bytes)
}

fn streamed_restore(len: usize) -> (RestoreCall, Vec<u8>) {
    let (mut call, bytes) = new_restore(len);
    call.start(T0).unwrap();
    stream_restore(&mut call, &bytes);
    (call, bytes)
}

#[test]
fn rs_1_start_carries_reference_canonical_statement_exact_size_and_digest() {
    let (mut call, bytes) = new_restore(2 * RESTORE_CHUNK + 1);
    let RestorePartT::RestoreStart(s) = restore_part(&call.start(T0).unwrap()) else {
        panic!()
    };
    assert_ne!(s.request_id, 0);
    assert_eq!(s.execution_reference, REF);
    assert_eq!(s.statement, "RESTORE DOMAIN tenant AS tenant2");
    assert_eq!(s.total_bytes, bytes.len() as u64);
    assert_eq!(s.digest.bytes, info(&bytes).digest);
    let chunks = stream_restore(&mut call, &bytes);
    let sizes: Vec<usize> = chunks.iter().map(Vec::len).collect();
    assert_eq!(sizes, [RESTORE_CHUNK, RESTORE_CHUNK, 1]);
    assert_eq!(chunks.concat(), bytes);
    assert_eq!(call.need(), Need::Reply);
}

#[test]
fn rs_1_restore_is_never_a_command_and_never_inside_a_transaction() {
    let bytes = archive(4, 1);
    for bad in ["SHOW RELAYS", "RESTORE DOMAIN a; RESTORE DOMAIN b", ""] {
        assert_eq!(
            RestoreCall::new(
                ExecutionReference::parse(REF).unwrap(),
                bad,
                info(&bytes),
                TransferConfig::restore()
            )
            .unwrap_err(),
            CallError::NotARestore
        );
    }
    assert_eq!(
        RestoreCall::new(
            ExecutionReference::parse(REF).unwrap(),
            "RESTORE DOMAIN a",
            ArchiveInfo {
                total_bytes: 0,
                digest: [0; 32]
            },
            TransferConfig::restore()
        )
        .unwrap_err(),
        CallError::EmptyArchive
    );
    let mut r = Rig::new();
    assert!(r.c.execute(r.now, WALL, "RESTORE DOMAIN a").is_err());
    r.c.select_domain(Some("tenant")).unwrap();
    r.exec("BEGIN");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    let begin = CommandOutcomeT {
        execution_reference: cmd.execution_reference.clone(),
        origin: Some(OutcomeOrigin::Executed),
        disposition: completed(),
        message: String::new(),
        transaction: Some(Box::new(TransactionStatusT {
            transaction_id: "tx-1".into(),
            domain: "tenant".into(),
            state: TransactionStateT::TransactionOpen(Box::default()),
            accepted_operations: 0,
            applied_operations: 0,
        })),
        ..Default::default()
    };
    r.feed(sid, reply(id, ReplyBodyT::CommandOutcome(Box::new(begin))));
    assert!(r.c.binding().is_holding());
    assert_eq!(
        r.c.run(r.now, WALL, "RESTORE DOMAIN a").unwrap_err(),
        ClientError::InTransaction
    );
}

#[test]
fn rs_2_routed_restore_gets_one_uuid_v7_reference_per_logical_restore() {
    let mut r = Rig::new();
    let Routed::Restore {
        reference: a,
        statement,
    } = r.c.run(r.now, WALL, "RESTORE DOMAIN x;").unwrap()
    else {
        panic!()
    };
    let Routed::Restore { reference: b, .. } = r.c.run(r.now, WALL, "RESTORE DOMAIN x").unwrap()
    else {
        panic!()
    };
    assert_eq!(a.uuid_v7_millis(), Some(WALL.0));
    assert_ne!(a, b);
    assert_eq!(statement, "RESTORE DOMAIN x");
}

#[test]
fn rs_2_every_attempt_sends_the_same_reference_statement_and_bytes() {
    let (mut call, bytes) = new_restore(RESTORE_CHUNK + 9);
    let mut seen = vec![];
    for _ in 0..3 {
        let RestorePartT::RestoreStart(s) = restore_part(&call.start(T0).unwrap()) else {
            panic!()
        };
        let chunks = stream_restore(&mut call, &bytes);
        seen.push((
            s.execution_reference,
            s.statement,
            s.digest.bytes,
            chunks.concat(),
        ));
        call.on_closed(T0);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(seen[0].3, bytes);
}

#[test]
fn rs_2_bytes_that_do_not_hash_to_the_declared_digest_never_complete_a_stream() {
    let (mut call, bytes) = new_restore(RESTORE_CHUNK + 2);
    call.start(T0).unwrap();
    let mut other = bytes.clone();
    other[0] ^= 1;
    call.chunk(T0, &other[..RESTORE_CHUNK]).unwrap();
    assert_eq!(
        call.chunk(T0, &other[RESTORE_CHUNK..]).unwrap_err(),
        CallError::ArchiveChanged
    );
    assert_eq!(call.need(), Need::Start);
    assert!(!call.is_uncertain());
}

#[test]
fn rs_3_a_reply_with_another_request_id_is_a_violation_and_an_absent_one_is_not() {
    let (mut call, _) = streamed_restore(10);
    let step = call.on_reply(
        T0,
        restore_reply(Some(9), restore_outcome(REF, completed())),
    );
    assert!(matches!(
        step,
        RestoreStep::Interrupted {
            cause: Interruption::Violation(CallViolation::RequestId {
                sent: 1,
                found: Some(9)
            }),
            uncertain: true
        }
    ));
    let (mut call, _) = streamed_restore(10);
    let step = call.on_reply(
        T0,
        restore_reply(None, upload_failure(RestoreUploadFailure::InvalidStream)),
    );
    assert!(matches!(
        step,
        RestoreStep::Ended(RestoreOutcome::Refused { .. })
    ));
}

#[test]
fn rs_3_a_repeat_is_answered_only_under_its_own_starts_request_id() {
    let (mut call, bytes) = streamed_restore(10);
    call.on_closed(T0);
    call.start(T0).unwrap();
    stream_restore(&mut call, &bytes);
    // The first attempt's request_id answers nothing now.
    let step = call.on_reply(
        T0,
        restore_reply(Some(1), restore_outcome(REF, completed())),
    );
    assert!(
        matches!(
            step,
            RestoreStep::Interrupted {
                cause: Interruption::Violation(CallViolation::RequestId {
                    sent: 2,
                    found: Some(1)
                }),
                uncertain: true
            }
        ),
        "{step:?}"
    );
    call.start(T0).unwrap();
    stream_restore(&mut call, &bytes);
    let step = call.on_reply(
        T0,
        restore_reply(Some(3), restore_outcome(REF, completed())),
    );
    assert!(
        matches!(step, RestoreStep::Ended(RestoreOutcome::Completed { .. })),
        "{step:?}"
    );
}

#[test]
fn rs_3_an_outcome_naming_another_reference_is_a_violation() {
    let (mut call, _) = streamed_restore(10);
    let step = call.on_reply(
        T0,
        restore_reply(Some(1), restore_outcome("someone-else", completed())),
    );
    assert!(matches!(
        step,
        RestoreStep::Interrupted {
            cause: Interruption::Violation(CallViolation::Identity { .. }),
            ..
        }
    ));
}

#[test]
fn rs_4_stream_failures_changed_nothing_and_say_whether_to_send_again() {
    for (f, may_repeat) in [
        (RestoreUploadFailure::InvalidStream, false),
        (RestoreUploadFailure::InvalidStatement, false),
        (RestoreUploadFailure::SizeMismatch, false),
        (RestoreUploadFailure::DigestMismatch, false),
        (RestoreUploadFailure::QuotaExceeded, true),
        (RestoreUploadFailure::StagingFailed, true),
    ] {
        let (mut call, _) = streamed_restore(10);
        assert_eq!(
            call.on_reply(T0, restore_reply(Some(1), upload_failure(f))),
            RestoreStep::Ended(RestoreOutcome::Refused {
                failure: f,
                may_repeat,
                uncertain: false,
                message: "no".into()
            })
        );
    }
}

#[test]
fn rs_4_a_stream_refusal_after_an_attempt_that_may_have_run_stays_uncertain() {
    for f in [
        RestoreUploadFailure::QuotaExceeded,
        RestoreUploadFailure::DigestMismatch,
    ] {
        // The whole archive went out and the reply was lost; or the outcome was unknown.
        for outcome_unknown in [false, true] {
            let (mut call, bytes) = streamed_restore(10);
            if outcome_unknown {
                let step = call.on_reply(
                    T0,
                    restore_reply(
                        Some(1),
                        restore_outcome(
                            REF,
                            CommandDispositionT::OutcomeUnknown(Box::new(OutcomeUnknownT {
                                cause: Some(UnknownOutcomeCause::StillApplying),
                            })),
                        ),
                    ),
                );
                assert_eq!(step, RestoreStep::OutcomeUnknown);
            } else {
                call.on_closed(T0);
            }
            call.start(T0).unwrap();
            stream_restore(&mut call, &bytes);
            let step = call.on_reply(T0, restore_reply(Some(2), upload_failure(f)));
            assert!(
                matches!(
                    step,
                    RestoreStep::Ended(RestoreOutcome::Refused {
                        uncertain: true,
                        ..
                    })
                ),
                "{f:?} {outcome_unknown}: {step:?}"
            );
        }
    }
}

#[test]
fn rs_4_completed_decodes_the_report_its_domains_users_and_steps() {
    let (mut call, _) = streamed_restore(10);
    let step = call.on_reply(
        T0,
        restore_reply(Some(1), restore_outcome(REF, completed())),
    );
    let RestoreStep::Ended(RestoreOutcome::Completed {
        summary: Some(s),
        origin: OutcomeOrigin::Executed,
        message,
    }) = step
    else {
        panic!("{step:?}")
    };
    assert_eq!(message, "restored");
    assert_eq!(s.mode, RestoreMode::Apply);
    assert_eq!(s.archive.total_bytes, 10);
    assert_eq!(s.captured_at, -5);
    assert_eq!(
        s.users,
        Some(RestoredUsersInfo {
            created: 1,
            skipped: 2,
            replaced: 3
        })
    );
    assert_eq!(
        s.domains,
        [RestoredDomainInfo {
            source: "tenant".into(),
            domain: "tenant2".into(),
            resource_versions: 4,
            models: 5,
            planned_models: false
        }]
    );
    let kinds: Vec<_> = s
        .steps
        .iter()
        .map(|x| (x.kind, x.domain.is_some()))
        .collect();
    assert_eq!(
        kinds,
        [
            (RestoreStepKind::Users, false),
            (RestoreStepKind::CreateDomain, true),
            (RestoreStepKind::ImportResources, true),
            (RestoreStepKind::ApplyModels, true)
        ]
    );
    assert_eq!(s.failed_step(), None);
    assert_eq!(call.need(), Need::Nothing);
}

#[test]
fn rs_4_a_failed_step_leaves_the_steps_before_it_applied() {
    let (mut call, _) = streamed_restore(10);
    let mut d = restore_outcome(REF, CommandDispositionT::RequestFailed(Box::default()));
    let RestoreDispositionT::CommandOutcome(o) = &mut d else {
        panic!()
    };
    let (applied, failed) = (RestoreStepOutcome::Applied, RestoreStepOutcome::Failed);
    let not_attempted = RestoreStepOutcome::NotAttempted;
    o.restore = Some(Box::new(report(
        RestoreMode::Apply,
        &[applied, applied, failed, not_attempted],
    )));
    let step = call.on_reply(T0, restore_reply(Some(1), d));
    let RestoreStep::Ended(RestoreOutcome::Failed {
        summary: Some(s), ..
    }) = step
    else {
        panic!("{step:?}")
    };
    let (at, failed) = s.failed_step().unwrap();
    assert_eq!((at, failed.kind), (2, RestoreStepKind::ImportResources));
    assert!(s.steps[..at].iter().all(|x| x.outcome == applied));
    assert_eq!(s.steps[3].outcome, not_attempted);
}

#[test]
fn rs_4_a_dry_run_reports_planned_steps() {
    let (mut call, _) = streamed_restore(10);
    let mut d = restore_outcome(REF, completed());
    let RestoreDispositionT::CommandOutcome(o) = &mut d else {
        panic!()
    };
    let rep = report(RestoreMode::DryRun, &[RestoreStepOutcome::Planned; 4]);
    o.restore = Some(Box::new(rep));
    let RestoreStep::Ended(RestoreOutcome::Completed {
        summary: Some(s), ..
    }) = call.on_reply(T0, restore_reply(Some(1), d))
    else {
        panic!()
    };
    assert_eq!(s.mode, RestoreMode::DryRun);
    assert_eq!(s.domains[0].domain, "tenant2");
    assert!(s
        .steps
        .iter()
        .all(|x| x.outcome == RestoreStepOutcome::Planned));
}

#[test]
fn rs_4_redirect_and_outcome_unknown_stream_again_under_the_same_reference() {
    let (mut call, bytes) = streamed_restore(10);
    let step = call.on_reply(
        T0,
        restore_reply(
            Some(1),
            restore_outcome(
                REF,
                CommandDispositionT::LeaderRedirect(Box::new(leader(Some("https://n2:1/")))),
            ),
        ),
    );
    assert!(matches!(step, RestoreStep::Redirect(Some(_))));
    // A redirect means not admitted: nothing is uncertain yet.
    assert!(!call.is_uncertain());
    let RestorePartT::RestoreStart(s) = restore_part(&call.start(T0).unwrap()) else {
        panic!()
    };
    assert_eq!((s.execution_reference.as_str(), s.request_id), (REF, 2));
    stream_restore(&mut call, &bytes);
    let step = call.on_reply(
        T0,
        restore_reply(
            Some(2),
            restore_outcome(
                REF,
                CommandDispositionT::OutcomeUnknown(Box::new(OutcomeUnknownT {
                    cause: Some(UnknownOutcomeCause::StillApplying),
                })),
            ),
        ),
    );
    assert_eq!(step, RestoreStep::OutcomeUnknown);
    assert!(call.is_uncertain());
    assert_eq!(call.need(), Need::Start);
    // A conflict after that says nothing of the earlier attempt.
    call.start(T0).unwrap();
    stream_restore(&mut call, &bytes);
    let step = call.on_reply(
        T0,
        restore_reply(
            Some(3),
            restore_outcome(
                REF,
                CommandDispositionT::ExecutionReferenceConflict(Box::new(
                    ExecutionReferenceConflictT {
                        conflict: Some(ExecutionReferenceConflictKind::Content),
                    },
                )),
            ),
        ),
    );
    assert!(matches!(
        step,
        RestoreStep::Ended(RestoreOutcome::ReferenceConflict {
            uncertain: true,
            ..
        })
    ));
}

#[test]
fn rs_4_transaction_dispositions_are_violations_for_a_restore() {
    let (mut call, _) = streamed_restore(10);
    let step = call.on_reply(
        T0,
        restore_reply(
            Some(1),
            restore_outcome(
                REF,
                CommandDispositionT::TransactionDetached(Box::default()),
            ),
        ),
    );
    assert!(matches!(
        step,
        RestoreStep::Interrupted {
            cause: Interruption::Violation(CallViolation::Disposition(_)),
            ..
        }
    ));
}

#[test]
fn rs_5_a_transport_failure_is_uncertain_and_the_whole_archive_goes_again() {
    let (mut call, bytes) = streamed_restore(RESTORE_CHUNK + 1);
    assert_eq!(
        call.on_closed(T0),
        RestoreStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: true
        }
    );
    let RestorePartT::RestoreStart(s) = restore_part(&call.start(T0).unwrap()) else {
        panic!()
    };
    assert_eq!(s.execution_reference, REF);
    assert_eq!(
        call.need(),
        Need::Piece {
            offset: 0,
            len: RESTORE_CHUNK
        }
    );
    assert_eq!(stream_restore(&mut call, &bytes).concat(), bytes);
    assert_eq!(
        call.abandon(),
        RestoreOutcome::Abandoned {
            reference: ExecutionReference::parse(REF).unwrap(),
            uncertain: true
        }
    );
}

#[test]
fn rs_5_each_frame_and_the_reply_have_their_own_wait() {
    let cfg =
        TransferConfig::restore().with_timeouts(Duration::from_secs(2), Duration::from_secs(6));
    let bytes = archive(30, 1);
    let mut call = RestoreCall::new(
        ExecutionReference::parse(REF).unwrap(),
        "RESTORE DOMAIN a",
        info(&bytes),
        cfg.with_chunk_size(10),
    )
    .unwrap();
    call.start(T0).unwrap();
    let mut now = T0;
    for i in 0..3 {
        assert_eq!(call.poll_timeout(), Some(now + Duration::from_secs(2)));
        now = now + Duration::from_secs(1);
        assert_eq!(call.handle_timeout(now), RestoreStep::Continue);
        call.chunk(now, &bytes[i * 10..i * 10 + 10]).unwrap();
    }
    assert_eq!(call.poll_timeout(), Some(now + Duration::from_secs(6)));
    assert_eq!(
        call.handle_timeout(now + Duration::from_secs(6)),
        RestoreStep::Interrupted {
            cause: Interruption::Stalled,
            uncertain: true
        }
    );
}

// ----- chunking and digest properties ---------------------------------------------------

/// Pieces of an archive of `total` bytes by the arithmetic the calls ask with.
fn plan(total: u64, chunk: u64) -> (u64, u64) {
    let mut offset = 0;
    let mut count = 0;
    while offset < total {
        let len = (total - offset).min(chunk);
        assert!(len >= 1 && len <= chunk);
        offset += len;
        count += 1;
    }
    (count, offset)
}

#[test]
fn u_1_multi_gib_archives_chunk_exactly_by_arithmetic() {
    for chunk in [UPLOAD_CHUNK as u64, RESTORE_CHUNK as u64] {
        for total in [
            5u64 << 30,
            (5 << 30) + 1,
            (5 << 30) - 1,
            u32::MAX as u64 + 7,
        ] {
            let (count, sum) = plan(total, chunk);
            assert_eq!(sum, total);
            assert_eq!(count, total.div_ceil(chunk));
            // The machine asks for the same pieces: check the first and the need's bounds.
            let call = UploadCall::new(
                spec("big"),
                total,
                TransferConfig::upload().with_chunk_size(chunk as usize),
            )
            .unwrap();
            assert_eq!(call.total_bytes(), total);
        }
    }
}

fn chunk_sizes_for(len: usize, chunk: usize) -> Vec<usize> {
    let bytes = archive(len, 77);
    let mut call = UploadCall::new(
        spec("p"),
        len as u64,
        TransferConfig::upload().with_chunk_size(chunk),
    )
    .unwrap();
    call.start(T0, FAR).unwrap();
    let chunks = stream_upload(&mut call, &bytes, usize::MAX);
    assert_eq!(chunks.concat(), bytes);
    chunks.iter().map(Vec::len).collect()
}

#[test]
fn u_1_boundary_sizes_one_chunk_less_one_chunk_and_one_more() {
    let c = UPLOAD_CHUNK;
    assert_eq!(chunk_sizes_for(1, c), [1]);
    assert_eq!(chunk_sizes_for(c - 1, c), [c - 1]);
    assert_eq!(chunk_sizes_for(c, c), [c]);
    assert_eq!(chunk_sizes_for(c + 1, c), [c, 1]);
    let r = RESTORE_CHUNK;
    for (len, want) in [
        (1, vec![1]),
        (r - 1, vec![r - 1]),
        (r, vec![r]),
        (r + 1, vec![r, 1]),
    ] {
        let (mut call, bytes) = new_restore(len);
        call.start(T0).unwrap();
        let chunks = stream_restore(&mut call, &bytes);
        assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), want);
        assert_eq!(chunks.concat(), bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any size and chunk size: every frame verifies, every chunk is full but the last, and the
    /// chunks are exactly the archive.
    #[test]
    fn u_1_any_size_chunks_into_valid_frames_summing_to_the_archive(
        len in 1usize..40_000,
        chunk in 1usize..5_000,
        piece in 1usize..7_000,
    ) {
        let bytes = archive(len, len as u64);
        let mut call = UploadCall::new(
            spec("p"),
            len as u64,
            TransferConfig::upload().with_chunk_size(chunk),
        )
        .unwrap();
        call.start(T0, FAR).unwrap();
        let chunks = stream_upload(&mut call, &bytes, piece);
        prop_assert_eq!(chunks.concat(), bytes);
        prop_assert!(chunks.iter().all(|c| !c.is_empty() && c.len() <= chunk.min(piece)));
        if piece >= chunk {
            prop_assert_eq!(chunks.len(), len.div_ceil(chunk));
        }
    }

    /// Any single corrupted byte of a downloaded archive is caught before it is accepted.
    #[test]
    fn a_3_any_corrupted_byte_is_caught(
        len in 1usize..5_000,
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
        piece in 1usize..2_000,
    ) {
        let bytes = archive(len, 3);
        let i = info(&bytes);
        let mut bad = bytes.clone();
        bad[at.index(len)] ^= flip;
        let mut d = download_of(&bytes);
        d.start(T0).unwrap();
        let mut frames = vec![dl_start(i.total_bytes, i.digest)];
        frames.extend(bad.chunks(piece).map(dl_chunk));
        frames.push(dl_complete());
        let (_, last) = feed_download(&mut d, &frames);
        let not_verified = matches!(last, DownloadStep::Interrupted { .. });
        prop_assert!(not_verified);
        prop_assert!(!d.is_verified());
    }

    /// Any change of length, shorter or longer, is caught before it is accepted.
    #[test]
    fn a_3_any_length_change_is_caught(
        len in 2usize..5_000,
        delta in -50i64..50,
        piece in 1usize..2_000,
    ) {
        prop_assume!(delta != 0);
        let bytes = archive(len, 4);
        let i = info(&bytes);
        let new_len = (len as i64 + delta).max(1) as usize;
        prop_assume!(new_len != len);
        let other = archive(new_len, 4);
        let mut d = download_of(&bytes);
        d.start(T0).unwrap();
        let mut frames = vec![dl_start(i.total_bytes, i.digest)];
        frames.extend(other.chunks(piece).map(dl_chunk));
        frames.push(dl_complete());
        let (_, last) = feed_download(&mut d, &frames);
        let not_verified = matches!(last, DownloadStep::Interrupted { .. });
        prop_assert!(not_verified);
        prop_assert!(!d.is_verified());
    }

    /// A restore's chunks of any size verify as frames and carry exactly the archive, and any
    /// single changed byte withholds the last frame.
    #[test]
    fn rs_2_any_changed_byte_withholds_the_last_frame(
        len in 1usize..20_000,
        chunk in 1usize..4_000,
        at in any::<prop::sample::Index>(),
    ) {
        let bytes = archive(len, 5);
        let cfg = TransferConfig::restore().with_chunk_size(chunk);
        let mut call = RestoreCall::new(
            ExecutionReference::parse(REF).unwrap(), "RESTORE DOMAIN a", info(&bytes), cfg,
        ).unwrap();
        call.start(T0).unwrap();
        prop_assert_eq!(stream_restore(&mut call, &bytes).concat(), bytes.clone());
        call.on_closed(T0);
        let mut bad = bytes.clone();
        bad[at.index(len)] ^= 0x01;
        call.start(T0).unwrap();
        let mut result = Ok(Bytes::new());
        while let Need::Piece { offset, len } = call.need() {
            let o = offset as usize;
            result = call.chunk(T0, &bad[o..o + len]);
            if result.is_err() { break; }
        }
        prop_assert_eq!(result.unwrap_err(), CallError::ArchiveChanged);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The two-part frames of an upload are byte for byte the frames `chunk` makes of the same
    /// pieces, each part holds the caller's piece itself (not a copy), and the call ends each
    /// way in the same state.
    #[test]
    fn u_1_chunk_parts_are_the_chunk_frames_without_copying_the_piece(
        len in 1usize..20_000,
        chunk in 1usize..4_000,
    ) {
        let bytes = Bytes::from(archive(len, 6));
        let cfg = TransferConfig::upload().with_chunk_size(chunk);
        let mut one = UploadCall::new(spec("parts"), len as u64, cfg).unwrap();
        let mut two = UploadCall::new(spec("parts"), len as u64, cfg).unwrap();
        prop_assert_eq!(one.start(T0, FAR).unwrap(), two.start(T0, FAR).unwrap());
        let mut frames = 0usize;
        while let Need::Piece { offset, len } = one.need() {
            prop_assert_eq!(two.need(), Need::Piece { offset, len });
            let o = offset as usize;
            let piece = bytes.slice(o..o + len);
            let whole = one.chunk(T0, &piece).unwrap();
            let parts = two.chunk_parts(T0, piece.clone()).unwrap();
            prop_assert_eq!(parts.payload().as_ptr(), piece.as_ptr());
            prop_assert_eq!(parts.len(), whole.len());
            prop_assert_eq!(&parts.to_bytes(), &whole);
            let part = upload_part(&parts.to_bytes());
            let UploadPartT::UploadChunk(c) = part else {
                return Err(TestCaseError::fail("not a chunk"));
            };
            prop_assert_eq!(&c.bytes[..], &piece[..]);
            frames += 1;
        }
        prop_assert_eq!(frames, len.div_ceil(chunk));
        prop_assert_eq!((one.need(), two.need()), (Need::Reply, Need::Reply));
    }

    /// A restore's two-part frames are its chunk frames, and changed bytes given in parts
    /// withhold the last frame just as given as slices.
    #[test]
    fn rs_2_chunk_parts_carry_the_same_frames_and_withhold_changed_bytes(
        len in 1usize..20_000,
        chunk in 1usize..4_000,
        at in any::<prop::sample::Index>(),
    ) {
        let bytes = Bytes::from(archive(len, 7));
        let cfg = TransferConfig::restore().with_chunk_size(chunk);
        let new = || RestoreCall::new(
            ExecutionReference::parse(REF).unwrap(), "RESTORE DOMAIN a", info(&bytes), cfg,
        ).unwrap();
        let (mut one, mut two) = (new(), new());
        one.start(T0).unwrap();
        two.start(T0).unwrap();
        while let Need::Piece { offset, len } = one.need() {
            let o = offset as usize;
            let whole = one.chunk(T0, &bytes[o..o + len]).unwrap();
            let parts = two.chunk_parts(T0, bytes.slice(o..o + len)).unwrap();
            prop_assert_eq!(parts.to_bytes(), whole);
        }
        prop_assert_eq!(two.need(), Need::Reply);
        two.on_closed(T0);
        let mut bad = bytes.to_vec();
        bad[at.index(len)] ^= 0x80;
        let bad = Bytes::from(bad);
        two.start(T0).unwrap();
        let mut result = Ok(());
        while let Need::Piece { offset, len } = two.need() {
            let o = offset as usize;
            result = two.chunk_parts(T0, bad.slice(o..o + len)).map(|_| ());
            if result.is_err() { break; }
        }
        prop_assert_eq!(result, Err(CallError::ArchiveChanged));
        prop_assert_eq!(two.need(), Need::Start);
    }
}

#[test]
fn u_1_the_largest_chunk_is_one_frame_within_the_limits() {
    // A chunk size beyond what one frame may carry is refused.
    assert!(matches!(
        UploadCall::new(spec("a"), 1, TransferConfig::upload().with_chunk_size(0)),
        Err(CallError::ChunkSize(0))
    ));
    assert!(matches!(
        UploadCall::new(
            spec("a"),
            1,
            TransferConfig::upload().with_chunk_size(4 << 20)
        ),
        Err(CallError::ChunkSize(_))
    ));
    let max = 262_144;
    let bytes = archive(max, 1);
    let mut call = UploadCall::new(
        spec("a"),
        max as u64,
        TransferConfig::upload().with_chunk_size(max),
    )
    .unwrap();
    call.start(T0, FAR).unwrap();
    let frame = call.chunk(T0, &bytes).unwrap();
    assert!(frame.len() <= 4 << 20);
    let UploadPartT::UploadChunk(c) = upload_part(&frame) else {
        panic!()
    };
    assert_eq!(c.bytes, bytes);
}

// ----- Progress -----------------------------------------------------------------------------

#[test]
fn progress_of_an_upload_counts_each_attempt_from_its_first_byte() {
    let total = 2 * UPLOAD_CHUNK + 5;
    let (mut call, bytes) = new_upload(total);
    let total = total as u64;
    assert_eq!(call.progress(), Progress::new(0, 0, total));
    call.start(T0, FAR).unwrap();
    assert_eq!(call.progress(), Progress::new(1, 0, total));
    call.chunk(T0, &bytes[..UPLOAD_CHUNK]).unwrap();
    let p = call.progress();
    assert_eq!(p, Progress::new(1, UPLOAD_CHUNK as u64, total));
    assert!(!p.is_whole());
    assert!((p.fraction() - UPLOAD_CHUNK as f64 / total as f64).abs() < 1e-12);
    call.on_closed(T0);
    call.start(T0, FAR).unwrap();
    // A restart: the next attempt, from nothing.
    assert_eq!(call.progress(), Progress::new(2, 0, total));
    stream_upload(&mut call, &bytes, usize::MAX);
    let p = call.progress();
    assert_eq!(p, Progress::new(2, total, total));
    assert!(p.is_whole());
    assert_eq!(p.fraction(), 1.0);
}

#[test]
fn progress_of_a_restore_counts_each_attempt_from_its_first_byte() {
    let total = RESTORE_CHUNK + 1;
    let (mut call, bytes) = new_restore(total);
    let total = total as u64;
    assert_eq!(call.progress(), Progress::new(0, 0, total));
    call.start(T0).unwrap();
    call.chunk(T0, &bytes[..RESTORE_CHUNK]).unwrap();
    assert_eq!(
        call.progress(),
        Progress::new(1, RESTORE_CHUNK as u64, total)
    );
    call.on_closed(T0);
    call.start(T0).unwrap();
    assert_eq!(call.progress(), Progress::new(2, 0, total));
    stream_restore(&mut call, &bytes);
    assert_eq!(call.progress(), Progress::new(2, total, total));
}

#[test]
fn progress_of_a_download_counts_each_attempt_from_its_first_byte() {
    let bytes = archive(1000, 12);
    let mut d = download_of(&bytes);
    assert_eq!(d.progress(), Progress::new(0, 0, 1000));
    d.start(T0).unwrap();
    assert_eq!(d.progress(), Progress::new(1, 0, 1000));
    let frames = good_stream(&bytes, 100);
    feed_download(&mut d, &frames[..5]);
    assert_eq!(d.progress(), Progress::new(1, 400, 1000));
    d.on_closed(T0);
    d.start(T0).unwrap();
    assert_eq!(d.progress(), Progress::new(2, 0, 1000));
    feed_download(&mut d, &frames);
    let p = d.progress();
    assert_eq!(p, Progress::new(2, 1000, 1000));
    assert!(p.is_whole());
}

#[test]
fn progress_fraction_and_wholeness_at_their_edges() {
    // Before any attempt nothing is whole, even an archive with nothing left to move.
    assert!(!Progress::new(0, 10, 10).is_whole());
    assert!(Progress::new(1, 10, 10).is_whole());
    assert!(!Progress::new(1, 9, 10).is_whole());
    assert_eq!(Progress::new(1, 0, 0).fraction(), 0.0);
    assert_eq!(Progress::new(1, 5, 10).fraction(), 0.5);
    // Never above one.
    assert_eq!(Progress::new(1, 20, 10).fraction(), 1.0);
}

/// `frame` with its file identifier replaced by `id`: the same bytes, announced as another root.
fn relabelled(frame: &Bytes, id: &[u8; 4]) -> Bytes {
    let mut b = frame.to_vec();
    b[4..8].copy_from_slice(id);
    Bytes::from(b)
}

fn wrong_identifier(v: &CallViolation, expected: &[u8; 4]) -> bool {
    matches!(
        v,
        CallViolation::Frame(nervix_protocol::violation::ProtocolViolation::WrongIdentifier { expected: e, .. }) if e == expected
    )
}

#[test]
fn f_3_every_separate_call_checks_the_identifier_of_what_it_reads() {
    // An upload's reply must be NXUR: its own bytes announced as a restore reply are refused
    // before anything is read.
    let (mut call, _) = streamed_upload(10);
    let reply = upload_reply(Some(1), installed("up-1", 4));
    let step = call.on_reply(T0, relabelled(&reply, b"NXRR"));
    assert!(
        matches!(&step, UploadStep::Interrupted { cause: Interruption::Violation(v), .. } if wrong_identifier(v, b"NXUR")),
        "{step:?}"
    );
    // A restore's reply must be NXRR.
    let (mut call, _) = streamed_restore(10);
    let reply = restore_reply(Some(1), restore_outcome(REF, completed()));
    let step = call.on_reply(T0, relabelled(&reply, b"NXUR"));
    assert!(
        matches!(&step, RestoreStep::Interrupted { cause: Interruption::Violation(v), .. } if wrong_identifier(v, b"NXRR")),
        "{step:?}"
    );
    // A download's frames must be NXBD, the first and every later one.
    let bytes = archive(5000, 3);
    for at in 0..3 {
        let mut d = download_of(&bytes);
        d.start(T0).unwrap();
        let mut frames = good_stream(&bytes, 2500);
        frames[at] = relabelled(&frames[at], b"NXBQ");
        let (_, step) = feed_download(&mut d, &frames);
        assert!(
            matches!(&step, DownloadStep::Interrupted { cause: Interruption::Violation(v), .. } if wrong_identifier(v, b"NXBD")),
            "frame {at}: {step:?}"
        );
        assert!(!d.is_verified());
    }
}
