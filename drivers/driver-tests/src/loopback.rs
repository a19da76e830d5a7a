//! A driver end to end over real sockets on 127.0.0.1 against the loopback cluster: one
//! scenario (at least) per transport rule, redirects across real sockets, a node killed
//! mid-call, credentials that break careless encoders, an oversized frame from the server,
//! a node reachable only over plain http behind an https cluster, and a node that reads
//! slowly.

use crate::{completed, seeds_of, spoken, Driver, Error, Via, WsAuth, BOTH};
use nervix_driver_support::api::{DriverEvent, RunResult};
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::session::End;
use nervix_loopback::{AuthSeen, CallFault, Loopback, LoopbackConfig, Transport as Seen};
use nervix_protocol::client::{CommandResult, SessionLoss};
use std::time::{Duration, Instant};

/// Credentials with `+`, `%` and non-ASCII characters, whose base64 holds a `+` too.
const USER: &str = "~ü+%";
const PASSWORD: &str = "~~~>>>?";

/// gRPC, and the console with credentials in a header, then in the query.
const ALL: [Via; 3] = [
    Via::Grpc,
    Via::Console(WsAuth::Header),
    Via::Console(WsAuth::Query),
];

fn server(nodes: usize, tls: bool) -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes,
        tls,
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap()
}

fn creds() -> Credentials {
    Credentials::new(USER, PASSWORD)
}

/// A configuration of every seed of `lb` over `via`, reconnecting quickly, trusting the
/// loopback's certificate when it has one.
fn config<D: Driver>(lb: &Loopback, via: Via, creds: Credentials) -> D::Config {
    let mut c = crate::config_of::<D>(
        &seeds_of(lb, via),
        creds,
        via,
        Duration::from_secs(10),
        Duration::from_secs(3),
    );
    D::client_config(&mut c).backoff_initial = Duration::from_millis(20);
    D::client_config(&mut c).backoff_max = Duration::from_millis(400);
    if let Some(der) = lb.certificate_der() {
        c = D::with_root(c, der.to_vec());
    }
    c
}

fn connected<D: Driver>(d: &D, lb: &Loopback, via: Via) -> D::Client {
    let c = d.connect(config::<D>(lb, via, creds())).unwrap();
    d.select_domain(&c, Some("tenant")).unwrap();
    c
}

fn reference_of(r: &CommandResult) -> String {
    match r {
        CommandResult::Completed(c) => c.reference().to_string(),
        CommandResult::Uncertain { command, .. } => command.reference.to_string(),
        other => panic!("no reference in {other:?}"),
    }
}

/// How many times the loopback saw a command under `reference`.
fn sent(lb: &Loopback, reference: &str) -> usize {
    lb.stats()
        .references
        .iter()
        .filter(|x| *x == reference)
        .count()
}

/// Waits until `cond` holds; false when `within` passed first.
fn until(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// How the transports that came ended.
fn ended<D: Driver>(events: &D::Events) -> Vec<End> {
    D::drain(events)
        .into_iter()
        .filter_map(|e| match e {
            DriverEvent::TransportEnded { end, .. } => Some(end),
            _ => None,
        })
        .collect()
}

/// T-1: a gRPC session carries commands as length-prefixed frames.
pub fn t_1_grpc_frames<D: Driver>() {
    let d = D::new();
    let lb = server(1, false);
    let c = connected(&d, &lb, Via::Grpc);
    for i in 0..5 {
        let r = d.execute(&c, &format!("CREATE RELAY r{i};")).unwrap();
        assert!(completed(&r), "{r:?}");
    }
    let stats = lb.stats();
    assert!(stats.calls.iter().all(|c| c.transport == Seen::Grpc
        && c.path == "/nervix.session.Session/Exchange"
        && c.accepted));
    // Five commands and the opening listing, each one message the server decoded as a frame.
    assert_eq!(stats.references.len(), 5);
    assert!(stats.frames >= 6);
}

/// T-1, T-3: an oversized frame from the server is refused and the session closed; the
/// command is repeated under its reference on the next session (E-3).
pub fn oversized_frame_refused<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(1, false);
        let c = connected(&d, &lb, via);
        let events = d.events(&c);
        lb.inject(CallFault::OversizedFrame);
        let r = d.execute(&c, "CREATE RELAY big;").unwrap();
        assert!(completed(&r), "{via:?}: {r:?}");
        assert_eq!(
            sent(&lb, &reference_of(&r)),
            2,
            "{via:?}: sent, then repeated once"
        );
        assert!(
            ended::<D>(&events).contains(&End::OversizedFrame),
            "{via:?}: the oversized frame ended the session"
        );
    }
}

/// T-2: https and wss verify the host on every connection, redirects included.
pub fn t_2_verified_on_every_connection<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(3, true);
        assert!(seeds_of(&lb, via)[0].starts_with("https://localhost:"));
        let c = connected(&d, &lb, via);
        assert!(completed(&d.execute(&c, "CREATE RELAY a;").unwrap()));
        lb.set_leader(1);
        assert!(completed(&d.execute(&c, "CREATE RELAY b;").unwrap()));
        lb.set_leader(2);
        assert!(completed(&d.execute(&c, "CREATE RELAY c;").unwrap()));
        let stats = lb.stats();
        let nodes: std::collections::BTreeSet<usize> = stats
            .calls
            .iter()
            .filter(|c| c.accepted)
            .map(|c| c.node)
            .collect();
        assert!(
            nodes.contains(&1) && nodes.contains(&2),
            "{via:?}: {nodes:?}"
        );
        let alpn = match via {
            Via::Grpc => "h2",
            Via::Console(_) => "http/1.1",
        };
        assert!(
            stats.calls.iter().all(|c| c.alpn.as_deref() == Some(alpn)),
            "{via:?}: every connection was TLS"
        );
    }
}

/// T-2: a certificate for another host name is refused.
pub fn t_2_other_name_refused<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            tls: true,
            certificate_name: "elsewhere.test".into(),
            users: vec![(USER.into(), PASSWORD.into())],
            ..LoopbackConfig::default()
        })
        .unwrap();
        let mut cfg = config::<D>(&lb, via, creds());
        D::client_config(&mut cfg).connect_timeout = Duration::from_secs(1);
        let cfg = D::with_timeouts(cfg, Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(d.connect(cfg).err(), Some(Error::Unreachable), "{via:?}");
        assert!(lb.stats().calls.is_empty(), "no connection got past TLS");
    }
}

/// T-2: an address literal is checked against the certificate too.
pub fn t_2_address_literal_checked<D: Driver>() {
    let via = spoken::<D>(&BOTH)[0];
    let d = D::new();
    let lb = server(1, true);
    let port = seeds_of(&lb, via)[0]
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let ip = format!("https://127.0.0.1:{port}/");
    let cfg = D::config(&[ip.as_str()], creds(), via).unwrap();
    let cfg = D::with_root(cfg, lb.certificate_der().unwrap().to_vec());
    let cfg = D::with_timeouts(cfg, Duration::from_secs(2), Duration::from_secs(1));
    assert_eq!(d.connect(cfg).err(), Some(Error::Unreachable));
    assert!(
        lb.stats().calls.is_empty(),
        "the certificate names localhost only"
    );
}

/// T-2: https seeds need roots, and addresses are strict.
pub fn t_2_roots_and_strict_addresses<D: Driver>() {
    let via = spoken::<D>(&BOTH)[0];
    let d = D::new();
    let r = D::config(&["https://localhost:1/"], creds(), via).unwrap();
    assert!(matches!(d.start(r), Err(Error::Config(_))));
    for bad in [
        "https://user@localhost:1/",
        "https://localhost:1/x",
        "http://localhost:1/?q",
    ] {
        assert!(D::config(&[bad], creds(), via).is_err(), "{bad}");
    }
    assert!(D::config(&[], creds(), via).is_err());
}

/// a reverting close ends the session cleanly every time, over each of `vias`: the close
/// (a WebSocket close frame, a gRPC half-close) reaches the server before the close returns
/// to the application, whatever the runtime does with the session's task afterwards. Eight
/// rounds, each a client of its own with a command answered before the close.
pub fn x_7_reverting_close_reaches_the_server<D: Driver>(vias: &[Via]) {
    closes_cleanly::<D>(vias, 8, "x", |_| {});
}

/// X-7 under a flood: a reverting close still reaches the server when the session is being
/// sent many times more unsolicited frames than its event channel holds as the close begins,
/// over each of `vias`: three rounds.
pub fn x_7_a_flooded_session_still_closes_cleanly<D: Driver>(vias: &[Via]) {
    closes_cleanly::<D>(vias, 3, "f", |lb| {
        assert_eq!(lb.flood_notices(0, 40_000, 200), 1);
        std::thread::sleep(Duration::from_millis(20));
    });
}

/// `rounds` clients over each of `vias`, each running one command (relays named after
/// `prefix`), then `before_close`, then a reverting close that the server must have seen as
/// clean by the time the close returned (give or take its own read); no close is unclean.
fn closes_cleanly<D: Driver>(
    vias: &[Via],
    rounds: usize,
    prefix: &str,
    before_close: impl Fn(&Loopback),
) {
    let d = D::new();
    let lb = server(1, false);
    let mut closed = 0;
    for via in vias {
        for i in 0..rounds {
            let c = connected(&d, &lb, *via);
            assert!(completed(
                &d.execute(&c, &format!("CREATE RELAY {prefix}{closed}_{i};"))
                    .unwrap()
            ));
            before_close(&lb);
            d.close(c, true).unwrap();
            closed += 1;
            assert!(
                until(Duration::from_millis(500), || lb.stats().clean_closes
                    == closed),
                "round {closed} over {via:?}: {:?} clean closes seen",
                lb.stats().clean_closes
            );
        }
    }
    assert_eq!(lb.stats().unclean_closes, 0);
}

/// T-3: a console session sends binary messages on /console/ws, and a reverting close then
/// ends it with a close frame.
pub fn t_3_binary_messages<D: Driver>() {
    let d = D::new();
    let lb = server(1, false);
    let c = connected(&d, &lb, Via::Console(WsAuth::Header));
    for i in 0..3 {
        assert!(completed(
            &d.execute(&c, &format!("CREATE RELAY w{i};")).unwrap()
        ));
    }
    d.close(c, true).unwrap();
    assert!(until(Duration::from_secs(2), || lb.stats().clean_closes == 1));
    let stats = lb.stats();
    assert_eq!(stats.non_binary, 0);
    assert_eq!(stats.references.len(), 3);
    assert!(stats
        .calls
        .iter()
        .all(|c| c.transport == Seen::WebSocket && c.path == "/console/ws"));
    assert_eq!(stats.unclean_closes, 0);
    let url = |e: &str| {
        D::console_url(
            &nervix_protocol::endpoint::Endpoint::parse(e).unwrap(),
            None,
        )
    };
    assert_eq!(url("https://h:8443/"), "wss://h:8443/console/ws");
    assert_eq!(url("http://h:80/"), "ws://h:80/console/ws");
}

/// T-3: close codes 1003, 1007, 1008 and 1009 are our defect, and nothing is sent again.
pub fn t_3_defect_codes<D: Driver>() {
    for code in [1003u16, 1007, 1008, 1009] {
        let d = D::new();
        let lb = server(1, false);
        let c = connected(&d, &lb, Via::Console(WsAuth::Header));
        let events = d.events(&c);
        lb.inject(CallFault::CloseCode(code));
        let r = d.execute(&c, "CREATE RELAY d;").unwrap();
        assert!(!completed(&r), "{code}: {r:?}");
        let reference = reference_of(&r);
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(sent(&lb, &reference), 1, "{code}: never sent again");
        assert!(matches!(
            d.execute(&c, "CREATE RELAY e;"),
            Err(Error::Defect(_))
        ));
        assert!(ended::<D>(&events).contains(&End::Defect(code)), "{code}");
        assert_eq!(lb.stats().calls.len(), 1, "{code}: no new connection");
    }
}

/// T-3: close code 1001 is a transport failure, and a node killed mid-call is survived: the
/// command recovered under its reference.
pub fn t_3_node_killed_mid_call<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(3, false);
        let c = connected(&d, &lb, via);
        let events = d.events(&c);
        // The leader runs the command but its reply is lost; then it dies mid-call.
        lb.drop_replies(0, true);
        let pending = d.submit(&c, "CREATE RELAY killed;").unwrap();
        let reference = D::reference(&pending);
        assert!(until(Duration::from_secs(5), || lb
            .stats()
            .references
            .contains(&reference)));
        lb.kill(0);
        lb.set_leader(1);
        let r = d.wait(pending).unwrap();
        assert!(completed(&r), "{via:?}: {r:?}");
        assert_eq!(reference_of(&r), reference, "recovered under its reference");
        assert_eq!(
            sent(&lb, &reference),
            2,
            "{via:?}: sent, then repeated once"
        );
        let ends = ended::<D>(&events);
        if via != Via::Grpc {
            assert!(
                ends.contains(&End::Transport("close code 1001".into())),
                "{ends:?}"
            );
        }
    }
}

/// T-4: credentials with `+`, `%` and non-ASCII characters pass on every way.
pub fn t_4_credentials_pass<D: Driver>() {
    assert!(creds().token().contains('+'), "the token itself holds a +");
    assert!(!creds().query_value().contains('+'));
    for via in spoken::<D>(&ALL) {
        let d = D::new();
        let lb = server(3, false);
        let c = connected(&d, &lb, via);
        assert!(completed(&d.execute(&c, "CREATE RELAY a;").unwrap()));
        lb.set_leader(2);
        assert!(completed(&d.execute(&c, "CREATE RELAY b;").unwrap()));
        let stats = lb.stats();
        assert!(stats.calls.len() >= 2, "{via:?}");
        let want = Some((USER.to_string(), PASSWORD.to_string()));
        for call in &stats.calls {
            let seen = match (&call.auth, via) {
                (AuthSeen::Header(c), Via::Grpc | Via::Console(WsAuth::Header)) => c.clone(),
                (AuthSeen::Query(c), Via::Console(WsAuth::Query)) => c.clone(),
                (other, _) => panic!("{via:?}: {other:?}"),
            };
            assert_eq!(seen, want, "{via:?}");
            assert!(call.accepted);
        }
    }
}

/// T-5: refused credentials are never tried again; new credentials open the way again.
pub fn t_5_unauthenticated_not_retried<D: Driver>() {
    for via in spoken::<D>(&ALL) {
        let d = D::new();
        let lb = server(1, false);
        let c = d
            .start(config::<D>(&lb, via, Credentials::new(USER, "not it")))
            .unwrap();
        let r = d.execute(&c, "CREATE RELAY x;");
        // Never sent: the session did not open.
        assert!(matches!(r, Ok(CommandResult::Failed(_))), "{via:?}: {r:?}");
        assert_eq!(
            d.execute(&c, "CREATE RELAY y;").err(),
            Some(Error::Unauthenticated)
        );
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(lb.stats().calls.len(), 1, "{via:?}: one attempt only");
        d.set_credentials(&c, creds()).unwrap();
        d.select_domain(&c, Some("tenant")).unwrap();
        assert!(completed(&d.execute(&c, "CREATE RELAY z;").unwrap()));
        assert_eq!(lb.stats().calls.len(), 2);
    }
}

/// T-5: unavailable backs off and retries with the same credentials.
pub fn t_5_unavailable_backs_off<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(1, false);
        lb.inject(CallFault::AuthUnavailable);
        lb.inject(CallFault::AuthUnavailable);
        let c = connected(&d, &lb, via);
        assert!(completed(&d.execute(&c, "CREATE RELAY a;").unwrap()));
        let calls = lb.stats().calls;
        assert!(calls.len() >= 3, "{via:?}");
        assert!(!calls[0].accepted && !calls[1].accepted && calls[2].accepted);
    }
}

/// T-6: a frame ending its call with OUT_OF_RANGE or INTERNAL is not sent again (gRPC).
pub fn t_6_refused_frame_not_resent<D: Driver>() {
    for code in [11u32, 13] {
        let d = D::new();
        let lb = server(1, false);
        let c = connected(&d, &lb, Via::Grpc);
        lb.inject(CallFault::GrpcStatus(code));
        let r = d.execute(&c, "CREATE RELAY refused;").unwrap();
        assert!(
            matches!(r, CommandResult::Uncertain { .. }),
            "{code}: {r:?}"
        );
        let reference = reference_of(&r);
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(sent(&lb, &reference), 1, "{code}: never resent");
        assert_eq!(lb.stats().calls.len(), 1, "{code}: no new call");
        assert!(matches!(
            d.execute(&c, "CREATE RELAY again;"),
            Err(Error::Defect(_))
        ));
    }
}

/// T-7: a console session ending with a redirect reconnects to the leader's console; the
/// loss is typed as the server's ending.
pub fn t_7_console_redirect<D: Driver>() {
    let d = D::new();
    let lb = server(3, false);
    let c = connected(&d, &lb, Via::Console(WsAuth::Header));
    assert!(completed(&d.execute(&c, "CREATE RELAY a;").unwrap()));
    let events = d.events(&c);
    lb.set_leader(2);
    assert!(completed(&d.execute(&c, "CREATE RELAY b;").unwrap()));
    let mut opened = Vec::new();
    let mut lost = Vec::new();
    for e in D::drain(&events) {
        match e {
            DriverEvent::SessionOpened { endpoint, .. } => opened.push(endpoint.to_string()),
            DriverEvent::SessionLost { loss, .. } => lost.push(loss),
            _ => {}
        }
    }
    assert_eq!(
        opened.first(),
        Some(&lb.console_endpoints()[2]),
        "{opened:?}"
    );
    assert!(
        matches!(lost.first(), Some(SessionLoss::Ending(_))),
        "{lost:?}"
    );
    let stats = lb.stats();
    assert!(stats.calls.iter().all(|c| c.transport == Seen::WebSocket));
    assert!(stats.calls.iter().any(|c| c.node == 2 && c.accepted));
}

/// T-8: a server that accepts and never answers is given up on.
pub fn t_8_silent_server_given_up<D: Driver>() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept() {
            held.push(s);
        }
    });
    let d = D::new();
    for via in spoken::<D>(&BOTH) {
        let seed = format!("http://127.0.0.1:{port}/");
        let cfg = D::config(&[seed.as_str()], creds(), via).unwrap();
        let cfg = D::with_timeouts(cfg, Duration::from_secs(1), Duration::from_millis(300));
        let started = Instant::now();
        assert_eq!(d.connect(cfg).err(), Some(Error::Unreachable), "{via:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

/// T-8: a call whose reply never comes ends uncertain at its deadline.
pub fn t_8_uncertain_at_deadline<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(1, false);
        let mut cfg = config::<D>(&lb, via, creds());
        D::client_config(&mut cfg).call_timeout = Duration::from_secs(1);
        let c = d.connect(cfg).unwrap();
        d.select_domain(&c, Some("tenant")).unwrap();
        lb.drop_replies(0, true);
        let started = Instant::now();
        let r = d.execute(&c, "CREATE RELAY silent;").unwrap();
        assert!(
            matches!(r, CommandResult::Uncertain { .. }),
            "{via:?}: {r:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{via:?}: at its deadline"
        );
        assert!(lb.stats().references.contains(&reference_of(&r)));
    }
}

/// a BACKUP waits its own bounded wait, not the call timeout: past every bound of an
/// ordinary call the driver still waits, and when the wait ends without an outcome the
/// BACKUP is uncertain under its reference.
pub fn a_7_backup_waits_its_own_wait<D: Driver>() {
    let via = Via::Console(WsAuth::Header);
    let d = D::new();
    let lb = server(1, false);
    // An ordinary call is given up on well within seven seconds, whatever the driver adds to
    // the engine's deadlines (a second to connect, 200 ms for the call, a grace).
    let cfg = config::<D>(&lb, via, creds());
    let mut cfg = D::with_timeouts(cfg, Duration::from_millis(200), Duration::from_secs(1));
    let wait = Duration::from_secs(7);
    D::client_config(&mut cfg).backup_wait = wait;
    let c = d.connect(cfg).unwrap();
    lb.drop_replies(0, true);
    let started = Instant::now();
    let r = d.execute(&c, "BACKUP");
    let took = started.elapsed();
    let r =
        r.unwrap_or_else(|e| panic!("the BACKUP's wait, not the call's, after {took:?}: {e:?}"));
    assert!(
        matches!(
            &r,
            CommandResult::Uncertain {
                cause: nervix_protocol::client::UncertainCause::Deadline,
                ..
            }
        ),
        "{r:?}"
    );
    assert!(took >= wait, "the whole wait: {took:?}");
    assert!(
        took < wait + Duration::from_secs(4),
        "and no longer: {took:?}"
    );
    assert!(lb.stats().references.contains(&reference_of(&r)));
}

/// T-8: a wait of the application is bounded, and can go on after.
pub fn t_8_bounded_wait_goes_on<D: Driver>() {
    let d = D::new();
    let lb = server(1, false);
    let c = connected(&d, &lb, Via::Console(WsAuth::Header));
    lb.drop_replies(0, true);
    let mut pending = d.submit(&c, "CREATE RELAY slow;").unwrap();
    let started = Instant::now();
    assert_eq!(
        d.wait_timeout(&mut pending, Duration::from_millis(200)),
        Err(Error::TimedOut)
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    lb.drop_replies(0, false);
    lb.cut_streams(0);
    // The command is still pending: the wait goes on and gets its result.
    let r = d
        .wait_timeout(&mut pending, Duration::from_secs(10))
        .unwrap();
    assert!(completed(&r), "{r:?}");
}

/// C-10: a wait given up keeps the outcome for `unclaimed`, handed out once.
pub fn c_10_dropped_wait<D: Driver>(via: Via) {
    let d = D::new();
    let lb = server(1, false);
    let c = connected(&d, &lb, via);
    lb.drop_replies(0, true);
    let reference = {
        let mut pending = d.submit(&c, "CREATE RELAY dropped;").unwrap();
        // The caller gives up waiting; the command goes on (C-10).
        assert_eq!(
            d.wait_timeout(&mut pending, Duration::from_millis(200)),
            Err(Error::TimedOut)
        );
        D::reference(&pending)
    };
    lb.drop_replies(0, false);
    lb.cut_streams(0);
    let found = loop {
        let u = d.unclaimed(&c).unwrap();
        if let Some(r) = u.into_iter().find(|r| reference_of(r) == reference) {
            break r;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(completed(&found), "{found:?}");
    assert!(d.unclaimed(&c).unwrap().is_empty(), "handed out once");
    // Other calls were never disturbed.
    assert!(completed(&d.execute(&c, "CREATE RELAY after;").unwrap()));
}

/// C-10: a wait dropped after its outcome arrived keeps it for `unclaimed`.
pub fn c_10_dropped_after_outcome<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(1, false);
        let c = connected(&d, &lb, via);
        let pending = d.submit(&c, "CREATE RELAY arrived;").unwrap();
        let reference = D::reference(&pending);
        // A later command on the same session completes: the first outcome was handed to
        // its wait before, and nobody has read it yet.
        assert!(completed(&d.execute(&c, "CREATE RELAY later;").unwrap()));
        // The caller stops waiting without reading it (C-10): it must not be lost.
        drop(pending);
        let u = d.unclaimed(&c).unwrap();
        let found = u.iter().find(|r| reference_of(r) == reference);
        assert!(
            found.is_some_and(completed),
            "{via:?}: the outcome comes back through unclaimed: {u:?}"
        );
        assert!(d.unclaimed(&c).unwrap().is_empty(), "handed out once");
    }
}

/// A transaction commits across a leader change.
pub fn transaction_across_leader_change<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(3, false);
        let c = d.connect(config::<D>(&lb, via, creds())).unwrap();
        assert!(matches!(
            d.run(&c, "USE tenant").unwrap(),
            RunResult::DomainSelected(d) if d == "tenant"
        ));
        let tx = d.transaction(&c).unwrap().expect("BEGIN completed");
        assert!(completed(&d.tx_execute(&tx, "CREATE RELAY t1;").unwrap()));
        lb.set_leader(1);
        assert!(completed(&d.tx_execute(&tx, "CREATE RELAY t2;").unwrap()));
        let r = d.commit(tx).unwrap();
        assert!(completed(&r), "{via:?}: {r:?}");
        assert_eq!(
            lb.recorded(&reference_of(&r)).as_deref(),
            Some("CommandCompleted")
        );
    }
}

/// E-2, E-3: an uncertain command recovered through the API ran once under its reference.
pub fn e_3_recovered_once<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(1, false);
        let cfg = D::with_timeouts(
            config::<D>(&lb, via, creds()),
            Duration::from_millis(800),
            Duration::from_secs(3),
        );
        let c = d.connect(cfg).unwrap();
        d.select_domain(&c, Some("tenant")).unwrap();
        // The node runs the command but its reply is lost: at its deadline it is uncertain.
        lb.drop_replies(0, true);
        let r = d.execute(&c, "CREATE RELAY maybe;").unwrap();
        let CommandResult::Uncertain { command, .. } = r else {
            panic!("{via:?}: {r:?}");
        };
        let reference = command.reference.to_string();
        assert_eq!(sent(&lb, &reference), 1, "{via:?}");
        lb.drop_replies(0, false);
        let again = d.recover(&c, &command).unwrap();
        let CommandResult::Completed(report) = &again else {
            panic!("{via:?}: {again:?}");
        };
        assert_eq!(report.reference().to_string(), reference);
        assert_eq!(
            report.origin(),
            Some(nervix_protocol::schema::OutcomeOrigin::Recovered),
            "{via:?}: answered from the record, not run again"
        );
        assert_eq!(
            sent(&lb, &reference),
            2,
            "{via:?}: the same reference went again"
        );
        d.close(c, true).unwrap();
    }
}

/// T-2: a client started over https never follows a redirect to a node served over http,
/// and goes on once the leader is back on https.
pub fn t_2_never_redirected_to_http<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = Loopback::start(LoopbackConfig {
            nodes: 3,
            tls: true,
            plain_nodes: vec![1],
            users: vec![(USER.into(), PASSWORD.into())],
            ..LoopbackConfig::default()
        })
        .unwrap();
        let seeds = seeds_of(&lb, via);
        assert!(seeds[0].starts_with("https://"));
        assert!(seeds[1].starts_with("http://"));
        let cfg = D::config(&[seeds[0].as_str()], creds(), via).unwrap();
        let cfg = D::with_root(cfg, lb.certificate_der().unwrap().to_vec());
        let mut cfg = D::with_timeouts(cfg, Duration::from_secs(2), Duration::from_secs(1));
        D::client_config(&mut cfg).backoff_initial = Duration::from_millis(20);
        D::client_config(&mut cfg).backoff_max = Duration::from_millis(200);
        let c = d.connect(cfg).unwrap();
        d.select_domain(&c, Some("tenant")).unwrap();
        assert!(completed(&d.execute(&c, "CREATE RELAY a;").unwrap()));
        let events = d.events(&c);
        // The leader moves to the node served over http: every redirect names it.
        lb.set_leader(1);
        let r = d.execute(&c, "CREATE RELAY b;").unwrap();
        assert!(!completed(&r), "{via:?}: {r:?}");
        for e in D::drain(&events) {
            if let DriverEvent::SessionOpened { endpoint, .. } = e {
                assert!(endpoint.is_https(), "{via:?}: {endpoint}");
            }
        }
        // Back on an https leader, the client goes on.
        lb.set_leader(0);
        assert!(completed(&d.execute(&c, "CREATE RELAY c;").unwrap()));
        let stats = lb.stats();
        assert!(
            stats.calls.iter().all(|c| c.node != 1),
            "{via:?}: no call reached the http node"
        );
        assert!(
            stats.calls.iter().all(|c| c.alpn.is_some()),
            "{via:?}: every call was TLS"
        );
    }
}

/// T-8: a slow reader ends the session at the write deadline, and nothing hangs.
pub fn t_8_slow_reader<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = server(1, false);
        let mut cfg = D::with_timeouts(
            config::<D>(&lb, via, creds()),
            Duration::from_secs(4),
            Duration::from_secs(1),
        );
        *D::write_timeout(&mut cfg) = Duration::from_millis(300);
        let c = d.connect(cfg).unwrap();
        d.select_domain(&c, Some("tenant")).unwrap();
        let events = d.events(&c);
        lb.slow_reader(0, Some(Duration::from_secs(3)));
        // More than the flow-control windows and socket buffers take while nobody reads.
        let big = format!("CREATE RELAY big SCHEMA '{}';", "x".repeat(1 << 20));
        let pending: Vec<_> = (0..24).map(|_| d.submit(&c, &big).unwrap()).collect();
        let started = Instant::now();
        for p in pending {
            let r = d.wait(p).unwrap();
            assert!(!completed(&r), "{via:?}: {r:?}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{via:?}: every command ended by its deadline"
        );
        let write_failed = ended::<D>(&events).into_iter().any(|end| match via {
            // The console's writer tells the deadline itself.
            Via::Console(_) => end == End::Transport("write deadline passed".into()),
            // The call is reset when its send window stays shut past the deadline.
            Via::Grpc => matches!(end, End::Transport(_)),
        });
        assert!(write_failed, "{via:?}: the write deadline ended a session");
        lb.slow_reader(0, None);
        // The client recovers once the reader is quick again. On a loaded machine the first
        // command may still meet the reconnect back-off, or a server busy with what the cut
        // session left, and end within its own deadline without completing: a later one
        // (each under its own name, in case an earlier one ran) must complete.
        let recovering = Instant::now();
        for n in 0.. {
            let r = d.execute(&c, &format!("CREATE RELAY small{n};")).unwrap();
            if completed(&r) {
                break;
            }
            assert!(
                recovering.elapsed() < Duration::from_secs(30),
                "{via:?}: nothing completed 30 s after the reader came back: {r:?}"
            );
        }
    }
}

/// Tests of `tests/loopback.rs` (and, for `tokio_faults`, of the tokio driver's
/// `tests/faults.rs`), for `tokio` or `blocking`.
#[macro_export]
macro_rules! loopback_tests {
    (tokio) => {
        #[test]
        fn t_1_a_grpc_session_carries_commands_as_length_prefixed_frames() {
            $crate::run!(Tokio, loopback::t_1_grpc_frames())
        }
        #[test]
        fn t_1_an_oversized_frame_from_the_server_is_refused_and_the_session_closed() {
            $crate::run!(Tokio, loopback::oversized_frame_refused())
        }
        #[test]
        fn t_2_https_and_wss_verify_the_host_on_every_connection_including_redirects() {
            $crate::run!(Tokio, loopback::t_2_verified_on_every_connection())
        }
        #[test]
        fn t_2_a_certificate_for_another_host_name_is_refused() {
            $crate::run!(Tokio, loopback::t_2_other_name_refused())
        }
        #[test]
        fn t_2_an_address_literal_is_checked_against_the_certificate_too() {
            $crate::run!(Tokio, loopback::t_2_address_literal_checked())
        }
        #[test]
        fn t_2_https_seeds_need_roots_and_addresses_are_strict() {
            $crate::run!(Tokio, loopback::t_2_roots_and_strict_addresses())
        }
        #[test]
        fn t_3_a_console_session_sends_binary_messages_on_console_ws() {
            $crate::run!(Tokio, loopback::t_3_binary_messages())
        }
        #[test]
        fn x_7_a_reverting_close_reaches_the_server_every_time() {
            $crate::run!(Tokio, loopback::x_7_reverting_close_reaches_the_server(&$crate::BOTH))
        }
        #[test]
        fn x_7_a_flooded_session_still_closes_cleanly() {
            $crate::run!(Tokio, loopback::x_7_a_flooded_session_still_closes_cleanly(&$crate::BOTH))
        }
        #[test]
        fn t_3_close_codes_1003_1007_1008_1009_are_our_defect_and_nothing_is_resent() {
            $crate::run!(Tokio, loopback::t_3_defect_codes())
        }
        #[test]
        fn t_3_close_code_1001_is_a_transport_failure_and_a_node_killed_mid_call_is_survived() {
            $crate::run!(Tokio, loopback::t_3_node_killed_mid_call())
        }
        #[test]
        fn t_4_credentials_with_plus_percent_and_non_ascii_pass_on_every_transport() {
            $crate::run!(Tokio, loopback::t_4_credentials_pass())
        }
        #[test]
        fn t_5_unauthenticated_is_never_retried_with_the_same_credentials() {
            $crate::run!(Tokio, loopback::t_5_unauthenticated_not_retried())
        }
        #[test]
        fn t_5_unavailable_backs_off_and_retries_with_the_same_credentials() {
            $crate::run!(Tokio, loopback::t_5_unavailable_backs_off())
        }
        #[test]
        fn t_6_a_frame_ending_its_call_with_out_of_range_or_internal_is_not_resent() {
            $crate::run!(Tokio, loopback::t_6_refused_frame_not_resent())
        }
        #[test]
        fn t_7_a_console_session_ending_with_a_redirect_reconnects_to_the_leaders_console() {
            $crate::run!(Tokio, loopback::t_7_console_redirect())
        }
        #[test]
        fn t_8_a_server_that_accepts_and_never_answers_is_given_up_on() {
            $crate::run!(Tokio, loopback::t_8_silent_server_given_up())
        }
        #[test]
        fn t_8_a_call_whose_reply_never_comes_ends_uncertain_at_its_deadline() {
            $crate::run!(Tokio, loopback::t_8_uncertain_at_deadline())
        }
        #[test]
        fn c_10_a_dropped_wait_keeps_the_outcome_for_unclaimed() {
            $crate::run!(Tokio, loopback::c_10_dropped_wait(Via::Grpc))
        }
        #[test]
        fn a_7_a_backup_waits_its_own_wait_past_every_bound_of_a_call_and_ends_uncertain() {
            $crate::run!(Tokio, loopback::a_7_backup_waits_its_own_wait())
        }
        #[test]
        fn c_10_a_wait_dropped_after_its_outcome_arrived_keeps_it_for_unclaimed() {
            $crate::run!(Tokio, loopback::c_10_dropped_after_outcome())
        }
        #[test]
        fn a_transaction_commits_across_a_leader_change_over_both_transports() {
            $crate::run!(Tokio, loopback::transaction_across_leader_change())
        }
        #[test]
        fn e_3_an_uncertain_command_recovered_through_the_api_ran_once_under_its_reference() {
            $crate::run!(Tokio, loopback::e_3_recovered_once())
        }
    };
    (blocking) => {
        #[test]
        fn t_8_a_wait_of_the_application_is_bounded_and_can_go_on_blocking() {
            $crate::run!(Blocking, loopback::t_8_bounded_wait_goes_on())
        }
        #[test]
        fn t_8_a_slow_reader_ends_the_session_at_the_write_deadline_and_nothing_hangs_blocking() {
            $crate::run!(Blocking, loopback::t_8_slow_reader())
        }
        #[test]
        fn t_8_a_server_that_accepts_and_never_answers_is_given_up_on_blocking() {
            $crate::run!(Blocking, loopback::t_8_silent_server_given_up())
        }
        #[test]
        fn t_8_a_call_whose_reply_never_comes_ends_uncertain_at_its_deadline_blocking() {
            $crate::run!(Blocking, loopback::t_8_uncertain_at_deadline())
        }
        #[test]
        fn a_7_a_backup_waits_its_own_wait_past_every_bound_of_a_call_and_ends_uncertain_blocking() {
            $crate::run!(Blocking, loopback::a_7_backup_waits_its_own_wait())
        }
        #[test]
        fn t_7_a_console_session_ending_with_a_redirect_reconnects_to_the_leaders_console_blocking() {
            $crate::run!(Blocking, loopback::t_7_console_redirect())
        }
        #[test]
        fn t_5_a_503_backs_off_and_retries_with_the_same_credentials_blocking() {
            $crate::run!(Blocking, loopback::t_5_unavailable_backs_off())
        }
        #[test]
        fn t_5_a_401_is_never_retried_with_the_same_credentials_blocking() {
            $crate::run!(Blocking, loopback::t_5_unauthenticated_not_retried())
        }
        #[test]
        fn t_4_credentials_with_plus_percent_and_non_ascii_pass_in_header_and_query_blocking() {
            $crate::run!(Blocking, loopback::t_4_credentials_pass())
        }
        #[test]
        fn t_3_close_codes_1003_1007_1008_1009_are_our_defect_and_nothing_is_resent_blocking() {
            $crate::run!(Blocking, loopback::t_3_defect_codes())
        }
        #[test]
        fn t_3_close_code_1001_is_a_transport_failure_and_a_node_killed_mid_call_is_survived_blocking() {
            $crate::run!(Blocking, loopback::t_3_node_killed_mid_call())
        }
        #[test]
        fn t_3_an_oversized_frame_from_the_server_is_refused_and_the_session_closed_blocking() {
            $crate::run!(Blocking, loopback::oversized_frame_refused())
        }
        #[test]
        fn t_3_a_console_session_sends_binary_messages_on_console_ws_blocking() {
            $crate::run!(Blocking, loopback::t_3_binary_messages())
        }
        #[test]
        fn x_7_a_flooded_session_still_closes_cleanly_blocking() {
            $crate::run!(
                Blocking,
                loopback::x_7_a_flooded_session_still_closes_cleanly(&[$crate::Via::Console(
                    $crate::WsAuth::Query
                )])
            )
        }
        #[test]
        fn x_7_a_reverting_close_reaches_the_server_every_time_blocking() {
            $crate::run!(
                Blocking,
                loopback::x_7_reverting_close_reaches_the_server(&[$crate::Via::Console(
                    $crate::WsAuth::Header
                )])
            )
        }
        #[test]
        fn t_2_wss_verifies_the_host_on_every_connection_including_redirects_blocking() {
            $crate::run!(Blocking, loopback::t_2_verified_on_every_connection())
        }
        #[test]
        fn t_2_https_seeds_need_roots_and_addresses_are_strict_blocking() {
            $crate::run!(Blocking, loopback::t_2_roots_and_strict_addresses())
        }
        #[test]
        fn t_2_an_address_literal_is_checked_against_the_certificate_too_blocking() {
            $crate::run!(Blocking, loopback::t_2_address_literal_checked())
        }
        #[test]
        fn t_2_a_client_started_over_https_never_follows_a_redirect_to_http_blocking() {
            $crate::run!(Blocking, loopback::t_2_never_redirected_to_http())
        }
        #[test]
        fn t_2_a_certificate_for_another_host_name_is_refused_blocking() {
            $crate::run!(Blocking, loopback::t_2_other_name_refused())
        }
        #[test]
        fn e_3_an_uncertain_command_recovered_through_the_api_ran_once_under_its_reference_blocking() {
            $crate::run!(Blocking, loopback::e_3_recovered_once())
        }
        #[test]
        fn c_10_a_wait_dropped_after_its_outcome_arrived_keeps_it_for_unclaimed_blocking() {
            $crate::run!(Blocking, loopback::c_10_dropped_after_outcome())
        }
        #[test]
        fn c_10_a_dropped_wait_keeps_the_outcome_for_unclaimed_blocking() {
            $crate::run!(Blocking, loopback::c_10_dropped_wait(Via::Console(WsAuth::Header)))
        }
        #[test]
        fn a_transaction_commits_across_a_leader_change_blocking() {
            $crate::run!(Blocking, loopback::transaction_across_leader_change())
        }
    };
    (tokio_faults) => {
        #[test]
        fn t_2_a_client_started_over_https_never_follows_a_redirect_to_http() {
            $crate::run!(Tokio, loopback::t_2_never_redirected_to_http())
        }
        #[test]
        fn t_8_a_slow_reader_ends_the_session_at_the_write_deadline_and_nothing_hangs() {
            $crate::run!(Tokio, loopback::t_8_slow_reader())
        }
    };
}
