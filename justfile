# nervix-sansio tasks. `just --list` shows them all.

set shell := ["bash", "-euo", "pipefail", "-c"]

# The loopback cluster (three nodes, TLS, 127.0.0.1) and an example session over the tokio driver.
run:
    cargo run --quiet -p nervix-tokio --example session

# Every test of the workspace, clippy with -D warnings, rustfmt, and a build of the fuzz targets.
test:
    cargo fmt --all -- --check
    cargo test --workspace --all-features
    cargo clippy --workspace --all-targets --all-features -- -D warnings
    cargo clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --quiet

# Fuzz every target for `seconds` each (stable toolchain, no sanitizer; add `+nightly` and drop `-s none` for AddressSanitizer).
# server_message inputs may grow to the 4 MiB frame limit, so fuzzing reaches large frames.
fuzz seconds="60":
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.1 --locked
    for t in $(cargo fuzz list); do echo "== $t"; extra=""; if [ "$t" = server_message ]; then extra="-max_len=4194304"; fi; cargo fuzz run -s none "$t" -- -max_total_time={{seconds}} -rss_limit_mb=2048 $extra; done

# Criterion benchmarks: checked decode of a 1 MiB RowBatch frame against a bare verify of the
# same bytes, request/reply round trips through one exchange, typed rows of 1, 16 and 64
# columns checked and read against a bare verify, Arrow IPC batches of 8 typed columns built and
# submitted through a producer (against StreamWriter) and decoded and checked (against StreamReader),
# and upload chunking and download verification of a 64 MiB archive against BLAKE3 alone; then
# over real sockets on 127.0.0.1, round trips through the tokio driver against bare
# tokio-tungstenite and h2 echoes of the same frames, and rows per second through a subscription.
bench:
    cargo bench -p nervix-protocol --bench decode --bench exchange --bench rows --bench batches --bench transfers
    cargo bench -p nervix-tokio --bench loopback

# Rewrite vectors/corpus from its builders (review the diff before committing it).
corpus:
    cargo run --quiet -p nervix-conformance --bin write-corpus

# Long runs: 10,000 simulation seeds (CI runs 300) from seed `base`, and many more property cases.
# `just soak 100000 20000 1000000` runs seeds 1,000,000 to 1,099,999, never run before.
soak seeds="10000" cases="20000" base="0":
    NERVIX_SEEDS={{seeds}} NERVIX_SEED_BASE={{base}} PROPTEST_CASES={{cases}} cargo test --release -p nervix-harness --test simulation
    PROPTEST_CASES={{cases}} cargo test --release -p nervix-protocol --all-features --test round_trip --test transfer

# The simulation's seeded scenarios again over real sockets on 127.0.0.1: the tokio driver over
# gRPC and WebSocket, the blocking driver over WebSocket, `seeds` seeds each from `base` (CI runs 3).
# A failure names its seed: `NERVIX_SEED=n NERVIX_TRACE=1 cargo test -p nervix-tokio --test scenarios -- --nocapture`.
soak-transports seeds="200" base="0":
    NERVIX_SEEDS={{seeds}} NERVIX_SEED_BASE={{base}} cargo test --release -p nervix-tokio --test scenarios
    NERVIX_SEEDS={{seeds}} NERVIX_SEED_BASE={{base}} cargo test --release -p nervix-blocking --test scenarios

# Replay one simulation seed and print its trace.
replay seed:
    NERVIX_SEED={{seed}} NERVIX_TRACE=1 cargo test -p nervix-harness --test simulation -- --nocapture

# The simulated cluster served over real gRPC and WebSocket sockets until interrupted.
serve *args:
    cargo run --quiet -p nervix-loopback --bin nervix-sim -- serve {{args}}
