//! Opening a connection within a deadline: DNS, every address in turn, and TLS verified
//! against the endpoint's own host name.

use nervix_protocol::endpoint::Endpoint;
use rustls_pki_types::{CertificateDer, ServerName};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// A plain or TLS byte stream over a blocking socket.
pub(crate) enum Io {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Io {
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Io::Plain(s) => s,
            Io::Tls(s) => &s.sock,
        }
    }
}

impl Read for Io {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Io::Plain(s) => s.read(buf),
            Io::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Io {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Io::Plain(s) => s.write(buf),
            Io::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Io::Plain(s) => s.flush(),
            Io::Tls(s) => s.flush(),
        }
    }
}

/// The host (brackets removed from an IPv6 literal) and port of an endpoint.
pub(crate) fn host_port(e: &Endpoint) -> (String, u16) {
    let auth = e.authority();
    let default = if e.is_https() { 443 } else { 80 };
    if let Some(rest) = auth.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        let port = after
            .strip_prefix(':')
            .and_then(|p| p.parse().ok())
            .unwrap_or(default);
        return (host.to_string(), port);
    }
    match auth.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(default)),
        None => (auth.to_string(), default),
    }
}

/// The TLS client configuration: rustls on the ring provider, the given roots, ALPN
/// `http/1.1` for the console's HTTP upgrade.
#[derive(Clone)]
pub(crate) struct Tls(Arc<rustls::ClientConfig>);

impl Tls {
    pub(crate) fn new(roots: &[CertificateDer<'static>]) -> Result<Self, rustls::Error> {
        let mut store = rustls::RootCertStore::empty();
        for r in roots {
            store.add(r.clone())?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut c = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(store)
            .with_no_client_auth();
        c.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self(Arc::new(c)))
    }
}

fn left(deadline: Instant) -> io::Result<Duration> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the connection deadline passed",
        )),
    }
}

/// Resolves `host:port` on a helper thread, so the wait for DNS ends at the deadline even
/// when the resolver does not (T-2).
fn resolve(host: &str, port: u16, deadline: Instant) -> io::Result<Vec<SocketAddr>> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let (tx, rx) = mpsc::channel();
    let name = host.to_string();
    std::thread::Builder::new()
        .name("nervix-dns".into())
        .spawn(move || {
            let r = (name.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<_>>());
            let _ = tx.send(r);
        })?;
    match rx.recv_timeout(left(deadline)?) {
        Ok(r) => r,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "DNS did not answer within the connection deadline",
        )),
    }
}

/// Opens a byte stream to `e` by `deadline`: every address its host resolves to is tried in
/// turn, each within what is left of the deadline, and an https endpoint gets TLS verified
/// against the endpoint's own host name (T-2). The socket's read and write timeouts are set to
/// what is left, so the handshakes that follow are bounded too.
pub(crate) fn open(e: &Endpoint, tls: Option<&Tls>, deadline: Instant) -> io::Result<Io> {
    let (host, port) = host_port(e);
    let addrs = resolve(&host, port, deadline)?;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host resolves to no address");
    let mut tcp = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, left(deadline)?) {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(err) => last = err,
        }
    }
    let tcp = tcp.ok_or(last)?;
    tcp.set_nodelay(true)?;
    tcp.set_read_timeout(Some(left(deadline)?))?;
    tcp.set_write_timeout(Some(left(deadline)?))?;
    if !e.is_https() {
        return Ok(Io::Plain(tcp));
    }
    let tls = tls.ok_or_else(|| io::Error::other("no TLS configuration"))?;
    let name = ServerName::try_from(host)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "not a TLS server name"))?;
    let conn = rustls::ClientConnection::new(tls.0.clone(), name).map_err(io::Error::other)?;
    let mut s = rustls::StreamOwned::new(conn, tcp);
    // The handshake now, so a refused certificate ends the attempt here.
    while s.conn.is_handshaking() {
        left(deadline)?;
        s.conn.complete_io(&mut s.sock)?;
    }
    Ok(Io::Tls(Box::new(s)))
}
