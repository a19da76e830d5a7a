//! The driver thread: it runs the shared driver core around the sans-IO engine, opens the
//! sessions the engine asks for on threads of their own, and answers the application's
//! calls. Everything reaches it through one bounded inbox, and it never waits longer than
//! the engine's next deadline.

use crate::config::Config;
use crate::dataplane::Blocking;
use crate::net::Dialer;
use crate::session::{self, Dial, Event, Out};
use crate::streams::{self, ClockFollow, Sink, Subscription};
use crate::Error;
use nervix_driver_support::driver_core::{Connect, Core, Given, Seam, FINISH_WAIT};
use nervix_driver_support::observe::Hub;
pub(crate) use nervix_driver_support::unclaimed::{Gate, Unclaimed};
use nervix_protocol::client::{
    ClockEvent, CommandResult, SessionId, SubscriptionEvent, SubscriptionId,
};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Frames queued for one session's thread before the driver keeps them itself.
const SESSION_QUEUE: usize = 64;

/// The most bytes of frames the sessions' threads have waiting in the driver's inbox
/// together: two frames of the frame limit. A frame always goes in when none waits.
pub(crate) const INBOX_FRAME_BYTES: usize = 2 * nervix_protocol::limits::FRAME_LIMIT;

/// Bytes of frames the sessions' threads handed the driver and it has not taken yet. The
/// inbox is bounded in count; this bounds it in bytes as well, and keeps a call of the
/// application from waiting behind more than [`INBOX_FRAME_BYTES`] of frames: a session's
/// thread reads no further while the driver is that far behind, and the server's frames wait
/// in the socket.
#[derive(Debug, Default)]
pub(crate) struct Inflight {
    /// Bytes waiting, and whether the driver stopped bounding them (it is finishing).
    state: Mutex<(usize, bool)>,
    room: Condvar,
}

impl Inflight {
    /// Waits until `n` more bytes fit, then counts them.
    pub(crate) fn enter(&self, n: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 > 0 && s.0 + n > INBOX_FRAME_BYTES && !s.1 {
            s = self.room.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.0 += n;
    }

    /// The driver took `n` bytes.
    fn leave(&self, n: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 = s.0.saturating_sub(n);
        self.room.notify_all();
    }

    /// The driver took what `m` holds.
    fn took(&self, m: &Inbox) {
        if let Inbox::Session(_, Event::Frame(f)) = m {
            self.leave(f.len());
        }
    }

    /// Nothing waits for room any more: a stopping driver reads whatever the sessions say.
    fn unbound(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.room.notify_all();
    }
}

pub(crate) type Reply<T> = mpsc::SyncSender<Result<T, Error>>;

/// A command the engine accepted: its reference, and where its result will come with the
/// gate that orders its hand-over against the waiter leaving (C-10).
pub(crate) type Submitted = nervix_driver_support::driver_core::Accepted<Threads>;

/// A call of the application.
pub(crate) type Request = nervix_driver_support::driver_core::Request<Threads>;
/// What a statement given to `run` became.
pub(crate) type RunSubmitted = nervix_driver_support::driver_core::RunSubmitted<Threads>;

/// Everything the driver thread is told.
pub(crate) enum Inbox {
    App(Request),
    Session(SessionId, Event),
    /// A stream's reader made room or dropped the stream.
    Pull,
    /// The last handle of the application went.
    Dropped,
}

/// One session's thread, and where its frames go.
pub(crate) struct SessionIo {
    out: mpsc::SyncSender<Out>,
    thread: JoinHandle<()>,
}

/// What is this driver's own around the core: std channels and threads.
pub(crate) struct Threads {
    config: Config,
    tls: Option<Dialer>,
    inbox: mpsc::SyncSender<Inbox>,
    inflight: Arc<Inflight>,
}

impl Seam for Threads {
    // What the driver thread keeps: each session's thread, the sending ends, the gates that
    // order a result's hand-over against its waiter leaving (C-10).
    type Hand = Blocking;
    type Session = SessionIo;
    type Waiting = (mpsc::SyncSender<CommandResult>, Gate);
    type Sink<T> = Sink<T>;
    // What the application's threads hold.
    type Result = (mpsc::Receiver<CommandResult>, Gate);
    type Subscription = Subscription;
    type ClockFollow = ClockFollow;
    // A session the engine dropped has no thread left to hear from: its end is stale.
    const ENDS_OF_DROPPED_SESSIONS: bool = false;

    fn command() -> (Self::Waiting, Self::Result) {
        let (tx, rx) = mpsc::sync_channel(1);
        let gate = Gate::default();
        ((tx, gate.clone()), (rx, gate))
    }

    fn hand_over((tx, gate): Self::Waiting, result: CommandResult) -> Option<CommandResult> {
        deliver(&tx, &gate, result)
    }

    fn connect(&self, to: Connect) -> Option<SessionIo> {
        let (out, out_rx) = mpsc::sync_channel(SESSION_QUEUE);
        // Everything the session's thread logs is inside the session's span.
        let span = to.span();
        let name = format!("nervix-session-{}", to.session.0);
        let dial = Dial {
            to,
            auth: self.config.auth,
            tls: self.tls.clone(),
            write_timeout: self.config.write_timeout,
            poll_interval: self.config.poll_interval,
            events: self.inbox.clone(),
            inflight: self.inflight.clone(),
        };
        std::thread::Builder::new()
            .name(name)
            .spawn(move || span.in_scope(|| session::run(dial, out_rx)))
            .ok()
            .map(|thread| SessionIo { out, thread })
    }

    fn send(session: &SessionIo, out: Out) -> Given<Out> {
        match session.out.try_send(out) {
            Ok(()) => Given::Taken,
            Err(mpsc::TrySendError::Full(o)) => Given::Full(o),
            Err(mpsc::TrySendError::Disconnected(_)) => Given::Gone,
        }
    }

    fn subscription(&self, id: SubscriptionId) -> (Sink<SubscriptionEvent>, Subscription) {
        streams::subscription(id, &self.inbox)
    }

    fn clock(&self, domain: String) -> (Sink<ClockEvent>, ClockFollow) {
        streams::clock(domain, &self.inbox)
    }
}

pub(crate) struct Driver {
    /// The driver core; the client's start gives it the journal (feature `journal`).
    pub(crate) core: Core<Threads>,
    inbox: mpsc::Receiver<Inbox>,
    inflight: Arc<Inflight>,
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
        let (client, credentials) = (config.client.clone(), config.credentials.clone());
        let inflight = Arc::new(Inflight::default());
        let threads = Threads {
            config,
            tls,
            inbox: inbox_tx,
            inflight: inflight.clone(),
        };
        let hub = Hub::default();
        Self {
            core: Core::new(threads, hand, client, credentials, hub, unclaimed),
            inbox,
            inflight,
        }
    }

    /// Runs until the application closes the client or drops its last handle.
    pub(crate) fn run(mut self) {
        loop {
            self.core.drain();
            let blocked = self.core.flush_sessions();
            let now = Instant::now();
            let wake = self.core.deadline();
            if wake.is_some_and(|w| w <= now) {
                self.core.timeout();
                continue;
            }
            let mut wait = wake.map_or(Duration::from_secs(3600), |w| w - now);
            if blocked {
                // A session's thread is not taking frames: look again soon.
                wait = wait.min(Duration::from_millis(1));
            }
            let m = self.inbox.recv_timeout(wait);
            if let Ok(m) = &m {
                self.inflight.took(m);
            }
            match m {
                Ok(Inbox::App(r)) => {
                    if let Some(done) = self.core.request(r) {
                        self.finish();
                        let _ = done.send(Ok(()));
                        return;
                    }
                }
                Ok(Inbox::Session(sid, e)) => self.core.event(sid, e),
                // The drain at the top of the loop moves more events.
                Ok(Inbox::Pull) => {}
                Ok(Inbox::Dropped) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.core.abandon();
                    self.finish();
                    return;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Lets every session write what it was given (a clean close among it), then waits a
    /// bounded time for their threads.
    fn finish(&mut self) {
        self.inflight.unbound();
        let give_up = Instant::now() + FINISH_WAIT;
        // The engine is closed and every call has ended: what the sessions still say has
        // nobody to go to, but it is read, so a session thread never waits for room in the
        // inbox to say it and can write its close.
        let pause = || {
            while self.inbox.try_recv().is_ok() {}
            std::thread::sleep(Duration::from_millis(1));
        };
        while self.core.flush_sessions() && Instant::now() < give_up {
            pause();
        }
        for s in self.core.take_sessions() {
            while !s.thread.is_finished() && Instant::now() < give_up {
                pause();
            }
        }
    }
}

impl Drop for Driver {
    /// Session threads never wait for room in a driver that went.
    fn drop(&mut self) {
        self.inflight.unbound();
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

#[cfg(test)]
mod tests {
    use super::*;
    use nervix_protocol::limits::FRAME_LIMIT;

    #[test]
    fn frames_waiting_for_the_driver_are_bounded_in_bytes() {
        let inflight = Arc::new(Inflight::default());
        // A frame larger than the whole bound goes in when none waits.
        inflight.enter(INBOX_FRAME_BYTES + 1);
        inflight.leave(INBOX_FRAME_BYTES + 1);
        // Two frames of the frame limit fill it exactly.
        inflight.enter(FRAME_LIMIT);
        inflight.enter(FRAME_LIMIT);
        let (entered, told) = mpsc::channel();
        let waiter = {
            let inflight = inflight.clone();
            std::thread::spawn(move || {
                inflight.enter(1);
                let _ = entered.send(());
            })
        };
        assert!(
            told.recv_timeout(Duration::from_millis(200)).is_err(),
            "one byte more waits"
        );
        inflight.leave(FRAME_LIMIT);
        told.recv_timeout(Duration::from_secs(30))
            .expect("room made lets it in");
        waiter.join().unwrap();
        // A stopping driver bounds nothing.
        inflight.unbound();
        inflight.enter(INBOX_FRAME_BYTES);
    }
}
