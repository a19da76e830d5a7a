//! The async client on tokio: one task per connection drives the engine (reads, writes,
//! timers); the application's calls queue messages on the engine and wait, within the call
//! deadline, until the task has written them.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, Stream, StreamExt};
use gar_client::{Client as Engine, UPGRADE_SUBPROTOCOL};
use sansio_kit::dial::Target;
use sansio_kit::tokio::{open, websocket, AbortOnDrop, Io, TlsConnector, WebSocketStream};
use sansio_kit::ws::{Handshake, HandshakeError, Message};
use tokio::sync::Notify;
use tokio::time::{sleep_until, timeout, timeout_at};

use crate::core::Inner;
use crate::{
    ws_limit, Clock, Config, ConnectError, Error, Event, Ownership, RecordId, StopReason,
    Subscribe, Value,
};

#[derive(Debug)]
struct Shared {
    inner: Mutex<Inner>,
    /// Something the application may wait for changed: an event, a write, the end.
    changed: Notify,
    /// The application queued messages for the task to write.
    wake: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A guard for the connection's task: when the task ends without having ended the session (a
/// panic), the session stops with `error` and the waiters wake. A task aborted because its
/// client was dropped has no one left to tell, and is passed over.
fn end_on_exit(shared: &Arc<Shared>) -> crate::core::OnExit<impl FnMut() + '_> {
    crate::core::OnExit(move || {
        if Arc::strong_count(shared) == 1 {
            return;
        }
        shared.lock().end_after_failure();
        shared.changed.notify_waiters();
    })
}

/// An async GAR client on one connection (one session).
///
/// Its methods take `&self`, so one client may be shared between tasks (in an `Arc`).
/// Dropping it stops the connection's task and closes the socket without a `Logoff`; call
/// [`Client::logoff`] first for a graceful end.
#[derive(Debug)]
pub struct Client {
    shared: Arc<Shared>,
    call_timeout: Duration,
    _task: AbortOnDrop,
}

/// Opens the byte stream and upgrades it, by the connect deadline.
async fn upgrade(config: &Config) -> Result<WebSocketStream<Io>, ConnectError> {
    let failed = |detail: String| ConnectError {
        reason: StopReason::ConnectFailed,
        detail: config.scrub(&detail),
    };
    let target = Target::parse(&config.url).map_err(|e| failed(format!("url: {e:?}")))?;
    let deadline = tokio::time::Instant::now() + config.connect_timeout;
    let tls = config.tls.clone().map(TlsConnector::from);
    let opened = timeout_at(deadline, async {
        let io = open(&target, &config.resolver, tls.as_ref())
            .await
            .map_err(|e| failed(format!("connect: {e}")))?;
        let hs = Handshake::new(config.upgrade_url())
            .subprotocol(UPGRADE_SUBPROTOCOL)
            .max_message(ws_limit(config));
        match websocket(io, &hs).await {
            Ok((ws, Some(p))) if p == UPGRADE_SUBPROTOCOL => Ok(ws),
            Ok((_, p)) => Err(failed(format!("the server chose subprotocol {p:?}"))),
            Err(HandshakeError::Refused(401)) => Err(ConnectError {
                reason: StopReason::Unauthorized,
                detail: "the upgrade was refused with 401".into(),
            }),
            Err(e) => Err(failed(e.to_string())),
        }
    })
    .await;
    opened.unwrap_or_else(|_| Err(failed("the connection deadline passed".into())))
}

impl Client {
    /// Connects to [`Config::url`] within [`Config::connect_timeout`] and starts a session:
    /// the Introduction is the first message written. The session runs on a task of the
    /// current runtime until it stops or the client is dropped.
    ///
    /// # Errors
    /// [`ConnectError`] with reason `unauthorized` for a 401 at the upgrade, `connect_failed`
    /// for anything else (refused, timed out, a failed handshake, another subprotocol).
    pub async fn connect(config: Config) -> Result<Client, ConnectError> {
        tracing::info!(url = %config.redacted_url(), "gar connecting");
        let ws = match upgrade(&config).await {
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
            changed: Notify::new(),
            wake: Notify::new(),
        });
        let span = tracing::info_span!("gar_session", url = %config.redacted_url());
        let task = tokio::spawn(tracing::Instrument::instrument(
            run(ws, shared.clone(), config.write_timeout),
            span,
        ));
        Ok(Client {
            shared,
            call_timeout: config.call_timeout,
            _task: AbortOnDrop(task),
        })
    }

    /// Waits until `ready` says done (`Ok(true)`) or fails, within `limit`.
    async fn wait_for(
        &self,
        limit: Duration,
        mut ready: impl FnMut(&mut Inner) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if ready(&mut self.shared.lock())? {
                return Ok(());
            }
            if timeout_at(deadline, notified).await.is_err() {
                return Err(Error::TimedOut);
            }
        }
    }

    /// Runs `f` on the engine and waits until what it queued is written.
    async fn call<R>(
        &self,
        f: impl FnOnce(&mut Engine) -> Result<R, gar_client::CallError>,
    ) -> Result<R, Error> {
        let (r, target) = self.shared.lock().call(f)?;
        self.shared.wake.notify_one();
        self.wait_for(self.call_timeout, |i| i.written_up_to(target))
            .await?;
        Ok(r)
    }

    /// The next event; None once the session has ended and every event was taken (the last
    /// one is [`Event::Stopped`]). The wait ends at the latest when the session does, which
    /// the engine's liveness timer bounds.
    pub async fn next_event(&self) -> Option<Event> {
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.shared.lock().next_event() {
                Ok(Some(e)) => return Some(e),
                Ok(None) => {}
                Err(()) => return None,
            }
            notified.await;
        }
    }

    /// [`Client::next_event`] waiting at most `limit`: `Err(Error::TimedOut)` when nothing came.
    ///
    /// # Errors
    /// [`Error::TimedOut`] when no event came within `limit`.
    pub async fn next_event_within(&self, limit: Duration) -> Result<Option<Event>, Error> {
        timeout(limit, self.next_event())
            .await
            .map_err(|_| Error::TimedOut)
    }

    /// The events as a stream, ending after [`Event::Stopped`].
    pub fn events(&self) -> impl Stream<Item = Event> + '_ {
        futures_util::stream::unfold(
            self,
            |c| async move { c.next_event().await.map(|e| (e, c)) },
        )
    }

    /// Subscribes.
    ///
    /// # Errors
    /// [`Error::Call`] when the engine refuses it (a duplicate name), [`Error::Stopped`],
    /// [`Error::TimedOut`].
    pub async fn subscribe(&self, s: &Subscribe) -> Result<(), Error> {
        self.call(|e| e.subscribe(s)).await
    }

    /// Unsubscribes (a snapshot subscription only once `Finished`).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn unsubscribe(&self, name: &str) -> Result<(), Error> {
        self.call(|e| e.unsubscribe(name)).await
    }

    /// Changes a subscription's nagle interval.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn set_nagle_interval(&self, name: &str, nagle_interval: u64) -> Result<(), Error> {
        self.call(|e| e.set_nagle_interval(name, nagle_interval))
            .await
    }

    /// Introduces a topic name; returns its client id.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn introduce_topic(&self, name: &str) -> Result<u64, Error> {
        self.call(|e| e.introduce_topic(name)).await
    }

    /// Introduces a key in a class; returns its client id.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn introduce_key(&self, name: &str, class: &str) -> Result<u64, Error> {
        self.call(|e| e.introduce_key(name, class)).await
    }

    /// Writes a record under client ids (`tick_time` 0: the server stamps it).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn publish(
        &self,
        record_id: RecordId,
        value: &Value,
        tick_time: u64,
    ) -> Result<(), Error> {
        self.call(|e| e.publish(record_id, value, tick_time)).await
    }

    /// Writes a record by names: the key (in `class`) and the topic are introduced first when
    /// they are new. Returns the client-id address written.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn publish_by_name(
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
        .await
    }

    /// Deletes a record under client ids.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn delete_record(&self, record_id: RecordId, tick_time: u64) -> Result<(), Error> {
        self.call(|e| e.delete_record(record_id, tick_time)).await
    }

    /// Tears one class down from a key this client introduced; the remaining classes keep their
    /// records (a downgrade, G-36, G-37).
    ///
    /// # Errors
    /// As [`Client::subscribe`]; the engine's `UnknownKey` for a key or class not introduced.
    pub async fn delete_class(&self, key: &str, class: &str) -> Result<(), Error> {
        self.call(|e| e.delete_class(key, class)).await
    }

    /// Asks the server to delete a whole key this client introduced (`DeleteKeyCommand`, G-38).
    ///
    /// # Errors
    /// As [`Client::subscribe`]; the engine's `UnknownKey` for a key not introduced.
    pub async fn delete_key(&self, key: &str) -> Result<(), Error> {
        self.call(|e| e.delete_key(key)).await
    }

    /// Sends a compare-exchange; returns its msg_ref, which the [`Event::Compare`] answer
    /// carries.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn compare_exchange(
        &self,
        record_id: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, Error> {
        self.call(|e| e.compare_exchange(record_id, test, value))
            .await
    }

    /// A compare-exchange under an ownership marker (sent only when it conveys ownership).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn compare_exchange_owned(
        &self,
        ownership: &Ownership,
        record_id: RecordId,
        test: &Value,
        value: &Value,
    ) -> Result<u64, Error> {
        self.call(|e| e.compare_exchange_owned(ownership, record_id, test, value))
            .await
    }

    /// Sends an `ActiveOwnership` marker for the writes that follow.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn active_ownership(&self, ownership: &Ownership) -> Result<(), Error> {
        self.call(|e| e.active_ownership(ownership)).await
    }

    /// Sends an echo; returns its msg_ref (its answer comes as [`Event::Echo`]).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn echo(&self) -> Result<u64, Error> {
        self.call(|e| e.echo()).await
    }

    /// The write barrier: sends an echo and returns once its answer arrived, so every write
    /// before it was processed by the server. The [`Event::Echo`] still reaches the events.
    ///
    /// # Errors
    /// [`Error::Stopped`] when the session ended first, [`Error::TimedOut`] past the call
    /// deadline.
    pub async fn echo_barrier(&self) -> Result<(), Error> {
        let msg_ref = self.echo().await?;
        self.wait_for(self.call_timeout, |i| i.echo_done(msg_ref))
            .await
    }

    /// Sends `Logoff`, ends the session (`stop`) and waits, within the call deadline, until
    /// the connection is closed.
    pub async fn logoff(&self) {
        {
            let mut i = self.shared.lock();
            i.engine.logoff();
        }
        self.shared.wake.notify_one();
        let _ = self.wait_for(self.call_timeout, |i| Ok(i.ended)).await;
    }

    crate::core::inner_getters!();
}

/// How long the task waits for the server's answer to its close frame.
const CLOSE_WAIT: Duration = Duration::from_millis(500);

/// After a write failed: what the server sent before the connection went (above all an
/// `Error` saying why, such as its own heartbeat timeout) is read and handed to the engine,
/// within [`CLOSE_WAIT`], so it is reported rather than lost behind a bare disconnect (G-17).
async fn read_what_came(ws: &mut WebSocketStream<Io>, shared: &Shared) {
    let _ = timeout(CLOSE_WAIT, async {
        loop {
            let read = ws.next().await;
            if shared.lock().on_read(read) {
                return;
            }
        }
    })
    .await;
}

/// The connection's task: writes what the engine queued (each batch by the write deadline),
/// hands every read to the engine, runs the engine's timers, and closes once it stopped.
async fn run(mut ws: WebSocketStream<Io>, shared: Arc<Shared>, write_timeout: Duration) {
    let _exit = end_on_exit(&shared);
    loop {
        // Taken with the engine's state under one lock: a stop (a Logoff queued by another
        // task) seen here has its last messages in this batch, written before the close.
        let (batch, running) = {
            let mut i = shared.lock();
            (i.take_transmits(), i.engine.is_running())
        };
        if !batch.is_empty() {
            let n = batch.len() as u64;
            let wrote = timeout(write_timeout, async {
                for t in batch {
                    ws.feed(Message::text(t)).await?;
                }
                ws.flush().await
            })
            .await;
            match wrote {
                Ok(Ok(())) => shared.lock().written += n,
                failed => {
                    match failed {
                        Ok(Err(e)) => tracing::info!(error = %e, "gar write failed"),
                        _ => tracing::warn!(?write_timeout, "gar write deadline passed"),
                    }
                    read_what_came(&mut ws, &shared).await;
                    shared.lock().end();
                }
            }
            shared.changed.notify_waiters();
        }
        let (ended, deadline, clock) = {
            let i = shared.lock();
            (i.ended, i.engine.poll_timeout(), i.clock)
        };
        if ended {
            break;
        }
        if !running {
            // Stopped: a close of ours (answered or not within a short wait), then the end.
            let _ = timeout(CLOSE_WAIT, async {
                ws.send(sansio_kit::ws::close(Some(1000))).await?;
                // A message still coming goes to the engine, which counts it (the session
                // is over).
                while let Some(read) = ws.next().await {
                    if let Ok(m @ (Message::Text(_) | Message::Binary(_))) = read {
                        shared.lock().on_read(Some(Ok(m)));
                    }
                }
                Ok::<(), tokio_tungstenite::tungstenite::Error>(())
            })
            .await;
            break;
        }
        let at = deadline.map_or_else(
            || tokio::time::Instant::now() + Duration::from_secs(3600),
            |d| tokio::time::Instant::from_std(clock.0 + Duration::from_millis(d)),
        );
        tokio::select! {
            read = ws.next() => {
                let over = shared.lock().on_read(read);
                if over {
                    // Let tungstenite answer a close before the socket goes.
                    let _ = timeout(CLOSE_WAIT, ws.flush()).await;
                    shared.lock().end();
                }
            }
            () = sleep_until(at) => {
                let mut i = shared.lock();
                let now = i.now();
                i.engine.handle_timeout_at(now, crate::Clock::epoch_ms());
            }
            () = shared.wake.notified() => {}
        }
        shared.changed.notify_waiters();
    }
    shared.lock().end();
    shared.changed.notify_waiters();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Event, Violation};

    #[tokio::test]
    async fn g_63_a_dead_connection_task_stops_the_session() {
        let mut engine = Engine::new(gar_client::Config::default());
        engine.start(0, (1, 2));
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner::new(engine, crate::Clock(Instant::now()))),
            changed: Notify::new(),
            wake: Notify::new(),
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            let _exit = end_on_exit(&s);
            tokio::time::sleep(Duration::from_millis(50)).await;
            panic!("a bug in the connection task");
        });
        let c = Client {
            shared,
            call_timeout: Duration::from_secs(1),
            _task: AbortOnDrop(task),
        };
        let first = c.next_event_within(Duration::from_secs(5)).await.unwrap();
        assert_eq!(
            first,
            Some(Event::Stopped {
                reason: StopReason::Error,
                violation: None::<Violation>,
            })
        );
        assert_eq!(
            c.next_event_within(Duration::from_secs(5)).await.unwrap(),
            None
        );
        assert!(c.is_closed());
    }
}
