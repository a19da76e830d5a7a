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
//!
//! # Layout
//!
//! | module | what lives there |
//! |---|---|
//! | [`cluster`] | [`SimCluster`]: nodes, sessions, the leader, the output queue and cancellation; it routes each request to one module per server capability |
//! | `cluster::commands` | command execution and the record of outcomes by execution reference |
//! | `cluster::transactions` | `BEGIN`, appends, `COMMIT`, `REVERT`, bindings, attach, inspection, expiry |
//! | `cluster::reads` | the domain list, domain selection, read commands, suggestions, choice lookups |
//! | `cluster::subscriptions` | subscribing, the rows that follow, unsubscribing |
//! | `cluster::clocks` | attaching and detaching domain clocks |
//! | `cluster::backups` | a `BACKUP` command, completed with its archive summary, and the archive's download |
//! | `cluster::calls` | the separate calls' streams and their faults |
//! | `cluster::uploads` | resource uploads and installed versions |
//! | `cluster::restores` | restores and their step reports |
//! | `cluster::transfers` | replies written whole or as transfer parts |
//! | `cluster::faults` | [`Faults`]: what the cluster injects, and when |
//! | [`scenario`] | the simulation's draw of operations, the invariants checked event by event, and the plan and record of runs over real transports |
//! | [`sim`] | [`Simulation`]: client, cluster and network from one seed, and the checks run on it |
//! | [`transfers`] | the separate calls' machines driven against a `SimCluster` |
//!
//! Producers (ingestors) and consumers (emitters) will each get a capability module of the
//! cluster when they are served.

pub mod cluster;
pub mod scenario;
pub mod sim;
pub mod transfers;

pub use cluster::{ClusterConfig, ConnId, ConnectRefused, Faults, Output, SimCluster};
pub use sim::{run_seed, NetFaults, SimConfig, Simulation};
