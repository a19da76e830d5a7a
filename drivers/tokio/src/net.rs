//! Opening a connection: `sansio-kit`'s DNS and address attempts and TLS verified against
//! the endpoint's host, with one TLS set-up per ALPN protocol the driver speaks.

use crate::config::Config;
use nervix_driver_support::dial;
use nervix_driver_support::resolve::ConnectError;
use nervix_protocol::endpoint::Endpoint;
use rustls_pki_types::CertificateDer;

/// A plain or TLS byte stream.
pub(crate) use sansio_kit::tokio::Io;

/// TLS client configurations, one per ALPN protocol.
#[derive(Clone)]
pub(crate) struct TlsConfigs {
    h2: sansio_kit::tokio::TlsConnector,
    http1: sansio_kit::tokio::TlsConnector,
}

/// How connections are opened: the configuration's resolver and, when it has roots, its TLS
/// configurations.
pub(crate) type Dialer = dial::Dialer<TlsConfigs>;

/// The dialer of `config`.
pub(crate) fn dialer(config: &Config) -> Result<Dialer, rustls::Error> {
    Dialer::new(&config.roots, &config.resolver, tls_configs)
}

fn tls_configs(roots: &[CertificateDer<'static>]) -> Result<TlsConfigs, rustls::Error> {
    let make = |alpn: &[u8]| -> Result<sansio_kit::tokio::TlsConnector, rustls::Error> {
        Ok(dial::tls_config(roots, alpn)?.into())
    };
    Ok(TlsConfigs {
        h2: make(b"h2")?,
        http1: make(b"http/1.1")?,
    })
}

/// Opens a byte stream to `e`: its host is looked up with the dialer's resolver (the
/// system's without one), every address is tried in the order of the answer, and an https
/// endpoint gets TLS (ALPN `h2` when `h2`, else `http/1.1`) verified against the endpoint's
/// own host name, whatever address it resolved to (T-2). The caller bounds the whole with
/// its connection deadline.
pub(crate) async fn open(e: &Endpoint, d: Option<&Dialer>, h2: bool) -> Result<Io, ConnectError> {
    let resolver = dial::resolver_or_system(d.map(Dialer::resolver));
    let tls = d
        .and_then(Dialer::tls)
        .map(|t| if h2 { &t.h2 } else { &t.http1 });
    sansio_kit::tokio::open(&dial::target(e), &resolver, tls).await
}
