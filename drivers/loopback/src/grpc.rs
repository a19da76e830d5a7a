//! The gRPC side of a node: HTTP/2, one session per `Exchange` call.

use crate::{header_auth, lock, CallSeen, Listener, Out, Serve, Transport, EXCHANGE_PATH};
use crate::{Shared, FRAME_LIMIT};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use h2::server::SendResponse;
use h2::{Reason, RecvStream, SendStream};
use http::{HeaderMap, HeaderValue, Request, Response};
use std::future::Future;
use tokio::io::{AsyncRead, AsyncWrite};

const OK: u32 = 0;
const UNIMPLEMENTED: u32 = 12;
const UNAVAILABLE: u32 = 14;
const UNAUTHENTICATED: u32 = 16;
const OUT_OF_RANGE: u32 = 11;
const INTERNAL: u32 = 13;

/// The gRPC side of a listener: each accepted stream is served as an HTTP/2 connection.
#[derive(Clone, Copy)]
pub(crate) struct Grpc;

impl Serve for Grpc {
    fn run<T>(self, io: T, l: Listener, alpn: Option<String>) -> impl Future<Output = ()> + Send
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        connection(io, l, alpn)
    }
}

async fn connection<T>(io: T, l: Listener, alpn: Option<String>)
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Ok(mut conn) = h2::server::Builder::new()
        .initial_window_size(1 << 22)
        .initial_connection_window_size(1 << 23)
        .max_frame_size(1 << 16)
        .handshake::<_, Bytes>(io)
        .await
    else {
        return;
    };
    while let Some(Ok((req, respond))) = conn.accept().await {
        tokio::spawn(stream(req, respond, l.clone(), alpn.clone()));
    }
}

fn status_headers(code: u32) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("grpc-status", HeaderValue::from(code));
    h
}

/// Ends a call before it started: a trailers-only response.
fn refuse(mut respond: SendResponse<Bytes>, code: u32) {
    let mut r = Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .unwrap_or_default();
    r.headers_mut().extend(status_headers(code));
    let _ = respond.send_response(r, true);
}

/// One message behind the 5-byte gRPC prefix.
pub(crate) fn prefixed(frame: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(frame.len() + 5);
    b.put_u8(0);
    b.put_u32(frame.len() as u32);
    b.put_slice(frame);
    b.freeze()
}

/// Why a message stream cannot be read on.
enum Bad {
    Compressed,
    TooLarge,
}

fn next_message(buf: &mut BytesMut) -> Result<Option<Bytes>, Bad> {
    if buf.len() < 5 {
        return Ok(None);
    }
    if buf[0] != 0 {
        return Err(Bad::Compressed);
    }
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if len > FRAME_LIMIT {
        return Err(Bad::TooLarge);
    }
    if buf.len() < 5 + len {
        return Ok(None);
    }
    buf.advance(5);
    Ok(Some(buf.split_to(len).freeze()))
}

async fn stream(
    req: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
    l: Listener,
    alpn: Option<String>,
) {
    let path = req.uri().path().to_string();
    if let Some(kind) = crate::calls::kind_of(&path) {
        return crate::calls::serve(req, respond, l, alpn, kind).await;
    }
    let auth = header_auth(req.headers().get("authorization"));
    let mut body = req.into_body();
    let shared: Shared = l.shared.clone();
    let verdict = {
        let mut s = lock(&shared);
        let verdict = if path != EXCHANGE_PATH {
            Err(UNIMPLEMENTED)
        } else {
            s.check(&auth)
                .map_err(|busy| if busy { UNAVAILABLE } else { UNAUTHENTICATED })
        };
        s.stats.calls.push(CallSeen {
            node: l.node,
            transport: Transport::Grpc,
            path,
            auth: auth.clone(),
            accepted: verdict.is_ok(),
            alpn,
        });
        match verdict {
            Ok(()) => s.open(l.node).ok_or(UNAVAILABLE),
            Err(code) => Err(code),
        }
    };
    let (conn, mut rx) = match verdict {
        Ok(v) => v,
        Err(code) => return refuse(respond, code),
    };
    let head = Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .unwrap_or_default();
    let Ok(mut send) = respond.send_response(head, false) else {
        lock(&shared).closed(conn, false);
        return;
    };
    let mut buf = BytesMut::new();
    // With unpaced rows: whether the stream may hold open subscriptions, so the next batches
    // are taken whenever the connection's flow control took the previous ones.
    let unpaced = lock(&shared).unpaced_rows;
    let mut pulling = false;
    loop {
        tokio::select! {
            () = std::future::ready(()), if pulling => {
                let frames = lock(&shared).cluster.pull_rows(conn);
                pulling = !frames.is_empty();
                for f in frames {
                    if !send_within_window(&mut send, prefixed(&f)).await {
                        lock(&shared).closed(conn, false);
                        return;
                    }
                }
            }
            d = body.data() => match d {
                Some(Ok(chunk)) => {
                    pulling = unpaced;
                    let delay = lock(&shared).read_delay(l.node);
                    if let Some(delay) = delay {
                        tokio::time::sleep(delay).await;
                    }
                    let _ = body.flow_control().release_capacity(chunk.len());
                    buf.extend_from_slice(&chunk);
                    loop {
                        match next_message(&mut buf) {
                            Ok(Some(msg)) => {
                                // Under one lock: what the stream had queued first, then
                                // what this frame gives, so the order holds.
                                let outs = {
                                    let mut s = lock(&shared);
                                    let mut outs: Vec<Out> =
                                        std::iter::from_fn(|| rx.try_recv().ok()).collect();
                                    outs.extend(s.receive(conn, msg, Transport::Grpc));
                                    outs
                                };
                                for out in outs {
                                    if !deliver(&mut send, out) {
                                        return;
                                    }
                                }
                            }
                            Ok(None) => break,
                            Err(bad) => {
                                lock(&shared).closed(conn, false);
                                let code = match bad {
                                    Bad::TooLarge => OUT_OF_RANGE,
                                    Bad::Compressed => INTERNAL,
                                };
                                let _ = send.send_trailers(status_headers(code));
                                return;
                            }
                        }
                    }
                }
                Some(Err(_)) => {
                    lock(&shared).closed(conn, false);
                    return;
                }
                None => {
                    // The client half-closed: a clean end of the session.
                    lock(&shared).closed(conn, true);
                    let _ = send.send_trailers(status_headers(OK));
                    return;
                }
            },
            o = rx.recv() => match o {
                Some(out) => {
                    if !deliver(&mut send, out) {
                        return;
                    }
                }
                None => return,
            },
        }
    }
}

/// Sends `data` only as the stream is given room for it (the peer's flow-control window and
/// the send buffer's bound), so what waits to be written stays small however fast batches are
/// taken; false when the stream went. Anything sent before it is written before it.
async fn send_within_window(send: &mut SendStream<Bytes>, mut data: Bytes) -> bool {
    while !data.is_empty() {
        send.reserve_capacity(data.len());
        // Room given before (and not used up) is not announced again.
        let room = match send.capacity() {
            0 => std::future::poll_fn(|cx| send.poll_capacity(cx)).await,
            n => Some(Ok(n)),
        };
        match room {
            Some(Ok(n)) if n > 0 => {
                let chunk = data.split_to(n.min(data.len()));
                if send.send_data(chunk, false).is_err() {
                    return false;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return false,
        }
    }
    true
}

/// Sends one thing the cluster gave the stream; false when it ended the call.
fn deliver(send: &mut SendStream<Bytes>, out: Out) -> bool {
    match out {
        Out::Frame(f) => {
            let _ = send.send_data(prefixed(&f), false);
            true
        }
        Out::Raw(b) => {
            let _ = send.send_data(b, false);
            true
        }
        Out::Oversized => {
            let mut b = BytesMut::with_capacity(FRAME_LIMIT + 6);
            b.put_u8(0);
            b.put_u32(FRAME_LIMIT as u32 + 1);
            b.put_bytes(0, FRAME_LIMIT + 1);
            let _ = send.send_data(b.freeze(), false);
            true
        }
        out => {
            finish(send, out);
            false
        }
    }
}

fn finish(send: &mut SendStream<Bytes>, out: Out) {
    match out {
        Out::Close { going_away } => {
            let code = if going_away { UNAVAILABLE } else { OK };
            let _ = send.send_trailers(status_headers(code));
        }
        Out::Cut => send.send_reset(Reason::CANCEL),
        Out::Status(code) => {
            let _ = send.send_trailers(status_headers(code));
        }
        Out::Frame(_) | Out::Oversized | Out::Raw(_) => {}
    }
}

impl crate::Loopback {
    /// Sends `raw` as it is on every open session stream of `node`, then ends each cleanly
    /// (gRPC status OK, close code 1000): on gRPC a body that may end inside a message (a
    /// partial length prefix, or a prefix promising more bytes than come). Returns how many
    /// streams got it.
    pub fn send_raw_then_finish(&self, node: usize, raw: Bytes) -> usize {
        let s = lock(&self.shared);
        let mut streams = 0;
        for (conn, tx) in &s.streams {
            if s.cluster.node_of(*conn) != Some(node) {
                continue;
            }
            streams += 1;
            let _ = tx.send(Out::Raw(raw.clone()));
            let _ = tx.send(Out::Close { going_away: false });
        }
        streams
    }
}
