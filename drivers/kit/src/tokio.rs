//! The async transports on tokio: a byte stream opened over the resolver's answers in order
//! (TCP, then rustls verified against the target's own host name), a WebSocket client
//! handshake, and an HTTP/2 client for gRPC calls.

use crate::dial::{self, AddressOrder, Target};
use crate::resolve::{ConnectError, Resolver};
use crate::ws::{self, Handshake, HandshakeError};
use bytes::Bytes;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio::time::Instant;

pub use tokio_rustls::TlsConnector;
pub use tokio_tungstenite::WebSocketStream;

/// A plain or TLS byte stream.
#[derive(Debug)]
#[non_exhaustive]
pub enum Io {
    /// A TCP connection.
    Plain(TcpStream),
    /// TLS over a TCP connection.
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    // Vectored writes go through: h2 writes a large DATA frame's header and payload in one
    // system call only over a stream that says it takes them, and in two otherwise.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Io::Plain(s) => s.is_write_vectored(),
            Io::Tls(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Aborts a task when dropped, so a connection's helpers never outlive it.
#[derive(Debug)]
pub struct AbortOnDrop(pub JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The addresses of `host`, from `resolver` on a thread of its own: the caller's deadline
/// cuts a resolver that does not answer.
pub async fn lookup(
    resolver: &Resolver,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, ConnectError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    resolver.lookup(host, port, move |a| {
        let _ = tx.send(a);
    });
    rx.await.unwrap_or_else(|_| Err(dial::lookup_not_run(host)))
}

/// Opens a byte stream to `target`: its host is looked up with `resolver`, every address is
/// tried in the order of the answer, and a TLS target gets TLS with `tls` (refused with
/// [`ConnectError::NoTls`] without), verified against the target's own host name whatever
/// address it resolved to. The caller bounds the whole with its deadline ([`open_by`]).
pub async fn open(
    target: &Target,
    resolver: &Resolver,
    tls: Option<&TlsConnector>,
) -> Result<Io, ConnectError> {
    let mut addrs = AddressOrder::new(lookup(resolver, &target.host, target.port).await?);
    let tcp = loop {
        let Some(a) = addrs.next_address() else {
            return Err(addrs.exhausted(&target.host));
        };
        match TcpStream::connect(a).await {
            Ok(s) => break s,
            Err(err) => addrs.failed(err),
        }
    };
    tcp.set_nodelay(true).map_err(ConnectError::Connect)?;
    if !target.tls {
        return Ok(Io::Plain(tcp));
    }
    let connector = tls.ok_or(ConnectError::NoTls)?;
    let name = dial::server_name(target.host.clone())?;
    let s = connector
        .connect(name, tcp)
        .await
        .map_err(ConnectError::Tls)?;
    Ok(Io::Tls(Box::new(s)))
}

/// [`open`] by `deadline`: [`ConnectError::TimedOut`] when it passes first.
pub async fn open_by(
    deadline: Instant,
    target: &Target,
    resolver: &Resolver,
    tls: Option<&TlsConnector>,
) -> Result<Io, ConnectError> {
    tokio::time::timeout_at(deadline, open(target, resolver, tls))
        .await
        .unwrap_or(Err(ConnectError::TimedOut))
}

/// The WebSocket client handshake `hs` over `io`: the upgrade with its subprotocols and
/// headers, messages limited either way. The connection and the subprotocol the server
/// picked come back. The caller bounds it with its deadline.
pub async fn websocket<S>(
    io: S,
    hs: &Handshake,
) -> Result<(WebSocketStream<S>, Option<String>), HandshakeError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let request = hs.request()?;
    match tokio_tungstenite::client_async_with_config(request, io, Some(hs.config())).await {
        Ok((ws, response)) => Ok((ws, ws::chosen(&response))),
        Err(e) => Err(HandshakeError::of(e)),
    }
}

/// The flow-control settings of an HTTP/2 client connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H2Settings {
    /// The initial window of each stream, in bytes.
    pub stream_window: u32,
    /// The initial window of the connection, in bytes.
    pub connection_window: u32,
    /// The largest frame the peer may send, in bytes.
    pub max_frame: u32,
}

impl Default for H2Settings {
    /// A 4 MiB stream window, an 8 MiB connection window, 64 KiB frames.
    fn default() -> Self {
        Self {
            stream_window: 1 << 22,
            connection_window: 1 << 23,
            max_frame: 1 << 16,
        }
    }
}

/// An HTTP/2 client over `io`, ready to send a request; the connection runs on a task that
/// ends when the returned guard is dropped. The caller bounds it with its deadline.
pub async fn h2_client<S>(
    io: S,
    settings: &H2Settings,
) -> Result<(h2::client::SendRequest<Bytes>, AbortOnDrop), h2::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (client, conn) = h2::client::Builder::new()
        .initial_window_size(settings.stream_window)
        .initial_connection_window_size(settings.connection_window)
        .max_frame_size(settings.max_frame)
        .handshake::<S, Bytes>(io)
        .await?;
    let conn = AbortOnDrop(tokio::spawn(async move {
        let _ = conn.await;
    }));
    let client = client.ready().await?;
    Ok((client, conn))
}

/// A gRPC call's request to `url` (`http(s)://authority/service/method`): a POST with
/// `content-type: application/grpc`, `te: trailers`, and `headers`.
pub fn grpc_request(url: &str, headers: &[(&str, &str)]) -> Result<http::Request<()>, http::Error> {
    let mut r = http::Request::post(url)
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (name, value) in headers {
        r = r.header(*name, *value);
    }
    r.body(())
}
