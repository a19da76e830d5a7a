//! Backups: a `BACKUP` command completes with the summary of the archive it captured.
//!
//! The archive's bytes are made from the reference and the domains, and kept for one download
//! until `retained_until` (A-5: NotRetained once downloaded, Expired after). A completed
//! `BACKUP` is recorded under its execution reference like any admitted command, so a repeat
//! recovers the same summary; the archive is not captured again.
//!
//! A download (`DownloadBackup`) answers the archive as BackupArchiveStart, chunks of
//! [`DOWNLOAD_CHUNK`] bytes and BackupArchiveComplete, or a failure, or a redirect from a
//! follower; its faults cut it, corrupt a byte, grow it past its size or fail the read.

use super::calls::{CallId, Retained};
use super::*;
use nervix_protocol::frame::{BackupDownloadMessageRoot, BackupDownloadRequestFrame};
use std::time::Duration;

/// The bytes of each chunk a download sends.
pub const DOWNLOAD_CHUNK: usize = 1000;

/// How long the leader keeps an archive for download after its capture.
const RETENTION: Duration = Duration::from_secs(60 * 60);

impl SimCluster {
    /// `BACKUP [DOMAIN <name>] ...`: every domain, or the one named. Refused inside a
    /// transaction and for an unknown domain, with nothing recorded.
    pub(super) fn backup(&mut self, conn: ConnId, c: &CommandRequestT, statement: &str) -> Served {
        let reference = &c.execution_reference;
        if let Some(tx) = self.bound(conn) {
            return self.failed(
                conn,
                reference,
                format!("BACKUP cannot run inside a transaction ({tx})"),
            );
        }
        let words: Vec<&str> = statement.split_whitespace().collect();
        let named = words
            .iter()
            .position(|w| w.eq_ignore_ascii_case("DOMAIN"))
            .map(|i| words.get(i + 1).map(|d| d.trim_matches(['\'', '"', ';'])));
        let (domains, users) = match named {
            None => {
                let mut all = self.config.domains.clone();
                all.sort();
                (all, Some(1))
            }
            Some(Some(d)) if self.config.domains.iter().any(|x| x == d) => {
                (vec![d.to_string()], None)
            }
            Some(d) => {
                let d = d.unwrap_or_default();
                return self.failed(conn, reference, format!("no domain named {d:?}"));
            }
        };
        let summary = self.archive_summary(reference, &domains, users);
        let detail = format!(
            " backup of {} domain(s), {} bytes",
            domains.len(),
            summary.total_bytes
        );
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            format!("backup captured: {}", domains.join(", ")),
        );
        outcome.backup = Some(Box::new(summary));
        self.admitted(c, outcome, None, detail)
    }

    /// The summary of the archive captured under `reference`: sizes and digest derived from
    /// the reference and the domains, times from the virtual clock.
    fn archive_summary(
        &mut self,
        reference: &str,
        domains: &[String],
        users: Option<u64>,
    ) -> BackupArchiveSummaryT {
        let captured_at = i64::try_from(self.now.as_nanos()).unwrap_or(i64::MAX);
        let domains: Vec<BackupDomainSummaryT> = domains
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let bytes = self.config.archive_domain_bytes;
                domain_summary(d, i as u64 + 1, captured_at, bytes)
            })
            .collect();
        let mut parts = vec![reference];
        parts.extend(domains.iter().map(|d| d.domain.as_str()));
        let body: u64 = domains.iter().map(|d| d.section_bytes).sum();
        let retention = i64::try_from(RETENTION.as_nanos()).unwrap_or(i64::MAX);
        let bytes = archive_bytes(&digest(&parts), 512 + body as usize);
        let retained_until = captured_at.saturating_add(retention);
        let digest = blake3::hash(&bytes).as_bytes().to_vec();
        self.calls.archives.insert(
            reference.to_string(),
            Retained {
                bytes: bytes.into(),
                until: retained_until,
                retained: true,
                domains: domains.iter().map(|d| d.domain.clone()).collect(),
                users: users.is_some(),
            },
        );
        BackupArchiveSummaryT {
            total_bytes: 512 + body,
            digest: Box::new(FingerprintT { bytes: digest }),
            captured_at,
            retained_until,
            resources: Some(BackupResources::Included),
            users,
            domains,
        }
    }
}

/// One domain's part of an archive. Every field of a domain summary is set here and only here.
/// The simulated node quiesces each domain for a millisecond before the capture at
/// `captured_at`, with nothing buffered, dropped or rejected meanwhile.
fn domain_summary(
    domain: &str,
    revision: u64,
    captured_at: i64,
    section_bytes: u64,
) -> BackupDomainSummaryT {
    BackupDomainSummaryT {
        domain: domain.to_string(),
        revision,
        cut: Box::new(BackupCutT {
            kind: Some(BackupCutKind::Quiesced),
            engaged_at: Some(captured_at.saturating_sub(1_000_000)),
            released_at: Some(captured_at),
            buffered_records: 0,
            buffered_bytes: 0,
            dropped_records: 0,
            rejected_records: 0,
        }),
        sections: 3,
        section_bytes,
    }
}

/// `len` bytes of archive made from `seed`: a header naming the format, then seeded bytes.
fn archive_bytes(seed: &[u8], len: usize) -> Vec<u8> {
    let mut out = b"NXBACKUP".to_vec();
    let state = seed
        .iter()
        .fold(0u64, |a, b| a.rotate_left(8) ^ u64::from(*b));
    let mut rng = Rng::new(state);
    while out.len() < len {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    out.truncate(len);
    out
}

impl SimCluster {
    fn download_send(&mut self, id: CallId, part: BackupDownloadPartT) {
        let name = part
            .backup_download_part_type()
            .variant_name()
            .unwrap_or("?");
        if !matches!(part, BackupDownloadPartT::BackupArchiveChunk(_)) {
            self.log(format!("call {} -> {name}", id.0));
        }
        let frame = self
            .encoder
            .encode::<BackupDownloadMessageRoot>(&BackupDownloadMessageT { part })
            .expect("the cluster writes valid frames");
        self.call_send(id, CallOutput::Frame(frame));
    }

    fn download_failed(&mut self, id: CallId, failure: BackupDownloadFailure) {
        self.download_send(
            id,
            BackupDownloadPartT::BackupDownloadFailed(Box::new(BackupDownloadFailedT {
                failure: Some(failure),
                message: format!("{failure:?}"),
            })),
        );
        self.call_close(id);
    }

    /// The one request of a download: the whole answer is queued at once.
    pub(super) fn download_request(&mut self, id: CallId, frame: Bytes) {
        let Ok(request) = BackupDownloadRequestFrame::check(frame) else {
            return self.download_failed(id, BackupDownloadFailure::InvalidRequest);
        };
        let reference = request.unpack().execution_reference;
        if let Some(r) = self.call_redirect(id) {
            self.download_send(id, BackupDownloadPartT::LeaderRedirect(Box::new(r)));
            return self.call_close(id);
        }
        let now = i64::try_from(self.now.as_nanos()).unwrap_or(i64::MAX);
        let archive = match self.calls.archives.get(&reference) {
            None => return self.download_failed(id, BackupDownloadFailure::NotRetained),
            Some(a) if a.until < now => {
                return self.download_failed(id, BackupDownloadFailure::Expired)
            }
            Some(a) if !a.retained => {
                return self.download_failed(id, BackupDownloadFailure::NotRetained)
            }
            Some(a) => a.bytes.clone(),
        };
        if self.chance(self.calls.faults.read_failed) {
            return self.download_failed(id, BackupDownloadFailure::ReadFailed);
        }
        let f = self.calls.faults.clone();
        let cut = self.chance(f.cut);
        let corrupt = self.chance(f.digest_mismatch);
        let grow = self.chance(f.growth);
        self.download_send(
            id,
            BackupDownloadPartT::BackupArchiveStart(Box::new(BackupArchiveStartT {
                total_bytes: archive.len() as u64,
                digest: Box::new(FingerprintT {
                    bytes: blake3::hash(&archive).as_bytes().to_vec(),
                }),
            })),
        );
        let chunks: Vec<&[u8]> = archive.chunks(DOWNLOAD_CHUNK).collect();
        for (i, c) in chunks.iter().enumerate() {
            if cut && i == chunks.len() / 2 {
                self.log(format!("call {} cut after {i} chunk(s)", id.0));
                return self.call_close(id);
            }
            let mut bytes = c.to_vec();
            if corrupt && i == chunks.len() - 1 {
                bytes[0] ^= 0x5a;
            }
            self.download_send(
                id,
                BackupDownloadPartT::BackupArchiveChunk(Box::new(BackupArchiveChunkT { bytes })),
            );
        }
        if grow {
            self.download_send(
                id,
                BackupDownloadPartT::BackupArchiveChunk(Box::new(BackupArchiveChunkT {
                    bytes: vec![0; 16],
                })),
            );
        }
        self.download_send(
            id,
            BackupDownloadPartT::BackupArchiveComplete(Box::default()),
        );
        // Every byte was sent: the leader lets go of the archive (a corrupted or overgrown
        // stream models damage in transit, after which the archive stays retained).
        if !corrupt && !grow {
            if let Some(a) = self.calls.archives.get_mut(&reference) {
                a.retained = false;
            }
        }
        self.call_close(id);
    }
}
