//! The separate calls of the blocking driver over console WebSockets against the loopback
//! cluster: a backup's archive downloaded to disk only once verified, then restored from that
//! file, each on a connection of its own (T-3a), under header and query credentials, and a node
//! that closes with 1001 taken as a transport failure retried a bounded number of times.

use nervix_blocking::{
    Client, CommandResult, Config, Credentials, TransferError, Transfers, WsAuth, ATTEMPTS,
    DOWNLOAD_WS_PATH, RESTORE_WS_PATH,
};
use nervix_driver_support::call_end::retry_pause;
use nervix_loopback::{AuthSeen, CallFault, Loopback, LoopbackConfig};
use nervix_protocol::calls::*;
use nervix_protocol::client::CommandReport;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::schema::BackupDownloadFailure;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Credentials whose encodings break careless encoders (`+`, `%`, non-ASCII).
const USER: &str = "b~ü+%";
const PASSWORD: &str = "~~~>>>?";

/// Runs `f` on a thread of its own; the test fails when it has not ended within a minute.
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    nervix_loopback::bounded(Duration::from_secs(60), f)
}

fn setup(name: &str, auth: WsAuth) -> (Loopback, Config, PathBuf) {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap();
    let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
    let config = Config::new(&seeds, Credentials::new(USER, PASSWORD))
        .unwrap()
        .with_auth(auth)
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    let dir = std::env::temp_dir().join(format!(
        "nervix-blocking-{name}-{auth:?}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    (lb, config, dir)
}

/// A completed BACKUP of the domain `tenant`, run through a blocking client.
fn backed_up(config: &Config) -> CommandReport {
    let client = Client::connect(config.clone()).unwrap();
    let CommandResult::Completed(report) = client.execute("BACKUP DOMAIN tenant").unwrap() else {
        panic!("the backup did not complete");
    };
    let _ = client.close(false);
    report
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

fn expected(report: &CommandReport) -> ArchiveInfo {
    BackupDownload::from_report(report, TransferConfig::download())
        .unwrap()
        .expected()
}

fn restore_call(reference: &str, info: ArchiveInfo) -> RestoreCall {
    RestoreCall::new(
        ExecutionReference::parse(reference).unwrap(),
        "RESTORE DOMAIN tenant AS tenant_copy",
        info,
        TransferConfig::restore().with_chunk_size(1000),
    )
    .unwrap()
}

#[test]
fn t_3a_console_download_and_restore_each_on_their_own_connection_blocking() {
    for auth in [WsAuth::Header, WsAuth::Query] {
        let (lb, config, dir) = setup("console", auth);
        let d = dir.clone();
        let (info, attempts) = bounded(move || {
            let report = backed_up(&config);
            let transfers = Transfers::new(&config).unwrap();
            let archive = transfers.backup(&report, &d.join("tenant.nxb")).unwrap();
            let info = info_of(&archive);
            assert_eq!(info, expected(&report));
            let mut call = restore_call("restore-ws-blocking-1", info);
            let outcome = transfers.restore(&mut call, &archive).unwrap();
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
            (info, call.attempts())
        });
        assert!(info.total_bytes > 1000, "the restore spans several chunks");
        assert_eq!(attempts, 1);
        // One connection for the download and one for the restore, each at its own path and
        // each presenting the credentials the way the configuration says (T-4).
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

#[test]
fn a_4_a_backup_downloaded_on_the_console_lands_verified_once_then_is_not_retained_blocking() {
    let (_lb, config, dir) = setup("download", WsAuth::Header);
    let d = dir.clone();
    bounded(move || {
        let report = backed_up(&config);
        let transfers = Transfers::new(&config).unwrap();
        let target = d.join("tenant.nxb");
        let path = transfers.backup(&report, &target).unwrap();
        assert_eq!(path, target);
        let info = expected(&report);
        assert!(info.total_bytes > 0);
        assert_eq!(info_of(&target), info);
        // No temporary file is left beside it.
        assert_eq!(entries(&d), vec!["tenant.nxb".to_string()]);
        // Downloaded once: the archive is no longer retained, and nothing new is written.
        let again = d.join("again.nxb");
        let err = transfers.backup(&report, &again).unwrap_err();
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
        assert_eq!(entries(&d), vec!["tenant.nxb".to_string()]);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rs_1_restore_on_the_console_from_the_downloaded_file_completes_with_its_report_blocking() {
    let (lb, config, dir) = setup("restore", WsAuth::Query);
    let d = dir.clone();
    bounded(move || {
        let report = backed_up(&config);
        let transfers = Transfers::new(&config).unwrap();
        let archive = transfers.backup(&report, &d.join("tenant.nxb")).unwrap();
        let info = info_of(&archive);
        let mut call = restore_call("restore-ws-blocking-2", info);
        let outcome = transfers.restore(&mut call, &archive).unwrap();
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
    });
    let restores = lb
        .stats()
        .calls
        .iter()
        .filter(|c| c.path == RESTORE_WS_PATH)
        .count();
    assert_eq!(restores, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_3a_a_1001_close_is_a_transport_failure_retried_a_bounded_number_of_times_blocking() {
    let (lb, config, dir) = setup("gone", WsAuth::Header);
    let report = {
        let config = config.clone();
        bounded(move || backed_up(&config))
    };
    // The node is down: every console call it is offered closes with 1001.
    lb.kill(0);
    let d = dir.clone();
    let (cfg, rep) = (config.clone(), report.clone());
    let err = bounded(move || {
        let transfers = Transfers::new(&cfg).unwrap();
        transfers.backup(&rep, &d.join("tenant.nxb")).unwrap_err()
    });
    let TransferError::GaveUp { attempts, last } = err else {
        panic!("the download ended as {err:?}");
    };
    assert_eq!(attempts, ATTEMPTS);
    assert!(last.contains("Transport"), "{last}");
    let downloads = lb
        .stats()
        .calls
        .iter()
        .filter(|c| c.path == DOWNLOAD_WS_PATH)
        .count();
    assert_eq!(downloads, ATTEMPTS as usize, "one connection per attempt");
    // Nothing under the name asked for, nor any temporary file.
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    // Back up: the archive was never handed out, so it is still there to download.
    lb.revive(0);
    let want = expected(&report);
    let d = dir.clone();
    let path = bounded(move || {
        let transfers = Transfers::new(&config).unwrap();
        transfers.backup(&report, &d.join("tenant.nxb")).unwrap()
    });
    assert_eq!(info_of(&path), want);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a console that never answers saw on one connection: its path, the messages that
/// came, and how long the client kept the connection open after the last of them.
#[derive(Debug)]
struct Silent {
    path: String,
    messages: usize,
    held: Duration,
}

/// A console on 127.0.0.1 that accepts every connection, reads every message and answers none;
/// each connection's record is sent once the client left. (The handshake callback's error type
/// is tungstenite's own response, whose size is not ours to choose.)
#[allow(clippy::result_large_err)]
fn silent_console() -> (String, std::sync::mpsc::Receiver<Silent>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut path = String::new();
                let callback =
                    |req: &tungstenite::handshake::server::Request,
                     resp: tungstenite::handshake::server::Response| {
                        path = req.uri().path().to_string();
                        Ok(resp)
                    };
                let Ok(mut ws) = tungstenite::accept_hdr(stream, callback) else {
                    return;
                };
                let (mut messages, mut last) = (0, std::time::Instant::now());
                while let Ok(m) = ws.read() {
                    if !m.is_binary() {
                        break;
                    }
                    messages += 1;
                    last = std::time::Instant::now();
                }
                let _ = tx.send(Silent {
                    path,
                    messages,
                    held: last.elapsed(),
                });
            });
        }
    });
    (format!("http://{addr}"), rx)
}

fn archive_file(dir: &Path, len: usize) -> (PathBuf, ArchiveInfo) {
    let bytes: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
    let path = dir.join("archive.nxb");
    std::fs::write(&path, &bytes).unwrap();
    (path.clone(), info_of(&path))
}

#[test]
fn rs_5_a_restore_keeps_its_connection_open_after_the_last_chunk_until_its_reply_wait_ends_blocking(
) {
    let (seed, seen) = silent_console();
    let dir = std::env::temp_dir().join(format!("nervix-blocking-silent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (archive, info) = archive_file(&dir, 2500);
    let reply_wait = Duration::from_millis(300);
    let config = Config::new(&[seed.as_str()], Credentials::new(USER, PASSWORD))
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    let started = std::time::Instant::now();
    let (err, attempts) = bounded(move || {
        let transfers = Transfers::new(&config).unwrap();
        let mut call = RestoreCall::new(
            ExecutionReference::parse("restore-silent-1").unwrap(),
            "RESTORE DOMAIN tenant AS tenant_copy",
            info,
            TransferConfig::restore()
                .with_chunk_size(1000)
                .with_timeouts(Duration::from_secs(5), reply_wait),
        )
        .unwrap();
        let err = transfers.restore(&mut call, &archive).unwrap_err();
        (err, call.attempts())
    });
    // Each attempt waited for its reply no longer than the machine's own wait, then was
    // repeated whole: uncertain, since the whole archive went out.
    let TransferError::GaveUp { last, .. } = err else {
        panic!("the restore ended as {err:?}");
    };
    assert_eq!(attempts, ATTEMPTS);
    assert!(
        last.contains("Stalled") && last.contains("uncertain: true"),
        "{last}"
    );
    assert!(started.elapsed() >= reply_wait * ATTEMPTS);
    for _ in 0..ATTEMPTS {
        let s = seen.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(s.path, RESTORE_WS_PATH);
        // The start and three chunks, all on this attempt's own connection...
        assert_eq!(s.messages, 4, "{s:?}");
        // ...which stayed open after the last chunk while the reply was awaited (T-3a).
        assert!(s.held >= reply_wait / 2, "{s:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_6_a_download_whose_first_frame_never_comes_ends_at_its_own_wait_and_leaves_nothing_blocking() {
    let (seed, seen) = silent_console();
    let dir = std::env::temp_dir().join(format!("nervix-blocking-stall-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_, info) = archive_file(&dir, 100);
    std::fs::remove_file(dir.join("archive.nxb")).unwrap();
    let wait = Duration::from_millis(200);
    let config = Config::new(&[seed.as_str()], Credentials::new(USER, PASSWORD))
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    let d = dir.clone();
    let (err, attempts) = bounded(move || {
        let transfers = Transfers::new(&config).unwrap();
        let mut call = BackupDownload::new(
            ExecutionReference::parse("backup-silent-1").unwrap(),
            info,
            TransferConfig::download().with_timeouts(wait, wait),
        )
        .unwrap();
        let err = transfers
            .download(&mut call, &d.join("tenant.nxb"))
            .unwrap_err();
        (err, call.attempts())
    });
    let TransferError::GaveUp { last, .. } = err else {
        panic!("the download ended as {err:?}");
    };
    assert_eq!(attempts, ATTEMPTS);
    assert!(last.contains("Stalled"), "{last}");
    for _ in 0..ATTEMPTS {
        let s = seen.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(s.path, DOWNLOAD_WS_PATH);
        assert_eq!(s.messages, 1, "{s:?}");
    }
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_5_a_401_on_a_console_download_or_restore_is_never_retried_blocking() {
    let (lb, config, dir) = setup("refused", WsAuth::Header);
    let report = {
        let config = config.clone();
        bounded(move || backed_up(&config))
    };
    let wrong = Config::new(
        &lb.console_endpoints()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        Credentials::new(USER, "not the password"),
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    let (d, w) = (dir.clone(), wrong.clone());
    let err = bounded(move || {
        Transfers::new(&w)
            .unwrap()
            .backup(&report, &d.join("tenant.nxb"))
            .unwrap_err()
    });
    assert!(
        matches!(err, TransferError::Unauthenticated),
        "the download ended as {err:?}"
    );
    let downloads = lb.calls_to(DOWNLOAD_WS_PATH);
    assert_eq!(downloads.len(), 1, "one refused connection, no retry");
    assert!(!downloads[0].accepted);
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));

    let (source, info) = archive_file(&dir, 3000);
    let err = bounded(move || {
        let mut call = restore_call("0123456789abcdef0123456789abcdef", info);
        let err = Transfers::new(&wrong)
            .unwrap()
            .restore(&mut call, &source)
            .unwrap_err();
        (err, call.attempts())
    });
    assert!(
        matches!(err.0, TransferError::Unauthenticated),
        "the restore ended as {:?}",
        err.0
    );
    assert_eq!(err.1, 0, "no restore frame was ever sent");
    assert_eq!(lb.calls_to(RESTORE_WS_PATH).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_5_a_503_on_a_console_call_backs_off_and_retries_with_the_same_credentials_blocking() {
    let (lb, config, dir) = setup("busy", WsAuth::Query);
    let report = {
        let config = config.clone();
        bounded(move || backed_up(&config))
    };
    let want = expected(&report);
    lb.inject(CallFault::AuthUnavailable);
    lb.inject(CallFault::AuthUnavailable);
    let d = dir.clone();
    let (path, took) = bounded(move || {
        let began = std::time::Instant::now();
        let path = Transfers::new(&config)
            .unwrap()
            .backup(&report, &d.join("tenant.nxb"))
            .unwrap();
        (path, began.elapsed())
    });
    assert_eq!(info_of(&path), want);
    // Backed off, and longer the second time: at least the first pause and its double.
    let pauses = retry_pause(1) + retry_pause(2);
    assert!(took >= pauses, "{took:?} < {pauses:?}");
    let downloads = lb.calls_to(DOWNLOAD_WS_PATH);
    let accepted: Vec<bool> = downloads.iter().map(|d| d.accepted).collect();
    assert_eq!(accepted, [false, false, true]);
    assert!(
        downloads.iter().all(|d| d.auth == downloads[0].auth),
        "the same credentials each time: {downloads:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_6_a_console_call_closed_with_a_defect_code_ends_and_is_not_sent_again_blocking() {
    let (lb, config, dir) = setup("defect", WsAuth::Header);
    let report = {
        let config = config.clone();
        bounded(move || backed_up(&config))
    };
    lb.inject(CallFault::CloseCode(1009));
    let (d, cfg) = (dir.clone(), config.clone());
    let err = bounded(move || {
        Transfers::new(&cfg)
            .unwrap()
            .backup(&report, &d.join("tenant.nxb"))
            .unwrap_err()
    });
    assert!(
        matches!(err, TransferError::FrameRefused { code: 1009 }),
        "the download ended as {err:?}"
    );
    assert_eq!(
        lb.calls_to(DOWNLOAD_WS_PATH).len(),
        1,
        "the request went once"
    );
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));

    // A restore whose start is refused with 1007: ended, its frames never sent again.
    let (source, info) = archive_file(&dir, 3000);
    lb.inject(CallFault::CloseCode(1007));
    let err = bounded(move || {
        let mut call = restore_call("0123456789abcdef0123456789abcdef", info);
        Transfers::new(&config)
            .unwrap()
            .restore(&mut call, &source)
            .unwrap_err()
    });
    assert!(
        matches!(err, TransferError::FrameRefused { code: 1007 }),
        "the restore ended as {err:?}"
    );
    assert_eq!(lb.calls_to(RESTORE_WS_PATH).len(), 1);
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

fn tls_config(lb: &Loopback, seeds: &[&str]) -> Config {
    Config::new(seeds, Credentials::new(USER, PASSWORD))
        .unwrap()
        .with_root(lb.certificate_der().unwrap().to_vec())
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(2))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nervix-blocking-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn t_2_a_console_call_started_over_https_never_follows_a_redirect_to_http_blocking() {
    let lb = https_with_plain_node_1();
    let seeds = lb.console_endpoints().to_vec();
    assert!(seeds[0].starts_with("https://") && seeds[1].starts_with("http://"));
    let config = tls_config(&lb, &[seeds[0].as_str()]);
    let dir = scratch("no-http-redirect");
    let report = {
        let config = config.clone();
        bounded(move || backed_up(&config))
    };
    // Every node now redirects to node 1, reachable over http only.
    lb.set_leader(1);
    let d = dir.clone();
    let (download, restore) = bounded(move || {
        let transfers = Transfers::new(&config).unwrap();
        let download = transfers.backup(&report, &d.join("tenant.nxb"));
        let (file, info) = archive_file(&d, 5000);
        let mut call = restore_call("restore-no-http-blocking-1", info);
        (download, transfers.restore(&mut call, &file))
    });
    for err in [download.err(), restore.err()] {
        let err = err.expect("the call cannot succeed over https alone");
        assert!(
            matches!(&err, TransferError::GaveUp { last, .. } if last.contains("was not followed from https")),
            "{err:?}"
        );
    }
    let calls = lb.stats().calls;
    assert!(calls.len() > 2, "{calls:?}");
    assert!(
        calls.iter().all(|c| c.node == 0 && c.alpn.is_some()),
        "a call went over http: {calls:?}"
    );
    assert!(!dir.join("tenant.nxb").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_2_a_console_call_with_an_https_seed_never_goes_to_an_http_seed_blocking() {
    let lb = https_with_plain_node_1();
    let seeds = lb.console_endpoints().to_vec();
    // The http seed first: a client that has an https seed never uses it.
    let config = tls_config(&lb, &[seeds[1].as_str(), seeds[0].as_str()]);
    let dir = scratch("no-http-seed");
    let d = dir.clone();
    bounded(move || {
        let report = backed_up(&config);
        let transfers = Transfers::new(&config).unwrap();
        let path = transfers.backup(&report, &d.join("tenant.nxb")).unwrap();
        let mut call = restore_call("restore-no-http-seed-blocking-1", info_of(&path));
        let outcome = transfers.restore(&mut call, &path).unwrap();
        assert!(
            matches!(outcome, RestoreOutcome::Completed { .. }),
            "{outcome:?}"
        );
    });
    let calls = lb.stats().calls;
    assert!(
        calls.iter().all(|c| c.node == 0 && c.alpn.is_some()),
        "a call went over http: {calls:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
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

/// A loopback of two nodes whose leader, node 1, is down: node 0's redirects name no leader.
fn leaderless() -> (Loopback, Config) {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 2,
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap();
    let config = Config::new(
        &[lb.console_endpoints()[0].as_str()],
        Credentials::new(USER, PASSWORD),
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(10), Duration::from_secs(2));
    (lb, config)
}

#[test]
fn a_5_a_console_download_redirected_without_a_leader_backs_off_with_growing_pauses_blocking() {
    let (lb, config) = leaderless();
    let dir = scratch("leaderless-download");
    let report = {
        let config = config.clone();
        bounded(move || backed_up(&config))
    };
    lb.set_leader(1);
    lb.kill(1);
    let target = dir.join("tenant.nxb");
    let run = std::thread::spawn(move || Transfers::new(&config).unwrap().backup(&report, &target));
    let at = call_instants(&lb, DOWNLOAD_WS_PATH, 3);
    let result = run.join().unwrap();
    assert!(
        matches!(result, Err(TransferError::GaveUp { .. })),
        "{result:?}"
    );
    assert_eq!(at.len(), 3);
    // Spaced by the first pause, then its double: a constant pause, or none, fails this.
    let spaced = at[2] - at[0];
    let want = retry_pause(1) + retry_pause(2) - Duration::from_millis(5);
    assert!(spaced >= want, "{spaced:?} < {want:?}");
    assert!(at[2] - at[1] > at[1] - at[0], "{at:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rs_4_a_console_restore_redirected_without_a_leader_backs_off_with_growing_pauses_blocking() {
    let (lb, config) = leaderless();
    let dir = scratch("leaderless-restore");
    lb.set_leader(1);
    lb.kill(1);
    let (file, info) = archive_file(&dir, 5000);
    let run = std::thread::spawn(move || {
        let mut call = restore_call("restore-leaderless-blocking-1", info);
        Transfers::new(&config).unwrap().restore(&mut call, &file)
    });
    let at = call_instants(&lb, RESTORE_WS_PATH, 3);
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
fn t_4_a_user_name_holding_a_colon_is_refused_at_configuration_blocking() {
    use nervix_blocking::{ConfigError, CredentialsError};
    let err = Config::new(
        &["http://127.0.0.1:1/"],
        Credentials::new("ann:admin", "pw"),
    )
    .unwrap_err();
    assert_eq!(err, ConfigError::Credentials(CredentialsError::ColonInUser));
    // Credentials put in afterwards are refused too, by the calls and by a client.
    let mut config = Config::new(&["http://127.0.0.1:1/"], Credentials::new("ann", "a:b")).unwrap();
    config.credentials = Credentials::new("ann:admin", "pw");
    assert!(matches!(
        Transfers::new(&config),
        Err(TransferError::Config(ConfigError::Credentials(_)))
    ));
    assert!(Client::connect(config).is_err());
}
