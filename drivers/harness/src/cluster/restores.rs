//! Restores: a RestoreStart, chunks adding up to its size, then one reply, sent as soon as the
//! declared bytes are in (a gRPC client half-closes then; a console client keeps its connection
//! open for it, T-3a). The archive must be one this cluster captured. `RESTORE [DOMAIN <name>]
//! [AS <new>] [DRY RUN] ...` restores every domain of the archive, or the one named, under its
//! own or the new name; its report has a step per kind (users for a cluster archive, then per
//! domain: create, import resources, apply models), Applied, or Planned in a dry run. The
//! outcome is recorded under the execution reference: a repeat with the same statement and
//! digest answers it as Recovered, another is an ExecutionReferenceConflict.

use super::calls::{CallId, Incoming, RestoreRecord};
use super::*;
use bytes::Bytes;
use nervix_protocol::frame::{RestoreFrame, RestoreReplyRoot};

/// The most bytes one restore may declare.
const RESTORE_QUOTA: u64 = 64 << 20;

impl SimCluster {
    fn restore_reply(&mut self, id: CallId, request_id: Option<u64>, d: RestoreDispositionT) {
        let name = match &d {
            RestoreDispositionT::CommandOutcome(o) => o
                .disposition
                .command_disposition_type()
                .variant_name()
                .unwrap_or("?"),
            _ => "RestoreUploadFailed",
        };
        self.log(format!("call {} -> {name}", id.0));
        let frame = self
            .encoder
            .encode::<RestoreReplyRoot>(&RestoreReplyT {
                request_id,
                disposition: d,
            })
            .expect("the cluster writes valid replies");
        if let Some(s) = self.calls.streams.get_mut(&id) {
            s.state = Incoming::Done;
        }
        self.call_send(id, CallOutput::Frame(frame));
        self.call_close(id);
    }

    fn restore_refused(&mut self, id: CallId, rid: Option<u64>, f: RestoreUploadFailure) {
        self.restore_reply(
            id,
            rid,
            RestoreDispositionT::RestoreUploadFailed(Box::new(RestoreUploadFailedT {
                failure: Some(f),
                message: format!("{f:?}"),
            })),
        );
    }

    pub(super) fn restore_frame(&mut self, id: CallId, frame: Bytes) {
        let part = match RestoreFrame::check(frame) {
            Ok(f) => f.unpack().part,
            Err(_) => return self.restore_refused(id, None, RestoreUploadFailure::InvalidStream),
        };
        let state = self
            .calls
            .streams
            .get_mut(&id)
            .map(|s| std::mem::take(&mut s.state));
        match (state, part) {
            (Some(Incoming::Nothing), RestorePartT::RestoreStart(start)) => {
                let rid = Some(start.request_id);
                if let Some(r) = self.call_redirect(id) {
                    let o = command_outcome(
                        &start.execution_reference,
                        OutcomeOrigin::Executed,
                        CommandDispositionT::LeaderRedirect(Box::new(r)),
                        "not the leader".into(),
                    );
                    return self.restore_reply(
                        id,
                        rid,
                        RestoreDispositionT::CommandOutcome(Box::new(o)),
                    );
                }
                let words: Vec<String> = start
                    .statement
                    .split_whitespace()
                    .map(str::to_ascii_uppercase)
                    .collect();
                let single =
                    words.first().is_some_and(|w| w == "RESTORE") && !start.statement.contains(';');
                let quota = start.total_bytes > RESTORE_QUOTA;
                if let Some(s) = self.calls.streams.get_mut(&id) {
                    s.state = Incoming::Restore {
                        start: *start,
                        bytes: Vec::new(),
                    };
                }
                if !single {
                    self.restore_refused(id, rid, RestoreUploadFailure::InvalidStatement);
                } else if quota {
                    self.restore_refused(id, rid, RestoreUploadFailure::QuotaExceeded);
                }
            }
            (Some(Incoming::Restore { start, mut bytes }), RestorePartT::RestoreChunk(c)) => {
                bytes.extend_from_slice(&c.bytes);
                let rid = Some(start.request_id);
                let total = start.total_bytes;
                let len = bytes.len() as u64;
                let cut = len < total && self.chance(self.calls.faults.cut);
                if let Some(s) = self.calls.streams.get_mut(&id) {
                    s.state = Incoming::Restore { start, bytes };
                }
                if len > total {
                    self.restore_refused(id, rid, RestoreUploadFailure::SizeMismatch);
                } else if cut {
                    self.log(format!("call {} cut mid-stream", id.0));
                    self.call_close(id);
                } else if len == total {
                    self.restore_complete(id);
                }
            }
            (Some(Incoming::Done), _) | (None, _) => {}
            (Some(_), _) => self.restore_refused(id, None, RestoreUploadFailure::InvalidStream),
        }
    }

    fn restore_complete(&mut self, id: CallId) {
        let state = self
            .calls
            .streams
            .get_mut(&id)
            .map(|s| std::mem::take(&mut s.state));
        let Some(Incoming::Restore { start, bytes }) = state else {
            return;
        };
        let rid = Some(start.request_id);
        let digest = blake3::hash(&bytes);
        if digest.as_bytes()[..] != start.digest.bytes[..] {
            return self.restore_refused(id, rid, RestoreUploadFailure::DigestMismatch);
        }
        let reference = start.execution_reference.clone();
        self.calls.received.push((reference.clone(), bytes.clone()));
        if let Some(r) = self.calls.restores.get(&reference) {
            let same = r.statement == start.statement && r.digest == start.digest.bytes;
            let mut o = if same {
                let mut o = r.outcome.clone();
                o.origin = Some(OutcomeOrigin::Recovered);
                o
            } else {
                command_outcome(
                    &reference,
                    OutcomeOrigin::Executed,
                    CommandDispositionT::ExecutionReferenceConflict(Box::new(
                        ExecutionReferenceConflictT {
                            conflict: Some(ExecutionReferenceConflictKind::Content),
                        },
                    )),
                    "the reference names another restore".into(),
                )
            };
            o.execution_reference = reference;
            return self.restore_reply(id, rid, RestoreDispositionT::CommandOutcome(Box::new(o)));
        }
        let archive = self
            .calls
            .archives
            .values()
            .find(|a| a.bytes[..] == bytes[..])
            .cloned();
        let Some(archive) = archive else {
            let o = command_outcome(
                &reference,
                OutcomeOrigin::Executed,
                CommandDispositionT::RequestFailed(Box::default()),
                "not an archive of this cluster".into(),
            );
            return self.restore_reply(id, rid, RestoreDispositionT::CommandOutcome(Box::new(o)));
        };
        let outcome = self.restore_apply(&start, &archive.domains, archive.users, &bytes);
        self.calls.restores.insert(
            reference.clone(),
            RestoreRecord {
                statement: start.statement.clone(),
                digest: start.digest.bytes.clone(),
                outcome: outcome.clone(),
            },
        );
        if self.chance(self.calls.faults.lost_reply) {
            self.log(format!("call {} restored, reply lost", id.0));
            return self.call_close(id);
        }
        if self.chance(self.calls.faults.outcome_unknown) {
            let o = command_outcome(
                &reference,
                OutcomeOrigin::Executed,
                CommandDispositionT::OutcomeUnknown(Box::new(OutcomeUnknownT {
                    cause: Some(UnknownOutcomeCause::StillApplying),
                })),
                "still applying".into(),
            );
            return self.restore_reply(id, rid, RestoreDispositionT::CommandOutcome(Box::new(o)));
        }
        self.restore_reply(
            id,
            rid,
            RestoreDispositionT::CommandOutcome(Box::new(outcome)),
        );
    }

    /// Applies (or plans) the restore and returns its outcome with its report.
    fn restore_apply(
        &mut self,
        start: &RestoreStartT,
        archived: &[String],
        users: bool,
        bytes: &[u8],
    ) -> CommandOutcomeT {
        let words: Vec<&str> = start.statement.split_whitespace().collect();
        let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
        let after = |key: &str| {
            upper
                .iter()
                .position(|w| w == key)
                .and_then(|i| words.get(i + 1))
                .map(|w| w.trim_matches(['\'', '"', ';']).to_string())
        };
        let dry = upper.windows(2).any(|w| w[0] == "DRY" && w[1] == "RUN");
        let named = after("DOMAIN");
        let rename = after("AS");
        let sources: Vec<String> = match &named {
            Some(d) => archived.iter().filter(|a| *a == d).cloned().collect(),
            None => archived.to_vec(),
        };
        let fail_at = if !dry && self.chance(self.calls.faults.step_failed) {
            Some(self.rng.next_u64() as usize % (sources.len() * 3 + usize::from(users)).max(1))
        } else {
            None
        };
        let mut steps = Vec::new();
        let mut failed = false;
        let mut step = |kind, domain: Option<String>, steps: &mut Vec<RestoreStepReportT>| {
            let outcome = if dry {
                RestoreStepOutcome::Planned
            } else if failed {
                RestoreStepOutcome::NotAttempted
            } else if fail_at == Some(steps.len()) {
                failed = true;
                RestoreStepOutcome::Failed
            } else {
                RestoreStepOutcome::Applied
            };
            steps.push(RestoreStepReportT {
                kind: Some(kind),
                domain,
                outcome: Some(outcome),
            });
        };
        if users && named.is_none() {
            step(RestoreStepKind::Users, None, &mut steps);
        }
        let mut domains = Vec::new();
        for source in &sources {
            let target = rename.clone().unwrap_or_else(|| source.clone());
            for kind in [
                RestoreStepKind::CreateDomain,
                RestoreStepKind::ImportResources,
                RestoreStepKind::ApplyModels,
            ] {
                step(kind, Some(target.clone()), &mut steps);
            }
            domains.push(RestoredDomainT {
                source: source.clone(),
                domain: target.clone(),
                resource_versions: 1,
                models: 1,
                planned_models: None,
            });
            let created = steps
                .iter()
                .rev()
                .nth(2)
                .is_some_and(|s| s.outcome == Some(RestoreStepOutcome::Applied));
            if created && !self.config.domains.contains(&target) {
                self.config.domains.push(target);
            }
        }
        let report = RestoreReportT {
            mode: Some(if dry {
                RestoreMode::DryRun
            } else {
                RestoreMode::Apply
            }),
            total_bytes: bytes.len() as u64,
            digest: Box::new(FingerprintT {
                bytes: blake3::hash(bytes).as_bytes().to_vec(),
            }),
            captured_at: 0,
            users: (users && named.is_none()).then(|| {
                Box::new(RestoredUsersT {
                    created: 1,
                    skipped: 0,
                    replaced: 0,
                })
            }),
            domains,
            steps,
        };
        let disposition = if failed {
            CommandDispositionT::RequestFailed(Box::default())
        } else {
            completed()
        };
        let mut o = command_outcome(
            &start.execution_reference,
            OutcomeOrigin::Executed,
            disposition,
            if failed {
                "a restore step failed".into()
            } else {
                "restored".into()
            },
        );
        o.restore = Some(Box::new(report));
        o
    }
}
