impl ReportFields for SourceSpan {
fn report(&self, r: &mut Reporter) {
r.leaf("start", &self.start());
r.leaf("end", &self.end());
}
}
impl ReportFields for OperationRange {
fn report(&self, r: &mut Reporter) {
r.leaf("first", &self.first());
r.leaf("last", &self.last());
}
}
impl ReportFields for Fingerprint<'_> {
fn report(&self, r: &mut Reporter) {
r.bytes("bytes", Some(self.bytes()).map(|v| v.bytes()));
}
}
impl ReportFields for Diagnostic<'_> {
fn report(&self, r: &mut Reporter) {
r.text("message", Some(self.message()));
r.child("span", self.span().as_ref());
}
}
impl ReportFields for LeaderEndpoints<'_> {
fn report(&self, r: &mut Reporter) {
r.text("node", Some(self.node()));
r.text("grpc_uri", self.grpc_uri());
r.text("web_console_uri", self.web_console_uri());
}
}
impl ReportFields for LeaderRedirect<'_> {
fn report(&self, r: &mut Reporter) {
r.child("leader", self.leader().as_ref());
}
}
impl ReportFields for RequestFailed<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for NodeRef<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("kind", self.kind().map(|v| (v.0 as u64, v.variant_name())));
r.text("name", Some(self.name()));
}
}
impl ReportFields for DomainPaceVariant<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("value", self.value().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for PlacementPolicyVariant<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("value", self.value().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for DomainChoiceReference<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for ResourceChoiceReference<'_> {
fn report(&self, r: &mut Reporter) {
r.text("resource", Some(self.resource()));
}
}
impl ReportFields for ModelChoiceReference<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
}
}
impl ReportFields for FieldChoiceReference<'_> {
fn report(&self, r: &mut Reporter) {
r.text("field", Some(self.field()));
}
}
impl ReportFields for ChoiceSelection<'_> {
fn report(&self, r: &mut Reporter) {
match self.value_type() {
ChoiceValue::DomainPaceVariant => r.variant("value", "DomainPaceVariant", self.value_as_domain_pace_variant().as_ref()),
ChoiceValue::PlacementPolicyVariant => r.variant("value", "PlacementPolicyVariant", self.value_as_placement_policy_variant().as_ref()),
ChoiceValue::DomainChoiceReference => r.variant("value", "DomainChoiceReference", self.value_as_domain_choice_reference().as_ref()),
ChoiceValue::ResourceChoiceReference => r.variant("value", "ResourceChoiceReference", self.value_as_resource_choice_reference().as_ref()),
ChoiceValue::ModelChoiceReference => r.variant("value", "ModelChoiceReference", self.value_as_model_choice_reference().as_ref()),
ChoiceValue::FieldChoiceReference => r.variant("value", "FieldChoiceReference", self.value_as_field_choice_reference().as_ref()),
ChoiceValue::ResourceVersionNumber => r.variant("value", "ResourceVersionNumber", self.value_as_resource_version_number().as_ref()),
ChoiceValue::LatestResourceVersion => r.variant("value", "LatestResourceVersion", self.value_as_latest_resource_version().as_ref()),
other => r.unknown_variant("value", other.0),
}
}
}
impl ReportFields for ChoicePresentation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("label", Some(self.label()));
r.text("detail", self.detail());
r.text("group", self.group());
}
}
impl ReportFields for Choice<'_> {
fn report(&self, r: &mut Reporter) {
match self.value_type() {
ChoiceValue::DomainPaceVariant => r.variant("value", "DomainPaceVariant", self.value_as_domain_pace_variant().as_ref()),
ChoiceValue::PlacementPolicyVariant => r.variant("value", "PlacementPolicyVariant", self.value_as_placement_policy_variant().as_ref()),
ChoiceValue::DomainChoiceReference => r.variant("value", "DomainChoiceReference", self.value_as_domain_choice_reference().as_ref()),
ChoiceValue::ResourceChoiceReference => r.variant("value", "ResourceChoiceReference", self.value_as_resource_choice_reference().as_ref()),
ChoiceValue::ModelChoiceReference => r.variant("value", "ModelChoiceReference", self.value_as_model_choice_reference().as_ref()),
ChoiceValue::FieldChoiceReference => r.variant("value", "FieldChoiceReference", self.value_as_field_choice_reference().as_ref()),
ChoiceValue::ResourceVersionNumber => r.variant("value", "ResourceVersionNumber", self.value_as_resource_version_number().as_ref()),
ChoiceValue::LatestResourceVersion => r.variant("value", "LatestResourceVersion", self.value_as_latest_resource_version().as_ref()),
other => r.unknown_variant("value", other.0),
}
r.child("presentation", Some(&self.presentation()));
}
}
impl ReportFields for TransactionPreviewIdentity<'_> {
fn report(&self, r: &mut Reporter) {
r.text("transaction_id", Some(self.transaction_id()));
r.leaf("position", &self.position());
r.child("planning_basis", Some(&self.planning_basis()));
}
}
impl ReportFields for TransactionOperationAdmission<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("operation", &self.operation());
r.child("preview", Some(&self.preview()));
}
}
impl ReportFields for TransactionOpen<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for TransactionCommitting<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for TransactionCommitted<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for TransactionFailed<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("failing_operation", &self.failing_operation());
r.text("error", Some(self.error()));
}
}
impl ReportFields for TransactionReverted<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for TransactionExpired<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for TransactionStatus<'_> {
fn report(&self, r: &mut Reporter) {
r.text("transaction_id", Some(self.transaction_id()));
r.text("domain", Some(self.domain()));
match self.state_type() {
TransactionState::TransactionOpen => r.variant("state", "TransactionOpen", self.state_as_transaction_open().as_ref()),
TransactionState::TransactionCommitting => r.variant("state", "TransactionCommitting", self.state_as_transaction_committing().as_ref()),
TransactionState::TransactionCommitted => r.variant("state", "TransactionCommitted", self.state_as_transaction_committed().as_ref()),
TransactionState::TransactionFailed => r.variant("state", "TransactionFailed", self.state_as_transaction_failed().as_ref()),
TransactionState::TransactionReverted => r.variant("state", "TransactionReverted", self.state_as_transaction_reverted().as_ref()),
TransactionState::TransactionExpired => r.variant("state", "TransactionExpired", self.state_as_transaction_expired().as_ref()),
other => r.unknown_variant("state", other.0),
}
r.leaf("accepted_operations", &self.accepted_operations());
r.leaf("applied_operations", &self.applied_operations());
}
}
impl ReportFields for AttachedTransaction<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for TransactionById<'_> {
fn report(&self, r: &mut Reporter) {
r.text("transaction_id", Some(self.transaction_id()));
}
}
impl ReportFields for ImpactDiagnostic<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("kind", self.kind().map(|v| (v.0 as u64, v.variant_name())));
r.optional("operation", self.operation());
r.text("message", Some(self.message()));
}
}
impl ReportFields for ImpactComplete<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ImpactIncomplete<'_> {
fn report(&self, r: &mut Reporter) {
r.children("diagnostics", Some(self.diagnostics()).map(|v| v.iter()));
}
}
impl ReportFields for ConfigurationCoverage<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for AllBranchCoverage<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for UnbranchedCoverage<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for DeclaredBranchCoverage<'_> {
fn report(&self, r: &mut Reporter) {
r.text("branch", Some(self.branch()));
}
}
impl ReportFields for SelectedBranchCoverage<'_> {
fn report(&self, r: &mut Reporter) {
r.text("branch", Some(self.branch()));
r.children("keys", Some(self.keys()).map(|v| v.iter()));
}
}
impl ReportFields for NodeCoverage<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
match self.branches_type() {
NodeBranchCoverage::ConfigurationCoverage => r.variant("branches", "ConfigurationCoverage", self.branches_as_configuration_coverage().as_ref()),
NodeBranchCoverage::AllBranchCoverage => r.variant("branches", "AllBranchCoverage", self.branches_as_all_branch_coverage().as_ref()),
NodeBranchCoverage::UnbranchedCoverage => r.variant("branches", "UnbranchedCoverage", self.branches_as_unbranched_coverage().as_ref()),
NodeBranchCoverage::DeclaredBranchCoverage => r.variant("branches", "DeclaredBranchCoverage", self.branches_as_declared_branch_coverage().as_ref()),
NodeBranchCoverage::SelectedBranchCoverage => r.variant("branches", "SelectedBranchCoverage", self.branches_as_selected_branch_coverage().as_ref()),
other => r.unknown_variant("branches", other.0),
}
}
}
impl ReportFields for AttributedNode<'_> {
fn report(&self, r: &mut Reporter) {
r.child("coverage", Some(&self.coverage()));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for GateBoundary<'_> {
fn report(&self, r: &mut Reporter) {
r.text("relay", Some(self.relay()));
match self.branches_type() {
BranchCoverage::AllBranchCoverage => r.variant("branches", "AllBranchCoverage", self.branches_as_all_branch_coverage().as_ref()),
BranchCoverage::UnbranchedCoverage => r.variant("branches", "UnbranchedCoverage", self.branches_as_unbranched_coverage().as_ref()),
BranchCoverage::DeclaredBranchCoverage => r.variant("branches", "DeclaredBranchCoverage", self.branches_as_declared_branch_coverage().as_ref()),
BranchCoverage::SelectedBranchCoverage => r.variant("branches", "SelectedBranchCoverage", self.branches_as_selected_branch_coverage().as_ref()),
other => r.unknown_variant("branches", other.0),
}
}
}
impl ReportFields for AttributedGateBoundary<'_> {
fn report(&self, r: &mut Reporter) {
r.child("boundary", Some(&self.boundary()));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for QuiesceSubgraph<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.children("nodes", Some(self.nodes()).map(|v| v.iter()));
r.children("gate_boundaries", Some(self.gate_boundaries()).map(|v| v.iter()));
}
}
impl ReportFields for NoPause<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for SubgraphPause<'_> {
fn report(&self, r: &mut Reporter) {
r.child("scope", Some(&self.scope()));
}
}
impl ReportFields for DomainPause<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for CreateConfigurationOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.child("node", Some(&self.node()));
}
}
impl ReportFields for AlterConfigurationOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.child("node", Some(&self.node()));
}
}
impl ReportFields for DropConfigurationOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.child("node", Some(&self.node()));
}
}
impl ReportFields for AlterDomainOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for StartDomainOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for StopDomainOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for CreateResourceOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("resource", Some(self.resource()));
}
}
impl ReportFields for ResourceVersionNumber<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("version", &self.version());
}
}
impl ReportFields for LatestResourceVersion<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for RebindResourceOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("resource", Some(self.resource()));
match self.requested_type() {
RequestedResourceVersion::ResourceVersionNumber => r.variant("requested", "ResourceVersionNumber", self.requested_as_resource_version_number().as_ref()),
RequestedResourceVersion::LatestResourceVersion => r.variant("requested", "LatestResourceVersion", self.requested_as_latest_resource_version().as_ref()),
other => r.unknown_variant("requested", other.0),
}
r.leaf("version", &self.version());
}
}
impl ReportFields for ResetWasmStateOperation<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("processor", Some(self.processor()));
}
}
impl ReportFields for ConfigurationReason<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.optional_enum("aspect", self.aspect().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for DomainPlacementReason<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for DomainStartReason<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for DomainStopReason<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ResourceCatalogReason<'_> {
fn report(&self, r: &mut Reporter) {
r.text("resource", Some(self.resource()));
}
}
impl ReportFields for ResourceRebindingReason<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.text("resource", Some(self.resource()));
r.leaf("previous_version", &self.previous_version());
r.leaf("target_version", &self.target_version());
}
}
impl ReportFields for WasmStateResetReason<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
}
}
impl ReportFields for OperationReason<'_> {
fn report(&self, r: &mut Reporter) {
match self.reason_type() {
OperationImpactReason::ConfigurationReason => r.variant("reason", "ConfigurationReason", self.reason_as_configuration_reason().as_ref()),
OperationImpactReason::DomainPlacementReason => r.variant("reason", "DomainPlacementReason", self.reason_as_domain_placement_reason().as_ref()),
OperationImpactReason::DomainStartReason => r.variant("reason", "DomainStartReason", self.reason_as_domain_start_reason().as_ref()),
OperationImpactReason::DomainStopReason => r.variant("reason", "DomainStopReason", self.reason_as_domain_stop_reason().as_ref()),
OperationImpactReason::ResourceCatalogReason => r.variant("reason", "ResourceCatalogReason", self.reason_as_resource_catalog_reason().as_ref()),
OperationImpactReason::ResourceRebindingReason => r.variant("reason", "ResourceRebindingReason", self.reason_as_resource_rebinding_reason().as_ref()),
OperationImpactReason::WasmStateResetReason => r.variant("reason", "WasmStateResetReason", self.reason_as_wasm_state_reset_reason().as_ref()),
other => r.unknown_variant("reason", other.0),
}
}
}
impl ReportFields for TopologyEdge<'_> {
fn report(&self, r: &mut Reporter) {
r.child("source", Some(&self.source()));
r.child("target", Some(&self.target()));
r.optional_enum("kind", self.kind().map(|v| (v.0 as u64, v.variant_name())));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for ImpactTopology<'_> {
fn report(&self, r: &mut Reporter) {
r.children("nodes", Some(self.nodes()).map(|v| v.iter()));
r.children("edges", Some(self.edges()).map(|v| v.iter()));
}
}
impl ReportFields for AffectedTopology<'_> {
fn report(&self, r: &mut Reporter) {
r.child("before", Some(&self.before()));
r.child("after", Some(&self.after()));
}
}
impl ReportFields for ConfigurationCreated<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
}
}
impl ReportFields for ConfigurationChanged<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
}
}
impl ReportFields for ConfigurationDropped<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
}
}
impl ReportFields for ConfigurationImpact<'_> {
fn report(&self, r: &mut Reporter) {
match self.transition_type() {
ConfigurationTransition::ConfigurationCreated => r.variant("transition", "ConfigurationCreated", self.transition_as_configuration_created().as_ref()),
ConfigurationTransition::ConfigurationChanged => r.variant("transition", "ConfigurationChanged", self.transition_as_configuration_changed().as_ref()),
ConfigurationTransition::ConfigurationDropped => r.variant("transition", "ConfigurationDropped", self.transition_as_configuration_dropped().as_ref()),
other => r.unknown_variant("transition", other.0),
}
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for ResourceCatalogImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.text("resource", Some(self.resource()));
r.optional_enum("action", self.action().map(|v| (v.0 as u64, v.variant_name())));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for ResourceBindingImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.text("resource", Some(self.resource()));
match self.requested_type() {
RequestedResourceVersion::ResourceVersionNumber => r.variant("requested", "ResourceVersionNumber", self.requested_as_resource_version_number().as_ref()),
RequestedResourceVersion::LatestResourceVersion => r.variant("requested", "LatestResourceVersion", self.requested_as_latest_resource_version().as_ref()),
other => r.unknown_variant("requested", other.0),
}
r.leaf("version", &self.version());
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for DomainLifecycleImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.optional_enum("action", self.action().map(|v| (v.0 as u64, v.variant_name())));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for OwnershipMoveImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.text("source", Some(self.source()));
r.text("destination", Some(self.destination()));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for ActivationImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.optional_enum("action", self.action().map(|v| (v.0 as u64, v.variant_name())));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for RebuildImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.optional_enum("reason", self.reason().map(|v| (v.0 as u64, v.variant_name())));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for StateResetImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.optional_enum("state", self.state().map(|v| (v.0 as u64, v.variant_name())));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for ForceFlushImpact<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.scalars("operations", Some(self.operations()).map(|v| v.iter()));
}
}
impl ReportFields for ImpactEffects<'_> {
fn report(&self, r: &mut Reporter) {
r.children("changed_configuration", Some(self.changed_configuration()).map(|v| v.iter()));
r.child("topology", Some(&self.topology()));
r.children("ownership_moves", Some(self.ownership_moves()).map(|v| v.iter()));
r.children("lifecycle", Some(self.lifecycle()).map(|v| v.iter()));
r.children("activations", Some(self.activations()).map(|v| v.iter()));
r.children("rebuilds", Some(self.rebuilds()).map(|v| v.iter()));
r.children("state_resets", Some(self.state_resets()).map(|v| v.iter()));
r.children("force_flushes", Some(self.force_flushes()).map(|v| v.iter()));
r.children("resource_catalog", Some(self.resource_catalog()).map(|v| v.iter()));
r.children("resource_bindings", Some(self.resource_bindings()).map(|v| v.iter()));
}
}
impl ReportFields for PlannedStepImpact<'_> {
fn report(&self, r: &mut Reporter) {
match self.completeness_type() {
ImpactCompleteness::ImpactComplete => r.variant("completeness", "ImpactComplete", self.completeness_as_impact_complete().as_ref()),
ImpactCompleteness::ImpactIncomplete => r.variant("completeness", "ImpactIncomplete", self.completeness_as_impact_incomplete().as_ref()),
other => r.unknown_variant("completeness", other.0),
}
match self.pause_type() {
PauseRequirement::NoPause => r.variant("pause", "NoPause", self.pause_as_no_pause().as_ref()),
PauseRequirement::SubgraphPause => r.variant("pause", "SubgraphPause", self.pause_as_subgraph_pause().as_ref()),
PauseRequirement::DomainPause => r.variant("pause", "DomainPause", self.pause_as_domain_pause().as_ref()),
other => r.unknown_variant("pause", other.0),
}
r.child("effects", Some(&self.effects()));
}
}
impl ReportFields for QuiescenceRequested<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for QuiescenceConfirmed<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for QuiescenceFailed<'_> {
fn report(&self, r: &mut Reporter) {
r.child("diagnostic", Some(&self.diagnostic()));
}
}
impl ReportFields for QuiescenceUncertain<'_> {
fn report(&self, r: &mut Reporter) {
r.child("diagnostic", Some(&self.diagnostic()));
}
}
impl ReportFields for QuiescenceReleased<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for QuiescenceOutcomeEntry<'_> {
fn report(&self, r: &mut Reporter) {
match self.outcome_type() {
QuiescenceOutcome::QuiescenceRequested => r.variant("outcome", "QuiescenceRequested", self.outcome_as_quiescence_requested().as_ref()),
QuiescenceOutcome::QuiescenceConfirmed => r.variant("outcome", "QuiescenceConfirmed", self.outcome_as_quiescence_confirmed().as_ref()),
QuiescenceOutcome::QuiescenceFailed => r.variant("outcome", "QuiescenceFailed", self.outcome_as_quiescence_failed().as_ref()),
QuiescenceOutcome::QuiescenceUncertain => r.variant("outcome", "QuiescenceUncertain", self.outcome_as_quiescence_uncertain().as_ref()),
QuiescenceOutcome::QuiescenceReleased => r.variant("outcome", "QuiescenceReleased", self.outcome_as_quiescence_released().as_ref()),
other => r.unknown_variant("outcome", other.0),
}
}
}
impl ReportFields for ActualQuiescence<'_> {
fn report(&self, r: &mut Reporter) {
match self.requirement_type() {
PauseRequirement::NoPause => r.variant("requirement", "NoPause", self.requirement_as_no_pause().as_ref()),
PauseRequirement::SubgraphPause => r.variant("requirement", "SubgraphPause", self.requirement_as_subgraph_pause().as_ref()),
PauseRequirement::DomainPause => r.variant("requirement", "DomainPause", self.requirement_as_domain_pause().as_ref()),
other => r.unknown_variant("requirement", other.0),
}
r.children("outcomes", Some(self.outcomes()).map(|v| v.iter()));
}
}
impl ReportFields for StepUnattempted<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for StepApplying<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for StepApplied<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for StepFailed<'_> {
fn report(&self, r: &mut Reporter) {
r.child("diagnostic", Some(&self.diagnostic()));
}
}
impl ReportFields for ActualStepImpact<'_> {
fn report(&self, r: &mut Reporter) {
match self.outcome_type() {
ExecutionStepOutcome::StepUnattempted => r.variant("outcome", "StepUnattempted", self.outcome_as_step_unattempted().as_ref()),
ExecutionStepOutcome::StepApplying => r.variant("outcome", "StepApplying", self.outcome_as_step_applying().as_ref()),
ExecutionStepOutcome::StepApplied => r.variant("outcome", "StepApplied", self.outcome_as_step_applied().as_ref()),
ExecutionStepOutcome::StepFailed => r.variant("outcome", "StepFailed", self.outcome_as_step_failed().as_ref()),
other => r.unknown_variant("outcome", other.0),
}
r.children("quiescence", Some(self.quiescence()).map(|v| v.iter()));
r.child("effects", Some(&self.effects()));
}
}
impl ReportFields for ExecutionStepReport<'_> {
fn report(&self, r: &mut Reporter) {
r.child("operations", Some(&self.operations()));
r.child("planned", Some(&self.planned()));
r.child("actual", Some(&self.actual()));
}
}
impl ReportFields for OperationReport<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("number", &self.number());
match self.operation_type() {
TransactionOperation::CreateConfigurationOperation => r.variant("operation", "CreateConfigurationOperation", self.operation_as_create_configuration_operation().as_ref()),
TransactionOperation::AlterConfigurationOperation => r.variant("operation", "AlterConfigurationOperation", self.operation_as_alter_configuration_operation().as_ref()),
TransactionOperation::DropConfigurationOperation => r.variant("operation", "DropConfigurationOperation", self.operation_as_drop_configuration_operation().as_ref()),
TransactionOperation::AlterDomainOperation => r.variant("operation", "AlterDomainOperation", self.operation_as_alter_domain_operation().as_ref()),
TransactionOperation::StartDomainOperation => r.variant("operation", "StartDomainOperation", self.operation_as_start_domain_operation().as_ref()),
TransactionOperation::StopDomainOperation => r.variant("operation", "StopDomainOperation", self.operation_as_stop_domain_operation().as_ref()),
TransactionOperation::CreateResourceOperation => r.variant("operation", "CreateResourceOperation", self.operation_as_create_resource_operation().as_ref()),
TransactionOperation::RebindResourceOperation => r.variant("operation", "RebindResourceOperation", self.operation_as_rebind_resource_operation().as_ref()),
TransactionOperation::ResetWasmStateOperation => r.variant("operation", "ResetWasmStateOperation", self.operation_as_reset_wasm_state_operation().as_ref()),
other => r.unknown_variant("operation", other.0),
}
r.child("execution_step", Some(&self.execution_step()));
match self.completeness_type() {
ImpactCompleteness::ImpactComplete => r.variant("completeness", "ImpactComplete", self.completeness_as_impact_complete().as_ref()),
ImpactCompleteness::ImpactIncomplete => r.variant("completeness", "ImpactIncomplete", self.completeness_as_impact_incomplete().as_ref()),
other => r.unknown_variant("completeness", other.0),
}
r.children("reasons", Some(self.reasons()).map(|v| v.iter()));
r.child("contribution", Some(&self.contribution()));
}
}
impl ReportFields for TransactionImpactReport<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.leaf("position", &self.position());
r.child("planning_basis", Some(&self.planning_basis()));
match self.completeness_type() {
ImpactCompleteness::ImpactComplete => r.variant("completeness", "ImpactComplete", self.completeness_as_impact_complete().as_ref()),
ImpactCompleteness::ImpactIncomplete => r.variant("completeness", "ImpactIncomplete", self.completeness_as_impact_incomplete().as_ref()),
other => r.unknown_variant("completeness", other.0),
}
r.children("operations", Some(self.operations()).map(|v| v.iter()));
r.children("execution_steps", Some(self.execution_steps()).map(|v| v.iter()));
}
}
impl ReportFields for ResourceDirectory<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ResourceFile<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("size", &self.size());
r.text("checksum", Some(self.checksum()));
}
}
impl ReportFields for ResourceEntry<'_> {
fn report(&self, r: &mut Reporter) {
r.text("path", Some(self.path()));
match self.content_type() {
ResourceEntryContent::ResourceDirectory => r.variant("content", "ResourceDirectory", self.content_as_resource_directory().as_ref()),
ResourceEntryContent::ResourceFile => r.variant("content", "ResourceFile", self.content_as_resource_file().as_ref()),
other => r.unknown_variant("content", other.0),
}
}
}
impl ReportFields for ResourceEntriesListed<'_> {
fn report(&self, r: &mut Reporter) {
r.children("entries", Some(self.entries()).map(|v| v.iter()));
}
}
impl ReportFields for ResourceEntriesUnavailable<'_> {
fn report(&self, r: &mut Reporter) {
r.text("reason", Some(self.reason()));
}
}
impl ReportFields for ResourceVersionDescription<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("version", &self.version());
r.text("root_checksum", Some(self.root_checksum()));
r.text("manifest_checksum", Some(self.manifest_checksum()));
r.leaf("file_count", &self.file_count());
r.leaf("total_bytes", &self.total_bytes());
r.leaf("created_at", &self.created_at());
r.text("created_by_node", Some(self.created_by_node()));
match self.entries_type() {
ResourceVersionEntries::ResourceEntriesListed => r.variant("entries", "ResourceEntriesListed", self.entries_as_resource_entries_listed().as_ref()),
ResourceVersionEntries::ResourceEntriesUnavailable => r.variant("entries", "ResourceEntriesUnavailable", self.entries_as_resource_entries_unavailable().as_ref()),
other => r.unknown_variant("entries", other.0),
}
}
}
impl ReportFields for ResourceUsage<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
r.leaf("version", &self.version());
}
}
impl ReportFields for ResourceDescription<'_> {
fn report(&self, r: &mut Reporter) {
r.text("resource", Some(self.resource()));
r.optional("latest_version", self.latest_version());
r.children("versions", Some(self.versions()).map(|v| v.iter()));
r.children("usages", Some(self.usages()).map(|v| v.iter()));
}
}
impl ReportFields for ScalarFieldType<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("scalar", self.scalar().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for FixedListFieldType<'_> {
fn report(&self, r: &mut Reporter) {
r.child("element", Some(&self.element()));
r.leaf("length", &self.length());
}
}
impl ReportFields for ListFieldType<'_> {
fn report(&self, r: &mut Reporter) {
r.child("element", Some(&self.element()));
}
}
impl ReportFields for FieldType<'_> {
fn report(&self, r: &mut Reporter) {
match self.shape_type() {
FieldTypeShape::ScalarFieldType => r.variant("shape", "ScalarFieldType", self.shape_as_scalar_field_type().as_ref()),
FieldTypeShape::FixedListFieldType => r.variant("shape", "FixedListFieldType", self.shape_as_fixed_list_field_type().as_ref()),
FieldTypeShape::ListFieldType => r.variant("shape", "ListFieldType", self.shape_as_list_field_type().as_ref()),
other => r.unknown_variant("shape", other.0),
}
}
}
impl ReportFields for RowField<'_> {
fn report(&self, r: &mut Reporter) {
r.text("name", Some(self.name()));
r.child("field_type", Some(&self.field_type()));
r.leaf("nullable", &self.nullable());
r.leaf("sensitive", &self.sensitive());
}
}
impl ReportFields for RowBranch<'_> {
fn report(&self, r: &mut Reporter) {
r.text("branch", Some(self.branch()));
r.children("fields", Some(self.fields()).map(|v| v.iter()));
}
}
impl ReportFields for RowSchema<'_> {
fn report(&self, r: &mut Reporter) {
r.children("fields", Some(self.fields()).map(|v| v.iter()));
r.child("branch", self.branch().as_ref());
}
}
impl ReportFields for NullCell<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for RedactedCell<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for U8Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for I8Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for U16Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for I16Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for U32Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for I32Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for U64Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for I64Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for F32Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.optional("value", self.value());
}
}
impl ReportFields for F64Cell<'_> {
fn report(&self, r: &mut Reporter) {
r.optional("value", self.value());
}
}
impl ReportFields for BoolCell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("value", &self.value());
}
}
impl ReportFields for StringCell<'_> {
fn report(&self, r: &mut Reporter) {
r.text("value", Some(self.value()));
}
}
impl ReportFields for BytesCell<'_> {
fn report(&self, r: &mut Reporter) {
r.bytes("value", Some(self.value()).map(|v| v.bytes()));
}
}
impl ReportFields for DatetimeCell<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("unix_nanos", &self.unix_nanos());
}
}
impl ReportFields for ListCell<'_> {
fn report(&self, r: &mut Reporter) {
r.children("elements", Some(self.elements()).map(|v| v.iter()));
}
}
impl ReportFields for Cell<'_> {
fn report(&self, r: &mut Reporter) {
match self.value_type() {
CellValue::NullCell => r.variant("value", "NullCell", self.value_as_null_cell().as_ref()),
CellValue::RedactedCell => r.variant("value", "RedactedCell", self.value_as_redacted_cell().as_ref()),
CellValue::U8Cell => r.variant("value", "U8Cell", self.value_as_u8_cell().as_ref()),
CellValue::I8Cell => r.variant("value", "I8Cell", self.value_as_i8_cell().as_ref()),
CellValue::U16Cell => r.variant("value", "U16Cell", self.value_as_u16_cell().as_ref()),
CellValue::I16Cell => r.variant("value", "I16Cell", self.value_as_i16_cell().as_ref()),
CellValue::U32Cell => r.variant("value", "U32Cell", self.value_as_u32_cell().as_ref()),
CellValue::I32Cell => r.variant("value", "I32Cell", self.value_as_i32_cell().as_ref()),
CellValue::U64Cell => r.variant("value", "U64Cell", self.value_as_u64_cell().as_ref()),
CellValue::I64Cell => r.variant("value", "I64Cell", self.value_as_i64_cell().as_ref()),
CellValue::F32Cell => r.variant("value", "F32Cell", self.value_as_f32_cell().as_ref()),
CellValue::F64Cell => r.variant("value", "F64Cell", self.value_as_f64_cell().as_ref()),
CellValue::BoolCell => r.variant("value", "BoolCell", self.value_as_bool_cell().as_ref()),
CellValue::StringCell => r.variant("value", "StringCell", self.value_as_string_cell().as_ref()),
CellValue::DatetimeCell => r.variant("value", "DatetimeCell", self.value_as_datetime_cell().as_ref()),
CellValue::ListCell => r.variant("value", "ListCell", self.value_as_list_cell().as_ref()),
CellValue::BytesCell => r.variant("value", "BytesCell", self.value_as_bytes_cell().as_ref()),
other => r.unknown_variant("value", other.0),
}
}
}
impl ReportFields for Row<'_> {
fn report(&self, r: &mut Reporter) {
r.children("cells", Some(self.cells()).map(|v| v.iter()));
}
}
impl ReportFields for BranchKey<'_> {
fn report(&self, r: &mut Reporter) {
r.children("cells", Some(self.cells()).map(|v| v.iter()));
}
}
impl ReportFields for RowBatch<'_> {
fn report(&self, r: &mut Reporter) {
r.child("branch_key", self.branch_key().as_ref());
r.children("rows", Some(self.rows()).map(|v| v.iter()));
}
}
impl ReportFields for StoppedDomainClock<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for UninstalledDomainClock<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for UnpacedDomainClock<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for PacedDomainClock<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("period_nanos", &self.period_nanos());
r.leaf("skew_nanos", &self.skew_nanos());
r.leaf("logical_origin_unix_nanos", &self.logical_origin_unix_nanos());
r.leaf("utc_anchor_unix_nanos", &self.utc_anchor_unix_nanos());
r.optional("time_rate", self.time_rate());
}
}
impl ReportFields for DomainClockObservation<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("generation", &self.generation());
match self.state_type() {
DomainClockObservedState::StoppedDomainClock => r.variant("state", "StoppedDomainClock", self.state_as_stopped_domain_clock().as_ref()),
DomainClockObservedState::UninstalledDomainClock => r.variant("state", "UninstalledDomainClock", self.state_as_uninstalled_domain_clock().as_ref()),
DomainClockObservedState::UnpacedDomainClock => r.variant("state", "UnpacedDomainClock", self.state_as_unpaced_domain_clock().as_ref()),
DomainClockObservedState::PacedDomainClock => r.variant("state", "PacedDomainClock", self.state_as_paced_domain_clock().as_ref()),
other => r.unknown_variant("state", other.0),
}
}
}
impl ReportFields for SequentialProducerWindow<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ParallelProducerWindow<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("max", &self.max());
}
}
impl ReportFields for BackupCut<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("kind", self.kind().map(|v| (v.0 as u64, v.variant_name())));
r.optional("engaged_at", self.engaged_at());
r.optional("released_at", self.released_at());
r.leaf("buffered_records", &self.buffered_records());
r.leaf("buffered_bytes", &self.buffered_bytes());
r.leaf("dropped_records", &self.dropped_records());
r.leaf("rejected_records", &self.rejected_records());
}
}
impl ReportFields for BackupDomainSummary<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.leaf("revision", &self.revision());
r.child("cut", Some(&self.cut()));
r.leaf("sections", &self.sections());
r.leaf("section_bytes", &self.section_bytes());
}
}
impl ReportFields for BackupArchiveSummary<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("total_bytes", &self.total_bytes());
r.child("digest", Some(&self.digest()));
r.leaf("captured_at", &self.captured_at());
r.leaf("retained_until", &self.retained_until());
r.optional_enum("resources", self.resources().map(|v| (v.0 as u64, v.variant_name())));
r.optional("users", self.users());
r.children("domains", Some(self.domains()).map(|v| v.iter()));
}
}
impl ReportFields for RestoreStepReport<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("kind", self.kind().map(|v| (v.0 as u64, v.variant_name())));
r.text("domain", self.domain());
r.optional_enum("outcome", self.outcome().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for RestoredUsers<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("created", &self.created());
r.leaf("skipped", &self.skipped());
r.leaf("replaced", &self.replaced());
}
}
impl ReportFields for RestoredDomain<'_> {
fn report(&self, r: &mut Reporter) {
r.text("source", Some(self.source()));
r.text("domain", Some(self.domain()));
r.leaf("resource_versions", &self.resource_versions());
r.leaf("models", &self.models());
r.child("planned_models", self.planned_models().as_ref());
}
}
impl ReportFields for RestoreReport<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("mode", self.mode().map(|v| (v.0 as u64, v.variant_name())));
r.leaf("total_bytes", &self.total_bytes());
r.child("digest", Some(&self.digest()));
r.leaf("captured_at", &self.captured_at());
r.child("users", self.users().as_ref());
r.children("domains", Some(self.domains()).map(|v| v.iter()));
r.children("steps", Some(self.steps()).map(|v| v.iter()));
}
}
impl ReportFields for CommandRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("query", Some(self.query()));
r.text("domain", self.domain());
r.text("execution_reference", Some(self.execution_reference()));
r.optional("expected_transaction_position", self.expected_transaction_position());
r.child("expected_preview", self.expected_preview().as_ref());
}
}
impl ReportFields for SuggestRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("input", Some(self.input()));
r.leaf("cursor", &self.cursor());
r.text("domain", self.domain());
r.leaf("page_size", &self.page_size());
r.text("continuation", self.continuation());
}
}
impl ReportFields for ChoiceLookupRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("target", self.target().map(|v| (v.0 as u64, v.variant_name())));
r.children("dependencies", Some(self.dependencies()).map(|v| v.iter()));
r.text("search", Some(self.search()));
r.leaf("page_size", &self.page_size());
r.text("page_cursor", self.page_cursor());
}
}
impl ReportFields for ListDomainsRequest<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for SelectDomainRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for AttachTransactionRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("transaction_id", Some(self.transaction_id()));
}
}
impl ReportFields for InspectTransactionRequest<'_> {
fn report(&self, r: &mut Reporter) {
match self.target_type() {
InspectionTarget::AttachedTransaction => r.variant("target", "AttachedTransaction", self.target_as_attached_transaction().as_ref()),
InspectionTarget::TransactionById => r.variant("target", "TransactionById", self.target_as_transaction_by_id().as_ref()),
other => r.unknown_variant("target", other.0),
}
r.optional("operation", self.operation());
}
}
impl ReportFields for SubscribeRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("statement", Some(self.statement()));
r.optional_enum("subscription_type", self.subscription_type().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for UnsubscribeRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("subscription", Some(self.subscription()));
}
}
impl ReportFields for CancelRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("target_request_id", &self.target_request_id());
}
}
impl ReportFields for AttachDomainClockRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for DetachDomainClockRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for OpenIngestorRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("ingestor", Some(self.ingestor()));
r.children("expected_fields", Some(self.expected_fields()).map(|v| v.iter()));
r.leaf("max_outstanding_batches", &self.max_outstanding_batches());
r.leaf("max_outstanding_bytes", &self.max_outstanding_bytes());
}
}
impl ReportFields for SubmitBatchRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("producer", &self.producer());
r.bytes("batch", Some(self.batch()).map(|v| v.bytes()));
}
}
impl ReportFields for CloseIngestorRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("producer", &self.producer());
}
}
impl ReportFields for OpenEmitterRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("emitter", Some(self.emitter()));
r.children("expected_fields", Some(self.expected_fields()).map(|v| v.iter()));
r.leaf("max_outstanding_batches", &self.max_outstanding_batches());
r.leaf("max_outstanding_bytes", &self.max_outstanding_bytes());
}
}
impl ReportFields for ReadEmitterBatchRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("consumer", &self.consumer());
}
}
impl ReportFields for SettleEmitterBatchRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("consumer", &self.consumer());
r.bytes("reference", Some(self.reference()).map(|v| v.bytes()));
r.optional_enum("decision", self.decision().map(|v| (v.0 as u64, v.variant_name())));
r.text("reason", Some(self.reason()));
}
}
impl ReportFields for CloseEmitterRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("consumer", &self.consumer());
}
}
impl ReportFields for CommandCompleted<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("already_existed", &self.already_existed());
}
}
impl ReportFields for TransactionDetached<'_> {
fn report(&self, r: &mut Reporter) {
r.text("transaction_id", Some(self.transaction_id()));
}
}
impl ReportFields for TransactionTakenOver<'_> {
fn report(&self, r: &mut Reporter) {
r.text("transaction_id", Some(self.transaction_id()));
}
}
impl ReportFields for OutcomeUnknown<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("cause", self.cause().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for ExecutionReferenceConflict<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("conflict", self.conflict().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for ExecutionReferenceExpired<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for PreviewStale<'_> {
fn report(&self, r: &mut Reporter) {
r.child("expected", Some(&self.expected()));
r.child("current", Some(&self.current()));
}
}
impl ReportFields for StatementOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
StatementDisposition::CommandCompleted => r.variant("disposition", "CommandCompleted", self.disposition_as_command_completed().as_ref()),
StatementDisposition::RequestFailed => r.variant("disposition", "RequestFailed", self.disposition_as_request_failed().as_ref()),
StatementDisposition::LeaderRedirect => r.variant("disposition", "LeaderRedirect", self.disposition_as_leader_redirect().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
r.children("diagnostics", Some(self.diagnostics()).map(|v| v.iter()));
}
}
impl ReportFields for CommandOutcome<'_> {
fn report(&self, r: &mut Reporter) {
r.text("execution_reference", Some(self.execution_reference()));
r.optional_enum("origin", self.origin().map(|v| (v.0 as u64, v.variant_name())));
match self.disposition_type() {
CommandDisposition::CommandCompleted => r.variant("disposition", "CommandCompleted", self.disposition_as_command_completed().as_ref()),
CommandDisposition::RequestFailed => r.variant("disposition", "RequestFailed", self.disposition_as_request_failed().as_ref()),
CommandDisposition::LeaderRedirect => r.variant("disposition", "LeaderRedirect", self.disposition_as_leader_redirect().as_ref()),
CommandDisposition::TransactionDetached => r.variant("disposition", "TransactionDetached", self.disposition_as_transaction_detached().as_ref()),
CommandDisposition::TransactionTakenOver => r.variant("disposition", "TransactionTakenOver", self.disposition_as_transaction_taken_over().as_ref()),
CommandDisposition::OutcomeUnknown => r.variant("disposition", "OutcomeUnknown", self.disposition_as_outcome_unknown().as_ref()),
CommandDisposition::ExecutionReferenceConflict => r.variant("disposition", "ExecutionReferenceConflict", self.disposition_as_execution_reference_conflict().as_ref()),
CommandDisposition::ExecutionReferenceExpired => r.variant("disposition", "ExecutionReferenceExpired", self.disposition_as_execution_reference_expired().as_ref()),
CommandDisposition::PreviewStale => r.variant("disposition", "PreviewStale", self.disposition_as_preview_stale().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
r.children("diagnostics", Some(self.diagnostics()).map(|v| v.iter()));
r.children("statements", Some(self.statements()).map(|v| v.iter()));
r.child("transaction", self.transaction().as_ref());
r.child("transaction_admission", self.transaction_admission().as_ref());
r.child("inspection", self.inspection().as_ref());
r.text("wasm_state", self.wasm_state());
r.child("resource", self.resource().as_ref());
r.child("backup", self.backup().as_ref());
r.child("restore", self.restore().as_ref());
}
}
impl ReportFields for TransactionAttached<'_> {
fn report(&self, r: &mut Reporter) {
r.child("transaction", Some(&self.transaction()));
}
}
impl ReportFields for TransactionAlreadyFinished<'_> {
fn report(&self, r: &mut Reporter) {
r.child("transaction", Some(&self.transaction()));
}
}
impl ReportFields for AttachOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
AttachDisposition::TransactionAttached => r.variant("disposition", "TransactionAttached", self.disposition_as_transaction_attached().as_ref()),
AttachDisposition::TransactionAlreadyFinished => r.variant("disposition", "TransactionAlreadyFinished", self.disposition_as_transaction_already_finished().as_ref()),
AttachDisposition::RequestFailed => r.variant("disposition", "RequestFailed", self.disposition_as_request_failed().as_ref()),
AttachDisposition::LeaderRedirect => r.variant("disposition", "LeaderRedirect", self.disposition_as_leader_redirect().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
r.children("diagnostics", Some(self.diagnostics()).map(|v| v.iter()));
}
}
impl ReportFields for TextEdit<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("start", &self.start());
r.leaf("end", &self.end());
r.text("replacement", Some(self.replacement()));
}
}
impl ReportFields for Suggestion<'_> {
fn report(&self, r: &mut Reporter) {
r.text("value", Some(self.value()));
r.optional_enum("kind", self.kind().map(|v| (v.0 as u64, v.variant_name())));
r.child("edit", Some(&self.edit()));
}
}
impl ReportFields for SuggestOutcome<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("status", self.status().map(|v| (v.0 as u64, v.variant_name())));
r.children("suggestions", Some(self.suggestions()).map(|v| v.iter()));
r.text("continuation", self.continuation());
}
}
impl ReportFields for ChoiceOutcome<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("status", self.status().map(|v| (v.0 as u64, v.variant_name())));
r.children("choices", Some(self.choices()).map(|v| v.iter()));
r.text("page_cursor", self.page_cursor());
}
}
impl ReportFields for UnpacedDomain<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for PacedDomain<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("period_nanos", &self.period_nanos());
r.leaf("skew_nanos", &self.skew_nanos());
}
}
impl ReportFields for DomainInfo<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.optional_enum("status", self.status().map(|v| (v.0 as u64, v.variant_name())));
match self.pace_type() {
DomainPace::UnpacedDomain => r.variant("pace", "UnpacedDomain", self.pace_as_unpaced_domain().as_ref()),
DomainPace::PacedDomain => r.variant("pace", "PacedDomain", self.pace_as_paced_domain().as_ref()),
other => r.unknown_variant("pace", other.0),
}
}
}
impl ReportFields for DomainList<'_> {
fn report(&self, r: &mut Reporter) {
r.children("domains", Some(self.domains()).map(|v| v.iter()));
}
}
impl ReportFields for DomainSelected<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for DomainNotFound<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for DomainSelectionOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.selection_type() {
DomainSelection::DomainSelected => r.variant("selection", "DomainSelected", self.selection_as_domain_selected().as_ref()),
DomainSelection::DomainNotFound => r.variant("selection", "DomainNotFound", self.selection_as_domain_not_found().as_ref()),
other => r.unknown_variant("selection", other.0),
}
}
}
impl ReportFields for TransactionInspected<'_> {
fn report(&self, r: &mut Reporter) {
r.child("transaction", Some(&self.transaction()));
r.optional("operation", self.operation());
r.child("report", Some(&self.report()));
}
}
impl ReportFields for InspectionRejected<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("rejection", self.rejection().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for InspectionOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
InspectionDisposition::TransactionInspected => r.variant("disposition", "TransactionInspected", self.disposition_as_transaction_inspected().as_ref()),
InspectionDisposition::InspectionRejected => r.variant("disposition", "InspectionRejected", self.disposition_as_inspection_rejected().as_ref()),
InspectionDisposition::LeaderRedirect => r.variant("disposition", "LeaderRedirect", self.disposition_as_leader_redirect().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
}
}
impl ReportFields for SubscriptionHandle<'_> {
fn report(&self, r: &mut Reporter) {
r.text("name", Some(self.name()));
r.leaf("generation", &self.generation());
}
}
impl ReportFields for SubscriptionOpened<'_> {
fn report(&self, r: &mut Reporter) {
r.child("subscription", Some(&self.subscription()));
r.text("domain", Some(self.domain()));
r.text("relay", Some(self.relay()));
r.optional_enum("subscription_type", self.subscription_type().map(|v| (v.0 as u64, v.variant_name())));
r.child("schema", Some(&self.schema()));
}
}
impl ReportFields for SubscribeOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
SubscribeDisposition::SubscriptionOpened => r.variant("disposition", "SubscriptionOpened", self.disposition_as_subscription_opened().as_ref()),
SubscribeDisposition::RequestFailed => r.variant("disposition", "RequestFailed", self.disposition_as_request_failed().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
r.children("diagnostics", Some(self.diagnostics()).map(|v| v.iter()));
}
}
impl ReportFields for SubscriptionDeleted<'_> {
fn report(&self, r: &mut Reporter) {
r.child("subscription", Some(&self.subscription()));
}
}
impl ReportFields for UnsubscribeOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
UnsubscribeDisposition::SubscriptionDeleted => r.variant("disposition", "SubscriptionDeleted", self.disposition_as_subscription_deleted().as_ref()),
UnsubscribeDisposition::RequestFailed => r.variant("disposition", "RequestFailed", self.disposition_as_request_failed().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
r.children("diagnostics", Some(self.diagnostics()).map(|v| v.iter()));
}
}
impl ReportFields for CancelOutcome<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("target_request_id", &self.target_request_id());
r.optional_enum("state", self.state().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for RequestCancelled<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("stage", self.stage().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for RequestRejected<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("rejection", self.rejection().map(|v| (v.0 as u64, v.variant_name())));
r.text("field", self.field());
r.text("message", Some(self.message()));
}
}
impl ReportFields for TransferPart<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("total_bytes", &self.total_bytes());
r.leaf("offset", &self.offset());
r.bytes("chunk", Some(self.chunk()).map(|v| v.bytes()));
}
}
impl ReportFields for DomainClockAttached<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.child("clock", Some(&self.clock()));
}
}
impl ReportFields for DomainClockAlreadyAttached<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for DomainClockAttachOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
DomainClockAttachDisposition::DomainClockAttached => r.variant("disposition", "DomainClockAttached", self.disposition_as_domain_clock_attached().as_ref()),
DomainClockAttachDisposition::DomainClockAlreadyAttached => r.variant("disposition", "DomainClockAlreadyAttached", self.disposition_as_domain_clock_already_attached().as_ref()),
DomainClockAttachDisposition::DomainNotFound => r.variant("disposition", "DomainNotFound", self.disposition_as_domain_not_found().as_ref()),
DomainClockAttachDisposition::RequestFailed => r.variant("disposition", "RequestFailed", self.disposition_as_request_failed().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
}
}
impl ReportFields for DomainClockDetached<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for DomainClockNotAttached<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
}
}
impl ReportFields for DomainClockDetachOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
DomainClockDetachDisposition::DomainClockDetached => r.variant("disposition", "DomainClockDetached", self.disposition_as_domain_clock_detached().as_ref()),
DomainClockDetachDisposition::DomainClockNotAttached => r.variant("disposition", "DomainClockNotAttached", self.disposition_as_domain_clock_not_attached().as_ref()),
DomainClockDetachDisposition::RequestFailed => r.variant("disposition", "RequestFailed", self.disposition_as_request_failed().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
}
}
impl ReportFields for ProducerOpened<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("ingestor", Some(self.ingestor()));
r.children("fields", Some(self.fields()).map(|v| v.iter()));
r.leaf("generation", &self.generation());
r.child("contract", Some(&self.contract()));
r.bytes("attachment", Some(self.attachment()).map(|v| v.bytes()));
match self.window_type() {
ProducerWindow::SequentialProducerWindow => r.variant("window", "SequentialProducerWindow", self.window_as_sequential_producer_window().as_ref()),
ProducerWindow::ParallelProducerWindow => r.variant("window", "ParallelProducerWindow", self.window_as_parallel_producer_window().as_ref()),
other => r.unknown_variant("window", other.0),
}
r.leaf("ack_timeout_nanos", &self.ack_timeout_nanos());
r.leaf("retry_backoff_nanos", &self.retry_backoff_nanos());
r.leaf("retry_max_backoff_nanos", &self.retry_max_backoff_nanos());
r.leaf("granted_batches", &self.granted_batches());
r.leaf("granted_bytes", &self.granted_bytes());
r.leaf("max_batch_bytes", &self.max_batch_bytes());
r.leaf("max_batch_rows", &self.max_batch_rows());
r.optional_enum("admission", self.admission().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for ProducerRefused<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("refusal", self.refusal().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for OpenIngestorOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
OpenIngestorDisposition::ProducerOpened => r.variant("disposition", "ProducerOpened", self.disposition_as_producer_opened().as_ref()),
OpenIngestorDisposition::ProducerRefused => r.variant("disposition", "ProducerRefused", self.disposition_as_producer_refused().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
}
}
impl ReportFields for SubmissionNotAdmitted<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("refusal", self.refusal().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for SubmissionCompleted<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for SubmissionFailed<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("failure", self.failure().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for SubmissionOutcomeUnknown<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("cause", self.cause().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for SubmissionOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
SubmissionDisposition::SubmissionNotAdmitted => r.variant("disposition", "SubmissionNotAdmitted", self.disposition_as_submission_not_admitted().as_ref()),
SubmissionDisposition::SubmissionCompleted => r.variant("disposition", "SubmissionCompleted", self.disposition_as_submission_completed().as_ref()),
SubmissionDisposition::SubmissionFailed => r.variant("disposition", "SubmissionFailed", self.disposition_as_submission_failed().as_ref()),
SubmissionDisposition::SubmissionOutcomeUnknown => r.variant("disposition", "SubmissionOutcomeUnknown", self.disposition_as_submission_outcome_unknown().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
}
}
impl ReportFields for ProducerClosed<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ProducerNotOpen<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for CloseIngestorOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
CloseIngestorDisposition::ProducerClosed => r.variant("disposition", "ProducerClosed", self.disposition_as_producer_closed().as_ref()),
CloseIngestorDisposition::ProducerNotOpen => r.variant("disposition", "ProducerNotOpen", self.disposition_as_producer_not_open().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
}
}
impl ReportFields for SequentialConsumerWindow<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ParallelConsumerWindow<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("max", &self.max());
}
}
impl ReportFields for EmitterOpened<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("emitter", Some(self.emitter()));
r.children("fields", Some(self.fields()).map(|v| v.iter()));
r.leaf("generation", &self.generation());
r.child("contract", Some(&self.contract()));
match self.window_type() {
ConsumerWindow::SequentialConsumerWindow => r.variant("window", "SequentialConsumerWindow", self.window_as_sequential_consumer_window().as_ref()),
ConsumerWindow::ParallelConsumerWindow => r.variant("window", "ParallelConsumerWindow", self.window_as_parallel_consumer_window().as_ref()),
other => r.unknown_variant("window", other.0),
}
r.leaf("ack_timeout_nanos", &self.ack_timeout_nanos());
r.leaf("retry_backoff_nanos", &self.retry_backoff_nanos());
r.leaf("retry_max_backoff_nanos", &self.retry_max_backoff_nanos());
r.leaf("granted_batches", &self.granted_batches());
r.leaf("granted_bytes", &self.granted_bytes());
r.leaf("max_batch_bytes", &self.max_batch_bytes());
r.leaf("max_batch_rows", &self.max_batch_rows());
}
}
impl ReportFields for EmitterRefused<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("refusal", self.refusal().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for OpenEmitterOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
OpenEmitterDisposition::EmitterOpened => r.variant("disposition", "EmitterOpened", self.disposition_as_emitter_opened().as_ref()),
OpenEmitterDisposition::EmitterRefused => r.variant("disposition", "EmitterRefused", self.disposition_as_emitter_refused().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
}
}
impl ReportFields for EmitterBatchReceived<'_> {
fn report(&self, r: &mut Reporter) {
r.bytes("identity", Some(self.identity()).map(|v| v.bytes()));
r.bytes("reference", Some(self.reference()).map(|v| v.bytes()));
r.text("source_relay", Some(self.source_relay()));
r.bytes("branch_fingerprint", self.branch_fingerprint().map(|v| v.bytes()));
r.bytes("batch", Some(self.batch()).map(|v| v.bytes()));
r.leaf("members", &self.members());
r.leaf("execution_now_unix_nanos", &self.execution_now_unix_nanos());
}
}
impl ReportFields for EmitterConsumerEnded<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ReadEmitterBatchOutcome<'_> {
fn report(&self, r: &mut Reporter) {
match self.disposition_type() {
ReadEmitterDisposition::EmitterBatchReceived => r.variant("disposition", "EmitterBatchReceived", self.disposition_as_emitter_batch_received().as_ref()),
ReadEmitterDisposition::EmitterConsumerEnded => r.variant("disposition", "EmitterConsumerEnded", self.disposition_as_emitter_consumer_ended().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
}
}
impl ReportFields for SettleEmitterBatchOutcome<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("disposition", self.disposition().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for CloseEmitterOutcome<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("disposition", self.disposition().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for Reply<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("request_id", &self.request_id());
match self.body_type() {
ReplyBody::CommandOutcome => r.variant("body", "CommandOutcome", self.body_as_command_outcome().as_ref()),
ReplyBody::AttachOutcome => r.variant("body", "AttachOutcome", self.body_as_attach_outcome().as_ref()),
ReplyBody::SuggestOutcome => r.variant("body", "SuggestOutcome", self.body_as_suggest_outcome().as_ref()),
ReplyBody::DomainList => r.variant("body", "DomainList", self.body_as_domain_list().as_ref()),
ReplyBody::DomainSelectionOutcome => r.variant("body", "DomainSelectionOutcome", self.body_as_domain_selection_outcome().as_ref()),
ReplyBody::InspectionOutcome => r.variant("body", "InspectionOutcome", self.body_as_inspection_outcome().as_ref()),
ReplyBody::SubscribeOutcome => r.variant("body", "SubscribeOutcome", self.body_as_subscribe_outcome().as_ref()),
ReplyBody::UnsubscribeOutcome => r.variant("body", "UnsubscribeOutcome", self.body_as_unsubscribe_outcome().as_ref()),
ReplyBody::CancelOutcome => r.variant("body", "CancelOutcome", self.body_as_cancel_outcome().as_ref()),
ReplyBody::RequestCancelled => r.variant("body", "RequestCancelled", self.body_as_request_cancelled().as_ref()),
ReplyBody::RequestRejected => r.variant("body", "RequestRejected", self.body_as_request_rejected().as_ref()),
ReplyBody::TransferPart => r.variant("body", "TransferPart", self.body_as_transfer_part().as_ref()),
ReplyBody::ChoiceOutcome => r.variant("body", "ChoiceOutcome", self.body_as_choice_outcome().as_ref()),
ReplyBody::DomainClockAttachOutcome => r.variant("body", "DomainClockAttachOutcome", self.body_as_domain_clock_attach_outcome().as_ref()),
ReplyBody::DomainClockDetachOutcome => r.variant("body", "DomainClockDetachOutcome", self.body_as_domain_clock_detach_outcome().as_ref()),
ReplyBody::OpenIngestorOutcome => r.variant("body", "OpenIngestorOutcome", self.body_as_open_ingestor_outcome().as_ref()),
ReplyBody::SubmissionOutcome => r.variant("body", "SubmissionOutcome", self.body_as_submission_outcome().as_ref()),
ReplyBody::CloseIngestorOutcome => r.variant("body", "CloseIngestorOutcome", self.body_as_close_ingestor_outcome().as_ref()),
ReplyBody::OpenEmitterOutcome => r.variant("body", "OpenEmitterOutcome", self.body_as_open_emitter_outcome().as_ref()),
ReplyBody::ReadEmitterBatchOutcome => r.variant("body", "ReadEmitterBatchOutcome", self.body_as_read_emitter_batch_outcome().as_ref()),
ReplyBody::SettleEmitterBatchOutcome => r.variant("body", "SettleEmitterBatchOutcome", self.body_as_settle_emitter_batch_outcome().as_ref()),
ReplyBody::CloseEmitterOutcome => r.variant("body", "CloseEmitterOutcome", self.body_as_close_emitter_outcome().as_ref()),
other => r.unknown_variant("body", other.0),
}
}
}
impl ReportFields for ServerNotice<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("level", self.level().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for LeaderIsServingNode<'_> {
fn report(&self, r: &mut Reporter) {
r.text("node", Some(self.node()));
}
}
impl ReportFields for LeaderIsRemote<'_> {
fn report(&self, r: &mut Reporter) {
r.child("leader", Some(&self.leader()));
}
}
impl ReportFields for LeaderUnknown<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for LeadershipObserved<'_> {
fn report(&self, r: &mut Reporter) {
match self.leadership_type() {
Leadership::LeaderIsServingNode => r.variant("leadership", "LeaderIsServingNode", self.leadership_as_leader_is_serving_node().as_ref()),
Leadership::LeaderIsRemote => r.variant("leadership", "LeaderIsRemote", self.leadership_as_leader_is_remote().as_ref()),
Leadership::LeaderUnknown => r.variant("leadership", "LeaderUnknown", self.leadership_as_leader_unknown().as_ref()),
other => r.unknown_variant("leadership", other.0),
}
}
}
impl ReportFields for DomainsObserved<'_> {
fn report(&self, r: &mut Reporter) {
r.children("domains", Some(self.domains()).map(|v| v.iter()));
}
}
impl ReportFields for ModelEntity<'_> {
fn report(&self, r: &mut Reporter) {
r.child("node", Some(&self.node()));
}
}
impl ReportFields for ResourceEntity<'_> {
fn report(&self, r: &mut Reporter) {
r.text("name", Some(self.name()));
r.optional("latest_version", self.latest_version());
}
}
impl ReportFields for DomainEntityEntry<'_> {
fn report(&self, r: &mut Reporter) {
match self.entity_type() {
DomainEntity::ModelEntity => r.variant("entity", "ModelEntity", self.entity_as_model_entity().as_ref()),
DomainEntity::ResourceEntity => r.variant("entity", "ResourceEntity", self.entity_as_resource_entity().as_ref()),
other => r.unknown_variant("entity", other.0),
}
}
}
impl ReportFields for DomainSnapshotObserved<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.text("graph_json", Some(self.graph_json()));
r.children("entities", Some(self.entities()).map(|v| v.iter()));
}
}
impl ReportFields for ClusterObserved<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("running_domains", &self.running_domains());
r.leaf("graph_nodes", &self.graph_nodes());
r.leaf("relays", &self.relays());
}
}
impl ReportFields for SubscriptionRows<'_> {
fn report(&self, r: &mut Reporter) {
r.child("subscription", Some(&self.subscription()));
r.child("batch", Some(&self.batch()));
}
}
impl ReportFields for SubscriptionDeliveryLost<'_> {
fn report(&self, r: &mut Reporter) {
r.child("subscription", Some(&self.subscription()));
r.leaf("dropped_rows", &self.dropped_rows());
}
}
impl ReportFields for SubscriptionRowsSkipped<'_> {
fn report(&self, r: &mut Reporter) {
r.child("subscription", Some(&self.subscription()));
r.optional_enum("cause", self.cause().map(|v| (v.0 as u64, v.variant_name())));
r.leaf("skipped_rows", &self.skipped_rows());
r.text("message", Some(self.message()));
}
}
impl ReportFields for SubscriptionEnded<'_> {
fn report(&self, r: &mut Reporter) {
r.child("subscription", Some(&self.subscription()));
r.optional_enum("reason", self.reason().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for DomainClockObserved<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.child("clock", Some(&self.clock()));
}
}
impl ReportFields for DomainClockTicked<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.leaf("generation", &self.generation());
r.leaf("tick_id", &self.tick_id());
r.leaf("logical_boundary_unix_nanos", &self.logical_boundary_unix_nanos());
r.leaf("authority_utc_unix_nanos", &self.authority_utc_unix_nanos());
r.leaf("serving_logical_unix_nanos", &self.serving_logical_unix_nanos());
}
}
impl ReportFields for DomainClockAttachmentEnded<'_> {
fn report(&self, r: &mut Reporter) {
r.text("domain", Some(self.domain()));
r.optional_enum("reason", self.reason().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for ProducerAdmissionChanged<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("producer", &self.producer());
r.optional_enum("admission", self.admission().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for ProducerEnded<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("producer", &self.producer());
r.optional_enum("reason", self.reason().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for ServerShuttingDown<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for ProtocolViolated<'_> {
fn report(&self, r: &mut Reporter) {
r.text("message", Some(self.message()));
}
}
impl ReportFields for SessionEnding<'_> {
fn report(&self, r: &mut Reporter) {
match self.reason_type() {
SessionEndReason::ServerShuttingDown => r.variant("reason", "ServerShuttingDown", self.reason_as_server_shutting_down().as_ref()),
SessionEndReason::LeaderRedirect => r.variant("reason", "LeaderRedirect", self.reason_as_leader_redirect().as_ref()),
SessionEndReason::ProtocolViolated => r.variant("reason", "ProtocolViolated", self.reason_as_protocol_violated().as_ref()),
other => r.unknown_variant("reason", other.0),
}
}
}
impl ReportFields for UploadStart<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("request_id", &self.request_id());
r.text("domain", Some(self.domain()));
r.text("resource", Some(self.resource()));
r.text("upload_identity", Some(self.upload_identity()));
r.leaf("total_bytes", &self.total_bytes());
}
}
impl ReportFields for UploadChunk<'_> {
fn report(&self, r: &mut Reporter) {
r.bytes("bytes", Some(self.bytes()).map(|v| v.bytes()));
}
}
impl ReportFields for ResourceInstalled<'_> {
fn report(&self, r: &mut Reporter) {
r.text("upload_identity", Some(self.upload_identity()));
r.leaf("version", &self.version());
r.optional_enum("origin", self.origin().map(|v| (v.0 as u64, v.variant_name())));
}
}
impl ReportFields for UploadFailed<'_> {
fn report(&self, r: &mut Reporter) {
r.text("upload_identity", self.upload_identity());
r.optional_enum("failure", self.failure().map(|v| (v.0 as u64, v.variant_name())));
r.optional("assigned_version", self.assigned_version());
}
}
impl ReportFields for BackupDownloadRequest<'_> {
fn report(&self, r: &mut Reporter) {
r.text("execution_reference", Some(self.execution_reference()));
}
}
impl ReportFields for BackupArchiveStart<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("total_bytes", &self.total_bytes());
r.child("digest", Some(&self.digest()));
}
}
impl ReportFields for BackupArchiveChunk<'_> {
fn report(&self, r: &mut Reporter) {
r.bytes("bytes", Some(self.bytes()).map(|v| v.bytes()));
}
}
impl ReportFields for BackupArchiveComplete<'_> {
fn report(&self, r: &mut Reporter) {
let _ = r;
}
}
impl ReportFields for BackupDownloadFailed<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("failure", self.failure().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for RestoreStart<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("request_id", &self.request_id());
r.text("execution_reference", Some(self.execution_reference()));
r.text("statement", Some(self.statement()));
r.leaf("total_bytes", &self.total_bytes());
r.child("digest", Some(&self.digest()));
}
}
impl ReportFields for RestoreChunk<'_> {
fn report(&self, r: &mut Reporter) {
r.bytes("bytes", Some(self.bytes()).map(|v| v.bytes()));
}
}
impl ReportFields for RestoreUploadFailed<'_> {
fn report(&self, r: &mut Reporter) {
r.optional_enum("failure", self.failure().map(|v| (v.0 as u64, v.variant_name())));
r.text("message", Some(self.message()));
}
}
impl ReportFields for ClientMessage<'_> {
fn report(&self, r: &mut Reporter) {
r.leaf("request_id", &self.request_id());
match self.request_type() {
ClientRequest::CommandRequest => r.variant("request", "CommandRequest", self.request_as_command_request().as_ref()),
ClientRequest::SuggestRequest => r.variant("request", "SuggestRequest", self.request_as_suggest_request().as_ref()),
ClientRequest::ListDomainsRequest => r.variant("request", "ListDomainsRequest", self.request_as_list_domains_request().as_ref()),
ClientRequest::SelectDomainRequest => r.variant("request", "SelectDomainRequest", self.request_as_select_domain_request().as_ref()),
ClientRequest::AttachTransactionRequest => r.variant("request", "AttachTransactionRequest", self.request_as_attach_transaction_request().as_ref()),
ClientRequest::InspectTransactionRequest => r.variant("request", "InspectTransactionRequest", self.request_as_inspect_transaction_request().as_ref()),
ClientRequest::SubscribeRequest => r.variant("request", "SubscribeRequest", self.request_as_subscribe_request().as_ref()),
ClientRequest::UnsubscribeRequest => r.variant("request", "UnsubscribeRequest", self.request_as_unsubscribe_request().as_ref()),
ClientRequest::CancelRequest => r.variant("request", "CancelRequest", self.request_as_cancel_request().as_ref()),
ClientRequest::ChoiceLookupRequest => r.variant("request", "ChoiceLookupRequest", self.request_as_choice_lookup_request().as_ref()),
ClientRequest::AttachDomainClockRequest => r.variant("request", "AttachDomainClockRequest", self.request_as_attach_domain_clock_request().as_ref()),
ClientRequest::DetachDomainClockRequest => r.variant("request", "DetachDomainClockRequest", self.request_as_detach_domain_clock_request().as_ref()),
ClientRequest::OpenIngestorRequest => r.variant("request", "OpenIngestorRequest", self.request_as_open_ingestor_request().as_ref()),
ClientRequest::SubmitBatchRequest => r.variant("request", "SubmitBatchRequest", self.request_as_submit_batch_request().as_ref()),
ClientRequest::CloseIngestorRequest => r.variant("request", "CloseIngestorRequest", self.request_as_close_ingestor_request().as_ref()),
ClientRequest::OpenEmitterRequest => r.variant("request", "OpenEmitterRequest", self.request_as_open_emitter_request().as_ref()),
ClientRequest::ReadEmitterBatchRequest => r.variant("request", "ReadEmitterBatchRequest", self.request_as_read_emitter_batch_request().as_ref()),
ClientRequest::SettleEmitterBatchRequest => r.variant("request", "SettleEmitterBatchRequest", self.request_as_settle_emitter_batch_request().as_ref()),
ClientRequest::CloseEmitterRequest => r.variant("request", "CloseEmitterRequest", self.request_as_close_emitter_request().as_ref()),
other => r.unknown_variant("request", other.0),
}
}
}
impl ReportFields for ServerMessage<'_> {
fn report(&self, r: &mut Reporter) {
match self.body_type() {
ServerBody::Reply => r.variant("body", "Reply", self.body_as_reply().as_ref()),
ServerBody::ServerNotice => r.variant("body", "ServerNotice", self.body_as_server_notice().as_ref()),
ServerBody::LeadershipObserved => r.variant("body", "LeadershipObserved", self.body_as_leadership_observed().as_ref()),
ServerBody::DomainsObserved => r.variant("body", "DomainsObserved", self.body_as_domains_observed().as_ref()),
ServerBody::DomainSnapshotObserved => r.variant("body", "DomainSnapshotObserved", self.body_as_domain_snapshot_observed().as_ref()),
ServerBody::ClusterObserved => r.variant("body", "ClusterObserved", self.body_as_cluster_observed().as_ref()),
ServerBody::SubscriptionRows => r.variant("body", "SubscriptionRows", self.body_as_subscription_rows().as_ref()),
ServerBody::SubscriptionDeliveryLost => r.variant("body", "SubscriptionDeliveryLost", self.body_as_subscription_delivery_lost().as_ref()),
ServerBody::SubscriptionRowsSkipped => r.variant("body", "SubscriptionRowsSkipped", self.body_as_subscription_rows_skipped().as_ref()),
ServerBody::SubscriptionEnded => r.variant("body", "SubscriptionEnded", self.body_as_subscription_ended().as_ref()),
ServerBody::SessionEnding => r.variant("body", "SessionEnding", self.body_as_session_ending().as_ref()),
ServerBody::DomainClockObserved => r.variant("body", "DomainClockObserved", self.body_as_domain_clock_observed().as_ref()),
ServerBody::DomainClockAttachmentEnded => r.variant("body", "DomainClockAttachmentEnded", self.body_as_domain_clock_attachment_ended().as_ref()),
ServerBody::DomainClockTicked => r.variant("body", "DomainClockTicked", self.body_as_domain_clock_ticked().as_ref()),
ServerBody::ProducerAdmissionChanged => r.variant("body", "ProducerAdmissionChanged", self.body_as_producer_admission_changed().as_ref()),
ServerBody::ProducerEnded => r.variant("body", "ProducerEnded", self.body_as_producer_ended().as_ref()),
other => r.unknown_variant("body", other.0),
}
}
}
impl ReportFields for UploadMessage<'_> {
fn report(&self, r: &mut Reporter) {
match self.part_type() {
UploadPart::UploadStart => r.variant("part", "UploadStart", self.part_as_upload_start().as_ref()),
UploadPart::UploadChunk => r.variant("part", "UploadChunk", self.part_as_upload_chunk().as_ref()),
other => r.unknown_variant("part", other.0),
}
}
}
impl ReportFields for BackupDownloadMessage<'_> {
fn report(&self, r: &mut Reporter) {
match self.part_type() {
BackupDownloadPart::BackupArchiveStart => r.variant("part", "BackupArchiveStart", self.part_as_backup_archive_start().as_ref()),
BackupDownloadPart::BackupArchiveChunk => r.variant("part", "BackupArchiveChunk", self.part_as_backup_archive_chunk().as_ref()),
BackupDownloadPart::BackupArchiveComplete => r.variant("part", "BackupArchiveComplete", self.part_as_backup_archive_complete().as_ref()),
BackupDownloadPart::BackupDownloadFailed => r.variant("part", "BackupDownloadFailed", self.part_as_backup_download_failed().as_ref()),
BackupDownloadPart::LeaderRedirect => r.variant("part", "LeaderRedirect", self.part_as_leader_redirect().as_ref()),
other => r.unknown_variant("part", other.0),
}
}
}
impl ReportFields for UploadReply<'_> {
fn report(&self, r: &mut Reporter) {
r.optional("request_id", self.request_id());
match self.disposition_type() {
UploadDisposition::ResourceInstalled => r.variant("disposition", "ResourceInstalled", self.disposition_as_resource_installed().as_ref()),
UploadDisposition::UploadFailed => r.variant("disposition", "UploadFailed", self.disposition_as_upload_failed().as_ref()),
UploadDisposition::LeaderRedirect => r.variant("disposition", "LeaderRedirect", self.disposition_as_leader_redirect().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
r.text("message", Some(self.message()));
r.children("diagnostics", Some(self.diagnostics()).map(|v| v.iter()));
}
}
impl ReportFields for RestoreMessage<'_> {
fn report(&self, r: &mut Reporter) {
match self.part_type() {
RestorePart::RestoreStart => r.variant("part", "RestoreStart", self.part_as_restore_start().as_ref()),
RestorePart::RestoreChunk => r.variant("part", "RestoreChunk", self.part_as_restore_chunk().as_ref()),
other => r.unknown_variant("part", other.0),
}
}
}
impl ReportFields for RestoreReply<'_> {
fn report(&self, r: &mut Reporter) {
r.optional("request_id", self.request_id());
match self.disposition_type() {
RestoreDisposition::CommandOutcome => r.variant("disposition", "CommandOutcome", self.disposition_as_command_outcome().as_ref()),
RestoreDisposition::RestoreUploadFailed => r.variant("disposition", "RestoreUploadFailed", self.disposition_as_restore_upload_failed().as_ref()),
other => r.unknown_variant("disposition", other.0),
}
}
}
