//! Opening a connection: DNS and address attempts, TLS verified against the endpoint's host.

use crate::config::Config;
use nervix_driver_support::resolve::{ConnectError, Resolver};
use nervix_protocol::endpoint::Endpoint;
use rustls_pki_types::{CertificateDer, ServerName};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A plain or TLS byte stream.
pub(crate) enum Io {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The host (brackets removed from an IPv6 literal) and port of an endpoint.
pub(crate) fn host_port(e: &Endpoint) -> (String, u16) {
    let auth = e.authority();
    let default = if e.is_https() { 443 } else { 80 };
    if let Some(rest) = auth.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        let port = after
            .strip_prefix(':')
            .and_then(|p| p.parse().ok())
            .unwrap_or(default);
        return (host.to_string(), port);
    }
    match auth.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(default)),
        None => (auth.to_string(), default),
    }
}

/// TLS client configurations, one per ALPN protocol.
#[derive(Clone)]
struct TlsConfigs {
    h2: tokio_rustls::TlsConnector,
    http1: tokio_rustls::TlsConnector,
}

/// How connections are opened: the configuration's resolver and, when it has roots, its TLS
/// configurations.
#[derive(Clone)]
pub(crate) struct Dialer {
    tls: Option<TlsConfigs>,
    resolver: Resolver,
}

impl Dialer {
    pub(crate) fn new(config: &Config) -> Result<Self, rustls::Error> {
        let tls = if config.roots.is_empty() {
            None
        } else {
            Some(tls_configs(&config.roots)?)
        };
        Ok(Self {
            tls,
            resolver: config.resolver.clone(),
        })
    }
}

fn tls_configs(roots: &[CertificateDer<'static>]) -> Result<TlsConfigs, rustls::Error> {
    let mut store = rustls::RootCertStore::empty();
    for r in roots {
        store.add(r.clone())?;
    }
    let make = |alpn: &[u8]| -> Result<tokio_rustls::TlsConnector, rustls::Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut c = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(store.clone())
            .with_no_client_auth();
        c.alpn_protocols = vec![alpn.to_vec()];
        Ok(tokio_rustls::TlsConnector::from(Arc::new(c)))
    };
    Ok(TlsConfigs {
        h2: make(b"h2")?,
        http1: make(b"http/1.1")?,
    })
}

/// The addresses of `host`, from `resolver` on a thread of its own: the caller's deadline
/// cuts a resolver that does not answer (T-2).
async fn lookup(
    resolver: &Resolver,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, ConnectError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    resolver.lookup(host, port, move |a| {
        let _ = tx.send(a);
    });
    rx.await.unwrap_or_else(|_| {
        Err(ConnectError::Lookup {
            host: host.to_string(),
            source: io::Error::other("the lookup thread could not run"),
        })
    })
}

/// Opens a byte stream to `e`: its host is looked up with the dialer's resolver (the
/// system's without one), every address is tried in the order of the answer, and an https
/// endpoint gets TLS verified against the endpoint's own host name, whatever address it
/// resolved to (T-2). The caller bounds the whole with its connection deadline.
pub(crate) async fn open(e: &Endpoint, d: Option<&Dialer>, h2: bool) -> Result<Io, ConnectError> {
    let (host, port) = host_port(e);
    let system;
    let resolver = match d {
        Some(d) => &d.resolver,
        None => {
            system = Resolver::system();
            &system
        }
    };
    let addrs = lookup(resolver, &host, port).await?;
    let mut last = None;
    let mut tcp = None;
    for a in addrs {
        match TcpStream::connect(a).await {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(err) => last = Some(err),
        }
    }
    let tcp = match (tcp, last) {
        (Some(t), _) => t,
        (None, Some(err)) => return Err(ConnectError::Connect(err)),
        (None, None) => return Err(ConnectError::NoAddress { host }),
    };
    tcp.set_nodelay(true).map_err(ConnectError::Connect)?;
    if !e.is_https() {
        return Ok(Io::Plain(tcp));
    }
    let tls = d.and_then(|d| d.tls.as_ref()).ok_or(ConnectError::NoTls)?;
    let connector = if h2 { &tls.h2 } else { &tls.http1 };
    let name = ServerName::try_from(host).map_err(|_| {
        ConnectError::Tls(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a TLS server name",
        ))
    })?;
    let s = connector
        .connect(name, tcp)
        .await
        .map_err(ConnectError::Tls)?;
    Ok(Io::Tls(Box::new(s)))
}
