//! Prints the BLAKE3 digest of each seeded simulation's whole trace (the chaotic
//! configuration the simulation test runs), and one digest over them all, so a refactor can
//! show that it changed no behaviour: the digests before and after must match.
//!
//! `cargo run --release -p nervix-harness --example trace_digest -- [from] [to]` (seeds
//! `from..to`, 0..300 by default).

use nervix_harness::sim::{SimConfig, Simulation};

fn main() {
    let mut args = std::env::args().skip(1).map(|a| {
        a.parse::<u64>()
            .unwrap_or_else(|_| panic!("{a:?} is not a seed number"))
    });
    let from = args.next().unwrap_or(0);
    let to = args.next().unwrap_or(300);
    let mut all = blake3::Hasher::new();
    let mut lines = 0usize;
    for seed in from..to {
        let mut sim = Simulation::new(SimConfig::chaotic(seed));
        sim.run();
        let mut h = blake3::Hasher::new();
        let trace = sim.trace();
        lines += trace.len();
        for line in trace {
            h.update(line.as_bytes());
            h.update(b"\n");
        }
        let d = h.finalize();
        all.update(d.as_bytes());
        println!("{seed} {d}");
    }
    println!(
        "seeds {from}..{to} {} ({lines} trace lines)",
        all.finalize()
    );
}
