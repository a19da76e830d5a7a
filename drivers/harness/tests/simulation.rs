//! Seeded simulations of a client against the simulated cluster, under random operation and
//! fault schedules, checked against what a client must never promise.
//!
//! `NERVIX_SEED=n` replays one seed; `NERVIX_SEEDS=n` runs that many (CI runs a few hundred,
//! `just soak` ten thousand), starting at `NERVIX_SEED_BASE` (default 0) so a soak can run seeds
//! no earlier run has. A failing seed is named by its absolute number, which `NERVIX_SEED`
//! replays.

use nervix_harness::sim::{
    assert_seeds, run_seed, seed_selection, seeds_from_env, SimConfig, Simulation,
};
use proptest::prelude::*;

#[test]
fn c_4_every_request_ends_exactly_once_across_seeded_fault_schedules() {
    assert_seeds(seeds_from_env(300), |seed| {
        run_seed(SimConfig::chaotic(seed)).map(drop)
    });
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
fn p_5_producers_and_consumers_are_part_of_the_workload() {
    let mut outcomes = std::collections::BTreeMap::new();
    let mut deliveries = 0;
    for seed in 0..40 {
        let sim = run_seed(SimConfig::chaotic(seed)).unwrap_or_else(|e| panic!("{e}"));
        for (k, n) in sim.batch_outcomes() {
            *outcomes.entry(*k).or_insert(0) += n;
        }
        deliveries += sim.deliveries();
        if std::env::var_os("NERVIX_SUMMARY").is_some() {
            eprintln!("seed {seed}: {}", sim.summary());
        }
    }
    for kind in [
        "completed",
        "not admitted",
        "failed",
        "outcome unknown",
        "unknown",
    ] {
        assert!(
            outcomes.get(kind).copied().unwrap_or(0) > 0,
            "no batch ended {kind:?} in 40 seeds: {outcomes:?}"
        );
    }
    assert!(deliveries > 20, "only {deliveries} deliveries in 40 seeds");
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
    // 64 cases in CI, or PROPTEST_CASES (`just soak` runs many more).
    #![proptest_config(ProptestConfig { cases: cases(64), ..ProptestConfig::default() })]

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

#[test]
fn seed_selection_runs_from_the_base_and_replays_one_seed() {
    assert_eq!(seed_selection(None, None, None, 300), Ok(0..300));
    assert_eq!(seed_selection(None, Some("10"), None, 300), Ok(0..10));
    assert_eq!(
        seed_selection(None, Some("100000"), Some("1000000"), 300),
        Ok(1_000_000..1_100_000)
    );
    assert_eq!(seed_selection(None, None, Some("7"), 3), Ok(7..10));
    // A replay names the absolute seed; the base does not move it.
    assert_eq!(
        seed_selection(Some("1000042"), Some("5"), Some("1000000"), 300),
        Ok(1_000_042..1_000_043)
    );
    assert!(seed_selection(None, Some("10k"), None, 300)
        .unwrap_err()
        .contains("NERVIX_SEEDS"));
    assert!(seed_selection(None, None, Some("-1"), 300)
        .unwrap_err()
        .contains("NERVIX_SEED_BASE"));
    assert!(seed_selection(Some("x"), None, None, 300)
        .unwrap_err()
        .contains("NERVIX_SEED"));
    assert!(seed_selection(None, Some("2"), Some(&u64::MAX.to_string()), 300).is_err());
    assert!(seed_selection(Some(&u64::MAX.to_string()), None, None, 300).is_err());
}

/// The property cases to run: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn l_2_routed_statements_are_served_end_to_end_by_the_cluster() {
    use nervix_protocol::client::Routed;
    use std::time::Duration;
    let mut config = SimConfig::calm(3);
    config.operations = 0;
    let mut sim = Simulation::new(config);
    let run = |sim: &mut Simulation, text: &str| {
        let routed = sim.statement(text);
        sim.run_for(Duration::from_secs(2));
        routed
    };
    // USE selects locally; what follows names the selected domain.
    assert_eq!(
        run(&mut sim, "USE tenant"),
        Some(Routed::DomainSelected("tenant".into()))
    );
    let Some(Routed::Request(h)) = run(&mut sim, "LIST DOMAINS") else {
        panic!("LIST DOMAINS is a request of its own")
    };
    assert_eq!(sim.read_answer(h), Some("DomainList"));
    // The clock of the selected domain: attached, ticking, then detached.
    assert_eq!(
        run(&mut sim, "ATTACH DOMAIN CLOCK"),
        Some(Routed::ClockFollowed("tenant".into()))
    );
    assert_eq!(run(&mut sim, "ATTACH DOMAIN CLOCK"), None, "followed once");
    assert_eq!(
        run(&mut sim, "DETACH DOMAIN CLOCK"),
        Some(Routed::ClockDetaching("tenant".into()))
    );
    assert_eq!(run(&mut sim, "DETACH DOMAIN CLOCK"), None, "not followed");
    let clock = sim.clock_events().join(" | ");
    assert!(
        clock.starts_with("Attached { domain: \"tenant\""),
        "{clock}"
    );
    assert!(clock.contains("Ticked { domain: \"tenant\""), "{clock}");
    assert!(
        clock.ends_with("Ended { domain: \"tenant\", reason: Detached }"),
        "{clock}"
    );
    // A subscription: opened, rows, deleted.
    let Some(Routed::Subscribed(id)) = run(&mut sim, "CREATE SUBSCRIPTION live FROM orders") else {
        panic!("CREATE SUBSCRIPTION is a request of its own")
    };
    assert_eq!(
        run(&mut sim, "DELETE SUBSCRIPTION live"),
        Some(Routed::Unsubscribing(id))
    );
    let events = sim.subscription_events(id);
    assert_eq!(events.first().map(String::as_str), Some("open#1"));
    assert!(events[1..events.len() - 1]
        .iter()
        .all(|e| e.starts_with("rows")));
    assert!(events.len() > 3, "{events:?}");
    assert_eq!(events.last().map(String::as_str), Some("end Deleted"));
    // Everything else is a command, BACKUP included, and completes.
    let Some(Routed::Command(_)) = run(&mut sim, "BACKUP DOMAIN tenant") else {
        panic!("BACKUP is a command")
    };
    sim.run_for(Duration::from_secs(5));
    let summary = sim.summary();
    assert!(
        summary.starts_with(
            "1 commands: 1 completed, 0 failed, 0 uncertain; 1 reads; 1 subscriptions"
        ),
        "{summary}"
    );
    assert!(sim.check().is_ok(), "{:?}", sim.check());
}
