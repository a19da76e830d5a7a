//! A CultNet receipt server model and a seeded simulation of the client's write tracker
//! against it.
//!
//! * [`server`]: the sans-IO receipt server (W-15 to W-32), with a legacy mode and faults.
//! * [`forwarder`]: a server that forwards writes to a primary and relays only its answers.
//! * [`probe`]: reads what a server must name from a frame the codec refused.
//! * [`sim`]: the seeded simulation: a `WriteTracker` against a server or forwarder over a
//!   simulated channel, with every invariant checked at the end of a run.
//!
//! Nothing here opens a socket or reads a clock: time is an input, and every random choice of
//! the simulation comes from its seed.

pub mod forwarder;
pub mod probe;
pub mod server;
pub mod sim;
