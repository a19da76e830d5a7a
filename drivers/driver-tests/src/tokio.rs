//! The tokio client, each operation blocked on through a runtime of its own.

use crate::{Driver, Error, Failure, Via};
use nervix_driver_support::api::{DriverEvent, RunResult};
use nervix_driver_support::config::ConfigError;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::resolve::{ConnectError, Resolve};
use nervix_driver_support::Submission;
use nervix_protocol::calls::{
    BackupDownload, Progress, RestoreCall, RestoreOutcome, UploadCall, UploadOutcome,
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

/// The tokio driver: a multi-threaded runtime of two workers (or, made by
/// [`Driver::on_one_thread`], a current-thread runtime) that every operation blocks on, and
/// that ends (with every task it still runs) when this is dropped.
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

    /// Runs `f` to its end on the runtime, or [`Error::TimedOut`] once `limit` passed (and
    /// `f` dropped).
    fn within<T>(
        &self,
        limit: Duration,
        f: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        self.block(async { tokio::time::timeout(limit, f).await })
            .unwrap_or(Err(Error::TimedOut))
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

    crate::same_in_both!(TransferError::UploadNeedsGrpc => Failure::UploadNeedsGrpc,);

    fn new() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        Tokio { rt }
    }

    fn on_one_thread() -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
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

    fn wait(&self, pending: PendingCommand) -> Result<CommandResult, Error> {
        self.block(pending)
    }

    fn wait_timeout(
        &self,
        pending: &mut PendingCommand,
        timeout: Duration,
    ) -> Result<CommandResult, Error> {
        self.within(timeout, pending)
    }

    fn recover(&self, client: &Client, command: &RetainedCommand) -> Result<CommandResult, Error> {
        self.block(client.recover(command))
    }

    fn recovery(
        &self,
        client: &Client,
    ) -> Result<nervix_driver_support::journaled::Recovery, Error> {
        self.block(client.recovery())
    }

    fn recovery_abandoned(&self, client: &Client, answered: bool) -> bool {
        // Polled once outside the runtime's block_on: the request goes out, and on a
        // current-thread runtime the driver task cannot answer before the call is dropped,
        // unless the runtime is run meanwhile (`answered`): then the driver takes the request
        // and puts its answer in the call's channel, where nobody reads it.
        let _in = self.rt.enter();
        let mut call = std::pin::pin!(client.recovery());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let pending = call.as_mut().poll(&mut cx).is_pending();
        if answered {
            self.rt
                .block_on(tokio::time::sleep(std::time::Duration::from_millis(200)));
        }
        pending && self.rt.handle().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread
    }

    fn run(&self, client: &Client, statement: &str) -> Result<RunResult, Error> {
        self.block(client.run(statement))
    }

    fn unclaimed(&self, client: &Client) -> Result<Vec<CommandResult>, Error> {
        self.block(client.unclaimed())
    }

    fn unclaimed_batches(
        &self,
        client: &Client,
    ) -> Result<Vec<nervix_driver_support::unclaimed::UnclaimedBatch>, Error> {
        self.block(client.unclaimed_batches())
    }

    fn set_credentials(&self, client: &Client, credentials: Credentials) -> Result<(), Error> {
        self.block(client.set_credentials(credentials))
    }

    fn stats(&self, client: &Client) -> Result<nervix_tokio::Stats, Error> {
        self.block(client.stats())
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
        self.within(timeout, p.submit(batch))
    }

    fn batch_outcome(
        &self,
        b: &mut PendingBatch,
        timeout: Duration,
    ) -> Result<BatchOutcome, Error> {
        self.within(timeout, b)
    }

    fn close_producer(&self, p: Producer, timeout: Duration) -> Result<ProducerEvent, Error> {
        self.within(timeout, p.close())
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
        self.within(timeout, k.close())
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

    fn next_clock(&self, k: &mut ClockFollow, wait: Duration) -> Result<Option<ClockEvent>, Error> {
        self.block(within(wait, k.next_event()))
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

    fn download_watched(
        &self,
        t: &Transfers,
        call: &mut BackupDownload,
        target: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<PathBuf, TransferError> {
        self.block(t.download_with_progress(call, target, progress))
    }

    fn restore_watched(
        &self,
        t: &Transfers,
        call: &mut RestoreCall,
        file: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<RestoreOutcome, TransferError> {
        self.block(t.restore_with_progress(call, file, progress))
    }

    fn upload_watched(
        &self,
        t: &Transfers,
        call: &mut UploadCall,
        file: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Option<Result<UploadOutcome, TransferError>> {
        Some(self.block(t.upload_with_progress(call, file, progress)))
    }

    fn recover_restore(
        &self,
        t: &Transfers,
        record: &nervix_driver_support::journal::TransferRecord,
    ) -> Result<RestoreOutcome, TransferError> {
        self.block(t.recover_restore(record))
    }

    fn recover_upload(
        &self,
        t: &Transfers,
        record: &nervix_driver_support::journal::TransferRecord,
    ) -> Option<Result<UploadOutcome, TransferError>> {
        Some(self.block(t.recover_upload(record)))
    }

    fn connect_error(e: &TransferError) -> Option<&ConnectError> {
        match e {
            TransferError::GaveUp { connect, .. } => connect.as_ref(),
            _ => None,
        }
    }
}
