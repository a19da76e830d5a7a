//! Subscriptions and followed clocks through the blocking API, over the loopback cluster's
//! WebSocket console on 127.0.0.1: the scenarios are written once in `nervix-driver-tests`,
//! for both drivers.

nervix_driver_tests::streams_tests!(blocking);
