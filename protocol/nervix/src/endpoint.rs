//! Server addresses (T-2) and the bounded set of endpoints a client learns (D-3).

use std::collections::VecDeque;
use std::fmt;

/// A server address: an `http` or `https` origin whose path is `/`, with no query, fragment or
/// user information, as an advertised `grpc_uri` is (T-2).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint(String);

/// Why a string is not an acceptable server address (T-2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EndpointError {
    /// Not `http://` or `https://` (lowercase).
    #[error("a server address is an http or https origin")]
    Scheme,
    /// A control character (CR, LF, NUL, DEL, ...) or whitespace somewhere in the address.
    #[error("a server address holds no control character or whitespace")]
    ControlOrWhitespace,
    /// User information (`user@`) before the host.
    #[error("a server address has no user information")]
    UserInfo,
    /// A query (`?`).
    #[error("a server address has no query")]
    Query,
    /// A fragment (`#`).
    #[error("a server address has no fragment")]
    Fragment,
    /// A path other than `/` (or none).
    #[error("a server address has the path /")]
    Path,
    /// No host.
    #[error("a server address names a host")]
    NoHost,
    /// A `[` without its `]`, or a bracket outside an IPv6 literal.
    #[error("a server address has an unbalanced bracket")]
    UnbalancedBracket,
    /// A host that is not a registered name, an IPv4 address or a bracketed IPv6 address.
    #[error(
        "a server address's host is a registered name, an IPv4 address or a bracketed IPv6 address"
    )]
    Host,
    /// A port that is not a number from 1 to 65535 written without leading zeros, or more
    /// than one port.
    #[error("a server address's port is one number from 1 to 65535")]
    Port,
}

impl Endpoint {
    /// Checks `s` as a server address (T-2) and returns it in normal form: lowercase, with the
    /// path `/`.
    ///
    /// Accepted: `http://` or `https://`, then a host and an optional `:port`, then nothing or
    /// `/`. The host is an IPv4 address (four decimal octets), an IPv6 address in brackets (no
    /// zone), or a registered name: one or more unreserved characters, sub-delimiters or
    /// percent-encoded octets (RFC 3986); a name of digits and dots only must be an IPv4
    /// address. The port is 1 to 65535. No control character or whitespace may appear
    /// anywhere, and user information, a query, a fragment or any other path is refused.
    pub fn parse(s: &str) -> Result<Self, EndpointError> {
        if s.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(EndpointError::ControlOrWhitespace);
        }
        let (scheme, rest) = if let Some(r) = s.strip_prefix("https://") {
            ("https", r)
        } else if let Some(r) = s.strip_prefix("http://") {
            ("http", r)
        } else {
            return Err(EndpointError::Scheme);
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err(EndpointError::UserInfo);
        }
        if let Some(i) = tail.find(['?', '#']) {
            return Err(if tail[i..].starts_with('?') {
                EndpointError::Query
            } else {
                EndpointError::Fragment
            });
        }
        if !tail.is_empty() && tail != "/" {
            return Err(EndpointError::Path);
        }
        check_authority(authority)?;
        Ok(Self(format!(
            "{scheme}://{}/",
            authority.to_ascii_lowercase()
        )))
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

/// Checks the authority of a server address: a host and an optional port.
fn check_authority(authority: &str) -> Result<(), EndpointError> {
    if authority.is_empty() {
        return Err(EndpointError::NoHost);
    }
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let Some(close) = inner.find(']') else {
            return Err(EndpointError::UnbalancedBracket);
        };
        let (literal, after) = (&inner[..close], &inner[close + 1..]);
        if literal.contains('[') || after.contains(['[', ']']) {
            return Err(EndpointError::UnbalancedBracket);
        }
        if literal.is_empty() {
            return Err(EndpointError::NoHost);
        }
        // `Ipv6Addr` takes neither a zone nor an IPvFuture literal, and neither may a server
        // address.
        if literal.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(EndpointError::Host);
        }
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or(EndpointError::Port)?),
        };
        (None, port)
    } else {
        if authority.contains(['[', ']']) {
            return Err(EndpointError::UnbalancedBracket);
        }
        match authority.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(authority), None),
        }
    };
    if let Some(host) = host {
        check_host(host)?;
    }
    if let Some(port) = port {
        check_port(port)?;
    }
    Ok(())
}

/// A registered name or an IPv4 address.
fn check_host(host: &str) -> Result<(), EndpointError> {
    if host.is_empty() {
        return Err(EndpointError::NoHost);
    }
    if host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return host
            .parse::<std::net::Ipv4Addr>()
            .map(|_| ())
            .map_err(|_| EndpointError::Host);
    }
    let bytes = host.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(EndpointError::Host)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return Err(EndpointError::Host);
            }
            i += 3;
            continue;
        }
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        let sub_delim = matches!(
            b,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
        );
        if !unreserved && !sub_delim {
            return Err(EndpointError::Host);
        }
        i += 1;
    }
    Ok(())
}

/// A port: 1 to 65535 in decimal, without leading zeros.
fn check_port(port: &str) -> Result<(), EndpointError> {
    if port.is_empty() || port.starts_with('0') || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(EndpointError::Port);
    }
    match port.parse::<u16>() {
        Ok(n) if n >= 1 => Ok(()),
        _ => Err(EndpointError::Port),
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
    /// Seeds, and the most learned endpoints to keep.
    ///
    /// T-2 forbids a client that started over https to follow a redirect or a seed to http.
    /// The client may start at any of its seeds, so when any seed is https the client is
    /// https-only from the start: its http seeds are never tried, and http endpoints learned
    /// from redirects or leadership observations are refused. A mixed seed list therefore
    /// never opens the way to an http redirect. Only a client whose every seed is http
    /// connects over http.
    pub fn new(seeds: Vec<Endpoint>, capacity: usize) -> Self {
        let https_only = seeds.iter().any(Endpoint::is_https);
        let seeds = if https_only {
            seeds.into_iter().filter(Endpoint::is_https).collect()
        } else {
            seeds
        };
        Self {
            seeds,
            learned: VecDeque::new(),
            capacity: capacity.max(1),
            leader: None,
            https_only,
            cursor: 0,
        }
    }

    /// Learns `e`, named as the leader when `leader` is true, and tells whether it was kept.
    /// Refuses (returns `false`) an http address when the client is https-only (see
    /// [`Endpoints::new`]).
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

    /// Whether only https endpoints are used: some seed is https (T-2).
    pub fn https_only(&self) -> bool {
        self.https_only
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
