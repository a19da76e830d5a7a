//! The blocking driver against a hostile peer over real sockets on 127.0.0.1: floods of
//! frames nobody asked for, and outcomes nobody waits for. Every test is bounded in time.

use nervix_blocking::{
    Client, CommandResult, Config, Credentials, DriverEvent, WsAuth, OBSERVER_BYTES,
};
use nervix_loopback::{Loopback, LoopbackConfig};
use std::time::{Duration, Instant};

fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    nervix_loopback::bounded(Duration::from_secs(60), f)
}

fn connected(lb: &Loopback) -> Client {
    let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
    let cfg = Config::new(&seeds, Credentials::new("nervix", "nervix"))
        .unwrap()
        .with_auth(WsAuth::Header)
        .with_timeouts(Duration::from_secs(2), Duration::from_secs(2));
    let c = Client::connect(cfg).unwrap();
    c.select_domain(Some("tenant")).unwrap();
    c
}

/// The flood of the review: frames of 512 KiB, more than the observer bound holds.
const FLOOD: usize = 48;
const FRAME: usize = 512 << 10;

#[test]
fn c_7_a_flood_of_large_unsolicited_frames_is_bounded_in_bytes_and_its_loss_counted() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .unwrap();
    let lb = std::sync::Arc::new(lb);
    let server = lb.clone();
    bounded(move || {
        let lb = server;
        let c = connected(&lb);
        // One observer that does not read, and one that reads all the time.
        let slow = c.events().unwrap();
        let fast = c.events().unwrap();
        assert_eq!(lb.flood_notices(0, FLOOD, FRAME), 1);
        let end = Instant::now() + Duration::from_secs(20);
        // The reader sees every frame, or the count of those it was too slow for.
        let (mut seen, mut missed) = (0, 0);
        while seen + missed < FLOOD {
            assert!(Instant::now() < end, "{seen} frames seen");
            match fast.next_timeout(Duration::from_secs(1)) {
                Some(DriverEvent::Unsolicited(_)) => seen += 1,
                Some(DriverEvent::EventsLost(n)) => missed += n as usize,
                _ => {}
            }
        }
        assert_eq!(fast.lost() as usize, missed);
        assert!(
            seen + missed == FLOOD && seen >= OBSERVER_BYTES / FRAME - 1,
            "{seen} seen"
        );
        assert!(
            slow.held_bytes() <= OBSERVER_BYTES,
            "{} bytes held",
            slow.held_bytes()
        );
        let fits = OBSERVER_BYTES / FRAME;
        assert!(slow.lost() >= (FLOOD - fits) as u64, "{} lost", slow.lost());
        let (mut frames, mut reported) = (0, 0);
        for e in slow.drain() {
            match e {
                DriverEvent::Unsolicited(_) => frames += 1,
                DriverEvent::EventsLost(n) => reported += n,
                _ => {}
            }
        }
        assert_eq!(reported, slow.lost(), "every loss reported");
        assert_eq!(
            frames + reported as usize,
            FLOOD,
            "each frame kept or counted"
        );
        assert_eq!(slow.held_bytes(), 0);
        let r = c.execute("CREATE RELAY after;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
    });
}

/// The console closes with a defect code while the client is still writing a burst: the
/// writes fail, but the close code is what the session reports, and nothing is sent again.
#[test]
fn t_3_a_write_failing_before_the_defect_close_code_is_read_still_reports_the_code() {
    // The race is the server's to win or lose: several rounds, each code at least once.
    for code in [1008u16, 1009, 1003, 1007, 1008, 1009] {
        let lb = std::sync::Arc::new(
            Loopback::start(LoopbackConfig {
                nodes: 1,
                ..LoopbackConfig::default()
            })
            .unwrap(),
        );
        let server = lb.clone();
        bounded(move || {
            let lb = server;
            let c = connected(&lb);
            let events = c.events().unwrap();
            lb.inject(nervix_loopback::CallFault::CloseCode(code));
            let big = format!("CREATE RELAY big SCHEMA '{}';", "x".repeat(1 << 20));
            let mut pending = Vec::new();
            for _ in 0..16 {
                // Once the close code was read, the client refuses to send more.
                match c.submit(&big) {
                    Ok(p) => pending.push(p),
                    Err(nervix_blocking::Error::Defect(_)) => break,
                    Err(e) => panic!("{code}: {e}"),
                }
            }
            let end = loop {
                match events.next_timeout(Duration::from_secs(10)) {
                    Some(DriverEvent::TransportEnded { end, .. }) => break end,
                    Some(_) => {}
                    None => panic!("{code}: no end"),
                }
            };
            assert_eq!(end, nervix_blocking::End::Defect(code));
            for p in pending {
                let r = p.wait().unwrap();
                assert!(!matches!(r, CommandResult::Completed(_)), "{code}: {r:?}");
            }
            assert!(matches!(
                c.execute("CREATE RELAY e;"),
                Err(nervix_blocking::Error::Defect(_))
            ));
        });
        assert_eq!(lb.stats().calls.len(), 1, "{code}: no new session");
    }
}

/// A node that keeps its session open and answers nothing (a stuck node, a half-open
/// connection): the first call whose deadline passes with nothing heard replaces the session,
/// so the next call goes on a new one instead of waiting out 64 abandoned slots (T-8).
#[test]
fn t_8_a_silent_server_is_left_at_the_first_call_deadline_over_sockets_blocking() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .unwrap();
    let lb = std::sync::Arc::new(lb);
    let server = lb.clone();
    bounded(move || {
        let lb = server;
        let seeds: Vec<&str> = lb.console_endpoints().iter().map(String::as_str).collect();
        let cfg = Config::new(&seeds, Credentials::new("nervix", "nervix"))
            .unwrap()
            .with_auth(WsAuth::Header)
            .with_timeouts(Duration::from_millis(400), Duration::from_secs(2));
        let c = Client::connect(cfg).unwrap();
        c.select_domain(Some("tenant")).unwrap();
        let sessions = || lb.calls_to(nervix_blocking::CONSOLE_PATH).len();
        let r = c.execute("CREATE RELAY before;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        assert_eq!(sessions(), 1);
        // The node goes silent: the command reaches it, nothing comes back.
        lb.drop_replies(0, true);
        let r = c.execute("CREATE RELAY silent;").unwrap();
        assert!(matches!(r, CommandResult::Uncertain { .. }), "{r:?}");
        lb.drop_replies(0, false);
        // The next command goes on a new session and completes there.
        let r = c.execute("CREATE RELAY after;").unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        assert_eq!(sessions(), 2);
    });
}
