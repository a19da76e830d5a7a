//! The blocking driver against a hostile peer over real sockets on 127.0.0.1: floods of
//! frames nobody asked for, and outcomes nobody waits for. The scenarios are written once in
//! `nervix-driver-tests`, for both drivers. Every test is bounded in time.

nervix_driver_tests::hostile_tests!(blocking);
