//! What a [`crate::Client`] is built from: seeds, credentials, how they are presented, and TLS
//! roots.

use nervix_protocol::client::{ClientConfig, LeaderUri};
use nervix_protocol::endpoint::Endpoint;
use rustls_pki_types::CertificateDer;
use std::time::Duration;

pub use nervix_driver_support::resolve::{HostsResolver, Resolve, Resolver};

pub use nervix_driver_support::credentials::{
    percent_encode, Credentials, CredentialsError, WsAuth,
};

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
}

/// Why a configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A seed is not a server address (T-2).
    #[error("seed `{seed}` is not a server address: {why}")]
    Seed {
        /// The seed as given.
        seed: String,
        /// Why.
        why: String,
    },
    /// No seed at all.
    #[error("no seed endpoint")]
    NoSeed,
    /// An https seed and no TLS roots to verify it with.
    #[error("https seeds need TLS roots")]
    NoRoots,
    /// The credentials cannot be presented as given: a user name holding `:` would be sent
    /// as another identity (T-4).
    #[error("credentials: {0}")]
    Credentials(#[from] CredentialsError),
}

impl Config {
    /// A configuration with these console seeds (checked as T-2 server addresses) and
    /// credentials, presented in the `Authorization` header, and defaults elsewhere.
    pub fn new(seeds: &[&str], credentials: Credentials) -> Result<Self, ConfigError> {
        let mut parsed = Vec::new();
        for s in seeds {
            parsed.push(Endpoint::parse(s).map_err(|e| ConfigError::Seed {
                seed: (*s).to_string(),
                why: e.to_string(),
            })?);
        }
        if parsed.is_empty() {
            return Err(ConfigError::NoSeed);
        }
        credentials.check()?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let mut client = ClientConfig::new(parsed, seed);
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
        })
    }

    /// Presents the credentials this way.
    pub fn with_auth(mut self, auth: WsAuth) -> Self {
        self.auth = auth;
        self
    }

    /// Looks host names up with `resolver` instead of the system's (T-2).
    pub fn with_resolver(mut self, resolver: impl Resolve) -> Self {
        self.resolver = Resolver::new(resolver);
        self
    }

    /// Adds a trusted root certificate (DER).
    pub fn with_root(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.roots.push(CertificateDer::from(der.into()));
        self
    }

    /// Sets the deadline of a call that names none (D-4) and of opening a session.
    pub fn with_timeouts(mut self, call: Duration, connect: Duration) -> Self {
        self.client.call_timeout = call;
        self.client.connect_timeout = connect;
        self
    }

    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        if self.client.seeds.is_empty() {
            return Err(ConfigError::NoSeed);
        }
        self.credentials.check()?;
        if self.client.seeds.iter().any(Endpoint::is_https) && self.roots.is_empty() {
            return Err(ConfigError::NoRoots);
        }
        Ok(())
    }

    /// The longest an application call waits for the driver: the engine's deadlines of
    /// opening a session and of the call, and the grace.
    pub(crate) fn call_bound(&self, deadline: Option<Duration>) -> Duration {
        self.client.connect_timeout + deadline.unwrap_or(self.client.call_timeout) + self.grace
    }
}
