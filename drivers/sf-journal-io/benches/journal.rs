//! Throughput of the journal against plain positioned writes, and recovery time of a large
//! slot.
//!
//! * `append_drain/*`: 4 KiB frames (16 MiB per iteration) appended, handed out for sending in
//!   FSN order, acknowledged and closed: in memory mode, in SF mode, and as the baseline the
//!   same framed bytes written with plain positioned writes into pre-sized 4 MiB files in a
//!   slot directory, read back, and the files removed; once with one write per frame, once
//!   with two as the journal makes them (body, then checksum: SF-5). The ratio to report is
//!   SF mode's throughput over the one-write baseline's.
//! * `recovery/*`: opening (locking, reading, recovering) a slot of 4 KiB frames that nobody
//!   closed: 1 GiB by default, `SF_BENCH_RECOVERY_MIB` mebibytes otherwise.
//!
//! Files go under the target directory's scratch space.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sf_journal::ring::RingConfig;
use sf_journal::segment::encode_frame;
use sf_journal_io::journal::CloseStep;
use sf_journal_io::{Journal, JournalConfig};

const FRAME: usize = 4096;
const FRAMES: usize = 4096;
const SEGMENT: u64 = 4 << 20;

fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sf-journal-bench")
        .join(name);
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn frame(i: usize) -> Vec<u8> {
    let mut f = b"QWP1".to_vec();
    f.extend_from_slice(&(i as u64).to_le_bytes());
    f.resize(FRAME, (i % 251) as u8);
    f
}

/// Appends every frame, hands each out, acknowledges the last and closes (everything is
/// acknowledged, so the journal's files go).
fn append_and_drain(mut j: Journal, frames: &[Vec<u8>]) {
    for f in frames {
        let _ = j.append(f, 0).unwrap();
    }
    let _ = j.connect(0);
    let mut n = 0u64;
    while let Some((_, bytes)) = j.next_frame().unwrap() {
        assert_eq!(bytes.len(), FRAME);
        n += 1;
    }
    j.ok(n - 1, Vec::new()).unwrap();
    match j.close(0, 0, 0).unwrap() {
        CloseStep::Done(c) => assert!(c.unacknowledged.is_empty()),
        other => panic!("{other:?}"),
    }
}

/// The baseline: the same framed bytes (encoded beforehand, checksums included) written with
/// positioned writes into pre-sized files of the segment size (a 24-byte header first), read
/// back, then the files removed.
fn plain_writes(dir: &Path, encoded: &[Vec<u8>], split: bool) {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut current: Option<(File, u64)> = None;
    let mut placed = Vec::with_capacity(encoded.len());
    for bytes in encoded {
        let fits = current
            .as_ref()
            .is_some_and(|(_, used)| used + bytes.len() as u64 <= SEGMENT);
        if !fits {
            let path = dir.join(format!("plain-{:016x}.sfa", files.len()));
            let file = OpenOptions::new()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            file.set_len(SEGMENT).unwrap();
            file.write_all_at(&[0u8; 24], 0).unwrap();
            files.push(path);
            current = Some((file, 24));
        }
        let (file, used) = current.as_mut().unwrap();
        if split {
            // As the journal writes a frame (SF-5): the length and payload, then the checksum.
            file.write_all_at(&bytes[4..], *used + 4).unwrap();
            file.write_all_at(&bytes[..4], *used).unwrap();
        } else {
            file.write_all_at(bytes, *used).unwrap();
        }
        placed.push((files.len() - 1, *used + 8, bytes.len() - 8));
        *used += bytes.len() as u64;
    }
    let open: Vec<File> = files.iter().map(|p| File::open(p).unwrap()).collect();
    let mut buf = vec![0u8; FRAME];
    for (i, offset, len) in placed {
        open[i].read_exact_at(&mut buf[..len], offset).unwrap();
    }
    drop(open);
    for p in files {
        std::fs::remove_file(p).unwrap();
    }
}

fn append_drain(c: &mut Criterion) {
    let frames: Vec<Vec<u8>> = (0..FRAMES).map(frame).collect();
    let mut g = c.benchmark_group("append_drain");
    g.throughput(Throughput::Bytes((FRAME * FRAMES) as u64));
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("memory", |b| {
        b.iter(|| append_and_drain(Journal::memory(JournalConfig::memory()), &frames));
    });
    let sf = scratch("sf");
    g.bench_function("sf", |b| {
        b.iter(|| {
            append_and_drain(
                Journal::open(&sf, "s", JournalConfig::disk()).unwrap(),
                &frames,
            )
        });
    });
    let plain = scratch("plain");
    let encoded: Vec<Vec<u8>> = frames.iter().map(|f| encode_frame(f).unwrap()).collect();
    g.bench_function("plain_positioned_writes", |b| {
        b.iter(|| plain_writes(&plain, &encoded, false));
    });
    g.bench_function("plain_positioned_writes_body_then_checksum", |b| {
        b.iter(|| plain_writes(&plain, &encoded, true));
    });
    g.finish();
}

fn recovery(c: &mut Criterion) {
    let mib: usize = std::env::var("SF_BENCH_RECOVERY_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let n = mib * (1 << 20) / FRAME;
    let sf = scratch("recovery");
    let config = JournalConfig {
        ring: RingConfig {
            max_total_bytes: (mib as u64 + 64) << 20,
            ..RingConfig::disk()
        },
        ..JournalConfig::disk()
    };
    {
        let mut j = Journal::open(&sf, "s", config).unwrap();
        for i in 0..n {
            let _ = j.append(&frame(i), 0).unwrap();
        }
        // Dropped without close: the slot keeps every frame.
    }
    let mut g = c.benchmark_group("recovery");
    g.throughput(Throughput::Bytes((n * FRAME) as u64));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(30));
    g.bench_function(format!("open_{mib}_mib"), |b| {
        b.iter(|| {
            let j = Journal::open(&sf, "s", config).unwrap();
            assert_eq!(j.recovered(), 0..n as i64);
        });
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&sf);
}

criterion_group!(benches, append_drain, recovery);
criterion_main!(benches);
