//! `wss://`: both drivers through a TLS terminator on 127.0.0.1 (a certificate for
//! `localhost`, made for the test) in front of the scripted server.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{config, serve, Answer};
use gar_driver::{Config, Event, StopReason};
use sansio_kit::resolve::{HostsResolver, Resolver};
use serde_json::json;

/// A self-signed certificate for `localhost` and the server side of TLS with it.
fn certificate() -> (
    rustls_pki_types::CertificateDer<'static>,
    Arc<rustls::ServerConfig>,
) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert = made.cert.der().clone();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(made.signing_key.serialize_der().into());
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.clone()], key)
    .unwrap();
    (cert, Arc::new(server))
}

fn waited(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Takes one TLS connection on `front` and passes its plain bytes to and from `back`,
/// turn by turn with short read timeouts, until either side ends (10 s at most).
fn terminator(front: TcpListener, tls: Arc<rustls::ServerConfig>, back: String) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((sock, _)) = front.accept() else {
            return;
        };
        let turn = Some(Duration::from_millis(5));
        sock.set_read_timeout(turn).unwrap();
        let mut outer = rustls::StreamOwned::new(rustls::ServerConnection::new(tls).unwrap(), sock);
        let mut inner = TcpStream::connect(back).unwrap();
        inner.set_read_timeout(turn).unwrap();
        let mut buf = vec![0; 32 * 1024];
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            match outer.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if inner.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                Err(e) if waited(&e) => {}
                Err(_) => break,
            }
            match inner.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if outer
                        .write_all(&buf[..n])
                        .and_then(|()| outer.flush())
                        .is_err()
                    {
                        break;
                    }
                }
                Err(e) if waited(&e) => {}
                Err(_) => break,
            }
        }
    })
}

/// A `wss://localhost:<port>/gar` configuration through a terminator in front of `backend`.
fn over_tls(backend_url: &str) -> (Config, JoinHandle<()>) {
    let (cert, server_tls) = certificate();
    let front = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = front.local_addr().unwrap().port();
    let back = backend_url
        .trim_start_matches("ws://")
        .trim_end_matches("/gar")
        .to_string();
    let relay = terminator(front, server_tls, back);
    let mut cfg = config(&format!("wss://localhost:{port}/gar"));
    cfg.token = Some("tls-token".into());
    cfg.resolver =
        Resolver::new(HostsResolver::new().with("localhost", [IpAddr::from([127, 0, 0, 1])]));
    cfg.tls = Some(sansio_kit::dial::tls_config(&[cert], b"http/1.1").unwrap());
    (cfg, relay)
}

fn script(p: &mut common::Peer) {
    p.handshake();
    let e = p.recv_type("EchoRequest");
    p.send("EchoResponse", json!({"msg_ref": e["msg_ref"]}));
    p.send_text(r#"{"message_type": "Logoff"}"#);
    p.close(Some(1000));
}

#[test]
fn a_session_over_tls_runs_on_both_drivers() {
    let server = serve(Answer::Accept, Duration::ZERO, script);
    let (cfg, relay) = over_tls(&server.url);
    let c = gar_driver::blocking::Client::connect(cfg).unwrap();
    c.echo_barrier().unwrap();
    let ev: Vec<Event> = c.events(Duration::from_secs(5)).collect();
    assert!(matches!(
        ev.last(),
        Some(Event::Stopped {
            reason: StopReason::ServerLogoff,
            ..
        })
    ));
    let r = server.report();
    assert!(r.upgrade.path_and_query.ends_with("token=tls-token"));
    drop(c);
    relay.join().unwrap();

    let server = serve(Answer::Accept, Duration::ZERO, script);
    let (cfg, relay) = over_tls(&server.url);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = gar_driver::tokio::Client::connect(cfg).await.unwrap();
        c.echo_barrier().await.unwrap();
        let mut last = None;
        while let Some(e) = c.next_event().await {
            last = Some(e);
        }
        assert!(matches!(
            last,
            Some(Event::Stopped {
                reason: StopReason::ServerLogoff,
                ..
            })
        ));
    });
    server.report();
    relay.join().unwrap();
}

#[test]
fn a_wss_url_without_tls_configuration_is_connect_failed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("wss://{}/gar", listener.local_addr().unwrap());
    let e = gar_driver::blocking::Client::connect(config(&url)).unwrap_err();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let e = rt
        .block_on(gar_driver::tokio::Client::connect(config(&url)))
        .unwrap_err();
    assert_eq!(e.reason, StopReason::ConnectFailed);
}

/// A `wss://` GAR server on `listener` (TLS with `tls`, then the upgrade with `gar-protocol`)
/// that answers the client's Introduction announcing `interval`, beats once, then sends one
/// message of 10 000 bytes as TLS records whose ciphertext goes out one byte every 5 ms for
/// `d`: every socket read of the client brings a byte, and no record is ever whole.
// tungstenite fixes the shape of the upgrade callback, its large error included.
#[allow(clippy::result_large_err)]
fn record_trickler(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    interval: u64,
    d: Duration,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((sock, _)) = listener.accept() else {
            return;
        };
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let stream = rustls::StreamOwned::new(rustls::ServerConnection::new(tls).unwrap(), sock);
        let callback = |_: &tungstenite::handshake::server::Request,
                        mut resp: tungstenite::handshake::server::Response| {
            resp.headers_mut().insert(
                "sec-websocket-protocol",
                tungstenite::http::HeaderValue::from_static("gar-protocol"),
            );
            Ok(resp)
        };
        let Ok(mut ws) = tungstenite::accept_hdr(stream, callback) else {
            return;
        };
        loop {
            match ws.read() {
                Ok(tungstenite::Message::Text(_)) => break,
                Ok(_) => {}
                Err(_) => return,
            }
        }
        let intro = json!({"message_type": "Introduction", "value": {"version": common::gar_driver_version(), "heartbeat_timeout_interval": interval, "user": "jserver"}});
        let beat = json!({"message_type": "Heartbeat", "value": {"u_milliseconds": 1}});
        for m in [intro, beat] {
            ws.send(tungstenite::Message::text(m.to_string())).unwrap();
        }
        let s = ws.get_mut();
        let len: u16 = 10_000;
        let [hi, lo] = len.to_be_bytes();
        let mut frame = vec![0x81, 126, hi, lo];
        frame.resize(4 + usize::from(len), b'x');
        s.conn.writer().write_all(&frame).unwrap();
        let mut ciphertext = Vec::new();
        while s.conn.wants_write() {
            s.conn.write_tls(&mut ciphertext).unwrap();
        }
        let until = Instant::now() + d;
        for b in ciphertext {
            if Instant::now() >= until || s.sock.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    })
}

#[test]
fn g_15_blocking_a_tls_record_trickled_byte_by_byte_cannot_hold_the_read_past_liveness() {
    let (cert, server_tls) = certificate();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = record_trickler(listener, server_tls, 200, Duration::from_secs(4));
    let mut cfg = config(&format!("wss://localhost:{port}/gar"));
    cfg.engine.heartbeat_timeout_interval = 200;
    cfg.resolver =
        Resolver::new(HostsResolver::new().with("localhost", [IpAddr::from([127, 0, 0, 1])]));
    cfg.tls = Some(sansio_kit::dial::tls_config(&[cert], b"http/1.1").unwrap());
    let started = Instant::now();
    let c = gar_driver::blocking::Client::connect(cfg).unwrap();
    let ev: Vec<Event> = c.events(Duration::from_secs(10)).collect();
    let took = started.elapsed();
    let stops: Vec<StopReason> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Stopped { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(stops, vec![StopReason::HeartbeatTimeout]);
    assert!(took < Duration::from_millis(1800), "{took:?}");
    drop(c);
    server.join().unwrap();
}

#[test]
fn g_15_a_tls_record_trickled_byte_by_byte_cannot_hold_the_async_read_past_liveness() {
    let (cert, server_tls) = certificate();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = record_trickler(listener, server_tls, 200, Duration::from_secs(4));
    let mut cfg = config(&format!("wss://localhost:{port}/gar"));
    cfg.engine.heartbeat_timeout_interval = 200;
    cfg.resolver =
        Resolver::new(HostsResolver::new().with("localhost", [IpAddr::from([127, 0, 0, 1])]));
    cfg.tls = Some(sansio_kit::dial::tls_config(&[cert], b"http/1.1").unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let stops = rt.block_on(async {
        let c = gar_driver::tokio::Client::connect(cfg).await.unwrap();
        let mut stops = Vec::new();
        while let Ok(Some(e)) = c.next_event_within(Duration::from_secs(10)).await {
            if let Event::Stopped { reason, .. } = e {
                stops.push(reason);
            }
        }
        stops
    });
    let took = started.elapsed();
    assert_eq!(stops, vec![StopReason::HeartbeatTimeout]);
    assert!(took < Duration::from_millis(1800), "{took:?}");
    drop(rt);
    server.join().unwrap();
}

/// A TLS server on `listener` that reads the client's hello, then sends its own handshake
/// flight one byte every 5 ms for `d`: every socket read of the client brings a byte, and the
/// handshake never completes within the test.
fn handshake_trickler(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    d: Duration,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((mut sock, _)) = listener.accept() else {
            return;
        };
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut conn = rustls::ServerConnection::new(tls).unwrap();
        while !conn.wants_write() {
            match conn.read_tls(&mut sock) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if conn.process_new_packets().is_err() {
                        return;
                    }
                }
            }
        }
        let mut flight = Vec::new();
        while conn.wants_write() {
            conn.write_tls(&mut flight).unwrap();
        }
        let until = Instant::now() + d;
        for b in flight {
            if Instant::now() >= until || sock.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    })
}

/// A `wss://localhost` configuration for the port of a test server with `cert`.
fn wss_config(port: u16, cert: rustls_pki_types::CertificateDer<'static>) -> Config {
    let mut cfg = config(&format!("wss://localhost:{port}/gar"));
    cfg.resolver =
        Resolver::new(HostsResolver::new().with("localhost", [IpAddr::from([127, 0, 0, 1])]));
    cfg.tls = Some(sansio_kit::dial::tls_config(&[cert], b"http/1.1").unwrap());
    cfg
}

#[test]
fn g_62_a_tls_handshake_trickled_byte_by_byte_is_connect_failed_by_the_deadline_on_both_drivers() {
    let (cert, server_tls) = certificate();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = handshake_trickler(listener, server_tls.clone(), Duration::from_secs(4));
    let mut cfg = wss_config(port, cert.clone());
    cfg.connect_timeout = Duration::from_millis(500);
    let t0 = Instant::now();
    let e = gar_driver::blocking::Client::connect(cfg).unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    assert!(took < Duration::from_millis(2000), "blocking: {took:?}");
    server.join().unwrap();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = handshake_trickler(listener, server_tls, Duration::from_secs(4));
    let mut cfg = wss_config(port, cert);
    cfg.connect_timeout = Duration::from_millis(500);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t0 = Instant::now();
    let e = rt
        .block_on(gar_driver::tokio::Client::connect(cfg))
        .unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e.reason, StopReason::ConnectFailed);
    assert!(took < Duration::from_millis(2000), "async: {took:?}");
    server.join().unwrap();
}

#[test]
fn g_4_over_tls_the_first_byte_is_an_open_brace_on_both_drivers() {
    // What the terminator passes on is what the client wrote inside TLS: the Introduction's
    // first byte, as the server reads it, is `{` on both drivers.
    let server = serve(Answer::Accept, Duration::ZERO, script);
    let (cfg, relay) = over_tls(&server.url);
    let c = gar_driver::blocking::Client::connect(cfg).unwrap();
    c.echo_barrier().unwrap();
    let _: Vec<Event> = c.events(Duration::from_secs(5)).collect();
    let r = server.report();
    assert_eq!(r.first_text.unwrap().as_bytes()[0], b'{');
    assert_eq!(r.seen[0]["message_type"], "Introduction");
    drop(c);
    relay.join().unwrap();

    let server = serve(Answer::Accept, Duration::ZERO, script);
    let (cfg, relay) = over_tls(&server.url);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = gar_driver::tokio::Client::connect(cfg).await.unwrap();
        c.echo_barrier().await.unwrap();
        while c.next_event().await.is_some() {}
    });
    let r = server.report();
    assert_eq!(r.first_text.unwrap().as_bytes()[0], b'{');
    assert_eq!(r.seen[0]["message_type"], "Introduction");
    relay.join().unwrap();
}
