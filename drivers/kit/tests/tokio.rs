//! The async transports against scripted servers on 127.0.0.1.

#![cfg(feature = "tokio")]

mod common;

use common::*;
use futures_util::{SinkExt, StreamExt};
use sansio_kit::dial::{tls_config, Target};
use sansio_kit::grpc::{grpc_message, status_of, MessageReader};
use sansio_kit::resolve::ConnectError;
use sansio_kit::tokio::{grpc_request, h2_client, open, open_by, websocket, H2Settings};
use sansio_kit::ws::{incoming, Handshake, HandshakeError, Incoming, Message, ReadError};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

fn run<F: std::future::Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(20), f).await })
        .expect("the test ends within its bound")
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

#[test]
fn an_async_websocket_asks_for_its_path_subprotocol_and_headers_and_reads_text_binary_and_close_codes(
) {
    let (port, seen, got, server) = scripted("journal.v1", 4002);
    run(async {
        let target = Target::new("kit.test", port, false);
        let io = open_by(soon(), &target, &hosts(), None).await.unwrap();
        let hs = Handshake::at(&target, "/feed")
            .subprotocol("journal.v1")
            .header("x-tenant", "t2");
        let (mut ws, chosen) = websocket(io, &hs).await.unwrap();
        assert_eq!(chosen.as_deref(), Some("journal.v1"));
        assert_eq!(
            incoming(ws.next().await.unwrap()),
            Ok(Incoming::Text("hello".into()))
        );
        assert_eq!(
            incoming(ws.next().await.unwrap()),
            Ok(Incoming::Binary(vec![1, 2, 3].into()))
        );
        ws.send(Message::text("up")).await.unwrap();
        ws.send(Message::binary(vec![9])).await.unwrap();
        assert_eq!(
            incoming(ws.next().await.unwrap()),
            Ok(Incoming::Close(Some(4002)))
        );
    });
    let seen = seen.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(seen.path, "/feed");
    assert_eq!(seen.host, format!("kit.test:{port}"));
    assert_eq!(seen.subprotocols, "journal.v1");
    assert_eq!(seen.tenant, "t2");
    let got: Vec<Message> = got.iter().take(2).collect();
    assert_eq!(got, [Message::text("up"), Message::binary(vec![9])]);
    server.join().unwrap();
}

#[test]
fn an_async_websocket_refuses_a_message_above_its_limit_and_a_refused_upgrade_keeps_its_status() {
    let (port, server) = oversized_sender();
    let (l2, port2) = listener();
    let refusal = serve_refusal(l2, "503 Service Unavailable");
    run(async {
        let target = Target::new("127.0.0.1", port, false);
        let io = open(&target, &hosts(), None).await.unwrap();
        let (mut ws, _) = websocket(io, &Handshake::at(&target, "/").max_message(1024))
            .await
            .unwrap();
        assert_eq!(incoming(ws.next().await.unwrap()), Err(ReadError::TooLarge));
        drop(ws);
        let target = Target::new("127.0.0.1", port2, false);
        let io = open(&target, &hosts(), None).await.unwrap();
        let err = websocket(io, &Handshake::at(&target, "/"))
            .await
            .unwrap_err();
        assert_eq!(err, HandshakeError::Refused(503));
    });
    server.join().unwrap();
    refusal.join().unwrap();
}

#[test]
fn async_tls_is_verified_against_the_targets_own_name_and_dialling_is_bounded_by_its_deadline() {
    let (root, server_config) = tls_for("kit.test");
    let (l, port) = listener();
    let server = serve_tls(l, server_config, 2);
    let (silent, silent_port) = listener();
    run(async {
        let client: sansio_kit::tokio::TlsConnector =
            tls_config(std::slice::from_ref(&root), b"http/1.1")
                .unwrap()
                .into();
        let mut io = open(
            &Target::new("kit.test", port, true),
            &hosts(),
            Some(&client),
        )
        .await
        .unwrap();
        let mut hi = [0u8; 2];
        io.read_exact(&mut hi).await.unwrap();
        assert_eq!(&hi, b"hi");
        let err = open(
            &Target::new("other.test", port, true),
            &hosts(),
            Some(&client),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ConnectError::Tls(_)), "{err:?}");
        let err = open(&Target::new("kit.test", silent_port, true), &hosts(), None)
            .await
            .unwrap_err();
        assert!(matches!(err, ConnectError::NoTls), "{err:?}");
        // A TLS handshake never answered ends at the deadline.
        let started = Instant::now();
        let err = open_by(
            Instant::now() + Duration::from_millis(300),
            &Target::new("kit.test", silent_port, true),
            &hosts(),
            Some(&client),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ConnectError::TimedOut), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    });
    drop(silent);
    server.join().unwrap();
}

#[test]
fn a_grpc_call_over_the_kits_http2_client_carries_its_headers_and_reads_messages_and_status() {
    run(async {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (s, _) = l.accept().await.unwrap();
            let mut conn = h2::server::handshake(s).await.unwrap();
            let (req, mut respond) = conn.accept().await.unwrap().unwrap();
            // The connection is driven on a task of its own until the client goes.
            let driven = tokio::spawn(async move { while conn.accept().await.is_some() {} });
            let (parts, mut body) = req.into_parts();
            let mut got = Vec::new();
            while let Some(chunk) = body.data().await {
                got.extend_from_slice(&chunk.unwrap());
            }
            let response = http::Response::builder().status(200).body(()).unwrap();
            let mut send = respond.send_response(response, false).unwrap();
            send.send_data(grpc_message(b"pong"), false).unwrap();
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", "0".parse().unwrap());
            send.send_trailers(trailers).unwrap();
            let _ = tokio::time::timeout(Duration::from_secs(5), driven).await;
            (parts, got)
        });
        let target = Target::new("127.0.0.1", port, false);
        let io = open(&target, &hosts(), None).await.unwrap();
        let (mut client, conn) = h2_client(io, &H2Settings::default()).await.unwrap();
        let url = format!("http://{}/kit.Test/Call", target.authority());
        let request = grpc_request(&url, &[("authorization", "Basic a2l0Og==")]).unwrap();
        let (response, mut send) = client.send_request(request, false).unwrap();
        send.send_data(grpc_message(b"ping"), true).unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 200);
        let mut body = response.into_body();
        let mut reader = MessageReader::default();
        while let Some(chunk) = body.data().await {
            reader.push(&chunk.unwrap());
        }
        assert_eq!(reader.next_message().unwrap().unwrap(), &b"pong"[..]);
        let trailers = body.trailers().await.unwrap().unwrap();
        assert_eq!(status_of(&trailers), Some(0));
        drop((client, conn));
        let (parts, got) = server.await.unwrap();
        assert_eq!(parts.method, http::Method::POST);
        assert_eq!(parts.uri.path(), "/kit.Test/Call");
        assert_eq!(parts.headers["content-type"], "application/grpc");
        assert_eq!(parts.headers["te"], "trailers");
        assert_eq!(parts.headers["authorization"], "Basic a2l0Og==");
        assert_eq!(got, grpc_message(b"ping"));
    });
}

#[test]
fn a_plain_stream_takes_vectored_writes_whole_and_in_order() {
    use std::io::Read;
    use tokio::io::{AsyncWrite, AsyncWriteExt};
    let (l, port) = listener();
    let server = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        got
    });
    run(async {
        let mut io = open(&Target::new("kit.test", port, false), &hosts(), None)
            .await
            .unwrap();
        // h2 puts a DATA frame's header and payload in one system call only when the
        // stream says it takes vectored writes.
        assert!(io.is_write_vectored());
        let parts = [
            std::io::IoSlice::new(b"head"),
            std::io::IoSlice::new(b"-"),
            std::io::IoSlice::new(b"payload"),
        ];
        let n = io.write_vectored(&parts).await.unwrap();
        assert!(n > 0);
        // Whatever a short write left is written plainly, from where it stopped.
        io.write_all(&b"head-payload"[n..]).await.unwrap();
        io.shutdown().await.unwrap();
    });
    assert_eq!(server.join().unwrap(), b"head-payload");
}
