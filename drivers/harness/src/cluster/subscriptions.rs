//! Subscriptions (S-*): `SubscribeRequest` with one `CREATE SUBSCRIPTION` statement, the rows
//! that follow the opening reply, and `UnsubscribeRequest`; both refused while the session holds
//! a transaction (L-3).

use super::*;

impl SimCluster {
    /// `SubscribeRequest`: opens the subscription its one `CREATE SUBSCRIPTION <name> FROM
    /// <relay>` statement names, with a new generation of the name, and sends a first batch of
    /// rows after the reply.
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
        let statement = s.statement.trim().trim_end_matches(';');
        if statement.contains(';') {
            return failed("a subscription is opened by exactly one statement".into());
        }
        let words: Vec<&str> = statement.split_whitespace().collect();
        let from = words.iter().position(|w| w.eq_ignore_ascii_case("FROM"));
        let parsed = match (words.as_slice(), from) {
            ([create, sub, name, ..], Some(f))
                if create.eq_ignore_ascii_case("CREATE")
                    && sub.eq_ignore_ascii_case("SUBSCRIPTION")
                    && f == 3
                    && words.len() > 4 =>
            {
                Some((name.to_string(), words[4].to_string()))
            }
            _ => None,
        };
        let Some((name, relay)) = parsed else {
            return failed("expected CREATE SUBSCRIPTION <name> FROM <relay>".into());
        };
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
        if let Some(session) = self.sessions.get_mut(&conn) {
            session
                .subscriptions
                .insert(name.clone(), (s.domain.clone(), generation));
        }
        let handle = SubscriptionHandleT {
            name: name.clone(),
            generation,
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
        let body = ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(SubscriptionOpenedT {
                subscription: Box::new(handle.clone()),
                domain: s.domain.clone(),
                relay,
                subscription_type: Some(SubscriptionType::Row),
                schema: Box::new(RowSchemaT {
                    fields: vec![
                        field("id", ScalarType::U64, false, false),
                        field("price", ScalarType::F64, true, false),
                        field("card", ScalarType::String, false, true),
                    ],
                    branch: None,
                }),
            })),
            message: "subscribed".into(),
            diagnostics: vec![],
        }));
        let count = 1 + self.rng.next() % 3;
        let rows = (0..count)
            .map(|_| {
                let id = self.next_row;
                self.next_row += 1;
                let price = (self.rng.next() % 100_000) as f64 / 100.0;
                RowT {
                    cells: vec![
                        CellT {
                            value: CellValueT::U64Cell(Box::new(U64CellT { value: id })),
                        },
                        CellT {
                            value: CellValueT::F64Cell(Box::new(F64CellT { value: Some(price) })),
                        },
                        CellT {
                            value: CellValueT::RedactedCell(Box::default()),
                        },
                    ],
                }
            })
            .collect();
        let mut served = Served::new(body, format!("SubscriptionOpened({name}#{generation})"));
        served.after.push(ServerMessageT {
            body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
                subscription: Box::new(handle),
                batch: Box::new(RowBatchT {
                    branch_key: None,
                    rows,
                }),
            })),
        });
        served.summary.push_str(&format!(" + {count} row(s)"));
        served
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
        let Some((_, generation)) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.subscriptions.remove(name))
        else {
            return failed(format!("no subscription named {name} is open"));
        };
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
