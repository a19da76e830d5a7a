//! The seeded simulation over a few hundred seeds; a failing seed is named in the message.

use cultnet_sim::sim::run;

#[test]
fn w_33_every_write_settles_once_and_no_unanswered_write_is_admitted_over_300_seeds() {
    let mut total = cultnet_sim::sim::Report::default();
    let mut failures = Vec::new();
    for seed in 0..300u64 {
        match run(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x004, 400) {
            Ok(r) => {
                total.writes += r.writes;
                total.admitted += r.admitted;
                total.refused += r.refused;
                total.unconfirmed += r.unconfirmed;
                total.admitted_late += r.admitted_late;
                total.refused_late += r.refused_late;
                total.resends += r.resends;
                total.reconnects += r.reconnects;
                total.injected += r.injected;
                total.batches += r.batches;
            }
            Err(e) => failures.push(e),
        }
    }
    println!("{total:?}");
    assert!(
        failures.is_empty(),
        "{} failing seeds, first: {}",
        failures.len(),
        failures[0]
    );
    // The runs reach every outcome, late answers, resends and reconnects.
    assert!(total.admitted > 1000, "{total:?}");
    assert!(total.refused > 100, "{total:?}");
    assert!(total.unconfirmed > 100, "{total:?}");
    assert!(total.admitted_late > 0, "{total:?}");
    assert!(total.refused_late > 0, "{total:?}");
    assert!(total.resends > 0, "{total:?}");
    assert!(total.reconnects > 0, "{total:?}");
    assert!(total.injected > 0, "{total:?}");
    assert!(total.batches > 100, "{total:?}");
}

#[test]
fn the_simulation_is_deterministic_from_its_seed() {
    for seed in [1u64, 2, 0xdead_beef] {
        assert_eq!(run(seed, 300), run(seed, 300));
    }
}
