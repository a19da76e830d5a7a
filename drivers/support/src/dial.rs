//! What opening a connection decides the same way in every driver, whatever waits for the
//! socket: where an endpoint's host and port are (here), and from `sansio-kit` which resolver
//! looks the host up, the order its addresses are tried in (the answer's, the last failure
//! kept) and TLS (rustls on the ring provider, the configuration's roots, a certificate
//! verified against the endpoint's own host name, T-2).

pub use sansio_kit::dial::*;

use nervix_protocol::endpoint::Endpoint;

/// Where a connection to `e` goes: its host (brackets removed from an IPv6 literal), its port
/// (the scheme's, 443 for https and 80 for http, when it names none), TLS for https.
pub fn target(e: &Endpoint) -> Target {
    let default = if e.is_https() { 443 } else { 80 };
    Target::of_authority(e.authority(), e.is_https(), default)
}

/// The host (brackets removed from an IPv6 literal) and port of an endpoint; the scheme's
/// port (443 for https, 80 for http) when it names none.
pub fn host_port(e: &Endpoint) -> (String, u16) {
    let t = target(e);
    (t.host, t.port)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(s: &str) -> Endpoint {
        Endpoint::parse(s).unwrap()
    }

    #[test]
    fn t_2_the_host_and_port_of_an_endpoint_and_the_schemes_port_when_it_names_none() {
        assert_eq!(host_port(&ep("http://a.b:8080/")), ("a.b".into(), 8080));
        assert_eq!(host_port(&ep("http://a.b/")), ("a.b".into(), 80));
        assert_eq!(host_port(&ep("https://a.b/")), ("a.b".into(), 443));
        assert_eq!(
            host_port(&ep("https://10.0.0.1:9/")),
            ("10.0.0.1".into(), 9)
        );
        assert_eq!(host_port(&ep("https://[::1]:7443/")), ("::1".into(), 7443));
        assert_eq!(host_port(&ep("http://[fe80::2]/")), ("fe80::2".into(), 80));
        assert_eq!(host_port(&ep("https://[::1]/")), ("::1".into(), 443));
        assert_eq!(target(&ep("https://a.b:9/")), Target::new("a.b", 9, true));
        assert_eq!(target(&ep("http://a.b/")), Target::new("a.b", 80, false));
    }
}
