//! `just run`: the loopback cluster on 127.0.0.1 (three nodes, TLS), and an example session
//! over the tokio driver: commands, a transaction, and a leader change midway.

use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_tokio::{Client, CommandResult, Config, Credentials, DriverEvent, RunResult, Transport};
use std::process::ExitCode;
use std::time::Duration;

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

async fn session(lb: &Loopback, transport: Transport) -> Result<usize, nervix_tokio::Error> {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let config = Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)?
        .with_root(lb.certificate_der().unwrap_or_default().to_vec());
    let client = Client::connect(config).await?;
    let mut events = client.events();
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
    let r = client.execute("SHOW DOMAINS;").await?;
    show("SHOW DOMAINS", &r, &mut completed);
    while let Ok(e) = events.try_recv() {
        match e {
            DriverEvent::SessionOpened { endpoint, .. } => {
                println!("  session opened at {endpoint}")
            }
            DriverEvent::SessionLost { loss, .. } => println!("  session lost: {loss}"),
            _ => {}
        }
    }
    client.close(false).await?;
    Ok(completed)
}

fn main() -> ExitCode {
    let lb = match Loopback::start(LoopbackConfig {
        nodes: 3,
        tls: true,
        users: vec![("nervix".into(), "nervix".into())],
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
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
