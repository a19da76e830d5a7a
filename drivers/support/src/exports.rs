//! The names both drivers' crate roots give their users alike, listed once: each driver says
//! `pub use nervix_driver_support::exports::*;` and adds only what is its own (its `Client`,
//! `Config`, `Transfers`, streams and handles). A name added here reaches the users of both
//! drivers at once, so neither can fall behind the other.

pub use crate::api::{ClientStats, DriverEvent, Error, RunResult, Stats};
pub use crate::config::ConfigError;
pub use crate::credentials::{percent_encode, Credentials, CredentialsError, WsAuth};
pub use crate::dataplane::Attached;
#[cfg(feature = "journal")]
pub use crate::journal::{JournalConfig, JournalDurability, TransferKind, TransferRecord};
#[cfg(feature = "journal")]
pub use crate::journaled::{
    JournalRefusal, JournaledBatch, JournaledCommand, JournaledStats, JournaledTransfer, Recovery,
    UnsentBatch,
};
pub use crate::observe::{OBSERVER_BYTES, OBSERVER_QUEUE};
pub use crate::progress_line::ProgressLine;
pub use crate::resolve::{ConnectError, HostsResolver, Resolve, Resolver};
pub use crate::transfer::Progress;
#[cfg(feature = "journal")]
pub use crate::transfer_journal::TransferJournalError;
pub use crate::unclaimed::{UnclaimedBatch, UNCLAIMED, UNCLAIMED_BYTES};
pub use nervix_protocol::client::{
    BatchOutcome, ClockEvent, CommandResult, ConsumerEvent, ConsumerId, ConsumerSpec, Decision,
    Delivery, DeliveryRef, Gap, ProducerEvent, ProducerId, ProducerSpec, ReadResult,
    RetainedCommand, SessionLoss, SettleResult, SubscriptionEnd, SubscriptionEvent,
};
