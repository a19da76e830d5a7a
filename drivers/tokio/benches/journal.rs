//! What the client's journal costs (issue 19, item 6), as ratios from one run.
//!
//! * `journal_commands/{grpc,websocket}/{plain,journaled}`: one command after another through
//!   the tokio driver against the loopback cluster on 127.0.0.1, without a journal and with one
//!   (`JournalDurability::None`): the journaled client writes each command's record before its
//!   frame goes and ends it when the outcome is handed over.
//! * `journal_records/command` and `journal_records/batch_64k`: the journal's own work, alone,
//!   for one command record (put, end) and for one 64 KiB batch record (put, handed, end), on
//!   files in the system's temporary directory.
//!
//! * `journal_batches/grpc/{plain,journaled}`: one producer batch of about 60 KiB after another,
//!   awaited to its outcome, through the tokio driver without a journal and with one (outbox
//!   mode).
//!
//! * `journal_batches_cpu/grpc/{plain,journaled}`: the same, timed by the CPU time of the
//!   thread that runs the client (its driver, engine and journal; the loopback cluster runs on
//!   threads of its own), since the wall time of one batch is mostly the cluster's own
//!   acknowledgement delay (its 50 ms tick).
//!
//! * `journal_batches_cpu_4/grpc/{plain,journaled}`: CPU time as above, with 4 batches (the
//!   loopback cluster's credit: a batch holds its credit until its outcome is read, P-4)
//!   submitted and then awaited each round: they share the cluster's acknowledgement tick, so
//!   what the client's thread does while it waits for one (its timers, its idle turns) is
//!   spread over 4 batches instead of charged to each.
//!
//! * `journal_batches_paired_4/grpc/{plain,journaled}`: CPU time of 4 batches at a time as
//!   above, with a plain and a journaled client open together and their rounds interleaved:
//!   each function times its own client's rounds, and a round of the other client, untimed,
//!   goes between two of them. Both are measured in the same state of the machine (its
//!   caches, its clock speed, what else runs), which the groups above, measured one after the
//!   other, are not; their ratio is the steadier one from run to run.
//!
//! Run with `cargo bench -p nervix-tokio --features journal --bench journal`.

mod common;
use common::thread_cpu;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::client::{CommandResult, RetainedCommand};
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::time::{Timestamp, UnixMillis};
use nervix_tokio::{Client, Config, Credentials, JournalConfig, Transport, WsAuth};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A scratch directory of this process for `name`, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "nervix-bench-journal-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn config(lb: &Loopback, transport: Transport) -> Config {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    Config::new(&seeds, Credentials::new("nervix", "nervix"), transport).expect("a config")
}

/// The client's runtime (one thread: its CPU time is the client's) and a one-node loopback
/// cluster on threads of its own.
fn rig() -> (tokio::runtime::Runtime, Loopback) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .expect("the loopback cluster");
    (rt, lb)
}

/// Names for the commands, never the same twice in one run.
static NEXT: AtomicU64 = AtomicU64::new(0);

async fn commands(client: &Client, iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let r = client
            .execute(&format!("CREATE RELAY bench_{n};"))
            .await
            .expect("the driver answers");
        assert!(
            matches!(r, CommandResult::Completed(_) | CommandResult::Failed(_)),
            "{r:?}"
        );
    }
    start.elapsed()
}

fn journal_commands(c: &mut Criterion) {
    let (rt, lb) = rig();
    let mut g = c.benchmark_group("journal_commands");
    g.throughput(Throughput::Elements(1));
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(5));
    for (name, transport) in [
        ("grpc", Transport::Grpc),
        ("websocket", Transport::WebSocket(WsAuth::Header)),
    ] {
        let dir = scratch(name);
        for journaled in [false, true] {
            let mut config = config(&lb, transport);
            if journaled {
                config = config.with_journal(JournalConfig::new(dir.clone(), "bench"));
            }
            let client = {
                let _in = rt.enter();
                Client::start(config).expect("a client")
            };
            rt.block_on(client.select_domain(Some("tenant")))
                .expect("a domain");
            let label = if journaled { "journaled" } else { "plain" };
            g.bench_function(format!("{name}/{label}"), |b| {
                b.iter_custom(|iters| rt.block_on(commands(&client, iters)))
            });
            rt.block_on(client.close(false)).expect("closed");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    g.finish();
    lb.stop();
}

fn journal_records(c: &mut Criterion) {
    use nervix_driver_support::journal::{
        BatchRecord, CommandRecord, DurableJournal, Entry, JournalConfig,
    };
    let dir = scratch("records");
    let config = JournalConfig::new(dir.clone(), "records");
    let (mut journal, _) = DurableJournal::open(&config, UnixMillis(0)).expect("a journal");
    let reference =
        ExecutionReference::parse("0190a5e0-0000-7000-8000-000000000001").expect("a reference");
    let command = Entry::Command(CommandRecord::from_retained(
        &RetainedCommand {
            reference,
            query: "CREATE RELAY bench_relay;".into(),
            domain: Some("tenant".into()),
            position: None,
            preview: None,
            created: Timestamp::ZERO,
        },
        UnixMillis(0),
    ));
    let batch = Entry::Batch(BatchRecord {
        domain: "tenant".into(),
        ingestor: "orders".into(),
        batch: vec![0x5a; 64 * 1024].into(),
        created_wall: UnixMillis(0),
    });
    let mut now = 0u64;
    let mut g = c.benchmark_group("journal_records");
    g.throughput(Throughput::Elements(1));
    g.bench_function("command", |b| {
        b.iter(|| {
            now += 1;
            let key = journal.put(&command, now).expect("room");
            journal.end(key, now).expect("ended");
        })
    });
    g.throughput(Throughput::Bytes(64 * 1024));
    g.bench_function("batch_64k", |b| {
        b.iter(|| {
            now += 1;
            let key = journal.put(&batch, now).expect("room");
            journal.handed(key, now).expect("handed");
            journal.end(key, now).expect("ended");
        })
    });
    g.finish();
    drop(journal);
    let _ = std::fs::remove_dir_all(&dir);
}

/// How a batch group is timed.
#[derive(Clone, Copy)]
enum Clock {
    /// Wall time.
    Wall,
    /// The CPU time of the thread running the client.
    Cpu,
}

/// `iters` batches, `depth` submitted one after another and then awaited to their outcomes,
/// each round; the time they took by `clock`.
async fn batches(
    producer: &nervix_tokio::Producer,
    batch: &arrow_array::RecordBatch,
    iters: u64,
    clock: Clock,
    depth: u64,
) -> Duration {
    let start = Instant::now();
    let cpu = thread_cpu();
    let mut left = iters;
    while left > 0 {
        let round = left.min(depth);
        left -= round;
        let mut pending = Vec::with_capacity(round as usize);
        for _ in 0..round {
            pending.push(
                producer
                    .submit(batch.clone())
                    .await
                    .expect("the batch is taken"),
            );
        }
        for p in pending {
            let outcome = p.await.expect("an outcome");
            assert_eq!(outcome, nervix_protocol::client::BatchOutcome::Completed);
        }
    }
    match clock {
        Clock::Wall => start.elapsed(),
        Clock::Cpu => thread_cpu().saturating_sub(cpu),
    }
}

/// A client of the loopback cluster over gRPC, with a journal in `journal`'s slot directory
/// when given, and its producer of the cluster's ingestor.
fn open_producer(
    rt: &tokio::runtime::Runtime,
    lb: &Loopback,
    journal: Option<&std::path::Path>,
) -> (Client, nervix_tokio::Producer) {
    use nervix_harness::cluster::{ingestor_fields, INGESTOR};
    use nervix_protocol::client::ProducerSpec;
    let mut config = config(lb, Transport::Grpc);
    if let Some(dir) = journal {
        config = config.with_journal(JournalConfig::new(dir, "bench"));
    }
    let client = {
        let _in = rt.enter();
        Client::start(config).expect("a client")
    };
    let producer = rt
        .block_on(client.producer(ProducerSpec::new("tenant", INGESTOR, ingestor_fields())))
        .expect("a producer");
    (client, producer)
}

/// The batch every batch group submits: 64 rows (the ingestor's most) of about 60 KiB, and
/// the length of its IPC stream.
fn bench_batch(producer: &nervix_tokio::Producer) -> (arrow_array::RecordBatch, u64) {
    let mut b = producer.batch_builder();
    let ids: Vec<u64> = (0..64).collect();
    let name = "n".repeat(900);
    let names: Vec<Option<&str>> = ids.iter().map(|_| Some(name.as_str())).collect();
    b.column("id", &ids).expect("ids");
    b.nullable_column("name", &names).expect("names");
    let batch = b.finish().expect("a batch");
    let bytes = nervix_protocol::arrow::encode(&batch)
        .expect("encoded")
        .len() as u64;
    (batch, bytes)
}

/// `journal_batches/grpc/{plain,journaled}`: one batch of about 60 KiB (64 rows, the
/// ingestor's most) after another through a producer of the tokio driver, awaited to its
/// outcome, without a journal and with one in outbox mode (`JournalDurability::None`: each
/// batch's record is written before the submission returns, marked handed before its frame
/// goes and ended at its outcome).
fn journal_batches(c: &mut Criterion) {
    let (rt, lb) = rig();
    let dir = scratch("batches");
    // One at a time, a batch waits for the cluster's acknowledgement tick (50 ms), and the
    // CPU time per batch includes what the client's thread does meanwhile; 4 at a time (the
    // cluster's credit) share a tick, so more of the CPU time is the batches' own.
    for (group, clock, depth) in [
        ("journal_batches", Clock::Wall, 1),
        ("journal_batches_cpu", Clock::Cpu, 1),
        ("journal_batches_cpu_4", Clock::Cpu, 4),
    ] {
        let mut g = c.benchmark_group(group);
        g.sample_size(20);
        g.warm_up_time(Duration::from_secs(2));
        g.measurement_time(Duration::from_secs(5));
        for journaled in [false, true] {
            let (client, producer) = open_producer(&rt, &lb, journaled.then_some(dir.as_path()));
            let (batch, bytes) = bench_batch(&producer);
            g.throughput(Throughput::Bytes(bytes));
            // A fresh slot's first segments are written into blocks the file system has not
            // handed out yet (the first write of each page faults); from the third segment on,
            // the journal writes over a trimmed one. The groups measure that steady state: two
            // segments' worth of batches go first, untimed, once the benchmark is chosen.
            let mut cold = journaled;
            let label = if journaled { "journaled" } else { "plain" };
            g.bench_function(format!("grpc/{label}"), |bench| {
                if std::mem::take(&mut cold) {
                    rt.block_on(batches(
                        &producer,
                        &batch,
                        warm_up(&dir, bytes),
                        Clock::Wall,
                        4,
                    ));
                }
                bench.iter_custom(|iters| {
                    rt.block_on(batches(&producer, &batch, iters, clock, depth))
                })
            });
            drop(producer);
            rt.block_on(client.close(false)).expect("closed");
        }
        g.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
    lb.stop();
}

/// How many batches of `bytes` fill a fresh slot's first two segments, and a few more.
fn warm_up(dir: &std::path::Path, bytes: u64) -> u64 {
    2 * JournalConfig::new(dir, "bench").segment_bytes / bytes + 16
}

/// The CPU time of the client's thread for `iters` batches of `timed`, 4 at a time, with a
/// round of `other`, untimed, before each round.
async fn paired(
    timed: &nervix_tokio::Producer,
    other: &nervix_tokio::Producer,
    batch: &arrow_array::RecordBatch,
    iters: u64,
) -> Duration {
    let mut spent = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let round = left.min(4);
        left -= round;
        batches(other, batch, round, Clock::Cpu, 4).await;
        spent += batches(timed, batch, round, Clock::Cpu, 4).await;
    }
    spent
}

/// `journal_batches_paired_4/grpc/{plain,journaled}` (see the module's docs).
fn journal_batches_paired(c: &mut Criterion) {
    let (rt, lb) = rig();
    let dir = scratch("paired");
    let (plain_client, plain) = open_producer(&rt, &lb, None);
    let (journaled_client, journaled) = open_producer(&rt, &lb, Some(dir.as_path()));
    let (batch, bytes) = bench_batch(&plain);
    let mut g = c.benchmark_group("journal_batches_paired_4");
    g.sample_size(30);
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Bytes(bytes));
    // Past the fresh slot's first two segments, as in `journal_batches`.
    let mut cold = true;
    let mut warm = || {
        if std::mem::take(&mut cold) {
            rt.block_on(batches(
                &journaled,
                &batch,
                warm_up(&dir, bytes),
                Clock::Wall,
                4,
            ));
        }
    };
    g.bench_function("grpc/plain", |bench| {
        warm();
        bench.iter_custom(|iters| rt.block_on(paired(&plain, &journaled, &batch, iters)))
    });
    g.bench_function("grpc/journaled", |bench| {
        warm();
        bench.iter_custom(|iters| rt.block_on(paired(&journaled, &plain, &batch, iters)))
    });
    g.finish();
    drop((plain, journaled));
    rt.block_on(plain_client.close(false)).expect("closed");
    rt.block_on(journaled_client.close(false)).expect("closed");
    let _ = std::fs::remove_dir_all(&dir);
    lb.stop();
}

criterion_group!(
    benches,
    journal_commands,
    journal_records,
    journal_batches,
    journal_batches_paired
);
criterion_main!(benches);
