//! What both drivers' separate calls share around their transports: the error a call ends
//! with ([`transfer_error!`](crate::transfer_error) writes each driver's `TransferError`
//! from one list), where the calls go and with what deadlines ([`CallSetup`]), and the retry
//! loop as a plan the driver asks what comes next ([`CallPlan`]): an attempt to make, a
//! pause to sleep or await first, or the call's end. The driver performs only the attempt's
//! I/O and the pause.

use crate::attempts::{AttemptStep, Attempts, CallClock, Next};
use crate::call_end::{CallEnd, CallRoute};
use crate::credentials::Credentials;
use crate::{ArchiveWriter, CommitError};
use nervix_protocol::calls::{BackupDownload, DownloadEnd, DownloadStep};
use nervix_protocol::client::{ClientConfig, LeaderUri};
use nervix_protocol::endpoint::Endpoint;
use std::fmt::Display;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[doc(no_inline)]
pub use nervix_protocol::calls::CallError;
#[doc(no_inline)]
pub use nervix_protocol::schema::BackupDownloadFailure;
/// Why TLS could not be set up.
#[doc(no_inline)]
pub use rustls::Error as TlsError;

/// Attempts of one call before it is given up.
pub const ATTEMPTS: u32 = 5;

/// What a driver's `TransferError` says for the ends every driver's calls share.
pub trait TransferFailure: From<std::io::Error> + From<CommitError> + Sized {
    /// Why an attempt could not connect, as the driver knows it.
    type Unreached: Display;
    /// The archive is not available any more.
    fn unavailable(failure: BackupDownloadFailure, message: String) -> Self;
    /// The credentials were refused (T-5).
    fn unauthenticated() -> Self;
    /// The server refused a frame of the call (T-6, T-3).
    fn frame_refused(code: u32) -> Self;
    /// Every attempt ended without an answer: `attempts` made, how the last ended, and why
    /// an attempt could not connect, if one could not.
    fn gave_up(attempts: u32, last: String, unreached: Option<Self::Unreached>) -> Self;

    /// What ends a call without its answer means: `Err` for the ends never repeated (T-5,
    /// T-6, T-3).
    fn ended(end: CallEnd) -> Result<(), Self> {
        match end {
            CallEnd::Unauthenticated => Err(Self::unauthenticated()),
            CallEnd::FrameRefused(code) => Err(Self::frame_refused(code)),
            CallEnd::Retry => Ok(()),
        }
    }
}

/// Writes a driver's `TransferError`: the variants every driver's calls end with, those the
/// invocation lists first, the message of `FrameRefused` and the fields `GaveUp` has besides
/// `attempts` and `last`; its [`TransferFailure`], given how `GaveUp` is made; and a TLS set-up
/// that failed as its `Tls`.
#[macro_export]
macro_rules! transfer_error {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($own:tt)*
        }
        frame_refused = $refused:tt;
        gave_up($attempts:ident, $last:ident, $unreached:ident: $why:ty) => { $($more:tt)* }
        fields { $($fields:tt)* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, thiserror::Error)]
        #[non_exhaustive]
        $vis enum $name {
            $($own)*
            /// The configuration cannot be used (credentials that cannot be presented, https
            /// seeds without roots, no seed).
            #[error(transparent)]
            Config(#[from] $crate::config::ConfigError),
            /// TLS could not be set up.
            #[error("TLS: {0}")]
            Tls(String),
            /// The machine refused what it was given (see
            /// [`CallError`](nervix_protocol::calls::CallError)).
            #[error(transparent)]
            Call(#[from] $crate::transfer::CallError),
            /// Reading the archive or writing the download failed.
            #[error("archive: {0}")]
            Io(#[from] ::std::io::Error),
            /// The download's archive could not be put in place.
            #[error(transparent)]
            Commit(#[from] $crate::CommitError),
            /// The archive is not available any more; the backup itself completed.
            #[error("the archive is not available: {failure:?}: {message}")]
            Unavailable {
                /// Why.
                failure: $crate::transfer::BackupDownloadFailure,
                /// The server's message.
                message: String,
            },
            /// The credentials were refused (`UNAUTHENTICATED`, or 401 on the console): the
            /// call was not tried again with them (T-5).
            #[error("the credentials were refused")]
            Unauthenticated,
            /// The server refused a frame of the call as oversized or malformed (gRPC
            /// `OUT_OF_RANGE` or `INTERNAL`, or a console close with 1003, 1007, 1008 or
            /// 1009): a defect of this client, and the frame was not sent again (T-6, T-3).
            /// An upload's or restore's machine says whether it may have taken effect.
            #[error($refused)]
            FrameRefused {
                /// The gRPC status or the close code.
                code: u32,
            },
            /// Every attempt ended without an answer; `last` says how the last one ended. An
            /// upload or restore may have taken effect when its machine says it is uncertain.
            #[error("no answer after {attempts} attempts: {last}")]
            GaveUp {
                /// Attempts made.
                attempts: u32,
                /// How the last ended.
                last: String,
                $($fields)*
            },
        }

        impl From<$crate::transfer::TlsError> for $name {
            fn from(e: $crate::transfer::TlsError) -> Self {
                Self::Tls(e.to_string())
            }
        }

        impl $crate::transfer::TransferFailure for $name {
            type Unreached = $why;
            fn unavailable(
                failure: $crate::transfer::BackupDownloadFailure,
                message: String,
            ) -> Self {
                Self::Unavailable { failure, message }
            }
            fn unauthenticated() -> Self {
                Self::Unauthenticated
            }
            fn frame_refused(code: u32) -> Self {
                Self::FrameRefused { code }
            }
            fn gave_up($attempts: u32, $last: String, $unreached: Option<$why>) -> Self {
                $($more)*
            }
        }
    };
}

/// Where a driver's separate calls go and with what deadlines: the configuration's seeds
/// (https ones only when any is https, T-2), its credentials, its connection and write
/// deadlines, and the clock the call machines' timestamps count on.
#[derive(Debug, Clone)]
pub struct CallSetup {
    /// The seeds, and where a redirect leads.
    pub route: CallRoute,
    /// The credentials every attempt presents.
    pub credentials: Credentials,
    /// How long opening an attempt's connection may take.
    pub connect_timeout: Duration,
    /// How long one write may wait (T-8).
    pub write_timeout: Duration,
    /// The machines' clock.
    pub clock: CallClock,
}

impl CallSetup {
    /// The setup of calls made with the engine configuration `client` and `credentials`;
    /// `None` when it names no seed.
    pub fn new(
        client: &ClientConfig,
        credentials: &Credentials,
        write_timeout: Duration,
    ) -> Option<Self> {
        Some(Self {
            route: CallRoute::new(&client.seeds)?,
            credentials: credentials.clone(),
            connect_timeout: client.connect_timeout,
            write_timeout,
            clock: CallClock::new(Instant::now()),
        })
    }

    /// The call machines' time now.
    pub fn now(&self) -> nervix_protocol::time::Timestamp {
        self.clock.now()
    }

    /// The plan of one `call` (`"upload"`, `"download"`, `"restore"`: it names the call's
    /// tracing span), [`ATTEMPTS`] attempts at most; a redirect leads to the leader's endpoint
    /// `leader_uri` names (its console for the WebSocket calls, T-3a).
    pub fn plan<E: TransferFailure>(
        &self,
        leader_uri: LeaderUri,
        call: &'static str,
    ) -> CallPlan<E> {
        CallPlan {
            attempts: Attempts::new(self.route.clone(), leader_uri, ATTEMPTS),
            unreached: None,
            pause: None,
            span: tracing::debug_span!("nervix.call", call),
        }
    }
}

/// What a driver does next for a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// Sleep (or await) this long, then ask again.
    Pause(Duration),
    /// Make an attempt to this endpoint, and hand its last step to [`CallPlan::ended`].
    Attempt(Endpoint),
}

/// The retry loop of one separate call, without its I/O: the driver asks [`CallPlan::next`]
/// what to do, makes the attempt it is told, and hands the attempt's last step to
/// [`CallPlan::ended`], which gives the call's answer once there is one. A call whose
/// attempts ran out ends with the driver's `GaveUp`, naming how the last ended, an http
/// redirect refused (T-2) and why an attempt could not connect.
#[derive(Debug)]
pub struct CallPlan<E: TransferFailure> {
    attempts: Attempts,
    unreached: Option<E::Unreached>,
    /// The pause owed before the next attempt.
    pause: Option<Duration>,
    /// The call's span: its attempts, pauses and end are recorded inside it.
    span: tracing::Span,
}

impl<E: TransferFailure> CallPlan<E> {
    /// What comes next: the pause owed after the last attempt, then the next attempt;
    /// `Err` once every attempt was made (`made` by the call's machine, as it counts them).
    pub fn next(&mut self, made: u32) -> Result<Turn, E> {
        let _in = self.span.enter();
        if let Some(p) = self.pause.take() {
            tracing::debug!(pause_ms = p.as_millis() as u64, "nervix call backs off");
            return Ok(Turn::Pause(p));
        }
        match self.attempts.next_endpoint() {
            Some(endpoint) => {
                tracing::debug!(attempt = made + 1, %endpoint, "nervix call attempt");
                Ok(Turn::Attempt(endpoint))
            }
            None => {
                let why = self.unreached.as_ref().map(|w| w as &dyn Display);
                let last = self.attempts.gave_up(why);
                tracing::warn!(attempts = made, last = %last, "nervix call gave up");
                Err(E::gave_up(made, last, self.unreached.take()))
            }
        }
    }

    /// Where an attempt records why it could not connect.
    pub fn unreached(&mut self) -> &mut Option<E::Unreached> {
        &mut self.unreached
    }

    /// The attempt ended with `step`: the call's answer, or `None` and the pause (if any)
    /// [`CallPlan::next`] gives before the next attempt.
    pub fn ended<S: AttemptStep>(&mut self, step: S) -> Option<S::Answer> {
        let _in = self.span.enter();
        match self.attempts.ended(step) {
            Next::Answer(answer) => {
                tracing::debug!("nervix call answered");
                Some(answer)
            }
            Next::Again(pause) => {
                tracing::debug!("nervix call attempt ended without its answer; trying again");
                self.pause = pause;
                None
            }
        }
    }
}

/// A download's answer: the archive put in place once verified, or the archive no
/// longer available.
pub fn download_end<E: TransferFailure>(
    writer: ArchiveWriter,
    end: DownloadEnd,
) -> Result<PathBuf, E> {
    match end {
        DownloadEnd::Unavailable { failure, message } => Err(E::unavailable(failure, message)),
        // Verified: the only other answer a download is given.
        end => Ok(writer.commit(&end)?),
    }
}

/// What a download attempt does with the step its machine gave, in every driver and over
/// every transport: the bytes of [`DownloadStep::Bytes`] are appended to `writer` and the
/// progress they make reported, a start or nothing new reads on (`Ok(None)`), and any other
/// step ends the attempt with it (`Ok(Some(step))`). A write that fails ends the call.
pub fn take_download_step<F: FnMut(Progress)>(
    call: &BackupDownload,
    step: DownloadStep,
    writer: &mut ArchiveWriter,
    report: &mut ProgressReport<F>,
) -> std::io::Result<Option<DownloadStep>> {
    match step {
        DownloadStep::Bytes(b) => {
            writer.write(&b)?;
            report.see(call.progress());
            Ok(None)
        }
        DownloadStep::Started | DownloadStep::Continue => Ok(None),
        step => Ok(Some(step)),
    }
}

#[doc(no_inline)]
pub use nervix_protocol::calls::Progress;

/// Hands a call's [`Progress`] to the application's observer as the driver moves the archive:
/// once when an attempt starts (with nothing done), then each time that attempt has moved more.
/// A report whose attempt is higher than the last one's is a restart. Nothing is repeated, no
/// attempt's count goes backwards, and the observer is handed counters only, never the data.
pub struct ProgressReport<F: FnMut(Progress)> {
    observer: F,
    last: Option<Progress>,
}

impl<F: FnMut(Progress)> ProgressReport<F> {
    /// Reports to `observer`.
    pub fn new(observer: F) -> Self {
        Self {
            observer,
            last: None,
        }
    }

    /// Tells the observer `now` when it starts an attempt or moves the current one on.
    pub fn see(&mut self, now: Progress) {
        if now.attempt == 0 {
            return;
        }
        let news = match self.last {
            None => true,
            Some(last) => {
                now.attempt > last.attempt || (now.attempt == last.attempt && now.done > last.done)
            }
        };
        if news {
            self.last = Some(now);
            (self.observer)(now);
        }
    }
}

/// An observer that wants nothing.
pub fn no_progress(_: Progress) {}

#[cfg(test)]
mod progress_tests {
    use super::*;

    fn seen(inputs: &[(u32, u64)]) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        let mut report = ProgressReport::new(|p: Progress| out.push((p.attempt, p.done)));
        for &(attempt, done) in inputs {
            report.see(Progress::new(attempt, done, 100));
        }
        out
    }

    #[test]
    fn progress_report_tells_each_start_and_each_step_forward_once() {
        assert_eq!(
            seen(&[(0, 0), (1, 0), (1, 0), (1, 40), (1, 40), (1, 100)]),
            [(1, 0), (1, 40), (1, 100)]
        );
    }

    #[test]
    fn progress_report_shows_a_restart_and_never_a_step_back_within_an_attempt() {
        // The machine reads 0 once an attempt is cut; only the next attempt's start is told,
        // and a stale report of an earlier attempt is not.
        assert_eq!(
            seen(&[(1, 0), (1, 60), (1, 0), (2, 0), (1, 80), (2, 30), (2, 20)]),
            [(1, 0), (1, 60), (2, 0), (2, 30)]
        );
    }

    #[test]
    fn progress_report_tells_a_first_report_that_is_already_under_way() {
        assert_eq!(seen(&[(3, 10)]), [(3, 10)]);
    }
}
