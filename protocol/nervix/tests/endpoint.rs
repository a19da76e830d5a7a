//! Server addresses (T-2): strict parsing of the authority, and no way from https to http.

mod support;

use nervix_protocol::client::*;
use nervix_protocol::endpoint::{Endpoint, EndpointError, Endpoints};
use nervix_protocol::schema::*;
use nervix_protocol::time::{Timestamp, UnixMillis};
use support::*;

const WALL: UnixMillis = UnixMillis(1_767_225_600_000);

fn ep(s: &str) -> Endpoint {
    Endpoint::parse(s).unwrap_or_else(|e| panic!("{s:?} is a server address: {e}"))
}

fn refused(s: &str) -> EndpointError {
    match Endpoint::parse(s) {
        Ok(e) => panic!("{s:?} was accepted as {e}"),
        Err(e) => e,
    }
}

#[test]
fn t_2_accepts_reg_names_with_and_without_port_and_trailing_slash() {
    assert_eq!(
        ep("https://node-1.sim:7443/").as_str(),
        "https://node-1.sim:7443/"
    );
    assert_eq!(
        ep("https://node-1.sim:7443").as_str(),
        "https://node-1.sim:7443/"
    );
    assert_eq!(ep("https://example.com/").as_str(), "https://example.com/");
    assert_eq!(ep("http://example.com").as_str(), "http://example.com/");
    assert_eq!(ep("https://a_b~c.d-e:1/").authority(), "a_b~c.d-e:1");
    assert_eq!(ep("https://node:65535/").authority(), "node:65535");
    // Percent-encoded octets and sub-delimiters are part of a registered name (RFC 3986).
    assert_eq!(
        ep("https://caf%C3%A9.example/").authority(),
        "caf%c3%a9.example"
    );
    assert_eq!(ep("https://a!$&'()*+,;=b/").authority(), "a!$&'()*+,;=b");
    // The normal form is lowercase, so one server is learned once.
    assert_eq!(
        ep("https://Node-1.SIM:7443/"),
        ep("https://node-1.sim:7443")
    );
    assert!(ep("https://n/").is_https());
    assert!(!ep("http://n/").is_https());
}

#[test]
fn t_2_accepts_ipv4_and_bracketed_ipv6_hosts() {
    assert_eq!(ep("http://10.0.0.1:80/").authority(), "10.0.0.1:80");
    assert_eq!(ep("https://192.168.1.254").authority(), "192.168.1.254");
    assert_eq!(ep("https://[::1]:7443/").authority(), "[::1]:7443");
    assert_eq!(ep("https://[2001:DB8::1]/").authority(), "[2001:db8::1]");
    assert_eq!(
        ep("https://[::ffff:192.0.2.1]:443").authority(),
        "[::ffff:192.0.2.1]:443"
    );
}

#[test]
fn t_2_refuses_cr_lf_nul_spaces_and_other_control_characters() {
    for s in [
        "https://node\r\n.sim:7443/",
        "https://node.sim:7443/\r\n",
        "https://node.sim\n/",
        "https://node\0.sim/",
        "https://node sim/",
        " https://node.sim/",
        "https://node.sim/ ",
        "https://node.sim:74 43/",
        "https://node\t.sim/",
        "https://node\u{7f}.sim/",
        "https://node\u{85}.sim/",
        "https://node\u{a0}.sim/",
        "https://node.sim:7443/\r\nHost: evil",
    ] {
        assert_eq!(refused(s), EndpointError::ControlOrWhitespace, "{s:?}");
    }
}

#[test]
fn t_2_refuses_an_empty_host() {
    for s in [
        "https://",
        "https:///",
        "https://:7443/",
        "http://:80",
        "https://[]:7443/",
    ] {
        assert_eq!(refused(s), EndpointError::NoHost, "{s:?}");
    }
}

#[test]
fn t_2_refuses_ports_outside_1_to_65535() {
    for s in [
        "https://node:99999999/",
        "https://node:65536/",
        "https://node:0/",
        "https://node:00443/",
        "https://node:/",
        "https://node:-1/",
        "https://node:+443/",
        "https://node:44a/",
        "https://node:18446744073709551617/",
        "https://[::1]:0/",
        "https://[::1]:99999/",
        "https://[::1]7443/",
    ] {
        assert_eq!(refused(s), EndpointError::Port, "{s:?}");
    }
}

#[test]
fn t_2_refuses_host_port_extra() {
    for s in [
        "https://node:7443:extra/",
        "https://node:7443:7444/",
        "https://[::1]:7443:1/",
    ] {
        assert_eq!(refused(s), EndpointError::Port, "{s:?}");
    }
    // An unbracketed IPv6 address reads as a host with several ports.
    assert_eq!(refused("https://::1/"), EndpointError::NoHost);
    assert_eq!(refused("https://2001:db8::1/"), EndpointError::Host);
}

#[test]
fn t_2_refuses_unbalanced_brackets() {
    for s in [
        "https://[::1/",
        "https://[::1:7443/",
        "https://::1]/",
        "https://node]:7443/",
        "https://[::1]]:7443/",
        "https://[[::1]/",
        "https://no[de/",
        "https://[::1][::2]/",
    ] {
        assert_eq!(refused(s), EndpointError::UnbalancedBracket, "{s:?}");
    }
}

#[test]
fn t_2_refuses_hosts_that_are_not_a_name_ipv4_or_ipv6() {
    for s in [
        "https://999.1.1.1/",
        "https://1.2.3/",
        "https://01.2.3.4/",
        "https://1.2.3.4.5/",
        "https://[not-ipv6]/",
        "https://[fe80::1%25eth0]/",
        "https://[v1.future]/",
        "https://[192.0.2.1]/",
        "https://caf\u{e9}.example/",
        "https://a%zz/",
        "https://a%4/",
        "https://a\"b/",
        "https://a<b>/",
        "https://a\\b/",
        "https://a^b/",
        "https://a|b/",
        "https://a{b}/",
        "https://a`b/",
    ] {
        assert_eq!(refused(s), EndpointError::Host, "{s:?}");
    }
}

#[test]
fn t_2_refuses_other_schemes_paths_queries_fragments_and_user_information() {
    for s in [
        "ftp://node/",
        "HTTPS://node/",
        "https:/node/",
        "https:node/",
        "//node/",
        "node:7443",
        "grpc://node:7443/",
        "",
    ] {
        assert_eq!(refused(s), EndpointError::Scheme, "{s:?}");
    }
    assert_eq!(refused("https://node/api"), EndpointError::Path);
    assert_eq!(refused("https://node//"), EndpointError::Path);
    assert_eq!(refused("https://node/?"), EndpointError::Query);
    assert_eq!(refused("https://node?a=1"), EndpointError::Query);
    assert_eq!(refused("https://node/#top"), EndpointError::Fragment);
    assert_eq!(refused("https://node#top"), EndpointError::Fragment);
    assert_eq!(refused("https://user@node/"), EndpointError::UserInfo);
    assert_eq!(
        refused("https://user:pw@node:7443/"),
        EndpointError::UserInfo
    );
    assert_eq!(refused("https://@node/"), EndpointError::UserInfo);
}

#[test]
fn t_2_an_https_seed_refuses_http_from_redirects_and_observations() {
    let mut e = Endpoints::new(vec![ep("https://seed-1:7443/")], 4);
    assert!(e.https_only());
    assert!(
        !e.learn(ep("http://node-2:7080/"), true),
        "redirect to http"
    );
    assert!(
        !e.learn(ep("http://node-3:7080/"), false),
        "observed http leader"
    );
    assert!(e.learned().next().is_none(), "nothing http was kept");
    assert_eq!(e.next_to_try(), Some(ep("https://seed-1:7443/")));
    assert!(e.learn(ep("https://node-2:7443/"), true));
    assert_eq!(e.next_to_try(), Some(ep("https://node-2:7443/")));
}

#[test]
fn t_2_a_mixed_seed_list_is_https_only() {
    let seeds = vec![ep("http://seed-0:7080/"), ep("https://seed-1:7443/")];
    let mut e = Endpoints::new(seeds, 4);
    assert!(e.https_only());
    assert!(!e.learn(ep("http://node-2:7080/"), true));
    assert!(
        !e.learn(ep("http://seed-0:7080/"), true),
        "not even a seed's address"
    );
    for _ in 0..4 {
        let next = e.next_to_try().expect("an https seed is left");
        assert!(next.is_https(), "tried {next}");
    }
}

#[test]
fn t_2_an_all_http_seed_list_may_learn_both() {
    let mut e = Endpoints::new(vec![ep("http://seed-0:7080/")], 4);
    assert!(!e.https_only());
    assert!(e.learn(ep("http://node-2:7080/"), false));
    assert!(e.learn(ep("https://node-3:7443/"), false));
    assert_eq!(e.learned().count(), 2);
}

/// A client over the seeds, with one command sent on its first session.
fn client_with_a_command(seeds: Vec<Endpoint>) -> (Client, SessionId, u64, String, Vec<Endpoint>) {
    let mut c = Client::new(ClientConfig::new(seeds, 3));
    let now = Timestamp::ZERO;
    c.execute(now, WALL, "CREATE RELAY a;").unwrap();
    let mut connects = Vec::new();
    let mut session = None;
    while let Some(a) = c.poll_action() {
        if let Action::Connect {
            session: s,
            endpoint,
        } = a
        {
            connects.push(endpoint);
            session = Some(s);
        }
    }
    let session = session.expect("the client connects");
    c.handle_connected(now, session);
    let mut command = None;
    while let Some(a) = c.poll_action() {
        if let Action::Send { frame, .. } = a {
            let m = sent(&frame);
            if let ClientRequestT::CommandRequest(r) = m.request {
                command = Some((m.request_id, r.execution_reference));
            }
        }
    }
    let (id, reference) = command.expect("the command is sent");
    (c, session, id, reference, connects)
}

fn redirect_to(uri: &str) -> CommandDispositionT {
    CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
        leader: Some(Box::new(LeaderEndpointsT {
            node: "node-2".into(),
            grpc_uri: Some(uri.into()),
            web_console_uri: None,
        })),
    }))
}

fn connects_after(c: &mut Client) -> Vec<Endpoint> {
    let mut out = Vec::new();
    while let Some(a) = c.poll_action() {
        if let Action::Connect { endpoint, .. } = a {
            out.push(endpoint);
        }
    }
    out
}

#[test]
fn t_2_a_client_with_mixed_seeds_starts_over_https_and_never_follows_http() {
    let seeds = vec![ep("http://seed-0:7080/"), ep("https://seed-1:7443/")];
    let (mut c, s, id, reference, first) = client_with_a_command(seeds);
    assert_eq!(
        first,
        [ep("https://seed-1:7443/")],
        "the http seed is never tried"
    );
    c.handle_frame(
        Timestamp::ZERO,
        s,
        outcome(id, &reference, redirect_to("http://node-2:7080/")),
    );
    let connects = connects_after(&mut c);
    assert!(
        connects.iter().all(Endpoint::is_https),
        "an http redirect was followed: {connects:?}"
    );
    assert!(c.learned_endpoints().iter().all(Endpoint::is_https));
}

#[test]
fn t_2_a_redirect_to_a_malformed_authority_connects_nowhere() {
    for bad in [
        "https://node-2\r\n:7443/",
        "https://node 2:7443/",
        "https://node-2\0:7443/",
        "https://:7443/",
        "https://node-2:99999999/",
        "https://node-2:7443:extra/",
        "https://[::1:7443/",
    ] {
        let (mut c, s, id, reference, _) = client_with_a_command(vec![ep("https://seed-1:7443/")]);
        c.handle_frame(
            Timestamp::ZERO,
            s,
            outcome(id, &reference, redirect_to(bad)),
        );
        assert_eq!(connects_after(&mut c), [], "{bad:?} became a connect");
        assert!(c.learned_endpoints().is_empty(), "{bad:?} was learned");
    }
    // A well-formed redirect is followed at once (D-1).
    let (mut c, s, id, reference, _) = client_with_a_command(vec![ep("https://seed-1:7443/")]);
    c.handle_frame(
        Timestamp::ZERO,
        s,
        outcome(id, &reference, redirect_to("https://node-2:7443/")),
    );
    assert_eq!(connects_after(&mut c), [ep("https://node-2:7443/")]);
}
