//! The file side of the store-and-forward journal: the engine of `sf-journal` driven against
//! real files, or against memory.
//!
//! * [`fsdir`]: a slot directory `<sf_dir>/<sender_id>/` that carries out the engine's
//!   [`FileOp`](sf_journal::FileOp)s on files (pre-sized segments, positioned writes, syncs of
//!   files and of the directory, renames, unlinks) and reads the slot back for recovery, one
//!   segment file at a time.
//! * [`lock`]: the slot lock, an exclusive advisory lock on `.lock` held for the sender's life,
//!   with the holder's process id in `.lock.pid`.
//! * [`drain`]: the blocking drain over QWP WebSocket, with reconnects and replay in FSN
//!   order.
//! * `drain_async` (feature `tokio`): the same drain on tokio.
//! * [`loopback`]: a QWP WebSocket server on 127.0.0.1 for tests, recording every frame.
//! * [`orphans`]: draining the slots dead senders left, each over its own connection.
//! * [`journal`]: a journal in memory mode or in SF mode over the same ring: append, the
//!   frames to send in FSN order, acknowledgements, checkpoints and close;
//!   [`Journal::stats`] counts what it did and says what its bounded queues hold now.
//!
//! Both drains send catch-up frames first on every connection when a
//! [`drain::CatchUp`] is configured and the journal has a dictionary, as the reference client
//! does (the seed describes self-sufficient frames instead; this crate follows the reference).
//!
//! The journal and its drains emit `tracing` events (the application installs a subscriber):
//! the recovery result, torn tails cut, back-pressure verdicts, connections up and lost with
//! each back-off, terminal errors, orphans adopted, and a close that left frames. Levels:
//! `warn` for what loses data or gives up, `info` for session changes, `debug` for retries and
//! waits.
//!
//! Without features only the standard library does I/O here and the WebSocket is blocking; the
//! `tokio` feature adds the async drain, dialled with `sansio-kit`. Delivery is at least
//! once: a frame sent but not acknowledged before a connection broke is sent again on the next
//! one (SF-11), so the server side deduplicates (for QuestDB, a table's DEDUP UPSERT KEYS).
//! The slot lock uses the standard library's file locks, which are `flock` on Unix.

pub mod drain;
#[cfg(feature = "tokio")]
pub mod drain_async;
pub mod fsdir;
pub mod journal;
pub mod lock;
pub mod loopback;
#[cfg(target_os = "linux")]
mod map;
pub mod orphans;

pub use fsdir::FileDir;
pub use journal::{Journal, JournalConfig, JournalError, JournalStats};
pub use lock::{LockError, SlotLock};
