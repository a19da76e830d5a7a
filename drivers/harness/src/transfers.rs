//! Drives the separate calls' machines against a [`SimCluster`], one attempt at a time, the way
//! a driver would: open a stream, write what the machine gives, feed back what the node sends.
//!
//! [`upload_once`], [`download_once`] and [`restore_once`] run one attempt; [`upload`],
//! [`download`] and [`restore`] repeat attempts as the machines ask (a redirect to the leader,
//! an uncertain attempt streamed again whole) up to a bound. The archive is read from a slice
//! in the pieces the machine asks for, as a file would be.

use crate::cluster::{CallKind, CallOutput, SimCluster};
use bytes::Bytes;
use nervix_protocol::calls::*;
use nervix_protocol::time::Timestamp;

/// What one download attempt handed out, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct DownloadAttempt {
    /// The bytes handed out, in order; to be kept only when the step is Verified.
    pub bytes: Vec<u8>,
    /// The last step.
    pub step: DownloadStep,
}

fn endpoint_after(redirect: &Option<Leader>, fallback: &str) -> String {
    redirect
        .as_ref()
        .and_then(|l| l.grpc_uri.as_ref())
        .map_or_else(|| fallback.to_string(), |e| e.as_str().to_string())
}

/// One attempt of `call` at `endpoint`: start, every piece of `archive`, half-close, reply.
pub fn upload_once(
    cluster: &mut SimCluster,
    now: Timestamp,
    endpoint: &str,
    call: &mut UploadCall,
    archive: &[u8],
) -> UploadStep {
    let Ok(id) = cluster.open_call(now, endpoint, CallKind::Upload) else {
        return UploadStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: call.is_uncertain(),
        };
    };
    let Ok(start) = call.start(now, Timestamp::from_nanos(u64::MAX)) else {
        return UploadStep::Continue;
    };
    cluster.call_frame(now, id, start);
    loop {
        // A reply (or the end of the stream) may come before every piece is written.
        if let Some(out) = cluster.poll_call(id) {
            return match out {
                CallOutput::Frame(f) => call.on_reply(now, f),
                CallOutput::Close => call.on_closed(now),
            };
        }
        match call.need() {
            Need::Piece { offset, len } => {
                let at = offset as usize;
                match call.chunk(now, &archive[at..at + len]) {
                    Ok(frame) => cluster.call_frame(now, id, frame),
                    Err(_) => {
                        cluster.call_end(now, id, false);
                        return call.on_closed(now);
                    }
                }
            }
            Need::Reply => {
                cluster.call_end(now, id, true);
                return match cluster.poll_call(id) {
                    Some(CallOutput::Frame(f)) => call.on_reply(now, f),
                    _ => call.on_closed(now),
                };
            }
            _ => return UploadStep::Continue,
        }
    }
}

/// Runs `call` until it ends or `attempts` attempts were made, following redirects and
/// repeating interrupted attempts whole. Returns the last step.
pub fn upload(
    cluster: &mut SimCluster,
    now: Timestamp,
    seed_endpoint: &str,
    call: &mut UploadCall,
    archive: &[u8],
    attempts: u32,
) -> UploadStep {
    let mut endpoint = seed_endpoint.to_string();
    let mut last = UploadStep::Continue;
    for _ in 0..attempts {
        last = upload_once(cluster, now, &endpoint, call, archive);
        match &last {
            UploadStep::Ended(_) => return last,
            UploadStep::Redirect(l) => endpoint = endpoint_after(l, seed_endpoint),
            _ => {}
        }
    }
    last
}

/// One attempt of a download at `endpoint`.
pub fn download_once(
    cluster: &mut SimCluster,
    now: Timestamp,
    endpoint: &str,
    call: &mut BackupDownload,
) -> DownloadAttempt {
    let mut bytes = Vec::new();
    let Ok(id) = cluster.open_call(now, endpoint, CallKind::Download) else {
        return DownloadAttempt {
            bytes,
            step: DownloadStep::Interrupted {
                cause: Interruption::Transport,
                retained: false,
            },
        };
    };
    let Ok(request) = call.start(now) else {
        return DownloadAttempt {
            bytes,
            step: DownloadStep::Continue,
        };
    };
    cluster.call_frame(now, id, request);
    loop {
        let step = match cluster.poll_call(id) {
            Some(CallOutput::Frame(f)) => call.on_frame(now, f),
            Some(CallOutput::Close) | None => call.on_closed(now),
        };
        match step {
            DownloadStep::Bytes(b) => bytes.extend_from_slice(&b),
            DownloadStep::Started | DownloadStep::Continue if call.need() == Need::Frame => {}
            step => {
                // Drain whatever the node still queued on the stream.
                while cluster.poll_call(id).is_some() {}
                return DownloadAttempt { bytes, step };
            }
        }
    }
}

/// Downloads until verified, final, or `attempts` attempts; returns the archive only when the
/// machine verified it, and the last step.
pub fn download(
    cluster: &mut SimCluster,
    now: Timestamp,
    seed_endpoint: &str,
    call: &mut BackupDownload,
    attempts: u32,
) -> (Option<Bytes>, DownloadStep) {
    let mut endpoint = seed_endpoint.to_string();
    let mut last = DownloadStep::Continue;
    for _ in 0..attempts {
        let a = download_once(cluster, now, &endpoint, call);
        last = a.step;
        match &last {
            DownloadStep::Ended(DownloadEnd::Verified(_)) => {
                return (Some(a.bytes.into()), last);
            }
            DownloadStep::Ended(_) => return (None, last),
            DownloadStep::Redirect(l) => endpoint = endpoint_after(l, seed_endpoint),
            _ => {}
        }
    }
    (None, last)
}

/// One attempt of a restore at `endpoint`. The stream is kept open after the last chunk until
/// the reply, as on a console connection (T-3a).
pub fn restore_once(
    cluster: &mut SimCluster,
    now: Timestamp,
    endpoint: &str,
    call: &mut RestoreCall,
    archive: &[u8],
) -> RestoreStep {
    let Ok(id) = cluster.open_call(now, endpoint, CallKind::Restore) else {
        return RestoreStep::Interrupted {
            cause: Interruption::Transport,
            uncertain: call.is_uncertain(),
        };
    };
    let Ok(start) = call.start(now) else {
        return RestoreStep::Continue;
    };
    cluster.call_frame(now, id, start);
    loop {
        if let Some(out) = cluster.poll_call(id) {
            return match out {
                CallOutput::Frame(f) => call.on_reply(now, f),
                CallOutput::Close => call.on_closed(now),
            };
        }
        match call.need() {
            Need::Piece { offset, len } => {
                let at = offset as usize;
                match call.chunk(now, &archive[at..at + len]) {
                    Ok(frame) => cluster.call_frame(now, id, frame),
                    Err(_) => {
                        cluster.call_end(now, id, false);
                        return call.on_closed(now);
                    }
                }
            }
            // Every chunk written and no reply: the stream is stalled; the wait ends it.
            Need::Reply => {
                cluster.call_end(now, id, false);
                return call.handle_timeout(Timestamp::from_nanos(u64::MAX));
            }
            _ => return RestoreStep::Continue,
        }
    }
}

/// Runs a restore until it ends or `attempts` attempts were made.
pub fn restore(
    cluster: &mut SimCluster,
    now: Timestamp,
    seed_endpoint: &str,
    call: &mut RestoreCall,
    archive: &[u8],
    attempts: u32,
) -> RestoreStep {
    let mut endpoint = seed_endpoint.to_string();
    let mut last = RestoreStep::Continue;
    for _ in 0..attempts {
        last = restore_once(cluster, now, &endpoint, call, archive);
        match &last {
            RestoreStep::Ended(_) => return last,
            RestoreStep::Redirect(l) => endpoint = endpoint_after(l, seed_endpoint),
            _ => {}
        }
    }
    last
}
