//! Blocking driver of the Nervix client: std threads, blocking sockets, and a blocking API of
//! the same shape as the tokio driver's.
//!
//! ```no_run
//! use nervix_blocking::{Client, CommandResult, Config, Credentials};
//!
//! # fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let seeds = ["https://node-1.example:8443/", "https://node-2.example:8443/"];
//! let client = Client::connect(Config::new(&seeds, Credentials::new("reader", "secret"))?)?;
//! match client.execute("SHOW DOMAINS;")? {
//!     CommandResult::Completed(report) => println!("{report:?}"),
//!     // It may have run: repeat it exactly, under the same reference (E-4).
//!     CommandResult::Uncertain { command, .. } => println!("{:?}", client.recover(&command)?),
//!     other => println!("{other:?}"),
//! }
//! client.close(false)?;
//! # Ok(())
//! # }
//! ```
//!
//! The sans-IO engine ([`nervix_protocol::client::Client`]) runs on one driver thread. Each
//! session the engine opens runs on a thread of its own, over the WebSocket console: the
//! driver hands the engine every frame and every end with the time it arrived, re-reads the
//! engine's next deadline after every drain and never sleeps past it, and keeps frames a
//! session's thread cannot take yet until it can (back-pressure). What the thread decides is
//! `nervix-driver-support`'s driver core, which the tokio driver runs too: the application's
//! calls, the routing of events and the queues are written once there, and this crate keeps
//! its threads, its sockets and how its driver thread wakes up.
//!
//! * WebSocket: `/console/ws` over `ws` or `wss` (tungstenite over a blocking socket), binary
//!   messages only, at most the 4 MiB frame limit either way; a close with 1003, 1007, 1008
//!   or 1009 is a defect in what we sent and stops the client: nothing of it is sent again
//!   (T-3); 1001 is a transport failure. A session ending with a `LeaderRedirect` reconnects to
//!   the named leader's `web_console_uri` (T-7).
//! * TLS: rustls on the ring provider, verified against the endpoint's own host name on every
//!   connection, redirects and reconnects included; the engine never moves from https to http
//!   (T-2). DNS (on a helper thread) and every address attempt fit in the connection deadline.
//! * Credentials: `Authorization: Basic base64(user:password)` or the percent-encoded `auth`
//!   query parameter on every connection (T-4). A 401 is never retried with the same
//!   credentials: the driver stops connecting until [`Client::set_credentials`] (T-5); a 503
//!   backs off and retries.
//! * Every wait has a deadline of its own (T-8): DNS, each address, the TLS and WebSocket
//!   handshakes, each write ([`Config::write_timeout`]), and every call of the application,
//!   which gives up with [`Error::TimedOut`] when the driver has not answered within the
//!   engine's deadlines and [`Config::grace`].
//!
//! * Producers and consumers: [`Client::producer`] submits Arrow batches, waiting for room
//!   when one grant of credit is already queued (P-4), each batch with its one outcome
//!   ([`PendingBatch::wait`]); [`Client::consumer`] reads deliveries decoded and checked
//!   against their fields and settles them ([`Consumer::next_delivery`], [`Consumer::settle`]).
//!   Admission changes, interruptions and restorations are [`DriverEvent`]s.
//! * Backups and restores: [`Transfers`] downloads a backup's archive on
//!   `/console/backups/download` and restores one on `/console/backups/restore`, a connection
//!   of its own per attempt (T-3a), every wait bounded by the call machine's own deadline, the
//!   archive reaching its name only once verified (A-4).
//!
//! gRPC is not carried here: HTTP/2 needs its own framing, HPACK header compression with its
//! Huffman code, per-stream flow control and a connection task that answers pings and window
//! updates while the application blocks, and the only HTTP/2 implementation at hand is
//! async. Applications that need gRPC from blocking code run the tokio driver on a runtime of
//! their own.
//!
//! [`Client::execute`] returns the engine's typed [`CommandResult`]: `Completed`, `Failed`
//! or `Uncertain` naming the execution reference. A caller that stops waiting (drops its
//! [`PendingCommand`]) loses nothing: the outcome, once known, is kept for
//! [`Client::unclaimed`] (C-10).
//!
//! # Behaviour reference
//!
//! `nervix-blocking` runs the same engine on a driver thread, with one thread per session over a
//! blocking socket: the WebSocket console only (ws/wss, the same rules as above). Every wait has a
//! deadline of its own: DNS on a helper thread within the connection deadline, each address, the TLS
//! and WebSocket handshakes, each write, and every call of the application (`Error::TimedOut` past
//! the engine's deadlines and a grace). A session's thread reads with a short timeout
//! (`Config::poll_interval`, 2 ms) and writes what the driver queued in between. gRPC is not carried:
//! HTTP/2 needs HPACK with its Huffman code, flow control and a connection task of its own, and the
//! only implementation at hand is async; blocking code that needs gRPC runs the tokio driver. The
//! API: `Client::connect`, `execute`, `submit` (a `PendingCommand` with bounded `wait` and
//! `wait_timeout`), `run`, `read`, `transaction()`, `events()` (bounded, with a count of what was
//! missed), `unclaimed()`, `close`, and `subscribe` / `follow_clock` as iterators of the same typed
//! events (with `next_timeout` for a bounded wait; dropping one deletes or detaches), `recover`
//! (an uncertain command repeated exactly), and `producer` / `consumer`: a `Producer` that threads
//! may share, whose `submit` waits for room when one grant of credit is already queued (taken in
//! order; `submit_timeout` withdraws a submission it gives up on, which is then never taken), each
//! batch a `PendingBatch` with a bounded `wait` for its one outcome; a `Consumer` with a bounded
//! `next_delivery` (a read that gives up stays out for the next call) and `settle`. Producer and
//! consumer interruptions, restorations and admission changes are `DriverEvent`s, in both drivers.
//! `nervix_blocking::Transfers` downloads backups and restores them on the console
//! (`backup(report, target)`, `download(call, target)`, `restore(call, source)`; T-3a): one
//! WebSocket per attempt on `/console/backups/download` or `/console/backups/restore`, every read and
//! write bounded by the call machine's own `poll_timeout`, a restore's connection held open after its
//! last chunk until the reply, and the download written through `ArchiveWriter` so nothing is under
//! the target's name until verified (the `transfers` scenarios of `nervix-driver-tests`). In both drivers a separate
//! call whose credentials are refused (UNAUTHENTICATED, 401) ends at once with
//! `TransferError::Unauthenticated` (T-5), and one whose frame the server refused (OUT_OF_RANGE,
//! INTERNAL, a close with 1003/1007/1008/1009) ends with `FrameRefused` and is not sent again (T-6,
//! T-3); any other end before the answer (UNAVAILABLE, 503, a cut, a close with 1001) is a transport
//! failure, repeated whole after a pause doubling from 100 ms, at most `ATTEMPTS` attempts
//! (`nervix_driver_support::call_end`). A redirect naming no leader waits the same growing pause
//! (U-4, A-5, RS-4), and so does every redirect of a call after its first, so two nodes naming
//! each other during an election do not spend the attempts in milliseconds. Where each attempt goes is decided once for both drivers (`CallRoute`): a client
//! with any https seed is https-only for separate calls as for sessions, so http seeds are never
//! tried and a redirect to an http leader is taken as one naming no leader (T-2); `GaveUp` names
//! the refused redirect. Every write of a separate call has a deadline of its own: a gRPC start
//! frame or chunk waits for HTTP/2 send window at most until the machine's wait or
//! `Config::write_timeout`, and the console's start, chunk and close writes are bounded too (T-8). Uploads need gRPC and so the
//! tokio driver.

mod calls;
mod config;
mod dataplane;
mod driver;
mod net;
mod session;
mod streams;

pub use calls::{TransferError, Transfers, ATTEMPTS, DOWNLOAD_WS_PATH, RESTORE_WS_PATH};
pub use config::Config;
// The names both drivers give alike: errors and events, the configuration's parts, the
// engine's outcome and event types, the journal's (feature `journal`) and the bounds.
pub use nervix_driver_support::exports::*;
#[doc(hidden)]
pub use session::read_console;
pub use session::{console_url, End, CONSOLE_PATH};

pub use dataplane::{Consumer, PendingBatch, Producer, Submission};
pub use streams::{ClockFollow, Subscription};

use driver::{Driver, Inbox, Reply, Request, RunSubmitted, Submitted};
use nervix_driver_support::dataplane::Call;
use nervix_driver_support::observe::Watch;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::transaction::Binding;
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// A command on its way: its execution reference is known at once, and [`PendingCommand::wait`]
/// gives its result. Dropping it stops the wait only; the outcome is then kept for
/// [`Client::unclaimed`] (C-10).
#[derive(Debug)]
pub struct PendingCommand {
    reference: String,
    result: mpsc::Receiver<CommandResult>,
    gate: driver::Gate,
    bound: Duration,
    unclaimed: driver::Unclaimed,
}

impl Drop for PendingCommand {
    /// An outcome that arrived but was never read is kept for [`Client::unclaimed`] (C-10):
    /// dropping the wait must not lose what the client already holds. The gate orders this
    /// against the driver's hand-over: an outcome sent from now on comes back to the
    /// driver, which keeps it; what came before is read here.
    fn drop(&mut self) {
        if let Some(r) = self.gate.leave(|| self.result.try_recv().ok()) {
            self.unclaimed.keep(r);
        }
    }
}

impl PendingCommand {
    /// The wait of an accepted command, bounded by `bound`.
    fn new(s: Submitted, bound: Duration) -> Self {
        let (result, gate) = s.result;
        Self {
            reference: s.reference,
            result,
            gate,
            bound,
            unclaimed: s.unclaimed,
        }
    }

    /// The command's execution reference (E-1).
    pub fn reference(&self) -> &str {
        &self.reference
    }

    /// Waits for the result, at most the call's bound (its deadline, the connection deadline
    /// and the grace): the engine settles every command by its deadline, so
    /// [`Error::TimedOut`] means the driver is stuck.
    pub fn wait(mut self) -> Result<CommandResult, Error> {
        let bound = self.bound;
        self.wait_timeout(bound)
    }

    /// Waits at most `timeout`. After [`Error::TimedOut`] the command is still pending and
    /// can be waited for again; once its result was given, a later wait is
    /// [`Error::Stopped`].
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<CommandResult, Error> {
        match self.result.recv_timeout(timeout) {
            Ok(r) => Ok(r),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Stopped),
        }
    }
}

/// What the driver reports from the moment [`Client::events`] was called, to this observer
/// alone. Bounded in count ([`OBSERVER_QUEUE`]) and bytes ([`OBSERVER_BYTES`]): events an
/// observer does not read in time are dropped, counted ([`Events::lost`]) and reported where
/// they went as [`DriverEvent::EventsLost`] (C-7).
#[derive(Debug)]
pub struct Events {
    watch: Watch<DriverEvent>,
}

impl Events {
    /// The next event, if one is waiting.
    pub fn try_next(&self) -> Option<DriverEvent> {
        self.watch.try_recv().ok()
    }

    /// The next event, waiting at most `timeout`.
    pub fn next_timeout(&self, timeout: Duration) -> Option<DriverEvent> {
        self.watch.recv_timeout(timeout).ok()
    }

    /// Every event waiting now.
    pub fn drain(&self) -> Vec<DriverEvent> {
        std::iter::from_fn(|| self.try_next()).collect()
    }

    /// Events dropped because this observer did not read them in time.
    pub fn lost(&self) -> u64 {
        self.watch.lost()
    }

    /// How many events are queued for this observer now.
    pub fn held(&self) -> usize {
        self.watch.held()
    }

    /// How many bytes the events queued for this observer hold now.
    pub fn held_bytes(&self) -> usize {
        self.watch.held_bytes()
    }
}

/// Tells the driver when the last handle goes.
#[derive(Debug)]
struct Handle {
    inbox: mpsc::SyncSender<Inbox>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        let _ = self.inbox.send(Inbox::Dropped);
    }
}

/// An application's handle on a Nervix client; cheap to clone and usable from any thread.
/// The driver thread stops when the last handle is dropped or [`Client::close`] is called.
#[derive(Debug, Clone)]
pub struct Client {
    handle: Arc<Handle>,
    config: Arc<Config>,
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
    pub fn connect(config: Config) -> Result<Self, Error> {
        let wait = config.client.connect_timeout + config.client.call_timeout;
        let client = Self::start(config)?;
        match client.read(
            ClientRequestT::ListDomainsRequest(Box::default()),
            Some(wait),
        ) {
            Ok(ReadResult::Replied(_)) => Ok(client),
            Ok(_) | Err(Error::TimedOut) => Err(Error::Unreachable),
            Err(e) => Err(e),
        }
    }

    /// Starts a client without opening a session; it connects when there is work.
    pub fn start(config: Config) -> Result<Self, Error> {
        config.check()?;
        let tls = Some(net::dialer(&config).map_err(|e| Error::Tls(e.to_string()))?);
        let (tx, rx) = mpsc::sync_channel(1024);
        let unclaimed = driver::Unclaimed::default();
        #[cfg(feature = "journal")]
        let (journal, transfer_journal) =
            nervix_driver_support::journaled::open_with_transfers(config.journal.as_ref())?;
        #[cfg_attr(not(feature = "journal"), allow(unused_mut))]
        let mut driver = Driver::new(config.clone(), tls, rx, tx.clone(), unclaimed.clone());
        #[cfg(feature = "journal")]
        driver.core.set_journal(journal);
        std::thread::Builder::new()
            .name("nervix-driver".into())
            .spawn(move || driver.run())
            .map_err(|_| Error::Stopped)?;
        Ok(Self {
            handle: Arc::new(Handle { inbox: tx }),
            config: Arc::new(config),
            unclaimed,
            #[cfg(feature = "journal")]
            transfer_journal,
        })
    }

    /// Sends a call to the driver and waits for its immediate answer. The driver answers
    /// these at once; the bound only guards against a stuck driver (T-8).
    fn call<T>(&self, make: impl FnOnce(Reply<T>) -> Request) -> Result<T, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.handle
            .inbox
            .send(Inbox::App(make(tx)))
            .map_err(|_| Error::Stopped)?;
        match rx.recv_timeout(self.config.grace) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Stopped),
        }
    }

    /// The wait of an accepted command, bounded by its own wait in the engine (a `BACKUP`'s
    /// is not the call timeout, A-7), the connection deadline and the grace.
    fn pending(&self, s: Submitted) -> PendingCommand {
        let bound = self.config.call_bound(Some(s.wait));
        PendingCommand::new(s, bound)
    }

    /// Hands a command to the engine with a new UUIDv7 reference and returns at once with it;
    /// [`PendingCommand::wait`] gives the result.
    pub fn submit(&self, query: &str) -> Result<PendingCommand, Error> {
        let query = query.to_string();
        let s = self.call(|reply| Request::Execute { query, reply })?;
        Ok(self.pending(s))
    }

    /// Executes one command and waits for its result: `Completed` from its own outcome,
    /// `Failed` only when it certainly took no effect, otherwise `Uncertain` naming its
    /// reference (D-4, E-3).
    pub fn execute(&self, query: &str) -> Result<CommandResult, Error> {
        self.submit(query)?.wait()
    }

    /// Repeats an uncertain command exactly, to learn its outcome (E-2, E-3): the same
    /// reference, query, domain, position and preview, under a new request identity. The
    /// server answers from its record when the first attempt ran (`Recovered`), or runs it
    /// now; it never runs twice. Pass the `command` of a [`CommandResult::Uncertain`].
    pub fn recover(&self, command: &RetainedCommand) -> Result<CommandResult, Error> {
        let command = Box::new(command.clone());
        let s = self.call(|reply| Request::Recover { command, reply })?;
        self.pending(s).wait()
    }

    /// Runs one NSPL statement the way it travels (L-2): a command, a request of its own, or
    /// a local domain selection.
    pub fn run(&self, statement: &str) -> Result<RunResult, Error> {
        let query = statement.to_string();
        match self.call(|reply| Request::Run { query, reply })? {
            RunSubmitted::Command(s) => self.pending(s).wait().map(RunResult::Command),
            RunSubmitted::Read(rx) => self.wait_read(rx, None).map(RunResult::Read),
            RunSubmitted::Selected(d) => Ok(RunResult::DomainSelected(d)),
        }
    }

    fn wait_read(
        &self,
        rx: mpsc::Receiver<Result<ReadResult, Error>>,
        deadline: Option<Duration>,
    ) -> Result<ReadResult, Error> {
        match rx.recv_timeout(self.config.call_bound(deadline)) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Stopped),
        }
    }

    /// Sends a read and waits for its reply, repeated on a new session if one is lost, until
    /// `deadline` (the call deadline by default).
    pub fn read(
        &self,
        request: ClientRequestT,
        deadline: Option<Duration>,
    ) -> Result<ReadResult, Error> {
        let rx = self.call(|reply| Request::Read {
            request,
            deadline,
            reply,
        })?;
        self.wait_read(rx, deadline)
    }

    /// Selects the domain commands name (L-1).
    pub fn select_domain(&self, domain: Option<&str>) -> Result<(), Error> {
        let domain = domain.map(str::to_string);
        self.call(|reply| Request::SelectDomain { domain, reply })
    }

    /// The transaction binding.
    pub fn binding(&self) -> Result<Binding, Error> {
        self.call(Request::Binding)
    }

    /// What the client has done so far: the engine's counters and the store of outcomes
    /// nobody waited for.
    pub fn stats(&self) -> Result<Stats, Error> {
        self.call(Request::Stats)
    }

    /// Begins a transaction in the selected domain (X-1) and returns its helper, or the
    /// `BEGIN`'s result when it did not complete.
    pub fn transaction(&self) -> Result<Result<Transaction, CommandResult>, Error> {
        match self.execute("BEGIN;")? {
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
    /// [`Transfers::recover_restore`] of calls made [`Transfers::journaled`] with this client, which
    /// send the whole archive again under the same identity; a [`JournaledTransfer::Unknown`]
    /// is never repeated, and its record ends once listed.
    /// Producer batches come back too
    /// (outbox mode, P-8): a [`JournaledBatch::UnknownOutcome`] was handed to the transport
    /// before the crash and is never sent again; a [`JournaledBatch::Unsent`] never was, and
    /// is submitted again through a producer of its domain and ingestor
    /// (`producer.submit(unsent)`), which reuses its record, at most once. The records of what
    /// the list reports unknown end once the list reached this call: a crash before that (or a
    /// call that timed out) leaves them, and the next start reports them again.
    /// A later call gets an empty list, and so does a client without a journal.
    #[cfg(feature = "journal")]
    pub fn recovery(&self) -> Result<Recovery, Error> {
        let list = self.call(Request::Recovery)?;
        // The list is here: its unknown records may end. A call that timed out never returns
        // the list, even when the answer reached its channel meanwhile, and leaves them for
        // the next start; so does a full inbox here (never waited on).
        let _ = self
            .handle
            .inbox
            .try_send(Inbox::App(Request::RecoveryRead));
        Ok(list)
    }

    /// Outcomes of commands whose callers stopped waiting, oldest first; each is handed out
    /// once.
    pub fn unclaimed(&self) -> Result<Vec<CommandResult>, Error> {
        self.call(Request::Unclaimed)
    }

    /// Outcomes of batches whose [`PendingBatch`]es were dropped before they read them (P-7:
    /// a caller that stops waiting leaves the outcome retrievable), oldest first; each is
    /// handed out once. Kept apart from the commands' outcomes, within the same bounds
    /// ([`UNCLAIMED`] outcomes, [`UNCLAIMED_BYTES`] bytes; evictions counted in
    /// [`Stats::unclaimed_batches_lost`]).
    pub fn unclaimed_batches(&self) -> Result<Vec<UnclaimedBatch>, Error> {
        self.call(Request::UnclaimedBatches)
    }

    /// How many outcomes of commands nobody waited for the bounds of [`Client::unclaimed`]'s
    /// store evicted ([`UNCLAIMED`] outcomes, [`UNCLAIMED_BYTES`] bytes): settled ones go
    /// before uncertain ones, and each eviction is also reported as
    /// [`DriverEvent::UnclaimedLost`] (C-10).
    pub fn unclaimed_lost(&self) -> u64 {
        self.unclaimed.lost()
    }

    /// Opens a subscription in the selected domain with one `CREATE SUBSCRIPTION <name> FROM
    /// <relay> ...` statement (S-1) and returns the iterator of its events. The client keeps
    /// it across sessions, opening it again as a new generation after a lost session (S-7).
    /// Dropping the iterator deletes it (S-6). Refused while a transaction is held (L-3).
    pub fn subscribe(&self, statement: &str) -> Result<Subscription, Error> {
        let statement = statement.to_string();
        self.call(|reply| Request::Subscribe {
            domain: None,
            statement,
            reply,
        })
    }

    /// Opens a producer on a client ingestor (P-1) and waits for its open's answer; the
    /// engine keeps it across sessions (P-8). [`Error::OpenRefused`] when the server refused
    /// it. A producer whose open was not answered within the call's bound is closed.
    pub fn producer(&self, spec: ProducerSpec) -> Result<Producer, Error> {
        let o = self.call(|reply| Request::Dataplane(Call::OpenProducer { spec, reply }))?;
        let description = match self.opened(&o.opened) {
            Ok(d) => d,
            Err(e) => {
                // Nobody will hold it: the driver closes it (P-8).
                o.side
                    .flags
                    .dropped
                    .store(true, std::sync::atomic::Ordering::Release);
                let _ = self.handle.inbox.try_send(Inbox::Pull);
                return Err(e);
            }
        };
        Ok(Producer {
            attached: Attached::new(o.id, description),
            inbox: self.handle.inbox.clone(),
            ended: std::sync::Mutex::new(o.side.ended),
            flags: o.side.flags,
            released: o.released,
        })
    }

    /// Opens a consumer of a TO CLIENT emitter (EC-1) and waits for its open's answer; the
    /// engine keeps it across sessions (EC-5). [`Error::OpenRefused`] when the server refused
    /// it. A consumer whose open was not answered within the call's bound is closed.
    pub fn consumer(&self, spec: ConsumerSpec) -> Result<Consumer, Error> {
        let o = self.call(|reply| Request::Dataplane(Call::OpenConsumer { spec, reply }))?;
        // On an error the reader goes, and with it the consumer (EC-6).
        let description = self.opened(&o.opened)?;
        Ok(Consumer {
            attached: Attached::new(o.id, description),
            inbox: self.handle.inbox.clone(),
            reader: o.side,
            asked: false,
            settle_bound: self.config.call_bound(None),
        })
    }

    /// The answer to an open, within the bound of a call.
    fn opened<T>(&self, rx: &mpsc::Receiver<Result<T, Error>>) -> Result<T, Error> {
        match rx.recv_timeout(self.config.call_bound(None)) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Stopped),
        }
    }

    /// [`Client::subscribe`] in `domain` rather than the selected one.
    pub fn subscribe_in(&self, domain: &str, statement: &str) -> Result<Subscription, Error> {
        let (domain, statement) = (Some(domain.to_string()), statement.to_string());
        self.call(|reply| Request::Subscribe {
            domain,
            statement,
            reply,
        })
    }

    /// Follows `domain`'s clock (K-1): the iterator gives its installed state, changes and
    /// ticks, and says when a lost session interrupted it; the client attaches it again on
    /// every new session (D-5). Dropping the iterator detaches it.
    pub fn follow_clock(&self, domain: &str) -> Result<ClockFollow, Error> {
        let domain = domain.to_string();
        self.call(|reply| Request::FollowClock { domain, reply })
    }

    /// Replaces the credentials; after a refusal the client connects again with these (T-5).
    pub fn set_credentials(&self, credentials: Credentials) -> Result<(), Error> {
        self.call(|reply| Request::SetCredentials {
            credentials,
            reply: Some(reply),
        })
    }

    /// What the driver reports from now on.
    pub fn events(&self) -> Result<Events, Error> {
        let watch = self.call(Request::Observe)?;
        Ok(Events { watch })
    }

    /// Ends the session and stops the driver, after the sessions wrote their close frames
    /// (bounded). With `revert` the session ends cleanly, which reverts a held transaction
    /// (X-7); otherwise the transaction stays open for a later attach until its idle timeout.
    pub fn close(self, revert: bool) -> Result<(), Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.handle
            .inbox
            .send(Inbox::App(Request::Close { revert, done: tx }))
            .map_err(|_| Error::Stopped)?;
        match rx.recv_timeout(self.config.grace + self.config.write_timeout) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::TimedOut),
            Err(mpsc::RecvTimeoutError::Disconnected) => Ok(()),
        }
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
    pub fn execute(&self, query: &str) -> Result<CommandResult, Error> {
        self.client.execute(query)
    }

    /// Commits, with the preview of the last append (X-4); the result is the commit's own
    /// outcome (X-3).
    pub fn commit(self) -> Result<CommandResult, Error> {
        self.client.execute("COMMIT;")
    }

    /// Reverts.
    pub fn revert(self) -> Result<CommandResult, Error> {
        self.client.execute("REVERT;")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nervix_driver_support::driver_core::race_hand_over;

    /// A result sent at the moment its wait is dropped is read by the wait or comes back to
    /// the driver, which keeps it: never lost between the two (C-10). The two race on two
    /// threads, released together, many times.
    #[test]
    fn c_10_an_outcome_sent_as_its_wait_is_dropped_is_never_lost() {
        race_hand_over::<driver::Threads, _>(200_000, |s| PendingCommand::new(s, Duration::ZERO));
    }
}
