//! The driver task: it runs the shared driver core around the sans-IO engine, performs its
//! actions on real transports, and wakes for the application's calls, the transports'
//! reports, the engine's deadline and a transport making room.

use crate::config::Config;
use crate::dataplane::Tokio;
use crate::net::Dialer;
use crate::streams::{ClockFollow, Subscription, STREAM_QUEUE, SUBSCRIPTION_QUEUE};
use crate::transport::{self, AbortOnDrop, Dial, Line, Out, Report, Said};
use crate::DriverEvent;
use nervix_driver_support::driver_core::{Connect, Core, Given, Seam, StreamSink, FINISH_WAIT};
use nervix_driver_support::observe::Hub;
use nervix_driver_support::session::Event;
pub(crate) use nervix_driver_support::unclaimed::Unclaimed;
use nervix_protocol::client::{ClockEvent, CommandResult, SubscriptionEvent, SubscriptionId};
use std::collections::VecDeque;
use std::sync::{Arc, PoisonError};
use tokio::sync::{mpsc, oneshot, Notify, Semaphore};
use tokio::time::Instant;

/// A command the engine accepted: its reference, and where its result will come.
pub(crate) type Submitted = nervix_driver_support::driver_core::Accepted<Io>;

/// A call of the application.
pub(crate) type Request = nervix_driver_support::driver_core::Request<Io>;
/// What a statement given to `run` became.
pub(crate) type RunSubmitted = nervix_driver_support::driver_core::RunSubmitted<Io>;

/// One session's task, and where its frames go.
pub(crate) struct SessionIo {
    out: mpsc::Sender<Out>,
    /// A gRPC session's send half, which the driver writes into directly while it can.
    line: Option<Arc<Line>>,
    /// The lines with frames staged in this turn of the driver's loop.
    staged: Staged,
    task: AbortOnDrop,
}

/// The lines with frames staged in the current turn of the driver's loop: each is flushed,
/// all staged frames handed to h2 at once, before the driver waits for anything.
pub(crate) type Staged = Arc<std::sync::Mutex<Vec<Arc<Line>>>>;

impl SessionIo {
    /// Hands `out` to the session's writer task (after what was staged); as [`Seam::send`].
    fn to_writer(&self, out: Out) -> Given<Out> {
        if let Some(line) = &self.line {
            line.queue();
        }
        let given = given(self.out.try_send(out));
        if !matches!(given, Given::Taken) {
            if let Some(line) = &self.line {
                line.unqueued();
            }
        }
        given
    }
}

/// Writes what every line staged in this turn.
fn flush_staged(staged: &Staged) {
    let lines = std::mem::take(&mut *staged.lock().unwrap_or_else(PoisonError::into_inner));
    for line in lines {
        line.flush();
    }
}

/// A stream's channel, seen from the driver.
pub(crate) struct Feed<T>(mpsc::Sender<T>);

impl<T> StreamSink<T> for Feed<T> {
    fn dropped(&self) -> bool {
        self.0.is_closed()
    }

    fn room(&self) -> bool {
        self.0.capacity() > 0
    }

    fn give(&mut self, event: T) -> Given<T> {
        given(self.0.try_send(event))
    }
}

/// What a channel did with an item it was offered.
fn given<T>(sent: Result<(), mpsc::error::TrySendError<T>>) -> Given<T> {
    match sent {
        Ok(()) => Given::Taken,
        Err(mpsc::error::TrySendError::Full(e)) => Given::Full(e),
        Err(mpsc::error::TrySendError::Closed(_)) => Given::Gone,
    }
}

/// What is this driver's own around the core: tokio's channels and tasks.
pub(crate) struct Io {
    config: Config,
    tls: Option<Dialer>,
    events: mpsc::Sender<Report>,
    /// Bytes of frames the sessions may still hand the driver before it takes some.
    inflight: Arc<Semaphore>,
    /// Woken when an application reads an event or drops a stream.
    pull: Arc<Notify>,
    /// The lines with frames staged in this turn.
    staged: Staged,
}

impl Seam for Io {
    type Hand = Tokio;
    type Result = oneshot::Receiver<CommandResult>;
    type Waiting = oneshot::Sender<CommandResult>;
    type Session = SessionIo;
    type Subscription = Subscription;
    type ClockFollow = ClockFollow;
    type Sink<T> = Feed<T>;
    const ENDS_OF_DROPPED_SESSIONS: bool = true;

    fn command() -> (Self::Waiting, Self::Result) {
        oneshot::channel()
    }

    fn hand_over(waiting: Self::Waiting, result: CommandResult) -> Option<CommandResult> {
        waiting.send(result).err()
    }

    fn connect(&self, to: Connect) -> Option<SessionIo> {
        let (out, out_rx) = mpsc::channel(64);
        let line = Arc::new(Line::default());
        let dial = Dial {
            to,
            transport: self.config.transport,
            tls: self.tls.clone(),
            write_timeout: self.config.write_timeout,
            events: self.events.clone(),
            inflight: self.inflight.clone(),
            line: line.clone(),
        };
        let task = AbortOnDrop(tokio::spawn(transport::run(dial, out_rx)));
        let line = matches!(self.config.transport, crate::config::Transport::Grpc).then_some(line);
        Some(SessionIo {
            out,
            line,
            staged: self.staged.clone(),
            task,
        })
    }

    fn send(session: &SessionIo, out: Out) -> Given<Out> {
        if let (Some(line), Out::Frame(f)) = (&session.line, &out) {
            match line.stage(f) {
                Some(true) => {
                    session
                        .staged
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(line.clone());
                    return Given::Taken;
                }
                Some(false) => return Given::Taken,
                None => {}
            }
        }
        session.to_writer(out)
    }

    fn subscription(&self, id: SubscriptionId) -> (Feed<SubscriptionEvent>, Subscription) {
        let (tx, rx) = mpsc::channel(SUBSCRIPTION_QUEUE);
        let pull = self.pull.clone();
        (Feed(tx), Subscription { id, rx, pull })
    }

    fn clock(&self, domain: String) -> (Feed<ClockEvent>, ClockFollow) {
        let (tx, rx) = mpsc::channel(STREAM_QUEUE);
        let pull = self.pull.clone();
        (Feed(tx), ClockFollow { domain, rx, pull })
    }
}

pub(crate) struct Driver {
    /// The driver core; the client's start gives it the journal (feature `journal`).
    pub(crate) core: Core<Io>,
    requests: mpsc::Receiver<Request>,
    events: mpsc::Receiver<Report>,
    inflight: Arc<Semaphore>,
    pull: Arc<Notify>,
    staged: Staged,
    /// Frames of a report taken in part: a frame before them brought subscription events
    /// while a stream was full. They go in before any other report, each as if it came
    /// alone; their bytes stay in the driver's bound (the permit) until the last is taken.
    held: Option<Held>,
}

/// The rest of a report of frames, and its share of the driver's bound in bytes.
struct Held {
    session: nervix_protocol::client::SessionId,
    frames: VecDeque<bytes::Bytes>,
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Driver {
    pub(crate) fn new(
        config: Config,
        tls: Option<Dialer>,
        requests: mpsc::Receiver<Request>,
        notify: Hub<DriverEvent>,
        unclaimed: Unclaimed,
    ) -> Self {
        let (events_tx, events) = mpsc::channel(1024);
        let pull = Arc::new(Notify::new());
        let inflight = Arc::new(Semaphore::new(INBOX_FRAME_BYTES));
        let (client, credentials) = (config.client.clone(), config.credentials.clone());
        let staged = Staged::default();
        let io = Io {
            config,
            tls,
            events: events_tx,
            inflight: inflight.clone(),
            pull: pull.clone(),
            staged: staged.clone(),
        };
        let hand = Tokio { pull: pull.clone() };
        Self {
            core: Core::new(io, hand, client, credentials, notify, unclaimed),
            requests,
            events,
            inflight,
            pull,
            staged,
            held: None,
        }
    }

    /// Hands the core what a session said: one event, or frames up to the first that leaves
    /// a subscription backlog (the rest held, to go in before the next report).
    fn take(
        &mut self,
        sid: nervix_protocol::client::SessionId,
        said: Said,
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
    ) {
        match said {
            Said::One(e) => {
                // The frame's bytes may be handed over again.
                drop(permit);
                self.core.event(sid, e);
            }
            Said::Frames(frames) => self.take_frames(Held {
                session: sid,
                frames,
                _permit: permit,
            }),
        }
    }

    fn take_frames(&mut self, mut held: Held) {
        while let Some(f) = held.frames.pop_front() {
            self.core.event(held.session, Event::Frame(f));
            if self.core.backlog() {
                break;
            }
        }
        if !held.frames.is_empty() {
            self.held = Some(held);
        }
    }

    pub(crate) async fn run(mut self) {
        // One timer for the whole run, moved only when the engine's deadline moves: a new
        // timer per turn of the loop costs a timer-wheel insertion and removal each time.
        let timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(timer);
        let mut armed: Option<Instant> = None;
        loop {
            if let Some(held) = self.held.take() {
                // What is left of a report goes in first, a frame at a time, as the reports
                // would: the reader ran meanwhile.
                self.take_frames(held);
                self.core.drain();
                flush_staged(&self.staged);
                if self.core.backlog() {
                    tokio::task::yield_now().await;
                }
                continue;
            }
            self.core.drain();
            let wake = self.core.deadline().map(Instant::from_std);
            if wake != armed {
                if let Some(w) = wake {
                    timer.as_mut().reset(w);
                }
                armed = wake;
            }
            // The first session whose transport is not taking frames: wait for room.
            let blocked = self
                .core
                .blocked()
                .map(|(id, s)| (id, s.out.clone(), s.line.clone()));
            let blocked_id = blocked.as_ref().map(|b| b.0);
            // What the drain staged leaves before the driver waits.
            flush_staged(&self.staged);
            let pull = self.pull.clone();
            tokio::select! {
                r = self.requests.recv() => match r {
                    Some(r) => {
                        if self.request(r).await {
                            return;
                        }
                        // What else the application asked meanwhile goes in before one drain,
                        // so frames made together leave together.
                        for _ in 1..BATCH {
                            let Ok(r) = self.requests.try_recv() else { break };
                            if self.request(r).await {
                                return;
                            }
                        }
                    }
                    None => {
                        self.core.abandon();
                        return;
                    }
                },
                Some((sid, said, permit)) = self.events.recv() => {
                    self.take(sid, said, permit);
                    // Frames that came together are handled before one drain, up to the
                    // first that brought subscription events: those go to their streams
                    // before another frame is checked.
                    for _ in 1..BATCH {
                        if self.core.backlog() || self.held.is_some() {
                            break;
                        }
                        let Ok((sid, said, permit)) = self.events.try_recv() else { break };
                        self.take(sid, said, permit);
                    }
                    self.core.drain();
                    flush_staged(&self.staged);
                    if self.core.backlog() {
                        // A stream is full and the engine holds more for it: the reader runs
                        // before the next frame is taken, or the driver would go on checking
                        // frames into the engine's budget while the reader waits, and the
                        // budget would drop what the reader was about to take (S-8).
                        tokio::task::yield_now().await;
                    }
                }
                // An application read a stream's event or dropped a stream: the drain at the
                // top of the loop moves more events or deletes what was dropped.
                _ = pull.notified() => {}
                _ = &mut timer, if armed.is_some() => {
                    armed = None;
                    self.core.timeout();
                }
                permit = reserve(blocked.as_ref().map(|(_, tx, _)| tx)), if blocked.is_some() => {
                    let Some(sid) = blocked_id else { continue };
                    match permit {
                        Ok(p) => {
                            if let Some(o) = self.core.next_pending(sid) {
                                if let Some(line) = blocked.as_ref().and_then(|b| b.2.as_ref()) {
                                    line.queue();
                                }
                                p.send(o);
                            }
                        }
                        Err(_) => self.core.clear_pending(sid),
                    }
                }
            }
        }
    }

    /// Handles one call of the application; true when the driver is to stop.
    async fn request(&mut self, r: Request) -> bool {
        let Some(done) = self.core.request(r) else {
            return false;
        };
        self.finish().await;
        let _ = done.send(Ok(()));
        true
    }

    /// Lets every session's transport take what it was given (a clean close among it) and
    /// end, within [`FINISH_WAIT`] in all: a session task is aborted when the driver goes,
    /// so one cut before its close frame or half-close is written would end the session
    /// uncleanly and leave the transaction a reverting close meant to end.
    async fn finish(&mut self) {
        // What the sessions still say is read without bounds: none waits to say it.
        self.inflight.close();
        flush_staged(&self.staged);
        let give_up = Instant::now() + FINISH_WAIT;
        while let Some((sid, out, line)) = self
            .core
            .blocked()
            .map(|(id, s)| (id, s.out.clone(), s.line.clone()))
        {
            match meanwhile(&mut self.events, give_up, out.reserve()).await {
                Some(Ok(p)) => {
                    if let Some(o) = self.core.next_pending(sid) {
                        if let Some(line) = &line {
                            line.queue();
                        }
                        p.send(o);
                    }
                }
                Some(Err(_)) => self.core.clear_pending(sid),
                None => break,
            }
        }
        for mut s in self.core.take_sessions() {
            drop(s.out);
            if meanwhile(&mut self.events, give_up, &mut s.task.0)
                .await
                .is_none()
            {
                break;
            }
        }
    }
}

/// Waits for `f` until `give_up` (`None` then), reading meanwhile what the sessions say: the
/// engine is closed and every call has ended, so their late frames and ends have nobody to go
/// to, but a transport must never wait for room to say them, or it could not write its close.
async fn meanwhile<F: std::future::Future>(
    events: &mut mpsc::Receiver<Report>,
    give_up: Instant,
    f: F,
) -> Option<F::Output> {
    tokio::pin!(f);
    loop {
        tokio::select! {
            r = &mut f => return Some(r),
            Some(_) = events.recv() => {}
            _ = tokio::time::sleep_until(give_up) => return None,
        }
    }
}

/// The most bytes of frames the sessions have handed the driver and it has not taken yet,
/// together: two frames of the frame limit. The channel of their reports is bounded in
/// count; this bounds it in bytes, so a session whose frames come faster than the driver
/// takes them reads no further, and the server's frames wait in the socket.
pub(crate) const INBOX_FRAME_BYTES: usize = 2 * nervix_protocol::limits::FRAME_LIMIT;

/// The permits a frame of `len` bytes takes: its bytes, at most all there are, so a frame
/// always goes in once none waits.
pub(crate) fn frame_permits(len: usize) -> usize {
    len.min(INBOX_FRAME_BYTES)
}

/// Once the driver's bound is full, the room a session waits for beyond its own frames'
/// before it reads on: a quarter of the bound. A session that went on as soon as one frame's
/// worth was free would read one message, give the server room for one (a flow-control
/// update, a write and a wake-up of the server for each message), and wait again; resuming
/// only once this much more is free lets it read a run of messages and give the room for
/// them all in one update. What it holds in the bound is its own frames' bytes, as before.
pub(crate) const RESUME_BYTES: usize = INBOX_FRAME_BYTES / 4;

/// The permits for frames of `len` bytes in the driver's bound `inflight`; `None` once the
/// driver stops bounding them (closed). Taken at once while the bound has room for them;
/// otherwise taken when it has room for [`RESUME_BYTES`] more (at most the whole bound), and
/// that extra room is left at once for others.
pub(crate) async fn take_permits(
    inflight: Arc<Semaphore>,
    len: usize,
) -> Option<tokio::sync::OwnedSemaphorePermit> {
    let n = frame_permits(len);
    match inflight.clone().try_acquire_many_owned(n as u32) {
        Ok(p) => return Some(p),
        Err(tokio::sync::TryAcquireError::Closed) => return None,
        Err(tokio::sync::TryAcquireError::NoPermits) => {}
    }
    let want = (n + RESUME_BYTES).min(INBOX_FRAME_BYTES);
    let mut p = inflight.acquire_many_owned(want as u32).await.ok()?;
    // `want >= n`, so the split always succeeds; the rest goes back now.
    let mine = p.split(n);
    drop(p);
    mine
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::task::{Context, Poll};

    /// Polls `f` once.
    fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        let waker = futures_util::task::noop_waker();
        std::pin::Pin::new(f).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn a_session_takes_room_in_the_bound_at_once_while_there_is_room_for_its_frames() {
        let inflight = Arc::new(Semaphore::new(INBOX_FRAME_BYTES));
        let held = inflight.clone().try_acquire_many_owned(100).unwrap();
        let room = INBOX_FRAME_BYTES - 100;
        // Exactly the room left: taken at once, holding the frames' bytes and no more.
        let mut f = Box::pin(take_permits(inflight.clone(), room));
        let Poll::Ready(Some(p)) = poll_once(&mut f) else {
            panic!("room for the frames was there")
        };
        assert_eq!(p.num_permits(), room);
        assert_eq!(inflight.available_permits(), 0);
        drop((p, held));
        assert_eq!(inflight.available_permits(), INBOX_FRAME_BYTES);
    }

    #[test]
    fn once_the_bound_is_full_a_session_reads_on_only_when_a_quarter_more_is_free() {
        // A quarter of the bound, and not nothing: a session that resumed at the first free
        // frame's worth gives the server room one message at a time.
        assert_eq!(RESUME_BYTES * 4, INBOX_FRAME_BYTES);
        let inflight = Arc::new(Semaphore::new(INBOX_FRAME_BYTES));
        let mut held = inflight
            .clone()
            .try_acquire_many_owned(INBOX_FRAME_BYTES as u32)
            .unwrap();
        let mut f = Box::pin(take_permits(inflight.clone(), 1000));
        assert!(poll_once(&mut f).is_pending());
        // Room for the frames, and for all but one byte of the extra: still waiting.
        drop(held.split(1000 + RESUME_BYTES - 1).unwrap());
        assert!(poll_once(&mut f).is_pending());
        drop(held.split(1).unwrap());
        let Poll::Ready(Some(p)) = poll_once(&mut f) else {
            panic!("the room it waits for is free")
        };
        // It holds its frames' bytes only; the extra is free again.
        assert_eq!(p.num_permits(), 1000);
        assert_eq!(inflight.available_permits(), RESUME_BYTES);
        drop((p, held));
        assert_eq!(inflight.available_permits(), INBOX_FRAME_BYTES);
    }

    #[test]
    fn frames_near_the_whole_bound_wait_for_the_whole_bound_and_no_more() {
        let inflight = Arc::new(Semaphore::new(INBOX_FRAME_BYTES));
        let mut held = inflight
            .clone()
            .try_acquire_many_owned(INBOX_FRAME_BYTES as u32)
            .unwrap();
        // Frames above the bound take the whole bound; the wait is for the whole bound.
        let mut f = Box::pin(take_permits(inflight.clone(), INBOX_FRAME_BYTES + 7));
        drop(held.split(INBOX_FRAME_BYTES - 1).unwrap());
        assert!(poll_once(&mut f).is_pending());
        drop(held);
        let Poll::Ready(Some(p)) = poll_once(&mut f) else {
            panic!("the whole bound is free")
        };
        assert_eq!(p.num_permits(), INBOX_FRAME_BYTES);
    }

    #[test]
    fn a_closed_bound_lets_frames_go_at_once_without_permits() {
        let inflight = Arc::new(Semaphore::new(INBOX_FRAME_BYTES));
        let _held = inflight
            .clone()
            .try_acquire_many_owned(INBOX_FRAME_BYTES as u32)
            .unwrap();
        let mut waiting = Box::pin(take_permits(inflight.clone(), 10));
        assert!(poll_once(&mut waiting).is_pending());
        inflight.close();
        assert!(matches!(poll_once(&mut waiting), Poll::Ready(None)));
        let mut after = Box::pin(take_permits(inflight.clone(), 10));
        assert!(matches!(poll_once(&mut after), Poll::Ready(None)));
    }
}
