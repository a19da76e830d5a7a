//! The blocking client over TLS (through sansio-kit's dialling) to the loopback receipt server,
//! behind a relay on 127.0.0.1 that ends TLS and passes the plain bytes on.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cultnet_client::blocking::Client;
use cultnet_client::loopback::{LoopbackOptions, LoopbackServer};
use cultnet_client::{ClientConfig, ClientError, ConnectError, Outcome, Target, WriteMode};
use cultnet_receipts::frames::{Document, RawValue};

fn tls_for(
    name: &str,
) -> (
    rustls_pki_types::CertificateDer<'static>,
    Arc<rustls::ServerConfig>,
) {
    let ck = rcgen::generate_simple_self_signed(vec![name.to_string()]).expect("certificate");
    let der = ck.cert.der().clone();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key)
        .expect("server config");
    (der, Arc::new(config))
}

fn quiet(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Ends TLS for one connection and relays its bytes to `backend` both ways, for at most 10 s.
fn relay(listener: TcpListener, config: Arc<rustls::ServerConfig>, backend: u16) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((sock, _)) = listener.accept() else {
            return;
        };
        let tick = Some(Duration::from_millis(5));
        sock.set_read_timeout(tick).expect("timeout");
        let conn = rustls::ServerConnection::new(config).expect("server connection");
        let mut tls = rustls::StreamOwned::new(conn, sock);
        let mut plain = TcpStream::connect(("127.0.0.1", backend)).expect("backend");
        plain.set_read_timeout(tick).expect("timeout");
        let mut buf = vec![0u8; 16 * 1024];
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            match tls.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => plain.write_all(&buf[..n]).expect("to backend"),
                Err(e) if quiet(&e) => {}
                Err(_) => return,
            }
            match plain.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tls.write_all(&buf[..n]).and_then(|()| tls.flush()).is_err() {
                        return;
                    }
                }
                Err(e) if quiet(&e) => {}
                Err(_) => return,
            }
        }
    })
}

fn doc() -> Document {
    Document {
        schema_id: "s.tls".to_owned(),
        record_key: "k1".to_owned(),
        stored_at: "2026-12-04T00:00:00Z".to_owned(),
        payload: RawValue::new(vec![0xc2]).expect("one value"),
        source_runtime_id: None,
        source_agent_id: None,
        source_role: None,
        tags: None,
    }
}

#[test]
fn w_34_a_put_over_tls_is_admitted() {
    let server = LoopbackServer::start(LoopbackOptions::default()).expect("server");
    let (root, server_tls) = tls_for("localhost");
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let relay = relay(listener, server_tls, server.addr().port());
    let mut config = ClientConfig::new("tls-test", 21);
    config.connect_timeout = Duration::from_secs(5);
    config.resolver = cultnet_client::Resolver::new(
        sansio_kit::resolve::HostsResolver::new()
            .with("localhost", [std::net::IpAddr::from([127, 0, 0, 1])]),
    );
    config.tls = Some(sansio_kit::dial::tls_config(&[root], b"cultnet").expect("client tls"));
    let mut client =
        Client::connect(&Target::new("localhost", port, true), config).expect("connects");
    let w = client.put(doc(), WriteMode::Receipt).expect("put");
    assert_eq!(w.outcome, Outcome::Admitted);
    assert_eq!(client.result_window_ms(), 5000);
    client.close();
    relay.join().expect("relay");
}

#[test]
fn a_tls_target_without_tls_configuration_is_refused() {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mut config = ClientConfig::new("tls-test", 22);
    config.connect_timeout = Duration::from_secs(2);
    let r = Client::connect(&Target::new("127.0.0.1", port, true), config);
    assert!(
        matches!(r, Err(ClientError::Connect(ConnectError::NoTls))),
        "{r:?}"
    );
}

/// A TLS peer that completes the handshake, sends no hello (so the client applies the 500 ms
/// legacy window), then sends one TLS record of 1000 bytes a byte every 100 ms, for at most
/// 8 s or until the client goes.
fn trickling_tls_peer(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((sock, _)) = listener.accept() else {
            return;
        };
        let conn = rustls::ServerConnection::new(config).expect("server connection");
        let mut tls = rustls::StreamOwned::new(conn, sock);
        while tls.conn.is_handshaking() {
            if tls.conn.complete_io(&mut tls.sock).is_err() {
                return;
            }
        }
        tls.conn
            .writer()
            .write_all(&[0u8; 1000])
            .expect("plaintext");
        let mut record = Vec::new();
        while tls.conn.wants_write() {
            tls.conn.write_tls(&mut record).expect("record");
        }
        let end = Instant::now() + Duration::from_secs(8);
        for b in record {
            if Instant::now() > end || tls.sock.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })
}

#[test]
fn a_tls_record_trickled_byte_by_byte_cannot_stretch_the_result_window() {
    let (root, server_tls) = tls_for("localhost");
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let peer = trickling_tls_peer(listener, server_tls);
    let mut config = ClientConfig::new("tls-test", 23);
    config.connect_timeout = Duration::from_secs(5);
    config.resolver = cultnet_client::Resolver::new(
        sansio_kit::resolve::HostsResolver::new()
            .with("localhost", [std::net::IpAddr::from([127, 0, 0, 1])]),
    );
    config.tls = Some(sansio_kit::dial::tls_config(&[root], b"cultnet").expect("client tls"));
    let mut client =
        Client::connect(&Target::new("localhost", port, true), config).expect("connects");
    let t0 = Instant::now();
    let w = client.put(doc(), WriteMode::Receipt).expect("put");
    // The record would take 100 s to arrive; the 500 ms window ends the wait.
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(
        w.outcome,
        Outcome::Unconfirmed {
            reason: cultnet_client::UnconfirmedReason::WindowElapsed,
            server_missed_window: false,
        }
    );
    client.close();
    drop(client);
    peer.join().expect("peer");
}

/// A TLS peer that reads the client's hello, then sends its own handshake flight one byte every
/// 5 ms for at most 4 s: every socket read of the client brings a byte, and the handshake does
/// not complete within the test's deadline.
fn handshake_trickler(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((mut sock, _)) = listener.accept() else {
            return;
        };
        sock.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut conn = rustls::ServerConnection::new(config).expect("server connection");
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
            conn.write_tls(&mut flight).expect("flight");
        }
        let until = Instant::now() + Duration::from_secs(4);
        for b in flight {
            if Instant::now() >= until || sock.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    })
}

#[test]
fn a_tls_handshake_trickled_byte_by_byte_is_a_connect_error_by_the_deadline_on_both_clients() {
    let (root, server_tls) = tls_for("localhost");
    let config = || {
        let mut config = ClientConfig::new("tls-test", 24);
        config.connect_timeout = Duration::from_millis(500);
        config.resolver = cultnet_client::Resolver::new(
            sansio_kit::resolve::HostsResolver::new()
                .with("localhost", [std::net::IpAddr::from([127, 0, 0, 1])]),
        );
        config.tls = Some(
            sansio_kit::dial::tls_config(std::slice::from_ref(&root), b"cultnet").expect("tls"),
        );
        config
    };
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let peer = handshake_trickler(listener, server_tls.clone());
    let t0 = Instant::now();
    let r = Client::connect(&Target::new("localhost", port, true), config());
    let took = t0.elapsed();
    assert!(matches!(r, Err(ClientError::Connect(_))), "{r:?}");
    assert!(took < Duration::from_millis(2000), "blocking: {took:?}");
    peer.join().expect("peer");

    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let peer = handshake_trickler(listener, server_tls);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let t0 = Instant::now();
    let r = rt.block_on(cultnet_client::tokio::Client::connect(
        &Target::new("localhost", port, true),
        config(),
    ));
    let took = t0.elapsed();
    assert!(matches!(r, Err(ClientError::Connect(_))), "{r:?}");
    assert!(took < Duration::from_millis(2000), "async: {took:?}");
    peer.join().expect("peer");
}

/// A TLS peer that completes the handshake, then reads the client's records 64 KiB at a time,
/// one read every 100 ms (for at most 30 s, or until the client goes): a peer reading a
/// trickle.
fn trickle_reading_tls_peer(
    listener: TcpListener,
    config: Arc<rustls::ServerConfig>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((sock, _)) = listener.accept() else {
            return;
        };
        let conn = rustls::ServerConnection::new(config).expect("server connection");
        let mut tls = rustls::StreamOwned::new(conn, sock);
        while tls.conn.is_handshaking() {
            if tls.conn.complete_io(&mut tls.sock).is_err() {
                return;
            }
        }
        let mut buf = vec![0u8; 64 * 1024];
        let end = Instant::now() + Duration::from_secs(30);
        while Instant::now() < end {
            match tls.sock.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    })
}

#[test]
fn w_36_the_write_deadline_bounds_the_whole_write_over_tls_against_a_trickle_reader() {
    let (root, server_tls) = tls_for("localhost");
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let peer = trickle_reading_tls_peer(listener, server_tls);
    let mut config = ClientConfig::new("tls-test", 25);
    config.connect_timeout = Duration::from_secs(5);
    config.write_timeout = Duration::from_millis(1000);
    config.resolver = cultnet_client::Resolver::new(
        sansio_kit::resolve::HostsResolver::new()
            .with("localhost", [std::net::IpAddr::from([127, 0, 0, 1])]),
    );
    config.tls = Some(sansio_kit::dial::tls_config(&[root], b"cultnet").expect("client tls"));
    let mut client =
        Client::connect(&Target::new("localhost", port, true), config).expect("connects");
    // Sixteen documents of 900 kB: 14 MB at 640 kB/s would take over 20 s; the deadline ends
    // the write after 1 s (plus the encoding, slow on a loaded machine).
    let mut big = vec![0xc6];
    big.extend_from_slice(&900_000u32.to_be_bytes());
    big.resize(5 + 900_000, 0x5a);
    let members: Vec<_> = (0..16)
        .map(|i| {
            let mut d = doc();
            d.record_key = format!("k{i}");
            d.payload = RawValue::new(big.clone()).expect("one value");
            cultnet_client::BatchWrite::Put(d)
        })
        .collect();
    let t0 = Instant::now();
    let b = client.batch(members, WriteMode::Receipt).expect("batch");
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(6), "{took:?}");
    for m in &b.members {
        assert_eq!(
            m.outcome,
            Outcome::Unconfirmed {
                reason: cultnet_client::UnconfirmedReason::LocalSendFailed,
                server_missed_window: false,
            }
        );
    }
    assert!(client.session_ended());
    eprintln!("the write ended after {took:?}");
    drop(client);
    peer.join().expect("peer");
}
