//! Serves the GAR server model on 127.0.0.1 with the sample schema and prints its URL.
//!
//! Usage: `gar-serve [PORT] [TOKEN]`. Runs until killed.

use std::time::Duration;

use gar_sim::{sample_config, Loopback, LoopbackOptions};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let port = args.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let token = args.next();
    let server = Loopback::start(LoopbackOptions {
        config: sample_config(),
        port,
        token: token.clone(),
        ..LoopbackOptions::default()
    })?;
    match token {
        Some(t) => println!("{}?token={t}", server.url()),
        None => println!("{}", server.url()),
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
