//! What the client keeps of a command's outcome is the outcome's frame, read in place: a frame
//! whose tables are shared many times over (a peer can build one that unpacks to many times
//! its size) costs the client no more than its own bytes.

use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;
use nervix_protocol::client::{Action, Client, ClientConfig, ClientEvent, CommandResult};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::ClientFrame;
use nervix_protocol::schema::*;
use nervix_protocol::time::{Timestamp, UnixMillis};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static BYTES: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A completed outcome of `reference` whose `diagnostics` vector names one shared table
/// `copies` times, padded with a long message so the verifier's table budget admits it. The
/// shared table sits in the diagnostics: a command's statement outcomes are bounded by its
/// own statements (E-7), its diagnostics are not.
fn shared_outcome(request_id: u64, reference: &str, copies: usize, pad: usize) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(pad + copies * 4 + 1024);
    let text = fbb.create_string("one diagnostic");
    let diagnostic = Diagnostic::create(
        &mut fbb,
        &DiagnosticArgs {
            message: Some(text),
            span: None,
        },
    );
    let shared = fbb.create_vector(&vec![diagnostic; copies]);
    let completed = CommandCompleted::create(&mut fbb, &CommandCompletedArgs::default());
    let reference = fbb.create_string(reference);
    let message = fbb.create_string(&"m".repeat(pad));
    // A command of one statement: its statement outcomes are empty (E-7).
    let statements = fbb.create_vector::<flatbuffers::WIPOffset<StatementOutcome>>(&[]);
    let outcome = CommandOutcome::create(
        &mut fbb,
        &CommandOutcomeArgs {
            execution_reference: Some(reference),
            origin: Some(OutcomeOrigin::Executed),
            disposition_type: CommandDisposition::CommandCompleted,
            disposition: Some(completed.as_union_value()),
            message: Some(message),
            diagnostics: Some(shared),
            statements: Some(statements),
            ..Default::default()
        },
    );
    let reply = Reply::create(
        &mut fbb,
        &ReplyArgs {
            request_id,
            body_type: ReplyBody::CommandOutcome,
            body: Some(outcome.as_union_value()),
        },
    );
    let root = ServerMessage::create(
        &mut fbb,
        &ServerMessageArgs {
            body_type: ServerBody::Reply,
            body: Some(reply.as_union_value()),
        },
    );
    fbb.finish(root, Some("NXSM"));
    Bytes::copy_from_slice(fbb.finished_data())
}

#[test]
fn f_9_a_kept_outcome_costs_its_frame_not_its_unpacked_size() {
    let mut c = Client::new(ClientConfig::new(
        vec![Endpoint::parse("https://seed-1:7443/").unwrap()],
        1,
    ));
    let now = Timestamp::ZERO;
    let h = c
        .execute(now, UnixMillis(1_767_225_600_000), "CREATE RELAY a;")
        .unwrap();
    let Some(Action::Connect { session, .. }) = c.poll_action() else {
        panic!("connect")
    };
    c.handle_connected(now, session);
    let Some(Action::Send { frame, .. }) = c.poll_action() else {
        panic!("send")
    };
    let sent = ClientFrame::check(frame).unwrap();
    let (id, reference) = {
        let view = sent.view();
        let cmd = view.request_as_command_request().unwrap();
        (view.request_id(), cmd.execution_reference().to_string())
    };
    let copies = 100_000;
    let frame = shared_outcome(id, &reference, copies, 1024 * 1024);
    let len = frame.len();
    let before = BYTES.load(Ordering::Relaxed);
    c.handle_frame(now, session, frame);
    let spent = BYTES.load(Ordering::Relaxed) - before;
    let report = std::iter::from_fn(|| c.poll_event())
        .find_map(|e| match e {
            ClientEvent::Command {
                handle,
                result: CommandResult::Completed(r),
            } if handle == h => Some(r),
            _ => None,
        })
        .expect("completed");
    // Everything is there, read in place.
    assert_eq!(report.outcome().diagnostics().len(), copies);
    assert_eq!(report.frame().len(), len);
    assert!(
        spent < len / 4,
        "reading and keeping a {len}-byte outcome allocated {spent} bytes"
    );
}
