//! The life of one call the client repeats across sessions until it ends: waiting for a
//! session, out on one, or backing off, and whether any attempt may have reached the server.

use super::tracked::{EntryMut, Track, Tracked};
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

/// An entry that carries a [`Call`].
pub(crate) trait HasCall {
    fn call(&self) -> &Call;
    fn call_mut(&mut self) -> &mut Call;
}

/// The calls of one capability not yet ended, by handle, with what every kind of call needs:
/// back-offs, timers and deadlines. Only calls that wait to be sent (or back off) are looked at
/// when the client drains; deadlines sit in time order.
///
/// The loss of a session needs no sweep here: its exchange ends every request it still waits
/// for, one interruption each and before it reports its own end, so each call out on it learns
/// of the loss through its own request, with whether that attempt was handed to the transport.
#[derive(Debug)]
pub(crate) struct Calls<H, E> {
    entries: Tracked<H, E>,
    next: u64,
}

impl<H, E> Default for Calls<H, E> {
    fn default() -> Self {
        Self {
            entries: Tracked::default(),
            next: 0,
        }
    }
}

/// Whether a call waits to be sent or backs off: only such calls can be due or hold a timer
/// besides their deadline.
pub(crate) fn call_pending(call: &Call) -> bool {
    matches!(call.state, CallState::Waiting | CallState::Backoff(_))
}

impl<H: Ord + Copy, E: HasCall + Track> Calls<H, E> {
    /// Adds an entry under a new handle made from the next number.
    pub(crate) fn insert(&mut self, handle: impl FnOnce(u64) -> H, entry: E) -> H {
        self.next += 1;
        let h = handle(self.next);
        self.entries.insert(h, entry);
        h
    }

    pub(crate) fn get(&self, h: H) -> Option<&E> {
        self.entries.get(&h)
    }

    pub(crate) fn get_mut(&mut self, h: H) -> Option<EntryMut<'_, H, E>> {
        self.entries.get_mut(&h)
    }

    pub(crate) fn remove(&mut self, h: H) -> Option<E> {
        self.entries.remove(&h)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The calls waiting to be sent or backing off, in handle order.
    pub(crate) fn pending(&self) -> impl Iterator<Item = (&H, &E)> {
        self.entries.pending()
    }

    /// Whether any call carries its capability's mark.
    pub(crate) fn any_marked(&self) -> bool {
        self.entries.any_marked()
    }

    /// Back-offs that ended while their calls could not go wait for a session instead.
    pub(crate) fn settle_backoffs(&mut self, now: Timestamp) {
        self.entries
            .for_each_pending_mut(|_, e| e.call_mut().settle_backoff(now));
    }

    /// When calls next have something for `handle_timeout` to do: the earliest deadline and
    /// every back-off.
    pub(crate) fn timers(&self) -> impl Iterator<Item = Timestamp> + '_ {
        self.entries
            .first_deadline()
            .into_iter()
            .chain(self.entries.pending().map(|(_, e)| e.call().timer()))
    }

    /// Calls whose deadline is not after `now`, in handle order.
    pub(crate) fn expired(&self, now: Timestamp) -> Vec<H> {
        self.entries.expired(now)
    }
}
