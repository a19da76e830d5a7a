//! The loopback cluster's unpaced rows through a subscription stream, over the console and
//! over gRPC: every row arrives once, in order, with no gap, however fast the server sends,
//! and a reader that keeps up loses nothing to the smallest budget the engine allows (S-8).
//! The scenario is written once in `nervix-driver-tests`, for both drivers.

nervix_driver_tests::unpaced_tests!(tokio);
