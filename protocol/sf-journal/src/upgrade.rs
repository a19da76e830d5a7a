//! The WebSocket upgrade of the QWP acknowledgement protocol (SF-W1 to SF-W3, SF-16): the
//! request's path and headers, and what the response's status and headers mean. Headers are
//! given as name and value pairs; names compare without regard to ASCII case.

/// The upgrade path.
pub const WRITE_PATH: &str = "/api/v4/write";
/// The highest QWP version this client speaks.
pub const MAX_VERSION: u32 = 1;

/// What the client asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpgradeRequest {
    /// `X-QWP-Client-Id`, sent only when configured.
    pub client_id: Option<String>,
    /// Whether `request_durable_ack=on`.
    pub durable_ack: bool,
    /// The `Authorization` value, if any.
    pub authorization: Option<String>,
}

impl UpgradeRequest {
    /// The headers to send with `GET /api/v4/write`, besides the WebSocket ones.
    #[must_use]
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut h = vec![("X-QWP-Max-Version".to_owned(), MAX_VERSION.to_string())];
        if let Some(id) = &self.client_id {
            h.push(("X-QWP-Client-Id".to_owned(), id.clone()));
        }
        if self.durable_ack {
            h.push(("X-QWP-Request-Durable-Ack".to_owned(), "true".to_owned()));
        }
        if let Some(a) = &self.authorization {
            h.push(("Authorization".to_owned(), a.clone()));
        }
        h
    }
}

/// What a 101 response settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// The QWP version the server chose.
    pub version: u32,
    /// The server's batch size limit; 0 when absent or unreadable (use the local budget).
    pub max_batch_size: u64,
    /// Whether the server confirmed durable acknowledgements.
    pub durable_ack: bool,
}

/// Why an upgrade failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UpgradeError {
    /// 401 or 403.
    #[error("authentication refused (HTTP {0})")]
    Auth(u16),
    /// 421 naming the server's role or zone: this server is not the one to write to.
    #[error("role mismatch: role {role:?}, zone {zone:?}")]
    RoleMismatch {
        /// `X-QuestDB-Role`.
        role: Option<String>,
        /// `X-QuestDB-Zone`.
        zone: Option<String>,
    },
    /// Any other status.
    #[error("upgrade refused with HTTP {0}")]
    Refused(u16),
    /// A version of 0, above ours, or unreadable.
    #[error("server QWP version {0:?} is not one this client speaks")]
    Version(String),
    /// Durable acknowledgement requested but not confirmed (terminal).
    #[error("durable acknowledgement requested but the server did not enable it")]
    DurableAckUnavailable,
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// Reads the upgrade response: its status and headers.
pub fn check_response(
    status: u16,
    headers: &[(String, String)],
    request: &UpgradeRequest,
) -> Result<Negotiated, UpgradeError> {
    match status {
        101 => {}
        401 | 403 => return Err(UpgradeError::Auth(status)),
        421 => {
            let role = header(headers, "X-QuestDB-Role").map(str::to_owned);
            let zone = header(headers, "X-QuestDB-Zone").map(str::to_owned);
            if role.is_some() || zone.is_some() {
                return Err(UpgradeError::RoleMismatch { role, zone });
            }
            return Err(UpgradeError::Refused(status));
        }
        _ => return Err(UpgradeError::Refused(status)),
    }
    let version = match header(headers, "X-QWP-Version") {
        None => 1,
        Some(v) => match v.parse::<u32>() {
            Ok(n) if (1..=MAX_VERSION).contains(&n) => n,
            _ => return Err(UpgradeError::Version(v.to_owned())),
        },
    };
    let max_batch_size = header(headers, "X-QWP-Max-Batch-Size")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let durable_ack =
        header(headers, "X-QWP-Durable-Ack").is_some_and(|v| v.eq_ignore_ascii_case("enabled"));
    if request.durable_ack && !durable_ack {
        return Err(UpgradeError::DurableAckUnavailable);
    }
    Ok(Negotiated {
        version,
        max_batch_size,
        durable_ack,
    })
}
