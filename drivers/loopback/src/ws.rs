//! The console side of a node: WebSocket on `/console/ws`, one binary message per frame.

use crate::{
    decode_basic, header_auth, lock, AuthSeen, CallSeen, Listener, Out, Serve, Transport,
    CONSOLE_PATH, FRAME_LIMIT,
};
use futures_util::{SinkExt, StreamExt};
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// The console side of a listener: each accepted stream is served as a WebSocket console.
#[derive(Clone, Copy)]
pub(crate) struct Console;

impl Serve for Console {
    fn run<T>(self, io: T, l: Listener, alpn: Option<String>) -> impl Future<Output = ()> + Send
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        console(io, l, alpn)
    }
}

/// Form-decodes one query value: `+` is a space, `%XX` an octet.
fn form_decode(v: &str) -> Option<String> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

fn query_auth(query: Option<&str>) -> Option<AuthSeen> {
    let q = query?;
    let raw = q
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "auth")
        .map(|(_, v)| v)?;
    Some(AuthSeen::Query(
        form_decode(raw).and_then(|v| decode_basic(&v)),
    ))
}

fn refusal(status: u16) -> ErrorResponse {
    let mut r = ErrorResponse::new(None);
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or_default();
    r
}

fn close(code: u16) -> Message {
    Message::Close(Some(CloseFrame {
        code: CloseCode::from(code),
        reason: "".into(),
    }))
}

#[allow(clippy::result_large_err)]
async fn console<T>(io: T, l: Listener, alpn: Option<String>)
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let shared = l.shared.clone();
    let node = l.node;
    let accepted = Arc::new(Mutex::new(false));
    let flag = accepted.clone();
    let kind = Arc::new(Mutex::new(None));
    let kind_seen = kind.clone();
    let check = move |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let path = req.uri().path().to_string();
        let auth = match req.headers().get("authorization") {
            Some(h) => header_auth(Some(h)),
            None => query_auth(req.uri().query()).unwrap_or(AuthSeen::Missing),
        };
        let mut s = lock(&shared);
        let call = crate::calls::ws_kind_of(&path);
        *kind_seen.lock().unwrap_or_else(|e| e.into_inner()) = call;
        let verdict = if path != CONSOLE_PATH && call.is_none() {
            Err(404)
        } else {
            s.check(&auth).map_err(|busy| if busy { 503 } else { 401 })
        };
        s.stats.calls.push(CallSeen {
            node,
            transport: Transport::WebSocket,
            path,
            auth,
            accepted: verdict.is_ok(),
            alpn: alpn.clone(),
        });
        match verdict {
            Ok(()) => {
                *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
                Ok(resp)
            }
            Err(code) => Err(refusal(code)),
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(FRAME_LIMIT))
        .max_frame_size(Some(FRAME_LIMIT));
    let Ok(ws) = tokio_tungstenite::accept_hdr_async_with_config(io, check, Some(config)).await
    else {
        return;
    };
    let shared = l.shared.clone();
    let call = *kind.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(kind) = call {
        return crate::calls::serve_ws(ws, shared, node, kind).await;
    }
    let (mut sink, mut source) = ws.split();
    let opened = lock(&shared).open(node);
    let Some((conn, mut rx)) = opened else {
        let _ = sink.send(close(1001)).await;
        return;
    };
    // With unpaced rows: whether the stream may hold open subscriptions, so the next batches
    // are taken whenever the socket took the previous ones.
    let unpaced = lock(&shared).unpaced_rows;
    let mut pulling = false;
    loop {
        tokio::select! {
            () = std::future::ready(()), if pulling => {
                let frames = lock(&shared).cluster.pull_rows(conn);
                pulling = !frames.is_empty();
                for f in frames {
                    if sink.feed(Message::Binary(f)).await.is_err() {
                        lock(&shared).closed(conn, false);
                        return;
                    }
                }
                if sink.flush().await.is_err() {
                    lock(&shared).closed(conn, false);
                    return;
                }
            }
            m = source.next() => match m {
                Some(Ok(Message::Binary(b))) => {
                    pulling = unpaced;
                    let delay = lock(&shared).read_delay(node);
                    if let Some(delay) = delay {
                        tokio::time::sleep(delay).await;
                    }
                    // Under one lock: what the console had queued first, then what this
                    // frame gives, so the order holds.
                    let outs = {
                        let mut s = lock(&shared);
                        let mut outs: Vec<Out> =
                            std::iter::from_fn(|| rx.try_recv().ok()).collect();
                        outs.extend(s.receive(conn, b, Transport::WebSocket));
                        outs
                    };
                    for out in outs {
                        if !deliver(&mut sink, out).await {
                            return;
                        }
                    }
                }
                Some(Ok(Message::Text(_))) => {
                    {
                        let mut s = lock(&shared);
                        s.stats.non_binary += 1;
                        s.closed(conn, false);
                    }
                    let _ = sink.send(close(1003)).await;
                    return;
                }
                Some(Ok(Message::Close(_))) => {
                    lock(&shared).closed(conn, true);
                    let _ = sink.close().await;
                    return;
                }
                Some(Ok(_)) => {}
                Some(Err(WsError::Capacity(_))) => {
                    lock(&shared).closed(conn, false);
                    let _ = sink.send(close(1009)).await;
                    return;
                }
                Some(Err(_)) | None => {
                    lock(&shared).closed(conn, false);
                    return;
                }
            },
            o = rx.recv() => match o {
                Some(out) => {
                    if !deliver(&mut sink, out).await {
                        return;
                    }
                }
                None => return,
            },
        }
    }
}

/// Sends one thing the cluster gave the console; false when it ended the connection.
async fn deliver<S>(sink: &mut S, out: Out) -> bool
where
    S: futures_util::Sink<Message> + Unpin,
{
    match out {
        Out::Frame(f) | Out::Raw(f) => {
            let _ = sink.send(Message::Binary(f)).await;
            true
        }
        Out::Oversized => {
            let big = bytes::Bytes::from(vec![0u8; FRAME_LIMIT + 1]);
            let _ = sink.send(Message::Binary(big)).await;
            true
        }
        Out::Close { going_away } => {
            let _ = sink.send(close(if going_away { 1001 } else { 1000 })).await;
            false
        }
        Out::Status(code) => {
            let _ = sink.send(close(code as u16)).await;
            false
        }
        Out::Cut => false,
    }
}

impl crate::Loopback {
    /// Sends `count` unsolicited server notices of about `size` bytes each on every open
    /// session stream of `node`, over either transport, at once: a peer flooding the client
    /// with frames nobody asked for (C-7). Returns how many streams got them.
    pub fn flood_notices(&self, node: usize, count: usize, size: usize) -> usize {
        use nervix_protocol::encode::Encoder;
        use nervix_protocol::frame::ServerMessageRoot;
        use nervix_protocol::schema::{NoticeLevel, ServerBodyT, ServerMessageT, ServerNoticeT};
        let notice = ServerMessageT {
            body: ServerBodyT::ServerNotice(Box::new(ServerNoticeT {
                level: Some(NoticeLevel::Info),
                message: "n".repeat(size),
            })),
        };
        let Ok(frame) = Encoder::new().encode::<ServerMessageRoot>(&notice) else {
            return 0;
        };
        let s = lock(&self.shared);
        let mut streams = 0;
        for (conn, tx) in &s.streams {
            if s.cluster.node_of(*conn) != Some(node) {
                continue;
            }
            streams += 1;
            for _ in 0..count {
                let _ = tx.send(Out::Frame(frame.clone()));
            }
        }
        streams
    }
}
