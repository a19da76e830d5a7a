//! Resource uploads: an UploadStart, chunks adding up to its size, a half-close, then one
//! reply. A resource is declared unless its name starts with `undeclared`; each installed
//! archive gets the resource's next version, recorded under its upload identity, so a repeat of
//! the same identity and bytes answers the recorded version and a repeat with other bytes is
//! InstallationFailed.

use super::calls::{CallId, Incoming, Installed};
use super::*;
use bytes::Bytes;
use nervix_protocol::frame::{UploadFrame, UploadReplyRoot};

/// The most bytes one upload may declare.
const UPLOAD_QUOTA: u64 = 64 << 20;

impl SimCluster {
    fn upload_reply(&mut self, id: CallId, request_id: Option<u64>, d: UploadDispositionT) {
        let name = d.upload_disposition_type().variant_name().unwrap_or("?");
        self.log(format!("call {} -> {name}", id.0));
        let frame = self
            .encoder
            .encode::<UploadReplyRoot>(&UploadReplyT {
                request_id,
                disposition: d,
                message: String::new(),
                diagnostics: vec![],
            })
            .expect("the cluster writes valid replies");
        if let Some(s) = self.calls.streams.get_mut(&id) {
            s.state = Incoming::Done;
        }
        self.call_send(id, CallOutput::Frame(frame));
        self.call_close(id);
    }

    fn upload_failed(&mut self, id: CallId, request_id: Option<u64>, failure: UploadFailure) {
        let identity = match &self.calls.streams.get(&id).map(|s| &s.state) {
            Some(Incoming::Upload { start, .. }) => Some(start.upload_identity.clone()),
            _ => None,
        };
        self.upload_reply(
            id,
            request_id,
            UploadDispositionT::UploadFailed(Box::new(UploadFailedT {
                upload_identity: identity,
                failure: Some(failure),
                assigned_version: None,
            })),
        );
    }

    pub(super) fn upload_frame(&mut self, id: CallId, frame: Bytes) {
        let part = match UploadFrame::check(frame) {
            Ok(f) => f.unpack().part,
            Err(_) => return self.upload_failed(id, None, UploadFailure::InvalidStream),
        };
        let state = self
            .calls
            .streams
            .get_mut(&id)
            .map(|s| std::mem::take(&mut s.state));
        match (state, part) {
            (Some(Incoming::Nothing), UploadPartT::UploadStart(start)) => {
                let rid = Some(start.request_id);
                if let Some(r) = self.call_redirect(id) {
                    return self.upload_reply(
                        id,
                        rid,
                        UploadDispositionT::LeaderRedirect(Box::new(r)),
                    );
                }
                if let Some(s) = self.calls.streams.get_mut(&id) {
                    s.state = Incoming::Upload {
                        start: *start.clone(),
                        bytes: Vec::new(),
                    };
                }
                if !self.config.domains.contains(&start.domain)
                    || start.resource.starts_with("undeclared")
                {
                    return self.upload_failed(id, rid, UploadFailure::ResourceNotDeclared);
                }
                if start.total_bytes > UPLOAD_QUOTA {
                    self.upload_failed(id, rid, UploadFailure::QuotaExceeded);
                }
            }
            (Some(Incoming::Upload { start, mut bytes }), UploadPartT::UploadChunk(c)) => {
                bytes.extend_from_slice(&c.bytes);
                let over = bytes.len() as u64 > start.total_bytes;
                let rid = Some(start.request_id);
                let cut = !over && self.chance(self.calls.faults.cut);
                if let Some(s) = self.calls.streams.get_mut(&id) {
                    s.state = Incoming::Upload { start, bytes };
                }
                if over {
                    self.upload_failed(id, rid, UploadFailure::SizeMismatch);
                } else if cut {
                    self.log(format!("call {} cut mid-stream", id.0));
                    self.call_close(id);
                }
            }
            (Some(Incoming::Done), _) | (None, _) => {}
            (Some(_), _) => self.upload_failed(id, None, UploadFailure::InvalidStream),
        }
    }

    pub(super) fn upload_end(&mut self, id: CallId) {
        let state = self
            .calls
            .streams
            .get_mut(&id)
            .map(|s| std::mem::take(&mut s.state));
        let Some(Incoming::Upload { start, bytes }) = state else {
            return self.upload_failed(id, None, UploadFailure::InvalidStream);
        };
        let rid = Some(start.request_id);
        if bytes.len() as u64 != start.total_bytes {
            return self.upload_failed(id, rid, UploadFailure::SizeMismatch);
        }
        let digest = *blake3::hash(&bytes).as_bytes();
        self.calls
            .received
            .push((start.upload_identity.clone(), bytes));
        let identity = start.upload_identity.clone();
        let (version, origin) = match self.calls.uploads.get(&identity) {
            Some(i) if i.digest == digest => (i.version, OutcomeOrigin::Recovered),
            Some(i) => {
                let assigned = i.version;
                self.log(format!(
                    "call {} identity {identity} bound to other bytes",
                    id.0
                ));
                return self.upload_reply(
                    id,
                    rid,
                    UploadDispositionT::UploadFailed(Box::new(UploadFailedT {
                        upload_identity: Some(identity),
                        failure: Some(UploadFailure::InstallationFailed),
                        assigned_version: Some(assigned),
                    })),
                );
            }
            None => {
                let versions = self
                    .calls
                    .resources
                    .entry((start.domain.clone(), start.resource.clone()))
                    .or_default();
                versions.push(digest);
                let version = versions.len() as u64;
                self.calls
                    .uploads
                    .insert(identity.clone(), Installed { digest, version });
                (version, OutcomeOrigin::Executed)
            }
        };
        if self.chance(self.calls.faults.lost_reply) {
            self.log(format!("call {} installed v{version}, reply lost", id.0));
            return self.call_close(id);
        }
        self.upload_reply(
            id,
            rid,
            UploadDispositionT::ResourceInstalled(Box::new(ResourceInstalledT {
                upload_identity: identity,
                version,
                origin: Some(origin),
            })),
        );
    }
}
