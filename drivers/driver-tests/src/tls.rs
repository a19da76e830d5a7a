//! Host names, certificates and the resolver over real sockets: each loopback node has a host
//! name of its own and a certificate for it, the names resolve to 127.0.0.1 through the
//! configuration's resolver, and a connection is verified against the endpoint's own name on
//! every connection, redirects included, for sessions and separate calls alike (T-2).

use crate::transfers::download_path;
use crate::{completed, scratch, seeds_of, spoken, Driver, Failure, Via, BOTH};
use nervix_driver_support::api::DriverEvent;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::resolve::{ConnectError, HostsResolver, Resolve};
use nervix_loopback::{Loopback, LoopbackConfig, CONSOLE_PATH, EXCHANGE_PATH};
use nervix_protocol::calls::*;
use nervix_protocol::client::{CommandReport, CommandResult};
use nervix_protocol::command::ExecutionReference;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

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

/// A configuration whose seed is node 0, trusting every node's certificate, resolving with
/// `resolver`.
fn config<D: Driver>(lb: &Loopback, via: Via, resolver: impl Resolve) -> D::Config {
    let c = D::config(
        &[seeds_of(lb, via)[0].as_str()],
        Credentials::new("nervix", "nervix"),
        via,
    )
    .unwrap();
    let c = D::with_timeouts(c, Duration::from_secs(3), Duration::from_secs(1));
    let mut c = D::with_resolver(c, resolver);
    for der in lb.certificates_der() {
        c = D::with_root(c, der.clone());
    }
    D::client_config(&mut c).backoff_initial = Duration::from_millis(20);
    D::client_config(&mut c).backoff_max = Duration::from_millis(200);
    c
}

fn backed_up<D: Driver>(d: &D, c: &D::Client) -> CommandReport {
    let CommandResult::Completed(report) = d.execute(c, "BACKUP DOMAIN tenant").unwrap() else {
        panic!("the backup did not complete");
    };
    report
}

/// T-2: a redirect to another host name is verified against that name, for the session and
/// for a download.
pub fn t_2_redirect_verified<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = named("node1.nervix.test");
        assert!(seeds_of(&lb, via)[1].starts_with("https://node1.nervix.test:"));
        let dir = scratch::<D>(&format!("tls-redirect-{via:?}"));
        let config = config::<D>(&lb, via, hosts());
        let c = d.connect(config.clone()).unwrap();
        d.select_domain(&c, Some("tenant")).unwrap();
        let report = backed_up(&d, &c);
        let events = d.events(&c);
        // The leader moves to node 1: the session follows the redirect to its name.
        lb.set_leader(1);
        let done = (0..20).any(|_| completed(&d.execute(&c, "CREATE RELAY a;").unwrap()));
        assert!(done, "{via:?}: the session reached node 1");
        let opened: Vec<String> = D::drain(&events)
            .into_iter()
            .filter_map(|e| match e {
                DriverEvent::SessionOpened { endpoint, .. } => Some(endpoint.to_string()),
                _ => None,
            })
            .collect();
        assert!(
            opened
                .iter()
                .any(|e| e.starts_with("https://node1.nervix.test:")),
            "{via:?}: {opened:?}"
        );
        // A download from node 0 is redirected to node 1 and verified against its name.
        let transfers = d.transfers(&config).unwrap();
        d.backup(&transfers, &report, &dir.join("tenant.nxb"))
            .unwrap();
        let calls = lb.stats().calls;
        assert!(
            calls
                .iter()
                .any(|c| c.node == 1 && c.path == download_path(via) && c.alpn.is_some()),
            "{via:?}: {calls:?}"
        );
        let session = match via {
            Via::Grpc => EXCHANGE_PATH,
            Via::Console(_) => CONSOLE_PATH,
        };
        assert!(
            calls
                .iter()
                .any(|c| c.node == 1 && c.path == session && c.accepted),
            "{via:?}: {calls:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// T-2: a certificate for another name is refused on a redirect, before any request.
pub fn t_2_other_name_refused_on_redirect<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        // Node 1 presents a certificate issued for another name.
        let lb = named("elsewhere.nervix.test");
        let dir = scratch::<D>(&format!("tls-wrong-name-{via:?}"));
        let config = config::<D>(&lb, via, hosts());
        let c = d.connect(config.clone()).unwrap();
        d.select_domain(&c, Some("tenant")).unwrap();
        let report = backed_up(&d, &c);
        lb.set_leader(1);
        let r = d.execute(&c, "CREATE RELAY a;");
        assert!(
            !matches!(r, Ok(CommandResult::Completed(_))),
            "{via:?}: {r:?}"
        );
        let transfers = d.transfers(&config).unwrap();
        let err = d
            .backup(&transfers, &report, &dir.join("tenant.nxb"))
            .unwrap_err();
        assert!(
            matches!(D::failure(&err), Failure::GaveUp { last, .. } if last.contains("TLS")),
            "{via:?}: {err:?}"
        );
        if let Some(connect) = D::connect_error(&err) {
            assert!(matches!(connect, ConnectError::Tls(_)), "{via:?}: {err:?}");
        }
        // Nothing reached node 1: its certificate was refused before any request.
        let calls = lb.stats().calls;
        assert!(calls.iter().all(|c| c.node == 0), "{via:?}: {calls:?}");
        assert!(!dir.join("tenant.nxb").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A resolver answering node 0's name with fixed socket addresses, ports included.
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

/// T-2: addresses are tried in the order of the answer, under the original host name.
pub fn t_2_addresses_in_order<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = named("node1.nervix.test");
        let eps = seeds_of(&lb, via);
        let (node0, node1) = (local(&eps[0]), local(&eps[1]));
        // A refused address first: the next one of the answer is tried.
        let a = d
            .connect(config::<D>(&lb, via, Answers(vec![closed_port(), node0])))
            .map(|_| ());
        assert!(
            a.is_ok(),
            "{via:?}: the next address of the answer is tried: {a:?}"
        );
        // Node 1's address first under node 0's name: it is tried first, and its certificate
        // (for node 1) is refused, verified against node 0's name.
        let b = d
            .connect(config::<D>(&lb, via, Answers(vec![node1, node0])))
            .map(|_| ());
        assert!(b.is_err(), "{via:?}: the first address is tried first");
        let calls = lb.stats().calls;
        assert!(calls.iter().all(|c| c.node == 0), "{via:?}: {calls:?}");
    }
}

/// A resolver that answers nothing for its duration.
struct Silent(Duration);

impl Resolve for Silent {
    fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        std::thread::sleep(self.0);
        Err(io::Error::new(io::ErrorKind::TimedOut, "silent"))
    }
}

/// A resolver that fails every lookup with its kind.
struct Failing(io::ErrorKind);

impl Resolve for Failing {
    fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        Err(io::Error::new(self.0, "the name server refused"))
    }
}

/// A restore of a one-byte archive written in `dir`.
fn one_byte_restore(dir: &Path) -> (RestoreCall, PathBuf) {
    let file = dir.join("a.nxb");
    std::fs::write(&file, [0u8]).unwrap();
    let mut d = ArchiveDigest::new();
    d.update(&[0u8]);
    let call = RestoreCall::new(
        ExecutionReference::parse("restore-dns-1").unwrap(),
        "RESTORE DOMAIN tenant AS tenant_copy",
        d.finish(),
        TransferConfig::restore(),
    )
    .unwrap();
    (call, file)
}

/// A one-byte restore through `cfg` that fails within eight seconds: its error, and the
/// scratch directory named `name` it ran in.
fn restore_ended_in_time<D: Driver>(
    d: &D,
    cfg: &D::Config,
    name: &str,
) -> (D::TransferError, PathBuf) {
    let dir = scratch::<D>(name);
    let (mut call, file) = one_byte_restore(&dir);
    let began = Instant::now();
    let transfers = d.transfers(cfg).unwrap();
    let err = d.restore(&transfers, &mut call, &file).unwrap_err();
    let took = began.elapsed();
    assert!(took < Duration::from_secs(8), "{took:?}");
    (err, dir)
}

/// T-2: a silent resolver is cut by the connection deadline, for a session and for a call.
pub fn t_2_silent_resolver_cut<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = named("node1.nervix.test");
        let cfg = D::with_timeouts(
            config::<D>(&lb, via, Silent(Duration::from_secs(30))),
            Duration::from_secs(1),
            Duration::from_millis(300),
        );
        let began = Instant::now();
        assert!(d.connect(cfg.clone()).is_err(), "{via:?}");
        let took = began.elapsed();
        assert!(took < Duration::from_secs(5), "{took:?}");
        // Five attempts of at most 300 ms each and the pauses between them.
        let (err, dir) = restore_ended_in_time(&d, &cfg, &format!("tls-silent-{via:?}"));
        // Each attempt's lookup is cut by the deadline; once the silent resolver holds as
        // many lookups as it may, later attempts fail at once without taking a thread.
        assert!(
            matches!(D::failure(&err), Failure::GaveUp { last, .. }
                if last.contains("no answer for `node0.nervix.test`")
                    || last.contains("no lookup of `node0.nervix.test`")),
            "{via:?}: {err:?}"
        );
        if let Some(connect) = D::connect_error(&err) {
            assert!(
                matches!(
                    connect,
                    ConnectError::TimedOut
                        | ConnectError::LookupTimedOut { .. }
                        | ConnectError::LookupsBusy { .. }
                ),
                "{via:?}: {err:?}"
            );
        }
        assert!(lb.stats().calls.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// T-2: a failed lookup keeps its cause: an upload's where the driver has uploads, a
/// restore's where it has not.
pub fn t_2_failed_lookup_keeps_its_cause<D: Driver>() {
    let via = spoken::<D>(&BOTH)[0];
    let d = D::new();
    let lb = named("node1.nervix.test");
    let cfg = config::<D>(&lb, via, Failing(io::ErrorKind::PermissionDenied));
    let dir = scratch::<D>("tls-failed-dns");
    let transfers = d.transfers(&cfg).unwrap();
    let mut upload = UploadCall::new(
        UploadSpec {
            domain: "tenant".into(),
            resource: "model".into(),
            identity: "upload-failed-dns".into(),
        },
        1,
        TransferConfig::upload(),
    )
    .unwrap();
    let (mut restore, file) = one_byte_restore(&dir);
    let err = match d.upload(&transfers, &mut upload, &file) {
        Some(r) => r.unwrap_err(),
        None => d.restore(&transfers, &mut restore, &file).unwrap_err(),
    };
    assert!(
        matches!(D::failure(&err), Failure::GaveUp { last, .. }
            if last.contains("lookup of `node0.nervix.test` failed: the name server refused")),
        "{err:?}"
    );
    if let Some(connect) = D::connect_error(&err) {
        let ConnectError::Lookup { host, source } = connect else {
            panic!("{err:?}");
        };
        assert_eq!(host, "node0.nervix.test");
        assert_eq!(source.kind(), io::ErrorKind::PermissionDenied);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// T-2: a TLS handshake never answered ends at the connection deadline, on a session and on
/// a call, over every way the driver speaks: a session tries again, on a new connection,
/// well within its first request's wait, and each attempt of a call ends by the deadline.
pub fn t_2_silent_handshake_cut<D: Driver>() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    // A server that accepts connections and never answers their TLS handshakes; it holds
    // every connection as long as the test runs.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in silent.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            held.push(s);
        }
    });
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = named("node1.nervix.test");
        let seed = format!("https://node0.nervix.test:{port}/");
        let cfg = D::config(&[seed.as_str()], Credentials::new("nervix", "nervix"), via).unwrap();
        // The first request waits the connection deadline and three seconds more: a session
        // whose handshake were never cut would sit on its first connection all that time.
        let cfg = D::with_timeouts(cfg, Duration::from_secs(3), Duration::from_millis(300));
        let cfg = D::with_resolver(cfg, hosts());
        let mut cfg = D::with_root(cfg, lb.certificate_der().unwrap().to_vec());
        D::client_config(&mut cfg).backoff_initial = Duration::from_millis(20);
        let before = accepted.load(Ordering::SeqCst);
        assert!(d.connect(cfg.clone()).is_err(), "{via:?}");
        let tried = accepted.load(Ordering::SeqCst) - before;
        assert!(tried >= 2, "{via:?}: {tried} connections");
        let (err, dir) = restore_ended_in_time(&d, &cfg, &format!("tls-silent-handshake-{via:?}"));
        assert!(
            matches!(D::failure(&err), Failure::GaveUp { last, .. } if last.contains("the connection deadline passed")),
            "{via:?}: {err:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Tests of `tests/tls.rs`, for `tokio` or `blocking`.
#[macro_export]
macro_rules! tls_tests {
    (tokio) => {
        #[test]
        fn t_2_a_redirect_to_another_host_name_is_verified_against_that_name() {
            $crate::run!(Tokio, tls::t_2_redirect_verified())
        }
        #[test]
        fn t_2_a_certificate_for_another_name_is_refused_on_a_redirect() {
            $crate::run!(Tokio, tls::t_2_other_name_refused_on_redirect())
        }
        #[test]
        fn t_2_addresses_are_tried_in_the_order_of_the_answer_under_the_original_host_name() {
            $crate::run!(Tokio, tls::t_2_addresses_in_order())
        }
        #[test]
        fn t_2_a_silent_resolver_is_cut_by_the_connection_deadline() {
            $crate::run!(Tokio, tls::t_2_silent_resolver_cut())
        }
        #[test]
        fn t_2_a_failed_lookup_keeps_its_typed_cause() {
            $crate::run!(Tokio, tls::t_2_failed_lookup_keeps_its_cause())
        }
        #[test]
        fn t_2_a_tls_handshake_never_answered_ends_at_the_connection_deadline() {
            $crate::run!(Tokio, tls::t_2_silent_handshake_cut())
        }
    };
    (blocking) => {
        #[test]
        fn t_2_addresses_are_tried_in_the_order_of_the_answer_under_the_original_host_name_blocking(
        ) {
            $crate::run!(Blocking, tls::t_2_addresses_in_order())
        }
        #[test]
        fn t_2_a_tls_handshake_never_answered_ends_at_the_connection_deadline_blocking() {
            $crate::run!(Blocking, tls::t_2_silent_handshake_cut())
        }
        #[test]
        fn t_2_a_silent_resolver_is_cut_by_the_connection_deadline_blocking() {
            $crate::run!(Blocking, tls::t_2_silent_resolver_cut())
        }
        #[test]
        fn t_2_a_redirect_to_another_host_name_is_verified_against_that_name_blocking() {
            $crate::run!(Blocking, tls::t_2_redirect_verified())
        }
        #[test]
        fn t_2_a_failed_lookup_keeps_its_cause_blocking() {
            $crate::run!(Blocking, tls::t_2_failed_lookup_keeps_its_cause())
        }
        #[test]
        fn t_2_a_certificate_for_another_name_is_refused_on_a_redirect_blocking() {
            $crate::run!(Blocking, tls::t_2_other_name_refused_on_redirect())
        }
    };
}
