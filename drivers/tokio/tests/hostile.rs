//! The tokio driver against a hostile peer over real sockets on 127.0.0.1: floods of frames
//! nobody asked for, outcomes nobody waits for, and gRPC responses cut short. The scenarios are
//! written once in `nervix-driver-tests`, for both drivers. Every test is bounded in time.

nervix_driver_tests::hostile_tests!(tokio);
