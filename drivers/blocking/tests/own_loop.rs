//! The hand-written loop of `examples/own_loop.rs` runs here as it is: a command, a
//! subscription with rows, and a transaction across a leader change over the console, each
//! outcome checked by the example's own assertions, the whole run bounded.

#[allow(dead_code)]
#[path = "../examples/own_loop.rs"]
mod own_loop;

use std::sync::mpsc;
use std::time::Duration;

#[test]
fn the_own_loop_example_runs_a_command_a_subscription_and_a_transaction_across_a_leader_change() {
    let (done, finished) = mpsc::channel();
    let run = std::thread::spawn(move || {
        own_loop::main();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(120)) {
        Ok(()) => run.join().unwrap(),
        // The example panicked: its message is the join's.
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(run.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the example did not end within 120 s"),
    }
}
