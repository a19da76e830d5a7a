//! One session on a thread of its own: a WebSocket on `/console/ws` over a blocking socket.
//! The thread connects within the connection deadline, then alternates between writing what
//! the driver queued and reading with a short timeout, and tells the driver every frame and
//! the end.

use crate::driver::{Inbox, Inflight};
use crate::net::{open, Dialer, Paced};
use crate::{Credentials, WsAuth};
use bytes::Bytes;
use nervix_driver_support::driver_core::Connect;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::limits::FRAME_LIMIT;
use sansio_kit::ws::{incoming, timed_out, Handshake, HandshakeError, Incoming, ReadError};
use std::io;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tungstenite::{Error as WsError, Message, WebSocket};

use nervix_driver_support::session::{
    after_failed_write, close_end, upgrade_refused, CLOSE_WAIT, CLOSE_WAIT_FRAMES,
};
pub use nervix_driver_support::session::{console_url, End, CONSOLE_PATH};
/// What a session's thread tells the driver, and what the driver hands it.
pub(crate) use nervix_driver_support::session::{Event, Out};

/// Everything a session's thread needs.
pub(crate) struct Dial {
    /// The session, where it connects, as whom and by when.
    pub to: Connect,
    pub auth: WsAuth,
    pub tls: Option<Dialer>,
    pub write_timeout: Duration,
    pub poll_interval: Duration,
    pub events: mpsc::SyncSender<Inbox>,
    /// Bytes of frames the driver has not taken yet, over all sessions.
    pub inflight: Arc<Inflight>,
}

impl Dial {
    fn tell(&self, e: Event) -> bool {
        if let Event::Frame(f) = &e {
            self.inflight.enter(f.len());
        }
        self.events.send(Inbox::Session(self.to.session, e)).is_ok()
    }
}

/// The URL of the console's `path` at an endpoint, as [`console_url`] for the session's.
pub(crate) fn url_at(e: &Endpoint, path: &str, query_auth: Option<&Credentials>) -> String {
    nervix_driver_support::credentials::console_url_at(e, path, query_auth)
}

/// Runs one session to its end.
pub(crate) fn run(d: Dial, out: mpsc::Receiver<Out>) {
    let end = match connect(&d) {
        Ok(ws) => {
            if d.tell(Event::Connected) {
                serve(&d, ws, &out)
            } else {
                End::Finished
            }
        }
        Err(end) => end,
    };
    d.tell(Event::Ended(end));
}

fn connect(d: &Dial) -> Result<WebSocket<Paced>, End> {
    handshake(
        &d.to.endpoint,
        CONSOLE_PATH,
        d.auth,
        &d.to.credentials,
        d.tls.as_ref(),
        d.to.deadline,
    )
}

/// Opens a WebSocket on the console's `path` at `endpoint` by `deadline`: the connection, TLS,
/// the credentials in the header or the query (T-4), and the HTTP upgrade, with messages of at
/// most the frame limit either way.
pub(crate) fn handshake(
    endpoint: &Endpoint,
    path: &str,
    auth: WsAuth,
    credentials: &Credentials,
    tls: Option<&Dialer>,
    deadline: Instant,
) -> Result<WebSocket<Paced>, End> {
    let io = open(endpoint, tls, deadline).map_err(|e| End::Transport(format!("connect: {e}")))?;
    // The connection deadline bounds the whole upgrade, not each read of its answer.
    let mut io = Paced::new(io);
    io.until(deadline);
    let url = url_at(
        endpoint,
        path,
        (auth == WsAuth::Query).then_some(credentials),
    );
    let mut hs = Handshake::new(url).max_message(FRAME_LIMIT);
    if auth == WsAuth::Header {
        hs = hs.header("authorization", credentials.basic());
    }
    match sansio_kit::blocking::websocket(io, &hs, deadline) {
        Ok((ws, _)) => Ok(ws),
        Err(HandshakeError::Refused(status)) => Err(upgrade_refused(status)),
        Err(HandshakeError::TimedOut) => Err(End::Transport("connection deadline passed".into())),
        Err(e) => Err(End::Transport(e.to_string())),
    }
}

/// What one read of a console session gave.
enum Step {
    /// A binary message: one server frame.
    Frame(Bytes),
    /// The session ended so.
    Ended(End),
    /// Nothing for the engine (a ping or a pong).
    Idle,
    /// The read waited its poll interval and nothing came.
    TimedOut,
}

/// The meaning of one read of a console session; `closing` once our close frame is out.
fn step(read: Result<Message, WsError>, closing: bool) -> Step {
    match incoming(read) {
        Ok(Incoming::Binary(b)) => Step::Frame(b),
        Ok(Incoming::Close(code)) => Step::Ended(close_end(code)),
        Ok(Incoming::Text(_)) => Step::Ended(End::Transport("a text message".into())),
        Ok(_) => Step::Idle,
        Err(ReadError::TimedOut) => Step::TimedOut,
        Err(ReadError::TooLarge) => Step::Ended(End::OversizedFrame),
        Err(ReadError::Closed(_)) if closing => Step::Ended(End::Finished),
        Err(e) => Step::Ended(End::Transport(format!("websocket: {e}"))),
    }
}

/// Bytes in memory as a console connection: reads take them in order, writes go nowhere.
struct Replay<'a>(&'a [u8]);

impl io::Read for Replay<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl io::Write for Replay<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads `bytes` as what a console server sent on a session after the upgrade, the way a
/// live session reads it (the same message limits, the same meaning of each message): every
/// binary message is handed to `frame` in order (until it says false), and the session's end
/// comes back. For the fuzz targets, which drive the reader with hostile bytes.
#[doc(hidden)]
pub fn read_console(bytes: &[u8], mut frame: impl FnMut(Bytes) -> bool) -> End {
    let config = Handshake::new("").max_message(FRAME_LIMIT).config();
    let mut ws = WebSocket::from_raw_socket(
        Replay(bytes),
        tungstenite::protocol::Role::Client,
        Some(config),
    );
    loop {
        match step(ws.read(), false) {
            Step::Frame(b) => {
                if !frame(b) {
                    return End::Finished;
                }
            }
            Step::Ended(end) => return end,
            Step::Idle => {}
            // Bytes in memory never time out; this only guards the loop.
            Step::TimedOut => return End::Transport("timed out".into()),
        }
    }
}

/// After a failed write, reads on for at least [`CLOSE_WAIT`] (each read waits at most the
/// session's poll interval beyond it): a close code that judges a
/// frame of ours is what ended the session (T-3), whichever of the two was seen first;
/// otherwise the write's failure (`failed`) is. Frames read meanwhile are handed to `tell`
/// in order (at most [`CLOSE_WAIT_FRAMES`]); it says false when nobody takes them.
pub(crate) fn close_code_after<S: io::Read + io::Write>(
    ws: &mut WebSocket<S>,
    failed: End,
    mut tell: impl FnMut(Bytes) -> bool,
) -> End {
    let until = Instant::now() + CLOSE_WAIT;
    let mut frames = 0;
    while frames < CLOSE_WAIT_FRAMES && Instant::now() < until {
        match incoming(ws.read()) {
            Ok(Incoming::Binary(b)) => {
                frames += 1;
                if !tell(b) {
                    break;
                }
            }
            Ok(Incoming::Close(code)) => return after_failed_write(Some(close_end(code)), failed),
            Ok(Incoming::Control) | Err(ReadError::TimedOut) => {}
            _ => break,
        }
    }
    failed
}

fn write_end(e: WsError) -> End {
    match e {
        WsError::Io(e) if timed_out(&e) => End::Transport("write deadline passed".into()),
        e => End::Transport(format!("websocket: {e}")),
    }
}

/// Sets the deadline of the reads and writes that follow on `ws` to `d` from now.
fn within(ws: &mut WebSocket<Paced>, d: Duration) {
    ws.get_mut().until(Instant::now() + d);
}

/// Serves the session: each write of a frame (or of our close) is bounded as a whole by the
/// write deadline, and each read by the poll interval, not each system call under them: a
/// server trickling a frame (or a TLS record) a byte at a time cannot keep the thread from
/// writing what the driver queued or from hearing that the driver dropped the session, nor a
/// peer reading a trickle stretch a write past its deadline (T-8).
fn serve(d: &Dial, mut ws: WebSocket<Paced>, out: &mpsc::Receiver<Out>) -> End {
    // Once our close frame is out, the server's answer is awaited this long at most.
    let mut closing: Option<Instant> = None;
    let failed_write = |ws: &mut WebSocket<Paced>, e: WsError| {
        // The reads after it share one bound.
        within(ws, CLOSE_WAIT);
        close_code_after(ws, write_end(e), |b| d.tell(Event::Frame(b)))
    };
    loop {
        loop {
            match out.try_recv() {
                // Binary messages only (T-3).
                Ok(Out::Frame(f)) => {
                    within(&mut ws, d.write_timeout);
                    if let Err(e) = ws.send(Message::Binary(f)) {
                        return failed_write(&mut ws, e);
                    }
                }
                Ok(Out::Close) => {
                    if closing.is_none() {
                        within(&mut ws, d.write_timeout);
                        if let Err(e) = ws.close(None).and_then(|()| ws.flush()) {
                            return failed_write(&mut ws, e);
                        }
                        closing = Some(Instant::now() + d.write_timeout);
                    }
                }
                Err(mpsc::TryRecvError::Empty) => break,
                // The driver dropped the session: the socket goes without a clean end.
                Err(mpsc::TryRecvError::Disconnected) => {
                    return End::Transport("dropped by the driver".into())
                }
            }
        }
        within(&mut ws, d.poll_interval);
        match step(ws.read(), closing.is_some()) {
            Step::Frame(b) => {
                if !d.tell(Event::Frame(b)) {
                    return End::Finished;
                }
            }
            Step::Ended(end) => return end,
            Step::Idle => {}
            Step::TimedOut => {
                if closing.is_some_and(|t| Instant::now() >= t) {
                    return End::Finished;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use tungstenite::protocol::frame::coding::CloseCode;
    use tungstenite::protocol::{CloseFrame, Role};

    /// A client WebSocket over a real socket pair on 127.0.0.1, and its server end.
    fn pair() -> (WebSocket<TcpStream>, WebSocket<TcpStream>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        c.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        (
            WebSocket::from_raw_socket(c, Role::Client, None),
            WebSocket::from_raw_socket(s, Role::Server, None),
        )
    }

    fn failed() -> End {
        End::Transport("write failed".into())
    }

    fn close_with(server: &mut WebSocket<TcpStream>, code: u16) {
        server
            .close(Some(CloseFrame {
                code: CloseCode::from(code),
                reason: "".into(),
            }))
            .unwrap();
        server.flush().unwrap();
    }

    #[test]
    fn t_3_a_defect_close_code_read_after_a_failed_write_ends_the_session() {
        for code in [1003u16, 1007, 1008, 1009] {
            let (mut client, mut server) = pair();
            server
                .send(Message::Binary(Bytes::from_static(b"a")))
                .unwrap();
            close_with(&mut server, code);
            let mut got = Vec::new();
            let end = close_code_after(&mut client, failed(), |b| {
                got.push(b);
                true
            });
            assert_eq!(end, End::Defect(code));
            assert_eq!(got, vec![Bytes::from_static(b"a")], "passed on in order");
        }
    }

    #[test]
    fn t_3_any_other_close_after_a_failed_write_keeps_the_write_failure() {
        for code in [1000u16, 1001, 1011] {
            let (mut client, mut server) = pair();
            close_with(&mut server, code);
            assert_eq!(close_code_after(&mut client, failed(), |_| true), failed());
        }
        let (mut client, server) = pair();
        drop(server);
        assert_eq!(close_code_after(&mut client, failed(), |_| true), failed());
    }

    #[test]
    fn t_8_the_wait_for_a_close_code_after_a_failed_write_is_bounded() {
        let (mut client, _server) = pair();
        let started = Instant::now();
        assert_eq!(close_code_after(&mut client, failed(), |_| true), failed());
        let waited = started.elapsed();
        assert!(
            waited >= CLOSE_WAIT && waited < CLOSE_WAIT * 10,
            "{waited:?}"
        );
        // A peer that floods frames instead of closing is not waited for either.
        let (mut client, mut server) = pair();
        for _ in 0..CLOSE_WAIT_FRAMES + 10 {
            server
                .send(Message::Binary(Bytes::from_static(b"x")))
                .unwrap();
        }
        let mut n = 0;
        let end = close_code_after(&mut client, failed(), |_| {
            n += 1;
            true
        });
        assert_eq!(end, failed());
        assert_eq!(n, CLOSE_WAIT_FRAMES);
    }
}
