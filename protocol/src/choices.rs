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
