//! The drain over QWP WebSocket on tokio (feature `tokio`), with the behaviour of the blocking
//! [`Drain`](crate::drain::Drain): the same upgrade headers and response checks, catch-up
//! frames first, the journal's frames in FSN order (one unfragmented binary message each), the
//! status frames applied, the idle PING of durable-ack mode, and on any break a reconnect after
//! a back-off that doubles, replaying from the first unacknowledged frame. Every wait (the
//! connect, the upgrade, each send, each read, the back-off, the close) ends by the drain's
//! deadline.
//!
//! The TCP connection is opened with the shared dialling of `sansio-kit`; the upgrade goes
//! through tokio-tungstenite directly, because the drain reads the response's headers
//! (`X-QWP-Version`, `X-QWP-Durable-Ack`, `X-QuestDB-Role`). The journal is shared behind a
//! standard mutex that is never held across an await.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use sansio_kit::backoff::Backoff;
use sansio_kit::dial::Target;
use sansio_kit::resolve::Resolver;
use sansio_kit::tokio::{open_by, Io};
use sf_journal::ring::Link;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

use crate::drain::{
    apply_status, between_sends, check_durable_ack, check_frame, close_step, deadline_passed,
    epoch_millis, headers_of, judge_upgrade, lock, next_frame, on_connected, on_disconnected,
    upgrade_request, violation, ws_config, Broke, DrainConfig, DrainError, DrainReport, SEND_BURST,
};
use crate::journal::{Closed, Journal, JournalError};

type Ws = WebSocketStream<Io>;

/// Closes a journal shared with a running [`AsyncDrain`] (SF-26 to SF-28), as the blocking
/// [`close`](crate::drain::close) does and with the same bound: waits up to `timeout_millis`
/// for everything published to be acknowledged, looking every 2 ms without holding the
/// journal, and returns as soon as it is; on timeout the unacknowledged FSNs are reported (on
/// disk in SF mode, lost in memory mode); 0 or below skips the wait. The slot lock is released
/// and a terminal error not yet delivered is handed back.
pub async fn close(journal: &Mutex<Journal>, timeout_millis: i64) -> Result<Closed, JournalError> {
    let started = crate::journal::monotonic_millis();
    loop {
        match close_step(journal, started, timeout_millis)? {
            Ok(closed) => return Ok(closed),
            Err(pause) => tokio::time::sleep(pause).await,
        }
    }
}

/// An async drain of one journal to one server.
#[derive(Debug, Clone)]
pub struct AsyncDrain {
    config: DrainConfig,
}

/// `deadline` on tokio's clock.
fn on_tokio(deadline: Instant) -> tokio::time::Instant {
    tokio::time::Instant::from_std(deadline)
}

impl AsyncDrain {
    /// A drain with this configuration.
    #[must_use]
    pub fn new(config: DrainConfig) -> Self {
        Self { config }
    }

    /// Drains until everything published is acknowledged and `until` holds for the journal,
    /// or `deadline`; as [`Drain::run`](crate::drain::Drain::run). A producer may append
    /// meanwhile, from a task or a thread.
    pub async fn run(
        &self,
        journal: &Mutex<Journal>,
        deadline: Instant,
        until: impl Fn(&Journal) -> bool,
    ) -> Result<DrainReport, DrainError> {
        let c = &self.config;
        check_durable_ack(journal, c)?;
        let backoff = Backoff::new(c.backoff_initial, c.backoff_max);
        let mut report = DrainReport::default();
        let mut attempts = 0u32;
        let mut outage_start = None;
        loop {
            if lock(journal).is_closed() {
                return Ok(report);
            }
            if Instant::now() >= deadline {
                return Err(deadline_passed(journal));
            }
            match self.connect(deadline).await {
                Ok((mut ws, max_batch)) => {
                    attempts = 0;
                    outage_start = None;
                    report.connections += 1;
                    let r = self
                        .pump(&mut ws, max_batch, journal, deadline, &until, &mut report)
                        .await;
                    on_disconnected(journal, &mut report);
                    let _ = tokio::time::timeout_at(on_tokio(deadline), ws.close(None)).await;
                    match r {
                        Ok(Broke::Done) => return Ok(report),
                        Ok(Broke::Retry) => tracing::info!("sf connection lost"),
                        Err(e) => return Err(e),
                    }
                }
                Err(Some(e)) => return Err(e),
                Err(None) => {}
            }
            report.breaks += 1;
            attempts += 1;
            let start = *outage_start.get_or_insert_with(epoch_millis);
            {
                let mut j = lock(journal);
                j.set_link(Link::Reconnecting {
                    attempts,
                    outage_start_millis: start,
                });
                // `sf_durability=periodic` goes on while the wire is down (SF-36).
                let _ = j.checkpoint(crate::journal::monotonic_millis())?;
            }
            let wait = backoff
                .pause(attempts)
                .min(deadline.saturating_duration_since(Instant::now()));
            tracing::debug!(
                attempts,
                backoff_millis = wait.as_millis() as u64,
                "sf connection lost, backing off"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// One connection attempt: `Err(None)` is retriable, `Err(Some(_))` terminal.
    async fn connect(&self, deadline: Instant) -> Result<(Ws, u64), Option<DrainError>> {
        let c = &self.config;
        let bound = c
            .connect_timeout
            .min(deadline.saturating_duration_since(Instant::now()))
            .max(Duration::from_millis(1));
        let until = tokio::time::Instant::now() + bound;
        let target = Target::new(c.addr.ip().to_string(), c.addr.port(), false);
        let io = open_by(until, &target, &Resolver::default(), None)
            .await
            .map_err(|e| {
                tracing::debug!(error = %e, "sf connect failed");
                None
            })?;
        let req = upgrade_request(c).map_err(Some)?;
        let handshake = tokio_tungstenite::client_async_with_config(req, io, Some(ws_config(c)));
        let (ws, status, headers) = match tokio::time::timeout_at(until, handshake).await {
            Ok(Ok((ws, resp))) => (Some(ws), resp.status().as_u16(), headers_of(resp.headers())),
            Ok(Err(tungstenite::Error::Http(resp))) => {
                (None, resp.status().as_u16(), headers_of(resp.headers()))
            }
            Ok(Err(_)) | Err(_) => return Err(None),
        };
        let negotiated = judge_upgrade(status, &headers, &c.request)?;
        Ok((ws.ok_or(None)?, negotiated.max_batch_size))
    }

    /// Sends one message, bounded by the connect timeout and the deadline; `false` when the
    /// connection broke or the bound passed.
    async fn send(&self, ws: &mut Ws, m: Message, deadline: Instant) -> bool {
        let bound = self
            .config
            .connect_timeout
            .min(deadline.saturating_duration_since(Instant::now()));
        matches!(tokio::time::timeout(bound, ws.send(m)).await, Ok(Ok(())))
    }

    async fn pump(
        &self,
        ws: &mut Ws,
        max_batch: u64,
        journal: &Mutex<Journal>,
        deadline: Instant,
        until: &impl Fn(&Journal) -> bool,
        report: &mut DrainReport,
    ) -> Result<Broke, DrainError> {
        let started = Instant::now();
        let millis = |t: Instant| t.duration_since(started).as_millis() as u64;
        let mut last_sent = Instant::now();
        for f in on_connected(journal, &self.config, max_batch)? {
            if !self.send(ws, Message::Binary(f.into()), deadline).await {
                return Ok(Broke::Retry);
            }
            report.catch_up_frames += 1;
        }
        loop {
            let mut more = false;
            for sent in 0..=SEND_BURST {
                if Instant::now() >= deadline {
                    return Err(deadline_passed(journal));
                }
                if sent == SEND_BURST {
                    more = true;
                    break;
                }
                let next = match next_frame(journal) {
                    Ok(n) => n,
                    Err(None) => return Ok(Broke::Done),
                    Err(Some(e)) => return Err(e),
                };
                let Some((fsn, bytes)) = next else { break };
                check_frame(fsn, &bytes, max_batch)?;
                if !self.send(ws, Message::Binary(bytes.into()), deadline).await {
                    return Ok(Broke::Retry);
                }
                report.frames_sent += 1;
                last_sent = Instant::now();
            }
            let now = Instant::now();
            let (done, ping) = between_sends(
                journal,
                until,
                self.config.keepalive,
                millis(now),
                millis(last_sent),
            )?;
            if done {
                return Ok(Broke::Done);
            }
            if ping {
                if !self
                    .send(ws, Message::Ping(Vec::new().into()), deadline)
                    .await
                {
                    return Ok(Broke::Retry);
                }
                report.pings += 1;
                last_sent = now;
            }
            if Instant::now() >= deadline {
                return Err(deadline_passed(journal));
            }
            // With frames still to send, only the statuses already arrived are read.
            let wait = if more {
                Duration::ZERO
            } else {
                self.config.poll
            };
            let read = match tokio::time::timeout(wait, ws.next()).await {
                Err(_) => continue,
                Ok(None) => return Ok(Broke::Retry),
                Ok(Some(r)) => r,
            };
            let msg = match read {
                Ok(m) => m,
                Err(tungstenite::Error::Capacity(e)) => {
                    return Err(violation(format!("server message: {e}")))
                }
                Err(_) => return Ok(Broke::Retry),
            };
            let bytes = match msg {
                Message::Binary(b) => b,
                Message::Text(_) => return Err(violation("a text message".into())),
                Message::Close(_) => return Ok(Broke::Retry),
                _ => continue,
            };
            if let Some(b) = apply_status(journal, &self.config, &bytes, report)? {
                return Ok(b);
            }
        }
    }
}
