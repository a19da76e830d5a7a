//! The gate a driver puts between the engine's checks and the send of a command: it sees the
//! command exactly as every attempt sends it, and a refusal leaves no trace.

mod support;

use nervix_protocol::client::{ClientError, GateNote, Gated, RetainedCommand, Routed};
use nervix_protocol::schema::*;
use std::cell::RefCell;
use std::time::Duration;
use support::rig::*;
use support::{completed, reply};

/// A gate that keeps what it saw and refuses.
fn refusing(
    seen: &RefCell<Vec<RetainedCommand>>,
) -> impl FnOnce(&RetainedCommand, GateNote) -> Result<(), &'static str> + '_ {
    move |c, _| {
        seen.borrow_mut().push(c.clone());
        Err("journal full")
    }
}

#[test]
fn a_refused_gate_takes_nothing_and_sends_nothing() {
    let mut r = Rig::new();
    // A session is open and carries an earlier command.
    r.exec("CREATE RELAY z;");
    let sid = r.open();
    let sent_before = r.sent.len();
    let events_before = r.events.len();
    let seen = RefCell::new(Vec::new());
    let e =
        r.c.execute_gated(r.now, WALL, "CREATE RELAY a;", None, None, refusing(&seen))
            .unwrap_err();
    assert_eq!(e, Gated::Gate("journal full"));
    r.pump();
    assert_eq!(r.sent.len(), sent_before, "no frame of a refused command");
    assert_eq!(
        r.events.len(),
        events_before,
        "no event: the caller was told"
    );
    assert_eq!(r.c.outstanding_commands(), 1, "only the earlier command");
    // The session still carries the next command.
    let h = r.exec("CREATE RELAY b;");
    let (_, cmd) = r.last_command();
    assert_eq!(cmd.query, "CREATE RELAY b;");
    assert_eq!(r.sent.last().unwrap().0, sid);
    assert!(r.c.reference_of(h).is_some());
}

#[test]
fn the_gate_sees_the_command_exactly_as_it_is_sent() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let seen = RefCell::new(Vec::new());
    let h =
        r.c.execute_gated(
            r.now,
            WALL,
            "CREATE RELAY a;",
            None,
            None,
            |c: &RetainedCommand, _| {
                seen.borrow_mut().push(c.clone());
                Ok::<(), ()>(())
            },
        )
        .unwrap();
    r.open();
    let (_, cmd) = r.last_command();
    let seen = seen.into_inner();
    assert_eq!(seen.len(), 1, "the gate is met once");
    let c = &seen[0];
    assert_eq!(c.reference.to_string(), cmd.execution_reference);
    assert_eq!(c.query, cmd.query);
    assert_eq!(c.domain, cmd.domain);
    assert_eq!(c.position, cmd.expected_transaction_position);
    assert_eq!(c.preview.as_ref(), cmd.expected_preview.as_deref());
    assert_eq!(
        r.c.reference_of(h).map(|x| x.to_string()),
        Some(cmd.execution_reference.clone())
    );
    assert_eq!(seen[0].domain.as_deref(), Some("d1"));
}

#[test]
fn the_gate_is_not_met_by_a_command_the_engine_refuses() {
    let mut r = Rig::new();
    let seen = RefCell::new(Vec::new());
    // BEGIN needs a selected domain: the engine refuses before the gate.
    let e =
        r.c.execute_gated(r.now, WALL, "BEGIN;", None, None, refusing(&seen))
            .unwrap_err();
    assert_eq!(e, Gated::Client(ClientError::NoDomainSelected));
    assert!(seen.borrow().is_empty());
}

#[test]
fn run_gated_gates_commands_only() {
    let mut r = Rig::new();
    let seen = RefCell::new(Vec::new());
    let e =
        r.c.run_gated(r.now, WALL, "CREATE RELAY a;", refusing(&seen))
            .unwrap_err();
    assert_eq!(e, Gated::Gate("journal full"));
    assert_eq!(seen.borrow().len(), 1);
    assert_eq!(seen.borrow()[0].query, "CREATE RELAY a;");
    // USE and LIST DOMAINS do not travel as commands: the gate is not met.
    let routed =
        r.c.run_gated(r.now, WALL, "USE d1;", refusing(&seen))
            .unwrap();
    assert!(matches!(routed, Routed::DomainSelected(ref d) if d == "d1"));
    let routed =
        r.c.run_gated(r.now, WALL, "LIST DOMAINS;", refusing(&seen))
            .unwrap();
    assert!(matches!(routed, Routed::Request(_)));
    assert_eq!(seen.borrow().len(), 1);
    r.open();
    assert!(r
        .sent
        .iter()
        .all(|(_, m)| !matches!(m.request, ClientRequestT::CommandRequest(_))));
}

#[test]
fn recover_gated_refused_repeats_nothing_and_passed_repeats_exactly() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let s1 = r.open();
    let (_, first) = r.last_command();
    r.c.handle_closed(r.now, s1);
    r.pump();
    r.advance(Duration::from_secs(40));
    let Some(nervix_protocol::client::CommandResult::Uncertain { command, .. }) = r.result(h)
    else {
        panic!("{:?}", r.result(h))
    };
    let sent = r.sent.len();
    let seen = RefCell::new(Vec::new());
    let e =
        r.c.recover_gated(r.now, &command, None, refusing(&seen))
            .unwrap_err();
    assert_eq!(e, Gated::Gate("journal full"));
    assert_eq!(seen.borrow()[0], command);
    r.open();
    assert_eq!(r.sent.len(), sent, "nothing repeated");
    assert_eq!(r.c.outstanding_commands(), 0);
    r.c.recover_gated(r.now, &command, None, |_: &RetainedCommand, _| {
        Ok::<(), ()>(())
    })
    .unwrap();
    r.pump();
    let (_, again) = r.last_command();
    assert_eq!(again, first, "the same command under a new identity");
}

/// E-2 with X-2: a command made while a BEGIN is unanswered waits for the position the
/// BEGIN's status gives, so the command its gate sees (and a journal records) is not the one
/// its attempts send. The gate is told so, and only for such a command: not for the BEGIN,
/// a read, a command made once the BEGIN was answered, or a repetition.
#[test]
fn e_2_the_gate_is_told_which_command_waits_behind_a_begin_for_its_position() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let seen = RefCell::new(Vec::new());
    let gated = |r: &mut Rig, q: &str| {
        r.c.execute_gated(r.now, WALL, q, None, None, |c: &RetainedCommand, n| {
            seen.borrow_mut().push((c.clone(), n.awaits_position));
            Ok::<(), ()>(())
        })
        .unwrap()
    };
    gated(&mut r, "BEGIN;");
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    gated(&mut r, "CREATE RELAY a;");
    gated(&mut r, "SHOW DOMAINS;");
    let held = seen.borrow()[1].0.clone();
    assert_eq!(
        seen.borrow()
            .iter()
            .map(|(c, n)| (c.query.as_str(), *n))
            .collect::<Vec<_>>(),
        [
            ("BEGIN;", false),
            ("CREATE RELAY a;", true),
            ("SHOW DOMAINS;", false)
        ]
    );
    assert_eq!(held.position, None, "unknown when it was made");
    let before = r.sent.len();
    r.feed(
        sid,
        reply(
            bid,
            ReplyBodyT::CommandOutcome(Box::new(CommandOutcomeT {
                execution_reference: bcmd.execution_reference.clone(),
                origin: Some(OutcomeOrigin::Executed),
                disposition: completed(),
                transaction: Some(Box::new(TransactionStatusT {
                    transaction_id: "tx-1".into(),
                    domain: "d1".into(),
                    state: TransactionStateT::TransactionOpen(Box::default()),
                    accepted_operations: 0,
                    applied_operations: 0,
                })),
                ..Default::default()
            })),
        ),
    );
    let released: Vec<_> = r.sent[before..]
        .iter()
        .filter_map(|(_, m)| match &m.request {
            ClientRequestT::CommandRequest(c)
                if c.execution_reference == held.reference.as_str() =>
            {
                Some((**c).clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(released.len(), 1, "released once: {released:?}");
    assert_eq!(released[0].query, held.query);
    assert_eq!(
        released[0].expected_transaction_position,
        Some(0),
        "sent with the position the gate never saw"
    );
    gated(&mut r, "CREATE RELAY b;");
    let (after, note) = seen.borrow()[3].clone();
    assert_eq!((after.position, note), (Some(0), false), "seen as sent");
    let mut repeated = None;
    r.c.recover_gated(r.now, &held, None, |_: &RetainedCommand, n| {
        repeated = Some(n.awaits_position);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(
        repeated,
        Some(false),
        "a repetition carries what it carries"
    );
}
