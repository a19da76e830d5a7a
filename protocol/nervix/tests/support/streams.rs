//! Frames of subscriptions and domain clocks, as a scripted server sends them.

use super::{reply, server};
use bytes::Bytes;
use nervix_protocol::schema::*;

/// A scalar field of a row schema.
pub fn field(name: &str, scalar: ScalarType, nullable: bool, sensitive: bool) -> RowFieldT {
    RowFieldT {
        name: name.into(),
        field_type: Box::new(FieldTypeT {
            shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
                scalar: Some(scalar),
            })),
        }),
        nullable,
        sensitive,
    }
}

/// The schema the tests open subscriptions with: `id: U64`, `price: F64 (nullable)`.
pub fn two_fields() -> RowSchemaT {
    RowSchemaT {
        fields: vec![
            field("id", ScalarType::U64, false, false),
            field("price", ScalarType::F64, true, false),
        ],
        branch: None,
    }
}

pub fn handle(name: &str, generation: u64) -> Box<SubscriptionHandleT> {
    Box::new(SubscriptionHandleT {
        name: name.into(),
        generation,
    })
}

/// A `SubscribeOutcome` opening `name` as `generation` with `schema`.
pub fn opened(request_id: u64, name: &str, generation: u64, schema: RowSchemaT) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(SubscriptionOpenedT {
                subscription: handle(name, generation),
                domain: "d1".into(),
                relay: "orders".into(),
                subscription_type: Some(SubscriptionType::Row),
                schema: Box::new(schema),
            })),
            message: "subscribed".into(),
            diagnostics: vec![],
        })),
    )
}

/// A `SubscribeOutcome` refusing the opening.
pub fn subscribe_failed(request_id: u64, message: &str) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::RequestFailed(Box::default()),
            message: message.into(),
            diagnostics: vec![],
        })),
    )
}

/// An `UnsubscribeOutcome` that deleted `name` as `generation`.
pub fn deleted(request_id: u64, name: &str, generation: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::UnsubscribeOutcome(Box::new(UnsubscribeOutcomeT {
            disposition: UnsubscribeDispositionT::SubscriptionDeleted(Box::new(
                SubscriptionDeletedT {
                    subscription: handle(name, generation),
                },
            )),
            message: "unsubscribed".into(),
            diagnostics: vec![],
        })),
    )
}

pub fn u64_cell(v: u64) -> CellT {
    CellT {
        value: CellValueT::U64Cell(Box::new(U64CellT { value: v })),
    }
}

pub fn f64_cell(v: f64) -> CellT {
    CellT {
        value: CellValueT::F64Cell(Box::new(F64CellT { value: Some(v) })),
    }
}

pub fn null_cell() -> CellT {
    CellT {
        value: CellValueT::NullCell(Box::default()),
    }
}

/// `SubscriptionRows` of `rows` for the two-field schema: ids from `first`.
pub fn rows(name: &str, generation: u64, first: u64, rows: usize) -> Bytes {
    let rows = (0..rows as u64)
        .map(|i| RowT {
            cells: vec![u64_cell(first + i), f64_cell(i as f64 * 0.5)],
        })
        .collect();
    rows_of(name, generation, rows)
}

/// `SubscriptionRows` carrying exactly these rows.
pub fn rows_of(name: &str, generation: u64, rows: Vec<RowT>) -> Bytes {
    server(ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
        subscription: handle(name, generation),
        batch: Box::new(RowBatchT {
            branch_key: None,
            rows,
        }),
    })))
}

pub fn delivery_lost(name: &str, generation: u64, dropped_rows: u64) -> Bytes {
    server(ServerBodyT::SubscriptionDeliveryLost(Box::new(
        SubscriptionDeliveryLostT {
            subscription: handle(name, generation),
            dropped_rows,
        },
    )))
}

pub fn rows_skipped(name: &str, generation: u64, skipped_rows: u64) -> Bytes {
    server(ServerBodyT::SubscriptionRowsSkipped(Box::new(
        SubscriptionRowsSkippedT {
            subscription: handle(name, generation),
            cause: Some(RowsSkippedCause::DomainTimeUnavailable),
            skipped_rows,
            message: "no domain time".into(),
        },
    )))
}

pub fn ended(name: &str, generation: u64, reason: SubscriptionEndReason) -> Bytes {
    server(ServerBodyT::SubscriptionEnded(Box::new(
        SubscriptionEndedT {
            subscription: handle(name, generation),
            reason: Some(reason),
            message: "ended".into(),
        },
    )))
}

// ----- domain clocks ---------------------------------------------------------------------------

/// A paced clock of `generation`: period 1 s, skew 10 ms, rate 1.
pub fn paced(generation: u64) -> DomainClockObservationT {
    DomainClockObservationT {
        generation,
        state: DomainClockObservedStateT::PacedDomainClock(Box::new(PacedDomainClockT {
            period_nanos: 1_000_000_000,
            skew_nanos: 10_000_000,
            logical_origin_unix_nanos: -5,
            utc_anchor_unix_nanos: 1_700_000_000_000_000_000,
            time_rate: Some(1.0),
        })),
    }
}

/// An unpaced clock of `generation`.
pub fn unpaced(generation: u64) -> DomainClockObservationT {
    DomainClockObservationT {
        generation,
        state: DomainClockObservedStateT::UnpacedDomainClock(Box::default()),
    }
}

pub fn clock_attach_reply(request_id: u64, disposition: DomainClockAttachDispositionT) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
            disposition,
            message: "as asked".into(),
        })),
    )
}

pub fn clock_attached(request_id: u64, domain: &str, clock: DomainClockObservationT) -> Bytes {
    clock_attach_reply(
        request_id,
        DomainClockAttachDispositionT::DomainClockAttached(Box::new(DomainClockAttachedT {
            domain: domain.into(),
            clock: Box::new(clock),
        })),
    )
}

pub fn clock_already_attached(request_id: u64, domain: &str) -> Bytes {
    clock_attach_reply(
        request_id,
        DomainClockAttachDispositionT::DomainClockAlreadyAttached(Box::new(
            DomainClockAlreadyAttachedT {
                domain: domain.into(),
            },
        )),
    )
}

pub fn clock_detach_reply(request_id: u64, disposition: DomainClockDetachDispositionT) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::DomainClockDetachOutcome(Box::new(DomainClockDetachOutcomeT {
            disposition,
            message: "as asked".into(),
        })),
    )
}

pub fn clock_observed(domain: &str, clock: DomainClockObservationT) -> Bytes {
    server(ServerBodyT::DomainClockObserved(Box::new(
        DomainClockObservedT {
            domain: domain.into(),
            clock: Box::new(clock),
        },
    )))
}

pub fn clock_ticked(domain: &str, generation: u64, tick_id: u64) -> Bytes {
    server(ServerBodyT::DomainClockTicked(Box::new(
        DomainClockTickedT {
            domain: domain.into(),
            generation,
            tick_id,
            logical_boundary_unix_nanos: tick_id as i64 * 1_000_000_000,
            authority_utc_unix_nanos: 1_700_000_000_000_000_000 + tick_id as i64,
            serving_logical_unix_nanos: -(tick_id as i64),
        },
    )))
}

pub fn clock_attachment_ended(domain: &str) -> Bytes {
    server(ServerBodyT::DomainClockAttachmentEnded(Box::new(
        DomainClockAttachmentEndedT {
            domain: domain.into(),
            reason: Some(DomainClockAttachmentEndReason::DomainRemoved),
        },
    )))
}
