//! Command execution: statement classification, the record of admitted commands by execution
//! reference (a repeat is `Recovered`, a different command under the same reference a
//! conflict), and the dispositions of a `CommandRequest` outside a transaction.

use super::*;

/// What the cluster recorded for one execution reference.
#[derive(Debug)]
pub(super) struct Record {
    pub(super) query: String,
    pub(super) domain: Option<String>,
    pub(super) position: Option<u64>,
    pub(super) transaction: Option<String>,
    pub(super) outcome: CommandOutcomeT,
}

/// What one statement of a command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stmt {
    Begin,
    Commit,
    Revert,
    /// `BACKUP ...`: a command of its own, served by the leader outside a transaction.
    Backup,
    /// `SHOW TRANSACTIONS` / `DESCRIBE TRANSACTION`: served by the leader only.
    LeaderRead,
    /// Any other `SHOW` / `DESCRIBE`: a follower may serve it.
    Read,
    Write,
}

pub(super) fn classify(statement: &str) -> Stmt {
    let upper = statement.to_ascii_uppercase();
    let mut words = upper.split_whitespace();
    let first = words.next().unwrap_or("");
    let second = words.next().unwrap_or("");
    match first {
        "BEGIN" => Stmt::Begin,
        "COMMIT" => Stmt::Commit,
        "REVERT" | "ROLLBACK" => Stmt::Revert,
        "BACKUP" => Stmt::Backup,
        "SHOW" if second == "TRANSACTIONS" => Stmt::LeaderRead,
        "DESCRIBE" if second == "TRANSACTION" => Stmt::LeaderRead,
        "SHOW" | "DESCRIBE" if !second.is_empty() => Stmt::Read,
        _ => Stmt::Write,
    }
}

pub(super) fn statements(query: &str) -> Vec<String> {
    query
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub(super) fn read_command(c: &CommandRequestT) -> bool {
    let stmts = statements(&c.query);
    c.expected_transaction_position.is_none()
        && c.expected_preview.is_none()
        && !stmts.is_empty()
        && stmts.iter().all(|s| classify(s) == Stmt::Read)
}

pub(super) fn command_outcome(
    reference: &str,
    origin: OutcomeOrigin,
    disposition: CommandDispositionT,
    message: String,
) -> CommandOutcomeT {
    CommandOutcomeT {
        execution_reference: reference.to_string(),
        origin: Some(origin),
        disposition,
        message,
        ..Default::default()
    }
}

pub(super) fn completed() -> CommandDispositionT {
    CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
        already_existed: false,
    }))
}

impl SimCluster {
    pub(super) fn command(&mut self, conn: ConnId, node: usize, c: CommandRequestT) -> Served {
        let reference = c.execution_reference.clone();
        let positioned = c.expected_transaction_position.is_some() || c.expected_preview.is_some();
        if node != self.leader && !read_command(&c) {
            let leader = self.redirect_leader();
            let summary = redirect_summary(&leader);
            let outcome = command_outcome(
                &reference,
                OutcomeOrigin::Executed,
                CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT { leader })),
                format!(
                    "{} does not lead; send the command to the leader",
                    self.nodes[node].name
                ),
            );
            return Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary);
        }
        if positioned {
            if self.bound(conn).is_some() && self.chance(self.config.faults.detach_binding) {
                if let Some(tx) = self.unbind(conn) {
                    self.log(format!(
                        "{} {conn} binding of {tx} forgotten [fault detach_binding]",
                        self.nodes[node].name
                    ));
                }
            }
            // A repeat of a command recorded under a transaction that has finished gets its
            // recorded outcome even without a binding: attaching a finished transaction is
            // impossible, so answering `TransactionDetached` would leave the client stuck.
            let finished = self.records.get(&reference).is_some_and(|r| {
                r.transaction.as_ref().is_none_or(|t| {
                    self.transactions
                        .get(t)
                        .is_none_or(|t| t.state != TxState::Open)
                })
            });
            if self.bound(conn).is_none() && !finished {
                return self.unbound_positioned(conn, &c);
            }
        }
        if let Some(rec) = self.records.get(&reference) {
            let conflict = if rec.query != c.query {
                Some(ExecutionReferenceConflictKind::Content)
            } else if rec.domain != c.domain {
                Some(ExecutionReferenceConflictKind::Domain)
            } else if rec.position != c.expected_transaction_position {
                Some(ExecutionReferenceConflictKind::Position)
            } else if positioned
                && rec.transaction.is_some()
                && self.bound(conn).is_some()
                && rec.transaction != self.bound(conn)
            {
                Some(ExecutionReferenceConflictKind::Owner)
            } else {
                None
            };
            return match conflict {
                Some(kind) => {
                    let outcome = command_outcome(
                        &reference,
                        OutcomeOrigin::Executed,
                        CommandDispositionT::ExecutionReferenceConflict(Box::new(
                            ExecutionReferenceConflictT {
                                conflict: Some(kind),
                            },
                        )),
                        "the execution reference already names another command".into(),
                    );
                    Served::new(
                        ReplyBodyT::CommandOutcome(Box::new(outcome)),
                        format!("ExecutionReferenceConflict({})", name_of(kind)),
                    )
                }
                None => {
                    let mut outcome = rec.outcome.clone();
                    outcome.origin = Some(OutcomeOrigin::Recovered);
                    let summary = format!(
                        "{}(Recovered)",
                        name_of(outcome.disposition.command_disposition_type())
                    );
                    Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary)
                        .stage(CancellationStage::AfterAdmission)
                }
            };
        }
        let stmts = statements(&c.query);
        let kinds: Vec<Stmt> = stmts.iter().map(|s| classify(s)).collect();
        let control = kinds
            .iter()
            .any(|k| matches!(k, Stmt::Begin | Stmt::Commit | Stmt::Revert));
        if stmts.is_empty() {
            return self.failed(conn, &reference, "the command holds no statement".into());
        }
        if control && stmts.len() > 1 {
            return self.failed(
                conn,
                &reference,
                "BEGIN, COMMIT and REVERT must be commands of their own".into(),
            );
        }
        if kinds.contains(&Stmt::Backup) && stmts.len() > 1 {
            return self.failed(
                conn,
                &reference,
                "BACKUP must be a command of its own".into(),
            );
        }
        match kinds[0] {
            Stmt::Begin => self.begin(conn, &c),
            Stmt::Backup => self.backup(conn, &c, &stmts[0]),
            Stmt::Commit => self.commit(conn, &c),
            Stmt::Revert => self.revert(conn, &c),
            _ if kinds
                .iter()
                .all(|k| matches!(k, Stmt::Read | Stmt::LeaderRead)) =>
            {
                self.read(conn, node, &c, &stmts, &kinds)
            }
            _ => self.write(conn, &c, &stmts),
        }
    }

    /// A positioned command on a session that holds no binding.
    pub(super) fn unbound_positioned(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let s = &self.sessions[&conn];
        let (disposition, tx) = match &s.taken_over {
            Some(tx) => (
                CommandDispositionT::TransactionTakenOver(Box::new(TransactionTakenOverT {
                    transaction_id: tx.clone(),
                })),
                tx.clone(),
            ),
            None => {
                let tx = c
                    .expected_preview
                    .as_ref()
                    .map(|p| p.transaction_id.clone())
                    .or_else(|| {
                        self.records
                            .get(&c.execution_reference)
                            .and_then(|r| r.transaction.clone())
                    })
                    .or_else(|| s.last_transaction.clone())
                    .unwrap_or_default();
                (
                    CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
                        transaction_id: tx.clone(),
                    })),
                    tx,
                )
            }
        };
        let summary = format!("{}({tx})", name_of(disposition.command_disposition_type()));
        let outcome = command_outcome(
            &c.execution_reference,
            OutcomeOrigin::Executed,
            disposition,
            "this session holds no binding for the transaction; attach it and retry".into(),
        );
        Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary)
    }

    /// A definitive failure before admission; nothing is recorded.
    pub(super) fn failed(&mut self, conn: ConnId, reference: &str, message: String) -> Served {
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            CommandDispositionT::RequestFailed(Box::default()),
            message,
        );
        outcome.transaction = self.bound_status(conn);
        Served::new(
            ReplyBodyT::CommandOutcome(Box::new(outcome)),
            "RequestFailed(Executed)",
        )
    }

    /// Records an admitted command's outcome and answers it (or `OutcomeUnknown`, by fault).
    pub(super) fn admitted(
        &mut self,
        c: &CommandRequestT,
        outcome: CommandOutcomeT,
        transaction: Option<String>,
        detail: String,
    ) -> Served {
        self.records.insert(
            c.execution_reference.clone(),
            Record {
                query: c.query.clone(),
                domain: c.domain.clone(),
                position: c.expected_transaction_position,
                transaction,
                outcome: outcome.clone(),
            },
        );
        if self.chance(self.config.faults.outcome_unknown) {
            let unknown = command_outcome(
                &c.execution_reference,
                OutcomeOrigin::Executed,
                CommandDispositionT::OutcomeUnknown(Box::new(OutcomeUnknownT {
                    cause: Some(UnknownOutcomeCause::StillApplying),
                })),
                "admitted and still applying; repeat under the same reference".into(),
            );
            return Served::new(
                ReplyBodyT::CommandOutcome(Box::new(unknown)),
                format!("OutcomeUnknown(StillApplying){detail} [fault outcome_unknown]"),
            )
            .stage(CancellationStage::AfterAdmission);
        }
        let summary = format!(
            "{}(Executed){detail}",
            name_of(outcome.disposition.command_disposition_type())
        );
        Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary)
            .stage(CancellationStage::AfterAdmission)
    }

    pub(super) fn write(&mut self, conn: ConnId, c: &CommandRequestT, stmts: &[String]) -> Served {
        if let Some(tx) = self.bound(conn) {
            return self.append(conn, c, stmts, tx);
        }
        let reference = &c.execution_reference;
        // No transaction: each statement runs on its own.
        let mut existed = Vec::with_capacity(stmts.len());
        for s in stmts {
            let key = s
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_ascii_uppercase();
            existed.push(key.starts_with("CREATE ") && !self.created.insert(key));
        }
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
                already_existed: stmts.len() == 1 && existed[0],
            })),
            format!("executed `{}`", short(&c.query, 60)),
        );
        if stmts.len() > 1 {
            outcome.statements = stmts
                .iter()
                .zip(&existed)
                .map(|(s, e)| StatementOutcomeT {
                    disposition: StatementDispositionT::CommandCompleted(Box::new(
                        CommandCompletedT {
                            already_existed: *e,
                        },
                    )),
                    message: format!("executed `{}`", short(s, 60)),
                    diagnostics: vec![],
                })
                .collect();
        }
        self.admitted(c, outcome, None, String::new())
    }
}
