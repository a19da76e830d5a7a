//! One simulated node that answers client frames with real server frames.

use bytes::Bytes;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientFrame, ServerMessageRoot};
use nervix_protocol::limits::TRANSFER_LIMIT;
use nervix_protocol::schema::*;
use nervix_protocol::ProtocolViolation;
use std::collections::BTreeMap;

/// What the node recorded for one execution reference.
#[derive(Debug, Clone)]
struct Recorded {
    query: String,
    message: String,
}

/// An in-process node: feed it client frames, collect the server frames it answers with.
#[derive(Debug)]
pub struct SimNode {
    name: String,
    domains: Vec<String>,
    outcomes: BTreeMap<String, Recorded>,
    max_part: usize,
    encoder: Encoder,
    subscriptions: u64,
}

impl SimNode {
    /// A leader node named `name` that holds `domains` and splits replies above `max_part`
    /// bytes into transfer parts of at most that many bytes of chunk.
    pub fn new(name: &str, domains: &[&str], max_part: usize) -> Self {
        Self {
            name: name.to_string(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
            outcomes: BTreeMap::new(),
            max_part: max_part.max(1),
            encoder: Encoder::new(),
            subscriptions: 0,
        }
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Answers one client frame. A frame that fails the checks ends the session the way the
    /// server does: with a `SessionEnding` naming the violation.
    pub fn handle(&mut self, frame: Bytes) -> Vec<Bytes> {
        match ClientFrame::check(frame) {
            Ok(frame) => self.answer(frame.unpack()),
            Err(v) => vec![self.ending(&v)],
        }
    }

    fn ending(&mut self, v: &ProtocolViolation) -> Bytes {
        let msg = ServerMessageT {
            body: ServerBodyT::SessionEnding(Box::new(SessionEndingT {
                reason: SessionEndReasonT::ProtocolViolated(Box::new(ProtocolViolatedT {
                    message: v.to_string(),
                })),
            })),
        };
        self.encoder
            .encode::<ServerMessageRoot>(&msg)
            .expect("session ending frame")
    }

    fn answer(&mut self, msg: ClientMessageT) -> Vec<Bytes> {
        let id = msg.request_id;
        match msg.request {
            ClientRequestT::CommandRequest(c) => {
                let (origin, recorded) = match self.outcomes.get(&c.execution_reference) {
                    Some(r) if r.query == c.query => (OutcomeOrigin::Recovered, r.clone()),
                    Some(_) => {
                        return self.reply(
                            id,
                            ReplyBodyT::CommandOutcome(Box::new(CommandOutcomeT {
                                execution_reference: c.execution_reference.clone(),
                                origin: Some(OutcomeOrigin::Executed),
                                disposition: CommandDispositionT::ExecutionReferenceConflict(
                                    Box::new(ExecutionReferenceConflictT {
                                        conflict: Some(ExecutionReferenceConflictKind::Content),
                                    }),
                                ),
                                message: "the reference names another command".into(),
                                ..Default::default()
                            })),
                        )
                    }
                    None => {
                        let r = Recorded {
                            query: c.query.clone(),
                            message: format!("executed `{}` on {}", c.query, self.name),
                        };
                        self.outcomes
                            .insert(c.execution_reference.clone(), r.clone());
                        (OutcomeOrigin::Executed, r)
                    }
                };
                self.reply(
                    id,
                    ReplyBodyT::CommandOutcome(Box::new(CommandOutcomeT {
                        execution_reference: c.execution_reference.clone(),
                        origin: Some(origin),
                        disposition: CommandDispositionT::CommandCompleted(Box::new(
                            CommandCompletedT {
                                already_existed: false,
                            },
                        )),
                        message: recorded.message,
                        ..Default::default()
                    })),
                )
            }
            ClientRequestT::ListDomainsRequest(_) => {
                let domains = self
                    .domains
                    .iter()
                    .map(|d| DomainInfoT {
                        domain: d.clone(),
                        status: Some(DomainStatus::Running),
                        pace: DomainPaceT::UnpacedDomain(Box::default()),
                    })
                    .collect();
                self.reply(
                    id,
                    ReplyBodyT::DomainList(Box::new(DomainListT { domains })),
                )
            }
            ClientRequestT::SubscribeRequest(s) => self.subscribe(id, &s),
            _ => self.reply(
                id,
                ReplyBodyT::RequestRejected(Box::new(RequestRejectedT {
                    rejection: Some(RequestRejection::UnsupportedRequest),
                    field: None,
                    message: "the simulated node does not serve this request yet".into(),
                })),
            ),
        }
    }

    fn subscribe(&mut self, id: u64, s: &SubscribeRequestT) -> Vec<Bytes> {
        self.subscriptions += 1;
        let handle = SubscriptionHandleT {
            name: format!("live-{}", self.subscriptions),
            generation: 1,
        };
        let field = |name: &str, scalar: ScalarType, nullable: bool, sensitive: bool| RowFieldT {
            name: name.into(),
            field_type: Box::new(FieldTypeT {
                shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
                    scalar: Some(scalar),
                })),
            }),
            nullable,
            sensitive,
        };
        let mut out = self.reply(
            id,
            ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(
                    SubscriptionOpenedT {
                        subscription: Box::new(handle.clone()),
                        domain: s.domain.clone(),
                        relay: "orders".into(),
                        subscription_type: Some(SubscriptionType::Row),
                        schema: Box::new(RowSchemaT {
                            fields: vec![
                                field("id", ScalarType::U64, false, false),
                                field("price", ScalarType::F64, true, false),
                                field("card", ScalarType::String, false, true),
                            ],
                            branch: None,
                        }),
                    },
                )),
                message: "subscribed".into(),
                diagnostics: vec![],
            })),
        );
        let cell = |value: CellValueT| CellT { value };
        let rows = (0..3u64)
            .map(|i| RowT {
                cells: vec![
                    cell(CellValueT::U64Cell(Box::new(U64CellT {
                        value: u64::MAX - i,
                    }))),
                    cell(if i == 1 {
                        CellValueT::NullCell(Box::default())
                    } else {
                        CellValueT::F64Cell(Box::new(F64CellT {
                            value: Some(if i == 0 { -0.0 } else { 1.5 }),
                        }))
                    }),
                    cell(CellValueT::RedactedCell(Box::default())),
                ],
            })
            .collect();
        let rows = ServerMessageT {
            body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
                subscription: Box::new(handle),
                batch: Box::new(RowBatchT {
                    branch_key: None,
                    rows,
                }),
            })),
        };
        out.push(
            self.encoder
                .encode::<ServerMessageRoot>(&rows)
                .expect("rows frame"),
        );
        out
    }

    /// Writes a reply, split into transfer parts when it is larger than the part size.
    fn reply(&mut self, request_id: u64, body: ReplyBodyT) -> Vec<Bytes> {
        let msg = ServerMessageT {
            body: ServerBodyT::Reply(Box::new(ReplyT { request_id, body })),
        };
        let whole = self
            .encoder
            .encode_with_limit::<ServerMessageRoot>(&msg, TRANSFER_LIMIT)
            .expect("the simulated node writes valid replies");
        if whole.len() <= self.max_part {
            return vec![whole];
        }
        let total = whole.len() as u64;
        whole
            .chunks(self.max_part)
            .enumerate()
            .map(|(i, chunk)| {
                let part = ServerMessageT {
                    body: ServerBodyT::Reply(Box::new(ReplyT {
                        request_id,
                        body: ReplyBodyT::TransferPart(Box::new(TransferPartT {
                            total_bytes: total,
                            offset: (i * self.max_part) as u64,
                            chunk: chunk.to_vec(),
                        })),
                    })),
                };
                self.encoder
                    .encode::<ServerMessageRoot>(&part)
                    .expect("transfer part frame")
            })
            .collect()
    }
}
