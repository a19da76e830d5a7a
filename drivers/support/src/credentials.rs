//! Credentials and how a driver presents them (T-4), and the console URLs they go into (T-3,
//! T-3a): one definition for every driver.

use nervix_protocol::endpoint::Endpoint;
use std::fmt;

/// A user name and password, presented as HTTP Basic credentials on every connection (T-4).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    user: String,
    password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<withheld>")
            .finish()
    }
}

/// Why credentials cannot be presented.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CredentialsError {
    /// The user name holds a `:`. Basic credentials are `user:password` split at the first
    /// `:`, so the server would read another user name (and a password that starts with the
    /// rest of this one): it is refused, never sent (T-4).
    ColonInUser,
}

impl fmt::Display for CredentialsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ColonInUser => f.write_str("a user name of Basic credentials holds no `:`"),
        }
    }
}

impl std::error::Error for CredentialsError {}

impl Credentials {
    /// Credentials of `user` with `password`; any characters, `:` only in the password.
    ///
    /// A user name holding `:` is kept here but refused by [`Credentials::check`], which
    /// every driver's configuration runs, so it is never presented; [`Credentials::try_new`]
    /// refuses it at once.
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            user: user.into(),
            password: password.into(),
        }
    }

    /// Credentials of `user` with `password`, refused when they cannot be presented as
    /// given (see [`Credentials::check`]).
    pub fn try_new(
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Result<Self, CredentialsError> {
        let c = Self::new(user, password);
        c.check()?;
        Ok(c)
    }

    /// Whether these credentials present the user they name: `Err` when the user name holds
    /// a `:`, which Basic credentials would split into another user name (T-4).
    pub fn check(&self) -> Result<(), CredentialsError> {
        if self.user.contains(':') {
            return Err(CredentialsError::ColonInUser);
        }
        Ok(())
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// `base64(user:password)` of the UTF-8 text (T-4).
    pub fn token(&self) -> String {
        sansio_kit::basic::token(&self.user, &self.password)
    }

    /// The `Authorization` header value: `Basic base64(user:password)` (T-4).
    pub fn basic(&self) -> String {
        format!("Basic {}", self.token())
    }

    /// The value of the console's `auth` query parameter: the token percent-encoded, because
    /// the server decodes the query as a form and would read a raw `+` as a space (T-4).
    pub fn query_value(&self) -> String {
        percent_encode(&self.token())
    }
}

pub use sansio_kit::basic::percent_encode;

/// How a WebSocket connection presents its credentials (T-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WsAuth {
    /// An `Authorization: Basic` header.
    #[default]
    Header,
    /// The percent-encoded `auth` query parameter.
    Query,
}

/// The URL of the console's `path` at an endpoint: `ws` for http, `wss` for https, and with
/// `query_auth` the percent-encoded `auth` parameter (T-3, T-3a, T-4).
pub fn console_url_at(e: &Endpoint, path: &str, query_auth: Option<&Credentials>) -> String {
    let scheme = if e.is_https() { "wss" } else { "ws" };
    match query_auth {
        Some(c) => format!(
            "{scheme}://{}{path}?auth={}",
            e.authority(),
            c.query_value()
        ),
        None => format!("{scheme}://{}{path}", e.authority()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_4_a_user_name_holding_a_colon_is_refused_and_a_password_may_hold_one() {
        let err = Credentials::try_new("ann:admin", "pw").unwrap_err();
        assert_eq!(err, CredentialsError::ColonInUser);
        assert_eq!(
            err.to_string(),
            "a user name of Basic credentials holds no `:`"
        );
        assert_eq!(
            Credentials::new("ann:admin", "pw").check(),
            Err(CredentialsError::ColonInUser)
        );
        let ok = Credentials::try_new("ann", "p:w").unwrap();
        assert_eq!(ok.user(), "ann");
        assert_eq!(ok.check(), Ok(()));
        // Basic credentials split at the first `:`: the password keeps its own.
        assert_eq!(ok.basic(), "Basic YW5uOnA6dw==");
    }
}
