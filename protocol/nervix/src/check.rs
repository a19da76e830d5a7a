//! Implementation detail, public only because [`crate::Root`] names it. The schema's semantic rules, generated (committed in `src/generated/`, see `just regen`) from the constraint marks of
//! `schema/session.fbs`: one impl per table for received views, and one per owned value for
//! frames about to be written.

use crate::encode::{EncodeError, WriteCx};
use crate::schema::*;
use crate::violation::{Fault, ProtocolViolation, Site};

/// Semantic checks of a verified view (F-4): union discriminants, enum values, required
/// optional scalars, forbidden zeros and empty collections, fixed lengths. Received vectors
/// have no entry limit beyond verification and the frame limit.
pub trait CheckRead {
    /// Whether this table, or anything below it, has a rule to check.
    const NEEDED: bool;
    /// Checks this view and everything below it.
    fn check(&self) -> Result<(), ProtocolViolation>;
}

/// Checks of an owned value before it is written: the same rules as [`CheckRead`], plus the
/// send limits of F-6 (string size, vector length, nesting).
pub trait CheckWrite {
    /// Checks this value and everything below it.
    fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError>;
}

#[allow(unused_variables, clippy::all)]
mod read {
    use super::*;
    macro_rules! fail {
        ($t:expr, $f:expr, $fault:expr) => {
            return Err(ProtocolViolation::field(Site::new($t, $f), $fault))
        };
    }
    include!("generated/read_checks.rs");
}

#[allow(unused_variables, clippy::all)]
mod write {
    use super::*;
    extern crate alloc;
    macro_rules! fail {
        ($t:expr, $f:expr, $fault:expr) => {
            return Err(EncodeError::field(Site::new($t, $f), $fault))
        };
    }
    include!("generated/write_checks.rs");
}
