//! Domain clocks (K-*): `AttachDomainClockRequest` and `DetachDomainClockRequest`, refused while
//! the session holds a transaction (L-3), and the clocks themselves.
//!
//! Each domain has a clock: the first configured domain starts paced as generation 1, the
//! others unpaced as generation 1. A paced clock ticks every [`TICK_PERIOD`]: each attached
//! session receives `DomainClockTicked` with the next tick id. Under the `clock_change` fault a
//! tick is replaced by a change of the installed clock, sent to every attached session as
//! `DomainClockObserved`: a START (a new generation, paced, ticks counted from 1 again), a STOP
//! or a switch to unpaced. Under `clock_removed` the domain's attachments end with
//! `DomainClockAttachmentEnded`.

use super::*;
use std::time::Duration;

/// How often a paced clock ticks.
pub const TICK_PERIOD: Duration = Duration::from_millis(250);

/// What a domain's clock is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClockMode {
    Stopped,
    Unpaced,
    Paced,
}

/// One domain's installed clock.
#[derive(Debug, Clone)]
pub(super) struct DomainClockSim {
    pub generation: u64,
    pub mode: ClockMode,
    pub tick_id: u64,
    pub next_tick: Timestamp,
}

impl DomainClockSim {
    pub(super) fn new(paced: bool) -> Self {
        Self {
            generation: 1,
            mode: if paced {
                ClockMode::Paced
            } else {
                ClockMode::Unpaced
            },
            tick_id: 0,
            next_tick: Timestamp::ZERO + TICK_PERIOD,
        }
    }

    fn observation(&self) -> DomainClockObservationT {
        let state = match self.mode {
            ClockMode::Stopped => DomainClockObservedStateT::StoppedDomainClock(Box::default()),
            ClockMode::Unpaced => DomainClockObservedStateT::UnpacedDomainClock(Box::default()),
            ClockMode::Paced => {
                DomainClockObservedStateT::PacedDomainClock(Box::new(PacedDomainClockT {
                    period_nanos: TICK_PERIOD.as_nanos() as u64,
                    skew_nanos: 5_000_000,
                    logical_origin_unix_nanos: 1_700_000_000_000_000_000,
                    utc_anchor_unix_nanos: 1_767_225_600_000_000_000,
                    time_rate: Some(if self.generation.is_multiple_of(2) {
                        2.5
                    } else {
                        1.0
                    }),
                }))
            }
        };
        DomainClockObservationT {
            generation: self.generation,
            state,
        }
    }
}

impl SimCluster {
    fn clock_of(&mut self, domain: &str) -> &mut DomainClockSim {
        let first = self.config.domains.first().is_some_and(|d| d == domain);
        self.domain_clocks
            .entry(domain.to_string())
            .or_insert_with(|| DomainClockSim::new(first))
    }

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
            let clock = self.clock_of(domain).observation();
            (
                DomainClockAttachDispositionT::DomainClockAttached(Box::new(
                    DomainClockAttachedT {
                        domain: domain.to_string(),
                        clock: Box::new(clock),
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

    /// The open sessions attached to `domain`'s clock.
    fn attached(&self, domain: &str) -> Vec<ConnId> {
        self.sessions
            .iter()
            .filter(|(_, s)| s.open && s.clocks.contains(domain))
            .map(|(c, _)| *c)
            .collect()
    }

    /// Runs every domain clock up to `now`: ticks of paced clocks, and under faults, changes
    /// of the installed clock and removed domains.
    pub(super) fn run_clocks(&mut self) {
        let now = self.now;
        let domains = self.config.domains.clone();
        for domain in domains {
            let clock = self.clock_of(&domain).clone();
            if clock.next_tick > now {
                continue;
            }
            self.clock_of(&domain).next_tick = now + TICK_PERIOD;
            let faults = self.config.faults.clone();
            if self.chance(faults.clock_removed) {
                for conn in self.attached(&domain) {
                    if let Some(s) = self.sessions.get_mut(&conn) {
                        s.clocks.remove(&domain);
                    }
                    self.log(format!(
                        "{conn} DomainClockAttachmentEnded({domain}) [fault clock_removed]"
                    ));
                    self.push_unsolicited(
                        conn,
                        ServerMessageT {
                            body: ServerBodyT::DomainClockAttachmentEnded(Box::new(
                                DomainClockAttachmentEndedT {
                                    domain: domain.clone(),
                                    reason: Some(DomainClockAttachmentEndReason::DomainRemoved),
                                },
                            )),
                        },
                    );
                }
                continue;
            }
            if self.chance(faults.clock_change) {
                let pick = self.rng.next_u64() % 3;
                let c = self.clock_of(&domain);
                match pick {
                    0 => {
                        c.generation += 1;
                        c.mode = ClockMode::Paced;
                        c.tick_id = 0;
                    }
                    1 => c.mode = ClockMode::Stopped,
                    _ => c.mode = ClockMode::Unpaced,
                }
                let observation = c.observation();
                let line = format!(
                    "{domain} clock now #{} {:?} [fault clock_change]",
                    c.generation, c.mode
                );
                self.log(line);
                for conn in self.attached(&domain) {
                    self.push_unsolicited(
                        conn,
                        ServerMessageT {
                            body: ServerBodyT::DomainClockObserved(Box::new(
                                DomainClockObservedT {
                                    domain: domain.clone(),
                                    clock: Box::new(observation.clone()),
                                },
                            )),
                        },
                    );
                }
                continue;
            }
            if clock.mode != ClockMode::Paced {
                continue;
            }
            let c = self.clock_of(&domain);
            c.tick_id += 1;
            let (generation, tick_id) = (c.generation, c.tick_id);
            let boundary =
                1_700_000_000_000_000_000 + tick_id as i64 * TICK_PERIOD.as_nanos() as i64;
            for conn in self.attached(&domain) {
                self.push_unsolicited(
                    conn,
                    ServerMessageT {
                        body: ServerBodyT::DomainClockTicked(Box::new(DomainClockTickedT {
                            domain: domain.clone(),
                            generation,
                            tick_id,
                            logical_boundary_unix_nanos: boundary,
                            authority_utc_unix_nanos: 1_767_225_600_000_000_000
                                + now.as_nanos() as i64,
                            serving_logical_unix_nanos: boundary - 1,
                        })),
                    },
                );
            }
        }
    }
}
