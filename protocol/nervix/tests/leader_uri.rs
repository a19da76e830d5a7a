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
