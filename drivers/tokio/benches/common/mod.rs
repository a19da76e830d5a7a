//! What the benches share.

use std::time::Duration;

/// The CPU time this thread has run.
pub fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "the thread's CPU clock");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
