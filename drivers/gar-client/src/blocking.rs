//! The blocking client on std sockets: one thread per connection drives the engine (reads,
//! writes, timers); the application's calls queue messages on the engine and block, within
//! the call deadline, until the thread has written them.
//!
//! The thread reads with a short deadline ([`POLL`] at most, less when an engine timer is due
//! sooner), so what a call queued is written within that time. The deadline bounds each read
//! and each write as a whole, not each system call under it: a server trickling a message (or
//! a TLS record) a byte at a time cannot hold a read, nor a peer reading a trickle a write,
//! past it.

use std::net::Shutdown;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gar_client::{Client as Engine, UPGRADE_SUBPROTOCOL};
use sansio_kit::blocking::{open, websocket, Paced, WebSocket};
use sansio_kit::dial::Target;
use sansio_kit::ws::{timed_out, Handshake, HandshakeError, Message};
use tungstenite::Error as WsError;

use crate::core::Inner;
use crate::{
    ws_limit, Clock, Config, ConnectError, Error, Event, Ownership, RecordId, StopReason,
    Subscribe, Value,
};

/// The longest a read of the connection's thread waits before it looks at the engine again.
pub const POLL: Duration = Duration::from_millis(10);

#[derive(Debug)]
struct Shared {
    inner: Mutex<Inner>,
    /// Something the application may wait for changed: an event, a write, the end.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A guard for the connection's thread: when the thread ends without having ended the
    /// session (a panic), the session stops with `error` and the waiters wake.
    fn end_on_exit(&self) -> crate::core::OnExit<impl FnMut() + '_> {
        crate::core::OnExit(move || {
            self.lock().end_after_failure();
            self.changed.notify_all();
        })
    }
}

/// A blocking GAR client on one connection (one session).
///
/// Its methods take `&self`, so one client may be shared between threads (in an `Arc`).
/// Dropping it ends the session as [`Client::logoff`] does (a `Logoff`, then the close) and
/// joins the connection's thread.
#[derive(Debug)]
pub struct Client {
    shared: Arc<Shared>,
    call_timeout: Duration,
    thread: Option<JoinHandle<()>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

/// Sets the deadline of the reads and writes that follow on `ws`.
fn until(ws: &mut WebSocket<Paced>, deadline: Instant) {
    ws.get_mut().until(deadline);
}

fn upgrade(config: &Config) -> Result<WebSocket<Paced>, ConnectError> {
    let failed = |detail: String| ConnectError {
        reason: StopReason::ConnectFailed,
        detail: config.scrub(&detail),
    };
    let target = Target::parse(&config.url).map_err(|e| failed(format!("url: {e:?}")))?;
    let deadline = Instant::now() + config.connect_timeout;
    let io = open(&target, &config.resolver, config.tls.clone(), deadline)
        .map_err(|e| failed(format!("connect: {e}")))?;
    // The upgrade reads its answer until the headers end: the connect deadline bounds that
    // whole read, not each system call, so an answer trickled line by line cannot stretch it.
    let mut io = Paced::new(io);
    io.until(deadline);
    let hs = Handshake::new(config.upgrade_url())
        .subprotocol(UPGRADE_SUBPROTOCOL)
        .max_message(ws_limit(config));
    match websocket(io, &hs, deadline) {
        Ok((ws, Some(p))) if p == UPGRADE_SUBPROTOCOL => Ok(ws),
        Ok((_, p)) => Err(failed(format!("the server chose subprotocol {p:?}"))),
        Err(HandshakeError::Refused(401)) => Err(ConnectError {
            reason: StopReason::Unauthorized,
            detail: "the upgrade was refused with 401".into(),
        }),
        Err(e) => Err(failed(e.to_string())),
    }
}

impl Client {
    /// Connects to [`Config::url`] within [`Config::connect_timeout`] and starts a session:
    /// the Introduction is the first message written. The session runs on a thread of its
    /// own until it stops or the client is dropped.
    ///
    /// # Errors
    /// [`ConnectError`] with reason `unauthorized` for a 401 at the upgrade, `connect_failed`
    /// for anything else (refused, timed out, a failed handshake, another subprotocol).
    pub fn connect(config: Config) -> Result<Client, ConnectError> {
        tracing::info!(url = %config.redacted_url(), "gar connecting");
        let ws = match upgrade(&config) {
            Ok(ws) => ws,
            Err(e) => {
                tracing::warn!(reason = ?e.reason, detail = %e.detail, "gar connection failed");
                return Err(e);
            }
        };
        let clock = Clock(Instant::now());
        let mut engine = Engine::new(config.engine.clone());
        engine.start(clock.now(), config.uuid());
        tracing::info!(url = %config.redacted_url(), "gar session started");
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner::new(engine, clock)),
            changed: Condvar::new(),
        });
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, st, wt) = (shared.clone(), stop.clone(), config.write_timeout);
        let span = tracing::info_span!("gar_session", url = %config.redacted_url());
        let thread = std::thread::Builder::new()
            .name("gar-connection".into())
            .spawn(move || span.in_scope(|| run(ws, &s, &st, wt)))
            .map_err(|e| ConnectError {
                reason: StopReason::ConnectFailed,
                detail: format!("no thread for the connection: {e}"),
            })?;
        Ok(Client {
            shared,
            call_timeout: config.call_timeout,
            thread: Some(thread),
            stop,
        })
    }

    /// Blocks until `ready` says done (`Ok(true)`) or fails, within `limit`.
    fn wait_for(
        &self,
        limit: Duration,
        mut ready: impl FnMut(&mut Inner) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let deadline = Instant::now() + limit;
        let mut i = self.shared.lock();
        loop {
            if ready(&mut i)? {
                return Ok(());
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Err(Error::TimedOut);
            };
            i = self
                .shared
                .changed
                .wait_timeout(i, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn call<R>(
        &self,
        f: impl FnOnce(&mut Engine) -> Result<R, gar_client::CallError>,
    ) -> Result<R, Error> {
        let (r, target) = self.shared.lock().call(f)?;
        self.wait_for(self.call_timeout, |i| i.written_up_to(target))?;
        Ok(r)
    }

    /// The next event, waiting at most `limit`; `Ok(None)` once the session has ended and
    /// every event was taken (the last one is [`Event::Stopped`]).
    ///
    /// # Errors
    /// [`Error::TimedOut`] when no event came within `limit`.
    pub fn next_event(&self, limit: Duration) -> Result<Option<Event>, Error> {
        let mut out = None;
        self.wait_for(limit, |i| match i.next_event() {
            Ok(Some(e)) => {
                out = Some(e);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(()) => Ok(true),
        })?;
        Ok(out)
    }

    /// The events as an iterator, each waited for at most `limit`; it ends after
    /// [`Event::Stopped`] or when one wait passes its limit.
    pub fn events(&self, limit: Duration) -> impl Iterator<Item = Event> + '_ {
        std::iter::from_fn(move || self.next_event(limit).ok().flatten())
    }

    /// Subscribes.
    ///
    /// # Errors
    /// [`Error::Call`] when the engine refuses it (a duplicate name), [`Error::Stopped`],
    /// [`Error::TimedOut`].
    pub fn subscribe(&self, s: &Subscribe) -> Result<(), Error> {
        self.call(|e| e.subscribe(s))
    }

    /// Unsubscribes (a snapshot subscription only once `Finished`).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn unsubscribe(&self, name: &str) -> Result<(), Error> {
        self.call(|e| e.unsubscribe(name))
    }

    /// Changes a subscription's nagle interval.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn set_nagle_interval(&self, name: &str, nagle_interval: u64) -> Result<(), Error> {
        self.call(|e| e.set_nagle_interval(name, nagle_interval))
    }

    /// Introduces a topic name; returns its client id.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn introduce_topic(&self, name: &str) -> Result<u64, Error> {
        self.call(|e| e.introduce_topic(name))
    }

    /// Introduces a key in a class; returns its client id.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn introduce_key(&self, name: &str, class: &str) -> Result<u64, Error> {
        self.call(|e| e.introduce_key(name, class))
    }

    /// Writes a record under client ids (`tick_time` 0: the server stamps it).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn publish(&self, record_id: RecordId, value: &Value, tick_time: u64) -> Result<(), Error> {
        self.call(|e| e.publish(record_id, value, tick_time))
    }

    /// Writes a record by names: the key (in `class`) and the topic are introduced first when
    /// they are new. Returns the client-id address written.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn publish_by_name(
        &self,
        key: &str,
        class: &str,
        topic: &str,
        value: &Value,
    ) -> Result<RecordId, Error> {
        self.call(|e| {
            let record_id = RecordId {
                key_id: e.introduce_key(key, class)?,
                topic_id: e.introduce_topic(topic)?,
            };
            e.publish(record_id, value, 0)?;
            Ok(record_id)
        })
    }

    /// Deletes a record under client ids.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn delete_record(&self, record_id: RecordId, tick_time: u64) -> Result<(), Error> {
        self.call(|e| e.delete_record(record_id, tick_time))
    }

    /// Tears one class down from a key this client introduced; the remaining classes keep their
    /// records (a downgrade, G-36, G-37).
    ///
    /// # Errors
    /// As [`Client::subscribe`]; the engine's `UnknownKey` for a key or class not introduced.
    pub fn delete_class(&self, key: &str, class: &str) -> Result<(), Error> {
        self.call(|e| e.delete_class(key, class))
    }

    /// Asks the server to delete a whole key this client introduced (`DeleteKeyCommand`, G-38).
    ///
    /// # Errors
    /// As [`Client::subscribe`]; the engine's `UnknownKey` for a key not introduced.
    pub fn delete_key(&self, key: &str) -> Result<(), Error> {
        self.call(|e| e.delete_key(key))
    }

    /// Sends a compare-exchange; returns its msg_ref, which the [`Event::Compare`] answer
    /// carries.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn compare_exchange(
        &self,
        record_id: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, Error> {
        self.call(|e| e.compare_exchange(record_id, test, value))
    }

    /// A compare-exchange under an ownership marker (sent only when it conveys ownership).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn compare_exchange_owned(
        &self,
        ownership: &Ownership,
        record_id: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, Error> {
        self.call(|e| e.compare_exchange_owned(ownership, record_id, test, value))
    }

    /// Sends an `ActiveOwnership` marker for the writes that follow.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn active_ownership(&self, ownership: &Ownership) -> Result<(), Error> {
        self.call(|e| e.active_ownership(ownership))
    }

    /// Sends an echo; returns its msg_ref (its answer comes as [`Event::Echo`]).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub fn echo(&self) -> Result<u64, Error> {
        self.call(|e| e.echo())
    }

    /// The write barrier: sends an echo and returns once its answer arrived, so every write
    /// before it was processed by the server. The [`Event::Echo`] still reaches the events.
    ///
    /// # Errors
    /// [`Error::Stopped`] when the session ended first, [`Error::TimedOut`] past the call
    /// deadline.
    pub fn echo_barrier(&self) -> Result<(), Error> {
        let msg_ref = self.echo()?;
        self.wait_for(self.call_timeout, |i| i.echo_done(msg_ref))
    }

    /// Sends `Logoff`, ends the session (`stop`) and waits, within the call deadline, until
    /// the connection is closed.
    pub fn logoff(&self) {
        self.shared.lock().engine.logoff();
        let _ = self.wait_for(self.call_timeout, |i| Ok(i.ended));
    }

    crate::core::inner_getters!();
}

impl Drop for Client {
    /// The connection's thread ends within one [`POLL`] (plus a write deadline at worst).
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How long the thread waits for the server's answer to its close frame.
const CLOSE_WAIT: Duration = Duration::from_millis(500);

/// Writes and flushes `batch` by `deadline`. A write or flush that waited the socket's
/// timeout leaves its bytes with tungstenite, and flushing again goes on with them; the
/// messages after it are written once it went through.
fn write_batch(
    ws: &mut WebSocket<Paced>,
    batch: Vec<String>,
    deadline: Instant,
) -> Result<(), WsError> {
    until(ws, deadline);
    let retry = |mut r: Result<(), WsError>, ws: &mut WebSocket<Paced>| loop {
        match r {
            Err(WsError::Io(e)) if timed_out(&e) && Instant::now() < deadline => r = ws.flush(),
            r => return r,
        }
    };
    for t in batch {
        let r = ws.write(Message::text(t));
        retry(r, ws)?;
    }
    let r = ws.flush();
    retry(r, ws)
}

/// After a write failed: what the server sent before the connection went (above all an
/// `Error` saying why, such as its own heartbeat timeout) is read and handed to the engine,
/// within [`CLOSE_WAIT`], so it is reported rather than lost behind a bare disconnect (G-17).
fn read_what_came(ws: &mut WebSocket<Paced>, shared: &Shared) {
    let by = Instant::now() + CLOSE_WAIT;
    until(ws, by);
    while Instant::now() < by {
        let read = match ws.read() {
            Err(WsError::Io(e)) if timed_out(&e) => continue,
            Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => None,
            r => Some(r),
        };
        if shared.lock().on_read(read) {
            return;
        }
    }
}

/// Bounds the reads that follow on `ws` to `d` from now.
fn set_read_timeout(ws: &mut WebSocket<Paced>, d: Duration) {
    until(ws, Instant::now() + d.max(Duration::from_millis(1)));
}

/// The connection's thread: writes what the engine queued (by the write deadline), hands
/// every read to the engine, runs the engine's timers, and closes once it stopped.
fn run(
    mut ws: WebSocket<Paced>,
    shared: &Shared,
    stop: &std::sync::atomic::AtomicBool,
    write_timeout: Duration,
) {
    let _exit = shared.end_on_exit();
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            shared.lock().engine.logoff();
        }
        {
            let mut i = shared.lock();
            let now = i.now();
            if i.engine.poll_timeout().is_some_and(|d| d <= now) {
                i.engine.handle_timeout_at(now, crate::Clock::epoch_ms());
            }
        }
        // Taken with the engine's state under one lock: a stop (a Logoff queued by another
        // thread) seen here has its last messages in this batch, written before the close.
        let (batch, running) = {
            let mut i = shared.lock();
            (i.take_transmits(), i.engine.is_running())
        };
        if !batch.is_empty() {
            let n = batch.len() as u64;
            let wrote = write_batch(&mut ws, batch, Instant::now() + write_timeout);
            match wrote {
                Ok(()) => shared.lock().written += n,
                Err(e) => {
                    if matches!(&e, WsError::Io(e) if timed_out(e)) {
                        tracing::warn!(?write_timeout, "gar write deadline passed");
                    } else {
                        tracing::info!(error = %e, "gar write failed");
                    }
                    read_what_came(&mut ws, shared);
                    shared.lock().end();
                }
            }
            shared.changed.notify_all();
        }
        let (ended, wait) = {
            let i = shared.lock();
            let now = i.now();
            let wait = i.engine.poll_timeout().map_or(POLL, |d| {
                Duration::from_millis(d.saturating_sub(now)).min(POLL)
            });
            (i.ended, wait)
        };
        if ended {
            break;
        }
        if !running {
            let close_by = Instant::now() + CLOSE_WAIT;
            until(&mut ws, close_by);
            if ws
                .close(Some(tungstenite::protocol::CloseFrame {
                    code: 1000.into(),
                    reason: "".into(),
                }))
                .is_ok()
            {
                while Instant::now() < close_by {
                    // The close's reads share its deadline; a message still coming goes to
                    // the engine, which counts it (the session is over).
                    match ws.read() {
                        Err(WsError::Io(e)) if timed_out(&e) => {}
                        Err(_) => break,
                        Ok(m @ (Message::Text(_) | Message::Binary(_))) => {
                            shared.lock().on_read(Some(Ok(m)));
                        }
                        Ok(_) => {}
                    }
                }
            }
            break;
        }
        set_read_timeout(&mut ws, wait);
        let read = ws.read();
        let mut i = shared.lock();
        match read {
            // Nothing came: the timers are looked at on the next turn.
            Err(WsError::Io(e)) if timed_out(&e) => {}
            read => {
                let read = match read {
                    Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => None,
                    r => Some(r),
                };
                if i.on_read(read) {
                    drop(i);
                    // Let tungstenite answer a close before the socket goes.
                    until(&mut ws, Instant::now() + CLOSE_WAIT);
                    let _ = ws.flush();
                    shared.lock().end();
                    break;
                }
            }
        }
        drop(i);
        shared.changed.notify_all();
    }
    let _ = ws.get_ref().tcp().shutdown(Shutdown::Both);
    shared.lock().end();
    shared.changed.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Event, Violation};

    /// A client whose connection thread panics at once, with the guard `run` installs.
    fn client_with_dying_thread() -> Client {
        let mut engine = Engine::new(gar_client::Config::default());
        engine.start(0, (1, 2));
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner::new(engine, crate::Clock(Instant::now()))),
            changed: Condvar::new(),
        });
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            let _exit = s.end_on_exit();
            std::thread::sleep(Duration::from_millis(50));
            panic!("a bug in the connection thread");
        });
        Client {
            shared,
            call_timeout: Duration::from_secs(1),
            thread: Some(thread),
            stop: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        }
    }

    #[test]
    fn g_63_blocking_a_dead_connection_thread_stops_the_session() {
        let c = client_with_dying_thread();
        let first = c.next_event(Duration::from_secs(5)).unwrap();
        assert_eq!(
            first,
            Some(Event::Stopped {
                reason: StopReason::Error,
                violation: None::<Violation>,
            })
        );
        assert_eq!(c.next_event(Duration::from_secs(5)).unwrap(), None);
        assert!(c.is_closed());
        assert!(matches!(
            c.echo(),
            Err(Error::Stopped(Some(StopReason::Error)))
        ));
    }
}
