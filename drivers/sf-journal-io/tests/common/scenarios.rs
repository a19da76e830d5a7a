//! The scenarios the blocking drain and the tokio drain must both pass, each written once and
//! run by both test files (included by each with `#[path = "common/scenarios.rs"] mod
//! scenarios;`) through [`Drains`], the one part that differs: how a drain is run and closed.
//! Each scenario is named after the blocking drain's test; the tokio drain's test adds `_tokio`.
#![allow(dead_code)]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sf_journal::ring::OkQueueLimits;
use sf_journal::status::{encode_status, ErrorStatus, Status, StatusError};
use sf_journal::upgrade::{UpgradeError, UpgradeRequest};
use sf_journal_io::drain::{DrainConfig, DrainError, DrainReport, MAX_INBOUND_BYTES};
use sf_journal_io::journal::Closed;
use sf_journal_io::loopback::{Conn, LoopbackServer, ServerConfig};
use sf_journal_io::{Journal, JournalError};

use crate::common::*;
use crate::drain_common::*;

/// What a drain returns.
pub type Drained = Result<DrainReport, DrainError>;

/// What a close running beside a drain returns: the close's result, how long it took, and the
/// drain's result.
pub type ClosedBeside = (Closed, Duration, Drained);

/// A drain under test: the blocking one or the tokio one, run to its end from a plain thread.
pub trait Drains {
    /// Drains `j` with `c` until everything is acknowledged and `until` holds, or `by`.
    fn drain(&self, c: DrainConfig, j: &Mutex<Journal>, by: Instant, until: &Until) -> Drained;

    /// This drain's close of `j`.
    fn close(&self, j: &Mutex<Journal>, timeout_millis: i64) -> Result<Closed, JournalError>;

    /// Runs this drain's close of `j` while a drain of `j` to `s` runs, one that ends only when
    /// the journal is closed.
    fn close_beside(&self, s: &LoopbackServer, j: &Mutex<Journal>, ms: i64) -> ClosedBeside;

    /// Drains `j` to `s` with the default configuration as `tweak` changes it, for at most 20 s.
    fn run(
        &self,
        s: &LoopbackServer,
        j: &Mutex<Journal>,
        tweak: impl FnOnce(&mut DrainConfig),
    ) -> Drained {
        let mut c = DrainConfig::new(s.addr());
        tweak(&mut c);
        self.drain(c, j, Instant::now() + Duration::from_secs(20), &|_| true)
    }
}

/// When a drain may end, besides having everything acknowledged.
pub type Until = dyn Fn(&Journal) -> bool;

pub fn sf_w1_the_drain_upgrades_on_the_write_path_with_the_qwp_headers(d: &impl Drains) {
    let s = server(vec![]);
    let j = filled(2);
    let _ = d.run(&s, &j, |_| {}).unwrap();
    let c = &s.connections()[0];
    assert_eq!(c.path, "/api/v4/write");
    assert_eq!(c.header("X-QWP-Max-Version"), Some("1"));
    assert_eq!(c.header("X-QWP-Client-Id"), None);
    assert_eq!(c.header("X-QWP-Request-Durable-Ack"), None);
    assert_eq!(c.header("Authorization"), None);
    assert_eq!(
        c.header("Upgrade").map(str::to_ascii_lowercase).as_deref(),
        Some("websocket")
    );

    let s = server(vec![]);
    let j = durable_filled(OkQueueLimits::default(), 1);
    let _ = d
        .run(&s, &j, |c| {
            c.request = UpgradeRequest {
                client_id: Some("loader-1".into()),
                durable_ack: true,
                authorization: Some("Bearer abc".into()),
            }
        })
        .unwrap();
    let c = &s.connections()[0];
    assert_eq!(c.header("X-QWP-Client-Id"), Some("loader-1"));
    assert_eq!(c.header("X-QWP-Request-Durable-Ack"), Some("true"));
    assert_eq!(c.header("Authorization"), Some("Bearer abc"));
    assert_eq!(j.lock().unwrap().acked_fsn(), 0, "the durable ack trimmed");
}

pub fn sf_w3_auth_and_role_refusals_end_the_drain_and_other_statuses_are_retried(d: &impl Drains) {
    let refuse = |status: u16, headers: Vec<(String, String)>| Conn::Refuse { status, headers };
    for code in [401, 403] {
        let s = server(vec![refuse(code, vec![])]);
        assert!(matches!(
            d.run(&s, &filled(1), |_| {}),
            Err(DrainError::Upgrade(UpgradeError::Auth(c))) if c == code
        ));
        assert_eq!(s.connections().len(), 1, "no retry after {code}");
    }
    let s = server(vec![refuse(
        421,
        vec![("X-QuestDB-Role".into(), "replica".into())],
    )]);
    match d.run(&s, &filled(1), |_| {}) {
        Err(DrainError::Upgrade(UpgradeError::RoleMismatch { role, zone })) => {
            assert_eq!((role.as_deref(), zone), (Some("replica"), None));
        }
        other => panic!("expected a role mismatch, got {other:?}"),
    }
    let s = server(vec![refuse(
        421,
        vec![("X-QuestDB-Zone".into(), "eu".into())],
    )]);
    match d.run(&s, &filled(1), |_| {}) {
        Err(DrainError::Upgrade(UpgradeError::RoleMismatch { role, zone })) => {
            assert_eq!((role, zone.as_deref()), (None, Some("eu")));
        }
        other => panic!("expected a role mismatch, got {other:?}"),
    }
    let s = server(vec![refuse(503, vec![]), refuse(404, vec![])]);
    let j = filled(3);
    let r = d.run(&s, &j, |_| {}).unwrap();
    assert_eq!((r.connections, r.breaks), (1, 2));
    assert_eq!(s.connections().len(), 3);
    assert_eq!(
        s.connections()[2].messages(),
        frames(0, 3).into_iter().map(|f| f.1).collect::<Vec<_>>()
    );
}

pub fn sf_16_a_server_that_does_not_echo_durable_ack_is_refused(d: &impl Drains) {
    let s = server(vec![Conn::NoDurableEcho]);
    let j = durable_filled(OkQueueLimits::default(), 1);
    let r = d.run(&s, &j, |c| c.request.durable_ack = true);
    assert!(
        matches!(
            r,
            Err(DrainError::Upgrade(UpgradeError::DurableAckUnavailable))
        ),
        "{r:?}"
    );
    assert_eq!(
        s.connections()[0].messages().len(),
        0,
        "nothing is sent on a refused upgrade"
    );
    assert_eq!(s.connections().len(), 1, "refused for good");
}

pub fn sf_w8_a_server_message_over_the_inbound_cap_is_a_violation(d: &impl Drains) {
    assert_eq!(MAX_INBOUND_BYTES, 256 << 20);
    assert_eq!(
        DrainConfig::new("127.0.0.1:1".parse().unwrap()).max_inbound_bytes,
        256 << 20
    );
    let s = server(vec![Conn::Oversized(4097)]);
    let j = filled(1);
    let r = d.run(&s, &j, |c| c.max_inbound_bytes = 4096);
    assert!(
        matches!(&r, Err(DrainError::Violation(m)) if m.contains("server message")),
        "{r:?}"
    );
    // At the cap exactly, the message is read (and, not being a status, refused as one).
    let s = server(vec![Conn::Oversized(4096)]);
    let r = d.run(&s, &filled(1), |c| c.max_inbound_bytes = 4096);
    match r {
        Err(DrainError::Status(e)) => assert_eq!(e, StatusError::TrailingBytes(4096 - 11)),
        other => panic!("{other:?}"),
    }
}

pub fn sf_18_connections_dropped_mid_stream_are_replayed_in_fsn_order_after_back_off(
    d: &impl Drains,
) {
    let s = server(vec![Conn::DropAfter(4), Conn::DropAfter(5), Conn::Serve]);
    let j = filled(12);
    let started = Instant::now();
    let r = d
        .run(&s, &j, |c| c.backoff_initial = Duration::from_millis(40))
        .unwrap();
    // Two breaks, each after a successful upgrade: the back-off starts again from its first
    // step, 40 ms each time.
    assert!(
        started.elapsed() >= Duration::from_millis(80),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((r.connections, r.breaks), (3, 2));
    assert_eq!(j.lock().unwrap().acked_fsn(), 11);
    let conns = s.connections();
    // Each connection starts at the first frame the previous ones left unacknowledged (the
    // client read every OK sent before the drop) and sends in FSN order from there.
    let mut acked: i64 = -1;
    for c in &conns {
        let m = c.messages();
        let start = (acked + 1) as usize;
        let want: Vec<Vec<u8>> = frames(start, start + m.len())
            .into_iter()
            .map(|f| f.1)
            .collect();
        assert_eq!(m, want);
        if let Some(seq) = last_ok(c) {
            acked = acked.max(start as i64 + seq as i64);
        }
    }
    assert_eq!(acked, 11);
}

pub fn sf_19_a_reconnect_rewinds_to_the_first_unacknowledged_frame_on_the_wire(d: &impl Drains) {
    let s = server(vec![Conn::DropAfter(6)]);
    let j = filled(6);
    let _ = d.run(&s, &j, |_| {}).unwrap();
    let conns = s.connections();
    assert_eq!(conns.len(), 2);
    let first_unacked = last_ok(&conns[0]).map_or(0, |s| s as usize + 1);
    assert_eq!(conns[1].messages()[0], payload(first_unacked));
}

pub fn sf_21_the_replayed_frames_counter_counts_frames_sent_again(d: &impl Drains) {
    let s = server(vec![Conn::DropAfter(4), Conn::DropAfter(4)]);
    let j = filled(10);
    let r = d.run(&s, &j, |_| {}).unwrap();
    let sent: usize = s.connections().iter().map(|c| c.messages().len()).sum();
    assert_eq!(r.frames_sent as usize, sent);
    assert_eq!(r.replayed_frames as usize, sent - 10);
    assert!(r.replayed_frames > 0);
}

pub fn sf_43_a_retriable_error_replays_the_rejected_frame_and_a_terminal_one_keeps_it(
    d: &impl Drains,
) {
    let s = server(vec![Conn::ErrorAt {
        wire_seq: 2,
        status: ErrorStatus::WriteError,
    }]);
    let j = filled(5);
    let r = d.run(&s, &j, |_| {}).unwrap();
    assert_eq!(r.retriable_errors, 1);
    let conns = s.connections();
    let again = conns[1].messages();
    assert!(
        again.contains(&payload(2)),
        "the rejected frame is sent again"
    );
    assert_eq!(j.lock().unwrap().acked_fsn(), 4);

    let s = server(vec![Conn::ErrorAt {
        wire_seq: 0,
        status: ErrorStatus::SchemaMismatch,
    }]);
    let sf = scratch("terminal");
    let mut journal = Journal::open(&sf, "s", small()).unwrap();
    for i in 0..3 {
        let _ = journal.append(&payload(i), 0).unwrap();
    }
    let j = Mutex::new(journal);
    match d.run(&s, &j, |_| {}) {
        Err(DrainError::Terminal(t)) => {
            assert_eq!(
                (t.status, t.wire_seq, t.fsn),
                (ErrorStatus::SchemaMismatch, 0, Some(0))
            )
        }
        other => panic!("expected a terminal error, got {other:?}"),
    }
    assert_eq!(
        s.connections().len(),
        1,
        "no reconnect after a terminal error"
    );
    drop(j);
    let mut again = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!(
        again.recovered(),
        0..3,
        "the rejected frame stays in the journal"
    );
    let _ = again.connect(0);
    assert_eq!(drain(&mut again), frames(0, 3));
}

pub fn sf_44_after_a_terminal_error_appends_are_refused_and_close_ends_at_once(d: &impl Drains) {
    for mode in ["memory", "disk"] {
        let s = server(vec![Conn::ErrorAt {
            wire_seq: 1,
            status: ErrorStatus::SchemaMismatch,
        }]);
        let mut journal = if mode == "memory" {
            Journal::memory(small())
        } else {
            Journal::open(&scratch("terminal-stops"), "s", small()).unwrap()
        };
        for i in 0..3 {
            let _ = journal.append(&payload(i), 0).unwrap();
        }
        let j = Mutex::new(journal);
        match d.run(&s, &j, |_| {}) {
            Err(DrainError::Terminal(t)) => assert_eq!(
                (t.status, t.fsn),
                (ErrorStatus::SchemaMismatch, Some(1)),
                "{mode}"
            ),
            other => panic!("{mode}: expected a terminal error, got {other:?}"),
        }
        // The drain delivered it; the producer's next append is refused naming it.
        match j.lock().unwrap().append(&payload(3), 0) {
            Err(JournalError::Terminal(t)) => assert_eq!(
                (t.status, t.wire_seq, t.fsn),
                (ErrorStatus::SchemaMismatch, 1, Some(1)),
                "{mode}"
            ),
            other => panic!("{mode}: expected the terminal error, got {other:?}"),
        }
        // The drain has ended: the close does not sit out its 30 s deadline.
        let started = Instant::now();
        let c = d.close(&j, 30_000).unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{mode}: the close took {:?}",
            started.elapsed()
        );
        assert_eq!((c.unacknowledged, c.terminal), (1..3, None), "{mode}");
    }
}

pub fn sf_24_a_full_journal_while_the_drain_reconnects_names_its_attempts_and_outage_start(
    d: &impl Drains,
) {
    use sf_journal::ring::{AppendError, BackPressure};
    for mode in ["memory", "disk"] {
        // Every upgrade is answered 503: retried after a back-off, never connected.
        let s = server(
            (0..10_000)
                .map(|_| Conn::Refuse {
                    status: 503,
                    headers: Vec::new(),
                })
                .collect(),
        );
        let mut c = small();
        c.ring.max_total_bytes = 256;
        c.ring.append_deadline_millis = 600_000;
        let mut journal = if mode == "memory" {
            Journal::memory(c)
        } else {
            Journal::open(&scratch("full-reconnecting"), "s", c).unwrap()
        };
        for i in 0..6 {
            let _ = journal.append(&payload(i), 0).unwrap();
        }
        let j = Mutex::new(journal);
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let mut dc = DrainConfig::new(s.addr());
        dc.backoff_initial = Duration::from_millis(5);
        dc.backoff_max = Duration::from_millis(20);
        let by = Instant::now() + Duration::from_secs(20);
        // The producer runs beside the drain and closes the journal once it has seen the
        // verdict (or gave up), which ends the drain at its next look.
        let seen = std::thread::scope(|scope| {
            let producer = scope.spawn(|| {
                // Every verdict naming the reconnect, until two attempts were seen.
                let mut seen: Vec<(u32, u64)> = Vec::new();
                while Instant::now() < by - Duration::from_secs(2) {
                    let r = j.lock().unwrap().append(&payload(6), 0);
                    match r {
                        Err(JournalError::Append(AppendError::Full {
                            case:
                                BackPressure::WhileReconnecting {
                                    attempts,
                                    outage_start_millis,
                                },
                            ..
                        })) => {
                            seen.push((attempts, outage_start_millis));
                            if seen.iter().any(|&(a, _)| a != seen[0].0) {
                                break;
                            }
                        }
                        Err(JournalError::Append(AppendError::Full { .. })) => {}
                        other => panic!("{mode}: expected a full ring, got {other:?}"),
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                let _ = j.lock().unwrap().close(0, 0, 0);
                seen
            });
            let _ = d.drain(dc, &j, by, &|_| true);
            producer.join().unwrap()
        });
        let after = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let attempts: Vec<u32> = seen.iter().map(|&(a, _)| a).collect();
        assert!(
            attempts.windows(2).all(|w| w[0] <= w[1]) && attempts.first() != attempts.last(),
            "{mode}: the producer must see the attempts grow, saw {} verdicts, from {:?} to {:?}",
            attempts.len(),
            attempts.first(),
            attempts.last()
        );
        // One outage: its start is where it began, the same for every attempt.
        let start = seen[0].1;
        assert!(
            seen.iter().all(|&(_, s)| s == start),
            "{mode}: the outage start moved: {:?}",
            &seen[..seen.len().min(8)]
        );
        assert!(
            (before..=after).contains(&start),
            "{mode}: the outage began at {start}, not within {before}..={after}"
        );
    }
}

pub fn sf_44_after_a_protocol_violation_appends_are_refused_and_close_ends_at_once(
    d: &impl Drains,
) {
    for mode in ["memory", "disk"] {
        // A status frame of an unknown status: PROTOCOL_VIOLATION, terminal and forced.
        let s = server(vec![Conn::Garbage(vec![0x7f, 0, 0])]);
        let mut journal = if mode == "memory" {
            Journal::memory(small())
        } else {
            Journal::open(&scratch("violation-stops"), "s", small()).unwrap()
        };
        for i in 0..3 {
            let _ = journal.append(&payload(i), 0).unwrap();
        }
        let j = Mutex::new(journal);
        let ended = d.run(&s, &j, |_| {});
        let Err(e @ DrainError::Status(_)) = ended else {
            panic!("{mode}: expected a malformed status, got {ended:?}");
        };
        match j.lock().unwrap().append(&payload(3), 0) {
            Err(JournalError::Violation(why)) => assert_eq!(why, e.to_string(), "{mode}"),
            other => panic!("{mode}: expected the violation, got {other:?}"),
        }
        let started = Instant::now();
        let c = d.close(&j, 30_000).unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{mode}: the close took {:?}",
            started.elapsed()
        );
        assert_eq!((c.unacknowledged, c.terminal), (0..3, None), "{mode}");
    }
}

pub fn sf_17_pings_go_out_while_idle_with_durable_confirmations_pending(d: &impl Drains) {
    let s = LoopbackServer::start(ServerConfig {
        durable_after_pings: 3,
        ..ServerConfig::default()
    })
    .unwrap();
    let j = durable_filled(OkQueueLimits::default(), 4);
    let started = Instant::now();
    let r = d
        .run(&s, &j, |c| {
            c.request.durable_ack = true;
            c.keepalive = Duration::from_millis(30);
        })
        .unwrap();
    assert_eq!(
        j.lock().unwrap().acked_fsn(),
        3,
        "the durable ack came after the pings"
    );
    assert!(r.pings >= 3, "{r:?}");
    assert!(started.elapsed() >= Duration::from_millis(90));
    let c = &s.connections()[0];
    let pings: Vec<_> = c.frames.iter().filter(|f| f.opcode == 9).collect();
    // The server sent the durable ack on reading the third PING; one more may have crossed it.
    assert!(
        pings.len() >= 3 && pings.len() as u32 <= r.pings,
        "{} of {r:?}",
        pings.len()
    );
    assert!(pings.iter().all(|f| f.masked && f.fin));

    // Without durable ack, an idle connection with acknowledgements pending sends no PING.
    let s = server(vec![]);
    let r = d
        .run(&s, &filled(4), |c| c.keepalive = Duration::from_millis(1))
        .unwrap();
    assert_eq!(r.pings, 0);
}

pub fn sf_w2_a_server_version_of_0_or_above_1_is_refused_and_an_absent_one_is_1(d: &impl Drains) {
    let version = |v: &str| Conn::Headers(vec![("X-QWP-Version".into(), v.into())]);
    for bad in ["0", "2", "x"] {
        let s = server(vec![version(bad)]);
        match d.run(&s, &filled(1), |_| {}) {
            Err(DrainError::Upgrade(UpgradeError::Version(v))) => assert_eq!(v, bad),
            other => panic!("{bad}: {other:?}"),
        }
        assert!(s.connections()[0].messages().is_empty());
    }
    for good in ["", "1"] {
        let s = server(vec![Conn::Headers(vec![
            ("X-QWP-Version".into(), good.into()),
            ("X-QWP-Max-Batch-Size".into(), "junk".into()),
        ])]);
        let j = filled(2);
        let _ = d.run(&s, &j, |_| {}).unwrap();
        assert_eq!(j.lock().unwrap().acked_fsn(), 1, "{good:?}");
    }
}

pub fn sf_w4_a_malformed_status_frame_is_a_protocol_violation_and_trims_nothing(d: &impl Drains) {
    for garbage in [vec![], vec![0x01], vec![0x00, 1, 2], vec![0x7f, 0, 0]] {
        let s = server(vec![Conn::Garbage(garbage.clone())]);
        let j = filled(2);
        let r = d.run(&s, &j, |_| {});
        assert!(
            matches!(r, Err(DrainError::Status(_))),
            "{garbage:?}: {r:?}"
        );
        assert_eq!(j.lock().unwrap().acked_fsn(), -1);
        assert_eq!(s.connections().len(), 1, "a violation is not retried");
    }
}

pub fn sf_44_each_error_status_on_the_wire_ends_the_drain_or_is_retried(d: &impl Drains) {
    use ErrorStatus::*;
    for (status, terminal) in [
        (SchemaMismatch, true),
        (ParseError, true),
        (SecurityError, true),
        (InternalError, false),
        (WriteError, false),
        (NotWritable, false),
    ] {
        let s = server(vec![Conn::ErrorAt {
            wire_seq: 1,
            status,
        }]);
        let j = filled(3);
        let r = d.run(&s, &j, |_| {});
        if terminal {
            assert!(
                matches!(&r, Err(DrainError::Terminal(t)) if t.status == status && t.fsn == Some(1)),
                "{status:?}: {r:?}"
            );
            assert_eq!(s.connections().len(), 1);
            assert!(
                j.lock().unwrap().acked_fsn() < 1,
                "{status:?}: the rejected frame stays"
            );
        } else {
            let r = r.unwrap();
            assert_eq!((r.retriable_errors, r.connections), (1, 2), "{status:?}");
            assert_eq!(j.lock().unwrap().acked_fsn(), 2);
        }
    }
}

pub fn sf_18_the_back_off_doubles_over_consecutive_failed_attempts(d: &impl Drains) {
    let refuse = || Conn::Refuse {
        status: 503,
        headers: vec![],
    };
    let s = server(vec![refuse(), refuse(), refuse()]);
    let j = filled(2);
    let started = Instant::now();
    let r = d
        .run(&s, &j, |c| c.backoff_initial = Duration::from_millis(30))
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(30 + 60 + 120),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((r.connections, r.breaks), (1, 3));
    assert_eq!(j.lock().unwrap().acked_fsn(), 1);
}

pub fn sf_14_a_connection_dropped_with_oks_awaiting_durability_is_replayed_and_drains(
    d: &impl Drains,
) {
    let s = LoopbackServer::start(ServerConfig {
        seed: 7,
        script: vec![Conn::DropAfter(3), Conn::Serve],
        ack_one_in: 1,
        durable_after_pings: 2,
        ..ServerConfig::default()
    })
    .unwrap();
    let j = durable_filled(OkQueueLimits::default(), 5);
    let r = d
        .run(&s, &j, |c| {
            c.request.durable_ack = true;
            c.keepalive = Duration::from_millis(20);
        })
        .unwrap();
    assert_eq!(r.connections, 2, "{r:?}");
    let j = j.lock().unwrap();
    assert_eq!(j.acked_fsn(), j.published_fsn());
    assert_eq!(j.acked_fsn(), 4);
    // The first connection's OKs were all queued, none durable: every frame went out again.
    assert!(last_ok(&s.connections()[0]).is_some());
    assert_eq!(
        s.connections()[1]
            .frames
            .iter()
            .filter(|f| f.opcode == 2)
            .count(),
        5
    );
}

pub fn sf_16_a_drain_whose_request_and_journal_disagree_on_durable_ack_is_refused(d: &impl Drains) {
    let s = server(vec![]);
    // The request asks for durable acks, the journal trims on OK.
    let r = d.run(&s, &filled(2), |c| c.request.durable_ack = true);
    assert!(
        matches!(
            r,
            Err(DrainError::DurableAckMismatch {
                requested: true,
                journal: false
            })
        ),
        "{r:?}"
    );
    // The journal queues OKs for durable acks the request does not ask for.
    let r = d.run(&s, &durable_filled(OkQueueLimits::default(), 1), |_| {});
    assert!(
        matches!(
            r,
            Err(DrainError::DurableAckMismatch {
                requested: false,
                journal: true
            })
        ),
        "{r:?}"
    );
    assert!(s.connections().is_empty(), "nothing was sent");
}

pub fn sf_36_periodic_checkpoints_go_on_while_the_wire_is_down(d: &impl Drains) {
    let j = periodic_journal("checkpoints-outage");
    let before = j.lock().unwrap().dir_stats().unwrap();
    let mut c = DrainConfig::new(nobody());
    c.backoff_max = Duration::from_millis(20);
    let r = d.drain(c, &j, Instant::now() + Duration::from_millis(300), &|_| {
        true
    });
    assert!(matches!(r, Err(DrainError::TimedOut { .. })), "{r:?}");
    let after = j.lock().unwrap().dir_stats().unwrap();
    assert!(after.dir_syncs > before.dir_syncs, "{before:?} {after:?}");
    assert!(after.file_syncs > before.file_syncs, "{before:?} {after:?}");
}

pub fn sf_44_an_error_status_keeps_its_message_wire_seq_and_category(d: &impl Drains) {
    use sf_journal::status::Category;
    // Terminal: the drain's error carries the server's message.
    let s = server(vec![Conn::ErrorAt {
        wire_seq: 1,
        status: ErrorStatus::ParseError,
    }]);
    let j = filled(3);
    match d.run(&s, &j, |_| {}) {
        Err(DrainError::Terminal(t)) => assert_eq!(
            (t.status, t.category, t.wire_seq, t.fsn, t.message.as_str()),
            (
                ErrorStatus::ParseError,
                Category::Terminal,
                1,
                Some(1),
                "refused frame 1"
            )
        ),
        other => panic!("expected a terminal error, got {other:?}"),
    }
    // Retriable: the report keeps the last one, message included.
    let s = server(vec![Conn::ErrorAt {
        wire_seq: 2,
        status: ErrorStatus::WriteError,
    }]);
    let j = filled(4);
    let r = d.run(&s, &j, |_| {}).unwrap();
    let e = r.last_retriable.expect("the retriable error is reported");
    assert_eq!(
        (e.status, e.category, e.wire_seq, e.fsn, e.message.as_str()),
        (
            ErrorStatus::WriteError,
            Category::Retriable,
            2,
            Some(2),
            "refused frame 2"
        )
    );
}

pub fn sf_44_the_error_handler_is_called_for_each_error_status(d: &impl Drains) {
    use sf_journal_io::drain::{ErrorHandler, ErrorSink};
    let s = server(vec![
        Conn::ErrorAt {
            wire_seq: 0,
            status: ErrorStatus::InternalError,
        },
        Conn::ErrorAt {
            wire_seq: 1,
            status: ErrorStatus::WriteError,
        },
        Conn::ErrorAt {
            wire_seq: 0,
            status: ErrorStatus::SecurityError,
        },
    ]);
    let j = filled(3);
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    let into = seen.clone();
    let handler = ErrorHandler::new(move |e| into.lock().unwrap().push(e.clone()));
    let r = d.run(&s, &j, |c| c.errors = ErrorSink::Handler(handler));
    assert!(
        matches!(&r, Err(DrainError::Terminal(t)) if t.status == ErrorStatus::SecurityError),
        "{r:?}"
    );
    let seen: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|e| (e.status, e.wire_seq, e.message.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (ErrorStatus::InternalError, 0, "refused frame 0".to_owned()),
            (ErrorStatus::WriteError, 1, "refused frame 1".to_owned()),
            (ErrorStatus::SecurityError, 0, "refused frame 0".to_owned()),
        ],
        "each error once, in arrival order, retriable ones included"
    );
}

pub fn sf_44_the_error_inbox_is_bounded_drops_the_oldest_and_counts_the_drops(d: &impl Drains) {
    use sf_journal_io::drain::{ErrorInbox, ErrorSink, InboxLimits};
    let err = |status| Conn::ErrorAt {
        wire_seq: 0,
        status,
    };
    let s = server(vec![
        err(ErrorStatus::InternalError),
        err(ErrorStatus::WriteError),
        err(ErrorStatus::NotWritable),
    ]);
    let j = filled(2);
    let inbox = ErrorInbox::new(InboxLimits {
        max_errors: 2,
        max_bytes: 1 << 20,
    });
    let shared = inbox.clone();
    let r = d
        .run(&s, &j, |c| c.errors = ErrorSink::Inbox(shared))
        .unwrap();
    assert_eq!(r.retriable_errors, 3);
    assert_eq!(r.errors_dropped, 1, "one dropped at the count bound");
    assert_eq!(inbox.dropped(), 1);
    let kept: Vec<_> = inbox.take_all().iter().map(|e| e.status).collect();
    assert_eq!(
        kept,
        vec![ErrorStatus::WriteError, ErrorStatus::NotWritable],
        "the oldest went first"
    );
    assert!(inbox.is_empty());
    assert_eq!(inbox.bytes(), 0);

    // The default sink is an inbox the application can read.
    let s = server(vec![err(ErrorStatus::InternalError)]);
    let j = filled(1);
    let c = DrainConfig::new(s.addr());
    let inbox = c.errors.inbox().expect("an inbox by default").clone();
    let _ = d.run(&s, &j, |x| *x = c).unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox.pop().unwrap().message, "refused frame 0");
}

pub fn sf_w7_an_error_message_over_1024_bytes_or_not_utf8_is_a_typed_violation(d: &impl Drains) {
    let error_frame = |msg: &[u8]| {
        let mut f = vec![ErrorStatus::WriteError.byte()];
        f.extend_from_slice(&0u64.to_le_bytes());
        f.extend_from_slice(&(msg.len() as u16).to_le_bytes());
        f.extend_from_slice(msg);
        f
    };
    for (frame, want) in [
        (
            error_frame(&[b'x'; 1025]),
            StatusError::MessageTooLong(1025),
        ),
        (error_frame(&[0xff, 0xfe]), StatusError::NotUtf8),
    ] {
        let s = server(vec![Conn::Garbage(frame)]);
        let j = filled(2);
        match d.run(&s, &j, |_| {}) {
            Err(DrainError::Status(e)) => assert_eq!(e, want),
            other => panic!("expected a typed violation, got {other:?}"),
        }
        assert_eq!(j.lock().unwrap().acked_fsn(), -1, "nothing trimmed");
        assert_eq!(s.connections().len(), 1, "not retried");
    }
    // At 1024 bytes exactly the message is kept whole.
    let long = "y".repeat(1024);
    let frame = encode_status(&Status::Error {
        status: ErrorStatus::SchemaMismatch,
        wire_seq: 0,
        message: long.clone(),
    });
    let s = server(vec![Conn::Garbage(frame)]);
    match d.run(&s, &filled(1), |_| {}) {
        Err(DrainError::Terminal(t)) => assert_eq!(t.message, long),
        other => panic!("{other:?}"),
    }
}

pub fn sf_26_a_close_waits_for_the_running_drain_and_returns_once_all_is_acknowledged(
    d: &impl Drains,
) {
    use sf_journal_io::journal::DEFAULT_CLOSE_FLUSH_TIMEOUT_MILLIS;
    assert_eq!(DEFAULT_CLOSE_FLUSH_TIMEOUT_MILLIS, 5_000);
    let s = acking_when_idle(Duration::from_millis(50));
    let sf = scratch("close-waits");
    let j = disk_filled(&sf, 5);
    let (c, took, drained) = d.close_beside(&s, &j, DEFAULT_CLOSE_FLUSH_TIMEOUT_MILLIS);
    assert_eq!(
        c.unacknowledged,
        5..5,
        "the close waited for every acknowledgement"
    );
    assert!(!c.skipped);
    assert!(
        took < Duration::from_millis(2_500),
        "returned early: {took:?}"
    );
    assert!(
        took >= Duration::from_millis(50),
        "the server acks after 50 ms: {took:?}"
    );
    assert!(
        drained.is_ok(),
        "the drain ends with the journal: {drained:?}"
    );
    assert_eq!(last_ok(&s.connections()[0]), Some(4));
    assert_eq!(slot_names(&sf.join("s")), vec![".lock", ".lock.pid"]);
}

pub fn sf_27_a_close_times_out_at_its_bound_and_leaves_the_tail_for_the_next_sender(
    d: &impl Drains,
) {
    let s = acking_when_idle(Duration::from_secs(60));
    let sf = scratch("close-times-out");
    let j = disk_filled(&sf, 3);
    let (c, took, drained) = d.close_beside(&s, &j, 300);
    assert_eq!((c.unacknowledged, c.skipped), (0..3, false));
    // Whole milliseconds of a monotonic clock: the bound holds to within one.
    assert!(took >= Duration::from_millis(299), "{took:?}");
    assert!(took < Duration::from_millis(2_000), "{took:?}");
    assert!(drained.is_ok(), "{drained:?}");
    assert_eq!(
        s.connections()[0].messages().len(),
        3,
        "all sent, none acked"
    );
    let next = Journal::open(&sf, "s", small()).unwrap();
    assert_eq!(
        next.recovered(),
        0..3,
        "the tail is on disk for the next sender"
    );

    // Memory mode loses the tail, and says how much.
    let s = acking_when_idle(Duration::from_secs(60));
    let j = filled(3);
    let (c, took, _) = d.close_beside(&s, &j, 300);
    assert_eq!((c.unacknowledged, c.skipped), (0..3, false));
    // Whole milliseconds of a monotonic clock: the bound holds to within one.
    assert!(took >= Duration::from_millis(299), "{took:?}");
}

pub fn sf_28_a_close_of_0_or_minus_1_skips_the_wait_and_releases_the_lock(d: &impl Drains) {
    for timeout in [0, -1] {
        let s = acking_when_idle(Duration::from_secs(60));
        let sf = scratch("close-skips");
        let j = disk_filled(&sf, 3);
        let (c, took, drained) = d.close_beside(&s, &j, timeout);
        assert_eq!((c.unacknowledged, c.skipped), (0..3, true), "{timeout}");
        assert!(took < Duration::from_millis(1_000), "{timeout}: {took:?}");
        assert!(drained.is_ok(), "{drained:?}");
        // The lock is released while the closed journal still exists.
        let next = Journal::open(&sf, "s", small()).unwrap();
        assert_eq!(next.recovered(), 0..3);
        drop(j);
    }
}

pub fn sf_28_a_close_reports_a_latched_terminal_error_not_yet_delivered(d: &impl Drains) {
    // Latched and not delivered: the close hands it back, message included.
    let j = filled(2);
    {
        let mut x = j.lock().unwrap();
        let _ = x.connect(0);
        let _ = drain(&mut x);
        let e = x
            .reject_error(1, ErrorStatus::SchemaMismatch, "column type".into())
            .unwrap();
        assert_eq!(e.fsn, Some(1));
    }
    let c = d.close(&j, 0).unwrap();
    let t = c.terminal.expect("the latched error comes back");
    assert_eq!(
        (t.status, t.wire_seq, t.fsn, t.message.as_str()),
        (ErrorStatus::SchemaMismatch, 1, Some(1), "column type")
    );
    // Delivered by the drain: the close does not hand it back again.
    let s = server(vec![Conn::ErrorAt {
        wire_seq: 0,
        status: ErrorStatus::ParseError,
    }]);
    let j = filled(2);
    assert!(matches!(
        d.run(&s, &j, |_| {}),
        Err(DrainError::Terminal(_))
    ));
    let c = d.close(&j, 0).unwrap();
    assert_eq!(c.terminal, None);
}

pub fn sf_w2_a_frame_over_the_servers_max_batch_size_is_refused_naming_its_fsn(d: &impl Drains) {
    let max = |v: &str| Conn::Headers(vec![("X-QWP-Max-Batch-Size".into(), v.into())]);
    // Frames 0 and 2 are 20 bytes, frame 1 is 30.
    let mixed = || {
        let mut j = Journal::memory(small());
        let _ = j.append(&payload(0), 0).unwrap();
        let _ = j.append(b"QWP1 a frame of thirty bytes..", 0).unwrap();
        let _ = j.append(&payload(2), 0).unwrap();
        Mutex::new(j)
    };
    let s = server(vec![max("25")]);
    let j = mixed();
    match d.run(&s, &j, |_| {}) {
        Err(DrainError::FrameTooLarge { fsn, len, max }) => {
            assert_eq!((fsn, len, max), (1, 30, 25))
        }
        other => panic!("expected the frame refused, got {other:?}"),
    }
    let c = &s.connections()[0];
    assert!(
        !c.messages().iter().any(|m| m.len() == 30),
        "the oversized frame is not sent"
    );
    assert_eq!(s.connections().len(), 1, "not retried");
    assert!(j.lock().unwrap().acked_fsn() < 1, "it stays in the journal");

    // At the server's size exactly, and with no size (or a bad one), everything goes.
    for v in ["30", "", "junk", "0"] {
        let s = server(vec![max(v)]);
        let j = mixed();
        let r = d.run(&s, &j, |_| {});
        assert!(r.is_ok(), "{v:?}: {r:?}");
        assert_eq!(j.lock().unwrap().acked_fsn(), 2, "{v:?}");
    }
}

pub fn sf_w2_a_catch_up_frame_over_the_servers_max_batch_size_is_refused(d: &impl Drains) {
    use sf_journal_io::drain::CatchUp;
    let max = |v: &str| Conn::Headers(vec![("X-QWP-Max-Batch-Size".into(), v.into())]);
    let catch_up = |c: &mut DrainConfig| {
        c.catch_up = Some(CatchUp::new(|_| vec![b"QWP1 a dictionary frame".to_vec()]))
    };
    let s = server(vec![max("22")]);
    let j = slot_with_symbols("catch-up-too-large", 2);
    match d.run(&s, &j, catch_up) {
        Err(DrainError::CatchUpTooLarge { len, max }) => assert_eq!((len, max), (23, 22)),
        other => panic!("expected the catch-up frame refused, got {other:?}"),
    }
    assert!(s.connections()[0].messages().is_empty(), "nothing is sent");
    let s = server(vec![max("23")]);
    let j = slot_with_symbols("catch-up-fits", 2);
    let r = d.run(&s, &j, catch_up).unwrap();
    assert_eq!(r.catch_up_frames, 1);
}

pub fn sf_43_an_error_for_a_frame_already_acknowledged_is_a_violation_and_trims_nothing_more(
    d: &impl Drains,
) {
    // The server acknowledges wire sequence 0, then sends an error for it: the frame is
    // acknowledged already, so it can be neither replayed nor kept. The drain ends with a
    // violation naming it, not retried, and the frames after it stay in the journal.
    let binary = |status: &Status| {
        let body = encode_status(status);
        let mut f = vec![0x82, u8::try_from(body.len()).expect("a short status")];
        f.extend_from_slice(&body);
        f
    };
    for status in [ErrorStatus::WriteError, ErrorStatus::SchemaMismatch] {
        let mut raw = binary(&Status::Ok {
            wire_seq: 0,
            tables: Vec::new(),
        });
        raw.extend(binary(&Status::Error {
            status,
            wire_seq: 0,
            message: "late".into(),
        }));
        let s = server(vec![Conn::Raw(raw)]);
        let j = filled(3);
        let r = d.run(&s, &j, |_| {});
        assert!(
            matches!(&r, Err(DrainError::Violation(m)) if m.contains("already acknowledged")),
            "{status:?}: {r:?}"
        );
        assert_eq!(
            s.connections().len(),
            1,
            "{status:?}: a violation is not retried"
        );
        let j = j.lock().unwrap();
        assert_eq!((j.acked_fsn(), j.published_fsn()), (0, 2), "{status:?}");
        assert_eq!(j.stats().violations, 1, "{status:?}");
    }
}

pub fn sf_44_a_websocket_protocol_error_from_the_server_is_a_terminal_violation(d: &impl Drains) {
    for raw in BAD_WS_FRAMES {
        let s = server(vec![Conn::Raw(raw.to_vec())]);
        let j = filled(2);
        let r = d.run(&s, &j, |_| {});
        assert!(matches!(r, Err(DrainError::Violation(_))), "{raw:?}: {r:?}");
        assert_eq!(
            s.connections().len(),
            1,
            "{raw:?}: a violation is not retried"
        );
        assert_eq!(j.lock().unwrap().acked_fsn(), -1, "{raw:?}");
    }
}

pub fn sf_18_a_close_from_the_server_is_a_break_that_is_retried(d: &impl Drains) {
    // 1000, 1001, 1011, 1012, 1013, an application code (4000), no code.
    for raw in [
        &[0x88, 0x02, 0x03, 0xe8][..],
        &[0x88, 0x02, 0x03, 0xe9],
        &[0x88, 0x02, 0x03, 0xf3],
        &[0x88, 0x02, 0x03, 0xf4],
        &[0x88, 0x02, 0x03, 0xf5],
        &[0x88, 0x02, 0x0f, 0xa0],
        &[0x88, 0x00],
    ] {
        let s = server(vec![Conn::Raw(raw.to_vec())]);
        let j = filled(2);
        let r = d.run(&s, &j, |_| {}).unwrap();
        assert_eq!((r.connections, r.breaks), (2, 1), "{raw:?}");
        assert_eq!(j.lock().unwrap().acked_fsn(), 1, "{raw:?}");
    }
}

pub fn sf_18_a_poll_interval_of_0_neither_spins_nor_stalls_the_drain(d: &impl Drains) {
    let s = server(vec![]);
    let j = filled(4);
    let mut c = DrainConfig::new(s.addr());
    c.poll = Duration::ZERO;
    let started = Instant::now();
    let r = d
        .drain(c, &j, Instant::now() + Duration::from_secs(10), &|_| true)
        .unwrap();
    assert_eq!((r.connections, r.breaks), (1, 0));
    assert_eq!(j.lock().unwrap().acked_fsn(), 3);
    assert!(started.elapsed() < Duration::from_secs(5));
}

pub fn sf_18_a_connection_that_breaks_before_any_progress_keeps_the_back_off_growing(
    d: &impl Drains,
) {
    let fail = || Conn::ErrorAt {
        wire_seq: 0,
        status: ErrorStatus::InternalError,
    };
    let s = server(vec![fail(), fail(), fail()]);
    let j = filled(2);
    let started = Instant::now();
    let r = d
        .run(&s, &j, |c| c.backoff_initial = Duration::from_millis(40))
        .unwrap();
    assert_eq!((r.connections, r.breaks), (4, 3));
    assert!(
        started.elapsed() >= Duration::from_millis(40 + 80 + 160),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(j.lock().unwrap().acked_fsn(), 1);
}

pub fn sf_18_a_stalled_send_and_its_close_end_by_the_connect_timeout_and_reconnect(
    d: &impl Drains,
) {
    let s = LoopbackServer::start(ServerConfig {
        seed: 7,
        script: vec![Conn::Stall],
        max_connection_life: Duration::from_secs(15),
        ..ServerConfig::default()
    })
    .unwrap();
    let j = heavy(96);
    let mut c = DrainConfig::new(s.addr());
    c.connect_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let r = d
        .drain(c, &j, Instant::now() + Duration::from_secs(20), &|_| true)
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((r.connections, r.breaks), (2, 1));
    assert_eq!(j.lock().unwrap().acked_fsn(), 95);
}

pub fn sf_14_a_durable_drain_sends_no_more_than_its_ok_queue_holds_and_drains(d: &impl Drains) {
    let s = durable_server();
    let j = durable_filled(
        OkQueueLimits {
            max_entries: 2,
            max_bytes: 1 << 20,
        },
        10,
    );
    let r = d
        .run(&s, &j, |c| {
            c.request.durable_ack = true;
            c.keepalive = Duration::from_millis(5);
        })
        .unwrap();
    assert_eq!(j.lock().unwrap().acked_fsn(), 9);
    assert_eq!((r.connections, r.breaks), (1, 0));
    assert_eq!(j.lock().unwrap().stats().oks_dropped, 0);
    assert_eq!(s.connections()[0].messages().len(), 10);
}

pub fn sf_18_an_upgrade_answered_a_byte_at_a_time_ends_by_the_connect_timeout(d: &impl Drains) {
    // The answer takes some 7 s at a byte every 50 ms; each read alone would be quick.
    let s = server(vec![Conn::Trickle]);
    let j = filled(2);
    let started = Instant::now();
    let r = d
        .run(&s, &j, |c| c.connect_timeout = Duration::from_millis(300))
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?} {r:?}",
        started.elapsed()
    );
    assert_eq!((r.connections, r.breaks), (1, 1));
    assert_eq!(j.lock().unwrap().acked_fsn(), 1);
}

pub fn sf_44_a_close_refusing_what_the_client_sends_is_a_terminal_violation(d: &impl Drains) {
    for raw in REFUSING_CLOSES {
        let s = server(vec![Conn::Raw(raw.to_vec())]);
        let j = filled(2);
        let r = d.run(&s, &j, |_| {});
        assert!(
            matches!(&r, Err(DrainError::Violation(m)) if m.contains("closed with code")),
            "{raw:?}: {r:?}"
        );
        assert_eq!(s.connections().len(), 1, "{raw:?}: not retried");
        assert_eq!(j.lock().unwrap().acked_fsn(), -1, "{raw:?}");
    }
}

pub fn sf_14_a_durable_drain_past_the_ok_queue_byte_bound_merges_and_drains(d: &impl Drains) {
    let s = durable_server();
    // Each OK names the table "trades": 30 bytes, two fit.
    let j = durable_filled(
        OkQueueLimits {
            max_entries: 64,
            max_bytes: 60,
        },
        10,
    );
    let r = d
        .run(&s, &j, |c| {
            c.request.durable_ack = true;
            c.keepalive = Duration::from_millis(5);
        })
        .unwrap();
    assert_eq!(j.lock().unwrap().acked_fsn(), 9);
    assert_eq!((r.connections, r.breaks), (1, 0));
    assert_eq!(j.lock().unwrap().stats().oks_dropped, 0);
}

pub fn sf_13_every_status_already_arrived_is_read_so_a_long_backlog_never_stalls(d: &impl Drains) {
    // Frames of 4 KiB, each acknowledged at once by an OK of some 8 KiB: read one per burst,
    // the OKs fill the socket buffers (which grow to tens of MiB), the server stops reading,
    // and once the frames fill theirs too the sends stall.
    let s = backlog_server();
    let j = padded(12_000, 4096);
    let mut c = DrainConfig::new(s.addr());
    c.connect_timeout = Duration::from_secs(2);
    let r = d
        .drain(c, &j, Instant::now() + Duration::from_secs(30), &|_| true)
        .unwrap();
    assert_eq!((r.connections, r.breaks), (1, 0), "{r:?}");
    assert_eq!(j.lock().unwrap().acked_fsn(), 11_999);
}

pub fn sf_9_catch_up_frames_go_out_in_bursts_with_the_statuses_read_between(d: &impl Drains) {
    // A catch-up of 12 000 frames of 4 KiB, each acknowledged by an OK of some 8 KiB: sent
    // in one go without reading, they stall the connection as a long backlog would.
    let s = backlog_server();
    let mut j = Journal::memory(sf_journal_io::JournalConfig::memory());
    let _ = j.append_with_symbols(&["s"], |_| payload(0), 0).unwrap();
    let j = Mutex::new(j);
    let mut c = DrainConfig::new(s.addr());
    c.connect_timeout = Duration::from_secs(2);
    c.catch_up = Some(sf_journal_io::drain::CatchUp::new(|_| {
        (0..12_000)
            .map(|i| {
                let mut f = payload(i);
                f.resize(4096, b'.');
                f
            })
            .collect()
    }));
    let r = d
        .drain(c, &j, Instant::now() + Duration::from_secs(30), &|_| true)
        .unwrap();
    assert_eq!((r.connections, r.breaks), (1, 0), "{r:?}");
    assert_eq!((r.catch_up_frames, r.frames_sent), (12_000, 1));
    assert_eq!(j.lock().unwrap().acked_fsn(), 0);
}

pub fn sf_w8_client_frames_are_whole_masked_binary_and_the_close_payload_is_empty_or_coded(
    d: &impl Drains,
) {
    let s = server(vec![]);
    let j = filled(6);
    let _ = d.run(&s, &j, |_| {}).unwrap();
    // Wait (bounded) for the server to record the close.
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until && !s.connections()[0].frames.iter().any(|f| f.opcode == 8) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let c = &s.connections()[0];
    let data: Vec<_> = c.frames.iter().filter(|f| f.opcode != 8).collect();
    assert_eq!(data.len(), 6);
    for f in &c.frames {
        assert!(f.fin, "unfragmented");
        assert!(f.masked, "masked");
        assert!(
            matches!(f.opcode, 2 | 8),
            "binary or close, got {}",
            f.opcode
        );
    }
    let close: Vec<_> = c.frames.iter().filter(|f| f.opcode == 8).collect();
    assert_eq!(close.len(), 1);
    assert!(close[0].payload.is_empty() || close[0].payload.len() >= 2);
}

pub fn sf_18_a_steady_producer_cannot_hold_the_drain_past_its_deadline(d: &impl Drains) {
    let s = LoopbackServer::start(ServerConfig {
        ack_one_in: 1,
        ..ServerConfig::default()
    })
    .unwrap();
    let j = roomy();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            let t = Instant::now();
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                && t.elapsed() < Duration::from_secs(10)
            {
                {
                    let mut g = j.lock().unwrap();
                    for _ in 0..50 {
                        let _ = g.append(&payload(i), 0);
                        i += 1;
                    }
                }
                // The lock is not fair: a producer that takes it again at once starves the drain
                // of it. This one leaves a moment between its bursts, as a real one does.
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        let started = Instant::now();
        let r = d.drain(
            DrainConfig::new(s.addr()),
            &j,
            started + Duration::from_millis(1_000),
            &|_| false,
        );
        let took = started.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(matches!(r, Err(DrainError::TimedOut { .. })), "{r:?}");
        assert!(took < Duration::from_millis(2_500), "{took:?}");
    });
    // The statuses were read while the producer kept the drain busy.
    let j = j.lock().unwrap();
    // A second of draining reads acknowledgements between the bursts, even on a loaded machine
    // (the old loop read none until the producer stopped, 10 s later).
    assert!(j.acked_fsn() >= 0, "acked {}", j.acked_fsn());
    assert!(j.published_fsn() > j.acked_fsn());
}

pub fn sf_9_an_ok_for_a_catch_up_frame_not_yet_sent_is_a_violation(d: &impl Drains) {
    // 20 000 catch-up frames go out in bursts of 64 with the statuses read between; the server
    // answers every frame with an OK naming the last catch-up frame, which is read long before
    // that frame goes out (some 300 bursts later), however slow the server is to answer.
    let last_catch_up = encode_status(&Status::Ok {
        wire_seq: 19_999,
        tables: vec![("trades".into(), 1)],
    });
    let s = server(vec![Conn::Garbage(last_catch_up)]);
    let mut j = Journal::memory(sf_journal_io::JournalConfig::memory());
    let _ = j.append_with_symbols(&["s"], |_| payload(0), 0).unwrap();
    let j = Mutex::new(j);
    let mut c = DrainConfig::new(s.addr());
    c.catch_up = Some(sf_journal_io::drain::CatchUp::new(|_| {
        (0..20_000).map(payload).collect()
    }));
    let r = d.drain(c, &j, Instant::now() + Duration::from_secs(3), &|_| true);
    assert!(
        matches!(&r, Err(DrainError::Violation(m)) if m.contains("wire sequence 19999, not sent yet")),
        "{r:?}"
    );
    assert_eq!(s.connections().len(), 1, "not retried");
    let stats = j.lock().unwrap().stats();
    assert_eq!((stats.violations, stats.oks), (1, 1));
    assert_eq!(j.lock().unwrap().acked_fsn(), -1);
}

pub fn sf_18_a_status_trickled_a_byte_at_a_time_ends_by_the_deadline_and_is_read_whole(
    d: &impl Drains,
) {
    // The OK of frame 0, padded to some 1 KiB, comes a byte every 5 ms (some 5 s in all):
    // each read waits 50 ms, so each alone would return in time.
    let s = server(vec![Conn::TrickleStatus]);
    let j = filled(2);
    let mut c = DrainConfig::new(s.addr());
    c.poll = Duration::from_millis(50);
    let started = Instant::now();
    let r = d.drain(c, &j, started + Duration::from_millis(300), &|_| true);
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?} {r:?}",
        started.elapsed()
    );
    assert!(
        matches!(r, Err(DrainError::TimedOut { acked: -1, .. })),
        "{r:?}"
    );
    // With time enough, the status read in parts over many reads is taken whole.
    let s = server(vec![Conn::TrickleStatus]);
    let j = filled(2);
    let mut c = DrainConfig::new(s.addr());
    c.poll = Duration::from_millis(50);
    let r = d
        .drain(c, &j, Instant::now() + Duration::from_secs(20), &|_| true)
        .unwrap();
    assert_eq!((r.connections, r.breaks), (1, 0), "{r:?}");
    assert_eq!(j.lock().unwrap().acked_fsn(), 1);
    assert_eq!(j.lock().unwrap().stats().violations, 0);
}

pub fn sf_18_a_send_to_a_server_reading_slowly_ends_by_the_connect_timeout_and_reconnects(
    d: &impl Drains,
) {
    // One frame of 32 MiB to a server taking some 3 MB/s: every socket write makes progress
    // within the connect timeout of 1 s, the whole send would take some 10 s and leave the
    // first connection unbroken. The bound of 8 s leaves a loaded machine room for the second
    // connection's whole send.
    let s = server(vec![Conn::SlowRead]);
    let mut jc = sf_journal_io::JournalConfig::memory();
    jc.ring.segment_bytes = 64 << 20;
    let mut j = Journal::memory(jc);
    let mut f = payload(0);
    f.resize(32 << 20, b'.');
    let _ = j.append(&f, 0).unwrap();
    let j = Mutex::new(j);
    let mut c = DrainConfig::new(s.addr());
    c.connect_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let r = d
        .drain(c, &j, Instant::now() + Duration::from_secs(20), &|_| true)
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?} {r:?}",
        started.elapsed()
    );
    assert_eq!((r.connections, r.breaks), (2, 1), "{r:?}");
    assert_eq!(j.lock().unwrap().acked_fsn(), 0);
}

pub fn sf_2_appends_return_at_once_while_the_drain_is_stuck_in_a_send(d: &impl Drains) {
    // The first connection reads nothing: 96 frames of 256 KiB fill the socket buffers and
    // one send waits its whole bound (the connect timeout, 4 s). A producer appending
    // meanwhile must not wait for that send: the journal is not held across the wire.
    let s = LoopbackServer::start(ServerConfig {
        seed: 7,
        script: vec![Conn::Stall],
        max_connection_life: Duration::from_secs(15),
        ..ServerConfig::default()
    })
    .unwrap();
    let j = heavy(96);
    let mut c = DrainConfig::new(s.addr());
    c.connect_timeout = Duration::from_secs(4);
    std::thread::scope(|sc| {
        let producer = sc.spawn(|| {
            // Bounded wait for the stalled connection, then time for its buffers to fill
            // (the drain is then inside a send until some 4 s after the upgrade).
            let by = Instant::now() + Duration::from_secs(20);
            while s.connections().is_empty() && Instant::now() < by {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(1_000));
            let mut slowest = Duration::ZERO;
            for i in 96..106 {
                let mut f = payload(i);
                f.resize(256 << 10, b'.');
                let t = Instant::now();
                let fsn = sf_journal_io::journal::append_waiting(&j, &f).unwrap();
                slowest = slowest.max(t.elapsed());
                assert_eq!(fsn, i as i64);
            }
            (slowest, s.connections().len())
        });
        let r = d
            .drain(c, &j, Instant::now() + Duration::from_secs(30), &|j| {
                j.published_fsn() == 105
            })
            .unwrap();
        let (slowest, connections_by_then) = producer.join().unwrap();
        // A drain holding the journal across the stuck send keeps an append waiting for
        // seconds.
        assert!(
            slowest < Duration::from_millis(1_500),
            "an append waited for the wire: {slowest:?}"
        );
        // And the appends did run while the send was stuck: the drain had not yet left the
        // stalled connection for the second one.
        assert_eq!(
            connections_by_then, 1,
            "the appends came too late to meet the stalled send"
        );
        assert_eq!((r.connections, r.breaks), (2, 1), "{r:?}");
    });
    assert_eq!(j.lock().unwrap().acked_fsn(), 105);
}

pub fn sf_17_a_keepalive_interval_of_0_sends_no_ping(d: &impl Drains) {
    // The server sends its durable ack only after a PING: with the keepalive off
    // (`durable_ack_keepalive_interval_millis=0`, as the reference client reads it) none goes
    // out, so nothing becomes durable before the deadline.
    let s = LoopbackServer::start(ServerConfig {
        durable_after_pings: 1,
        ..ServerConfig::default()
    })
    .unwrap();
    let j = durable_filled(OkQueueLimits::default(), 4);
    let mut c = DrainConfig::new(s.addr());
    c.request.durable_ack = true;
    c.keepalive = Duration::ZERO;
    let r = d.drain(
        c,
        &j,
        Instant::now() + Duration::from_millis(1_500),
        &|_| true,
    );
    assert!(
        matches!(r, Err(DrainError::TimedOut { acked: -1, .. })),
        "{r:?}"
    );
    let c = &s.connections()[0];
    assert_eq!(c.frames.iter().filter(|f| f.opcode == 9).count(), 0);
    assert!(!c.sent.is_empty(), "the OKs came and wait for durability");
}

pub fn sf_17_pings_keep_their_interval_when_the_poll_is_longer(d: &impl Drains) {
    // The server sends its durable ack after the third PING: with a PING every 30 ms that is
    // some 100 ms after the OKs. A drain that looks for a due PING only when a read wait of
    // the poll interval (1 s) ends sends one a second, and takes some 3 s.
    let s = LoopbackServer::start(ServerConfig {
        durable_after_pings: 3,
        ack_one_in: 1,
        ..ServerConfig::default()
    })
    .unwrap();
    let j = durable_filled(OkQueueLimits::default(), 4);
    let mut c = DrainConfig::new(s.addr());
    c.request.durable_ack = true;
    c.keepalive = Duration::from_millis(30);
    c.poll = Duration::from_secs(1);
    let started = Instant::now();
    let r = d
        .drain(c, &j, started + Duration::from_secs(20), &|_| true)
        .unwrap();
    let took = started.elapsed();
    assert_eq!(j.lock().unwrap().acked_fsn(), 3);
    assert!(r.pings >= 3, "{r:?}");
    assert!(took < Duration::from_millis(1_500), "{took:?} {r:?}");
}
