//! # nervix-protocol
//!
//! ```
//! use nervix_protocol::client::{Action, Client, ClientConfig};
//! use nervix_protocol::endpoint::Endpoint;
//! use nervix_protocol::time::{Timestamp, UnixMillis};
//!
//! let seeds = vec![Endpoint::parse("https://node-1.example:8443/").unwrap()];
//! let mut engine = Client::new(ClientConfig::new(seeds, 7)); // 7 seeds its randomness
//! let (now, wall) = (Timestamp::ZERO, UnixMillis(1_780_000_000_000)); // time is an input
//! let command = engine.execute(now, wall, "SHOW DOMAINS;").unwrap();
//! // The engine asks for a session; its frame leaves once the driver says the stream is open.
//! let Some(Action::Connect { session, .. }) = engine.poll_action() else { unreachable!() };
//! engine.handle_connected(now, session);
//! assert!(matches!(engine.poll_action(), Some(Action::Send { session: s, .. }) if s == session));
//! # let _ = command;
//! ```
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
//!   recovery (E-1 to E-8), reads, the transaction (X-1 to X-9), kept subscriptions and
//!   followed clocks.
//! * [`rows`]: typed rows of a subscription, each batch checked against its generation's
//!   schema before any value is read (R-1 to R-5).
//! * [`domain_clock`]: a domain clock as observed, its ticks, and the exact projection of a
//!   paced clock between UTC and logical time (K-4).
//! * [`calls`]: the separate calls, each a machine of its own: a resource upload, the download
//!   of a backup's archive and a restore, the archive passing through in pieces (U, A, RS).
//! * [`statements`]: how NSPL statements travel (L-1 to L-3), by the release's grammar.
//! * [`choices`]: structured choice lookups with typed dependencies (Q-1, Q-2).
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
//!
//! ## Writing your own driver
//!
//! The engine, [`client::Client`], is a state machine with four inputs and four outputs. A
//! driver owns the sockets and the clock and keeps one promise: after every input, it drains
//! every output before it waits again. What a driver must do:
//!
//! 1. **Pass `now` on every input.** Every call takes a [`time::Timestamp`] from one monotonic
//!    clock the driver chose (nanoseconds since an origin of its own); calls that make a
//!    command also take [`time::UnixMillis`], wall-clock UTC, for its UUIDv7 reference (E-1).
//!    The engine never reads a clock, so a stale `now` is a late deadline.
//! 2. **Drain every poll after every input.** [`client::Client::poll_action`] until `None`, then
//!    [`client::Client::poll_event`], [`client::Client::poll_unsolicited`] and the stream polls
//!    the application uses (`poll_subscriptions`, `poll_clock_event`, the producer and consumer
//!    polls). An action left in the engine is a frame not sent; an event left there is a
//!    caller never answered.
//! 3. **Honour [`client::Client::poll_timeout`].** It is the earliest instant the engine needs
//!    to act without any input (a deadline, a back-off, a retry). Wake no later than that and
//!    call [`client::Client::handle_timeout`]; the instant moves after every input, so ask
//!    again each time round the loop.
//! 4. **Map [`client::Action`]s to streams.** `Connect { session, endpoint }` opens one stream
//!    (the bidirectional gRPC call `/nervix.session.Session/Exchange`, or a WebSocket on
//!    `/console/ws`) and is answered with
//!    [`client::Client::handle_connected`] once it is open or
//!    [`client::Client::handle_closed`] if it never opens. `Send { session, frame }` writes the
//!    bytes as one transport message (F-2: one gRPC message, one binary WebSocket message).
//!    `Close { session, clean }` ends the stream: a clean end (a gRPC half-close, a WebSocket
//!    close frame) reverts a held transaction (X-7); an unclean one just drops the connection.
//!    Give each action to the session it names; never reorder the frames of one session.
//! 5. **Report every frame and every close.** Each received message goes in whole through
//!    [`client::Client::handle_frame`] (the engine checks it: bad bytes are a typed violation
//!    and an [`client::Action::Close`], never a panic); every end of a stream, clean or not,
//!    through [`client::Client::handle_closed`], so what was in flight on it is decided.
//! 6. **Keep a pending transmit across back-pressure.** When a socket cannot take a frame
//!    now, keep it and the ones after it, in order, and write them when the socket has room;
//!    never drop one and never let a later frame of the same session overtake it. Bound that
//!    queue and give each write a deadline of its own (T-8): a peer that stops reading must end
//!    the stream, not grow the queue.
//!
//! The loop, with the transport left out (here a peer that never answers; a real driver reads
//! sockets and waits for readiness or the timeout):
//!
//! ```
//! use nervix_protocol::client::{Action, Client, ClientConfig, ClientEvent};
//! use nervix_protocol::endpoint::Endpoint;
//! use nervix_protocol::time::{Timestamp, UnixMillis};
//! use std::time::Duration;
//!
//! let seeds = vec![Endpoint::parse("https://node-1.example:8443/").unwrap()];
//! let mut engine = Client::new(ClientConfig::new(seeds, 7)); // the seed of its randomness
//! let mut now = Timestamp::ZERO;
//! let wall = UnixMillis(1_780_000_000_000);
//! let command = engine.execute(now, wall, "SHOW DOMAINS;").unwrap();
//!
//! let mut opened = Vec::new();
//! let mut outcome = None;
//! for _ in 0..10_000 {
//!     // 2. Drain every output after every input.
//!     while let Some(action) = engine.poll_action() {
//!         match action {
//!             // 4. Open a stream; this example's transport opens it at once.
//!             Action::Connect { session, .. } => opened.push(session),
//!             Action::Send { .. } => {} // write the frame, or keep it in order (6)
//!             Action::Close { .. } => {} // half-close or drop the stream
//!             _ => {}
//!         }
//!     }
//!     for session in opened.drain(..) {
//!         engine.handle_connected(now, session); // 1. `now` on every input
//!     }
//!     while let Some(event) = engine.poll_event() {
//!         if let ClientEvent::Command { handle, result } = event {
//!             assert_eq!(handle, command);
//!             outcome = Some(result);
//!         }
//!     }
//!     if outcome.is_some() {
//!         break;
//!     }
//!     // 3. Sleep until the engine's next deadline (or until a socket is ready), then say so.
//!     let Some(wake) = engine.poll_timeout() else { break };
//!     now = wake.max(now + Duration::from_millis(1));
//!     engine.handle_timeout(now);
//! }
//! // Nobody answered: the command's deadline ended it, and it says whether it may have run.
//! assert!(outcome.is_some());
//! ```
//!
//! A whole driver of this kind, about 250 lines on one thread with blocking WebSockets and a
//! short read timeout for readiness, is `drivers/blocking/examples/own_loop.rs`: it runs a
//! command, a subscription and a transaction across a leader change against the loopback
//! cluster (`cargo run -p nervix-blocking --example own_loop`; a test runs it).
//!
//! `nervix-driver-support` holds the parts both of this workspace's drivers share on top of
//! this loop (request tracking, parking after refused credentials, stream routing), and
//! `sansio-kit` the transports; a new driver may use them or stand alone.
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
