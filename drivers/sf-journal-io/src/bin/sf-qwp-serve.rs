//! Serves the loopback QWP WebSocket server on 127.0.0.1 for a bounded time, printing its
//! address and, at the end, what each connection sent.
//!
//! `sf-qwp-serve [--seed N] [--secs N] [--drop-after N] [--no-ack 1]`: `--drop-after` ends the
//! first connection after that many frames (the client then reconnects and replays);
//! `--no-ack 1` never acknowledges, so every frame a client sends stays unacknowledged.

use std::time::Duration;

use sf_journal_io::loopback::{Conn, LoopbackServer, ServerConfig};

fn main() {
    let mut config = ServerConfig::default();
    let mut secs = 60u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next().and_then(|v| v.parse::<u64>().ok());
        match (a.as_str(), value) {
            ("--seed", Some(v)) => config.seed = v,
            ("--secs", Some(v)) => secs = v,
            ("--drop-after", Some(v)) => {
                config.script = vec![Conn::DropAfter(usize::try_from(v).unwrap_or(usize::MAX))];
            }
            ("--no-ack", Some(1)) => {
                config.ack_one_in = 0;
                config.idle_ack = Duration::MAX;
            }
            _ => {
                eprintln!(
                    "usage: sf-qwp-serve [--seed N] [--secs N] [--drop-after N] [--no-ack 1]"
                );
                std::process::exit(2);
            }
        }
    }
    config.max_connection_life = Duration::from_secs(secs);
    let server = match LoopbackServer::start(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot listen on 127.0.0.1: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "listening on ws://{}/api/v4/write for {secs} s",
        server.addr()
    );
    std::thread::sleep(Duration::from_secs(secs));
    for (i, c) in server.connections().iter().enumerate() {
        println!(
            "connection {i}: HTTP {}, {} frames received, {} statuses sent",
            c.status,
            c.messages().len(),
            c.sent.len()
        );
    }
}
