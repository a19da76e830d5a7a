//! Domain clocks the client follows (K-1 to K-5): attaching and detaching them, applying
//! their state and ticks in order, and attaching them again on every new session, first of all
//! the session state (D-5).
//!
//! A followed clock is known by its domain. What the application learns comes from
//! [`Client::poll_clock_event`]; the clock as it stands, with its newest accepted tick, from
//! [`Client::clock`]. The queue of clock events holds at most one event of each kind per
//! domain: a newer state or tick replaces one the application has not read (K-3: state changes
//! and ticks may be coalesced, only the newest tick of a generation is kept). A replaced event
//! leaves its place and the newer one goes last, so the events keep the order things happened
//! in and the last one read about a domain agrees with [`Client::clock`].
//!
//! A detach asked for while the attach is unanswered goes behind it (K-1). The attach's reply
//! is still applied: its clock and later ticks update [`Client::clock`] without events (the
//! application asked to stop), and its DomainNotFound or refusal ends the attachment. When the
//! detach is then refused, the clock stands as the attach left it, and what the application
//! did not hear meanwhile is reported after [`ClockEvent::DetachRefused`].

use super::tracked::{Track, Tracked};
use super::{Client, ClientError, Purpose, SessionId};
use crate::domain_clock::{ClockState, DomainClock, Tick};
use crate::frame::ServerFrame;
use crate::schema::*;
use crate::time::Timestamp;
use crate::violation::ProtocolViolation;
use std::collections::VecDeque;

/// Something the application learns about a followed clock.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClockEvent {
    /// The session attached the clock; here it is as the serving node installed it (K-1).
    Attached {
        /// The domain.
        domain: String,
        /// Its clock.
        clock: DomainClock,
    },
    /// The session already held the attachment (K-5): the clock last received stands, without
    /// a tick, until the session's later frames say more.
    AlreadyAttached {
        /// The domain.
        domain: String,
    },
    /// The installed clock changed (K-2, K-3); it is the newest one.
    Changed {
        /// The domain.
        domain: String,
        /// Its clock.
        clock: DomainClock,
    },
    /// The newest accepted tick of the clock's paced generation (K-3).
    Ticked {
        /// The domain.
        domain: String,
        /// The tick.
        tick: Tick,
    },
    /// The session that held the attachment ended; the clock is attached again on the next
    /// session, and nothing of what happened in between was seen (K-5).
    Interrupted {
        /// The domain.
        domain: String,
    },
    /// An attach on a new session was refused; it goes again after a growing wait (K-5).
    Refused {
        /// The domain.
        domain: String,
        /// The server's words.
        message: String,
    },
    /// A detach was refused; the clock is still followed.
    DetachRefused {
        /// The domain.
        domain: String,
        /// The server's words.
        message: String,
    },
    /// The clock is followed no more; nothing about it follows.
    Ended {
        /// The domain.
        domain: String,
        /// Why.
        reason: ClockEnd,
    },
}

impl ClockEvent {
    /// The domain the event is about.
    pub fn domain(&self) -> &str {
        match self {
            Self::Attached { domain, .. }
            | Self::AlreadyAttached { domain }
            | Self::Changed { domain, .. }
            | Self::Ticked { domain, .. }
            | Self::Interrupted { domain }
            | Self::Refused { domain, .. }
            | Self::DetachRefused { domain, .. }
            | Self::Ended { domain, .. } => domain,
        }
    }

    /// Events of one kind and domain replace each other while unread.
    fn same_kind(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.domain() == other.domain()
    }
}

/// Why a clock is followed no more.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClockEnd {
    /// The application detached it; no session holds it now (K-1).
    Detached,
    /// The domain is gone from the serving node (DomainClockAttachmentEnded, K-2).
    DomainRemoved,
    /// An attach found no such domain (K-5).
    DomainNotFound,
    /// The application's attach was refused.
    Refused {
        /// The server's words.
        message: String,
    },
}

/// Where a followed clock's attachment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClockStatus {
    /// Waiting for a session, or for the wait after a refusal.
    Waiting,
    /// The attach is out.
    Attaching,
    /// The current session holds the attachment.
    Attached,
    /// The application asked to detach it.
    Detaching,
}

/// A followed clock, as [`Client::clock`] reports it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ClockInfo {
    /// Where its attachment stands.
    pub status: ClockStatus,
    /// The clock last received, if any.
    pub clock: Option<DomainClock>,
    /// The newest accepted tick of the clock's current generation, if any.
    pub tick: Option<Tick>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Waiting,
    Backoff(Timestamp),
    Attaching(SessionId),
    Attached(SessionId),
}

impl Track for Entry {
    /// Waiting to be attached, backing off, or attached with its detach not yet out.
    fn pending(&self) -> bool {
        match self.phase {
            Phase::Waiting | Phase::Backoff(_) => true,
            Phase::Attaching(_) | Phase::Attached(_) => self.detach && self.detaching.is_none(),
        }
    }
}

#[derive(Debug)]
struct Entry {
    seq: u64,
    /// Where the attachment stands, whatever detach is out behind it.
    phase: Phase,
    ever_attached: bool,
    /// The application asked to detach it.
    detach: bool,
    /// The detach is out on that session.
    detaching: Option<SessionId>,
    /// The attach a detach went behind ended the attachment (DomainNotFound, or a first
    /// attach refused); the entry stays until the detach is answered, so no attach of the
    /// domain is decided meanwhile (K-1).
    gone: Option<ClockEnd>,
    /// Something happened to the clock while the detach was out that no event said.
    unreported: bool,
    refusals: u32,
    clock: Option<DomainClock>,
    /// The newest accepted tick: the frontier later ticks must advance (K-3).
    tick: Option<Tick>,
}

impl Entry {
    fn status(&self) -> ClockStatus {
        match self.phase {
            _ if self.detach => ClockStatus::Detaching,
            Phase::Waiting | Phase::Backoff(_) => ClockStatus::Waiting,
            Phase::Attaching(_) => ClockStatus::Attaching,
            Phase::Attached(_) => ClockStatus::Attached,
        }
    }
}

/// The clocks the client follows.
#[derive(Debug, Default)]
pub(crate) struct Clocks {
    entries: Tracked<String, Entry>,
    events: VecDeque<ClockEvent>,
    ignored: u64,
}

pub(crate) fn attach_request(domain: &str) -> ClientRequestT {
    ClientRequestT::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
        domain: domain.to_string(),
    }))
}

pub(crate) fn detach_request(domain: &str) -> ClientRequestT {
    ClientRequestT::DetachDomainClockRequest(Box::new(DetachDomainClockRequestT {
        domain: domain.to_string(),
    }))
}

/// What an attach reply said.
#[derive(Debug)]
enum AttachReply {
    Attached(Option<DomainClock>),
    AlreadyAttached,
    DomainNotFound,
    Busy,
    Refused(String),
}

/// A reply that names another domain than its request answers nothing the client asked: a
/// protocol violation (K-1).
fn check_domain(asked: &str, named: &str, what: &str) -> Result<(), ProtocolViolation> {
    if asked == named {
        return Ok(());
    }
    Err(ProtocolViolation::Endpoint {
        rule: "K-1",
        what: format!("the {what} of clock {asked:?} names domain {named:?}"),
    })
}

fn read_attach(domain: &str, frame: &ServerFrame) -> Result<AttachReply, ProtocolViolation> {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return Ok(AttachReply::Refused(String::new()));
    };
    if let Some(r) = reply.body_as_request_rejected() {
        if r.rejection() == Some(RequestRejection::ServerBusy) {
            return Ok(AttachReply::Busy);
        }
        return Ok(AttachReply::Refused(r.message().to_string()));
    }
    let Some(o) = reply.body_as_domain_clock_attach_outcome() else {
        // RequestCancelled attaches nothing (K-1).
        return Ok(AttachReply::Refused(
            reply
                .body_type()
                .variant_name()
                .unwrap_or("an undeclared reply")
                .to_string(),
        ));
    };
    Ok(if let Some(a) = o.disposition_as_domain_clock_attached() {
        check_domain(domain, a.domain(), "attach reply")?;
        AttachReply::Attached(DomainClock::from_view(a.clock()).ok())
    } else if let Some(a) = o.disposition_as_domain_clock_already_attached() {
        check_domain(domain, a.domain(), "attach reply")?;
        AttachReply::AlreadyAttached
    } else if let Some(n) = o.disposition_as_domain_not_found() {
        check_domain(domain, n.domain(), "attach reply")?;
        AttachReply::DomainNotFound
    } else {
        AttachReply::Refused(o.message().to_string())
    })
}

/// Whether a detach reply says no session holds the clock now (K-1).
fn read_detach(domain: &str, frame: &ServerFrame) -> Result<Result<(), String>, ProtocolViolation> {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return Ok(Err(String::new()));
    };
    if let Some(c) = reply.body_as_request_cancelled() {
        // A detach cancelled after admission has detached; before admission it did nothing.
        return Ok(if c.stage() == Some(CancellationStage::AfterAdmission) {
            Ok(())
        } else {
            Err("cancelled before admission".into())
        });
    }
    if let Some(r) = reply.body_as_request_rejected() {
        return Ok(Err(r.message().to_string()));
    }
    let Some(o) = reply.body_as_domain_clock_detach_outcome() else {
        return Ok(Err(String::new()));
    };
    if let Some(d) = o.disposition_as_domain_clock_detached() {
        check_domain(domain, d.domain(), "detach reply")?;
        return Ok(Ok(()));
    }
    if let Some(d) = o.disposition_as_domain_clock_not_attached() {
        check_domain(domain, d.domain(), "detach reply")?;
        return Ok(Ok(()));
    }
    Ok(Err(o.message().to_string()))
}

fn paced_generation(clock: &DomainClock) -> Option<u64> {
    matches!(clock.state, ClockState::Paced(_)).then_some(clock.generation)
}

impl Clocks {
    /// Queues an event. An unread one of the same kind and domain is replaced (K-3): it
    /// leaves its place and the new one goes last, so the queue keeps the order things
    /// happened in and holds at most one event of each kind per domain.
    fn push(&mut self, event: ClockEvent) {
        self.events.retain(|e| !e.same_kind(&event));
        self.events.push_back(event);
    }

    /// Unread ticks of `domain` are discarded (K-3: on detach and on loss); with `keep`, only
    /// those of another generation.
    fn discard_ticks(&mut self, domain: &str, keep: Option<u64>) {
        self.events.retain(|e| match e {
            ClockEvent::Ticked { domain: d, tick } if d == domain => {
                Some(tick.generation.get()) == keep
            }
            _ => true,
        });
    }

    fn end(&mut self, domain: &str, reason: ClockEnd) {
        if self.entries.remove(domain).is_some() {
            self.discard_ticks(domain, None);
            self.push(ClockEvent::Ended {
                domain: domain.to_string(),
                reason,
            });
        }
    }

    /// Queues an event about the clock's attachment, unless the application is detaching it:
    /// then the state changes silently, and is reported if the detach is refused.
    fn tell(&mut self, event: ClockEvent) {
        match self.entries.touch(event.domain()) {
            Some(e) if e.detach => e.unreported = true,
            _ => self.push(event),
        }
    }

    pub(crate) fn poll(&mut self) -> Option<ClockEvent> {
        self.events.pop_front()
    }

    pub(crate) fn info(&self, domain: &str) -> Option<ClockInfo> {
        self.entries.get(domain).map(|e| ClockInfo {
            status: e.status(),
            clock: e.clock.clone(),
            tick: e.tick,
        })
    }

    /// Whether the client follows `domain`'s clock.
    pub(crate) fn follows(&self, domain: &str) -> bool {
        self.entries.get(domain).is_some_and(|e| !e.detach)
    }

    /// Attaches and detaches due now on `session`, with the order they were decided in.
    /// With `fresh_ok` false, only clocks attached before (restorations) count.
    pub(crate) fn due(
        &self,
        now: Timestamp,
        session: SessionId,
        fresh_ok: bool,
        out: &mut Vec<(u64, Purpose)>,
    ) {
        for (d, e) in self.entries.pending() {
            let may = fresh_ok || e.ever_attached;
            if e.detach {
                // K-1: no attach is decided while a detach is asked for; the detach goes once,
                // on the session of the attachment.
                if e.detaching.is_none()
                    && matches!(e.phase, Phase::Attaching(s) | Phase::Attached(s) if s == session)
                {
                    out.push((e.seq, Purpose::ClockDetach(d.clone())));
                }
                continue;
            }
            match e.phase {
                Phase::Waiting if may => out.push((e.seq, Purpose::ClockAttach(d.clone()))),
                Phase::Backoff(t) if t <= now && may => {
                    out.push((e.seq, Purpose::ClockAttach(d.clone())))
                }
                _ => {}
            }
        }
    }

    pub(crate) fn wants_session(&self) -> bool {
        self.entries
            .pending()
            .any(|(_, e)| !e.detach && matches!(e.phase, Phase::Waiting | Phase::Backoff(_)))
    }

    pub(crate) fn timers(&self) -> impl Iterator<Item = Timestamp> + '_ {
        self.entries.pending().filter_map(|(_, e)| match e.phase {
            Phase::Backoff(t) if !e.detach => Some(t),
            _ => None,
        })
    }

    pub(crate) fn settle_backoffs(&mut self, now: Timestamp) {
        self.entries.for_each_pending_mut(|_, e| {
            if matches!(e.phase, Phase::Backoff(t) if t <= now) {
                e.phase = Phase::Waiting;
            }
        });
    }

    fn sent(&mut self, p: &Purpose, session: SessionId) {
        match p {
            Purpose::ClockAttach(d) => {
                if let Some(e) = self.entries.touch(d) {
                    e.phase = Phase::Attaching(session);
                }
            }
            Purpose::ClockDetach(d) => {
                if let Some(e) = self.entries.touch(d) {
                    e.detaching = Some(session);
                }
            }
            _ => {}
        }
    }

    /// An attach was answered (K-1, K-5), whatever detach went out behind it. Returns the
    /// refusal count to back off by when the attach is to go again on this session.
    fn on_attach(
        &mut self,
        domain: &str,
        session: SessionId,
        frame: &ServerFrame,
    ) -> Result<Option<u32>, ProtocolViolation> {
        let Some(e) = self.entries.touch(domain) else {
            return Ok(None);
        };
        if e.phase != Phase::Attaching(session) {
            return Ok(None);
        }
        let reply = read_attach(domain, frame)?;
        let e = self.entries.touch(domain).expect("looked up above");
        Ok(match reply {
            AttachReply::Attached(clock) => {
                e.phase = Phase::Attached(session);
                e.ever_attached = true;
                e.refusals = 0;
                // K-5: a move keeps the newest tick of a clock that stays paced in the same
                // generation; anything else starts without one.
                let keep = clock.as_ref().and_then(paced_generation);
                if e.tick.is_some_and(|t| Some(t.generation.get()) != keep) {
                    e.tick = None;
                }
                e.clock = clock.clone();
                self.discard_ticks(domain, keep);
                if let Some(clock) = clock {
                    self.tell(ClockEvent::Attached {
                        domain: domain.to_string(),
                        clock,
                    });
                }
                None
            }
            AttachReply::AlreadyAttached => {
                // K-5: the session holds it; keep the clock last received, without a tick.
                e.phase = Phase::Attached(session);
                e.ever_attached = true;
                e.refusals = 0;
                e.tick = None;
                self.discard_ticks(domain, None);
                self.tell(ClockEvent::AlreadyAttached {
                    domain: domain.to_string(),
                });
                None
            }
            AttachReply::DomainNotFound if e.detach => {
                // K-5: the domain no longer exists; the attachment ends once the detach
                // behind it is answered, whatever that answer is.
                e.phase = Phase::Waiting;
                e.gone = Some(ClockEnd::DomainNotFound);
                None
            }
            AttachReply::DomainNotFound => {
                // K-5: the domain no longer exists; the attachment ends.
                self.end(domain, ClockEnd::DomainNotFound);
                None
            }
            AttachReply::Busy => {
                e.refusals = e.refusals.saturating_add(1);
                Some(e.refusals - 1)
            }
            AttachReply::Refused(message) if !e.ever_attached && e.detach => {
                e.phase = Phase::Waiting;
                e.gone = Some(ClockEnd::Refused { message });
                None
            }
            AttachReply::Refused(message) if !e.ever_attached => {
                self.end(domain, ClockEnd::Refused { message });
                None
            }
            AttachReply::Refused(message) => {
                // K-5: kept interrupted, never dropped; asked again after a growing wait.
                e.refusals = e.refusals.saturating_add(1);
                let attempt = e.refusals - 1;
                self.push(ClockEvent::Refused {
                    domain: domain.to_string(),
                    message,
                });
                Some(attempt)
            }
        })
    }

    fn on_detach(
        &mut self,
        domain: &str,
        session: SessionId,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        let Some(e) = self.entries.touch(domain) else {
            return Ok(());
        };
        if e.detaching != Some(session) {
            return Ok(());
        }
        match read_detach(domain, frame)? {
            Ok(()) => self.end(domain, ClockEnd::Detached),
            Err(message) => {
                e.detach = false;
                e.detaching = None;
                let gone = e.gone.take();
                let unreported = std::mem::take(&mut e.unreported);
                self.push(ClockEvent::DetachRefused {
                    domain: domain.to_string(),
                    message,
                });
                if let Some(reason) = gone {
                    // The attach in front of the detach ended the attachment.
                    self.end(domain, reason);
                } else if unreported {
                    self.report_state(domain);
                }
            }
        }
        Ok(())
    }

    /// Tells the application where a clock stands after changes it was not told of.
    fn report_state(&mut self, domain: &str) {
        let Some(e) = self.entries.get(domain) else {
            return;
        };
        if !matches!(e.phase, Phase::Attached(_)) {
            return;
        }
        let domain = domain.to_string();
        let tick = e.tick;
        self.push(match e.clock.clone() {
            Some(clock) => ClockEvent::Attached {
                domain: domain.clone(),
                clock,
            },
            None => ClockEvent::AlreadyAttached {
                domain: domain.clone(),
            },
        });
        if let Some(tick) = tick {
            self.push(ClockEvent::Ticked { domain, tick });
        }
    }

    /// An unsolicited clock frame (K-2, K-3). Returns false for frames of other kinds.
    pub(crate) fn on_frame(&mut self, session: SessionId, frame: &ServerFrame) -> bool {
        let view = frame.view();
        match view.body_type() {
            ServerBody::DomainClockObserved => {
                let Some(o) = view.body_as_domain_clock_observed() else {
                    return true;
                };
                let domain = o.domain();
                let Some(e) = self
                    .entries
                    .touch(domain)
                    .filter(|e| e.phase == Phase::Attached(session))
                else {
                    self.ignored += 1;
                    return true;
                };
                let Ok(clock) = DomainClock::from_view(o.clock()) else {
                    self.ignored += 1;
                    return true;
                };
                // K-3: the newest installed clock; a tick of another generation, or any tick
                // of a clock that is not paced, no longer stands.
                let keep = paced_generation(&clock);
                if e.tick.is_some_and(|t| Some(t.generation.get()) != keep) {
                    e.tick = None;
                }
                e.clock = Some(clock.clone());
                let domain = domain.to_string();
                self.discard_ticks(&domain, keep);
                self.tell(ClockEvent::Changed { domain, clock });
                true
            }
            ServerBody::DomainClockTicked => {
                let Some(t) = view.body_as_domain_clock_ticked() else {
                    return true;
                };
                let domain = t.domain();
                let accepted = match (self.entries.touch(domain), Tick::from_view(t)) {
                    (Some(e), Ok(tick))
                        if e.phase == Phase::Attached(session)
                            // K-2: only against the state of the tick's own generation.
                            && e.clock.as_ref().and_then(paced_generation)
                                == Some(tick.generation.get())
                            // K-3: a tick that does not advance is ignored.
                            && e.tick.is_none_or(|old| {
                                old.generation != tick.generation || tick.tick_id > old.tick_id
                            }) =>
                    {
                        e.tick = Some(tick);
                        Some(tick)
                    }
                    _ => None,
                };
                match accepted {
                    Some(tick) => self.tell(ClockEvent::Ticked {
                        domain: domain.to_string(),
                        tick,
                    }),
                    None => self.ignored += 1,
                }
                true
            }
            ServerBody::DomainClockAttachmentEnded => {
                let Some(a) = view.body_as_domain_clock_attachment_ended() else {
                    return true;
                };
                let domain = a.domain();
                if self.entries.get(domain).is_some_and(|e| {
                    e.phase == Phase::Attached(session) || e.detaching == Some(session)
                }) {
                    // K-2: the attachment's last frame.
                    let detaching = self.entries.get(domain).is_some_and(|e| e.detach);
                    let reason = if detaching {
                        ClockEnd::Detached
                    } else {
                        ClockEnd::DomainRemoved
                    };
                    self.end(domain, reason);
                } else {
                    self.ignored += 1;
                }
                true
            }
            _ => false,
        }
    }

    /// `session` ended. A `moved` session was left by the client for another node (a
    /// redirect): the newest tick is kept for the move (K-5). Any other loss clears the tick
    /// frontier and discards unread ticks (K-3, K-5). A detach out on it, or waiting for L-3,
    /// is complete: no session holds the clock now (K-1).
    pub(crate) fn lost(&mut self, session: SessionId, moved: bool) {
        let domains: Vec<String> = self.entries.keys().cloned().collect();
        for d in domains {
            let Some(e) = self.entries.touch(&d) else {
                continue;
            };
            if e.detach {
                self.end(&d, ClockEnd::Detached);
                continue;
            }
            match e.phase {
                Phase::Backoff(_) => e.phase = Phase::Waiting,
                Phase::Attaching(s) | Phase::Attached(s) if s == session => {
                    let was_attached = matches!(e.phase, Phase::Attached(_));
                    e.phase = Phase::Waiting;
                    e.refusals = 0;
                    if !moved {
                        e.tick = None;
                        self.discard_ticks(&d, None);
                    }
                    if was_attached {
                        self.push(ClockEvent::Interrupted { domain: d });
                    }
                }
                _ => {}
            }
        }
    }
}

impl Client {
    /// Follows `domain`'s clock (K-1): attaches it now and again on every later session,
    /// before anything else is restored (D-5, K-5). Its events come from
    /// [`Client::poll_clock_event`]. A domain is followed at most once; refused while a
    /// transaction is held (L-3) and while a detach of the domain is unanswered.
    pub fn follow_clock(&mut self, now: Timestamp, domain: &str) -> Result<(), ClientError> {
        self.check_name("domain", domain)?;
        self.outside_transaction()?;
        self.check_sendable(&attach_request(domain))?;
        if let Some(e) = self.clocks.entries.get(domain) {
            return Err(if e.detach {
                ClientError::DetachInProgress
            } else {
                ClientError::AlreadyFollowing
            });
        }
        let seq = self.seq();
        self.clocks.entries.insert(
            domain.to_string(),
            Entry {
                seq,
                phase: Phase::Waiting,
                ever_attached: false,
                detach: false,
                detaching: None,
                gone: None,
                unreported: false,
                refusals: 0,
                clock: None,
                tick: None,
            },
        );
        self.drive(now);
        Ok(())
    }

    /// Stops following `domain`'s clock (K-1). An attach already out goes first and the
    /// detach behind it on the same session; a clock no session holds ends at once. It ends
    /// with [`ClockEnd::Detached`] once no session holds it. Refused while a transaction is
    /// held (L-3).
    pub fn detach_clock(&mut self, now: Timestamp, domain: &str) -> Result<(), ClientError> {
        self.check_name("domain", domain)?;
        self.outside_transaction()?;
        let Some(e) = self.clocks.entries.touch(domain) else {
            return Err(ClientError::NotFollowing);
        };
        if e.detach {
            return Err(ClientError::DetachInProgress);
        }
        e.seq = self.next_seq + 1;
        self.next_seq += 1;
        e.detach = true;
        if matches!(e.phase, Phase::Waiting | Phase::Backoff(_)) {
            self.clocks.end(domain, ClockEnd::Detached);
        }
        self.drive(now);
        Ok(())
    }

    /// Whether the client follows `domain`'s clock.
    pub fn follows_clock(&self, domain: &str) -> bool {
        self.clocks.follows(domain)
    }

    /// A followed clock as it stands: its attachment, the clock last received and its newest
    /// accepted tick.
    pub fn clock(&self, domain: &str) -> Option<ClockInfo> {
        self.clocks.info(domain)
    }

    /// The next clock event.
    #[must_use]
    pub fn poll_clock_event(&mut self) -> Option<ClockEvent> {
        self.clocks.poll()
    }

    /// Clock frames ignored: about a domain not followed, out of order, or not advancing.
    pub fn ignored_clock_frames(&self) -> u64 {
        self.clocks.ignored
    }

    pub(super) fn send_clock(&mut self, now: Timestamp, p: Purpose) {
        let request = match &p {
            Purpose::ClockAttach(d) => attach_request(d),
            Purpose::ClockDetach(d) => detach_request(d),
            _ => return,
        };
        let deadline = now + self.config.call_timeout;
        if let Ok((session, _)) = self.send(now, p.clone(), &request, deadline) {
            self.clocks.sent(&p, session);
        }
    }

    /// The reply to a clock's attach or detach. A reply naming another domain than its
    /// request is a protocol violation: nothing of it is applied, and the session, with every
    /// attachment it holds, ends (K-1, F-8).
    pub(super) fn on_clock_reply(
        &mut self,
        now: Timestamp,
        session: SessionId,
        p: Purpose,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        match p {
            Purpose::ClockAttach(d) => {
                if let Some(attempt) = self.clocks.on_attach(&d, session, frame)? {
                    let at = now + self.backoff(attempt);
                    if let Some(e) = self.clocks.entries.touch(&d) {
                        e.phase = Phase::Backoff(at);
                    }
                }
            }
            Purpose::ClockDetach(d) => self.clocks.on_detach(&d, session, frame)?,
            _ => {}
        }
        Ok(())
    }
}
