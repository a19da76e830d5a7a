//! `just run`: the loopback cluster on 127.0.0.1 (three nodes, TLS), and an example session
//! over the tokio driver: commands, a subscription whose rows it prints, the tenant's clock,
//! a transaction, and a leader change midway that the subscription and the clock survive;
//! then a backup of the tenant is downloaded and restored (an archive of tens of MiB, the
//! cluster generates it) with a progress line for each, and a producer submits a batch to the
//! tenant's ingestor and a consumer reads and acknowledges one delivery of its emitter.
//!
//! Last, a client that survives its own crash (issue 19): this program is started again as a
//! client process with a journal, on a one-node cluster of its own whose replies are held
//! back; the process journals and sends its commands, the cluster applies them, and the
//! process is killed with SIGKILL before any outcome reaches it. Its successor on the same
//! slot lists what the journal held, recovers each outcome from the server's record (a
//! `Recovered` origin), and the cluster's trace shows each command applied once. The story
//! and its checks are `nervix-driver-tests`' SIGKILL scenario, told as it goes.
//!
//! The progress lines redraw in place on a terminal; piped or logged, they are plain lines
//! at each quarter and at each restart.

use futures_util::StreamExt;
use nervix_driver_tests::journal::{self, ChildProgram, Told};
use nervix_driver_tests::{bounded, Tokio, Via};
use nervix_harness::cluster::{emitter_fields, ingestor_fields, EMITTER, INGESTOR};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::calls::{ArchiveDigest, RestoreCall, RestoreOutcome, TransferConfig};
use nervix_protocol::client::CommandReport;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::domain_clock::ClockState;
use nervix_protocol::rows::CheckedBatch;
use nervix_tokio::{
    Client, ClockEvent, ClockFollow, CommandResult, Config, ConsumerSpec, Credentials, Decision,
    DriverEvent, JournaledCommand, ProducerSpec, ProgressLine, RunResult, SessionLoss,
    Subscription, SubscriptionEvent, Transfers, Transport,
};
use std::process::ExitCode;
use std::time::Duration;

fn loss(l: &SessionLoss) -> String {
    match l {
        SessionLoss::Transport => "the transport ended".into(),
        SessionLoss::Ending(f) => format!("the server ended it ({:?})", f.view().body_type()),
        SessionLoss::Violation(v) => format!("a protocol violation: {v}"),
        SessionLoss::Closed => "the client closed it".into(),
        other => format!("{other:?}"),
    }
}

fn show_rows(b: &CheckedBatch) {
    for row in b.rows().take(2) {
        let cell = |name: &str| {
            row.get(name)
                .map_or_else(|| "-".to_string(), |v| format!("{v:?}"))
        };
        println!(
            "    row {} of generation {}: price {}, note {}, words {}",
            cell("id"),
            b.generation(),
            cell("price"),
            cell("note"),
            cell("words")
        );
    }
    if b.len() > 2 {
        println!("    ... and {} more row(s) in the batch", b.len() - 2);
    }
}

/// Prints subscription events until `batches` batches of rows were seen (five seconds at most).
async fn watch_rows(s: &mut Subscription, batches: usize) -> usize {
    let mut rows = 0;
    let mut seen = 0;
    while seen < batches {
        let Ok(Some(e)) = tokio::time::timeout(Duration::from_secs(5), s.next()).await else {
            break;
        };
        match e {
            SubscriptionEvent::Opened {
                generation, relay, ..
            } => println!("  subscription opened on {relay}, generation {generation}"),
            SubscriptionEvent::Rows(b) => {
                show_rows(&b);
                rows += b.len();
                seen += 1;
            }
            SubscriptionEvent::Gap(g) => println!("  subscription gap: {g:?}"),
            other => println!("  subscription: {other:?}"),
        }
    }
    rows
}

/// Prints clock events until a tick (five seconds at most).
async fn watch_clock(k: &mut ClockFollow) {
    while let Ok(Some(e)) = tokio::time::timeout(Duration::from_secs(5), k.next()).await {
        match e {
            ClockEvent::Attached { domain, clock } => {
                let state = match clock.state {
                    ClockState::Paced(p) => {
                        format!(
                            "paced, a tick every {} ms",
                            p.period_nanos().get() / 1_000_000
                        )
                    }
                    other => format!("{other:?}"),
                };
                println!(
                    "  {domain} clock attached: generation {}, {state}",
                    clock.generation
                )
            }
            ClockEvent::Ticked { domain, tick } => {
                println!(
                    "  {domain} clock tick {} of generation {}",
                    tick.tick_id, tick.generation
                );
                return;
            }
            ClockEvent::Interrupted { domain } => println!("  {domain} clock interrupted"),
            other => println!("  clock: {other:?}"),
        }
    }
}

fn describe(r: &CommandResult) -> String {
    match r {
        CommandResult::Completed(c) => format!("completed (ref {})", c.reference()),
        CommandResult::Failed(f) => format!("failed: {f:?}"),
        CommandResult::Uncertain { command, cause } => {
            format!("uncertain ({cause:?}), ref {}", command.reference)
        }
        other => format!("{other:?}"),
    }
}

/// The size and digest of the archive in the file at `path`, read 1 MiB at a time.
fn digest_of(path: &std::path::Path) -> std::io::Result<nervix_protocol::calls::ArchiveInfo> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut digest = ArchiveDigest::new();
    let mut piece = vec![0; 1 << 20];
    loop {
        match file.read(&mut piece)? {
            0 => return Ok(digest.finish()),
            n => digest.update(&piece[..n]),
        }
    }
}

/// Downloads the backup's archive into a temporary directory and restores it as `tenant_copy`,
/// printing what each step did.
async fn backup_and_restore(config: &Config, report: &CommandReport, transport: Transport) {
    let dir = std::env::temp_dir().join(format!("nervix-session-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let transfers = match Transfers::new(config) {
        Ok(t) => t,
        Err(e) => return println!("  backup: cannot open separate calls: {e}"),
    };
    let mut line = ProgressLine::stdout("  download");
    let downloaded = transfers
        .backup_with_progress(report, &dir.join("tenant.nxb"), |p| line.show(p))
        .await;
    line.finish();
    let archive = match downloaded {
        Ok(path) => path,
        Err(e) => return println!("  backup download failed: {e}"),
    };
    let size = std::fs::metadata(&archive).map_or(0, |m| m.len());
    println!("  archive downloaded and verified: {size} bytes (size and BLAKE3 digest)");
    // The restore names the archive's digest: read in pieces, never whole.
    let digest = match digest_of(&archive) {
        Ok(d) => d,
        Err(e) => return println!("  cannot read the archive: {e}"),
    };
    let reference = match transport {
        Transport::Grpc => "session-restore-grpc",
        _ => "session-restore-console",
    };
    let call = ExecutionReference::parse(reference)
        .map_err(|e| e.to_string())
        .and_then(|r| {
            RestoreCall::new(
                r,
                "RESTORE DOMAIN tenant AS tenant_copy",
                digest,
                TransferConfig::restore(),
            )
            .map_err(|e| e.to_string())
        });
    let mut call = match call {
        Ok(c) => c,
        Err(e) => return println!("  restore refused: {e}"),
    };
    let mut line = ProgressLine::stdout("  restore");
    let restored = transfers
        .restore_with_progress(&mut call, &archive, |p| line.show(p))
        .await;
    line.finish();
    match restored {
        Ok(RestoreOutcome::Completed {
            summary: Some(s), ..
        }) => println!(
            "  {:<44} completed: {} domain(s) restored from {} bytes",
            "RESTORE DOMAIN tenant AS tenant_copy",
            s.domains.len(),
            s.archive.total_bytes
        ),
        Ok(other) => println!("  restore ended: {other:?}"),
        Err(e) => println!("  restore failed: {e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A producer submits one small batch to the ingestor and prints its outcome; a consumer
/// reads one delivery of the emitter, prints its rows and acknowledges it.
async fn dataplane(client: &Client) -> Result<(), nervix_tokio::Error> {
    let producer = client
        .producer(ProducerSpec::new("tenant", INGESTOR, ingestor_fields()))
        .await?;
    let mut batch = producer.batch_builder();
    batch
        .column("id", &[1u64, 2, 3])
        .and_then(|()| batch.nullable_column("name", &[Some("first"), None, Some("third")]))
        .map_err(|e| nervix_tokio::Error::Submit(e.into()))?;
    let rows = batch.rows();
    let outcome = producer.submit(batch).await?.await?;
    println!("  producer on {INGESTOR}: a batch of {rows} row(s) -> {outcome:?}");
    let last = producer.close().await?;
    println!("  producer closed: {last:?}");
    let mut consumer = client
        .consumer(ConsumerSpec::new("tenant", EMITTER, emitter_fields()))
        .await?;
    match consumer.next_delivery().await {
        Some(d) => {
            println!(
                "  consumer on {EMITTER}: a delivery from {} of {} row(s)",
                d.source_relay,
                d.batch.num_rows()
            );
            let r = consumer.settle(d.reference, Decision::Ack).await?;
            println!("  ACK -> {r:?}");
        }
        None => println!("  consumer on {EMITTER}: ended before a delivery"),
    }
    consumer.close().await?;
    println!("  consumer closed");
    Ok(())
}

async fn session(lb: &Loopback, transport: Transport) -> Result<usize, nervix_tokio::Error> {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let config = Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)?
        .with_root(lb.certificate_der().unwrap_or_default().to_vec());
    let config_for_calls = config.clone();
    let client = Client::connect(config).await?;
    let events = client.events();
    let mut completed = 0;
    let show = |what: &str, r: &CommandResult, completed: &mut usize| {
        *completed += usize::from(matches!(r, CommandResult::Completed(_)));
        println!("  {what:<44} {}", describe(r));
    };
    if let RunResult::DomainSelected(d) = client.run("USE tenant").await? {
        println!("  USE tenant{:<34} selected {d}", "");
    }
    let r = client
        .execute("CREATE RELAY orders SCHEMA orders UNBRANCHED;")
        .await?;
    show("CREATE RELAY orders", &r, &mut completed);
    let mut live = client
        .subscribe("CREATE SUBSCRIPTION live FROM orders")
        .await?;
    let mut clock = client.follow_clock("tenant").await?;
    let mut rows = watch_rows(&mut live, 2).await;
    watch_clock(&mut clock).await;
    let tx = match client.transaction().await? {
        Ok(tx) => tx,
        Err(r) => {
            show("BEGIN", &r, &mut completed);
            return Ok(completed);
        }
    };
    println!("  {:<44} completed", "BEGIN");
    completed += 1;
    let r = tx.execute("CREATE RELAY audit;").await?;
    show(
        "  CREATE RELAY audit (in the transaction)",
        &r,
        &mut completed,
    );
    let next = (lb.leader() + 1) % 3;
    println!("  -- the leader moves to node-{} --", next + 1);
    lb.set_leader(next);
    let r = tx.execute("CREATE RELAY billing;").await?;
    show(
        "  CREATE RELAY billing (in the transaction)",
        &r,
        &mut completed,
    );
    let r = tx.commit().await?;
    show("COMMIT", &r, &mut completed);
    // The subscription and the clock went with the old leader's session and came back on the
    // new one: the subscription as a new generation after a gap.
    rows += watch_rows(&mut live, 2).await;
    watch_clock(&mut clock).await;
    println!("  {rows} row(s) read, each checked against its generation's schema");
    let r = client.execute("SHOW DOMAINS;").await?;
    show("SHOW DOMAINS", &r, &mut completed);
    // A backup: BACKUP on its own, its archive downloaded on a separate call and written under
    // its name only once size and digest are verified, then restored from that file.
    let r = client.execute("BACKUP DOMAIN tenant").await?;
    show("BACKUP DOMAIN tenant", &r, &mut completed);
    if let CommandResult::Completed(report) = &r {
        backup_and_restore(&config_for_calls, report, transport).await;
    }
    if let Err(e) = dataplane(&client).await {
        println!("  producer or consumer failed: {e}");
    }
    while let Ok(e) = events.try_recv() {
        match e {
            DriverEvent::SessionOpened { endpoint, .. } => {
                println!("  session opened at {endpoint}")
            }
            DriverEvent::SessionLost { loss: l, .. } => println!("  session lost: {}", loss(&l)),
            _ => {}
        }
    }
    client.close(false).await?;
    Ok(completed)
}

/// Prints one step of the crash story.
fn tell(step: Told<'_>) {
    match step {
        Told::Started { pid, slot } => println!(
            "  client process {pid} started with a journal, slot {}",
            slot.display()
        ),
        Told::Journaled { reference } => println!(
            "  command {reference} journaled, then sent; the cluster applied it, its reply held back"
        ),
        Told::Refused { holder } => println!(
            "  a second client on the same slot is refused: the slot is held by process {}",
            holder.map_or_else(|| "?".to_string(), |p| p.to_string())
        ),
        Told::Killed { pid } => println!(
            "  -- client process {pid} killed with SIGKILL mid-command: no outcome reached it --"
        ),
        Told::Listed(list) => {
            println!(
                "  its successor on the same slot recovers {} command(s) from the journal:",
                list.commands.len()
            );
            for c in &list.commands {
                match c {
                    JournaledCommand::Repeatable { command, .. } => println!(
                        "    {} `{}` in {}: inside its retry validity, to repeat",
                        command.reference,
                        command.query,
                        command.domain.as_deref().unwrap_or("-")
                    ),
                    JournaledCommand::Unknown { reference, .. } => {
                        println!("    {reference}: too old to repeat, outcome unknown")
                    }
                    other => println!("    {other:?}"),
                }
            }
        }
        Told::Recovered { reference, result } => match result {
            CommandResult::Completed(report) => println!(
                "  recover {reference} -> completed, origin {}: the outcome the server recorded",
                report
                    .origin()
                    .map_or_else(|| "none".to_string(), |o| format!("{o:?}"))
            ),
            other => println!("  recover {reference} -> {}", describe(other)),
        },
        Told::Applied { reference, times } => {
            println!("  the cluster applied {reference} {times} time(s) in all")
        }
        other => println!("  {other:?}"),
    }
}

/// The crash story over gRPC with two commands, within 90 seconds; `false` when a check
/// failed or it did not end in time.
fn crash_story() -> bool {
    let story = std::panic::catch_unwind(|| {
        bounded(Duration::from_secs(90), || {
            journal::sigkill_story::<Tokio>(Via::Grpc, &ChildProgram::this_program(), 2, &mut tell)
        })
    });
    match story {
        Ok(()) => {
            println!("  => every outcome recovered once, no command applied twice");
            true
        }
        Err(_) => {
            println!("  => the crash story failed");
            false
        }
    }
}

/// What a domain adds to a backup's archive on the example's cluster.
const ARCHIVE_DOMAIN_BYTES: u64 = 24 << 20;

fn main() -> ExitCode {
    // The client process of the crash story: this program, started again by it with the
    // variable set, journals its commands and waits to be killed.
    if std::env::var_os(journal::CHILD).is_some() {
        journal::child::<Tokio>();
        return ExitCode::FAILURE;
    }
    // RUST_LOG=debug (or nervix_protocol=trace, ...) shows what the engine and the driver do,
    // on standard error; unset, only errors.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let lb = match Loopback::start(LoopbackConfig {
        nodes: 3,
        tls: true,
        users: vec![("nervix".into(), "nervix".into())],
        // A backup of the tenant makes an archive of 24 MiB: long enough to watch.
        archive_domain_bytes: ARCHIVE_DOMAIN_BYTES,
        ..LoopbackConfig::default()
    }) {
        Ok(lb) => lb,
        Err(e) => {
            eprintln!("cannot start the loopback cluster: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("loopback cluster of three nodes on 127.0.0.1, TLS with a generated certificate:");
    for (i, (g, w)) in lb
        .grpc_endpoints()
        .iter()
        .zip(lb.console_endpoints())
        .enumerate()
    {
        println!("  node-{} grpc {g}  console {w}", i + 1);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut ok = true;
    for transport in [
        Transport::Grpc,
        Transport::WebSocket(nervix_tokio::WsAuth::Header),
    ] {
        println!("\nsession over {transport:?}:");
        let run = runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(60), session(&lb, transport)).await
        });
        match run {
            Ok(Ok(n)) => println!("  => {n} commands completed"),
            Ok(Err(e)) => {
                println!("  => error: {e}");
                ok = false;
            }
            Err(_) => {
                println!("  => timed out");
                ok = false;
            }
        }
    }
    let stats = lb.stats();
    println!(
        "\nserver: {} calls, {} frames received, {} commands",
        stats.calls.len(),
        stats.frames,
        stats.references.len()
    );
    drop(runtime);
    println!(
        "\na client process with a journal, killed with SIGKILL mid-command, and its successor:"
    );
    ok &= crash_story();
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
