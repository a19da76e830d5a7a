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
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use sansio_kit::dial::Target;
use sansio_kit::resolve::Resolver;
use sansio_kit::tokio::{open_by, Io};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

use crate::drain::{
    check_durable_ack, close_step, ended, headers_of, judge_upgrade, on_connected, on_disconnected,
    on_message, read_failed, upgrade_request, wait_bound, ws_config, After, Broke, DrainConfig,
    DrainError, DrainReport, Next, Outage, Pump,
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
        let mut report = DrainReport::default();
        let mut outage = Outage::default();
        while Outage::may_try(journal, deadline)? {
            match self.connect(deadline).await {
                Ok((mut ws, max_batch)) => {
                    outage.connected(journal, &mut report);
                    let r = self
                        .pump(&mut ws, max_batch, journal, deadline, &until, &mut report)
                        .await;
                    on_disconnected(journal, &mut report);
                    let _ = tokio::time::timeout(wait_bound(c, deadline), ws.close(None)).await;
                    match r {
                        Ok(Broke::Done) => return Ok(report),
                        Ok(Broke::Retry) => tracing::info!("sf connection lost"),
                        Err(e) => return Err(ended(journal, e)),
                    }
                }
                Err(Some(e)) => return Err(ended(journal, e)),
                Err(None) => {}
            }
            tokio::time::sleep(outage.broke(journal, c, deadline, &mut report)?).await;
        }
        Ok(report)
    }

    /// One connection attempt: `Err(None)` is retriable, `Err(Some(_))` terminal.
    async fn connect(&self, deadline: Instant) -> Result<(Ws, u64), Option<DrainError>> {
        let c = &self.config;
        let until = tokio::time::Instant::now() + wait_bound(c, deadline);
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
        let bound = wait_bound(&self.config, deadline);
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
        let c = &self.config;
        let mut p = Pump::new(on_connected(journal, c, max_batch)?);
        loop {
            loop {
                match p.next(journal, deadline, max_batch)? {
                    Next::Send(bytes) => {
                        if !self.send(ws, Message::Binary(bytes.into()), deadline).await {
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
                if !self
                    .send(ws, Message::Ping(Vec::new().into()), deadline)
                    .await
                {
                    return Ok(Broke::Retry);
                }
                p.pinged(report);
            }
            // After a first message, only those already arrived are read.
            let mut wait = wait;
            loop {
                let msg = match tokio::time::timeout(wait, ws.next()).await {
                    Err(_) => break,
                    Ok(None) => return Ok(Broke::Retry),
                    Ok(Some(Ok(m))) => m,
                    Ok(Some(Err(e))) => return read_failed(e).map_or(Ok(Broke::Retry), Err),
                };
                if let Some(b) = on_message(journal, c, msg, report)? {
                    return Ok(b);
                }
                if !p.read_again() {
                    break;
                }
                wait = std::time::Duration::ZERO;
            }
        }
    }
}
