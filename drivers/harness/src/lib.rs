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
//!
//! # Behaviour reference
//!
//! ## The seeded simulation
//!
//! `Simulation` runs a client against `SimCluster` over a simulated network from one seed:
//! random operations (commands, reads, transactions, cancels, recoveries, and routed statements:
//! `LIST DOMAINS`, `USE`, clock attach and detach, subscription create and delete on plain,
//! branched and DROPPING relays), delayed, lost and duplicated frames, cut streams, leader changes,
//! and the cluster's faults (OutcomeUnknown, TooManyRequestsInFlight, ServerBusy, redirects without
//! endpoints, malformed frames, SessionEnding, transfer parts with frames between them, lost
//! transaction bindings, delivery loss, skipped rows, relay changes and removals, clock STARTs,
//! STOPs and removed domains). The cluster's relays emit rows whose every value is a pure function
//! of the relay version, the generation and the row number, cycling through the values careless
//! readers break on, and its paced clocks tick. Each run is checked against what a client must
//! never promise: every request ends exactly once; a command reported completed has a completed
//! outcome recorded under its own reference; a command reported failed has none; a reference
//! never changes or is made up; rows are read only within their own open generation and every
//! value reads exactly as written (floats by bits); nothing follows a subscription's end, and a
//! deletion is reported only when asked for; a tick belongs to the clock's current paced
//! generation and advances. CI runs 300 seeds and 64 proptest
//! seeds; `just soak` runs 10,000 (`just soak SEEDS CASES BASE` runs SEEDS seeds from BASE, so a
//! soak can run seeds no earlier run has; `NERVIX_SEED_BASE` does the same for the test). A
//! failing seed is named in the failure; `NERVIX_SEED=n` replays it and `NERVIX_TRACE=1` prints
//! its trace. The same seed gives the same trace twice. A calm run serves these rows of the
//! routing table end to end through the cluster: `USE`, `LIST DOMAINS`, clock attach and detach,
//! subscription create and delete, `BACKUP` as a command, and every other statement as a command.
//! `UPLOAD RESOURCE` and `RESTORE` are routed to their separate calls and a completed `BACKUP`
//! carries the summary its archive download reads; those calls run on streams of their own, so
//! the seeded session runs leave them to [`transfers`], which drives the upload, download and
//! restore machines against the cluster with its call faults.
//!
//! ## The client crash
//!
//! The test `client_crash` (issue 19) runs the client process against `SimCluster` as the
//! drivers run it: the driver core both drivers share (`nervix_driver_support::driver_core`,
//! with its journal on a slot of real files) on virtual time, behind a seam whose sessions are
//! the cluster's connections, and an application. Every ordering the checks rely on (a record
//! written before its command's frame goes, a batch marked handed before its frame goes, an
//! outcome handed over before its record ends) is the core's own. Seeded schedules kill the
//! process at any file operation of the journal (the support crate's test kit cuts it: with
//! part of a write on disk, or just after a call's last write before the call returns) or at
//! any step, and restart it on the same slot: what was journaled comes back and is recovered
//! under its reference. A dead process sends nothing and hands nothing over. Against the
//! cluster's records, every command is applied at most once; its outcome reaches the
//! application once, or again (`Recovered`) for each crash that fell after it was told and
//! before its record's end was sealed; a command whose call the process died in was never
//! answered. The process also has a producer in outbox mode: a batch handed before a crash is
//! reported of unknown outcome and never sent again, an unsent one is submitted again under its
//! record; against the cluster's ingestion record, no batch is ingested twice, a completed one
//! exactly once, and every answered submission is told an outcome. CI runs 200 schedules,
//! `just soak` as many as simulation seeds.
//!
//! `SimCluster` lives in [`cluster`], one module per server capability (the table above), with
//! sessions, nodes and the routing of requests in `cluster` itself.

pub mod cluster;
pub mod scenario;
pub mod sim;
pub mod transfers;

pub use cluster::{ClusterConfig, ConnId, ConnectRefused, Faults, Output, SimCluster};
pub use sim::{run_seed, NetFaults, SimConfig, Simulation};
