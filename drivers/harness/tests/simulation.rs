//! Seeded simulations of a client against the simulated cluster, under random operation and
//! fault schedules, checked against what a client must never promise.
//!
//! `NERVIX_SEED=n` replays one seed; `NERVIX_SEEDS=n` runs that many (CI runs a few hundred,
//! `just soak` ten thousand).

use nervix_harness::sim::{run_seed, SimConfig, Simulation};
use proptest::prelude::*;

fn seeds() -> Vec<u64> {
    if let Ok(s) = std::env::var("NERVIX_SEED") {
        return vec![s.parse().expect("NERVIX_SEED is a number")];
    }
    let n: u64 = std::env::var("NERVIX_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    (0..n).collect()
}

#[test]
fn c_4_every_request_ends_exactly_once_across_seeded_fault_schedules() {
    let mut failures = Vec::new();
    for seed in seeds() {
        if let Err(e) = run_seed(SimConfig::chaotic(seed)) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} seeds failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn e_3_calm_runs_complete_every_command() {
    for seed in 0..20 {
        let sim = run_seed(SimConfig::calm(seed)).unwrap_or_else(|e| panic!("{e}"));
        let s = sim.summary();
        assert!(
            s.contains(" 0 uncertain"),
            "seed {seed}: without faults nothing is uncertain: {s}"
        );
    }
}

#[test]
fn same_seed_gives_the_same_trace_twice() {
    for seed in [1, 7, 42, 1234] {
        let mut a = Simulation::new(SimConfig::chaotic(seed));
        a.run();
        let mut b = Simulation::new(SimConfig::chaotic(seed));
        b.run();
        assert_eq!(a.trace(), b.trace(), "seed {seed} is not deterministic");
        assert!(a.trace().len() > 50, "seed {seed} did little");
    }
    let mut a = Simulation::new(SimConfig::chaotic(1));
    a.run();
    let mut c = Simulation::new(SimConfig::chaotic(2));
    c.run();
    assert_ne!(a.trace(), c.trace(), "different seeds differ");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any seed: no command is reported completed without its own completed outcome, none is
    /// reported failed when it completed, no reference is made up or changed, and every
    /// request ends exactly once.
    #[test]
    fn e_3_uncertain_commands_are_never_misreported(seed in any::<u64>()) {
        if let Err(e) = run_seed(SimConfig::chaotic(seed)) {
            prop_assert!(false, "{}", e);
        }
    }
}
