//! What a WebSocket client asks for and reads, alike in the async and the blocking flavour:
//! the [`Handshake`] (a URL with its path and query, the subprotocols offered, extra headers,
//! and the size limit of a message and a frame either way), why one failed
//! ([`HandshakeError`]), and what one read gave ([`Incoming`], [`ReadError`]): a text or a
//! binary message, a close and its code, a control message, or a message above the limit.

use crate::dial::Target;
use bytes::Bytes;

#[cfg(feature = "tokio")]
pub(crate) use tokio_tungstenite::tungstenite as tg;
#[cfg(all(feature = "blocking", not(feature = "tokio")))]
pub(crate) use tungstenite as tg;

pub use tg::protocol::WebSocketConfig;
/// A WebSocket message as tungstenite writes and reads it.
pub use tg::Message;

/// The largest message (and frame) a [`Handshake`] accepts either way unless told otherwise.
pub const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// How a WebSocket client connection is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    url: String,
    subprotocols: Vec<String>,
    headers: Vec<(String, String)>,
    max_message: usize,
}

impl Handshake {
    /// An upgrade at `url` (`ws://` or `wss://`, the authority as the `Host` header is to
    /// carry it, then the path and query), messages of at most [`MAX_MESSAGE`].
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            subprotocols: Vec::new(),
            headers: Vec::new(),
            max_message: MAX_MESSAGE,
        }
    }

    /// An upgrade at `path_and_query` of `target`: `wss` with TLS, `ws` without.
    pub fn at(target: &Target, path_and_query: &str) -> Self {
        let scheme = if target.tls { "wss" } else { "ws" };
        Self::new(format!("{scheme}://{}{path_and_query}", target.authority()))
    }

    /// Offers the subprotocol `name` too; the server must then pick one of those offered.
    pub fn subprotocol(mut self, name: impl Into<String>) -> Self {
        self.subprotocols.push(name.into());
        self
    }

    /// Sends the header `name: value` with the upgrade (replacing one of that name).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Accepts and sends messages (and frames) of at most `bytes`.
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }

    /// The URL asked for.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The largest message either way.
    pub fn limit(&self) -> usize {
        self.max_message
    }

    /// The tungstenite configuration of the connection: the message and frame limits.
    pub fn config(&self) -> WebSocketConfig {
        WebSocketConfig::default()
            .max_message_size(Some(self.max_message))
            .max_frame_size(Some(self.max_message))
    }

    /// The upgrade request.
    pub(crate) fn request(&self) -> Result<tg::handshake::client::Request, HandshakeError> {
        use tg::client::IntoClientRequest;
        let bad = |e: &dyn std::fmt::Display| HandshakeError::Request(e.to_string());
        let mut request = self
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| bad(&e))?;
        let headers = request.headers_mut();
        if !self.subprotocols.is_empty() {
            let v =
                http::HeaderValue::from_str(&self.subprotocols.join(", ")).map_err(|e| bad(&e))?;
            headers.insert("sec-websocket-protocol", v);
        }
        for (name, value) in &self.headers {
            let n = http::HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?;
            let v = http::HeaderValue::from_str(value).map_err(|e| bad(&e))?;
            headers.insert(n, v);
        }
        Ok(request)
    }
}

/// The subprotocol the server picked, from its upgrade answer.
pub(crate) fn chosen(response: &tg::handshake::client::Response) -> Option<String> {
    response
        .headers()
        .get("sec-websocket-protocol")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Why a WebSocket upgrade failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The request could not be made: a bad URL, header name or value.
    Request(String),
    /// The server answered the upgrade with this HTTP status.
    Refused(u16),
    /// The deadline passed during the upgrade.
    TimedOut,
    /// The upgrade failed otherwise (a cut connection, a bad answer, a subprotocol that was
    /// not offered or none when one was).
    Failed(String),
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Request(e) => write!(f, "request: {e}"),
            Self::Refused(s) => write!(f, "the upgrade was refused with HTTP status {s}"),
            Self::TimedOut => f.write_str("the deadline passed during the upgrade"),
            Self::Failed(e) => write!(f, "websocket: {e}"),
        }
    }
}

impl std::error::Error for HandshakeError {}

impl HandshakeError {
    pub(crate) fn of(e: tg::Error) -> Self {
        match e {
            tg::Error::Http(r) => Self::Refused(r.status().as_u16()),
            tg::Error::Io(e) if timed_out(&e) => Self::TimedOut,
            e => Self::Failed(e.to_string()),
        }
    }
}

/// What one read of a WebSocket gave.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Incoming {
    /// A binary message.
    Binary(Bytes),
    /// A text message.
    Text(String),
    /// The peer's close, with its code if the close frame carried one.
    Close(Option<u16>),
    /// A ping or a pong (answered by the connection itself).
    Control,
}

/// Why a read gave no message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// A message or frame above the limit: refused unread.
    TooLarge,
    /// A blocking read waited its timeout and nothing came.
    TimedOut,
    /// The connection was closed after the close handshake.
    Closed(String),
    /// The read failed otherwise.
    Failed(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge => f.write_str("a message above the size limit"),
            Self::TimedOut => f.write_str("the read timed out"),
            Self::Closed(e) | Self::Failed(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ReadError {}

/// The meaning of one read.
pub fn incoming(read: Result<Message, tg::Error>) -> Result<Incoming, ReadError> {
    match read {
        Ok(Message::Binary(b)) => Ok(Incoming::Binary(b)),
        Ok(Message::Text(t)) => Ok(Incoming::Text(t.as_str().to_string())),
        Ok(Message::Close(frame)) => Ok(Incoming::Close(frame.map(|f| u16::from(f.code)))),
        Ok(_) => Ok(Incoming::Control),
        Err(tg::Error::Io(e)) if timed_out(&e) => Err(ReadError::TimedOut),
        Err(tg::Error::Capacity(_)) => Err(ReadError::TooLarge),
        Err(e @ tg::Error::ConnectionClosed) => Err(ReadError::Closed(e.to_string())),
        Err(e) => Err(ReadError::Failed(e.to_string())),
    }
}

/// A close message with `code` (none: a close frame without a code).
pub fn close(code: Option<u16>) -> Message {
    Message::Close(code.map(|c| tg::protocol::CloseFrame {
        code: c.into(),
        reason: "".into(),
    }))
}

/// Whether an I/O error is a read or write that waited its timeout.
pub fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_message_carries_its_code_and_reads_back_as_it() {
        assert_eq!(
            incoming(Ok(close(Some(4001)))),
            Ok(Incoming::Close(Some(4001)))
        );
        assert_eq!(incoming(Ok(close(None))), Ok(Incoming::Close(None)));
        assert_eq!(
            incoming(Ok(Message::Ping(Bytes::new()))),
            Ok(Incoming::Control)
        );
        let cut = std::io::Error::new(std::io::ErrorKind::TimedOut, "slow");
        assert_eq!(incoming(Err(tg::Error::Io(cut))), Err(ReadError::TimedOut));
        let hs = Handshake::at(&Target::new("::1", 9, true), "/p?q=1");
        assert_eq!(hs.url(), "wss://[::1]:9/p?q=1");
        assert_eq!(hs.limit(), MAX_MESSAGE);
        assert_eq!(
            HandshakeError::Refused(401).to_string(),
            "the upgrade was refused with HTTP status 401"
        );
    }
}
