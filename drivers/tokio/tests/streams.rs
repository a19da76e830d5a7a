//! Subscriptions and followed clocks through the async API, over real sockets on 127.0.0.1
//! against the loopback cluster, over gRPC and the console: the scenarios are written once in
//! `nervix-driver-tests`, for both drivers.

nervix_driver_tests::streams_tests!(tokio);
