//! The harness's seeded rule scenarios run again through a real transport: the blocking API
//! over the WebSocket console (its only transport) against the loopback cluster on 127.0.0.1.
//! The run is written once, for both drivers, in `nervix-driver-tests` (its `scenarios`
//! module says what each seed draws and what is checked).
//!
//! CI runs a few seeds; `NERVIX_SEED=n` replays one, `NERVIX_SEEDS` and `NERVIX_SEED_BASE`
//! run more (`just soak-transports`), `NERVIX_TRACE=1` prints every seed's trace. A failure
//! names its seed and prints both traces. Every wait is bounded; only 127.0.0.1 is used.

nervix_driver_tests::scenarios_tests!(blocking);
