//! The driver core against a real engine, through a fake seam whose sessions, command
//! waiters and streams the test looks into: frames a transport has no room for kept in
//! order and handed over once it has room, parking after refused credentials or a defect
//! (T-5, T-3) with every waiter told and nothing sent again, outcomes whose caller left kept
//! (C-10), and a close that reaches the sessions cleanly.

use nervix_driver_support::api::{DriverEvent, Error};
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::dataplane::{Hand, Taken};
use nervix_driver_support::driver_core::{
    Accepted, Connect, Core, Given, Request, RunSubmitted, Seam, StreamSink,
};
use nervix_driver_support::observe::Hub;
use nervix_driver_support::session::{End, Event, Out};
use nervix_driver_support::unclaimed::Unclaimed;
use nervix_protocol::client::{
    ClientConfig, ClockEvent, CommandResult, Delivery, ProducerEvent, ReadResult, SessionId,
    SubscriptionEvent, SubscriptionId,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::schema::ClientRequestT;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc;

/// The answers of the application's calls go through std channels.
struct Answers;

impl Hand for Answers {
    type Error = Error;
    type Once<T> = mpsc::SyncSender<T>;
    type Awaited<T> = mpsc::Receiver<T>;
    type Waiter = ();
    type Ended = ();
    type Deliveries = ();
    type ProducerSide = ();
    type ConsumerSide = ();

    fn producer(&self) -> ((), ()) {
        ((), ())
    }
    fn consumer(&self) -> ((), ()) {
        ((), ())
    }
    fn once<T>() -> (mpsc::SyncSender<T>, mpsc::Receiver<T>) {
        mpsc::sync_channel(1)
    }
    fn give_back<T>(tx: mpsc::SyncSender<T>, value: T) -> Option<T> {
        match tx.try_send(value) {
            Ok(()) => None,
            Err(mpsc::TrySendError::Full(v) | mpsc::TrySendError::Disconnected(v)) => Some(v),
        }
    }
    fn offer(_: (), _: impl FnOnce() -> Option<Result<Taken<Self>, Error>>) -> Option<()> {
        None
    }
    fn end(_: (), _: ProducerEvent) {}
    fn producer_dropped(_: &()) -> bool {
        true
    }
    fn keep(_: &mut (), _: Delivery) {}
    fn flush(_: &mut ()) -> bool {
        true
    }
    fn consumer_dropped(_: &()) -> bool {
        true
    }
    fn open_refused(message: String) -> Error {
        Error::OpenRefused(message)
    }
}

/// One session's transport: what it took, and how many more it takes.
#[derive(Default)]
struct Wire {
    taken: RefCell<Vec<Out>>,
    room: Cell<usize>,
    gone: Cell<bool>,
}

/// A command's waiter: whether it left, and the result it got.
#[derive(Default)]
struct Waiter {
    left: Cell<bool>,
    got: RefCell<Option<CommandResult>>,
}

/// A stream whose reader the test plays.
struct Stream<T> {
    handed: Rc<RefCell<Vec<T>>>,
}

impl<T> StreamSink<T> for Stream<T> {
    fn dropped(&self) -> bool {
        false
    }
    fn give(&mut self, event: T) -> Given<T> {
        self.handed.borrow_mut().push(event);
        Given::Taken
    }
}

/// The fake driver: the sessions it was asked to start, each with the room it gets.
/// The sessions started, in order: where each went, and its transport.
type Started = Rc<RefCell<Vec<(Connect, Rc<Wire>)>>>;

#[derive(Clone, Default)]
struct Fake {
    started: Started,
    room: Rc<Cell<usize>>,
}

impl Seam for Fake {
    type Hand = Answers;
    type Result = Rc<Waiter>;
    type Waiting = Rc<Waiter>;
    type Session = Rc<Wire>;
    type Subscription = Rc<RefCell<Vec<SubscriptionEvent>>>;
    type ClockFollow = Rc<RefCell<Vec<ClockEvent>>>;
    type Sink<T> = Stream<T>;
    const ENDS_OF_DROPPED_SESSIONS: bool = false;

    fn command() -> (Rc<Waiter>, Rc<Waiter>) {
        let w = Rc::new(Waiter::default());
        (w.clone(), w)
    }
    fn hand_over(waiting: Rc<Waiter>, result: CommandResult) -> Option<CommandResult> {
        if waiting.left.get() {
            return Some(result);
        }
        *waiting.got.borrow_mut() = Some(result);
        None
    }
    fn connect(&self, to: Connect) -> Option<Rc<Wire>> {
        let wire = Rc::new(Wire::default());
        wire.room.set(self.room.get());
        self.started.borrow_mut().push((to, wire.clone()));
        Some(wire)
    }
    fn send(wire: &Rc<Wire>, out: Out) -> Given<Out> {
        if wire.gone.get() {
            return Given::Gone;
        }
        if wire.room.get() == 0 {
            return Given::Full(out);
        }
        wire.room.set(wire.room.get() - 1);
        wire.taken.borrow_mut().push(out);
        Given::Taken
    }
    fn subscription(
        &self,
        _: SubscriptionId,
    ) -> (
        Stream<SubscriptionEvent>,
        Rc<RefCell<Vec<SubscriptionEvent>>>,
    ) {
        let handed = Rc::new(RefCell::new(Vec::new()));
        (
            Stream {
                handed: handed.clone(),
            },
            handed,
        )
    }
    fn clock(&self, _: String) -> (Stream<ClockEvent>, Rc<RefCell<Vec<ClockEvent>>>) {
        let handed = Rc::new(RefCell::new(Vec::new()));
        (
            Stream {
                handed: handed.clone(),
            },
            handed,
        )
    }
}

struct Rig {
    core: Core<Fake>,
    fake: Fake,
    hub: Hub<DriverEvent>,
    unclaimed: Unclaimed,
}

fn credentials(user: &str) -> Credentials {
    Credentials::new(user, "secret")
}

impl Rig {
    /// A core whose sessions' transports take `room` frames each.
    fn new(room: usize) -> Self {
        let fake = Fake::default();
        fake.room.set(room);
        let seed = Endpoint::parse("https://seed-1:7443/").unwrap();
        let hub = Hub::default();
        let unclaimed = Unclaimed::default();
        let core = Core::new(
            fake.clone(),
            Answers,
            ClientConfig::new(vec![seed], 7),
            credentials("alice"),
            hub.clone(),
            unclaimed.clone(),
        );
        Rig {
            core,
            fake,
            hub,
            unclaimed,
        }
    }

    /// The same rig, its core reading the time from `clock`.
    fn with_clock(self, clock: Virtual) -> Self {
        Rig {
            core: self.core.with_clock(Box::new(clock)),
            ..self
        }
    }

    /// The connect timeout of the rig's client configuration.
    fn connect_timeout() -> std::time::Duration {
        ClientConfig::new(Vec::new(), 7).connect_timeout
    }

    /// Hands `make`'s request to the core, drains it, and gives the answer.
    fn ask<T>(
        &mut self,
        make: impl FnOnce(mpsc::SyncSender<Result<T, Error>>) -> Request<Fake>,
    ) -> Result<T, Error> {
        let (tx, rx) = mpsc::sync_channel(1);
        assert!(self.core.request(make(tx)).is_none());
        self.core.drain();
        rx.try_recv().expect("the core answers at once")
    }

    fn execute(&mut self, query: &str) -> Result<Accepted<Fake>, Error> {
        let query = query.to_string();
        self.ask(|reply| Request::Execute { query, reply })
    }

    fn select(&mut self) {
        let domain = Some("d1".to_string());
        self.ask(|reply| Request::SelectDomain { domain, reply })
            .unwrap();
    }

    /// The session the engine started last, and its transport.
    fn session(&self) -> (SessionId, Rc<Wire>) {
        let started = self.fake.started.borrow();
        let (to, wire) = started.last().expect("a session was started");
        (to.session, wire.clone())
    }

    fn connected(&mut self) -> (SessionId, Rc<Wire>) {
        let (sid, wire) = self.session();
        self.core.event(sid, Event::Connected);
        self.core.drain();
        (sid, wire)
    }
}

/// Frames a session's transport has no room for wait in the core, in the order they were
/// made, and go as soon as it has room; a transport that is gone loses them.
#[test]
fn frames_wait_for_room_in_order() {
    let mut rig = Rig::new(0);
    rig.select();
    let first = rig.execute("INSERT 1;").unwrap();
    let (sid, wire) = rig.connected();
    let second = rig.execute("INSERT 2;").unwrap();
    assert!(wire.taken.borrow().is_empty());
    assert_eq!(rig.core.blocked().map(|(id, _)| id), Some(sid));
    assert!(rig.core.flush_sessions(), "still waiting for room");

    // Room for one: the oldest frame goes first.
    wire.room.set(1);
    assert!(rig.core.flush_sessions());
    assert_eq!(wire.taken.borrow().len(), 1);
    let one = rig.core.next_pending(sid).expect("the second frame waits");
    let Out::Frame(one) = one else {
        panic!("a frame waits, not a close")
    };
    let Out::Frame(zero) = &wire.taken.borrow()[0] else {
        panic!("a frame went, not a close")
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        text(zero).contains(&first.reference),
        "the first command went first"
    );
    assert!(text(&one).contains(&second.reference));
    assert!(rig.core.blocked().is_none(), "nothing else waits");

    // A transport that went takes nothing, and what waited for it is forgotten.
    let _third = rig.execute("INSERT 3;").unwrap();
    assert!(rig.core.blocked().is_some());
    wire.gone.set(true);
    assert!(!rig.core.flush_sessions());
    assert!(rig.core.blocked().is_none());
}

/// Refused credentials park the client (T-5): every command in flight ends at once and its
/// waiter has the result, reads are told why, new calls are refused, and nothing connects
/// again until new credentials are given, which are then presented.
#[test]
fn t_5_refused_credentials_park_the_client_until_new_ones_are_given() {
    let mut rig = Rig::new(64);
    let events = rig.hub.watch();
    rig.select();
    let sent = rig.execute("INSERT 1;").unwrap();
    let request = ClientRequestT::ListDomainsRequest(Box::default());
    let read = rig
        .ask(|reply| Request::Read {
            request,
            deadline: None,
            reply,
        })
        .unwrap();
    let (sid, wire) = rig.connected();
    assert!(
        !wire.taken.borrow().is_empty(),
        "the command and the read went"
    );
    rig.core.event(sid, Event::Ended(End::Unauthenticated));
    rig.core.drain();

    let got = sent.result.got.borrow().clone();
    assert!(
        matches!(got, Some(CommandResult::Uncertain { .. })),
        "a sent command ends uncertain: {got:?}"
    );
    assert!(matches!(read.try_recv(), Ok(Err(Error::Unauthenticated))));
    assert!(matches!(
        rig.execute("INSERT 2;"),
        Err(Error::Unauthenticated)
    ));
    let statement = "CREATE SUBSCRIPTION live AS SELECT * FROM orders".to_string();
    let subscribed = rig.ask(|reply| Request::Subscribe {
        domain: None,
        statement,
        reply,
    });
    assert!(matches!(subscribed, Err(Error::Unauthenticated)));
    let ended = std::iter::from_fn(|| events.try_recv().ok()).any(|e| {
        matches!(
            e,
            DriverEvent::TransportEnded {
                end: End::Unauthenticated,
                ..
            }
        )
    });
    assert!(ended, "observers hear how the transport ended");

    // Parked: no session is started, however long the engine tries.
    let started = rig.fake.started.borrow().len();
    for _ in 0..50 {
        rig.core.timeout();
        rig.core.drain();
    }
    assert_eq!(rig.fake.started.borrow().len(), started);

    // New credentials: the client connects again, presenting them.
    let new = credentials("bob");
    rig.ask(|reply| Request::SetCredentials {
        credentials: new,
        reply: Some(reply),
    })
    .unwrap();
    let later = rig.execute("INSERT 3;").unwrap();
    assert!(!later.reference.is_empty());
    // The engine connects again once its back-off passed.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while rig.fake.started.borrow().len() == started {
        assert!(std::time::Instant::now() < give_up, "no new session");
        if let Some(at) = rig.core.deadline() {
            std::thread::sleep(at.saturating_duration_since(std::time::Instant::now()));
        }
        rig.core.timeout();
        rig.core.drain();
    }
    let started = rig.fake.started.borrow();
    let (to, _) = started.last().unwrap();
    assert_eq!(to.credentials, credentials("bob"));
}

/// A console that closed as our defect parks the client for good (T-3): new credentials do
/// not unpark it.
#[test]
fn t_3_a_defect_parks_the_client_for_good() {
    let mut rig = Rig::new(64);
    rig.select();
    let _ = rig.execute("INSERT 1;").unwrap();
    let (sid, _) = rig.connected();
    rig.core.event(sid, Event::Ended(End::Defect(1009)));
    rig.core.drain();
    rig.ask(|reply| Request::SetCredentials {
        credentials: credentials("bob"),
        reply: Some(reply),
    })
    .unwrap();
    let refused = rig.execute("INSERT 2;");
    assert!(
        matches!(&refused, Err(Error::Defect(d)) if d.contains("1009")),
        "{refused:?}"
    );
}

/// An outcome whose caller stopped waiting is kept for the application, never lost (C-10),
/// and handed out once.
#[test]
fn c_10_an_outcome_nobody_waits_for_is_kept() {
    let mut rig = Rig::new(64);
    rig.select();
    let left = rig.execute("INSERT 1;").unwrap();
    left.result.left.set(true);
    let (sid, _) = rig.connected();
    rig.core.event(sid, Event::Ended(End::Unauthenticated));
    rig.core.drain();
    assert!(left.result.got.borrow().is_none());
    assert_eq!(rig.unclaimed.len(), 1);
    let kept = rig.ask(Request::Unclaimed).unwrap();
    assert!(matches!(kept.as_slice(), [CommandResult::Uncertain { .. }]));
    assert!(rig.ask(Request::Unclaimed).unwrap().is_empty());
}

/// A read given to `run` comes back as a read, a command as a command with its reference,
/// and a subscription statement is refused and undone (L-2).
#[test]
fn run_routes_each_statement_the_way_it_travels() {
    let mut rig = Rig::new(64);
    rig.select();
    let query = "INSERT 1;".to_string();
    let command = rig.ask(|reply| Request::Run { query, reply }).unwrap();
    assert!(matches!(command, RunSubmitted::Command(a) if !a.reference.is_empty()));
    let query = "USE d2;".to_string();
    let selected = rig.ask(|reply| Request::Run { query, reply });
    assert!(matches!(&selected, Ok(RunSubmitted::Selected(d)) if d == "d2"));
    let query = "CREATE SUBSCRIPTION live AS SELECT * FROM orders".to_string();
    let refused = rig.ask(|reply| Request::Run { query, reply });
    assert!(matches!(refused, Err(Error::Unsupported(_))));
}

/// A close ends the session cleanly: the core gives back the close's answer, and the
/// session's transport is handed the clean close after what it was given before.
#[test]
fn a_close_reaches_the_session_cleanly() {
    let mut rig = Rig::new(64);
    rig.select();
    let _ = rig.execute("INSERT 1;").unwrap();
    let (_, wire) = rig.connected();
    let (done, answered) = mpsc::sync_channel(1);
    let done = rig
        .core
        .request(Request::Close { revert: true, done })
        .expect("a close comes back to the driver");
    assert!(matches!(wire.taken.borrow().last(), Some(Out::Close)));
    assert!(!rig.core.flush_sessions());
    assert!(Answers::give(done, Ok(())));
    assert!(matches!(answered.try_recv(), Ok(Ok(()))));
    assert_eq!(rig.core.take_sessions().len(), 1);
}

/// Reads are answered through their own channel: a read whose deadline passed is told so.
#[test]
fn a_read_past_its_deadline_is_answered_timed_out() {
    let mut rig = Rig::new(64);
    let request = ClientRequestT::ListDomainsRequest(Box::default());
    let read = rig
        .ask(|reply| Request::Read {
            request,
            deadline: Some(std::time::Duration::ZERO),
            reply,
        })
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    rig.core.timeout();
    rig.core.drain();
    assert!(matches!(read.try_recv(), Ok(Ok(ReadResult::TimedOut))));
}

/// A read sent with `ReadTo` is answered on the channel it came with, once: its result when
/// it ends (past its deadline here, or cut by refused credentials), and at once the reason
/// when it is not sent (a parked client, T-5). Nothing comes before it ends.
#[test]
fn a_read_with_its_own_channel_is_answered_there_once() {
    let read_to = |rig: &mut Rig, deadline| {
        let (tx, rx) = mpsc::sync_channel(2);
        let request = ClientRequestT::ListDomainsRequest(Box::default());
        assert!(rig
            .core
            .request(Request::ReadTo {
                request,
                deadline,
                result: tx,
            })
            .is_none());
        rig.core.drain();
        rx
    };

    let mut rig = Rig::new(64);
    let read = read_to(&mut rig, Some(std::time::Duration::ZERO));
    assert!(read.try_recv().is_err(), "nothing before it ends");
    std::thread::sleep(std::time::Duration::from_millis(5));
    rig.core.timeout();
    rig.core.drain();
    assert!(matches!(read.try_recv(), Ok(Ok(ReadResult::TimedOut))));
    assert!(read.try_recv().is_err(), "answered once");

    let mut rig = Rig::new(64);
    let read = read_to(&mut rig, None);
    let (sid, wire) = rig.connected();
    assert!(!wire.taken.borrow().is_empty(), "the read went");
    assert!(read.try_recv().is_err(), "nothing before it ends");
    rig.core.event(sid, Event::Ended(End::Unauthenticated));
    rig.core.drain();
    assert!(matches!(read.try_recv(), Ok(Err(Error::Unauthenticated))));
    assert!(read.try_recv().is_err(), "answered once");
    let refused = read_to(&mut rig, None);
    assert!(matches!(
        refused.try_recv(),
        Ok(Err(Error::Unauthenticated))
    ));
}

/// A session is opened with the engine's connection deadline from now, and the engine's own
/// next deadline is an instant ahead; a command's reference carries the wall clock (E-1).
#[test]
fn deadlines_are_ahead_and_references_carry_the_time() {
    let mut rig = Rig::new(64);
    rig.select();
    let before = std::time::Instant::now();
    let accepted = rig.execute("INSERT 1;").unwrap();
    let (to, _) = rig.fake.started.borrow().last().cloned().unwrap();
    assert!(to.deadline > before, "the connection deadline is ahead");
    let at = rig.core.deadline().expect("the engine waits for something");
    assert!(at > before && at < before + std::time::Duration::from_secs(3600));
    assert!(
        !accepted.reference.starts_with("00000000"),
        "{}",
        accepted.reference
    );
}

/// A call ended with OUT_OF_RANGE parks the client as our defect (T-6).
#[test]
fn t_6_a_frame_refused_parks_the_client_as_a_defect() {
    let mut rig = Rig::new(64);
    rig.select();
    let _ = rig.execute("INSERT 1;").unwrap();
    let (sid, _) = rig.connected();
    rig.core.event(sid, Event::Ended(End::FrameRefused(11)));
    rig.core.drain();
    let refused = rig.execute("INSERT 2;");
    assert!(
        matches!(&refused, Err(Error::Defect(d)) if d.contains("grpc-status 11")),
        "{refused:?}"
    );
}

/// An application that went without closing ends its sessions at once, without a clean
/// close, and forgetting what waits for a transport leaves nothing blocked.
#[test]
fn an_abandoned_client_drops_its_sessions() {
    let mut rig = Rig::new(0);
    rig.select();
    let _ = rig.execute("INSERT 1;").unwrap();
    let (sid, wire) = rig.connected();
    assert!(rig.core.blocked().is_some());
    rig.core.clear_pending(sid);
    assert!(rig.core.blocked().is_none(), "nothing waits any more");
    rig.core.abandon();
    assert!(!wire.taken.borrow().iter().any(|o| matches!(o, Out::Close)));
    assert!(
        rig.core.take_sessions().is_empty(),
        "the session was dropped"
    );
}

/// Outcomes the unclaimed store's bounds evict are reported to observers once each, as
/// they are counted (C-10).
#[test]
fn c_10_evicted_outcomes_are_reported_once() {
    let mut rig = Rig::new(64);
    let events = rig.hub.watch();
    let failed = || CommandResult::Failed(nervix_protocol::client::Failure::NotSent);
    for _ in 0..nervix_driver_support::unclaimed::UNCLAIMED + 2 {
        rig.unclaimed.keep(failed());
    }
    rig.core.drain();
    rig.unclaimed.keep(failed());
    rig.core.drain();
    rig.core.drain();
    let lost: Vec<u64> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|e| match e {
            DriverEvent::UnclaimedLost(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(lost, [2, 1]);
}

/// A clock the test sets: its elapsed time and its wall clock.
#[derive(Clone, Default)]
struct Virtual(std::sync::Arc<std::sync::Mutex<(std::time::Duration, u64)>>);

impl nervix_driver_support::host_time::HostClock for Virtual {
    fn elapsed(&self) -> std::time::Duration {
        self.0.lock().unwrap().0
    }
    fn wall(&self) -> nervix_protocol::time::UnixMillis {
        nervix_protocol::time::UnixMillis(self.0.lock().unwrap().1)
    }
}

/// A core given a clock reads the time there only: the engine's time is the clock's elapsed
/// time (past the time before start), a reference carries the clock's wall time (E-1), a
/// session's connection deadline and the engine's deadline count on the clock.
#[test]
fn a_core_given_a_clock_runs_on_its_time() {
    use nervix_driver_support::driver_core::ENGINE_TIME_BEFORE_START;
    use std::time::{Duration, Instant};
    let clock = Virtual::default();
    *clock.0.lock().unwrap() = (Duration::from_secs(5), 0x0123_4567_89ab);
    let connect_timeout = Rig::connect_timeout();
    let before = Instant::now();
    let mut rig = Rig::new(64).with_clock(clock.clone());
    let now = rig.core.now();
    assert_eq!(
        Duration::from_nanos(now.as_nanos()),
        ENGINE_TIME_BEFORE_START + Duration::from_secs(5)
    );
    rig.select();
    let accepted = rig.execute("INSERT 1;").unwrap();
    assert!(
        accepted.reference.starts_with("01234567-89ab"),
        "the reference carries the clock's wall time: {}",
        accepted.reference
    );
    let (to, _) = rig.fake.started.borrow().last().cloned().unwrap();
    assert!(
        to.deadline >= before + Duration::from_secs(5) + connect_timeout,
        "the connection deadline counts from the clock's elapsed time"
    );
    // The engine's deadline is ahead of the clock's time, and no later than the connect's.
    let due = rig
        .core
        .deadline_time()
        .expect("the engine waits for something");
    assert!(due > now && due <= now + connect_timeout, "{due:?} {now:?}");
    // The clock moves: the core's time moves with it, and nothing else.
    clock.0.lock().unwrap().0 = Duration::from_secs(9);
    assert_eq!(
        rig.core.now().as_nanos() - now.as_nanos(),
        Duration::from_secs(4).as_nanos() as u64
    );
}

/// A core without a clock of its own reads the host's, as the drivers' cores always did: the
/// engine's time starts at the time before start plus what elapsed since the core was made,
/// a reference carries the system's wall time (E-1), and a session's connection deadline is
/// the host's instant now plus the connect timeout.
#[test]
fn a_core_without_a_clock_reads_the_host_clocks() {
    use nervix_driver_support::driver_core::ENGINE_TIME_BEFORE_START;
    use nervix_driver_support::host_time::system_wall;
    use std::time::{Duration, Instant};
    let connect_timeout = Rig::connect_timeout();
    let before = Instant::now();
    let wall_before = system_wall();
    let mut rig = Rig::new(64);
    let now = Duration::from_nanos(rig.core.now().as_nanos());
    assert!(now >= ENGINE_TIME_BEFORE_START, "{now:?}");
    assert!(
        now <= ENGINE_TIME_BEFORE_START + before.elapsed(),
        "{now:?}"
    );
    rig.select();
    let accepted = rig.execute("INSERT 1;").unwrap();
    let wall_after = system_wall();
    let r = &accepted.reference;
    let millis = u64::from_str_radix(&format!("{}{}", &r[0..8], &r[9..13]), 16).unwrap();
    assert!(
        (wall_before.0..=wall_after.0).contains(&millis),
        "the reference carries the system's wall time: {r} ({millis}, {wall_before:?}..{wall_after:?})"
    );
    let (to, _) = rig.fake.started.borrow().last().cloned().unwrap();
    assert!(
        to.deadline >= before + connect_timeout && to.deadline <= Instant::now() + connect_timeout,
        "the connection deadline is the host's instant plus the connect timeout"
    );
}

/// A core given a clock hands it to its journal's separate calls when the journal is set:
/// an upload's record, kept uncertain, is repeatable a minute later on that clock, where the
/// host's clock would put its creation (2026-01-01) months past the horizon.
#[cfg(feature = "journal")]
#[test]
fn e_4_a_core_gives_its_clock_to_its_journals_separate_calls() {
    use nervix_driver_support::journal::{JournalConfig, TransferKind, TransferRecord};
    use nervix_driver_support::journaled::open_at;
    use nervix_protocol::calls::{ArchiveInfo, TransferConfig, UploadCall, UploadSpec};
    use nervix_protocol::command::ExecutionReference;
    use nervix_protocol::rng::Rng;
    use nervix_protocol::time::UnixMillis;
    use std::path::Path;
    use std::time::Duration;
    let created = 1_767_225_600_000;
    let clock = Virtual::default();
    *clock.0.lock().unwrap() = (Duration::from_secs(5), created);
    let dir = std::env::temp_dir().join(format!("nervix-core-clock-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = JournalConfig::new(&dir, "c");
    let opened = open_at(Some(&config), UnixMillis(created))
        .unwrap()
        .unwrap();
    let handle = opened.transfers();
    let mut rig = Rig::new(64).with_clock(clock.clone());
    rig.core.set_journal(Some(opened));
    let identity = ExecutionReference::new_v7(UnixMillis(created), &mut Rng::new(1)).to_string();
    let spec = UploadSpec {
        domain: "tenant".into(),
        resource: "model".into(),
        identity: identity.clone(),
    };
    let call = UploadCall::new(spec, 3, TransferConfig::upload()).unwrap();
    let info = ArchiveInfo {
        total_bytes: 3,
        digest: [1; 32],
    };
    let journaled = handle
        .begin_upload(&call, Path::new("a.bin"), info)
        .unwrap();
    handle.end(journaled, true);
    let record = TransferRecord {
        kind: TransferKind::Upload {
            domain: "tenant".into(),
            resource: "model".into(),
        },
        reference: identity,
        archive: "a.bin".into(),
        size: 3,
        digest: [1; 32],
        created_wall: UnixMillis(created),
    };
    clock.0.lock().unwrap().1 = created + 60_000;
    let again = handle.recover(&record, info);
    assert!(
        again.is_ok(),
        "inside the horizon on the core's clock: {again:?}"
    );
    drop(rig);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each command's reference carries the wall clock of its own call (E-1), not the time the
/// core was made or its first command's.
#[test]
fn e_1_each_command_of_a_core_carries_the_wall_clock_of_its_own_call() {
    use std::time::Duration;
    let clock = Virtual::default();
    *clock.0.lock().unwrap() = (Duration::from_secs(5), 0x0123_4567_89ab);
    let mut rig = Rig::new(64).with_clock(clock.clone());
    rig.select();
    let first = rig.execute("INSERT 1;").unwrap();
    clock.0.lock().unwrap().1 = 0x0123_4567_89ab + 61_000;
    let second = rig.execute("INSERT 2;").unwrap();
    let millis = |r: &str| u64::from_str_radix(&format!("{}{}", &r[0..8], &r[9..13]), 16).unwrap();
    assert_eq!(millis(&first.reference), 0x0123_4567_89ab);
    assert_eq!(millis(&second.reference), 0x0123_4567_89ab + 61_000);
    assert_ne!(first.reference, second.reference);
}

/// An accepted command carries the engine's wait for it: a BACKUP its own wait, any
/// other command the call timeout. A driver bounds its caller's wait by it.
#[test]
fn a_7_an_accepted_backup_carries_its_own_wait_not_the_call_timeout() {
    use std::time::Duration;
    let clock = Virtual::default();
    *clock.0.lock().unwrap() = (Duration::from_secs(5), 0x0123_4567_89ab);
    let mut rig = Rig::new(64).with_clock(clock.clone());
    let config = ClientConfig::new(Vec::new(), 7);
    assert_ne!(config.backup_wait, config.call_timeout);
    rig.select();
    let backup = rig.execute("BACKUP").unwrap();
    assert_eq!(backup.wait, config.backup_wait);
    let other = rig.execute("INSERT 1;").unwrap();
    assert_eq!(other.wait, config.call_timeout);
    // Taken later on the core's clock, its wait runs from then.
    clock.0.lock().unwrap().0 = Duration::from_secs(7);
    let later = rig.execute("BACKUP").unwrap();
    assert_eq!(later.wait, config.backup_wait);
}
