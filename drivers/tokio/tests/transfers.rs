//! The separate calls over real gRPC streams and console WebSockets against the loopback
//! cluster: a backup's archive downloaded to disk only once verified, restored from that file,
//! and a resource uploaded from a file, each streamed in pieces by its machine. The scenarios
//! both drivers share are written once in `nervix-driver-tests`; uploads, gRPC statuses and
//! a server granting no flow-control window are this driver's alone.

use nervix_driver_tests::transfers::{archive_file, restore_call, setup, upload_of};
use nervix_driver_tests::{backed_up, entries, info_of, scratch, Driver, Tokio, Via};
use nervix_loopback::CallFault;
use nervix_protocol::calls::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::schema::OutcomeOrigin;
use nervix_tokio::{
    Config, Credentials, TransferError, Transfers, Transport, DOWNLOAD_PATH, RESTORE_PATH,
    UPLOAD_PATH,
};
use std::time::Duration;

nervix_driver_tests::transfers_tests!(tokio);

#[test]
fn t_1_upload_resource_is_a_client_stream_that_installs_the_file() {
    let d = Tokio::new();
    let (_lb, config, dir) = setup::<Tokio>("upload", Via::Grpc);
    d.block(async {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let file = dir.join("model.bin");
        std::fs::write(&file, &bytes).unwrap();
        let transfers = Transfers::new(&config).unwrap();
        // Installed and executed; then the same identity and file again: the recorded
        // version, recovered.
        for origin in [OutcomeOrigin::Executed, OutcomeOrigin::Recovered] {
            let spec = UploadSpec {
                domain: "tenant".into(),
                resource: "model".into(),
                identity: "upload-grpc-1".into(),
            };
            let mut call =
                UploadCall::new(spec, bytes.len() as u64, TransferConfig::upload()).unwrap();
            let outcome = transfers.upload(&mut call, &file).await.unwrap();
            assert!(
                matches!(
                    outcome,
                    UploadOutcome::Installed { version: 1, origin: o, .. } if o == origin
                ),
                "{outcome:?}"
            );
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_6_a_separate_call_ended_with_out_of_range_or_internal_is_not_sent_again() {
    let d = Tokio::new();
    let (lb, config, dir) = setup::<Tokio>("refused-frame", Via::Grpc);
    let report = backed_up(&d, &config);
    d.block(async {
        let transfers = Transfers::new(&config).unwrap();
        lb.inject(CallFault::GrpcStatus(11));
        let (mut call, file) = upload_of(&dir, "upload-refused");
        let err = transfers.upload(&mut call, &file).await.unwrap_err();
        assert!(
            matches!(err, TransferError::FrameRefused { code: 11 }),
            "{err:?}"
        );
        assert_eq!(lb.calls_to(UPLOAD_PATH).len(), 1, "the upload went once");

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

        // A restore whose start is refused: ended, its frames never sent again.
        for (code, calls) in [(11, 1), (13, 2)] {
            let (source, info) = archive_file(&dir, 3000);
            let mut call = restore_call(&format!("restore-refused-{code}"), info);
            lb.inject(CallFault::GrpcStatus(code));
            let err = transfers.restore(&mut call, &source).await.unwrap_err();
            assert!(
                matches!(err, TransferError::FrameRefused { code: c } if c == code),
                "{err:?}"
            );
            assert_eq!(
                lb.calls_to(RESTORE_PATH).len(),
                calls,
                "the restore went once"
            );
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
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
    let dir = scratch::<Tokio>("windowless");
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

#[test]
fn u_2_a_file_of_another_size_than_the_uploads_archive_is_refused_and_nothing_sent() {
    let d = Tokio::new();
    let (lb, config, dir) = setup::<Tokio>("upload-size", Via::Grpc);
    d.block(async {
        let transfers = Transfers::new(&config).unwrap();
        // The call's archive is 50,000 bytes; the file grew or shrank since.
        for len in [50_001usize, 49_999] {
            let (mut call, file) = upload_of(&dir, "upload-size-1");
            std::fs::write(&file, vec![7u8; len]).unwrap();
            let err = transfers.upload(&mut call, &file).await.unwrap_err();
            assert!(
                matches!(
                    &err,
                    TransferError::Call(CallError::ArchiveSize { declared: 50_000, found })
                        if *found == len as u64
                ),
                "{err:?}"
            );
            assert_eq!(call.attempts(), 0);
        }
    });
    let uploads = lb
        .stats()
        .calls
        .iter()
        .filter(|c| c.path == UPLOAD_PATH)
        .count();
    assert_eq!(uploads, 0, "nothing was sent");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rs_2_a_file_of_another_size_than_the_restores_archive_is_refused_and_nothing_sent() {
    let d = Tokio::new();
    let (lb, config, dir) = setup::<Tokio>("restore-size", Via::Grpc);
    d.block(async {
        let transfers = Transfers::new(&config).unwrap();
        let (file, info) = archive_file(&dir, 2500);
        // Bytes appended after the archive was described: its first 2,500 bytes still hash
        // to the declared digest, but the file is not the archive.
        let mut grown = std::fs::read(&file).unwrap();
        grown.push(1);
        std::fs::write(&file, &grown).unwrap();
        let mut call = restore_call("restore-size-1", info);
        let err = transfers.restore(&mut call, &file).await.unwrap_err();
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
        assert_eq!(call.attempts(), 0);
    });
    let restores = lb
        .stats()
        .calls
        .iter()
        .filter(|c| c.path == RESTORE_PATH)
        .count();
    assert_eq!(restores, 0, "nothing was sent");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a console that never answers saw on one connection: its path, the messages that came,
/// and how long the client kept the connection open after the last of them.
#[derive(Debug)]
struct Silent {
    path: String,
    messages: usize,
    held: Duration,
}

/// A console on 127.0.0.1 that accepts every connection, reads every message and answers none;
/// each connection's record is sent once the client left. (The handshake callback's error type
/// is the WebSocket library's own response, whose size is not ours to choose.)
#[allow(clippy::result_large_err)]
fn silent_console() -> (String, std::sync::mpsc::Receiver<Silent>) {
    use tokio_tungstenite::tungstenite;
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

/// A console configuration of the tokio driver for `seed`.
fn console_config(seed: &str) -> Config {
    Config::new(
        &[seed],
        Credentials::new("nervix", "nervix"),
        Transport::WebSocket(nervix_tokio::WsAuth::Header),
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(10), Duration::from_secs(3))
}

#[test]
fn a_6_a_download_whose_first_frame_never_comes_ends_at_its_own_wait_and_leaves_nothing() {
    let (seed, seen) = silent_console();
    let d = Tokio::new();
    let dir = scratch::<Tokio>("stall");
    let (_, info) = archive_file(&dir, 100);
    std::fs::remove_file(dir.join("archive.nxb")).unwrap();
    let wait = Duration::from_millis(200);
    let config = console_config(&seed);
    let started = std::time::Instant::now();
    let (err, attempts) = d.block(async {
        let transfers = Transfers::new(&config).unwrap();
        let mut call = BackupDownload::new(
            ExecutionReference::parse("backup-silent-1").unwrap(),
            info,
            TransferConfig::download().with_timeouts(wait, wait),
        )
        .unwrap();
        let target = dir.join("tenant.nxb");
        let run = transfers.download(&mut call, &target);
        let err = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("the download ends by its own waits")
            .unwrap_err();
        (err, call.attempts())
    });
    let TransferError::GaveUp { last, .. } = err else {
        panic!("the download ended as {err:?}");
    };
    assert_eq!(attempts, nervix_driver_support::transfer::ATTEMPTS);
    assert!(last.contains("Stalled"), "{last}");
    assert!(started.elapsed() >= wait * attempts);
    for _ in 0..attempts {
        let s = seen.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(s.path, nervix_tokio::DOWNLOAD_WS_PATH);
        assert_eq!(s.messages, 1, "{s:?}");
    }
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rs_5_a_restore_keeps_its_connection_open_after_the_last_chunk_until_its_reply_wait_ends() {
    let (seed, seen) = silent_console();
    let d = Tokio::new();
    let dir = scratch::<Tokio>("silent");
    let (archive, info) = archive_file(&dir, 2500);
    let reply_wait = Duration::from_millis(300);
    let config = console_config(&seed);
    let started = std::time::Instant::now();
    let (err, attempts) = d.block(async {
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
        let run = transfers.restore(&mut call, &archive);
        let err = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("the restore ends by its own waits")
            .unwrap_err();
        (err, call.attempts())
    });
    // Each attempt waited for its reply no longer than the machine's own wait, then was
    // repeated whole: uncertain, since the whole archive went out.
    let TransferError::GaveUp { last, .. } = err else {
        panic!("the restore ended as {err:?}");
    };
    assert_eq!(attempts, nervix_driver_support::transfer::ATTEMPTS);
    assert!(
        last.contains("Stalled") && last.contains("uncertain: true"),
        "{last}"
    );
    assert!(started.elapsed() >= reply_wait * attempts);
    for _ in 0..attempts {
        let s = seen.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(s.path, nervix_tokio::RESTORE_WS_PATH);
        // The start and three chunks, all on this attempt's own connection...
        assert_eq!(s.messages, 4, "{s:?}");
        // ...which stayed open after the last chunk while the reply was awaited.
        assert!(s.held >= reply_wait / 2, "{s:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A console on 127.0.0.1 that reads the first message of each connection, closes with
/// `code` and from then on reads nothing and keeps the connection: a client's writes behind
/// that first message stall once the socket's buffers are full. Returns its endpoint and the
/// count of connections it accepted.
fn refusing_console(
    rt: &tokio::runtime::Runtime,
    code: u16,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::Message;
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    rt.spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(sock).await else {
                    return;
                };
                if !matches!(ws.next().await, Some(Ok(Message::Binary(_)))) {
                    return;
                }
                let close = Message::Close(Some(CloseFrame {
                    code: CloseCode::from(code),
                    reason: "".into(),
                }));
                let _ = ws.send(close).await;
                // Held, never read again.
                tokio::time::sleep(Duration::from_secs(60)).await;
                drop(ws);
            });
        }
    });
    (format!("http://127.0.0.1:{port}/"), accepted)
}

/// T-3, T-6: a console restore whose start the server refused with a defect close code, and
/// whose chunks behind it then stall, is refused at once: the code is read after the stalled
/// write, as after a failed one, never taken for a stall and the frames sent again.
#[test]
fn t_3_a_defect_close_met_by_a_stalled_console_restore_write_ends_the_call() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (seed, accepted) = refusing_console(&rt, 1009);
    let dir = scratch::<Tokio>("refused-stalled");
    // Far more than the sockets between client and server can hold.
    let (archive, info) = archive_file(&dir, 64 << 20);
    let mut config = Config::new(
        &[seed.as_str()],
        Credentials::new("nervix", "nervix"),
        Transport::WebSocket(nervix_tokio::WsAuth::Header),
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    // The answer is there long before this deadline, however loaded the machine.
    config.write_timeout = Duration::from_secs(1);
    let (err, attempts) = rt.block_on(async {
        let run = async {
            let transfers = Transfers::new(&config).unwrap();
            let mut call = RestoreCall::new(
                ExecutionReference::parse("restore-refused-stalled-1").unwrap(),
                "RESTORE DOMAIN tenant AS tenant_copy",
                info,
                TransferConfig::restore()
                    .with_timeouts(Duration::from_secs(5), Duration::from_secs(5)),
            )
            .unwrap();
            let err = transfers.restore(&mut call, &archive).await.unwrap_err();
            (err, call.attempts())
        };
        tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the restore ends by its deadlines")
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

/// A gRPC server on 127.0.0.1 that reads the first piece of each call, answers it at once with
/// a trailers-only `status`, and then keeps the call without reading or granting any more
/// window: a client's writes behind that first piece stall. Returns its endpoint and the count
/// of calls it accepted.
fn refusing_grpc_server(
    rt: &tokio::runtime::Runtime,
    status: u32,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    rt.spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            let counted = counted.clone();
            tokio::spawn(async move {
                let Ok(mut conn) = h2::server::handshake(sock).await else {
                    return;
                };
                // The connection goes on being polled while each call is served beside it:
                // a call's data arrives only through the connection.
                while let Some(Ok((request, mut respond))) = conn.accept().await {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    tokio::spawn(async move {
                        let mut body = request.into_body();
                        let _ = body.data().await;
                        let answer = http::Response::builder()
                            .status(200)
                            .header("content-type", "application/grpc")
                            .header("grpc-status", status.to_string())
                            .body(())
                            .unwrap();
                        let _ = respond.send_response(answer, true);
                        // Held, never read again.
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        drop((body, respond));
                    });
                }
            });
        }
    });
    (format!("http://127.0.0.1:{port}/"), accepted)
}

/// T-6: a restore over gRPC whose call the server ended with OUT_OF_RANGE, and whose writes
/// behind it then stall, is refused at once: the status is read after the stalled write,
/// never taken for a stall and the frames sent again.
#[test]
fn t_6_a_grpc_restore_refused_while_its_writes_stall_is_not_sent_again() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (seed, accepted) = refusing_grpc_server(&rt, 11);
    let dir = scratch::<Tokio>("grpc-refused-stalled");
    // Far more than the call's flow-control window.
    let (archive, info) = archive_file(&dir, 4 << 20);
    let mut config = Config::new(
        &[seed.as_str()],
        Credentials::new("nervix", "nervix"),
        Transport::Grpc,
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    // The answer is there long before this deadline, however loaded the machine.
    config.write_timeout = Duration::from_secs(1);
    let (err, attempts) = rt.block_on(async {
        let run = async {
            let transfers = Transfers::new(&config).unwrap();
            let mut call = RestoreCall::new(
                ExecutionReference::parse("restore-grpc-refused-1").unwrap(),
                "RESTORE DOMAIN tenant AS tenant_copy",
                info,
                TransferConfig::restore()
                    .with_timeouts(Duration::from_secs(5), Duration::from_secs(5)),
            )
            .unwrap();
            let err = transfers.restore(&mut call, &archive).await.unwrap_err();
            (err, call.attempts())
        };
        tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the restore ends by its deadlines")
    });
    assert!(
        matches!(err, TransferError::FrameRefused { code: 11 }),
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

/// T-5: an upload whose call the server ended with UNAUTHENTICATED, and whose writes behind it
/// then stall, ends refused at once, never tried again with the same credentials.
#[test]
fn t_5_an_upload_refused_as_unauthenticated_while_its_writes_stall_is_not_retried() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (seed, accepted) = refusing_grpc_server(&rt, 16);
    let dir = scratch::<Tokio>("grpc-unauthenticated-stalled");
    // Far more than the call's flow-control window.
    let bytes: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    let file = dir.join("model.bin");
    std::fs::write(&file, &bytes).unwrap();
    let mut config = Config::new(
        &[seed.as_str()],
        Credentials::new("nervix", "nervix"),
        Transport::Grpc,
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    // The answer is there long before this deadline, however loaded the machine.
    config.write_timeout = Duration::from_secs(1);
    let err = rt.block_on(async {
        let run = async {
            let transfers = Transfers::new(&config).unwrap();
            let spec = UploadSpec {
                domain: "tenant".into(),
                resource: "model".into(),
                identity: "upload-unauthenticated-stalled".into(),
            };
            let mut call =
                UploadCall::new(spec, bytes.len() as u64, TransferConfig::upload()).unwrap();
            transfers.upload(&mut call, &file).await.unwrap_err()
        };
        tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the upload ends by its deadlines")
    });
    assert!(matches!(err, TransferError::Unauthenticated), "{err:?}");
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "never tried again"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
