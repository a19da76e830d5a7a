//! What the blocking and the async client share: the tracker, the frame decoder and the
//! session's state, fed bytes and clock readings, with no socket of its own.

use cultnet_receipts::frames::{
    Frame, Hello, DOCUMENT_DELETE_V0, DOCUMENT_PUT_V0, ERROR_V0, ERROR_V1, WRITE_ADMITTED_V0,
};
use cultnet_receipts::framing::{encode_frame, FrameDecoder};
use cultnet_receipts::tracker::{
    BatchOutcome, Outcome, WriteHandle, WriteMode, WriteState, WriteTracker,
};
use cultnet_receipts::{decode, encode};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{
    BatchWrite, BatchWritten, ClientConfig, ClientError, TransportCounters, Violation, Written,
};

/// The getters both clients have over their [`Session`] (a field named `session`): written once
/// here and expanded inside each client's `impl`.
macro_rules! session_getters {
    () => {
        /// The result window the tracker applies now, in milliseconds.
        #[must_use]
        pub fn result_window_ms(&self) -> u64 {
            self.session.tracker.result_window_ms()
        }

        /// Where a write stands; a late answer to an unconfirmed write is recorded here, and a
        /// caller MUST consult it before resending.
        #[must_use]
        pub fn state(
            &self,
            handle: cultnet_receipts::tracker::WriteHandle,
        ) -> Option<cultnet_receipts::tracker::WriteState> {
            self.session.tracker.state(handle)
        }

        /// Writes registered and not yet settled.
        #[must_use]
        pub fn unsettled(&self) -> usize {
            self.session.tracker.unsettled()
        }

        /// The tracker's counters.
        #[must_use]
        pub fn tracker_counters(&self) -> cultnet_receipts::tracker::TrackerCounters {
            self.session.tracker.counters()
        }

        /// The transport's counters.
        #[must_use]
        pub fn counters(&self) -> crate::TransportCounters {
            self.session.counters
        }

        /// Everything counted and held: the transport's counters and the tracker's statistics.
        #[must_use]
        pub fn stats(&self) -> crate::Stats {
            crate::Stats {
                transport: self.session.counters,
                tracker: self.session.tracker.stats(),
            }
        }

        /// Whether the session has ended (the peer closed, a read or write failed, or the peer
        /// broke the framing).
        #[must_use]
        pub fn session_ended(&self) -> bool {
            self.session.ended
        }

        /// The first protocol violation of the peer: a broken length prefix (which ended the
        /// session) or a frame that did not decode (which settled nothing).
        #[must_use]
        pub fn violation(&self) -> Option<&crate::Violation> {
            self.session.violation.as_ref()
        }
    };
}
pub(crate) use session_getters;

/// The hello a receipt-capable client sends before its first write.
pub(crate) fn client_hello_bytes(config: &ClientConfig) -> Result<Vec<u8>, ClientError> {
    let hello = Hello {
        runtime_id: config.runtime_id.clone(),
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
    };
    let body = encode(&Frame::Hello(hello))?;
    Ok(encode_frame(&body, config.max_frame_bytes)?)
}

#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) tracker: WriteTracker,
    decoder: FrameDecoder,
    max_frame_bytes: usize,
    pub(crate) ended: bool,
    pub(crate) violation: Option<Violation>,
    pub(crate) counters: TransportCounters,
    /// The writes of the call in progress, with their ids and, once settled, their outcomes:
    /// the tracker may forget a settled write to stay within `max_settled_kept` (a batch larger
    /// than that bound, say) before the call has read it, and the call's result is read here.
    pinned: BTreeMap<WriteHandle, (String, Option<Outcome>)>,
}

/// Connections this process has opened, counted so every one mints its own messageIds.
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

/// A bijective mix of a counter (the SplitMix64 finalizer), so consecutive counts spread over
/// all 64 bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The tracker nonce of the next connection made with `nonce`: the caller's nonce folded with
/// this process's connection count. For one caller nonce the result differs on every
/// connection (the mix is a bijection), so a configuration reused to reconnect never mints an
/// id an earlier connection minted (W-38).
pub(crate) fn connection_nonce(nonce: u64) -> u64 {
    nonce ^ mix(CONNECTIONS.fetch_add(1, Ordering::Relaxed))
}

impl Session {
    /// The session of a connection just opened, on which the client's hello took
    /// `hello_bytes` (0 when it sent none).
    pub(crate) fn new(config: &ClientConfig, hello_bytes: usize) -> Self {
        let mut counters = TransportCounters::default();
        if hello_bytes > 0 {
            counters.frames_out = 1;
            counters.bytes_out = hello_bytes as u64;
        }
        Session {
            tracker: {
                let t = WriteTracker::new(config.limits, connection_nonce(config.nonce));
                if config.send_hello {
                    t
                } else {
                    t.without_receipt_hello()
                }
            },
            decoder: FrameDecoder::new(config.max_frame_bytes),
            max_frame_bytes: config.max_frame_bytes,
            ended: false,
            violation: None,
            counters,
            pinned: BTreeMap::new(),
        }
    }

    /// Registers one write per member, each in `mode`, and returns their handles and frames.
    /// When one cannot be registered, those before it are given up as never sent.
    pub(crate) fn register(
        &mut self,
        members: Vec<BatchWrite>,
        mode: WriteMode,
        now: u64,
    ) -> Result<Vec<(WriteHandle, Frame)>, ClientError> {
        self.pinned.clear();
        let mut frames = Vec::with_capacity(members.len());
        for m in members {
            let registered = match m {
                BatchWrite::Put(d) => self.tracker.put(d, mode),
                BatchWrite::Delete {
                    schema_id,
                    record_key,
                } => self.tracker.delete(&schema_id, &record_key, mode),
            };
            match registered {
                Ok(hf) => {
                    let id = self.tracker.message_id(hf.0).unwrap_or_default().to_owned();
                    self.pinned.insert(hf.0, (id, None));
                    frames.push(hf);
                }
                Err(e) => {
                    self.abandon(frames.iter().map(|(h, _)| *h), now);
                    return Err(e.into());
                }
            }
        }
        Ok(frames)
    }

    /// The bytes of the frames, length-prefixed. A frame that does not encode or exceeds the
    /// cap is an application error: every write of the call is given up, nothing is sent.
    pub(crate) fn wire_bytes(
        &mut self,
        frames: &[(WriteHandle, Frame)],
        now: u64,
    ) -> Result<Vec<u8>, ClientError> {
        let mut bytes = Vec::new();
        for (_, f) in frames {
            let framed = encode(f)
                .map_err(ClientError::from)
                .and_then(|b| Ok(encode_frame(&b, self.max_frame_bytes)?));
            match framed {
                Ok(b) => bytes.extend_from_slice(&b),
                Err(e) => {
                    self.abandon(frames.iter().map(|(h, _)| *h), now);
                    return Err(e);
                }
            }
        }
        Ok(bytes)
    }

    /// Pins the one write of a resend call (see [`Session::register`]).
    pub(crate) fn pin(&mut self, h: WriteHandle) {
        self.pinned.clear();
        let id = self.tracker.message_id(h).unwrap_or_default().to_owned();
        self.pinned.insert(h, (id, None));
    }

    /// Registered writes that will never be sent settle as a failed local send and are forgotten.
    fn abandon(&mut self, handles: impl IntoIterator<Item = WriteHandle>, now: u64) {
        for h in handles {
            self.tracker.on_send_failed(h, now);
            self.tracker.forget(h);
        }
        self.drain_settled();
    }

    /// The frames were written (or, after the session ended, would have been): their windows
    /// start at `now`.
    pub(crate) fn sent(
        &mut self,
        frames: &[(WriteHandle, Frame)],
        now: u64,
    ) -> Result<(), ClientError> {
        for (h, _) in frames {
            self.tracker.on_sent(*h, now)?;
        }
        self.drain_settled();
        Ok(())
    }

    /// The stream carrier took every byte of the frames (the write and its flush completed): this
    /// is the transport's acknowledgement a stream gives, and it settles a send-only write
    /// `sent`. It says nothing about the peer having read the frames, and a receipt write ignores
    /// it (an acknowledgement is never admission).
    pub(crate) fn acknowledged(&mut self, frames: &[(WriteHandle, Frame)], bytes: usize, now: u64) {
        self.counters.frames_out += frames.len() as u64;
        self.counters.bytes_out += bytes as u64;
        for (h, _) in frames {
            self.tracker.on_transport_ack(*h, now);
        }
        self.drain_settled();
    }

    /// Writing the frames failed: each write is unconfirmed (local_send_failed, never refused),
    /// and since a partly written frame breaks the stream, the session ends.
    pub(crate) fn send_failed(&mut self, frames: &[(WriteHandle, Frame)], now: u64) {
        for (h, _) in frames {
            self.tracker.on_send_failed(*h, now);
        }
        self.end(now);
    }

    pub(crate) fn all_settled(&self, handles: &[WriteHandle]) -> bool {
        handles.iter().all(|h| {
            matches!(
                self.tracker.state(*h),
                Some(WriteState::Settled { .. }) | None
            ) || matches!(self.pinned.get(h), Some((_, Some(_))))
        })
    }

    /// Ticks the tracker at `now`; `None` when the writes are settled (or the session ended),
    /// else how long the next read may wait: until the window the tracker applies now has run
    /// from `sent`.
    pub(crate) fn next_wait(
        &mut self,
        handles: &[WriteHandle],
        sent: u64,
        now: u64,
    ) -> Option<u64> {
        self.tracker.on_tick(now);
        self.drain_settled();
        if self.all_settled(handles) || self.ended {
            return None;
        }
        let until = sent.saturating_add(self.tracker.result_window_ms());
        Some(until.saturating_sub(now).max(1))
    }

    /// What a write of the call settled as: from the tracker while it keeps the write, else
    /// from the call's pinned record.
    pub(crate) fn written(&self, h: WriteHandle) -> Written {
        if let Some(WriteState::Settled { outcome, .. }) = self.tracker.state(h) {
            if let Some(id) = self.tracker.message_id(h) {
                return Written {
                    handle: h,
                    message_id: id.to_owned(),
                    outcome,
                };
            }
        }
        let (message_id, outcome) = match self.pinned.get(&h) {
            Some((id, Some(outcome))) => (id.clone(), outcome.clone()),
            other => unreachable!("a waited-for write is settled and pinned, found {other:?}"),
        };
        Written {
            handle: h,
            message_id,
            outcome,
        }
    }

    pub(crate) fn batch_written(&self, handles: &[WriteHandle]) -> BatchWritten {
        let members: Vec<Written> = handles.iter().map(|h| self.written(*h)).collect();
        let mut refused = Vec::new();
        let mut not_admitted = Vec::new();
        for m in &members {
            match m.outcome {
                Outcome::Admitted => {}
                Outcome::Refused(_) => refused.push(m.handle),
                _ => not_admitted.push(m.handle),
            }
        }
        let outcome = if !refused.is_empty() {
            BatchOutcome::Refused(refused)
        } else if !not_admitted.is_empty() {
            BatchOutcome::Unconfirmed(not_admitted)
        } else {
            BatchOutcome::Admitted
        };
        BatchWritten { outcome, members }
    }

    /// Bytes read from the connection at `now`.
    pub(crate) fn feed(&mut self, mut input: &[u8], now: u64) {
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
        self.counters.frames_in += 1;
        self.counters.bytes_in += 4 + body.len() as u64;
        match decode(body) {
            Ok(f @ Frame::Hello(_)) => {
                if self.counters.hellos > 0 {
                    // The tracker ignores a repeated hello (it counts it too).
                    self.counters.ignored_frames += 1;
                }
                self.counters.hellos += 1;
                // Through `on_frame`, which first settles the writes whose age reached the
                // window in force until now: a receipt hello read past a write's legacy window
                // must not stretch that window to the receipt one (W-39).
                self.tracker.on_frame(&f, now);
            }
            Ok(f @ (Frame::DocumentPut(_) | Frame::DocumentDelete(_))) => {
                // An echoed write is never an answer.
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

    /// The session ended at `now`: everything unanswered is unconfirmed (session_ended).
    pub(crate) fn end(&mut self, now: u64) {
        self.ended = true;
        self.tracker.on_session_ended(now);
        self.drain_settled();
    }

    /// The tracker's queue of settled writes is drained (the clients read states instead), so
    /// it stays empty.
    pub(crate) fn drain_settled(&mut self) {
        while let Some(settled) = self.tracker.poll_settled() {
            if let Some(p) = self.pinned.get_mut(&settled.handle) {
                p.1 = Some(settled.outcome);
            }
        }
    }
}
