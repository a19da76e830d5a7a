//! Host names, certificates and the resolver over real sockets, blocking driver: each loopback
//! node has a host name of its own and a certificate for it, the names resolve to 127.0.0.1
//! through the configuration's resolver, and every connection is verified against the
//! endpoint's own name, redirects included, for sessions and console calls alike (T-2).

use nervix_blocking::{
    Client, CommandResult, Config, Credentials, HostsResolver, Resolve, TransferError, Transfers,
    DOWNLOAD_WS_PATH,
};
use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_protocol::calls::*;
use nervix_protocol::client::CommandReport;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    nervix_loopback::bounded(Duration::from_secs(60), f)
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

fn hosts() -> HostsResolver {
    HostsResolver::new()
        .with("node0.nervix.test", [LOCAL])
        .with("node1.nervix.test", [LOCAL])
}

fn config(lb: &Loopback, resolver: impl Resolve) -> Config {
    let mut c = Config::new(
        &[lb.console_endpoints()[0].as_str()],
        Credentials::new("nervix", "nervix"),
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
    let dir =
        std::env::temp_dir().join(format!("nervix-blocking-tls-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn completed(r: &CommandResult) -> bool {
    matches!(r, CommandResult::Completed(_))
}

fn backed_up(c: &Client) -> CommandReport {
    let CommandResult::Completed(report) = c.execute("BACKUP DOMAIN tenant").unwrap() else {
        panic!("the backup did not complete");
    };
    report
}

#[test]
fn t_2_a_redirect_to_another_host_name_is_verified_against_that_name_blocking() {
    let lb = named("node1.nervix.test");
    assert!(lb.console_endpoints()[1].starts_with("https://node1.nervix.test:"));
    let dir = scratch("redirect");
    let config = config(&lb, hosts());
    let d = dir.clone();
    let lb = bounded(move || {
        let c = Client::connect(config.clone()).unwrap();
        let report = backed_up(&c);
        lb.set_leader(1);
        let done = (0..20).any(|_| completed(&c.execute("CREATE RELAY a;").unwrap()));
        assert!(done, "the session reached node 1");
        Transfers::new(&config)
            .unwrap()
            .backup(&report, &d.join("tenant.nxb"))
            .unwrap();
        lb
    });
    let calls = lb.stats().calls;
    assert!(
        calls
            .iter()
            .any(|c| c.node == 1 && c.path == DOWNLOAD_WS_PATH && c.alpn.is_some()),
        "{calls:?}"
    );
    assert!(
        calls
            .iter()
            .any(|c| c.node == 1 && c.path == "/console/ws" && c.accepted),
        "{calls:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_2_a_certificate_for_another_name_is_refused_on_a_redirect_blocking() {
    let lb = named("elsewhere.nervix.test");
    let dir = scratch("wrong-name");
    let config = config(&lb, hosts());
    let d = dir.clone();
    let lb = bounded(move || {
        let c = Client::connect(config.clone()).unwrap();
        let report = backed_up(&c);
        lb.set_leader(1);
        let r = c.execute("CREATE RELAY a;");
        assert!(!matches!(r, Ok(CommandResult::Completed(_))), "{r:?}");
        let err = Transfers::new(&config)
            .unwrap()
            .backup(&report, &d.join("tenant.nxb"))
            .unwrap_err();
        assert!(
            matches!(&err, TransferError::GaveUp { last, .. } if last.contains("TLS")),
            "{err:?}"
        );
        lb
    });
    let calls = lb.stats().calls;
    assert!(calls.iter().all(|c| c.node == 0), "{calls:?}");
    assert!(!dir.join("tenant.nxb").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A resolver with fixed answers of whole socket addresses, ports included.
struct Answers(Vec<SocketAddr>);

impl Resolve for Answers {
    fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        if host == "node0.nervix.test" {
            Ok(self.0.clone())
        } else {
            Err(io::Error::new(io::ErrorKind::NotFound, "unknown host"))
        }
    }
}

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

fn closed_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap();
    drop(l);
    a
}

#[test]
fn t_2_addresses_are_tried_in_the_order_of_the_answer_under_the_original_host_name_blocking() {
    let lb = named("node1.nervix.test");
    let eps = lb.console_endpoints().to_vec();
    let (node0, node1) = (local(&eps[0]), local(&eps[1]));
    let first = config(&lb, Answers(vec![closed_port(), node0]));
    let second = config(&lb, Answers(vec![node1, node0]));
    let (a, b) = bounded(move || {
        (
            Client::connect(first).map(|_| ()),
            Client::connect(second).map(|_| ()),
        )
    });
    assert!(a.is_ok(), "the next address of the answer is tried: {a:?}");
    assert!(
        b.is_err(),
        "the first address is tried first, verified as node 0"
    );
    let calls = lb.stats().calls;
    assert!(calls.iter().all(|c| c.node == 0), "{calls:?}");
}

struct Silent(Duration);

impl Resolve for Silent {
    fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        std::thread::sleep(self.0);
        Err(io::Error::new(io::ErrorKind::TimedOut, "silent"))
    }
}

struct Failing(io::ErrorKind);

impl Resolve for Failing {
    fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        Err(io::Error::new(self.0, "the name server refused"))
    }
}

fn one_byte_restore(dir: &std::path::Path) -> (RestoreCall, PathBuf) {
    let file = dir.join("a.nxb");
    std::fs::write(&file, [0u8]).unwrap();
    let mut d = ArchiveDigest::new();
    d.update(&[0u8]);
    let call = RestoreCall::new(
        nervix_protocol::command::ExecutionReference::parse("restore-dns-1").unwrap(),
        "RESTORE DOMAIN tenant AS tenant_copy",
        d.finish(),
        TransferConfig::restore(),
    )
    .unwrap();
    (call, file)
}

#[test]
fn t_2_a_silent_resolver_is_cut_by_the_connection_deadline_blocking() {
    let lb = named("node1.nervix.test");
    let cfg = config(&lb, Silent(Duration::from_secs(30)))
        .with_timeouts(Duration::from_secs(1), Duration::from_millis(300));
    let dir = scratch("silent");
    let d = dir.clone();
    let (connect, took, err, took_call) = bounded(move || {
        let began = Instant::now();
        let connect = Client::connect(cfg.clone()).map(|_| ());
        let took = began.elapsed();
        let (mut call, file) = one_byte_restore(&d);
        let began = Instant::now();
        let err = Transfers::new(&cfg)
            .unwrap()
            .restore(&mut call, &file)
            .unwrap_err();
        (connect, took, err, began.elapsed())
    });
    assert!(connect.is_err());
    assert!(took < Duration::from_secs(5), "{took:?}");
    // Five attempts of at most 300 ms each and the pauses between them.
    assert!(took_call < Duration::from_secs(8), "{took_call:?}");
    // Each attempt's lookup is cut by the deadline; once the silent resolver holds as many
    // lookups as it may (`LOOKUPS`), later attempts fail at once without taking a thread.
    assert!(
        matches!(&err, TransferError::GaveUp { last, .. }
            if last.contains("no answer for `node0.nervix.test`")
                || last.contains("no lookup of `node0.nervix.test`")),
        "{err:?}"
    );
    assert!(lb.stats().calls.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_2_a_failed_lookup_keeps_its_cause_blocking() {
    let lb = named("node1.nervix.test");
    let cfg = config(&lb, Failing(io::ErrorKind::PermissionDenied));
    let dir = scratch("failed");
    let d = dir.clone();
    let err = bounded(move || {
        let (mut call, file) = one_byte_restore(&d);
        Transfers::new(&cfg)
            .unwrap()
            .restore(&mut call, &file)
            .unwrap_err()
    });
    assert!(
        matches!(&err, TransferError::GaveUp { last, .. }
            if last.contains("lookup of `node0.nervix.test` failed: the name server refused")),
        "{err:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn t_2_a_tls_handshake_never_answered_ends_at_the_connection_deadline_blocking() {
    // A server that accepts connections and never answers their TLS handshakes.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in silent.incoming().take(10) {
            held.push(s);
        }
        std::thread::sleep(Duration::from_secs(10));
    });
    let lb = named("node1.nervix.test");
    let seed = format!("https://node0.nervix.test:{port}/");
    let mut cfg = Config::new(&[seed.as_str()], Credentials::new("nervix", "nervix"))
        .unwrap()
        .with_timeouts(Duration::from_secs(1), Duration::from_millis(300))
        .with_resolver(hosts())
        .with_root(lb.certificate_der().unwrap().to_vec());
    cfg.client.backoff_initial = Duration::from_millis(20);
    let dir = scratch("silent-tls");
    let d = dir.clone();
    let (err, took) = bounded(move || {
        let (mut call, file) = one_byte_restore(&d);
        let began = Instant::now();
        let err = Transfers::new(&cfg)
            .unwrap()
            .restore(&mut call, &file)
            .unwrap_err();
        (err, began.elapsed())
    });
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert!(
        matches!(&err, TransferError::GaveUp { last, .. } if last.contains("the connection deadline passed")),
        "{err:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
