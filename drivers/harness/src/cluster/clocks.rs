//! Domain clocks (K-1): `AttachDomainClockRequest` and `DetachDomainClockRequest`, refused while
//! the session holds a transaction (L-3).

use super::*;

impl SimCluster {
    pub(super) fn clock_attach(&mut self, conn: ConnId, domain: &str) -> Served {
        let (disposition, message) = if let Some(tx) = self.bound(conn) {
            (
                DomainClockAttachDispositionT::RequestFailed(Box::default()),
                format!("a session holding a transaction ({tx}) cannot attach a clock"),
            )
        } else if !self.config.domains.iter().any(|d| d == domain) {
            (
                DomainClockAttachDispositionT::DomainNotFound(Box::new(DomainNotFoundT {
                    domain: domain.to_string(),
                })),
                format!("no domain named {domain}"),
            )
        } else if !self
            .sessions
            .get_mut(&conn)
            .is_some_and(|s| s.clocks.insert(domain.to_string()))
        {
            (
                DomainClockAttachDispositionT::DomainClockAlreadyAttached(Box::new(
                    DomainClockAlreadyAttachedT {
                        domain: domain.to_string(),
                    },
                )),
                "already attached".to_string(),
            )
        } else {
            (
                DomainClockAttachDispositionT::DomainClockAttached(Box::new(
                    DomainClockAttachedT {
                        domain: domain.to_string(),
                        clock: Box::new(DomainClockObservationT {
                            generation: 1,
                            state: DomainClockObservedStateT::UnpacedDomainClock(Box::default()),
                        }),
                    },
                )),
                "attached".to_string(),
            )
        };
        let summary = format!(
            "DomainClockAttachOutcome({})",
            name_of(disposition.domain_clock_attach_disposition_type())
        );
        Served::new(
            ReplyBodyT::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
                disposition,
                message,
            })),
            summary,
        )
    }

    pub(super) fn clock_detach(&mut self, conn: ConnId, domain: &str) -> Served {
        let (disposition, message) = if let Some(tx) = self.bound(conn) {
            (
                DomainClockDetachDispositionT::RequestFailed(Box::default()),
                format!("a session holding a transaction ({tx}) cannot detach a clock"),
            )
        } else if self
            .sessions
            .get_mut(&conn)
            .is_some_and(|s| s.clocks.remove(domain))
        {
            (
                DomainClockDetachDispositionT::DomainClockDetached(Box::new(
                    DomainClockDetachedT {
                        domain: domain.to_string(),
                    },
                )),
                "detached".to_string(),
            )
        } else {
            (
                DomainClockDetachDispositionT::DomainClockNotAttached(Box::new(
                    DomainClockNotAttachedT {
                        domain: domain.to_string(),
                    },
                )),
                "not attached".to_string(),
            )
        };
        let summary = format!(
            "DomainClockDetachOutcome({})",
            name_of(disposition.domain_clock_detach_disposition_type())
        );
        Served::new(
            ReplyBodyT::DomainClockDetachOutcome(Box::new(DomainClockDetachOutcomeT {
                disposition,
                message,
            })),
            summary,
        )
    }
}
