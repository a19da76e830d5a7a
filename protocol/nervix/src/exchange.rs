//! One session on one transport stream: request identities, waiters, reply routing, transfer
//! reassembly, cancellation, deadlines and the bounded queue of unsolicited frames.
//!
//! The exchange is sans-IO. Inputs are [`Exchange::request`] and the other application calls,
//! and [`Exchange::handle_frame`], [`Exchange::handle_transport_closed`] and
//! [`Exchange::handle_timeout`] from the driver; outputs are drained with
//! [`Exchange::poll_transmit`], [`Exchange::poll_event`], [`Exchange::poll_unsolicited`] and
//! [`Exchange::poll_timeout`]. After any input the driver drains every poll until it is empty.
//!
//! Every request ends exactly once: with [`ExchangeEvent::Replied`] carrying its terminal reply,
//! or with [`ExchangeEvent::Interrupted`] when no reply can follow (the session ended, the
//! transport was lost, a protocol violation stopped the reader, its deadline passed, or it was
//! abandoned). Requests are known to the application by a [`RequestHandle`]; the wire identity
//! behind it can change when the server refuses a request as `TooManyRequestsInFlight` and the
//! exchange sends it again under a fresh identity (C-6).

use crate::encode::{CommandFrame, CommandParts, EncodeError, Encoder};
use crate::frame::ServerFrame;
use crate::schema::*;
use crate::time::Timestamp;
use crate::transfer::{TransferAssembler, TransferProgress};
use crate::violation::{ProtocolViolation, TransferViolation};
use bytes::Bytes;
use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

/// The application's name for one request, stable for the request's whole life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestHandle(pub u64);

/// Limits of one exchange.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExchangeConfig {
    /// The most requests sent and not yet answered (C-6); more wait in order. Default 64.
    pub max_in_flight: usize,
    /// The most unsolicited frames kept for the application; more are dropped and the loss is
    /// reported (C-7). Default 1024.
    pub unsolicited_capacity: usize,
    /// The most bytes of unsolicited frames kept for the application; past it frames are
    /// dropped and the loss is reported, like past the count (C-7). Default 64 MiB.
    pub unsolicited_bytes: usize,
    /// The first request identity of the session (C-1). Default 1.
    pub first_request_id: u64,
    /// How long a request refused as `TooManyRequestsInFlight` waits before it goes again when
    /// nothing else is in flight to make room (C-6); it doubles with each such refusal in a
    /// row. Default 10 ms.
    pub refusal_backoff_initial: Duration,
    /// The longest such wait. Default 2 s.
    pub refusal_backoff_max: Duration,
}

impl Default for ExchangeConfig {
    fn default() -> Self {
        Self {
            max_in_flight: 64,
            unsolicited_capacity: 1024,
            unsolicited_bytes: 64 * 1024 * 1024,
            first_request_id: 1,
            refusal_backoff_initial: Duration::from_millis(10),
            refusal_backoff_max: Duration::from_secs(2),
        }
    }
}

impl ExchangeConfig {
    /// Sets the in-flight limit.
    pub fn with_max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }
    /// Sets the capacity of the unsolicited queue.
    pub fn with_unsolicited_capacity(mut self, n: usize) -> Self {
        self.unsolicited_capacity = n;
        self
    }
    /// Sets the byte budget of the unsolicited queue.
    pub fn with_unsolicited_bytes(mut self, n: usize) -> Self {
        self.unsolicited_bytes = n;
        self
    }
    /// Sets the first request identity (used to test identity exhaustion).
    pub fn with_first_request_id(mut self, id: u64) -> Self {
        self.first_request_id = id.max(1);
        self
    }
}

/// Why a request ended without a reply.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Interruption {
    /// The server ended the session (SessionEnding).
    SessionEnded,
    /// The transport ended.
    TransportLost,
    /// A received frame broke the protocol and the reader stopped (F-8).
    ProtocolViolation,
    /// The request's own deadline passed (D-4).
    DeadlineExceeded,
    /// The application stopped waiting (C-10).
    Abandoned,
    /// Cancelled before it was ever sent: it certainly had no effect.
    CancelledUnsent,
    /// The session was closed by the application.
    Closed,
    /// Refused as `TooManyRequestsInFlight` (not admitted), and the session has no identity
    /// left to send it again under (C-1): send it again on a new session.
    IdentitiesExhausted,
    /// Refused as `TooManyRequestsInFlight` (not admitted), and its frame could not be
    /// written again under a fresh identity; it is never sent under the answered one (C-5).
    /// Nothing of it ran: send it again as a new request.
    NotAdmitted,
}

/// Why the session ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum EndCause {
    /// The server sent SessionEnding; the frame says why (shutdown, leader redirect, violation).
    SessionEnding(ServerFrame),
    /// The transport ended.
    TransportLost,
    /// A received frame broke the protocol (F-8).
    Violation(ProtocolViolation),
    /// The application closed the session.
    Closed,
}

/// Something the application learns from the exchange.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ExchangeEvent {
    /// The request's terminal reply (joined from transfer parts when it came in parts).
    Replied {
        /// The request.
        handle: RequestHandle,
        /// A checked `ServerMessage` frame whose body is the `Reply`.
        frame: ServerFrame,
    },
    /// The request ended without a reply; none will follow.
    Interrupted {
        /// The request.
        handle: RequestHandle,
        /// Why.
        cause: Interruption,
        /// Whether its frame was ever handed to the transport in a form the server may have
        /// admitted. `false` means it certainly had no effect: never written, or written and
        /// refused as `TooManyRequestsInFlight` every time.
        sent: bool,
    },
    /// The session ended. Every request still waiting was interrupted just before this event.
    Ended {
        /// Why.
        cause: EndCause,
    },
}

/// An entry of the unsolicited queue.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Unsolicited {
    /// A checked unsolicited frame (any `ServerBody` but `Reply` and `SessionEnding`).
    Frame(ServerFrame),
    /// The queue was full and this many frames were dropped at this point (C-7).
    Lost {
        /// Frames dropped.
        dropped: u64,
    },
}

/// Why the exchange refused an application call. Nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The session has ended; open a new one.
    #[error("the session has ended")]
    SessionEnded,
    /// Every request identity of this session was used; open a new session (C-1).
    #[error("the session's request identities are exhausted")]
    IdentitiesExhausted,
    /// The request does not encode (a typed defect in what the application asked to send).
    #[error("the request cannot be sent: {0}")]
    Encode(#[from] EncodeError),
    /// The handle names no request that is still waiting.
    #[error("no waiting request has that handle")]
    UnknownHandle,
}

#[derive(Debug)]
struct Waiter {
    handle: RequestHandle,
    kind: ClientRequest,
    frame: Bytes,
    /// Where a command's execution reference sits in `frame`, when the exchange wrote the
    /// frame itself and so knows without reading it back.
    reference: Option<std::ops::Range<usize>>,
    deadline: Option<Timestamp>,
    /// The frame is with the transport and no terminal reply has come for it yet. A request
    /// ended while this is false certainly had no effect.
    sent: bool,
    /// Frames the session had received when the frame was last handed to the transport.
    heard_when_sent: u64,
}

#[derive(Debug)]
enum State {
    Open,
    Ended,
}

/// One session on one transport stream.
#[derive(Debug)]
pub struct Exchange {
    config: ExchangeConfig,
    state: State,
    next_wire: Option<u64>,
    next_handle: u64,
    waiters: IdMap<Waiter>,
    handles: IdMap<u64>,
    queued: VecDeque<u64>,
    held: VecDeque<u64>,
    abandoned: BTreeSet<u64>,
    deadlines: BTreeSet<(Timestamp, u64)>,
    /// When requests held after a refusal go again though nothing else was in flight (C-6).
    held_until: Option<Timestamp>,
    /// Refusals in a row with nothing else in flight: the wait doubles with each.
    refusals: u32,
    in_flight: usize,
    transmit: VecDeque<Bytes>,
    events: VecDeque<ExchangeEvent>,
    unsolicited: UnsolicitedQueue,
    discarded: u64,
    /// Frames received on the session, of any kind.
    heard: u64,
    /// A request's deadline passed while its frame was out and nothing had been received
    /// on the session since it went (T-8).
    silent: bool,
    assembler: TransferAssembler,
    encoder: Encoder,
}

impl Exchange {
    /// A new session's exchange.
    pub fn new(config: ExchangeConfig) -> Self {
        let capacity = config.unsolicited_capacity;
        let budget = config.unsolicited_bytes;
        Self {
            next_wire: Some(config.first_request_id.max(1)),
            config,
            state: State::Open,
            next_handle: 1,
            waiters: IdMap::default(),
            handles: IdMap::default(),
            queued: VecDeque::new(),
            held: VecDeque::new(),
            abandoned: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            held_until: None,
            refusals: 0,
            in_flight: 0,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            unsolicited: UnsolicitedQueue::new(capacity, budget),
            discarded: 0,
            heard: 0,
            silent: false,
            assembler: TransferAssembler::new(),
            encoder: Encoder::new(),
        }
    }

    /// Whether the session is still open.
    pub fn is_open(&self) -> bool {
        matches!(self.state, State::Open)
    }

    /// Requests sent and not yet answered (abandoned ones included: the server still works on
    /// them).
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Requests out whose callers stopped waiting (C-10): they hold an in-flight slot until
    /// their reply arrives.
    pub fn abandoned(&self) -> usize {
        self.abandoned.len()
    }

    /// Whether the request's current attempt was handed to the transport and is unanswered.
    pub fn is_sent(&self, handle: RequestHandle) -> Option<bool> {
        let id = self.handles.get(&handle.0)?;
        self.waiters.get(id).map(|w| w.sent)
    }

    /// Bytes of the unsolicited frames held for the application.
    pub fn unsolicited_bytes(&self) -> usize {
        self.unsolicited.bytes()
    }

    /// Requests still waiting for their end, sent or not.
    pub fn waiting(&self) -> usize {
        self.waiters.len()
    }

    /// The wire identity a waiting request currently has.
    pub fn request_id(&self, handle: RequestHandle) -> Option<u64> {
        self.handles.get(&handle.0).copied()
    }

    /// Replies discarded because no request was waiting for them (C-3).
    pub fn discarded_replies(&self) -> u64 {
        self.discarded
    }

    /// Whether the session has gone silent: a request's deadline passed while its frame was
    /// out and not one frame, of any kind, had been received on the session since that frame
    /// was handed to the transport. Neither side sends keepalives (T-8), so nothing else tells
    /// a half-open stream or a stuck node from a slow one; a session that went silent should
    /// be replaced rather than given more calls to lose.
    pub fn is_silent(&self) -> bool {
        self.silent
    }

    fn take_wire_id(&mut self) -> Result<u64, RequestError> {
        let id = self.next_wire.ok_or(RequestError::IdentitiesExhausted)?;
        self.next_wire = id.checked_add(1);
        Ok(id)
    }

    /// Registers and sends a request (C-1, C-2). The waiter exists before the frame is queued
    /// for transmission; with `max_in_flight` requests already out, the request waits in order.
    pub fn request(
        &mut self,
        now: Timestamp,
        request: &ClientRequestT,
        deadline: Option<Timestamp>,
    ) -> Result<RequestHandle, RequestError> {
        if let ClientRequestT::CommandRequest(command) = request {
            return self.request_command(now, &CommandParts::of(command), deadline);
        }
        self.request_framed(now, request.client_request_type(), deadline, |enc, id| {
            enc.encode_request(id, request)
        })
    }

    /// [`Exchange::request`] of a `CommandRequest` given as borrowed parts: the same frame,
    /// written without an owned request around it.
    pub fn request_command(
        &mut self,
        now: Timestamp,
        command: &CommandParts<'_>,
        deadline: Option<Timestamp>,
    ) -> Result<RequestHandle, RequestError> {
        self.register(now, ClientRequest::CommandRequest, deadline, |enc, id| {
            let CommandFrame { frame, reference } = enc.encode_command(id, command)?;
            Ok((frame, Some(reference)))
        })
    }

    /// Registers and sends a request whose frame `frame` writes, given the exchange's encoder
    /// and the request identity the frame must carry; otherwise exactly [`Exchange::request`].
    /// `frame` is called only when the request can be registered, and must return one
    /// `ClientMessage` frame of request type `kind` under that identity, within the frame limit
    /// (for example from [`Encoder::submit_frame`]); the exchange sends it as given.
    pub fn request_framed(
        &mut self,
        now: Timestamp,
        kind: ClientRequest,
        deadline: Option<Timestamp>,
        frame: impl FnOnce(&mut Encoder, u64) -> Result<Bytes, EncodeError>,
    ) -> Result<RequestHandle, RequestError> {
        self.register(now, kind, deadline, |enc, id| Ok((frame(enc, id)?, None)))
    }

    /// Registers and sends the request whose frame `frame` writes, with where a command's
    /// execution reference sits in it when the exchange wrote it itself.
    fn register(
        &mut self,
        _now: Timestamp,
        kind: ClientRequest,
        deadline: Option<Timestamp>,
        frame: impl FnOnce(
            &mut Encoder,
            u64,
        ) -> Result<(Bytes, Option<std::ops::Range<usize>>), EncodeError>,
    ) -> Result<RequestHandle, RequestError> {
        if !self.is_open() {
            return Err(RequestError::SessionEnded);
        }
        if self.next_wire.is_none() {
            return Err(RequestError::IdentitiesExhausted);
        }
        let id = self.next_wire.unwrap_or(0);
        let (frame, reference) = frame(&mut self.encoder, id)?;
        let id = self.take_wire_id()?;
        let handle = RequestHandle(self.next_handle);
        self.next_handle += 1;
        self.waiters.insert(
            id,
            Waiter {
                handle,
                kind,
                frame,
                reference,
                deadline,
                sent: false,
                heard_when_sent: 0,
            },
        );
        self.handles.insert(handle.0, id);
        if let Some(d) = deadline {
            self.deadlines.insert((d, id));
        }
        self.queued.push_back(id);
        self.pump();
        Ok(handle)
    }

    /// Asks the server to cancel a waiting request, with a `CancelRequest` of its own identity
    /// (C-9). The target keeps waiting for its own terminal reply (`RequestCancelled` or its
    /// ordinary reply); the cancel's `CancelOutcome` arrives as the cancel's own reply, in
    /// either order. A target that was never sent ends at once as
    /// [`Interruption::CancelledUnsent`] and no `CancelRequest` is sent.
    pub fn cancel(
        &mut self,
        now: Timestamp,
        target: RequestHandle,
        deadline: Option<Timestamp>,
    ) -> Result<Option<RequestHandle>, RequestError> {
        let id = *self
            .handles
            .get(&target.0)
            .ok_or(RequestError::UnknownHandle)?;
        let sent = self.waiters.get(&id).is_some_and(|w| w.sent);
        if !sent {
            self.queued.retain(|q| *q != id);
            self.held.retain(|q| *q != id);
            self.finish_waiter(id);
            self.events.push_back(ExchangeEvent::Interrupted {
                handle: target,
                cause: Interruption::CancelledUnsent,
                sent: false,
            });
            return Ok(None);
        }
        let cancel = ClientRequestT::CancelRequest(Box::new(CancelRequestT {
            target_request_id: id,
        }));
        self.request(now, &cancel, deadline).map(Some)
    }

    /// Stops waiting for a request without cancelling it (C-10): it ends at once as
    /// [`Interruption::Abandoned`], and its late reply, if any, is discarded. Its effect may
    /// still happen.
    pub fn abandon(&mut self, handle: RequestHandle) -> Result<(), RequestError> {
        let id = *self
            .handles
            .get(&handle.0)
            .ok_or(RequestError::UnknownHandle)?;
        self.stop_waiting(id, Interruption::Abandoned);
        Ok(())
    }

    fn stop_waiting(&mut self, id: u64, cause: Interruption) {
        let Some(w) = self.waiters.get(&id) else {
            return;
        };
        let (handle, sent) = (w.handle, w.sent);
        if sent {
            self.abandoned.insert(id);
        } else {
            self.queued.retain(|q| *q != id);
            self.held.retain(|q| *q != id);
        }
        self.finish_waiter(id);
        self.events.push_back(ExchangeEvent::Interrupted {
            handle,
            cause,
            sent,
        });
    }

    fn finish_waiter(&mut self, id: u64) -> Option<Waiter> {
        let w = self.waiters.remove(&id)?;
        self.handles.remove(&w.handle.0);
        if let Some(d) = w.deadline {
            self.deadlines.remove(&(d, id));
        }
        Some(w)
    }

    /// Ends the session from the application's side. Every waiting request is interrupted.
    /// Whether the transport is then half-closed cleanly (which reverts a held transaction,
    /// X-7) or dropped is the caller's decision.
    pub fn close(&mut self) {
        self.end(EndCause::Closed, Interruption::Closed);
    }

    /// Sends what may go out: queued requests up to the in-flight limit.
    fn pump(&mut self) {
        while self.in_flight < self.config.max_in_flight {
            let Some(id) = self.queued.pop_front() else {
                break;
            };
            let Some(w) = self.waiters.get_mut(&id) else {
                continue;
            };
            w.sent = true;
            w.heard_when_sent = self.heard;
            self.in_flight += 1;
            self.transmit.push_back(w.frame.clone());
        }
    }

    /// A frame arrived on the session's stream.
    pub fn handle_frame(&mut self, now: Timestamp, bytes: Bytes) {
        if !self.is_open() {
            return;
        }
        self.heard += 1;
        let frame = match ServerFrame::check_compact(bytes) {
            Ok(f) => f,
            Err(v) => return self.violation(v),
        };
        enum Kind {
            Reply(u64),
            Part(u64),
            Ending,
            Other,
        }
        let kind = {
            let view = frame.view();
            match view.body_as_reply() {
                Some(r) if r.body_type() == ReplyBody::TransferPart => Kind::Part(r.request_id()),
                Some(r) => Kind::Reply(r.request_id()),
                None if view.body_type() == ServerBody::SessionEnding => Kind::Ending,
                None => Kind::Other,
            }
        };
        match kind {
            // The frame moves on; cloning it would cost an allocation per reply.
            Kind::Reply(id) if self.assembler.assembling() == Some(id) => {
                // F-7, C-4: a request in the middle of its transfer is answered by the joined
                // reply alone; a whole reply now would be a second terminal reply.
                self.violation(ProtocolViolation::Transfer(
                    TransferViolation::WholeReplyDuringTransfer { request_id: id },
                ))
            }
            Kind::Reply(id) => self.terminal(now, id, frame),
            Kind::Part(id) => {
                // Only a request that is out (or was abandoned while out) can be answered in
                // parts; parts naming any other identity are discarded unbuffered (C-3), so
                // no peer can make the client hold a transfer nobody waits for.
                let expected =
                    self.waiters.get(&id).is_some_and(|w| w.sent) || self.abandoned.contains(&id);
                if !expected {
                    self.discarded += 1;
                    return;
                }
                let progress = {
                    let view = frame.view();
                    match view.body_as_reply().and_then(|r| r.body_as_transfer_part()) {
                        Some(part) => self.assembler.accept(id, &part),
                        None => return,
                    }
                };
                match progress {
                    Ok(TransferProgress::Complete(joined)) => self.terminal(now, id, joined),
                    Ok(_) => {}
                    Err(t) => self.violation(ProtocolViolation::Transfer(t)),
                }
            }
            Kind::Ending => self.end(EndCause::SessionEnding(frame), Interruption::SessionEnded),
            Kind::Other => self.push_unsolicited(frame),
        }
    }

    fn push_unsolicited(&mut self, frame: ServerFrame) {
        self.unsolicited.push(Unsolicited::Frame(frame));
    }

    fn terminal(&mut self, now: Timestamp, id: u64, frame: ServerFrame) {
        let Some(w) = self.waiters.get(&id).filter(|w| w.sent) else {
            if self.abandoned.remove(&id) {
                self.in_flight -= 1;
                self.release_held();
            }
            self.discarded += 1;
            return;
        };
        let view = frame.view();
        let Some(reply) = view.body_as_reply() else {
            return;
        };
        let body = reply.body_type();
        if !reply_fits(w.kind, body) {
            let v = ProtocolViolation::UnexpectedReply {
                request_id: id,
                request: w.kind.variant_name().unwrap_or("?"),
                reply: body.variant_name().unwrap_or("?"),
            };
            return self.violation(v);
        }
        if let Some(outcome) = reply.body_as_command_outcome() {
            // The reference the frame carries: read in place where the exchange wrote it, or
            // read back from a frame written by the caller.
            let found = outcome.execution_reference();
            let same = match &w.reference {
                Some(r) => w.frame.get(r.clone()) == Some(found.as_bytes()),
                None => sent_reference(&w.frame) == Some(found),
            };
            if !same {
                let sent = sent_reference(&w.frame);
                let v = ProtocolViolation::ReferenceMismatch {
                    request_id: id,
                    sent: sent.unwrap_or_default().to_string(),
                    found: outcome.execution_reference().to_string(),
                };
                return self.violation(v);
            }
        }
        let too_many = reply
            .body_as_request_rejected()
            .is_some_and(|r| r.rejection() == Some(RequestRejection::TooManyRequestsInFlight));
        self.in_flight -= 1;
        if too_many {
            // Not admitted (C-6): it goes again, under a fresh identity and in the order the
            // held requests were first sent, once an earlier request has its terminal reply.
            let handle = w.handle;
            if let Some(w) = self.waiters.get_mut(&id) {
                w.sent = false;
            }
            let at = self
                .held
                .iter()
                .position(|h| self.waiters.get(h).is_some_and(|o| o.handle > handle))
                .unwrap_or(self.held.len());
            self.held.insert(at, id);
            tracing::debug!(
                request_id = id,
                held = self.held.len(),
                "nervix request refused as too many in flight: it goes again"
            );
            if self.in_flight == 0 && self.held_until.is_none() {
                // Nothing else is out whose reply would make room: wait, longer with each
                // refusal in a row, rather than resend at once without bound.
                let wait = self.refusal_wait();
                tracing::debug!(wait_ms = wait.as_millis() as u64, "nervix refusal back-off");
                self.refusals = self.refusals.saturating_add(1);
                self.held_until = Some(now + wait);
            }
            return;
        }
        self.refusals = 0;
        if let Some(w) = self.finish_waiter(id) {
            self.events.push_back(ExchangeEvent::Replied {
                handle: w.handle,
                frame,
            });
        }
        self.release_held();
    }

    fn refusal_wait(&self) -> Duration {
        let first = self.config.refusal_backoff_initial;
        let max = self.config.refusal_backoff_max.max(first);
        first
            .checked_mul(1u32 << self.refusals.min(20))
            .map_or(max, |d| d.min(max))
    }

    /// Room was made (an earlier request has its terminal reply, or the refusal wait ended):
    /// requests refused as too many go again first, in the order they were first sent.
    fn release_held(&mut self) {
        self.held_until = None;
        let mut again = Vec::with_capacity(self.held.len());
        while let Some(old) = self.held.pop_front() {
            let Some(mut w) = self.finish_waiter(old) else {
                continue;
            };
            // C-1, C-5: a fresh identity, written into the frame; never the answered one.
            let renumbered = match self.take_wire_id() {
                Ok(new) => renumber(&w.frame, new)
                    .map(|f| (new, f))
                    .ok_or(Interruption::NotAdmitted),
                Err(_) => Err(Interruption::IdentitiesExhausted),
            };
            let (new, frame) = match renumbered {
                Ok(r) => r,
                Err(cause) => {
                    self.events.push_back(ExchangeEvent::Interrupted {
                        handle: w.handle,
                        cause,
                        sent: false,
                    });
                    continue;
                }
            };
            w.frame = frame;
            self.handles.insert(w.handle.0, new);
            if let Some(d) = w.deadline {
                self.deadlines.insert((d, new));
            }
            self.waiters.insert(new, w);
            again.push(new);
        }
        for new in again.into_iter().rev() {
            self.queued.push_front(new);
        }
        self.pump();
    }

    /// The transport ended (D-6): every waiting request is interrupted.
    pub fn handle_transport_closed(&mut self, _now: Timestamp) {
        if self.is_open() {
            self.end(EndCause::TransportLost, Interruption::TransportLost);
        }
    }

    /// Time passed: requests whose deadline is not after `now` end as
    /// [`Interruption::DeadlineExceeded`]. Early or repeated calls do nothing.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if !self.is_open() {
            return;
        }
        while let Some(&(d, id)) = self.deadlines.first() {
            if d > now {
                break;
            }
            self.deadlines.pop_first();
            let unheard = self
                .waiters
                .get(&id)
                .is_some_and(|w| w.sent && w.heard_when_sent == self.heard);
            self.silent |= unheard;
            self.stop_waiting(id, Interruption::DeadlineExceeded);
        }
        if self.held_until.is_some_and(|t| t <= now) {
            self.release_held();
        }
    }

    /// Ends the session for a violation the caller found in a checked frame, one the frame's
    /// own checks cannot see (a batch that does not conform to its subscription's schema,
    /// It ends like any other violation (F-8): every waiting request is interrupted.
    pub fn fail(&mut self, violation: ProtocolViolation) {
        self.violation(violation);
    }

    fn violation(&mut self, v: ProtocolViolation) {
        self.end(EndCause::Violation(v), Interruption::ProtocolViolation);
    }

    fn end(&mut self, cause: EndCause, interruption: Interruption) {
        if !self.is_open() {
            return;
        }
        self.state = State::Ended;
        let waiting: Vec<u64> = self.waiters.keys().copied().collect();
        for id in waiting {
            if let Some(w) = self.finish_waiter(id) {
                self.events.push_back(ExchangeEvent::Interrupted {
                    handle: w.handle,
                    cause: interruption.clone(),
                    sent: w.sent,
                });
            }
        }
        self.queued.clear();
        self.held.clear();
        self.held_until = None;
        self.abandoned.clear();
        self.in_flight = 0;
        self.transmit.clear();
        self.assembler.reset();
        self.events.push_back(ExchangeEvent::Ended { cause });
    }

    /// The next frame to write to the stream, one transport message each (F-2).
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Bytes> {
        self.transmit.pop_front()
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ExchangeEvent> {
        self.events.pop_front()
    }

    /// The next unsolicited frame, or a marker of frames lost at that point.
    #[must_use]
    pub fn poll_unsolicited(&mut self) -> Option<Unsolicited> {
        self.unsolicited.pop()
    }

    /// When [`Exchange::handle_timeout`] next has something to do. A pure read.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        if !self.is_open() {
            return None;
        }
        let deadline = self.deadlines.first().map(|&(d, _)| d);
        match (deadline, self.held_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Whether a reply body can answer a request kind. Any request may be rejected or cancelled.
fn reply_fits(request: ClientRequest, body: ReplyBody) -> bool {
    if body == ReplyBody::RequestRejected || body == ReplyBody::RequestCancelled {
        return true;
    }
    let expected = match request {
        ClientRequest::CommandRequest => ReplyBody::CommandOutcome,
        ClientRequest::SuggestRequest => ReplyBody::SuggestOutcome,
        ClientRequest::ListDomainsRequest => ReplyBody::DomainList,
        ClientRequest::SelectDomainRequest => ReplyBody::DomainSelectionOutcome,
        ClientRequest::AttachTransactionRequest => ReplyBody::AttachOutcome,
        ClientRequest::InspectTransactionRequest => ReplyBody::InspectionOutcome,
        ClientRequest::SubscribeRequest => ReplyBody::SubscribeOutcome,
        ClientRequest::UnsubscribeRequest => ReplyBody::UnsubscribeOutcome,
        ClientRequest::CancelRequest => ReplyBody::CancelOutcome,
        ClientRequest::ChoiceLookupRequest => ReplyBody::ChoiceOutcome,
        ClientRequest::AttachDomainClockRequest => ReplyBody::DomainClockAttachOutcome,
        ClientRequest::DetachDomainClockRequest => ReplyBody::DomainClockDetachOutcome,
        ClientRequest::OpenIngestorRequest => ReplyBody::OpenIngestorOutcome,
        ClientRequest::SubmitBatchRequest => ReplyBody::SubmissionOutcome,
        ClientRequest::CloseIngestorRequest => ReplyBody::CloseIngestorOutcome,
        ClientRequest::OpenEmitterRequest => ReplyBody::OpenEmitterOutcome,
        ClientRequest::ReadEmitterBatchRequest => ReplyBody::ReadEmitterBatchOutcome,
        ClientRequest::SettleEmitterBatchRequest => ReplyBody::SettleEmitterBatchOutcome,
        ClientRequest::CloseEmitterRequest => ReplyBody::CloseEmitterOutcome,
        _ => return false,
    };
    body == expected
}

/// The execution reference of a CommandRequest frame this exchange wrote.
fn sent_reference(frame: &[u8]) -> Option<&str> {
    let msg = crate::frame::check_slice::<crate::frame::ClientMessageRoot>(
        frame,
        crate::limits::FRAME_LIMIT,
    )
    .ok()?;
    msg.request_as_command_request()
        .map(|c| c.execution_reference())
}

/// The same request frame under another request identity, or `None` when the frame does not
/// hold its identity where this exchange wrote it. Only the eight bytes of the identity
/// change: the request itself goes again exactly as first written.
fn renumber(frame: &[u8], request_id: u64) -> Option<Bytes> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(
            frame.get(at..at.checked_add(4)?)?.try_into().ok()?,
        ))
    };
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_le_bytes(
            frame.get(at..at.checked_add(2)?)?.try_into().ok()?,
        ))
    };
    let table = usize::try_from(u32_at(0)?).ok()?;
    let back = i64::from(u32_at(table)? as i32);
    let vtable = usize::try_from(i64::try_from(table).ok()?.checked_sub(back)?).ok()?;
    let slot = usize::from(ClientMessage::VT_REQUEST_ID);
    if slot + 2 > usize::from(u16_at(vtable)?) {
        return None;
    }
    let field = usize::from(u16_at(vtable + slot)?);
    if field == 0 {
        return None;
    }
    let at = table.checked_add(field)?;
    let mut out = frame.to_vec();
    out.get_mut(at..at + 8)?
        .copy_from_slice(&request_id.to_le_bytes());
    // The frame reads back as the same request under the new identity, or it is not sent.
    let check = crate::frame::check_slice::<crate::frame::ClientMessageRoot>(
        &out,
        crate::limits::FRAME_LIMIT,
    )
    .ok()?;
    (check.request_id() == request_id).then(|| Bytes::from(out))
}

/// A map keyed by identities that only grow: entries sit in a `VecDeque` in key order, so the
/// usual insert-at-the-back and remove-near-the-front of a session cost no allocation once the
/// deque has grown to the in-flight count.
#[derive(Debug)]
struct IdMap<V> {
    entries: VecDeque<(u64, V)>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
        }
    }
}

impl<V> IdMap<V> {
    fn find(&self, k: u64) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&k, |(key, _)| *key)
    }
    fn insert(&mut self, k: u64, v: V) {
        match self.find(k) {
            Ok(i) => self.entries[i].1 = v,
            Err(i) if i == self.entries.len() => self.entries.push_back((k, v)),
            Err(i) => self.entries.insert(i, (k, v)),
        }
    }
    fn get(&self, k: &u64) -> Option<&V> {
        self.find(*k).ok().map(|i| &self.entries[i].1)
    }
    fn get_mut(&mut self, k: &u64) -> Option<&mut V> {
        self.find(*k).ok().map(|i| &mut self.entries[i].1)
    }
    fn remove(&mut self, k: &u64) -> Option<V> {
        let i = self.find(*k).ok()?;
        self.entries.remove(i).map(|(_, v)| v)
    }
    fn keys(&self) -> impl Iterator<Item = &u64> {
        self.entries.iter().map(|(k, _)| k)
    }
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A bounded queue of unsolicited frames (C-7): past its capacity, in frames or in bytes,
/// frames are dropped, and the loss is counted in a marker at the point where it happened, so
/// a reader of the queue learns of the gap in order. Loss markers do not count toward the
/// capacity. A kept frame that shares its receive buffer with other data is copied out of it
/// (F-9), so what the queue holds is what its budget counts.
#[derive(Debug)]
pub(crate) struct UnsolicitedQueue {
    entries: VecDeque<Unsolicited>,
    frames: usize,
    bytes: usize,
    capacity: usize,
    budget: usize,
    dropped: u64,
}

impl UnsolicitedQueue {
    pub(crate) fn new(capacity: usize, budget: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            frames: 0,
            bytes: 0,
            capacity,
            budget,
            dropped: 0,
        }
    }

    /// Queues a frame (or carries over a loss marker from another queue).
    pub(crate) fn push(&mut self, u: Unsolicited) {
        let dropped = match u {
            Unsolicited::Frame(f)
                if self.frames < self.capacity
                    && self.bytes.saturating_add(f.len()) <= self.budget =>
            {
                self.frames += 1;
                self.bytes += f.len();
                self.entries.push_back(Unsolicited::Frame(f.retained()));
                return;
            }
            Unsolicited::Frame(_) => {
                self.dropped += 1;
                1
            }
            Unsolicited::Lost { dropped } => dropped,
        };
        match self.entries.back_mut() {
            Some(Unsolicited::Lost { dropped: d }) => *d += dropped,
            _ => {
                // Once per run of losses: the reader learns the count from the marker.
                tracing::warn!(
                    frames = self.frames,
                    bytes = self.bytes,
                    capacity = self.capacity,
                    budget = self.budget,
                    "nervix unsolicited queue full: frames dropped"
                );
                self.entries.push_back(Unsolicited::Lost { dropped })
            }
        }
    }

    /// Frames this queue dropped itself (not those a marker carried over).
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    pub(crate) fn pop(&mut self) -> Option<Unsolicited> {
        let u = self.entries.pop_front()?;
        if let Unsolicited::Frame(f) = &u {
            self.frames -= 1;
            self.bytes -= f.len();
        }
        Some(u)
    }

    /// Bytes of the frames held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(request_id: u64) -> Bytes {
        let request = ClientRequestT::CommandRequest(Box::new(CommandRequestT {
            query: "CREATE RELAY a;".into(),
            domain: Some("d".into()),
            execution_reference: "ref-1".into(),
            expected_transaction_position: Some(0),
            expected_preview: None,
        }));
        Encoder::new().encode_request(request_id, &request).unwrap()
    }

    #[test]
    fn c_5_renumbering_rewrites_the_identity_and_nothing_else() {
        let old = frame(7);
        let new = renumber(&old, 0x0102_0304_0506_0708).expect("renumbered");
        assert_eq!(old.len(), new.len());
        let differing = old.iter().zip(new.iter()).filter(|(a, b)| a != b).count();
        assert!(differing <= 8, "{differing} bytes changed");
        let read = |b: &Bytes| {
            crate::frame::check_slice::<crate::frame::ClientMessageRoot>(
                b,
                crate::limits::FRAME_LIMIT,
            )
            .unwrap()
            .unpack()
        };
        let (before, after) = (read(&old), read(&new));
        assert_eq!(after.request_id, 0x0102_0304_0506_0708);
        assert_eq!(
            after.request, before.request,
            "the request goes again exactly"
        );
    }

    #[test]
    fn c_5_a_frame_that_cannot_be_renumbered_never_goes_out_under_its_answered_identity() {
        // A frame that does not hold its identity where the exchange writes it.
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        let body = ListDomainsRequest::create(&mut fbb, &ListDomainsRequestArgs {});
        let root = ClientMessage::create(
            &mut fbb,
            &ClientMessageArgs {
                request_id: 0,
                request_type: ClientRequest::ListDomainsRequest,
                request: Some(body.as_union_value()),
            },
        );
        fbb.finish(root, Some("NXCM"));
        assert_eq!(renumber(fbb.finished_data(), 5), None);
        assert_eq!(renumber(&[0u8; 3], 5), None, "too short to hold a root");
        // Such a frame held after a refusal ends unsent; nothing is transmitted again.
        let mut x = Exchange::new(ExchangeConfig::default());
        let a = x
            .request(
                Timestamp::ZERO,
                &ClientRequestT::ListDomainsRequest(Box::default()),
                None,
            )
            .unwrap();
        let b = x
            .request(
                Timestamp::ZERO,
                &ClientRequestT::ListDomainsRequest(Box::default()),
                None,
            )
            .unwrap();
        while x.poll_transmit().is_some() {}
        if let Some(w) = x.waiters.get_mut(&2) {
            w.frame = Bytes::copy_from_slice(fbb.finished_data());
        }
        let reply = |id: u64, body: ReplyBodyT| {
            Encoder::new()
                .encode::<crate::frame::ServerMessageRoot>(&ServerMessageT {
                    body: ServerBodyT::Reply(Box::new(ReplyT {
                        request_id: id,
                        body,
                    })),
                })
                .unwrap()
        };
        let too_many = ReplyBodyT::RequestRejected(Box::new(RequestRejectedT {
            rejection: Some(RequestRejection::TooManyRequestsInFlight),
            field: None,
            message: String::new(),
        }));
        x.handle_frame(Timestamp::ZERO, reply(2, too_many));
        let list = ReplyBodyT::DomainList(Box::new(DomainListT { domains: vec![] }));
        x.handle_frame(Timestamp::ZERO, reply(1, list));
        let events: Vec<ExchangeEvent> = std::iter::from_fn(|| x.poll_event()).collect();
        assert!(matches!(&events[0], ExchangeEvent::Replied { handle, .. } if *handle == a));
        assert!(matches!(
            &events[1],
            ExchangeEvent::Interrupted { handle, cause: Interruption::NotAdmitted, sent: false }
                if *handle == b
        ));
        assert!(
            x.poll_transmit().is_none(),
            "not sent under the answered identity 2"
        );
    }
}
