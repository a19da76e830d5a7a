//! Structured choice lookups: requests built from typed dependencies, answers used
//! by their typed value, and paged lookups restarted after `StaleContext`.

use crate::schema::*;

/// One typed dependency of a lookup.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Dependency {
    /// The selected domain.
    Domain(String),
    /// A model of the domain, by kind and name.
    Model(ModelKind, String),
    /// A resource of the domain.
    Resource(String),
    /// A value chosen earlier, used exactly as the server returned it.
    Chosen(ChoiceValueT),
}

impl Dependency {
    fn value(&self) -> ChoiceValueT {
        match self {
            Dependency::Domain(d) => {
                ChoiceValueT::DomainChoiceReference(Box::new(DomainChoiceReferenceT {
                    domain: d.clone(),
                }))
            }
            Dependency::Model(kind, name) => {
                ChoiceValueT::ModelChoiceReference(Box::new(ModelChoiceReferenceT {
                    node: Box::new(NodeRefT {
                        kind: Some(*kind),
                        name: name.clone(),
                    }),
                }))
            }
            Dependency::Resource(r) => {
                ChoiceValueT::ResourceChoiceReference(Box::new(ResourceChoiceReferenceT {
                    resource: r.clone(),
                }))
            }
            Dependency::Chosen(v) => v.clone(),
        }
    }
}

/// The shape one dependency position must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Slot {
    /// A domain reference.
    Domain,
    /// A model reference of this kind.
    Model(ModelKind),
    /// A resource reference.
    Resource,
}

/// The dependencies a target needs, in order.
pub fn required_dependencies(target: ChoiceTarget) -> &'static [Slot] {
    use ChoiceTarget as T;
    const NONE: &[Slot] = &[];
    const DOMAIN: &[Slot] = &[Slot::Domain];
    const RELAY: &[Slot] = &[Slot::Domain, Slot::Model(ModelKind::Relay)];
    const CODEC: &[Slot] = &[Slot::Domain, Slot::Model(ModelKind::Codec)];
    const BRANCH: &[Slot] = &[Slot::Domain, Slot::Model(ModelKind::Branch)];
    const RESOURCE: &[Slot] = &[Slot::Domain, Slot::Resource];
    match target {
        T::DomainPace | T::PlacementPolicy => NONE,
        T::RelayField
        | T::ProcessorCompatibleInputRelay
        | T::ProcessorInputBranchRelay
        | T::ProcessorMaterializedRelay => RELAY,
        T::CodecField => CODEC,
        T::IngestBranchedRelay | T::BranchField => BRANCH,
        T::CompletedResourceVersion => RESOURCE,
        _ => DOMAIN,
    }
}

/// Why a lookup request cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChoiceError {
    /// A target the schema does not declare.
    #[error("undeclared choice target {0}")]
    UndeclaredTarget(u8),
    /// The dependencies do not have the target's shape.
    #[error("target {target} needs dependencies {expected:?}, got {found:?}")]
    Dependencies {
        /// The target.
        target: &'static str,
        /// What it needs.
        expected: &'static [Slot],
        /// What was given, by shape (`None` where a value fits no slot).
        found: Vec<Option<Slot>>,
    },
    /// A page size outside 1..=100.
    #[error("page size {0} is outside 1..=100")]
    PageSize(u16),
}

fn slot_of(v: &ChoiceValueT) -> Option<Slot> {
    match v {
        ChoiceValueT::DomainChoiceReference(_) => Some(Slot::Domain),
        ChoiceValueT::ModelChoiceReference(m) => m.node.kind.map(Slot::Model),
        ChoiceValueT::ResourceChoiceReference(_) => Some(Slot::Resource),
        _ => None,
    }
}

/// What one page of a lookup gave.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LookupStep {
    /// A page of choices; `more` when a further page can be asked for.
    Page {
        /// The choices, with their typed values and presentation.
        choices: Vec<ChoiceT>,
        /// Whether the server offered another page.
        more: bool,
    },
    /// The context changed under the lookup: its cursor was dropped, ask again from the first
    /// page.
    Restarted,
    /// The dependencies do not select enough context.
    MissingContext,
    /// The lookup failed.
    Failed,
}

/// A paged choice lookup.
#[derive(Debug, Clone)]
pub struct ChoiceLookup {
    target: ChoiceTarget,
    dependencies: Vec<ChoiceSelectionT>,
    search: String,
    page_size: u16,
    cursor: Option<String>,
    restarts: u32,
}

impl ChoiceLookup {
    /// A lookup of `target` with typed `dependencies` (checked against Q-1's shapes).
    pub fn new(
        target: ChoiceTarget,
        dependencies: &[Dependency],
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let name = target
            .variant_name()
            .ok_or(ChoiceError::UndeclaredTarget(target.0))?;
        if !(1..=100).contains(&page_size) {
            return Err(ChoiceError::PageSize(page_size));
        }
        let values: Vec<ChoiceValueT> = dependencies.iter().map(Dependency::value).collect();
        let expected = required_dependencies(target);
        let found: Vec<Option<Slot>> = values.iter().map(slot_of).collect();
        if found.len() != expected.len() || found.iter().zip(expected).any(|(f, e)| *f != Some(*e))
        {
            return Err(ChoiceError::Dependencies {
                target: name,
                expected,
                found,
            });
        }
        Ok(Self {
            target,
            dependencies: values
                .into_iter()
                .map(|value| ChoiceSelectionT { value })
                .collect(),
            search: search.to_string(),
            page_size,
            cursor: None,
            restarts: 0,
        })
    }

    /// The request for the next page.
    pub fn request(&self) -> ClientRequestT {
        ClientRequestT::ChoiceLookupRequest(Box::new(ChoiceLookupRequestT {
            target: Some(self.target),
            dependencies: self.dependencies.clone(),
            search: self.search.clone(),
            page_size: self.page_size,
            page_cursor: self.cursor.clone(),
        }))
    }

    /// How often a stale context restarted the lookup.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Takes the outcome of the last request.
    pub fn on_outcome(&mut self, outcome: &ChoiceOutcome<'_>) -> LookupStep {
        match outcome.status() {
            Some(ChoiceStatus::Ready) => {
                self.cursor = outcome.page_cursor().map(str::to_string);
                let choices = outcome.choices().iter().map(|c| c.unpack()).collect();
                LookupStep::Page {
                    choices,
                    more: self.cursor.is_some(),
                }
            }
            Some(ChoiceStatus::StaleContext) => {
                self.cursor = None;
                self.restarts += 1;
                LookupStep::Restarted
            }
            Some(ChoiceStatus::MissingContext) => LookupStep::MissingContext,
            _ => LookupStep::Failed,
        }
    }
}

/// The connector an ingestor's source uses, as its form selects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Connector {
    /// HTTP.
    Http,
    /// Kafka.
    Kafka,
    /// Pulsar.
    Pulsar,
    /// MQTT.
    Mqtt,
    /// NATS.
    Nats,
    /// RabbitMQ.
    RabbitMq,
    /// Redis pub/sub.
    RedisPubSub,
    /// Prometheus.
    Prometheus,
    /// ZeroMQ.
    ZeroMq,
    /// SQS.
    Sqs,
    /// Syslog.
    Syslog,
    /// WebSockets.
    Websockets,
}

/// What an ingestor's source reference names: a client of the connector, or an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceEntity {
    /// A client of the connector.
    Client,
    /// An endpoint (HTTP ENDPOINT or WEBSOCKETS ENDPOINT).
    Endpoint,
}

/// What a processor's first input is looked up for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessorInput {
    /// Relays with the same named schema and branch as the first input.
    Compatible,
    /// Relays with the same branch as the first input.
    SameBranch,
    /// Relays with materialized state in the first input's branch.
    Materialized,
}

/// The exact wire format a form asks for, each with its own wire-schema target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireFormat {
    /// JSON.
    Json,
    /// CBOR.
    Cbor,
    /// AVRO.
    Avro,
}

/// The wire-schema target of an exact format: never the internal schema target, and
/// never another format's.
pub fn wire_schema_target(format: WireFormat) -> ChoiceTarget {
    match format {
        WireFormat::Json => ChoiceTarget::WireJsonSchema,
        WireFormat::Cbor => ChoiceTarget::WireCborSchema,
        WireFormat::Avro => ChoiceTarget::WireAvroSchema,
    }
}

/// The source target of a connector and entity pair, when the pair has one: the HTTP
/// and WebSockets endpoint targets return endpoints of that type, the others clients of the
/// pair's connector.
pub fn source_target(connector: Connector, entity: SourceEntity) -> Option<ChoiceTarget> {
    use ChoiceTarget as T;
    use Connector as C;
    Some(match (connector, entity) {
        (C::Http, SourceEntity::Endpoint) => T::IngestEndpointSource,
        (C::Websockets, SourceEntity::Endpoint) => T::IngestWebsocketsSource,
        (_, SourceEntity::Endpoint) | (C::Websockets, SourceEntity::Client) => return None,
        (C::Http, _) => T::IngestHttpSource,
        (C::Kafka, _) => T::IngestKafkaSource,
        (C::Pulsar, _) => T::IngestPulsarSource,
        (C::Mqtt, _) => T::IngestMqttSource,
        (C::Nats, _) => T::IngestNatsSource,
        (C::RabbitMq, _) => T::IngestRabbitMqSource,
        (C::RedisPubSub, _) => T::IngestRedisPubSubSource,
        (C::Prometheus, _) => T::IngestPrometheusSource,
        (C::ZeroMq, _) => T::IngestZeroMqSource,
        (C::Sqs, _) => T::IngestSqsSource,
        (C::Syslog, _) => T::IngestSyslogSource,
    })
}

/// Typed constructors for every lookup Q-1 names, each with the dependencies its target
/// needs, so no lookup can be built with the wrong ones.
impl ChoiceLookup {
    fn domain_then(
        target: ChoiceTarget,
        domain: &str,
        then: Option<Dependency>,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let mut deps = vec![Dependency::Domain(domain.to_string())];
        deps.extend(then);
        Self::new(target, &deps, search, page_size)
    }

    /// A lookup of the domain's internal schemas, branches, relays, codecs, VHOSTs,
    /// signaling protocols, wire schemas (JSON, CBOR, AVRO) or resources: `target` must be
    /// one that needs the domain alone.
    pub fn in_domain(
        target: ChoiceTarget,
        domain: &str,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        Self::domain_then(target, domain, None, search, page_size)
    }

    /// The wire schemas of the domain in the exact `format` a form requires, looked up with
    /// that format's own target.
    pub fn wire_schemas(
        domain: &str,
        format: WireFormat,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let target = wire_schema_target(format);
        Self::domain_then(target, domain, None, search, page_size)
    }

    /// The fields of a relay.
    pub fn relay_fields(
        domain: &str,
        relay: &str,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let relay = Dependency::Model(ModelKind::Relay, relay.to_string());
        Self::domain_then(
            ChoiceTarget::RelayField,
            domain,
            Some(relay),
            search,
            page_size,
        )
    }

    /// The fields of a codec's output schema (decoded fields too).
    pub fn codec_fields(
        domain: &str,
        codec: &str,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let codec = Dependency::Model(ModelKind::Codec, codec.to_string());
        Self::domain_then(
            ChoiceTarget::CodecField,
            domain,
            Some(codec),
            search,
            page_size,
        )
    }

    /// The completed versions of a resource.
    pub fn completed_resource_versions(
        domain: &str,
        resource: &str,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let resource = Dependency::Resource(resource.to_string());
        let target = ChoiceTarget::CompletedResourceVersion;
        Self::domain_then(target, domain, Some(resource), search, page_size)
    }

    /// The sources an ingestor can read with `connector`, naming clients or endpoints; the
    /// target always matches the pair. `None` when the pair has no source target.
    pub fn ingestor_sources(
        domain: &str,
        connector: Connector,
        entity: SourceEntity,
        search: &str,
        page_size: u16,
    ) -> Option<Result<Self, ChoiceError>> {
        let target = source_target(connector, entity)?;
        Some(Self::domain_then(target, domain, None, search, page_size))
    }

    /// The codecs an ingestor can decode with (decoding codecs only).
    pub fn ingestor_codecs(
        domain: &str,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        Self::domain_then(ChoiceTarget::IngestCodec, domain, None, search, page_size)
    }

    /// The relays an ingestor can write: unbranched (also for error relays), or those of
    /// `branch`.
    pub fn ingestor_relays(
        domain: &str,
        branch: Option<&str>,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        match branch {
            None => Self::domain_then(
                ChoiceTarget::IngestUnbranchedRelay,
                domain,
                None,
                search,
                page_size,
            ),
            Some(b) => {
                let branch = Dependency::Model(ModelKind::Branch, b.to_string());
                let target = ChoiceTarget::IngestBranchedRelay;
                Self::domain_then(target, domain, Some(branch), search, page_size)
            }
        }
    }

    /// The fields of a branch.
    pub fn branch_fields(
        domain: &str,
        branch: &str,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let branch = Dependency::Model(ModelKind::Branch, branch.to_string());
        Self::domain_then(
            ChoiceTarget::BranchField,
            domain,
            Some(branch),
            search,
            page_size,
        )
    }

    /// The relays a processor can take as further inputs, given its first input relay.
    pub fn processor_inputs(
        kind: ProcessorInput,
        domain: &str,
        first_input: &str,
        search: &str,
        page_size: u16,
    ) -> Result<Self, ChoiceError> {
        let target = match kind {
            ProcessorInput::Compatible => ChoiceTarget::ProcessorCompatibleInputRelay,
            ProcessorInput::SameBranch => ChoiceTarget::ProcessorInputBranchRelay,
            ProcessorInput::Materialized => ChoiceTarget::ProcessorMaterializedRelay,
        };
        let relay = Dependency::Model(ModelKind::Relay, first_input.to_string());
        Self::domain_then(target, domain, Some(relay), search, page_size)
    }

    /// The lookup's target.
    pub fn target(&self) -> ChoiceTarget {
        self.target
    }
}
