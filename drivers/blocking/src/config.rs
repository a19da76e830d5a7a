//! What a [`crate::Client`] is built from: seeds, credentials, how they are presented, and TLS
//! roots.

use nervix_protocol::client::{ClientConfig, LeaderUri};
use rustls_pki_types::CertificateDer;
use std::time::Duration;

use nervix_driver_support::config::{self, ConfigError};
use nervix_driver_support::credentials::{Credentials, WsAuth};
use nervix_driver_support::resolve::Resolver;

/// How a [`crate::Client`] connects.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// The engine's configuration: seeds, deadlines, back-off, limits. Redirects lead to the
    /// leader's `web_console_uri` (T-7).
    pub client: ClientConfig,
    /// Credentials presented on every connection.
    pub credentials: Credentials,
    /// Header or query parameter.
    pub auth: WsAuth,
    /// Certificates trusted as roots for `wss`. A server certificate is verified against the
    /// host name of the endpoint being connected, on every connection (T-2).
    pub roots: Vec<CertificateDer<'static>>,
    /// How host names are looked up: the system's resolver by default. Whatever address a
    /// name resolves to, a certificate is verified against the name itself (T-2).
    pub resolver: Resolver,
    /// The longest one write may wait for the socket to take its bytes (T-8). Default 10 s.
    pub write_timeout: Duration,
    /// The longest a session's thread blocks in one read before it looks for frames to write.
    /// It bounds the delay a frame waits before it is written. Default 2 ms.
    pub poll_interval: Duration,
    /// What a call of the application waits beyond the engine's own deadlines before it gives
    /// up with [`crate::Error::TimedOut`] (T-8). Default 5 s.
    pub grace: Duration,
    /// The client's journal (feature `journal`): off by default, when nothing outlives the
    /// process. See [`Config::with_journal`].
    #[cfg(feature = "journal")]
    pub journal: Option<nervix_driver_support::journal::JournalConfig>,
}

impl Config {
    /// A configuration with these console seeds (checked as T-2 server addresses) and
    /// credentials, presented in the `Authorization` header, and defaults elsewhere.
    pub fn new(seeds: &[&str], credentials: Credentials) -> Result<Self, ConfigError> {
        let mut client = config::client(seeds, &credentials)?;
        client.leader_uri = LeaderUri::WebConsole;
        Ok(Self {
            client,
            credentials,
            auth: WsAuth::Header,
            roots: Vec::new(),
            resolver: Resolver::system(),
            write_timeout: Duration::from_secs(10),
            poll_interval: Duration::from_millis(2),
            grace: Duration::from_secs(5),
            #[cfg(feature = "journal")]
            journal: None,
        })
    }

    /// Presents the credentials this way.
    pub fn with_auth(mut self, auth: WsAuth) -> Self {
        self.auth = auth;
        self
    }

    /// The longest an application call waits for the driver: the engine's deadlines of
    /// opening a session and of the call, and the grace.
    pub(crate) fn call_bound(&self, deadline: Option<Duration>) -> Duration {
        self.client.connect_timeout + deadline.unwrap_or(self.client.call_timeout) + self.grace
    }
}

nervix_driver_support::config_builders!(Config);
