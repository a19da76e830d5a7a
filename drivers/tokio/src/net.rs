//! Opening a connection: DNS and address attempts, TLS verified against the endpoint's host.

use nervix_protocol::endpoint::Endpoint;
use rustls_pki_types::{CertificateDer, ServerName};
use std::io;
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
pub(crate) struct Tls {
    h2: tokio_rustls::TlsConnector,
    http1: tokio_rustls::TlsConnector,
}

impl Tls {
    pub(crate) fn new(roots: &[CertificateDer<'static>]) -> Result<Self, rustls::Error> {
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
        Ok(Self {
            h2: make(b"h2")?,
            http1: make(b"http/1.1")?,
        })
    }
}

/// Opens a byte stream to `e`: every address its host resolves to is tried in turn, and an
/// https endpoint gets TLS verified against the endpoint's own host name (T-2). The caller
/// bounds the whole with its connection deadline.
pub(crate) async fn open(e: &Endpoint, tls: Option<&Tls>, h2: bool) -> io::Result<Io> {
    let (host, port) = host_port(e);
    let addrs: Vec<_> = tokio::net::lookup_host((host.as_str(), port))
        .await?
        .collect();
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host resolves to no address");
    let mut tcp = None;
    for a in addrs {
        match TcpStream::connect(a).await {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(err) => last = err,
        }
    }
    let tcp = tcp.ok_or(last)?;
    tcp.set_nodelay(true)?;
    if !e.is_https() {
        return Ok(Io::Plain(tcp));
    }
    let tls = tls.ok_or_else(|| io::Error::other("no TLS configuration"))?;
    let connector = if h2 { &tls.h2 } else { &tls.http1 };
    let name = ServerName::try_from(host)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "not a TLS server name"))?;
    let s = connector.connect(name, tcp).await?;
    Ok(Io::Tls(Box::new(s)))
}
