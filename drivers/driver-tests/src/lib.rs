//! The scenarios both drivers' tests run, each written once.
//!
//! A scenario is a generic function over [`Driver`], a synchronous view of one driver's public
//! API: the blocking client implements it directly ([`Blocking`]), the tokio client through a
//! runtime of its own that each operation blocks on ([`Tokio`]). Each driver's test files then
//! only instantiate the scenarios, through one macro invocation per file (e.g.
//! [`transfers_tests!`]), whose arms name every test literally.
//!
//! Checks only one flavour can make stay in that driver's own test files.
//!
//! # How the end-to-end tests are written
//!
//! End-to-end tests over loopback are written once in `nervix-driver-tests` (`drivers/driver-tests/`)
//! as scenarios generic over a synchronous `Driver` trait, implemented for each client; each
//! driver's test files instantiate them with one macro line (names of the blocking driver's ending
//! `_blocking`), and only what one flavour alone can do stays in its own files (gRPC uploads and
//! statuses, concurrent submissions as futures or threads). [`loopback`] holds one or more tests
//! per T key each driver's transports carry, an https client facing an http leader and a slow
//! reader among them; [`streams`] those for subscriptions and clocks. `nervix_tokio::Transfers` carries the separate calls over gRPC
//! (`UploadResource`, `DownloadBackup`, `RestoreBackup`; one HTTP/2 connection per attempt, the
//! archive read from its file in the machine's pieces and sent without a copy, a download written
//! through `ArchiveWriter`), and with a WebSocket configuration downloads and restores on the
//! console's `/console/backups/download` and `/console/backups/restore` (T-3a; uploads are gRPC
//! only), served by the loopback cluster from its call streams ([`transfers`], and the tokio
//! driver's own `transfers` tests).
//! Not yet: gRPC in the blocking driver (and so uploads from it).
//!
//! The seeded scenarios over real sockets are described in [`scenarios`]. The client journal's
//! crashes over real sockets are in [`journal`] (commands), [`journal_transfers`] (uploads and
//! restores), [`outbox`] (producer batches) and [`journal_mixed`] (all of them in one client
//! process, killed mid-workload).

/// The types and methods of [`Driver`] both drivers' implementations spell alike: their types of the
/// same names (`Config`, `Transfers`, `TransferError`, ...) differ, their calls do not.
macro_rules! same_in_both {
    ($($arm:tt)*) => {
            type Config = Config;
            type Client = Client;
            type Transfers = Transfers;
            type TransferError = TransferError;
            type Subscription = Subscription;
            type Clock = ClockFollow;
            type Pending = PendingCommand;
            type Events = Events;
            type Transaction = Transaction;
            type Producer = Producer;
            type Batch = PendingBatch;
            type Consumer = Consumer;

            fn with_timeouts(config: Config, call: Duration, connect: Duration) -> Config {
                config.with_timeouts(call, connect)
            }

            fn with_root(config: Config, der: Vec<u8>) -> Config {
                config.with_root(der)
            }

            fn with_resolver(config: Config, resolver: impl Resolve) -> Config {
                config.with_resolver(resolver)
            }

            fn with_journal(
                config: Config,
                journal: nervix_driver_support::journal::JournalConfig,
            ) -> Config {
                config.with_journal(journal)
            }

            fn client_config(config: &mut Config) -> &mut ClientConfig {
                &mut config.client
            }

            fn credentials(config: &mut Config) -> &mut Credentials {
                &mut config.credentials
            }

            fn write_timeout(config: &mut Config) -> &mut Duration {
                &mut config.write_timeout
            }

            fn reference(pending: &PendingCommand) -> String {
                pending.reference().to_string()
            }

            fn batch_id(b: &PendingBatch) -> BatchId {
                b.id()
            }

            fn lost(events: &Events) -> u64 {
                events.lost()
            }

            fn held_bytes(events: &Events) -> usize {
                events.held_bytes()
            }

            fn unclaimed_lost(client: &Client) -> u64 {
                client.unclaimed_lost()
            }

            fn clock_domain(k: &ClockFollow) -> &str {
                k.domain()
            }

            fn transfers(&self, config: &Config) -> Result<Transfers, TransferError> {
                Transfers::new(config)
            }

            fn journaled_transfers(
                &self,
                config: &Config,
                client: &Client,
            ) -> Result<Transfers, TransferError> {
                Ok(Transfers::new(config)?.journaled(client))
            }

            fn journal_error(
                e: &TransferError,
            ) -> Option<&nervix_driver_support::transfer_journal::TransferJournalError> {
                match e {
                    TransferError::Journal(j) => Some(j),
                    _ => None,
                }
            }

            fn failure(e: &TransferError) -> Failure {
                match e {
                    TransferError::Config(c) => Failure::Config(c.clone()),
                    TransferError::Unauthenticated => Failure::Unauthenticated,
                    TransferError::Unavailable { failure, .. } => Failure::Unavailable(*failure),
                    TransferError::FrameRefused { code } => Failure::FrameRefused(*code),
                    TransferError::GaveUp { attempts, last, .. } => Failure::GaveUp {
                        attempts: *attempts,
                        last: last.clone(),
                    },
                    $($arm)*
                    other => Failure::Other(format!("{other:?}")),
                }
            }
    };
}
use same_in_both;

mod child;
pub mod dataplane;
pub mod hostile;
pub mod journal;
pub mod journal_mixed;
pub mod journal_transfers;
pub mod loopback;
pub mod observability;
pub mod outbox;
pub mod scenarios;
pub mod streams;
pub mod tls;
pub mod transfers;
pub mod unpaced;

mod blocking;
mod tokio;

pub use blocking::Blocking;
pub use tokio::Tokio;

use nervix_driver_support::api::{DriverEvent, RunResult, Stats};
use nervix_driver_support::config::ConfigError;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::dataplane::Attached;
use nervix_driver_support::resolve::{ConnectError, Resolve};
use nervix_driver_support::Submission;
use nervix_loopback::Loopback;
use nervix_protocol::calls::{
    ArchiveDigest, ArchiveInfo, BackupDownload, Progress, RestoreCall, RestoreOutcome, UploadCall,
    UploadOutcome,
};
use nervix_protocol::client::{
    BatchId, BatchOutcome, ConsumerSpec, Decision, Delivery, DeliveryRef, ProducerDescription,
    ProducerEvent, ProducerId, ProducerSpec, SettleResult,
};
use nervix_protocol::client::{
    ClientConfig, ClockEvent, CommandReport, CommandResult, RetainedCommand, SubscriptionEvent,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::schema::BackupDownloadFailure;
use std::fmt::Debug;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use nervix_driver_support::api::Error;
pub use nervix_driver_support::credentials::WsAuth;

/// How a client reaches the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// gRPC over HTTP/2.
    Grpc,
    /// The console WebSocket, credentials presented as the value says.
    Console(WsAuth),
}

/// gRPC, and the console with credentials in a header.
pub const BOTH: [Via; 2] = [Via::Grpc, Via::Console(WsAuth::Header)];

/// The ways among `vias` that the driver speaks.
pub fn spoken<D: Driver>(vias: &[Via]) -> Vec<Via> {
    vias.iter().copied().filter(|v| D::speaks(*v)).collect()
}

/// A separate call's failure, the same for both drivers' error types.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The configuration cannot be used.
    Config(ConfigError),
    /// The credentials were refused.
    Unauthenticated,
    /// The archive is not available any more.
    Unavailable(BackupDownloadFailure),
    /// The server refused a frame of the call.
    FrameRefused(u32),
    /// Every attempt ended without an answer.
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// How the last ended.
        last: String,
    },
    /// An upload with a configuration that is not gRPC's.
    UploadNeedsGrpc,
    /// Anything else, as its debug text.
    Other(String),
}

/// One driver's client, seen synchronously: what the scenarios need of it.
pub trait Driver: Sized + 'static {
    /// The driver's short name, used in scratch directory names.
    const NAME: &'static str;
    /// The driver's configuration.
    type Config: Clone + Send + Debug + 'static;
    /// A connected client.
    type Client;
    /// The separate calls.
    type Transfers;
    /// Why a separate call gave no result.
    type TransferError: Debug + Send + 'static;
    /// A subscription.
    type Subscription;
    /// A followed clock.
    type Clock;
    /// A command submitted and not yet waited for.
    type Pending;
    /// The client's events.
    type Events;
    /// An open transaction.
    type Transaction;
    /// An open producer.
    type Producer: Deref<Target = Attached<ProducerId, ProducerDescription>>;
    /// A batch submitted, its outcome not yet read.
    type Batch: Debug;
    /// An open consumer.
    type Consumer;

    /// A driver ready for operations (the tokio one starts its runtime).
    fn new() -> Self;
    /// A driver whose work runs on the calling thread alone, and only while an operation
    /// waits: the tokio one on a current-thread runtime, so its driver task and the reader
    /// take turns as in an application on one thread. The blocking one is [`Driver::new`]'s.
    fn on_one_thread() -> Self {
        Self::new()
    }
    /// Whether the driver speaks `via`.
    fn speaks(via: Via) -> bool;
    /// A configuration of `seeds`, presenting `credentials` as `via` says.
    fn config(
        seeds: &[&str],
        credentials: Credentials,
        via: Via,
    ) -> Result<Self::Config, ConfigError>;
    /// The configuration with a call and a connection deadline.
    fn with_timeouts(config: Self::Config, call: Duration, connect: Duration) -> Self::Config;
    /// The configuration trusting `der` as a root.
    fn with_root(config: Self::Config, der: Vec<u8>) -> Self::Config;
    /// The configuration resolving host names with `resolver`.
    fn with_resolver(config: Self::Config, resolver: impl Resolve) -> Self::Config;
    /// The configuration journaling commands in `journal`'s slot.
    fn with_journal(
        config: Self::Config,
        journal: nervix_driver_support::journal::JournalConfig,
    ) -> Self::Config;
    /// The engine's part of the configuration.
    fn client_config(config: &mut Self::Config) -> &mut ClientConfig;
    /// The credentials of the configuration.
    fn credentials(config: &mut Self::Config) -> &mut Credentials;
    /// The write deadline of the configuration.
    fn write_timeout(config: &mut Self::Config) -> &mut Duration;
    /// The console URL of `endpoint`, with the credentials in its query when given.
    fn console_url(endpoint: &Endpoint, query_auth: Option<&Credentials>) -> String;

    /// A connected client.
    fn connect(&self, config: Self::Config) -> Result<Self::Client, Error>;
    /// A client started without waiting for its first session.
    fn start(&self, config: Self::Config) -> Result<Self::Client, Error>;
    /// A command submitted.
    fn submit(&self, client: &Self::Client, query: &str) -> Result<Self::Pending, Error>;
    /// The reference of a submitted command.
    fn reference(pending: &Self::Pending) -> String;
    /// The outcome of a submitted command.
    fn wait(&self, pending: Self::Pending) -> Result<CommandResult, Error>;
    /// The outcome of a submitted command within `timeout`: [`Error::TimedOut`] when it
    /// did not come, and the command can still be waited for.
    fn wait_timeout(
        &self,
        pending: &mut Self::Pending,
        timeout: Duration,
    ) -> Result<CommandResult, Error>;
    /// An uncertain command recovered under its reference.
    fn recover(
        &self,
        client: &Self::Client,
        command: &RetainedCommand,
    ) -> Result<CommandResult, Error>;
    /// A statement run.
    fn run(&self, client: &Self::Client, statement: &str) -> Result<RunResult, Error>;
    /// Asks for the recovery list and gives the call up before it returns: true when the
    /// request went out and the list can no longer reach anyone. With `answered` the driver
    /// first put its answer in the call's channel; without, it never took the request before
    /// the call was dropped. Only a driver whose work runs while an operation waits can give
    /// a call up at a point it knows (the tokio one made by [`Driver::on_one_thread`]); the
    /// others answer false and send nothing.
    fn recovery_abandoned(&self, _client: &Self::Client, _answered: bool) -> bool {
        false
    }
    /// What the journal held when the client started, once.
    fn recovery(
        &self,
        client: &Self::Client,
    ) -> Result<nervix_driver_support::journaled::Recovery, Error>;
    /// The outcomes nobody waited for.
    fn unclaimed(&self, client: &Self::Client) -> Result<Vec<CommandResult>, Error>;
    /// The outcomes of batches whose handles were dropped unread (P-7).
    fn unclaimed_batches(
        &self,
        client: &Self::Client,
    ) -> Result<Vec<nervix_driver_support::unclaimed::UnclaimedBatch>, Error>;
    /// New credentials for the client.
    fn set_credentials(&self, client: &Self::Client, credentials: Credentials)
        -> Result<(), Error>;
    /// What the client has done so far.
    fn stats(&self, client: &Self::Client) -> Result<Stats, Error>;
    /// The client's events, from now on.
    fn events(&self, client: &Self::Client) -> Self::Events;
    /// The events that came, taken.
    fn drain(events: &Self::Events) -> Vec<DriverEvent>;
    /// The next event within `wait`, or `None`.
    fn next_driver_event(&self, events: &mut Self::Events, wait: Duration) -> Option<DriverEvent>;
    /// How many events the observer lost for being slow.
    fn lost(events: &Self::Events) -> u64;
    /// The bytes the observer holds unread.
    fn held_bytes(events: &Self::Events) -> usize;
    /// How many outcomes nobody claimed were lost.
    fn unclaimed_lost(client: &Self::Client) -> u64;
    /// A transaction begun, or the BEGIN's result when it did not complete.
    fn transaction(
        &self,
        client: &Self::Client,
    ) -> Result<Result<Self::Transaction, CommandResult>, Error>;
    /// A command run in the transaction.
    fn tx_execute(&self, tx: &Self::Transaction, query: &str) -> Result<CommandResult, Error>;
    /// The transaction committed.
    fn commit(&self, tx: Self::Transaction) -> Result<CommandResult, Error>;
    /// A producer opened.
    fn producer(&self, client: &Self::Client, spec: ProducerSpec) -> Result<Self::Producer, Error>;
    /// A batch handed to the producer, waiting for room as long as it takes.
    fn submit_batch(&self, p: &Self::Producer, batch: Submission) -> Result<Self::Batch, Error>;
    /// A batch handed to the producer, waiting for room at most `timeout`
    /// ([`Error::TimedOut`], the batch never taken).
    fn submit_batch_timeout(
        &self,
        p: &Self::Producer,
        batch: Submission,
        timeout: Duration,
    ) -> Result<Self::Batch, Error>;
    /// The name of a submitted batch.
    fn batch_id(b: &Self::Batch) -> BatchId;
    /// The outcome of a batch within `timeout`.
    fn batch_outcome(&self, b: &mut Self::Batch, timeout: Duration) -> Result<BatchOutcome, Error>;
    /// The producer closed, and its last event within `timeout`.
    fn close_producer(&self, p: Self::Producer, timeout: Duration) -> Result<ProducerEvent, Error>;
    /// A consumer opened.
    fn consumer(&self, client: &Self::Client, spec: ConsumerSpec) -> Result<Self::Consumer, Error>;
    /// The next delivery within `timeout`: `Ok(None)` once the consumer ended.
    fn next_delivery(
        &self,
        k: &mut Self::Consumer,
        timeout: Duration,
    ) -> Result<Option<Delivery>, Error>;
    /// A decision on a delivery.
    fn settle(
        &self,
        k: &mut Self::Consumer,
        delivery: DeliveryRef,
        decision: Decision,
    ) -> Result<SettleResult, Error>;
    /// The consumer closed within `timeout`.
    fn close_consumer(&self, k: Self::Consumer, timeout: Duration) -> Result<(), Error>;
    /// A command run to its end.
    fn execute(&self, client: &Self::Client, query: &str) -> Result<CommandResult, Error>;
    /// Selects the session's domain.
    fn select_domain(&self, client: &Self::Client, domain: Option<&str>) -> Result<(), Error>;
    /// Closes the client.
    fn close(&self, client: Self::Client, revert: bool) -> Result<(), Error>;

    /// A subscription opened by `statement`.
    fn subscribe(
        &self,
        client: &Self::Client,
        statement: &str,
    ) -> Result<Self::Subscription, Error>;
    /// The next event within `wait`: `Ok(None)` once it ended, [`Error::TimedOut`] when
    /// nothing came in time.
    fn next_event(
        &self,
        s: &mut Self::Subscription,
        wait: Duration,
    ) -> Result<Option<SubscriptionEvent>, Error>;
    /// The clock of `domain`, followed.
    fn follow_clock(&self, client: &Self::Client, domain: &str) -> Result<Self::Clock, Error>;
    /// The domain of a followed clock.
    fn clock_domain(k: &Self::Clock) -> &str;
    /// The next clock event within `wait`, as [`Driver::next_event`].
    fn next_clock(&self, k: &mut Self::Clock, wait: Duration) -> Result<Option<ClockEvent>, Error>;

    /// The separate calls of `config`.
    fn transfers(&self, config: &Self::Config) -> Result<Self::Transfers, Self::TransferError>;
    /// The archive of a completed BACKUP, downloaded to `target`.
    fn backup(
        &self,
        t: &Self::Transfers,
        report: &CommandReport,
        target: &Path,
    ) -> Result<PathBuf, Self::TransferError>;
    /// A download run to `target`.
    fn download(
        &self,
        t: &Self::Transfers,
        call: &mut BackupDownload,
        target: &Path,
    ) -> Result<PathBuf, Self::TransferError>;
    /// A restore streamed from `file`.
    fn restore(
        &self,
        t: &Self::Transfers,
        call: &mut RestoreCall,
        file: &Path,
    ) -> Result<RestoreOutcome, Self::TransferError>;
    /// An upload streamed from `file`, or `None` when the driver has no uploads.
    fn upload(
        &self,
        t: &Self::Transfers,
        call: &mut UploadCall,
        file: &Path,
    ) -> Option<Result<UploadOutcome, Self::TransferError>>;
    /// [`Driver::download`], telling `progress` how far it has come.
    fn download_watched(
        &self,
        t: &Self::Transfers,
        call: &mut BackupDownload,
        target: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<PathBuf, Self::TransferError>;
    /// [`Driver::restore`], telling `progress` how far it has come.
    fn restore_watched(
        &self,
        t: &Self::Transfers,
        call: &mut RestoreCall,
        file: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<RestoreOutcome, Self::TransferError>;
    /// [`Driver::upload`], telling `progress` how far it has come.
    fn upload_watched(
        &self,
        t: &Self::Transfers,
        call: &mut UploadCall,
        file: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Option<Result<UploadOutcome, Self::TransferError>>;
    /// The separate calls of `config`, keeping their uploads and restores in `client`'s
    /// journal.
    fn journaled_transfers(
        &self,
        config: &Self::Config,
        client: &Self::Client,
    ) -> Result<Self::Transfers, Self::TransferError>;
    /// A journaled restore repeated under its record.
    fn recover_restore(
        &self,
        t: &Self::Transfers,
        record: &nervix_driver_support::journal::TransferRecord,
    ) -> Result<RestoreOutcome, Self::TransferError>;
    /// A journaled upload repeated under its record, or `None` when the driver has no uploads.
    fn recover_upload(
        &self,
        t: &Self::Transfers,
        record: &nervix_driver_support::journal::TransferRecord,
    ) -> Option<Result<UploadOutcome, Self::TransferError>>;
    /// The journal's refusal an error stands for, if it is one.
    fn journal_error(
        e: &Self::TransferError,
    ) -> Option<&nervix_driver_support::transfer_journal::TransferJournalError>;
    /// Why the last attempt that could not connect did not, when the driver tells it.
    fn connect_error(e: &Self::TransferError) -> Option<&ConnectError>;
    /// The failure an error stands for.
    fn failure(e: &Self::TransferError) -> Failure;
}

/// Runs `f` on a thread of its own; the test fails when it has not ended within `limit`
/// (and with `f`'s own panic when it panicked).
pub fn bounded<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let end = Instant::now() + limit;
    let run = std::thread::spawn(f);
    while !run.is_finished() {
        assert!(
            Instant::now() < end,
            "the test did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    run.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Runs a scenario within two minutes (the bound of every test written here).
pub fn scenario(f: impl FnOnce() + Send + 'static) {
    bounded(Duration::from_secs(120), f)
}

/// The seeds of `lb` that `via` reaches.
pub fn seeds_of(lb: &Loopback, via: Via) -> Vec<String> {
    match via {
        Via::Grpc => lb.grpc_endpoints().to_vec(),
        Via::Console(_) => lb.console_endpoints().to_vec(),
    }
}

/// A configuration of `seeds` with the given deadlines.
pub fn config_of<D: Driver>(
    seeds: &[String],
    credentials: Credentials,
    via: Via,
    call: Duration,
    connect: Duration,
) -> D::Config {
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    D::with_timeouts(D::config(&seeds, credentials, via).unwrap(), call, connect)
}

/// A fresh, empty scratch directory named after the driver, `name` and this process.
pub fn scratch<D: Driver>(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("nervix-{}-{name}-{}", D::NAME, std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The archive description of the file at `path`.
pub fn info_of(path: &Path) -> ArchiveInfo {
    let mut d = ArchiveDigest::new();
    d.update(&std::fs::read(path).unwrap());
    d.finish()
}

/// The names in `dir`, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The instants at which the loopback saw the first `n` calls to `path`, polled every 2 ms
/// for at most 20 s.
pub fn call_instants(lb: &Loopback, path: &str, n: usize) -> Vec<Instant> {
    let mut seen = Vec::new();
    let end = Instant::now() + Duration::from_secs(20);
    while seen.len() < n && Instant::now() < end {
        let count = lb.calls_to(path).len();
        while seen.len() < count.min(n) {
            seen.push(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    seen
}

/// Whether a command completed.
pub fn completed(r: &CommandResult) -> bool {
    matches!(r, CommandResult::Completed(_))
}

/// A completed BACKUP of the domain `tenant`, run through a client of `config`.
pub fn backed_up<D: Driver>(d: &D, config: &D::Config) -> CommandReport {
    let client = d.connect(config.clone()).unwrap();
    let CommandResult::Completed(report) = d.execute(&client, "BACKUP DOMAIN tenant").unwrap()
    else {
        panic!("the backup did not complete");
    };
    let _ = d.close(client, false);
    report
}

/// The body of a test: `run!(Tokio, module::scenario(args))` runs the scenario for that
/// driver within its bound, with [`Via`] and [`WsAuth`] in scope for the arguments.
#[doc(hidden)]
#[macro_export]
macro_rules! run {
    ($d:ident, $m:ident::$f:ident($($a:expr),*)) => {{
        #[allow(unused_imports)]
        use $crate::{Via, WsAuth};
        $crate::scenario(|| $crate::$m::$f::<$crate::$d>($($a),*))
    }};
}
