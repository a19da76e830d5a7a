//! The download of a backup's archive: one DownloadBackup call per
//! attempt, frames in the strict order of A-2, size and BLAKE3 digest checked as the bytes
//! pass, and the archive accepted only once BackupArchiveComplete came and both match the
//! summary. Writing the bytes where the user asked, and only once verified, is the
//! driver's.

use super::{
    ArchiveInfo, CallError, CallViolation, Digest, Interruption, Leader, Need, TransferConfig,
};
use crate::client::CommandReport;
use crate::command::ExecutionReference;
use crate::encode::encode;
use crate::frame::{BackupDownloadFrame, BackupDownloadRequestRoot};
use crate::schema::*;
use crate::time::Timestamp;
use bytes::Bytes;

/// How a download ended for good.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DownloadEnd {
    /// Every byte arrived and matches the summary's size and digest: the archive may be put
    /// where the user asked.
    Verified(ArchiveInfo),
    /// Expired, NotOwner, NotRetained or InvalidRequest as the whole answer: final for
    /// this archive. The backup itself completed; this is not its failure.
    Unavailable {
        /// Why.
        failure: BackupDownloadFailure,
        /// The server's message.
        message: String,
    },
}

/// What an input did to a download.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DownloadStep {
    /// Nothing to hand out.
    Continue,
    /// The archive starts: its size and digest equal the summary's. Bytes follow.
    Started,
    /// The next bytes of the archive, in order, not yet verified: keep them away from the
    /// name the user asked for until [`DownloadEnd::Verified`].
    Bytes(Bytes),
    /// The download ended.
    Ended(DownloadEnd),
    /// The node does not lead: download again from the leader, or back off when it names none.
    Redirect(Option<Leader>),
    /// This attempt ended without the verified archive: discard every byte it handed out. The
    /// archive may be downloaded again from its first byte; `retained` tells a
    /// ReadFailed, which the server says keeps the archive retained.
    Interrupted {
        /// Why.
        cause: Interruption,
        /// Whether the server said the archive stays retained (ReadFailed).
        retained: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Ready,
    /// The request is written; the first frame is awaited.
    Requested {
        deadline: Timestamp,
    },
    Receiving {
        deadline: Timestamp,
    },
    /// Verified; nothing more is read.
    Ended,
}

/// The download of one backup archive, kept with the backup's reference and summary.
#[derive(Debug)]
pub struct BackupDownload {
    reference: ExecutionReference,
    expected: ArchiveInfo,
    config: TransferConfig,
    phase: Phase,
    received: u64,
    hasher: blake3::Hasher,
    attempts: u32,
    verified: bool,
}

impl BackupDownload {
    /// The download of the archive BACKUP `reference` produced, whose summary says `expected`.
    pub fn new(
        reference: ExecutionReference,
        expected: ArchiveInfo,
        config: TransferConfig,
    ) -> Result<Self, CallError> {
        if expected.total_bytes == 0 {
            return Err(CallError::EmptyArchive);
        }
        Ok(Self {
            reference,
            expected,
            config,
            phase: Phase::Ready,
            received: 0,
            hasher: blake3::Hasher::new(),
            attempts: 0,
            verified: false,
        })
    }

    /// The download of the archive a completed BACKUP reported: only a CommandCompleted
    /// outcome that carries a backup summary has one.
    pub fn from_report(report: &CommandReport, config: TransferConfig) -> Result<Self, CallError> {
        let outcome = report.outcome();
        if outcome.disposition_as_command_completed().is_none() {
            return Err(CallError::NoArchive);
        }
        let summary = outcome.backup().ok_or(CallError::NoArchive)?;
        let mut digest: Digest = [0; 32];
        // A checked frame's fingerprint holds exactly 32 bytes.
        digest.copy_from_slice(summary.digest().bytes().bytes());
        Self::new(
            report.reference().clone(),
            ArchiveInfo {
                total_bytes: summary.total_bytes(),
                digest,
            },
            config,
        )
    }

    /// The backup's execution reference.
    pub fn reference(&self) -> &ExecutionReference {
        &self.reference
    }

    /// The size and digest the summary promised.
    pub fn expected(&self) -> ArchiveInfo {
        self.expected
    }

    /// Bytes of the current attempt handed out so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Attempts started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The attempt under way and the bytes it has moved of the archive's size.
    pub fn progress(&self) -> super::Progress {
        super::Progress::new(self.attempts, self.received, self.expected.total_bytes)
    }

    /// What the call needs next.
    #[must_use]
    pub fn need(&self) -> Need {
        match self.phase {
            Phase::Ready => Need::Start,
            Phase::Requested { .. } | Phase::Receiving { .. } => Need::Frame,
            Phase::Ended => Need::Nothing,
        }
    }

    /// Starts an attempt, always from the archive's first byte: the one
    /// BackupDownloadRequest frame of a new DownloadBackup stream.
    pub fn start(&mut self, now: Timestamp) -> Result<Bytes, CallError> {
        match self.phase {
            Phase::Ready => {}
            Phase::Ended => return Err(CallError::Ended),
            _ => return Err(CallError::OutOfTurn { needs: self.need() }),
        }
        let frame = encode::<BackupDownloadRequestRoot>(&BackupDownloadRequestT {
            execution_reference: self.reference.to_string(),
        })?;
        self.attempts += 1;
        self.received = 0;
        self.hasher.reset();
        self.phase = Phase::Requested {
            deadline: now + self.config.reply_timeout,
        };
        Ok(frame)
    }

    /// A frame of the download stream (NXBD).
    pub fn on_frame(&mut self, now: Timestamp, frame: Bytes) -> DownloadStep {
        if !matches!(
            self.phase,
            Phase::Requested { .. } | Phase::Receiving { .. }
        ) {
            // No attempt is open, or the verdict was given: the frame changes nothing.
            return DownloadStep::Continue;
        }
        match self.read(now, frame) {
            Ok(step) => step,
            Err(v) => self.interrupt(Interruption::Violation(v), false),
        }
    }

    fn read(&mut self, now: Timestamp, frame: Bytes) -> Result<DownloadStep, CallViolation> {
        let checked = BackupDownloadFrame::check(frame)?;
        let view = checked.view();
        let first = matches!(self.phase, Phase::Requested { .. });
        let name = view.part_type().variant_name().unwrap_or("an unknown part");
        let order = |expected| CallViolation::Order {
            found: name,
            expected,
        };
        if let Some(start) = view.part_as_backup_archive_start() {
            if !first {
                return Err(order("BackupArchiveChunk or BackupArchiveComplete"));
            }
            let digest = start.digest().bytes().bytes();
            if start.total_bytes() != self.expected.total_bytes || digest != self.expected.digest {
                return Err(CallViolation::NotTheSummary {
                    expected_bytes: self.expected.total_bytes,
                    found_bytes: start.total_bytes(),
                });
            }
            self.phase = Phase::Receiving {
                deadline: now + self.config.frame_timeout,
            };
            return Ok(DownloadStep::Started);
        }
        if let Some(chunk) = view.part_as_backup_archive_chunk() {
            if first {
                return Err(order("BackupArchiveStart or a failure"));
            }
            let bytes = chunk.bytes().bytes();
            let received = self.received + bytes.len() as u64;
            if received > self.expected.total_bytes {
                return Err(CallViolation::Overgrown {
                    received,
                    total: self.expected.total_bytes,
                });
            }
            self.hasher.update(bytes);
            self.received = received;
            // The bytes are handed out as a slice of the frame, never copied.
            let whole = checked.bytes();
            let at = bytes.as_ptr() as usize - whole.as_ptr() as usize;
            let out = whole.slice(at..at + bytes.len());
            self.phase = Phase::Receiving {
                deadline: now + self.config.frame_timeout,
            };
            return Ok(DownloadStep::Bytes(out));
        }
        if view.part_as_backup_archive_complete().is_some() {
            if first {
                return Err(order("BackupArchiveStart or a failure"));
            }
            let digest = *self.hasher.finalize().as_bytes();
            if self.received != self.expected.total_bytes || digest != self.expected.digest {
                return Err(CallViolation::NotVerified {
                    received: self.received,
                    total: self.expected.total_bytes,
                });
            }
            self.phase = Phase::Ended;
            self.verified = true;
            return Ok(DownloadStep::Ended(DownloadEnd::Verified(self.expected)));
        }
        if let Some(failed) = view.part_as_backup_download_failed() {
            // a failure is the whole answer or none of it. After the start it is out of
            // order, whatever it says: a violation that ends the attempt, after which the
            // archive may be downloaded again, never a final verdict on it.
            if !first {
                return Err(order("BackupArchiveChunk or BackupArchiveComplete"));
            }
            let failure = failed
                .failure()
                .unwrap_or(BackupDownloadFailure::InvalidRequest);
            if failure == BackupDownloadFailure::ReadFailed {
                return Ok(self.interrupt(Interruption::Transport, true));
            }
            self.phase = Phase::Ended;
            return Ok(DownloadStep::Ended(DownloadEnd::Unavailable {
                failure,
                message: failed.message().to_string(),
            }));
        }
        if let Some(redirect) = view.part_as_leader_redirect() {
            if !first {
                return Err(order("BackupArchiveChunk or BackupArchiveComplete"));
            }
            self.phase = Phase::Ready;
            return Ok(DownloadStep::Redirect(Leader::of(&redirect)));
        }
        // A checked frame carries one of the declared parts.
        Err(order("a declared part"))
    }

    fn interrupt(&mut self, cause: Interruption, retained: bool) -> DownloadStep {
        self.phase = Phase::Ready;
        self.received = 0;
        self.hasher.reset();
        DownloadStep::Interrupted { cause, retained }
    }

    /// The stream failed or ended. Before BackupArchiveComplete that is the end of the attempt
    /// after it, nothing.
    pub fn on_closed(&mut self, now: Timestamp) -> DownloadStep {
        let _ = now;
        match self.phase {
            Phase::Requested { .. } | Phase::Receiving { .. } => {
                self.interrupt(Interruption::Transport, false)
            }
            _ => DownloadStep::Continue,
        }
    }

    /// When [`BackupDownload::handle_timeout`] next has something to do: the wait for the next
    /// frame, never the command's deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match self.phase {
            Phase::Requested { deadline } | Phase::Receiving { deadline } => Some(deadline),
            _ => None,
        }
    }

    /// Time passed: a stalled attempt is over.
    pub fn handle_timeout(&mut self, now: Timestamp) -> DownloadStep {
        match self.poll_timeout() {
            Some(d) if d <= now => self.interrupt(Interruption::Stalled, false),
            _ => DownloadStep::Continue,
        }
    }

    /// Whether the archive was verified.
    pub fn is_verified(&self) -> bool {
        self.verified
    }
}
