//! The blocking driver end to end over real sockets on 127.0.0.1, against the loopback
//! cluster's WebSocket console: one test (at least) per transport rule the console carries,
//! redirects across real sockets, a node killed mid-call, credentials that break careless
//! encoders, and an oversized frame from the server. Every test runs under a bound of its own.

use nervix_blocking::{
    Client, CommandResult, Config, Credentials, DriverEvent, End, Error, RunResult, SessionLoss,
    WsAuth,
};
use nervix_loopback::{AuthSeen, CallFault, Loopback, LoopbackConfig, Transport as Seen};
use std::time::{Duration, Instant};

/// Credentials with `+`, `%` and non-ASCII characters, whose base64 holds a `+` too.
const USER: &str = "~ü+%";
const PASSWORD: &str = "~~~>>>?";

/// Runs `f` on a thread of its own; the test fails when it has not ended within a minute.
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    nervix_loopback::bounded(Duration::from_secs(60), f)
}

fn server(nodes: usize, tls: bool) -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes,
        tls,
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap()
}

fn config(lb: &Loopback, auth: WsAuth, creds: Credentials) -> Config {
    let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
    let mut c = Config::new(&seeds, creds)
        .unwrap()
        .with_auth(auth)
        .with_timeouts(Duration::from_secs(10), Duration::from_secs(3));
    c.client.backoff_initial = Duration::from_millis(20);
    c.client.backoff_max = Duration::from_millis(400);
    if let Some(der) = lb.certificate_der() {
        c = c.with_root(der.to_vec());
    }
    c
}

fn creds() -> Credentials {
    Credentials::new(USER, PASSWORD)
}

fn connected(lb: &Loopback, auth: WsAuth) -> Client {
    let c = Client::connect(config(lb, auth, creds())).unwrap();
    c.select_domain(Some("tenant")).unwrap();
    c
}

fn completed(r: &CommandResult) -> bool {
    matches!(r, CommandResult::Completed(_))
}

fn reference_of(r: &CommandResult) -> String {
    match r {
        CommandResult::Completed(c) => c.reference().to_string(),
        CommandResult::Uncertain { command, .. } => command.reference.to_string(),
        other => panic!("no reference in {other:?}"),
    }
}

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

fn ended(events: &nervix_blocking::Events) -> Vec<End> {
    events
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            DriverEvent::TransportEnded { end, .. } => Some(end),
            _ => None,
        })
        .collect()
}

// ----- T-2: addresses, and TLS verified against the original host name ------------------------

#[test]
fn t_2_wss_verifies_the_host_on_every_connection_including_redirects_blocking() {
    let lb = server(3, true);
    assert!(lb.console_endpoints()[0].starts_with("https://localhost:"));
    let lb = bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        assert!(completed(&c.execute("CREATE RELAY a;").unwrap()));
        lb.set_leader(1);
        assert!(completed(&c.execute("CREATE RELAY b;").unwrap()));
        lb.set_leader(2);
        assert!(completed(&c.execute("CREATE RELAY c;").unwrap()));
        lb
    });
    let stats = lb.stats();
    let nodes: std::collections::BTreeSet<usize> = stats
        .calls
        .iter()
        .filter(|c| c.accepted)
        .map(|c| c.node)
        .collect();
    assert!(nodes.contains(&1) && nodes.contains(&2), "{nodes:?}");
    assert!(
        stats
            .calls
            .iter()
            .all(|c| c.alpn.as_deref() == Some("http/1.1")),
        "every connection was TLS"
    );
}

#[test]
fn t_2_a_certificate_for_another_host_name_is_refused_blocking() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        tls: true,
        certificate_name: "elsewhere.test".into(),
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap();
    let cfg = config(&lb, WsAuth::Header, creds())
        .with_timeouts(Duration::from_secs(2), Duration::from_secs(1));
    let r = bounded(move || Client::connect(cfg).err());
    assert_eq!(r, Some(Error::Unreachable));
    assert!(lb.stats().calls.is_empty(), "no connection got past TLS");
}

#[test]
fn t_2_an_address_literal_is_checked_against_the_certificate_too_blocking() {
    let lb = server(1, true);
    let port = lb.console_endpoints()[0]
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let ip = format!("https://127.0.0.1:{port}/");
    let cfg = Config::new(&[ip.as_str()], creds())
        .unwrap()
        .with_root(lb.certificate_der().unwrap().to_vec())
        .with_timeouts(Duration::from_secs(2), Duration::from_secs(1));
    assert_eq!(
        bounded(move || Client::connect(cfg).err()),
        Some(Error::Unreachable)
    );
    assert!(
        lb.stats().calls.is_empty(),
        "the certificate names localhost only"
    );
}

#[test]
fn t_2_https_seeds_need_roots_and_addresses_are_strict_blocking() {
    let r = Config::new(&["https://localhost:1/"], creds()).unwrap();
    assert!(matches!(Client::start(r), Err(Error::Config(_))));
    assert!(Config::new(&["https://user@localhost:1/"], creds()).is_err());
    assert!(Config::new(&["https://localhost:1/x"], creds()).is_err());
    assert!(Config::new(&["http://localhost:1/?q"], creds()).is_err());
    assert!(Config::new(&[], creds()).is_err());
}

// ----- T-3: the WebSocket console --------------------------------------------------------------

#[test]
fn t_3_a_console_session_sends_binary_messages_on_console_ws_blocking() {
    let lb = server(1, false);
    let lb = bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        for i in 0..3 {
            assert!(completed(
                &c.execute(&format!("CREATE RELAY w{i};")).unwrap()
            ));
        }
        // A reverting close ends the session with a close frame.
        c.close(true).unwrap();
        assert!(until(Duration::from_secs(2), || lb.stats().clean_closes == 1));
        lb
    });
    let stats = lb.stats();
    assert_eq!(stats.non_binary, 0);
    assert_eq!(stats.references.len(), 3);
    assert!(stats
        .calls
        .iter()
        .all(|c| c.transport == Seen::WebSocket && c.path == "/console/ws"));
    assert_eq!(stats.unclean_closes, 0);
    assert_eq!(
        nervix_blocking::console_url(
            &nervix_protocol::endpoint::Endpoint::parse("https://h:8443/").unwrap(),
            None
        ),
        "wss://h:8443/console/ws"
    );
    assert_eq!(
        nervix_blocking::console_url(
            &nervix_protocol::endpoint::Endpoint::parse("http://h:80/").unwrap(),
            None
        ),
        "ws://h:80/console/ws"
    );
}

#[test]
fn t_3_close_codes_1003_1007_1008_1009_are_our_defect_and_nothing_is_resent_blocking() {
    for code in [1003u16, 1007, 1008, 1009] {
        let lb = server(1, false);
        let lb = bounded(move || {
            let c = connected(&lb, WsAuth::Header);
            let events = c.events().unwrap();
            lb.inject(CallFault::CloseCode(code));
            let r = c.execute("CREATE RELAY d;").unwrap();
            assert!(!completed(&r), "{code}: {r:?}");
            let reference = reference_of(&r);
            std::thread::sleep(Duration::from_millis(500));
            assert_eq!(sent(&lb, &reference), 1, "{code}: never sent again");
            assert!(matches!(
                c.execute("CREATE RELAY e;"),
                Err(Error::Defect(_))
            ));
            assert!(ended(&events).contains(&End::Defect(code)), "{code}");
            lb
        });
        assert_eq!(lb.stats().calls.len(), 1, "{code}: no new connection");
    }
}

#[test]
fn t_3_close_code_1001_is_a_transport_failure_and_a_node_killed_mid_call_is_survived_blocking() {
    let lb = server(3, false);
    bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        let events = c.events().unwrap();
        // The leader runs the command but its reply is lost; then it dies mid-call.
        lb.drop_replies(0, true);
        let pending = c.submit("CREATE RELAY killed;").unwrap();
        let reference = pending.reference().to_string();
        assert!(until(Duration::from_secs(5), || lb
            .stats()
            .references
            .contains(&reference)));
        lb.kill(0);
        lb.set_leader(1);
        let r = pending.wait().unwrap();
        assert!(completed(&r), "{r:?}");
        assert_eq!(reference_of(&r), reference, "recovered under its reference");
        assert_eq!(sent(&lb, &reference), 2, "sent, then repeated once");
        let ends = ended(&events);
        assert!(
            ends.contains(&End::Transport("close code 1001".into())),
            "{ends:?}"
        );
    });
}

#[test]
fn t_3_an_oversized_frame_from_the_server_is_refused_and_the_session_closed_blocking() {
    let lb = server(1, false);
    bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        let events = c.events().unwrap();
        lb.inject(CallFault::OversizedFrame);
        // The reply comes oversized: refused, the session closed, and the command repeated
        // under its reference on the next session (E-3).
        let r = c.execute("CREATE RELAY big;").unwrap();
        assert!(completed(&r), "{r:?}");
        assert_eq!(sent(&lb, &reference_of(&r)), 2, "sent, then repeated once");
        assert!(ended(&events).contains(&End::OversizedFrame));
    });
}

// ----- T-4: credentials on every connection ----------------------------------------------------

#[test]
fn t_4_credentials_with_plus_percent_and_non_ascii_pass_in_header_and_query_blocking() {
    assert!(creds().token().contains('+'), "the token itself holds a +");
    assert!(!creds().query_value().contains('+'));
    for auth in [WsAuth::Header, WsAuth::Query] {
        let lb = server(3, false);
        let lb = bounded(move || {
            let c = connected(&lb, auth);
            assert!(completed(&c.execute("CREATE RELAY a;").unwrap()));
            lb.set_leader(2);
            assert!(completed(&c.execute("CREATE RELAY b;").unwrap()));
            lb
        });
        let stats = lb.stats();
        assert!(stats.calls.len() >= 2, "{auth:?}");
        let want = Some((USER.to_string(), PASSWORD.to_string()));
        for call in &stats.calls {
            let seen = match (&call.auth, auth) {
                (AuthSeen::Header(c), WsAuth::Header) => c.clone(),
                (AuthSeen::Query(c), WsAuth::Query) => c.clone(),
                (other, _) => panic!("{auth:?}: {other:?}"),
            };
            assert_eq!(seen, want, "{auth:?}");
            assert!(call.accepted);
        }
    }
}

// ----- T-5: refused credentials are not retried; unavailable backs off -------------------------

#[test]
fn t_5_a_401_is_never_retried_with_the_same_credentials_blocking() {
    for auth in [WsAuth::Header, WsAuth::Query] {
        let lb = server(1, false);
        bounded(move || {
            let wrong = Credentials::new(USER, "not it");
            let c = Client::start(config(&lb, auth, wrong)).unwrap();
            let r = c.execute("CREATE RELAY x;");
            // Never sent: the session did not open.
            assert!(matches!(r, Ok(CommandResult::Failed(_))), "{auth:?}: {r:?}");
            assert_eq!(
                c.execute("CREATE RELAY y;").err(),
                Some(Error::Unauthenticated)
            );
            std::thread::sleep(Duration::from_millis(1500));
            assert_eq!(lb.stats().calls.len(), 1, "{auth:?}: one attempt only");
            // New credentials open the way again.
            c.set_credentials(creds()).unwrap();
            c.select_domain(Some("tenant")).unwrap();
            assert!(completed(&c.execute("CREATE RELAY z;").unwrap()));
            assert_eq!(lb.stats().calls.len(), 2);
        });
    }
}

#[test]
fn t_5_a_503_backs_off_and_retries_with_the_same_credentials_blocking() {
    let lb = server(1, false);
    lb.inject(CallFault::AuthUnavailable);
    lb.inject(CallFault::AuthUnavailable);
    let lb = bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        assert!(completed(&c.execute("CREATE RELAY a;").unwrap()));
        lb
    });
    let calls = lb.stats().calls;
    assert!(calls.len() >= 3);
    assert!(!calls[0].accepted && !calls[1].accepted && calls[2].accepted);
}

// ----- T-7: a console session follows a redirect to the leader's console ----------------------

#[test]
fn t_7_a_console_session_ending_with_a_redirect_reconnects_to_the_leaders_console_blocking() {
    let lb = server(3, false);
    let lb = bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        assert!(completed(&c.execute("CREATE RELAY a;").unwrap()));
        let events = c.events().unwrap();
        lb.set_leader(2);
        assert!(completed(&c.execute("CREATE RELAY b;").unwrap()));
        let mut opened = Vec::new();
        let mut lost = Vec::new();
        for e in events.drain() {
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
        // The loss is typed: the server ended the session (with its redirect).
        assert!(
            matches!(lost.first(), Some(SessionLoss::Ending(_))),
            "{lost:?}"
        );
        lb
    });
    let stats = lb.stats();
    assert!(stats.calls.iter().all(|c| c.transport == Seen::WebSocket));
    assert!(stats.calls.iter().any(|c| c.node == 2 && c.accepted));
}

// ----- T-8: every wait has a deadline of its own ----------------------------------------------

#[test]
fn t_8_a_server_that_accepts_and_never_answers_is_given_up_on_blocking() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept() {
            held.push(s);
        }
    });
    bounded(move || {
        let seed = format!("http://127.0.0.1:{port}/");
        let cfg = Config::new(&[seed.as_str()], creds())
            .unwrap()
            .with_timeouts(Duration::from_secs(1), Duration::from_millis(300));
        let started = Instant::now();
        assert_eq!(Client::connect(cfg).err(), Some(Error::Unreachable));
        assert!(started.elapsed() < Duration::from_secs(10));
    });
}

#[test]
fn t_8_a_call_whose_reply_never_comes_ends_uncertain_at_its_deadline_blocking() {
    let lb = server(1, false);
    bounded(move || {
        let mut cfg = config(&lb, WsAuth::Header, creds());
        cfg.client.call_timeout = Duration::from_secs(1);
        let c = Client::connect(cfg).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        lb.drop_replies(0, true);
        let started = Instant::now();
        let r = c.execute("CREATE RELAY silent;").unwrap();
        assert!(matches!(r, CommandResult::Uncertain { .. }), "{r:?}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "at its deadline"
        );
        assert!(lb.stats().references.contains(&reference_of(&r)));
    });
}

#[test]
fn t_8_a_wait_of_the_application_is_bounded_and_can_go_on_blocking() {
    let lb = server(1, false);
    bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        lb.drop_replies(0, true);
        let mut pending = c.submit("CREATE RELAY slow;").unwrap();
        let started = Instant::now();
        assert_eq!(
            pending.wait_timeout(Duration::from_millis(200)),
            Err(Error::TimedOut)
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        lb.drop_replies(0, false);
        lb.cut_streams(0);
        // The command is still pending: the wait goes on and gets its result.
        let r = pending.wait_timeout(Duration::from_secs(10)).unwrap();
        assert!(completed(&r), "{r:?}");
    });
}

// ----- the blocking API ------------------------------------------------------------------------

#[test]
fn c_10_a_dropped_wait_keeps_the_outcome_for_unclaimed_blocking() {
    let lb = server(1, false);
    bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        lb.drop_replies(0, true);
        let reference = {
            let pending = c.submit("CREATE RELAY dropped;").unwrap();
            pending.reference().to_string()
            // The caller stops waiting: the command goes on (C-10).
        };
        lb.drop_replies(0, false);
        lb.cut_streams(0);
        let found = loop {
            let u = c.unclaimed().unwrap();
            if let Some(r) = u.into_iter().find(|r| reference_of(r) == reference) {
                break r;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(completed(&found), "{found:?}");
        assert!(c.unclaimed().unwrap().is_empty(), "handed out once");
        assert!(completed(&c.execute("CREATE RELAY after;").unwrap()));
    });
}

#[test]
fn c_10_a_wait_dropped_after_its_outcome_arrived_keeps_it_for_unclaimed_blocking() {
    let lb = server(1, false);
    bounded(move || {
        let c = connected(&lb, WsAuth::Header);
        let pending = c.submit("CREATE RELAY arrived;").unwrap();
        let reference = pending.reference().to_string();
        // A later command on the same session completes: the first outcome was handed to
        // its wait before, and nobody has read it yet.
        assert!(completed(&c.execute("CREATE RELAY later;").unwrap()));
        // The caller stops waiting without reading it (C-10): it must not be lost.
        drop(pending);
        let u = c.unclaimed().unwrap();
        let found = u.iter().find(|r| reference_of(r) == reference);
        assert!(
            found.is_some_and(completed),
            "the outcome comes back through unclaimed: {u:?}"
        );
        assert!(c.unclaimed().unwrap().is_empty(), "handed out once");
    });
}

#[test]
fn a_transaction_commits_across_a_leader_change_blocking() {
    let lb = server(3, false);
    bounded(move || {
        let c = Client::connect(config(&lb, WsAuth::Header, creds())).unwrap();
        assert!(matches!(
            c.run("USE tenant").unwrap(),
            RunResult::DomainSelected(d) if d == "tenant"
        ));
        let tx = c.transaction().unwrap().expect("BEGIN completed");
        assert!(completed(&tx.execute("CREATE RELAY t1;").unwrap()));
        lb.set_leader(1);
        assert!(completed(&tx.execute("CREATE RELAY t2;").unwrap()));
        let r = tx.commit().unwrap();
        assert!(completed(&r), "{r:?}");
        assert_eq!(
            lb.recorded(&reference_of(&r)).as_deref(),
            Some("CommandCompleted")
        );
    });
}

#[test]
fn t_2_a_client_started_over_https_never_follows_a_redirect_to_http_blocking() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 3,
        tls: true,
        plain_nodes: vec![1],
        users: vec![(USER.into(), PASSWORD.into())],
        ..LoopbackConfig::default()
    })
    .unwrap();
    assert!(lb.console_endpoints()[1].starts_with("http://"));
    let lb = bounded(move || {
        let seed = lb.console_endpoints()[0].clone();
        let mut cfg = Config::new(&[seed.as_str()], creds())
            .unwrap()
            .with_root(lb.certificate_der().unwrap().to_vec())
            .with_timeouts(Duration::from_secs(2), Duration::from_secs(1));
        cfg.client.backoff_initial = Duration::from_millis(20);
        cfg.client.backoff_max = Duration::from_millis(200);
        let c = Client::connect(cfg).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        assert!(completed(&c.execute("CREATE RELAY a;").unwrap()));
        let events = c.events().unwrap();
        // The leader moves to the node served over http: every redirect names it.
        lb.set_leader(1);
        let r = c.execute("CREATE RELAY b;").unwrap();
        assert!(!completed(&r), "{r:?}");
        for e in events.drain() {
            if let DriverEvent::SessionOpened { endpoint, .. } = e {
                assert!(endpoint.is_https(), "{endpoint}");
            }
        }
        lb.set_leader(0);
        assert!(completed(&c.execute("CREATE RELAY c;").unwrap()));
        lb
    });
    let stats = lb.stats();
    assert!(
        stats.calls.iter().all(|c| c.node != 1),
        "no call reached the http node"
    );
    assert!(
        stats.calls.iter().all(|c| c.alpn.is_some()),
        "every call was TLS"
    );
}

#[test]
fn t_8_a_slow_reader_ends_the_session_at_the_write_deadline_and_nothing_hangs_blocking() {
    let lb = server(1, false);
    bounded(move || {
        let mut cfg = config(&lb, WsAuth::Header, creds())
            .with_timeouts(Duration::from_secs(4), Duration::from_secs(1));
        cfg.write_timeout = Duration::from_millis(300);
        let c = Client::connect(cfg).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        let events = c.events().unwrap();
        lb.slow_reader(0, Some(Duration::from_secs(3)));
        // More than the socket buffers take while nobody reads.
        let big = format!("CREATE RELAY big SCHEMA '{}';", "x".repeat(1 << 20));
        let pending: Vec<_> = (0..24).map(|_| c.submit(&big).unwrap()).collect();
        let started = Instant::now();
        for p in pending {
            let r = p.wait().unwrap();
            assert!(!completed(&r), "{r:?}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "every command ended by its deadline"
        );
        assert!(
            ended(&events).contains(&End::Transport("write deadline passed".into())),
            "the write deadline ended a session"
        );
        lb.slow_reader(0, None);
        assert!(completed(&c.execute("CREATE RELAY small;").unwrap()));
    });
}

#[test]
fn e_3_an_uncertain_command_recovered_through_the_api_ran_once_under_its_reference_blocking() {
    let lb = server(1, false);
    let config = config(&lb, WsAuth::Header, creds())
        .with_timeouts(Duration::from_millis(800), Duration::from_secs(3));
    let lb = std::sync::Arc::new(lb);
    let l = lb.clone();
    bounded(move || {
        let c = Client::connect(config).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        // The node runs the command but its reply is lost: at its deadline it is uncertain.
        l.drop_replies(0, true);
        let r = c.execute("CREATE RELAY maybe;").unwrap();
        let CommandResult::Uncertain { command, .. } = r else {
            panic!("{r:?}");
        };
        let reference = command.reference.to_string();
        assert_eq!(sent(&l, &reference), 1);
        l.drop_replies(0, false);
        let again = c.recover(&command).unwrap();
        let CommandResult::Completed(report) = &again else {
            panic!("{again:?}");
        };
        assert_eq!(report.reference().to_string(), reference);
        assert_eq!(
            report.origin(),
            Some(nervix_protocol::schema::OutcomeOrigin::Recovered),
            "answered from the record, not run again"
        );
        assert_eq!(sent(&l, &reference), 2, "the same reference went again");
        let _ = c.close(true);
    });
}
