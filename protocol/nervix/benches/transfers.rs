//! Throughput of the separate calls against BLAKE3 hashing alone, on one archive of 64 MiB held
//! in memory.
//!
//! * `blake3_alone`: one BLAKE3 hasher over the archive, in the 64 KiB pieces an upload reads.
//!   This is the floor both calls are measured against (the goal: at most 1.1 times its time).
//! * `blake3_alone_in_frames`: the same, over the same bytes where a download finds them, in
//!   the payloads of its chunk frames: what hashing alone costs with the download's memory
//!   layout, to tell the machine's own cost from the layout's.
//! * `upload_chunking`: an [`UploadCall`] turning the archive into its start and 64 KiB chunk
//!   frames, hashing as it goes; each frame is dropped once made, as a driver does once written.
//! * `upload_chunking_in_parts`: the same with the archive in one [`Bytes`] and each frame
//!   made by [`UploadCall::chunk_parts`]: header and piece apart, the piece not copied.
//! * `download_verification`: a [`BackupDownload`] fed prebuilt frames of 64 KiB chunks (start,
//!   chunks, complete): each frame checked, its bytes hashed and handed out, the verdict given.

#![allow(missing_docs)]

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use nervix_protocol::calls::*;
use nervix_protocol::command::ExecutionReference;
use nervix_protocol::encode::encode;
use nervix_protocol::frame::BackupDownloadMessageRoot;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::hint::black_box;

const ARCHIVE: usize = 64 * 1024 * 1024;
const PIECE: usize = UPLOAD_CHUNK;
const T0: Timestamp = Timestamp::ZERO;
const FAR: Timestamp = Timestamp::from_nanos(u64::MAX);

fn archive() -> Vec<u8> {
    let mut v = vec![0u8; ARCHIVE];
    Rng::new(9).fill(&mut v);
    v
}

fn info(bytes: &[u8]) -> ArchiveInfo {
    let mut d = ArchiveDigest::new();
    d.update(bytes);
    d.finish()
}

fn download_frames(bytes: &[u8], expected: ArchiveInfo) -> Vec<Bytes> {
    let dl = |part| encode::<BackupDownloadMessageRoot>(&BackupDownloadMessageT { part }).unwrap();
    let mut frames = vec![dl(BackupDownloadPartT::BackupArchiveStart(Box::new(
        BackupArchiveStartT {
            total_bytes: expected.total_bytes,
            digest: Box::new(FingerprintT {
                bytes: expected.digest.to_vec(),
            }),
        },
    )))];
    for piece in bytes.chunks(PIECE) {
        frames.push(dl(BackupDownloadPartT::BackupArchiveChunk(Box::new(
            BackupArchiveChunkT {
                bytes: piece.to_vec(),
            },
        ))));
    }
    frames.push(dl(BackupDownloadPartT::BackupArchiveComplete(
        Box::default(),
    )));
    frames
}

fn upload(bytes: &[u8]) -> u64 {
    let spec = UploadSpec {
        domain: "tenant".into(),
        resource: "bundle".into(),
        identity: "bench-upload".into(),
    };
    let mut call = UploadCall::new(spec, bytes.len() as u64, TransferConfig::upload()).unwrap();
    let mut written = call.start(T0, FAR).unwrap().len() as u64;
    while let Need::Piece { offset, len } = call.need() {
        let at = offset as usize;
        let frame = call.chunk(T0, &bytes[at..at + len]).unwrap();
        written += black_box(frame).len() as u64;
    }
    assert_eq!(call.need(), Need::Reply);
    written
}

fn upload_in_parts(bytes: &Bytes) -> u64 {
    let spec = UploadSpec {
        domain: "tenant".into(),
        resource: "bundle".into(),
        identity: "bench-upload".into(),
    };
    let mut call = UploadCall::new(spec, bytes.len() as u64, TransferConfig::upload()).unwrap();
    let mut written = call.start(T0, FAR).unwrap().len() as u64;
    while let Need::Piece { offset, len } = call.need() {
        let at = offset as usize;
        let frame = call.chunk_parts(T0, bytes.slice(at..at + len)).unwrap();
        written += black_box(frame).len() as u64;
    }
    assert_eq!(call.need(), Need::Reply);
    written
}

fn download(frames: &[Bytes], expected: ArchiveInfo) -> u64 {
    let reference = ExecutionReference::parse("bench-backup").unwrap();
    let mut call = BackupDownload::new(reference, expected, TransferConfig::download()).unwrap();
    let _ = call.start(T0).unwrap();
    let mut handed = 0u64;
    for f in frames {
        match call.on_frame(T0, f.clone()) {
            DownloadStep::Bytes(b) => handed += black_box(b).len() as u64,
            DownloadStep::Started => {}
            DownloadStep::Ended(DownloadEnd::Verified(_)) => return handed,
            other => panic!("the download stopped: {other:?}"),
        }
    }
    panic!("the download never completed");
}

fn bench(c: &mut Criterion) {
    let bytes = archive();
    let expected = info(&bytes);
    let frames = download_frames(&bytes, expected);
    // Both calls do their work before they are measured.
    let shared = Bytes::from(bytes.clone());
    assert!(upload(&bytes) > ARCHIVE as u64);
    assert_eq!(upload_in_parts(&shared), upload(&bytes));
    assert_eq!(download(&frames, expected), ARCHIVE as u64);

    let mut g = c.benchmark_group("transfers_64MiB");
    g.throughput(Throughput::Bytes(ARCHIVE as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(50);
    g.bench_function("blake3_alone", |b| {
        b.iter(|| {
            let mut h = blake3::Hasher::new();
            for piece in bytes.chunks(PIECE) {
                h.update(black_box(piece));
            }
            h.finalize()
        })
    });
    // The same payload bytes where the download reads them: inside the 1,024 chunk frames.
    let payloads: Vec<Bytes> = frames[1..frames.len() - 1]
        .iter()
        .map(|f| f.slice(f.len() - PIECE..))
        .collect();
    assert!(payloads
        .iter()
        .zip(bytes.chunks(PIECE))
        .all(|(p, b)| p[..] == *b));
    g.bench_function("blake3_alone_in_frames", |b| {
        b.iter(|| {
            let mut h = blake3::Hasher::new();
            for p in &payloads {
                h.update(black_box(p));
            }
            h.finalize()
        })
    });
    g.bench_function("upload_chunking", |b| b.iter(|| upload(black_box(&bytes))));
    g.bench_function("upload_chunking_in_parts", |b| {
        b.iter(|| upload_in_parts(black_box(&shared)))
    });
    g.bench_function("download_verification", |b| {
        b.iter(|| download(black_box(&frames), expected))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
