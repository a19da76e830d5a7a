//! Host names, certificates and the resolver over real sockets: each loopback node has a host
//! name of its own and a certificate for it, the names resolve to 127.0.0.1 through the
//! configuration's resolver, and a connection is verified against the endpoint's own name on
//! every connection, redirects included, for sessions and separate calls alike (T-2). The
//! scenarios are written once in `nervix-driver-tests`, for both drivers.

nervix_driver_tests::tls_tests!(tokio);
