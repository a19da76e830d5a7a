//! Opening a connection within a deadline: `sansio-kit`'s DNS, every address in turn, and
//! TLS verified against the endpoint's own host name.

use crate::config::Config;
use nervix_driver_support::dial;
use nervix_driver_support::resolve::ConnectError;
use nervix_protocol::endpoint::Endpoint;
use std::sync::Arc;
use std::time::Instant;

/// A plain or TLS byte stream over a blocking socket.
pub(crate) use sansio_kit::blocking::Io;
/// The byte stream under a console WebSocket: [`Io`] with the deadline of the read or write
/// under way, so a server trickling a frame (or a TLS record) a byte at a time cannot hold a
/// read past it, nor a peer reading a trickle a write (T-8).
pub(crate) use sansio_kit::blocking::Paced;

/// How connections are opened: the configuration's resolver and, when it has roots, its TLS
/// configuration (rustls on the ring provider, ALPN `http/1.1` for the console's upgrade).
pub(crate) type Dialer = dial::Dialer<Arc<rustls::ClientConfig>>;

/// The dialer of `config`.
pub(crate) fn dialer(config: &Config) -> Result<Dialer, rustls::Error> {
    Dialer::new(&config.roots, &config.resolver, |roots| {
        dial::tls_config(roots, b"http/1.1")
    })
}

/// Opens a byte stream to `e` by `deadline`: its host is looked up with the dialer's
/// resolver (the system's without one), every address is tried in the order of the answer,
/// each within what is left of the deadline, and an https endpoint gets TLS verified against
/// the endpoint's own host name, whatever address it resolved to (T-2). The socket's read and
/// write timeouts are set to what is left, so the handshakes that follow are bounded too.
pub(crate) fn open(
    e: &Endpoint,
    d: Option<&Dialer>,
    deadline: Instant,
) -> Result<Io, ConnectError> {
    let resolver = dial::resolver_or_system(d.map(Dialer::resolver));
    let tls = d.and_then(|d| d.tls().cloned());
    sansio_kit::blocking::open(&dial::target(e), &resolver, tls, deadline)
}
