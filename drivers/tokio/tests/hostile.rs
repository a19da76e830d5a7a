//! The tokio driver against a hostile peer over real sockets on 127.0.0.1: floods of frames
//! nobody asked for, and outcomes nobody waits for. Every test is bounded in time.

use nervix_loopback::{Loopback, LoopbackConfig};
use nervix_tokio::{
    Client, CommandResult, Config, Credentials, DriverEvent, Transport, WsAuth, OBSERVER_BYTES,
};
use std::future::Future;
use std::time::Duration;

const TRANSPORTS: [Transport; 2] = [Transport::Grpc, Transport::WebSocket(WsAuth::Header)];

fn block<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test ends within its bound")
}

fn endpoints(lb: &Loopback, transport: Transport) -> Vec<&str> {
    match transport {
        Transport::Grpc => lb.grpc_endpoints(),
        _ => lb.console_endpoints(),
    }
    .iter()
    .map(String::as_str)
    .collect()
}

async fn connected(lb: &Loopback, transport: Transport) -> Client {
    let cfg = Config::new(
        &endpoints(lb, transport),
        Credentials::new("nervix", "nervix"),
        transport,
    )
    .unwrap()
    .with_timeouts(Duration::from_secs(2), Duration::from_secs(2));
    let c = Client::connect(cfg).await.unwrap();
    c.select_domain(Some("tenant")).await.unwrap();
    c
}

/// The flood of the review: frames of 512 KiB, more than the observer bound holds.
const FLOOD: usize = 48;
const FRAME: usize = 512 << 10;

#[test]
fn c_7_a_flood_of_large_unsolicited_frames_is_bounded_in_bytes_and_its_loss_counted() {
    for transport in TRANSPORTS {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            ..LoopbackConfig::default()
        })
        .unwrap();
        block(async {
            let c = connected(&lb, transport).await;
            // One observer that does not read, and one that reads all the time.
            let slow = c.events();
            let mut fast = c.events();
            assert_eq!(lb.flood_notices(0, FLOOD, FRAME), 1, "{transport:?}");
            // The reader sees every frame, or the count of those it was too slow for.
            let (mut seen, mut missed) = (0, 0);
            while seen + missed < FLOOD {
                match tokio::time::timeout(Duration::from_secs(20), fast.recv()).await {
                    Ok(Ok(DriverEvent::Unsolicited(_))) => seen += 1,
                    Ok(Ok(DriverEvent::EventsLost(n))) => missed += n as usize,
                    Ok(Ok(_)) => {}
                    other => panic!("{transport:?}: {other:?}"),
                }
            }
            assert_eq!(fast.lost() as usize, missed, "{transport:?}");
            assert!(
                seen + missed == FLOOD && seen >= OBSERVER_BYTES / FRAME - 1,
                "{transport:?}: {seen} seen"
            );
            // The observer that never read holds at most its byte bound, and counts the rest.
            assert!(
                slow.held_bytes() <= OBSERVER_BYTES,
                "{transport:?}: {} bytes held",
                slow.held_bytes()
            );
            let fits = OBSERVER_BYTES / FRAME;
            assert!(
                slow.lost() >= (FLOOD - fits) as u64,
                "{transport:?}: {} lost",
                slow.lost()
            );
            let (mut frames, mut reported) = (0, 0);
            while let Ok(e) = slow.try_recv() {
                match e {
                    DriverEvent::Unsolicited(_) => frames += 1,
                    DriverEvent::EventsLost(n) => reported += n,
                    _ => {}
                }
            }
            assert_eq!(reported, slow.lost(), "{transport:?}: every loss reported");
            assert_eq!(
                frames + reported as usize,
                FLOOD,
                "{transport:?}: each frame kept or counted"
            );
            assert_eq!(slow.held_bytes(), 0);
            // The client still works.
            let r = c.execute("CREATE RELAY after;").await.unwrap();
            assert!(
                matches!(r, CommandResult::Completed(_)),
                "{transport:?}: {r:?}"
            );
        });
    }
}

#[test]
fn c_10_an_outcome_sent_as_its_wait_is_dropped_is_kept_exactly_once() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .unwrap();
    block(async {
        let c = connected(&lb, Transport::Grpc).await;
        // Waits dropped at every moment around their outcome's arrival.
        let mut references = Vec::new();
        for i in 0..200u64 {
            let p = c.submit(&format!("CREATE RELAY r{i};")).await.unwrap();
            references.push(p.reference().to_string());
            let spin = i % 20;
            tokio::time::sleep(Duration::from_micros(spin * 50)).await;
            drop(p);
        }
        let mut got = Vec::new();
        for _ in 0..100 {
            got.extend(c.unclaimed().await.unwrap());
            if got.len() >= references.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
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
        assert_eq!(c.unclaimed_lost(), 0);
    });
}

/// Waits for the first transport end the observer sees.
async fn first_end(events: &mut nervix_tokio::Events) -> nervix_tokio::End {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
            Ok(Ok(DriverEvent::TransportEnded { end, .. })) => return end,
            Ok(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn t_1_a_grpc_response_ending_inside_a_length_prefix_is_a_transport_failure() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .unwrap();
    block(async {
        let c = connected(&lb, Transport::Grpc).await;
        let mut events = c.events();
        // Three bytes of a five-byte prefix, then grpc-status 0.
        let raw = bytes::Bytes::from_static(&[0, 0, 0]);
        assert_eq!(lb.send_raw_then_finish(0, raw), 1);
        let end = first_end(&mut events).await;
        assert!(
            matches!(&end, nervix_tokio::End::Transport(m) if m.contains("inside a message")),
            "{end:?}"
        );
    });
}

#[test]
fn t_1_a_grpc_response_ending_before_the_bytes_its_prefix_promised_is_a_transport_failure() {
    let lb = Loopback::start(LoopbackConfig {
        nodes: 1,
        ..LoopbackConfig::default()
    })
    .unwrap();
    block(async {
        let c = connected(&lb, Transport::Grpc).await;
        let mut events = c.events();
        // A prefix promising 100 bytes, ten of them, then grpc-status 0.
        let mut raw = vec![0u8, 0, 0, 0, 100];
        raw.extend_from_slice(&[7; 10]);
        assert_eq!(lb.send_raw_then_finish(0, raw.into()), 1);
        let end = first_end(&mut events).await;
        assert!(
            matches!(&end, nervix_tokio::End::Transport(m) if m.contains("inside a message")),
            "{end:?}"
        );
        // A clean end at a message boundary is still a clean finish.
        let r = c.execute("CREATE RELAY again;").await.unwrap();
        assert!(matches!(r, CommandResult::Completed(_)), "{r:?}");
        let mut events = c.events();
        // (The loopback may still list the stream ended before.)
        assert!(lb.send_raw_then_finish(0, bytes::Bytes::new()) >= 1);
        assert_eq!(first_end(&mut events).await, nervix_tokio::End::Finished);
    });
}

/// The console closes with a defect code while the client is still writing a burst: the
/// writes fail, but the close code is what the session reports, and nothing is sent again.
#[test]
fn t_3_a_write_failing_before_the_defect_close_code_is_read_still_reports_the_code() {
    // The race is the server's to win or lose: several rounds, each code at least once.
    for code in [1008u16, 1009, 1003, 1007, 1008, 1009] {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            ..LoopbackConfig::default()
        })
        .unwrap();
        block(async {
            let c = connected(&lb, Transport::WebSocket(WsAuth::Header)).await;
            let mut events = c.events();
            lb.inject(nervix_loopback::CallFault::CloseCode(code));
            let big = format!("CREATE RELAY big SCHEMA '{}';", "x".repeat(1 << 20));
            let mut pending = Vec::new();
            for _ in 0..16 {
                // Once the close code was read, the client refuses to send more.
                match c.submit(&big).await {
                    Ok(p) => pending.push(p),
                    Err(nervix_tokio::Error::Defect(_)) => break,
                    Err(e) => panic!("{code}: {e}"),
                }
            }
            let end = first_end(&mut events).await;
            assert_eq!(end, nervix_tokio::End::Defect(code));
            for p in pending {
                let r = p.await.unwrap();
                assert!(!matches!(r, CommandResult::Completed(_)), "{code}: {r:?}");
            }
            assert!(matches!(
                c.execute("CREATE RELAY e;").await,
                Err(nervix_tokio::Error::Defect(_))
            ));
        });
        assert_eq!(lb.stats().calls.len(), 1, "{code}: no new session");
    }
}

/// CANCELLED, UNKNOWN, DEADLINE_EXCEEDED and PERMISSION_DENIED judge neither the credentials
/// (T-5) nor a frame of ours (T-6): each ends the session as a transport failure, after which
/// the client backs off, opens a new session and goes on; nothing is parked.
#[test]
fn t_5_grpc_cancelled_unknown_deadline_exceeded_and_permission_denied_are_transport_failures() {
    for code in [1u32, 2, 4, 7] {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            ..LoopbackConfig::default()
        })
        .unwrap();
        block(async {
            let c = connected(&lb, Transport::Grpc).await;
            let mut events = c.events();
            lb.inject(nervix_loopback::CallFault::GrpcStatus(code));
            let r = c.execute(&format!("CREATE RELAY r{code};")).await.unwrap();
            assert_eq!(
                first_end(&mut events).await,
                nervix_tokio::End::Transport(format!("grpc-status {code}")),
                "{code}"
            );
            // The frame was never read: the command is repeated under its reference on the
            // new session, or left uncertain; never failed as if refused.
            assert!(
                matches!(
                    r,
                    CommandResult::Completed(_) | CommandResult::Uncertain { .. }
                ),
                "{code}: {r:?}"
            );
            let r = c.execute("CREATE RELAY after;").await.unwrap();
            assert!(matches!(r, CommandResult::Completed(_)), "{code}: {r:?}");
        });
        assert!(lb.stats().calls.len() >= 2, "{code}: a new session");
    }
}

/// The sessions the client opened so far on `transport`, as the loopback saw them.
fn sessions(lb: &Loopback, transport: Transport) -> usize {
    lb.calls_to(match transport {
        Transport::Grpc => nervix_tokio::EXCHANGE_PATH,
        _ => nervix_tokio::CONSOLE_PATH,
    })
    .len()
}

/// A node that keeps its session open and answers nothing (a stuck node, a half-open
/// connection): the first call whose deadline passes with nothing heard replaces the session,
/// so the next call goes on a new one instead of waiting out 64 abandoned slots (T-8).
#[test]
fn t_8_a_silent_server_is_left_at_the_first_call_deadline_over_sockets() {
    for transport in TRANSPORTS {
        let lb = Loopback::start(LoopbackConfig {
            nodes: 1,
            ..LoopbackConfig::default()
        })
        .unwrap();
        block(async {
            let cfg = Config::new(
                &endpoints(&lb, transport),
                Credentials::new("nervix", "nervix"),
                transport,
            )
            .unwrap()
            .with_timeouts(Duration::from_millis(400), Duration::from_secs(2));
            let c = Client::connect(cfg).await.unwrap();
            c.select_domain(Some("tenant")).await.unwrap();
            let r = c.execute("CREATE RELAY before;").await.unwrap();
            assert!(
                matches!(r, CommandResult::Completed(_)),
                "{transport:?}: {r:?}"
            );
            assert_eq!(sessions(&lb, transport), 1, "{transport:?}");
            // The node goes silent: the command reaches it, nothing comes back.
            lb.drop_replies(0, true);
            let r = c.execute("CREATE RELAY silent;").await.unwrap();
            assert!(
                matches!(r, CommandResult::Uncertain { .. }),
                "{transport:?}: {r:?}"
            );
            lb.drop_replies(0, false);
            // The next command goes on a new session and completes there.
            let r = c.execute("CREATE RELAY after;").await.unwrap();
            assert!(
                matches!(r, CommandResult::Completed(_)),
                "{transport:?}: {r:?}"
            );
            assert_eq!(sessions(&lb, transport), 2, "{transport:?}");
        });
        lb.stop();
    }
}
