//! The driver thread: it owns the sans-IO engine, opens the sessions it asks for on threads
//! of their own, and answers the application's calls. Everything reaches it through one
//! bounded inbox, and it never waits longer than the engine's next deadline.

use crate::config::{Config, Credentials};
use crate::dataplane::Blocking;
use crate::net::Dialer;
use crate::session::{self, Dial, End, Event, Out};
use crate::streams::{self, clock_domain, keep_clock, ClockFollow, Sink, Subscription};
use crate::{DriverEvent, Error};
use nervix_driver_support::dataplane::{Call, Dataplane};
use nervix_driver_support::observe::{Hub, Watch};
pub(crate) use nervix_driver_support::unclaimed::{Gate, Unclaimed};
use nervix_protocol::client::{
    Action, Client as Engine, ClientError, ClientEvent, ClockEvent, CommandHandle, CommandResult,
    ReadHandle, ReadResult, RetainedCommand, Routed, SessionId, SubscriptionEvent, SubscriptionId,
};
use nervix_protocol::exchange::Unsolicited;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::time::{Timestamp, UnixMillis};
use nervix_protocol::transaction::Binding;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Frames queued for one session's thread before the driver keeps them itself.
const SESSION_QUEUE: usize = 64;
/// How long a closing driver waits for its sessions to write their close frames.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

pub(crate) type Reply<T> = mpsc::SyncSender<Result<T, Error>>;

/// A command the engine accepted: its reference, and where its result will come.
#[derive(Debug)]
pub(crate) struct Submitted {
    pub reference: String,
    pub result: mpsc::Receiver<CommandResult>,
    /// Orders the result's hand-over against the waiter leaving (C-10).
    pub gate: Gate,
    pub unclaimed: Unclaimed,
}

/// What a statement given to `run` became.
#[derive(Debug)]
pub(crate) enum RunSubmitted {
    Command(Submitted),
    Read(mpsc::Receiver<Result<ReadResult, Error>>),
    Selected(String),
}

/// A call of the application.
pub(crate) enum Request {
    Execute {
        query: String,
        reply: Reply<Submitted>,
    },
    /// Repeat an uncertain command exactly (E-2, E-3).
    Recover {
        command: Box<RetainedCommand>,
        reply: Reply<Submitted>,
    },
    Run {
        query: String,
        reply: Reply<RunSubmitted>,
    },
    Read {
        request: ClientRequestT,
        deadline: Option<Duration>,
        reply: Reply<mpsc::Receiver<Result<ReadResult, Error>>>,
    },
    SelectDomain {
        domain: Option<String>,
        reply: Reply<()>,
    },
    Binding(Reply<Binding>),
    Unclaimed(Reply<Vec<CommandResult>>),
    SetCredentials(Credentials, Reply<()>),
    Observe(Reply<Watch<DriverEvent>>),
    Subscribe {
        domain: Option<String>,
        statement: String,
        reply: Reply<Subscription>,
    },
    FollowClock {
        domain: String,
        reply: Reply<ClockFollow>,
    },
    /// Producers and consumers: open, submit, read a delivery, settle, close.
    Dataplane(Call<Blocking>),
    Close {
        revert: bool,
        done: Reply<()>,
    },
}

/// Everything the driver thread is told.
pub(crate) enum Inbox {
    App(Request),
    Session(SessionId, Event),
    /// A stream's reader made room or dropped the stream.
    Pull,
    /// The last handle of the application went.
    Dropped,
}

/// Why the driver stopped connecting.
#[derive(Debug, Clone, PartialEq)]
enum Parked {
    /// The credentials were refused; not retried until new ones are given (T-5).
    Unauthenticated,
    /// The server said a frame of ours was defective (T-3); nothing is sent again.
    Defect(String),
}

struct SessionIo {
    out: mpsc::SyncSender<Out>,
    /// Frames (and a clean close) the thread has not taken yet: kept across back-pressure,
    /// in order.
    pending: VecDeque<Out>,
    thread: JoinHandle<()>,
}

pub(crate) struct Driver {
    engine: Engine,
    config: Config,
    tls: Option<Dialer>,
    origin: Instant,
    inbox: mpsc::Receiver<Inbox>,
    inbox_tx: mpsc::SyncSender<Inbox>,
    sessions: BTreeMap<SessionId, SessionIo>,
    commands: BTreeMap<CommandHandle, (mpsc::SyncSender<CommandResult>, Gate)>,
    reads: BTreeMap<ReadHandle, mpsc::SyncSender<Result<ReadResult, Error>>>,
    unclaimed: Unclaimed,
    parked: Option<Parked>,
    refused: VecDeque<SessionId>,
    watchers: Hub<DriverEvent>,
    /// Evictions from `unclaimed` already reported to observers.
    unclaimed_reported: u64,
    streams: Streams,
    dataplane: Dataplane<Blocking>,
}

/// Where subscription and clock events go.
#[derive(Default)]
struct Streams {
    /// Each subscription's sink, and whether its last event (`Ended`) is in it.
    subs: BTreeMap<SubscriptionId, (Sink<SubscriptionEvent>, bool)>,
    /// Dropped streams whose events are discarded until the subscription ends.
    discard: BTreeSet<SubscriptionId>,
    /// Dropped streams whose deletion waits for the transaction to end (L-3).
    doomed: BTreeSet<SubscriptionId>,
    clocks: BTreeMap<String, Sink<ClockEvent>>,
    /// Dropped clock streams whose detach waits for the transaction to end (L-3).
    detach: BTreeSet<String>,
}

fn wall() -> UnixMillis {
    UnixMillis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    )
}

impl Driver {
    pub(crate) fn new(
        config: Config,
        tls: Option<Dialer>,
        inbox: mpsc::Receiver<Inbox>,
        inbox_tx: mpsc::SyncSender<Inbox>,
        unclaimed: Unclaimed,
    ) -> Self {
        let hand = Blocking {
            inbox: inbox_tx.clone(),
        };
        Self {
            engine: Engine::new(config.client.clone()),
            config,
            tls,
            origin: Instant::now(),
            inbox,
            inbox_tx,
            sessions: BTreeMap::new(),
            commands: BTreeMap::new(),
            reads: BTreeMap::new(),
            unclaimed,
            parked: None,
            refused: VecDeque::new(),
            watchers: Hub::default(),
            unclaimed_reported: 0,
            streams: Streams::default(),
            dataplane: Dataplane::new(hand),
        }
    }

    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.origin.elapsed().as_nanos() as u64)
    }

    fn instant(&self, t: Timestamp) -> Instant {
        self.origin + Duration::from_nanos(t.as_nanos())
    }

    fn parked_error(&self) -> Option<Error> {
        match &self.parked {
            Some(Parked::Unauthenticated) => Some(Error::Unauthenticated),
            Some(Parked::Defect(d)) => Some(Error::Defect(d.clone())),
            None => None,
        }
    }

    /// Runs until the application closes the client or drops its last handle.
    pub(crate) fn run(mut self) {
        loop {
            self.drain();
            let blocked = self.push_pending();
            let now = Instant::now();
            let wake = self.engine.poll_timeout().map(|t| self.instant(t));
            if wake.is_some_and(|w| w <= now) {
                let t = self.now();
                self.engine.handle_timeout(t);
                // Batches the engine sent now make room for waiting submissions.
                self.dataplane.timer_fired();
                continue;
            }
            let mut wait = wake.map_or(Duration::from_secs(3600), |w| w - now);
            if blocked {
                // A session's thread is not taking frames: look again soon.
                wait = wait.min(Duration::from_millis(1));
            }
            match self.inbox.recv_timeout(wait) {
                Ok(Inbox::App(r)) => {
                    if self.request(r) {
                        return;
                    }
                }
                Ok(Inbox::Session(sid, e)) => self.event(sid, e),
                // The drain at the top of the loop moves more events.
                Ok(Inbox::Pull) => {}
                Ok(Inbox::Dropped) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let now = self.now();
                    self.engine.close(now, false);
                    self.drain();
                    self.finish();
                    return;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Hands queued frames to session threads with room; true when some are still waiting.
    fn push_pending(&mut self) -> bool {
        let mut blocked = false;
        for s in self.sessions.values_mut() {
            while let Some(o) = s.pending.pop_front() {
                match s.out.try_send(o) {
                    Ok(()) => {}
                    Err(mpsc::TrySendError::Full(o)) => {
                        s.pending.push_front(o);
                        blocked = true;
                        break;
                    }
                    Err(mpsc::TrySendError::Disconnected(_)) => {
                        s.pending.clear();
                        break;
                    }
                }
            }
        }
        blocked
    }

    /// Lets every session write what it was given (a clean close among it), then waits a
    /// bounded time for their threads.
    fn finish(&mut self) {
        let give_up = Instant::now() + CLOSE_WAIT;
        while self.push_pending() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
        }
        let threads: Vec<JoinHandle<()>> = std::mem::take(&mut self.sessions)
            .into_values()
            .map(|s| s.thread)
            .collect();
        for t in threads {
            while !t.is_finished() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Handles one call of the application; true when the driver is to stop.
    fn request(&mut self, r: Request) -> bool {
        let now = self.now();
        match r {
            Request::Recover { command, reply } => {
                let r = match self.parked_error() {
                    Some(e) => Err(e),
                    None => self
                        .engine
                        .recover(now, &command, None)
                        .map_err(Error::Refused)
                        .map(|h| self.track_command(h)),
                };
                let _ = reply.send(r);
            }
            Request::Execute { query, reply } => {
                let r = match self.parked_error() {
                    Some(e) => Err(e),
                    None => self
                        .engine
                        .execute(now, wall(), &query)
                        .map_err(Error::Refused)
                        .map(|h| self.track_command(h)),
                };
                let _ = reply.send(r);
            }
            Request::Run { query, reply } => {
                let r = match self.parked_error() {
                    Some(e) => Err(e),
                    None => match self.engine.run(now, wall(), &query) {
                        Ok(Routed::Command(h)) => Ok(RunSubmitted::Command(self.track_command(h))),
                        Ok(Routed::Request(h)) => Ok(RunSubmitted::Read(self.track_read(h))),
                        Ok(Routed::DomainSelected(d)) => Ok(RunSubmitted::Selected(d)),
                        // Kept state nobody would read: undone at once.
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
                        Err(e) => Err(Error::Refused(e)),
                    },
                };
                let _ = reply.send(r);
            }
            Request::Read {
                request,
                deadline,
                reply,
            } => {
                let r = match self.parked_error() {
                    Some(e) => Err(e),
                    None => self
                        .engine
                        .read(now, request, deadline)
                        .map_err(Error::Refused)
                        .map(|h| self.track_read(h)),
                };
                let _ = reply.send(r);
            }
            Request::SelectDomain { domain, reply } => {
                let r = self
                    .engine
                    .select_domain(domain.as_deref())
                    .map_err(Error::Refused);
                let _ = reply.send(r);
            }
            Request::Binding(reply) => {
                let _ = reply.send(Ok(self.engine.binding().clone()));
            }
            Request::Unclaimed(reply) => {
                let _ = reply.send(Ok(self.unclaimed.take()));
            }
            Request::SetCredentials(c, reply) => {
                self.config.credentials = c;
                if self.parked == Some(Parked::Unauthenticated) {
                    self.parked = None;
                }
                let _ = reply.send(Ok(()));
            }
            Request::Observe(reply) => {
                let _ = reply.send(Ok(self.watchers.watch()));
            }
            Request::Subscribe {
                domain,
                statement,
                reply,
            } => {
                let r = self.subscribe(now, domain, &statement);
                let _ = reply.send(r);
            }
            Request::FollowClock { domain, reply } => {
                let r = self.follow_clock(now, domain);
                let _ = reply.send(r);
            }
            Request::Dataplane(call) => {
                let stopped = self.parked_error();
                self.dataplane.call(&mut self.engine, now, call, stopped);
            }
            Request::Close { revert, done } => {
                self.engine.close(now, revert);
                self.drain();
                self.finish();
                let _ = done.send(Ok(()));
                return true;
            }
        }
        false
    }

    fn track_command(&mut self, h: CommandHandle) -> Submitted {
        let (tx, rx) = mpsc::sync_channel(1);
        let gate = Gate::default();
        self.commands.insert(h, (tx, gate.clone()));
        let reference = self
            .engine
            .reference_of(h)
            .map(|r| r.to_string())
            .unwrap_or_default();
        Submitted {
            reference,
            result: rx,
            gate,
            unclaimed: self.unclaimed.clone(),
        }
    }

    /// Hands producer and consumer events to their handles, and closes what the application
    /// dropped. True when it asked the engine for something (which may have actions).
    fn route_dataplane(&mut self) -> bool {
        let now = self.now();
        let watchers = &self.watchers;
        let to_producer =
            |producer, event| watchers.send(DriverEvent::Producer { producer, event });
        let to_consumer =
            |consumer, event| watchers.send(DriverEvent::Consumer { consumer, event });
        self.dataplane
            .route(&mut self.engine, now, to_producer, to_consumer)
    }

    fn track_read(&mut self, h: ReadHandle) -> mpsc::Receiver<Result<ReadResult, Error>> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.reads.insert(h, tx);
        rx
    }

    fn notify(&mut self, e: DriverEvent) {
        self.watchers.send(e);
    }

    /// A session's thread reported something.
    fn event(&mut self, sid: SessionId, e: Event) {
        let now = self.now();
        match e {
            Event::Connected => self.engine.handle_connected(now, sid),
            Event::Frame(f) => self.engine.handle_frame(now, sid, f),
            Event::Ended(end) => {
                if self.sessions.remove(&sid).is_none() {
                    // A session the engine already dropped.
                    return;
                }
                self.notify(DriverEvent::TransportEnded {
                    session: sid,
                    end: end.clone(),
                });
                match end {
                    End::Unauthenticated => self.park(Parked::Unauthenticated),
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
        if !matches!(self.parked, Some(Parked::Defect(_))) {
            self.parked = Some(p);
        }
    }

    /// While parked nothing reaches the network: every command is cancelled (failed when it
    /// was never sent, otherwise uncertain naming its reference, and never sent again, T-5,
    /// T-3), and read waiters are told why.
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
            let _ = tx.send(Err(err.clone()));
        }
    }

    /// Performs every action and hands out every event, until the engine has nothing more.
    fn drain(&mut self) {
        loop {
            let mut any = false;
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
                    Unsolicited::Frame(f) => self.notify(DriverEvent::Unsolicited(f)),
                    Unsolicited::Lost { dropped } => {
                        self.notify(DriverEvent::UnsolicitedLost(dropped))
                    }
                    _ => {}
                }
            }
            let lost = self.unclaimed.lost();
            if lost > self.unclaimed_reported {
                self.notify(DriverEvent::UnclaimedLost(lost - self.unclaimed_reported));
                self.unclaimed_reported = lost;
            }
            any |= self.route_streams();
            any |= self.route_dataplane();
            // Connects refused while parked are answered here, outside the engine's own
            // drain, and the engine may then ask for more.
            while let Some(sid) = self.refused.pop_front() {
                any = true;
                let now = self.now();
                self.engine.handle_closed(now, sid);
            }
            if !any {
                return;
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
                let (out_tx, out_rx) = mpsc::sync_channel(SESSION_QUEUE);
                let dial = Dial {
                    session,
                    endpoint,
                    auth: self.config.auth,
                    credentials: self.config.credentials.clone(),
                    tls: self.tls.clone(),
                    connect_deadline: Instant::now() + self.config.client.connect_timeout,
                    write_timeout: self.config.write_timeout,
                    poll_interval: self.config.poll_interval,
                    events: self.inbox_tx.clone(),
                };
                let spawned = std::thread::Builder::new()
                    .name(format!("nervix-session-{}", session.0))
                    .spawn(move || session::run(dial, out_rx));
                match spawned {
                    Ok(thread) => {
                        self.sessions.insert(
                            session,
                            SessionIo {
                                out: out_tx,
                                pending: VecDeque::new(),
                                thread,
                            },
                        );
                    }
                    // No thread: the connect failed at once.
                    Err(_) => self.refused.push_back(session),
                }
            }
            Action::Send { session, frame } => self.queue(session, Out::Frame(frame)),
            Action::Close { session, clean } => {
                if clean {
                    self.queue(session, Out::Close);
                } else {
                    // Dropped at once: the thread sees its queue gone and drops the socket
                    // without a clean end.
                    self.sessions.remove(&session);
                }
            }
            _ => {}
        }
    }

    fn queue(&mut self, session: SessionId, o: Out) {
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        if s.pending.is_empty() {
            match s.out.try_send(o) {
                Ok(()) => {}
                Err(mpsc::TrySendError::Full(o)) => s.pending.push_back(o),
                Err(mpsc::TrySendError::Disconnected(_)) => {}
            }
        } else {
            s.pending.push_back(o);
        }
    }

    fn client_event(&mut self, e: ClientEvent) {
        match e {
            ClientEvent::Command { handle, result } => match self.commands.remove(&handle) {
                Some((tx, gate)) => {
                    if let Some(result) = deliver(&tx, &gate, result) {
                        self.keep_unclaimed(result);
                    }
                }
                None => self.keep_unclaimed(result),
            },
            ClientEvent::Read { handle, result } => {
                if let Some(tx) = self.reads.remove(&handle) {
                    let _ = tx.send(Ok(result));
                }
            }
            ClientEvent::SessionOpened { session, endpoint } => {
                self.notify(DriverEvent::SessionOpened { session, endpoint });
            }
            ClientEvent::SessionLost { session, loss } => {
                self.notify(DriverEvent::SessionLost { session, loss });
            }
            ClientEvent::Transaction(b) => self.notify(DriverEvent::Transaction(b)),
            _ => {}
        }
    }

    fn subscribe(
        &mut self,
        now: Timestamp,
        domain: Option<String>,
        statement: &str,
    ) -> Result<Subscription, Error> {
        if let Some(e) = self.parked_error() {
            return Err(e);
        }
        let domain = domain
            .or_else(|| self.engine.selected_domain().map(str::to_string))
            .ok_or(Error::Refused(ClientError::NoDomainSelected))?;
        let id = self
            .engine
            .subscribe(now, &domain, statement)
            .map_err(Error::Refused)?;
        let (sink, stream) = streams::subscription(id, &self.inbox_tx);
        self.streams.subs.insert(id, (sink, false));
        Ok(stream)
    }

    fn follow_clock(&mut self, now: Timestamp, domain: String) -> Result<ClockFollow, Error> {
        if let Some(e) = self.parked_error() {
            return Err(e);
        }
        self.engine
            .follow_clock(now, &domain)
            .map_err(Error::Refused)?;
        let (sink, stream) = streams::clock(domain.clone(), &self.inbox_tx);
        self.streams.clocks.insert(domain, sink);
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
        for (id, (sink, ended)) in st.subs.iter_mut() {
            if sink.dropped() {
                gone.push((*id, true));
                continue;
            }
            while sink.flush() {
                if *ended {
                    gone.push((*id, false));
                    break;
                }
                let Some(e) = engine.poll_subscription(*id) else {
                    break;
                };
                *ended = matches!(e, SubscriptionEvent::Ended(_));
                sink.waiting.push_back(e);
            }
        }
        for (id, dropped) in gone {
            st.subs.remove(&id);
            if dropped {
                // Deleted (S-6), or once the transaction ends.
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
            if let Some(sink) = clock_domain(&e).and_then(|d| st.clocks.get_mut(d)) {
                keep_clock(sink, e);
            }
        }
        st.clocks.retain(|domain, sink| {
            if sink.dropped() {
                // Detached (K-1), or once the transaction ends.
                st.detach.insert(domain.clone());
                return false;
            }
            let last = sink
                .waiting
                .iter()
                .any(|e| matches!(e, ClockEvent::Ended { .. }));
            !(sink.flush() && last)
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

    /// An outcome whose caller stopped waiting is kept, never lost (C-10).
    fn keep_unclaimed(&mut self, r: CommandResult) {
        self.unclaimed.keep(r);
    }
}

/// Hands a command's result to its waiter, or gives it back when the waiter left. The
/// waiter may be leaving right now: the gate orders the two, so the result is either read
/// by it or comes back here (C-10).
pub(crate) fn deliver(
    tx: &mpsc::SyncSender<CommandResult>,
    gate: &Gate,
    result: CommandResult,
) -> Option<CommandResult> {
    gate.deliver(result, |r| match tx.try_send(r) {
        Ok(()) => None,
        Err(mpsc::TrySendError::Full(r) | mpsc::TrySendError::Disconnected(r)) => Some(r),
    })
}

impl Drop for Driver {
    /// Observers read what is queued, then learn that nothing more comes.
    fn drop(&mut self) {
        self.watchers.close();
    }
}
