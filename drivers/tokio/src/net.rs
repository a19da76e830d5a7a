//! Opening a connection: DNS and address attempts, TLS verified against the endpoint's host.

use crate::config::Config;
use nervix_driver_support::dial::{self, host_port, AddressOrder};
use nervix_driver_support::resolve::{ConnectError, Resolver};
use nervix_protocol::endpoint::Endpoint;
use rustls_pki_types::CertificateDer;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
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

/// TLS client configurations, one per ALPN protocol.
#[derive(Clone)]
pub(crate) struct TlsConfigs {
    h2: tokio_rustls::TlsConnector,
    http1: tokio_rustls::TlsConnector,
}

/// How connections are opened: the configuration's resolver and, when it has roots, its TLS
/// configurations.
pub(crate) type Dialer = dial::Dialer<TlsConfigs>;

/// The dialer of `config`.
pub(crate) fn dialer(config: &Config) -> Result<Dialer, rustls::Error> {
    Dialer::new(&config.roots, &config.resolver, tls_configs)
}

fn tls_configs(roots: &[CertificateDer<'static>]) -> Result<TlsConfigs, rustls::Error> {
    let make = |alpn: &[u8]| -> Result<tokio_rustls::TlsConnector, rustls::Error> {
        Ok(tokio_rustls::TlsConnector::from(dial::tls_config(
            roots, alpn,
        )?))
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
    rx.await.unwrap_or_else(|_| Err(dial::lookup_not_run(host)))
}

/// Opens a byte stream to `e`: its host is looked up with the dialer's resolver (the
/// system's without one), every address is tried in the order of the answer, and an https
/// endpoint gets TLS verified against the endpoint's own host name, whatever address it
/// resolved to (T-2). The caller bounds the whole with its connection deadline.
pub(crate) async fn open(e: &Endpoint, d: Option<&Dialer>, h2: bool) -> Result<Io, ConnectError> {
    let (host, port) = host_port(e);
    let resolver = dial::resolver_or_system(d.map(Dialer::resolver));
    let mut addrs = AddressOrder::new(lookup(&resolver, &host, port).await?);
    let tcp = loop {
        let Some(a) = addrs.next_address() else {
            return Err(addrs.exhausted(&host));
        };
        match TcpStream::connect(a).await {
            Ok(s) => break s,
            Err(err) => addrs.failed(err),
        }
    };
    tcp.set_nodelay(true).map_err(ConnectError::Connect)?;
    if !e.is_https() {
        return Ok(Io::Plain(tcp));
    }
    let tls = d.and_then(Dialer::tls).ok_or(ConnectError::NoTls)?;
    let connector = if h2 { &tls.h2 } else { &tls.http1 };
    let name = dial::server_name(host)?;
    let s = connector
        .connect(name, tcp)
        .await
        .map_err(ConnectError::Tls)?;
    Ok(Io::Tls(Box::new(s)))
}
