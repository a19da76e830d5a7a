//! `just run`: a real client session against the embedded simulated cluster, in process.
//!
//! A `Client` (the sans-IO session core) talks to a three-node `SimCluster` in real frames over
//! a simulated network with a virtual clock. The run commits a transaction, reads, and survives
//! a leader change: the session ends with a redirect, the client reconnects to the new leader,
//! attaches its transaction again and repeats what was outstanding under the same references.
//! Meanwhile the client follows the tenant's paced clock and reads a subscription's rows; the
//! leader change interrupts both, and both are restored on the new session (the subscription
//! as a new generation, with the gap reported). At the end the run is checked against what a
//! client must never promise.

use nervix_harness::sim::{SimConfig, Simulation};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let seed = std::env::var("NERVIX_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let mut sim = Simulation::new(SimConfig::calm(seed));
    println!("nervix-sim: one client, a simulated cluster of three nodes, seed {seed}\n");
    let step = |sim: &mut Simulation| sim.run_for(Duration::from_millis(500));

    let _ = sim.client().select_domain(Some("tenant"));
    sim.execute("CREATE RELAY orders SCHEMA orders UNBRANCHED;", false);
    step(&mut sim);
    // The tenant's paced clock, and a subscription whose rows arrive while the rest runs.
    sim.statement("ATTACH DOMAIN CLOCK");
    sim.statement("CREATE SUBSCRIPTION live FROM orders");
    step(&mut sim);
    sim.read();
    step(&mut sim);
    sim.execute("BEGIN;", false);
    step(&mut sim);
    sim.execute("CREATE RELAY audit;", true);
    step(&mut sim);
    sim.execute("CREATE RELAY billing;", true);
    step(&mut sim);
    // The leader moves while an append is outstanding.
    sim.execute("CREATE RELAY ledger;", true);
    let next = (sim.cluster().leader() + 1) % 3;
    sim.change_leader(next);
    sim.run_for(Duration::from_secs(5));
    sim.execute("COMMIT;", false);
    sim.run_for(Duration::from_secs(5));
    sim.execute("SHOW DOMAINS;", false);
    sim.run_for(Duration::from_secs(2));
    sim.statement("DELETE SUBSCRIPTION live");
    sim.statement("DETACH DOMAIN CLOCK");
    sim.run_for(Duration::from_secs(1));

    for line in sim.client_trace() {
        println!("{line}");
    }
    println!("\n{}", sim.summary());
    match sim.check() {
        Ok(()) => {
            println!("every request ended exactly once; every reported outcome matches the cluster's record");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nervix-sim: seed {seed} broke an invariant:\n{e}");
            ExitCode::FAILURE
        }
    }
}
