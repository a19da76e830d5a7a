//! `just run`: the loopback cluster on 127.0.0.1 (three nodes, TLS), and an example session
//! over the tokio driver: commands, a subscription whose rows it prints, the tenant's clock,
//! a transaction, and a leader change midway that the subscription and the clock survive.

use futures_util::StreamExt;
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::domain_clock::ClockState;
use nervix_protocol::rows::CheckedBatch;
use nervix_tokio::{
    Client, ClockEvent, ClockFollow, CommandResult, Config, Credentials, DriverEvent, RunResult,
    SessionLoss, Subscription, SubscriptionEvent, Transport,
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
