//! # sansio-kit
//!
//! ```
//! use sansio_kit::{backoff::Backoff, dial::Target, grpc};
//! use std::time::Duration;
//!
//! let target = Target::parse("https://node-1.example:8443/").unwrap();
//! assert_eq!((target.host.as_str(), target.port, target.tls), ("node-1.example", 8443, true));
//!
//! let retry = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
//! assert_eq!(retry.pause(3), Duration::from_millis(400)); // doubling, at most 5 s
//!
//! let mut reader = grpc::MessageReader::with_limit(1 << 20);
//! reader.push(&grpc::grpc_message(b"frame")); // one length-prefixed gRPC message
//! assert_eq!(reader.next_message().unwrap().as_deref(), Some(&b"frame"[..]));
//! ```
//!
//! What the driver of any sans-IO engine needs around the engine, written once. This crate
//! knows no engine: it never names an engine's frames, rules, paths or outcomes, and no
//! engine crate is among its dependencies. An engine's driver crate depends on it, with the
//! `tokio` feature for an async driver or the `blocking` feature for one on std threads, and
//! keeps for itself only what its engine decides (which path, which subprotocol, what a close
//! code or a status means, when to try again).
//!
//! Without a feature (the standard library and rustls alone):
//!
//! * [`resolve`]: the resolver host names are looked up with (the system's by default, or
//!   fixed answers), each lookup on a thread of its own so a deadline cuts it, at most
//!   [`resolve::LOOKUPS`] at once; [`resolve::ConnectError`], why a connection could not be
//!   opened.
//! * [`dial`]: where a connection goes ([`dial::Target`]: host, port, TLS or not, parsed
//!   from a URL-ish text), the addresses in the order of the answer with the last failure
//!   kept, and TLS: rustls on the ring provider, the given roots, one ALPN protocol, the
//!   certificate verified against the target's own host name.
//! * [`observe`]: observer queues bounded in count and bytes; what an observer does not read
//!   in time is dropped for it alone, counted, and reported in its place.
//! * [`unclaimed`]: the bounded store of outcomes whose callers stopped waiting, generic
//!   over the outcome and an engine's [`unclaimed::Keep`] policy (its weight, and which
//!   outcomes outlive the others), with what the bounds drop counted.
//! * [`backoff`]: the pause that doubles with each failed attempt up to a bound.
//! * [`basic`]: HTTP Basic credentials and percent-encoding.
//! * [`grpc`]: gRPC message framing and a message reader bounded by its limit.
//! * [`rng`]: SplitMix64, the seeded generator of the simulations.
//!
//! With `tokio`: [`tokio`], dialling with the connection deadline (TCP, then rustls), a
//! WebSocket client handshake with a chosen path, subprotocol and headers, and the HTTP/2
//! set-up of a gRPC call. With `blocking`: [`blocking`], the same over std sockets and
//! tungstenite. [`ws`] says alike for both what a WebSocket message or read error is: text
//! or binary, a close and its code, a message above the size limit.

pub mod backoff;
pub mod basic;
pub mod dial;
pub mod grpc;
pub mod observe;
pub mod resolve;
pub mod rng;
pub mod unclaimed;

#[cfg(feature = "blocking")]
pub mod blocking;
#[cfg(feature = "tokio")]
pub mod tokio;
#[cfg(any(feature = "tokio", feature = "blocking"))]
pub mod ws;
