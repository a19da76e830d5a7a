//! # nervix-protocol
//!
//! A sans-IO engine for the client side of the Nervix client session protocol. Nothing here
//! reads a clock, opens a socket, touches a file or draws ambient randomness: drivers hand in
//! bytes, time and seeds, and take out frames and events.
//!
//! The wire layer:
//!
//! * [`schema`]: the types flatc 25.12.19 generates from `schema/session.fbs` (views that borrow
//!   a frame, and the owned object API), committed in `src/generated/` so no build needs flatc.
//! * [`frame`]: checked reading of every frame root (F-3, F-4, F-5, F-9): size, identifier,
//!   FlatBuffers verification with the protocol's limits, then the schema's semantic rules.
//! * [`encode`]: checked writing with the send limits of F-6, one finished frame per message
//!   without a size prefix (F-2).
//! * [`transfer`]: reassembly of replies sent as transfer parts (F-7).
//! * [`violation`]: the typed protocol violation every check reports (F-8).
//! * [`report`]: a line-oriented, exact rendering of what a checked frame holds.
//!
//! The session engine:
//!
//! * [`exchange`]: one session on one stream: request identities, waiters, routing by
//!   identity, the in-flight limit and its refusals, cancellation, deadlines, and a queue of
//!   unsolicited frames bounded in count and bytes (C-1 to C-10).
//! * [`client`]: the client across sessions. It owns sessions, endpoints, back-off and the D-5
//!   restoration order, and hands every reply to one capability module: commands with exact
//!   recovery (E-1 to E-8), reads, the transaction, kept subscriptions and
//!   followed clocks.
//! * [`rows`]: typed rows of a subscription, each batch checked against its generation's
//!   schema before any value is read.
//! * [`domain_clock`]: a domain clock as observed, its ticks, and the exact projection of a
//!   paced clock between UTC and logical time (K-4).
//! * [`calls`]: the separate calls, each a machine of its own: a resource upload, the download
//!   of a backup's archive and a restore, the archive passing through in pieces (U, A, RS).
//! * [`statements`]: how NSPL statements travel (L-1 to L-3), by the release's grammar.
//! * [`choices`]: structured choice lookups with typed dependencies.
//! * [`command`], [`transaction`], [`endpoint`], [`time`], [`rng`]: execution references, the
//!   transaction binding, server addresses, time as an input and the seeded generator.
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
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

extern crate alloc;

pub mod arrow;
pub mod calls;
pub mod choices;
pub mod client;
pub mod command;
pub mod domain_clock;
pub mod encode;
pub mod endpoint;
pub mod exchange;
pub mod frame;
pub mod limits;
pub mod report;
pub mod rng;
pub mod rows;
pub mod schema;
pub mod statements;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod time;
pub mod transaction;
pub mod transfer;
pub mod violation;

#[doc(hidden)]
pub mod check;

pub use encode::{EncodeError, Encoder};
pub use frame::{Frame, Root};
pub use transfer::{TransferAssembler, TransferProgress};
pub use violation::{Fault, ProtocolViolation, Site};
