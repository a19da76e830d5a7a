//! `just run`: a client talks to an in-process simulated node in real frames.
//!
//! Every frame the client sends is written by the checked encoder, and every frame it receives
//! passes the checked reader; replies larger than the node's part size arrive as transfer parts
//! and are reassembled. The session core (request routing, recovery, redirects) replaces the
//! hand-rolled client loop below as it lands.

use bytes::Bytes;
use nervix_harness::SimNode;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientMessageRoot, ServerFrame};
use nervix_protocol::schema::*;
use nervix_protocol::transfer::{TransferAssembler, TransferProgress};
use std::process::ExitCode;

struct DemoClient {
    next_id: u64,
    encoder: Encoder,
    assembler: TransferAssembler,
    node: SimNode,
    frames_in: usize,
    parts_in: usize,
}

impl DemoClient {
    fn request(
        &mut self,
        request: ClientRequestT,
    ) -> Result<(Vec<ServerFrame>, ServerFrame), String> {
        self.next_id += 1;
        let id = self.next_id;
        let frame = self
            .encoder
            .encode::<ClientMessageRoot>(&ClientMessageT {
                request_id: id,
                request,
            })
            .map_err(|e| format!("refused to send: {e}"))?;
        let mut unsolicited = Vec::new();
        let mut answer = None;
        for bytes in self.node.handle(frame) {
            self.frames_in += 1;
            let frame = ServerFrame::check_compact(bytes)
                .map_err(|v| format!("violation ({}): {v}", v.rule()))?;
            let Some(reply) = frame.view().body_as_reply() else {
                unsolicited.push(frame);
                continue;
            };
            if reply.request_id() != id {
                return Err(format!(
                    "reply names request {}, {id} is waiting",
                    reply.request_id()
                ));
            }
            if let Some(part) = reply.body_as_transfer_part() {
                self.parts_in += 1;
                match self
                    .assembler
                    .accept(id, &part)
                    .map_err(|v| format!("transfer: {v}"))?
                {
                    TransferProgress::Complete(joined) => answer = Some(joined),
                    _ => continue,
                }
            } else {
                answer = Some(frame.clone());
            }
        }
        let answer = answer.ok_or_else(|| format!("request {id} got no reply"))?;
        Ok((unsolicited, answer))
    }
}

fn command(query: &str, reference: &str) -> ClientRequestT {
    ClientRequestT::CommandRequest(Box::new(CommandRequestT {
        query: query.into(),
        domain: Some("tenant".into()),
        execution_reference: reference.into(),
        expected_transaction_position: None,
        expected_preview: None,
    }))
}

fn outcome_line(frame: &ServerFrame) -> String {
    let view = frame.view();
    let reply = view.body_as_reply().expect("a reply");
    match reply.body_as_command_outcome() {
        Some(o) => format!(
            "request {} -> {} ({}) under {}: {}",
            reply.request_id(),
            o.disposition_type().variant_name().unwrap_or("?"),
            o.origin().and_then(|v| v.variant_name()).unwrap_or("?"),
            o.execution_reference(),
            if o.message().len() > 60 {
                format!("{}...", &o.message()[..60])
            } else {
                o.message().to_string()
            }
        ),
        None => format!(
            "request {} -> {}",
            reply.request_id(),
            reply.body_type().variant_name().unwrap_or("?")
        ),
    }
}

fn run() -> Result<(), String> {
    let mut c = DemoClient {
        next_id: 0,
        encoder: Encoder::new(),
        assembler: TransferAssembler::new(),
        node: SimNode::new("node-1", &["tenant", "analytics"], 512),
        frames_in: 0,
        parts_in: 0,
    };
    println!(
        "nervix-sim: one client, simulated node {:?}, replies above 512 bytes sent in parts",
        c.node.name()
    );

    let (_, domains) = c.request(ClientRequestT::ListDomainsRequest(Box::default()))?;
    let names: Vec<String> = domains
        .view()
        .body_as_reply()
        .and_then(|r| r.body_as_domain_list())
        .map(|l| l.domains().iter().map(|d| d.domain().to_string()).collect())
        .unwrap_or_default();
    println!("domains: {}", names.join(", "));

    let create = "CREATE RELAY orders SCHEMA orders UNBRANCHED;";
    let (_, first) = c.request(command(create, "0192d4e4-7b36-7c3e-9f00-5b2d8c3a1e44"))?;
    println!("{}", outcome_line(&first));
    let (_, again) = c.request(command(create, "0192d4e4-7b36-7c3e-9f00-5b2d8c3a1e44"))?;
    println!(
        "{}  (same reference repeated: the recorded outcome)",
        outcome_line(&again)
    );

    let long = format!("SELECT '{}';", "x".repeat(3000));
    let parts_before = c.parts_in;
    let (_, big) = c.request(command(&long, "0192d4e4-7b36-7c3e-9f00-5b2d8c3a1e45"))?;
    println!(
        "{}  ({} bytes joined from {} transfer parts)",
        outcome_line(&big),
        big.len(),
        c.parts_in - parts_before
    );

    let (rows, opened) = c.request(ClientRequestT::SubscribeRequest(Box::new(
        SubscribeRequestT {
            domain: "tenant".into(),
            statement: "CREATE SUBSCRIPTION live FROM orders;".into(),
            subscription_type: Some(SubscriptionType::Row),
        },
    )))?;
    println!("{}", outcome_line(&opened));
    for frame in &rows {
        println!("unsolicited frame, as the checked reader reports it:");
        for line in frame.report().lines() {
            println!("  {line}");
        }
    }

    let mut broken = c
        .encoder
        .encode::<ClientMessageRoot>(&ClientMessageT {
            request_id: 99,
            request: ClientRequestT::ListDomainsRequest(Box::default()),
        })
        .map_err(|e| e.to_string())?
        .to_vec();
    broken[4..8].copy_from_slice(b"XXXX");
    let ending = c.node.handle(Bytes::from(broken));
    let ending = ServerFrame::check(ending[0].clone()).map_err(|v| v.to_string())?;
    let reason = ending
        .view()
        .body_as_session_ending()
        .and_then(|e| e.reason_as_protocol_violated())
        .map(|p| p.message().to_string())
        .unwrap_or_default();
    println!("a frame with a wrong identifier ends the session: {reason}");
    println!(
        "checked {} server frames ({} transfer parts); every one passed",
        c.frames_in, c.parts_in
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nervix-sim: {e}");
            ExitCode::FAILURE
        }
    }
}
