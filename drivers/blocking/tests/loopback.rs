//! The blocking driver end to end over real sockets on 127.0.0.1, against the loopback
//! cluster's WebSocket console: one test (at least) per transport rule the console carries,
//! redirects across real sockets, a node killed mid-call, credentials that break careless
//! encoders, and an oversized frame from the server. The scenarios are written once in
//! `nervix-driver-tests`, for both drivers. Every test runs under a bound of its own.

nervix_driver_tests::loopback_tests!(blocking);
