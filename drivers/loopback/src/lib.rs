//! The simulated Nervix cluster of `nervix-harness` served over real sockets on 127.0.0.1.
//!
//! [`Loopback::start`] binds two ports per node: one serving gRPC over HTTP/2
//! (`/nervix.session.Session/Exchange`, each message one frame behind the 5-byte gRPC length
//! prefix) and one serving the WebSocket console (`/console/ws`, one binary message per frame).
//! The cluster advertises these real ports as each node's `grpc_uri` and `web_console_uri`,
//! so a redirect names an address a client can reach. With [`LoopbackConfig::tls`] both ports
//! speak TLS with a certificate generated at start for [`LoopbackConfig::certificate_name`]
//! (`localhost` by default), and the endpoints are `https://localhost:<port>/`.
//!
//! Each accepted gRPC stream or WebSocket is one cluster connection: its frames go to
//! [`SimCluster::receive`], the cluster's outputs come back as transport messages, and a timer
//! advances the cluster's clock. The server checks Basic credentials on every call (an
//! `authorization` header, or on the console the `Authorization` header or the form-encoded
//! `auth` query parameter) against [`LoopbackConfig::users`].
//!
//! Fault injection ([`Loopback`]'s methods) reaches the sockets: kill a node (its streams end,
//! new ones are refused), cut streams without a frame, drop a node's replies, change the
//! leader, answer calls `UNAVAILABLE` or 503, end a call with a gRPC status or a WebSocket close
//! code, send a frame above the 4 MiB limit, and read slowly. [`Loopback::stats`] tells what the server saw.
//!
//! The server runs on a thread and runtime of its own, so blocking and async clients alike can
//! be pointed at it; dropping the [`Loopback`] stops it.
//!
//! [`scenario`] holds what the drivers' seeded scenario tests share: the loopback a seed asks
//! for, the book of what the application holds and observed, and the verdict on a run.
//!
//! ## Where this crate sits
//!
//! The workspace keeps one sans-IO engine per system under `protocol/` and everything that
//! touches sockets, files and time under `drivers/`. `nervix-protocol` is the Nervix engine;
//! `sansio-kit` holds what every engine's driver needs and knows no engine (name lookup,
//! dialling with a deadline, rustls, WebSocket and gRPC framing, back-off, bounded queues);
//! `nervix-driver-support` is the Nervix driver core both Nervix drivers share, with no
//! runtime; `nervix-tokio` and `nervix-blocking` add only a runtime, sockets and a way to wait.
//! A user of one engine compiles that engine, its drivers and `sansio-kit`, nothing of another
//! engine (the conformance crate's fence tests hold this). `nervix-harness` and
//! `nervix-loopback` are the test drivers: a seeded simulation and the same cluster served
//! over real sockets on 127.0.0.1.
//!
//! # Behaviour reference
//!
//! `nervix-loopback` serves the simulated cluster on 127.0.0.1, two ports per node (gRPC and
//! console), advertising the real ports so redirects cross real sockets. Tests reach its faults:
//! `kill`, `revive`, `cut_streams`, `drop_replies`, `set_leader`, `slow_reader` (a node that waits
//! before reading each piece a client sent, so a client's writes back up to its write deadline), and
//! `inject` (UNAVAILABLE/503, a gRPC status, a close code, an oversized frame, a text message on
//! a console call), `flood_notices`
//! (unsolicited frames of a chosen size) and `send_raw_then_finish` (a gRPC body cut inside a
//! message). `node_hosts` gives each node a host name and a certificate of its own, so a redirect
//! to another name is verified against that name and a certificate for the wrong name is refused
//! (the `tls` module of `nervix-driver-tests`); its `hostile` module
//! holds the hostile-peer cases (floods, a silent node, cut gRPC bodies, defect close codes). `plain_nodes` serves
//! chosen nodes over http inside a TLS cluster, so a redirect can lead from https to http (which the
//! clients refuse, T-2), and `rows` sets the pace and size of subscription batches; `unpaced_rows`
//! drops the pace, sending batches as fast as each session's transport takes them. `just serve --tls` (or `nervix-sim serve`) runs
//! it for any client; credentials `nervix` / `nervix`. It prints each node's endpoints on a line
//! of its own, and with `--endpoints FILE` writes the same lines to FILE once every port is bound
//! (renamed into place whole), so a script waits for the file instead of sleeping.

mod calls;
mod grpc;
pub mod scenario;
mod ws;

pub use calls::{DOWNLOAD_PATH, DOWNLOAD_WS_PATH, RESTORE_PATH, RESTORE_WS_PATH, UPLOAD_PATH};

use base64::Engine as _;
use bytes::Bytes;
pub use nervix_harness::cluster::CallFaults;
use nervix_harness::cluster::{ClusterConfig, ConnId, Faults, Output, SimCluster};
use nervix_harness::scenario::TransportFault;
use nervix_protocol::frame::ClientFrame;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::time::Timestamp;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// The largest frame either side sends or accepts: 4 MiB.
pub const FRAME_LIMIT: usize = nervix_protocol::limits::FRAME_LIMIT;

/// The longest the server's clock goes without advancing the cluster.
const TICK: Duration = Duration::from_millis(50);

/// The gRPC method of a session.
pub const EXCHANGE_PATH: &str = "/nervix.session.Session/Exchange";

/// The WebSocket path of a console session.
pub const CONSOLE_PATH: &str = "/console/ws";

/// How a [`Loopback`] is built.
#[derive(Debug, Clone)]
pub struct LoopbackConfig {
    /// Nodes (1 or 3). Default 3.
    pub nodes: usize,
    /// Serve https and wss with a generated certificate. Default false.
    pub tls: bool,
    /// The host name the certificate is issued for and the endpoints name. Default
    /// `localhost`. A certificate for another name lets a test check that a client refuses it.
    pub certificate_name: String,
    /// The host name the endpoints name when TLS is on. Default `localhost`.
    pub host: String,
    /// Accepted credentials, `(user, password)`. Default `nervix` / `nervix`.
    pub users: Vec<(String, String)>,
    /// The cluster's seed. Default 1.
    pub seed: u64,
    /// The cluster's own faults. Default none.
    pub faults: Faults,
    /// How often an open subscription receives a batch, and the most rows of one batch.
    /// Default 150 ms and 3, the simulated cluster's own.
    pub rows: (Duration, u64),
    /// Nodes served over plain http even when `tls` is on, and advertised so: a redirect to
    /// one leads a client from https to http, which it must not follow. Default none.
    pub plain_nodes: Vec<usize>,
    /// With `tls`, a host name of each node, in node order (`node0.nervix.test`, ...): node
    /// `i`'s endpoints name `node_hosts[i]` and it presents a certificate of its own, issued
    /// for that name (or for `node_certificate_names[i]` when given). A client resolves these
    /// names to 127.0.0.1 through its resolver. Default none: every node is `host`, with one
    /// certificate for `certificate_name`.
    pub node_hosts: Vec<String>,
    /// With `node_hosts`, the name each node's certificate is issued for, when not its host
    /// name: a node whose certificate names another host lets a test check that a client
    /// refuses it. Default none.
    pub node_certificate_names: Vec<String>,
    /// The bytes each domain adds to a backup's archive. Default 3 KiB (the simulated
    /// cluster's own); tens of MiB make a transfer long enough to watch.
    pub archive_domain_bytes: u64,
    /// Rows as fast as the transport takes them: an open subscription gets its next batch of
    /// exactly `rows.1` rows whenever the previous batches were written to the socket (on the
    /// console) or given room by the call's flow control (on gRPC), with no pacing; `rows.0`
    /// is ignored. Batches of a `wide<N>` relay are written once and
    /// copied with their row numbers filled in, so the server's share stays small. The cluster
    /// records nothing per batch in this mode, so memory stays flat. Default false.
    pub unpaced_rows: bool,
}

impl Default for LoopbackConfig {
    fn default() -> Self {
        Self {
            nodes: 3,
            tls: false,
            certificate_name: "localhost".into(),
            host: "localhost".into(),
            users: vec![("nervix".into(), "nervix".into())],
            seed: 1,
            faults: Faults::default(),
            rows: (nervix_harness::cluster::ROW_PERIOD, 3),
            plain_nodes: Vec::new(),
            node_hosts: Vec::new(),
            node_certificate_names: Vec::new(),
            archive_domain_bytes: 3 * 1024,
            unpaced_rows: false,
        }
    }
}

impl LoopbackConfig {
    /// One node serving unpaced rows ([`LoopbackConfig::unpaced_rows`]) in batches of
    /// exactly `batch` rows, defaults elsewhere: the cluster the unpaced-rows tests and
    /// benchmarks read from as fast as the transport takes.
    pub fn unpaced(batch: u64) -> Self {
        Self {
            nodes: 1,
            rows: (Duration::from_secs(3600), batch),
            unpaced_rows: true,
            ..Self::default()
        }
    }
}

/// Which transport a stream used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    /// gRPC over HTTP/2.
    Grpc,
    /// The WebSocket console.
    WebSocket,
}

/// How a call presented its credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthSeen {
    /// None at all.
    Missing,
    /// An `authorization` header carrying these decoded credentials, if they decode.
    Header(Option<(String, String)>),
    /// The console's `auth` query parameter, form-decoded, then base64-decoded.
    Query(Option<(String, String)>),
}

/// One call the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSeen {
    /// The node it reached.
    pub node: usize,
    /// Its transport.
    pub transport: Transport,
    /// Its path.
    pub path: String,
    /// Its credentials.
    pub auth: AuthSeen,
    /// Whether they were accepted.
    pub accepted: bool,
    /// Whether the connection was TLS and which ALPN protocol it agreed, if any.
    pub alpn: Option<String>,
}

/// Runs `f` on a thread of its own and panics when it has not ended within `limit`, so a test
/// that would hang fails instead; a panic of `f` is passed on.
pub fn bounded<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(_) => match t.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("the test did not end within its bound"),
        },
    }
}

/// What the server saw, for tests.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Every call, in arrival order.
    pub calls: Vec<CallSeen>,
    /// Client frames received, all streams.
    pub frames: u64,
    /// The execution reference of every command frame received, in order.
    pub references: Vec<String>,
    /// WebSocket messages that were not binary.
    pub non_binary: u64,
    /// Streams ended by the client cleanly (half-close or close frame).
    pub clean_closes: u64,
    /// Streams ended by the client without a clean end.
    pub unclean_closes: u64,
}

/// A fault that acts on the next call or frame it applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFault {
    /// Refuse the next calls' credentials check as unavailable: gRPC `UNAVAILABLE`, HTTP 503.
    AuthUnavailable,
    /// End the session stream or separate call carrying the next client frame with this gRPC
    /// status instead of reading it (OUT_OF_RANGE is 11, INTERNAL 13).
    GrpcStatus(u32),
    /// Close the console connection (session or separate call) carrying the next client frame
    /// with this close code instead of reading it.
    CloseCode(u16),
    /// Send a message one byte above the frame limit as the next server frame.
    OversizedFrame,
    /// Answer the next client frame of a console call (a download or a restore) with a text
    /// message first, then serve the frame as usual.
    CallTextMessage,
}

/// What a stream's task is told to send.
#[derive(Debug)]
pub(crate) enum Out {
    /// One server frame.
    Frame(Bytes),
    /// An oversized message, `FRAME_LIMIT + 1` bytes.
    Oversized,
    /// End the stream: the node closed it (`going_away` when the node went down).
    Close { going_away: bool },
    /// Cut the transport without a frame or a status.
    Cut,
    /// End the call with a gRPC status, or the console with a close code.
    Status(u32),
    /// Bytes sent as they are: on gRPC without a message prefix (a body that need not end
    /// at a message), on the console as one binary message.
    Raw(Bytes),
}

pub(crate) struct State {
    pub cluster: SimCluster,
    pub streams: BTreeMap<ConnId, mpsc::UnboundedSender<Out>>,
    /// While a stream's own frame is served: that stream, and what it is to send.
    pub inline: Option<(ConnId, Vec<Out>)>,
    pub origin: Instant,
    pub stats: Stats,
    pub auth_unavailable: u32,
    pub frame_faults: Vec<CallFault>,
    pub oversize: u32,
    /// [`CallFault::CallTextMessage`]s still to act.
    pub call_texts: u32,
    pub drop_replies: Vec<bool>,
    /// Per node: how long its streams wait before reading each piece of what a client sent.
    pub slow_reader: Vec<Option<Duration>>,
    pub users: Vec<(String, String)>,
    pub grpc_endpoints: Vec<String>,
    /// [`LoopbackConfig::unpaced_rows`].
    pub unpaced_rows: bool,
}

impl State {
    /// How long a stream of `node` waits before reading on (the slow-reader fault).
    pub fn read_delay(&self, node: usize) -> Option<Duration> {
        self.slow_reader.get(node).copied().flatten()
    }

    pub fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.origin.elapsed().as_nanos() as u64)
    }

    /// Sends what the cluster has for its streams.
    pub fn flush(&mut self) {
        while let Some((conn, output)) = self.cluster.poll_output() {
            let node = self.cluster.node_of(conn).unwrap_or(0);
            if !self.streams.contains_key(&conn) {
                continue;
            }
            let out = match output {
                Output::Frame(f) => {
                    if self.drop_replies.get(node).copied().unwrap_or(false) {
                        continue;
                    }
                    if self.oversize > 0 {
                        self.oversize -= 1;
                        Out::Oversized
                    } else {
                        Out::Frame(f)
                    }
                }
                Output::Close => Out::Close {
                    going_away: self.cluster.is_down(node),
                },
            };
            match &mut self.inline {
                Some((c, outs)) if *c == conn => outs.push(out),
                _ => {
                    if let Some(tx) = self.streams.get(&conn) {
                        let _ = tx.send(out);
                    }
                }
            }
        }
    }

    /// Checks credentials; `Ok(())` to accept, `Err(unavailable)` to refuse.
    pub fn check(&mut self, seen: &AuthSeen) -> Result<(), bool> {
        if self.auth_unavailable > 0 {
            self.auth_unavailable -= 1;
            return Err(true);
        }
        let creds = match seen {
            AuthSeen::Header(c) | AuthSeen::Query(c) => c,
            AuthSeen::Missing => &None,
        };
        match creds {
            Some(c) if self.users.contains(c) => Ok(()),
            _ => Err(false),
        }
    }

    /// The first armed frame fault that acts on `transport`, taken: a gRPC status on a gRPC
    /// stream, a close code on a WebSocket. Session streams and separate calls share them.
    pub fn take_frame_fault(&mut self, transport: Transport) -> Option<CallFault> {
        let i = self.frame_faults.iter().position(|f| {
            matches!(
                (f, transport),
                (CallFault::GrpcStatus(_), Transport::Grpc)
                    | (CallFault::CloseCode(_), Transport::WebSocket)
            )
        })?;
        Some(self.frame_faults.remove(i))
    }

    /// A client frame arrived on `conn`: a pending frame fault acts instead, if any. What
    /// `conn` itself is to send comes back, for its task to send at once: through its own
    /// channel the task would wake itself, and a runtime wakes another worker for that.
    pub fn receive(&mut self, conn: ConnId, frame: Bytes, transport: Transport) -> Vec<Out> {
        self.stats.frames += 1;
        if let Ok(f) = ClientFrame::check(frame.clone()) {
            if let ClientRequestT::CommandRequest(c) = f.unpack().request {
                self.stats.references.push(c.execution_reference.clone());
            }
        }
        if let Some(f) = self.take_frame_fault(transport) {
            let now = self.now();
            self.cluster.close(now, conn, false);
            self.streams.remove(&conn);
            return vec![match f {
                CallFault::GrpcStatus(s) => Out::Status(s),
                CallFault::CloseCode(c) => Out::Status(u32::from(c)),
                _ => unreachable!("only frame faults are matched"),
            }];
        }
        let now = self.now();
        self.inline = Some((conn, Vec::new()));
        self.cluster.receive(now, conn, frame);
        self.flush();
        self.inline.take().map(|(_, outs)| outs).unwrap_or_default()
    }

    /// The client ended `conn`.
    pub fn closed(&mut self, conn: ConnId, clean: bool) {
        if self.streams.remove(&conn).is_none() {
            return;
        }
        if clean {
            self.stats.clean_closes += 1;
        } else {
            self.stats.unclean_closes += 1;
        }
        let now = self.now();
        self.cluster.close(now, conn, clean);
        self.flush();
    }

    /// Opens a cluster connection for a stream to `node`.
    pub fn open(&mut self, node: usize) -> Option<(ConnId, mpsc::UnboundedReceiver<Out>)> {
        let now = self.now();
        let endpoint = self.grpc_endpoints[node].clone();
        let conn = self.cluster.connect(now, &endpoint).ok()?;
        let (tx, rx) = mpsc::unbounded_channel();
        self.streams.insert(conn, tx);
        self.flush();
        Some((conn, rx))
    }
}

/// Decodes `user:password` from base64 text.
pub(crate) fn decode_basic(b64: &str) -> Option<(String, String)> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (u, p) = text.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// Reads an `Authorization: Basic ...` header value.
pub(crate) fn header_auth(value: Option<&http::HeaderValue>) -> AuthSeen {
    match value {
        None => AuthSeen::Missing,
        Some(v) => AuthSeen::Header(
            v.to_str()
                .ok()
                .and_then(|s| s.strip_prefix("Basic "))
                .and_then(decode_basic),
        ),
    }
}

pub(crate) type Shared = Arc<Mutex<State>>;

pub(crate) fn lock(s: &Shared) -> MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Shared by every accepted stream of one listener.
#[derive(Clone)]
pub(crate) struct Listener {
    pub shared: Shared,
    pub node: usize,
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    pub shutdown: watch::Receiver<bool>,
}

/// What a listener serves on each stream it accepts (TLS first, when it has an acceptor,
/// with the protocol the client and the acceptor agreed on).
pub(crate) trait Serve: Copy + Send + 'static {
    /// Serves one accepted stream until it ends.
    fn run<T>(
        self,
        io: T,
        l: Listener,
        alpn: Option<String>,
    ) -> impl std::future::Future<Output = ()> + Send
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static;
}

/// Accepts streams on `listener` until the cluster shuts down, each served by `serve` on a
/// task of its own.
pub(crate) async fn serve(listener: tokio::net::TcpListener, l: Listener, serve: impl Serve) {
    let mut stop = l.shutdown.clone();
    loop {
        tokio::select! {
            a = listener.accept() => {
                let Ok((tcp, _)) = a else { continue };
                let _ = tcp.set_nodelay(true);
                let l = l.clone();
                tokio::spawn(async move {
                    match l.tls.clone() {
                        Some(acceptor) => {
                            if let Ok(tls) = acceptor.accept(tcp).await {
                                let alpn = tls
                                    .get_ref()
                                    .1
                                    .alpn_protocol()
                                    .map(|p| String::from_utf8_lossy(p).into_owned());
                                serve.run(tls, l, alpn).await;
                            }
                        }
                        None => serve.run(tcp, l, None).await,
                    }
                });
            }
            _ = stop.changed() => return,
        }
    }
}

/// A running loopback cluster. Dropping it stops the server.
pub struct Loopback {
    shared: Shared,
    grpc: Vec<String>,
    console: Vec<String>,
    certificates: Vec<Vec<u8>>,
    shutdown: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Loopback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loopback")
            .field("grpc", &self.grpc)
            .field("console", &self.console)
            .finish()
    }
}

fn tls_acceptor(
    cert: &rustls_pki_types::CertificateDer<'static>,
    key: &[u8],
    alpn: &[u8],
) -> std::io::Result<tokio_rustls::TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.clone()],
            rustls_pki_types::PrivateKeyDer::Pkcs8(key.to_vec().into()),
        )
        .map_err(std::io::Error::other)?;
    config.alpn_protocols = vec![alpn.to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

impl Loopback {
    /// Binds every port on 127.0.0.1 and starts serving.
    pub fn start(config: LoopbackConfig) -> std::io::Result<Self> {
        let nodes = config.nodes.max(1);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let mut listeners = Vec::new();
        for _ in 0..nodes {
            let g = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
            let w = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
            listeners.push((g, w));
        }
        let host_of = |node: usize| config.node_hosts.get(node).unwrap_or(&config.host);
        let addr = |node: usize, a: SocketAddr| {
            if config.tls && !config.plain_nodes.contains(&node) {
                format!("https://{}:{}/", host_of(node), a.port())
            } else {
                format!("http://127.0.0.1:{}/", a.port())
            }
        };
        let mut grpc = Vec::new();
        let mut console = Vec::new();
        for (node, (g, w)) in listeners.iter().enumerate() {
            grpc.push(addr(node, g.local_addr()?));
            console.push(addr(node, w.local_addr()?));
        }
        // One certificate for every node, or with `node_hosts` one per node.
        let mut certificates = Vec::new();
        let mut acceptors = Vec::new();
        if config.tls {
            let names: Vec<String> = if config.node_hosts.is_empty() {
                vec![config.certificate_name.clone()]
            } else {
                (0..nodes)
                    .map(|n| {
                        config
                            .node_certificate_names
                            .get(n)
                            .unwrap_or(host_of(n))
                            .clone()
                    })
                    .collect()
            };
            for name in names {
                let ck = rcgen::generate_simple_self_signed(vec![name])
                    .map_err(std::io::Error::other)?;
                let der = ck.cert.der().clone();
                let key = ck.signing_key.serialize_der();
                let h2 = tls_acceptor(&der, &key, b"h2")?;
                let h1 = tls_acceptor(&der, &key, b"http/1.1")?;
                certificates.push(der.to_vec());
                acceptors.push((h2, h1));
            }
        }
        let cluster = SimCluster::new(ClusterConfig {
            nodes,
            seed: config.seed,
            faults: config.faults.clone(),
            node_endpoints: grpc.iter().cloned().zip(console.iter().cloned()).collect(),
            row_period: config.rows.0,
            batch_rows: config.rows.1,
            archive_domain_bytes: config.archive_domain_bytes,
            unpaced_rows: config.unpaced_rows,
            ..ClusterConfig::default()
        });
        let shared = Arc::new(Mutex::new(State {
            cluster,
            streams: BTreeMap::new(),
            inline: None,
            origin: Instant::now(),
            stats: Stats::default(),
            auth_unavailable: 0,
            frame_faults: Vec::new(),
            oversize: 0,
            call_texts: 0,
            drop_replies: vec![false; nodes],
            slow_reader: vec![None; nodes],
            users: config.users.clone(),
            grpc_endpoints: grpc.clone(),
            unpaced_rows: config.unpaced_rows,
        }));
        let (shutdown, watch_rx) = watch::channel(false);
        let plain_nodes = config.plain_nodes.clone();
        let serving = shared.clone();
        let thread = std::thread::Builder::new()
            .name("nervix-loopback".into())
            .spawn(move || {
                runtime.block_on(async move {
                    for (node, (g, w)) in listeners.into_iter().enumerate() {
                        let base = |tls| Listener {
                            shared: serving.clone(),
                            node,
                            tls,
                            shutdown: watch_rx.clone(),
                        };
                        let mine = acceptors.get(node).or(acceptors.first());
                        let (h2, h1) = match mine {
                            Some((a, b)) if !plain_nodes.contains(&node) => {
                                (Some(a.clone()), Some(b.clone()))
                            }
                            _ => (None, None),
                        };
                        tokio::spawn(serve(g, base(h2), grpc::Grpc));
                        tokio::spawn(serve(w, base(h1), ws::Console));
                    }
                    let ticker = serving.clone();
                    let mut stop = watch_rx.clone();
                    loop {
                        // Wake when the cluster next has something to send on its own (a
                        // subscription's batch, a clock's tick), and at least every 50 ms
                        // for its other timers (transaction expiry).
                        let wait = {
                            let s = lock(&ticker);
                            let now = s.now().as_nanos();
                            s.cluster.next_due().map_or(TICK, |due| {
                                Duration::from_nanos(due.as_nanos().saturating_sub(now)).min(TICK)
                            })
                        };
                        tokio::select! {
                            _ = tokio::time::sleep(wait) => {
                                let mut s = lock(&ticker);
                                let now = s.now();
                                s.cluster.advance(now);
                                s.flush();
                            }
                            _ = stop.changed() => break,
                        }
                    }
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })?;
        Ok(Self {
            shared,
            grpc,
            console,
            certificates,
            shutdown,
            thread: Some(thread),
        })
    }

    /// Each node's `grpc_uri`, in node order.
    pub fn grpc_endpoints(&self) -> &[String] {
        &self.grpc
    }

    /// Each node's `web_console_uri`, in node order.
    pub fn console_endpoints(&self) -> &[String] {
        &self.console
    }

    /// The DER certificate the TLS ports present (self-signed: a client trusts it as a root);
    /// with [`LoopbackConfig::node_hosts`], node 0's.
    pub fn certificate_der(&self) -> Option<&[u8]> {
        self.certificates.first().map(Vec::as_slice)
    }

    /// Every certificate the TLS ports present, in node order with
    /// [`LoopbackConfig::node_hosts`] (a client trusts each as a root).
    pub fn certificates_der(&self) -> &[Vec<u8>] {
        &self.certificates
    }

    /// What the server saw so far.
    pub fn stats(&self) -> Stats {
        lock(&self.shared).stats.clone()
    }

    /// The index of the leading node.
    pub fn leader(&self) -> usize {
        lock(&self.shared).cluster.leader()
    }

    /// Makes node `index` the leader: the old leader's sessions end with a `SessionEnding`
    /// naming the new one; the other sessions are told.
    pub fn set_leader(&self, index: usize) {
        let mut s = lock(&self.shared);
        let now = s.now();
        s.cluster.set_leader(now, index);
        s.flush();
    }

    /// Kills node `index`: every stream on it ends without a frame (a console with close code
    /// 1001), and new calls to it are refused until [`Loopback::revive`].
    pub fn kill(&self, index: usize) {
        let mut s = lock(&self.shared);
        s.cluster.set_down(index, true);
        s.flush();
    }

    /// Brings node `index` back.
    pub fn revive(&self, index: usize) {
        lock(&self.shared).cluster.set_down(index, false);
    }

    /// Cuts every stream on node `index` at the transport: no frame, no status, no close
    /// frame. The cluster sees the streams end uncleanly.
    pub fn cut_streams(&self, index: usize) {
        let mut s = lock(&self.shared);
        let conns: Vec<ConnId> = s
            .streams
            .keys()
            .copied()
            .filter(|c| s.cluster.node_of(*c) == Some(index))
            .collect();
        for c in conns {
            if let Some(tx) = s.streams.get(&c) {
                let _ = tx.send(Out::Cut);
            }
            s.closed(c, false);
        }
    }

    /// While on, node `index` reads client frames and acts on them but its frames are lost
    /// on the way out: a call reaches the cluster and its reply never comes.
    pub fn drop_replies(&self, index: usize, on: bool) {
        lock(&self.shared).drop_replies[index] = on;
    }

    /// While `Some(delay)`, node `index` reads slowly: each of its streams waits `delay` before
    /// it reads each piece of what a client sent (an HTTP/2 data frame, a WebSocket message),
    /// so a client writing more than that fills its flow-control window and socket buffers
    /// and must rely on its own write deadline (T-8). `None` reads at full speed again.
    pub fn slow_reader(&self, index: usize, delay: Option<Duration>) {
        lock(&self.shared).slow_reader[index] = delay;
    }

    /// Arms a fault for the next call or frame it applies to.
    pub fn inject(&self, fault: CallFault) {
        let mut s = lock(&self.shared);
        match fault {
            CallFault::AuthUnavailable => s.auth_unavailable += 1,
            CallFault::OversizedFrame => s.oversize += 1,
            CallFault::CallTextMessage => s.call_texts += 1,
            f => s.frame_faults.push(f),
        }
    }

    /// Replaces the cluster's own fault probabilities.
    pub fn set_faults(&self, faults: Faults) {
        lock(&self.shared).cluster.set_faults(faults);
    }

    /// Sets the probabilities of the separate calls' faults (a cut stream, a lost reply, ...).
    /// A call's faults are drawn when its request is served, so a change reaches the calls
    /// served after it.
    pub fn set_call_faults(&self, faults: CallFaults) {
        lock(&self.shared).cluster.set_call_faults(faults);
    }

    /// The calls seen so far on `path` (a session's or a separate call's), in order.
    pub fn calls_to(&self, path: &str) -> Vec<CallSeen> {
        lock(&self.shared)
            .stats
            .calls
            .iter()
            .filter(|c| c.path == path)
            .cloned()
            .collect()
    }

    /// The outcome the cluster recorded under `reference`, as its disposition's name.
    pub fn recorded(&self, reference: &str) -> Option<String> {
        lock(&self.shared)
            .cluster
            .recorded_outcome(reference)
            .map(|o| format!("{:?}", o.disposition.command_disposition_type()))
    }

    /// Runs `f` on the cluster as it stands, with the server held still: for checks against
    /// its record of applied executions and of what it sent.
    pub fn with_cluster<R>(&self, f: impl FnOnce(&SimCluster) -> R) -> R {
        f(&lock(&self.shared).cluster)
    }

    /// Injects a transport fault of a seeded scenario now.
    pub fn inject_transport_fault(&self, fault: TransportFault) {
        match fault {
            TransportFault::Kill { node } => self.kill(node),
            TransportFault::Cut { node } => self.cut_streams(node),
            TransportFault::LeaderChange { node } => self.set_leader(node),
            TransportFault::SlowReader { node, delay_ms } => {
                self.slow_reader(node, Some(Duration::from_millis(delay_ms)))
            }
            _ => {}
        }
    }

    /// Ends what [`Loopback::inject_transport_fault`] started that lasts: a killed node comes
    /// back, a slow reader reads at full speed again.
    pub fn heal_transport_fault(&self, fault: TransportFault) {
        match fault {
            TransportFault::Kill { node } => self.revive(node),
            TransportFault::SlowReader { node, .. } => self.slow_reader(node, None),
            _ => {}
        }
    }

    /// The cluster's trace.
    pub fn trace(&self) -> Vec<String> {
        lock(&self.shared).cluster.trace().to_vec()
    }

    /// Stops the server and waits for its thread.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.halt();
    }
}
