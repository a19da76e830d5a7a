//! `nervix-sim`: with no argument, a client session against the simulated cluster in process;
//! with `serve`, the simulated cluster served over real sockets on 127.0.0.1.
//!
//! `nervix-sim serve [--nodes 1|3] [--tls] [--endpoints FILE]` prints each node's gRPC and
//! console endpoints, one line a node (and, with `--tls`, writes the generated certificate to
//! `nervix-loopback.der` in the current directory) and serves until interrupted. With
//! `--endpoints`, the same lines are written to FILE once every port is bound, whole: they go
//! to a file beside it first and are renamed into place, so a script waits for FILE to exist
//! and reads it, with no sleeping until a port binds. Credentials: `nervix` / `nervix`. On stdin,
//! `leader N` moves the leadership, `kill N` and `revive N` stop and start node N, `cut N`
//! cuts its streams.
//!
//! Without an argument:
//! A `Client` (the sans-IO session core) talks to a three-node `SimCluster` in real frames over
//! a simulated network with a virtual clock. The run commits a transaction, reads, and survives
//! a leader change: the session ends with a redirect, the client reconnects to the new leader,
//! attaches its transaction again and repeats what was outstanding under the same references.
//! Meanwhile the client follows the tenant's paced clock and reads a subscription's rows; the
//! leader change interrupts both, and both are restored on the new session (the subscription
//! as a new generation, with the gap reported). Then the tenant is backed up, its archive
//! downloaded and verified against the backup's summary, and restored as a copy of the domain.
//! At the end the run is checked against what a client must never promise.

use nervix_harness::sim::{SimConfig, Simulation};
use nervix_harness::transfers;
use nervix_protocol::calls::{
    BackupDownload, RestoreCall, RestoreOutcome, RestoreStep, TransferConfig,
};
use nervix_protocol::client::{CommandResult, Routed};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    // RUST_LOG=debug (or nervix_protocol=trace, ...) shows what the engine and the driver do,
    // on standard error; unset, only errors.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        return serve(&args[1..]);
    }
    let seed = std::env::var("NERVIX_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let mut sim = Simulation::new(SimConfig::calm(seed));
    println!("nervix-sim: one client, a simulated cluster of three nodes, seed {seed}\n");
    let step = |sim: &mut Simulation| sim.run_for(Duration::from_millis(500));

    let _ = sim.client().select_domain(Some("tenant"));
    sim.execute("CREATE RELAY orders SCHEMA orders UNBRANCHED;", false);
    step(&mut sim);
    // The tenant's paced clock, and a subscription whose rows arrive while the rest runs.
    sim.statement("ATTACH DOMAIN CLOCK");
    sim.statement("CREATE SUBSCRIPTION live FROM orders");
    step(&mut sim);
    sim.read();
    step(&mut sim);
    sim.execute("BEGIN;", false);
    step(&mut sim);
    sim.execute("CREATE RELAY audit;", true);
    step(&mut sim);
    sim.execute("CREATE RELAY billing;", true);
    step(&mut sim);
    // The leader moves while an append is outstanding.
    sim.execute("CREATE RELAY ledger;", true);
    let next = (sim.cluster().leader() + 1) % 3;
    sim.change_leader(next);
    sim.run_for(Duration::from_secs(5));
    sim.execute("COMMIT;", false);
    sim.run_for(Duration::from_secs(5));
    sim.execute("SHOW DOMAINS;", false);
    sim.run_for(Duration::from_secs(2));
    sim.statement("DELETE SUBSCRIPTION live");
    sim.statement("DETACH DOMAIN CLOCK");
    sim.run_for(Duration::from_secs(1));
    // The separate calls: the domain backed up, its archive downloaded and verified, restored.
    let transfers = backup_download_restore(&mut sim);

    for line in sim.client_trace() {
        println!("{line}");
    }
    println!("\n{}", sim.summary());
    let transfers = match transfers {
        Ok(lines) => lines,
        Err(e) => {
            eprintln!("nervix-sim: {e}");
            return ExitCode::FAILURE;
        }
    };
    for line in transfers {
        println!("{line}");
    }
    match sim.check() {
        Ok(()) => {
            println!("every request ended exactly once; every reported outcome matches the cluster's record");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nervix-sim: seed {seed} broke an invariant:\n{e}");
            ExitCode::FAILURE
        }
    }
}

/// BACKUP of the tenant through the client, the download of its archive checked by the
/// machine against the summary, and a RESTORE of those bytes as a copy of the domain: one line
/// each, or why the run stopped.
fn backup_download_restore(sim: &mut Simulation) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    let Some(Routed::Command(h)) = sim.statement("BACKUP DOMAIN tenant") else {
        return Err("BACKUP was not run as a command".into());
    };
    sim.run_for(Duration::from_secs(2));
    let Some(CommandResult::Completed(report)) = sim.command_result(h) else {
        return Err(format!("BACKUP ended as {:?}", sim.command_result(h)));
    };
    let mut download = BackupDownload::from_report(report, TransferConfig::download())
        .map_err(|e| format!("BACKUP reported no archive: {e}"))?;
    let expected = download.expected();
    lines.push(format!(
        "backup   {}: an archive of {} bytes, BLAKE3 {}",
        download.reference(),
        expected.total_bytes,
        hex(&expected.digest[..8])
    ));

    let now = sim.now();
    let leader = sim.cluster().endpoints()[sim.cluster().leader()].clone();
    let (archive, step) = transfers::download(sim.cluster_mut(), now, &leader, &mut download, 3);
    let Some(archive) = archive else {
        return Err(format!("the download ended as {step:?}"));
    };
    lines.push(format!(
        "download {} bytes in {} attempt(s), size and digest verified against the summary",
        archive.len(),
        download.attempts()
    ));

    let Some(Routed::Restore {
        reference,
        statement,
    }) = sim.statement("RESTORE DOMAIN tenant AS tenant_copy")
    else {
        return Err("RESTORE was not routed as a restore stream".into());
    };
    let mut restore = RestoreCall::new(reference, &statement, expected, TransferConfig::restore())
        .map_err(|e| format!("the restore was refused: {e}"))?;
    let now = sim.now();
    match transfers::restore(sim.cluster_mut(), now, &leader, &mut restore, &archive, 3) {
        RestoreStep::Ended(RestoreOutcome::Completed {
            summary: Some(s), ..
        }) => {
            let domains: Vec<String> = s
                .domains
                .iter()
                .map(|d| format!("{} as {}", d.source, d.domain))
                .collect();
            lines.push(format!(
                "restore  {}: {:?} of {} bytes, {} step(s), {}",
                restore.reference(),
                s.mode,
                s.archive.total_bytes,
                s.steps.len(),
                domains.join(", ")
            ));
        }
        other => return Err(format!("the restore ended as {other:?}")),
    }
    Ok(lines)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn serve(args: &[String]) -> ExitCode {
    let mut config = nervix_loopback::LoopbackConfig::default();
    let mut endpoints_file: Option<std::path::PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--tls" => config.tls = true,
            "--endpoints" => match it.next() {
                Some(f) => endpoints_file = Some(f.into()),
                None => {
                    eprintln!("nervix-sim serve: --endpoints takes a file name");
                    return ExitCode::FAILURE;
                }
            },
            "--nodes" => match it.next().and_then(|n| n.parse().ok()) {
                Some(n @ (1 | 3)) => config.nodes = n,
                _ => {
                    eprintln!("nervix-sim serve: --nodes takes 1 or 3");
                    return ExitCode::FAILURE;
                }
            },
            other => {
                eprintln!("nervix-sim serve: unknown argument {other}");
                return ExitCode::FAILURE;
            }
        }
    }
    let lb = match nervix_loopback::Loopback::start(config) {
        Ok(lb) => lb,
        Err(e) => {
            eprintln!("nervix-sim serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    let lines: Vec<String> = lb
        .grpc_endpoints()
        .iter()
        .zip(lb.console_endpoints())
        .enumerate()
        .map(|(i, (g, w))| format!("node-{} grpc {g} console {w}console/ws", i + 1))
        .collect();
    for line in &lines {
        println!("{line}");
    }
    if let Some(file) = endpoints_file {
        let mut part = file.clone().into_os_string();
        part.push(".part");
        let written = std::fs::write(&part, lines.join("\n") + "\n")
            .and_then(|()| std::fs::rename(&part, &file));
        if let Err(e) = written {
            eprintln!("nervix-sim serve: cannot write {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(der) = lb.certificate_der() {
        if let Err(e) = std::fs::write("nervix-loopback.der", der) {
            eprintln!("nervix-sim serve: cannot write the certificate: {e}");
            return ExitCode::FAILURE;
        }
        println!("certificate (DER): nervix-loopback.der");
    }
    println!("credentials nervix / nervix; commands on stdin: leader N, kill N, revive N, cut N");
    let nodes = lb.grpc_endpoints().len();
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        let mut words = line.split_whitespace();
        let (Some(cmd), Some(n)) = (
            words.next(),
            words.next().and_then(|n| n.parse::<usize>().ok()),
        ) else {
            continue;
        };
        if n == 0 || n > nodes {
            println!("no node {n}");
            continue;
        }
        match cmd {
            "leader" => lb.set_leader(n - 1),
            "kill" => lb.kill(n - 1),
            "revive" => lb.revive(n - 1),
            "cut" => lb.cut_streams(n - 1),
            _ => println!("unknown command {cmd}"),
        }
    }
    // Stdin closed: keep serving until the process is stopped.
    loop {
        std::thread::park();
    }
}
