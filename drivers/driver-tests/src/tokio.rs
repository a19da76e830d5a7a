//! The tokio client, each operation blocked on through a runtime of its own.

use crate::{Driver, Error, Failure, Via};
use nervix_driver_support::api::{DriverEvent, RunResult};
use nervix_driver_support::config::ConfigError;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::resolve::{ConnectError, Resolve};
use nervix_driver_support::Submission;
use nervix_protocol::calls::{
    BackupDownload, RestoreCall, RestoreOutcome, UploadCall, UploadOutcome,
};
use nervix_protocol::client::RetainedCommand;
use nervix_protocol::client::{
    BatchId, BatchOutcome, ConsumerSpec, Decision, Delivery, DeliveryRef, ProducerEvent,
    ProducerSpec, SettleResult,
};
use nervix_protocol::client::{
    ClientConfig, ClockEvent, CommandReport, CommandResult, SubscriptionEvent,
};
use nervix_protocol::endpoint::Endpoint;
use nervix_tokio::{
    Client, ClockFollow, Config, Consumer, Events, PendingBatch, PendingCommand, Producer,
    Subscription, Transaction, TransferError, Transfers, Transport,
};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The tokio driver: a multi-threaded runtime of two workers that every operation blocks on,
/// and that ends (with every task it still runs) when this is dropped.
pub struct Tokio {
    rt: tokio::runtime::Runtime,
}

impl Tokio {
    /// Runs `f` to its end on the runtime; the test fails when it takes more than a minute.
    pub fn block<F: Future>(&self, f: F) -> F::Output {
        self.rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
            .expect("the operation ends within its bound")
    }

    /// The runtime.
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.rt
    }
}

fn transport(via: Via) -> Transport {
    match via {
        Via::Grpc => Transport::Grpc,
        Via::Console(auth) => Transport::WebSocket(auth),
    }
}

/// The next item of a stream within `wait`.
async fn within<T>(wait: Duration, f: impl Future<Output = Option<T>>) -> Result<Option<T>, Error> {
    tokio::time::timeout(wait, f)
        .await
        .map_err(|_| Error::TimedOut)
}

impl Driver for Tokio {
    const NAME: &'static str = "tokio";
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

    fn new() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        Tokio { rt }
    }

    fn speaks(_: Via) -> bool {
        true
    }

    fn config(seeds: &[&str], credentials: Credentials, via: Via) -> Result<Config, ConfigError> {
        Config::new(seeds, credentials, transport(via))
    }

    fn with_timeouts(config: Config, call: Duration, connect: Duration) -> Config {
        config.with_timeouts(call, connect)
    }

    fn with_root(config: Config, der: Vec<u8>) -> Config {
        config.with_root(der)
    }

    fn with_resolver(config: Config, resolver: impl Resolve) -> Config {
        config.with_resolver(resolver)
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

    fn console_url(endpoint: &Endpoint, query_auth: Option<&Credentials>) -> String {
        nervix_tokio::console_url(endpoint, query_auth)
    }

    fn start(&self, config: Config) -> Result<Client, Error> {
        let _in = self.rt.enter();
        Client::start(config)
    }

    fn submit(&self, client: &Client, query: &str) -> Result<PendingCommand, Error> {
        self.block(client.submit(query))
    }

    fn reference(pending: &PendingCommand) -> String {
        pending.reference().to_string()
    }

    fn wait(&self, pending: PendingCommand) -> Result<CommandResult, Error> {
        self.block(pending)
    }

    fn wait_timeout(
        &self,
        pending: &mut PendingCommand,
        timeout: Duration,
    ) -> Result<CommandResult, Error> {
        self.block(async {
            tokio::time::timeout(timeout, pending)
                .await
                .unwrap_or(Err(Error::TimedOut))
        })
    }

    fn recover(&self, client: &Client, command: &RetainedCommand) -> Result<CommandResult, Error> {
        self.block(client.recover(command))
    }

    fn run(&self, client: &Client, statement: &str) -> Result<RunResult, Error> {
        self.block(client.run(statement))
    }

    fn unclaimed(&self, client: &Client) -> Result<Vec<CommandResult>, Error> {
        self.block(client.unclaimed())
    }

    fn set_credentials(&self, client: &Client, credentials: Credentials) -> Result<(), Error> {
        self.block(client.set_credentials(credentials))
    }

    fn events(&self, client: &Client) -> Events {
        client.events()
    }

    fn drain(events: &Events) -> Vec<DriverEvent> {
        std::iter::from_fn(|| events.try_recv().ok()).collect()
    }

    fn next_driver_event(&self, events: &mut Events, wait: Duration) -> Option<DriverEvent> {
        self.block(async { tokio::time::timeout(wait, events.recv()).await })
            .ok()
            .and_then(Result::ok)
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

    fn transaction(&self, client: &Client) -> Result<Result<Transaction, CommandResult>, Error> {
        self.block(client.transaction())
    }

    fn tx_execute(&self, tx: &Transaction, query: &str) -> Result<CommandResult, Error> {
        self.block(tx.execute(query))
    }

    fn commit(&self, tx: Transaction) -> Result<CommandResult, Error> {
        self.block(tx.commit())
    }

    fn producer(&self, client: &Client, spec: ProducerSpec) -> Result<Producer, Error> {
        self.block(client.producer(spec))
    }

    fn submit_batch(&self, p: &Producer, batch: Submission) -> Result<PendingBatch, Error> {
        self.block(p.submit(batch))
    }

    fn submit_batch_timeout(
        &self,
        p: &Producer,
        batch: Submission,
        timeout: Duration,
    ) -> Result<PendingBatch, Error> {
        self.block(async {
            tokio::time::timeout(timeout, p.submit(batch))
                .await
                .unwrap_or(Err(Error::TimedOut))
        })
    }

    fn batch_id(b: &PendingBatch) -> BatchId {
        b.id()
    }

    fn batch_outcome(
        &self,
        b: &mut PendingBatch,
        timeout: Duration,
    ) -> Result<BatchOutcome, Error> {
        self.block(async {
            tokio::time::timeout(timeout, b)
                .await
                .unwrap_or(Err(Error::TimedOut))
        })
    }

    fn close_producer(&self, p: Producer, timeout: Duration) -> Result<ProducerEvent, Error> {
        self.block(async {
            tokio::time::timeout(timeout, p.close())
                .await
                .unwrap_or(Err(Error::TimedOut))
        })
    }

    fn consumer(&self, client: &Client, spec: ConsumerSpec) -> Result<Consumer, Error> {
        self.block(client.consumer(spec))
    }

    fn next_delivery(
        &self,
        k: &mut Consumer,
        timeout: Duration,
    ) -> Result<Option<Delivery>, Error> {
        self.block(async {
            tokio::time::timeout(timeout, k.next_delivery())
                .await
                .map_err(|_| Error::TimedOut)
        })
    }

    fn settle(
        &self,
        k: &mut Consumer,
        delivery: DeliveryRef,
        decision: Decision,
    ) -> Result<SettleResult, Error> {
        self.block(k.settle(delivery, decision))
    }

    fn close_consumer(&self, k: Consumer, timeout: Duration) -> Result<(), Error> {
        self.block(async {
            tokio::time::timeout(timeout, k.close())
                .await
                .unwrap_or(Err(Error::TimedOut))
        })
    }

    fn connect(&self, config: Config) -> Result<Client, Error> {
        self.block(Client::connect(config))
    }

    fn execute(&self, client: &Client, query: &str) -> Result<CommandResult, Error> {
        self.block(client.execute(query))
    }

    fn select_domain(&self, client: &Client, domain: Option<&str>) -> Result<(), Error> {
        self.block(client.select_domain(domain))
    }

    fn close(&self, client: Client, revert: bool) -> Result<(), Error> {
        self.block(client.close(revert))
    }

    fn subscribe(&self, client: &Client, statement: &str) -> Result<Subscription, Error> {
        self.block(client.subscribe(statement))
    }

    fn next_event(
        &self,
        s: &mut Subscription,
        wait: Duration,
    ) -> Result<Option<SubscriptionEvent>, Error> {
        self.block(within(wait, s.next_event()))
    }

    fn follow_clock(&self, client: &Client, domain: &str) -> Result<ClockFollow, Error> {
        self.block(client.follow_clock(domain))
    }

    fn clock_domain(k: &ClockFollow) -> &str {
        k.domain()
    }

    fn next_clock(&self, k: &mut ClockFollow, wait: Duration) -> Result<Option<ClockEvent>, Error> {
        self.block(within(wait, k.next_event()))
    }

    fn transfers(&self, config: &Config) -> Result<Transfers, TransferError> {
        Transfers::new(config)
    }

    fn backup(
        &self,
        t: &Transfers,
        report: &CommandReport,
        target: &Path,
    ) -> Result<PathBuf, TransferError> {
        self.block(t.backup(report, target))
    }

    fn download(
        &self,
        t: &Transfers,
        call: &mut BackupDownload,
        target: &Path,
    ) -> Result<PathBuf, TransferError> {
        self.block(t.download(call, target))
    }

    fn restore(
        &self,
        t: &Transfers,
        call: &mut RestoreCall,
        file: &Path,
    ) -> Result<RestoreOutcome, TransferError> {
        self.block(t.restore(call, file))
    }

    fn upload(
        &self,
        t: &Transfers,
        call: &mut UploadCall,
        file: &Path,
    ) -> Option<Result<UploadOutcome, TransferError>> {
        Some(self.block(t.upload(call, file)))
    }

    fn connect_error(e: &TransferError) -> Option<&ConnectError> {
        match e {
            TransferError::GaveUp { connect, .. } => connect.as_ref(),
            _ => None,
        }
    }

    fn failure(e: &TransferError) -> Failure {
        match e {
            TransferError::Config(c) => Failure::Config(c.clone()),
            TransferError::Unauthenticated => Failure::Unauthenticated,
            TransferError::UploadNeedsGrpc => Failure::UploadNeedsGrpc,
            TransferError::Unavailable { failure, .. } => Failure::Unavailable(*failure),
            TransferError::FrameRefused { code } => Failure::FrameRefused(*code),
            TransferError::GaveUp { attempts, last, .. } => Failure::GaveUp {
                attempts: *attempts,
                last: last.clone(),
            },
            other => Failure::Other(format!("{other:?}")),
        }
    }
}
