//! The blocking transports on std sockets: a byte stream opened by a deadline over the
//! resolver's answers in order (TCP, then rustls verified against the target's own host
//! name), a WebSocket client handshake bounded by the same deadline, and [`Paced`], the byte
//! stream with the deadline of the read or write under way, which bounds a whole WebSocket
//! read or write (not each system call under it) against a peer that trickles.

use crate::dial::{self, AddressOrder, Target};
use crate::resolve::{ConnectError, Resolver};
use crate::ws::{self, timed_out, Handshake, HandshakeError};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tungstenite::handshake::HandshakeError as Interrupted;

pub use tungstenite::WebSocket;

/// A plain or TLS byte stream over a blocking socket.
#[derive(Debug)]
#[non_exhaustive]
pub enum Io {
    /// A TCP connection.
    Plain(TcpStream),
    /// TLS over a TCP connection.
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Io {
    /// The socket underneath, for its timeouts.
    pub fn tcp(&self) -> &TcpStream {
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

/// A byte stream with the deadline of the read or write under way. A WebSocket reads its
/// stream again and again until a whole frame has come (and TLS the socket until a whole
/// record has), and writes it again and again until a whole message went: a socket timeout
/// alone bounds one system call, so a peer trickling a frame a byte at a time, or reading a
/// trickle of one, could hold a read or a write as long as it trickles. Here each read and
/// write waits at most until the deadline and then fails as timed out, and a TLS read hands on
/// what one socket read brought, so the deadline bounds the whole frame. Without a deadline it
/// is the stream as it is.
#[derive(Debug)]
pub struct Paced {
    io: Io,
    deadline: Option<Instant>,
}

impl Paced {
    /// `io` with no deadline yet.
    pub fn new(io: Io) -> Self {
        Self { io, deadline: None }
    }

    /// Sets the deadline of the reads and writes that follow.
    pub fn until(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    /// The stream underneath.
    pub fn io(&self) -> &Io {
        &self.io
    }

    /// The socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        self.io.tcp()
    }

    /// Hands what TLS holds to the socket, one socket write at a time, each waiting only for
    /// what is left of the deadline (a loop writing until all went would let a peer reading a
    /// trickle stretch it).
    fn push_tls(&mut self) -> io::Result<()> {
        let deadline = self.deadline;
        let Io::Tls(t) = &mut self.io else {
            return Ok(());
        };
        while t.conn.wants_write() {
            if let Some(left) = left_of(deadline)? {
                t.sock.set_write_timeout(Some(left))?;
            }
            if t.conn.write_tls(&mut t.sock)? == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
        Ok(())
    }
}

/// The time left before `deadline`, or a timed-out error once it has passed.
pub fn time_left(deadline: Instant) -> io::Result<Duration> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(io::ErrorKind::TimedOut.into()),
    }
}

/// The time left before `deadline` (a timed-out error once it passed), if there is one.
fn left_of(deadline: Option<Instant>) -> io::Result<Option<Duration>> {
    deadline.map(time_left).transpose()
}

/// One read of `io` that waits at most as long as one read of the socket (its read timeout).
/// Over TLS, the TLS library's own reader reads the socket again and again until a whole record
/// has come, so a peer trickling a record's bytes would hold that read past any deadline; here
/// plaintext already decrypted goes first (0 is the peer's close_notify), otherwise what one
/// socket read brought is handed to TLS, and no plaintext yet reads as a timeout
/// (`WouldBlock`), after which the caller judges its clock again.
pub fn read_step(io: &mut Io, buf: &mut [u8]) -> io::Result<usize> {
    let t = match io {
        Io::Tls(t) => t,
        other => return other.read(buf),
    };
    match t.conn.reader().read(buf) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        other => return other,
    }
    if t.conn.read_tls(&mut t.sock)? == 0 {
        return Ok(0);
    }
    t.conn
        .process_new_packets()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    t.conn.reader().read(buf)
}

impl Read for Paced {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(left) = left_of(self.deadline)? else {
            return self.io.read(buf);
        };
        self.io.tcp().set_read_timeout(Some(left))?;
        read_step(&mut self.io, buf)
    }
}

impl Write for Paced {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(left) = left_of(self.deadline)? else {
            return self.io.write(buf);
        };
        if let Io::Plain(s) = &mut self.io {
            s.set_write_timeout(Some(left))?;
            return s.write(buf);
        }
        // What earlier writes left first; then the bytes taken by TLS are written, and once
        // taken they count as written: what the deadline keeps back goes with the next write
        // or flush (which fails while the deadline has passed).
        self.push_tls()?;
        let n = match &mut self.io {
            Io::Tls(t) => t.conn.writer().write(buf)?,
            Io::Plain(_) => 0,
        };
        let _ = self.push_tls();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.deadline.is_none() {
            return self.io.flush();
        }
        self.push_tls()?;
        match &mut self.io {
            Io::Tls(t) => t.sock.flush(),
            Io::Plain(s) => s.flush(),
        }
    }
}

/// What is left until `deadline`; [`ConnectError::TimedOut`] when nothing is.
pub fn left(deadline: Instant) -> Result<Duration, ConnectError> {
    time_left(deadline).map_err(|_| ConnectError::TimedOut)
}

/// Looks `host:port` up with `resolver` on a thread of its own, so the wait ends at the
/// deadline even when the resolver does not.
pub fn lookup(
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

/// Opens a byte stream to `target` by `deadline`: its host is looked up with `resolver`,
/// every address is tried in the order of the answer, each within what is left of the
/// deadline, and a TLS target gets TLS with `tls` (refused with [`ConnectError::NoTls`]
/// without), verified against the target's own host name, whatever address it resolved to.
/// The socket's read and write timeouts are set to what is left, so the handshakes that
/// follow are bounded too.
pub fn open(
    target: &Target,
    resolver: &Resolver,
    tls: Option<Arc<rustls::ClientConfig>>,
    deadline: Instant,
) -> Result<Io, ConnectError> {
    let host = &target.host;
    let mut addrs = AddressOrder::new(lookup(resolver, host, target.port, deadline)?);
    let tcp = loop {
        let Some(a) = addrs.next_address() else {
            return Err(addrs.exhausted(host));
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
    if !target.tls {
        return Ok(Io::Plain(tcp));
    }
    let tls = tls.ok_or(ConnectError::NoTls)?;
    let name = dial::server_name(host.clone())?;
    let conn = rustls::ClientConnection::new(tls, name)
        .map_err(|e| ConnectError::Tls(io::Error::other(e)))?;
    let mut s = rustls::StreamOwned::new(conn, tcp);
    // The handshake now, so a refused certificate ends the attempt here. One step at a time (a
    // flight written, or what one socket read brought taken in), each waiting only for what is
    // left: a peer trickling its flight a byte at a time cannot hold the handshake past the
    // deadline, as it could a loop that reads until the handshake is done. The client's last
    // flight (its Finished) goes too: left queued, it would wait for the client's first write,
    // and a server that speaks first would wait for it as long as the client only reads.
    while s.conn.is_handshaking() || s.conn.wants_write() {
        let step = left(deadline)?;
        let r = if s.conn.wants_write() {
            s.sock
                .set_write_timeout(Some(step))
                .and_then(|()| s.conn.write_tls(&mut s.sock).map(drop))
        } else {
            s.sock.set_read_timeout(Some(step)).and_then(|()| {
                match s.conn.read_tls(&mut s.sock)? {
                    0 => Err(io::ErrorKind::UnexpectedEof.into()),
                    _ => s
                        .conn
                        .process_new_packets()
                        .map(drop)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
                }
            })
        };
        r.map_err(|e| {
            if timed_out(&e) {
                ConnectError::TimedOut
            } else {
                ConnectError::Tls(e)
            }
        })?;
    }
    Ok(Io::Tls(Box::new(s)))
}

/// The WebSocket client handshake `hs` over `io` by `deadline` (the stream's own read and
/// write timeouts bound each step, see [`open`]): the upgrade with its subprotocols and
/// headers, messages limited either way. The connection and the subprotocol the server
/// picked come back.
pub fn websocket<S: Read + Write>(
    io: S,
    hs: &Handshake,
    deadline: Instant,
) -> Result<(WebSocket<S>, Option<String>), HandshakeError> {
    let request = hs.request()?;
    let mut attempt = tungstenite::client::client_with_config(request, io, Some(hs.config()));
    loop {
        match attempt {
            Ok((ws, response)) => return Ok((ws, ws::chosen(&response))),
            Err(Interrupted::Interrupted(mid)) => {
                // A read or write timed out at the deadline the socket carries.
                if Instant::now() >= deadline {
                    return Err(HandshakeError::TimedOut);
                }
                attempt = mid.handshake();
            }
            Err(Interrupted::Failure(e)) => return Err(HandshakeError::of(e)),
        }
    }
}
