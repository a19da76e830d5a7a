//! Subscriptions (S-*): relays that emit typed rows, `SubscribeRequest` with one
//! `CREATE SUBSCRIPTION <name> FROM <relay> ...` statement (DROPPING delivery when a later
//! word says so), the rows that
//! follow the opening reply and then one batch per [`ROW_PERIOD`], and `UnsubscribeRequest`;
//! both requests refused while the session holds a transaction (L-3).
//!
//! A relay named `wide<N>` (`wide1`, `wide16`, `wide64`; N from 1 to 256) has N `U64` columns:
//! the first holds the row's number, column `j` holds `j` ([`wide_row_values`]); it serves
//! throughput measurements, where a row's width is what varies.
//!
//! A relay's schema depends on its version, which a `relay_changed` fault raises: the
//! generations open on it end with `RelayChanged`, and the next subscribe reads the new
//! schema (a version of even number carries one more field). A `relay_removed` fault ends them
//! with `RelayRemoved` and refuses later subscribes to that relay. A relay whose name starts
//! with `branched` declares a branch, and its batches carry a branch key.
//!
//! Every value a row carries is a pure function of the relay's version, the subscription's
//! generation and the row's number ([`row_values`]), and it cycles through the values careless
//! readers break on: both ends of every integer width used, `-0.0`, a NaN with a payload, the
//! smallest subnormal, the largest finite and infinite floats, empty text, text with NUL and
//! multi-byte characters, empty and non-UTF-8 bytes, the extreme DATETIME nanoseconds, null,
//! withheld, fixed and variable lists. A checker can recompute what any row must hold.

use super::*;
use nervix_protocol::rows::OwnedValue;
use std::time::Duration;

/// How often an open subscription receives a batch, unless [`ClusterConfig::row_period`]
/// says otherwise.
pub const ROW_PERIOD: Duration = Duration::from_millis(150);

/// One item the cluster sent for a subscription's generation (see [`SimCluster::emitted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Emitted {
    /// Rows numbered `first .. first + count`.
    Rows {
        /// The first row's number.
        first: u64,
        /// How many.
        count: u64,
    },
    /// `SubscriptionDeliveryLost` in place of `count` rows.
    DeliveryLost {
        /// Rows dropped.
        count: u64,
    },
    /// `SubscriptionRowsSkipped` in place of `count` rows.
    RowsSkipped {
        /// Rows skipped.
        count: u64,
    },
}

impl Emitted {
    /// How many rows the item stands for.
    pub fn rows(&self) -> u64 {
        match *self {
            Emitted::Rows { count, .. }
            | Emitted::DeliveryLost { count }
            | Emitted::RowsSkipped { count } => count,
        }
    }
}

/// How a subscription is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivery {
    /// The relay waits for the session: nothing is dropped.
    Blocking,
    /// What the session does not take in time is dropped and reported as delivery loss.
    Dropping,
}

/// One open subscription of a session.
#[derive(Debug, Clone)]
pub(super) struct OpenSubscription {
    pub relay: String,
    pub generation: u64,
    /// The relay's version when it opened: its rows are written against that schema.
    pub version: u64,
    pub delivery: Delivery,
    pub next_emit: Timestamp,
    pub next_row: u64,
    /// With [`ClusterConfig::unpaced_rows`] on a `wide<N>` relay: the batch frame written
    /// once, whose row numbers each pull writes in place.
    pub template: Option<RowTemplate>,
}

/// A batch frame of a `wide<N>` relay written once with marker row numbers, and where each
/// row's number sits in it: a batch starting at any row is a copy with the numbers written in.
#[derive(Debug, Clone)]
pub(super) struct RowTemplate {
    frame: Bytes,
    /// The offset of row `i`'s number, in row order.
    at: Vec<usize>,
}

/// The high half of the marker row numbers of a [`RowTemplate`]; the low half is the row's
/// index in the batch.
const MARK_HIGH: u64 = 0x7a3c_91e5 << 32;

impl RowTemplate {
    fn new(
        encoder: &mut Encoder,
        name: &str,
        generation: u64,
        columns: usize,
        rows: u64,
    ) -> Option<Self> {
        let batch_rows = (0..rows)
            .map(|i| RowT {
                cells: cells(&wide_row_values(columns, MARK_HIGH | i)),
            })
            .collect();
        let message = ServerMessageT {
            body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
                subscription: Box::new(SubscriptionHandleT {
                    name: name.to_string(),
                    generation,
                }),
                batch: Box::new(RowBatchT {
                    branch_key: None,
                    rows: batch_rows,
                }),
            })),
        };
        let frame = encoder.encode::<ServerMessageRoot>(&message).ok()?;
        let mut at = vec![usize::MAX; rows as usize];
        for (offset, w) in frame.windows(8).enumerate() {
            let v = u64::from_le_bytes(w.try_into().ok()?);
            if v & !0xffff_ffff == MARK_HIGH && v & 0xffff_ffff < rows {
                let slot = &mut at[(v & 0xffff_ffff) as usize];
                if *slot != usize::MAX {
                    return None;
                }
                *slot = offset;
            }
        }
        if at.contains(&usize::MAX) {
            return None;
        }
        Some(Self { frame, at })
    }

    /// The batch whose first row is number `first`.
    fn fill(&self, first: u64) -> Bytes {
        let mut out = self.frame.to_vec();
        for (i, &at) in self.at.iter().enumerate() {
            out[at..at + 8].copy_from_slice(&(first + i as u64).to_le_bytes());
        }
        Bytes::from(out)
    }
}

/// The relays the cluster knows: version by name, and those removed.
#[derive(Debug, Default)]
pub(super) struct Relays {
    versions: BTreeMap<String, u64>,
    removed: BTreeSet<String>,
}

impl Relays {
    fn version(&mut self, relay: &str) -> u64 {
        *self.versions.entry(relay.to_string()).or_insert(1)
    }
}

fn scalar(name: &str, scalar: ScalarType, nullable: bool, sensitive: bool) -> RowFieldT {
    RowFieldT {
        name: name.into(),
        field_type: Box::new(scalar_type(scalar)),
        nullable,
        sensitive,
    }
}

fn scalar_type(scalar: ScalarType) -> FieldTypeT {
    FieldTypeT {
        shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
            scalar: Some(scalar),
        })),
    }
}

/// Whether a relay of this name declares a branch.
pub fn is_branched(relay: &str) -> bool {
    relay.starts_with("branched")
}

/// The number of columns of a `wide<N>` relay (N from 1 to 256), `None` for any other name.
pub fn wide_columns(relay: &str) -> Option<usize> {
    let n = relay.strip_prefix("wide")?;
    if n.starts_with('0') {
        return None;
    }
    n.parse::<usize>().ok().filter(|n| (1..=256).contains(n))
}

/// What row `n` of a `wide<N>` relay of `columns` columns holds: `n`, then `1`, `2`, ...
pub fn wide_row_values(columns: usize, n: u64) -> Vec<OwnedValue> {
    (0..columns)
        .map(|j| OwnedValue::U64(if j == 0 { n } else { j as u64 }))
        .collect()
}

/// The schema of `relay` at `version`.
pub fn relay_schema(relay: &str, version: u64) -> RowSchemaT {
    if let Some(columns) = wide_columns(relay) {
        return RowSchemaT {
            fields: (0..columns)
                .map(|j| scalar(&format!("c{j}"), ScalarType::U64, false, false))
                .collect(),
            branch: None,
        };
    }
    let mut fields = vec![
        scalar("id", ScalarType::U64, false, false),
        scalar("generation", ScalarType::U64, false, false),
        scalar("version", ScalarType::U64, false, false),
        scalar("big", ScalarType::U64, false, false),
        scalar("price", ScalarType::F64, true, false),
        scalar("note", ScalarType::String, true, false),
        scalar("card", ScalarType::String, false, true),
        scalar("blob", ScalarType::Bytes, false, false),
        scalar("at", ScalarType::Datetime, false, false),
        scalar("small", ScalarType::I8, false, false),
        scalar("ratio", ScalarType::F32, false, false),
        RowFieldT {
            name: "tags".into(),
            field_type: Box::new(FieldTypeT {
                shape: FieldTypeShapeT::FixedListFieldType(Box::new(FixedListFieldTypeT {
                    element: Box::new(scalar_type(ScalarType::I32)),
                    length: 3,
                })),
            }),
            nullable: false,
            sensitive: false,
        },
        RowFieldT {
            name: "words".into(),
            field_type: Box::new(FieldTypeT {
                shape: FieldTypeShapeT::ListFieldType(Box::new(ListFieldTypeT {
                    element: Box::new(scalar_type(ScalarType::String)),
                })),
            }),
            nullable: true,
            sensitive: false,
        },
    ];
    if version.is_multiple_of(2) {
        fields.push(scalar("flag", ScalarType::Bool, false, false));
    }
    RowSchemaT {
        fields,
        branch: is_branched(relay).then(|| {
            Box::new(RowBranchT {
                branch: "region".into(),
                fields: vec![
                    scalar("region", ScalarType::String, true, false),
                    scalar("secret", ScalarType::I64, false, true),
                ],
            })
        }),
    }
}

/// What row `n` of a subscription of `generation`, on a relay at `version`, holds, field by
/// field (see [`relay_schema`]).
pub fn row_values(version: u64, generation: u64, n: u64) -> Vec<OwnedValue> {
    let price = match n % 7 {
        0 => OwnedValue::Null,
        1 => OwnedValue::F64(-0.0),
        2 => OwnedValue::F64(f64::from_bits(0x7ff8_0000_0000_0abc)),
        3 => OwnedValue::F64(f64::from_bits(1)),
        4 => OwnedValue::F64(f64::MAX),
        5 => OwnedValue::F64(f64::NEG_INFINITY),
        _ => OwnedValue::F64(n as f64 * 0.25),
    };
    let note = match n % 4 {
        0 => OwnedValue::Null,
        1 => OwnedValue::String(String::new()),
        2 => OwnedValue::String("a\0b".into()),
        _ => OwnedValue::String("ünï ✓ 𝄞".into()),
    };
    let blob = match n % 3 {
        0 => OwnedValue::Bytes(vec![]),
        1 => OwnedValue::Bytes(vec![0xff, 0xfe, 0x00, 0x80]),
        _ => OwnedValue::Bytes(b"nervix".to_vec()),
    };
    let at = match n % 5 {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => 0,
        3 => -1,
        _ => 1_767_225_600_000_000_000 + n as i64,
    };
    let small = [i8::MIN, i8::MAX, 0, -1][(n % 4) as usize];
    let ratio = [
        f32::from_bits(0x8000_0000),
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(1),
        f32::MAX,
    ][(n % 4) as usize];
    let words = match n % 3 {
        0 => OwnedValue::Null,
        k => OwnedValue::List(
            (0..k)
                .map(|i| OwnedValue::String(format!("w{i}")))
                .collect(),
        ),
    };
    let mut values = vec![
        OwnedValue::U64(n),
        OwnedValue::U64(generation),
        OwnedValue::U64(version),
        OwnedValue::U64([0, u64::MAX, (1 << 53) + 1][(n % 3) as usize]),
        price,
        note,
        OwnedValue::Withheld,
        blob,
        OwnedValue::Datetime(at),
        OwnedValue::I8(small),
        OwnedValue::F32(ratio),
        OwnedValue::List(vec![
            OwnedValue::I32(i32::MIN),
            OwnedValue::I32(n as i32),
            OwnedValue::I32(i32::MAX),
        ]),
        words,
    ];
    if version.is_multiple_of(2) {
        values.push(OwnedValue::Bool(n.is_multiple_of(2)));
    }
    values
}

/// The branch key of row `n` of a branched relay.
pub fn branch_key_values(n: u64) -> Vec<OwnedValue> {
    vec![
        match n % 3 {
            0 => OwnedValue::Null,
            1 => OwnedValue::String("eu".into()),
            _ => OwnedValue::String("ünï".into()),
        },
        OwnedValue::Withheld,
    ]
}

fn cells(values: &[OwnedValue]) -> Vec<CellT> {
    values.iter().map(OwnedValue::to_cell).collect()
}

/// Parses `CREATE SUBSCRIPTION <name> FROM <relay> ...`: delivery is DROPPING when the words
/// after the relay name it (for example `WITH DELIVERY DROPPING`), BLOCKING otherwise.
fn parse(statement: &str) -> Option<(String, String, Delivery)> {
    let statement = statement.trim().trim_end_matches(';');
    if statement.contains(';') {
        return None;
    }
    let words: Vec<&str> = statement.split_whitespace().collect();
    match words.as_slice() {
        [create, sub, name, from, relay, rest @ ..]
            if create.eq_ignore_ascii_case("CREATE")
                && sub.eq_ignore_ascii_case("SUBSCRIPTION")
                && from.eq_ignore_ascii_case("FROM") =>
        {
            let delivery = if rest.iter().any(|w| w.eq_ignore_ascii_case("DROPPING")) {
                Delivery::Dropping
            } else {
                Delivery::Blocking
            };
            Some((name.to_string(), relay.to_string(), delivery))
        }
        _ => None,
    }
}

impl SimCluster {
    /// `SubscribeRequest`: opens the subscription its one statement names, with a new
    /// generation of the name, and sends a first batch of rows right after the reply.
    pub(super) fn subscribe(&mut self, conn: ConnId, s: &SubscribeRequestT) -> Served {
        let failed = |message: String| {
            Served::new(
                ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                    disposition: SubscribeDispositionT::RequestFailed(Box::default()),
                    message,
                    diagnostics: vec![],
                })),
                "SubscribeOutcome(RequestFailed)",
            )
        };
        if let Some(tx) = self.bound(conn) {
            return failed(format!(
                "a session holding a transaction ({tx}) cannot subscribe"
            ));
        }
        if !self.config.domains.contains(&s.domain) {
            return failed(format!("no domain named {}", s.domain));
        }
        let Some((name, relay, delivery)) = parse(&s.statement) else {
            return failed(
                "expected exactly one CREATE SUBSCRIPTION <name> FROM <relay> [DROPPING|BLOCKING]"
                    .into(),
            );
        };
        if self.relays.removed.contains(&relay) {
            return failed(format!("no relay named {relay}"));
        }
        if self.sessions[&conn].subscriptions.contains_key(&name) {
            return failed(format!("subscription {name} is already open"));
        }
        // Generations count up per name, whatever the domain, so a reused name never gets a
        // handle it had before (S-3).
        let generation = {
            let g = self.generations.entry(name.clone()).or_insert(0);
            *g += 1;
            *g
        };
        let version = self.relays.version(&relay);
        let mut open = OpenSubscription {
            relay: relay.clone(),
            generation,
            version,
            delivery,
            next_emit: self.now + self.config.row_period,
            next_row: 1,
            template: None,
        };
        if self.config.unpaced_rows {
            if let Some(columns) = wide_columns(&relay) {
                open.template = RowTemplate::new(
                    &mut self.encoder,
                    &name,
                    generation,
                    columns,
                    self.config.batch_rows.max(1),
                );
            }
        }
        let schema = relay_schema(&relay, version);
        let first = self.batch(&name, &mut open);
        if let Some(session) = self.sessions.get_mut(&conn) {
            session.subscriptions.insert(name.clone(), open);
        }
        let body = ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(SubscriptionOpenedT {
                subscription: Box::new(SubscriptionHandleT {
                    name: name.clone(),
                    generation,
                }),
                domain: s.domain.clone(),
                relay,
                subscription_type: Some(SubscriptionType::Row),
                schema: Box::new(schema),
            })),
            message: "subscribed".into(),
            diagnostics: vec![],
        }));
        let mut served = Served::new(body, format!("SubscriptionOpened({name}#{generation})"));
        served.summary.push_str(&format!(" + {} row(s)", first.1));
        served.after.push(first.0);
        served
    }

    /// The next batch of an open subscription: a few rows from its row counter.
    fn batch(&mut self, name: &str, open: &mut OpenSubscription) -> (ServerMessageT, u64) {
        let count = if self.config.unpaced_rows {
            self.config.batch_rows.max(1)
        } else {
            1 + self.rng.next_u64() % self.config.batch_rows.max(1)
        };
        let first = open.next_row;
        open.next_row += count;
        if !self.config.unpaced_rows {
            self.emitted
                .entry((name.to_string(), open.generation))
                .or_default()
                .push(Emitted::Rows { first, count });
        }
        let wide = wide_columns(&open.relay);
        let rows = (first..first + count)
            .map(|n| RowT {
                cells: cells(&match wide {
                    Some(columns) => wide_row_values(columns, n),
                    None => row_values(open.version, open.generation, n),
                }),
            })
            .collect();
        let branch_key = is_branched(&open.relay).then(|| {
            Box::new(BranchKeyT {
                cells: cells(&branch_key_values(first)),
            })
        });
        let message = ServerMessageT {
            body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
                subscription: Box::new(SubscriptionHandleT {
                    name: name.to_string(),
                    generation: open.generation,
                }),
                batch: Box::new(RowBatchT { branch_key, rows }),
            })),
        };
        (message, count)
    }

    /// Sends what each open subscription has due by `now`: a batch, or in its place, under a
    /// fault, delivery loss (DROPPING only) or skipped rows; and a relay change or removal
    /// that ends every generation open on the relay.
    pub(super) fn emit_rows(&mut self) {
        if self.config.unpaced_rows {
            return;
        }
        let now = self.now;
        for (conn, name, _) in self.open_subscriptions(|o| o.next_emit <= now) {
            let Some(mut open) = self
                .sessions
                .get_mut(&conn)
                .and_then(|s| s.subscriptions.get(&name).cloned())
            else {
                continue;
            };
            open.next_emit = now + self.config.row_period;
            let faults = self.config.faults.clone();
            if self.chance(faults.relay_removed) {
                self.end_relay(&open.relay, SubscriptionEndReason::RelayRemoved);
                self.relays.removed.insert(open.relay.clone());
                continue;
            }
            if self.chance(faults.relay_changed) {
                *self.relays.versions.entry(open.relay.clone()).or_insert(1) += 1;
                self.end_relay(&open.relay, SubscriptionEndReason::RelayChanged);
                continue;
            }
            let (message, count) = self.batch(&name, &mut open);
            let handle = || {
                Box::new(SubscriptionHandleT {
                    name: name.clone(),
                    generation: open.generation,
                })
            };
            let key = (name.clone(), open.generation);
            let message =
                if open.delivery == Delivery::Dropping && self.chance(faults.delivery_lost) {
                    self.record_in_place(&key, Emitted::DeliveryLost { count });
                    ServerMessageT {
                        body: ServerBodyT::SubscriptionDeliveryLost(Box::new(
                            SubscriptionDeliveryLostT {
                                subscription: handle(),
                                dropped_rows: count,
                            },
                        )),
                    }
                } else if self.chance(faults.rows_skipped) {
                    self.record_in_place(&key, Emitted::RowsSkipped { count });
                    ServerMessageT {
                        body: ServerBodyT::SubscriptionRowsSkipped(Box::new(
                            SubscriptionRowsSkippedT {
                                subscription: handle(),
                                cause: Some(RowsSkippedCause::DomainTimeUnavailable),
                                skipped_rows: count,
                                message: "domain time was not available to the filter".into(),
                            },
                        )),
                    }
                } else {
                    message
                };
            if let Some(s) = self.sessions.get_mut(&conn) {
                s.subscriptions.insert(name, open);
            }
            self.push_unsolicited(conn, message);
        }
    }

    /// With [`ClusterConfig::unpaced_rows`]: the next batch of every subscription open on
    /// `conn`, as frames ready to send, in the order of the subscriptions' names; none when
    /// the mode is off, the session is closed or holds no subscription. A server calls it
    /// whenever the stream's socket has room, so rows flow as fast as the socket takes them.
    pub fn pull_rows(&mut self, conn: ConnId) -> Vec<Bytes> {
        if !self.config.unpaced_rows {
            return Vec::new();
        }
        let rows = self.config.batch_rows.max(1);
        let mut frames = Vec::new();
        let mut others = Vec::new();
        match self.sessions.get_mut(&conn) {
            Some(s) if s.open => {
                for (name, open) in s.subscriptions.iter_mut() {
                    match &open.template {
                        Some(t) => {
                            frames.push(t.fill(open.next_row));
                            open.next_row += rows;
                        }
                        None => others.push(name.clone()),
                    }
                }
            }
            _ => return frames,
        }
        for name in others {
            let Some(mut open) = self
                .sessions
                .get(&conn)
                .and_then(|s| s.subscriptions.get(&name).cloned())
            else {
                continue;
            };
            let (message, _) = self.batch(&name, &mut open);
            if let Some(s) = self.sessions.get_mut(&conn) {
                s.subscriptions.insert(name, open);
            }
            if let Ok(frame) = self.encoder.encode::<ServerMessageRoot>(&message) {
                frames.push(frame);
            }
        }
        frames
    }

    /// Records `item` in place of the batch just drawn for `key`.
    fn record_in_place(&mut self, key: &(String, u64), item: Emitted) {
        if let Some(last) = self.emitted.get_mut(key).and_then(|v| v.last_mut()) {
            *last = item;
        }
    }

    /// The subscriptions open on open sessions that `keep` selects: stream, name, generation.
    fn open_subscriptions(
        &self,
        keep: impl Fn(&OpenSubscription) -> bool,
    ) -> Vec<(ConnId, String, u64)> {
        self.sessions
            .iter()
            .filter(|(_, s)| s.open)
            .flat_map(|(c, s)| {
                s.subscriptions
                    .iter()
                    .filter(|(_, o)| keep(o))
                    .map(move |(n, o)| (*c, n.clone(), o.generation))
            })
            .collect()
    }

    /// Ends every generation open on `relay`, on every session.
    fn end_relay(&mut self, relay: &str, reason: SubscriptionEndReason) {
        for (conn, name, generation) in self.open_subscriptions(|o| o.relay == relay) {
            if let Some(s) = self.sessions.get_mut(&conn) {
                s.subscriptions.remove(&name);
            }
            self.log(format!(
                "{conn} SubscriptionEnded({name}#{generation}, {reason:?}) [fault relay]"
            ));
            self.push_unsolicited(
                conn,
                ServerMessageT {
                    body: ServerBodyT::SubscriptionEnded(Box::new(SubscriptionEndedT {
                        subscription: Box::new(SubscriptionHandleT { name, generation }),
                        reason: Some(reason),
                        message: format!("relay {relay} {reason:?}"),
                    })),
                },
            );
        }
    }

    /// `UnsubscribeRequest`: deletes the session's subscription of that name.
    pub(super) fn unsubscribe(&mut self, conn: ConnId, name: &str) -> Served {
        let failed = |message: String| {
            Served::new(
                ReplyBodyT::UnsubscribeOutcome(Box::new(UnsubscribeOutcomeT {
                    disposition: UnsubscribeDispositionT::RequestFailed(Box::default()),
                    message,
                    diagnostics: vec![],
                })),
                "UnsubscribeOutcome(RequestFailed)",
            )
        };
        if let Some(tx) = self.bound(conn) {
            return failed(format!(
                "a session holding a transaction ({tx}) cannot unsubscribe"
            ));
        }
        let Some(open) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.subscriptions.remove(name))
        else {
            return failed(format!("no subscription named {name} is open"));
        };
        let generation = open.generation;
        Served::new(
            ReplyBodyT::UnsubscribeOutcome(Box::new(UnsubscribeOutcomeT {
                disposition: UnsubscribeDispositionT::SubscriptionDeleted(Box::new(
                    SubscriptionDeletedT {
                        subscription: Box::new(SubscriptionHandleT {
                            name: name.to_string(),
                            generation,
                        }),
                    },
                )),
                message: "unsubscribed".into(),
                diagnostics: vec![],
            })),
            format!("SubscriptionDeleted({name}#{generation})"),
        )
    }
}
