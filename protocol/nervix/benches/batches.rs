//! Cost of Arrow IPC batches: a batch of 8 typed columns (4,000 rows, about 200 KiB of IPC: a submission carries at most 262,144 bytes) built column by column
//! and submitted through the producer machine, against arrow-ipc's `StreamWriter` alone on the
//! same batch; and a delivery decoded and checked against the consumer's fields, against
//! arrow-ipc's `StreamReader` alone on the same bytes. Throughput in rows per second.
//!
//! * `producer/build_and_submit`: [`BatchBuilder`] from typed slices, [`Client::submit_built`]
//!   (field check, canonical encoding, grant checks, credit, the `SubmitBatchRequest` frame),
//!   then the batch's outcome read back so its credit returns.
//! * `producer/build_only`: the [`BatchBuilder`] part of `build_and_submit` alone.
//! * `producer/submit_prebuilt`: [`Client::submit`] of the already built `RecordBatch` (field
//!   check, canonical encoding, grant checks, credit, the frame), its outcome read back.
//! * `producer/arrow_build_and_stream_writer`: the same batch built with arrow's own arrays
//!   from the same slices, then written by `StreamWriter`: the like-for-like baseline of
//!   `build_and_submit`.
//! * `producer/stream_writer`: `StreamWriter` writing the already built `RecordBatch`.
//! * `consumer/decode_and_check`: [`arrow::decode`] (schema, one batch, end marker, nulls,
//!   members).
//! * `consumer/stream_reader`: `StreamReader` reading the same stream.

#![allow(missing_docs)]

use arrow_array::{
    ArrayRef, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampNanosecondArray, UInt32Array, UInt64Array,
};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nervix_protocol::arrow::{self, BatchBuilder, Datetime};
use nervix_protocol::client::*;
use nervix_protocol::encode::Encoder;
use nervix_protocol::endpoint::Endpoint;
use nervix_protocol::frame::{ClientFrame, ServerMessageRoot};
use nervix_protocol::rows::{FieldSpec, FieldType, ScalarType};
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::hint::black_box;
use std::io::Cursor;
use std::sync::Arc;

const ROWS: usize = 4_000;

fn fields() -> Vec<FieldSpec> {
    let f = |n: &str, s| FieldSpec::new(n, FieldType::Scalar(s), false, false);
    vec![
        f("a", ScalarType::U64),
        f("b", ScalarType::I64),
        f("c", ScalarType::F64),
        f("d", ScalarType::F32),
        f("e", ScalarType::U32),
        f("f", ScalarType::I32),
        f("g", ScalarType::Datetime),
        FieldSpec::new("h", FieldType::Scalar(ScalarType::String), true, false),
    ]
}

struct Columns {
    a: Vec<u64>,
    b: Vec<i64>,
    c: Vec<f64>,
    d: Vec<f32>,
    e: Vec<u32>,
    f: Vec<i32>,
    g: Vec<Datetime>,
    h: Vec<Option<&'static str>>,
}

fn columns() -> Columns {
    let n = ROWS as u64;
    Columns {
        a: (0..n).collect(),
        b: (0..n).map(|i| -(i as i64)).collect(),
        c: (0..n).map(|i| i as f64 * 0.5).collect(),
        d: (0..n).map(|i| i as f32).collect(),
        e: (0..n).map(|i| i as u32).collect(),
        f: (0..n).map(|i| i as i32 - 7).collect(),
        g: (0..n).map(|i| Datetime(i as i64 * 1_000)).collect(),
        h: (0..n)
            .map(|i| (i % 5 != 0).then_some("a short label"))
            .collect(),
    }
}

fn build(b: &mut BatchBuilder, c: &Columns) {
    b.column("a", &c.a).unwrap();
    b.column("b", &c.b).unwrap();
    b.column("c", &c.c).unwrap();
    b.column("d", &c.d).unwrap();
    b.column("e", &c.e).unwrap();
    b.column("f", &c.f).unwrap();
    b.column("g", &c.g).unwrap();
    b.nullable_column("h", &c.h).unwrap();
}

fn reply(request_id: u64, body: ReplyBodyT) -> Bytes {
    Encoder::new()
        .encode::<ServerMessageRoot>(&ServerMessageT {
            body: ServerBodyT::Reply(Box::new(ReplyT { request_id, body })),
        })
        .unwrap()
}

/// A client with an open producer on one session.
fn producer() -> (Client, SessionId, ProducerId, u64) {
    let seeds = vec![Endpoint::parse("https://seed-1:7443/").unwrap()];
    let mut c = Client::new(ClientConfig::new(seeds, 1));
    let now = Timestamp::ZERO;
    let spec = ProducerSpec::new("d1", "in", fields()).with_credit(4, 32 << 20);
    let p = c.open_producer(now, spec).unwrap();
    let mut sid = None;
    while let Some(a) = c.poll_action() {
        if let Action::Connect { session, .. } = a {
            sid = Some(session);
        }
    }
    let sid = sid.unwrap();
    c.handle_connected(now, sid);
    let mut open_id = 0;
    while let Some(a) = c.poll_action() {
        match a {
            Action::Send { frame, .. } => {
                open_id = ClientFrame::check(frame).unwrap().view().request_id();
            }
            other => panic!("{other:?}"),
        }
    }
    let opened = ProducerOpenedT {
        domain: "d1".into(),
        ingestor: "in".into(),
        fields: fields().iter().map(FieldSpec::to_wire).collect(),
        generation: 1,
        contract: Box::new(FingerprintT { bytes: vec![1; 32] }),
        attachment: vec![1; 16],
        window: ProducerWindowT::SequentialProducerWindow(Box::default()),
        ack_timeout_nanos: 1,
        retry_backoff_nanos: 1,
        retry_max_backoff_nanos: 1,
        granted_batches: 4,
        granted_bytes: 32 << 20,
        max_batch_bytes: 4 << 20,
        max_batch_rows: ROWS as u32,
        admission: Some(ProducerAdmission::Open),
    };
    let frame = reply(
        open_id,
        ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
            disposition: OpenIngestorDispositionT::ProducerOpened(Box::new(opened)),
            message: String::new(),
        })),
    );
    c.handle_frame(now, sid, frame);
    while c.poll_producer_event(p).is_some() {}
    (c, sid, p, open_id)
}

fn completed(request_id: u64) -> Bytes {
    reply(
        request_id,
        ReplyBodyT::SubmissionOutcome(Box::new(SubmissionOutcomeT {
            disposition: SubmissionDispositionT::SubmissionCompleted(Box::default()),
            message: String::new(),
        })),
    )
}

/// Takes the client's actions; how many frames it sent.
fn sent(client: &mut Client) -> usize {
    let mut sent = 0;
    while let Some(a) = client.poll_action() {
        if let Action::Send { frame, .. } = a {
            black_box(frame);
            sent += 1;
        }
    }
    sent
}

fn bench(c: &mut Criterion) {
    let cols = columns();
    let mut b = BatchBuilder::new(fields().into());
    build(&mut b, &cols);
    let batch: RecordBatch = b.finish().unwrap();
    let ipc = arrow::encode(&batch).unwrap();

    let mut g = c.benchmark_group("producer");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("build_and_submit", |bench| {
        let (mut client, sid, p, mut id) = producer();
        let now = Timestamp::ZERO;
        bench.iter(|| {
            let mut b = client.batch_builder(p).unwrap();
            build(&mut b, &cols);
            client.submit_built(now, p, b).unwrap();
            assert_eq!(sent(&mut client), 1);
            // Identities are taken in order on the session.
            id += 1;
            client.handle_frame(now, sid, completed(id));
            while client.poll_producer_event(p).is_some() {}
        });
    });
    // The two halves of `build_and_submit`: the typed builder alone, and the producer machine
    // alone on the batch already built (checked against the fields, written, framed, sent).
    g.bench_function("build_only", |bench| {
        let (client, _, p, _) = producer();
        bench.iter(|| {
            let mut b = client.batch_builder(p).unwrap();
            build(&mut b, &cols);
            black_box(b.finish().unwrap())
        });
    });
    g.bench_function("submit_prebuilt", |bench| {
        let (mut client, sid, p, mut id) = producer();
        let now = Timestamp::ZERO;
        bench.iter(|| {
            client.submit(now, p, black_box(&batch)).unwrap();
            assert_eq!(sent(&mut client), 1);
            id += 1;
            client.handle_frame(now, sid, completed(id));
            while client.poll_producer_event(p).is_some() {}
        });
    });
    // The like-for-like baseline of `build_and_submit`: the same batch built with arrow's own
    // arrays from the same slices, then written by `StreamWriter`.
    g.bench_function("arrow_build_and_stream_writer", |bench| {
        let schema = batch.schema();
        bench.iter(|| {
            let g: TimestampNanosecondArray =
                TimestampNanosecondArray::from_iter_values(cols.g.iter().map(|d| d.0))
                    .with_timezone(arrow::DATETIME_ZONE);
            let columns: Vec<ArrayRef> = vec![
                Arc::new(UInt64Array::from_iter_values(cols.a.iter().copied())),
                Arc::new(Int64Array::from_iter_values(cols.b.iter().copied())),
                Arc::new(Float64Array::from_iter_values(cols.c.iter().copied())),
                Arc::new(Float32Array::from_iter_values(cols.d.iter().copied())),
                Arc::new(UInt32Array::from_iter_values(cols.e.iter().copied())),
                Arc::new(Int32Array::from_iter_values(cols.f.iter().copied())),
                Arc::new(g),
                Arc::new(StringArray::from(cols.h.clone())),
            ];
            let built = RecordBatch::try_new(schema.clone(), columns).unwrap();
            let mut out = Vec::new();
            let mut w = StreamWriter::try_new(&mut out, &schema).unwrap();
            w.write(&built).unwrap();
            w.finish().unwrap();
            drop(w);
            black_box(out)
        });
    });
    g.bench_function("stream_writer", |bench| {
        bench.iter(|| {
            let mut out = Vec::new();
            let mut w = StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
            w.write(black_box(&batch)).unwrap();
            w.finish().unwrap();
            drop(w);
            black_box(out)
        });
    });
    g.finish();

    let f = fields();
    let mut g = c.benchmark_group("consumer");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("decode_and_check", |bench| {
        bench.iter(|| black_box(arrow::decode(black_box(&ipc), &f, ROWS as u32).unwrap()));
    });
    g.bench_function("stream_reader", |bench| {
        bench.iter(|| {
            let r = StreamReader::try_new(Cursor::new(black_box(&ipc)), None).unwrap();
            let batches: Vec<RecordBatch> = r.map(Result::unwrap).collect();
            black_box(batches)
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
