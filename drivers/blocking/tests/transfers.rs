//! The separate calls of the blocking driver over console WebSockets against the loopback
//! cluster. The scenarios both drivers share (a download verified once, a restore from it,
//! each on a connection of its own, refusals, back-off, https kept to https) are written once
//! in `nervix-driver-tests`; a node closing with 1001 and a console that never answers are
//! checked here.

use nervix_blocking::{
    Config, Credentials, TransferError, Transfers, WsAuth, ATTEMPTS, DOWNLOAD_WS_PATH,
    RESTORE_WS_PATH,
};
use nervix_driver_tests::transfers::{archive_file, expected, restore_call, setup, PASSWORD, USER};
use nervix_driver_tests::{backed_up, entries, info_of, scratch, Blocking, Via};
use nervix_protocol::calls::*;
use nervix_protocol::command::ExecutionReference;
use std::time::Duration;

nervix_driver_tests::transfers_tests!(blocking);

/// Runs `f` on a thread of its own; the test fails when it has not ended within a minute.
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    nervix_driver_tests::bounded(Duration::from_secs(60), f)
}

#[test]
fn t_3a_a_1001_close_is_a_transport_failure_retried_a_bounded_number_of_times_blocking() {
    let (lb, config, dir) = setup::<Blocking>("gone", Via::Console(WsAuth::Header));
    let report = {
        let config = config.clone();
        bounded(move || backed_up(&Blocking, &config))
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

#[test]
fn rs_5_a_restore_keeps_its_connection_open_after_the_last_chunk_until_its_reply_wait_ends_blocking(
) {
    let (seed, seen) = silent_console();
    let dir = scratch::<Blocking>("silent");
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
    let dir = scratch::<Blocking>("stall");
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
fn rs_2_a_file_of_another_size_than_the_restores_archive_is_refused_and_nothing_sent_blocking() {
    let (lb, config, dir) = setup::<Blocking>("restore-size", Via::Console(WsAuth::Header));
    let (file, info) = archive_file(&dir, 2500);
    // Bytes appended after the archive was described: its first 2,500 bytes still hash to the
    // declared digest, but the file is not the archive.
    let mut grown = std::fs::read(&file).unwrap();
    grown.push(1);
    std::fs::write(&file, &grown).unwrap();
    let (err, attempts) = bounded(move || {
        let transfers = Transfers::new(&config).unwrap();
        let mut call = restore_call("restore-size-1", info);
        let err = transfers.restore(&mut call, &file).unwrap_err();
        (err, call.attempts())
    });
    assert!(
        matches!(
            err,
            TransferError::Call(CallError::ArchiveSize {
                declared: 2500,
                found: 2501
            })
        ),
        "{err:?}"
    );
    assert_eq!(attempts, 0);
    let restores = lb
        .stats()
        .calls
        .iter()
        .filter(|c| c.path == RESTORE_WS_PATH)
        .count();
    assert_eq!(restores, 0, "nothing was sent");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A console on 127.0.0.1 that reads the first message of each connection, closes with
/// `code` and from then on reads nothing and keeps the connection: a client's writes behind
/// that first message stall once the socket's buffers are full. Returns its endpoint and the
/// count of connections it accepted.
fn refusing_console(code: u16) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tungstenite::protocol::frame::coding::CloseCode;
    use tungstenite::protocol::CloseFrame;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::spawn(move || {
                let Ok(mut ws) = tungstenite::accept(stream) else {
                    return;
                };
                if !matches!(ws.read(), Ok(m) if m.is_binary()) {
                    return;
                }
                let _ = ws.close(Some(CloseFrame {
                    code: CloseCode::from(code),
                    reason: "".into(),
                }));
                let _ = ws.flush();
                // Held, never read again.
                std::thread::sleep(Duration::from_secs(60));
                drop(ws);
            });
        }
    });
    (format!("http://{addr}"), accepted)
}

/// T-3, T-6: a console restore whose start the server refused with a defect close code, and
/// whose chunks behind it then stall, is refused at once: the code is read after the stalled
/// write, never taken for a stall and the frames sent again.
#[test]
fn t_3_a_defect_close_met_by_a_stalled_console_restore_write_ends_the_call_blocking() {
    let (seed, accepted) = refusing_console(1009);
    let dir = scratch::<Blocking>("refused-stalled");
    // Far more than the sockets between client and server can hold.
    let (archive, info) = archive_file(&dir, 64 << 20);
    let mut config = Config::new(&[seed.as_str()], Credentials::new(USER, PASSWORD))
        .unwrap()
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    // The answer is there long before this deadline, however loaded the machine.
    config.write_timeout = Duration::from_secs(1);
    let (err, attempts) = bounded(move || {
        let transfers = Transfers::new(&config).unwrap();
        let mut call = RestoreCall::new(
            ExecutionReference::parse("restore-refused-stalled-1").unwrap(),
            "RESTORE DOMAIN tenant AS tenant_copy",
            info,
            TransferConfig::restore().with_timeouts(Duration::from_secs(5), Duration::from_secs(5)),
        )
        .unwrap();
        let err = transfers.restore(&mut call, &archive).unwrap_err();
        (err, call.attempts())
    });
    assert!(
        matches!(err, TransferError::FrameRefused { code: 1009 }),
        "{err:?}"
    );
    assert_eq!(attempts, 1);
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "never sent again"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
