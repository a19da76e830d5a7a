//! Deterministic simulation driver for `nervix-protocol`.
