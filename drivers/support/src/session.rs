//! What a session's transport and its driver say to each other, in every driver, and what a
//! console's answers mean for the session:
//!
//! * [`End`]: how a session's transport ended; [`Event`]: what a session tells its driver;
//!   [`Out`]: what the driver hands a session;
//! * [`close_end`]: what a console close means (1000 a clean end, 1003, 1007, 1008 and 1009
//!   a defect in what we sent, anything else a transport failure, T-3, T-3a);
//! * [`upgrade_refused`]: what an HTTP status refusing the console's upgrade means (401 the
//!   credentials refused, 503 the node unable to check them now, T-5);
//! * [`after_failed_write`]: which end a session whose write failed reports once it read on
//!   for the server's close code within [`CLOSE_WAIT`] (T-3).

use crate::credentials::{console_url_at, Credentials};
use bytes::Bytes;
use nervix_protocol::endpoint::Endpoint;
use std::time::Duration;

/// The WebSocket path of a session (T-3).
pub const CONSOLE_PATH: &str = "/console/ws";

/// The console URL of an endpoint: `ws` for http, `wss` for https, path `/console/ws`, and
/// with `query_auth` the percent-encoded `auth` parameter (T-3, T-4).
pub fn console_url(e: &Endpoint, query_auth: Option<&Credentials>) -> String {
    console_url_at(e, CONSOLE_PATH, query_auth)
}

/// How a session's transport ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum End {
    /// The server or the client ended it normally (gRPC status OK, close code 1000, or our
    /// own clean close).
    Finished,
    /// The connection failed, was cut, timed out, or ended with a status or close code that
    /// judges nothing (1001 among them, T-3a).
    Transport(String),
    /// The credentials were refused: gRPC UNAUTHENTICATED or HTTP 401 (T-5). Not retried.
    Unauthenticated,
    /// The node could not check the credentials now: gRPC UNAVAILABLE or HTTP 503 (T-5).
    /// Retried after back-off.
    Unavailable,
    /// The server ended the gRPC call with OUT_OF_RANGE or INTERNAL: it found a frame we sent
    /// oversized or malformed (T-6). Nothing of the call is sent again. Only a driver that
    /// speaks gRPC ends a session so.
    FrameRefused(u32),
    /// The console closed with 1003, 1007, 1008 or 1009: a defect in what we sent (T-3).
    Defect(u16),
    /// The server sent a message above the 4 MiB frame limit; it was refused unread (F-3).
    OversizedFrame,
}

/// What a session tells its driver.
#[derive(Debug)]
pub enum Event {
    /// The session's transport is open.
    Connected,
    /// One frame from the server, in order.
    Frame(Bytes),
    /// The session ended so; nothing follows.
    Ended(End),
}

/// What the driver hands a session.
#[derive(Debug)]
pub enum Out {
    /// One frame to send.
    Frame(Bytes),
    /// End cleanly: half-close the call, or send a close frame.
    Close,
}

/// What a console close with `code` (none when the close frame carried none) means: 1000
/// or none a clean end, 1003, 1007, 1008 and 1009 a defect in what we sent (T-3), anything
/// else (1001 included) a transport failure (T-3a).
pub fn close_end(code: Option<u16>) -> End {
    match code {
        None | Some(1000) => End::Finished,
        Some(c @ (1003 | 1007 | 1008 | 1009)) => End::Defect(c),
        Some(c) => End::Transport(format!("close code {c}")),
    }
}

/// What an HTTP `status` refusing the console's upgrade means (T-5).
pub fn upgrade_refused(status: u16) -> End {
    match status {
        401 => End::Unauthenticated,
        503 => End::Unavailable,
        s => End::Transport(format!("http status {s}")),
    }
}

/// How long a console session whose write failed reads on for the server's close code
/// (T-3), at least.
pub const CLOSE_WAIT: Duration = Duration::from_millis(200);

/// The most frames a console session whose write failed passes on while it waits for the
/// close code.
pub const CLOSE_WAIT_FRAMES: usize = 64;

/// The end of a session whose write `failed`, once the close read after it (within
/// [`CLOSE_WAIT`]) meant `closed`, if one came: a close judging a frame of ours is what
/// ended the session, whichever of the two was seen first (T-3); otherwise the write's
/// failure is.
pub fn after_failed_write(closed: Option<End>, failed: End) -> End {
    match closed {
        Some(end @ End::Defect(_)) => end,
        _ => failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_3_close_codes_1003_1007_1008_1009_are_our_defect_and_1000_a_clean_end() {
        for c in [1003, 1007, 1008, 1009] {
            assert_eq!(close_end(Some(c)), End::Defect(c));
        }
        assert_eq!(close_end(Some(1000)), End::Finished);
        assert_eq!(close_end(None), End::Finished);
        for c in [1002, 1004, 1006, 1010, 1011, 4000] {
            assert_eq!(
                close_end(Some(c)),
                End::Transport(format!("close code {c}"))
            );
        }
    }

    #[test]
    fn t_3a_a_close_with_1001_is_a_transport_failure() {
        assert_eq!(
            close_end(Some(1001)),
            End::Transport("close code 1001".into())
        );
    }

    #[test]
    fn t_5_a_401_refuses_the_credentials_a_503_is_unavailable_and_others_fail_the_transport() {
        assert_eq!(upgrade_refused(401), End::Unauthenticated);
        assert_eq!(upgrade_refused(503), End::Unavailable);
        for s in [400, 403, 404, 500, 502] {
            assert_eq!(
                upgrade_refused(s),
                End::Transport(format!("http status {s}"))
            );
        }
    }

    #[test]
    fn t_3_a_defect_close_after_a_failed_write_ends_the_session_and_any_other_keeps_the_failure() {
        let failed = End::Transport("write failed".into());
        assert_eq!(
            after_failed_write(Some(End::Defect(1009)), failed.clone()),
            End::Defect(1009)
        );
        for other in [
            None,
            Some(End::Finished),
            Some(End::Transport("close code 1001".into())),
            Some(End::Unauthenticated),
        ] {
            assert_eq!(after_failed_write(other, failed.clone()), failed);
        }
    }

    #[test]
    fn t_3_a_session_is_on_console_ws_with_the_credentials_in_the_query_when_asked() {
        let e = Endpoint::parse("https://n1:8443/").unwrap();
        assert_eq!(console_url(&e, None), "wss://n1:8443/console/ws");
        let c = Credentials::new("ann", "p w");
        let url = console_url(&e, Some(&c));
        assert!(url.starts_with("wss://n1:8443/console/ws?auth="), "{url}");
        assert!(!url.contains(' '), "{url}");
    }
}
