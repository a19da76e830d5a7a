//! What the transport tests share: a scripted WebSocket server on 127.0.0.1 run on a thread
//! of its own (blocking tungstenite), and a TLS server certificate for a host name.

#![allow(dead_code)]
// tungstenite's accept callback has this signature.
#![allow(clippy::result_large_err)]

use sansio_kit::resolve::{HostsResolver, Resolver};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::{Message, WebSocket};

/// What the server saw of an upgrade request.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub path: String,
    pub host: String,
    pub subprotocols: String,
    pub tenant: String,
}

/// A resolver that answers `kit.test` and `other.test` with 127.0.0.1.
pub fn hosts() -> Resolver {
    let lo: IpAddr = "127.0.0.1".parse().unwrap();
    Resolver::new(
        HostsResolver::new()
            .with("kit.test", [lo])
            .with("other.test", [lo]),
    )
}

/// A listener on 127.0.0.1 and its port.
pub fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

fn accepted(l: &TcpListener) -> TcpStream {
    let (s, _) = l.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Serves one WebSocket upgrade: picks `pick` as its subprotocol, reports what it saw, then
/// runs `script` on the connection.
pub fn serve_ws(
    l: TcpListener,
    pick: Option<&'static str>,
    script: impl FnOnce(&mut WebSocket<TcpStream>) + Send + 'static,
) -> (mpsc::Receiver<Seen>, JoinHandle<()>) {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let s = accepted(&l);
        let callback = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
            let h = |n: &str| {
                req.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string()
            };
            let seen = Seen {
                path: req.uri().to_string(),
                host: h("host"),
                subprotocols: h("sec-websocket-protocol"),
                tenant: h("x-tenant"),
            };
            let _ = tx.send(seen);
            if let Some(p) = pick {
                resp.headers_mut()
                    .insert("sec-websocket-protocol", p.parse().unwrap());
            }
            Ok(resp)
        };
        if let Ok(mut ws) = tungstenite::accept_hdr(s, callback) {
            script(&mut ws);
        }
    });
    (rx, t)
}

/// Answers one connection's request with `status` and no upgrade.
pub fn serve_refusal(l: TcpListener, status: &'static str) -> JoinHandle<()> {
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let mut s = accepted(&l);
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = s.read(&mut buf).unwrap();
            if n == 0 {
                return;
            }
            got.extend_from_slice(&buf[..n]);
        }
        let _ = write!(s, "HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
        let _ = s.flush();
    })
}

/// The server script: text and binary; then two messages from the client, handed to `got`;
/// then a close with `code`, and whatever the client sends until it goes (its answer to
/// the close among it), handed to `got` too.
pub fn text_binary_close(
    code: u16,
    got: mpsc::Sender<Message>,
) -> impl FnOnce(&mut WebSocket<TcpStream>) + Send + 'static {
    move |ws| {
        ws.send(Message::text("hello")).unwrap();
        ws.send(Message::binary(vec![1, 2, 3])).unwrap();
        for _ in 0..2 {
            if let Ok(m) = ws.read() {
                let _ = got.send(m);
            }
        }
        let _ = ws.close(Some(tungstenite::protocol::CloseFrame {
            code: code.into(),
            reason: "".into(),
        }));
        let _ = ws.flush();
        while let Ok(m) = ws.read() {
            let _ = got.send(m);
        }
    }
}

/// A self-signed certificate for `name`: the root a client trusts, and a TLS server
/// configuration with it.
pub fn tls_for(
    name: &str,
) -> (
    rustls_pki_types::CertificateDer<'static>,
    Arc<rustls::ServerConfig>,
) {
    let ck = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
    let der = ck.cert.der().clone();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key)
        .unwrap();
    (der, Arc::new(config))
}

/// Serves TLS handshakes with `config` on `l` for `n` connections, writing `hi` on each
/// that completes.
pub fn serve_tls(l: TcpListener, config: Arc<rustls::ServerConfig>, n: usize) -> JoinHandle<()> {
    std::thread::spawn(move || {
        use std::io::Write;
        for _ in 0..n {
            let s = accepted(&l);
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, s);
            let _ = tls.write_all(b"hi");
            let _ = tls.flush();
        }
    })
}

/// A scripted server on 127.0.0.1 that picks `pick` and runs [`text_binary_close`] with
/// `code`: its port, what it saw of the upgrade, what the client sent, and its thread.
pub fn scripted(
    pick: &'static str,
    code: u16,
) -> (
    u16,
    mpsc::Receiver<Seen>,
    mpsc::Receiver<Message>,
    JoinHandle<()>,
) {
    let (l, port) = listener();
    let (got_tx, got) = mpsc::channel();
    let (seen, server) = serve_ws(l, Some(pick), text_binary_close(code, got_tx));
    (port, seen, got, server)
}

/// A server on 127.0.0.1 that sends one binary message of 2048 bytes after the upgrade: its
/// port and its thread.
pub fn oversized_sender() -> (u16, JoinHandle<()>) {
    let (l, port) = listener();
    let (_seen, server) = serve_ws(l, None, |ws| {
        let _ = ws.send(Message::binary(vec![0; 2048]));
        let _ = ws.read();
    });
    (port, server)
}
