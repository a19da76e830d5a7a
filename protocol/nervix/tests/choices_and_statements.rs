//! Structured choice lookups and statement routing (L-2).

use nervix_protocol::choices::*;
use nervix_protocol::schema::*;
use nervix_protocol::statements::*;

fn outcome(status: ChoiceStatus, choices: Vec<ChoiceT>, cursor: Option<&str>) -> bytes::Bytes {
    let msg = ServerMessageT {
        body: ServerBodyT::Reply(Box::new(ReplyT {
            request_id: 1,
            body: ReplyBodyT::ChoiceOutcome(Box::new(ChoiceOutcomeT {
                status: Some(status),
                choices,
                page_cursor: cursor.map(str::to_string),
            })),
        })),
    };
    nervix_protocol::encode::encode::<nervix_protocol::frame::ServerMessageRoot>(&msg).unwrap()
}

fn step(lookup: &mut ChoiceLookup, frame: bytes::Bytes) -> LookupStep {
    let f = nervix_protocol::frame::ServerFrame::check(frame).unwrap();
    let view = f.view();
    let o = view
        .body_as_reply()
        .unwrap()
        .body_as_choice_outcome()
        .unwrap();
    lookup.on_outcome(&o)
}

fn choice(value: ChoiceValueT, label: &str) -> ChoiceT {
    ChoiceT {
        value,
        presentation: Box::new(ChoicePresentationT {
            label: label.into(),
            detail: None,
            group: None,
        }),
    }
}

#[test]
fn q_1_lookups_carry_the_targets_typed_dependencies() {
    let relay = Dependency::Model(ModelKind::Relay, "orders".into());
    let domain = Dependency::Domain("tenant".into());
    let l = ChoiceLookup::new(
        ChoiceTarget::RelayField,
        &[domain.clone(), relay.clone()],
        "am",
        10,
    )
    .unwrap();
    let ClientRequestT::ChoiceLookupRequest(req) = l.request() else {
        panic!()
    };
    assert_eq!(req.target, Some(ChoiceTarget::RelayField));
    assert!(
        matches!(&req.dependencies[0].value, ChoiceValueT::DomainChoiceReference(d) if d.domain == "tenant")
    );
    assert!(
        matches!(&req.dependencies[1].value, ChoiceValueT::ModelChoiceReference(m)
        if m.node.kind == Some(ModelKind::Relay) && m.node.name == "orders")
    );
    // The wrong shapes are refused before sending.
    assert!(ChoiceLookup::new(
        ChoiceTarget::RelayField,
        std::slice::from_ref(&domain),
        "",
        10
    )
    .is_err());
    assert!(ChoiceLookup::new(
        ChoiceTarget::RelayField,
        &[relay.clone(), domain.clone()],
        "",
        10
    )
    .is_err());
    let codec = Dependency::Model(ModelKind::Codec, "json".into());
    assert!(ChoiceLookup::new(
        ChoiceTarget::RelayField,
        &[domain.clone(), codec.clone()],
        "",
        10
    )
    .is_err());
    assert!(ChoiceLookup::new(ChoiceTarget::CodecField, &[domain.clone(), codec], "", 10).is_ok());
    let branch = Dependency::Model(ModelKind::Branch, "by_tenant".into());
    assert!(ChoiceLookup::new(
        ChoiceTarget::IngestBranchedRelay,
        &[domain.clone(), branch.clone()],
        "",
        10
    )
    .is_ok());
    assert!(ChoiceLookup::new(
        ChoiceTarget::IngestUnbranchedRelay,
        std::slice::from_ref(&domain),
        "",
        10
    )
    .is_ok());
    assert!(
        ChoiceLookup::new(ChoiceTarget::BranchField, &[domain.clone(), branch], "", 10).is_ok()
    );
    assert!(ChoiceLookup::new(
        ChoiceTarget::CompletedResourceVersion,
        &[domain.clone(), Dependency::Resource("bundle".into())],
        "",
        10
    )
    .is_ok());
    for t in [
        ChoiceTarget::ProcessorCompatibleInputRelay,
        ChoiceTarget::ProcessorInputBranchRelay,
        ChoiceTarget::ProcessorMaterializedRelay,
    ] {
        assert!(ChoiceLookup::new(t, &[domain.clone(), relay.clone()], "", 10).is_ok());
    }
    assert!(ChoiceLookup::new(
        ChoiceTarget::IngestKafkaSource,
        std::slice::from_ref(&domain),
        "",
        10
    )
    .is_ok());
    assert!(
        ChoiceLookup::new(ChoiceTarget::IngestKafkaSource, &[], "", 10).is_err(),
        "a source target carries a domain"
    );
    assert!(ChoiceLookup::new(ChoiceTarget::DomainPace, &[], "", 10).is_ok());
    assert_eq!(
        ChoiceLookup::new(ChoiceTarget::Schema, std::slice::from_ref(&domain), "", 0).unwrap_err(),
        ChoiceError::PageSize(0)
    );
    assert!(ChoiceLookup::new(ChoiceTarget(250), &[], "", 10).is_err());
}

#[test]
fn q_2_choices_select_by_value_and_a_stale_context_restarts_the_lookup() {
    let mut l = ChoiceLookup::new(
        ChoiceTarget::CompletedResourceVersion,
        &[
            Dependency::Domain("t".into()),
            Dependency::Resource("bundle".into()),
        ],
        "",
        2,
    )
    .unwrap();
    let latest = ChoiceValueT::LatestResourceVersion(Box::default());
    let three =
        ChoiceValueT::ResourceVersionNumber(Box::new(ResourceVersionNumberT { version: 3 }));
    let s = step(
        &mut l,
        outcome(
            ChoiceStatus::Ready,
            vec![choice(latest.clone(), "3"), choice(three.clone(), "3")],
            Some("p2"),
        ),
    );
    let LookupStep::Page { choices, more } = s else {
        panic!()
    };
    assert!(more);
    // Same label, distinct values: selection uses the value.
    assert_eq!(choices[0].presentation.label, choices[1].presentation.label);
    assert_ne!(choices[0].value, choices[1].value);
    let ClientRequestT::ChoiceLookupRequest(next) = l.request() else {
        panic!()
    };
    assert_eq!(next.page_cursor.as_deref(), Some("p2"));
    // A stale context drops the cursor: the lookup starts over.
    assert_eq!(
        step(
            &mut l,
            outcome(ChoiceStatus::StaleContext, vec![], Some("p3"))
        ),
        LookupStep::Restarted
    );
    let ClientRequestT::ChoiceLookupRequest(again) = l.request() else {
        panic!()
    };
    assert_eq!(again.page_cursor, None);
    assert_eq!(l.restarts(), 1);
    assert_eq!(
        step(&mut l, outcome(ChoiceStatus::MissingContext, vec![], None)),
        LookupStep::MissingContext
    );
    assert_eq!(
        step(&mut l, outcome(ChoiceStatus::LookupFailed, vec![], None)),
        LookupStep::Failed
    );
    // A chosen value is used again exactly as returned: a resource picked from a Resource
    // lookup becomes the dependency of its versions' lookup, byte for byte.
    let mut resources = ChoiceLookup::new(
        ChoiceTarget::Resource,
        &[Dependency::Domain("t".into())],
        "",
        10,
    )
    .unwrap();
    let picked = ChoiceValueT::ResourceChoiceReference(Box::new(ResourceChoiceReferenceT {
        resource: "bundle \u{e9}\0".into(),
    }));
    let LookupStep::Page { choices, .. } = step(
        &mut resources,
        outcome(
            ChoiceStatus::Ready,
            vec![choice(picked.clone(), "Bundle")],
            None,
        ),
    ) else {
        panic!()
    };
    assert_eq!(choices[0].value, picked);
    let versions = ChoiceLookup::new(
        ChoiceTarget::CompletedResourceVersion,
        &[
            Dependency::Domain("t".into()),
            Dependency::Chosen(choices[0].value.clone()),
        ],
        "",
        10,
    )
    .unwrap();
    let ClientRequestT::ChoiceLookupRequest(req) = versions.request() else {
        panic!()
    };
    assert_eq!(req.dependencies[1].value, picked);
    // A chosen value of the wrong shape is refused for the slot.
    assert!(ChoiceLookup::new(
        ChoiceTarget::CompletedResourceVersion,
        &[Dependency::Domain("t".into()), Dependency::Chosen(three)],
        "",
        10
    )
    .is_err());
    let _ = latest;
}

#[test]
fn l_2_statements_split_outside_quotes_and_comments() {
    assert_eq!(split("A; B;").unwrap(), vec!["A", "B"]);
    assert_eq!(
        split("SELECT 'a;b' ; C").unwrap(),
        vec!["SELECT 'a;b'", "C"]
    );
    assert_eq!(split("X \"we;ird\"; Y").unwrap(), vec!["X \"we;ird\"", "Y"]);
    assert_eq!(split("A -- c; d\n; B").unwrap(), vec!["A -- c; d", "B"]);
    assert_eq!(split("A /* ; */ ; B").unwrap(), vec!["A /* ; */", "B"]);
    assert_eq!(split("'it''s;' ;").unwrap(), vec!["'it''s;'"]);
    assert_eq!(split("; ; -- only\n").unwrap(), Vec::<&str>::new());
    assert_eq!(split("'open").unwrap_err(), StatementError::Unterminated);
    assert_eq!(classify("  begin;"), StatementKind::Begin);
    assert_eq!(classify("/* x */ COMMIT"), StatementKind::Commit);
    assert_eq!(
        classify("attach domain clock"),
        StatementKind::Routed(RoutedRequest::AttachDomainClock)
    );
    assert_eq!(
        classify("use tenant"),
        StatementKind::Routed(RoutedRequest::UseDomain)
    );
    assert_eq!(classify("SHOW RELAYS"), StatementKind::Read);
    assert_eq!(
        classify("DESCRIBE TRANSACTION"),
        StatementKind::DescribeTransaction
    );
    assert_eq!(
        check_command("BACKUP DOMAIN x; SHOW DOMAINS", true).unwrap_err(),
        StatementError::MustTravelAlone {
            statement: "BACKUP DOMAIN".into()
        }
    );
    assert_eq!(
        check_command("  ", false).unwrap_err(),
        StatementError::Empty
    );
    assert!(check_command("BACKUP DOMAIN x", false).is_ok());
}

#[test]
fn l_2_statements_route_by_the_release_grammar() {
    // Each row of the routing table, in any case, with comments around the keywords.
    assert_eq!(
        route("USE tenant;", false).unwrap(),
        Route::UseDomain("tenant".into())
    );
    assert_eq!(
        route("use \"my \"\"odd\"\" domain\" -- picked\n", false).unwrap(),
        Route::UseDomain("my \"odd\" domain".into())
    );
    assert_eq!(
        route("USE;", false).unwrap_err(),
        StatementError::Malformed {
            statement: "USE".into(),
            expected: "USE <domain>"
        }
    );
    assert!(
        matches!(
            route("USE DOMAIN tenant", false).unwrap_err(),
            StatementError::Malformed { .. }
        ),
        "USE takes one name, with no DOMAIN keyword"
    );
    assert_eq!(
        route("list /* all */ domains", false).unwrap(),
        Route::ListDomains
    );
    assert!(matches!(
        route("LIST DOMAINS tenant", false).unwrap_err(),
        StatementError::Malformed { .. }
    ));
    assert_eq!(
        route("Attach Domain Clock;", false).unwrap(),
        Route::AttachDomainClock
    );
    assert_eq!(
        route("DETACH DOMAIN CLOCK", false).unwrap(),
        Route::DetachDomainClock
    );
    assert!(
        matches!(
            route("ATTACH DOMAIN CLOCK tenant", false).unwrap_err(),
            StatementError::Malformed { .. }
        ),
        "the clock statements take no argument: they name the selected domain"
    );
    let sub = "CREATE SUBSCRIPTION live AS SELECT * FROM orders WHERE note = 'a;b'";
    assert_eq!(
        route(&format!("{sub};"), false).unwrap(),
        Route::Subscribe(sub),
        "the exact statement text, quoted semicolon included"
    );
    assert_eq!(
        route("delete subscription live", false).unwrap(),
        Route::Unsubscribe("live".into())
    );
    assert_eq!(
        route("DELETE SUBSCRIPTION \"Live one\";", false).unwrap(),
        Route::Unsubscribe("Live one".into())
    );
    assert!(matches!(
        route("DELETE SUBSCRIPTION a b", false).unwrap_err(),
        StatementError::Malformed { .. }
    ));
    assert_eq!(
        route("UPLOAD RESOURCE bundle FROM 'x.tar'", false).unwrap(),
        Route::UploadResource("UPLOAD RESOURCE bundle FROM 'x.tar'")
    );
    assert_eq!(
        route("RESTORE FROM 'a.nxb'", false).unwrap(),
        Route::Restore("RESTORE FROM 'a.nxb'")
    );
    assert_eq!(
        route("DESCRIBE BACKUP 'a.nxb'", false).unwrap_err(),
        StatementError::NotARequest {
            statement: "DESCRIBE BACKUP".into()
        }
    );
    // Everything else is a command, those that look like routed ones included.
    for q in [
        "BEGIN",
        "COMMIT",
        "REVERT",
        "DESCRIBE TRANSACTION",
        "SHOW TRANSACTIONS",
        "BACKUP DOMAIN tenant TO 'b.nxb'",
        "ATTACH TRANSACTION 'tx-1'",
        "INSPECT TRANSACTION",
        "CREATE RELAY orders",
        "DROP SUBSCRIPTION live",
        "SELECT 'USE other'",
        "-- USE x\nSHOW DOMAINS",
    ] {
        assert!(
            matches!(route(q, false), Ok(Route::Command(_))),
            "{q} is a command"
        );
    }
    // A routed statement never travels inside a batch, even inside a transaction.
    for (q, request) in [
        ("CREATE RELAY a; USE other", RoutedRequest::UseDomain),
        ("LIST DOMAINS; SHOW DOMAINS", RoutedRequest::ListDomains),
        (
            "SHOW X; CREATE SUBSCRIPTION s AS SELECT 1",
            RoutedRequest::Subscribe,
        ),
        ("CREATE RELAY a; RESTORE FROM 'x'", RoutedRequest::Restore),
        (
            "UPLOAD RESOURCE r FROM 'y'; SHOW X",
            RoutedRequest::UploadResource,
        ),
        ("DESCRIBE BACKUP 'z'; SHOW X", RoutedRequest::DescribeBackup),
    ] {
        match route(q, true).unwrap_err() {
            StatementError::NeedsOwnRequest { request: r, .. } => assert_eq!(r, request, "{q}"),
            other => panic!("{q}: {other:?}"),
        }
    }
    // The manual's stricter rules stay: several statements only inside a transaction, and
    // DESCRIBE TRANSACTION, SHOW TRANSACTIONS and BACKUP alone.
    assert_eq!(
        route("CREATE RELAY a; CREATE RELAY b", false).unwrap_err(),
        StatementError::SeveralOutsideTransaction
    );
    assert!(
        matches!(route("CREATE RELAY a; CREATE RELAY b", true), Ok(Route::Command(s)) if s.kinds().len() == 2)
    );
    for q in [
        "DESCRIBE TRANSACTION; SHOW X",
        "SHOW X; SHOW TRANSACTIONS",
        "BACKUP DOMAIN t; SHOW X",
    ] {
        assert!(
            matches!(
                route(q, true).unwrap_err(),
                StatementError::MustTravelAlone { .. }
            ),
            "{q}"
        );
    }
    assert_eq!(
        route(" ; -- nothing\n", false).unwrap_err(),
        StatementError::Empty
    );
    assert_eq!(
        route("USE 'open", false).unwrap_err(),
        StatementError::Unterminated
    );
}

#[test]
fn q_1_an_ingestor_source_target_matches_its_connector_and_entity() {
    use ChoiceTarget as T;
    let pairs = [
        (
            Connector::Http,
            SourceEntity::Client,
            Some(T::IngestHttpSource),
        ),
        (
            Connector::Http,
            SourceEntity::Endpoint,
            Some(T::IngestEndpointSource),
        ),
        (
            Connector::Websockets,
            SourceEntity::Endpoint,
            Some(T::IngestWebsocketsSource),
        ),
        (Connector::Websockets, SourceEntity::Client, None),
        (
            Connector::Kafka,
            SourceEntity::Client,
            Some(T::IngestKafkaSource),
        ),
        (Connector::Kafka, SourceEntity::Endpoint, None),
        (
            Connector::Pulsar,
            SourceEntity::Client,
            Some(T::IngestPulsarSource),
        ),
        (
            Connector::Mqtt,
            SourceEntity::Client,
            Some(T::IngestMqttSource),
        ),
        (
            Connector::Nats,
            SourceEntity::Client,
            Some(T::IngestNatsSource),
        ),
        (
            Connector::RabbitMq,
            SourceEntity::Client,
            Some(T::IngestRabbitMqSource),
        ),
        (
            Connector::RedisPubSub,
            SourceEntity::Client,
            Some(T::IngestRedisPubSubSource),
        ),
        (
            Connector::Prometheus,
            SourceEntity::Client,
            Some(T::IngestPrometheusSource),
        ),
        (
            Connector::ZeroMq,
            SourceEntity::Client,
            Some(T::IngestZeroMqSource),
        ),
        (
            Connector::Sqs,
            SourceEntity::Client,
            Some(T::IngestSqsSource),
        ),
        (
            Connector::Syslog,
            SourceEntity::Client,
            Some(T::IngestSyslogSource),
        ),
        (Connector::Syslog, SourceEntity::Endpoint, None),
    ];
    for (connector, entity, target) in pairs {
        assert_eq!(
            source_target(connector, entity),
            target,
            "{connector:?} {entity:?}"
        );
        let lookup = ChoiceLookup::ingestor_sources("tenant", connector, entity, "", 10);
        match (lookup, target) {
            (None, None) => {}
            (Some(l), Some(t)) => {
                let ClientRequestT::ChoiceLookupRequest(req) = l.unwrap().request() else {
                    panic!()
                };
                assert_eq!(req.target, Some(t));
                // It carries a domain, and only a domain.
                assert!(matches!(&req.dependencies[..], [ChoiceSelectionT {
                    value: ChoiceValueT::DomainChoiceReference(d)
                }] if d.domain == "tenant"));
            }
            (l, t) => panic!("{connector:?} {entity:?}: {l:?} against {t:?}"),
        }
    }
    // Every source target of the schema is reachable from exactly one pair.
    let mut reached: Vec<ChoiceTarget> = pairs.iter().filter_map(|p| p.2).collect();
    reached.sort_by_key(|t| t.0);
    reached.dedup();
    let declared: Vec<ChoiceTarget> = ChoiceTarget::ENUM_VALUES
        .iter()
        .copied()
        .filter(|t| {
            t.variant_name()
                .is_some_and(|n| n.starts_with("Ingest") && n.ends_with("Source"))
        })
        .collect();
    assert_eq!(reached, declared);
}

#[test]
fn q_1_typed_constructors_carry_each_targets_dependencies() {
    let deps = |l: ChoiceLookup| -> (ChoiceTarget, Vec<ChoiceValueT>) {
        let ClientRequestT::ChoiceLookupRequest(req) = l.request() else {
            panic!()
        };
        (
            req.target.unwrap(),
            req.dependencies.into_iter().map(|d| d.value).collect(),
        )
    };
    let domain = ChoiceValueT::DomainChoiceReference(Box::new(DomainChoiceReferenceT {
        domain: "t".into(),
    }));
    let model = |kind, name: &str| {
        ChoiceValueT::ModelChoiceReference(Box::new(ModelChoiceReferenceT {
            node: Box::new(NodeRefT {
                kind: Some(kind),
                name: name.into(),
            }),
        }))
    };
    assert_eq!(
        deps(ChoiceLookup::relay_fields("t", "orders", "", 5).unwrap()),
        (
            ChoiceTarget::RelayField,
            vec![domain.clone(), model(ModelKind::Relay, "orders")]
        )
    );
    assert_eq!(
        deps(ChoiceLookup::codec_fields("t", "json", "", 5).unwrap()),
        (
            ChoiceTarget::CodecField,
            vec![domain.clone(), model(ModelKind::Codec, "json")]
        )
    );
    assert_eq!(
        deps(ChoiceLookup::branch_fields("t", "by_tenant", "", 5).unwrap()),
        (
            ChoiceTarget::BranchField,
            vec![domain.clone(), model(ModelKind::Branch, "by_tenant")]
        )
    );
    assert_eq!(
        deps(ChoiceLookup::ingestor_relays("t", None, "", 5).unwrap()),
        (ChoiceTarget::IngestUnbranchedRelay, vec![domain.clone()])
    );
    assert_eq!(
        deps(ChoiceLookup::ingestor_relays("t", Some("b"), "", 5).unwrap()),
        (
            ChoiceTarget::IngestBranchedRelay,
            vec![domain.clone(), model(ModelKind::Branch, "b")]
        )
    );
    assert_eq!(
        deps(ChoiceLookup::ingestor_codecs("t", "", 5).unwrap()),
        (ChoiceTarget::IngestCodec, vec![domain.clone()])
    );
    let resource = ChoiceValueT::ResourceChoiceReference(Box::new(ResourceChoiceReferenceT {
        resource: "bundle".into(),
    }));
    assert_eq!(
        deps(ChoiceLookup::completed_resource_versions("t", "bundle", "", 5).unwrap()),
        (
            ChoiceTarget::CompletedResourceVersion,
            vec![domain.clone(), resource]
        )
    );
    for (kind, target) in [
        (
            ProcessorInput::Compatible,
            ChoiceTarget::ProcessorCompatibleInputRelay,
        ),
        (
            ProcessorInput::SameBranch,
            ChoiceTarget::ProcessorInputBranchRelay,
        ),
        (
            ProcessorInput::Materialized,
            ChoiceTarget::ProcessorMaterializedRelay,
        ),
    ] {
        assert_eq!(
            deps(ChoiceLookup::processor_inputs(kind, "t", "first", "", 5).unwrap()),
            (
                target,
                vec![domain.clone(), model(ModelKind::Relay, "first")]
            )
        );
    }
    for target in [
        ChoiceTarget::Schema,
        ChoiceTarget::Branch,
        ChoiceTarget::Relay,
        ChoiceTarget::Codec,
        ChoiceTarget::Vhost,
        ChoiceTarget::SignalingProtocol,
        ChoiceTarget::WireJsonSchema,
        ChoiceTarget::WireCborSchema,
        ChoiceTarget::WireAvroSchema,
        ChoiceTarget::Resource,
    ] {
        assert_eq!(
            deps(ChoiceLookup::in_domain(target, "t", "", 5).unwrap()),
            (target, vec![domain.clone()])
        );
    }
    // A target that needs more than the domain is refused by the domain-only constructor.
    assert!(ChoiceLookup::in_domain(ChoiceTarget::RelayField, "t", "", 5).is_err());
}

#[test]
fn l_2_every_leading_word_pattern_is_recognised_in_any_case_and_only_as_whole_words() {
    use RoutedRequest as R;
    let rows: [(&str, StatementKind); 19] = [
        ("BEGIN", StatementKind::Begin),
        ("COMMIT", StatementKind::Commit),
        ("REVERT", StatementKind::Revert),
        ("ROLLBACK", StatementKind::Revert),
        ("DESCRIBE TRANSACTION", StatementKind::DescribeTransaction),
        ("SHOW TRANSACTIONS", StatementKind::ShowTransactions),
        ("DESCRIBE BACKUP", StatementKind::Routed(R::DescribeBackup)),
        ("BACKUP", StatementKind::Backup),
        ("USE", StatementKind::Routed(R::UseDomain)),
        ("LIST DOMAINS", StatementKind::Routed(R::ListDomains)),
        (
            "ATTACH DOMAIN CLOCK",
            StatementKind::Routed(R::AttachDomainClock),
        ),
        (
            "DETACH DOMAIN CLOCK",
            StatementKind::Routed(R::DetachDomainClock),
        ),
        ("CREATE SUBSCRIPTION", StatementKind::Routed(R::Subscribe)),
        ("DELETE SUBSCRIPTION", StatementKind::Routed(R::Unsubscribe)),
        ("UPLOAD RESOURCE", StatementKind::Routed(R::UploadResource)),
        ("RESTORE", StatementKind::Routed(R::Restore)),
        ("SHOW", StatementKind::Read),
        ("DESCRIBE", StatementKind::Read),
        ("CREATE RELAY", StatementKind::Other),
    ];
    for (words, kind) in rows {
        let lower = words.to_lowercase();
        let mixed: String = words
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        let commented = words.replace(' ', " /* ; */ -- x\n ");
        for s in [
            words.to_string(),
            lower,
            mixed,
            commented,
            format!("{words} x_1 y"),
        ] {
            assert_eq!(classify(&s), kind, "{s:?}");
        }
        if kind == StatementKind::Other {
            continue;
        }
        // A longer word is another word, and a statement cut short is not the pattern.
        let longer = format!("{words}S");
        assert_ne!(classify(&longer), kind, "{longer:?}");
        if let Some((head, _)) = words.rsplit_once(' ') {
            assert_ne!(classify(head), kind, "{head:?}");
        }
    }
    assert_eq!(classify(""), StatementKind::Other);
    assert_eq!(classify("-- nothing"), StatementKind::Other);
    assert_eq!(classify("(BEGIN)"), StatementKind::Other);
}

#[test]
fn l_2_one_statement_routes_alone_and_a_fault_after_it_is_still_found() {
    // Empty statements around one statement leave it one statement.
    let one = check_command(" ; SHOW RELAYS ;; -- done\n", false).unwrap();
    assert_eq!(one.kinds(), [StatementKind::Read]);
    assert!(one.is_read());
    assert_eq!(one, check_command("show relays", false).unwrap());
    let write = check_command("CREATE RELAY a", false).unwrap();
    assert_ne!(one, write);
    assert!(
        !write.is_read(),
        "a statement that can change state is no read"
    );
    // The same statement twice is two statements.
    let two = check_command("SHOW RELAYS; SHOW RELAYS", true).unwrap();
    assert_eq!(two.kinds(), [StatementKind::Read, StatementKind::Read]);
    assert_ne!(one, two);
    assert_eq!(
        route("SHOW RELAYS; 'open", false).unwrap_err(),
        StatementError::Unterminated
    );
    assert_eq!(
        route("SHOW RELAYS /* open", true).unwrap_err(),
        StatementError::Unterminated
    );
    assert_eq!(
        route("SHOW RELAYS; SHOW RELAYS", false).unwrap_err(),
        StatementError::SeveralOutsideTransaction
    );
}

#[test]
fn q_1_an_exact_format_uses_its_own_wire_schema_target() {
    let formats = [
        (WireFormat::Json, ChoiceTarget::WireJsonSchema, "Json"),
        (WireFormat::Cbor, ChoiceTarget::WireCborSchema, "Cbor"),
        (WireFormat::Avro, ChoiceTarget::WireAvroSchema, "Avro"),
    ];
    let mut seen = Vec::new();
    for (format, target, name) in formats {
        assert_eq!(wire_schema_target(format), target, "{format:?}");
        // The target is the format's own, never the internal schema target.
        let variant = target.variant_name().unwrap();
        assert!(
            variant.starts_with("Wire") && variant.contains(name),
            "{variant}"
        );
        assert_ne!(target, ChoiceTarget::Schema);
        let ClientRequestT::ChoiceLookupRequest(req) =
            ChoiceLookup::wire_schemas("tenant", format, "ord", 7)
                .unwrap()
                .request()
        else {
            panic!()
        };
        assert_eq!(req.target, Some(target));
        assert!(matches!(&req.dependencies[..], [ChoiceSelectionT {
            value: ChoiceValueT::DomainChoiceReference(d)
        }] if d.domain == "tenant"));
        assert_eq!((req.search.as_str(), req.page_size), ("ord", 7));
        seen.push(target);
    }
    seen.sort_by_key(|t| t.0);
    seen.dedup();
    assert_eq!(seen.len(), 3, "each format has a distinct target");
}

#[test]
fn q_2_a_page_offers_only_the_versions_its_result_carries() {
    let mut l = ChoiceLookup::completed_resource_versions("t", "bundle", "", 2).unwrap();
    let version = |v: u64| {
        ChoiceValueT::ResourceVersionNumber(Box::new(ResourceVersionNumberT { version: v }))
    };
    let latest = ChoiceValueT::LatestResourceVersion(Box::default());
    let first = vec![choice(latest, "latest"), choice(version(3), "v3")];
    let LookupStep::Page { choices, more } = step(
        &mut l,
        outcome(ChoiceStatus::Ready, first.clone(), Some("p2")),
    ) else {
        panic!()
    };
    assert_eq!((choices, more), (first, true));
    // The context changed: what the stale pages offered is gone with them.
    assert_eq!(
        step(&mut l, outcome(ChoiceStatus::StaleContext, vec![], None)),
        LookupStep::Restarted
    );
    let again = vec![choice(version(2), "v2")];
    let LookupStep::Page { choices, more } =
        step(&mut l, outcome(ChoiceStatus::Ready, again.clone(), None))
    else {
        panic!()
    };
    // Exactly the result's versions, in its order: neither the latest nor version 3, which
    // the new result does not carry, is offered.
    assert_eq!((choices, more), (again, false));
    let LookupStep::Page { choices, more } =
        step(&mut l, outcome(ChoiceStatus::Ready, vec![], None))
    else {
        panic!()
    };
    assert!(
        choices.is_empty() && !more,
        "an empty result offers nothing"
    );
}
