//! Transactions: `BEGIN`, appends at an expected position, `COMMIT` against an expected
//! preview, `REVERT`, session bindings, attach and take-over, inspection and expiry.

use super::*;
use std::time::Duration;

/// How long an open transaction lives without an attach, an append or a `BEGIN`: 15 minutes.
pub const TRANSACTION_EXPIRY: Duration = Duration::from_secs(15 * 60);

/// A deterministic 32-byte digest of `parts` (not cryptographic; it only has to tell
/// transaction previews apart).
pub(super) fn digest(parts: &[&str]) -> Vec<u8> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    let mut out = Vec::with_capacity(32);
    for i in 0..4u64 {
        out.extend_from_slice(&mix(h ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_le_bytes());
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TxState {
    Open,
    Committed,
    Reverted,
    Expired,
}

#[derive(Debug)]
pub(super) struct Transaction {
    pub(super) id: String,
    pub(super) domain: String,
    pub(super) state: TxState,
    pub(super) ops: Vec<String>,
    pub(super) applied: u64,
    pub(super) last_activity: Timestamp,
    pub(super) holder: Option<ConnId>,
}

impl Transaction {
    pub(super) fn accepted(&self) -> u64 {
        self.ops.len() as u64
    }

    pub(super) fn status(&self) -> TransactionStatusT {
        let state = match self.state {
            TxState::Open => TransactionStateT::TransactionOpen(Box::default()),
            TxState::Committed => TransactionStateT::TransactionCommitted(Box::default()),
            TxState::Reverted => TransactionStateT::TransactionReverted(Box::default()),
            TxState::Expired => TransactionStateT::TransactionExpired(Box::default()),
        };
        TransactionStatusT {
            transaction_id: self.id.clone(),
            domain: self.domain.clone(),
            state,
            accepted_operations: self.accepted(),
            applied_operations: self.applied,
        }
    }

    /// The preview of the whole transaction as accepted so far.
    pub(super) fn preview(&self) -> TransactionPreviewIdentityT {
        let mut parts: Vec<&str> = vec![&self.id, &self.domain];
        parts.extend(self.ops.iter().map(String::as_str));
        TransactionPreviewIdentityT {
            transaction_id: self.id.clone(),
            position: self.accepted(),
            planning_basis: Box::new(FingerprintT {
                bytes: digest(&parts),
            }),
        }
    }
}

impl SimCluster {
    /// Open transactions idle for [`TRANSACTION_EXPIRY`] expire and lose their binding.
    pub(super) fn expire_transactions(&mut self) {
        let due: Vec<String> = self
            .transactions
            .values()
            .filter(|t| {
                t.state == TxState::Open
                    && self.now.saturating_since(t.last_activity) >= TRANSACTION_EXPIRY
            })
            .map(|t| t.id.clone())
            .collect();
        for id in due {
            let holder = {
                let t = self.transactions.get_mut(&id).expect("due transaction");
                t.state = TxState::Expired;
                t.holder.take()
            };
            if let Some(s) = holder.and_then(|h| self.sessions.get_mut(&h)) {
                s.bound = None;
            }
            self.log(format!("{id} expired"));
        }
    }

    pub(super) fn bound(&self, conn: ConnId) -> Option<String> {
        self.sessions.get(&conn).and_then(|s| s.bound.clone())
    }

    pub(super) fn bind(&mut self, conn: ConnId, tx: &str) {
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.bound = Some(tx.to_string());
            s.last_transaction = Some(tx.to_string());
            s.taken_over = None;
        }
        if let Some(t) = self.transactions.get_mut(tx) {
            t.holder = Some(conn);
        }
    }

    pub(super) fn unbind(&mut self, conn: ConnId) -> Option<String> {
        let tx = self.sessions.get_mut(&conn)?.bound.take()?;
        if let Some(t) = self.transactions.get_mut(&tx) {
            if t.holder == Some(conn) {
                t.holder = None;
            }
        }
        Some(tx)
    }

    pub(super) fn bound_status(&self, conn: ConnId) -> Option<Box<TransactionStatusT>> {
        let tx = self.bound(conn)?;
        self.transactions.get(&tx).map(|t| Box::new(t.status()))
    }

    pub(super) fn begin(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let reference = &c.execution_reference;
        if let Some(tx) = self.bound(conn) {
            return self.failed(conn, reference, format!("this session already holds {tx}"));
        }
        let Some(domain) = c.domain.clone() else {
            return self.failed(conn, reference, "BEGIN needs a domain".into());
        };
        if !self.config.domains.contains(&domain) {
            return self.failed(conn, reference, format!("no domain named {domain}"));
        }
        let id = loop {
            let id = format!("tx-{:016x}", self.rng.next_u64());
            if !self.transactions.contains_key(&id) {
                break id;
            }
        };
        self.transactions.insert(
            id.clone(),
            Transaction {
                id: id.clone(),
                domain,
                state: TxState::Open,
                ops: Vec::new(),
                applied: 0,
                last_activity: self.now,
                holder: None,
            },
        );
        self.bind(conn, &id);
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            format!("transaction {id} opened"),
        );
        outcome.transaction = self.bound_status(conn);
        self.admitted(c, outcome, Some(id.clone()), format!(" {id} opened"))
    }

    pub(super) fn commit(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let reference = &c.execution_reference;
        let Some(tx) = self.bound(conn) else {
            return self.failed(conn, reference, "this session holds no transaction".into());
        };
        let (current, accepted) = {
            let t = &self.transactions[&tx];
            (t.preview(), t.accepted())
        };
        match &c.expected_preview {
            Some(expected) if **expected != current => {
                let mut outcome = command_outcome(
                    reference,
                    OutcomeOrigin::Executed,
                    CommandDispositionT::PreviewStale(Box::new(PreviewStaleT {
                        expected: expected.clone(),
                        current: Box::new(current),
                    })),
                    "the expected preview is out of date; nothing was applied".into(),
                );
                outcome.transaction = self.bound_status(conn);
                return Served::new(
                    ReplyBodyT::CommandOutcome(Box::new(outcome)),
                    format!("PreviewStale({tx}@{accepted})"),
                );
            }
            None if accepted > 0 => {
                return self.failed(
                    conn,
                    reference,
                    "COMMIT must carry the preview it expects to apply".into(),
                );
            }
            _ => {}
        }
        if let Some(t) = self.transactions.get_mut(&tx) {
            t.state = TxState::Committed;
            t.applied = t.accepted();
            t.last_activity = self.now;
        }
        let status = self.bound_status(conn);
        self.unbind(conn);
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            format!("transaction {tx} committed"),
        );
        outcome.transaction = status;
        self.admitted(c, outcome, Some(tx.clone()), format!(" {tx} committed"))
    }

    pub(super) fn revert(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let reference = &c.execution_reference;
        let Some(tx) = self.bound(conn) else {
            return self.failed(conn, reference, "this session holds no transaction".into());
        };
        if let Some(t) = self.transactions.get_mut(&tx) {
            t.state = TxState::Reverted;
        }
        let status = self.bound_status(conn);
        self.unbind(conn);
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            format!("transaction {tx} reverted"),
        );
        outcome.transaction = status;
        self.admitted(c, outcome, Some(tx.clone()), format!(" {tx} reverted"))
    }

    /// Appends the statements of `c` to `tx`, the transaction bound to the session, when
    /// `c` names the position the transaction has reached.
    pub(super) fn append(
        &mut self,
        conn: ConnId,
        c: &CommandRequestT,
        stmts: &[String],
        tx: String,
    ) -> Served {
        let reference = &c.execution_reference;
        let accepted = self.transactions[&tx].accepted();
        match c.expected_transaction_position {
            None => {
                return self.failed(
                    conn,
                    reference,
                    format!("an append to {tx} must carry its expected position ({accepted})"),
                )
            }
            Some(p) if p != accepted => {
                return self.failed(
                    conn,
                    reference,
                    format!("expected position {p}, but {tx} has accepted {accepted}"),
                )
            }
            Some(_) => {}
        }
        let (admission, status, first) = {
            let t = self.transactions.get_mut(&tx).expect("bound transaction");
            let first = t.accepted() + 1;
            t.ops.extend(stmts.iter().cloned());
            t.last_activity = self.now;
            let admission = TransactionOperationAdmissionT {
                operation: t.accepted(),
                preview: Box::new(t.preview()),
            };
            (admission, t.status(), first)
        };
        let last = admission.operation;
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            if stmts.len() > 1 {
                format!("operations {first} to {last} accepted into {tx}")
            } else {
                format!("operation {last} accepted into {tx}")
            },
        );
        if stmts.len() > 1 {
            outcome.statements = (first..=last)
                .map(|n| StatementOutcomeT {
                    disposition: StatementDispositionT::CommandCompleted(Box::new(
                        CommandCompletedT {
                            already_existed: false,
                        },
                    )),
                    message: format!("operation {n} accepted"),
                    diagnostics: vec![],
                })
                .collect();
        }
        outcome.transaction = Some(Box::new(status));
        outcome.transaction_admission = Some(Box::new(admission));
        self.admitted(c, outcome, Some(tx.clone()), format!(" {tx} op {last}"))
    }

    /// An `AttachTransactionRequest`: the leader attaches; a follower redirects.
    pub(super) fn attach_request(&mut self, conn: ConnId, node: usize, tx: &str) -> Served {
        let at_leader = node == self.leader;
        if at_leader {
            self.attach(conn, tx)
        } else {
            let leader = self.redirect_leader();
            let summary = redirect_summary(&leader);
            Served::new(
                ReplyBodyT::AttachOutcome(Box::new(AttachOutcomeT {
                    disposition: AttachDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
                        leader,
                    })),
                    message: format!("{} does not lead", self.nodes[node].name),
                    diagnostics: vec![],
                })),
                summary,
            )
        }
    }

    /// An `InspectTransactionRequest`: the leader answers; a follower redirects.
    pub(super) fn inspect_request(
        &mut self,
        conn: ConnId,
        node: usize,
        i: &InspectTransactionRequestT,
    ) -> Served {
        let at_leader = node == self.leader;
        if at_leader {
            self.inspect(conn, i)
        } else {
            let leader = self.redirect_leader();
            let summary = redirect_summary(&leader);
            Served::new(
                ReplyBodyT::InspectionOutcome(Box::new(InspectionOutcomeT {
                    disposition: InspectionDispositionT::LeaderRedirect(Box::new(
                        LeaderRedirectT { leader },
                    )),
                })),
                summary,
            )
        }
    }

    pub(super) fn attach(&mut self, conn: ConnId, tx: &str) -> Served {
        let outcome = |disposition: AttachDispositionT, message: String| {
            ReplyBodyT::AttachOutcome(Box::new(AttachOutcomeT {
                disposition,
                message,
                diagnostics: vec![],
            }))
        };
        let Some(t) = self.transactions.get(tx) else {
            return Served::new(
                outcome(
                    AttachDispositionT::RequestFailed(Box::default()),
                    format!("no transaction named {tx}"),
                ),
                "AttachOutcome(RequestFailed)",
            );
        };
        if t.state != TxState::Open {
            let status = t.status();
            return Served::new(
                outcome(
                    AttachDispositionT::TransactionAlreadyFinished(Box::new(
                        TransactionAlreadyFinishedT {
                            transaction: Box::new(status),
                        },
                    )),
                    format!("{tx} has already finished"),
                ),
                format!("TransactionAlreadyFinished({tx})"),
            );
        }
        let previous = t.holder;
        match self.bound(conn) {
            Some(b) if b != tx => {
                return Served::new(
                    outcome(
                        AttachDispositionT::RequestFailed(Box::default()),
                        format!("this session already holds {b}"),
                    ),
                    "AttachOutcome(RequestFailed)",
                );
            }
            _ => {}
        }
        let mut summary = format!("TransactionAttached({tx})");
        if let Some(prev) = previous.filter(|p| *p != conn) {
            if let Some(s) = self.sessions.get_mut(&prev) {
                s.bound = None;
                s.taken_over = Some(tx.to_string());
            }
            summary.push_str(&format!(" taken over from {prev}"));
        }
        self.bind(conn, tx);
        let now = self.now;
        let t = self.transactions.get_mut(tx).expect("attached transaction");
        t.last_activity = now;
        let status = t.status();
        Served::new(
            outcome(
                AttachDispositionT::TransactionAttached(Box::new(TransactionAttachedT {
                    transaction: Box::new(status),
                })),
                format!("{tx} attached"),
            ),
            summary,
        )
    }

    pub(super) fn inspect(&mut self, conn: ConnId, i: &InspectTransactionRequestT) -> Served {
        let target = match &i.target {
            InspectionTargetT::AttachedTransaction(_) => self.bound(conn),
            InspectionTargetT::TransactionById(t) => Some(t.transaction_id.clone()),
            _ => None,
        };
        let (rejection, message) = match target.as_ref().and_then(|t| self.transactions.get(t)) {
            None if target.is_none() => (
                InspectionRejection::NoAttachedTransaction,
                "this session holds no transaction".to_string(),
            ),
            None => (
                InspectionRejection::TransactionNotFound,
                "no such transaction".to_string(),
            ),
            Some(t) if i.operation.is_some_and(|n| n > t.accepted()) => (
                InspectionRejection::OperationNotFound,
                format!("{} has accepted {} operation(s)", t.id, t.accepted()),
            ),
            Some(_) => (
                InspectionRejection::ReportUnavailable,
                "the simulated cluster keeps no impact reports".to_string(),
            ),
        };
        Served::new(
            ReplyBodyT::InspectionOutcome(Box::new(InspectionOutcomeT {
                disposition: InspectionDispositionT::InspectionRejected(Box::new(
                    InspectionRejectedT {
                        rejection: Some(rejection),
                        message,
                    },
                )),
            })),
            format!("InspectionRejected({})", name_of(rejection)),
        )
        .stage(CancellationStage::BeforeAdmission)
    }
}
