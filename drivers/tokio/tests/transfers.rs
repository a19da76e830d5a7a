//! The separate calls over real gRPC streams and console WebSockets against the loopback
//! cluster: a backup's archive downloaded to disk only once verified, restored from that file,
//! and a resource uploaded from a file, each streamed in pieces by its machine.

use nervix_driver_support::call_end::retry_pause;
use nervix_loopback::{CallFault, Loopback, LoopbackConfig};
use nervix_protocol::calls::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::schema::{BackupDownloadFailure, OutcomeOrigin};
use nervix_tokio::{
    Client, CommandResult, Config, Credentials, TransferError, Transfers, Transport, WsAuth,
    DOWNLOAD_PATH, DOWNLOAD_WS_PATH, RESTORE_WS_PATH, UPLOAD_PATH,
};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn block<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test ends within its bound")
}

fn setup(name: &str) -> (Loopback, Config, PathBuf) {
    setup_on(name, Transport::Grpc)
}

fn setup_on(name: &str, transport: Transport) -> (Loopback, Config, PathBuf) {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        users: vec![("nervix".into(), "nervix".into())],
        ..LoopbackConfig::default()
    })
    .unwrap();
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let config = Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    let dir = std::env::temp_dir().join(format!("nervix-tokio-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    (lb, config, dir)
}

fn info_of(path: &Path) -> ArchiveInfo {
    let mut d = ArchiveDigest::new();
    d.update(&std::fs::read(path).unwrap());
    d.finish()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_4_a_backup_downloaded_over_grpc_lands_verified_once_then_is_not_retained() {
    let (_lb, config, dir) = setup("download");
    block(async {
        let client = Client::connect(config.clone()).await.unwrap();
        let CommandResult::Completed(report) =
            client.execute("BACKUP DOMAIN tenant").await.unwrap()
        else {
            panic!("the backup did not complete");
        };
        let transfers = Transfers::new(&config).unwrap();
        let target = dir.join("tenant.nxb");
        let path = transfers.backup(&report, &target).await.unwrap();
        assert_eq!(path, target);
        let expected = BackupDownload::from_report(&report, TransferConfig::download())
            .unwrap()
            .expected();
        assert!(expected.total_bytes > 0);
        assert_eq!(info_of(&target), expected);
        assert_eq!(entries(&dir), vec!["tenant.nxb".to_string()]);
        // Downloaded once: the archive is no longer retained, and nothing new is written.
        let again = dir.join("again.nxb");
        let err = transfers.backup(&report, &again).await.unwrap_err();
        assert!(
            matches!(
                err,
                TransferError::Unavailable {
                    failure: BackupDownloadFailure::NotRetained,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(entries(&dir), vec!["tenant.nxb".to_string()]);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rs_1_restore_backup_over_grpc_streams_the_file_and_completes_with_its_report() {
    let (_lb, config, dir) = setup("restore");
    block(async {
        let client = Client::connect(config.clone()).await.unwrap();
        let CommandResult::Completed(report) =
            client.execute("BACKUP DOMAIN tenant").await.unwrap()
        else {
            panic!("the backup did not complete");
        };
        let transfers = Transfers::new(&config).unwrap();
        let archive = transfers
            .backup(&report, &dir.join("tenant.nxb"))
            .await
            .unwrap();
        let info = info_of(&archive);
        let mut call = RestoreCall::new(
            ExecutionReference::parse("restore-grpc-1").unwrap(),
            "RESTORE DOMAIN tenant AS tenant_copy",
            info,
            TransferConfig::restore().with_chunk_size(1000),
        )
        .unwrap();
        let outcome = transfers.restore(&mut call, &archive).await.unwrap();
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
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_1_upload_resource_is_a_client_stream_that_installs_the_file() {
    let (_lb, config, dir) = setup("upload");
    block(async {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let file = dir.join("model.bin");
        std::fs::write(&file, &bytes).unwrap();
        let transfers = Transfers::new(&config).unwrap();
        let spec = |identity: &str| UploadSpec {
            domain: "tenant".into(),
            resource: "model".into(),
            identity: identity.into(),
        };
        let mut call = UploadCall::new(
            spec("upload-grpc-1"),
            bytes.len() as u64,
            TransferConfig::upload(),
        )
        .unwrap();
        let outcome = transfers.upload(&mut call, &file).await.unwrap();
        assert!(
            matches!(
                outcome,
                UploadOutcome::Installed {
                    version: 1,
                    origin: OutcomeOrigin::Executed,
                    ..
                }
            ),
            "{outcome:?}"
        );
        // The same identity and file again: the recorded version, recovered.
        let mut again = UploadCall::new(
            spec("upload-grpc-1"),
            bytes.len() as u64,
            TransferConfig::upload(),
        )
        .unwrap();
        let outcome = transfers.upload(&mut again, &file).await.unwrap();
        assert!(
            matches!(
                outcome,
                UploadOutcome::Installed {
                    version: 1,
                    origin: OutcomeOrigin::Recovered,
                    ..
                }
            ),
            "{outcome:?}"
        );
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_3a_console_download_and_restore_each_on_their_own_connection() {
    for auth in [WsAuth::Header, WsAuth::Query] {
        let (lb, config, dir) = setup_on("console", Transport::WebSocket(auth));
        block(async {
            let client = Client::connect(config.clone()).await.unwrap();
            let CommandResult::Completed(report) =
                client.execute("BACKUP DOMAIN tenant").await.unwrap()
            else {
                panic!("the backup did not complete");
            };
            let transfers = Transfers::new(&config).unwrap();
            let archive = transfers
                .backup(&report, &dir.join("tenant.nxb"))
                .await
                .unwrap();
            let info = info_of(&archive);
            let expected = BackupDownload::from_report(&report, TransferConfig::download())
                .unwrap()
                .expected();
            assert_eq!(info, expected);
            let mut call = RestoreCall::new(
                ExecutionReference::parse("restore-ws-1").unwrap(),
                "RESTORE DOMAIN tenant AS tenant_copy",
                info,
                TransferConfig::restore().with_chunk_size(1000),
            )
            .unwrap();
            let outcome = transfers.restore(&mut call, &archive).await.unwrap();
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
            // Uploads have no console call.
            let mut up = UploadCall::new(
                UploadSpec {
                    domain: "tenant".into(),
                    resource: "model".into(),
                    identity: "upload-ws-1".into(),
                },
                info.total_bytes,
                TransferConfig::upload(),
            )
            .unwrap();
            assert!(matches!(
                transfers.upload(&mut up, &archive).await,
                Err(TransferError::UploadNeedsGrpc)
            ));
        });
        // Each call came on a console connection of its own, at its own path.
        let paths: Vec<String> = lb.stats().calls.iter().map(|c| c.path.clone()).collect();
        assert!(
            paths.iter().any(|p| p == "/console/backups/download"),
            "{paths:?}"
        );
        assert!(
            paths.iter().any(|p| p == "/console/backups/restore"),
            "{paths:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn upload_of(dir: &Path, identity: &str) -> (UploadCall, PathBuf) {
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

/// A completed BACKUP of `tenant`.
async fn backed_up(config: &Config) -> nervix_protocol::client::CommandReport {
    let client = Client::connect(config.clone()).await.unwrap();
    let CommandResult::Completed(report) = client.execute("BACKUP DOMAIN tenant").await.unwrap()
    else {
        panic!("the backup did not complete");
    };
    report
}

#[test]
fn t_5_a_separate_call_refused_as_unauthenticated_is_never_retried() {
    for transport in [Transport::Grpc, Transport::WebSocket(WsAuth::Header)] {
        let (lb, config, dir) = setup_on(&format!("unauth-{transport:?}"), transport);
        let seeds: Vec<String> = match transport {
            Transport::Grpc => lb.grpc_endpoints().to_vec(),
            _ => lb.console_endpoints().to_vec(),
        };
        let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
        let wrong = Config::new(&seeds, Credentials::new("nervix", "wrong"), transport)
            .unwrap()
            .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
        block(async {
            let report = backed_up(&config).await;
            let transfers = Transfers::new(&wrong).unwrap();
            let err = transfers
                .backup(&report, &dir.join("tenant.nxb"))
                .await
                .unwrap_err();
            assert!(matches!(err, TransferError::Unauthenticated), "{err:?}");
            let path = match transport {
                Transport::Grpc => DOWNLOAD_PATH,
                _ => DOWNLOAD_WS_PATH,
            };
            let downloads = lb.calls_to(path);
            assert_eq!(downloads.len(), 1, "{transport:?}: no retry: {downloads:?}");
            assert!(!downloads[0].accepted);
            assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
            if transport == Transport::Grpc {
                let (mut call, file) = upload_of(&dir, "upload-unauth");
                let err = transfers.upload(&mut call, &file).await.unwrap_err();
                assert!(matches!(err, TransferError::Unauthenticated), "{err:?}");
                assert_eq!(lb.calls_to(UPLOAD_PATH).len(), 1, "no retry");
            }
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn t_5_a_separate_call_refused_as_unavailable_backs_off_and_retries_with_the_same_credentials() {
    for transport in [Transport::Grpc, Transport::WebSocket(WsAuth::Query)] {
        let (lb, config, dir) = setup_on(&format!("busy-{transport:?}"), transport);
        block(async {
            let report = backed_up(&config).await;
            let want = BackupDownload::from_report(&report, TransferConfig::download())
                .unwrap()
                .expected();
            lb.inject(CallFault::AuthUnavailable);
            lb.inject(CallFault::AuthUnavailable);
            let transfers = Transfers::new(&config).unwrap();
            let began = std::time::Instant::now();
            let path = transfers
                .backup(&report, &dir.join("tenant.nxb"))
                .await
                .unwrap();
            let took = began.elapsed();
            assert_eq!(info_of(&path), want);
            // Backed off, and longer the second time: at least the first pause and its double.
            let pauses = retry_pause(1) + retry_pause(2);
            assert!(took >= pauses, "{transport:?}: {took:?} < {pauses:?}");
            let path = match transport {
                Transport::Grpc => DOWNLOAD_PATH,
                _ => DOWNLOAD_WS_PATH,
            };
            let downloads = lb.calls_to(path);
            let accepted: Vec<bool> = downloads.iter().map(|d| d.accepted).collect();
            assert_eq!(accepted, [false, false, true], "{transport:?}");
            assert!(downloads.iter().all(|d| d.auth == downloads[0].auth));
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn t_6_a_separate_call_ended_with_out_of_range_or_internal_is_not_sent_again() {
    let (lb, config, dir) = setup("refused-frame");
    block(async {
        let transfers = Transfers::new(&config).unwrap();
        lb.inject(CallFault::GrpcStatus(11));
        let (mut call, file) = upload_of(&dir, "upload-refused");
        let err = transfers.upload(&mut call, &file).await.unwrap_err();
        assert!(
            matches!(err, TransferError::FrameRefused { code: 11 }),
            "{err:?}"
        );
        assert_eq!(lb.calls_to(UPLOAD_PATH).len(), 1, "the upload went once");

        let report = backed_up(&config).await;
        lb.inject(CallFault::GrpcStatus(13));
        let err = transfers
            .backup(&report, &dir.join("tenant.nxb"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, TransferError::FrameRefused { code: 13 }),
            "{err:?}"
        );
        assert_eq!(lb.calls_to(DOWNLOAD_PATH).len(), 1, "the request went once");
        assert!(!dir.join("tenant.nxb").exists());
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_3_a_console_call_closed_with_a_defect_code_ends_and_is_not_sent_again() {
    let (lb, config, dir) = setup_on("defect-close", Transport::WebSocket(WsAuth::Header));
    block(async {
        let report = backed_up(&config).await;
        let transfers = Transfers::new(&config).unwrap();
        lb.inject(CallFault::CloseCode(1008));
        let err = transfers
            .backup(&report, &dir.join("tenant.nxb"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, TransferError::FrameRefused { code: 1008 }),
            "{err:?}"
        );
        assert_eq!(lb.calls_to(DOWNLOAD_WS_PATH).len(), 1);
        let archive: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let file = dir.join("archive.nxb");
        std::fs::write(&file, &archive).unwrap();
        let mut call = RestoreCall::new(
            ExecutionReference::parse("restore-defect-1").unwrap(),
            "RESTORE DOMAIN tenant AS tenant_copy",
            info_of(&file),
            TransferConfig::restore().with_chunk_size(1000),
        )
        .unwrap();
        lb.inject(CallFault::CloseCode(1009));
        let err = transfers.restore(&mut call, &file).await.unwrap_err();
        assert!(
            matches!(err, TransferError::FrameRefused { code: 1009 }),
            "{err:?}"
        );
        assert_eq!(lb.calls_to(RESTORE_WS_PATH).len(), 1);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A loopback of two nodes served over https, but node 1 over plain http.
fn https_with_plain_node_1() -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 2,
        tls: true,
        plain_nodes: vec![1],
        ..LoopbackConfig::default()
    })
    .unwrap()
}

fn endpoints_of(lb: &Loopback, transport: Transport) -> Vec<String> {
    match transport {
        Transport::Grpc => lb.grpc_endpoints().to_vec(),
        _ => lb.console_endpoints().to_vec(),
    }
}

fn config_at(lb: &Loopback, seeds: &[String], transport: Transport) -> Config {
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)
        .unwrap()
        .with_root(lb.certificate_der().unwrap().to_vec())
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(2))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nervix-tokio-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn restore_of(reference: &str, file: &Path) -> RestoreCall {
    RestoreCall::new(
        ExecutionReference::parse(reference).unwrap(),
        "RESTORE DOMAIN tenant AS tenant_copy",
        info_of(file),
        TransferConfig::restore().with_chunk_size(1000),
    )
    .unwrap()
}

#[test]
fn t_2_a_separate_call_started_over_https_never_follows_a_redirect_to_http() {
    for transport in [Transport::Grpc, Transport::WebSocket(WsAuth::Header)] {
        let lb = https_with_plain_node_1();
        let endpoints = endpoints_of(&lb, transport);
        assert!(endpoints[0].starts_with("https://") && endpoints[1].starts_with("http://"));
        let config = config_at(&lb, &endpoints[..1], transport);
        let dir = scratch(&format!("no-http-redirect-{transport:?}"));
        block(async {
            let report = backed_up(&config).await;
            // Every node now redirects to node 1, reachable over http only.
            lb.set_leader(1);
            let transfers = Transfers::new(&config).unwrap();
            let archive: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
            let file = dir.join("archive.nxb");
            std::fs::write(&file, &archive).unwrap();
            let mut restore = restore_of("restore-no-http-1", &file);
            let (mut upload, up_file) = upload_of(&dir, "upload-no-http");
            let target = dir.join("tenant.nxb");
            let (download, restored, uploaded) = tokio::join!(
                transfers.backup(&report, &target),
                transfers.restore(&mut restore, &file),
                async {
                    match transport {
                        Transport::Grpc => Some(transfers.upload(&mut upload, &up_file).await),
                        _ => None,
                    }
                },
            );
            let mut errors = vec![download.err(), restored.err()];
            if let Some(up) = uploaded {
                errors.push(up.err());
            }
            for err in errors {
                let err = err.expect("the call cannot succeed over https alone");
                assert!(
                    matches!(&err, TransferError::GaveUp { last, .. } if last.contains("was not followed from https")),
                    "{transport:?}: {err:?}"
                );
            }
        });
        let calls = lb.stats().calls;
        assert!(calls.len() > 3, "{transport:?}: {calls:?}");
        assert!(
            calls.iter().all(|c| c.node == 0 && c.alpn.is_some()),
            "{transport:?}: a call went over http: {calls:?}"
        );
        assert!(!dir.join("tenant.nxb").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn t_2_a_separate_call_with_an_https_seed_never_goes_to_an_http_seed() {
    for transport in [Transport::Grpc, Transport::WebSocket(WsAuth::Query)] {
        let lb = https_with_plain_node_1();
        let endpoints = endpoints_of(&lb, transport);
        // The http seed first: a client that has an https seed never uses it.
        let config = config_at(
            &lb,
            &[endpoints[1].clone(), endpoints[0].clone()],
            transport,
        );
        let dir = scratch(&format!("no-http-seed-{transport:?}"));
        block(async {
            let report = backed_up(&config).await;
            let transfers = Transfers::new(&config).unwrap();
            let path = transfers
                .backup(&report, &dir.join("tenant.nxb"))
                .await
                .unwrap();
            let mut restore = restore_of("restore-no-http-seed-1", &path);
            let outcome = transfers.restore(&mut restore, &path).await.unwrap();
            assert!(
                matches!(outcome, RestoreOutcome::Completed { .. }),
                "{outcome:?}"
            );
            if transport == Transport::Grpc {
                let (mut upload, file) = upload_of(&dir, "upload-no-http-seed");
                transfers.upload(&mut upload, &file).await.unwrap();
            }
        });
        let calls = lb.stats().calls;
        assert!(
            calls.iter().all(|c| c.node == 0 && c.alpn.is_some()),
            "{transport:?}: a call went over http: {calls:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The instants at which the loopback saw the first `n` calls to `path`, polled every 2 ms
/// for at most 20 s.
fn call_instants(lb: &Loopback, path: &str, n: usize) -> Vec<std::time::Instant> {
    let mut seen = Vec::new();
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while seen.len() < n && std::time::Instant::now() < end {
        let count = lb.calls_to(path).len();
        while seen.len() < count.min(n) {
            seen.push(std::time::Instant::now());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    seen
}

#[test]
fn a_5_a_download_redirected_without_a_leader_backs_off_with_growing_pauses() {
    for transport in [Transport::Grpc, Transport::WebSocket(WsAuth::Header)] {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 2,
            ..LoopbackConfig::default()
        })
        .unwrap();
        let endpoints = endpoints_of(&lb, transport);
        let seeds: Vec<&str> = endpoints.iter().map(String::as_str).collect();
        let config = Config::new(&seeds[..1], Credentials::new("nervix", "nervix"), transport)
            .unwrap()
            .with_timeouts(Duration::from_secs(10), Duration::from_secs(2));
        let dir = scratch(&format!("leaderless-{transport:?}"));
        let report = block(backed_up(&config));
        // The leader is node 1, and it is down: node 0's redirects name no leader.
        lb.set_leader(1);
        lb.kill(1);
        let path = match transport {
            Transport::Grpc => DOWNLOAD_PATH,
            _ => DOWNLOAD_WS_PATH,
        };
        let target = dir.join("tenant.nxb");
        let run = std::thread::spawn(move || {
            block(async {
                let transfers = Transfers::new(&config).unwrap();
                transfers.backup(&report, &target).await
            })
        });
        let at = call_instants(&lb, path, 3);
        let result = run.join().unwrap();
        assert!(
            matches!(result, Err(TransferError::GaveUp { .. })),
            "{transport:?}: {result:?}"
        );
        assert_eq!(at.len(), 3, "{transport:?}");
        // The attempts are spaced by the first pause, then its double: a constant pause, or
        // none, fails this.
        let spaced = at[2] - at[0];
        let want = retry_pause(1) + retry_pause(2) - Duration::from_millis(5);
        assert!(spaced >= want, "{transport:?}: {spaced:?} < {want:?}");
        assert!(at[2] - at[1] > at[1] - at[0], "{transport:?}: {at:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn u_4_an_upload_redirected_without_a_leader_backs_off_with_growing_pauses() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 2,
        ..LoopbackConfig::default()
    })
    .unwrap();
    let config = Config::new(
        &[lb.grpc_endpoints()[0].as_str()],
        Credentials::new("nervix", "nervix"),
        Transport::Grpc,
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(10), Duration::from_secs(2));
    lb.set_leader(1);
    lb.kill(1);
    let dir = scratch("leaderless-upload");
    let (mut call, file) = upload_of(&dir, "upload-leaderless");
    let run = std::thread::spawn(move || {
        block(async {
            let transfers = Transfers::new(&config).unwrap();
            transfers.upload(&mut call, &file).await
        })
    });
    let at = call_instants(&lb, UPLOAD_PATH, 3);
    let result = run.join().unwrap();
    assert!(
        matches!(result, Err(TransferError::GaveUp { .. })),
        "{result:?}"
    );
    assert_eq!(at.len(), 3);
    let spaced = at[2] - at[0];
    let want = retry_pause(1) + retry_pause(2) - Duration::from_millis(5);
    assert!(spaced >= want, "{spaced:?} < {want:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rs_4_a_restore_redirected_without_a_leader_backs_off_with_growing_pauses() {
    for transport in [Transport::Grpc, Transport::WebSocket(WsAuth::Header)] {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 2,
            ..LoopbackConfig::default()
        })
        .unwrap();
        let endpoints = endpoints_of(&lb, transport);
        let config = Config::new(
            &[endpoints[0].as_str()],
            Credentials::new("nervix", "nervix"),
            transport,
        )
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(2));
        lb.set_leader(1);
        lb.kill(1);
        let dir = scratch(&format!("leaderless-restore-{transport:?}"));
        let archive: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let file = dir.join("archive.nxb");
        std::fs::write(&file, &archive).unwrap();
        let mut call = restore_of("restore-leaderless-1", &file);
        let run = std::thread::spawn(move || {
            block(async {
                let transfers = Transfers::new(&config).unwrap();
                transfers.restore(&mut call, &file).await
            })
        });
        let path = match transport {
            Transport::Grpc => nervix_loopback::RESTORE_PATH,
            _ => RESTORE_WS_PATH,
        };
        let at = call_instants(&lb, path, 3);
        let result = run.join().unwrap();
        assert!(
            matches!(result, Err(TransferError::GaveUp { .. })),
            "{transport:?}: {result:?}"
        );
        assert_eq!(at.len(), 3, "{transport:?}");
        let spaced = at[2] - at[0];
        let want = retry_pause(1) + retry_pause(2) - Duration::from_millis(5);
        assert!(spaced >= want, "{transport:?}: {spaced:?} < {want:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn t_4_a_user_name_holding_a_colon_is_refused_at_configuration() {
    let err = Config::new(
        &["http://127.0.0.1:1/"],
        Credentials::new("ann:admin", "pw"),
        Transport::Grpc,
    )
    .unwrap_err();
    assert_eq!(
        err,
        nervix_tokio::ConfigError::Credentials(nervix_tokio::CredentialsError::ColonInUser)
    );
    // Credentials put in afterwards are refused too, by the calls and by a client.
    let mut config = Config::new(
        &["http://127.0.0.1:1/"],
        Credentials::new("ann", "pw:with:colons"),
        Transport::Grpc,
    )
    .unwrap();
    config.credentials = Credentials::new("ann:admin", "pw");
    assert!(matches!(
        Transfers::new(&config),
        Err(TransferError::Config(
            nervix_tokio::ConfigError::Credentials(_)
        ))
    ));
    let refused = block(Client::connect(config));
    assert!(refused.is_err());
    assert!(Credentials::try_new("ann:admin", "pw").is_err());
    assert!(Credentials::try_new("ann", "pw:x").is_ok());
}

/// A gRPC server on 127.0.0.1 that accepts every call and grants no flow-control window:
/// nothing the client sends on a stream can go. Returns its endpoint.
fn windowless_server(rt: &tokio::runtime::Runtime) -> String {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    rt.spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let Ok(mut conn) = h2::server::Builder::new()
                    .initial_window_size(0)
                    .handshake::<_, bytes::Bytes>(sock)
                    .await
                else {
                    return;
                };
                let mut held = Vec::new();
                while let Some(Ok(call)) = conn.accept().await {
                    // Held, never answered, never read.
                    held.push(call);
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}/")
}

#[test]
fn t_8_an_upload_or_restore_whose_start_gets_no_window_ends_by_its_deadlines() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let seed = windowless_server(&rt);
    let mut config = Config::new(
        &[seed.as_str()],
        Credentials::new("nervix", "nervix"),
        Transport::Grpc,
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(1), Duration::from_secs(1));
    config.write_timeout = Duration::from_millis(200);
    let dir = scratch("windowless");
    let mut quick = TransferConfig::upload();
    quick.frame_timeout = Duration::from_millis(200);
    quick.reply_timeout = Duration::from_millis(200);
    let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let file = dir.join("archive.bin");
    std::fs::write(&file, &bytes).unwrap();
    let began = std::time::Instant::now();
    let (upload, restore) = rt.block_on(async {
        let run = async {
            let transfers = Transfers::new(&config).unwrap();
            let mut up = UploadCall::new(
                UploadSpec {
                    domain: "tenant".into(),
                    resource: "model".into(),
                    identity: "upload-windowless".into(),
                },
                bytes.len() as u64,
                quick,
            )
            .unwrap();
            let mut rs = RestoreCall::new(
                ExecutionReference::parse("restore-windowless-1").unwrap(),
                "RESTORE DOMAIN tenant AS tenant_copy",
                info_of(&file),
                quick,
            )
            .unwrap();
            tokio::join!(
                transfers.upload(&mut up, &file),
                transfers.restore(&mut rs, &file)
            )
        };
        tokio::time::timeout(Duration::from_secs(15), run)
            .await
            .expect("the calls end by their deadlines")
    });
    let took = began.elapsed();
    // Five attempts of at most the write deadline each, and the pauses between them.
    assert!(took < Duration::from_secs(8), "{took:?}");
    for r in [upload.map(|_| ()), restore.map(|_| ())] {
        assert!(
            matches!(&r, Err(TransferError::GaveUp { attempts: 5, .. })),
            "{r:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
