//! Round trips and rows over real sockets on 127.0.0.1.
//!
//! * `round_trip/{websocket,grpc}/driver`: one `ListDomainsRequest` read through the async
//!   API, over the driver's transport, answered by the loopback cluster.
//! * `round_trip/{websocket,grpc}/bare`: the same request frame and the same reply frame
//!   (taken from the simulated cluster's answer) over a bare tokio-tungstenite or h2 client
//!   and a bare echo server on the same transport: the floor the driver is compared with.
//!   The echo answers each request with the reply frame under the request's identity (read
//!   from the frame, then written into a copy of the reply), so a client that numbers its
//!   requests, as the driver does, can talk to it too.
//! * `round_trip/{websocket,grpc}/driver_echo`: the driver's reads against that same echo
//!   server: the driver's own cost, with the server's share equal to the bare client's.
//! * `.../websocket/bare_client_loopback_server`: the bare client against the loopback
//!   cluster, which tells the server's share of the driver's round trip.
//! * `round_trip_pipelined_32/...`: the same with 32 requests in flight at a time (concurrent
//!   reads through the API; 32 frames written, then 32 replies read, on the bare clients): a
//!   rate that depends less on how fast an idle core wakes up than one request at a time does.
//! * `round_trip_cpu/...` and `round_trip_pipelined_32_cpu/...`: `driver_echo` and `bare` as
//!   above, timed by the CPU time of the client runtime's thread (every client task runs on
//!   it) instead of the wall clock: what the client's side costs per round. It still moves
//!   with the machine's state (an idle machine gave twice the CPU time per round of a busy
//!   one), so compare the driver with the bare client within one run.
//! * `subscription/rows`: rows per second through a subscription stream, each batch checked
//!   against its schema and every row's first cell read; the loopback cluster emits a batch of
//!   up to 512 rows every millisecond.
//! * `rows_end_to_end/{1,16,64}/{websocket,grpc}/driver`: rows per second through a
//!   subscription stream on a `wide<N>` relay of 1, 16 or 64 columns, with the loopback cluster
//!   unpaced (a batch of 512 rows whenever the stream has room): each batch checked against its
//!   schema by the driver, every row's number read and compared with the one expected.
//!   `.../bare`: a bare tokio-tungstenite client that sends the same subscribe request to
//!   the same server and only receives the frames and runs `Frame::check` on each;
//!   `.../grpc/driver` and `.../grpc/bare` the same over gRPC (the bare side an h2 call that
//!   only reads the messages and checks each). Rows the driver dropped for want of room (an
//!   `Overflow` gap) are not counted, and how many there were is printed.
//!
//! * `rows_end_to_end_cpu/1/...`: the one-column case of `rows_end_to_end`, timed by the CPU
//!   time of the client's thread.
//!
//! Both ends run on this machine; each server has a runtime (two workers) of its own, as the
//! loopback cluster does, and every client, bare or not, runs on one current-thread runtime.

use bytes::Bytes;
mod common;
use common::thread_cpu;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures_util::{SinkExt, StreamExt};
use nervix_harness::cluster::{ClusterConfig, Output, SimCluster};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{check_slice, ClientMessageRoot, ServerFrame};
use nervix_protocol::limits::FRAME_LIMIT;
use nervix_protocol::rows::Value;
use nervix_protocol::schema::{ClientRequestT, SubscribeRequestT, SubscriptionType};
use nervix_protocol::time::Timestamp;
use nervix_tokio::{
    grpc_message, Client, Config, Credentials, MessageReader, ReadResult, SubscriptionEvent,
    Transport, WsAuth,
};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio_tungstenite::tungstenite::Message;

/// The client's runtime: one thread, so a hop between the application, the driver task and
/// a transport task is a task switch, not a wake-up of another thread.
fn client_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn list_domains() -> ClientRequestT {
    ClientRequestT::ListDomainsRequest(Box::default())
}

/// The request frame the driver sends, and the reply frame the simulated cluster answers it
/// with.
fn frames() -> (Bytes, Bytes) {
    frames_for(1)
}

/// As [`frames`], under request identity `id`.
fn frames_for(id: u64) -> (Bytes, Bytes) {
    let request = Encoder::new()
        .encode_request(id, &list_domains())
        .expect("a request frame");
    let mut cluster = SimCluster::new(ClusterConfig {
        nodes: 1,
        ..ClusterConfig::default()
    });
    let now = Timestamp::ZERO;
    let endpoint = cluster.endpoints()[0].clone();
    let conn = cluster.connect(now, &endpoint).expect("a stream");
    while cluster.poll_output().is_some() {}
    cluster.receive(now, conn, request.clone());
    let mut reply = None;
    while let Some((_, out)) = cluster.poll_output() {
        if let Output::Frame(f) = out {
            reply = Some(f);
        }
    }
    (request, reply.expect("a reply frame"))
}

/// The reply frame for any request identity: the cluster's reply to a request under a marker
/// identity, and where the marker sits in it.
#[derive(Clone)]
struct Replies {
    template: Bytes,
    at: usize,
}

const MARK: u64 = 0x6e65_7276_6978_2121;

impl Replies {
    fn new() -> Self {
        let (_, template) = frames_for(MARK);
        let at = template
            .windows(8)
            .position(|w| w == MARK.to_le_bytes())
            .expect("the marker in the reply");
        Self { template, at }
    }

    /// The reply to `request`, under its identity.
    fn answer(&self, request: &[u8]) -> Bytes {
        let id = check_slice::<ClientMessageRoot>(request, FRAME_LIMIT)
            .map(|m| m.request_id())
            .expect("a request frame");
        let mut out = self.template.to_vec();
        out[self.at..self.at + 8].copy_from_slice(&id.to_le_bytes());
        Bytes::from(out)
    }
}

/// A bare WebSocket server answering every binary message with its reply.
fn bare_ws_server(server: &Runtime, reply: Replies) -> String {
    let listener = server
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("a port");
    let url = format!(
        "ws://{}/console/ws",
        listener.local_addr().expect("an address")
    );
    server.spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let _ = tcp.set_nodelay(true);
            let reply = reply.clone();
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                while let Some(Ok(m)) = ws.next().await {
                    if let Message::Binary(b) = m {
                        if ws.send(Message::Binary(reply.answer(&b))).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    url
}

/// A bare HTTP/2 server answering every gRPC message of a call with its reply.
fn bare_h2_server(server: &Runtime, reply: Replies) -> std::net::SocketAddr {
    let listener = server
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    server.spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let _ = tcp.set_nodelay(true);
            let reply = reply.clone();
            tokio::spawn(async move {
                let Ok(mut conn) = h2::server::Builder::new()
                    .initial_window_size(1 << 22)
                    .initial_connection_window_size(1 << 23)
                    .max_frame_size(1 << 16)
                    .handshake::<_, Bytes>(tcp)
                    .await
                else {
                    return;
                };
                while let Some(Ok((req, mut respond))) = conn.accept().await {
                    let reply = reply.clone();
                    tokio::spawn(async move {
                        let head = http::Response::builder()
                            .status(200)
                            .header("content-type", "application/grpc")
                            .body(())
                            .expect("a response");
                        let Ok(mut send) = respond.send_response(head, false) else {
                            return;
                        };
                        let mut body = req.into_body();
                        let mut reader = MessageReader::default();
                        while let Some(Ok(chunk)) = body.data().await {
                            let _ = body.flow_control().release_capacity(chunk.len());
                            reader.push(&chunk);
                            while let Ok(Some(m)) = reader.next_message() {
                                let message = grpc_message(&reply.answer(&m));
                                if send.send_data(message, false).is_err() {
                                    return;
                                }
                            }
                        }
                    });
                }
            });
        }
    });
    addr
}

fn driver_config(lb: &Loopback, transport: Transport) -> Config {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    Config::new(&seeds, Credentials::new("nervix", "nervix"), transport).expect("a config")
}

/// A bare WebSocket client connection to `url`, with Basic credentials when given.
fn bare_ws_client(
    rt: &Runtime,
    url: &str,
    auth: Option<&Credentials>,
) -> tokio_tungstenite::WebSocketStream<TcpStream> {
    rt.block_on(async {
        let mut req =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
                .expect("a request");
        if let Some(c) = auth {
            let v = http::HeaderValue::from_str(&c.basic()).expect("a header");
            req.headers_mut().insert("authorization", v);
        }
        let host = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("a host");
        let tcp = TcpStream::connect(host).await.expect("a connection");
        tcp.set_nodelay(true).expect("nodelay");
        tokio_tungstenite::client_async(req, tcp)
            .await
            .expect("a handshake")
            .0
    })
}

/// A bare gRPC call to `addr`: its send and receive halves, and the connection's task.
fn bare_h2_call(
    rt: &Runtime,
    addr: std::net::SocketAddr,
    auth: Option<&Credentials>,
) -> (
    h2::SendStream<Bytes>,
    h2::RecvStream,
    tokio::task::JoinHandle<()>,
) {
    rt.block_on(async {
        let tcp = TcpStream::connect(addr).await.expect("a connection");
        tcp.set_nodelay(true).expect("nodelay");
        let (h2, conn) = h2::client::Builder::new()
            .initial_window_size(1 << 22)
            .initial_connection_window_size(1 << 23)
            .max_frame_size(1 << 16)
            .handshake::<_, Bytes>(tcp)
            .await
            .expect("a handshake");
        let conn = tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut h2 = h2.ready().await.expect("ready");
        let mut req = http::Request::post(format!("http://{addr}/nervix.session.Session/Exchange"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .expect("a request");
        if let Some(c) = auth {
            let v = http::HeaderValue::from_str(&c.basic()).expect("a header");
            req.headers_mut().insert("authorization", v);
        }
        let (response, send) = h2.send_request(req, false).expect("a call");
        let recv = response.await.expect("a response").into_body();
        (send, recv, conn)
    })
}

/// How a round-trip group is timed.
#[derive(Clone, Copy, PartialEq)]
enum Clock {
    /// Wall time.
    Wall,
    /// The CPU time of the thread running the client's runtime (the bench's thread, which
    /// runs the current-thread runtime in `block_on`).
    Cpu,
}

/// A start of a measurement on `clock`.
struct Started(Instant, Duration);

impl Started {
    fn now() -> Self {
        Self(Instant::now(), thread_cpu())
    }

    fn elapsed(&self, clock: Clock) -> Duration {
        match clock {
            Clock::Wall => self.0.elapsed(),
            Clock::Cpu => thread_cpu().saturating_sub(self.1),
        }
    }
}

/// `iters` rounds of `depth` concurrent reads through the driver's API; the time they took.
async fn driver_reads(client: &Client, depth: usize, iters: u64, clock: Clock) -> Duration {
    let start = Started::now();
    for _ in 0..iters {
        let reads = (0..depth).map(|_| client.read(list_domains(), None));
        for r in futures_util::future::join_all(reads).await {
            match r {
                Ok(ReadResult::Replied(f)) => black_box(f),
                other => panic!("{other:?}"),
            };
        }
    }
    start.elapsed(clock)
}

/// Round trips with `depth` requests in flight at a time: 1 measures the latency of one
/// request after another, more the rate when requests are pipelined. On the CPU clock only
/// the driver and the bare client against the echo servers are measured.
fn round_trips_at(c: &mut Criterion, group: &str, depth: usize, clock: Clock) {
    let (request, _) = frames();
    let client_rt = client_runtime();
    let server_rt = runtime();
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .expect("the loopback cluster");

    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(depth as u64));
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(5));

    for (name, transport) in [
        ("websocket", Transport::WebSocket(WsAuth::Header)),
        ("grpc", Transport::Grpc),
    ] {
        if clock == Clock::Cpu {
            break;
        }
        let client = client_rt
            .block_on(Client::connect(driver_config(&lb, transport)))
            .expect("a session");
        g.bench_function(format!("{name}/driver"), |b| {
            b.iter_custom(|iters| client_rt.block_on(driver_reads(&client, depth, iters, clock)))
        });
        let _ = client_rt.block_on(client.close(false));
    }

    // The echo servers, for the bare clients and for the driver alike.
    let replies = Replies::new();
    let ws_url = bare_ws_server(&server_rt, replies.clone());
    let h2_addr = bare_h2_server(&server_rt, replies);
    for (name, transport, seed) in [
        (
            "websocket",
            Transport::WebSocket(WsAuth::Header),
            ws_url.replace("ws://", "http://").replace("console/ws", ""),
        ),
        ("grpc", Transport::Grpc, format!("http://{h2_addr}/")),
    ] {
        let config = Config::new(
            &[seed.as_str()],
            Credentials::new("nervix", "nervix"),
            transport,
        )
        .expect("a config");
        let client = client_rt
            .block_on(Client::connect(config))
            .expect("a session");
        g.bench_function(format!("{name}/driver_echo"), |b| {
            b.iter_custom(|iters| client_rt.block_on(driver_reads(&client, depth, iters, clock)))
        });
        let _ = client_rt.block_on(client.close(false));
    }

    // Bare WebSocket: one client task writing the request frames and reading the replies.
    let url = ws_url;
    let mut ws = bare_ws_client(&client_rt, &url, None);
    g.bench_function("websocket/bare", |b| {
        b.iter_custom(|iters| {
            client_rt.block_on(async {
                let start = Started::now();
                for _ in 0..iters {
                    for _ in 0..depth {
                        ws.feed(Message::Binary(request.clone()))
                            .await
                            .expect("sent");
                    }
                    ws.flush().await.expect("flushed");
                    for _ in 0..depth {
                        match ws.next().await {
                            Some(Ok(m)) => black_box(m),
                            other => panic!("{other:?}"),
                        };
                    }
                }
                start.elapsed(clock)
            })
        })
    });
    drop(ws);

    // The bare client against the loopback cluster: what the server side costs.
    if clock == Clock::Wall {
        bare_against_cluster(&mut g, &client_rt, &lb, depth);
    }

    // Bare gRPC: one call, each request one message, each reply read whole.
    let addr = h2_addr;
    let (mut send, mut recv, _conn) = bare_h2_call(&client_rt, addr, None);
    let message = grpc_message(&request);
    let mut reader = MessageReader::default();
    g.bench_function("grpc/bare", |b| {
        b.iter_custom(|iters| {
            client_rt.block_on(async {
                let start = Started::now();
                for _ in 0..iters {
                    for _ in 0..depth {
                        send.send_data(message.clone(), false).expect("sent");
                    }
                    let mut got = 0;
                    while got < depth {
                        if let Ok(Some(m)) = reader.next_message() {
                            black_box(m);
                            got += 1;
                            continue;
                        }
                        let chunk: Bytes = recv.data().await.expect("data").expect("a chunk");
                        let _ = recv.flow_control().release_capacity(chunk.len());
                        reader.push(&chunk);
                    }
                }
                start.elapsed(clock)
            })
        })
    });
    g.finish();
    drop(server_rt);
    drop(lb);
}

/// The bare WebSocket client against the loopback cluster, with request identities 1 to
/// `depth` (each free again once its reply is out): what the server side costs.
fn bare_against_cluster(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    client_rt: &Runtime,
    lb: &Loopback,
    depth: usize,
) {
    let own: Vec<Bytes> = (1..=depth as u64)
        .map(|id| {
            Encoder::new()
                .encode_request(id, &list_domains())
                .expect("a request frame")
        })
        .collect();
    let url = format!(
        "{}console/ws",
        lb.console_endpoints()[0].replace("http://", "ws://")
    );
    let mut ws = bare_ws_client(client_rt, &url, Some(&Credentials::new("nervix", "nervix")));
    g.bench_function("websocket/bare_client_loopback_server", |b| {
        b.iter_custom(|iters| {
            client_rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    for r in &own {
                        ws.feed(Message::Binary(r.clone())).await.expect("sent");
                    }
                    ws.flush().await.expect("flushed");
                    for _ in 0..depth {
                        match ws.next().await {
                            Some(Ok(m)) => black_box(m),
                            other => panic!("{other:?}"),
                        };
                    }
                }
                start.elapsed()
            })
        })
    });
    drop(ws);
}

fn round_trips(c: &mut Criterion) {
    round_trips_at(c, "round_trip", 1, Clock::Wall);
}

fn pipelined_round_trips(c: &mut Criterion) {
    round_trips_at(c, "round_trip_pipelined_32", 32, Clock::Wall);
}

fn round_trips_cpu(c: &mut Criterion) {
    round_trips_at(c, "round_trip_cpu", 1, Clock::Cpu);
}

fn pipelined_round_trips_cpu(c: &mut Criterion) {
    round_trips_at(c, "round_trip_pipelined_32_cpu", 32, Clock::Cpu);
}

fn subscription_rows(c: &mut Criterion) {
    const ROWS: u64 = 1000;
    let rt = client_runtime();
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        rows: (Duration::from_millis(1), 512),
        ..LoopbackConfig::default()
    })
    .expect("the loopback cluster");
    let mut g = c.benchmark_group("subscription");
    g.throughput(Throughput::Elements(ROWS));
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(5));
    for (name, transport) in [
        ("websocket", Transport::WebSocket(WsAuth::Header)),
        ("grpc", Transport::Grpc),
    ] {
        let client = rt
            .block_on(Client::connect(driver_config(&lb, transport)))
            .expect("a session");
        rt.block_on(client.select_domain(Some("tenant")))
            .expect("a domain");
        let mut s = rt
            .block_on(client.subscribe(&format!("CREATE SUBSCRIPTION bench_{name} FROM orders")))
            .expect("a subscription");
        g.bench_function(format!("rows/{name}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let want = iters * ROWS;
                    let mut got = 0;
                    let start = Instant::now();
                    while got < want {
                        match s.next().await {
                            Some(SubscriptionEvent::Rows(batch)) => {
                                for row in batch.rows() {
                                    if let Some(Value::U64(n)) = row.cell(0) {
                                        black_box(n);
                                    }
                                }
                                got += batch.len() as u64;
                            }
                            Some(_) => {}
                            None => panic!("the subscription ended"),
                        }
                    }
                    start.elapsed()
                })
            })
        });
        drop(s);
        let _ = rt.block_on(client.close(false));
    }
    g.finish();
}

/// Rows of one unpaced batch in `rows_end_to_end`.
const E2E_BATCH: u64 = 512;

/// The subscribe request frame of a bare client: subscription `name` on `relay`.
fn subscribe_frame(name: &str, relay: &str) -> Bytes {
    let request = ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
        domain: "tenant".into(),
        statement: format!("CREATE SUBSCRIPTION {name} FROM {relay}"),
        subscription_type: Some(SubscriptionType::Row),
    }));
    Encoder::new()
        .encode_request(1, &request)
        .expect("a request frame")
}

/// The rows a checked server frame carries (none unless it is a `SubscriptionRows`).
fn checked_rows(frame: Bytes) -> u64 {
    let f = ServerFrame::check(frame).expect("a valid frame");
    f.view()
        .body_as_subscription_rows()
        .map_or(0, |r| r.batch().rows().len() as u64)
}

fn rows_end_to_end(c: &mut Criterion) {
    rows_at(c, "rows_end_to_end", &[1, 16, 64], Clock::Wall);
}

/// `rows_end_to_end_cpu/1/...`: one column, timed by the CPU time of the client's thread.
fn rows_end_to_end_cpu(c: &mut Criterion) {
    rows_at(c, "rows_end_to_end_cpu", &[1], Clock::Cpu);
}

fn rows_at(c: &mut Criterion, group: &str, shapes: &[usize], clock: Clock) {
    let rt = client_runtime();
    let lb = Loopback::start(LoopbackConfig::unpaced(E2E_BATCH)).expect("the loopback cluster");
    let creds = Credentials::new("nervix", "nervix");
    let mut g = c.benchmark_group(group);
    // Four batches per iteration.
    let per_iter = 4 * E2E_BATCH;
    g.throughput(Throughput::Elements(per_iter));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    for &columns in shapes {
        let relay = format!("wide{columns}");
        for (name, transport) in [
            ("websocket", Transport::WebSocket(WsAuth::Header)),
            ("grpc", Transport::Grpc),
        ] {
            let client = rt
                .block_on(Client::connect(driver_config(&lb, transport)))
                .expect("a session");
            rt.block_on(client.select_domain(Some("tenant")))
                .expect("a domain");
            let mut s = rt
                .block_on(client.subscribe(&format!(
                    "CREATE SUBSCRIPTION e2e_{name}_{columns} FROM {relay}"
                )))
                .expect("a subscription");
            let mut next = 1u64;
            let mut lost = 0u64;
            g.bench_function(format!("{columns}/{name}/driver"), |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let want = iters * per_iter;
                        let mut got = 0;
                        let start = Started::now();
                        while got < want {
                            match s.next().await {
                                Some(SubscriptionEvent::Rows(batch)) => {
                                    for row in batch.rows() {
                                        match row.cell(0) {
                                            Some(Value::U64(n)) => {
                                                assert!(n >= next, "row {n} after {next}");
                                                lost += n - next;
                                                next = n + 1;
                                            }
                                            other => panic!("{other:?}"),
                                        }
                                    }
                                    got += batch.len() as u64;
                                }
                                Some(_) => {}
                                None => panic!("the subscription ended"),
                            }
                        }
                        start.elapsed(clock)
                    })
                })
            });
            println!(
                "{group}/{columns}/{name}/driver: {} rows read, {lost} lost to overflow",
                next - 1 - lost
            );
            drop(s);
            let _ = rt.block_on(client.close(false));
        }

        // Bare WebSocket: subscribe, then read and check every frame.
        let url = format!(
            "{}console/ws",
            lb.console_endpoints()[0].replace("http://", "ws://")
        );
        let mut ws = bare_ws_client(&rt, &url, Some(&creds));
        rt.block_on(ws.send(Message::Binary(subscribe_frame(
            &format!("bare_ws_{columns}"),
            &relay,
        ))))
        .expect("sent");
        g.bench_function(format!("{columns}/websocket/bare"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let want = iters * per_iter;
                    let mut got = 0;
                    let start = Started::now();
                    while got < want {
                        match ws.next().await {
                            Some(Ok(Message::Binary(f))) => got += checked_rows(f),
                            Some(Ok(_)) => {}
                            other => panic!("{other:?}"),
                        }
                    }
                    start.elapsed(clock)
                })
            })
        });
        drop(ws);

        // Bare gRPC: one call, subscribe, then read and check every message.
        let addr: std::net::SocketAddr = lb.grpc_endpoints()[0]
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("an address");
        let (mut send, mut recv, conn) = bare_h2_call(&rt, addr, Some(&creds));
        send.send_data(
            grpc_message(&subscribe_frame(&format!("bare_grpc_{columns}"), &relay)),
            false,
        )
        .expect("sent");
        let mut reader = MessageReader::default();
        g.bench_function(format!("{columns}/grpc/bare"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let want = iters * per_iter;
                    let mut got = 0;
                    let start = Started::now();
                    while got < want {
                        if let Ok(Some(m)) = reader.next_message() {
                            got += checked_rows(m);
                            continue;
                        }
                        let chunk: Bytes = recv.data().await.expect("data").expect("a chunk");
                        let _ = recv.flow_control().release_capacity(chunk.len());
                        reader.push(&chunk);
                    }
                    start.elapsed(clock)
                })
            })
        });
        drop((send, recv));
        conn.abort();
    }
    g.finish();
}

criterion_group!(
    benches,
    round_trips,
    pipelined_round_trips,
    round_trips_cpu,
    pipelined_round_trips_cpu,
    subscription_rows,
    rows_end_to_end,
    rows_end_to_end_cpu
);
criterion_main!(benches);
