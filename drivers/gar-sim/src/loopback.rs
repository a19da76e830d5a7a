//! The server model behind real sockets on 127.0.0.1: WebSocket with the subprotocol
//! `gar-protocol`, at one path, with an optional `token=` query (a wrong or missing token is a
//! 401 at the upgrade).
//!
//! One thread accepts; each connection has one thread that reads with a short timeout, hands
//! every text message to the model, runs the model's timers, and writes what the model has
//! queued for that connection. The model's time is the server's monotonic clock in milliseconds.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use sansio_kit::ws::{close, incoming, Incoming, Message, ReadError};
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::WebSocket;

use crate::server::{ConnId, Output, PeerClose, Server, ServerConfig};

/// How the loopback server is set up.
#[derive(Debug, Clone)]
pub struct LoopbackOptions {
    /// The model's configuration.
    pub config: ServerConfig,
    /// The upgrade path (`/gar` by default); another path is a 404.
    pub path: String,
    /// The token the `token=` query must carry; None accepts any or none.
    pub token: Option<String>,
    /// The port to bind on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// Ended connections (with their recorded frames) kept for inspection; older ones are
    /// forgotten, so a long-running server stays bounded. Also the most refused upgrades whose
    /// statuses [`Loopback::refused`] keeps (the oldest go first).
    pub keep_ended: usize,
    /// Connections served at once at most (each has a thread); a TCP connection beyond it is
    /// closed at once, unanswered, and counted in [`Loopback::turned_away`].
    pub max_connections: usize,
}

impl Default for LoopbackOptions {
    fn default() -> Self {
        LoopbackOptions {
            config: ServerConfig::default(),
            path: "/gar".to_owned(),
            token: None,
            port: 0,
            keep_ended: 256,
            max_connections: 64,
        }
    }
}

struct Shared {
    server: Mutex<Server>,
    stop: AtomicBool,
    start: Instant,
    options: LoopbackOptions,
    refused: Mutex<VecDeque<u16>>,
    turned_away: AtomicU64,
}

impl Shared {
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, Server> {
        self.server.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running loopback server; dropping it stops accepting and ends every connection.
pub struct Loopback {
    shared: Arc<Shared>,
    addr: SocketAddr,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Loopback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loopback")
            .field("addr", &self.addr)
            .finish()
    }
}

const POLL: Duration = Duration::from_millis(5);
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

impl Loopback {
    /// Binds 127.0.0.1 and starts serving.
    ///
    /// # Errors
    /// The bind failing.
    pub fn start(options: LoopbackOptions) -> io::Result<Loopback> {
        let listener = TcpListener::bind(("127.0.0.1", options.port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            server: Mutex::new(Server::new(options.config.clone())),
            stop: AtomicBool::new(false),
            start: Instant::now(),
            options,
            refused: Mutex::new(VecDeque::new()),
            turned_away: AtomicU64::new(0),
        });
        let s = Arc::clone(&shared);
        let acceptor = thread::Builder::new()
            .name("gar-sim-accept".into())
            .spawn(move || accept_loop(&listener, &s))?;
        Ok(Loopback {
            shared,
            addr,
            acceptor: Some(acceptor),
        })
    }

    /// The bound address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL a client connects to (`ws://127.0.0.1:<port><path>`), without a token.
    #[must_use]
    pub fn url(&self) -> String {
        format!("ws://{}{}", self.addr, self.shared.options.path)
    }

    /// Runs `f` on the model (to seed the store, inject a fault, or read what was recorded).
    pub fn with_server<R>(&self, f: impl FnOnce(&mut Server) -> R) -> R {
        f(&mut self.shared.lock())
    }

    /// The model's connections so far, in order of arrival.
    #[must_use]
    pub fn connections(&self) -> Vec<ConnId> {
        self.shared.lock().connections()
    }

    /// The HTTP statuses of the upgrades refused so far, oldest first (the latest
    /// [`LoopbackOptions::keep_ended`] of them).
    #[must_use]
    pub fn refused(&self) -> Vec<u16> {
        self.shared
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .copied()
            .collect()
    }

    /// TCP connections closed unanswered because [`LoopbackOptions::max_connections`] were
    /// being served.
    #[must_use]
    pub fn turned_away(&self) -> u64 {
        self.shared.turned_away.load(Ordering::SeqCst)
    }

    /// The server's clock (ms since it started), the time the model sees.
    #[must_use]
    pub fn now(&self) -> u64 {
        self.shared.now()
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    while !shared.stop.load(Ordering::SeqCst) {
        workers.retain(|h| !h.is_finished());
        match listener.accept() {
            Ok((stream, _)) if workers.len() >= shared.options.max_connections => {
                shared.turned_away.fetch_add(1, Ordering::SeqCst);
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
            Ok((stream, _)) => {
                let s = Arc::clone(shared);
                if let Ok(h) = thread::Builder::new()
                    .name("gar-sim-conn".into())
                    .spawn(move || serve(stream, &s))
                {
                    workers.push(h);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(POLL),
            Err(_) => thread::sleep(POLL),
        }
        workers.retain(|h| !h.is_finished());
    }
    for h in workers {
        let _ = h.join();
    }
}

fn query_token(query: &str) -> Option<&str> {
    query.split('&').find_map(|p| p.strip_prefix("token="))
}

fn refusal(status: u16) -> ErrorResponse {
    let mut r = ErrorResponse::new(None);
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::BAD_REQUEST);
    r
}

fn upgrade(stream: TcpStream, shared: &Shared) -> Option<WebSocket<TcpStream>> {
    let _ = stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT));
    let opts = &shared.options;
    // A refusal is noted before its response is written, so a client that saw it can count on it.
    let refuse = |status: u16| {
        let mut kept = shared.refused.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= opts.keep_ended {
            kept.pop_front();
        }
        if opts.keep_ended > 0 {
            kept.push_back(status);
        }
        refusal(status)
    };
    // The callback's signature is tungstenite's: its error is the HTTP response it refuses with.
    #[allow(clippy::result_large_err)]
    let check = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        let uri = req.uri();
        if uri.path() != opts.path {
            return Err(refuse(404));
        }
        if let Some(want) = &opts.token {
            if query_token(uri.query().unwrap_or("")) != Some(want.as_str()) {
                return Err(refuse(401));
            }
        }
        let offered = req
            .headers()
            .get_all("sec-websocket-protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == "gar-protocol");
        if !offered {
            return Err(refuse(400));
        }
        resp.headers_mut().insert(
            "sec-websocket-protocol",
            http::HeaderValue::from_static("gar-protocol"),
        );
        Ok(resp)
    };
    tungstenite::accept_hdr(stream, check).ok()
}

fn serve(stream: TcpStream, shared: &Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let Some(ws) = upgrade(stream, shared) else {
        return;
    };
    let conn = shared.lock().connect(shared.now());
    run(ws, conn, shared);
    let mut s = shared.lock();
    s.handle_close(conn, PeerClose::Dropped);
    s.prune_ended(shared.options.keep_ended);
}

fn run(mut ws: WebSocket<TcpStream>, conn: ConnId, shared: &Arc<Shared>) {
    let _ = ws.get_mut().set_read_timeout(Some(POLL));
    let _ = ws.get_mut().set_write_timeout(Some(HANDSHAKE_TIMEOUT));
    // The peer closed: tungstenite holds its answer until the next write, which is sent only
    // when the model answers the close (G-59).
    let mut peer_closed = false;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            let _ = ws.close(None);
            let _ = ws.flush();
            return;
        }
        match incoming(ws.read()) {
            Ok(Incoming::Text(t)) => shared.lock().handle_text(conn, shared.now(), &t),
            Ok(Incoming::Binary(_)) => shared.lock().handle_binary(conn, shared.now()),
            Ok(Incoming::Close(code)) => {
                peer_closed = true;
                shared.lock().handle_close(conn, PeerClose::Code(code));
            }
            Ok(_) | Err(ReadError::TimedOut) => {}
            Err(ReadError::Failed(e)) if e.contains("close") || e.contains("Close") => {
                peer_closed = true;
                shared.lock().handle_close(conn, PeerClose::Malformed);
            }
            Err(_) => {
                shared.lock().handle_close(conn, PeerClose::Dropped);
                return;
            }
        }
        let mut out = Vec::new();
        {
            let mut s = shared.lock();
            s.handle_timeout(shared.now());
            while let Some(o) = s.poll_transmit(conn) {
                out.push(o);
            }
        }
        for o in out {
            match o {
                Output::Text(t) => {
                    if ws.send(Message::text(t)).is_err() {
                        shared.lock().handle_close(conn, PeerClose::Dropped);
                        return;
                    }
                }
                Output::Close(code) => {
                    // A close the peer started is answered by the connection itself; ours is
                    // sent here. Either way the socket is done after a short drain.
                    let _ = ws.send(close(code));
                    let _ = ws.flush();
                    linger(&mut ws);
                    return;
                }
            }
        }
        if !shared.lock().is_open(conn) && shared.lock().ended(conn).is_some() {
            if peer_closed {
                // A close the model did not answer (an error code, a malformed close): the
                // connection is dropped without one, so nothing queued is flushed.
                let _ = ws.get_mut().shutdown(std::net::Shutdown::Both);
                return;
            }
            let _ = ws.flush();
            linger(&mut ws);
            return;
        }
    }
}

/// Reads until the peer closes (or a short while passes), so a close is seen by the peer before
/// the socket goes.
fn linger(ws: &mut WebSocket<TcpStream>) {
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        match ws.read() {
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if sansio_kit::ws::timed_out(&e) => {}
            Err(_) => break,
        }
    }
    let _ = ws.get_mut().shutdown(std::net::Shutdown::Both);
}
