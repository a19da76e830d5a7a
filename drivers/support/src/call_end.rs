//! How a separate call (an upload, a backup download, a restore) that ended without its
//! answer is treated, from what its transport said, so every driver treats it alike:
//!
//! * refused credentials (gRPC `UNAUTHENTICATED`, HTTP 401) are never tried again with the
//!   same credentials (T-5);
//! * a frame the server found oversized or malformed (gRPC `OUT_OF_RANGE` or `INTERNAL`, a
//!   WebSocket close with 1003, 1007, 1008 or 1009) is never sent again (T-6, T-3);
//! * anything else (gRPC `UNAVAILABLE`, HTTP 503, a cut connection, a close with 1001, a
//!   wait that passed) is a transport failure: the attempt is repeated whole after a pause
//!   that grows with each attempt ([`retry_pause`]).

use std::time::Duration;

/// gRPC status `OUT_OF_RANGE`.
pub const OUT_OF_RANGE: u32 = 11;
/// gRPC status `INTERNAL`.
pub const INTERNAL: u32 = 13;
/// gRPC status `UNAVAILABLE`.
pub const UNAVAILABLE: u32 = 14;
/// gRPC status `UNAUTHENTICATED`.
pub const UNAUTHENTICATED: u32 = 16;

/// What ends a call's attempt without its answer means for the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEnd {
    /// The credentials were refused: the call ends, never retried with them (T-5).
    Unauthenticated,
    /// The server refused a frame as oversized or malformed: the call ends and the frame is
    /// not sent again (T-6). Carries the gRPC status or the WebSocket close code.
    FrameRefused(u32),
    /// A transport failure: the attempt may be repeated after [`retry_pause`].
    Retry,
}

impl CallEnd {
    /// The meaning of a call ended with gRPC status `code` (0, OK, never ends a call without
    /// its answer; it is a transport failure here too).
    pub fn of_grpc_status(code: u32) -> Self {
        match code {
            UNAUTHENTICATED => Self::Unauthenticated,
            OUT_OF_RANGE | INTERNAL => Self::FrameRefused(code),
            _ => Self::Retry,
        }
    }

    /// The meaning of an HTTP status that refused a call or a WebSocket upgrade.
    pub fn of_http_status(status: u16) -> Self {
        match status {
            401 => Self::Unauthenticated,
            _ => Self::Retry,
        }
    }

    /// The meaning of a WebSocket close with `code` before the answer.
    pub fn of_close_code(code: u16) -> Self {
        match code {
            1003 | 1007 | 1008 | 1009 => Self::FrameRefused(u32::from(code)),
            _ => Self::Retry,
        }
    }
}

/// The first pause before an attempt is repeated.
pub const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between attempts.
pub const LONGEST_PAUSE: Duration = Duration::from_secs(5);

/// The pause after the `failed`-th failed attempt (1 for the first): [`FIRST_PAUSE`],
/// doubling with each failure, at most [`LONGEST_PAUSE`].
pub fn retry_pause(failed: u32) -> Duration {
    let doublings = failed.saturating_sub(1).min(16);
    FIRST_PAUSE
        .saturating_mul(1 << doublings)
        .min(LONGEST_PAUSE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_5_unauthenticated_and_401_end_the_call_and_unavailable_and_503_retry() {
        assert_eq!(CallEnd::of_grpc_status(16), CallEnd::Unauthenticated);
        assert_eq!(CallEnd::of_http_status(401), CallEnd::Unauthenticated);
        assert_eq!(CallEnd::of_grpc_status(14), CallEnd::Retry);
        assert_eq!(CallEnd::of_http_status(503), CallEnd::Retry);
    }

    #[test]
    fn t_6_out_of_range_internal_and_defect_close_codes_are_not_resent() {
        assert_eq!(CallEnd::of_grpc_status(11), CallEnd::FrameRefused(11));
        assert_eq!(CallEnd::of_grpc_status(13), CallEnd::FrameRefused(13));
        for c in [1003, 1007, 1008, 1009] {
            assert_eq!(
                CallEnd::of_close_code(c),
                CallEnd::FrameRefused(u32::from(c))
            );
        }
        for c in [1000, 1001, 1006, 1011] {
            assert_eq!(CallEnd::of_close_code(c), CallEnd::Retry);
        }
        for s in [0, 1, 4, 12, 14, 15] {
            assert_eq!(CallEnd::of_grpc_status(s), CallEnd::Retry);
        }
    }

    #[test]
    fn t_5_the_pause_between_attempts_doubles_up_to_its_bound() {
        let pauses: Vec<u64> = (1..=8).map(|n| retry_pause(n).as_millis() as u64).collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!(retry_pause(0), FIRST_PAUSE);
        assert_eq!(retry_pause(u32::MAX), LONGEST_PAUSE);
    }
}
