//! The blocking drain over QWP WebSocket (SF-W1 to SF-W10, SF-18 to SF-21): upgrades with the
//! QWP headers, checks the response, sends the journal's frames in FSN order (one unfragmented
//! binary message each), applies the server's status frames, and on any break reconnects with
//! back-off and replays from the first unacknowledged frame. Every wait is bounded.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sf_journal::ring::Link;
use sf_journal::status::{decode_status, is_qwp_frame, Category, Status};
use sf_journal::upgrade::{check_response, UpgradeError, UpgradeRequest, WRITE_PATH};
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::HandshakeError;
use tungstenite::http::{HeaderName, HeaderValue};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

use crate::journal::{Journal, JournalError, TerminalError};

/// The largest server message taken (SF-W8).
pub const MAX_INBOUND_BYTES: usize = 256 << 20;

/// How the drain connects and waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainConfig {
    /// The server.
    pub addr: SocketAddr,
    /// The upgrade's QWP headers.
    pub request: UpgradeRequest,
    /// The first back-off after a failed or broken connection.
    pub backoff_initial: Duration,
    /// The longest back-off.
    pub backoff_max: Duration,
    /// Bound of the TCP connect and of the upgrade.
    pub connect_timeout: Duration,
    /// How long one read waits before the drain looks for new frames.
    pub poll: Duration,
    /// The largest server message taken.
    pub max_inbound_bytes: usize,
    /// `durable_ack_keepalive_interval_millis`: the PING interval while idle with durable
    /// confirmations pending.
    pub keepalive: Duration,
}

impl DrainConfig {
    /// Defaults for a server at `addr`.
    #[must_use]
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            request: UpgradeRequest::default(),
            backoff_initial: Duration::from_millis(10),
            backoff_max: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(5),
            poll: Duration::from_millis(5),
            max_inbound_bytes: MAX_INBOUND_BYTES,
            keepalive: Duration::from_millis(200),
        }
    }
}

/// What a drain did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Successful upgrades.
    pub connections: u32,
    /// Failed connection attempts and broken connections.
    pub breaks: u32,
    /// Frames sent, replays included.
    pub frames_sent: u64,
    /// Frames sent again after a reconnect (the ring's counter, SF-21).
    pub replayed_frames: u64,
    /// Retriable error statuses received.
    pub retriable_errors: u32,
    /// PINGs sent.
    pub pings: u32,
}

/// Why a drain ended without draining.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DrainError {
    /// The upgrade was refused for good: authentication, role mismatch, version, or durable
    /// acknowledgement not confirmed.
    #[error("upgrade refused: {0}")]
    Upgrade(UpgradeError),
    /// A header value of the request cannot be sent.
    #[error("header {0} has a value that cannot be sent")]
    BadHeader(String),
    /// The server sent a terminal error status; the frame stays in the journal.
    #[error("terminal error from the server: {0:?}")]
    Terminal(TerminalError),
    /// The server broke the protocol (a malformed or oversized status frame, a text message,
    /// an acknowledgement of what was never sent).
    #[error("protocol violation: {0}")]
    Violation(String),
    /// A journal frame is not a QWP message (it does not begin `QWP1`); it is not sent.
    #[error("frame {fsn} is not a QWP message")]
    NotQwp {
        /// Its FSN.
        fsn: i64,
    },
    /// The journal failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The deadline passed with frames unacknowledged.
    #[error("deadline passed: acknowledged {acked} of {published}")]
    TimedOut {
        /// The acknowledged FSN.
        acked: i64,
        /// The published FSN.
        published: i64,
    },
}

enum Broke {
    /// The connection ended; reconnect.
    Retry,
    /// Drained.
    Done,
}

fn epoch_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn lock(j: &Mutex<Journal>) -> std::sync::MutexGuard<'_, Journal> {
    j.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn timed_out(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io) if matches!(io.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
}

/// A blocking drain of one journal to one server.
#[derive(Debug, Clone)]
pub struct Drain {
    config: DrainConfig,
}

impl Drain {
    /// A drain with this configuration.
    #[must_use]
    pub fn new(config: DrainConfig) -> Self {
        Self { config }
    }

    /// Drains until everything published is acknowledged and `until` holds for the journal
    /// (for instance: the producer published its last frame), or `deadline`. The journal is
    /// shared: a producer may append meanwhile (frames appended during a replay are sent
    /// too). Retriable failures reconnect after a back-off; terminal ones end the drain.
    pub fn run(
        &self,
        journal: &Mutex<Journal>,
        deadline: Instant,
        until: impl Fn(&Journal) -> bool,
    ) -> Result<DrainReport, DrainError> {
        let mut report = DrainReport::default();
        let mut backoff = self.config.backoff_initial;
        let mut attempts = 0u32;
        let mut outage_start = None;
        loop {
            let timeout = || {
                let j = lock(journal);
                DrainError::TimedOut {
                    acked: j.acked_fsn(),
                    published: j.published_fsn(),
                }
            };
            if Instant::now() >= deadline {
                return Err(timeout());
            }
            let broke = match self.connect(journal, deadline) {
                Ok(mut ws) => {
                    attempts = 0;
                    outage_start = None;
                    backoff = self.config.backoff_initial;
                    report.connections += 1;
                    let r = self.pump(&mut ws, journal, deadline, &until, &mut report);
                    let mut j = lock(journal);
                    j.disconnect();
                    report.replayed_frames = j.ring().replayed_frames();
                    drop(j);
                    match r {
                        Ok(Broke::Done) => {
                            let _ = ws.close(None);
                            let _ = ws.flush();
                            return Ok(report);
                        }
                        Ok(Broke::Retry) => {
                            let _ = ws.close(None);
                            let _ = ws.flush();
                            true
                        }
                        Err(e) => {
                            let _ = ws.close(None);
                            let _ = ws.flush();
                            return Err(e);
                        }
                    }
                }
                Err(Some(e)) => return Err(e),
                Err(None) => true,
            };
            if broke {
                report.breaks += 1;
                attempts += 1;
                let start = *outage_start.get_or_insert_with(epoch_millis);
                lock(journal).set_link(Link::Reconnecting {
                    attempts,
                    outage_start_millis: start,
                });
                let left = deadline.saturating_duration_since(Instant::now());
                std::thread::sleep(backoff.min(left));
                backoff = (backoff * 2).min(self.config.backoff_max);
            }
        }
    }

    /// One connection attempt: `Err(None)` is retriable, `Err(Some(_))` terminal.
    fn connect(
        &self,
        journal: &Mutex<Journal>,
        deadline: Instant,
    ) -> Result<WebSocket<TcpStream>, Option<DrainError>> {
        let c = &self.config;
        let bound = c
            .connect_timeout
            .min(deadline.saturating_duration_since(Instant::now()))
            .max(Duration::from_millis(1));
        let stream = TcpStream::connect_timeout(&c.addr, bound).map_err(|_| None)?;
        let _ = stream.set_nodelay(true);
        stream.set_read_timeout(Some(bound)).map_err(|_| None)?;
        stream.set_write_timeout(Some(bound)).map_err(|_| None)?;
        let mut req = format!("ws://{}{WRITE_PATH}", c.addr)
            .into_client_request()
            .map_err(|e| Some(DrainError::BadHeader(e.to_string())))?;
        for (n, v) in c.request.headers() {
            let name = HeaderName::from_bytes(n.as_bytes())
                .map_err(|_| Some(DrainError::BadHeader(n.clone())))?;
            let value =
                HeaderValue::from_str(&v).map_err(|_| Some(DrainError::BadHeader(n.clone())))?;
            req.headers_mut().insert(name, value);
        }
        let config = WebSocketConfig::default()
            .max_message_size(Some(c.max_inbound_bytes))
            .max_frame_size(Some(c.max_inbound_bytes));
        let headers_of = |h: &tungstenite::http::HeaderMap| -> Vec<(String, String)> {
            h.iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect()
        };
        let (ws, status, headers) =
            match tungstenite::client::client_with_config(req, stream, Some(config)) {
                Ok((ws, resp)) => (Some(ws), resp.status().as_u16(), headers_of(resp.headers())),
                Err(HandshakeError::Failure(tungstenite::Error::Http(resp))) => {
                    (None, resp.status().as_u16(), headers_of(resp.headers()))
                }
                Err(_) => return Err(None),
            };
        match check_response(status, &headers, &c.request) {
            Ok(_) => {}
            Err(UpgradeError::Refused(_)) => return Err(None),
            Err(e) => return Err(Some(DrainError::Upgrade(e))),
        }
        let ws = ws.ok_or(None)?;
        ws.get_ref()
            .set_read_timeout(Some(c.poll))
            .map_err(|_| None)?;
        let _ = lock(journal).connect(0);
        Ok(ws)
    }

    fn pump(
        &self,
        ws: &mut WebSocket<TcpStream>,
        journal: &Mutex<Journal>,
        deadline: Instant,
        until: &impl Fn(&Journal) -> bool,
        report: &mut DrainReport,
    ) -> Result<Broke, DrainError> {
        let started = Instant::now();
        let millis = |t: Instant| t.duration_since(started).as_millis() as u64;
        let mut last_sent = Instant::now();
        loop {
            loop {
                let next = lock(journal).next_frame()?;
                let Some((fsn, bytes)) = next else { break };
                if !is_qwp_frame(&bytes) {
                    return Err(DrainError::NotQwp { fsn });
                }
                if ws.send(Message::Binary(bytes.into())).is_err() {
                    return Ok(Broke::Retry);
                }
                report.frames_sent += 1;
                last_sent = Instant::now();
            }
            {
                let mut j = lock(journal);
                // `sf_durability=periodic`: the checkpoint due now, if any.
                let _ = j.checkpoint(crate::journal::now_millis())?;
                if j.acked_fsn() >= j.published_fsn() && until(&j) {
                    return Ok(Broke::Done);
                }
                let now = Instant::now();
                let ping = j.ring().keepalive_due(
                    millis(now),
                    millis(last_sent),
                    self.config.keepalive.as_millis() as u64,
                );
                drop(j);
                if ping {
                    if ws.send(Message::Ping(Vec::new().into())).is_err() {
                        return Ok(Broke::Retry);
                    }
                    report.pings += 1;
                    last_sent = now;
                }
            }
            if Instant::now() >= deadline {
                return Err({
                    let j = lock(journal);
                    DrainError::TimedOut {
                        acked: j.acked_fsn(),
                        published: j.published_fsn(),
                    }
                });
            }
            let msg = match ws.read() {
                Ok(m) => m,
                Err(e) if timed_out(&e) => continue,
                Err(tungstenite::Error::Capacity(e)) => {
                    return Err(DrainError::Violation(format!("server message: {e}")))
                }
                Err(_) => return Ok(Broke::Retry),
            };
            let bytes = match msg {
                Message::Binary(b) => b,
                Message::Text(_) => {
                    return Err(DrainError::Violation("a text message".into()));
                }
                Message::Close(_) => return Ok(Broke::Retry),
                _ => continue,
            };
            let status = decode_status(&bytes).map_err(|e| DrainError::Violation(e.to_string()))?;
            let mut j = lock(journal);
            let violation = |e: JournalError| match e {
                JournalError::Ack(a) => DrainError::Violation(a.to_string()),
                e => DrainError::Journal(e),
            };
            match status {
                Status::Ok { wire_seq, tables } => j.ok(wire_seq, tables).map_err(violation)?,
                Status::DurableAck { tables } => j.durable_ack(&tables).map_err(violation)?,
                Status::Error {
                    status, wire_seq, ..
                } => match j.reject(wire_seq, status).map_err(violation)?.1 {
                    Category::Retriable => {
                        report.retriable_errors += 1;
                        return Ok(Broke::Retry);
                    }
                    _ => {
                        let t = j.take_terminal().unwrap_or(TerminalError {
                            status,
                            wire_seq,
                            fsn: None,
                        });
                        return Err(DrainError::Terminal(t));
                    }
                },
                _ => return Err(DrainError::Violation("an unknown status".into())),
            }
        }
    }
}
