//! The blocking drain over QWP WebSocket (SF-W1 to SF-W10, SF-18 to SF-21): upgrades with the
//! QWP headers, checks the response, sends the journal's frames in FSN order (one unfragmented
//! binary message each), applies the server's status frames, and on any break reconnects with
//! back-off and replays from the first unacknowledged frame. Every wait is bounded.
//!
//! The decisions both drains share are written once here (the reconnect bookkeeping, the send
//! bursts with the reads between them, the judging of what was read); this blocking drain and
//! the tokio one keep only their socket calls. The back-off doubles
//! with each attempt and starts again from its first pause only after a connection made
//! progress. Between two bursts every status already arrived is read, so acknowledgements
//! never pile up unread.
//!
//! A server that answers the upgrade with `X-QWP-Max-Batch-Size` above 0 gets no message
//! longer than that: a journal frame over it ends the drain with
//! [`DrainError::FrameTooLarge`] naming its FSN, unsent and kept in the journal (frames are
//! opaque here, so they cannot be split). Absent, unreadable or 0 means no limit but the
//! journal's own.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sf_journal::ring::Link;
use sf_journal::status::{decode_status, is_qwp_frame, Category, Status, StatusError};
use sf_journal::upgrade::{check_response, Negotiated, UpgradeError, UpgradeRequest, WRITE_PATH};
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::HandshakeError;
use tungstenite::http::{HeaderName, HeaderValue};
use tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::journal::{
    monotonic_millis, CloseStep, Closed, Journal, JournalError, ServerError, TerminalError,
};

/// The largest server message taken (SF-W8).
pub const MAX_INBOUND_BYTES: usize = 256 << 20;

/// How the drain connects and waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainConfig {
    /// The server.
    pub addr: SocketAddr,
    /// The upgrade's QWP headers.
    pub request: UpgradeRequest,
    /// The first back-off after a failed or broken connection (at least 1 ms is waited, so
    /// 0 still backs off and grows).
    pub backoff_initial: Duration,
    /// The longest back-off.
    pub backoff_max: Duration,
    /// Bound of the TCP connect with the upgrade (one bound for both), of each send and of
    /// the close of a connection; always cut at the drain's deadline.
    pub connect_timeout: Duration,
    /// How long one read waits before the drain looks for new frames (at least 1 ms is
    /// waited, so 0 neither spins nor is refused by the socket).
    pub poll: Duration,
    /// The largest server message taken.
    pub max_inbound_bytes: usize,
    /// `durable_ack_keepalive_interval_millis`: the PING interval while idle with durable
    /// confirmations pending; 0 sends no PING (as in the reference client).
    pub keepalive: Duration,
    /// The catch-up frames sent first on every connection when the journal has a dictionary
    /// (SF-9); none when `None`.
    pub catch_up: Option<CatchUp>,
    /// Where every error status the server sends goes, retriable ones included (SF-44): a
    /// handler, or by default a bounded inbox the application reads.
    pub errors: ErrorSink,
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
            catch_up: None,
            errors: ErrorSink::Inbox(ErrorInbox::new(InboxLimits::default())),
        }
    }
}

/// What a drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Successful upgrades.
    pub connections: u32,
    /// Failed connection attempts and broken connections.
    pub breaks: u32,
    /// Frames of the journal sent, replays included.
    pub frames_sent: u64,
    /// Catch-up frames sent (SF-9).
    pub catch_up_frames: u64,
    /// Frames sent again after a reconnect (the ring's counter, SF-21).
    pub replayed_frames: u64,
    /// Retriable error statuses received.
    pub retriable_errors: u32,
    /// The last retriable error status received, with its wire sequence, FSN and message.
    pub last_retriable: Option<ServerError>,
    /// Error statuses the inbox dropped during this run to stay within its bounds (the
    /// oldest go first); always 0 with a handler.
    pub errors_dropped: u64,
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
    #[error(
        "terminal error from the server: {:?} at wire sequence {}: {:?}",
        .0.status,
        .0.wire_seq,
        .0.message
    )]
    Terminal(TerminalError),
    /// A server frame is not a well-formed status (SF-W4 to SF-W7): a bad length, an unknown
    /// status, an error message over 1024 bytes or not UTF-8. Nothing is trimmed.
    #[error("malformed status frame: {0}")]
    Status(StatusError),
    /// The server broke the protocol (a malformed or oversized status frame, a text message,
    /// an acknowledgement of what was never sent, a frame breaking the WebSocket protocol), or
    /// closed with a code refusing what this client sends (1002, 1003, 1007 to 1010). Not
    /// retried.
    #[error("protocol violation: {0}")]
    Violation(String),
    /// A journal frame is not a QWP message (it does not begin `QWP1`); it is not sent.
    #[error("frame {fsn} is not a QWP message")]
    NotQwp {
        /// Its FSN.
        fsn: i64,
    },
    /// A journal frame is larger than the server's `X-QWP-Max-Batch-Size` (SF-W2); it is not
    /// sent and stays in the journal. Retrying cannot help, so the drain ends.
    #[error("frame {fsn} of {len} bytes exceeds the server's batch size of {max}")]
    FrameTooLarge {
        /// Its FSN.
        fsn: i64,
        /// Its length in bytes.
        len: usize,
        /// The server's `X-QWP-Max-Batch-Size`.
        max: u64,
    },
    /// A catch-up frame is larger than the server's `X-QWP-Max-Batch-Size`; nothing is sent.
    #[error("a catch-up frame of {len} bytes exceeds the server's batch size of {max}")]
    CatchUpTooLarge {
        /// Its length in bytes.
        len: usize,
        /// The server's `X-QWP-Max-Batch-Size`.
        max: u64,
    },
    /// A catch-up frame is not a QWP message; nothing is sent.
    #[error("a catch-up frame is not a QWP message")]
    CatchUpNotQwp,
    /// The journal failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The drain's request and the journal disagree on durable-ack mode: the request asks
    /// for it (`request.durable_ack`) and the journal does not queue OKs for it
    /// (`JournalConfig::durable_ack`), or the other way round. Nothing is sent.
    #[error("durable ack requested: {requested}, journal in durable-ack mode: {journal}")]
    DurableAckMismatch {
        /// What the drain's upgrade request asks for.
        requested: bool,
        /// Whether the journal is in durable-ack mode.
        journal: bool,
    },
    /// The deadline passed with frames unacknowledged.
    #[error("deadline passed: acknowledged {acked} of {published}")]
    TimedOut {
        /// The acknowledged FSN.
        acked: i64,
        /// The published FSN.
        published: i64,
    },
}

/// How often a close waiting for acknowledgements looks again, with the journal unlocked.
pub(crate) const CLOSE_POLL: Duration = Duration::from_millis(2);

/// One look of a close shared by both drains (SF-26 to SF-28): `Ok(Ok(closed))` when the
/// journal is closed, `Ok(Err(pause))` to look again after `pause` with the journal unlocked.
/// `started_millis` is when the close began, on [`monotonic_millis`].
pub(crate) fn close_step(
    journal: &Mutex<Journal>,
    started_millis: u64,
    timeout_millis: i64,
) -> Result<Result<Closed, Duration>, JournalError> {
    let now = monotonic_millis();
    match lock(journal).close(now, started_millis, timeout_millis)? {
        CloseStep::Done(c) => Ok(Ok(c)),
        CloseStep::Wait { deadline_millis } => Ok(Err(CLOSE_POLL
            .min(Duration::from_millis(deadline_millis.saturating_sub(now)))
            .max(Duration::from_millis(1)))),
    }
}

/// Closes a journal shared with a running drain (SF-26 to SF-28): waits up to
/// `timeout_millis` (`close_flush_timeout_millis`, see
/// [`DEFAULT_CLOSE_FLUSH_TIMEOUT_MILLIS`](crate::journal::DEFAULT_CLOSE_FLUSH_TIMEOUT_MILLIS))
/// for everything published to be acknowledged, looking every 2 ms with the journal unlocked
/// so the drain goes on, and returns as soon as it is. On timeout a WARN is logged and the
/// unacknowledged FSNs are reported: in SF mode they stay on disk for the next sender on the
/// slot, in memory mode they are lost. 0 or below skips the wait. Either way the slot lock is
/// released and a terminal error not yet delivered is handed back. The drain ends at its next
/// look at the journal (with `Ok`). The async drain's `drain_async::close` (feature
/// `tokio`) keeps the same bound.
pub fn close(journal: &Mutex<Journal>, timeout_millis: i64) -> Result<Closed, JournalError> {
    let started = monotonic_millis();
    loop {
        match close_step(journal, started, timeout_millis)? {
            Ok(closed) => return Ok(closed),
            Err(pause) => std::thread::sleep(pause),
        }
    }
}

/// Whether a frame of `len` bytes is over the server's batch size (0: no limit but the
/// local budget, SF-W2).
fn over_batch(len: usize, max_batch: u64) -> bool {
    max_batch > 0 && len as u64 > max_batch
}

/// Whether a journal frame may go on the wire: a QWP message (SF-W9) within the server's
/// batch size (SF-W2).
pub(crate) fn check_frame(fsn: i64, bytes: &[u8], max_batch: u64) -> Result<(), DrainError> {
    if !is_qwp_frame(bytes) {
        return Err(DrainError::NotQwp { fsn });
    }
    if over_batch(bytes.len(), max_batch) {
        tracing::warn!(
            fsn,
            len = bytes.len(),
            max_batch,
            "sf frame over the server's batch size, not sent"
        );
        return Err(DrainError::FrameTooLarge {
            fsn,
            len: bytes.len(),
            max: max_batch,
        });
    }
    Ok(())
}

/// The next frame to send, or `Err(None)` when the journal was closed (the drain is done).
pub(crate) fn next_frame(
    journal: &Mutex<Journal>,
) -> Result<Option<(i64, Vec<u8>)>, Option<DrainError>> {
    match lock(journal).next_frame() {
        Ok(f) => Ok(f),
        Err(JournalError::Closed) => Err(None),
        Err(e) => Err(Some(e.into())),
    }
}

/// How a connection ended that did not end the drain.
pub(crate) enum Broke {
    /// The connection ended; reconnect.
    Retry,
    /// Drained.
    Done,
}

pub(crate) fn epoch_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub(crate) fn lock(j: &Mutex<Journal>) -> std::sync::MutexGuard<'_, Journal> {
    j.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The most frames sent in a row before the statuses that arrived meanwhile are read and
/// the deadline is checked again: a producer appending as fast as the drain sends cannot
/// keep it from reading acknowledgements or from ending at its deadline.
pub(crate) const SEND_BURST: usize = 64;

fn timed_out(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io) if matches!(io.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
}

/// What a failed read of an open connection means (both drains): `None` when the connection
/// broke (reconnect, SF-18), a violation when the server broke the WebSocket protocol
/// (terminal, as PROTOCOL_VIOLATION is in SF-44): a message over the inbound cap (SF-W8),
/// reserved bits, a masked or unknown frame, a bad fragment or control frame, a close
/// payload of one byte, a text message that is not UTF-8.
pub(crate) fn read_failed(e: tungstenite::Error) -> Option<DrainError> {
    use tungstenite::error::ProtocolError as P;
    use tungstenite::Error as E;
    match e {
        E::Capacity(e) => Some(violation(format!("server message: {e}"))),
        E::Utf8(e) => Some(violation(format!("a text message that is not UTF-8: {e}"))),
        E::AttackAttempt => Some(violation("an attack attempt".into())),
        E::Protocol(
            p @ (P::NonZeroReservedBits
            | P::MaskedFrameFromServer
            | P::FragmentedControlFrame
            | P::ControlFrameTooBig
            | P::UnknownControlFrameType(_)
            | P::UnknownDataFrameType(_)
            | P::UnexpectedContinueFrame
            | P::ExpectedFragment(_)
            | P::InvalidOpcode(_)
            | P::InvalidCloseSequence),
        ) => Some(violation(format!("websocket: {p}"))),
        e => {
            tracing::debug!(error = %e, "sf connection broke");
            None
        }
    }
}

/// One message read from the server, judged and applied (both drains): a status frame goes to
/// the journal, a close is a break, a text message a violation, a PING or PONG nothing.
pub(crate) fn on_message(
    journal: &Mutex<Journal>,
    c: &DrainConfig,
    msg: Message,
    report: &mut DrainReport,
) -> Result<Option<Broke>, DrainError> {
    match msg {
        Message::Binary(b) => apply_status(journal, c, &b, report),
        Message::Text(_) => Err(violation("a text message".into())),
        Message::Close(frame) => closed_by_server(frame.as_ref()),
        _ => Ok(None),
    }
}

/// A close from the server: a break to retry, unless its code says the server refuses what
/// this client sends (protocol error 1002, unsupported data 1003, invalid payload 1007,
/// policy 1008, too big 1009, missing extension 1010) or the server sent a code no endpoint
/// may send (taken as 1002): sending the same frames again cannot help, so it is terminal,
/// as PROTOCOL_VIOLATION is (SF-44). Going away, a server error, a restart, try again later,
/// an application code or no code at all reconnect (SF-18).
fn closed_by_server(frame: Option<&CloseFrame>) -> Result<Option<Broke>, DrainError> {
    use tungstenite::protocol::frame::coding::CloseCode as C;
    match frame {
        Some(f)
            if matches!(
                f.code,
                C::Protocol | C::Unsupported | C::Invalid | C::Policy | C::Size | C::Extension
            ) =>
        {
            Err(violation(format!(
                "the server closed with code {}: {:?}",
                u16::from(f.code),
                f.reason.as_str()
            )))
        }
        f => {
            tracing::debug!(code = ?f.map(|f| u16::from(f.code)), "sf server closed the connection");
            Ok(Some(Broke::Retry))
        }
    }
}

/// How long a read waits for a server message: not at all after a full burst (only what
/// already arrived is read, frames are waiting), else the poll interval but at least 1 ms:
/// a socket refuses a read timeout of 0, and an async read of 0 would spin.
pub(crate) fn read_wait(c: &DrainConfig, more: bool) -> Duration {
    if more {
        Duration::ZERO
    } else {
        c.poll.max(Duration::from_millis(1))
    }
}

/// The bound of one wait on a connection (the connect with its upgrade, a send, the close):
/// the connect timeout, cut at the deadline, at least 1 ms.
pub(crate) fn wait_bound(c: &DrainConfig, deadline: Instant) -> Duration {
    c.connect_timeout
        .min(deadline.saturating_duration_since(Instant::now()))
        .max(Duration::from_millis(1))
}

/// The reconnect bookkeeping both drains share (SF-18, SF-24): failed attempts since the
/// outage began, when it began, and the back-off. An outage ends only with a connection that
/// made progress (an acknowledgement moved the acked FSN, or nothing was left to acknowledge
/// when it ended): a server that upgrades and then fails every connection at once is backed
/// off from as long as one that refuses the upgrade.
#[derive(Debug, Default)]
pub(crate) struct Outage {
    attempts: u32,
    start_millis: Option<u64>,
    acked_at_connect: Option<i64>,
}

impl Outage {
    /// Whether to try (again): `Ok(false)` when the journal was closed (the drain is done),
    /// an error when the deadline passed.
    pub(crate) fn may_try(journal: &Mutex<Journal>, deadline: Instant) -> Result<bool, DrainError> {
        if lock(journal).is_closed() {
            return Ok(false);
        }
        if Instant::now() >= deadline {
            return Err(deadline_passed(journal));
        }
        Ok(true)
    }

    /// A connection is up.
    pub(crate) fn connected(&mut self, journal: &Mutex<Journal>, report: &mut DrainReport) {
        self.acked_at_connect = Some(lock(journal).acked_fsn());
        report.connections += 1;
    }

    /// An attempt failed or a connection broke: counted, the journal told it is reconnecting
    /// (with the attempts and the outage's start), a periodic checkpoint taken if due
    /// (SF-36); returns the back-off, doubling from the first one up to the longest, cut at
    /// the deadline.
    pub(crate) fn broke(
        &mut self,
        journal: &Mutex<Journal>,
        c: &DrainConfig,
        deadline: Instant,
        report: &mut DrainReport,
    ) -> Result<Duration, DrainError> {
        if let Some(before) = self.acked_at_connect.take() {
            let j = lock(journal);
            if j.acked_fsn() > before || j.acked_fsn() >= j.published_fsn() {
                self.attempts = 0;
                self.start_millis = None;
            }
        }
        report.breaks += 1;
        self.attempts += 1;
        let start = *self.start_millis.get_or_insert_with(epoch_millis);
        {
            let mut j = lock(journal);
            j.set_link(Link::Reconnecting {
                attempts: self.attempts,
                outage_start_millis: start,
            });
            let _ = j.checkpoint(crate::journal::monotonic_millis())?;
        }
        // A first pause of 0 would never grow: every reconnect would follow at once.
        let first = c.backoff_initial.max(Duration::from_millis(1));
        let pause = sansio_kit::backoff::Backoff::new(first, c.backoff_max)
            .pause(self.attempts)
            .min(deadline.saturating_duration_since(Instant::now()));
        tracing::debug!(
            attempts = self.attempts,
            backoff_millis = pause.as_millis() as u64,
            "sf connection lost, backing off"
        );
        Ok(pause)
    }
}

/// What a burst does next (both drains).
pub(crate) enum Next {
    /// Send this frame.
    Send(Vec<u8>),
    /// The burst is over (full, or nothing to send now): see [`Pump::after_burst`].
    Pause,
    /// The journal was closed: the drain is done.
    Done,
}

/// What follows a burst (both drains).
pub(crate) enum After {
    /// The drain is done.
    Done,
    /// Send a PING first if `ping` (SF-17), then read what the server sent, waiting at most
    /// `wait` (0: only what already arrived).
    Read {
        /// A PING is due.
        ping: bool,
        /// How long the read may wait.
        wait: Duration,
    },
}

/// The sending side of one connection, shared by both drains: bursts of at most
/// [`SEND_BURST`] frames, each checked before it goes (SF-W2, SF-W9) and the deadline before
/// each, then the checks between bursts.
pub(crate) struct Pump {
    started: Instant,
    last_sent: Instant,
    sent: usize,
    full: bool,
    read: usize,
    catch_up: VecDeque<Vec<u8>>,
    catching_up: bool,
}

/// The most server messages read in a row between two bursts. After the first, only those
/// already arrived are read; reading all of them (not one per burst) keeps the statuses from
/// piling up unread until the server, unable to write them, stops reading the frames.
pub(crate) const READ_BURST: usize = 4 * SEND_BURST;

impl Pump {
    /// A new connection's pump, which sends `catch_up` (SF-9) before the journal's frames,
    /// in the same bursts, so statuses are read while they go out too.
    pub(crate) fn new(catch_up: Vec<Vec<u8>>) -> Self {
        let now = Instant::now();
        Self {
            started: now,
            last_sent: now,
            sent: 0,
            full: false,
            read: 0,
            catch_up: catch_up.into(),
            catching_up: false,
        }
    }

    /// A message was read: whether to read again, taking only what already arrived.
    pub(crate) fn read_again(&mut self) -> bool {
        self.read += 1;
        self.read < READ_BURST
    }

    /// The next step of the current burst.
    pub(crate) fn next(
        &mut self,
        journal: &Mutex<Journal>,
        deadline: Instant,
        max_batch: u64,
    ) -> Result<Next, DrainError> {
        if Instant::now() >= deadline {
            return Err(deadline_passed(journal));
        }
        if self.sent == SEND_BURST {
            self.full = true;
            return Ok(Next::Pause);
        }
        self.catching_up = !self.catch_up.is_empty();
        if let Some(f) = self.catch_up.pop_front() {
            // From now on a status naming it is taken; before, it is a violation.
            lock(journal).catch_up_sent();
            return Ok(Next::Send(f));
        }
        match next_frame(journal) {
            Ok(Some((fsn, bytes))) => {
                check_frame(fsn, &bytes, max_batch)?;
                Ok(Next::Send(bytes))
            }
            Ok(None) => Ok(Next::Pause),
            Err(None) => Ok(Next::Done),
            Err(Some(e)) => Err(e),
        }
    }

    /// A frame of the burst went out.
    pub(crate) fn sent(&mut self, report: &mut DrainReport) {
        self.sent += 1;
        self.last_sent = Instant::now();
        if self.catching_up {
            report.catch_up_frames += 1;
        } else {
            report.frames_sent += 1;
        }
    }

    /// A PING went out.
    pub(crate) fn pinged(&mut self, report: &mut DrainReport) {
        self.last_sent = Instant::now();
        report.pings += 1;
    }

    /// Between bursts: the checkpoint due, whether the drain is done, the deadline, whether
    /// a PING is due, and how long the read may wait (not at all after a full burst).
    pub(crate) fn after_burst(
        &mut self,
        journal: &Mutex<Journal>,
        c: &DrainConfig,
        until: &impl Fn(&Journal) -> bool,
        deadline: Instant,
    ) -> Result<After, DrainError> {
        let millis = |t: Instant| t.duration_since(self.started).as_millis() as u64;
        let (done, ping_in) = between_sends(
            journal,
            until,
            c.keepalive,
            millis(Instant::now()),
            millis(self.last_sent),
        )?;
        if done {
            return Ok(After::Done);
        }
        if Instant::now() >= deadline {
            return Err(deadline_passed(journal));
        }
        let ping = ping_in == Some(0);
        let mut wait = read_wait(c, self.full);
        if let Some(ms) = ping_in {
            // The read ends when the next PING is due (SF-17), an interval after this one
            // when it goes now: a poll interval longer than the keepalive does not stretch it.
            let next = if ms == 0 {
                keepalive_millis(c.keepalive)
            } else {
                ms
            };
            wait = wait.min(Duration::from_millis(next).max(Duration::from_millis(1)));
        }
        self.sent = 0;
        self.full = false;
        self.read = 0;
        Ok(After::Read { ping, wait })
    }
}

/// Refuses a drain whose request and journal disagree on durable-ack mode.
pub(crate) fn check_durable_ack(
    journal: &Mutex<Journal>,
    c: &DrainConfig,
) -> Result<(), DrainError> {
    let in_journal = lock(journal).ring().durable_ack_mode();
    if in_journal == c.request.durable_ack {
        return Ok(());
    }
    tracing::warn!(
        requested = c.request.durable_ack,
        journal = in_journal,
        "sf drain refused: durable-ack mode configured differently for the request and the journal"
    );
    Err(DrainError::DurableAckMismatch {
        requested: c.request.durable_ack,
        journal: in_journal,
    })
}

/// The deadline passed: where the journal stands.
pub(crate) fn deadline_passed(journal: &Mutex<Journal>) -> DrainError {
    let j = lock(journal);
    tracing::warn!(
        acked_fsn = j.acked_fsn(),
        published_fsn = j.published_fsn(),
        "sf drain deadline passed with frames unacknowledged"
    );
    DrainError::TimedOut {
        acked: j.acked_fsn(),
        published: j.published_fsn(),
    }
}

/// The upgrade request: `GET /api/v4/write` with the QWP headers (SF-W1).
pub(crate) fn upgrade_request(
    c: &DrainConfig,
) -> Result<tungstenite::handshake::client::Request, DrainError> {
    let mut req = format!("ws://{}{WRITE_PATH}", c.addr)
        .into_client_request()
        .map_err(|e| DrainError::BadHeader(e.to_string()))?;
    for (n, v) in c.request.headers() {
        let name =
            HeaderName::from_bytes(n.as_bytes()).map_err(|_| DrainError::BadHeader(n.clone()))?;
        let value = HeaderValue::from_str(&v).map_err(|_| DrainError::BadHeader(n.clone()))?;
        req.headers_mut().insert(name, value);
    }
    Ok(req)
}

/// The WebSocket limits: server messages of at most the inbound cap (SF-W8).
pub(crate) fn ws_config(c: &DrainConfig) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(c.max_inbound_bytes))
        .max_frame_size(Some(c.max_inbound_bytes))
}

pub(crate) fn headers_of(h: &tungstenite::http::HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// What the upgrade's answer means: `Err(None)` is retriable, `Err(Some(_))` ends the drain.
pub(crate) fn judge_upgrade(
    status: u16,
    headers: &[(String, String)],
    request: &UpgradeRequest,
) -> Result<Negotiated, Option<DrainError>> {
    match check_response(status, headers, request) {
        Ok(n) => Ok(n),
        Err(UpgradeError::Refused(code)) => {
            tracing::debug!(status = code, "sf upgrade refused, will retry");
            Err(None)
        }
        Err(e) => {
            tracing::warn!(error = %e, "sf upgrade refused for good");
            Err(Some(DrainError::Upgrade(e)))
        }
    }
}

/// A connection is up: the catch-up frames it must send first (SF-9, from the journal's
/// dictionary when a [`CatchUp`] is configured and the dictionary is not empty), and the
/// journal's wire window opened after them.
pub(crate) fn on_connected(
    journal: &Mutex<Journal>,
    c: &DrainConfig,
    max_batch: u64,
) -> Result<Vec<Vec<u8>>, DrainError> {
    let mut j = lock(journal);
    let frames = match &c.catch_up {
        Some(cu) if !j.dict().symbols().is_empty() => cu.frames(j.dict().symbols()),
        _ => Vec::new(),
    };
    if frames.iter().any(|f| !is_qwp_frame(f)) {
        return Err(DrainError::CatchUpNotQwp);
    }
    if let Some(f) = frames.iter().find(|f| over_batch(f.len(), max_batch)) {
        tracing::warn!(
            len = f.len(),
            max_batch,
            "sf catch-up frame over the server's batch size"
        );
        return Err(DrainError::CatchUpTooLarge {
            len: f.len(),
            max: max_batch,
        });
    }
    let w = j.connect(frames.len() as u64);
    tracing::info!(
        catch_up = w.catch_up,
        first_fsn = j.acked_fsn() + 1,
        published_fsn = j.published_fsn(),
        generation = j.ring().connection_generation(),
        "sf connection up"
    );
    Ok(frames)
}

/// The connection ended: the journal learns it and the report takes the replay counter.
pub(crate) fn on_disconnected(journal: &Mutex<Journal>, report: &mut DrainReport) {
    let mut j = lock(journal);
    j.disconnect();
    report.replayed_frames = j.ring().replayed_frames();
}

/// The keepalive interval in milliseconds: 0 turns the PING off; a non-zero interval below
/// 1 ms is 1 ms, not off.
fn keepalive_millis(keepalive: Duration) -> u64 {
    match keepalive.as_millis() {
        0 if !keepalive.is_zero() => 1,
        ms => u64::try_from(ms).unwrap_or(u64::MAX),
    }
}

/// After a send burst: the checkpoint due, whether the drain is done, and in how many
/// milliseconds a PING is due (`Some(0)`: now; `None`: none comes due as things stand).
pub(crate) fn between_sends(
    journal: &Mutex<Journal>,
    until: &impl Fn(&Journal) -> bool,
    keepalive: Duration,
    since_start: u64,
    last_sent: u64,
) -> Result<(bool, Option<u64>), DrainError> {
    let mut j = lock(journal);
    if j.is_closed() {
        return Ok((true, None));
    }
    // `sf_durability=periodic`: the checkpoint due now, if any.
    let _ = j.checkpoint(crate::journal::monotonic_millis())?;
    if j.acked_fsn() >= j.published_fsn() && until(&j) {
        return Ok((true, None));
    }
    let ping_in = j
        .ring()
        .keepalive_in(since_start, last_sent, keepalive_millis(keepalive));
    Ok((false, ping_in))
}

/// One binary message from the server, applied to the journal: `Ok(None)` goes on,
/// `Ok(Some(Retry))` ends the connection, an error ends the drain. An error status goes to
/// the configured [`ErrorSink`] once the journal is unlocked.
pub(crate) fn apply_status(
    journal: &Mutex<Journal>,
    c: &DrainConfig,
    bytes: &[u8],
    report: &mut DrainReport,
) -> Result<Option<Broke>, DrainError> {
    let status = decode_status(bytes).map_err(|e| {
        tracing::warn!(violation = %e, "sf server sent a malformed status frame");
        DrainError::Status(e)
    })?;
    let refused = |e: JournalError| match e {
        JournalError::Ack(a) => violation(a.to_string()),
        e => DrainError::Journal(e),
    };
    let (e, terminal) = {
        let mut j = lock(journal);
        if j.is_closed() {
            // Closed meanwhile (by `close`, from another thread): the drain is done, as at
            // its next look at the journal, and the status moves nothing (the close said
            // what was left unacknowledged). An error status still goes to the sink.
            drop(j);
            if let Status::Error {
                status,
                wire_seq,
                message,
            } = status
            {
                let e = ServerError {
                    status,
                    category: status.category(),
                    wire_seq,
                    fsn: None,
                    message,
                };
                report.errors_dropped += c.errors.deliver(&e);
            }
            tracing::debug!("sf status read after the journal closed, the drain ends");
            return Ok(Some(Broke::Done));
        }
        match status {
            Status::Ok { wire_seq, tables } => {
                j.ok(wire_seq, tables).map_err(refused)?;
                return Ok(None);
            }
            Status::DurableAck { tables } => {
                j.durable_ack(&tables).map_err(refused)?;
                return Ok(None);
            }
            Status::Error {
                status,
                wire_seq,
                message,
            } => {
                let e = j.reject_error(wire_seq, status, message).map_err(refused)?;
                let terminal = if e.category == Category::Retriable {
                    None
                } else {
                    Some(j.take_terminal().unwrap_or_else(|| e.clone()))
                };
                (e, terminal)
            }
            _ => return Err(violation("an unknown status".into())),
        }
    };
    report.errors_dropped += c.errors.deliver(&e);
    match terminal {
        None => {
            report.retriable_errors += 1;
            tracing::debug!(
                status = ?e.status,
                wire_seq = e.wire_seq,
                fsn = ?e.fsn,
                message = %e.message,
                "sf retriable error status, reconnecting"
            );
            report.last_retriable = Some(e);
            Ok(Some(Broke::Retry))
        }
        Some(t) => {
            tracing::warn!(
                status = ?e.status,
                wire_seq = e.wire_seq,
                fsn = ?e.fsn,
                message = %e.message,
                "sf terminal error status, the frame stays in the journal"
            );
            Err(DrainError::Terminal(t))
        }
    }
}

/// Bounds of an [`ErrorInbox`]: it holds at most `max_errors` errors and `max_bytes` bytes
/// (each error counts its message's bytes plus [`ERROR_OVERHEAD`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboxLimits {
    /// The most errors held.
    pub max_errors: usize,
    /// The most bytes held.
    pub max_bytes: usize,
}

impl Default for InboxLimits {
    /// 64 errors and 64 KiB.
    fn default() -> Self {
        Self {
            max_errors: 64,
            max_bytes: 64 << 10,
        }
    }
}

/// The bytes an error counts in an inbox besides its message.
pub const ERROR_OVERHEAD: usize = 32;

fn inbox_cost(e: &ServerError) -> usize {
    e.message.len() + ERROR_OVERHEAD
}

#[derive(Debug)]
struct InboxState {
    limits: InboxLimits,
    queue: VecDeque<ServerError>,
    bytes: usize,
    dropped: u64,
}

/// A bounded inbox of the server's error statuses (SF-44), shared between the drain that
/// fills it and the application that reads it (clones share one inbox). Past either bound
/// the oldest errors are dropped, and counted.
#[derive(Debug, Clone)]
pub struct ErrorInbox(Arc<Mutex<InboxState>>);

impl ErrorInbox {
    /// An empty inbox with these bounds.
    #[must_use]
    pub fn new(limits: InboxLimits) -> Self {
        Self(Arc::new(Mutex::new(InboxState {
            limits,
            queue: VecDeque::new(),
            bytes: 0,
            dropped: 0,
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, InboxState> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds an error, dropping the oldest while a bound is passed; returns how many were
    /// dropped. An error that cannot fit even alone is dropped (and counted) by itself,
    /// without dropping the older ones for it.
    pub fn push(&self, e: ServerError) -> u64 {
        let mut s = self.state();
        if inbox_cost(&e) > s.limits.max_bytes || s.limits.max_errors == 0 {
            s.dropped += 1;
            tracing::debug!("sf error larger than the inbox's bound, dropped");
            return 1;
        }
        s.bytes += inbox_cost(&e);
        s.queue.push_back(e);
        let mut dropped = 0;
        while s.queue.len() > s.limits.max_errors || s.bytes > s.limits.max_bytes {
            let Some(old) = s.queue.pop_front() else {
                break;
            };
            s.bytes -= inbox_cost(&old);
            dropped += 1;
        }
        s.dropped += dropped;
        if dropped > 0 {
            tracing::debug!(dropped, "sf error inbox full, the oldest errors dropped");
        }
        dropped
    }

    /// The oldest error held, taken out.
    #[must_use]
    pub fn pop(&self) -> Option<ServerError> {
        let mut s = self.state();
        let e = s.queue.pop_front()?;
        s.bytes -= inbox_cost(&e);
        Some(e)
    }

    /// Every error held, oldest first, taken out.
    #[must_use]
    pub fn take_all(&self) -> Vec<ServerError> {
        let mut s = self.state();
        s.bytes = 0;
        s.queue.drain(..).collect()
    }

    /// How many errors it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.state().queue.len()
    }

    /// Whether it holds no error.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.state().queue.is_empty()
    }

    /// The bytes its errors count now.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.state().bytes
    }

    /// How many errors it dropped since it was made.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.state().dropped
    }
}

/// What handles the server's error statuses: called once for each, from the drain's thread
/// or task, with the journal unlocked.
#[derive(Clone)]
pub struct ErrorHandler(Arc<HandlerFn>);

type HandlerFn = dyn Fn(&ServerError) + Send + Sync;

impl ErrorHandler {
    /// A handler calling `f`.
    pub fn new(f: impl Fn(&ServerError) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }
}

impl std::fmt::Debug for ErrorHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ErrorHandler(..)")
    }
}

/// Where a drain's error statuses go (SF-44): every one, retriable and terminal, as it
/// arrives.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ErrorSink {
    /// Each error is handed to the handler.
    Handler(ErrorHandler),
    /// Each error is kept in the bounded inbox, which drops the oldest.
    Inbox(ErrorInbox),
}

impl ErrorSink {
    /// The inbox, when errors go to one.
    #[must_use]
    pub fn inbox(&self) -> Option<&ErrorInbox> {
        match self {
            ErrorSink::Inbox(i) => Some(i),
            ErrorSink::Handler(_) => None,
        }
    }

    /// Hands `e` on; returns how many errors the inbox dropped for it.
    fn deliver(&self, e: &ServerError) -> u64 {
        match self {
            ErrorSink::Handler(h) => {
                (h.0)(e);
                0
            }
            ErrorSink::Inbox(i) => i.push(e.clone()),
        }
    }
}

impl PartialEq for ErrorSink {
    /// The same handler or the same inbox.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ErrorSink::Handler(a), ErrorSink::Handler(b)) => Arc::ptr_eq(&a.0, &b.0),
            (ErrorSink::Inbox(a), ErrorSink::Inbox(b)) => Arc::ptr_eq(&a.0, &b.0),
            _ => false,
        }
    }
}

impl Eq for ErrorSink {}

/// The error a drain ends with (both drains): a protocol violation by the server stops the
/// sender (PROTOCOL_VIOLATION is terminal and forced, SF-44), so the producer's next append
/// is refused naming it and a close does not wait for acknowledgements that cannot come.
pub(crate) fn ended(journal: &Mutex<Journal>, e: DrainError) -> DrainError {
    if matches!(e, DrainError::Status(_) | DrainError::Violation(_)) {
        lock(journal).stop_on_violation(e.to_string());
    }
    e
}

pub(crate) fn violation(what: String) -> DrainError {
    tracing::warn!(violation = %what, "sf server broke the protocol");
    DrainError::Violation(what)
}

/// Frames a connection sends before the journal's own after every upgrade (SF-9): the
/// reference client sends its symbol dictionary this way, so the delta-encoded frames that
/// follow can be read on a fresh connection. The QWP body stays opaque to the journal: the
/// caller's function builds the frames from the dictionary's symbols, in id order; each must
/// be a QWP message. Their wire sequences come first, and the server's acknowledgements of
/// them stand for no FSN.
#[derive(Clone)]
pub struct CatchUp(Arc<CatchUpFn>);

/// What builds catch-up frames from the dictionary's symbols.
type CatchUpFn = dyn Fn(&[String]) -> Vec<Vec<u8>> + Send + Sync;

impl CatchUp {
    /// Catch-up frames built by `f` from the symbols, in id order.
    pub fn new(f: impl Fn(&[String]) -> Vec<Vec<u8>> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// The catch-up frames for these symbols.
    #[must_use]
    pub fn frames(&self, symbols: &[String]) -> Vec<Vec<u8>> {
        (self.0)(symbols)
    }
}

impl std::fmt::Debug for CatchUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CatchUp(..)")
    }
}

impl PartialEq for CatchUp {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CatchUp {}

/// The blocking drain's TCP stream. Until the upgrade is done every read and write ends by
/// one bound for the whole upgrade, so a server trickling its answer a byte at a time cannot
/// hold the drain past its connect timeout (a socket timeout alone bounds each read). After
/// it, the reads of one wait for the server's messages end by one bound too, so a message
/// trickled in faster than the poll interval cannot hold the drain past its deadline: what
/// arrived of it is kept and the next wait goes on with it. Each send, and the close, ends
/// by one bound as well, so a server reading slowly, a little within each socket timeout,
/// cannot hold a large message's send past the connect timeout.
#[derive(Debug)]
struct Stream {
    tcp: TcpStream,
    upgrade_until: Option<Instant>,
    read_until: Option<Instant>,
    write_until: Option<Instant>,
}

/// The time left before `until`, if there is one; an error of kind `spent` once it passed.
fn left_of(until: Option<Instant>, spent: io::ErrorKind) -> io::Result<Option<Duration>> {
    let Some(until) = until else {
        return Ok(None);
    };
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(spent.into());
    }
    Ok(Some(left))
}

impl Stream {
    /// The wait of the read or write under way: the upgrade's while it lasts (`TimedOut` when
    /// spent), else `then`'s, which fails with `spent` once it passed.
    fn left(&self, then: Option<Instant>, spent: io::ErrorKind) -> io::Result<Option<Duration>> {
        match left_of(self.upgrade_until, io::ErrorKind::TimedOut)? {
            Some(left) => Ok(Some(left)),
            None => left_of(then, spent),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // A read whose wait is spent reads as nothing come yet.
        if let Some(left) = self.left(self.read_until, io::ErrorKind::WouldBlock)? {
            self.tcp.set_read_timeout(Some(left))?;
        }
        self.tcp.read(buf)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(left) = self.left(self.write_until, io::ErrorKind::TimedOut)? {
            self.tcp.set_write_timeout(Some(left))?;
        }
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
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
    /// too). Retriable failures reconnect after a back-off; terminal ones end the drain. A
    /// journal closed meanwhile (by [`close`]) ends it with `Ok`.
    pub fn run(
        &self,
        journal: &Mutex<Journal>,
        deadline: Instant,
        until: impl Fn(&Journal) -> bool,
    ) -> Result<DrainReport, DrainError> {
        let c = &self.config;
        check_durable_ack(journal, c)?;
        let mut report = DrainReport::default();
        let mut outage = Outage::default();
        while Outage::may_try(journal, deadline)? {
            match self.connect(deadline) {
                Ok((mut ws, max_batch)) => {
                    outage.connected(journal, &mut report);
                    let r = self.pump(&mut ws, max_batch, journal, deadline, &until, &mut report);
                    on_disconnected(journal, &mut report);
                    // The close's writes end by one bound.
                    ws.get_mut().write_until = Some(Instant::now() + wait_bound(c, deadline));
                    let _ = ws.close(None);
                    let _ = ws.flush();
                    match r {
                        Ok(Broke::Done) => return Ok(report),
                        Ok(Broke::Retry) => tracing::info!("sf connection lost"),
                        Err(e) => return Err(ended(journal, e)),
                    }
                }
                Err(Some(e)) => return Err(ended(journal, e)),
                Err(None) => {}
            }
            std::thread::sleep(outage.broke(journal, c, deadline, &mut report)?);
        }
        Ok(report)
    }

    /// One connection attempt: `Err(None)` is retriable, `Err(Some(_))` terminal. The TCP
    /// connect and the upgrade together end by one bound.
    fn connect(&self, deadline: Instant) -> Result<(WebSocket<Stream>, u64), Option<DrainError>> {
        let c = &self.config;
        let bound = wait_bound(c, deadline);
        let until = Instant::now() + bound;
        let tcp = TcpStream::connect_timeout(&c.addr, bound).map_err(|e| {
            tracing::debug!(error = %e, "sf connect failed");
        });
        let tcp = tcp.map_err(|()| None)?;
        let _ = tcp.set_nodelay(true);
        let stream = Stream {
            tcp,
            upgrade_until: Some(until),
            read_until: None,
            write_until: None,
        };
        let req = upgrade_request(c).map_err(Some)?;
        let (ws, status, headers) =
            match tungstenite::client::client_with_config(req, stream, Some(ws_config(c))) {
                Ok((ws, resp)) => (Some(ws), resp.status().as_u16(), headers_of(resp.headers())),
                Err(HandshakeError::Failure(tungstenite::Error::Http(resp))) => {
                    (None, resp.status().as_u16(), headers_of(resp.headers()))
                }
                Err(_) => return Err(None),
            };
        let negotiated = judge_upgrade(status, &headers, &c.request)?;
        let mut ws = ws.ok_or(None)?;
        ws.get_mut().upgrade_until = None;
        ws.get_ref()
            .tcp
            .set_read_timeout(Some(read_wait(c, false)))
            .map_err(|_| None)?;
        Ok((ws, negotiated.max_batch_size))
    }

    fn pump(
        &self,
        ws: &mut WebSocket<Stream>,
        max_batch: u64,
        journal: &Mutex<Journal>,
        deadline: Instant,
        until: &impl Fn(&Journal) -> bool,
        report: &mut DrainReport,
    ) -> Result<Broke, DrainError> {
        let c = &self.config;
        let mut p = Pump::new(on_connected(journal, c, max_batch)?);
        loop {
            // Each write of this burst waits at most the connect timeout, cut at the deadline.
            if ws
                .get_ref()
                .tcp
                .set_write_timeout(Some(wait_bound(c, deadline)))
                .is_err()
            {
                return Ok(Broke::Retry);
            }
            loop {
                match p.next(journal, deadline, max_batch)? {
                    Next::Send(bytes) => {
                        if !send(ws, Message::Binary(bytes.into()), c, deadline) {
                            return Ok(Broke::Retry);
                        }
                        p.sent(report);
                    }
                    Next::Pause => break,
                    Next::Done => return Ok(Broke::Done),
                }
            }
            let After::Read { ping, wait } = p.after_burst(journal, c, until, deadline)? else {
                return Ok(Broke::Done);
            };
            if ping {
                if !send(ws, Message::Ping(Vec::new().into()), c, deadline) {
                    return Ok(Broke::Retry);
                }
                p.pinged(report);
            }
            // After a full burst only the statuses already arrived are read; after a first
            // message, only those already arrived too.
            let mut nonblocking = wait.is_zero();
            if nonblocking && ws.get_mut().tcp.set_nonblocking(true).is_err() {
                return Ok(Broke::Retry);
            }
            // The whole wait, not each read of it, ends by the read wait.
            ws.get_mut().read_until = (!nonblocking).then(|| Instant::now() + wait);
            loop {
                let msg = match ws.read() {
                    Ok(m) => m,
                    Err(e) if timed_out(&e) => break,
                    Err(e) => return read_failed(e).map_or(Ok(Broke::Retry), Err),
                };
                if let Some(b) = on_message(journal, c, msg, report)? {
                    return Ok(b);
                }
                if !p.read_again() {
                    break;
                }
                if !nonblocking {
                    if ws.get_mut().tcp.set_nonblocking(true).is_err() {
                        return Ok(Broke::Retry);
                    }
                    ws.get_mut().read_until = None;
                    nonblocking = true;
                }
            }
            ws.get_mut().read_until = None;
            if nonblocking && ws.get_mut().tcp.set_nonblocking(false).is_err() {
                return Ok(Broke::Retry);
            }
        }
    }
}

/// Sends one message, its writes ending by one bound (the connect timeout, cut at the
/// deadline); `false` when the connection broke or the bound passed. The writes of the reads
/// that follow (a PONG) keep the socket's own timeout.
fn send(ws: &mut WebSocket<Stream>, m: Message, c: &DrainConfig, deadline: Instant) -> bool {
    ws.get_mut().write_until = Some(Instant::now() + wait_bound(c, deadline));
    let sent = ws.send(m).is_ok();
    ws.get_mut().write_until = None;
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sf_18_a_poll_interval_of_0_reads_with_a_1_ms_wait() {
        let mut c = DrainConfig::new("127.0.0.1:9".parse().expect("an address"));
        c.poll = Duration::ZERO;
        assert_eq!(read_wait(&c, false), Duration::from_millis(1));
        assert_eq!(read_wait(&c, true), Duration::ZERO);
        c.poll = Duration::from_millis(7);
        assert_eq!(read_wait(&c, false), Duration::from_millis(7));
        assert_eq!(read_wait(&c, true), Duration::ZERO);
    }

    #[test]
    fn sf_17_a_keepalive_of_0_is_off_and_one_below_1_ms_is_1_ms() {
        assert_eq!(keepalive_millis(Duration::ZERO), 0);
        assert_eq!(keepalive_millis(Duration::from_micros(1)), 1);
        assert_eq!(keepalive_millis(Duration::from_micros(999)), 1);
        assert_eq!(keepalive_millis(Duration::from_millis(200)), 200);
    }

    #[test]
    fn sf_27_a_status_read_after_the_journal_closed_ends_the_drain_as_done() {
        use sf_journal::status::encode_status;
        let c = DrainConfig::new("127.0.0.1:9".parse().expect("an address"));
        let mut j = Journal::memory(crate::JournalConfig::memory());
        for _ in 0..3 {
            let _ = j.append(b"QWP1 one", 0).expect("appended");
        }
        let _ = j.connect(0);
        while j.next_frame().expect("a frame").is_some() {}
        let CloseStep::Done(closed) = j.close(0, 0, 0).expect("closed") else {
            panic!("a skipped close ends at once");
        };
        assert_eq!(closed.unacknowledged, 0..3);
        let j = Mutex::new(j);
        let mut report = DrainReport::default();
        // A close by another thread while the drain read: what arrives then ends it with Ok,
        // as a journal closed meanwhile does, and moves nothing.
        let ok = encode_status(&Status::Ok {
            wire_seq: 2,
            tables: vec![("trades".into(), 1)],
        });
        let r = apply_status(&j, &c, &ok, &mut report);
        assert!(matches!(r, Ok(Some(Broke::Done))), "{:?}", r.err());
        let error = encode_status(&Status::Error {
            status: sf_journal::status::ErrorStatus::WriteError,
            wire_seq: 1,
            message: "late".into(),
        });
        let r = apply_status(&j, &c, &error, &mut report);
        assert!(matches!(r, Ok(Some(Broke::Done))), "{:?}", r.err());
        assert_eq!(lock(&j).acked_fsn(), -1);
        assert_eq!(report.retriable_errors, 0);
        // The error still reaches the application, naming no FSN.
        let late = c.errors.inbox().expect("an inbox").take_all();
        assert_eq!(late.len(), 1);
        assert_eq!((late[0].wire_seq, late[0].fsn), (1, None));
        assert_eq!(late[0].message, "late");
    }

    #[test]
    fn sf_44_late_error_statuses_after_close_that_overflow_the_inbox_are_counted() {
        use sf_journal::status::encode_status;
        let mut c = DrainConfig::new("127.0.0.1:9".parse().expect("an address"));
        c.errors = ErrorSink::Inbox(ErrorInbox::new(InboxLimits {
            max_errors: 1,
            max_bytes: 64 << 10,
        }));
        let mut j = Journal::memory(crate::JournalConfig::memory());
        let _ = j.append(b"QWP1 one", 0).expect("appended");
        let _ = j.connect(0);
        while j.next_frame().expect("a frame").is_some() {}
        let CloseStep::Done(_) = j.close(0, 0, 0).expect("closed") else {
            panic!("a skipped close ends at once");
        };
        let j = Mutex::new(j);
        let mut report = DrainReport::default();
        for message in ["first", "second", "third"] {
            let error = encode_status(&Status::Error {
                status: sf_journal::status::ErrorStatus::WriteError,
                wire_seq: 0,
                message: message.into(),
            });
            let r = apply_status(&j, &c, &error, &mut report);
            assert!(matches!(r, Ok(Some(Broke::Done))), "{:?}", r.err());
        }
        // One error held: each later one dropped the one before, and each drop is counted.
        assert_eq!(report.errors_dropped, 2);
        let held = c.errors.inbox().expect("an inbox").take_all();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].message, "third");
    }

    #[test]
    fn sf_18_a_first_back_off_of_0_still_pauses_and_doubles_up_to_the_longest() {
        let mut c = DrainConfig::new("127.0.0.1:9".parse().expect("an address"));
        c.backoff_initial = Duration::ZERO;
        c.backoff_max = Duration::from_millis(20);
        let mut pending = Journal::memory(crate::JournalConfig::memory());
        let _ = pending.append(b"QWP1 one", 0).expect("appended");
        let j = Mutex::new(pending);
        let mut report = DrainReport::default();
        let mut o = Outage::default();
        let far = Instant::now() + Duration::from_secs(60);
        let pauses: Vec<u128> = (0..7)
            .map(|_| {
                o.broke(&j, &c, far, &mut report)
                    .expect("no error")
                    .as_millis()
            })
            .collect();
        assert_eq!(pauses, [1, 2, 4, 8, 16, 20, 20]);
        // A longest pause of 0 too: 1 ms each time, never a reconnect without a pause.
        c.backoff_max = Duration::ZERO;
        let mut o = Outage::default();
        let p = o.broke(&j, &c, far, &mut report).expect("no error");
        assert_eq!(p, Duration::from_millis(1));
    }

    #[test]
    fn sf_18_the_back_off_doubles_from_the_first_up_to_the_longest_and_ends_at_the_deadline() {
        let mut c = DrainConfig::new("127.0.0.1:9".parse().expect("an address"));
        c.backoff_initial = Duration::from_millis(10);
        c.backoff_max = Duration::from_millis(50);
        let mut pending = Journal::memory(crate::JournalConfig::memory());
        let _ = pending.append(b"QWP1 one", 0).expect("appended");
        let j = Mutex::new(pending);
        let mut report = DrainReport::default();
        let mut o = Outage::default();
        let far = Instant::now() + Duration::from_secs(60);
        let pauses: Vec<u128> = (0..5)
            .map(|_| {
                o.broke(&j, &c, far, &mut report)
                    .expect("no error")
                    .as_millis()
            })
            .collect();
        assert_eq!(pauses, [10, 20, 40, 50, 50]);
        assert_eq!(report.breaks, 5);
        // A connection that broke with its frame unacknowledged does not end the outage.
        o.connected(&j, &mut report);
        let p = o.broke(&j, &c, far, &mut report).expect("no error");
        assert_eq!(p, Duration::from_millis(50));
        // One with nothing left to acknowledge does.
        let idle = Mutex::new(Journal::memory(crate::JournalConfig::memory()));
        o.connected(&idle, &mut report);
        let p = o.broke(&idle, &c, far, &mut report).expect("no error");
        assert_eq!(p, Duration::from_millis(10));
        // A deadline close by cuts it.
        let near = Instant::now() + Duration::from_millis(3);
        let p = o.broke(&idle, &c, near, &mut report).expect("no error");
        assert!(p <= Duration::from_millis(3), "{p:?}");
    }
}
