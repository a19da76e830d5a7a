//! The client journal over real sockets: a client process killed with SIGKILL mid-command and
//! its successor on the same slot recovering each outcome (scenarios in `nervix-driver-tests`).

nervix_driver_tests::journal_tests!(tokio);
