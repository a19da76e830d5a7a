//! The separate calls over gRPC: [`Transfers::upload`] (`UploadResource`, a client stream),
//! [`Transfers::backup`] (`DownloadBackup`) and [`Transfers::restore`] (`RestoreBackup`).
//!
//! Each runs one of the engine's call machines ([`UploadCall`], [`BackupDownload`],
//! [`RestoreCall`]) on a stream of its own, a new HTTP/2 connection per attempt. The machine
//! decides; this module only moves bytes: the archive is read from its file in the pieces the
//! machine asks for (never whole, and handed to the transport without a copy through
//! `chunk_parts`), a download is written through [`ArchiveWriter`] and reaches its name only
//! verified, and an attempt that ends without its answer is repeated whole, under the
//! same identity, after a pause that doubles with each failure. A redirect naming a leader is
//! followed at once; one naming none waits the same growing pause (U-4, A-5, RS-4). A client
//! with an https seed never uses an http seed and never follows a redirect to http: such a
//! redirect is taken as one naming no leader (T-2). Every write has a deadline: the machine's
//! wait, and at most the configuration's write deadline (T-8).
//! Two ends are never repeated: refused credentials (`UNAUTHENTICATED`, or 401 on the console)
//! end the call with [`TransferError::Unauthenticated`] (T-5), and a frame the server refused
//! as oversized or malformed (`OUT_OF_RANGE`, `INTERNAL`, or a console close with 1003, 1007,
//! 1008 or 1009) ends it with [`TransferError::FrameRefused`] (T-6, T-3).
//!
//! With a WebSocket configuration, downloads and restores go to the console instead (T-3a):
//! `/console/backups/download` and `/console/backups/restore`, one connection per attempt,
//! binary messages carrying exactly the frames of the gRPC calls; a restore's connection stays
//! open after its last chunk until the reply, and a close with 1001 is a transport failure.
//! Uploads have no console call: they need a gRPC configuration.
//!
//! Each call has a `_with_progress` twin ([`Transfers::upload_with_progress`],
//! [`Transfers::backup_with_progress`], [`Transfers::download_with_progress`],
//! [`Transfers::restore_with_progress`]) that hands an observer the call's [`Progress`] when
//! each attempt starts and each time it has moved more of the archive: counters, never the
//! data. A restart shows as the next attempt, from nothing. [`crate::ProgressLine`] shows it to
//! a person.

use crate::config::{Config, Transport};
use crate::net::{self, Dialer};
use crate::transport::{grpc_message, status_of, AbortOnDrop, MessageReader};
use crate::WsAuth;
use bytes::{BufMut, Bytes, BytesMut};
use h2::{RecvStream, SendStream};
use nervix_driver_support::call_end::CallEnd;
use nervix_driver_support::resolve::ConnectError;
use nervix_driver_support::session::CLOSE_WAIT;
use nervix_driver_support::transfer::{
    download_end, no_progress, take_download_step, CallPlan, CallSetup, Progress, ProgressReport,
    TransferFailure, Turn,
};
use nervix_driver_support::{ArchiveSource, ArchiveWriter};
use nervix_protocol::calls::*;
use nervix_protocol::client::{CommandReport, LeaderUri};
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::time::Timestamp;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The gRPC method of an upload (T-1).
pub const UPLOAD_PATH: &str = "/nervix.session.Session/UploadResource";
/// The gRPC method of a backup download.
pub const DOWNLOAD_PATH: &str = "/nervix.session.Session/DownloadBackup";
/// The gRPC method of a restore.
pub const RESTORE_PATH: &str = "/nervix.session.Session/RestoreBackup";
/// The console's backup download (T-3a).
pub const DOWNLOAD_WS_PATH: &str = "/console/backups/download";
/// The console's restore (T-3a).
pub const RESTORE_WS_PATH: &str = "/console/backups/restore";

nervix_driver_support::transfer_error! {
    /// Why a separate call gave no result.
    pub enum TransferError {
        /// The configuration names no seed endpoint.
        #[error("no seed endpoint")]
        NoSeed,
        /// An upload with a WebSocket configuration: uploads are gRPC calls only (T-1).
        #[error("uploads need a gRPC configuration")]
        UploadNeedsGrpc,
        /// The client's journal refused the call (feature `journal`): its record could not be
        /// written (the journal is full, broken, or its client closed), or a repeat's archive
        /// changed since it was journaled, or the reference has no live record. Nothing was
        /// sent.
        #[cfg(feature = "journal")]
        #[error("journal: {0}")]
        Journal(nervix_driver_support::transfer_journal::TransferJournalError),
    }
    frame_refused = "the server refused a frame of the call (code {code})";
    gave_up(attempts, last, connect: ConnectError) => {
        Self::GaveUp { attempts, last, connect }
    }
    fields {
        /// Why the last attempt that could not connect did not (a failed lookup keeps the
        /// resolver's own error, T-2), if one could not.
        connect: Option<ConnectError>,
    }
}

#[cfg(feature = "journal")]
impl From<nervix_driver_support::transfer_journal::TransferJournalError> for TransferError {
    fn from(e: nervix_driver_support::transfer_journal::TransferJournalError) -> Self {
        Self::Journal(e)
    }
}

/// Where and how the separate calls are made: the configuration's seeds (https ones only when
/// any is https, T-2), its credentials and TLS roots, and its connection and write deadlines.
pub struct Transfers {
    setup: CallSetup,
    dialer: Dialer,
    transport: Transport,
    /// The journal uploads and restores keep their records in (feature `journal`).
    #[cfg(feature = "journal")]
    journal: Option<nervix_driver_support::transfer_journal::TransferJournalHandle>,
    /// The configuration keeps a journal: an upload or restore without one given
    /// ([`Transfers::journaled`]) is refused instead of going out unjournaled.
    #[cfg(feature = "journal")]
    journal_configured: bool,
}

type Ws = tokio_tungstenite::WebSocketStream<net::Io>;

/// One open call stream.
struct Stream {
    send: SendStream<Bytes>,
    response: h2::client::ResponseFuture,
    _conn: AbortOnDrop,
}

impl Transfers {
    /// The calls of clients configured by `config` (gRPC seeds only).
    pub fn new(config: &Config) -> Result<Self, TransferError> {
        let setup = config.call_setup()?.ok_or(TransferError::NoSeed)?;
        Ok(Self {
            setup,
            dialer: net::dialer(config)?,
            transport: config.transport,
            #[cfg(feature = "journal")]
            journal: None,
            #[cfg(feature = "journal")]
            journal_configured: config.journal.is_some(),
        })
    }

    #[cfg(feature = "journal")]
    nervix_driver_support::transfers_journaled!(
        crate::Client,
        "These calls keep their uploads and restores in `client`'s journal (feature `journal`), \
         when it keeps one: each is journaled before its first byte is sent (a journal that \
         refuses the record refuses the call, [`TransferError::Journal`], and nothing is sent), \
         and its record ends at its outcome. One that ends uncertain keeps its record while its \
         reference is inside the retry validity (E-4): the next client on the slot lists it in \
         its recovery, and [`Transfers::recover_upload`] or [`Transfers::recover_restore`] sends \
         the whole archive again under the same identity."
    );

    /// The instant of a machine's wait; none waits beyond a day.
    fn instant(&self, wait: Option<Timestamp>) -> tokio::time::Instant {
        self.setup.clock.deadline(wait).into()
    }

    /// The deadline of one write: the machine's `wait`, and never later than the write
    /// deadline of the configuration from now (T-8).
    fn write_deadline(&self, wait: Option<Timestamp>) -> tokio::time::Instant {
        let clock = &self.setup.clock;
        clock.write_deadline(wait, self.setup.write_timeout).into()
    }

    /// The plan of one call: a redirect leads to the leader's endpoint on this transport,
    /// its console for the WebSocket calls (T-3a).
    fn plan(&self, call: &'static str) -> CallPlan<TransferError> {
        let leader_uri = match self.transport {
            Transport::WebSocket(_) => LeaderUri::WebConsole,
            _ => LeaderUri::Grpc,
        };
        self.setup.plan(leader_uri, call)
    }

    /// Sends `m` on a console connection by [`Transfers::write_deadline`]: `Ok(false)` when
    /// the connection failed, `Err(())` when the deadline passed first.
    async fn send_ws(&self, ws: &mut Ws, m: Bytes, wait: Option<Timestamp>) -> Result<bool, ()> {
        use futures_util::SinkExt;
        use tokio_tungstenite::tungstenite::Message;
        let sent = ws.send(Message::Binary(m));
        match tokio::time::timeout_at(self.write_deadline(wait), sent).await {
            Ok(r) => Ok(r.is_ok()),
            Err(_) => Err(()),
        }
    }

    /// Closes a console connection whose call has its answer, waiting at most
    /// [`CLOSE_WAIT`] for the transport to take the close (T-8).
    async fn close_ws(ws: &mut Ws) {
        let _ = tokio::time::timeout(CLOSE_WAIT, ws.close(None)).await;
    }

    /// Opens an attempt's call stream within the connection deadline; `Err` says why the
    /// connection could not be opened, when it could not.
    async fn open(&self, endpoint: &Endpoint, path: &str) -> Result<Stream, Option<ConnectError>> {
        let opened = tokio::time::timeout(self.setup.connect_timeout, async {
            let io = net::open(endpoint, Some(&self.dialer), true)
                .await
                .map_err(Some)?;
            let (client, conn) = h2::client::Builder::new()
                .initial_window_size(1 << 22)
                .initial_connection_window_size(1 << 23)
                .handshake::<net::Io, Bytes>(io)
                .await
                .map_err(|_| None)?;
            let conn = AbortOnDrop(tokio::spawn(async move {
                let _ = conn.await;
            }));
            let mut client = client.ready().await.map_err(|_| None)?;
            let scheme = if endpoint.is_https() { "https" } else { "http" };
            let request = http::Request::post(format!("{scheme}://{}{path}", endpoint.authority()))
                .header("content-type", "application/grpc")
                .header("te", "trailers")
                .header("authorization", self.setup.credentials.basic())
                .body(())
                .map_err(|_| None)?;
            let (response, send) = client.send_request(request, false).map_err(|_| None)?;
            Ok(Stream {
                send,
                response,
                _conn: conn,
            })
        })
        .await;
        opened.unwrap_or(Err(Some(ConnectError::TimedOut)))
    }

    /// Opens an attempt's console connection; `Err` says how the attempt ended instead.
    async fn open_ws(
        &self,
        endpoint: &Endpoint,
        path: &str,
        auth: WsAuth,
        unreached: &mut Option<ConnectError>,
    ) -> Result<Ws, CallEnd> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
        let opened = tokio::time::timeout(self.setup.connect_timeout, async {
            let io = net::open(endpoint, Some(&self.dialer), false)
                .await
                .map_err(|e| (CallEnd::Retry, Some(e)))?;
            let url = nervix_driver_support::credentials::console_url_at(
                endpoint,
                path,
                (auth == WsAuth::Query).then_some(&self.setup.credentials),
            );
            let mut request = url
                .into_client_request()
                .map_err(|_| (CallEnd::Retry, None))?;
            if auth == WsAuth::Header {
                let v = http::HeaderValue::from_str(&self.setup.credentials.basic())
                    .map_err(|_| (CallEnd::Retry, None))?;
                request.headers_mut().insert("authorization", v);
            }
            let limit = nervix_protocol::limits::FRAME_LIMIT;
            let config = WebSocketConfig::default()
                .max_message_size(Some(limit))
                .max_frame_size(Some(limit));
            tokio_tungstenite::client_async_with_config(request, io, Some(config))
                .await
                .map(|(ws, _)| ws)
                .map_err(|e| match e {
                    tokio_tungstenite::tungstenite::Error::Http(r) => {
                        (CallEnd::of_http_status(r.status().as_u16()), None)
                    }
                    _ => (CallEnd::Retry, None),
                })
        })
        .await;
        match opened {
            Ok(Ok(ws)) => Ok(ws),
            Ok(Err((end, connect))) => {
                if connect.is_some() {
                    *unreached = connect;
                }
                Err(end)
            }
            Err(_) => {
                *unreached = Some(ConnectError::TimedOut);
                Err(CallEnd::Retry)
            }
        }
    }

    /// The next binary message within `wait`: `Ok(Err(end))` when the connection closed or
    /// failed first (`end` says how: a close with 1001 is a transport failure, T-3a; one with
    /// 1003, 1007, 1008 or 1009 refused a frame, T-3), or when a text message came, which is
    /// no frame (F-2) and ends the attempt as a transport failure, never skipped; `Err(())`
    /// when the wait passed.
    async fn next_ws(
        &self,
        ws: &mut Ws,
        wait: Option<Timestamp>,
    ) -> Result<Result<Bytes, CallEnd>, ()> {
        use futures_util::StreamExt;
        use tokio_tungstenite::tungstenite::Message;
        let deadline = self.instant(wait);
        loop {
            match tokio::time::timeout_at(deadline, ws.next()).await {
                Err(_) => return Err(()),
                Ok(Some(Ok(Message::Binary(b)))) => return Ok(Ok(b)),
                Ok(Some(Ok(Message::Close(f)))) => {
                    let code = f.map(|f| u16::from(f.code));
                    return Ok(Err(code.map_or(CallEnd::Retry, CallEnd::of_close_code)));
                }
                Ok(Some(Err(_))) | Ok(None) | Ok(Some(Ok(Message::Text(_)))) => {
                    return Ok(Err(CallEnd::Retry))
                }
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    async fn download_once_ws(
        &self,
        call: &mut BackupDownload,
        endpoint: &Endpoint,
        auth: WsAuth,
        writer: &mut ArchiveWriter,
        unreached: &mut Option<ConnectError>,
        report: &mut Report<'_>,
    ) -> Result<DownloadStep, TransferError> {
        let mut ws = match self
            .open_ws(endpoint, DOWNLOAD_WS_PATH, auth, unreached)
            .await
        {
            Ok(ws) => ws,
            Err(end) => {
                ended(end)?;
                return Ok(DownloadStep::Continue);
            }
        };
        let request = call.start(self.setup.now())?;
        report.see(call.progress());
        if self.send_ws(&mut ws, request, call.poll_timeout()).await != Ok(true) {
            let step = self.download_lost(call);
            self.why_send_failed(&mut ws).await?;
            return Ok(step);
        }
        loop {
            let step = match self.next_ws(&mut ws, call.poll_timeout()).await {
                Ok(Ok(f)) => call.on_frame(self.setup.now(), f),
                Ok(Err(end)) => {
                    let step = call.on_closed(self.setup.now());
                    ended(end)?;
                    step
                }
                Err(()) => call.handle_timeout(self.setup.now()),
            };
            if let Some(step) = take_download_step(call, step, writer, report)? {
                Self::close_ws(&mut ws).await;
                return Ok(step);
            }
        }
    }

    /// One restore attempt on the console: the start, every chunk, and the connection kept
    /// open after the last until the reply (T-3a).
    async fn restore_once_ws(
        &self,
        call: &mut RestoreCall,
        endpoint: &Endpoint,
        auth: WsAuth,
        source: &mut ArchiveSource<File>,
        unreached: &mut Option<ConnectError>,
        report: &mut Report<'_>,
    ) -> Result<RestoreStep, TransferError> {
        let mut ws = match self
            .open_ws(endpoint, RESTORE_WS_PATH, auth, unreached)
            .await
        {
            Ok(ws) => ws,
            Err(end) => {
                ended(end)?;
                return Ok(call.unreachable());
            }
        };
        let start = call.start(self.setup.now())?;
        report.see(call.progress());
        let Ok(mut ok) = self.send_ws(&mut ws, start, call.poll_timeout()).await else {
            return self.stalled_ws(call, &mut ws).await;
        };
        while ok {
            let Need::Piece { offset, len } = call.need() else {
                break;
            };
            let piece = source.piece(offset, len)?;
            let frame = call.chunk(self.setup.now(), piece)?;
            let Ok(sent) = self.send_ws(&mut ws, frame, call.poll_timeout()).await else {
                return self.stalled_ws(call, &mut ws).await;
            };
            ok = sent;
            if ok {
                report.see(call.progress());
            }
        }
        if !ok {
            let step = call.on_closed(self.setup.now());
            self.why_send_failed(&mut ws).await?;
            return Ok(step);
        }
        let step = match self.next_ws(&mut ws, call.poll_timeout()).await {
            Ok(Ok(reply)) => call.on_reply(self.setup.now(), reply),
            Ok(Err(end)) => {
                let step = call.on_closed(self.setup.now());
                ended(end)?;
                step
            }
            Err(()) => call.timed_out(self.setup.now()),
        };
        Self::close_ws(&mut ws).await;
        Ok(step)
    }

    /// A restore's write on the console still blocked at its deadline: a stalled attempt,
    /// unless the server had closed the connection with a code refusing a frame of ours,
    /// read within [`CLOSE_WAIT`] as after a failed write (T-3, T-6): a server that stopped
    /// reading once it refused the start stalls the chunks behind it.
    async fn stalled_ws(
        &self,
        call: &mut RestoreCall,
        ws: &mut Ws,
    ) -> Result<RestoreStep, TransferError> {
        let step = call.timed_out(self.setup.now());
        self.why_send_failed(ws).await?;
        Ok(step)
    }

    /// Downloads the archive of the completed BACKUP `report` to `target`: written to a
    /// temporary file beside it and renamed into place only once the machine verified every
    /// byte. Returns the archive's path.
    pub async fn backup(
        &self,
        report: &CommandReport,
        target: &Path,
    ) -> Result<PathBuf, TransferError> {
        self.backup_with_progress(report, target, no_progress).await
    }

    /// [`Transfers::backup`], telling `progress` how far the download has come: when each
    /// attempt starts and each time it has written more (see [`ProgressReport`]).
    pub async fn backup_with_progress(
        &self,
        report: &CommandReport,
        target: &Path,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<PathBuf, TransferError> {
        let mut call = BackupDownload::from_report(report, TransferConfig::download())?;
        self.download_with_progress(&mut call, target, progress)
            .await
    }

    /// Runs `call` until its archive is verified and in place at `target`.
    pub async fn download(
        &self,
        call: &mut BackupDownload,
        target: &Path,
    ) -> Result<PathBuf, TransferError> {
        self.download_with_progress(call, target, no_progress).await
    }

    /// [`Transfers::download`], telling `progress` when each attempt starts (a restart shows as
    /// a higher attempt, from nothing) and each time it has written more of the archive.
    pub async fn download_with_progress(
        &self,
        call: &mut BackupDownload,
        target: &Path,
        mut progress: impl FnMut(Progress) + Send,
    ) -> Result<PathBuf, TransferError> {
        let mut report: Report<'_> = ProgressReport::new(&mut progress);
        let mut writer = ArchiveWriter::create(target)?;
        let mut plan = self.plan("download");
        loop {
            let to = next_attempt(&mut plan, call.attempts()).await?;
            writer.restart()?;
            let unreached = plan.unreached();
            let step = match self.transport {
                Transport::WebSocket(auth) => {
                    self.download_once_ws(call, &to, auth, &mut writer, unreached, &mut report)
                        .await?
                }
                _ => {
                    self.download_once(call, &to, &mut writer, unreached, &mut report)
                        .await?
                }
            };
            if let Some(end) = plan.ended(step) {
                return download_end(writer, end);
            }
        }
    }

    async fn download_once(
        &self,
        call: &mut BackupDownload,
        endpoint: &Endpoint,
        writer: &mut ArchiveWriter,
        unreached: &mut Option<ConnectError>,
        report: &mut Report<'_>,
    ) -> Result<DownloadStep, TransferError> {
        let mut stream = match self.open(endpoint, DOWNLOAD_PATH).await {
            Ok(s) => s,
            Err(e) => {
                if e.is_some() {
                    *unreached = e;
                }
                return Ok(DownloadStep::Continue);
            }
        };
        let request = call.start(self.setup.now())?;
        report.see(call.progress());
        let sent = stream.send.send_data(grpc_message(&request), true).is_ok();
        let mut reader = match self.response(call.poll_timeout(), stream.response).await {
            Ok(r) if sent => r,
            Ok(_) => return Ok(self.download_lost(call)),
            Err(end) => {
                let step = self.download_lost(call);
                ended(end)?;
                return Ok(step);
            }
        };
        loop {
            let deadline = call.poll_timeout().map(|t| self.instant(Some(t)));
            let frame = match deadline {
                Some(d) => tokio::time::timeout_at(d, reader.next()).await,
                None => Ok(reader.next().await),
            };
            let step = match frame {
                Ok(Some(f)) => call.on_frame(self.setup.now(), f),
                Ok(None) => {
                    let step = call.on_closed(self.setup.now());
                    ended(reader.end)?;
                    step
                }
                Err(_) => call.handle_timeout(self.setup.now()),
            };
            if let Some(step) = take_download_step(call, step, writer, report)? {
                return Ok(step);
            }
        }
    }

    fn download_lost(&self, call: &mut BackupDownload) -> DownloadStep {
        match call.on_closed(self.setup.now()) {
            DownloadStep::Continue => call.handle_timeout(Timestamp::from_nanos(u64::MAX)),
            step => step,
        }
    }

    /// The response's messages, once its headers came within the call's wait; `Err` says how
    /// the call ended first (a trailers-only answer with its status, an HTTP refusal, a reset,
    /// the wait passed).
    async fn response(
        &self,
        wait: Option<Timestamp>,
        response: h2::client::ResponseFuture,
    ) -> Result<Messages, CallEnd> {
        let deadline = self.instant(wait);
        let response = tokio::time::timeout_at(deadline, response)
            .await
            .map_err(|_| CallEnd::Retry)?
            .map_err(|_| CallEnd::Retry)?;
        if response.status() != http::StatusCode::OK {
            return Err(CallEnd::of_http_status(response.status().as_u16()));
        }
        if let Some(code) = status_of(response.headers()) {
            return Err(CallEnd::of_grpc_status(code));
        }
        Ok(Messages {
            recv: response.into_body(),
            reader: MessageReader::default(),
            end: CallEnd::Retry,
        })
    }

    /// After a failed send on a console connection: `Err` when the server had closed it with
    /// a code refusing a frame of ours (T-3, T-6), read within [`CLOSE_WAIT`], so a refusal
    /// racing our writes is never taken for a transport failure and the frame sent again.
    async fn why_send_failed(&self, ws: &mut Ws) -> Result<(), TransferError> {
        match self.next_ws(ws, Some(self.setup.now() + CLOSE_WAIT)).await {
            Ok(Err(end)) => ended(end),
            _ => Ok(()),
        }
    }

    /// Uploads the archive in the file at `source` as `call` (U-1 to U-5): every attempt
    /// streams the whole file from its first byte under the call's identity.
    /// A file that does not hold exactly the call's archive size is refused
    /// ([`CallError::ArchiveSize`]) with nothing sent.
    pub async fn upload(
        &self,
        call: &mut UploadCall,
        source: &Path,
    ) -> Result<UploadOutcome, TransferError> {
        self.upload_with_progress(call, source, no_progress).await
    }

    /// [`Transfers::upload`], telling `progress` when each attempt starts (a restart shows as a
    /// higher attempt, from nothing) and each time it has written more of the archive.
    pub async fn upload_with_progress(
        &self,
        call: &mut UploadCall,
        source: &Path,
        mut progress: impl FnMut(Progress) + Send,
    ) -> Result<UploadOutcome, TransferError> {
        let mut report: Report<'_> = ProgressReport::new(&mut progress);
        if self.transport != Transport::Grpc {
            return Err(TransferError::UploadNeedsGrpc);
        }
        let path = source;
        let mut source = ArchiveSource::open(source)?;
        // U-2: the file is the call's archive, whole, or nothing is sent.
        source.check_size::<TransferError>(call.total_bytes())?;
        #[cfg(feature = "journal")]
        self.unjournaled_refused()?;
        #[cfg(feature = "journal")]
        if let Some(journal) = &self.journal {
            let info = source.info()?;
            // U-2: the bytes sent are the bytes journaled, the first attempt's included.
            call.expect_digest(info.digest)?;
            let journaled = journal.begin_upload(call, path, info)?;
            let r = self.upload_attempts(call, &mut source, &mut report).await;
            journal.end(journaled, r.is_err() && call.is_uncertain());
            return r;
        }
        let _ = path;
        self.upload_attempts(call, &mut source, &mut report).await
    }

    /// Every attempt of an upload, to its end.
    async fn upload_attempts(
        &self,
        call: &mut UploadCall,
        source: &mut ArchiveSource<File>,
        report: &mut Report<'_>,
    ) -> Result<UploadOutcome, TransferError> {
        let mut plan = self.plan("upload");
        loop {
            let to = next_attempt(&mut plan, call.attempts()).await?;
            let unreached = plan.unreached();
            let step = self
                .send_once(call, &to, source, UPLOAD_PATH, unreached, report)
                .await?;
            if let Some(outcome) = plan.ended(step) {
                return Ok(outcome);
            }
        }
    }

    /// Restores the archive in the file at `source` as `call` (RS-1 to RS-5): every attempt
    /// streams the whole file under the call's reference.
    /// A file that does not hold exactly the declared archive size is refused
    /// ([`CallError::ArchiveSize`]) with nothing sent.
    pub async fn restore(
        &self,
        call: &mut RestoreCall,
        source: &Path,
    ) -> Result<RestoreOutcome, TransferError> {
        self.restore_with_progress(call, source, no_progress).await
    }

    /// [`Transfers::restore`], telling `progress` when each attempt starts (a restart shows as
    /// a higher attempt, from nothing) and each time it has written more of the archive.
    pub async fn restore_with_progress(
        &self,
        call: &mut RestoreCall,
        source: &Path,
        mut progress: impl FnMut(Progress) + Send,
    ) -> Result<RestoreOutcome, TransferError> {
        let mut report: Report<'_> = ProgressReport::new(&mut progress);
        let path = source;
        let mut source = ArchiveSource::open(source)?;
        // RS-2: the file is the declared archive, whole, or nothing is sent.
        source.check_size::<TransferError>(call.archive().total_bytes)?;
        #[cfg(feature = "journal")]
        self.unjournaled_refused()?;
        #[cfg(feature = "journal")]
        if let Some(journal) = &self.journal {
            let journaled = journal.begin_restore(call, path)?;
            let r = self.restore_attempts(call, &mut source, &mut report).await;
            journal.end(journaled, r.is_err() && call.is_uncertain());
            return r;
        }
        let _ = path;
        self.restore_attempts(call, &mut source, &mut report).await
    }

    /// Every attempt of a restore, to its end.
    async fn restore_attempts(
        &self,
        call: &mut RestoreCall,
        source: &mut ArchiveSource<File>,
        report: &mut Report<'_>,
    ) -> Result<RestoreOutcome, TransferError> {
        let mut plan = self.plan("restore");
        loop {
            let to = next_attempt(&mut plan, call.attempts()).await?;
            let unreached = plan.unreached();
            let step = match self.transport {
                Transport::WebSocket(auth) => {
                    self.restore_once_ws(call, &to, auth, source, unreached, report)
                        .await?
                }
                _ => {
                    self.send_once(call, &to, source, RESTORE_PATH, unreached, report)
                        .await?
                }
            };
            if let Some(outcome) = plan.ended(step) {
                return Ok(outcome);
            }
        }
    }

    /// Repeats the journaled upload `record` (a [`crate::JournaledTransfer::Repeatable`] of the
    /// client's recovery, or an upload of this process that ended uncertain) under its journal
    /// record: the whole archive at its path again, under the same identity, to the same
    /// domain and resource (U-5); its record ends at the outcome. Refused with nothing sent
    /// ([`TransferError::Journal`]) when the archive's size or digest changed since it was
    /// journaled (U-2), when the record is no upload, not live (never journaled by this
    /// client's slot, or ended) or past its retry validity (E-4, its record then ends), or
    /// when these calls keep no journal.
    #[cfg(feature = "journal")]
    pub async fn recover_upload(
        &self,
        record: &crate::TransferRecord,
    ) -> Result<UploadOutcome, TransferError> {
        use nervix_driver_support::journal::TransferKind;
        use nervix_driver_support::transfer_journal::TransferRefused;
        let Some(journal) = &self.journal else {
            return Err(TransferRefused::NotLive(record.reference.clone()).into());
        };
        let TransferKind::Upload { domain, resource } = &record.kind else {
            return Err(TransferRefused::Conflict {
                reference: record.reference.clone(),
            }
            .into());
        };
        if self.transport != Transport::Grpc {
            return Err(TransferError::UploadNeedsGrpc);
        }
        let mut source = ArchiveSource::open(Path::new(&record.archive))?;
        let info = source.info()?;
        let journaled = journal.recover(record, info)?;
        let spec = UploadSpec {
            domain: domain.clone(),
            resource: resource.clone(),
            identity: record.reference.clone(),
        };
        // U-2: the bytes sent are the bytes the record's archive was found to hold.
        let call =
            UploadCall::new(spec, info.total_bytes, TransferConfig::upload()).and_then(|mut c| {
                c.expect_digest(info.digest)?;
                Ok(c)
            });
        let mut call = match call {
            Ok(c) => c,
            Err(e) => {
                journal.end(journaled, false);
                return Err(e.into());
            }
        };
        let mut progress = no_progress;
        let mut report: Report<'_> = ProgressReport::new(&mut progress);
        let r = self
            .upload_attempts(&mut call, &mut source, &mut report)
            .await;
        journal.end(journaled, r.is_err() && call.is_uncertain());
        r
    }

    /// Repeats the journaled restore `record` under its journal record: the whole archive at
    /// its path again, under the same reference and statement (RS-5); its record ends at the
    /// outcome. Refused with nothing sent as [`Transfers::recover_upload`] is.
    #[cfg(feature = "journal")]
    pub async fn recover_restore(
        &self,
        record: &crate::TransferRecord,
    ) -> Result<RestoreOutcome, TransferError> {
        let mut progress = no_progress;
        let mut report: Report<'_> = ProgressReport::new(&mut progress);
        let mut repeat = nervix_driver_support::transfer_journal::restore_repeat::<TransferError>(
            self.journal.as_ref(),
            record,
        )?;
        let r = self
            .restore_attempts(&mut repeat.call, &mut repeat.source, &mut report)
            .await;
        repeat.end(r)
    }

    /// One attempt of a sending call: the start, every piece, the half-close, the reply.
    async fn send_once<C: Sending>(
        &self,
        call: &mut C,
        endpoint: &Endpoint,
        source: &mut ArchiveSource<File>,
        path: &str,
        unreached: &mut Option<ConnectError>,
        report: &mut Report<'_>,
    ) -> Result<C::Step, TransferError> {
        let mut stream = match self.open(endpoint, path).await {
            Ok(s) => s,
            Err(e) => {
                if e.is_some() {
                    *unreached = e;
                }
                return Ok(C::unreachable(call));
            }
        };
        let start = call.begin(self.setup.now())?;
        report.see(call.progress());
        let deadline = self.write_deadline(call.wait());
        let mut ok =
            match tokio::time::timeout_at(deadline, write(&mut stream.send, grpc_message(&start)))
                .await
            {
                Ok(w) => w,
                // No window for the start by its deadline: a stalled attempt (T-8).
                Err(_) => return self.stalled(call, stream).await,
            };
        while ok {
            match call.need() {
                Need::Piece { offset, len } => {
                    let piece = source.piece_bytes(offset, len)?;
                    let frame = match call.parts(self.setup.now(), piece) {
                        Ok(f) => f,
                        Err(e) => {
                            stream.send.send_reset(h2::Reason::CANCEL);
                            return Err(e.into());
                        }
                    };
                    let mut head = BytesMut::with_capacity(5 + frame.header().len());
                    head.put_u8(0);
                    head.put_u32(frame.len() as u32);
                    head.put_slice(frame.header());
                    let deadline = self.write_deadline(call.wait());
                    let written = async {
                        write(&mut stream.send, head.freeze()).await
                            && write(&mut stream.send, frame.payload().clone()).await
                    };
                    ok = match tokio::time::timeout_at(deadline, written).await {
                        Ok(w) => w,
                        Err(_) => return self.stalled(call, stream).await,
                    };
                    if ok {
                        report.see(call.progress());
                    }
                }
                Need::Reply => {
                    ok = stream.send.send_data(Bytes::new(), true).is_ok();
                    break;
                }
                _ => break,
            }
        }
        let mut messages = match self.response(call.wait(), stream.response).await {
            Ok(m) => m,
            Err(end) => {
                let step = call.closed(self.setup.now());
                ended(end)?;
                return Ok(step);
            }
        };
        let deadline = self.instant(call.wait());
        match tokio::time::timeout_at(deadline, messages.next()).await {
            Ok(Some(reply)) => Ok(call.reply(self.setup.now(), reply)),
            Ok(None) => {
                let step = call.closed(self.setup.now());
                ended(messages.end)?;
                Ok(step)
            }
            Err(_) if ok => Ok(call.timed_out(self.setup.now())),
            Err(_) => Ok(call.closed(self.setup.now())),
        }
    }
}

impl Transfers {
    /// A sending call's write still blocked at its deadline: a stalled attempt (T-8), unless
    /// the server had answered the call already, as a server that ended it with a status
    /// and stopped reading does: what it said within [`CLOSE_WAIT`] is applied, as after a
    /// failed write, so a status that ends the call is never taken for a stall and the
    /// frames sent again (T-5, T-6). The call is then reset.
    async fn stalled<C: Sending>(
        &self,
        call: &mut C,
        stream: Stream,
    ) -> Result<C::Step, TransferError> {
        let Stream {
            mut send, response, ..
        } = stream;
        let wait = Some(self.setup.now() + CLOSE_WAIT);
        let heard = match self.response(wait, response).await {
            Err(end) => Err(end),
            Ok(mut messages) => {
                match tokio::time::timeout_at(self.instant(wait), messages.next()).await {
                    Ok(Some(reply)) => Ok(reply),
                    Ok(None) => Err(messages.end),
                    Err(_) => Err(CallEnd::Retry),
                }
            }
        };
        send.send_reset(h2::Reason::CANCEL);
        match heard {
            Ok(reply) => Ok(call.reply(self.setup.now(), reply)),
            Err(end) => {
                let step = call.timed_out(self.setup.now());
                ended(end)?;
                Ok(step)
            }
        }
    }
}

/// How a call's progress is told to the application's observer.
type Report<'a> = ProgressReport<&'a mut (dyn FnMut(Progress) + Send)>;

/// The endpoint of a call's next attempt, after the pause its plan owes before it; `Err`
/// once no attempt is left (`made` by the call's machine).
async fn next_attempt(
    plan: &mut CallPlan<TransferError>,
    made: u32,
) -> Result<Endpoint, TransferError> {
    loop {
        match plan.next(made)? {
            Turn::Pause(pause) => tokio::time::sleep(pause).await,
            Turn::Attempt(to) => return Ok(to),
        }
    }
}

/// What ends a call without its answer means: `Err` for the ends never repeated (T-5, T-6).
fn ended(end: CallEnd) -> Result<(), TransferError> {
    TransferError::ended(end)
}

/// Writes `data` within the stream's flow control; false when the stream is gone.
async fn write(send: &mut SendStream<Bytes>, mut data: Bytes) -> bool {
    while !data.is_empty() {
        send.reserve_capacity(data.len());
        match std::future::poll_fn(|cx| send.poll_capacity(cx)).await {
            Some(Ok(n)) if n > 0 => {
                let part = data.split_to(n.min(data.len()));
                if send.send_data(part, false).is_err() {
                    return false;
                }
            }
            Some(Ok(_)) => {}
            _ => return false,
        }
    }
    true
}

/// The messages of a response body.
struct Messages {
    recv: RecvStream,
    reader: MessageReader,
    /// How the call ended once [`Messages::next`] gave `None`: by its trailers' status.
    end: CallEnd,
}

impl Messages {
    /// The next message; `None` once the stream ended, failed or broke the framing.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            match self.reader.next_message() {
                Ok(Some(m)) => return Some(m),
                Ok(None) => {}
                Err(_) => return None,
            }
            let Some(chunk) = self.recv.data().await else {
                // The stream ended: its trailers carry the status.
                if let Ok(Some(t)) = self.recv.trailers().await {
                    self.end = status_of(&t).map_or(CallEnd::Retry, CallEnd::of_grpc_status);
                }
                return None;
            };
            let chunk = chunk.ok()?;
            let _ = self.recv.flow_control().release_capacity(chunk.len());
            self.reader.push(&chunk);
        }
    }
}

/// What uploads and restores share, for one attempt's loop.
trait Sending {
    type Step;
    fn begin(&mut self, now: Timestamp) -> Result<Bytes, CallError>;
    fn need(&self) -> Need;
    fn parts(&mut self, now: Timestamp, piece: Bytes) -> Result<ChunkFrame, CallError>;
    fn wait(&self) -> Option<Timestamp>;
    fn reply(&mut self, now: Timestamp, frame: Bytes) -> Self::Step;
    fn closed(&mut self, now: Timestamp) -> Self::Step;
    fn timed_out(&mut self, now: Timestamp) -> Self::Step;
    fn unreachable(&mut self) -> Self::Step;
    fn progress(&self) -> Progress;
}

/// The longest an upload attempt may run.
const ATTEMPT: Duration = Duration::from_secs(3600);

impl Sending for UploadCall {
    type Step = UploadStep;
    fn begin(&mut self, now: Timestamp) -> Result<Bytes, CallError> {
        self.start(now, now + ATTEMPT)
    }
    fn need(&self) -> Need {
        UploadCall::need(self)
    }
    fn parts(&mut self, now: Timestamp, piece: Bytes) -> Result<ChunkFrame, CallError> {
        self.chunk_parts(now, piece)
    }
    fn wait(&self) -> Option<Timestamp> {
        self.poll_timeout()
    }
    fn reply(&mut self, now: Timestamp, frame: Bytes) -> UploadStep {
        self.on_reply(now, frame)
    }
    fn closed(&mut self, now: Timestamp) -> UploadStep {
        self.on_closed(now)
    }
    fn timed_out(&mut self, now: Timestamp) -> UploadStep {
        match self.handle_timeout(now) {
            UploadStep::Continue => self.on_closed(now),
            step => step,
        }
    }
    fn unreachable(&mut self) -> UploadStep {
        UploadStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: self.is_uncertain(),
        }
    }
    fn progress(&self) -> Progress {
        UploadCall::progress(self)
    }
}

impl Sending for RestoreCall {
    type Step = RestoreStep;
    fn begin(&mut self, now: Timestamp) -> Result<Bytes, CallError> {
        self.start(now)
    }
    fn need(&self) -> Need {
        RestoreCall::need(self)
    }
    fn parts(&mut self, now: Timestamp, piece: Bytes) -> Result<ChunkFrame, CallError> {
        self.chunk_parts(now, piece)
    }
    fn wait(&self) -> Option<Timestamp> {
        self.poll_timeout()
    }
    fn reply(&mut self, now: Timestamp, frame: Bytes) -> RestoreStep {
        self.on_reply(now, frame)
    }
    fn closed(&mut self, now: Timestamp) -> RestoreStep {
        self.on_closed(now)
    }
    fn timed_out(&mut self, now: Timestamp) -> RestoreStep {
        match self.handle_timeout(now) {
            RestoreStep::Continue => self.on_closed(now),
            step => step,
        }
    }
    fn unreachable(&mut self) -> RestoreStep {
        RestoreStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: self.is_uncertain(),
        }
    }
    fn progress(&self) -> Progress {
        RestoreCall::progress(self)
    }
}
