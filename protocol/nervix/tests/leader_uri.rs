//! Which endpoint of a named leader the client follows (D-1, T-7): a native client its
//! `grpc_uri`, a WebSocket client its `web_console_uri`, and neither invents the other.

mod support;

use nervix_protocol::client::*;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::schema::*;
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::time::Duration;
use support::*;

const WALL: UnixMillis = UnixMillis(1_767_225_600_000);

fn ep(s: &str) -> Endpoint {
    Endpoint::parse(s).unwrap()
}

fn leader(grpc: Option<&str>, console: Option<&str>) -> Box<LeaderEndpointsT> {
    Box::new(LeaderEndpointsT {
        node: "node-2".into(),
        grpc_uri: grpc.map(str::to_string),
        web_console_uri: console.map(str::to_string),
    })
}

/// Connects, sends one command, answers it with `redirect` (as a disposition, or as the
/// session's end when `ending`), and returns where the client connects next, if anywhere
/// within a second.
fn next_connect(
    target: LeaderUri,
    l: Option<Box<LeaderEndpointsT>>,
    ending: bool,
) -> Option<Endpoint> {
    let mut config = ClientConfig::new(vec![ep("https://seed-1:8443/")], 3);
    config.leader_uri = target;
    let mut c = Client::new(config);
    let now = Timestamp::ZERO;
    c.execute(now, WALL, "CREATE RELAY a;").unwrap();
    let Some(Action::Connect { session, .. }) = c.poll_action() else {
        panic!("a connect was asked for")
    };
    c.handle_connected(now, session);
    let mut request = None;
    while let Some(a) = c.poll_action() {
        if let Action::Send { frame, .. } = a {
            let m = sent(&frame);
            if let ClientRequestT::CommandRequest(cmd) = m.request {
                request = Some((m.request_id, cmd.execution_reference.clone()));
            }
        }
    }
    let (id, reference) = request.expect("the command was sent");
    let frame = if ending {
        server(ServerBodyT::SessionEnding(Box::new(SessionEndingT {
            reason: SessionEndReasonT::LeaderRedirect(Box::new(LeaderRedirectT { leader: l })),
        })))
    } else {
        outcome(
            id,
            &reference,
            CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT { leader: l })),
        )
    };
    c.handle_frame(now, session, frame);
    c.handle_closed(now, session);
    let mut t = now;
    for _ in 0..100 {
        while let Some(a) = c.poll_action() {
            if let Action::Connect { endpoint, .. } = a {
                return Some(endpoint);
            }
        }
        t = t + Duration::from_millis(10);
        c.handle_timeout(t);
    }
    None
}

#[test]
fn t_7_a_websocket_client_follows_the_leaders_web_console_uri() {
    for ending in [false, true] {
        let l = leader(Some("https://node-2:7443/"), Some("https://node-2:8443/"));
        assert_eq!(
            next_connect(LeaderUri::WebConsole, Some(l.clone()), ending),
            Some(ep("https://node-2:8443/")),
            "ending={ending}"
        );
        assert_eq!(
            next_connect(LeaderUri::Grpc, Some(l), ending),
            Some(ep("https://node-2:7443/")),
            "ending={ending}"
        );
    }
}

#[test]
fn t_7_a_leader_without_a_console_endpoint_is_not_made_one_from_its_grpc_uri() {
    for ending in [false, true] {
        let l = leader(Some("https://node-2:7443/"), None);
        let next = next_connect(LeaderUri::WebConsole, Some(l), ending);
        // D-2: it backs off and tries its seed again; it never connects to the grpc_uri.
        assert_eq!(next, Some(ep("https://seed-1:8443/")), "ending={ending}");
    }
}

/// Everything the client asked for, in order: where it connected and what it sent.
#[derive(Debug, Default)]
struct Seen {
    connects: Vec<(Timestamp, Endpoint)>,
    sends: Vec<Timestamp>,
}

/// Takes the client's actions at `now`, accepting every connection it asks for.
fn drain(c: &mut Client, now: Timestamp, seen: &mut Seen) {
    while let Some(a) = c.poll_action() {
        match a {
            Action::Connect { endpoint, session } => {
                seen.connects.push((now, endpoint));
                c.handle_connected(now, session);
            }
            Action::Send { frame, .. } => {
                if matches!(sent(&frame).request, ClientRequestT::CommandRequest(_)) {
                    seen.sends.push(now);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn d_2_a_leader_without_the_endpoint_the_client_needs_is_backed_off_from_and_no_address_is_made() {
    let seed = ep("https://seed-1:8443/");
    for target in [LeaderUri::Grpc, LeaderUri::WebConsole] {
        // The leader names itself and only the endpoint this client does not use: a
        // client that made an address of the node's name, or took the other endpoint,
        // would connect there.
        let other = match target {
            LeaderUri::WebConsole => leader(Some("https://node-2:7443/"), None),
            _ => leader(None, Some("https://node-2:8443/")),
        };
        for ending in [false, true] {
            let why = format!("{target:?} ending={ending}");
            let mut config = ClientConfig::new(vec![seed.clone()], 3);
            config.leader_uri = target;
            let mut c = Client::new(config);
            let mut seen = Seen::default();
            let mut now = Timestamp::ZERO;
            c.execute(now, WALL, "CREATE RELAY a;").unwrap();
            let Some(Action::Connect { session, .. }) = c.poll_action() else {
                panic!("a connect was asked for")
            };
            c.handle_connected(now, session);
            let mut request = None;
            while let Some(a) = c.poll_action() {
                if let Action::Send { frame, .. } = a {
                    let m = sent(&frame);
                    if let ClientRequestT::CommandRequest(cmd) = m.request {
                        request = Some((m.request_id, cmd.execution_reference.clone()));
                    }
                }
            }
            let (id, reference) = request.expect("the command was sent");
            let redirect = LeaderRedirectT {
                leader: Some(other.clone()),
            };
            let frame = if ending {
                server(ServerBodyT::SessionEnding(Box::new(SessionEndingT {
                    reason: SessionEndReasonT::LeaderRedirect(Box::new(redirect)),
                })))
            } else {
                outcome(
                    id,
                    &reference,
                    CommandDispositionT::LeaderRedirect(Box::new(redirect)),
                )
            };
            c.handle_frame(now, session, frame);
            if ending {
                c.handle_closed(now, session);
            }
            drain(&mut c, now, &mut seen);
            assert!(
                seen.connects.is_empty() && seen.sends.is_empty(),
                "{why}: nothing at once: {seen:?}"
            );
            // Ten seconds in steps of a millisecond: the client tries again, after a wait.
            for _ in 0..10_000 {
                now = now + Duration::from_millis(1);
                c.handle_timeout(now);
                drain(&mut c, now, &mut seen);
                if !seen.sends.is_empty() {
                    break;
                }
            }
            let again = seen
                .sends
                .first()
                .copied()
                .or(seen.connects.first().map(|c| c.0));
            let again = again.unwrap_or_else(|| panic!("{why}: never tried again: {seen:?}"));
            // The shortest back-off is half the first one (50 ms by default): a retry at the
            // next tick would be no back-off at all.
            assert!(
                again >= Timestamp::ZERO + Duration::from_millis(25),
                "{why}: it backs off first: {seen:?}"
            );
            assert!(
                seen.connects.iter().all(|(_, e)| *e == seed),
                "{why}: only the seed, never an address the redirect did not name: {seen:?}"
            );
            assert!(c.learned_endpoints().is_empty(), "{why}");
        }
    }
}
