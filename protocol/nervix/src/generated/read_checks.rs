#[inline]
fn check_struct_source_span(s: &SourceSpan) -> Result<(), ProtocolViolation> {
{ let v = s.start();
}
{ let v = s.end();
if v < s.start() { fail!("SourceSpan", "end", Fault::Order { other: "start", must_be: "at least" }); }
}
Ok(())
}
#[inline]
fn check_struct_operation_range(s: &OperationRange) -> Result<(), ProtocolViolation> {
{ let v = s.first();
if v == 0 { fail!("OperationRange", "first", Fault::Zero); }
}
{ let v = s.last();
if v < s.first() { fail!("OperationRange", "last", Fault::Order { other: "first", must_be: "at least" }); }
}
Ok(())
}
impl CheckRead for Fingerprint<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.bytes();
if v.len() != 32 { fail!("Fingerprint", "bytes", Fault::Length { expected: 32, found: v.len() }); }
}
Ok(())
}
}
impl CheckRead for Diagnostic<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.span() { check_struct_source_span(v)?; }
}
Ok(())
}
}
impl CheckRead for LeaderEndpoints<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for LeaderRedirect<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for RequestFailed<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for NodeRef<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.kind() else { fail!("NodeRef", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("NodeRef", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for DomainPaceVariant<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.value() { if v.variant_name().is_none() { fail!("DomainPaceVariant", "value", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckRead for PlacementPolicyVariant<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.value() { if v.variant_name().is_none() { fail!("PlacementPolicyVariant", "value", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckRead for DomainChoiceReference<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ResourceChoiceReference<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ModelChoiceReference<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for FieldChoiceReference<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ChoiceSelection<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.value_type() {
ChoiceValue::DomainPaceVariant => match self.value_as_domain_pace_variant() { Some(v) => v.check()?, None => fail!("ChoiceSelection", "value", Fault::Absent) },
ChoiceValue::PlacementPolicyVariant => match self.value_as_placement_policy_variant() { Some(v) => v.check()?, None => fail!("ChoiceSelection", "value", Fault::Absent) },
ChoiceValue::DomainChoiceReference => {}
ChoiceValue::ResourceChoiceReference => {}
ChoiceValue::ModelChoiceReference => match self.value_as_model_choice_reference() { Some(v) => v.check()?, None => fail!("ChoiceSelection", "value", Fault::Absent) },
ChoiceValue::FieldChoiceReference => {}
ChoiceValue::ResourceVersionNumber => {}
ChoiceValue::LatestResourceVersion => {}
ChoiceValue::NONE => fail!("ChoiceSelection", "value", Fault::NoneUnion),
other => fail!("ChoiceSelection", "value", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ChoicePresentation<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for Choice<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.value_type() {
ChoiceValue::DomainPaceVariant => match self.value_as_domain_pace_variant() { Some(v) => v.check()?, None => fail!("Choice", "value", Fault::Absent) },
ChoiceValue::PlacementPolicyVariant => match self.value_as_placement_policy_variant() { Some(v) => v.check()?, None => fail!("Choice", "value", Fault::Absent) },
ChoiceValue::DomainChoiceReference => {}
ChoiceValue::ResourceChoiceReference => {}
ChoiceValue::ModelChoiceReference => match self.value_as_model_choice_reference() { Some(v) => v.check()?, None => fail!("Choice", "value", Fault::Absent) },
ChoiceValue::FieldChoiceReference => {}
ChoiceValue::ResourceVersionNumber => {}
ChoiceValue::LatestResourceVersion => {}
ChoiceValue::NONE => fail!("Choice", "value", Fault::NoneUnion),
other => fail!("Choice", "value", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for TransactionPreviewIdentity<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.planning_basis().check()?;
}
Ok(())
}
}
impl CheckRead for TransactionOperationAdmission<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.operation();
if v == 0 { fail!("TransactionOperationAdmission", "operation", Fault::Zero); }
}
{
self.preview().check()?;
}
Ok(())
}
}
impl CheckRead for TransactionOpen<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionCommitting<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionCommitted<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionFailed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.failing_operation();
if v == 0 { fail!("TransactionFailed", "failing_operation", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for TransactionReverted<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionExpired<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionStatus<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.state_type() {
TransactionState::TransactionOpen => {}
TransactionState::TransactionCommitting => {}
TransactionState::TransactionCommitted => {}
TransactionState::TransactionFailed => match self.state_as_transaction_failed() { Some(v) => v.check()?, None => fail!("TransactionStatus", "state", Fault::Absent) },
TransactionState::TransactionReverted => {}
TransactionState::TransactionExpired => {}
TransactionState::NONE => fail!("TransactionStatus", "state", Fault::NoneUnion),
other => fail!("TransactionStatus", "state", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.applied_operations();
if v > self.accepted_operations() { fail!("TransactionStatus", "applied_operations", Fault::Order { other: "accepted_operations", must_be: "at most" }); }
}
Ok(())
}
}
impl CheckRead for AttachedTransaction<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionById<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ImpactDiagnostic<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.kind() else { fail!("ImpactDiagnostic", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("ImpactDiagnostic", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ImpactComplete<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ImpactIncomplete<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.diagnostics();
if v.len() == 0 { fail!("ImpactIncomplete", "diagnostics", Fault::Empty); }
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for ConfigurationCoverage<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for AllBranchCoverage<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for UnbranchedCoverage<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DeclaredBranchCoverage<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for SelectedBranchCoverage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.keys();
if v.len() == 0 { fail!("SelectedBranchCoverage", "keys", Fault::Empty); }
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for NodeCoverage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
match self.branches_type() {
NodeBranchCoverage::ConfigurationCoverage => {}
NodeBranchCoverage::AllBranchCoverage => {}
NodeBranchCoverage::UnbranchedCoverage => {}
NodeBranchCoverage::DeclaredBranchCoverage => {}
NodeBranchCoverage::SelectedBranchCoverage => match self.branches_as_selected_branch_coverage() { Some(v) => v.check()?, None => fail!("NodeCoverage", "branches", Fault::Absent) },
NodeBranchCoverage::NONE => fail!("NodeCoverage", "branches", Fault::NoneUnion),
other => fail!("NodeCoverage", "branches", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for AttributedNode<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.coverage().check()?;
}
{
let v = self.operations();
if v.len() == 0 { fail!("AttributedNode", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for GateBoundary<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.branches_type() {
BranchCoverage::AllBranchCoverage => {}
BranchCoverage::UnbranchedCoverage => {}
BranchCoverage::DeclaredBranchCoverage => {}
BranchCoverage::SelectedBranchCoverage => match self.branches_as_selected_branch_coverage() { Some(v) => v.check()?, None => fail!("GateBoundary", "branches", Fault::Absent) },
BranchCoverage::NONE => fail!("GateBoundary", "branches", Fault::NoneUnion),
other => fail!("GateBoundary", "branches", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for AttributedGateBoundary<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.boundary().check()?;
}
{
let v = self.operations();
if v.len() == 0 { fail!("AttributedGateBoundary", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for QuiesceSubgraph<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.nodes();
for e in v.iter() { e.check()?; }
}
{
let v = self.gate_boundaries();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for NoPause<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for SubgraphPause<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.scope().check()?;
}
Ok(())
}
}
impl CheckRead for DomainPause<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for CreateConfigurationOperation<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for AlterConfigurationOperation<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for DropConfigurationOperation<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for AlterDomainOperation<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for StartDomainOperation<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for StopDomainOperation<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for CreateResourceOperation<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ResourceVersionNumber<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for LatestResourceVersion<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for RebindResourceOperation<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.requested_type() {
RequestedResourceVersion::ResourceVersionNumber => {}
RequestedResourceVersion::LatestResourceVersion => {}
RequestedResourceVersion::NONE => fail!("RebindResourceOperation", "requested", Fault::NoneUnion),
other => fail!("RebindResourceOperation", "requested", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ResetWasmStateOperation<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ConfigurationReason<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
let Some(v) = self.aspect() else { fail!("ConfigurationReason", "aspect", Fault::Absent); }; if v.variant_name().is_none() { fail!("ConfigurationReason", "aspect", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for DomainPlacementReason<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DomainStartReason<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DomainStopReason<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ResourceCatalogReason<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ResourceRebindingReason<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for WasmStateResetReason<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for OperationReason<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.reason_type() {
OperationImpactReason::ConfigurationReason => match self.reason_as_configuration_reason() { Some(v) => v.check()?, None => fail!("OperationReason", "reason", Fault::Absent) },
OperationImpactReason::DomainPlacementReason => {}
OperationImpactReason::DomainStartReason => {}
OperationImpactReason::DomainStopReason => {}
OperationImpactReason::ResourceCatalogReason => {}
OperationImpactReason::ResourceRebindingReason => match self.reason_as_resource_rebinding_reason() { Some(v) => v.check()?, None => fail!("OperationReason", "reason", Fault::Absent) },
OperationImpactReason::WasmStateResetReason => match self.reason_as_wasm_state_reset_reason() { Some(v) => v.check()?, None => fail!("OperationReason", "reason", Fault::Absent) },
OperationImpactReason::NONE => fail!("OperationReason", "reason", Fault::NoneUnion),
other => fail!("OperationReason", "reason", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for TopologyEdge<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.source().check()?;
}
{
self.target().check()?;
}
{
let Some(v) = self.kind() else { fail!("TopologyEdge", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("TopologyEdge", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.operations();
if v.len() == 0 { fail!("TopologyEdge", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for ImpactTopology<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.nodes();
for e in v.iter() { e.check()?; }
}
{
let v = self.edges();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for AffectedTopology<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.before().check()?;
}
{
self.after().check()?;
}
Ok(())
}
}
impl CheckRead for ConfigurationCreated<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for ConfigurationChanged<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for ConfigurationDropped<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for ConfigurationImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.transition_type() {
ConfigurationTransition::ConfigurationCreated => match self.transition_as_configuration_created() { Some(v) => v.check()?, None => fail!("ConfigurationImpact", "transition", Fault::Absent) },
ConfigurationTransition::ConfigurationChanged => match self.transition_as_configuration_changed() { Some(v) => v.check()?, None => fail!("ConfigurationImpact", "transition", Fault::Absent) },
ConfigurationTransition::ConfigurationDropped => match self.transition_as_configuration_dropped() { Some(v) => v.check()?, None => fail!("ConfigurationImpact", "transition", Fault::Absent) },
ConfigurationTransition::NONE => fail!("ConfigurationImpact", "transition", Fault::NoneUnion),
other => fail!("ConfigurationImpact", "transition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.operations();
if v.len() == 0 { fail!("ConfigurationImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for ResourceCatalogImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.action() else { fail!("ResourceCatalogImpact", "action", Fault::Absent); }; if v.variant_name().is_none() { fail!("ResourceCatalogImpact", "action", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.operations();
if v.len() == 0 { fail!("ResourceCatalogImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for ResourceBindingImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
match self.requested_type() {
RequestedResourceVersion::ResourceVersionNumber => {}
RequestedResourceVersion::LatestResourceVersion => {}
RequestedResourceVersion::NONE => fail!("ResourceBindingImpact", "requested", Fault::NoneUnion),
other => fail!("ResourceBindingImpact", "requested", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.operations();
if v.len() == 0 { fail!("ResourceBindingImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for DomainLifecycleImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.action() else { fail!("DomainLifecycleImpact", "action", Fault::Absent); }; if v.variant_name().is_none() { fail!("DomainLifecycleImpact", "action", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.operations();
if v.len() == 0 { fail!("DomainLifecycleImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for OwnershipMoveImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
let v = self.operations();
if v.len() == 0 { fail!("OwnershipMoveImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for ActivationImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
let Some(v) = self.action() else { fail!("ActivationImpact", "action", Fault::Absent); }; if v.variant_name().is_none() { fail!("ActivationImpact", "action", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.operations();
if v.len() == 0 { fail!("ActivationImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for RebuildImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
let Some(v) = self.reason() else { fail!("RebuildImpact", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("RebuildImpact", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.operations();
if v.len() == 0 { fail!("RebuildImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for StateResetImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
let Some(v) = self.state() else { fail!("StateResetImpact", "state", Fault::Absent); }; if v.variant_name().is_none() { fail!("StateResetImpact", "state", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.operations();
if v.len() == 0 { fail!("StateResetImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for ForceFlushImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
let v = self.operations();
if v.len() == 0 { fail!("ForceFlushImpact", "operations", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for ImpactEffects<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.changed_configuration();
for e in v.iter() { e.check()?; }
}
{
self.topology().check()?;
}
{
let v = self.ownership_moves();
for e in v.iter() { e.check()?; }
}
{
let v = self.lifecycle();
for e in v.iter() { e.check()?; }
}
{
let v = self.activations();
for e in v.iter() { e.check()?; }
}
{
let v = self.rebuilds();
for e in v.iter() { e.check()?; }
}
{
let v = self.state_resets();
for e in v.iter() { e.check()?; }
}
{
let v = self.force_flushes();
for e in v.iter() { e.check()?; }
}
{
let v = self.resource_catalog();
for e in v.iter() { e.check()?; }
}
{
let v = self.resource_bindings();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for PlannedStepImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.completeness_type() {
ImpactCompleteness::ImpactComplete => {}
ImpactCompleteness::ImpactIncomplete => match self.completeness_as_impact_incomplete() { Some(v) => v.check()?, None => fail!("PlannedStepImpact", "completeness", Fault::Absent) },
ImpactCompleteness::NONE => fail!("PlannedStepImpact", "completeness", Fault::NoneUnion),
other => fail!("PlannedStepImpact", "completeness", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
match self.pause_type() {
PauseRequirement::NoPause => {}
PauseRequirement::SubgraphPause => match self.pause_as_subgraph_pause() { Some(v) => v.check()?, None => fail!("PlannedStepImpact", "pause", Fault::Absent) },
PauseRequirement::DomainPause => {}
PauseRequirement::NONE => fail!("PlannedStepImpact", "pause", Fault::NoneUnion),
other => fail!("PlannedStepImpact", "pause", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
self.effects().check()?;
}
Ok(())
}
}
impl CheckRead for QuiescenceRequested<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for QuiescenceConfirmed<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for QuiescenceFailed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.diagnostic().check()?;
}
Ok(())
}
}
impl CheckRead for QuiescenceUncertain<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.diagnostic().check()?;
}
Ok(())
}
}
impl CheckRead for QuiescenceReleased<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for QuiescenceOutcomeEntry<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.outcome_type() {
QuiescenceOutcome::QuiescenceRequested => {}
QuiescenceOutcome::QuiescenceConfirmed => {}
QuiescenceOutcome::QuiescenceFailed => match self.outcome_as_quiescence_failed() { Some(v) => v.check()?, None => fail!("QuiescenceOutcomeEntry", "outcome", Fault::Absent) },
QuiescenceOutcome::QuiescenceUncertain => match self.outcome_as_quiescence_uncertain() { Some(v) => v.check()?, None => fail!("QuiescenceOutcomeEntry", "outcome", Fault::Absent) },
QuiescenceOutcome::QuiescenceReleased => {}
QuiescenceOutcome::NONE => fail!("QuiescenceOutcomeEntry", "outcome", Fault::NoneUnion),
other => fail!("QuiescenceOutcomeEntry", "outcome", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ActualQuiescence<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.requirement_type() {
PauseRequirement::NoPause => {}
PauseRequirement::SubgraphPause => match self.requirement_as_subgraph_pause() { Some(v) => v.check()?, None => fail!("ActualQuiescence", "requirement", Fault::Absent) },
PauseRequirement::DomainPause => {}
PauseRequirement::NONE => fail!("ActualQuiescence", "requirement", Fault::NoneUnion),
other => fail!("ActualQuiescence", "requirement", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.outcomes();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for StepUnattempted<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for StepApplying<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for StepApplied<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for StepFailed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.diagnostic().check()?;
}
Ok(())
}
}
impl CheckRead for ActualStepImpact<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.outcome_type() {
ExecutionStepOutcome::StepUnattempted => {}
ExecutionStepOutcome::StepApplying => {}
ExecutionStepOutcome::StepApplied => {}
ExecutionStepOutcome::StepFailed => match self.outcome_as_step_failed() { Some(v) => v.check()?, None => fail!("ActualStepImpact", "outcome", Fault::Absent) },
ExecutionStepOutcome::NONE => fail!("ActualStepImpact", "outcome", Fault::NoneUnion),
other => fail!("ActualStepImpact", "outcome", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.quiescence();
for e in v.iter() { e.check()?; }
}
{
self.effects().check()?;
}
Ok(())
}
}
impl CheckRead for ExecutionStepReport<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
check_struct_operation_range(self.operations())?;
}
{
self.planned().check()?;
}
{
self.actual().check()?;
}
Ok(())
}
}
impl CheckRead for OperationReport<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.number();
if v == 0 { fail!("OperationReport", "number", Fault::Zero); }
}
{
match self.operation_type() {
TransactionOperation::CreateConfigurationOperation => match self.operation_as_create_configuration_operation() { Some(v) => v.check()?, None => fail!("OperationReport", "operation", Fault::Absent) },
TransactionOperation::AlterConfigurationOperation => match self.operation_as_alter_configuration_operation() { Some(v) => v.check()?, None => fail!("OperationReport", "operation", Fault::Absent) },
TransactionOperation::DropConfigurationOperation => match self.operation_as_drop_configuration_operation() { Some(v) => v.check()?, None => fail!("OperationReport", "operation", Fault::Absent) },
TransactionOperation::AlterDomainOperation => {}
TransactionOperation::StartDomainOperation => {}
TransactionOperation::StopDomainOperation => {}
TransactionOperation::CreateResourceOperation => {}
TransactionOperation::RebindResourceOperation => match self.operation_as_rebind_resource_operation() { Some(v) => v.check()?, None => fail!("OperationReport", "operation", Fault::Absent) },
TransactionOperation::ResetWasmStateOperation => {}
TransactionOperation::NONE => fail!("OperationReport", "operation", Fault::NoneUnion),
other => fail!("OperationReport", "operation", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
check_struct_operation_range(self.execution_step())?;
}
{
match self.completeness_type() {
ImpactCompleteness::ImpactComplete => {}
ImpactCompleteness::ImpactIncomplete => match self.completeness_as_impact_incomplete() { Some(v) => v.check()?, None => fail!("OperationReport", "completeness", Fault::Absent) },
ImpactCompleteness::NONE => fail!("OperationReport", "completeness", Fault::NoneUnion),
other => fail!("OperationReport", "completeness", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.reasons();
for e in v.iter() { e.check()?; }
}
{
self.contribution().check()?;
}
Ok(())
}
}
impl CheckRead for TransactionImpactReport<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.planning_basis().check()?;
}
{
match self.completeness_type() {
ImpactCompleteness::ImpactComplete => {}
ImpactCompleteness::ImpactIncomplete => match self.completeness_as_impact_incomplete() { Some(v) => v.check()?, None => fail!("TransactionImpactReport", "completeness", Fault::Absent) },
ImpactCompleteness::NONE => fail!("TransactionImpactReport", "completeness", Fault::NoneUnion),
other => fail!("TransactionImpactReport", "completeness", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.operations();
for e in v.iter() { e.check()?; }
}
{
let v = self.execution_steps();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for ResourceDirectory<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ResourceFile<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ResourceEntry<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.content_type() {
ResourceEntryContent::ResourceDirectory => {}
ResourceEntryContent::ResourceFile => {}
ResourceEntryContent::NONE => fail!("ResourceEntry", "content", Fault::NoneUnion),
other => fail!("ResourceEntry", "content", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ResourceEntriesListed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.entries();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for ResourceEntriesUnavailable<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ResourceVersionDescription<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.version();
if v == 0 { fail!("ResourceVersionDescription", "version", Fault::Zero); }
}
{
match self.entries_type() {
ResourceVersionEntries::ResourceEntriesListed => match self.entries_as_resource_entries_listed() { Some(v) => v.check()?, None => fail!("ResourceVersionDescription", "entries", Fault::Absent) },
ResourceVersionEntries::ResourceEntriesUnavailable => {}
ResourceVersionEntries::NONE => fail!("ResourceVersionDescription", "entries", Fault::NoneUnion),
other => fail!("ResourceVersionDescription", "entries", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ResourceUsage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
{
let v = self.version();
if v == 0 { fail!("ResourceUsage", "version", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for ResourceDescription<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.latest_version() {
if v == 0 { fail!("ResourceDescription", "latest_version", Fault::Zero); }
}
}
{
let v = self.versions();
for e in v.iter() { e.check()?; }
}
{
let v = self.usages();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for ScalarFieldType<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.scalar() else { fail!("ScalarFieldType", "scalar", Fault::Absent); }; if v.variant_name().is_none() { fail!("ScalarFieldType", "scalar", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for FixedListFieldType<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.element().check()?;
}
{
let v = self.length();
if v == 0 { fail!("FixedListFieldType", "length", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for ListFieldType<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.element().check()?;
}
Ok(())
}
}
impl CheckRead for FieldType<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.shape_type() {
FieldTypeShape::ScalarFieldType => match self.shape_as_scalar_field_type() { Some(v) => v.check()?, None => fail!("FieldType", "shape", Fault::Absent) },
FieldTypeShape::FixedListFieldType => match self.shape_as_fixed_list_field_type() { Some(v) => v.check()?, None => fail!("FieldType", "shape", Fault::Absent) },
FieldTypeShape::ListFieldType => match self.shape_as_list_field_type() { Some(v) => v.check()?, None => fail!("FieldType", "shape", Fault::Absent) },
FieldTypeShape::NONE => fail!("FieldType", "shape", Fault::NoneUnion),
other => fail!("FieldType", "shape", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for RowField<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.field_type().check()?;
}
Ok(())
}
}
impl CheckRead for RowBranch<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.fields();
if v.len() == 0 { fail!("RowBranch", "fields", Fault::Empty); }
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for RowSchema<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.fields();
for e in v.iter() { e.check()?; }
}
{
if let Some(v) = self.branch() { v.check()?; }
}
Ok(())
}
}
impl CheckRead for NullCell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for RedactedCell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for U8Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for I8Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for U16Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for I16Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for U32Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for I32Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for U64Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for I64Cell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for F32Cell<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.value() else { fail!("F32Cell", "value", Fault::Absent); };
}
Ok(())
}
}
impl CheckRead for F64Cell<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.value() else { fail!("F64Cell", "value", Fault::Absent); };
}
Ok(())
}
}
impl CheckRead for BoolCell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for StringCell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for BytesCell<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.value();
}
Ok(())
}
}
impl CheckRead for DatetimeCell<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ListCell<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.elements();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for Cell<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.value_type() {
CellValue::NullCell => {}
CellValue::RedactedCell => {}
CellValue::U8Cell => {}
CellValue::I8Cell => {}
CellValue::U16Cell => {}
CellValue::I16Cell => {}
CellValue::U32Cell => {}
CellValue::I32Cell => {}
CellValue::U64Cell => {}
CellValue::I64Cell => {}
CellValue::F32Cell => match self.value_as_f32_cell() { Some(v) => v.check()?, None => fail!("Cell", "value", Fault::Absent) },
CellValue::F64Cell => match self.value_as_f64_cell() { Some(v) => v.check()?, None => fail!("Cell", "value", Fault::Absent) },
CellValue::BoolCell => {}
CellValue::StringCell => {}
CellValue::DatetimeCell => {}
CellValue::ListCell => match self.value_as_list_cell() { Some(v) => v.check()?, None => fail!("Cell", "value", Fault::Absent) },
CellValue::BytesCell => match self.value_as_bytes_cell() { Some(v) => v.check()?, None => fail!("Cell", "value", Fault::Absent) },
CellValue::NONE => fail!("Cell", "value", Fault::NoneUnion),
other => fail!("Cell", "value", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for Row<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.cells();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for BranchKey<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.cells();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for RowBatch<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.branch_key() { v.check()?; }
}
{
let v = self.rows();
if v.len() == 0 { fail!("RowBatch", "rows", Fault::Empty); }
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for StoppedDomainClock<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for UninstalledDomainClock<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for UnpacedDomainClock<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for PacedDomainClock<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.period_nanos();
if v == 0 { fail!("PacedDomainClock", "period_nanos", Fault::Zero); }
}
{
let Some(v) = self.time_rate() else { fail!("PacedDomainClock", "time_rate", Fault::Absent); };
if !(v.is_finite() && v > 0.0) { fail!("PacedDomainClock", "time_rate", Fault::NotPositiveFinite); }
}
Ok(())
}
}
impl CheckRead for DomainClockObservation<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.state_type() {
DomainClockObservedState::StoppedDomainClock => {}
DomainClockObservedState::UninstalledDomainClock => {}
DomainClockObservedState::UnpacedDomainClock => {}
DomainClockObservedState::PacedDomainClock => match self.state_as_paced_domain_clock() { Some(v) => v.check()?, None => fail!("DomainClockObservation", "state", Fault::Absent) },
DomainClockObservedState::NONE => fail!("DomainClockObservation", "state", Fault::NoneUnion),
other => fail!("DomainClockObservation", "state", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for SequentialProducerWindow<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ParallelProducerWindow<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.max();
if v == 0 { fail!("ParallelProducerWindow", "max", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for BackupCut<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.kind() else { fail!("BackupCut", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("BackupCut", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for BackupDomainSummary<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.cut().check()?;
}
Ok(())
}
}
impl CheckRead for BackupArchiveSummary<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.total_bytes();
if v == 0 { fail!("BackupArchiveSummary", "total_bytes", Fault::Zero); }
}
{
self.digest().check()?;
}
{
let Some(v) = self.resources() else { fail!("BackupArchiveSummary", "resources", Fault::Absent); }; if v.variant_name().is_none() { fail!("BackupArchiveSummary", "resources", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.domains();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for RestoreStepReport<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.kind() else { fail!("RestoreStepReport", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreStepReport", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let Some(v) = self.outcome() else { fail!("RestoreStepReport", "outcome", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreStepReport", "outcome", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for RestoredUsers<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for RestoredDomain<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.planned_models() { v.check()?; }
}
Ok(())
}
}
impl CheckRead for RestoreReport<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.mode() else { fail!("RestoreReport", "mode", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreReport", "mode", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.total_bytes();
if v == 0 { fail!("RestoreReport", "total_bytes", Fault::Zero); }
}
{
self.digest().check()?;
}
{
let v = self.domains();
for e in v.iter() { e.check()?; }
}
{
let v = self.steps();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for CommandRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.expected_preview() { v.check()?; }
}
Ok(())
}
}
impl CheckRead for SuggestRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.page_size();
if (v as u64) < 1 || (v as u64) > 100 { fail!("SuggestRequest", "page_size", Fault::OutOfRange { value: v as u64, min: 1, max: 100 }); }
}
Ok(())
}
}
impl CheckRead for ChoiceLookupRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.target() else { fail!("ChoiceLookupRequest", "target", Fault::Absent); }; if v.variant_name().is_none() { fail!("ChoiceLookupRequest", "target", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.dependencies();
for e in v.iter() { e.check()?; }
}
{
let v = self.page_size();
if (v as u64) < 1 || (v as u64) > 100 { fail!("ChoiceLookupRequest", "page_size", Fault::OutOfRange { value: v as u64, min: 1, max: 100 }); }
}
Ok(())
}
}
impl CheckRead for ListDomainsRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for SelectDomainRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for AttachTransactionRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for InspectTransactionRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.target_type() {
InspectionTarget::AttachedTransaction => {}
InspectionTarget::TransactionById => {}
InspectionTarget::NONE => fail!("InspectTransactionRequest", "target", Fault::NoneUnion),
other => fail!("InspectTransactionRequest", "target", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
if let Some(v) = self.operation() {
if v == 0 { fail!("InspectTransactionRequest", "operation", Fault::Zero); }
}
}
Ok(())
}
}
impl CheckRead for SubscribeRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.subscription_type() else { fail!("SubscribeRequest", "subscription_type", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscribeRequest", "subscription_type", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for UnsubscribeRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for CancelRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.target_request_id();
if v == 0 { fail!("CancelRequest", "target_request_id", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for AttachDomainClockRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DetachDomainClockRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for OpenIngestorRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.expected_fields();
if v.len() == 0 { fail!("OpenIngestorRequest", "expected_fields", Fault::Empty); }
for e in v.iter() { e.check()?; }
}
{
let v = self.max_outstanding_batches();
if (v as u64) > 1024 { fail!("OpenIngestorRequest", "max_outstanding_batches", Fault::OutOfRange { value: v as u64, min: 0, max: 1024 }); }
if v == 0 { fail!("OpenIngestorRequest", "max_outstanding_batches", Fault::Zero); }
}
{
let v = self.max_outstanding_bytes();
if (v as u64) > 33554432 { fail!("OpenIngestorRequest", "max_outstanding_bytes", Fault::OutOfRange { value: v as u64, min: 0, max: 33554432 }); }
if v == 0 { fail!("OpenIngestorRequest", "max_outstanding_bytes", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for SubmitBatchRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.producer();
if v == 0 { fail!("SubmitBatchRequest", "producer", Fault::Zero); }
}
{
let v = self.batch();
if v.len() == 0 { fail!("SubmitBatchRequest", "batch", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for CloseIngestorRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.producer();
if v == 0 { fail!("CloseIngestorRequest", "producer", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for OpenEmitterRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.expected_fields();
if v.len() == 0 { fail!("OpenEmitterRequest", "expected_fields", Fault::Empty); }
for e in v.iter() { e.check()?; }
}
{
let v = self.max_outstanding_batches();
if (v as u64) > 1024 { fail!("OpenEmitterRequest", "max_outstanding_batches", Fault::OutOfRange { value: v as u64, min: 0, max: 1024 }); }
if v == 0 { fail!("OpenEmitterRequest", "max_outstanding_batches", Fault::Zero); }
}
{
let v = self.max_outstanding_bytes();
if (v as u64) > 33554432 { fail!("OpenEmitterRequest", "max_outstanding_bytes", Fault::OutOfRange { value: v as u64, min: 0, max: 33554432 }); }
if v == 0 { fail!("OpenEmitterRequest", "max_outstanding_bytes", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for ReadEmitterBatchRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.consumer();
if v == 0 { fail!("ReadEmitterBatchRequest", "consumer", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for SettleEmitterBatchRequest<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.reference();
if v.len() != 16 { fail!("SettleEmitterBatchRequest", "reference", Fault::Length { expected: 16, found: v.len() }); }
}
{
if let Some(v) = self.decision() { if v.variant_name().is_none() { fail!("SettleEmitterBatchRequest", "decision", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckRead for CloseEmitterRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for CommandCompleted<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionDetached<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for TransactionTakenOver<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for OutcomeUnknown<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.cause() else { fail!("OutcomeUnknown", "cause", Fault::Absent); }; if v.variant_name().is_none() { fail!("OutcomeUnknown", "cause", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ExecutionReferenceConflict<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.conflict() else { fail!("ExecutionReferenceConflict", "conflict", Fault::Absent); }; if v.variant_name().is_none() { fail!("ExecutionReferenceConflict", "conflict", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ExecutionReferenceExpired<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for PreviewStale<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.expected().check()?;
}
{
self.current().check()?;
}
Ok(())
}
}
impl CheckRead for StatementOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
StatementDisposition::CommandCompleted => {}
StatementDisposition::RequestFailed => {}
StatementDisposition::LeaderRedirect => {}
StatementDisposition::NONE => fail!("StatementOutcome", "disposition", Fault::NoneUnion),
other => fail!("StatementOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.diagnostics();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for CommandOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.origin() else { fail!("CommandOutcome", "origin", Fault::Absent); }; if v.variant_name().is_none() { fail!("CommandOutcome", "origin", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
match self.disposition_type() {
CommandDisposition::CommandCompleted => {}
CommandDisposition::RequestFailed => {}
CommandDisposition::LeaderRedirect => {}
CommandDisposition::TransactionDetached => {}
CommandDisposition::TransactionTakenOver => {}
CommandDisposition::OutcomeUnknown => match self.disposition_as_outcome_unknown() { Some(v) => v.check()?, None => fail!("CommandOutcome", "disposition", Fault::Absent) },
CommandDisposition::ExecutionReferenceConflict => match self.disposition_as_execution_reference_conflict() { Some(v) => v.check()?, None => fail!("CommandOutcome", "disposition", Fault::Absent) },
CommandDisposition::ExecutionReferenceExpired => {}
CommandDisposition::PreviewStale => match self.disposition_as_preview_stale() { Some(v) => v.check()?, None => fail!("CommandOutcome", "disposition", Fault::Absent) },
CommandDisposition::NONE => fail!("CommandOutcome", "disposition", Fault::NoneUnion),
other => fail!("CommandOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.diagnostics();
for e in v.iter() { e.check()?; }
}
{
let v = self.statements();
for e in v.iter() { e.check()?; }
}
{
if let Some(v) = self.transaction() { v.check()?; }
}
{
if let Some(v) = self.transaction_admission() { v.check()?; }
}
{
if let Some(v) = self.inspection() { v.check()?; }
}
{
if let Some(v) = self.resource() { v.check()?; }
}
{
if let Some(v) = self.backup() { v.check()?; }
}
{
if let Some(v) = self.restore() { v.check()?; }
}
Ok(())
}
}
impl CheckRead for TransactionAttached<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.transaction().check()?;
}
Ok(())
}
}
impl CheckRead for TransactionAlreadyFinished<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.transaction().check()?;
}
Ok(())
}
}
impl CheckRead for AttachOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
AttachDisposition::TransactionAttached => match self.disposition_as_transaction_attached() { Some(v) => v.check()?, None => fail!("AttachOutcome", "disposition", Fault::Absent) },
AttachDisposition::TransactionAlreadyFinished => match self.disposition_as_transaction_already_finished() { Some(v) => v.check()?, None => fail!("AttachOutcome", "disposition", Fault::Absent) },
AttachDisposition::RequestFailed => {}
AttachDisposition::LeaderRedirect => {}
AttachDisposition::NONE => fail!("AttachOutcome", "disposition", Fault::NoneUnion),
other => fail!("AttachOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.diagnostics();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for TextEdit<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for Suggestion<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.kind() else { fail!("Suggestion", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("Suggestion", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for SuggestOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.status() else { fail!("SuggestOutcome", "status", Fault::Absent); }; if v.variant_name().is_none() { fail!("SuggestOutcome", "status", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.suggestions();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for ChoiceOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.status() else { fail!("ChoiceOutcome", "status", Fault::Absent); }; if v.variant_name().is_none() { fail!("ChoiceOutcome", "status", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.choices();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for UnpacedDomain<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for PacedDomain<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.period_nanos();
if v == 0 { fail!("PacedDomain", "period_nanos", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for DomainInfo<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.status() else { fail!("DomainInfo", "status", Fault::Absent); }; if v.variant_name().is_none() { fail!("DomainInfo", "status", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
match self.pace_type() {
DomainPace::UnpacedDomain => {}
DomainPace::PacedDomain => match self.pace_as_paced_domain() { Some(v) => v.check()?, None => fail!("DomainInfo", "pace", Fault::Absent) },
DomainPace::NONE => fail!("DomainInfo", "pace", Fault::NoneUnion),
other => fail!("DomainInfo", "pace", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for DomainList<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.domains();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for DomainSelected<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DomainNotFound<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DomainSelectionOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.selection_type() {
DomainSelection::DomainSelected => {}
DomainSelection::DomainNotFound => {}
DomainSelection::NONE => fail!("DomainSelectionOutcome", "selection", Fault::NoneUnion),
other => fail!("DomainSelectionOutcome", "selection", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for TransactionInspected<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.transaction().check()?;
}
{
self.report().check()?;
}
Ok(())
}
}
impl CheckRead for InspectionRejected<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.rejection() else { fail!("InspectionRejected", "rejection", Fault::Absent); }; if v.variant_name().is_none() { fail!("InspectionRejected", "rejection", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for InspectionOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
InspectionDisposition::TransactionInspected => match self.disposition_as_transaction_inspected() { Some(v) => v.check()?, None => fail!("InspectionOutcome", "disposition", Fault::Absent) },
InspectionDisposition::InspectionRejected => match self.disposition_as_inspection_rejected() { Some(v) => v.check()?, None => fail!("InspectionOutcome", "disposition", Fault::Absent) },
InspectionDisposition::LeaderRedirect => {}
InspectionDisposition::NONE => fail!("InspectionOutcome", "disposition", Fault::NoneUnion),
other => fail!("InspectionOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for SubscriptionHandle<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.generation();
if v == 0 { fail!("SubscriptionHandle", "generation", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for SubscriptionOpened<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.subscription().check()?;
}
{
let Some(v) = self.subscription_type() else { fail!("SubscriptionOpened", "subscription_type", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscriptionOpened", "subscription_type", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
self.schema().check()?;
}
Ok(())
}
}
impl CheckRead for SubscribeOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
SubscribeDisposition::SubscriptionOpened => match self.disposition_as_subscription_opened() { Some(v) => v.check()?, None => fail!("SubscribeOutcome", "disposition", Fault::Absent) },
SubscribeDisposition::RequestFailed => {}
SubscribeDisposition::NONE => fail!("SubscribeOutcome", "disposition", Fault::NoneUnion),
other => fail!("SubscribeOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.diagnostics();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for SubscriptionDeleted<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.subscription().check()?;
}
Ok(())
}
}
impl CheckRead for UnsubscribeOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
UnsubscribeDisposition::SubscriptionDeleted => match self.disposition_as_subscription_deleted() { Some(v) => v.check()?, None => fail!("UnsubscribeOutcome", "disposition", Fault::Absent) },
UnsubscribeDisposition::RequestFailed => {}
UnsubscribeDisposition::NONE => fail!("UnsubscribeOutcome", "disposition", Fault::NoneUnion),
other => fail!("UnsubscribeOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.diagnostics();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for CancelOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.target_request_id();
if v == 0 { fail!("CancelOutcome", "target_request_id", Fault::Zero); }
}
{
let Some(v) = self.state() else { fail!("CancelOutcome", "state", Fault::Absent); }; if v.variant_name().is_none() { fail!("CancelOutcome", "state", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for RequestCancelled<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.stage() else { fail!("RequestCancelled", "stage", Fault::Absent); }; if v.variant_name().is_none() { fail!("RequestCancelled", "stage", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for RequestRejected<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.rejection() else { fail!("RequestRejected", "rejection", Fault::Absent); }; if v.variant_name().is_none() { fail!("RequestRejected", "rejection", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for TransferPart<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.total_bytes();
if v == 0 { fail!("TransferPart", "total_bytes", Fault::Zero); }
}
{
let v = self.chunk();
if v.len() == 0 { fail!("TransferPart", "chunk", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for DomainClockAttached<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.clock().check()?;
}
Ok(())
}
}
impl CheckRead for DomainClockAlreadyAttached<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DomainClockAttachOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
DomainClockAttachDisposition::DomainClockAttached => match self.disposition_as_domain_clock_attached() { Some(v) => v.check()?, None => fail!("DomainClockAttachOutcome", "disposition", Fault::Absent) },
DomainClockAttachDisposition::DomainClockAlreadyAttached => {}
DomainClockAttachDisposition::DomainNotFound => {}
DomainClockAttachDisposition::RequestFailed => {}
DomainClockAttachDisposition::NONE => fail!("DomainClockAttachOutcome", "disposition", Fault::NoneUnion),
other => fail!("DomainClockAttachOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for DomainClockDetached<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DomainClockNotAttached<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for DomainClockDetachOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
DomainClockDetachDisposition::DomainClockDetached => {}
DomainClockDetachDisposition::DomainClockNotAttached => {}
DomainClockDetachDisposition::RequestFailed => {}
DomainClockDetachDisposition::NONE => fail!("DomainClockDetachOutcome", "disposition", Fault::NoneUnion),
other => fail!("DomainClockDetachOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ProducerOpened<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.fields();
if v.len() == 0 { fail!("ProducerOpened", "fields", Fault::Empty); }
for e in v.iter() { e.check()?; }
}
{
self.contract().check()?;
}
{
let v = self.attachment();
if v.len() != 16 { fail!("ProducerOpened", "attachment", Fault::Length { expected: 16, found: v.len() }); }
}
{
match self.window_type() {
ProducerWindow::SequentialProducerWindow => {}
ProducerWindow::ParallelProducerWindow => match self.window_as_parallel_producer_window() { Some(v) => v.check()?, None => fail!("ProducerOpened", "window", Fault::Absent) },
ProducerWindow::NONE => fail!("ProducerOpened", "window", Fault::NoneUnion),
other => fail!("ProducerOpened", "window", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.ack_timeout_nanos();
if v == 0 { fail!("ProducerOpened", "ack_timeout_nanos", Fault::Zero); }
}
{
let v = self.retry_backoff_nanos();
if v == 0 { fail!("ProducerOpened", "retry_backoff_nanos", Fault::Zero); }
}
{
let v = self.retry_max_backoff_nanos();
if v < self.retry_backoff_nanos() { fail!("ProducerOpened", "retry_max_backoff_nanos", Fault::Order { other: "retry_backoff_nanos", must_be: "at least" }); }
}
{
let v = self.granted_batches();
if v == 0 { fail!("ProducerOpened", "granted_batches", Fault::Zero); }
}
{
let v = self.granted_bytes();
if v == 0 { fail!("ProducerOpened", "granted_bytes", Fault::Zero); }
}
{
let v = self.max_batch_bytes();
if v == 0 { fail!("ProducerOpened", "max_batch_bytes", Fault::Zero); }
if v > self.granted_bytes() { fail!("ProducerOpened", "max_batch_bytes", Fault::Order { other: "granted_bytes", must_be: "at most" }); }
}
{
let v = self.max_batch_rows();
if v == 0 { fail!("ProducerOpened", "max_batch_rows", Fault::Zero); }
}
{
let Some(v) = self.admission() else { fail!("ProducerOpened", "admission", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerOpened", "admission", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ProducerRefused<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.refusal() else { fail!("ProducerRefused", "refusal", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerRefused", "refusal", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for OpenIngestorOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
OpenIngestorDisposition::ProducerOpened => match self.disposition_as_producer_opened() { Some(v) => v.check()?, None => fail!("OpenIngestorOutcome", "disposition", Fault::Absent) },
OpenIngestorDisposition::ProducerRefused => match self.disposition_as_producer_refused() { Some(v) => v.check()?, None => fail!("OpenIngestorOutcome", "disposition", Fault::Absent) },
OpenIngestorDisposition::NONE => fail!("OpenIngestorOutcome", "disposition", Fault::NoneUnion),
other => fail!("OpenIngestorOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for SubmissionNotAdmitted<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.refusal() else { fail!("SubmissionNotAdmitted", "refusal", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubmissionNotAdmitted", "refusal", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for SubmissionCompleted<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for SubmissionFailed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.failure() else { fail!("SubmissionFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubmissionFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for SubmissionOutcomeUnknown<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.cause() else { fail!("SubmissionOutcomeUnknown", "cause", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubmissionOutcomeUnknown", "cause", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for SubmissionOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
SubmissionDisposition::SubmissionNotAdmitted => match self.disposition_as_submission_not_admitted() { Some(v) => v.check()?, None => fail!("SubmissionOutcome", "disposition", Fault::Absent) },
SubmissionDisposition::SubmissionCompleted => {}
SubmissionDisposition::SubmissionFailed => match self.disposition_as_submission_failed() { Some(v) => v.check()?, None => fail!("SubmissionOutcome", "disposition", Fault::Absent) },
SubmissionDisposition::SubmissionOutcomeUnknown => match self.disposition_as_submission_outcome_unknown() { Some(v) => v.check()?, None => fail!("SubmissionOutcome", "disposition", Fault::Absent) },
SubmissionDisposition::NONE => fail!("SubmissionOutcome", "disposition", Fault::NoneUnion),
other => fail!("SubmissionOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ProducerClosed<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ProducerNotOpen<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for CloseIngestorOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
CloseIngestorDisposition::ProducerClosed => {}
CloseIngestorDisposition::ProducerNotOpen => {}
CloseIngestorDisposition::NONE => fail!("CloseIngestorOutcome", "disposition", Fault::NoneUnion),
other => fail!("CloseIngestorOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for SequentialConsumerWindow<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ParallelConsumerWindow<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for EmitterOpened<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.fields();
for e in v.iter() { e.check()?; }
}
{
self.contract().check()?;
}
{
match self.window_type() {
ConsumerWindow::SequentialConsumerWindow => {}
ConsumerWindow::ParallelConsumerWindow => {}
ConsumerWindow::NONE => fail!("EmitterOpened", "window", Fault::NoneUnion),
other => fail!("EmitterOpened", "window", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for EmitterRefused<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.refusal() { if v.variant_name().is_none() { fail!("EmitterRefused", "refusal", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckRead for OpenEmitterOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
OpenEmitterDisposition::EmitterOpened => match self.disposition_as_emitter_opened() { Some(v) => v.check()?, None => fail!("OpenEmitterOutcome", "disposition", Fault::Absent) },
OpenEmitterDisposition::EmitterRefused => match self.disposition_as_emitter_refused() { Some(v) => v.check()?, None => fail!("OpenEmitterOutcome", "disposition", Fault::Absent) },
OpenEmitterDisposition::NONE => fail!("OpenEmitterOutcome", "disposition", Fault::NoneUnion),
other => fail!("OpenEmitterOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for EmitterBatchReceived<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.identity();
if v.len() != 16 { fail!("EmitterBatchReceived", "identity", Fault::Length { expected: 16, found: v.len() }); }
}
{
let v = self.reference();
if v.len() != 16 { fail!("EmitterBatchReceived", "reference", Fault::Length { expected: 16, found: v.len() }); }
}
{
if let Some(v) = self.branch_fingerprint() {
if v.len() != 32 { fail!("EmitterBatchReceived", "branch_fingerprint", Fault::Length { expected: 32, found: v.len() }); }
}
}
{
let v = self.batch();
}
Ok(())
}
}
impl CheckRead for EmitterConsumerEnded<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ReadEmitterBatchOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
ReadEmitterDisposition::EmitterBatchReceived => match self.disposition_as_emitter_batch_received() { Some(v) => v.check()?, None => fail!("ReadEmitterBatchOutcome", "disposition", Fault::Absent) },
ReadEmitterDisposition::EmitterConsumerEnded => {}
ReadEmitterDisposition::NONE => fail!("ReadEmitterBatchOutcome", "disposition", Fault::NoneUnion),
other => fail!("ReadEmitterBatchOutcome", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for SettleEmitterBatchOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.disposition() { if v.variant_name().is_none() { fail!("SettleEmitterBatchOutcome", "disposition", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckRead for CloseEmitterOutcome<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.disposition() { if v.variant_name().is_none() { fail!("CloseEmitterOutcome", "disposition", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckRead for Reply<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.request_id();
if v == 0 { fail!("Reply", "request_id", Fault::Zero); }
}
{
match self.body_type() {
ReplyBody::CommandOutcome => match self.body_as_command_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::AttachOutcome => match self.body_as_attach_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::SuggestOutcome => match self.body_as_suggest_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::DomainList => match self.body_as_domain_list() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::DomainSelectionOutcome => match self.body_as_domain_selection_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::InspectionOutcome => match self.body_as_inspection_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::SubscribeOutcome => match self.body_as_subscribe_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::UnsubscribeOutcome => match self.body_as_unsubscribe_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::CancelOutcome => match self.body_as_cancel_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::RequestCancelled => match self.body_as_request_cancelled() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::RequestRejected => match self.body_as_request_rejected() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::TransferPart => match self.body_as_transfer_part() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::ChoiceOutcome => match self.body_as_choice_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::DomainClockAttachOutcome => match self.body_as_domain_clock_attach_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::DomainClockDetachOutcome => match self.body_as_domain_clock_detach_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::OpenIngestorOutcome => match self.body_as_open_ingestor_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::SubmissionOutcome => match self.body_as_submission_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::CloseIngestorOutcome => match self.body_as_close_ingestor_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::OpenEmitterOutcome => match self.body_as_open_emitter_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::ReadEmitterBatchOutcome => match self.body_as_read_emitter_batch_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::SettleEmitterBatchOutcome => match self.body_as_settle_emitter_batch_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::CloseEmitterOutcome => match self.body_as_close_emitter_outcome() { Some(v) => v.check()?, None => fail!("Reply", "body", Fault::Absent) },
ReplyBody::NONE => fail!("Reply", "body", Fault::NoneUnion),
other => fail!("Reply", "body", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ServerNotice<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.level() else { fail!("ServerNotice", "level", Fault::Absent); }; if v.variant_name().is_none() { fail!("ServerNotice", "level", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for LeaderIsServingNode<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for LeaderIsRemote<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for LeaderUnknown<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for LeadershipObserved<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.leadership_type() {
Leadership::LeaderIsServingNode => {}
Leadership::LeaderIsRemote => {}
Leadership::LeaderUnknown => {}
Leadership::NONE => fail!("LeadershipObserved", "leadership", Fault::NoneUnion),
other => fail!("LeadershipObserved", "leadership", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for DomainsObserved<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.domains();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for ModelEntity<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.node().check()?;
}
Ok(())
}
}
impl CheckRead for ResourceEntity<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
if let Some(v) = self.latest_version() {
if v == 0 { fail!("ResourceEntity", "latest_version", Fault::Zero); }
}
}
Ok(())
}
}
impl CheckRead for DomainEntityEntry<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.entity_type() {
DomainEntity::ModelEntity => match self.entity_as_model_entity() { Some(v) => v.check()?, None => fail!("DomainEntityEntry", "entity", Fault::Absent) },
DomainEntity::ResourceEntity => match self.entity_as_resource_entity() { Some(v) => v.check()?, None => fail!("DomainEntityEntry", "entity", Fault::Absent) },
DomainEntity::NONE => fail!("DomainEntityEntry", "entity", Fault::NoneUnion),
other => fail!("DomainEntityEntry", "entity", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for DomainSnapshotObserved<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.entities();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for ClusterObserved<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for SubscriptionRows<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.subscription().check()?;
}
{
self.batch().check()?;
}
Ok(())
}
}
impl CheckRead for SubscriptionDeliveryLost<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.subscription().check()?;
}
{
let v = self.dropped_rows();
if v == 0 { fail!("SubscriptionDeliveryLost", "dropped_rows", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for SubscriptionRowsSkipped<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.subscription().check()?;
}
{
let Some(v) = self.cause() else { fail!("SubscriptionRowsSkipped", "cause", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscriptionRowsSkipped", "cause", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.skipped_rows();
if v == 0 { fail!("SubscriptionRowsSkipped", "skipped_rows", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for SubscriptionEnded<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.subscription().check()?;
}
{
let Some(v) = self.reason() else { fail!("SubscriptionEnded", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscriptionEnded", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for DomainClockObserved<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
self.clock().check()?;
}
Ok(())
}
}
impl CheckRead for DomainClockTicked<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.generation();
if v == 0 { fail!("DomainClockTicked", "generation", Fault::Zero); }
}
{
let v = self.tick_id();
if v == 0 { fail!("DomainClockTicked", "tick_id", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for DomainClockAttachmentEnded<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.reason() else { fail!("DomainClockAttachmentEnded", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("DomainClockAttachmentEnded", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ProducerAdmissionChanged<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.producer();
if v == 0 { fail!("ProducerAdmissionChanged", "producer", Fault::Zero); }
}
{
let Some(v) = self.admission() else { fail!("ProducerAdmissionChanged", "admission", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerAdmissionChanged", "admission", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ProducerEnded<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.producer();
if v == 0 { fail!("ProducerEnded", "producer", Fault::Zero); }
}
{
let Some(v) = self.reason() else { fail!("ProducerEnded", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerEnded", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ServerShuttingDown<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for ProtocolViolated<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for SessionEnding<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.reason_type() {
SessionEndReason::ServerShuttingDown => {}
SessionEndReason::LeaderRedirect => {}
SessionEndReason::ProtocolViolated => {}
SessionEndReason::NONE => fail!("SessionEnding", "reason", Fault::NoneUnion),
other => fail!("SessionEnding", "reason", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for UploadStart<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.request_id();
if v == 0 { fail!("UploadStart", "request_id", Fault::Zero); }
}
{
let v = self.total_bytes();
if v == 0 { fail!("UploadStart", "total_bytes", Fault::Zero); }
}
Ok(())
}
}
impl CheckRead for UploadChunk<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.bytes();
if v.len() == 0 { fail!("UploadChunk", "bytes", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for ResourceInstalled<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.version();
if v == 0 { fail!("ResourceInstalled", "version", Fault::Zero); }
}
{
let Some(v) = self.origin() else { fail!("ResourceInstalled", "origin", Fault::Absent); }; if v.variant_name().is_none() { fail!("ResourceInstalled", "origin", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for UploadFailed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.failure() else { fail!("UploadFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("UploadFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
if let Some(v) = self.assigned_version() {
if v == 0 { fail!("UploadFailed", "assigned_version", Fault::Zero); }
}
}
Ok(())
}
}
impl CheckRead for BackupDownloadRequest<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for BackupArchiveStart<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.total_bytes();
if v == 0 { fail!("BackupArchiveStart", "total_bytes", Fault::Zero); }
}
{
self.digest().check()?;
}
Ok(())
}
}
impl CheckRead for BackupArchiveChunk<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.bytes();
if v.len() == 0 { fail!("BackupArchiveChunk", "bytes", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for BackupArchiveComplete<'_> {
const NEEDED: bool = false;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
Ok(())
}
}
impl CheckRead for BackupDownloadFailed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.failure() else { fail!("BackupDownloadFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("BackupDownloadFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for RestoreStart<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.request_id();
if v == 0 { fail!("RestoreStart", "request_id", Fault::Zero); }
}
{
let v = self.total_bytes();
if v == 0 { fail!("RestoreStart", "total_bytes", Fault::Zero); }
}
{
self.digest().check()?;
}
Ok(())
}
}
impl CheckRead for RestoreChunk<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.bytes();
if v.len() == 0 { fail!("RestoreChunk", "bytes", Fault::Empty); }
}
Ok(())
}
}
impl CheckRead for RestoreUploadFailed<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let Some(v) = self.failure() else { fail!("RestoreUploadFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreUploadFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckRead for ClientMessage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
let v = self.request_id();
if v == 0 { fail!("ClientMessage", "request_id", Fault::Zero); }
}
{
match self.request_type() {
ClientRequest::CommandRequest => match self.request_as_command_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::SuggestRequest => match self.request_as_suggest_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::ListDomainsRequest => {}
ClientRequest::SelectDomainRequest => {}
ClientRequest::AttachTransactionRequest => {}
ClientRequest::InspectTransactionRequest => match self.request_as_inspect_transaction_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::SubscribeRequest => match self.request_as_subscribe_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::UnsubscribeRequest => {}
ClientRequest::CancelRequest => match self.request_as_cancel_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::ChoiceLookupRequest => match self.request_as_choice_lookup_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::AttachDomainClockRequest => {}
ClientRequest::DetachDomainClockRequest => {}
ClientRequest::OpenIngestorRequest => match self.request_as_open_ingestor_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::SubmitBatchRequest => match self.request_as_submit_batch_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::CloseIngestorRequest => match self.request_as_close_ingestor_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::OpenEmitterRequest => match self.request_as_open_emitter_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::ReadEmitterBatchRequest => match self.request_as_read_emitter_batch_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::SettleEmitterBatchRequest => match self.request_as_settle_emitter_batch_request() { Some(v) => v.check()?, None => fail!("ClientMessage", "request", Fault::Absent) },
ClientRequest::CloseEmitterRequest => {}
ClientRequest::NONE => fail!("ClientMessage", "request", Fault::NoneUnion),
other => fail!("ClientMessage", "request", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for ServerMessage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.body_type() {
ServerBody::Reply => match self.body_as_reply() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::ServerNotice => match self.body_as_server_notice() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::LeadershipObserved => match self.body_as_leadership_observed() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::DomainsObserved => match self.body_as_domains_observed() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::DomainSnapshotObserved => match self.body_as_domain_snapshot_observed() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::ClusterObserved => {}
ServerBody::SubscriptionRows => match self.body_as_subscription_rows() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::SubscriptionDeliveryLost => match self.body_as_subscription_delivery_lost() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::SubscriptionRowsSkipped => match self.body_as_subscription_rows_skipped() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::SubscriptionEnded => match self.body_as_subscription_ended() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::SessionEnding => match self.body_as_session_ending() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::DomainClockObserved => match self.body_as_domain_clock_observed() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::DomainClockAttachmentEnded => match self.body_as_domain_clock_attachment_ended() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::DomainClockTicked => match self.body_as_domain_clock_ticked() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::ProducerAdmissionChanged => match self.body_as_producer_admission_changed() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::ProducerEnded => match self.body_as_producer_ended() { Some(v) => v.check()?, None => fail!("ServerMessage", "body", Fault::Absent) },
ServerBody::NONE => fail!("ServerMessage", "body", Fault::NoneUnion),
other => fail!("ServerMessage", "body", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for UploadMessage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.part_type() {
UploadPart::UploadStart => match self.part_as_upload_start() { Some(v) => v.check()?, None => fail!("UploadMessage", "part", Fault::Absent) },
UploadPart::UploadChunk => match self.part_as_upload_chunk() { Some(v) => v.check()?, None => fail!("UploadMessage", "part", Fault::Absent) },
UploadPart::NONE => fail!("UploadMessage", "part", Fault::NoneUnion),
other => fail!("UploadMessage", "part", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for BackupDownloadMessage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.part_type() {
BackupDownloadPart::BackupArchiveStart => match self.part_as_backup_archive_start() { Some(v) => v.check()?, None => fail!("BackupDownloadMessage", "part", Fault::Absent) },
BackupDownloadPart::BackupArchiveChunk => match self.part_as_backup_archive_chunk() { Some(v) => v.check()?, None => fail!("BackupDownloadMessage", "part", Fault::Absent) },
BackupDownloadPart::BackupArchiveComplete => {}
BackupDownloadPart::BackupDownloadFailed => match self.part_as_backup_download_failed() { Some(v) => v.check()?, None => fail!("BackupDownloadMessage", "part", Fault::Absent) },
BackupDownloadPart::LeaderRedirect => {}
BackupDownloadPart::NONE => fail!("BackupDownloadMessage", "part", Fault::NoneUnion),
other => fail!("BackupDownloadMessage", "part", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for UploadReply<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
UploadDisposition::ResourceInstalled => match self.disposition_as_resource_installed() { Some(v) => v.check()?, None => fail!("UploadReply", "disposition", Fault::Absent) },
UploadDisposition::UploadFailed => match self.disposition_as_upload_failed() { Some(v) => v.check()?, None => fail!("UploadReply", "disposition", Fault::Absent) },
UploadDisposition::LeaderRedirect => {}
UploadDisposition::NONE => fail!("UploadReply", "disposition", Fault::NoneUnion),
other => fail!("UploadReply", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
{
let v = self.diagnostics();
for e in v.iter() { e.check()?; }
}
Ok(())
}
}
impl CheckRead for RestoreMessage<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.part_type() {
RestorePart::RestoreStart => match self.part_as_restore_start() { Some(v) => v.check()?, None => fail!("RestoreMessage", "part", Fault::Absent) },
RestorePart::RestoreChunk => match self.part_as_restore_chunk() { Some(v) => v.check()?, None => fail!("RestoreMessage", "part", Fault::Absent) },
RestorePart::NONE => fail!("RestoreMessage", "part", Fault::NoneUnion),
other => fail!("RestoreMessage", "part", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
impl CheckRead for RestoreReply<'_> {
const NEEDED: bool = true;
#[inline]
fn check(&self) -> Result<(), ProtocolViolation> {
{
match self.disposition_type() {
RestoreDisposition::CommandOutcome => match self.disposition_as_command_outcome() { Some(v) => v.check()?, None => fail!("RestoreReply", "disposition", Fault::Absent) },
RestoreDisposition::RestoreUploadFailed => match self.disposition_as_restore_upload_failed() { Some(v) => v.check()?, None => fail!("RestoreReply", "disposition", Fault::Absent) },
RestoreDisposition::NONE => fail!("RestoreReply", "disposition", Fault::NoneUnion),
other => fail!("RestoreReply", "disposition", Fault::UndeclaredUnion { tag: other.0 }),
}
}
Ok(())
}
}
