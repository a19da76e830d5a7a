//! Deterministic simulation driver for `nervix-protocol`.
//!
//! * [`SimCluster`]: a simulated Nervix cluster of one or three nodes that speaks real frames
//!   (checked on the way in, written by the checked encoder on the way out), records command
//!   outcomes by execution reference, serves follower reads, redirects, changes leaders and
//!   injects faults.
//! * [`sim::Simulation`]: a [`nervix_protocol::client::Client`] against a `SimCluster` over a
//!   simulated network, all from one seed, checked against what a client must never promise.
//!
//! Nothing here reads a clock or draws ambient randomness: time is virtual and every choice
//! comes from a seeded generator, so a run replays exactly from its seed.

pub mod cluster;
pub mod sim;

pub use cluster::{ClusterConfig, ConnId, ConnectRefused, Faults, Output, SimCluster};
pub use sim::{run_seed, NetFaults, SimConfig, Simulation};
