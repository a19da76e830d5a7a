//! The simulated node answers in valid frames and records outcomes by execution reference.

use bytes::Bytes;
use nervix_harness::SimNode;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientMessageRoot, ServerFrame};
use nervix_protocol::schema::*;
use nervix_protocol::transfer::{TransferAssembler, TransferProgress};

fn command(id: u64, query: &str, reference: &str) -> Bytes {
    Encoder::new()
        .encode::<ClientMessageRoot>(&ClientMessageT {
            request_id: id,
            request: ClientRequestT::CommandRequest(Box::new(CommandRequestT {
                query: query.into(),
                domain: None,
                execution_reference: reference.into(),
                expected_transaction_position: None,
                expected_preview: None,
            })),
        })
        .unwrap()
}

fn one_reply(node: &mut SimNode, frame: Bytes) -> ServerFrame {
    let mut assembler = TransferAssembler::new();
    let mut out = None;
    for bytes in node.handle(frame) {
        let f = ServerFrame::check(bytes).unwrap();
        let reply = f.view().body_as_reply().unwrap();
        if let Some(part) = reply.body_as_transfer_part() {
            if let TransferProgress::Complete(joined) =
                assembler.accept(reply.request_id(), &part).unwrap()
            {
                out = Some(joined);
            }
        } else {
            out = Some(f.clone());
        }
    }
    out.unwrap()
}

fn origin_and_kind(f: &ServerFrame) -> (Option<OutcomeOrigin>, CommandDisposition) {
    let o = f
        .view()
        .body_as_reply()
        .unwrap()
        .body_as_command_outcome()
        .unwrap();
    (o.origin(), o.disposition_type())
}

#[test]
fn sim_node_answers_a_repeated_reference_with_the_recorded_outcome() {
    let mut node = SimNode::new("n1", &["tenant"], 4096);
    let first = one_reply(&mut node, command(1, "CREATE X;", "ref-a"));
    let again = one_reply(&mut node, command(2, "CREATE X;", "ref-a"));
    assert_eq!(
        origin_and_kind(&first),
        (
            Some(OutcomeOrigin::Executed),
            CommandDisposition::CommandCompleted
        )
    );
    assert_eq!(
        origin_and_kind(&again),
        (
            Some(OutcomeOrigin::Recovered),
            CommandDisposition::CommandCompleted
        )
    );
    let other = one_reply(&mut node, command(3, "DROP X;", "ref-a"));
    assert_eq!(
        other
            .view()
            .body_as_reply()
            .unwrap()
            .body_as_command_outcome()
            .unwrap()
            .disposition_type(),
        CommandDisposition::ExecutionReferenceConflict
    );
}

#[test]
fn sim_node_splits_large_replies_into_parts() {
    let mut node = SimNode::new("n1", &["tenant"], 100);
    let frames = node.handle(command(5, &"q".repeat(1000), "ref-b"));
    assert!(frames.len() > 5, "the reply is split");
    let joined = one_reply(
        &mut SimNode::new("n1", &["tenant"], 100),
        command(5, &"q".repeat(1000), "ref-b"),
    );
    assert_eq!(joined.view().body_as_reply().unwrap().request_id(), 5);
}

#[test]
fn sim_node_ends_the_session_on_a_bad_frame() {
    let mut node = SimNode::new("n1", &[], 4096);
    let out = node.handle(Bytes::from_static(b"short"));
    let f = ServerFrame::check(out[0].clone()).unwrap();
    let ending = f.view().body_as_session_ending().unwrap();
    assert!(ending
        .reason_as_protocol_violated()
        .unwrap()
        .message()
        .contains("shorter than 8 bytes"));
}
