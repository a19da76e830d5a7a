//! The Nervix engine embedded in a hand-written loop: no async runtime and no driver crate,
//! only `nervix-protocol`, blocking WebSockets from `sansio-kit` and one thread. It talks to a
//! three-node loopback cluster over the console WebSocket: a command, a subscription, and a
//! transaction whose leader moves away in the middle.
//!
//! The loop keeps the engine's contract (see "Writing your own driver" in `nervix-protocol`):
//! `now` on every input, every poll drained after every input, the engine's deadline
//! honoured, each action mapped to its stream, every frame and every end reported, and frames
//! a socket cannot take yet kept in order. Readiness is a short read timeout on each socket.
//!
//! `cargo run -p nervix-blocking --example own_loop`

use bytes::Bytes;
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::{
    Action, Client, ClientConfig, ClientEvent, CommandHandle, CommandResult, LeaderUri, SessionId,
    SubscriptionEvent,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::time::{Timestamp, UnixMillis};
use sansio_kit::dial::Target;
use sansio_kit::ws::{incoming, Handshake, Incoming, ReadError};
use std::collections::{BTreeMap, VecDeque};
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tungstenite::{Message, WebSocket};

type Ws = WebSocket<sansio_kit::blocking::Io>;

/// One open stream and the frames it has not taken yet, in order.
struct Stream {
    ws: Ws,
    pending: VecDeque<Message>,
}

/// The loop: the engine, its streams, and the clock every input is stamped with.
struct Driver {
    engine: Client,
    streams: BTreeMap<SessionId, Stream>,
    origin: Instant,
    ended: BTreeMap<CommandHandle, CommandResult>,
    rows: usize,
}

impl Driver {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.origin.elapsed().as_nanos() as u64)
    }

    fn wall() -> UnixMillis {
        UnixMillis(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_millis() as u64,
        )
    }

    /// Opens a console WebSocket with Basic credentials, bounded by the engine's own
    /// connection deadline.
    fn open(endpoint: &Endpoint) -> Option<Ws> {
        let url = format!("{}console/ws", endpoint.as_str()).replacen("http", "ws", 1);
        let target = Target::parse(endpoint.as_str()).ok()?;
        let deadline = Instant::now() + Duration::from_secs(5);
        let io = sansio_kit::blocking::open(&target, &Default::default(), None, deadline).ok()?;
        let hs = Handshake::new(url).header(
            "authorization",
            sansio_kit::basic::header("nervix", "nervix"),
        );
        let (ws, _) = sansio_kit::blocking::websocket(io, &hs, deadline).ok()?;
        // Readiness: a read waits at most a millisecond before the loop moves on.
        let tcp: &TcpStream = ws.get_ref().tcp();
        tcp.set_read_timeout(Some(Duration::from_millis(1))).ok()?;
        tcp.set_write_timeout(Some(Duration::from_secs(2))).ok()?;
        Some(ws)
    }

    /// Drains every output of the engine; called after every input.
    fn drain(&mut self) {
        while let Some(action) = self.engine.poll_action() {
            match action {
                Action::Connect { session, endpoint } => match Self::open(&endpoint) {
                    Some(ws) => {
                        let pending = VecDeque::new();
                        self.streams.insert(session, Stream { ws, pending });
                        self.engine.handle_connected(self.now(), session);
                    }
                    None => self.engine.handle_closed(self.now(), session),
                },
                Action::Send { session, frame } => {
                    if let Some(s) = self.streams.get_mut(&session) {
                        s.pending.push_back(Message::Binary(frame));
                    }
                }
                Action::Close { session, clean } => {
                    if let Some(mut s) = self.streams.remove(&session) {
                        if clean {
                            let _ = s.ws.close(None);
                            let _ = s.ws.flush();
                        }
                    }
                }
                _ => {}
            }
        }
        while let Some(event) = self.engine.poll_event() {
            match event {
                ClientEvent::Command { handle, result } => {
                    self.ended.insert(handle, result);
                }
                ClientEvent::SessionOpened { endpoint, .. } => {
                    println!("  session open at {}", endpoint.as_str())
                }
                ClientEvent::SessionLost { .. } => {
                    println!("  session lost; the engine restores it")
                }
                _ => {}
            }
        }
        while self.engine.poll_unsolicited().is_some() {}
        while let Some((_, e)) = self.engine.poll_subscriptions() {
            match e {
                SubscriptionEvent::Opened { .. } => println!("  subscription opened"),
                SubscriptionEvent::Rows(batch) => self.rows += batch.len(),
                SubscriptionEvent::Gap(g) => println!("  subscription gap: {g:?}"),
                _ => {}
            }
        }
    }

    /// One turn: write what each socket takes, read what each has, fire the deadline.
    fn turn(&mut self) {
        let mut frames: Vec<(SessionId, Bytes)> = Vec::new();
        let mut closed = Vec::new();
        for (id, s) in &mut self.streams {
            // Frames go in order into the connection's write buffer; one the buffer cannot
            // take now stays first in line. A flush the socket cannot finish within its write
            // timeout goes on next turn, from where it stopped.
            while let Some(m) = s.pending.pop_front() {
                match s.ws.write(m) {
                    Ok(()) => {}
                    Err(tungstenite::Error::WriteBufferFull(m)) => {
                        s.pending.push_front(*m);
                        break;
                    }
                    Err(_) => {
                        closed.push(*id);
                        break;
                    }
                }
            }
            match s.ws.flush() {
                Ok(()) => {}
                Err(tungstenite::Error::Io(ref e)) if sansio_kit::ws::timed_out(e) => {}
                Err(_) => closed.push(*id),
            }
            loop {
                match incoming(s.ws.read()) {
                    Ok(Incoming::Binary(b)) => frames.push((*id, b)),
                    Ok(Incoming::Control) => {}
                    Err(ReadError::TimedOut) => break,
                    Ok(_) | Err(_) => {
                        closed.push(*id);
                        break;
                    }
                }
            }
        }
        for (id, frame) in frames {
            self.engine.handle_frame(self.now(), id, frame);
        }
        for id in closed {
            self.streams.remove(&id);
            self.engine.handle_closed(self.now(), id);
        }
        if self.engine.poll_timeout().is_some_and(|t| t <= self.now()) {
            self.engine.handle_timeout(self.now());
        }
        self.drain();
    }

    /// Turns the loop until `handle` has ended, within `limit`.
    fn wait(&mut self, handle: CommandHandle, limit: Duration) -> CommandResult {
        let give_up = Instant::now() + limit;
        loop {
            self.turn();
            if let Some(r) = self.ended.remove(&handle) {
                return r;
            }
            assert!(Instant::now() < give_up, "no outcome within {limit:?}");
        }
    }

    fn execute(&mut self, query: &str) -> CommandResult {
        let h = self
            .engine
            .execute(self.now(), Self::wall(), query)
            .expect("a sendable command");
        self.drain();
        let r = self.wait(h, Duration::from_secs(20));
        let how = match &r {
            CommandResult::Completed(_) => "completed",
            CommandResult::Failed(_) => "failed",
            _ => "uncertain",
        };
        println!("{query:<44} {how}");
        r
    }
}

/// Starts the cluster and runs the story; panics if any step does not end as it should.
pub fn main() {
    // RUST_LOG=debug shows what the engine does, on standard error; unset, only errors.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let lb = Loopback::start(LoopbackConfig::default()).expect("the loopback cluster");
    let seeds = lb
        .console_endpoints()
        .iter()
        .map(|e| Endpoint::parse(e).unwrap())
        .collect();
    let mut config = ClientConfig::new(seeds, 11);
    config.leader_uri = LeaderUri::WebConsole; // redirects name console endpoints
    let mut d = Driver {
        engine: Client::new(config),
        streams: BTreeMap::new(),
        origin: Instant::now(),
        ended: BTreeMap::new(),
        rows: 0,
    };
    d.engine.select_domain(Some("tenant")).unwrap();
    assert!(matches!(
        d.execute("CREATE RELAY orders SCHEMA orders UNBRANCHED;"),
        CommandResult::Completed(_)
    ));
    let now = d.now();
    d.engine
        .subscribe(now, "tenant", "CREATE SUBSCRIPTION live FROM orders")
        .unwrap();
    d.drain();
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        d.turn();
    }
    assert!(matches!(d.execute("BEGIN;"), CommandResult::Completed(_)));
    assert!(matches!(
        d.execute("CREATE RELAY audit;"),
        CommandResult::Completed(_)
    ));
    println!("-- the leader moves to node-2 --");
    lb.set_leader(1);
    assert!(matches!(
        d.execute("CREATE RELAY billing;"),
        CommandResult::Completed(_)
    ));
    assert!(matches!(d.execute("COMMIT;"), CommandResult::Completed(_)));
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        d.turn();
    }
    println!("{} row(s) read from the subscription", d.rows);
    assert!(d.rows > 0, "the subscription delivered no rows");
    d.engine.close(d.now(), false);
    d.drain();
}
