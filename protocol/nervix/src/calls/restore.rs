//! A restore (RS-1 to RS-5, the manual's P-1 to P-5 of Restore Streams): one RestoreBackup call
//! per attempt, under one execution reference kept with the statement and the archive's exact
//! bytes until the outcome is known.
//!
//! The published schema declares no `status` and no `start_version` in a `RestoredDomain`, so
//! the restored domains' required status and start version (RS-4) cannot be decoded: a
//! [`RestoredDomainInfo`] holds what the schema carries and nothing guessed.

use super::attempt::{AttemptState, Phase};
use super::sender::{ChunkFrame, ChunkRoot, Sender};
use super::{
    ArchiveInfo, CallError, CallViolation, Digest, Interruption, Leader, Need, TransferConfig,
};
use crate::command::ExecutionReference;
use crate::encode::Encoder;
use crate::frame::{RestoreMessageRoot, RestoreReplyFrame};
use crate::schema::*;
use crate::statements::{route, Route};
use crate::time::Timestamp;
use bytes::Bytes;

/// One step of a restore's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepInfo {
    /// What the step does.
    pub kind: RestoreStepKind,
    /// The domain (restored name); `None` only for the users step.
    pub domain: Option<String>,
    /// How it went.
    pub outcome: RestoreStepOutcome,
}

/// What a cluster restore did with the archived users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoredUsersInfo {
    /// Users created.
    pub created: u64,
    /// Users skipped.
    pub skipped: u64,
    /// Users replaced.
    pub replaced: u64,
}

/// One restored domain, as the published schema carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredDomainInfo {
    /// Its name in the archive.
    pub source: String,
    /// The name it is restored under.
    pub domain: String,
    /// Resource versions imported.
    pub resource_versions: u64,
    /// Models applied.
    pub models: u64,
    /// Whether a dry run's planner report for its models came with it.
    pub planned_models: bool,
}

/// What a restore did, or would do in a dry run, copied out of its report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreSummary {
    /// Apply or dry run.
    pub mode: RestoreMode,
    /// The archive's size and digest as the server read them.
    pub archive: ArchiveInfo,
    /// Unix nanoseconds of the original capture.
    pub captured_at: i64,
    /// The users (a cluster restore only).
    pub users: Option<RestoredUsersInfo>,
    /// The domains, in archive order.
    pub domains: Vec<RestoredDomainInfo>,
    /// The steps, in application order.
    pub steps: Vec<StepInfo>,
}

impl RestoreSummary {
    fn of(report: &RestoreReport<'_>) -> Self {
        let mut digest = [0u8; 32];
        digest.copy_from_slice(report.digest().bytes().bytes());
        Self {
            mode: report.mode().unwrap_or(RestoreMode::Apply),
            archive: ArchiveInfo {
                total_bytes: report.total_bytes(),
                digest,
            },
            captured_at: report.captured_at(),
            users: report.users().map(|u| RestoredUsersInfo {
                created: u.created(),
                skipped: u.skipped(),
                replaced: u.replaced(),
            }),
            domains: report
                .domains()
                .iter()
                .map(|d| RestoredDomainInfo {
                    source: d.source().to_string(),
                    domain: d.domain().to_string(),
                    resource_versions: d.resource_versions(),
                    models: d.models(),
                    planned_models: d.planned_models().is_some(),
                })
                .collect(),
            steps: report
                .steps()
                .iter()
                .map(|s| StepInfo {
                    kind: s.kind().unwrap_or(RestoreStepKind::Users),
                    domain: s.domain().map(str::to_string),
                    outcome: s.outcome().unwrap_or(RestoreStepOutcome::NotAttempted),
                })
                .collect(),
        }
    }

    /// The step that failed, if one did: the steps before it stay applied (RS-4).
    pub fn failed_step(&self) -> Option<(usize, &StepInfo)> {
        self.steps
            .iter()
            .enumerate()
            .find(|(_, s)| s.outcome == RestoreStepOutcome::Failed)
    }
}

/// How a restore ended (RS-4).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RestoreOutcome {
    /// CommandCompleted: the restore's report.
    Completed {
        /// What it did (or would do, in a dry run); `None` when the outcome carries no report.
        summary: Option<RestoreSummary>,
        /// Executed now or recovered.
        origin: OutcomeOrigin,
        /// The server's message.
        message: String,
    },
    /// RequestFailed: a report that names a failed step leaves the steps before it applied.
    Failed {
        /// The report, when the archive was verified.
        summary: Option<RestoreSummary>,
        /// The server's message.
        message: String,
    },
    /// RestoreUploadFailed: the attempt's stream changed nothing. `may_repeat` for
    /// QuotaExceeded and StagingFailed, which allow the same stream again later; the others
    /// never allow the same stream unchanged. The refusal speaks of that stream only:
    /// `uncertain` when an earlier attempt may have run the restore without its outcome being
    /// learnt (the whole archive went out, or OutcomeUnknown), so it may have run all the same
    /// (RS-5).
    Refused {
        /// Why.
        failure: RestoreUploadFailure,
        /// Whether the same stream may be sent again later.
        may_repeat: bool,
        /// Whether an earlier attempt may have run the restore.
        uncertain: bool,
        /// The server's message.
        message: String,
    },
    /// The reference is bound to another request (E-5). `uncertain` when an earlier attempt
    /// may have run this restore: the conflict says nothing of it.
    ReferenceConflict {
        /// Whether an earlier attempt may have had an effect.
        uncertain: bool,
        /// The server's message.
        message: String,
    },
    /// The reference's record was reclaimed: the outcome is unknown and cannot be learned.
    ReferenceExpired {
        /// The server's message.
        message: String,
    },
    /// Given up without an outcome. `uncertain` when some attempt carried the whole archive.
    Abandoned {
        /// The reference to repeat under.
        reference: ExecutionReference,
        /// Whether it may have run.
        uncertain: bool,
    },
}

/// What an input did to a restore.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RestoreStep {
    /// Nothing yet.
    Continue,
    /// The restore ended.
    Ended(RestoreOutcome),
    /// The node does not lead: stream the restore again, same reference, to the leader, or back
    /// off when it names none (RS-4).
    Redirect(Option<Leader>),
    /// OutcomeUnknown: stream the restore again after a back-off (RS-4).
    OutcomeUnknown,
    /// The attempt ended without a reply: uncertain when some attempt carried the whole
    /// archive. Stream it again whole under the same reference (RS-5).
    Interrupted {
        /// Why.
        cause: Interruption,
        /// Whether some attempt carried the whole archive.
        uncertain: bool,
    },
}

/// One logical restore (RS-1 to RS-5).
#[derive(Debug)]
pub struct RestoreCall {
    reference: ExecutionReference,
    statement: String,
    archive: ArchiveInfo,
    config: TransferConfig,
    sender: Sender,
    state: AttemptState,
    request_id: u64,
    attempts: u32,
    encoder: Encoder,
}

impl RestoreCall {
    /// A restore of the archive whose exact size and digest are `archive` (computed over
    /// exactly the bytes that will be streamed, RS-2), by the one RESTORE `statement`, under
    /// `reference`.
    pub fn new(
        reference: ExecutionReference,
        statement: &str,
        archive: ArchiveInfo,
        config: TransferConfig,
    ) -> Result<Self, CallError> {
        let statement = canonical(statement)?;
        let sender = Sender::new(ChunkRoot::Restore, archive.total_bytes, config.chunk_size)?;
        let mut call = Self {
            reference,
            statement,
            archive,
            config,
            sender,
            state: AttemptState::new(),
            request_id: 0,
            attempts: 0,
            encoder: Encoder::new(),
        };
        call.start_frame(1)?;
        Ok(call)
    }

    /// The restore's reference (RS-2).
    pub fn reference(&self) -> &ExecutionReference {
        &self.reference
    }

    /// The statement every attempt carries.
    pub fn statement(&self) -> &str {
        &self.statement
    }

    /// The archive's size and digest.
    pub fn archive(&self) -> ArchiveInfo {
        self.archive
    }

    /// Attempts started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The attempt under way and the bytes it has moved of the archive's size.
    pub fn progress(&self) -> super::Progress {
        super::Progress::new(self.attempts, self.sender.sent(), self.archive.total_bytes)
    }

    /// The request_id of the current (or last) attempt's start.
    pub fn request_id(&self) -> u64 {
        self.request_id
    }

    /// Bytes the current attempt has turned into frames.
    pub fn bytes_sent(&self) -> u64 {
        self.sender.sent()
    }

    /// What the call needs next.
    #[must_use]
    pub fn need(&self) -> Need {
        self.state.need(&self.sender)
    }

    fn start_frame(&mut self, request_id: u64) -> Result<Bytes, CallError> {
        let msg = RestoreMessageT {
            part: RestorePartT::RestoreStart(Box::new(RestoreStartT {
                request_id,
                execution_reference: self.reference.to_string(),
                statement: self.statement.clone(),
                total_bytes: self.archive.total_bytes,
                digest: Box::new(FingerprintT {
                    bytes: self.archive.digest.to_vec(),
                }),
            })),
        };
        Ok(self.encoder.encode::<RestoreMessageRoot>(&msg)?)
    }

    /// Starts an attempt, the first or a repeat: the RestoreStart frame of a new RestoreBackup
    /// stream (or console connection, T-3a). The archive follows from its first byte (RS-5).
    pub fn start(&mut self, now: Timestamp) -> Result<Bytes, CallError> {
        match self.state.phase {
            Phase::Ready => {}
            Phase::Ended => return Err(CallError::Ended),
            _ => return Err(CallError::OutOfTurn { needs: self.need() }),
        }
        self.attempts += 1;
        self.request_id = u64::from(self.attempts);
        let frame = self.start_frame(self.request_id)?;
        self.sender.restart();
        self.state.phase = Phase::Streaming {
            deadline: now + self.config.frame_timeout,
        };
        Ok(frame)
    }

    /// The chunk frame of the next `piece` ([`Need::Piece`]). The piece that completes the
    /// archive is checked first: bytes that do not hash to the declared digest make no frame
    /// ([`CallError::ArchiveChanged`], RS-2) and end the attempt.
    pub fn chunk(&mut self, now: Timestamp, piece: &[u8]) -> Result<Bytes, CallError> {
        self.next_piece(now, |sender, expected| sender.chunk(piece, expected))
    }

    /// As [`RestoreCall::chunk`], for a piece already in a [`Bytes`] (a buffer the archive was
    /// read into): the frame comes in two parts and the piece is not copied.
    pub fn chunk_parts(&mut self, now: Timestamp, piece: Bytes) -> Result<ChunkFrame, CallError> {
        self.next_piece(now, |sender, expected| sender.chunk_parts(piece, expected))
    }

    fn next_piece<T>(
        &mut self,
        now: Timestamp,
        make: impl FnOnce(&mut Sender, Option<&Digest>) -> Result<(T, Option<Digest>), CallError>,
    ) -> Result<T, CallError> {
        if !matches!(self.state.phase, Phase::Streaming { .. }) {
            return Err(match self.state.phase {
                Phase::Ended => CallError::Ended,
                _ => CallError::OutOfTurn { needs: self.need() },
            });
        }
        let (frame, digest) = match make(&mut self.sender, Some(&self.archive.digest)) {
            Ok(x) => x,
            Err(CallError::ArchiveChanged) => {
                self.state.phase = Phase::Ready;
                return Err(CallError::ArchiveChanged);
            }
            Err(e) => return Err(e),
        };
        self.state.phase = if digest.is_some() {
            Phase::Awaiting {
                deadline: now + self.config.reply_timeout,
            }
        } else {
            Phase::Streaming {
                deadline: now + self.config.frame_timeout,
            }
        };
        Ok(frame)
    }

    /// The reply (NXRR), checked (F-3, RS-3) and acted on (RS-4). It may come before the last
    /// chunk (a stream failure): the attempt is over and nothing more is sent.
    pub fn on_reply(&mut self, now: Timestamp, frame: Bytes) -> RestoreStep {
        let _ = now;
        if !matches!(
            self.state.phase,
            Phase::Streaming { .. } | Phase::Awaiting { .. }
        ) {
            return RestoreStep::Continue;
        }
        match self.read_reply(frame) {
            Ok(step) => step,
            Err(v) => Self::interrupted(Interruption::Violation(v), self.state.interrupt()),
        }
    }

    fn read_reply(&mut self, frame: Bytes) -> Result<RestoreStep, CallViolation> {
        let frame = RestoreReplyFrame::check(frame)?;
        let reply = frame.view();
        if let Some(id) = reply.request_id() {
            if id != self.request_id {
                return Err(CallViolation::RequestId {
                    sent: self.request_id,
                    found: Some(id),
                });
            }
        }
        if let Some(failed) = reply.disposition_as_restore_upload_failed() {
            let failure = failed
                .failure()
                .unwrap_or(RestoreUploadFailure::InvalidStream);
            let may_repeat = matches!(
                failure,
                RestoreUploadFailure::QuotaExceeded | RestoreUploadFailure::StagingFailed
            );
            // The refusal is of this stream; an earlier attempt may have run the restore.
            return Ok(self.end(RestoreOutcome::Refused {
                failure,
                may_repeat,
                uncertain: self.state.ran,
                message: failed.message().to_string(),
            }));
        }
        let Some(outcome) = reply.disposition_as_command_outcome() else {
            return Err(CallViolation::Disposition("an undeclared disposition"));
        };
        if outcome.execution_reference() != self.reference.as_str() {
            return Err(CallViolation::Identity {
                sent: self.reference.to_string(),
                found: outcome.execution_reference().to_string(),
            });
        }
        let message = outcome.message().to_string();
        let summary = outcome.restore().map(|r| RestoreSummary::of(&r));
        let origin = outcome.origin().unwrap_or(OutcomeOrigin::Executed);
        Ok(match outcome.disposition_type() {
            CommandDisposition::CommandCompleted => self.end(RestoreOutcome::Completed {
                summary,
                origin,
                message,
            }),
            CommandDisposition::RequestFailed => {
                self.end(RestoreOutcome::Failed { summary, message })
            }
            CommandDisposition::LeaderRedirect => {
                self.state.phase = Phase::Ready;
                RestoreStep::Redirect(
                    outcome
                        .disposition_as_leader_redirect()
                        .and_then(|r| Leader::of(&r)),
                )
            }
            CommandDisposition::OutcomeUnknown => {
                // The attempt may have run: it was admitted and its outcome is not known.
                self.state.ran = true;
                self.state.phase = Phase::Ready;
                RestoreStep::OutcomeUnknown
            }
            CommandDisposition::ExecutionReferenceConflict => {
                let uncertain = self.state.ran;
                self.end(RestoreOutcome::ReferenceConflict { uncertain, message })
            }
            CommandDisposition::ExecutionReferenceExpired => {
                self.end(RestoreOutcome::ReferenceExpired { message })
            }
            other => {
                return Err(CallViolation::Disposition(
                    other.variant_name().unwrap_or("an undeclared disposition"),
                ))
            }
        })
    }

    fn end(&mut self, outcome: RestoreOutcome) -> RestoreStep {
        self.state.end();
        RestoreStep::Ended(outcome)
    }

    fn interrupted(cause: Interruption, uncertain: bool) -> RestoreStep {
        RestoreStep::Interrupted { cause, uncertain }
    }

    /// The stream failed or ended before the reply, a WebSocket close 1001 included (RS-5,
    /// T-3a).
    pub fn on_closed(&mut self, now: Timestamp) -> RestoreStep {
        let _ = now;
        match self.state.closed() {
            Some(uncertain) => Self::interrupted(Interruption::Transport, uncertain),
            None => RestoreStep::Continue,
        }
    }

    /// When [`RestoreCall::handle_timeout`] next has something to do: the wait for the next
    /// piece or the reply, never a command's deadline (RS-5).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.state.deadline()
    }

    /// Time passed: an overdue frame or reply ends the attempt as uncertain (RS-5).
    pub fn handle_timeout(&mut self, now: Timestamp) -> RestoreStep {
        match self.state.overdue(now) {
            Some(uncertain) => Self::interrupted(Interruption::Stalled, uncertain),
            None => RestoreStep::Continue,
        }
    }

    /// Whether some attempt may have run without its outcome being known.
    pub fn is_uncertain(&self) -> bool {
        self.state.is_uncertain()
    }

    /// Gives the restore up without its outcome; the reference is kept in the outcome.
    pub fn abandon(&mut self) -> RestoreOutcome {
        let uncertain = self.state.abandon();
        RestoreOutcome::Abandoned {
            reference: self.reference.clone(),
            uncertain,
        }
    }
}

/// The statement as the start carries it: exactly one RESTORE statement, trimmed, without a
/// closing `;` (RS-1).
pub(crate) fn canonical(statement: &str) -> Result<String, CallError> {
    match route(statement, false) {
        Ok(Route::Restore(s)) => Ok(s.trim().to_string()),
        _ => Err(CallError::NotARestore),
    }
}
