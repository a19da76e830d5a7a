//! What the blocking driver tells a person debugging it (tracing events, stats) and what it
//! never tells (credentials, cell values, archive bytes), against the loopback cluster; the
//! scenarios are written once in `nervix-driver-tests`.

nervix_driver_tests::observability_tests!(blocking);
