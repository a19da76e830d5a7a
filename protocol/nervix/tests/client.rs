//! The client across sessions, against a scripted server: commands and exact recovery (E-1 to
//! E-8), routing statements (L-1 to L-3), rejections and cancellation (C-8, C-9), redirects and
//! reconnects (D-1 to D-6) and transactions (X-1 to X-9).

mod support;

use bytes::Bytes;
use nervix_protocol::client::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::schema::*;
use nervix_protocol::statements::{RoutedRequest, StatementError};
use nervix_protocol::time::{Timestamp, UnixMillis};
use nervix_protocol::transaction::{Binding, Ending};
use std::time::Duration;
use support::rig::*;
use support::*;

fn answer(reference: &str, disposition: CommandDispositionT) -> CommandOutcomeT {
    CommandOutcomeT {
        execution_reference: reference.into(),
        origin: Some(OutcomeOrigin::Executed),
        disposition,
        message: String::new(),
        ..Default::default()
    }
}

fn outcome_frame(request_id: u64, o: CommandOutcomeT) -> Bytes {
    reply(request_id, ReplyBodyT::CommandOutcome(Box::new(o)))
}

fn redirect(uri: Option<&str>) -> CommandDispositionT {
    CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
        leader: uri.map(|u| {
            Box::new(LeaderEndpointsT {
                node: "node-2".into(),
                grpc_uri: Some(u.into()),
                web_console_uri: None,
            })
        }),
    }))
}

fn unknown() -> CommandDispositionT {
    CommandDispositionT::OutcomeUnknown(Box::new(OutcomeUnknownT {
        cause: Some(UnknownOutcomeCause::StillApplying),
    }))
}

fn status(id: &str, domain: &str, accepted: u64) -> TransactionStatusT {
    TransactionStatusT {
        transaction_id: id.into(),
        domain: domain.into(),
        state: TransactionStateT::TransactionOpen(Box::default()),
        accepted_operations: accepted,
        applied_operations: 0,
    }
}

fn preview(id: &str, position: u64, basis: u8) -> TransactionPreviewIdentityT {
    TransactionPreviewIdentityT {
        transaction_id: id.into(),
        position,
        planning_basis: Box::new(FingerprintT {
            bytes: vec![basis; 32],
        }),
    }
}

fn attached(status: TransactionStatusT) -> AttachDispositionT {
    AttachDispositionT::TransactionAttached(Box::new(TransactionAttachedT {
        transaction: Box::new(status),
    }))
}

fn attach_reply(request_id: u64, disposition: AttachDispositionT) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::AttachOutcome(Box::new(AttachOutcomeT {
            disposition,
            message: String::new(),
            diagnostics: vec![],
        })),
    )
}

/// BEGIN on a fresh session; returns the rig with transaction `tx-1` bound in domain `d1`.
fn begun() -> (Rig, SessionId) {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let h = r.exec("BEGIN;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(id, o));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    (r, sid)
}

/// An append on the bound session answered with an admission at `position`.
fn append(r: &mut Rig, sid: SessionId, q: &str, accepted: u64, basis: u8) -> CommandHandle {
    let h = r.exec(q);
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", accepted)));
    o.transaction_admission = Some(Box::new(TransactionOperationAdmissionT {
        operation: accepted,
        preview: Box::new(preview("tx-1", accepted, basis)),
    }));
    r.feed(sid, outcome_frame(id, o));
    h
}

// ----- L: routing statements ------------------------------------------------------------

#[test]
fn l_1_every_command_names_the_selected_domain_or_none() {
    let mut r = Rig::new();
    r.exec("SHOW DOMAINS;");
    r.open();
    assert_eq!(
        r.last_command().1.domain,
        None,
        "no domain selected: none is sent"
    );
    r.c.select_domain(Some("tenant")).unwrap();
    r.exec("CREATE RELAY a;");
    assert_eq!(r.last_command().1.domain.as_deref(), Some("tenant"));
    r.c.select_domain(None).unwrap();
    r.exec("CREATE RELAY b;");
    assert_eq!(r.last_command().1.domain, None);
}

#[test]
fn l_2_statements_that_must_travel_alone_are_refused_before_sending() {
    let mut r = Rig::new();
    let refuse = |r: &mut Rig, q: &str| r.c.execute(r.now, WALL, q).unwrap_err();
    assert!(matches!(
        refuse(&mut r, "CREATE SUBSCRIPTION live FROM orders;"),
        ClientError::Statement(StatementError::NeedsOwnRequest {
            request: RoutedRequest::Subscribe,
            ..
        })
    ));
    assert!(matches!(
        refuse(&mut r, "LIST DOMAINS;"),
        ClientError::Statement(StatementError::NeedsOwnRequest {
            request: RoutedRequest::ListDomains,
            ..
        })
    ));
    assert!(matches!(
        refuse(&mut r, "RESTORE FROM 'x';"),
        ClientError::Statement(StatementError::NeedsOwnRequest {
            request: RoutedRequest::Restore,
            ..
        })
    ));
    assert_eq!(
        refuse(&mut r, "CREATE RELAY a; CREATE RELAY b;"),
        ClientError::Statement(StatementError::SeveralOutsideTransaction)
    );
    r.pump();
    assert!(
        r.connects.is_empty() && r.sent.is_empty(),
        "nothing was sent for refused queries"
    );
    // A semicolon inside quotes or comments does not split a statement.
    r.exec("CREATE RELAY a COMMENT 'x; y'; -- trailing; comment");
    r.open();
    assert_eq!(r.sent.len(), 1);
    // Inside a transaction several statements may travel together, but DESCRIBE TRANSACTION
    // and SHOW TRANSACTIONS never with others.
    let (mut r, _) = begun();
    assert!(r
        .c
        .execute(r.now, WALL, "CREATE RELAY a; CREATE RELAY b;")
        .is_ok());
    assert!(matches!(
        r.c.execute(r.now, WALL, "DESCRIBE TRANSACTION; CREATE RELAY c;")
            .unwrap_err(),
        ClientError::Statement(StatementError::MustTravelAlone { .. })
    ));
    assert!(matches!(
        r.c.execute(r.now, WALL, "SHOW TRANSACTIONS; SHOW DOMAINS;")
            .unwrap_err(),
        ClientError::Statement(StatementError::MustTravelAlone { .. })
    ));
}

#[test]
fn l_3_requests_a_held_transaction_forbids_are_refused_locally() {
    let (mut r, _) = begun();
    let now = r.now;
    assert_eq!(
        r.c.follow_clock(now, "d1").unwrap_err(),
        ClientError::InTransaction
    );
    assert_eq!(
        r.c.subscribe(now, "d1", "CREATE SUBSCRIPTION s FROM x;")
            .unwrap_err(),
        ClientError::InTransaction
    );
    assert_eq!(
        r.c.select_domain(Some("other")).unwrap_err(),
        ClientError::InTransaction
    );
    // Every request of the transaction names its domain.
    r.exec("CREATE RELAY a;");
    assert_eq!(r.last_command().1.domain.as_deref(), Some("d1"));
}

// ----- E: commands and execution identity -----------------------------------------------

#[test]
fn e_1_one_uuid_v7_reference_per_command_from_the_wall_clock() {
    let mut r = Rig::new();
    r.exec("CREATE RELAY a;");
    r.exec("CREATE RELAY b;");
    r.open();
    let refs: Vec<String> = r
        .sent
        .iter()
        .map(|(_, m)| match &m.request {
            ClientRequestT::CommandRequest(c) => c.execution_reference.clone(),
            _ => unreachable!(),
        })
        .collect();
    assert_ne!(refs[0], refs[1], "one reference per logical command");
    for s in &refs {
        let reference = ExecutionReference::parse(s).unwrap();
        assert_eq!(
            reference.uuid_v7_millis(),
            Some(WALL.0),
            "a UUIDv7 of the client's time"
        );
    }
    // The alphabet and length are checked.
    assert!(ExecutionReference::parse("a-Z_0.9").is_ok());
    assert!(ExecutionReference::parse("").is_err());
    assert!(ExecutionReference::parse(&"r".repeat(129)).is_err());
    assert!(ExecutionReference::parse(&"r".repeat(128)).is_ok());
    assert!(ExecutionReference::parse("has space").is_err());
    // An application's own reference must be a current UUIDv7 unless the command only reads.
    let own = ExecutionReference::parse("my-read-1").unwrap();
    assert!(r
        .c
        .execute_with(r.now, WALL, "SHOW DOMAINS;", Some(own.clone()), None)
        .is_ok());
    assert!(r
        .c
        .execute_with(r.now, WALL, "CREATE RELAY c;", Some(own), None)
        .is_err());
    let stale = ExecutionReference::new_v7(
        UnixMillis(WALL.0 - 3_600_000),
        &mut nervix_protocol::rng::Rng::new(1),
    );
    assert!(r
        .c
        .execute_with(r.now, WALL, "CREATE RELAY c;", Some(stale), None)
        .is_err());
}

#[test]
fn e_1_every_command_read_or_not_gets_a_uuid_v7_of_the_wall_clock_of_its_own_call() {
    let mut r = Rig::new();
    r.exec("SHOW DOMAINS;");
    r.open();
    // Each call carries its own wall clock: the reference is taken from it, not from an
    // earlier call's or the client's start.
    let calls = [
        ("SHOW DOMAINS;", WALL.0 + 1_000),
        ("CREATE RELAY a;", WALL.0 + 61_000),
        ("DESCRIBE TRANSACTION;", WALL.0 + 7_200_000),
    ];
    let mut refs = Vec::new();
    for (q, wall) in calls {
        let h = r.c.execute(r.now, UnixMillis(wall), q).unwrap();
        r.pump();
        let (_, sent) = r.last_command();
        assert_eq!(sent.query, q);
        assert_eq!(
            r.c.reference_of(h).map(ExecutionReference::as_str),
            Some(sent.execution_reference.as_str()),
            "{q}"
        );
        let reference = ExecutionReference::parse(&sent.execution_reference).unwrap();
        assert_eq!(
            reference.uuid_v7_millis(),
            Some(wall),
            "{q}: a UUIDv7, even for a read"
        );
        refs.push(sent.execution_reference);
    }
    refs.dedup();
    assert_eq!(refs.len(), 3, "one reference per logical command");
}

#[test]
fn e_1_an_applications_reference_that_is_not_a_current_uuid_v7_is_refused_before_any_effect() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let mut rng = nervix_protocol::rng::Rng::new(3);
    let not_v7 = ExecutionReference::parse("my-own-1").unwrap();
    let future = ExecutionReference::new_v7(UnixMillis(WALL.0 + 3_600_000), &mut rng);
    let past = ExecutionReference::new_v7(UnixMillis(WALL.0 - 3_600_000), &mut rng);
    for (q, reference) in [
        ("BEGIN;", not_v7.clone()),
        ("CREATE RELAY c;", not_v7.clone()),
        // A time ahead of the client's is no more current than one behind it.
        ("CREATE RELAY c;", future),
        ("CREATE RELAY c;", past),
    ] {
        let err =
            r.c.execute_with(r.now, WALL, q, Some(reference.clone()), None)
                .unwrap_err();
        assert!(
            matches!(err, ClientError::Reference(_)),
            "{q} {reference}: {err:?}"
        );
    }
    r.pump();
    assert!(
        r.connects.is_empty() && r.sent.is_empty(),
        "nothing refused was sent, nor a session opened for it"
    );
    assert!(r.events.is_empty(), "nor did it end: {:?}", r.events);
    // A read alone may carry the application's own reference, and a current UUIDv7 is
    // taken for anything; each goes out under exactly that reference.
    let current = ExecutionReference::new_v7(WALL, &mut rng);
    for (q, reference) in [
        ("SHOW DOMAINS;", not_v7.clone()),
        ("CREATE RELAY c;", current),
    ] {
        r.c.execute_with(r.now, WALL, q, Some(reference.clone()), None)
            .unwrap();
        r.pump();
        if r.sent.is_empty() {
            r.open();
        }
        let (_, sent) = r.last_command();
        assert_eq!(
            (sent.query.as_str(), sent.execution_reference.as_str()),
            (q, reference.as_str())
        );
    }
    assert_eq!(r.sent.len(), 2);
    // Inside a transaction, one statement that can persist is enough: a read beside it
    // does not excuse the reference, in either order.
    let (mut r, _) = begun();
    let sent = r.sent.len();
    for q in [
        "SHOW DOMAINS; CREATE RELAY c;",
        "CREATE RELAY c; SHOW DOMAINS;",
    ] {
        let err =
            r.c.execute_with(r.now, WALL, q, Some(not_v7.clone()), None)
                .unwrap_err();
        assert!(matches!(err, ClientError::Reference(_)), "{q}: {err:?}");
    }
    r.pump();
    assert_eq!(r.sent.len(), sent, "nothing refused was sent");
}

#[test]
fn e_2_every_repetition_sends_the_command_unchanged_under_a_new_identity() {
    let (mut r, sid) = begun();
    append(&mut r, sid, "CREATE RELAY a;", 1, 1);
    r.exec("CREATE RELAY b;");
    let (first_id, first) = r.last_command();
    r.feed(
        sid,
        outcome_frame(first_id, answer(&first.execution_reference, unknown())),
    );
    r.advance(Duration::from_secs(6));
    let (second_id, second) = r.last_command();
    assert_ne!(first_id, second_id, "a new request identity");
    assert_eq!(
        first, second,
        "query, domain, reference, position and preview unchanged"
    );
    assert_eq!(second.expected_transaction_position, Some(1));
}

#[test]
fn e_3_an_uncertain_command_keeps_its_reference_across_sessions_and_recovery() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let s1 = r.open();
    let (_, first) = r.last_command();
    r.c.handle_closed(r.now, s1);
    r.pump();
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_ne!(s1, s2);
    let (_, again) = r.last_command();
    assert_eq!(
        again.execution_reference, first.execution_reference,
        "never a new reference"
    );
    // Past its deadline it is reported uncertain, naming the reference...
    r.advance(Duration::from_secs(40));
    let Some(CommandResult::Uncertain { command, cause }) = r.result(h) else {
        panic!("{:?}", r.result(h))
    };
    assert_eq!(cause, UncertainCause::Deadline);
    assert_eq!(command.reference.as_str(), first.execution_reference);
    // ...and recovering repeats it exactly, on a new session: s2 answered nothing (T-8).
    let h2 = r.c.recover(r.now, &command, None).unwrap();
    r.advance(Duration::from_secs(1));
    let s3 = r.open();
    assert_ne!(s2, s3);
    let (id, recovered) = r.last_command();
    assert_eq!(recovered, first);
    let mut o = answer(&first.execution_reference, completed());
    o.origin = Some(OutcomeOrigin::Recovered);
    r.feed(s3, outcome_frame(id, o));
    assert!(matches!(r.result(h2), Some(CommandResult::Completed(_))));
}

#[test]
fn e_4_an_expired_reference_is_never_presented_as_the_outcome() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                CommandDispositionT::ExecutionReferenceExpired(Box::default()),
            ),
        ),
    );
    assert!(matches!(
        r.result(h),
        Some(CommandResult::Uncertain {
            cause: UncertainCause::ReferenceExpired,
            ..
        })
    ));
    // A reference older than the retry horizon is not repeated any more.
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 3);
    cfg.retry_horizon = Duration::from_secs(60);
    cfg.call_timeout = Duration::from_secs(600);
    let mut r = Rig::with(cfg);
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, unknown())),
    );
    r.advance(Duration::from_secs(61));
    assert!(matches!(
        r.result(h),
        Some(CommandResult::Uncertain {
            cause: UncertainCause::RetryHorizon,
            ..
        })
    ));
}

/// The result class each disposition leads to on a command's first attempt.
fn first_attempt(disposition: CommandDispositionT) -> (Rig, CommandHandle, Option<CommandResult>) {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, disposition)),
    );
    let res = r.result(h);
    (r, h, res)
}

#[test]
fn e_6_every_disposition_is_acted_on() {
    assert!(matches!(
        first_attempt(completed()).2,
        Some(CommandResult::Completed(_))
    ));
    assert!(matches!(
        first_attempt(CommandDispositionT::RequestFailed(Box::default())).2,
        Some(CommandResult::Failed(Failure::Outcome(_)))
    ));
    // Redirects, detachment and unknown outcomes do not end the command: it is repeated.
    for d in [
        redirect(Some("https://node-2:7443/")),
        redirect(None),
        unknown(),
    ] {
        let (r, h, res) = first_attempt(d);
        assert!(res.is_none(), "{res:?}");
        assert_eq!(r.c.outstanding_commands(), 1);
        let _ = h;
    }
    assert!(matches!(
        first_attempt(CommandDispositionT::TransactionTakenOver(Box::new(
            TransactionTakenOverT {
                transaction_id: "t".into()
            }
        )))
        .2,
        Some(CommandResult::Failed(Failure::Outcome(_)))
    ));
    assert!(matches!(
        first_attempt(CommandDispositionT::ExecutionReferenceConflict(Box::new(
            ExecutionReferenceConflictT {
                conflict: Some(ExecutionReferenceConflictKind::Content)
            }
        )))
        .2,
        Some(CommandResult::Failed(Failure::Outcome(_)))
    ));
    assert!(matches!(
        first_attempt(CommandDispositionT::ExecutionReferenceExpired(
            Box::default()
        ))
        .2,
        Some(CommandResult::Uncertain {
            cause: UncertainCause::ReferenceExpired,
            ..
        })
    ));
    assert!(matches!(
        first_attempt(CommandDispositionT::PreviewStale(Box::new(PreviewStaleT {
            expected: Box::new(preview("t", 1, 1)),
            current: Box::new(preview("t", 2, 2)),
        })))
        .2,
        Some(CommandResult::Failed(Failure::Outcome(_)))
    ));
    // A conflict met by a repetition says nothing of the first attempt: uncertain, not failed.
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, unknown())),
    );
    r.advance(Duration::from_secs(6));
    let (id, _) = r.last_command();
    r.feed(
        sid,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                CommandDispositionT::ExecutionReferenceConflict(Box::new(
                    ExecutionReferenceConflictT {
                        conflict: Some(ExecutionReferenceConflictKind::Content),
                    },
                )),
            ),
        ),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Uncertain { .. })));
}

#[test]
fn e_7_statements_are_reported_one_per_statement_in_written_order() {
    let (mut r, sid) = begun();
    let h = r.exec("CREATE RELAY a; CREATE RELAY b; CREATE RELAY c;");
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.statements = ["a", "b", "c"]
        .iter()
        .map(|m| StatementOutcomeT {
            disposition: StatementDispositionT::CommandCompleted(Box::default()),
            message: (*m).into(),
            diagnostics: vec![],
        })
        .collect();
    r.feed(sid, outcome_frame(id, o));
    let Some(CommandResult::Completed(report)) = r.result(h) else {
        panic!()
    };
    assert_eq!(
        report
            .statements()
            .iter()
            .map(|s| s.message())
            .collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
}

/// E-7: one outcome per statement, up to the one that ended the command: an outcome with
/// more statement outcomes than the command has statements cannot be reported from its
/// statements, and is a protocol violation (the session ends and the command is repeated
/// under its reference); as many, or fewer when a statement ended it, are reported.
#[test]
fn e_7_more_statement_outcomes_than_statements_is_a_violation() {
    let statement = |d: StatementDispositionT| StatementOutcomeT {
        disposition: d,
        message: String::new(),
        diagnostics: vec![],
    };
    let ok = || statement(StatementDispositionT::CommandCompleted(Box::default()));
    // Fewer, the last ending it: reported, with its statements.
    let (mut r, sid) = begun();
    let h = r.exec("CREATE RELAY a; CREATE RELAY b; CREATE RELAY c;");
    let (id, cmd) = r.last_command();
    let mut o = answer(
        &cmd.execution_reference,
        CommandDispositionT::RequestFailed(Box::default()),
    );
    o.statements = vec![
        ok(),
        statement(StatementDispositionT::RequestFailed(Box::default())),
    ];
    r.feed(sid, outcome_frame(id, o));
    let Some(CommandResult::Failed(Failure::Outcome(report))) = r.result(h) else {
        panic!("{:?}", r.result(h))
    };
    assert_eq!(report.statements().len(), 2);
    assert_eq!(r.c.stats().sessions_lost_violation, 0);
    // One more than written: a violation, never reported as the command's outcome.
    let h = r.exec("CREATE RELAY d; CREATE RELAY e;");
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.statements = vec![ok(), ok(), ok()];
    r.feed(sid, outcome_frame(id, o));
    assert_eq!(r.c.stats().sessions_lost_violation, 1);
    assert_eq!(
        r.results(h),
        0,
        "not reported from three outcomes of two statements"
    );
    // A single statement answered with two statement outcomes.
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.statements = vec![ok(), ok()];
    r.feed(sid, outcome_frame(id, o));
    assert_eq!(r.c.stats().sessions_lost_violation, 1);
    assert_eq!(r.results(h), 0);
}

#[test]
fn e_8_origin_is_information_only() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.origin = Some(OutcomeOrigin::Recovered);
    o.message = "created when it first ran".into();
    r.feed(sid, outcome_frame(id, o));
    let Some(CommandResult::Completed(report)) = r.result(h) else {
        panic!()
    };
    assert_eq!(report.origin(), Some(OutcomeOrigin::Recovered));
    assert_eq!(report.message(), "created when it first ran");
    assert_eq!(
        report.to_owned_outcome().message,
        "created when it first ran"
    );
}

// ----- C: rejections and cancellation -----------------------------------------------------

#[test]
fn c_8_rejections_are_acted_on_by_reason() {
    for (rejection, expect_failed) in [
        (RequestRejection::InvalidRequest, true),
        (RequestRejection::UnsupportedRequest, true),
        (RequestRejection::UnsupportedValue, true),
        (RequestRejection::DuplicateRequestId, true),
        (RequestRejection::ReplyTooLarge, false),
    ] {
        let mut r = Rig::new();
        let h = r.exec("CREATE RELAY a;");
        let sid = r.open();
        let (id, _) = r.last_command();
        let before = r.sent.len();
        r.feed(sid, rejected(id, rejection));
        r.advance(Duration::from_secs(10));
        assert_eq!(
            r.sent.len(),
            before,
            "{rejection:?}: not sent again unchanged"
        );
        let res = r.result(h);
        if expect_failed {
            assert!(
                matches!(res, Some(CommandResult::Failed(Failure::Rejected { .. }))),
                "{res:?}"
            );
        } else {
            assert!(
                matches!(
                    res,
                    Some(CommandResult::Uncertain {
                        cause: UncertainCause::ReplyTooLarge,
                        ..
                    })
                ),
                "{res:?}"
            );
        }
    }
    // A busy read is repeated later.
    let (mut r, h, sid, id) = busy_read();
    assert!(
        r.events
            .iter()
            .all(|e| !matches!(e, ClientEvent::Read { .. })),
        "not ended"
    );
    r.advance(Duration::from_secs(6));
    let again = r.last().1.request_id;
    assert_ne!(id, again, "sent again later");
    r.feed(sid, domains(again));
    assert!(r.events.iter().any(|e| matches!(e, ClientEvent::Read { handle, result: ReadResult::Replied(_) } if *handle == h)));
}

/// A read sent on a fresh session and refused as busy: the rig, the read, the session and the
/// refused attempt's request id.
fn busy_read() -> (Rig, ReadHandle, SessionId, u64) {
    let mut r = Rig::new();
    let h = r.c.read(r.now, list_domains(), None).unwrap();
    let sid = r.open();
    let id = r.last().1.request_id;
    r.feed(sid, rejected(id, RequestRejection::ServerBusy));
    (r, h, sid, id)
}

/// Drives the client the way a driver does, by its own `poll_timeout` alone, for at most
/// `steps` wake-ups or until `done`; checks that no timer it asks for is already past.
fn drive_by_timers(r: &mut Rig, steps: usize, done: impl Fn(&Rig) -> bool) {
    for _ in 0..steps {
        if done(r) {
            return;
        }
        let Some(at) = r.c.poll_timeout() else {
            return;
        };
        assert!(at > r.now, "a timer at {at:?}, not after now {:?}", r.now);
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
    }
}

#[test]
fn c_8_a_busy_read_goes_again_when_its_back_off_ends_not_at_its_deadline() {
    // The back-off is a timer of its own: a driver that only wakes when the client asks
    // repeats the read within the longest back-off, long before its 30 s deadline.
    let (mut r, h, _, _) = busy_read();
    let before = r.sent.len();
    drive_by_timers(&mut r, 20, |r| r.sent.len() > before);
    assert!(r.sent.len() > before, "the read went again");
    assert!(
        r.now.saturating_since(Timestamp::ZERO) <= Duration::from_secs(5),
        "at {:?}",
        r.now
    );
    assert!(read_result(&r, h).is_none(), "not timed out");
}

#[test]
fn c_8_a_back_off_that_ends_with_no_session_ready_leaves_no_timer_in_the_past() {
    // The read backs off, then its session is lost; the next one is never opened. When the
    // back-off ends, the read waits for a session instead of keeping a timer that has passed.
    let (mut r, _, sid, _) = busy_read();
    r.c.handle_closed(r.now, sid);
    r.pump();
    let sent = r.sent.len();
    drive_by_timers(&mut r, 20, |r| {
        r.now.saturating_since(Timestamp::ZERO) > Duration::from_secs(6)
    });
    assert_eq!(r.sent.len(), sent, "no session was opened: nothing went");
}

#[test]
fn c_9_a_cancellation_is_never_presented_as_undoing_anything() {
    for (stage, failed) in [
        (CancellationStage::BeforeAdmission, true),
        (CancellationStage::AfterAdmission, false),
    ] {
        let mut r = Rig::new();
        let h = r.exec("CREATE RELAY a;");
        let sid = r.open();
        let (id, _) = r.last_command();
        r.c.cancel(r.now, h).unwrap();
        r.pump();
        let (_, cancel) = r.last();
        assert!(
            matches!(&cancel.request, ClientRequestT::CancelRequest(c) if c.target_request_id == id)
        );
        r.feed(
            sid,
            reply(
                id,
                ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT { stage: Some(stage) })),
            ),
        );
        let res = r.result(h);
        if failed {
            assert!(
                matches!(
                    res,
                    Some(CommandResult::Failed(Failure::CancelledBeforeAdmission))
                ),
                "{res:?}"
            );
        } else {
            assert!(
                matches!(
                    res,
                    Some(CommandResult::Uncertain {
                        cause: UncertainCause::CancelledAfterAdmission,
                        ..
                    })
                ),
                "{res:?}"
            );
        }
    }
}

/// A command whose first attempt was answered OutcomeUnknown, so it may have run, and whose
/// repetition is now out: the rig, the session, the handle, the command as sent and the
/// repetition's request identity.
fn repeated() -> (Rig, SessionId, CommandHandle, CommandRequestT, u64) {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, unknown())),
    );
    r.advance(Duration::from_secs(6));
    let (again, repeat) = r.last_command();
    assert_ne!(again, id, "the repetition is out under a new identity");
    assert_eq!(repeat, cmd, "unchanged, same reference");
    (r, sid, h, cmd, again)
}

/// Asserts `h` ended uncertain, naming `cmd`'s reference, for `cause` (any cause when `None`).
fn assert_uncertain(
    r: &Rig,
    h: CommandHandle,
    cmd: &CommandRequestT,
    cause: Option<UncertainCause>,
) {
    match r.result(h) {
        Some(CommandResult::Uncertain { command, cause: c }) => {
            assert_eq!(command.reference.to_string(), cmd.execution_reference);
            assert_eq!(command.query, cmd.query);
            if let Some(cause) = cause {
                assert_eq!(c, cause);
            }
        }
        other => panic!("not uncertain: {other:?}"),
    }
    assert_eq!(r.results(h), 1, "ended once");
}

#[test]
fn c_8_a_rejection_of_a_repeated_attempt_is_uncertain_naming_its_reference() {
    let (mut r, sid, h, cmd, again) = repeated();
    r.feed(sid, rejected(again, RequestRejection::InvalidRequest));
    assert_uncertain(&r, h, &cmd, Some(UncertainCause::Inconclusive));
}

#[test]
fn c_9_a_cancel_before_admission_of_a_repeated_attempt_is_uncertain() {
    let (mut r, sid, h, cmd, again) = repeated();
    r.c.cancel(r.now, h).unwrap();
    r.pump();
    r.feed(
        sid,
        reply(
            again,
            ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT {
                stage: Some(CancellationStage::BeforeAdmission),
            })),
        ),
    );
    // This attempt had no effect; the first may have had one. Not "cancelled after
    // admission": nothing says this attempt was admitted.
    assert_uncertain(&r, h, &cmd, Some(UncertainCause::Cancelled));
}

fn detached() -> CommandDispositionT {
    CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
        transaction_id: "tx-1".into(),
    }))
}

#[test]
fn x_6_detached_with_no_transaction_held_fails_a_first_attempt_and_leaves_a_repeat_uncertain() {
    // No transaction is held, so it holds no outcome under this reference.
    let (r, _, res) = first_attempt(detached());
    assert!(
        matches!(res, Some(CommandResult::Failed(Failure::TransactionEnded))),
        "{res:?}"
    );
    assert_eq!(r.c.outstanding_commands(), 0);
    let (mut r, sid, h, cmd, again) = repeated();
    r.feed(
        sid,
        outcome_frame(again, answer(&cmd.execution_reference, detached())),
    );
    assert_uncertain(&r, h, &cmd, Some(UncertainCause::Inconclusive));
}

#[test]
fn e_3_a_reference_conflict_met_by_a_repetition_is_uncertain_naming_its_reference() {
    let (mut r, sid, h, cmd, again) = repeated();
    let conflict =
        CommandDispositionT::ExecutionReferenceConflict(Box::new(ExecutionReferenceConflictT {
            conflict: Some(ExecutionReferenceConflictKind::Content),
        }));
    r.feed(
        sid,
        outcome_frame(again, answer(&cmd.execution_reference, conflict)),
    );
    assert_uncertain(&r, h, &cmd, Some(UncertainCause::Inconclusive));
}

// ----- D: redirect and reconnect ------------------------------------------------------------

#[test]
fn d_1_redirect_with_an_endpoint_opens_a_session_there() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let s1 = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        s1,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                redirect(Some("https://node-2:7443/")),
            ),
        ),
    );
    assert!(
        r.closes.contains(&(s1, false)),
        "the follower's session is dropped, not closed cleanly"
    );
    assert_eq!(r.connects.last().unwrap().1, ep("https://node-2:7443/"));
    let s2 = r.open();
    let (id2, again) = r.last_command();
    assert_eq!(again, cmd, "repeated unchanged at the leader");
    r.feed(
        s2,
        outcome_frame(id2, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    assert!(r
        .c
        .learned_endpoints()
        .contains(&ep("https://node-2:7443/")));
}

#[test]
fn d_2_redirect_without_an_endpoint_backs_off_and_invents_no_address() {
    let mut r = Rig::new();
    r.exec("CREATE RELAY a;");
    let s1 = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        s1,
        outcome_frame(id, answer(&cmd.execution_reference, redirect(None))),
    );
    let sent_before = r.sent.len();
    r.advance(Duration::from_millis(1));
    assert_eq!(r.sent.len(), sent_before, "backs off first");
    r.advance(Duration::from_secs(6));
    assert_eq!(r.sent.len(), sent_before + 1, "then asks again");
    assert_eq!(r.connects.len(), 1, "no address was made up");
    // An https client never follows a redirect to http.
    let (id, _) = r.last_command();
    r.feed(
        s1,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                redirect(Some("http://node-2:7080/")),
            ),
        ),
    );
    assert_eq!(r.connects.len(), 1);
    assert!(!r.c.learned_endpoints().iter().any(|e| !e.is_https()));
}

#[test]
fn d_2_an_attach_redirected_without_the_clients_endpoint_backs_off_and_invents_no_address() {
    let (mut r, sid) = begun();
    r.exec("CREATE RELAY a;");
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
                    transaction_id: "tx-1".into(),
                })),
            ),
        ),
    );
    let (_, attach) = r.last();
    assert!(matches!(
        &attach.request,
        ClientRequestT::AttachTransactionRequest(_)
    ));
    // The leader names itself and a console, but no gRPC endpoint, which this client needs.
    let leader = LeaderRedirectT {
        leader: Some(Box::new(LeaderEndpointsT {
            node: "node-2".into(),
            grpc_uri: None,
            web_console_uri: Some("https://node-2:8443/".into()),
        })),
    };
    let sent = r.sent.len();
    r.feed(
        sid,
        attach_reply(
            attach.request_id,
            AttachDispositionT::LeaderRedirect(Box::new(leader)),
        ),
    );
    r.advance(Duration::from_millis(1));
    assert_eq!(r.sent.len(), sent, "backs off first");
    assert!(
        r.closes.is_empty(),
        "the session is kept: there is nowhere to go"
    );
    r.advance(Duration::from_secs(6));
    let (again_sid, again) = r.last();
    assert!(
        matches!(&again.request, ClientRequestT::AttachTransactionRequest(a) if a.transaction_id == "tx-1"),
        "then attaches again: {again:?}"
    );
    assert_eq!(again_sid, sid);
    assert_eq!(r.connects.len(), 1, "no address was made up");
    assert!(r.c.learned_endpoints().is_empty());
}

#[test]
fn d_3_learned_endpoints_are_bounded_and_tried_after_a_loss() {
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 5);
    cfg.max_learned_endpoints = 2;
    let mut r = Rig::with(cfg);
    r.exec("SHOW DOMAINS;");
    let sid = r.open();
    for n in 2..6 {
        let f = server(ServerBodyT::LeadershipObserved(Box::new(
            LeadershipObservedT {
                leadership: LeadershipT::LeaderIsRemote(Box::new(LeaderIsRemoteT {
                    leader: Box::new(LeaderEndpointsT {
                        node: format!("node-{n}"),
                        grpc_uri: Some(format!("https://node-{n}:7443/")),
                        web_console_uri: None,
                    }),
                })),
            },
        )));
        r.feed(sid, f);
    }
    assert_eq!(
        r.c.learned_endpoints(),
        vec![ep("https://node-4:7443/"), ep("https://node-5:7443/")]
    );
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.advance(Duration::from_secs(6));
    let tried: Vec<Endpoint> = r.connects.iter().skip(1).map(|c| c.1.clone()).collect();
    assert_eq!(
        tried.first(),
        Some(&ep("https://node-5:7443/")),
        "learned endpoints are tried"
    );
}

#[test]
fn d_4_a_command_whose_deadline_passes_is_uncertain_naming_its_reference() {
    let mut r = Rig::new();
    let h =
        r.c.execute_with(
            r.now,
            WALL,
            "CREATE RELAY a;",
            None,
            Some(Duration::from_secs(2)),
        )
        .unwrap();
    let sid = r.open();
    let (id, cmd) = r.last_command();
    r.advance(Duration::from_secs(2));
    let Some(CommandResult::Uncertain { command, cause }) = r.result(h) else {
        panic!()
    };
    assert_eq!(
        (command.reference.as_str(), cause),
        (cmd.execution_reference.as_str(), UncertainCause::Deadline)
    );
    // Its late reply is discarded: the command ended exactly once.
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert_eq!(r.results(h), 1);
    // A command that never left ends as not sent, which is certain.
    let mut r = Rig::new();
    let h =
        r.c.execute_with(
            r.now,
            WALL,
            "CREATE RELAY a;",
            None,
            Some(Duration::from_secs(1)),
        )
        .unwrap();
    r.pump();
    r.advance(Duration::from_secs(1));
    assert!(matches!(
        r.result(h),
        Some(CommandResult::Failed(Failure::NotSent))
    ));
}

#[test]
fn d_5_restoration_order_after_a_lost_session() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    // A followed clock and a kept subscription, established on the first session.
    let now = r.now;
    r.c.follow_clock(now, "d1").unwrap();
    r.c.subscribe(now, "d1", "CREATE SUBSCRIPTION live FROM orders;")
        .unwrap();
    let s1 = r.open();
    let ids: Vec<u64> = r.sent.iter().map(|(_, m)| m.request_id).collect();
    r.feed(
        s1,
        reply(
            ids[0],
            ReplyBodyT::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
                disposition: DomainClockAttachDispositionT::DomainClockAlreadyAttached(Box::new(
                    DomainClockAlreadyAttachedT {
                        domain: "d1".into(),
                    },
                )),
                message: String::new(),
            })),
        ),
    );
    r.feed(
        s1,
        reply(
            ids[1],
            ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(
                    SubscriptionOpenedT {
                        subscription: Box::new(SubscriptionHandleT {
                            name: "live".into(),
                            generation: 1,
                        }),
                        domain: "d1".into(),
                        relay: "orders".into(),
                        subscription_type: Some(SubscriptionType::Row),
                        schema: Box::default(),
                    },
                )),
                message: String::new(),
                diagnostics: vec![],
            })),
        ),
    );
    // A transaction and an outstanding append.
    r.exec("BEGIN;");
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(s1, outcome_frame(id, o));
    r.exec("CREATE RELAY a;");
    let (_, outstanding) = r.last_command();
    // The session is lost.
    r.c.handle_closed(r.now, s1);
    r.pump();
    assert!(matches!(r.c.binding(), Binding::Detached(_)));
    r.advance(Duration::from_secs(6));
    let before = r.sent.len();
    let s2 = r.open();
    let order: Vec<ClientRequest> = r.sent[before..]
        .iter()
        .map(|(_, m)| m.request.client_request_type())
        .collect();
    assert_eq!(
        order,
        vec![ClientRequest::AttachDomainClockRequest, ClientRequest::SubscribeRequest, ClientRequest::AttachTransactionRequest],
        "clocks, then subscriptions, then the transaction; no command before the attach is answered"
    );
    let attach_id = r.sent.last().unwrap().1.request_id;
    r.feed(
        s2,
        attach_reply(attach_id, attached(status("tx-1", "d1", 0))),
    );
    let (_, repeated) = r.last_command();
    assert_eq!(
        repeated, outstanding,
        "then the outstanding command, unchanged"
    );
}

#[test]
fn d_6_a_session_ending_repeats_commands_instead_of_failing_them() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let s1 = r.open();
    let (_, cmd) = r.last_command();
    r.feed(
        s1,
        server(ServerBodyT::SessionEnding(Box::new(SessionEndingT {
            reason: SessionEndReasonT::ServerShuttingDown(Box::default()),
        }))),
    );
    assert!(
        r.result(h).is_none(),
        "not failed: uncertain until its outcome is recovered"
    );
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    let (id, again) = r.last_command();
    assert_eq!(again.execution_reference, cmd.execution_reference);
    r.feed(
        s2,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
}

/// The messages sent on `sid` that are commands (by reference) or reads (by request kind).
fn sent_on(r: &Rig, sid: SessionId) -> Vec<String> {
    r.sent
        .iter()
        .filter(|(s, _)| *s == sid)
        .map(|(_, m)| match &m.request {
            ClientRequestT::CommandRequest(c) => c.execution_reference.clone(),
            other => format!("{:?}", other.client_request_type()),
        })
        .collect()
}

#[test]
fn d_6_a_call_out_on_a_lost_session_ends_that_attempt_once_and_goes_once_on_the_next() {
    // Nothing sweeps the calls when a session is lost: each call out on it hears of the loss
    // through its own request. Each must go again exactly once and end exactly once.
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let q = r.c.read(r.now, list_domains(), None).unwrap();
    let s1 = r.open();
    let (_, cmd) = last_of(&r, ClientRequest::CommandRequest);
    let ClientRequestT::CommandRequest(cmd) = cmd else {
        unreachable!()
    };
    let reference = cmd.execution_reference.clone();
    let read_kind = format!("{:?}", list_domains().client_request_type());
    assert_eq!(sent_on(&r, s1), vec![reference.clone(), read_kind.clone()]);
    r.c.handle_closed(r.now, s1);
    r.pump();
    assert!(
        r.result(h).is_none() && read_result(&r, q).is_none(),
        "a lost session ends neither call: both go again"
    );
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_eq!(
        sent_on(&r, s2),
        vec![reference.clone(), read_kind],
        "each call goes once on the next session, in the order they were made"
    );
    let mut ids = r
        .sent
        .iter()
        .filter(|(s, _)| *s == s2)
        .map(|(_, m)| m.request_id);
    let (cid, rid) = (ids.next().unwrap(), ids.next().unwrap());
    r.feed(s2, outcome_frame(cid, answer(&reference, completed())));
    r.feed(s2, domains(rid));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    assert!(matches!(read_result(&r, q), Some(ReadResult::Replied(_))));
    // Past both deadlines: nothing is repeated or reported twice.
    let sent = r.sent.len();
    r.advance(Duration::from_secs(600));
    assert_eq!(r.sent.len(), sent);
    assert_eq!(r.results(h), 1);
    let reads = r
        .events
        .iter()
        .filter(|e| matches!(e, ClientEvent::Read { handle, .. } if *handle == q))
        .count();
    assert_eq!(reads, 1);
}

#[test]
fn d_6_an_attempt_still_queued_when_its_session_is_lost_had_no_effect() {
    // The loss reaches each call with whether its own attempt was handed to the transport: one
    // queued behind the in-flight limit was not, so it can still fail as never sent, while the
    // one that was sent may have run and goes again under its reference.
    let mut r = Rig::with(small_in_flight(1));
    let a = r.exec("CREATE RELAY a;");
    let b =
        r.c.execute_with(
            r.now,
            WALL,
            "CREATE RELAY b;",
            None,
            Some(Duration::from_secs(1)),
        )
        .unwrap();
    let s1 = r.open();
    assert_eq!(r.sent.len(), 1, "b waits behind a");
    let (_, first) = r.last_command();
    r.c.handle_closed(r.now, s1);
    r.pump();
    r.advance(Duration::from_secs(1));
    assert_eq!(
        r.result(b),
        Some(CommandResult::Failed(Failure::NotSent)),
        "its attempt was on the lost session but never sent: certainly no effect"
    );
    assert!(r.result(a).is_none(), "a may have run: it goes again");
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_eq!(sent_on(&r, s2), vec![first.execution_reference.clone()]);
    let (id, _) = r.last_command();
    r.feed(
        s2,
        outcome_frame(id, answer(&first.execution_reference, completed())),
    );
    assert!(matches!(r.result(a), Some(CommandResult::Completed(_))));
    assert_eq!(r.results(b), 1);
}

// ----- X: transactions ----------------------------------------------------------------------

#[test]
fn x_1_begin_names_the_selected_domain_and_binds_the_status_identity() {
    let mut r = Rig::new();
    assert_eq!(
        r.c.execute(r.now, WALL, "BEGIN;").unwrap_err(),
        ClientError::NoDomainSelected
    );
    let (r, _) = begun();
    let held = r.c.binding().held().unwrap();
    assert_eq!(
        (held.id.as_str(), held.domain.as_str(), held.position),
        ("tx-1", "d1", 0)
    );
    assert_eq!(
        r.sent[0].1.request.client_request_type(),
        ClientRequest::CommandRequest
    );
    match &r.sent[0].1.request {
        ClientRequestT::CommandRequest(c) => assert_eq!(c.domain.as_deref(), Some("d1")),
        _ => unreachable!(),
    }
}

#[test]
fn x_1_the_handle_is_the_identity_of_the_begin_outcomes_own_status() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    // A BEGIN that fails binds nothing, even with a status beside it.
    let failed = r.exec("BEGIN;");
    let sid = r.open();
    let (id, begin) = r.last_command();
    assert_eq!(
        begin.domain.as_deref(),
        Some("d1"),
        "BEGIN names the selected domain"
    );
    let mut o = answer(
        &begin.execution_reference,
        CommandDispositionT::RequestFailed(Box::default()),
    );
    o.transaction = Some(Box::new(status("tx-failed", "d1", 0)));
    r.feed(sid, outcome_frame(id, o));
    assert!(matches!(r.result(failed), Some(CommandResult::Failed(_))));
    assert_eq!(r.c.binding(), &Binding::Unbound);
    // While BEGIN waits, another command's outcome carrying a status binds nothing.
    let h = r.exec("BEGIN;");
    let (begin_id, begin) = r.last_command();
    let read = r.exec("SHOW DOMAINS;");
    let (read_id, shown) = r.last_command();
    let mut o = answer(&shown.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-other", "d1", 4)));
    r.feed(sid, outcome_frame(read_id, o));
    assert!(r.result(read).is_some());
    assert_eq!(r.c.binding(), &Binding::Unbound, "not from another outcome");
    // The BEGIN's own outcome's status is the handle, identity, domain and position.
    let mut o = answer(&begin.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-42", "d1", 0)));
    r.feed(sid, outcome_frame(begin_id, o));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    let held = r.c.binding().held().expect("bound").clone();
    assert_eq!(
        (held.id.as_str(), held.domain.as_str(), held.position),
        ("tx-42", "d1", 0)
    );
    assert!(matches!(r.c.binding(), Binding::Bound(_)));
    // The handle is what the transaction's requests then go by.
    r.exec("CREATE RELAY a;");
    let (_, append) = r.last_command();
    assert_eq!(
        (
            append.domain.as_deref(),
            append.expected_transaction_position
        ),
        (Some("d1"), Some(0))
    );
}

#[test]
fn x_2_appends_carry_the_newest_position_advanced_only_by_outcomes() {
    let (mut r, sid) = begun();
    r.exec("CREATE RELAY a;");
    assert_eq!(
        r.last_command().1.expected_transaction_position,
        Some(0),
        "0 right after BEGIN"
    );
    // A second append sent before the first is answered carries the same position.
    r.exec("CREATE RELAY b;");
    assert_eq!(r.last_command().1.expected_transaction_position, Some(0));
    append(&mut r, sid, "CREATE RELAY c;", 1, 3);
    r.exec("CREATE RELAY d;");
    assert_eq!(
        r.last_command().1.expected_transaction_position,
        Some(1),
        "advanced from the outcome"
    );
}

#[test]
fn x_2_the_position_follows_only_the_accepted_count_of_the_held_transactions_statuses() {
    let (mut r, sid) = begun();
    let position = |r: &mut Rig, q: &str| {
        r.exec(q);
        r.last_command().1.expected_transaction_position
    };
    // An outcome with an admission but no status reports no position.
    let h = r.exec("CREATE RELAY a;");
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction_admission = Some(Box::new(TransactionOperationAdmissionT {
        operation: 1,
        preview: Box::new(preview("tx-1", 1, 1)),
    }));
    r.feed(sid, outcome_frame(id, o));
    assert!(r.result(h).is_some());
    assert_eq!(
        position(&mut r, "CREATE RELAY b;"),
        Some(0),
        "no status, no advance"
    );
    // A status of another transaction says nothing of this one.
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-9", "d1", 5)));
    r.feed(sid, outcome_frame(id, o));
    assert_eq!(
        position(&mut r, "CREATE RELAY c;"),
        Some(0),
        "another transaction's"
    );
    // A failed outcome's status reports the position too; the accepted count is taken,
    // not the applied one.
    let (id, cmd) = r.last_command();
    let mut o = answer(
        &cmd.execution_reference,
        CommandDispositionT::RequestFailed(Box::default()),
    );
    let mut st = status("tx-1", "d1", 3);
    st.applied_operations = 2;
    o.transaction = Some(Box::new(st));
    r.feed(sid, outcome_frame(id, o));
    assert_eq!(position(&mut r, "CREATE RELAY d;"), Some(3));
    // A request of several statements carries the position of its first append, a read
    // in front of it or not.
    assert_eq!(position(&mut r, "CREATE RELAY e; CREATE RELAY f;"), Some(3));
    assert_eq!(position(&mut r, "SHOW DOMAINS; CREATE RELAY g;"), Some(3));
}

/// X-2: an append's own outcome reports the newest position and, with its admission, the
/// preview to commit (X-4) and a renewal (X-8), even when it arrives after another command
/// found the transaction detached from the session and the client is attaching it again:
/// applied, never dropped for the phase it arrives in.
#[test]
fn x_2_an_appends_outcome_arriving_while_the_transaction_is_detached_is_applied() {
    let (mut r, sid) = begun();
    let a = r.exec("CREATE RELAY a;");
    let (aid, acmd) = r.last_command();
    let b = r.exec("CREATE RELAY b;");
    let (bid, bcmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(
            aid,
            answer(
                &acmd.execution_reference,
                CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
                    transaction_id: "tx-1".into(),
                })),
            ),
        ),
    );
    assert!(matches!(r.c.binding(), Binding::Detached(_)));
    let (attach_id, _) = last_of(&r, ClientRequest::AttachTransactionRequest);
    // b was admitted before the binding was lost; its outcome comes now.
    let mut o = answer(&bcmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 1)));
    o.transaction_admission = Some(Box::new(TransactionOperationAdmissionT {
        operation: 1,
        preview: Box::new(preview("tx-1", 1, 9)),
    }));
    r.feed(sid, outcome_frame(bid, o));
    assert!(matches!(r.result(b), Some(CommandResult::Completed(_))));
    match r.c.binding() {
        Binding::Detached(h) => {
            assert_eq!(h.position, 1, "the newest status received");
            assert_eq!(h.preview, Some(preview("tx-1", 1, 9)), "b's admission");
        }
        other => panic!("{other:?}"),
    }
    r.feed(
        sid,
        attach_reply(attach_id, attached(status("tx-1", "d1", 1))),
    );
    assert!(r.result(a).is_none(), "a goes again under its own position");
    r.exec("COMMIT;");
    let (_, commit) = r.last_command();
    assert_eq!(commit.query, "COMMIT;");
    assert_eq!(
        commit.expected_preview,
        Some(Box::new(preview("tx-1", 1, 9))),
        "the commit carries the last append's preview"
    );
}

/// The commands sent on `sid` from the `from`th frame on.
fn commands_from(r: &Rig, sid: SessionId, from: usize) -> Vec<(u64, CommandRequestT)> {
    r.sent[from..]
        .iter()
        .filter(|(s, _)| *s == sid)
        .filter_map(|(_, m)| match &m.request {
            ClientRequestT::CommandRequest(c) => Some((m.request_id, (**c).clone())),
            _ => None,
        })
        .collect()
}

/// X-2: the server binds the transaction to the session as it runs the BEGIN, so a command
/// made while the BEGIN is unanswered is one of the transaction and must carry its position,
/// which only the BEGIN's status gives. It waits behind the BEGIN and goes once that status
/// arrives, carrying the position and the transaction's domain; a read carries no position
/// and goes at once.
#[test]
fn x_2_a_command_made_while_begin_is_unanswered_waits_and_carries_the_position() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let begin = r.exec("BEGIN;");
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    let before = r.sent.len();
    let a = r.exec("CREATE RELAY a;");
    let b = r.exec("CREATE RELAY b;");
    assert!(
        commands_from(&r, sid, before).is_empty(),
        "nothing goes out behind an unanswered BEGIN: {:?}",
        commands_from(&r, sid, before)
    );
    let read = r.exec("SHOW DOMAINS;");
    let reads = commands_from(&r, sid, before);
    assert_eq!(reads.len(), 1, "a read goes at once");
    assert_eq!(reads[0].1.query, "SHOW DOMAINS;");
    assert_eq!(reads[0].1.expected_transaction_position, None);
    let before = r.sent.len();
    let mut o = answer(&bcmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(bid, o));
    assert!(matches!(r.result(begin), Some(CommandResult::Completed(_))));
    let out = commands_from(&r, sid, before);
    let queries: Vec<_> = out.iter().map(|(_, c)| c.query.as_str()).collect();
    assert_eq!(queries, ["CREATE RELAY a;", "CREATE RELAY b;"], "in order");
    for (_, c) in &out {
        assert_eq!(
            c.expected_transaction_position,
            Some(0),
            "0 right after BEGIN"
        );
        assert_eq!(c.domain.as_deref(), Some("d1"));
    }
    // Each ends once, by its own outcome.
    let (aid, acmd) = out[0].clone();
    let mut o = answer(&acmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 1)));
    r.feed(sid, outcome_frame(aid, o));
    assert!(matches!(r.result(a), Some(CommandResult::Completed(_))));
    assert_eq!(r.results(a), 1);
    assert_eq!(r.results(b), 0, "b waits for its own outcome");
    assert_eq!(r.results(read), 0);
}

/// X-2: a command waiting behind a BEGIN that ends without binding a transaction was never
/// sent, and ends once, typed as such; one whose own deadline passes first ends then, once,
/// as never sent; a cancelled one ends once, never sent. None of them is ever sent.
#[test]
fn x_2_commands_behind_a_begin_that_binds_nothing_end_once_unsent() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let begin = r.exec("BEGIN;");
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    let before = r.sent.len();
    let a = r.exec("CREATE RELAY a;");
    let short =
        r.c.execute_with(
            r.now,
            WALL,
            "CREATE RELAY s;",
            None,
            Some(Duration::from_secs(1)),
        )
        .unwrap();
    let cancelled = r.exec("CREATE RELAY c;");
    r.c.cancel(r.now, cancelled).unwrap();
    r.pump();
    assert!(matches!(
        r.result(cancelled),
        Some(CommandResult::Failed(Failure::NotSent))
    ));
    r.advance(Duration::from_secs(2));
    assert!(
        matches!(
            r.result(short),
            Some(CommandResult::Failed(Failure::NotSent))
        ),
        "its own deadline ran: {:?}",
        r.result(short)
    );
    assert_eq!(r.results(a), 0, "a still waits for the BEGIN");
    let o = answer(
        &bcmd.execution_reference,
        CommandDispositionT::RequestFailed(Box::default()),
    );
    r.feed(sid, outcome_frame(bid, o));
    assert!(matches!(r.result(begin), Some(CommandResult::Failed(_))));
    assert!(
        matches!(
            r.result(a),
            Some(CommandResult::Failed(Failure::TransactionNotBegun))
        ),
        "{:?}",
        r.result(a)
    );
    for h in [a, short, cancelled] {
        assert_eq!(r.results(h), 1, "{h:?} ends exactly once");
    }
    assert!(commands_from(&r, sid, before).is_empty(), "none was sent");
    assert_eq!(r.c.outstanding_commands(), 0);
}

/// X-2: the commands waiting behind an unanswered BEGIN are bounded in count and in bytes of
/// query text; a command beyond either bound is refused, typed, and nothing of it is taken.
#[test]
fn x_2_commands_behind_an_unanswered_begin_are_bounded_in_count_and_bytes() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    r.exec("BEGIN;");
    r.open();
    for i in 0..MAX_BEHIND_BEGIN {
        r.c.execute(r.now, WALL, &format!("CREATE RELAY r{i};"))
            .unwrap();
    }
    let count = r.c.outstanding_commands();
    assert_eq!(
        r.c.execute(r.now, WALL, "CREATE RELAY over;").unwrap_err(),
        ClientError::BehindBeginFull
    );
    assert_eq!(r.c.outstanding_commands(), count, "nothing taken");
    // A read carries no position and waits for nothing: it is not held back.
    assert!(r.c.execute(r.now, WALL, "SHOW DOMAINS;").is_ok());

    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    r.exec("BEGIN;");
    r.open();
    let big = format!("CREATE RELAY b{};", "x".repeat(3 * 1024 * 1024));
    let fit = MAX_BEHIND_BEGIN_BYTES / big.len();
    for _ in 0..fit {
        r.c.execute(r.now, WALL, &big).unwrap();
    }
    assert_eq!(
        r.c.execute(r.now, WALL, &big).unwrap_err(),
        ClientError::BehindBeginFull
    );
}

#[test]
fn x_3_an_append_is_accepted_only_by_its_own_outcome() {
    let (mut r, sid) = begun();
    let h = r.exec("CREATE RELAY a;");
    // A status from someone else's outcome that says two operations were accepted does not
    // accept this append.
    let other = r.exec("SHOW DOMAINS;");
    let (oid, ocmd) = r.last_command();
    let mut o = answer(&ocmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 2)));
    r.feed(sid, outcome_frame(oid, o));
    assert!(r.result(other).is_some());
    assert!(r.result(h).is_none(), "no outcome of its own yet");
}

#[test]
fn x_3_a_commit_is_reported_only_from_its_own_outcome_never_from_a_committed_status() {
    let (mut r, sid) = begun();
    append(&mut r, sid, "CREATE RELAY a;", 1, 7);
    let h = r.exec("COMMIT;");
    let (id, commit) = r.last_command();
    let committed = || {
        let mut st = status("tx-1", "d1", 1);
        st.state = TransactionStateT::TransactionCommitted(Box::default());
        st.applied_operations = 1;
        st
    };
    let not_committed = |r: &Rig, why: &str| {
        assert!(r.result(h).is_none(), "{why}: the commit is not reported");
        assert!(
            !matches!(
                r.c.binding(),
                Binding::Finished {
                    ending: Ending::Committed,
                    ..
                }
            ),
            "{why}: {:?}",
            r.c.binding()
        );
    };
    // Another command's outcome says the transaction is COMMITTED with every operation
    // applied: that is not the commit's outcome.
    let read = r.exec("SHOW DOMAINS;");
    let (read_id, shown) = r.last_command();
    let mut o = answer(&shown.execution_reference, completed());
    o.transaction = Some(Box::new(committed()));
    r.feed(sid, outcome_frame(read_id, o));
    assert!(r.result(read).is_some());
    not_committed(&r, "a read's status");
    // The commit is detached; the attach finds the transaction finished as COMMITTED.
    r.feed(
        sid,
        outcome_frame(
            id,
            answer(
                &commit.execution_reference,
                CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
                    transaction_id: "tx-1".into(),
                })),
            ),
        ),
    );
    let (_, attach) = r.last();
    assert!(matches!(
        &attach.request,
        ClientRequestT::AttachTransactionRequest(_)
    ));
    r.feed(
        sid,
        attach_reply(
            attach.request_id,
            AttachDispositionT::TransactionAlreadyFinished(Box::new(TransactionAlreadyFinishedT {
                transaction: Box::new(committed()),
            })),
        ),
    );
    not_committed(&r, "the transaction's final status");
    // Only the commit's own recorded outcome, under its own reference, reports it.
    let (again_id, again) = r.last_command();
    assert_eq!(again, commit, "repeated under its own reference");
    let mut o = answer(&commit.execution_reference, completed());
    o.origin = Some(OutcomeOrigin::Recovered);
    r.feed(sid, outcome_frame(again_id, o));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    assert_eq!(r.results(h), 1);
}

#[test]
fn x_4_commit_carries_the_reviewed_preview_and_never_refreshes_it() {
    let (mut r, sid) = begun();
    append(&mut r, sid, "CREATE RELAY a;", 1, 7);
    let h = r.exec("COMMIT;");
    let (id, commit) = r.last_command();
    assert_eq!(
        commit.expected_preview.as_deref(),
        Some(&preview("tx-1", 1, 7))
    );
    let mut o = answer(
        &commit.execution_reference,
        CommandDispositionT::PreviewStale(Box::new(PreviewStaleT {
            expected: Box::new(preview("tx-1", 1, 7)),
            current: Box::new(preview("tx-1", 1, 9)),
        })),
    );
    o.transaction = Some(Box::new(status("tx-1", "d1", 1)));
    r.feed(sid, outcome_frame(id, o));
    assert!(matches!(
        r.result(h),
        Some(CommandResult::Failed(Failure::Outcome(_)))
    ));
    r.exec("COMMIT;");
    assert_eq!(
        r.last_command().1.expected_preview.as_deref(),
        Some(&preview("tx-1", 1, 7)),
        "not refreshed"
    );
}

/// An inspection of transaction `id` at `position`, whose report's planning basis is `basis`.
fn inspected(id: &str, position: u64, basis: u8) -> TransactionInspectedT {
    TransactionInspectedT {
        transaction: Box::new(status(id, "d1", position)),
        operation: None,
        report: Box::new(TransactionImpactReportT {
            domain: "d1".into(),
            position,
            planning_basis: Box::new(FingerprintT {
                bytes: vec![basis; 32],
            }),
            completeness: ImpactCompletenessT::ImpactComplete(Box::default()),
            operations: vec![],
            execution_steps: vec![],
        }),
    }
}

#[test]
fn x_4_an_inspection_of_another_transaction_or_an_older_position_never_refreshes_the_preview() {
    let (mut r, sid) = begun();
    append(&mut r, sid, "CREATE RELAY a;", 1, 1);
    append(&mut r, sid, "CREATE RELAY b;", 2, 7);
    // Inspections that are not of the held transaction at its current position, each as a
    // command's outcome and as the answer of an inspection read.
    for (id, position, basis) in [("tx-9", 2, 9), ("tx-1", 1, 5)] {
        let h = r.exec("DESCRIBE TRANSACTION;");
        let (cid, cmd) = r.last_command();
        let mut o = answer(&cmd.execution_reference, completed());
        o.transaction = Some(Box::new(status("tx-1", "d1", 2)));
        o.inspection = Some(Box::new(inspected(id, position, basis)));
        r.feed(sid, outcome_frame(cid, o));
        assert!(r.result(h).is_some());
        let target = if id == "tx-1" {
            InspectionTargetT::AttachedTransaction(Box::default())
        } else {
            InspectionTargetT::TransactionById(Box::new(TransactionByIdT {
                transaction_id: id.into(),
            }))
        };
        r.c.read(
            r.now,
            ClientRequestT::InspectTransactionRequest(Box::new(InspectTransactionRequestT {
                target,
                operation: None,
            })),
            None,
        )
        .unwrap();
        r.pump();
        let (_, m) = r.last();
        assert!(matches!(
            m.request,
            ClientRequestT::InspectTransactionRequest(_)
        ));
        r.feed(
            sid,
            reply(
                m.request_id,
                ReplyBodyT::InspectionOutcome(Box::new(InspectionOutcomeT {
                    disposition: InspectionDispositionT::TransactionInspected(Box::new(inspected(
                        id, position, basis,
                    ))),
                })),
            ),
        );
    }
    r.exec("COMMIT;");
    assert_eq!(
        r.last_command().1.expected_preview.as_deref(),
        Some(&preview("tx-1", 2, 7)),
        "the last admission's preview, not an inspection's"
    );
}

#[test]
fn x_4_an_inspection_of_the_attached_transaction_at_its_current_position_is_the_reviewed_preview() {
    // As an inspection read's answer, and as a DESCRIBE TRANSACTION command's outcome.
    for by_read in [true, false] {
        let (mut r, sid) = begun();
        append(&mut r, sid, "CREATE RELAY a;", 1, 1);
        append(&mut r, sid, "CREATE RELAY b;", 2, 7);
        let inspect = |r: &mut Rig, i: TransactionInspectedT| {
            if by_read {
                r.c.read(
                    r.now,
                    ClientRequestT::InspectTransactionRequest(Box::new(
                        InspectTransactionRequestT {
                            target: InspectionTargetT::AttachedTransaction(Box::default()),
                            operation: i.operation,
                        },
                    )),
                    None,
                )
                .unwrap();
                r.pump();
                let (_, m) = r.last();
                r.feed(
                    sid,
                    reply(
                        m.request_id,
                        ReplyBodyT::InspectionOutcome(Box::new(InspectionOutcomeT {
                            disposition: InspectionDispositionT::TransactionInspected(Box::new(i)),
                        })),
                    ),
                );
            } else {
                r.exec("DESCRIBE TRANSACTION;");
                let (cid, cmd) = r.last_command();
                let mut o = answer(&cmd.execution_reference, completed());
                o.transaction = Some(Box::new(status("tx-1", "d1", 2)));
                o.inspection = Some(Box::new(i));
                r.feed(sid, outcome_frame(cid, o));
            }
        };
        // One operation's report is not the whole transaction's preview.
        let mut one = inspected("tx-1", 2, 8);
        one.operation = Some(2);
        inspect(&mut r, one);
        assert_eq!(
            r.c.binding().held().unwrap().preview,
            Some(preview("tx-1", 2, 7)),
            "by_read={by_read}: a single operation's report"
        );
        // The whole attached transaction at its current position: that is what the user
        // reviewed last, and what COMMIT carries.
        inspect(&mut r, inspected("tx-1", 2, 9));
        assert_eq!(
            r.c.binding().held().unwrap().preview,
            Some(preview("tx-1", 2, 9)),
            "by_read={by_read}"
        );
        r.exec("COMMIT;");
        assert_eq!(
            r.last_command().1.expected_preview.as_deref(),
            Some(&preview("tx-1", 2, 9)),
            "by_read={by_read}"
        );
    }
}

#[test]
fn x_5_a_committing_commit_is_repeated_until_its_own_outcome() {
    let (mut r, sid) = begun();
    append(&mut r, sid, "CREATE RELAY a;", 1, 7);
    let h = r.exec("COMMIT;");
    let (id, commit) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&commit.execution_reference, unknown())),
    );
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    let attach = r.sent.last().unwrap().1.request_id;
    r.feed(s2, attach_reply(attach, attached(status("tx-1", "d1", 1))));
    let (id2, again) = r.last_command();
    assert_eq!(again, commit, "the same commit, same reference");
    let mut o = answer(&commit.execution_reference, completed());
    let mut st = status("tx-1", "d1", 1);
    st.state = TransactionStateT::TransactionCommitted(Box::default());
    o.transaction = Some(Box::new(st));
    r.feed(s2, outcome_frame(id2, o));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    assert!(matches!(
        r.c.binding(),
        Binding::Finished {
            ending: Ending::Committed,
            ..
        }
    ));
}

/// X-5: the commit's own outcome is waited for whatever the client expects of the
/// transaction's idle time: a commit still unanswered when the idle timeout passes (X-8) is
/// neither ended nor dropped; it is repeated under its reference and its own outcome is the
/// one reported.
#[test]
fn x_5_a_commit_outlives_the_idle_timeout_and_ends_by_its_own_outcome() {
    let (mut r, sid) = begun();
    append(&mut r, sid, "CREATE RELAY a;", 1, 7);
    let h =
        r.c.execute_with(
            r.now,
            WALL,
            "COMMIT;",
            None,
            Some(Duration::from_secs(3600)),
        )
        .unwrap();
    r.pump();
    let (id, commit) = r.last_command();
    assert_eq!(commit.query, "COMMIT;");
    r.feed(
        sid,
        outcome_frame(id, answer(&commit.execution_reference, unknown())),
    );
    // Repeated after its back-off; this attempt stays unanswered past the idle timeout.
    r.advance(Duration::from_secs(5));
    let (id2, again) = r.last_command();
    assert_ne!(id2, id);
    assert_eq!(again, commit, "the same commit, same reference and preview");
    r.advance(Duration::from_secs(900));
    assert_eq!(r.results(h), 0, "the commit is still waited for");
    let mut o = answer(&commit.execution_reference, completed());
    let mut st = status("tx-1", "d1", 1);
    st.state = TransactionStateT::TransactionCommitted(Box::default());
    o.transaction = Some(Box::new(st));
    r.feed(sid, outcome_frame(id2, o));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    assert_eq!(r.results(h), 1);
}

#[test]
fn x_6_detached_attaches_adopts_the_domain_and_repeats_under_the_same_position() {
    let (mut r, sid) = begun();
    let h = r.exec("CREATE RELAY a;");
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
                    transaction_id: "tx-1".into(),
                })),
            ),
        ),
    );
    let (_, attach) = r.last();
    assert!(
        matches!(&attach.request, ClientRequestT::AttachTransactionRequest(a) if a.transaction_id == "tx-1")
    );
    r.feed(
        sid,
        attach_reply(attach.request_id, attached(status("tx-1", "d2", 0))),
    );
    assert_eq!(
        r.c.selected_domain(),
        Some("d2"),
        "the attached transaction's domain is adopted"
    );
    let (id2, again) = r.last_command();
    assert_eq!(again, cmd, "same reference and position");
    r.feed(
        sid,
        outcome_frame(id2, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    // TransactionAlreadyFinished is never the outcome of an outstanding append.
    let (mut r, sid) = begun();
    let h = r.exec("CREATE RELAY b;");
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
                    transaction_id: "tx-1".into(),
                })),
            ),
        ),
    );
    let (_, attach) = r.last();
    let mut done = status("tx-1", "d1", 3);
    done.state = TransactionStateT::TransactionCommitted(Box::default());
    r.feed(
        sid,
        attach_reply(
            attach.request_id,
            AttachDispositionT::TransactionAlreadyFinished(Box::new(TransactionAlreadyFinishedT {
                transaction: Box::new(done),
            })),
        ),
    );
    assert!(
        r.result(h).is_none(),
        "not ended by the transaction's final status"
    );
    let (id3, again) = r.last_command();
    assert_eq!(
        again, cmd,
        "repeated under its own reference and original position"
    );
    let mut o = answer(&cmd.execution_reference, completed());
    o.origin = Some(OutcomeOrigin::Recovered);
    r.feed(sid, outcome_frame(id3, o));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
}

#[test]
fn x_7_a_clean_close_only_when_the_revert_is_intended() {
    let (mut r, sid) = begun();
    r.c.close(r.now, false);
    r.pump();
    assert_eq!(r.closes.last(), Some(&(sid, false)));
    assert!(
        matches!(r.c.binding(), Binding::Detached(_)),
        "left open for a later attach"
    );
    let (mut r, sid) = begun();
    r.c.close(r.now, true);
    r.pump();
    assert_eq!(r.closes.last(), Some(&(sid, true)));
    assert!(matches!(
        r.c.binding(),
        Binding::Finished {
            ending: Ending::Reverted,
            ..
        }
    ));
}

/// X-7: a clean close reverts only the transaction the session holds. Closing a session the
/// transaction is not attached on yet (its first session was lost) reverts nothing, and a
/// WebSocket close with a request in flight is not a clean ending either: in both the
/// transaction stays open for a later attach, and the client never reports it reverted.
#[test]
fn x_7_a_clean_close_reports_a_revert_only_when_the_session_held_the_transaction() {
    // Lost, then a new session that has not attached it yet.
    let (mut r, sid) = begun();
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.c.execute_with(
        r.now,
        WALL,
        "CREATE RELAY a;",
        None,
        Some(Duration::from_secs(60)),
    )
    .unwrap();
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    last_of(&r, ClientRequest::AttachTransactionRequest);
    r.c.close(r.now, true);
    r.pump();
    assert_eq!(r.closes.last(), Some(&(s2, true)));
    assert!(
        matches!(r.c.binding(), Binding::Detached(_)),
        "the closed session did not hold it: nothing was reverted, {:?}",
        r.c.binding()
    );

    // A WebSocket client with a request in flight.
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.leader_uri = LeaderUri::WebConsole;
    let mut r = Rig::with(cfg);
    r.c.select_domain(Some("d1")).unwrap();
    r.exec("BEGIN;");
    let sid = r.open();
    bind_transaction(&mut r, sid);
    assert!(matches!(r.c.binding(), Binding::Bound(_)));
    r.exec("CREATE RELAY a;");
    r.c.close(r.now, true);
    r.pump();
    assert!(
        matches!(r.c.binding(), Binding::Detached(_)),
        "a WebSocket close with a request in flight reverts nothing: {:?}",
        r.c.binding()
    );
    // With none in flight it reverts.
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.leader_uri = LeaderUri::WebConsole;
    let mut r = Rig::with(cfg);
    r.c.select_domain(Some("d1")).unwrap();
    r.exec("BEGIN;");
    let sid = r.open();
    bind_transaction(&mut r, sid);
    r.c.close(r.now, true);
    r.pump();
    assert!(matches!(
        r.c.binding(),
        Binding::Finished {
            ending: Ending::Reverted,
            ..
        }
    ));
}

#[test]
fn x_8_an_idle_transaction_is_expected_to_expire() {
    let (mut r, sid) = begun();
    r.advance(Duration::from_secs(600));
    append(&mut r, sid, "CREATE RELAY a;", 1, 1);
    r.advance(Duration::from_secs(899));
    assert!(r.c.binding().is_holding(), "the append renewed it");
    r.advance(Duration::from_secs(1));
    assert!(matches!(
        r.c.binding(),
        Binding::Finished {
            ending: Ending::Expired,
            ..
        }
    ));
}

/// X-8: only attaching, appending and commit admission renew a transaction. An append that
/// failed reports a status but was not admitted and renews nothing; a transaction whose
/// session was lost is held detached and its idle time runs all the same; attaching it on a
/// new session renews it.
#[test]
fn x_8_only_attaching_and_admission_renew_and_a_detached_transaction_expires_too() {
    let secs = Duration::from_secs;
    let (mut r, sid) = begun();
    r.advance(secs(300));
    let failed = r.exec("CREATE RELAY a;");
    let (id, cmd) = r.last_command();
    let mut o = answer(
        &cmd.execution_reference,
        CommandDispositionT::RequestFailed(Box::default()),
    );
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(id, o));
    assert!(matches!(r.result(failed), Some(CommandResult::Failed(_))));
    // Lost with no session bound: still held, still ageing.
    r.c.handle_closed(r.now, sid);
    r.pump();
    assert!(matches!(r.c.binding(), Binding::Detached(_)));
    r.advance(secs(599));
    assert!(r.c.binding().is_holding(), "899 s idle: not yet");
    r.advance(secs(1));
    assert!(
        matches!(
            r.c.binding(),
            Binding::Finished {
                ending: Ending::Expired,
                ..
            }
        ),
        "900 s after BEGIN, detached and failed append or not: {:?}",
        r.c.binding()
    );

    // Attaching renews it.
    let (mut r, sid) = begun();
    r.advance(secs(600));
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.c.execute_with(r.now, WALL, "CREATE RELAY b;", None, Some(secs(3600)))
        .unwrap();
    r.advance(secs(6));
    let s2 = r.open();
    let (attach_id, _) = last_of(&r, ClientRequest::AttachTransactionRequest);
    r.feed(
        s2,
        attach_reply(attach_id, attached(status("tx-1", "d1", 0))),
    );
    assert!(matches!(r.c.binding(), Binding::Bound(_)));
    r.advance(secs(899));
    assert!(r.c.binding().is_holding(), "the attach at 606 s renewed it");
    r.advance(secs(1));
    assert!(matches!(
        r.c.binding(),
        Binding::Finished {
            ending: Ending::Expired,
            ..
        }
    ));
}

/// C-8: a restoring transaction attach refused for a defect (InvalidRequest,
/// UnsupportedRequest, UnsupportedValue, DuplicateRequestId, ReplyTooLarge) is never sent
/// again unchanged: the attach failed, and after a failed attach each outstanding command
/// is repeated under its own reference and position for its recorded outcome (X-6). A busy
/// server's refusal is asked again after a wait.
#[test]
fn c_8_a_restoring_attach_rejected_for_a_defect_is_not_sent_again() {
    let secs = Duration::from_secs;
    for rejection in [
        RequestRejection::InvalidRequest,
        RequestRejection::UnsupportedRequest,
        RequestRejection::UnsupportedValue,
        RequestRejection::DuplicateRequestId,
        RequestRejection::ReplyTooLarge,
    ] {
        let (mut r, sid) = begun();
        let h =
            r.c.execute_with(r.now, WALL, "CREATE RELAY a;", None, Some(secs(600)))
                .unwrap();
        r.pump();
        let (_, outstanding) = r.last_command();
        assert_eq!(outstanding.query, "CREATE RELAY a;");
        r.c.handle_closed(r.now, sid);
        r.pump();
        r.advance(secs(6));
        let s2 = r.open();
        let (attach_id, _) = last_of(&r, ClientRequest::AttachTransactionRequest);
        r.feed(s2, rejected(attach_id, rejection));
        for _ in 0..30 {
            r.advance(secs(2));
        }
        let attaches = requests(&r, s2)
            .into_iter()
            .filter(|k| *k == ClientRequest::AttachTransactionRequest)
            .count();
        assert_eq!(attaches, 1, "{rejection:?}: the attach is not sent again");
        assert!(
            matches!(
                r.c.binding(),
                Binding::Finished {
                    ending: Ending::AttachRefused,
                    ..
                }
            ),
            "{rejection:?}: {:?}",
            r.c.binding()
        );
        let (_, repeated) = r.last_command();
        assert_eq!(
            repeated, outstanding,
            "{rejection:?}: the outstanding command goes again, unchanged"
        );
        assert_eq!(
            r.results(h),
            0,
            "{rejection:?}: it waits for its own outcome"
        );
    }
    // Busy: asked again.
    let (mut r, sid) = begun();
    r.c.execute_with(r.now, WALL, "CREATE RELAY a;", None, Some(secs(600)))
        .unwrap();
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.advance(secs(6));
    let s2 = r.open();
    let (attach_id, _) = last_of(&r, ClientRequest::AttachTransactionRequest);
    r.feed(s2, rejected(attach_id, RequestRejection::ServerBusy));
    for _ in 0..30 {
        r.advance(secs(2));
    }
    let (again, _) = last_of(&r, ClientRequest::AttachTransactionRequest);
    assert_ne!(again, attach_id, "a busy server is asked again");
    assert!(matches!(r.c.binding(), Binding::Detached(_)));
}

#[test]
fn x_9_reads_are_served_as_answered_with_no_linearizability_assumed() {
    // The client keeps no read cache: every read goes to the server and its answer, however
    // old, is what is reported.
    let mut r = Rig::new();
    let a = r.c.read(r.now, list_domains(), None).unwrap();
    let sid = r.open();
    let first = r.last().1.request_id;
    r.feed(sid, domains(first));
    let b = r.c.read(r.now, list_domains(), None).unwrap();
    r.pump();
    let second = r.last().1.request_id;
    assert_ne!(first, second, "asked again, not answered locally");
    r.feed(sid, domains(second));
    let replied = r
        .events
        .iter()
        .filter(|e| matches!(e, ClientEvent::Read { handle, .. } if *handle == a || *handle == b))
        .count();
    assert_eq!(replied, 2);
}

#[test]
fn c_7_the_clients_unsolicited_queue_is_bounded_too() {
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 9);
    cfg.exchange = cfg.exchange.with_unsolicited_capacity(3);
    let mut r = Rig::with(cfg);
    let h = r.c.read(r.now, list_domains(), None).unwrap();
    let sid = r.open();
    for i in 0..10 {
        r.feed(sid, notice(&format!("n{i}")));
    }
    let id = r.last().1.request_id;
    r.feed(sid, domains(id));
    assert!(
        r.events
            .iter()
            .any(|e| matches!(e, ClientEvent::Read { handle, .. } if *handle == h)),
        "replies still route"
    );
    let q: Vec<_> = std::iter::from_fn(|| r.c.poll_unsolicited()).collect();
    let frames = q
        .iter()
        .filter(|u| matches!(u, nervix_protocol::exchange::Unsolicited::Frame(_)))
        .count();
    let lost: u64 = q
        .iter()
        .map(|u| match u {
            nervix_protocol::exchange::Unsolicited::Lost { dropped } => *dropped,
            _ => 0,
        })
        .sum();
    assert_eq!((frames, lost), (3, 7));
}

// ----- regression tests of the core hardening -----------------------------------------------

fn small_in_flight(n: usize) -> ClientConfig {
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.exchange = cfg.exchange.with_max_in_flight(n);
    cfg
}

fn subscribe_opened(request_id: u64, name: &str) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(SubscriptionOpenedT {
                subscription: Box::new(SubscriptionHandleT {
                    name: name.into(),
                    generation: 1,
                }),
                domain: "d1".into(),
                relay: "orders".into(),
                subscription_type: Some(SubscriptionType::Row),
                schema: Box::default(),
            })),
            message: String::new(),
            diagnostics: vec![],
        })),
    )
}

#[test]
fn c_9_cancelling_a_queued_command_sends_nothing_and_ends_it_not_sent() {
    let mut r = Rig::with(small_in_flight(1));
    let a = r.exec("CREATE RELAY a;");
    let b = r.exec("CREATE RELAY b;");
    let sid = r.open();
    assert_eq!(r.sent.len(), 1, "b waits behind the in-flight limit");
    r.c.cancel(r.now, b).unwrap();
    r.pump();
    assert_eq!(
        r.result(b),
        Some(CommandResult::Failed(Failure::NotSent)),
        "never sent: it certainly had no effect"
    );
    assert_eq!(r.sent.len(), 1, "no CancelRequest for what was never sent");
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    r.advance(Duration::from_secs(1));
    assert!(matches!(r.result(a), Some(CommandResult::Completed(_))));
    assert_eq!(r.sent.len(), 1, "b never goes out, even after room is made");
    assert_eq!(r.results(b), 1);
    // Cancelled while waiting for a session: nothing is ever sent either.
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY c;");
    r.c.cancel(r.now, h).unwrap();
    r.pump();
    assert_eq!(r.result(h), Some(CommandResult::Failed(Failure::NotSent)));
    r.advance(Duration::from_secs(1));
    assert!(r.sent.is_empty());
}

#[test]
fn c_9_a_command_whose_cancel_was_asked_is_not_repeated_after_a_lost_session() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    r.c.cancel(r.now, h).unwrap();
    r.pump();
    let sent = r.sent.len();
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.advance(Duration::from_secs(6));
    assert!(
        matches!(
            r.result(h),
            Some(CommandResult::Uncertain {
                cause: UncertainCause::Cancelled,
                ..
            })
        ),
        "its first attempt may have run: uncertain, not repeated"
    );
    assert_eq!(r.sent.len(), sent, "nothing was sent again");
}

#[test]
fn f_8_a_violation_closes_the_stream() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    r.feed(sid, Bytes::from_static(b"NXSM-not-a-frame-at-all"));
    assert!(
        r.closes.contains(&(sid, false)),
        "the stream is closed, not left to linger: {:?}",
        r.closes
    );
    assert!(r.events.iter().any(|e| matches!(
        e,
        ClientEvent::SessionLost { session, loss: SessionLoss::Violation(_) } if *session == sid
    )));
    assert_eq!(
        r.results(h),
        0,
        "the command is repeated on the next session"
    );
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_ne!(s2, sid);
    assert_eq!(requests(&r, s2), vec![ClientRequest::CommandRequest]);
}

#[test]
fn l_3_requests_are_sent_in_the_order_they_were_made() {
    // A subscription asked for before BEGIN goes before it, not after it (where the session
    // would hold the transaction).
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION s AS SELECT 1")
        .unwrap();
    r.exec("BEGIN;");
    let sid = r.open();
    assert_eq!(
        requests(&r, sid),
        vec![
            ClientRequest::SubscribeRequest,
            ClientRequest::CommandRequest
        ]
    );
}

#[test]
fn l_3_a_subscription_queued_before_begin_waits_while_the_transaction_is_held() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let sub =
        r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION s AS SELECT 1")
            .unwrap();
    let sid = r.open();
    let (sub_id, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, rejected(sub_id, RequestRejection::ServerBusy));
    // BEGIN goes while the subscription backs off, and binds the transaction.
    let begin = r.exec("BEGIN;");
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(id, o));
    assert!(matches!(r.result(begin), Some(CommandResult::Completed(_))));
    assert!(r.c.binding().is_holding());
    let subscribes = |r: &Rig| {
        r.sent
            .iter()
            .filter(|(_, m)| m.request.client_request_type() == ClientRequest::SubscribeRequest)
            .count()
    };
    r.advance(Duration::from_secs(6));
    assert_eq!(subscribes(&r), 1, "not sent while the transaction is held");
    assert_eq!(
        r.c.subscription(sub).unwrap().state,
        SubscriptionState::Waiting,
        "still waiting"
    );
    // After a reconnect and re-attach the transaction is held again: still not sent.
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_eq!(requests(&r, s2)[0], ClientRequest::SubscribeRequest);
    // D-5 lets a pending subscription go before the transaction attach, never after it.
    assert_eq!(
        requests(&r, s2),
        vec![
            ClientRequest::SubscribeRequest,
            ClientRequest::AttachTransactionRequest
        ]
    );
    let (sub2, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(s2, rejected(sub2, RequestRejection::ServerBusy));
    let (attach, _) = last_of(&r, ClientRequest::AttachTransactionRequest);
    r.feed(s2, attach_reply(attach, attached(status("tx-1", "d1", 0))));
    assert!(matches!(r.c.binding(), Binding::Bound(_)));
    r.advance(Duration::from_secs(6));
    assert_eq!(
        subscribes(&r),
        2,
        "the busy subscription is not repeated while the transaction is bound"
    );
    // Once the transaction ends, it goes.
    let commit = r.exec("COMMIT;");
    let (id, cmd) = r.last_command();
    r.feed(
        s2,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(
        r.result(commit),
        Some(CommandResult::Completed(_))
    ));
    assert!(!r.c.binding().is_holding());
    assert_eq!(subscribes(&r), 3, "sent once no transaction is held");
}

#[test]
fn d_5_pending_clock_and_subscription_requests_go_before_the_transaction_attach() {
    let (mut r, sid) = begun();
    // A clock and a subscription kept from before the transaction, and the transaction.
    r.c.close(r.now, false);
    r.pump();
    // Reattached on the next session in order: clocks, subscriptions, transaction.
    let _ = sid;
    let mut r2 = Rig::new();
    r2.c.select_domain(Some("d1")).unwrap();
    r2.c.follow_clock(r2.now, "d1").unwrap();
    let sub =
        r2.c.subscribe(r2.now, "d1", "CREATE SUBSCRIPTION s AS SELECT 1")
            .unwrap();
    let s1 = r2.open();
    // Neither answered before BEGIN completes: they are in flight when the session dies.
    let begin = r2.exec("BEGIN;");
    let (id, cmd) = r2.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r2.feed(s1, outcome_frame(id, o));
    assert!(matches!(
        r2.result(begin),
        Some(CommandResult::Completed(_))
    ));
    let append = r2.exec("CREATE RELAY a;");
    r2.c.handle_closed(r2.now, s1);
    r2.pump();
    r2.advance(Duration::from_secs(6));
    let s2 = r2.open();
    assert_eq!(
        requests(&r2, s2),
        vec![
            ClientRequest::AttachDomainClockRequest,
            ClientRequest::SubscribeRequest,
            ClientRequest::AttachTransactionRequest
        ],
        "D-5: clocks, subscriptions, then the transaction; the append waits for the attach"
    );
    let (attach, _) = last_of(&r2, ClientRequest::AttachTransactionRequest);
    r2.feed(s2, attach_reply(attach, attached(status("tx-1", "d1", 0))));
    assert_eq!(
        requests(&r2, s2).last(),
        Some(&ClientRequest::CommandRequest),
        "the append goes once attached"
    );
    let _ = (sub, append);
}

#[test]
fn c_1_reads_move_to_a_new_session_when_identities_run_out() {
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 7);
    cfg.exchange = cfg.exchange.with_first_request_id(u64::MAX);
    let mut r = Rig::with(cfg);
    let first = r.c.read(r.now, list_domains(), None).unwrap();
    let s1 = r.open();
    r.feed(s1, domains(u64::MAX));
    assert!(matches!(
        read_result(&r, first),
        Some(ReadResult::Replied(_))
    ));
    // The session has no identity left: the next read opens a new session.
    let second = r.c.read(r.now, list_domains(), None).unwrap();
    r.pump();
    assert!(
        r.closes.contains(&(s1, false)),
        "the exhausted session is closed"
    );
    let s2 = r.open();
    assert_ne!(s1, s2);
    let (id, _) = last_of(&r, ClientRequest::ListDomainsRequest);
    assert_eq!(
        r.sent.last().map(|(s, _)| *s),
        Some(s2),
        "sent on the new session"
    );
    r.feed(s2, domains(id));
    assert!(matches!(
        read_result(&r, second),
        Some(ReadResult::Replied(_))
    ));
    // And a command likewise (every session of this client starts at the last identity).
    let h = r.exec("CREATE RELAY a;");
    assert!(r.closes.contains(&(s2, false)));
    let s3 = r.open();
    let (id, cmd) = r.last_command();
    assert_eq!((r.last().0, id), (s3, u64::MAX));
    r.feed(
        s3,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
}

#[test]
fn c_1_a_refused_request_with_no_identity_left_goes_on_a_new_session() {
    let mut cfg = small_in_flight(64);
    cfg.exchange = cfg.exchange.with_first_request_id(u64::MAX - 1);
    let mut r = Rig::with(cfg);
    let a = r.exec("CREATE RELAY a;");
    let b = r.exec("CREATE RELAY b;");
    let s1 = r.open();
    let ids: Vec<u64> = r.sent.iter().map(|(_, m)| m.request_id).collect();
    assert_eq!(ids, vec![u64::MAX - 1, u64::MAX]);
    let refs: Vec<String> = r
        .sent
        .iter()
        .map(|(_, m)| match &m.request {
            ClientRequestT::CommandRequest(c) => c.execution_reference.clone(),
            _ => unreachable!(),
        })
        .collect();
    r.feed(
        s1,
        rejected(u64::MAX, RequestRejection::TooManyRequestsInFlight),
    );
    r.feed(
        s1,
        outcome_frame(u64::MAX - 1, answer(&refs[0], completed())),
    );
    assert!(matches!(r.result(a), Some(CommandResult::Completed(_))));
    assert_eq!(r.results(b), 0, "not ended: it goes again elsewhere");
    assert!(
        r.sent.iter().filter(|(s, _)| *s == s1).count() == 2,
        "nothing more on the exhausted session"
    );
    let s2 = r.open();
    let (id, cmd) = r.last_command();
    assert_eq!(
        (r.last().0, id),
        (s2, u64::MAX - 1),
        "the new session counts from its own first identity"
    );
    assert_eq!(
        cmd.execution_reference, refs[1],
        "the same command, same reference"
    );
    r.feed(s2, outcome_frame(id, answer(&refs[1], completed())));
    assert!(matches!(r.result(b), Some(CommandResult::Completed(_))));
}

#[test]
fn d_4_a_session_every_slot_of_which_is_abandoned_is_replaced() {
    let mut r = Rig::with(small_in_flight(2));
    let short = Some(Duration::from_secs(1));
    let a =
        r.c.execute_with(r.now, WALL, "CREATE RELAY a;", None, short)
            .unwrap();
    let b =
        r.c.execute_with(r.now, WALL, "CREATE RELAY b;", None, short)
            .unwrap();
    let s1 = r.open();
    assert_eq!(r.sent.len(), 2);
    // The server never answers: both end uncertain, and their slots stay taken.
    r.advance(Duration::from_secs(1));
    for h in [a, b] {
        assert!(matches!(
            r.result(h),
            Some(CommandResult::Uncertain {
                cause: UncertainCause::Deadline,
                ..
            })
        ));
    }
    assert!(
        r.closes.contains(&(s1, false)),
        "the wedged session is ended"
    );
    let c = r.exec("CREATE RELAY c;");
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_ne!(s1, s2, "a new session carries new work");
    let (id, cmd) = r.last_command();
    assert_eq!(r.last().0, s2);
    r.feed(
        s2,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(c), Some(CommandResult::Completed(_))));
}

#[test]
fn d_4_a_call_whose_deadline_passes_unsent_ends_not_sent_and_replaces_the_session() {
    let mut r = Rig::with(small_in_flight(1));
    let a = r.exec("CREATE RELAY a;");
    let b =
        r.c.execute_with(
            r.now,
            WALL,
            "CREATE RELAY b;",
            None,
            Some(Duration::from_secs(1)),
        )
        .unwrap();
    let s1 = r.open();
    assert_eq!(r.sent.len(), 1, "b waits behind a");
    r.advance(Duration::from_secs(1));
    assert_eq!(
        r.result(b),
        Some(CommandResult::Failed(Failure::NotSent)),
        "never handed to the transport: certainly no effect"
    );
    assert!(
        r.closes.contains(&(s1, false)),
        "the session that carried nothing is ended"
    );
    // a may have run: it is repeated under its reference on the next session.
    let (_, first) = r.last_command();
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    let (id, again) = r.last_command();
    assert_eq!(r.last().0, s2);
    assert_eq!(again, first);
    r.feed(
        s2,
        outcome_frame(id, answer(&first.execution_reference, completed())),
    );
    assert!(matches!(r.result(a), Some(CommandResult::Completed(_))));
}

#[test]
fn d_1_redirects_in_a_row_that_complete_nothing_back_off() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let mut sid = r.open();
    let mut gaps = Vec::new();
    for _ in 0..4 {
        let (id, cmd) = r.last_command();
        let asked = r.now;
        let connects = r.connects.len();
        r.feed(
            sid,
            outcome_frame(
                id,
                answer(
                    &cmd.execution_reference,
                    redirect(Some("https://seed-1:7443/")),
                ),
            ),
        );
        // Wait for the reconnect, however long the client asks.
        while r.connects.len() == connects {
            let at = r.c.poll_timeout().expect("a reconnect is scheduled");
            r.now = at;
            r.c.handle_timeout(at);
            r.pump();
        }
        gaps.push(r.now.saturating_since(asked));
        sid = r.open();
    }
    assert_eq!(
        gaps[0],
        Duration::ZERO,
        "the first redirect is followed at once"
    );
    assert!(
        gaps[1..].iter().all(|g| *g > Duration::ZERO),
        "redirects in a row back off: {gaps:?}"
    );
    assert!(gaps[3] > gaps[1], "and the wait grows: {gaps:?}");
    // Completing something ends the streak.
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    r.exec("CREATE RELAY b;");
    let (id, cmd) = r.last_command();
    let connects = r.connects.len();
    r.feed(
        sid,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                redirect(Some("https://seed-1:7443/")),
            ),
        ),
    );
    assert_eq!(r.connects.len(), connects + 1, "followed at once again");
}

/// A SessionEnding whose reason is a LeaderRedirect naming `uri`.
fn ending_redirect(uri: &str) -> Bytes {
    let CommandDispositionT::LeaderRedirect(to) = redirect(Some(uri)) else {
        unreachable!("redirect() builds a LeaderRedirect")
    };
    server(ServerBodyT::SessionEnding(Box::new(SessionEndingT {
        reason: SessionEndReasonT::LeaderRedirect(to),
    })))
}

#[test]
fn d_1_session_endings_naming_a_leader_in_a_row_back_off() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let mut sid = r.open();
    let mut gaps = Vec::new();
    for _ in 0..4 {
        let (_, cmd) = r.last_command();
        let asked = r.now;
        let connects = r.connects.len();
        // The server ends the session, naming the same node as the leader each time.
        r.feed(sid, ending_redirect("https://seed-1:7443/"));
        assert!(r.result(h).is_none(), "the command is repeated, not ended");
        while r.connects.len() == connects {
            let at = r.c.poll_timeout().expect("a reconnect is scheduled");
            r.now = at;
            r.c.handle_timeout(at);
            r.pump();
        }
        assert_eq!(
            r.connects.last().unwrap().1,
            ep("https://seed-1:7443/"),
            "the named leader is the one tried"
        );
        gaps.push(r.now.saturating_since(asked));
        sid = r.open();
        let (_, again) = r.last_command();
        assert_eq!(again.execution_reference, cmd.execution_reference);
    }
    assert_eq!(
        gaps[0],
        Duration::ZERO,
        "the first redirect is followed at once"
    );
    assert!(
        gaps[1..].iter().all(|g| *g > Duration::ZERO),
        "session endings in a row back off: {gaps:?}"
    );
    assert!(
        gaps[1] < gaps[2] && gaps[2] < gaps[3],
        "and the wait grows: {gaps:?}"
    );
    // Completing something ends the streak.
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    // A session opens only for work: the next command is in flight when the session ends.
    r.exec("CREATE RELAY b;");
    let connects = r.connects.len();
    r.feed(sid, ending_redirect("https://seed-1:7443/"));
    assert_eq!(r.connects.len(), connects + 1, "followed at once again");
}

#[test]
fn f_6_a_query_that_cannot_be_sent_is_refused_at_the_call() {
    let mut r = Rig::new();
    let huge = format!("CREATE RELAY a COMMENT '{}';", "x".repeat(5 * 1024 * 1024));
    assert!(matches!(
        r.c.execute(r.now, WALL, &huge).unwrap_err(),
        ClientError::Unsendable(_)
    ));
    // A read whose request breaks the schema (page size outside 1..=100) likewise.
    let suggest = ClientRequestT::SuggestRequest(Box::new(SuggestRequestT {
        input: "SHOW".into(),
        cursor: 4,
        domain: None,
        page_size: 0,
        continuation: None,
    }));
    assert!(matches!(
        r.c.read(r.now, suggest, None).unwrap_err(),
        ClientError::Unsendable(_)
    ));
    r.pump();
    assert!(
        r.connects.is_empty(),
        "nothing was queued, no session opened"
    );
    assert_eq!(r.c.outstanding_commands() + r.c.outstanding_reads(), 0);
}

#[test]
fn l_1_names_that_cannot_be_names_are_refused_at_the_call() {
    let mut r = Rig::new();
    for bad in ["", "a\0b", "line\nbreak"] {
        assert!(
            matches!(
                r.c.select_domain(Some(bad)).unwrap_err(),
                ClientError::InvalidName { what: "domain", .. }
            ),
            "{bad:?}"
        );
    }
    let long = "d".repeat(3 * 1024 * 1024);
    assert!(matches!(
        r.c.select_domain(Some(&long)).unwrap_err(),
        ClientError::InvalidName { .. }
    ));
    assert_eq!(r.c.selected_domain(), None);
    assert!(r.c.follow_clock(r.now, "").is_err());
    assert!(r.c.unsubscribe(r.now, "").is_err());
    assert!(r.c.attach_transaction(r.now, "tx\0").is_err());
    r.c.select_domain(Some("tenant")).unwrap();
    assert_eq!(r.c.selected_domain(), Some("tenant"));
}

/// `frame` placed at the front of a 1 MiB receive buffer that the caller keeps: the slice
/// handed to the client shares the buffer. Returns the slice and the buffer.
fn in_shared_buffer(frame: &Bytes) -> (Bytes, Bytes) {
    let mut buffer = bytes::BytesMut::with_capacity(frame.len() + 1024 * 1024);
    buffer.extend_from_slice(frame);
    buffer.extend_from_slice(&[0u8; 1024 * 1024]);
    let whole = buffer.freeze();
    (whole.slice(..frame.len()), whole)
}

/// Whether `kept` lies inside `buffer`'s bytes.
fn inside(kept: &Bytes, buffer: &Bytes) -> bool {
    let span = buffer.as_ptr() as usize..buffer.as_ptr() as usize + buffer.len();
    span.contains(&(kept.as_ptr() as usize))
}

#[test]
fn f_9_a_kept_reply_is_copied_out_of_a_shared_receive_buffer() {
    // A command outcome above the copy-out size of the frame check.
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.message = "m".repeat(100 * 1024);
    let frame = outcome_frame(id, o);
    assert!(frame.len() >= 64 * 1024);
    let (slice, buffer) = in_shared_buffer(&frame);
    r.feed(sid, slice);
    let Some(CommandResult::Completed(report)) = r.result(h) else {
        panic!("completed")
    };
    assert_eq!(report.frame().bytes(), &frame);
    assert!(
        !inside(report.frame().bytes(), &buffer),
        "the report keeps its own copy, not the receive buffer"
    );
    // A read reply likewise.
    let read = r.c.read(r.now, list_domains(), None).unwrap();
    r.pump();
    let id = r.last().1.request_id;
    let many = reply(
        id,
        ReplyBodyT::DomainList(Box::new(DomainListT {
            domains: (0..4096)
                .map(|i| DomainInfoT {
                    domain: format!("domain-{i:08}"),
                    status: Some(DomainStatus::Running),
                    pace: DomainPaceT::UnpacedDomain(Box::default()),
                })
                .collect(),
        })),
    );
    assert!(many.len() >= 64 * 1024);
    let (slice, buffer) = in_shared_buffer(&many);
    r.feed(sid, slice);
    let kept = r
        .events
        .iter()
        .find_map(|e| match e {
            ClientEvent::Read {
                handle,
                result: ReadResult::Replied(f),
            } if *handle == read => Some(f.clone()),
            _ => None,
        })
        .expect("replied");
    assert_eq!(kept.bytes(), &many);
    assert!(
        !inside(kept.bytes(), &buffer),
        "the read reply keeps its own copy, not the receive buffer"
    );
    // A reply that owns its buffer alone is kept where it is: no copy.
    let h = r.exec("CREATE RELAY b;");
    let (id, cmd) = r.last_command();
    let mut o = answer(&cmd.execution_reference, completed());
    o.message = "m".repeat(100 * 1024);
    let alone = outcome_frame(id, o);
    let at = alone.as_ptr();
    r.feed(sid, alone);
    let Some(CommandResult::Completed(report)) = r.result(h) else {
        panic!("completed")
    };
    assert_eq!(report.frame().bytes().as_ptr(), at, "kept in place");
}

#[test]
fn l_1_a_name_of_half_the_frame_limit_is_accepted_and_one_byte_more_is_refused() {
    use nervix_protocol::limits::FRAME_LIMIT;
    let mut r = Rig::new();
    let at_limit = "d".repeat(FRAME_LIMIT / 2);
    let past = "d".repeat(FRAME_LIMIT / 2 + 1);
    assert!(matches!(
        r.c.select_domain(Some(&past)).unwrap_err(),
        ClientError::InvalidName { what: "domain", .. }
    ));
    assert_eq!(r.c.selected_domain(), None);
    assert!(matches!(
        r.c.follow_clock(r.now, &past).unwrap_err(),
        ClientError::InvalidName { .. }
    ));
    r.pump();
    assert!(r.connects.is_empty(), "nothing queued for a refused name");
    r.c.select_domain(Some(&at_limit)).unwrap();
    assert_eq!(r.c.selected_domain(), Some(at_limit.as_str()));
    // A name at the limit travels: the command naming it is sent with it.
    r.exec("CREATE RELAY a;");
    r.open();
    assert_eq!(
        r.last_command().1.domain.as_deref(),
        Some(at_limit.as_str())
    );
}

#[test]
fn c_3_frames_before_the_stream_is_open_are_not_read() {
    let mut r = Rig::new();
    let h = r.exec("CREATE RELAY a;");
    let (sid, _) = r.connects[0].clone();
    // A frame on a stream that is still opening: not read, so it ends nothing.
    let ending = server(ServerBodyT::SessionEnding(Box::new(SessionEndingT {
        reason: SessionEndReasonT::ServerShuttingDown(Box::default()),
    })));
    r.c.handle_frame(r.now, sid, ending);
    r.c.handle_frame(r.now, sid, Bytes::from_static(b"garbage!"));
    r.pump();
    assert_eq!(r.c.ignored_frames(), 2);
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, ClientEvent::SessionLost { .. })));
    let open = r.open();
    assert_eq!(open, sid);
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
}

#[test]
fn l_2_statements_are_served_by_their_own_requests() {
    let mut r = Rig::new();
    // USE selects locally and sends nothing.
    assert_eq!(
        r.c.run(r.now, WALL, "use tenant;").unwrap(),
        Routed::DomainSelected("tenant".into())
    );
    assert_eq!(r.c.selected_domain(), Some("tenant"));
    r.pump();
    assert!(r.connects.is_empty());
    let Routed::Request(list) = r.c.run(r.now, WALL, "LIST DOMAINS").unwrap() else {
        panic!()
    };
    let sid = r.open();
    let (id, req) = last_of(&r, ClientRequest::ListDomainsRequest);
    assert!(matches!(req, ClientRequestT::ListDomainsRequest(_)));
    r.feed(sid, domains(id));
    assert!(matches!(
        read_result(&r, list),
        Some(ReadResult::Replied(_))
    ));
    // The clock statements name the selected domain.
    r.c.run(r.now, WALL, "ATTACH DOMAIN CLOCK").unwrap();
    r.pump();
    let (_, req) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    assert!(matches!(req, ClientRequestT::AttachDomainClockRequest(a) if a.domain == "tenant"));
    r.c.run(r.now, WALL, "detach domain clock;").unwrap();
    r.pump();
    let (_, req) = last_of(&r, ClientRequest::DetachDomainClockRequest);
    assert!(matches!(req, ClientRequestT::DetachDomainClockRequest(a) if a.domain == "tenant"));
    // A subscription carries the exact statement, the selected domain and Row.
    let text = "CREATE SUBSCRIPTION live AS SELECT * FROM orders WHERE note = 'a;b'";
    r.c.run(r.now, WALL, &format!("{text};")).unwrap();
    r.pump();
    let (id, req) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(sid, subscribe_opened(id, "live"));
    let ClientRequestT::SubscribeRequest(s) = req else {
        panic!()
    };
    assert_eq!(
        (s.domain.as_str(), s.statement.as_str(), s.subscription_type),
        ("tenant", text, Some(SubscriptionType::Row))
    );
    r.c.run(r.now, WALL, "DELETE SUBSCRIPTION live").unwrap();
    r.pump();
    let (_, req) = last_of(&r, ClientRequest::UnsubscribeRequest);
    assert!(matches!(req, ClientRequestT::UnsubscribeRequest(u) if u.subscription == "live"));
    // Everything else is a command naming the selected domain.
    let Routed::Command(_) = r.c.run(r.now, WALL, "SHOW RELAYS").unwrap() else {
        panic!()
    };
    r.pump();
    assert_eq!(r.last_command().1.domain.as_deref(), Some("tenant"));
    // Separate calls come back for the application to stream, nothing sent on the session.
    let before = r.sent.len();
    let Routed::Upload(spec) = r.c.run(r.now, WALL, "UPLOAD RESOURCE b FROM 'x'").unwrap() else {
        panic!()
    };
    assert_eq!(
        (spec.domain.as_str(), spec.resource.as_str()),
        ("tenant", "b")
    );
    let Routed::Restore { statement, .. } = r.c.run(r.now, WALL, "RESTORE FROM 'a.nxb'").unwrap()
    else {
        panic!()
    };
    assert_eq!(statement, "RESTORE FROM 'a.nxb'");
    r.pump();
    assert_eq!(r.sent.len(), before);
    assert!(matches!(
        r.c.run(r.now, WALL, "DESCRIBE BACKUP 'a.nxb'").unwrap_err(),
        ClientError::Statement(StatementError::NotARequest { .. })
    ));
    // Without a selected domain, the statements that need one are refused.
    let mut fresh = Rig::new();
    for q in [
        "ATTACH DOMAIN CLOCK",
        "DETACH DOMAIN CLOCK",
        "CREATE SUBSCRIPTION s AS SELECT 1",
    ] {
        assert_eq!(
            fresh.c.run(fresh.now, WALL, q).unwrap_err(),
            ClientError::NoDomainSelected,
            "{q}"
        );
    }
    // Inside a transaction: RESTORE, USE and the L-3 requests are refused locally.
    let (mut r, _) = begun();
    for q in [
        "RESTORE FROM 'a.nxb'",
        "USE other",
        "ATTACH DOMAIN CLOCK",
        "CREATE SUBSCRIPTION s AS SELECT 1",
        "DELETE SUBSCRIPTION s",
    ] {
        assert_eq!(
            r.c.run(r.now, WALL, q).unwrap_err(),
            ClientError::InTransaction,
            "{q}"
        );
    }
}

#[test]
fn x_6_a_transaction_attached_by_its_identity_is_bound() {
    let mut r = Rig::new();
    let h = r.c.attach_transaction(r.now, "tx-9").unwrap();
    let sid = r.open();
    let (id, req) = last_of(&r, ClientRequest::AttachTransactionRequest);
    assert!(
        matches!(req, ClientRequestT::AttachTransactionRequest(a) if a.transaction_id == "tx-9")
    );
    assert_eq!(
        r.c.execute(r.now, WALL, "CREATE RELAY a;").unwrap_err(),
        ClientError::AttachInProgress,
        "a command waits to know which transaction it belongs to"
    );
    r.feed(sid, attach_reply(id, attached(status("tx-9", "d7", 3))));
    assert!(matches!(read_result(&r, h), Some(ReadResult::Replied(_))));
    let Binding::Bound(held) = r.c.binding() else {
        panic!("{:?}", r.c.binding())
    };
    assert_eq!((held.id.as_str(), held.position), ("tx-9", 3));
    assert_eq!(r.c.selected_domain(), Some("d7"), "its domain is adopted");
    r.exec("CREATE RELAY a;");
    let (_, cmd) = r.last_command();
    assert_eq!(
        (cmd.domain.as_deref(), cmd.expected_transaction_position),
        (Some("d7"), Some(3))
    );
    assert_eq!(
        r.c.attach_transaction(r.now, "tx-10").unwrap_err(),
        ClientError::InTransaction
    );
}

#[test]
fn k_1_a_detached_clock_is_not_attached_again() {
    let mut r = Rig::new();
    r.c.follow_clock(r.now, "d1").unwrap();
    let s1 = r.open();
    let (id, _) = last_of(&r, ClientRequest::AttachDomainClockRequest);
    r.feed(
        s1,
        reply(
            id,
            ReplyBodyT::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
                disposition: DomainClockAttachDispositionT::DomainClockAlreadyAttached(Box::new(
                    DomainClockAlreadyAttachedT {
                        domain: "d1".into(),
                    },
                )),
                message: String::new(),
            })),
        ),
    );
    assert_eq!(
        r.c.poll_clock_event(),
        Some(ClockEvent::AlreadyAttached {
            domain: "d1".into()
        })
    );
    assert!(r.c.follows_clock("d1"));
    // Lost: attached again on the next session.
    r.exec("SHOW DOMAINS;");
    r.c.handle_closed(r.now, s1);
    r.pump();
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_eq!(requests(&r, s2)[0], ClientRequest::AttachDomainClockRequest);
    // Detached by the application: followed no more, and not attached on later sessions.
    r.c.detach_clock(r.now, "d1").unwrap();
    assert!(!r.c.follows_clock("d1"));
    r.pump();
    assert_eq!(
        requests(&r, s2).last(),
        Some(&ClientRequest::DetachDomainClockRequest)
    );
    r.c.handle_closed(r.now, s2);
    r.pump();
    r.advance(Duration::from_secs(6));
    let s3 = r.open();
    assert!(!requests(&r, s3).contains(&ClientRequest::AttachDomainClockRequest));
}

#[test]
fn s_6_a_deleted_subscription_is_not_opened_again() {
    let mut r = Rig::new();
    r.c.subscribe(r.now, "d1", "CREATE SUBSCRIPTION live AS SELECT 1")
        .unwrap();
    let s1 = r.open();
    let (id, _) = last_of(&r, ClientRequest::SubscribeRequest);
    r.feed(s1, subscribe_opened(id, "live"));
    assert_eq!(r.c.live_subscriptions(), 1);
    r.exec("SHOW DOMAINS;");
    r.c.handle_closed(r.now, s1);
    r.pump();
    r.advance(Duration::from_secs(6));
    let s2 = r.open();
    assert_eq!(
        requests(&r, s2)[0],
        ClientRequest::SubscribeRequest,
        "kept across sessions"
    );
    let live = r.c.unsubscribe(r.now, "live").unwrap();
    assert_eq!(
        r.c.subscription(live).unwrap().state,
        SubscriptionState::Deleting
    );
    r.c.handle_closed(r.now, s2);
    r.pump();
    r.advance(Duration::from_secs(6));
    let s3 = r.open();
    assert!(
        !requests(&r, s3).contains(&ClientRequest::SubscribeRequest),
        "{:?}",
        requests(&r, s3)
    );
}

// ----- T-8: a session that answers nothing, and the reconnect back-off -----------------------

/// Waits, by the client's own timer, until it asks for a new connection.
fn until_connect(r: &mut Rig) {
    let connects = r.connects.len();
    while r.connects.len() == connects {
        let at = r.c.poll_timeout().expect("a reconnect is scheduled");
        r.now = at;
        r.c.handle_timeout(at);
        r.pump();
    }
}

#[test]
fn t_8_the_first_call_deadline_passing_on_a_silent_session_replaces_it() {
    let mut r = Rig::new();
    let a = r.exec("CREATE RELAY a;");
    let s1 = r.open();
    // The session stays open and answers nothing: not a frame of any kind.
    r.advance(Duration::from_secs(30) - Duration::from_nanos(1));
    assert!(
        r.closes.is_empty(),
        "nothing is given up before the deadline"
    );
    r.advance(Duration::from_nanos(1));
    assert!(matches!(
        r.result(a),
        Some(CommandResult::Uncertain {
            cause: UncertainCause::Deadline,
            ..
        })
    ));
    assert_eq!(
        r.closes,
        vec![(s1, false)],
        "one call lost on a silent session is enough to end it"
    );
    assert!(r.events.iter().any(|e| matches!(
        e,
        ClientEvent::SessionLost { session, loss: SessionLoss::Closed } if *session == s1
    )));
    // The next command goes on a new session, not into the silent one.
    let b = r.exec("CREATE RELAY b;");
    assert_eq!(
        requests(&r, s1).len(),
        1,
        "nothing more is sent on the silent session"
    );
    until_connect(&mut r);
    let s2 = r.open();
    assert_ne!(s1, s2);
    let (id, cmd) = r.last_command();
    assert_eq!((r.last().0, cmd.query.as_str()), (s2, "CREATE RELAY b;"));
    r.feed(
        s2,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(b), Some(CommandResult::Completed(_))));
}

#[test]
fn t_8_a_frame_received_at_the_very_time_the_call_was_sent_keeps_the_session() {
    let mut r = Rig::new();
    let short = Some(Duration::from_secs(2));
    let a =
        r.c.execute_with(r.now, WALL, "CREATE RELAY a;", None, short)
            .unwrap();
    let s1 = r.open();
    // Sent, then a frame arrives at the same instant: the session was heard from since.
    r.feed(s1, notice("still here"));
    r.advance(Duration::from_secs(2));
    assert!(matches!(
        r.result(a),
        Some(CommandResult::Uncertain {
            cause: UncertainCause::Deadline,
            ..
        })
    ));
    assert!(r.closes.is_empty(), "a session that was heard from is kept");
    assert_eq!(r.c.session(), Some(s1));
    r.exec("CREATE RELAY b;");
    let (_, cmd) = r.last_command();
    assert_eq!((r.last().0, cmd.query.as_str()), (s1, "CREATE RELAY b;"));
}

#[test]
fn t_8_a_frame_received_before_the_call_was_sent_does_not_keep_the_session() {
    // Just before in time, and at the same instant but before the call went out.
    for before in [Duration::from_nanos(1), Duration::ZERO] {
        let mut r = Rig::new();
        let a = r.exec("CREATE RELAY a;");
        let s1 = r.open();
        let (id, cmd) = r.last_command();
        r.feed(
            s1,
            outcome_frame(id, answer(&cmd.execution_reference, completed())),
        );
        assert!(matches!(r.result(a), Some(CommandResult::Completed(_))));
        r.advance(Duration::from_secs(1) - before);
        r.feed(s1, notice("last words"));
        r.advance(before);
        let b =
            r.c.execute_with(
                r.now,
                WALL,
                "CREATE RELAY b;",
                None,
                Some(Duration::from_secs(2)),
            )
            .unwrap();
        r.pump();
        assert_eq!(r.last().0, s1);
        r.advance(Duration::from_secs(2));
        assert!(matches!(
            r.result(b),
            Some(CommandResult::Uncertain {
                cause: UncertainCause::Deadline,
                ..
            })
        ));
        assert_eq!(r.closes, vec![(s1, false)], "{before:?} before the call");
    }
}

#[test]
fn t_8_a_call_queued_behind_the_in_flight_limit_is_silent_from_when_it_was_sent() {
    let mut r = Rig::with(small_in_flight(2));
    let a = r.exec("CREATE RELAY a;");
    r.exec("CREATE RELAY z;");
    let b =
        r.c.execute_with(
            r.now,
            WALL,
            "CREATE RELAY b;",
            None,
            Some(Duration::from_secs(10)),
        )
        .unwrap();
    let s1 = r.open();
    assert_eq!(r.sent.len(), 2, "b waits behind a and z");
    // a's reply comes after b was registered, but it is what lets b go out: nothing is
    // heard after b was sent.
    r.advance(Duration::from_secs(5));
    let (id, cmd) = match &r.sent[0].1.request {
        ClientRequestT::CommandRequest(c) => (r.sent[0].1.request_id, c.clone()),
        other => panic!("{other:?}"),
    };
    r.feed(
        s1,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    assert!(matches!(r.result(a), Some(CommandResult::Completed(_))));
    assert_eq!(r.last_command().1.query, "CREATE RELAY b;");
    r.advance(Duration::from_secs(5));
    assert!(matches!(
        r.result(b),
        Some(CommandResult::Uncertain {
            cause: UncertainCause::Deadline,
            ..
        })
    ));
    assert_eq!(r.closes, vec![(s1, false)]);
}

/// The waits between connections when every session the server accepts ends at once, in
/// `ending` ways, before any request of it is answered.
fn waits_when_every_session_ends_at_once(ending: impl Fn(&mut Rig, SessionId)) -> Vec<Duration> {
    let mut r = Rig::new();
    r.exec("CREATE RELAY a;");
    let mut waits = Vec::new();
    for _ in 0..6 {
        let sid = r.open();
        let ended = r.now;
        ending(&mut r, sid);
        until_connect(&mut r);
        waits.push(r.now.saturating_since(ended));
    }
    waits
}

#[test]
fn d_6_sessions_ended_at_once_in_a_row_are_reopened_after_growing_waits() {
    let shutdown = server(ServerBodyT::SessionEnding(Box::new(SessionEndingT {
        reason: SessionEndReasonT::ServerShuttingDown(Box::default()),
    })));
    for waits in [
        waits_when_every_session_ends_at_once(|r, sid| {
            r.c.handle_closed(r.now, sid);
            r.pump();
        }),
        waits_when_every_session_ends_at_once(|r, sid| r.feed(sid, shutdown.clone())),
        // A redirect to a leader the client must not follow (http from https).
        waits_when_every_session_ends_at_once(|r, sid| {
            r.feed(sid, ending_redirect("http://node-2:7080/"))
        }),
    ] {
        assert!(
            waits.windows(2).all(|w| w[0] < w[1]),
            "opening a session does not restart the back-off: {waits:?}"
        );
        assert!(waits[5] >= Duration::from_millis(800), "{waits:?}");
    }
}

#[test]
fn d_6_the_reconnect_back_off_starts_over_only_once_a_session_completed_a_request() {
    let mut r = Rig::new();
    r.exec("CREATE RELAY a;");
    let mut sid = r.open();
    for _ in 0..5 {
        r.c.handle_closed(r.now, sid);
        r.pump();
        until_connect(&mut r);
        sid = r.open();
    }
    // A frame that answers nothing does not reset the back-off.
    r.feed(sid, notice("hello"));
    let ended = r.now;
    r.c.handle_closed(r.now, sid);
    r.pump();
    until_connect(&mut r);
    let long = r.now.saturating_since(ended);
    assert!(long >= Duration::from_millis(800), "{long:?}");
    // A reply does.
    let sid = r.open();
    let (id, cmd) = r.last_command();
    r.feed(
        sid,
        outcome_frame(id, answer(&cmd.execution_reference, completed())),
    );
    r.exec("CREATE RELAY b;");
    let ended = r.now;
    r.c.handle_closed(r.now, sid);
    r.pump();
    until_connect(&mut r);
    let short = r.now.saturating_since(ended);
    assert!(short <= Duration::from_millis(50), "{short:?}");
}

// ----- stats ----------------------------------------------------------------------------------

#[test]
fn stats_count_frames_sessions_redirects_outcomes_and_queue_drops() {
    let mut cfg = ClientConfig::new(vec![ep("https://seed-1:7443/")], 9);
    cfg.exchange = cfg.exchange.with_unsolicited_capacity(3);
    let mut r = Rig::with(cfg);
    assert_eq!(r.c.stats(), ClientStats::default());
    let h = r.exec("CREATE RELAY a;");
    let s1 = r.open();
    let (id, cmd) = r.last_command();
    let sent_bytes: u64 = r.raw.iter().map(|(_, f)| f.len() as u64).sum();
    // Five notices past a queue of three: two dropped, three held.
    let mut in_bytes = 0;
    for i in 0..5 {
        let n = notice(&format!("n{i}"));
        in_bytes += n.len() as u64;
        r.feed(s1, n);
    }
    let to_leader = outcome_frame(
        id,
        answer(
            &cmd.execution_reference,
            redirect(Some("https://node-2:7443/")),
        ),
    );
    in_bytes += to_leader.len() as u64;
    r.feed(s1, to_leader);
    let s2 = r.open();
    let (id2, _) = r.last_command();
    let done = outcome_frame(id2, answer(&cmd.execution_reference, completed()));
    in_bytes += done.len() as u64;
    r.feed(s2, done);
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
    let s = r.c.stats();
    assert_eq!(s.connects, 2);
    assert_eq!(s.sessions_opened, 2);
    assert_eq!(s.redirects, 1);
    // A redirect in a command's answer: the client itself leaves the follower's session.
    assert_eq!(s.sessions_closed, 1);
    assert_eq!(
        s.sessions_lost_transport + s.sessions_lost_ending + s.sessions_lost_violation,
        0
    );
    assert_eq!(
        (
            s.commands_completed,
            s.commands_failed,
            s.commands_uncertain
        ),
        (1, 0, 0)
    );
    assert_eq!(s.frames_in, 7);
    assert_eq!(s.bytes_in, in_bytes);
    assert_eq!(s.frames_out, r.raw.len() as u64);
    assert_eq!(
        s.bytes_out,
        r.raw.iter().map(|(_, f)| f.len() as u64).sum::<u64>()
    );
    assert!(s.bytes_out > sent_bytes);
    assert_eq!(s.unsolicited_dropped, 2);
    assert!(s.unsolicited_held_bytes > 0);
    // Reading the queue empties what it holds; what was dropped stays counted.
    while r.c.poll_unsolicited().is_some() {}
    let s = r.c.stats();
    assert_eq!((s.unsolicited_held_bytes, s.unsolicited_dropped), (0, 2));
}

#[test]
fn stats_count_a_violation_and_a_frame_of_a_stream_not_yet_open() {
    let mut r = Rig::new();
    r.exec("CREATE RELAY a;");
    r.pump();
    let (sid, _) = r.connects.last().cloned().unwrap();
    // Before the stream is reported open its frames are not read, only counted as ignored.
    r.c.handle_frame(r.now, sid, notice("early"));
    assert_eq!((r.c.stats().frames_ignored, r.c.stats().frames_in), (1, 0));
    let sid = r.open();
    r.feed(sid, Bytes::from_static(b"not a frame at all"));
    let s = r.c.stats();
    assert_eq!(s.sessions_lost_violation, 1);
    assert_eq!(s.frames_in, 1);
    assert_eq!(s.sessions_lost_transport + s.sessions_lost_ending, 0);
}

#[test]
fn stats_count_a_session_the_server_ended_with_a_redirect_once() {
    let mut r = Rig::new();
    r.exec("CREATE RELAY a;");
    let sid = r.open();
    r.feed(sid, ending_redirect("https://node-2:7443/"));
    let s = r.c.stats();
    assert_eq!((s.sessions_lost_ending, s.redirects), (1, 1));
    assert_eq!(s.sessions_closed + s.sessions_lost_transport, 0);
}

#[test]
fn stats_count_a_read_a_transport_loss_and_an_uncertain_command() {
    let mut r = Rig::new();
    r.exec("CREATE RELAY a;");
    let sid = r.open();
    r.c.read(r.now, list_domains(), None).unwrap();
    r.pump();
    let id = r.last().1.request_id;
    r.feed(sid, domains(id));
    r.c.handle_closed(r.now, sid);
    r.pump();
    r.advance(Duration::from_secs(3600));
    let s = r.c.stats();
    assert_eq!(s.reads_ended, 1);
    assert_eq!(s.sessions_lost_transport, 1);
    assert_eq!(s.commands_uncertain, 1);
}

#[test]
fn stats_count_a_failed_command_apart_from_completed_and_uncertain_ones() {
    let (r, _, res) = first_attempt(CommandDispositionT::RequestFailed(Box::default()));
    assert!(matches!(res, Some(CommandResult::Failed(_))), "{res:?}");
    let s = r.c.stats();
    assert_eq!(
        (
            s.commands_failed,
            s.commands_completed,
            s.commands_uncertain
        ),
        (1, 0, 0)
    );
    // Two failures count two: the counter adds, it does not multiply or overwrite.
    let mut r = Rig::new();
    for _ in 0..2 {
        let h = r.exec("CREATE RELAY a;");
        let sid = if r.c.stats().sessions_opened == 0 {
            r.open()
        } else {
            r.connects.last().unwrap().0
        };
        r.pump();
        let (id, cmd) = r.last_command();
        r.feed(
            sid,
            outcome_frame(
                id,
                answer(
                    &cmd.execution_reference,
                    CommandDispositionT::RequestFailed(Box::default()),
                ),
            ),
        );
        assert!(matches!(r.result(h), Some(CommandResult::Failed(_))));
    }
    assert_eq!(r.c.stats().commands_failed, 2);
}

/// A repetition is a separate call and is held to L-2 like a new command: several statements
/// that carry no transaction position are not sent outside a transaction, whoever built the
/// retained command; with the position of a transaction's append they belong to it.
#[test]
fn l_2_a_repetition_of_several_statements_outside_a_transaction_is_refused_before_sending() {
    let mut r = Rig::new();
    let mut rng = nervix_protocol::rng::Rng::new(3);
    let command = RetainedCommand {
        reference: ExecutionReference::new_v7(WALL, &mut rng),
        query: "CREATE RELAY a; CREATE RELAY b;".into(),
        domain: Some("d1".into()),
        position: None,
        preview: None,
        created: r.now,
    };
    assert_eq!(
        r.c.recover(r.now, &command, None).unwrap_err(),
        ClientError::Statement(StatementError::SeveralOutsideTransaction)
    );
    // DESCRIBE TRANSACTION never travels with another statement, in a transaction or not.
    let describe = RetainedCommand {
        query: "DESCRIBE TRANSACTION; CREATE RELAY a;".into(),
        position: Some(0),
        ..command.clone()
    };
    assert!(matches!(
        r.c.recover(r.now, &describe, None).unwrap_err(),
        ClientError::Statement(StatementError::MustTravelAlone { .. })
    ));
    r.pump();
    assert!(
        r.connects.is_empty() && r.sent.is_empty(),
        "nothing was sent"
    );
    // An append of several statements to a transaction carries its position: it is taken.
    let append = RetainedCommand {
        position: Some(4),
        ..command
    };
    assert!(r.c.recover(r.now, &append, None).is_ok());
}

/// The selected domain stays while a BEGIN is unanswered (L-3): the server binds the
/// transaction to the session as it runs the BEGIN, so every request sent behind it is
/// already one of the transaction and must name its domain; the subscriptions and clocks L-3
/// names wait for the BEGIN's answer the same way. Once the BEGIN failed, the domain may
/// change again.
#[test]
fn l_3_the_selected_domain_does_not_change_while_a_begin_is_unanswered() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let begin = r.exec("BEGIN;");
    let sid = r.open();
    let (id, cmd) = r.last_command();
    assert_eq!(
        r.c.select_domain(Some("d2")).unwrap_err(),
        ClientError::InTransaction
    );
    assert_eq!(
        r.c.run(r.now, WALL, "USE d2;").unwrap_err(),
        ClientError::InTransaction
    );
    assert_eq!(r.c.selected_domain(), Some("d1"));
    // Selecting the same domain again changes nothing and is taken.
    r.c.select_domain(Some("d1")).unwrap();
    assert_eq!(
        r.c.select_domain(None).unwrap_err(),
        ClientError::InTransaction
    );
    // A command made behind the BEGIN names the domain the BEGIN named.
    r.exec("CREATE RELAY a;");
    assert_eq!(r.last_command().1.domain.as_deref(), Some("d1"));
    // The BEGIN fails: nothing is held, and the domain may change.
    let o = answer(
        &cmd.execution_reference,
        CommandDispositionT::RequestFailed(Box::default()),
    );
    r.feed(sid, outcome_frame(id, o));
    assert!(matches!(r.result(begin), Some(CommandResult::Failed(_))));
    r.c.select_domain(Some("d2")).unwrap();
    assert_eq!(r.c.selected_domain(), Some("d2"));
}

#[test]
fn d_3_after_a_loss_the_endpoints_learned_from_redirects_and_observations_and_every_seed_are_tried()
{
    let seeds = vec![ep("https://seed-1:7443/"), ep("https://seed-2:7443/")];
    let mut cfg = ClientConfig::new(seeds.clone(), 11);
    cfg.max_learned_endpoints = 2;
    cfg.call_timeout = Duration::from_secs(3600);
    let mut r = Rig::with(cfg);
    r.exec("CREATE RELAY a;");
    let s1 = r.open();
    // One endpoint learned from an observation, one from a redirect.
    r.feed(
        s1,
        server(ServerBodyT::LeadershipObserved(Box::new(
            LeadershipObservedT {
                leadership: LeadershipT::LeaderIsRemote(Box::new(LeaderIsRemoteT {
                    leader: Box::new(LeaderEndpointsT {
                        node: "node-3".into(),
                        grpc_uri: Some("https://node-3:7443/".into()),
                        web_console_uri: None,
                    }),
                })),
            },
        ))),
    );
    let (id, cmd) = r.last_command();
    r.feed(
        s1,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                redirect(Some("https://node-4:7443/")),
            ),
        ),
    );
    assert_eq!(r.connects.last().unwrap().1, ep("https://node-4:7443/"));
    // From here on no endpoint answers: each attempt fails, and the next goes after its pause.
    let mut tried = Vec::new();
    for _ in 0..12 {
        let (sid, endpoint) = r.connects.last().cloned().unwrap();
        tried.push(endpoint);
        let before = r.connects.len();
        r.c.handle_closed(r.now, sid);
        r.pump();
        let mut waited = 0;
        while r.connects.len() == before {
            assert!(waited < 60, "no new attempt within a minute of a failure");
            r.advance(Duration::from_secs(1));
            waited += 1;
        }
    }
    let learned = [ep("https://node-3:7443/"), ep("https://node-4:7443/")];
    for e in learned.iter().chain(seeds.iter()) {
        assert!(tried.contains(e), "{e} was never tried: {tried:?}");
    }
    assert!(
        tried
            .iter()
            .all(|e| learned.contains(e) || seeds.contains(e)),
        "only learned endpoints and seeds are tried: {tried:?}"
    );
    assert_eq!(
        tried.first(),
        Some(&ep("https://node-4:7443/")),
        "the redirect's leader first"
    );
}

#[test]
fn d_1_a_redirected_command_of_a_transaction_is_repeated_at_the_leader_only_after_the_attach() {
    let (mut r, s1) = begun();
    let h = r.exec("CREATE RELAY a;");
    let (id, cmd) = r.last_command();
    r.feed(
        s1,
        outcome_frame(
            id,
            answer(
                &cmd.execution_reference,
                redirect(Some("https://node-2:7443/")),
            ),
        ),
    );
    assert_eq!(r.connects.last().unwrap().1, ep("https://node-2:7443/"));
    let before = r.sent.len();
    let s2 = r.open();
    let order: Vec<ClientRequest> = r.sent[before..]
        .iter()
        .map(|(_, m)| m.request.client_request_type())
        .collect();
    assert_eq!(
        order,
        vec![ClientRequest::AttachTransactionRequest],
        "the transaction is attached at the leader first, and nothing of it goes before"
    );
    let (_, attach) = r.last();
    let ClientRequestT::AttachTransactionRequest(a) = &attach.request else {
        unreachable!()
    };
    assert_eq!(a.transaction_id, "tx-1");
    r.feed(
        s2,
        attach_reply(attach.request_id, attached(status("tx-1", "d1", 0))),
    );
    let (id2, again) = r.last_command();
    assert_eq!(
        again, cmd,
        "then the command, unchanged, under its reference"
    );
    assert_eq!(r.sent.len(), before + 2);
    let mut o = answer(&cmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 1)));
    r.feed(s2, outcome_frame(id2, o));
    assert!(matches!(r.result(h), Some(CommandResult::Completed(_))));
}

/// L-2 with X-2: several statements made while a BEGIN is unanswered are taken like any write
/// made then: they wait behind the BEGIN and travel inside the transaction it binds, with its
/// position. Several reads, which would go at once outside any transaction, stay refused, and
/// so does the same query once the BEGIN bound nothing.
#[test]
fn l_2_several_statements_made_while_begin_is_unanswered_wait_and_travel_inside_the_transaction() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let begin = r.exec("BEGIN;");
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    let before = r.sent.len();
    let several = r.exec("CREATE RELAY a; CREATE RELAY b;");
    assert!(
        commands_from(&r, sid, before).is_empty(),
        "held behind the BEGIN"
    );
    assert!(matches!(
        r.c.execute_with(r.now, WALL, "SHOW DOMAINS; SHOW DOMAINS;", None, None),
        Err(ClientError::Statement(
            StatementError::SeveralOutsideTransaction
        ))
    ));
    let mut o = answer(&bcmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(bid, o));
    assert!(matches!(r.result(begin), Some(CommandResult::Completed(_))));
    let out = commands_from(&r, sid, before);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].1.query, "CREATE RELAY a; CREATE RELAY b;");
    assert_eq!(out[0].1.expected_transaction_position, Some(0));
    assert_eq!(r.results(several), 0, "it waits for its own outcome");

    // A BEGIN that binds nothing: the several statements end unsent, and once no BEGIN is
    // unanswered the same query is refused at once.
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let _ = r.exec("BEGIN;");
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    let before = r.sent.len();
    let several = r.exec("CREATE RELAY a; CREATE RELAY b;");
    r.feed(
        sid,
        outcome_frame(bid, answer(&bcmd.execution_reference, completed())),
    );
    assert!(matches!(
        r.result(several),
        Some(CommandResult::Failed(Failure::TransactionNotBegun))
    ));
    assert!(commands_from(&r, sid, before).is_empty(), "never sent");
    assert!(matches!(
        r.c.execute_with(r.now, WALL, "CREATE RELAY a; CREATE RELAY b;", None, None),
        Err(ClientError::Statement(
            StatementError::SeveralOutsideTransaction
        ))
    ));
}

/// L-2 with X-2: [`Client::run`] routes a query of several statements the way
/// [`Client::execute`] takes it: made while a BEGIN is unanswered, a write of several
/// statements waits behind the BEGIN and travels inside the transaction it binds; several
/// reads stay refused.
#[test]
fn l_2_run_takes_several_statements_made_while_begin_is_unanswered_as_execute_does() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let _begin = r.exec("BEGIN;");
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    let before = r.sent.len();
    let routed = r.c.run(r.now, WALL, "CREATE RELAY a; CREATE RELAY b;");
    let Ok(Routed::Command(several)) = routed else {
        panic!("refused while the BEGIN is unanswered: {routed:?}");
    };
    assert!(
        commands_from(&r, sid, before).is_empty(),
        "held behind the BEGIN"
    );
    assert!(matches!(
        r.c.run(r.now, WALL, "SHOW DOMAINS; SHOW DOMAINS;"),
        Err(ClientError::Statement(
            StatementError::SeveralOutsideTransaction
        ))
    ));
    let mut o = answer(&bcmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(bid, o));
    let out = commands_from(&r, sid, before);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].1.query, "CREATE RELAY a; CREATE RELAY b;");
    assert_eq!(out[0].1.expected_transaction_position, Some(0));
    assert_eq!(r.results(several), 0, "it waits for its own outcome");
}

/// X-2: commands made while a BEGIN is unanswered wait behind that BEGIN for the transaction
/// it binds; a second BEGIN then would leave it unknown which transaction a later command
/// belongs to, so it is refused, typed, with nothing taken. Once the first is answered a BEGIN
/// goes as before, and the held command went with the first transaction's position.
#[test]
fn x_2_a_begin_made_while_another_is_unanswered_is_refused_and_takes_nothing() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let begin = r.exec("BEGIN;");
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    let before = r.sent.len();
    let held = r.exec("CREATE RELAY a;");
    assert!(matches!(
        r.c.execute_with(r.now, WALL, "BEGIN;", None, None),
        Err(ClientError::BeginUnanswered)
    ));
    r.pump();
    assert!(commands_from(&r, sid, before).is_empty(), "nothing went");
    let mut o = answer(&bcmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(bid, o));
    assert!(matches!(r.result(begin), Some(CommandResult::Completed(_))));
    let out = commands_from(&r, sid, before);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].1.query, "CREATE RELAY a;");
    assert_eq!(out[0].1.expected_transaction_position, Some(0));
    assert_eq!(r.results(held), 0);
}

/// L-3 with X-2: a BEGIN made and not yet sent (no session is open) is unanswered too: the
/// selected domain does not change behind it, so what is made after it names the domain the
/// BEGIN named.
#[test]
fn l_3_the_selected_domain_does_not_change_while_a_begin_waits_unsent() {
    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let _begin = r.exec("BEGIN;");
    assert_eq!(
        r.c.select_domain(Some("d2")).unwrap_err(),
        ClientError::InTransaction
    );
    assert_eq!(r.c.selected_domain(), Some("d1"));
    r.c.select_domain(Some("d1")).unwrap();
    let sid = r.open();
    let (_, cmd) = r.last_command();
    assert_eq!(cmd.query, "BEGIN;");
    assert_eq!(cmd.domain.as_deref(), Some("d1"));
    let _ = sid;
}

/// X-2 on the separate call: a repeated BEGIN is held to the rule of a new one (refused while
/// another BEGIN is unanswered, nothing taken), a repeated write is not, and a repeated BEGIN,
/// once taken, is the one the writes made after it wait behind for their position.
#[test]
fn x_2_a_repeated_begin_is_held_to_the_rule_of_a_new_one_and_writes_wait_behind_it() {
    let mut rng = nervix_protocol::rng::Rng::new(5);
    let mut r = Rig::new();
    let retained = |query: &str, rng: &mut nervix_protocol::rng::Rng, now| RetainedCommand {
        reference: ExecutionReference::new_v7(WALL, rng),
        query: query.into(),
        domain: Some("d1".into()),
        position: None,
        preview: None,
        created: now,
    };
    r.c.select_domain(Some("d1")).unwrap();
    let _first = r.exec("BEGIN;");
    assert_eq!(
        r.c.recover(r.now, &retained("BEGIN;", &mut rng, r.now), None)
            .unwrap_err(),
        ClientError::BeginUnanswered
    );
    assert!(
        r.c.recover(r.now, &retained("CREATE RELAY z;", &mut rng, r.now), None)
            .is_ok(),
        "a repeated write is no BEGIN"
    );

    let mut r = Rig::new();
    r.c.select_domain(Some("d1")).unwrap();
    let begin =
        r.c.recover(r.now, &retained("BEGIN;", &mut rng, r.now), None)
            .unwrap();
    let sid = r.open();
    let (bid, bcmd) = r.last_command();
    assert_eq!(bcmd.query, "BEGIN;");
    let before = r.sent.len();
    let held = r.exec("CREATE RELAY a;");
    assert!(
        commands_from(&r, sid, before).is_empty(),
        "held behind the repeated BEGIN"
    );
    let mut o = answer(&bcmd.execution_reference, completed());
    o.transaction = Some(Box::new(status("tx-1", "d1", 0)));
    r.feed(sid, outcome_frame(bid, o));
    assert!(matches!(r.result(begin), Some(CommandResult::Completed(_))));
    let out = commands_from(&r, sid, before);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].1.expected_transaction_position, Some(0));
    assert_eq!(r.results(held), 0);
}
