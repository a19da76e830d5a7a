//! Deterministic simulation driver for `nervix-protocol`.
//!
//! For now this crate holds [`SimNode`], an in-process stand-in for one Nervix node that speaks
//! real frames: it reads `ClientMessage` frames with the checked reader and answers with
//! `ServerMessage` frames written by the checked encoder, splitting large replies into transfer
//! parts. It records command outcomes by execution reference, so a repeated command is answered
//! with the recorded outcome marked `Recovered`. The session core and the fault-injecting
//! cluster build on it.

pub mod cluster;
pub mod node;
pub mod sim;

pub use cluster::{ClusterConfig, ConnId, ConnectRefused, Faults, Output, SimCluster};
pub use node::SimNode;
