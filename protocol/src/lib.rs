//! # nervix-protocol
//!
//! A sans-IO engine for the client side of the Nervix client session protocol. Nothing here
//! reads a clock, opens a socket, touches a file or draws ambient randomness: drivers hand in
//! bytes, time and seeds, and take out frames and events.
//!
//! This crate currently provides the wire layer:
//!
//! * [`schema`]: the types flatc 25.12.19 generates from `schema/session.fbs` (views that borrow
//!   a frame, and the owned object API), built at compile time.
//! * [`frame`]: checked reading of every frame root (F-3, F-4, F-5, F-9): size, identifier,
//!   FlatBuffers verification with the protocol's limits, then the schema's semantic rules.
//! * [`encode`]: checked writing with the send limits of F-6, one finished frame per message
//!   without a size prefix (F-2).
//! * [`transfer`]: reassembly of replies sent as transfer parts (F-7).
//! * [`violation`]: the typed protocol violation every check reports (F-8 consumers build on it).
//! * [`report`]: a line-oriented, exact rendering of what a checked frame holds.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

extern crate alloc;

pub mod choices;
pub mod client;
pub mod command;
pub mod encode;
pub mod endpoint;
pub mod exchange;
pub mod frame;
pub mod limits;
pub mod report;
pub mod rng;
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
