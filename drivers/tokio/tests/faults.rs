//! The tokio driver against loopback faults that need a server of a particular shape: a node
//! reachable only over plain http behind an https cluster, and a node that reads slowly. The
//! scenarios are written once in `nervix-driver-tests`, for both drivers. Every test is bounded.

nervix_driver_tests::loopback_tests!(tokio_faults);
