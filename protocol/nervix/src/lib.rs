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
//!   recovery (E-1 to E-8), reads, the transaction (X-1 to X-9), kept subscriptions, followed
//!   clocks, producers and emitter consumers.
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
//! short read timeout for readiness, is the `own_loop` example of `nervix-blocking`: it runs a
//! command, a subscription and a transaction across a leader change against the loopback
//! cluster (`cargo run -p nervix-blocking --example own_loop`; a test runs it).
//!
//! `nervix-driver-support` holds the parts both of this workspace's drivers share on top of
//! this loop (request tracking, parking after refused credentials, stream routing), and
//! `sansio-kit` the transports; a new driver may use them or stand alone.
//!
//! # Behaviour reference
//!
//! What the engine does, part by part. The rule keys (F-3, C-1, ...) are the Client Implementation Manual's; `vectors/rules.tsv` in the repository maps each to its tests.
//!
//! ## The wire layer
//!
//! `schema/session.fbs` is declaration-identical to the server release's schema (same
//! declarations, members, order, types, defaults and attributes); the comments are ours. A test
//! hashes the declarations the way the release's digest was taken and fails on any difference.
//! The generator (`schema/gen`, crate `nervix-schema-gen`, run by `just regen`) runs flatc 25.12.19
//! (and stops with instructions when it is missing) and also reads the schema itself: constraint
//! marks in the doc comments (`[present]`, `[nonzero]`, `[nonempty]`, `[len=32]`, ...) become the
//! semantic checks, the report, and the generators of valid values used by the property tests and
//! the fuzzers. Its output is committed in `protocol/nervix/src/generated/` and included from
//! there, so building the crate needs no flatc; the conformance test `generated` regenerates it
//! into a scratch directory and fails, naming the file, when a committed file differs.
//!
//! Reading a frame (`Frame::<R>::check`) checks, in order: at most 4 MiB, at least 8 bytes, the
//! root's file identifier; FlatBuffers verification with nesting 64, at most `len / 4` tables and
//! an apparent size of at most `8 * len`; then every union discriminant, enum value, required
//! optional scalar, forbidden zero and empty collection, and fixed length. The 262,144-entry vector
//! limit is a send limit only: a received vector (a transfer chunk, a bytes cell, a batch body, an
//! archive chunk) is bounded by verification and the frame limit alone. Every
//! failure is a typed `ProtocolViolation` naming the member and the rule; nothing panics. Views
//! borrow the frame's `Bytes`; `check_compact` copies frames under 64 KiB out of a larger receive
//! buffer. A `ServerMessage` carrying `SubscriptionRows` is verified and checked in one walk that
//! makes the generated verifier's calls in its order; any frame that walk does not accept is
//! checked again the two-pass way, which names the fault, so the outcome is the same.
//!
//! Writing (`Encoder::encode::<R>`) applies the same rules to the owned value plus the send
//! limits (frame 4 MiB, string 64 MiB, vector 262,144 entries, nesting 64) and returns a typed
//! `EncodeError`; it writes one finished frame with the root's identifier and no size prefix.
//! The `limits` test pins every receive and send limit at its exact boundary (the limit
//! accepted, one past it refused).
//!
//! The corpus (`vectors/corpus/`) holds hand-built frames of the values careless readers break on
//! and the length and value boundaries (references of 1 and 128 bytes of every allowed character,
//! smallest and largest totals, chunk bytes 0x00, 0xff and every byte value), plus `sweep-*` frames
//! from the value generators, each kept only because it carries a union variant or enum value no
//! other frame does. A test derives every variant and value a frame can carry from the schema and
//! fails if the corpus misses one, and another fails unless every vector marked `[nonempty]` has a
//! frame giving it exactly one entry; `coverage.txt` names the first frame carrying each value and
//! the shortest length of each such vector.
//! Absent optional scalars stay absent and present zeros stay present, both ways.
//!
//! `TransferAssembler` joins the transfer parts of one reply, refusing another identity, another
//! total, a first total above 64 MiB, an out-of-order offset or an empty chunk, and hands out the
//! reply only once the joined bytes verify as a `Reply` to the same request that is not itself a
//! transfer part.
//!
//! ### What the published schema cannot carry yet
//!
//! The manual asks for three members that no published schema declares: a required
//! `start_version` in `DomainInfo` (domain lists and domain-change events), and a required
//! `start_version` and `status` in each `RestoredDomain` of a restore report, dry runs included.
//! The wire layer does not invent slots for them: a guessed member would misread the real server's
//! frames. Until a release declares them, a client built on this crate cannot decode or check those
//! values, and the rules that require them are not implemented.
//!
//! ## The session core
//!
//! `Exchange` is one session on one stream: request identities from 1 (a new session when they
//! run out), the waiter registered before its frame goes out, replies routed by identity alone,
//! late replies discarded, at most 64 requests out. A request refused as
//! `TooManyRequestsInFlight` goes again under a fresh identity written into its frame, in the
//! order it was first sent, once an earlier request is answered, or, with nothing else out, after
//! a wait that doubles with each refusal in a row; it is never resent under the answered
//! identity. The unsolicited queue is bounded in frames and in bytes and marks where frames were
//! lost; a kept frame that shares its receive buffer is copied out of it. Transfer parts for no
//! waiting request are dropped unbuffered. Every waiter ends exactly once, and says whether its
//! frame ever reached the transport.
//!
//! `Client` runs above it, across sessions. It owns sessions, endpoints, back-off and the D-5
//! restoration order, and hands each reply to one capability module of [`client`]:
//! `commands`, `reads`, `transaction`, `subscriptions`, `clocks`, `producers` and `consumers`,
//! each owning its entries, its deadlines, what it restores on a new session and what a lost
//! session means for it. Commands and reads share one state machine (the private `call`
//! module), and one function decides whether a command that ended without its outcome failed
//! (never handed to the transport) or is uncertain.
//!
//! A command gets one UUIDv7 execution reference (from the wall-clock time the driver passes in)
//! and keeps it, with its exact query, domain, position and preview, until its outcome is known;
//! it ends as `Completed`, `Failed` (only when it certainly had no effect, or the server recorded
//! a failure) or `Uncertain { command }`, which carries everything `Client::recover` needs to
//! repeat it exactly. A completed command's report holds the outcome's frame and hands out views;
//! nothing is unpacked unless asked. Redirects go to the named leader, the first at once and
//! those in a row that complete nothing after a growing wait, or back off without inventing an
//! address. After a lost session the client attaches clocks, reopens subscriptions (kept ones and
//! those the application asked for), attaches its transaction and only then repeats commands;
//! subscriptions and clock requests never go while a transaction is held or a BEGIN is
//! unanswered. Calls go out in the order they were made. A session wedged by requests nobody
//! waits for, or one that let a call's deadline pass before sending it, is replaced; so is a
//! session on which a call's deadline passes with no frame of any kind received since that call's
//! frame went out (T-8: neither side sends keepalives, so a stuck node or a half-open connection
//! is left at the first such deadline, counted from when the frame actually left, not when the
//! call was queued). The reconnect back-off grows across sessions and starts over only when a
//! reply arrives on a session: a server that accepts and at once ends or redirects every session
//! is met with growing waits, not a burst of connections. The
//! transaction binding (`Unbound`, `Bound`, `Detached`, `TakenOver`, `Finished`) is a type.
//!
//! `Client::run` takes NSPL text and sends each statement the way the release's grammar routes it:
//!
//! | statement | what the client does |
//! |---|---|
//! | `USE <domain>` | selects the domain locally; sends nothing |
//! | `LIST DOMAINS` | `ListDomainsRequest` |
//! | `ATTACH DOMAIN CLOCK`, `DETACH DOMAIN CLOCK` | the clock request for the selected domain |
//! | `CREATE SUBSCRIPTION ...` | `SubscribeRequest` with the exact text, the selected domain, type Row |
//! | `DELETE SUBSCRIPTION <name>` | `UnsubscribeRequest` |
//! | `UPLOAD RESOURCE ...`, `RESTORE ...` | separate calls: returned as `Routed::Upload` (an `UploadSpec` for the selected domain) and `Routed::Restore` (a fresh reference and the canonical statement) for the application to carry through `Transfers` (the drivers' `run` answers `Unsupported` and points there); `RESTORE` inside a transaction is refused as `InTransaction` (RS-1) |
//! | `DESCRIBE BACKUP ...` | refused: not a protocol request |
//! | anything else, `BACKUP` included | `CommandRequest`; a `BACKUP` ends at its outcome: the archive download that follows a completed one with a summary waits for the download call |
//!
//! A batch holding any routed statement is refused naming it; several statements travel only
//! inside a transaction, and `DESCRIBE TRANSACTION`, `SHOW TRANSACTIONS` and `BACKUP` alone. The
//! calls behind the statements are API calls too: `follow_clock`, `detach_clock`,
//! `subscribe`, `unsubscribe` (or `delete_subscription`), `attach_transaction`. Application input that can never
//! be sent (a query over the frame limit, a request the schema refuses, a name that is empty or
//! holds control characters) is refused at the call with a typed `ClientError`; nothing is queued
//! that cannot go. Frames that arrive before the driver reports a stream open are not read, and
//! after a protocol violation the client asks the driver to close the stream (`Action::Close`).
//!
//! Everything is driven by inputs: `handle_connected`, `handle_frame`, `handle_closed`,
//! `handle_timeout` with a `Timestamp`; outputs are drained with `poll_action`, `poll_event`,
//! `poll_unsolicited` and `poll_timeout` (a pure read that names exactly when `handle_timeout`
//! has work). The fuzz target `client` drives all of it against a hostile server.
//!
//! ## Subscriptions, rows and domain clocks
//!
//! A subscription is a `SubscriptionId` that outlives sessions and generations. `subscribe` sends
//! one `CREATE SUBSCRIPTION` statement with type Row; the opening reply's handle and schema are
//! recorded in the frame reader, before the next frame is read, so rows right behind the reply
//! are read against it. Frames are routed by name and generation together: a frame of a handle
//! the client does not hold, or of another generation (a late end of an earlier one), is ignored
//! and counted. Each subscription has its own queue of events (`poll_subscription`, or
//! `poll_subscriptions` taking them in turn): `Opened` for every generation with its schema,
//! `Rows`, `Gap` (delivery lost, rows skipped, the session lost, the relay changed, or the
//! client's own budget overflowing, each with its counts), `Refused` and a final `Ended`. After a
//! lost session a subscription is opened again as a new generation with the gap reported; every
//! refusal of an opening or reopening, `ServerBusy` included, is reported as `Refused` and sent
//! again on that session after a growing wait; one left unanswered replaces the session. A
//! `RelayChanged` end subscribes again under the relay's new definition, at once the first time
//! and then after growing, jittered waits until a generation delivers a batch; a `RelayRemoved`
//! end is final. Deleting a subscription no session holds completes
//! at once; one whose opening is out is unsubscribed as soon as the opening answers; a deletion
//! whose session ends is complete. The name stays in use until then; a second deletion while one
//! is out is refused at the call (`DeletionInProgress`). Every event is charged to a
//! per-subscription budget (never below one 4 MiB frame) and a total budget: a batch or an opening
//! by its frame, anything else by a fixed cost and its message, so both bytes and count are
//! bounded; only the final `Ended` is always kept. What does not fit is dropped and reported as
//! one `Gap::Overflow` in its place, counting the batches and rows dropped and every other event
//! (an opening, a refusal, a session or relay gap), so no refusal goes unreported, and a full subscription never holds back any other frame.
//! Between generations an unread opening, refusal, session loss or relay change is replaced by a
//! newer one of its kind, and the newer goes last, so the order read stays true. Nothing promises every row, a row exactly once, or resumption from a
//! position. The API docs say when to subscribe with DROPPING rather than BLOCKING delivery.
//!
//! `rows` checks a batch against its generation's schema before any value can be read (R-2: the
//! branch key present exactly for a branched relay, one cell per field in order, withheld exactly
//! on sensitive fields, null only on nullable ones, exact cell types, fixed list lengths, no null
//! or withheld list element); a batch that does not conform is a protocol violation that ends the
//! session. `CheckedBatch` hands out zero-copy `Value`s over the frame: integers of their own
//! width and sign, DATETIME as signed nanoseconds, text that may hold NUL, raw bytes, floats by
//! their exact bits, and `Null`, `Withheld` and present values kept apart; `to_owned_rows` copies.
//!
//! A followed clock is known by its domain (`follow_clock`, `detach_clock`, `clock`,
//! `poll_clock_event`). The attach reply's clock is applied before any state or tick frame; a tick
//! counts only against the state of its own paced generation and only if it advances; only the
//! newest unread tick is kept (a newer tick or state replaces an unread one). A domain is followed
//! at most once, and no attach is decided while its detach is unanswered; a detach goes behind an
//! attach already out, and that attach's reply is still applied: its clock (ticks then update
//! `clock()` silently until the detach is answered), or its `DomainNotFound`, which ends the
//! attachment once the detach is answered whatever its answer; a refused detach is followed by
//! what was not told. A replaced unread clock event leaves its place and the newer goes last, so
//! the last event read agrees with the state. An attach or detach reply naming another domain is
//! a K-1 protocol violation that ends the session. After a lost session every followed clock is attached again first of all,
//! with the tick frontier cleared; `DomainClockAlreadyAttached` keeps the clock last received
//! without a tick; `DomainNotFound` ends the attachment; another refusal keeps it interrupted and
//! tries again after a growing wait; an attach left unanswered replaces the session. A move to
//! another session after a redirect keeps the newest tick of a clock that stays paced in the same
//! generation. `domain_clock::PacedClock` projects the committed mapping exactly in integers:
//! the logical time at a UTC instant, the UTC wait until a logical time (never early), and a
//! tick's admission window.
//!
//! ## Uploads, backup downloads and restores
//!
//! Each is a separate call with a sans-IO machine of its own in [`calls`], on its own
//! stream and never on the session: `UploadCall` (`UPLOAD RESOURCE`, U-1 to U-5), `BackupDownload`
//! (A-1 to A-8) and `RestoreCall` (`RESTORE`, RS-1 to RS-5). `Client::run` routes the statements
//! to `Routed::Upload` and `Routed::Restore` (a restore is refused inside a transaction) with a
//! new identity or reference; a completed `BACKUP`, which waits for its own bound, carries the
//! summary `BackupDownload::from_report` reads. A machine says what it needs (`need`: a start, the
//! next piece at an offset, the reply, the next frame) and turns each piece into exactly one chunk
//! frame of 64 KiB (uploads) or 256 KiB (restores), hashing with BLAKE3 as bytes pass; no machine
//! holds an archive whole. `chunk` copies a borrowed piece once behind the frame's start;
//! `chunk_parts` takes a piece already in `Bytes` and returns the start and the piece apart, so a
//! driver that reads into its own buffers writes them without another copy. A download checks frame order, refuses growth past the declared size,
//! and gives `Verified` only after `BackupArchiveComplete` with size and digest equal to the
//! summary's; until then its bytes are handed out unverified. A `BackupDownloadFailed` is only ever
//! the whole answer (A-2): after `BackupArchiveStart` it is a protocol violation, whatever its
//! kind, and the archive may be downloaded again from its first byte (A-6).
//!
//! Recovery: every frame and the reply have their own wait, not a command deadline. An attempt
//! cut, stalled or answered with a violation ends as `Interrupted`, and the next attempt repeats
//! the whole archive from its first byte under the same upload identity or execution reference
//! (a download restarts from byte 0); `uncertain` says whether some attempt carried the whole
//! archive. A repeat whose bytes no longer hash to the first complete attempt's withholds its
//! last frame, so a changed archive is never completed under an old identity.
//!
//! `nervix-driver-support` (no runtime) holds what drivers share: `ArchiveSource` reads the pieces
//! from any `Read + Seek` and computes size and digest in one streaming pass, and `ArchiveWriter`
//! (A-4) writes a download to an owner-only temporary file beside the target, fsyncs it, and
//! renames it into place only for a `Verified` verdict; anything else, a cut or a killed process
//! leaves nothing under the final name. `nervix_harness::transfers` drives the machines against
//! `SimCluster`, which installs versioned resources, retains an archive for one download and
//! answers restores with step reports, with cuts, lost replies, digest mismatches, overgrown
//! archives and redirects as faults. The in-process demo (`cargo run -p nervix-loopback --bin
//! nervix-sim`) backs up a domain through the client, downloads and verifies its archive, and
//! restores it as a copy, one line each.
//!
//! RS-4 is partial: the published schema's `RestoredDomain` has no `status` and no
//! `start_version`, so a `RestoredDomainInfo` carries what the schema declares (source, domain,
//! resource versions, models, whether a planner report came) and neither of those two values
//! (see above).
//!
//! ## Producers and emitter consumers
//!
//! `arrow` gives each field type its Arrow form (DATETIME as UTC nanosecond timestamps, lists of a
//! non-null `item`, no metadata) and writes a batch as one canonical IPC stream: the schema, exactly
//! one record batch and the end marker, uncompressed, without dictionaries, extensions or field
//! metadata. A `BatchBuilder` takes values column by column and checks them against the
//! producer's fields (type, nullability, sensitivity, length); an application's own
//! `RecordBatch` is checked the same way, and a mismatch is a typed error naming the column. A
//! batch the server would refuse (too many rows or bytes of the grant, or more than a submission
//! can carry) is refused locally.
//!
//! `open_producer` sends the exact fields and a credit within 1,024 batches and 32 MiB, and follows
//! the producer before its open completes. Each batch holds one of the granted batches and its size
//! of the granted bytes from send until the application reads its outcome (P-4), so outcomes nobody
//! reads are bounded by the grant; reading one makes the engine's next timeout due at once, so
//! waiting batches go. A driver that hands outcomes on takes them with
//! `poll_producer_events_held` and gives each credit back with `release_outcome` once the
//! application read the outcome or dropped its handle; both drivers do, so a `PendingBatch` holds
//! its batch's credit until it is read or dropped. Nothing is sent that does not fit, or while admission is suspended, and
//! unread admission changes are coalesced: a newer one replaces the older and is queued last
//! (P-6). An open reply naming another domain, ingestor or emitter is a protocol violation (P-1,
//! EC-1) that ends the session and the attachment with it. Every batch ends with exactly one outcome; only `NotAdmitted` Suspended
//! or Busy is sent again, after the ingestor's doubling back-off, and no `CancelRequest` is ever
//! sent for a batch. Outcomes stay retrievable after a caller stops waiting. A lost session reports
//! every unanswered batch as of unknown outcome and never resends it; on a new session the producer
//! is opened again only if its generation, contract, fields, policy and grant match, and otherwise
//! ends `ReopenRequired`. A restoration refused for capacity, by the owner or by an endpoint still
//! catching up is tried again after growing waits; one refused `InTransaction` ends
//! `ReopenRequired` (the application's transaction may be held for ever), and the batches waiting
//! for it end `NotSent`. Close and drop win over a restoration in flight.
//!
//! `open_consumer` opens a TO CLIENT emitter with its exact ordered fields and nonzero limits. At
//! most one read is out per attachment, and a reply nobody waits for is handed to the next read.
//! A read refused as `ServerBusy` goes again after a growing wait; one refused for a defect
//! (InvalidRequest, UnsupportedRequest, UnsupportedValue, DuplicateRequestId, ReplyTooLarge) is
//! never sent again: the consumer ends `ReopenRequired(ReadRejected)` and its attachment is closed
//! (C-8). A settle reply without a disposition is `Uncertain`.
//! A delivery's IPC body is decoded and checked against the consumer's fields and its row count;
//! its framing is walked first (every buffer inside its body and 8-byte aligned, offsets buffers of
//! whole values, counts within `u32`, no compression), because the Arrow reader panics on such
//! metadata: the `arrow_delivery` fuzz target found three such panics.
//! Only the current attempt is settled (Ack, Retry or Reject with a short, non-sensitive reason),
//! an Ack counts once `Confirmed` arrives, a lost settlement answer is uncertain, and a revoked
//! reference never reaches a replacement attachment. A new session restores producers and consumers
//! after clocks and subscriptions and before the transaction; each reports `Interrupted`, then
//! `Restored` or `ReopenRequired`.
//!
//! The simulated cluster serves an ingestor with credit, admission changes, `ProducerEnded` and
//! every outcome kind, and a TO CLIENT emitter with attempts, acknowledgement timeouts, redelivery
//! under new references and a parallel window; the simulation checks that credit is never exceeded,
//! no batch is sent again after its session was lost, every batch ends once, and no attempt is
//! settled twice.
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
mod one_pass;
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
