//! The driver core every Nervix driver shares: the engine, the application's calls, the
//! sessions' events, and everything handed out between them, written once.
//!
//! A driver keeps one [`Core`] and runs its own loop around it: it hands the core each call
//! of the application ([`Core::request`]), each report of a session's transport
//! ([`Core::event`]) and each expiry of the engine's deadline ([`Core::timeout`]), drains the
//! core after each ([`Core::drain`]), and waits until [`Core::deadline`] or the next
//! report. The core answers the calls, tracks the commands and reads the engine accepted,
//! parks the client when the server refused its credentials or found a frame of it defective
//! (T-5, T-6, T-3), performs the engine's actions, keeps the frames a session's transport has
//! no room for yet in order, hands out the engine's events, routes subscription and clock
//! events into their streams (S-8, K-3) and producer and consumer events to their handles,
//! and keeps the outcomes nobody waited for (C-10).
//!
//! What differs between drivers is behind [`Seam`]: how a result is handed back to a waiting
//! caller (its [`Seam::Hand`] and [`Seam::hand_over`]), how a session's transport is started
//! and given frames ([`Seam::connect`], [`Seam::send`]), how a stream's reader is fed
//! ([`StreamSink`]). The driver keeps its runtime, its sockets and its way of waking up.

use crate::api::{DriverEvent, Error};
use crate::clocks::{clock_domain, keep_newest_of_kind};
use crate::credentials::Credentials;
use crate::dataplane::{Call, Dataplane, Hand};
use crate::host_time::{HostClock, SystemClock};
use crate::observe::{Hub, Watch};
use crate::session::{End, Event, Out};
use crate::unclaimed::Unclaimed;
use nervix_protocol::client::{
    Action, Client as Engine, ClientConfig, ClientError, ClientEvent, ClockEvent, CommandHandle,
    CommandResult, ReadHandle, ReadResult, RetainedCommand, Routed, SessionId, SubscriptionEvent,
    SubscriptionId,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::exchange::Unsolicited;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::time::{Timestamp, UnixMillis};
use nervix_protocol::transaction::Binding;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// Where the answer to one call of the application goes.
pub type Reply<S, T> = <<S as Seam>::Hand as Hand>::Once<Result<T, Error>>;

/// Where a read's result is awaited by the application.
pub type ReadWait<S> = <<S as Seam>::Hand as Hand>::Awaited<Result<ReadResult, Error>>;

/// What a driver's channel did with one item it was given.
#[derive(Debug, PartialEq, Eq)]
pub enum Given<T> {
    /// Taken.
    Taken,
    /// No room now: the item comes back, to be given again later, in order.
    Full(T),
    /// Nobody takes anything any more.
    Gone,
}

/// The driver's side of a stream of events (a subscription's or a followed clock's).
pub trait StreamSink<T> {
    /// Whether the application dropped the stream.
    fn dropped(&self) -> bool;
    /// Whether the stream has room for one more event; a sink that cannot tell says yes, and
    /// the event it then has no room for waits in the core.
    fn room(&self) -> bool {
        true
    }
    /// Hands `event` to the reader.
    fn give(&mut self, event: T) -> Given<T>;
}

/// What differs between drivers around the core.
pub trait Seam {
    /// The data plane's channels, which also hand the answers of the application's calls.
    type Hand: Hand<Error = Error>;
    /// Where the application reads a command's result.
    type Result;
    /// The driver's side of it: where the result goes.
    type Waiting;
    /// The driver's side of one session's transport.
    type Session;
    /// The application's side of a subscription.
    type Subscription;
    /// The application's side of a followed clock.
    type ClockFollow;
    /// The driver's side of a stream of `T`.
    type Sink<T>: StreamSink<T>;
    /// Whether the end of a session the engine already dropped is still handled (reported to
    /// observers and given to the engine) or ignored.
    const ENDS_OF_DROPPED_SESSIONS: bool;

    /// A command's channel: the driver's side and the application's.
    fn command() -> (Self::Waiting, Self::Result);
    /// Hands a command's result to its waiter; gives it back when the waiter left (C-10).
    fn hand_over(waiting: Self::Waiting, result: CommandResult) -> Option<CommandResult>;
    /// Starts a session's transport; `None` when it could not be started (the connect then
    /// fails at once).
    fn connect(&self, to: Connect) -> Option<Self::Session>;
    /// Hands one frame (or a clean close) to a session's transport.
    fn send(session: &Self::Session, out: Out) -> Given<Out>;
    /// A new subscription's stream: the driver's side and the application's.
    fn subscription(
        &self,
        id: SubscriptionId,
    ) -> (Self::Sink<SubscriptionEvent>, Self::Subscription);
    /// A new followed clock's stream: the driver's side and the application's.
    fn clock(&self, domain: String) -> (Self::Sink<ClockEvent>, Self::ClockFollow);
}

/// Where a session's transport connects, as whom, and by when.
#[derive(Debug, Clone)]
pub struct Connect {
    /// The engine's name of the session.
    pub session: SessionId,
    /// Where it connects.
    pub endpoint: Endpoint,
    /// The credentials it presents.
    pub credentials: Credentials,
    /// When opening it gives up: the engine's connection deadline from now.
    pub deadline: Instant,
}

impl Connect {
    /// The span everything a session's transport logs goes in, named after the session and
    /// its endpoint; made where the driver starts the session, so it hangs under whatever
    /// span the driver runs in.
    pub fn span(&self) -> tracing::Span {
        tracing::info_span!("nervix.session", session = self.session.0, endpoint = %self.endpoint)
    }
}

/// A command the engine accepted: its reference, where its result comes, and where an
/// outcome goes that its caller stops waiting for (C-10).
pub struct Accepted<S: Seam> {
    /// The command's execution reference (E-1).
    pub reference: String,
    /// How long the engine waits for its outcome from now, across every redirect and
    /// reconnect: a `BACKUP` its own wait, any other command the call timeout (D-4, A-7). A
    /// driver that bounds its caller's wait bounds it by this, never by the call timeout.
    pub wait: Duration,
    /// Where its result comes.
    pub result: S::Result,
    /// The store of outcomes nobody waited for.
    pub unclaimed: Unclaimed,
}

impl<S: Seam> std::fmt::Debug for Accepted<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accepted")
            .field("reference", &self.reference)
            .finish_non_exhaustive()
    }
}

/// What a statement given to `run` became.
pub enum RunSubmitted<S: Seam> {
    /// A command: where its result comes.
    Command(Accepted<S>),
    /// A read: where its result comes.
    Read(ReadWait<S>),
    /// A local domain selection (L-1).
    Selected(String),
}

/// A call of the application.
#[non_exhaustive]
pub enum Request<S: Seam> {
    /// Hands a command to the engine.
    Execute {
        /// The command.
        query: String,
        /// Where the accepted command goes.
        reply: Reply<S, Accepted<S>>,
    },
    /// Repeats an uncertain command exactly (E-2, E-3).
    Recover {
        /// The command as the engine retained it.
        command: Box<RetainedCommand>,
        /// Where the accepted command goes.
        reply: Reply<S, Accepted<S>>,
    },
    /// Runs one statement the way it travels (L-2).
    Run {
        /// The statement.
        query: String,
        /// What it became.
        reply: Reply<S, RunSubmitted<S>>,
    },
    /// Sends a read.
    Read {
        /// The request.
        request: ClientRequestT,
        /// Its deadline; the call deadline when none.
        deadline: Option<Duration>,
        /// Where its result will come.
        reply: Reply<S, ReadWait<S>>,
    },
    /// Sends a read whose result, or the reason it was not sent, comes on `result` itself:
    /// the application is handed one thing, once, where [`Request::Read`] hands it the wait
    /// first and the result later.
    ReadTo {
        /// The request.
        request: ClientRequestT,
        /// Its deadline; the call deadline when none.
        deadline: Option<Duration>,
        /// Where its result, or the engine's refusal, will come.
        result: Reply<S, ReadResult>,
    },
    /// Selects the domain commands name (L-1).
    SelectDomain {
        /// The domain, or none.
        domain: Option<String>,
        /// Whether the engine took it.
        reply: Reply<S, ()>,
    },
    /// The transaction binding.
    Binding(Reply<S, Binding>),
    /// What the client has done so far.
    Stats(Reply<S, crate::api::Stats>),
    /// The outcomes nobody waited for (C-10).
    Unclaimed(Reply<S, Vec<CommandResult>>),
    /// The outcomes of batches whose handles were dropped before they read them (P-7).
    UnclaimedBatches(Reply<S, Vec<crate::unclaimed::UnclaimedBatch>>),
    /// Replaces the credentials (T-5).
    SetCredentials {
        /// The new credentials.
        credentials: Credentials,
        /// Told once they are in place, when the caller waits for that.
        reply: Option<Reply<S, ()>>,
    },
    /// A new observer of the driver's events.
    Observe(Reply<S, Watch<DriverEvent>>),
    /// Opens a subscription (S-1).
    Subscribe {
        /// Its domain; the selected one when none.
        domain: Option<String>,
        /// The `CREATE SUBSCRIPTION` statement.
        statement: String,
        /// Where its stream goes.
        reply: Reply<S, S::Subscription>,
    },
    /// Follows a domain's clock (K-1).
    FollowClock {
        /// The domain.
        domain: String,
        /// Where its stream goes.
        reply: Reply<S, S::ClockFollow>,
    },
    /// Producers and consumers: open, submit, read a delivery, settle, close.
    Dataplane(Call<S::Hand>),
    /// What the journal held when the client started (feature `journal`), once.
    #[cfg(feature = "journal")]
    Recovery(Reply<S, crate::journaled::Recovery>),
    /// The application holds the list a [`Request::Recovery`] answered (the driver's call
    /// sends this once the list reached its caller): the records of what it reported
    /// unknown end now.
    #[cfg(feature = "journal")]
    RecoveryRead,
    /// Ends the session and stops the driver.
    Close {
        /// Whether the session ends cleanly, reverting a held transaction.
        revert: bool,
        /// Told once the driver let its sessions take their close.
        done: Reply<S, ()>,
    },
}

/// Why the driver stopped connecting.
#[derive(Debug, Clone, PartialEq)]
enum Parked {
    /// The credentials were refused; not retried until new ones are given (T-5).
    Unauthenticated,
    /// The server said a frame of ours was defective (T-3, T-6); nothing is sent again.
    Defect(String),
}

/// How long a stopping driver waits, in all, for its sessions to take what they were given (a
/// clean close among it) and end, before it lets them go uncleanly.
pub const FINISH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// One session's transport, and the frames (and clean close) it has not taken yet: kept
/// across back-pressure, in order.
struct Link<S: Seam> {
    io: S::Session,
    pending: VecDeque<Out>,
}

/// A stream's sink, and the events it had no room for yet, in order (and, for a
/// subscription, whether its last event is among them).
pub struct Outlet<K, T> {
    sink: K,
    waiting: VecDeque<T>,
    ended: bool,
}

impl<K: StreamSink<T>, T> Outlet<K, T> {
    /// An outlet with nothing waiting.
    pub fn new(sink: K) -> Self {
        Self {
            sink,
            waiting: VecDeque::new(),
            ended: false,
        }
    }

    /// The sink.
    pub fn sink(&self) -> &K {
        &self.sink
    }

    /// Keeps `event` for the reader, after those kept before.
    pub fn keep(&mut self, event: T) {
        self.waiting.push_back(event);
    }

    /// Hands waiting events over while the reader takes them; false when some are left (a
    /// reader that went takes them all, dropped).
    pub fn flush(&mut self) -> bool {
        while let Some(e) = self.waiting.pop_front() {
            match self.sink.give(e) {
                Given::Taken => {}
                Given::Full(e) => {
                    self.waiting.push_front(e);
                    return false;
                }
                Given::Gone => {
                    self.waiting.clear();
                    return true;
                }
            }
        }
        true
    }
}

/// Where subscription and clock events go.
struct Streams<S: Seam> {
    subs: BTreeMap<SubscriptionId, Outlet<S::Sink<SubscriptionEvent>, SubscriptionEvent>>,
    /// Dropped streams whose events are discarded until the subscription ends.
    discard: BTreeSet<SubscriptionId>,
    /// Dropped streams whose deletion waits for the transaction to end (L-3).
    doomed: BTreeSet<SubscriptionId>,
    clocks: BTreeMap<String, Outlet<S::Sink<ClockEvent>, ClockEvent>>,
    /// Dropped clock streams whose detach waits for the transaction to end (L-3).
    detach: BTreeSet<String>,
}

/// How long before the driver started its engine's time begins: a command recovered from a
/// journal keeps its age on the engine's time (its creation is now minus its age), so the
/// engine's retry validity (E-4) counts from its reference's creation, not from the restart.
/// Ages up to this are kept; an older command is reported unknown and never repeated.
pub const ENGINE_TIME_BEFORE_START: Duration = Duration::from_secs(24 * 60 * 60);

/// The engine and everything a driver hands between it and the application.
pub struct Core<S: Seam> {
    engine: Engine,
    seam: S,
    /// The engine's timestamps count from [`ENGINE_TIME_BEFORE_START`] before here: the
    /// instants the core hands out ([`Core::deadline`], [`Connect::deadline`]) are this
    /// plus the clock's elapsed time.
    origin: Instant,
    /// Where the core reads the time.
    clock: std::sync::Arc<dyn HostClock>,
    connect_timeout: Duration,
    credentials: Credentials,
    sessions: BTreeMap<SessionId, Link<S>>,
    commands: BTreeMap<CommandHandle, S::Waiting>,
    reads: BTreeMap<ReadHandle, <S::Hand as Hand>::Once<Result<ReadResult, Error>>>,
    unclaimed: Unclaimed,
    parked: Option<Parked>,
    refused: VecDeque<SessionId>,
    hub: Hub<DriverEvent>,
    /// Evictions from `unclaimed` already reported to observers.
    unclaimed_reported: u64,
    streams: Streams<S>,
    dataplane: Dataplane<S::Hand>,
    /// The client's journal, when it keeps one (feature `journal`).
    #[cfg(feature = "journal")]
    journal: Option<crate::journaled::Journaled>,
}

impl<S: Seam> Core<S> {
    /// A core with a new engine configured by `client`, presenting `credentials`, reporting
    /// to `hub` and keeping unclaimed outcomes in `unclaimed`.
    pub fn new(
        seam: S,
        hand: S::Hand,
        client: ClientConfig,
        credentials: Credentials,
        hub: Hub<DriverEvent>,
        unclaimed: Unclaimed,
    ) -> Self {
        let origin = Instant::now();
        Self {
            connect_timeout: client.connect_timeout,
            engine: Engine::new(client),
            seam,
            origin,
            clock: std::sync::Arc::new(SystemClock::since(origin)),
            credentials,
            sessions: BTreeMap::new(),
            commands: BTreeMap::new(),
            reads: BTreeMap::new(),
            unclaimed,
            parked: None,
            refused: VecDeque::new(),
            hub,
            unclaimed_reported: 0,
            streams: Streams {
                subs: BTreeMap::new(),
                discard: BTreeSet::new(),
                doomed: BTreeSet::new(),
                clocks: BTreeMap::new(),
                detach: BTreeSet::new(),
            },
            dataplane: Dataplane::new(hand),
            #[cfg(feature = "journal")]
            journal: None,
        }
    }

    /// The core journals every command in `opened` from now on (feature `journal`), and
    /// hands out what it found when the application asks; `None` (no journal configured)
    /// leaves it keeping everything in memory only.
    #[cfg(feature = "journal")]
    pub fn set_journal(&mut self, opened: Option<crate::journaled::Opened>) {
        if let Some(opened) = opened {
            // The separate calls' records count on the core's clock too.
            opened.set_clock(self.clock.clone());
            let now = self.now();
            self.journal = Some(crate::journaled::Journaled::new(opened, now));
            // Outbox mode: producer batches are journaled too (SF-2, P-8).
            self.dataplane.outbox_on();
        }
    }

    /// The same core, reading the time from `clock` instead of the host's clocks (a
    /// simulation's virtual time): set before the first call, as the engine's time starts
    /// at the clock's elapsed time. The instants it hands out are its origin plus the
    /// clock's elapsed time; [`Core::deadline_time`] gives the deadline on the engine's time.
    /// Set it before [`Core::set_journal`], which hands the clock to the journal's separate
    /// calls.
    #[must_use]
    pub fn with_clock(mut self, clock: Box<dyn HostClock>) -> Self {
        self.clock = clock.into();
        self
    }

    /// The driver's seam.
    pub fn seam(&self) -> &S {
        &self.seam
    }

    /// The engine's time now: [`ENGINE_TIME_BEFORE_START`] plus the clock's elapsed time.
    #[must_use]
    pub fn now(&self) -> Timestamp {
        Timestamp::from_nanos((ENGINE_TIME_BEFORE_START + self.clock.elapsed()).as_nanos() as u64)
    }

    /// The wall clock's time now, which a command's reference is made from.
    fn wall(&self) -> UnixMillis {
        self.clock.wall()
    }

    /// The instant of the engine's next deadline.
    pub fn deadline(&self) -> Option<Instant> {
        let t = self.deadline_time()?;
        Some(
            self.origin
                + Duration::from_nanos(t.as_nanos()).saturating_sub(ENGINE_TIME_BEFORE_START),
        )
    }

    /// The engine's next deadline (or the journal's) on the engine's time, as
    /// [`Core::now`] counts it.
    #[must_use]
    pub fn deadline_time(&self) -> Option<Timestamp> {
        let t = self.engine.poll_timeout();
        #[cfg(feature = "journal")]
        let t = match (t, self.journal.as_ref().and_then(|j| j.deadline())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        t
    }

    /// Whether some subscription holds events its stream had no room for: the engine still
    /// keeps them, within its budgets (S-8), until the application reads. Right after a
    /// [`Core::drain`] this says the application is behind; right after [`Core::event`] it
    /// also says that frame brought subscription events, which the next drain moves.
    ///
    /// A driver that takes the transports' reports in bursts ends a burst here, and lets the
    /// application read before it takes the next report: otherwise it checks frame after
    /// frame into the engine while the reader waits, and the budget drops what the reader
    /// would have taken (a reader that keeps up never sees an `Overflow`).
    pub fn backlog(&self) -> bool {
        self.engine.subscription_bytes() > 0
    }

    /// The engine's deadline passed.
    pub fn timeout(&mut self) {
        let now = self.now();
        #[cfg(feature = "journal")]
        if let Some(j) = self.journal.as_mut() {
            j.tick(now);
        }
        self.engine.handle_timeout(now);
        // Batches the engine sent now make room for waiting submissions.
        self.dataplane.timer_fired();
    }

    /// The application went without closing: the session ends without a clean close.
    pub fn abandon(&mut self) {
        let now = self.now();
        self.engine.close(now, false);
        self.drain();
    }

    fn parked_error(&self) -> Option<Error> {
        match &self.parked {
            Some(Parked::Unauthenticated) => Some(Error::Unauthenticated),
            Some(Parked::Defect(d)) => Some(Error::Defect(d.clone())),
            None => None,
        }
    }

    /// `Err` while parked; otherwise what `f` makes of the engine.
    fn unless_parked<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        match self.parked_error() {
            Some(e) => Err(e),
            None => f(self),
        }
    }

    /// Handles one call of the application. A close is done in the engine and drained, and
    /// its `done` comes back: the driver lets its sessions take what they were given, then
    /// answers it and stops.
    pub fn request(&mut self, r: Request<S>) -> Option<Reply<S, ()>> {
        let now = self.now();
        match r {
            Request::Recover { command, reply } => {
                let r = self.unless_parked(|c| {
                    let h = c.recover(now, &command)?;
                    Ok(c.track_command(h))
                });
                S::Hand::give(reply, r);
            }
            Request::Execute { query, reply } => {
                let r = self.unless_parked(|c| {
                    let h = c.execute(now, &query)?;
                    Ok(c.track_command(h))
                });
                S::Hand::give(reply, r);
            }
            #[cfg(feature = "journal")]
            Request::Recovery(reply) => {
                let r = match self.journal.as_mut() {
                    Some(j) => j.take_recovery(),
                    None => crate::journaled::Recovery::default(),
                };
                // Told first, ended after: a crash between the two tells it again after
                // the next start; the other order would lose it. The records end only when
                // the caller says it holds the list (`RecoveryRead`): a reply that entered
                // the channel of a call given up meanwhile was never read, and a list nobody
                // read leaves its records for the next start.
                S::Hand::give(reply, Ok(r));
            }
            #[cfg(feature = "journal")]
            Request::RecoveryRead => {
                if let Some(j) = self.journal.as_mut() {
                    j.recovery_reported(now);
                }
            }
            Request::Run { query, reply } => {
                let r = self.unless_parked(|c| c.run(now, &query));
                S::Hand::give(reply, r);
            }
            Request::Read {
                request,
                deadline,
                reply,
            } => {
                let r = self.unless_parked(|c| {
                    let h = c
                        .engine
                        .read(now, request, deadline)
                        .map_err(Error::Refused)?;
                    Ok(c.track_read(h))
                });
                S::Hand::give(reply, r);
            }
            Request::ReadTo {
                request,
                deadline,
                result,
            } => {
                let r = self.unless_parked(|c| {
                    c.engine
                        .read(now, request, deadline)
                        .map_err(Error::Refused)
                });
                match r {
                    Ok(h) => {
                        self.reads.insert(h, result);
                    }
                    Err(e) => {
                        S::Hand::give(result, Err(e));
                    }
                }
            }
            Request::SelectDomain { domain, reply } => {
                let r = self
                    .engine
                    .select_domain(domain.as_deref())
                    .map_err(Error::Refused);
                S::Hand::give(reply, r);
            }
            Request::Binding(reply) => {
                S::Hand::give(reply, Ok(self.engine.binding().clone()));
            }
            Request::Unclaimed(reply) => {
                S::Hand::give(reply, Ok(self.unclaimed.take()));
            }
            Request::UnclaimedBatches(reply) => {
                let kept = self.dataplane.released().unclaimed().take();
                S::Hand::give(reply, Ok(kept));
            }
            Request::Stats(reply) => {
                let stats = crate::api::Stats {
                    engine: self.engine.stats(),
                    unclaimed_held: self.unclaimed.len(),
                    unclaimed_held_bytes: self.unclaimed.bytes(),
                    unclaimed_lost: self.unclaimed.lost(),
                    unclaimed_batches_held: self.dataplane.released().unclaimed().len(),
                    unclaimed_batches_lost: self.dataplane.released().unclaimed().lost(),
                    #[cfg(feature = "journal")]
                    journal: self.journal.as_ref().map(|j| j.stats()),
                };
                S::Hand::give(reply, Ok(stats));
            }
            Request::SetCredentials { credentials, reply } => {
                self.credentials = credentials;
                if self.parked == Some(Parked::Unauthenticated) {
                    self.parked = None;
                }
                if let Some(reply) = reply {
                    S::Hand::give(reply, Ok(()));
                }
            }
            Request::Observe(reply) => {
                S::Hand::give(reply, Ok(self.hub.watch()));
            }
            Request::Subscribe {
                domain,
                statement,
                reply,
            } => {
                let r = self.unless_parked(|c| c.subscribe(now, domain, &statement));
                S::Hand::give(reply, r);
            }
            Request::FollowClock { domain, reply } => {
                let r = self.unless_parked(|c| c.follow_clock(now, domain));
                S::Hand::give(reply, r);
            }
            Request::Dataplane(call) => {
                // Outbox mode: a batch is journaled before its submission is answered.
                #[cfg(feature = "journal")]
                let call = match (self.journal.as_mut(), call) {
                    (
                        Some(j),
                        Call::Submit {
                            producer,
                            batch,
                            waiter,
                        },
                    ) => {
                        self.dataplane.submit_outboxed(
                            &mut self.engine,
                            now,
                            self.clock.wall(),
                            producer,
                            batch,
                            waiter,
                            j,
                        );
                        return None;
                    }
                    (_, call) => call,
                };
                let stopped = self.parked_error();
                self.dataplane.call(&mut self.engine, now, call, stopped);
            }
            Request::Close { revert, done } => {
                self.engine.close(now, revert);
                self.drain();
                // Every command has ended and its record with it: the slot is free for the
                // next client as soon as the close is answered.
                #[cfg(feature = "journal")]
                {
                    self.journal = None;
                }
                return Some(done);
            }
        }
        None
    }

    /// Hands a command to the engine, its record journaled first when the client keeps a
    /// journal.
    fn execute(&mut self, now: Timestamp, query: &str) -> Result<CommandHandle, Error> {
        #[cfg(feature = "journal")]
        if let Some(j) = self.journal.as_mut() {
            return j.execute(&mut self.engine, now, self.clock.wall(), query);
        }
        self.engine
            .execute(now, self.wall(), query)
            .map_err(Error::Refused)
    }

    /// Repeats a command, under its journaled record (or a new one) when the client keeps a
    /// journal.
    fn recover(
        &mut self,
        now: Timestamp,
        command: &RetainedCommand,
    ) -> Result<CommandHandle, Error> {
        #[cfg(feature = "journal")]
        if let Some(j) = self.journal.as_mut() {
            return j.recover(&mut self.engine, now, self.clock.wall(), command);
        }
        self.engine
            .recover(now, command, None)
            .map_err(Error::Refused)
    }

    /// Routes a query; a command's record is journaled first when the client keeps a journal.
    fn route(&mut self, now: Timestamp, query: &str) -> Result<Routed, Error> {
        #[cfg(feature = "journal")]
        if let Some(j) = self.journal.as_mut() {
            return j.run(&mut self.engine, now, self.clock.wall(), query);
        }
        self.engine
            .run(now, self.wall(), query)
            .map_err(Error::Refused)
    }

    fn run(&mut self, now: Timestamp, query: &str) -> Result<RunSubmitted<S>, Error> {
        match self.route(now, query) {
            Ok(Routed::Command(h)) => Ok(RunSubmitted::Command(self.track_command(h))),
            Ok(Routed::Request(h)) => Ok(RunSubmitted::Read(self.track_read(h))),
            Ok(Routed::DomainSelected(d)) => Ok(RunSubmitted::Selected(d)),
            // Kept state nobody would read: undone at once, and the application is pointed
            // at the calls that hand out a stream.
            Ok(Routed::Subscribed(id)) => {
                let _ = self.engine.delete_subscription(now, id);
                Err(Error::Unsupported(
                    "CREATE SUBSCRIPTION: use subscribe".into(),
                ))
            }
            Ok(Routed::ClockFollowed(d)) => {
                let _ = self.engine.detach_clock(now, &d);
                Err(Error::Unsupported(
                    "ATTACH DOMAIN CLOCK: use follow_clock".into(),
                ))
            }
            Ok(other) => Err(Error::Unsupported(format!("{other:?}"))),
            Err(e) => Err(e),
        }
    }

    fn track_command(&mut self, h: CommandHandle) -> Accepted<S> {
        let reference = self
            .engine
            .reference_of(h)
            .map(|r| r.to_string())
            .unwrap_or_default();
        let now = self.now();
        let wait = self
            .engine
            .command_deadline(h)
            .map_or(Duration::ZERO, |d| d.saturating_since(now));
        let (waiting, result) = S::command();
        self.commands.insert(h, waiting);
        Accepted {
            reference,
            wait,
            result,
            unclaimed: self.unclaimed.clone(),
        }
    }

    fn track_read(&mut self, h: ReadHandle) -> ReadWait<S> {
        let (tx, rx) = S::Hand::once();
        self.reads.insert(h, tx);
        rx
    }

    /// A session's transport reported something.
    pub fn event(&mut self, sid: SessionId, e: Event) {
        let now = self.now();
        match e {
            Event::Connected => self.engine.handle_connected(now, sid),
            Event::Frame(f) => self.engine.handle_frame(now, sid, f),
            Event::Ended(end) => {
                if self.sessions.remove(&sid).is_none() && !S::ENDS_OF_DROPPED_SESSIONS {
                    // A session the engine already dropped.
                    return;
                }
                self.hub.send(DriverEvent::TransportEnded {
                    session: sid,
                    end: end.clone(),
                });
                tracing::debug!(session = sid.0, ?end, "nervix transport ended");
                match end {
                    End::Unauthenticated => {
                        tracing::warn!(
                            session = sid.0,
                            "nervix credentials refused: nothing is sent until new ones are set"
                        );
                        self.park(Parked::Unauthenticated)
                    }
                    End::FrameRefused(code) => self.park(Parked::Defect(format!(
                        "the call ended with grpc-status {code}"
                    ))),
                    End::Defect(code) => {
                        self.park(Parked::Defect(format!("the console closed with {code}")))
                    }
                    _ => {}
                }
                self.engine.handle_closed(now, sid);
                if self.parked.is_some() {
                    self.settle_parked();
                }
            }
        }
    }

    fn park(&mut self, p: Parked) {
        if let Parked::Defect(why) = &p {
            tracing::warn!(why = %why, "nervix server refused a frame of ours: the client stops");
        }
        if !matches!(self.parked, Some(Parked::Defect(_))) {
            self.parked = Some(p);
        }
    }

    /// While parked nothing reaches the network: every command is cancelled (it ends as
    /// failed when it was never sent, otherwise uncertain naming its reference, and is never
    /// sent again, T-5, T-6, T-3), and read waiters are told why.
    fn settle_parked(&mut self) {
        let Some(err) = self.parked_error() else {
            return;
        };
        let now = self.now();
        let handles: Vec<CommandHandle> = self.commands.keys().copied().collect();
        for h in handles {
            let _ = self.engine.cancel(now, h);
        }
        self.drain();
        for (_, tx) in std::mem::take(&mut self.reads) {
            S::Hand::give(tx, Err(err.clone()));
        }
    }

    /// Performs every action and hands out every event, until the engine has nothing more.
    pub fn drain(&mut self) {
        loop {
            let mut any = false;
            // Outbox mode: batches on the wire are marked handed before any frame goes.
            #[cfg(feature = "journal")]
            self.journal_batches();
            while let Some(a) = self.engine.poll_action() {
                any = true;
                self.action(a);
            }
            while let Some(e) = self.engine.poll_event() {
                any = true;
                self.client_event(e);
            }
            while let Some(u) = self.engine.poll_unsolicited() {
                any = true;
                match u {
                    Unsolicited::Frame(f) => self.hub.send(DriverEvent::Unsolicited(f)),
                    Unsolicited::Lost { dropped } => {
                        self.hub.send(DriverEvent::UnsolicitedLost(dropped))
                    }
                    _ => {}
                }
            }
            let lost = self.unclaimed.lost();
            if lost > self.unclaimed_reported {
                self.hub
                    .send(DriverEvent::UnclaimedLost(lost - self.unclaimed_reported));
                self.unclaimed_reported = lost;
            }
            any |= self.route_streams();
            any |= self.route_dataplane();
            // Connects refused while parked are answered only now, outside the engine's
            // own drain, and the engine may then ask for more.
            while let Some(sid) = self.refused.pop_front() {
                any = true;
                let now = self.now();
                self.engine.handle_closed(now, sid);
            }
            if !any {
                // Outcomes routed last end their records now.
                #[cfg(feature = "journal")]
                self.journal_batches();
                return;
            }
        }
    }

    /// Outbox mode: tells the journal which batch each record became and which ended, in
    /// order, then has every batch the engine put on the wire marked handed. A mark that
    /// cannot be written keeps every frame the engine holds from its transport: the sessions
    /// are dropped uncleanly (their batches end of unknown outcome, P-8, and are never sent
    /// again), so a batch whose record says it was never sent never was.
    #[cfg(feature = "journal")]
    fn journal_batches(&mut self) {
        let now = self.now();
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        for note in self.dataplane.take_notes() {
            match note {
                crate::dataplane::Note::Taken {
                    key,
                    producer,
                    batch,
                } => j.batch_taken(key, producer, batch),
                crate::dataplane::Note::Dropped { key } => j.batch_dropped(key, now),
                crate::dataplane::Note::Outcome { producer, batch } => {
                    j.batch_outcome(producer, batch, now)
                }
            }
        }
        if !j.before_send(&self.engine, now) {
            let sessions: Vec<SessionId> = self.sessions.keys().copied().collect();
            for sid in sessions {
                self.sessions.remove(&sid);
                self.refused.push_back(sid);
            }
        }
    }

    fn action(&mut self, a: Action) {
        match a {
            Action::Connect { session, endpoint } => {
                if self.parked.is_some() {
                    self.refused.push_back(session);
                    return;
                }
                let to = Connect {
                    session,
                    endpoint,
                    credentials: self.credentials.clone(),
                    deadline: self.origin + self.clock.elapsed() + self.connect_timeout,
                };
                match self.seam.connect(to) {
                    Some(io) => {
                        let pending = VecDeque::new();
                        self.sessions.insert(session, Link { io, pending });
                    }
                    // Not started: the connect failed at once.
                    None => self.refused.push_back(session),
                }
            }
            Action::Send { session, frame } => self.queue(session, Out::Frame(frame)),
            Action::Close { session, clean } => {
                if clean {
                    self.queue(session, Out::Close);
                } else {
                    // Dropped at once: the transport goes without a clean end.
                    self.sessions.remove(&session);
                }
            }
            _ => {}
        }
    }

    /// Hands `o` to the session's transport, or keeps it behind what waits already.
    fn queue(&mut self, session: SessionId, o: Out) {
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        if s.pending.is_empty() {
            if let Given::Full(o) = S::send(&s.io, o) {
                s.pending.push_back(o);
            }
        } else {
            s.pending.push_back(o);
        }
    }

    /// Hands kept frames to the transports with room, in order; true when some still wait.
    pub fn flush_sessions(&mut self) -> bool {
        let mut blocked = false;
        for s in self.sessions.values_mut() {
            while let Some(o) = s.pending.pop_front() {
                match S::send(&s.io, o) {
                    Given::Taken => {}
                    Given::Full(o) => {
                        s.pending.push_front(o);
                        blocked = true;
                        break;
                    }
                    Given::Gone => {
                        s.pending.clear();
                        break;
                    }
                }
            }
        }
        blocked
    }

    /// The first session whose transport is not taking its frames.
    pub fn blocked(&self) -> Option<(SessionId, &S::Session)> {
        self.sessions
            .iter()
            .find(|(_, s)| !s.pending.is_empty())
            .map(|(id, s)| (*id, &s.io))
    }

    /// The next frame kept for `session`, for a transport that made room for it.
    pub fn next_pending(&mut self, session: SessionId) -> Option<Out> {
        self.sessions.get_mut(&session)?.pending.pop_front()
    }

    /// Forgets the frames kept for a session whose transport is gone.
    pub fn clear_pending(&mut self, session: SessionId) {
        if let Some(s) = self.sessions.get_mut(&session) {
            s.pending.clear();
        }
    }

    /// Every session's transport, given up by the core (a stopping driver waits for them).
    pub fn take_sessions(&mut self) -> Vec<S::Session> {
        std::mem::take(&mut self.sessions)
            .into_values()
            .map(|s| s.io)
            .collect()
    }

    fn client_event(&mut self, e: ClientEvent) {
        match e {
            ClientEvent::Command { handle, result } => {
                // The outcome is handed over first, to its waiter or the store, and only then
                // does its record end: a process that dies between the two finds the record
                // again and recovers the outcome under the same reference (`Recovered`), where
                // the other order would lose an outcome the application was never given.
                #[cfg(feature = "journal")]
                let keep = nervix_journal::kept_since(&result);
                let unclaimed = match self.commands.remove(&handle) {
                    Some(waiting) => S::hand_over(waiting, result),
                    None => Some(result),
                };
                // An outcome whose caller stopped waiting is kept, never lost (C-10).
                if let Some(result) = unclaimed {
                    self.unclaimed.keep(result);
                }
                #[cfg(feature = "journal")]
                {
                    let now = self.now();
                    if let Some(j) = self.journal.as_mut() {
                        j.ended(handle, keep, now);
                    }
                }
            }
            ClientEvent::Read { handle, result } => {
                if let Some(tx) = self.reads.remove(&handle) {
                    S::Hand::give(tx, Ok(result));
                }
            }
            ClientEvent::SessionOpened { session, endpoint } => {
                #[cfg(feature = "journal")]
                if let Some(j) = self.journal.as_mut() {
                    j.set_publishing(true);
                }
                self.hub
                    .send(DriverEvent::SessionOpened { session, endpoint });
            }
            ClientEvent::SessionLost { session, loss } => {
                #[cfg(feature = "journal")]
                if let Some(j) = self.journal.as_mut() {
                    j.set_publishing(false);
                }
                self.hub.send(DriverEvent::SessionLost { session, loss });
            }
            ClientEvent::Transaction(b) => self.hub.send(DriverEvent::Transaction(b)),
            _ => {}
        }
    }

    fn subscribe(
        &mut self,
        now: Timestamp,
        domain: Option<String>,
        statement: &str,
    ) -> Result<S::Subscription, Error> {
        let domain = domain
            .or_else(|| self.engine.selected_domain().map(str::to_string))
            .ok_or(Error::Refused(ClientError::NoDomainSelected))?;
        let id = self
            .engine
            .subscribe(now, &domain, statement)
            .map_err(Error::Refused)?;
        let (sink, stream) = self.seam.subscription(id);
        self.streams.subs.insert(id, Outlet::new(sink));
        Ok(stream)
    }

    fn follow_clock(&mut self, now: Timestamp, domain: String) -> Result<S::ClockFollow, Error> {
        self.engine
            .follow_clock(now, &domain)
            .map_err(Error::Refused)?;
        let (sink, stream) = self.seam.clock(domain.clone());
        self.streams.clocks.insert(domain, Outlet::new(sink));
        Ok(stream)
    }

    /// Moves subscription and clock events into their streams while the streams have room,
    /// and deletes or detaches what the application dropped. True when it asked the engine
    /// for something (which may have actions).
    fn route_streams(&mut self) -> bool {
        let now = self.now();
        let engine = &mut self.engine;
        let st = &mut self.streams;
        let mut asked = false;
        let mut gone = Vec::new();
        for (id, out) in st.subs.iter_mut() {
            if out.sink.dropped() {
                gone.push(*id);
                continue;
            }
            while out.flush() {
                if out.ended {
                    gone.push(*id);
                    break;
                }
                if !out.sink.room() {
                    break;
                }
                let Some(e) = engine.poll_subscription(*id) else {
                    break;
                };
                out.ended = matches!(e, SubscriptionEvent::Ended(_));
                out.waiting.push_back(e);
            }
        }
        for id in gone {
            if st.subs.remove(&id).is_some_and(|out| out.sink.dropped()) {
                // Dropped by the application: deleted (S-6), or once the transaction ends.
                st.discard.insert(id);
                st.doomed.insert(id);
            }
        }
        st.doomed
            .retain(|id| match engine.delete_subscription(now, *id) {
                Ok(()) => {
                    asked = true;
                    false
                }
                Err(ClientError::InTransaction) => true,
                Err(_) => false,
            });
        st.discard.retain(|id| {
            while let Some(e) = engine.poll_subscription(*id) {
                if matches!(e, SubscriptionEvent::Ended(_)) {
                    return false;
                }
            }
            engine.subscription(*id).is_some()
        });
        while let Some(e) = engine.poll_clock_event() {
            if let Some(out) = clock_domain(&e).and_then(|d| st.clocks.get_mut(d)) {
                // One unread event of each kind is kept (K-3).
                keep_newest_of_kind(&mut out.waiting, e);
            }
        }
        st.clocks.retain(|domain, out| {
            if out.sink.dropped() {
                // Dropped by the application: detached (K-1), or once the transaction ends.
                st.detach.insert(domain.clone());
                return false;
            }
            let last = out
                .waiting
                .iter()
                .any(|e| matches!(e, ClockEvent::Ended { .. }));
            !(out.flush() && last)
        });
        st.detach
            .retain(|domain| match engine.detach_clock(now, domain) {
                Ok(()) => {
                    asked = true;
                    false
                }
                Err(ClientError::InTransaction) => true,
                Err(_) => false,
            });
        asked
    }

    /// Hands producer and consumer events to their handles, and closes what the application
    /// dropped. True when it asked the engine for something (which may have actions).
    fn route_dataplane(&mut self) -> bool {
        let now = self.now();
        let hub = &self.hub;
        self.dataplane.route(
            &mut self.engine,
            now,
            |producer, event| hub.send(DriverEvent::Producer { producer, event }),
            |consumer, event| hub.send(DriverEvent::Consumer { consumer, event }),
        )
    }
}

impl<S: Seam> Drop for Core<S> {
    /// Observers read what is queued, then learn that nothing more comes.
    fn drop(&mut self) {
        self.hub.close();
    }
}

/// Races a command's hand-over ([`Seam::hand_over`]) against its waiter being dropped,
/// `rounds` times, for a driver's C-10 test: `wait` makes the application's waiter of an
/// accepted command; the hand-over runs on a thread of its own, released at the moment this
/// thread drops the waiter (after a spin that varies by round), and what it gives back (the
/// waiter left) goes to the store of unclaimed outcomes, as the core does. After the race
/// every result was read by its waiter's drop or kept: the store, which it returns, accounts
/// for each round (kept, or counted lost to its bounds).
#[doc(hidden)]
pub fn race_hand_over<S: Seam, W>(rounds: usize, wait: impl Fn(Accepted<S>) -> W) -> Unclaimed
where
    S::Waiting: Send + 'static,
{
    let unclaimed = &Unclaimed::default();
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let go = Arc::new(AtomicUsize::new(0));
    let (senders_tx, senders) = std::sync::mpsc::channel::<S::Waiting>();
    let sender = {
        let (unclaimed, go) = (unclaimed.clone(), go.clone());
        std::thread::spawn(move || {
            for (round, waiting) in senders.iter().enumerate() {
                while go.load(Ordering::Acquire) <= round {
                    std::hint::spin_loop();
                }
                let r = CommandResult::Failed(nervix_protocol::client::Failure::NotSent);
                if let Some(r) = S::hand_over(waiting, r) {
                    unclaimed.keep(r);
                }
            }
        })
    };
    for round in 0..rounds {
        let (waiting, result) = S::command();
        let waiter = wait(Accepted {
            reference: String::new(),
            wait: Duration::ZERO,
            result,
            unclaimed: unclaimed.clone(),
        });
        senders_tx.send(waiting).expect("the sender runs");
        go.store(round + 1, Ordering::Release);
        for _ in 0..(round % 512) {
            std::hint::spin_loop();
        }
        drop(waiter);
    }
    drop(senders_tx);
    sender.join().expect("the sender ends");
    assert_eq!(
        unclaimed.lost() as usize + unclaimed.len(),
        rounds,
        "every outcome was read or kept (C-10)"
    );
    unclaimed.clone()
}
