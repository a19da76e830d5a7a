//! The blocking client: one connection, one session, calls that return once their writes have
//! settled.
//!
//! A call registers its writes with the tracker, writes their frames by the write deadline,
//! then reads the connection until every one of them has settled: by an answer, by the end of
//! the session, or by the result window (5000 ms once the server's hello listed both receipt
//! frames, 500 ms otherwise), which the tracker judges from the clock reading the driver hands
//! it. A read never waits past the window of the write it waits for.

use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

use cultnet_receipts::frames::{
    Document, Frame, Hello, DOCUMENT_DELETE_V0, DOCUMENT_PUT_V0, ERROR_V0, ERROR_V1,
    WRITE_ADMITTED_V0,
};
use cultnet_receipts::framing::{encode_frame, FrameDecoder};
use cultnet_receipts::tracker::{
    TrackerCounters, WriteHandle, WriteMode, WriteState, WriteTracker,
};
use cultnet_receipts::{decode, encode};
use sansio_kit::blocking::{open, Io};

use crate::{
    BatchFailure, BatchWrite, BatchWritten, ClientConfig, ClientError, Target, TransportCounters,
    Violation, WriteFailure, Written,
};

/// A blocking CultNet client on one connection.
#[derive(Debug)]
pub struct Client {
    io: Io,
    config: ClientConfig,
    tracker: WriteTracker,
    decoder: FrameDecoder,
    ended: bool,
    violation: Option<Violation>,
    counters: TransportCounters,
    read_buf: Vec<u8>,
}

/// The hello a receipt-capable client sends before its first write.
fn client_hello(runtime_id: &str) -> Hello {
    Hello {
        runtime_id: runtime_id.to_owned(),
        runtime_kind: "client".to_owned(),
        supported_message_versions: Some(
            [
                DOCUMENT_PUT_V0,
                DOCUMENT_DELETE_V0,
                ERROR_V0,
                ERROR_V1,
                WRITE_ADMITTED_V0,
            ]
            .map(str::to_owned)
            .to_vec(),
        ),
        ..Hello::default()
    }
}

fn timed_out(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

impl Client {
    /// Opens a connection to `target` within the configuration's connect deadline (lookup, TCP,
    /// TLS through `sansio-kit`), and sends the client's receipt hello by the same deadline.
    pub fn connect(target: &Target, config: ClientConfig) -> Result<Client, ClientError> {
        let deadline = Instant::now() + config.connect_timeout;
        let mut io = open(target, &config.resolver, config.tls.clone(), deadline)?;
        let tracker = WriteTracker::new(config.limits, config.nonce);
        if config.send_hello {
            let body = encode(&Frame::Hello(client_hello(&config.runtime_id)))?;
            let bytes = encode_frame(&body, config.max_frame_bytes)?;
            let left = sansio_kit::blocking::left(deadline)?;
            io.tcp()
                .set_write_timeout(Some(left))
                .map_err(sansio_kit::resolve::ConnectError::Connect)?;
            io.write_all(&bytes)
                .and_then(|()| io.flush())
                .map_err(|e| {
                    if timed_out(e.kind()) {
                        sansio_kit::resolve::ConnectError::TimedOut
                    } else {
                        sansio_kit::resolve::ConnectError::Connect(e)
                    }
                })?;
        }
        let decoder = FrameDecoder::new(config.max_frame_bytes);
        Ok(Client {
            io,
            config,
            tracker,
            decoder,
            ended: false,
            violation: None,
            counters: TransportCounters::default(),
            read_buf: vec![0; 16 * 1024],
        })
    }

    fn now(&self) -> u64 {
        self.config.clock.now_ms()
    }

    /// The result window the tracker applies now, in milliseconds.
    #[must_use]
    pub fn result_window_ms(&self) -> u64 {
        self.tracker.result_window_ms()
    }

    /// Where a write stands; a late answer to an unconfirmed write is recorded here, and a
    /// caller MUST consult it before resending.
    #[must_use]
    pub fn state(&self, handle: WriteHandle) -> Option<WriteState> {
        self.tracker.state(handle)
    }

    /// The tracker's counters.
    #[must_use]
    pub fn tracker_counters(&self) -> TrackerCounters {
        self.tracker.counters()
    }

    /// The transport's counters.
    #[must_use]
    pub fn counters(&self) -> TransportCounters {
        self.counters
    }

    /// Whether the session has ended (the peer closed, a read or write failed, or the peer broke
    /// the framing).
    #[must_use]
    pub fn session_ended(&self) -> bool {
        self.ended
    }

    /// The first protocol violation of the peer: a broken length prefix (which ended the
    /// session) or a frame that did not decode (which settled nothing).
    #[must_use]
    pub fn violation(&self) -> Option<&Violation> {
        self.violation.as_ref()
    }

    /// Puts `document`; returns once it settled as admitted, refused or unconfirmed.
    pub fn put(&mut self, document: Document) -> Result<Written, ClientError> {
        let (h, frame) = self.tracker.put(document, WriteMode::Receipt)?;
        self.send(&[(h, frame)])?;
        self.wait(&[h]);
        Ok(self.written(h))
    }

    /// Deletes a record; returns once the delete settled.
    pub fn delete(&mut self, schema_id: &str, record_key: &str) -> Result<Written, ClientError> {
        let (h, frame) = self
            .tracker
            .delete(schema_id, record_key, WriteMode::Receipt)?;
        self.send(&[(h, frame)])?;
        self.wait(&[h]);
        Ok(self.written(h))
    }

    /// Writes the members as independent writes, each with its own messageId, and returns once
    /// every member settled. Nothing is atomic: some members may be admitted while others are
    /// not.
    pub fn batch(&mut self, members: Vec<BatchWrite>) -> Result<BatchWritten, ClientError> {
        let mut frames = Vec::with_capacity(members.len());
        for m in members {
            let registered = match m {
                BatchWrite::Put(d) => self.tracker.put(d, WriteMode::Receipt),
                BatchWrite::Delete {
                    schema_id,
                    record_key,
                } => self
                    .tracker
                    .delete(&schema_id, &record_key, WriteMode::Receipt),
            };
            match registered {
                Ok(hf) => frames.push(hf),
                Err(e) => {
                    // The members already registered are given up as never sent.
                    self.abandon(frames.iter().map(|(h, _)| *h));
                    return Err(e.into());
                }
            }
        }
        let handles: Vec<WriteHandle> = frames.iter().map(|(h, _)| *h).collect();
        self.send(&frames)?;
        self.wait(&handles);
        let members: Vec<Written> = handles.iter().map(|h| self.written(*h)).collect();
        let outcome = self
            .tracker
            .batch_outcome(&handles)
            .expect("every member has settled");
        Ok(BatchWritten { outcome, members })
    }

    /// [`Client::put`] in the throwing style: `Ok` only for admitted.
    pub fn put_admitted(&mut self, document: Document) -> Result<WriteHandle, WriteFailure> {
        self.put(document)?.into_admitted()
    }

    /// [`Client::delete`] in the throwing style: `Ok` only for admitted.
    pub fn delete_admitted(
        &mut self,
        schema_id: &str,
        record_key: &str,
    ) -> Result<WriteHandle, WriteFailure> {
        self.delete(schema_id, record_key)?.into_admitted()
    }

    /// [`Client::batch`] in the throwing style: `Ok` only when every member was admitted.
    pub fn batch_admitted(
        &mut self,
        members: Vec<BatchWrite>,
    ) -> Result<Vec<WriteHandle>, BatchFailure> {
        self.batch(members)?.into_admitted()
    }

    /// Reads the connection for `duration` (or until the session ends), so answers arriving
    /// after their write settled are recorded as late on its state.
    pub fn pump_for(&mut self, duration: Duration) {
        let until = self
            .now()
            .saturating_add(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX));
        loop {
            let now = self.now();
            self.tracker.on_tick(now);
            self.drain_settled();
            if self.ended || now >= until {
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

    fn written(&self, h: WriteHandle) -> Written {
        let outcome = match self.tracker.state(h) {
            Some(WriteState::Settled { outcome, .. }) => outcome,
            other => unreachable!("a waited-for write is settled, found {other:?}"),
        };
        Written {
            handle: h,
            message_id: self
                .tracker
                .message_id(h)
                .expect("a settled write is kept")
                .to_owned(),
            outcome,
        }
    }

    /// Registered writes that will never be sent settle as a failed local send and are forgotten.
    fn abandon(&mut self, handles: impl IntoIterator<Item = WriteHandle>) {
        let now = self.now();
        for h in handles {
            self.tracker.on_send_failed(h, now);
            self.tracker.forget(h);
        }
        self.drain_settled();
    }

    /// Writes the frames of registered writes by the write deadline and starts their windows. A
    /// frame that does not encode or exceeds the cap is an application error: nothing is sent.
    fn send(&mut self, frames: &[(WriteHandle, Frame)]) -> Result<(), ClientError> {
        let mut bytes = Vec::new();
        for (_, f) in frames {
            let framed = encode(f)
                .map_err(ClientError::from)
                .and_then(|b| Ok(encode_frame(&b, self.config.max_frame_bytes)?));
            match framed {
                Ok(b) => bytes.extend_from_slice(&b),
                Err(e) => {
                    self.abandon(frames.iter().map(|(h, _)| *h));
                    return Err(e);
                }
            }
        }
        let now = self.now();
        if self.ended {
            // Sent after the session ended: the tracker settles each session_ended.
            for (h, _) in frames {
                self.tracker.on_sent(*h, now)?;
            }
            self.drain_settled();
            return Ok(());
        }
        let wrote = self
            .io
            .tcp()
            .set_write_timeout(Some(self.config.write_timeout))
            .and_then(|()| self.io.write_all(&bytes))
            .and_then(|()| self.io.flush());
        match wrote {
            Ok(()) => {
                for (h, _) in frames {
                    self.tracker.on_sent(*h, now)?;
                }
            }
            Err(_) => {
                // The write may or may not have left the machine: unconfirmed, never refused.
                // A partly written frame breaks the stream, so the session ends too.
                let now = self.now();
                for (h, _) in frames {
                    self.tracker.on_send_failed(*h, now);
                }
                self.end(now);
            }
        }
        self.drain_settled();
        Ok(())
    }

    fn all_settled(&self, handles: &[WriteHandle]) -> bool {
        handles.iter().all(|h| {
            matches!(
                self.tracker.state(*h),
                Some(WriteState::Settled { .. }) | None
            )
        })
    }

    /// Reads until every write in `handles` has settled. Each read waits at most until the
    /// window the tracker applies now has run from the call's send.
    fn wait(&mut self, handles: &[WriteHandle]) {
        let sent = self.now();
        loop {
            let now = self.now();
            self.tracker.on_tick(now);
            self.drain_settled();
            if self.all_settled(handles) {
                return;
            }
            if self.ended {
                // Cannot happen: the tracker settles every sent write when the session ends.
                return;
            }
            let until = sent.saturating_add(self.tracker.result_window_ms());
            self.read_once(until.saturating_sub(now).max(1));
        }
    }

    /// One read of at most `wait_ms`; whatever arrives is fed to the tracker.
    fn read_once(&mut self, wait_ms: u64) {
        let timeout = Duration::from_millis(wait_ms.max(1));
        if let Err(_e) = self.io.tcp().set_read_timeout(Some(timeout)) {
            let now = self.now();
            self.end(now);
            return;
        }
        let mut buf = std::mem::take(&mut self.read_buf);
        let read = self.io.read(&mut buf);
        let now = self.now();
        match read {
            Ok(0) => self.end(now),
            Ok(n) => self.feed(&buf[..n], now),
            Err(e) if timed_out(e.kind()) || e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.end(now),
        }
        self.read_buf = buf;
    }

    fn feed(&mut self, mut input: &[u8], now: u64) {
        while !input.is_empty() && !self.ended {
            match self.decoder.push(input) {
                Ok((took, body)) => {
                    input = &input[took..];
                    if let Some(body) = body {
                        self.on_body(&body, now);
                    } else if took == 0 {
                        return;
                    }
                }
                Err(e) => {
                    self.violation = Some(Violation::Framing(e));
                    self.end(now);
                }
            }
        }
    }

    fn on_body(&mut self, body: &[u8], now: u64) {
        match decode(body) {
            Ok(Frame::Hello(h)) => {
                self.counters.hellos += 1;
                self.tracker.on_hello(&h);
            }
            Ok(f @ (Frame::DocumentPut(_) | Frame::DocumentDelete(_))) => {
                self.counters.ignored_frames += 1;
                self.tracker.on_frame(&f, now);
            }
            Ok(f) => self.tracker.on_frame(&f, now),
            Err(e) => {
                // A malformed frame settles nothing; the window covers the write it may name.
                self.counters.undecodable_frames += 1;
                if self.violation.is_none() {
                    self.violation = Some(Violation::Decode(e));
                }
            }
        }
        self.drain_settled();
    }

    fn end(&mut self, now: u64) {
        if !self.ended {
            self.ended = true;
            let _ = self.io.tcp().shutdown(Shutdown::Both);
        }
        self.tracker.on_session_ended(now);
        self.drain_settled();
    }

    /// The tracker's queue of settled writes is drained (the client reads states instead), so
    /// it stays empty.
    fn drain_settled(&mut self) {
        while self.tracker.poll_settled().is_some() {}
    }
}
