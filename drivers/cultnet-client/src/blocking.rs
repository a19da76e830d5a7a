//! The blocking client: one connection, one session, calls that return once their writes have
//! settled.
//!
//! A call registers its writes with the tracker, writes their frames by the write deadline,
//! then reads the connection until every one of them has settled: by an answer, by the end of
//! the session, or by the result window (5000 ms once the server's hello listed both receipt
//! frames, 500 ms otherwise), which the tracker judges from the clock reading the driver hands
//! it. A read never waits past the window of the write it waits for.

use std::io::{ErrorKind, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

use cultnet_receipts::frames::{Document, Frame};
use cultnet_receipts::tracker::{WriteHandle, WriteMode};
use sansio_kit::blocking::{left, open, read_step, time_left, Io};
use sansio_kit::resolve::ConnectError;

use crate::session::{client_hello_bytes, session_getters, Session};
use crate::{
    BatchFailure, BatchWrite, BatchWritten, ClientConfig, ClientError, Target, WriteFailure,
    Written,
};

/// A blocking CultNet client on one connection.
#[derive(Debug)]
pub struct Client {
    io: Io,
    config: ClientConfig,
    session: Session,
    read_buf: Vec<u8>,
}

fn timed_out(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Writes and flushes all of `bytes` by `deadline`: each system call may wait only for the time
/// left, so the deadline bounds the whole write.
fn write_by(io: &mut Io, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        io.tcp().set_write_timeout(Some(time_left(deadline)?))?;
        match io.write(bytes) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    io.tcp().set_write_timeout(Some(time_left(deadline)?))?;
    io.flush()
}

impl Client {
    /// Opens a connection to `target` within the configuration's connect deadline (lookup, TCP,
    /// TLS through `sansio-kit`), and sends the client's receipt hello by the same deadline.
    pub fn connect(target: &Target, config: ClientConfig) -> Result<Client, ClientError> {
        let deadline = Instant::now() + config.connect_timeout;
        let mut io = open(target, &config.resolver, config.tls.clone(), deadline)?;
        let mut hello_bytes = 0;
        if config.send_hello {
            let bytes = client_hello_bytes(&config)?;
            hello_bytes = bytes.len();
            left(deadline)?;
            // The connect deadline bounds the whole hello, not each system call: a peer that
            // reads a trickle cannot stretch the connect (the async client's bound, the same).
            write_by(&mut io, &bytes, deadline).map_err(|e| {
                if timed_out(e.kind()) {
                    ConnectError::TimedOut
                } else {
                    ConnectError::Connect(e)
                }
            })?;
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

    /// Puts `document` in `mode`; returns once it settled. There is no default mode (W-46):
    /// [`WriteMode::Receipt`] waits for the server's answer and settles admitted, refused or
    /// unconfirmed; [`WriteMode::SendOnly`] is the explicit opt-in of this one call and settles
    /// [`Outcome::Sent`](crate::Outcome::Sent) once the stream took the frame (written and
    /// flushed: the bytes left the client, which does not prove the server read them), never
    /// admitted (a refusal that arrives first still refuses it).
    pub fn put(&mut self, document: Document, mode: WriteMode) -> Result<Written, ClientError> {
        let h = self.write(vec![BatchWrite::Put(document)], mode)?;
        Ok(self.session.written(h[0]))
    }

    /// Deletes a record in `mode` (no default: see [`Client::put`]); returns once the delete
    /// settled.
    pub fn delete(
        &mut self,
        schema_id: &str,
        record_key: &str,
        mode: WriteMode,
    ) -> Result<Written, ClientError> {
        let h = self.write(
            vec![BatchWrite::Delete {
                schema_id: schema_id.to_owned(),
                record_key: record_key.to_owned(),
            }],
            mode,
        )?;
        Ok(self.session.written(h[0]))
    }

    /// Writes the members in `mode` (no default: see [`Client::put`]) as independent writes,
    /// each with its own messageId, and returns once every member settled. Nothing is atomic:
    /// some members may be admitted while others are not. Send-only members settle `sent`, and
    /// since none is admitted the batch's outcome is then unconfirmed, naming them. A batch of
    /// no members is refused ([`ClientError::EmptyBatch`]) and nothing is sent.
    pub fn batch(
        &mut self,
        members: Vec<BatchWrite>,
        mode: WriteMode,
    ) -> Result<BatchWritten, ClientError> {
        if members.is_empty() {
            return Err(ClientError::EmptyBatch);
        }
        let handles = self.write(members, mode)?;
        Ok(self.session.batch_written(&handles))
    }

    /// Resends an unconfirmed put under its original messageId on this session, with the same
    /// document (the tracker refuses other content, a write answered in time or late, and a
    /// write of an earlier session). A receipt server answers it from its table and does not
    /// apply it twice.
    pub fn resend_put(
        &mut self,
        handle: WriteHandle,
        document: Document,
    ) -> Result<Written, ClientError> {
        let frame = self.session.tracker.resend_put(handle, document)?;
        let h = self.resend(frame)?;
        Ok(self.session.written(h))
    }

    /// Resends an unconfirmed delete under its original messageId, on the terms of
    /// [`Client::resend_put`].
    pub fn resend_delete(&mut self, handle: WriteHandle) -> Result<Written, ClientError> {
        let frame = self.session.tracker.resend_delete(handle)?;
        let h = self.resend(frame)?;
        Ok(self.session.written(h))
    }

    fn resend(&mut self, (h, frame): (WriteHandle, Frame)) -> Result<WriteHandle, ClientError> {
        self.session.pin(h);
        let frames = [(h, frame)];
        let sent = self.send(&frames)?;
        self.wait(&[h], sent);
        Ok(h)
    }

    /// [`Client::put`] with receipts, in the throwing style: `Ok` only for admitted.
    pub fn put_admitted(&mut self, document: Document) -> Result<WriteHandle, WriteFailure> {
        self.put(document, WriteMode::Receipt)?.into_admitted()
    }

    /// [`Client::delete`] with receipts, in the throwing style: `Ok` only for admitted.
    pub fn delete_admitted(
        &mut self,
        schema_id: &str,
        record_key: &str,
    ) -> Result<WriteHandle, WriteFailure> {
        self.delete(schema_id, record_key, WriteMode::Receipt)?
            .into_admitted()
    }

    /// [`Client::batch`] with receipts, in the throwing style: `Ok` only when every member was admitted.
    pub fn batch_admitted(
        &mut self,
        members: Vec<BatchWrite>,
    ) -> Result<Vec<WriteHandle>, BatchFailure> {
        self.batch(members, WriteMode::Receipt)?.into_admitted()
    }

    /// Reads the connection for `duration` (or until the session ends), so answers arriving
    /// after their write settled are recorded as late on its state.
    pub fn pump_for(&mut self, duration: Duration) {
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
            self.read_once(until - now);
        }
    }

    /// Closes the connection; the session ends and anything unanswered is unconfirmed.
    pub fn close(&mut self) {
        let now = self.now();
        self.end(now);
    }

    /// Registers, sends and waits for the writes of one call.
    fn write(
        &mut self,
        members: Vec<BatchWrite>,
        mode: WriteMode,
    ) -> Result<Vec<WriteHandle>, ClientError> {
        let now = self.now();
        let frames = self.session.register(members, mode, now)?;
        let handles: Vec<WriteHandle> = frames.iter().map(|(h, _)| *h).collect();
        let sent = self.send(&frames)?;
        self.wait(&handles, sent);
        Ok(handles)
    }

    /// Writes the frames by the write deadline, which bounds the whole write (not each system
    /// call: a peer that reads a trickle cannot stretch it); returns the clock reading their
    /// windows run from, taken once the frames were written.
    fn send(&mut self, frames: &[(WriteHandle, Frame)]) -> Result<u64, ClientError> {
        let now = self.now();
        let bytes = self.session.wire_bytes(frames, now)?;
        if self.session.ended {
            // Sent after the session ended: the tracker settles each session_ended.
            self.session.sent(frames, now)?;
            return Ok(now);
        }
        let deadline = Instant::now() + self.config.write_timeout;
        let wrote = write_by(&mut self.io, &bytes, deadline);
        let now = self.now();
        match wrote {
            Ok(()) => {
                self.session.sent(frames, now)?;
                self.session.acknowledged(frames, bytes.len(), now);
            }
            Err(_) => {
                self.session.send_failed(frames, now);
                self.shutdown();
            }
        }
        Ok(now)
    }

    /// Reads until every write in `handles` has settled; no read waits past the window.
    fn wait(&mut self, handles: &[WriteHandle], sent: u64) {
        loop {
            let now = self.now();
            let Some(wait_ms) = self.session.next_wait(handles, sent, now) else {
                return;
            };
            self.read_once(wait_ms);
        }
    }

    /// One read of at most `wait_ms`; whatever arrives is fed to the session.
    fn read_once(&mut self, wait_ms: u64) {
        let timeout = Duration::from_millis(wait_ms.max(1));
        if self.io.tcp().set_read_timeout(Some(timeout)).is_err() {
            let now = self.now();
            self.end(now);
            return;
        }
        let mut buf = std::mem::take(&mut self.read_buf);
        let read = read_step(&mut self.io, &mut buf);
        let now = self.now();
        match read {
            Ok(0) => self.end(now),
            Ok(n) => {
                self.session.feed(&buf[..n], now);
                if self.session.ended {
                    self.shutdown();
                }
            }
            Err(e) if timed_out(e.kind()) || e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.end(now),
        }
        self.read_buf = buf;
    }

    fn shutdown(&mut self) {
        let _ = self.io.tcp().shutdown(Shutdown::Both);
    }

    fn end(&mut self, now: u64) {
        self.shutdown();
        self.session.end(now);
    }
}
