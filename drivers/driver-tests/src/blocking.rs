//! The blocking client, as it is.

use crate::{Driver, Error, Failure, Via};
use nervix_blocking::{
    Client, ClockFollow, Config, Consumer, Events, PendingBatch, PendingCommand, Producer,
    Subscription, Transaction, TransferError, Transfers,
};
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
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The blocking driver: every operation is the client's own.
pub struct Blocking;

impl Driver for Blocking {
    const NAME: &'static str = "blocking";

    crate::same_in_both!();

    fn new() -> Self {
        Blocking
    }

    fn speaks(via: Via) -> bool {
        matches!(via, Via::Console(_))
    }

    fn config(seeds: &[&str], credentials: Credentials, via: Via) -> Result<Config, ConfigError> {
        let Via::Console(auth) = via else {
            panic!("the blocking driver speaks the console only");
        };
        Ok(Config::new(seeds, credentials)?.with_auth(auth))
    }

    fn console_url(endpoint: &Endpoint, query_auth: Option<&Credentials>) -> String {
        nervix_blocking::console_url(endpoint, query_auth)
    }

    fn start(&self, config: Config) -> Result<Client, Error> {
        Client::start(config)
    }

    fn submit(&self, client: &Client, query: &str) -> Result<PendingCommand, Error> {
        client.submit(query)
    }

    fn wait(&self, pending: PendingCommand) -> Result<CommandResult, Error> {
        pending.wait()
    }

    fn wait_timeout(
        &self,
        pending: &mut PendingCommand,
        timeout: Duration,
    ) -> Result<CommandResult, Error> {
        pending.wait_timeout(timeout)
    }

    fn recover(&self, client: &Client, command: &RetainedCommand) -> Result<CommandResult, Error> {
        client.recover(command)
    }

    fn recovery(
        &self,
        client: &Client,
    ) -> Result<nervix_driver_support::journaled::Recovery, Error> {
        client.recovery()
    }

    fn run(&self, client: &Client, statement: &str) -> Result<RunResult, Error> {
        client.run(statement)
    }

    fn unclaimed(&self, client: &Client) -> Result<Vec<CommandResult>, Error> {
        client.unclaimed()
    }

    fn unclaimed_batches(
        &self,
        client: &Client,
    ) -> Result<Vec<nervix_driver_support::unclaimed::UnclaimedBatch>, Error> {
        client.unclaimed_batches()
    }

    fn set_credentials(&self, client: &Client, credentials: Credentials) -> Result<(), Error> {
        client.set_credentials(credentials)
    }

    fn stats(&self, client: &Client) -> Result<nervix_blocking::Stats, Error> {
        client.stats()
    }

    fn events(&self, client: &Client) -> Events {
        client.events().unwrap()
    }

    fn drain(events: &Events) -> Vec<DriverEvent> {
        events.drain()
    }

    fn next_driver_event(&self, events: &mut Events, wait: Duration) -> Option<DriverEvent> {
        events.next_timeout(wait)
    }

    fn transaction(&self, client: &Client) -> Result<Result<Transaction, CommandResult>, Error> {
        client.transaction()
    }

    fn tx_execute(&self, tx: &Transaction, query: &str) -> Result<CommandResult, Error> {
        tx.execute(query)
    }

    fn commit(&self, tx: Transaction) -> Result<CommandResult, Error> {
        tx.commit()
    }

    fn producer(&self, client: &Client, spec: ProducerSpec) -> Result<Producer, Error> {
        client.producer(spec)
    }

    fn submit_batch(&self, p: &Producer, batch: Submission) -> Result<PendingBatch, Error> {
        p.submit(batch)
    }

    fn submit_batch_timeout(
        &self,
        p: &Producer,
        batch: Submission,
        timeout: Duration,
    ) -> Result<PendingBatch, Error> {
        p.submit_timeout(batch, timeout)
    }

    fn batch_outcome(
        &self,
        b: &mut PendingBatch,
        timeout: Duration,
    ) -> Result<BatchOutcome, Error> {
        b.wait(timeout)
    }

    fn close_producer(&self, p: Producer, timeout: Duration) -> Result<ProducerEvent, Error> {
        p.close(timeout)
    }

    fn consumer(&self, client: &Client, spec: ConsumerSpec) -> Result<Consumer, Error> {
        client.consumer(spec)
    }

    fn next_delivery(
        &self,
        k: &mut Consumer,
        timeout: Duration,
    ) -> Result<Option<Delivery>, Error> {
        k.next_delivery(timeout)
    }

    fn settle(
        &self,
        k: &mut Consumer,
        delivery: DeliveryRef,
        decision: Decision,
    ) -> Result<SettleResult, Error> {
        k.settle(delivery, decision)
    }

    fn close_consumer(&self, k: Consumer, timeout: Duration) -> Result<(), Error> {
        k.close(timeout)
    }

    fn connect(&self, config: Config) -> Result<Client, Error> {
        Client::connect(config)
    }

    fn execute(&self, client: &Client, query: &str) -> Result<CommandResult, Error> {
        client.execute(query)
    }

    fn select_domain(&self, client: &Client, domain: Option<&str>) -> Result<(), Error> {
        client.select_domain(domain)
    }

    fn close(&self, client: Client, revert: bool) -> Result<(), Error> {
        client.close(revert)
    }

    fn subscribe(&self, client: &Client, statement: &str) -> Result<Subscription, Error> {
        client.subscribe(statement)
    }

    fn next_event(
        &self,
        s: &mut Subscription,
        wait: Duration,
    ) -> Result<Option<SubscriptionEvent>, Error> {
        s.next_timeout(wait)
    }

    fn follow_clock(&self, client: &Client, domain: &str) -> Result<ClockFollow, Error> {
        client.follow_clock(domain)
    }

    fn next_clock(&self, k: &mut ClockFollow, wait: Duration) -> Result<Option<ClockEvent>, Error> {
        k.next_timeout(wait)
    }

    fn backup(
        &self,
        t: &Transfers,
        report: &CommandReport,
        target: &Path,
    ) -> Result<PathBuf, TransferError> {
        t.backup(report, target)
    }

    fn download(
        &self,
        t: &Transfers,
        call: &mut BackupDownload,
        target: &Path,
    ) -> Result<PathBuf, TransferError> {
        t.download(call, target)
    }

    fn restore(
        &self,
        t: &Transfers,
        call: &mut RestoreCall,
        file: &Path,
    ) -> Result<RestoreOutcome, TransferError> {
        t.restore(call, file)
    }

    fn upload(
        &self,
        _: &Transfers,
        _: &mut UploadCall,
        _: &Path,
    ) -> Option<Result<UploadOutcome, TransferError>> {
        None
    }

    fn download_watched(
        &self,
        t: &Transfers,
        call: &mut BackupDownload,
        target: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<PathBuf, TransferError> {
        t.download_with_progress(call, target, progress)
    }

    fn restore_watched(
        &self,
        t: &Transfers,
        call: &mut RestoreCall,
        file: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<RestoreOutcome, TransferError> {
        t.restore_with_progress(call, file, progress)
    }

    fn upload_watched(
        &self,
        _: &Transfers,
        _: &mut UploadCall,
        _: &Path,
        _: &mut (dyn FnMut(Progress) + Send),
    ) -> Option<Result<UploadOutcome, TransferError>> {
        None
    }

    fn recover_restore(
        &self,
        t: &Transfers,
        record: &nervix_driver_support::journal::TransferRecord,
    ) -> Result<RestoreOutcome, TransferError> {
        t.recover_restore(record)
    }

    fn recover_upload(
        &self,
        _: &Transfers,
        _: &nervix_driver_support::journal::TransferRecord,
    ) -> Option<Result<UploadOutcome, TransferError>> {
        None
    }

    fn connect_error(e: &TransferError) -> Option<&ConnectError> {
        let _ = e;
        None
    }
}
