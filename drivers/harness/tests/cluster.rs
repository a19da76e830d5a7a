//! The simulated cluster answers real client frames with real server frames: recovery by
//! execution reference, redirects, transactions, session endings, expiry and every fault flag.

use bytes::Bytes;
use nervix_harness::cluster::{relay_schema, TRANSACTION_EXPIRY};
use nervix_harness::{ClusterConfig, ConnId, ConnectRefused, Faults, Output, SimCluster};
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientMessageRoot, ServerFrame};
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use nervix_protocol::transfer::{TransferAssembler, TransferProgress};
use std::collections::{BTreeMap, VecDeque};

/// What arrived on one stream, decoded.
#[derive(Debug)]
enum Got {
    Reply(u64, ReplyBodyT),
    Other(ServerBodyT),
    Close,
    Malformed,
}

/// A test driver: sends encoded client frames, drains the cluster's output, joins transfer
/// parts, and keeps what arrived per stream.
struct Driver {
    cl: SimCluster,
    now: Timestamp,
    encoder: Encoder,
    assemblers: BTreeMap<ConnId, TransferAssembler>,
    inbox: BTreeMap<ConnId, VecDeque<Got>>,
    parts: usize,
}

impl Driver {
    fn new(config: ClusterConfig) -> Self {
        Self {
            cl: SimCluster::new(config),
            now: Timestamp::ZERO,
            encoder: Encoder::new(),
            assemblers: BTreeMap::new(),
            inbox: BTreeMap::new(),
            parts: 0,
        }
    }

    fn nodes(n: usize) -> Self {
        Self::new(ClusterConfig {
            nodes: n,
            ..ClusterConfig::default()
        })
    }

    fn connect(&mut self, node: usize) -> ConnId {
        let endpoint = self.cl.endpoints()[node].clone();
        self.cl.connect(self.now, &endpoint).expect("node is up")
    }

    fn frame(&mut self, id: u64, request: ClientRequestT) -> Bytes {
        self.encoder
            .encode::<ClientMessageRoot>(&ClientMessageT {
                request_id: id,
                request,
            })
            .expect("client frame")
    }

    /// Sends without draining the cluster's output.
    fn send_only(&mut self, conn: ConnId, id: u64, request: ClientRequestT) {
        let frame = self.frame(id, request);
        self.cl.receive(self.now, conn, frame);
    }

    fn send(&mut self, conn: ConnId, id: u64, request: ClientRequestT) {
        self.send_only(conn, id, request);
        self.pump();
    }

    fn pump(&mut self) {
        while let Some((conn, out)) = self.cl.poll_output() {
            let got = match out {
                Output::Close => Got::Close,
                Output::Frame(bytes) => match ServerFrame::check(bytes) {
                    Err(_) => Got::Malformed,
                    Ok(f) => {
                        let msg = f.unpack();
                        match msg.body {
                            ServerBodyT::Reply(r) => match r.body {
                                ReplyBodyT::TransferPart(_) => {
                                    self.parts += 1;
                                    let view = f.view();
                                    let reply = view.body_as_reply().unwrap();
                                    let part = reply.body_as_transfer_part().unwrap();
                                    match self
                                        .assemblers
                                        .entry(conn)
                                        .or_default()
                                        .accept(r.request_id, &part)
                                        .expect("parts join")
                                    {
                                        TransferProgress::Complete(joined) => {
                                            let ServerBodyT::Reply(r) = joined.unpack().body else {
                                                panic!("joined frame is a reply");
                                            };
                                            Got::Reply(r.request_id, r.body)
                                        }
                                        _ => continue,
                                    }
                                }
                                body => Got::Reply(r.request_id, body),
                            },
                            other => Got::Other(other),
                        }
                    }
                },
            };
            self.inbox.entry(conn).or_default().push_back(got);
        }
    }

    /// Takes the terminal reply to `id` on `conn`.
    fn reply(&mut self, conn: ConnId, id: u64) -> ReplyBodyT {
        let inbox = self.inbox.entry(conn).or_default();
        let at = inbox
            .iter()
            .position(|g| matches!(g, Got::Reply(r, _) if *r == id))
            .unwrap_or_else(|| panic!("no reply to {id} on {conn}: {inbox:?}"));
        match inbox.remove(at) {
            Some(Got::Reply(_, body)) => body,
            _ => unreachable!(),
        }
    }

    /// Everything else that arrived on `conn`.
    fn rest(&mut self, conn: ConnId) -> Vec<Got> {
        self.inbox.remove(&conn).unwrap_or_default().into()
    }

    fn ask(&mut self, conn: ConnId, id: u64, request: ClientRequestT) -> ReplyBodyT {
        self.send(conn, id, request);
        self.reply(conn, id)
    }

    fn command(&mut self, conn: ConnId, id: u64, c: CommandRequestT) -> CommandOutcomeT {
        match self.ask(conn, id, ClientRequestT::CommandRequest(Box::new(c))) {
            ReplyBodyT::CommandOutcome(o) => *o,
            other => panic!("expected a command outcome, got {other:?}"),
        }
    }

    fn attach(&mut self, conn: ConnId, id: u64, tx: &str) -> AttachOutcomeT {
        let request =
            ClientRequestT::AttachTransactionRequest(Box::new(AttachTransactionRequestT {
                transaction_id: tx.into(),
            }));
        match self.ask(conn, id, request) {
            ReplyBodyT::AttachOutcome(o) => *o,
            other => panic!("expected an attach outcome, got {other:?}"),
        }
    }

    fn at(&mut self, nanos: u64) {
        self.now = Timestamp::from_nanos(nanos);
    }
}

fn cmd(query: &str, reference: &str) -> CommandRequestT {
    CommandRequestT {
        query: query.into(),
        domain: Some("tenant".into()),
        execution_reference: reference.into(),
        expected_transaction_position: None,
        expected_preview: None,
    }
}

fn at_pos(query: &str, reference: &str, position: u64) -> CommandRequestT {
    CommandRequestT {
        expected_transaction_position: Some(position),
        ..cmd(query, reference)
    }
}

fn commit(reference: &str, preview: &TransactionPreviewIdentityT) -> CommandRequestT {
    CommandRequestT {
        expected_transaction_position: Some(preview.position),
        expected_preview: Some(Box::new(preview.clone())),
        ..cmd("COMMIT", reference)
    }
}

fn kind(o: &CommandOutcomeT) -> (CommandDisposition, Option<OutcomeOrigin>) {
    (o.disposition.command_disposition_type(), o.origin)
}

const COMPLETED_EXECUTED: (CommandDisposition, Option<OutcomeOrigin>) = (
    CommandDisposition::CommandCompleted,
    Some(OutcomeOrigin::Executed),
);
const COMPLETED_RECOVERED: (CommandDisposition, Option<OutcomeOrigin>) = (
    CommandDisposition::CommandCompleted,
    Some(OutcomeOrigin::Recovered),
);

fn status(o: &CommandOutcomeT) -> &TransactionStatusT {
    o.transaction.as_deref().expect("transaction status")
}

fn state(s: &TransactionStatusT) -> TransactionState {
    s.state.transaction_state_type()
}

fn admission(o: &CommandOutcomeT) -> &TransactionOperationAdmissionT {
    o.transaction_admission.as_deref().expect("admission")
}

fn leader_of(d: &CommandDispositionT) -> Option<LeaderEndpointsT> {
    match d {
        CommandDispositionT::LeaderRedirect(r) => r.leader.as_deref().cloned(),
        other => panic!("expected a redirect, got {other:?}"),
    }
}

/// Opens a transaction on `conn` and returns its identity.
fn begin(d: &mut Driver, conn: ConnId, id: u64, reference: &str) -> String {
    let o = d.command(conn, id, cmd("BEGIN", reference));
    assert_eq!(kind(&o), COMPLETED_EXECUTED, "{o:?}");
    let s = status(&o);
    assert_eq!(state(s), TransactionState::TransactionOpen);
    assert_eq!((s.accepted_operations, s.applied_operations), (0, 0));
    assert_eq!(s.domain, "tenant");
    s.transaction_id.clone()
}

#[test]
fn sim_cluster_recovers_a_repeated_reference() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    let first = d.command(a, 1, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(kind(&first), COMPLETED_EXECUTED);
    assert_eq!(first.execution_reference, "ref-1");
    let again = d.command(a, 2, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(kind(&again), COMPLETED_RECOVERED);
    assert_eq!(again.message, first.message);
    // From another session too: the record is the cluster's, not the session's.
    let b = d.connect(0);
    let other = d.command(b, 1, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(kind(&other), COMPLETED_RECOVERED);
    // A new reference runs again; the entity is already there.
    let fresh = d.command(b, 2, cmd("CREATE RELAY orders;", "ref-2"));
    assert_eq!(kind(&fresh), COMPLETED_EXECUTED);
    assert!(matches!(
        fresh.disposition,
        CommandDispositionT::CommandCompleted(ref c) if c.already_existed
    ));
}

#[test]
fn sim_cluster_reports_a_content_conflict() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    d.command(a, 1, cmd("CREATE RELAY orders;", "ref-1"));
    let o = d.command(a, 2, cmd("DROP RELAY orders;", "ref-1"));
    assert_eq!(o.execution_reference, "ref-1");
    match &o.disposition {
        CommandDispositionT::ExecutionReferenceConflict(c) => {
            assert_eq!(c.conflict, Some(ExecutionReferenceConflictKind::Content))
        }
        other => panic!("{other:?}"),
    }
    let o = d.command(
        a,
        3,
        CommandRequestT {
            domain: Some("analytics".into()),
            ..cmd("CREATE RELAY orders;", "ref-1")
        },
    );
    assert!(matches!(
        &o.disposition,
        CommandDispositionT::ExecutionReferenceConflict(c)
            if c.conflict == Some(ExecutionReferenceConflictKind::Domain)
    ));
    // The conflict changed nothing: the original is still recovered.
    let o = d.command(a, 4, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(kind(&o), COMPLETED_RECOVERED);
}

#[test]
fn sim_cluster_follower_redirects_with_the_leader_endpoints() {
    let mut d = Driver::nodes(3);
    assert_eq!(
        d.cl.endpoints(),
        [
            "https://node-1.sim:7443/",
            "https://node-2.sim:7443/",
            "https://node-3.sim:7443/"
        ]
    );
    assert_eq!(d.cl.leader(), 0);
    let f = d.connect(1);
    let o = d.command(f, 1, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(o.execution_reference, "ref-1");
    let leader = leader_of(&o.disposition).expect("a leader is named");
    assert_eq!(leader.node, "node-1");
    assert_eq!(leader.grpc_uri.as_deref(), Some("https://node-1.sim:7443/"));
    assert_eq!(
        leader.web_console_uri.as_deref(),
        Some("https://node-1.sim:8443/")
    );
    // Nothing was recorded: at the leader the reference executes.
    let l = d.connect(0);
    let o = d.command(l, 1, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);

    // Attach and transaction reads redirect too, with the reply's own redirect shape.
    let a = d.attach(f, 2, "tx-anything");
    assert!(
        matches!(a.disposition, AttachDispositionT::LeaderRedirect(ref r) if r.leader.is_some())
    );
    let o = d.command(f, 3, cmd("SHOW TRANSACTIONS", "ref-2"));
    assert!(leader_of(&o.disposition).is_some());
    let o = d.command(f, 4, cmd("DESCRIBE TRANSACTION", "ref-3"));
    assert!(leader_of(&o.disposition).is_some());

    // Reads a follower may serve.
    let o = d.command(f, 5, cmd("SHOW RELAYS", "ref-4"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    assert!(o.message.contains("node-2"), "{}", o.message);
    let o = d.command(f, 6, cmd("DESCRIBE RELAY orders; SHOW DOMAINS", "ref-5"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    assert_eq!(o.statements.len(), 2);
    assert!(matches!(
        d.ask(f, 7, ClientRequestT::ListDomainsRequest(Box::default())),
        ReplyBodyT::DomainList(_)
    ));
    // A positioned read is not the follower's to serve.
    let o = d.command(f, 8, at_pos("SHOW RELAYS", "ref-6", 0));
    assert!(leader_of(&o.disposition).is_some());
}

#[test]
fn sim_cluster_follower_redirect_names_no_leader_while_the_leader_is_down() {
    let mut d = Driver::nodes(3);
    let f = d.connect(2);
    d.cl.set_down(0, true);
    let o = d.command(f, 1, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(leader_of(&o.disposition), None);
    d.cl.set_down(0, false);
    let o = d.command(f, 2, cmd("CREATE RELAY orders;", "ref-1"));
    assert_eq!(leader_of(&o.disposition).unwrap().node, "node-1");
}

#[test]
fn sim_cluster_transaction_begin_append_commit() {
    let mut d = Driver::nodes(3);
    let a = d.connect(0);
    let tx = begin(&mut d, a, 1, "ref-begin");
    assert_eq!(d.cl.bound_transaction(a), Some(tx.as_str()));

    let o = d.command(a, 2, at_pos("CREATE RELAY a;", "ref-a", 0));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    let adm = admission(&o).clone();
    assert_eq!(adm.operation, 1);
    assert_eq!(adm.preview.transaction_id, tx);
    assert_eq!(adm.preview.position, 1);
    assert_eq!(adm.preview.planning_basis.bytes.len(), 32);
    assert_eq!(status(&o).accepted_operations, 1);

    let o = d.command(a, 3, at_pos("CREATE RELAY b;", "ref-b", 1));
    let p2 = admission(&o).preview.clone();
    assert_eq!((admission(&o).operation, p2.position), (2, 2));
    assert_ne!(p2.planning_basis, adm.preview.planning_basis);
    assert_eq!(status(&o).accepted_operations, 2);

    // A wrong or missing position is refused and changes nothing.
    let o = d.command(a, 4, at_pos("CREATE RELAY c;", "ref-c", 1));
    assert_eq!(
        o.disposition.command_disposition_type(),
        CommandDisposition::RequestFailed
    );
    assert_eq!(status(&o).accepted_operations, 2);
    let o = d.command(a, 5, cmd("CREATE RELAY c;", "ref-c"));
    assert_eq!(
        o.disposition.command_disposition_type(),
        CommandDisposition::RequestFailed
    );

    let o = d.command(a, 6, commit("ref-commit", &p2));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    let s = status(&o);
    assert_eq!(state(s), TransactionState::TransactionCommitted);
    assert_eq!((s.accepted_operations, s.applied_operations), (2, 2));
    assert_eq!(d.cl.bound_transaction(a), None);
    let s = d.cl.transaction_status(&tx).unwrap();
    assert_eq!(state(&s), TransactionState::TransactionCommitted);

    // A repeated COMMIT recovers the commit.
    let o = d.command(a, 7, commit("ref-commit", &p2));
    assert_eq!(kind(&o), COMPLETED_RECOVERED);
    assert_eq!(state(status(&o)), TransactionState::TransactionCommitted);

    // REVERT of a fresh transaction.
    let tx2 = begin(&mut d, a, 8, "ref-begin-2");
    assert_ne!(tx, tx2);
    let o = d.command(a, 9, cmd("REVERT", "ref-revert"));
    assert_eq!(state(status(&o)), TransactionState::TransactionReverted);
    assert_eq!(d.cl.bound_transaction(a), None);
}

#[test]
fn sim_cluster_commit_with_a_stale_preview_is_refused() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    let tx = begin(&mut d, a, 1, "ref-begin");
    let o = d.command(a, 2, at_pos("CREATE RELAY a;", "ref-a", 0));
    let p1 = admission(&o).preview.clone();
    let o = d.command(a, 3, at_pos("CREATE RELAY b;", "ref-b", 1));
    let p2 = admission(&o).preview.clone();

    let o = d.command(a, 4, commit("ref-commit-1", &p1));
    match &o.disposition {
        CommandDispositionT::PreviewStale(s) => {
            assert_eq!(*s.expected, *p1);
            assert_eq!(*s.current, *p2);
        }
        other => panic!("{other:?}"),
    }
    let s = d.cl.transaction_status(&tx).unwrap();
    assert_eq!(state(&s), TransactionState::TransactionOpen);
    assert_eq!(s.accepted_operations, 2);
    assert_eq!(d.cl.bound_transaction(a), Some(tx.as_str()));

    let o = d.command(a, 5, commit("ref-commit-2", &p2));
    assert_eq!(state(status(&o)), TransactionState::TransactionCommitted);
}

#[test]
fn sim_cluster_multi_statement_command_appends_each_statement() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    begin(&mut d, a, 1, "ref-begin");
    let o = d.command(
        a,
        2,
        at_pos(
            "CREATE RELAY a; CREATE RELAY b; CREATE RELAY c;",
            "ref-abc",
            0,
        ),
    );
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    assert_eq!(o.statements.len(), 3);
    assert!(o
        .statements
        .iter()
        .all(|s| s.disposition.statement_disposition_type()
            == StatementDisposition::CommandCompleted));
    assert_eq!(admission(&o).operation, 3);
    assert_eq!(admission(&o).preview.position, 3);
    assert_eq!(status(&o).accepted_operations, 3);
    let o = d.command(a, 3, at_pos("CREATE RELAY d;", "ref-d", 3));
    assert_eq!(admission(&o).operation, 4);
    // Transaction control must stand alone.
    let o = d.command(a, 4, at_pos("CREATE RELAY e; COMMIT", "ref-e", 4));
    assert_eq!(
        o.disposition.command_disposition_type(),
        CommandDisposition::RequestFailed
    );
    // Outside a transaction each statement runs and is reported.
    let b = d.connect(0);
    let o = d.command(b, 1, cmd("CREATE RELAY x; CREATE RELAY y", "ref-xy"));
    assert_eq!(o.statements.len(), 2);
    assert!(o.transaction.is_none() && o.transaction_admission.is_none());
}

#[test]
fn sim_cluster_detached_then_attach_then_repeat_recovers() {
    let mut d = Driver::nodes(3);
    let a = d.connect(0);
    let tx = begin(&mut d, a, 1, "ref-begin");
    // The append is admitted, but suppose its reply was lost with the stream.
    d.send(
        a,
        2,
        ClientRequestT::CommandRequest(Box::new(at_pos("CREATE RELAY a;", "ref-a", 0))),
    );
    d.rest(a);
    d.cl.close(d.now, a, false);
    let s = d.cl.transaction_status(&tx).unwrap();
    assert_eq!(state(&s), TransactionState::TransactionOpen);

    let b = d.connect(0);
    let o = d.command(b, 1, at_pos("CREATE RELAY a;", "ref-a", 0));
    match &o.disposition {
        CommandDispositionT::TransactionDetached(t) => assert_eq!(t.transaction_id, tx),
        other => panic!("{other:?}"),
    }
    let att = d.attach(b, 2, &tx);
    match &att.disposition {
        AttachDispositionT::TransactionAttached(t) => {
            assert_eq!(t.transaction.transaction_id, tx);
            assert_eq!(t.transaction.accepted_operations, 1);
            assert_eq!(state(&t.transaction), TransactionState::TransactionOpen);
        }
        other => panic!("{other:?}"),
    }
    let o = d.command(b, 3, at_pos("CREATE RELAY a;", "ref-a", 0));
    assert_eq!(kind(&o), COMPLETED_RECOVERED);
    assert_eq!(admission(&o).operation, 1);
    let o = d.command(b, 4, at_pos("CREATE RELAY b;", "ref-b", 1));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    assert_eq!(admission(&o).operation, 2);
}

#[test]
fn sim_cluster_attach_takes_over_from_another_session() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    let b = d.connect(0);
    let tx = begin(&mut d, a, 1, "ref-begin");
    d.command(a, 2, at_pos("CREATE RELAY a;", "ref-a", 0));
    let att = d.attach(b, 1, &tx);
    assert!(matches!(
        att.disposition,
        AttachDispositionT::TransactionAttached(_)
    ));
    assert_eq!(d.cl.bound_transaction(a), None);
    assert_eq!(d.cl.bound_transaction(b), Some(tx.as_str()));

    let o = d.command(a, 3, at_pos("CREATE RELAY b;", "ref-b", 1));
    match &o.disposition {
        CommandDispositionT::TransactionTakenOver(t) => assert_eq!(t.transaction_id, tx),
        other => panic!("{other:?}"),
    }
    let o = d.command(b, 2, at_pos("CREATE RELAY b;", "ref-b", 1));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    assert_eq!(admission(&o).operation, 2);
    // Attaching from the first session takes the transaction back.
    let att = d.attach(a, 4, &tx);
    assert!(matches!(
        att.disposition,
        AttachDispositionT::TransactionAttached(_)
    ));
    let o = d.command(b, 3, at_pos("CREATE RELAY c;", "ref-c", 2));
    assert_eq!(
        o.disposition.command_disposition_type(),
        CommandDisposition::TransactionTakenOver
    );
}

#[test]
fn sim_cluster_clean_close_reverts_and_unclean_close_keeps() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    let reverted = begin(&mut d, a, 1, "ref-1");
    d.cl.close(d.now, a, true);
    assert!(!d.cl.is_open(a));
    let s = d.cl.transaction_status(&reverted).unwrap();
    assert_eq!(state(&s), TransactionState::TransactionReverted);

    let b = d.connect(0);
    let kept = begin(&mut d, b, 1, "ref-2");
    d.cl.close(d.now, b, false);
    let s = d.cl.transaction_status(&kept).unwrap();
    assert_eq!(state(&s), TransactionState::TransactionOpen);

    let c = d.connect(0);
    let att = d.attach(c, 1, &reverted);
    match &att.disposition {
        AttachDispositionT::TransactionAlreadyFinished(t) => {
            assert_eq!(state(&t.transaction), TransactionState::TransactionReverted)
        }
        other => panic!("{other:?}"),
    }
    let att = d.attach(c, 2, &kept);
    assert!(matches!(
        att.disposition,
        AttachDispositionT::TransactionAttached(_)
    ));
    // Frames sent to a closed stream are ignored.
    d.send(a, 9, ClientRequestT::ListDomainsRequest(Box::default()));
    assert!(d.rest(a).is_empty());
}

#[test]
fn sim_cluster_transaction_expires_after_fifteen_minutes() {
    let minute = 60_000_000_000u64;
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    let tx = begin(&mut d, a, 1, "ref-begin");
    d.at(10 * minute);
    d.command(a, 2, at_pos("CREATE RELAY a;", "ref-a", 0));
    // 14 minutes 59 seconds after the append: still open.
    d.cl.advance(Timestamp::from_nanos(25 * minute - 1_000_000_000));
    assert_eq!(
        state(&d.cl.transaction_status(&tx).unwrap()),
        TransactionState::TransactionOpen
    );
    d.cl.advance(Timestamp::from_nanos(10 * minute) + TRANSACTION_EXPIRY);
    assert_eq!(
        state(&d.cl.transaction_status(&tx).unwrap()),
        TransactionState::TransactionExpired
    );
    assert_eq!(d.cl.bound_transaction(a), None);
    d.at(26 * minute);
    let o = d.command(a, 3, at_pos("CREATE RELAY b;", "ref-b", 1));
    assert_eq!(
        o.disposition.command_disposition_type(),
        CommandDisposition::TransactionDetached
    );
    let att = d.attach(a, 4, &tx);
    match &att.disposition {
        AttachDispositionT::TransactionAlreadyFinished(t) => {
            assert_eq!(state(&t.transaction), TransactionState::TransactionExpired);
            assert_eq!(t.transaction.accepted_operations, 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn sim_cluster_leader_change_ends_sessions_with_a_redirect() {
    let mut d = Driver::nodes(3);
    let a = d.connect(0);
    let b = d.connect(1);
    let c = d.connect(2);
    let tx = begin(&mut d, a, 1, "ref-begin");
    d.cl.set_leader(d.now, 1);
    assert_eq!(d.cl.leader(), 1);
    d.pump();
    let got = d.rest(a);
    assert_eq!(got.len(), 2, "{got:?}");
    match &got[0] {
        Got::Other(ServerBodyT::SessionEnding(e)) => match &e.reason {
            SessionEndReasonT::LeaderRedirect(r) => {
                let l = r.leader.as_deref().unwrap();
                assert_eq!(l.node, "node-2");
                assert_eq!(l.grpc_uri.as_deref(), Some("https://node-2.sim:7443/"));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert!(matches!(got[1], Got::Close));
    assert!(!d.cl.is_open(a));
    match &d.rest(b)[..] {
        [Got::Other(ServerBodyT::LeadershipObserved(o))] => assert!(matches!(
            &o.leadership,
            LeadershipT::LeaderIsServingNode(n) if n.node == "node-2"
        )),
        other => panic!("{other:?}"),
    }
    match &d.rest(c)[..] {
        [Got::Other(ServerBodyT::LeadershipObserved(o))] => assert!(matches!(
            &o.leadership,
            LeadershipT::LeaderIsRemote(r) if r.leader.node == "node-2"
        )),
        other => panic!("{other:?}"),
    }
    // The transaction stayed open, unbound; the new leader attaches it.
    assert_eq!(
        state(&d.cl.transaction_status(&tx).unwrap()),
        TransactionState::TransactionOpen
    );
    let att = d.attach(b, 1, &tx);
    assert!(matches!(
        att.disposition,
        AttachDispositionT::TransactionAttached(_)
    ));
    // node-1 is a follower now.
    let f = d.connect(0);
    let o = d.command(f, 1, cmd("CREATE RELAY orders;", "ref-x"));
    assert_eq!(leader_of(&o.disposition).unwrap().node, "node-2");
}

#[test]
fn sim_cluster_same_seed_gives_an_identical_trace() {
    fn run(seed: u64) -> Vec<String> {
        let mut d = Driver::new(ClusterConfig {
            nodes: 3,
            seed,
            faults: Faults::all(0.2),
            ..ClusterConfig::default()
        });
        workload(&mut d, 40);
        d.cl.trace().to_vec()
    }
    let first = run(7);
    assert!(first.len() > 40);
    assert_eq!(first, run(7));
    assert_ne!(first, run(8));
}

/// A fixed mix of requests over three nodes, reconnecting whenever the cluster ends a stream.
fn workload(d: &mut Driver, rounds: u64) {
    let mut conns: Vec<ConnId> = (0..3).map(|n| d.connect(n)).collect();
    let mut tx: Option<String> = None;
    let mut position = 0;
    for i in 1..=rounds {
        d.at(i * 1_000_000_000);
        let slot = (i % 3) as usize;
        if !d.cl.is_open(conns[slot]) {
            conns[slot] = d.connect(slot);
        }
        let conn = conns[slot];
        let request = match i % 7 {
            0 => ClientRequestT::CommandRequest(Box::new(cmd("BEGIN", &format!("b-{i}")))),
            1 => ClientRequestT::CommandRequest(Box::new(at_pos(
                &format!("CREATE RELAY r{i};"),
                &format!("a-{i}"),
                position,
            ))),
            2 => ClientRequestT::ListDomainsRequest(Box::default()),
            3 => ClientRequestT::AttachTransactionRequest(Box::new(AttachTransactionRequestT {
                transaction_id: tx.clone().unwrap_or_default(),
            })),
            4 => ClientRequestT::CommandRequest(Box::new(cmd("SHOW RELAYS", &format!("s-{i}")))),
            5 => ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
                domain: "tenant".into(),
                statement: format!("CREATE SUBSCRIPTION live{} FROM orders;", i % 2),
                subscription_type: Some(SubscriptionType::Row),
            })),
            _ => ClientRequestT::CommandRequest(Box::new(cmd(
                "CREATE RELAY shared;",
                "same-reference",
            ))),
        };
        d.send(conn, i, request);
        for got in d.rest(conn) {
            if let Got::Reply(_, ReplyBodyT::CommandOutcome(o)) = got {
                if let Some(s) = o.transaction {
                    tx = Some(s.transaction_id.clone());
                    position = s.accepted_operations;
                }
            }
        }
    }
}

#[test]
fn sim_cluster_every_frame_passes_the_checked_reader() {
    for seed in 0..20 {
        let mut cl = SimCluster::new(ClusterConfig {
            seed,
            faults: Faults {
                violation: 0.0,
                ..Faults::all(0.3)
            },
            part_size: 96,
            ..ClusterConfig::default()
        });
        let mut conns: Vec<ConnId> = (0..3)
            .map(|n| cl.connect(Timestamp::ZERO, &cl.endpoints()[n]).unwrap())
            .collect();
        let mut enc = Encoder::new();
        for i in 1..=60u64 {
            let now = Timestamp::from_nanos(i * 10_000_000_000);
            if i % 20 == 0 {
                cl.set_leader(now, (i / 20 % 3) as usize);
            }
            let node = (i % 3) as usize;
            if !cl.is_open(conns[node]) {
                conns[node] = cl.connect(now, &cl.endpoints()[node]).unwrap();
            }
            let request = match i % 5 {
                0 => ClientRequestT::CommandRequest(Box::new(cmd("BEGIN", &format!("b-{i}")))),
                1 => ClientRequestT::CommandRequest(Box::new(at_pos("CREATE A; CREATE B", "x", 0))),
                2 => ClientRequestT::CancelRequest(Box::new(CancelRequestT {
                    target_request_id: i - 1,
                })),
                3 => ClientRequestT::ListDomainsRequest(Box::default()),
                _ => ClientRequestT::CommandRequest(Box::new(cmd("SHOW RELAYS", "y"))),
            };
            let frame = enc
                .encode::<ClientMessageRoot>(&ClientMessageT {
                    request_id: i,
                    request,
                })
                .unwrap();
            cl.receive(now, conns[node], frame);
            if i % 4 != 0 {
                while let Some((_, out)) = cl.poll_output() {
                    if let Output::Frame(bytes) = out {
                        ServerFrame::check(bytes).expect("every frame passes");
                    }
                }
            }
        }
    }
}

#[test]
fn sim_cluster_session_holding_a_transaction_refuses_subscriptions_and_clocks() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    begin(&mut d, a, 1, "ref-begin");
    let sub = ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
        domain: "tenant".into(),
        statement: "CREATE SUBSCRIPTION live FROM orders;".into(),
        subscription_type: Some(SubscriptionType::Row),
    }));
    assert!(matches!(
        d.ask(a, 2, sub),
        ReplyBodyT::SubscribeOutcome(o)
            if o.disposition.subscribe_disposition_type() == SubscribeDisposition::RequestFailed
    ));
    let unsub = ClientRequestT::UnsubscribeRequest(Box::new(UnsubscribeRequestT {
        subscription: "live".into(),
    }));
    assert!(matches!(
        d.ask(a, 3, unsub),
        ReplyBodyT::UnsubscribeOutcome(o)
            if o.disposition.unsubscribe_disposition_type() == UnsubscribeDisposition::RequestFailed
    ));
    let attach = ClientRequestT::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
        domain: "tenant".into(),
    }));
    assert!(matches!(
        d.ask(a, 4, attach),
        ReplyBodyT::DomainClockAttachOutcome(o)
            if o.disposition.domain_clock_attach_disposition_type()
                == DomainClockAttachDisposition::RequestFailed
    ));
    let detach = ClientRequestT::DetachDomainClockRequest(Box::new(DetachDomainClockRequestT {
        domain: "tenant".into(),
    }));
    assert!(matches!(
        d.ask(a, 5, detach),
        ReplyBodyT::DomainClockDetachOutcome(o)
            if o.disposition.domain_clock_detach_disposition_type()
                == DomainClockDetachDisposition::RequestFailed
    ));
}

#[test]
fn sim_cluster_serves_domains_subscriptions_clocks_and_lookups() {
    let mut d = Driver::nodes(3);
    let f = d.connect(1);
    match d.ask(f, 1, ClientRequestT::ListDomainsRequest(Box::default())) {
        ReplyBodyT::DomainList(l) => {
            let names: Vec<&str> = l.domains.iter().map(|d| d.domain.as_str()).collect();
            assert_eq!(names, ["tenant", "analytics"]);
        }
        other => panic!("{other:?}"),
    }
    let select = |domain: &str| {
        ClientRequestT::SelectDomainRequest(Box::new(SelectDomainRequestT {
            domain: domain.into(),
        }))
    };
    assert!(matches!(
        d.ask(f, 2, select("tenant")),
        ReplyBodyT::DomainSelectionOutcome(o)
            if matches!(o.selection, DomainSelectionT::DomainSelected(_))
    ));
    assert!(matches!(
        d.ask(f, 3, select("nowhere")),
        ReplyBodyT::DomainSelectionOutcome(o)
            if matches!(o.selection, DomainSelectionT::DomainNotFound(_))
    ));

    let subscribe = ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
        domain: "tenant".into(),
        statement: "CREATE SUBSCRIPTION live FROM orders;".into(),
        subscription_type: Some(SubscriptionType::Row),
    }));
    d.send(f, 4, subscribe.clone());
    match d.reply(f, 4) {
        ReplyBodyT::SubscribeOutcome(o) => match &o.disposition {
            SubscribeDispositionT::SubscriptionOpened(s) => {
                assert_eq!(s.subscription.name, "live");
                assert_eq!(s.subscription.generation, 1);
                assert_eq!(s.relay, "orders");
                assert_eq!(s.subscription_type, Some(SubscriptionType::Row));
                assert_eq!(s.schema, Box::new(relay_schema("orders", 1)));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    match &d.rest(f)[..] {
        [Got::Other(ServerBodyT::SubscriptionRows(r))] => {
            assert_eq!(r.subscription.generation, 1);
            let width = relay_schema("orders", 1).fields.len();
            assert!(r.batch.rows.iter().all(|row| row.cells.len() == width));
        }
        other => panic!("{other:?}"),
    }
    let unsubscribe = ClientRequestT::UnsubscribeRequest(Box::new(UnsubscribeRequestT {
        subscription: "live".into(),
    }));
    assert!(matches!(
        d.ask(f, 5, unsubscribe),
        ReplyBodyT::UnsubscribeOutcome(o)
            if matches!(&o.disposition, UnsubscribeDispositionT::SubscriptionDeleted(s) if s.subscription.generation == 1)
    ));
    // Reusing the name gives a new generation, on any session.
    let g = d.connect(2);
    match d.ask(g, 1, subscribe) {
        ReplyBodyT::SubscribeOutcome(o) => assert!(matches!(
            &o.disposition,
            SubscribeDispositionT::SubscriptionOpened(s) if s.subscription.generation == 2
        )),
        other => panic!("{other:?}"),
    }

    let clock = |attach: bool, domain: &str| {
        if attach {
            ClientRequestT::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
                domain: domain.into(),
            }))
        } else {
            ClientRequestT::DetachDomainClockRequest(Box::new(DetachDomainClockRequestT {
                domain: domain.into(),
            }))
        }
    };
    let attach_kind = |b: ReplyBodyT| match b {
        ReplyBodyT::DomainClockAttachOutcome(o) => {
            o.disposition.domain_clock_attach_disposition_type()
        }
        other => panic!("{other:?}"),
    };
    let detach_kind = |b: ReplyBodyT| match b {
        ReplyBodyT::DomainClockDetachOutcome(o) => {
            o.disposition.domain_clock_detach_disposition_type()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(
        attach_kind(d.ask(f, 6, clock(true, "tenant"))),
        DomainClockAttachDisposition::DomainClockAttached
    );
    assert_eq!(
        attach_kind(d.ask(f, 7, clock(true, "tenant"))),
        DomainClockAttachDisposition::DomainClockAlreadyAttached
    );
    assert_eq!(
        attach_kind(d.ask(f, 8, clock(true, "nowhere"))),
        DomainClockAttachDisposition::DomainNotFound
    );
    assert_eq!(
        detach_kind(d.ask(f, 9, clock(false, "tenant"))),
        DomainClockDetachDisposition::DomainClockDetached
    );
    assert_eq!(
        detach_kind(d.ask(f, 10, clock(false, "tenant"))),
        DomainClockDetachDisposition::DomainClockNotAttached
    );

    let lookup = ClientRequestT::ChoiceLookupRequest(Box::new(ChoiceLookupRequestT {
        target: Some(ChoiceTarget::DomainPace),
        dependencies: vec![],
        search: String::new(),
        page_size: 10,
        page_cursor: None,
    }));
    match d.ask(f, 11, lookup) {
        ReplyBodyT::ChoiceOutcome(o) => {
            assert_eq!(o.status, Some(ChoiceStatus::Ready));
            assert_eq!(o.choices.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    let suggest = ClientRequestT::SuggestRequest(Box::new(SuggestRequestT {
        input: "CO".into(),
        cursor: 2,
        domain: None,
        page_size: 10,
        continuation: None,
    }));
    match d.ask(f, 12, suggest) {
        ReplyBodyT::SuggestOutcome(o) => {
            let values: Vec<&str> = o.suggestions.iter().map(|s| s.value.as_str()).collect();
            assert_eq!(values, ["COMMIT"]);
            assert_eq!(
                (o.suggestions[0].edit.start, o.suggestions[0].edit.end),
                (0, 2)
            );
        }
        other => panic!("{other:?}"),
    }
    // Producers are session-local: closing one this session never opened changes nothing.
    let close =
        ClientRequestT::CloseIngestorRequest(Box::new(CloseIngestorRequestT { producer: 3 }));
    assert!(matches!(
        d.ask(f, 13, close),
        ReplyBodyT::CloseIngestorOutcome(o)
            if matches!(o.disposition, CloseIngestorDispositionT::ProducerNotOpen(_))
    ));
    // Inspection is the leader's; the simulation keeps no reports.
    let inspect = ClientRequestT::InspectTransactionRequest(Box::new(InspectTransactionRequestT {
        target: InspectionTargetT::AttachedTransaction(Box::default()),
        operation: None,
    }));
    assert!(matches!(
        d.ask(f, 14, inspect.clone()),
        ReplyBodyT::InspectionOutcome(o)
            if matches!(o.disposition, InspectionDispositionT::LeaderRedirect(_))
    ));
    let l = d.connect(0);
    assert!(matches!(
        d.ask(l, 1, inspect),
        ReplyBodyT::InspectionOutcome(o) if matches!(
            &o.disposition,
            InspectionDispositionT::InspectionRejected(r)
                if r.rejection == Some(InspectionRejection::NoAttachedTransaction)
        )
    ));
}

#[test]
fn sim_cluster_cancel_replaces_a_reply_not_yet_taken() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    d.send_only(
        a,
        1,
        ClientRequestT::CommandRequest(Box::new(cmd("CREATE RELAY a;", "ref-a"))),
    );
    d.send_only(
        a,
        2,
        ClientRequestT::CancelRequest(Box::new(CancelRequestT {
            target_request_id: 1,
        })),
    );
    d.pump();
    assert!(matches!(
        d.reply(a, 1),
        ReplyBodyT::RequestCancelled(c) if c.stage == Some(CancellationStage::AfterAdmission)
    ));
    assert!(matches!(
        d.reply(a, 2),
        ReplyBodyT::CancelOutcome(c)
            if c.target_request_id == 1 && c.state == Some(CancelState::Requested)
    ));
    // The command ran; its outcome is recovered by reference.
    let o = d.command(a, 3, cmd("CREATE RELAY a;", "ref-a"));
    assert_eq!(kind(&o), COMPLETED_RECOVERED);
    // A read cancelled before its reply was taken was never admitted.
    d.send_only(a, 4, ClientRequestT::ListDomainsRequest(Box::default()));
    d.send_only(
        a,
        5,
        ClientRequestT::CancelRequest(Box::new(CancelRequestT {
            target_request_id: 4,
        })),
    );
    d.pump();
    assert!(matches!(
        d.reply(a, 4),
        ReplyBodyT::RequestCancelled(c) if c.stage == Some(CancellationStage::BeforeAdmission)
    ));
    d.reply(a, 5);
    // Once the reply is taken there is nothing in flight.
    let c = d.ask(
        a,
        6,
        ClientRequestT::CancelRequest(Box::new(CancelRequestT {
            target_request_id: 3,
        })),
    );
    assert!(matches!(c, ReplyBodyT::CancelOutcome(c) if c.state == Some(CancelState::NotInFlight)));
}

#[test]
fn sim_cluster_limits_requests_in_flight() {
    let mut d = Driver::new(ClusterConfig {
        nodes: 1,
        max_in_flight: 2,
        ..ClusterConfig::default()
    });
    let a = d.connect(0);
    for id in 1..=3 {
        d.send_only(a, id, ClientRequestT::ListDomainsRequest(Box::default()));
    }
    d.send_only(a, 1, ClientRequestT::ListDomainsRequest(Box::default()));
    d.pump();
    assert!(matches!(d.reply(a, 1), ReplyBodyT::DomainList(_)));
    assert!(matches!(d.reply(a, 2), ReplyBodyT::DomainList(_)));
    assert!(matches!(
        d.reply(a, 3),
        ReplyBodyT::RequestRejected(r) if r.rejection == Some(RequestRejection::TooManyRequestsInFlight)
    ));
    assert!(matches!(
        d.reply(a, 1),
        ReplyBodyT::RequestRejected(r) if r.rejection == Some(RequestRejection::DuplicateRequestId)
    ));
    // Taken replies free the slots.
    assert!(matches!(
        d.ask(a, 3, ClientRequestT::ListDomainsRequest(Box::default())),
        ReplyBodyT::DomainList(_)
    ));
}

#[test]
fn sim_cluster_refuses_unknown_endpoints_and_down_nodes() {
    let mut cl = SimCluster::new(ClusterConfig::default());
    assert_eq!(
        cl.connect(Timestamp::ZERO, "https://node-9.sim:7443/"),
        Err(ConnectRefused::UnknownEndpoint(
            "https://node-9.sim:7443/".into()
        ))
    );
    let conn = cl
        .connect(Timestamp::ZERO, "https://node-2.sim:7443")
        .unwrap();
    cl.set_down(1, true);
    assert_eq!(
        cl.connect(Timestamp::ZERO, "https://node-2.sim:7443/"),
        Err(ConnectRefused::NodeDown("node-2".into()))
    );
    // The node's streams were dropped without a frame.
    assert_eq!(cl.poll_output(), Some((conn, Output::Close)));
    assert!(!cl.is_open(conn));
    cl.set_down(1, false);
    assert!(cl
        .connect(Timestamp::ZERO, "https://node-2.sim:7443/")
        .is_ok());
}

#[test]
fn sim_cluster_ends_the_session_on_a_bad_client_frame() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    let tx = begin(&mut d, a, 1, "ref-begin");
    d.cl.receive(d.now, a, Bytes::from_static(b"short"));
    d.pump();
    match &d.rest(a)[..] {
        [Got::Other(ServerBodyT::SessionEnding(e)), Got::Close] => {
            assert!(matches!(e.reason, SessionEndReasonT::ProtocolViolated(_)))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        state(&d.cl.transaction_status(&tx).unwrap()),
        TransactionState::TransactionOpen
    );
}

#[test]
fn sim_cluster_fault_too_many_in_flight() {
    let mut d = Driver::nodes(1);
    d.cl.set_faults(Faults {
        too_many_in_flight: 1.0,
        ..Faults::default()
    });
    let a = d.connect(0);
    let r = d.ask(
        a,
        1,
        ClientRequestT::CommandRequest(Box::new(cmd("CREATE RELAY a;", "ref-a"))),
    );
    assert!(matches!(
        r,
        ReplyBodyT::RequestRejected(r) if r.rejection == Some(RequestRejection::TooManyRequestsInFlight)
    ));
    d.cl.set_faults(Faults::default());
    // Nothing was admitted: the reference executes now.
    let o = d.command(a, 2, cmd("CREATE RELAY a;", "ref-a"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
}

#[test]
fn sim_cluster_fault_server_busy() {
    let mut d = Driver::nodes(3);
    d.cl.set_faults(Faults {
        server_busy: 1.0,
        ..Faults::default()
    });
    let f = d.connect(1);
    assert!(matches!(
        d.ask(f, 1, ClientRequestT::ListDomainsRequest(Box::default())),
        ReplyBodyT::RequestRejected(r) if r.rejection == Some(RequestRejection::ServerBusy)
    ));
    assert!(matches!(
        d.ask(f, 2, ClientRequestT::CommandRequest(Box::new(cmd("SHOW RELAYS", "ref-s")))),
        ReplyBodyT::RequestRejected(r) if r.rejection == Some(RequestRejection::ServerBusy)
    ));
    // Only reads are refused.
    let l = d.connect(0);
    let o = d.command(l, 1, cmd("CREATE RELAY a;", "ref-a"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
}

#[test]
fn sim_cluster_fault_outcome_unknown() {
    let mut d = Driver::nodes(1);
    d.cl.set_faults(Faults {
        outcome_unknown: 1.0,
        ..Faults::default()
    });
    let a = d.connect(0);
    let o = d.command(a, 1, cmd("BEGIN", "ref-begin"));
    match &o.disposition {
        CommandDispositionT::OutcomeUnknown(u) => {
            assert_eq!(u.cause, Some(UnknownOutcomeCause::StillApplying))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(o.execution_reference, "ref-begin");
    // The repeat returns the recorded outcome, even while the fault holds.
    let o = d.command(a, 2, cmd("BEGIN", "ref-begin"));
    assert_eq!(kind(&o), COMPLETED_RECOVERED);
    let tx = status(&o).transaction_id.clone();
    assert_eq!(d.cl.bound_transaction(a), Some(tx.as_str()));
}

#[test]
fn sim_cluster_fault_redirect_without_endpoint() {
    let mut d = Driver::nodes(3);
    d.cl.set_faults(Faults {
        redirect_without_endpoint: 1.0,
        ..Faults::default()
    });
    let f = d.connect(1);
    let o = d.command(f, 1, cmd("CREATE RELAY a;", "ref-a"));
    assert_eq!(leader_of(&o.disposition), None);
    let a = d.attach(f, 2, "tx-x");
    assert!(
        matches!(a.disposition, AttachDispositionT::LeaderRedirect(ref r) if r.leader.is_none())
    );
}

#[test]
fn sim_cluster_fault_violation() {
    let mut d = Driver::nodes(1);
    d.cl.set_faults(Faults {
        violation: 1.0,
        ..Faults::default()
    });
    let a = d.connect(0);
    for id in 1..=6 {
        d.send(
            a,
            id,
            ClientRequestT::CommandRequest(Box::new(cmd("CREATE RELAY a;", "ref-a"))),
        );
        assert!(matches!(&d.rest(a)[..], [Got::Malformed]));
    }
    d.cl.set_faults(Faults::default());
    // The command was served before its reply was mangled.
    let o = d.command(a, 7, cmd("CREATE RELAY a;", "ref-a"));
    assert_eq!(kind(&o), COMPLETED_RECOVERED);
}

#[test]
fn sim_cluster_fault_session_ending() {
    let mut d = Driver::nodes(3);
    d.cl.set_faults(Faults {
        session_ending: 1.0,
        ..Faults::default()
    });
    let f = d.connect(2);
    d.send(
        f,
        1,
        ClientRequestT::CommandRequest(Box::new(cmd("CREATE RELAY a;", "ref-a"))),
    );
    match &d.rest(f)[..] {
        [Got::Other(ServerBodyT::SessionEnding(e)), Got::Close] => match &e.reason {
            SessionEndReasonT::LeaderRedirect(r) => {
                assert_eq!(r.leader.as_ref().unwrap().node, "node-1")
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert!(!d.cl.is_open(f));
    d.cl.set_faults(Faults::default());
    // The request had no effect.
    let l = d.connect(0);
    let o = d.command(l, 1, cmd("CREATE RELAY a;", "ref-a"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
}

#[test]
fn sim_cluster_fault_transfer_parts() {
    let mut d = Driver::nodes(1);
    d.cl.set_faults(Faults {
        transfer_parts: 1.0,
        ..Faults::default()
    });
    let a = d.connect(0);
    assert!(matches!(
        d.ask(a, 1, ClientRequestT::ListDomainsRequest(Box::default())),
        ReplyBodyT::DomainList(l) if l.domains.len() == 2
    ));
    assert!(d.parts >= 2, "{} parts", d.parts);
    // Without the fault a small reply is one frame, and the part size splits large ones.
    let mut d = Driver::new(ClusterConfig {
        nodes: 1,
        part_size: 64,
        ..ClusterConfig::default()
    });
    let a = d.connect(0);
    let query = format!("CREATE RELAY {};", "x".repeat(500));
    let o = d.command(a, 1, cmd(&query, "ref-long"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    assert!(d.parts > 3, "{} parts", d.parts);
}

#[test]
fn sim_cluster_fault_detach_binding() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    let tx = begin(&mut d, a, 1, "ref-begin");
    d.cl.set_faults(Faults {
        detach_binding: 1.0,
        ..Faults::default()
    });
    let o = d.command(a, 2, at_pos("CREATE RELAY a;", "ref-a", 0));
    match &o.disposition {
        CommandDispositionT::TransactionDetached(t) => assert_eq!(t.transaction_id, tx),
        other => panic!("{other:?}"),
    }
    assert_eq!(d.cl.bound_transaction(a), None);
    assert_eq!(
        state(&d.cl.transaction_status(&tx).unwrap()),
        TransactionState::TransactionOpen
    );
    d.cl.set_faults(Faults::default());
    assert!(matches!(
        d.attach(a, 3, &tx).disposition,
        AttachDispositionT::TransactionAttached(_)
    ));
    let o = d.command(a, 4, at_pos("CREATE RELAY a;", "ref-a", 0));
    assert_eq!(kind(&o), COMPLETED_EXECUTED);
    assert_eq!(admission(&o).operation, 1);
}

#[test]
fn sim_cluster_trace_tells_what_happened() {
    let mut d = Driver::nodes(3);
    let f = d.connect(1);
    d.command(f, 7, cmd("CREATE RELAY a;", "ref-a"));
    let line = d.cl.trace().last().unwrap().clone();
    assert!(
        line.contains("node-2 conn 1 req 7 COMMAND ref=ref-a"),
        "{line}"
    );
    assert!(line.ends_with("-> LeaderRedirect(node-1)"), "{line}");
}

fn subscribe_request(domain: &str, statement: &str) -> ClientRequestT {
    ClientRequestT::SubscribeRequest(Box::new(SubscribeRequestT {
        domain: domain.into(),
        statement: statement.into(),
        subscription_type: Some(SubscriptionType::Row),
    }))
}

fn unsubscribe_request(name: &str) -> ClientRequestT {
    ClientRequestT::UnsubscribeRequest(Box::new(UnsubscribeRequestT {
        subscription: name.into(),
    }))
}

fn clock_request(attach: bool, domain: &str) -> ClientRequestT {
    if attach {
        ClientRequestT::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
            domain: domain.into(),
        }))
    } else {
        ClientRequestT::DetachDomainClockRequest(Box::new(DetachDomainClockRequestT {
            domain: domain.into(),
        }))
    }
}

/// The handle a subscribe opened, or `None` when it was refused.
fn opened(body: ReplyBodyT) -> Option<(String, u64, String, String)> {
    match body {
        ReplyBodyT::SubscribeOutcome(o) => match o.disposition {
            SubscribeDispositionT::SubscriptionOpened(s) => Some((
                s.subscription.name,
                s.subscription.generation,
                s.domain,
                s.relay,
            )),
            SubscribeDispositionT::RequestFailed(_) => None,
            other => panic!("{other:?}"),
        },
        other => panic!("expected a subscribe outcome, got {other:?}"),
    }
}

fn deleted(body: ReplyBodyT) -> Option<(String, u64)> {
    match body {
        ReplyBodyT::UnsubscribeOutcome(o) => match o.disposition {
            UnsubscribeDispositionT::SubscriptionDeleted(s) => {
                Some((s.subscription.name, s.subscription.generation))
            }
            UnsubscribeDispositionT::RequestFailed(_) => None,
            other => panic!("{other:?}"),
        },
        other => panic!("expected an unsubscribe outcome, got {other:?}"),
    }
}

fn attach_disposition(body: ReplyBodyT) -> DomainClockAttachDispositionT {
    match body {
        ReplyBodyT::DomainClockAttachOutcome(o) => o.disposition,
        other => panic!("expected a clock attach outcome, got {other:?}"),
    }
}

fn detach_disposition(body: ReplyBodyT) -> DomainClockDetachDisposition {
    match body {
        ReplyBodyT::DomainClockDetachOutcome(o) => {
            o.disposition.domain_clock_detach_disposition_type()
        }
        other => panic!("expected a clock detach outcome, got {other:?}"),
    }
}

#[test]
fn l_2_list_domains_is_served_by_every_node_with_the_configured_domains() {
    let mut d = Driver::new(ClusterConfig {
        domains: vec!["alpha".into(), "beta".into(), "gamma".into()],
        ..ClusterConfig::default()
    });
    for node in 0..3 {
        let conn = d.connect(node);
        match d.ask(conn, 1, ClientRequestT::ListDomainsRequest(Box::default())) {
            ReplyBodyT::DomainList(l) => {
                let got: Vec<(&str, Option<DomainStatus>, DomainPace)> = l
                    .domains
                    .iter()
                    .map(|d| (d.domain.as_str(), d.status, d.pace.domain_pace_type()))
                    .collect();
                assert_eq!(
                    got,
                    ["alpha", "beta", "gamma"].map(|n| (
                        n,
                        Some(DomainStatus::Running),
                        DomainPace::UnpacedDomain
                    )),
                    "node {node}"
                );
            }
            other => panic!("node {node}: {other:?}"),
        }
    }
}

#[test]
fn k_1_clock_attach_and_detach_answer_every_disposition_per_session() {
    let mut d = Driver::nodes(3);
    let a = d.connect(1);
    let b = d.connect(2);
    match attach_disposition(d.ask(a, 1, clock_request(true, "tenant"))) {
        DomainClockAttachDispositionT::DomainClockAttached(c) => {
            assert_eq!(c.domain, "tenant");
            assert!(c.clock.generation >= 1);
            // The first configured domain's clock is paced.
            assert!(matches!(
                c.clock.state,
                DomainClockObservedStateT::PacedDomainClock(_)
            ));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        attach_disposition(d.ask(a, 2, clock_request(true, "tenant"))),
        DomainClockAttachDispositionT::DomainClockAlreadyAttached(c) if c.domain == "tenant"
    ));
    assert!(matches!(
        attach_disposition(d.ask(a, 3, clock_request(true, "nowhere"))),
        DomainClockAttachDispositionT::DomainNotFound(n) if n.domain == "nowhere"
    ));
    // Clocks belong to sessions: the other session follows nothing yet.
    assert_eq!(
        detach_disposition(d.ask(b, 1, clock_request(false, "tenant"))),
        DomainClockDetachDisposition::DomainClockNotAttached
    );
    assert!(matches!(
        attach_disposition(d.ask(b, 2, clock_request(true, "tenant"))),
        DomainClockAttachDispositionT::DomainClockAttached(_)
    ));
    assert_eq!(
        detach_disposition(d.ask(a, 4, clock_request(false, "tenant"))),
        DomainClockDetachDisposition::DomainClockDetached
    );
    assert_eq!(
        detach_disposition(d.ask(a, 5, clock_request(false, "tenant"))),
        DomainClockDetachDisposition::DomainClockNotAttached
    );
    assert_eq!(
        detach_disposition(d.ask(a, 6, clock_request(false, "nowhere"))),
        DomainClockDetachDisposition::DomainClockNotAttached
    );
    // A detach ends following: the next attach attaches again.
    assert!(matches!(
        attach_disposition(d.ask(a, 7, clock_request(true, "tenant"))),
        DomainClockAttachDispositionT::DomainClockAttached(_)
    ));
}

#[test]
fn s_1_subscribe_opens_the_handle_its_statement_names() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    assert_eq!(
        opened(d.ask(
            a,
            1,
            subscribe_request(
                "tenant",
                "create subscription Live_1 from orders with delivery dropping;"
            )
        )),
        Some(("Live_1".into(), 1, "tenant".into(), "orders".into()))
    );
    assert!(
        matches!(&d.rest(a)[..], [Got::Other(ServerBodyT::SubscriptionRows(r))]
        if r.subscription.name == "Live_1" && r.subscription.generation == 1)
    );
    // The name is open on this session: a second opening is refused.
    assert_eq!(
        opened(d.ask(
            a,
            2,
            subscribe_request("tenant", "CREATE SUBSCRIPTION Live_1 FROM prices")
        )),
        None
    );
    // Refused: an unknown domain, a statement that is not CREATE SUBSCRIPTION, and more than
    // one statement (S-1: exactly one).
    for (id, domain, statement) in [
        (3, "nowhere", "CREATE SUBSCRIPTION x FROM orders"),
        (4, "tenant", "CREATE RELAY x"),
        (5, "tenant", "CREATE SUBSCRIPTION x orders"),
        (
            6,
            "tenant",
            "CREATE SUBSCRIPTION x FROM orders; CREATE SUBSCRIPTION y FROM orders",
        ),
        (
            7,
            "tenant",
            "CREATE SUBSCRIPTION x FROM orders; DROP RELAY orders;",
        ),
    ] {
        assert_eq!(
            opened(d.ask(a, id, subscribe_request(domain, statement))),
            None,
            "{statement:?} on {domain}"
        );
    }
    assert!(d.rest(a).is_empty(), "a refusal sends no rows");
    // Unsubscribe deletes the open generation, then finds nothing.
    assert_eq!(
        deleted(d.ask(a, 8, unsubscribe_request("Live_1"))),
        Some(("Live_1".into(), 1))
    );
    assert_eq!(deleted(d.ask(a, 9, unsubscribe_request("Live_1"))), None);
    assert_eq!(deleted(d.ask(a, 10, unsubscribe_request("never"))), None);
}

#[test]
fn s_3_generations_count_up_per_name_across_domains_and_sessions() {
    let mut d = Driver::nodes(3);
    let a = d.connect(0);
    let statement = "CREATE SUBSCRIPTION live FROM orders";
    assert_eq!(
        opened(d.ask(a, 1, subscribe_request("tenant", statement))).map(|h| h.1),
        Some(1)
    );
    assert_eq!(
        deleted(d.ask(a, 2, unsubscribe_request("live"))),
        Some(("live".into(), 1))
    );
    // The same name in another domain is a new generation: a client routing frames by
    // handle must never see (live, 1) twice.
    assert_eq!(
        opened(d.ask(a, 3, subscribe_request("analytics", statement))),
        Some(("live".into(), 2, "analytics".into(), "orders".into()))
    );
    let b = d.connect(1);
    assert_eq!(
        opened(d.ask(b, 1, subscribe_request("tenant", statement))).map(|h| h.1),
        Some(3)
    );
    // Another name starts at 1.
    assert_eq!(
        opened(d.ask(
            b,
            2,
            subscribe_request("tenant", "CREATE SUBSCRIPTION other FROM orders")
        ))
        .map(|h| h.1),
        Some(1)
    );
}

#[test]
fn l_3_a_held_transaction_refuses_subscriptions_and_clocks_until_it_ends() {
    let mut d = Driver::nodes(1);
    let a = d.connect(0);
    assert!(opened(d.ask(
        a,
        1,
        subscribe_request("tenant", "CREATE SUBSCRIPTION kept FROM orders")
    ))
    .is_some());
    assert!(matches!(
        attach_disposition(d.ask(a, 2, clock_request(true, "analytics"))),
        DomainClockAttachDispositionT::DomainClockAttached(_)
    ));
    d.rest(a);
    begin(&mut d, a, 3, "ref-begin");
    let statement = "CREATE SUBSCRIPTION live FROM orders";
    assert_eq!(
        opened(d.ask(a, 4, subscribe_request("tenant", statement))),
        None
    );
    assert_eq!(deleted(d.ask(a, 5, unsubscribe_request("kept"))), None);
    assert!(matches!(
        attach_disposition(d.ask(a, 6, clock_request(true, "tenant"))),
        DomainClockAttachDispositionT::RequestFailed(_)
    ));
    assert_eq!(
        detach_disposition(d.ask(a, 7, clock_request(false, "analytics"))),
        DomainClockDetachDisposition::RequestFailed
    );
    assert!(d.rest(a).is_empty(), "a refused subscribe sends no rows");
    // The refusals changed nothing: after the transaction ends, each is served as if they had
    // never been sent.
    let o = d.command(a, 8, cmd("REVERT", "ref-revert"));
    assert_eq!(kind(&o), COMPLETED_EXECUTED, "{o:?}");
    assert_eq!(
        opened(d.ask(a, 9, subscribe_request("tenant", statement))).map(|h| (h.0, h.1)),
        Some(("live".into(), 1))
    );
    assert_eq!(
        deleted(d.ask(a, 10, unsubscribe_request("kept"))),
        Some(("kept".into(), 1))
    );
    assert!(matches!(
        attach_disposition(d.ask(a, 11, clock_request(true, "tenant"))),
        DomainClockAttachDispositionT::DomainClockAttached(_)
    ));
    assert_eq!(
        detach_disposition(d.ask(a, 12, clock_request(false, "analytics"))),
        DomainClockDetachDisposition::DomainClockDetached
    );
}

fn backup_of(o: &CommandOutcomeT) -> &BackupArchiveSummaryT {
    o.backup
        .as_deref()
        .unwrap_or_else(|| panic!("no backup summary: {o:?}"))
}

#[test]
fn a_1_backup_completes_with_an_archive_summary_recorded_by_reference() {
    let mut d = Driver::nodes(3);
    let l = d.connect(0);
    d.at(5_000_000_000);
    let one = d.command(
        l,
        1,
        cmd("BACKUP DOMAIN tenant TO 'tenant.nxb'", "ref-backup-1"),
    );
    assert_eq!(kind(&one), COMPLETED_EXECUTED, "{one:?}");
    let s = backup_of(&one).clone();
    let names: Vec<&str> = s.domains.iter().map(|d| d.domain.as_str()).collect();
    assert_eq!(names, ["tenant"]);
    assert_eq!(s.users, None, "a domain backup holds no users");
    assert!(s.total_bytes > 0);
    assert_eq!(s.digest.bytes.len(), 32);
    assert_eq!(s.resources, Some(BackupResources::Included));
    assert_eq!(s.captured_at, 5_000_000_000);
    // Each domain summary carries its capture cut: a quiesced one, engaged before and
    // released at the capture.
    let cut = &s.domains[0].cut;
    assert_eq!(cut.kind, Some(BackupCutKind::Quiesced));
    assert_eq!(cut.released_at, Some(s.captured_at));
    assert!(cut.engaged_at.is_some_and(|t| t < s.captured_at));
    assert!(s.retained_until > s.captured_at);
    assert!(s
        .domains
        .iter()
        .all(|d| d.sections > 0 && d.section_bytes > 0));
    assert_eq!(d.cl.recorded_outcome("ref-backup-1"), Some(&one));
    // A repeat under the same reference recovers the same summary (A-6, E-3).
    d.at(9_000_000_000);
    let again = d.command(
        l,
        2,
        cmd("BACKUP DOMAIN tenant TO 'tenant.nxb'", "ref-backup-1"),
    );
    assert_eq!(kind(&again), COMPLETED_RECOVERED);
    assert_eq!(backup_of(&again), &s);

    // Every domain, sorted by name, with the users.
    let all = d.command(l, 3, cmd("BACKUP TO 'all.nxb'", "ref-backup-2"));
    let s2 = backup_of(&all);
    let names: Vec<&str> = s2.domains.iter().map(|d| d.domain.as_str()).collect();
    assert_eq!(names, ["analytics", "tenant"]);
    assert!(s2.users.is_some());
    assert_ne!(s2.digest, s.digest);

    // Refused, and not recorded: an unknown domain, BACKUP with other statements.
    for (id, query, reference) in [
        (4, "BACKUP DOMAIN nowhere TO 'x.nxb'", "ref-backup-3"),
        (5, "BACKUP DOMAIN", "ref-backup-4"),
        (
            6,
            "BACKUP DOMAIN tenant TO 'x.nxb'; SHOW RELAYS",
            "ref-backup-5",
        ),
    ] {
        let o = d.command(l, id, cmd(query, reference));
        assert_eq!(
            kind(&o),
            (
                CommandDisposition::RequestFailed,
                Some(OutcomeOrigin::Executed)
            ),
            "{query}"
        );
        assert!(o.backup.is_none());
        assert_eq!(d.cl.recorded_outcome(reference), None, "{query}");
    }
    // Not inside a transaction, where it would otherwise be taken as an operation.
    begin(&mut d, l, 7, "ref-begin");
    let o = d.command(
        l,
        8,
        at_pos("BACKUP DOMAIN tenant TO 'x.nxb'", "ref-backup-6", 0),
    );
    assert_eq!(
        o.disposition.command_disposition_type(),
        CommandDisposition::RequestFailed
    );
    assert!(
        o.backup.is_none() && o.transaction_admission.is_none(),
        "{o:?}"
    );
    // A follower sends BACKUP to the leader.
    let f = d.connect(1);
    let o = d.command(f, 1, cmd("BACKUP DOMAIN tenant TO 'x.nxb'", "ref-backup-7"));
    assert_eq!(
        leader_of(&o.disposition).map(|l| l.node),
        Some("node-1".into())
    );
}

// ----- producers and emitter consumers -----

mod dataplane {
    use super::*;
    use nervix_harness::cluster::{
        delivery_ids, emitter_fields, ingestor_fields, token_number, BATCH_LATENCY, EMITTER,
        EMITTER_ACK_TIMEOUT, EMITTER_WINDOW, INGESTOR,
    };
    use nervix_protocol::arrow::{encode, BatchBuilder};
    use nervix_protocol::rows::FieldSpec;
    use std::sync::Arc;

    fn wire(fields: &[FieldSpec]) -> Vec<RowFieldT> {
        fields.iter().map(FieldSpec::to_wire).collect()
    }

    fn open_producer(d: &mut Driver, conn: ConnId, id: u64, batches: u32) -> ProducerOpenedT {
        let request = ClientRequestT::OpenIngestorRequest(Box::new(OpenIngestorRequestT {
            domain: "tenant".into(),
            ingestor: INGESTOR.into(),
            expected_fields: wire(&ingestor_fields()),
            max_outstanding_batches: batches,
            max_outstanding_bytes: 1 << 20,
        }));
        match d.ask(conn, id, request) {
            ReplyBodyT::OpenIngestorOutcome(o) => match o.disposition {
                OpenIngestorDispositionT::ProducerOpened(p) => *p,
                other => panic!("expected an opened producer, got {other:?}"),
            },
            other => panic!("expected an open outcome, got {other:?}"),
        }
    }

    fn batch(ids: &[u64]) -> Vec<u8> {
        let mut b = BatchBuilder::new(Arc::from(ingestor_fields()));
        let names: Vec<Option<&str>> = ids.iter().map(|_| Some("n")).collect();
        b.column("id", ids).unwrap();
        b.nullable_column("name", &names).unwrap();
        encode(&b.finish().unwrap()).unwrap()
    }

    fn submit(producer: u64, bytes: Vec<u8>) -> ClientRequestT {
        ClientRequestT::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
            producer,
            batch: bytes,
        }))
    }

    fn disposition(body: ReplyBodyT) -> SubmissionDispositionT {
        match body {
            ReplyBodyT::SubmissionOutcome(o) => o.disposition,
            other => panic!("expected a submission outcome, got {other:?}"),
        }
    }

    fn has_reply(d: &mut Driver, conn: ConnId, id: u64) -> bool {
        d.pump();
        d.inbox
            .get(&conn)
            .is_some_and(|i| i.iter().any(|g| matches!(g, Got::Reply(r, _) if *r == id)))
    }

    #[test]
    fn sim_cluster_producer_outcome_follows_admission_and_releases_credit() {
        let mut d = Driver::nodes(1);
        let conn = d.connect(0);
        let opened = open_producer(&mut d, conn, 1, 1);
        assert_eq!(opened.granted_batches, 1);
        d.send(conn, 2, submit(1, batch(&[1, 2])));
        assert!(
            !has_reply(&mut d, conn, 2),
            "the outcome waits for the batch"
        );
        assert!(d
            .cl
            .next_due()
            .is_some_and(|t| t.as_nanos() == BATCH_LATENCY.as_nanos() as u64));
        d.at(BATCH_LATENCY.as_nanos() as u64);
        d.cl.advance(d.now);
        d.pump();
        assert!(matches!(
            disposition(d.reply(conn, 2)),
            SubmissionDispositionT::SubmissionCompleted(_)
        ));
        // The credit came back: one more batch fits, and nothing was seen beyond credit.
        d.send(conn, 3, submit(1, batch(&[3])));
        assert!(!has_reply(&mut d, conn, 3));
        assert!(d.cl.misbehaviour().is_empty());
    }

    #[test]
    fn sim_cluster_producer_batch_beyond_credit_ends_the_producer() {
        let mut d = Driver::nodes(1);
        let conn = d.connect(0);
        open_producer(&mut d, conn, 1, 1);
        d.send(conn, 2, submit(1, batch(&[1])));
        d.send(conn, 3, submit(1, batch(&[2])));
        match disposition(d.reply(conn, 3)) {
            SubmissionDispositionT::SubmissionNotAdmitted(n) => {
                assert_eq!(n.refusal, Some(SubmissionRefusal::CreditExceeded))
            }
            other => panic!("expected CreditExceeded, got {other:?}"),
        }
        // The admitted batch is answered before ProducerEnded.
        assert!(matches!(
            disposition(d.reply(conn, 2)),
            SubmissionDispositionT::SubmissionOutcomeUnknown(_)
        ));
        let rest = d.rest(conn);
        assert!(
            rest.iter()
                .any(|g| matches!(g, Got::Other(ServerBodyT::ProducerEnded(e))
                if e.reason == Some(ProducerEndReason::ProtocolViolated))),
            "{rest:?}"
        );
        assert_eq!(d.cl.misbehaviour().len(), 1);
        d.send(conn, 4, submit(1, batch(&[3])));
        match disposition(d.reply(conn, 4)) {
            SubmissionDispositionT::SubmissionNotAdmitted(n) => {
                assert_eq!(n.refusal, Some(SubmissionRefusal::ProducerEnded))
            }
            other => panic!("expected ProducerEnded, got {other:?}"),
        }
    }

    #[test]
    fn sim_cluster_producer_refuses_a_batch_of_other_fields() {
        let mut d = Driver::nodes(1);
        let conn = d.connect(0);
        open_producer(&mut d, conn, 1, 4);
        let mut b = BatchBuilder::new(Arc::from(emitter_fields()));
        b.column("id", &[1u64]).unwrap();
        b.nullable_column::<&str>("note", &[None]).unwrap();
        let other = encode(&b.finish().unwrap()).unwrap();
        match disposition(d.ask(conn, 2, submit(1, other))) {
            SubmissionDispositionT::SubmissionNotAdmitted(n) => {
                assert_eq!(n.refusal, Some(SubmissionRefusal::SchemaMismatch))
            }
            other => panic!("expected SchemaMismatch, got {other:?}"),
        }
        match disposition(d.ask(conn, 3, submit(1, vec![1, 2, 3]))) {
            SubmissionDispositionT::SubmissionNotAdmitted(n) => {
                assert_eq!(n.refusal, Some(SubmissionRefusal::MalformedBatch))
            }
            other => panic!("expected MalformedBatch, got {other:?}"),
        }
    }

    #[test]
    fn sim_cluster_cut_mid_batch_admits_and_sends_no_outcome() {
        let mut d = Driver::nodes(1);
        let conn = d.connect(0);
        open_producer(&mut d, conn, 1, 4);
        d.cl.set_faults(Faults {
            cut_mid_batch: 1.0,
            ..Faults::default()
        });
        d.send(conn, 2, submit(1, batch(&[1])));
        let rest = d.rest(conn);
        assert!(matches!(rest.as_slice(), [Got::Close]), "{rest:?}");
        assert!(!d.cl.is_open(conn));
    }

    fn close(producer: u64) -> ClientRequestT {
        ClientRequestT::CloseIngestorRequest(Box::new(CloseIngestorRequestT { producer }))
    }

    #[test]
    fn p_8_a_close_ingests_every_batch_it_answers_completed() {
        let mut d = Driver::nodes(1);
        let conn = d.connect(0);
        open_producer(&mut d, conn, 1, 4);
        d.send(conn, 2, submit(1, batch(&[1, 2])));
        d.send(conn, 3, submit(1, batch(&[3])));
        assert!(!has_reply(&mut d, conn, 2) && !has_reply(&mut d, conn, 3));
        assert!(d.cl.ingested().is_empty(), "nothing is due yet");
        // Closed before the outcomes are due: both batches are answered before the close.
        d.send(conn, 4, close(1));
        let inbox: Vec<u64> = d.inbox[&conn]
            .iter()
            .filter_map(|g| match g {
                Got::Reply(r, _) => Some(*r),
                _ => None,
            })
            .collect();
        assert_eq!(
            inbox,
            [2, 3, 4],
            "every outcome comes before the close's reply"
        );
        for id in [2, 3] {
            assert!(matches!(
                disposition(d.reply(conn, id)),
                SubmissionDispositionT::SubmissionCompleted(_)
            ));
        }
        assert!(matches!(
            d.reply(conn, 4),
            ReplyBodyT::CloseIngestorOutcome(o)
                if matches!(o.disposition, CloseIngestorDispositionT::ProducerClosed(_))
        ));
        // Each batch answered Completed was ingested once, with its own rows, in order.
        assert_eq!(d.cl.ingested(), [vec![1, 2], vec![3]]);
        // Nothing is answered or ingested again once the outcomes would have been due.
        d.at(BATCH_LATENCY.as_nanos() as u64 * 2);
        d.cl.advance(d.now);
        d.pump();
        assert_eq!(d.cl.ingested(), [vec![1, 2], vec![3]]);
        assert!(d.rest(conn).is_empty());
        assert!(d.cl.misbehaviour().is_empty());
    }

    fn open_consumer(d: &mut Driver, conn: ConnId, id: u64) -> EmitterOpenedT {
        let request = ClientRequestT::OpenEmitterRequest(Box::new(OpenEmitterRequestT {
            domain: "tenant".into(),
            emitter: EMITTER.into(),
            expected_fields: wire(&emitter_fields()),
            max_outstanding_batches: 8,
            max_outstanding_bytes: 1 << 20,
        }));
        match d.ask(conn, id, request) {
            ReplyBodyT::OpenEmitterOutcome(o) => match o.disposition {
                OpenEmitterDispositionT::EmitterOpened(p) => *p,
                other => panic!("expected an opened consumer, got {other:?}"),
            },
            other => panic!("expected an open outcome, got {other:?}"),
        }
    }

    fn read(consumer: u64) -> ClientRequestT {
        ClientRequestT::ReadEmitterBatchRequest(Box::new(ReadEmitterBatchRequestT { consumer }))
    }

    fn received(body: ReplyBodyT) -> EmitterBatchReceivedT {
        match body {
            ReplyBodyT::ReadEmitterBatchOutcome(o) => match o.disposition {
                ReadEmitterDispositionT::EmitterBatchReceived(b) => *b,
                other => panic!("expected a delivery, got {other:?}"),
            },
            other => panic!("expected a read outcome, got {other:?}"),
        }
    }

    fn settle(consumer: u64, reference: &[u8], decision: EmitterBatchDecision) -> ClientRequestT {
        ClientRequestT::SettleEmitterBatchRequest(Box::new(SettleEmitterBatchRequestT {
            consumer,
            reference: reference.to_vec(),
            decision: Some(decision),
            reason: String::new(),
        }))
    }

    fn settlement(body: ReplyBodyT) -> Option<EmitterSettlement> {
        match body {
            ReplyBodyT::SettleEmitterBatchOutcome(o) => o.disposition,
            other => panic!("expected a settle outcome, got {other:?}"),
        }
    }

    #[test]
    fn sim_cluster_emitter_redelivers_a_timed_out_attempt_under_a_new_reference() {
        let mut d = Driver::nodes(1);
        let conn = d.connect(0);
        let opened = open_consumer(&mut d, conn, 1);
        assert!(
            matches!(opened.window, ConsumerWindowT::ParallelConsumerWindow(ref w) if w.max == EMITTER_WINDOW)
        );
        d.send(conn, 2, read(1));
        assert!(!has_reply(&mut d, conn, 2), "the read waits for a delivery");
        d.cl.advance(d.now);
        d.pump();
        let first = received(d.reply(conn, 2));
        let ids = nervix_protocol::arrow::decode(&first.batch, &emitter_fields(), first.members)
            .expect("a delivery of the consumer's fields");
        assert_eq!(
            ids.num_rows(),
            delivery_ids(token_number(&first.identity)).len()
        );
        // Not settled in time: the same delivery comes again under another reference.
        d.at(EMITTER_ACK_TIMEOUT.as_nanos() as u64 + 1);
        d.send(conn, 3, read(1));
        d.cl.advance(d.now);
        d.pump();
        let again = received(d.reply(conn, 3));
        assert_eq!(again.identity, first.identity);
        assert_ne!(again.reference, first.reference);
        // The old reference is stale, the new one is confirmed, and a second settle of it
        // is recorded as a client's misbehaviour.
        let stale = d.ask(
            conn,
            4,
            settle(1, &first.reference, EmitterBatchDecision::Ack),
        );
        assert_eq!(settlement(stale), Some(EmitterSettlement::StaleReference));
        let ok = d.ask(
            conn,
            5,
            settle(1, &again.reference, EmitterBatchDecision::Ack),
        );
        assert_eq!(settlement(ok), Some(EmitterSettlement::Confirmed));
        assert!(d.cl.misbehaviour().is_empty());
        let twice = d.ask(
            conn,
            6,
            settle(1, &again.reference, EmitterBatchDecision::Ack),
        );
        assert_eq!(settlement(twice), Some(EmitterSettlement::StaleReference));
        assert_eq!(d.cl.misbehaviour().len(), 1);
    }

    #[test]
    fn sim_cluster_emitter_window_holds_reads_until_a_settle() {
        let mut d = Driver::nodes(1);
        let conn = d.connect(0);
        open_consumer(&mut d, conn, 1);
        let mut refs = Vec::new();
        let mut t = 0;
        for i in 0..EMITTER_WINDOW {
            let id = 10 + i;
            d.send(conn, id, read(1));
            t += 100_000_000;
            d.at(t);
            d.cl.advance(d.now);
            d.pump();
            refs.push(received(d.reply(conn, id)).reference);
        }
        d.send(conn, 20, read(1));
        t += 500_000_000;
        d.at(t);
        d.cl.advance(d.now);
        assert!(!has_reply(&mut d, conn, 20), "the window is full");
        let ok = d.ask(conn, 21, settle(1, &refs[0], EmitterBatchDecision::Retry));
        assert_eq!(settlement(ok), Some(EmitterSettlement::Confirmed));
        t += 500_000_000;
        d.at(t);
        d.cl.advance(d.now);
        d.pump();
        let next = received(d.reply(conn, 20));
        assert!(!refs.contains(&next.reference));
    }
}
