//! Tokio driver of the Nervix client, and an async API for applications.
//!
//! ```no_run
//! use nervix_tokio::{Client, CommandResult, Config, Credentials, Transport};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let seeds = ["https://node-1.example:8443/", "https://node-2.example:8443/"];
//! let config = Config::new(&seeds, Credentials::new("reader", "secret"), Transport::Grpc)?;
//! let client = Client::connect(config).await?;
//! match client.execute("SHOW DOMAINS;").await? {
//!     CommandResult::Completed(report) => println!("{report:?}"),
//!     // It may have run: repeat it exactly, under the same reference (E-4).
//!     CommandResult::Uncertain { command, .. } => println!("{:?}", client.recover(&command).await?),
//!     other => println!("{other:?}"),
//! }
//! client.close(false).await?;
//! # Ok(())
//! # }
//! ```
//!
//! The sans-IO engine ([`nervix_protocol::client::Client`]) runs in one driver task. The task
//! opens the sessions the engine asks for over real transports, hands it every frame and
//! every end with the time of its wake-up, re-reads the engine's next deadline after every
//! drain, and keeps frames the transport cannot take yet until it can (back-pressure). What
//! the task decides is `nervix-driver-support`'s driver core, which the blocking driver runs
//! too: the application's calls, the routing of events and the queues are written once there,
//! and this crate keeps its runtime, its sockets and how its task wakes up.
//!
//! * gRPC: the bidirectional call `/nervix.session.Session/Exchange` over HTTP/2 (the `h2`
//!   crate directly: a session is one raw byte stream of length-prefixed messages, so neither
//!   code generation nor a protocol-buffer codec has anything to do, and the driver keeps full
//!   control of flow control and trailers). Each message is one uncompressed frame behind
//!   the 5-byte gRPC prefix, at most the 4 MiB frame limit either way (T-1); a message
//!   declared larger is refused before it is read (F-3).
//! * WebSocket: `/console/ws` over `ws` or `wss`, binary messages only, the same limit; a
//!   close with 1003, 1007, 1008 or 1009 is a defect in what we sent, 1001 a transport
//!   failure (T-3). Redirects lead to the leader's `web_console_uri` (T-7).
//! * TLS: rustls on the ring provider, verified against the endpoint's own host name on
//!   every connection, redirects and reconnects included; the engine never moves from https
//!   to http (T-2). DNS and every address attempt fit in the connection deadline.
//! * Credentials: `authorization: Basic base64(user:password)` on every call, or on the
//!   console the header or the percent-encoded `auth` query parameter (T-4). A refusal
//!   (UNAUTHENTICATED, 401) is never retried with the same credentials: the driver stops
//!   connecting until [`Client::set_credentials`] (T-5); UNAVAILABLE and 503 back off and
//!   retry. A call ended with OUT_OF_RANGE or INTERNAL, or a console closed as our defect,
//!   stops the client: nothing of it is sent again (T-6, T-3).
//! * Every wait has a deadline of the engine's or the driver's own (T-8): opening a session,
//!   each write, every call.
//!
//! [`Client`] is the application's handle. [`Client::execute`] returns the engine's typed
//! [`CommandResult`]: `Completed`, `Failed` or `Uncertain` naming the execution reference.
//! Every future is cancel-safe: dropping one stops the caller's wait and nothing else
//! (C-10); the command goes on, and its outcome, once known, is kept for
//! [`Client::unclaimed`].
//!
//! # Behaviour reference
//!
//! `nervix-tokio` runs the sans-IO engine in one tokio task over real transports:
//!
//! * gRPC `/nervix.session.Session/Exchange` over HTTP/2, written on `h2` directly: a session is a
//!   stream of length-prefixed raw frames, so no codec or code generation is needed, and the driver
//!   controls flow control (a frame waits for send capacity, bounded by a write deadline) and reads
//!   `grpc-status` itself. Messages are uncompressed and at most 4 MiB; a larger one from the server
//!   is refused from its prefix, unread (F-3).
//! * WebSocket `/console/ws` (ws/wss), binary messages only, 4 MiB limit; close codes 1003, 1007,
//!   1008 and 1009 are a defect in what the client sent, 1001 a transport failure. Redirects lead to
//!   the leader's `web_console_uri` (the engine's `LeaderUri::WebConsole`).
//! * TLS: rustls with the ring provider, roots from the configuration, verified against the
//!   endpoint's own host name on every connection, redirects and reconnects included. Names are
//!   looked up by `Config::resolver` (the system's by default, `HostsResolver`, or any `Resolve`)
//!   on a thread cut by the connection deadline (at most `LOOKUPS`, 8, unanswered at once per
//!   resolver, so a silent resolver cannot take a thread per attempt without bound); addresses are
//!   tried in the order of the answer,
//!   and a failed connection keeps its typed cause (`ConnectError`, `Lookup { host, source }`
//!   with the resolver's own error kind).
//! * A gRPC body that ends inside a message (a cut length prefix, or fewer bytes than a prefix
//!   promised) is a transport failure whatever `grpc-status` says. CANCELLED, UNKNOWN,
//!   DEADLINE_EXCEEDED and PERMISSION_DENIED end the session as transport failures. A console
//!   session whose write fails reads on for up to 200 ms and 64 frames for the server's close code
//!   before it reports the failure, so a 1003/1007/1008/1009 is never mistaken for a cut (T-3).
//! * Basic credentials on every call (`authorization` header; on the console the header or the
//!   percent-encoded `auth` query); a user name holding `:` would be read as another identity and
//!   is refused at configuration (`ConfigError::Credentials`). UNAUTHENTICATED or 401 parks the client: nothing is retried until
//!   `Client::set_credentials`; UNAVAILABLE or 503 backs off and retries. OUT_OF_RANGE, INTERNAL or a
//!   defect close code stops the client: outstanding commands are cancelled (failed when never sent,
//!   otherwise uncertain with their reference) and nothing is sent again.
//!
//! The async API: `Client::connect(Config)`, `execute` (a typed `CommandResult`), `submit` (the
//! reference at once, the result later), `run` (routed statements), `read`, `transaction()`
//! (`execute`, `commit`, `revert`), `events()`, `unclaimed()`. Every future is cancel-safe: dropping
//! one stops that wait only; the command goes on and its outcome is kept for `unclaimed()` (C-10):
//! a dropped wait closes its channel before it reads what is left (the blocking driver hands a
//! result over under one lock with the waiter's leaving), so an outcome sent at that instant is
//! never lost. The store of outcomes nobody waited for holds at most `UNCLAIMED` (1,024) outcomes
//! and `UNCLAIMED_BYTES` (16 MiB); settled ones are evicted before uncertain ones (an uncertain one
//! may be the only copy `recover` needs), and every eviction is counted (`unclaimed_lost`) and
//! reported (`DriverEvent::UnclaimedLost`). Every observer of `events()`, in both drivers, holds at
//! most `OBSERVER_QUEUE` (1,024) events and `OBSERVER_BYTES` (8 MiB), an unsolicited frame counting
//! its length; what it does not read in time is dropped for it alone, counted (`lost()`) and
//! reported in its place as `DriverEvent::EventsLost(n)`.
//! `subscribe(statement)` returns a `Subscription`, a `Stream` of `SubscriptionEvent`s: `Opened` per
//! generation, `Rows` as `CheckedBatch` views read in place, `Gap` as an item of its own, and `Ended`
//! last. The driver moves events out of the engine only while the stream's queue has room, and a
//! subscription's queue holds two events (the blocking driver's one, and one held back), so at most
//! two frames stand outside the engine's retention budget (S-8), which decides what a slow reader
//! loses, as an `Overflow` gap.
//! `follow_clock(domain)` returns a `ClockFollow`, a `Stream` of `ClockEvent`s, one unread event of
//! each kind kept (K-3). Dropping a `Subscription` deletes the subscription (S-6, after the
//! transaction when one is held); dropping a `ClockFollow` detaches the clock. `DriverEvent::SessionLost`
//! carries the engine's typed `SessionLoss`. The loopback server advances the cluster when
//! `SimCluster::next_due` says, so rows and ticks flow on time.

/// The workspace README's Rust examples, compiled and checked as this crate's doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

mod calls;
mod config;
mod dataplane;
mod driver;
mod net;
mod streams;
mod transport;

pub use calls::{
    TransferError, Transfers, DOWNLOAD_PATH, DOWNLOAD_WS_PATH, RESTORE_PATH, RESTORE_WS_PATH,
    UPLOAD_PATH,
};
pub use config::{Config, Transport};
// The names both drivers give alike: errors and events, the configuration's parts, the
// engine's outcome and event types, the journal's (feature `journal`) and the bounds.
pub use nervix_driver_support::exports::*;
#[doc(hidden)]
pub use transport::read_grpc_body;
pub use transport::{
    console_url, grpc_message, End, MessageError, MessageReader, CONSOLE_PATH, EXCHANGE_PATH,
};

pub use dataplane::{Consumer, PendingBatch, Producer, Submission};
pub use nervix_driver_support::observe::WatchError;
pub use streams::{ClockFollow, Subscription};

use driver::{Driver, Request, RunSubmitted, Submitted};
use nervix_driver_support::dataplane::Call;
use nervix_driver_support::observe::{Hub, Watch};
use nervix_protocol::exchange::Unsolicited;
use nervix_protocol::frame::ServerFrame;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::transaction::Binding;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// One observer's events (see [`Client::events`]): [`Events::recv`] waits for the next,
/// [`Events::try_recv`] takes one if queued, [`Events::lost`] counts what was dropped.
pub type Events = Watch<DriverEvent>;

/// A command on its way: its execution reference is known at once, and awaiting it gives
/// its result. Dropping it stops the wait only; the outcome is then kept for
/// [`Client::unclaimed`] (C-10).
#[derive(Debug)]
pub struct PendingCommand {
    reference: String,
    result: oneshot::Receiver<CommandResult>,
    unclaimed: driver::Unclaimed,
}

impl PendingCommand {
    /// The command's execution reference (E-1).
    pub fn reference(&self) -> &str {
        &self.reference
    }
}

impl Future for PendingCommand {
    type Output = Result<CommandResult, Error>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.result)
            .poll(cx)
            .map(|r| r.map_err(|_| Error::Stopped))
    }
}

impl From<Submitted> for PendingCommand {
    fn from(s: Submitted) -> Self {
        Self {
            reference: s.reference,
            result: s.result,
            unclaimed: s.unclaimed,
        }
    }
}

impl Drop for PendingCommand {
    /// An outcome that arrived but was never read is kept for [`Client::unclaimed`] (C-10):
    /// dropping the wait must not lose what the client already holds. The channel is closed
    /// first, so an outcome sent from now on comes back to the driver, which keeps it; what
    /// came before is read here.
    fn drop(&mut self) {
        self.result.close();
        if let Ok(r) = self.result.try_recv() {
            self.unclaimed.keep(r);
        }
    }
}

/// An application's handle on a Nervix client; cheap to clone. The driver task stops when
/// the last handle is dropped or [`Client::close`] is called.
#[derive(Debug, Clone)]
pub struct Client {
    requests: mpsc::Sender<Request>,
    notify: Hub<DriverEvent>,
    unclaimed: driver::Unclaimed,
    /// Where the separate calls made with this client keep their records (feature `journal`).
    #[cfg(feature = "journal")]
    pub(crate) transfer_journal:
        Option<nervix_driver_support::transfer_journal::TransferJournalHandle>,
}

impl Client {
    /// Starts a client and opens its first session with a domain listing, within the
    /// connection deadline. Fails with [`Error::Unauthenticated`] when the credentials are
    /// refused and [`Error::Unreachable`] when no session opened in time.
    pub async fn connect(config: Config) -> Result<Self, Error> {
        let client = Self::start(config.clone())?;
        let wait = config.client.connect_timeout + config.client.call_timeout;
        let probe = client.read(
            ClientRequestT::ListDomainsRequest(Box::default()),
            Some(wait),
        );
        match tokio::time::timeout(wait + Duration::from_secs(1), probe).await {
            Ok(Ok(ReadResult::Replied(_))) => Ok(client),
            Ok(Ok(_)) | Err(_) => Err(Error::Unreachable),
            Ok(Err(e)) => Err(e),
        }
    }

    /// Starts a client without opening a session; it connects when there is work.
    pub fn start(config: Config) -> Result<Self, Error> {
        config.check()?;
        let tls = Some(net::dialer(&config).map_err(|e| Error::Tls(e.to_string()))?);
        let (requests, rx) = mpsc::channel(256);
        let notify = Hub::default();
        let unclaimed = driver::Unclaimed::default();
        #[cfg(feature = "journal")]
        let (journal, transfer_journal) =
            nervix_driver_support::journaled::open_with_transfers(config.journal.as_ref())?;
        #[cfg_attr(not(feature = "journal"), allow(unused_mut))]
        let mut driver = Driver::new(config, tls, rx, notify.clone(), unclaimed.clone());
        #[cfg(feature = "journal")]
        driver.core.set_journal(journal);
        tokio::spawn(driver.run());
        Ok(Self {
            requests,
            notify,
            unclaimed,
            #[cfg(feature = "journal")]
            transfer_journal,
        })
    }

    async fn call<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, Error>>) -> Request,
    ) -> Result<T, Error> {
        let (tx, rx) = oneshot::channel();
        self.requests
            .send(make(tx))
            .await
            .map_err(|_| Error::Stopped)?;
        rx.await.map_err(|_| Error::Stopped)?
    }

    /// Hands a command to the engine with a new UUIDv7 reference and returns at once with it;
    /// await the [`PendingCommand`] for the result.
    pub async fn submit(&self, query: &str) -> Result<PendingCommand, Error> {
        let query = query.to_string();
        self.call(|reply| Request::Execute { query, reply })
            .await
            .map(PendingCommand::from)
    }

    /// Executes one command and waits for its result: `Completed` from its own outcome,
    /// `Failed` only when it certainly took no effect, otherwise `Uncertain` naming its
    /// reference (D-4, E-3).
    pub async fn execute(&self, query: &str) -> Result<CommandResult, Error> {
        self.submit(query).await?.await
    }

    /// Repeats an uncertain command exactly, to learn its outcome (E-2, E-3): the same
    /// reference, query, domain, position and preview, under a new request identity. The
    /// server answers from its record when the first attempt ran (`Recovered`), or runs it
    /// now; it never runs twice. Pass the `command` of a [`CommandResult::Uncertain`].
    pub async fn recover(&self, command: &RetainedCommand) -> Result<CommandResult, Error> {
        let command = Box::new(command.clone());
        self.call(|reply| Request::Recover { command, reply })
            .await
            .map(PendingCommand::from)?
            .await
    }

    /// Runs one NSPL statement the way it travels (L-2): a command, a request of its own, or
    /// a local domain selection.
    pub async fn run(&self, statement: &str) -> Result<RunResult, Error> {
        let query = statement.to_string();
        match self.call(|reply| Request::Run { query, reply }).await? {
            RunSubmitted::Command(s) => PendingCommand::from(s).await.map(RunResult::Command),
            RunSubmitted::Read(rx) => rx.await.map_err(|_| Error::Stopped)?.map(RunResult::Read),
            RunSubmitted::Selected(d) => Ok(RunResult::DomainSelected(d)),
        }
    }

    /// Sends a read and waits for its reply, repeated on a new session if one is lost, until
    /// `deadline` (the call deadline by default).
    pub async fn read(
        &self,
        request: ClientRequestT,
        deadline: Option<Duration>,
    ) -> Result<ReadResult, Error> {
        // The result, or why the read was not sent, comes on one channel: the application's
        // task is woken once per read, not once when it is sent and again when it is answered.
        self.call(|result| Request::ReadTo {
            request,
            deadline,
            result,
        })
        .await
    }

    /// Selects the domain commands name (L-1).
    pub async fn select_domain(&self, domain: Option<&str>) -> Result<(), Error> {
        let domain = domain.map(str::to_string);
        self.call(|reply| Request::SelectDomain { domain, reply })
            .await
    }

    /// The transaction binding.
    pub async fn binding(&self) -> Result<Binding, Error> {
        self.call(Request::Binding).await
    }

    /// What the client has done so far: the engine's counters and the store of outcomes
    /// nobody waited for.
    pub async fn stats(&self) -> Result<Stats, Error> {
        self.call(Request::Stats).await
    }

    /// Begins a transaction in the selected domain (X-1) and returns its helper, or the
    /// `BEGIN`'s result when it did not complete.
    pub async fn transaction(&self) -> Result<Result<Transaction, CommandResult>, Error> {
        match self.execute("BEGIN;").await? {
            CommandResult::Completed(_) => Ok(Ok(Transaction {
                client: self.clone(),
            })),
            other => Ok(Err(other)),
        }
    }

    /// What the journal held when this client started (feature `journal`), once: the
    /// commands a crashed client left, in the order they were written. A
    /// [`JournaledCommand::Repeatable`] goes to [`Client::recover`], which repeats it exactly
    /// under its reference and gives its recorded outcome; a [`JournaledCommand::Unknown`] is
    /// past its retry validity (E-4) and is never repeated. Beside them, the uploads and
    /// restores left outstanding (`transfers`): a [`JournaledTransfer::Repeatable`] goes to
    /// [`Transfers::recover_upload`] or [`Transfers::recover_restore`] of calls made [`Transfers::journaled`] with this client, which
    /// send the whole archive again under the same identity; a [`JournaledTransfer::Unknown`]
    /// is never repeated, and its record ends once listed.
    /// Producer batches come back too
    /// (outbox mode, P-8): a [`JournaledBatch::UnknownOutcome`] was handed to the transport
    /// before the crash and is never sent again; a [`JournaledBatch::Unsent`] never was, and
    /// is submitted again through a producer of its domain and ingestor
    /// (`producer.submit(unsent)`), which reuses its record, at most once. The records of what
    /// the list reports unknown end once the list reached this call: a crash before that (or a
    /// call abandoned before it returned) leaves them, and the next start reports them again.
    /// A later call gets an empty list, and so does a client without a journal.
    #[cfg(feature = "journal")]
    pub async fn recovery(&self) -> Result<Recovery, Error> {
        let list = self.call(Request::Recovery).await?;
        // The list is here: its unknown records may end. A call dropped before this point
        // never returns the list, and leaves them for the next start.
        let _ = self.requests.send(Request::RecoveryRead).await;
        Ok(list)
    }

    /// Outcomes of commands whose callers stopped waiting, oldest first; each is handed out
    /// once.
    pub async fn unclaimed(&self) -> Result<Vec<CommandResult>, Error> {
        self.call(Request::Unclaimed).await
    }

    /// Outcomes of batches whose [`PendingBatch`]es were dropped before they read them (P-7:
    /// a caller that stops waiting leaves the outcome retrievable), oldest first; each is
    /// handed out once. Kept apart from the commands' outcomes, within the same bounds
    /// ([`UNCLAIMED`] outcomes, [`UNCLAIMED_BYTES`] bytes; evictions counted in
    /// [`Stats::unclaimed_batches_lost`]).
    pub async fn unclaimed_batches(&self) -> Result<Vec<UnclaimedBatch>, Error> {
        self.call(Request::UnclaimedBatches).await
    }

    /// How many outcomes of commands nobody waited for the bounds of [`Client::unclaimed`]'s
    /// store evicted ([`UNCLAIMED`] outcomes, [`UNCLAIMED_BYTES`] bytes): settled ones go
    /// before uncertain ones, and each eviction is also reported as
    /// [`DriverEvent::UnclaimedLost`] (C-10).
    pub fn unclaimed_lost(&self) -> u64 {
        self.unclaimed.lost()
    }

    /// Opens a subscription in the selected domain with one `CREATE SUBSCRIPTION <name> FROM
    /// <relay> ...` statement (S-1) and returns the stream of its events: generations, row
    /// batches checked against their schema, gaps, and the end. The client keeps it across
    /// sessions, opening it again as a new generation after a lost session (S-7). Dropping
    /// the stream deletes it (S-6). Refused while a transaction is held (L-3).
    pub async fn subscribe(&self, statement: &str) -> Result<Subscription, Error> {
        let statement = statement.to_string();
        self.call(|reply| Request::Subscribe {
            domain: None,
            statement,
            reply,
        })
        .await
    }

    /// [`Client::subscribe`] in `domain` rather than the selected one.
    pub async fn subscribe_in(&self, domain: &str, statement: &str) -> Result<Subscription, Error> {
        let (domain, statement) = (Some(domain.to_string()), statement.to_string());
        self.call(|reply| Request::Subscribe {
            domain,
            statement,
            reply,
        })
        .await
    }

    /// Follows `domain`'s clock (K-1): the stream gives its installed state, changes and
    /// ticks, and says when a lost session interrupted it; the client attaches it again on
    /// every new session, before anything else (D-5). Dropping the stream detaches it.
    pub async fn follow_clock(&self, domain: &str) -> Result<ClockFollow, Error> {
        let domain = domain.to_string();
        self.call(|reply| Request::FollowClock { domain, reply })
            .await
    }

    /// Opens a producer of a client ingestor (P-1) and waits for its open's answer; the
    /// engine keeps it across sessions (P-8). [`Error::OpenRefused`] when the server refused
    /// it. Cancel-safe: a producer whose open the caller stopped waiting for is closed.
    pub async fn producer(&self, spec: ProducerSpec) -> Result<Producer, Error> {
        let o = self
            .call(|reply| Request::Dataplane(Call::OpenProducer { spec, reply }))
            .await?;
        // Held until the open is answered: dropping it (a cancelled wait) closes the producer.
        let ended = o.side.from_driver;
        let description = o.opened.await.map_err(|_| Error::Stopped)??;
        Ok(Producer {
            attached: Attached::new(o.id, description),
            requests: self.requests.clone(),
            ended: Some(ended),
            pull: o.side.pull,
            released: o.released,
        })
    }

    /// Opens a consumer of a TO CLIENT emitter (EC-1) and waits for its open's answer; the
    /// engine keeps it across sessions (EC-5). [`Error::OpenRefused`] when the server refused
    /// it. Cancel-safe: a consumer whose open the caller stopped waiting for is closed.
    pub async fn consumer(&self, spec: ConsumerSpec) -> Result<Consumer, Error> {
        let o = self
            .call(|reply| Request::Dataplane(Call::OpenConsumer { spec, reply }))
            .await?;
        // Held until the open is answered: dropping it (a cancelled wait) closes the consumer.
        let rx = o.side.from_driver;
        let description = o.opened.await.map_err(|_| Error::Stopped)??;
        Ok(Consumer {
            attached: Attached::new(o.id, description),
            requests: self.requests.clone(),
            rx,
            pull: o.side.pull,
        })
    }

    /// Replaces the credentials; after a refusal the client connects again with these (T-5).
    pub async fn set_credentials(&self, credentials: Credentials) -> Result<(), Error> {
        self.requests
            .send(Request::SetCredentials {
                credentials,
                reply: None,
            })
            .await
            .map_err(|_| Error::Stopped)
    }

    /// What the driver reports from now on, to this observer alone. It holds at most
    /// [`OBSERVER_QUEUE`] events and [`OBSERVER_BYTES`] bytes unread; what does not fit is
    /// dropped for it, counted ([`Events::lost`]) and reported as [`DriverEvent::EventsLost`]
    /// where it happened (C-7).
    pub fn events(&self) -> Events {
        self.notify.watch()
    }

    /// Ends the session and stops the driver. With `revert` the session ends cleanly, which
    /// reverts a held transaction (X-7); otherwise the transaction stays open for a later
    /// attach until its idle timeout.
    pub async fn close(self, revert: bool) -> Result<(), Error> {
        self.call(|done| Request::Close { revert, done }).await
    }
}

/// A transaction begun with [`Client::transaction`]. Its appends and commit carry the
/// position and preview the engine keeps (X-2, X-4); dropping it leaves the transaction held.
#[derive(Debug, Clone)]
pub struct Transaction {
    client: Client,
}

impl Transaction {
    /// Appends a command to the transaction.
    pub async fn execute(&self, query: &str) -> Result<CommandResult, Error> {
        self.client.execute(query).await
    }

    /// Commits, with the preview of the last append (X-4); the result is the commit's own
    /// outcome (X-3).
    pub async fn commit(self) -> Result<CommandResult, Error> {
        self.client.execute("COMMIT;").await
    }

    /// Reverts.
    pub async fn revert(self) -> Result<CommandResult, Error> {
        self.client.execute("REVERT;").await
    }
}

/// Whether an unsolicited item is a frame (and not a loss marker).
pub fn unsolicited_frame(u: &Unsolicited) -> Option<&ServerFrame> {
    match u {
        Unsolicited::Frame(f) => Some(f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nervix_driver_support::driver_core::race_hand_over;

    /// A result sent at the moment its wait is dropped is read by the wait or comes back to
    /// the sender, which keeps it: never lost between the two (C-10). The two race on two
    /// threads, released together, many times.
    #[test]
    fn c_10_an_outcome_sent_as_its_wait_is_dropped_is_never_lost() {
        let unclaimed = race_hand_over::<driver::Io, _>(100_000, PendingCommand::from);
        let bound = nervix_driver_support::unclaimed::UNCLAIMED;
        assert_eq!(
            unclaimed.len(),
            bound,
            "the store is full, the rest counted lost"
        );
    }

    /// The futures of the public calls are `Send`, so an application can spawn them on a
    /// multi-threaded runtime. Checked when this compiles; the function is never run.
    #[test]
    fn calls_are_send() {
        fn send<T: Send>(_: &T) {}
        #[allow(dead_code, clippy::too_many_arguments)]
        async fn all(
            c: Client,
            t: &Transfers,
            p: Producer,
            mut k: Consumer,
            mut s: Subscription,
            mut f: ClockFollow,
            r: &RetainedCommand,
            x: Transaction,
        ) {
            let path = std::path::Path::new("");
            let report = || -> &nervix_protocol::client::CommandReport { unreachable!() };
            let download = || -> &mut nervix_protocol::calls::BackupDownload { unreachable!() };
            let upload = || -> &mut nervix_protocol::calls::UploadCall { unreachable!() };
            let restore = || -> &mut nervix_protocol::calls::RestoreCall { unreachable!() };
            let config = || -> Config { unreachable!() };
            let spec = || -> ProducerSpec { unreachable!() };
            let cspec = || -> ConsumerSpec { unreachable!() };
            let dref = || -> DeliveryRef { unreachable!() };
            let decision = || -> Decision { unreachable!() };
            let creds = || -> Credentials { unreachable!() };
            let batch = || -> Submission { unreachable!() };
            send(&Client::connect(config()));
            send(&c.submit(""));
            send(&c.execute(""));
            send(&c.recover(r));
            send(&c.run(""));
            send(&c.read(ClientRequestT::ListDomainsRequest(Box::default()), None));
            send(&c.select_domain(None));
            send(&c.binding());
            send(&c.transaction());
            send(&c.unclaimed());
            send(&c.subscribe(""));
            send(&c.subscribe_in("", ""));
            send(&c.follow_clock(""));
            send(&c.producer(spec()));
            send(&c.consumer(cspec()));
            send(&c.set_credentials(creds()));
            send(&x.execute(""));
            send(&x.clone().commit());
            send(&x.revert());
            send(&t.backup(report(), path));
            send(&t.download(download(), path));
            send(&t.upload(upload(), path));
            send(&t.restore(restore(), path));
            send(&p.submit(batch()));
            send(&k.next_delivery());
            send(&k.settle(dref(), decision()));
            send(&s.next_event());
            send(&f.next_event());
            let pending = c.submit("").await.unwrap();
            send(&pending);
            send(&p.submit(batch()).await.unwrap());
            send(&p.close());
            send(&k.close());
            send(&c.close(false));
        }
        let _ = all;
    }
}
