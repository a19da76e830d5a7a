//! Where the attempt of a sending call stands, written once for the upload and the restore.
//!
//! Both calls stream an archive and then wait for one reply; an attempt that ends without that
//! reply leaves the call ready for another. What they share is the phase and one fact learnt on
//! the way: whether some attempt was cut off while its reply was awaited, after the whole archive
//! went out, so that it may have run on the server.

use super::sender::Sender;
use super::Need;
use crate::time::Timestamp;

/// The phase of the attempt under way.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Phase {
    /// No attempt open: the next is started by the call's `start`.
    Ready,
    /// Pieces of the archive are being sent; the next is due by `deadline`.
    Streaming { deadline: Timestamp },
    /// The whole archive went out; the reply is due by `deadline`.
    Awaiting { deadline: Timestamp },
    /// The call has its outcome; nothing more happens.
    Ended,
}

/// The phase and whether an attempt may have run without its outcome being learnt.
#[derive(Debug)]
pub(super) struct AttemptState {
    pub(super) phase: Phase,
    pub(super) ran: bool,
}

impl AttemptState {
    pub(super) fn new() -> Self {
        Self {
            phase: Phase::Ready,
            ran: false,
        }
    }

    /// What the call needs next: a start, the next piece (as `sender` says), the reply, or
    /// nothing more.
    pub(super) fn need(&self, sender: &Sender) -> Need {
        match self.phase {
            Phase::Ready => Need::Start,
            Phase::Streaming { .. } => sender.need(),
            Phase::Awaiting { .. } => Need::Reply,
            Phase::Ended => Need::Nothing,
        }
    }

    /// The call has its outcome.
    pub(super) fn end(&mut self) {
        self.phase = Phase::Ended;
    }

    /// The attempt under way is over without its reply; whether some attempt may have run.
    pub(super) fn interrupt(&mut self) -> bool {
        if matches!(self.phase, Phase::Awaiting { .. }) {
            self.ran = true;
        }
        self.phase = Phase::Ready;
        self.ran
    }

    /// The stream closed: `Some(uncertain)` when an attempt was open, `None` when there was none.
    pub(super) fn closed(&mut self) -> Option<bool> {
        match self.phase {
            Phase::Streaming { .. } | Phase::Awaiting { .. } => Some(self.interrupt()),
            _ => None,
        }
    }

    /// The deadline of the next piece or of the reply, when an attempt is open.
    pub(super) fn deadline(&self) -> Option<Timestamp> {
        match self.phase {
            Phase::Streaming { deadline } | Phase::Awaiting { deadline } => Some(deadline),
            _ => None,
        }
    }

    /// `Some(uncertain)` when the open attempt's deadline is at or before `now` (it is then
    /// over), `None` otherwise.
    pub(super) fn overdue(&mut self, now: Timestamp) -> Option<bool> {
        match self.deadline() {
            Some(d) if d <= now => Some(self.interrupt()),
            _ => None,
        }
    }

    /// Whether some attempt may have run and the call has no outcome yet.
    pub(super) fn is_uncertain(&self) -> bool {
        self.ran && self.phase != Phase::Ended
    }

    /// The call is given up; whether some attempt may have run.
    pub(super) fn abandon(&mut self) -> bool {
        if matches!(self.phase, Phase::Awaiting { .. }) {
            self.ran = true;
        }
        self.phase = Phase::Ended;
        self.ran
    }
}
