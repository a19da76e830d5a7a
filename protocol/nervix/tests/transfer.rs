//! F-7: transfer parts join into exactly one verified reply, or the session gets a violation.

use bytes::Bytes;
use nervix_protocol::encode::Encoder;
use nervix_protocol::exchange::{
    EndCause, Exchange, ExchangeConfig, ExchangeEvent, RequestHandle, Unsolicited,
};
use nervix_protocol::frame::*;
use nervix_protocol::limits::{FRAME_LIMIT, TRANSFER_LIMIT};
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use nervix_protocol::transfer::{TransferAssembler, TransferProgress};
use nervix_protocol::violation::{ProtocolViolation, TransferViolation};
use nervix_protocol::Root;
use proptest::prelude::*;

const T0: Timestamp = Timestamp::ZERO;

fn outcome_frame(request_id: u64, message_len: usize) -> Bytes {
    let msg = ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT {
            request_id,
            body: ReplyBodyT::CommandOutcome(Box::new(CommandOutcomeT {
                execution_reference: "ref-1".into(),
                origin: Some(OutcomeOrigin::Executed),
                disposition: CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
                    already_existed: false,
                })),
                message: "m".repeat(message_len),
                ..Default::default()
            })),
        })),
    };
    Encoder::new()
        .encode_with_limit::<ServerMessageRoot>(&msg, TRANSFER_LIMIT)
        .unwrap()
}

fn part_frame(request_id: u64, total: u64, offset: u64, chunk: &[u8]) -> ServerFrame {
    let msg = ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT {
            request_id,
            body: ReplyBodyT::TransferPart(Box::new(TransferPartT {
                total_bytes: total,
                offset,
                chunk: chunk.to_vec(),
            })),
        })),
    };
    ServerFrame::check(Encoder::new().encode::<ServerMessageRoot>(&msg).unwrap()).unwrap()
}

/// Feeds a part the way a session does: from a checked part frame.
fn feed(
    a: &mut TransferAssembler,
    part: &ServerFrame,
) -> Result<TransferProgress, TransferViolation> {
    let view = part.view();
    let reply = view.body_as_reply().unwrap();
    a.accept(reply.request_id(), &reply.body_as_transfer_part().unwrap())
}

fn split(frame: &[u8], sizes: &[usize]) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < frame.len() {
        let n = sizes[i % sizes.len()].max(1).min(frame.len() - at);
        out.push((at as u64, frame[at..at + n].to_vec()));
        at += n;
        i += 1;
    }
    out
}

#[test]
fn f_7_parts_join_into_one_verified_reply() {
    let whole = outcome_frame(7, 5000);
    let total = whole.len() as u64;
    let mut a = TransferAssembler::new();
    let parts = split(&whole, &[2000]);
    assert_eq!(parts.len(), 3);
    for (i, (offset, chunk)) in parts.iter().enumerate() {
        match feed(&mut a, &part_frame(7, total, *offset, chunk)).unwrap() {
            TransferProgress::Pending { received, .. } => {
                assert!(i < 2);
                assert_eq!(received, offset + chunk.len() as u64);
                assert_eq!(a.assembling(), Some(7));
            }
            TransferProgress::Complete(frame) => {
                assert_eq!(i, 2, "complete only after the last byte");
                assert_eq!(frame.bytes(), &whole);
                let reply = frame.view().body_as_reply().unwrap();
                assert_eq!(reply.request_id(), 7);
                assert_eq!(reply.body_type(), ReplyBody::CommandOutcome);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(a.assembling(), None);
}

/// A part frame as a server writes it: the client's send limits (F-6) do not bind a server's
/// chunks, which only have to fit a frame, so it is packed without the encoder.
fn part_bytes(request_id: u64, total: u64, offset: u64, chunk: &[u8]) -> Bytes {
    let msg = ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT {
            request_id,
            body: ReplyBodyT::TransferPart(Box::new(TransferPartT {
                total_bytes: total,
                offset,
                chunk: chunk.to_vec(),
            })),
        })),
    };
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    ServerMessageRoot::finish(&msg, &mut fbb);
    Bytes::copy_from_slice(fbb.finished_data())
}

fn exchange_events(x: &mut Exchange) -> Vec<ExchangeEvent> {
    std::iter::from_fn(|| x.poll_event()).collect()
}

/// A session with one command out under identity 1, whose reference `outcome_frame` names.
fn session_awaiting_outcome() -> (Exchange, RequestHandle) {
    let mut x = Exchange::new(ExchangeConfig::default());
    let command = ClientRequestT::CommandRequest(Box::new(CommandRequestT {
        query: "BACKUP DOMAIN tenant".into(),
        domain: Some("tenant".into()),
        execution_reference: "ref-1".into(),
        expected_transaction_position: None,
        expected_preview: None,
    }));
    let handle = x.request(T0, &command, None).unwrap();
    assert!(x.poll_transmit().is_some());
    (x, handle)
}

#[test]
fn f_7_joined_reply_may_exceed_the_frame_limit() {
    let whole = outcome_frame(1, FRAME_LIMIT + 1000);
    assert!(whole.len() > FRAME_LIMIT);
    // As one frame it is refused: the frame limit binds every single frame.
    assert!(matches!(
        ServerFrame::check(whole.clone()).unwrap_err(),
        ProtocolViolation::FrameTooLarge {
            limit: FRAME_LIMIT,
            ..
        }
    ));

    // As transfer parts through the session's checked reader, it is joined, checked under the
    // transfer limit and delivered whole.
    let (mut x, handle) = session_awaiting_outcome();
    let total = whole.len() as u64;
    let parts = split(&whole, &[FRAME_LIMIT / 2]);
    assert_eq!(parts.len(), 3);
    for (offset, chunk) in &parts {
        assert!(
            exchange_events(&mut x).is_empty(),
            "nothing before the last part"
        );
        x.handle_frame(T0, part_bytes(1, total, *offset, chunk));
    }
    let ev = exchange_events(&mut x);
    assert!(
        matches!(&ev[..], [ExchangeEvent::Replied { handle: h, frame }] if *h == handle && frame.bytes() == &whole),
        "{ev:?}"
    );
    assert!(x.is_open());

    // The joined bytes really are checked: the same reply with a wrong identifier, joined from
    // parts that each pass, ends the session with the joined frame's violation.
    let mut broken = whole.to_vec();
    broken[4..8].copy_from_slice(b"NXCM");
    let (mut x, handle) = session_awaiting_outcome();
    for (offset, chunk) in split(&broken, &[FRAME_LIMIT / 2]) {
        x.handle_frame(T0, part_bytes(1, total, offset, &chunk));
    }
    let ev = exchange_events(&mut x);
    assert!(
        matches!(&ev[..], [
            ExchangeEvent::Interrupted { handle: h, .. },
            ExchangeEvent::Ended { cause: EndCause::Violation(ProtocolViolation::Transfer(TransferViolation::Joined(v))) },
        ] if *h == handle && matches!(**v, ProtocolViolation::WrongIdentifier { .. })),
        "{ev:?}"
    );
    assert!(!x.is_open());
}

#[test]
fn f_7_other_frames_between_parts_are_accepted() {
    let (mut x, outcome_handle) = session_awaiting_outcome();
    let list = x
        .request(
            T0,
            &ClientRequestT::ListDomainsRequest(Box::default()),
            None,
        )
        .unwrap();
    assert!(x.poll_transmit().is_some());
    let whole = outcome_frame(1, 3000);
    let total = whole.len() as u64;
    let parts = split(&whole, &[1000]);
    assert!(parts.len() >= 3);
    let mut enc = Encoder::new();
    let notice = |enc: &mut Encoder, text: &str| {
        enc.encode::<ServerMessageRoot>(&ServerMessageT {
            body: ServerBodyT::ServerNotice(Box::new(ServerNoticeT {
                level: Some(NoticeLevel::Info),
                message: text.into(),
            })),
        })
        .unwrap()
    };
    let domains = enc
        .encode::<ServerMessageRoot>(&ServerMessageT {
            body: ServerBodyT::Reply(Box::new(ReplyT {
                request_id: 2,
                body: ReplyBodyT::DomainList(Box::new(DomainListT { domains: vec![] })),
            })),
        })
        .unwrap();
    let last = parts.len() - 1;
    for (i, (offset, chunk)) in parts.iter().enumerate() {
        x.handle_frame(T0, part_bytes(1, total, *offset, chunk));
        if i == 0 {
            // An unsolicited frame between parts.
            x.handle_frame(T0, notice(&mut enc, "between-1"));
        }
        if i == 1 {
            // The terminal reply of another request between parts, and another notice.
            x.handle_frame(T0, domains.clone());
            x.handle_frame(T0, notice(&mut enc, "between-2"));
            let ev = exchange_events(&mut x);
            assert!(
                matches!(&ev[..], [ExchangeEvent::Replied { handle, frame }]
                    if *handle == list && frame.view().body_as_reply().unwrap().body_type() == ReplyBody::DomainList),
                "the other reply is delivered at once: {ev:?}"
            );
        }
        if i < last {
            assert!(x.is_open(), "part {i} and the frames after it are accepted");
            assert!(exchange_events(&mut x).is_empty(), "no partial reply");
        }
    }
    let ev = exchange_events(&mut x);
    assert!(
        matches!(&ev[..], [ExchangeEvent::Replied { handle, frame }] if *handle == outcome_handle && frame.bytes() == &whole),
        "{ev:?}"
    );
    let notices: Vec<String> = std::iter::from_fn(|| x.poll_unsolicited())
        .map(|u| match u {
            Unsolicited::Frame(f) => f
                .view()
                .body_as_server_notice()
                .unwrap()
                .message()
                .to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(notices, ["between-1", "between-2"]);
    assert!(x.is_open());
}

#[test]
fn f_7_part_naming_another_request_is_refused() {
    let mut a = TransferAssembler::new();
    a.accept_raw(1, 100, 0, &[0; 10]).unwrap();
    assert_eq!(
        a.accept_raw(2, 100, 10, &[0; 10]).unwrap_err(),
        TransferViolation::OtherIdentity {
            assembling: 1,
            found: 2
        }
    );
    assert_eq!(a.assembling(), None, "a violation drops the assembly");
}

#[test]
fn f_7_part_naming_another_total_is_refused() {
    let mut a = TransferAssembler::new();
    a.accept_raw(1, 100, 0, &[0; 10]).unwrap();
    assert_eq!(
        a.accept_raw(1, 101, 10, &[0; 10]).unwrap_err(),
        TransferViolation::TotalChanged {
            expected: 100,
            found: 101
        }
    );
}

#[test]
fn f_7_first_total_above_the_transfer_limit_is_refused() {
    let mut a = TransferAssembler::new();
    let limit = TRANSFER_LIMIT as u64;
    assert!(a.accept_raw(1, limit, 0, &[0; 10]).is_ok());
    let mut a = TransferAssembler::new();
    assert_eq!(
        a.accept_raw(1, limit + 1, 0, &[0; 10]).unwrap_err(),
        TransferViolation::TotalTooLarge {
            total: limit + 1,
            limit
        }
    );
}

#[test]
fn f_7_offset_other_than_bytes_received_is_refused() {
    let mut a = TransferAssembler::new();
    assert_eq!(
        a.accept_raw(1, 100, 5, &[0; 10]).unwrap_err(),
        TransferViolation::OffsetMismatch {
            expected: 0,
            found: 5
        }
    );
    a.accept_raw(1, 100, 0, &[0; 10]).unwrap();
    // A repeated part and a gap are both refused.
    assert_eq!(
        a.accept_raw(1, 100, 0, &[0; 10]).unwrap_err(),
        TransferViolation::OffsetMismatch {
            expected: 10,
            found: 0
        }
    );
    a.accept_raw(1, 100, 0, &[0; 10]).unwrap();
    assert_eq!(
        a.accept_raw(1, 100, 11, &[0; 10]).unwrap_err(),
        TransferViolation::OffsetMismatch {
            expected: 10,
            found: 11
        }
    );
}

#[test]
fn f_7_empty_chunk_is_refused() {
    let mut a = TransferAssembler::new();
    assert_eq!(
        a.accept_raw(1, 100, 0, &[]).unwrap_err(),
        TransferViolation::EmptyChunk
    );
    // On the wire an empty chunk is already a schema violation of the part frame.
    let msg = ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT {
            request_id: 1,
            body: ReplyBodyT::TransferPart(Box::new(TransferPartT {
                total_bytes: 10,
                offset: 0,
                chunk: vec![],
            })),
        })),
    };
    assert!(Encoder::new().encode::<ServerMessageRoot>(&msg).is_err());
}

#[test]
fn f_7_part_running_past_the_total_is_refused() {
    let mut a = TransferAssembler::new();
    a.accept_raw(1, 15, 0, &[0; 10]).unwrap();
    assert_eq!(
        a.accept_raw(1, 15, 10, &[0; 10]).unwrap_err(),
        TransferViolation::Overrun { total: 15, end: 20 }
    );
}

fn join(request_id: u64, whole: &[u8]) -> Result<TransferProgress, TransferViolation> {
    let mut a = TransferAssembler::new();
    let mut last = None;
    for (offset, chunk) in split(whole, &[64]) {
        last = Some(a.accept_raw(request_id, whole.len() as u64, offset, &chunk)?);
    }
    Ok(last.unwrap())
}

#[test]
fn f_7_joined_bytes_must_verify_as_a_reply_to_the_same_request() {
    // Not a frame at all.
    let garbage = vec![0xabu8; 300];
    assert!(matches!(
        join(1, &garbage).unwrap_err(),
        TransferViolation::Joined(v) if matches!(*v, ProtocolViolation::WrongIdentifier { .. })
    ));
    // A valid frame that answers another request.
    assert_eq!(
        join(1, &outcome_frame(2, 200)).unwrap_err(),
        TransferViolation::JoinedOtherRequest {
            expected: 1,
            found: 2
        }
    );
    // A valid frame that is not a reply.
    let notice = ServerMessageT {
        body: ServerBodyT::ServerNotice(Box::new(ServerNoticeT {
            level: Some(NoticeLevel::Warning),
            message: "x".repeat(200),
        })),
    };
    let notice = Encoder::new().encode::<ServerMessageRoot>(&notice).unwrap();
    assert_eq!(
        join(1, &notice).unwrap_err(),
        TransferViolation::JoinedNotReply {
            found: "ServerNotice"
        }
    );
    // A reply that is itself a transfer part.
    let nested = part_frame(1, 5000, 0, &[1; 300]);
    assert_eq!(
        join(1, nested.bytes()).unwrap_err(),
        TransferViolation::JoinedIsTransferPart
    );
    // And the right one joins.
    assert!(matches!(
        join(1, &outcome_frame(1, 200)),
        Ok(TransferProgress::Complete(_))
    ));
}

proptest! {
    /// However a reply is cut, the assembler yields nothing until the last byte, and then
    /// exactly the original frame; any corruption of one part's offset or total is refused and
    /// never yields a reply.
    #[test]
    fn f_7_no_partial_reply_is_ever_delivered(
        sizes in proptest::collection::vec(1usize..700, 1..6),
        corrupt in proptest::option::of((0usize..20, 0u8..3)),
    ) {
        let whole = outcome_frame(5, 1500);
        let parts = split(&whole, &sizes);
        let total = whole.len() as u64;
        let mut a = TransferAssembler::new();
        let mut completed = 0;
        for (i, (offset, chunk)) in parts.iter().enumerate() {
            let (mut id, mut t, mut off) = (5, total, *offset);
            if let Some((at, how)) = corrupt {
                if at == i {
                    match how { 0 => id = 6, 1 => t += 1, _ => off += 1 }
                }
            }
            match a.accept_raw(id, t, off, chunk) {
                Ok(TransferProgress::Pending { received, .. }) => {
                    prop_assert!(received < total);
                }
                Ok(TransferProgress::Complete(f)) => {
                    completed += 1;
                    prop_assert_eq!(i, parts.len() - 1);
                    prop_assert_eq!(f.bytes(), &whole);
                }
                Ok(other) => prop_assert!(false, "{:?}", other),
                Err(_) => {
                    // Errors come only from a corrupted part or after it, and end the transfer.
                    prop_assert!(corrupt.is_some_and(|(at, _)| at <= i));
                    prop_assert_eq!(completed, 0);
                    return Ok(());
                }
            }
        }
        let corrupted = corrupt.map(|(at, _)| at < parts.len()).unwrap_or(false);
        // A corrupted transfer that raised no error is still incomplete: never a reply.
        prop_assert_eq!(completed, if corrupted { 0 } else { 1 });
    }
}

#[test]
fn f_7_a_part_naming_identity_zero_is_refused() {
    let mut a = TransferAssembler::new();
    assert_eq!(
        a.accept_raw(0, 100, 0, &[1; 10]).unwrap_err(),
        TransferViolation::ZeroIdentity
    );
    // Nothing was started: a real request's parts assemble from their first byte.
    assert!(a.accept_raw(3, 20, 0, &[1; 10]).is_ok());
}
