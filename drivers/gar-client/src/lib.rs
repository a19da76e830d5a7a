//! The GAR client over WebSocket, on tokio ([`tokio`]) or on std threads ([`blocking`]).
//!
//! Both flavours drive the sans-IO engine of `gar-client` the same way: the upgrade asks for
//! the subprotocol `gar-protocol` at the configured path with the token as a `token=` query
//! (a 401 ends the attempt as `unauthorized`), every text message goes to the engine, a binary
//! one is refused by it, the close code is handed over for the engine to judge, and the
//! engine's timers (heartbeats, liveness) run on the driver's clock. One connection is one
//! session: nothing reconnects inside the client; the application connects again if it wants.
//!
//! Every wait has a deadline: opening the connection and the upgrade ([`Config::connect_timeout`]),
//! each write to the socket ([`Config::write_timeout`]), the engine's own timers, and the
//! waits of the application calls ([`Config::call_timeout`]).
//!
//! The token never reaches a log line or a `Debug` output: URLs are logged with it replaced
//! by `***`, and error texts are scrubbed of it.

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use gar_client::codec::write::{Ownership, OwnershipAction};
pub use gar_client::{
    CallError, CompareResult, Event, Limits, Record, RecordId, ServerError, Stats, Status,
    StopReason, Subscribe, Violation,
};
pub use sansio_kit::resolve::Resolver;
pub use serde_json::Value;

pub mod blocking;
mod core;
pub mod log;
pub mod tokio;

/// How a client connects, and what it tells the server about itself.
#[derive(Clone)]
pub struct Config {
    /// `ws://host:port/path` or `wss://...`, without the token (a query of its own is kept).
    pub url: String,
    /// The token sent as the `token=` query of the upgrade; never logged.
    pub token: Option<String>,
    /// The engine's settings: the heartbeat interval, who the client is, the bounds.
    pub engine: gar_client::Config,
    /// How long the lookup, TCP, TLS and the upgrade together may take.
    pub connect_timeout: Duration,
    /// How long one write to the socket may take; past it the session ends (`disconnect`).
    pub write_timeout: Duration,
    /// How long an application call waits for its messages to be written, and
    /// [`tokio::Client::echo_barrier`] for its answer.
    pub call_timeout: Duration,
    /// The resolver host names are looked up with.
    pub resolver: Resolver,
    /// The TLS configuration for a `wss://` URL (refused without one).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The connection's identity; None draws a fresh one per connection.
    pub uuid: Option<(u64, u64)>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("url", &redact_token_params(&self.url))
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("engine", &self.engine)
            .field("connect_timeout", &self.connect_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("tls", &self.tls.is_some())
            .field("uuid", &self.uuid)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Defaults for `url`: no token, the engine's defaults, 10 s to connect, 10 s per write,
    /// 30 s per call, the system resolver, no TLS, a fresh uuid per connection.
    #[must_use]
    pub fn new(url: impl Into<String>) -> Self {
        Config {
            url: url.into(),
            token: None,
            engine: gar_client::Config::default(),
            connect_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(30),
            resolver: Resolver::system(),
            tls: None,
            uuid: None,
        }
    }

    /// The URL of the upgrade, the token query included: for the handshake only.
    fn upgrade_url(&self) -> String {
        match &self.token {
            None => self.url.clone(),
            Some(t) => {
                let sep = if self.url.contains('?') { '&' } else { '?' };
                format!(
                    "{}{sep}token={}",
                    self.url,
                    sansio_kit::basic::percent_encode(t)
                )
            }
        }
    }

    /// The URL as it may be logged: the token, if any, as `***`, and so is the value of a
    /// `token=` query the URL carries itself.
    #[must_use]
    pub fn redacted_url(&self) -> String {
        let url = redact_token_params(&self.url);
        match &self.token {
            None => url,
            Some(_) => {
                let sep = if url.contains('?') { '&' } else { '?' };
                format!("{url}{sep}token=***")
            }
        }
    }

    /// `text` with every spelling of the token in it (as given and percent-encoded), and the
    /// value of every `token=` query of the URL, replaced.
    fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        if let Some(t) = self.token.as_deref().filter(|t| !t.is_empty()) {
            out = out.replace(t, "***");
            out = out.replace(&sansio_kit::basic::percent_encode(t), "***");
        }
        for t in token_params(&self.url) {
            out = out.replace(t, "***");
        }
        out
    }

    /// This connection's uuid: the configured one, or a fresh draw.
    fn uuid(&self) -> (u64, u64) {
        self.uuid.unwrap_or_else(fresh_uuid)
    }
}

/// The query of `url` (between `?` and any `#`), and where it starts.
fn query_of(url: &str) -> Option<(usize, &str)> {
    let start = url.find('?')? + 1;
    let rest = &url[start..];
    Some((start, rest.split_once('#').map_or(rest, |(q, _)| q)))
}

/// The values of the `token=` parameters of `url`'s query that are not empty.
fn token_params(url: &str) -> Vec<&str> {
    query_of(url).map_or_else(Vec::new, |(_, q)| {
        q.split('&')
            .filter_map(|p| p.strip_prefix("token="))
            .filter(|v| !v.is_empty())
            .collect()
    })
}

/// `url` with the value of every `token=` parameter of its query as `***`.
fn redact_token_params(url: &str) -> String {
    let Some((start, q)) = query_of(url) else {
        return url.to_string();
    };
    let query: Vec<&str> = q
        .split('&')
        .map(|p| {
            if p.starts_with("token=") {
                "token=***"
            } else {
                p
            }
        })
        .collect();
    format!(
        "{}{}{}",
        &url[..start],
        query.join("&"),
        &url[start + q.len()..]
    )
}

/// A fresh 128-bit identity: the standard library's per-process random hash keys, mixed with
/// the time and a counter, so two connections of one process never share one.
fn fresh_uuid() -> (u64, u64) {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let draw = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u64(n);
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.finish()
    };
    (draw(1), draw(2))
}

/// Why [`tokio::Client::connect`] or [`blocking::Client::connect`] gave no client: the stop
/// reason the session would have ended with, and what happened (the token scrubbed from it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason:?}: {detail}")]
pub struct ConnectError {
    /// [`StopReason::Unauthorized`] for a 401 at the upgrade (do not retry with the same
    /// token), [`StopReason::ConnectFailed`] otherwise.
    pub reason: StopReason,
    /// What failed.
    pub detail: String,
}

/// Why an application call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine refused the call (an unknown id, a full queue, ...).
    #[error(transparent)]
    Call(#[from] CallError),
    /// The session has ended (with this reason, once known); connect again for a new one.
    #[error("the session has ended ({0:?})")]
    Stopped(Option<StopReason>),
    /// The call's wait passed [`Config::call_timeout`].
    #[error("the call's deadline passed")]
    TimedOut,
}

/// The clock of one connection: milliseconds since it was opened.
#[derive(Debug, Clone, Copy)]
struct Clock(Instant);

impl Clock {
    fn now(self) -> u64 {
        u64::try_from(self.0.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The wall clock in milliseconds since 1970 (UTC), which heartbeats carry; 0 when the
    /// system clock is before 1970.
    fn epoch_ms() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// The message and frame limit of the WebSocket: the engine's own, so a message the engine
/// would refuse is refused by the transport before it is read whole.
fn ws_limit(c: &Config) -> usize {
    c.engine.limits.max_message_bytes
}
