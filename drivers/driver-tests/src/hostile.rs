//! A driver against a hostile peer over real sockets on 127.0.0.1: floods of frames nobody
//! asked for, outcomes nobody waits for, gRPC responses cut short, defect close codes while
//! the client writes, and a node that answers nothing.

use crate::{seeds_of, spoken, Driver, Error, Via, WsAuth, BOTH};
use nervix_driver_support::api::DriverEvent;
use nervix_driver_support::credentials::Credentials;
use nervix_driver_support::observe::OBSERVER_BYTES;
use nervix_driver_support::session::End;
use nervix_loopback::{CallFault, Loopback, LoopbackConfig, CONSOLE_PATH, EXCHANGE_PATH};
use nervix_protocol::client::CommandResult;
use std::time::{Duration, Instant};

fn node() -> Loopback {
    Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .unwrap()
}

/// A client of `lb` over `via` with a call deadline of `call`, in the domain `tenant`.
fn connected<D: Driver>(d: &D, lb: &Loopback, via: Via, call: Duration) -> D::Client {
    let cfg = crate::config_of::<D>(
        &seeds_of(lb, via),
        Credentials::new("nervix", "nervix"),
        via,
        call,
        Duration::from_secs(2),
    );
    let c = d.connect(cfg).unwrap();
    d.select_domain(&c, Some("tenant")).unwrap();
    c
}

/// The flood of the review: frames of 512 KiB, more than the observer bound holds.
const FLOOD: usize = 48;
const FRAME: usize = 512 << 10;

/// C-7: a flood of large unsolicited frames is bounded in bytes, and its loss counted.
pub fn c_7_flood_bounded<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = node();
        let c = connected(&d, &lb, via, Duration::from_secs(2));
        // One observer that does not read, and one that reads all the time.
        let slow = d.events(&c);
        let mut fast = d.events(&c);
        assert_eq!(lb.flood_notices(0, FLOOD, FRAME), 1, "{via:?}");
        let end = Instant::now() + Duration::from_secs(20);
        // The reader sees every frame, or the count of those it was too slow for.
        let (mut seen, mut missed) = (0, 0);
        while seen + missed < FLOOD {
            assert!(Instant::now() < end, "{via:?}: {seen} frames seen");
            match d.next_driver_event(&mut fast, Duration::from_secs(1)) {
                Some(DriverEvent::Unsolicited(_)) => seen += 1,
                Some(DriverEvent::EventsLost(n)) => missed += n as usize,
                _ => {}
            }
        }
        assert_eq!(D::lost(&fast) as usize, missed, "{via:?}");
        assert!(
            seen + missed == FLOOD && seen >= OBSERVER_BYTES / FRAME - 1,
            "{via:?}: {seen} seen"
        );
        // The observer that never read holds at most its byte bound, and counts the rest.
        let held = D::held_bytes(&slow);
        assert!(held <= OBSERVER_BYTES, "{via:?}: {held} bytes held");
        let fits = OBSERVER_BYTES / FRAME;
        let lost = D::lost(&slow);
        assert!(lost >= (FLOOD - fits) as u64, "{via:?}: {lost} lost");
        let (mut frames, mut reported) = (0, 0);
        for e in D::drain(&slow) {
            match e {
                DriverEvent::Unsolicited(_) => frames += 1,
                DriverEvent::EventsLost(n) => reported += n,
                _ => {}
            }
        }
        assert_eq!(reported, D::lost(&slow), "{via:?}: every loss reported");
        assert_eq!(
            frames + reported as usize,
            FLOOD,
            "{via:?}: each frame kept or counted"
        );
        assert_eq!(D::held_bytes(&slow), 0);
        // The client still works.
        let r = d.execute(&c, "CREATE RELAY after;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{via:?}: {r:?}");
    }
}

/// C-10: an outcome sent as its wait is dropped is kept exactly once.
pub fn c_10_kept_exactly_once<D: Driver>() {
    let d = D::new();
    let lb = node();
    let c = connected(&d, &lb, Via::Grpc, Duration::from_secs(2));
    // Waits dropped at every moment around their outcome's arrival.
    let mut references = Vec::new();
    for i in 0..200u64 {
        let p = d.submit(&c, &format!("CREATE RELAY r{i};")).unwrap();
        references.push(D::reference(&p));
        std::thread::sleep(Duration::from_micros((i % 20) * 50));
        drop(p);
    }
    let mut got = Vec::new();
    for _ in 0..100 {
        got.extend(d.unclaimed(&c).unwrap());
        if got.len() >= references.len() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut named: Vec<String> = got
        .iter()
        .map(|r| match r {
            CommandResult::Completed(rep) => rep.reference().to_string(),
            CommandResult::Uncertain { command, .. } => command.reference.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    named.sort();
    references.sort();
    assert_eq!(named, references, "every outcome kept exactly once");
    assert_eq!(D::unclaimed_lost(&c), 0);
}

/// The first transport end the observer sees within ten seconds.
fn first_end<D: Driver>(d: &D, events: &mut D::Events) -> End {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match d.next_driver_event(events, left) {
            Some(DriverEvent::TransportEnded { end, .. }) => return end,
            Some(_) => {}
            None => panic!("no transport end within ten seconds"),
        }
    }
}

/// T-1: a gRPC response ending inside a length prefix is a transport failure.
pub fn t_1_cut_inside_a_prefix<D: Driver>() {
    let d = D::new();
    let lb = node();
    let c = connected(&d, &lb, Via::Grpc, Duration::from_secs(2));
    let mut events = d.events(&c);
    // Three bytes of a five-byte prefix, then grpc-status 0.
    assert_eq!(
        lb.send_raw_then_finish(0, vec![0u8, 0, 0].into()),
        1,
        "one stream"
    );
    let end = first_end(&d, &mut events);
    assert!(
        matches!(&end, End::Transport(m) if m.contains("inside a message")),
        "{end:?}"
    );
}

/// T-1: a gRPC response ending before the bytes its prefix promised is a transport failure;
/// a clean end at a message boundary is still a clean finish.
pub fn t_1_cut_inside_a_message<D: Driver>() {
    let d = D::new();
    let lb = node();
    let c = connected(&d, &lb, Via::Grpc, Duration::from_secs(2));
    let mut events = d.events(&c);
    // A prefix promising 100 bytes, ten of them, then grpc-status 0.
    let mut raw = vec![0u8, 0, 0, 0, 100];
    raw.extend_from_slice(&[7; 10]);
    assert_eq!(lb.send_raw_then_finish(0, raw.into()), 1);
    let end = first_end(&d, &mut events);
    assert!(
        matches!(&end, End::Transport(m) if m.contains("inside a message")),
        "{end:?}"
    );
    let r = d.execute(&c, "CREATE RELAY again;").unwrap();
    assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
    let mut events = d.events(&c);
    // (The loopback may still list the stream ended before.)
    assert!(lb.send_raw_then_finish(0, Vec::new().into()) >= 1);
    assert_eq!(first_end(&d, &mut events), End::Finished);
}

/// T-3: the console closes with a defect code while the client is still writing a burst:
/// the writes fail, but the close code is what the session reports, and nothing is sent
/// again.
pub fn t_3_defect_code_reported_over_failed_writes<D: Driver>() {
    // The race is the server's to win or lose: several rounds, each code at least once.
    for code in [1008u16, 1009, 1003, 1007, 1008, 1009] {
        let d = D::new();
        let lb = node();
        let c = connected(
            &d,
            &lb,
            Via::Console(WsAuth::Header),
            Duration::from_secs(2),
        );
        let mut events = d.events(&c);
        lb.inject(CallFault::CloseCode(code));
        let big = format!("CREATE RELAY big SCHEMA '{}';", "x".repeat(1 << 20));
        let mut pending = Vec::new();
        for _ in 0..16 {
            // Once the close code was read, the client refuses to send more.
            match d.submit(&c, &big) {
                Ok(p) => pending.push(p),
                Err(Error::Defect(_)) => break,
                Err(e) => panic!("{code}: {e}"),
            }
        }
        assert_eq!(first_end(&d, &mut events), End::Defect(code));
        for p in pending {
            let r = d.wait(p).unwrap();
            assert!(!matches!(r, CommandResult::Completed(_)), "{code}: {r:?}");
        }
        assert!(matches!(
            d.execute(&c, "CREATE RELAY e;"),
            Err(Error::Defect(_))
        ));
        assert_eq!(lb.stats().calls.len(), 1, "{code}: no new session");
    }
}

/// T-5: CANCELLED, UNKNOWN, DEADLINE_EXCEEDED and PERMISSION_DENIED judge neither the
/// credentials (T-5) nor a frame of ours (T-6): each ends the session as a transport failure,
/// after which the client backs off, opens a new session and goes on; nothing is parked.
pub fn t_5_grpc_statuses_are_transport_failures<D: Driver>() {
    for code in [1u32, 2, 4, 7] {
        let d = D::new();
        let lb = node();
        let c = connected(&d, &lb, Via::Grpc, Duration::from_secs(2));
        let mut events = d.events(&c);
        lb.inject(CallFault::GrpcStatus(code));
        let r = d.execute(&c, &format!("CREATE RELAY r{code};")).unwrap();
        assert_eq!(
            first_end(&d, &mut events),
            End::Transport(format!("grpc-status {code}")),
            "{code}"
        );
        // The frame was never read: the command is repeated under its reference on the new
        // session, or left uncertain; never failed as if refused.
        assert!(
            matches!(
                r,
                CommandResult::Completed(_) | CommandResult::Uncertain { .. }
            ),
            "{code}: {r:?}"
        );
        let r = d.execute(&c, "CREATE RELAY after;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{code}: {r:?}");
        assert!(lb.stats().calls.len() >= 2, "{code}: a new session");
    }
}

/// T-8: a node that keeps its session open and answers nothing (a stuck node, a half-open
/// connection): the first call whose deadline passes with nothing heard replaces the
/// session, so the next call goes on a new one instead of waiting out abandoned slots.
pub fn t_8_silent_server_left<D: Driver>() {
    for via in spoken::<D>(&BOTH) {
        let d = D::new();
        let lb = node();
        let c = connected(&d, &lb, via, Duration::from_millis(400));
        let sessions = || {
            lb.calls_to(match via {
                Via::Grpc => EXCHANGE_PATH,
                Via::Console(_) => CONSOLE_PATH,
            })
            .len()
        };
        let r = d.execute(&c, "CREATE RELAY before;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{via:?}: {r:?}");
        assert_eq!(sessions(), 1, "{via:?}");
        // The node goes silent: the command reaches it, nothing comes back.
        lb.drop_replies(0, true);
        let r = d.execute(&c, "CREATE RELAY silent;").unwrap();
        assert!(
            matches!(r, CommandResult::Uncertain { .. }),
            "{via:?}: {r:?}"
        );
        lb.drop_replies(0, false);
        // The next command goes on a new session and completes there.
        let r = d.execute(&c, "CREATE RELAY after;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{via:?}: {r:?}");
        assert_eq!(sessions(), 2, "{via:?}");
        lb.stop();
    }
}

/// Tests of `tests/hostile.rs`, for `tokio` or `blocking`.
#[macro_export]
macro_rules! hostile_tests {
    (tokio) => {
        #[test]
        fn c_7_a_flood_of_large_unsolicited_frames_is_bounded_in_bytes_and_its_loss_counted() {
            $crate::run!(Tokio, hostile::c_7_flood_bounded())
        }
        #[test]
        fn c_10_an_outcome_sent_as_its_wait_is_dropped_is_kept_exactly_once() {
            $crate::run!(Tokio, hostile::c_10_kept_exactly_once())
        }
        #[test]
        fn t_1_a_grpc_response_ending_inside_a_length_prefix_is_a_transport_failure() {
            $crate::run!(Tokio, hostile::t_1_cut_inside_a_prefix())
        }
        #[test]
        fn t_1_a_grpc_response_ending_before_the_bytes_its_prefix_promised_is_a_transport_failure(
        ) {
            $crate::run!(Tokio, hostile::t_1_cut_inside_a_message())
        }
        #[test]
        fn t_3_a_write_failing_before_the_defect_close_code_is_read_still_reports_the_code() {
            $crate::run!(Tokio, hostile::t_3_defect_code_reported_over_failed_writes())
        }
        #[test]
        fn t_5_grpc_cancelled_unknown_deadline_exceeded_and_permission_denied_are_transport_failures(
        ) {
            $crate::run!(Tokio, hostile::t_5_grpc_statuses_are_transport_failures())
        }
        #[test]
        fn t_8_a_silent_server_is_left_at_the_first_call_deadline_over_sockets() {
            $crate::run!(Tokio, hostile::t_8_silent_server_left())
        }
    };
    (blocking) => {
        #[test]
        fn t_8_a_silent_server_is_left_at_the_first_call_deadline_over_sockets_blocking() {
            $crate::run!(Blocking, hostile::t_8_silent_server_left())
        }
        #[test]
        fn t_3_a_write_failing_before_the_defect_close_code_is_read_still_reports_the_code() {
            $crate::run!(Blocking, hostile::t_3_defect_code_reported_over_failed_writes())
        }
        #[test]
        fn c_7_a_flood_of_large_unsolicited_frames_is_bounded_in_bytes_and_its_loss_counted() {
            $crate::run!(Blocking, hostile::c_7_flood_bounded())
        }
    };
}
