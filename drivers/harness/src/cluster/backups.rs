//! Backups: a `BACKUP` command completes with the summary of the archive it captured.
//!
//! The archive itself is not kept: `BackupDownloadRequest` is not served yet. A completed
//! `BACKUP` is recorded under its execution reference like any admitted command, so a repeat
//! recovers the same summary.

use super::*;
use std::time::Duration;

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
        &self,
        reference: &str,
        domains: &[String],
        users: Option<u64>,
    ) -> BackupArchiveSummaryT {
        let captured_at = i64::try_from(self.now.as_nanos()).unwrap_or(i64::MAX);
        let domains: Vec<BackupDomainSummaryT> = domains
            .iter()
            .enumerate()
            .map(|(i, d)| domain_summary(d, i as u64 + 1, captured_at))
            .collect();
        let mut parts = vec![reference];
        parts.extend(domains.iter().map(|d| d.domain.as_str()));
        let body: u64 = domains.iter().map(|d| d.section_bytes).sum();
        let retention = i64::try_from(RETENTION.as_nanos()).unwrap_or(i64::MAX);
        BackupArchiveSummaryT {
            total_bytes: 512 + body,
            digest: Box::new(FingerprintT {
                bytes: digest(&parts),
            }),
            captured_at,
            retained_until: captured_at.saturating_add(retention),
            resources: Some(BackupResources::Included),
            users,
            domains,
        }
    }
}

/// One domain's part of an archive. Every field of a domain summary is set here and only here.
/// The simulated node quiesces each domain for a millisecond before the capture at
/// `captured_at`, with nothing buffered, dropped or rejected meanwhile.
fn domain_summary(domain: &str, revision: u64, captured_at: i64) -> BackupDomainSummaryT {
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
        section_bytes: 3 * 1024,
    }
}
