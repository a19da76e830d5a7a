//! Opening a connection within a deadline: DNS, every address in turn, and TLS verified
//! against the endpoint's own host name.

use crate::config::Config;
use nervix_driver_support::dial::{self, host_port, AddressOrder};
use nervix_driver_support::resolve::{ConnectError, Resolver};
use nervix_protocol::endpoint::Endpoint;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
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

/// How connections are opened: the configuration's resolver and, when it has roots, its TLS
/// configuration (rustls on the ring provider, ALPN `http/1.1` for the console's upgrade).
pub(crate) type Dialer = dial::Dialer<Arc<rustls::ClientConfig>>;

/// The dialer of `config`.
pub(crate) fn dialer(config: &Config) -> Result<Dialer, rustls::Error> {
    Dialer::new(&config.roots, &config.resolver, |roots| {
        dial::tls_config(roots, b"http/1.1")
    })
}

fn left(deadline: Instant) -> Result<Duration, ConnectError> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(ConnectError::TimedOut),
    }
}

/// Looks `host:port` up with `resolver` on a thread of its own, so the wait ends at the
/// deadline even when the resolver does not (T-2).
fn resolve(
    resolver: &Resolver,
    host: &str,
    port: u16,
    deadline: Instant,
) -> Result<Vec<SocketAddr>, ConnectError> {
    let (tx, rx) = mpsc::channel();
    resolver.lookup(host, port, move |a| {
        let _ = tx.send(a);
    });
    match rx.recv_timeout(left(deadline)?) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(ConnectError::LookupTimedOut {
            host: host.to_string(),
        }),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(dial::lookup_not_run(host)),
    }
}

/// Opens a byte stream to `e` by `deadline`: its host is looked up with the dialer's
/// resolver (the system's without one), every address is tried in the order of the answer,
/// each within what is left of the deadline, and an https endpoint gets TLS verified against
/// the endpoint's own host name, whatever address it resolved to (T-2). The socket's read and
/// write timeouts are set to what is left, so the handshakes that follow are bounded too.
pub(crate) fn open(
    e: &Endpoint,
    d: Option<&Dialer>,
    deadline: Instant,
) -> Result<Io, ConnectError> {
    let (host, port) = host_port(e);
    let resolver = dial::resolver_or_system(d.map(Dialer::resolver));
    let mut addrs = AddressOrder::new(resolve(&resolver, &host, port, deadline)?);
    let tcp = loop {
        let Some(a) = addrs.next_address() else {
            return Err(addrs.exhausted(&host));
        };
        match TcpStream::connect_timeout(&a, left(deadline)?) {
            Ok(s) => break s,
            Err(err) => addrs.failed(err),
        }
    };
    let set = |tcp: &TcpStream| -> Result<(), ConnectError> {
        tcp.set_nodelay(true).map_err(ConnectError::Connect)?;
        tcp.set_read_timeout(Some(left(deadline)?))
            .map_err(ConnectError::Connect)?;
        tcp.set_write_timeout(Some(left(deadline)?))
            .map_err(ConnectError::Connect)
    };
    set(&tcp)?;
    if !e.is_https() {
        return Ok(Io::Plain(tcp));
    }
    let tls = d
        .and_then(|d| d.tls().cloned())
        .ok_or(ConnectError::NoTls)?;
    let name = dial::server_name(host)?;
    let conn = rustls::ClientConnection::new(tls, name)
        .map_err(|e| ConnectError::Tls(io::Error::other(e)))?;
    let mut s = rustls::StreamOwned::new(conn, tcp);
    // The handshake now, so a refused certificate ends the attempt here.
    while s.conn.is_handshaking() {
        left(deadline)?;
        s.conn.complete_io(&mut s.sock).map_err(|e| {
            if timed_out_io(&e) {
                ConnectError::TimedOut
            } else {
                ConnectError::Tls(e)
            }
        })?;
    }
    Ok(Io::Tls(Box::new(s)))
}

fn timed_out_io(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
