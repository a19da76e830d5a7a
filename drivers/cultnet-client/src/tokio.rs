//! The async client on tokio, of the same shape as the blocking one: one connection, one
//! session, calls that complete once their writes have settled. Every wait is bounded the same
//! way: the connect deadline, the write deadline, and the result window of the writes waited
//! for, judged by the tracker from the [`Clock`] reading the driver hands it.

use std::sync::Arc;
use std::time::Duration;

use cultnet_receipts::frames::{Document, Frame};
use cultnet_receipts::tracker::{WriteHandle, WriteMode};
use sansio_kit::resolve::ConnectError;
use sansio_kit::tokio::{open_by, Io, TlsConnector};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{timeout, timeout_at, Instant};

use crate::session::{client_hello_bytes, session_getters, Session};
use crate::{
    BatchFailure, BatchWrite, BatchWritten, ClientConfig, ClientError, Clock, Target, WriteFailure,
    Written,
};

/// Settles a call's writes if its future is dropped while their frames are being written.
struct CancelGuard<'a> {
    session: &'a mut Session,
    frames: &'a [(WriteHandle, Frame)],
    clock: &'a Arc<dyn Clock>,
    armed: bool,
}

impl Drop for CancelGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let now = self.clock.now_ms();
            self.session.send_failed(self.frames, now);
        }
    }
}

/// An async CultNet client on one connection. Its calls may be cancelled (their futures
/// dropped): a call dropped while writing settles its writes unconfirmed (`local_send_failed`)
/// and ends the session; one dropped while waiting for answers leaves its writes to settle by
/// their window on a later call.
#[derive(Debug)]
pub struct Client {
    io: Io,
    config: ClientConfig,
    session: Session,
    read_buf: Vec<u8>,
}

impl Client {
    /// Opens a connection to `target` within the configuration's connect deadline (lookup, TCP,
    /// TLS through `sansio-kit`), and sends the client's receipt hello by the same deadline.
    pub async fn connect(target: &Target, config: ClientConfig) -> Result<Client, ClientError> {
        let deadline = Instant::now() + config.connect_timeout;
        let connector = config.tls.clone().map(TlsConnector::from);
        let mut io = open_by(deadline, target, &config.resolver, connector.as_ref()).await?;
        let mut hello_bytes = 0;
        if config.send_hello {
            let bytes = client_hello_bytes(&config)?;
            hello_bytes = bytes.len();
            let wrote = timeout_at(deadline, async {
                io.write_all(&bytes).await?;
                io.flush().await
            })
            .await;
            match wrote {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(ConnectError::Connect(e).into()),
                Err(_) => return Err(ConnectError::TimedOut.into()),
            }
        }
        let session = Session::new(&config, hello_bytes);
        Ok(Client {
            io,
            config,
            session,
            read_buf: vec![0; 16 * 1024],
        })
    }

    fn now(&self) -> u64 {
        self.config.clock.now_ms()
    }

    session_getters!();

    /// Puts `document` in `mode`; completes once it settled. There is no default mode (W-46):
    /// [`WriteMode::Receipt`] waits for the server's answer and settles admitted, refused or
    /// unconfirmed; [`WriteMode::SendOnly`] is the explicit opt-in of this one call and settles
    /// [`Outcome::Sent`](crate::Outcome::Sent) once the stream took the frame (written and
    /// flushed: the bytes left the client, which does not prove the server read them), never
    /// admitted (a refusal that arrives first still refuses it).
    pub async fn put(
        &mut self,
        document: Document,
        mode: WriteMode,
    ) -> Result<Written, ClientError> {
        let h = self.write(vec![BatchWrite::Put(document)], mode).await?;
        Ok(self.session.written(h[0]))
    }

    /// Deletes a record in `mode` (no default: see [`Client::put`]); completes once the delete
    /// settled.
    pub async fn delete(
        &mut self,
        schema_id: &str,
        record_key: &str,
        mode: WriteMode,
    ) -> Result<Written, ClientError> {
        let h = self
            .write(
                vec![BatchWrite::Delete {
                    schema_id: schema_id.to_owned(),
                    record_key: record_key.to_owned(),
                }],
                mode,
            )
            .await?;
        Ok(self.session.written(h[0]))
    }

    /// Writes the members in `mode` (no default: see [`Client::put`]) as independent writes,
    /// each with its own messageId, and completes once every member settled. Nothing is atomic:
    /// some members may be admitted while others are not. Send-only members settle `sent`, and
    /// since none is admitted the batch's outcome is then unconfirmed, naming them. A batch of
    /// no members is refused ([`ClientError::EmptyBatch`]) and nothing is sent.
    pub async fn batch(
        &mut self,
        members: Vec<BatchWrite>,
        mode: WriteMode,
    ) -> Result<BatchWritten, ClientError> {
        if members.is_empty() {
            return Err(ClientError::EmptyBatch);
        }
        let handles = self.write(members, mode).await?;
        Ok(self.session.batch_written(&handles))
    }

    /// Resends an unconfirmed put under its original messageId on this session, with the same
    /// document; the tracker refuses anything else (see the blocking client's `resend_put`).
    pub async fn resend_put(
        &mut self,
        handle: WriteHandle,
        document: Document,
    ) -> Result<Written, ClientError> {
        let frame = self.session.tracker.resend_put(handle, document)?;
        let h = self.resend(frame).await?;
        Ok(self.session.written(h))
    }

    /// Resends an unconfirmed delete under its original messageId on this session.
    pub async fn resend_delete(&mut self, handle: WriteHandle) -> Result<Written, ClientError> {
        let frame = self.session.tracker.resend_delete(handle)?;
        let h = self.resend(frame).await?;
        Ok(self.session.written(h))
    }

    async fn resend(
        &mut self,
        (h, frame): (WriteHandle, Frame),
    ) -> Result<WriteHandle, ClientError> {
        self.session.pin(h);
        let frames = [(h, frame)];
        let sent = self.send(&frames).await?;
        self.wait(&[h], sent).await;
        Ok(h)
    }

    /// [`Client::put`] with receipts, in the throwing style: `Ok` only for admitted.
    pub async fn put_admitted(&mut self, document: Document) -> Result<WriteHandle, WriteFailure> {
        self.put(document, WriteMode::Receipt)
            .await?
            .into_admitted()
    }

    /// [`Client::delete`] with receipts, in the throwing style: `Ok` only for admitted.
    pub async fn delete_admitted(
        &mut self,
        schema_id: &str,
        record_key: &str,
    ) -> Result<WriteHandle, WriteFailure> {
        self.delete(schema_id, record_key, WriteMode::Receipt)
            .await?
            .into_admitted()
    }

    /// [`Client::batch`] with receipts, in the throwing style: `Ok` only when every member was admitted.
    pub async fn batch_admitted(
        &mut self,
        members: Vec<BatchWrite>,
    ) -> Result<Vec<WriteHandle>, BatchFailure> {
        self.batch(members, WriteMode::Receipt)
            .await?
            .into_admitted()
    }

    /// Reads the connection for `duration` (or until the session ends), so late answers are
    /// recorded on their writes' states.
    pub async fn pump_for(&mut self, duration: Duration) {
        let until = self
            .now()
            .saturating_add(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX));
        loop {
            let now = self.now();
            self.session.tracker.on_tick(now);
            self.session.drain_settled();
            if self.session.ended || now >= until {
                return;
            }
            self.read_once(until - now).await;
        }
    }

    /// Closes the connection; the session ends and anything unanswered is unconfirmed.
    pub async fn close(&mut self) {
        let _ = timeout(self.config.write_timeout, self.io.shutdown()).await;
        let now = self.now();
        self.session.end(now);
    }

    async fn write(
        &mut self,
        members: Vec<BatchWrite>,
        mode: WriteMode,
    ) -> Result<Vec<WriteHandle>, ClientError> {
        let now = self.now();
        let frames = self.session.register(members, mode, now)?;
        let handles: Vec<WriteHandle> = frames.iter().map(|(h, _)| *h).collect();
        let sent = self.send(&frames).await?;
        self.wait(&handles, sent).await;
        Ok(handles)
    }

    /// Reads until every write in `handles` has settled; no read waits past the window.
    async fn wait(&mut self, handles: &[WriteHandle], sent: u64) {
        loop {
            let now = self.now();
            let Some(wait_ms) = self.session.next_wait(handles, sent, now) else {
                return;
            };
            self.read_once(wait_ms).await;
        }
    }

    async fn send(&mut self, frames: &[(WriteHandle, Frame)]) -> Result<u64, ClientError> {
        let now = self.now();
        let bytes = self.session.wire_bytes(frames, now)?;
        if self.session.ended {
            self.session.sent(frames, now)?;
            return Ok(now);
        }
        // Should this future be dropped while the frames are being written, the guard settles
        // them local_send_failed and ends the session (a partly written frame breaks the
        // stream), so no write stays registered and nothing more is written after it.
        let mut guard = CancelGuard {
            session: &mut self.session,
            frames,
            clock: &self.config.clock,
            armed: true,
        };
        let io = &mut self.io;
        let wrote = timeout(self.config.write_timeout, async {
            io.write_all(&bytes).await?;
            io.flush().await
        })
        .await;
        guard.armed = false;
        drop(guard);
        // The result window runs from here, once the frames were written.
        let now = self.now();
        if let Ok(Ok(())) = wrote {
            self.session.sent(frames, now)?;
            self.session.acknowledged(frames, bytes.len(), now);
        } else {
            // Failed or past the write deadline: unconfirmed (local_send_failed), session over.
            self.session.send_failed(frames, now);
            self.close_io().await;
        }
        Ok(now)
    }

    /// The session is over: the connection is shut at once, as the blocking client shuts its
    /// socket, so the peer sees it closed even while this client lives on. One attempt, no
    /// wait: a plain socket shuts at once, and a TLS close_notify that cannot be written now
    /// is not waited for.
    async fn close_io(&mut self) {
        let _ = timeout(Duration::ZERO, self.io.shutdown()).await;
    }

    async fn read_once(&mut self, wait_ms: u64) {
        let mut buf = std::mem::take(&mut self.read_buf);
        let read = timeout(
            Duration::from_millis(wait_ms.max(1)),
            self.io.read(&mut buf),
        )
        .await;
        let now = self.now();
        match read {
            Err(_) => {}
            Ok(Ok(0)) | Ok(Err(_)) => self.session.end(now),
            Ok(Ok(n)) => self.session.feed(&buf[..n], now),
        }
        self.read_buf = buf;
        if self.session.ended {
            self.close_io().await;
        }
    }
}
