//! How a driver finds the addresses of a host name, and why a connection could not be
//! opened.
//!
//! A [`Resolver`] answers a host name and port with socket addresses, in the order a driver
//! tries them. The default is the system's resolver; a configuration may give its own (a
//! test's, or one that maps names to addresses), which never changes the name a TLS
//! certificate is verified against: that is always the target's own host name. A lookup
//! runs on a thread of its own so that a resolver that never answers is cut by the
//! connection deadline, and a lookup that fails keeps its cause ([`ConnectError::Lookup`]).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A source of addresses for host names.
pub trait Resolve: Send + Sync + 'static {
    /// The addresses of `host` (never an IP literal: those are used as they are) with
    /// `port`, in the order they are to be tried.
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>>;
}

/// The system's resolver (`getaddrinfo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        Ok((host, port).to_socket_addrs()?.collect())
    }
}

/// Fixed answers: each listed host name resolves to its addresses, in the order given; any
/// other name is not found.
#[derive(Debug, Clone, Default)]
pub struct HostsResolver {
    hosts: BTreeMap<String, Vec<IpAddr>>,
}

impl HostsResolver {
    /// No host at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// `host` (compared without regard to case) resolves to `addresses`, in this order.
    pub fn with(mut self, host: &str, addresses: impl IntoIterator<Item = IpAddr>) -> Self {
        self.hosts
            .insert(host.to_ascii_lowercase(), addresses.into_iter().collect());
        self
    }
}

impl Resolve for HostsResolver {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        match self.hosts.get(&host.to_ascii_lowercase()) {
            Some(a) => Ok(a.iter().map(|ip| SocketAddr::new(*ip, port)).collect()),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{host}` is not a known host"),
            )),
        }
    }
}

/// At most this many lookups of one [`Resolver`] (and its clones) run at once. A resolver
/// that never answers holds a thread for each lookup it was asked; past this bound a lookup
/// fails at once with [`ConnectError::LookupsBusy`] instead of taking another thread.
pub const LOOKUPS: usize = 8;

/// A shared [`Resolve`]; the system's by default.
#[derive(Clone)]
pub struct Resolver(Arc<dyn Resolve>, Arc<AtomicUsize>);

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Resolver")
    }
}

impl Default for Resolver {
    fn default() -> Self {
        Self::system()
    }
}

impl Resolver {
    /// The system's resolver.
    pub fn system() -> Self {
        Self::new(SystemResolver)
    }

    /// Answers from `r`.
    pub fn new(r: impl Resolve) -> Self {
        Self(Arc::new(r), Arc::default())
    }

    /// The addresses of `host` with `port`, in order: an IP literal as it is, any other name
    /// from the resolver, on a thread of its own. `answer` is called with the result on that
    /// thread; the caller waits for it only as long as its connection deadline allows.
    pub fn lookup(
        &self,
        host: &str,
        port: u16,
        answer: impl FnOnce(Result<Vec<SocketAddr>, ConnectError>) + Send + 'static,
    ) {
        if let Ok(ip) = host.parse::<IpAddr>() {
            answer(Ok(vec![SocketAddr::new(ip, port)]));
            return;
        }
        let running = self.1.clone();
        if running.fetch_add(1, Ordering::AcqRel) >= LOOKUPS {
            running.fetch_sub(1, Ordering::AcqRel);
            answer(Err(ConnectError::LookupsBusy {
                host: host.to_string(),
            }));
            return;
        }
        let resolver = self.0.clone();
        let name = host.to_string();
        let spawned = std::thread::Builder::new()
            .name("sansio-dns".into())
            .spawn(move || {
                let r = match resolver.resolve(&name, port) {
                    Ok(a) if a.is_empty() => Err(ConnectError::NoAddress { host: name }),
                    Ok(a) => Ok(a),
                    Err(source) => Err(ConnectError::Lookup { host: name, source }),
                };
                running.fetch_sub(1, Ordering::AcqRel);
                answer(r);
            });
        if let Err(e) = spawned {
            // `answer` went with the closure; the caller sees its channel closed.
            self.1.fetch_sub(1, Ordering::AcqRel);
            drop(e);
        }
    }
}

/// Why a connection to a target could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConnectError {
    /// The resolver failed to look the host name up; `source` is its own error, kind kept.
    Lookup {
        /// The host name.
        host: String,
        /// The resolver's error.
        source: io::Error,
    },
    /// The host name resolved to no address.
    NoAddress {
        /// The host name.
        host: String,
    },
    /// The resolver gave no answer within the connection deadline.
    LookupTimedOut {
        /// The host name.
        host: String,
    },
    /// [`LOOKUPS`] lookups of this resolver are still unanswered: no thread is taken for
    /// another.
    LookupsBusy {
        /// The host name.
        host: String,
    },
    /// No address accepted a connection: the error of the last one tried.
    Connect(io::Error),
    /// The TLS handshake failed: a certificate not valid for the target's host name among
    /// its causes.
    Tls(io::Error),
    /// A TLS target and no TLS roots to verify it with.
    NoTls,
    /// The connection deadline passed.
    TimedOut,
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Lookup { host, source } => write!(f, "lookup of `{host}` failed: {source}"),
            Self::NoAddress { host } => write!(f, "`{host}` resolves to no address"),
            Self::LookupsBusy { host } => {
                write!(
                    f,
                    "no lookup of `{host}`: {LOOKUPS} lookups are still unanswered"
                )
            }
            Self::LookupTimedOut { host } => {
                write!(f, "no answer for `{host}` within the connection deadline")
            }
            Self::Connect(e) => write!(f, "connect: {e}"),
            Self::Tls(e) => write!(f, "TLS: {e}"),
            Self::NoTls => f.write_str("an https endpoint and no TLS roots"),
            Self::TimedOut => f.write_str("the connection deadline passed"),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Lookup { source, .. } | Self::Connect(source) | Self::Tls(source) => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A resolver that answers only when told to.
    struct Silent(std::sync::Mutex<mpsc::Receiver<()>>);

    impl Resolve for Silent {
        fn resolve(&self, _: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
            let _ = self.0.lock().unwrap().recv();
            Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
        }
    }

    #[test]
    fn t_2_a_silent_resolver_holds_at_most_lookups_threads_and_frees_them_when_it_answers() {
        let (go, wait) = mpsc::channel();
        let r = Resolver::new(Silent(std::sync::Mutex::new(wait)));
        let (tx, rx) = mpsc::channel();
        for _ in 0..LOOKUPS + 3 {
            let tx = tx.clone();
            r.clone().lookup("silent.test", 1, move |a| {
                let _ = tx.send(a);
            });
        }
        // Past the bound, lookups fail at once and take no thread.
        for _ in 0..3 {
            let a = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
            assert!(matches!(a, Err(ConnectError::LookupsBusy { .. })), "{a:?}");
        }
        assert!(rx.try_recv().is_err(), "the others are still out");
        // Once the resolver answers, their threads end and new lookups run again.
        for _ in 0..LOOKUPS {
            go.send(()).unwrap();
        }
        for _ in 0..LOOKUPS {
            let a = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
            assert!(a.is_ok(), "{a:?}");
        }
        go.send(()).unwrap();
        r.lookup("silent.test", 2, move |a| {
            let _ = tx.send(a);
        });
        let a = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
        assert!(a.is_ok(), "{a:?}");
    }

    fn looked_up(r: &Resolver, host: &str) -> Result<Vec<SocketAddr>, ConnectError> {
        let (tx, rx) = mpsc::channel();
        r.lookup(host, 7, move |a| {
            let _ = tx.send(a);
        });
        rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn t_2_a_hosts_resolver_answers_in_the_order_given_and_keeps_a_lookup_failure_typed() {
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "::1".parse().unwrap();
        let r = Resolver::new(HostsResolver::new().with("Node1.Test", [b, a]));
        let got = looked_up(&r, "node1.test").unwrap();
        assert_eq!(got, vec![SocketAddr::new(b, 7), SocketAddr::new(a, 7)]);
        let literal = looked_up(&r, "127.0.0.1").unwrap();
        assert_eq!(literal, vec![SocketAddr::new(a, 7)]);
        match looked_up(&r, "other.test") {
            Err(ConnectError::Lookup { host, source }) => {
                assert_eq!(host, "other.test");
                assert_eq!(source.kind(), io::ErrorKind::NotFound);
            }
            other => panic!("{other:?}"),
        }
        let empty = Resolver::new(HostsResolver::new().with("none.test", []));
        assert!(matches!(
            looked_up(&empty, "none.test"),
            Err(ConnectError::NoAddress { .. })
        ));
    }

    #[test]
    fn t_2_the_system_resolver_answers_localhost_and_a_connect_error_says_its_cause() {
        let r = Resolver::default();
        assert_eq!(format!("{r:?}"), "Resolver");
        let got = SystemResolver.resolve("localhost", 9).unwrap();
        assert!(!got.is_empty() && got.iter().all(|a| a.port() == 9 && a.ip().is_loopback()));
        let looked = looked_up(&Resolver::system(), "localhost").unwrap();
        assert!(looked.iter().all(|a| a.ip().is_loopback()), "{looked:?}");
        let lookup = ConnectError::Lookup {
            host: "h.test".into(),
            source: io::Error::new(io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(lookup.to_string(), "lookup of `h.test` failed: gone");
        let src = std::error::Error::source(&lookup).unwrap();
        assert_eq!(src.to_string(), "gone");
        let tls = ConnectError::Tls(io::Error::other("bad name"));
        assert_eq!(tls.to_string(), "TLS: bad name");
        assert!(std::error::Error::source(&tls).is_some());
        let late = ConnectError::LookupTimedOut {
            host: "h.test".into(),
        };
        assert_eq!(
            late.to_string(),
            "no answer for `h.test` within the connection deadline"
        );
        assert!(std::error::Error::source(&late).is_none());
        assert_eq!(
            ConnectError::NoAddress {
                host: "h.test".into()
            }
            .to_string(),
            "`h.test` resolves to no address"
        );
    }
}
