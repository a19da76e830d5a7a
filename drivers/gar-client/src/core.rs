//! What the tokio and the blocking client share: the engine behind a lock, the count of
//! messages taken from it and written, and the meaning of one WebSocket read for the engine.

use gar_client::{Client as Engine, Event};
use sansio_kit::ws::{incoming, Incoming, ReadError};
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::{Clock, Error};

/// The state the I/O loop and the application calls share.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) engine: Engine,
    pub(crate) clock: Clock,
    /// Messages taken from the engine for writing.
    pub(crate) taken: u64,
    /// Messages written and flushed to the socket.
    pub(crate) written: u64,
    /// The I/O loop has ended: the connection is gone.
    pub(crate) ended: bool,
}

impl Inner {
    pub(crate) fn new(engine: Engine, clock: Clock) -> Self {
        Inner {
            engine,
            clock,
            taken: 0,
            written: 0,
            ended: false,
        }
    }

    pub(crate) fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Every message the engine has queued, in order.
    pub(crate) fn take_transmits(&mut self) -> Vec<String> {
        let out: Vec<String> = std::iter::from_fn(|| self.engine.poll_transmit()).collect();
        self.taken += out.len() as u64;
        out
    }

    /// The count `written` must reach for everything queued so far to be on the socket.
    pub(crate) fn target(&self) -> u64 {
        self.taken + self.engine.stats().transmit_held
    }

    /// Runs an application call on the engine; a call on an ended session is refused.
    pub(crate) fn call<R>(
        &mut self,
        f: impl FnOnce(&mut Engine) -> Result<R, gar_client::CallError>,
    ) -> Result<(R, u64), Error> {
        if self.ended || !self.engine.is_running() {
            return Err(Error::Stopped(self.engine.stop_reason()));
        }
        let r = f(&mut self.engine)?;
        Ok((r, self.target()))
    }

    /// Whether a call waiting for `written` to reach `target` is done: `Ok(true)` when it was
    /// written, an error when the connection ended first.
    pub(crate) fn written_up_to(&self, target: u64) -> Result<bool, Error> {
        if self.written >= target {
            Ok(true)
        } else if self.ended {
            Err(Error::Stopped(self.engine.stop_reason()))
        } else {
            Ok(false)
        }
    }

    /// Whether echo `msg_ref` was answered; an error when the session ended first.
    pub(crate) fn echo_done(&self, msg_ref: u64) -> Result<bool, Error> {
        if self.engine.echo_answered(msg_ref) {
            Ok(true)
        } else if !self.engine.is_running() || self.ended {
            Err(Error::Stopped(self.engine.stop_reason()))
        } else {
            Ok(false)
        }
    }

    /// The next event; `Err(())` when none will come any more.
    pub(crate) fn next_event(&mut self) -> Result<Option<Event>, ()> {
        match self.engine.poll_event() {
            Some(e) => Ok(Some(e)),
            None if self.ended => Err(()),
            None => Ok(None),
        }
    }

    /// Hands one WebSocket read to the engine. Returns whether the connection is over (a
    /// close, a broken read).
    pub(crate) fn on_read(&mut self, read: Option<Result<Message, WsError>>) -> bool {
        let now = self.now();
        let read = match read {
            // The stream ended without a close frame: the TCP connection closed.
            None => {
                self.engine.handle_close(None);
                return true;
            }
            // A close frame whose body is one byte: tungstenite refuses it as a protocol error.
            Some(Err(WsError::Protocol(ProtocolError::InvalidCloseSequence))) => {
                self.engine.handle_malformed_close();
                return true;
            }
            Some(Err(e)) if is_framing_violation(&e) => {
                tracing::warn!(error = %e, "gar server broke the websocket framing");
                self.engine.handle_framing_error(e.to_string());
                return true;
            }
            Some(r) => r,
        };
        match incoming(read) {
            Ok(Incoming::Text(t)) => {
                tracing::trace!(bytes = t.len(), "gar message received");
                self.engine.handle_text(now, &t);
                false
            }
            Ok(Incoming::Binary(b)) => {
                self.engine.handle_binary(now, &b);
                false
            }
            Ok(Incoming::Close(code)) => {
                tracing::debug!(?code, "gar server closed the websocket");
                self.engine.handle_close(code);
                true
            }
            Ok(_) => false,
            Err(ReadError::TimedOut) => false,
            Err(ReadError::TooLarge) => {
                self.engine.handle_oversized();
                true
            }
            Err(e) => {
                tracing::info!(error = %e, "gar connection broke");
                self.engine.handle_close(None);
                true
            }
        }
    }

    /// The connection's task or thread is over without having ended the session (it died):
    /// the engine stops with `error` unless it stopped already, and the session is ended.
    pub(crate) fn end_after_failure(&mut self) {
        if self.ended {
            return;
        }
        tracing::error!("gar connection task ended abnormally: the session is stopped");
        self.engine.handle_driver_failure();
        self.ended = true;
    }

    /// The connection is gone: the engine stops (`disconnect` unless it stopped already).
    pub(crate) fn end(&mut self) {
        if self.ended {
            return;
        }
        self.engine.handle_close(None);
        self.ended = true;
        if let Some(reason) = self.engine.stop_reason() {
            tracing::info!(?reason, "gar connection closed");
        }
    }
}

/// Whether a read error is the server breaking the WebSocket rules (a typed violation), as
/// against the connection merely ending or failing (a disconnect).
fn is_framing_violation(e: &WsError) -> bool {
    match e {
        WsError::Utf8(_) | WsError::AttackAttempt => true,
        WsError::Protocol(p) => matches!(
            p,
            ProtocolError::ReceivedAfterClosing
                | ProtocolError::NonZeroReservedBits
                | ProtocolError::MaskedFrameFromServer
                | ProtocolError::FragmentedControlFrame
                | ProtocolError::ControlFrameTooBig
                | ProtocolError::UnknownControlFrameType(_)
                | ProtocolError::UnknownDataFrameType(_)
                | ProtocolError::UnexpectedContinueFrame
                | ProtocolError::ExpectedFragment(_)
                | ProtocolError::InvalidOpcode(_)
        ),
        _ => false,
    }
}

/// Runs its closure when dropped: at the end of a connection's task or thread, however it ends
/// (a return, a panic, the task dropped), so the session is always marked ended and every waiter
/// is woken.
pub(crate) struct OnExit<F: FnMut()>(pub(crate) F);

impl<F: FnMut()> Drop for OnExit<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

/// The getters both clients have over their shared engine state (`self.shared.lock()` gives the
/// [`Inner`] of either): written once, expanded in each client's `impl`.
macro_rules! inner_getters {
    () => {
        /// The engine's statistics.
        #[must_use]
        pub fn stats(&self) -> crate::Stats {
            self.shared.lock().engine.stats()
        }

        /// Why the session stopped, once it did.
        #[must_use]
        pub fn stop_reason(&self) -> Option<crate::StopReason> {
            self.shared.lock().engine.stop_reason()
        }

        /// Whether the session ended by the server's `Logoff`.
        #[must_use]
        pub fn server_logoff(&self) -> bool {
            self.shared.lock().engine.server_logoff()
        }

        /// Whether the connection is gone.
        #[must_use]
        pub fn is_closed(&self) -> bool {
            self.shared.lock().ended
        }

        /// The cached record at a server-id address.
        #[must_use]
        pub fn record(&self, record_id: crate::RecordId) -> Option<crate::Record> {
            self.shared.lock().engine.record(record_id).cloned()
        }

        /// The name of a server topic id.
        #[must_use]
        pub fn server_topic(&self, topic_id: u64) -> Option<String> {
            self.shared
                .lock()
                .engine
                .server_topic(topic_id)
                .map(str::to_string)
        }

        /// The name of a server key id.
        #[must_use]
        pub fn server_key(&self, key_id: u64) -> Option<String> {
            self.shared
                .lock()
                .engine
                .server_key(key_id)
                .map(|(n, _)| n.to_string())
        }
    };
}
pub(crate) use inner_getters;
