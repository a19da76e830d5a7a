//! Outcomes kept for callers that stopped waiting (C-10).
//!
//! A driver and every pending command it handed out share one [`Unclaimed`] store: a wait
//! dropped after its outcome arrived, but before it was read, puts the outcome here itself,
//! and the driver puts here the outcomes of commands whose waits were dropped earlier. The
//! application takes them all through its `unclaimed` call.

use nervix_protocol::client::CommandResult;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The most outcomes kept for callers that stopped waiting.
pub const UNCLAIMED: usize = 1024;

/// Outcomes kept for callers that stopped waiting, bounded to [`UNCLAIMED`]; clones share
/// one store.
#[derive(Debug, Clone, Default)]
pub struct Unclaimed(Arc<Mutex<VecDeque<CommandResult>>>);

impl Unclaimed {
    /// Keeps `r`; the oldest goes when [`UNCLAIMED`] are kept.
    pub fn keep(&self, r: CommandResult) {
        let mut q = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if q.len() == UNCLAIMED {
            q.pop_front();
        }
        q.push_back(r);
    }

    /// Hands every kept outcome out, oldest first.
    pub fn take(&self) -> Vec<CommandResult> {
        let mut q = self.0.lock().unwrap_or_else(|e| e.into_inner());
        q.drain(..).collect()
    }
}
