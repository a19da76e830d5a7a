//! The driver task: it owns the sans-IO engine, performs its actions on real transports, and
//! answers the application's calls.

use crate::config::{Config, Credentials};
use crate::dataplane::Tokio;
use crate::net::Dialer;
use crate::streams::{
    clock_domain, ClockFollow, ClockSink, Subscription, STREAM_QUEUE, SUBSCRIPTION_QUEUE,
};
use crate::transport::{self, AbortOnDrop, Dial, End, Event, Out};
use crate::{DriverEvent, Error};
use nervix_driver_support::dataplane::{Call, Dataplane};
use nervix_driver_support::observe::Hub;
pub(crate) use nervix_driver_support::unclaimed::Unclaimed;
use nervix_protocol::client::{
    Action, Client as Engine, ClientError, ClientEvent, CommandHandle, CommandResult, ReadHandle,
    ReadResult, RetainedCommand, Routed, SessionId, SubscriptionEvent, SubscriptionId,
};
use nervix_protocol::exchange::Unsolicited;
use nervix_protocol::schema::ClientRequestT;
use nervix_protocol::time::{Timestamp, UnixMillis};
use nervix_protocol::transaction::Binding;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;

/// A command the engine accepted: its reference, and where its result will come.
#[derive(Debug)]
pub(crate) struct Submitted {
    pub reference: String,
    pub result: oneshot::Receiver<CommandResult>,
    pub unclaimed: Unclaimed,
}

/// What a statement given to `run` became.
#[derive(Debug)]
pub(crate) enum RunSubmitted {
    Command(Submitted),
    Read(oneshot::Receiver<Result<ReadResult, Error>>),
    Selected(String),
}

type Reply<T> = oneshot::Sender<Result<T, Error>>;

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
        reply: Reply<oneshot::Receiver<Result<ReadResult, Error>>>,
    },
    SelectDomain {
        domain: Option<String>,
        reply: Reply<()>,
    },
    Binding(oneshot::Sender<Binding>),
    Unclaimed(oneshot::Sender<Vec<CommandResult>>),
    SetCredentials(Credentials),
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
    Dataplane(Call<Tokio>),
    Close {
        revert: bool,
        done: oneshot::Sender<()>,
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

struct SessionIo {
    out: mpsc::Sender<Out>,
    /// Frames (and a clean close) the transport has not taken yet: kept across
    /// back-pressure, in order.
    pending: VecDeque<Out>,
    _task: AbortOnDrop,
}

pub(crate) struct Driver {
    engine: Engine,
    config: Config,
    tls: Option<Dialer>,
    origin: Instant,
    requests: mpsc::Receiver<Request>,
    events_tx: mpsc::Sender<(SessionId, Event)>,
    events_rx: mpsc::Receiver<(SessionId, Event)>,
    sessions: BTreeMap<SessionId, SessionIo>,
    commands: BTreeMap<CommandHandle, oneshot::Sender<CommandResult>>,
    reads: BTreeMap<ReadHandle, oneshot::Sender<Result<ReadResult, Error>>>,
    unclaimed: Unclaimed,
    parked: Option<Parked>,
    refused: VecDeque<SessionId>,
    notify: Hub<DriverEvent>,
    /// Evictions from `unclaimed` already reported to observers.
    unclaimed_reported: u64,
    streams: Streams,
    dataplane: Dataplane<Tokio>,
}

/// Where subscription and clock events go.
#[derive(Default)]
struct Streams {
    /// Woken when an application reads an event or drops a stream.
    pull: Arc<Notify>,
    subs: BTreeMap<SubscriptionId, mpsc::Sender<SubscriptionEvent>>,
    /// Dropped streams whose events are discarded until the subscription ends.
    discard: BTreeSet<SubscriptionId>,
    /// Dropped streams whose deletion waits for the transaction to end (L-3).
    doomed: BTreeSet<SubscriptionId>,
    clocks: BTreeMap<String, ClockSink>,
    /// Dropped clock streams whose detach waits for the transaction to end (L-3).
    detach: BTreeSet<String>,
}

impl Driver {
    pub(crate) fn new(
        config: Config,
        tls: Option<Dialer>,
        requests: mpsc::Receiver<Request>,
        notify: Hub<DriverEvent>,
        unclaimed: Unclaimed,
    ) -> Self {
        let (events_tx, events_rx) = mpsc::channel(1024);
        let streams = Streams::default();
        Self {
            engine: Engine::new(config.client.clone()),
            config,
            tls,
            origin: Instant::now(),
            requests,
            events_tx,
            events_rx,
            sessions: BTreeMap::new(),
            commands: BTreeMap::new(),
            reads: BTreeMap::new(),
            unclaimed,
            parked: None,
            refused: VecDeque::new(),
            notify,
            unclaimed_reported: 0,
            dataplane: Dataplane::new(Tokio {
                pull: streams.pull.clone(),
            }),
            streams,
        }
    }

    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.origin.elapsed().as_nanos() as u64)
    }

    fn wall() -> UnixMillis {
        UnixMillis(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        )
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

    pub(crate) async fn run(mut self) {
        // One timer for the whole run, moved only when the engine's deadline moves: a new
        // timer per turn of the loop costs a timer-wheel insertion and removal each time.
        let timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(timer);
        let mut armed: Option<Instant> = None;
        loop {
            self.drain();
            let wake = self.engine.poll_timeout().map(|t| self.instant(t));
            if wake != armed {
                if let Some(w) = wake {
                    timer.as_mut().reset(w);
                }
                armed = wake;
            }
            // The first session whose transport is not taking frames: wait for room.
            let blocked = self
                .sessions
                .iter()
                .find(|(_, s)| !s.pending.is_empty())
                .map(|(id, s)| (*id, s.out.clone()));
            let blocked_id = blocked.as_ref().map(|b| b.0);
            let pull = self.streams.pull.clone();
            tokio::select! {
                r = self.requests.recv() => match r {
                    Some(r) => {
                        if self.request(r) {
                            return;
                        }
                        // What else the application asked meanwhile goes in before one drain,
                        // so frames made together leave together.
                        for _ in 1..BATCH {
                            let Ok(r) = self.requests.try_recv() else { break };
                            if self.request(r) {
                                return;
                            }
                        }
                    }
                    None => {
                        let now = self.now();
                        self.engine.close(now, false);
                        self.drain();
                        return;
                    }
                },
                Some((sid, e)) = self.events_rx.recv() => {
                    self.event(sid, e);
                    // Frames that came together are handled before one drain.
                    for _ in 1..BATCH {
                        let Ok((sid, e)) = self.events_rx.try_recv() else { break };
                        self.event(sid, e);
                    }
                }
                // An application read a stream's event or dropped a stream: the drain at the
                // top of the loop moves more events or deletes what was dropped.
                _ = pull.notified() => {}
                _ = &mut timer, if armed.is_some() => {
                    armed = None;
                    let now = self.now();
                    self.engine.handle_timeout(now);
                    // Batches the engine sent now make room for waiting submissions.
                    self.dataplane.timer_fired();
                }
                permit = reserve(blocked.as_ref().map(|(_, tx)| tx)), if blocked.is_some() => {
                    let Some(sid) = blocked_id else { continue };
                    match permit {
                        Ok(p) => {
                            if let Some(s) = self.sessions.get_mut(&sid) {
                                if let Some(o) = s.pending.pop_front() {
                                    p.send(o);
                                }
                            }
                        }
                        Err(_) => {
                            if let Some(s) = self.sessions.get_mut(&sid) {
                                s.pending.clear();
                            }
                        }
                    }
                }
            }
        }
    }

    /// Handles one call of the application; true when the driver is to stop.
    fn request(&mut self, r: Request) -> bool {
        let now = self.now();
        match r {
            Request::Recover { command, reply } => {
                if let Some(e) = self.parked_error() {
                    let _ = reply.send(Err(e));
                    return false;
                }
                let r = self
                    .engine
                    .recover(now, &command, None)
                    .map_err(Error::Refused)
                    .map(|h| self.track_command(h));
                let _ = reply.send(r);
            }
            Request::Execute { query, reply } => {
                if let Some(e) = self.parked_error() {
                    let _ = reply.send(Err(e));
                    return false;
                }
                let r = self
                    .engine
                    .execute(now, Self::wall(), &query)
                    .map_err(Error::Refused)
                    .map(|h| self.track_command(h));
                let _ = reply.send(r);
            }
            Request::Run { query, reply } => {
                if let Some(e) = self.parked_error() {
                    let _ = reply.send(Err(e));
                    return false;
                }
                let r = match self.engine.run(now, Self::wall(), &query) {
                    Ok(Routed::Command(h)) => Ok(RunSubmitted::Command(self.track_command(h))),
                    Ok(Routed::Request(h)) => Ok(RunSubmitted::Read(self.track_read(h))),
                    Ok(Routed::DomainSelected(d)) => Ok(RunSubmitted::Selected(d)),
                    // Kept state nobody would read: undone at once, and the application is
                    // pointed at the calls that hand out a stream.
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
                };
                let _ = reply.send(r);
            }
            Request::Read {
                request,
                deadline,
                reply,
            } => {
                if let Some(e) = self.parked_error() {
                    let _ = reply.send(Err(e));
                    return false;
                }
                let r = self
                    .engine
                    .read(now, request, deadline)
                    .map_err(Error::Refused)
                    .map(|h| self.track_read(h));
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
                let _ = reply.send(self.engine.binding().clone());
            }
            Request::Unclaimed(reply) => {
                let _ = reply.send(self.unclaimed.take());
            }
            Request::SetCredentials(c) => {
                self.config.credentials = c;
                if self.parked == Some(Parked::Unauthenticated) {
                    self.parked = None;
                }
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
                // Let the clean close reach the transport before the tasks go.
                for s in self.sessions.values_mut() {
                    while let Some(o) = s.pending.pop_front() {
                        if s.out.try_send(o).is_err() {
                            break;
                        }
                    }
                }
                let _ = done.send(());
                return true;
            }
        }
        false
    }

    fn track_command(&mut self, h: CommandHandle) -> Submitted {
        let (tx, rx) = oneshot::channel();
        self.commands.insert(h, tx);
        let reference = self
            .engine
            .reference_of(h)
            .map(|r| r.to_string())
            .unwrap_or_default();
        Submitted {
            reference,
            result: rx,
            unclaimed: self.unclaimed.clone(),
        }
    }

    fn track_read(&mut self, h: ReadHandle) -> oneshot::Receiver<Result<ReadResult, Error>> {
        let (tx, rx) = oneshot::channel();
        self.reads.insert(h, tx);
        rx
    }

    /// A session's transport reported something.
    fn event(&mut self, sid: SessionId, e: Event) {
        let now = self.now();
        match e {
            Event::Connected => self.engine.handle_connected(now, sid),
            Event::Frame(f) => self.engine.handle_frame(now, sid, f),
            Event::Ended(end) => {
                self.sessions.remove(&sid);
                self.notify.send(DriverEvent::TransportEnded {
                    session: sid,
                    end: end.clone(),
                });
                match end {
                    End::Unauthenticated => self.park(Parked::Unauthenticated),
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
        if !matches!(self.parked, Some(Parked::Defect(_))) {
            self.parked = Some(p);
        }
    }

    /// While parked nothing reaches the network: every command is cancelled (it ends as
    /// failed when it was never sent, otherwise uncertain naming its reference, and is never
    /// sent again, T-5, T-6), and read waiters are told why.
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
                self.notify.send(match u {
                    Unsolicited::Frame(f) => DriverEvent::Unsolicited(f),
                    Unsolicited::Lost { dropped } => DriverEvent::UnsolicitedLost(dropped),
                    _ => continue,
                });
            }
            let lost = self.unclaimed.lost();
            if lost > self.unclaimed_reported {
                self.notify
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
                let (out_tx, out_rx) = mpsc::channel(64);
                let dial = Dial {
                    session,
                    endpoint,
                    transport: self.config.transport,
                    credentials: self.config.credentials.clone(),
                    tls: self.tls.clone(),
                    connect_deadline: Instant::now() + self.config.client.connect_timeout,
                    write_timeout: self.config.write_timeout,
                    events: self.events_tx.clone(),
                };
                let task = AbortOnDrop(tokio::spawn(transport::run(dial, out_rx)));
                self.sessions.insert(
                    session,
                    SessionIo {
                        out: out_tx,
                        pending: VecDeque::new(),
                        _task: task,
                    },
                );
            }
            Action::Send { session, frame } => self.queue(session, Out::Frame(frame)),
            Action::Close { session, clean } => {
                if clean {
                    self.queue(session, Out::Close);
                } else {
                    // Dropped at once: the task and its connection go without a clean end.
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
                Err(mpsc::error::TrySendError::Full(o)) => s.pending.push_back(o),
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        } else {
            s.pending.push_back(o);
        }
    }

    fn client_event(&mut self, e: ClientEvent) {
        match e {
            ClientEvent::Command { handle, result } => match self.commands.remove(&handle) {
                Some(tx) => {
                    if let Err(result) = tx.send(result) {
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
                self.notify
                    .send(DriverEvent::SessionOpened { session, endpoint });
            }
            ClientEvent::SessionLost { session, loss } => {
                self.notify.send(DriverEvent::SessionLost { session, loss });
            }
            ClientEvent::Transaction(b) => {
                self.notify.send(DriverEvent::Transaction(b));
            }
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
        let (tx, rx) = mpsc::channel(SUBSCRIPTION_QUEUE);
        self.streams.subs.insert(id, tx);
        Ok(Subscription {
            id,
            rx,
            pull: self.streams.pull.clone(),
        })
    }

    fn follow_clock(&mut self, now: Timestamp, domain: String) -> Result<ClockFollow, Error> {
        if let Some(e) = self.parked_error() {
            return Err(e);
        }
        self.engine
            .follow_clock(now, &domain)
            .map_err(Error::Refused)?;
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        self.streams.clocks.insert(
            domain.clone(),
            ClockSink {
                tx,
                waiting: VecDeque::new(),
            },
        );
        Ok(ClockFollow {
            domain,
            rx,
            pull: self.streams.pull.clone(),
        })
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
        for (id, tx) in &st.subs {
            if tx.is_closed() {
                gone.push(*id);
                continue;
            }
            while tx.capacity() > 0 {
                let Some(e) = engine.poll_subscription(*id) else {
                    break;
                };
                let last = matches!(e, SubscriptionEvent::Ended(_));
                let _ = tx.try_send(e);
                if last {
                    gone.push(*id);
                    break;
                }
            }
        }
        for id in gone {
            if st.subs.remove(&id).is_some_and(|tx| tx.is_closed()) {
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
            if let Some(sink) = clock_domain(&e).and_then(|d| st.clocks.get_mut(d)) {
                sink.keep(e);
            }
        }
        st.clocks.retain(|domain, sink| {
            if sink.tx.is_closed() {
                // Dropped by the application: detached (K-1).
                st.detach.insert(domain.clone());
                return false;
            }
            !sink.flush()
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
        let notify = &self.notify;
        self.dataplane.route(
            &mut self.engine,
            now,
            |producer, event| notify.send(DriverEvent::Producer { producer, event }),
            |consumer, event| notify.send(DriverEvent::Consumer { consumer, event }),
        )
    }

    /// An outcome whose caller stopped waiting is kept, never lost (C-10).
    fn keep_unclaimed(&mut self, r: CommandResult) {
        self.unclaimed.keep(r);
    }
}

impl Drop for Driver {
    /// Observers read what is queued, then learn that nothing more comes.
    fn drop(&mut self) {
        self.notify.close();
    }
}

/// The most requests, or transport events, handled in one turn of the driver's loop before
/// the engine is drained: enough to gather a burst, few enough to keep every queue moving.
const BATCH: usize = 64;

async fn reserve(
    tx: Option<&mpsc::Sender<Out>>,
) -> Result<mpsc::Permit<'_, Out>, mpsc::error::SendError<()>> {
    match tx {
        Some(tx) => tx.reserve().await,
        None => std::future::pending().await,
    }
}
