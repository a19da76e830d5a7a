//! A receipt server on 127.0.0.1 for tests: the `cultnet-sim` server model behind real sockets.
//!
//! One thread accepts connections, one thread per connection reads and frames what the client
//! sends and hands each frame to the model (as arriving on the reliable ordered channel, which a
//! stream is), and one thread sends what the model has due. The model's time is the server's
//! own monotonic clock in milliseconds. Faults are the model's (silence, late answers) plus two
//! of the transport: a legacy server that sends no hello at all, and a server that drops the
//! connection when a write arrives instead of answering it.

use std::collections::BTreeMap;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use cultnet_receipts::framing::{encode_frame, FrameDecoder, DEFAULT_MAX_FRAME_BYTES};
use cultnet_receipts::{decode, Frame};
use cultnet_sim::server::{Channel, ConnId, Faults, Server, ServerConfig};

use crate::Target;

/// How a loopback server behaves.
#[derive(Debug, Clone)]
pub struct LoopbackOptions {
    /// The model's configuration (`receipts: false` makes a legacy server).
    pub config: ServerConfig,
    /// The model's faults from the start (they apply to the server's hello too).
    pub faults: Faults,
    /// The actor every connection is authenticated as.
    pub actor: String,
    /// Whether the server sends its hello; a legacy server of the oldest kind sends none.
    pub send_hello: bool,
    /// Whether a put or delete makes the server drop the connection instead of taking it.
    pub drop_on_write: bool,
}

impl Default for LoopbackOptions {
    fn default() -> Self {
        LoopbackOptions {
            config: ServerConfig::default(),
            faults: Faults::default(),
            actor: "loopback-actor".to_owned(),
            send_hello: true,
            drop_on_write: false,
        }
    }
}

struct State {
    server: Server,
    /// Each connection's writing half, shared so the pump writes without holding the state.
    conns: BTreeMap<ConnId, Arc<TcpStream>>,
}

struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
    start: Instant,
    options: LoopbackOptions,
    readers: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close(&self, conn: ConnId) {
        let mut st = self.lock();
        st.server.drop_connection(conn);
        if let Some(s) = st.conns.remove(&conn) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// A running loopback receipt server; dropping it stops its threads.
pub struct LoopbackServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for LoopbackServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl LoopbackServer {
    /// Starts a server on an ephemeral port of 127.0.0.1.
    pub fn start(options: LoopbackOptions) -> io::Result<LoopbackServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let mut server = Server::new(options.config.clone());
        server.set_faults(options.faults);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                server,
                conns: BTreeMap::new(),
            }),
            stop: AtomicBool::new(false),
            start: Instant::now(),
            options,
            readers: Mutex::new(Vec::new()),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || accept_loop(&listener, &shared))
        };
        let pump = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || pump_loop(&shared))
        };
        Ok(LoopbackServer {
            addr,
            shared,
            threads: vec![accept, pump],
        })
    }

    /// The address the server listens on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A plain TCP target for the server.
    #[must_use]
    pub fn target(&self) -> Target {
        Target::new("127.0.0.1", self.addr.port(), false)
    }

    /// Runs `f` on the server model (to deny an actor a schema, switch faults, read a record),
    /// with the server's clock reading.
    pub fn with_model<R>(&self, f: impl FnOnce(&mut Server, u64) -> R) -> R {
        let now = self.shared.now();
        let mut st = self.shared.lock();
        f(&mut st.server, now)
    }

    /// The actor every connection is authenticated as.
    #[must_use]
    pub fn actor(&self) -> &str {
        &self.shared.options.actor
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        {
            let st = self.shared.lock();
            for s in st.conns.values() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let readers = std::mem::take(
            &mut *self
                .shared
                .readers
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for t in readers {
            let _ = t.join();
        }
    }
}

const IDLE: Duration = Duration::from_millis(2);

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                if stream.set_nonblocking(false).is_err()
                    || stream.set_nodelay(true).is_err()
                    || stream
                        .set_read_timeout(Some(Duration::from_millis(20)))
                        .is_err()
                    || stream
                        .set_write_timeout(Some(Duration::from_secs(2)))
                        .is_err()
                {
                    continue;
                }
                let Ok(writer) = stream.try_clone() else {
                    continue;
                };
                let conn = {
                    let now = shared.now();
                    let mut st = shared.lock();
                    let conn = st.server.connect(&shared.options.actor, now);
                    st.conns.insert(conn, Arc::new(writer));
                    conn
                };
                let s = Arc::clone(shared);
                let reader = thread::spawn(move || read_loop(stream, conn, &s));
                let mut readers = shared.readers.lock().unwrap_or_else(|p| p.into_inner());
                // Reader threads of closed connections are joined here, so the list holds
                // only the live ones.
                let (done, live): (Vec<_>, Vec<_>) =
                    readers.drain(..).partition(JoinHandle::is_finished);
                *readers = live;
                readers.push(reader);
                drop(readers);
                for t in done {
                    let _ = t.join();
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => thread::sleep(IDLE),
            Err(_) => thread::sleep(IDLE),
        }
    }
}

fn read_loop(mut stream: TcpStream, conn: ConnId, shared: &Arc<Shared>) {
    let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME_BYTES);
    let mut buf = vec![0u8; 16 * 1024];
    while !shared.stop.load(Ordering::SeqCst) {
        let n = match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => break,
        };
        let mut input = &buf[..n];
        while !input.is_empty() {
            let Ok((took, body)) = decoder.push(input) else {
                shared.close(conn);
                return;
            };
            input = &input[took..];
            if let Some(body) = body {
                let is_write = matches!(
                    decode(&body),
                    Ok(Frame::DocumentPut(_) | Frame::DocumentDelete(_))
                );
                if is_write && shared.options.drop_on_write {
                    shared.close(conn);
                    return;
                }
                let now = shared.now();
                shared
                    .lock()
                    .server
                    .on_frame(conn, Channel::ReliableOrdered, &body, now);
            } else if took == 0 {
                break;
            }
        }
    }
    shared.close(conn);
}

fn pump_loop(shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        // What is due is taken under the lock; the socket writes happen after it is released,
        // so a peer that does not read never stalls the model or the other connections.
        let due: Vec<(ConnId, Option<Arc<TcpStream>>, Vec<u8>)> = {
            let now = shared.now();
            let mut st = shared.lock();
            let mut due = Vec::new();
            while let Some(out) = st.server.poll_output(now) {
                if !shared.options.send_hello && matches!(decode(&out.bytes), Ok(Frame::Hello(_))) {
                    continue;
                }
                let Ok(framed) = encode_frame(&out.bytes, DEFAULT_MAX_FRAME_BYTES) else {
                    continue;
                };
                due.push((out.conn, st.conns.get(&out.conn).cloned(), framed));
            }
            due
        };
        let mut failed = Vec::new();
        for (conn, stream, framed) in due {
            if failed.contains(&conn) {
                continue;
            }
            if let Some(s) = stream {
                if (&*s).write_all(&framed).is_err() {
                    failed.push(conn);
                }
            }
        }
        for conn in failed {
            shared.close(conn);
        }
        thread::sleep(IDLE);
    }
}

impl LoopbackServer {
    /// Reader threads not yet joined: one per open connection, plus those of connections that
    /// closed since the last accept.
    #[must_use]
    pub fn reader_threads(&self) -> usize {
        self.shared
            .readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }
}
