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
