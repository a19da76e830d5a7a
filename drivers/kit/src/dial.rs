//! What opening a connection decides the same way in every driver, whatever waits for the
//! socket: where a target's host and port are, which resolver looks the host up, the order
//! its addresses are tried in (the answer's, the last failure kept) and TLS (rustls on the
//! ring provider, the configuration's roots, a certificate verified against the target's own
//! host name).

use crate::resolve::{ConnectError, Resolver};
use rustls_pki_types::{CertificateDer, ServerName};
use std::borrow::Cow;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

/// Where a connection goes: a host (a name, or an address literal without brackets), a port,
/// and whether the connection is secured with TLS.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// The host name or address literal (an IPv6 literal without its brackets); a TLS
    /// certificate is verified against it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether the connection is secured with TLS.
    pub tls: bool,
}

/// Why text is not a [`Target`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetError {
    /// The scheme is none of `http`, `https`, `ws`, `wss`.
    Scheme(String),
    /// No host between the scheme and the port or path.
    NoHost,
    /// The port is not a number from 1 to 65535.
    Port(String),
    /// An IPv6 literal's `[` is not closed, or something other than a port follows its `]`.
    Brackets,
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scheme(s) => write!(f, "`{s}` is not http, https, ws or wss"),
            Self::NoHost => f.write_str("no host"),
            Self::Port(p) => write!(f, "`{p}` is not a port from 1 to 65535"),
            Self::Brackets => f.write_str("an IPv6 literal's brackets do not match"),
        }
    }
}

impl std::error::Error for TargetError {}

impl Target {
    /// A target at `host` and `port`, with TLS when `tls`.
    pub fn new(host: impl Into<String>, port: u16, tls: bool) -> Self {
        Self {
            host: host.into(),
            port,
            tls,
        }
    }

    /// The host (brackets removed from an IPv6 literal) and port of an authority `host[:port]`
    /// that was checked already; `default_port` when it names none or a port that does not
    /// parse.
    pub fn of_authority(authority: &str, tls: bool, default_port: u16) -> Self {
        if let Some(rest) = authority.strip_prefix('[') {
            let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
            let port = after
                .strip_prefix(':')
                .and_then(|p| p.parse().ok())
                .unwrap_or(default_port);
            return Self::new(host, port, tls);
        }
        match authority.rsplit_once(':') {
            Some((h, p)) => Self::new(h, p.parse().unwrap_or(default_port), tls),
            None => Self::new(authority, default_port, tls),
        }
    }

    /// The target of a URL-ish `scheme://host[:port][/path]`: `https` and `wss` with TLS,
    /// `http` and `ws` without, the scheme's port (443 or 80) when it names none. Checked
    /// strictly: a port outside 1 to 65535, an empty host or unmatched brackets are refused.
    pub fn parse(url: &str) -> Result<Self, TargetError> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| TargetError::Scheme(String::new()))?;
        let tls = match scheme.to_ascii_lowercase().as_str() {
            "https" | "wss" => true,
            "http" | "ws" => false,
            _ => return Err(TargetError::Scheme(scheme.to_string())),
        };
        let default_port = if tls { 443 } else { 80 };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let port_of = |p: &str| match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(TargetError::Port(p.to_string())),
        };
        let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
            let (host, after) = inner.split_once(']').ok_or(TargetError::Brackets)?;
            let port = match after {
                "" => default_port,
                _ => port_of(after.strip_prefix(':').ok_or(TargetError::Brackets)?)?,
            };
            (host, port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, port_of(p)?),
                None => (authority, default_port),
            }
        };
        if host.is_empty() {
            return Err(TargetError::NoHost);
        }
        Ok(Self::new(host, port, tls))
    }

    /// The authority as a URL writes it: `host:port`, an IPv6 literal in brackets.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// How a driver opens connections: the configuration's resolver and, when the configuration
/// has TLS roots, the driver's TLS set-up `T` made from them (one rustls configuration, or
/// one connector per ALPN protocol).
#[derive(Clone)]
pub struct Dialer<T> {
    tls: Option<T>,
    resolver: Resolver,
}

impl<T> Dialer<T> {
    /// A dialer looking names up with `resolver`, and with `make_tls(roots)` as its TLS
    /// set-up when there are `roots` (none without: a TLS target is then refused with
    /// [`ConnectError::NoTls`] when dialled).
    pub fn new(
        roots: &[CertificateDer<'static>],
        resolver: &Resolver,
        make_tls: impl FnOnce(&[CertificateDer<'static>]) -> Result<T, rustls::Error>,
    ) -> Result<Self, rustls::Error> {
        let tls = if roots.is_empty() {
            None
        } else {
            Some(make_tls(roots)?)
        };
        Ok(Self {
            tls,
            resolver: resolver.clone(),
        })
    }

    /// The TLS set-up, when the configuration has roots.
    pub fn tls(&self) -> Option<&T> {
        self.tls.as_ref()
    }

    /// The resolver host names are looked up with.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }
}

/// The resolver a connection looks its host up with: the dialer's, or the system's when
/// there is none.
pub fn resolver_or_system(resolver: Option<&Resolver>) -> Cow<'_, Resolver> {
    match resolver {
        Some(r) => Cow::Borrowed(r),
        None => Cow::Owned(Resolver::system()),
    }
}

/// Why a lookup's answer never came back: its thread could not run.
pub fn lookup_not_run(host: &str) -> ConnectError {
    ConnectError::Lookup {
        host: host.to_string(),
        source: io::Error::other("the lookup thread could not run"),
    }
}

/// The addresses of one host, tried in the order of the answer until one connects.
#[derive(Debug)]
pub struct AddressOrder {
    addrs: std::vec::IntoIter<SocketAddr>,
    last: Option<io::Error>,
}

impl AddressOrder {
    /// The addresses of a lookup's answer, in its order.
    pub fn new(addrs: Vec<SocketAddr>) -> Self {
        Self {
            addrs: addrs.into_iter(),
            last: None,
        }
    }

    /// The next address to try; `None` when every one was tried.
    pub fn next_address(&mut self) -> Option<SocketAddr> {
        self.addrs.next()
    }

    /// The last address tried could not be connected.
    pub fn failed(&mut self, e: io::Error) {
        self.last = Some(e);
    }

    /// Why `host` could not be connected once every address failed: the last address's
    /// failure, or [`ConnectError::NoAddress`] when the answer held none.
    pub fn exhausted(self, host: &str) -> ConnectError {
        match self.last {
            Some(e) => ConnectError::Connect(e),
            None => ConnectError::NoAddress {
                host: host.to_string(),
            },
        }
    }
}

/// A TLS client configuration trusting `roots` alone and offering the ALPN protocol `alpn`
/// (`h2` for gRPC, `http/1.1` for a WebSocket upgrade): rustls on the ring provider, its
/// safe default protocol versions, no client certificate. rustls verifies every server
/// certificate against the name the connection is opened for.
pub fn tls_config(
    roots: &[CertificateDer<'static>],
    alpn: &[u8],
) -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    let mut store = rustls::RootCertStore::empty();
    for r in roots {
        store.add(r.clone())?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut c = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(store)
        .with_no_client_auth();
    c.alpn_protocols = vec![alpn.to_vec()];
    Ok(Arc::new(c))
}

/// The name a certificate is verified against: the target's own host (an address literal
/// included), whatever address it resolved to.
pub fn server_name(host: String) -> Result<ServerName<'static>, ConnectError> {
    ServerName::try_from(host).map_err(|_| {
        ConnectError::Tls(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a TLS server name",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_parsed_from_a_url_with_the_schemes_port_when_it_names_none() {
        let good = [
            (
                "wss://journal.example/feed?x=1",
                "journal.example",
                443,
                true,
            ),
            ("http://a.b:8080/", "a.b", 8080, false),
            ("ws://a.b", "a.b", 80, false),
            ("HTTPS://[::1]:7443/x", "::1", 7443, true),
            ("https://[fe80::2]", "fe80::2", 443, true),
        ];
        for (url, host, port, tls) in good {
            assert_eq!(
                Target::parse(url),
                Ok(Target::new(host, port, tls)),
                "{url}"
            );
        }
        assert_eq!(
            Target::parse("ftp://a.b/"),
            Err(TargetError::Scheme("ftp".into()))
        );
        assert_eq!(
            Target::parse("a.b:80"),
            Err(TargetError::Scheme(String::new()))
        );
        assert_eq!(Target::parse("http://:80/"), Err(TargetError::NoHost));
        assert_eq!(Target::parse("http:///"), Err(TargetError::NoHost));
        for bad in ["0", "65536", "x", ""] {
            assert_eq!(
                Target::parse(&format!("http://a.b:{bad}/")),
                Err(TargetError::Port(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(Target::parse("http://[::1/"), Err(TargetError::Brackets));
        assert_eq!(Target::parse("http://[::1]x/"), Err(TargetError::Brackets));
        assert_eq!(
            TargetError::Port("0".into()).to_string(),
            "`0` is not a port from 1 to 65535"
        );
    }

    #[test]
    fn a_target_of_a_checked_authority_and_its_authority_text() {
        assert_eq!(
            Target::of_authority("[::1]:9", true, 443),
            Target::new("::1", 9, true)
        );
        assert_eq!(
            Target::of_authority("[::1]", true, 443),
            Target::new("::1", 443, true)
        );
        assert_eq!(
            Target::of_authority("h", false, 80),
            Target::new("h", 80, false)
        );
        assert_eq!(Target::new("::1", 9, true).authority(), "[::1]:9");
        assert_eq!(
            Target::new("h.example", 80, false).authority(),
            "h.example:80"
        );
    }

    #[test]
    fn t_2_addresses_are_tried_in_the_order_of_the_answer_and_the_last_failure_is_kept() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "[::1]:2".parse().unwrap();
        let mut order = AddressOrder::new(vec![a, b]);
        assert_eq!(order.next_address(), Some(a));
        order.failed(io::Error::new(io::ErrorKind::ConnectionRefused, "first"));
        assert_eq!(order.next_address(), Some(b));
        order.failed(io::Error::new(io::ErrorKind::TimedOut, "second"));
        assert_eq!(order.next_address(), None);
        match order.exhausted("h") {
            ConnectError::Connect(e) => {
                assert_eq!(e.kind(), io::ErrorKind::TimedOut);
                assert_eq!(e.to_string(), "second");
            }
            other => panic!("{other:?}"),
        }
        let mut empty = AddressOrder::new(Vec::new());
        assert_eq!(empty.next_address(), None);
        assert!(matches!(
            empty.exhausted("h.example"),
            ConnectError::NoAddress { host } if host == "h.example"
        ));
    }

    #[test]
    fn t_2_a_certificate_is_verified_against_the_endpoints_own_name_or_address() {
        assert_eq!(
            server_name("a.example".into()).unwrap(),
            ServerName::try_from("a.example").unwrap()
        );
        assert!(matches!(
            server_name("127.0.0.1".into()).unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("::1".into()).unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("not a name".into()),
            Err(ConnectError::Tls(e)) if e.kind() == io::ErrorKind::InvalidInput
        ));
    }

    #[test]
    fn t_2_tls_offers_its_one_alpn_protocol_and_refuses_a_root_that_is_no_certificate() {
        let c = tls_config(&[], b"h2").unwrap();
        assert_eq!(c.alpn_protocols, [b"h2".to_vec()]);
        let c = tls_config(&[], b"http/1.1").unwrap();
        assert_eq!(c.alpn_protocols, [b"http/1.1".to_vec()]);
        assert!(tls_config(&[CertificateDer::from(vec![1, 2, 3])], b"h2").is_err());
    }

    #[test]
    fn t_2_a_dialer_has_tls_made_from_its_roots_only_when_there_are_roots() {
        let resolver = Resolver::system();
        let mut made = 0;
        let d = Dialer::new(&[], &resolver, |_| {
            made += 1;
            Ok(7)
        })
        .unwrap();
        assert_eq!((d.tls(), made), (None, 0));
        let root = CertificateDer::from(vec![1, 2, 3]);
        let d = Dialer::new(std::slice::from_ref(&root), &resolver, |r| {
            assert_eq!(r, std::slice::from_ref(&root));
            Ok(8)
        })
        .unwrap();
        assert_eq!(d.tls(), Some(&8));
        let refused = Dialer::<u8>::new(std::slice::from_ref(&root), &resolver, |r| {
            tls_config(r, b"h2").map(|_| 0)
        });
        assert!(refused.is_err(), "a root that is no certificate is refused");
    }

    #[test]
    fn t_2_a_dialer_looks_names_up_with_the_configurations_resolver() {
        let ip: std::net::IpAddr = "127.0.0.9".parse().unwrap();
        let hosts = Resolver::new(crate::resolve::HostsResolver::new().with("db.test", [ip]));
        let d = Dialer::<()>::new(&[], &hosts, |_| Ok(())).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        d.resolver().lookup("db.test", 7, move |a| {
            let _ = tx.send(a);
        });
        let answer = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap()
            .unwrap();
        assert_eq!(answer, [SocketAddr::new(ip, 7)]);
    }

    #[test]
    fn t_2_a_dialer_without_a_resolver_looks_up_with_the_systems() {
        let own = Resolver::system();
        assert!(matches!(resolver_or_system(Some(&own)), Cow::Borrowed(_)));
        assert!(matches!(resolver_or_system(None), Cow::Owned(_)));
        assert!(matches!(
            lookup_not_run("h"),
            ConnectError::Lookup { host, .. } if host == "h"
        ));
    }
}
