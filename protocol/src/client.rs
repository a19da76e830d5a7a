//! The client across sessions: commands with exact recovery, redirects, reconnects with the
//! D-5 restoration order, the transaction binding, and deadlines on every call.
//!
//! Sans-IO like the [`Exchange`] it drives. The driver opens and closes transport streams when
//! the client asks ([`Action`]), reports what happened ([`Client::handle_connected`],
//! [`Client::handle_frame`], [`Client::handle_closed`], [`Client::handle_timeout`]), and drains
//! [`Client::poll_action`], [`Client::poll_event`], [`Client::poll_unsolicited`] after every
//! input. Time is passed in: a monotonic [`Timestamp`] everywhere, and wall-clock
//! [`UnixMillis`] where a new execution reference takes its UUIDv7 time (E-1).
//!
//! A command ends exactly once, as [`CommandResult::Completed`], [`CommandResult::Failed`] or
//! [`CommandResult::Uncertain`] naming its execution reference. Nothing else is claimed: a
//! command whose effect may have happened is never reported failed, and a command is never
//! reported completed without its own outcome.

use crate::command::{ExecutionReference, ReferenceError};
use crate::endpoint::{Endpoint, Endpoints};
use crate::exchange::{
    EndCause, Exchange, ExchangeConfig, ExchangeEvent, Interruption, RequestError, RequestHandle,
    Unsolicited, UnsolicitedQueue,
};
use crate::frame::ServerFrame;
use crate::rng::Rng;
use crate::schema::*;
use crate::statements::{check_command, CommandShape, StatementError, StatementKind};
use crate::time::{Timestamp, UnixMillis};
use crate::transaction::{Binding, Ending};
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

/// A transport stream the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

/// A command the application asked to execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommandHandle(pub u64);

/// A read (or other non-command request) the application sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadHandle(pub u64);

/// What the client asks the driver to do.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Action {
    /// Open a session stream to `endpoint`; answer with `handle_connected` or `handle_closed`.
    Connect {
        /// The stream's name.
        session: SessionId,
        /// Where.
        endpoint: Endpoint,
    },
    /// Write one frame as one transport message (F-2).
    Send {
        /// The stream.
        session: SessionId,
        /// The frame.
        frame: Bytes,
    },
    /// End the stream: cleanly (half-close, which reverts a held transaction, X-7) or not.
    Close {
        /// The stream.
        session: SessionId,
        /// Whether to half-close cleanly.
        clean: bool,
    },
}

/// Configuration of a client.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Configured server addresses.
    pub seeds: Vec<Endpoint>,
    /// Limits of each session.
    pub exchange: ExchangeConfig,
    /// The deadline of a call that names none (D-4, T-8). Default 30 s.
    pub call_timeout: Duration,
    /// The deadline of opening a session. Default 10 s.
    pub connect_timeout: Duration,
    /// First back-off delay. Default 50 ms.
    pub backoff_initial: Duration,
    /// Largest back-off delay. Default 5 s.
    pub backoff_max: Duration,
    /// How long after its creation a reference is still repeated (E-4); well inside the
    /// server's 15-minute retry validity. Default 10 minutes.
    pub retry_horizon: Duration,
    /// A held transaction's idle timeout. Default 15 minutes.
    pub transaction_idle_timeout: Duration,
    /// The most endpoints remembered from redirects (D-3). Default 8.
    pub max_learned_endpoints: usize,
    /// The seed of the client's random generator (references, jitter).
    pub seed: u64,
}

impl ClientConfig {
    /// A configuration with these seeds and defaults elsewhere.
    pub fn new(seeds: Vec<Endpoint>, seed: u64) -> Self {
        Self {
            seeds,
            exchange: ExchangeConfig::default(),
            call_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            backoff_initial: Duration::from_millis(50),
            backoff_max: Duration::from_secs(5),
            retry_horizon: Duration::from_secs(600),
            transaction_idle_timeout: Duration::from_secs(900),
            max_learned_endpoints: 8,
            seed,
        }
    }
}

/// Why the application's call was refused. Nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The query cannot travel as a command (L-2).
    #[error(transparent)]
    Statement(#[from] StatementError),
    /// The execution reference is not acceptable (E-1).
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// BEGIN needs a selected domain.
    #[error("BEGIN needs a selected domain")]
    NoDomainSelected,
    /// Not allowed while a transaction is held (L-3).
    #[error("not allowed while a transaction is held")]
    InTransaction,
    /// The request is not a read the client can repeat.
    #[error("only reads are sent with `read`")]
    NotARead,
    /// No such command or read is waiting.
    #[error("no such command or read is waiting")]
    UnknownHandle,
    /// A transaction append or commit while the client holds no transaction.
    #[error("no transaction is held")]
    NoTransaction,
}

/// A command's outcome as the server recorded it, copied out of its frame.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandReport {
    /// The command's execution reference.
    pub reference: ExecutionReference,
    /// The whole outcome (its `origin` is information only, E-8).
    pub outcome: CommandOutcomeT,
}

impl CommandReport {
    /// One outcome per statement in written order (E-7); empty for a single statement.
    pub fn statements(&self) -> &[StatementOutcomeT] {
        &self.outcome.statements
    }
    /// Executed now or recovered from an earlier attempt (E-8: information only).
    pub fn origin(&self) -> Option<OutcomeOrigin> {
        self.outcome.origin
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
    /// Never sent.
    NotSent,
    /// The transaction it belonged to had ended and holds no outcome for it.
    TransactionEnded,
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

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CommandResult {
    /// Its own outcome says it completed.
    Completed(CommandReport),
    /// It definitely failed or never took effect.
    Failed(Failure),
    /// Its outcome is unknown; repeat it with [`Client::recover`] to learn it.
    Uncertain {
        /// The command, reference included.
        command: RetainedCommand,
        /// Why it is unknown.
        cause: UncertainCause,
    },
}

/// How a read ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ReadResult {
    /// Its reply (a checked frame whose body is a `Reply`).
    Replied(ServerFrame),
    /// Its deadline passed.
    TimedOut,
}

/// Why a session ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SessionLoss {
    /// The transport ended or could not be opened.
    Transport,
    /// The server ended the session.
    Ending(ServerFrame),
    /// The server broke the protocol (F-8).
    Violation(crate::violation::ProtocolViolation),
    /// The client ended it (redirect, exhausted identities, close).
    Closed,
}

/// Something the application learns from the client.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientEvent {
    /// A command ended.
    Command {
        /// The command.
        handle: CommandHandle,
        /// How.
        result: CommandResult,
    },
    /// A read ended.
    Read {
        /// The read.
        handle: ReadHandle,
        /// How.
        result: ReadResult,
    },
    /// A session opened.
    SessionOpened {
        /// The session.
        session: SessionId,
        /// Where.
        endpoint: Endpoint,
    },
    /// A session ended; its state is restored on the next one (D-5).
    SessionLost {
        /// The session.
        session: SessionId,
        /// Why.
        loss: SessionLoss,
    },
    /// The transaction binding changed.
    Transaction(Binding),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum CmdState {
    Waiting,
    InFlight(SessionId, RequestHandle),
    Backoff(Timestamp),
}

impl CmdState {
    /// Whether the call should be sent now.
    fn due(self, now: Timestamp) -> bool {
        match self {
            CmdState::Waiting => true,
            CmdState::Backoff(t) => t <= now,
            CmdState::InFlight(..) => false,
        }
    }

    /// A back-off that ended waits for a session instead of keeping a timer.
    fn settle_backoff(&mut self, now: Timestamp) {
        if matches!(*self, CmdState::Backoff(t) if t <= now) {
            *self = CmdState::Waiting;
        }
    }

    /// The back-off's end, if backing off.
    fn backoff_until(self) -> Option<Timestamp> {
        match self {
            CmdState::Backoff(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
struct CommandEntry {
    retained: RetainedCommand,
    shape: CommandShape,
    deadline: Timestamp,
    state: CmdState,
    may_have_run: bool,
    /// A repetition of a command whose earlier attempts (under another handle) may have run.
    recovered: bool,
    attempts: u32,
}

#[derive(Debug, Clone)]
struct ReadEntry {
    request: ClientRequestT,
    deadline: Timestamp,
    state: CmdState,
    attempts: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Purpose {
    Command(CommandHandle),
    Read(ReadHandle),
    Attach,
    Restore,
}

#[derive(Debug, PartialEq)]
enum Phase {
    Connecting(Timestamp),
    Restoring,
    Ready,
}

#[derive(Debug)]
struct Session {
    id: SessionId,
    exchange: Exchange,
    phase: Phase,
    pending: BTreeMap<RequestHandle, Purpose>,
}

/// The Nervix client: sessions, commands, reads and the transaction binding.
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    rng: Rng,
    endpoints: Endpoints,
    session: Option<Session>,
    next_session: u64,
    reconnect_at: Option<Timestamp>,
    reconnect_attempt: u32,
    commands: BTreeMap<CommandHandle, CommandEntry>,
    next_command: u64,
    reads: BTreeMap<ReadHandle, ReadEntry>,
    next_read: u64,
    binding: Binding,
    attach_retry_at: Option<Timestamp>,
    selected_domain: Option<String>,
    current_endpoint: Option<Endpoint>,
    redirecting: bool,
    clocks: BTreeSet<String>,
    subscriptions: Vec<(String, String)>,
    actions: VecDeque<Action>,
    events: VecDeque<ClientEvent>,
    unsolicited: UnsolicitedQueue,
}

impl Client {
    /// A client with no session yet; it connects when there is work.
    pub fn new(config: ClientConfig) -> Self {
        let capacity = config.exchange.unsolicited_capacity;
        Self {
            rng: Rng::new(config.seed),
            endpoints: Endpoints::new(config.seeds.clone(), config.max_learned_endpoints),
            config,
            session: None,
            next_session: 1,
            reconnect_at: None,
            reconnect_attempt: 0,
            commands: BTreeMap::new(),
            next_command: 1,
            reads: BTreeMap::new(),
            next_read: 1,
            binding: Binding::Unbound,
            attach_retry_at: None,
            selected_domain: None,
            current_endpoint: None,
            redirecting: false,
            clocks: BTreeSet::new(),
            subscriptions: Vec::new(),
            actions: VecDeque::new(),
            events: VecDeque::new(),
            unsolicited: UnsolicitedQueue::new(capacity),
        }
    }

    // ----- getters ------------------------------------------------------------------------

    /// The transaction binding.
    pub fn binding(&self) -> &Binding {
        &self.binding
    }

    /// The selected domain every command names (L-1).
    pub fn selected_domain(&self) -> Option<&str> {
        self.selected_domain.as_deref()
    }

    /// The current session, if one is open or opening.
    pub fn session(&self) -> Option<SessionId> {
        self.session.as_ref().map(|s| s.id)
    }

    /// Whether the current session is open and restored.
    pub fn is_ready(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.phase == Phase::Ready)
    }

    /// Endpoints learned from redirects and leadership observations (D-3).
    pub fn learned_endpoints(&self) -> Vec<Endpoint> {
        self.endpoints.learned().cloned().collect()
    }

    /// The execution reference of a command that has not ended yet.
    pub fn reference_of(&self, handle: CommandHandle) -> Option<&ExecutionReference> {
        self.commands.get(&handle).map(|e| &e.retained.reference)
    }

    /// Reads not yet ended.
    pub fn outstanding_reads(&self) -> usize {
        self.reads.len()
    }

    /// Commands not yet ended.
    pub fn outstanding_commands(&self) -> usize {
        self.commands.len()
    }

    // ----- application calls --------------------------------------------------------------

    /// Selects the domain commands name (L-1); `None` selects none. Refused while a
    /// transaction is held, whose requests all name its domain (L-3).
    pub fn select_domain(&mut self, domain: Option<&str>) -> Result<(), ClientError> {
        if self.binding.is_holding() {
            return Err(ClientError::InTransaction);
        }
        self.selected_domain = domain.map(str::to_string);
        Ok(())
    }

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

    /// Like [`Client::execute`], with a reference of the application's own (checked against
    /// E-1: a UUIDv7 of the current time unless every statement only reads) and a deadline.
    pub fn execute_with(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
        reference: Option<ExecutionReference>,
        deadline: Option<Duration>,
    ) -> Result<CommandHandle, ClientError> {
        let holding = self.binding.is_holding();
        let shape = check_command(query, holding)?;
        let reference = match reference {
            Some(r) => {
                if !shape.is_read() {
                    r.check_persistent(wall, 5 * 60 * 1000)?;
                }
                r
            }
            None => ExecutionReference::new_v7(wall, &mut self.rng),
        };
        let first = shape.first();
        if first == StatementKind::Begin && self.selected_domain.is_none() {
            return Err(ClientError::NoDomainSelected);
        }
        let (position, preview) = match (&self.binding, first) {
            (Binding::Bound(h) | Binding::Detached(h), StatementKind::Commit) => {
                (None, h.preview.clone())
            }
            (Binding::Bound(h) | Binding::Detached(h), k)
                if !shape.is_read() && k != StatementKind::Revert =>
            {
                (Some(h.position), None)
            }
            _ => (None, None),
        };
        let domain = match self.binding.held() {
            Some(h) => Some(h.domain.clone()),
            None => self.selected_domain.clone(),
        };
        let retained = RetainedCommand {
            reference,
            query: query.to_string(),
            domain,
            position,
            preview,
            created: now,
        };
        Ok(self.add_command(now, retained, shape, deadline))
    }

    /// Repeats an uncertain command exactly (E-2, E-3): same reference, query, domain,
    /// position and preview, under a new request identity.
    pub fn recover(
        &mut self,
        now: Timestamp,
        command: &RetainedCommand,
        deadline: Option<Duration>,
    ) -> Result<CommandHandle, ClientError> {
        let shape = check_command(&command.query, true)?;
        let h = self.add_command(now, command.clone(), shape, deadline);
        if let Some(e) = self.commands.get_mut(&h) {
            e.may_have_run = true;
            e.recovered = true;
        }
        self.drive(now);
        Ok(h)
    }

    fn add_command(
        &mut self,
        now: Timestamp,
        retained: RetainedCommand,
        shape: CommandShape,
        deadline: Option<Duration>,
    ) -> CommandHandle {
        let h = CommandHandle(self.next_command);
        self.next_command += 1;
        let deadline = now + deadline.unwrap_or(self.config.call_timeout);
        self.commands.insert(
            h,
            CommandEntry {
                retained,
                shape,
                deadline,
                state: CmdState::Waiting,
                may_have_run: false,
                recovered: false,
                attempts: 0,
            },
        );
        self.drive(now);
        h
    }

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
        Ok(self.add_read(now, request, deadline))
    }

    fn add_read(
        &mut self,
        now: Timestamp,
        request: ClientRequestT,
        deadline: Option<Duration>,
    ) -> ReadHandle {
        let h = ReadHandle(self.next_read);
        self.next_read += 1;
        let deadline = now + deadline.unwrap_or(self.config.call_timeout);
        self.reads.insert(
            h,
            ReadEntry {
                request,
                deadline,
                state: CmdState::Waiting,
                attempts: 0,
            },
        );
        self.drive(now);
        h
    }

    /// Attaches a domain's clock; once attached it is attached again on every later session
    /// (D-5). Refused while a transaction is held (L-3).
    pub fn follow_clock(
        &mut self,
        now: Timestamp,
        domain: &str,
    ) -> Result<ReadHandle, ClientError> {
        if self.binding.is_holding() {
            return Err(ClientError::InTransaction);
        }
        let req = ClientRequestT::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
            domain: domain.to_string(),
        }));
        Ok(self.add_read(now, req, None))
    }

    /// Opens a subscription; once open it is opened again, as a new generation, on every later
    /// session (D-5). Refused while a transaction is held (L-3).
    pub fn keep_subscription(
        &mut self,
        now: Timestamp,
        domain: &str,
        statement: &str,
    ) -> Result<ReadHandle, ClientError> {
        if self.binding.is_holding() {
            return Err(ClientError::InTransaction);
        }
        Ok(self.add_read(now, subscribe(domain, statement), None))
    }

    /// Asks the server to cancel a command (C-9). Its result still comes as its own event:
    /// failed only when cancelled before admission, otherwise uncertain or its real outcome.
    pub fn cancel(&mut self, now: Timestamp, handle: CommandHandle) -> Result<(), ClientError> {
        let entry = self
            .commands
            .get(&handle)
            .ok_or(ClientError::UnknownHandle)?;
        match entry.state {
            CmdState::InFlight(sid, req) => {
                if let Some(s) = self.session.as_mut().filter(|s| s.id == sid) {
                    let deadline = Some(now + self.config.call_timeout);
                    if let Ok(Some(c)) = s.exchange.cancel(now, req, deadline) {
                        s.pending.insert(c, Purpose::Restore);
                    }
                }
            }
            _ => {
                let e = self
                    .commands
                    .remove(&handle)
                    .ok_or(ClientError::UnknownHandle)?;
                let result = if e.may_have_run {
                    CommandResult::Uncertain {
                        command: e.retained,
                        cause: UncertainCause::CancelledAfterAdmission,
                    }
                } else {
                    CommandResult::Failed(Failure::NotSent)
                };
                self.events
                    .push_back(ClientEvent::Command { handle, result });
            }
        }
        self.flush();
        Ok(())
    }

    /// Ends the current session. With `revert` the stream is half-closed cleanly, which
    /// reverts a held transaction; otherwise it is dropped and the transaction stays
    /// open for a later attach.
    pub fn close(&mut self, now: Timestamp, revert: bool) {
        if let Some(mut s) = self.session.take() {
            s.exchange.close();
            self.actions.push_back(Action::Close {
                session: s.id,
                clean: revert,
            });
            self.drain_exchange(now, &mut s);
            if revert {
                self.binding.finished(Ending::Reverted);
            } else {
                self.binding.detach();
            }
            self.events
                .push_back(ClientEvent::Transaction(self.binding.clone()));
        }
    }

    // ----- driver inputs ------------------------------------------------------------------

    /// The stream `session` opened: restore session state in the D-5 order, then repeat
    /// outstanding commands.
    pub fn handle_connected(&mut self, now: Timestamp, session: SessionId) {
        let Some(s) = self.session.as_mut().filter(|s| s.id == session) else {
            return;
        };
        if !matches!(s.phase, Phase::Connecting(_)) {
            return;
        }
        self.reconnect_attempt = 0;
        s.phase = Phase::Restoring;
        let deadline = Some(now + self.config.call_timeout);
        // 1. clock attaches, 2. subscriptions, each as a new generation: all sent before...
        for domain in &self.clocks {
            let req =
                ClientRequestT::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
                    domain: domain.clone(),
                }));
            if let Ok(h) = s.exchange.request(now, &req, deadline) {
                s.pending.insert(h, Purpose::Restore);
            }
        }
        for (domain, statement) in &self.subscriptions {
            if let Ok(h) = s
                .exchange
                .request(now, &subscribe(domain, statement), deadline)
            {
                s.pending.insert(h, Purpose::Restore);
            }
        }
        // ...3. the transaction attach.
        if let Some(endpoint) = self.endpoint_of(session) {
            self.events
                .push_back(ClientEvent::SessionOpened { session, endpoint });
        }
        if !self.start_attach(now) {
            if let Some(s) = self.session.as_mut() {
                s.phase = Phase::Ready;
            }
        }
        self.drive(now);
    }

    fn endpoint_of(&self, _session: SessionId) -> Option<Endpoint> {
        self.current_endpoint.clone()
    }

    /// A frame arrived on stream `session`.
    pub fn handle_frame(&mut self, now: Timestamp, session: SessionId, frame: Bytes) {
        let Some(mut s) = self.session.take() else {
            return;
        };
        if s.id != session {
            self.session = Some(s);
            return;
        }
        s.exchange.handle_frame(now, frame);
        self.drain_exchange(now, &mut s);
        if s.exchange.is_open() {
            self.session = Some(s);
        }
        self.drive(now);
    }

    /// Stream `session` ended or could not be opened.
    pub fn handle_closed(&mut self, now: Timestamp, session: SessionId) {
        let Some(mut s) = self.session.take() else {
            return;
        };
        if s.id != session {
            self.session = Some(s);
            return;
        }
        if matches!(s.phase, Phase::Connecting(_)) {
            self.lose_session(now, s.id, SessionLoss::Transport, None);
        } else {
            s.exchange.handle_transport_closed(now);
            self.drain_exchange(now, &mut s);
        }
        self.drive(now);
    }

    /// Time passed. Early or repeated calls do nothing.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if let Some(mut s) = self.session.take() {
            match s.phase {
                Phase::Connecting(d) if d <= now => {
                    self.actions.push_back(Action::Close {
                        session: s.id,
                        clean: false,
                    });
                    self.lose_session(now, s.id, SessionLoss::Transport, None);
                }
                _ => {
                    s.exchange.handle_timeout(now);
                    self.drain_exchange(now, &mut s);
                    if s.exchange.is_open() {
                        self.session = Some(s);
                    }
                }
            }
        }
        // Command and read deadlines (D-4).
        let expired: Vec<CommandHandle> = self
            .commands
            .iter()
            .filter(|(_, e)| e.deadline <= now)
            .map(|(h, _)| *h)
            .collect();
        for h in expired {
            self.abandon_in_flight(Purpose::Command(h));
            if let Some(e) = self.commands.remove(&h) {
                let result = if e.may_have_run {
                    CommandResult::Uncertain {
                        command: e.retained,
                        cause: UncertainCause::Deadline,
                    }
                } else {
                    CommandResult::Failed(Failure::NotSent)
                };
                self.events
                    .push_back(ClientEvent::Command { handle: h, result });
            }
        }
        let expired: Vec<ReadHandle> = self
            .reads
            .iter()
            .filter(|(_, e)| e.deadline <= now)
            .map(|(h, _)| *h)
            .collect();
        for h in expired {
            self.abandon_in_flight(Purpose::Read(h));
            self.reads.remove(&h);
            self.events.push_back(ClientEvent::Read {
                handle: h,
                result: ReadResult::TimedOut,
            });
        }
        // Transaction expiry.
        if let Some(at) = self
            .binding
            .expires_at(self.config.transaction_idle_timeout)
        {
            if at <= now {
                self.binding.finished(Ending::Expired);
                self.events
                    .push_back(ClientEvent::Transaction(self.binding.clone()));
            }
        }
        if self.attach_retry_at.is_some_and(|t| t <= now) {
            self.attach_retry_at = None;
            self.start_attach(now);
        }
        self.drive(now);
    }

    /// Stops waiting for a request whose call deadline passed; its late reply is discarded.
    fn abandon_in_flight(&mut self, purpose: Purpose) {
        let Some(s) = self.session.as_mut() else {
            return;
        };
        let Some(r) = s
            .pending
            .iter()
            .find(|(_, p)| **p == purpose)
            .map(|(r, _)| *r)
        else {
            return;
        };
        s.pending.remove(&r);
        if s.exchange.abandon(r).is_ok() {
            // The exchange reports the abandonment; the caller reports the call's end itself.
            let _ = s.exchange.poll_event();
        }
    }

    // ----- outputs ------------------------------------------------------------------------

    /// The next thing the driver must do.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// The next unsolicited frame of the sessions, or a marker of frames lost (C-7).
    #[must_use]
    pub fn poll_unsolicited(&mut self) -> Option<Unsolicited> {
        self.unsolicited.pop()
    }

    /// When [`Client::handle_timeout`] next has something to do. A pure read.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut t: Option<Timestamp> = None;
        let mut add = |x: Option<Timestamp>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        if let Some(s) = &self.session {
            add(s.exchange.poll_timeout());
            if let Phase::Connecting(d) = s.phase {
                add(Some(d));
            }
        }
        for (deadline, state) in self
            .commands
            .values()
            .map(|e| (e.deadline, e.state))
            .chain(self.reads.values().map(|e| (e.deadline, e.state)))
        {
            add(Some(deadline));
            add(state.backoff_until());
        }
        if self.session.is_none() && self.has_work() {
            add(self.reconnect_at);
        }
        add(self
            .binding
            .expires_at(self.config.transaction_idle_timeout));
        add(self.attach_retry_at);
        t
    }

    // ----- the machinery ------------------------------------------------------------------

    fn has_work(&self) -> bool {
        !self.commands.is_empty() || !self.reads.is_empty()
    }

    fn backoff(&mut self, attempt: u32) -> Duration {
        let base = self.config.backoff_initial.as_nanos() as u64;
        let cap = self.config.backoff_max.as_nanos() as u64;
        let full = base.saturating_mul(1u64 << attempt.min(30)).min(cap).max(1);
        Duration::from_nanos(full / 2 + self.rng.below(full / 2 + 1))
    }

    fn connect(&mut self, now: Timestamp) {
        let Some(endpoint) = self.endpoints.next_to_try() else {
            return;
        };
        let id = SessionId(self.next_session);
        self.next_session += 1;
        self.current_endpoint = Some(endpoint.clone());
        self.session = Some(Session {
            id,
            exchange: Exchange::new(self.config.exchange.clone()),
            phase: Phase::Connecting(now + self.config.connect_timeout),
            pending: BTreeMap::new(),
        });
        self.actions.push_back(Action::Connect {
            session: id,
            endpoint,
        });
    }

    /// Sends what can be sent and opens a session when work needs one.
    fn drive(&mut self, now: Timestamp) {
        if self.session.is_none() && self.has_work() && self.reconnect_at.is_none_or(|t| t <= now) {
            self.reconnect_at = None;
            self.connect(now);
        }
        let ready = self.is_ready();
        if !ready {
            // A back-off that ended while no session can carry the call: it waits for the
            // session instead, so no timer fires for nothing (poll_timeout stays exact).
            self.commands
                .values_mut()
                .for_each(|e| e.state.settle_backoff(now));
            self.reads
                .values_mut()
                .for_each(|e| e.state.settle_backoff(now));
        }
        if ready {
            let attach_pending =
                self.binding.is_holding() && matches!(self.binding, Binding::Detached(_));
            let handles: Vec<CommandHandle> = self.commands.keys().copied().collect();
            for h in handles {
                let Some(e) = self.commands.get(&h) else {
                    continue;
                };
                let due = e.state.due(now);
                let needs_binding = e.retained.position.is_some() || e.retained.preview.is_some();
                if due && !(needs_binding && attach_pending) {
                    self.send_command(now, h);
                }
            }
            let reads: Vec<ReadHandle> = self.reads.keys().copied().collect();
            for h in reads {
                if self.reads.get(&h).is_some_and(|e| e.state.due(now)) {
                    self.send_read(now, h);
                }
            }
        }
        self.flush();
    }

    fn flush(&mut self) {
        if let Some(s) = self.session.as_mut() {
            while let Some(frame) = s.exchange.poll_transmit() {
                self.actions.push_back(Action::Send {
                    session: s.id,
                    frame,
                });
            }
        }
    }

    fn send_command(&mut self, now: Timestamp, h: CommandHandle) {
        let Some(e) = self.commands.get(&h) else {
            return;
        };
        if now.saturating_since(e.retained.created) >= self.config.retry_horizon {
            let e = self.commands.remove(&h).unwrap_or_else(|| unreachable!());
            let result = if e.may_have_run {
                CommandResult::Uncertain {
                    command: e.retained,
                    cause: UncertainCause::RetryHorizon,
                }
            } else {
                CommandResult::Failed(Failure::NotSent)
            };
            self.events
                .push_back(ClientEvent::Command { handle: h, result });
            return;
        }
        let req = ClientRequestT::CommandRequest(Box::new(CommandRequestT {
            query: e.retained.query.clone(),
            domain: e.retained.domain.clone(),
            execution_reference: e.retained.reference.to_string(),
            expected_transaction_position: e.retained.position,
            expected_preview: e.retained.preview.clone().map(Box::new),
        }));
        let deadline = Some(e.deadline);
        let Some(s) = self.session.as_mut() else {
            return;
        };
        match s.exchange.request(now, &req, deadline) {
            Ok(r) => {
                s.pending.insert(r, Purpose::Command(h));
                if let Some(e) = self.commands.get_mut(&h) {
                    e.state = CmdState::InFlight(s.id, r);
                    e.may_have_run = true;
                    e.attempts += 1;
                }
            }
            Err(RequestError::IdentitiesExhausted) | Err(RequestError::SessionEnded) => {
                // C-1: a new session.
                let id = s.id;
                self.actions.push_back(Action::Close {
                    session: id,
                    clean: false,
                });
                if let Some(mut s) = self.session.take() {
                    s.exchange.close();
                    self.drain_exchange(now, &mut s);
                }
                let _ = id;
            }
            Err(_) => {
                let e = self.commands.remove(&h).unwrap_or_else(|| unreachable!());
                let result = if e.may_have_run {
                    CommandResult::Uncertain {
                        command: e.retained,
                        cause: UncertainCause::Inconclusive,
                    }
                } else {
                    CommandResult::Failed(Failure::NotSent)
                };
                self.events
                    .push_back(ClientEvent::Command { handle: h, result });
            }
        }
    }

    fn send_read(&mut self, now: Timestamp, h: ReadHandle) {
        let Some(e) = self.reads.get(&h) else { return };
        let deadline = Some(e.deadline);
        let req = e.request.clone();
        let Some(s) = self.session.as_mut() else {
            return;
        };
        if let Ok(r) = s.exchange.request(now, &req, deadline) {
            s.pending.insert(r, Purpose::Read(h));
            if let Some(e) = self.reads.get_mut(&h) {
                e.state = CmdState::InFlight(s.id, r);
                e.attempts += 1;
            }
        }
    }

    /// Sends the transaction attach when a held transaction is detached. Returns whether one
    /// was sent.
    fn start_attach(&mut self, now: Timestamp) -> bool {
        let timeout = self.config.call_timeout;
        match self.session.as_mut() {
            Some(s) => attach_on(s, &self.binding, now, timeout),
            None => false,
        }
    }

    fn drain_exchange(&mut self, now: Timestamp, s: &mut Session) {
        while let Some(u) = s.exchange.poll_unsolicited() {
            if let Unsolicited::Frame(f) = &u {
                self.observe(f);
            }
            // The application's queue is bounded like the exchange's (C-7).
            self.unsolicited.push(u);
        }
        while let Some(ev) = s.exchange.poll_event() {
            match ev {
                ExchangeEvent::Replied { handle, frame } => {
                    let Some(p) = s.pending.remove(&handle) else {
                        continue;
                    };
                    self.on_reply(now, s, p, frame);
                }
                ExchangeEvent::Interrupted { handle, cause } => {
                    let Some(p) = s.pending.remove(&handle) else {
                        continue;
                    };
                    self.on_interrupted(now, p, cause);
                }
                ExchangeEvent::Ended { cause } => {
                    let (loss, redirect) = match cause {
                        EndCause::SessionEnding(f) => {
                            let redirect = f
                                .view()
                                .body_as_session_ending()
                                .and_then(|e| e.reason_as_leader_redirect())
                                .map(|r| r.leader().and_then(|l| l.grpc_uri()).map(str::to_string));
                            (SessionLoss::Ending(f.clone()), redirect)
                        }
                        EndCause::TransportLost => (SessionLoss::Transport, None),
                        EndCause::Violation(v) => (SessionLoss::Violation(v), None),
                        EndCause::Closed => (SessionLoss::Closed, None),
                    };
                    let id = s.id;
                    s.phase = Phase::Connecting(now);
                    self.lose_session(now, id, loss, redirect);
                }
            }
        }
        if s.exchange.is_open() {
            while let Some(frame) = s.exchange.poll_transmit() {
                self.actions.push_back(Action::Send {
                    session: s.id,
                    frame,
                });
            }
        }
    }

    /// Learns leader endpoints from unsolicited LeadershipObserved frames (D-3).
    fn observe(&mut self, f: &ServerFrame) {
        let view = f.view();
        if let Some(l) = view.body_as_leadership_observed() {
            if let Some(remote) = l.leadership_as_leader_is_remote() {
                if let Some(uri) = remote.leader().grpc_uri() {
                    if let Ok(e) = Endpoint::parse(uri) {
                        self.endpoints.learn(e, false);
                    }
                }
            }
        }
    }

    fn lose_session(
        &mut self,
        now: Timestamp,
        id: SessionId,
        loss: SessionLoss,
        redirect: Option<Option<String>>,
    ) {
        if self.session.as_ref().is_some_and(|s| s.id == id) {
            self.session = None;
        }
        let had_binding = matches!(self.binding, Binding::Bound(_));
        self.binding.detach();
        if had_binding {
            self.events
                .push_back(ClientEvent::Transaction(self.binding.clone()));
        }
        for e in self.commands.values_mut() {
            if matches!(e.state, CmdState::InFlight(sid, _) if sid == id) {
                e.state = CmdState::Waiting;
            }
        }
        for e in self.reads.values_mut() {
            if matches!(e.state, CmdState::InFlight(sid, _) if sid == id) {
                e.state = CmdState::Waiting;
            }
        }
        let leader = redirect.flatten().and_then(|u| Endpoint::parse(&u).ok());
        let redirecting = std::mem::take(&mut self.redirecting);
        match leader {
            Some(e) if self.endpoints.learn(e.clone(), true) => {
                // D-1: go to the named leader at once.
                self.reconnect_at = Some(now);
            }
            None if redirecting => {
                self.reconnect_at = Some(now);
            }
            _ => {
                // D-2 and any other loss: back off, never inventing an address.
                let d = self.backoff(self.reconnect_attempt);
                self.reconnect_attempt = self.reconnect_attempt.saturating_add(1);
                self.reconnect_at = Some(now + d);
            }
        }
        self.events
            .push_back(ClientEvent::SessionLost { session: id, loss });
    }

    fn on_interrupted(&mut self, now: Timestamp, p: Purpose, cause: Interruption) {
        match p {
            Purpose::Command(h) => {
                if let Some(e) = self.commands.get_mut(&h) {
                    if cause == Interruption::CancelledUnsent && !e.may_have_run {
                        let e = self.commands.remove(&h).unwrap_or_else(|| unreachable!());
                        let _ = e;
                        self.events.push_back(ClientEvent::Command {
                            handle: h,
                            result: CommandResult::Failed(Failure::NotSent),
                        });
                    } else {
                        // The session is going; the command is repeated under the same
                        // reference on the next one (E-3) until its deadline.
                        e.state = CmdState::Waiting;
                    }
                }
            }
            Purpose::Read(h) => {
                if let Some(e) = self.reads.get_mut(&h) {
                    e.state = CmdState::Waiting;
                }
            }
            Purpose::Attach => {
                self.attach_retry_at = Some(now);
            }
            Purpose::Restore => {}
        }
    }

    fn on_reply(&mut self, now: Timestamp, s: &mut Session, p: Purpose, frame: ServerFrame) {
        match p {
            Purpose::Command(h) => self.on_command_reply(now, s, h, frame),
            Purpose::Read(h) => {
                let busy = frame
                    .view()
                    .body_as_reply()
                    .and_then(|r| r.body_as_request_rejected())
                    .is_some_and(|r| r.rejection() == Some(RequestRejection::ServerBusy));
                if busy {
                    // C-8: a read refused as busy may be repeated later.
                    let attempts = self.reads.get(&h).map_or(0, |e| e.attempts);
                    let at = now + self.backoff(attempts);
                    if let Some(e) = self.reads.get_mut(&h) {
                        e.state = CmdState::Backoff(at);
                    }
                    return;
                }
                if let Some(e) = self.reads.remove(&h) {
                    self.confirm_kept(&e.request, &frame);
                    if let ClientRequestT::SelectDomainRequest(_) = e.request {
                        let selected = frame
                            .view()
                            .body_as_reply()
                            .and_then(|r| r.body_as_domain_selection_outcome())
                            .and_then(|o| o.selection_as_domain_selected())
                            .map(|d| d.domain().to_string());
                        if selected.is_some() && !self.binding.is_holding() {
                            self.selected_domain = selected;
                        }
                    }
                }
                self.events.push_back(ClientEvent::Read {
                    handle: h,
                    result: ReadResult::Replied(frame),
                });
            }
            Purpose::Attach => self.on_attach_reply(now, s, frame),
            Purpose::Restore => {}
        }
    }

    /// A clock attach or subscription that succeeded is kept for later sessions (D-5).
    fn confirm_kept(&mut self, request: &ClientRequestT, frame: &ServerFrame) {
        let view = frame.view();
        let Some(reply) = view.body_as_reply() else {
            return;
        };
        match request {
            ClientRequestT::AttachDomainClockRequest(a) => {
                let attached = reply
                    .body_as_domain_clock_attach_outcome()
                    .is_some_and(|o| {
                        matches!(
                            o.disposition_type(),
                            DomainClockAttachDisposition::DomainClockAttached
                                | DomainClockAttachDisposition::DomainClockAlreadyAttached
                        )
                    });
                if attached {
                    self.clocks.insert(a.domain.clone());
                }
            }
            ClientRequestT::SubscribeRequest(sub) => {
                let opened = reply.body_as_subscribe_outcome().is_some_and(|o| {
                    o.disposition_type() == SubscribeDisposition::SubscriptionOpened
                });
                if opened {
                    self.subscriptions
                        .push((sub.domain.clone(), sub.statement.clone()));
                }
            }
            _ => {}
        }
    }

    fn on_attach_reply(&mut self, now: Timestamp, s: &mut Session, frame: ServerFrame) {
        let view = frame.view();
        let Some(reply) = view.body_as_reply() else {
            return;
        };
        if let Some(o) = reply.body_as_attach_outcome() {
            if let Some(a) = o.disposition_as_transaction_attached() {
                let status = a.transaction().unpack();
                self.binding.attached(&status, now);
                // adopt the attached transaction's domain.
                self.selected_domain = Some(status.domain.clone());
            } else if let Some(f) = o.disposition_as_transaction_already_finished() {
                self.binding.already_finished(&f.transaction().unpack());
            } else if let Some(r) = o.disposition_as_leader_redirect() {
                let uri = r.leader().and_then(|l| l.grpc_uri()).map(str::to_string);
                self.redirect(now, s, uri);
                return;
            } else {
                self.binding.finished(Ending::AttachRefused);
            }
            self.events
                .push_back(ClientEvent::Transaction(self.binding.clone()));
            s.phase = Phase::Ready;
        } else {
            // Rejected (busy or too many): try again after a back-off.
            self.attach_retry_at = Some(now + self.backoff(1));
        }
    }

    fn redirect(&mut self, now: Timestamp, s: &mut Session, uri: Option<String>) -> bool {
        let Some(e) = uri.and_then(|u| Endpoint::parse(&u).ok()) else {
            return false;
        };
        if !self.endpoints.learn(e, true) {
            return false;
        }
        // D-1: a session at the leader; this one is dropped (not cleanly: X-7).
        self.actions.push_back(Action::Close {
            session: s.id,
            clean: false,
        });
        self.redirecting = true;
        s.exchange.close();
        let _ = now;
        true
    }

    fn finish(&mut self, h: CommandHandle, result: CommandResult) {
        self.commands.remove(&h);
        self.events
            .push_back(ClientEvent::Command { handle: h, result });
    }

    fn retry_later(&mut self, now: Timestamp, h: CommandHandle) {
        let attempts = self.commands.get(&h).map_or(0, |e| e.attempts);
        let at = now + self.backoff(attempts);
        if let Some(e) = self.commands.get_mut(&h) {
            e.state = CmdState::Backoff(at);
        }
    }

    fn on_command_reply(
        &mut self,
        now: Timestamp,
        s: &mut Session,
        h: CommandHandle,
        frame: ServerFrame,
    ) {
        let Some(entry) = self.commands.get(&h) else {
            return;
        };
        // Whether an attempt before this one may have run: then a refusal of this attempt says
        // nothing about the command's outcome.
        let earlier_ran = entry.attempts > 1 || entry.recovered;
        let view = frame.view();
        let Some(reply) = view.body_as_reply() else {
            return;
        };
        let uncertain = |e: &CommandEntry, cause| CommandResult::Uncertain {
            command: e.retained.clone(),
            cause,
        };
        if let Some(r) = reply.body_as_request_rejected() {
            let rejection = r.rejection().unwrap_or(RequestRejection::InvalidRequest);
            let result = match rejection {
                RequestRejection::ReplyTooLarge => uncertain(entry, UncertainCause::ReplyTooLarge),
                RequestRejection::ServerBusy => return self.retry_later(now, h),
                _ if earlier_ran => uncertain(entry, UncertainCause::Inconclusive),
                _ => CommandResult::Failed(Failure::Rejected {
                    rejection,
                    message: r.message().to_string(),
                }),
            };
            return self.finish(h, result);
        }
        if let Some(c) = reply.body_as_request_cancelled() {
            let result = match c.stage() {
                Some(CancellationStage::BeforeAdmission) if !earlier_ran => {
                    CommandResult::Failed(Failure::CancelledBeforeAdmission)
                }
                _ => uncertain(entry, UncertainCause::CancelledAfterAdmission),
            };
            return self.finish(h, result);
        }
        let Some(o) = reply.body_as_command_outcome() else {
            return;
        };
        let report = CommandReport {
            reference: entry.retained.reference.clone(),
            outcome: o.unpack(),
        };
        let first = entry.shape.first();
        // the newest status of the held transaction advances the position.
        let status = report.outcome.transaction.as_deref();
        let admission = report.outcome.transaction_admission.as_deref();
        match o.disposition_type() {
            CommandDisposition::CommandCompleted => {
                match first {
                    StatementKind::Begin => {
                        if let Some(st) = status {
                            self.binding.begun(st, now);
                            self.events
                                .push_back(ClientEvent::Transaction(self.binding.clone()));
                        }
                    }
                    StatementKind::Commit => {
                        self.binding.finished(Ending::Committed);
                        self.events
                            .push_back(ClientEvent::Transaction(self.binding.clone()));
                    }
                    StatementKind::Revert => {
                        self.binding.finished(Ending::Reverted);
                        self.events
                            .push_back(ClientEvent::Transaction(self.binding.clone()));
                    }
                    _ => self.binding.outcome(status, admission, now),
                }
                self.finish(h, CommandResult::Completed(report));
            }
            CommandDisposition::RequestFailed | CommandDisposition::PreviewStale => {
                self.binding.outcome(status, None, now);
                self.finish(h, CommandResult::Failed(Failure::Outcome(report)));
            }
            CommandDisposition::TransactionTakenOver => {
                self.binding.taken_over();
                self.events
                    .push_back(ClientEvent::Transaction(self.binding.clone()));
                self.finish(h, CommandResult::Failed(Failure::Outcome(report)));
            }
            CommandDisposition::LeaderRedirect => {
                let uri = o
                    .disposition_as_leader_redirect()
                    .and_then(|r| r.leader())
                    .and_then(|l| l.grpc_uri())
                    .map(str::to_string);
                if let Some(e) = self.commands.get_mut(&h) {
                    e.state = CmdState::Waiting;
                }
                if !self.redirect(now, s, uri) {
                    // D-2: no address to go to: back off and ask again.
                    self.retry_later(now, h);
                }
            }
            CommandDisposition::TransactionDetached => {
                if matches!(
                    self.binding,
                    Binding::Finished { .. } | Binding::TakenOver { .. } | Binding::Unbound
                ) {
                    // the transaction ended and recorded nothing under this reference.
                    let result = if earlier_ran {
                        uncertain(entry, UncertainCause::Inconclusive)
                    } else {
                        CommandResult::Failed(Failure::TransactionEnded)
                    };
                    return self.finish(h, result);
                }
                self.binding.detach();
                self.events
                    .push_back(ClientEvent::Transaction(self.binding.clone()));
                if let Some(e) = self.commands.get_mut(&h) {
                    e.state = CmdState::Waiting;
                }
                if !attach_on(s, &self.binding, now, self.config.call_timeout) {
                    self.attach_retry_at = Some(now + self.backoff(1));
                }
            }
            CommandDisposition::OutcomeUnknown => {
                // E-3, X-5: repeat under the same reference after a back-off.
                self.retry_later(now, h);
            }
            CommandDisposition::ExecutionReferenceConflict => {
                let result = if earlier_ran {
                    uncertain(entry, UncertainCause::Inconclusive)
                } else {
                    CommandResult::Failed(Failure::Outcome(report))
                };
                self.finish(h, result);
            }
            CommandDisposition::ExecutionReferenceExpired => {
                // E-4: never the original command's outcome.
                let result = uncertain(entry, UncertainCause::ReferenceExpired);
                self.finish(h, result);
            }
            _ => {}
        }
    }
}

fn attach_on(s: &mut Session, binding: &Binding, now: Timestamp, timeout: Duration) -> bool {
    let Binding::Detached(h) = binding else {
        return false;
    };
    if s.pending.values().any(|p| *p == Purpose::Attach) {
        return true;
    }
    let req = ClientRequestT::AttachTransactionRequest(Box::new(AttachTransactionRequestT {
        transaction_id: h.id.clone(),
    }));
    match s.exchange.request(now, &req, Some(now + timeout)) {
        Ok(r) => {
            s.pending.insert(r, Purpose::Attach);
            s.phase = Phase::Restoring;
            true
        }
        Err(_) => false,
    }
}

fn subscribe(domain: &str, statement: &str) -> ClientRequestT {
    ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
        domain: domain.to_string(),
        statement: statement.to_string(),
        subscription_type: Some(SubscriptionType::Row),
    }))
}
