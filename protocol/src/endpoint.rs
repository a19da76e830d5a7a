//! Server addresses (T-2) and the bounded set of endpoints a client learns (D-3).

use std::collections::VecDeque;
use std::fmt;

/// A server address: an `http` or `https` origin whose path is `/`, with no query, fragment or
/// user information, as an advertised `grpc_uri` is (T-2).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint(String);

/// Why a string is not an acceptable server address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EndpointError {
    /// Not `http://` or `https://`.
    #[error("a server address is an http or https origin")]
    Scheme,
    /// No host.
    #[error("a server address names a host")]
    NoHost,
    /// User information, a query or a fragment.
    #[error("a server address has no user information, query or fragment")]
    Extra,
    /// A path other than `/`.
    #[error("a server address has the path /")]
    Path,
}

impl Endpoint {
    /// Checks `s` as a server address.
    pub fn parse(s: &str) -> Result<Self, EndpointError> {
        let rest = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
            .ok_or(EndpointError::Scheme)?;
        if rest.contains(['?', '#', '@']) {
            return Err(EndpointError::Extra);
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(EndpointError::NoHost);
        }
        if path != "/" {
            return Err(EndpointError::Path);
        }
        let scheme = if s.starts_with("https://") {
            "https"
        } else {
            "http"
        };
        Ok(Self(format!("{scheme}://{authority}/")))
    }

    /// Whether the address uses TLS.
    pub fn is_https(&self) -> bool {
        self.0.starts_with("https://")
    }

    /// The address as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The authority (host and port) a TLS connection verifies against (T-2).
    pub fn authority(&self) -> &str {
        let rest = self.0.split_once("://").map_or("", |(_, r)| r);
        rest.trim_end_matches('/')
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Endpoint({})", self.0)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The seeds a client was configured with and a bounded set of endpoints it learned from
/// redirects and `LeadershipObserved` (D-3). It never makes up an address (D-2).
#[derive(Debug, Clone)]
pub struct Endpoints {
    seeds: Vec<Endpoint>,
    learned: VecDeque<Endpoint>,
    capacity: usize,
    leader: Option<Endpoint>,
    https_only: bool,
    cursor: usize,
}

impl Endpoints {
    /// Seeds, and the most learned endpoints to keep. A client seeded with https only never
    /// follows a redirect or seed to http (T-2).
    pub fn new(seeds: Vec<Endpoint>, capacity: usize) -> Self {
        let https_only = !seeds.is_empty() && seeds.iter().all(Endpoint::is_https);
        Self {
            seeds,
            learned: VecDeque::new(),
            capacity: capacity.max(1),
            leader: None,
            https_only,
            cursor: 0,
        }
    }

    /// Learns `e`, named as the leader when `leader` is true. Refuses an http address when
    /// the client started over https.
    pub fn learn(&mut self, e: Endpoint, leader: bool) -> bool {
        if self.https_only && !e.is_https() {
            return false;
        }
        if !self.seeds.contains(&e) && !self.learned.contains(&e) {
            if self.learned.len() == self.capacity {
                self.learned.pop_front();
            }
            self.learned.push_back(e.clone());
            // The newest learned endpoint is tried first.
            self.cursor = 0;
        }
        if leader {
            self.leader = Some(e);
        }
        true
    }

    /// The learned endpoints, oldest first.
    pub fn learned(&self) -> impl Iterator<Item = &Endpoint> {
        self.learned.iter()
    }

    /// The endpoint to try next: the named leader first, then learned ones and seeds in turn.
    pub fn next_to_try(&mut self) -> Option<Endpoint> {
        if let Some(l) = self.leader.take() {
            return Some(l);
        }
        let all: Vec<&Endpoint> = self.learned.iter().rev().chain(self.seeds.iter()).collect();
        if all.is_empty() {
            return None;
        }
        let e = all[self.cursor % all.len()].clone();
        self.cursor = self.cursor.wrapping_add(1);
        Some(e)
    }
}
