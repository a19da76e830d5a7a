//! The seeded simulation: many seeds, every invariant held, and the runs cover what they claim.

use gar_sim::sim::{run, Report, SimConfig};

fn runs(seeds: std::ops::Range<u64>, base: &SimConfig) -> Vec<(u64, Report)> {
    seeds
        .map(|seed| {
            (
                seed,
                run(&SimConfig {
                    seed,
                    ..base.clone()
                }),
            )
        })
        .collect()
}

#[test]
fn seeded_sessions_hold_every_invariant() {
    let all = runs(0..60, &SimConfig::default());
    for (seed, r) in &all {
        assert!(r.violations.is_empty(), "seed {seed}: {:#?}", r.violations);
    }
    let total = |f: &dyn Fn(&Report) -> u64| all.iter().map(|(_, r)| f(r)).sum::<u64>();
    assert!(total(&|r| r.sessions) > 120, "restarts happen");
    assert!(total(&|r| r.refused) > 0, "refusals happen");
    assert!(total(&|r| r.races) > 0, "races happen");
    assert!(total(&|r| r.races_contended) > 0, "contended races happen");
    assert!(total(&|r| r.beats_lost) > 0 && total(&|r| r.beats_late) > 0);
    assert!(
        total(&|r| r.failed_writes_reported) > 0,
        "failed writes come back"
    );
    assert!(total(&|r| r.failed_writes_reported) <= total(&|r| r.bad_writes));
    let stops = |k: &str| total(&|r| r.stops.get(k).copied().unwrap_or(0));
    assert!(stops("ServerLogoff") > 0, "server logoffs happen");
    assert!(stops("Stop") > 0, "client logoffs happen");
}

#[test]
fn lossy_heartbeats_end_sessions_by_timeout_without_breaking_invariants() {
    let lossy = SimConfig {
        heartbeat_loss: 60,
        heartbeat_late: 30,
        ..SimConfig::default()
    };
    let all = runs(100..130, &lossy);
    for (seed, r) in &all {
        assert!(r.violations.is_empty(), "seed {seed}: {:#?}", r.violations);
    }
    let timeouts: u64 = all
        .iter()
        .map(|(_, r)| {
            r.stops.get("HeartbeatTimeout").copied().unwrap_or(0)
                + r.stops.get("Error").copied().unwrap_or(0)
        })
        .sum();
    assert!(timeouts > 0, "lost heartbeats end sessions");
}

#[test]
fn a_run_is_a_function_of_its_seed() {
    let c = SimConfig {
        seed: 7,
        ..SimConfig::default()
    };
    assert_eq!(run(&c), run(&c));
}
