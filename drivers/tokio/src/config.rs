//! What a [`crate::Client`] is built from: seeds, credentials, transport and TLS roots.

use nervix_protocol::client::{ClientConfig, LeaderUri};
use rustls_pki_types::CertificateDer;
use std::time::Duration;

use nervix_driver_support::config::{self, ConfigError};
use nervix_driver_support::credentials::{Credentials, WsAuth};
use nervix_driver_support::resolve::Resolver;

/// The transport of every session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// The bidirectional gRPC call `/nervix.session.Session/Exchange` over HTTP/2 (T-1).
    Grpc,
    /// The WebSocket console `/console/ws` (T-3); redirects lead to `web_console_uri` (T-7).
    WebSocket(WsAuth),
}

/// How a [`crate::Client`] connects.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// The engine's configuration: seeds, deadlines, back-off, limits.
    pub client: ClientConfig,
    /// Credentials sent on every call.
    pub credentials: Credentials,
    /// gRPC or WebSocket.
    pub transport: Transport,
    /// Certificates trusted as roots for https and wss. Server certificates are verified
    /// against the host name of the endpoint being connected, every time (T-2).
    pub roots: Vec<CertificateDer<'static>>,
    /// How host names are looked up: the system's resolver by default. Whatever address a
    /// name resolves to, a certificate is verified against the name itself (T-2).
    pub resolver: Resolver,
    /// The longest a write may wait for the transport to take a frame (T-8). Default 10 s.
    pub write_timeout: Duration,
    /// The client's journal (feature `journal`): off by default, when nothing outlives the
    /// process. See [`Config::with_journal`].
    #[cfg(feature = "journal")]
    pub journal: Option<nervix_driver_support::journal::JournalConfig>,
}

impl Config {
    /// A configuration with these seeds (checked as T-2 server addresses), credentials and
    /// transport, and defaults elsewhere.
    pub fn new(
        seeds: &[&str],
        credentials: Credentials,
        transport: Transport,
    ) -> Result<Self, ConfigError> {
        let mut client = config::client(seeds, &credentials)?;
        if matches!(transport, Transport::WebSocket(_)) {
            client.leader_uri = LeaderUri::WebConsole;
        }
        Ok(Self {
            client,
            credentials,
            transport,
            roots: Vec::new(),
            resolver: Resolver::system(),
            write_timeout: Duration::from_secs(10),
            #[cfg(feature = "journal")]
            journal: None,
        })
    }
}

nervix_driver_support::config_builders!(Config);
