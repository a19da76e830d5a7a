//! Fault injection: the probabilities a cluster is built with, the seeded draw that decides
//! each fault, and the malformed frames the `violation` fault sends.

use super::*;

/// Probabilities (each from 0.0 to 1.0; 0.0, the default, never; 1.0 always) of the faults a
/// [`SimCluster`] injects. Draws happen only for flags strictly between 0 and 1, so a flag at 0
/// or 1 does not change the random choices made elsewhere.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Faults {
    /// A request is answered `RequestRejected` `TooManyRequestsInFlight` and nothing is done.
    pub too_many_in_flight: f64,
    /// A read (a request a follower may serve) is answered `RequestRejected` `ServerBusy` and
    /// nothing is done.
    pub server_busy: f64,
    /// An admitted command's outcome is recorded, but the reply is `OutcomeUnknown` with cause
    /// `StillApplying`; a repeat under the same reference returns the recorded outcome as
    /// `Recovered`.
    pub outcome_unknown: f64,
    /// A follower's `LeaderRedirect` names no leader, as during an election.
    pub redirect_without_endpoint: f64,
    /// The request is served (its effects happen), but its reply is replaced by one malformed
    /// frame that fails the checked reader (a wrong identifier, a truncated frame or a root
    /// offset out of range).
    pub violation: f64,
    /// Instead of serving the request the node ends the session: `SessionEnding` with reason
    /// `LeaderRedirect` naming the leader, then [`Output::Close`]. The request has no effect.
    pub session_ending: f64,
    /// A reply is split into two to four transfer parts even when it fits in one frame.
    pub transfer_parts: f64,
    /// Before serving a positioned command (one that carries `expected_transaction_position`
    /// or `expected_preview`) on a session holding a transaction, the leader forgets the
    /// binding; the command is answered `TransactionDetached` and the transaction stays open.
    pub detach_binding: f64,
    /// A DROPPING subscription's due batch is dropped and reported as
    /// `SubscriptionDeliveryLost` with its row count.
    pub delivery_lost: f64,
    /// A subscription's due batch is skipped and reported as `SubscriptionRowsSkipped`
    /// (`DomainTimeUnavailable`) with its row count.
    pub rows_skipped: f64,
    /// When a batch is due, the relay is redefined: its version rises and every generation
    /// open on it ends with `SubscriptionEnded` `RelayChanged`.
    pub relay_changed: f64,
    /// When a batch is due, the relay is removed: every generation open on it ends with
    /// `SubscriptionEnded` `RelayRemoved`, and later subscribes to it are refused.
    pub relay_removed: f64,
    /// When a tick is due, the domain's installed clock changes instead (START, STOP or
    /// unpaced), sent to attached sessions as `DomainClockObserved`.
    pub clock_change: f64,
    /// When a tick is due, the domain's clock attachments end with
    /// `DomainClockAttachmentEnded` `DomainRemoved`.
    pub clock_removed: f64,
    /// A batch is admitted, then the session is cut before its outcome is sent.
    pub cut_mid_batch: f64,
    /// When an admitted batch's outcome is due, the session is cut instead of sending it.
    pub lost_outcome: f64,
    /// Just before a producer or consumer opens, its endpoint contract is altered, so a
    /// restoration sees another contract.
    pub contract_change: f64,
    /// Each producer period, an open producer is suspended (it opens again a period later).
    pub admission_change: f64,
    /// Each producer period, a producer ends with `ProducerEnded` after its admitted batches
    /// are answered `OutcomeUnknown` `Interrupted`.
    pub producer_ended: f64,
    /// A batch is refused `NotAdmitted` `Busy`.
    pub batch_busy: f64,
    /// A batch is refused `NotAdmitted` `Draining`, and the producer ends `Relocated`.
    pub draining: f64,
    /// An admitted batch's outcome is `SubmissionFailed` (`AckTimedOut` or `Rejected`).
    pub batch_failed: f64,
    /// An admitted batch's outcome is `SubmissionOutcomeUnknown`.
    pub batch_unknown: f64,
}

impl Faults {
    /// Every fault at probability `p`.
    pub fn all(p: f64) -> Self {
        Self {
            too_many_in_flight: p,
            server_busy: p,
            outcome_unknown: p,
            redirect_without_endpoint: p,
            violation: p,
            session_ending: p,
            transfer_parts: p,
            detach_binding: p,
            delivery_lost: p,
            rows_skipped: p,
            relay_changed: p,
            relay_removed: p,
            clock_change: p,
            clock_removed: p,
            cut_mid_batch: p,
            lost_outcome: p,
            contract_change: p,
            admission_change: p,
            producer_ended: p,
            batch_busy: p,
            draining: p,
            batch_failed: p,
            batch_unknown: p,
        }
    }
}

impl SimCluster {
    pub(super) fn chance(&mut self, p: f64) -> bool {
        if p.is_nan() || p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            self.rng.unit() < p
        }
    }

    pub(super) fn malformed(&mut self, whole: &Bytes) -> (Bytes, &'static str) {
        let mut bytes = whole.to_vec();
        match self.rng.next_u64() % 3 {
            0 => {
                bytes[4..8].copy_from_slice(b"NXZZ");
                (Bytes::from(bytes), "wrong identifier")
            }
            1 => {
                bytes.truncate(6);
                (Bytes::from(bytes), "truncated frame")
            }
            _ => {
                bytes[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
                (Bytes::from(bytes), "root offset out of range")
            }
        }
    }
}
