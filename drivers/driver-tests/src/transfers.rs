//! The separate calls against the loopback cluster: a backup's archive downloaded to disk only
//! once verified, restored from that file, and a resource uploaded from a file (gRPC only),
//! each streamed in pieces by its machine; refusals, back-off and https kept to https.

use crate::{
    backed_up, call_instants, config_of, entries, info_of, scratch, seeds_of, spoken, Driver,
    Failure, Via,
};
use nervix_driver_support::call_end::retry_pause;
use nervix_driver_support::config::ConfigError;
use nervix_driver_support::credentials::{Credentials, CredentialsError, WsAuth};
use nervix_driver_support::transfer::ATTEMPTS;
use nervix_loopback::{
    AuthSeen, CallFault, CallFaults, Loopback, LoopbackConfig, DOWNLOAD_PATH, DOWNLOAD_WS_PATH,
    RESTORE_PATH, RESTORE_WS_PATH, UPLOAD_PATH,
};
use nervix_protocol::calls::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::schema::BackupDownloadFailure;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Credentials whose encodings break careless encoders (`+`, `%`, non-ASCII).
pub const USER: &str = "b~ü+%";
/// The password of [`USER`].
pub const PASSWORD: &str = "~~~>>>?";

/// The credentials of [`USER`].
pub fn user() -> Credentials {
    Credentials::new(USER, PASSWORD)
}

/// Where downloads go over `via`.
pub fn download_path(via: Via) -> &'static str {
    match via {
        Via::Grpc => DOWNLOAD_PATH,
        Via::Console(_) => DOWNLOAD_WS_PATH,
    }
}

/// Where restores go over `via`.
pub fn restore_path(via: Via) -> &'static str {
    match via {
        Via::Grpc => RESTORE_PATH,
        Via::Console(_) => RESTORE_WS_PATH,
    }
}

/// A loopback of `nodes` nodes knowing [`USER`].
fn cluster(nodes: usize) -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes,
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap()
}

/// A loopback of one node, a configuration reaching it over `via`, and a scratch directory.
pub fn setup<D: Driver>(name: &str, via: Via) -> (Loopback, D::Config, PathBuf) {
    let lb = cluster(1);
    let config = config_of::<D>(
        &seeds_of(&lb, via),
        user(),
        via,
        Duration::from_secs(10),
        Duration::from_secs(3),
    );
    let dir = scratch::<D>(&format!("{name}-{via:?}"));
    (lb, config, dir)
}

/// The archive description of a BACKUP's report.
pub fn expected(report: &nervix_protocol::client::CommandReport) -> ArchiveInfo {
    BackupDownload::from_report(report, TransferConfig::download())
        .unwrap()
        .expected()
}

/// A restore of `info` into `tenant_copy` under `reference`, in chunks of 1000 bytes.
pub fn restore_call(reference: &str, info: ArchiveInfo) -> RestoreCall {
    RestoreCall::new(
        ExecutionReference::parse(reference).unwrap(),
        "RESTORE DOMAIN tenant AS tenant_copy",
        info,
        TransferConfig::restore().with_chunk_size(1000),
    )
    .unwrap()
}

/// A file of `len` bytes in `dir` named `archive.nxb`, and its description.
pub fn archive_file(dir: &Path, len: usize) -> (PathBuf, ArchiveInfo) {
    let bytes: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
    let path = dir.join("archive.nxb");
    std::fs::write(&path, &bytes).unwrap();
    (path.clone(), info_of(&path))
}

/// An upload of a 50,000-byte file as resource `model` of `tenant` under `identity`.
pub fn upload_of(dir: &Path, identity: &str) -> (UploadCall, PathBuf) {
    let bytes: Vec<u8> = (0..50_000u32).map(|i| (i * 11 % 251) as u8).collect();
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

/// a backup downloaded over `via` lands verified once, then is not retained.
pub fn a_4_downloaded_once<D: Driver>(via: Via) {
    let d = D::new();
    let (_lb, config, dir) = setup::<D>("download", via);
    let report = backed_up(&d, &config);
    let transfers = d.transfers(&config).unwrap();
    let target = dir.join("tenant.nxb");
    // The call made by hand from the report, then run to its end.
    let mut call = BackupDownload::from_report(&report, TransferConfig::download()).unwrap();
    let path = d.download(&transfers, &mut call, &target).unwrap();
    assert_eq!(path, target);
    assert!(call.is_verified());
    let info = expected(&report);
    assert!(info.total_bytes > 0);
    assert_eq!(info_of(&target), info);
    // No temporary file is left beside it.
    assert_eq!(entries(&dir), vec!["tenant.nxb".to_string()]);
    // Downloaded once: the archive is no longer retained, and nothing new is written.
    let err = d
        .backup(&transfers, &report, &dir.join("again.nxb"))
        .unwrap_err();
    assert_eq!(
        D::failure(&err),
        Failure::Unavailable(BackupDownloadFailure::NotRetained),
        "{err:?}"
    );
    assert_eq!(entries(&dir), vec!["tenant.nxb".to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// RS-1: a restore over `via` from the downloaded file completes with its report.
pub fn rs_1_restored<D: Driver>(via: Via) {
    let d = D::new();
    let (lb, config, dir) = setup::<D>("restore", via);
    let report = backed_up(&d, &config);
    let transfers = d.transfers(&config).unwrap();
    let archive = d
        .backup(&transfers, &report, &dir.join("tenant.nxb"))
        .unwrap();
    let info = info_of(&archive);
    let mut call = restore_call("restore-rs1-1", info);
    let outcome = d.restore(&transfers, &mut call, &archive).unwrap();
    let RestoreOutcome::Completed {
        summary: Some(s), ..
    } = outcome
    else {
        panic!("the restore ended as {outcome:?}");
    };
    assert_eq!(s.archive, info);
    assert_eq!(s.domains.len(), 1);
    assert_eq!(s.domains[0].domain, "tenant_copy");
    assert_eq!(call.attempts(), 1);
    assert_eq!(call.bytes_sent(), info.total_bytes);
    assert_eq!(lb.calls_to(restore_path(via)).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// F-2: a console call's frames are binary messages. A text message is no frame: it ends the
/// attempt as a transport failure, never skipped, and the restore goes again whole under its
/// reference, which recovers its outcome.
pub fn f_2_text_on_a_console_call_ends_the_attempt<D: Driver>() {
    let d = D::new();
    let via = Via::Console(WsAuth::Header);
    let (lb, config, dir) = setup::<D>("text", via);
    let report = backed_up(&d, &config);
    let transfers = d.transfers(&config).unwrap();
    let archive = d
        .backup(&transfers, &report, &dir.join("tenant.nxb"))
        .unwrap();
    let info = info_of(&archive);
    let mut call = restore_call("restore-f2-text-1", info);
    lb.inject(CallFault::CallTextMessage);
    let outcome = d.restore(&transfers, &mut call, &archive).unwrap();
    assert!(
        matches!(outcome, RestoreOutcome::Completed { .. }),
        "the restore ended as {outcome:?}"
    );
    assert_eq!(
        lb.calls_to(restore_path(via)).len(),
        2,
        "the attempt that met the text message ended, and the restore went again"
    );
    assert_eq!(call.attempts(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// T-3a: on the console, under header and query credentials, a download and a restore each
/// come on a connection of their own at their own path, presenting the credentials the way
/// the configuration says (T-4); uploads have no console call.
pub fn t_3a_own_connections<D: Driver>() {
    for auth in [WsAuth::Header, WsAuth::Query] {
        let via = Via::Console(auth);
        let d = D::new();
        let (lb, config, dir) = setup::<D>("console", via);
        let report = backed_up(&d, &config);
        let transfers = d.transfers(&config).unwrap();
        let archive = d
            .backup(&transfers, &report, &dir.join("tenant.nxb"))
            .unwrap();
        let info = info_of(&archive);
        assert_eq!(info, expected(&report));
        let mut call = restore_call("restore-ws-1", info);
        let outcome = d.restore(&transfers, &mut call, &archive).unwrap();
        assert!(
            matches!(
                outcome,
                RestoreOutcome::Completed {
                    summary: Some(_),
                    ..
                }
            ),
            "{outcome:?}"
        );
        assert!(info.total_bytes > 1000, "the restore spans several chunks");
        assert_eq!(call.attempts(), 1);
        let (mut up, _) = upload_of(&dir, "upload-ws-1");
        if let Some(r) = d.upload(&transfers, &mut up, &archive) {
            let err = r.unwrap_err();
            assert_eq!(D::failure(&err), Failure::UploadNeedsGrpc, "{err:?}");
        }
        let calls: Vec<_> = lb
            .stats()
            .calls
            .into_iter()
            .filter(|c| c.path == DOWNLOAD_WS_PATH || c.path == RESTORE_WS_PATH)
            .collect();
        let paths: Vec<&str> = calls.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, vec![DOWNLOAD_WS_PATH, RESTORE_WS_PATH], "{auth:?}");
        let who = Some((USER.to_string(), PASSWORD.to_string()));
        for c in &calls {
            assert!(c.accepted, "{c:?}");
            match auth {
                WsAuth::Header => assert_eq!(c.auth, AuthSeen::Header(who.clone()), "{c:?}"),
                _ => assert_eq!(c.auth, AuthSeen::Query(who.clone()), "{c:?}"),
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// T-5: a separate call refused as unauthenticated is never retried: over gRPC and the
/// console, a download; on the console a restore too, and over gRPC an upload.
pub fn t_5_unauthenticated_not_retried<D: Driver>() {
    for via in spoken::<D>(&[Via::Grpc, Via::Console(WsAuth::Header)]) {
        let d = D::new();
        let (lb, config, dir) = setup::<D>("unauth", via);
        let wrong = config_of::<D>(
            &seeds_of(&lb, via),
            Credentials::new(USER, "not the password"),
            via,
            Duration::from_secs(10),
            Duration::from_secs(3),
        );
        let report = backed_up(&d, &config);
        let transfers = d.transfers(&wrong).unwrap();
        let err = d
            .backup(&transfers, &report, &dir.join("tenant.nxb"))
            .unwrap_err();
        assert_eq!(
            D::failure(&err),
            Failure::Unauthenticated,
            "{via:?}: {err:?}"
        );
        let downloads = lb.calls_to(download_path(via));
        assert_eq!(downloads.len(), 1, "{via:?}: no retry: {downloads:?}");
        assert!(!downloads[0].accepted);
        assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
        match via {
            Via::Grpc => {
                let (mut call, file) = upload_of(&dir, "upload-unauth");
                let err = d.upload(&transfers, &mut call, &file).unwrap().unwrap_err();
                assert_eq!(D::failure(&err), Failure::Unauthenticated, "{err:?}");
                assert_eq!(lb.calls_to(UPLOAD_PATH).len(), 1, "no retry");
            }
            Via::Console(_) => {
                let (source, info) = archive_file(&dir, 3000);
                let mut call = restore_call("0123456789abcdef0123456789abcdef", info);
                let err = d.restore(&transfers, &mut call, &source).unwrap_err();
                assert_eq!(D::failure(&err), Failure::Unauthenticated, "{err:?}");
                assert_eq!(call.attempts(), 0, "no restore frame was ever sent");
                assert_eq!(lb.calls_to(RESTORE_WS_PATH).len(), 1);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// T-5: a separate call refused as unavailable backs off and retries with the same
/// credentials.
pub fn t_5_unavailable_backs_off<D: Driver>() {
    for via in spoken::<D>(&[Via::Grpc, Via::Console(WsAuth::Query)]) {
        let d = D::new();
        let (lb, config, dir) = setup::<D>("busy", via);
        let report = backed_up(&d, &config);
        let want = expected(&report);
        lb.inject(CallFault::AuthUnavailable);
        lb.inject(CallFault::AuthUnavailable);
        let transfers = d.transfers(&config).unwrap();
        let began = Instant::now();
        let path = d
            .backup(&transfers, &report, &dir.join("tenant.nxb"))
            .unwrap();
        let took = began.elapsed();
        assert_eq!(info_of(&path), want);
        // Backed off, and longer the second time: at least the first pause and its double.
        let pauses = retry_pause(1) + retry_pause(2);
        assert!(took >= pauses, "{via:?}: {took:?} < {pauses:?}");
        let downloads = lb.calls_to(download_path(via));
        let accepted: Vec<bool> = downloads.iter().map(|d| d.accepted).collect();
        assert_eq!(accepted, [false, false, true], "{via:?}");
        assert!(
            downloads.iter().all(|d| d.auth == downloads[0].auth),
            "the same credentials each time: {downloads:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// T-3, T-6: a console download closed with the defect code `download` and a restore whose
/// start is refused with `restore` end, and are not sent again.
pub fn defect_close_not_resent<D: Driver>(download: u32, restore: u32) {
    let d = D::new();
    let (lb, config, dir) = setup::<D>("defect", Via::Console(WsAuth::Header));
    let report = backed_up(&d, &config);
    let transfers = d.transfers(&config).unwrap();
    lb.inject(CallFault::CloseCode(download as u16));
    let err = d
        .backup(&transfers, &report, &dir.join("tenant.nxb"))
        .unwrap_err();
    assert_eq!(D::failure(&err), Failure::FrameRefused(download), "{err:?}");
    assert_eq!(
        lb.calls_to(DOWNLOAD_WS_PATH).len(),
        1,
        "the request went once"
    );
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    // A restore whose start is refused: ended, its frames never sent again.
    let (source, info) = archive_file(&dir, 5000);
    let mut call = restore_call("restore-defect-1", info);
    lb.inject(CallFault::CloseCode(restore as u16));
    let err = d.restore(&transfers, &mut call, &source).unwrap_err();
    assert_eq!(D::failure(&err), Failure::FrameRefused(restore), "{err:?}");
    assert_eq!(lb.calls_to(RESTORE_WS_PATH).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// T-3a: a close with 1001 on either console connection, a download's or a restore's, is a
/// transport failure: the attempt is repeated, each time on a connection of its own, until
/// the call's attempts run out; never taken for a refusal that ends the call at once.
pub fn t_3a_1001_on_either_connection<D: Driver>() {
    let d = D::new();
    let (lb, config, dir) = setup::<D>("gone-either", Via::Console(WsAuth::Header));
    let report = backed_up(&d, &config);
    let transfers = d.transfers(&config).unwrap();
    let (source, info) = archive_file(&dir, 3000);
    // The node is down: every console call it is offered closes with 1001.
    lb.kill(0);
    let err = d
        .backup(&transfers, &report, &dir.join("tenant.nxb"))
        .unwrap_err();
    let Failure::GaveUp { attempts, last } = D::failure(&err) else {
        panic!("the download ended as {err:?}");
    };
    assert_eq!(attempts, ATTEMPTS, "{last}");
    assert!(last.contains("Transport"), "{last}");
    let downloads = lb.calls_to(DOWNLOAD_WS_PATH).len();
    assert_eq!(downloads, ATTEMPTS as usize, "one connection per attempt");
    let mut call = restore_call("restore-gone-1", info);
    let err = d.restore(&transfers, &mut call, &source).unwrap_err();
    let Failure::GaveUp { attempts, last } = D::failure(&err) else {
        panic!("the restore ended as {err:?}");
    };
    assert_eq!(attempts, ATTEMPTS, "{last}");
    assert_eq!(call.attempts(), ATTEMPTS);
    assert!(last.contains("Transport"), "{last}");
    let restores = lb.calls_to(RESTORE_WS_PATH).len();
    assert_eq!(restores, ATTEMPTS as usize, "one connection per attempt");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A loopback of two nodes served over https, but node 1 over plain http.
fn https_with_plain_node_1() -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 2,
        tls: true,
        plain_nodes: vec![1],
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap()
}

fn tls_config<D: Driver>(lb: &Loopback, seeds: &[String], via: Via) -> D::Config {
    let config = config_of::<D>(
        seeds,
        user(),
        via,
        Duration::from_secs(10),
        Duration::from_secs(2),
    );
    D::with_root(config, lb.certificate_der().unwrap().to_vec())
}

/// T-2: separate calls started over https at once never follow a redirect to http.
pub fn t_2_no_redirect_to_http<D: Driver + Sync>()
where
    D::Transfers: Sync,
{
    for via in spoken::<D>(&[Via::Grpc, Via::Console(WsAuth::Header)]) {
        let d = D::new();
        let lb = https_with_plain_node_1();
        let endpoints = seeds_of(&lb, via);
        assert!(endpoints[0].starts_with("https://") && endpoints[1].starts_with("http://"));
        let config = tls_config::<D>(&lb, &endpoints[..1], via);
        let dir = scratch::<D>(&format!("no-http-redirect-{via:?}"));
        let report = backed_up(&d, &config);
        // Every node now redirects to node 1, reachable over http only.
        lb.set_leader(1);
        let transfers = d.transfers(&config).unwrap();
        let (file, info) = archive_file(&dir, 5000);
        let mut restore = restore_call("restore-no-http-1", info);
        let (mut upload, up_file) = upload_of(&dir, "upload-no-http");
        let target = dir.join("tenant.nxb");
        // The calls go at once, each on a thread of its own.
        let (d, t) = (&d, &transfers);
        let (download, restored, uploaded) = std::thread::scope(|s| {
            let download = s.spawn(|| d.backup(t, &report, &target));
            let restored = s.spawn(|| d.restore(t, &mut restore, &file));
            let uploaded = s.spawn(|| match via {
                Via::Grpc => d.upload(t, &mut upload, &up_file),
                Via::Console(_) => None,
            });
            (
                download.join().unwrap(),
                restored.join().unwrap(),
                uploaded.join().unwrap(),
            )
        });
        let mut errors = vec![download.err(), restored.err()];
        if let Some(up) = uploaded {
            errors.push(up.err());
        }
        for err in errors {
            let err = err.expect("the call cannot succeed over https alone");
            assert!(
                matches!(D::failure(&err), Failure::GaveUp { last, .. } if last.contains("was not followed from https")),
                "{via:?}: {err:?}"
            );
        }
        let calls = lb.stats().calls;
        assert!(calls.len() > 3, "{via:?}: {calls:?}");
        assert!(
            calls.iter().all(|c| c.node == 0 && c.alpn.is_some()),
            "{via:?}: a call went over http: {calls:?}"
        );
        assert!(!dir.join("tenant.nxb").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// T-2: a separate call with an https seed never goes to an http seed.
pub fn t_2_no_http_seed<D: Driver>() {
    for via in spoken::<D>(&[Via::Grpc, Via::Console(WsAuth::Query)]) {
        let d = D::new();
        let lb = https_with_plain_node_1();
        let endpoints = seeds_of(&lb, via);
        // The http seed first: a client that has an https seed never uses it.
        let config = tls_config::<D>(&lb, &[endpoints[1].clone(), endpoints[0].clone()], via);
        let dir = scratch::<D>(&format!("no-http-seed-{via:?}"));
        let report = backed_up(&d, &config);
        let transfers = d.transfers(&config).unwrap();
        let path = d
            .backup(&transfers, &report, &dir.join("tenant.nxb"))
            .unwrap();
        let mut restore = restore_call("restore-no-http-seed-1", info_of(&path));
        let outcome = d.restore(&transfers, &mut restore, &path).unwrap();
        assert!(
            matches!(outcome, RestoreOutcome::Completed { .. }),
            "{outcome:?}"
        );
        if via == Via::Grpc {
            let (mut upload, file) = upload_of(&dir, "upload-no-http-seed");
            d.upload(&transfers, &mut upload, &file).unwrap().unwrap();
        }
        let calls = lb.stats().calls;
        assert!(
            calls.iter().all(|c| c.node == 0 && c.alpn.is_some()),
            "{via:?}: a call went over http: {calls:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A loopback of two nodes whose leader, node 1, is down, so that node 0's redirects name no
/// leader, and a configuration of node 0 alone over `via`.
fn leaderless<D: Driver>(via: Via) -> (Loopback, D::Config) {
    let lb = cluster(2);
    let config = config_of::<D>(
        &seeds_of(&lb, via)[..1],
        user(),
        via,
        Duration::from_secs(10),
        Duration::from_secs(2),
    );
    (lb, config)
}

/// Runs `call` on a thread of its own with a driver of its own while the instants of the
/// first three calls to `path` are taken; asserts that it gave up and that the attempts were
/// spaced by the first pause, then its double (a constant pause, or none, fails this).
fn spaced_attempts<D: Driver, T: std::fmt::Debug + Send + 'static>(
    lb: &Loopback,
    path: &str,
    what: &str,
    call: impl FnOnce(&D) -> Result<T, D::TransferError> + Send + 'static,
) -> Vec<Instant> {
    let run = std::thread::spawn(move || call(&D::new()));
    let at = call_instants(lb, path, 3);
    let result = run.join().unwrap();
    let err = result.expect_err(what);
    assert!(
        matches!(D::failure(&err), Failure::GaveUp { .. }),
        "{what}: {err:?}"
    );
    assert_eq!(at.len(), 3, "{what}");
    let spaced = at[2] - at[0];
    let want = retry_pause(1) + retry_pause(2) - Duration::from_millis(5);
    assert!(spaced >= want, "{what}: {spaced:?} < {want:?}");
    at
}

/// a download redirected without a leader backs off with growing pauses.
pub fn a_5_download_backs_off<D: Driver>() {
    for via in spoken::<D>(&[Via::Grpc, Via::Console(WsAuth::Header)]) {
        let (lb, config) = leaderless::<D>(via);
        let dir = scratch::<D>(&format!("leaderless-download-{via:?}"));
        let report = backed_up(&D::new(), &config);
        lb.set_leader(1);
        lb.kill(1);
        let target = dir.join("tenant.nxb");
        let at = spaced_attempts::<D, _>(&lb, download_path(via), &format!("{via:?}"), move |d| {
            let transfers = d.transfers(&config).unwrap();
            d.backup(&transfers, &report, &target)
        });
        assert!(at[2] - at[1] > at[1] - at[0], "{via:?}: {at:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// RS-4: a restore redirected without a leader backs off with growing pauses.
pub fn rs_4_restore_backs_off<D: Driver>() {
    for via in spoken::<D>(&[Via::Grpc, Via::Console(WsAuth::Header)]) {
        let (lb, config) = leaderless::<D>(via);
        lb.set_leader(1);
        lb.kill(1);
        let dir = scratch::<D>(&format!("leaderless-restore-{via:?}"));
        let (file, info) = archive_file(&dir, 5000);
        spaced_attempts::<D, _>(&lb, restore_path(via), &format!("{via:?}"), move |d| {
            let transfers = d.transfers(&config).unwrap();
            let mut call = restore_call("restore-leaderless-1", info);
            d.restore(&transfers, &mut call, &file)
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// U-4: an upload redirected without a leader backs off with growing pauses (gRPC only).
pub fn u_4_upload_backs_off<D: Driver>() {
    let (lb, config) = leaderless::<D>(Via::Grpc);
    lb.set_leader(1);
    lb.kill(1);
    let dir = scratch::<D>("leaderless-upload");
    let (mut call, file) = upload_of(&dir, "upload-leaderless");
    spaced_attempts::<D, _>(&lb, UPLOAD_PATH, "upload", move |d| {
        let transfers = d.transfers(&config).unwrap();
        d.upload(&transfers, &mut call, &file).unwrap()
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// T-4: a user name holding a colon is refused at configuration, and credentials put in
/// afterwards are refused too, by the calls and by a client.
pub fn t_4_colon_refused<D: Driver>() {
    let via = if D::speaks(Via::Grpc) {
        Via::Grpc
    } else {
        Via::Console(WsAuth::Header)
    };
    let err = D::config(
        &["http://127.0.0.1:1/"],
        Credentials::new("ann:admin", "pw"),
        via,
    )
    .unwrap_err();
    assert_eq!(err, ConfigError::Credentials(CredentialsError::ColonInUser));
    let mut config = D::config(
        &["http://127.0.0.1:1/"],
        Credentials::new("ann", "pw:with:colons"),
        via,
    )
    .unwrap();
    *D::credentials(&mut config) = Credentials::new("ann:admin", "pw");
    let d = D::new();
    match d.transfers(&config) {
        Ok(_) => panic!("the calls took credentials they cannot present"),
        Err(e) => assert!(
            matches!(D::failure(&e), Failure::Config(ConfigError::Credentials(_))),
            "{e:?}"
        ),
    }
    assert!(d.connect(config).is_err());
    assert!(Credentials::try_new("ann:admin", "pw").is_err());
    assert!(Credentials::try_new("ann", "pw:x").is_ok());
}

/// Checks what a progress observer saw of a call that took `attempts` attempts over an
/// archive of `total` bytes: every attempt told from its start with nothing done, each next
/// report either further on in the same attempt or the next attempt's start, and the last one
/// the whole archive in the last attempt. Returns the most each attempt moved.
pub fn check_progress(seen: &[Progress], total: u64, attempts: u32) -> Vec<u64> {
    assert_eq!(seen.first(), Some(&Progress::new(1, 0, total)), "{seen:?}");
    for w in seen.windows(2) {
        let (a, b) = (w[0], w[1]);
        assert_eq!(b.total, total, "{seen:?}");
        if b.attempt == a.attempt {
            assert!(
                b.done > a.done,
                "a step back or a repeat within an attempt: {seen:?}"
            );
        } else {
            assert_eq!(
                (b.attempt, b.done),
                (a.attempt + 1, 0),
                "a restart not told from its start: {seen:?}"
            );
        }
    }
    assert_eq!(
        seen.last(),
        Some(&Progress::new(attempts, total, total)),
        "{seen:?}"
    );
    (1..=attempts)
        .map(|n| {
            seen.iter()
                .filter(|p| p.attempt == n)
                .map(|p| p.done)
                .max()
                .expect("every attempt is told")
        })
        .collect()
}

/// A download, a restore and (where the driver has them) an upload over `via` tell their
/// progress: each attempt from its start, every step forward once, to the whole archive; when
/// the first attempt is cut, the restart shows as the second attempt from nothing, and what the
/// observer is handed is counters, the data never passing through it.
pub fn progress_is_told_per_attempt_and_shows_restarts<D: Driver>(via: Via) {
    let d = D::new();
    let (lb, config, dir) = setup::<D>("progress", via);
    let report = backed_up(&d, &config);
    let transfers = d.transfers(&config).unwrap();
    let info = expected(&report);
    let cut = CallFaults {
        cut: 1.0,
        ..CallFaults::default()
    };

    // The first attempt of each call is cut; the faults are lifted once the second starts,
    // after the first was served and before the second is.
    let watch = |seen: &mut Vec<Progress>, p: Progress| {
        if p.attempt == 2 && p.done == 0 {
            lb.set_call_faults(CallFaults::default());
        }
        seen.push(p);
    };

    lb.set_call_faults(cut.clone());
    let mut seen = Vec::new();
    let mut call = BackupDownload::from_report(&report, TransferConfig::download()).unwrap();
    let target = dir.join("tenant.nxb");
    d.download_watched(&transfers, &mut call, &target, &mut |p| watch(&mut seen, p))
        .unwrap();
    assert_eq!(info_of(&target), info);
    let most = check_progress(&seen, info.total_bytes, 2);
    // The cut came mid-way: some of the archive, not all of it, in the first attempt.
    assert!(most[0] > 0 && most[0] < info.total_bytes, "{seen:?}");
    // One report per chunk the server sent in the last attempt, and its start.
    let chunks = info.total_bytes.div_ceil(1000);
    assert_eq!(
        seen.iter().filter(|p| p.attempt == 2).count() as u64,
        chunks + 1
    );

    lb.set_call_faults(cut.clone());
    let mut seen = Vec::new();
    let mut call = restore_call("restore-progress-1", info);
    let outcome = d
        .restore_watched(&transfers, &mut call, &target, &mut |p| watch(&mut seen, p))
        .unwrap();
    assert!(
        matches!(outcome, RestoreOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let most = check_progress(&seen, info.total_bytes, 2);
    // The cluster cuts a restore's first attempt once its first chunk is in: by then the
    // client had sent that chunk at least, and often all of them (how many depends on how
    // far it wrote before the cut reached it).
    assert!(most[0] >= info.total_bytes.min(1000), "{seen:?}");
    // Pieces of 1000 bytes: one report each, and the start, per attempt.
    let told = |n| seen.iter().filter(|p| p.attempt == n).count() as u64;
    assert_eq!(told(1), most[0].div_ceil(1000) + 1, "{seen:?}");
    assert_eq!(told(2), info.total_bytes.div_ceil(1000) + 1, "{seen:?}");

    // Uploads are gRPC calls only.
    if via == Via::Grpc {
        lb.set_call_faults(cut);
        let (mut call, file) = upload_of(&dir, "progress-upload");
        let mut seen = Vec::new();
        let total = call.total_bytes();
        if let Some(outcome) =
            d.upload_watched(&transfers, &mut call, &file, &mut |p| watch(&mut seen, p))
        {
            let outcome = outcome.unwrap();
            assert!(
                matches!(outcome, UploadOutcome::Installed { .. }),
                "{outcome:?}"
            );
            let most = check_progress(&seen, total, 2);
            assert_eq!(most[0], total);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tests of `tests/transfers.rs`, for `tokio` or `blocking`.
#[macro_export]
macro_rules! transfers_tests {
    (tokio) => {
        #[test]
        fn a_4_a_backup_downloaded_over_grpc_lands_verified_once_then_is_not_retained() {
            $crate::run!(Tokio, transfers::a_4_downloaded_once(Via::Grpc))
        }
        #[test]
        fn rs_1_restore_backup_over_grpc_streams_the_file_and_completes_with_its_report() {
            $crate::run!(Tokio, transfers::rs_1_restored(Via::Grpc))
        }
        #[test]
        fn t_3a_console_download_and_restore_each_on_their_own_connection() {
            $crate::run!(Tokio, transfers::t_3a_own_connections())
        }
        #[test]
        fn t_3a_a_1001_close_on_a_console_download_or_restore_is_a_transport_failure() {
            $crate::run!(Tokio, transfers::t_3a_1001_on_either_connection())
        }
        #[test]
        fn t_5_a_separate_call_refused_as_unauthenticated_is_never_retried() {
            $crate::run!(Tokio, transfers::t_5_unauthenticated_not_retried())
        }
        #[test]
        fn t_5_a_separate_call_refused_as_unavailable_backs_off_and_retries_with_the_same_credentials(
        ) {
            $crate::run!(Tokio, transfers::t_5_unavailable_backs_off())
        }
        #[test]
        fn t_3_a_console_call_closed_with_a_defect_code_ends_and_is_not_sent_again() {
            $crate::run!(Tokio, transfers::defect_close_not_resent(1008, 1009))
        }
        #[test]
        fn t_2_a_separate_call_started_over_https_never_follows_a_redirect_to_http() {
            $crate::run!(Tokio, transfers::t_2_no_redirect_to_http())
        }
        #[test]
        fn t_2_a_separate_call_with_an_https_seed_never_goes_to_an_http_seed() {
            $crate::run!(Tokio, transfers::t_2_no_http_seed())
        }
        #[test]
        fn a_5_a_download_redirected_without_a_leader_backs_off_with_growing_pauses() {
            $crate::run!(Tokio, transfers::a_5_download_backs_off())
        }
        #[test]
        fn u_4_an_upload_redirected_without_a_leader_backs_off_with_growing_pauses() {
            $crate::run!(Tokio, transfers::u_4_upload_backs_off())
        }
        #[test]
        fn rs_4_a_restore_redirected_without_a_leader_backs_off_with_growing_pauses() {
            $crate::run!(Tokio, transfers::rs_4_restore_backs_off())
        }
        #[test]
        fn t_4_a_user_name_holding_a_colon_is_refused_at_configuration() {
            $crate::run!(Tokio, transfers::t_4_colon_refused())
        }
        #[test]
        fn f_2_a_text_message_on_a_console_call_ends_the_attempt() {
            $crate::run!(Tokio, transfers::f_2_text_on_a_console_call_ends_the_attempt())
        }
        #[test]
        fn progress_over_grpc_is_told_per_attempt_and_shows_restarts() {
            $crate::run!(
                Tokio,
                transfers::progress_is_told_per_attempt_and_shows_restarts(Via::Grpc)
            )
        }
        #[test]
        fn progress_on_the_console_is_told_per_attempt_and_shows_restarts() {
            $crate::run!(
                Tokio,
                transfers::progress_is_told_per_attempt_and_shows_restarts(Via::Console(
                    WsAuth::Header
                ))
            )
        }
    };
    (blocking) => {
        #[test]
        fn t_6_a_console_call_closed_with_a_defect_code_ends_and_is_not_sent_again_blocking() {
            $crate::run!(Blocking, transfers::defect_close_not_resent(1009, 1007))
        }
        #[test]
        fn t_5_a_503_on_a_console_call_backs_off_and_retries_with_the_same_credentials_blocking(
        ) {
            $crate::run!(Blocking, transfers::t_5_unavailable_backs_off())
        }
        #[test]
        fn t_5_a_401_on_a_console_download_or_restore_is_never_retried_blocking() {
            $crate::run!(Blocking, transfers::t_5_unauthenticated_not_retried())
        }
        #[test]
        fn t_4_a_user_name_holding_a_colon_is_refused_at_configuration_blocking() {
            $crate::run!(Blocking, transfers::t_4_colon_refused())
        }
        #[test]
        fn t_3a_console_download_and_restore_each_on_their_own_connection_blocking() {
            $crate::run!(Blocking, transfers::t_3a_own_connections())
        }
        #[test]
        fn t_3a_a_1001_close_on_a_console_download_or_restore_is_a_transport_failure_blocking() {
            $crate::run!(Blocking, transfers::t_3a_1001_on_either_connection())
        }
        #[test]
        fn t_2_a_console_call_with_an_https_seed_never_goes_to_an_http_seed_blocking() {
            $crate::run!(Blocking, transfers::t_2_no_http_seed())
        }
        #[test]
        fn t_2_a_console_call_started_over_https_never_follows_a_redirect_to_http_blocking() {
            $crate::run!(Blocking, transfers::t_2_no_redirect_to_http())
        }
        #[test]
        fn rs_4_a_console_restore_redirected_without_a_leader_backs_off_with_growing_pauses_blocking(
        ) {
            $crate::run!(Blocking, transfers::rs_4_restore_backs_off())
        }
        #[test]
        fn rs_1_restore_on_the_console_from_the_downloaded_file_completes_with_its_report_blocking(
        ) {
            $crate::run!(Blocking, transfers::rs_1_restored(Via::Console(WsAuth::Query)))
        }
        #[test]
        fn a_5_a_console_download_redirected_without_a_leader_backs_off_with_growing_pauses_blocking(
        ) {
            $crate::run!(Blocking, transfers::a_5_download_backs_off())
        }
        #[test]
        fn a_4_a_backup_downloaded_on_the_console_lands_verified_once_then_is_not_retained_blocking(
        ) {
            $crate::run!(Blocking, transfers::a_4_downloaded_once(Via::Console(WsAuth::Header)))
        }
        #[test]
        fn f_2_a_text_message_on_a_console_call_ends_the_attempt_blocking() {
            $crate::run!(Blocking, transfers::f_2_text_on_a_console_call_ends_the_attempt())
        }
        #[test]
        fn progress_on_the_console_is_told_per_attempt_and_shows_restarts_blocking() {
            $crate::run!(
                Blocking,
                transfers::progress_is_told_per_attempt_and_shows_restarts(Via::Console(
                    WsAuth::Query
                ))
            )
        }
    };
}
