//! Subscriptions (S-1 to S-9): opening one with a `CREATE SUBSCRIPTION` statement, reading its
//! frames by their complete handle, and keeping it across sessions as new generations.
//!
//! A subscription is known to the application by a [`SubscriptionId`] that outlives sessions
//! and generations. Its frames become [`SubscriptionEvent`]s in a queue of its own, drained
//! with [`Client::poll_subscription`] or, across all of them, [`Client::poll_subscriptions`]:
//!
//! * [`SubscriptionEvent::Opened`] for every generation, with the schema its rows are read
//!   against (S-2, R-1); a later generation may carry another schema.
//! * [`SubscriptionEvent::Rows`]: a batch checked against its generation's schema before any
//!   value can be read. A batch that does not conform is a protocol violation: the session
//!   ends and the stream is closed (F-8).
//! * [`SubscriptionEvent::Gap`]: rows the application will not see, with their counts where
//!   the server gave them (S-5), and the time between two generations (S-4, S-7). Rows on either
//!   side of a gap are not continuous.
//! * [`SubscriptionEvent::Refused`]: an opening or reopening the session refused (ServerBusy
//!   included) or left unanswered; it is sent again after a wait that grows with each refusal
//!   (S-7).
//! * [`SubscriptionEvent::Ended`]: the last event.
//!
//! # What a subscription does not promise
//!
//! Nothing here delivers every row, delivers a row exactly once, or resumes from a position.
//! A subscription does not survive its session: on a new session it is opened again as a new
//! generation, and the rows in between are reported as a gap, never replayed.
//!
//! # Blocking and dropping delivery (S-9)
//!
//! A relay read with BLOCKING delivery waits for its slowest subscriber: an application that
//! stops draining its subscription (or a client whose budget is full, S-8) holds back the relay
//! for everyone who reads it. An application that cannot keep up should subscribe with DROPPING
//! delivery, where the server drops what the session does not take in time and says so with
//! `SubscriptionDeliveryLost`, which arrives here as [`Gap::DeliveryLost`].
//!
//! # Bounded retention (S-8)
//!
//! Events wait for the application within two budgets: [`ClientConfig::subscription_bytes`]
//! per subscription (at least one frame of the 4 MiB frame limit) and
//! [`ClientConfig::subscriptions_total_bytes`] over all of them. Every event is charged: a
//! batch or an opening by the bytes of the frame that carried it, anything else by a fixed
//! cost and its message, never less than that fixed cost, so the count of events is bounded
//! too. An event that does not fit is dropped and counted; the application then sees one
//! [`Gap::Overflow`] at the place it went missing. Only [`SubscriptionEvent::Ended`], the last
//! event, is always kept.
//!
//! Between two generations, while nothing of a generation has been read, an unread event is
//! replaced by a newer one of the same kind: an opening whose generation delivered nothing by
//! the next opening, a refusal by the next refusal, a session loss or relay change by the
//! next. The replaced event leaves its place and the newer goes last, so the order of what the
//! application reads stays true and the last event agrees with [`Client::subscription`].
//!
//! A subscription whose relay keeps changing (S-4) is opened again at once the first time;
//! every further relay change in a row with no batch in between waits a growing, jittered
//! time first, like the other back-offs. A delivered batch resets it.
//!
//! [`ClientConfig::subscription_bytes`]: super::ClientConfig::subscription_bytes
//! [`ClientConfig::subscriptions_total_bytes`]: super::ClientConfig::subscriptions_total_bytes

use super::tracked::{Track, Tracked};
use super::{Client, ClientError, Purpose, SessionId};
use crate::frame::ServerFrame;
use crate::rows::{CheckedBatch, RowSchema};
use crate::schema::*;
use crate::statements::{route, Route, StatementError};
use crate::time::Timestamp;
use crate::violation::ProtocolViolation;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// A subscription the application opened. It names the subscription across sessions and
/// generations until its [`SubscriptionEvent::Ended`] has been drained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubscriptionId(pub u64);

/// Something the application learns about one subscription.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// A generation opened (S-2). Later batches are read against `schema` until the next
    /// `Opened`; a reopening is a new generation and its schema may differ.
    Opened {
        /// The generation's number.
        generation: u64,
        /// The subscription's name, as the server gave it.
        name: String,
        /// The relay it reads.
        relay: String,
        /// The schema every batch of this generation is positional against.
        schema: Arc<RowSchema>,
    },
    /// A batch of rows, checked against its generation's schema.
    Rows(CheckedBatch),
    /// Rows the application will not see (S-5, S-7, S-8).
    Gap(Gap),
    /// An opening or reopening was refused (a reopening, or a first opening refused as
    /// `ServerBusy`) or left unanswered; it goes again after a growing wait (S-7).
    Refused {
        /// What the server said, or why the client gave up waiting.
        message: String,
    },
    /// The subscription ended; nothing about it follows.
    Ended(SubscriptionEnd),
}

/// Rows the application will not see. The rows before and after a gap are not continuous.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Gap {
    /// A dropping subscription lost rows its session did not take in time (S-5).
    DeliveryLost {
        /// Rows lost.
        dropped_rows: u64,
    },
    /// The server skipped rows; the subscription goes on (S-5).
    RowsSkipped {
        /// Why.
        cause: RowsSkippedCause,
        /// Rows skipped.
        skipped_rows: u64,
        /// The server's words.
        message: String,
    },
    /// The session that held the subscription ended; it is opened again as a new generation
    /// on the next one, and whatever the relay carried in between is not delivered (S-7).
    SessionLost,
    /// The relay was redefined and the generation ended (S-4); the subscription is opened
    /// again under the relay's current definition, as a new generation.
    RelayChanged {
        /// The server's words.
        message: String,
    },
    /// The client's own retention budget was full (S-8) and it dropped what it could not keep.
    Overflow {
        /// Batches dropped.
        batches: u64,
        /// Rows dropped, with the rows of gaps merged into this one.
        rows: u64,
        /// Other events dropped: openings, refusals, and the gaps of a lost session or a
        /// changed relay. Each is counted here, so no refusal goes unreported (S-7).
        events: u64,
    },
}

/// Why a subscription ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SubscriptionEnd {
    /// The application deleted it (S-6, S-7); its name may be used again.
    Deleted,
    /// The server removed the relay or its domain (S-4).
    RelayRemoved {
        /// The server's words.
        message: String,
    },
    /// Its first opening was refused, or an opening was rejected for a defect in the request,
    /// which is never sent again unchanged (C-8).
    Refused {
        /// The server's words.
        message: String,
    },
}

/// Where a subscription stands, as [`Client::subscription`] reports it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SubscriptionState {
    /// Waiting for a session that can carry its opening, or for the wait after a refusal.
    Waiting,
    /// Its opening is out.
    Opening,
    /// Open on the current session.
    Open {
        /// The generation.
        generation: u64,
    },
    /// Its deletion is underway.
    Deleting,
    /// It ended; events may still wait in its queue.
    Ended,
}

/// What [`Client::subscription`] tells about one subscription.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SubscriptionInfo {
    /// The domain it was opened in.
    pub domain: String,
    /// Its name, once a server has given it one.
    pub name: Option<String>,
    /// Where it stands.
    pub state: SubscriptionState,
    /// The schema of its newest generation.
    pub schema: Option<Arc<RowSchema>>,
    /// Bytes of events waiting for the application.
    pub retained_bytes: usize,
}

/// The fixed cost counted for an event that carries no frame.
const EVENT_COST: usize = 64;

#[derive(Debug, Clone)]
enum Phase {
    /// To be opened (again) on the next session that can carry it.
    Waiting,
    /// A refusal's wait (S-7), on the current session.
    Backoff(Timestamp),
    /// Its `SubscribeRequest` is out on that session.
    Opening(SessionId),
    /// Open on that session as that generation.
    Open { session: SessionId, generation: u64 },
    /// Its `UnsubscribeRequest` is out on that session.
    Unsubscribing(SessionId),
    /// Ended; the entry goes once its queue is drained.
    Done,
}

#[derive(Debug)]
struct Entry {
    seq: u64,
    domain: String,
    statement: String,
    /// The name the statement gives, as written, to match `DELETE SUBSCRIPTION` before the
    /// server has answered.
    name_hint: Option<String>,
    /// The name the server gave.
    name: Option<String>,
    phase: Phase,
    /// Whether a generation ever opened: a refused first opening ends it, a refused reopening
    /// is tried again.
    ever_open: bool,
    /// The application asked to delete it.
    delete: bool,
    /// Refusals in a row: the wait before the next opening grows with each.
    refusals: u32,
    /// When an opening or reopening left unanswered may go again: its session is given up,
    /// and the next one waits until then instead of counting refusals from nothing (S-7).
    resume_at: Option<Timestamp>,
    /// Generations ended by a relay change in a row with no batch delivered: the wait before
    /// the next opening grows with each (S-4, S-8).
    churn: u32,
    schema: Option<Arc<RowSchema>>,
    queue: VecDeque<(SubscriptionEvent, usize)>,
    bytes: usize,
    /// Dropped batches and rows not yet reported as a gap.
    overflow: Option<(u64, u64, u64)>,
}

impl Track for Entry {
    /// Waiting to be opened, backing off, or open with its deletion asked for.
    fn pending(&self) -> bool {
        match self.phase {
            Phase::Waiting | Phase::Backoff(_) => true,
            Phase::Open { .. } => self.delete,
            _ => false,
        }
    }
    /// Holding events for the application.
    fn marked(&self) -> bool {
        !self.queue.is_empty() || self.overflow.is_some()
    }
}

impl Entry {
    fn state(&self) -> SubscriptionState {
        match &self.phase {
            Phase::Done => SubscriptionState::Ended,
            _ if self.delete => SubscriptionState::Deleting,
            Phase::Waiting | Phase::Backoff(_) => SubscriptionState::Waiting,
            Phase::Opening(_) => SubscriptionState::Opening,
            Phase::Open { generation, .. } => SubscriptionState::Open {
                generation: *generation,
            },
            Phase::Unsubscribing(_) => SubscriptionState::Deleting,
        }
    }

    fn live(&self) -> bool {
        !matches!(self.phase, Phase::Done)
    }

    fn is_named(&self, name: &str) -> bool {
        self.name.as_deref() == Some(name)
            || (self.name.is_none() && self.name_hint.as_deref() == Some(name))
    }
}

/// What a subscription frame meant.
pub(crate) enum Routed {
    /// Not a subscription frame: it goes to the application's queue of unsolicited frames.
    NotMine,
    /// Taken (or ignored, for a handle the client does not hold: S-3).
    Taken,
}

/// The subscriptions of the application.
#[derive(Debug)]
pub(crate) struct Subscriptions {
    entries: Tracked<SubscriptionId, Entry>,
    /// Open generations on the current session by name: the generation and the subscription.
    routes: BTreeMap<String, (u64, SubscriptionId)>,
    next: u64,
    per_subscription: usize,
    total_budget: usize,
    total: usize,
    /// Where [`Client::poll_subscriptions`] looks first, so no subscription starves another.
    cursor: u64,
    ignored: u64,
    /// Events the budgets dropped into overflow gaps, over all subscriptions (S-8).
    dropped: u64,
    /// A subscription a relay change just sent to be opened again, with its churn: the
    /// client decides the wait (it holds the jitter's seed).
    relapsed: Option<(SubscriptionId, u32)>,
}

/// The request that opens a subscription (S-1): one statement, subscription_type Row set
/// explicitly.
pub(crate) fn subscribe_request(domain: &str, statement: &str) -> ClientRequestT {
    ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
        domain: domain.to_string(),
        statement: statement.to_string(),
        subscription_type: Some(SubscriptionType::Row),
    }))
}

fn unsubscribe_request(name: &str) -> ClientRequestT {
    ClientRequestT::UnsubscribeRequest(Box::new(UnsubscribeRequestT {
        subscription: name.to_string(),
    }))
}

/// The name a `CREATE SUBSCRIPTION <name> ...` statement gives, read whole: a double-quoted
/// name (a doubled quote stands for itself), or a bare word of letters, digits, `_`, `-` and
/// `.`, as names are read elsewhere.
fn name_hint(statement: &str) -> Option<String> {
    let mut words = statement.split_whitespace();
    let create = words.next()?;
    let sub = words.next()?;
    if !create.eq_ignore_ascii_case("CREATE") || !sub.eq_ignore_ascii_case("SUBSCRIPTION") {
        return None;
    }
    // The text from the name on (the statement's own, so a quoted name keeps its spaces).
    let at = (sub.as_ptr() as usize - statement.as_ptr() as usize) + sub.len();
    let rest = statement[at..].trim_start();
    let name = match rest.strip_prefix('"') {
        Some(quoted) => {
            let mut name = String::new();
            let mut chars = quoted.chars().peekable();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        name.push('"');
                    }
                    '"' => break,
                    c => name.push(c),
                }
            }
            name
        }
        None => rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .collect(),
    };
    (!name.is_empty()).then_some(name)
}

fn message_of(frame: &ServerFrame) -> String {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return String::new();
    };
    if let Some(o) = reply.body_as_subscribe_outcome() {
        return o.message().to_string();
    }
    if let Some(o) = reply.body_as_unsubscribe_outcome() {
        return o.message().to_string();
    }
    if let Some(r) = reply.body_as_request_rejected() {
        return r.message().to_string();
    }
    if let Some(c) = reply.body_as_request_cancelled() {
        return format!("cancelled {:?}", c.stage());
    }
    reply
        .body_type()
        .variant_name()
        .unwrap_or("an undeclared reply")
        .to_string()
}

/// Whether an event belongs to a generation's stretch of rows: a batch, or a gap among them.
/// Events between generations are never coalesced across one.
fn in_generation(event: &SubscriptionEvent) -> bool {
    matches!(
        event,
        SubscriptionEvent::Rows(_)
            | SubscriptionEvent::Gap(
                Gap::DeliveryLost { .. } | Gap::RowsSkipped { .. } | Gap::Overflow { .. }
            )
            | SubscriptionEvent::Ended(_)
    )
}

/// Whether `new` makes `old`, unread between two generations, say nothing the application
/// still needs: an opening whose generation delivered nothing, an older refusal, an older
/// session loss or relay change.
fn supersedes(new: &SubscriptionEvent, old: &SubscriptionEvent) -> bool {
    matches!(
        (new, old),
        (
            SubscriptionEvent::Opened { .. },
            SubscriptionEvent::Opened { .. }
        ) | (
            SubscriptionEvent::Refused { .. },
            SubscriptionEvent::Refused { .. }
        ) | (
            SubscriptionEvent::Gap(Gap::SessionLost),
            SubscriptionEvent::Gap(Gap::SessionLost)
        ) | (
            SubscriptionEvent::Gap(Gap::RelayChanged { .. }),
            SubscriptionEvent::Gap(Gap::RelayChanged { .. })
        )
    )
}

/// The words an end carries.
fn end_message(why: &SubscriptionEnd) -> &str {
    match why {
        SubscriptionEnd::RelayRemoved { message } | SubscriptionEnd::Refused { message } => message,
        _ => "",
    }
}

/// What the reply to an opening said.
enum Opening {
    Opened {
        name: String,
        generation: u64,
        relay: String,
        schema: RowSchema,
    },
    Busy(String),
    /// Rejected for a defect in the request (C-8): never sent again unchanged.
    Defect(String),
    Refused(String),
}

fn read_opening(frame: &ServerFrame) -> Result<Opening, ProtocolViolation> {
    let view = frame.view();
    let reply = view.body_as_reply();
    if let Some(r) = reply.and_then(|r| r.body_as_request_rejected()) {
        let message = r.message().to_string();
        return Ok(if super::rejected_for_a_defect(&r) {
            Opening::Defect(message)
        } else {
            Opening::Busy(message)
        });
    }
    match reply
        .and_then(|r| r.body_as_subscribe_outcome())
        .and_then(|o| o.disposition_as_subscription_opened())
    {
        Some(o) => Ok(Opening::Opened {
            name: o.subscription().name().to_string(),
            generation: o.subscription().generation(),
            relay: o.relay().to_string(),
            schema: RowSchema::from_view(o.schema())?,
        }),
        None => Ok(Opening::Refused(message_of(frame))),
    }
}

impl Subscriptions {
    pub(crate) fn new(per_subscription: usize, total_budget: usize) -> Self {
        Self {
            entries: Tracked::default(),
            routes: BTreeMap::new(),
            next: 0,
            // One frame of the frame limit always fits, with the overflow gap that may stand
            // before it.
            per_subscription: per_subscription.max(crate::limits::FRAME_LIMIT + EVENT_COST),
            total_budget,
            total: 0,
            cursor: 0,
            ignored: 0,
            dropped: 0,
            relapsed: None,
        }
    }

    fn add(&mut self, seq: u64, domain: &str, statement: &str) -> SubscriptionId {
        self.next += 1;
        let id = SubscriptionId(self.next);
        self.entries.insert(
            id,
            Entry {
                seq,
                domain: domain.to_string(),
                statement: statement.to_string(),
                name_hint: name_hint(statement),
                name: None,
                phase: Phase::Waiting,
                ever_open: false,
                delete: false,
                refusals: 0,
                resume_at: None,
                churn: 0,
                schema: None,
                queue: VecDeque::new(),
                bytes: 0,
                overflow: None,
            },
        );
        id
    }

    /// The live subscription of that name.
    fn named(&self, name: &str) -> Option<SubscriptionId> {
        self.entries
            .iter()
            .find(|(_, e)| e.live() && e.is_named(name))
            .map(|(id, _)| *id)
    }

    /// Queues an event the client itself caused, charged to the budgets like any other (S-8).
    fn report(&mut self, id: SubscriptionId, event: SubscriptionEvent, cost: usize) {
        self.queue(id, event, cost, 0, false);
    }

    /// Queues an event the server sent, within the budgets (S-8); what does not fit is
    /// counted in an overflow gap.
    fn deliver(&mut self, id: SubscriptionId, event: SubscriptionEvent, cost: usize, rows: u64) {
        self.queue(id, event, cost, rows, false);
    }

    /// Queues an event charged `cost` bytes (at least [`EVENT_COST`]). An unread event it
    /// supersedes between two generations leaves the queue first. An event that does not fit
    /// the budgets is dropped and counted in the overflow gap, with `rows`, unless it is
    /// `forced` (the end, which nothing follows).
    fn queue(
        &mut self,
        id: SubscriptionId,
        event: SubscriptionEvent,
        cost: usize,
        rows: u64,
        forced: bool,
    ) {
        let Some(mut e) = self.entries.get_mut(&id) else {
            return;
        };
        let cost = cost.max(EVENT_COST);
        // Only within the stretch since the last batch or in-generation gap; a pending
        // overflow is such a gap.
        let superseded = if e.overflow.is_none() {
            e.queue
                .iter()
                .rposition(|(old, _)| in_generation(old) || supersedes(&event, old))
                .filter(|&at| !in_generation(&e.queue[at].0))
        } else {
            None
        };
        let freed = superseded.map_or(0, |at| e.queue[at].1);
        let gap = if e.overflow.is_some() { EVENT_COST } else { 0 };
        let need = cost + gap;
        let fits = e.bytes - freed + need <= self.per_subscription
            && self.total - freed + need <= self.total_budget;
        if !fits && !forced {
            if e.overflow.is_none() {
                // Once per overflow: the application reads the counts in the gap.
                tracing::warn!(
                    subscription = ?id,
                    held_bytes = e.bytes,
                    total_bytes = self.total,
                    "nervix subscription budget full: events dropped into an overflow gap"
                );
            }
            self.dropped = self.dropped.saturating_add(1);
            // The superseded event stays: what it said is not replaced by nothing.
            let (b, r, ev) = e.overflow.get_or_insert((0, 0, 0));
            // A batch counts as a batch; an in-generation gap is merged by its rows; anything
            // else (an opening, a refusal, a session or relay gap) is counted as an event.
            if matches!(event, SubscriptionEvent::Rows(_)) {
                *b += 1;
            } else if !in_generation(&event) {
                *ev += 1;
            }
            *r = r.saturating_add(rows);
            return;
        }
        if let Some(at) = superseded {
            if let Some((_, freed)) = e.queue.remove(at) {
                e.bytes -= freed;
                self.total -= freed;
            }
        }
        if let Some((batches, rows, events)) = e.overflow.take() {
            e.queue.push_back((
                SubscriptionEvent::Gap(Gap::Overflow {
                    batches,
                    rows,
                    events,
                }),
                gap,
            ));
        }
        e.bytes += need;
        self.total += need;
        e.queue.push_back((event, cost));
    }

    fn end(&mut self, id: SubscriptionId, why: SubscriptionEnd) {
        if let Some(mut e) = self.entries.get_mut(&id) {
            if !e.live() {
                return;
            }
            e.phase = Phase::Done;
        }
        self.routes.retain(|_, (_, s)| *s != id);
        let cost = EVENT_COST + end_message(&why).len();
        self.queue(id, SubscriptionEvent::Ended(why), cost, 0, true);
        self.reap(id);
    }

    /// Removes an ended subscription whose events were all taken.
    fn reap(&mut self, id: SubscriptionId) {
        if self
            .entries
            .get(&id)
            .is_some_and(|e| !e.live() && e.queue.is_empty() && e.overflow.is_none())
        {
            self.entries.remove(&id);
        }
    }

    pub(crate) fn poll(&mut self, id: SubscriptionId) -> Option<SubscriptionEvent> {
        let mut e = self.entries.get_mut(&id)?;
        let event = match e.queue.pop_front() {
            Some((event, cost)) => {
                e.bytes -= cost;
                self.total -= cost;
                Some(event)
            }
            None => e.overflow.take().map(|(batches, rows, events)| {
                SubscriptionEvent::Gap(Gap::Overflow {
                    batches,
                    rows,
                    events,
                })
            }),
        };
        drop(e);
        self.reap(id);
        event
    }

    pub(crate) fn poll_any(&mut self) -> Option<(SubscriptionId, SubscriptionEvent)> {
        // The next subscription holding events after the cursor, round the ring.
        let id = self
            .entries
            .marked_from(SubscriptionId(self.cursor + 1))
            .or_else(|| self.entries.marked_to(SubscriptionId(self.cursor)))?;
        self.cursor = id.0;
        self.poll(id).map(|ev| (id, ev))
    }

    // ----- what to send --------------------------------------------------------------------

    /// Openings and deletions due now on `session`, with the order they were made in.
    /// With `fresh_ok` false, only subscriptions that were open before (restorations) count.
    pub(crate) fn due(
        &self,
        now: Timestamp,
        session: SessionId,
        fresh_ok: bool,
        out: &mut Vec<(u64, Purpose)>,
    ) {
        for (id, e) in self.entries.pending() {
            let may = !e.delete && (fresh_ok || e.ever_open);
            match e.phase {
                Phase::Waiting if may => out.push((e.seq, Purpose::Subscribe(*id))),
                Phase::Backoff(t) if t <= now && may => out.push((e.seq, Purpose::Subscribe(*id))),
                Phase::Open { session: s, .. } if e.delete && s == session => {
                    out.push((e.seq, Purpose::Unsubscribe(*id)))
                }
                _ => {}
            }
        }
    }

    /// Whether a subscription waits for a session to be opened on (S-7).
    pub(crate) fn wants_session(&self) -> bool {
        self.entries
            .pending()
            .any(|(_, e)| !e.delete && matches!(e.phase, Phase::Waiting | Phase::Backoff(_)))
    }

    /// When a refusal's wait ends.
    pub(crate) fn timers(&self) -> impl Iterator<Item = Timestamp> + '_ {
        self.entries.pending().filter_map(|(_, e)| match e.phase {
            Phase::Backoff(t) if !e.delete => Some(t),
            _ => None,
        })
    }

    /// A wait that ended while nothing could carry the opening waits for a session instead.
    pub(crate) fn settle_backoffs(&mut self, now: Timestamp) {
        self.entries.for_each_pending_mut(|_, e| {
            if matches!(e.phase, Phase::Backoff(t) if t <= now) {
                e.phase = Phase::Waiting;
            }
        });
    }

    fn request_for(&self, p: &Purpose) -> Option<ClientRequestT> {
        match p {
            Purpose::Subscribe(id) => {
                let e = self.entries.get(id)?;
                Some(subscribe_request(&e.domain, &e.statement))
            }
            Purpose::Unsubscribe(id) => {
                let e = self.entries.get(id)?;
                Some(unsubscribe_request(e.name.as_deref()?))
            }
            _ => None,
        }
    }

    fn sent(&mut self, p: &Purpose, session: SessionId) {
        match p {
            Purpose::Subscribe(id) => {
                if let Some(mut e) = self.entries.get_mut(id) {
                    e.phase = Phase::Opening(session);
                }
            }
            Purpose::Unsubscribe(id) => {
                if let Some(mut e) = self.entries.get_mut(id) {
                    e.phase = Phase::Unsubscribing(session);
                }
            }
            _ => {}
        }
    }

    // ----- replies and frames --------------------------------------------------------------

    /// The reply to an opening (S-2: recorded here, before any later frame is read). Returns
    /// the back-off the caller should use after a refusal, or a violation.
    fn on_opening(
        &mut self,
        id: SubscriptionId,
        session: SessionId,
        frame: &ServerFrame,
    ) -> Result<Option<u32>, ProtocolViolation> {
        let opening = read_opening(frame)?;
        let Some(mut e) = self.entries.get_mut(&id) else {
            return Ok(None);
        };
        if !matches!(e.phase, Phase::Opening(s) if s == session) {
            return Ok(None);
        }
        match opening {
            Opening::Opened {
                name,
                generation,
                relay,
                schema,
            } => {
                e.name = Some(name.clone());
                e.refusals = 0;
                e.resume_at = None;
                e.phase = Phase::Open {
                    session,
                    generation,
                };
                // the schema always belongs to the generation open now.
                let schema = Arc::new(schema);
                e.schema = Some(schema.clone());
                self.routes.insert(name.clone(), (generation, id));
                if e.delete {
                    // S-7: deleted while the opening was out; the unsubscribe goes before
                    // the name is used again, and nothing of the generation is read.
                    return Ok(None);
                }
                e.ever_open = true;
                drop(e);
                self.report(
                    id,
                    SubscriptionEvent::Opened {
                        generation,
                        name,
                        relay,
                        schema,
                    },
                    frame.len(),
                );
                Ok(None)
            }
            _ if e.delete => {
                drop(e);
                self.end(id, SubscriptionEnd::Deleted);
                Ok(None)
            }
            Opening::Busy(message) => {
                // S-7: every refusal is reported; a busy server is asked again after a wait,
                // whether the subscription was open before or not.
                e.refusals = e.refusals.saturating_add(1);
                let attempt = e.refusals - 1;
                let cost = EVENT_COST + message.len();
                drop(e);
                self.report(id, SubscriptionEvent::Refused { message }, cost);
                Ok(Some(attempt))
            }
            // C-8: a request the server calls defective is never sent again unchanged, a
            // reopening no more than a first opening.
            Opening::Defect(message) => {
                drop(e);
                self.end(id, SubscriptionEnd::Refused { message });
                Ok(None)
            }
            Opening::Refused(message) if !e.ever_open => {
                drop(e);
                self.end(id, SubscriptionEnd::Refused { message });
                Ok(None)
            }
            Opening::Refused(message) => {
                e.refusals = e.refusals.saturating_add(1);
                let attempt = e.refusals - 1;
                let cost = EVENT_COST + message.len();
                drop(e);
                self.report(id, SubscriptionEvent::Refused { message }, cost);
                Ok(Some(attempt))
            }
        }
    }

    fn on_unsubscribed(&mut self, id: SubscriptionId, session: SessionId) {
        if self
            .entries
            .get(&id)
            .is_some_and(|e| matches!(e.phase, Phase::Unsubscribing(s) if s == session))
        {
            // S-6: deleted, or the server holds nothing of that name: either way nothing
            // about it follows and the name is free.
            self.end(id, SubscriptionEnd::Deleted);
        }
    }

    /// An unsolicited frame: a subscription frame is routed by its complete handle (S-3);
    /// anything else is not this module's. A batch that does not conform to its generation's
    /// schema is a protocol violation.
    pub(crate) fn on_frame(&mut self, frame: &ServerFrame) -> Result<Routed, ProtocolViolation> {
        let view = frame.view();
        let (handle, kind) = match view.body_type() {
            ServerBody::SubscriptionRows => (
                view.body_as_subscription_rows().map(|b| b.subscription()),
                0,
            ),
            ServerBody::SubscriptionDeliveryLost => (
                view.body_as_subscription_delivery_lost()
                    .map(|b| b.subscription()),
                1,
            ),
            ServerBody::SubscriptionRowsSkipped => (
                view.body_as_subscription_rows_skipped()
                    .map(|b| b.subscription()),
                2,
            ),
            ServerBody::SubscriptionEnded => (
                view.body_as_subscription_ended().map(|b| b.subscription()),
                3,
            ),
            _ => return Ok(Routed::NotMine),
        };
        let Some(handle) = handle else {
            return Ok(Routed::NotMine);
        };
        let Some(&(generation, id)) = self.routes.get(handle.name()) else {
            self.ignored += 1;
            return Ok(Routed::Taken);
        };
        if generation != handle.generation() {
            // Another generation of the name, such as the late end of an earlier one (S-3).
            self.ignored += 1;
            return Ok(Routed::Taken);
        }
        if kind != 3 && self.entries.get(&id).is_none_or(|e| e.delete) {
            // Being deleted: nothing more of it is read; only its end still counts (S-4).
            self.ignored += 1;
            return Ok(Routed::Taken);
        }
        match kind {
            0 => {
                let Some(schema) = self.entries.get(&id).and_then(|e| e.schema.clone()) else {
                    self.ignored += 1;
                    return Ok(Routed::Taken);
                };
                let batch = CheckedBatch::check(frame.clone(), schema)?;
                let rows = batch.len() as u64;
                // The generation delivers: the next relay change reopens at once.
                if let Some(mut e) = self.entries.get_mut(&id) {
                    e.churn = 0;
                }
                self.deliver(id, SubscriptionEvent::Rows(batch), frame.len(), rows);
            }
            1 => {
                let lost = view.body_as_subscription_delivery_lost();
                let dropped_rows = lost.map_or(0, |l| l.dropped_rows());
                let gap = Gap::DeliveryLost { dropped_rows };
                self.deliver(id, SubscriptionEvent::Gap(gap), EVENT_COST, dropped_rows);
            }
            2 => {
                if let Some(s) = view.body_as_subscription_rows_skipped() {
                    let skipped_rows = s.skipped_rows();
                    let message = s.message().to_string();
                    let cost = EVENT_COST + message.len();
                    let gap = Gap::RowsSkipped {
                        cause: s.cause().unwrap_or(RowsSkippedCause::FilterFailed),
                        skipped_rows,
                        message,
                    };
                    self.deliver(id, SubscriptionEvent::Gap(gap), cost, skipped_rows);
                }
            }
            _ => {
                let (reason, message) = view
                    .body_as_subscription_ended()
                    .map(|e| (e.reason(), e.message().to_string()))
                    .unwrap_or_default();
                // S-4: the generation's last frame.
                self.routes.remove(handle.name());
                let delete = self.entries.get(&id).is_some_and(|e| e.delete);
                if delete {
                    // S-4: an ended subscription's deletion completes without a request.
                    self.end(id, SubscriptionEnd::Deleted);
                } else if reason == Some(SubscriptionEndReason::RelayChanged) {
                    // S-4: never read against the ended schema; subscribe again.
                    if let Some(mut e) = self.entries.get_mut(&id) {
                        e.phase = Phase::Waiting;
                        e.refusals = 0;
                        e.churn = e.churn.saturating_add(1);
                        self.relapsed = Some((id, e.churn));
                    }
                    let cost = EVENT_COST + message.len();
                    let gap = Gap::RelayChanged { message };
                    self.report(id, SubscriptionEvent::Gap(gap), cost);
                } else {
                    self.end(id, SubscriptionEnd::RelayRemoved { message });
                }
            }
        }
        Ok(Routed::Taken)
    }

    /// `session` ended: nothing it held survives (S-7). Open subscriptions are opened again on
    /// the next session and the time between is a gap; deletions complete, because no session
    /// holds them any more.
    pub(crate) fn lost(&mut self, session: SessionId) {
        self.routes.clear();
        let ids: Vec<SubscriptionId> = self.entries.keys().copied().collect();
        for id in ids {
            let Some(mut e) = self.entries.get_mut(&id) else {
                continue;
            };
            let on_it = match e.phase {
                Phase::Opening(s) | Phase::Unsubscribing(s) | Phase::Open { session: s, .. } => {
                    s == session
                }
                Phase::Backoff(_) => true,
                Phase::Waiting | Phase::Done => false,
            };
            if !(on_it || e.delete && e.live()) {
                continue;
            }
            if e.delete {
                drop(e);
                self.end(id, SubscriptionEnd::Deleted);
                continue;
            }
            let was_open = matches!(e.phase, Phase::Open { .. });
            match e.resume_at.take() {
                // S-7: the session was given up because it left the opening unanswered; the
                // wait before the next one grows with each such refusal.
                Some(at) if matches!(e.phase, Phase::Opening(s) if s == session) => {
                    e.phase = Phase::Backoff(at);
                }
                _ => {
                    e.phase = Phase::Waiting;
                    e.refusals = 0;
                }
            }
            drop(e);
            if was_open {
                self.report(id, SubscriptionEvent::Gap(Gap::SessionLost), EVENT_COST);
            }
        }
    }

    /// How many subscriptions are not ended.
    pub(crate) fn live(&self) -> usize {
        self.entries.values().filter(|e| e.live()).count()
    }

    pub(crate) fn info(&self, id: SubscriptionId) -> Option<SubscriptionInfo> {
        self.entries.get(&id).map(|e| SubscriptionInfo {
            domain: e.domain.clone(),
            name: e.name.clone(),
            state: e.state(),
            schema: e.schema.clone(),
            retained_bytes: e.bytes,
        })
    }
}

impl Client {
    /// Opens a subscription with one `CREATE SUBSCRIPTION` statement in `domain` (S-1) and
    /// keeps it: on every later session it is opened again as a new generation, before the
    /// transaction is attached (D-5, S-7). Its events come from
    /// [`Client::poll_subscription`]. Refused while a transaction is held (L-3), and while a
    /// live subscription already has the statement's name.
    pub fn subscribe(
        &mut self,
        now: Timestamp,
        domain: &str,
        statement: &str,
    ) -> Result<SubscriptionId, ClientError> {
        self.check_name("domain", domain)?;
        self.outside_transaction()?;
        match route(statement, false)? {
            Route::Subscribe(_) => {}
            _ => {
                return Err(StatementError::Malformed {
                    statement: statement.chars().take(40).collect(),
                    expected: "CREATE SUBSCRIPTION ...",
                }
                .into())
            }
        }
        self.check_sendable(&subscribe_request(domain, statement))?;
        if let Some(name) = name_hint(statement) {
            if self.subscriptions.named(&name).is_some() {
                return Err(ClientError::NameInUse { name });
            }
        }
        let seq = self.seq();
        let id = self.subscriptions.add(seq, domain, statement);
        self.drive(now);
        Ok(id)
    }

    /// Deletes the live subscription named `name` (S-6); see [`Client::delete_subscription`].
    pub fn unsubscribe(
        &mut self,
        now: Timestamp,
        name: &str,
    ) -> Result<SubscriptionId, ClientError> {
        self.check_name("subscription", name)?;
        self.outside_transaction()?;
        let id = self
            .subscriptions
            .named(name)
            .ok_or(ClientError::UnknownHandle)?;
        self.delete_subscription(now, id)?;
        Ok(id)
    }

    /// Deletes a subscription. An open one is closed with an `UnsubscribeRequest` (S-6); one
    /// that no session holds ends at once without a request; one whose opening is out is
    /// closed as soon as it opens (S-7). It ends with [`SubscriptionEnd::Deleted`]. Refused
    /// while a transaction is held (L-3).
    pub fn delete_subscription(
        &mut self,
        now: Timestamp,
        id: SubscriptionId,
    ) -> Result<(), ClientError> {
        self.outside_transaction()?;
        let Some(mut e) = self.subscriptions.entries.get_mut(&id) else {
            return Err(ClientError::UnknownHandle);
        };
        if !e.live() {
            return Err(ClientError::UnknownHandle);
        }
        if e.delete {
            // One deletion at a time: the one out decides (S-6, S-7).
            return Err(ClientError::DeletionInProgress);
        }
        e.delete = true;
        let unheld = matches!(e.phase, Phase::Waiting | Phase::Backoff(_));
        drop(e);
        if unheld {
            // S-7: no session holds it.
            self.subscriptions.end(id, SubscriptionEnd::Deleted);
        }
        self.drive(now);
        Ok(())
    }

    /// The next event of one subscription.
    #[must_use]
    pub fn poll_subscription(&mut self, id: SubscriptionId) -> Option<SubscriptionEvent> {
        self.subscriptions.poll(id)
    }

    /// The next event of any subscription, taking them in turn so none starves another.
    #[must_use]
    pub fn poll_subscriptions(&mut self) -> Option<(SubscriptionId, SubscriptionEvent)> {
        self.subscriptions.poll_any()
    }

    /// Where a subscription stands, while it is live or has events left.
    pub fn subscription(&self, id: SubscriptionId) -> Option<SubscriptionInfo> {
        self.subscriptions.info(id)
    }

    /// How many subscriptions have not ended.
    pub fn live_subscriptions(&self) -> usize {
        self.subscriptions.live()
    }

    /// Bytes of subscription events waiting for the application, over all subscriptions.
    pub fn subscription_bytes(&self) -> usize {
        self.subscriptions.total
    }

    /// Subscription frames ignored because they named a handle the client does not hold (S-3).
    pub fn ignored_subscription_frames(&self) -> u64 {
        self.subscriptions.ignored
    }

    /// Subscription events the budgets dropped into overflow gaps, over all subscriptions (S-8).
    pub fn dropped_subscription_events(&self) -> u64 {
        self.subscriptions.dropped
    }

    /// An unsolicited frame, offered to the subscriptions first (S-2, S-3). A subscription a
    /// relay change sent to be opened again waits a growing time when the previous one also
    /// delivered nothing (S-4, S-8).
    pub(super) fn on_subscription_frame(
        &mut self,
        now: Timestamp,
        frame: &ServerFrame,
    ) -> Result<Routed, ProtocolViolation> {
        let routed = self.subscriptions.on_frame(frame)?;
        if let Some((id, churn)) = self.subscriptions.relapsed.take() {
            if churn > 1 {
                let at = now + self.backoff(churn - 2);
                if let Some(mut e) = self.subscriptions.entries.get_mut(&id) {
                    if matches!(e.phase, Phase::Waiting) {
                        e.phase = Phase::Backoff(at);
                    }
                }
            }
        }
        Ok(routed)
    }

    /// Sends a subscription's opening or deletion.
    pub(super) fn send_subscription(&mut self, now: Timestamp, p: Purpose) {
        let Some(request) = self.subscriptions.request_for(&p) else {
            return;
        };
        let deadline = now + self.config.call_timeout;
        if let Ok((session, _)) = self.send(now, p.clone(), &request, deadline) {
            self.subscriptions.sent(&p, session);
        }
    }

    /// The reply to a subscription's opening or deletion.
    pub(super) fn on_subscription_reply(
        &mut self,
        now: Timestamp,
        session: SessionId,
        p: Purpose,
        frame: &ServerFrame,
    ) -> Result<(), ProtocolViolation> {
        match p {
            Purpose::Subscribe(id) => {
                if let Some(attempt) = self.subscriptions.on_opening(id, session, frame)? {
                    let at = now + self.backoff(attempt);
                    if let Some(mut e) = self.subscriptions.entries.get_mut(&id) {
                        e.phase = Phase::Backoff(at);
                    }
                }
            }
            Purpose::Unsubscribe(id) => self.subscriptions.on_unsubscribed(id, session),
            _ => {}
        }
        Ok(())
    }

    /// A subscription's request ended without a reply on a session that goes on: it was left
    /// unanswered past its deadline, or (`not_admitted`) refused as too many in flight and
    /// not sendable again. That is reported as a refusal, and the session, which does not
    /// carry what it is given, is replaced (K-5 and S-7 alike).
    ///
    /// Each such refusal counts like any other, for a first opening as for a reopening: the
    /// opening waits on the next session a time that grows with each refusal in a row, not
    /// only the reconnect's back-off, which a session that answers everything else starts over
    /// (S-7).
    pub(super) fn on_subscription_unanswered(
        &mut self,
        now: Timestamp,
        p: &Purpose,
        not_admitted: bool,
    ) {
        if let Purpose::Subscribe(id) = p {
            let live = self
                .subscriptions
                .entries
                .get(id)
                .filter(|e| e.live() && !e.delete)
                .map(|e| e.ever_open);
            if let Some(ever_open) = live {
                let attempt = self.subscriptions.entries.get_mut(id).map(|mut e| {
                    e.refusals = e.refusals.saturating_add(1);
                    e.refusals - 1
                });
                if let Some(attempt) = attempt {
                    let at = now + self.backoff(attempt);
                    if let Some(mut e) = self.subscriptions.entries.get_mut(id) {
                        e.resume_at = Some(at);
                    }
                }
                let message = String::from(match (ever_open, not_admitted) {
                    (true, false) => "the reopening was left unanswered",
                    (false, false) => "the opening was left unanswered",
                    (true, true) => "the reopening was not admitted",
                    (false, true) => "the opening was not admitted",
                });
                let cost = EVENT_COST + message.len();
                self.subscriptions
                    .report(*id, SubscriptionEvent::Refused { message }, cost);
            }
        }
    }
}
