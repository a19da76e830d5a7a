//! The separate calls served over gRPC: `UploadResource` (a client stream), `DownloadBackup`
//! (a server stream) and `RestoreBackup`, each one call stream of the simulated cluster
//! ([`SimCluster::open_call`]): the client's messages go in as frames, the half-close as a
//! clean end and a reset as an abandoned stream, and what the node sends comes back as
//! messages, its end as the OK status.
//!
//! [`SimCluster::open_call`]: nervix_harness::cluster::SimCluster::open_call

use crate::grpc::prefixed;
use crate::{header_auth, lock, CallFault, CallSeen, Listener, Shared, Transport, FRAME_LIMIT};
use bytes::{Buf, Bytes, BytesMut};
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use http::{HeaderMap, HeaderValue, Request, Response};
use nervix_harness::cluster::{CallId, CallKind, CallOutput};

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

const OK: u32 = 0;
const UNAVAILABLE: u32 = 14;
const UNAUTHENTICATED: u32 = 16;
const OUT_OF_RANGE: u32 = 11;

/// The call a gRPC path names, if it names one of the separate calls.
pub(crate) fn kind_of(path: &str) -> Option<CallKind> {
    match path {
        UPLOAD_PATH => Some(CallKind::Upload),
        DOWNLOAD_PATH => Some(CallKind::Download),
        RESTORE_PATH => Some(CallKind::Restore),
        _ => None,
    }
}

/// The call a console path names, if it names one (T-3a).
pub(crate) fn ws_kind_of(path: &str) -> Option<CallKind> {
    match path {
        DOWNLOAD_WS_PATH => Some(CallKind::Download),
        RESTORE_WS_PATH => Some(CallKind::Restore),
        _ => None,
    }
}

/// Serves one separate call on an accepted console WebSocket: binary messages in as frames,
/// the node's frames out as binary messages, its end as a normal close (1000), and a node
/// that is down as 1001.
pub(crate) async fn serve_ws<T>(
    ws: tokio_tungstenite::WebSocketStream<T>,
    shared: Shared,
    node: usize,
    kind: CallKind,
) where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::Message;
    let close = |code: u16| {
        Message::Close(Some(CloseFrame {
            code: CloseCode::from(code),
            reason: "".into(),
        }))
    };
    let (mut sink, mut source) = ws.split();
    let opened = {
        let mut s = lock(&shared);
        let now = s.now();
        let endpoint = s.grpc_endpoints[node].clone();
        s.cluster.open_call(now, &endpoint, kind)
    };
    let Ok(id) = opened else {
        let _ = sink.send(close(1001)).await;
        return;
    };
    while let Some(m) = source.next().await {
        let outs = match m {
            Ok(Message::Binary(b)) => {
                let fault = lock(&shared).take_frame_fault(Transport::WebSocket);
                if let Some(CallFault::CloseCode(c)) = fault {
                    end(&shared, id, false);
                    let _ = sink.send(close(c)).await;
                    return;
                }
                let text = {
                    let mut s = lock(&shared);
                    let text = s.call_texts > 0;
                    s.call_texts = s.call_texts.saturating_sub(1);
                    text
                };
                if text
                    && sink
                        .send(Message::Text("not a frame".into()))
                        .await
                        .is_err()
                {
                    end(&shared, id, false);
                    return;
                }
                let mut s = lock(&shared);
                let now = s.now();
                s.cluster.call_frame(now, id, b);
                drain(&mut s.cluster, id)
            }
            Ok(Message::Close(_)) => {
                // The client left: the call ends as a transport failure would.
                end(&shared, id, false);
                return;
            }
            Ok(Message::Text(_)) => {
                end(&shared, id, false);
                let _ = sink.send(close(1003)).await;
                return;
            }
            Ok(_) => continue,
            Err(_) => {
                end(&shared, id, false);
                return;
            }
        };
        for out in outs {
            match out {
                CallOutput::Frame(f) => {
                    if sink.send(Message::Binary(f)).await.is_err() {
                        end(&shared, id, false);
                        return;
                    }
                }
                CallOutput::Close => {
                    let _ = sink.send(close(1000)).await;
                    // The closing handshake: frames the client is still sending (the chunks
                    // behind a start already answered) are read and discarded until its own
                    // close, for a bounded time. Dropping the socket with them unread resets
                    // the connection, and the reset destroys the reply in the client's receive
                    // buffer before it reads it.
                    let _ = tokio::time::timeout(CLOSE_LINGER, async {
                        while let Some(Ok(m)) = source.next().await {
                            if matches!(m, Message::Close(_)) {
                                break;
                            }
                        }
                    })
                    .await;
                    return;
                }
            }
        }
    }
    end(&shared, id, false);
}

/// How long a console call whose answer went out reads on for the client's close.
const CLOSE_LINGER: std::time::Duration = std::time::Duration::from_secs(2);

fn status(code: u32) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("grpc-status", HeaderValue::from(code));
    h
}

/// Serves one separate call on an accepted HTTP/2 stream.
pub(crate) async fn serve(
    req: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
    l: Listener,
    alpn: Option<String>,
    kind: CallKind,
) {
    let path = req.uri().path().to_string();
    let auth = header_auth(req.headers().get("authorization"));
    let mut body = req.into_body();
    let shared: Shared = l.shared.clone();
    let opened = {
        let mut s = lock(&shared);
        let verdict = s
            .check(&auth)
            .map_err(|busy| if busy { UNAVAILABLE } else { UNAUTHENTICATED });
        s.stats.calls.push(CallSeen {
            node: l.node,
            transport: Transport::Grpc,
            path,
            auth,
            accepted: verdict.is_ok(),
            alpn,
        });
        verdict.and_then(|()| {
            let now = s.now();
            let endpoint = s.grpc_endpoints[l.node].clone();
            s.cluster
                .open_call(now, &endpoint, kind)
                .map_err(|_| UNAVAILABLE)
        })
    };
    let id = match opened {
        Ok(id) => id,
        Err(code) => {
            let head = Response::builder()
                .status(200)
                .header("content-type", "application/grpc")
                .header("grpc-status", code.to_string())
                .body(())
                .unwrap_or_default();
            let _ = respond.send_response(head, true);
            return;
        }
    };
    let head = Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(())
        .unwrap_or_default();
    let Ok(mut send) = respond.send_response(head, false) else {
        end(&shared, id, false);
        return;
    };
    let mut buf = BytesMut::new();
    loop {
        match body.data().await {
            Some(Ok(chunk)) => {
                let _ = body.flow_control().release_capacity(chunk.len());
                buf.extend_from_slice(&chunk);
                while let Some(msg) = next(&mut buf) {
                    let Ok(msg) = msg else {
                        end(&shared, id, false);
                        let _ = send.send_trailers(status(OUT_OF_RANGE));
                        return;
                    };
                    let fault = lock(&shared).take_frame_fault(Transport::Grpc);
                    if let Some(CallFault::GrpcStatus(code)) = fault {
                        end(&shared, id, false);
                        let _ = send.send_trailers(status(code));
                        return;
                    }
                    let outs = {
                        let mut s = lock(&shared);
                        let now = s.now();
                        s.cluster.call_frame(now, id, msg);
                        drain(&mut s.cluster, id)
                    };
                    if forward(&mut send, outs).await {
                        return;
                    }
                }
            }
            Some(Err(_)) => {
                end(&shared, id, false);
                return;
            }
            None => {
                // The half-close: the client's last frame was sent.
                let outs = {
                    let mut s = lock(&shared);
                    let now = s.now();
                    s.cluster.call_end(now, id, true);
                    drain(&mut s.cluster, id)
                };
                if !forward(&mut send, outs).await {
                    // Nothing more will come on this call: end it.
                    let _ = send.send_trailers(status(OK));
                }
                return;
            }
        }
    }
}

fn end(shared: &Shared, id: CallId, clean: bool) {
    let mut s = lock(shared);
    let now = s.now();
    s.cluster.call_end(now, id, clean);
    while s.cluster.poll_call(id).is_some() {}
}

fn drain(cluster: &mut nervix_harness::cluster::SimCluster, id: CallId) -> Vec<CallOutput> {
    std::iter::from_fn(|| cluster.poll_call(id)).collect()
}

/// Sends the node's outputs; true once the call ended.
async fn forward(send: &mut SendStream<Bytes>, outs: Vec<CallOutput>) -> bool {
    for out in outs {
        match out {
            CallOutput::Frame(f) => {
                let mut data = prefixed(&f);
                while !data.is_empty() {
                    send.reserve_capacity(data.len());
                    match std::future::poll_fn(|cx| send.poll_capacity(cx)).await {
                        Some(Ok(n)) if n > 0 => {
                            let part = data.split_to(n.min(data.len()));
                            if send.send_data(part, false).is_err() {
                                return true;
                            }
                        }
                        Some(Ok(_)) => {}
                        _ => return true,
                    }
                }
            }
            CallOutput::Close => {
                let _ = send.send_trailers(status(OK));
                return true;
            }
        }
    }
    false
}

/// The next whole message of `buf`, or an error for a compressed or oversized one.
fn next(buf: &mut BytesMut) -> Option<Result<Bytes, ()>> {
    if buf.len() < 5 {
        return None;
    }
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if buf[0] != 0 || len > FRAME_LIMIT {
        return Some(Err(()));
    }
    if buf.len() < 5 + len {
        return None;
    }
    buf.advance(5);
    Some(Ok(buf.split_to(len).freeze()))
}
