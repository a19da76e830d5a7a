//! The life of one call the client repeats across sessions until it ends: waiting for a
//! session, out on one, or backing off, and whether any attempt may have reached the server.

use super::SessionId;
use crate::exchange::RequestHandle;
use crate::time::Timestamp;

/// Where a call's current attempt is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum CallState {
    /// Ready to go on the next session that can carry it.
    Waiting,
    /// Registered on a session's exchange (sent, or queued behind its in-flight limit).
    InFlight(SessionId, RequestHandle),
    /// Waiting until then before the next attempt.
    Backoff(Timestamp),
}

/// A call's shared state, whatever it asks for.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// The order calls were made in: due calls go out in this order.
    pub seq: u64,
    /// The call's own deadline (D-4).
    pub deadline: Timestamp,
    pub state: CallState,
    /// Attempts registered on a session.
    pub attempts: u32,
    /// Whether any attempt's frame was handed to the transport and not refused as
    /// `TooManyRequestsInFlight`: only then may the call have had an effect.
    pub ran: bool,
    /// `ran` as it was when the current attempt was registered: a refusal of this attempt
    /// says nothing of the earlier ones.
    pub ran_before: bool,
}

impl Call {
    pub(crate) fn new(seq: u64, deadline: Timestamp) -> Self {
        Self {
            seq,
            deadline,
            state: CallState::Waiting,
            attempts: 0,
            ran: false,
            ran_before: false,
        }
    }

    /// Whether the call should be sent now.
    pub(crate) fn due(&self, now: Timestamp) -> bool {
        match self.state {
            CallState::Waiting => true,
            CallState::Backoff(t) => t <= now,
            CallState::InFlight(..) => false,
        }
    }

    /// A back-off that ended waits for a session instead of keeping a timer.
    pub(crate) fn settle_backoff(&mut self, now: Timestamp) {
        if matches!(self.state, CallState::Backoff(t) if t <= now) {
            self.state = CallState::Waiting;
        }
    }

    /// The earliest time `handle_timeout` has work for this call.
    pub(crate) fn timer(&self) -> Timestamp {
        match self.state {
            CallState::Backoff(t) => t.min(self.deadline),
            _ => self.deadline,
        }
    }

    /// The attempt registered on `session`, if any.
    pub(crate) fn on(&self, session: SessionId) -> Option<RequestHandle> {
        match self.state {
            CallState::InFlight(s, r) if s == session => Some(r),
            _ => None,
        }
    }

    /// An attempt was registered on a session.
    pub(crate) fn registered(&mut self, session: SessionId, request: RequestHandle) {
        self.ran_before = self.ran;
        self.state = CallState::InFlight(session, request);
        self.attempts = self.attempts.saturating_add(1);
    }

    /// The current attempt ended without a reply; `sent` says whether it may have run.
    pub(crate) fn interrupted(&mut self, sent: bool) {
        self.ran |= sent;
        self.state = CallState::Waiting;
    }

    /// The current attempt got a reply that asks for another attempt, at once or from `at`;
    /// `ran` says whether the reply leaves open that this attempt had an effect.
    pub(crate) fn again(&mut self, at: Option<Timestamp>, ran: bool) {
        self.ran |= ran;
        self.state = at.map_or(CallState::Waiting, CallState::Backoff);
    }
}
