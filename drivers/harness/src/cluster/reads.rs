//! What a follower may serve: the domain list, domain selection, read commands (`SHOW`,
//! `DESCRIBE`), keyword suggestions and choice lookups.

use super::*;

/// Keywords offered by `SuggestRequest`.
pub(super) const KEYWORDS: &[&str] = &[
    "ALTER", "BEGIN", "COMMIT", "CREATE", "DESCRIBE", "DROP", "REVERT", "SHOW", "START", "STOP",
];

impl SimCluster {
    /// `ListDomainsRequest`: every domain of the cluster, running and unpaced.
    pub(super) fn list_domains(&self) -> Served {
        Served::new(
            ReplyBodyT::DomainList(Box::new(DomainListT {
                domains: self
                    .config
                    .domains
                    .iter()
                    .map(|d| DomainInfoT {
                        domain: d.clone(),
                        status: Some(DomainStatus::Running),
                        pace: DomainPaceT::UnpacedDomain(Box::default()),
                    })
                    .collect(),
            })),
            format!("DomainList({})", self.config.domains.len()),
        )
        .stage(CancellationStage::BeforeAdmission)
    }

    pub(super) fn read(
        &mut self,
        conn: ConnId,
        node: usize,
        c: &CommandRequestT,
        stmts: &[String],
        kinds: &[Stmt],
    ) -> Served {
        let name = self.nodes[node].name.clone();
        let open = self
            .transactions
            .values()
            .filter(|t| t.state == TxState::Open)
            .count();
        let answer = |s: &String, k: &Stmt| match k {
            Stmt::LeaderRead => format!("{open} open transaction(s), read on {name}"),
            _ => format!("read `{}` on {name}", short(s, 60)),
        };
        let mut outcome = command_outcome(
            &c.execution_reference,
            OutcomeOrigin::Executed,
            completed(),
            answer(&stmts[0], &kinds[0]),
        );
        if stmts.len() > 1 {
            outcome.message = format!("{} statements read on {name}", stmts.len());
            outcome.statements = stmts
                .iter()
                .zip(kinds)
                .map(|(s, k)| StatementOutcomeT {
                    disposition: StatementDispositionT::CommandCompleted(Box::new(
                        CommandCompletedT {
                            already_existed: false,
                        },
                    )),
                    message: answer(s, k),
                    diagnostics: vec![],
                })
                .collect();
        }
        outcome.transaction = self.bound_status(conn);
        let tx = self.bound(conn);
        self.admitted(c, outcome, tx, String::new())
    }

    pub(super) fn select(&mut self, domain: &str) -> Served {
        let found = self.config.domains.iter().any(|d| d == domain);
        let selection = if found {
            DomainSelectionT::DomainSelected(Box::new(DomainSelectedT {
                domain: domain.to_string(),
            }))
        } else {
            DomainSelectionT::DomainNotFound(Box::new(DomainNotFoundT {
                domain: domain.to_string(),
            }))
        };
        let summary = format!("{}({domain})", name_of(selection.domain_selection_type()));
        Served::new(
            ReplyBodyT::DomainSelectionOutcome(Box::new(DomainSelectionOutcomeT { selection })),
            summary,
        )
    }
}

pub(super) fn suggest(s: &SuggestRequestT) -> Served {
    let cursor = s.cursor as usize;
    if cursor > s.input.len() || !s.input.is_char_boundary(cursor) {
        return rejected(
            RequestRejection::InvalidRequest,
            Some("cursor"),
            "the cursor is not a character boundary of the input",
        );
    }
    let before = &s.input[..cursor];
    let start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_')
        .last()
        .map_or(cursor, |(i, _)| i);
    let prefix = before[start..].to_ascii_uppercase();
    let suggestions: Vec<SuggestionT> = KEYWORDS
        .iter()
        .filter(|k| k.starts_with(&prefix))
        .take(usize::from(s.page_size.max(1)))
        .map(|k| SuggestionT {
            value: k.to_string(),
            kind: Some(SuggestionKind::Text),
            edit: Box::new(TextEditT {
                start: start as u32,
                end: cursor as u32,
                replacement: k.to_string(),
            }),
        })
        .collect();
    let summary = format!("SuggestOutcome(Ready, {})", suggestions.len());
    Served::new(
        ReplyBodyT::SuggestOutcome(Box::new(SuggestOutcomeT {
            status: Some(SuggestionStatus::Ready),
            suggestions,
            continuation: None,
        })),
        summary,
    )
    .stage(CancellationStage::BeforeAdmission)
}

pub(super) fn choices(c: &ChoiceLookupRequestT) -> Served {
    let choice = |value: ChoiceValueT, label: &str| ChoiceT {
        value,
        presentation: Box::new(ChoicePresentationT {
            label: label.to_string(),
            detail: None,
            group: None,
        }),
    };
    let all: Vec<ChoiceT> = match c.target {
        Some(ChoiceTarget::DomainPace) => [
            (DomainPaceChoice::Unpaced, "UNPACED"),
            (DomainPaceChoice::Paced, "PACED"),
        ]
        .into_iter()
        .map(|(v, l)| {
            choice(
                ChoiceValueT::DomainPaceVariant(Box::new(DomainPaceVariantT { value: Some(v) })),
                l,
            )
        })
        .collect(),
        Some(ChoiceTarget::PlacementPolicy) => [
            (
                PlacementPolicyChoice::RequireColocation,
                "REQUIRE COLOCATION",
            ),
            (PlacementPolicyChoice::PreferColocation, "PREFER COLOCATION"),
            (PlacementPolicyChoice::Neutral, "NEUTRAL"),
            (
                PlacementPolicyChoice::SuggestSeparation,
                "SUGGEST SEPARATION",
            ),
        ]
        .into_iter()
        .map(|(v, l)| {
            choice(
                ChoiceValueT::PlacementPolicyVariant(Box::new(PlacementPolicyVariantT {
                    value: Some(v),
                })),
                l,
            )
        })
        .collect(),
        _ => Vec::new(),
    };
    let search = c.search.to_ascii_uppercase();
    let choices: Vec<ChoiceT> = all
        .into_iter()
        .filter(|ch| ch.presentation.label.contains(&search))
        .take(usize::from(c.page_size.max(1)))
        .collect();
    let summary = format!("ChoiceOutcome(Ready, {})", choices.len());
    Served::new(
        ReplyBodyT::ChoiceOutcome(Box::new(ChoiceOutcomeT {
            status: Some(ChoiceStatus::Ready),
            choices,
            page_cursor: None,
        })),
        summary,
    )
    .stage(CancellationStage::BeforeAdmission)
}
