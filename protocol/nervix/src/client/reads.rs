//! Requests that are not commands: reads (domains, suggestions, choices, inspections) and the
//! session requests the subscription, clock and transaction modules ask for. Each is repeated
//! on a new session when its session is lost, until its deadline, and ends exactly once with
//! its reply or as timed out.

use super::call::{call_pending, Call, Calls, HasCall};
use super::tracked::Track;
use super::Purpose;
use super::{ClientError, ClientEvent, Session};
use crate::frame::ServerFrame;
use crate::schema::*;
use crate::time::Timestamp;
use std::time::Duration;

/// A read (or other non-command request) the application sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadHandle(pub u64);

/// How a read ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ReadResult {
    /// Its reply (a checked frame whose body is a `Reply`).
    Replied(ServerFrame),
    /// Its deadline passed.
    TimedOut,
    /// It could not be sent and never will be: it certainly had no effect.
    NotSent,
}

#[derive(Debug, Clone)]
pub(crate) struct ReadEntry {
    pub request: ClientRequestT,
    pub call: Call,
}

impl ReadEntry {
    /// Whether L-3 forbids sending it while a transaction is held: attaching another
    /// transaction. (Subscriptions and clocks are calls of their own modules.)
    pub(crate) fn restricted(&self) -> bool {
        matches!(self.request, ClientRequestT::AttachTransactionRequest(_))
    }
}

impl Track for ReadEntry {
    fn pending(&self) -> bool {
        call_pending(&self.call)
    }
    /// An attach of a transaction by its identity.
    fn marked(&self) -> bool {
        matches!(self.request, ClientRequestT::AttachTransactionRequest(_))
    }
    fn deadline(&self) -> Option<Timestamp> {
        Some(self.call.deadline)
    }
}

impl HasCall for ReadEntry {
    fn call(&self) -> &Call {
        &self.call
    }
    fn call_mut(&mut self) -> &mut Call {
        &mut self.call
    }
}

/// The reads not yet ended.
pub(crate) type Reads = Calls<ReadHandle, ReadEntry>;

impl Reads {
    pub(crate) fn add(
        &mut self,
        seq: u64,
        request: ClientRequestT,
        deadline: Timestamp,
    ) -> ReadHandle {
        let call = Call::new(seq, deadline);
        self.insert(ReadHandle, ReadEntry { request, call })
    }

    /// The reads due now, in the order they were made; `restricted_ok` says whether L-3
    /// allows the restricted ones now.
    pub(crate) fn due(&self, now: Timestamp, restricted_ok: bool, out: &mut Vec<(u64, Purpose)>) {
        for (h, e) in self.pending() {
            if e.call.due(now) && (restricted_ok || !e.restricted()) {
                out.push((e.call.seq, Purpose::Read(*h)));
            }
        }
    }
}

/// Whether a reply refuses its read as busy: the read may be repeated later (C-8).
pub(crate) fn is_busy(frame: &ServerFrame) -> bool {
    frame
        .view()
        .body_as_reply()
        .and_then(|r| r.body_as_request_rejected())
        .is_some_and(|r| r.rejection() == Some(RequestRejection::ServerBusy))
}

impl super::Client {
    /// Sends a read (or other request that changes nothing) and repeats it on a new session
    /// if its session is lost, until its deadline.
    pub fn read(
        &mut self,
        now: Timestamp,
        request: ClientRequestT,
        deadline: Option<Duration>,
    ) -> Result<ReadHandle, ClientError> {
        match request.client_request_type() {
            ClientRequest::ListDomainsRequest
            | ClientRequest::SuggestRequest
            | ClientRequest::ChoiceLookupRequest
            | ClientRequest::InspectTransactionRequest
            | ClientRequest::SelectDomainRequest => {}
            _ => return Err(ClientError::NotARead),
        }
        self.add_read(now, request, deadline)
    }

    pub(super) fn add_read(
        &mut self,
        now: Timestamp,
        request: ClientRequestT,
        deadline: Option<Duration>,
    ) -> Result<ReadHandle, ClientError> {
        self.check_sendable(&request)?;
        let seq = self.seq();
        let deadline = now + deadline.unwrap_or(self.config.call_timeout);
        let h = self.reads.add(seq, request, deadline);
        self.drive(now);
        Ok(h)
    }

    pub(super) fn send_read(&mut self, now: Timestamp, h: ReadHandle) {
        let Some(e) = self.reads.get(h) else { return };
        let (request, deadline) = (e.request.clone(), e.call.deadline);
        match self.send(now, Purpose::Read(h), &request, deadline) {
            Ok((sid, r)) => {
                if let Some(mut e) = self.reads.get_mut(h) {
                    e.call.registered(sid, r);
                }
            }
            Err(None) => {}
            Err(Some(_)) => {
                self.reads.remove(h);
                self.events.push_back(ClientEvent::Read {
                    handle: h,
                    result: ReadResult::NotSent,
                });
            }
        }
    }

    pub(super) fn on_read_reply(
        &mut self,
        now: Timestamp,
        s: &mut Session,
        h: ReadHandle,
        frame: ServerFrame,
    ) {
        if is_busy(&frame) {
            // C-8: a read refused as busy may be repeated later.
            let attempts = self.reads.get(h).map_or(0, |e| e.call.attempts);
            let at = now + self.backoff(attempts);
            if let Some(mut e) = self.reads.get_mut(h) {
                e.call.again(Some(at), false);
            }
            return;
        }
        let Some(request) = self.reads.get(h).map(|e| e.request.clone()) else {
            return;
        };
        match &request {
            ClientRequestT::AttachTransactionRequest(_)
                if self.on_attach_reply(now, s, &frame, Some(h)) =>
            {
                return;
            }
            ClientRequestT::InspectTransactionRequest(_) => {
                // the whole attached transaction inspected at its current position is
                // the preview the user reviewed.
                if let Some(i) = frame
                    .view()
                    .body_as_reply()
                    .and_then(|r| r.body_as_inspection_outcome())
                    .and_then(|o| o.disposition_as_transaction_inspected())
                {
                    self.tx
                        .binding
                        .inspected(&crate::transaction::InspectedPreview::of(i));
                }
            }
            ClientRequestT::SelectDomainRequest(_) => {
                let selected = frame
                    .view()
                    .body_as_reply()
                    .and_then(|r| r.body_as_domain_selection_outcome())
                    .and_then(|o| o.selection_as_domain_selected())
                    .map(|d| d.domain().to_string());
                if selected.is_some() && !self.tx.binding.is_holding() {
                    self.selected_domain = selected;
                }
            }
            _ => {}
        }
        self.reads.remove(h);
        self.redirect_streak = 0;
        // A reply sharing its receive buffer is copied out of it before the application
        // keeps it, so it does not keep the whole buffer alive (F-9).
        self.events.push_back(ClientEvent::Read {
            handle: h,
            result: ReadResult::Replied(frame.retained()),
        });
    }
}
