//! The tokio driver against loopback faults that need a server of a particular shape: a node
//! reachable only over plain http behind an https cluster, and a node that reads slowly.
//! Every test is bounded.

use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_tokio::{
    Client, CommandResult, Config, Credentials, DriverEvent, End, Transport, WsAuth,
};
use std::future::Future;
use std::time::Duration;

const TRANSPORTS: [Transport; 2] = [Transport::Grpc, Transport::WebSocket(WsAuth::Header)];

fn block<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test ends within its bound")
}

fn endpoints(lb: &Loopback, transport: Transport) -> &[String] {
    match transport {
        Transport::Grpc => lb.grpc_endpoints(),
        _ => lb.console_endpoints(),
    }
}

fn completed(r: &CommandResult) -> bool {
    matches!(r, CommandResult::Completed(_))
}

#[test]
fn t_2_a_client_started_over_https_never_follows_a_redirect_to_http() {
    for transport in TRANSPORTS {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 3,
            tls: true,
            plain_nodes: vec![1],
            ..LoopbackConfig::default()
        })
        .unwrap();
        assert!(endpoints(&lb, transport)[0].starts_with("https://"));
        assert!(endpoints(&lb, transport)[1].starts_with("http://"));
        block(async {
            let seed = endpoints(&lb, transport)[0].clone();
            let mut cfg = Config::new(
                &[seed.as_str()],
                Credentials::new("nervix", "nervix"),
                transport,
            )
            .unwrap()
            .with_root(lb.certificate_der().unwrap().to_vec())
            .with_timeouts(Duration::from_secs(2), Duration::from_secs(1));
            cfg.client.backoff_initial = Duration::from_millis(20);
            cfg.client.backoff_max = Duration::from_millis(200);
            let c = Client::connect(cfg).await.unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            assert!(completed(&c.execute("CREATE RELAY a;").await.unwrap()));
            let events = c.events();
            // The leader moves to the node served over http: every redirect names it.
            lb.set_leader(1);
            let r = c.execute("CREATE RELAY b;").await.unwrap();
            assert!(!completed(&r), "{transport:?}: {r:?}");
            while let Ok(e) = events.try_recv() {
                if let DriverEvent::SessionOpened { endpoint, .. } = e {
                    assert!(endpoint.is_https(), "{transport:?}: {endpoint}");
                }
            }
            // Back on an https leader, the client goes on.
            lb.set_leader(0);
            assert!(completed(&c.execute("CREATE RELAY c;").await.unwrap()));
        });
        let stats = lb.stats();
        assert!(
            stats.calls.iter().all(|c| c.node != 1),
            "{transport:?}: no call reached the http node"
        );
        assert!(
            stats.calls.iter().all(|c| c.alpn.is_some()),
            "{transport:?}: all TLS"
        );
    }
}

#[test]
fn t_8_a_slow_reader_ends_the_session_at_the_write_deadline_and_nothing_hangs() {
    for transport in TRANSPORTS {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            ..LoopbackConfig::default()
        })
        .unwrap();
        block(async {
            let seeds: Vec<&str> = endpoints(&lb, transport)
                .iter()
                .map(String::as_str)
                .collect();
            let mut cfg = Config::new(&seeds, Credentials::new("nervix", "nervix"), transport)
                .unwrap()
                .with_timeouts(Duration::from_secs(4), Duration::from_secs(1));
            cfg.write_timeout = Duration::from_millis(300);
            cfg.client.backoff_initial = Duration::from_millis(20);
            cfg.client.backoff_max = Duration::from_millis(200);
            let c = Client::connect(cfg).await.unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            let events = c.events();
            lb.slow_reader(0, Some(Duration::from_secs(3)));
            // More than the flow-control windows and socket buffers take while nobody reads.
            let big = format!("CREATE RELAY big SCHEMA '{}';", "x".repeat(1 << 20));
            let mut pending = Vec::new();
            for _ in 0..24 {
                pending.push(c.submit(&big).await.unwrap());
            }
            let started = tokio::time::Instant::now();
            for p in pending {
                let r = p.await.unwrap();
                assert!(!completed(&r), "{transport:?}: {r:?}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{transport:?}: every command ended by its deadline"
            );
            let mut write_failed = false;
            while let Ok(e) = events.try_recv() {
                if let DriverEvent::TransportEnded { end, .. } = e {
                    write_failed |= match transport {
                        // The console's writer tells the deadline itself.
                        Transport::WebSocket(_) => {
                            end == End::Transport("write deadline passed".into())
                        }
                        // The call is reset when its send window stays shut past the deadline.
                        _ => matches!(end, End::Transport(_)),
                    };
                }
            }
            assert!(
                write_failed,
                "{transport:?}: the write deadline ended a session"
            );
            lb.slow_reader(0, None);
            assert!(completed(&c.execute("CREATE RELAY small;").await.unwrap()));
        });
    }
}
