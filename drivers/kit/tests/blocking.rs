//! The blocking transports against scripted servers on 127.0.0.1.

#![cfg(feature = "blocking")]

mod common;

use common::*;
use sansio_kit::blocking::{open, time_left, websocket, Io, Paced};
use sansio_kit::dial::{tls_config, Target};
use sansio_kit::resolve::ConnectError;
use sansio_kit::ws::{incoming, Handshake, HandshakeError, Incoming, Message, ReadError};
use std::io::{self, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

#[test]
fn a_blocking_websocket_asks_for_its_path_subprotocol_and_headers_and_reads_text_binary_and_close_codes(
) {
    let (port, seen, got, server) = scripted("journal.v2", 4001);
    let target = Target::new("kit.test", port, false);
    let io = open(&target, &hosts(), None, soon()).unwrap();
    let hs = Handshake::at(&target, "/feed?from=7")
        .subprotocol("journal.v1")
        .subprotocol("journal.v2")
        .header("x-tenant", "t1")
        .max_message(1024);
    let (mut ws, chosen) = websocket(io, &hs, soon()).unwrap();
    assert_eq!(chosen.as_deref(), Some("journal.v2"));
    let seen = seen.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(seen.path, "/feed?from=7");
    assert_eq!(seen.host, format!("kit.test:{port}"));
    assert_eq!(seen.subprotocols, "journal.v1, journal.v2");
    assert_eq!(seen.tenant, "t1");
    assert_eq!(incoming(ws.read()), Ok(Incoming::Text("hello".into())));
    assert_eq!(
        incoming(ws.read()),
        Ok(Incoming::Binary(vec![1, 2, 3].into()))
    );
    ws.send(Message::text("up")).unwrap();
    ws.send(Message::binary(vec![9])).unwrap();
    assert_eq!(incoming(ws.read()), Ok(Incoming::Close(Some(4001))));
    let got: Vec<Message> = got.iter().take(2).collect();
    assert_eq!(got, [Message::text("up"), Message::binary(vec![9])]);
    assert!(matches!(incoming(ws.read()), Err(ReadError::Closed(_))));
    server.join().unwrap();
}

#[test]
fn a_blocking_websocket_refuses_a_message_above_its_limit_unread() {
    let (port, server) = oversized_sender();
    let target = Target::new("127.0.0.1", port, false);
    let io = open(&target, &hosts(), None, soon()).unwrap();
    let hs = Handshake::at(&target, "/").max_message(1024);
    let (mut ws, chosen) = websocket(io, &hs, soon()).unwrap();
    assert_eq!(chosen, None);
    assert_eq!(incoming(ws.read()), Err(ReadError::TooLarge));
    drop(ws);
    server.join().unwrap();
}

#[test]
fn a_blocking_upgrade_refused_with_a_status_or_a_subprotocol_not_offered_fails_typed() {
    let (l, port) = listener();
    let server = serve_refusal(l, "401 Unauthorized");
    let target = Target::new("127.0.0.1", port, false);
    let io = open(&target, &hosts(), None, soon()).unwrap();
    let err = websocket(io, &Handshake::at(&target, "/x"), soon()).unwrap_err();
    assert_eq!(err, HandshakeError::Refused(401));
    server.join().unwrap();
    // The server picks a subprotocol the client never offered.
    let (l, port) = listener();
    let (_seen, server) = serve_ws(l, Some("other"), |_| {});
    let target = Target::new("127.0.0.1", port, false);
    let io = open(&target, &hosts(), None, soon()).unwrap();
    let hs = Handshake::at(&target, "/").subprotocol("mine");
    assert!(matches!(
        websocket(io, &hs, soon()),
        Err(HandshakeError::Failed(_))
    ));
    server.join().unwrap();
    // A header name that is no header name never leaves.
    let hs = Handshake::new("ws://127.0.0.1:1/").header("bad name", "v");
    let err = websocket(std::io::Cursor::new(Vec::new()), &hs, soon()).unwrap_err();
    assert!(matches!(err, HandshakeError::Request(_)), "{err:?}");
}

#[test]
fn blocking_tls_is_verified_against_the_targets_own_name_not_the_address_it_resolved_to() {
    let (root, server_config) = tls_for("kit.test");
    let (l, port) = listener();
    let server = serve_tls(l, server_config, 2);
    let client = tls_config(std::slice::from_ref(&root), b"http/1.1").unwrap();
    let mut io = open(
        &Target::new("kit.test", port, true),
        &hosts(),
        Some(client.clone()),
        soon(),
    )
    .unwrap();
    let mut hi = [0u8; 2];
    io.read_exact(&mut hi).unwrap();
    assert_eq!(&hi, b"hi");
    let err = open(
        &Target::new("other.test", port, true),
        &hosts(),
        Some(client),
        soon(),
    )
    .unwrap_err();
    assert!(matches!(err, ConnectError::Tls(_)), "{err:?}");
    server.join().unwrap();
    // A TLS target without roots is refused before any handshake.
    let (l, port) = listener();
    let err = open(&Target::new("kit.test", port, true), &hosts(), None, soon()).unwrap_err();
    assert!(matches!(err, ConnectError::NoTls), "{err:?}");
    drop(l);
}

#[test]
fn a_tls_handshake_the_server_closes_fails_at_once_not_at_the_deadline() {
    let (root, _) = tls_for("kit.test");
    let (l, port) = listener();
    let server = std::thread::spawn(move || {
        // The client's hello read, then the connection closed (an orderly end, no answer).
        let (mut s, _) = l.accept().unwrap();
        let mut hello = [0u8; 4096];
        let _ = s.read(&mut hello);
        drop(s);
    });
    let client = tls_config(std::slice::from_ref(&root), b"http/1.1").unwrap();
    let started = Instant::now();
    let err = open(
        &Target::new("kit.test", port, true),
        &hosts(),
        Some(client),
        Instant::now() + Duration::from_secs(5),
    )
    .unwrap_err();
    assert!(matches!(err, ConnectError::Tls(_)), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    server.join().unwrap();
}

#[test]
fn a_blocking_upgrade_never_answered_ends_at_the_deadline() {
    let (l, port) = listener();
    let (done, end) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        // Reads the request and never answers; gone once the test is done, or after 5 s.
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf);
        let _ = end.recv_timeout(Duration::from_secs(5));
    });
    let deadline = Instant::now() + Duration::from_millis(300);
    let target = Target::new("127.0.0.1", port, false);
    let io = open(&target, &hosts(), None, deadline).unwrap();
    let started = Instant::now();
    let err = websocket(io, &Handshake::at(&target, "/"), deadline).unwrap_err();
    assert!(matches!(err, HandshakeError::TimedOut), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    done.send(()).unwrap();
    server.join().unwrap();
}

#[test]
fn a_blocking_tls_handshake_never_answered_ends_at_the_deadline() {
    let (root, _) = tls_for("kit.test");
    let (l, port) = listener();
    let client = tls_config(std::slice::from_ref(&root), b"http/1.1").unwrap();
    let started = Instant::now();
    let err = open(
        &Target::new("kit.test", port, true),
        &hosts(),
        Some(client),
        Instant::now() + Duration::from_millis(300),
    )
    .unwrap_err();
    let waited = started.elapsed();
    assert!(matches!(err, ConnectError::TimedOut), "{err:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    drop(l);
}

// `Paced`: the deadline of the read or write under way bounds it as a whole, over plain TCP
// and over TLS, against a peer that trickles or does not read at all.

/// A plain connection to a server on 127.0.0.1 that runs `script` on its side.
fn plain_pair(
    script: impl FnOnce(TcpStream) + Send + 'static,
) -> (Io, std::thread::JoinHandle<()>) {
    let (l, port) = listener();
    let server = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        script(s);
    });
    let io = open(
        &Target::new("127.0.0.1", port, false),
        &hosts(),
        None,
        soon(),
    )
    .unwrap();
    (io, server)
}

/// A TLS connection to a server on 127.0.0.1 that finishes its handshake and then runs
/// `script` with its connection and its raw socket.
fn tls_pair(
    script: impl FnOnce(rustls::ServerConnection, TcpStream) + Send + 'static,
) -> (Io, std::thread::JoinHandle<()>) {
    let (root, server_config) = tls_for("kit.test");
    let (l, port) = listener();
    let server = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut conn = rustls::ServerConnection::new(server_config).unwrap();
        while conn.is_handshaking() {
            conn.complete_io(&mut s).unwrap();
        }
        while conn.wants_write() {
            conn.write_tls(&mut s).unwrap();
        }
        script(conn, s);
    });
    let client = tls_config(std::slice::from_ref(&root), b"http/1.1").unwrap();
    let io = open(
        &Target::new("kit.test", port, true),
        &hosts(),
        Some(client),
        soon(),
    )
    .unwrap();
    (io, server)
}

/// `bytes` a byte at a time, `every` apart, for as long as the client reads them.
fn trickle(s: &mut TcpStream, bytes: &[u8], every: Duration) {
    for b in bytes {
        if s.write_all(std::slice::from_ref(b)).is_err() {
            return;
        }
        std::thread::sleep(every);
    }
}

/// What `p` read before the read ended, how it ended and when: reads that time out at the
/// socket (`WouldBlock`) are tried again, as the WebSocket library's caller does.
fn read_until_end(p: &mut Paced, want: usize) -> (Vec<u8>, io::Result<()>, Duration) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if got.len() >= want {
            break Ok(());
        }
        match p.read(&mut buf) {
            Ok(0) => break Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => break Err(e),
        }
    };
    (got, end, started.elapsed())
}

/// Asserts that a wait under a deadline of 300 ms ended by it, and not long after.
fn by_the_deadline(took: Duration) {
    assert!(
        took >= Duration::from_millis(290) && took < Duration::from_millis(1500),
        "{took:?}"
    );
}

/// `io` paced by a deadline 300 ms away, after a write of 64 MiB to a peer that does not read
/// has failed as timed out by that deadline.
fn stalled_write(io: Io) -> Paced {
    let mut p = Paced::new(io);
    p.until(Instant::now() + Duration::from_millis(300));
    let started = Instant::now();
    let err = p.write_all(&vec![1u8; 64 << 20]).unwrap_err();
    by_the_deadline(started.elapsed());
    assert!(
        matches!(err.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock),
        "{err:?}"
    );
    p
}

#[test]
fn an_opened_tls_stream_has_finished_its_handshake_on_both_sides_before_the_client_writes() {
    let (root, server_config) = tls_for("kit.test");
    let (l, port) = listener();
    let (done, finished) = std::sync::mpsc::channel();
    let server = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut conn = rustls::ServerConnection::new(server_config).unwrap();
        while conn.is_handshaking() {
            if conn.complete_io(&mut s).is_err() {
                return;
            }
        }
        done.send(()).unwrap();
    });
    let client = tls_config(std::slice::from_ref(&root), b"http/1.1").unwrap();
    let io = open(
        &Target::new("kit.test", port, true),
        &hosts(),
        Some(client),
        soon(),
    )
    .unwrap();
    // The client neither reads nor writes: the server still finishes its handshake.
    finished
        .recv_timeout(Duration::from_secs(2))
        .expect("the server finished its handshake");
    drop(io);
    server.join().unwrap();
}

#[test]
fn time_left_is_a_timeout_once_the_deadline_is_reached_and_what_is_left_before() {
    let now = Instant::now();
    assert_eq!(time_left(now).unwrap_err().kind(), ErrorKind::TimedOut);
    assert_eq!(
        time_left(now - Duration::from_millis(1))
            .unwrap_err()
            .kind(),
        ErrorKind::TimedOut
    );
    let left = time_left(Instant::now() + Duration::from_secs(10)).unwrap();
    assert!(
        left > Duration::from_secs(9) && left <= Duration::from_secs(10),
        "{left:?}"
    );
}

#[test]
fn a_paced_plain_read_of_a_trickle_ends_at_its_deadline_with_what_came() {
    let (io, server) = plain_pair(|mut s| trickle(&mut s, &[7; 400], Duration::from_millis(10)));
    let mut p = Paced::new(io);
    p.until(Instant::now() + Duration::from_millis(300));
    let (got, end, took) = read_until_end(&mut p, 400);
    assert_eq!(end.unwrap_err().kind(), ErrorKind::TimedOut);
    by_the_deadline(took);
    assert!(!got.is_empty() && got.len() < 400, "{}", got.len());
    assert!(got.iter().all(|&b| b == 7));
    // A later deadline reads again, on from where the last read stopped.
    p.until(Instant::now() + Duration::from_secs(10));
    let (rest, end, _) = read_until_end(&mut p, 400 - got.len());
    end.unwrap();
    assert_eq!(got.len() + rest.len(), 400);
    drop(p);
    server.join().unwrap();
}

#[test]
fn a_paced_plain_write_to_a_peer_that_does_not_read_ends_at_its_deadline() {
    let (io, server) = plain_pair(|s| {
        std::thread::sleep(Duration::from_secs(4));
        drop(s);
    });
    let mut p = stalled_write(io);
    // Past the deadline a write fails at once, without touching the socket (a flush of
    // plain TCP has nothing held back to hand on).
    let started = Instant::now();
    assert_eq!(p.write(&[1]).unwrap_err().kind(), ErrorKind::TimedOut);
    p.flush().unwrap();
    assert!(started.elapsed() < Duration::from_millis(100));
    drop(p);
    server.join().unwrap();
}

#[test]
fn a_paced_stream_without_a_deadline_is_the_stream_as_it_is() {
    let (io, server) = plain_pair(|mut s| {
        trickle(&mut s, &[3; 30], Duration::from_millis(20));
        let mut back = [0u8; 5];
        s.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"thank");
    });
    // A socket timeout shorter than the trickle's gaps would fail a read; without a deadline
    // Paced leaves the socket's own timeouts as they are (the stream's 10 s from `open`).
    let mut p = Paced::new(io);
    let (got, end, took) = read_until_end(&mut p, 30);
    end.unwrap();
    assert_eq!(got, [3; 30]);
    assert!(took >= Duration::from_millis(500), "{took:?}");
    p.write_all(b"thank").unwrap();
    p.flush().unwrap();
    server.join().unwrap();
}

#[test]
fn a_paced_tls_read_of_a_record_trickled_byte_by_byte_ends_at_its_deadline() {
    let (io, server) = tls_pair(|mut conn, mut s| {
        conn.writer().write_all(&[5; 2000]).unwrap();
        let mut record = Vec::new();
        while conn.wants_write() {
            conn.write_tls(&mut record).unwrap();
        }
        trickle(&mut s, &record, Duration::from_millis(5));
    });
    let mut p = Paced::new(io);
    p.until(Instant::now() + Duration::from_millis(300));
    let (got, end, took) = read_until_end(&mut p, 2000);
    assert_eq!(end.unwrap_err().kind(), ErrorKind::TimedOut);
    by_the_deadline(took);
    // The record is not whole: nothing of it reads yet.
    assert!(got.is_empty(), "{}", got.len());
    // Given the time, the rest of the record comes and reads whole.
    p.until(Instant::now() + Duration::from_secs(20));
    let (got, end, _) = read_until_end(&mut p, 2000);
    end.unwrap();
    assert_eq!(got, vec![5; 2000]);
    drop(p);
    server.join().unwrap();
}

#[test]
fn a_paced_tls_read_takes_plaintext_already_decrypted_first_and_reads_the_peers_close_as_0() {
    let (io, server) = tls_pair(|mut conn, mut s| {
        conn.writer().write_all(b"abcdef").unwrap();
        conn.send_close_notify();
        while conn.wants_write() {
            conn.write_tls(&mut s).unwrap();
        }
        std::thread::sleep(Duration::from_millis(500));
    });
    let mut p = Paced::new(io);
    p.until(Instant::now() + Duration::from_secs(10));
    // Small reads: the record's rest is read from what TLS already holds.
    let mut two = [0u8; 2];
    let mut got = Vec::new();
    while got.len() < 6 {
        match p.read(&mut two) {
            Ok(n) => got.extend_from_slice(&two[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(got, b"abcdef");
    let started = Instant::now();
    let n = loop {
        match p.read(&mut two) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            other => break other.unwrap(),
        }
    };
    assert_eq!(n, 0);
    assert!(started.elapsed() < Duration::from_millis(400));
    drop(p);
    server.join().unwrap();
}

#[test]
fn a_paced_tls_write_to_a_peer_that_does_not_read_ends_at_its_deadline() {
    let (io, server) = tls_pair(|conn, s| {
        std::thread::sleep(Duration::from_secs(4));
        drop((conn, s));
    });
    let mut p = stalled_write(io);
    // What TLS holds back goes with the next flush, which fails while the deadline has passed.
    let started = Instant::now();
    assert_eq!(p.flush().unwrap_err().kind(), ErrorKind::TimedOut);
    assert_eq!(p.write(&[1]).unwrap_err().kind(), ErrorKind::TimedOut);
    assert!(started.elapsed() < Duration::from_millis(100));
    drop(p);
    server.join().unwrap();
}

#[test]
fn a_paced_tls_write_to_a_reading_peer_goes_whole_and_a_flush_hands_on_what_tls_held() {
    const LEN: usize = 8 << 20;
    let (io, server) = tls_pair(|mut conn, mut s| {
        // The peer starts reading late: the socket fills, and TLS hands its records on over
        // many socket writes, each taking part of what it holds.
        std::thread::sleep(Duration::from_millis(300));
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        while got.len() < LEN {
            conn.read_tls(&mut s).unwrap();
            conn.process_new_packets().unwrap();
            loop {
                match conn.reader().read(&mut buf) {
                    Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
        }
        assert_eq!(got.len(), LEN);
        assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    });
    let mut p = Paced::new(io);
    p.until(Instant::now() + Duration::from_secs(20));
    let data: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
    p.write_all(&data).unwrap();
    p.flush().unwrap();
    server.join().unwrap();
}
