//! The blocking transports against scripted servers on 127.0.0.1.

#![cfg(feature = "blocking")]

mod common;

use common::*;
use sansio_kit::blocking::{open, websocket};
use sansio_kit::dial::{tls_config, Target};
use sansio_kit::resolve::ConnectError;
use sansio_kit::ws::{incoming, Handshake, HandshakeError, Incoming, Message, ReadError};
use std::io::Read;
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
