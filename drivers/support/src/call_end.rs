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
//!
//! [`CallRoute`] says where each attempt goes and how long it waits first: the seeds of the
//! configuration in turn, never an http one when any seed is https (T-2), the leader a
//! redirect names at once, and after a redirect that names no leader (an election), a refused
//! redirect to http or any other failure, a pause that grows with each (U-4, A-5, RS-4, T-5).

use nervix_protocol::endpoint::{Endpoint, Endpoints};
use sansio_kit::backoff::Backoff;
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
/// doubling with each failure, at most [`LONGEST_PAUSE`] (`sansio-kit`'s schedule).
pub fn retry_pause(failed: u32) -> Duration {
    Backoff::new(FIRST_PAUSE, LONGEST_PAUSE).pause(failed)
}

/// How many endpoints learned from redirects a call keeps.
const LEARNED: usize = 8;

/// Where a separate call's attempts go, and the pause before each.
///
/// A client that has an https seed is https-only (T-2): its http seeds are never tried and
/// a redirect to an http leader is never followed. Such a redirect is taken as one that
/// names no leader: the call backs off and tries its next https endpoint, and
/// [`CallRoute::refused`] names the endpoint refused, for the error that ends a call whose
/// attempts run out. Only the first redirect of a call that names a leader is followed at
/// once; every later one (two nodes naming each other during an election) waits the growing
/// pause first, and the next attempt then goes to the leader it named.
#[derive(Debug, Clone)]
pub struct CallRoute {
    endpoints: Endpoints,
    current: Endpoint,
    pauses: u32,
    refused: Option<Endpoint>,
    followed: bool,
}

/// What the route made of a redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Redirected {
    /// Go to this leader at once.
    Follow(Endpoint),
    /// Wait this long, then try the next endpoint: the redirect named no leader, named the
    /// endpoint just tried, or named an http leader to an https-only client (T-2).
    Pause(Duration),
}

impl CallRoute {
    /// A route over `seeds`; `None` when there is no seed.
    pub fn new(seeds: &[Endpoint]) -> Option<Self> {
        let mut endpoints = Endpoints::new(seeds.to_vec(), LEARNED);
        let current = endpoints.next_to_try()?;
        Some(Self {
            endpoints,
            current,
            pauses: 0,
            refused: None,
            followed: false,
        })
    }

    /// The endpoint of the next attempt.
    pub fn endpoint(&self) -> &Endpoint {
        &self.current
    }

    /// Whether the call uses https endpoints only (some seed is https, T-2).
    pub fn https_only(&self) -> bool {
        self.endpoints.https_only()
    }

    /// The last http leader a redirect named and the route refused (T-2), if any.
    pub fn refused(&self) -> Option<&Endpoint> {
        self.refused.as_ref()
    }

    /// The attempt was redirected to `leader` (the endpoint on the call's transport, if the
    /// redirect named one).
    pub fn redirected(&mut self, leader: Option<Endpoint>) -> Redirected {
        match leader {
            Some(l) if l != self.current => {
                // The endpoints refuse an http leader to an https-only client (T-2).
                if !self.endpoints.learn(l.clone(), true) {
                    self.refused = Some(l);
                    return Redirected::Pause(self.failed());
                }
                if self.followed {
                    // A redirect after a redirect: the pause first, then the named leader,
                    // which the endpoints hand out next.
                    return Redirected::Pause(self.failed());
                }
                self.followed = true;
                if let Some(next) = self.endpoints.next_to_try() {
                    self.current = next;
                }
                Redirected::Follow(self.current.clone())
            }
            _ => Redirected::Pause(self.failed()),
        }
    }

    /// The attempt failed without an answer to act on: the pause before the next attempt,
    /// which goes to the next endpoint. Each pause is [`retry_pause`] of the pauses so far.
    pub fn failed(&mut self) -> Duration {
        self.pauses = self.pauses.saturating_add(1);
        if let Some(next) = self.endpoints.next_to_try() {
            self.current = next;
        }
        retry_pause(self.pauses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(s: &str) -> Endpoint {
        Endpoint::parse(s).unwrap()
    }

    #[test]
    fn t_2_a_call_with_an_https_seed_never_starts_at_an_http_seed() {
        let route = CallRoute::new(&[ep("http://a:1/"), ep("https://b:2/")]).unwrap();
        assert_eq!(route.endpoint(), &ep("https://b:2/"));
        assert!(route.https_only());
        let mut route = route;
        for _ in 0..4 {
            route.failed();
            assert_eq!(route.endpoint(), &ep("https://b:2/"));
        }
        let plain = CallRoute::new(&[ep("http://a:1/"), ep("http://c:3/")]).unwrap();
        assert_eq!(plain.endpoint(), &ep("http://a:1/"));
        assert!(!plain.https_only());
        assert!(CallRoute::new(&[]).is_none());
    }

    #[test]
    fn t_2_a_redirect_from_https_to_http_is_refused_and_backs_off() {
        let mut route = CallRoute::new(&[ep("https://a:1/"), ep("https://b:2/")]).unwrap();
        let r = route.redirected(Some(ep("http://leader:3/")));
        assert_eq!(r, Redirected::Pause(FIRST_PAUSE));
        assert_eq!(route.refused(), Some(&ep("http://leader:3/")));
        assert_eq!(route.endpoint(), &ep("https://b:2/"), "the next https seed");
        let r = route.redirected(Some(ep("http://leader:3/")));
        assert_eq!(r, Redirected::Pause(FIRST_PAUSE * 2));
        assert_eq!(route.endpoint(), &ep("https://a:1/"));
        // An https leader is followed at once.
        let r = route.redirected(Some(ep("https://leader:4/")));
        assert_eq!(r, Redirected::Follow(ep("https://leader:4/")));
        assert_eq!(route.endpoint(), &ep("https://leader:4/"));
        // A client over http follows an http leader.
        let mut plain = CallRoute::new(&[ep("http://a:1/")]).unwrap();
        let r = plain.redirected(Some(ep("http://leader:3/")));
        assert_eq!(r, Redirected::Follow(ep("http://leader:3/")));
        assert_eq!(plain.refused(), None);
    }

    #[test]
    fn u_4_redirects_naming_no_leader_back_off_with_growing_pauses() {
        let mut route = CallRoute::new(&[ep("https://a:1/")]).unwrap();
        let pauses: Vec<Redirected> = (0..4).map(|_| route.redirected(None)).collect();
        let want: Vec<Redirected> = (1..=4).map(|n| Redirected::Pause(retry_pause(n))).collect();
        assert_eq!(pauses, want);
        // A redirect naming the endpoint just tried is no leader either.
        let here = route.endpoint().clone();
        assert_eq!(
            route.redirected(Some(here)),
            Redirected::Pause(retry_pause(5))
        );
        // A named leader is followed without a pause, and the pauses go on growing after it.
        assert_eq!(
            route.redirected(Some(ep("https://b:2/"))),
            Redirected::Follow(ep("https://b:2/"))
        );
        assert_eq!(route.failed(), retry_pause(6));
    }

    #[test]
    fn u_4_a_redirect_loop_between_two_leaders_backs_off_after_the_first() {
        let a = ep("https://a:1/");
        let b = ep("https://b:2/");
        let mut route = CallRoute::new(std::slice::from_ref(&a)).unwrap();
        // a names b: followed at once.
        assert_eq!(
            route.redirected(Some(b.clone())),
            Redirected::Follow(b.clone())
        );
        // b names a, a names b, ...: each waits a growing pause, then goes where it was sent.
        for (n, to) in [(1, &a), (2, &b), (3, &a), (4, &b)] {
            assert_eq!(
                route.redirected(Some(to.clone())),
                Redirected::Pause(retry_pause(n)),
                "redirect {n}"
            );
            assert_eq!(route.endpoint(), to, "redirect {n}");
        }
    }

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
