//! The decisions of a separate call's retry loop (an upload, a backup download, a restore),
//! written once for every driver: each driver runs an attempt over its own transport, hands
//! the attempt's last step to [`Attempts::ended`], and only sleeps or awaits the pause it is
//! told.
//!
//! * [`Attempts::next_endpoint`]: the endpoint of the next attempt, at most the number of
//!   attempts the call was given;
//! * [`Attempts::ended`]: what an attempt's step means: the call's answer, a redirect to a
//!   leader followed at once, or a pause growing with each failure before the next attempt
//!   (a redirect naming no leader, or an http leader to an https-only client, T-2, U-4, A-5,
//!   RS-4);
//! * [`Attempts::gave_up`]: what the error of a call whose attempts ran out says: how the
//!   last attempt ended, the http redirect refused (T-2) and why an attempt could not
//!   connect;
//! * [`CallClock`]: the call machines' timestamps and the deadlines of a driver's waits: a
//!   machine's wait, never beyond a day, and a write's, never beyond the write deadline
//!   (T-8).

use crate::call_end::{CallRoute, Redirected};
use nervix_protocol::calls::{
    DownloadEnd, DownloadStep, Leader, RestoreOutcome, RestoreStep, UploadOutcome, UploadStep,
};
use nervix_protocol::client::LeaderUri;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::time::Timestamp;
use std::fmt::{Debug, Display};
use std::time::{Duration, Instant};

/// How an attempt's last step bears on the retry loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Attempted<T> {
    /// The call has its answer: no attempt follows.
    Answered(T),
    /// The node does not lead; the leader it names, if any.
    Redirect(Option<Leader>),
    /// The attempt ended without an answer (an interruption, an unknown outcome): it is
    /// repeated after a pause.
    Failed,
}

/// The step a call machine gives when an attempt ends.
pub trait AttemptStep: Debug {
    /// The call's answer.
    type Answer;
    /// What the step means for the retry loop.
    fn attempted(self) -> Attempted<Self::Answer>;
}

impl AttemptStep for DownloadStep {
    type Answer = DownloadEnd;
    /// Only a verified archive or one no longer available answers a download.
    fn attempted(self) -> Attempted<DownloadEnd> {
        match self {
            Self::Ended(end @ (DownloadEnd::Verified(_) | DownloadEnd::Unavailable { .. })) => {
                Attempted::Answered(end)
            }
            Self::Redirect(leader) => Attempted::Redirect(leader),
            _ => Attempted::Failed,
        }
    }
}

impl AttemptStep for RestoreStep {
    type Answer = RestoreOutcome;
    fn attempted(self) -> Attempted<RestoreOutcome> {
        match self {
            Self::Ended(outcome) => Attempted::Answered(outcome),
            Self::Redirect(leader) => Attempted::Redirect(leader),
            _ => Attempted::Failed,
        }
    }
}

impl AttemptStep for UploadStep {
    type Answer = UploadOutcome;
    fn attempted(self) -> Attempted<UploadOutcome> {
        match self {
            Self::Ended(outcome) => Attempted::Answered(outcome),
            Self::Redirect(leader) => Attempted::Redirect(leader),
            _ => Attempted::Failed,
        }
    }
}

/// What follows an attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Next<T> {
    /// The call's answer: return it.
    Answer(T),
    /// Try again (when an attempt is left) after this pause, or at once when there is none
    /// (a redirect to a leader, followed without waiting).
    Again(Option<Duration>),
}

/// The retry loop of one separate call: where each attempt goes, how many are left, how
/// long to wait before the next, and how the last one ended.
#[derive(Debug, Clone)]
pub struct Attempts {
    route: CallRoute,
    leader_uri: LeaderUri,
    left: u32,
    last: String,
}

impl Attempts {
    /// At most `attempts` attempts over `route`; a redirect is followed to the leader's
    /// endpoint that `leader_uri` names (its console for the WebSocket calls, T-3a, T-7).
    pub fn new(route: CallRoute, leader_uri: LeaderUri, attempts: u32) -> Self {
        Self {
            route,
            leader_uri,
            left: attempts,
            last: String::new(),
        }
    }

    /// The endpoint of the next attempt; `None` once every attempt was made.
    pub fn next_endpoint(&mut self) -> Option<Endpoint> {
        self.left = self.left.checked_sub(1)?;
        Some(self.route.endpoint().clone())
    }

    /// The attempt ended with `step`: its answer, or the pause before the next attempt.
    /// Every end but an answer is remembered for [`Attempts::gave_up`].
    pub fn ended<S: AttemptStep>(&mut self, step: S) -> Next<S::Answer> {
        self.last = format!("{step:?}");
        match step.attempted() {
            Attempted::Answered(answer) => Next::Answer(answer),
            Attempted::Redirect(leader) => {
                let to = leader.and_then(|l| match self.leader_uri {
                    LeaderUri::WebConsole => l.web_console_uri,
                    _ => l.grpc_uri,
                });
                match self.route.redirected(to) {
                    Redirected::Pause(p) => Next::Again(Some(p)),
                    _ => Next::Again(None),
                }
            }
            Attempted::Failed => Next::Again(Some(self.route.failed())),
        }
    }

    /// How the call's attempts ended, for the error of a call that ran out of them: the last
    /// attempt's end, the http leader a redirect named and the route refused (T-2), and
    /// `unreached`, why an attempt could not connect, if one could not.
    pub fn gave_up(&self, unreached: Option<&dyn Display>) -> String {
        let mut last = match self.route.refused() {
            Some(e) => format!(
                "{}; a redirect to {e} was not followed from https (T-2)",
                self.last
            ),
            None => self.last.clone(),
        };
        if let Some(why) = unreached {
            last = format!("{last}; an attempt could not connect: {why}");
        }
        last
    }
}

/// How long a driver waits at most for anything, a machine's wait included.
pub const LONGEST_WAIT: Duration = Duration::from_secs(86_400);

/// The clock of a driver's separate calls: the call machines' timestamps count from its
/// origin.
#[derive(Debug, Clone, Copy)]
pub struct CallClock {
    origin: Instant,
}

impl CallClock {
    /// A clock whose timestamps count from `origin`.
    pub fn new(origin: Instant) -> Self {
        Self { origin }
    }

    /// The timestamp of `at`.
    pub fn at(&self, at: Instant) -> Timestamp {
        Timestamp::from_nanos(at.saturating_duration_since(self.origin).as_nanos() as u64)
    }

    /// The timestamp of now.
    pub fn now(&self) -> Timestamp {
        self.at(Instant::now())
    }

    /// The instant of a machine's wait `t`, seen at `now`: at most [`LONGEST_WAIT`] from
    /// `now`, and that when the machine names none.
    pub fn deadline_at(&self, t: Option<Timestamp>, now: Instant) -> Instant {
        let far = now + LONGEST_WAIT;
        t.and_then(|t| self.origin.checked_add(Duration::from_nanos(t.as_nanos())))
            .map_or(far, |i| i.min(far))
    }

    /// As [`CallClock::deadline_at`], seen now.
    pub fn deadline(&self, t: Option<Timestamp>) -> Instant {
        self.deadline_at(t, Instant::now())
    }

    /// The deadline of one write, seen at `now`: the machine's wait `t`, and never later
    /// than `write_timeout` from `now` (T-8).
    pub fn write_deadline_at(
        &self,
        t: Option<Timestamp>,
        write_timeout: Duration,
        now: Instant,
    ) -> Instant {
        let own = now + write_timeout;
        t.map_or(own, |t| self.deadline_at(Some(t), now).min(own))
    }

    /// As [`CallClock::write_deadline_at`], seen now.
    pub fn write_deadline(&self, t: Option<Timestamp>, write_timeout: Duration) -> Instant {
        self.write_deadline_at(t, write_timeout, Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call_end::{retry_pause, FIRST_PAUSE, LONGEST_PAUSE};
    use nervix_protocol::calls::{ArchiveDigest, Interruption};
    use nervix_protocol::schema::{BackupDownloadFailure, OutcomeOrigin};

    fn ep(s: &str) -> Endpoint {
        Endpoint::parse(s).unwrap()
    }

    fn attempts(seeds: &[&str], leader_uri: LeaderUri, n: u32) -> Attempts {
        let seeds: Vec<Endpoint> = seeds.iter().map(|s| ep(s)).collect();
        Attempts::new(CallRoute::new(&seeds).unwrap(), leader_uri, n)
    }

    fn leader(grpc: Option<&str>, console: Option<&str>) -> Leader {
        Leader {
            node: "n2".into(),
            grpc_uri: grpc.map(ep),
            web_console_uri: console.map(ep),
        }
    }

    fn cut() -> DownloadStep {
        DownloadStep::Interrupted {
            cause: Interruption::Transport,
            retained: false,
        }
    }

    #[test]
    fn t_3a_a_call_makes_exactly_its_attempts_each_failure_pausing_longer() {
        let mut a = attempts(&["https://a:1/", "https://b:2/"], LeaderUri::Grpc, 3);
        let mut made = Vec::new();
        let mut pauses = Vec::new();
        while let Some(e) = a.next_endpoint() {
            made.push(e);
            match a.ended(cut()) {
                Next::Again(Some(p)) => pauses.push(p),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            made,
            [ep("https://a:1/"), ep("https://b:2/"), ep("https://a:1/")],
            "the seeds in turn, one attempt each"
        );
        assert_eq!(pauses, [retry_pause(1), retry_pause(2), retry_pause(3)]);
        assert_eq!(a.next_endpoint(), None, "no attempt beyond the third");
        assert_eq!(a.next_endpoint(), None);
        let mut none = attempts(&["https://a:1/"], LeaderUri::Grpc, 0);
        assert_eq!(none.next_endpoint(), None);
        let mut one = attempts(&["https://a:1/"], LeaderUri::Grpc, 1);
        assert_eq!(one.next_endpoint(), Some(ep("https://a:1/")));
        assert_eq!(one.next_endpoint(), None);
    }

    #[test]
    fn t_5_the_pause_between_attempts_reaches_its_bound_at_the_seventh_failure_and_stays() {
        let mut a = attempts(&["http://a:1/"], LeaderUri::Grpc, 9);
        let mut pauses = Vec::new();
        while a.next_endpoint().is_some() {
            let Next::Again(Some(p)) = a.ended(cut()) else {
                panic!("a failure pauses");
            };
            pauses.push(p.as_millis() as u64);
        }
        assert_eq!(pauses, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
        assert_eq!(retry_pause(1), FIRST_PAUSE);
        assert!(retry_pause(6) < LONGEST_PAUSE);
        assert_eq!(retry_pause(7), LONGEST_PAUSE);
    }

    #[test]
    fn u_4_a_redirect_naming_a_leader_is_followed_at_once_and_one_naming_none_pauses() {
        let mut a = attempts(&["http://a:1/"], LeaderUri::Grpc, 5);
        assert_eq!(a.next_endpoint(), Some(ep("http://a:1/")));
        let to = leader(Some("http://l:7/"), Some("http://l:8/"));
        assert_eq!(
            a.ended(UploadStep::Redirect(Some(to))),
            Next::Again(None),
            "followed without a pause"
        );
        assert_eq!(
            a.next_endpoint(),
            Some(ep("http://l:7/")),
            "the leader's gRPC origin"
        );
        assert_eq!(
            a.ended(UploadStep::Redirect(None)),
            Next::Again(Some(retry_pause(1)))
        );
        assert_eq!(
            a.ended(RestoreStep::Redirect(None)),
            Next::Again(Some(retry_pause(2))),
            "the pauses grow over redirects and failures alike"
        );
        assert_eq!(a.ended(cut()), Next::Again(Some(retry_pause(3))));
    }

    #[test]
    fn t_7_a_console_call_follows_the_leaders_console_and_never_its_grpc_uri() {
        let mut a = attempts(&["http://a:1/"], LeaderUri::WebConsole, 5);
        a.next_endpoint();
        let to = leader(Some("http://l:7/"), Some("http://l:8/"));
        assert_eq!(a.ended(RestoreStep::Redirect(Some(to))), Next::Again(None));
        assert_eq!(
            a.next_endpoint(),
            Some(ep("http://l:8/")),
            "the leader's console"
        );
        // A leader that names no console is no leader for a console call: a pause.
        let grpc_only = leader(Some("http://m:9/"), None);
        assert_eq!(
            a.ended(RestoreStep::Redirect(Some(grpc_only))),
            Next::Again(Some(retry_pause(1)))
        );
        assert_ne!(a.next_endpoint(), Some(ep("http://m:9/")));
        // And a gRPC call whose leader names only a console pauses too.
        let mut g = attempts(&["http://a:1/"], LeaderUri::Grpc, 5);
        g.next_endpoint();
        let console_only = leader(None, Some("http://l:8/"));
        assert_eq!(
            g.ended(UploadStep::Redirect(Some(console_only))),
            Next::Again(Some(retry_pause(1)))
        );
        assert_eq!(g.next_endpoint(), Some(ep("http://a:1/")));
    }

    #[test]
    fn t_2_a_redirect_to_http_from_https_pauses_and_the_call_that_gives_up_names_it() {
        let mut a = attempts(&["https://a:1/"], LeaderUri::Grpc, 2);
        a.next_endpoint();
        let to = leader(Some("http://l:7/"), None);
        assert_eq!(
            a.ended(DownloadStep::Redirect(Some(to.clone()))),
            Next::Again(Some(retry_pause(1)))
        );
        assert_eq!(
            a.next_endpoint(),
            Some(ep("https://a:1/")),
            "never the http leader"
        );
        assert_eq!(
            a.gave_up(None),
            format!(
                "Redirect({:?}); a redirect to {} was not followed from https (T-2)",
                Some(to),
                ep("http://l:7/")
            ),
        );
        let why = "the connection deadline passed";
        assert!(a
            .gave_up(Some(&why))
            .ends_with("(T-2); an attempt could not connect: the connection deadline passed"));
    }

    #[test]
    fn t_3a_a_call_that_gives_up_says_how_its_last_attempt_ended() {
        let mut a = attempts(&["http://a:1/"], LeaderUri::Grpc, 2);
        assert_eq!(a.gave_up(None), "");
        a.next_endpoint();
        a.ended(RestoreStep::OutcomeUnknown);
        a.next_endpoint();
        a.ended(cut());
        assert_eq!(
            a.gave_up(None),
            format!("{:?}", cut()),
            "the last end alone"
        );
        assert_eq!(
            a.gave_up(Some(&"refused")),
            format!("{:?}; an attempt could not connect: refused", cut())
        );
    }

    #[test]
    fn a_5_a_verified_or_unavailable_archive_answers_a_download_and_anything_else_retries() {
        let mut a = attempts(&["http://a:1/"], LeaderUri::Grpc, 5);
        let verified = DownloadEnd::Verified(ArchiveDigest::new().finish());
        assert_eq!(
            a.ended(DownloadStep::Ended(verified.clone())),
            Next::Answer(verified)
        );
        let gone = DownloadEnd::Unavailable {
            failure: BackupDownloadFailure::Expired,
            message: "gone".into(),
        };
        assert_eq!(
            a.ended(DownloadStep::Ended(gone.clone())),
            Next::Answer(gone)
        );
        let retained = DownloadStep::Interrupted {
            cause: Interruption::Stalled,
            retained: true,
        };
        assert_eq!(a.ended(retained), Next::Again(Some(retry_pause(1))));
        for step in [DownloadStep::Continue, DownloadStep::Started] {
            assert!(matches!(a.ended(step), Next::Again(Some(_))));
        }
    }

    #[test]
    fn rs_4_an_unknown_outcome_or_an_interruption_is_repeated_and_an_outcome_answers() {
        let mut a = attempts(&["http://a:1/"], LeaderUri::WebConsole, 5);
        assert_eq!(
            a.ended(RestoreStep::OutcomeUnknown),
            Next::Again(Some(retry_pause(1)))
        );
        let cut = RestoreStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: true,
        };
        assert_eq!(a.ended(cut), Next::Again(Some(retry_pause(2))));
        let done = RestoreOutcome::Completed {
            summary: None,
            origin: OutcomeOrigin::Executed,
            message: "ok".into(),
        };
        assert_eq!(
            a.ended(RestoreStep::Ended(done.clone())),
            Next::Answer(done)
        );
    }

    #[test]
    fn u_5_an_interrupted_upload_is_repeated_and_its_outcome_answers() {
        let mut a = attempts(&["http://a:1/"], LeaderUri::Grpc, 5);
        let cut = UploadStep::Interrupted {
            cause: Interruption::Stalled,
            uncertain: true,
        };
        assert_eq!(a.ended(cut), Next::Again(Some(retry_pause(1))));
        let done = UploadOutcome::Installed {
            version: 3,
            origin: OutcomeOrigin::Recovered,
            message: String::new(),
        };
        assert_eq!(a.ended(UploadStep::Ended(done.clone())), Next::Answer(done));
    }

    #[test]
    fn t_8_the_machines_time_counts_from_the_clocks_origin() {
        let origin = Instant::now() - Duration::from_secs(5);
        let clock = CallClock::new(origin);
        let now = clock.now().as_nanos();
        assert!((5_000_000_000..60_000_000_000).contains(&now), "{now}");
        let d = clock.deadline(Some(Timestamp::from_nanos(6_000_000_000)));
        assert_eq!(d, origin + Duration::from_secs(6));
        let w = clock.write_deadline(Some(Timestamp::from_nanos(6_000_000_000)), LONGEST_WAIT);
        assert_eq!(w, origin + Duration::from_secs(6));
    }

    #[test]
    fn t_8_a_machines_wait_is_its_own_instant_and_never_beyond_a_day() {
        let origin = Instant::now();
        let clock = CallClock::new(origin);
        let now = origin + Duration::from_secs(10);
        assert_eq!(clock.at(now), Timestamp::from_nanos(10_000_000_000));
        assert_eq!(clock.at(origin), Timestamp::from_nanos(0));
        let t = Timestamp::from_nanos(12_000_000_000);
        assert_eq!(
            clock.deadline_at(Some(t), now),
            origin + Duration::from_secs(12)
        );
        assert_eq!(clock.deadline_at(None, now), now + LONGEST_WAIT);
        // A day exactly is kept; a nanosecond more is cut to the day.
        let day = Timestamp::from_nanos((Duration::from_secs(10) + LONGEST_WAIT).as_nanos() as u64);
        assert_eq!(clock.deadline_at(Some(day), now), now + LONGEST_WAIT);
        let beyond = day + Duration::from_nanos(1);
        assert_eq!(clock.deadline_at(Some(beyond), now), now + LONGEST_WAIT);
        let just_before = Timestamp::from_nanos(day.as_nanos() - 1);
        assert_eq!(
            clock.deadline_at(Some(just_before), now),
            now + LONGEST_WAIT - Duration::from_nanos(1)
        );
        assert_eq!(
            clock.deadline_at(Some(Timestamp::from_nanos(u64::MAX)), now),
            now + LONGEST_WAIT
        );
    }

    #[test]
    fn t_8_a_write_waits_for_the_machines_wait_or_the_write_deadline_whichever_comes_first() {
        let origin = Instant::now();
        let clock = CallClock::new(origin);
        let now = origin + Duration::from_secs(10);
        let wt = Duration::from_secs(3);
        let sooner = Timestamp::from_nanos(11_000_000_000);
        assert_eq!(
            clock.write_deadline_at(Some(sooner), wt, now),
            origin + Duration::from_secs(11)
        );
        let later = Timestamp::from_nanos(14_000_000_000);
        assert_eq!(clock.write_deadline_at(Some(later), wt, now), now + wt);
        let equal = Timestamp::from_nanos(13_000_000_000);
        assert_eq!(clock.write_deadline_at(Some(equal), wt, now), now + wt);
        assert_eq!(clock.write_deadline_at(None, wt, now), now + wt);
        // With no wait of the machine's, the write deadline is kept even beyond a day.
        let long = LONGEST_WAIT * 2;
        assert_eq!(clock.write_deadline_at(None, long, now), now + long);
        assert_eq!(
            clock.write_deadline_at(Some(Timestamp::from_nanos(u64::MAX)), long, now),
            now + LONGEST_WAIT
        );
    }
}
