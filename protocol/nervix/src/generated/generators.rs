impl Generate for OutcomeOrigin {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ModelKind {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ChoiceTarget {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for DomainPaceChoice {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for PlacementPolicyChoice {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ImpactDiagnosticKind {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ModelChangeAspect {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ImpactEdgeKind {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ResourceCatalogAction {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for DomainLifecycleAction {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ActivationAction {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for RebuildReason {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for StatePurge {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ScalarType {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ProducerAdmission {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for BackupResources {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for BackupCutKind {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for RestoreMode {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for RestoreStepKind {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for RestoreStepOutcome {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for SubscriptionType {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for EmitterBatchDecision {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for UnknownOutcomeCause {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ExecutionReferenceConflictKind {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for SuggestionKind {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for SuggestionStatus {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ChoiceStatus {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for DomainStatus {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for InspectionRejection {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for CancelState {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for CancellationStage {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for RequestRejection {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ProducerRefusal {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for SubmissionRefusal {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ProcessingFailure {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for OutcomeUncertainty {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for EmitterOpenRefusal {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for EmitterSettlement {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for EmitterCloseDisposition {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for NoticeLevel {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for RowsSkippedCause {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for SubscriptionEndReason {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for DomainClockAttachmentEndReason {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ProducerEndReason {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for UploadFailure {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for BackupDownloadFailure {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for RestoreUploadFailure {
fn generate(g: &mut Gen) -> Self { Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }
}
impl Generate for ChoiceValueT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(8) };
match pick {
0 => Self::DomainPaceVariant(alloc::boxed::Box::new(g.nested())),
1 => Self::PlacementPolicyVariant(alloc::boxed::Box::new(g.nested())),
2 => Self::DomainChoiceReference(alloc::boxed::Box::new(g.nested())),
3 => Self::ResourceChoiceReference(alloc::boxed::Box::new(g.nested())),
4 => Self::ModelChoiceReference(alloc::boxed::Box::new(g.nested())),
5 => Self::FieldChoiceReference(alloc::boxed::Box::new(g.nested())),
6 => Self::ResourceVersionNumber(alloc::boxed::Box::new(g.nested())),
7 => Self::LatestResourceVersion(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for TransactionStateT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(6) };
match pick {
0 => Self::TransactionOpen(alloc::boxed::Box::new(g.nested())),
1 => Self::TransactionCommitting(alloc::boxed::Box::new(g.nested())),
2 => Self::TransactionCommitted(alloc::boxed::Box::new(g.nested())),
3 => Self::TransactionFailed(alloc::boxed::Box::new(g.nested())),
4 => Self::TransactionReverted(alloc::boxed::Box::new(g.nested())),
5 => Self::TransactionExpired(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for InspectionTargetT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::AttachedTransaction(alloc::boxed::Box::new(g.nested())),
1 => Self::TransactionById(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ImpactCompletenessT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::ImpactComplete(alloc::boxed::Box::new(g.nested())),
1 => Self::ImpactIncomplete(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for BranchCoverageT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(4) };
match pick {
0 => Self::AllBranchCoverage(alloc::boxed::Box::new(g.nested())),
1 => Self::UnbranchedCoverage(alloc::boxed::Box::new(g.nested())),
2 => Self::DeclaredBranchCoverage(alloc::boxed::Box::new(g.nested())),
3 => Self::SelectedBranchCoverage(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for NodeBranchCoverageT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(5) };
match pick {
0 => Self::ConfigurationCoverage(alloc::boxed::Box::new(g.nested())),
1 => Self::AllBranchCoverage(alloc::boxed::Box::new(g.nested())),
2 => Self::UnbranchedCoverage(alloc::boxed::Box::new(g.nested())),
3 => Self::DeclaredBranchCoverage(alloc::boxed::Box::new(g.nested())),
4 => Self::SelectedBranchCoverage(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for PauseRequirementT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::NoPause(alloc::boxed::Box::new(g.nested())),
1 => Self::SubgraphPause(alloc::boxed::Box::new(g.nested())),
2 => Self::DomainPause(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for RequestedResourceVersionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::ResourceVersionNumber(alloc::boxed::Box::new(g.nested())),
1 => Self::LatestResourceVersion(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for TransactionOperationT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(9) };
match pick {
0 => Self::CreateConfigurationOperation(alloc::boxed::Box::new(g.nested())),
1 => Self::AlterConfigurationOperation(alloc::boxed::Box::new(g.nested())),
2 => Self::DropConfigurationOperation(alloc::boxed::Box::new(g.nested())),
3 => Self::AlterDomainOperation(alloc::boxed::Box::new(g.nested())),
4 => Self::StartDomainOperation(alloc::boxed::Box::new(g.nested())),
5 => Self::StopDomainOperation(alloc::boxed::Box::new(g.nested())),
6 => Self::CreateResourceOperation(alloc::boxed::Box::new(g.nested())),
7 => Self::RebindResourceOperation(alloc::boxed::Box::new(g.nested())),
8 => Self::ResetWasmStateOperation(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for OperationImpactReasonT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(7) };
match pick {
0 => Self::ConfigurationReason(alloc::boxed::Box::new(g.nested())),
1 => Self::DomainPlacementReason(alloc::boxed::Box::new(g.nested())),
2 => Self::DomainStartReason(alloc::boxed::Box::new(g.nested())),
3 => Self::DomainStopReason(alloc::boxed::Box::new(g.nested())),
4 => Self::ResourceCatalogReason(alloc::boxed::Box::new(g.nested())),
5 => Self::ResourceRebindingReason(alloc::boxed::Box::new(g.nested())),
6 => Self::WasmStateResetReason(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ConfigurationTransitionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::ConfigurationCreated(alloc::boxed::Box::new(g.nested())),
1 => Self::ConfigurationChanged(alloc::boxed::Box::new(g.nested())),
2 => Self::ConfigurationDropped(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for QuiescenceOutcomeT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(5) };
match pick {
0 => Self::QuiescenceRequested(alloc::boxed::Box::new(g.nested())),
1 => Self::QuiescenceConfirmed(alloc::boxed::Box::new(g.nested())),
2 => Self::QuiescenceFailed(alloc::boxed::Box::new(g.nested())),
3 => Self::QuiescenceUncertain(alloc::boxed::Box::new(g.nested())),
4 => Self::QuiescenceReleased(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ExecutionStepOutcomeT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(4) };
match pick {
0 => Self::StepUnattempted(alloc::boxed::Box::new(g.nested())),
1 => Self::StepApplying(alloc::boxed::Box::new(g.nested())),
2 => Self::StepApplied(alloc::boxed::Box::new(g.nested())),
3 => Self::StepFailed(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ResourceEntryContentT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::ResourceDirectory(alloc::boxed::Box::new(g.nested())),
1 => Self::ResourceFile(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ResourceVersionEntriesT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::ResourceEntriesListed(alloc::boxed::Box::new(g.nested())),
1 => Self::ResourceEntriesUnavailable(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for FieldTypeShapeT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::ScalarFieldType(alloc::boxed::Box::new(g.nested())),
1 => Self::FixedListFieldType(alloc::boxed::Box::new(g.nested())),
2 => Self::ListFieldType(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for CellValueT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(17) };
match pick {
0 => Self::NullCell(alloc::boxed::Box::new(g.nested())),
1 => Self::RedactedCell(alloc::boxed::Box::new(g.nested())),
2 => Self::U8Cell(alloc::boxed::Box::new(g.nested())),
3 => Self::I8Cell(alloc::boxed::Box::new(g.nested())),
4 => Self::U16Cell(alloc::boxed::Box::new(g.nested())),
5 => Self::I16Cell(alloc::boxed::Box::new(g.nested())),
6 => Self::U32Cell(alloc::boxed::Box::new(g.nested())),
7 => Self::I32Cell(alloc::boxed::Box::new(g.nested())),
8 => Self::U64Cell(alloc::boxed::Box::new(g.nested())),
9 => Self::I64Cell(alloc::boxed::Box::new(g.nested())),
10 => Self::F32Cell(alloc::boxed::Box::new(g.nested())),
11 => Self::F64Cell(alloc::boxed::Box::new(g.nested())),
12 => Self::BoolCell(alloc::boxed::Box::new(g.nested())),
13 => Self::StringCell(alloc::boxed::Box::new(g.nested())),
14 => Self::DatetimeCell(alloc::boxed::Box::new(g.nested())),
15 => Self::ListCell(alloc::boxed::Box::new(g.nested())),
16 => Self::BytesCell(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for DomainClockObservedStateT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(4) };
match pick {
0 => Self::StoppedDomainClock(alloc::boxed::Box::new(g.nested())),
1 => Self::UninstalledDomainClock(alloc::boxed::Box::new(g.nested())),
2 => Self::UnpacedDomainClock(alloc::boxed::Box::new(g.nested())),
3 => Self::PacedDomainClock(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ProducerWindowT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::SequentialProducerWindow(alloc::boxed::Box::new(g.nested())),
1 => Self::ParallelProducerWindow(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ClientRequestT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(19) };
match pick {
0 => Self::CommandRequest(alloc::boxed::Box::new(g.nested())),
1 => Self::SuggestRequest(alloc::boxed::Box::new(g.nested())),
2 => Self::ListDomainsRequest(alloc::boxed::Box::new(g.nested())),
3 => Self::SelectDomainRequest(alloc::boxed::Box::new(g.nested())),
4 => Self::AttachTransactionRequest(alloc::boxed::Box::new(g.nested())),
5 => Self::InspectTransactionRequest(alloc::boxed::Box::new(g.nested())),
6 => Self::SubscribeRequest(alloc::boxed::Box::new(g.nested())),
7 => Self::UnsubscribeRequest(alloc::boxed::Box::new(g.nested())),
8 => Self::CancelRequest(alloc::boxed::Box::new(g.nested())),
9 => Self::ChoiceLookupRequest(alloc::boxed::Box::new(g.nested())),
10 => Self::AttachDomainClockRequest(alloc::boxed::Box::new(g.nested())),
11 => Self::DetachDomainClockRequest(alloc::boxed::Box::new(g.nested())),
12 => Self::OpenIngestorRequest(alloc::boxed::Box::new(g.nested())),
13 => Self::SubmitBatchRequest(alloc::boxed::Box::new(g.nested())),
14 => Self::CloseIngestorRequest(alloc::boxed::Box::new(g.nested())),
15 => Self::OpenEmitterRequest(alloc::boxed::Box::new(g.nested())),
16 => Self::ReadEmitterBatchRequest(alloc::boxed::Box::new(g.nested())),
17 => Self::SettleEmitterBatchRequest(alloc::boxed::Box::new(g.nested())),
18 => Self::CloseEmitterRequest(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for CommandDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(9) };
match pick {
0 => Self::CommandCompleted(alloc::boxed::Box::new(g.nested())),
1 => Self::RequestFailed(alloc::boxed::Box::new(g.nested())),
2 => Self::LeaderRedirect(alloc::boxed::Box::new(g.nested())),
3 => Self::TransactionDetached(alloc::boxed::Box::new(g.nested())),
4 => Self::TransactionTakenOver(alloc::boxed::Box::new(g.nested())),
5 => Self::OutcomeUnknown(alloc::boxed::Box::new(g.nested())),
6 => Self::ExecutionReferenceConflict(alloc::boxed::Box::new(g.nested())),
7 => Self::ExecutionReferenceExpired(alloc::boxed::Box::new(g.nested())),
8 => Self::PreviewStale(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for StatementDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::CommandCompleted(alloc::boxed::Box::new(g.nested())),
1 => Self::RequestFailed(alloc::boxed::Box::new(g.nested())),
2 => Self::LeaderRedirect(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for AttachDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(4) };
match pick {
0 => Self::TransactionAttached(alloc::boxed::Box::new(g.nested())),
1 => Self::TransactionAlreadyFinished(alloc::boxed::Box::new(g.nested())),
2 => Self::RequestFailed(alloc::boxed::Box::new(g.nested())),
3 => Self::LeaderRedirect(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for DomainPaceT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::UnpacedDomain(alloc::boxed::Box::new(g.nested())),
1 => Self::PacedDomain(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for DomainSelectionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::DomainSelected(alloc::boxed::Box::new(g.nested())),
1 => Self::DomainNotFound(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for InspectionDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::TransactionInspected(alloc::boxed::Box::new(g.nested())),
1 => Self::InspectionRejected(alloc::boxed::Box::new(g.nested())),
2 => Self::LeaderRedirect(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for SubscribeDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::SubscriptionOpened(alloc::boxed::Box::new(g.nested())),
1 => Self::RequestFailed(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for UnsubscribeDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::SubscriptionDeleted(alloc::boxed::Box::new(g.nested())),
1 => Self::RequestFailed(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for DomainClockAttachDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(4) };
match pick {
0 => Self::DomainClockAttached(alloc::boxed::Box::new(g.nested())),
1 => Self::DomainClockAlreadyAttached(alloc::boxed::Box::new(g.nested())),
2 => Self::DomainNotFound(alloc::boxed::Box::new(g.nested())),
3 => Self::RequestFailed(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for DomainClockDetachDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::DomainClockDetached(alloc::boxed::Box::new(g.nested())),
1 => Self::DomainClockNotAttached(alloc::boxed::Box::new(g.nested())),
2 => Self::RequestFailed(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for OpenIngestorDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::ProducerOpened(alloc::boxed::Box::new(g.nested())),
1 => Self::ProducerRefused(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for SubmissionDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(4) };
match pick {
0 => Self::SubmissionNotAdmitted(alloc::boxed::Box::new(g.nested())),
1 => Self::SubmissionCompleted(alloc::boxed::Box::new(g.nested())),
2 => Self::SubmissionFailed(alloc::boxed::Box::new(g.nested())),
3 => Self::SubmissionOutcomeUnknown(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for CloseIngestorDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::ProducerClosed(alloc::boxed::Box::new(g.nested())),
1 => Self::ProducerNotOpen(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ConsumerWindowT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::SequentialConsumerWindow(alloc::boxed::Box::new(g.nested())),
1 => Self::ParallelConsumerWindow(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for OpenEmitterDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::EmitterOpened(alloc::boxed::Box::new(g.nested())),
1 => Self::EmitterRefused(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ReadEmitterDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::EmitterBatchReceived(alloc::boxed::Box::new(g.nested())),
1 => Self::EmitterConsumerEnded(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ReplyBodyT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(22) };
match pick {
0 => Self::CommandOutcome(alloc::boxed::Box::new(g.nested())),
1 => Self::AttachOutcome(alloc::boxed::Box::new(g.nested())),
2 => Self::SuggestOutcome(alloc::boxed::Box::new(g.nested())),
3 => Self::DomainList(alloc::boxed::Box::new(g.nested())),
4 => Self::DomainSelectionOutcome(alloc::boxed::Box::new(g.nested())),
5 => Self::InspectionOutcome(alloc::boxed::Box::new(g.nested())),
6 => Self::SubscribeOutcome(alloc::boxed::Box::new(g.nested())),
7 => Self::UnsubscribeOutcome(alloc::boxed::Box::new(g.nested())),
8 => Self::CancelOutcome(alloc::boxed::Box::new(g.nested())),
9 => Self::RequestCancelled(alloc::boxed::Box::new(g.nested())),
10 => Self::RequestRejected(alloc::boxed::Box::new(g.nested())),
11 => Self::TransferPart(alloc::boxed::Box::new(g.nested())),
12 => Self::ChoiceOutcome(alloc::boxed::Box::new(g.nested())),
13 => Self::DomainClockAttachOutcome(alloc::boxed::Box::new(g.nested())),
14 => Self::DomainClockDetachOutcome(alloc::boxed::Box::new(g.nested())),
15 => Self::OpenIngestorOutcome(alloc::boxed::Box::new(g.nested())),
16 => Self::SubmissionOutcome(alloc::boxed::Box::new(g.nested())),
17 => Self::CloseIngestorOutcome(alloc::boxed::Box::new(g.nested())),
18 => Self::OpenEmitterOutcome(alloc::boxed::Box::new(g.nested())),
19 => Self::ReadEmitterBatchOutcome(alloc::boxed::Box::new(g.nested())),
20 => Self::SettleEmitterBatchOutcome(alloc::boxed::Box::new(g.nested())),
21 => Self::CloseEmitterOutcome(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for LeadershipT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::LeaderIsServingNode(alloc::boxed::Box::new(g.nested())),
1 => Self::LeaderIsRemote(alloc::boxed::Box::new(g.nested())),
2 => Self::LeaderUnknown(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for DomainEntityT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::ModelEntity(alloc::boxed::Box::new(g.nested())),
1 => Self::ResourceEntity(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for SessionEndReasonT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::ServerShuttingDown(alloc::boxed::Box::new(g.nested())),
1 => Self::LeaderRedirect(alloc::boxed::Box::new(g.nested())),
2 => Self::ProtocolViolated(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for ServerBodyT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(16) };
match pick {
0 => Self::Reply(alloc::boxed::Box::new(g.nested())),
1 => Self::ServerNotice(alloc::boxed::Box::new(g.nested())),
2 => Self::LeadershipObserved(alloc::boxed::Box::new(g.nested())),
3 => Self::DomainsObserved(alloc::boxed::Box::new(g.nested())),
4 => Self::DomainSnapshotObserved(alloc::boxed::Box::new(g.nested())),
5 => Self::ClusterObserved(alloc::boxed::Box::new(g.nested())),
6 => Self::SubscriptionRows(alloc::boxed::Box::new(g.nested())),
7 => Self::SubscriptionDeliveryLost(alloc::boxed::Box::new(g.nested())),
8 => Self::SubscriptionRowsSkipped(alloc::boxed::Box::new(g.nested())),
9 => Self::SubscriptionEnded(alloc::boxed::Box::new(g.nested())),
10 => Self::SessionEnding(alloc::boxed::Box::new(g.nested())),
11 => Self::DomainClockObserved(alloc::boxed::Box::new(g.nested())),
12 => Self::DomainClockAttachmentEnded(alloc::boxed::Box::new(g.nested())),
13 => Self::DomainClockTicked(alloc::boxed::Box::new(g.nested())),
14 => Self::ProducerAdmissionChanged(alloc::boxed::Box::new(g.nested())),
15 => Self::ProducerEnded(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for UploadPartT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::UploadStart(alloc::boxed::Box::new(g.nested())),
1 => Self::UploadChunk(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for UploadDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(3) };
match pick {
0 => Self::ResourceInstalled(alloc::boxed::Box::new(g.nested())),
1 => Self::UploadFailed(alloc::boxed::Box::new(g.nested())),
2 => Self::LeaderRedirect(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for BackupDownloadPartT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(5) };
match pick {
0 => Self::BackupArchiveStart(alloc::boxed::Box::new(g.nested())),
1 => Self::BackupArchiveChunk(alloc::boxed::Box::new(g.nested())),
2 => Self::BackupArchiveComplete(alloc::boxed::Box::new(g.nested())),
3 => Self::BackupDownloadFailed(alloc::boxed::Box::new(g.nested())),
4 => Self::LeaderRedirect(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for RestorePartT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::RestoreStart(alloc::boxed::Box::new(g.nested())),
1 => Self::RestoreChunk(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for RestoreDispositionT {
fn generate(g: &mut Gen) -> Self {
let pick = if g.at_depth_limit() { 0 } else { g.index(2) };
match pick {
0 => Self::CommandOutcome(alloc::boxed::Box::new(g.nested())),
1 => Self::RestoreUploadFailed(alloc::boxed::Box::new(g.nested())),
_ => unreachable!(),
}
}
}
impl Generate for SourceSpanT {
fn generate(g: &mut Gen) -> Self {
let start: u32 = g.u32();
let end: u32 = g.u32();
let end = start.saturating_add(end % 1000);
Self { start, end }
}
}
impl Generate for OperationRangeT {
fn generate(g: &mut Gen) -> Self {
let first: u64 = g.u64();
let first = if first == 0 { 1 } else { first };
let last: u64 = g.u64();
let last = first.saturating_add(last % 1000);
Self { first, last }
}
}
impl Generate for FingerprintT {
fn generate(g: &mut Gen) -> Self {
let bytes = { let n = g.len(32, 32); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
Self { bytes }
}
}
impl Generate for DiagnosticT {
fn generate(g: &mut Gen) -> Self {
let message = g.string();
let span = if !g.at_depth_limit() && g.bool() { Some(SourceSpanT::generate(g)) } else { None };
Self { message, span }
}
}
impl Generate for LeaderEndpointsT {
fn generate(g: &mut Gen) -> Self {
let node = g.string();
let grpc_uri = if g.bool() { Some(g.string()) } else { None };
let web_console_uri = if g.bool() { Some(g.string()) } else { None };
Self { node, grpc_uri, web_console_uri }
}
}
impl Generate for LeaderRedirectT {
fn generate(g: &mut Gen) -> Self {
let leader = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<LeaderEndpointsT>())) } else { None };
Self { leader }
}
}
impl Generate for RequestFailedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for NodeRefT {
fn generate(g: &mut Gen) -> Self {
let kind = Some(ModelKind::generate(g));
let name = g.string();
Self { kind, name }
}
}
impl Generate for DomainPaceVariantT {
fn generate(g: &mut Gen) -> Self {
let value = if g.bool() { Some(DomainPaceChoice::generate(g)) } else { None };
Self { value }
}
}
impl Generate for PlacementPolicyVariantT {
fn generate(g: &mut Gen) -> Self {
let value = if g.bool() { Some(PlacementPolicyChoice::generate(g)) } else { None };
Self { value }
}
}
impl Generate for DomainChoiceReferenceT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for ResourceChoiceReferenceT {
fn generate(g: &mut Gen) -> Self {
let resource = g.string();
Self { resource }
}
}
impl Generate for ModelChoiceReferenceT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { node }
}
}
impl Generate for FieldChoiceReferenceT {
fn generate(g: &mut Gen) -> Self {
let field = g.string();
Self { field }
}
}
impl Generate for ChoiceSelectionT {
fn generate(g: &mut Gen) -> Self {
let value = ChoiceValueT::generate(g);
Self { value }
}
}
impl Generate for ChoicePresentationT {
fn generate(g: &mut Gen) -> Self {
let label = g.string();
let detail = if g.bool() { Some(g.string()) } else { None };
let group = if g.bool() { Some(g.string()) } else { None };
Self { label, detail, group }
}
}
impl Generate for ChoiceT {
fn generate(g: &mut Gen) -> Self {
let value = ChoiceValueT::generate(g);
let presentation = alloc::boxed::Box::new(g.nested::<ChoicePresentationT>());
Self { value, presentation }
}
}
impl Generate for TransactionPreviewIdentityT {
fn generate(g: &mut Gen) -> Self {
let transaction_id = g.string();
let position: u64 = g.u64();
let planning_basis = alloc::boxed::Box::new(g.nested::<FingerprintT>());
Self { transaction_id, position, planning_basis }
}
}
impl Generate for TransactionOperationAdmissionT {
fn generate(g: &mut Gen) -> Self {
let operation: u64 = g.u64();
let operation = if operation == 0 { 1 } else { operation };
let preview = alloc::boxed::Box::new(g.nested::<TransactionPreviewIdentityT>());
Self { operation, preview }
}
}
impl Generate for TransactionOpenT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for TransactionCommittingT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for TransactionCommittedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for TransactionFailedT {
fn generate(g: &mut Gen) -> Self {
let failing_operation: u64 = g.u64();
let failing_operation = if failing_operation == 0 { 1 } else { failing_operation };
let error = g.string();
Self { failing_operation, error }
}
}
impl Generate for TransactionRevertedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for TransactionExpiredT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for TransactionStatusT {
fn generate(g: &mut Gen) -> Self {
let transaction_id = g.string();
let domain = g.string();
let state = TransactionStateT::generate(g);
let accepted_operations: u64 = g.u64();
let applied_operations: u64 = g.u64();
let applied_operations = if accepted_operations == u64::MAX { applied_operations } else { applied_operations % (accepted_operations + 1) };
Self { transaction_id, domain, state, accepted_operations, applied_operations }
}
}
impl Generate for AttachedTransactionT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for TransactionByIdT {
fn generate(g: &mut Gen) -> Self {
let transaction_id = g.string();
Self { transaction_id }
}
}
impl Generate for ImpactDiagnosticT {
fn generate(g: &mut Gen) -> Self {
let kind = Some(ImpactDiagnosticKind::generate(g));
let operation: u64 = g.u64();
let operation = if g.bool() { Some(operation) } else { None };
let message = g.string();
Self { kind, operation, message }
}
}
impl Generate for ImpactCompleteT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ImpactIncompleteT {
fn generate(g: &mut Gen) -> Self {
let diagnostics = { let n = g.len(1, 4); (0..n).map(|_| g.nested::<ImpactDiagnosticT>()).collect::<alloc::vec::Vec<_>>() };
Self { diagnostics }
}
}
impl Generate for ConfigurationCoverageT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for AllBranchCoverageT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for UnbranchedCoverageT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for DeclaredBranchCoverageT {
fn generate(g: &mut Gen) -> Self {
let branch = g.string();
Self { branch }
}
}
impl Generate for SelectedBranchCoverageT {
fn generate(g: &mut Gen) -> Self {
let branch = g.string();
let keys = { let n = g.len(1, 4); (0..n).map(|_| g.nested::<FingerprintT>()).collect::<alloc::vec::Vec<_>>() };
Self { branch, keys }
}
}
impl Generate for NodeCoverageT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
let branches = NodeBranchCoverageT::generate(g);
Self { node, branches }
}
}
impl Generate for AttributedNodeT {
fn generate(g: &mut Gen) -> Self {
let coverage = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { coverage, operations }
}
}
impl Generate for GateBoundaryT {
fn generate(g: &mut Gen) -> Self {
let relay = g.string();
let branches = BranchCoverageT::generate(g);
Self { relay, branches }
}
}
impl Generate for AttributedGateBoundaryT {
fn generate(g: &mut Gen) -> Self {
let boundary = alloc::boxed::Box::new(g.nested::<GateBoundaryT>());
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { boundary, operations }
}
}
impl Generate for QuiesceSubgraphT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let nodes = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<AttributedNodeT>()).collect::<alloc::vec::Vec<_>>() };
let gate_boundaries = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<AttributedGateBoundaryT>()).collect::<alloc::vec::Vec<_>>() };
Self { domain, nodes, gate_boundaries }
}
}
impl Generate for NoPauseT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for SubgraphPauseT {
fn generate(g: &mut Gen) -> Self {
let scope = alloc::boxed::Box::new(g.nested::<QuiesceSubgraphT>());
Self { scope }
}
}
impl Generate for DomainPauseT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for CreateConfigurationOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { domain, node }
}
}
impl Generate for AlterConfigurationOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { domain, node }
}
}
impl Generate for DropConfigurationOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { domain, node }
}
}
impl Generate for AlterDomainOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for StartDomainOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for StopDomainOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for CreateResourceOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let resource = g.string();
Self { domain, resource }
}
}
impl Generate for ResourceVersionNumberT {
fn generate(g: &mut Gen) -> Self {
let version: u64 = g.u64();
Self { version }
}
}
impl Generate for LatestResourceVersionT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for RebindResourceOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let resource = g.string();
let requested = RequestedResourceVersionT::generate(g);
let version: u64 = g.u64();
Self { domain, resource, requested, version }
}
}
impl Generate for ResetWasmStateOperationT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let processor = g.string();
Self { domain, processor }
}
}
impl Generate for ConfigurationReasonT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
let aspect = Some(ModelChangeAspect::generate(g));
Self { node, aspect }
}
}
impl Generate for DomainPlacementReasonT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for DomainStartReasonT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for DomainStopReasonT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ResourceCatalogReasonT {
fn generate(g: &mut Gen) -> Self {
let resource = g.string();
Self { resource }
}
}
impl Generate for ResourceRebindingReasonT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
let resource = g.string();
let previous_version: u64 = g.u64();
let target_version: u64 = g.u64();
Self { node, resource, previous_version, target_version }
}
}
impl Generate for WasmStateResetReasonT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { node }
}
}
impl Generate for OperationReasonT {
fn generate(g: &mut Gen) -> Self {
let reason = OperationImpactReasonT::generate(g);
Self { reason }
}
}
impl Generate for TopologyEdgeT {
fn generate(g: &mut Gen) -> Self {
let source = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let target = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let kind = Some(ImpactEdgeKind::generate(g));
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { source, target, kind, operations }
}
}
impl Generate for ImpactTopologyT {
fn generate(g: &mut Gen) -> Self {
let nodes = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<AttributedNodeT>()).collect::<alloc::vec::Vec<_>>() };
let edges = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<TopologyEdgeT>()).collect::<alloc::vec::Vec<_>>() };
Self { nodes, edges }
}
}
impl Generate for AffectedTopologyT {
fn generate(g: &mut Gen) -> Self {
let before = alloc::boxed::Box::new(g.nested::<ImpactTopologyT>());
let after = alloc::boxed::Box::new(g.nested::<ImpactTopologyT>());
Self { before, after }
}
}
impl Generate for ConfigurationCreatedT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { node }
}
}
impl Generate for ConfigurationChangedT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { node }
}
}
impl Generate for ConfigurationDroppedT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { node }
}
}
impl Generate for ConfigurationImpactT {
fn generate(g: &mut Gen) -> Self {
let transition = ConfigurationTransitionT::generate(g);
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { transition, operations }
}
}
impl Generate for ResourceCatalogImpactT {
fn generate(g: &mut Gen) -> Self {
let resource = g.string();
let action = Some(ResourceCatalogAction::generate(g));
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { resource, action, operations }
}
}
impl Generate for ResourceBindingImpactT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
let resource = g.string();
let requested = RequestedResourceVersionT::generate(g);
let version: u64 = g.u64();
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { node, resource, requested, version, operations }
}
}
impl Generate for DomainLifecycleImpactT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let action = Some(DomainLifecycleAction::generate(g));
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { domain, action, operations }
}
}
impl Generate for OwnershipMoveImpactT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let source = g.string();
let destination = g.string();
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { node, source, destination, operations }
}
}
impl Generate for ActivationImpactT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let action = Some(ActivationAction::generate(g));
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { node, action, operations }
}
}
impl Generate for RebuildImpactT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let reason = Some(RebuildReason::generate(g));
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { node, reason, operations }
}
}
impl Generate for StateResetImpactT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let state = Some(StatePurge::generate(g));
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { node, state, operations }
}
}
impl Generate for ForceFlushImpactT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeCoverageT>());
let operations = { let n = g.len(1, 4); (0..n).map(|_| g.u64()).collect::<alloc::vec::Vec<_>>() };
Self { node, operations }
}
}
impl Generate for ImpactEffectsT {
fn generate(g: &mut Gen) -> Self {
let changed_configuration = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ConfigurationImpactT>()).collect::<alloc::vec::Vec<_>>() };
let topology = alloc::boxed::Box::new(g.nested::<AffectedTopologyT>());
let ownership_moves = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<OwnershipMoveImpactT>()).collect::<alloc::vec::Vec<_>>() };
let lifecycle = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DomainLifecycleImpactT>()).collect::<alloc::vec::Vec<_>>() };
let activations = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ActivationImpactT>()).collect::<alloc::vec::Vec<_>>() };
let rebuilds = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<RebuildImpactT>()).collect::<alloc::vec::Vec<_>>() };
let state_resets = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<StateResetImpactT>()).collect::<alloc::vec::Vec<_>>() };
let force_flushes = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ForceFlushImpactT>()).collect::<alloc::vec::Vec<_>>() };
let resource_catalog = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ResourceCatalogImpactT>()).collect::<alloc::vec::Vec<_>>() };
let resource_bindings = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ResourceBindingImpactT>()).collect::<alloc::vec::Vec<_>>() };
Self { changed_configuration, topology, ownership_moves, lifecycle, activations, rebuilds, state_resets, force_flushes, resource_catalog, resource_bindings }
}
}
impl Generate for PlannedStepImpactT {
fn generate(g: &mut Gen) -> Self {
let completeness = ImpactCompletenessT::generate(g);
let pause = PauseRequirementT::generate(g);
let effects = alloc::boxed::Box::new(g.nested::<ImpactEffectsT>());
Self { completeness, pause, effects }
}
}
impl Generate for QuiescenceRequestedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for QuiescenceConfirmedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for QuiescenceFailedT {
fn generate(g: &mut Gen) -> Self {
let diagnostic = alloc::boxed::Box::new(g.nested::<ImpactDiagnosticT>());
Self { diagnostic }
}
}
impl Generate for QuiescenceUncertainT {
fn generate(g: &mut Gen) -> Self {
let diagnostic = alloc::boxed::Box::new(g.nested::<ImpactDiagnosticT>());
Self { diagnostic }
}
}
impl Generate for QuiescenceReleasedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for QuiescenceOutcomeEntryT {
fn generate(g: &mut Gen) -> Self {
let outcome = QuiescenceOutcomeT::generate(g);
Self { outcome }
}
}
impl Generate for ActualQuiescenceT {
fn generate(g: &mut Gen) -> Self {
let requirement = PauseRequirementT::generate(g);
let outcomes = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<QuiescenceOutcomeEntryT>()).collect::<alloc::vec::Vec<_>>() };
Self { requirement, outcomes }
}
}
impl Generate for StepUnattemptedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for StepApplyingT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for StepAppliedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for StepFailedT {
fn generate(g: &mut Gen) -> Self {
let diagnostic = alloc::boxed::Box::new(g.nested::<ImpactDiagnosticT>());
Self { diagnostic }
}
}
impl Generate for ActualStepImpactT {
fn generate(g: &mut Gen) -> Self {
let outcome = ExecutionStepOutcomeT::generate(g);
let quiescence = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ActualQuiescenceT>()).collect::<alloc::vec::Vec<_>>() };
let effects = alloc::boxed::Box::new(g.nested::<ImpactEffectsT>());
Self { outcome, quiescence, effects }
}
}
impl Generate for ExecutionStepReportT {
fn generate(g: &mut Gen) -> Self {
let operations = OperationRangeT::generate(g);
let planned = alloc::boxed::Box::new(g.nested::<PlannedStepImpactT>());
let actual = alloc::boxed::Box::new(g.nested::<ActualStepImpactT>());
Self { operations, planned, actual }
}
}
impl Generate for OperationReportT {
fn generate(g: &mut Gen) -> Self {
let number: u64 = g.u64();
let number = if number == 0 { 1 } else { number };
let operation = TransactionOperationT::generate(g);
let execution_step = OperationRangeT::generate(g);
let completeness = ImpactCompletenessT::generate(g);
let reasons = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<OperationReasonT>()).collect::<alloc::vec::Vec<_>>() };
let contribution = alloc::boxed::Box::new(g.nested::<ImpactEffectsT>());
Self { number, operation, execution_step, completeness, reasons, contribution }
}
}
impl Generate for TransactionImpactReportT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let position: u64 = g.u64();
let planning_basis = alloc::boxed::Box::new(g.nested::<FingerprintT>());
let completeness = ImpactCompletenessT::generate(g);
let operations = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<OperationReportT>()).collect::<alloc::vec::Vec<_>>() };
let execution_steps = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ExecutionStepReportT>()).collect::<alloc::vec::Vec<_>>() };
Self { domain, position, planning_basis, completeness, operations, execution_steps }
}
}
impl Generate for ResourceDirectoryT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ResourceFileT {
fn generate(g: &mut Gen) -> Self {
let size: u64 = g.u64();
let checksum = g.string();
Self { size, checksum }
}
}
impl Generate for ResourceEntryT {
fn generate(g: &mut Gen) -> Self {
let path = g.string();
let content = ResourceEntryContentT::generate(g);
Self { path, content }
}
}
impl Generate for ResourceEntriesListedT {
fn generate(g: &mut Gen) -> Self {
let entries = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ResourceEntryT>()).collect::<alloc::vec::Vec<_>>() };
Self { entries }
}
}
impl Generate for ResourceEntriesUnavailableT {
fn generate(g: &mut Gen) -> Self {
let reason = g.string();
Self { reason }
}
}
impl Generate for ResourceVersionDescriptionT {
fn generate(g: &mut Gen) -> Self {
let version: u64 = g.u64();
let version = if version == 0 { 1 } else { version };
let root_checksum = g.string();
let manifest_checksum = g.string();
let file_count: u64 = g.u64();
let total_bytes: u64 = g.u64();
let created_at: i64 = g.i64();
let created_by_node = g.string();
let entries = ResourceVersionEntriesT::generate(g);
Self { version, root_checksum, manifest_checksum, file_count, total_bytes, created_at, created_by_node, entries }
}
}
impl Generate for ResourceUsageT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
let version: u64 = g.u64();
let version = if version == 0 { 1 } else { version };
Self { node, version }
}
}
impl Generate for ResourceDescriptionT {
fn generate(g: &mut Gen) -> Self {
let resource = g.string();
let latest_version: u64 = g.u64();
let latest_version = if latest_version == 0 { 1 } else { latest_version };
let latest_version = if g.bool() { Some(latest_version) } else { None };
let versions = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ResourceVersionDescriptionT>()).collect::<alloc::vec::Vec<_>>() };
let usages = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ResourceUsageT>()).collect::<alloc::vec::Vec<_>>() };
Self { resource, latest_version, versions, usages }
}
}
impl Generate for ScalarFieldTypeT {
fn generate(g: &mut Gen) -> Self {
let scalar = Some(ScalarType::generate(g));
Self { scalar }
}
}
impl Generate for FixedListFieldTypeT {
fn generate(g: &mut Gen) -> Self {
let element = alloc::boxed::Box::new(g.nested::<FieldTypeT>());
let length: u32 = g.u32();
let length = if length == 0 { 1 } else { length };
Self { element, length }
}
}
impl Generate for ListFieldTypeT {
fn generate(g: &mut Gen) -> Self {
let element = alloc::boxed::Box::new(g.nested::<FieldTypeT>());
Self { element }
}
}
impl Generate for FieldTypeT {
fn generate(g: &mut Gen) -> Self {
let shape = FieldTypeShapeT::generate(g);
Self { shape }
}
}
impl Generate for RowFieldT {
fn generate(g: &mut Gen) -> Self {
let name = g.string();
let field_type = alloc::boxed::Box::new(g.nested::<FieldTypeT>());
let nullable: bool = g.bool();
let sensitive: bool = g.bool();
Self { name, field_type, nullable, sensitive }
}
}
impl Generate for RowBranchT {
fn generate(g: &mut Gen) -> Self {
let branch = g.string();
let fields = { let n = g.len(1, 4); (0..n).map(|_| g.nested::<RowFieldT>()).collect::<alloc::vec::Vec<_>>() };
Self { branch, fields }
}
}
impl Generate for RowSchemaT {
fn generate(g: &mut Gen) -> Self {
let fields = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<RowFieldT>()).collect::<alloc::vec::Vec<_>>() };
let branch = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<RowBranchT>())) } else { None };
Self { fields, branch }
}
}
impl Generate for NullCellT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for RedactedCellT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for U8CellT {
fn generate(g: &mut Gen) -> Self {
let value: u8 = g.u8();
Self { value }
}
}
impl Generate for I8CellT {
fn generate(g: &mut Gen) -> Self {
let value: i8 = g.i8();
Self { value }
}
}
impl Generate for U16CellT {
fn generate(g: &mut Gen) -> Self {
let value: u16 = g.u16();
Self { value }
}
}
impl Generate for I16CellT {
fn generate(g: &mut Gen) -> Self {
let value: i16 = g.i16();
Self { value }
}
}
impl Generate for U32CellT {
fn generate(g: &mut Gen) -> Self {
let value: u32 = g.u32();
Self { value }
}
}
impl Generate for I32CellT {
fn generate(g: &mut Gen) -> Self {
let value: i32 = g.i32();
Self { value }
}
}
impl Generate for U64CellT {
fn generate(g: &mut Gen) -> Self {
let value: u64 = g.u64();
Self { value }
}
}
impl Generate for I64CellT {
fn generate(g: &mut Gen) -> Self {
let value: i64 = g.i64();
Self { value }
}
}
impl Generate for F32CellT {
fn generate(g: &mut Gen) -> Self {
let value: f32 = g.f32();
let value = Some(value);
Self { value }
}
}
impl Generate for F64CellT {
fn generate(g: &mut Gen) -> Self {
let value: f64 = g.f64();
let value = Some(value);
Self { value }
}
}
impl Generate for BoolCellT {
fn generate(g: &mut Gen) -> Self {
let value: bool = g.bool();
Self { value }
}
}
impl Generate for StringCellT {
fn generate(g: &mut Gen) -> Self {
let value = g.string();
Self { value }
}
}
impl Generate for BytesCellT {
fn generate(g: &mut Gen) -> Self {
let value = { let n = g.len(0, 24); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
Self { value }
}
}
impl Generate for DatetimeCellT {
fn generate(g: &mut Gen) -> Self {
let unix_nanos: i64 = g.i64();
Self { unix_nanos }
}
}
impl Generate for ListCellT {
fn generate(g: &mut Gen) -> Self {
let elements = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<CellT>()).collect::<alloc::vec::Vec<_>>() };
Self { elements }
}
}
impl Generate for CellT {
fn generate(g: &mut Gen) -> Self {
let value = CellValueT::generate(g);
Self { value }
}
}
impl Generate for RowT {
fn generate(g: &mut Gen) -> Self {
let cells = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<CellT>()).collect::<alloc::vec::Vec<_>>() };
Self { cells }
}
}
impl Generate for BranchKeyT {
fn generate(g: &mut Gen) -> Self {
let cells = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<CellT>()).collect::<alloc::vec::Vec<_>>() };
Self { cells }
}
}
impl Generate for RowBatchT {
fn generate(g: &mut Gen) -> Self {
let branch_key = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<BranchKeyT>())) } else { None };
let rows = { let n = g.len(1, 4); (0..n).map(|_| g.nested::<RowT>()).collect::<alloc::vec::Vec<_>>() };
Self { branch_key, rows }
}
}
impl Generate for StoppedDomainClockT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for UninstalledDomainClockT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for UnpacedDomainClockT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for PacedDomainClockT {
fn generate(g: &mut Gen) -> Self {
let period_nanos: u64 = g.u64();
let period_nanos = if period_nanos == 0 { 1 } else { period_nanos };
let skew_nanos: u64 = g.u64();
let logical_origin_unix_nanos: i64 = g.i64();
let utc_anchor_unix_nanos: i64 = g.i64();
let time_rate: f64 = g.f64();
let time_rate = if time_rate.is_finite() && time_rate > 0.0 { time_rate } else { 1.0 };
let time_rate = Some(time_rate);
Self { period_nanos, skew_nanos, logical_origin_unix_nanos, utc_anchor_unix_nanos, time_rate }
}
}
impl Generate for DomainClockObservationT {
fn generate(g: &mut Gen) -> Self {
let generation: u64 = g.u64();
let state = DomainClockObservedStateT::generate(g);
Self { generation, state }
}
}
impl Generate for SequentialProducerWindowT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ParallelProducerWindowT {
fn generate(g: &mut Gen) -> Self {
let max: u64 = g.u64();
let max = if max == 0 { 1 } else { max };
Self { max }
}
}
impl Generate for BackupCutT {
fn generate(g: &mut Gen) -> Self {
let kind = Some(BackupCutKind::generate(g));
let engaged_at: i64 = g.i64();
let engaged_at = if g.bool() { Some(engaged_at) } else { None };
let released_at: i64 = g.i64();
let released_at = if g.bool() { Some(released_at) } else { None };
let buffered_records: u64 = g.u64();
let buffered_bytes: u64 = g.u64();
let dropped_records: u64 = g.u64();
let rejected_records: u64 = g.u64();
Self { kind, engaged_at, released_at, buffered_records, buffered_bytes, dropped_records, rejected_records }
}
}
impl Generate for BackupDomainSummaryT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let revision: u64 = g.u64();
let cut = alloc::boxed::Box::new(g.nested::<BackupCutT>());
let sections: u64 = g.u64();
let section_bytes: u64 = g.u64();
Self { domain, revision, cut, sections, section_bytes }
}
}
impl Generate for BackupArchiveSummaryT {
fn generate(g: &mut Gen) -> Self {
let total_bytes: u64 = g.u64();
let total_bytes = if total_bytes == 0 { 1 } else { total_bytes };
let digest = alloc::boxed::Box::new(g.nested::<FingerprintT>());
let captured_at: i64 = g.i64();
let retained_until: i64 = g.i64();
let resources = Some(BackupResources::generate(g));
let users: u64 = g.u64();
let users = if g.bool() { Some(users) } else { None };
let domains = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<BackupDomainSummaryT>()).collect::<alloc::vec::Vec<_>>() };
Self { total_bytes, digest, captured_at, retained_until, resources, users, domains }
}
}
impl Generate for RestoreStepReportT {
fn generate(g: &mut Gen) -> Self {
let kind = Some(RestoreStepKind::generate(g));
let domain = if g.bool() { Some(g.string()) } else { None };
let outcome = Some(RestoreStepOutcome::generate(g));
Self { kind, domain, outcome }
}
}
impl Generate for RestoredUsersT {
fn generate(g: &mut Gen) -> Self {
let created: u64 = g.u64();
let skipped: u64 = g.u64();
let replaced: u64 = g.u64();
Self { created, skipped, replaced }
}
}
impl Generate for RestoredDomainT {
fn generate(g: &mut Gen) -> Self {
let source = g.string();
let domain = g.string();
let resource_versions: u64 = g.u64();
let models: u64 = g.u64();
let planned_models = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<TransactionImpactReportT>())) } else { None };
Self { source, domain, resource_versions, models, planned_models }
}
}
impl Generate for RestoreReportT {
fn generate(g: &mut Gen) -> Self {
let mode = Some(RestoreMode::generate(g));
let total_bytes: u64 = g.u64();
let total_bytes = if total_bytes == 0 { 1 } else { total_bytes };
let digest = alloc::boxed::Box::new(g.nested::<FingerprintT>());
let captured_at: i64 = g.i64();
let users = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<RestoredUsersT>())) } else { None };
let domains = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<RestoredDomainT>()).collect::<alloc::vec::Vec<_>>() };
let steps = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<RestoreStepReportT>()).collect::<alloc::vec::Vec<_>>() };
Self { mode, total_bytes, digest, captured_at, users, domains, steps }
}
}
impl Generate for CommandRequestT {
fn generate(g: &mut Gen) -> Self {
let query = g.string();
let domain = if g.bool() { Some(g.string()) } else { None };
let execution_reference = g.string();
let expected_transaction_position: u64 = g.u64();
let expected_transaction_position = if g.bool() { Some(expected_transaction_position) } else { None };
let expected_preview = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<TransactionPreviewIdentityT>())) } else { None };
Self { query, domain, execution_reference, expected_transaction_position, expected_preview }
}
}
impl Generate for SuggestRequestT {
fn generate(g: &mut Gen) -> Self {
let input = g.string();
let cursor: u32 = g.u32();
let domain = if g.bool() { Some(g.string()) } else { None };
let page_size: u16 = g.u16();
let page_size = (1 + (page_size as u64) % (100 - 1 + 1)) as u16;
let continuation = if g.bool() { Some(g.string()) } else { None };
Self { input, cursor, domain, page_size, continuation }
}
}
impl Generate for ChoiceLookupRequestT {
fn generate(g: &mut Gen) -> Self {
let target = Some(ChoiceTarget::generate(g));
let dependencies = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ChoiceSelectionT>()).collect::<alloc::vec::Vec<_>>() };
let search = g.string();
let page_size: u16 = g.u16();
let page_size = (1 + (page_size as u64) % (100 - 1 + 1)) as u16;
let page_cursor = if g.bool() { Some(g.string()) } else { None };
Self { target, dependencies, search, page_size, page_cursor }
}
}
impl Generate for ListDomainsRequestT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for SelectDomainRequestT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for AttachTransactionRequestT {
fn generate(g: &mut Gen) -> Self {
let transaction_id = g.string();
Self { transaction_id }
}
}
impl Generate for InspectTransactionRequestT {
fn generate(g: &mut Gen) -> Self {
let target = InspectionTargetT::generate(g);
let operation: u64 = g.u64();
let operation = if operation == 0 { 1 } else { operation };
let operation = if g.bool() { Some(operation) } else { None };
Self { target, operation }
}
}
impl Generate for SubscribeRequestT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let statement = g.string();
let subscription_type = Some(SubscriptionType::generate(g));
Self { domain, statement, subscription_type }
}
}
impl Generate for UnsubscribeRequestT {
fn generate(g: &mut Gen) -> Self {
let subscription = g.string();
Self { subscription }
}
}
impl Generate for CancelRequestT {
fn generate(g: &mut Gen) -> Self {
let target_request_id: u64 = g.u64();
let target_request_id = if target_request_id == 0 { 1 } else { target_request_id };
Self { target_request_id }
}
}
impl Generate for AttachDomainClockRequestT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for DetachDomainClockRequestT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for OpenIngestorRequestT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let ingestor = g.string();
let expected_fields = { let n = g.len(1, 4); (0..n).map(|_| g.nested::<RowFieldT>()).collect::<alloc::vec::Vec<_>>() };
let max_outstanding_batches: u32 = g.u32();
let max_outstanding_batches = ((max_outstanding_batches as u64) % (1024 + 1)) as u32;
let max_outstanding_batches = if max_outstanding_batches == 0 { 1 } else { max_outstanding_batches };
let max_outstanding_bytes: u64 = g.u64();
let max_outstanding_bytes = ((max_outstanding_bytes as u64) % (33554432 + 1)) as u64;
let max_outstanding_bytes = if max_outstanding_bytes == 0 { 1 } else { max_outstanding_bytes };
Self { domain, ingestor, expected_fields, max_outstanding_batches, max_outstanding_bytes }
}
}
impl Generate for SubmitBatchRequestT {
fn generate(g: &mut Gen) -> Self {
let producer: u64 = g.u64();
let producer = if producer == 0 { 1 } else { producer };
let batch = { let n = g.len(1, 4); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
Self { producer, batch }
}
}
impl Generate for CloseIngestorRequestT {
fn generate(g: &mut Gen) -> Self {
let producer: u64 = g.u64();
let producer = if producer == 0 { 1 } else { producer };
Self { producer }
}
}
impl Generate for OpenEmitterRequestT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let emitter = g.string();
let expected_fields = { let n = g.len(1, 4); (0..n).map(|_| g.nested::<RowFieldT>()).collect::<alloc::vec::Vec<_>>() };
let max_outstanding_batches: u32 = g.u32();
let max_outstanding_batches = ((max_outstanding_batches as u64) % (1024 + 1)) as u32;
let max_outstanding_batches = if max_outstanding_batches == 0 { 1 } else { max_outstanding_batches };
let max_outstanding_bytes: u64 = g.u64();
let max_outstanding_bytes = ((max_outstanding_bytes as u64) % (33554432 + 1)) as u64;
let max_outstanding_bytes = if max_outstanding_bytes == 0 { 1 } else { max_outstanding_bytes };
Self { domain, emitter, expected_fields, max_outstanding_batches, max_outstanding_bytes }
}
}
impl Generate for ReadEmitterBatchRequestT {
fn generate(g: &mut Gen) -> Self {
let consumer: u64 = g.u64();
let consumer = if consumer == 0 { 1 } else { consumer };
Self { consumer }
}
}
impl Generate for SettleEmitterBatchRequestT {
fn generate(g: &mut Gen) -> Self {
let consumer: u64 = g.u64();
let reference = { let n = g.len(16, 16); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
let decision = if g.bool() { Some(EmitterBatchDecision::generate(g)) } else { None };
let reason = g.string();
Self { consumer, reference, decision, reason }
}
}
impl Generate for CloseEmitterRequestT {
fn generate(g: &mut Gen) -> Self {
let consumer: u64 = g.u64();
Self { consumer }
}
}
impl Generate for CommandCompletedT {
fn generate(g: &mut Gen) -> Self {
let already_existed: bool = g.bool();
Self { already_existed }
}
}
impl Generate for TransactionDetachedT {
fn generate(g: &mut Gen) -> Self {
let transaction_id = g.string();
Self { transaction_id }
}
}
impl Generate for TransactionTakenOverT {
fn generate(g: &mut Gen) -> Self {
let transaction_id = g.string();
Self { transaction_id }
}
}
impl Generate for OutcomeUnknownT {
fn generate(g: &mut Gen) -> Self {
let cause = Some(UnknownOutcomeCause::generate(g));
Self { cause }
}
}
impl Generate for ExecutionReferenceConflictT {
fn generate(g: &mut Gen) -> Self {
let conflict = Some(ExecutionReferenceConflictKind::generate(g));
Self { conflict }
}
}
impl Generate for ExecutionReferenceExpiredT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for PreviewStaleT {
fn generate(g: &mut Gen) -> Self {
let expected = alloc::boxed::Box::new(g.nested::<TransactionPreviewIdentityT>());
let current = alloc::boxed::Box::new(g.nested::<TransactionPreviewIdentityT>());
Self { expected, current }
}
}
impl Generate for StatementOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = StatementDispositionT::generate(g);
let message = g.string();
let diagnostics = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DiagnosticT>()).collect::<alloc::vec::Vec<_>>() };
Self { disposition, message, diagnostics }
}
}
impl Generate for CommandOutcomeT {
fn generate(g: &mut Gen) -> Self {
let execution_reference = g.string();
let origin = Some(OutcomeOrigin::generate(g));
let disposition = CommandDispositionT::generate(g);
let message = g.string();
let diagnostics = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DiagnosticT>()).collect::<alloc::vec::Vec<_>>() };
let statements = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<StatementOutcomeT>()).collect::<alloc::vec::Vec<_>>() };
let transaction = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<TransactionStatusT>())) } else { None };
let transaction_admission = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<TransactionOperationAdmissionT>())) } else { None };
let inspection = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<TransactionInspectedT>())) } else { None };
let wasm_state = if g.bool() { Some(g.string()) } else { None };
let resource = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<ResourceDescriptionT>())) } else { None };
let backup = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<BackupArchiveSummaryT>())) } else { None };
let restore = if !g.at_depth_limit() && g.bool() { Some(alloc::boxed::Box::new(g.nested::<RestoreReportT>())) } else { None };
Self { execution_reference, origin, disposition, message, diagnostics, statements, transaction, transaction_admission, inspection, wasm_state, resource, backup, restore }
}
}
impl Generate for TransactionAttachedT {
fn generate(g: &mut Gen) -> Self {
let transaction = alloc::boxed::Box::new(g.nested::<TransactionStatusT>());
Self { transaction }
}
}
impl Generate for TransactionAlreadyFinishedT {
fn generate(g: &mut Gen) -> Self {
let transaction = alloc::boxed::Box::new(g.nested::<TransactionStatusT>());
Self { transaction }
}
}
impl Generate for AttachOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = AttachDispositionT::generate(g);
let message = g.string();
let diagnostics = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DiagnosticT>()).collect::<alloc::vec::Vec<_>>() };
Self { disposition, message, diagnostics }
}
}
impl Generate for TextEditT {
fn generate(g: &mut Gen) -> Self {
let start: u32 = g.u32();
let end: u32 = g.u32();
let replacement = g.string();
Self { start, end, replacement }
}
}
impl Generate for SuggestionT {
fn generate(g: &mut Gen) -> Self {
let value = g.string();
let kind = Some(SuggestionKind::generate(g));
let edit = alloc::boxed::Box::new(g.nested::<TextEditT>());
Self { value, kind, edit }
}
}
impl Generate for SuggestOutcomeT {
fn generate(g: &mut Gen) -> Self {
let status = Some(SuggestionStatus::generate(g));
let suggestions = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<SuggestionT>()).collect::<alloc::vec::Vec<_>>() };
let continuation = if g.bool() { Some(g.string()) } else { None };
Self { status, suggestions, continuation }
}
}
impl Generate for ChoiceOutcomeT {
fn generate(g: &mut Gen) -> Self {
let status = Some(ChoiceStatus::generate(g));
let choices = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<ChoiceT>()).collect::<alloc::vec::Vec<_>>() };
let page_cursor = if g.bool() { Some(g.string()) } else { None };
Self { status, choices, page_cursor }
}
}
impl Generate for UnpacedDomainT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for PacedDomainT {
fn generate(g: &mut Gen) -> Self {
let period_nanos: u64 = g.u64();
let period_nanos = if period_nanos == 0 { 1 } else { period_nanos };
let skew_nanos: u64 = g.u64();
Self { period_nanos, skew_nanos }
}
}
impl Generate for DomainInfoT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let status = Some(DomainStatus::generate(g));
let pace = DomainPaceT::generate(g);
Self { domain, status, pace }
}
}
impl Generate for DomainListT {
fn generate(g: &mut Gen) -> Self {
let domains = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DomainInfoT>()).collect::<alloc::vec::Vec<_>>() };
Self { domains }
}
}
impl Generate for DomainSelectedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for DomainNotFoundT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for DomainSelectionOutcomeT {
fn generate(g: &mut Gen) -> Self {
let selection = DomainSelectionT::generate(g);
Self { selection }
}
}
impl Generate for TransactionInspectedT {
fn generate(g: &mut Gen) -> Self {
let transaction = alloc::boxed::Box::new(g.nested::<TransactionStatusT>());
let operation: u64 = g.u64();
let operation = if g.bool() { Some(operation) } else { None };
let report = alloc::boxed::Box::new(g.nested::<TransactionImpactReportT>());
Self { transaction, operation, report }
}
}
impl Generate for InspectionRejectedT {
fn generate(g: &mut Gen) -> Self {
let rejection = Some(InspectionRejection::generate(g));
let message = g.string();
Self { rejection, message }
}
}
impl Generate for InspectionOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = InspectionDispositionT::generate(g);
Self { disposition }
}
}
impl Generate for SubscriptionHandleT {
fn generate(g: &mut Gen) -> Self {
let name = g.string();
let generation: u64 = g.u64();
let generation = if generation == 0 { 1 } else { generation };
Self { name, generation }
}
}
impl Generate for SubscriptionOpenedT {
fn generate(g: &mut Gen) -> Self {
let subscription = alloc::boxed::Box::new(g.nested::<SubscriptionHandleT>());
let domain = g.string();
let relay = g.string();
let subscription_type = Some(SubscriptionType::generate(g));
let schema = alloc::boxed::Box::new(g.nested::<RowSchemaT>());
Self { subscription, domain, relay, subscription_type, schema }
}
}
impl Generate for SubscribeOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = SubscribeDispositionT::generate(g);
let message = g.string();
let diagnostics = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DiagnosticT>()).collect::<alloc::vec::Vec<_>>() };
Self { disposition, message, diagnostics }
}
}
impl Generate for SubscriptionDeletedT {
fn generate(g: &mut Gen) -> Self {
let subscription = alloc::boxed::Box::new(g.nested::<SubscriptionHandleT>());
Self { subscription }
}
}
impl Generate for UnsubscribeOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = UnsubscribeDispositionT::generate(g);
let message = g.string();
let diagnostics = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DiagnosticT>()).collect::<alloc::vec::Vec<_>>() };
Self { disposition, message, diagnostics }
}
}
impl Generate for CancelOutcomeT {
fn generate(g: &mut Gen) -> Self {
let target_request_id: u64 = g.u64();
let target_request_id = if target_request_id == 0 { 1 } else { target_request_id };
let state = Some(CancelState::generate(g));
Self { target_request_id, state }
}
}
impl Generate for RequestCancelledT {
fn generate(g: &mut Gen) -> Self {
let stage = Some(CancellationStage::generate(g));
Self { stage }
}
}
impl Generate for RequestRejectedT {
fn generate(g: &mut Gen) -> Self {
let rejection = Some(RequestRejection::generate(g));
let field = if g.bool() { Some(g.string()) } else { None };
let message = g.string();
Self { rejection, field, message }
}
}
impl Generate for TransferPartT {
fn generate(g: &mut Gen) -> Self {
let total_bytes: u64 = g.u64();
let total_bytes = if total_bytes == 0 { 1 } else { total_bytes };
let offset: u64 = g.u64();
let chunk = { let n = g.len(1, 4); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
Self { total_bytes, offset, chunk }
}
}
impl Generate for DomainClockAttachedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let clock = alloc::boxed::Box::new(g.nested::<DomainClockObservationT>());
Self { domain, clock }
}
}
impl Generate for DomainClockAlreadyAttachedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for DomainClockAttachOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = DomainClockAttachDispositionT::generate(g);
let message = g.string();
Self { disposition, message }
}
}
impl Generate for DomainClockDetachedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for DomainClockNotAttachedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
Self { domain }
}
}
impl Generate for DomainClockDetachOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = DomainClockDetachDispositionT::generate(g);
let message = g.string();
Self { disposition, message }
}
}
impl Generate for ProducerOpenedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let ingestor = g.string();
let fields = { let n = g.len(1, 4); (0..n).map(|_| g.nested::<RowFieldT>()).collect::<alloc::vec::Vec<_>>() };
let generation: u64 = g.u64();
let contract = alloc::boxed::Box::new(g.nested::<FingerprintT>());
let attachment = { let n = g.len(16, 16); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
let window = ProducerWindowT::generate(g);
let ack_timeout_nanos: u64 = g.u64();
let ack_timeout_nanos = if ack_timeout_nanos == 0 { 1 } else { ack_timeout_nanos };
let retry_backoff_nanos: u64 = g.u64();
let retry_backoff_nanos = if retry_backoff_nanos == 0 { 1 } else { retry_backoff_nanos };
let retry_max_backoff_nanos: u64 = g.u64();
let retry_max_backoff_nanos = retry_backoff_nanos.saturating_add(retry_max_backoff_nanos % 1000);
let granted_batches: u32 = g.u32();
let granted_batches = if granted_batches == 0 { 1 } else { granted_batches };
let granted_bytes: u64 = g.u64();
let granted_bytes = if granted_bytes == 0 { 1 } else { granted_bytes };
let max_batch_bytes: u64 = g.u64();
let max_batch_bytes = if granted_bytes == u64::MAX { max_batch_bytes } else { max_batch_bytes % (granted_bytes + 1) };
let max_batch_bytes = if max_batch_bytes == 0 { 1 } else { max_batch_bytes };
let max_batch_rows: u32 = g.u32();
let max_batch_rows = if max_batch_rows == 0 { 1 } else { max_batch_rows };
let admission = Some(ProducerAdmission::generate(g));
Self { domain, ingestor, fields, generation, contract, attachment, window, ack_timeout_nanos, retry_backoff_nanos, retry_max_backoff_nanos, granted_batches, granted_bytes, max_batch_bytes, max_batch_rows, admission }
}
}
impl Generate for ProducerRefusedT {
fn generate(g: &mut Gen) -> Self {
let refusal = Some(ProducerRefusal::generate(g));
Self { refusal }
}
}
impl Generate for OpenIngestorOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = OpenIngestorDispositionT::generate(g);
let message = g.string();
Self { disposition, message }
}
}
impl Generate for SubmissionNotAdmittedT {
fn generate(g: &mut Gen) -> Self {
let refusal = Some(SubmissionRefusal::generate(g));
Self { refusal }
}
}
impl Generate for SubmissionCompletedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for SubmissionFailedT {
fn generate(g: &mut Gen) -> Self {
let failure = Some(ProcessingFailure::generate(g));
Self { failure }
}
}
impl Generate for SubmissionOutcomeUnknownT {
fn generate(g: &mut Gen) -> Self {
let cause = Some(OutcomeUncertainty::generate(g));
Self { cause }
}
}
impl Generate for SubmissionOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = SubmissionDispositionT::generate(g);
let message = g.string();
Self { disposition, message }
}
}
impl Generate for ProducerClosedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ProducerNotOpenT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for CloseIngestorOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = CloseIngestorDispositionT::generate(g);
let message = g.string();
Self { disposition, message }
}
}
impl Generate for SequentialConsumerWindowT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ParallelConsumerWindowT {
fn generate(g: &mut Gen) -> Self {
let max: u64 = g.u64();
Self { max }
}
}
impl Generate for EmitterOpenedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let emitter = g.string();
let fields = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<RowFieldT>()).collect::<alloc::vec::Vec<_>>() };
let generation: u64 = g.u64();
let contract = alloc::boxed::Box::new(g.nested::<FingerprintT>());
let window = ConsumerWindowT::generate(g);
let ack_timeout_nanos: u64 = g.u64();
let retry_backoff_nanos: u64 = g.u64();
let retry_max_backoff_nanos: u64 = g.u64();
let granted_batches: u32 = g.u32();
let granted_bytes: u64 = g.u64();
let max_batch_bytes: u64 = g.u64();
let max_batch_rows: u32 = g.u32();
Self { domain, emitter, fields, generation, contract, window, ack_timeout_nanos, retry_backoff_nanos, retry_max_backoff_nanos, granted_batches, granted_bytes, max_batch_bytes, max_batch_rows }
}
}
impl Generate for EmitterRefusedT {
fn generate(g: &mut Gen) -> Self {
let refusal = if g.bool() { Some(EmitterOpenRefusal::generate(g)) } else { None };
Self { refusal }
}
}
impl Generate for OpenEmitterOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = OpenEmitterDispositionT::generate(g);
let message = g.string();
Self { disposition, message }
}
}
impl Generate for EmitterBatchReceivedT {
fn generate(g: &mut Gen) -> Self {
let identity = { let n = g.len(16, 16); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
let reference = { let n = g.len(16, 16); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
let source_relay = g.string();
let branch_fingerprint = if g.bool() { Some({ let n = g.len(32, 32); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() }) } else { None };
let batch = { let n = g.len(0, 24); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
let members: u32 = g.u32();
let execution_now_unix_nanos: i64 = g.i64();
Self { identity, reference, source_relay, branch_fingerprint, batch, members, execution_now_unix_nanos }
}
}
impl Generate for EmitterConsumerEndedT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ReadEmitterBatchOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = ReadEmitterDispositionT::generate(g);
let message = g.string();
Self { disposition, message }
}
}
impl Generate for SettleEmitterBatchOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = if g.bool() { Some(EmitterSettlement::generate(g)) } else { None };
let message = g.string();
Self { disposition, message }
}
}
impl Generate for CloseEmitterOutcomeT {
fn generate(g: &mut Gen) -> Self {
let disposition = if g.bool() { Some(EmitterCloseDisposition::generate(g)) } else { None };
let message = g.string();
Self { disposition, message }
}
}
impl Generate for ReplyT {
fn generate(g: &mut Gen) -> Self {
let request_id: u64 = g.u64();
let request_id = if request_id == 0 { 1 } else { request_id };
let body = ReplyBodyT::generate(g);
Self { request_id, body }
}
}
impl Generate for ServerNoticeT {
fn generate(g: &mut Gen) -> Self {
let level = Some(NoticeLevel::generate(g));
let message = g.string();
Self { level, message }
}
}
impl Generate for LeaderIsServingNodeT {
fn generate(g: &mut Gen) -> Self {
let node = g.string();
Self { node }
}
}
impl Generate for LeaderIsRemoteT {
fn generate(g: &mut Gen) -> Self {
let leader = alloc::boxed::Box::new(g.nested::<LeaderEndpointsT>());
Self { leader }
}
}
impl Generate for LeaderUnknownT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for LeadershipObservedT {
fn generate(g: &mut Gen) -> Self {
let leadership = LeadershipT::generate(g);
Self { leadership }
}
}
impl Generate for DomainsObservedT {
fn generate(g: &mut Gen) -> Self {
let domains = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DomainInfoT>()).collect::<alloc::vec::Vec<_>>() };
Self { domains }
}
}
impl Generate for ModelEntityT {
fn generate(g: &mut Gen) -> Self {
let node = alloc::boxed::Box::new(g.nested::<NodeRefT>());
Self { node }
}
}
impl Generate for ResourceEntityT {
fn generate(g: &mut Gen) -> Self {
let name = g.string();
let latest_version: u64 = g.u64();
let latest_version = if latest_version == 0 { 1 } else { latest_version };
let latest_version = if g.bool() { Some(latest_version) } else { None };
Self { name, latest_version }
}
}
impl Generate for DomainEntityEntryT {
fn generate(g: &mut Gen) -> Self {
let entity = DomainEntityT::generate(g);
Self { entity }
}
}
impl Generate for DomainSnapshotObservedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let graph_json = g.string();
let entities = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DomainEntityEntryT>()).collect::<alloc::vec::Vec<_>>() };
Self { domain, graph_json, entities }
}
}
impl Generate for ClusterObservedT {
fn generate(g: &mut Gen) -> Self {
let running_domains: u64 = g.u64();
let graph_nodes: u64 = g.u64();
let relays: u64 = g.u64();
Self { running_domains, graph_nodes, relays }
}
}
impl Generate for SubscriptionRowsT {
fn generate(g: &mut Gen) -> Self {
let subscription = alloc::boxed::Box::new(g.nested::<SubscriptionHandleT>());
let batch = alloc::boxed::Box::new(g.nested::<RowBatchT>());
Self { subscription, batch }
}
}
impl Generate for SubscriptionDeliveryLostT {
fn generate(g: &mut Gen) -> Self {
let subscription = alloc::boxed::Box::new(g.nested::<SubscriptionHandleT>());
let dropped_rows: u64 = g.u64();
let dropped_rows = if dropped_rows == 0 { 1 } else { dropped_rows };
Self { subscription, dropped_rows }
}
}
impl Generate for SubscriptionRowsSkippedT {
fn generate(g: &mut Gen) -> Self {
let subscription = alloc::boxed::Box::new(g.nested::<SubscriptionHandleT>());
let cause = Some(RowsSkippedCause::generate(g));
let skipped_rows: u64 = g.u64();
let skipped_rows = if skipped_rows == 0 { 1 } else { skipped_rows };
let message = g.string();
Self { subscription, cause, skipped_rows, message }
}
}
impl Generate for SubscriptionEndedT {
fn generate(g: &mut Gen) -> Self {
let subscription = alloc::boxed::Box::new(g.nested::<SubscriptionHandleT>());
let reason = Some(SubscriptionEndReason::generate(g));
let message = g.string();
Self { subscription, reason, message }
}
}
impl Generate for DomainClockObservedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let clock = alloc::boxed::Box::new(g.nested::<DomainClockObservationT>());
Self { domain, clock }
}
}
impl Generate for DomainClockTickedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let generation: u64 = g.u64();
let generation = if generation == 0 { 1 } else { generation };
let tick_id: u64 = g.u64();
let tick_id = if tick_id == 0 { 1 } else { tick_id };
let logical_boundary_unix_nanos: i64 = g.i64();
let authority_utc_unix_nanos: i64 = g.i64();
let serving_logical_unix_nanos: i64 = g.i64();
Self { domain, generation, tick_id, logical_boundary_unix_nanos, authority_utc_unix_nanos, serving_logical_unix_nanos }
}
}
impl Generate for DomainClockAttachmentEndedT {
fn generate(g: &mut Gen) -> Self {
let domain = g.string();
let reason = Some(DomainClockAttachmentEndReason::generate(g));
Self { domain, reason }
}
}
impl Generate for ProducerAdmissionChangedT {
fn generate(g: &mut Gen) -> Self {
let producer: u64 = g.u64();
let producer = if producer == 0 { 1 } else { producer };
let admission = Some(ProducerAdmission::generate(g));
Self { producer, admission }
}
}
impl Generate for ProducerEndedT {
fn generate(g: &mut Gen) -> Self {
let producer: u64 = g.u64();
let producer = if producer == 0 { 1 } else { producer };
let reason = Some(ProducerEndReason::generate(g));
let message = g.string();
Self { producer, reason, message }
}
}
impl Generate for ServerShuttingDownT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for ProtocolViolatedT {
fn generate(g: &mut Gen) -> Self {
let message = g.string();
Self { message }
}
}
impl Generate for SessionEndingT {
fn generate(g: &mut Gen) -> Self {
let reason = SessionEndReasonT::generate(g);
Self { reason }
}
}
impl Generate for UploadStartT {
fn generate(g: &mut Gen) -> Self {
let request_id: u64 = g.u64();
let request_id = if request_id == 0 { 1 } else { request_id };
let domain = g.string();
let resource = g.string();
let upload_identity = g.string();
let total_bytes: u64 = g.u64();
let total_bytes = if total_bytes == 0 { 1 } else { total_bytes };
Self { request_id, domain, resource, upload_identity, total_bytes }
}
}
impl Generate for UploadChunkT {
fn generate(g: &mut Gen) -> Self {
let bytes = { let n = g.len(1, 4); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
Self { bytes }
}
}
impl Generate for ResourceInstalledT {
fn generate(g: &mut Gen) -> Self {
let upload_identity = g.string();
let version: u64 = g.u64();
let version = if version == 0 { 1 } else { version };
let origin = Some(OutcomeOrigin::generate(g));
Self { upload_identity, version, origin }
}
}
impl Generate for UploadFailedT {
fn generate(g: &mut Gen) -> Self {
let upload_identity = if g.bool() { Some(g.string()) } else { None };
let failure = Some(UploadFailure::generate(g));
let assigned_version: u64 = g.u64();
let assigned_version = if assigned_version == 0 { 1 } else { assigned_version };
let assigned_version = if g.bool() { Some(assigned_version) } else { None };
Self { upload_identity, failure, assigned_version }
}
}
impl Generate for BackupDownloadRequestT {
fn generate(g: &mut Gen) -> Self {
let execution_reference = g.string();
Self { execution_reference }
}
}
impl Generate for BackupArchiveStartT {
fn generate(g: &mut Gen) -> Self {
let total_bytes: u64 = g.u64();
let total_bytes = if total_bytes == 0 { 1 } else { total_bytes };
let digest = alloc::boxed::Box::new(g.nested::<FingerprintT>());
Self { total_bytes, digest }
}
}
impl Generate for BackupArchiveChunkT {
fn generate(g: &mut Gen) -> Self {
let bytes = { let n = g.len(1, 4); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
Self { bytes }
}
}
impl Generate for BackupArchiveCompleteT {
fn generate(g: &mut Gen) -> Self {
let _ = g;
Self {  }
}
}
impl Generate for BackupDownloadFailedT {
fn generate(g: &mut Gen) -> Self {
let failure = Some(BackupDownloadFailure::generate(g));
let message = g.string();
Self { failure, message }
}
}
impl Generate for RestoreStartT {
fn generate(g: &mut Gen) -> Self {
let request_id: u64 = g.u64();
let request_id = if request_id == 0 { 1 } else { request_id };
let execution_reference = g.string();
let statement = g.string();
let total_bytes: u64 = g.u64();
let total_bytes = if total_bytes == 0 { 1 } else { total_bytes };
let digest = alloc::boxed::Box::new(g.nested::<FingerprintT>());
Self { request_id, execution_reference, statement, total_bytes, digest }
}
}
impl Generate for RestoreChunkT {
fn generate(g: &mut Gen) -> Self {
let bytes = { let n = g.len(1, 4); (0..n).map(|_| g.u8()).collect::<alloc::vec::Vec<_>>() };
Self { bytes }
}
}
impl Generate for RestoreUploadFailedT {
fn generate(g: &mut Gen) -> Self {
let failure = Some(RestoreUploadFailure::generate(g));
let message = g.string();
Self { failure, message }
}
}
impl Generate for ClientMessageT {
fn generate(g: &mut Gen) -> Self {
let request_id: u64 = g.u64();
let request_id = if request_id == 0 { 1 } else { request_id };
let request = ClientRequestT::generate(g);
Self { request_id, request }
}
}
impl Generate for ServerMessageT {
fn generate(g: &mut Gen) -> Self {
let body = ServerBodyT::generate(g);
Self { body }
}
}
impl Generate for UploadMessageT {
fn generate(g: &mut Gen) -> Self {
let part = UploadPartT::generate(g);
Self { part }
}
}
impl Generate for BackupDownloadMessageT {
fn generate(g: &mut Gen) -> Self {
let part = BackupDownloadPartT::generate(g);
Self { part }
}
}
impl Generate for UploadReplyT {
fn generate(g: &mut Gen) -> Self {
let request_id: u64 = g.u64();
let request_id = if g.bool() { Some(request_id) } else { None };
let disposition = UploadDispositionT::generate(g);
let message = g.string();
let diagnostics = { let n = g.len(0, 4); (0..n).map(|_| g.nested::<DiagnosticT>()).collect::<alloc::vec::Vec<_>>() };
Self { request_id, disposition, message, diagnostics }
}
}
impl Generate for RestoreMessageT {
fn generate(g: &mut Gen) -> Self {
let part = RestorePartT::generate(g);
Self { part }
}
}
impl Generate for RestoreReplyT {
fn generate(g: &mut Gen) -> Self {
let request_id: u64 = g.u64();
let request_id = if g.bool() { Some(request_id) } else { None };
let disposition = RestoreDispositionT::generate(g);
Self { request_id, disposition }
}
}
