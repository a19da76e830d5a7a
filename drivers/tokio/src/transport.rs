//! One session's transport: a gRPC `Exchange` call or a console WebSocket, run as a task that
//! reports what happens to the driver and writes what the driver gives it.

use crate::config::Transport;
use crate::net::{open, Dialer};
use crate::WsAuth;
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::{SinkExt, StreamExt};
use nervix_driver_support::driver_core::Connect;
use nervix_protocol::client::SessionId;
use nervix_protocol::limits::FRAME_LIMIT;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{timeout, Instant};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// The gRPC method of a session (T-1).
pub const EXCHANGE_PATH: &str = "/nervix.session.Session/Exchange";
use nervix_driver_support::session::{
    after_failed_write, close_end, upgrade_refused, CLOSE_WAIT, CLOSE_WAIT_FRAMES,
};
pub use nervix_driver_support::session::{console_url, End, CONSOLE_PATH};
/// The `grpc-status` of a header block, if it carries one.
pub(crate) use sansio_kit::grpc::status_of;
/// One frame as one gRPC message, and the reader that splits them out of a response body
/// refusing one above the 4 MiB frame limit before reading it (F-3) and any compressed one
/// (T-1): `sansio-kit`'s framing, whose default limit is the frame limit.
pub use sansio_kit::grpc::{grpc_message, MessageError, MessageReader};
/// Aborts a task when dropped, so a session's helpers never outlive it.
pub(crate) use sansio_kit::tokio::AbortOnDrop;
use sansio_kit::tokio::{grpc_request, h2_client, H2Settings};
use sansio_kit::ws::{incoming, Handshake, HandshakeError, Incoming, ReadError};

const _: () = assert!(sansio_kit::grpc::DEFAULT_LIMIT == FRAME_LIMIT);
/// What a session's task tells the driver, and what the driver tells it.
pub(crate) use nervix_driver_support::session::{Event, Out};

/// A session's report to the driver, with the bytes a frame holds in the driver's bound
/// ([`crate::driver::INBOX_FRAME_BYTES`]) until the driver takes it.
pub(crate) type Report = (SessionId, Said, Option<tokio::sync::OwnedSemaphorePermit>);

/// What one report of a session carries: one event, or every whole message the DATA frames
/// of a gRPC body received so far completed (or the WebSocket frames read so far), in order,
/// within [`READ_BURST`] and the frame limit in bytes (handed over together: one hand-over
/// and one wake-up of the driver for them all).
#[derive(Debug)]
pub(crate) enum Said {
    /// One event.
    One(Event),
    /// Frames from the server, in order; never empty.
    Frames(std::collections::VecDeque<Bytes>),
}

/// gRPC status codes the driver acts on.
pub(crate) mod status {
    pub const OK: u32 = 0;
    pub const OUT_OF_RANGE: u32 = 11;
    pub const INTERNAL: u32 = 13;
    pub const UNAVAILABLE: u32 = 14;
    pub const UNAUTHENTICATED: u32 = 16;
}

/// A gRPC session's send half, shared by the driver task and the session's writer task.
///
/// While nothing waits in the writer's queue and the stream has flow-control capacity for
/// it, the driver stages a frame here as a gRPC message, and at the end of its turn
/// ([`Line::flush`]) hands everything staged to h2 in one DATA frame: no hop through the
/// writer task, which is woken only for what must wait (capacity, a close). A frame that
/// cannot be staged goes to the writer's queue, after whatever was staged, and nothing is
/// staged again until the writer has written all it was given, so frames leave in order.
/// Nothing here waits: the writer holds the lock only between its own waits, so the
/// driver's loop is never blocked for longer than one such step.
#[derive(Default)]
pub(crate) struct Line {
    state: std::sync::Mutex<LineState>,
}

#[derive(Default)]
struct LineState {
    /// The call's send half, once it is open; `None` before and after the writer ends.
    send: Option<h2::SendStream<Bytes>>,
    /// Frames handed to the writer's queue and not yet written by it.
    queued: usize,
    /// gRPC messages staged by the driver and not yet handed to h2: at most
    /// [`WRITE_BURST_BYTES`], and never more than the stream's capacity.
    staged: BytesMut,
}

impl LineState {
    /// Hands what is staged to h2 as one DATA frame, and asks for capacity for the next.
    fn flush(&mut self) {
        let Some(send) = self.send.as_mut() else {
            self.staged.clear();
            return;
        };
        if !self.staged.is_empty() && send.send_data(self.staged.split().freeze(), false).is_err() {
            // The call is gone: its reader reports how it ended.
            self.send = None;
            return;
        }
        send.reserve_capacity(WRITE_BURST_BYTES);
    }
}

impl Line {
    fn lock(&self) -> std::sync::MutexGuard<'_, LineState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stages `frame` to be written by [`Line::flush`]: false when it must go through the
    /// writer's queue instead (the call not open, frames waiting there, or no capacity).
    /// True the first time something is staged since the last flush, as `Some(true)`.
    pub(crate) fn stage(&self, frame: &Bytes) -> Option<bool> {
        let mut st = self.lock();
        if st.queued > 0 || st.send.is_none() {
            return None;
        }
        let len = frame.len() + 5;
        if !st.staged.is_empty() && st.staged.len() + len > WRITE_BURST_BYTES {
            st.flush();
        }
        let capacity = st.send.as_ref().map_or(0, h2::SendStream::capacity);
        if st.staged.len() + len > capacity {
            return None;
        }
        let first = st.staged.is_empty();
        put_message(&mut st.staged, frame);
        Some(first)
    }

    /// Writes what is staged: what the driver does at the end of each turn of its loop.
    pub(crate) fn flush(&self) {
        self.lock().flush();
    }

    /// Before a frame goes to the writer's queue: what was staged goes first, and nothing
    /// is staged until the writer has written it. [`Line::unqueued`] undoes it when the
    /// queue did not take it.
    pub(crate) fn queue(&self) {
        let mut st = self.lock();
        st.flush();
        st.queued += 1;
    }

    /// The call is open: frames may be written into `send`, within the capacity asked here.
    fn open(&self, mut send: h2::SendStream<Bytes>) {
        send.reserve_capacity(WRITE_BURST_BYTES);
        self.lock().send = Some(send);
    }

    /// No more frames are written into the call: its send half, if it was still there.
    fn close(&self) -> Option<h2::SendStream<Bytes>> {
        self.lock().send.take()
    }

    /// The writer hands `chunk` to h2; false when the call is gone.
    fn send_data(&self, chunk: Bytes) -> bool {
        let mut st = self.lock();
        let Some(send) = st.send.as_mut() else {
            return false;
        };
        if send.send_data(chunk, false).is_err() {
            st.send = None;
            return false;
        }
        true
    }

    /// The writer wrote `taken` items of its queue: once none is left, the driver may
    /// stage again, and capacity is asked for what it will stage.
    fn written(&self, taken: usize) {
        let mut st = self.lock();
        st.queued = st.queued.saturating_sub(taken);
        if st.queued == 0 {
            if let Some(send) = st.send.as_mut() {
                send.reserve_capacity(WRITE_BURST_BYTES);
            }
        }
    }

    /// The writer's queue did not take the frame [`Line::queue`] counted.
    pub(crate) fn unqueued(&self) {
        let mut st = self.lock();
        st.queued = st.queued.saturating_sub(1);
    }
}

/// Appends `frame` to `data` as one gRPC message.
fn put_message(data: &mut BytesMut, frame: &[u8]) {
    data.reserve(frame.len() + 5);
    data.put_u8(0);
    data.put_u32(frame.len() as u32);
    data.extend_from_slice(frame);
}

/// Everything a session task needs.
pub(crate) struct Dial {
    /// The session, where it connects, as whom and by when.
    pub to: Connect,
    pub transport: Transport,
    pub tls: Option<Dialer>,
    pub write_timeout: Duration,
    pub events: mpsc::Sender<Report>,
    /// Bytes of frames the driver has not taken yet, over all sessions.
    pub inflight: std::sync::Arc<tokio::sync::Semaphore>,
    /// Where a gRPC session's send half goes once its call is open.
    pub line: std::sync::Arc<Line>,
}

impl Dial {
    async fn tell(&self, e: Event) -> bool {
        let mut permit = None;
        if let Event::Frame(f) = &e {
            permit = self.permit(f.len()).await;
        }
        self.events
            .send((self.to.session, Said::One(e), permit))
            .await
            .is_ok()
    }

    /// Hands the driver `frames` in one report; their bytes count in the driver's bound
    /// together.
    async fn tell_frames(&self, mut frames: std::collections::VecDeque<Bytes>) -> bool {
        if frames.len() < 2 {
            return match frames.pop_front() {
                Some(f) => self.tell(Event::Frame(f)).await,
                None => true,
            };
        }
        let permit = self.permit(frames.iter().map(Bytes::len).sum()).await;
        self.events
            .send((self.to.session, Said::Frames(frames), permit))
            .await
            .is_ok()
    }

    /// The permits for `len` bytes of frames. `None` once the driver stops bounding them
    /// (closed): the frames go at once. The permit travels with the frames and is given back
    /// when the driver has taken the last of them (or when a session that is cut drops it).
    async fn permit(&self, len: usize) -> Option<tokio::sync::OwnedSemaphorePermit> {
        crate::driver::take_permits(self.inflight.clone(), len).await
    }
}

/// Runs one session: connects within the deadline, then reads and writes until it ends.
/// Everything the session's task logs is inside the session's span, made here, where the
/// driver starts the session.
pub(crate) fn run(d: Dial, out: mpsc::Receiver<Out>) -> impl std::future::Future<Output = ()> {
    let span = d.to.span();
    tracing::Instrument::instrument(session(d, out), span)
}

async fn session(d: Dial, out: mpsc::Receiver<Out>) {
    let end = match d.transport {
        Transport::Grpc => grpc(&d, out).await,
        Transport::WebSocket(auth) => websocket(&d, auth, out).await,
    };
    d.tell(Event::Ended(end)).await;
}

fn end_of_status(code: u32) -> End {
    match code {
        status::OK => End::Finished,
        status::UNAUTHENTICATED => End::Unauthenticated,
        status::UNAVAILABLE => End::Unavailable,
        status::OUT_OF_RANGE | status::INTERNAL => End::FrameRefused(code),
        other => End::Transport(format!("grpc-status {other}")),
    }
}

/// Takes every whole message buffered in `reader` into `out`, in order; the end a message
/// that cannot be read makes (F-3, T-1), after the messages before it.
fn take_messages(reader: &mut MessageReader, out: &mut Vec<Bytes>) -> Result<(), End> {
    loop {
        match reader.next_message() {
            Ok(Some(m)) => out.push(m),
            Ok(None) => return Ok(()),
            Err(MessageError::TooLarge(_)) => return Err(End::OversizedFrame),
            Err(_) => return Err(End::Transport("a compressed message".into())),
        }
    }
}

/// Adds one chunk of a gRPC body to `reader` and takes every whole message it completes into
/// `out`, in order; as [`take_messages`]. The chunk is taken without a copy: a message that
/// lies whole in it is a slice of it (a DATA frame of at most [`H2Settings`]' `max_frame`,
/// below the size under which the engine copies a frame out of its buffer before keeping it,
/// F-9), and only bytes of a message that straddles chunks are copied.
fn take_chunk(reader: &mut MessageReader, chunk: Bytes, out: &mut Vec<Bytes>) -> Result<(), End> {
    reader.push_bytes(chunk);
    take_messages(reader, out)
}

/// One read of a gRPC response body: `None` when the body ended.
type GrpcRead = Option<Result<Bytes, h2::Error>>;

/// The messages of `first`, a chunk of a gRPC body, and of the chunks received already
/// behind it (`ready` gives a read that has come, or `None` when none has yet), in order: no
/// more chunks once they hold [`READ_BURST`] messages or [`FRAME_LIMIT`] bytes of them, or a
/// chunk could not be read (its end comes back, after the messages before it, as
/// [`take_chunk`]'s). The first read that is not a chunk (the body's end, or a failure)
/// comes back, to be handled after them.
fn gather_chunks(
    reader: &mut MessageReader,
    first: Bytes,
    mut ready: impl FnMut() -> Option<GrpcRead>,
) -> (
    std::collections::VecDeque<Bytes>,
    Result<(), End>,
    Option<GrpcRead>,
) {
    let mut messages = Vec::new();
    let mut bad = take_chunk(reader, first, &mut messages);
    let mut bytes: usize = messages.iter().map(Bytes::len).sum();
    while bad.is_ok() && messages.len() < READ_BURST && bytes < FRAME_LIMIT {
        match ready() {
            None => break,
            Some(Some(Ok(chunk))) => {
                let before = messages.len();
                bad = take_chunk(reader, chunk, &mut messages);
                bytes += messages[before..].iter().map(Bytes::len).sum::<usize>();
            }
            Some(other) => return (messages.into(), bad, Some(other)),
        }
    }
    (messages.into(), bad, None)
}

/// A body that ended with bytes of no whole message (a partial length prefix, or a prefix
/// promising more than came) was cut inside a message: a transport failure, whatever its
/// status says.
fn cut_inside_a_message(reader: &MessageReader) -> Option<End> {
    (reader.partial() > 0).then(|| {
        End::Transport(format!(
            "the call ended inside a message ({} bytes left over)",
            reader.partial()
        ))
    })
}

/// Reads a session's response body as it came in `chunks`, ended with trailers carrying
/// `status` (none: no grpc-status), the way a live gRPC session reads it: every message is
/// handed to `frame` in order (until it says false), and the session's end comes back. For
/// the fuzz targets, which drive the reader with hostile bytes.
#[doc(hidden)]
pub fn read_grpc_body<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    status: Option<u32>,
    mut frame: impl FnMut(Bytes) -> bool,
) -> End {
    let mut reader = MessageReader::default();
    for chunk in chunks {
        let mut messages = Vec::new();
        let bad = take_chunk(&mut reader, Bytes::copy_from_slice(chunk), &mut messages);
        for m in messages {
            if !frame(m) {
                return End::Finished;
            }
        }
        if let Err(end) = bad {
            return end;
        }
    }
    if let Some(end) = cut_inside_a_message(&reader) {
        return end;
    }
    match status {
        Some(code) => end_of_status(code),
        None => End::Transport("no grpc-status".into()),
    }
}

async fn grpc(d: &Dial, out: mpsc::Receiver<Out>) -> End {
    let opened = timeout_at(d.to.deadline.into(), async {
        let io = open(&d.to.endpoint, d.tls.as_ref(), true)
            .await
            .map_err(|e| End::Transport(format!("connect: {e}")))?;
        let (mut client, conn) = h2_client(io, &H2Settings::default())
            .await
            .map_err(|e| End::Transport(format!("http/2: {e}")))?;
        let scheme = if d.to.endpoint.is_https() {
            "https"
        } else {
            "http"
        };
        let url = format!("{scheme}://{}{EXCHANGE_PATH}", d.to.endpoint.authority());
        let request = grpc_request(&url, &[("authorization", &d.to.credentials.basic())])
            .map_err(|e| End::Transport(format!("request: {e}")))?;
        let (response, send) = client
            .send_request(request, false)
            .map_err(|e| End::Transport(format!("http/2: {e}")))?;
        let response = response
            .await
            .map_err(|e| End::Transport(format!("http/2: {e}")))?;
        if let Some(code) = status_of(response.headers()) {
            // A trailers-only answer: the call ended before it began.
            return Err(end_of_status(code));
        }
        if response.status() != http::StatusCode::OK {
            return Err(End::Transport(format!("http status {}", response.status())));
        }
        Ok((conn, send, response.into_body()))
    })
    .await;
    let (_conn, send, mut recv) = match opened {
        Ok(Ok(v)) => v,
        Ok(Err(end)) => return end,
        Err(_) => return End::Transport("connection deadline passed".into()),
    };
    // The driver may write into the call from now on.
    d.line.open(send);
    if !d.tell(Event::Connected).await {
        return End::Finished;
    }
    let writer = AbortOnDrop(tokio::spawn(write_grpc(
        d.line.clone(),
        out,
        d.write_timeout,
    )));
    let mut reader = MessageReader::default();
    // A read that came behind gathered chunks (the body's end, or a failure): handled next.
    let mut next: Option<GrpcRead> = None;
    let end = loop {
        let read = match next.take() {
            Some(read) => read,
            None => recv.data().await,
        };
        match read {
            Some(Ok(chunk)) => {
                let _ = recv.flow_control().release_capacity(chunk.len());
                // The DATA frames h2 has received already behind this one go in the same
                // report: one hand-over, one permit and one wake-up of the driver for them
                // all, not one per reply.
                let mut first = Some(chunk);
                let (messages, bad, after) = std::future::poll_fn(|cx| {
                    let first = first.take().unwrap_or_default();
                    std::task::Poll::Ready(gather_chunks(&mut reader, first, || {
                        match recv.poll_data(cx) {
                            std::task::Poll::Ready(read) => {
                                if let Some(Ok(chunk)) = &read {
                                    let _ = recv.flow_control().release_capacity(chunk.len());
                                }
                                Some(read)
                            }
                            std::task::Poll::Pending => None,
                        }
                    }))
                })
                .await;
                if !d.tell_frames(messages).await {
                    return End::Finished;
                }
                if let Err(end) = bad {
                    return end;
                }
                next = after;
            }
            Some(Err(e)) => break End::Transport(format!("http/2: {e}")),
            None => {
                if let Some(end) = cut_inside_a_message(&reader) {
                    break end;
                }
                let trailers = recv.trailers().await;
                break match trailers {
                    Ok(Some(t)) => match status_of(&t) {
                        Some(code) => end_of_status(code),
                        None => End::Transport("no grpc-status".into()),
                    },
                    Ok(None) => End::Transport("no trailers".into()),
                    Err(e) => End::Transport(format!("http/2: {e}")),
                };
            }
        }
    };
    drop(writer);
    drop(d.line.close());
    end
}

/// A gRPC session's writer: writes what the driver queued for it into the call `line` holds,
/// in order, each run of frames within the stream's flow-control capacity, waiting at most
/// `write_timeout` each time for more (T-8); a write that cannot go on resets the call. After
/// a close, the end of the stream once everything before it is written.
async fn write_grpc(
    line: std::sync::Arc<Line>,
    mut out: mpsc::Receiver<Out>,
    write_timeout: Duration,
) {
    let mut data = BytesMut::new();
    // Ends the call's send half when a write failed: nothing is staged after.
    let gone = |line: &Line| {
        if let Some(mut send) = line.close() {
            send.send_reset(h2::Reason::CANCEL);
        }
    };
    while let Some(o) = out.recv().await {
        // The frames the driver queued meanwhile go with this one as one run of gRPC
        // messages: one call for capacity and one write for the lot, not one each.
        let (close, taken) = gather_grpc(o, &mut out, &mut data);
        let mut data = data.split().freeze();
        while !data.is_empty() {
            let now = {
                let mut st = line.lock();
                let Some(send) = st.send.as_mut() else { return };
                send.reserve_capacity(data.len());
                send.capacity()
            };
            let n = if now > 0 {
                now
            } else {
                let cap = timeout(
                    write_timeout,
                    std::future::poll_fn(|cx| match line.lock().send.as_mut() {
                        Some(send) => send.poll_capacity(cx),
                        None => std::task::Poll::Ready(None),
                    }),
                )
                .await;
                match cap {
                    Ok(Some(Ok(n))) => n,
                    _ => return gone(&line),
                }
            };
            if n == 0 {
                continue;
            }
            let chunk = data.split_to(n.min(data.len()));
            if !line.send_data(chunk) {
                return;
            }
        }
        if close {
            if let Some(send) = line.lock().send.as_mut() {
                let _ = send.send_data(Bytes::new(), true);
            }
            // Nothing is staged after a close: the count stays up. Keep the stream
            // until the reader sees the end.
            std::future::pending::<()>().await;
        }
        // Everything queued is written: the driver may stage again.
        line.written(taken);
    }
}

async fn timeout_at<F: std::future::Future>(
    deadline: Instant,
    f: F,
) -> Result<F::Output, tokio::time::error::Elapsed> {
    tokio::time::timeout_at(deadline, f).await
}

/// After a failed write, reads on for at most [`CLOSE_WAIT`]: a close code that judges a
/// frame of ours is what ended the session (T-3), whichever of the two was seen first;
/// otherwise the write's failure is. Frames read meanwhile (at most [`CLOSE_WAIT_FRAMES`])
/// come back to be passed on, in order.
async fn close_code_after<S>(source: &mut S, failed: End) -> (Vec<Bytes>, End)
where
    S: futures_util::Stream<Item = Result<Message, WsError>> + Unpin,
{
    let mut frames = Vec::new();
    let read = async {
        while frames.len() < CLOSE_WAIT_FRAMES {
            match source.next().await.map(incoming) {
                Some(Ok(Incoming::Binary(b))) => frames.push(b),
                Some(Ok(Incoming::Close(code))) => return Some(close_end(code)),
                Some(Ok(Incoming::Control)) => {}
                _ => return None,
            }
        }
        None
    };
    let end = after_failed_write(timeout(CLOSE_WAIT, read).await.ok().flatten(), failed);
    (frames, end)
}

/// The most frames gathered into one write to a session's transport.
const WRITE_BURST: usize = 64;

/// The most bytes of frames gathered into one write: a frame that would pass it waits
/// for the next write (a single frame larger than this goes alone).
const WRITE_BURST_BYTES: usize = 256 * 1024;

/// Appends `first` and whatever `out` holds already, as gRPC messages in order, to `data`,
/// up to [`WRITE_BURST`] frames and [`WRITE_BURST_BYTES`] bytes; whether a close came
/// among them (nothing after it is taken), and how many items were taken (the close too).
fn gather_grpc(first: Out, out: &mut mpsc::Receiver<Out>, data: &mut BytesMut) -> (bool, usize) {
    let mut next = Some(first);
    let mut n = 0;
    while let Some(o) = next.take() {
        let f = match o {
            Out::Frame(f) => f,
            Out::Close => return (true, n + 1),
        };
        put_message(data, &f);
        n += 1;
        if n < WRITE_BURST && data.len() < WRITE_BURST_BYTES {
            next = out.try_recv().ok();
        }
    }
    (false, n)
}

/// The most frames of a WebSocket, or gathered messages of a gRPC body, handed to the driver
/// in one report.
const READ_BURST: usize = 64;

/// One read of a WebSocket: `None` when the connection ended.
type WsRead = Option<Result<Incoming, ReadError>>;

/// `first` and the frames read already behind it (`ready` gives a read that has come, or
/// `None` when none has yet), in order: at most [`READ_BURST`] frames, and no more once
/// they hold [`FRAME_LIMIT`] bytes. Control messages among them are passed over; the first
/// read that is not a frame comes back, to be handled after them.
fn gather_frames(
    first: Bytes,
    mut ready: impl FnMut() -> Option<WsRead>,
) -> (std::collections::VecDeque<Bytes>, Option<WsRead>) {
    let mut bytes = first.len();
    let mut frames = std::collections::VecDeque::from([first]);
    while frames.len() < READ_BURST && bytes < FRAME_LIMIT {
        match ready() {
            None => break,
            Some(Some(Ok(Incoming::Binary(b)))) => {
                bytes += b.len();
                frames.push_back(b);
            }
            Some(Some(Ok(Incoming::Control))) => {}
            Some(other) => return (frames, Some(other)),
        }
    }
    (frames, None)
}

async fn websocket(d: &Dial, auth: WsAuth, mut out: mpsc::Receiver<Out>) -> End {
    let opened = timeout_at(d.to.deadline.into(), async {
        let io = open(&d.to.endpoint, d.tls.as_ref(), false)
            .await
            .map_err(|e| End::Transport(format!("connect: {e}")))?;
        let url = console_url(
            &d.to.endpoint,
            (auth == WsAuth::Query).then_some(&d.to.credentials),
        );
        let mut hs = Handshake::new(url).max_message(FRAME_LIMIT);
        if auth == WsAuth::Header {
            hs = hs.header("authorization", d.to.credentials.basic());
        }
        match sansio_kit::tokio::websocket(io, &hs).await {
            Ok((ws, _)) => Ok(ws),
            Err(HandshakeError::Refused(status)) => Err(upgrade_refused(status)),
            Err(e) => Err(End::Transport(e.to_string())),
        }
    })
    .await;
    let ws = match opened {
        Ok(Ok(ws)) => ws,
        Ok(Err(end)) => return end,
        Err(_) => return End::Transport("connection deadline passed".into()),
    };
    if !d.tell(Event::Connected).await {
        return End::Finished;
    }
    let (mut sink, mut source) = ws.split();
    let write_timeout = d.write_timeout;
    // The writer ends only when a write failed or passed its deadline (T-8), or when the
    // driver dropped the session; either way the session ends with it.
    let (wrote_tx, mut wrote) = tokio::sync::oneshot::channel::<End>();
    let writer = AbortOnDrop(tokio::spawn(async move {
        while let Some(o) = out.recv().await {
            // What the driver queued meanwhile is written with it and flushed once, so a
            // burst of frames costs one write to the socket rather than one each.
            let mut close = false;
            let written = async {
                let mut next = Some(o);
                let mut n = 0;
                while let Some(o) = next.take() {
                    let m = match o {
                        // Binary messages only (T-3).
                        Out::Frame(f) => Message::Binary(f),
                        Out::Close => Message::Close(None),
                    };
                    close = matches!(m, Message::Close(_));
                    sink.feed(m).await?;
                    n += 1;
                    if !close && n < WRITE_BURST {
                        next = out.try_recv().ok();
                    }
                }
                sink.flush().await
            };
            match timeout(write_timeout, written).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    let _ = wrote_tx.send(End::Transport(format!("websocket: {e}")));
                    return;
                }
                Err(_) => {
                    let _ = wrote_tx.send(End::Transport("write deadline passed".into()));
                    return;
                }
            }
            if close {
                std::future::pending::<()>().await;
            }
        }
    }));
    // A read taken while gathering frames that is not one: handled next, in order.
    let mut ahead = None;
    let end = loop {
        let next = match ahead.take() {
            Some(read) => read,
            None => tokio::select! {
                m = source.next() => m.map(incoming),
                w = &mut wrote => match w {
                    // A write failed: the server may have closed with a code that judges what
                    // we sent, and its close frame may be unread yet (T-3).
                    Ok(failed) => {
                        let (frames, end) = close_code_after(&mut source, failed).await;
                        for f in frames {
                            if !d.tell(Event::Frame(f)).await {
                                break;
                            }
                        }
                        break end;
                    }
                    // The driver dropped the session.
                    Err(_) => break End::Finished,
                },
            },
        };
        match next {
            Some(Ok(Incoming::Binary(b))) => {
                // The frames already read behind this one go with it in one report: one
                // hand-over and one wake-up of the driver for them all.
                let (frames, after) = gather_frames(b, || {
                    futures_util::FutureExt::now_or_never(source.next()).map(|m| m.map(incoming))
                });
                ahead = after;
                if !d.tell_frames(frames).await {
                    break End::Finished;
                }
            }
            Some(Ok(Incoming::Close(code))) => break close_end(code),
            Some(Ok(Incoming::Text(_))) => break End::Transport("a text message".into()),
            Some(Ok(_)) => {}
            Some(Err(ReadError::TooLarge)) => break End::OversizedFrame,
            Some(Err(e)) => break End::Transport(format!("websocket: {e}")),
            None => break End::Transport("the connection ended".into()),
        }
    };
    drop(writer);
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;

    fn closing(code: u16) -> Result<Message, WsError> {
        Ok(Message::Close(Some(CloseFrame {
            code: CloseCode::from(code),
            reason: "".into(),
        })))
    }

    fn failed() -> End {
        End::Transport("write failed".into())
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn t_3_a_defect_close_code_read_after_a_failed_write_ends_the_session() {
        for code in [1003u16, 1007, 1008, 1009] {
            let mut s = futures_util::stream::iter(vec![
                Ok(Message::Binary(Bytes::from_static(b"a"))),
                Ok(Message::Ping(Bytes::new())),
                closing(code),
            ]);
            let (frames, end) = run(close_code_after(&mut s, failed()));
            assert_eq!(end, End::Defect(code));
            assert_eq!(frames, vec![Bytes::from_static(b"a")], "passed on in order");
        }
    }

    #[test]
    fn t_3_any_other_close_after_a_failed_write_keeps_the_write_failure() {
        for code in [1000u16, 1001, 1011] {
            let mut s = futures_util::stream::iter(vec![closing(code)]);
            assert_eq!(
                run(close_code_after(&mut s, failed())).1,
                failed(),
                "{code}"
            );
        }
        let mut s = futures_util::stream::iter(Vec::<Result<Message, WsError>>::new());
        assert_eq!(run(close_code_after(&mut s, failed())).1, failed());
    }

    #[test]
    fn t_8_the_wait_for_a_close_code_after_a_failed_write_is_bounded() {
        let mut s = futures_util::stream::pending::<Result<Message, WsError>>();
        let started = std::time::Instant::now();
        assert_eq!(run(close_code_after(&mut s, failed())).1, failed());
        let waited = started.elapsed();
        assert!(
            waited >= CLOSE_WAIT && waited < CLOSE_WAIT * 10,
            "{waited:?}"
        );
        // A peer that floods frames instead of closing is not waited for either.
        let mut s = futures_util::stream::repeat_with(|| {
            Ok::<_, WsError>(Message::Binary(Bytes::from_static(b"x")))
        });
        let (frames, end) = run(close_code_after(&mut s, failed()));
        assert_eq!(end, failed());
        assert_eq!(frames.len(), CLOSE_WAIT_FRAMES);
    }

    /// The messages `data` holds, read back.
    fn messages(data: &BytesMut) -> Vec<Bytes> {
        let mut got = Vec::new();
        let end = read_grpc_body([&data[..]], Some(0), |m| {
            got.push(m);
            true
        });
        assert_eq!(end, End::Finished);
        got
    }

    #[test]
    fn a_grpc_write_gathers_the_queued_frames_in_order_within_its_bounds() {
        let frame = |i: u8, len: usize| Bytes::from(vec![i; len]);
        let (tx, mut rx) = mpsc::channel(WRITE_BURST * 2);
        for i in 1..WRITE_BURST as u8 + 3 {
            tx.try_send(Out::Frame(frame(i, 3))).unwrap();
        }
        let mut data = BytesMut::new();
        assert_eq!(
            gather_grpc(Out::Frame(frame(0, 3)), &mut rx, &mut data),
            (false, WRITE_BURST)
        );
        let got = messages(&data);
        // At most WRITE_BURST frames, the first one given first, the rest in queue order.
        assert_eq!(got.len(), WRITE_BURST);
        for (i, m) in got.iter().enumerate() {
            assert_eq!(m, &frame(i as u8, 3));
        }
        // What was left waits for the next write, in order.
        data.clear();
        let next = rx.try_recv().unwrap();
        assert_eq!(gather_grpc(next, &mut rx, &mut data), (false, 3));
        let left: Vec<u8> = messages(&data).iter().map(|m| m[0]).collect();
        assert_eq!(
            left,
            vec![
                WRITE_BURST as u8,
                WRITE_BURST as u8 + 1,
                WRITE_BURST as u8 + 2
            ]
        );

        // Bounded in bytes: frames stop being taken once the write holds the bound.
        let big = WRITE_BURST_BYTES / 3;
        for i in 1..4 {
            tx.try_send(Out::Frame(frame(i, big))).unwrap();
        }
        data.clear();
        assert_eq!(
            gather_grpc(Out::Frame(frame(0, big)), &mut rx, &mut data),
            (false, 3)
        );
        assert_eq!(
            messages(&data).len(),
            3,
            "two thirds stay under the bound, three pass it"
        );
        assert_eq!(rx.try_recv().unwrap().frame_byte(), Some(3));

        // A close ends the run: the frames before it go, nothing after it is taken.
        tx.try_send(Out::Frame(frame(1, 3))).unwrap();
        tx.try_send(Out::Close).unwrap();
        tx.try_send(Out::Frame(frame(2, 3))).unwrap();
        data.clear();
        assert_eq!(
            gather_grpc(Out::Frame(frame(0, 3)), &mut rx, &mut data),
            (true, 3),
            "two frames and the close taken"
        );
        let got: Vec<u8> = messages(&data).iter().map(|m| m[0]).collect();
        assert_eq!(got, vec![0, 1]);
        assert_eq!(rx.try_recv().unwrap().frame_byte(), Some(2));
    }

    #[test]
    fn a_grpc_read_gathers_the_chunks_received_already_into_one_report_in_order() {
        let chunk = |ms: &[&[u8]]| -> Bytes {
            Bytes::from(
                ms.iter()
                    .flat_map(|m| grpc_message(m).to_vec())
                    .collect::<Vec<u8>>(),
            )
        };
        let data = |b: Bytes| Some(Some(Ok::<Bytes, h2::Error>(b)));
        let mut reader = MessageReader::default();
        // 32 replies in 32 DATA frames already received: one report, in order, and the read
        // not yet come ends it (nothing is read past it).
        let mut reads = (1..32u8)
            .map(|i| data(chunk(&[&[i; 3][..]])))
            .chain([None, data(chunk(&[b"late"]))])
            .collect::<std::collections::VecDeque<_>>();
        let (got, bad, after) = gather_chunks(&mut reader, chunk(&[&[0; 3][..]]), || {
            reads.pop_front().flatten()
        });
        assert_eq!(got.len(), 32, "one report for all the chunks that came");
        assert!(got.iter().enumerate().all(|(i, m)| m[..] == [i as u8; 3]));
        assert_eq!((bad, after.is_none(), reads.len()), (Ok(()), true, 1));

        // A message across chunks, and several in one chunk.
        let body = chunk(&[&b"one"[..], b"two", b"three"]);
        let mut reads = vec![data(body.slice(9..)), None].into_iter();
        let (got, _, _) = gather_chunks(&mut reader, body.slice(..9), || reads.next().flatten());
        assert_eq!(got, [&b"one"[..], b"two", b"three"]);

        // The body's end and a failure come back after the messages before them, and the
        // chunk behind them is not read.
        for not_a_chunk in [None, Some(Err(h2::Error::from(h2::Reason::CANCEL)))] {
            let ends = not_a_chunk.is_none();
            let mut reads = vec![
                data(chunk(&[b"b"])),
                Some(not_a_chunk),
                data(chunk(&[b"c"])),
            ]
            .into_iter();
            let (got, bad, after) =
                gather_chunks(&mut reader, chunk(&[b"a"]), || reads.next().flatten());
            assert_eq!(got, [&b"a"[..], b"b"]);
            assert_eq!(bad, Ok(()));
            match after {
                Some(None) => assert!(ends),
                Some(Some(Err(e))) => assert_eq!(e.reason(), Some(h2::Reason::CANCEL)),
                other => panic!("{other:?}"),
            }
            assert_eq!(reads.len(), 1, "the chunk after it is not read");
        }

        // A chunk that cannot be read ends the gathering: the messages before the bad one
        // go, and its end comes back; nothing more is read.
        let mut compressed = grpc_message(b"z").to_vec();
        compressed[0] = 1;
        let mut bad_chunk = chunk(&[b"b"]).to_vec();
        bad_chunk.extend_from_slice(&compressed);
        let mut reads = vec![data(Bytes::from(bad_chunk)), data(chunk(&[b"c"]))].into_iter();
        let mut reader = MessageReader::default();
        let (got, bad, after) =
            gather_chunks(&mut reader, chunk(&[b"a"]), || reads.next().flatten());
        assert_eq!(got, [&b"a"[..], b"b"]);
        assert!(matches!(bad, Err(End::Transport(_))), "{bad:?}");
        assert!(after.is_none());
        assert_eq!(reads.len(), 1);
    }

    #[test]
    fn a_grpc_read_gathers_no_chunk_past_its_count_or_byte_bound() {
        let data = |b: Bytes| Some(Some(Ok::<Bytes, h2::Error>(b)));
        let mut reader = MessageReader::default();
        // Exactly READ_BURST messages: no chunk is read past them.
        let mut n = 0usize;
        let (got, _, _) = gather_chunks(&mut reader, grpc_message(b"0"), || {
            n += 1;
            data(grpc_message(b"m"))
        });
        assert_eq!(got.len(), READ_BURST);
        assert_eq!(n, READ_BURST - 1, "no read taken past the bound");

        // A chunk's messages go together: the bound is looked at between chunks.
        let many: Vec<u8> = (0..READ_BURST - 1)
            .flat_map(|_| grpc_message(b"m").to_vec())
            .collect();
        let two: Vec<u8> = [grpc_message(b"x"), grpc_message(b"y")].concat();
        let mut reads = vec![data(Bytes::from(two)), data(grpc_message(b"z"))].into_iter();
        let (got, _, _) = gather_chunks(&mut reader, Bytes::from(many), || reads.next().flatten());
        assert_eq!(got.len(), READ_BURST + 1);
        assert_eq!(
            reads.len(),
            1,
            "no chunk after the one that reached the bound"
        );

        // Messages holding the frame limit in bytes, exactly: no more is read; one byte
        // under it, the next chunk is.
        let half = FRAME_LIMIT / 2;
        for (first, reads_taken) in [(half, 1), (half - 1, 2)] {
            let mut n = 0usize;
            let (got, _, _) = gather_chunks(&mut reader, grpc_message(&vec![0; first]), || {
                n += 1;
                data(grpc_message(&vec![1; half]))
            });
            assert_eq!((got.len(), n), (reads_taken + 1, reads_taken), "{first}");
        }
    }

    #[test]
    fn a_websocket_read_gathers_the_frames_read_already_in_order_within_its_bounds() {
        let frame = |i: u8, len: usize| Bytes::from(vec![i; len]);
        let bin = |i: u8, len: usize| Some(Some(Ok(Incoming::Binary(frame(i, len)))));
        let firsts =
            |f: &std::collections::VecDeque<Bytes>| -> Vec<u8> { f.iter().map(|b| b[0]).collect() };

        // Frames in order, control messages passed over, up to the first read not yet come.
        let mut reads = vec![
            bin(1, 3),
            Some(Some(Ok(Incoming::Control))),
            bin(2, 3),
            None,
        ]
        .into_iter();
        let (frames, after) = gather_frames(frame(0, 3), || reads.next().flatten());
        assert_eq!(firsts(&frames), vec![0, 1, 2]);
        assert!(after.is_none());
        assert_eq!(
            reads.next(),
            None,
            "nothing read past the first read not yet come"
        );

        // The first read that is not a frame comes back, after the frames before it.
        for not_a_frame in [
            Some(Ok(Incoming::Close(Some(1000)))),
            Some(Err(ReadError::TooLarge)),
            None,
        ] {
            let mut reads = vec![bin(1, 3), Some(not_a_frame.clone()), bin(2, 3)].into_iter();
            let (frames, after) = gather_frames(frame(0, 3), || reads.next().flatten());
            assert_eq!(firsts(&frames), vec![0, 1]);
            assert_eq!(after, Some(not_a_frame));
            assert_eq!(reads.len(), 1, "the frame after it is not read");
        }

        // At most READ_BURST frames.
        let mut n = 0u8;
        let (frames, after) = gather_frames(frame(0, 1), || {
            n += 1;
            bin(n, 1)
        });
        assert_eq!(frames.len(), READ_BURST);
        assert_eq!(firsts(&frames), (0..READ_BURST as u8).collect::<Vec<_>>());
        assert!(after.is_none());
        assert_eq!(n as usize, READ_BURST - 1, "no read taken past the bound");

        // No more once they hold the frame limit in bytes: the frame that reaches it is the
        // last taken.
        let half = FRAME_LIMIT / 2;
        let mut n = 0u8;
        let (frames, _) = gather_frames(frame(0, half - 1), || {
            n += 1;
            bin(n, half)
        });
        assert_eq!(
            frames.len(),
            3,
            "under the limit after two, at or over it after three"
        );
        let (frames, _) = gather_frames(frame(0, FRAME_LIMIT), || bin(1, 1));
        assert_eq!(frames.len(), 1, "a frame of the limit goes alone");
    }

    /// An open gRPC call over an in-memory pipe: its send half, and the messages the server
    /// reads from its body, in order.
    async fn open_call() -> (h2::SendStream<Bytes>, mpsc::UnboundedReceiver<Bytes>) {
        open_call_with_window(65_535).await
    }

    /// A call to a server whose stream and connection windows are `window` bytes.
    async fn open_call_with_window(
        window: u32,
    ) -> (h2::SendStream<Bytes>, mpsc::UnboundedReceiver<Bytes>) {
        let c = call(window, false).await;
        (c.send, c.messages)
    }

    /// What the server of an in-memory call read from its body, in order.
    #[derive(Debug, PartialEq)]
    enum Read {
        /// One DATA frame of this many bytes.
        Data(usize),
        /// The end of the stream.
        End,
        /// The call was reset, for this reason.
        Reset(Option<h2::Reason>),
    }

    /// An open gRPC call over an in-memory pipe.
    struct Call {
        send: h2::SendStream<Bytes>,
        /// The response's body: where the session's reader sees how the call ended.
        body: h2::RecvStream,
        /// The messages the server read from the call's body, in order.
        messages: mpsc::UnboundedReceiver<Bytes>,
        /// What the server read, DATA frame by DATA frame, and then how the body ended.
        reads: mpsc::UnboundedReceiver<Read>,
        /// Makes a server that holds its window give back all it has read so far.
        release: mpsc::UnboundedSender<()>,
    }

    /// A call to a server whose stream and connection windows are `window` bytes. The server
    /// gives back the window of what it reads at once, or, when it `hold`s, only when told
    /// ([`Call::release`]).
    async fn call(window: u32, hold: bool) -> Call {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (messages_tx, messages) = mpsc::unbounded_channel();
        let (reads_tx, reads) = mpsc::unbounded_channel();
        let (release, mut released) = mpsc::unbounded_channel::<()>();
        tokio::spawn(async move {
            let mut conn = h2::server::Builder::new()
                .initial_window_size(window)
                .initial_connection_window_size(window)
                .handshake::<_, Bytes>(server_io)
                .await
                .expect("a server");
            let Some(Ok((req, mut respond))) = conn.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let head = http::Response::builder().status(200).body(()).unwrap();
                let _send = respond.send_response(head, false).expect("a response");
                let mut body = req.into_body();
                let mut reader = MessageReader::default();
                let mut unreleased = 0;
                loop {
                    tokio::select! {
                        Some(()) = released.recv() => {
                            let _ = body.flow_control().release_capacity(unreleased);
                            unreleased = 0;
                        }
                        chunk = body.data() => match chunk {
                            Some(Ok(chunk)) => {
                                let _ = reads_tx.send(Read::Data(chunk.len()));
                                if hold {
                                    unreleased += chunk.len();
                                } else {
                                    let _ = body.flow_control().release_capacity(chunk.len());
                                }
                                reader.push(&chunk);
                                while let Ok(Some(m)) = reader.next_message() {
                                    let _ = messages_tx.send(m);
                                }
                            }
                            Some(Err(e)) => {
                                let _ = reads_tx.send(Read::Reset(e.reason()));
                                break;
                            }
                            None => {
                                let _ = reads_tx.send(Read::End);
                                break;
                            }
                        },
                    }
                }
                // The call stays open for the client: it ends when the connection does.
                std::future::pending::<()>().await;
            });
            while let Some(Ok(_)) = conn.accept().await {}
        });
        let (client, conn) = h2::client::handshake(client_io).await.expect("a client");
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut client = client.ready().await.expect("ready");
        let request = http::Request::post("http://nervix/").body(()).unwrap();
        let (response, send) = client.send_request(request, false).expect("a call");
        let body = response.await.expect("its response").into_body();
        Call {
            send,
            body,
            messages,
            reads,
            release,
        }
    }

    #[test]
    fn the_driver_writes_into_a_grpc_call_only_behind_what_its_writer_holds() {
        run(async {
            let (send, mut got) = open_call().await;
            let f = |i: u8| Bytes::from(vec![i; 10]);
            // The next message the server read; `None` when none came within a second.
            async fn next(got: &mut mpsc::UnboundedReceiver<Bytes>) -> Option<Bytes> {
                timeout(Duration::from_secs(1), got.recv())
                    .await
                    .ok()
                    .flatten()
            }
            let line = Line::default();
            assert_eq!(line.stage(&f(0)), None, "a call not open yet takes nothing");
            line.open(send);

            // Frames staged in one turn leave at its end, in order; the first tells the
            // driver that the line has something to flush.
            assert_eq!(line.stage(&f(1)), Some(true));
            assert_eq!(line.stage(&f(2)), Some(false));
            line.flush();
            assert_eq!(next(&mut got).await, Some(f(1)));
            assert_eq!(next(&mut got).await, Some(f(2)));

            // A frame that goes to the writer's queue: what was staged leaves first...
            assert_eq!(line.stage(&f(3)), Some(true));
            line.queue();
            assert_eq!(
                next(&mut got).await,
                Some(f(3)),
                "written before the writer's frame"
            );
            // ...and nothing is staged while the writer has not written it.
            assert_eq!(line.stage(&f(5)), None);
            assert!(line.send_data(grpc_message(&f(4))));
            line.written(1);
            assert_eq!(
                line.stage(&f(5)),
                Some(true),
                "staged again once it is written"
            );
            line.flush();
            assert_eq!(next(&mut got).await, Some(f(4)));
            assert_eq!(next(&mut got).await, Some(f(5)));

            // A frame the stream has no capacity for (the peer's window is 65,535 bytes)
            // goes to the writer, which waits for capacity within its deadline.
            assert_eq!(line.stage(&Bytes::from(vec![9u8; 70_000])), None);
            assert_eq!(line.stage(&f(6)), Some(true), "a frame within it is staged");

            // A call the writer gave up takes nothing more.
            drop(line.close());
            assert_eq!(line.stage(&f(7)), None);
        });
    }

    /// Waits (a second at most) until the line's call has `want` bytes of capacity.
    async fn capacity_of(line: &Line, want: usize) -> usize {
        let capacity = || {
            line.lock()
                .send
                .as_ref()
                .map_or(0, h2::SendStream::capacity)
        };
        let _ = timeout(Duration::from_secs(1), async {
            while capacity() < want {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await;
        capacity()
    }

    #[test]
    fn a_frame_is_staged_when_its_message_fits_the_streams_capacity_exactly_and_not_a_byte_more() {
        run(async {
            let (send, mut got) = open_call().await;
            let line = Line::default();
            line.open(send);
            let cap = capacity_of(&line, 65_535).await;
            assert_eq!(cap, 65_535, "the peer's window");
            // A message is the frame and its 5-byte prefix.
            let over = Bytes::from(vec![1u8; cap - 4]);
            assert_eq!(line.stage(&over), None, "one byte over the capacity");
            let exact = Bytes::from(vec![2u8; cap - 5]);
            assert_eq!(line.stage(&exact), Some(true), "exactly the capacity");
            assert_eq!(line.lock().staged.len(), cap);
            line.flush();
            let m = timeout(Duration::from_secs(1), got.recv()).await;
            assert_eq!(m.ok().flatten(), Some(exact));
        });
    }

    #[test]
    fn staged_messages_reaching_the_burst_bound_exactly_stay_staged_and_one_byte_more_is_written_first(
    ) {
        run(async {
            let (send, _got) = open_call_with_window(1 << 22).await;
            let line = Line::default();
            line.open(send);
            assert!(capacity_of(&line, WRITE_BURST_BYTES).await >= WRITE_BURST_BYTES);
            let staged = || line.lock().staged.len();
            let half = WRITE_BURST_BYTES / 2;
            assert_eq!(line.stage(&Bytes::from(vec![1u8; half - 5])), Some(true));
            assert_eq!(line.stage(&Bytes::from(vec![2u8; half - 5])), Some(false));
            assert_eq!(
                staged(),
                WRITE_BURST_BYTES,
                "exactly the bound: not written yet"
            );
            // One more message: what is staged is written before it.
            let _ = line.stage(&Bytes::from(vec![3u8; 10]));
            assert!(
                staged() <= 15,
                "written first: {} bytes still staged",
                staged()
            );
        });
    }

    #[test]
    fn a_frame_the_writers_queue_did_not_take_lets_the_driver_stage_again() {
        run(async {
            let (send, _got) = open_call().await;
            let line = Line::default();
            line.open(send);
            let _ = capacity_of(&line, 1).await;
            line.queue();
            assert_eq!(
                line.stage(&Bytes::from_static(b"a")),
                None,
                "behind the writer"
            );
            line.unqueued();
            assert_eq!(line.stage(&Bytes::from_static(b"b")), Some(true));
        });
    }

    #[test]
    fn once_the_writer_has_written_everything_capacity_is_asked_again_for_the_driver() {
        run(async {
            let (send, _got) = open_call_with_window(1 << 22).await;
            let line = Line::default();
            line.open(send);
            assert!(capacity_of(&line, WRITE_BURST_BYTES).await >= WRITE_BURST_BYTES);
            // The writer's frame takes all the capacity asked for.
            line.queue();
            assert!(line.send_data(grpc_message(&vec![7u8; WRITE_BURST_BYTES - 5])));
            assert_eq!(capacity_of(&line, usize::MAX).await, 0, "all of it used");
            line.written(1);
            assert!(capacity_of(&line, WRITE_BURST_BYTES).await >= WRITE_BURST_BYTES);
            assert_eq!(line.stage(&Bytes::from_static(b"c")), Some(true));
        });
    }

    /// Runs `f` on two worker threads, and leaves them without waiting for them: a writer that
    /// never yields holds one of them, and the test on the other fails within its own
    /// bounded waits instead of hanging.
    fn run_beside<F>(f: F) -> F::Output
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let done = rt.block_on(rt.spawn(f));
        rt.shutdown_background();
        done.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    }

    /// `f`, which must be done within ten seconds.
    async fn within<F: std::future::Future>(f: F) -> F::Output {
        timeout(Duration::from_secs(10), f)
            .await
            .expect("done within ten seconds")
    }

    /// The window of the server a writer writes to in the tests below.
    const WINDOW: usize = 4096;

    /// `len` bytes that tell where in a frame each came from, and which frame.
    fn pattern(len: usize, seed: u8) -> Bytes {
        (0..len)
            .map(|i| (i % 251) as u8 ^ seed.wrapping_mul(31))
            .collect()
    }

    /// A gRPC session's writer at work, on a call to a server whose window is [`WINDOW`]
    /// bytes and which gives it back only when told.
    struct Writer {
        line: std::sync::Arc<Line>,
        out: mpsc::Sender<Out>,
        task: tokio::task::JoinHandle<()>,
        body: h2::RecvStream,
        messages: mpsc::UnboundedReceiver<Bytes>,
        reads: mpsc::UnboundedReceiver<Read>,
        release: mpsc::UnboundedSender<()>,
    }

    impl Writer {
        async fn start(write_timeout: Duration) -> Self {
            let Call {
                send,
                body,
                messages,
                reads,
                release,
            } = call(WINDOW as u32, true).await;
            let line = std::sync::Arc::new(Line::default());
            line.open(send);
            let (out, queue) = mpsc::channel(16);
            let task = tokio::spawn(write_grpc(line.clone(), queue, write_timeout));
            Writer {
                line,
                out,
                task,
                body,
                messages,
                reads,
                release,
            }
        }

        /// Hands `o` to the writer, as the driver does.
        async fn give(&self, o: Out) {
            self.line.queue();
            self.out.send(o).await.expect("the writer takes it");
        }

        /// What the server reads until it has read `bytes` bytes of DATA, or the call ended.
        async fn read(&mut self, bytes: usize) -> Vec<Read> {
            let mut got = Vec::new();
            let mut read = 0;
            while read < bytes {
                let r = within(self.reads.recv()).await.expect("the server reads");
                match r {
                    Read::Data(n) => read += n,
                    _ => {
                        got.push(r);
                        break;
                    }
                }
                got.push(r);
            }
            got
        }

        /// Reads `bytes` bytes of DATA window by window, giving the window back after each:
        /// each time all the window the server gave, in DATA frames no larger than it, and
        /// nothing else.
        async fn take(&mut self, bytes: usize) {
            let mut read = 0;
            while read < bytes {
                let want = WINDOW.min(bytes - read);
                let got = self.read(want).await;
                assert!(
                    got.iter()
                        .all(|r| matches!(r, Read::Data(n) if *n <= WINDOW)),
                    "{got:?}"
                );
                let n: usize = got
                    .iter()
                    .map(|r| match r {
                        Read::Data(n) => *n,
                        _ => 0,
                    })
                    .sum();
                assert_eq!(n, want, "all the window, no more");
                read += n;
                self.release.send(()).expect("the server");
            }
        }

        /// The next message the server read.
        async fn message(&mut self) -> Bytes {
            within(self.messages.recv()).await.expect("a message")
        }

        /// Waits until the driver may stage into the call again, and stages `frame`.
        async fn stage(&self, frame: &Bytes) {
            within(async {
                while self.line.stage(frame).is_none() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
            .await;
        }
    }

    #[test]
    fn a_grpc_frame_larger_than_the_calls_window_is_written_whole_window_by_window() {
        run_beside(async {
            let mut w = Writer::start(Duration::from_secs(30)).await;
            let big = pattern(10 * WINDOW, 1);
            w.give(Out::Frame(big.clone())).await;
            w.take(WINDOW).await;
            // The writer holds the rest until the server gives its window back, and the
            // driver stages nothing meanwhile.
            assert_eq!(w.line.lock().queued, 1, "not all written yet");
            assert_eq!(w.line.stage(&Bytes::from_static(b"a")), None);
            w.take(big.len() + 5 - WINDOW).await;
            assert_eq!(w.message().await, big, "whole and in order");
            // Once it is written, the driver writes into the call again, after it.
            let after = pattern(10, 2);
            w.stage(&after).await;
            w.line.flush();
            assert_eq!(w.message().await, after);
        });
    }

    #[test]
    fn grpc_frames_that_meet_a_full_window_wait_for_it_and_then_go_on_in_order() {
        run_beside(async {
            let mut w = Writer::start(Duration::from_secs(30)).await;
            let first = pattern(WINDOW - 5, 0);
            w.give(Out::Frame(first.clone())).await;
            assert_eq!(w.read(WINDOW).await, vec![Read::Data(WINDOW)]);
            assert_eq!(w.message().await, first);
            let behind: Vec<Bytes> = (1..=4).map(|i| pattern(100, i)).collect();
            for f in &behind {
                w.give(Out::Frame(f.clone())).await;
            }
            assert!(w.reads.try_recv().is_err(), "the window is full");
            w.release.send(()).unwrap();
            for f in &behind {
                assert_eq!(&w.message().await, f);
            }
            // What is left of the window given back goes on being used.
            let last = pattern(100, 5);
            w.give(Out::Frame(last.clone())).await;
            assert_eq!(w.message().await, last);
        });
    }

    #[test]
    fn t_8_a_grpc_write_that_gets_no_window_resets_the_call_at_the_write_deadline() {
        run_beside(async {
            let wait = Duration::from_millis(200);
            let mut w = Writer::start(wait).await;
            let started = Instant::now();
            w.give(Out::Frame(pattern(2 * WINDOW, 3))).await;
            assert_eq!(w.read(WINDOW).await, vec![Read::Data(WINDOW)]);
            // The server never gives its window back: the writer gives up at its deadline.
            within(&mut w.task).await.expect("the writer ends");
            assert!(started.elapsed() >= wait, "not before the write deadline");
            assert_eq!(
                within(w.reads.recv()).await,
                Some(Read::Reset(Some(h2::Reason::CANCEL))),
                "the call is reset"
            );
            // The session's reader sees the call end, and the driver writes nothing more.
            let end = within(w.body.data()).await.expect("the call's end");
            assert_eq!(end.expect_err("a reset").reason(), Some(h2::Reason::CANCEL));
            assert_eq!(w.line.stage(&Bytes::from_static(b"a")), None);
            assert!(w.line.lock().send.is_none());
        });
    }

    #[test]
    fn a_grpc_close_ends_the_stream_once_everything_before_it_is_written() {
        run_beside(async {
            let mut w = Writer::start(Duration::from_secs(30)).await;
            let frame = pattern(3 * WINDOW, 4);
            w.give(Out::Frame(frame.clone())).await;
            w.give(Out::Close).await;
            w.take(frame.len() + 5).await;
            assert_eq!(w.message().await, frame);
            // Then the end of the stream: an empty DATA frame that ends it.
            assert_eq!(within(w.reads.recv()).await, Some(Read::Data(0)));
            assert_eq!(within(w.reads.recv()).await, Some(Read::End));
            assert_eq!(
                w.line.stage(&Bytes::from_static(b"a")),
                None,
                "nothing is written after a close"
            );
        });
    }

    trait FrameByte {
        fn frame_byte(&self) -> Option<u8>;
    }

    impl FrameByte for Out {
        fn frame_byte(&self) -> Option<u8> {
            match self {
                Out::Frame(f) => f.first().copied(),
                _ => None,
            }
        }
    }

    #[test]
    fn a_grpc_read_hands_out_the_messages_whole_in_a_data_chunk_without_copying_them() {
        let mut body = grpc_message(b"first").to_vec();
        body.extend_from_slice(&grpc_message(b"second"));
        body.extend_from_slice(&grpc_message(b"straddles"));
        let cut = body.len() - 4;
        let (one, two) = (
            Bytes::copy_from_slice(&body[..cut]),
            Bytes::copy_from_slice(&body[cut..]),
        );
        let in_chunk = |m: &Bytes| {
            let (p, q) = (m.as_ptr() as usize, one.as_ptr() as usize);
            p >= q && p + m.len() <= q + one.len()
        };
        let mut reader = MessageReader::default();
        let mut got = Vec::new();
        assert_eq!(take_chunk(&mut reader, one.clone(), &mut got), Ok(()));
        assert_eq!(got, [&b"first"[..], b"second"]);
        assert!(got.iter().all(in_chunk), "slices of the chunk, not copies");
        assert_eq!(reader.sliced(), 2);
        assert_eq!(take_chunk(&mut reader, two, &mut got), Ok(()));
        assert_eq!(got, [&b"first"[..], b"second", b"straddles"]);
        assert!(
            !in_chunk(&got[2]),
            "a message across chunks is copied together"
        );
        assert_eq!((reader.sliced(), reader.partial()), (2, 0));
    }

    #[test]
    fn f_9_a_message_sliced_out_of_a_data_frame_is_small_enough_for_the_engine_to_copy_out() {
        // The largest message that lies whole in one DATA frame the session lets the server
        // send is below the size under which the engine copies a frame before keeping it, so
        // a kept frame never holds a chunk's buffer (F-9).
        let largest = H2Settings::default().max_frame as usize - 5;
        assert!(largest < nervix_protocol::limits::COMPACT_BELOW);
    }

    #[test]
    fn t_1_a_session_body_is_read_message_by_message_across_chunks() {
        let mut body = grpc_message(b"first").to_vec();
        body.extend_from_slice(&grpc_message(b"second"));
        let mut got = Vec::new();
        let end = read_grpc_body(body.chunks(3), Some(0), |m| {
            got.push(m);
            true
        });
        assert_eq!(end, End::Finished);
        assert_eq!(
            got,
            vec![Bytes::from_static(b"first"), Bytes::from_static(b"second")]
        );
        // A reader nobody takes frames from stops at once.
        let mut got = Vec::new();
        let end = read_grpc_body([&body[..]], Some(14), |m| {
            got.push(m);
            false
        });
        assert_eq!((end, got.len()), (End::Finished, 1));
        // Cut inside the second message, whatever the status.
        let end = read_grpc_body([&body[..body.len() - 1]], Some(0), |_| true);
        assert!(matches!(end, End::Transport(_)), "{end:?}");
        assert_eq!(
            read_grpc_body([&body[..]], None, |_| true),
            End::Transport("no grpc-status".into())
        );
    }
}
