//! What both drivers' public APIs give the application alike, defined once and re-exported
//! by each driver (`nervix_tokio::Error` and `nervix_blocking::Error` are this [`Error`]):
//!
//! * [`Error`]: why a call of the application did not get a result;
//! * [`DriverEvent`]: what the driver tells its observers, bounded in count and bytes for
//!   each of them (C-7);
//! * [`RunResult`]: what a statement run through the driver gave;
//! * [`Stats`]: what a running client has done, and what its bounded stores hold.

use crate::config::ConfigError;
use crate::observe::Observed;
use crate::session::End;
pub use nervix_protocol::client::ClientStats;
use nervix_protocol::client::{
    ClientError, CommandResult, ConsumerEvent, ConsumerId, ProducerEvent, ProducerId, ReadResult,
    SessionId, SessionLoss, SettleError, SubmitError,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::ServerFrame;
use nervix_protocol::transaction::Binding;

/// Why a call of the application did not get a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// TLS could not be set up.
    #[error("TLS: {0}")]
    Tls(String),
    /// The engine refused the call; nothing was sent.
    #[error(transparent)]
    Refused(#[from] ClientError),
    /// The server refused the credentials. The driver does not retry them (T-5); give new
    /// ones with the client's `set_credentials`.
    #[error("the server refused the credentials")]
    Unauthenticated,
    /// The server found a frame we sent defective (T-3, T-6); the client sends nothing more.
    #[error("the server found a frame defective: {0}")]
    Defect(String),
    /// No session could be opened in time.
    #[error("no session could be opened in time")]
    Unreachable,
    /// The driver did not answer within the call's bound (T-8): a call of the blocking
    /// driver waits so long at most.
    #[error("the driver did not answer in time")]
    TimedOut,
    /// A statement this API does not carry yet.
    #[error("not carried by this API yet: {0}")]
    Unsupported(String),
    /// The server refused to open a producer or consumer, or it ended before its open was
    /// answered; the server's words.
    #[error("the open was refused: {0}")]
    OpenRefused(String),
    /// A batch was refused locally; nothing was queued.
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// A settlement was refused locally; nothing was sent.
    #[error(transparent)]
    Settle(#[from] SettleError),
    /// The driver's thread or task has stopped.
    #[error("the client has stopped")]
    Stopped,
    /// The client's journal refused the call (feature `journal`); nothing was taken or sent.
    #[cfg(feature = "journal")]
    #[error(transparent)]
    Journal(#[from] crate::journaled::JournalRefusal),
}

/// What the driver tells observers (see the client's `events`). Bounded in count and bytes
/// for each observer: what a slow observer does not read in time is dropped for it alone and
/// reported in its place ([`DriverEvent::EventsLost`]), and nothing else waits for it (C-7).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum DriverEvent {
    /// A session opened.
    SessionOpened {
        /// The session.
        session: SessionId,
        /// Where.
        endpoint: Endpoint,
    },
    /// A session ended, as the engine saw it.
    SessionLost {
        /// The session.
        session: SessionId,
        /// Why: the transport, the server's ending, a protocol violation, or the client.
        loss: SessionLoss,
    },
    /// A session's transport ended, as the transport saw it.
    TransportEnded {
        /// The session.
        session: SessionId,
        /// How.
        end: End,
    },
    /// The transaction binding changed.
    Transaction(Binding),
    /// An unsolicited frame.
    Unsolicited(ServerFrame),
    /// Unsolicited frames were dropped (C-7).
    UnsolicitedLost(u64),
    /// This many events were dropped for this observer, which did not read them in time:
    /// its queue held [`OBSERVER_QUEUE`](crate::observe::OBSERVER_QUEUE) events or
    /// [`OBSERVER_BYTES`](crate::observe::OBSERVER_BYTES) bytes (C-7).
    EventsLost(u64),
    /// This many outcomes of commands nobody waited for were evicted from the store the
    /// client's `unclaimed` reads, by its bounds (C-10); the client's `unclaimed_lost`
    /// counts them all.
    UnclaimedLost(u64),
    /// A producer's admission changed (P-6), its session was lost or it was restored or not
    /// (P-8), or it ended. Outcomes go to each batch's `PendingBatch` instead.
    Producer {
        /// The producer.
        producer: ProducerId,
        /// What happened.
        event: ProducerEvent,
    },
    /// A consumer's session was lost, it was restored or not (EC-5), or it ended.
    /// Deliveries go to the consumer's `next_delivery` instead.
    Consumer {
        /// The consumer.
        consumer: ConsumerId,
        /// What happened.
        event: ConsumerEvent,
    },
}

impl Observed for DriverEvent {
    fn weight(&self) -> usize {
        std::mem::size_of::<Self>()
            + match self {
                Self::Unsolicited(f) => f.len(),
                _ => 0,
            }
    }

    fn lost(dropped: u64) -> Self {
        Self::EventsLost(dropped)
    }
}

/// What the client's `run` gave.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RunResult {
    /// A command's result.
    Command(CommandResult),
    /// A request of its own, answered.
    Read(ReadResult),
    /// `USE <domain>` selected the domain locally.
    DomainSelected(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_7_an_event_without_a_frame_weighs_its_own_size_and_a_loss_is_events_lost() {
        let base = std::mem::size_of::<DriverEvent>();
        assert_eq!(DriverEvent::UnsolicitedLost(3).weight(), base);
        assert_eq!(DriverEvent::Transaction(Binding::default()).weight(), base);
        assert!(matches!(
            <DriverEvent as Observed>::lost(7),
            DriverEvent::EventsLost(7)
        ));
    }

    #[test]
    fn c_7_an_unsolicited_frame_weighs_its_bytes_on_top_of_the_events_size() {
        use nervix_protocol::encode::Encoder;
        use nervix_protocol::frame::ServerMessageRoot;
        use nervix_protocol::schema::*;
        let msg = ServerMessageT {
            body: ServerBodyT::Reply(Box::new(ReplyT {
                request_id: 1,
                body: ReplyBodyT::DomainList(Box::new(DomainListT { domains: vec![] })),
            })),
        };
        let bytes = Encoder::new().encode::<ServerMessageRoot>(&msg).unwrap();
        let f = ServerFrame::check(bytes).unwrap();
        let len = f.len();
        assert!(len > 1);
        assert_eq!(
            DriverEvent::Unsolicited(f).weight(),
            std::mem::size_of::<DriverEvent>() + len
        );
    }
}

/// What a running client has done, read with each driver's `Client::stats`: the engine's
/// counters ([`ClientStats`]: frames and bytes both ways, sessions by how they ended,
/// redirects, requests by outcome, the unsolicited queue) and the driver's store of outcomes
/// nobody waited for. What an observer of `events()` missed is its own `lost()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// The engine's counters.
    pub engine: ClientStats,
    /// Outcomes held for `unclaimed()` now.
    pub unclaimed_held: usize,
    /// Bytes those outcomes weigh.
    pub unclaimed_held_bytes: usize,
    /// Outcomes the store evicted to stay within its bounds (C-10).
    pub unclaimed_lost: u64,
    /// Outcomes of batches whose handles were dropped unread, held for
    /// `unclaimed_batches()` now (P-7).
    pub unclaimed_batches_held: usize,
    /// Batch outcomes that store evicted to stay within its bounds.
    pub unclaimed_batches_lost: u64,
    /// What the client's journal did, when it keeps one (feature `journal`).
    #[cfg(feature = "journal")]
    pub journal: Option<crate::journaled::JournaledStats>,
}
