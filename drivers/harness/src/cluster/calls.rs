//! The separate calls' streams: a resource upload, the download of a backup's archive and a
//! restore, each on a stream of its own to one node, never on a session.
//!
//! A driver opens a call with [`SimCluster::open_call`], hands in the client's frames with
//! [`SimCluster::call_frame`], ends its side with [`SimCluster::call_end`] (a half-close, or a
//! reset) and takes what the node sends with [`SimCluster::poll_call`]. Faults of the calls are
//! their own ([`CallFaults`]), drawn from the cluster's generator.

use super::*;
use bytes::Bytes;

/// Which separate call a stream carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// UploadResource: NXUM frames in, one NXUR reply out.
    Upload,
    /// DownloadBackup: one NXBQ request in, NXBD frames out.
    Download,
    /// RestoreBackup: NXRM frames in, one NXRR reply out.
    Restore,
}

/// One separate call's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallId(pub u64);

/// What a node sends on a call's stream.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutput {
    /// One frame of the call's reply roots.
    Frame(Bytes),
    /// The node ended the stream; nothing more comes.
    Close,
}

/// Probabilities of the calls' faults (0.0 never, 1.0 always).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallFaults {
    /// The node cuts the stream mid-way: a download after part of the archive, an upload or
    /// restore before its reply. A cut upload or restore had no effect.
    pub cut: f64,
    /// An upload or restore takes effect, but its reply is lost: the stream just closes.
    pub lost_reply: f64,
    /// A download's bytes are corrupted in one place (size kept, digest broken).
    pub digest_mismatch: f64,
    /// A download sends a chunk past the archive's size.
    pub growth: f64,
    /// Leadership moves away while the call streams: the node answers with a redirect.
    pub redirect: f64,
    /// A download fails with ReadFailed; the archive stays retained.
    pub read_failed: f64,
    /// A restore's reply is OutcomeUnknown although it was recorded.
    pub outcome_unknown: f64,
    /// A restore's apply fails at one step; the steps before it stay applied.
    pub step_failed: f64,
}

impl CallFaults {
    /// Every fault at probability `p`.
    pub fn all(p: f64) -> Self {
        Self {
            cut: p,
            lost_reply: p,
            digest_mismatch: p,
            growth: p,
            redirect: p,
            read_failed: p,
            outcome_unknown: p,
            step_failed: p,
        }
    }
}

#[derive(Debug)]
pub(super) struct CallStream {
    pub kind: CallKind,
    pub node: usize,
    pub open: bool,
    /// The frames received so far (an upload's or restore's start and bytes).
    pub state: Incoming,
    pub out: VecDeque<CallOutput>,
}

/// What a receiving call has gathered.
#[derive(Debug, Default)]
pub(super) enum Incoming {
    #[default]
    Nothing,
    Upload {
        start: UploadStartT,
        bytes: Vec<u8>,
    },
    Restore {
        start: RestoreStartT,
        bytes: Vec<u8>,
    },
    /// Answered; anything more is ignored.
    Done,
}

/// A retained archive: its bytes, until when, and whether it is still downloadable.
#[derive(Debug, Clone)]
pub(super) struct Retained {
    pub bytes: Bytes,
    pub until: i64,
    pub retained: bool,
    /// The domains in it, and whether it holds users (a cluster backup).
    pub domains: Vec<String>,
    pub users: bool,
}

/// An installed upload, by identity.
#[derive(Debug, Clone)]
pub(super) struct Installed {
    pub digest: [u8; 32],
    pub version: u64,
}

/// A recorded restore, by execution reference.
#[derive(Debug, Clone)]
pub(super) struct RestoreRecord {
    pub statement: String,
    pub digest: Vec<u8>,
    pub outcome: CommandOutcomeT,
}

/// The replicated state of the separate calls.
#[derive(Debug, Default)]
pub(super) struct Calls {
    pub faults: CallFaults,
    pub next: u64,
    pub streams: BTreeMap<CallId, CallStream>,
    /// Archives by the BACKUP reference that captured them.
    pub archives: BTreeMap<String, Retained>,
    /// Resource versions by (domain, resource): the digest of each version in order.
    pub resources: BTreeMap<(String, String), Vec<[u8; 32]>>,
    pub uploads: BTreeMap<String, Installed>,
    pub restores: BTreeMap<String, RestoreRecord>,
    /// Complete archives streamed to the cluster, by upload identity or restore reference.
    pub received: Vec<(String, Vec<u8>)>,
}

impl SimCluster {
    /// Sets the separate calls' fault probabilities.
    pub fn set_call_faults(&mut self, faults: CallFaults) {
        self.calls.faults = faults;
    }

    /// Opens a separate call's stream to the node with gRPC `endpoint` or console endpoint.
    pub fn open_call(
        &mut self,
        now: Timestamp,
        endpoint: &str,
        kind: CallKind,
    ) -> Result<CallId, ConnectRefused> {
        self.tick(now);
        let wanted = endpoint.trim_end_matches('/');
        let Some(node) = self.nodes.iter().position(|n| {
            n.endpoint.trim_end_matches('/') == wanted || n.console.trim_end_matches('/') == wanted
        }) else {
            return Err(ConnectRefused::UnknownEndpoint(endpoint.to_string()));
        };
        if self.nodes[node].down {
            return Err(ConnectRefused::NodeDown(self.nodes[node].name.clone()));
        }
        self.calls.next += 1;
        let id = CallId(self.calls.next);
        self.calls.streams.insert(
            id,
            CallStream {
                kind,
                node,
                open: true,
                state: Incoming::Nothing,
                out: VecDeque::new(),
            },
        );
        self.log(format!(
            "{} call {} open ({kind:?})",
            self.nodes[node].name, id.0
        ));
        Ok(id)
    }

    /// A client frame on call `id`.
    pub fn call_frame(&mut self, now: Timestamp, id: CallId, frame: Bytes) {
        self.tick(now);
        let Some(kind) = self
            .calls
            .streams
            .get(&id)
            .filter(|s| s.open)
            .map(|s| s.kind)
        else {
            return;
        };
        match kind {
            CallKind::Upload => self.upload_frame(id, frame),
            CallKind::Download => self.download_request(id, frame),
            CallKind::Restore => self.restore_frame(id, frame),
        }
    }

    /// The client ended its side of call `id`: a half-close (`clean`) after its last frame,
    /// or a reset, which abandons whatever the stream carried.
    pub fn call_end(&mut self, now: Timestamp, id: CallId, clean: bool) {
        self.tick(now);
        let Some(s) = self.calls.streams.get(&id).filter(|s| s.open) else {
            return;
        };
        match (s.kind, clean) {
            (CallKind::Upload, true) => self.upload_end(id),
            (_, true) => {}
            (_, false) => {
                self.log(format!("call {} reset by the client", id.0));
                if let Some(s) = self.calls.streams.get_mut(&id) {
                    s.open = false;
                    s.out.clear();
                }
            }
        }
    }

    /// The next thing the node sent on call `id`.
    pub fn poll_call(&mut self, id: CallId) -> Option<CallOutput> {
        let s = self.calls.streams.get_mut(&id)?;
        let out = s.out.pop_front();
        if s.out.is_empty() && !s.open {
            self.calls.streams.remove(&id);
        }
        out
    }

    /// Whether archive bytes were ever received whole under `identity` (an upload identity
    /// or a restore reference), and how often.
    pub fn received_whole(&self, identity: &str) -> Vec<&[u8]> {
        self.calls
            .received
            .iter()
            .filter(|(i, _)| i == identity)
            .map(|(_, b)| b.as_slice())
            .collect()
    }

    /// The installed versions of a resource.
    pub fn resource_versions(&self, domain: &str, resource: &str) -> usize {
        self.calls
            .resources
            .get(&(domain.to_string(), resource.to_string()))
            .map_or(0, Vec::len)
    }

    /// Whether the archive captured under `reference` may still be downloaded.
    pub fn archive_retained(&self, reference: &str) -> bool {
        self.calls
            .archives
            .get(reference)
            .is_some_and(|a| a.retained)
    }

    /// The bytes of the archive captured under `reference`, whether retained or not.
    pub fn archive_bytes(&self, reference: &str) -> Option<Bytes> {
        self.calls.archives.get(reference).map(|a| a.bytes.clone())
    }

    pub(super) fn call_send(&mut self, id: CallId, out: CallOutput) {
        if let Some(s) = self.calls.streams.get_mut(&id) {
            if matches!(out, CallOutput::Close) {
                s.open = false;
            }
            s.out.push_back(out);
        }
    }

    /// Ends the stream from the node's side.
    pub(super) fn call_close(&mut self, id: CallId) {
        self.call_send(id, CallOutput::Close);
    }

    pub(super) fn call_node(&self, id: CallId) -> usize {
        self.calls.streams.get(&id).map_or(0, |s| s.node)
    }

    /// The leader this node names in a redirect, or `None` when this node leads and no
    /// redirect fault struck.
    pub(super) fn call_redirect(&mut self, id: CallId) -> Option<LeaderRedirectT> {
        let node = self.call_node(id);
        let moved = self.chance(self.calls.faults.redirect);
        if node == self.leader && !moved {
            return None;
        }
        let leader = if node == self.leader {
            // Leadership moved mid-call: the redirect names no leader yet (an election).
            None
        } else {
            self.redirect_leader()
        };
        Some(LeaderRedirectT { leader })
    }
}
