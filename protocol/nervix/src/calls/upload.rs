//! A resource upload (U-1 to U-5): one archive per UploadResource call, under one upload
//! identity kept with the archive's exact bytes until the outcome is known.

use super::attempt::{AttemptState, Phase};
use super::sender::{ChunkFrame, ChunkRoot, Sender};
use super::{CallError, CallViolation, Digest, Interruption, Leader, Need, TransferConfig};
use crate::command::ExecutionReference;
use crate::encode::Encoder;
use crate::frame::{UploadMessageRoot, UploadReplyFrame};
use crate::rng::Rng;
use crate::schema::*;
use crate::time::{Timestamp, UnixMillis};
use bytes::Bytes;

/// What one logical upload is: where it goes and under which identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadSpec {
    /// The domain that declares the resource.
    pub domain: String,
    /// The declared resource.
    pub resource: String,
    /// The upload identity every attempt carries (U-2).
    pub identity: String,
}

impl UploadSpec {
    /// A spec with a new UUIDv7 identity taken from `wall` and `rng` (U-2).
    pub fn new(domain: &str, resource: &str, wall: UnixMillis, rng: &mut Rng) -> Self {
        Self {
            domain: domain.to_string(),
            resource: resource.to_string(),
            identity: ExecutionReference::new_v7(wall, rng).to_string(),
        }
    }
}

/// How an upload ended (U-4). An upload whose attempts ended without a reply has no outcome
/// yet: it is repeated whole under its identity (U-5), or given up with
/// [`UploadCall::abandon`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UploadOutcome {
    /// The archive is installed as `version`.
    Installed {
        /// The installed version.
        version: u64,
        /// Executed now or recovered from an earlier attempt.
        origin: OutcomeOrigin,
        /// The server's message.
        message: String,
    },
    /// InvalidStream, ResourceNotDeclared, SizeMismatch or QuotaExceeded: the attempt's stream
    /// admitted nothing, and the same stream is never sent again unchanged. The refusal speaks
    /// of that stream only: `uncertain` when an earlier attempt carried the whole archive
    /// without learning its outcome, so the upload may have been installed by it all the same
    /// (U-5); repeat under the identity to learn it, once the stream may go again.
    Refused {
        /// Why.
        failure: UploadFailure,
        /// Whether an earlier attempt may have installed the archive.
        uncertain: bool,
        /// The server's message.
        message: String,
    },
    /// InstallationFailed: the upload failed, its identity is bound to another archive, or its
    /// completion could not be confirmed. Repeating the same identity and archive returns this
    /// same outcome.
    InstallationFailed {
        /// The version assigned before the failure, if any.
        assigned_version: Option<u64>,
        /// The server's message.
        message: String,
    },
    /// Given up without an outcome. `uncertain` when some attempt carried the whole archive,
    /// so it may be installed: repeat it under `identity` to learn. Otherwise no attempt
    /// carried it whole and nothing was installed.
    Abandoned {
        /// The identity to repeat under.
        identity: String,
        /// Whether it may have been installed.
        uncertain: bool,
    },
}

/// What an input did to an upload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UploadStep {
    /// Nothing yet.
    Continue,
    /// The upload ended.
    Ended(UploadOutcome),
    /// The node does not lead: stream the archive again, same identity, to the leader, or back
    /// off when it names none (U-4).
    Redirect(Option<Leader>),
    /// This attempt ended without a reply: the outcome is uncertain when the whole archive was
    /// sent (`uncertain`). Send the whole archive again under the same identity (U-5).
    Interrupted {
        /// Why.
        cause: Interruption,
        /// Whether some attempt carried the whole archive.
        uncertain: bool,
    },
}

/// One logical resource upload (U-1 to U-5).
#[derive(Debug)]
pub struct UploadCall {
    spec: UploadSpec,
    total: u64,
    config: TransferConfig,
    sender: Sender,
    state: AttemptState,
    request_id: u64,
    /// The attempt's overall deadline (U-5).
    attempt_deadline: Timestamp,
    /// The digest the first complete attempt streamed; every later attempt must match (U-2).
    digest: Option<Digest>,
    attempts: u32,
    encoder: Encoder,
}

impl UploadCall {
    /// An upload of an archive of `total_bytes` (U-1: never zero) under `spec`.
    pub fn new(
        spec: UploadSpec,
        total_bytes: u64,
        config: TransferConfig,
    ) -> Result<Self, CallError> {
        ExecutionReference::parse(&spec.identity)?;
        if spec.domain.is_empty() {
            return Err(CallError::Empty("domain"));
        }
        if spec.resource.is_empty() {
            return Err(CallError::Empty("resource"));
        }
        let sender = Sender::new(ChunkRoot::Upload, total_bytes, config.chunk_size)?;
        let mut call = Self {
            spec,
            total: total_bytes,
            config,
            sender,
            state: AttemptState::new(),
            request_id: 0,
            attempt_deadline: Timestamp::ZERO,
            digest: None,
            attempts: 0,
            encoder: Encoder::new(),
        };
        // A start that can never be written is refused now, not on the first attempt.
        call.start_frame(1)?;
        Ok(call)
    }

    /// Declares the BLAKE3 `digest` of the archive's bytes, known before the first byte goes
    /// out (the journal computes it when it records the upload, U-2): every attempt, the
    /// first included, then withholds its last frame unless the bytes it streamed hash to it
    /// ([`CallError::ArchiveChanged`]), so what is sent is what was recorded. Refused with
    /// [`CallError::ArchiveChanged`] when a complete attempt already streamed other bytes.
    pub fn expect_digest(&mut self, digest: Digest) -> Result<(), CallError> {
        match self.digest {
            Some(d) if d != digest => Err(CallError::ArchiveChanged),
            _ => {
                self.digest = Some(digest);
                Ok(())
            }
        }
    }

    /// The upload's identity (U-2).
    pub fn identity(&self) -> &str {
        &self.spec.identity
    }

    /// The spec.
    pub fn spec(&self) -> &UploadSpec {
        &self.spec
    }

    /// The archive's size.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Attempts started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The attempt under way and the bytes it has moved of the archive's size.
    pub fn progress(&self) -> super::Progress {
        super::Progress::new(self.attempts, self.sender.sent(), self.total)
    }

    /// The request_id of the current (or last) attempt's start.
    pub fn request_id(&self) -> u64 {
        self.request_id
    }

    /// Bytes of the archive the current attempt has turned into frames.
    pub fn bytes_sent(&self) -> u64 {
        self.sender.sent()
    }

    /// What the call needs next.
    #[must_use]
    pub fn need(&self) -> Need {
        self.state.need(&self.sender)
    }

    fn start_frame(&mut self, request_id: u64) -> Result<Bytes, CallError> {
        let msg = UploadMessageT {
            part: UploadPartT::UploadStart(Box::new(UploadStartT {
                request_id,
                domain: self.spec.domain.clone(),
                resource: self.spec.resource.clone(),
                upload_identity: self.spec.identity.clone(),
                total_bytes: self.total,
            })),
        };
        Ok(self.encoder.encode::<UploadMessageRoot>(&msg)?)
    }

    /// Starts an attempt, the first or a repeat: the frame of its UploadStart, to be written as
    /// the first message of a new UploadResource stream. The archive follows from its first
    /// byte (U-5). `deadline` bounds the whole attempt.
    pub fn start(&mut self, now: Timestamp, deadline: Timestamp) -> Result<Bytes, CallError> {
        match self.state.phase {
            Phase::Ready => {}
            Phase::Ended => return Err(CallError::Ended),
            _ => return Err(CallError::OutOfTurn { needs: self.need() }),
        }
        self.attempts += 1;
        // Request identities of one call's attempts: 1, 2, 3, ... (never zero).
        self.request_id = u64::from(self.attempts);
        let frame = self.start_frame(self.request_id)?;
        self.sender.restart();
        self.attempt_deadline = deadline;
        self.state.phase = Phase::Streaming {
            deadline: self.frame_deadline(now),
        };
        Ok(frame)
    }

    fn frame_deadline(&self, now: Timestamp) -> Timestamp {
        (now + self.config.frame_timeout).min(self.attempt_deadline)
    }

    /// The chunk frame of the next `piece` of the archive ([`Need::Piece`]). After the piece
    /// that completes the archive the call waits for the reply ([`Need::Reply`]). When the
    /// archive's bytes are not those of an earlier complete attempt, no frame is made:
    /// [`CallError::ArchiveChanged`], and the attempt is over.
    pub fn chunk(&mut self, now: Timestamp, piece: &[u8]) -> Result<Bytes, CallError> {
        self.next_piece(now, |sender, expected| sender.chunk(piece, expected))
    }

    /// As [`UploadCall::chunk`], for a piece already in a [`Bytes`] (a buffer the archive was
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
        let (frame, digest) = match make(&mut self.sender, self.digest.as_ref()) {
            Ok(x) => x,
            Err(CallError::ArchiveChanged) => {
                self.state.phase = Phase::Ready;
                return Err(CallError::ArchiveChanged);
            }
            Err(e) => return Err(e),
        };
        if let Some(d) = digest {
            self.digest.get_or_insert(d);
            self.state.phase = Phase::Awaiting {
                deadline: (now + self.config.reply_timeout).min(self.attempt_deadline),
            };
        } else {
            self.state.phase = Phase::Streaming {
                deadline: self.frame_deadline(now),
            };
        }
        Ok(frame)
    }

    /// The frame that answered the stream (NXUR), checked (F-3, U-3) and acted on (U-4). It may
    /// come before the last chunk: then the attempt is over and nothing more is sent.
    pub fn on_reply(&mut self, now: Timestamp, frame: Bytes) -> UploadStep {
        let _ = now;
        if !matches!(
            self.state.phase,
            Phase::Streaming { .. } | Phase::Awaiting { .. }
        ) {
            return UploadStep::Continue;
        }
        match self.read_reply(frame) {
            Ok(step) => step,
            Err(v) => Self::interrupted(Interruption::Violation(v), self.state.interrupt()),
        }
    }

    fn read_reply(&mut self, frame: Bytes) -> Result<UploadStep, CallViolation> {
        let frame = UploadReplyFrame::check(frame)?;
        let reply = frame.view();
        if reply.request_id() != Some(self.request_id) {
            return Err(CallViolation::RequestId {
                sent: self.request_id,
                found: reply.request_id(),
            });
        }
        let message = reply.message().to_string();
        if let Some(ok) = reply.disposition_as_resource_installed() {
            if ok.upload_identity() != self.spec.identity {
                return Err(CallViolation::Identity {
                    sent: self.spec.identity.clone(),
                    found: ok.upload_identity().to_string(),
                });
            }
            let origin = ok.origin().unwrap_or(OutcomeOrigin::Executed);
            return Ok(self.end(UploadOutcome::Installed {
                version: ok.version(),
                origin,
                message,
            }));
        }
        if let Some(failed) = reply.disposition_as_upload_failed() {
            if let Some(found) = failed.upload_identity() {
                if found != self.spec.identity {
                    return Err(CallViolation::Identity {
                        sent: self.spec.identity.clone(),
                        found: found.to_string(),
                    });
                }
            }
            let failure = failed.failure().unwrap_or(UploadFailure::InvalidStream);
            let outcome = if failure == UploadFailure::InstallationFailed {
                UploadOutcome::InstallationFailed {
                    assigned_version: failed.assigned_version(),
                    message,
                }
            } else {
                // The refusal is of this stream; an earlier attempt that carried the whole
                // archive may have installed it all the same.
                UploadOutcome::Refused {
                    failure,
                    uncertain: self.state.ran,
                    message,
                }
            };
            return Ok(self.end(outcome));
        }
        let leader = reply
            .disposition_as_leader_redirect()
            .and_then(|r| Leader::of(&r));
        // A redirect answered the attempt; the next starts from the first byte again.
        self.state.phase = Phase::Ready;
        Ok(UploadStep::Redirect(leader))
    }

    fn end(&mut self, outcome: UploadOutcome) -> UploadStep {
        self.state.end();
        UploadStep::Ended(outcome)
    }

    fn interrupted(cause: Interruption, uncertain: bool) -> UploadStep {
        UploadStep::Interrupted { cause, uncertain }
    }

    /// The stream failed or ended before the reply (U-5).
    pub fn on_closed(&mut self, now: Timestamp) -> UploadStep {
        let _ = now;
        match self.state.closed() {
            Some(uncertain) => Self::interrupted(Interruption::Transport, uncertain),
            None => UploadStep::Continue,
        }
    }

    /// When [`UploadCall::handle_timeout`] next has something to do.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.state.deadline()
    }

    /// Time passed: an attempt whose next piece or reply is overdue, or whose deadline passed,
    /// is over (U-5). The driver ends its stream without a half-close.
    pub fn handle_timeout(&mut self, now: Timestamp) -> UploadStep {
        match self.state.overdue(now) {
            Some(uncertain) => Self::interrupted(Interruption::Stalled, uncertain),
            None => UploadStep::Continue,
        }
    }

    /// Whether some attempt carried the whole archive without learning its outcome.
    pub fn is_uncertain(&self) -> bool {
        self.state.is_uncertain()
    }

    /// Gives the upload up without its outcome. An open attempt ends (the driver drops its
    /// stream); the identity is kept in the outcome for a later repeat.
    pub fn abandon(&mut self) -> UploadOutcome {
        let uncertain = self.state.abandon();
        UploadOutcome::Abandoned {
            identity: self.spec.identity.clone(),
            uncertain,
        }
    }
}
