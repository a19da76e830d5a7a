//! A scripted server for exchange tests: decodes what the client sent, builds real replies.
#![allow(dead_code)]

pub mod dataplane;
pub mod rig;
pub mod streams;

use bytes::Bytes;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientFrame, ServerMessageRoot};
use nervix_protocol::schema::*;

pub fn sent(frame: &Bytes) -> ClientMessageT {
    ClientFrame::check(frame.clone())
        .expect("the client sends valid frames")
        .unpack()
}

pub fn server(body: ServerBodyT) -> Bytes {
    Encoder::new()
        .encode::<ServerMessageRoot>(&ServerMessageT { body })
        .unwrap()
}

pub fn reply(request_id: u64, body: ReplyBodyT) -> Bytes {
    server(ServerBodyT::Reply(Box::new(ReplyT { request_id, body })))
}

pub fn domains(request_id: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::DomainList(Box::new(DomainListT { domains: vec![] })),
    )
}

pub fn rejected(request_id: u64, rejection: RequestRejection) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::RequestRejected(Box::new(RequestRejectedT {
            rejection: Some(rejection),
            field: None,
            message: "no".into(),
        })),
    )
}

pub fn notice(text: &str) -> Bytes {
    server(ServerBodyT::ServerNotice(Box::new(ServerNoticeT {
        level: Some(NoticeLevel::Info),
        message: text.into(),
    })))
}

pub fn list_domains() -> ClientRequestT {
    ClientRequestT::ListDomainsRequest(Box::default())
}

pub fn command(query: &str, reference: &str) -> ClientRequestT {
    ClientRequestT::CommandRequest(Box::new(CommandRequestT {
        query: query.into(),
        domain: None,
        execution_reference: reference.into(),
        expected_transaction_position: None,
        expected_preview: None,
    }))
}

pub fn outcome(request_id: u64, reference: &str, disposition: CommandDispositionT) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::CommandOutcome(Box::new(CommandOutcomeT {
            execution_reference: reference.into(),
            origin: Some(OutcomeOrigin::Executed),
            disposition,
            message: String::new(),
            ..Default::default()
        })),
    )
}

pub fn completed() -> CommandDispositionT {
    CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
        already_existed: false,
    }))
}

/// Takes every action and event of `c`; returns the frames it sent.
/// Hands `reply` to the client on `sid` and drains every poll (no action may close the
/// session); true when an event `done` accepts came out.
pub fn answer(
    c: &mut nervix_protocol::client::Client,
    now: nervix_protocol::time::Timestamp,
    sid: nervix_protocol::client::SessionId,
    reply: Bytes,
    mut done: impl FnMut(&nervix_protocol::client::ClientEvent) -> bool,
) -> bool {
    use nervix_protocol::client::Action;
    c.handle_frame(now, sid, reply);
    while let Some(a) = c.poll_action() {
        assert!(!matches!(a, Action::Close { .. }), "the session is kept");
    }
    let mut answered = false;
    while let Some(e) = c.poll_event() {
        answered |= done(&e);
    }
    let _ = c.poll_timeout();
    answered
}

pub fn drain_sent(c: &mut nervix_protocol::client::Client) -> Vec<Bytes> {
    use nervix_protocol::client::Action;
    let mut frames = vec![];
    while let Some(a) = c.poll_action() {
        if let Action::Send { frame, .. } = a {
            frames.push(frame);
        }
    }
    while c.poll_event().is_some() {}
    frames
}

/// A client whose session carries `room` requests at once, its domain selected, opened and
/// ready (a read made it want the session, and its answer came).
pub fn ready_client(
    room: usize,
) -> (
    nervix_protocol::client::Client,
    nervix_protocol::client::SessionId,
) {
    use nervix_protocol::client::{Action, Client, ClientConfig};
    use nervix_protocol::exchange::ExchangeConfig;
    use nervix_protocol::time::Timestamp;
    let mut config = ClientConfig::new(vec![rig::ep("https://seed-1:7443/")], 7);
    config.exchange = ExchangeConfig::default().with_max_in_flight(room);
    let mut c = Client::new(config);
    c.select_domain(Some("d1")).unwrap();
    c.read(
        Timestamp::ZERO,
        ClientRequestT::ListDomainsRequest(Box::default()),
        None,
    )
    .unwrap();
    let sid = loop {
        match c.poll_action() {
            Some(Action::Connect { session, .. }) => break session,
            Some(_) => {}
            None => panic!("no connect asked for"),
        }
    };
    c.handle_connected(Timestamp::ZERO, sid);
    let frames = drain_sent(&mut c);
    let read = sent(frames.last().expect("the read went out"));
    c.handle_frame(Timestamp::ZERO, sid, domains(read.request_id));
    drain_sent(&mut c);
    assert!(c.is_ready());
    (c, sid)
}

/// A ready client ([`ready_client`]) with `others` commands out and unanswered, and room for
/// a few more.
pub fn with_commands_out(
    others: usize,
) -> (
    nervix_protocol::client::Client,
    nervix_protocol::client::SessionId,
) {
    let (mut c, sid) = ready_client(others + 16);
    for i in 0..others {
        c.execute(
            nervix_protocol::time::Timestamp::ZERO,
            rig::WALL,
            &format!("INSERT INTO t VALUES ({i})"),
        )
        .unwrap();
        drain_sent(&mut c);
    }
    (c, sid)
}
