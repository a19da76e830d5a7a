# nervix-sansio tasks. `just --list` shows them all.

set shell := ["bash", "-euo", "pipefail", "-c"]

# The loopback cluster (three nodes, TLS, 127.0.0.1) and an example session over the tokio driver,
# then a client process with a journal killed with SIGKILL mid-command and its successor on the
# same slot recovering each outcome from the server's record.
run:
    cargo run --quiet -p nervix-tokio --example session

# Every test of the workspace (the drift test of the committed generated code needs flatc 25.12.19),
# clippy with -D warnings, rustfmt, a build of the fuzz targets, and the engine built without flatc.
test:
    cargo fmt --all -- --check
    cargo test --workspace --all-features
    cargo clippy --workspace --all-targets --all-features -- -D warnings
    cargo clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --quiet
    just no-flatc-build
    just package

# Every folder holding a flatc is left out of PATH and FLATC points nowhere: users need no flatc.
# Build nervix-protocol without flatc, in a target directory of its own.
no-flatc-build:
    #!/usr/bin/env bash
    set -euo pipefail
    path=""
    IFS=: read -ra dirs <<<"$PATH"
    for d in "${dirs[@]}"; do
        if [ -n "$d" ] && [ ! -e "$d/flatc" ]; then path="${path:+$path:}$d"; fi
    done
    if env PATH="$path" bash -c 'command -v flatc' >/dev/null; then echo "flatc still on PATH"; exit 1; fi
    target="${CARGO_TARGET_DIR:-target}/no-flatc"
    env PATH="$path" FLATC=/nonexistent cargo build --quiet -p nervix-protocol --target-dir "$target"
    echo "nervix-protocol built without flatc"

# Instructions (valgrind's callgrind, repeatable under load) of `n` round trips through one Exchange:
# compare the count before and after a change that must cost nothing (e.g. tracing with no subscriber).
exchange-instructions n="100000":
    cargo build --quiet --release -p nervix-protocol --example exchange_round_trips
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "${CARGO_TARGET_DIR:-target}/release/examples/exchange_round_trips" {{n}} 2>&1 | grep Collected

# Package every crate meant for users together (each finds its siblings among the packages, not on a
# registry), without building them again; the .crate files land in target/package.
package:
    cargo package --offline --no-verify --allow-dirty -p nervix-protocol -p sansio-kit -p sf-journal -p sf-journal-io -p nervix-journal -p nervix-driver-support -p nervix-tokio -p nervix-blocking

# Run after changing the schema or its generator (schema/gen); review the diff before committing.
# Rewrite protocol/nervix/src/generated from schema/ with flatc 25.12.19 (FLATC or PATH).
regen:
    cargo run --quiet -p nervix-schema-gen --bin regen-schema

# Fuzz every target for `seconds` each (stable toolchain, no sanitizer; add `+nightly` and drop `-s none` for AddressSanitizer).
# server_message inputs may grow to the 4 MiB frame limit, so fuzzing reaches large frames.
fuzz seconds="60":
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.1 --locked
    for t in $(cargo fuzz list); do echo "== $t"; extra=""; if [ "$t" = server_message ]; then extra="-max_len=4194304"; fi; cargo fuzz run -s none "$t" -- -max_total_time={{seconds}} -rss_limit_mb=2048 $extra; done

# Criterion benchmarks: checked decode of a 1 MiB RowBatch frame against a bare verify of the
# same bytes, request/reply round trips through one exchange, typed rows of 1, 16 and 64
# columns checked and read against a bare verify, Arrow IPC batches of 8 typed columns built and
# submitted through a producer (against StreamWriter) and decoded and checked (against StreamReader),
# upload chunking and download verification of a 64 MiB archive against BLAKE3 alone, and the
# client's cost of one round trip (1 to 10,000 other calls open) and one batch of rows (1 to
# 1,000 other subscriptions open); then
# over real sockets on 127.0.0.1, round trips through the tokio driver against bare
# tokio-tungstenite and h2 echoes of the same frames, rows per second through a subscription at
# the loopback cluster's pace, and (`rows_end_to_end`) rows of 1, 16 and 64 columns as fast as the
# transport takes them, over WebSocket and gRPC, through a subscription stream against a bare
# client that only checks frames;
# the client journal's cost per command (one after another through the tokio driver, with and
# without a journal), per 64 KiB batch record, and per 64 KiB producer batch through the driver
# in outbox mode against none (wall time and the client thread's CPU time);
# the store-and-forward journal's append and drain of 4 KiB frames in memory and SF mode against
# plain positioned writes of the same bytes, and the recovery of a 1 GiB slot
# (SF_BENCH_RECOVERY_MIB sets another size).
bench:
    cargo bench -p nervix-protocol --bench decode --bench exchange --bench rows --bench batches --bench transfers --bench scaling
    cargo bench -p nervix-tokio --bench loopback
    cargo bench -p nervix-tokio --features journal --bench journal
    cargo bench -p sf-journal-io --bench journal

# Rewrite vectors/corpus from its builders (review the diff before committing it).
corpus:
    cargo run --quiet -p nervix-conformance --bin write-corpus

# Long runs: 10,000 simulation seeds (CI runs 300) from seed `base`, as many client crash
# schedules (commands and producer batches in outbox mode; CI runs 200), and many more
# property cases.
# `just soak 100000 20000 1000000` runs seeds 1,000,000 to 1,099,999, never run before.
soak seeds="10000" cases="20000" base="0":
    NERVIX_SEEDS={{seeds}} NERVIX_SEED_BASE={{base}} PROPTEST_CASES={{cases}} cargo test --release -p nervix-harness --test simulation
    NERVIX_CRASH_SEEDS={{seeds}} NERVIX_SEED_BASE={{base}} cargo test --release -p nervix-harness --test client_crash -- --nocapture
    PROPTEST_CASES={{cases}} cargo test --release -p nervix-protocol --all-features --test round_trip --test transfer

# The simulation's seeded scenarios again over real sockets on 127.0.0.1: the tokio driver over
# gRPC and WebSocket, the blocking driver over WebSocket, `seeds` seeds each from `base` (CI runs 3).
# A failure names its seed: `NERVIX_SEED=n NERVIX_TRACE=1 cargo test -p nervix-tokio --test scenarios -- --nocapture`.
soak-transports seeds="200" base="0":
    NERVIX_SEEDS={{seeds}} NERVIX_SEED_BASE={{base}} cargo test --release -p nervix-tokio --test scenarios
    NERVIX_SEEDS={{seeds}} NERVIX_SEED_BASE={{base}} cargo test --release -p nervix-blocking --test scenarios

# Mutation testing on the lines a change touched: cargo-mutants (27.1.x, installed if missing)
# mutates only the lines of `git diff <base> -- <dir>` in `package` (the engine by default; any
# crate of the workspace, e.g. `nervix-driver-support`), one job at a time, each test run cut at
# `timeout` seconds. `base` defaults to where this branch left origin/main (its merge base), or
# HEAD~1 where there is no origin. Scope it with `file` (one source file) and `test` (one test
# binary of the package), or the whole package's tests run for every mutant. Survivors are
# listed in $CARGO_TARGET_DIR (or target)/mutants.out/missed.txt; the mutants' builds go to
# mutants.target beside it.
# `just mutants main protocol/nervix/src/client/producers.rs producers` mutates what the branch changed
# in producers.rs and runs `cargo test -p nervix-protocol --test producers` against each mutant;
# `just mutants main drivers/support/src/call_end.rs "" 60 nervix-driver-support` a driver crate's.
mutants base="" file="" test="" timeout="120" package="nervix-protocol":
    #!/usr/bin/env bash
    set -euo pipefail
    if ! cargo mutants --version 2>/dev/null | grep -q '^cargo-mutants 27\.1\.'; then
        cargo install cargo-mutants --version 27.1.0 --locked
    fi
    base="{{base}}"
    if [ -z "$base" ]; then
        if git rev-parse --quiet --verify origin/main >/dev/null; then
            base=$(git merge-base HEAD origin/main)
        else
            base=HEAD~1
        fi
    fi
    dir=$(cargo metadata --no-deps --format-version 1 | python3 -c 'import json,sys,os; m=json.load(sys.stdin); p=[x for x in m["packages"] if x["name"]=="{{package}}"][0]; print(os.path.relpath(os.path.dirname(p["manifest_path"])))')
    out="${CARGO_TARGET_DIR:-target}"
    mkdir -p "$out"
    diff="$out/mutants.diff"
    git diff "$base" -- "$dir/" > "$diff"
    if [ ! -s "$diff" ]; then echo "no change under $dir/ since $base: nothing to mutate"; exit 0; fi
    args=(--package "{{package}}" --in-diff "$diff" --jobs 1 --timeout {{timeout}} --output "$out")
    if [ -n "{{file}}" ]; then args+=(--file "{{file}}"); fi
    if [ -n "{{test}}" ]; then args+=(-- --test "{{test}}"); fi
    echo "cargo mutants ${args[*]}  (diff against $base)"
    # Mutants build into a target directory of their own: sharing the checkout's would leave the
    # last mutant's build newer than the untouched sources, and the next plain `cargo test`
    # would run it.
    CARGO_TARGET_DIR="$out/mutants.target" cargo mutants "${args[@]}"

# The BLAKE3 digest of each seeded simulation's trace and one over them all: a change that
# claims to keep behaviour must print the same last line before and after.
trace-digest from="0" to="300":
    cargo run --release --quiet -p nervix-harness --example trace_digest -- {{from}} {{to}}

# Replay one simulation seed and print its trace.
replay seed:
    NERVIX_SEED={{seed}} NERVIX_TRACE=1 cargo test -p nervix-harness --test simulation -- --nocapture

# The simulated cluster served over real gRPC and WebSocket sockets until interrupted.
serve *args:
    cargo run --quiet -p nervix-loopback --bin nervix-sim -- serve {{args}}

# A short GAR session: the loopback GAR server (the server model over WebSocket on 127.0.0.1,
# with a token) and the tokio GAR client against it: subscribe, publish by name, echo barrier,
# compare-exchange, events, Logoff. `RUST_LOG=debug just gar` shows the driver's log lines.
gar:
    #!/usr/bin/env bash
    set -euo pipefail
    cargo build --quiet -p gar-sim --bin gar-serve -p gar-driver --example gar-demo
    target="${CARGO_TARGET_DIR:-target}/debug"
    out=$(mktemp)
    "$target/gar-serve" 0 demo-token >"$out" &
    server=$!
    trap 'kill $server 2>/dev/null || true; rm -f "$out"' EXIT
    for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
    url=$(head -1 "$out"); url="${url%%\?*}"
    echo "GAR server at $url"
    GAR_TOKEN=demo-token timeout 30 "$target/examples/gar-demo" "$url" Underlier note

# The loopback QWP WebSocket server of the store-and-forward journal on 127.0.0.1, for `secs`
# seconds: it acknowledges on a schedule drawn from `seed` and reports every connection at the end.
sf-serve seed="1" secs="60":
    cargo run --quiet -p sf-journal-io --bin sf-qwp-serve -- --seed {{seed}} --secs {{secs}}

# The seeded journal simulation (engine, in-memory slot, server model; reconnects, crashes at any
# write boundary, restarts) for `seeds` seeds from `base` (CI runs 200), and the journal's property
# tests with `cases` cases. A failure names its seed: `SF_SIM_SEED=n SF_SIM_TRACE=1 cargo test -p sf-journal --test seeded -- --nocapture`.
sf-soak seeds="20000" cases="5000" base="0":
    SF_SIM_SEEDS={{seeds}} SF_SIM_SEED_BASE={{base}} cargo test --release -p sf-journal --test seeded -- --nocapture
    PROPTEST_CASES={{cases}} cargo test --release -p sf-journal --test simulation --test crash
