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
//! | `cluster::ingestors` | producers: opening, batches and their credit, interruption and restoration |
//! | `cluster::emitters` | emitter consumers: deliveries, gaps, settlements and their credit |
//!
//! ## Where this crate sits
//!
//! The workspace keeps one sans-IO engine per system under `protocol/` and everything that
//! touches sockets, files and time under `drivers/`. `nervix-protocol` is the Nervix engine;
//! `sansio-kit` holds what every engine's driver needs and knows no engine (name lookup,
//! dialling with a deadline, rustls, WebSocket and gRPC framing, back-off, bounded queues);
//! `nervix-driver-support` is the Nervix driver core both Nervix drivers share, with no
//! runtime; `nervix-tokio` and `nervix-blocking` add only a runtime, sockets and a way to wait.
//! A user of one engine compiles that engine, its drivers and `sansio-kit`, nothing of another
//! engine (the conformance crate's fence tests hold this). `nervix-harness` and
//! `nervix-loopback` are the test drivers: a seeded simulation and the same cluster served
//! over real sockets on 127.0.0.1.

pub mod cluster;
pub mod scenario;
pub mod sim;
pub mod transfers;

pub use cluster::{ClusterConfig, ConnId, ConnectRefused, Faults, Output, SimCluster};
pub use sim::{run_seed, NetFaults, SimConfig, Simulation};
