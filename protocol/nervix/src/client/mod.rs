//! The client across sessions: commands with exact recovery, reads, statement routing,
//! redirects, reconnects with the D-5 restoration order, the transaction binding, kept
//! subscriptions and clocks, and deadlines on every call.
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
//! command whose frame may have reached the server is never reported failed, and a command is
//! never reported completed without its own outcome.
//!
//! The client owns sessions, endpoints, back-off and the order in which a new session is
//! restored; everything else lives in one module per capability, each owning its entries,
//! their deadlines, what it restores on a new session and what a lost session means for it:
//! `commands`, `reads`, `transaction`, `subscriptions` and `clocks`.

mod call;
mod clocks;
mod commands;
mod consumers;
mod events;
mod producers;
mod reads;
mod subscriptions;
mod tracked;
mod transaction;

#[cfg(feature = "testkit")]
pub(crate) use tracked::visited;

pub use clocks::{ClockEnd, ClockEvent, ClockInfo, ClockStatus};
pub use commands::{
    CommandHandle, CommandReport, CommandResult, Failure, GateNote, Gated, RetainedCommand,
    UncertainCause, MAX_BEHIND_BEGIN, MAX_BEHIND_BEGIN_BYTES,
};
pub use consumers::{
    ConsumerDescription, ConsumerEvent, ConsumerId, ConsumerInfo, ConsumerReopenReason,
    ConsumerSpec, ConsumerState, ConsumerWindowKind, Decision, Delivery, DeliveryRef, SettleError,
    SettleHandle, SettleResult,
};
pub use producers::{
    Admission, BatchId, BatchOutcome, BatchState, LaidBatch, LaidRefusal, ProducerDescription,
    ProducerEvent, ProducerId, ProducerInfo, ProducerSpec, ProducerState, ProducerWindowKind,
    ReopenReason, SubmitError, MAX_CREDIT_BATCHES, MAX_CREDIT_BYTES, SUBMIT_OVERHEAD,
};
pub use reads::{ReadHandle, ReadResult};
pub use subscriptions::{
    Gap, SubscriptionEnd, SubscriptionEvent, SubscriptionId, SubscriptionInfo, SubscriptionState,
};

use crate::command::{ExecutionReference, ReferenceError};
use crate::encode::{EncodeError, Encoder};
use crate::endpoint::{Endpoint, Endpoints};
use crate::exchange::{
    EndCause, Exchange, ExchangeConfig, ExchangeEvent, Interruption, RequestError, RequestHandle,
    Unsolicited, UnsolicitedQueue,
};
use crate::frame::ServerFrame;
use crate::rng::Rng;
use crate::schema::*;
use crate::statements::{route, Route, RoutedRequest, StatementError};
use crate::time::{Timestamp, UnixMillis};
use crate::transaction::{Binding, Ending};
use bytes::Bytes;
use commands::Commands;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;
use transaction::Transaction;

/// A transport stream the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

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
    /// The most bytes of events one subscription keeps for the application (S-8); never less
    /// than one frame of the 4 MiB frame limit. Default 16 MiB.
    pub subscription_bytes: usize,
    /// The most bytes of events all subscriptions together keep for the application (S-8).
    /// Default 64 MiB. Unlike [`ClientConfig::subscription_bytes`] it is not raised: a total
    /// below one frame of the 4 MiB frame limit keeps no subscription's largest batch, which
    /// S-8 asks a client to keep.
    pub subscriptions_total_bytes: usize,
    /// The seed of the client's random generator (references, jitter).
    pub seed: u64,
    /// Which of a leader's endpoints a redirect or a leadership observation leads to: its
    /// `grpc_uri` for a native client, its `web_console_uri` for a WebSocket client (D-1,
    /// T-7). Default [`LeaderUri::Grpc`].
    pub leader_uri: LeaderUri,
    /// How long a BACKUP command waits for its outcome, across every redirect and reconnect,
    /// apart from each domain's quiesce timeout, which its statement names. One
    /// millisecond to 24 hours. Default 10 minutes.
    pub backup_wait: Duration,
}

/// Which endpoint of a named leader the client opens its next session at (D-1, T-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LeaderUri {
    /// The leader's `grpc_uri`: a native client over gRPC.
    #[default]
    Grpc,
    /// The leader's `web_console_uri`: a WebSocket client, which reconnects to `/console/ws`
    /// there (T-7).
    WebConsole,
}

impl LeaderUri {
    /// The endpoint of `leader` this client follows, if the leader names one (D-2).
    pub fn of<'a>(self, leader: LeaderEndpoints<'a>) -> Option<&'a str> {
        match self {
            Self::Grpc => leader.grpc_uri(),
            Self::WebConsole => leader.web_console_uri(),
        }
    }
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
            subscription_bytes: 16 << 20,
            subscriptions_total_bytes: 64 << 20,
            seed,
            leader_uri: LeaderUri::Grpc,
            backup_wait: Duration::from_secs(600),
        }
    }
}

/// Why the application's call was refused. Nothing was sent and nothing was queued.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The query cannot travel as asked (L-2).
    #[error(transparent)]
    Statement(#[from] StatementError),
    /// The execution reference is not acceptable (E-1).
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// The request can never be sent: it breaks the schema or a send limit (F-6).
    #[error("the request cannot be sent: {0}")]
    Unsendable(#[from] EncodeError),
    /// BEGIN, a clock or a subscription statement needs a selected domain (X-1, L-1).
    #[error("no domain is selected")]
    NoDomainSelected,
    /// A name the application gave (a domain, a subscription, a transaction) is not one.
    #[error("`{what}` is not a valid name: {why}")]
    InvalidName {
        /// Which name.
        what: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Not allowed while a transaction is held (L-3, RS-1), or, for a change of the selected
    /// domain, while a `BEGIN` that may bind one is unanswered.
    #[error("not allowed while a transaction is held")]
    InTransaction,
    /// An attach of a transaction by its identity is unanswered: commands wait for it to say
    /// which transaction they belong to.
    #[error("a transaction attach is unanswered")]
    AttachInProgress,
    /// The statement travels as a separate call with its own frames, not on the session.
    #[error("`{0:?}` is a separate call")]
    SeparateCall(RoutedRequest),
    /// The request is not a read the client can repeat.
    #[error("only reads are sent with `read`")]
    NotARead,
    /// No such command or read is waiting.
    #[error("no such command or read is waiting")]
    UnknownHandle,
    /// A transaction append or commit while the client holds no transaction.
    #[error("no transaction is held")]
    NoTransaction,
    /// A live subscription already has this name (S-6, S-7: a name is free again only once
    /// its subscription is deleted).
    #[error("a live subscription is already named `{name}`")]
    NameInUse {
        /// The name.
        name: String,
    },
    /// A deletion of that subscription is already underway; nothing was sent (S-6).
    #[error("the subscription's deletion is already underway")]
    DeletionInProgress,
    /// The client already follows that domain's clock; each is followed at most once (K-1).
    #[error("the domain's clock is already followed")]
    AlreadyFollowing,
    /// The client does not follow that domain's clock.
    #[error("the domain's clock is not followed")]
    NotFollowing,
    /// A detach of that domain's clock is unanswered: no attach is decided meanwhile (K-1).
    #[error("a detach of the domain's clock is unanswered")]
    DetachInProgress,
    /// Credit or limits asked for a producer or consumer outside 1 to 1,024 batches and 1 to
    /// 32 MiB (P-1, EC-1).
    #[error("credit must be 1 to 1,024 batches and 1 byte to 32 MiB")]
    InvalidCredit,
    /// The configured BACKUP wait is outside one millisecond to 24 hours.
    #[error("a backup wait of {0:?} is outside 1 ms to 24 h")]
    BackupWait(Duration),
    /// As many commands, or as many bytes of query text, wait behind an unanswered `BEGIN`
    /// as the client holds ([`MAX_BEHIND_BEGIN`], [`MAX_BEHIND_BEGIN_BYTES`]); nothing was
    /// taken.
    #[error("too many commands wait behind an unanswered BEGIN")]
    BehindBeginFull,
    /// A `BEGIN` was made while another is unanswered: the commands waiting behind the first
    /// belong to the transaction it binds, and a second would leave it unknown which one a
    /// later command belongs to. Nothing was taken.
    #[error("a BEGIN is already unanswered")]
    BeginUnanswered,
}

/// Why a session ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SessionLoss {
    /// The transport ended or could not be opened.
    Transport,
    /// The server ended the session.
    Ending(ServerFrame),
    /// The server broke the protocol (F-8); the client asked the driver to close the stream.
    Violation(crate::violation::ProtocolViolation),
    /// The client ended it (redirect, exhausted identities, a wedged session, close).
    Closed,
}

/// What a statement given to [`Client::run`] became.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Routed {
    /// A command; it ends with a [`ClientEvent::Command`].
    Command(CommandHandle),
    /// A request of its own; it ends with a [`ClientEvent::Read`].
    Request(ReadHandle),
    /// `USE <domain>`: the domain is selected; nothing was sent.
    DomainSelected(String),
    /// `CREATE SUBSCRIPTION`: the subscription; its events come from
    /// [`Client::poll_subscription`].
    Subscribed(SubscriptionId),
    /// `DELETE SUBSCRIPTION`: the subscription being deleted; it ends with
    /// [`SubscriptionEnd::Deleted`].
    Unsubscribing(SubscriptionId),
    /// `ATTACH DOMAIN CLOCK`: the domain whose clock is followed; its events come from
    /// [`Client::poll_clock_event`].
    ClockFollowed(String),
    /// `DETACH DOMAIN CLOCK`: the domain whose clock is being detached.
    ClockDetaching(String),
    /// `UPLOAD RESOURCE <resource> ...`: the upload's target in the selected domain, under a
    /// new upload identity (U-2). The application opens it as a [`crate::calls::UploadCall`]
    /// with the archive's size and streams the archive itself.
    Upload(crate::calls::UploadSpec),
    /// `RESTORE ...`: the statement and the new execution reference of the restore (RS-2).
    /// The application opens it as a [`crate::calls::RestoreCall`] with the archive's size and
    /// digest and streams the archive itself.
    Restore {
        /// The reference every attempt carries.
        reference: ExecutionReference,
        /// The statement, as the start carries it.
        statement: String,
    },
}

/// What a client has done since it was made, read with [`Client::stats`]: counters of what
/// went in and out and how sessions and requests ended, and what its bounded queues hold now.
/// Counted as the driver takes each action and event, and as each frame arrives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientStats {
    /// Frames received on the current session, as handed in.
    pub frames_in: u64,
    /// Bytes of those frames.
    pub bytes_in: u64,
    /// Frames the driver took to send.
    pub frames_out: u64,
    /// Bytes of those frames.
    pub bytes_out: u64,
    /// Streams the client asked the driver to open.
    pub connects: u64,
    /// Sessions that opened.
    pub sessions_opened: u64,
    /// Sessions lost because the transport ended or never opened.
    pub sessions_lost_transport: u64,
    /// Sessions the server ended (`SessionEnding`), redirects among them.
    pub sessions_lost_ending: u64,
    /// Sessions ended by a protocol violation of the server's.
    pub sessions_lost_violation: u64,
    /// Sessions the client closed.
    pub sessions_closed: u64,
    /// Sessions that ended with a redirect (naming a leader or not).
    pub redirects: u64,
    /// Commands that ended completed.
    pub commands_completed: u64,
    /// Commands that ended failed.
    pub commands_failed: u64,
    /// Commands that ended uncertain.
    pub commands_uncertain: u64,
    /// Reads that ended, however they ended.
    pub reads_ended: u64,
    /// Frames not read because their stream was not (or no longer) the current session's.
    pub frames_ignored: u64,
    /// Unsolicited frames the application's bounded queue dropped (C-7).
    pub unsolicited_dropped: u64,
    /// Bytes the unsolicited queue holds now.
    pub unsolicited_held_bytes: usize,
    /// Subscription events dropped into overflow gaps because a budget was full (S-8).
    pub subscription_events_dropped: u64,
    /// Bytes of subscription events waiting for the application now.
    pub subscription_held_bytes: usize,
    /// Subscription frames ignored because they named a handle the client does not hold.
    pub subscription_frames_ignored: u64,
    /// Producer and consumer events a session lost again and again would have piled up
    /// unread, folded into the ones still waiting: a second `Interrupted` of the same
    /// producer or consumer, with the `Restored` and `RestoreRefused` that came since the
    /// first, or an older `RestoreRefused` of the same interruption. Nothing else is ever
    /// folded.
    pub lifecycle_events_folded: u64,
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

/// What a request out on a session is for: the capability its reply goes to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Purpose {
    /// An attempt of a command.
    Command(CommandHandle),
    /// An attempt of a read or another request of the application.
    Read(ReadHandle),
    /// A `CancelRequest` for a command. Its `CancelOutcome` is information only: the command's
    /// own reply says how it ended (C-9).
    Cancel(CommandHandle),
    /// The attach that binds the held transaction again (X-6, the last step of D-5).
    TransactionAttach,
    /// Attaching a followed clock, the first time or again on a new session (K-1, K-5).
    ClockAttach(String),
    /// Detaching a followed clock (K-1).
    ClockDetach(String),
    /// Opening a subscription, the first time or as a new generation (S-1, S-7).
    Subscribe(SubscriptionId),
    /// Deleting a subscription (S-6).
    Unsubscribe(SubscriptionId),
    /// Opening a producer, the first time or as a new attachment (P-1, P-8).
    ProducerOpen(ProducerId),
    /// One attempt of a batch (P-4, P-5).
    ProducerSubmit(ProducerId, BatchId),
    /// Closing a producer (P-8).
    ProducerClose(ProducerId),
    /// Closing an attachment nobody wants (a restoration that changed); its reply is not read.
    ProducerRelease(u64),
    /// Opening an emitter consumer, the first time or as a new attachment (EC-1, EC-5).
    ConsumerOpen(ConsumerId),
    /// A read of a consumer's next delivery (EC-2).
    ConsumerRead(ConsumerId),
    /// A settlement of one delivery attempt (EC-4).
    ConsumerSettle(ConsumerId, SettleHandle),
    /// Closing a consumer (EC-6).
    ConsumerClose(ConsumerId),
    /// Closing an attachment nobody wants (a late restoration, EC-6); its reply is not read.
    ConsumerRelease(u64),
}

impl Purpose {
    /// Whether the request belongs to the session state L-3 forbids while a transaction is
    /// held.
    fn restricted(&self) -> bool {
        matches!(
            self,
            Purpose::ClockAttach(_)
                | Purpose::ClockDetach(_)
                | Purpose::Subscribe(_)
                | Purpose::Unsubscribe(_)
                | Purpose::ProducerOpen(_)
                | Purpose::ConsumerOpen(_)
        )
    }

    /// Whether the request belongs to a producer or a consumer.
    fn dataplane(&self) -> bool {
        matches!(
            self,
            Purpose::ProducerOpen(_)
                | Purpose::ProducerSubmit(..)
                | Purpose::ProducerClose(_)
                | Purpose::ProducerRelease(_)
                | Purpose::ConsumerOpen(_)
                | Purpose::ConsumerRead(_)
                | Purpose::ConsumerSettle(..)
                | Purpose::ConsumerClose(_)
                | Purpose::ConsumerRelease(_)
        )
    }
}

#[derive(Debug, PartialEq)]
enum Phase {
    /// Opening; frames are not read before the stream is open.
    Connecting(Timestamp),
    /// Open; the transaction attach is unanswered.
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

/// Whether a `RequestRejected` answer refuses the request for a defect of its own (C-8:
/// InvalidRequest, UnsupportedRequest, UnsupportedValue, DuplicateRequestId, ReplyTooLarge, or
/// no reason): the same request would be refused the same way, so it is never sent again
/// unchanged. A busy server is a wait's matter; so is a request refused as too many in flight,
/// which the exchange sends again itself, were one to arrive here.
pub(crate) fn rejected_for_a_defect(r: &RequestRejected<'_>) -> bool {
    !matches!(
        r.rejection(),
        Some(RequestRejection::ServerBusy | RequestRejection::TooManyRequestsInFlight)
    )
}

/// [`Client::send_with`] given the client's session and retirement alone, so that the request
/// can be written from state the client holds elsewhere (a command's members) without a copy.
fn send_on(
    session: &mut Option<Session>,
    retire: &mut Option<Retire>,
    purpose: Purpose,
    send: impl FnOnce(&mut Exchange) -> Result<RequestHandle, RequestError>,
) -> Result<(SessionId, RequestHandle), Option<EncodeError>> {
    let Some(s) = session.as_mut() else {
        return Err(None);
    };
    match send(&mut s.exchange) {
        Ok(r) => {
            s.pending.insert(r, purpose);
            Ok((s.id, r))
        }
        Err(RequestError::Encode(e)) => Err(Some(e)),
        Err(_) => {
            *retire = Some(Retire::Exhausted);
            Err(None)
        }
    }
}

/// Why the client itself ends a session.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Retire {
    /// Its request identities ran out (C-1): a new session at once.
    Exhausted,
    /// It can carry nothing: every in-flight slot is held by requests nobody waits for, a
    /// call's deadline passed before its frame could be sent, or one passed with nothing
    /// heard on the session since its frame went (T-8).
    Wedged,
}

/// The Nervix client: sessions, commands, reads, kept subscriptions and clocks, and the
/// transaction binding.
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    rng: Rng,
    endpoints: Endpoints,
    session: Option<Session>,
    next_session: u64,
    reconnect_at: Option<Timestamp>,
    reconnect_attempt: u32,
    /// Redirects followed in a row without anything completing (§ back-off on loops).
    redirect_streak: u32,
    redirecting: bool,
    retire: Option<Retire>,
    current_endpoint: Option<Endpoint>,
    selected_domain: Option<String>,
    next_seq: u64,
    commands: Commands,
    /// The commands waiting behind an unanswered BEGIN.
    behind: commands::BehindBegin,
    reads: reads::Reads,
    tx: Transaction,
    subscriptions: subscriptions::Subscriptions,
    clocks: clocks::Clocks,
    producers: producers::Producers,
    consumers: consumers::Consumers,
    actions: VecDeque<Action>,
    events: VecDeque<ClientEvent>,
    unsolicited: UnsolicitedQueue,
    checker: Encoder,
    /// The calls due in a drain, kept between drains so that it allocates only as it grows.
    due: Vec<(u64, Purpose)>,
    ignored_frames: u64,
    stats: ClientStats,
}

impl Client {
    /// A client with no session yet; it connects when there is work.
    pub fn new(config: ClientConfig) -> Self {
        let unsolicited = UnsolicitedQueue::new(
            config.exchange.unsolicited_capacity,
            config.exchange.unsolicited_bytes,
        );
        let subscriptions = subscriptions::Subscriptions::new(
            config.subscription_bytes,
            config.subscriptions_total_bytes,
        );
        Self {
            rng: Rng::new(config.seed),
            endpoints: Endpoints::new(config.seeds.clone(), config.max_learned_endpoints),
            config,
            session: None,
            next_session: 1,
            reconnect_at: None,
            reconnect_attempt: 0,
            redirect_streak: 0,
            redirecting: false,
            retire: None,
            current_endpoint: None,
            selected_domain: None,
            next_seq: 0,
            commands: Commands::default(),
            behind: commands::BehindBegin::default(),
            reads: reads::Reads::default(),
            tx: Transaction::default(),
            subscriptions,
            clocks: clocks::Clocks::default(),
            producers: producers::Producers::default(),
            consumers: consumers::Consumers::default(),
            actions: VecDeque::new(),
            events: VecDeque::new(),
            unsolicited,
            checker: Encoder::new(),
            due: Vec::new(),
            ignored_frames: 0,
            stats: ClientStats::default(),
        }
    }

    // ----- getters ------------------------------------------------------------------------

    /// What the client has done so far, and what its unsolicited queue holds now.
    pub fn stats(&self) -> ClientStats {
        ClientStats {
            frames_ignored: self.ignored_frames,
            unsolicited_dropped: self.unsolicited.dropped(),
            unsolicited_held_bytes: self.unsolicited.bytes(),
            subscription_events_dropped: self.dropped_subscription_events(),
            subscription_held_bytes: self.subscription_bytes(),
            subscription_frames_ignored: self.ignored_subscription_frames(),
            lifecycle_events_folded: self.producers.folded_events()
                + self.consumers.folded_events(),
            ..self.stats.clone()
        }
    }

    /// The transaction binding.
    pub fn binding(&self) -> &Binding {
        &self.tx.binding
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
        self.commands.get(handle).map(|e| &e.retained.reference)
    }

    /// When a command that has not ended yet ends uncertain unless its outcome came first:
    /// its own deadline, which every redirect and reconnect shares (D-4, A-7). A `BACKUP`
    /// without a wait of its own waits [`ClientConfig::backup_wait`], any other command the
    /// call timeout. A driver that bounds how long its caller waits bounds it by this.
    pub fn command_deadline(&self, handle: CommandHandle) -> Option<Timestamp> {
        self.commands.get(handle).map(|e| e.call.deadline)
    }

    /// The endpoint of the current session, where the separate calls (uploads, downloads,
    /// restores) go until a redirect names the leader.
    pub fn endpoint(&self) -> Option<&Endpoint> {
        self.current_endpoint.as_ref()
    }

    /// Reads not yet ended.
    pub fn outstanding_reads(&self) -> usize {
        self.reads.len()
    }

    /// Commands not yet ended.
    pub fn outstanding_commands(&self) -> usize {
        self.commands.len()
    }

    /// Frames that arrived on a stream before it was reported open, and were not read.
    pub fn ignored_frames(&self) -> u64 {
        self.ignored_frames
    }

    /// Bytes of unsolicited frames held for the application, by the client and its session.
    pub fn unsolicited_bytes(&self) -> usize {
        self.unsolicited.bytes()
            + self
                .session
                .as_ref()
                .map_or(0, |s| s.exchange.unsolicited_bytes())
    }

    // ----- application calls --------------------------------------------------------------

    /// Selects the domain commands name (L-1); `None` selects none. Refused while a
    /// transaction is held, whose requests all name its domain (L-3); and a change of domain is
    /// refused while a `BEGIN` that may bind one is unanswered: the server binds it as it runs
    /// the `BEGIN`, so what is sent behind it belongs to the transaction already.
    pub fn select_domain(&mut self, domain: Option<&str>) -> Result<(), ClientError> {
        if self.tx.binding.is_holding() {
            return Err(ClientError::InTransaction);
        }
        let begin_open = self.commands.begin_outstanding() || self.begin_unanswered();
        if begin_open && self.selected_domain.as_deref() != domain {
            return Err(ClientError::InTransaction);
        }
        if let Some(d) = domain {
            self.check_name("domain", d)?;
        }
        self.selected_domain = domain.map(str::to_string);
        Ok(())
    }

    /// Runs one NSPL query the way its statements travel (L-2): a command, a request of its
    /// own (`LIST DOMAINS`, `ATTACH`/`DETACH DOMAIN CLOCK` for the selected domain,
    /// `CREATE SUBSCRIPTION`, `DELETE SUBSCRIPTION`), or, for `USE <domain>`, the domain
    /// selected locally. `UPLOAD RESOURCE` and `RESTORE` are separate calls: they are returned
    /// as [`Routed::Upload`] and [`Routed::Restore`] for the application to stream (RESTORE is
    /// refused while a transaction is held, RS-1); `BACKUP` waits for
    /// [`ClientConfig::backup_wait`]; `DESCRIBE BACKUP` is not a protocol request.
    pub fn run(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
    ) -> Result<Routed, ClientError> {
        self.run_gated(now, wall, query, commands::ungated)
            .map_err(Gated::into_client)
    }

    /// Like [`Client::run`], with a `gate` a query that travels as a command must pass before
    /// the engine takes it (see [`Client::execute_gated`]); other queries do not meet it.
    pub fn run_gated<E>(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
        gate: impl FnOnce(&RetainedCommand, GateNote) -> Result<(), E>,
    ) -> Result<Routed, Gated<E>> {
        // L-2 with X-2: several statements made while a BEGIN is unanswered may belong to the
        // transaction it binds; they are routed as a command and `execute_gated` judges them
        // as it judges the same query given to `execute`.
        let holding = self.tx.binding.is_holding() || self.begin_unanswered();
        let route = route(query, holding).map_err(ClientError::from)?;
        self.route_run(now, wall, query, route, gate)
    }

    fn route_run<E>(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
        route: Route<'_>,
        gate: impl FnOnce(&RetainedCommand, GateNote) -> Result<(), E>,
    ) -> Result<Routed, Gated<E>> {
        let holding = self.tx.binding.is_holding();
        if let Route::Command(_) = route {
            // BACKUP waits for its own bounded wait, not the call deadline.
            return self
                .execute_gated(now, wall, query, None, None, gate)
                .map(Routed::Command);
        }
        self.route_other(now, wall, query, route, holding)
            .map_err(Gated::Client)
    }

    /// Where a query goes; a command without a gate.
    fn route_other(
        &mut self,
        now: Timestamp,
        wall: UnixMillis,
        query: &str,
        route: Route<'_>,
        holding: bool,
    ) -> Result<Routed, ClientError> {
        match route {
            Route::Command(_) => self.execute(now, wall, query).map(Routed::Command),
            Route::UseDomain(d) => {
                self.select_domain(Some(&d))?;
                Ok(Routed::DomainSelected(d))
            }
            Route::ListDomains => self
                .add_read(
                    now,
                    ClientRequestT::ListDomainsRequest(Box::default()),
                    None,
                )
                .map(Routed::Request),
            Route::AttachDomainClock => {
                let d = self.selected()?;
                self.follow_clock(now, &d)?;
                Ok(Routed::ClockFollowed(d))
            }
            Route::DetachDomainClock => {
                let d = self.selected()?;
                self.detach_clock(now, &d)?;
                Ok(Routed::ClockDetaching(d))
            }
            Route::Subscribe(statement) => {
                let d = self.selected()?;
                self.subscribe(now, &d, statement).map(Routed::Subscribed)
            }
            Route::Unsubscribe(name) => self.unsubscribe(now, &name).map(Routed::Unsubscribing),
            Route::Restore(_) if holding => Err(ClientError::InTransaction),
            Route::Restore(statement) => Ok(Routed::Restore {
                reference: ExecutionReference::new_v7(wall, &mut self.rng),
                statement: crate::calls::canonical_restore(statement)
                    .map_err(|_| ClientError::SeparateCall(RoutedRequest::Restore))?,
            }),
            Route::UploadResource(statement) => {
                let domain = self.selected()?;
                let resource =
                    crate::calls::upload_resource(statement).ok_or(ClientError::InvalidName {
                        what: "resource",
                        why: "UPLOAD RESOURCE names one resource",
                    })?;
                let spec = crate::calls::UploadSpec::new(&domain, &resource, wall, &mut self.rng);
                Ok(Routed::Upload(spec))
            }
        }
    }

    fn selected(&self) -> Result<String, ClientError> {
        self.selected_domain
            .clone()
            .ok_or(ClientError::NoDomainSelected)
    }

    /// Ends the current session. With `revert` the stream is half-closed cleanly, which
    /// reverts the transaction the session holds; otherwise it is dropped and the
    /// transaction stays open for a later attach. A transaction not attached on the session,
    /// or a WebSocket session closed with a request in flight, is not reverted by the close
    /// and stays held, detached.
    pub fn close(&mut self, now: Timestamp, revert: bool) {
        if let Some(mut s) = self.session.take() {
            // Only the transaction this session holds is reverted: one detached from it (not
            // attached again yet) stays open; and a WebSocket close reverts only with no
            // request in flight (a request answered but not read yet counts: the client
            // cannot tell, and never reports a revert that may not have happened).
            let websocket_busy =
                self.config.leader_uri == LeaderUri::WebConsole && s.exchange.in_flight() > 0;
            let reverts = revert && matches!(self.tx.binding, Binding::Bound(_)) && !websocket_busy;
            s.exchange.close();
            self.actions.push_back(Action::Close {
                session: s.id,
                clean: revert,
            });
            self.drain_exchange(now, &mut s);
            if reverts {
                self.tx.binding.finished(Ending::Reverted);
            } else {
                self.tx.binding.detach();
            }
            self.events
                .push_back(ClientEvent::Transaction(self.tx.binding.clone()));
        }
    }

    // ----- driver inputs ------------------------------------------------------------------

    /// The stream `session` opened: restore session state in the D-5 order (clocks, then
    /// subscriptions, then producers, then consumers, then the transaction), then repeat
    /// outstanding commands.
    pub fn handle_connected(&mut self, now: Timestamp, session: SessionId) {
        let Some(mut s) = self.take_session(session) else {
            return;
        };
        if !matches!(s.phase, Phase::Connecting(_)) {
            self.session = Some(s);
            return;
        }
        s.phase = Phase::Restoring;
        if let Some(endpoint) = self.current_endpoint.clone() {
            tracing::info!(session = session.0, %endpoint, "nervix session opened");
            self.events
                .push_back(ClientEvent::SessionOpened { session, endpoint });
        }
        self.session = Some(s);
        // 1. The clocks it follows, and clock calls the application made; 2. the
        // subscriptions, each as a new generation. A call never sent before waits while a
        // BEGIN is unanswered: it was made after it or goes only once the transaction ends.
        let fresh_ok = !self.commands.begin_outstanding();
        let mut due = Vec::new();
        self.clocks.due(now, session, fresh_ok, &mut due);
        due.sort_by_key(|(seq, _)| *seq);
        let mut subs = Vec::new();
        self.subscriptions.due(now, session, fresh_ok, &mut subs);
        subs.sort_by_key(|(seq, _)| *seq);
        // 3. the producers and 4. the consumers, each as a fresh attachment (P-8, EC-5).
        let mut producers = Vec::new();
        self.producers
            .due_opens(now, session, fresh_ok, &mut producers);
        producers.sort_by_key(|(seq, _)| *seq);
        let mut consumers = Vec::new();
        self.consumers
            .due_opens(now, session, fresh_ok, &mut consumers);
        consumers.sort_by_key(|(seq, _)| *seq);
        for (_, p) in due
            .into_iter()
            .chain(subs)
            .chain(producers)
            .chain(consumers)
        {
            self.send_session_state(now, p);
        }
        // 5. then the transaction; outstanding commands go once it is attached.
        if !self.start_attach(now) {
            if let Some(s) = self.session.as_mut() {
                s.phase = Phase::Ready;
            }
        }
        self.drive(now);
    }

    /// A frame arrived on stream `session`. Frames of a stream not yet reported open, or of
    /// another stream than the current one, are not read.
    pub fn handle_frame(&mut self, now: Timestamp, session: SessionId, frame: Bytes) {
        let Some(mut s) = self.take_session(session) else {
            return;
        };
        if matches!(s.phase, Phase::Connecting(_)) {
            self.ignored_frames += 1;
            self.session = Some(s);
            return;
        }
        self.stats.frames_in += 1;
        self.stats.bytes_in += frame.len() as u64;
        tracing::trace!(session = session.0, bytes = frame.len(), "nervix frame in");
        s.exchange.handle_frame(now, frame);
        self.drain_exchange(now, &mut s);
        if s.exchange.is_open() {
            self.session = Some(s);
        }
        self.drive(now);
    }

    /// Stream `session` ended or could not be opened.
    pub fn handle_closed(&mut self, now: Timestamp, session: SessionId) {
        let Some(mut s) = self.take_session(session) else {
            return;
        };
        if matches!(s.phase, Phase::Connecting(_)) {
            self.lose_session(now, s.id, SessionLoss::Transport, None);
        } else {
            s.exchange.handle_transport_closed(now);
            self.drain_exchange(now, &mut s);
        }
        self.drive(now);
    }

    /// The current session, taken out to be worked on, if it is `session`; frames and events
    /// of any other stream are not the client's any more.
    fn take_session(&mut self, session: SessionId) -> Option<Session> {
        match self.session.take() {
            Some(s) if s.id == session => Some(s),
            other => {
                self.session = other;
                None
            }
        }
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
                    // T-8: a call's deadline passed and nothing at all was heard on the
                    // session since the call went out. No keepalive tells a half-open stream
                    // or a stuck node from a slow one, so the session is replaced now rather
                    // than after it has swallowed every in-flight slot.
                    if s.exchange.is_silent() {
                        self.retire.get_or_insert(Retire::Wedged);
                    }
                    if s.exchange.is_open() {
                        self.session = Some(s);
                    }
                }
            }
        }
        // Command and read deadlines (D-4).
        for h in self.commands.expired(now) {
            tracing::warn!(command = ?h, "nervix command deadline passed: its outcome is uncertain");
            self.abandon(Purpose::Command(h));
            if let Some(e) = self.commands.remove(h) {
                let result = e.unanswered(UncertainCause::Deadline);
                self.events
                    .push_back(ClientEvent::Command { handle: h, result });
            }
        }
        for h in self.reads.expired(now) {
            tracing::debug!(read = ?h, "nervix read deadline passed");
            self.abandon(Purpose::Read(h));
            self.reads.remove(h);
            self.events.push_back(ClientEvent::Read {
                handle: h,
                result: ReadResult::TimedOut,
            });
        }
        // Transaction expiry.
        if let Some(at) = self.tx.expires_at(self.config.transaction_idle_timeout) {
            if at <= now {
                self.tx.binding.finished(Ending::Expired);
                self.events
                    .push_back(ClientEvent::Transaction(self.tx.binding.clone()));
            }
        }
        if self.tx.retry_at.is_some_and(|t| t <= now) {
            self.tx.retry_at = None;
            self.start_attach(now);
        }
        // A session whose every in-flight slot is held by requests nobody waits for carries
        // nothing more: end it and open another.
        if let Some(s) = &self.session {
            let x = &s.exchange;
            if x.in_flight() >= self.config.exchange.max_in_flight && x.abandoned() >= x.in_flight()
            {
                self.retire.get_or_insert(Retire::Wedged);
            }
        }
        self.drive(now);
    }

    /// Stops waiting for a command's or a read's attempt still registered on the session; its
    /// late reply is discarded (C-10). The exchange reports the end, which is read here like
    /// any other. The call knows its attempt, so nothing is searched for: a call with no
    /// attempt on the session (its request already ended, as when the request's own deadline,
    /// the same as the call's, passed first) has nothing to stop.
    fn abandon(&mut self, purpose: Purpose) {
        let Some(mut s) = self.session.take() else {
            return;
        };
        let attempt = match &purpose {
            Purpose::Command(h) => self.commands.get(*h).and_then(|e| e.call.on(s.id)),
            Purpose::Read(h) => self.reads.get(*h).and_then(|e| e.call.on(s.id)),
            _ => None,
        };
        if let Some(r) = attempt.filter(|r| s.pending.get(r) == Some(&purpose)) {
            s.pending.remove(&r);
            let _ = s.exchange.abandon(r);
        }
        self.session = Some(s);
    }

    // ----- outputs ------------------------------------------------------------------------

    /// The next thing the driver must do.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        let action = self.actions.pop_front()?;
        match &action {
            Action::Send { session, frame } => {
                self.stats.frames_out += 1;
                self.stats.bytes_out += frame.len() as u64;
                tracing::trace!(session = session.0, bytes = frame.len(), "nervix frame out");
            }
            Action::Connect { session, endpoint } => {
                self.stats.connects += 1;
                tracing::debug!(session = session.0, %endpoint, "nervix session connecting");
            }
            Action::Close { session, clean } => {
                tracing::debug!(session = session.0, clean, "nervix session closing");
            }
        }
        Some(action)
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        let event = self.events.pop_front()?;
        let s = &mut self.stats;
        match &event {
            ClientEvent::Command { result, .. } => match result {
                CommandResult::Completed(_) => s.commands_completed += 1,
                CommandResult::Failed(_) => s.commands_failed += 1,
                CommandResult::Uncertain { .. } => s.commands_uncertain += 1,
            },
            ClientEvent::Read { .. } => s.reads_ended += 1,
            ClientEvent::SessionOpened { .. } => s.sessions_opened += 1,
            ClientEvent::SessionLost { loss, .. } => match loss {
                SessionLoss::Transport => s.sessions_lost_transport += 1,
                SessionLoss::Ending(_) => s.sessions_lost_ending += 1,
                SessionLoss::Violation(_) => s.sessions_lost_violation += 1,
                SessionLoss::Closed => s.sessions_closed += 1,
            },
            ClientEvent::Transaction(_) => {}
        }
        Some(event)
    }

    /// The next unsolicited frame of the sessions, or a marker of frames lost (C-7).
    #[must_use]
    pub fn poll_unsolicited(&mut self) -> Option<Unsolicited> {
        self.unsolicited.pop()
    }

    /// When [`Client::handle_timeout`] next has something to do. A pure read.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let session = self.session.as_ref();
        let connecting = session.and_then(|s| match s.phase {
            Phase::Connecting(d) => Some(d),
            _ => None,
        });
        let reconnect = self
            .reconnect_at
            .filter(|_| self.session.is_none() && self.has_work());
        // The earliest of every source, each taken on its own rather than through one long
        // chain of iterators.
        [
            session.and_then(|s| s.exchange.poll_timeout()),
            connecting,
            reconnect,
            self.tx.expires_at(self.config.transaction_idle_timeout),
            self.tx.retry_at,
            self.commands.timers().min(),
            self.reads.timers().min(),
            self.clocks.timers().min(),
            self.subscriptions.timers().min(),
            self.producers.timers().min(),
            self.consumers.timers().min(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    // ----- the machinery ------------------------------------------------------------------

    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    fn has_work(&self) -> bool {
        !self.commands.is_empty()
            || !self.reads.is_empty()
            || self.clocks.wants_session()
            || self.subscriptions.wants_session()
            || self.producers.wants_session()
            || self.consumers.wants_session()
    }

    /// Sends a clock or subscription request.
    fn send_session_state(&mut self, now: Timestamp, p: Purpose) {
        match p {
            Purpose::ClockAttach(_) | Purpose::ClockDetach(_) => self.send_clock(now, p),
            Purpose::Subscribe(_) | Purpose::Unsubscribe(_) => self.send_subscription(now, p),
            Purpose::ProducerOpen(_)
            | Purpose::ProducerSubmit(..)
            | Purpose::ProducerClose(_)
            | Purpose::ProducerRelease(_) => self.send_producer(now, p),
            p if p.dataplane() => self.send_consumer(now, p),
            _ => {}
        }
    }

    /// A request the application asks for is checked against the schema and the send limits
    /// now, so nothing is queued that can never go (F-6).
    fn check_sendable(&mut self, request: &ClientRequestT) -> Result<(), ClientError> {
        self.checker.check_request(request)?;
        Ok(())
    }

    /// A name the application gives: not empty, no control characters, and small enough to
    /// travel in a request.
    fn check_name(&mut self, what: &'static str, name: &str) -> Result<(), ClientError> {
        if name.is_empty() {
            return Err(ClientError::InvalidName { what, why: "empty" });
        }
        if name.chars().any(char::is_control) {
            return Err(ClientError::InvalidName {
                what,
                why: "it holds a control character",
            });
        }
        if name.len() > crate::limits::FRAME_LIMIT / 2 {
            return Err(ClientError::InvalidName {
                what,
                why: "it cannot travel in a frame",
            });
        }
        Ok(())
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

    /// Ends the session the client decided it cannot use any more (C-1, or wedged); the next
    /// one is opened by [`Client::drive`].
    fn settle(&mut self, now: Timestamp) {
        if self.retire.is_none() {
            return;
        }
        match self.session.take() {
            Some(mut s) => {
                self.actions.push_back(Action::Close {
                    session: s.id,
                    clean: false,
                });
                s.exchange.close();
                self.drain_exchange(now, &mut s);
            }
            None => self.retire = None,
        }
    }

    /// Sends what can be sent and opens a session when work needs one.
    fn drive(&mut self, now: Timestamp) {
        // commands made behind a BEGIN go once it is answered, with its position.
        let _ = self.release_behind_begin();
        // A second round when sending retired the session (its identities ran out).
        for _ in 0..2 {
            self.settle(now);
            if self.session.is_none()
                && self.has_work()
                && self.reconnect_at.is_none_or(|t| t <= now)
            {
                self.reconnect_at = None;
                self.connect(now);
            }
            if self.is_ready() {
                self.send_due(now);
            }
            // A back-off that ended while the call could not go (no session can carry it, or
            // L-3 or an unattached transaction holds it back): it waits for that instead, so
            // no timer fires for nothing (poll_timeout stays exact).
            self.commands.settle_backoffs(now);
            self.reads.settle_backoffs(now);
            self.clocks.settle_backoffs(now);
            self.subscriptions.settle_backoffs(now);
            self.producers.settle_backoffs(now);
            self.consumers.settle_backoffs(now);
            self.flush();
            if self.retire.is_none() {
                break;
            }
        }
        // A BEGIN that ended while sending (never sent again, or past its horizon) releases
        // what waits behind it now, not at its next input.
        if self.release_behind_begin() {
            self.drive(now);
        }
    }

    /// Sends every due call, commands and requests alike, in the order they were made.
    fn send_due(&mut self, now: Timestamp) {
        let Some(session) = self.session() else {
            return;
        };
        // One list reused by every drain: sending costs no allocation of its own.
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.commands.due(now, self.tx.attach_pending(), &mut due);
        self.reads.due(now, true, &mut due);
        self.clocks.due(now, session, true, &mut due);
        self.subscriptions.due(now, session, true, &mut due);
        self.producers.due(now, session, true, &mut due);
        self.consumers.due(now, session, true, &mut due);
        due.sort_by_key(|(seq, _)| *seq);
        for (_, p) in due.drain(..) {
            if !self.is_ready() || self.retire.is_some() {
                break;
            }
            // L-3: nothing the held transaction forbids goes out, nor while a BEGIN is
            // unanswered and may bind one.
            match p {
                Purpose::Command(h) => self.send_command(now, h),
                Purpose::Read(h) => {
                    let restricted = self.reads.get(h).is_some_and(|e| e.restricted());
                    if !restricted || self.restricted_allowed() {
                        self.send_read(now, h);
                    }
                }
                p if p.restricted() && self.restricted_allowed() => {
                    self.send_session_state(now, p);
                }
                p if p.dataplane() && !p.restricted() => self.send_session_state(now, p),
                _ => {}
            }
        }
        self.due = due;
    }

    fn restricted_allowed(&self) -> bool {
        !self.tx.binding.is_holding() && !self.commands.begin_outstanding()
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

    /// Sends with `send` on the current session and records the request for `purpose`. A
    /// session that ran out of identities is retired (C-1); a request that can never be
    /// encoded is reported as such; with no session nothing is sent.
    fn send_with(
        &mut self,
        purpose: Purpose,
        send: impl FnOnce(&mut Exchange) -> Result<RequestHandle, RequestError>,
    ) -> Result<(SessionId, RequestHandle), Option<EncodeError>> {
        send_on(&mut self.session, &mut self.retire, purpose, send)
    }

    /// Registers `request` on the current session for `purpose`. A session that ran out of
    /// identities is retired (C-1) and the caller's call waits for the next one; a request
    /// that can never be encoded is reported as such.
    fn send(
        &mut self,
        now: Timestamp,
        purpose: Purpose,
        request: &ClientRequestT,
        deadline: Timestamp,
    ) -> Result<(SessionId, RequestHandle), Option<EncodeError>> {
        self.send_with(purpose, |x| x.request(now, request, Some(deadline)))
    }

    /// Registers `request` on the current session with no deadline of its own: a batch, which
    /// holds its credit until its outcome or its session's end (P-4, P-7), or a consumer's read,
    /// which waits for a delivery (EC-2).
    fn send_undated(
        &mut self,
        now: Timestamp,
        purpose: Purpose,
        request: &ClientRequestT,
    ) -> Result<(SessionId, RequestHandle), Option<EncodeError>> {
        self.send_with(purpose, |x| x.request(now, request, None))
    }

    /// [`Client::send_undated`] for a request whose frame `frame` writes under the identity
    /// it is given ([`Exchange::request_framed`]).
    fn send_framed(
        &mut self,
        now: Timestamp,
        purpose: Purpose,
        kind: ClientRequest,
        frame: impl FnOnce(&mut Encoder, u64) -> Result<Bytes, EncodeError>,
    ) -> Result<(SessionId, RequestHandle), Option<EncodeError>> {
        self.send_with(purpose, |x| x.request_framed(now, kind, None, frame))
    }

    fn drain_exchange(&mut self, now: Timestamp, s: &mut Session) {
        while let Some(u) = s.exchange.poll_unsolicited() {
            if let Unsolicited::Frame(f) = &u {
                // Subscription and clock frames go to their capability, read in the frame
                // reader itself, in the order they arrived (S-2, K-2).
                match self.on_subscription_frame(now, f) {
                    Ok(subscriptions::Routed::Taken) => continue,
                    Ok(subscriptions::Routed::NotMine) => {}
                    Err(v) => {
                        // a batch that does not conform ends the session (F-8).
                        s.exchange.fail(v);
                        break;
                    }
                }
                if self.clocks.on_frame(s.id, f) {
                    continue;
                }
                match self.producers.on_frame(s.id, f) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(v) => {
                        s.exchange.fail(v);
                        break;
                    }
                }
                self.observe(f);
            }
            // The application's queue is bounded like the exchange's (C-7).
            self.unsolicited.push(u);
        }
        while let Some(ev) = s.exchange.poll_event() {
            match ev {
                ExchangeEvent::Replied { handle, frame } => {
                    // The session completed a request: the reconnect back-off starts over
                    // (merely opening a stream does not; a server that ends every new session
                    // at once must see the waits grow).
                    self.reconnect_attempt = 0;
                    let Some(p) = s.pending.remove(&handle) else {
                        continue;
                    };
                    self.on_reply(now, s, p, frame);
                }
                ExchangeEvent::Interrupted {
                    handle,
                    cause,
                    sent,
                } => {
                    let Some(p) = s.pending.remove(&handle) else {
                        continue;
                    };
                    self.on_interrupted(now, p, cause, sent);
                }
                ExchangeEvent::Ended { cause } => {
                    let (loss, redirect) = match cause {
                        EndCause::SessionEnding(f) => {
                            let redirect = f
                                .view()
                                .body_as_session_ending()
                                .and_then(|e| e.reason_as_leader_redirect())
                                .map(|r| {
                                    r.leader()
                                        .and_then(|l| self.config.leader_uri.of(l))
                                        .map(str::to_string)
                                });
                            (SessionLoss::Ending(f.clone()), redirect)
                        }
                        EndCause::TransportLost => (SessionLoss::Transport, None),
                        EndCause::Violation(v) => {
                            tracing::warn!(session = s.id.0, violation = %v, "nervix protocol violation: the session ends");
                            // F-8: the reader stopped; the stream goes too, so the server's
                            // session, subscriptions and binding do not linger.
                            self.actions.push_back(Action::Close {
                                session: s.id,
                                clean: false,
                            });
                            (SessionLoss::Violation(v), None)
                        }
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
                if let Some(uri) = self.config.leader_uri.of(remote.leader()) {
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
        let had_binding = matches!(self.tx.binding, Binding::Bound(_));
        self.tx.binding.detach();
        self.tx.retry_at = None;
        if had_binding {
            self.events
                .push_back(ClientEvent::Transaction(self.tx.binding.clone()));
        }
        let leader = redirect
            .as_ref()
            .and_then(|r| r.as_deref())
            .and_then(|u| Endpoint::parse(u).ok());
        let redirecting = std::mem::take(&mut self.redirecting);
        // A session the client left for a redirect moves its clocks; any other ending loses
        // them (K-5).
        self.clocks.lost(id, redirecting);
        self.subscriptions.lost(id);
        self.producers.lost(id);
        self.consumers.lost(id);
        let retired = self.retire.take();
        let followed = match leader {
            Some(e) => self.endpoints.learn(e, true),
            None => redirecting,
        };
        let cause = match &loss {
            SessionLoss::Transport => "transport",
            SessionLoss::Ending(_) => "ending",
            SessionLoss::Violation(_) => "violation",
            SessionLoss::Closed => "closed",
        };
        // A reply's redirect the client followed (logged where it was followed), or an
        // ending's: one redirect for the session either way.
        if redirecting || redirect.is_some() {
            self.stats.redirects += 1;
        }
        if let Some(to) = &redirect {
            match to {
                Some(uri) => tracing::info!(session = id.0, to = %uri, "nervix session redirected"),
                None => {
                    tracing::info!(session = id.0, "nervix session redirected; no leader named")
                }
            }
        }
        let reconnect_at = if followed {
            // D-1: the first redirect is followed at once; redirects in a row that complete
            // nothing back off, so a redirect loop cannot spin.
            let streak = self.redirect_streak;
            self.redirect_streak = streak.saturating_add(1);
            match streak {
                0 => now,
                n => now + self.backoff(n - 1),
            }
        } else if retired == Some(Retire::Exhausted) {
            // C-1: identities ran out; a new session at once.
            now
        } else {
            // D-2 and any other loss: back off, never inventing an address.
            let d = self.backoff(self.reconnect_attempt);
            self.reconnect_attempt = self.reconnect_attempt.saturating_add(1);
            now + d
        };
        self.reconnect_at = Some(reconnect_at);
        let wait = reconnect_at.saturating_since(now);
        tracing::info!(session = id.0, cause, "nervix session lost");
        tracing::debug!(
            wait_ms = wait.as_millis() as u64,
            "nervix reconnect back-off"
        );
        self.events
            .push_back(ClientEvent::SessionLost { session: id, loss });
    }

    fn on_interrupted(&mut self, now: Timestamp, p: Purpose, cause: Interruption, sent: bool) {
        match cause {
            Interruption::IdentitiesExhausted => {
                self.retire = Some(Retire::Exhausted);
            }
            // A call's deadline passed before its frame could be sent: the session is not
            // carrying what it is given.
            Interruption::DeadlineExceeded if !sent => {
                self.retire.get_or_insert(Retire::Wedged);
            }
            _ => {}
        }
        match p {
            Purpose::Command(h) => {
                let cancelling = {
                    let Some(mut e) = self.commands.get_mut(h) else {
                        return;
                    };
                    e.call.interrupted(sent);
                    e.cancelling
                };
                if cause == Interruption::CancelledUnsent || cancelling {
                    // The application cancelled it: it is never sent again (C-9).
                    if let Some(e) = self.commands.remove(h) {
                        let result = e.unanswered(UncertainCause::Cancelled);
                        self.events
                            .push_back(ClientEvent::Command { handle: h, result });
                    }
                }
                // Otherwise the command is repeated under the same reference on the next
                // session (E-3) until its deadline.
            }
            Purpose::Read(h) => {
                if let Some(mut e) = self.reads.get_mut(h) {
                    e.call.interrupted(sent);
                }
            }
            Purpose::TransactionAttach => self.tx.retry_at = Some(now),
            // A clock or subscription request the session did not carry (left unanswered past
            // its deadline, or not admitted): the session is replaced and the next one
            // restores the state again (K-5, S-7). When the session itself ended, its loss
            // says so.
            Purpose::ClockAttach(_)
            | Purpose::ClockDetach(_)
            | Purpose::Subscribe(_)
            | Purpose::Unsubscribe(_) => {
                if matches!(
                    cause,
                    Interruption::DeadlineExceeded
                        | Interruption::NotAdmitted
                        | Interruption::Abandoned
                ) {
                    self.on_subscription_unanswered(now, &p, cause == Interruption::NotAdmitted);
                    self.retire.get_or_insert(Retire::Wedged);
                }
            }
            // A cancellation's own end says nothing.
            Purpose::Cancel(_) => {}
            p if p.dataplane() => {
                self.on_producer_interrupted(&p, &cause, sent);
                self.on_consumer_interrupted(&p, &cause, sent);
            }
            _ => {}
        }
    }

    fn on_reply(&mut self, now: Timestamp, s: &mut Session, p: Purpose, frame: ServerFrame) {
        match p {
            Purpose::Command(h) => self.on_command_reply(now, s, h, frame),
            Purpose::Read(h) => self.on_read_reply(now, s, h, frame),
            Purpose::TransactionAttach => {
                self.on_attach_reply(now, s, &frame, None);
            }
            Purpose::ClockAttach(_) | Purpose::ClockDetach(_) => {
                if let Err(v) = self.on_clock_reply(now, s.id, p, &frame) {
                    // K-1: a reply about another domain is a violation like any other.
                    s.exchange.fail(v);
                }
            }
            Purpose::Subscribe(_) | Purpose::Unsubscribe(_) => {
                if let Err(v) = self.on_subscription_reply(now, s.id, p, &frame) {
                    // S-2: a schema that cannot be read is a violation like any other.
                    s.exchange.fail(v);
                }
            }
            Purpose::Cancel(_) => {}
            p if p.dataplane() => {
                let done = match p {
                    Purpose::ProducerOpen(_)
                    | Purpose::ProducerSubmit(..)
                    | Purpose::ProducerClose(_)
                    | Purpose::ProducerRelease(_) => self.on_producer_reply(now, s.id, p, &frame),
                    _ => self.on_consumer_reply(now, s.id, p, &frame),
                };
                if let Err(v) = done {
                    s.exchange.fail(v);
                }
            }
            _ => {}
        }
    }

    /// Follows a redirect to a named leader (D-1): this session is dropped, not cleanly,
    /// and the next opens at the leader. Returns false when it names no acceptable endpoint.
    fn redirect(&mut self, s: &mut Session, uri: Option<String>) -> bool {
        let Some(e) = uri.and_then(|u| Endpoint::parse(&u).ok()) else {
            return false;
        };
        tracing::info!(session = s.id.0, to = %e, "nervix redirected to the leader");
        if !self.endpoints.learn(e, true) {
            return false;
        }
        self.actions.push_back(Action::Close {
            session: s.id,
            clean: false,
        });
        self.redirecting = true;
        s.exchange.close();
        true
    }
}
