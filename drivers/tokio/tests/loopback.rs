//! The tokio driver end to end over real sockets on 127.0.0.1, against the loopback cluster:
//! one test (at least) per transport rule, redirects across real sockets, a node killed
//! mid-call, credentials that break careless encoders, and an oversized frame from the server.
//! Every test is bounded by a timeout of its own.

use nervix_loopback::{AuthSeen, CallFault, Loopback, LoopbackConfig, Transport as Seen};
use nervix_tokio::{
    Client, CommandResult, Config, Credentials, DriverEvent, End, Error, Transport, WsAuth,
};
use std::future::Future;
use std::time::Duration;

/// Credentials with `+`, `%` and non-ASCII characters, whose base64 holds a `+` too.
const USER: &str = "~ü+%";
const PASSWORD: &str = "~~~>>>?";

fn block<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test ends within its bound")
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

const WS: Transport = Transport::WebSocket(WsAuth::Header);
const WS_QUERY: Transport = Transport::WebSocket(WsAuth::Query);
const TRANSPORTS: [Transport; 2] = [Transport::Grpc, WS];

fn config(lb: &Loopback, transport: Transport, creds: Credentials) -> Config {
    let seeds: Vec<&str> = match transport {
        Transport::Grpc => lb.grpc_endpoints().iter().map(String::as_str).collect(),
        _ => lb.console_endpoints().iter().map(String::as_str).collect(),
    };
    let mut c = Config::new(&seeds, creds, transport)
        .unwrap()
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

async fn connected(lb: &Loopback, transport: Transport) -> Client {
    let c = Client::connect(config(lb, transport, creds()))
        .await
        .unwrap();
    c.select_domain(Some("tenant")).await.unwrap();
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

/// Waits until `cond` holds, polling the server; false when `within` passed first.
async fn until(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < end {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond()
}

// ----- T-1: gRPC over HTTP/2, one raw frame per message ---------------------------------------

#[test]
fn t_1_a_grpc_session_carries_commands_as_length_prefixed_frames() {
    let lb = server(1, false);
    block(async {
        let c = connected(&lb, Transport::Grpc).await;
        for i in 0..5 {
            let r = c.execute(&format!("CREATE RELAY r{i};")).await.unwrap();
            assert!(completed(&r), "{r:?}");
        }
    });
    let stats = lb.stats();
    assert!(stats.calls.iter().all(|c| c.transport == Seen::Grpc
        && c.path == "/nervix.session.Session/Exchange"
        && c.accepted));
    // Five commands and the opening listing, each one message the server decoded as a frame.
    assert_eq!(stats.references.len(), 5);
    assert!(stats.frames >= 6);
}

#[test]
fn t_1_grpc_messages_are_uncompressed_and_limited_to_the_frame_limit() {
    let m = nervix_tokio::grpc_message(b"NXCM....");
    assert_eq!(
        &m[..5],
        &[0, 0, 0, 0, 8],
        "flag 0 (uncompressed), then the length"
    );
    let mut r = nervix_tokio::MessageReader::default();
    let limit = nervix_protocol::limits::FRAME_LIMIT;
    let mut at = vec![0u8];
    at.extend_from_slice(&(limit as u32).to_be_bytes());
    r.push(&at);
    assert_eq!(r.next_message(), Ok(None), "exactly the limit is read on");
    let mut over = nervix_tokio::MessageReader::default();
    let mut big = vec![0u8];
    big.extend_from_slice(&(limit as u32 + 1).to_be_bytes());
    over.push(&big);
    assert_eq!(
        over.next_message(),
        Err(nervix_tokio::MessageError::TooLarge(limit + 1)),
        "one byte more is refused before it is read"
    );
    let mut z = nervix_tokio::MessageReader::default();
    z.push(&[1, 0, 0, 0, 1, 7]);
    assert_eq!(
        z.next_message(),
        Err(nervix_tokio::MessageError::Compressed)
    );
}

#[test]
fn t_1_an_oversized_frame_from_the_server_is_refused_and_the_session_closed() {
    for transport in TRANSPORTS {
        let lb = server(1, false);
        block(async {
            let c = connected(&lb, transport).await;
            let events = c.events();
            lb.inject(CallFault::OversizedFrame);
            // The reply comes as an oversized message: refused unread, the session closed,
            // and the command repeated under its reference on the next session (E-3).
            let r = c.execute("CREATE RELAY big;").await.unwrap();
            assert!(completed(&r), "{transport:?}: {r:?}");
            let mut refused = false;
            while let Ok(e) = events.try_recv() {
                if let DriverEvent::TransportEnded { end, .. } = e {
                    refused |= end == End::OversizedFrame;
                }
            }
            assert!(
                refused,
                "{transport:?}: the oversized frame ended the session"
            );
            let reference = reference_of(&r);
            let sent = lb
                .stats()
                .references
                .iter()
                .filter(|x| **x == reference)
                .count();
            assert_eq!(sent, 2, "{transport:?}: sent, then repeated once");
        });
    }
}

// ----- T-2: TLS verified against the original host name ---------------------------------------

#[test]
fn t_2_https_and_wss_verify_the_host_on_every_connection_including_redirects() {
    for transport in TRANSPORTS {
        let lb = server(3, true);
        block(async {
            assert!(lb.grpc_endpoints()[0].starts_with("https://localhost:"));
            let c = connected(&lb, transport).await;
            assert!(completed(&c.execute("CREATE RELAY a;").await.unwrap()));
            lb.set_leader(1);
            assert!(completed(&c.execute("CREATE RELAY b;").await.unwrap()));
            lb.set_leader(2);
            assert!(completed(&c.execute("CREATE RELAY c;").await.unwrap()));
        });
        let stats = lb.stats();
        let nodes: std::collections::BTreeSet<usize> = stats
            .calls
            .iter()
            .filter(|c| c.accepted)
            .map(|c| c.node)
            .collect();
        assert!(
            nodes.contains(&1) && nodes.contains(&2),
            "{transport:?}: {nodes:?}"
        );
        let alpn = match transport {
            Transport::Grpc => "h2",
            _ => "http/1.1",
        };
        assert!(
            stats.calls.iter().all(|c| c.alpn.as_deref() == Some(alpn)),
            "{transport:?}: every call was TLS"
        );
    }
}

#[test]
fn t_2_a_certificate_for_another_host_name_is_refused() {
    for transport in TRANSPORTS {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            tls: true,
            certificate_name: "elsewhere.test".into(),
            users: vec![(USER.into(), PASSWORD.into())],
            ..LoopbackConfig::default()
        })
        .unwrap();
        block(async {
            let mut cfg = config(&lb, transport, creds());
            cfg.client.connect_timeout = Duration::from_secs(1);
            let r =
                Client::connect(cfg.with_timeouts(Duration::from_secs(2), Duration::from_secs(1)))
                    .await;
            assert_eq!(r.err(), Some(Error::Unreachable), "{transport:?}");
        });
        assert!(lb.stats().calls.is_empty(), "no call got past TLS");
    }
}

#[test]
fn t_2_an_address_literal_is_checked_against_the_certificate_too() {
    let lb = server(1, true);
    let port = lb.grpc_endpoints()[0]
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    let ip = format!("https://127.0.0.1:{port}/");
    block(async {
        let cfg = Config::new(&[ip.as_str()], creds(), Transport::Grpc)
            .unwrap()
            .with_root(lb.certificate_der().unwrap().to_vec())
            .with_timeouts(Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(Client::connect(cfg).await.err(), Some(Error::Unreachable));
    });
    assert!(
        lb.stats().calls.is_empty(),
        "the certificate names localhost only"
    );
}

#[test]
fn t_2_https_seeds_need_roots_and_addresses_are_strict() {
    let r = Config::new(&["https://localhost:1/"], creds(), Transport::Grpc).unwrap();
    assert!(matches!(Client::start(r), Err(Error::Config(_))));
    assert!(Config::new(&["https://user@localhost:1/"], creds(), Transport::Grpc).is_err());
    assert!(Config::new(&["https://localhost:1/x"], creds(), Transport::Grpc).is_err());
}

// ----- T-3: the WebSocket console --------------------------------------------------------------

#[test]
fn t_3_a_console_session_sends_binary_messages_on_console_ws() {
    let lb = server(1, false);
    block(async {
        let c = connected(&lb, WS).await;
        for i in 0..3 {
            assert!(completed(
                &c.execute(&format!("CREATE RELAY w{i};")).await.unwrap()
            ));
        }
    });
    let stats = lb.stats();
    assert_eq!(stats.non_binary, 0);
    assert_eq!(stats.references.len(), 3);
    assert!(stats
        .calls
        .iter()
        .all(|c| c.transport == Seen::WebSocket && c.path == "/console/ws"));
    assert_eq!(
        nervix_tokio::console_url(
            &nervix_protocol::endpoint::Endpoint::parse("https://h:8443/").unwrap(),
            None
        ),
        "wss://h:8443/console/ws"
    );
}

#[test]
fn t_3_close_codes_1003_1007_1008_1009_are_our_defect_and_nothing_is_resent() {
    for code in [1003u16, 1007, 1008, 1009] {
        let lb = server(1, false);
        block(async {
            let c = connected(&lb, WS).await;
            lb.inject(CallFault::CloseCode(code));
            let r = c.execute("CREATE RELAY d;").await.unwrap();
            assert!(!completed(&r), "{code}: {r:?}");
            let reference = reference_of(&r);
            tokio::time::sleep(Duration::from_millis(500)).await;
            let sent = lb
                .stats()
                .references
                .iter()
                .filter(|x| **x == reference)
                .count();
            assert_eq!(sent, 1, "{code}: the frame is never sent again");
            assert!(matches!(
                c.execute("CREATE RELAY e;").await,
                Err(Error::Defect(_))
            ));
        });
        assert_eq!(lb.stats().calls.len(), 1, "{code}: no new session");
    }
}

#[test]
fn t_3_close_code_1001_is_a_transport_failure_and_a_node_killed_mid_call_is_survived() {
    for transport in TRANSPORTS {
        let lb = server(3, false);
        block(async {
            let c = connected(&lb, transport).await;
            let events = c.events();
            // The leader runs the command but its reply is lost; then it dies mid-call.
            lb.drop_replies(0, true);
            let pending = c.submit("CREATE RELAY killed;").await.unwrap();
            let reference = pending.reference().to_string();
            assert!(
                until(Duration::from_secs(5), || lb
                    .stats()
                    .references
                    .contains(&reference))
                .await
            );
            lb.kill(0);
            lb.set_leader(1);
            let r = pending.await.unwrap();
            assert!(completed(&r), "{transport:?}: {r:?}");
            assert_eq!(
                reference_of(&r),
                reference,
                "recovered under the same reference"
            );
            let mut ended = Vec::new();
            while let Ok(e) = events.try_recv() {
                if let DriverEvent::TransportEnded { end, .. } = e {
                    ended.push(end);
                }
            }
            if transport == WS {
                assert!(
                    ended.contains(&End::Transport("close code 1001".into())),
                    "{ended:?}"
                );
            }
        });
    }
}

// ----- T-4: credentials on every call ----------------------------------------------------------

#[test]
fn t_4_credentials_with_plus_percent_and_non_ascii_pass_on_every_transport() {
    assert!(creds().token().contains('+'), "the token itself holds a +");
    assert!(!creds().query_value().contains('+'));
    for transport in [Transport::Grpc, WS, WS_QUERY] {
        let lb = server(3, false);
        block(async {
            let c = connected(&lb, transport).await;
            assert!(completed(&c.execute("CREATE RELAY a;").await.unwrap()));
            lb.set_leader(2);
            assert!(completed(&c.execute("CREATE RELAY b;").await.unwrap()));
        });
        let stats = lb.stats();
        assert!(stats.calls.len() >= 2, "{transport:?}");
        let want = Some((USER.to_string(), PASSWORD.to_string()));
        for call in &stats.calls {
            let seen = match (&call.auth, transport) {
                (AuthSeen::Header(c), Transport::Grpc | WS) => c.clone(),
                (AuthSeen::Query(c), WS_QUERY) => c.clone(),
                (other, _) => panic!("{transport:?}: {other:?}"),
            };
            assert_eq!(seen, want, "{transport:?}");
            assert!(call.accepted);
        }
    }
}

// ----- T-5: refused credentials are not retried; unavailable backs off -------------------------

#[test]
fn t_5_unauthenticated_is_never_retried_with_the_same_credentials() {
    for transport in [Transport::Grpc, WS, WS_QUERY] {
        let lb = server(1, false);
        block(async {
            let wrong = Credentials::new(USER, "not it");
            let c = Client::start(config(&lb, transport, wrong)).unwrap();
            let r = c.execute("CREATE RELAY x;").await;
            // Never sent: the session did not open.
            assert!(
                matches!(r, Ok(CommandResult::Failed(_))),
                "{transport:?}: {r:?}"
            );
            assert_eq!(
                c.execute("CREATE RELAY y;").await.err(),
                Some(Error::Unauthenticated)
            );
            tokio::time::sleep(Duration::from_millis(1500)).await;
            assert_eq!(lb.stats().calls.len(), 1, "{transport:?}: one attempt only");
            // New credentials open the way again.
            c.set_credentials(creds()).await.unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            assert!(completed(&c.execute("CREATE RELAY z;").await.unwrap()));
        });
    }
}

#[test]
fn t_5_unavailable_backs_off_and_retries_with_the_same_credentials() {
    for transport in TRANSPORTS {
        let lb = server(1, false);
        lb.inject(CallFault::AuthUnavailable);
        lb.inject(CallFault::AuthUnavailable);
        block(async {
            let c = connected(&lb, transport).await;
            assert!(completed(&c.execute("CREATE RELAY a;").await.unwrap()));
        });
        let calls = lb.stats().calls;
        assert!(calls.len() >= 3, "{transport:?}");
        assert!(!calls[0].accepted && !calls[1].accepted && calls[2].accepted);
    }
}

// ----- T-6: a frame ended with OUT_OF_RANGE or INTERNAL is not resent --------------------------

#[test]
fn t_6_a_frame_ending_its_call_with_out_of_range_or_internal_is_not_resent() {
    for code in [11u32, 13] {
        let lb = server(1, false);
        block(async {
            let c = connected(&lb, Transport::Grpc).await;
            lb.inject(CallFault::GrpcStatus(code));
            let r = c.execute("CREATE RELAY refused;").await.unwrap();
            assert!(
                matches!(r, CommandResult::Uncertain { .. }),
                "{code}: {r:?}"
            );
            let reference = reference_of(&r);
            tokio::time::sleep(Duration::from_millis(800)).await;
            let stats = lb.stats();
            assert_eq!(
                stats.references.iter().filter(|x| **x == reference).count(),
                1,
                "{code}: never resent"
            );
            assert_eq!(stats.calls.len(), 1, "{code}: no new call");
            assert!(matches!(
                c.execute("CREATE RELAY again;").await,
                Err(Error::Defect(_))
            ));
        });
    }
}

// ----- T-7: a console session follows a redirect to the leader's console ----------------------

#[test]
fn t_7_a_console_session_ending_with_a_redirect_reconnects_to_the_leaders_console() {
    let lb = server(3, false);
    block(async {
        let c = connected(&lb, WS).await;
        assert!(completed(&c.execute("CREATE RELAY a;").await.unwrap()));
        let events = c.events();
        lb.set_leader(2);
        assert!(completed(&c.execute("CREATE RELAY b;").await.unwrap()));
        let mut opened = Vec::new();
        while let Ok(e) = events.try_recv() {
            if let DriverEvent::SessionOpened { endpoint, .. } = e {
                opened.push(endpoint.to_string());
            }
        }
        assert_eq!(
            opened.first(),
            Some(&lb.console_endpoints()[2]),
            "{opened:?}"
        );
    });
    let stats = lb.stats();
    assert!(stats.calls.iter().all(|c| c.transport == Seen::WebSocket));
    assert!(stats.calls.iter().any(|c| c.node == 2 && c.accepted));
}

// ----- T-8: every wait has a deadline of its own ----------------------------------------------

#[test]
fn t_8_a_server_that_accepts_and_never_answers_is_given_up_on() {
    block(async {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = silent.local_addr().unwrap().port();
        let hold = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = silent.accept().await {
                held.push(s);
            }
        });
        for transport in TRANSPORTS {
            let seed = format!("http://127.0.0.1:{port}/");
            let cfg = Config::new(&[seed.as_str()], creds(), transport)
                .unwrap()
                .with_timeouts(Duration::from_secs(1), Duration::from_millis(300));
            let started = tokio::time::Instant::now();
            assert_eq!(Client::connect(cfg).await.err(), Some(Error::Unreachable));
            assert!(started.elapsed() < Duration::from_secs(10));
        }
        hold.abort();
    });
}

#[test]
fn t_8_a_call_whose_reply_never_comes_ends_uncertain_at_its_deadline() {
    for transport in TRANSPORTS {
        let lb = server(1, false);
        block(async {
            let mut cfg = config(&lb, transport, creds());
            cfg.client.call_timeout = Duration::from_secs(1);
            let c = Client::connect(cfg).await.unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            lb.drop_replies(0, true);
            let r = c.execute("CREATE RELAY silent;").await.unwrap();
            assert!(
                matches!(r, CommandResult::Uncertain { .. }),
                "{transport:?}: {r:?}"
            );
            let reference = reference_of(&r);
            assert!(lb.stats().references.contains(&reference));
        });
    }
}

// ----- the async API ---------------------------------------------------------------------------

#[test]
fn c_10_a_dropped_wait_keeps_the_outcome_for_unclaimed() {
    let lb = server(1, false);
    block(async {
        let c = connected(&lb, Transport::Grpc).await;
        lb.drop_replies(0, true);
        let reference = {
            let pending = c.submit("CREATE RELAY dropped;").await.unwrap();
            let reference = pending.reference().to_string();
            // The caller gives up waiting; the command goes on (C-10).
            let gave_up = tokio::time::timeout(Duration::from_millis(200), pending).await;
            assert!(gave_up.is_err());
            reference
        };
        lb.drop_replies(0, false);
        lb.cut_streams(0);
        let found = loop {
            let u = c.unclaimed().await.unwrap();
            if let Some(r) = u.into_iter().find(|r| reference_of(r) == reference) {
                break r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(completed(&found), "{found:?}");
        // Other calls were never disturbed.
        assert!(completed(&c.execute("CREATE RELAY after;").await.unwrap()));
    });
}

#[test]
fn c_10_a_wait_dropped_after_its_outcome_arrived_keeps_it_for_unclaimed() {
    for transport in TRANSPORTS {
        let lb = server(1, false);
        block(async {
            let c = connected(&lb, transport).await;
            let pending = c.submit("CREATE RELAY arrived;").await.unwrap();
            let reference = pending.reference().to_string();
            // A later command on the same session completes: the first outcome was handed
            // to its wait before, and nobody has polled it yet.
            assert!(completed(&c.execute("CREATE RELAY later;").await.unwrap()));
            // The caller stops waiting without polling it (C-10): it must not be lost.
            drop(pending);
            let u = c.unclaimed().await.unwrap();
            let found = u.iter().find(|r| reference_of(r) == reference);
            assert!(
                found.is_some_and(completed),
                "{transport:?}: the outcome comes back through unclaimed: {u:?}"
            );
            assert!(c.unclaimed().await.unwrap().is_empty(), "handed out once");
        });
    }
}

#[test]
fn a_transaction_commits_across_a_leader_change_over_both_transports() {
    for transport in TRANSPORTS {
        let lb = server(3, false);
        block(async {
            let c = connected(&lb, transport).await;
            let tx = c.transaction().await.unwrap().expect("BEGIN completed");
            assert!(completed(&tx.execute("CREATE RELAY t1;").await.unwrap()));
            lb.set_leader(1);
            assert!(completed(&tx.execute("CREATE RELAY t2;").await.unwrap()));
            let r = tx.commit().await.unwrap();
            assert!(completed(&r), "{transport:?}: {r:?}");
            assert_eq!(
                lb.recorded(&reference_of(&r)).as_deref(),
                Some("CommandCompleted")
            );
        });
    }
}

// ----- E-2, E-3: an uncertain command repeated exactly through the API -------------------------

#[test]
fn e_3_an_uncertain_command_recovered_through_the_api_ran_once_under_its_reference() {
    for transport in TRANSPORTS {
        let lb = server(1, false);
        block(async {
            let c = Client::connect(
                config(&lb, transport, creds())
                    .with_timeouts(Duration::from_millis(800), Duration::from_secs(3)),
            )
            .await
            .unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            // The node runs the command but its reply is lost: at its deadline it is uncertain.
            lb.drop_replies(0, true);
            let r = c.execute("CREATE RELAY maybe;").await.unwrap();
            let CommandResult::Uncertain { command, .. } = r else {
                panic!("{transport:?}: {r:?}");
            };
            let reference = command.reference.to_string();
            assert!(lb.stats().references.contains(&reference));
            lb.drop_replies(0, false);
            let again = c.recover(&command).await.unwrap();
            let CommandResult::Completed(report) = &again else {
                panic!("{transport:?}: {again:?}");
            };
            assert_eq!(report.reference().to_string(), reference);
            assert_eq!(
                report.origin(),
                Some(nervix_protocol::schema::OutcomeOrigin::Recovered),
                "{transport:?}: answered from the record, not run again"
            );
            let sent = lb
                .stats()
                .references
                .iter()
                .filter(|r| **r == reference)
                .count();
            assert!(sent >= 2, "{transport:?}: the same reference went again");
            c.close(true).await.unwrap();
        });
    }
}
