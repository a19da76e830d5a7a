//! The separate calls on the console (T-3a): [`Transfers::backup`] and
//! [`Transfers::download`] over `/console/backups/download`, [`Transfers::restore`] over
//! `/console/backups/restore`.
//!
//! Each attempt is a WebSocket connection of its own, carrying binary messages that are exactly
//! the frames of the engine's call machines ([`BackupDownload`], [`RestoreCall`]). The machine
//! decides; this module only moves bytes and keeps time. Every wait (the connection, each
//! write, each read) ends at a deadline: the connection deadline of the configuration while
//! connecting, then the machine's own [`BackupDownload::poll_timeout`] or
//! [`RestoreCall::poll_timeout`], read again after every input, never a command's deadline.
//!
//! A download is written through [`ArchiveWriter`]: nothing is under the name asked for until
//! the machine verified every byte. A restore's archive is read from its file in the
//! pieces the machine asks for, never whole; its connection stays open after the last chunk
//! until the reply. A close before the answer with 1003, 1007, 1008 or 1009 says the server
//! refused a frame of ours: the call ends and nothing is sent again (T-3, T-6). A 401 refusing
//! the credentials ends the call too, never retried with them (T-5). Any other end before the
//! answer (1001, a 503, a cut connection, a wait that passed) is a transport failure: the
//! attempt is repeated whole, under the same identity, at most [`ATTEMPTS`] times, after a
//! pause that doubles with each failure. A redirect naming a leader is followed at once; one
//! naming none waits the same growing pause (A-5, RS-4). A client with an https seed never
//! uses an http seed and never follows a redirect to an http console: such a redirect is
//! taken as one naming no leader (T-2).
//!
//! Each call has a `_with_progress` twin ([`Transfers::backup_with_progress`],
//! [`Transfers::download_with_progress`], [`Transfers::restore_with_progress`]) that hands an
//! observer the call's [`Progress`] when each attempt starts and each time it has moved more of
//! the archive: counters, never the data. A restart shows as the next attempt, from nothing.
//! [`crate::ProgressLine`] shows it to a person.

use crate::config::Config;
use crate::net::{self, Dialer, Paced};
use crate::session::{handshake, End};
use crate::{ConfigError, WsAuth};
use nervix_driver_support::call_end::CallEnd;
use nervix_driver_support::session::CLOSE_WAIT;
use nervix_driver_support::transfer::{
    download_end, no_progress, take_download_step, CallPlan, CallSetup, Progress, ProgressReport,
    TransferFailure, Turn,
};
use nervix_driver_support::{ArchiveSource, ArchiveWriter};
use nervix_protocol::calls::{
    BackupDownload, DownloadStep, Interruption, Need, RestoreCall, RestoreOutcome, RestoreStep,
    TransferConfig,
};
use nervix_protocol::client::{CommandReport, LeaderUri};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::time::Timestamp;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tungstenite::{Error as WsError, Message, WebSocket};

/// The console's backup download (T-3a).
pub const DOWNLOAD_WS_PATH: &str = "/console/backups/download";
/// The console's restore (T-3a).
pub const RESTORE_WS_PATH: &str = "/console/backups/restore";

pub use nervix_driver_support::transfer::ATTEMPTS;
/// The shortest socket timeout set (a zero timeout means none to the socket).
const TICK: Duration = Duration::from_millis(1);

nervix_driver_support::transfer_error! {
    /// Why a separate call gave no result.
    pub enum TransferError {
        /// The client's journal refused the call (feature `journal`): its record could not be
        /// written (the journal is full, broken, or its client closed), or a repeat's archive
        /// changed since it was journaled, or the reference has no live record. Nothing was
        /// sent.
        #[cfg(feature = "journal")]
        #[error("journal: {0}")]
        Journal(nervix_driver_support::transfer_journal::TransferJournalError),
    }
    frame_refused = "the server refused a frame of the call (close code {code})";
    gave_up(attempts, last, _unreached: String) => {
        Self::GaveUp { attempts, last }
    }
    fields {}
}

/// Where and how the separate calls are made: the configuration's seeds (https ones only when
/// any is https, T-2), its credentials and how they are presented, its TLS roots, and its
/// connection and write deadlines.
pub struct Transfers {
    setup: CallSetup,
    auth: WsAuth,
    dialer: Dialer,
    /// The journal restores keep their records in (feature `journal`).
    #[cfg(feature = "journal")]
    journal: Option<nervix_driver_support::transfer_journal::TransferJournalHandle>,
    /// The configuration keeps a journal: a restore without one given
    /// ([`Transfers::journaled`]) is refused instead of going out unjournaled.
    #[cfg(feature = "journal")]
    journal_configured: bool,
}

#[cfg(feature = "journal")]
impl From<nervix_driver_support::transfer_journal::TransferJournalError> for TransferError {
    fn from(e: nervix_driver_support::transfer_journal::TransferJournalError) -> Self {
        Self::Journal(e)
    }
}

/// What one read from the connection gave.
enum Read {
    Frame(bytes::Bytes),
    /// The connection closed (with its close code, if it gave one) or failed.
    Closed(Option<u16>),
    /// The wait passed.
    Late,
}

impl Transfers {
    /// The calls of clients configured by `config`.
    pub fn new(config: &Config) -> Result<Self, TransferError> {
        let setup = config.call_setup()?.ok_or(ConfigError::NoSeed)?;
        Ok(Self {
            setup,
            auth: config.auth,
            dialer: net::dialer(config)?,
            #[cfg(feature = "journal")]
            journal: None,
            #[cfg(feature = "journal")]
            journal_configured: config.journal.is_some(),
        })
    }

    #[cfg(feature = "journal")]
    nervix_driver_support::transfers_journaled!(
        crate::Client,
        "These calls keep their restores in `client`'s journal (feature `journal`), when it keeps \
         one: each is journaled before its first byte is sent (a journal that refuses the record \
         refuses the call, [`TransferError::Journal`], and nothing is sent), and its record ends \
         at its outcome. One that ends uncertain keeps its record while its reference is inside \
         the retry validity (E-4): the next client on the slot lists it in its recovery, and \
         [`Transfers::recover_restore`] sends the whole archive again under the same reference."
    );

    /// Repeats the journaled restore `record` (a [`crate::JournaledTransfer::Repeatable`] of
    /// the client's recovery, or a restore of this process that ended uncertain) under its
    /// journal record: the whole archive at its path again, under the same reference and
    /// statement (RS-5); its record ends at the outcome. Refused with nothing sent
    /// ([`TransferError::Journal`]) when the archive's size or digest changed since it was
    /// journaled (RS-2), when the record is no restore, not live (never journaled by this
    /// client's slot, or ended) or past its retry validity (E-4, its record then ends), or
    /// when these calls keep no journal.
    #[cfg(feature = "journal")]
    pub fn recover_restore(
        &self,
        record: &crate::TransferRecord,
    ) -> Result<RestoreOutcome, TransferError> {
        let mut repeat = nervix_driver_support::transfer_journal::restore_repeat::<TransferError>(
            self.journal.as_ref(),
            record,
        )?;
        let mut progress = no_progress;
        let mut report = ProgressReport::new(&mut progress as &mut dyn FnMut(Progress));
        let r = self.restore_attempts(&mut repeat.call, &mut repeat.source, &mut report);
        repeat.end(r)
    }

    /// Opens the attempt's connection; `Err` when the call must end at once (a 401, T-5),
    /// `Ok(None)` when the attempt failed as a transport does (a 503 among them), and then
    /// `unreached` says why, when the connection could not be opened (a failed lookup with
    /// the resolver's own error, T-2).
    fn open(
        &self,
        endpoint: &Endpoint,
        path: &str,
        unreached: &mut Option<String>,
    ) -> Result<Option<WebSocket<Paced>>, TransferError> {
        let deadline = Instant::now() + self.setup.connect_timeout;
        match handshake(
            endpoint,
            path,
            self.auth,
            &self.setup.credentials,
            Some(&self.dialer),
            deadline,
        ) {
            Ok(ws) => Ok(Some(ws)),
            Err(End::Unauthenticated) => Err(TransferError::Unauthenticated),
            Err(End::Transport(why)) => {
                *unreached = Some(why);
                Ok(None)
            }
            Err(_) => Ok(None),
        }
    }

    /// The next binary message by `wait` (a machine's deadline).
    fn read(&self, ws: &mut WebSocket<Paced>, wait: Option<Timestamp>) -> Read {
        let deadline = self.setup.clock.deadline(wait);
        loop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Read::Late;
            };
            if left.is_zero() {
                return Read::Late;
            }
            // The read as a whole, not each system call under it: a server trickling a frame
            // a byte at a time cannot hold it past the wait (T-8).
            ws.get_mut().until(Instant::now() + left.max(TICK));
            match ws.read() {
                Ok(Message::Binary(b)) => return Read::Frame(b),
                // Any close before the answer, 1001 among them, is a transport failure (T-3a).
                Ok(Message::Close(f)) => return Read::Closed(f.map(|f| u16::from(f.code))),
                Ok(Message::Text(_)) => return Read::Closed(None),
                Ok(_) => {}
                Err(WsError::Io(e)) if timed_out(&e) => {}
                Err(_) => return Read::Closed(None),
            }
        }
    }

    /// After a failed write: `Err` when the server had closed the connection with a code that
    /// refuses a frame of ours (T-3, T-6), read within [`CLOSE_WAIT`], so that a refusal racing
    /// our writes is never taken for a transport failure and the frame sent again.
    fn why_write_failed(&self, ws: &mut WebSocket<Paced>) -> Result<(), TransferError> {
        let wait = self.setup.now() + CLOSE_WAIT;
        match self.read(ws, Some(wait)) {
            Read::Closed(code) => refused(code),
            _ => Ok(()),
        }
    }

    /// Writes `frame` by `wait` (a machine's deadline) and the write deadline; false when the
    /// connection failed or the wait passed.
    fn write(
        &self,
        ws: &mut WebSocket<Paced>,
        frame: bytes::Bytes,
        wait: Option<Timestamp>,
    ) -> bool {
        let deadline = (self.setup.clock).write_deadline(wait, self.setup.write_timeout);
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return false;
        };
        // The write as a whole: a peer reading a trickle cannot stretch it (T-8).
        ws.get_mut().until(Instant::now() + left.max(TICK));
        ws.send(Message::Binary(frame)).is_ok()
    }

    /// Downloads the archive of the completed BACKUP `report` to `target`: written to a
    /// temporary file beside it and renamed into place only once the machine verified every
    /// byte. Returns the archive's path.
    pub fn backup(&self, report: &CommandReport, target: &Path) -> Result<PathBuf, TransferError> {
        self.backup_with_progress(report, target, no_progress)
    }

    /// [`Transfers::backup`], telling `progress` how far the download has come: when each
    /// attempt starts and each time it has written more (see [`ProgressReport`]).
    pub fn backup_with_progress(
        &self,
        report: &CommandReport,
        target: &Path,
        progress: impl FnMut(Progress),
    ) -> Result<PathBuf, TransferError> {
        let mut call = BackupDownload::from_report(report, TransferConfig::download())?;
        self.download_with_progress(&mut call, target, progress)
    }

    /// Runs `call` until its archive is verified and in place at `target`, each attempt on a
    /// console connection of its own and from the first byte.
    pub fn download(
        &self,
        call: &mut BackupDownload,
        target: &Path,
    ) -> Result<PathBuf, TransferError> {
        self.download_with_progress(call, target, no_progress)
    }

    /// [`Transfers::download`], telling `progress` when each attempt starts (a restart shows as
    /// a higher attempt, from nothing) and each time it has written more of the archive.
    pub fn download_with_progress(
        &self,
        call: &mut BackupDownload,
        target: &Path,
        mut progress: impl FnMut(Progress),
    ) -> Result<PathBuf, TransferError> {
        let mut report = ProgressReport::new(&mut progress as &mut dyn FnMut(Progress));
        let mut writer = ArchiveWriter::create(target)?;
        // A redirect leads to the leader's console (T-3a).
        let mut plan: CallPlan<TransferError> = self.setup.plan(LeaderUri::WebConsole, "download");
        loop {
            match plan.next(call.attempts())? {
                Turn::Pause(pause) => std::thread::sleep(pause),
                Turn::Attempt(to) => {
                    writer.restart()?;
                    let step = match self.open(&to, DOWNLOAD_WS_PATH, plan.unreached())? {
                        Some(ws) => self.download_over(ws, call, &mut writer, &mut report)?,
                        None => DownloadStep::Interrupted {
                            cause: Interruption::Transport,
                            retained: false,
                        },
                    };
                    if let Some(end) = plan.ended(step) {
                        return download_end(writer, end);
                    }
                }
            }
        }
    }

    /// One download attempt over its console connection `ws`.
    fn download_over(
        &self,
        mut ws: WebSocket<Paced>,
        call: &mut BackupDownload,
        writer: &mut ArchiveWriter,
        report: &mut Report<'_>,
    ) -> Result<DownloadStep, TransferError> {
        let request = call.start(self.setup.now())?;
        report.see(call.progress());
        if !self.write(&mut ws, request, call.poll_timeout()) {
            let step = download_lost(call, self.setup.now());
            self.why_write_failed(&mut ws)?;
            return Ok(step);
        }
        loop {
            let step = match self.read(&mut ws, call.poll_timeout()) {
                Read::Frame(f) => call.on_frame(self.setup.now(), f),
                Read::Closed(code) => {
                    let step = download_lost(call, self.setup.now());
                    refused(code)?;
                    step
                }
                Read::Late => call.handle_timeout(self.setup.now()),
            };
            if let Some(step) = take_download_step(call, step, writer, report)? {
                close(&mut ws);
                return Ok(step);
            }
        }
    }

    /// Restores the archive in the file at `source` as `call` (RS-1 to RS-5): every attempt
    /// streams the whole file under the call's reference on a console connection of its own.
    /// A file that does not hold exactly the declared archive size is refused
    /// ([`CallError::ArchiveSize`](nervix_protocol::calls::CallError::ArchiveSize)) with nothing
    /// sent.
    pub fn restore(
        &self,
        call: &mut RestoreCall,
        source: &Path,
    ) -> Result<RestoreOutcome, TransferError> {
        self.restore_with_progress(call, source, no_progress)
    }

    /// [`Transfers::restore`], telling `progress` when each attempt starts (a restart shows as
    /// a higher attempt, from nothing) and each time it has written more of the archive.
    pub fn restore_with_progress(
        &self,
        call: &mut RestoreCall,
        source: &Path,
        mut progress: impl FnMut(Progress),
    ) -> Result<RestoreOutcome, TransferError> {
        let mut report = ProgressReport::new(&mut progress as &mut dyn FnMut(Progress));
        let path = source;
        let mut source = ArchiveSource::open(source)?;
        // RS-2: the file is the declared archive, whole, or nothing is sent.
        source.check_size::<TransferError>(call.archive().total_bytes)?;
        #[cfg(feature = "journal")]
        self.unjournaled_refused()?;
        #[cfg(feature = "journal")]
        if let Some(journal) = &self.journal {
            let journaled = journal.begin_restore(call, path)?;
            let r = self.restore_attempts(call, &mut source, &mut report);
            journal.end(journaled, r.is_err() && call.is_uncertain());
            return r;
        }
        let _ = path;
        self.restore_attempts(call, &mut source, &mut report)
    }

    /// Every attempt of a restore, to its end.
    fn restore_attempts(
        &self,
        call: &mut RestoreCall,
        source: &mut ArchiveSource<File>,
        report: &mut Report<'_>,
    ) -> Result<RestoreOutcome, TransferError> {
        // A redirect leads to the leader's console (T-3a).
        let mut plan: CallPlan<TransferError> = self.setup.plan(LeaderUri::WebConsole, "restore");
        loop {
            match plan.next(call.attempts())? {
                Turn::Pause(pause) => std::thread::sleep(pause),
                Turn::Attempt(to) => {
                    let step = match self.open(&to, RESTORE_WS_PATH, plan.unreached())? {
                        Some(ws) => self.restore_over(ws, call, source, report)?,
                        None => RestoreStep::Interrupted {
                            cause: Interruption::Transport,
                            uncertain: call.is_uncertain(),
                        },
                    };
                    if let Some(outcome) = plan.ended(step) {
                        return Ok(outcome);
                    }
                }
            }
        }
    }

    /// One restore attempt: the start, every chunk, and the connection kept open after the
    /// last until the reply (T-3a).
    fn restore_over(
        &self,
        mut ws: WebSocket<Paced>,
        call: &mut RestoreCall,
        source: &mut ArchiveSource<File>,
        report: &mut Report<'_>,
    ) -> Result<RestoreStep, TransferError> {
        let start = call.start(self.setup.now())?;
        report.see(call.progress());
        if !self.write(&mut ws, start, call.poll_timeout()) {
            let step = restore_lost(call, self.setup.now());
            self.why_write_failed(&mut ws)?;
            return Ok(step);
        }
        while let Need::Piece { offset, len } = call.need() {
            let piece = source.piece(offset, len)?;
            let frame = call.chunk(self.setup.now(), piece)?;
            if !self.write(&mut ws, frame, call.poll_timeout()) {
                // A write still blocked at the machine's deadline is a stalled attempt.
                let step = match call.handle_timeout(self.setup.now()) {
                    RestoreStep::Continue => restore_lost(call, self.setup.now()),
                    step => step,
                };
                self.why_write_failed(&mut ws)?;
                return Ok(step);
            }
            report.see(call.progress());
        }
        let step = loop {
            let step = match self.read(&mut ws, call.poll_timeout()) {
                Read::Frame(reply) => call.on_reply(self.setup.now(), reply),
                Read::Closed(code) => {
                    let step = restore_lost(call, self.setup.now());
                    refused(code)?;
                    step
                }
                Read::Late => call.handle_timeout(self.setup.now()),
            };
            if step != RestoreStep::Continue {
                break step;
            }
        };
        close(&mut ws);
        Ok(step)
    }
}

/// How a call's progress is told to the application's observer.
type Report<'a> = ProgressReport<&'a mut dyn FnMut(Progress)>;

/// `Err` when a close with `code` before the answer refused a frame of ours (T-3, T-6).
fn refused(code: Option<u16>) -> Result<(), TransferError> {
    match code.map(CallEnd::of_close_code) {
        Some(end @ CallEnd::FrameRefused(_)) => TransferError::ended(end),
        _ => Ok(()),
    }
}

/// Closes a connection whose call has its answer, the write waiting at most [`CLOSE_WAIT`]
/// (T-8).
fn close(ws: &mut WebSocket<Paced>) {
    ws.get_mut().until(Instant::now() + CLOSE_WAIT);
    let _ = ws.close(None).and_then(|()| ws.flush());
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// The attempt's connection failed: the machine's end of it, and an interruption even when the
/// machine had nothing to say, so no attempt waits on a dead connection.
fn download_lost(call: &mut BackupDownload, now: Timestamp) -> DownloadStep {
    match call.on_closed(now) {
        DownloadStep::Continue => DownloadStep::Interrupted {
            cause: Interruption::Transport,
            retained: false,
        },
        step => step,
    }
}

/// As [`download_lost`], for a restore.
fn restore_lost(call: &mut RestoreCall, now: Timestamp) -> RestoreStep {
    match call.on_closed(now) {
        RestoreStep::Continue => RestoreStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: call.is_uncertain(),
        },
        step => step,
    }
}
