//! Host names, certificates and the resolver over real sockets: each loopback node has a host
//! name of its own and a certificate for it, the names resolve to 127.0.0.1 through the
//! configuration's resolver, and a connection is verified against the endpoint's own name on
//! every connection, redirects included, for sessions and separate calls alike (T-2).

use nervix_loopback::{Loopback, LoopbackConfig, DOWNLOAD_PATH};
use nervix_protocol::calls::*;
use nervix_tokio::{
    Client, CommandResult, Config, ConnectError, Credentials, DriverEvent, HostsResolver, Resolve,
    TransferError, Transfers, Transport, WsAuth, DOWNLOAD_WS_PATH,
};
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const TRANSPORTS: [Transport; 2] = [Transport::Grpc, Transport::WebSocket(WsAuth::Header)];
const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn block<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test ends within its bound")
}

/// Two nodes over TLS, `node0.nervix.test` and `node1.nervix.test`, node 1's certificate
/// issued for `node1_cert`.
fn named(node1_cert: &str) -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 2,
        tls: true,
        node_hosts: vec!["node0.nervix.test".into(), "node1.nervix.test".into()],
        node_certificate_names: vec!["node0.nervix.test".into(), node1_cert.into()],
        ..LoopbackConfig::default()
    })
    .unwrap()
}

fn endpoints(lb: &Loopback, transport: Transport) -> &[String] {
    match transport {
        Transport::Grpc => lb.grpc_endpoints(),
        _ => lb.console_endpoints(),
    }
}

fn hosts() -> HostsResolver {
    HostsResolver::new()
        .with("node0.nervix.test", [LOCAL])
        .with("node1.nervix.test", [LOCAL])
}

/// A configuration whose seed is node 0, trusting every node's certificate, resolving with
/// `resolver`.
fn config(lb: &Loopback, transport: Transport, resolver: impl Resolve) -> Config {
    let mut c = Config::new(
        &[endpoints(lb, transport)[0].as_str()],
        Credentials::new("nervix", "nervix"),
        transport,
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(3), Duration::from_secs(1))
    .with_resolver(resolver);
    for der in lb.certificates_der() {
        c = c.with_root(der.clone());
    }
    c.client.backoff_initial = Duration::from_millis(20);
    c.client.backoff_max = Duration::from_millis(200);
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nervix-tokio-tls-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn completed(r: &CommandResult) -> bool {
    matches!(r, CommandResult::Completed(_))
}

async fn backed_up(c: &Client) -> nervix_protocol::client::CommandReport {
    let CommandResult::Completed(report) = c.execute("BACKUP DOMAIN tenant").await.unwrap() else {
        panic!("the backup did not complete");
    };
    report
}

#[test]
fn t_2_a_redirect_to_another_host_name_is_verified_against_that_name() {
    for transport in TRANSPORTS {
        let lb = named("node1.nervix.test");
        assert!(endpoints(&lb, transport)[1].starts_with("https://node1.nervix.test:"));
        let dir = scratch(&format!("redirect-{transport:?}"));
        block(async {
            let config = config(&lb, transport, hosts());
            let c = Client::connect(config.clone()).await.unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            let report = backed_up(&c).await;
            let events = c.events();
            // The leader moves to node 1: the session follows the redirect to its name.
            lb.set_leader(1);
            let mut done = false;
            for _ in 0..20 {
                if completed(&c.execute("CREATE RELAY a;").await.unwrap()) {
                    done = true;
                    break;
                }
            }
            assert!(done, "{transport:?}: the session reached node 1");
            let mut opened = Vec::new();
            while let Ok(e) = events.try_recv() {
                if let DriverEvent::SessionOpened { endpoint, .. } = e {
                    opened.push(endpoint.to_string());
                }
            }
            assert!(
                opened
                    .iter()
                    .any(|e| e.starts_with("https://node1.nervix.test:")),
                "{transport:?}: {opened:?}"
            );
            // A download from node 0 is redirected to node 1 and verified against its name.
            let transfers = Transfers::new(&config).unwrap();
            transfers
                .backup(&report, &dir.join("tenant.nxb"))
                .await
                .unwrap();
        });
        let path = match transport {
            Transport::Grpc => DOWNLOAD_PATH,
            _ => DOWNLOAD_WS_PATH,
        };
        let downloads = lb.calls_to(path);
        assert!(
            downloads.iter().any(|c| c.node == 1 && c.alpn.is_some()),
            "{transport:?}: {downloads:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn t_2_a_certificate_for_another_name_is_refused_on_a_redirect() {
    for transport in TRANSPORTS {
        // Node 1 presents a certificate issued for another name.
        let lb = named("elsewhere.nervix.test");
        let dir = scratch(&format!("wrong-name-{transport:?}"));
        block(async {
            let config = config(&lb, transport, hosts());
            let c = Client::connect(config.clone()).await.unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            let report = backed_up(&c).await;
            lb.set_leader(1);
            let r = c.execute("CREATE RELAY a;").await.unwrap();
            assert!(!completed(&r), "{transport:?}: {r:?}");
            let transfers = Transfers::new(&config).unwrap();
            let err = transfers
                .backup(&report, &dir.join("tenant.nxb"))
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    TransferError::GaveUp {
                        connect: Some(ConnectError::Tls(_)),
                        ..
                    }
                ),
                "{transport:?}: {err:?}"
            );
        });
        // Nothing reached node 1: its certificate was refused before any request.
        let calls = lb.stats().calls;
        assert!(
            calls.iter().all(|c| c.node == 0),
            "{transport:?}: {calls:?}"
        );
        assert!(!dir.join("tenant.nxb").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A resolver with fixed answers of whole socket addresses, ports included.
struct Answers(Vec<(String, Vec<SocketAddr>)>);

impl Resolve for Answers {
    fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        self.0
            .iter()
            .find(|(h, _)| h == host)
            .map(|(_, a)| a.clone())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "unknown host"))
    }
}

/// The socket address an endpoint's port has on 127.0.0.1.
fn local(endpoint: &str) -> SocketAddr {
    let port = endpoint
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    SocketAddr::new(LOCAL, port)
}

/// A port on 127.0.0.1 nothing listens on.
fn closed_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap();
    drop(l);
    a
}

#[test]
fn t_2_addresses_are_tried_in_the_order_of_the_answer_under_the_original_host_name() {
    for transport in TRANSPORTS {
        let lb = named("node1.nervix.test");
        let eps = endpoints(&lb, transport).to_vec();
        let (node0, node1) = (local(&eps[0]), local(&eps[1]));
        block(async {
            // A refused address first: the next one of the answer is tried.
            let answers = Answers(vec![(
                "node0.nervix.test".into(),
                vec![closed_port(), node0],
            )]);
            let c = Client::connect(config(&lb, transport, answers)).await;
            assert!(c.is_ok(), "{transport:?}: {c:?}");
            // Node 1's address first under node 0's name: it is tried first, and its
            // certificate (for node 1) is refused, verified against node 0's name.
            let answers = Answers(vec![("node0.nervix.test".into(), vec![node1, node0])]);
            let c = Client::connect(config(&lb, transport, answers)).await;
            assert!(
                c.is_err(),
                "{transport:?}: the first address is tried first"
            );
        });
        let calls = lb.stats().calls;
        assert!(
            calls.iter().all(|c| c.node == 0),
            "{transport:?}: {calls:?}"
        );
    }
}

/// A resolver that answers nothing for `hold`.
struct Silent(Duration);

impl Resolve for Silent {
    fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        std::thread::sleep(self.0);
        Err(io::Error::new(io::ErrorKind::TimedOut, "silent"))
    }
}

/// A resolver that fails every lookup with `kind`.
struct Failing(io::ErrorKind);

impl Resolve for Failing {
    fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        Err(io::Error::new(self.0, "the name server refused"))
    }
}

#[test]
fn t_2_a_silent_resolver_is_cut_by_the_connection_deadline() {
    for transport in TRANSPORTS {
        let lb = named("node1.nervix.test");
        block(async {
            let mut cfg = config(&lb, transport, Silent(Duration::from_secs(30)));
            cfg = cfg.with_timeouts(Duration::from_secs(1), Duration::from_millis(300));
            let began = Instant::now();
            let c = Client::connect(cfg.clone()).await;
            assert!(c.is_err(), "{transport:?}");
            assert!(
                began.elapsed() < Duration::from_secs(5),
                "{:?}",
                began.elapsed()
            );
            let mut call = RestoreCall::new(
                nervix_protocol::command::ExecutionReference::parse("restore-silent-dns").unwrap(),
                "RESTORE DOMAIN tenant AS tenant_copy",
                {
                    let mut d = ArchiveDigest::new();
                    d.update(&[0u8]);
                    d.finish()
                },
                TransferConfig::restore(),
            )
            .unwrap();
            let dir = scratch(&format!("silent-{transport:?}"));
            let file = dir.join("a.nxb");
            std::fs::write(&file, [0u8]).unwrap();
            let began = Instant::now();
            let err = Transfers::new(&cfg)
                .unwrap()
                .restore(&mut call, &file)
                .await
                .unwrap_err();
            // Five attempts of at most 300 ms each and the pauses between them.
            assert!(
                began.elapsed() < Duration::from_secs(8),
                "{:?}",
                began.elapsed()
            );
            assert!(
                matches!(
                    err,
                    TransferError::GaveUp {
                        // Cut by the deadline, or, once the silent resolver holds as many
                        // lookups as it may, refused at once without taking a thread.
                        connect: Some(
                            ConnectError::TimedOut
                                | ConnectError::LookupTimedOut { .. }
                                | ConnectError::LookupsBusy { .. }
                        ),
                        ..
                    }
                ),
                "{transport:?}: {err:?}"
            );
            let _ = std::fs::remove_dir_all(&dir);
        });
        assert!(lb.stats().calls.is_empty());
    }
}

#[test]
fn t_2_a_failed_lookup_keeps_its_typed_cause() {
    let lb = named("node1.nervix.test");
    block(async {
        let cfg = config(
            &lb,
            Transport::Grpc,
            Failing(io::ErrorKind::PermissionDenied),
        );
        let mut call = UploadCall::new(
            UploadSpec {
                domain: "tenant".into(),
                resource: "model".into(),
                identity: "upload-failed-dns".into(),
            },
            1,
            TransferConfig::upload(),
        )
        .unwrap();
        let dir = scratch("failed-dns");
        let file = dir.join("a.bin");
        std::fs::write(&file, [0u8]).unwrap();
        let err = Transfers::new(&cfg)
            .unwrap()
            .upload(&mut call, &file)
            .await
            .unwrap_err();
        let TransferError::GaveUp {
            connect: Some(ConnectError::Lookup { host, source }),
            ..
        } = err
        else {
            panic!("{err:?}");
        };
        assert_eq!(host, "node0.nervix.test");
        assert_eq!(source.kind(), io::ErrorKind::PermissionDenied);
        let _ = std::fs::remove_dir_all(&dir);
    });
}
