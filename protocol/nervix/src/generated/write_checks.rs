impl CheckWrite for SourceSpanT {
fn check_write(&self, _cx: &mut WriteCx) -> Result<(), EncodeError> {
{ let v = self.start;
}
{ let v = self.end;
if v < self.start { fail!("SourceSpan", "end", Fault::Order { other: "start", must_be: "at least" }); }
}
Ok(())
}
}
impl CheckWrite for OperationRangeT {
fn check_write(&self, _cx: &mut WriteCx) -> Result<(), EncodeError> {
{ let v = self.first;
if v == 0 { fail!("OperationRange", "first", Fault::Zero); }
}
{ let v = self.last;
if v < self.first { fail!("OperationRange", "last", Fault::Order { other: "first", must_be: "at least" }); }
}
Ok(())
}
}
impl ChoiceValueT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::DomainPaceVariant(v) => cx.nested(&**v, table, field),
Self::PlacementPolicyVariant(v) => cx.nested(&**v, table, field),
Self::DomainChoiceReference(v) => cx.nested(&**v, table, field),
Self::ResourceChoiceReference(v) => cx.nested(&**v, table, field),
Self::ModelChoiceReference(v) => cx.nested(&**v, table, field),
Self::FieldChoiceReference(v) => cx.nested(&**v, table, field),
Self::ResourceVersionNumber(v) => cx.nested(&**v, table, field),
Self::LatestResourceVersion(v) => cx.nested(&**v, table, field),
}
}
}
impl TransactionStateT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::TransactionOpen(v) => cx.nested(&**v, table, field),
Self::TransactionCommitting(v) => cx.nested(&**v, table, field),
Self::TransactionCommitted(v) => cx.nested(&**v, table, field),
Self::TransactionFailed(v) => cx.nested(&**v, table, field),
Self::TransactionReverted(v) => cx.nested(&**v, table, field),
Self::TransactionExpired(v) => cx.nested(&**v, table, field),
}
}
}
impl InspectionTargetT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::AttachedTransaction(v) => cx.nested(&**v, table, field),
Self::TransactionById(v) => cx.nested(&**v, table, field),
}
}
}
impl ImpactCompletenessT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ImpactComplete(v) => cx.nested(&**v, table, field),
Self::ImpactIncomplete(v) => cx.nested(&**v, table, field),
}
}
}
impl BranchCoverageT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::AllBranchCoverage(v) => cx.nested(&**v, table, field),
Self::UnbranchedCoverage(v) => cx.nested(&**v, table, field),
Self::DeclaredBranchCoverage(v) => cx.nested(&**v, table, field),
Self::SelectedBranchCoverage(v) => cx.nested(&**v, table, field),
}
}
}
impl NodeBranchCoverageT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ConfigurationCoverage(v) => cx.nested(&**v, table, field),
Self::AllBranchCoverage(v) => cx.nested(&**v, table, field),
Self::UnbranchedCoverage(v) => cx.nested(&**v, table, field),
Self::DeclaredBranchCoverage(v) => cx.nested(&**v, table, field),
Self::SelectedBranchCoverage(v) => cx.nested(&**v, table, field),
}
}
}
impl PauseRequirementT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::NoPause(v) => cx.nested(&**v, table, field),
Self::SubgraphPause(v) => cx.nested(&**v, table, field),
Self::DomainPause(v) => cx.nested(&**v, table, field),
}
}
}
impl RequestedResourceVersionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ResourceVersionNumber(v) => cx.nested(&**v, table, field),
Self::LatestResourceVersion(v) => cx.nested(&**v, table, field),
}
}
}
impl TransactionOperationT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::CreateConfigurationOperation(v) => cx.nested(&**v, table, field),
Self::AlterConfigurationOperation(v) => cx.nested(&**v, table, field),
Self::DropConfigurationOperation(v) => cx.nested(&**v, table, field),
Self::AlterDomainOperation(v) => cx.nested(&**v, table, field),
Self::StartDomainOperation(v) => cx.nested(&**v, table, field),
Self::StopDomainOperation(v) => cx.nested(&**v, table, field),
Self::CreateResourceOperation(v) => cx.nested(&**v, table, field),
Self::RebindResourceOperation(v) => cx.nested(&**v, table, field),
Self::ResetWasmStateOperation(v) => cx.nested(&**v, table, field),
}
}
}
impl OperationImpactReasonT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ConfigurationReason(v) => cx.nested(&**v, table, field),
Self::DomainPlacementReason(v) => cx.nested(&**v, table, field),
Self::DomainStartReason(v) => cx.nested(&**v, table, field),
Self::DomainStopReason(v) => cx.nested(&**v, table, field),
Self::ResourceCatalogReason(v) => cx.nested(&**v, table, field),
Self::ResourceRebindingReason(v) => cx.nested(&**v, table, field),
Self::WasmStateResetReason(v) => cx.nested(&**v, table, field),
}
}
}
impl ConfigurationTransitionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ConfigurationCreated(v) => cx.nested(&**v, table, field),
Self::ConfigurationChanged(v) => cx.nested(&**v, table, field),
Self::ConfigurationDropped(v) => cx.nested(&**v, table, field),
}
}
}
impl QuiescenceOutcomeT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::QuiescenceRequested(v) => cx.nested(&**v, table, field),
Self::QuiescenceConfirmed(v) => cx.nested(&**v, table, field),
Self::QuiescenceFailed(v) => cx.nested(&**v, table, field),
Self::QuiescenceUncertain(v) => cx.nested(&**v, table, field),
Self::QuiescenceReleased(v) => cx.nested(&**v, table, field),
}
}
}
impl ExecutionStepOutcomeT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::StepUnattempted(v) => cx.nested(&**v, table, field),
Self::StepApplying(v) => cx.nested(&**v, table, field),
Self::StepApplied(v) => cx.nested(&**v, table, field),
Self::StepFailed(v) => cx.nested(&**v, table, field),
}
}
}
impl ResourceEntryContentT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ResourceDirectory(v) => cx.nested(&**v, table, field),
Self::ResourceFile(v) => cx.nested(&**v, table, field),
}
}
}
impl ResourceVersionEntriesT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ResourceEntriesListed(v) => cx.nested(&**v, table, field),
Self::ResourceEntriesUnavailable(v) => cx.nested(&**v, table, field),
}
}
}
impl FieldTypeShapeT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ScalarFieldType(v) => cx.nested(&**v, table, field),
Self::FixedListFieldType(v) => cx.nested(&**v, table, field),
Self::ListFieldType(v) => cx.nested(&**v, table, field),
}
}
}
impl CellValueT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::NullCell(v) => cx.nested(&**v, table, field),
Self::RedactedCell(v) => cx.nested(&**v, table, field),
Self::U8Cell(v) => cx.nested(&**v, table, field),
Self::I8Cell(v) => cx.nested(&**v, table, field),
Self::U16Cell(v) => cx.nested(&**v, table, field),
Self::I16Cell(v) => cx.nested(&**v, table, field),
Self::U32Cell(v) => cx.nested(&**v, table, field),
Self::I32Cell(v) => cx.nested(&**v, table, field),
Self::U64Cell(v) => cx.nested(&**v, table, field),
Self::I64Cell(v) => cx.nested(&**v, table, field),
Self::F32Cell(v) => cx.nested(&**v, table, field),
Self::F64Cell(v) => cx.nested(&**v, table, field),
Self::BoolCell(v) => cx.nested(&**v, table, field),
Self::StringCell(v) => cx.nested(&**v, table, field),
Self::DatetimeCell(v) => cx.nested(&**v, table, field),
Self::ListCell(v) => cx.nested(&**v, table, field),
Self::BytesCell(v) => cx.nested(&**v, table, field),
}
}
}
impl DomainClockObservedStateT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::StoppedDomainClock(v) => cx.nested(&**v, table, field),
Self::UninstalledDomainClock(v) => cx.nested(&**v, table, field),
Self::UnpacedDomainClock(v) => cx.nested(&**v, table, field),
Self::PacedDomainClock(v) => cx.nested(&**v, table, field),
}
}
}
impl ProducerWindowT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::SequentialProducerWindow(v) => cx.nested(&**v, table, field),
Self::ParallelProducerWindow(v) => cx.nested(&**v, table, field),
}
}
}
impl ClientRequestT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::CommandRequest(v) => cx.nested(&**v, table, field),
Self::SuggestRequest(v) => cx.nested(&**v, table, field),
Self::ListDomainsRequest(v) => cx.nested(&**v, table, field),
Self::SelectDomainRequest(v) => cx.nested(&**v, table, field),
Self::AttachTransactionRequest(v) => cx.nested(&**v, table, field),
Self::InspectTransactionRequest(v) => cx.nested(&**v, table, field),
Self::SubscribeRequest(v) => cx.nested(&**v, table, field),
Self::UnsubscribeRequest(v) => cx.nested(&**v, table, field),
Self::CancelRequest(v) => cx.nested(&**v, table, field),
Self::ChoiceLookupRequest(v) => cx.nested(&**v, table, field),
Self::AttachDomainClockRequest(v) => cx.nested(&**v, table, field),
Self::DetachDomainClockRequest(v) => cx.nested(&**v, table, field),
Self::OpenIngestorRequest(v) => cx.nested(&**v, table, field),
Self::SubmitBatchRequest(v) => cx.nested(&**v, table, field),
Self::CloseIngestorRequest(v) => cx.nested(&**v, table, field),
Self::OpenEmitterRequest(v) => cx.nested(&**v, table, field),
Self::ReadEmitterBatchRequest(v) => cx.nested(&**v, table, field),
Self::SettleEmitterBatchRequest(v) => cx.nested(&**v, table, field),
Self::CloseEmitterRequest(v) => cx.nested(&**v, table, field),
}
}
}
impl CommandDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::CommandCompleted(v) => cx.nested(&**v, table, field),
Self::RequestFailed(v) => cx.nested(&**v, table, field),
Self::LeaderRedirect(v) => cx.nested(&**v, table, field),
Self::TransactionDetached(v) => cx.nested(&**v, table, field),
Self::TransactionTakenOver(v) => cx.nested(&**v, table, field),
Self::OutcomeUnknown(v) => cx.nested(&**v, table, field),
Self::ExecutionReferenceConflict(v) => cx.nested(&**v, table, field),
Self::ExecutionReferenceExpired(v) => cx.nested(&**v, table, field),
Self::PreviewStale(v) => cx.nested(&**v, table, field),
}
}
}
impl StatementDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::CommandCompleted(v) => cx.nested(&**v, table, field),
Self::RequestFailed(v) => cx.nested(&**v, table, field),
Self::LeaderRedirect(v) => cx.nested(&**v, table, field),
}
}
}
impl AttachDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::TransactionAttached(v) => cx.nested(&**v, table, field),
Self::TransactionAlreadyFinished(v) => cx.nested(&**v, table, field),
Self::RequestFailed(v) => cx.nested(&**v, table, field),
Self::LeaderRedirect(v) => cx.nested(&**v, table, field),
}
}
}
impl DomainPaceT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::UnpacedDomain(v) => cx.nested(&**v, table, field),
Self::PacedDomain(v) => cx.nested(&**v, table, field),
}
}
}
impl DomainSelectionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::DomainSelected(v) => cx.nested(&**v, table, field),
Self::DomainNotFound(v) => cx.nested(&**v, table, field),
}
}
}
impl InspectionDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::TransactionInspected(v) => cx.nested(&**v, table, field),
Self::InspectionRejected(v) => cx.nested(&**v, table, field),
Self::LeaderRedirect(v) => cx.nested(&**v, table, field),
}
}
}
impl SubscribeDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::SubscriptionOpened(v) => cx.nested(&**v, table, field),
Self::RequestFailed(v) => cx.nested(&**v, table, field),
}
}
}
impl UnsubscribeDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::SubscriptionDeleted(v) => cx.nested(&**v, table, field),
Self::RequestFailed(v) => cx.nested(&**v, table, field),
}
}
}
impl DomainClockAttachDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::DomainClockAttached(v) => cx.nested(&**v, table, field),
Self::DomainClockAlreadyAttached(v) => cx.nested(&**v, table, field),
Self::DomainNotFound(v) => cx.nested(&**v, table, field),
Self::RequestFailed(v) => cx.nested(&**v, table, field),
}
}
}
impl DomainClockDetachDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::DomainClockDetached(v) => cx.nested(&**v, table, field),
Self::DomainClockNotAttached(v) => cx.nested(&**v, table, field),
Self::RequestFailed(v) => cx.nested(&**v, table, field),
}
}
}
impl OpenIngestorDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ProducerOpened(v) => cx.nested(&**v, table, field),
Self::ProducerRefused(v) => cx.nested(&**v, table, field),
}
}
}
impl SubmissionDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::SubmissionNotAdmitted(v) => cx.nested(&**v, table, field),
Self::SubmissionCompleted(v) => cx.nested(&**v, table, field),
Self::SubmissionFailed(v) => cx.nested(&**v, table, field),
Self::SubmissionOutcomeUnknown(v) => cx.nested(&**v, table, field),
}
}
}
impl CloseIngestorDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ProducerClosed(v) => cx.nested(&**v, table, field),
Self::ProducerNotOpen(v) => cx.nested(&**v, table, field),
}
}
}
impl ConsumerWindowT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::SequentialConsumerWindow(v) => cx.nested(&**v, table, field),
Self::ParallelConsumerWindow(v) => cx.nested(&**v, table, field),
}
}
}
impl OpenEmitterDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::EmitterOpened(v) => cx.nested(&**v, table, field),
Self::EmitterRefused(v) => cx.nested(&**v, table, field),
}
}
}
impl ReadEmitterDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::EmitterBatchReceived(v) => cx.nested(&**v, table, field),
Self::EmitterConsumerEnded(v) => cx.nested(&**v, table, field),
}
}
}
impl ReplyBodyT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::CommandOutcome(v) => cx.nested(&**v, table, field),
Self::AttachOutcome(v) => cx.nested(&**v, table, field),
Self::SuggestOutcome(v) => cx.nested(&**v, table, field),
Self::DomainList(v) => cx.nested(&**v, table, field),
Self::DomainSelectionOutcome(v) => cx.nested(&**v, table, field),
Self::InspectionOutcome(v) => cx.nested(&**v, table, field),
Self::SubscribeOutcome(v) => cx.nested(&**v, table, field),
Self::UnsubscribeOutcome(v) => cx.nested(&**v, table, field),
Self::CancelOutcome(v) => cx.nested(&**v, table, field),
Self::RequestCancelled(v) => cx.nested(&**v, table, field),
Self::RequestRejected(v) => cx.nested(&**v, table, field),
Self::TransferPart(v) => cx.nested(&**v, table, field),
Self::ChoiceOutcome(v) => cx.nested(&**v, table, field),
Self::DomainClockAttachOutcome(v) => cx.nested(&**v, table, field),
Self::DomainClockDetachOutcome(v) => cx.nested(&**v, table, field),
Self::OpenIngestorOutcome(v) => cx.nested(&**v, table, field),
Self::SubmissionOutcome(v) => cx.nested(&**v, table, field),
Self::CloseIngestorOutcome(v) => cx.nested(&**v, table, field),
Self::OpenEmitterOutcome(v) => cx.nested(&**v, table, field),
Self::ReadEmitterBatchOutcome(v) => cx.nested(&**v, table, field),
Self::SettleEmitterBatchOutcome(v) => cx.nested(&**v, table, field),
Self::CloseEmitterOutcome(v) => cx.nested(&**v, table, field),
}
}
}
impl LeadershipT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::LeaderIsServingNode(v) => cx.nested(&**v, table, field),
Self::LeaderIsRemote(v) => cx.nested(&**v, table, field),
Self::LeaderUnknown(v) => cx.nested(&**v, table, field),
}
}
}
impl DomainEntityT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ModelEntity(v) => cx.nested(&**v, table, field),
Self::ResourceEntity(v) => cx.nested(&**v, table, field),
}
}
}
impl SessionEndReasonT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ServerShuttingDown(v) => cx.nested(&**v, table, field),
Self::LeaderRedirect(v) => cx.nested(&**v, table, field),
Self::ProtocolViolated(v) => cx.nested(&**v, table, field),
}
}
}
impl ServerBodyT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::Reply(v) => cx.nested(&**v, table, field),
Self::ServerNotice(v) => cx.nested(&**v, table, field),
Self::LeadershipObserved(v) => cx.nested(&**v, table, field),
Self::DomainsObserved(v) => cx.nested(&**v, table, field),
Self::DomainSnapshotObserved(v) => cx.nested(&**v, table, field),
Self::ClusterObserved(v) => cx.nested(&**v, table, field),
Self::SubscriptionRows(v) => cx.nested(&**v, table, field),
Self::SubscriptionDeliveryLost(v) => cx.nested(&**v, table, field),
Self::SubscriptionRowsSkipped(v) => cx.nested(&**v, table, field),
Self::SubscriptionEnded(v) => cx.nested(&**v, table, field),
Self::SessionEnding(v) => cx.nested(&**v, table, field),
Self::DomainClockObserved(v) => cx.nested(&**v, table, field),
Self::DomainClockAttachmentEnded(v) => cx.nested(&**v, table, field),
Self::DomainClockTicked(v) => cx.nested(&**v, table, field),
Self::ProducerAdmissionChanged(v) => cx.nested(&**v, table, field),
Self::ProducerEnded(v) => cx.nested(&**v, table, field),
}
}
}
impl UploadPartT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::UploadStart(v) => cx.nested(&**v, table, field),
Self::UploadChunk(v) => cx.nested(&**v, table, field),
}
}
}
impl UploadDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::ResourceInstalled(v) => cx.nested(&**v, table, field),
Self::UploadFailed(v) => cx.nested(&**v, table, field),
Self::LeaderRedirect(v) => cx.nested(&**v, table, field),
}
}
}
impl BackupDownloadPartT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::BackupArchiveStart(v) => cx.nested(&**v, table, field),
Self::BackupArchiveChunk(v) => cx.nested(&**v, table, field),
Self::BackupArchiveComplete(v) => cx.nested(&**v, table, field),
Self::BackupDownloadFailed(v) => cx.nested(&**v, table, field),
Self::LeaderRedirect(v) => cx.nested(&**v, table, field),
}
}
}
impl RestorePartT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::RestoreStart(v) => cx.nested(&**v, table, field),
Self::RestoreChunk(v) => cx.nested(&**v, table, field),
}
}
}
impl RestoreDispositionT {
pub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {
match self {
Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),
Self::CommandOutcome(v) => cx.nested(&**v, table, field),
Self::RestoreUploadFailed(v) => cx.nested(&**v, table, field),
}
}
}
impl CheckWrite for FingerprintT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.bytes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("Fingerprint", "bytes", Fault::TooManyEntries { len: v.len() }); }
if v.len() != 32 { fail!("Fingerprint", "bytes", Fault::Length { expected: 32, found: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for DiagnosticT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.message, "Diagnostic", "message")?;
}
{
if let Some(v) = &self.span { v.check_write(cx)?; }
}
Ok(())
}
}
impl CheckWrite for LeaderEndpointsT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.node, "LeaderEndpoints", "node")?;
}
{
if let Some(v) = &self.grpc_uri { cx.string(v, "LeaderEndpoints", "grpc_uri")?; }
}
{
if let Some(v) = &self.web_console_uri { cx.string(v, "LeaderEndpoints", "web_console_uri")?; }
}
Ok(())
}
}
impl CheckWrite for LeaderRedirectT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = &self.leader { cx.nested(&**v, "LeaderRedirect", "leader")?; }
}
Ok(())
}
}
impl CheckWrite for RequestFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for NodeRefT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.kind else { fail!("NodeRef", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("NodeRef", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.name, "NodeRef", "name")?;
}
Ok(())
}
}
impl CheckWrite for DomainPaceVariantT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = self.value { if v.variant_name().is_none() { fail!("DomainPaceVariant", "value", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckWrite for PlacementPolicyVariantT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = self.value { if v.variant_name().is_none() { fail!("PlacementPolicyVariant", "value", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckWrite for DomainChoiceReferenceT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainChoiceReference", "domain")?;
}
Ok(())
}
}
impl CheckWrite for ResourceChoiceReferenceT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.resource, "ResourceChoiceReference", "resource")?;
}
Ok(())
}
}
impl CheckWrite for ModelChoiceReferenceT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ModelChoiceReference", "node")?;
}
Ok(())
}
}
impl CheckWrite for FieldChoiceReferenceT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.field, "FieldChoiceReference", "field")?;
}
Ok(())
}
}
impl CheckWrite for ChoiceSelectionT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.value.check_variant(cx, "ChoiceSelection", "value")?;
}
Ok(())
}
}
impl CheckWrite for ChoicePresentationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.label, "ChoicePresentation", "label")?;
}
{
if let Some(v) = &self.detail { cx.string(v, "ChoicePresentation", "detail")?; }
}
{
if let Some(v) = &self.group { cx.string(v, "ChoicePresentation", "group")?; }
}
Ok(())
}
}
impl CheckWrite for ChoiceT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.value.check_variant(cx, "Choice", "value")?;
}
{
cx.nested(&*self.presentation, "Choice", "presentation")?;
}
Ok(())
}
}
impl CheckWrite for TransactionPreviewIdentityT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.transaction_id, "TransactionPreviewIdentity", "transaction_id")?;
}
{
cx.nested(&*self.planning_basis, "TransactionPreviewIdentity", "planning_basis")?;
}
Ok(())
}
}
impl CheckWrite for TransactionOperationAdmissionT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.operation;
if v == 0 { fail!("TransactionOperationAdmission", "operation", Fault::Zero); }
}
{
cx.nested(&*self.preview, "TransactionOperationAdmission", "preview")?;
}
Ok(())
}
}
impl CheckWrite for TransactionOpenT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for TransactionCommittingT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for TransactionCommittedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for TransactionFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.failing_operation;
if v == 0 { fail!("TransactionFailed", "failing_operation", Fault::Zero); }
}
{
cx.string(&self.error, "TransactionFailed", "error")?;
}
Ok(())
}
}
impl CheckWrite for TransactionRevertedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for TransactionExpiredT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for TransactionStatusT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.transaction_id, "TransactionStatus", "transaction_id")?;
}
{
cx.string(&self.domain, "TransactionStatus", "domain")?;
}
{
self.state.check_variant(cx, "TransactionStatus", "state")?;
}
{
let v = self.applied_operations;
if v > self.accepted_operations { fail!("TransactionStatus", "applied_operations", Fault::Order { other: "accepted_operations", must_be: "at most" }); }
}
Ok(())
}
}
impl CheckWrite for AttachedTransactionT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for TransactionByIdT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.transaction_id, "TransactionById", "transaction_id")?;
}
Ok(())
}
}
impl CheckWrite for ImpactDiagnosticT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.kind else { fail!("ImpactDiagnostic", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("ImpactDiagnostic", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.message, "ImpactDiagnostic", "message")?;
}
Ok(())
}
}
impl CheckWrite for ImpactCompleteT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ImpactIncompleteT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.diagnostics;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactIncomplete", "diagnostics", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("ImpactIncomplete", "diagnostics", Fault::Empty); }
for e in v.iter() { cx.nested(e, "ImpactIncomplete", "diagnostics")?; }
}
Ok(())
}
}
impl CheckWrite for ConfigurationCoverageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for AllBranchCoverageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for UnbranchedCoverageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for DeclaredBranchCoverageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.branch, "DeclaredBranchCoverage", "branch")?;
}
Ok(())
}
}
impl CheckWrite for SelectedBranchCoverageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.branch, "SelectedBranchCoverage", "branch")?;
}
{
let v = &self.keys;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("SelectedBranchCoverage", "keys", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("SelectedBranchCoverage", "keys", Fault::Empty); }
for e in v.iter() { cx.nested(e, "SelectedBranchCoverage", "keys")?; }
}
Ok(())
}
}
impl CheckWrite for NodeCoverageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "NodeCoverage", "node")?;
}
{
self.branches.check_variant(cx, "NodeCoverage", "branches")?;
}
Ok(())
}
}
impl CheckWrite for AttributedNodeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.coverage, "AttributedNode", "coverage")?;
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("AttributedNode", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("AttributedNode", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for GateBoundaryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.relay, "GateBoundary", "relay")?;
}
{
self.branches.check_variant(cx, "GateBoundary", "branches")?;
}
Ok(())
}
}
impl CheckWrite for AttributedGateBoundaryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.boundary, "AttributedGateBoundary", "boundary")?;
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("AttributedGateBoundary", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("AttributedGateBoundary", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for QuiesceSubgraphT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "QuiesceSubgraph", "domain")?;
}
{
let v = &self.nodes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("QuiesceSubgraph", "nodes", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "QuiesceSubgraph", "nodes")?; }
}
{
let v = &self.gate_boundaries;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("QuiesceSubgraph", "gate_boundaries", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "QuiesceSubgraph", "gate_boundaries")?; }
}
Ok(())
}
}
impl CheckWrite for NoPauseT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for SubgraphPauseT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.scope, "SubgraphPause", "scope")?;
}
Ok(())
}
}
impl CheckWrite for DomainPauseT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainPause", "domain")?;
}
Ok(())
}
}
impl CheckWrite for CreateConfigurationOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "CreateConfigurationOperation", "domain")?;
}
{
cx.nested(&*self.node, "CreateConfigurationOperation", "node")?;
}
Ok(())
}
}
impl CheckWrite for AlterConfigurationOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "AlterConfigurationOperation", "domain")?;
}
{
cx.nested(&*self.node, "AlterConfigurationOperation", "node")?;
}
Ok(())
}
}
impl CheckWrite for DropConfigurationOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DropConfigurationOperation", "domain")?;
}
{
cx.nested(&*self.node, "DropConfigurationOperation", "node")?;
}
Ok(())
}
}
impl CheckWrite for AlterDomainOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "AlterDomainOperation", "domain")?;
}
Ok(())
}
}
impl CheckWrite for StartDomainOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "StartDomainOperation", "domain")?;
}
Ok(())
}
}
impl CheckWrite for StopDomainOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "StopDomainOperation", "domain")?;
}
Ok(())
}
}
impl CheckWrite for CreateResourceOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "CreateResourceOperation", "domain")?;
}
{
cx.string(&self.resource, "CreateResourceOperation", "resource")?;
}
Ok(())
}
}
impl CheckWrite for ResourceVersionNumberT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for LatestResourceVersionT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for RebindResourceOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "RebindResourceOperation", "domain")?;
}
{
cx.string(&self.resource, "RebindResourceOperation", "resource")?;
}
{
self.requested.check_variant(cx, "RebindResourceOperation", "requested")?;
}
Ok(())
}
}
impl CheckWrite for ResetWasmStateOperationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "ResetWasmStateOperation", "domain")?;
}
{
cx.string(&self.processor, "ResetWasmStateOperation", "processor")?;
}
Ok(())
}
}
impl CheckWrite for ConfigurationReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ConfigurationReason", "node")?;
}
{
let Some(v) = self.aspect else { fail!("ConfigurationReason", "aspect", Fault::Absent); }; if v.variant_name().is_none() { fail!("ConfigurationReason", "aspect", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for DomainPlacementReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for DomainStartReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for DomainStopReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ResourceCatalogReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.resource, "ResourceCatalogReason", "resource")?;
}
Ok(())
}
}
impl CheckWrite for ResourceRebindingReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ResourceRebindingReason", "node")?;
}
{
cx.string(&self.resource, "ResourceRebindingReason", "resource")?;
}
Ok(())
}
}
impl CheckWrite for WasmStateResetReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "WasmStateResetReason", "node")?;
}
Ok(())
}
}
impl CheckWrite for OperationReasonT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.reason.check_variant(cx, "OperationReason", "reason")?;
}
Ok(())
}
}
impl CheckWrite for TopologyEdgeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.source, "TopologyEdge", "source")?;
}
{
cx.nested(&*self.target, "TopologyEdge", "target")?;
}
{
let Some(v) = self.kind else { fail!("TopologyEdge", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("TopologyEdge", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("TopologyEdge", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("TopologyEdge", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for ImpactTopologyT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.nodes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactTopology", "nodes", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactTopology", "nodes")?; }
}
{
let v = &self.edges;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactTopology", "edges", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactTopology", "edges")?; }
}
Ok(())
}
}
impl CheckWrite for AffectedTopologyT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.before, "AffectedTopology", "before")?;
}
{
cx.nested(&*self.after, "AffectedTopology", "after")?;
}
Ok(())
}
}
impl CheckWrite for ConfigurationCreatedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ConfigurationCreated", "node")?;
}
Ok(())
}
}
impl CheckWrite for ConfigurationChangedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ConfigurationChanged", "node")?;
}
Ok(())
}
}
impl CheckWrite for ConfigurationDroppedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ConfigurationDropped", "node")?;
}
Ok(())
}
}
impl CheckWrite for ConfigurationImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.transition.check_variant(cx, "ConfigurationImpact", "transition")?;
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ConfigurationImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("ConfigurationImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for ResourceCatalogImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.resource, "ResourceCatalogImpact", "resource")?;
}
{
let Some(v) = self.action else { fail!("ResourceCatalogImpact", "action", Fault::Absent); }; if v.variant_name().is_none() { fail!("ResourceCatalogImpact", "action", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ResourceCatalogImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("ResourceCatalogImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for ResourceBindingImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ResourceBindingImpact", "node")?;
}
{
cx.string(&self.resource, "ResourceBindingImpact", "resource")?;
}
{
self.requested.check_variant(cx, "ResourceBindingImpact", "requested")?;
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ResourceBindingImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("ResourceBindingImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for DomainLifecycleImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainLifecycleImpact", "domain")?;
}
{
let Some(v) = self.action else { fail!("DomainLifecycleImpact", "action", Fault::Absent); }; if v.variant_name().is_none() { fail!("DomainLifecycleImpact", "action", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("DomainLifecycleImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("DomainLifecycleImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for OwnershipMoveImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "OwnershipMoveImpact", "node")?;
}
{
cx.string(&self.source, "OwnershipMoveImpact", "source")?;
}
{
cx.string(&self.destination, "OwnershipMoveImpact", "destination")?;
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("OwnershipMoveImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("OwnershipMoveImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for ActivationImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ActivationImpact", "node")?;
}
{
let Some(v) = self.action else { fail!("ActivationImpact", "action", Fault::Absent); }; if v.variant_name().is_none() { fail!("ActivationImpact", "action", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ActivationImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("ActivationImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for RebuildImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "RebuildImpact", "node")?;
}
{
let Some(v) = self.reason else { fail!("RebuildImpact", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("RebuildImpact", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("RebuildImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("RebuildImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for StateResetImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "StateResetImpact", "node")?;
}
{
let Some(v) = self.state else { fail!("StateResetImpact", "state", Fault::Absent); }; if v.variant_name().is_none() { fail!("StateResetImpact", "state", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("StateResetImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("StateResetImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for ForceFlushImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ForceFlushImpact", "node")?;
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ForceFlushImpact", "operations", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("ForceFlushImpact", "operations", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u64>())?;
}
Ok(())
}
}
impl CheckWrite for ImpactEffectsT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.changed_configuration;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "changed_configuration", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "changed_configuration")?; }
}
{
cx.nested(&*self.topology, "ImpactEffects", "topology")?;
}
{
let v = &self.ownership_moves;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "ownership_moves", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "ownership_moves")?; }
}
{
let v = &self.lifecycle;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "lifecycle", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "lifecycle")?; }
}
{
let v = &self.activations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "activations", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "activations")?; }
}
{
let v = &self.rebuilds;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "rebuilds", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "rebuilds")?; }
}
{
let v = &self.state_resets;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "state_resets", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "state_resets")?; }
}
{
let v = &self.force_flushes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "force_flushes", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "force_flushes")?; }
}
{
let v = &self.resource_catalog;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "resource_catalog", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "resource_catalog")?; }
}
{
let v = &self.resource_bindings;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ImpactEffects", "resource_bindings", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ImpactEffects", "resource_bindings")?; }
}
Ok(())
}
}
impl CheckWrite for PlannedStepImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.completeness.check_variant(cx, "PlannedStepImpact", "completeness")?;
}
{
self.pause.check_variant(cx, "PlannedStepImpact", "pause")?;
}
{
cx.nested(&*self.effects, "PlannedStepImpact", "effects")?;
}
Ok(())
}
}
impl CheckWrite for QuiescenceRequestedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for QuiescenceConfirmedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for QuiescenceFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.diagnostic, "QuiescenceFailed", "diagnostic")?;
}
Ok(())
}
}
impl CheckWrite for QuiescenceUncertainT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.diagnostic, "QuiescenceUncertain", "diagnostic")?;
}
Ok(())
}
}
impl CheckWrite for QuiescenceReleasedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for QuiescenceOutcomeEntryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.outcome.check_variant(cx, "QuiescenceOutcomeEntry", "outcome")?;
}
Ok(())
}
}
impl CheckWrite for ActualQuiescenceT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.requirement.check_variant(cx, "ActualQuiescence", "requirement")?;
}
{
let v = &self.outcomes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ActualQuiescence", "outcomes", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ActualQuiescence", "outcomes")?; }
}
Ok(())
}
}
impl CheckWrite for StepUnattemptedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for StepApplyingT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for StepAppliedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for StepFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.diagnostic, "StepFailed", "diagnostic")?;
}
Ok(())
}
}
impl CheckWrite for ActualStepImpactT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.outcome.check_variant(cx, "ActualStepImpact", "outcome")?;
}
{
let v = &self.quiescence;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ActualStepImpact", "quiescence", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ActualStepImpact", "quiescence")?; }
}
{
cx.nested(&*self.effects, "ActualStepImpact", "effects")?;
}
Ok(())
}
}
impl CheckWrite for ExecutionStepReportT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.operations.check_write(cx)?;
}
{
cx.nested(&*self.planned, "ExecutionStepReport", "planned")?;
}
{
cx.nested(&*self.actual, "ExecutionStepReport", "actual")?;
}
Ok(())
}
}
impl CheckWrite for OperationReportT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.number;
if v == 0 { fail!("OperationReport", "number", Fault::Zero); }
}
{
self.operation.check_variant(cx, "OperationReport", "operation")?;
}
{
self.execution_step.check_write(cx)?;
}
{
self.completeness.check_variant(cx, "OperationReport", "completeness")?;
}
{
let v = &self.reasons;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("OperationReport", "reasons", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "OperationReport", "reasons")?; }
}
{
cx.nested(&*self.contribution, "OperationReport", "contribution")?;
}
Ok(())
}
}
impl CheckWrite for TransactionImpactReportT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "TransactionImpactReport", "domain")?;
}
{
cx.nested(&*self.planning_basis, "TransactionImpactReport", "planning_basis")?;
}
{
self.completeness.check_variant(cx, "TransactionImpactReport", "completeness")?;
}
{
let v = &self.operations;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("TransactionImpactReport", "operations", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "TransactionImpactReport", "operations")?; }
}
{
let v = &self.execution_steps;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("TransactionImpactReport", "execution_steps", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "TransactionImpactReport", "execution_steps")?; }
}
Ok(())
}
}
impl CheckWrite for ResourceDirectoryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ResourceFileT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.checksum, "ResourceFile", "checksum")?;
}
Ok(())
}
}
impl CheckWrite for ResourceEntryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.path, "ResourceEntry", "path")?;
}
{
self.content.check_variant(cx, "ResourceEntry", "content")?;
}
Ok(())
}
}
impl CheckWrite for ResourceEntriesListedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.entries;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ResourceEntriesListed", "entries", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ResourceEntriesListed", "entries")?; }
}
Ok(())
}
}
impl CheckWrite for ResourceEntriesUnavailableT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.reason, "ResourceEntriesUnavailable", "reason")?;
}
Ok(())
}
}
impl CheckWrite for ResourceVersionDescriptionT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.version;
if v == 0 { fail!("ResourceVersionDescription", "version", Fault::Zero); }
}
{
cx.string(&self.root_checksum, "ResourceVersionDescription", "root_checksum")?;
}
{
cx.string(&self.manifest_checksum, "ResourceVersionDescription", "manifest_checksum")?;
}
{
cx.string(&self.created_by_node, "ResourceVersionDescription", "created_by_node")?;
}
{
self.entries.check_variant(cx, "ResourceVersionDescription", "entries")?;
}
Ok(())
}
}
impl CheckWrite for ResourceUsageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ResourceUsage", "node")?;
}
{
let v = self.version;
if v == 0 { fail!("ResourceUsage", "version", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for ResourceDescriptionT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.resource, "ResourceDescription", "resource")?;
}
{
if let Some(v) = self.latest_version {
if v == 0 { fail!("ResourceDescription", "latest_version", Fault::Zero); }
}
}
{
let v = &self.versions;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ResourceDescription", "versions", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ResourceDescription", "versions")?; }
}
{
let v = &self.usages;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ResourceDescription", "usages", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ResourceDescription", "usages")?; }
}
Ok(())
}
}
impl CheckWrite for ScalarFieldTypeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.scalar else { fail!("ScalarFieldType", "scalar", Fault::Absent); }; if v.variant_name().is_none() { fail!("ScalarFieldType", "scalar", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for FixedListFieldTypeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.element, "FixedListFieldType", "element")?;
}
{
let v = self.length;
if v == 0 { fail!("FixedListFieldType", "length", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for ListFieldTypeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.element, "ListFieldType", "element")?;
}
Ok(())
}
}
impl CheckWrite for FieldTypeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.shape.check_variant(cx, "FieldType", "shape")?;
}
Ok(())
}
}
impl CheckWrite for RowFieldT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.name, "RowField", "name")?;
}
{
cx.nested(&*self.field_type, "RowField", "field_type")?;
}
Ok(())
}
}
impl CheckWrite for RowBranchT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.branch, "RowBranch", "branch")?;
}
{
let v = &self.fields;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("RowBranch", "fields", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("RowBranch", "fields", Fault::Empty); }
for e in v.iter() { cx.nested(e, "RowBranch", "fields")?; }
}
Ok(())
}
}
impl CheckWrite for RowSchemaT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.fields;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("RowSchema", "fields", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "RowSchema", "fields")?; }
}
{
if let Some(v) = &self.branch { cx.nested(&**v, "RowSchema", "branch")?; }
}
Ok(())
}
}
impl CheckWrite for NullCellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for RedactedCellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for U8CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for I8CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for U16CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for I16CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for U32CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for I32CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for U64CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for I64CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for F32CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.value else { fail!("F32Cell", "value", Fault::Absent); };
}
Ok(())
}
}
impl CheckWrite for F64CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.value else { fail!("F64Cell", "value", Fault::Absent); };
}
Ok(())
}
}
impl CheckWrite for BoolCellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for StringCellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.value, "StringCell", "value")?;
}
Ok(())
}
}
impl CheckWrite for BytesCellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.value;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("BytesCell", "value", Fault::TooManyEntries { len: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for DatetimeCellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ListCellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.elements;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ListCell", "elements", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ListCell", "elements")?; }
}
Ok(())
}
}
impl CheckWrite for CellT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.value.check_variant(cx, "Cell", "value")?;
}
Ok(())
}
}
impl CheckWrite for RowT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.cells;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("Row", "cells", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "Row", "cells")?; }
}
Ok(())
}
}
impl CheckWrite for BranchKeyT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.cells;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("BranchKey", "cells", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "BranchKey", "cells")?; }
}
Ok(())
}
}
impl CheckWrite for RowBatchT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = &self.branch_key { cx.nested(&**v, "RowBatch", "branch_key")?; }
}
{
let v = &self.rows;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("RowBatch", "rows", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("RowBatch", "rows", Fault::Empty); }
for e in v.iter() { cx.nested(e, "RowBatch", "rows")?; }
}
Ok(())
}
}
impl CheckWrite for StoppedDomainClockT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for UninstalledDomainClockT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for UnpacedDomainClockT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for PacedDomainClockT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.period_nanos;
if v == 0 { fail!("PacedDomainClock", "period_nanos", Fault::Zero); }
}
{
let Some(v) = self.time_rate else { fail!("PacedDomainClock", "time_rate", Fault::Absent); };
if !(v.is_finite() && v > 0.0) { fail!("PacedDomainClock", "time_rate", Fault::NotPositiveFinite); }
}
Ok(())
}
}
impl CheckWrite for DomainClockObservationT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.state.check_variant(cx, "DomainClockObservation", "state")?;
}
Ok(())
}
}
impl CheckWrite for SequentialProducerWindowT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ParallelProducerWindowT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.max;
if v == 0 { fail!("ParallelProducerWindow", "max", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for BackupCutT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.kind else { fail!("BackupCut", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("BackupCut", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for BackupDomainSummaryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "BackupDomainSummary", "domain")?;
}
{
cx.nested(&*self.cut, "BackupDomainSummary", "cut")?;
}
Ok(())
}
}
impl CheckWrite for BackupArchiveSummaryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.total_bytes;
if v == 0 { fail!("BackupArchiveSummary", "total_bytes", Fault::Zero); }
}
{
cx.nested(&*self.digest, "BackupArchiveSummary", "digest")?;
}
{
let Some(v) = self.resources else { fail!("BackupArchiveSummary", "resources", Fault::Absent); }; if v.variant_name().is_none() { fail!("BackupArchiveSummary", "resources", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.domains;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("BackupArchiveSummary", "domains", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "BackupArchiveSummary", "domains")?; }
}
Ok(())
}
}
impl CheckWrite for RestoreStepReportT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.kind else { fail!("RestoreStepReport", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreStepReport", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
if let Some(v) = &self.domain { cx.string(v, "RestoreStepReport", "domain")?; }
}
{
let Some(v) = self.outcome else { fail!("RestoreStepReport", "outcome", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreStepReport", "outcome", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for RestoredUsersT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for RestoredDomainT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.source, "RestoredDomain", "source")?;
}
{
cx.string(&self.domain, "RestoredDomain", "domain")?;
}
{
if let Some(v) = &self.planned_models { cx.nested(&**v, "RestoredDomain", "planned_models")?; }
}
Ok(())
}
}
impl CheckWrite for RestoreReportT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.mode else { fail!("RestoreReport", "mode", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreReport", "mode", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.total_bytes;
if v == 0 { fail!("RestoreReport", "total_bytes", Fault::Zero); }
}
{
cx.nested(&*self.digest, "RestoreReport", "digest")?;
}
{
if let Some(v) = &self.users { cx.nested(&**v, "RestoreReport", "users")?; }
}
{
let v = &self.domains;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("RestoreReport", "domains", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "RestoreReport", "domains")?; }
}
{
let v = &self.steps;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("RestoreReport", "steps", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "RestoreReport", "steps")?; }
}
Ok(())
}
}
impl CheckWrite for CommandRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.query, "CommandRequest", "query")?;
}
{
if let Some(v) = &self.domain { cx.string(v, "CommandRequest", "domain")?; }
}
{
cx.string(&self.execution_reference, "CommandRequest", "execution_reference")?;
}
{
if let Some(v) = &self.expected_preview { cx.nested(&**v, "CommandRequest", "expected_preview")?; }
}
Ok(())
}
}
impl CheckWrite for SuggestRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.input, "SuggestRequest", "input")?;
}
{
if let Some(v) = &self.domain { cx.string(v, "SuggestRequest", "domain")?; }
}
{
let v = self.page_size;
if (v as u64) < 1 || (v as u64) > 100 { fail!("SuggestRequest", "page_size", Fault::OutOfRange { value: v as u64, min: 1, max: 100 }); }
}
{
if let Some(v) = &self.continuation { cx.string(v, "SuggestRequest", "continuation")?; }
}
Ok(())
}
}
impl CheckWrite for ChoiceLookupRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.target else { fail!("ChoiceLookupRequest", "target", Fault::Absent); }; if v.variant_name().is_none() { fail!("ChoiceLookupRequest", "target", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.dependencies;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ChoiceLookupRequest", "dependencies", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ChoiceLookupRequest", "dependencies")?; }
}
{
cx.string(&self.search, "ChoiceLookupRequest", "search")?;
}
{
let v = self.page_size;
if (v as u64) < 1 || (v as u64) > 100 { fail!("ChoiceLookupRequest", "page_size", Fault::OutOfRange { value: v as u64, min: 1, max: 100 }); }
}
{
if let Some(v) = &self.page_cursor { cx.string(v, "ChoiceLookupRequest", "page_cursor")?; }
}
Ok(())
}
}
impl CheckWrite for ListDomainsRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for SelectDomainRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "SelectDomainRequest", "domain")?;
}
Ok(())
}
}
impl CheckWrite for AttachTransactionRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.transaction_id, "AttachTransactionRequest", "transaction_id")?;
}
Ok(())
}
}
impl CheckWrite for InspectTransactionRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.target.check_variant(cx, "InspectTransactionRequest", "target")?;
}
{
if let Some(v) = self.operation {
if v == 0 { fail!("InspectTransactionRequest", "operation", Fault::Zero); }
}
}
Ok(())
}
}
impl CheckWrite for SubscribeRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "SubscribeRequest", "domain")?;
}
{
cx.string(&self.statement, "SubscribeRequest", "statement")?;
}
{
let Some(v) = self.subscription_type else { fail!("SubscribeRequest", "subscription_type", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscribeRequest", "subscription_type", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for UnsubscribeRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.subscription, "UnsubscribeRequest", "subscription")?;
}
Ok(())
}
}
impl CheckWrite for CancelRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.target_request_id;
if v == 0 { fail!("CancelRequest", "target_request_id", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for AttachDomainClockRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "AttachDomainClockRequest", "domain")?;
}
Ok(())
}
}
impl CheckWrite for DetachDomainClockRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DetachDomainClockRequest", "domain")?;
}
Ok(())
}
}
impl CheckWrite for OpenIngestorRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "OpenIngestorRequest", "domain")?;
}
{
cx.string(&self.ingestor, "OpenIngestorRequest", "ingestor")?;
}
{
let v = &self.expected_fields;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("OpenIngestorRequest", "expected_fields", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("OpenIngestorRequest", "expected_fields", Fault::Empty); }
for e in v.iter() { cx.nested(e, "OpenIngestorRequest", "expected_fields")?; }
}
{
let v = self.max_outstanding_batches;
if (v as u64) > 1024 { fail!("OpenIngestorRequest", "max_outstanding_batches", Fault::OutOfRange { value: v as u64, min: 0, max: 1024 }); }
if v == 0 { fail!("OpenIngestorRequest", "max_outstanding_batches", Fault::Zero); }
}
{
let v = self.max_outstanding_bytes;
if (v as u64) > 33554432 { fail!("OpenIngestorRequest", "max_outstanding_bytes", Fault::OutOfRange { value: v as u64, min: 0, max: 33554432 }); }
if v == 0 { fail!("OpenIngestorRequest", "max_outstanding_bytes", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for SubmitBatchRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.producer;
if v == 0 { fail!("SubmitBatchRequest", "producer", Fault::Zero); }
}
{
let v = &self.batch;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("SubmitBatchRequest", "batch", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("SubmitBatchRequest", "batch", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for CloseIngestorRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.producer;
if v == 0 { fail!("CloseIngestorRequest", "producer", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for OpenEmitterRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "OpenEmitterRequest", "domain")?;
}
{
cx.string(&self.emitter, "OpenEmitterRequest", "emitter")?;
}
{
let v = &self.expected_fields;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("OpenEmitterRequest", "expected_fields", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("OpenEmitterRequest", "expected_fields", Fault::Empty); }
for e in v.iter() { cx.nested(e, "OpenEmitterRequest", "expected_fields")?; }
}
{
let v = self.max_outstanding_batches;
if (v as u64) > 1024 { fail!("OpenEmitterRequest", "max_outstanding_batches", Fault::OutOfRange { value: v as u64, min: 0, max: 1024 }); }
if v == 0 { fail!("OpenEmitterRequest", "max_outstanding_batches", Fault::Zero); }
}
{
let v = self.max_outstanding_bytes;
if (v as u64) > 33554432 { fail!("OpenEmitterRequest", "max_outstanding_bytes", Fault::OutOfRange { value: v as u64, min: 0, max: 33554432 }); }
if v == 0 { fail!("OpenEmitterRequest", "max_outstanding_bytes", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for ReadEmitterBatchRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.consumer;
if v == 0 { fail!("ReadEmitterBatchRequest", "consumer", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for SettleEmitterBatchRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.reference;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("SettleEmitterBatchRequest", "reference", Fault::TooManyEntries { len: v.len() }); }
if v.len() != 16 { fail!("SettleEmitterBatchRequest", "reference", Fault::Length { expected: 16, found: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
{
if let Some(v) = self.decision { if v.variant_name().is_none() { fail!("SettleEmitterBatchRequest", "decision", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
{
cx.string(&self.reason, "SettleEmitterBatchRequest", "reason")?;
}
Ok(())
}
}
impl CheckWrite for CloseEmitterRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for CommandCompletedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for TransactionDetachedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.transaction_id, "TransactionDetached", "transaction_id")?;
}
Ok(())
}
}
impl CheckWrite for TransactionTakenOverT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.transaction_id, "TransactionTakenOver", "transaction_id")?;
}
Ok(())
}
}
impl CheckWrite for OutcomeUnknownT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.cause else { fail!("OutcomeUnknown", "cause", Fault::Absent); }; if v.variant_name().is_none() { fail!("OutcomeUnknown", "cause", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for ExecutionReferenceConflictT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.conflict else { fail!("ExecutionReferenceConflict", "conflict", Fault::Absent); }; if v.variant_name().is_none() { fail!("ExecutionReferenceConflict", "conflict", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for ExecutionReferenceExpiredT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for PreviewStaleT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.expected, "PreviewStale", "expected")?;
}
{
cx.nested(&*self.current, "PreviewStale", "current")?;
}
Ok(())
}
}
impl CheckWrite for StatementOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "StatementOutcome", "disposition")?;
}
{
cx.string(&self.message, "StatementOutcome", "message")?;
}
{
let v = &self.diagnostics;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("StatementOutcome", "diagnostics", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "StatementOutcome", "diagnostics")?; }
}
Ok(())
}
}
impl CheckWrite for CommandOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.execution_reference, "CommandOutcome", "execution_reference")?;
}
{
let Some(v) = self.origin else { fail!("CommandOutcome", "origin", Fault::Absent); }; if v.variant_name().is_none() { fail!("CommandOutcome", "origin", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
self.disposition.check_variant(cx, "CommandOutcome", "disposition")?;
}
{
cx.string(&self.message, "CommandOutcome", "message")?;
}
{
let v = &self.diagnostics;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("CommandOutcome", "diagnostics", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "CommandOutcome", "diagnostics")?; }
}
{
let v = &self.statements;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("CommandOutcome", "statements", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "CommandOutcome", "statements")?; }
}
{
if let Some(v) = &self.transaction { cx.nested(&**v, "CommandOutcome", "transaction")?; }
}
{
if let Some(v) = &self.transaction_admission { cx.nested(&**v, "CommandOutcome", "transaction_admission")?; }
}
{
if let Some(v) = &self.inspection { cx.nested(&**v, "CommandOutcome", "inspection")?; }
}
{
if let Some(v) = &self.wasm_state { cx.string(v, "CommandOutcome", "wasm_state")?; }
}
{
if let Some(v) = &self.resource { cx.nested(&**v, "CommandOutcome", "resource")?; }
}
{
if let Some(v) = &self.backup { cx.nested(&**v, "CommandOutcome", "backup")?; }
}
{
if let Some(v) = &self.restore { cx.nested(&**v, "CommandOutcome", "restore")?; }
}
Ok(())
}
}
impl CheckWrite for TransactionAttachedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.transaction, "TransactionAttached", "transaction")?;
}
Ok(())
}
}
impl CheckWrite for TransactionAlreadyFinishedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.transaction, "TransactionAlreadyFinished", "transaction")?;
}
Ok(())
}
}
impl CheckWrite for AttachOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "AttachOutcome", "disposition")?;
}
{
cx.string(&self.message, "AttachOutcome", "message")?;
}
{
let v = &self.diagnostics;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("AttachOutcome", "diagnostics", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "AttachOutcome", "diagnostics")?; }
}
Ok(())
}
}
impl CheckWrite for TextEditT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.replacement, "TextEdit", "replacement")?;
}
Ok(())
}
}
impl CheckWrite for SuggestionT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.value, "Suggestion", "value")?;
}
{
let Some(v) = self.kind else { fail!("Suggestion", "kind", Fault::Absent); }; if v.variant_name().is_none() { fail!("Suggestion", "kind", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.nested(&*self.edit, "Suggestion", "edit")?;
}
Ok(())
}
}
impl CheckWrite for SuggestOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.status else { fail!("SuggestOutcome", "status", Fault::Absent); }; if v.variant_name().is_none() { fail!("SuggestOutcome", "status", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.suggestions;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("SuggestOutcome", "suggestions", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "SuggestOutcome", "suggestions")?; }
}
{
if let Some(v) = &self.continuation { cx.string(v, "SuggestOutcome", "continuation")?; }
}
Ok(())
}
}
impl CheckWrite for ChoiceOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.status else { fail!("ChoiceOutcome", "status", Fault::Absent); }; if v.variant_name().is_none() { fail!("ChoiceOutcome", "status", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = &self.choices;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ChoiceOutcome", "choices", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "ChoiceOutcome", "choices")?; }
}
{
if let Some(v) = &self.page_cursor { cx.string(v, "ChoiceOutcome", "page_cursor")?; }
}
Ok(())
}
}
impl CheckWrite for UnpacedDomainT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for PacedDomainT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.period_nanos;
if v == 0 { fail!("PacedDomain", "period_nanos", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for DomainInfoT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainInfo", "domain")?;
}
{
let Some(v) = self.status else { fail!("DomainInfo", "status", Fault::Absent); }; if v.variant_name().is_none() { fail!("DomainInfo", "status", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
self.pace.check_variant(cx, "DomainInfo", "pace")?;
}
Ok(())
}
}
impl CheckWrite for DomainListT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.domains;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("DomainList", "domains", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "DomainList", "domains")?; }
}
Ok(())
}
}
impl CheckWrite for DomainSelectedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainSelected", "domain")?;
}
Ok(())
}
}
impl CheckWrite for DomainNotFoundT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainNotFound", "domain")?;
}
Ok(())
}
}
impl CheckWrite for DomainSelectionOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.selection.check_variant(cx, "DomainSelectionOutcome", "selection")?;
}
Ok(())
}
}
impl CheckWrite for TransactionInspectedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.transaction, "TransactionInspected", "transaction")?;
}
{
cx.nested(&*self.report, "TransactionInspected", "report")?;
}
Ok(())
}
}
impl CheckWrite for InspectionRejectedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.rejection else { fail!("InspectionRejected", "rejection", Fault::Absent); }; if v.variant_name().is_none() { fail!("InspectionRejected", "rejection", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.message, "InspectionRejected", "message")?;
}
Ok(())
}
}
impl CheckWrite for InspectionOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "InspectionOutcome", "disposition")?;
}
Ok(())
}
}
impl CheckWrite for SubscriptionHandleT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.name, "SubscriptionHandle", "name")?;
}
{
let v = self.generation;
if v == 0 { fail!("SubscriptionHandle", "generation", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for SubscriptionOpenedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.subscription, "SubscriptionOpened", "subscription")?;
}
{
cx.string(&self.domain, "SubscriptionOpened", "domain")?;
}
{
cx.string(&self.relay, "SubscriptionOpened", "relay")?;
}
{
let Some(v) = self.subscription_type else { fail!("SubscriptionOpened", "subscription_type", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscriptionOpened", "subscription_type", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.nested(&*self.schema, "SubscriptionOpened", "schema")?;
}
Ok(())
}
}
impl CheckWrite for SubscribeOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "SubscribeOutcome", "disposition")?;
}
{
cx.string(&self.message, "SubscribeOutcome", "message")?;
}
{
let v = &self.diagnostics;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("SubscribeOutcome", "diagnostics", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "SubscribeOutcome", "diagnostics")?; }
}
Ok(())
}
}
impl CheckWrite for SubscriptionDeletedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.subscription, "SubscriptionDeleted", "subscription")?;
}
Ok(())
}
}
impl CheckWrite for UnsubscribeOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "UnsubscribeOutcome", "disposition")?;
}
{
cx.string(&self.message, "UnsubscribeOutcome", "message")?;
}
{
let v = &self.diagnostics;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("UnsubscribeOutcome", "diagnostics", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "UnsubscribeOutcome", "diagnostics")?; }
}
Ok(())
}
}
impl CheckWrite for CancelOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.target_request_id;
if v == 0 { fail!("CancelOutcome", "target_request_id", Fault::Zero); }
}
{
let Some(v) = self.state else { fail!("CancelOutcome", "state", Fault::Absent); }; if v.variant_name().is_none() { fail!("CancelOutcome", "state", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for RequestCancelledT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.stage else { fail!("RequestCancelled", "stage", Fault::Absent); }; if v.variant_name().is_none() { fail!("RequestCancelled", "stage", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for RequestRejectedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.rejection else { fail!("RequestRejected", "rejection", Fault::Absent); }; if v.variant_name().is_none() { fail!("RequestRejected", "rejection", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
if let Some(v) = &self.field { cx.string(v, "RequestRejected", "field")?; }
}
{
cx.string(&self.message, "RequestRejected", "message")?;
}
Ok(())
}
}
impl CheckWrite for TransferPartT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.total_bytes;
if v == 0 { fail!("TransferPart", "total_bytes", Fault::Zero); }
}
{
let v = &self.chunk;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("TransferPart", "chunk", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("TransferPart", "chunk", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for DomainClockAttachedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainClockAttached", "domain")?;
}
{
cx.nested(&*self.clock, "DomainClockAttached", "clock")?;
}
Ok(())
}
}
impl CheckWrite for DomainClockAlreadyAttachedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainClockAlreadyAttached", "domain")?;
}
Ok(())
}
}
impl CheckWrite for DomainClockAttachOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "DomainClockAttachOutcome", "disposition")?;
}
{
cx.string(&self.message, "DomainClockAttachOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for DomainClockDetachedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainClockDetached", "domain")?;
}
Ok(())
}
}
impl CheckWrite for DomainClockNotAttachedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainClockNotAttached", "domain")?;
}
Ok(())
}
}
impl CheckWrite for DomainClockDetachOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "DomainClockDetachOutcome", "disposition")?;
}
{
cx.string(&self.message, "DomainClockDetachOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for ProducerOpenedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "ProducerOpened", "domain")?;
}
{
cx.string(&self.ingestor, "ProducerOpened", "ingestor")?;
}
{
let v = &self.fields;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ProducerOpened", "fields", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("ProducerOpened", "fields", Fault::Empty); }
for e in v.iter() { cx.nested(e, "ProducerOpened", "fields")?; }
}
{
cx.nested(&*self.contract, "ProducerOpened", "contract")?;
}
{
let v = &self.attachment;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("ProducerOpened", "attachment", Fault::TooManyEntries { len: v.len() }); }
if v.len() != 16 { fail!("ProducerOpened", "attachment", Fault::Length { expected: 16, found: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
{
self.window.check_variant(cx, "ProducerOpened", "window")?;
}
{
let v = self.ack_timeout_nanos;
if v == 0 { fail!("ProducerOpened", "ack_timeout_nanos", Fault::Zero); }
}
{
let v = self.retry_backoff_nanos;
if v == 0 { fail!("ProducerOpened", "retry_backoff_nanos", Fault::Zero); }
}
{
let v = self.retry_max_backoff_nanos;
if v < self.retry_backoff_nanos { fail!("ProducerOpened", "retry_max_backoff_nanos", Fault::Order { other: "retry_backoff_nanos", must_be: "at least" }); }
}
{
let v = self.granted_batches;
if v == 0 { fail!("ProducerOpened", "granted_batches", Fault::Zero); }
}
{
let v = self.granted_bytes;
if v == 0 { fail!("ProducerOpened", "granted_bytes", Fault::Zero); }
}
{
let v = self.max_batch_bytes;
if v == 0 { fail!("ProducerOpened", "max_batch_bytes", Fault::Zero); }
if v > self.granted_bytes { fail!("ProducerOpened", "max_batch_bytes", Fault::Order { other: "granted_bytes", must_be: "at most" }); }
}
{
let v = self.max_batch_rows;
if v == 0 { fail!("ProducerOpened", "max_batch_rows", Fault::Zero); }
}
{
let Some(v) = self.admission else { fail!("ProducerOpened", "admission", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerOpened", "admission", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for ProducerRefusedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.refusal else { fail!("ProducerRefused", "refusal", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerRefused", "refusal", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for OpenIngestorOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "OpenIngestorOutcome", "disposition")?;
}
{
cx.string(&self.message, "OpenIngestorOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for SubmissionNotAdmittedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.refusal else { fail!("SubmissionNotAdmitted", "refusal", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubmissionNotAdmitted", "refusal", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for SubmissionCompletedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for SubmissionFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.failure else { fail!("SubmissionFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubmissionFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for SubmissionOutcomeUnknownT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.cause else { fail!("SubmissionOutcomeUnknown", "cause", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubmissionOutcomeUnknown", "cause", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for SubmissionOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "SubmissionOutcome", "disposition")?;
}
{
cx.string(&self.message, "SubmissionOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for ProducerClosedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ProducerNotOpenT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for CloseIngestorOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "CloseIngestorOutcome", "disposition")?;
}
{
cx.string(&self.message, "CloseIngestorOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for SequentialConsumerWindowT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ParallelConsumerWindowT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for EmitterOpenedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "EmitterOpened", "domain")?;
}
{
cx.string(&self.emitter, "EmitterOpened", "emitter")?;
}
{
let v = &self.fields;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("EmitterOpened", "fields", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "EmitterOpened", "fields")?; }
}
{
cx.nested(&*self.contract, "EmitterOpened", "contract")?;
}
{
self.window.check_variant(cx, "EmitterOpened", "window")?;
}
Ok(())
}
}
impl CheckWrite for EmitterRefusedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = self.refusal { if v.variant_name().is_none() { fail!("EmitterRefused", "refusal", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
Ok(())
}
}
impl CheckWrite for OpenEmitterOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "OpenEmitterOutcome", "disposition")?;
}
{
cx.string(&self.message, "OpenEmitterOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for EmitterBatchReceivedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.identity;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("EmitterBatchReceived", "identity", Fault::TooManyEntries { len: v.len() }); }
if v.len() != 16 { fail!("EmitterBatchReceived", "identity", Fault::Length { expected: 16, found: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
{
let v = &self.reference;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("EmitterBatchReceived", "reference", Fault::TooManyEntries { len: v.len() }); }
if v.len() != 16 { fail!("EmitterBatchReceived", "reference", Fault::Length { expected: 16, found: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
{
cx.string(&self.source_relay, "EmitterBatchReceived", "source_relay")?;
}
{
if let Some(v) = &self.branch_fingerprint {
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("EmitterBatchReceived", "branch_fingerprint", Fault::TooManyEntries { len: v.len() }); }
if v.len() != 32 { fail!("EmitterBatchReceived", "branch_fingerprint", Fault::Length { expected: 32, found: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
}
{
let v = &self.batch;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("EmitterBatchReceived", "batch", Fault::TooManyEntries { len: v.len() }); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for EmitterConsumerEndedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ReadEmitterBatchOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "ReadEmitterBatchOutcome", "disposition")?;
}
{
cx.string(&self.message, "ReadEmitterBatchOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for SettleEmitterBatchOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = self.disposition { if v.variant_name().is_none() { fail!("SettleEmitterBatchOutcome", "disposition", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
{
cx.string(&self.message, "SettleEmitterBatchOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for CloseEmitterOutcomeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = self.disposition { if v.variant_name().is_none() { fail!("CloseEmitterOutcome", "disposition", Fault::UndeclaredEnum { value: v.0 as u64 }); } }
}
{
cx.string(&self.message, "CloseEmitterOutcome", "message")?;
}
Ok(())
}
}
impl CheckWrite for ReplyT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.request_id;
if v == 0 { fail!("Reply", "request_id", Fault::Zero); }
}
{
self.body.check_variant(cx, "Reply", "body")?;
}
Ok(())
}
}
impl CheckWrite for ServerNoticeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.level else { fail!("ServerNotice", "level", Fault::Absent); }; if v.variant_name().is_none() { fail!("ServerNotice", "level", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.message, "ServerNotice", "message")?;
}
Ok(())
}
}
impl CheckWrite for LeaderIsServingNodeT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.node, "LeaderIsServingNode", "node")?;
}
Ok(())
}
}
impl CheckWrite for LeaderIsRemoteT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.leader, "LeaderIsRemote", "leader")?;
}
Ok(())
}
}
impl CheckWrite for LeaderUnknownT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for LeadershipObservedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.leadership.check_variant(cx, "LeadershipObserved", "leadership")?;
}
Ok(())
}
}
impl CheckWrite for DomainsObservedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.domains;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("DomainsObserved", "domains", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "DomainsObserved", "domains")?; }
}
Ok(())
}
}
impl CheckWrite for ModelEntityT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.node, "ModelEntity", "node")?;
}
Ok(())
}
}
impl CheckWrite for ResourceEntityT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.name, "ResourceEntity", "name")?;
}
{
if let Some(v) = self.latest_version {
if v == 0 { fail!("ResourceEntity", "latest_version", Fault::Zero); }
}
}
Ok(())
}
}
impl CheckWrite for DomainEntityEntryT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.entity.check_variant(cx, "DomainEntityEntry", "entity")?;
}
Ok(())
}
}
impl CheckWrite for DomainSnapshotObservedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainSnapshotObserved", "domain")?;
}
{
cx.string(&self.graph_json, "DomainSnapshotObserved", "graph_json")?;
}
{
let v = &self.entities;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("DomainSnapshotObserved", "entities", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "DomainSnapshotObserved", "entities")?; }
}
Ok(())
}
}
impl CheckWrite for ClusterObservedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for SubscriptionRowsT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.subscription, "SubscriptionRows", "subscription")?;
}
{
cx.nested(&*self.batch, "SubscriptionRows", "batch")?;
}
Ok(())
}
}
impl CheckWrite for SubscriptionDeliveryLostT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.subscription, "SubscriptionDeliveryLost", "subscription")?;
}
{
let v = self.dropped_rows;
if v == 0 { fail!("SubscriptionDeliveryLost", "dropped_rows", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for SubscriptionRowsSkippedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.subscription, "SubscriptionRowsSkipped", "subscription")?;
}
{
let Some(v) = self.cause else { fail!("SubscriptionRowsSkipped", "cause", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscriptionRowsSkipped", "cause", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
let v = self.skipped_rows;
if v == 0 { fail!("SubscriptionRowsSkipped", "skipped_rows", Fault::Zero); }
}
{
cx.string(&self.message, "SubscriptionRowsSkipped", "message")?;
}
Ok(())
}
}
impl CheckWrite for SubscriptionEndedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.nested(&*self.subscription, "SubscriptionEnded", "subscription")?;
}
{
let Some(v) = self.reason else { fail!("SubscriptionEnded", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("SubscriptionEnded", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.message, "SubscriptionEnded", "message")?;
}
Ok(())
}
}
impl CheckWrite for DomainClockObservedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainClockObserved", "domain")?;
}
{
cx.nested(&*self.clock, "DomainClockObserved", "clock")?;
}
Ok(())
}
}
impl CheckWrite for DomainClockTickedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainClockTicked", "domain")?;
}
{
let v = self.generation;
if v == 0 { fail!("DomainClockTicked", "generation", Fault::Zero); }
}
{
let v = self.tick_id;
if v == 0 { fail!("DomainClockTicked", "tick_id", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for DomainClockAttachmentEndedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.domain, "DomainClockAttachmentEnded", "domain")?;
}
{
let Some(v) = self.reason else { fail!("DomainClockAttachmentEnded", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("DomainClockAttachmentEnded", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for ProducerAdmissionChangedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.producer;
if v == 0 { fail!("ProducerAdmissionChanged", "producer", Fault::Zero); }
}
{
let Some(v) = self.admission else { fail!("ProducerAdmissionChanged", "admission", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerAdmissionChanged", "admission", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for ProducerEndedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.producer;
if v == 0 { fail!("ProducerEnded", "producer", Fault::Zero); }
}
{
let Some(v) = self.reason else { fail!("ProducerEnded", "reason", Fault::Absent); }; if v.variant_name().is_none() { fail!("ProducerEnded", "reason", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.message, "ProducerEnded", "message")?;
}
Ok(())
}
}
impl CheckWrite for ServerShuttingDownT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for ProtocolViolatedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.message, "ProtocolViolated", "message")?;
}
Ok(())
}
}
impl CheckWrite for SessionEndingT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.reason.check_variant(cx, "SessionEnding", "reason")?;
}
Ok(())
}
}
impl CheckWrite for UploadStartT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.request_id;
if v == 0 { fail!("UploadStart", "request_id", Fault::Zero); }
}
{
cx.string(&self.domain, "UploadStart", "domain")?;
}
{
cx.string(&self.resource, "UploadStart", "resource")?;
}
{
cx.string(&self.upload_identity, "UploadStart", "upload_identity")?;
}
{
let v = self.total_bytes;
if v == 0 { fail!("UploadStart", "total_bytes", Fault::Zero); }
}
Ok(())
}
}
impl CheckWrite for UploadChunkT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.bytes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("UploadChunk", "bytes", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("UploadChunk", "bytes", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for ResourceInstalledT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.upload_identity, "ResourceInstalled", "upload_identity")?;
}
{
let v = self.version;
if v == 0 { fail!("ResourceInstalled", "version", Fault::Zero); }
}
{
let Some(v) = self.origin else { fail!("ResourceInstalled", "origin", Fault::Absent); }; if v.variant_name().is_none() { fail!("ResourceInstalled", "origin", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
Ok(())
}
}
impl CheckWrite for UploadFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
if let Some(v) = &self.upload_identity { cx.string(v, "UploadFailed", "upload_identity")?; }
}
{
let Some(v) = self.failure else { fail!("UploadFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("UploadFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
if let Some(v) = self.assigned_version {
if v == 0 { fail!("UploadFailed", "assigned_version", Fault::Zero); }
}
}
Ok(())
}
}
impl CheckWrite for BackupDownloadRequestT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
cx.string(&self.execution_reference, "BackupDownloadRequest", "execution_reference")?;
}
Ok(())
}
}
impl CheckWrite for BackupArchiveStartT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.total_bytes;
if v == 0 { fail!("BackupArchiveStart", "total_bytes", Fault::Zero); }
}
{
cx.nested(&*self.digest, "BackupArchiveStart", "digest")?;
}
Ok(())
}
}
impl CheckWrite for BackupArchiveChunkT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.bytes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("BackupArchiveChunk", "bytes", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("BackupArchiveChunk", "bytes", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for BackupArchiveCompleteT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
Ok(())
}
}
impl CheckWrite for BackupDownloadFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.failure else { fail!("BackupDownloadFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("BackupDownloadFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.message, "BackupDownloadFailed", "message")?;
}
Ok(())
}
}
impl CheckWrite for RestoreStartT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.request_id;
if v == 0 { fail!("RestoreStart", "request_id", Fault::Zero); }
}
{
cx.string(&self.execution_reference, "RestoreStart", "execution_reference")?;
}
{
cx.string(&self.statement, "RestoreStart", "statement")?;
}
{
let v = self.total_bytes;
if v == 0 { fail!("RestoreStart", "total_bytes", Fault::Zero); }
}
{
cx.nested(&*self.digest, "RestoreStart", "digest")?;
}
Ok(())
}
}
impl CheckWrite for RestoreChunkT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = &self.bytes;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("RestoreChunk", "bytes", Fault::TooManyEntries { len: v.len() }); }
if v.len() == 0 { fail!("RestoreChunk", "bytes", Fault::Empty); }
cx.payload(v.len() * core::mem::size_of::<u8>())?;
}
Ok(())
}
}
impl CheckWrite for RestoreUploadFailedT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let Some(v) = self.failure else { fail!("RestoreUploadFailed", "failure", Fault::Absent); }; if v.variant_name().is_none() { fail!("RestoreUploadFailed", "failure", Fault::UndeclaredEnum { value: v.0 as u64 }); }
}
{
cx.string(&self.message, "RestoreUploadFailed", "message")?;
}
Ok(())
}
}
impl CheckWrite for ClientMessageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
let v = self.request_id;
if v == 0 { fail!("ClientMessage", "request_id", Fault::Zero); }
}
{
self.request.check_variant(cx, "ClientMessage", "request")?;
}
Ok(())
}
}
impl CheckWrite for ServerMessageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.body.check_variant(cx, "ServerMessage", "body")?;
}
Ok(())
}
}
impl CheckWrite for UploadMessageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.part.check_variant(cx, "UploadMessage", "part")?;
}
Ok(())
}
}
impl CheckWrite for BackupDownloadMessageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.part.check_variant(cx, "BackupDownloadMessage", "part")?;
}
Ok(())
}
}
impl CheckWrite for UploadReplyT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "UploadReply", "disposition")?;
}
{
cx.string(&self.message, "UploadReply", "message")?;
}
{
let v = &self.diagnostics;
if v.len() > crate::limits::MAX_VECTOR_ENTRIES { fail!("UploadReply", "diagnostics", Fault::TooManyEntries { len: v.len() }); }
for e in v.iter() { cx.nested(e, "UploadReply", "diagnostics")?; }
}
Ok(())
}
}
impl CheckWrite for RestoreMessageT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.part.check_variant(cx, "RestoreMessage", "part")?;
}
Ok(())
}
}
impl CheckWrite for RestoreReplyT {
fn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {
let _ = &cx;
{
self.disposition.check_variant(cx, "RestoreReply", "disposition")?;
}
Ok(())
}
}
