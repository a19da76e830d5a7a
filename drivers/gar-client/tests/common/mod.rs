//! A scripted GAR server for the driver tests: a tungstenite server on 127.0.0.1 that accepts
//! the upgrade with the `gar-protocol` subprotocol (or refuses it with 401) and plays fixed
//! JSON messages from the seed's examples, recording what the client sent.

#![allow(dead_code)]
// tungstenite fixes the shape of the upgrade callback, its large error included.
#![allow(clippy::result_large_err)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gar_driver::{Config, Value, Violation};
use serde_json::json;
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::protocol::CloseFrame;
use tungstenite::{Message, WebSocket};

/// The client's heartbeat timeout in the tests (ms): a beat every 200 ms.
pub const IV: u64 = 400;

/// The interval announced by the peers of the write tests, which never beat: long enough that
/// the client's first-beat grace (ten intervals) outlasts moving megabytes on a loaded machine,
/// so those tests see write behaviour, never a heartbeat timeout.
pub const QUIET_IV: u64 = 30_000;

/// What the server saw of the upgrade.
#[derive(Debug, Clone, Default)]
pub struct Upgrade {
    /// The path and query of the request.
    pub path_and_query: String,
    /// The subprotocols offered.
    pub protocols: Option<String>,
}

/// One accepted connection, driven by a script.
pub struct Peer {
    ws: WebSocket<TcpStream>,
    /// Every text message the client sent, parsed, in order.
    pub seen: Vec<Value>,
    /// The first bytes of the first text message, as sent.
    pub first_text: Option<String>,
}

impl Peer {
    /// The next text message of the client (pings and pongs skipped); None when it closed.
    pub fn recv(&mut self) -> Option<Value> {
        loop {
            match self.ws.read() {
                Ok(Message::Text(t)) => {
                    if self.first_text.is_none() {
                        self.first_text = Some(t.as_str().to_string());
                    }
                    let v: Value = serde_json::from_str(t.as_str()).expect("one JSON object");
                    self.seen.push(v.clone());
                    return Some(v);
                }
                Ok(Message::Close(_)) => {
                    // tungstenite answers the close; read on until it is done.
                    while self.ws.read().is_ok() {}
                    return None;
                }
                Ok(Message::Binary(_)) => panic!("the client sent a binary message"),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// The `value` of the next message of type `mt`, skipping others (heartbeats).
    pub fn recv_type(&mut self, mt: &str) -> Value {
        loop {
            let v = self
                .recv()
                .unwrap_or_else(|| panic!("closed while waiting for {mt}"));
            if v["message_type"] == mt {
                return v.get("value").cloned().unwrap_or(Value::Null);
            }
        }
    }

    /// Sends one message `{"message_type": mt, "value": value}`.
    pub fn send(&mut self, mt: &str, value: Value) {
        self.send_text(&json!({"message_type": mt, "value": value}).to_string());
    }

    /// Sends a text message as is.
    pub fn send_text(&mut self, text: &str) {
        self.ws.send(Message::text(text)).expect("send");
    }

    /// Sends a binary message.
    pub fn send_binary(&mut self, b: &[u8]) {
        self.ws
            .send(Message::binary(b.to_vec()))
            .expect("send binary");
    }

    /// The server's Introduction (the seed's example, with the client's JSON version).
    pub fn introduce(&mut self, interval: u64) {
        self.send(
            "Introduction",
            json!({"version": gar_driver_version(), "heartbeat_timeout_interval": interval, "user": "jserver"}),
        );
    }

    /// Reads the client's Introduction, then sends the server's, announcing [`QUIET_IV`]: the
    /// scripts do not beat, and the client's liveness interval is the larger of the two
    /// (G-15), so a script slowed past the client's own interval on a loaded machine does not
    /// end in a heartbeat timeout. The client still beats by its own interval (G-12); the
    /// liveness tests announce their interval themselves.
    pub fn handshake(&mut self) -> Value {
        let intro = self.recv_type("Introduction");
        self.introduce(QUIET_IV);
        intro
    }

    /// Sends a server heartbeat.
    pub fn beat(&mut self) {
        self.send(
            "Heartbeat",
            json!({"u_milliseconds": 1_745_425_693_895_u64}),
        );
    }

    /// Closes with `code` (None: a close frame without a code) and reads until the end.
    pub fn close(&mut self, code: Option<u16>) {
        let frame = code.map(|c| CloseFrame {
            code: c.into(),
            reason: "".into(),
        });
        let _ = self.ws.close(frame);
        self.drain(Duration::from_secs(2));
    }

    /// Closes with `code` (None: a close frame without a code) and reads until the end:
    /// whether the client answered the close, so the closing handshake completed, rather than
    /// dropping the connection without a word.
    pub fn close_answered(&mut self, code: Option<u16>) -> bool {
        let frame = code.map(|c| CloseFrame {
            code: c.into(),
            reason: "".into(),
        });
        let _ = self.ws.close(frame);
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            match self.ws.read() {
                Err(tungstenite::Error::ConnectionClosed) => return true,
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return false,
                Ok(_) => {}
            }
        }
        false
    }

    /// Writes raw bytes on the socket, under the WebSocket framing.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.ws.get_mut().write_all(bytes).expect("raw write");
    }

    /// Starts a text message of `len` bytes and sends its payload one byte every `pace` for
    /// `d` (never finishing it when `len` is larger than what fits in `d`): a server trickling
    /// one message, so that each socket read of the client brings a byte or two in time.
    pub fn trickle(&mut self, len: u16, pace: Duration, d: Duration) {
        let [hi, lo] = len.to_be_bytes();
        self.raw(&[0x81, 126, hi, lo]);
        let until = Instant::now() + d;
        while Instant::now() < until {
            if self.ws.get_mut().write_all(b"x").is_err() {
                return;
            }
            std::thread::sleep(pace);
        }
    }

    /// Reads (and records) until the client closes or `limit` passes.
    pub fn drain(&mut self, limit: Duration) {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            match self.ws.read() {
                Ok(Message::Text(t)) => {
                    if let Ok(v) = serde_json::from_str(t.as_str()) {
                        self.seen.push(v);
                    }
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return,
            }
        }
    }

    /// Reads and records for `d`, answering nothing (silence towards the client).
    pub fn listen_for(&mut self, d: Duration) {
        self.ws
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        self.drain(d);
        self.ws
            .get_ref()
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
    }

    /// The message types the client sent, in order.
    pub fn types(&self) -> Vec<String> {
        self.seen
            .iter()
            .map(|v| v["message_type"].as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// The JSON version the client speaks.
pub fn gar_driver_version() -> u64 {
    gar_client::JSON_VERSION
}

/// What a finished script reports.
pub struct Report {
    /// The upgrade request.
    pub upgrade: Upgrade,
    /// Every text message the client sent, parsed, in order.
    pub seen: Vec<Value>,
    /// The first text message, as sent.
    pub first_text: Option<String>,
    /// Connections accepted after the first, within a short look after the script.
    pub later_connections: usize,
}

/// A scripted server.
pub struct Server {
    /// `ws://127.0.0.1:<port>/gar`.
    pub url: String,
    handle: JoinHandle<Report>,
}

impl Server {
    /// The script's report, once it finished.
    pub fn report(self) -> Report {
        self.handle.join().expect("the script panicked")
    }
}

/// How the server answers the upgrade.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Accepts with `gar-protocol`.
    Accept,
    /// Refuses with 401.
    Unauthorized,
}

/// Serves one connection on 127.0.0.1 with `script`; afterwards looks for `look` whether the
/// client connects again.
pub fn serve(
    answer: Answer,
    look: Duration,
    script: impl FnOnce(&mut Peer) + Send + 'static,
) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/gar", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        tcp.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        let upgrade = Arc::new(Mutex::new(Upgrade::default()));
        let up = upgrade.clone();
        let callback =
            move |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
                let protocols = req
                    .headers()
                    .get("sec-websocket-protocol")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                *up.lock().unwrap() = Upgrade {
                    path_and_query: req.uri().to_string(),
                    protocols: protocols.clone(),
                };
                if answer == Answer::Unauthorized {
                    let mut e = ErrorResponse::new(Some("unauthorized".into()));
                    *e.status_mut() = tungstenite::http::StatusCode::UNAUTHORIZED;
                    return Err(e);
                }
                if protocols
                    .as_deref()
                    .is_some_and(|p| p.split(',').any(|x| x.trim() == "gar-protocol"))
                {
                    resp.headers_mut().insert(
                        "sec-websocket-protocol",
                        tungstenite::http::HeaderValue::from_static("gar-protocol"),
                    );
                }
                Ok(resp)
            };
        let mut peer = match tungstenite::accept_hdr(tcp, callback) {
            Ok(ws) => Some(Peer {
                ws,
                seen: Vec::new(),
                first_text: None,
            }),
            Err(_) => None,
        };
        if let Some(p) = peer.as_mut() {
            script(p);
        }
        let (seen, first_text) = peer.map(|p| (p.seen, p.first_text)).unwrap_or_default();
        listener.set_nonblocking(true).unwrap();
        let until = Instant::now() + look;
        let mut later = 0;
        while Instant::now() < until {
            if listener.accept().is_ok() {
                later += 1;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let upgrade = upgrade.lock().unwrap().clone();
        Report {
            upgrade,
            seen,
            first_text,
            later_connections: later,
        }
    });
    Server { url, handle }
}

/// A client configuration for `url`: heartbeat timeout [`IV`], a token, short deadlines.
pub fn config(url: &str) -> Config {
    let mut c = Config::new(url);
    c.engine.heartbeat_timeout_interval = IV;
    c.engine.user = "jonh".into();
    c.engine.application = "tests".into();
    c.engine.pid = 4242;
    c.connect_timeout = Duration::from_secs(5);
    c.write_timeout = Duration::from_secs(5);
    c.call_timeout = Duration::from_secs(5);
    c
}

/// A port on 127.0.0.1 nothing listens on.
pub fn refused_port_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/gar", l.local_addr().unwrap());
    drop(l);
    url
}

/// The seed's subscription example: processing, a topic and a key introduced, one record,
/// then streaming.
pub fn play_subscription(p: &mut Peer) {
    let sub = p.recv_type("Subscribe");
    assert_eq!(sub["name"], "S1");
    assert_eq!(sub["subscription_mode"], "Streaming");
    p.send(
        "SubscriptionStatus",
        json!({"name": "S1", "status": "ProcessingSnapshot"}),
    );
    p.send(
        "TopicIntroduction",
        json!({"topic_id": 18, "name": "top_bid_price"}),
    );
    p.send(
        "KeyUpdate",
        json!({"key_id": 7, "name": "AAPL", "class_list": ["Stock"]}),
    );
    p.send(
        "JSONRecordUpdate",
        json!({"record_id": {"key_id": 7, "topic_id": 18}, "value": 101.25, "tick_time": 5}),
    );
    p.send(
        "SubscriptionStatus",
        json!({"name": "S1", "status": "Streaming"}),
    );
}

/// A streaming subscription `S1` of class `Stock`.
pub fn s1() -> gar_driver::Subscribe {
    gar_driver::Subscribe {
        name: "S1".into(),
        streaming: true,
        class_list: vec!["Stock".into()],
        ..Default::default()
    }
}

/// A server that reads the upgrade request, then answers it a header line of 200 bytes every
/// `pace` for `d`, never ending the response: each socket read of the client brings a line.
pub fn trickling_upgrade(pace: Duration, d: Duration) -> (JoinHandle<()>, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/gar", l.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let Ok((mut tcp, _)) = l.accept() else {
            return;
        };
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut request = Vec::new();
        let mut buf = [0; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match std::io::Read::read(&mut tcp, &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        if tcp
            .write_all(b"HTTP/1.1 101 Switching Protocols\r\n")
            .is_err()
        {
            return;
        }
        let line = format!("X-Pad: {}\r\n", "a".repeat(191));
        let until = Instant::now() + d;
        while Instant::now() < until {
            std::thread::sleep(pace);
            if tcp.write_all(line.as_bytes()).is_err() {
                return;
            }
        }
    });
    (handle, url)
}

/// A listener that completes TCP connections (the kernel's backlog) but never answers the
/// upgrade; kept open while the returned value lives.
pub fn silent_listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/gar", l.local_addr().unwrap());
    (l, url)
}

/// A server that answers the introduction, then reads nothing for `d`: the client's socket
/// buffers fill and its writes stall.
pub fn stalled_reader(d: Duration) -> Server {
    serve(Answer::Accept, Duration::ZERO, move |p| {
        p.recv_type("Introduction");
        p.introduce(QUIET_IV);
        std::thread::sleep(d);
    })
}

/// A server that answers the introduction, then reads nothing for `pause` (the client's
/// writes stall), then ends the connection as a server's own heartbeat timeout does: the
/// `Error "Heartbeat timeout"`, a close frame, and the socket closed with the client's bytes
/// still unread in it (so the client's stalled write fails).
pub fn times_out_a_stalled_writer(pause: Duration) -> Server {
    serve(Answer::Accept, Duration::ZERO, move |p| {
        p.recv_type("Introduction");
        p.introduce(QUIET_IV);
        std::thread::sleep(pause);
        p.send(
            "Error",
            json!({"message": "Heartbeat timeout", "recoverable": false}),
        );
        let _ = p.ws.close(Some(CloseFrame {
            code: 1000.into(),
            reason: "".into(),
        }));
        let _ = p.ws.flush();
    })
}

/// A server that answers the introduction, then reads the socket `chunk` bytes every `pace`
/// for `d`, discarding them: a peer that keeps taking a trickle, so each socket write of the
/// client makes a little progress and none fails on its own.
pub fn trickle_reader(chunk: usize, pace: Duration, d: Duration) -> Server {
    serve(Answer::Accept, Duration::ZERO, move |p| {
        p.recv_type("Introduction");
        p.introduce(QUIET_IV);
        let mut buf = vec![0; chunk];
        let until = Instant::now() + d;
        while Instant::now() < until {
            match std::io::Read::read(p.ws.get_mut(), &mut buf) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return,
            }
            std::thread::sleep(pace);
        }
    })
}

/// A server that answers the introduction, stops reading for `pause`, then reads every
/// record update until the client's echo, answers it, and waits for the Logoff. Reports the
/// values of the updates in the order they came.
pub fn slow_reader(pause: Duration) -> Server {
    serve(Answer::Accept, Duration::ZERO, move |p| {
        p.recv_type("Introduction");
        p.introduce(QUIET_IV);
        std::thread::sleep(pause);
        let e = p.recv_type("EchoRequest");
        p.send("EchoResponse", json!({"msg_ref": e["msg_ref"]}));
        p.recv_type("Logoff");
    })
}

/// The numbers of the [`big`] values the client sent, in order (each checked whole).
pub fn published(r: &Report) -> Vec<usize> {
    r.seen
        .iter()
        .filter(|v| v["message_type"] == "JSONRecordUpdate")
        .map(|v| {
            let text = v["value"]["value"].as_str().expect("a big value");
            let (n, _) = text.split_once(':').expect("numbered");
            let n: usize = n.parse().expect("a number");
            assert_eq!(v["value"]["value"], big(n), "value {n} arrived whole");
            n
        })
        .collect()
}

/// A value of about 256 KiB, numbered.
pub fn big(n: usize) -> Value {
    json!(format!("{n}:{}", "x".repeat(256 * 1024)))
}

/// A server that, past the handshake, introduces topic id 3 as `A::x` and then again as
/// `A::y` (one id may never name two topics), then reads until the client goes.
pub fn rename_topic(p: &mut Peer) {
    p.handshake();
    p.send("TopicIntroduction", json!({"topic_id": 3, "name": "A::x"}));
    p.send("TopicIntroduction", json!({"topic_id": 3, "name": "A::y"}));
    p.drain(Duration::from_secs(2));
}

/// The violation [`rename_topic`] must end the session with.
pub fn renamed_topic() -> Violation {
    Violation::TopicNameMismatch {
        id: 3,
        known: "A::x".into(),
        got: "A::y".into(),
    }
}

/// A server that, past the handshake, tears down a class of key id 9, which it never
/// introduced, then reads until the client goes.
pub fn teardown_unknown_key(p: &mut Peer) {
    p.handshake();
    p.send(
        "KeyUpdate",
        json!({"key_id": 9, "name": "k", "deleted_class": "A", "class_list": []}),
    );
    p.drain(Duration::from_secs(2));
}

/// The violation [`teardown_unknown_key`] must end the session with.
pub fn unknown_key() -> Violation {
    Violation::UnknownId { kind: "key", id: 9 }
}
