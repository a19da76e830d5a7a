//! The transaction a session holds, as the manual's binding state machine (X-1 to X-9).
//!
//! ```text
//! Unbound -> Bound            BEGIN completed, or TransactionAttached
//! Bound -> Bound              append accepted; position advanced from its own outcome
//! Bound -> Detached           TransactionDetached, session lost, or leader changed
//! Detached -> Bound           TransactionAttached
//! Detached -> Finished        TransactionAlreadyFinished
//! Bound -> TakenOver          TransactionTakenOver
//! Bound -> Finished           COMMIT or REVERT outcome recorded, or the transaction expired
//! ```

use crate::schema::*;
use crate::time::Timestamp;

/// What the client knows of a transaction it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// The transaction's identity, from its status (X-1).
    pub id: String,
    /// Its domain: every request of the transaction names it (L-3).
    pub domain: String,
    /// The position the next append expects: the accepted operations of the newest status
    /// received (X-2).
    pub position: u64,
    /// The preview the user last reviewed: the last admission's (X-4).
    pub preview: Option<TransactionPreviewIdentityT>,
    /// When attaching, appending or commit admission last renewed it (X-8).
    pub renewed: Timestamp,
}

/// How a transaction ended, as far as the client knows.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Ending {
    /// The commit's own outcome completed.
    Committed,
    /// The revert's own outcome completed.
    Reverted,
    /// The server reported it finished (TransactionAlreadyFinished) with this status.
    AlreadyFinished(TransactionStatusT),
    /// Its idle timeout passed without renewal (X-8).
    Expired,
    /// Attaching it again was refused (it is unknown to the server now).
    AttachRefused,
}

/// The binding of a session to a transaction.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum Binding {
    /// No transaction.
    #[default]
    Unbound,
    /// Bound on the current session.
    Bound(Held),
    /// Held by the client but not bound on the current session: attach before appending.
    Detached(Held),
    /// Another session took it over; this client holds it no more.
    TakenOver {
        /// Its identity.
        id: String,
    },
    /// It ended.
    Finished {
        /// Its identity.
        id: String,
        /// How.
        ending: Ending,
    },
}

impl Binding {
    /// The transaction the client holds (bound or detached), if any.
    pub fn held(&self) -> Option<&Held> {
        match self {
            Binding::Bound(h) | Binding::Detached(h) => Some(h),
            _ => None,
        }
    }

    /// Whether a transaction is held (its requests must carry positions, L-3 applies).
    pub fn is_holding(&self) -> bool {
        self.held().is_some()
    }

    /// `BEGIN` completed: bind the transaction its outcome's status names (X-1).
    pub fn begun(&mut self, status: &TransactionStatusT, now: Timestamp) {
        *self = Binding::Bound(Held {
            id: status.transaction_id.clone(),
            domain: status.domain.clone(),
            position: status.accepted_operations,
            preview: None,
            renewed: now,
        });
    }

    /// A command outcome of our own arrived (X-2, X-3): the newest status of the held
    /// transaction advances the position, and an admission renews it and gives the preview.
    /// Applied whether the transaction is bound or detached: an append admitted before the
    /// session lost the binding reports its outcome while the client attaches it again.
    pub fn outcome(
        &mut self,
        status: Option<&TransactionStatusT>,
        admission: Option<&TransactionOperationAdmissionT>,
        now: Timestamp,
    ) {
        let (Binding::Bound(h) | Binding::Detached(h)) = self else {
            return;
        };
        let Some(status) = status.filter(|s| s.transaction_id == h.id) else {
            return;
        };
        h.position = status.accepted_operations;
        if let Some(a) = admission {
            h.preview = Some((*a.preview).clone());
            h.renewed = now;
        }
    }

    /// An inspection answered (X-4): when it inspected the whole of the bound transaction at
    /// its current position, its preview is the one the user reviewed last, and the one a
    /// COMMIT carries. An inspection of another transaction, of one operation, or at another
    /// position changes nothing.
    pub(crate) fn inspected(&mut self, i: &InspectedPreview) {
        let Binding::Bound(h) = self else { return };
        if i.whole
            && i.preview.transaction_id == h.id
            && i.accepted == h.position
            && i.preview.position == h.position
        {
            h.preview = Some(i.preview.clone());
        }
    }

    /// The session lost its binding (TransactionDetached, a lost session, a leader change).
    pub fn detach(&mut self) {
        if let Binding::Bound(h) = self {
            *self = Binding::Detached(h.clone());
        }
    }

    /// `TransactionAttached`: bound again, adopting its domain (X-6).
    pub fn attached(&mut self, status: &TransactionStatusT, now: Timestamp) {
        let preview = self.held().and_then(|h| h.preview.clone());
        *self = Binding::Bound(Held {
            id: status.transaction_id.clone(),
            domain: status.domain.clone(),
            position: status.accepted_operations,
            preview,
            renewed: now,
        });
    }

    /// `TransactionAlreadyFinished`: it ended (never the outcome of an outstanding command).
    pub fn already_finished(&mut self, status: &TransactionStatusT) {
        *self = Binding::Finished {
            id: status.transaction_id.clone(),
            ending: Ending::AlreadyFinished(status.clone()),
        };
    }

    /// `TransactionTakenOver`.
    pub fn taken_over(&mut self) {
        if let Some(h) = self.held() {
            *self = Binding::TakenOver { id: h.id.clone() };
        }
    }

    /// The commit's or revert's own outcome completed (X-3).
    pub fn finished(&mut self, ending: Ending) {
        if let Some(h) = self.held() {
            *self = Binding::Finished {
                id: h.id.clone(),
                ending,
            };
        }
    }

    /// When the held transaction expires unless renewed (X-8).
    pub fn expires_at(&self, idle: std::time::Duration) -> Option<Timestamp> {
        self.held().map(|h| h.renewed + idle)
    }
}

/// What an inspection tells of a transaction's preview (X-4), copied out of its frame without
/// the report's operations.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InspectedPreview {
    /// The inspected transaction's accepted operations, by its status.
    accepted: u64,
    /// Whether the whole transaction was inspected, not one operation.
    whole: bool,
    /// The preview the report describes: its transaction, position and planning basis.
    preview: TransactionPreviewIdentityT,
}

impl InspectedPreview {
    /// The preview of inspection `i`.
    pub(crate) fn of(i: TransactionInspected<'_>) -> Self {
        let report = i.report();
        Self {
            accepted: i.transaction().accepted_operations(),
            whole: i.operation().is_none(),
            preview: TransactionPreviewIdentityT {
                transaction_id: i.transaction().transaction_id().to_string(),
                position: report.position(),
                planning_basis: Box::new(report.planning_basis().unpack()),
            },
        }
    }
}
