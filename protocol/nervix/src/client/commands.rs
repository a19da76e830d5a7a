//! Commands (E-1 to E-8): one execution reference per logical command, kept with the exact
//! query, domain, position and preview until the outcome is known, and every disposition
//! acted on. This module owns the commands and the one rule that decides whether a command
//! that ended without its outcome failed or is uncertain.

use super::call::{call_pending, Call, CallState, Calls, HasCall};
use super::tracked::Track;
use super::transaction::attach_on;
use super::{ClientError, ClientEvent, Session};
use super::{Purpose, SessionId};
use crate::command::{ExecutionReference, ReferenceError};
use crate::encode::CommandParts;
use crate::exchange::RequestHandle;
use crate::frame::ServerFrame;
use crate::schema::*;
use crate::statements::{check_command, StatementError};
use crate::statements::{CommandShape, StatementKind};
use crate::time::Timestamp;
use crate::time::UnixMillis;
use crate::transaction::{Binding, Ending};
use crate::violation::ProtocolViolation;
use std::time::Duration;

/// The most commands that wait behind an unanswered `BEGIN` for the position they must carry
/// a command beyond it is refused with [`super::ClientError::BehindBeginFull`].
pub const MAX_BEHIND_BEGIN: usize = 1024;

/// The most bytes of query text the commands waiting behind an unanswered `BEGIN` hold.
pub const MAX_BEHIND_BEGIN_BYTES: usize = 16 * 1024 * 1024;

/// A command the application asked to execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommandHandle(pub u64);

/// A command's outcome as the server recorded it. It holds the checked frame the outcome came
/// in and hands out views of it; [`CommandReport::to_owned_outcome`] copies it out on request,
/// so keeping a report costs the frame's bytes and nothing more.
#[derive(Debug, Clone)]
pub struct CommandReport {
    reference: ExecutionReference,
    frame: ServerFrame,
}

impl PartialEq for CommandReport {
    fn eq(&self, other: &Self) -> bool {
        self.reference == other.reference && self.frame.bytes() == other.frame.bytes()
    }
}

impl CommandReport {
    /// A report of `frame`, which must be a checked reply carrying a `CommandOutcome`. A frame
    /// that shares its receive buffer with anything else is copied out of it first, so that
    /// keeping the report keeps the frame's bytes and not the buffer (F-9).
    pub(crate) fn new(reference: ExecutionReference, frame: ServerFrame) -> Option<Self> {
        frame.view().body_as_reply()?.body_as_command_outcome()?;
        Some(Self {
            reference,
            frame: frame.retained(),
        })
    }

    /// The command's execution reference (the outcome names the same one, E-5).
    pub fn reference(&self) -> &ExecutionReference {
        &self.reference
    }

    /// The outcome, read in place.
    pub fn outcome(&self) -> CommandOutcome<'_> {
        self.frame
            .view()
            .body_as_reply()
            .and_then(|r| r.body_as_command_outcome())
            .unwrap_or_else(|| unreachable!("a report is only made of a command outcome"))
    }

    /// The frame the outcome came in.
    pub fn frame(&self) -> &ServerFrame {
        &self.frame
    }

    /// One outcome per statement in written order (E-7); empty for a single statement.
    pub fn statements(
        &self,
    ) -> flatbuffers::Vector<'_, flatbuffers::ForwardsUOffset<StatementOutcome<'_>>> {
        self.outcome().statements()
    }

    /// Executed now or recovered from an earlier attempt (E-8: information only).
    pub fn origin(&self) -> Option<OutcomeOrigin> {
        self.outcome().origin()
    }

    /// The outcome's message.
    pub fn message(&self) -> &str {
        self.outcome().message()
    }

    /// The whole outcome copied out of the frame.
    pub fn to_owned_outcome(&self) -> CommandOutcomeT {
        self.outcome().unpack()
    }
}

/// Why a command definitely did not take effect (or ended with a definitive failure).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Failure {
    /// The server's outcome says it failed: RequestFailed, PreviewStale (nothing applied,
    /// the transaction stays open), TransactionTakenOver, or a reference conflict on the
    /// command's first attempt.
    Outcome(CommandReport),
    /// Refused before admission for a defect in the request (C-8).
    Rejected {
        /// The reason.
        rejection: RequestRejection,
        /// The server's message.
        message: String,
    },
    /// Cancelled before admission: no effect (C-9).
    CancelledBeforeAdmission,
    /// Never handed to the transport: it certainly had no effect.
    NotSent,
    /// The transaction it belonged to had ended and holds no outcome for it.
    TransactionEnded,
    /// It was made while a `BEGIN` was unanswered and waited behind it for the position it
    /// must carry; the `BEGIN` ended without binding a transaction, so it was never sent.
    TransactionNotBegun,
}

/// Why a command's outcome is not known.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UncertainCause {
    /// Its deadline passed (D-4).
    Deadline,
    /// The reference's record was reclaimed (E-4); this is not the command's outcome.
    ReferenceExpired,
    /// The reference is too old to repeat (E-4).
    RetryHorizon,
    /// The reply was too large to carry (C-8).
    ReplyTooLarge,
    /// Cancelled after admission: its effect continues (C-9).
    CancelledAfterAdmission,
    /// Cancelled by the application, or its session lost after a cancellation was asked
    /// for, while an earlier attempt may have run.
    Cancelled,
    /// A repetition met a conflicting record or a definitive refusal that says nothing of an
    /// earlier attempt.
    Inconclusive,
}

/// A command whose outcome is unknown, with everything needed to repeat it exactly (E-2, E-3).
#[derive(Debug, Clone, PartialEq)]
pub struct RetainedCommand {
    /// The reference every repetition carries.
    pub reference: ExecutionReference,
    /// The exact query text.
    pub query: String,
    /// The domain it named.
    pub domain: Option<String>,
    /// The expected transaction position it carried.
    pub position: Option<u64>,
    /// The expected preview it carried.
    pub preview: Option<TransactionPreviewIdentityT>,
    /// When the reference was created (monotonic).
    pub created: Timestamp,
}

impl RetainedCommand {
    /// The request every attempt sends, unchanged (E-2), borrowed from the command.
    pub(crate) fn parts(&self) -> CommandParts<'_> {
        CommandParts {
            query: &self.query,
            domain: self.domain.as_deref(),
            execution_reference: self.reference.as_str(),
            expected_transaction_position: self.position,
            expected_preview: self.preview.as_ref(),
        }
    }

    /// Whether it belongs to the held transaction and so needs the transaction bound.
    fn needs_binding(&self) -> bool {
        self.position.is_some() || self.preview.is_some()
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CommandResult {
    /// Its own outcome says it completed.
    Completed(CommandReport),
    /// It definitely failed or never took effect.
    Failed(Failure),
    /// Its outcome is unknown; repeat it with [`super::Client::recover`] to learn it.
    Uncertain {
        /// The command, reference included.
        command: RetainedCommand,
        /// Why it is unknown.
        cause: UncertainCause,
    },
}

/// Why a gated call ([`super::Client::execute_gated`]) was refused: by the engine's own
/// checks, or by the caller's gate. Either way nothing was taken, sent or queued.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Gated<E> {
    /// The engine refused it.
    Client(ClientError),
    /// The gate refused it.
    Gate(E),
}

impl<E> From<ClientError> for Gated<E> {
    fn from(e: ClientError) -> Self {
        Gated::Client(e)
    }
}

impl<E> From<StatementError> for Gated<E> {
    fn from(e: StatementError) -> Self {
        Gated::Client(e.into())
    }
}

impl<E> From<ReferenceError> for Gated<E> {
    fn from(e: ReferenceError) -> Self {
        Gated::Client(e.into())
    }
}

impl Gated<std::convert::Infallible> {
    /// The engine's refusal of a call whose gate refuses nothing.
    pub(crate) fn into_client(self) -> ClientError {
        match self {
            Gated::Client(e) => e,
            Gated::Gate(never) => match never {},
        }
    }
}

/// What the engine tells a gate ([`super::Client::execute_gated`]) beside the command it
/// shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct GateNote {
    /// The command was made while a `BEGIN` was unanswered: it waits, unsent, for the
    /// position, preview and domain of the transaction the BEGIN binds, which its every
    /// attempt will carry and the command the gate sees does not. A record of the command
    /// the gate sees is not the command that is sent, so it must never be repeated from
    /// that record (E-2): after a restart its outcome is unknown (E-3).
    pub awaits_position: bool,
}

/// The gate of a call that has none.
pub(crate) fn ungated(_: &RetainedCommand, _: GateNote) -> Result<(), std::convert::Infallible> {
    Ok(())
}

#[derive(Debug, Clone)]
pub(crate) struct CommandEntry {
    pub retained: RetainedCommand,
    pub shape: CommandShape,
    pub call: Call,
    /// A cancellation was asked for: the command is never sent again.
    pub cancelling: bool,
    /// Made while a `BEGIN` was unanswered: it waits, unsent, for the position the BEGIN's
    /// status gives, or ends unsent when the BEGIN binds nothing.
    pub behind_begin: bool,
}

impl CommandEntry {
    /// The one rule for a command that ends without an outcome that settles it: when `ran`
    /// (some attempt may have had an effect) it is uncertain for `cause`, naming its
    /// reference; otherwise it failed for `failure`. Every such end is decided here.
    fn decide(&self, ran: bool, failure: Failure, cause: UncertainCause) -> CommandResult {
        if ran {
            self.uncertain(cause)
        } else {
            CommandResult::Failed(failure)
        }
    }

    /// The end of a command whose outcome did not come: failed as never sent when no attempt
    /// can have had an effect, and uncertain otherwise.
    pub(crate) fn unanswered(self, cause: UncertainCause) -> CommandResult {
        self.decide(self.call.ran, Failure::NotSent, cause)
    }

    /// The current attempt was refused, so it had no effect: `failure` when no earlier attempt
    /// can have had one either, and uncertain for `cause` otherwise, since a refusal of this
    /// attempt says nothing of the earlier ones.
    fn refused(&self, failure: Failure, cause: UncertainCause) -> CommandResult {
        self.decide(self.call.ran_before, failure, cause)
    }

    fn uncertain(&self, cause: UncertainCause) -> CommandResult {
        CommandResult::Uncertain {
            command: self.retained.clone(),
            cause,
        }
    }
}

/// What a reply to a command asks of the client.
#[derive(Debug)]
pub(crate) enum Step {
    /// The command ended.
    Done(CommandResult),
    /// Send it again after a back-off; `ran` when this attempt may have had an effect.
    Backoff { ran: bool },
    /// The named leader (when it names one) should carry it (D-1, D-2).
    Redirect(Option<String>),
    /// The session lost the transaction: attach it, then repeat.
    Detached,
    /// Nothing to do.
    Nothing,
}

impl Track for CommandEntry {
    fn pending(&self) -> bool {
        call_pending(&self.call) && !self.behind_begin
    }
    /// A BEGIN out: until it is answered, the session may hold a transaction.
    fn marked(&self) -> bool {
        self.shape.first() == StatementKind::Begin
            && matches!(self.call.state, CallState::InFlight(..))
    }
    fn deadline(&self) -> Option<Timestamp> {
        Some(self.call.deadline)
    }
}

impl HasCall for CommandEntry {
    fn call(&self) -> &Call {
        &self.call
    }
    fn call_mut(&mut self) -> &mut Call {
        &mut self.call
    }
}

/// The commands not yet ended.
pub(crate) type Commands = Calls<CommandHandle, CommandEntry>;

impl Commands {
    pub(crate) fn add(
        &mut self,
        seq: u64,
        retained: RetainedCommand,
        shape: CommandShape,
        deadline: Timestamp,
        recovered: bool,
        behind_begin: bool,
    ) -> CommandHandle {
        let mut call = Call::new(seq, deadline);
        // A repetition of a command whose earlier attempts (under another handle) may have run.
        call.ran = recovered;
        let entry = CommandEntry {
            retained,
            shape,
            call,
            cancelling: false,
            behind_begin,
        };
        self.insert(CommandHandle, entry)
    }

    /// Whether a BEGIN is out: until it is answered, the session may hold a transaction.
    pub(crate) fn begin_outstanding(&self) -> bool {
        self.any_marked()
    }

    /// The commands due now, in the order they were made. A command of the held transaction
    /// waits while the transaction is being attached again, and one made behind an unanswered
    /// BEGIN waits for its answer.
    pub(crate) fn due(&self, now: Timestamp, attach_pending: bool, out: &mut Vec<(u64, Purpose)>) {
        for (h, e) in self.pending() {
            let waits = e.behind_begin || (attach_pending && e.retained.needs_binding());
            if e.call.due(now) && !e.cancelling && !waits {
                out.push((e.call.seq, Purpose::Command(*h)));
            }
        }
    }

    /// The attempt registered as `request` on `session`, if a command has it.
    pub(crate) fn attempt(&self, h: CommandHandle) -> Option<(SessionId, RequestHandle)> {
        match self.get(h)?.call.state {
            CallState::InFlight(s, r) => Some((s, r)),
            _ => None,
        }
    }
}

/// What the reply `frame` to command `e`'s current attempt means (E-6, C-8, C-9, X-1 to X-6).
/// Changes to the transaction binding are made on `binding`; the returned flag says whether
/// it changed.
pub(crate) fn on_reply(
    e: &CommandEntry,
    frame: ServerFrame,
    binding: &mut Binding,
    now: Timestamp,
    leader_uri: super::LeaderUri,
) -> (Step, bool) {
    let view = frame.view();
    let Some(reply) = view.body_as_reply() else {
        return (Step::Nothing, false);
    };
    if let Some(r) = reply.body_as_request_rejected() {
        let rejection = r.rejection().unwrap_or(RequestRejection::InvalidRequest);
        let result = match rejection {
            RequestRejection::ReplyTooLarge => e.uncertain(UncertainCause::ReplyTooLarge),
            RequestRejection::ServerBusy => return (Step::Backoff { ran: false }, false),
            _ => e.refused(
                Failure::Rejected {
                    rejection,
                    message: r.message().to_string(),
                },
                UncertainCause::Inconclusive,
            ),
        };
        return (Step::Done(result), false);
    }
    if let Some(c) = reply.body_as_request_cancelled() {
        let result = match c.stage() {
            // This attempt had no effect; an earlier one may have (C-9).
            Some(CancellationStage::BeforeAdmission) => {
                e.refused(Failure::CancelledBeforeAdmission, UncertainCause::Cancelled)
            }
            _ => e.uncertain(UncertainCause::CancelledAfterAdmission),
        };
        return (Step::Done(result), false);
    }
    let Some(o) = reply.body_as_command_outcome() else {
        return (Step::Nothing, false);
    };
    // the newest status of the held transaction advances the position.
    let status = o.transaction().map(|s| s.unpack());
    let admission = o.transaction_admission().map(|a| a.unpack());
    let inspected = o.inspection().map(crate::transaction::InspectedPreview::of);
    let disposition = o.disposition_type();
    let redirect_to = o
        .disposition_as_leader_redirect()
        .and_then(|r| r.leader())
        .and_then(|l| leader_uri.of(l))
        .map(str::to_string);
    // The report takes the frame itself: a second handle on it would make every report of a
    // frame that owns its buffer alone look shared, and be copied for nothing.
    let report = move || {
        CommandReport::new(e.retained.reference.clone(), frame)
            .unwrap_or_else(|| unreachable!("the reply holds a command outcome"))
    };
    match disposition {
        CommandDisposition::CommandCompleted => {
            let changed = match e.shape.first() {
                StatementKind::Begin => match &status {
                    Some(st) => {
                        binding.begun(st, now);
                        true
                    }
                    None => false,
                },
                StatementKind::Commit => {
                    binding.finished(Ending::Committed);
                    true
                }
                StatementKind::Revert => {
                    binding.finished(Ending::Reverted);
                    true
                }
                _ => {
                    binding.outcome(status.as_ref(), admission.as_ref(), now);
                    // an inspection of the whole attached transaction at its current
                    // position gives the preview the user reviewed.
                    if let Some(i) = &inspected {
                        binding.inspected(i);
                    }
                    false
                }
            };
            (Step::Done(CommandResult::Completed(report())), changed)
        }
        CommandDisposition::RequestFailed | CommandDisposition::PreviewStale => {
            binding.outcome(status.as_ref(), None, now);
            let result = CommandResult::Failed(Failure::Outcome(report()));
            (Step::Done(result), false)
        }
        CommandDisposition::TransactionTakenOver => {
            binding.taken_over();
            let result = CommandResult::Failed(Failure::Outcome(report()));
            (Step::Done(result), true)
        }
        CommandDisposition::LeaderRedirect => (Step::Redirect(redirect_to), false),
        CommandDisposition::TransactionDetached => {
            if matches!(
                binding,
                Binding::Finished { .. } | Binding::TakenOver { .. } | Binding::Unbound
            ) {
                // the transaction ended and recorded nothing under this reference.
                let result = e.refused(Failure::TransactionEnded, UncertainCause::Inconclusive);
                return (Step::Done(result), false);
            }
            binding.detach();
            (Step::Detached, true)
        }
        // E-3, X-5: repeat under the same reference after a back-off.
        CommandDisposition::OutcomeUnknown => (Step::Backoff { ran: true }, false),
        CommandDisposition::ExecutionReferenceConflict => {
            let result = e.refused(Failure::Outcome(report()), UncertainCause::Inconclusive);
            (Step::Done(result), false)
        }
        // E-4: never the original command's outcome.
        CommandDisposition::ExecutionReferenceExpired => (
            Step::Done(e.uncertain(UncertainCause::ReferenceExpired)),
            false,
        ),
        _ => (Step::Nothing, false),
    }
}

impl super::Client {
    /// Executes NSPL `query` as one command with a new UUIDv7 reference taken from `wall`
    /// (E-1), within the default call deadline.
    pub fn execute(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
    ) -> Result<CommandHandle, ClientError> {
        self.execute_with(now, wall, query, None, None)
    }

    /// Like [`super::Client::execute`], with a reference of the application's own (checked against
    /// E-1: a UUIDv7 of the current time unless every statement only reads) and a deadline.
    pub fn execute_with(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
        reference: Option<ExecutionReference>,
        deadline: Option<Duration>,
    ) -> Result<CommandHandle, ClientError> {
        self.execute_gated(now, wall, query, reference, deadline, ungated)
            .map_err(Gated::into_client)
    }

    /// Like [`super::Client::execute_with`], with a `gate` the command must pass after every
    /// check of the engine and before the engine takes it: the gate sees the command exactly
    /// as every attempt will send it (E-2) and may refuse it, and then nothing was taken,
    /// sent or queued. A driver that journals commands writes the record here, so no frame
    /// of the command can reach a transport before its record is written. The one exception
    /// is a command made while a `BEGIN` is unanswered, which waits for the position the
    /// BEGIN's answer gives: the gate is told so ([`GateNote::awaits_position`]).
    pub fn execute_gated<E>(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
        reference: Option<ExecutionReference>,
        deadline: Option<Duration>,
        gate: impl FnOnce(&RetainedCommand, GateNote) -> Result<(), E>,
    ) -> Result<CommandHandle, Gated<E>> {
        let holding = self.tx.binding.is_holding();
        let shape = match check_command(query, holding) {
            Ok(shape) => shape,
            // L-2 with X-2: several statements made while a BEGIN is unanswered belong to the
            // transaction it binds, like any write made then; they wait behind it and travel
            // inside it, or end unsent. Reads and a BEGIN are not held, so they stay refused.
            Err(StatementError::SeveralOutsideTransaction)
                if !holding && self.begin_unanswered() =>
            {
                match check_command(query, true) {
                    Ok(shape) if !shape.is_read() && shape.first() != StatementKind::Begin => shape,
                    _ => return Err(StatementError::SeveralOutsideTransaction.into()),
                }
            }
            Err(e) => return Err(e.into()),
        };
        let binding = &self.tx.binding;
        if self.attach_by_id_outstanding() {
            return Err(ClientError::AttachInProgress.into());
        }
        let first = shape.first();
        if first == StatementKind::Begin && self.selected_domain.is_none() {
            return Err(ClientError::NoDomainSelected.into());
        }
        if first == StatementKind::Begin && self.begin_unanswered() {
            return Err(ClientError::BeginUnanswered.into());
        }
        let reference = match reference {
            Some(r) => {
                if !shape.is_read() {
                    r.check_persistent(wall, 5 * 60 * 1000)?;
                }
                r
            }
            None => ExecutionReference::new_v7(wall, &mut self.rng),
        };
        let (position, preview) = of_transaction(binding, &shape);
        let domain = match binding.held() {
            Some(h) => Some(h.domain.clone()),
            None => self.selected_domain.clone(),
        };
        // a command made while a BEGIN is unanswered belongs to the transaction the
        // BEGIN binds as it runs, and its position is known only from the BEGIN's status: it
        // waits behind the BEGIN, unsent. A read carries no position and goes at once.
        let behind_begin = !binding.is_holding()
            && !shape.is_read()
            && first != StatementKind::Begin
            && self.begin_unanswered();
        if behind_begin && !self.behind_begin_has_room(query.len()) {
            return Err(ClientError::BehindBeginFull.into());
        }
        let retained = RetainedCommand {
            reference,
            query: query.to_string(),
            domain,
            position,
            preview,
            created: now,
        };
        self.checker
            .check_command(&retained.parts())
            .map_err(ClientError::from)?;
        let wait = match deadline {
            Some(d) => d,
            None => self.default_wait(&shape)?,
        };
        let note = GateNote {
            awaits_position: behind_begin,
        };
        gate(&retained, note).map_err(Gated::Gate)?;
        let seq = self.seq();
        let deadline = now + wait;
        let h = self
            .commands
            .add(seq, retained, shape, deadline, false, behind_begin);
        if first == StatementKind::Begin {
            self.behind.begin = Some(h);
        } else if behind_begin {
            self.behind.held.push(h);
        }
        self.drive(now);
        Ok(h)
    }

    /// How long a command waits when the caller names no wait: a `BACKUP` its own bounded
    /// wait, [`super::ClientConfig::backup_wait`], between one millisecond and 24 hours
    /// any other command the call timeout.
    fn default_wait(&self, shape: &CommandShape) -> Result<Duration, ClientError> {
        if shape.first() != StatementKind::Backup {
            return Ok(self.config.call_timeout);
        }
        let wait = self.config.backup_wait;
        if wait < Duration::from_millis(1) || wait > Duration::from_secs(24 * 3600) {
            return Err(ClientError::BackupWait(wait));
        }
        Ok(wait)
    }

    /// Repeats an uncertain command exactly (E-2, E-3): same reference, query, domain,
    /// position and preview, under a new request identity. It waits `deadline` from now;
    /// without one, a `BACKUP` waits [`super::ClientConfig::backup_wait`] and any other
    /// command the call timeout.
    pub fn recover(
        &mut self,
        now: Timestamp,
        command: &RetainedCommand,
        deadline: Option<Duration>,
    ) -> Result<CommandHandle, ClientError> {
        self.recover_gated(now, command, deadline, ungated)
            .map_err(Gated::into_client)
    }

    /// Like [`super::Client::recover`], with a `gate` the repetition must pass after every
    /// check of the engine and before the engine takes it (see
    /// [`super::Client::execute_gated`]).
    pub fn recover_gated<E>(
        &mut self,
        now: Timestamp,
        command: &RetainedCommand,
        deadline: Option<Duration>,
        gate: impl FnOnce(&RetainedCommand, GateNote) -> Result<(), E>,
    ) -> Result<CommandHandle, Gated<E>> {
        // L-2: several statements travel together only inside a transaction: the one the
        // command belongs to (it carries its position or preview) or the one held now.
        let in_transaction = command.needs_binding() || self.tx.binding.is_holding();
        let shape = check_command(&command.query, in_transaction)?;
        self.checker
            .check_command(&command.parts())
            .map_err(ClientError::from)?;
        let wait = match deadline {
            Some(d) => d,
            None => self.default_wait(&shape)?,
        };
        let first = shape.first();
        if first == StatementKind::Begin && self.begin_unanswered() {
            return Err(ClientError::BeginUnanswered.into());
        }
        // A repetition is never held behind a BEGIN: it carries what it carried.
        gate(command, GateNote::default()).map_err(Gated::Gate)?;
        let seq = self.seq();
        let deadline = now + wait;
        let h = self
            .commands
            .add(seq, command.clone(), shape, deadline, true, false);
        if first == StatementKind::Begin {
            self.behind.begin = Some(h);
        }
        self.drive(now);
        Ok(h)
    }

    /// Asks the server to cancel a command (C-9). Its result still comes as its own event:
    /// failed only when it was never sent or was cancelled before admission, otherwise
    /// uncertain or its real outcome. A command whose cancellation was asked for is never
    /// sent again.
    pub fn cancel(&mut self, now: Timestamp, handle: CommandHandle) -> Result<(), ClientError> {
        if self.commands.get(handle).is_none() {
            return Err(ClientError::UnknownHandle);
        }
        let attempt = self.commands.attempt(handle);
        let mut s = self.session.take();
        match (attempt, s.as_mut()) {
            (Some((sid, r)), Some(s)) if s.id == sid => {
                let deadline = Some(now + self.config.call_timeout);
                match s.exchange.cancel(now, r, deadline) {
                    // Out: a CancelRequest of its own identity (C-9).
                    Ok(Some(c)) => {
                        s.pending.insert(c, Purpose::Cancel(handle));
                        if let Some(mut e) = self.commands.get_mut(handle) {
                            e.cancelling = true;
                        }
                    }
                    // Never written: the exchange ended it; nothing is sent.
                    Ok(None) => {}
                    Err(_) => {
                        if let Some(mut e) = self.commands.get_mut(handle) {
                            e.cancelling = true;
                        }
                    }
                }
                self.drain_exchange(now, s);
            }
            _ => {
                // Waiting for a session or backing off: nothing of this attempt is out.
                if let Some(e) = self.commands.remove(handle) {
                    let result = e.unanswered(UncertainCause::Cancelled);
                    self.events
                        .push_back(ClientEvent::Command { handle, result });
                }
            }
        }
        if let Some(s) = s.filter(|s| s.exchange.is_open()) {
            self.session = Some(s);
        }
        self.drive(now);
        Ok(())
    }

    pub(super) fn send_command(&mut self, now: Timestamp, h: CommandHandle) {
        let Some(e) = self.commands.get(h) else {
            return;
        };
        if now.saturating_since(e.retained.created) >= self.config.retry_horizon {
            if let Some(e) = self.commands.remove(h) {
                let result = e.unanswered(UncertainCause::RetryHorizon);
                self.events
                    .push_back(ClientEvent::Command { handle: h, result });
            }
            return;
        }
        let deadline = Some(e.call.deadline);
        let sent = super::send_on(
            &mut self.session,
            &mut self.retire,
            Purpose::Command(h),
            |x| x.request_command(now, &e.retained.parts(), deadline),
        );
        match sent {
            Ok((sid, r)) => {
                if let Some(mut e) = self.commands.get_mut(h) {
                    e.call.registered(sid, r);
                }
            }
            Err(None) => {}
            Err(Some(_)) => {
                if let Some(e) = self.commands.remove(h) {
                    let result = e.unanswered(UncertainCause::Inconclusive);
                    self.events
                        .push_back(ClientEvent::Command { handle: h, result });
                }
            }
        }
    }

    pub(super) fn on_command_reply(
        &mut self,
        now: Timestamp,
        s: &mut Session,
        h: CommandHandle,
        frame: ServerFrame,
    ) {
        let Some(entry) = self.commands.get(h) else {
            return;
        };
        // E-7: one outcome per statement, up to the one that ended the command; more cannot
        // be reported from its statements.
        let statements = entry.shape.kinds().len();
        let found = frame
            .view()
            .body_as_reply()
            .and_then(|r| r.body_as_command_outcome())
            .map_or(0, |o| o.statements().len());
        if found > statements {
            s.exchange
                .fail(ProtocolViolation::StatementCount { statements, found });
            return;
        }
        let (step, changed) = on_reply(
            entry,
            frame,
            &mut self.tx.binding,
            now,
            self.config.leader_uri,
        );
        if changed {
            self.events
                .push_back(ClientEvent::Transaction(self.tx.binding.clone()));
        }
        match step {
            Step::Done(result) => {
                self.redirect_streak = 0;
                self.commands.remove(h);
                self.events
                    .push_back(ClientEvent::Command { handle: h, result });
            }
            Step::Backoff { ran } => {
                let attempts = entry_attempts(&self.commands, h);
                let at = now + self.backoff(attempts);
                if let Some(mut e) = self.commands.get_mut(h) {
                    e.call.again(Some(at), ran);
                }
            }
            Step::Redirect(uri) => {
                if let Some(mut e) = self.commands.get_mut(h) {
                    e.call.again(None, false);
                }
                if !self.redirect(s, uri) {
                    // D-2: no address to go to: back off and ask again.
                    let attempts = entry_attempts(&self.commands, h);
                    let at = now + self.backoff(attempts);
                    if let Some(mut e) = self.commands.get_mut(h) {
                        e.call.again(Some(at), false);
                    }
                }
            }
            Step::Detached => {
                if let Some(mut e) = self.commands.get_mut(h) {
                    e.call.again(None, false);
                }
                if !attach_on(s, &self.tx, now, self.config.call_timeout) {
                    self.tx.retry_at = Some(now + self.backoff(1));
                }
            }
            Step::Nothing => {
                if let Some(mut e) = self.commands.get_mut(h) {
                    e.call.again(None, true);
                }
            }
        }
    }
}

/// The expected position and preview a command of `shape` carries in the transaction
/// `binding` holds: a COMMIT the reviewed preview, a REVERT neither, a read
/// neither, any other statement the position of the newest status.
fn of_transaction(
    binding: &Binding,
    shape: &CommandShape,
) -> (Option<u64>, Option<TransactionPreviewIdentityT>) {
    match (binding, shape.first()) {
        (Binding::Bound(h) | Binding::Detached(h), StatementKind::Commit) => {
            (None, h.preview.clone())
        }
        (Binding::Bound(h) | Binding::Detached(h), k)
            if !shape.is_read() && k != StatementKind::Revert =>
        {
            (Some(h.position), None)
        }
        _ => (None, None),
    }
}

/// The commands made while a `BEGIN` was unanswered, waiting for its answer.
#[derive(Debug, Default)]
pub(crate) struct BehindBegin {
    /// The newest BEGIN made; unanswered while its command is open.
    pub begin: Option<CommandHandle>,
    /// The commands waiting behind it, in the order they were made. Some may have ended
    /// already (their deadline passed, or they were cancelled).
    pub held: Vec<CommandHandle>,
}

impl super::Client {
    /// Whether a BEGIN the application made is still open: until it is answered, the
    /// transaction it binds and its position are unknown.
    pub(super) fn begin_unanswered(&self) -> bool {
        self.behind
            .begin
            .is_some_and(|b| self.commands.get(b).is_some())
    }

    /// Whether one more command of `bytes` of query text may wait behind the BEGIN:
    /// the waiting commands are bounded in count and in bytes.
    fn behind_begin_has_room(&mut self, bytes: usize) -> bool {
        let commands = &self.commands;
        self.behind.held.retain(|h| commands.get(*h).is_some());
        let held: usize = self
            .behind
            .held
            .iter()
            .filter_map(|h| commands.get(*h))
            .map(|e| e.retained.query.len())
            .sum();
        self.behind.held.len() < MAX_BEHIND_BEGIN
            && held.saturating_add(bytes) <= MAX_BEHIND_BEGIN_BYTES
    }

    /// The BEGIN the held commands wait behind was answered or ended: each goes with the
    /// position, preview and domain of the transaction it bound, in the order they were
    /// made; when it bound none, each ends, never sent.
    /// Returns whether any was.
    pub(super) fn release_behind_begin(&mut self) -> bool {
        if self.behind.held.is_empty() || self.begin_unanswered() {
            return false;
        }
        self.behind.begin = None;
        for h in std::mem::take(&mut self.behind.held) {
            if self.tx.binding.is_holding() {
                let (position, preview) = match self.commands.get(h) {
                    Some(e) => of_transaction(&self.tx.binding, &e.shape),
                    None => continue,
                };
                let domain = self.tx.binding.held().map(|t| t.domain.clone());
                if let Some(mut e) = self.commands.get_mut(h) {
                    e.retained.position = position;
                    e.retained.preview = preview;
                    e.retained.domain = domain;
                    e.behind_begin = false;
                }
            } else if let Some(e) = self.commands.remove(h) {
                let result = e.decide(
                    false,
                    Failure::TransactionNotBegun,
                    UncertainCause::Inconclusive,
                );
                self.events
                    .push_back(ClientEvent::Command { handle: h, result });
            }
        }
        true
    }
}

fn entry_attempts(commands: &Commands, h: CommandHandle) -> u32 {
    commands.get(h).map_or(0, |e| e.call.attempts)
}
