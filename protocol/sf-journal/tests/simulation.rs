//! A seeded simulation of the journal: appends, connections, sends, acknowledgements,
//! disconnects and crashes (some in the middle of an append), with restarts through recovery.
//! After every step, each appended frame is acknowledged or still on disk with its bytes, and
//! each connection sends the unacknowledged frames in FSN order (SF-5, SF-7, SF-10, SF-19,
//! SF-30).

mod common;
use common::*;

use proptest::prelude::*;
use sf_journal::recovery::recover;
use sf_journal::ring::{Ring, RingConfig};
use sf_journal::MemDir;

#[derive(Debug, Clone)]
enum Step {
    Append(u8),
    Connect,
    Send(u8),
    Ack(u8),
    Disconnect,
    /// A crash, the last append cut after this many of its operations (none if no append is
    /// in flight), then a restart through recovery.
    Crash(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => any::<u8>().prop_map(Step::Append),
        1 => Just(Step::Connect),
        2 => any::<u8>().prop_map(Step::Send),
        2 => any::<u8>().prop_map(Step::Ack),
        1 => Just(Step::Disconnect),
        1 => any::<u8>().prop_map(Step::Crash),
    ]
}

fn cfg() -> RingConfig {
    RingConfig {
        segment_bytes: 96,
        max_total_bytes: 96 * 8,
        append_deadline_millis: 10,
    }
}

fn body(fsn: i64, n: u8) -> Vec<u8> {
    let mut b = format!("{fsn}:").into_bytes();
    b.resize(b.len() + usize::from(n % 20), n);
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn sf_30_simulated_crashes_and_reconnects_lose_no_unacknowledged_frame(
        steps in prop::collection::vec(step(), 1..80),
    ) {
        let mut dir = MemDir::new();
        let mut ring = Ring::new(cfg());
        // What the producer was told was appended: FSN to bytes.
        let mut appended: Vec<(i64, Vec<u8>)> = Vec::new();
        let mut in_flight: Option<Vec<sf_journal::FileOp>> = None;
        let mut connected = false;
        let mut sent: Vec<i64> = Vec::new();
        let mut now = 0u64;
        for s in steps {
            now += 1;
            if let Some(ops) = in_flight.take() {
                dir.apply_all(&ops);
            }
            match s {
                Step::Append(n) => {
                    let fsn = ring.published_fsn() + 1;
                    let b = body(fsn, n);
                    if let Ok(a) = ring.append(&b, now) {
                        prop_assert_eq!(a.fsn, fsn);
                        appended.push((fsn, b));
                        in_flight = Some(a.ops);
                    }
                }
                Step::Connect => {
                    let w = ring.connect(0);
                    prop_assert_eq!(w.fsn_at_zero, ring.acked_fsn() + 1);
                    connected = true;
                    sent.clear();
                }
                Step::Send(k) => {
                    for _ in 0..k % 5 {
                        let Some((fsn, loc)) = ring.next_to_send() else { break };
                        let want = sent.last().map_or(ring.acked_fsn() + 1, |l| l + 1);
                        prop_assert_eq!(fsn, want, "strict FSN order");
                        let (_, b) = appended.iter().find(|(f, _)| *f == fsn).unwrap();
                        // The bytes sent are read back from storage as the driver would.
                        let mut view = dir.clone();
                        if let Some(ops) = &in_flight {
                            view.apply_all(ops);
                        }
                        let file = view.get(&loc.file).unwrap();
                        prop_assert_eq!(&file[loc.offset as usize..][..loc.len as usize], b.as_slice());
                        sent.push(fsn);
                    }
                }
                Step::Ack(k) => {
                    if connected && !sent.is_empty() {
                        let i = usize::from(k) % sent.len();
                        let ops = ring.ok(i as u64).unwrap();
                        dir.apply_all(&ops);
                    }
                }
                Step::Disconnect => {
                    ring.disconnect();
                    connected = false;
                }
                Step::Crash(cut) => {
                    // The last append's operations reached storage only in part (if at all).
                    if let Some(ops) = in_flight.take() {
                        let keep = usize::from(cut) % (ops.len() + 1);
                        dir.apply_all(&ops[..keep]);
                        if keep < ops.len() {
                            // Its checksum never landed: the producer's frame is lost with the
                            // crash, as an append not yet durable may be.
                            appended.pop();
                        }
                    }
                    let acked_before = ring.acked_fsn();
                    let r = recover(&slot_files(&dir), 0).unwrap();
                    dir.apply_all(&r.ops);
                    // Nothing unacknowledged is missing; acknowledged frames may come back.
                    prop_assert!(r.acked_fsn <= acked_before);
                    ring = Ring::from_recovery(cfg(), &r);
                    connected = false;
                    sent.clear();
                }
            }
            // Every appended, unacknowledged frame is in the ring.
            for (fsn, b) in &appended {
                if *fsn > ring.acked_fsn() {
                    let loc = ring.locate(*fsn);
                    prop_assert!(loc.is_some(), "FSN {} lost", fsn);
                    prop_assert_eq!(loc.unwrap().len as usize, b.len());
                }
            }
        }
    }
}
