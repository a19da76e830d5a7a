//! A short GAR session against a server given on the command line:
//!
//! ```text
//! cargo run -p gar-driver --example gar-demo -- ws://127.0.0.1:1234/gar [class] [topic]
//! ```
//!
//! It connects (a token, if the server wants one, comes from the `GAR_TOKEN` environment
//! variable and is never printed), subscribes to the records of `class` (default `Stock`),
//! publishes one record by name on `topic` (default `demo-topic`), waits on an echo barrier, tries a compare-exchange on it,
//! prints the events of about two seconds and logs off. `RUST_LOG=debug` shows the driver's
//! own log lines.

use std::time::{Duration, Instant};

use gar_driver::tokio::Client;
use gar_driver::{Config, Event, Subscribe};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let mut args = std::env::args().skip(1);
    let Some(url) = args.next() else {
        eprintln!("usage: gar-demo ws://host:port/path [class] [topic]");
        std::process::exit(2);
    };
    let class = args.next().unwrap_or_else(|| "Stock".into());
    let topic = args.next().unwrap_or_else(|| "demo-topic".into());
    let mut config = Config::new(url);
    config.token = std::env::var("GAR_TOKEN").ok();
    config.engine.user = "demo".into();
    config.engine.application = "gar-demo".into();
    config.engine.pid = u64::from(std::process::id());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(session(config, class, topic))
}

async fn session(
    config: Config,
    class: String,
    topic: String,
) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect(config).await?;
    client
        .subscribe(&Subscribe {
            name: "demo".into(),
            streaming: true,
            class_list: vec![class.clone()],
            ..Subscribe::default()
        })
        .await?;
    let id = client
        .publish_by_name("demo-key", &class, &topic, &json!(1))
        .await?;
    client.echo_barrier().await?;
    println!("published demo-key/{topic} = 1 in class {class}; the server has it");
    let msg_ref = client.compare_exchange(id, &json!(1), &json!(2)).await?;
    println!("compare-exchange 1 -> 2 sent (msg_ref {msg_ref})");
    let until = Instant::now() + Duration::from_secs(2);
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match client.next_event_within(left).await {
            Ok(Some(e)) => {
                print_event(&client, &e);
                if matches!(e, Event::Stopped { .. }) {
                    break;
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
    client.logoff().await;
    let s = client.stats();
    println!(
        "stopped: {:?}; {} messages in ({} bytes), {} out ({} bytes), {} heartbeats sent",
        client.stop_reason(),
        s.messages_in,
        s.bytes_in,
        s.messages_out,
        s.bytes_out,
        s.heartbeats_sent
    );
    Ok(())
}

fn print_event(client: &Client, e: &Event) {
    match e {
        Event::Record {
            record_id,
            value: Some(v),
        } => println!(
            "record {} / {} = {v}",
            client.server_key(record_id.key_id).unwrap_or_default(),
            client.server_topic(record_id.topic_id).unwrap_or_default()
        ),
        other => println!("{other:?}"),
    }
}
