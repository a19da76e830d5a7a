//! A blocking QWP WebSocket server on 127.0.0.1 for tests: it records every frame a client
//! sends (with its WebSocket framing bits), acknowledges on a seeded schedule, and can answer
//! the upgrade with an error status, send error statuses and drop connections mid-stream.
//!
//! It speaks WebSocket itself (the HTTP upgrade and the frame layout) so that what it records
//! is exactly what reached the socket: fragmentation, masking and opcodes included.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sf_journal::status::{encode_status, ErrorStatus, Status};

/// What the server does on one connection (the `n`th connection follows the `n`th script
/// entry; connections past the script's end follow [`Conn::Serve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Conn {
    /// Accept and acknowledge on the seeded schedule.
    Serve,
    /// Answer the upgrade with this HTTP status and headers, then close.
    Refuse {
        /// The HTTP status (401, 403, 421, ...).
        status: u16,
        /// Extra response headers (`X-QuestDB-Role`, ...).
        headers: Vec<(String, String)>,
    },
    /// Accept, take this many frames (acknowledging on schedule), then end the connection
    /// without a WebSocket close: the server shuts its sending side (the client reads every
    /// status sent before it, then the end of the stream) and records what still arrives
    /// until the client goes (at most 2 seconds).
    DropAfter(usize),
    /// Accept, and answer the frame of this wire sequence with an error status instead of an
    /// acknowledgement; acknowledge nothing after it.
    ErrorAt {
        /// The wire sequence.
        wire_seq: u64,
        /// The status sent.
        status: ErrorStatus,
    },
    /// Accept, but do not echo `X-QWP-Durable-Ack: enabled` even when asked.
    NoDurableEcho,
    /// Accept, and answer the first frame with a binary message of this many bytes.
    Oversized(usize),
    /// Accept with these response headers added (an `X-QWP-Version` among them replaces the
    /// default `1`; a value of the empty string leaves the header out).
    Headers(Vec<(String, String)>),
    /// Accept, and answer each frame with this binary message instead of a status.
    Garbage(Vec<u8>),
    /// Accept, and answer the first frame by writing these bytes to the socket as they are
    /// (a WebSocket frame the client must judge: a bad one, a text frame, a close), then
    /// acknowledge nothing.
    Raw(Vec<u8>),
    /// Accept, then read nothing (the client's sends fill the socket's buffers and stall)
    /// until the connection's life ends.
    Stall,
    /// Answer the upgrade one byte every 50 ms (a server holding the client in its
    /// upgrade), then serve.
    Trickle,
    /// Accept, and answer the first frame with its OK padded to some 1 KiB (one padding
    /// table), written one byte every 5 ms (a server holding the client in a read), then
    /// serve.
    TrickleStatus,
    /// Accept, then read slowly: at most 64 KiB every 20 ms (some 3 MB/s), so each write of
    /// the client waits a little and a large message a long time; then serve.
    SlowRead,
}

/// How the server behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Seed of the acknowledgement schedule.
    pub seed: u64,
    /// One entry per connection, in accept order.
    pub script: Vec<Conn>,
    /// How long a connection may stay idle with frames unacknowledged before they are all
    /// acknowledged.
    pub idle_ack: Duration,
    /// The longest a connection lives (every wait is bounded).
    pub max_connection_life: Duration,
    /// Each frame is acknowledged on arrival with probability 1 in this many, drawn from the
    /// seed (0: never; frames are then acknowledged only when the connection idles).
    pub ack_one_in: u64,
    /// In durable-ack mode, send the DURABLE_ACK of what was acknowledged only after this many
    /// PINGs (0: right after each OK).
    pub durable_after_pings: usize,
    /// Extra tables each OK names after `trades`, at seqTxn 1, each with a name of 1 KiB, to
    /// make OKs large.
    pub ok_padding_tables: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            script: Vec::new(),
            idle_ack: Duration::from_millis(20),
            max_connection_life: Duration::from_secs(30),
            durable_after_pings: 0,
            ack_one_in: 2,
            ok_padding_tables: 0,
        }
    }
}

/// One WebSocket frame a client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFrame {
    /// The FIN bit (an unfragmented message has it on its only frame).
    pub fin: bool,
    /// The opcode (2 binary, 1 text, 0 continuation, 8 close, 9 ping, 10 pong).
    pub opcode: u8,
    /// Whether the frame was masked.
    pub masked: bool,
    /// The unmasked payload.
    pub payload: Vec<u8>,
}

/// One connection as the server saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedConn {
    /// The request line's target.
    pub path: String,
    /// The request headers, in order.
    pub headers: Vec<(String, String)>,
    /// The HTTP status answered.
    pub status: u16,
    /// Every frame received, control frames included.
    pub frames: Vec<RecordedFrame>,
    /// The status frames sent back.
    pub sent: Vec<Vec<u8>>,
    /// When the connection was accepted.
    pub accepted: Option<Instant>,
    /// When the last status frame was sent.
    pub last_sent: Option<Instant>,
}

impl RecordedConn {
    /// A request header's value (name compared without regard to case).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The payloads of the binary messages received, in order.
    #[must_use]
    pub fn messages(&self) -> Vec<Vec<u8>> {
        self.frames
            .iter()
            .filter(|f| f.opcode == 2)
            .map(|f| f.payload.clone())
            .collect()
    }
}

/// A running loopback server; dropping it stops it.
#[derive(Debug)]
pub struct LoopbackServer {
    addr: SocketAddr,
    record: Arc<Mutex<Vec<RecordedConn>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LoopbackServer {
    /// Starts a server on an ephemeral port of 127.0.0.1.
    pub fn start(config: ServerConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let record = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (Arc::clone(&record), Arc::clone(&stop));
        let thread = std::thread::spawn(move || accept_loop(&listener, &config, &r, &s));
        Ok(Self {
            addr,
            record,
            stop,
            thread: Some(thread),
        })
    }

    /// The address to connect to.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The most connections that were busy at the same time, a connection being busy from
    /// its accept to the last status the server sent on it. (A client that waits for its
    /// acknowledgements before closing cannot be busy on two connections at once.)
    #[must_use]
    pub fn max_concurrent(&self) -> usize {
        let conns = self.connections();
        let spans: Vec<(Instant, Instant)> = conns
            .iter()
            .filter_map(|c| Some((c.accepted?, c.last_sent.or(c.accepted)?)))
            .collect();
        spans
            .iter()
            .map(|(start, _)| {
                spans
                    .iter()
                    .filter(|(s, e)| s <= start && start <= e)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    /// What every connection so far recorded (a connection still open is included as far
    /// as it got).
    #[must_use]
    pub fn connections(&self) -> Vec<RecordedConn> {
        self.record.lock().expect("not poisoned").clone()
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(
    listener: &TcpListener,
    config: &ServerConfig,
    record: &Arc<Mutex<Vec<RecordedConn>>>,
    stop: &Arc<AtomicBool>,
) {
    let mut workers = Vec::new();
    let mut n = 0usize;
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                let script = config.script.get(n).cloned().unwrap_or(Conn::Serve);
                let index = {
                    let mut r = record.lock().expect("not poisoned");
                    r.push(RecordedConn {
                        accepted: Some(Instant::now()),
                        ..RecordedConn::default()
                    });
                    r.len() - 1
                };
                let (cfg, rec, st) = (config.clone(), Arc::clone(record), Arc::clone(stop));
                let seed = config.seed.wrapping_add(n as u64);
                workers.push(std::thread::spawn(move || {
                    let _ = serve(stream, &script, &cfg, seed, &rec, index, &st);
                }));
                n += 1;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    for w in workers {
        let _ = w.join();
    }
}

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *seed >> 33
}

/// Reads the HTTP request head: the target and the headers.
fn read_request(r: &mut impl BufRead) -> io::Result<(String, Vec<(String, String)>)> {
    // Each line is read through a bound of 8 KiB, so a client cannot make it grow without end.
    let mut line = String::new();
    r.by_ref().take(8192).read_line(&mut line)?;
    let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.by_ref().take(8192).read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let l = line.trim_end();
        if l.is_empty() {
            return Ok((target, headers));
        }
        if headers.len() > 100 {
            return Err(io::ErrorKind::InvalidData.into());
        }
        if let Some((n, v)) = l.split_once(':') {
            headers.push((n.trim().to_owned(), v.trim().to_owned()));
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        101 => "Switching Protocols",
        401 => "Unauthorized",
        403 => "Forbidden",
        421 => "Misdirected Request",
        _ => "Error",
    }
}

/// Reads one frame; `Ok(None)` when the read timed out before its first byte.
fn read_frame(r: &mut impl Read, limit: usize) -> io::Result<Option<RecordedFrame>> {
    let mut h = [0u8; 2];
    match r.read(&mut h[..1]) {
        Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
        Ok(_) => {}
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
    }
    read_full(r, &mut h[1..])?;
    let fin = h[0] & 0x80 != 0;
    let opcode = h[0] & 0x0f;
    let masked = h[1] & 0x80 != 0;
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            read_full(r, &mut b)?;
            u64::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            read_full(r, &mut b)?;
            u64::from_be_bytes(b)
        }
        n => u64::from(n),
    };
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= limit)
        .ok_or(io::ErrorKind::InvalidData)?;
    let mut key = [0u8; 4];
    if masked {
        read_full(r, &mut key)?;
    }
    let mut payload = vec![0u8; len];
    read_full(r, &mut payload)?;
    if masked {
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= key[i % 4];
        }
    }
    Ok(Some(RecordedFrame {
        fin,
        opcode,
        masked,
        payload,
    }))
}

/// Reads exactly `buf.len()` bytes, riding out read timeouts inside a frame (bounded).
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<()> {
    let until = Instant::now() + Duration::from_secs(10);
    let mut at = 0;
    while at < buf.len() {
        match r.read(&mut buf[at..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => at += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) && Instant::now() < until => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A reader taking at most 64 KiB every 20 ms ([`Conn::SlowRead`]).
struct SlowReader<'a, R>(&'a mut R);

impl<R: Read> Read for SlowReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        std::thread::sleep(Duration::from_millis(20));
        let n = buf.len().min(64 << 10);
        self.0.read(&mut buf[..n])
    }
}

/// An unmasked server frame with FIN set.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => f.push(n as u8),
        n if n <= 0xffff => {
            f.push(126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(payload);
    f
}

fn serve(
    stream: TcpStream,
    script: &Conn,
    config: &ServerConfig,
    mut seed: u64,
    record: &Mutex<Vec<RecordedConn>>,
    index: usize,
    stop: &AtomicBool,
) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    // The request head is read with one bound for the whole of it (a read cut short by a
    // timeout would lose part of a line); the frames then with a short poll.
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut w = stream.try_clone()?;
    let mut r = BufReader::new(stream);
    let (path, headers) = read_request(&mut r)?;
    w.set_read_timeout(Some(Duration::from_millis(5)))?;
    let at = |rec: &Mutex<Vec<RecordedConn>>, f: &mut dyn FnMut(&mut RecordedConn)| {
        f(&mut rec.lock().expect("not poisoned")[index]);
    };
    let key = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Sec-WebSocket-Key"))
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let durable_asked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("X-QWP-Request-Durable-Ack") && v == "true");
    let durable = durable_asked && *script != Conn::NoDurableEcho;
    let (status, extra) = match script {
        Conn::Refuse { status, headers } => (*status, headers.clone()),
        Conn::Headers(h) => (101, h.clone()),
        _ => (101, Vec::new()),
    };
    at(record, &mut |c| {
        c.path = path.clone();
        c.headers = headers.clone();
        c.status = status;
    });
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    if status == 101 {
        head.push_str("Upgrade: websocket\r\nConnection: Upgrade\r\n");
        head.push_str(&format!(
            "Sec-WebSocket-Accept: {}\r\n",
            tungstenite::handshake::derive_accept_key(key.as_bytes())
        ));
        if !extra
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("X-QWP-Version"))
        {
            head.push_str("X-QWP-Version: 1\r\n");
        }
        if durable {
            head.push_str("X-QWP-Durable-Ack: enabled\r\n");
        }
    } else {
        head.push_str("Content-Length: 0\r\nConnection: close\r\n");
    }
    for (n, v) in extra.iter().filter(|(_, v)| !v.is_empty()) {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    if *script == Conn::Trickle {
        for b in head.as_bytes() {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            w.write_all(std::slice::from_ref(b))?;
            std::thread::sleep(Duration::from_millis(50));
        }
    } else {
        w.write_all(head.as_bytes())?;
    }
    if status != 101 {
        let _ = w.shutdown(Shutdown::Both);
        return Ok(());
    }

    let born = Instant::now();
    if *script == Conn::Stall {
        while !stop.load(Ordering::Relaxed) && born.elapsed() < config.max_connection_life {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = w.shutdown(Shutdown::Both);
        return Ok(());
    }
    let mut received: u64 = 0;
    let mut acked: Option<u64> = None;
    let mut failed = false;
    let mut last_frame = Instant::now();
    // Recorded before it is written, so the record holds every status a client may have read
    // by the time it looks.
    let send = |w: &mut TcpStream, bytes: Vec<u8>| -> io::Result<()> {
        at(record, &mut |c| {
            c.sent.push(bytes.clone());
            c.last_sent = Some(Instant::now());
        });
        w.write_all(&frame(2, &bytes))
    };
    let mut half_closed: Option<Instant> = None;
    let mut durable_pending: Option<u64> = None;
    let mut pings = 0usize;
    while !stop.load(Ordering::Relaxed) && born.elapsed() < config.max_connection_life {
        if half_closed.is_some_and(|t| t.elapsed() >= Duration::from_secs(2)) {
            break;
        }
        let f = if *script == Conn::SlowRead {
            read_frame(&mut SlowReader(&mut r), 64 << 20)?
        } else {
            read_frame(&mut r, 64 << 20)?
        };
        let Some(f) = f else {
            // Idle: acknowledge everything received so far.
            if !failed
                && half_closed.is_none()
                && received > 0
                && acked != Some(received - 1)
                && last_frame.elapsed() >= config.idle_ack
            {
                acked = Some(received - 1);
                send(&mut w, ok(received - 1, config.ok_padding_tables))?;
                if durable && config.durable_after_pings == 0 {
                    send(&mut w, durable_ack(received - 1))?;
                } else if durable {
                    durable_pending = Some(received - 1);
                }
            }
            continue;
        };
        last_frame = Instant::now();
        let opcode = f.opcode;
        let payload = f.payload.clone();
        at(record, &mut |c| c.frames.push(f.clone()));
        if half_closed.is_some() {
            if opcode == 8 {
                return Ok(());
            }
            continue;
        }
        match opcode {
            8 => {
                let _ = w.write_all(&frame(8, &payload));
                let _ = w.shutdown(Shutdown::Both);
                return Ok(());
            }
            9 => {
                w.write_all(&frame(10, &payload))?;
                pings += 1;
                if pings >= config.durable_after_pings {
                    if let Some(p) = durable_pending.take() {
                        pings = 0;
                        send(&mut w, durable_ack(p))?;
                    }
                }
            }
            2 => {
                let seq = received;
                received += 1;
                match script {
                    Conn::ErrorAt { wire_seq, status } if *wire_seq == seq => {
                        failed = true;
                        send(
                            &mut w,
                            encode_status(&Status::Error {
                                status: *status,
                                wire_seq: seq,
                                message: format!("refused frame {seq}"),
                            }),
                        )?;
                    }
                    Conn::Oversized(n) => {
                        w.write_all(&frame(2, &vec![0u8; *n]))?;
                    }
                    Conn::Garbage(bytes) => send(&mut w, bytes.clone())?,
                    Conn::Raw(bytes) if seq == 0 => {
                        failed = true;
                        w.write_all(bytes)?;
                    }
                    Conn::TrickleStatus if seq == 0 => {
                        acked = Some(seq);
                        let bytes = ok(seq, 1);
                        at(record, &mut |c| {
                            c.sent.push(bytes.clone());
                            c.last_sent = Some(Instant::now());
                        });
                        for b in frame(2, &bytes) {
                            if stop.load(Ordering::Relaxed) {
                                return Ok(());
                            }
                            w.write_all(&[b])?;
                            std::thread::sleep(Duration::from_millis(5));
                        }
                    }
                    _ if failed => {}
                    _ => {
                        if config.ack_one_in > 0 && lcg(&mut seed).is_multiple_of(config.ack_one_in)
                        {
                            acked = Some(seq);
                            send(&mut w, ok(seq, config.ok_padding_tables))?;
                            if durable && config.durable_after_pings == 0 {
                                send(&mut w, durable_ack(seq))?;
                            } else if durable {
                                durable_pending = Some(seq);
                            }
                        }
                    }
                }
                if matches!(script, Conn::DropAfter(n) if received as usize >= *n) {
                    let _ = w.shutdown(Shutdown::Write);
                    half_closed = Some(Instant::now());
                }
            }
            _ => {}
        }
    }
    let _ = w.shutdown(Shutdown::Both);
    Ok(())
}

fn ok(wire_seq: u64, padding: usize) -> Vec<u8> {
    let mut tables = vec![("trades".to_owned(), wire_seq as i64 + 1)];
    tables.extend((0..padding).map(|k| (format!("pad{k:04}{}", "x".repeat(1017)), 1)));
    encode_status(&Status::Ok { wire_seq, tables })
}

/// The durable acknowledgement of everything up to `wire_seq` (one table, seqTxn = seq + 1).
fn durable_ack(wire_seq: u64) -> Vec<u8> {
    encode_status(&Status::DurableAck {
        tables: vec![("trades".to_owned(), wire_seq as i64 + 1)],
    })
}
